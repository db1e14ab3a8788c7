//! [`ResponseFuture`]: the inner service's response with the headers added, a rejection, or
//! (for remote backends and shaping delays) a boxed decision.

use super::headers::RateLimitHeaders;
use http::Response;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

type Boxed<B, E> = Pin<Box<dyn Future<Output = Result<Response<B>, E>> + Send>>;

/// The future [`RateLimitService`](super::RateLimitService) returns: the inner service's
/// response with the headers added, or the layer's own.
///
/// With in-process limits the decision is made before this future exists: it either waits
/// for the inner service (then adds the headers) or holds the rejection, allocating nothing.
/// Only a decision that must wait (a remote backend's round trip, a leaky bucket's shaping
/// delay) is boxed.
pub struct ResponseFuture<F, B, E> {
    state: State<F, B, E>,
}

enum State<F, B, E> {
    Inner {
        future: F,
        stamp: Option<RateLimitHeaders>,
    },
    Ready(Option<Response<B>>),
    Boxed(Boxed<B, E>),
}

impl<F, B, E> ResponseFuture<F, B, E> {
    pub(crate) fn inner(future: F, stamp: RateLimitHeaders) -> Self {
        ResponseFuture {
            state: State::Inner {
                future,
                stamp: Some(stamp),
            },
        }
    }

    pub(crate) fn ready(response: Response<B>) -> Self {
        ResponseFuture {
            state: State::Ready(Some(response)),
        }
    }

    pub(crate) fn boxed(future: Boxed<B, E>) -> Self {
        ResponseFuture {
            state: State::Boxed(future),
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F, B, E>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is never moved while pinned: the state is only replaced when it
        // is not `Inner`, and `Inner`'s future is only re-pinned in place. The other fields
        // are not structurally pinned.
        let state = unsafe { &mut self.get_unchecked_mut().state };
        match state {
            State::Inner { future, stamp } => {
                let future = unsafe { Pin::new_unchecked(future) };
                let mut response = ready!(future.poll(cx))?;
                if let Some(stamp) = stamp.take() {
                    stamp.apply(response.headers_mut());
                }
                Poll::Ready(Ok(response))
            }
            State::Ready(response) => match response.take() {
                Some(response) => Poll::Ready(Ok(response)),
                None => Poll::Pending,
            },
            State::Boxed(future) => future.as_mut().poll(cx),
        }
    }
}

impl<F, B, E> fmt::Debug for ResponseFuture<F, B, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Inner { .. } => "inner",
            State::Ready(_) => "ready",
            State::Boxed(_) => "deciding",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
