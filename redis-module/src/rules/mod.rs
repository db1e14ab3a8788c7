//! The string-state rules, each a line-for-line port of its Lua file in `src/redis/lua/`
//! (prelude.lua's contract: a pure function of the value read), on the same doubles, so that
//! a key's state and every answer are bit for bit what the script would have produced.
//! Tests (`tests/matches_scripts.rs`) hold them to the scripts on random calls.

// The bounds checks read as the Lua's do, comparison by comparison.
#![allow(clippy::manual_range_contains)]

mod anchored_window;
mod emission;
mod fixed_window;
mod sliding_window;
mod token_bucket;
mod window;

/// Stored times and counters are below this; anything larger is not ours.
pub(crate) const MAX_EXACT: f64 = 9_007_199_254_740_992.0;
/// The largest backlog or debt a state records, in its algorithm's units.
pub(crate) const MAX_DEBT: f64 = 2_251_799_813_685_248.0;
/// The states of every rule but the sliding window's: a tag and two big-endian doubles.
pub const STATE: usize = 17;
/// The sliding window's state: its tag, then the window, the previous and the current
/// counts.
pub const WIDE_STATE: usize = 25;

/// One decision (prelude.lua's `decide` returns).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// allowed, remaining, retry_after_us, reset_after_us, wait_us, a single request's retry.
    pub reply: [f64; 6],
    /// Whether the request is admitted.
    pub allowed: bool,
    /// The new state, `None` when nothing changes.
    pub write: Option<Vec<u8>>,
    /// When the new state is fresh again (us).
    pub fresh: f64,
    /// The same for the state read; `None` when there was none.
    pub before: Option<f64>,
}

/// `decide(v, now, n, hit, [a, b, c, d])`: `Err` is the `SGFOREIGN` error reply.
pub type Rule = fn(Option<&[u8]>, f64, f64, bool, [f64; 4]) -> Result<Decision, &'static str>;

/// The rule of an algorithm's letter (entry.lua's `deciders`), `None` for the one left to Lua
/// (the sliding log, whose state is a sorted set).
pub fn rule(letter: u8) -> Option<Rule> {
    match letter {
        b'f' => Some(fixed_window::decide),
        b'a' => Some(anchored_window::decide),
        b'g' => Some(emission::gcra),
        b'l' => Some(emission::leaky_bucket),
        b't' => Some(token_bucket::decide),
        b'w' => Some(sliding_window::decide),
        _ => None,
    }
}

/// A counting window's decision once its window is known (fixed_window.lua and
/// anchored_window.lua end alike): `count` admitted so far in the window that ends at `ends`,
/// whose state is the tag and `start` followed by the count.
#[allow(clippy::too_many_arguments)]
pub(crate) fn count_window(
    count: f64,
    l: f64,
    n: f64,
    hit: bool,
    now: f64,
    ends: f64,
    (tag, start): (u8, f64),
    before: Option<f64>,
) -> Decision {
    let (mut allowed, mut after) = (true, count);
    if n > 0.0 && count + n > l {
        allowed = false;
        if hit {
            after = l;
        }
    } else if n > 0.0 {
        after = count + n;
    }
    let window_end = ends - now;
    let reset = if after > 0.0 { window_end } else { 0.0 };
    let (mut retry, mut retry1) = (0.0, 0.0);
    if !allowed {
        retry = window_end;
        if after >= l {
            retry1 = window_end;
        }
    }
    #[allow(clippy::float_cmp)]
    let write = (after != count).then(|| state(tag, start, after));
    Decision {
        reply: [flag(allowed), l - after, retry, reset, 0.0, retry1],
        allowed,
        write,
        fresh: ends,
        before,
    }
}

/// `struct.unpack('>dd', v, 2)` of a state tagged `tag`, or `None`.
pub(crate) fn read(v: &[u8], tag: u8) -> Option<(f64, f64)> {
    if v.len() != STATE || v[0] != tag {
        return None;
    }
    let a = f64::from_be_bytes(v[1..9].try_into().ok()?);
    let b = f64::from_be_bytes(v[9..17].try_into().ok()?);
    Some((a, b))
}

/// `struct.pack('>Bdd', tag, a, b)`.
pub(crate) fn state(tag: u8, a: f64, b: f64) -> Vec<u8> {
    let mut out = Vec::with_capacity(STATE);
    out.push(tag);
    out.extend_from_slice(&a.to_be_bytes());
    out.extend_from_slice(&b.to_be_bytes());
    out
}

/// Lua's `x ~= floor(x)`: true for a fraction and for NaN.
pub(crate) fn fractional(x: f64) -> bool {
    #[allow(clippy::float_cmp)]
    let whole = x == x.floor();
    !whole
}

/// `allowed and 1 or 0`.
pub(crate) fn flag(allowed: bool) -> f64 {
    if allowed {
        1.0
    } else {
        0.0
    }
}
