//! The client side (features `http` and `tokio`): [`ThrottleLayer`] delays outgoing requests
//! until a provider's quota allows them, so a client never exceeds it ("at most 50 emails a
//! second to the mail API") instead of collecting `429`s.

mod config;
mod layer;
mod service;

pub use layer::ThrottleLayer;
pub use service::{Throttle, ThrottleFuture};

/// The error type of [`Throttle`]: the inner client's error, or why the limit could not be
/// waited for (a [`KeyError`](super::KeyError), or a
/// [`BackendError`](crate::backend::BackendError) such as a cost above the quota's
/// capacity).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
