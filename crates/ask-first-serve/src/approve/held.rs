//! What the pages hold for a browser between two requests (a page's token and its passkey
//! ceremony, a sign-in on its way to the identity provider and back), grouped by the record
//! it is for and bounded so that nobody's traffic pushes out an entry a person is using.
//!
//! Nothing is ever evicted to make room: an entry goes when it is used, when it is older than
//! its lifetime, or when its record is decided or expires. A new entry is refused instead when
//! its record already holds [`PER_RECORD`] (only someone with that record's link can open it),
//! when its principal already has [`RECORDS_PER_PRINCIPAL`] records with entries (another
//! principal's records never count), or when [`RECORDS_TOTAL`] records have entries (memory).
//! A model requesting its own pending page a thousand times therefore fills its own record's
//! slots and is refused; a page the person opened for another record stays as it was.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ask_first_core::{ApprovalRecord, RecordId};

/// The most entries one record holds at once (a person's browser, a reload, a second device).
pub(crate) const PER_RECORD: usize = 8;
/// The most records of one principal with entries at once.
pub(crate) const RECORDS_PER_PRINCIPAL: usize = 256;
/// The most records with entries at once, for everyone.
pub(crate) const RECORDS_TOTAL: usize = 4096;

/// Why a new entry was refused: its record, its principal or everyone holds the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crowded {
    /// The record holds [`PER_RECORD`] entries.
    Record,
    /// The record's principal has [`RECORDS_PER_PRINCIPAL`] records with entries.
    Principal,
    /// [`RECORDS_TOTAL`] records have entries.
    Everyone,
}

impl Crowded {
    /// What the person is told, for `principal`'s record and entries living `ttl`.
    pub(crate) fn text(self, principal: &str, ttl: Duration) -> String {
        let minutes = ttl.as_secs().div_ceil(60);
        match self {
            Self::Record => format!(
                "This question is already open in {PER_RECORD} browser windows. Use one of them (reloading it is fine), or wait up to {minutes} minutes. Nothing was changed."
            ),
            Self::Principal => format!(
                "{RECORDS_PER_PRINCIPAL} questions of `{principal}` are open on approval pages now, the most at once. Answer or decline them, or wait up to {minutes} minutes, then open this link again. Nothing was changed."
            ),
            Self::Everyone => format!(
                "The approval page holds as many open questions as it can now. Try again in a few minutes (at most {minutes}). Nothing was changed."
            ),
        }
    }
}

struct Entry<T> {
    key: String,
    at: Instant,
    value: T,
}

/// One record's entries, with its principal and when the record itself expires.
struct Group<T> {
    principal: String,
    until: Instant,
    entries: Vec<Entry<T>>,
}

impl<T> Group<T> {
    /// Drops what outlived `ttl` (and its key from `keys`); whether anything is left of a
    /// record still open. When nothing is, every key of the group is gone from `keys`.
    fn prune(&mut self, ttl: Duration, now: Instant, keys: &mut HashMap<String, RecordId>) -> bool {
        self.entries.retain(|e| {
            let live = now.duration_since(e.at) < ttl;
            if !live {
                keys.remove(&e.key);
            }
            live
        });
        let open = now < self.until && !self.entries.is_empty();
        if !open {
            for entry in &self.entries {
                keys.remove(&entry.key);
            }
        }
        open
    }
}

struct Table<T> {
    records: HashMap<RecordId, Group<T>>,
    /// Which record each key is for.
    keys: HashMap<String, RecordId>,
}

impl<T> Table<T> {
    /// Drops every entry that outlived `ttl` and every record past its expiry.
    fn prune_all(&mut self, ttl: Duration, now: Instant) {
        let Self { records, keys } = self;
        records.retain(|_, group| group.prune(ttl, now, keys));
    }

    fn of_principal(&self, principal: &str) -> usize {
        self.records
            .values()
            .filter(|g| g.principal == principal)
            .count()
    }

    /// The live entry `key`, its record's group and its place there.
    fn find(&mut self, key: &str, ttl: Duration) -> Option<(RecordId, &mut Group<T>, usize)> {
        let id = *self.keys.get(key)?;
        let now = Instant::now();
        let group = self.records.get_mut(&id)?;
        let at = group.entries.iter().position(|e| e.key == key)?;
        let live = now < group.until && now.duration_since(group.entries[at].at) < ttl;
        live.then_some((id, group, at))
    }
}

