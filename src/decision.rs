//! [`Decision`]: the answer to "may this request go ahead?", with the numbers for response
//! headers computed only when asked for.

use std::fmt;
use std::time::Duration;

/// The outcome of a check: allowed or denied, plus `remaining`, `retry_after`, `reset_after`
/// and `wait`, computed on demand.
///
/// A check only records the algorithm's raw state and time; the extra numbers are derived
/// when one of their accessors is called, so a caller that only asks [`is_allowed`] pays for
/// nothing else (with the check inlined, the compiler drops the unused fields entirely).
///
/// [`is_allowed`]: Decision::is_allowed
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::FixedWindow, clock::ManualClock};
///
/// let clock = ManualClock::new();
/// let limiter = Limiter::<FixedWindow, _>::with_clock(Quota::per_minute(2), clock.clone())?;
/// clock.advance(Duration::from_secs(15));
/// assert_eq!(limiter.check().remaining(), 1);
/// assert_eq!(limiter.check().remaining(), 0);
/// let denied = limiter.check();
/// assert!(denied.is_denied());
/// assert_eq!(denied.retry_after(), Some(Duration::from_secs(45))); // the window resets at 1:00
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Decision {
    allowed: bool,
    table_full: bool,
    limit: u32,
    cost: u32,
    small: u32,
    words: [u64; 4],
    explain: fn(&Decision) -> Details,
}

/// How long a denial by a full keyed table ([`Decision::is_table_full`]) tells its caller
/// to wait before trying again: one second, what [`Decision::retry_hint`] answers for it,
/// the Node and Python packages report as its `retryAfter` / `retry_after`, and the HTTP
/// layer sends as its `Retry-After`.
///
/// The engine cannot know when a key will leave a full table (idle keys are dropped as it
/// goes, live ones stay), so [`Decision::retry_after`] is `None` for such a denial; a caller
/// that sleeps for its retry, or writes it into a header, still needs a time, and a second
/// spaces the retries of a server at capacity without holding clients back long.
pub const TABLE_FULL_RETRY_AFTER: Duration = Duration::from_secs(1);

/// All of a decision's numbers at once ([`Decision::numbers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Numbers {
    /// See [`Decision::remaining`].
    pub remaining: u32,
    /// See [`Decision::retry_after`].
    pub retry_after: Option<Duration>,
    /// See [`Decision::reset_after`].
    pub reset_after: Duration,
    /// See [`Decision::wait`].
    pub wait: Duration,
}

/// The derived numbers of a decision, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Details {
    pub(crate) remaining: u32,
    /// Only read for denied decisions.
    pub(crate) retry_after: u64,
    pub(crate) reset_after: u64,
    pub(crate) wait: u64,
}

impl Decision {
    /// A decision whose details `explain` derives later from `words` and `small`, which hold
    /// whatever raw state, time and parameters that algorithm needs.
    #[inline]
    pub(crate) fn lazy(
        allowed: bool,
        limit: u32,
        cost: u32,
        small: u32,
        words: [u64; 4],
        explain: fn(&Decision) -> Details,
    ) -> Decision {
        Decision {
            allowed,
            table_full: false,
            limit,
            cost,
            small,
            words,
            explain,
        }
    }

    /// A decision made elsewhere, from its numbers: for a [`Backend`](crate::backend::Backend)
    /// outside this crate. `retry_after` is only kept for a denial.
    pub fn new(
        allowed: bool,
        limit: u32,
        remaining: u32,
        retry_after: Option<Duration>,
        reset_after: Duration,
        wait: Duration,
    ) -> Decision {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Decision::eager(
            allowed,
            limit,
            Details {
                remaining,
                retry_after: retry_after.map_or(0, nanos),
                reset_after: nanos(reset_after),
                wait: nanos(wait),
            },
        )
    }

    /// A decision whose details are already known.
    pub(crate) fn eager(allowed: bool, limit: u32, details: Details) -> Decision {
        Decision::lazy(
            allowed,
            limit,
            0,
            details.remaining,
            [details.retry_after, details.reset_after, details.wait, 0],
            |d| Details {
                remaining: d.small,
                retry_after: d.words[0],
                reset_after: d.words[1],
                wait: d.words[2],
            },
        )
    }

    /// A denial of a cost above the capacity, which no wait can admit: only a `check_n` that
    /// measured its cost before a reconfiguration lowered the capacity gets one. It has the
    /// numbers of `standing` (a zero-cost decision now) and a `retry_after` of forever.
    pub(crate) fn beyond_capacity(standing: &Decision) -> Decision {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Decision::eager(
            false,
            standing.limit(),
            Details {
                remaining: standing.remaining(),
                retry_after: u64::MAX,
                reset_after: nanos(standing.reset_after()),
                wait: 0,
            },
        )
    }

    /// A denial because a keyed table is full of live keys and cannot take a new one.
    pub(crate) fn table_full(limit: u32) -> Decision {
        Decision {
            table_full: true,
            ..Decision::eager(false, limit, Details::default())
        }
    }

