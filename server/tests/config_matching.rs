//! The matcher against envoyproxy/ratelimit's README examples: nested descriptors, key+value
//! before key, unlimited, replaces (through the service in `grpc_rules.rs`), wildcards, a
//! request deeper than the config.

use sluicegate_server::config::{from_texts, Config, Limit};

fn load(yaml: &str) -> Config {
    from_texts(&[("test.yaml".into(), yaml.into())]).expect("a valid config")
}

/// The key of the rule that `entries` land on in `domain`.
fn lands(config: &Config, domain: &str, entries: &[(&str, &str)]) -> Option<String> {
    config
        .find(domain, entries.iter().copied())
        .map(|m| config.rules[m.rule].key.clone())
}

fn requests(config: &Config, domain: &str, entries: &[(&str, &str)]) -> Option<u32> {
    let m = config.find(domain, entries.iter().copied())?;
    match &config.rules[m.rule].limit {
        Limit::Quotas(q) => Some(q[0].shown.0),
        Limit::DenyAll { .. } => Some(0),
        Limit::Unlimited => Some(u32::MAX),
    }
}

#[test]
fn example_1_values_under_one_key_are_separate_rules() {
    let c = load(
        "domain: mongo_cps
descriptors:
  - key: database
    value: users
    rate_limit: {unit: second, requests_per_unit: 500}
  - key: database
    value: default
    rate_limit: {unit: second, requests_per_unit: 500}
",
    );
    assert_eq!(
        lands(&c, "mongo_cps", &[("database", "users")]).as_deref(),
        Some("database_users")
    );
    assert_eq!(
        lands(&c, "mongo_cps", &[("database", "default")]).as_deref(),
        Some("database_default")
    );
    assert_eq!(lands(&c, "mongo_cps", &[("database", "other")]), None);
    assert_eq!(lands(&c, "other_domain", &[("database", "users")]), None);
}

#[test]
fn example_2_nested_descriptors_and_a_bare_key() {
    let c = load(
        "domain: messaging
descriptors:
  - key: message_type
    value: marketing
    descriptors:
      - key: to_number
        rate_limit: {unit: day, requests_per_unit: 5}
  - key: to_number
    rate_limit: {unit: day, requests_per_unit: 100}
",
    );
    let marketing = [("message_type", "marketing"), ("to_number", "2061111111")];
    assert_eq!(requests(&c, "messaging", &marketing), Some(5));
    assert_eq!(
        lands(&c, "messaging", &marketing).as_deref(),
        Some("message_type_marketing.to_number")
    );
    assert_eq!(
        requests(&c, "messaging", &[("to_number", "2061111111")]),
        Some(100)
    );
    // The placeholder level alone has no limit.
    assert_eq!(
        lands(&c, "messaging", &[("message_type", "marketing")]),
        None
    );
    // Another message type has no nested rule.
    assert_eq!(
        lands(
            &c,
            "messaging",
            &[("message_type", "other"), ("to_number", "1")]
        ),
        None
    );
}

#[test]
fn example_3_key_and_value_win_over_the_bare_key_whatever_the_order() {
    let c = load(
        "domain: edge_proxy_per_ip
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 10}
  - key: remote_address
    value: 50.0.0.5
    rate_limit: {unit: second, requests_per_unit: 0}
",
    );
    assert_eq!(
        requests(&c, "edge_proxy_per_ip", &[("remote_address", "50.0.0.1")]),
        Some(10)
    );
    assert_eq!(
        requests(&c, "edge_proxy_per_ip", &[("remote_address", "50.0.0.5")]),
        Some(0)
    );
}

#[test]
fn example_4_a_request_deeper_than_the_config_matches_nothing() {
    let flat = load(
        "domain: example4
descriptors:
  - key: key
    value: value
    rate_limit: {requests_per_unit: 300, unit: second}
",
    );
    let deep = [("key", "value"), ("subkey", "subvalue")];
    assert_eq!(lands(&flat, "example4", &deep), None);
    assert_eq!(requests(&flat, "example4", &[("key", "value")]), Some(300));

    let nested = load(
        "domain: example4
descriptors:
  - key: key
    value: value
    descriptors:
      - key: subkey
        rate_limit: {requests_per_unit: 300, unit: second}
",
    );
    assert_eq!(requests(&nested, "example4", &deep), Some(300));
    // And shallower than the limit: nothing either.
    assert_eq!(lands(&nested, "example4", &[("key", "value")]), None);
}

