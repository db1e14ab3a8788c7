//! The HTTP side of the running server: `POST /json` (200, 429 with Retry-After, 400 with a
//! sentence), `/healthcheck`, `/metrics` after traffic, `/rlconfig`.

#[path = "support/service.rs"]
mod service;

use serde_json::Value;
use service::*;

const CONFIG: &str = r#"
domain: web
descriptors:
  - key: path
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: path
    value: /near
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: client
    detailed_metric: true
    rate_limit: {unit: hour, requests_per_unit: 5}
"#;

fn body(path: &str) -> String {
    format!(
        r#"{{"domain":"web","descriptors":[{{"entries":[{{"key":"path","value":"{path}"}}]}}]}}"#
    )
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
}

#[test]
fn json_answers_200_then_429_with_retry_after() {
    let service = Service::start(CONFIG, &[]);
    for left in [1, 0] {
        let (code, _, text) = service.json(&body("/a"));
        assert_eq!(code, 200, "{text}");
        let v = parse(&text);
        assert_eq!(v["overallCode"], "OK");
        assert_eq!(v["statuses"][0]["code"], "OK");
        assert_eq!(v["statuses"][0]["limitRemaining"], left);
        assert_eq!(v["statuses"][0]["currentLimit"]["requestsPerUnit"], 2);
        assert_eq!(v["statuses"][0]["currentLimit"]["unit"], "HOUR");
        let reset = v["statuses"][0]["durationUntilReset"].as_str().unwrap();
        assert!(reset.ends_with('s'), "{reset}");
        let seconds: f64 = reset.trim_end_matches('s').parse().unwrap();
        assert!(seconds > 0.0 && seconds <= 3600.0, "{reset}");
    }
    let (code, head, text) = service.json(&body("/a"));
    assert_eq!(code, 429, "{text}");
    assert_eq!(parse(&text)["overallCode"], "OVER_LIMIT");
    let retry: u64 = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("retry-after: ")
                .map(str::to_owned)
        })
        .expect("Retry-After on a 429")
        .trim()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry), "{retry}");
}

#[test]
fn json_accepts_proto_names_and_string_numbers() {
    let service = Service::start(CONFIG, &[]);
    let (code, _, text) = service.json(
        r#"{"domain":"web","hits_addend":"2","descriptors":[{"entries":[{"key":"path","value":"/b"}]}]}"#,
    );
    assert_eq!(code, 200, "{text}");
    assert_eq!(parse(&text)["statuses"][0]["limitRemaining"], 0);
    let (code, _, text) = service.json(
        r#"{"domain":"web","descriptors":[{"entries":[{"key":"path","value":"/c"}],"hitsAddend":"0"}]}"#,
    );
    assert_eq!(code, 200, "{text}");
    assert_eq!(parse(&text)["statuses"][0]["limitRemaining"], 2);
}

