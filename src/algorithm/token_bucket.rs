//! [`TokenBucket`]: a bucket of `burst` tokens refilled at `limit / period`, starting full.
//!
//! Rule: a request of cost `n` is admitted iff the bucket holds at least `n` tokens; it then
//! takes them. Tokens accrue continuously up to `burst`.
//!
//! Layout, per quota: tokens are fixed-point with `k` fractional bits, and time is counted in
//! units of `T / 2^k` (`T = period / limit`), so one unit of time refills exactly one unit of
//! tokens and the refill is a plain addition:
//! ```text
//! [63 .. w]   refill timestamp, in units of T/2^k since the clock's epoch
//! [w-1 .. 0]  tokens, in units of 2^-k token      (w = bits(burst) + k)
//! ```
//! Fresh: timestamp 0, `burst << k` tokens. `k` is chosen as large as the 64 bits allow while
//! the timestamp still covers the 146-year time range.
//!
//! Precision: the bucket is evaluated at the last whole unit before `now`, and a bucket that
//! was full starts refilling from the first whole unit after `now`. So it never admits a
//! request an exact (rational-arithmetic) token bucket would deny, and it lags that bucket by
//! less than two units of time: it holds fewer than `2 / 2^k` tokens less, which is below one
//! request at any moment (never accumulating: the lag does not grow with the number of
//! requests or periods).
//!
//! Hits (recorded whatever the answer): a hit beyond the tokens available takes them all and
//! owes the rest, which is kept as a refill timestamp in the future (tokens 0, refilling only
//! from then), saturating at the end of the time range. So debt is repaid at the refill rate,
//! exactly as an exact bucket whose tokens went negative.
//!
//! Reconfiguration: the tokens consumed (`burst` minus the tokens held, debt included) stay
//! consumed: the new bucket holds its own burst minus them, rounded down to its precision, and
//! owes the rest if that is negative.
//!
//! Ranges: needs `k >= 1`, which holds when `burst * limit` is at most roughly
//! `period in ns / 8`: e.g. up to about 11,000/second with `burst = limit`, 86,000/minute,
//! 670,000/hour, any `1/day`. Larger quotas are refused at construction; [`Gcra`](super::Gcra)
//! makes the same decisions at 1 ns resolution for any quota.

use super::scale::Scale;
use super::Packed;
use super::{saturate_u64, MAX_STATE};
use crate::decision::{Decision, Details};
use crate::error::QuotaError;
use crate::quota::Quota;

/// A token bucket in one word: fixed-point tokens and the refill timestamp.
///
/// Admits `burst` at once, then refills at `limit / period`; `remaining` is the whole tokens
/// left, `reset_after` the time until the bucket is full again.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::TokenBucket, clock::ManualClock};
///
/// let clock = ManualClock::new();
/// let limiter = Limiter::<TokenBucket, _>::with_clock(Quota::per_second(2), clock.clone())?;
/// assert_eq!(limiter.check_n(2)?.remaining(), 0);
/// clock.advance(Duration::from_millis(500));
/// let d = limiter.check();
/// assert!(d.is_allowed());
/// assert_eq!(d.reset_after(), Duration::from_secs(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenBucket;

/// A quota preprocessed into the packed layout.
#[derive(Debug, Clone, Copy)]
pub struct TokenBucketParams {
    scale: Scale,
    /// Fractional bits of the tokens.
    k: u32,
    /// Width of the token field.
    width: u32,
    /// `2^width - 1`: the token field, precomputed for the hot path.
    mask: u64,
    /// `1 << k`: one token.
    token: u64,
    /// `burst << k`.
    full: u64,
    limit: u32,
    burst: u32,
    period: u64,
}

