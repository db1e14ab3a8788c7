//! Deciding one `RateLimitRequest`: match each descriptor to its rule (`plan.rs`), then
//! decide them together, all-or-nothing, through the library's seam.

mod plan;
mod verdict;

pub use verdict::{Shown, Status, Verdict};

use crate::config::Config;
use crate::input;
use crate::limits::{Backing, Limits};
use crate::proto::RateLimitRequest;
use crate::telemetry::{self, RuleCounters};
use arc_swap::ArcSwap;
use plan::Plan;
use sluicegate::backend::{all_of_each, BackendError, Member, Op};
use sluicegate::Decision;
use std::sync::Arc;

/// What to answer when the backend (Redis) cannot decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OnBackendError {
    /// Fail the call (gRPC `UNAVAILABLE`, HTTP 503): the proxy's `failure_mode_deny` decides.
    #[default]
    Error,
    /// Answer OK.
    Allow,
    /// Answer OVER_LIMIT.
    Deny,
}

/// A config and the limiters for its rules, swapped whole on reload.
#[derive(Debug)]
pub struct Snapshot {
    /// The rules.
    pub config: Config,
    /// Their limiters.
    pub limits: Limits,
    /// Their metrics.
    pub counters: Vec<RuleCounters>,
}

/// The decision maker: the current snapshot and how to answer.
#[derive(Debug)]
pub struct Engine {
    snapshot: ArcSwap<Snapshot>,
    /// Where the state lives.
    pub backing: Backing,
    /// What a backend failure answers.
    pub on_backend_error: OnBackendError,
}

/// Why a request got no verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The request cannot be used (gRPC `INVALID_ARGUMENT`, HTTP 400).
    Invalid(String),
    /// The backend failed and `--on-backend-error error` (gRPC `UNAVAILABLE`, HTTP 503).
    Unavailable(String),
}

/// The request's decided descriptors, sorted by how they are decided.
#[derive(Default)]
struct Groups {
    /// `hits_addend` 0: only looked at.
    looks: Vec<usize>,
    /// A cost beyond the limit's capacity: over, consuming nothing.
    too_big: Vec<usize>,
    /// Shadow-mode rules: decided one by one, never denying the others.
    shadows: Vec<usize>,
    /// The rest: decided together, all or nothing.
    together: Vec<usize>,
    /// Some descriptor denies whatever the others say (a deny-all rule, a cost too big):
    /// the group then only looks.
    denied_anyway: bool,
}

impl Engine {
    /// An engine serving `snapshot`.
    pub fn new(snapshot: Snapshot, backing: Backing, on_backend_error: OnBackendError) -> Self {
        Engine {
            snapshot: ArcSwap::from_pointee(snapshot),
            backing,
            on_backend_error,
        }
    }

    /// The snapshot serving now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    /// Serves `snapshot` from now on.
    pub fn replace(&self, snapshot: Snapshot) {
        self.snapshot.store(Arc::new(snapshot));
    }

    /// Whether the backend answers, or its failures are answered anyway.
    pub fn healthy(&self) -> bool {
        self.on_backend_error != OnBackendError::Error || self.snapshot.load().limits.available()
    }

    /// Decides `request`: one status per descriptor, all-or-nothing across the descriptors
    /// whose rules are not in shadow mode.
    pub async fn decide(&self, request: &RateLimitRequest) -> Result<Verdict, Refusal> {
        if let Some(problem) = input::problem(request) {
            return Err(Refusal::Invalid(problem));
        }
        let snapshot = self.snapshot();
        let config = &snapshot.config;
        let plans = plan::plan(&snapshot, request).await?;
        let mut statuses: Vec<Option<Status>> =
            plans.iter().map(|p| Status::fixed(p, config)).collect();
        let groups = sort(&plans, &statuses, config);

        for &i in &groups.looks {
            statuses[i] = Some(self.look(config, &plans[i], false).await?);
        }
        for &i in &groups.too_big {
            statuses[i] = Some(self.look(config, &plans[i], true).await?);
        }
        let op = if groups.denied_anyway {
            Op::Peek
        } else {
            Op::Check
        };
        self.decide_together(config, &plans, &groups.together, op, &mut statuses)
            .await?;
        for &i in &groups.shadows {
            self.decide_together(config, &plans, &[i], Op::Check, &mut statuses)
                .await?;
        }

        let statuses: Vec<Status> = statuses
            .into_iter()
            .map(|s| s.unwrap_or_else(Status::free))
            .collect();
        let over = statuses.iter().any(Status::denies);
        let rules: Vec<_> = plans.iter().map(Plan::rule_and_cost).collect();
        telemetry::record(request, config, &snapshot.counters, &rules, &statuses);
        Ok(Verdict { statuses, over })
    }

