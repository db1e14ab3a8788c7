//! A descriptor's `rate_limit` block: envoyproxy/ratelimit's fields (`unit`,
//! `requests_per_unit`, `unlimited`, `name`, `replaces`) and sluicegate's (`algorithm`,
//! `burst`, `quota`), checked one by one.

use super::parse::{describe, join, kind, scalar, Parser};
use super::{Limit, QuotaRule, Unit};
use serde_norway::{Mapping, Value};
use sluicegate::http::spec::{LimitQuotas, QuotaPart, QuotaProblem};
use sluicegate::policy::AlgorithmKind;
use sluicegate::Quota;
use std::time::Duration;

const RATE_LIMIT_FIELDS: &[&str] = &[
    "unit",
    "requests_per_unit",
    "unlimited",
    "name",
    "replaces",
    "algorithm",
    "burst",
    "quota",
];

impl Parser<'_> {
    /// A `rate_limit` block: the limit, its name and what it replaces.
    pub(super) fn rate_limit(
        &mut self,
        block: &Value,
        at: &str,
    ) -> Option<(Limit, Option<String>, Vec<String>)> {
        let map = self.mapping(block, at, "rate_limit")?;
        let before = self.problems.len();
        self.unknown_fields(map, at, RATE_LIMIT_FIELDS);
        let name = match map.get("name") {
            None | Some(Value::Null) => None,
            Some(v) => match scalar(v) {
                Some(name) if !name.is_empty() => Some(name),
                _ => {
                    self.problem(&join(at, "name"), "must be a non-empty string");
                    None
                }
            },
        };
        let replaces = self.replaces(map.get("replaces"), &join(at, "replaces"));
        let unlimited_ok = self.problems.len();
        let unlimited = self.flag(map, at, "unlimited");
        let limit = if self.problems.len() > unlimited_ok {
            // A bad `unlimited` says nothing about what was meant: one problem is enough.
            None
        } else if unlimited {
            for field in ["unit", "requests_per_unit", "quota", "algorithm", "burst"] {
                if map.contains_key(field) {
                    self.problem(
                        &join(at, field),
                        "an unlimited rate_limit takes no unit, requests_per_unit, quota, algorithm or burst",
                    );
                }
            }
            Some(Limit::Unlimited)
        } else {
            self.limited(map, at)
        };
        (self.problems.len() == before).then_some((limit?, name, replaces))
    }

    fn replaces(&mut self, value: Option<&Value>, at: &str) -> Vec<String> {
        let items = match value {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Sequence(items)) => items,
            Some(other) => {
                self.problem(
                    at,
                    format_args!("must be a list of {{name: ...}}, not {}", kind(other)),
                );
                return Vec::new();
            }
        };
        let mut names = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let here = format!("{at}[{i}]");
            let Some(map) = self.mapping(item, &here, "a replaces entry") else {
                continue;
            };
            self.unknown_fields(map, &here, &["name"]);
            match map.get("name").and_then(scalar) {
                Some(name) if !name.is_empty() => names.push(name),
                _ => self.problem(&join(&here, "name"), "must be a non-empty string"),
            }
        }
        names
    }

    /// The limit of a `rate_limit` that is not unlimited.
    fn limited(&mut self, map: &Mapping, at: &str) -> Option<Limit> {
        let algorithm = match map.get("algorithm") {
            None | Some(Value::Null) => AlgorithmKind::FixedWindow,
            Some(v) => match scalar(v).map(|name| name.parse::<AlgorithmKind>()) {
                Some(Ok(kind)) => kind,
                _ => {
                    self.problem(
                        &join(at, "algorithm"),
                        format_args!(
                            "unknown algorithm {} (expected one of: gcra, token-bucket, leaky-bucket, fixed-window, sliding-window, sliding-log)",
                            describe(v)
                        ),
                    );
                    return None;
                }
            },
        };
        let burst = match map.get("burst") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64().and_then(|b| u32::try_from(b).ok()) {
                Some(b) if b > 0 => Some(b),
                _ => {
                    self.problem(
                        &join(at, "burst"),
                        format_args!(
                            "must be a whole number from 1 to {}, not {}",
                            u32::MAX,
                            describe(v)
                        ),
                    );
                    return None;
                }
            },
        };
        if let Some(text) = map.get("quota") {
            for field in ["unit", "requests_per_unit"] {
                if map.contains_key(field) {
                    self.problem(
                        &join(at, field),
                        "give either quota or unit with requests_per_unit, not both",
                    );
                }
            }
            let Some(text) = scalar(text) else {
                self.problem(
                    &join(at, "quota"),
                    "must be a string such as \"100/30s burst 20\" or \"5/minute; 100/hour\"",
                );
                return None;
            };
            // Read as every front end reads quota strings (the library's `LimitQuotas`).
            let read = LimitQuotas::new(algorithm).burst(burst);
            let parts = self.quota_parts(read.check(&[text]), at, "quota")?;
            return Some(self.rules(parts, algorithm));
        }
        let unit = match map.get("unit") {
            None => {
                self.problem(
                    &join(at, "unit"),
                    "missing: give unit and requests_per_unit, quota, or unlimited: true",
                );
                return None;
            }
            Some(v) => match scalar(v).as_deref().and_then(Unit::parse) {
                Some(unit) => unit,
                None => {
                    self.problem(
                        &join(at, "unit"),
                        format_args!("unknown unit {} (expected second, minute, hour, day, week, month or year)", describe(v)),
                    );
                    return None;
                }
            },
        };
        let requests = match map.get("requests_per_unit") {
            None => {
                self.problem(
                    &join(at, "requests_per_unit"),
                    "missing: how many requests per unit",
                );
                return None;
            }
            Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) => n,
                None => {
                    self.problem(
                        &join(at, "requests_per_unit"),
                        format_args!(
                            "must be a whole number from 0 to {}, not {}",
                            u32::MAX,
                            describe(v)
                        ),
                    );
                    return None;
                }
            },
        };
        if requests == 0 {
            return Some(Limit::DenyAll { unit });
        }
        let quota = match Quota::new(requests, Duration::from_secs(unit.seconds())) {
            Ok(quota) => quota,
            Err(e) => {
                self.problem(&join(at, "requests_per_unit"), e);
                return None;
            }
        };
        let read = LimitQuotas::new(algorithm).burst(burst);
        let parts = self.quota_parts(read.check_quotas(vec![quota]), at, "requests_per_unit")?;
        let [QuotaPart::Quota(quota)] = parts[..] else {
            return None;
        };
        Some(Limit::Quotas(vec![QuotaRule {
            quota,
            algorithm,
            shown: (requests, unit),
        }]))
    }

    /// The quotas `read` gave, or `None` with its problem at `burst` or at `field`.
    fn quota_parts(
        &mut self,
        read: Result<Vec<QuotaPart>, QuotaProblem>,
        at: &str,
        field: &str,
    ) -> Option<Vec<QuotaPart>> {
        match read {
            Ok(parts) => Some(parts),
            Err(problem) => {
                let field = if problem.burst { "burst" } else { field };
                self.problem(&join(at, field), problem.reason);
                None
            }
        }
    }

    /// The limit of a `quota` string's quotas: each shown as its count per unit, the same
    /// quota twice kept once (they decide as one; on Redis the two would share one key).
    fn rules(&mut self, parts: Vec<QuotaPart>, algorithm: AlgorithmKind) -> Limit {
        let mut rules: Vec<QuotaRule> = Vec::with_capacity(parts.len());
        for part in parts {
            let quota = part.quota();
            if rules.iter().any(|rule| rule.quota == quota) {
                continue;
            }
            let shown = Unit::show(quota.limit(), quota.period());
            rules.push(QuotaRule {
                quota,
                algorithm,
                shown,
            });
        }
        Limit::Quotas(rules)
    }
}
