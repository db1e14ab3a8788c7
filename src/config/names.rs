//! [`AlgorithmKind`] and [`KeySpec`] in configuration: the names the command line uses.

use super::raw::{Checked, Raw};
use crate::policy::{AlgorithmKind, KeySpec, PolicyError};
use serde::de::{Deserialize, DeserializeSeed, Deserializer};
use serde::ser::{Serialize, Serializer};

/// Written as its kebab-case name: `"gcra"`, `"token-bucket"`, `"sliding-window"`...
impl Serialize for AlgorithmKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Read from its name, as [`FromStr`](std::str::FromStr) reads it (any case, `_` for `-`).
impl<'de> Deserialize<'de> for AlgorithmKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Checked(|raw: Raw| algorithm_of(&raw)).deserialize(deserializer)
    }
}

/// Written as `"global"`, `"peer-ip"` or `"header:NAME"`.
impl Serialize for KeySpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Read from `"global"`, `"peer-ip"` or `"header:NAME"`, as [`FromStr`](std::str::FromStr)
/// reads them.
impl<'de> Deserialize<'de> for KeySpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Checked(|raw: Raw| key_of(&raw)).deserialize(deserializer)
    }
}

/// The algorithm `value` names, or what was wrong.
pub(super) fn algorithm_of(value: &Raw) -> Result<AlgorithmKind, String> {
    let names = AlgorithmKind::ALL.map(AlgorithmKind::name);
    let expected = format!("expected {} or {}", names[..5].join(", "), names[5]);
    match value {
        Raw::Str(text) => text
            .parse()
            .map_err(|_| format!("unknown algorithm {:?}: {expected}", text.trim())),
        other => Err(format!("{expected}, found {}", other.describe())),
    }
}

/// The key `value` names, or what was wrong.
pub(super) fn key_of(value: &Raw) -> Result<KeySpec, String> {
    const EXPECTED: &str = "expected global, peer-ip or header:NAME";
    match value {
        Raw::Str(text) => text.parse().map_err(|error| match error {
            PolicyError::BadHeaderName(name) => format!(
                "{name:?} is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)"
            ),
            _ => format!("unknown key {:?}: {EXPECTED}", text.trim()),
        }),
        other => Err(format!("{EXPECTED}, found {}", other.describe())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_on_the_command_line() {
        for kind in AlgorithmKind::ALL {
            assert_eq!(algorithm_of(&Raw::Str(kind.name().into())), Ok(kind));
        }
        assert_eq!(
            algorithm_of(&Raw::Str("Token_Bucket".into())),
            Ok(AlgorithmKind::TokenBucket)
        );
        assert_eq!(
            key_of(&Raw::Str("header:X-Api-Key".into())),
            Ok(KeySpec::Header("x-api-key".into()))
        );
    }

    #[test]
    fn bad_names_list_the_good_ones() {
        assert_eq!(
            algorithm_of(&Raw::Str("gcr".into())).unwrap_err(),
            "unknown algorithm \"gcr\": expected gcra, token-bucket, leaky-bucket, \
             fixed-window, sliding-window or sliding-log"
        );
        assert!(algorithm_of(&Raw::Int(1))
            .unwrap_err()
            .ends_with("or sliding-log, found the number 1"));
        assert_eq!(
            key_of(&Raw::Str("cookie".into())).unwrap_err(),
            "unknown key \"cookie\": expected global, peer-ip or header:NAME"
        );
        assert!(key_of(&Raw::Str("header:x y".into()))
            .unwrap_err()
            .starts_with("\"x y\" is not an HTTP header name"));
    }
}
