//! [`KeyState::peek`]: a key's numbers read through the seam, for snapshots and dashboards.

use super::{Backend, BackendError, Call};
use crate::algorithm::Op;
use crate::decision::Decision;
use crate::telemetry::KeyState;

impl KeyState {
    /// Reads `key`'s numbers on any backend by two peeks, consuming nothing: a request of
    /// cost 0 (the state as it is: `remaining`, `reset_after`) and one of cost 1 (whether a
    /// request would be allowed, and its `retry_after`). Ready at once ([`Call::now`]) for
    /// in-process limiters; for remote ones, two calls to await.
    pub fn peek<'a, Q, B>(backend: &'a B, key: &'a Q) -> Call<'a, KeyState>
    where
        Q: ?Sized,
        B: Backend<Q> + ?Sized,
    {
        let current = backend.decide(key, 0, Op::Peek);
        let next = backend.decide(key, 1, Op::Peek);
        match (current.now(), next.now()) {
            (Ok(current), Ok(next)) => Call::ready(combine(current, next)),
            (current, next) => {
                Call::new(async move { combine(settle(current).await, settle(next).await) })
            }
        }
    }
}

type Answer<'a> = Result<Result<Decision, BackendError>, Call<'a>>;

/// The answer, awaiting it if it was not ready.
async fn settle(answer: Answer<'_>) -> Result<Decision, BackendError> {
    match answer {
        Ok(result) => result,
        Err(pending) => pending.await,
    }
}

fn combine(
    current: Result<Decision, BackendError>,
    next: Result<Decision, BackendError>,
) -> Result<KeyState, BackendError> {
    let (current, next) = (current?, next?);
    Ok(KeyState {
        allowed: next.is_allowed(),
        limit: current.limit(),
        remaining: current.remaining(),
        retry_after: next.retry_after(),
        reset_after: current.reset_after(),
    })
}
