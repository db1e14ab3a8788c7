// The anchored fixed window in the service: `quota: "… anchored"` starts each value's window
// at its first request, so a refused client is told to come back one window after it began,
// whatever the time of day; the default fixed window stays aligned to the clock's edges.
// Included by grpc_rules.rs (in process) and redis_rules.rs (on Redis), which define
// `Running` and `start_config`: `mod anchored { use super::*; include!(...); }`.

use std::time::Duration;

const ANCHORED: &str = r#"
domain: anchored
descriptors:
  - key: own
    rate_limit: {quota: "1/hour anchored"}
  - key: edge
    rate_limit: {unit: hour, requests_per_unit: 1}
"#;

/// One hit of `(key, value)`: its code and duration_until_reset in seconds.
async fn anchored_hit(service: &Service, key: &str, value: &str) -> (i32, f64) {
    let mut client = service.client().await;
    let r = ask(
        &mut client,
        request("anchored", vec![descriptor(&[(key, value)])]),
    )
    .await;
    let s = &r.statuses[0];
    let d = s.duration_until_reset.expect("duration_until_reset");
    (s.code, d.seconds as f64 + f64::from(d.nanos) / 1e9)
}

#[tokio::test]
async fn an_anchored_window_runs_one_period_from_each_values_first_request() {
    let service = start_config(ANCHORED, &[]);
    let (code, reset) = anchored_hit(&service, "own", "a").await;
    assert_eq!(code, OK);
    assert!(
        (3_599.0..=3_600.0).contains(&reset),
        "a whole hour from now: {reset}"
    );
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let (code, reset) = anchored_hit(&service, "own", "a").await;
    assert_eq!(code, OVER);
    assert!(
        (3_597.0..3_599.0).contains(&reset),
        "the hour began at the first request: {reset}"
    );
    let (code, reset) = anchored_hit(&service, "own", "b").await;
    assert_eq!(code, OK);
    assert!(
        (3_599.0..=3_600.0).contains(&reset),
        "b's own hour: {reset}"
    );

    // The aligned window counts to the next whole hour of UNIX time.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let (code, reset) = anchored_hit(&service, "edge", "a").await;
    assert_eq!(code, OK);
    let to_edge = 3_600.0 - now % 3_600.0;
    assert!((reset - to_edge).abs() < 2.0, "{reset} vs {to_edge}");
}
