//! Deciding one `RateLimitRequest`: match each descriptor to its rule, then decide all of
//! them together, all-or-nothing, through the library's seam.

use crate::config::{Config, Limit, Unit};
use crate::input;
use crate::limits::{Backing, Limits, RuleLimiter};
use crate::proto::RateLimitRequest;
use crate::telemetry;
use arc_swap::ArcSwap;
use sluicegate::backend::{all_of_each, Backend, Member, Op};
use sluicegate::Decision;
use std::sync::Arc;
use std::time::Duration;

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
    /// The quota's limit and window, for `RateLimit-Policy`.
    pub quota_limit: u32,
    /// The quota's period.
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

/// Why a request got no verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The request cannot be used (gRPC `INVALID_ARGUMENT`, HTTP 400).
    Invalid(String),
    /// The backend failed and `--on-backend-error error` (gRPC `UNAVAILABLE`, HTTP 503).
    Unavailable(String),
}

/// One descriptor on its way to a decision.
enum Plan {
    /// No rule (or a replaced one): OK, no limit.
    Free,
    /// `unlimited`.
    Unlimited(usize),
    /// `requests_per_unit: 0`.
    DenyAll(usize, Unit),
    /// A quota to decide: the rule, the limiter, the key and the cost (0 peeks).
    Decide {
        rule: usize,
        limiter: RuleLimiter,
        shown: (u32, Unit),
        key: String,
        cost: u32,
    },
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
        let plans = self.plan(&snapshot, request).await?;

        let mut statuses: Vec<Option<Status>> = vec![None; plans.len()];
        // Descriptors that deny whatever the others say: deny-all rules and costs beyond
        // capacity.
        let mut denied_anyway = false;
        let mut group: Vec<usize> = Vec::new();
        let mut shadows: Vec<usize> = Vec::new();
        for (i, plan) in plans.iter().enumerate() {
            match plan {
                Plan::Free => statuses[i] = Some(free()),
                Plan::Unlimited(_) => {
                    statuses[i] = Some(Status {
                        over: false,
                        limit: None,
                        remaining: u32::MAX,
                        reset_after: Duration::ZERO,
                        retry_after: None,
                    });
                }
                Plan::DenyAll(rule, unit) => {
                    let r = &config.rules[*rule];
                    denied_anyway |= !r.shadow_mode;
                    statuses[i] = Some(Status {
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
                    });
                }
                Plan::Decide {
                    rule,
                    limiter,
                    key,
                    cost,
                    ..
                } => {
                    let shadow = config.rules[*rule].shadow_mode;
                    let backend = limiter.backend();
                    if *cost == 0 {
                        // Only looking: a peek of one unit, reporting what is left before it.
                        // Adding nothing never goes over the limit.
                        let peeked = self.peek(backend, key, 1).await?;
                        let mut looked = status(plan, config, peeked, false);
                        if peeked.is_some_and(|d| d.is_allowed()) {
                            looked.remaining = looked.remaining.saturating_add(1);
                        }
                        statuses[i] = Some(looked);
                    } else if *cost > backend.max_cost() {
                        // A cost that can never fit: over, consuming nothing.
                        let peeked = self.peek(backend, key, 1).await?;
                        denied_anyway |= !shadow;
                        let mut over = status(plan, config, peeked, true);
                        if peeked.is_some_and(|d| d.is_allowed()) {
                            over.remaining = over.remaining.saturating_add(1);
                        }
                        statuses[i] = Some(over);
                    } else if shadow {
                        shadows.push(i);
                    } else {
                        group.push(i);
                    }
                }
            }
        }

        self.decide_group(config, &plans, &group, denied_anyway, &mut statuses)
            .await?;
        for &i in &shadows {
            let single = [i];
            self.decide_group(config, &plans, &single, false, &mut statuses)
                .await?;
        }

