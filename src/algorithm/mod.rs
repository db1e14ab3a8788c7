//! The six algorithms, as pure transitions on packed state.
//!
//! Each type here is a marker chosen as the `A` parameter of a [`Limiter`](crate::Limiter) or
//! a [`KeyedLimiter`](crate::KeyedLimiter) (bounded by the sealed
//! [`Algorithm`](crate::Algorithm) trait, through which the state layer runs them). The rule
//! itself is a pure function `(state, now, cost, params) -> (new state or none, Decision)`: no
//! atomics, no clock, no allocation, nothing about where the state lives. One
//! compare-and-swap loop applies it to an `AtomicU64`; [`SlidingLog`], whose state is a ring
//! of timestamps, has its own small concurrent ring.
//!
//! Conventions shared by all six:
//! - time is nanoseconds since the clock's epoch, clamped to `2^62 - 1` (146 years);
//! - a reading earlier than the state's own time counts as the state's time, so a clock
//!   stepping backwards never over-admits;
//! - an admitted request stops counting exactly one `period` after it was admitted: windows
//!   are half-open, `[t, t + period)`;
//! - a quota an algorithm cannot run exactly within its 64 bits is refused when the limiter
//!   is built, with a [`QuotaError::Unsupported`](crate::QuotaError::Unsupported) naming the
//!   bound it hit.

mod anchored_window;
pub(crate) mod divide;
pub(crate) mod emission;
mod fixed_window;
mod gcra;
mod kind;
mod leaky_bucket;
mod op;
mod packed;
mod scale;
pub(crate) mod sliding_log;
mod sliding_window;
mod token_bucket;
mod window;

pub use fixed_window::FixedWindow;
pub use gcra::Gcra;
pub use leaky_bucket::LeakyBucket;
pub use sliding_log::SlidingLog;
pub use sliding_window::SlidingWindow;
pub use token_bucket::TokenBucket;

pub use kind::AlgorithmKind;
pub use op::Op;
pub(crate) use packed::{step, Packed};

/// The latest time any algorithm represents: 2^62 - 1 ns, about 146 years after the clock's
/// epoch. Later readings are treated as this instant (the limiter stops refilling, it never
/// over-admits or wraps).
pub(crate) const MAX_NANOS: u64 = (1 << 62) - 1;

/// Values a packed state never takes, at the top of the `u64` range: room for wherever the
/// state is stored to keep a few marker values beside the states (the keyed table stores
/// `state + HEADROOM`).
pub(crate) const HEADROOM: u64 = 16;

/// The largest packed state any algorithm produces: every parameter check keeps states at or
/// below this.
pub(crate) const MAX_STATE: u64 = u64::MAX - HEADROOM;

/// Clamps a clock reading into the represented range.
#[inline]
pub(crate) fn clamp_time(now: u64) -> u64 {
    now.min(MAX_NANOS)
}

/// Saturating conversion of a nanosecond count that may exceed `u64` (from u128 maths).
pub(crate) fn saturate_u64(value: u128) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}
