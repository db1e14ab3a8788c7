//! Deciding a request against every limit, and what the decisions add up to.

use super::headers::ceil_secs;
use super::key::KeyBuf;
use super::on_backend_error::OnBackendError;
use super::report::Report;
use crate::backend::{
    all_of_each, reserve_each, Backend, BackendError, Member, Op, Receipt, Receipts,
};
use crate::decision::{Decision, Numbers};
use std::time::Duration;

/// What the layer does with a request whose keys and costs are known.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Pass it on, after `wait` (a leaky bucket's shaping delay); `report` is `None` when no
    /// limit could answer (their backends failed and errors are allowed).
    Admit {
        report: Option<Report>,
        wait: Duration,
    },
    /// `429`: `violated` has a bit per limit that denied.
    Deny { report: Report, violated: u64 },
    /// `503`: a keyed table is full.
    TableFull { limit: usize },
    /// `413`: the request costs more than limit `limit` can ever admit (found once an open
    /// tier was made; otherwise before deciding).
    TooCostly {
        limit: usize,
        cost: u32,
        capacity: u32,
    },
    /// `503`: a backend failed and errors deny.
    Failed {
        limit: Option<usize>,
        error: BackendError,
    },
}

/// What one limit's answer means.
#[inline]
pub(crate) fn single(result: Result<Decision, BackendError>, on_error: OnBackendError) -> Outcome {
    match result {
        Ok(decision) => summarize([(0, decision)].into_iter(), decision.is_allowed()),
        Err(error) => failed(Some(0), error, on_error),
    }
}

pub(crate) fn failed(
    limit: Option<usize>,
    error: BackendError,
    on_error: OnBackendError,
) -> Outcome {
    match on_error {
        OnBackendError::Allow => Outcome::Admit {
            report: None,
            wait: Duration::ZERO,
        },
        OnBackendError::Deny => Outcome::Failed { limit, error },
    }
}

/// Each limit's backend for one request: `None` for a slot of a tiered limit that the
/// request's tier does not have (it is not decided).
pub(crate) type Backends<'a> = smallvec::SmallVec<[Option<&'a dyn Backend<str>>; 4]>;

/// Decides every limit at once with [`all_of`]: admitted only if all admit, and a denial
/// consumes nothing. Limits whose backend fails are, when errors are allowed, left out and
/// the others decided again, so that a shared backend going down does not switch off the
/// in-process limits beside it.
pub(crate) async fn all(
    limits: &[Option<&dyn Backend<str>>],
    keys: &[KeyBuf],
    costs: &[u32],
    on_error: OnBackendError,
) -> Outcome {
    all_keeping(limits, keys, costs, on_error, None).await
}

/// [`all`], keeping in `kept`, when the request is admitted, each limit that consumed with
/// its receipt (what giving the request back takes).
pub(crate) async fn all_reserving(
    limits: &[Option<&dyn Backend<str>>],
    keys: &[KeyBuf],
    costs: &[u32],
    on_error: OnBackendError,
    kept: &mut Vec<(usize, Receipt)>,
) -> Outcome {
    all_keeping(limits, keys, costs, on_error, Some(kept)).await
}

async fn all_keeping(
    limits: &[Option<&dyn Backend<str>>],
    keys: &[KeyBuf],
    costs: &[u32],
    on_error: OnBackendError,
    mut keep: Option<&mut Vec<(usize, Receipt)>>,
) -> Outcome {
    let mut active: Vec<usize> = (0..limits.len()).filter(|&i| limits[i].is_some()).collect();
    let mut decisions = Vec::with_capacity(limits.len());
    let mut receipts = Receipts::new();
    loop {
        let members: Vec<Member<'_, str>> = active
            .iter()
            .filter_map(|&i| Some(Member::new(limits[i]?, keys[i].as_str()).with_cost(costs[i])))
            .collect();
        let decided = match keep {
            None => all_of_each(&members, Op::Check, &mut decisions).await,
            Some(_) => reserve_each(&members, &mut decisions, &mut receipts).await,
        };
        match decided {
            Ok(allowed) => {
                if let Some(kept) = keep.as_deref_mut() {
                    kept.extend(active.iter().copied().zip(receipts.drain(..)));
                }
                let decided = active.iter().copied().zip(decisions.iter().copied());
                return summarize(decided, allowed);
            }
            Err(failed) => {
                // `all_of_each` names the failing member.
                let Some(broken) = failed.member().map(|member| active[member]) else {
                    return self::failed(None, failed, on_error);
                };
                if on_error == OnBackendError::Deny {
                    return self::failed(Some(broken), failed, on_error);
                }
                active.retain(|&i| i != broken);
                if active.is_empty() {
                    return self::failed(None, failed, on_error);
                }
            }
        }
    }
}

