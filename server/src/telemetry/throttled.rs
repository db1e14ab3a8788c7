//! The service's own warnings, throttled as the library's are: at most one line a second
//! per kind, the next one saying how many were held back (`suppressed`).

use sluicegate::telemetry::Throttle;
use std::sync::LazyLock;
use std::time::Instant;

/// The clock the throttles read: nanoseconds since the first warning of the process.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// `Some(suppressed since the last line)` when a line of `throttle`'s kind may be written
/// now; `None` (counted) when one was written less than a second ago.
pub fn admit(throttle: &Throttle) -> Option<u64> {
    let now = u64::try_from(EPOCH.elapsed().as_nanos()).unwrap_or(u64::MAX);
    throttle.admit(now)
}
