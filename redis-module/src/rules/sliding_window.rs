//! sliding_window.lua, ported (see there for the rule, the state and the range).

use super::window::{instant, window_of};
use super::{flag, fractional, Decision, MAX_EXACT, WIDE_STATE as WIDE};

const FOREIGN: &str =
    "SGFOREIGN the key holds a value that is not a sluicegate SlidingWindow state";

/// `sliding_earliest`: the least elapsed x in [0, d) at which a request of k fits in a window
/// whose fading count is `fading` and current count `current`, or `None`.
#[allow(clippy::float_cmp)]
fn earliest(fading: f64, current: f64, k: f64, l: f64, d: f64) -> Option<f64> {
    let room = l - current - k + 1.0;
    if room <= 0.0 {
        return None;
    }
    if fading == 0.0 {
        return Some(0.0);
    }
    let x = d - (room * d / fading).ceil() + 1.0;
    if x < 0.0 {
        return Some(0.0);
    }
    if x >= d {
        return None;
    }
    Some(x)
}

/// `sliding_retry`: the first whole us at which a request of k is admitted if nothing else
/// is recorded.
#[allow(clippy::too_many_arguments)]
fn retry(w: f64, prev: f64, curr: f64, k: f64, now: f64, l: f64, m: f64, d: f64) -> f64 {
    if let Some(x) = earliest(prev, curr, k, l, d) {
        let mut t = instant(w, x, m, d);
        if t < now {
            t = now;
        }
        if t < instant(w + 1.0, 0.0, m, d) {
            return t;
        }
    }
    if let Some(x) = earliest(curr, 0.0, k, l, d) {
        let t = instant(w + 1.0, x, m, d);
        if t < instant(w + 2.0, 0.0, m, d) {
            return t;
        }
    }
    instant(w + 2.0, 0.0, m, d)
}

/// `struct.unpack('>ddd', v, 2)` of a state tagged `W`, or `None`.
fn read(v: &[u8]) -> Option<(f64, f64, f64)> {
    if v.len() != WIDE || v[0] != b'W' {
        return None;
    }
    let at = |i: usize| v[i..i + 8].try_into().ok().map(f64::from_be_bytes);
    Some((at(1)?, at(9)?, at(17)?))
}

#[allow(clippy::float_cmp)]
pub(crate) fn decide(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    [l, m, d, _]: [f64; 4],
) -> Result<Decision, &'static str> {
    let (mut w, mut e) = window_of(now, m, d);
    let (mut prev, mut curr, mut before) = (0.0, 0.0, None);
    if let Some(v) = v {
        let (sw, p, c) = read(v).ok_or(FOREIGN)?;
        if fractional(sw)
            || sw < 0.0
            || sw >= MAX_EXACT
            || fractional(p)
            || p < 0.0
            || p > l
            || fractional(c)
            || c < 0.0
            || c > l
        {
            return Err(FOREIGN);
        }
        // As written: fresh when its current count has left the trailing period.
        if c > 0.0 {
            before = Some(instant(sw + 2.0, 0.0, m, d));
        }
        if w == sw {
            (prev, curr) = (p, c);
        } else if w == sw + 1.0 {
            prev = c;
        } else if w < sw {
            // A clock stepping back counts as the start of the state's window.
            (w, e, prev, curr) = (sw, 0.0, p, c);
        }
    }

    let room = l - curr - n + 1.0;
    let allowed = n == 0.0 || (room > 0.0 && prev * (d - e) < room * d);
    let (mut after, mut over) = (curr, false);
    if n > 0.0 {
        if allowed {
            after = curr + n;
        } else if hit {
            over = true;
            after = curr + n;
            if after > l {
                after = l;
            }
        }
    }

    let headroom = l * d - prev * (d - e) - after * d;
    let remaining = if headroom > 0.0 {
        (headroom / d).ceil()
    } else {
        0.0
    };
    let reset = if after > 0.0 {
        instant(w + 2.0, 0.0, m, d) - now
    } else if prev > 0.0 {
        instant(w + 1.0, 0.0, m, d) - now
    } else {
        0.0
    };
    let (mut retry_us, mut retry1) = (0.0, 0.0);
    if over {
        retry_us = retry(w, prev, after, 1.0, now, l, m, d) - now;
        retry1 = retry_us;
    } else if !allowed {
        retry_us = retry(w, prev, curr, n, now, l, m, d) - now;
        if remaining == 0.0 {
            retry1 = retry(w, prev, curr, 1.0, now, l, m, d) - now;
        }
    }

    let write = (after != curr).then(|| {
        let mut out = Vec::with_capacity(WIDE);
        out.push(b'W');
        for x in [w, prev, after] {
            out.extend_from_slice(&x.to_be_bytes());
        }
        out
    });
    Ok(Decision {
        reply: [flag(allowed), remaining, retry_us, reset, 0.0, retry1],
        allowed,
        write,
        fresh: now + reset,
        before,
    })
}
