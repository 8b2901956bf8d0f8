//! When Opengist answered a read, as far as its answer proves: [`ReadTime`].
//!
//! Opengist keeps `updated_at` in whole seconds, so a read tells whether a gist may still
//! change within the second it shows only when it is known to have begun in a later second.
//! The client reports this fact with every read that needs it; the cache decides with it what
//! may be kept (see `cache/`).

use std::time::Duration;

use chrono::{DateTime, Utc};

/// The earliest second at which Opengist can have begun answering a read: the answer's `Date`
/// (whole seconds) less the time the request took, rounded up. Assumes Opengist's clock does
/// not go backwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTime {
    began_no_earlier_than: i64,
}

impl ReadTime {
    /// From a `Date` header (`Tue, 01 Dec 2026 08:28:32 GMT`) and the time from sending the
    /// request to its answer's headers. `None` when the header is missing or unreadable.
    pub fn from_date_header(date: Option<&str>, elapsed: Duration) -> Option<Self> {
        let date = DateTime::parse_from_rfc2822(date?.trim()).ok()?;
        let elapsed_secs = elapsed.as_secs() + u64::from(elapsed.subsec_nanos() > 0);
        let elapsed_secs = i64::try_from(elapsed_secs).ok()?;
        Some(Self {
            began_no_earlier_than: date.timestamp().checked_sub(elapsed_secs)?,
        })
    }

    /// Whether a gist this read saw at `updated_at` cannot have changed again within that same
    /// second after the read: the read began in a later second.
    pub fn settles(&self, updated_at: DateTime<Utc>) -> bool {
        self.began_no_earlier_than > updated_at.timestamp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("date")
            .with_timezone(&Utc)
    }

    /// A read that Opengist began answering at `date` (an HTTP date) and took `ms`.
    fn read_at(date: &str, ms: u64) -> Option<ReadTime> {
        ReadTime::from_date_header(Some(date), Duration::from_millis(ms))
    }

    #[test]
    fn read_times_come_from_the_date_header_less_the_round_trip() {
        let t = read_at("Tue, 01 Dec 2026 08:28:32 GMT", 0).expect("parsed");
        assert!(t.settles(at("2026-12-01T08:28:31Z")));
        assert!(!t.settles(at("2026-12-01T08:28:32Z")));
        // 1 ms of round trip: Opengist may have begun in the second before.
        let t = read_at("Tue, 01 Dec 2026 08:28:32 GMT", 1).expect("parsed");
        assert!(!t.settles(at("2026-12-01T08:28:31Z")));
        assert!(t.settles(at("2026-12-01T08:28:30Z")));
        assert_eq!(
            ReadTime::from_date_header(None, Duration::ZERO),
            None,
            "no Date header: nothing is proven"
        );
        assert_eq!(
            ReadTime::from_date_header(Some("yesterday"), Duration::ZERO),
            None
        );
    }
}
