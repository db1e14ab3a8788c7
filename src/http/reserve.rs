//! [`RequestLimiter::decide_reserving`]: the one HTTP decision, keeping for a passed request
//! the [`Refund`] that gives its cost back after the response. Opt-in: [`decide`] keeps no
//! receipt, and is not slowed by this path.
//!
//! [`decide`]: RequestLimiter::decide

use super::decide;
use super::headers::RateLimitHeaders;
use super::limiter::{Extracted, RequestLimiter, Settings};
use super::refund::Refund;
use super::verdict::Verdict;
use crate::backend::{BackendError, BackendErrorKind};
use std::fmt;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A request decided by [`RequestLimiter::decide_reserving`]: its verdict, and for a passed
/// request that consumed on some limit, what giving that back takes.
#[derive(Debug)]
pub struct Reserved {
    /// The verdict, exactly as [`RequestLimiter::decide`] would give it.
    pub verdict: Verdict,
    /// `Some` when the request passed and consumed on a limit whose backend can undo (refused
    /// and exempt requests consumed nothing; a backend that failed, with errors allowed,
    /// consumed nothing there).
    pub refund: Option<Refund>,
}

/// A request being decided with reservations: at once when every limit is in process, or
/// later, when a limit waits on Redis (as [`Deciding`](super::Deciding)).
#[derive(Debug)]
// `Now` is the in-process case, moved once to its caller: boxing it would allocate per request.
#[allow(clippy::large_enum_variant)]
pub enum Reserving {
    /// Decided.
    Now(Reserved),
    /// To be awaited; it owns what it needs, so it may outlive the request.
    Later(PendingReserved),
}

impl Reserving {
    /// The decision, awaiting it if need be.
    pub async fn reserved(self) -> Reserved {
        match self {
            Reserving::Now(reserved) => reserved,
            Reserving::Later(pending) => pending.await,
        }
    }
}

/// A reserving decision that waits on a remote backend: a `Send + 'static` future.
pub struct PendingReserved(Pin<Box<dyn Future<Output = Reserved> + Send>>);

impl Future for PendingReserved {
    type Output = Reserved;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reserved> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for PendingReserved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PendingReserved")
    }
}

impl RequestLimiter {
    /// [`decide`](Self::decide), keeping what giving a passed request's cost back takes: the
    /// verdict is the same, and [`Reserved::refund`], dropped, keeps the request counted, or,
    /// [`refund`](Refund::refund)ed after the response, gives its cost back (exactly that
    /// cost, or nothing: see [`Refund`]). For front ends that count only some responses
    /// (express-rate-limit's `skipFailedRequests`, `skipSuccessfulRequests`).
    ///
    /// Every limit is reserved on its own (peeked, then reserved in order, as the
    /// all-or-nothing protocol does member by member): several limits on one Redis node take
    /// two round trips each instead of one script for the group.
    ///
    /// ```
    /// use sluicegate::http::{RateLimitLayer, RequestLimit, Reserving};
    /// use sluicegate::{KeyedLimiter, Quota};
    ///
    /// let limiter = RateLimitLayer::builder()
    ///     .limit(RequestLimit::new("all", KeyedLimiter::<String>::new(Quota::per_minute(1))?))
    ///     .limiter()?;
    /// let (request, ()) = http::Request::get("/sign-in").body(())?.into_parts();
    /// let Reserving::Now(first) = limiter.decide_reserving(&request) else { panic!() };
    /// assert!(first.verdict.passes());
    /// // ... the response failed: give the request back.
    /// assert_eq!(first.refund.unwrap().refund().now().unwrap()?, true);
    /// let Reserving::Now(again) = limiter.decide_reserving(&request) else { panic!() };
    /// assert!(again.verdict.passes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decide_reserving(&self, request: &http::request::Parts) -> Reserving {
        let settings = &self.settings;
        if settings.exempt(request) {
            return Reserving::Now(Reserved {
                verdict: Verdict::Pass {
                    headers: RateLimitHeaders::default(),
                    wait: Duration::ZERO,
                },
                refund: None,
            });
        }
        let extracted = match settings.extract(request) {
            Ok(extracted) => extracted,
            Err(refusal) => {
                return Reserving::Now(Reserved {
                    verdict: Verdict::Refuse(refusal),
                    refund: None,
                })
            }
        };
        if !settings.immediate {
            let settings = Arc::clone(settings);
            return Reserving::Later(PendingReserved(Box::pin(async move {
                reserve(&settings, extracted).await
            })));
        }
        let mut deciding = pin!(reserve(settings, extracted));
        match deciding
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(reserved) => Reserving::Now(reserved),
            // As in `decide`: an in-process backend that waits broke the seam's contract.
            Poll::Pending => {
                let error = BackendError::new(
                    BackendErrorKind::Unavailable,
                    "an in-process backend did not answer at once",
                );
                let outcome = decide::failed(None, error, settings.on_backend_error);
                Reserving::Now(Reserved {
                    verdict: settings.verdict(outcome, &[]),
                    refund: None,
                })
            }
        }
    }
}

/// Decides every limit with reservations; a passed request keeps those that consumed.
async fn reserve(settings: &Arc<Settings>, extracted: Extracted) -> Reserved {
    let Extracted { mut keys, costs } = extracted;
    let mut kept = Vec::new();
    let outcome = decide::all_reserving(
        &settings.limits,
        &keys,
        &costs,
        settings.on_backend_error,
        &mut kept,
    )
    .await;
    let verdict = settings.verdict(outcome, &keys);
    let refund = if verdict.passes() {
        // A cost of 0, or a backend that cannot undo, leaves nothing to give back.
        let held =
            (kept.into_iter()).filter(|(limit, receipt)| costs[*limit] > 0 && !receipt.is_none());
        Refund::new(
            settings,
            held.map(|(limit, receipt)| (limit, std::mem::take(&mut keys[limit]), receipt)),
        )
    } else {
        None
    };
    Reserved { verdict, refund }
}
