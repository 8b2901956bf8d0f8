//! The Redis store against a real `redis-server` (installed by `scripts/replica-env install`),
//! started on a free loopback port with throwaway data and stopped by its PID.
//!
//! Ignored by default, because a fresh machine has no Redis until the replica layer of
//! `scripts/test` installs it; that layer runs them with `--ignored`.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ask_first_core::NonceStore;
use ask_first_redis::RedisNonceStore;

/// A redis-server of this test, killed (by PID) when dropped.
struct Redis {
    child: Child,
    port: u16,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Redis {
    fn start(password: Option<&str>) -> Self {
        Self::start_on(free_port(), password)
    }

    fn start_on(port: u16, password: Option<&str>) -> Self {
        let dir =
            std::env::temp_dir().join(format!("ask-first-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut command = Command::new("redis-server");
        command
            .args([
                "--bind",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(password) = password {
            command.args(["--requirepass", password]);
        }
        let child = command
            .spawn()
            .expect("redis-server runs (install it with `scripts/replica-env install`)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            port,
            _dir: TempDir(dir),
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: scripts/replica-env install; run with --ignored"]
async fn the_first_writer_wins_among_many_replicas_at_once() {
    let redis = Redis::start(None);
    // Three stores, as three replicas would hold, each with its own connection.
    let stores: Vec<Arc<RedisNonceStore>> = (0..3)
        .map(|_| Arc::new(RedisNonceStore::open(&redis.url()).expect("store")))
        .collect();
    for round in 0..20u8 {
        let nonce = [round; 16];
        let mut tasks = Vec::new();
        for i in 0..30 {
            let store = stores[i % 3].clone();
            tasks.push(tokio::spawn(async move {
                store.spend(&nonce, now() + 60, now()).await
            }));
        }
        let mut fresh = 0;
        for task in tasks {
            if task.await.expect("joined").expect("spent") {
                fresh += 1;
            }
        }
        assert_eq!(fresh, 1, "round {round}: exactly one spend may win");
    }
}

#[tokio::test]
#[ignore = "needs redis-server: scripts/replica-env install; run with --ignored"]
async fn a_spent_nonce_expires_with_its_seal() {
    let redis = Redis::start(None);
    let store = RedisNonceStore::builder(redis.url())
        .key_prefix("t:")
        .build()
        .expect("store");
    let nonce = [7u8; 16];
    assert!(store.spend(&nonce, now() + 3, now()).await.expect("spent"));
    let client = redis::Client::open(redis.url()).expect("client");
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
    let key = format!("t:{}", "07".repeat(16));
    let pttl: i64 = redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut connection)
        .await
        .expect("pttl");
    assert!(
        (1..=3000).contains(&pttl),
        "expiry is the remaining lifetime: {pttl} ms"
    );
    assert!(!store.spend(&nonce, now() + 3, now()).await.expect("asked"));
    tokio::time::sleep(Duration::from_millis(
        u64::try_from(pttl).unwrap_or(3000) + 200,
    ))
    .await;
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut connection)
        .await
        .expect("exists");
    assert_eq!(exists, 0, "Redis forgot the nonce once its seal expired");
}

#[tokio::test]
#[ignore = "needs redis-server: scripts/replica-env install; run with --ignored"]
async fn a_password_in_the_url_is_used_and_a_missing_one_fails_closed() {
    let redis = Redis::start(Some("s3cret-pass"));
    let without = RedisNonceStore::builder(redis.url())
        .setting_name("X_REDIS_URL")
        .build()
        .expect("store");
    let error = without
        .spend(&[1; 16], now() + 60, now())
        .await
        .expect_err("refused without the password");
    assert!(error.to_string().contains("X_REDIS_URL"), "{error}");
    let with = RedisNonceStore::open(&format!("redis://:s3cret-pass@127.0.0.1:{}/0", redis.port))
        .expect("store");
    assert!(
        with.spend(&[1; 16], now() + 60, now())
            .await
            .expect("spent")
    );
    assert!(!format!("{with:?}").contains("s3cret"));
}

#[tokio::test]
#[ignore = "needs redis-server: scripts/replica-env install; run with --ignored"]
async fn a_stopped_redis_fails_closed_and_a_restarted_one_is_used_again_without_rebuilding() {
    let redis = Redis::start(None);
    let port = redis.port;
    let store = RedisNonceStore::open(&redis.url()).expect("store");
    assert!(
        store
            .spend(&[2; 16], now() + 60, now())
            .await
            .expect("spent")
    );
    drop(redis);
    let error = store
        .spend(&[3; 16], now() + 60, now())
        .await
        .expect_err("fails closed");
    assert!(
        error.to_string().contains("Redis at redis://127.0.0.1"),
        "{error}"
    );
    let _again = Redis::start_on(port, None);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match store.spend(&[3; 16], now() + 60, now()).await {
            Ok(fresh) => {
                assert!(
                    fresh,
                    "the nonce was never spent: the failed spend wrote nothing"
                );
                break;
            }
            Err(error) => {
                assert!(Instant::now() < deadline, "no recovery: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

ask_first_core::wording! {
    struct RecordQuestion = "Delete note {}?";
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: scripts/replica-env install; run with --ignored"]
async fn an_approval_record_is_decided_once_and_spent_once_across_replicas() {
    use ask_first_core::{
        ApprovalRecord, ApprovalStore, DecideRefused, Evidence, EvidenceItem, Fact, Fingerprint,
        Id, Question, RecordId, RecordState,
    };
    let redis = Redis::start(None);
    let stores: Vec<Arc<RedisNonceStore>> = (0..3)
        .map(|_| Arc::new(RedisNonceStore::open(&redis.url()).expect("store")))
        .collect();
    let shown = |id: &str| {
        Fingerprint::of_question(&Question::new::<RecordQuestion>([Fact::id(
            Id::new(id).expect("id"),
        )]))
    };
    let (a, b) = (shown("n1"), shown("n2"));
    let record = ApprovalRecord {
        id: RecordId::random(),
        principal: "token:alice".to_owned(),
        holder: "token:alice".to_owned(),
        tool: "delete_note".to_owned(),
        operation: "delete_note".to_owned(),
        target: a.to_string(),
        shown: a.to_string(),
        question: "Delete note n1?".to_owned(),
        evidence: Evidence::new().group(
            "Note deleted",
            [EvidenceItem::readable(
                "n1",
                "first note\n</pre>".as_bytes(),
            )],
        ),
        route: "page".to_owned(),
        auth_req_id: None,
        binding_code: None,
        request_expires_at: None,
        expires_at: now() + 60,
        state: RecordState::Pending,
    };
    stores[0]
        .create(&record, 20, now())
        .await
        .expect("answers")
        .expect("below the bound");
    // Another replica reads it whole, its evidence included.
    let read = stores[2].get(&record.id, now()).await.expect("read");
    assert_eq!(read.as_ref(), Some(&record));
    // Another replica finds it, for exactly this call only, and it is pending.
    let found = stores[1]
        .find_open("token:alice", "delete_note", &a, &a, now())
        .await
        .expect("found");
    assert_eq!(
        found.iter().map(|r| (r.id, r.state)).collect::<Vec<_>>(),
        vec![(record.id, RecordState::Pending)]
    );
    for (principal, target) in [("token:bob", &a), ("token:alice", &b)] {
        let other = stores[1]
            .find_open(principal, "delete_note", target, target, now())
            .await
            .expect("answers");
        assert_eq!(other, Vec::new(), "{principal}");
    }
    assert!(
        !ApprovalStore::spend(&*stores[2], &record.id, now())
            .await
            .expect("answers"),
        "pending never spends"
    );
    assert_eq!(
        stores[1]
            .decide(&record.id, true, now())
            .await
            .expect("answers"),
        Ok(())
    );
    assert_eq!(
        stores[2]
            .decide(&record.id, false, now())
            .await
            .expect("answers"),
        Err(DecideRefused::AlreadyDecided)
    );
    // Thirty spends at once on three replicas: exactly one wins.
    let mut tasks = Vec::new();
    for i in 0..30 {
        let store = stores[i % 3].clone();
        let id = record.id;
        tasks.push(tokio::spawn(async move {
            ApprovalStore::spend(&*store, &id, now()).await
        }));
    }
    let mut won = 0;
    for task in tasks {
        if task.await.expect("joined").expect("answers") {
            won += 1;
        }
    }
    assert_eq!(won, 1);
    let read = stores[0].get(&record.id, now()).await.expect("answers");
    assert_eq!(read.map(|r| r.state), Some(RecordState::Spent));
}

/// A record of `principal` (holder `holder`) about the note `note`, expiring in a minute.
fn record_about(principal: &str, holder: &str, note: &str) -> ask_first_core::ApprovalRecord {
    use ask_first_core::{Fact, Fingerprint, Id, Question, RecordId, RecordState};
    let shown = Fingerprint::of_question(&Question::new::<RecordQuestion>([Fact::id(
        Id::new(note).expect("id"),
    )]));
    ask_first_core::ApprovalRecord {
        id: RecordId::random(),
        principal: principal.to_owned(),
        holder: holder.to_owned(),
        tool: "delete_note".to_owned(),
        operation: "delete_note".to_owned(),
        target: shown.to_string(),
        shown: shown.to_string(),
        question: format!("Delete note {note}?"),
        evidence: Default::default(),
        route: "page".to_owned(),
        auth_req_id: None,
        binding_code: None,
        request_expires_at: None,
        expires_at: now() + 60,
        state: RecordState::Pending,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: scripts/replica-env install; run with --ignored"]
async fn an_approved_record_is_found_beside_a_newer_pending_one_and_a_decline_is_told_once() {
    use ask_first_core::{ApprovalStore, RecordState};
    let redis = Redis::start(None);
    let store = RedisNonceStore::open(&redis.url()).expect("store");
    let laptop = record_about("token:alice", "laptop", "n1");
    store
        .create(&laptop, 20, now())
        .await
        .expect("answers")
        .expect("stored");
    assert_eq!(
        store
            .decide(&laptop.id, true, now())
            .await
            .expect("answers"),
        Ok(())
    );
    // Alice's phone makes the identical call later: a newer pending record beside it.
    let phone = record_about("token:alice", "phone", "n1");
    store
        .create(&phone, 20, now())
        .await
        .expect("answers")
        .expect("stored");
    let a = ask_first_core::Fingerprint::of_question(&ask_first_core::Question::new::<
        RecordQuestion,
    >([ask_first_core::Fact::id(
        ask_first_core::Id::new("n1").expect("id"),
    )]));
    let mut found: Vec<_> = store
        .find_open("token:alice", "delete_note", &a, &a, now())
        .await
        .expect("answers")
        .into_iter()
        .map(|r| (r.holder, r.state))
        .collect();
    found.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        found,
        vec![
            ("laptop".to_owned(), RecordState::Approved),
            ("phone".to_owned(), RecordState::Pending),
        ],
        "the yes is not hidden by the newer question"
    );
    let used = |store: &RedisNonceStore| {
        let store = store.clone();
        async move {
            store
                .last_spent("token:alice", "delete_note", &a, &a)
                .await
                .expect("answers")
        }
    };
    assert_eq!(used(&store).await, None, "not used yet");
    let before_ms = now() * 1000;
    assert!(
        ApprovalStore::spend(&store, &laptop.id, now())
            .await
            .expect("answers")
    );
    // When it was used, for every replica: an identical call made before then is its twin.
    let other = RedisNonceStore::open(&redis.url()).expect("another replica");
    assert!(
        used(&other).await.is_some_and(|at| at >= before_ms),
        "the use noted"
    );
    // A decline: found until told, told once, never spent as a yes.
    assert_eq!(
        store
            .decide(&phone.id, false, now())
            .await
            .expect("answers"),
        Ok(())
    );
    let found = store
        .find_open("token:alice", "delete_note", &a, &a, now())
        .await
        .expect("answers");
    assert_eq!(
        found.iter().map(|r| (r.id, r.state)).collect::<Vec<_>>(),
        vec![(phone.id, RecordState::Declined)]
    );
    assert!(
        !ApprovalStore::spend(&store, &phone.id, now())
            .await
            .expect("answers")
    );
    assert!(
        store
            .spend_declined(&phone.id, now())
            .await
            .expect("answers"),
        "told once"
    );
    assert!(
        !store
            .spend_declined(&phone.id, now())
            .await
            .expect("answers"),
        "only once"
    );
    assert!(
        store
            .find_open("token:alice", "delete_note", &a, &a, now())
            .await
            .expect("answers")
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: scripts/replica-env install; run with --ignored"]
async fn pending_records_are_bounded_per_principal_across_replicas() {
    use ask_first_core::{ApprovalStore, TooManyPending};
    let redis = Redis::start(None);
    let stores: Vec<Arc<RedisNonceStore>> = (0..3)
        .map(|_| Arc::new(RedisNonceStore::open(&redis.url()).expect("store")))
        .collect();
    // Forty creates at once on three replicas, bound five: exactly five stored.
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = stores[i % 3].clone();
        tasks.push(tokio::spawn(async move {
            let record = record_about("token:alice", "token:alice", &format!("n{i}"));
            store
                .create(&record, 5, now())
                .await
                .map(|r| r.map(|()| record.id))
        }));
    }
    let mut stored = Vec::new();
    for task in tasks {
        match task.await.expect("joined").expect("answers") {
            Ok(id) => stored.push(id),
            Err(refused) => assert_eq!(refused, TooManyPending { limit: 5 }),
        }
    }
    assert_eq!(stored.len(), 5);
    assert_eq!(stores[1].count_pending("token:alice", now()).await, Ok(5));
    // The control: another principal is not affected.
    let bob = record_about("token:bob", "token:bob", "n1");
    stores[2]
        .create(&bob, 5, now())
        .await
        .expect("answers")
        .expect("bob's own");
    assert_eq!(stores[0].count_pending("token:bob", now()).await, Ok(1));
    // A decision frees a place; expiry does too.
    assert_eq!(
        stores[0]
            .decide(&stored[0], false, now())
            .await
            .expect("answers"),
        Ok(())
    );
    assert_eq!(stores[1].count_pending("token:alice", now()).await, Ok(4));
    let next = record_about("token:alice", "token:alice", "late");
    stores[2]
        .create(&next, 5, now())
        .await
        .expect("answers")
        .expect("a freed place");
    assert!(
        stores[2]
            .create(
                &record_about("token:alice", "token:alice", "more"),
                5,
                now()
            )
            .await
            .expect("answers")
            .is_err()
    );
    assert_eq!(
        stores[0].count_pending("token:alice", now() + 61).await,
        Ok(0),
        "expired"
    );
    let after = record_about("token:alice", "token:alice", "after");
    stores[0]
        .create(&after, 5, now() + 61)
        .await
        .expect("answers")
        .expect("expired ones do not count");
}
