//! How many requests go to Opengist at once: at most `max_in_flight` in all and at most
//! `per_principal` for any one MCP principal (the caller as the guard tells callers apart: the
//! `Authorization` header over HTTP, `local` on stdio). A request over either cap waits its
//! turn in order, for at most `queue_wait`; one that waits longer is refused with
//! [`OpengistError::Busy`], before anything is sent. A burst of calls therefore queues here
//! instead of reaching Opengist all at once (whose SQLite database answered a burst of
//! hundreds with `SQLITE_BUSY` and HTTP 500).
//!
//! The principal comes from the task: the server runs each MCP request inside
//! [`as_principal`]; a request made outside one (start-up checks, `doctor`) counts as the
//! principal `server`. A turn is held while a request is sent and its answer's head arrives
//! (the part during which Opengist works on it); the body is read after it ends, and retry
//! back-offs never hold one.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::super::error::{BusyCap, CallInfo, OpengistError};

/// Default of `OPENGIST_MCP_OPENGIST_MAX_REQUESTS`.
pub const DEFAULT_MAX_REQUESTS: u64 = 8;
/// Default of `OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL`.
pub const DEFAULT_MAX_REQUESTS_PER_PRINCIPAL: u64 = 4;
/// Default of `OPENGIST_MCP_OPENGIST_QUEUE_SECS`.
pub const DEFAULT_QUEUE_SECS: u64 = 20;

/// The principal of requests made outside any MCP request.
const SERVER_PRINCIPAL: &str = "server";

tokio::task_local! {
    static PRINCIPAL: Arc<str>;
}

/// Runs `future` with every request it makes to Opengist counted against `principal`.
pub async fn as_principal<F: Future>(principal: String, future: F) -> F::Output {
    PRINCIPAL.scope(Arc::from(principal), future).await
}

fn current_principal() -> Arc<str> {
    PRINCIPAL
        .try_with(Arc::clone)
        .unwrap_or_else(|_| Arc::from(SERVER_PRINCIPAL))
}

/// The caps on requests to Opengist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
    /// Requests in flight at once, all principals together (at least 1).
    pub max_in_flight: usize,
    /// Requests in flight at once for one principal (at least 1).
    pub per_principal: usize,
    /// How long a request waits for a turn before it is refused as busy.
    pub queue_wait: Duration,
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self {
            max_in_flight: DEFAULT_MAX_REQUESTS as usize,
            per_principal: DEFAULT_MAX_REQUESTS_PER_PRINCIPAL as usize,
            queue_wait: Duration::from_secs(DEFAULT_QUEUE_SECS),
        }
    }
}

/// The target of the limiter's log event: its module path while the client was a module of
/// `opengist-mcp` (see `LOG_TARGET` in the client's `mod.rs`).
const LIMIT_LOG_TARGET: &str = "opengist_mcp::opengist::client::limit";

/// The turns: one semaphore for all, one per principal with requests waiting or in flight.
pub(super) struct Limiter {
    limits: RequestLimits,
    all: Arc<Semaphore>,
    principals: Mutex<HashMap<Arc<str>, Arc<Semaphore>>>,
}

/// A request's turn; dropping it lets the next one go.
pub(super) struct Turn<'a> {
    limiter: &'a Limiter,
    principal: Arc<str>,
    permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
}

