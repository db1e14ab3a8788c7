//! While Redis is down, the service's own warning about it is throttled as the library's
//! are: at most one line a second, with a count of those held back (issue 23, finding 7).

#[path = "support/service.rs"]
mod service;

use service::*;
use std::time::{Duration, Instant};

#[tokio::test]
async fn backend_failures_are_logged_at_most_once_a_second() {
    // Nothing listens on this port: every decision fails.
    let redis = format!("redis://127.0.0.1:{}/", free_port());
    let service = Service::start(
        "domain: down\ndescriptors:\n  - key: user\n    rate_limit: {unit: hour, requests_per_unit: 10}\n",
        &["--redis", &redis, "--on-backend-error", "allow"],
    );
    let mut client = service.client().await;
    let started = Instant::now();
    for i in 0..200 {
        let r = ask(
            &mut client,
            request("down", vec![descriptor(&[("user", &format!("u{i}"))])]),
        )
        .await;
        assert_eq!(r.overall_code, OK, "allow answers OK");
    }
    let seconds = started.elapsed().as_secs() + 1;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    ask(
        &mut client,
        request("down", vec![descriptor(&[("user", "last")])]),
    )
    .await;
    let logs = service.logs();
    let lines: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("the backend could not decide"))
        .collect();
    assert!(
        (1..=seconds as usize + 2).contains(&lines.len()),
        "{} lines in {seconds} s:\n{logs}",
        lines.len()
    );
    assert!(
        lines.iter().any(|l| !l.contains("suppressed=0")),
        "a line says how many were held back:\n{logs}"
    );
    assert_eq!(
        service.metric("ratelimit_service_backend_errors_total"),
        Some(201.0)
    );
}
