//! The protobuf JSON mapping of `RateLimitRequest` and `RateLimitResponse`, for `POST /json`.
//!
//! Requests accept the JSON names (`hitsAddend`) and the proto names (`hits_addend`);
//! 64-bit and 32-bit integers as numbers or strings, in any form the mapping accepts (`2`,
//! `2.0`, `2e0`, `"2"`, `"2e0"`: an integral value); enums by name or number. A key given
//! twice in one object is refused, as the mapping's parsers refuse it (serde would keep the
//! last). Responses use the JSON names, enums by name, durations as `"1.500s"`.

use crate::proto::envoy::extensions::common::ratelimit::v3::rate_limit_descriptor::{
    Entry, RateLimitOverride,
};
use crate::proto::rate_limit_response::rate_limit::Unit as ProtoUnit;
use crate::proto::rate_limit_response::Code;
use crate::proto::{RateLimitDescriptor, RateLimitRequest, RateLimitResponse, RateLimitUnit};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonRequest {
    #[serde(default)]
    domain: String,
    #[serde(default)]
    descriptors: Vec<JsonDescriptor>,
    #[serde(default, alias = "hits_addend", deserialize_with = "uint32")]
    #[serde(rename = "hitsAddend")]
    hits_addend: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonDescriptor {
    #[serde(default)]
    entries: Vec<JsonEntry>,
    #[serde(default)]
    limit: Option<JsonOverride>,
    #[serde(default, alias = "hits_addend", deserialize_with = "optional_uint64")]
    #[serde(rename = "hitsAddend")]
    hits_addend: Option<u64>,
    #[serde(default, alias = "is_negative_hits", rename = "isNegativeHits")]
    is_negative_hits: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonEntry {
    #[serde(default)]
    key: String,
    #[serde(default)]
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonOverride {
    #[serde(default, alias = "requests_per_unit", deserialize_with = "uint32")]
    #[serde(rename = "requestsPerUnit")]
    requests_per_unit: u32,
    #[serde(default, deserialize_with = "unit")]
    unit: i32,
}

/// A number, or a string holding one (the JSON mapping allows both for integers).
#[derive(Deserialize)]
#[serde(untagged)]
enum Number {
    Int(u64),
    Float(f64),
    Text(String),
}

impl Number {
    fn value<E: serde::de::Error>(self) -> Result<u64, E> {
        match self {
            Number::Int(n) => Ok(n),
            Number::Float(x) => integral(x)
                .ok_or_else(|| E::custom(format!("{x} is not a whole number of 0 or more"))),
            Number::Text(text) => {
                let trimmed = text.trim();
                trimmed
                    .parse()
                    .ok()
                    .or_else(|| trimmed.parse::<f64>().ok().and_then(integral))
                    .ok_or_else(|| {
                        E::custom(format!("{text:?} is not a whole number of 0 or more"))
                    })
            }
        }
    }
}

/// `x` as an unsigned integer, if it is one (`2.0`, `1e3`); `None` for fractions, negative
/// numbers, infinities, NaN and values past `u64::MAX`.
fn integral(x: f64) -> Option<u64> {
    // 2^64 is the first f64 past u64::MAX.
    const PAST_U64: f64 = 18_446_744_073_709_551_616.0;
    (x.is_finite() && x.fract() == 0.0 && (0.0..PAST_U64).contains(&x)).then_some(x as u64)
}

/// A JSON value that refuses an object with a key given twice (at any depth).
struct Unique(Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unique, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Unique, E> {
        Ok(Unique(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Unique, E> {
        Ok(Unique(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Unique, E> {
        Ok(Unique(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Unique, E> {
        Ok(Unique(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Unique, E> {
        Ok(Unique(Value::from(v)))
    }
    fn visit_string<E>(self, v: String) -> Result<Unique, E> {
        Ok(Unique(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique(Value::Null))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Unique(Value::Array(items)))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(A::Error::custom(format!("the key {key:?} is given twice")));
            }
            let Unique(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Unique(Value::Object(object)))
    }
}

fn uint32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = Option::<Number>::deserialize(d)?.map_or(Ok(0), Number::value)?;
    u32::try_from(n).map_err(|_| D::Error::custom(format!("{n} does not fit in 32 bits")))
}

fn optional_uint64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<Number>::deserialize(d)?
        .map(Number::value)
        .transpose()
}

fn unit<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NameOrNumber {
        Number(i32),
        Name(String),
    }
    match Option::<NameOrNumber>::deserialize(d)? {
        None => Ok(0),
        Some(NameOrNumber::Number(n)) => Ok(n),
        Some(NameOrNumber::Name(name)) => RateLimitUnit::from_str_name(&name)
            .map(|u| u as i32)
            .ok_or_else(|| D::Error::custom(format!("{name:?} is not a rate limit unit"))),
    }
}

/// Parses a `/json` body; the error is a sentence for a 400.
pub fn parse_request(body: &[u8]) -> Result<RateLimitRequest, String> {
    let not_a_request =
        |e: &dyn std::fmt::Display| format!("the body is not a RateLimitRequest in JSON: {e}");
    // Parsed as a value first: serde would also take a struct from a JSON array.
    let Unique(value) = serde_json::from_slice(body).map_err(|e| not_a_request(&e))?;
    if !value.is_object() {
        return Err(not_a_request(&"expected a JSON object"));
    }
    let request: JsonRequest = serde_json::from_value(value).map_err(|e| not_a_request(&e))?;
    Ok(RateLimitRequest {
        domain: request.domain,
        hits_addend: request.hits_addend,
        descriptors: request
            .descriptors
            .into_iter()
            .map(|d| RateLimitDescriptor {
                entries: d
                    .entries
                    .into_iter()
                    .map(|e| Entry {
                        key: e.key,
                        value: e.value,
                    })
                    .collect(),
                limit: d.limit.map(|l| RateLimitOverride {
                    requests_per_unit: l.requests_per_unit,
                    unit: l.unit,
                }),
                hits_addend: d.hits_addend,
                is_negative_hits: d.is_negative_hits,
            })
            .collect(),
    })
}

/// The JSON mapping of `response`.
pub fn response(response: &RateLimitResponse) -> Value {
    let code = |c: i32| Code::try_from(c).unwrap_or(Code::Unknown).as_str_name();
    let statuses: Vec<Value> = response
        .statuses
        .iter()
        .map(|s| {
            let mut status = Map::new();
            status.insert("code".into(), json!(code(s.code)));
            if let Some(limit) = &s.current_limit {
                let unit = ProtoUnit::try_from(limit.unit)
                    .unwrap_or(ProtoUnit::Unknown)
                    .as_str_name();
                status.insert(
                    "currentLimit".into(),
                    json!({
                        "name": limit.name,
                        "requestsPerUnit": limit.requests_per_unit,
                        "unit": unit,
                    }),
                );
            }
            status.insert("limitRemaining".into(), json!(s.limit_remaining));
            if let Some(d) = &s.duration_until_reset {
                status.insert("durationUntilReset".into(), json!(duration(d)));
            }
            Value::Object(status)
        })
        .collect();
    let mut out = Map::new();
    out.insert("overallCode".into(), json!(code(response.overall_code)));
    out.insert("statuses".into(), Value::Array(statuses));
    if !response.response_headers_to_add.is_empty() {
        let headers: Vec<Value> = response
            .response_headers_to_add
            .iter()
            .map(|h| json!({"key": h.key, "value": h.value}))
            .collect();
        out.insert("responseHeadersToAdd".into(), Value::Array(headers));
    }
    Value::Object(out)
}

/// A protobuf duration as JSON writes it: seconds with 0, 3, 6 or 9 fractional digits.
fn duration(d: &prost_types::Duration) -> String {
    let nanos = d.nanos.unsigned_abs();
    if nanos == 0 {
        format!("{}s", d.seconds)
    } else if nanos.is_multiple_of(1_000_000) {
        format!("{}.{:03}s", d.seconds, nanos / 1_000_000)
    } else if nanos.is_multiple_of(1_000) {
        format!("{}.{:06}s", d.seconds, nanos / 1_000)
    } else {
        format!("{}.{:09}s", d.seconds, nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_field_spellings_and_string_numbers_parse() {
        let request = parse_request(
            br#"{"domain":"d","hits_addend":"3","descriptors":[{"entries":[{"key":"k","value":"v"}],
                "hitsAddend":"0","limit":{"requestsPerUnit":5,"unit":"MINUTE"}}]}"#,
        )
        .unwrap();
        assert_eq!(request.hits_addend, 3);
        let d = &request.descriptors[0];
        assert_eq!(d.hits_addend, Some(0));
        assert_eq!(d.limit.map(|l| (l.requests_per_unit, l.unit)), Some((5, 2)));
    }

    #[test]
    fn unknown_fields_and_bad_numbers_are_refused_with_a_reason() {
        let e = parse_request(br#"{"domain":"d","bogus":1}"#).unwrap_err();
        assert!(e.contains("bogus"), "{e}");
        let e = parse_request(br#"{"domain":"d","hitsAddend":-1}"#).unwrap_err();
        assert!(e.contains("RateLimitRequest"), "{e}");
    }

    #[test]
    fn integral_numbers_in_every_form_the_mapping_accepts() {
        for form in ["2", "2.0", "2e0", "0.2e1", "\"2\"", "\"2.0\"", "\"2e0\""] {
            let body = format!(r#"{{"domain":"d","hitsAddend":{form}}}"#);
            assert_eq!(
                parse_request(body.as_bytes()).unwrap().hits_addend,
                2,
                "{form}"
            );
        }
        for form in ["2.5", "-1", "-1.0", "1e20", "\"1.5\"", "\"x\"", "\"NaN\""] {
            let body = format!(r#"{{"domain":"d","hitsAddend":{form}}}"#);
            assert!(parse_request(body.as_bytes()).is_err(), "{form}");
        }
    }

    #[test]
    fn a_key_given_twice_is_refused_at_any_depth() {
        let e = parse_request(br#"{"domain":"a","domain":"b"}"#).unwrap_err();
        assert!(e.contains("\"domain\" is given twice"), "{e}");
        let e =
            parse_request(br#"{"domain":"d","descriptors":[{"entries":[{"key":"k","key":"j"}]}]}"#)
                .unwrap_err();
        assert!(e.contains("given twice"), "{e}");
    }

    #[test]
    fn durations_have_0_3_6_or_9_fraction_digits() {
        let d = |seconds, nanos| duration(&prost_types::Duration { seconds, nanos });
        assert_eq!(d(1, 0), "1s");
        assert_eq!(d(1, 500_000_000), "1.500s");
        assert_eq!(d(0, 1_000), "0.000001s");
        assert_eq!(d(0, 1), "0.000000001s");
    }
}
