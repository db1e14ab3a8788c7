//! fixed_window.lua and window.lua's alignment, ported (see there for the rule and units).

use super::{count_window, fractional, read, Decision, MAX_EXACT};

const FOREIGN: &str = "SGFOREIGN the key holds a value that is not a sluicegate FixedWindow state";

/// window.lua's `window_of`: the window holding `now`.
fn window_of(now: f64, m: f64, d: f64) -> f64 {
    let qa = (now / d).floor();
    let ra = now - qa * d;
    let s = (ra * m / d).floor();
    qa * m + s
}

/// window.lua's `instant`: the first whole us at or after `x` units into window `w`.
pub(crate) fn instant(w: f64, x: f64, m: f64, d: f64) -> f64 {
    let qw = (w / m).floor();
    qw * d + (((w - qw * m) * d + x) / m).ceil()
}

pub(crate) fn decide(
    v: Option<&[u8]>,
    now: f64,
    n: f64,
    hit: bool,
    [l, m, d, _]: [f64; 4],
) -> Result<Decision, &'static str> {
    let mut w = window_of(now, m, d);
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
