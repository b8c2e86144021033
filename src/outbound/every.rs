//! A check that is due at most once per period, as client-go bounds its re-reads of a CA file
//! (`transport/ca_rotation.go`: once per 5 minutes) and of a token file
//! (`transport/token_source.go`: a read token is kept for a minute less a 10 s leeway). Between
//! checks, asking costs a clock read and an atomic load: no file system access on the request
//! path.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::token::cache::Clock;

pub(crate) struct Every {
    clock: Arc<dyn Clock>,
    base: Instant,
    period: u64,
    /// When the next check is due, in nanoseconds after `base`.
    next: AtomicU64,
}

impl std::fmt::Debug for Every {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Every")
            .field("period", &Duration::from_nanos(self.period))
            .finish_non_exhaustive()
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Every {
    /// The first check is due one `period` from now (the file was just read).
    pub(crate) fn new(clock: Arc<dyn Clock>, period: Duration) -> Self {
        let base = clock.now();
        let period = nanos(period);
        Self {
            clock,
            base,
            period,
            next: AtomicU64::new(period),
        }
    }

    /// Whether a check is due now. `true` for one caller only: the one that takes the check
    /// moves the next one a period on, so concurrent callers do not all read the file.
    pub(crate) fn due(&self) -> bool {
        let now = nanos(self.clock.now().saturating_duration_since(self.base));
        let next = self.next.load(Ordering::Acquire);
        now >= next
            && self
                .next
                .compare_exchange(
                    next,
                    now.saturating_add(self.period),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
    }

    /// Makes the next [`due`](Self::due) true, whenever it comes.
    pub(crate) fn expire(&self) {
        self.next.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::cache::ManualClock;

    #[test]
    fn due_once_per_period_and_after_expire() {
        let clock = Arc::new(ManualClock::new());
        let every = Every::new(clock.clone(), Duration::from_secs(60));
        // (step, clock advance in seconds, due)
        let steps: &[(&str, u64, bool)] = &[
            ("just built", 0, false),
            ("before the period", 59, false),
            ("at the period", 1, true),
            ("asked again at once", 0, false),
            ("a period after the check", 60, true),
            ("late: counted from the check", 90, true),
            ("less than a period after that", 59, false),
        ];
        for (step, advance, want) in steps {
            clock.advance(Duration::from_secs(*advance));
            assert_eq!(every.due(), *want, "{step}");
        }
        every.expire();
        assert!(every.due(), "expired");
        assert!(!every.due(), "expired: once");
    }
}
