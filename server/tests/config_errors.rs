//! Bad configs: every problem is reported with the file, the descriptor path and the field;
//! `--validate` prints them and exits 1 (0 for a valid config).

use sluicegate_server::config::{from_texts, Limit, Unit};
use std::process::Command;
use std::time::Duration;

fn problems(yaml: &str) -> Vec<String> {
    from_texts(&[("bad.yaml".into(), yaml.into())])
        .expect_err("the config should be refused")
        .problems
}

fn one_problem(yaml: &str) -> String {
    let found = problems(yaml);
    assert_eq!(found.len(), 1, "{found:#?}");
    found.into_iter().next().unwrap()
}

#[test]
fn an_unknown_field_names_file_path_and_field() {
    let p = one_problem(
        "domain: d
descriptors:
  - key: a
    descriptors:
      - key: b
      - key: remote_address
        rate_limit: {unit: second, requests_per_unit: 1, colour: red}
",
    );
    assert!(p.starts_with("bad.yaml:"), "{p}");
    assert!(
        p.contains("descriptors[0] (key=a).descriptors[1] (key=remote_address).rate_limit.colour"),
        "{p}"
    );
    assert!(p.contains("unknown field"), "{p}");
}

#[test]
fn bad_values_are_named() {
    let cases = [
        (
            "unit: fortnight, requests_per_unit: 1",
            "rate_limit.unit",
            "fortnight",
        ),
        (
            "unit: second, requests_per_unit: -1",
            "rate_limit.requests_per_unit",
            "whole number",
        ),
        (
            "unit: second, requests_per_unit: 1.5",
            "rate_limit.requests_per_unit",
            "whole number",
        ),
        ("unit: second", "rate_limit.requests_per_unit", "missing"),
        ("requests_per_unit: 3", "rate_limit.unit", "missing"),
        (
            "unit: second, requests_per_unit: 1, algorithm: magic",
            "rate_limit.algorithm",
            "magic",
        ),
        (
            "unit: second, requests_per_unit: 5, burst: 0",
            "rate_limit.burst",
            "whole number",
        ),
        ("quota: \"lots\"", "rate_limit.quota", ""),
        (
            "quota: \"5/s\", unit: second",
            "rate_limit.unit",
            "either quota",
        ),
        (
            "unlimited: true, unit: second",
            "rate_limit.unit",
            "unlimited",
        ),
        (
            "unlimited: yes-please",
            "rate_limit.unlimited",
            "true or false",
        ),
        (
            "unit: second, requests_per_unit: 1, replaces: [{}]",
            "rate_limit.replaces[0].name",
            "non-empty",
        ),
    ];
    for (rate_limit, field, words) in cases {
        let yaml =
            format!("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {{{rate_limit}}}\n");
        let p = one_problem(&yaml);
        assert!(
            p.contains(&format!("descriptors[0] (key=k).{field}")),
            "{rate_limit}: {p}"
        );
        assert!(p.contains(words), "{rate_limit}: {p}");
    }
}

#[test]
fn duplicates_are_refused() {
    let p = one_problem(
        "domain: d
descriptors:
  - key: k
    value: v
    rate_limit: {unit: second, requests_per_unit: 1}
  - key: k
    value: v
    rate_limit: {unit: second, requests_per_unit: 2}
",
    );
    assert!(p.contains("descriptors[1] (key=k value=v)"), "{p}");
    assert!(p.contains("duplicate descriptor"), "{p}");

    let p = from_texts(&[
        ("one.yaml".into(), "domain: same\n".into()),
        ("two.yaml".into(), "domain: same\n".into()),
    ])
    .unwrap_err()
    .problems;
    assert_eq!(p.len(), 1);
    assert!(
        p[0].starts_with("two.yaml:") && p[0].contains("one.yaml"),
        "{p:?}"
    );
}

#[test]
fn structural_problems_are_named() {
    assert!(one_problem("descriptors: []\n").contains("domain: missing"));
    assert!(one_problem("domain: ''\n").contains("must not be empty"));
    assert!(one_problem("domain: d\nfoo: 1\n").contains("foo: unknown field"));
    assert!(
        one_problem("domain: d\ndescriptors: {key: k}\n").contains("descriptors: must be a list")
    );
    assert!(one_problem("domain: d\ndescriptors: [{value: v}]\n")
        .contains("descriptors[0].key: missing"));
    assert!(one_problem("- just\n- a list\n").contains("must be a mapping"));
    assert!(one_problem("domain: [unclosed\n").contains("not valid YAML"));
    assert!(
        one_problem("domain: d\ndescriptors: [{key: k, value: v, share_threshold: true}]\n")
            .contains("wildcard")
    );
}

