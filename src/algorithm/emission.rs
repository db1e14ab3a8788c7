//! The theoretical-arrival-time transition that [`Gcra`](super::Gcra) and
//! [`LeakyBucket`](super::LeakyBucket) share; they differ only in what they report.
//!
//! State: one `u64`, the theoretical arrival time `tat` in *units* (see [`Scale`]): the instant
//! at which every admitted request's emission slot has passed. Fresh state: 0.
//!
//! Units. The emission interval `T = period / limit` is rarely a whole number of nanoseconds,
//! so time is kept in units where `T` is whole:
//! - **integral mode** (when `limit / gcd(period, limit) <= 3`, e.g. `100/minute`, `3/s`,
//!   `1_000_000_000/s`): a unit is `1 / d` ns with `d = limit / gcd(period, limit)`, `T` is
//!   `period / gcd` units, and every decision is *identical* to GCRA in exact rational
//!   arithmetic;
//! - **fractional mode** (otherwise, e.g. `7/s`, `u32::MAX/hour`): `T` is `2^k` units with `k`
//!   as large as the 64 bits allow, so a unit is below a nanosecond for any ordinary burst. The
//!   long-run rate is exactly `limit / period`; a reading between two units is rounded against
//!   the caller (floor when measuring elapsed time, ceiling when starting a new backlog), so the
//!   limiter never admits what exact GCRA would deny, and it may deny a request that arrives
//!   less than two units (under 2 ns for ordinary bursts) after exact GCRA would first admit it.
//!
//! Rule, for a request of cost `n` at `now` (in units: `fv = floor(now)`, `cv = ceil(now)`):
//! admitted iff `max(tat - fv, 0) + n*T <= burst*T`; then `tat = max(tat, cv) + n*T`.
//!
//! Hits (recorded whatever the answer): `tat = max(tat, cv) + n*T`, saturating at the end of
//! the time range plus one burst (`max_tat`), so the debt a hit leaves is repaid at the quota's
//! rate: after a hit of `n` beyond the burst, the next request waits for `n` emission intervals
//! more than a full bucket would.
//!
//! Reconfiguration (a new quota for a live state): the requests still owed carry over. The
//! backlog `tat - now` is `backlog / T` requests; the new state owes as many new emission
//! intervals, rounded up to a whole new unit, so nothing consumed is forgiven (debt included).
//!
//! Ranges: `burst * T` must stay within the 146-year time range, and `tat` within 64 bits;
//! anything else is refused at construction.

use super::scale::{gcd, Scale};
use super::{saturate_u64, MAX_NANOS, MAX_STATE};
use crate::decision::{Decision, Details};
use crate::error::QuotaError;
use crate::quota::Quota;

/// A quota preprocessed into units.
#[derive(Debug, Clone, Copy)]
pub struct EmissionParams {
    scale: Scale,
    /// `T`: units per request.
    interval: u64,
    /// `burst * T`.
    max_backlog: u64,
    /// The latest `tat` a hit may leave: the end of the time range plus one burst, which
    /// keeps every check's arithmetic within 64 bits.
    max_tat: u64,
    limit: u32,
    burst: u32,
    period: u64,
}

impl EmissionParams {
    pub(super) fn new(quota: &Quota, algorithm: &'static str) -> Result<Self, QuotaError> {
        let (limit, burst, period) = (quota.limit(), quota.burst(), quota.period_nanos());
        let refill = u128::from(burst) * u128::from(period) / u128::from(limit);
        if refill > u128::from(MAX_NANOS) {
            return Err(QuotaError::Unsupported {
                algorithm,
                reason: format!(
                    "refilling a burst of {burst} at {limit} per {period} ns takes {refill} ns, \
                     beyond the 2^62 ns (146-year) time range"
                ),
            });
        }
        let fits = |scale: Scale, interval: u64| {
            let max_backlog = u128::from(burst) * u128::from(interval);
            let top = u128::from(scale.max_units()) + 2 * max_backlog;
            (top <= u128::from(MAX_STATE)).then_some(EmissionParams {
                scale,
                interval,
                max_backlog: max_backlog as u64,
                max_tat: scale.max_units() + max_backlog as u64,
                limit,
                burst,
                period,
            })
        };
        let g = gcd(period, u64::from(limit));
        let integral = Scale::new(u64::from(limit) / g, 1).and_then(|s| fits(s, period / g));
        // Fractional mode: the finest unit (largest k) that fits, but never coarser than T/4.
        let fractional = || {
            (2..=62).rev().find_map(|k| {
                let num = u64::from(limit).checked_mul(1 << k)?;
                fits(Scale::new(num, period)?, 1 << k)
            })
        };
        integral
            .or_else(fractional)
            .ok_or_else(|| QuotaError::Unsupported {
                algorithm,
                reason: format!(
                    "a burst of {burst} at {limit} per {period} ns leaves no room for sub-request \
                 precision in 64 bits"
                ),
            })
    }

