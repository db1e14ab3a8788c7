//! Waiting instead of refusing (feature `tokio`): `until_ready` and `until_n_ready` on
//! [`Limiter`](crate::Limiter), [`KeyedLimiter`](crate::KeyedLimiter) and any
//! [`Backend`](crate::backend::Backend) (through [`UntilReady`]), sleeping on tokio's timer
//! exactly until a denied request would be admitted, with optional [`Jitter`].

mod backend;
mod jitter;
mod limiters;
mod until;

pub use backend::UntilReady;
pub use jitter::Jitter;
