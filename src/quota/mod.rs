//! [`Quota`]: `limit` requests per `period`, with a `burst`.

mod format;
mod parse;
mod units;

use crate::error::QuotaError;
use std::time::Duration;

pub(crate) const NANOS_PER_SECOND: u64 = 1_000_000_000;

/// `limit` requests per `period`, admitting up to `burst` at once.
///
/// Every algorithm reads these three numbers: the rate algorithms (GCRA, token bucket, leaky
/// bucket) refill at `limit / period` and hold `burst`; the window algorithms admit `limit`
/// per window of `period` and ignore `burst`. `burst` defaults to `limit`. An *anchored*
/// quota ([`Quota::anchored`], `"100/minute anchored"`) asks the fixed window to start each
/// key's window at that key's first request instead of at the clock's edges.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::Quota;
///
/// let a = Quota::per_second(100).with_burst(20);
/// let b = Quota::new(100, Duration::from_secs(1))?.with_burst(20);
/// let c: Quota = "100/s burst 20".parse()?;
/// assert_eq!(a, b);
/// assert_eq!(b, c);
/// assert_eq!(c.to_string(), "100/second burst 20");
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Quota {
    limit: u32,
    burst: u32,
    period_ns: u64,
    anchored: bool,
}

impl Quota {
    /// The longest period a quota may have: 2^58 ns, a little over 9 years. Longer periods
    /// would leave no room in the packed state for the counts that go with them.
    pub const MAX_PERIOD: Duration = Duration::from_nanos(1 << 58);

    /// `limit` requests per `period`, burst `limit`.
    ///
    /// Fails with a [`QuotaError`] on a zero limit, a zero period or a period longer than
    /// [`Quota::MAX_PERIOD`].
    pub fn new(limit: u32, period: Duration) -> Result<Quota, QuotaError> {
        if limit == 0 {
            return Err(QuotaError::ZeroLimit);
        }
        if period.is_zero() {
            return Err(QuotaError::ZeroPeriod);
        }
        if period > Self::MAX_PERIOD {
            return Err(QuotaError::PeriodTooLong {
                period,
                max: Self::MAX_PERIOD,
            });
        }
        Ok(Quota {
            limit,
            burst: limit,
            period_ns: period.as_nanos() as u64,
            anchored: false,
        })
    }

    /// `limit` requests per second.
    ///
    /// # Panics
    /// If `limit` is 0; use [`Quota::new`] for a fallible constructor.
    pub fn per_second(limit: u32) -> Quota {
        Self::per_unit(limit, NANOS_PER_SECOND, "per_second")
    }

    /// `limit` requests per minute.
    ///
    /// # Panics
    /// If `limit` is 0; use [`Quota::new`] for a fallible constructor.
    pub fn per_minute(limit: u32) -> Quota {
        Self::per_unit(limit, 60 * NANOS_PER_SECOND, "per_minute")
    }

    /// `limit` requests per hour.
    ///
    /// # Panics
    /// If `limit` is 0; use [`Quota::new`] for a fallible constructor.
    pub fn per_hour(limit: u32) -> Quota {
        Self::per_unit(limit, 3600 * NANOS_PER_SECOND, "per_hour")
    }

    /// `limit` requests per day.
    ///
    /// # Panics
    /// If `limit` is 0; use [`Quota::new`] for a fallible constructor.
    pub fn per_day(limit: u32) -> Quota {
        Self::per_unit(limit, 86_400 * NANOS_PER_SECOND, "per_day")
    }

    fn per_unit(limit: u32, period_ns: u64, name: &str) -> Quota {
        assert!(
            limit > 0,
            "Quota::{name}: the limit must be at least 1 (use Quota::new for a fallible constructor)"
        );
        Quota {
            limit,
            burst: limit,
            period_ns,
            anchored: false,
        }
    }

    /// The same quota admitting up to `burst` requests at once.
    ///
    /// # Panics
    /// If `burst` is 0; use [`Quota::try_with_burst`] for a fallible version.
    pub fn with_burst(self, burst: u32) -> Quota {
        assert!(
            burst > 0,
            "Quota::with_burst: the burst must be at least 1 (use Quota::try_with_burst for a fallible version)"
        );
        Quota { burst, ..self }
    }

    /// The same quota admitting up to `burst` requests at once, or [`QuotaError::ZeroBurst`].
    pub fn try_with_burst(self, burst: u32) -> Result<Quota, QuotaError> {
        if burst == 0 {
            return Err(QuotaError::ZeroBurst);
        }
        Ok(Quota { burst, ..self })
    }

    /// The same quota with each key's window anchored at its first request: the window
    /// runs from that request for one `period`, and the next request after it ends starts a
    /// new one (what express-rate-limit's `windowMs` and a Redis `INCR` + `EXPIRE` do). Only
    /// [`FixedWindow`](crate::algorithm::FixedWindow) reads it; every other algorithm refuses
    /// an anchored quota with [`QuotaError::Unsupported`] (GCRA and the buckets have no
    /// windows to anchor). Without it, windows are aligned to the clock's edges for everyone.
    ///
    /// ```
    /// use sluicegate::Quota;
    ///
    /// let q = Quota::per_minute(100).anchored();
    /// assert!(q.is_anchored());
    /// assert_eq!(q.to_string(), "100/minute anchored");
    /// assert_eq!("100/minute anchored".parse::<Quota>()?, q);
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn anchored(self) -> Quota {
        Quota {
            anchored: true,
            ..self
        }
    }

