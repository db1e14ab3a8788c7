//! [`RateLimitService`]: asks its [`RequestLimiter`] for a verdict, then answers or passes on.

use super::future::ResponseFuture;
use super::headers::RateLimitHeaders;
use super::limiter::RequestLimiter;
use super::verdict::{Deciding, Verdict};
use bytes::Bytes;
use http::{Request, Response};
use std::fmt;
use std::task::{Context, Poll};
use std::time::Duration;
use tower_service::Service;

/// The service [`RateLimitLayer`](super::RateLimitLayer) wraps around another.
///
/// Its responses have the inner service's body type, which must be buildable from the bytes
/// of the layer's own answers (`From<Bytes>`: axum's `Body`, `http_body_util::Full<Bytes>`,
/// `Vec<u8>`...), so no body is wrapped and re-boxed on the way out.
#[derive(Clone)]
pub struct RateLimitService<S> {
    inner: S,
    limiter: RequestLimiter,
}

impl<S> RateLimitService<S> {
    pub(crate) fn new(inner: S, limiter: RequestLimiter) -> Self {
        RateLimitService { inner, limiter }
    }

    /// The wrapped service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for RateLimitService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqBody: Send + 'static,
    ResBody: From<Bytes> + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, ResBody, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let (parts, body) = request.into_parts();
        match self.limiter.decide(&parts) {
            Deciding::Now(Verdict::Refuse(response)) => {
                ResponseFuture::ready(response.map(ResBody::from))
            }
            Deciding::Now(Verdict::Pass { headers, wait }) if wait.is_zero() => {
                let request = Request::from_parts(parts, body);
                ResponseFuture::inner(self.inner.call(request), headers)
            }
            Deciding::Now(Verdict::Pass { headers, wait }) => {
                let mut inner = self.take_ready_inner();
                ResponseFuture::boxed(Box::pin(async move {
                    sleep(wait).await;
                    let response = inner.call(Request::from_parts(parts, body)).await?;
                    Ok(stamped(response, headers))
                }))
            }
            Deciding::Later(pending) => {
                let mut inner = self.take_ready_inner();
                ResponseFuture::boxed(Box::pin(async move {
                    match pending.await {
                        Verdict::Refuse(response) => Ok(response.map(ResBody::from)),
                        Verdict::Pass { headers, wait } => {
                            sleep(wait).await;
                            let response = inner.call(Request::from_parts(parts, body)).await?;
                            Ok(stamped(response, headers))
                        }
                    }
                }))
            }
        }
    }
}

impl<S: Clone> RateLimitService<S> {
    /// The inner service, which `poll_ready` made ready, leaving a clone in its place (the
    /// clone is made ready by the next `poll_ready`): what a future that calls it later needs.
    fn take_ready_inner(&mut self) -> S {
        let clone = self.inner.clone();
        std::mem::replace(&mut self.inner, clone)
    }
}

fn stamped<B>(mut response: Response<B>, headers: RateLimitHeaders) -> Response<B> {
    headers.apply(response.headers_mut());
    response
}

/// A leaky bucket's shaping delay, slept on tokio's timer (feature `http` brings `tokio`: the
/// service runs in a tokio runtime, as axum's, hyper's and tonic's servers do).
async fn sleep(wait: Duration) {
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
}

impl<S: fmt::Debug> fmt::Debug for RateLimitService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitService")
            .field("inner", &self.inner)
            .field("limiter", &self.limiter)
            .finish()
    }
}
