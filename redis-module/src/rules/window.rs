//! window.lua, ported: wall-clock-aligned windows of d units (of g ns) each, m units to the us
//! (see there for the units).

/// `window_of`: the window holding `now`, and the units elapsed in it.
pub(crate) fn window_of(now: f64, m: f64, d: f64) -> (f64, f64) {
    let qa = (now / d).floor();
    let ra = now - qa * d;
    let s = (ra * m / d).floor();
    (qa * m + s, ra * m - s * d)
}

/// `instant`: the first whole us at or after `x` units into window `w`.
pub(crate) fn instant(w: f64, x: f64, m: f64, d: f64) -> f64 {
    let qw = (w / m).floor();
    qw * d + (((w - qw * m) * d + x) / m).ceil()
}
