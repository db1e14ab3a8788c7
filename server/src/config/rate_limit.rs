//! A descriptor's `rate_limit` block: envoyproxy/ratelimit's fields (`unit`,
//! `requests_per_unit`, `unlimited`, `name`, `replaces`) and sluicegate's (`algorithm`,
//! `burst`, `quota`), checked one by one.

use super::parse::{describe, join, kind, scalar, Parser};
use super::{Limit, QuotaRule, Unit};
use serde_norway::{Mapping, Value};
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
            let quotas = match scalar(text).map(|t| Quota::parse_many(&t)) {
                Some(Ok(quotas)) => quotas,
                Some(Err(e)) => {
                    self.problem(&join(at, "quota"), e);
                    return None;
                }
                None => {
                    self.problem(
                        &join(at, "quota"),
                        "must be a string such as \"100/30s burst 20\" or \"5/minute; 100/hour\"",
                    );
                    return None;
                }
            };
            return self.quotas(quotas, algorithm, burst, at);
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
        let quota = self.with_burst(quota, burst, at)?;
        self.runs(algorithm, &quota, &join(at, "requests_per_unit"))?;
        Some(Limit::Quotas(vec![QuotaRule {
            quota,
            algorithm,
            shown: (requests, unit),
        }]))
    }

    /// The limit of a `quota` string's quotas (the library's `Quota::parse_many`, as Rust,
    /// Node and Python read it). `burst` applies to one quota only: with several, which one
    /// it meant is a guess, and the string can say it (`"5/minute burst 2; 100/hour"`).
    fn quotas(
        &mut self,
        quotas: Vec<Quota>,
        algorithm: AlgorithmKind,
        burst: Option<u32>,
        at: &str,
    ) -> Option<Limit> {
        if quotas.len() > 1 && burst.is_some() {
            self.problem(
                &join(at, "burst"),
                "applies to one quota, and quota has several: give each its burst in the quota string (\"5/minute burst 2; 100/hour\")",
            );
            return None;
        }
        let mut rules: Vec<QuotaRule> = Vec::with_capacity(quotas.len());
        for quota in quotas {
            let quota = self.with_burst(quota, burst, at)?;
            self.runs(algorithm, &quota, &join(at, "quota"))?;
            // The same quota twice decides as once; on Redis the two would share one key.
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
        Some(Limit::Quotas(rules))
    }

    /// `Some` when `algorithm` runs `quota` (the library's check, the error building its
    /// limiter would give: a range it cannot hold, an anchored quota without windows); a
    /// problem at `field` otherwise.
    fn runs(&mut self, algorithm: AlgorithmKind, quota: &Quota, field: &str) -> Option<()> {
        match algorithm.check_quota(quota) {
            Ok(()) => Some(()),
            Err(e) => {
                self.problem(field, e);
                None
            }
        }
    }

    fn with_burst(&mut self, quota: Quota, burst: Option<u32>, at: &str) -> Option<Quota> {
        let Some(burst) = burst else {
            return Some(quota);
        };
        match quota.try_with_burst(burst) {
            Ok(quota) => Some(quota),
            Err(e) => {
                self.problem(&join(at, "burst"), e);
                None
            }
        }
    }
}