impl TokenBucketParams {
    fn new(quota: &Quota) -> Result<Self, QuotaError> {
        let (limit, burst, period) = (quota.limit(), quota.burst(), quota.period_nanos());
        let burst_bits = u32::BITS - burst.leading_zeros();
        (1..=62 - burst_bits)
            .rev()
            .find_map(|k| {
                let width = burst_bits + k;
                let scale = Scale::new(u64::from(limit).checked_mul(1 << k)?, period)?;
                // The timestamp is at most the ceiling of the last representable instant.
                let full = u64::from(burst) << k;
                let top = (u128::from(scale.max_units()) << width) + u128::from(full);
                (top <= u128::from(MAX_STATE)).then_some(TokenBucketParams {
                    scale,
                    k,
                    width,
                    mask: (1 << width) - 1,
                    token: 1 << k,
                    full,
                    limit,
                    burst,
                    period,
                })
            })
            .ok_or_else(|| QuotaError::Unsupported {
                algorithm: TokenBucket::NAME,
                reason: format!(
                    "{limit} per {period} ns with a burst of {burst} leaves no bit for \
                     sub-token precision beside a 146-year timestamp (roughly, burst x limit \
                     must stay below period_ns / 8); Gcra makes the same decisions for any quota"
                ),
            })
    }

    fn unpack(&self, state: u64) -> (u64, u64) {
        (state >> self.width, state & self.mask)
    }

    fn pack(&self, stamp: u64, tokens: u64) -> u64 {
        (stamp << self.width) | tokens
    }

    /// Tokens available at unit `fv` for the stored `(stamp, tokens)`.
    #[inline(always)]
    fn available(&self, stamp: u64, tokens: u64, fv: u64) -> u64 {
        let gained = fv.saturating_sub(stamp);
        if gained >= self.full - tokens {
            self.full
        } else {
            tokens + gained
        }
    }
}

impl Packed for TokenBucket {
    const NAME: &'static str = "TokenBucket";
    type Params = TokenBucketParams;

    fn params(quota: &Quota, _unix_offset: u64) -> Result<TokenBucketParams, QuotaError> {
        TokenBucketParams::new(quota)
    }

    fn max_cost(params: &TokenBucketParams) -> u32 {
        params.burst
    }

    fn fresh(params: &TokenBucketParams) -> u64 {
        params.pack(0, params.full)
    }

    #[inline(always)]
    fn transition(
        state: u64,
        now: u64,
        cost: u32,
        p: &TokenBucketParams,
    ) -> (Option<u64>, Decision) {
        let decide = |allowed, state| {
            let shape = p.k | (p.width << 8);
            let words = [now, state, p.period, u64::from(shape)];
            Decision::lazy(allowed, p.limit, cost, p.burst, words, explain)
        };
        if cost == 0 {
            return (None, decide(true, state));
        }
        let (stamp, tokens) = p.unpack(state);
        let need = u64::from(cost) * p.token;
        // Short of tokens, the request waits until the refill since `stamp` makes up the
        // difference (`need` never exceeds a full bucket). Asked without converting `now`: the
        // deny path is a comparison of two products.
        if tokens < need && p.scale.before(now, stamp + (need - tokens)) {
            return (None, decide(false, state));
        }
        let (fv, cv) = p.scale.floor_ceil_inlined(now);
        let available = p.available(stamp, tokens, fv);
        // A full bucket restarts refilling from the first whole unit after `now`, or it would
        // be credited with the fraction of a unit before `now` twice.
        let next = if available == p.full {
            p.pack(cv.max(stamp), p.full - need)
        } else {
            p.pack(fv.max(stamp), available - need)
        };
        (Some(next), decide(true, next))
    }

