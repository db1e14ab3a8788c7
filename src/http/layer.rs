//! [`RateLimitLayer`]: the tower adapter over a [`RequestLimiter`].

use super::limit::RequestLimit;
use super::limiter::RequestLimiter;
use super::service::RateLimitService;
use std::fmt;
use tower_layer::Layer;

/// A tower [`Layer`] that rate-limits requests by one or more named limits.
///
/// A request is admitted only if every limit admits it, and a denial consumes nothing from
/// any limit ([`all_of`](crate::backend::all_of)). Denials are answered `429` with
/// `Retry-After`; every response, allowed ones too, carries `RateLimit-Policy` and
/// `RateLimit` (see [`headers`](super#headers)). Requests whose key cannot be found get a
/// `400` saying why, never a `500`.
///
/// ```
/// use sluicegate::http::{ClientIp, HeaderKey, KeyExtractor, RateLimitLayer, RequestLimit};
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let layer = RateLimitLayer::builder()
///     .limit(RequestLimit::new("ip", KeyedLimiter::<String>::new(Quota::per_second(5))?).key(ClientIp::new()))
///     .limit(
///         RequestLimit::new("token", KeyedLimiter::<String>::new("100/minute burst 20".parse()?)?)
///             .key(HeaderKey::parse("x-api-key")?),
///     )
///     .legacy_headers(true)
///     .build()?;
/// # let _ = layer;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// It adapts a [`RequestLimiter`], where requests are decided.
#[derive(Clone)]
pub struct RateLimitLayer {
    limiter: RequestLimiter,
}

impl RateLimitLayer {
    /// The limits, in the order they are decided.
    pub fn limits(&self) -> &[RequestLimit] {
        self.limiter.limits()
    }

    /// The limiter deciding.
    pub fn limiter(&self) -> &RequestLimiter {
        &self.limiter
    }
}

impl From<RequestLimiter> for RateLimitLayer {
    fn from(limiter: RequestLimiter) -> Self {
        RateLimitLayer { limiter }
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimitService<S>;

    fn layer(&self, inner: S) -> RateLimitService<S> {
        RateLimitService::new(inner, self.limiter.clone())
    }
}

impl fmt::Debug for RateLimitLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("limiter", &self.limiter)
            .finish()
    }
}
