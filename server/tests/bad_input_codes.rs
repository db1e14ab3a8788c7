//! Input that is the client's fault gets the client's codes (issue 23, findings 5 and 6):
//! an override the rule's algorithm cannot run is `INVALID_ARGUMENT`/400, not
//! `UNAVAILABLE`/503; a message over the size limit is `RESOURCE_EXHAUSTED`/413. Each is
//! counted in `/metrics`, and logged at most once a second per kind.

#[path = "support/service.rs"]
mod service;

use service::*;
use std::time::{Duration, Instant};
use tonic::Code;

const CONFIG: &str = "domain: faults
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 10}
";

fn refused(service: &Service, api: &str, reason: &str) -> f64 {
    service
        .metric(&format!(
            "ratelimit_service_bad_requests_total{{api=\"{api}\",reason=\"{reason}\"}}"
        ))
        .unwrap_or(0.0)
}

#[tokio::test]
async fn an_override_the_algorithm_cannot_run_is_invalid_argument_and_400() {
    let service = Service::start(CONFIG, &[]);
    let mut client = service.client().await;
    // 4,294,967,295 a second: more than a fixed window's counter holds.
    let unrunnable = with_override(descriptor(&[("user", "u1")]), u32::MAX, 1);
    let e = client
        .should_rate_limit(request("faults", vec![unrunnable]))
        .await
        .expect_err("refused");
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("override"), "{e:?}");

    let (code, _, body) = service.json(
        r#"{"domain":"faults","descriptors":[{"entries":[{"key":"user","value":"u1"}],
            "limit":{"requestsPerUnit":4294967295,"unit":"SECOND"}}]}"#,
    );
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("override"), "{body}");

    assert_eq!(refused(&service, "grpc", "override"), 1.0);
    assert_eq!(refused(&service, "json", "override"), 1.0);
    assert!(
        service.logs().contains("request refused"),
        "{}",
        service.logs()
    );
    // A runnable override still decides.
    let fine = with_override(descriptor(&[("user", "u1")]), 5, 1);
    let r = ask(&mut client, request("faults", vec![fine])).await;
    assert_eq!((r.overall_code, r.statuses[0].limit_remaining), (OK, 4));
}

#[tokio::test]
async fn oversize_requests_get_resource_exhausted_and_413() {
    let service = Service::start(CONFIG, &[]);
    let mut client = service.client().await;
    // 100 descriptors of 1 KiB values: past the 64 KiB message limit.
    let value = "v".repeat(1024);
    let big: Vec<_> = (0..100).map(|_| descriptor(&[("user", &value)])).collect();
    let e = client
        .should_rate_limit(request("faults", big))
        .await
        .expect_err("refused");
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");

    let body = format!(
        r#"{{"domain":"faults","descriptors":[{{"entries":[{{"key":"user","value":"{}"}}]}}]}}"#,
        "v".repeat(100_000)
    );
    let (code, _, text) = service.json(&body);
    assert_eq!(code, 413, "{text}");

    assert_eq!(refused(&service, "grpc", "too_large"), 1.0);
    assert_eq!(refused(&service, "json", "too_large"), 1.0);
    // The connection and the server carry on.
    let r = ask(
        &mut client,
        request("faults", vec![descriptor(&[("user", "u")])]),
    )
    .await;
    assert_eq!(r.overall_code, OK);
}

#[tokio::test]
async fn refusals_are_logged_at_most_once_a_second_with_a_count() {
    let service = Service::start(CONFIG, &[]);
    let mut client = service.client().await;
    let started = Instant::now();
    for _ in 0..300 {
        let e = client
            .should_rate_limit(request("", vec![descriptor(&[("user", "u")])]))
            .await
            .expect_err("refused");
        assert_eq!(e.code(), Code::InvalidArgument);
    }
    let seconds = started.elapsed().as_secs() + 1;
    // Let a last line out with the count of the ones held back.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let _ = client
        .should_rate_limit(request("", vec![descriptor(&[("user", "u")])]))
        .await;
    let logs = service.logs();
    let lines = logs
        .lines()
        .filter(|l| l.contains("request refused"))
        .count();
    assert!(
        (1..=seconds as usize + 2).contains(&lines),
        "{lines} lines in {seconds} s:\n{logs}"
    );
    assert!(
        logs.lines()
            .any(|l| l.contains("request refused") && !l.contains("suppressed=0")),
        "a line says how many were held back:\n{logs}"
    );
    assert_eq!(refused(&service, "grpc", "invalid"), 301.0);
}
