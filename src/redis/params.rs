//! A quota turned into the integers each script needs, with the range checks that keep every
//! number the scripts compute exact in Lua's doubles (see the headers of the `.lua` files).
//!
//! Everything that multiplies a cost by a per-request amount is done here, in u128, so the
//! scripts only add, compare and divide numbers at or below 2^52.

use crate::algorithm::AlgorithmKind;
use crate::algorithm::SlidingLog;
use crate::error::QuotaError;
use crate::quota::Quota;

/// The largest backlog or debt a state records, in its algorithm's units (2^51); a hit's
/// cost in units is capped here too.
pub(crate) const MAX_DEBT: u64 = 1 << 51;

/// Products the scripts form (limit x window length, window arithmetic) stay at or below this
/// (2^52), where floor division of doubles can still be made exact.
const MAX_PRODUCT: u128 = 1 << 52;

/// The largest limit of the sliding log on Redis: a write of n units costs O(n log limit)
/// inside Redis, during which no other client is served.
pub(crate) const MAX_LOG_LIMIT: u32 = 1 << 16;

/// The integers one algorithm's script reads, fixed per quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Params {
    /// GCRA and the leaky bucket: `d` units per us, `t` units per request, `cap = burst * t`.
    Emission {
        shaping: bool,
        d: u64,
        t: u64,
        cap: u64,
    },
    /// `e` units per token, `r` units refilled per us, `full = burst * e`.
    TokenBucket { e: u64, r: u64, full: u64 },
    /// A period of `d / m` us (`d` units of `1000 / m` ns).
    FixedWindow { limit: u32, m: u64, d: u64 },
    /// An anchored fixed window: the period rounded up to whole us (a window starts at a
    /// request's whole us and ends at the first whole us at or after one period later).
    AnchoredWindow { limit: u32, period_us: u64 },
    /// As [`Params::FixedWindow`].
    SlidingWindow { limit: u32, m: u64, d: u64 },
    /// The period rounded up to whole us.
    SlidingLog { limit: u32, period_us: u64 },
}

impl Params {
    /// The parameters of `kind` for `quota`, or why the scripts cannot run it exactly.
    pub(crate) fn new(kind: AlgorithmKind, quota: &Quota) -> Result<Params, QuotaError> {
        let name = kind.type_name();
        let (limit, burst) = (u64::from(quota.limit()), u64::from(quota.burst()));
        let period = quota.period_nanos();
        if period < 1_000 {
            return Err(unsupported(
                name,
                format!(
                    "a period of {period} ns is shorter than one microsecond, the resolution \
                     of Redis's clock"
                ),
            ));
        }
        if kind != AlgorithmKind::FixedWindow {
            quota.refuse_anchored(name)?;
        }
        let params = match kind {
            AlgorithmKind::FixedWindow if quota.is_anchored() => Params::AnchoredWindow {
                limit: quota.limit(),
                period_us: period.div_ceil(1_000),
            },
            AlgorithmKind::Gcra | AlgorithmKind::LeakyBucket => {
                let g = gcd(period, 1_000 * limit);
                let (d, t) = (1_000 * limit / g, period / g);
                let cap = u128::from(burst) * u128::from(t);
                if cap > u128::from(MAX_DEBT) {
                    return Err(unsupported(
                        name,
                        format!(
                            "on Redis it counts time in units of 1/{d} us, and a burst of \
                             {burst} at {limit} per {period} ns spans {cap} of them, beyond \
                             2^51: Redis's Lua computes in doubles, exact only below 2^53"
                        ),
                    ));
                }
                Params::Emission {
                    shaping: kind == AlgorithmKind::LeakyBucket,
                    d,
                    t,
                    cap: cap as u64,
                }
            }
            AlgorithmKind::TokenBucket => {
                let g = gcd(period, 1_000 * limit);
                let (e, r) = (period / g, 1_000 * limit / g);
                let full = u128::from(burst) * u128::from(e);
                if full > u128::from(MAX_DEBT) {
                    return Err(unsupported(
                        name,
                        format!(
                            "on Redis it counts tokens in units of 1/{e} token, and a burst of \
                             {burst} is {full} of them, beyond 2^51: Redis's Lua computes in \
                             doubles, exact only below 2^53 (Gcra makes the same decisions \
                             with a wider range)"
                        ),
                    ));
                }
                Params::TokenBucket {
                    e,
                    r,
                    full: full as u64,
                }
            }
            AlgorithmKind::FixedWindow | AlgorithmKind::SlidingWindow => {
                let g = gcd(period, 1_000);
                let (m, d) = (1_000 / g, period / g);
                let span = u128::from(m + 1) * u128::from(d);
                if span > MAX_PRODUCT {
                    return Err(unsupported(
                        name,
                        format!(
                            "a period of {period} ns is {d}/{m} us, and locating a window on \
                             Redis's microsecond clock needs ({m} + 1) x {d} <= 2^52; periods \
                             of whole microseconds always fit"
                        ),
                    ));
                }
                let weighted = u128::from(limit) * u128::from(d);
                if kind == AlgorithmKind::SlidingWindow && weighted > MAX_PRODUCT {
                    return Err(unsupported(
                        name,
                        format!(
                            "weighing the previous window needs limit x period <= 2^52 in \
                             units of {} ns, and {limit} x {d} is beyond it (per day the \
                             limit can be up to 52,124; FixedWindow or Gcra run any limit)",
                            1_000 / m
                        ),
                    ));
                }
                let limit = quota.limit();
                if kind == AlgorithmKind::FixedWindow {
                    Params::FixedWindow { limit, m, d }
                } else {
                    Params::SlidingWindow { limit, m, d }
                }
            }
            AlgorithmKind::SlidingLog => {
                let limit = quota.limit();
                if limit > MAX_LOG_LIMIT {
                    return Err(unsupported(
                        name,
                        format!(
                            "a limit of {limit} would keep up to {limit} members per key, and \
                             writing them could hold Redis for milliseconds; the largest limit \
                             on Redis is {MAX_LOG_LIMIT} (in process, {}; SlidingWindow \
                             approximates it in one string)",
                            SlidingLog::MAX_LIMIT
                        ),
                    ));
                }
                Params::SlidingLog {
                    limit,
                    period_us: period.div_ceil(1_000),
                }
            }
        };
        Ok(params)
    }

