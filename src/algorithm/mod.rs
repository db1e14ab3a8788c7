//! The six algorithms' pure rules: each a transition on packed state (the sliding log's, on a
//! snapshot of its log), with no atomics, no clock, no allocation and nothing about where the
//! state lives. Private: [`crate::algorithm`] is their public face, beside the
//! [`Algorithm`](crate::algorithm::Algorithm) trait through which the state layer runs them.

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
