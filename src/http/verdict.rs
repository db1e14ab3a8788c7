//! [`Verdict`]: what a [`RequestLimiter`](super::RequestLimiter) says of a request, and
//! [`Deciding`], for backends that must be waited on.

use super::headers::RateLimitHeaders;
use bytes::Bytes;
use http::Response;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// What to do with a decided request.
#[derive(Debug)]
pub enum Verdict {
    /// Let it through, after `wait` (a leaky bucket's shaping delay; zero otherwise), and add
    /// `headers` to its response.
    Pass {
        /// The rate-limit headers for the response.
        headers: RateLimitHeaders,
        /// How long to hold the request before passing it on.
        wait: Duration,
    },
    /// Answer with this response instead: `429` (over a limit), `400` (a key missing from
    /// the request), `413` (a cost no limit can ever admit), `503` (a backend failed and
    /// errors deny, or a keyed table is full), with its headers (`Retry-After`, the
    /// rate-limit headers, `Content-Type`) and body already in place.
    Refuse(Response<Bytes>),
}

impl Verdict {
    /// True for [`Verdict::Pass`].
    pub fn passes(&self) -> bool {
        matches!(self, Verdict::Pass { .. })
    }
}

/// A request being decided: at once when every limit is in process, or later, when a limit
/// waits on Redis.
#[derive(Debug)]
pub enum Deciding {
    /// Decided.
    Now(Verdict),
    /// To be awaited; it owns what it needs, so it may outlive the request.
    Later(PendingVerdict),
}

impl Deciding {
    /// The verdict, awaiting it if need be.
    pub async fn verdict(self) -> Verdict {
        match self {
            Deciding::Now(verdict) => verdict,
            Deciding::Later(pending) => pending.await,
        }
    }
}

/// A verdict that waits on a remote backend: a `Send + 'static` future.
pub struct PendingVerdict(pub(crate) Pin<Box<dyn Future<Output = Verdict> + Send>>);

impl Future for PendingVerdict {
    type Output = Verdict;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Verdict> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for PendingVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PendingVerdict")
    }
}
