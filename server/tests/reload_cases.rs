//! Reloads as deployments make them: a Kubernetes ConfigMap's `..data` symlink swap (applied
//! at the next poll), and the invalid ones (a bad config on `SIGHUP`, a YAML syntax error, one
//! bad file of a directory, a domain in two files), each refused with the reason logged and
//! counted while the old config keeps serving with its state.
//!
//! Every server here runs with a debounce of an hour, so only a file replaced whole (a rename,
//! a symlink swap) or `SIGHUP` can apply anything within a test: a change that applied after
//! the debounce instead could not pass.

#[path = "support/service.rs"]
mod service;

use service::*;
use std::path::Path;
use std::time::Duration;

const DEBOUNCE_FOR_EVER: [&str; 2] = ["--reload-debounce-ms", "3600000"];

/// How long a test waits for a reload (the next poll, every 500 ms, or `SIGHUP`): a real timer
/// in another process, given the slack a loaded two-core machine needs.
const RELOADED_WITHIN: Duration = Duration::from_secs(10);

const OK_LOADS: &str = "ratelimit_service_config_load_total{result=\"ok\"}";
const FAILED_LOADS: &str = "ratelimit_service_config_load_total{result=\"failed\"}";

/// Domain `domain`: key `k` limited to `limit` an hour by a fixed window (exact counts).
fn config(domain: &str, limit: u32) -> String {
    format!(
        "domain: {domain}\ndescriptors:\n  - key: k\n    rate_limit: {{unit: hour, requests_per_unit: {limit}, algorithm: fixed-window}}\n"
    )
}

/// Checks `k=v` in `domain` once: (limit, remaining), the limit `None` when no rule matched.
async fn check(service: &Service, domain: &str) -> (Option<u32>, u32) {
    let mut client = service.client().await;
    let r = ask(
        &mut client,
        request(domain, vec![descriptor(&[("k", "v")])]),
    )
    .await;
    let status = &r.statuses[0];
    (
        status.current_limit.as_ref().map(|l| l.requests_per_unit),
        status.limit_remaining,
    )
}

/// Waits for the failed-load count to reach `count`; false if it does not in time.
async fn refused(service: &Service, count: f64) -> bool {
    eventually(RELOADED_WITHIN, || async {
        service.metric(FAILED_LOADS) == Some(count)
    })
    .await
}

/// Writes `dir/version/config.yaml`, as the kubelet writes a ConfigMap's new version.
fn write_version(dir: &Path, version: &str, text: &str) {
    std::fs::create_dir(dir.join(version)).unwrap();
    std::fs::write(dir.join(version).join("config.yaml"), text).unwrap();
}

