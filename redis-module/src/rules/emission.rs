//! emission.lua (the theoretical-arrival-time core), gcra.lua and leaky_bucket.lua, ported
//! (see there for the rule, units and range).

use super::{flag, fractional, read, state, Decision, MAX_DEBT, MAX_EXACT};

pub(crate) fn gcra(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    p: [f64; 4],
) -> Result<Decision, &'static str> {
    emission(
        v,
        now,
        n,
        hit,
        p,
        b'G',
        "SGFOREIGN the key holds a value that is not a sluicegate Gcra state",
        false,
    )
}

pub(crate) fn leaky_bucket(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    p: [f64; 4],
) -> Result<Decision, &'static str> {
    emission(
        v,
        now,
        n,
        hit,
        p,
        b'L',
        "SGFOREIGN the key holds a value that is not a sluicegate LeakyBucket state",
        true,
    )
}

#[allow(clippy::too_many_arguments)]
fn emission(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    [dd, t, cap, need]: [f64; 4],
    tag: u8,
    foreign: &'static str,
    shaping: bool,
) -> Result<Decision, &'static str> {
    let (mut backlog, mut before) = (0.0, None);
    if let Some(v) = v {
        let (q, r) = read(v, tag).ok_or(foreign)?;
        if fractional(q) || q < 0.0 || q >= MAX_EXACT || fractional(r) || r < 0.0 || r >= dd {
            return Err(foreign);
        }
        before = Some(if r > 0.0 { q + 1.0 } else { q });
        let ahead = q - now;
        if ahead >= 0.0 {
            // A clock stepping back far can only make the backlog larger: saturate.
            if ahead > (MAX_DEBT / dd).floor() {
                backlog = MAX_DEBT;
            } else {
                backlog = ahead * dd + r;
                if backlog > MAX_DEBT {
                    backlog = MAX_DEBT;
                }
            }
        }
    }
    let (mut allowed, mut after, mut over) = (true, backlog, false);
    if n > 0.0 {
        if backlog + need <= cap {
            after = backlog + need;
        } else {
            allowed = false;
            if hit {
                over = true;
                after = backlog + need;
                if after > MAX_DEBT {
                    after = MAX_DEBT;
                }
            }
        }
    }
    let remaining = if after <= cap {
        ((cap - after) / t).floor()
    } else {
        0.0
    };
    let reset = (after / dd).ceil();
    let (mut retry, mut retry1, mut wait) = (0.0, 0.0, 0.0);
    if over {
        retry = ((after - (cap - t)) / dd).ceil();
        retry1 = retry;
    } else if !allowed {
        retry = ((backlog - (cap - need)) / dd).ceil();
        if backlog > cap - t {
            retry1 = ((backlog - (cap - t)) / dd).ceil();
        }
    } else if shaping && n > 0.0 {
        wait = (backlog / dd).ceil();
    }
    #[allow(clippy::float_cmp)]
    let write = (after != backlog).then(|| {
        let q = (after / dd).floor();
        state(tag, now + q, after - q * dd)
    });
    Ok(Decision {
        reply: [flag(allowed), remaining, retry, reset, wait, retry1],
        allowed,
        write,
        fresh: now + reset,
        before,
    })
}
