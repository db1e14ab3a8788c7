// The several-quotas suite: a `quota` string with several quotas ("2/second; 3/minute", the
// library's `Quota::parse_many`) decided all or nothing, its status reporting the tightest
// quota, with other descriptors, shadow mode, detailed_metric, overrides, replaces, headers,
// /json and reloads. Included by grpc_rules.rs (in process) and redis_rules.rs (on Redis),
// which define `Running` and `start_config`, into a module of its own:
// `mod quotas { use super::*; include!("support/quotas_suite.rs"); }`.

use sluicegate_server::proto::{RateLimitDescriptor, RateLimitResponse};
use std::time::{Duration, Instant};

const QUOTAS: &str = r#"
domain: quotas
descriptors:
  - key: pair
    rate_limit: {quota: "2/second; 3/minute", algorithm: sliding-log}
  - key: wide
    detailed_metric: true
    rate_limit: {quota: "5/minute; 10/hour", algorithm: sliding-log}
  - key: single
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: watched
    shadow_mode: true
    rate_limit: {quota: "1/hour | 5/hour"}
  - key: odd
    rate_limit: {name: odd_pair, quota: "5/30s, 1000/hour", algorithm: gcra}
  - key: key_1
    descriptors:
      - key: user
        rate_limit: {name: replaced, quota: "1/hour; 2/day"}
  - key: key_2
    descriptors:
      - key: user
        rate_limit: {replaces: [{name: replaced}], unit: hour, requests_per_unit: 10}
"#;

/// SECOND, MINUTE, HOUR in `current_limit.unit`.
const SECOND: i32 = 1;
const MINUTE: i32 = 2;
const HOUR: i32 = 3;

/// Asks once for `descriptors` in the quotas domain.
async fn quotas_ask(service: &Service, descriptors: Vec<RateLimitDescriptor>) -> RateLimitResponse {
    let mut client = service.client().await;
    ask(&mut client, request("quotas", descriptors)).await
}

/// One descriptor `(key, value)` at `hits`.
async fn quota_hit(service: &Service, key: &str, value: &str, hits: u64) -> RateLimitResponse {
    quotas_ask(service, vec![with_hits(descriptor(&[(key, value)]), hits)]).await
}

/// Status `i`'s code, remaining, and current_limit's requests per unit and unit.
fn reported(r: &RateLimitResponse, i: usize) -> (i32, u32, u32, i32) {
    let s = &r.statuses[i];
    let limit = s.current_limit.as_ref().expect("current_limit");
    (
        s.code,
        s.limit_remaining,
        limit.requests_per_unit,
        limit.unit,
    )
}

/// Status `i`'s duration_until_reset, in seconds.
fn reset_secs(r: &RateLimitResponse, i: usize) -> f64 {
    let d = r.statuses[i]
        .duration_until_reset
        .expect("duration_until_reset");
    d.seconds as f64 + f64::from(d.nanos) / 1e9
}

#[tokio::test]
async fn several_quotas_pass_together_and_report_the_tightest() {
    let service = start_config(QUOTAS, &[]);
    // Key b, for later: both of its per-second units, 1 of 3 per minute left.
    assert_eq!(
        reported(&quota_hit(&service, "pair", "b", 2).await, 0),
        (OK, 0, 2, SECOND)
    );

    // Allowed: the quota with the least remaining is reported.
    assert_eq!(
        reported(&quota_hit(&service, "pair", "a", 1).await, 0),
        (OK, 1, 2, SECOND)
    );
    assert_eq!(
        reported(&quota_hit(&service, "pair", "a", 1).await, 0),
        (OK, 0, 2, SECOND)
    );
    // Denied by the per-second quota: it is reported, and resets within the second.
    let r = quota_hit(&service, "pair", "a", 1).await;
    assert_eq!(r.overall_code, OVER);
    assert_eq!(reported(&r, 0), (OVER, 0, 2, SECOND));
    assert!(reset_secs(&r, 0) <= 1.0, "{r:?}");

    tokio::time::sleep(Duration::from_millis(1100)).await;
    // The denial took nothing from the minute quota: its last unit admits one more, and it
    // is now the tightest (0 left of 3 per minute; 1 left per second).
    let r = quota_hit(&service, "pair", "a", 1).await;
    assert_eq!(reported(&r, 0), (OK, 0, 3, MINUTE), "{r:?}");
    // Denied by the minute quota although the second quota has room: it is reported, with
    // its own reset, most of a minute away.
    let r = quota_hit(&service, "pair", "a", 1).await;
    assert_eq!(reported(&r, 0), (OVER, 0, 3, MINUTE), "{r:?}");
    let reset = reset_secs(&r, 0);
    assert!((55.0..=60.0).contains(&reset), "{reset}: {r:?}");

    // Key b: a cost of 2 is over the minute quota (1 left) though the second quota has
    // room again; the denial took nothing from the second quota, so 1 more fits now.
    let r = quota_hit(&service, "pair", "b", 2).await;
    assert_eq!(reported(&r, 0), (OVER, 1, 3, MINUTE), "{r:?}");
    let r = quota_hit(&service, "pair", "b", 1).await;
    assert_eq!(reported(&r, 0), (OK, 0, 3, MINUTE), "{r:?}");

    // A cost no wait can admit (3 > 2 per second) is over that quota, consuming nothing.
    let r = quota_hit(&service, "pair", "c", 3).await;
    assert_eq!(reported(&r, 0), (OVER, 2, 2, SECOND), "{r:?}");
    assert_eq!(
        reported(&quota_hit(&service, "pair", "c", 2).await, 0),
        (OK, 0, 2, SECOND)
    );

    // A period that is not a unit is shown as a single quota string is: 5 per 30 s is 10
    // per minute.
    let r = quota_hit(&service, "odd", "x", 1).await;
    let limit = r.statuses[0].current_limit.clone().unwrap();
    assert_eq!(
        (limit.name.as_str(), limit.requests_per_unit, limit.unit),
        ("odd_pair", 10, MINUTE)
    );
    assert_eq!(r.statuses[0].limit_remaining, 4);
}

