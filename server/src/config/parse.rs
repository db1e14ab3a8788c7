//! From YAML text to a [`Config`]: every field checked by hand, so that each problem names
//! the file, the descriptor path and the field.

use super::{Config, ConfigError, Domain, Node, Rule, ValueMatch};
use serde_norway::{Mapping, Value};
use std::collections::BTreeMap;

/// The deepest descriptor nesting accepted (a guard against pathological files).
const MAX_DEPTH: usize = 32;

const FILE_FIELDS: &[&str] = &["domain", "descriptors"];
const DESCRIPTOR_FIELDS: &[&str] = &[
    "key",
    "value",
    "rate_limit",
    "descriptors",
    "shadow_mode",
    "detailed_metric",
    "value_to_metric",
    "share_threshold",
];

/// Parses every file and joins their domains.
pub(super) fn build(files: &[(String, String)]) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    let mut problems = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (file, text) in files {
        let mut parser = Parser {
            file,
            problems: &mut problems,
            rules: &mut config.rules,
            domain: String::new(),
        };
        let Some((name, descriptors)) = parser.file(text) else {
            continue;
        };
        if let Some(first) = seen.get(&name) {
            problems.push(format!(
                "{file}: domain {name:?} is already defined in {first}"
            ));
            continue;
        }
        seen.insert(name.clone(), file.clone());
        config.domains.insert(
            name,
            Domain {
                file: file.clone(),
                descriptors,
            },
        );
    }
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(ConfigError { problems })
    }
}

/// Walks one file, collecting problems rather than stopping at the first.
pub(super) struct Parser<'a> {
    pub(super) file: &'a str,
    pub(super) problems: &'a mut Vec<String>,
    pub(super) rules: &'a mut Vec<Rule>,
    pub(super) domain: String,
}

