//! The front-end specification: a spec read from JSON builds the one `RequestLimiter` every
//! front end decides with (limits of one quota or several, tiers chosen per request, keys and
//! tiers handed in by the host, limits of 0, headers, bodies, exemptions, `max_keys`), and a
//! wrong one reports every problem, each naming its option in the host's spelling.
#![cfg(all(feature = "http", feature = "serde"))]

use http::request::Parts;
use sluicegate::http::front_end::{request_parts, GivenKeys, GivenTiers};
use sluicegate::http::spec::{FrontEndSpec, LimitSpec, TiersSpec};
use sluicegate::http::{Deciding, Naming, RequestLimiter, Verdict};

fn spec(json: &str) -> FrontEndSpec {
    serde_json::from_str(json).expect("a spec")
}

fn request(path: &str, headers: &[(&str, &str)], peer: &str) -> Parts {
    let headers = headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()));
    request_parts("GET", path, headers, Some(peer.parse().unwrap()))
}

/// Status (200 for a pass) and the response's headers, lowercase names.
fn decide(limiter: &RequestLimiter, parts: &Parts) -> (u16, Vec<(String, String)>, String) {
    let Deciding::Now(verdict) = limiter.decide(parts) else {
        panic!("in process: decided at once")
    };
    match verdict {
        Verdict::Pass { headers, .. } => {
            let headers = headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
                .collect();
            (200, headers, String::new())
        }
        Verdict::Refuse(response) => {
            let headers = response
                .headers()
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
                .collect();
            let body = String::from_utf8_lossy(response.body()).into_owned();
            (response.status().as_u16(), headers, body)
        }
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

const PEER: &str = "192.0.2.7:4000";

#[test]
fn a_json_spec_builds_the_limiter_with_one_limit_per_quota() {
    let front_end = spec(
        r#"{ "limits": [
            { "name": "ip", "quota": "5/minute" },
            { "name": "token", "key": "header:x-api-key", "quota": ["2/minute", "100/hour"],
              "algorithm": "sliding-window" }
        ] }"#,
    )
    .build()
    .unwrap();
    let names: Vec<&str> = front_end
        .limiter()
        .limits()
        .iter()
        .map(|l| l.name())
        .collect();
    assert_eq!(names, ["ip", "token-1", "token-2"]);
    assert_eq!(front_end.names().collect::<Vec<_>>(), ["ip", "token"]);
    assert_eq!((front_end.slots(1), front_end.limit_of(2)), (1..3, Some(1)));
    let limiter = front_end.limiter();
    let keyed = request("/", &[("x-api-key", "k1")], PEER);
    let (status, headers, _) = decide(limiter, &keyed);
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "ratelimit-policy"),
        Some(r#""ip";q=5;w=60, "token-1";q=2;w=60, "token-2";q=100;w=3600"#)
    );
    // The sliding window's reset is its wall-clock window's end.
    let ratelimit = header(&headers, "ratelimit").unwrap();
    assert!(ratelimit.starts_with(r#""token-1";r=1;t="#), "{ratelimit}");
    decide(limiter, &keyed);
    let (status, headers, body) = decide(limiter, &keyed);
    assert_eq!(status, 429);
    assert!(body.contains("limit \"token-1\""), "{body}");
    assert!(header(&headers, "retry-after").is_some());
    // A request without the header: 400 naming the limit.
    let (status, _, body) = decide(limiter, &request("/", &[], PEER));
    assert_eq!(status, 400, "{body}");
}

#[test]
fn every_problem_is_reported_with_its_path_in_the_hosts_spelling() {
    let wrong = spec(
        r#"{ "limits": [
            { "name": "ip", "quota": "5/fortnight" },
            { "name": "", "key": "cookie", "quota": "1/s", "algorithm": "magic" },
            { "name": "t", "tiers": { "by": "header:x-plan", "quotas": {}, "default": "gold" } },
            { "name": "ip", "quota": "1/s" }
        ],
        "trustedProxies": ["10.0.0.0/8, 10.1.0.0/8"],
        "ipv6_prefix": 300,
        "onBackendError": "retry",
        "headers": ["draft-7", "draft-8"],
        "body": "xml",
        "maxKeys": 0,
        "exempt": ["health"],
        "refund": ["maybe"],
        "redis": { "url": "redis://127.0.0.1/", "connect": "later" }
    }"#,
    );
    let error = spec_error(&wrong).naming(Naming::Camel);
    let paths: Vec<String> = error.problems().iter().map(|p| p.path()).collect();
    assert_eq!(
        paths,
        [
            "limits[0].quota",
            "limits[1].name",
            "limits[1].key",
            "limits[1].algorithm",
            "limits[2].tiers.quotas",
            "limits[2].tiers.default",
            "limits[3].name",
            "trustedProxies[0]",
            "ipv6Prefix",
            "onBackendError",
            "headers[1]",
            "body",
            "maxKeys",
            "exempt[0]",
            "refund[0]",
            "redis.connect",
        ]
    );
    let text = error.to_string();
    assert!(
        text.starts_with("limits[0].quota: invalid quota \"5/fortnight\""),
        "{text}"
    );
    assert!(
        text.contains("limits[3].name: limits[0] is named \"ip\" too"),
        "{text}"
    );
    assert!(
        text.contains("ipv6Prefix: an IPv6 prefix is 0 to 128 bits, not 300"),
        "{text}"
    );
    let snake = spec_error(&wrong).to_string();
    assert!(
        snake.contains("trusted_proxies[0]: invalid network \"10.1.0.0/8\""),
        "{snake}"
    );
    assert!(
        snake.contains("max_keys: must be at least 1, got 0"),
        "{snake}"
    );
}

