//! [`NativeClock`]: the engine's `ManualClock`, for tests; time in milliseconds.

use napi::{Error, Status};
use napi_derive::napi;
use sluicegate::clock::{Clock, ManualClock};

/// A clock moved by hand; clones of the inner clock (held by every limiter built on it)
/// share one time.
#[napi]
pub struct NativeClock {
    pub(crate) clock: ManualClock,
}

#[napi]
impl NativeClock {
    /// A clock at `ms` milliseconds after the UNIX epoch.
    #[napi(constructor)]
    pub fn new(ms: f64) -> napi::Result<Self> {
        let clock = ManualClock::new();
        clock.set_nanos(nanos(ms)?);
        Ok(NativeClock { clock })
    }

    /// Moves time forward by `ms` milliseconds, rounded to the nanosecond.
    #[napi]
    pub fn advance(&self, ms: f64) -> napi::Result<()> {
        let by = nanos(ms)?;
        self.clock.set_nanos(self.clock.now().saturating_add(by));
        Ok(())
    }

    /// Sets the time to `ms` milliseconds after the epoch (may go backwards).
    #[napi]
    pub fn set(&self, ms: f64) -> napi::Result<()> {
        self.clock.set_nanos(nanos(ms)?);
        Ok(())
    }

    /// Milliseconds since the epoch.
    #[napi]
    pub fn now(&self) -> f64 {
        self.clock.now() as f64 / 1e6
    }
}

/// `ms` milliseconds as whole nanoseconds: the whole milliseconds exactly, the fraction
/// rounded to the nearest nanosecond.
fn nanos(ms: f64) -> napi::Result<u64> {
    if !ms.is_finite() || ms < 0.0 {
        return Err(Error::new(
            Status::InvalidArg,
            format!("a time must be a finite number of milliseconds, 0 or more (got {ms})"),
        ));
    }
    let whole = ms.trunc();
    let fraction = ((ms - whole) * 1e6).round() as u64;
    Ok((whole as u64)
        .saturating_mul(1_000_000)
        .saturating_add(fraction))
}
