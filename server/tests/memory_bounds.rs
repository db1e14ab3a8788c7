//! Memory a client's choice of values cannot grow (issue 23, findings 1 and 2), measured as
//! the real server's resident memory (`VmRSS` in `/proc/PID/status`) around floods of
//! distinct values over 127.0.0.1: `detailed_metric` series are bounded per rule, and the
//! limiters made for `limit` overrides are bounded in number.

#[path = "support/flood.rs"]
mod flood;
#[path = "support/service.rs"]
mod service;

use service::*;
use std::time::{Duration, Instant};

/// 50,000 distinct values took about 100 MB before the bound; 40 MB is room for the rule's
/// key table (the keys themselves, bounded by --max-keys) and the allocator's slack.
const FLOOD_GROWTH_KIB: u64 = 40 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detailed_metric_series_are_bounded_per_rule() {
    let service = Service::start(
        "domain: flood
descriptors:
  - key: client
    detailed_metric: true
    rate_limit: {unit: second, requests_per_unit: 5}
",
        &[],
    );
    let client = service.client().await;
    let values = 50_000;
    let warm = 200;
    flood::flood(
        &client,
        warm,
        16,
        |i| {
            request(
                "flood",
                vec![descriptor(&[("client", &format!("warm-{i}"))])],
            )
        },
        |_| true,
    )
    .await;
    let before = service.rss_kib();
    let started = Instant::now();
    let answered = flood::flood(
        &client,
        values,
        32,
        |i| request("flood", vec![descriptor(&[("client", &format!("c{i}"))])]),
        |r| r.overall_code == OK,
    )
    .await;
    assert_eq!(answered, values, "every new value is within its limit");
    let during = service.rss_kib();
    eprintln!(
        "{values} values in {:?}: VmRSS {before} KiB before, {during} KiB after",
        started.elapsed()
    );

    let series_start = "ratelimit_service_rate_limit_total_hits{domain=\"flood\",key=\"client_";
    let (detailed_hits, series) = service.metric_sum(series_start);
    assert!(
        series <= 100,
        "{series} series for one rule (--max-metric-series 100)"
    );
    let overflow = service
        .metric("ratelimit_service_rate_limit_total_hits{domain=\"flood\",key=\"client\"}")
        .unwrap_or(0.0);
    assert_eq!(
        detailed_hits + overflow,
        (values + warm) as f64,
        "every hit is counted, past the bound under the rule's own key"
    );
    let (_, scrape) = service.get("/metrics");
    assert!(
        scrape.len() < 256 * 1024,
        "/metrics is {} bytes",
        scrape.len()
    );
    assert!(
        during < before + FLOOD_GROWTH_KIB,
        "VmRSS grew from {before} to {during} KiB"
    );
    // The values' one-second windows pass, the sweeper (every 10 s) drops their keys, and
    // most of the memory the flood took goes back.
    let deadline = Instant::now() + Duration::from_secs(25);
    let given_back = |after: u64| after.saturating_sub(before) * 2 <= during - before;
    let mut after = service.rss_kib();
    while !given_back(after) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        after = service.rss_kib();
    }
    eprintln!("VmRSS after the sweep: {after} KiB");
    assert!(
        given_back(after),
        "VmRSS {before} KiB before, {during} KiB after the flood, {after} KiB 25 s later"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn override_limiters_are_bounded() {
    let service = Service::start(
        "domain: flood
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 5}
",
        &[],
    );
    let client = service.client().await;
    let shapes = 10_000;
    let before = service.rss_kib();
    let started = Instant::now();
    // Each request a new override: 1,000,000 + i an hour, for one key.
    let over = flood::flood(
        &client,
        shapes,
        32,
        |i| {
            request(
                "flood",
                vec![with_override(
                    descriptor(&[("client", "c")]),
                    1_000_000 + i as u32,
                    3,
                )],
            )
        },
        |r| r.overall_code == OVER,
    )
    .await;
    let during = service.rss_kib();
    eprintln!(
        "{shapes} overrides in {:?}: VmRSS {before} KiB before, {during} KiB after",
        started.elapsed()
    );
    // Every limiter keeps its key's hour: past the 1,000 kept, a new shape is over the limit.
    assert_eq!(
        over,
        shapes - 1000,
        "the 1,000 first shapes decide, the rest are over"
    );
    assert_eq!(
        service.metric("ratelimit_service_override_limiters_full_total"),
        Some((shapes - 1000) as f64)
    );
    assert!(
        during < before + FLOOD_GROWTH_KIB,
        "VmRSS grew from {before} to {during} KiB"
    );
    // A shape already kept still decides.
    let mut client = client.clone();
    let r = ask(
        &mut client,
        request(
            "flood",
            vec![with_override(descriptor(&[("client", "c")]), 1_000_000, 3)],
        ),
    )
    .await;
    assert_eq!(r.overall_code, OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_override_limiters_make_room() {
    let service = Service::start(
        "domain: flood
descriptors:
  - key: client
    rate_limit: {unit: second, requests_per_unit: 5}
",
        &["--max-override-limiters", "100"],
    );
    let client = service.client().await;
    let before = service.rss_kib();
    // Per-second overrides: their state is gone a second later, so their limiters idle.
    let mut decided = 0;
    for round in 0..3u32 {
        decided += flood::flood(
            &client,
            100,
            16,
            move |i| {
                request(
                    "flood",
                    vec![with_override(
                        descriptor(&[("client", "c")]),
                        1000 * round + i as u32 + 1,
                        1,
                    )],
                )
            },
            |r| r.overall_code == OK,
        )
        .await;
        tokio::time::sleep(Duration::from_millis(2100)).await;
    }
    assert_eq!(
        decided, 300,
        "each round finds the last one's limiters idle and drops them"
    );
    let after = service.rss_kib();
    assert!(after < before + 16 * 1024, "VmRSS {before} → {after} KiB");
}