        let statuses: Vec<Status> = statuses
            .into_iter()
            .map(|s| s.unwrap_or_else(free))
            .collect();
        let over = statuses
            .iter()
            .any(|s| s.over && !s.limit.as_ref().is_some_and(|l| l.shadow));
        telemetry::record(request, config, &plans_rules(&plans, request), &statuses);
        Ok(Verdict { statuses, over })
    }

    /// Matches every descriptor and works out its key, cost and limiter.
    async fn plan(
        &self,
        snapshot: &Snapshot,
        request: &RateLimitRequest,
    ) -> Result<Vec<Plan>, Refusal> {
        let config = &snapshot.config;
        let matches: Vec<_> = request
            .descriptors
            .iter()
            .map(|d| {
                config.find(
                    &request.domain,
                    d.entries.iter().map(|e| (e.key.as_str(), e.value.as_str())),
                )
            })
            .collect();
        // `replaces`: a matched rule whose name another matched rule replaces is dropped.
        let replaced: Vec<&str> = matches
            .iter()
            .flatten()
            .flat_map(|m| config.rules[m.rule].replaces.iter().map(String::as_str))
            .collect();
        let mut plans = Vec::with_capacity(matches.len());
        for (descriptor, found) in request.descriptors.iter().zip(&matches) {
            let Some(found) = found else {
                plans.push(Plan::Free);
                continue;
            };
            let rule = &config.rules[found.rule];
            if rule
                .name
                .as_deref()
                .is_some_and(|name| replaced.contains(&name))
            {
                plans.push(Plan::Free);
                continue;
            }
            let cost = descriptor_cost(request, descriptor);
            let key = limiter_key(descriptor, rule.share_threshold, found.wildcard_levels);
            if let Some(over) = &descriptor.limit {
                let Some(unit) = Unit::from_override(over.unit) else {
                    return Err(Refusal::Invalid(format!(
                        "a descriptor's limit override has unit {}, which is not a known unit",
                        over.unit
                    )));
                };
                if over.requests_per_unit == 0 {
                    plans.push(Plan::DenyAll(found.rule, unit));
                    continue;
                }
                let limiter = snapshot
                    .limits
                    .for_override(config, found.rule, over.requests_per_unit, unit)
                    .await
                    .map_err(Refusal::Unavailable)?;
                plans.push(Plan::Decide {
                    rule: found.rule,
                    limiter,
                    shown: (over.requests_per_unit, unit),
                    key,
                    cost,
                });
                continue;
            }
            plans.push(match &rule.limit {
                Limit::Unlimited => Plan::Unlimited(found.rule),
                Limit::DenyAll { unit } => Plan::DenyAll(found.rule, *unit),
                Limit::Quota(q) => match snapshot.limits.rule(found.rule) {
                    Some(limiter) => Plan::Decide {
                        rule: found.rule,
                        limiter: limiter.clone(),
                        shown: q.shown,
                        key,
                        cost,
                    },
                    None => Plan::Free,
                },
            });
        }
        Ok(plans)
    }

    /// Decides the descriptors `members` (indexes into `plans`) together: all consume or
    /// none does; with `peek_only`, none does and each reports where it stands.
    ///
    /// This is the one place that talks to the seam, so that a batched form of it can
    /// replace the loop inside `all_of_each` without touching anything else.
    async fn decide_group(
        &self,
        config: &Config,
        plans: &[Plan],
        members: &[usize],
        peek_only: bool,
        statuses: &mut [Option<Status>],
    ) -> Result<(), Refusal> {
        if members.is_empty() {
            return Ok(());
        }
        let seam: Vec<Member<'_, str>> = members
            .iter()
            .filter_map(|&i| match &plans[i] {
                Plan::Decide {
                    limiter, key, cost, ..
                } => Some(Member::new(limiter.backend(), key.as_str()).with_cost(*cost)),
                _ => None,
            })
            .collect();
        let op = if peek_only { Op::Peek } else { Op::Check };
        let mut decisions = Vec::with_capacity(seam.len());
        let outcome = all_of_each(&seam, op, &mut decisions).await;
        match outcome {
            Ok(_all_allowed) => {
                for (&i, decision) in members.iter().zip(decisions) {
                    // A member that allowed reports OK even when another denied the request
                    // (then it consumed nothing): each status tells its own limit.
                    let over = decision.is_denied();
                    statuses[i] = Some(status(&plans[i], config, Some(decision), over));
                }
                Ok(())
            }
            Err(failed) => {
                telemetry::backend_error();
                tracing::warn!(error = %failed, "the backend could not decide");
                match self.on_backend_error {
                    OnBackendError::Error => Err(Refusal::Unavailable(format!(
                        "the rate-limit backend could not decide: {}",
                        failed.error
                    ))),
                    OnBackendError::Allow | OnBackendError::Deny => {
                        let over = self.on_backend_error == OnBackendError::Deny;
                        for &i in members {
                            statuses[i] = Some(status(&plans[i], config, None, over));
                        }
                        Ok(())
                    }
                }
            }
        }
    }

    /// A peek, or `None` when the backend failed and its failures are answered anyway.
    async fn peek(
        &self,
        backend: &dyn Backend<str>,
        key: &str,
        cost: u32,
    ) -> Result<Option<Decision>, Refusal> {
        match backend.decide(key, cost, Op::Peek).await {
            Ok(decision) => Ok(Some(decision)),
            Err(error) => {
                telemetry::backend_error();
                match self.on_backend_error {
                    OnBackendError::Error => Err(Refusal::Unavailable(format!(
                        "the rate-limit backend could not decide: {error}"
                    ))),
                    _ => Ok(None),
                }
            }
        }
    }
}

