//! [`Snapshot`] and [`KeyState`]: a limiter's figures and one key's numbers, for dashboards.

use super::observed::Observed;
use std::time::Duration;

/// One limiter's figures at one moment: its totals, keys held and memory, as far as it
/// reports them (see [`Observed`]). With the `serde` feature it serializes, for a status
/// endpoint.
///
/// ```
/// use sluicegate::telemetry::Snapshot;
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let per_user = KeyedLimiter::<u64>::new(Quota::per_second(1))?;
/// per_user.check(&1);
/// per_user.check(&1);
/// per_user.check(&2);
/// let snapshot = Snapshot::of("per-user", &per_user);
/// assert_eq!(snapshot.allowed, Some(2));
/// assert_eq!(snapshot.denied, Some(1));
/// assert_eq!(snapshot.keys, Some(2));
/// assert_eq!(snapshot.quota, Some(Quota::per_second(1)));
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Snapshot {
    /// The name it was given.
    pub limiter: String,
    /// The quota every key gets, when there is one.
    pub quota: Option<crate::quota::Quota>,
    /// Checks allowed so far.
    pub allowed: Option<u64>,
    /// Checks denied so far.
    pub denied: Option<u64>,
    /// Keys currently held.
    pub keys: Option<usize>,
    /// Bytes the limiter holds.
    pub memory_bytes: Option<usize>,
    /// Idle keys dropped by sweeps so far.
    pub swept_keys: Option<u64>,
    /// Requests denied because the key table was full.
    pub table_full: Option<u64>,
}

impl Snapshot {
    /// Reads `limiter`'s figures now, under `name`.
    pub fn of(name: impl Into<String>, limiter: &(impl Observed + ?Sized)) -> Snapshot {
        let counts = limiter.counts();
        Snapshot {
            limiter: name.into(),
            quota: limiter.quota(),
            allowed: counts.map(|counts| counts.allowed),
            denied: counts.map(|counts| counts.denied),
            keys: limiter.keys(),
            memory_bytes: limiter.memory_bytes(),
            swept_keys: limiter.swept_keys(),
            table_full: limiter.table_full(),
        }
    }
}

/// One key's numbers now, read without consuming anything: what a dashboard shows for a
/// user or a token. With the `serde` feature it serializes, durations as fractional seconds.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::telemetry::KeyState;
/// use sluicegate::algorithm::Gcra;
/// use sluicegate::clock::ManualClock;
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let clock = ManualClock::new();
/// let per_user = KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_minute(2), clock)?;
/// per_user.check("alice");
/// // Through the backend seam: answered at once by in-process limiters, awaited for Redis.
/// let alice = KeyState::peek(&per_user, "alice").now().unwrap()?;
/// assert!(alice.allowed);
/// assert_eq!(alice.remaining, 1);
/// assert_eq!(alice.reset_after, Duration::from_secs(30));
/// per_user.check("alice");
/// let alice = KeyState::peek(&per_user, "alice").now().unwrap()?;
/// assert_eq!((alice.allowed, alice.remaining), (false, 0));
/// assert_eq!(alice.retry_after, Some(Duration::from_secs(30)));
/// // Peeking consumed nothing, and a key never seen is not stored.
/// assert_eq!(KeyState::peek(&per_user, "bob").now().unwrap()?.remaining, 2);
/// assert_eq!((per_user.allowed(), per_user.len()), (2, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct KeyState {
    /// Whether one more request would be allowed now.
    pub allowed: bool,
    /// The quota's limit.
    pub limit: u32,
    /// Single requests admissible now.
    pub remaining: u32,
    /// When one more request would be denied, how long until it would be allowed.
    #[cfg_attr(feature = "serde", serde(serialize_with = "seconds::optional"))]
    pub retry_after: Option<Duration>,
    /// How long until the key is fully replenished.
    #[cfg_attr(feature = "serde", serde(serialize_with = "seconds::plain"))]
    pub reset_after: Duration,
}

#[cfg(feature = "serde")]
mod seconds {
    use serde::Serializer;
    use std::time::Duration;

    pub(super) fn plain<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(value.as_secs_f64())
    }

    pub(super) fn optional<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => serializer.serialize_some(&value.as_secs_f64()),
            None => serializer.serialize_none(),
        }
    }
}
