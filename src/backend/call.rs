//! [`Call`]: the future a [`Backend`](super::Backend) returns, ready at once for in-process
//! backends (no allocation, no waker), boxed for remote ones.

use super::BackendError;
use crate::decision::Decision;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A backend's answer, as a future: `Result<T, BackendError>`.
///
/// An in-process backend answers before returning ([`Call::ready`]): awaiting it completes at
/// once, and [`Call::now`] reads it without an executor. A remote backend returns a boxed
/// future ([`Call::new`]). `Call` is `Send` and `Unpin`, so it can be awaited from
/// `tokio::spawn`ed tasks and stored in hand-written futures.
#[must_use = "a Call does nothing for a remote backend unless awaited"]
pub struct Call<'a, T = Decision> {
    state: State<'a, T>,
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, BackendError>> + Send + 'a>>;

enum State<'a, T> {
    /// `None` once taken.
    Ready(Option<Result<T, BackendError>>),
    Pending(Boxed<'a, T>),
}

impl<'a, T> Call<'a, T> {
    /// An answer already known.
    #[inline]
    pub fn ready(result: Result<T, BackendError>) -> Self {
        Call {
            state: State::Ready(Some(result)),
        }
    }

    /// An answer `future` will give.
    pub fn new(future: impl Future<Output = Result<T, BackendError>> + Send + 'a) -> Self {
        Call {
            state: State::Pending(Box::pin(future)),
        }
    }

    /// The answer if it is already known (always, for in-process backends), or the call
    /// back to await.
    #[inline]
    pub fn now(self) -> Result<Result<T, BackendError>, Self> {
        match self.state {
            State::Ready(Some(result)) => Ok(result),
            state => Err(Call { state }),
        }
    }
}

// Nothing is ever pinned in place: a ready value is moved out, a pending future is boxed.
impl<T> Unpin for Call<'_, T> {}

impl<T> Future for Call<'_, T> {
    type Output = Result<T, BackendError>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.state {
            State::Ready(result) => {
                Poll::Ready(result.take().expect("Call polled after completion"))
            }
            State::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

impl<T> fmt::Debug for Call<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Ready(Some(_)) => "ready",
            State::Ready(None) => "taken",
            State::Pending(_) => "pending",
        };
        f.debug_struct("Call").field("state", &state).finish()
    }
}
