//! [`Refund`]: what a passed request consumed, kept so that a front end can give it back
//! after the response (express-rate-limit's `skipFailedRequests` and
//! `skipSuccessfulRequests`).

use super::key::KeyBuf;
use crate::backend::{Backend, BackendError, BackendErrorKind, Call, Receipt};
use smallvec::SmallVec;
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// A passed request's consumption on each limit, from
/// [`RequestLimiter::decide_reserving`](super::RequestLimiter::decide_reserving): dropped, the
/// request stays counted; [`refund`](Self::refund)ed, its cost is given back.
///
/// A refund is the backends' [undo](crate::backend::Backend::undo) of the request's
/// reservation, so it gives back exactly that request's cost, or nothing:
///
/// - in process (every algorithm) and on Redis for the algorithms kept in one value (`gcra`,
///   `token-bucket`, `leaky-bucket`, `fixed-window` (anchored too), `sliding-window`): the
///   key's state goes back to what it was before the request, if nothing has been recorded on
///   that key since (refused requests record nothing); otherwise nothing is given back and the
///   request stays counted. An arithmetic give-back (a GCRA's arrival time moved back, tokens
///   added) is not exact once other requests came after it, so the engine never guesses: a
///   refund errs toward counting, never toward admitting more than the quota;
/// - on Redis, `sliding-log`: the request's own entries are removed from the log, exact even
///   after later requests (until they have left the window: then nothing is left to give).
///
/// So a refund soon after its request on a key with one client at a time (a sign-in form, a
/// client's sequential calls) is exact; a key shared by concurrent requests refunds only the
/// request last recorded on it.
pub struct Refund {
    /// Every backend answers at once.
    immediate: bool,
    held: SmallVec<[Held; 1]>,
}

/// One limit's reservation: the limit's name and backend (its tier's), the key it was
/// counted under, the receipt.
struct Held {
    name: String,
    backend: Arc<dyn Backend<str>>,
    key: KeyBuf,
    receipt: Receipt,
}

impl Refund {
    /// A refund of `held` (limit name, backend, key, receipt); `None` when nothing is held.
    /// `immediate`: every backend answers at once.
    pub(crate) fn new(
        immediate: bool,
        held: impl Iterator<Item = (String, Arc<dyn Backend<str>>, KeyBuf, Receipt)>,
    ) -> Option<Refund> {
        let held: SmallVec<[Held; 1]> = held
            .map(|(name, backend, key, receipt)| Held {
                name,
                backend,
                key,
                receipt,
            })
            .collect();
        (!held.is_empty()).then_some(Refund { immediate, held })
    }

    /// The names of the limits the request consumed on, in the limiter's order.
    pub fn limits(&self) -> impl Iterator<Item = &str> {
        self.held.iter().map(|held| held.name.as_str())
    }

    /// Gives the request's cost back on every limit it consumed on. Resolves to `true` when
    /// every limit took it back, `false` when one could not (see [`Refund`]: that limit keeps
    /// it counted; the others are still given back). A backend error (Redis down) is returned
    /// after every limit was tried; that limit keeps the request counted. Complete at once
    /// ([`Call::now`]) when every limit is in process. Consumes the refund: it happens once.
    pub fn refund(self) -> Call<'static, bool> {
        let Refund { immediate, held } = self;
        if immediate {
            let mut giving = pin!(give_back(held));
            return match giving
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop()))
            {
                Poll::Ready(result) => Call::ready(result),
                // An in-process backend that waits broke the seam's contract.
                Poll::Pending => Call::ready(Err(BackendError::new(
                    BackendErrorKind::Unavailable,
                    "an in-process backend did not answer at once",
                ))),
            };
        }
        Call::new(give_back(held))
    }
}

/// Undoes every reservation in `held`: whether all were undone, or the first error.
async fn give_back(held: SmallVec<[Held; 1]>) -> Result<bool, BackendError> {
    let mut all = true;
    let mut failed = None;
    for Held {
        backend,
        key,
        receipt,
        ..
    } in held
    {
        match backend.undo(key.as_str(), receipt).await {
            Ok(undone) => all &= undone,
            Err(error) => {
                failed.get_or_insert(error);
            }
        }
    }
    failed.map_or(Ok(all), Err)
}

impl fmt::Debug for Refund {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Refund")
            .field("limits", &self.limits().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
