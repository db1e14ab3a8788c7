//! From a request to a [`Plan`] per descriptor: its rule (after `replaces`), what that rule
//! does with it, its key and its cost; and the status a plan's decision makes.

use super::{quotas, Refusal, Snapshot};
use crate::config::{Limit, Rule, Unit};
use crate::limits::{OverrideError, RuleQuota};
use crate::proto::{RateLimitDescriptor, RateLimitRequest};
use crate::status::{Shown, Status};
use crate::telemetry::{self, BadInput};
use sluicegate::Decision;
use std::borrow::Cow;
use std::time::Duration;

/// One descriptor on its way to a decision.
pub(super) struct Plan<'a> {
    /// The rule that matched, with its index (its counters'), if one did.
    pub(super) rule: Option<(usize, &'a Rule)>,
    /// What the descriptor asks for: 0 only looks.
    pub(super) cost: u32,
    /// What the rule does with it.
    pub(super) action: Action<'a>,
}

/// What a matched rule does with a descriptor.
pub(super) enum Action<'a> {
    /// No rule (or a replaced one): OK, no limit.
    Free,
    /// `unlimited`.
    Unlimited,
    /// `requests_per_unit: 0` (configured, or a descriptor's override).
    DenyAll { unit: Unit },
    /// A descriptor's override for which no limiter could be kept (every cached one carries
    /// state): over the limit, as a new key in a full key table is.
    NoRoom { shown: (u32, Unit) },
    /// Quotas to decide on `key`, all or nothing: the rule's (borrowed from the snapshot),
    /// or an override's one.
    Decide {
        quotas: Cow<'a, [RuleQuota]>,
        key: String,
    },
}

/// How a plan with a quota takes part in the request's one all-or-nothing decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// Decided with the others at its cost, all or nothing.
    Enforced,
    /// Looked at (cost 0) in the same call: a zero cost, or a cost no wait can ever admit,
    /// which is over whatever the limit holds.
    Look { too_costly: bool },
    /// A shadow-mode rule's cost: decided on its own, never denying the others.
    Shadow,
}

impl Plan<'_> {
    /// The quotas and key, for plans with a quota.
    pub(super) fn quotas(&self) -> Option<(&[RuleQuota], &str)> {
        match &self.action {
            Action::Decide { quotas, key } => Some((quotas, key)),
            _ => None,
        }
    }

    /// How it takes part in the decision; `None` for plans without a quota.
    pub(super) fn part(&self) -> Option<Part> {
        let (quotas, _) = self.quotas()?;
        let shadow = self.rule.is_some_and(|(_, rule)| rule.shadow_mode);
        let too_costly = quotas::too_costly(quotas, self.cost).is_some();
        Some(if self.cost == 0 || too_costly {
            Part::Look { too_costly }
        } else if shadow {
            Part::Shadow
        } else {
            Part::Enforced
        })
    }

    /// True when this descriptor denies the request whatever the limits hold: a deny-all
    /// rule, or a cost no wait can admit, outside shadow mode. The others then only look.
    pub(super) fn denies_anyway(&self) -> bool {
        let shadow = self.rule.is_some_and(|(_, rule)| rule.shadow_mode);
        let over = matches!(self.action, Action::DenyAll { .. } | Action::NoRoom { .. })
            || self.part() == Some(Part::Look { too_costly: true });
        over && !shadow
    }

    /// The status of a plan that needs no decision; `None` for those with a quota.
    pub(super) fn fixed_status(&self) -> Option<Status> {
        let rule = self.rule.map(|(_, rule)| rule);
        match (&self.action, rule) {
            (Action::Free, _) | (_, None) => Some(Status::free()),
            (Action::Unlimited, _) => Some(Status {
                remaining: u32::MAX,
                ..Status::free()
            }),
            (Action::DenyAll { unit }, Some(rule)) => Some(Status {
                over: true,
                limit: Some(shown(rule, (0, *unit), 0, unit.duration())),
                remaining: 0,
                reset_after: unit.duration(),
                retry_after: Some(unit.duration()),
                quotas: Vec::new(),
            }),
            (Action::NoRoom { shown: as_shown }, Some(rule)) => {
                let period = as_shown.1.duration();
                Some(Status {
                    over: true,
                    limit: Some(shown(rule, *as_shown, as_shown.0, period)),
                    remaining: 0,
                    reset_after: Duration::from_secs(1),
                    retry_after: Some(Duration::from_secs(1)),
                    quotas: Vec::new(),
                })
            }
            (Action::Decide { .. }, _) => None,
        }
    }

    /// The status of a plan with a quota once decided: `decisions` (one per quota) is `None`
    /// when the backend failed and its failures are answered anyway, `over` then saying how.
    /// It reports the tightest quota ([`quotas::reported`]).
    pub(super) fn decided_status(&self, decisions: Option<&[Decision]>, over: bool) -> Status {
        let (Some((_, rule)), Action::Decide { quotas, .. }) = (self.rule, &self.action) else {
            return self.fixed_status().unwrap_or_else(Status::free);
        };
        let too_costly = quotas::too_costly(quotas, self.cost);
        let at = too_costly.unwrap_or_else(|| decisions.map_or(0, quotas::reported));
        let decision = decisions.and_then(|d| d.get(at).copied());
        let quota = quotas[at].limiter.backend().quota();
        let over = over || too_costly.is_some() || decision.is_some_and(|d| d.is_denied());
        let status = Status {
            over,
            limit: Some(shown(rule, quotas[at].shown, quota.limit(), quota.period())),
            remaining: decision.map_or(0, |d| d.remaining()),
            reset_after: decision.map_or(Duration::ZERO, |d| d.reset_after()),
            retry_after: over.then(|| {
                decision
                    .and_then(|d| d.retry_after())
                    .unwrap_or(Duration::from_secs(1))
            }),
            quotas: Vec::new(),
        };
        quotas::with_parts(status, quotas, decisions, at)
    }
}

