//! A descriptor whose rule has several quotas (`quota: "5/minute; 100/hour"`): they are
//! decided with the request's other limits, all or nothing, and its status reports the
//! tightest one, chosen as the library's header writer chooses among limits, so that the
//! status and the `RateLimit` header name the same quota.

use crate::limits::RuleQuota;
use crate::status::{QuotaPart, Status};
use sluicegate::backend::Op;
use sluicegate::http::front_end::reported_limit;
use sluicegate::Decision;
use std::time::Duration;

/// The first quota whose capacity no wait can bring `cost` within, if any: the request is
/// then over whatever the limits hold.
pub(super) fn too_costly(quotas: &[RuleQuota], cost: u32) -> Option<usize> {
    quotas.iter().position(|q| {
        Op::Check
            .within_capacity(cost, q.limiter.backend().max_cost())
            .is_err()
    })
}

/// Which decision a status reports: the library's rule for the one the headers report
/// (denied: the denying quota that admits the request last; allowed: the least remaining, of
/// equals the one that resets last), so that the status and the `RateLimit` header name the
/// same quota. One quota: that one.
pub(super) fn reported(decisions: &[Decision]) -> usize {
    reported_limit(decisions).unwrap_or(0)
}

/// `status` (reporting quota `at`) with each quota's part when there are several: the
/// reported one as the status says (a too-costly or backend-failure verdict included), the
/// others as decided, or as the status when there is no decision.
pub(super) fn with_parts(
    mut status: Status,
    quotas: &[RuleQuota],
    decisions: Option<&[Decision]>,
    at: usize,
) -> Status {
    if quotas.len() < 2 {
        return status;
    }
    status.quotas = quotas
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let quota = q.limiter.backend().quota();
            let decision = match decisions.and_then(|d| d.get(i)) {
                Some(decided) if i != at => *decided,
                _ if i == at => status.decision(),
                _ => Decision::new(
                    !status.over,
                    quota.limit(),
                    0,
                    status.over.then_some(Duration::from_secs(1)),
                    Duration::ZERO,
                    Duration::ZERO,
                ),
            };
            QuotaPart {
                limit: quota.limit(),
                period: quota.period(),
                decision,
            }
        })
        .collect();
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(allowed: bool, remaining: u32, retry: u64, reset: u64) -> Decision {
        let retry = (!allowed).then_some(Duration::from_secs(retry));
        let reset = Duration::from_secs(reset);
        Decision::new(allowed, 10, remaining, retry, reset, Duration::ZERO)
    }

    #[test]
    fn the_reported_quota_is_the_tightest() {
        // Allowed: the least remaining; of equals, the one that resets last.
        let allowed = [decision(true, 3, 0, 1), decision(true, 1, 0, 60)];
        assert_eq!(reported(&allowed), 1);
        let tied = [decision(true, 0, 0, 1), decision(true, 0, 0, 60)];
        assert_eq!(reported(&tied), 1);
        // Denied: the denying quota with the longest wait, whatever the others have left.
        let denied = [
            decision(false, 0, 1, 1),
            decision(true, 0, 0, 3600),
            decision(false, 0, 59, 60),
        ];
        assert_eq!(reported(&denied), 2);
        let same_wait = [decision(false, 0, 5, 5), decision(false, 0, 5, 5)];
        assert_eq!(reported(&same_wait), 0);
        assert_eq!(reported(&[]), 0);
    }
}
