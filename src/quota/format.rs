//! Writes a quota the way the parser reads it back.

use super::units::UNITS;
use super::Quota;
use std::fmt;

/// `"100/minute"`, `"5/30s"`, `"10/500ms"`, with `" burst N"` when the burst is not the limit
/// and `" anchored"` for an anchored quota.
pub(super) fn write_quota(f: &mut fmt::Formatter<'_>, quota: &Quota) -> fmt::Result {
    let period = quota.period_nanos();
    // Every period is a whole number of nanoseconds, so the last unit always divides it.
    let unit = UNITS
        .iter()
        .find(|unit| period.is_multiple_of(unit.nanos))
        .unwrap_or(&UNITS[UNITS.len() - 1]);
    let count = period / unit.nanos;
    match (count, unit.word) {
        (1, Some(word)) => write!(f, "{}/{}", quota.limit(), word)?,
        _ => write!(f, "{}/{}{}", quota.limit(), count, unit.abbrev)?,
    }
    if quota.burst() != quota.limit() {
        write!(f, " burst {}", quota.burst())?;
    }
    if quota.is_anchored() {
        f.write_str(" anchored")?;
    }
    Ok(())
}
