//! [`Raw`]: a configuration value read as it is, before any validation.
//!
//! Configuration is read in two steps: first into this small tree, which accepts anything a
//! self-describing format (TOML, YAML, JSON) can hold, then validated by plain functions. So
//! every complaint is ours, made once, naming the field by its path (`quota.limit`) and what
//! was found, and the format adds its own position to it exactly once.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A value as the format gave it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Raw {
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
    Null,
    /// A list; its items never matter to us, only that it was one.
    List,
    /// Entries in the order given, duplicates kept so that they can be refused.
    Map(Vec<(Raw, Raw)>),
    Bytes,
}

impl Raw {
    /// What was found, for "expected X, found Y".
    pub(super) fn describe(&self) -> String {
        match self {
            Raw::Str(text) => format!("the string {text:?}"),
            Raw::Int(value) => format!("the number {value}"),
            Raw::Float(value) => format!("the number {value}"),
            Raw::Bool(value) => format!("{value}"),
            Raw::Null => "nothing (null)".to_owned(),
            Raw::List => "a list".to_owned(),
            Raw::Map(_) => "a map".to_owned(),
            Raw::Bytes => "bytes".to_owned(),
        }
    }

    /// A map key as text (keys are strings in every format we read, but YAML allows others).
    pub(super) fn key_text(&self) -> String {
        match self {
            Raw::Str(text) => text.clone(),
            other => other.describe(),
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Raw, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a configuration value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Raw, E> {
        Ok(Raw::Int(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Raw, E> {
        Ok(Raw::Int(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Raw, E> {
        Ok(Raw::Int(value.into()))
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Raw, E> {
        // Beyond i128 nothing fits a quota anyway; saturate so that "too large" is reported.
        Ok(Raw::Int(i128::try_from(value).unwrap_or(i128::MAX)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Raw, E> {
        Ok(Raw::Float(value))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Raw, E> {
        Ok(Raw::Str(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Raw, E> {
        Ok(Raw::Str(value))
    }

    fn visit_bytes<E: de::Error>(self, _value: &[u8]) -> Result<Raw, E> {
        Ok(Raw::Bytes)
    }

    fn visit_none<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Raw, D::Error> {
        Raw::deserialize(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Raw, D::Error> {
        Raw::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(Raw::List)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(4).min(16));
        while let Some(entry) = map.next_entry::<Raw, Raw>()? {
            entries.push(entry);
        }
        Ok(Raw::Map(entries))
    }
}

/// The fields of a map, each named once, from a closed set.
pub(super) struct Fields<'a> {
    entries: Vec<(&'static str, &'a Raw)>,
}

impl<'a> Fields<'a> {
    /// Reads `entries`, refusing a field outside `known` (listed in the message as
    /// `expected`) or one given twice. `path` prefixes the field names in messages.
    pub(super) fn read(
        entries: &'a [(Raw, Raw)],
        known: &[&'static str],
        path: &str,
        expected: &str,
    ) -> Result<Fields<'a>, String> {
        let mut fields: Vec<(&'static str, &'a Raw)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let text = key.key_text();
            let Some(name) = known.iter().copied().find(|name| *name == text) else {
                return Err(at(
                    &join(path, &text),
                    format!("unknown field: expected {expected}"),
                ));
            };
            if fields.iter().any(|(seen, _)| *seen == name) {
                return Err(at(&join(path, name), "given twice"));
            }
            fields.push((name, value));
        }
        Ok(Fields { entries: fields })
    }

    /// The value of `name`, if given.
    pub(super) fn get(&self, name: &str) -> Option<&'a Raw> {
        self.entries
            .iter()
            .find(|(field, _)| *field == name)
            .map(|(_, value)| *value)
    }
}

/// `parent.child`, or `child` at the top.
pub(super) fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

/// `path: message`, or `message` at the top.
pub(super) fn at(path: &str, message: impl fmt::Display) -> String {
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

/// Reads a [`Raw`] and checks it with `check` while the format is still inside the value, so
/// the format places its position on the value that was wrong (JSON's line and column,
/// TOML's span), not on whatever encloses it.
pub(super) struct Checked<F>(pub(super) F);

impl<'de, T, F: FnOnce(Raw) -> Result<T, String>> de::DeserializeSeed<'de> for Checked<F> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<F> Checked<F> {
    fn check<T, E: de::Error>(self, raw: Raw) -> Result<T, E>
    where
        F: FnOnce(Raw) -> Result<T, String>,
    {
        (self.0)(raw).map_err(E::custom)
    }
}

/// Every method reads as [`RawVisitor`] does, then checks.
impl<'de, T, F: FnOnce(Raw) -> Result<T, String>> Visitor<'de> for Checked<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        RawVisitor.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<T, E> {
        self.check(RawVisitor.visit_bool::<E>(value)?)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<T, E> {
        self.check(RawVisitor.visit_i64::<E>(value)?)
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<T, E> {
        self.check(RawVisitor.visit_i128::<E>(value)?)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<T, E> {
        self.check(RawVisitor.visit_u64::<E>(value)?)
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<T, E> {
        self.check(RawVisitor.visit_u128::<E>(value)?)
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<T, E> {
        self.check(RawVisitor.visit_f64::<E>(value)?)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
        self.check(RawVisitor.visit_str::<E>(value)?)
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<T, E> {
        self.check(RawVisitor.visit_string::<E>(value)?)
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<T, E> {
        self.check(RawVisitor.visit_bytes::<E>(value)?)
    }

    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        self.check(RawVisitor.visit_none::<E>()?)
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        self.check(RawVisitor.visit_unit::<E>()?)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        self.check(RawVisitor.visit_some(deserializer)?)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        self.check(RawVisitor.visit_newtype_struct(deserializer)?)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        self.check(RawVisitor.visit_seq(seq)?)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        self.check(RawVisitor.visit_map(map)?)
    }
}