/// The outcome of each limit's decision, `allowed` being the composite's answer.
///
/// Admitted: the report is the limit with the least remaining (ties: the one replenished
/// last). Denied: it is the denying limit that admits the request last, `t` being when every
/// denying limit admits it again (which `all_of` guarantees is when the request is admitted,
/// if nothing else consumes in between).
#[inline]
pub(crate) fn summarize(
    decided: impl Iterator<Item = (usize, Decision)>,
    allowed: bool,
) -> Outcome {
    let mut report: Option<(Report, Duration)> = None;
    let mut wait = Duration::ZERO;
    let mut violated = 0u64;
    for (limit, decision) in decided {
        if allowed {
            let numbers = decision.numbers();
            wait = wait.max(numbers.wait);
            let (remaining, reset) = (numbers.remaining, numbers.reset_after);
            let tighter = report.is_none_or(|(best, best_reset)| {
                (remaining, std::cmp::Reverse(reset))
                    < (best.remaining, std::cmp::Reverse(best_reset))
            });
            if tighter {
                report = Some((make_report(limit, &decision, &numbers, reset), reset));
            }
        } else if decision.is_denied() {
            if decision.is_table_full() {
                return Outcome::TableFull { limit };
            }
            violated |= 1u64.checked_shl(limit as u32).unwrap_or(0);
            let numbers = decision.numbers();
            let retry = numbers.retry_after.unwrap_or_default();
            if report.is_none_or(|(_, longest)| retry > longest) {
                report = Some((make_report(limit, &decision, &numbers, retry), retry));
            }
        }
    }
    match (allowed, report) {
        (true, report) => Outcome::Admit {
            report: report.map(|(r, _)| r),
            wait,
        },
        (false, Some((report, _))) => Outcome::Deny { report, violated },
        // A denial with no denying member cannot come from `all_of`; refuse rather than admit.
        (false, None) => Outcome::Deny {
            report: Report {
                limit: 0,
                tier: None,
                quota: 0,
                remaining: 0,
                reset: 1,
                exact_reset: Duration::from_secs(1),
            },
            violated: 1,
        },
    }
}

/// The report of `decision`: `remaining` is never above the quota's limit in one response (a
/// burst above the limit, `'10/second burst 20'`, still reports at most `q` left).
fn make_report(limit: usize, decision: &Decision, numbers: &Numbers, until: Duration) -> Report {
    let quota = decision.limit();
    Report {
        limit,
        tier: None,
        quota,
        remaining: numbers.remaining.min(quota),
        reset: ceil_secs(until),
        exact_reset: until,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::{FixedWindow, Gcra};
    use crate::clock::ManualClock;
    use crate::{KeyedLimiter, Limiter, Quota};
    use std::sync::Arc;

    fn keys(texts: &[&str]) -> Vec<KeyBuf> {
        texts
            .iter()
            .map(|text| {
                let mut key = KeyBuf::new();
                key.push_str(text);
                key
            })
            .collect()
    }

    fn now(future: impl std::future::Future<Output = Outcome>) -> Outcome {
        let mut future = std::pin::pin!(future);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(outcome) => outcome,
            std::task::Poll::Pending => panic!("in-process limits answer at once"),
        }
    }

    #[test]
    fn reports_the_tightest_limit_and_denies_without_consuming() {
        let clock = ManualClock::new();
        let wide =
            Arc::new(Limiter::<Gcra, _>::with_clock(Quota::per_second(10), clock.clone()).unwrap());
        let narrow =
            KeyedLimiter::<String, FixedWindow, _>::with_clock(Quota::per_minute(2), clock.clone())
                .unwrap();
        let limits: [Option<&dyn Backend<str>>; 2] = [Some(&*wide), Some(&narrow)];
        let keys = keys(&["", "a"]);
        let outcome = now(all(&limits, &keys, &[1, 1], OnBackendError::Allow));
        let Outcome::Admit {
            report: Some(report),
            ..
        } = outcome
        else {
            panic!("{outcome:?}")
        };
        assert_eq!((report.limit, report.remaining, report.reset), (1, 1, 60));
        // Different costs per limit: 1 on the wide one, 2 on the narrow one, which has 1 left.
        let outcome = now(all(&limits, &keys, &[1, 2], OnBackendError::Allow));
        let Outcome::Deny { report, violated } = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(
            (report.limit, report.remaining, report.reset, violated),
            (1, 1, 60, 0b10)
        );
        // Nothing was consumed by the denial: the wide limit still has 9.
        assert_eq!(wide.peek().remaining(), 8);
    }
}