fn spec_error(spec: &FrontEndSpec) -> sluicegate::http::BuildError {
    let validated = spec.validate().unwrap_err();
    let built = spec.build().unwrap_err();
    assert_eq!(
        validated, built,
        "validate and build find the same problems"
    );
    built
}

#[test]
fn names_of_several_quotas_cannot_meet_another_limit() {
    let clash = FrontEndSpec::new([
        LimitSpec::new("a", "1/s; 2/minute"),
        LimitSpec::new("a-2", "5/s"),
    ]);
    let error = clash.build().unwrap_err();
    assert_eq!(error.problems()[0].path(), "limits[1].name");
    assert!(error.to_string().contains("\"a-2\""), "{error}");
}

#[test]
fn a_tier_chosen_by_header_keeps_its_own_state_and_names() {
    let front_end = spec(
        r#"{ "limits": [
            { "name": "all", "quota": "4/minute" },
            { "name": "plan", "tiers": { "by": "header:x-plan", "default": "free",
              "quotas": { "free": "1/minute", "pro": "5/minute; 100/hour" } } }
        ] }"#,
    )
    .build()
    .unwrap();
    let limiter = front_end.limiter();
    let free = request("/", &[], PEER);
    let pro = request("/", &[("x-plan", "pro")], PEER);
    let (status, headers, _) = decide(limiter, &free);
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "ratelimit-policy"),
        Some(r#""all";q=4;w=60, "plan";q=1;w=60"#)
    );
    let (status, _, body) = decide(limiter, &free);
    assert_eq!(status, 429);
    assert!(body.contains("limit \"plan\""), "{body}");
    let pros: Vec<_> = (0..3).map(|_| decide(limiter, &pro)).collect();
    assert_eq!(
        header(&pros[0].1, "ratelimit-policy"),
        Some(r#""all";q=4;w=60, "plan-1";q=5;w=60, "plan-2";q=100;w=3600"#)
    );
    assert!(pros.iter().all(|(status, ..)| *status == 200));
    // "all" is one table whatever the tier: 1 free + 3 pro used it up, and the free tier's
    // refusal consumed nothing of it.
    let (status, _, body) = decide(limiter, &pro);
    assert_eq!(status, 429);
    assert!(body.contains("limit \"all\""), "{body}");
    // An unknown tier takes the default; without a default it would be a 400.
    let (status, ..) = decide(limiter, &request("/", &[("x-plan", "gold")], "192.0.2.8:1"));
    assert_eq!(status, 200);
    let strict = FrontEndSpec::new([LimitSpec::tiered(
        "plan",
        TiersSpec::new("header:x-plan", [("free", "1/minute")]),
    )]);
    let strict = strict.build().unwrap();
    let (status, _, body) = decide(strict.limiter(), &request("/", &[], PEER));
    assert_eq!(status, 400);
    assert!(body.contains("x-plan header is missing"), "{body}");
}

#[test]
fn keys_and_tiers_given_by_the_host() {
    let front_end = spec(
        r#"{ "limits": [
            { "name": "user", "key": "given", "quota": "1/minute" },
            { "name": "plan", "key": "given",
              "tiers": { "by": "given", "quotas": ["2/minute", "3/minute"] } }
        ] }"#,
    )
    .build()
    .unwrap();
    let given: Vec<_> = front_end.given_keys().collect();
    assert_eq!(given, [(0, "user"), (1, "plan")]);
    assert_eq!(front_end.given_tiers().collect::<Vec<_>>(), [(1, "plan")]);
    assert!(front_end.check_tier(1, "3/minute").is_ok());
    assert!(front_end
        .check_tier(1, "9/minute")
        .unwrap_err()
        .contains("not one of"));
    let with = |user: &str, tier: &str| {
        let mut parts = request("/", &[], PEER);
        let mut keys = GivenKeys::new();
        keys.insert("user", Some(user.to_owned()));
        keys.insert("plan", Some(user.to_owned()));
        parts.extensions.insert(keys);
        let mut tiers = GivenTiers::new();
        tiers.insert("plan", tier);
        parts.extensions.insert(tiers);
        parts
    };
    let limiter = front_end.limiter();
    let (status, headers, _) = decide(limiter, &with("u1", "3/minute"));
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "ratelimit-policy"),
        Some(r#""user";q=1;w=60, "plan";q=3;w=60"#)
    );
    assert_eq!(decide(limiter, &with("u1", "3/minute")).0, 429);
    assert_eq!(decide(limiter, &with("u2", "2/minute")).0, 200);
    // A tier the host names that is none of them: the host's mistake, a 500.
    assert_eq!(decide(limiter, &with("u3", "9/minute")).0, 500);
}