#[tokio::test]
async fn a_configmap_data_swap_applies_at_the_next_poll_and_keeps_state() {
    // A ConfigMap volume: the files are symlinks through `..data`, itself a symlink to the
    // current version's directory.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let first = "..2026_01_01_00_00_00.000000001";
    write_version(&root, first, &config("ops", 3));
    std::os::unix::fs::symlink(first, root.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/config.yaml", root.join("config.yaml")).unwrap();
    let service = Service::start_in(dir, root.clone(), &DEBOUNCE_FOR_EVER);
    assert_eq!(check(&service, "ops").await, (Some(3), 2));

    // The kubelet's update: a new version directory, a temporary `..data` link to it renamed
    // over `..data` (the one atomic step), then the old version removed.
    let second = "..2026_01_01_00_01_00.000000002";
    write_version(&root, second, &config("ops", 5));
    std::os::unix::fs::symlink(second, root.join("..data_tmp")).unwrap();
    std::fs::rename(root.join("..data_tmp"), root.join("..data")).unwrap();
    std::fs::remove_dir_all(root.join(first)).unwrap();

    let applied = eventually(RELOADED_WITHIN, || async {
        service.metric(OK_LOADS) == Some(2.0)
    })
    .await;
    assert!(applied, "the swap was not applied:\n{}", service.logs());
    // One used of the old 3 carried over: 5 - 1 - this one.
    assert_eq!(check(&service, "ops").await, (Some(5), 3));
    assert_eq!(service.metric(FAILED_LOADS).unwrap_or(0.0), 0.0);
}

#[tokio::test]
async fn sighup_with_a_bad_config_is_refused_logged_and_the_old_config_keeps_serving() {
    let service = Service::start(&config("ops", 3), &DEBOUNCE_FOR_EVER);
    assert_eq!(check(&service, "ops").await, (Some(3), 2));
    // Written in place: the poll sees it but waits out the debounce; SIGHUP loads it now.
    std::fs::write(
        &service.config,
        "domain: ops\ndescriptors: [{key: k, rate_limit: {unit: fortnight, requests_per_unit: 1}}]\n",
    )
    .unwrap();
    service.signal("HUP");
    assert!(refused(&service, 1.0).await, "{}", service.logs());
    assert!(
        service.logs().contains("fortnight") && service.logs().contains("config refused"),
        "the reason is logged:\n{}",
        service.logs()
    );
    assert_eq!(
        check(&service, "ops").await,
        (Some(3), 1),
        "old rule, old state"
    );
    assert_eq!(service.metric(OK_LOADS), Some(1.0));
}

#[tokio::test]
async fn a_yaml_syntax_error_is_refused_logged_and_the_old_config_keeps_serving() {
    let service = Service::start(&config("ops", 3), &DEBOUNCE_FOR_EVER);
    assert_eq!(check(&service, "ops").await, (Some(3), 2));
    service.write(
        "config.yaml",
        "domain: ops\ndescriptors: [{key: k, rate_limit: {unit: hour\n",
    );
    assert!(refused(&service, 1.0).await, "{}", service.logs());
    assert!(
        service.logs().contains("not valid YAML") && service.logs().contains("config.yaml"),
        "the file and the reason are logged:\n{}",
        service.logs()
    );
    assert_eq!(
        check(&service, "ops").await,
        (Some(3), 1),
        "old rule, old state"
    );
}

#[tokio::test]
async fn one_bad_file_in_a_directory_is_refused_and_every_file_keeps_serving() {
    let service = Service::start_with(Options {
        files: vec![
            ("a.yaml".into(), config("a", 3)),
            ("b.yaml".into(), config("b", 4)),
        ],
        flags: DEBOUNCE_FOR_EVER.map(String::from).to_vec(),
        ..Options::default()
    });
    assert_eq!(check(&service, "a").await, (Some(3), 2));
    assert_eq!(check(&service, "b").await, (Some(4), 3));
    service.write(
        "b.yaml",
        "domain: b\ndescriptors: [{key: k, rate_limit: {unit: hour, requests_per_unit: -4}}]\n",
    );
    assert!(refused(&service, 1.0).await, "{}", service.logs());
    assert!(
        service.logs().contains("b.yaml"),
        "the bad file is named:\n{}",
        service.logs()
    );
    // Neither the good file's domain nor the bad file's old one changed.
    assert_eq!(check(&service, "a").await, (Some(3), 1));
    assert_eq!(check(&service, "b").await, (Some(4), 2));
}

#[tokio::test]
async fn a_domain_in_two_files_is_refused_and_the_old_config_keeps_serving() {
    let service = Service::start_with(Options {
        files: vec![
            ("a.yaml".into(), config("a", 3)),
            ("b.yaml".into(), config("b", 4)),
        ],
        flags: DEBOUNCE_FOR_EVER.map(String::from).to_vec(),
        ..Options::default()
    });
    assert_eq!(check(&service, "b").await, (Some(4), 3));
    service.write("b.yaml", &config("a", 9));
    assert!(refused(&service, 1.0).await, "{}", service.logs());
    let logs = service.logs();
    let refusal = logs
        .lines()
        .find(|line| line.contains("config refused"))
        .unwrap_or_else(|| panic!("no refusal logged:\n{logs}"));
    assert!(
        refusal.contains("a.yaml") && refusal.contains("b.yaml"),
        "both files are named: {refusal}"
    );
    assert_eq!(check(&service, "a").await, (Some(3), 2));
    assert_eq!(
        check(&service, "b").await,
        (Some(4), 2),
        "domain b still served"
    );
}
