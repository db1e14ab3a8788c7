//! Deciding one `RateLimitRequest`: match each descriptor to its rule (`plan.rs`), then
//! decide them together, all-or-nothing, through the library's seam; a rule with several
//! quotas brings each of them (`quotas.rs`).

mod plan;
mod quotas;

use crate::config::Config;
use crate::input;
use crate::limits::{Backing, Limits};
use crate::proto::RateLimitRequest;
use crate::status::{Status, Verdict};
use crate::telemetry::{self, BadInput, DetailedSeries, RuleCounters};
use arc_swap::ArcSwap;
use plan::{Part, Plan};
use sluicegate::backend::{all_of_each, BackendError, Member, Op};
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

/// The default of `--max-metric-series`.
pub const DEFAULT_MAX_METRIC_SERIES: usize = 100;

/// The decision maker: the current snapshot and how to answer.
#[derive(Debug)]
pub struct Engine {
    snapshot: ArcSwap<Snapshot>,
    /// `detailed_metric` series: the engine's, so a reload does not make room for more.
    detailed: DetailedSeries,
    /// Where the state lives.
    pub backing: Backing,
    /// What a backend failure answers.
    pub on_backend_error: OnBackendError,
}

/// Why a request got no verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The request cannot be used (gRPC `INVALID_ARGUMENT`, HTTP 400): the client's fault,
    /// of this kind, said in this sentence.
    Invalid(BadInput, String),
    /// The backend failed and `--on-backend-error error` (gRPC `UNAVAILABLE`, HTTP 503).
    Unavailable(String),
}

impl Engine {
    /// An engine serving `snapshot`.
    pub fn new(snapshot: Snapshot, backing: Backing, on_backend_error: OnBackendError) -> Self {
        Engine {
            snapshot: ArcSwap::from_pointee(snapshot),
            detailed: DetailedSeries::new(DEFAULT_MAX_METRIC_SERIES),
            backing,
            on_backend_error,
        }
    }

    /// The same engine, keeping at most `max` series per `detailed_metric` rule.
    pub fn with_max_metric_series(mut self, max: usize) -> Self {
        self.detailed = DetailedSeries::new(max);
        self
    }

    /// The `detailed_metric` series held.
    pub fn detailed_series(&self) -> &DetailedSeries {
        &self.detailed
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
    /// whose rules are not in shadow mode. One call through the library's seam decides them
    /// all, zero-cost looks included (one script per Redis node); each shadow-mode rule's
    /// cost is decided on its own afterwards, so that it never denies the others.
    pub async fn decide(&self, request: &RateLimitRequest) -> Result<Verdict, Refusal> {
        if let Some(problem) = input::problem(request) {
            return Err(Refusal::Invalid(BadInput::Invalid, problem));
        }
        let snapshot = self.snapshot();
        let plans = plan::plan(&snapshot, request).await?;
        let mut statuses: Vec<Status> = plans
            .iter()
            .map(|plan| plan.fixed_status().unwrap_or_else(Status::free))
            .collect();
        // Some descriptor denies the request whatever the limits hold: the rest only look.
        let op = if plans.iter().any(Plan::denies_anyway) {
            Op::Peek
        } else {
            Op::Check
        };
        let together: Vec<usize> = (0..plans.len())
            .filter(|&i| matches!(plans[i].part(), Some(Part::Enforced | Part::Look { .. })))
            .collect();
        self.decide_together(&plans, &together, op, &mut statuses)
            .await?;
        for i in (0..plans.len()).filter(|&i| plans[i].part() == Some(Part::Shadow)) {
            self.decide_together(&plans, &[i], Op::Check, &mut statuses)
                .await?;
        }
        let over = statuses.iter().any(Status::denies);
        let matched = plans
            .iter()
            .map(|p| p.rule.map(|(i, rule)| (i, rule, p.cost)));
        telemetry::record(
            request,
            &snapshot.counters,
            &self.detailed,
            matched,
            &statuses,
        );
        Ok(Verdict { statuses, over })
    }

    /// Decides `members` (indexes into `plans`) together with `op`: with `Op::Check` all
    /// consume or none does; with `Op::Peek` none does and each reports where it stands.
    /// Looks weigh 0.
    async fn decide_together(
        &self,
        plans: &[Plan<'_>],
        members: &[usize],
        op: Op,
        statuses: &mut [Status],
    ) -> Result<(), Refusal> {
        if members.is_empty() {
            return Ok(());
        }
        // Each member plan's quotas, in order: a rule with several brings them all.
        let seam: Vec<Member<'_, str>> = members
            .iter()
            .filter_map(|&i| {
                let (quotas, key) = plans[i].quotas()?;
                let cost = match plans[i].part()? {
                    Part::Look { .. } => 0,
                    Part::Enforced | Part::Shadow => plans[i].cost,
                };
                Some(
                    quotas
                        .iter()
                        .map(move |q| Member::new(q.limiter.backend(), key).with_cost(cost)),
                )
            })
            .flatten()
            .collect();
        let mut decisions = Vec::with_capacity(seam.len());
        match all_of_each(&seam, op, &mut decisions).await {
            // A member that allowed reports OK even when another denied the request (it then
            // consumed nothing): each status tells its own limit.
            Ok(_) => {
                let mut rest = decisions.as_slice();
                for &i in members {
                    let count = plans[i].quotas().map_or(0, |(quotas, _)| quotas.len());
                    let (own, after) = rest.split_at(count);
                    rest = after;
                    statuses[i] = plans[i].decided_status(Some(own), false);
                }
            }
            Err(failed) => {
                let over = self.backend_failed(&failed)?;
                for &i in members {
                    statuses[i] = plans[i].decided_status(None, over);
                }
            }
        }
        Ok(())
    }

    /// Handles a backend failure as `--on-backend-error` says: an error for `error`, else
    /// whether the affected descriptors are over (`deny`) or not (`allow`).
    fn backend_failed(&self, failed: &BackendError) -> Result<bool, Refusal> {
        telemetry::backend_error(failed);
        match self.on_backend_error {
            OnBackendError::Error => Err(Refusal::Unavailable(format!(
                "the rate-limit backend could not decide: {failed}"
            ))),
            OnBackendError::Allow => Ok(false),
            OnBackendError::Deny => Ok(true),
        }
    }
}