#[test]
fn open_tiers_are_made_as_the_host_names_them_up_to_their_bound() {
    let mut plan = TiersSpec::open("given", 2);
    plan.default = None;
    let front_end = FrontEndSpec::new([LimitSpec::tiered("plan", plan).algorithm("fixed-window")])
        .build()
        .unwrap();
    let limiter = front_end.limiter();
    let with = |tier: &str| {
        let mut parts = request("/", &[], PEER);
        let mut tiers = GivenTiers::new();
        tiers.insert("plan", tier);
        parts.extensions.insert(tiers);
        parts
    };
    let (status, headers, _) = decide(limiter, &with("1/60000ms anchored"));
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "ratelimit-policy"),
        Some(r#""plan";q=1;w=60"#)
    );
    assert_eq!(decide(limiter, &with("1/60000ms anchored")).0, 429);
    assert_eq!(decide(limiter, &with("3/60000ms anchored")).0, 200);
    // A third distinct tier is beyond the bound; a known one still works; nonsense is not a tier.
    assert_eq!(decide(limiter, &with("7/60000ms anchored")).0, 500);
    assert_eq!(decide(limiter, &with("3/60000ms anchored")).0, 200);
    assert_eq!(decide(limiter, &with("many")).0, 500);
    assert!(front_end.check_tier(0, "many").is_err());
    assert_eq!(limiter.limits()[0].tiers().unwrap().len(), 2);
    // A limit of 0 is a tier too: every request refused, told to wait one window.
    let zero = FrontEndSpec::new([LimitSpec::tiered("z", TiersSpec::open("given", 4))])
        .build()
        .unwrap();
    let mut parts = request("/", &[], PEER);
    let mut tiers = GivenTiers::new();
    tiers.insert("z", "0/15s");
    parts.extensions.insert(tiers);
    let (status, headers, _) = decide(zero.limiter(), &parts);
    assert_eq!((status, header(&headers, "retry-after")), (429, Some("15")));
}

#[test]
fn a_limit_of_zero_refuses_everything_with_its_window() {
    let front_end = FrontEndSpec::new([LimitSpec::new("closed", "0/minute")])
        .build()
        .unwrap();
    let (status, headers, _) = decide(front_end.limiter(), &request("/", &[], PEER));
    assert_eq!(status, 429);
    assert_eq!(header(&headers, "retry-after"), Some("60"));
}

#[test]
fn headers_bodies_and_exemptions_as_configured() {
    let front_end = spec(
        r#"{ "limits": [{ "name": "ip", "quota": "1/minute" }],
             "headers": ["draft-7", "legacy"], "body": "json",
             "exempt": ["/health", "/static/*"] }"#,
    )
    .build()
    .unwrap();
    let limiter = front_end.limiter();
    for path in ["/health", "/static/app.js", "/health", "/static/"] {
        let (status, headers, _) = decide(limiter, &request(path, &[], PEER));
        assert_eq!((status, headers.len()), (200, 0), "{path}");
    }
    let (_, headers, _) = decide(limiter, &request("/", &[], PEER));
    assert_eq!(header(&headers, "ratelimit-policy"), Some("1;w=60"));
    assert_eq!(
        header(&headers, "ratelimit"),
        Some("limit=1, remaining=0, reset=60")
    );
    assert_eq!(header(&headers, "x-ratelimit-limit"), Some("1"));
    let (status, headers, body) = decide(limiter, &request("/healthz", &[], PEER));
    assert_eq!(status, 429);
    assert_eq!(header(&headers, "content-type"), Some("application/json"));
    assert_eq!(
        body,
        r#"{"detail":"too many requests for limit \"ip\"; retry after 60 seconds"}"#
    );
    let quiet = spec(r#"{ "limits": [{ "name": "ip", "quota": "1/minute" }], "headers": false }"#)
        .build()
        .unwrap();
    let (_, headers, _) = decide(quiet.limiter(), &request("/", &[], PEER));
    assert!(headers.is_empty(), "{headers:?}");
}

