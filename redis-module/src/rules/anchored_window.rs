//! anchored_window.lua, ported (see there for the rule).

use super::{count_window, fractional, read, Decision, MAX_EXACT};

const FOREIGN: &str =
    "SGFOREIGN the key holds a value that is not a sluicegate anchored FixedWindow state";

pub(crate) fn decide(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    [l, len, _, _]: [f64; 4],
) -> Result<Decision, &'static str> {
    let (mut s, mut count, mut before) = (now, 0.0, None);
    if let Some(v) = v {
        let (ss, c) = read(v, b'A').ok_or(FOREIGN)?;
        if fractional(ss) || ss < 0.0 || ss >= MAX_EXACT || fractional(c) || c < 0.0 || c > l {
            return Err(FOREIGN);
        }
        if c > 0.0 {
            before = Some(ss + len);
            if now < ss + len {
                s = ss;
                count = c;
            }
        }
    }
    let ends = s + len;
    Ok(count_window(count, l, n, hit, now, ends, (b'A', s), before))
}