    pub(super) fn burst(&self) -> u32 {
        self.burst
    }

    /// Nanoseconds to refill a whole burst: `burst * period / limit`, rounded up.
    pub(crate) fn refill_nanos(&self) -> u64 {
        let refill = u128::from(self.burst) * u128::from(self.period);
        saturate_u64(refill.div_ceil(u128::from(self.limit)))
    }

    /// True when decisions equal exact rational GCRA (integral mode).
    #[cfg(test)]
    pub(super) fn is_exact(&self) -> bool {
        self.scale.is_integral()
    }
}

/// Implements [`Packed`](super::Packed) for an algorithm that is
/// the emission transition plus its own way of explaining a decision.
macro_rules! emission_algorithm {
    ($algorithm:ty, $name:literal, $explain:path) => {
        impl $crate::algorithm::Packed for $algorithm {
            const NAME: &'static str = $name;
            type Params = $crate::algorithm::emission::EmissionParams;

            fn params(
                quota: &$crate::quota::Quota,
                _unix_offset: u64,
            ) -> Result<Self::Params, $crate::error::QuotaError> {
                $crate::algorithm::emission::EmissionParams::new(quota, $name)
            }

            fn max_cost(params: &Self::Params) -> u32 {
                params.burst()
            }

            fn fresh(_params: &Self::Params) -> u64 {
                0
            }

            #[inline(always)]
            fn transition(
                tat: u64,
                now: u64,
                cost: u32,
                params: &Self::Params,
            ) -> (Option<u64>, $crate::decision::Decision) {
                $crate::algorithm::emission::transition(tat, now, cost, params, $explain)
            }

            #[inline]
            fn hit(
                tat: u64,
                now: u64,
                cost: u32,
                params: &Self::Params,
            ) -> (Option<u64>, $crate::decision::Decision) {
                $crate::algorithm::emission::hit(tat, now, cost, params, $explain)
            }

            fn is_fresh(tat: u64, now: u64, params: &Self::Params) -> bool {
                $crate::algorithm::emission::is_fresh(tat, now, params)
            }

            fn idle_after(params: &Self::Params) -> u64 {
                params.refill_nanos()
            }

            fn convert(tat: u64, now: u64, from: &Self::Params, to: &Self::Params) -> u64 {
                $crate::algorithm::emission::convert(tat, now, from, to)
            }
        }
    };
}
pub(super) use emission_algorithm;

/// The transition. `tat` is the state; returns the state to write, if any.
#[inline(always)]
pub(super) fn transition(
    tat: u64,
    now: u64,
    cost: u32,
    p: &EmissionParams,
    explain: fn(&Decision) -> Details,
) -> (Option<u64>, Decision) {
    let words = |tat| [now, tat, p.interval, p.period];
    if cost == 0 {
        return (
            None,
            Decision::lazy(true, p.limit, 0, p.burst, words(tat), explain),
        );
    }
    let (fv, cv) = p.scale.floor_ceil(now);
    let need = u64::from(cost) * p.interval;
    if tat.saturating_sub(fv) + need > p.max_backlog {
        return (
            None,
            Decision::lazy(false, p.limit, cost, p.burst, words(tat), explain),
        );
    }
    let next = tat.max(cv) + need;
    (
        Some(next),
        Decision::lazy(true, p.limit, cost, p.burst, words(next), explain),
    )
}

/// The hit: `tat = max(tat, cv) + n*T` whatever the answer, saturating at `max_tat`. Within
/// the limit this is exactly [`transition`]; beyond it, the decision is the denial one more
/// single request would get (its `retry_after` repays the debt).
#[inline]
pub(super) fn hit(
    tat: u64,
    now: u64,
    cost: u32,
    p: &EmissionParams,
    explain: fn(&Decision) -> Details,
) -> (Option<u64>, Decision) {
    if cost <= p.burst {
        let within = transition(tat, now, cost, p, explain);
        if within.1.is_allowed() {
            return within;
        }
    }
    let (_, cv) = p.scale.floor_ceil(now);
    let need = u64::from(cost).saturating_mul(p.interval);
    let next = tat.max(cv).saturating_add(need).min(p.max_tat);
    let words = [now, next, p.interval, p.period];
    (
        Some(next),
        Decision::lazy(false, p.limit, 1, p.burst, words, explain),
    )
}

