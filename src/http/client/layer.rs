//! [`ThrottleLayer`]: the client-side layer's settings.

use super::config::Config;
use super::service::Throttle;
use crate::backend::Backend;
use crate::http::{Cost, Global, KeyExtractor};
use crate::wait::Jitter;
use http::request::Parts;
use std::fmt;
use std::sync::Arc;
use tower_layer::Layer;

/// A tower [`Layer`] for HTTP clients that waits, before each request, until the limit
/// admits it: requests leave no faster than the quota, however fast they are made.
///
/// Each request is counted against the key its [extractor](Self::key) finds (by default one
/// key for everything, [`Global`]; `key_fn` on the host gives one quota per provider) at its
/// [cost](Self::cost). Waiting is [`UntilReady`](crate::wait::UntilReady): it sleeps exactly
/// until the limiter would admit the request, re-checking then, and a cancelled request
/// consumes nothing.
///
/// ```
/// use sluicegate::http::client::ThrottleLayer;
/// use sluicegate::{Limiter, Quota};
///
/// // At most 50 emails a second to the mail API, in bursts of at most 5.
/// let mail_api = ThrottleLayer::new(Limiter::<sluicegate::algorithm::Gcra>::new(
///     Quota::per_second(50).with_burst(5),
/// )?);
/// // tower::ServiceBuilder::new().layer(mail_api).service(hyper_client)
/// # let _ = mail_api;
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Clone)]
pub struct ThrottleLayer {
    pub(crate) config: Arc<Config>,
}

impl ThrottleLayer {
    /// Waits on `backend` (a [`Limiter`](crate::Limiter) for one quota, a
    /// [`KeyedLimiter<String, _>`](crate::KeyedLimiter) with a [key](Self::key) for one per
    /// host or account, or a shared Redis limiter so that several clients share one quota).
    pub fn new(backend: impl Backend<str> + 'static) -> Self {
        ThrottleLayer::shared(Arc::new(backend))
    }

    /// Waits on a shared `backend`.
    pub fn shared(backend: Arc<dyn Backend<str>>) -> Self {
        ThrottleLayer {
            config: Arc::new(Config {
                backend,
                key: Arc::new(Global),
                cost: Cost::Fixed(1),
                jitter: Jitter::NONE,
            }),
        }
    }

    fn with(mut self, change: impl FnOnce(&mut Config)) -> Self {
        change(Arc::make_mut(&mut self.config));
        self
    }

    /// Counts requests against the key `extractor` finds.
    pub fn key(self, extractor: impl KeyExtractor) -> Self {
        self.with(|config| config.key = Arc::new(extractor))
    }

    /// Every request costs `cost`.
    pub fn cost(self, cost: u32) -> Self {
        self.with(|config| config.cost = Cost::Fixed(cost))
    }

    /// A request costs what `cost` computes from it.
    pub fn cost_fn(self, cost: impl Fn(&Parts) -> u32 + Send + Sync + 'static) -> Self {
        self.with(|config| config.cost = Cost::Function(Arc::new(cost)))
    }

    /// Adds `jitter` to each wait, so that many waiting requests do not all leave at once.
    pub fn jitter(self, jitter: Jitter) -> Self {
        self.with(|config| config.jitter = jitter)
    }
}

impl<S> Layer<S> for ThrottleLayer {
    type Service = Throttle<S>;

    fn layer(&self, inner: S) -> Throttle<S> {
        Throttle::new(inner, Arc::clone(&self.config))
    }
}

impl fmt::Debug for ThrottleLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThrottleLayer")
            .field("quota", &self.config.backend.quota())
            .field("cost", &self.config.cost)
            .field("jitter", &self.config.jitter)
            .finish_non_exhaustive()
    }
}
