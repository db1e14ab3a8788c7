//! [`Scale`]: nanoseconds to an algorithm's time units, exactly, in a multiply and a shift.
//!
//! The rate algorithms keep time in units of `num/den` per nanosecond chosen so that one request
//! costs a whole number of units (the emission interval `period/limit` is rarely a whole number
//! of nanoseconds). Converting must be exact, or decisions drift from the rational model:
//! `units(t) = floor(t * num / den)`. A u128 division would cost ~25 ns on the hot path, so we
//! multiply by `m = floor(2^62 * num / den)` instead, which is at most one unit low, and correct
//! that with one 64-bit multiply (see [`Scale::floor_ceil`]).

use super::MAX_NANOS;

/// Converts nanoseconds `t <= MAX_NANOS` to `floor(t * num / den)` units, and back.
///
/// The integral cases are their own variants so that the hot path of a quota with whole
/// units per nanosecond has nothing of the fractional arithmetic scheduled beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// One unit per nanosecond.
    Identity,
    /// `num` units per nanosecond (`num <= 3`).
    Whole(u64),
    /// `num / den` units per nanosecond, through `m = floor(2^62 * num / den)`.
    Fraction { m: u64, num: u64, den: u64 },
}

impl Scale {
    /// The scale `num / den` (reduced), or `None` unless `0 < num / den < 4` and `den < 2^62`,
    /// the bounds that keep `m` and every intermediate product in range.
    pub(crate) fn new(num: u64, den: u64) -> Option<Scale> {
        if num == 0 || den == 0 {
            return None;
        }
        let g = gcd(num, den);
        let (num, den) = (num / g, den / g);
        let m = (u128::from(num) << 62) / u128::from(den);
        if num >= den.saturating_mul(4) || den >= 1 << 62 || m > u128::from(u64::MAX) {
            return None;
        }
        Some(match (num, den) {
            (1, 1) => Scale::Identity,
            (num, 1) => Scale::Whole(num),
            _ => Scale::Fraction {
                m: m as u64,
                num,
                den,
            },
        })
    }

    /// True when every nanosecond is a whole number of units (`den == 1`), so conversion is a
    /// plain multiply and floor equals ceil.
    #[cfg(test)]
    pub(crate) fn is_integral(&self) -> bool {
        !matches!(self, Scale::Fraction { .. })
    }

    /// `floor(t * num / den)` and `ceil(t * num / den)`, for `t <= MAX_NANOS`.
    #[inline]
    pub(crate) fn floor_ceil(&self, t: u64) -> (u64, u64) {
        debug_assert!(t <= MAX_NANOS);
        match *self {
            Scale::Identity => (t, t),
            Scale::Whole(num) => (t * num, t * num),
            Scale::Fraction { m, num, den } => fraction_floor_ceil(t, m, num, den),
        }
    }

    /// [`floor_ceil`](Self::floor_ceil) with the fractional case inlined too, for callers
    /// (the token bucket) whose scale is almost always fractional.
    #[inline]
    pub(crate) fn floor_ceil_inlined(&self, t: u64) -> (u64, u64) {
        match *self {
            Scale::Identity => (t, t),
            Scale::Whole(num) => (t * num, t * num),
            Scale::Fraction { m, num, den } => fraction(t, m, num, den),
        }
    }

    /// `floor(t * num / den) < units`, for `t <= MAX_NANOS`. The fractional case (the token
    /// bucket's deny test) takes `q`, the floor or one below it, from one multiply by `m`:
    /// `q + 1 < units` (a denial's usual answer) and `q >= units` decide, and only
    /// `q + 1 == units` is settled exactly (`t * num < units * den`).
    #[inline(always)]
    pub(crate) fn before(&self, t: u64, units: u64) -> bool {
        match *self {
            Scale::Fraction { m, num, den } => {
                let q = ((u128::from(t) * u128::from(m)) >> 62) as u64;
                // `q + 1` cannot wrap: `t * num / den < 2^64 - 4` (`t < 2^62`, `num / den < 4`).
                q + 1 < units
                    || (q < units
                        && u128::from(t) * u128::from(num) < u128::from(units) * u128::from(den))
            }
            Scale::Whole(num) => u128::from(t) * u128::from(num) < u128::from(units),
            Scale::Identity => t < units,
        }
    }

