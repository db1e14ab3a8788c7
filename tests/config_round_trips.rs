//! Quotas, algorithms, keys and policies survive a round trip through TOML, YAML and JSON,
//! and read the same whichever form they were written in.
#![cfg(feature = "serde")]

use proptest::prelude::*;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use sluicegate::policy::{AlgorithmKind, KeySpec, Policy};
use sluicegate::Quota;
use std::fmt::Debug;
use std::time::Duration;

/// TOML documents are tables, so every value travels in one field.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Doc<T> {
    value: T,
}

fn toml_trip<T: Serialize + DeserializeOwned>(value: T) -> T {
    let text = toml::to_string(&Doc { value }).unwrap();
    toml::from_str::<Doc<T>>(&text).unwrap().value
}

fn yaml_trip<T: Serialize + DeserializeOwned>(value: &T) -> T {
    serde_norway::from_str(&serde_norway::to_string(value).unwrap()).unwrap()
}

fn json_trip<T: Serialize + DeserializeOwned>(value: &T) -> T {
    serde_json::from_str(&serde_json::to_string(value).unwrap()).unwrap()
}

fn round_trips<T: Serialize + DeserializeOwned + PartialEq + Debug + Clone>(value: T) {
    assert_eq!(json_trip(&value), value, "JSON");
    assert_eq!(yaml_trip(&value), value, "YAML");
    assert_eq!(toml_trip(value.clone()), value, "TOML");
}

/// Any quota: limits and bursts over the whole `u32` range, periods from 1 ns to the
/// longest, biased toward whole units.
fn quota() -> impl Strategy<Value = Quota> {
    let unit = prop_oneof![
        Just(1u64),
        Just(1_000),
        Just(1_000_000),
        Just(1_000_000_000),
        Just(60_000_000_000),
        Just(3_600_000_000_000),
        Just(86_400_000_000_000),
    ];
    let period = prop_oneof![
        (1u64..=1000, unit).prop_map(|(count, unit)| count * unit),
        1u64..=(1 << 58),
    ];
    (1u32..=u32::MAX, period, prop::option::of(1u32..=u32::MAX)).prop_map(
        |(limit, period, burst)| {
            let quota = Quota::new(limit, Duration::from_nanos(period)).unwrap();
            burst.map_or(quota, |burst| quota.with_burst(burst))
        },
    )
}