    /// True when windows start at each key's first request ([`Quota::anchored`]).
    pub fn is_anchored(&self) -> bool {
        self.anchored
    }

    /// Refuses an anchored quota for `algorithm`, which has no window to anchor.
    pub(crate) fn refuse_anchored(&self, algorithm: &'static str) -> Result<(), QuotaError> {
        if !self.anchored {
            return Ok(());
        }
        Err(QuotaError::Unsupported {
            algorithm,
            reason: "an anchored window is an option of FixedWindow; this algorithm has no \
                     windows to anchor (drop 'anchored', or use fixed-window)"
                .to_string(),
        })
    }

    /// Requests admitted per period.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Requests admitted at once (the bucket's capacity); equal to `limit` unless set.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The period over which `limit` requests are admitted.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period_ns)
    }

    /// The period in nanoseconds.
    pub(crate) fn period_nanos(&self) -> u64 {
        self.period_ns
    }

    /// Parses several quotas in one string, as `limits`, slowapi and Flask-Limiter users write
    /// them: `"5/minute; 100/hour"` (also separated by `|`, or by `,` before a limit). A
    /// request is meant to pass all of them: give each to its own limiter and check them as
    /// one ([`Composite`](crate::Composite), or one limit each in the HTTP layer, which
    /// decides all-or-nothing). One quota alone parses too.
    ///
    /// ```
    /// use sluicegate::Quota;
    /// use std::time::Duration;
    ///
    /// let quotas = Quota::parse_many("5 per minute; 100/hour, burst 10 | 1000/month")?;
    /// assert_eq!(quotas.len(), 3);
    /// assert_eq!(quotas[1].burst(), 10);
    /// assert_eq!(quotas[2].period(), Duration::from_secs(30 * 86_400)); // a month: 30 days
    /// assert!(Quota::parse_many("5/minute; 0/hour").is_err());
    /// # Ok::<(), sluicegate::QuotaError>(())
    /// ```
    pub fn parse_many(input: &str) -> Result<Vec<Quota>, QuotaError> {
        parse::parse_many(input)
    }

    /// A quota from parts already validated (by a quota that had them).
    pub(crate) fn from_parts(limit: u32, burst: u32, period_ns: u64, anchored: bool) -> Quota {
        Quota {
            limit,
            burst,
            period_ns,
            anchored,
        }
    }
}

impl std::str::FromStr for Quota {
    type Err = QuotaError;

    /// Parses `"100/s"`, `"100/second"`, `"100 per second"`, `"5/30s"`, `"10/500ms"`,
    /// `"1000/h"`, `"100/minute burst 20"`, `"5/week"`, `"5/month"` (30 days), `"5/year"`
    /// (365 days), `"100/minute anchored"` ([`Quota::anchored`]); case-insensitive, surrounding spaces allowed. Several quotas in one
    /// string: [`Quota::parse_many`].
    fn from_str(s: &str) -> Result<Quota, QuotaError> {
        parse::parse(s)
    }
}

impl std::fmt::Display for Quota {
    /// Writes the quota in the form [`FromStr`](std::str::FromStr) reads back, e.g.
    /// `"100/minute burst 20"` or `"5/30s"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        format::write_quota(f, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_agree() {
        assert_eq!(
            Quota::per_minute(5),
            Quota::new(5, Duration::from_secs(60)).unwrap()
        );
        assert_eq!(Quota::per_hour(7).period(), Duration::from_secs(3600));
        assert_eq!(Quota::per_day(1).period(), Duration::from_secs(86_400));
        assert_eq!(Quota::per_second(3).burst(), 3);
        assert_eq!(Quota::per_second(3).with_burst(9).burst(), 9);
    }

    #[test]
    fn zero_and_oversized_inputs_are_errors() {
        assert_eq!(
            Quota::new(0, Duration::from_secs(1)),
            Err(QuotaError::ZeroLimit)
        );
        assert_eq!(Quota::new(1, Duration::ZERO), Err(QuotaError::ZeroPeriod));
        assert_eq!(
            Quota::per_second(1).try_with_burst(0),
            Err(QuotaError::ZeroBurst)
        );
        let too_long = Quota::MAX_PERIOD + Duration::from_nanos(1);
        assert!(matches!(
            Quota::new(1, too_long),
            Err(QuotaError::PeriodTooLong { .. })
        ));
        assert!(Quota::new(1, Quota::MAX_PERIOD).is_ok());
    }

    #[test]
    #[should_panic(expected = "Quota::per_second: the limit must be at least 1")]
    fn per_second_zero_panics_clearly() {
        let _ = Quota::per_second(0);
    }

    #[test]
    #[should_panic(expected = "Quota::with_burst: the burst must be at least 1")]
    fn with_burst_zero_panics_clearly() {
        let _ = Quota::per_second(1).with_burst(0);
    }
}