/// Entries of type `T` by key, each for one record, living `ttl` at most.
pub(crate) struct Held<T> {
    ttl: Duration,
    table: Mutex<Table<T>>,
}

impl<T> Held<T> {
    /// An empty table whose entries live `ttl`.
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            table: Mutex::new(Table {
                records: HashMap::new(),
                keys: HashMap::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table<T>> {
        match self.table.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Holds `value` under `key` for `record` (at the Unix time `now`), unless the bounds are
    /// reached; nothing already held is ever pushed out.
    pub(crate) fn insert(
        &self,
        record: &ApprovalRecord,
        now: u64,
        key: String,
        value: T,
    ) -> Result<(), Crowded> {
        let at = Instant::now();
        let left = Duration::from_secs(record.expires_at.saturating_sub(now));
        let mut table = self.lock();
        let Table { records, keys } = &mut *table;
        let open = match records.get_mut(&record.id) {
            Some(group) => group.prune(self.ttl, at, keys),
            None => false,
        };
        if open {
            let held = table.records.get(&record.id).map_or(0, |g| g.entries.len());
            if held >= PER_RECORD {
                return Err(Crowded::Record);
            }
        } else {
            table.records.remove(&record.id);
            if table.of_principal(&record.principal) >= RECORDS_PER_PRINCIPAL
                || table.records.len() >= RECORDS_TOTAL
            {
                table.prune_all(self.ttl, at);
            }
            if table.of_principal(&record.principal) >= RECORDS_PER_PRINCIPAL {
                return Err(Crowded::Principal);
            }
            if table.records.len() >= RECORDS_TOTAL {
                return Err(Crowded::Everyone);
            }
        }
        let group = table.records.entry(record.id).or_insert_with(|| Group {
            principal: record.principal.clone(),
            until: at + left,
            entries: Vec::new(),
        });
        group.entries.push(Entry {
            key: key.clone(),
            at,
            value,
        });
        table.keys.insert(key, record.id);
        Ok(())
    }

    /// Whether `key` is a live entry for `record`; if so it lives `ttl` again from now (the
    /// same browser opened the same page again).
    pub(crate) fn renew(&self, record: &RecordId, key: &str) -> bool {
        let mut table = self.lock();
        match table.find(key, self.ttl) {
            Some((id, group, at)) if id == *record => {
                group.entries[at].at = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Changes the live entry `key` with `change`; `None` when there is none.
    pub(crate) fn update<R>(
        &self,
        key: &str,
        change: impl FnOnce(&RecordId, &mut T) -> R,
    ) -> Option<R> {
        let mut table = self.lock();
        let (id, group, at) = table.find(key, self.ttl)?;
        Some(change(&id, &mut group.entries[at].value))
    }

    /// Takes the live entry `key` out, with its record; `None` when there is none.
    pub(crate) fn take(&self, key: &str) -> Option<(RecordId, T)> {
        let mut table = self.lock();
        let id = table.keys.remove(key)?;
        let now = Instant::now();
        let group = table.records.get_mut(&id)?;
        let at = group.entries.iter().position(|e| e.key == key)?;
        let entry = group.entries.swap_remove(at);
        let live = now < group.until && now.duration_since(entry.at) < self.ttl;
        if group.entries.is_empty() {
            table.records.remove(&id);
        }
        live.then_some((id, entry.value))
    }

    /// Drops every entry of `record` (it was decided: its pages can decide nothing more).
    pub(crate) fn forget(&self, record: &RecordId) {
        let mut table = self.lock();
        if let Some(group) = table.records.remove(record) {
            for entry in group.entries {
                table.keys.remove(&entry.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_first_core::ApprovalRecord;

    const TTL: Duration = Duration::from_secs(900);
    const NOW: u64 = 1_000_000;

    fn record(principal: &str) -> ApprovalRecord {
        let json = serde_json::json!({
            "id": RecordId::random().to_string(), "principal": principal, "holder": principal,
            "tool": "t", "operation": "op", "target": "00", "shown": "00", "question": "Q",
            "route": "page", "expires_at": NOW + 600, "state": "pending",
        });
        ApprovalRecord::from_json(&json).expect("a record")
    }

    fn key(n: usize) -> String {
        format!("k{n}")
    }

    #[test]
    fn another_records_flood_leaves_the_persons_entry_and_is_refused_at_its_own_bound() {
        let held = Held::new(TTL);
        let (person, model) = (record("local"), record("local"));
        held.insert(&person, NOW, "person".into(), 1).expect("held");
        let mut refused = 0;
        for n in 0..1000 {
            match held.insert(&model, NOW, key(n), 0) {
                Ok(()) => {}
                Err(why) => {
                    assert_eq!(why, Crowded::Record);
                    refused += 1;
                }
            }
        }
        assert_eq!(refused, 1000 - PER_RECORD);
        // The person's entry is where it was, and works once.
        assert!(held.renew(&person.id, "person"));
        assert_eq!(held.take("person"), Some((person.id, 1)));
        assert_eq!(held.take("person"), None);
        // Positive control: the model's first entries are held too.
        assert_eq!(held.take(&key(0)), Some((model.id, 0)));
    }

    #[test]
    fn a_principals_records_are_bounded_without_touching_another_principals() {
        let held = Held::new(TTL);
        let alice = record("token:alice");
        held.insert(&alice, NOW, "alice".into(), 1).expect("held");
        for n in 0..RECORDS_PER_PRINCIPAL {
            held.insert(&record("token:mallory"), NOW, key(n), 0)
                .expect("under the bound");
        }
        let one_more = held.insert(&record("token:mallory"), NOW, "over".into(), 0);
        assert_eq!(one_more, Err(Crowded::Principal));
        // alice's entry stays, and alice opens another record's page.
        assert!(held.renew(&alice.id, "alice"));
        held.insert(&record("token:alice"), NOW, "alice2".into(), 2)
            .expect("another principal's bound does not apply");
        // A record decided frees its slot.
        let (mallory, _) = held.take(&key(0)).expect("held");
        held.forget(&mallory);
        held.insert(&record("token:mallory"), NOW, "again".into(), 0)
            .expect("room again");
    }

    #[test]
    fn everyone_together_is_bounded() {
        let held = Held::new(TTL);
        for n in 0..RECORDS_TOTAL {
            let principal = format!("p{}", n % (RECORDS_TOTAL / RECORDS_PER_PRINCIPAL + 1));
            held.insert(&record(&principal), NOW, key(n), 0)
                .expect("under the bound");
        }
        assert_eq!(
            held.insert(&record("newcomer"), NOW, "x".into(), 0),
            Err(Crowded::Everyone)
        );
    }

    #[test]
    fn entries_go_with_their_lifetime_or_their_records_expiry() {
        let short = Held::new(Duration::ZERO);
        let open = record("local");
        short.insert(&open, NOW, "k".into(), 0).expect("held");
        assert!(!short.renew(&open.id, "k"));
        assert_eq!(short.update("k", |_, v| *v), None);
        assert_eq!(short.take("k"), None);
        // A record past its expiry holds nothing.
        let held = Held::new(TTL);
        let late = record("local");
        held.insert(&late, late.expires_at, "k".into(), 0)
            .expect("held");
        assert_eq!(held.take("k"), None);
        // Positive control: the same on a record with time left.
        held.insert(&open, NOW, "k2".into(), 5).expect("held");
        assert_eq!(held.update("k2", |id, v| (*id, *v)), Some((open.id, 5)));
        assert!(!held.renew(&late.id, "k2"), "renewed for another record");
    }

    #[test]
    fn keys_of_entries_gone_are_not_kept() {
        let held = Held::new(Duration::from_millis(30));
        let open = record("local");
        for n in 0..PER_RECORD {
            held.insert(&open, NOW, key(n), 0).expect("held");
        }
        assert_eq!(held.lock().keys.len(), PER_RECORD);
        std::thread::sleep(Duration::from_millis(40));
        // Outlived: the record's slots are free again, and the old keys are gone.
        held.insert(&open, NOW, "fresh".into(), 1)
            .expect("room again");
        assert_eq!(held.lock().keys.len(), 1);
        assert_eq!(held.take("fresh"), Some((open.id, 1)));
        assert!(held.lock().keys.is_empty() && held.lock().records.is_empty());
    }

    #[test]
    fn the_refusals_say_what_to_do() {
        for why in [Crowded::Record, Crowded::Principal, Crowded::Everyone] {
            let text = why.text("local", TTL);
            assert!(
                text.contains("15 minutes") || text.contains("at most 15"),
                "{text}"
            );
            assert!(text.contains("Nothing was changed"), "{text}");
        }
        assert!(Crowded::Principal.text("local", TTL).contains("`local`"));
    }
}