/// The status of a descriptor that no rule limits.
fn free() -> Status {
    Status {
        over: false,
        limit: None,
        remaining: 0,
        reset_after: Duration::ZERO,
        retry_after: None,
    }
}

/// The status of a decided descriptor (`decision` is `None` when the backend failed).
fn status(plan: &Plan, config: &Config, decision: Option<Decision>, over: bool) -> Status {
    let Plan::Decide {
        rule,
        limiter,
        shown,
        ..
    } = plan
    else {
        return free();
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
        retry_after: if over {
            Some(
                decision
                    .and_then(|d| d.retry_after())
                    .unwrap_or(Duration::from_secs(1)),
            )
        } else {
            None
        },
    }
}

/// Each descriptor's rule, for metrics.
fn plans_rules(plans: &[Plan], request: &RateLimitRequest) -> Vec<Option<(usize, u32)>> {
    plans
        .iter()
        .zip(&request.descriptors)
        .map(|(plan, descriptor)| match plan {
            Plan::Free => None,
            Plan::Unlimited(rule) | Plan::DenyAll(rule, _) => {
                Some((*rule, descriptor_cost(request, descriptor)))
            }
            Plan::Decide { rule, cost, .. } => Some((*rule, *cost)),
        })
        .collect()
}

/// A descriptor's cost: its own `hits_addend` when set (0 only looks), else the request's
/// (0 means 1).
fn descriptor_cost(
    request: &RateLimitRequest,
    descriptor: &crate::proto::RateLimitDescriptor,
) -> u32 {
    match descriptor.hits_addend {
        // input::problem has already refused values beyond u32.
        Some(hits) => u32::try_from(hits).unwrap_or(u32::MAX),
        None if request.hits_addend == 0 => 1,
        None => request.hits_addend,
    }
}

/// The limiter key of a descriptor: its values, each length-prefixed so that no two
/// different descriptors share a key; a wildcard level whose rule shares its threshold
/// contributes a marker instead of the value, so every matching value shares one counter.
fn limiter_key(
    descriptor: &crate::proto::RateLimitDescriptor,
    share_threshold: bool,
    wildcard_levels: u64,
) -> String {
    let mut key = String::new();
    for (depth, entry) in descriptor.entries.iter().enumerate() {
        let shared = share_threshold && depth < 64 && wildcard_levels & (1 << depth) != 0;
        if shared {
            key.push_str("*;");
        } else {
            key.push_str(&entry.value.len().to_string());
            key.push(':');
            key.push_str(&entry.value);
        }
    }
    key
}