    /// The raw words an algorithm stored.
    #[inline]
    pub(crate) fn words(&self) -> &[u64; 4] {
        &self.words
    }

    /// The algorithm-specific small parameter stored with the words.
    #[inline]
    pub(crate) fn small(&self) -> u32 {
        self.small
    }

    /// The cost that was checked.
    #[inline]
    pub(crate) fn cost(&self) -> u32 {
        self.cost
    }

    fn details(&self) -> Details {
        (self.explain)(self)
    }

    /// True when the request may go ahead (and, for a check, its cost was consumed).
    #[inline]
    pub fn is_allowed(&self) -> bool {
        self.allowed
    }

    /// True when the request must not go ahead; nothing was consumed.
    #[inline]
    pub fn is_denied(&self) -> bool {
        !self.allowed
    }

    /// True when a keyed limiter denied the request because its table was full of live keys
    /// and could not take a new one (see the keyed limiter's `max_keys`). Such a decision has
    /// no `retry_after`.
    #[inline]
    pub fn is_table_full(&self) -> bool {
        self.table_full
    }

    /// The quota's limit (requests per period), for a `RateLimit-Limit` header.
    #[inline]
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Every number at once, from one computation (each accessor computes them anew): for
    /// callers that need several, such as response headers.
    pub fn numbers(&self) -> Numbers {
        let details = self.details();
        let retry_after =
            (!self.allowed && !self.table_full).then(|| Duration::from_nanos(details.retry_after));
        let wait = if self.allowed { details.wait } else { 0 };
        Numbers {
            remaining: details.remaining,
            retry_after,
            reset_after: Duration::from_nanos(details.reset_after),
            wait: Duration::from_nanos(wait),
        }
    }

    /// How many more single requests would be allowed right now, after this decision.
    pub fn remaining(&self) -> u32 {
        self.details().remaining
    }

    /// For a denied request, how long until the same request would be allowed (it is allowed
    /// at exactly `now + retry_after`, not a nanosecond earlier, if nothing else consumes in
    /// between); `None` when allowed, or when the denial was [`is_table_full`].
    ///
    /// [`is_table_full`]: Decision::is_table_full
    pub fn retry_after(&self) -> Option<Duration> {
        if self.allowed || self.table_full {
            return None;
        }
        Some(Duration::from_nanos(self.details().retry_after))
    }

    /// When to try again, for every denial: [`retry_after`](Self::retry_after), or
    /// [`TABLE_FULL_RETRY_AFTER`] for a denial by a full table (which has no `retry_after`);
    /// `None` when allowed. What the Node and Python packages report as a decision's
    /// `retryAfter` / `retry_after`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sluicegate::{KeyedLimiter, Quota, TABLE_FULL_RETRY_AFTER};
    ///
    /// let keyed = KeyedLimiter::<u64>::builder(Quota::per_minute(1)).shards(1).max_keys(1).build()?;
    /// assert_eq!(keyed.check(&1).retry_hint(), None);        // allowed
    /// let limited = keyed.check(&1);                          // denied by its limit
    /// assert_eq!(limited.retry_hint(), limited.retry_after());
    /// let full = keyed.check(&2);                             // a new key, the table full
    /// assert!(full.is_table_full() && full.retry_after().is_none());
    /// assert_eq!(full.retry_hint(), Some(TABLE_FULL_RETRY_AFTER));
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn retry_hint(&self) -> Option<Duration> {
        if self.table_full {
            return Some(TABLE_FULL_RETRY_AFTER);
        }
        self.retry_after()
    }

    /// How long until the state is fully replenished (the bucket is full, the window resets,
    /// the log is empty); zero when it already is.
    pub fn reset_after(&self) -> Duration {
        Duration::from_nanos(self.details().reset_after)
    }

    /// For [`LeakyBucket`](crate::algorithm::LeakyBucket), how long an admitted request must
    /// wait for its slot in the smoothed output; zero for every other algorithm and for
    /// denied requests.
    pub fn wait(&self) -> Duration {
        if !self.allowed {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.details().wait)
    }
}

/// Two decisions are equal when they say the same: allowed or not (and why), the same limit
/// and the same numbers, however each was computed.
impl PartialEq for Decision {
    fn eq(&self, other: &Self) -> bool {
        (self.allowed, self.table_full, self.limit)
            == (other.allowed, other.table_full, other.limit)
            && self.numbers() == other.numbers()
    }
}

impl Eq for Decision {}

impl fmt::Debug for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Decision");
        s.field("allowed", &self.allowed);
        if self.table_full {
            s.field("table_full", &true);
        }
        s.field("limit", &self.limit)
            .field("remaining", &self.remaining())
            .field("retry_after", &self.retry_after())
            .field("reset_after", &self.reset_after())
            .field("wait", &self.wait())
            .finish()
    }
}
