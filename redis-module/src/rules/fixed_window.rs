//! fixed_window.lua, ported (see there for the rule).

use super::window::{instant, window_of};
use super::{count_window, fractional, read, Decision, MAX_EXACT};

const FOREIGN: &str = "SGFOREIGN the key holds a value that is not a sluicegate FixedWindow state";

pub(crate) fn decide(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    [l, m, d, _]: [f64; 4],
) -> Result<Decision, &'static str> {
    let mut w = window_of(now, m, d).0;
    let (mut count, mut before) = (0.0, None);
    if let Some(v) = v {
        let (sw, c) = read(v, b'F').ok_or(FOREIGN)?;
        if fractional(sw) || sw < 0.0 || sw >= MAX_EXACT || fractional(c) || c < 0.0 || c > l {
            return Err(FOREIGN);
        }
        if c > 0.0 {
            before = Some(instant(sw + 1.0, 0.0, m, d));
        }
        if sw >= w {
            w = sw;
            count = c;
        }
    }
    let ends = instant(w + 1.0, 0.0, m, d);
    Ok(count_window(count, l, n, hit, now, ends, (b'F', w), before))
}
