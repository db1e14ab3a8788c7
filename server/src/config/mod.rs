//! The rate-limit config: envoyproxy/ratelimit's YAML, accepted unchanged, plus sluicegate's
//! `algorithm`, `burst` and `quota` inside `rate_limit`.
//!
//! [`load`] reads a file or a directory of `*.yaml`/`*.yml` files (one domain each) into a
//! [`Config`]: a tree of [`Node`]s per domain and a flat list of [`Rule`]s, each rule a
//! `rate_limit` block where it sits. [`Config::find`] matches a request's descriptor.

mod matcher;
mod parse;
mod rate_limit;
mod source;
mod unit;

pub use source::{fingerprint, Fingerprint};
pub use unit::Unit;

use sluicegate::policy::AlgorithmKind;
use sluicegate::Quota;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// A loaded config: every domain's descriptor tree and the rules in it.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The domains by name.
    pub domains: BTreeMap<String, Domain>,
    /// Every rule of every domain; [`Node::rule`] indexes this.
    pub rules: Vec<Rule>,
}

/// One domain: its file and its top-level descriptors.
#[derive(Debug, Clone)]
pub struct Domain {
    /// The file it came from (for error messages and `/rlconfig`).
    pub file: String,
    /// The top-level descriptors.
    pub descriptors: Vec<Node>,
}

/// One configured descriptor entry.
#[derive(Debug, Clone)]
pub struct Node {
    /// The entry's key.
    pub key: String,
    /// What the entry's value must be.
    pub value: ValueMatch,
    /// Its `rate_limit`, as an index into [`Config::rules`].
    pub rule: Option<usize>,
    /// Nested descriptors.
    pub children: Vec<Node>,
}

/// How a configured entry matches a request entry's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueMatch {
    /// No `value`: any value, a counter per value.
    Any,
    /// `value` without `*`: exactly this value.
    Exact(String),
    /// `value` with `*`: a glob where `*` matches any run of characters (`foo*` is a prefix).
    Wildcard(String),
}

/// A `rate_limit` block and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The domain.
    pub domain: String,
    /// The path of descriptor keys (and configured values) to it, as envoyproxy/ratelimit
    /// names it in metrics: `message_type_marketing.to_number`. Unique within a domain.
    pub key: String,
    /// What it allows.
    pub limit: Limit,
    /// `rate_limit.name`.
    pub name: Option<String>,
    /// The names in `rate_limit.replaces`.
    pub replaces: Vec<String>,
    /// `shadow_mode`: decided and counted, but never denies.
    pub shadow_mode: bool,
    /// `detailed_metric`: metrics name the request's values rather than the rule's.
    pub detailed_metric: bool,
    /// `share_threshold` on a wildcard: every matching value shares one counter.
    pub share_threshold: bool,
}

impl Rule {
    /// The name shown in `current_limit` and the RateLimit headers: `rate_limit.name`, else
    /// the rule's key.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.key)
    }

    /// The identity a rule keeps across reloads (its place in the config).
    pub fn identity(&self) -> (&str, &str) {
        (&self.domain, &self.key)
    }
}

/// What a rule allows.
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    /// `unlimited: true`: always OK, nothing counted.
    Unlimited,
    /// `requests_per_unit: 0`: always over the limit (a blocklist).
    DenyAll {
        /// The configured unit, shown in `current_limit`.
        unit: Unit,
    },
    /// One quota or several (`quota: "5/minute; 100/hour"`), one algorithm deciding each;
    /// several are decided all or nothing. Never empty, never the same quota twice.
    Quotas(Vec<QuotaRule>),
}

/// One quota of a limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuotaRule {
    /// The quota.
    pub quota: Quota,
    /// The algorithm that decides it.
    pub algorithm: AlgorithmKind,
    /// `current_limit`'s requests per unit, and the unit.
    pub shown: (u32, Unit),
}

/// Everything wrong with a config, one message per problem, each naming the file, the
/// descriptor path and the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// One sentence per problem.
    pub problems: Vec<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str(problem)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Loads `path`: a YAML file, or a directory whose `*.yaml` and `*.yml` files (not nested
/// directories) each hold one domain.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let files = source::read(path).map_err(|problem| ConfigError {
        problems: vec![problem],
    })?;
    parse::build(&files)
}

/// Parses config files given as `(name, text)` pairs, as [`load`] does after reading them.
pub fn from_texts(files: &[(String, String)]) -> Result<Config, ConfigError> {
    parse::build(files)
}

impl fmt::Display for Config {
    /// The loaded rules, one line each, for `/rlconfig`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rule in &self.rules {
            write!(f, "{}.{}: ", rule.domain, rule.key)?;
            match &rule.limit {
                Limit::Unlimited => f.write_str("unlimited")?,
                Limit::DenyAll { unit } => write!(f, "0 per {unit} (deny all)")?,
                Limit::Quotas(quotas) => {
                    for (i, q) in quotas.iter().enumerate() {
                        let and = if i > 0 { " and " } else { "" };
                        let (count, unit) = q.shown;
                        write!(f, "{and}{count} per {unit} ({}, {})", q.quota, q.algorithm)?;
                    }
                }
            }
            if let Some(name) = &rule.name {
                write!(f, ", name={name}")?;
            }
            if !rule.replaces.is_empty() {
                write!(f, ", replaces={}", rule.replaces.join(","))?;
            }
            if rule.shadow_mode {
                f.write_str(", shadow_mode")?;
            }
            if rule.detailed_metric {
                f.write_str(", detailed_metric")?;
            }
            if rule.share_threshold {
                f.write_str(", share_threshold")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
