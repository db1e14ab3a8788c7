//! From a request to a [`Plan`] per descriptor: its rule (after `replaces`), limiter, key
//! and cost.

use super::{Refusal, Snapshot};
use crate::config::{Limit, Unit};
use crate::limits::RuleLimiter;
use crate::proto::{RateLimitDescriptor, RateLimitRequest};

/// One descriptor on its way to a decision.
pub(super) enum Plan {
    /// No rule (or a replaced one): OK, no limit.
    Free,
    /// `unlimited`.
    Unlimited { rule: usize, cost: u32 },
    /// `requests_per_unit: 0` (configured, or a descriptor's override).
    DenyAll { rule: usize, unit: Unit, cost: u32 },
    /// A quota to decide: the rule, its limiter, how `current_limit` shows it, the
    /// descriptor's key and its cost (0 only looks).
    Decide {
        rule: usize,
        limiter: RuleLimiter,
        shown: (u32, Unit),
        key: String,
        cost: u32,
    },
}

impl Plan {
    /// The matched rule and the cost, for metrics.
    pub(super) fn rule_and_cost(&self) -> Option<(usize, u32)> {
        match *self {
            Plan::Free => None,
            Plan::Unlimited { rule, cost }
            | Plan::DenyAll { rule, cost, .. }
            | Plan::Decide { rule, cost, .. } => Some((rule, cost)),
        }
    }
}

/// Matches every descriptor of `request` and works out its limiter, key and cost.
pub(super) async fn plan(
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
        let name = rule.name.as_deref();
        if name.is_some_and(|name| replaced.contains(&name)) {
            plans.push(Plan::Free);
            continue;
        }
        let cost = cost(request, descriptor);
        let key = key(descriptor, rule.share_threshold, found.wildcard_levels);
        if let Some(over) = &descriptor.limit {
            let Some(unit) = Unit::from_override(over.unit) else {
                return Err(Refusal::Invalid(format!(
                    "a descriptor's limit override has unit {}, which is not a known unit",
                    over.unit
                )));
            };
            if over.requests_per_unit == 0 {
                plans.push(Plan::DenyAll {
                    rule: found.rule,
                    unit,
                    cost,
                });
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
            Limit::Unlimited => Plan::Unlimited {
                rule: found.rule,
                cost,
            },
            Limit::DenyAll { unit } => Plan::DenyAll {
                rule: found.rule,
                unit: *unit,
                cost,
            },
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

/// A descriptor's cost: its own `hits_addend` when set (0 only looks), else the request's
/// (0 means 1). Negative hits (Envoy's `is_negative_hits`, giving quota back) only look:
/// the algorithms cannot give back safely, and taking nothing never over-admits.
fn cost(request: &RateLimitRequest, descriptor: &RateLimitDescriptor) -> u32 {
    if descriptor.is_negative_hits {
        return 0;
    }
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
fn key(descriptor: &RateLimitDescriptor, share_threshold: bool, wildcard_levels: u64) -> String {
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