#[test]
fn json_refuses_unusable_bodies_with_400_and_a_sentence() {
    let service = Service::start(CONFIG, &[]);
    let cases = [
        ("", "not a RateLimitRequest"),
        ("{", "not a RateLimitRequest"),
        ("[]", "not a RateLimitRequest"),
        (
            r#"{"domain":"web","descriptors":"x"}"#,
            "not a RateLimitRequest",
        ),
        (r#"{"domain":"web","surprise":1}"#, "surprise"),
        (r#"{"domain":"web","hitsAddend":99999999999}"#, "32 bits"),
        (
            r#"{"domain":"","descriptors":[{"entries":[{"key":"k","value":"v"}]}]}"#,
            "empty domain",
        ),
        (r#"{"domain":"web"}"#, "no descriptors"),
    ];
    for (body, words) in cases {
        let (code, _, text) = service.json(body);
        assert_eq!(code, 400, "{body}: {text}");
        assert!(text.contains(words), "{body}: {text}");
    }
    // Non-UTF-8 and oversized bodies.
    let (code, _, _) = http(service.http, "POST", "/json", "{\"domain\":\"\u{1}\"}").unwrap();
    assert_eq!(code, 400);
    let big = format!(r#"{{"domain":"{}"}}"#, "x".repeat(100_000));
    let (code, _, _) = http(service.http, "POST", "/json", &big).unwrap();
    assert_eq!(code, 413, "over the body limit");
    assert_eq!(service.json(&body("/still")).0, 200);
}

#[test]
fn healthcheck_and_rlconfig() {
    let service = Service::start(CONFIG, &[]);
    assert_eq!(service.get("/healthcheck"), (200, "OK\n".to_string()));
    let (code, text) = service.get("/rlconfig");
    assert_eq!(code, 200);
    assert!(text.contains("web.path: 2 per hour"), "{text}");
    assert!(text.contains("web.path_/near: 10 per hour"), "{text}");
    assert!(text.contains("detailed_metric"), "{text}");
}

#[test]
fn metrics_count_hits_over_near_and_within_limit() {
    let service = Service::start(CONFIG, &[]);
    for _ in 0..3 {
        service.json(&body("/m"));
    }
    for _ in 0..9 {
        service.json(&body("/near"));
    }
    service
        .json(r#"{"domain":"web","descriptors":[{"entries":[{"key":"client","value":"c42"}]}]}"#);
    let m = |name: &str, key: &str| {
        service
            .metric(&format!(
                "ratelimit_service_rate_limit_{name}{{domain=\"web\",key=\"{key}\"}}"
            ))
            .unwrap_or(0.0)
    };
    assert_eq!(m("total_hits", "path"), 3.0);
    assert_eq!(m("over_limit", "path"), 1.0);
    assert_eq!(m("within_limit", "path"), 2.0);
    assert_eq!(m("total_hits", "path_/near"), 9.0);
    // 10 per hour: fewer than 2 left (20%) after the 9th.
    assert_eq!(m("near_limit", "path_/near"), 1.0);
    assert_eq!(
        m("total_hits", "client_c42"),
        1.0,
        "detailed_metric names the value"
    );
    let (_, text) = service.get("/metrics");
    assert!(
        text.contains("ratelimit_service_should_rate_limit_seconds_bucket"),
        "{text}"
    );
    assert!(
        text.contains("ratelimit_service_config_load_total{result=\"ok\"} 1"),
        "{text}"
    );
}

#[test]
fn json_takes_only_application_json_refuses_repeated_keys_and_takes_every_integral_form() {
    let service = Service::start(CONFIG, &[]);
    let request = body("/typed");
    // A cross-site "simple" request carries text/plain, a form type, or nothing.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        None,
    ] {
        let (code, _, text) =
            http_typed(service.http, "POST", "/json", content_type, &request).expect("POST /json");
        assert_eq!(code, 415, "{content_type:?}: {text}");
    }
    for content_type in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
    ] {
        let request = body(&format!("/typed/{content_type}"));
        let (code, _, text) =
            http_typed(service.http, "POST", "/json", Some(content_type), &request).unwrap();
        assert_eq!(code, 200, "{content_type}: {text}");
    }
    assert_eq!(
        service
            .metric("ratelimit_service_bad_requests_total{api=\"json\",reason=\"content_type\"}"),
        Some(4.0)
    );

    // A key given twice: the protobuf JSON mapping refuses it; serde alone would keep the last.
    let (code, _, text) = service.json(
        r#"{"domain":"nowhere","domain":"web","descriptors":[{"entries":[{"key":"path","value":"/d"}]}]}"#,
    );
    assert_eq!(code, 400, "{text}");
    assert!(text.contains("given twice"), "{text}");

    // Integral numbers in the mapping's other forms: 1.0, 1e0, "1e0".
    for (form, left) in [("1.0", 1), ("1e0", 0)] {
        let (code, _, text) = service.json(&format!(
            r#"{{"domain":"web","hitsAddend":{form},"descriptors":[{{"entries":[{{"key":"path","value":"/forms"}}]}}]}}"#
        ));
        assert_eq!(code, 200, "{form}: {text}");
        assert_eq!(
            parse(&text)["statuses"][0]["limitRemaining"],
            left,
            "{form}"
        );
    }
    let (code, _, text) = service.json(
        r#"{"domain":"web","descriptors":[{"entries":[{"key":"path","value":"/forms2"}],"hitsAddend":"2e0"}]}"#,
    );
    assert_eq!(code, 200, "{text}");
    assert_eq!(parse(&text)["statuses"][0]["limitRemaining"], 0);
    let (code, _, text) = service.json(
        r#"{"domain":"web","hitsAddend":1.5,"descriptors":[{"entries":[{"key":"path","value":"/f"}]}]}"#,
    );
    assert_eq!(code, 400, "a fraction is not an integer: {text}");
}
