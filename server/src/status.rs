//! What a decided request says: a [`Status`] per descriptor, and the [`Verdict`]. A leaf:
//! the engine makes these, telemetry counts them, the responses show them.

use crate::config::Unit;
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
    /// A rule with several quotas: each one's part, in the config's order (the fields above
    /// are the tightest one's); empty for one quota.
    pub quotas: Vec<QuotaPart>,
}

/// One quota of a descriptor with several, as the RateLimit headers show it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaPart {
    /// `q`: its limit.
    pub limit: u32,
    /// `w`: its period.
    pub period: Duration,
    /// Its decision for this request.
    pub decision: Decision,
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
            quotas: Vec::new(),
        }
    }

    /// Whether this status denies the request (over, and not in shadow mode).
    pub fn denies(&self) -> bool {
        self.over && !self.limit.as_ref().is_some_and(|l| l.shadow)
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
}