    /// The largest cost one check can be allowed.
    pub(crate) fn max_cost(&self, quota: &Quota) -> u32 {
        match self {
            Params::Emission { .. } | Params::TokenBucket { .. } => quota.burst(),
            Params::FixedWindow { limit, .. }
            | Params::AnchoredWindow { limit, .. }
            | Params::SlidingWindow { limit, .. }
            | Params::SlidingLog { limit, .. } => *limit,
        }
    }

    /// The four parameters of a request of `n`, as the script reads them (unused ones 0).
    /// Costs in units are capped at [`MAX_DEBT`]: only hits can exceed the capacity.
    pub(crate) fn args(&self, n: u32) -> [u64; 4] {
        let units = |per: u64| (u128::from(n) * u128::from(per)).min(u128::from(MAX_DEBT)) as u64;
        match *self {
            Params::Emission { d, t, cap, .. } => [d, t, cap, units(t)],
            Params::TokenBucket { e, r, full } => [e, r, full, units(e)],
            Params::FixedWindow { limit, m, d } | Params::SlidingWindow { limit, m, d } => {
                [u64::from(limit), m, d, 0]
            }
            Params::AnchoredWindow { limit, period_us } => [u64::from(limit), period_us, 0, 0],
            Params::SlidingLog { limit, period_us } => [u64::from(limit), period_us, 0, 0],
        }
    }

    /// [`args`](Self::args) as the script reads them: four big-endian doubles in one
    /// argument (exact: every value is below 2^53), unpacked by one C call in the script.
    pub(crate) fn encoded(&self, n: u32) -> [u8; 32] {
        let mut bytes = [0u8; 32];
        for (chunk, value) in bytes.chunks_exact_mut(8).zip(self.args(n)) {
            chunk.copy_from_slice(&(value as f64).to_be_bytes());
        }
        bytes
    }

    /// True for the algorithms whose state is one string (all but the log).
    pub(crate) fn is_string(&self) -> bool {
        !matches!(self, Params::SlidingLog { .. })
    }
}