/// `tat` under `from` carried over to `to` at `now`: the requests owed stay owed (see the
/// module header).
pub(super) fn convert(tat: u64, now: u64, from: &EmissionParams, to: &EmissionParams) -> u64 {
    let backlog = tat.saturating_sub(from.scale.floor(now));
    if backlog == 0 {
        return 0;
    }
    let owed = (u128::from(backlog) * u128::from(to.interval)).div_ceil(u128::from(from.interval));
    let (_, cv) = to.scale.floor_ceil(now);
    saturate_u64(u128::from(cv) + owed).min(to.max_tat)
}

/// True when no backlog remains at `now`.
#[inline]
pub(super) fn is_fresh(tat: u64, now: u64, p: &EmissionParams) -> bool {
    tat <= p.scale.floor(now)
}

/// The numbers behind a decision, rebuilt from its words: `[now ns, tat after (allowed) or as
/// found (denied), T in units, period ns]`, `limit`, and `burst` in `small`.
pub(super) struct Reading {
    now: u64,
    tat: u64,
    interval: u64,
    max_backlog: u128,
    /// units per ns as the fraction `num / den`.
    num: u128,
    den: u128,
    cost: u64,
    allowed: bool,
}

impl Reading {
    pub(super) fn of(d: &Decision) -> Reading {
        let [now, tat, interval, period] = *d.words();
        Reading {
            now,
            tat,
            interval,
            max_backlog: u128::from(d.small()) * u128::from(interval),
            // In both modes the units per ns are `limit * T / period`.
            num: u128::from(d.limit()) * u128::from(interval),
            den: u128::from(period),
            cost: u64::from(d.cost()),
            allowed: d.is_allowed(),
        }
    }

    fn floor_units(&self) -> u64 {
        saturate_u64(u128::from(self.now) * self.num / self.den)
    }

    fn ceil_units(&self) -> u64 {
        saturate_u64((u128::from(self.now) * self.num).div_ceil(self.den))
    }

    /// Nanoseconds from `now` until the reading in units first reaches `units`.
    fn until(&self, units: u64) -> u64 {
        let at = (u128::from(units) * self.den).div_ceil(self.num);
        saturate_u64(at).saturating_sub(self.now)
    }

    fn backlog(&self) -> u128 {
        u128::from(self.tat.saturating_sub(self.floor_units()))
    }

    pub(super) fn details(&self, wait: u64) -> Details {
        let backlog = self.backlog();
        let remaining = self.max_backlog.saturating_sub(backlog) / u128::from(self.interval);
        let retry_after = if self.allowed {
            0
        } else {
            // Allowed once `tat - floor(now') <= max_backlog - cost*T`.
            let slack = self.max_backlog - u128::from(self.cost * self.interval);
            self.until(saturate_u64(u128::from(self.tat).saturating_sub(slack)))
        };
        Details {
            remaining: u32::try_from(remaining).unwrap_or(u32::MAX),
            retry_after,
            reset_after: self.until(self.tat),
            wait,
        }
    }

    /// For an admitted request: how long until its first slot, `tat - cost*T`; zero when the
    /// queue was idle (the slot is the current, possibly partial, unit).
    pub(super) fn slot_wait(&self) -> u64 {
        let slot = self.tat - self.cost * self.interval;
        if slot <= self.ceil_units() {
            0
        } else {
            self.until(slot)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn params(quota: Quota) -> EmissionParams {
        EmissionParams::new(&quota, "test").unwrap()
    }

    #[test]
    fn integral_mode_whenever_a_unit_can_be_a_whole_fraction_of_a_nanosecond() {
        assert!(params(Quota::per_minute(100)).is_exact());
        assert!(params(Quota::per_second(3)).is_exact()); // T = 333,333,333 1/3 ns
        assert!(params(Quota::per_second(1_000_000_000)).is_exact()); // T = 1 ns
        assert!(params(Quota::per_day(1)).is_exact());
        assert!(!params(Quota::per_second(7)).is_exact());
        assert!(!params(Quota::per_hour(u32::MAX)).is_exact());
    }

    #[test]
    fn refuses_a_refill_longer_than_the_time_range() {
        let slow = Quota::new(1, Quota::MAX_PERIOD).unwrap().with_burst(100);
        assert!(matches!(
            EmissionParams::new(&slow, "Gcra"),
            Err(QuotaError::Unsupported {
                algorithm: "Gcra",
                ..
            })
        ));
        let fine = Quota::new(1, Duration::from_secs(1))
            .unwrap()
            .with_burst(u32::MAX);
        assert!(EmissionParams::new(&fine, "Gcra").is_ok());
    }
}