    /// Decides `members` (indexes into `plans`) together with `op`: with `Op::Check` all
    /// consume or none does; with `Op::Peek` none does and each reports where it stands.
    async fn decide_together(
        &self,
        config: &Config,
        plans: &[Plan],
        members: &[usize],
        op: Op,
        statuses: &mut [Option<Status>],
    ) -> Result<(), Refusal> {
        if members.is_empty() {
            return Ok(());
        }
        let costs: Vec<(usize, u32)> = members
            .iter()
            .map(|&i| (i, plans[i].rule_and_cost().map_or(1, |(_, cost)| cost)))
            .collect();
        match seam(plans, &costs, op).await {
            Ok(decisions) => {
                for (&i, decision) in members.iter().zip(decisions) {
                    // A member that allowed reports OK even when another denied the request
                    // (it then consumed nothing): each status tells its own limit.
                    let over = decision.is_denied();
                    statuses[i] = Some(Status::decided(&plans[i], config, Some(decision), over));
                }
            }
            Err(failed) => {
                let over = self.backend_failed(&failed)?;
                for &i in members {
                    statuses[i] = Some(Status::decided(&plans[i], config, None, over));
                }
            }
        }
        Ok(())
    }

    /// Looks at one plan's limit without consuming (a peek of one unit), reporting what is
    /// left before it; `over` marks it over the limit whatever it finds.
    async fn look(&self, config: &Config, plan: &Plan, over: bool) -> Result<Status, Refusal> {
        let found = match seam(std::slice::from_ref(plan), &[(0, 1)], Op::Peek).await {
            Ok(decisions) => decisions.into_iter().next(),
            Err(failed) => {
                self.backend_failed(&failed)?;
                None
            }
        };
        let mut status = Status::decided(plan, config, found, over);
        if found.is_some_and(|d| d.is_allowed()) {
            status.remaining = status.remaining.saturating_add(1);
        }
        Ok(status)
    }

    /// Handles a backend failure as `--on-backend-error` says: an error for `error`, else
    /// whether the affected descriptors are over (`deny`) or not (`allow`).
    fn backend_failed(&self, failed: &BackendError) -> Result<bool, Refusal> {
        telemetry::backend_error();
        tracing::warn!(error = %failed, "the backend could not decide");
        match self.on_backend_error {
            OnBackendError::Error => Err(Refusal::Unavailable(format!(
                "the rate-limit backend could not decide: {failed}"
            ))),
            OnBackendError::Allow => Ok(false),
            OnBackendError::Deny => Ok(true),
        }
    }
}

/// Sorts the plans still undecided (those without a fixed status) by how they are decided.
fn sort(plans: &[Plan], statuses: &[Option<Status>], config: &Config) -> Groups {
    let mut groups = Groups {
        denied_anyway: statuses.iter().flatten().any(Status::denies),
        ..Groups::default()
    };
    for (i, plan) in plans.iter().enumerate() {
        let Plan::Decide {
            rule,
            limiter,
            cost,
            ..
        } = plan
        else {
            continue;
        };
        let shadow = config.rules[*rule].shadow_mode;
        if *cost == 0 {
            groups.looks.push(i);
        } else if *cost > limiter.backend().max_cost() {
            groups.too_big.push(i);
            groups.denied_anyway |= !shadow;
        } else if shadow {
            groups.shadows.push(i);
        } else {
            groups.together.push(i);
        }
    }
    groups
}

/// The one call into the library's seam: decides `members` (a plan's index and the cost to
/// decide it at) with `op`, all or nothing, returning each member's decision in order. The
/// seam's protocol sends members that share a Redis node as one script (its batch hook), and
/// the Redis link coalesces concurrent requests' scripts into batches.
async fn seam(
    plans: &[Plan],
    members: &[(usize, u32)],
    op: Op,
) -> Result<Vec<Decision>, BackendError> {
    let seam: Vec<Member<'_, str>> = members
        .iter()
        .filter_map(|&(i, cost)| match &plans[i] {
            Plan::Decide { limiter, key, .. } => {
                Some(Member::new(limiter.backend(), key.as_str()).with_cost(cost))
            }
            _ => None,
        })
        .collect();
    let mut decisions = Vec::with_capacity(seam.len());
    all_of_each(&seam, op, &mut decisions).await?;
    Ok(decisions)
}
