//! Approval records on Redis, for replicas that answer each other's questions: the record
//! written once (`SET NX`), the decision set once (`SET NX`), the spend made once (`SET NX`),
//! each key living as long as the record. Two sorted sets index them, scored by expiry: the
//! records about one exact call (for an identical retry without a `requestState`), and each
//! principal's pending records (the bound on them). A record is written and indexed, and a
//! decision made and taken out of the pending set, by one script each: atomic across
//! replicas, so concurrent creates never pass the bound. A spent approval notes, under a key
//! of its call's, when it was used: an identical call made before then on another replica is
//! its twin.

use ask_first_core::{
    ApprovalRecord, ApprovalStore, DecideRefused, Fingerprint, RecordFuture, RecordId, RecordState,
    RecordStoreError, TooManyPending,
};

use crate::RedisNonceStore;

/// Writes a record once and indexes it, unless its principal's pending set is full.
/// KEYS: the record, its call's set, its principal's pending set. ARGV: the record's JSON, its
/// expiry, now, the bound, its id. Answers 1 (stored), 0 (the bound reached), -1 (the id
/// exists).
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[4]) then return 0 end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EXAT', ARGV[2]) then return -1 end
for _, key in ipairs({KEYS[2], KEYS[3]}) do
  redis.call('ZADD', key, ARGV[2], ARGV[5])
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('EXPIREAT', key, last[2])
end
return 1
";

/// Decides a record once and takes it out of its principal's pending set.
/// KEYS: the decision, the pending set. ARGV: the state, the record's expiry, its id.
const DECIDE: &str = r"
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EXAT', ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
";

/// Sets a record's spent marker once, if its decision is `ARGV[1]`; for an approval, notes
/// when its call's approval was last used.
/// KEYS: the spent marker, the decision, (for an approval) its call's last-used key. ARGV: the
/// decision required, the record's expiry, (for an approval) now in Unix milliseconds.
const SPEND: &str = r"
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EXAT', ARGV[2]) then return 0 end
if KEYS[3] then redis.call('SET', KEYS[3], ARGV[3], 'EXAT', ARGV[2]) end
return 1
";

impl RedisNonceStore {
    fn record_key(&self, kind: &str, id: &RecordId) -> String {
        format!("{}approval:{kind}:{id}", self.prefix)
    }

    /// A key of `kind` named by a hash of `parts`, so no caller's name is in a Redis key.
    fn hashed_key(&self, kind: &str, parts: &[&str]) -> String {
        let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
        for part in parts {
            sha2::Digest::update(&mut hasher, (part.len() as u64).to_be_bytes());
            sha2::Digest::update(&mut hasher, part.as_bytes());
        }
        let digest = sha2::Digest::finalize(hasher);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{}approval:{kind}:{hex}", self.prefix)
    }

    /// The set of the records about one exact call: its principal, operation and both
    /// fingerprints (hex).
    fn call_key(&self, principal: &str, operation: &str, target: &str, shown: &str) -> String {
        self.hashed_key("call", &[principal, operation, target, shown])
    }

    /// The set of `principal`'s pending records.
    fn pending_key(&self, principal: &str) -> String {
        self.hashed_key("pending", &[principal])
    }

    fn record_failure(&self, error: &redis::RedisError) -> RecordStoreError {
        RecordStoreError(self.failure(error).0)
    }

