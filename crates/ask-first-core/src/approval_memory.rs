//! The approval records of one process, in memory.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::approval_record::{
    ApprovalRecord, ApprovalStore, DecideRefused, RecordFuture, RecordId, RecordState,
    TooManyPending,
};
use crate::target::Fingerprint;

/// An in-memory record store for a single process. Forgets records once expired.
#[derive(Debug, Default)]
pub struct MemoryApprovalStore {
    records: Mutex<HashMap<RecordId, ApprovalRecord>>,
}

impl MemoryApprovalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, now: u64, f: impl FnOnce(&mut HashMap<RecordId, ApprovalRecord>) -> R) -> R {
        let mut records = match self.records.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        records.retain(|_, record| record.expires_at > now);
        f(&mut records)
    }

    /// Moves `id` from `from` to `to`: `true` the one time it does.
    fn step(&self, id: &RecordId, now: u64, from: RecordState, to: RecordState) -> bool {
        self.with(now, |records| match records.get_mut(id) {
            Some(record) if record.state == from => {
                record.state = to;
                true
            }
            _ => false,
        })
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> RecordFuture<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

fn pending_of(records: &HashMap<RecordId, ApprovalRecord>, principal: &str) -> usize {
    records
        .values()
        .filter(|r| r.principal == principal && r.state == RecordState::Pending)
        .count()
}

impl ApprovalStore for MemoryApprovalStore {
    fn create<'a>(
        &'a self,
        record: &'a ApprovalRecord,
        max_pending: usize,
        now: u64,
    ) -> RecordFuture<'a, Result<(), TooManyPending>> {
        ready(self.with(now, |records| {
            if pending_of(records, &record.principal) >= max_pending {
                return Err(TooManyPending { limit: max_pending });
            }
            let mut record = record.clone();
            record.state = RecordState::Pending;
            records.insert(record.id, record);
            Ok(())
        }))
    }

    fn count_pending<'a>(&'a self, principal: &'a str, now: u64) -> RecordFuture<'a, usize> {
        ready(self.with(now, |records| pending_of(records, principal)))
    }

    fn get<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, Option<ApprovalRecord>> {
        ready(self.with(now, |records| records.get(id).cloned()))
    }

    fn decide<'a>(
        &'a self,
        id: &'a RecordId,
        approve: bool,
        now: u64,
    ) -> RecordFuture<'a, Result<(), DecideRefused>> {
        ready(self.with(now, |records| {
            let record = records.get_mut(id).ok_or(DecideRefused::Unknown)?;
            if record.state != RecordState::Pending {
                return Err(DecideRefused::AlreadyDecided);
            }
            record.state = if approve {
                RecordState::Approved
            } else {
                RecordState::Declined
            };
            Ok(())
        }))
    }

    fn spend<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        ready(self.step(id, now, RecordState::Approved, RecordState::Spent))
    }

    fn spend_declined<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        ready(self.step(id, now, RecordState::Declined, RecordState::Spent))
    }

    fn find_open<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
        now: u64,
    ) -> RecordFuture<'a, Vec<ApprovalRecord>> {
        ready(self.with(now, |records| {
            records
                .values()
                .filter(|r| r.state != RecordState::Spent)
                .filter(|r| r.is_for(principal, operation, target, shown))
                .cloned()
                .collect()
        }))
    }
}