fn key() -> impl Strategy<Value = KeySpec> {
    prop_oneof![
        Just(KeySpec::Global),
        Just(KeySpec::PeerIp),
        "[a-z0-9-]{1,20}".prop_map(KeySpec::Header),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    (
        "[a-zA-Z0-9_:-][a-zA-Z0-9 _:-]{0,19}",
        quota(),
        prop::sample::select(AlgorithmKind::ALL.to_vec()),
        key(),
    )
        .prop_map(|(name, quota, algorithm, key)| Policy {
            name,
            quota,
            algorithm,
            key,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn quotas_round_trip(quota in quota()) {
        round_trips(quota);
    }

    #[test]
    fn policies_round_trip(policy in policy()) {
        round_trips(policy);
    }
}

#[test]
fn algorithms_and_keys_round_trip_by_name() {
    for kind in AlgorithmKind::ALL {
        round_trips(kind);
        assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
    }
    round_trips(KeySpec::Header("x-api-key".into()));
    assert_eq!(
        serde_json::to_string(&KeySpec::PeerIp).unwrap(),
        "\"peer-ip\""
    );
}

#[test]
fn a_quota_is_written_as_its_string() {
    let quota: Quota = "100/minute burst 20".parse().unwrap();
    assert_eq!(
        serde_json::to_string(&quota).unwrap(),
        "\"100/minute burst 20\""
    );
    assert_eq!(
        toml::to_string(&Doc { value: quota }).unwrap(),
        "value = \"100/minute burst 20\"\n"
    );
    assert_eq!(
        serde_norway::to_string(&quota).unwrap(),
        "100/minute burst 20\n"
    );
}

#[test]
fn the_map_form_reads_as_the_string_form() {
    let expected: Quota = "100/minute burst 20".parse().unwrap();
    for period in ["\"1m\"", "\"60s\"", "\"1 minute\"", "\"minute\"", "60"] {
        let json = format!(r#"{{ "limit": 100, "period": {period}, "burst": 20 }}"#);
        assert_eq!(
            serde_json::from_str::<Quota>(&json).unwrap(),
            expected,
            "{json}"
        );
        let toml = format!("[value]\nlimit = 100\nperiod = {period}\nburst = 20\n");
        assert_eq!(
            toml::from_str::<Doc<Quota>>(&toml).unwrap().value,
            expected,
            "{toml}"
        );
        let yaml = format!("limit: 100\nperiod: {period}\nburst: 20\n");
        assert_eq!(
            serde_norway::from_str::<Quota>(&yaml).unwrap(),
            expected,
            "{yaml}"
        );
    }
    // Without a burst, the burst is the limit.
    let quota: Quota = serde_json::from_str(r#"{ "limit": 5, "period": "30s" }"#).unwrap();
    assert_eq!(quota, Quota::new(5, Duration::from_secs(30)).unwrap());
    assert_eq!(quota.burst(), 5);
}

#[test]
fn a_policy_reads_from_each_format_with_defaults() {
    let toml = r#"
        [[limits]]
        name = "ip"
        key = "peer-ip"
        quota = "5/second"

        [[limits]]
        name = "token"
        key = "header:X-Api-Key"
        algorithm = "sliding-window"
        quota = { limit = 100, period = "1m", burst = 20 }
    "#;
    let yaml = "
limits:
  - name: ip
    key: peer-ip
    quota: 5/second
  - name: token
    key: header:X-Api-Key
    algorithm: sliding-window
    quota:
      limit: 100
      period: 1m
      burst: 20
";
    let json = r#"{ "limits": [
        { "name": "ip", "key": "peer-ip", "quota": "5/second" },
        { "name": "token", "key": "header:X-Api-Key", "algorithm": "sliding-window",
          "quota": { "limit": 100, "period": "1m", "burst": 20 } }
    ] }"#;
    #[derive(Debug, PartialEq, Deserialize)]
    struct Config {
        limits: Vec<Policy>,
    }
    let expected = Config {
        limits: vec![
            "name=ip; key=peer-ip; quota=5/second".parse().unwrap(),
            "name=token; key=header:x-api-key; quota=100/minute burst 20; algorithm=sliding-window"
                .parse()
                .unwrap(),
        ],
    };
    assert_eq!(expected.limits[0].algorithm, AlgorithmKind::Gcra);
    assert_eq!(toml::from_str::<Config>(toml).unwrap(), expected);
    assert_eq!(serde_norway::from_str::<Config>(yaml).unwrap(), expected);
    assert_eq!(serde_json::from_str::<Config>(json).unwrap(), expected);
}

#[test]
fn a_policy_also_reads_from_the_command_line_form() {
    let policy: Policy =
        serde_json::from_str(r#""name=api; quota=10/s; algorithm=token-bucket""#).unwrap();
    assert_eq!(policy.name, "api");
    assert_eq!(policy.quota, Quota::per_second(10));
    assert_eq!(policy.algorithm, AlgorithmKind::TokenBucket);
    assert_eq!(policy.key, KeySpec::Global);
}

#[test]
fn a_policy_is_written_as_a_map_of_strings() {
    let policy: Policy = "name=api; key=header:x-api-key; quota=100/minute burst 20"
        .parse()
        .unwrap();
    assert_eq!(
        serde_json::to_string(&policy).unwrap(),
        r#"{"name":"api","quota":"100/minute burst 20","algorithm":"gcra","key":"header:x-api-key"}"#
    );
}