#[test]
fn example_5_unlimited_is_its_own_limit() {
    let c = load(
        "domain: internal
descriptors:
  - key: ldap
    rate_limit: {unlimited: true}
  - key: azure
    rate_limit: {unit: minute, requests_per_unit: 100}
",
    );
    assert_eq!(requests(&c, "internal", &[("ldap", "x")]), Some(u32::MAX));
    assert_eq!(requests(&c, "internal", &[("azure", "x")]), Some(100));
}

#[test]
fn example_6_shadow_mode_is_per_rule() {
    let c = load(
        "domain: example6
descriptors:
  - key: service
    descriptors:
      - key: user
        value: user-a
        rate_limit: {requests_per_unit: 10, unit: second}
        shadow_mode: true
      - key: user
        value: user-b
        rate_limit: {requests_per_unit: 20, unit: second}
",
    );
    let a = c
        .find("example6", [("service", "auth"), ("user", "user-a")])
        .unwrap();
    let b = c
        .find("example6", [("service", "auth"), ("user", "user-b")])
        .unwrap();
    assert!(c.rules[a.rule].shadow_mode);
    assert!(!c.rules[b.rule].shadow_mode);
}

#[test]
fn example_7_replaces_names_the_replaced_rule() {
    let c = load(
        "domain: example7
descriptors:
  - key: key_1
    value: value_1
    descriptors:
      - key: user
        value: bkthomps
        rate_limit:
          name: specific_limit
          requests_per_unit: 5
          unit: second
  - key: key_2
    value: value_2
    descriptors:
      - key: user
        value: bkthomps
        rate_limit:
          replaces:
            - name: specific_limit
          requests_per_unit: 10
          unit: second
",
    );
    let first = c
        .find("example7", [("key_1", "value_1"), ("user", "bkthomps")])
        .unwrap();
    let second = c
        .find("example7", [("key_2", "value_2"), ("user", "bkthomps")])
        .unwrap();
    assert_eq!(c.rules[first.rule].name.as_deref(), Some("specific_limit"));
    assert_eq!(
        c.rules[second.rule].replaces,
        vec!["specific_limit".to_string()]
    );
}

#[test]
fn example_8_detailed_metric_is_kept() {
    let c = load(
        "domain: example8
descriptors:
  - key: key1
    detailed_metric: true
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: key1
    value: value1
    rate_limit: {unit: minute, requests_per_unit: 20}
",
    );
    assert_eq!(
        requests(&c, "example8", &[("key1", "unspecified")]),
        Some(10)
    );
    assert_eq!(requests(&c, "example8", &[("key1", "value1")]), Some(20));
    let m = c.find("example8", [("key1", "x")]).unwrap();
    assert!(c.rules[m.rule].detailed_metric);
}

#[test]
fn example_9_wildcards_match_after_exact_values_and_before_bare_keys() {
    let c = load(
        "domain: example9
descriptors:
  - key: key1
    value: value*
    rate_limit: {unit: minute, requests_per_unit: 20}
  - key: key1
    rate_limit: {unit: minute, requests_per_unit: 7}
  - key: key1
    value: value_exact
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: path
    value: /api/*/users
    rate_limit: {unit: minute, requests_per_unit: 4}
",
    );
    assert_eq!(requests(&c, "example9", &[("key1", "value_1")]), Some(20));
    assert_eq!(requests(&c, "example9", &[("key1", "value")]), Some(20));
    assert_eq!(
        requests(&c, "example9", &[("key1", "value_exact")]),
        Some(3)
    );
    assert_eq!(requests(&c, "example9", &[("key1", "other")]), Some(7));
    assert_eq!(
        requests(&c, "example9", &[("path", "/api/v2/users")]),
        Some(4)
    );
    assert_eq!(
        requests(&c, "example9", &[("path", "/api/v2/groups")]),
        None
    );
    let m = c.find("example9", [("key1", "value_9")]).unwrap();
    assert_eq!(m.wildcard_levels, 1);
}

#[test]
fn a_directory_holds_several_domains() {
    let c = from_texts(&[
        ("a.yaml".into(), "domain: a\ndescriptors: [{key: k, rate_limit: {unit: second, requests_per_unit: 1}}]\n".into()),
        ("b.yaml".into(), "domain: b\ndescriptors: [{key: k, rate_limit: {unit: hour, requests_per_unit: 2}}]\n".into()),
    ])
    .unwrap();
    assert_eq!(requests(&c, "a", &[("k", "v")]), Some(1));
    assert_eq!(requests(&c, "b", &[("k", "v")]), Some(2));
}
