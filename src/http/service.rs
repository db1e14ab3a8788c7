//! [`RateLimitService`]: extracts each limit's key, decides, and answers or passes on.

use super::decide::{self, Outcome};
use super::future::ResponseFuture;
use super::headers::Stamp;
use super::key::KeyBuf;
use super::layer::Shared;
use crate::backend::{BackendError, BackendErrorKind, Op};
use bytes::Bytes;
use http::request::Parts;
use http::{Request, Response};
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
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
    shared: Arc<Shared>,
}

impl<S> RateLimitService<S> {
    pub(crate) fn new(inner: S, shared: Arc<Shared>) -> Self {
        RateLimitService { inner, shared }
    }

    /// The wrapped service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

/// A request's keys and costs, one per limit.
struct Extracted {
    keys: Vec<KeyBuf>,
    costs: Vec<u32>,
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
        let shared = &*self.shared;
        if shared.exempt(&parts) {
            let request = Request::from_parts(parts, body);
            return ResponseFuture::inner(self.inner.call(request), Stamp::default());
        }
        if let [limit] = &shared.limits[..] {
            // One limit, the common case: nothing allocated on the way.
            let (key, cost) = match shared.key_and_cost(0, &parts) {
                Ok(found) => found,
                Err(response) => return ResponseFuture::ready(response),
            };
            let on_error = shared.on_backend_error;
            let decided = match limit.backend.decide(key.as_str(), cost, Op::Check).now() {
                Ok(result) => Some(decide::single(result, on_error)),
                // A remote backend's call is lazy: dropped unpolled, it did nothing; the
                // decision is made again, owned, in a boxed future.
                Err(lazy) => {
                    drop(lazy);
                    None
                }
            };
            return match decided {
                Some(outcome) => self.proceed(outcome, parts, body),
                None => {
                    let extracted = Extracted {
                        keys: vec![key],
                        costs: vec![cost],
                    };
                    self.later(parts, body, extracted)
                }
            };
        }
        let count = shared.limits.len();
        let mut extracted = Extracted {
            keys: Vec::with_capacity(count),
            costs: Vec::with_capacity(count),
        };
        for i in 0..count {
            let (key, cost) = match shared.key_and_cost(i, &parts) {
                Ok(found) => found,
                Err(response) => return ResponseFuture::ready(response),
            };
            extracted.keys.push(key);
            extracted.costs.push(cost);
        }
        if !shared.immediate {
            return self.later(parts, body, extracted);
        }
        let on_error = shared.on_backend_error;
        let deciding = decide::all(&shared.limits, &extracted.keys, &extracted.costs, on_error);
        let outcome = match pin!(deciding).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(outcome) => outcome,
            // Every backend answered at once when the layer was built; one that now waits
            // broke the seam's contract. Its reservations so far stay consumed (erring toward
            // denying) and the request is handled as a backend error.
            Poll::Pending => {
                let error = BackendError::new(
                    BackendErrorKind::Unavailable,
                    "an in-process backend did not answer at once",
                );
                decide::failed(None, error, on_error)
            }
        };
        self.proceed(outcome, parts, body)
    }
}

impl<S> RateLimitService<S> {
    /// Answers a decided request: a rejection now, or the inner service's response.
    fn proceed<ReqBody, ResBody>(
        &mut self,
        outcome: Outcome,
        parts: Parts,
        body: ReqBody,
    ) -> ResponseFuture<S::Future, ResBody, S::Error>
    where
        S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Send + 'static,
        ReqBody: Send + 'static,
        ResBody: From<Bytes> + Send + 'static,
    {
        match verdict(&self.shared, outcome) {
            Err(response) => ResponseFuture::ready(response),
            Ok((stamp, wait)) if wait.is_zero() => {
                let request = Request::from_parts(parts, body);
                ResponseFuture::inner(self.inner.call(request), stamp)
            }
            Ok((stamp, wait)) => {
                let mut inner = self.take_ready_inner();
                ResponseFuture::boxed(Box::pin(async move {
                    sleep(wait).await;
                    let response = inner.call(Request::from_parts(parts, body)).await?;
                    Ok(stamped(response, stamp))
                }))
            }
        }
    }

    /// Decides in a boxed future: a remote backend's round trip.
    fn later<ReqBody, ResBody>(
        &mut self,
        parts: Parts,
        body: ReqBody,
        extracted: Extracted,
    ) -> ResponseFuture<S::Future, ResBody, S::Error>
    where
        S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Send + 'static,
        ReqBody: Send + 'static,
        ResBody: From<Bytes> + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let mut inner = self.take_ready_inner();
        ResponseFuture::boxed(Box::pin(async move {
            let on_error = shared.on_backend_error;
            let Extracted { keys, costs } = extracted;
            let outcome =
                if let ([limit], [key], [cost]) = (&shared.limits[..], &keys[..], &costs[..]) {
                    let result = limit.backend.decide(key.as_str(), *cost, Op::Check).await;
                    decide::single(result, on_error)
                } else {
                    decide::all(&shared.limits, &keys, &costs, on_error).await
                };
            match verdict(&shared, outcome) {
                Err(response) => Ok(response),
                Ok((stamp, wait)) => {
                    sleep(wait).await;
                    let response = inner.call(Request::from_parts(parts, body)).await?;
                    Ok(stamped(response, stamp))
                }
            }
        }))
    }

    /// The inner service, which `poll_ready` made ready, leaving a clone in its place (the
    /// clone is made ready by the next `poll_ready`): what a future that calls it later needs.
    fn take_ready_inner(&mut self) -> S
    where
        S: Clone,
    {
        let clone = self.inner.clone();
        std::mem::replace(&mut self.inner, clone)
    }
}

/// A rejection to answer, or the headers and shaping delay of an admission.
fn verdict<B: From<Bytes>>(
    shared: &Shared,
    outcome: Outcome,
) -> Result<(Stamp, Duration), Response<B>> {
    match outcome {
        Outcome::Admit { report, wait } => Ok((shared.admitted(report.as_ref()), wait)),
        Outcome::Deny { report, violated } => Err(shared.denied(&report, violated)),
        Outcome::TableFull { limit } => Err(shared.table_full(limit)),
        Outcome::Failed { limit, error } => Err(shared.failed(limit, &error)),
    }
}

fn stamped<B>(mut response: Response<B>, stamp: Stamp) -> Response<B> {
    stamp.apply(response.headers_mut());
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
            .field("limits", &self.shared.limits)
            .finish()
    }
}
