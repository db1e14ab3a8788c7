//! [`Policy`] in configuration: a map `{ name, quota, algorithm, key }`, or the command
//! line's `"name=...; quota=..."` string.

use super::names::{algorithm_of, key_of};
use super::quota::quota_of;
use super::raw::{at, Checked, Raw};
use crate::policy::{AlgorithmKind, KeySpec, Policy};
use crate::quota::Quota;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::fmt;

/// Written as a map of its four fields, each in its string form:
/// `{ name = "api", quota = "100/minute burst 20", algorithm = "gcra", key = "global" }`.
impl Serialize for Policy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_struct("Policy", 4)?;
        map.serialize_field("name", &self.name)?;
        map.serialize_field("quota", &self.quota)?;
        map.serialize_field("algorithm", &self.algorithm)?;
        map.serialize_field("key", &self.key)?;
        map.end()
    }
}

/// Read from a map with `name` and `quota` (required), `algorithm` (default `gcra`) and `key`
/// (default `global`), or from the `--limit` string `"name=api; quota=100/minute"`. Unknown
/// and repeated fields are refused; every message names the field (`quota.limit: ...`).
impl<'de> Deserialize<'de> for Policy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Policy, D::Error> {
        deserializer.deserialize_any(PolicyVisitor)
    }
}

const FIELDS: &str = "name, quota, algorithm or key";

struct PolicyVisitor;

impl<'de> Visitor<'de> for PolicyVisitor {
    type Value = Policy;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a policy: a map with name, quota, algorithm and key, or a \"name=...; quota=...\" string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Policy, E> {
        text.parse().map_err(E::custom)
    }

    /// Each field is checked as it is read, so that the format points at it.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Policy, A::Error> {
        let mut name: Option<String> = None;
        let mut quota: Option<Quota> = None;
        let mut algorithm: Option<AlgorithmKind> = None;
        let mut key: Option<KeySpec> = None;
        while let Some(field) = map.next_key::<Raw>()? {
            let field = field.key_text();
            let given_twice = match field.as_str() {
                "name" => name
                    .replace(map.next_value_seed(Checked(name_of))?)
                    .is_some(),
                "quota" => {
                    let seed = Checked(|raw: Raw| quota_of(&raw, "quota"));
                    quota.replace(map.next_value_seed(seed)?).is_some()
                }
                "algorithm" => {
                    let seed = Checked(|raw: Raw| {
                        algorithm_of(&raw).map_err(|message| at("algorithm", message))
                    });
                    algorithm.replace(map.next_value_seed(seed)?).is_some()
                }
                "key" => {
                    let seed =
                        Checked(|raw: Raw| key_of(&raw).map_err(|message| at("key", message)));
                    key.replace(map.next_value_seed(seed)?).is_some()
                }
                _ => {
                    return Err(de::Error::custom(at(
                        &field,
                        format!("unknown field: expected {FIELDS}"),
                    )))
                }
            };
            if given_twice {
                return Err(de::Error::custom(at(&field, "given twice")));
            }
        }
        Ok(Policy {
            name: name.ok_or_else(|| missing("name", "every policy needs a name"))?,
            quota: quota.ok_or_else(|| missing("quota", "every policy needs a quota"))?,
            algorithm: algorithm.unwrap_or_default(),
            key: key.unwrap_or(KeySpec::Global),
        })
    }
}

fn missing<E: de::Error>(field: &str, why: &str) -> E {
    E::custom(at(field, format!("missing: {why}")))
}

fn name_of(value: Raw) -> Result<String, String> {
    match value {
        Raw::Str(name) if name.trim().is_empty() => Err(at("name", "must not be empty")),
        Raw::Str(name) => Ok(name),
        other => Err(at(
            "name",
            format!("expected a string, found {}", other.describe()),
        )),
    }
}