#[tokio::test]
async fn several_quotas_with_other_descriptors_shadow_mode_and_metrics() {
    let service = start_config(QUOTAS, &[]);
    let both = || vec![descriptor(&[("wide", "u")]), descriptor(&[("single", "u")])];
    let r = quotas_ask(&service, both()).await;
    assert_eq!(codes(&r), vec![OK, OK]);
    assert_eq!(reported(&r, 0), (OK, 4, 5, MINUTE));
    // The single rule denies: the several quotas consume nothing.
    for _ in 0..2 {
        let r = quotas_ask(&service, both()).await;
        assert_eq!((r.overall_code, codes(&r)), (OVER, vec![OK, OVER]));
    }
    assert_eq!(
        reported(&quota_hit(&service, "wide", "u", 0).await, 0),
        (OK, 4, 5, MINUTE)
    );

    // Shadow mode: over its first quota it says so, but never denies nor keeps the others
    // from counting.
    let watched = || {
        vec![
            descriptor(&[("watched", "s")]),
            descriptor(&[("wide", "s")]),
        ]
    };
    assert_eq!(codes(&quotas_ask(&service, watched()).await), vec![OK, OK]);
    let r = quotas_ask(&service, watched()).await;
    assert_eq!((r.overall_code, codes(&r)), (OK, vec![OVER, OK]));
    assert_eq!(reported(&r, 0), (OVER, 0, 1, HOUR));
    assert_eq!(reported(&r, 1), (OK, 3, 5, MINUTE));
    let metric = |name: &str, key: &str| {
        service
            .metric(&format!(
                "ratelimit_service_rate_limit_{name}{{domain=\"quotas\",key=\"{key}\"}}"
            ))
            .unwrap_or(0.0)
    };
    assert_eq!(metric("shadow_mode", "watched"), 1.0);
    // detailed_metric: counted under the request's value, once per hit, not per quota.
    assert_eq!(metric("total_hits", "wide_s"), 2.0);
    // Three requests named wide u (one admitted, two denied by the single rule: wide's own
    // status was OK) and a look that weighs nothing.
    assert_eq!(metric("total_hits", "wide_u"), 3.0);
    assert_eq!(metric("within_limit", "wide_u"), 3.0);

    // A descriptor's limit override replaces every quota of the rule, with its own counter.
    let overridden = || with_override(descriptor(&[("wide", "o")]), 1, HOUR);
    let r = quotas_ask(&service, vec![overridden()]).await;
    assert_eq!(reported(&r, 0), (OK, 0, 1, HOUR));
    assert_eq!(
        quotas_ask(&service, vec![overridden()]).await.overall_code,
        OVER
    );
    assert_eq!(
        reported(&quota_hit(&service, "wide", "o", 1).await, 0),
        (OK, 4, 5, MINUTE)
    );

    // replaces drops a rule with several quotas like any other.
    let r = quotas_ask(
        &service,
        vec![
            descriptor(&[("key_1", "x"), ("user", "u")]),
            descriptor(&[("key_2", "x"), ("user", "u")]),
        ],
    )
    .await;
    assert_eq!(codes(&r), vec![OK, OK]);
    assert!(r.statuses[0].current_limit.is_none(), "{r:?}");
    assert_eq!(reported(&r, 1), (OK, 9, 10, HOUR));
    let alone = descriptor(&[("key_1", "x"), ("user", "v")]);
    let r = quotas_ask(&service, vec![alone.clone()]).await;
    assert_eq!(reported(&r, 0), (OK, 0, 1, HOUR));
    assert_eq!(quotas_ask(&service, vec![alone]).await.overall_code, OVER);
}