#[test]
fn every_problem_is_reported_not_only_the_first() {
    let found = problems(
        "domain: d
descriptors:
  - key: a
    rate_limit: {unit: never, requests_per_unit: 1}
  - key: b
    shadow_mode: maybe
",
    );
    assert_eq!(found.len(), 2, "{found:#?}");
}

#[test]
fn units_quotas_and_extensions_load() {
    let c = from_texts(&[(
        "ok.yaml".into(),
        "domain: d
descriptors:
  - key: w
    rate_limit: {unit: week, requests_per_unit: 7}
  - key: m
    rate_limit: {unit: MONTH, requests_per_unit: 30}
  - key: y
    rate_limit: {unit: year, requests_per_unit: 365, algorithm: sliding-window}
  - key: q
    rate_limit: {quota: \"100/30s burst 20\", algorithm: token-bucket}
  - key: b
    rate_limit: {unit: second, requests_per_unit: 10, burst: 30, algorithm: gcra}
  - key: z
    rate_limit: {unit: second, requests_per_unit: 0}
"
        .into(),
    )])
    .unwrap();
    let quota = |i: usize| match &c.rules[i].limit {
        Limit::Quotas(q) => q[0],
        other => panic!("{other:?}"),
    };
    assert_eq!(quota(0).quota.period(), Duration::from_secs(7 * 86_400));
    assert_eq!(quota(1).quota.period(), Duration::from_secs(30 * 86_400));
    assert_eq!(quota(2).quota.period(), Duration::from_secs(365 * 86_400));
    assert_eq!(quota(3).quota.burst(), 20);
    assert_eq!(quota(3).shown, (200, Unit::Minute));
    assert_eq!(quota(4).quota.burst(), 30);
    assert_eq!(c.rules[5].limit, Limit::DenyAll { unit: Unit::Second });
}

fn validate(config: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sluicegate-server"))
        .arg("--validate")
        .arg("--config")
        .arg(config)
        .output()
        .expect("running sluicegate-server --validate")
}

#[test]
fn validate_exits_0_for_a_good_config_and_1_with_the_problems() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(
        &good,
        "domain: d\ndescriptors: [{key: k, rate_limit: {unit: second, requests_per_unit: 1}}]\n",
    )
    .unwrap();
    let out = validate(&good);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid"));

    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "domain: d\ndescriptors: [{key: k, rate_limit: {unit: second}}]\n",
    )
    .unwrap();
    let out = validate(&bad);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.yaml") && stderr.contains("requests_per_unit"),
        "{stderr}"
    );

    let out = validate(&dir.path().join("missing.yaml"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.yaml"));
}

#[test]
fn a_config_directory_without_yaml_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "nothing").unwrap();
    let out = validate(dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no *.yaml"));
}

#[test]
fn bad_flags_exit_non_zero_with_a_message() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sluicegate-server"))
            .args(args)
            .env_remove("SLUICEGATE_CONFIG")
            .output()
            .unwrap()
    };
    let out = run(&["--config", "x.yaml", "--grpc", "not-an-address"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--grpc"));
    let out = run(&["--config", "x.yaml", "--on-backend-error", "maybe"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("maybe"));
    let out = run(&[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--config"));
    // A log filter that does not parse is refused, not replaced by a default.
    let out = run(&["--config", "x.yaml", "--log", "foo=["]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a log filter"));
}

#[test]
fn flags_come_from_the_environment_too() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("env.yaml");
    std::fs::write(&good, "domain: d\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sluicegate-server"))
        .arg("--validate")
        .env("SLUICEGATE_CONFIG", &good)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn the_server_refuses_to_start_on_a_bad_config_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "domain: d\ndescriptors: [{key: k, rate_limit: {unit: eon, requests_per_unit: 1}}]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_sluicegate-server"))
        .arg("--config")
        .arg(&bad)
        .args(["--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.yaml") && stderr.contains("eon"),
        "{stderr}"
    );
}

#[test]
fn dot_files_in_a_config_directory_are_not_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), "domain: a\n").unwrap();
    std::fs::write(dir.path().join(".a.yaml"), "not: [valid\n").unwrap();
    let out = validate(dir.path());
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_port_in_use_is_a_clear_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, "domain: d\n").unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = Command::new(env!("CARGO_BIN_EXE_sluicegate-server"))
        .arg("--config")
        .arg(&good)
        .args([
            "--grpc",
            &format!("127.0.0.1:{port}"),
            "--http",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("127.0.0.1:{port} (--grpc)")),
        "{stderr}"
    );
}