#[test]
fn max_keys_bounds_each_table_and_refunds_are_the_hosts_to_judge() {
    let front_end = spec(
        r#"{ "limits": [{ "name": "user", "key": "header:x-user", "quota": "5/minute" }],
             "max_keys": 1, "refund": "failed" }"#,
    )
    .build()
    .unwrap();
    assert!(front_end.reserves());
    assert!(front_end.refunds(false) && !front_end.refunds(true));
    let statuses: Vec<u16> = (0..300)
        .map(|n| {
            let user = format!("u{n}");
            decide(
                front_end.limiter(),
                &request("/", &[("x-user", &user)], PEER),
            )
            .0
        })
        .collect();
    assert!(statuses.contains(&503) && statuses.contains(&200));
}

#[cfg(feature = "redis")]
#[test]
fn a_spec_on_redis_is_built_by_build_async() {
    let on_redis = spec(
        r#"{ "limits": [{ "name": "ip", "quota": "1/s" }], "redis": "redis://127.0.0.1:1/" }"#,
    );
    let error = on_redis.build().unwrap_err();
    assert_eq!(error.problems()[0].path(), "redis");
    assert!(on_redis.validate().is_ok());
}

#[cfg(feature = "redis")]
#[test]
fn redis_tls_and_sentinel_options_are_read_and_checked_by_name() {
    // Every field in the bindings' spelling, a Sentinel URL accepted as a URL.
    let sentinel = spec(
        r#"{ "limits": [{ "name": "ip", "quota": "1/s" }],
             "redis": { "url": "redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/#mymaster",
                        "sentinelUsername": "watcher", "sentinelPassword": "secret" } }"#,
    );
    assert!(sentinel.validate().is_ok(), "{:?}", sentinel.validate());
    let redis = sentinel.redis.as_ref().expect("redis");
    assert_eq!(redis.sentinel_username.as_deref(), Some("watcher"));
    assert_eq!(redis.sentinel_password.as_deref(), Some("secret"));

    // PEM text is taken as it is; a path must name a file that can be read; a client
    // certificate needs its key.
    let wrong = spec(
        r#"{ "limits": [{ "name": "ip", "quota": "1/s" }],
             "redis": { "url": "rediss://127.0.0.1:6380/",
                        "caCert": "-----BEGIN CERTIFICATE-----\n",
                        "clientCert": "/nonexistent/client.pem" } }"#,
    );
    let error = spec_error(&wrong).naming(Naming::Camel);
    let paths: Vec<String> = error.problems().iter().map(|p| p.path()).collect();
    assert_eq!(paths, ["redis.clientCert", "redis.clientKey"]);
    let text = error.to_string();
    assert!(
        text.contains("\"/nonexistent/client.pem\" is neither PEM text"),
        "{text}"
    );
    assert!(
        text.contains("give both client_cert and client_key"),
        "{text}"
    );

    // A Sentinel URL of the wrong form is refused by the Sentinel reader, naming the form.
    let bad_sentinel = spec(
        r#"{ "limits": [{ "name": "ip", "quota": "1/s" }],
             "redis": "redis-sentinel://127.0.0.1:26379/" }"#,
    );
    let text = spec_error(&bad_sentinel).to_string();
    assert!(text.starts_with("redis.url: "), "{text}");
    assert!(text.contains("#master"), "{text}");
}

#[test]
fn reset_and_refunds_reach_every_tier() {
    let front_end = spec(
        r#"{ "limits": [{ "name": "plan", "key": "header:x-user",
             "tiers": { "by": "header:x-plan", "quotas": { "free": "1/minute", "pro": "2/minute" } } }],
             "refund": "failed" }"#,
    )
    .build()
    .unwrap();
    let limiter = front_end.limiter();
    let free = request("/", &[("x-user", "u"), ("x-plan", "free")], PEER);
    let pro = request("/", &[("x-user", "u"), ("x-plan", "pro")], PEER);
    assert_eq!(decide(limiter, &free).0, 200);
    assert_eq!(decide(limiter, &free).0, 429);
    assert_eq!(decide(limiter, &pro).0, 200);
    // Forgetting the key forgets it in each tier.
    assert!(limiter.reset("u").now().unwrap().unwrap());
    assert_eq!(decide(limiter, &free).0, 200);
    // A refund gives the request back in the tier it was counted in.
    let sluicegate::http::Reserving::Now(reserved) = limiter.decide_reserving(&pro) else {
        panic!("in process")
    };
    let refund = reserved.refund.expect("counted, so refundable");
    assert_eq!(refund.limits().collect::<Vec<_>>(), ["plan"]);
    assert!(refund.refund().now().unwrap().unwrap());
    assert_eq!(decide(limiter, &pro).0, 200);
    assert_eq!(decide(limiter, &pro).0, 200);
    assert_eq!(decide(limiter, &pro).0, 429);
}
