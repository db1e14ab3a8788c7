//! Waiting instead of refusing (feature `tokio`): `until_ready` and `until_n_ready` on
//! [`Limiter`](crate::Limiter), [`KeyedLimiter`](crate::KeyedLimiter) and any
//! [`Backend`](crate::backend::Backend) (through [`UntilReady`]), sleeping on tokio's timer
//! exactly until a denied request would be admitted, with optional [`Jitter`]; and
//! [`WaitQueue`], waiting in line: first come first served per key, bounded by `max_queue`
//! and `max_wait`, the one queue behind Node's `throttle` and Python's `acquire` and `wait`.

mod backend;
mod jitter;
mod limiters;
mod queue;
mod until;

pub use backend::UntilReady;
pub use jitter::Jitter;
pub use queue::{Next, Refused, Ticket, WaitQueue};
