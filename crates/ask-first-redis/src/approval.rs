//! Approval records on Redis, for replicas that answer each other's questions: the record
//! written once (`SET NX`), the decision set once (`SET NX`), the spend made once (`SET NX`),
//! each key living as long as the record; and the newest open record about one exact call
//! under a key of its own, for an identical retry without a `requestState`.

use ask_first_core::{
    ApprovalRecord, ApprovalStore, DecideRefused, Fingerprint, RecordFuture, RecordId, RecordState,
    RecordStoreError,
};

use crate::RedisNonceStore;

impl RedisNonceStore {
    fn record_key(&self, kind: &str, id: &RecordId) -> String {
        format!("{}approval:{kind}:{id}", self.prefix)
    }

    /// The key naming the open record about one exact call: its principal, operation and both
    /// fingerprints (hex), hashed, so no caller's name is in a Redis key.
    fn open_key(&self, principal: &str, operation: &str, target: &str, shown: &str) -> String {
        let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
        for part in [principal, operation, target, shown] {
            sha2::Digest::update(&mut hasher, (part.len() as u64).to_be_bytes());
            sha2::Digest::update(&mut hasher, part.as_bytes());
        }
        let digest = sha2::Digest::finalize(hasher);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{}approval:open:{hex}", self.prefix)
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

    /// `SET key value NX EXAT expires_at`: whether it was set.
    async fn set_once(
        &self,
        key: String,
        value: &str,
        expires_at: u64,
    ) -> Result<bool, RecordStoreError> {
        let mut command = redis::cmd("SET");
        command
            .arg(key)
            .arg(value)
            .arg("NX")
            .arg("EXAT")
            .arg(expires_at.max(1));
        Ok(self.run::<Option<String>>(&command).await?.is_some())
    }

    async fn get_text(&self, key: String) -> Result<Option<String>, RecordStoreError> {
        let mut command = redis::cmd("GET");
        command.arg(key);
        self.run::<Option<String>>(&command).await
    }

    async fn read_record(
        &self,
        id: &RecordId,
        now: u64,
    ) -> Result<Option<ApprovalRecord>, RecordStoreError> {
        let Some(text) = self.get_text(self.record_key("record", id)).await? else {
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
        record.state = if self.get_text(self.record_key("spent", id)).await?.is_some() {
            RecordState::Spent
        } else {
            match self.get_text(self.record_key("decided", id)).await? {
                Some(decided) => RecordState::parse(&decided).unwrap_or(RecordState::Declined),
                None => RecordState::Pending,
            }
        };
        Ok(Some(record))
    }
}

impl ApprovalStore for RedisNonceStore {
    fn create<'a>(&'a self, record: &'a ApprovalRecord) -> RecordFuture<'a, ()> {
        Box::pin(async move {
            let mut stored = record.to_json();
            stored["state"] = RecordState::Pending.as_str().into();
            if !self
                .set_once(
                    self.record_key("record", &record.id),
                    &stored.to_string(),
                    record.expires_at,
                )
                .await?
            {
                return Err(RecordStoreError(
                    "a record with this id exists already".to_owned(),
                ));
            }
            // The open record about this exact call: the newest one wins.
            let mut command = redis::cmd("SET");
            command
                .arg(self.open_key(
                    &record.principal,
                    &record.operation,
                    &record.target,
                    &record.shown,
                ))
                .arg(record.id.to_string())
                .arg("EXAT")
                .arg(record.expires_at.max(1));
            self.run::<Option<String>>(&command).await?;
            Ok(())
        })
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
            let fresh = self
                .set_once(
                    self.record_key("decided", id),
                    state.as_str(),
                    record.expires_at,
                )
                .await?;
            Ok(fresh.then_some(()).ok_or(DecideRefused::AlreadyDecided))
        })
    }

    fn spend<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        Box::pin(async move {
            match self.read_record(id, now).await? {
                Some(record) if record.state == RecordState::Approved => {
                    self.set_once(self.record_key("spent", id), "1", record.expires_at)
                        .await
                }
                _ => Ok(false),
            }
        })
    }

    fn find_open<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
        now: u64,
    ) -> RecordFuture<'a, Option<ApprovalRecord>> {
        Box::pin(async move {
            let key = self.open_key(
                principal,
                operation,
                &target.to_string(),
                &shown.to_string(),
            );
            let Some(id) = self
                .get_text(key)
                .await?
                .as_deref()
                .and_then(RecordId::parse)
            else {
                return Ok(None);
            };
            Ok(self
                .read_record(&id, now)
                .await?
                .filter(|r| matches!(r.state, RecordState::Pending | RecordState::Approved))
                .filter(|r| r.is_for(principal, operation, target, shown)))
        })
    }
}