    /// `floor(t * num / den)`.
    #[inline]
    pub(crate) fn floor(&self, t: u64) -> u64 {
        self.floor_ceil(t).0
    }

    /// The largest unit count reachable at `MAX_NANOS`, plus one for a ceiling.
    pub(crate) fn max_units(&self) -> u64 {
        self.floor(MAX_NANOS) + 1
    }
}

/// `floor` and `ceil` of `t * num / den` through `m = floor(2^62 * num / den)`.
///
/// Out of line on purpose: inlined, the optimizer schedules this arithmetic speculatively
/// beside the integral cases, where it cost about 2 ns per check (perf, this repo's VM).
#[inline(never)]
fn fraction_floor_ceil(t: u64, m: u64, num: u64, den: u64) -> (u64, u64) {
    fraction(t, m, num, den)
}

#[inline(always)]
fn fraction(t: u64, m: u64, num: u64, den: u64) -> (u64, u64) {
    let q = ((u128::from(t) * u128::from(m)) >> 62) as u64;
    // `q` is the true floor or one below it (the error of `m` times t < 2^62 is under one
    // unit), so the true remainder `t*num - q*den` lies in [0, 2*den) < 2^63: wrapping 64-bit
    // arithmetic computes it exactly.
    let r = t.wrapping_mul(num).wrapping_sub(q.wrapping_mul(den));
    let (q, r) = if r >= den { (q + 1, r - den) } else { (q, r) };
    (q, q + u64::from(r != 0))
}

/// Greatest common divisor.
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(t: u64, num: u64, den: u64) -> (u64, u64) {
        let p = u128::from(t) * u128::from(num);
        let d = u128::from(den);
        ((p / d) as u64, p.div_ceil(d) as u64)
    }

    #[test]
    fn matches_u128_division_on_awkward_ratios() {
        let ratios = [
            (1u64, 1u64),
            (3, 1),
            (2048 * 7, 1_000_000_000),
            (4_294_967_295 * 2048, 3_600_000_000_000),
            (1 << 23, 86_400_000_000_000),
            (5, 2),
            (1, 288_230_376_151_711_744),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for (num, den) in ratios {
            let scale = Scale::new(num, den).unwrap();
            let check = |t: u64| {
                let g = gcd(num, den);
                assert_eq!(
                    scale.floor_ceil(t),
                    exact(t, num / g, den / g),
                    "t={t} {num}/{den}"
                );
            };
            for t in [0, 1, 2, 999, den.min(MAX_NANOS), MAX_NANOS - 1, MAX_NANOS] {
                check(t);
            }
            for _ in 0..20_000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                check(seed & MAX_NANOS);
            }
        }
    }

    /// `before` is `floor < units` exactly, around the floor where the shortcut cannot decide.
    #[test]
    fn before_matches_the_exact_floor() {
        let ratios = [
            (1u64, 1u64),
            (3, 1),
            (2048 * 7, 1_000_000_000),
            (5, 2),
            (1 << 23, 86_400_000_000_000),
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for (num, den) in ratios {
            let scale = Scale::new(num, den).unwrap();
            let g = gcd(num, den);
            for _ in 0..20_000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let t = seed & MAX_NANOS;
                let floor = exact(t, num / g, den / g).0;
                for units in [
                    floor.saturating_sub(2),
                    floor.saturating_sub(1),
                    floor,
                    floor + 1,
                    floor + 2,
                ] {
                    assert_eq!(
                        scale.before(t, units),
                        floor < units,
                        "t={t} units={units} {num}/{den}"
                    );
                }
            }
        }
    }

    #[test]
    fn refuses_ratios_that_would_overflow() {
        assert!(Scale::new(4, 1).is_none());
        assert!(Scale::new(0, 1).is_none());
        assert!(Scale::new(1, 0).is_none());
        assert!(Scale::new(7, 2).is_some());
    }
}