fn unsupported(algorithm: &'static str, reason: String) -> QuotaError {
    QuotaError::Unsupported { algorithm, reason }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn params(kind: AlgorithmKind, quota: Quota) -> Result<Params, QuotaError> {
        Params::new(kind, &quota)
    }

    #[test]
    fn emission_units_make_the_interval_whole() {
        // 100/minute: T = 600,000 us exactly, one unit per us.
        let p = params(AlgorithmKind::Gcra, Quota::per_minute(100).with_burst(20)).unwrap();
        assert_eq!(
            p,
            Params::Emission {
                shaping: false,
                d: 1,
                t: 600_000,
                cap: 12_000_000
            }
        );
        // 3/s: T = 333,333 1/3 us, so units of 1/3 us.
        let p = params(AlgorithmKind::LeakyBucket, Quota::per_second(3)).unwrap();
        assert_eq!(
            p,
            Params::Emission {
                shaping: true,
                d: 3,
                t: 1_000_000,
                cap: 3_000_000
            }
        );
        assert_eq!(p.args(2), [3, 1_000_000, 3_000_000, 2_000_000]);
        let encoded = p.encoded(2);
        assert_eq!(encoded[8..16], 1_000_000f64.to_be_bytes());
        assert_eq!(p.args(u32::MAX)[3], MAX_DEBT, "a hit's cost saturates");
    }

    #[test]
    fn token_units_refill_whole_per_microsecond() {
        let p = params(AlgorithmKind::TokenBucket, Quota::per_second(7)).unwrap();
        // g = gcd(10^9, 7000) = 1000: E = 10^6 units per token, R = 7 per us.
        assert_eq!(
            p,
            Params::TokenBucket {
                e: 1_000_000,
                r: 7,
                full: 7_000_000
            }
        );
    }

    #[test]
    fn windows_split_odd_periods_into_whole_units() {
        let odd = Quota::new(5, Duration::from_nanos(7_000_003)).unwrap();
        let p = params(AlgorithmKind::FixedWindow, odd).unwrap();
        assert_eq!(
            p,
            Params::FixedWindow {
                limit: 5,
                m: 1_000,
                d: 7_000_003
            }
        );
        let p = params(AlgorithmKind::SlidingWindow, Quota::per_minute(10)).unwrap();
        assert_eq!(
            p,
            Params::SlidingWindow {
                limit: 10,
                m: 1,
                d: 60_000_000
            }
        );
        let p = params(AlgorithmKind::FixedWindow, odd.anchored()).unwrap();
        assert_eq!(
            p,
            Params::AnchoredWindow {
                limit: 5,
                period_us: 7_001
            }
        );
        assert_eq!(p.args(3), [5, 7_001, 0, 0]);
        let p = params(AlgorithmKind::SlidingLog, odd).unwrap();
        assert_eq!(
            p,
            Params::SlidingLog {
                limit: 5,
                period_us: 7_001
            }
        );
    }

    #[test]
    fn refuses_what_doubles_cannot_hold_naming_the_bound() {
        let reason = |result: Result<Params, QuotaError>| match result {
            Err(QuotaError::Unsupported { reason, .. }) => reason,
            other => panic!("expected Unsupported, got {other:?}"),
        };
        for kind in AlgorithmKind::ALL {
            let anchored = params(kind, Quota::per_minute(5).anchored());
            if kind == AlgorithmKind::FixedWindow {
                assert!(anchored.is_ok());
            } else {
                assert!(reason(anchored).contains("anchored"), "{kind}");
            }
        }
        let short = Quota::new(1, Duration::from_nanos(999)).unwrap();
        assert!(reason(params(AlgorithmKind::Gcra, short)).contains("microsecond"));
        let huge_burst = Quota::per_hour(u32::MAX).with_burst(u32::MAX);
        assert!(reason(params(AlgorithmKind::Gcra, huge_burst)).contains("2^51"));
        let daily = Quota::per_day(52_124);
        assert!(params(AlgorithmKind::SlidingWindow, daily).is_ok());
        let too_many = Quota::per_day(52_125);
        assert!(reason(params(AlgorithmKind::SlidingWindow, too_many)).contains("2^52"));
        assert!(params(AlgorithmKind::FixedWindow, too_many).is_ok());
        let long_odd = Quota::new(1, Duration::from_nanos(5_000_000_000_001)).unwrap();
        assert!(reason(params(AlgorithmKind::FixedWindow, long_odd)).contains("2^52"));
        let big_log = Quota::per_second(MAX_LOG_LIMIT + 1);
        assert!(reason(params(AlgorithmKind::SlidingLog, big_log)).contains("largest limit"));
    }
}