    #[inline]
    fn hit(state: u64, now: u64, cost: u32, p: &TokenBucketParams) -> (Option<u64>, Decision) {
        if cost <= p.burst {
            let within = Self::transition(state, now, cost, p);
            if within.1.is_allowed() {
                return within;
            }
        }
        let (fv, cv) = p.scale.floor_ceil_inlined(now);
        let (stamp, tokens) = p.unpack(state);
        let available = p.available(stamp, tokens, fv);
        // Refilling restarts where a check would restart it (see `transition`), then waits out
        // the tokens owed beyond those available.
        let base = if available == p.full {
            cv.max(stamp)
        } else {
            fv.max(stamp)
        };
        let owed = (u128::from(cost) << p.k) - u128::from(available);
        let stamp = saturate_u64(u128::from(base) + owed).min(p.scale.max_units());
        let next = p.pack(stamp, 0);
        let shape = p.k | (p.width << 8);
        let words = [now, next, p.period, u64::from(shape)];
        (
            Some(next),
            Decision::lazy(false, p.limit, 1, p.burst, words, explain),
        )
    }

    fn convert(state: u64, now: u64, from: &TokenBucketParams, to: &TokenBucketParams) -> u64 {
        let (fv, _) = from.scale.floor_ceil_inlined(now);
        let (stamp, tokens) = from.unpack(state);
        // Tokens held now, in units of 2^-k: negative while a debt's stamp is in the future
        // (a debt holds no tokens; a stamp just ahead with tokens is a full bucket's restart).
        let held = if stamp > fv && tokens == 0 {
            -i128::from(stamp - fv)
        } else {
            i128::from(from.available(stamp, tokens, fv))
        };
        let consumed = i128::from(from.full) - held;
        // Into the new precision, rounded up (never forgiving a fraction of a token).
        let consumed = if to.k >= from.k {
            consumed << (to.k - from.k)
        } else {
            let shift = from.k - to.k;
            (consumed + (1 << shift) - 1) >> shift
        };
        let held = i128::from(to.full) - consumed;
        // Refilling restarts at the first whole new unit after `now`: the tokens were measured
        // at or before `now`, so starting earlier could credit time twice.
        let (_, cv) = to.scale.floor_ceil_inlined(now);
        if held >= i128::from(to.full) {
            Self::fresh(to)
        } else if held >= 0 {
            to.pack(cv, held as u64)
        } else {
            let stamp = saturate_u64(u128::from(cv) + held.unsigned_abs());
            to.pack(stamp.min(to.scale.max_units()), 0)
        }
    }

    fn idle_after(p: &TokenBucketParams) -> u64 {
        let refill = u128::from(p.burst) * u128::from(p.period);
        saturate_u64(refill.div_ceil(u128::from(p.limit)))
    }

    fn is_fresh(state: u64, now: u64, p: &TokenBucketParams) -> bool {
        let (stamp, tokens) = p.unpack(state);
        p.available(stamp, tokens, p.scale.floor_ceil_inlined(now).0) == p.full
    }
}

/// Rebuilds the numbers from `[now, state, period, k | width << 8]`, limit and burst.
fn explain(d: &Decision) -> Details {
    let [now, state, period, shape] = *d.words();
    let (k, width) = ((shape & 0xff) as u32, (shape >> 8) as u32);
    let num = u128::from(d.limit()) << k;
    let den = u128::from(period);
    let full = u64::from(d.small()) << k;
    let (stamp, tokens) = (state >> width, state & ((1 << width) - 1));
    let fv = saturate_u64(u128::from(now) * num / den);
    let gained = fv.saturating_sub(stamp);
    let available = if gained >= full - tokens {
        full
    } else {
        tokens + gained
    };
    let until = |units: u64| {
        let at = (u128::from(units) * den).div_ceil(num);
        saturate_u64(at).saturating_sub(now)
    };
    let need = u64::from(d.cost()) << k;
    Details {
        remaining: u32::try_from(available >> k).unwrap_or(u32::MAX),
        retry_after: if d.is_allowed() {
            0
        } else {
            until(stamp + need.saturating_sub(tokens))
        },
        reset_after: if tokens == full {
            0
        } else {
            until(stamp + (full - tokens))
        },
        wait: 0,
    }
}
