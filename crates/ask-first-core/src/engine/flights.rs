//! One at a time within this process: identical calls take turns to find or make their record
//! ([`Turns`]), and concurrent retries of one CIBA record share one poll of the identity
//! provider ([`Shared`]). Both tables hold an entry only while someone uses it.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Mutex as TurnLock, OnceCell, OwnedMutexGuard};

use super::backchannel::BackchannelPoll;
use crate::approval_record::{RecordId, RecordStoreError};
use crate::target::{Approval, Fingerprint};

/// What names one exact call of one principal: the principal, the operation, and the binding
/// and question fingerprints.
pub(super) type CallKey = (String, &'static str, Fingerprint, Fingerprint);

/// The [`CallKey`] of `principal`'s call about `approval` under `operation`.
pub(super) fn call_key(principal: &str, operation: &'static str, approval: &Approval) -> CallKey {
    (
        principal.to_owned(),
        operation,
        approval.binding,
        approval.shown,
    )
}

/// How long the time an approval was used is kept: longer than a call takes to reach its
/// record, so that each call made before the use learns of it.
const USED_KEPT: Duration = Duration::from_secs(300);

/// The guard's tables of work in flight.
#[derive(Default)]
pub(super) struct Flights {
    /// Identical calls (one principal, one exact call) take turns to find or make a record.
    pub(super) calls: Turns<CallKey>,
    /// Concurrent retries of one CIBA record share one poll of the provider, and what the
    /// record became on its answer.
    pub(super) polls: Shared<RecordId, Result<BackchannelPoll, RecordStoreError>>,
    /// When each exact call last used an approval (kept [`USED_KEPT`]).
    used: Mutex<HashMap<CallKey, Instant>>,
}

impl Flights {
    /// Notes that `key`'s approval was just used.
    pub(super) fn used(&self, key: CallKey) {
        let now = Instant::now();
        let mut used = locked(&self.used);
        used.retain(|_, at| now.duration_since(*at) < USED_KEPT);
        used.insert(key, now);
    }

    /// Whether an identical call used `key`'s approval after a call that `began` then: the
    /// two were made at the same time, and the later is its twin, not a new question.
    pub(super) fn used_since(&self, key: &CallKey, began: Instant) -> bool {
        locked(&self.used).get(key).is_some_and(|at| *at >= began)
    }
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Turns per key: one holder at a time; the others wait in line.
pub(super) struct Turns<K> {
    locks: Arc<Mutex<HashMap<K, Arc<TurnLock<()>>>>>,
}

impl<K> Default for Turns<K> {
    fn default() -> Self {
        Self {
            locks: Arc::default(),
        }
    }
}

/// The turn of one key: held until dropped.
pub(super) struct Turn<K: Eq + Hash> {
    key: K,
    lock: Arc<TurnLock<()>>,
    guard: Option<OwnedMutexGuard<()>>,
    locks: Arc<Mutex<HashMap<K, Arc<TurnLock<()>>>>>,
}

impl<K: Eq + Hash + Clone> Turns<K> {
    /// Waits for `key`'s turn.
    pub(super) async fn take(&self, key: K) -> Turn<K> {
        let lock = locked(&self.locks).entry(key.clone()).or_default().clone();
        let guard = lock.clone().lock_owned().await;
        Turn {
            key,
            lock,
            guard: Some(guard),
            locks: self.locks.clone(),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        locked(&self.locks).len()
    }
}

impl<K: Eq + Hash> Drop for Turn<K> {
    fn drop(&mut self) {
        self.guard = None;
        let mut locks = locked(&self.locks);
        // The table's and this turn's: nobody else waits, so the entry goes.
        if Arc::strong_count(&self.lock) == 2 {
            locks.remove(&self.key);
        }
    }
}

/// Work shared by everyone who asks for the same key while it runs: the first runs it, the
/// others wait for its answer. Who asks after it finished runs it again.
pub(super) struct Shared<K, V> {
    running: Mutex<HashMap<K, Arc<OnceCell<V>>>>,
}

impl<K, V> Default for Shared<K, V> {
    fn default() -> Self {
        Self {
            running: Mutex::default(),
        }
    }
}

impl<K: Eq + Hash + Clone, V: Clone> Shared<K, V> {
    /// `work`'s answer for `key`: run here, or by whoever started it first and has not
    /// finished.
    pub(super) async fn run<F: Future<Output = V>>(&self, key: K, work: F) -> V {
        let cell = locked(&self.running)
            .entry(key.clone())
            .or_default()
            .clone();
        let answer = cell.get_or_init(|| work).await.clone();
        let mut running = locked(&self.running);
        if running
            .get(&key)
            .is_some_and(|held| Arc::ptr_eq(held, &cell))
        {
            running.remove(&key);
        }
        answer
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        locked(&self.running).len()
    }
}

impl super::Guard {
    /// Whether an identical call used `key`'s approval after `call` began, in this process or
    /// (by the store's record of it) on another replica: `call` is its twin, made at the same
    /// time, and is told so rather than asking the person afresh.
    pub(super) async fn is_twin(
        &self,
        call: &crate::call::GuardCall,
        key: &CallKey,
    ) -> Result<bool, super::Interruption> {
        if self.inner.flights.used_since(key, call.began) {
            return Ok(true);
        }
        let (principal, operation, target, shown) = key;
        let spent = self
            .records_store()
            .last_spent(principal, operation, target, shown)
            .await
            .map_err(super::page::store_failed)?;
        let began = crate::clock::now_unix_ms()
            .saturating_sub(u64::try_from(call.began.elapsed().as_millis()).unwrap_or(u64::MAX));
        Ok(spent.is_some_and(|at| at >= began))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn turns_of_one_key_follow_each_other_and_other_keys_do_not_wait() {
        let turns = Arc::new(Turns::<&str>::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (turns, inside, most) = (turns.clone(), inside.clone(), most.clone());
            tasks.push(tokio::spawn(async move {
                let _turn = turns.take("a").await;
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        // The control: another key's turn is taken while "a" is busy.
        let other = tokio::time::timeout(Duration::from_secs(5), turns.take("b")).await;
        assert!(other.is_ok(), "another key waited");
        drop(other);
        for task in tasks {
            task.await.expect("joined");
        }
        assert_eq!(most.load(Ordering::SeqCst), 1, "two held one key's turn");
        assert_eq!(turns.len(), 0, "entries go with their last turn");
    }

    #[tokio::test]
    async fn concurrent_askers_share_one_run_and_later_ones_run_again() {
        let shared = Arc::new(Shared::<u8, usize>::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let (release, gate) = tokio::sync::watch::channel(false);
        let mut tasks = Vec::new();
        for _ in 0..6 {
            let (shared, runs, mut gate) = (shared.clone(), runs.clone(), gate.clone());
            tasks.push(tokio::spawn(async move {
                shared
                    .run(1, async move {
                        let _ = gate.wait_for(|open| *open).await;
                        runs.fetch_add(1, Ordering::SeqCst) + 1
                    })
                    .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        release.send(true).expect("released");
        for task in tasks {
            assert_eq!(
                task.await.expect("joined"),
                1,
                "every asker got the one run"
            );
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(shared.len(), 0);
        // Asked after it finished: run again.
        let again = shared.run(1, async { 7 }).await;
        assert_eq!(again, 7);
    }
}