#[test]
fn several_quotas_in_one_string_load_and_their_problems_are_named() {
    let c = from_texts(&[(
        "ok.yaml".into(),
        "domain: d
descriptors:
  - key: pair
    rate_limit: {quota: \"5/30s burst 2; 100/hour | 5/30s burst 2, 7/day\", algorithm: gcra}
"
        .into(),
    )])
    .unwrap();
    let Limit::Quotas(quotas) = &c.rules[0].limit else {
        panic!("{:?}", c.rules[0].limit);
    };
    // The same quota twice decides as once: it is kept once.
    let shown: Vec<_> = quotas.iter().map(|q| q.shown).collect();
    assert_eq!(
        shown,
        [(10, Unit::Minute), (100, Unit::Hour), (7, Unit::Day)]
    );
    assert_eq!(quotas[0].quota.burst(), 2);

    let in_pair = |rate_limit: &str| {
        one_problem(&format!(
            "domain: d\ndescriptors:\n  - key: a\n    descriptors:\n      - key: b\n        rate_limit: {{{rate_limit}}}\n"
        ))
    };
    // A bad quota in the list: file, descriptor path, field, and the column in the string.
    let p = in_pair("quota: \"5/minute; 10/fortnight\"");
    assert!(
        p.starts_with("bad.yaml:")
            && p.contains("descriptors[0] (key=a).descriptors[0] (key=b).rate_limit.quota")
            && p.contains("fortnight")
            && p.contains("column 14"),
        "{p}"
    );
    assert!(in_pair("quota: \"5/minute;\"").contains("rate_limit.quota"));
    // burst with several quotas: which one it meant is a guess.
    let p = in_pair("quota: \"5/minute; 100/hour\", burst: 3");
    assert!(
        p.contains("rate_limit.burst") && p.contains("several"),
        "{p}"
    );
    // unit or requests_per_unit beside a quota string, one quota or several.
    let p = in_pair("quota: \"5/minute; 100/hour\", requests_per_unit: 5");
    assert!(
        p.contains("rate_limit.requests_per_unit") && p.contains("either quota"),
        "{p}"
    );

    // --validate prints it and exits 1.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "domain: d\ndescriptors: [{key: k, rate_limit: {quota: \"1/s | 2/eon\"}}]\n",
    )
    .unwrap();
    let out = validate(&bad);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.yaml")
            && stderr.contains("rate_limit.quota")
            && stderr.contains("eon"),
        "{stderr}"
    );
}

/// An anchored quota (`"… anchored"`: each value's window starts at its first request) loads
/// with the fixed window, the default; an algorithm without windows is refused by name.
#[test]
fn anchored_quotas_load_with_the_fixed_window_only() {
    let c = from_texts(&[(
        "ok.yaml".into(),
        "domain: d
descriptors:
  - key: a
    rate_limit: {quota: \"5/minute anchored\"}
"
        .into(),
    )])
    .unwrap();
    match &c.rules[0].limit {
        Limit::Quotas(q) => assert!(q[0].quota.is_anchored()),
        other => panic!("{other:?}"),
    }
    let problem = one_problem(
        "domain: d
descriptors:
  - key: a
    rate_limit: {quota: \"5/minute anchored\", algorithm: gcra}
",
    );
    assert!(
        problem.contains("bad.yaml") && problem.contains("anchored"),
        "{problem}"
    );
    // Any quota an algorithm cannot run is found when the config is read, where it is.
    let problem = one_problem(
        "domain: d
descriptors:
  - key: a
    rate_limit: {unit: second, requests_per_unit: 1000000, algorithm: sliding-window}
",
    );
    assert!(
        problem.contains("requests_per_unit") && problem.contains("SlidingWindow"),
        "{problem}"
    );
}