impl Limiter {
    pub(super) fn new(limits: RequestLimits) -> Self {
        let limits = RequestLimits {
            max_in_flight: limits.max_in_flight.max(1),
            per_principal: limits.per_principal.max(1),
            queue_wait: limits.queue_wait,
        };
        Self {
            limits,
            all: Arc::new(Semaphore::new(limits.max_in_flight)),
            principals: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for a turn for the current principal: its own share first, then the server's.
    pub(super) async fn turn(&self, call: &CallInfo) -> Result<Turn<'_>, OpengistError> {
        let principal = current_principal();
        let own = {
            let mut map = self
                .principals
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            map.entry(principal.clone())
                .or_insert_with(|| Arc::new(Semaphore::new(self.limits.per_principal)))
                .clone()
        };
        let mut waiting_on = BusyCap::Principal;
        let acquired = tokio::time::timeout(self.limits.queue_wait, async {
            let mine = own.acquire_owned().await.ok()?;
            waiting_on = BusyCap::Server;
            let all = self.all.clone().acquire_owned().await.ok()?;
            Some((mine, all))
        })
        .await;
        match acquired {
            Ok(Some(permits)) => Ok(Turn {
                limiter: self,
                principal,
                permits: Some(permits),
            }),
            // A semaphore is never closed; a timeout and a closed one are both "busy".
            _ => {
                self.forget_if_idle(&principal);
                tracing::warn!(
                    target: LIMIT_LOG_TARGET,
                    cap = match waiting_on {
                        BusyCap::Principal => "per principal",
                        BusyCap::Server => "server",
                    },
                    waited_ms = self.limits.queue_wait.as_millis() as u64,
                    "a request to Opengist waited too long for a turn and was refused"
                );
                Err(OpengistError::Busy {
                    operation: call.operation,
                    cap: waiting_on,
                    limit: match waiting_on {
                        BusyCap::Principal => self.limits.per_principal,
                        BusyCap::Server => self.limits.max_in_flight,
                    },
                    waited: self.limits.queue_wait,
                })
            }
        }
    }

    /// Drops a principal's semaphore once nobody holds or waits for it (so the table holds
    /// only principals with requests now).
    fn forget_if_idle(&self, principal: &Arc<str>) {
        let mut map = self
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if map
            .get(principal)
            .is_some_and(|own| Arc::strong_count(own) == 1)
        {
            map.remove(principal);
        }
    }

    /// Principals with requests waiting or in flight (for tests).
    #[cfg(test)]
    fn principals(&self) -> usize {
        self.principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.permits.take());
        self.limiter.forget_if_idle(&self.principal);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::Notify;

    use super::super::super::error::Scope;
    use super::*;

    fn call() -> CallInfo {
        CallInfo::new("read a gist", Scope::GistRead, "gist x")
    }

    fn limiter(all: usize, per: usize, wait: Duration) -> Arc<Limiter> {
        Arc::new(Limiter::new(RequestLimits {
            max_in_flight: all,
            per_principal: per,
            queue_wait: wait,
        }))
    }

    const FOREVER: Duration = Duration::from_secs(600);
    /// A queue time the held turn below is never handed back within.
    const SHORT: Duration = Duration::from_millis(50);

    /// Many requests of several principals: never more in flight than the caps, every one
    /// served in the end, and the table empty afterwards.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_burst_queues_within_both_caps() {
        let limiter = limiter(3, 2, FOREVER);
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let per_peak = Arc::new(Mutex::new(HashMap::<String, (usize, usize)>::new()));
        let mut tasks = Vec::new();
        for i in 0..60 {
            let (limiter, in_flight, peak, per_peak) = (
                limiter.clone(),
                in_flight.clone(),
                peak.clone(),
                per_peak.clone(),
            );
            let principal = format!("p{}", i % 4);
            tasks.push(tokio::spawn(as_principal(principal.clone(), async move {
                let turn = limiter.turn(&call()).await.expect("a turn");
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                {
                    let mut map = per_peak.lock().expect("lock");
                    let entry = map.entry(principal.clone()).or_default();
                    entry.0 += 1;
                    entry.1 = entry.1.max(entry.0);
                }
                tokio::task::yield_now().await;
                {
                    let mut map = per_peak.lock().expect("lock");
                    map.entry(principal).or_default().0 -= 1;
                }
                in_flight.fetch_sub(1, Ordering::SeqCst);
                drop(turn);
            })));
        }
        for task in tasks {
            task.await.expect("task");
        }
        assert!(peak.load(Ordering::SeqCst) <= 3, "the server cap held");
        for (principal, (_, peak)) in per_peak.lock().expect("lock").iter() {
            assert!(*peak <= 2, "{principal}: the per-principal cap held");
        }
        assert_eq!(limiter.principals(), 0, "idle principals are forgotten");
    }

    /// A principal that fills its share waits; another principal still gets a turn at once;
    /// the waiting one goes as soon as a turn is handed back, in order.
    #[tokio::test]
    async fn one_principal_cannot_take_the_others_turns() {
        let limiter = limiter(4, 1, FOREVER);
        let held = as_principal("alice".into(), limiter.turn(&call()))
            .await
            .expect("alice's first");
        let started = Arc::new(Notify::new());
        let waiting = {
            let (limiter, started) = (limiter.clone(), started.clone());
            tokio::spawn(as_principal("alice".into(), async move {
                started.notify_one();
                limiter.turn(&call()).await.map(drop)
            }))
        };
        started.notified().await;
        // Bob is served while alice's second request waits.
        let bob = as_principal("bob".into(), limiter.turn(&call()))
            .await
            .expect("bob is not held up by alice");
        assert!(!waiting.is_finished());
        drop(bob);
        drop(held);
        waiting
            .await
            .expect("task")
            .expect("alice's second goes once her first is done");
    }

    /// Waiting past the queue time is the busy error, naming the cap, and nothing is kept.
    #[tokio::test]
    async fn waiting_too_long_is_a_clear_busy_error() {
        let limiter = limiter(1, 5, SHORT);
        let held = as_principal("alice".into(), limiter.turn(&call()))
            .await
            .expect("first");
        let error = as_principal("bob".into(), limiter.turn(&call()))
            .await
            .err()
            .expect("busy");
        assert!(
            matches!(
                error,
                OpengistError::Busy {
                    cap: BusyCap::Server,
                    limit: 1,
                    ..
                }
            ),
            "{error:?}"
        );
        let text = error.to_string();
        assert!(text.contains("Opengist is busy"), "{text}");
        assert!(text.contains("Nothing was sent"), "{text}");
        assert!(text.contains("retry"), "{text}");
        assert!(!error.write_may_have_applied());
        drop(held);
        assert_eq!(limiter.principals(), 0);
        // The caller's own share is named when that is what was full.
        let limiter = self::limiter(5, 1, SHORT);
        let _held = limiter.turn(&call()).await.expect("first");
        let error = limiter.turn(&call()).await.err().expect("busy");
        assert!(
            matches!(
                error,
                OpengistError::Busy {
                    cap: BusyCap::Principal,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains("per caller"), "{error}");
    }
}
