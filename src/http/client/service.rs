//! [`Throttle`]: waits for the limit, then sends.

use super::config::Config;
use super::BoxError;
use crate::http::KeyBuf;
use crate::wait::UntilReady;
use http::Request;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower_service::Service;

/// The future [`Throttle`] returns: the wait, then the inner client's response.
pub type ThrottleFuture<T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send>>;

/// The service [`ThrottleLayer`](super::ThrottleLayer) wraps around an HTTP client.
#[derive(Clone)]
pub struct Throttle<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> Throttle<S> {
    pub(crate) fn new(inner: S, config: Arc<Config>) -> Self {
        Throttle { inner, config }
    }

    /// The wrapped client.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S, B> Service<Request<B>> for Throttle<S>
where
    S: Service<Request<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    S::Response: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ThrottleFuture<S::Response>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let config = Arc::clone(&self.config);
        // The ready client goes with the request; its clone stays for the next poll_ready.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let mut key = KeyBuf::new();
            config.key.extract(&parts, &mut key)?;
            let cost = config.cost.of(&parts);
            config
                .backend
                .until_n_ready_with_jitter(key.as_str(), cost, config.jitter)
                .await?;
            inner
                .call(Request::from_parts(parts, body))
                .await
                .map_err(Into::into)
        })
    }
}

impl<S: fmt::Debug> fmt::Debug for Throttle<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Throttle")
            .field("inner", &self.inner)
            .field("quota", &self.config.backend.quota())
            .finish_non_exhaustive()
    }
}