    /// Runs `command` with one retry on a connection that broke (as spends do).
    async fn run<T: redis::FromRedisValue>(
        &self,
        command: &redis::Cmd,
    ) -> Result<T, RecordStoreError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut connection = self.manager.clone();
            match command.query_async::<T>(&mut connection).await {
                Ok(answer) => return Ok(answer),
                Err(error)
                    if attempt < 2 && (error.is_io_error() || error.is_connection_dropped()) => {}
                Err(error) => return Err(self.record_failure(&error)),
            }
        }
    }

    /// Runs one of this module's scripts. A retry after a broken connection is safe: each
    /// script's first write is a `SET NX` (or a count), so a second run finds it done.
    async fn script(
        &self,
        body: &str,
        keys: &[String],
        args: &[String],
    ) -> Result<i64, RecordStoreError> {
        let mut command = redis::cmd("EVAL");
        command.arg(body).arg(keys.len());
        for key in keys {
            command.arg(key);
        }
        for arg in args {
            command.arg(arg);
        }
        self.run::<i64>(&command).await
    }

    async fn read_record(
        &self,
        id: &RecordId,
        now: u64,
    ) -> Result<Option<ApprovalRecord>, RecordStoreError> {
        let mut command = redis::cmd("MGET");
        command
            .arg(self.record_key("record", id))
            .arg(self.record_key("decided", id))
            .arg(self.record_key("spent", id));
        let answer: Vec<Option<String>> = self.run(&command).await?;
        let [text, decided, spent] = <[Option<String>; 3]>::try_from(answer)
            .map_err(|_| RecordStoreError("Redis answered MGET with another count".to_owned()))?;
        let Some(text) = text else {
            return Ok(None);
        };
        let Some(mut record) = serde_json::from_str(&text)
            .ok()
            .as_ref()
            .and_then(ApprovalRecord::from_json)
            .filter(|r| r.id == *id && r.expires_at > now)
        else {
            return Ok(None);
        };
        record.state = if spent.is_some() {
            RecordState::Spent
        } else {
            match decided {
                Some(decided) => RecordState::parse(&decided).unwrap_or(RecordState::Declined),
                None => RecordState::Pending,
            }
        };
        Ok(Some(record))
    }

    /// Moves a record decided `from` to spent: `true` the one time it does.
    async fn spend_from(
        &self,
        id: &RecordId,
        now: u64,
        from: RecordState,
    ) -> Result<bool, RecordStoreError> {
        let Some(record) = self.read_record(id, now).await? else {
            return Ok(false);
        };
        if record.state != from {
            return Ok(false);
        }
        let mut keys = vec![self.record_key("spent", id), self.record_key("decided", id)];
        let mut args = vec![
            from.as_str().to_owned(),
            record.expires_at.max(1).to_string(),
        ];
        if from == RecordState::Approved {
            let call = [
                record.principal.as_str(),
                &record.operation,
                &record.target,
                &record.shown,
            ];
            keys.push(self.hashed_key("used", &call));
            args.push(now_ms().to_string());
        }
        Ok(self.script(SPEND, &keys, &args).await? == 1)
    }

    async fn used_at(
        &self,
        principal: &str,
        operation: &str,
        target: &Fingerprint,
        shown: &Fingerprint,
    ) -> Result<Option<u64>, RecordStoreError> {
        let (target, shown) = (target.to_string(), shown.to_string());
        let key = self.hashed_key("used", &[principal, operation, &target, &shown]);
        let mut command = redis::cmd("GET");
        command.arg(key);
        let at: Option<String> = self.run(&command).await?;
        Ok(at.and_then(|at| at.parse().ok()))
    }

    async fn pending_count(&self, principal: &str, now: u64) -> Result<usize, RecordStoreError> {
        let key = self.pending_key(principal);
        let mut command = redis::cmd("ZCOUNT");
        command.arg(key).arg(format!("({now}")).arg("+inf");
        self.run::<usize>(&command).await
    }

    async fn open_records(
        &self,
        principal: &str,
        operation: &str,
        target: &Fingerprint,
        shown: &Fingerprint,
        now: u64,
    ) -> Result<Vec<ApprovalRecord>, RecordStoreError> {
        let (target, shown) = (target.to_string(), shown.to_string());
        let key = self.call_key(principal, operation, &target, &shown);
        let mut command = redis::cmd("ZRANGEBYSCORE");
        command.arg(key).arg(format!("({now}")).arg("+inf");
        let ids: Vec<String> = self.run(&command).await?;
        let mut records = Vec::new();
        for id in ids.iter().filter_map(|id| RecordId::parse(id)) {
            if let Some(record) = self.read_record(&id, now).await? {
                let about = record.principal == principal
                    && record.operation == operation
                    && record.target == target
                    && record.shown == shown;
                if about && record.state != RecordState::Spent {
                    records.push(record);
                }
            }
        }
        Ok(records)
    }
}

impl ApprovalStore for RedisNonceStore {
    fn create<'a>(
        &'a self,
        record: &'a ApprovalRecord,
        max_pending: usize,
        now: u64,
    ) -> RecordFuture<'a, Result<(), TooManyPending>> {
        Box::pin(async move {
            let mut stored = record.to_json();
            stored["state"] = RecordState::Pending.as_str().into();
            let keys = [
                self.record_key("record", &record.id),
                self.call_key(
                    &record.principal,
                    &record.operation,
                    &record.target,
                    &record.shown,
                ),
                self.pending_key(&record.principal),
            ];
            let args = [
                stored.to_string(),
                record.expires_at.max(1).to_string(),
                now.to_string(),
                max_pending.to_string(),
                record.id.to_string(),
            ];
            match self.script(CREATE, &keys, &args).await? {
                1 => Ok(Ok(())),
                0 => Ok(Err(TooManyPending { limit: max_pending })),
                _ => Err(RecordStoreError(
                    "a record with this id exists already".to_owned(),
                )),
            }
        })
    }

    fn count_pending<'a>(&'a self, principal: &'a str, now: u64) -> RecordFuture<'a, usize> {
        Box::pin(self.pending_count(principal, now))
    }

    fn get<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, Option<ApprovalRecord>> {
        Box::pin(self.read_record(id, now))
    }

    fn decide<'a>(
        &'a self,
        id: &'a RecordId,
        approve: bool,
        now: u64,
    ) -> RecordFuture<'a, Result<(), DecideRefused>> {
        Box::pin(async move {
            let Some(record) = self.read_record(id, now).await? else {
                return Ok(Err(DecideRefused::Unknown));
            };
            let state = if approve {
                RecordState::Approved
            } else {
                RecordState::Declined
            };
            let keys = [
                self.record_key("decided", id),
                self.pending_key(&record.principal),
            ];
            let args = [
                state.as_str().to_owned(),
                record.expires_at.max(1).to_string(),
                id.to_string(),
            ];
            let fresh = self.script(DECIDE, &keys, &args).await? == 1;
            Ok(fresh.then_some(()).ok_or(DecideRefused::AlreadyDecided))
        })
    }

    fn spend<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        Box::pin(self.spend_from(id, now, RecordState::Approved))
    }

    fn spend_declined<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        Box::pin(self.spend_from(id, now, RecordState::Declined))
    }

    fn find_open<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
        now: u64,
    ) -> RecordFuture<'a, Vec<ApprovalRecord>> {
        Box::pin(self.open_records(principal, operation, target, shown, now))
    }

    fn last_spent<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
    ) -> RecordFuture<'a, Option<u64>> {
        Box::pin(self.used_at(principal, operation, target, shown))
    }
}

/// Now, Unix milliseconds (this replica's clock, as the guard's).
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
