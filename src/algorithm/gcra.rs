//! [`Gcra`]: the generic cell rate algorithm.
//!
//! Rule: a request of cost `n` is admitted iff, after it, no more than `burst` emission
//! intervals `T = period / limit` are owed: `max(tat - now, 0) + n*T <= burst*T`, i.e.
//! tolerance `tau = T * (burst - 1)`. Long-run rate `limit / period`, bursts up to `burst`;
//! decisions identical to a continuous token bucket of capacity `burst` refilling at
//! `limit / period`.
//!
//! Layout: the whole `u64` is the theoretical arrival time `tat`, in the units described in
//! the shared [emission core](super::emission): `[63..0] tat`. Fresh: 0.
//!
//! Ranges and precision: any quota whose full refill (`burst * T`) fits in the 146-year time
//! range. Integral mode (`limit / gcd(period, limit) <= 3`, which covers every `per_second`
//! limit dividing 10^9 and the like) is exact; fractional mode has the exact long-run rate and
//! may deny a request that arrives less than two units (under 2 ns for ordinary bursts)
//! after exact GCRA would first admit it, never the reverse.

use super::emission::{emission_algorithm, Reading};
use crate::decision::{Decision, Details};

/// The generic cell rate algorithm: a token bucket in one timestamp. The default algorithm.
///
/// Admits `burst` requests at once and then one every `period / limit`; denies the rest,
/// writing nothing. `remaining` counts the single requests that would still be admitted now,
/// `retry_after` is the exact wait for the denied request, `reset_after` the time until the
/// bucket is full again.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::Gcra, clock::ManualClock};
///
/// let clock = ManualClock::new();
/// let limiter = Limiter::<Gcra, _>::with_clock(Quota::per_second(10).with_burst(2), clock.clone())?;
/// assert!(limiter.check().is_allowed());
/// assert!(limiter.check().is_allowed());
/// let denied = limiter.check();
/// assert_eq!(denied.retry_after(), Some(Duration::from_millis(100)));
/// clock.advance(Duration::from_millis(100));
/// assert!(limiter.check().is_allowed());
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Gcra;

fn explain(d: &Decision) -> Details {
    Reading::of(d).details(0)
}

emission_algorithm!(Gcra, "Gcra", explain);
