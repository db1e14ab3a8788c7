//! token_bucket.lua, ported (see there for the rule, units and range).

use super::{flag, fractional, read, state, Decision, MAX_DEBT, MAX_EXACT};

const FOREIGN: &str = "SGFOREIGN the key holds a value that is not a sluicegate TokenBucket state";

pub(crate) fn decide(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    [e, r, full, need]: [f64; 4],
) -> Result<Decision, &'static str> {
    let (mut tokens, mut stamp, mut before) = (full, now, None);
    if let Some(v) = v {
        let (t, s) = read(v, b'T').ok_or(FOREIGN)?;
        if fractional(t) || t < -MAX_DEBT || t > full || fractional(s) || s < 0.0 || s >= MAX_EXACT
        {
            return Err(FOREIGN);
        }
        // Full again at s + ceil((full - t) / R).
        before = Some(if t < full {
            s + ((full - t) / r).ceil()
        } else {
            s
        });
        if now > s {
            let missing = full - t;
            if missing > 0.0 && now - s < (missing / r).ceil() {
                tokens = t + (now - s) * r;
            }
        } else {
            // A clock stepping back refills nothing and keeps the later stamp.
            tokens = t;
            stamp = s;
        }
    }
    let (mut allowed, mut after, mut over) = (true, tokens, false);
    if n > 0.0 {
        if tokens >= need {
            after = tokens - need;
        } else {
            allowed = false;
            if hit {
                over = true;
                after = tokens - need;
                if after < -MAX_DEBT {
                    after = -MAX_DEBT;
                }
            }
        }
    }
    let remaining = if after >= e { (after / e).floor() } else { 0.0 };
    let reset = if after < full {
        ((full - after) / r).ceil()
    } else {
        0.0
    };
    let (mut retry, mut retry1) = (0.0, 0.0);
    if over {
        retry = ((e - after) / r).ceil();
        retry1 = retry;
    } else if !allowed {
        retry = ((need - tokens) / r).ceil();
        if tokens < e {
            retry1 = ((e - tokens) / r).ceil();
        }
    }
    #[allow(clippy::float_cmp)]
    let write = (after != tokens).then(|| state(b'T', after, stamp));
    let fresh = if after < full {
        stamp + ((full - after) / r).ceil()
    } else {
        stamp
    };
    Ok(Decision {
        reply: [flag(allowed), remaining, retry, reset, 0.0, retry1],
        allowed,
        write,
        fresh,
        before,
    })
}
