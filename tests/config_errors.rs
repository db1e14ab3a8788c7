//! Bad configuration is an error naming the field and what was wrong, in TOML, YAML and
//! JSON alike: each format adds where in the file, around the same message.
#![cfg(feature = "serde")]

use serde::Deserialize;
use sluicegate::policy::Policy;

#[derive(Debug, Deserialize)]
#[allow(dead_code)] // only ever read to get its error
struct Config {
    limit: Policy,
}

/// The error each format gives for the policy written as the fields of JSON object
/// `fields` (also written as TOML and YAML); every one must contain `expected`.
fn errors(fields: &str) -> [String; 3] {
    let value: serde_json::Value = serde_json::from_str(fields).expect("the test's JSON");
    let doc = serde_json::json!({ "limit": value });
    let json = serde_json::from_str::<Config>(&doc.to_string())
        .unwrap_err()
        .to_string();
    let toml_text = toml::to_string(&doc).expect("representable in TOML");
    let toml = toml::from_str::<Config>(&toml_text)
        .unwrap_err()
        .to_string();
    let yaml_text = serde_norway::to_string(&doc).unwrap();
    let yaml = serde_norway::from_str::<Config>(&yaml_text)
        .unwrap_err()
        .to_string();
    [json, toml, yaml]
}

#[track_caller]
fn assert_error(fields: &str, expected: &str) {
    for (format, message) in ["JSON", "TOML", "YAML"].iter().zip(errors(fields)) {
        assert!(
            message.contains(expected),
            "{format}: {message:?} does not say {expected:?}"
        );
    }
}

#[test]
fn a_bad_quota_string_says_where_in_the_string() {
    assert_error(
        r#"{ "name": "api", "quota": "100/" }"#,
        "quota: invalid quota \"100/\": expected a period unit after '/' at column 5",
    );
    assert_error(
        r#"{ "name": "api", "quota": "100/fortnight" }"#,
        "quota: invalid quota \"100/fortnight\": unknown period unit 'fortnight'",
    );
}

#[test]
fn zero_quotas_are_refused_naming_the_number() {
    assert_error(
        r#"{ "name": "api", "quota": "0/second" }"#,
        "quota: invalid quota \"0/second\": a quota's limit must be at least 1 request",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": 0, "period": "1s" } }"#,
        "quota.limit: a quota's limit must be at least 1 request",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": 5, "period": 0 } }"#,
        "quota.period: a quota's period must be longer than zero",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": 5, "period": "1s", "burst": 0 } }"#,
        "quota.burst: a quota's burst must be at least 1 request",
    );
    assert_error(
        r#"{ "name": "api", "quota": "5/s burst 0" }"#,
        "quota: invalid quota \"5/s burst 0\": a quota's burst must be at least 1 request",
    );
}

#[test]
fn bad_quota_fields_are_named() {
    assert_error(
        r#"{ "name": "api", "quota": { "limit": 5000000000, "period": "1s" } }"#,
        "quota.limit: 5000000000 is too large (the maximum is 4294967295)",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": -3, "period": "1s" } }"#,
        "quota.limit: expected a whole number of requests, found the negative number -3",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": "ten", "period": "1s" } }"#,
        "quota.limit: expected a whole number of requests, found the string \"ten\"",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "period": "1s" } }"#,
        "quota.limit: missing: expected a whole number of requests",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": 5, "period": "1 fortnight" } }"#,
        "quota.period: invalid period \"1 fortnight\": unknown period unit 'fortnight'",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": 5, "period": "1m burst 3" } }"#,
        "quota.period: invalid period \"1m burst 3\": expected a count and a unit",
    );
    assert_error(
        r#"{ "name": "api", "quota": { "limit": 5, "period": "1s", "per": "minute" } }"#,
        "quota.per: unknown field: expected limit, period, burst or anchored",
    );
    assert_error(
        r#"{ "name": "api", "quota": true }"#,
        "quota: expected a quota string such as \"100/minute burst 20\", or a map with limit, \
         period and burst, found true",
    );
}

