//! The one waiting loop every `until_ready` runs.

use super::Jitter;
use crate::decision::Decision;
use std::future::Future;
use std::time::Duration;

/// How long to back off when a keyed table is full (its denial has no `retry_after`), first
/// and at most: space frees up as idle keys are swept, at no time anyone can predict.
const TABLE_FULL_FIRST: Duration = Duration::from_millis(1);
const TABLE_FULL_MAX: Duration = Duration::from_secs(1);

/// Checks with `attempt` until it admits, sleeping each time exactly until the denial's
/// `retry_after` (plus `jitter`), then sleeps an admission's shaping `wait()`.
///
/// No polling: every sleep ends at the instant the limiter said the request would be
/// admitted (tokio's timer counts whole milliseconds, so at the first millisecond at or after
/// it, never before), and the check is made again then, since another task may have taken the
/// capacity in between. Dropping the future while it sleeps for a retry consumes nothing.
pub(crate) async fn until<F, E>(
    mut attempt: impl FnMut() -> F,
    jitter: Jitter,
) -> Result<Decision, E>
where
    F: Future<Output = Result<Decision, E>>,
{
    let mut backoff = TABLE_FULL_FIRST;
    loop {
        let decision = attempt().await?;
        if decision.is_allowed() {
            let wait = decision.wait();
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            return Ok(decision);
        }
        let pause = match decision.retry_after() {
            Some(retry) => retry,
            None => {
                let pause = backoff;
                backoff = (backoff * 2).min(TABLE_FULL_MAX);
                pause
            }
        };
        tokio::time::sleep(pause.saturating_add(jitter.sample())).await;
    }
}
