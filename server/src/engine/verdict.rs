//! What a decided request says: a [`Status`] per descriptor, and the [`Verdict`].

use super::plan::Plan;
use crate::config::{Config, Unit};
use sluicegate::Decision;
use std::time::Duration;

/// One descriptor's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Over the limit (a shadow-mode rule may say so without denying the request).
    pub over: bool,
    /// The rule that decided, if one matched.
    pub limit: Option<Shown>,
    /// Requests left.
    pub remaining: u32,
    /// Until the limit is fully replenished (its window resets).
    pub reset_after: Duration,
    /// When over: until the request would be allowed.
    pub retry_after: Option<Duration>,
}

/// A matched rule as a response shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// `current_limit.name`.
    pub name: String,
    /// `current_limit.requests_per_unit`.
    pub requests_per_unit: u32,
    /// `current_limit.unit`.
    pub unit: Unit,
    /// The quota's limit, for `RateLimit-Policy`.
    pub quota_limit: u32,
    /// The quota's period, for `RateLimit-Policy`.
    pub period: Duration,
    /// Whether the rule is in shadow mode.
    pub shadow: bool,
}

/// A decided request.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// One per descriptor, in order.
    pub statuses: Vec<Status>,
    /// True when a status that is not in shadow mode is over its limit.
    pub over: bool,
}

impl Status {
    /// No rule (or a replaced one): OK, no limit, remaining 0.
    pub fn free() -> Status {
        Status {
            over: false,
            limit: None,
            remaining: 0,
            reset_after: Duration::ZERO,
            retry_after: None,
        }
    }

    /// The status a plan has before anything is decided: every plan but
    /// [`Plan::Decide`] knows it at once.
    pub(super) fn fixed(plan: &Plan, config: &Config) -> Option<Status> {
        match plan {
            Plan::Free => Some(Status::free()),
            Plan::Unlimited { .. } => Some(Status {
                remaining: u32::MAX,
                ..Status::free()
            }),
            Plan::DenyAll { rule, unit, .. } => {
                let r = &config.rules[*rule];
                Some(Status {
                    over: true,
                    limit: Some(Shown {
                        name: r.display_name().to_owned(),
                        requests_per_unit: 0,
                        unit: *unit,
                        quota_limit: 0,
                        period: unit.duration(),
                        shadow: r.shadow_mode,
                    }),
                    remaining: 0,
                    reset_after: unit.duration(),
                    retry_after: Some(unit.duration()),
                })
            }
            Plan::Decide { .. } => None,
        }
    }

    /// The status of a decided plan; `decision` is `None` when the backend failed and its
    /// failures are answered anyway.
    pub(super) fn decided(
        plan: &Plan,
        config: &Config,
        decision: Option<Decision>,
        over: bool,
    ) -> Status {
        let Plan::Decide {
            rule,
            limiter,
            shown,
            ..
        } = plan
        else {
            return Status::fixed(plan, config).unwrap_or_else(Status::free);
        };
        let r = &config.rules[*rule];
        let quota = limiter.backend().quota();
        Status {
            over,
            limit: Some(Shown {
                name: r.display_name().to_owned(),
                requests_per_unit: shown.0,
                unit: shown.1,
                quota_limit: quota.limit(),
                period: quota.period(),
                shadow: r.shadow_mode,
            }),
            remaining: decision.map_or(0, |d| d.remaining()),
            reset_after: decision.map_or(Duration::ZERO, |d| d.reset_after()),
            retry_after: over.then(|| {
                decision
                    .and_then(|d| d.retry_after())
                    .unwrap_or(Duration::from_secs(1))
            }),
        }
    }

    /// The status as the library's [`Decision`], for the rate-limit headers.
    pub fn decision(&self) -> Decision {
        let limit = self.limit.as_ref().map_or(0, |shown| shown.quota_limit);
        Decision::new(
            !self.over,
            limit,
            self.remaining,
            self.retry_after,
            self.reset_after,
            Duration::ZERO,
        )
    }

    /// Whether this status denies the request (over, and not in shadow mode).
    pub fn denies(&self) -> bool {
        self.over && !self.limit.as_ref().is_some_and(|l| l.shadow)
    }
}