impl Parser<'_> {
    pub(super) fn problem(&mut self, at: &str, message: impl std::fmt::Display) {
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" {at}:")
        };
        self.problems.push(format!("{}:{at} {message}", self.file));
    }

    fn file(&mut self, text: &str) -> Option<(String, Vec<Node>)> {
        let value: Value = match serde_norway::from_str(text) {
            Ok(value) => value,
            Err(e) => {
                self.problem("", format_args!("not valid YAML: {e}"));
                return None;
            }
        };
        let map = self.mapping(&value, "", "the file")?;
        self.unknown_fields(map, "", FILE_FIELDS);
        let domain = match map.get("domain") {
            None => {
                self.problem("domain", "missing: every file names its domain");
                return None;
            }
            Some(value) => match value.as_str() {
                Some("") => {
                    self.problem("domain", "must not be empty");
                    return None;
                }
                Some(name) => name.to_owned(),
                None => {
                    self.problem("domain", "must be a string");
                    return None;
                }
            },
        };
        self.domain = domain.clone();
        let before = self.problems.len();
        let descriptors = self.list(map.get("descriptors"), "descriptors", "", 0);
        (self.problems.len() == before).then_some((domain, descriptors))
    }

    pub(super) fn mapping<'v>(
        &mut self,
        value: &'v Value,
        at: &str,
        what: &str,
    ) -> Option<&'v Mapping> {
        match value {
            Value::Mapping(map) => Some(map),
            other => {
                self.problem(
                    at,
                    format_args!("{what} must be a mapping, not {}", kind(other)),
                );
                None
            }
        }
    }

    pub(super) fn unknown_fields(&mut self, map: &Mapping, at: &str, known: &[&str]) {
        for key in map.keys() {
            match key.as_str() {
                Some(name) if known.contains(&name) => {}
                Some(name) => {
                    let field = join(at, name);
                    self.problem(
                        &field,
                        format_args!("unknown field (expected one of: {})", known.join(", ")),
                    );
                }
                None => self.problem(at, "field names must be strings"),
            }
        }
    }

    /// A `descriptors` list at `at` (`descriptors`, or `descriptors[1].descriptors`), below
    /// the rule key `parent` (empty at the top).
    fn list(&mut self, value: Option<&Value>, at: &str, parent: &str, depth: usize) -> Vec<Node> {
        let items = match value {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Sequence(items)) => items,
            Some(other) => {
                self.problem(at, format_args!("must be a list, not {}", kind(other)));
                return Vec::new();
            }
        };
        if depth >= MAX_DEPTH {
            self.problem(
                at,
                format_args!("descriptors nest deeper than {MAX_DEPTH} levels"),
            );
            return Vec::new();
        }
        let mut nodes: Vec<Node> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let here = format!("{at}[{i}]");
            let Some(node) = self.descriptor(item, &here, parent, depth) else {
                continue;
            };
            if nodes
                .iter()
                .any(|n| n.key == node.key && n.value == node.value)
            {
                let value = match &node.value {
                    ValueMatch::Any => String::new(),
                    ValueMatch::Exact(v) | ValueMatch::Wildcard(v) => format!(" value={v}"),
                };
                self.problem(
                    &format!("{here} (key={}{value})", node.key),
                    "duplicate descriptor: another one at this level has the same key and value",
                );
                continue;
            }
            nodes.push(node);
        }
        nodes
    }

    fn descriptor(&mut self, item: &Value, at: &str, parent: &str, depth: usize) -> Option<Node> {
        let map = self.mapping(item, at, "a descriptor")?;
        let key = match map.get("key").map(scalar) {
            None => {
                self.problem(&format!("{at}.key"), "missing: every descriptor has a key");
                return None;
            }
            Some(Some(key)) if !key.is_empty() => key,
            Some(_) => {
                self.problem(&format!("{at}.key"), "must be a non-empty string");
                return None;
            }
        };
        let at = format!("{at} (key={key})");
        self.unknown_fields(map, &at, DESCRIPTOR_FIELDS);
        let value = match map.get("value") {
            None | Some(Value::Null) => ValueMatch::Any,
            Some(v) => match scalar(v) {
                Some(v) if v.contains('*') => ValueMatch::Wildcard(v),
                Some(v) => ValueMatch::Exact(v),
                None => {
                    self.problem(&join(&at, "value"), "must be a string");
                    ValueMatch::Any
                }
            },
        };
        let segment = match &value {
            ValueMatch::Any => key.clone(),
            ValueMatch::Exact(v) | ValueMatch::Wildcard(v) => format!("{key}_{v}"),
        };
        let rule_key = if parent.is_empty() {
            segment
        } else {
            format!("{parent}.{segment}")
        };
        let shadow_mode = self.flag(map, &at, "shadow_mode");
        let detailed_metric = self.flag(map, &at, "detailed_metric");
        let _ = self.flag(map, &at, "value_to_metric");
        let share_threshold = self.flag(map, &at, "share_threshold");
        if share_threshold && !matches!(value, ValueMatch::Wildcard(_)) {
            self.problem(
                &join(&at, "share_threshold"),
                "only a wildcard value (one with '*') can share its threshold",
            );
        }
        let rule = match map.get("rate_limit") {
            None | Some(Value::Null) => None,
            Some(block) => self
                .rate_limit(block, &join(&at, "rate_limit"))
                .map(|limit| {
                    self.rules.push(Rule {
                        domain: self.domain.clone(),
                        key: rule_key.clone(),
                        limit: limit.0,
                        name: limit.1,
                        replaces: limit.2,
                        shadow_mode,
                        detailed_metric,
                        share_threshold,
                    });
                    self.rules.len() - 1
                }),
        };
        let children = self.list(
            map.get("descriptors"),
            &format!("{at}.descriptors"),
            &rule_key,
            depth + 1,
        );
        Some(Node {
            key,
            value,
            rule,
            children,
        })
    }

    pub(super) fn flag(&mut self, map: &Mapping, at: &str, field: &str) -> bool {
        match map.get(field) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(on)) => *on,
            Some(other) => {
                self.problem(
                    &join(at, field),
                    format_args!("must be true or false, not {}", kind(other)),
                );
                false
            }
        }
    }
}

/// `at.field`, or `field` at the top.
pub(super) fn join(at: &str, field: &str) -> String {
    if at.is_empty() {
        field.to_owned()
    } else {
        format!("{at}.{field}")
    }
}

/// A scalar as text (YAML `value: 404` is the string "404", as envoyproxy/ratelimit reads it).
pub(super) fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A value as an error message shows it.
pub(super) fn describe(value: &Value) -> String {
    match scalar(value) {
        Some(text) => format!("{text:?}"),
        None => kind(value).to_owned(),
    }
}

pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}