/// How a response shows `rule`.
fn shown(rule: &Rule, (requests_per_unit, unit): (u32, Unit), q: u32, w: Duration) -> Shown {
    Shown {
        name: rule.display_name().to_owned(),
        requests_per_unit,
        unit,
        quota_limit: q,
        period: w,
        shadow: rule.shadow_mode,
    }
}

/// Matches every descriptor of `request` and works out its action, key and cost.
pub(super) async fn plan<'a>(
    snapshot: &'a Snapshot,
    request: &RateLimitRequest,
) -> Result<Vec<Plan<'a>>, Refusal> {
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
        let cost = cost(request, descriptor);
        let free = Plan {
            rule: None,
            cost,
            action: Action::Free,
        };
        let Some(found) = found else {
            plans.push(free);
            continue;
        };
        let rule = &config.rules[found.rule];
        if rule
            .name
            .as_deref()
            .is_some_and(|name| replaced.contains(&name))
        {
            plans.push(free);
            continue;
        }
        let key = key(descriptor, rule.share_threshold, found.wildcard_levels);
        let action = if let Some(over) = &descriptor.limit {
            let Some(unit) = Unit::from_override(over.unit) else {
                return Err(Refusal::Invalid(
                    BadInput::Override,
                    format!(
                        "a descriptor's limit override has unit {}, which is not a known unit",
                        over.unit
                    ),
                ));
            };
            let as_shown = (over.requests_per_unit, unit);
            if over.requests_per_unit == 0 {
                Action::DenyAll { unit }
            } else {
                match snapshot
                    .limits
                    .for_override(config, found.rule, over.requests_per_unit, unit)
                    .await
                {
                    Ok(limiter) => Action::Decide {
                        quotas: Cow::Owned(vec![RuleQuota {
                            limiter,
                            shown: as_shown,
                        }]),
                        key,
                    },
                    Err(OverrideError::Invalid(why)) => {
                        return Err(Refusal::Invalid(BadInput::Override, why))
                    }
                    Err(OverrideError::NoRoom) => {
                        telemetry::overrides_full(snapshot.limits.overrides().max());
                        Action::NoRoom { shown: as_shown }
                    }
                }
            }
        } else {
            match &rule.limit {
                Limit::Unlimited => Action::Unlimited,
                Limit::DenyAll { unit } => Action::DenyAll { unit: *unit },
                Limit::Quotas(_) => match snapshot.limits.rule(found.rule) {
                    Some(quotas) => Action::Decide {
                        quotas: Cow::Borrowed(quotas),
                        key,
                    },
                    None => Action::Free,
                },
            }
        };
        // A rule whose quota has no limiter (none was built) counts as no rule at all.
        let matched = !matches!(action, Action::Free);
        plans.push(Plan {
            rule: matched.then_some((found.rule, rule)),
            cost,
            action,
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
