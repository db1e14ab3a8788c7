//! [`Divisor`]: exact division by a number fixed at construction, without a `div` instruction.
//!
//! The window algorithms divide the time by the period on every check. A hardware 64-bit divide
//! costs 20–40 cycles; multiplying by a precomputed reciprocal costs ~4. This is the
//! Granlund–Montgomery construction (*Division by Invariant Integers using Multiplication*,
//! 1994, Theorem 4.2) for numerators below 2^63: with `l = ceil(log2 d)` and
//! `m = ceil(2^(63+l) / d)`, `floor(n / d) == (n * m) >> (63 + l)` for every `n < 2^63`, and
//! `m` fits in 64 bits. Computed as `mulhi(2n, m) >> l` (the same bits): the high word of one
//! multiply and a shift below 64, instead of a 128-bit shift by a variable amount.

/// Divides numerators below 2^63 by a fixed `d`, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Divisor {
    d: u64,
    m: u64,
    /// `ceil(log2 d)`.
    l: u32,
}

impl Divisor {
    /// A divisor for `d`, or `None` if `d` is 0 or not below 2^63.
    pub(crate) fn new(d: u64) -> Option<Divisor> {
        if d == 0 || d >= 1 << 63 {
            return None;
        }
        let l = if d == 1 {
            0
        } else {
            64 - (d - 1).leading_zeros()
        };
        let m = (1u128 << (63 + l)).div_ceil(u128::from(d));
        Some(Divisor {
            d,
            m: u64::try_from(m).ok()?,
            l,
        })
    }

    /// The divisor.
    pub(crate) fn get(&self) -> u64 {
        self.d
    }

    /// `(n / d, n % d)` for `n < 2^63`.
    #[inline]
    pub(crate) fn div_rem(&self, n: u64) -> (u64, u64) {
        debug_assert!(n < 1 << 63);
        let high = ((u128::from(n << 1) * u128::from(self.m)) >> 64) as u64;
        let q = high >> self.l;
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hardware_division() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut divisors = vec![
            1,
            2,
            3,
            7,
            1_000,
            1_000_000_007,
            60_000_000_000,
            (1 << 62) + 1,
        ];
        divisors.extend(
            (0..200)
                .map(|_| next() >> (next() % 63 + 1))
                .filter(|&d| d > 0),
        );
        for d in divisors {
            let divisor = Divisor::new(d).unwrap();
            let limit = (1u64 << 63) - 1;
            for n in [0, 1, d - 1, d, d.saturating_add(1), limit - 1, limit] {
                if n <= limit {
                    assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
                }
            }
            for _ in 0..2_000 {
                let n = next() & limit;
                assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    #[test]
    fn refuses_zero_and_huge() {
        assert!(Divisor::new(0).is_none());
        assert!(Divisor::new(1 << 63).is_none());
    }
}