#[tokio::test]
async fn headers_and_json_report_the_tightest_quota() {
    let service = start_config(QUOTAS, &["--response-headers"]);
    let header = |r: &RateLimitResponse, name: &str| -> Option<String> {
        r.response_headers_to_add
            .iter()
            .find(|h| h.key == name)
            .map(|h| h.value.clone())
    };
    // Every quota in the policy, named as the Node and Python middlewares name them.
    let r = quota_hit(&service, "pair", "h", 1).await;
    let policy = header(&r, "ratelimit-policy").expect("RateLimit-Policy");
    assert_eq!(policy, r#""pair-1";q=2;w=1, "pair-2";q=3;w=60"#);
    assert_eq!(
        header(&r, "ratelimit").as_deref(),
        Some(r#""pair-1";r=1;t=1"#)
    );
    let r = quota_hit(&service, "pair", "h", 2).await;
    assert_eq!(reported(&r, 0), (OVER, 1, 2, SECOND), "{r:?}");
    assert!(header(&r, "retry-after").is_some(), "{r:?}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = quota_hit(&service, "pair", "h", 2).await;
    assert_eq!(reported(&r, 0), (OK, 0, 3, MINUTE), "{r:?}");
    let ratelimit = header(&r, "ratelimit").expect("RateLimit");
    assert!(ratelimit.starts_with(r#""pair-2";r=0;t="#), "{ratelimit}");

    // /json answers the same: 429, the minute quota, its reset, and Retry-After.
    let body = r#"{"domain":"quotas","descriptors":[{"entries":[{"key":"pair","value":"h"}]}]}"#;
    let (code, head, text) = service.json(body);
    assert_eq!(code, 429, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let status = &v["statuses"][0];
    assert_eq!(status["code"], "OVER_LIMIT");
    assert_eq!(status["currentLimit"]["requestsPerUnit"], 3);
    assert_eq!(status["currentLimit"]["unit"], "MINUTE");
    let reset: f64 = status["durationUntilReset"]
        .as_str()
        .and_then(|s| s.trim_end_matches('s').parse().ok())
        .expect("durationUntilReset");
    assert!((55.0..=60.0).contains(&reset), "{text}");
    let head = head.to_ascii_lowercase();
    assert!(head.contains("retry-after: "), "{head}");
    assert!(head.contains(r#"ratelimit: "pair-2";r=0;t="#), "{head}");
}

#[tokio::test]
async fn a_reload_keeps_the_state_of_unchanged_quotas() {
    let with = |quota: &str| QUOTAS.replace("5/minute; 10/hour", quota);
    let service = start_config(&with("5/minute"), &[]);
    let reloaded = |expected: &str| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !service.get("/rlconfig").1.contains(expected) {
            assert!(
                Instant::now() < deadline,
                "not reloaded:\n{}",
                service.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    assert_eq!(
        reported(&quota_hit(&service, "wide", "k", 3).await, 0),
        (OK, 2, 5, MINUTE)
    );

    // A quota added: the minute quota keeps its 3 used (afresh, 3 per hour would be the
    // tightest, all left).
    service.write("config.yaml", &with("5/minute; 3/hour"));
    reloaded("and 3 per hour");
    assert_eq!(
        reported(&quota_hit(&service, "wide", "k", 0).await, 0),
        (OK, 2, 5, MINUTE)
    );
    assert_eq!(
        reported(&quota_hit(&service, "wide", "k", 2).await, 0),
        (OK, 0, 5, MINUTE)
    );

    // A quota removed: the hour quota keeps its 2 used.
    service.write("config.yaml", &with("3/hour"));
    reloaded("quotas.wide: 3 per hour");
    assert_eq!(
        reported(&quota_hit(&service, "wide", "k", 0).await, 0),
        (OK, 1, 3, HOUR)
    );
}
