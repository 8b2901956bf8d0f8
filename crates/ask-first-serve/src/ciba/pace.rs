//! The bound on new requests per person: at most so many in any minute (a sliding window),
//! so that a model alone, calling about ever new targets, cannot make the person's device ask
//! without end. Per process: replicas each keep their own count.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The window the bound counts in.
const WINDOW: Duration = Duration::from_secs(60);
/// How many people's windows are kept before the empty ones are swept.
const SWEEP_PAST: usize = 1024;

/// The requests sent to each person's device in the last minute.
pub(super) struct Pace {
    per_minute: usize,
    sent: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl Pace {
    /// At most `per_minute` requests per person in any minute.
    pub(super) fn new(per_minute: u32) -> Self {
        Self {
            per_minute: per_minute.max(1) as usize,
            sent: Mutex::default(),
        }
    }

    /// Counts a request to `subject`'s device at `now`, or, past the bound, how long until
    /// the oldest counted one leaves the window.
    pub(super) fn admit(&self, subject: &str, now: Instant) -> Result<(), Duration> {
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        if sent.len() > SWEEP_PAST {
            sent.retain(|_, times| times.back().is_some_and(|last| now - *last < WINDOW));
        }
        let times = sent.entry(subject.to_owned()).or_default();
        while times.front().is_some_and(|first| now - *first >= WINDOW) {
            times.pop_front();
        }
        if times.len() >= self.per_minute {
            let oldest = times.front().copied().unwrap_or(now);
            return Err(WINDOW.saturating_sub(now - oldest));
        }
        times.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_gets_at_most_the_bound_in_any_minute_and_others_are_not_counted() {
        let pace = Pace::new(3);
        let start = Instant::now();
        for i in 0..3 {
            assert!(pace.admit("alice", start + Duration::from_secs(i)).is_ok());
        }
        let wait = pace
            .admit("alice", start + Duration::from_secs(10))
            .expect_err("past the bound");
        assert_eq!(
            wait,
            Duration::from_secs(50),
            "until the first leaves the window"
        );
        // The control: another person is not affected.
        assert!(pace.admit("bob", start + Duration::from_secs(10)).is_ok());
        // A minute after the first, one place is free again, and only one.
        assert!(pace.admit("alice", start + Duration::from_secs(60)).is_ok());
        assert!(
            pace.admit("alice", start + Duration::from_secs(60))
                .is_err()
        );
    }

    #[test]
    fn quiet_people_are_swept() {
        let pace = Pace::new(1);
        let start = Instant::now();
        for i in 0..=SWEEP_PAST {
            pace.admit(&format!("p{i}"), start).expect("first");
        }
        pace.admit("late", start + WINDOW).expect("first");
        let sent = pace.sent.lock().expect("lock");
        assert!(sent.len() <= 2, "{}", sent.len());
    }
}