#[test]
fn unknown_algorithms_list_the_known_ones() {
    assert_error(
        r#"{ "name": "api", "quota": "5/s", "algorithm": "gcr" }"#,
        "algorithm: unknown algorithm \"gcr\": expected gcra, token-bucket, leaky-bucket, \
         fixed-window, sliding-window or sliding-log",
    );
    assert_error(
        r#"{ "name": "api", "quota": "5/s", "algorithm": 3 }"#,
        "algorithm: expected gcra, token-bucket, leaky-bucket, fixed-window, sliding-window \
         or sliding-log, found the number 3",
    );
}

#[test]
fn unknown_keys_and_bad_header_names_are_refused() {
    assert_error(
        r#"{ "name": "api", "quota": "5/s", "key": "cookie" }"#,
        "key: unknown key \"cookie\": expected global, peer-ip or header:NAME",
    );
    assert_error(
        r#"{ "name": "api", "quota": "5/s", "key": "header:x api" }"#,
        "key: \"x api\" is not an HTTP header name",
    );
}

#[test]
fn unknown_missing_and_empty_policy_fields_are_named() {
    assert_error(
        r#"{ "name": "api", "quota": "5/s", "limit": "5/s" }"#,
        "limit: unknown field: expected name, quota, algorithm or key",
    );
    assert_error(
        r#"{ "quota": "5/s" }"#,
        "name: missing: every policy needs a name",
    );
    assert_error(
        r#"{ "name": "api" }"#,
        "quota: missing: every policy needs a quota",
    );
    assert_error(
        r#"{ "name": "", "quota": "5/s" }"#,
        "name: must not be empty",
    );
    assert_error(
        r#"{ "name": 7, "quota": "5/s" }"#,
        "name: expected a string, found the number 7",
    );
}

#[test]
fn each_format_points_at_the_bad_value() {
    let json = r#"{ "limit": { "name": "api", "quota": "5/s", "algorithm": "gcr" } }"#;
    let json = serde_json::from_str::<Config>(json)
        .unwrap_err()
        .to_string();
    assert!(
        json.ends_with("or sliding-log at line 1 column 62"),
        "{json}"
    );
    let toml = "[limit]\nname = \"api\"\nquota = \"5/s\"\nalgorithm = \"gcr\"\n";
    let toml = toml::from_str::<Config>(toml).unwrap_err().to_string();
    assert!(
        toml.starts_with("TOML parse error at line 4, column 13"),
        "{toml}"
    );
    assert!(
        toml.contains("algorithm = \"gcr\"\n  |             ^^^^^"),
        "{toml}"
    );
    let yaml = "limit:\n  name: api\n  quota: 5/s\n  algorithm: gcr\n";
    let yaml = serde_norway::from_str::<Config>(yaml)
        .unwrap_err()
        .to_string();
    // YAML prefixes its own path of the value, before ours.
    assert!(
        yaml.starts_with("limit.algorithm: algorithm: unknown algorithm \"gcr\""),
        "{yaml}"
    );
    assert!(yaml.ends_with("at line 4 column 14"), "{yaml}");
}

#[test]
fn json_duplicate_fields_are_refused() {
    let error =
        serde_json::from_str::<Policy>(r#"{ "name": "a", "quota": "5/s", "quota": "6/s" }"#)
            .unwrap_err();
    assert_eq!(error.to_string(), "quota: given twice at line 1 column 47");
}

#[test]
fn a_standalone_quota_names_its_own_fields() {
    let error =
        serde_json::from_str::<sluicegate::Quota>(r#"{ "limit": 0, "period": 1 }"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "limit: a quota's limit must be at least 1 request at line 1 column 27"
    );
    let error = serde_norway::from_str::<sluicegate::policy::AlgorithmKind>("fast").unwrap_err();
    assert!(error
        .to_string()
        .starts_with("unknown algorithm \"fast\": expected gcra,"));
}
