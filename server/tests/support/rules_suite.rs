// The rules suite: every config rule, every algorithm through the config, hits_addend
// forms, all-or-nothing, shadow mode, unlimited, unknown domains and descriptors, overrides,
// headers and refusals, over gRPC. Included by grpc_rules.rs (in process) and
// redis_rules.rs (on Redis), which define `Running` and `start_config`.

use sluicegate_server::proto::RateLimitResponse;
use tonic::Code;

const CONFIG: &str = r#"
domain: rules
descriptors:
  - key: one
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: five
    rate_limit: {unit: hour, requests_per_unit: 5}
  - key: ten
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: free
    rate_limit: {unlimited: true}
  - key: blocked
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: named
    rate_limit: {name: my_limit, unit: hour, requests_per_unit: 2}
  - key: wild
    value: "v*"
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: shared
    value: "v*"
    share_threshold: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: twenty
    rate_limit: {unit: hour, requests_per_unit: 20}
  - key: thousand
    rate_limit: {unit: hour, requests_per_unit: 1000}
  - key: outer
    descriptors:
      - key: inner
        rate_limit: {unit: hour, requests_per_unit: 1}
  - key: odd
    rate_limit: {quota: "3/10s", algorithm: sliding-window}
  - key: key_1
    value: value_1
    descriptors:
      - key: user
        value: bkthomps
        rate_limit: {name: specific_limit, requests_per_unit: 5, unit: second}
  - key: key_2
    value: value_2
    descriptors:
      - key: user
        value: bkthomps
        rate_limit:
          replaces: [{name: specific_limit}]
          requests_per_unit: 10
          unit: second
"#;

fn start() -> Running {
    start_config(CONFIG, &[])
}

async fn one(service: &Service, entries: &[(&str, &str)]) -> RateLimitResponse {
    let mut client = service.client().await;
    ask(&mut client, request("rules", vec![descriptor(entries)])).await
}

#[tokio::test]
async fn a_limit_allows_its_quota_then_denies_with_its_numbers() {
    let service = start();
    let mut client = service.client().await;
    for left in (0..5).rev() {
        let r = ask(
            &mut client,
            request("rules", vec![descriptor(&[("five", "a")])]),
        )
        .await;
        assert_eq!(r.overall_code, OK);
        let s = &r.statuses[0];
        assert_eq!(s.code, OK);
        assert_eq!(s.limit_remaining, left);
        let limit = s.current_limit.as_ref().expect("current_limit");
        assert_eq!(
            (limit.name.as_str(), limit.requests_per_unit, limit.unit),
            ("five", 5, 3)
        );
        let reset = s.duration_until_reset.expect("duration_until_reset");
        assert!(
            reset.seconds <= 3600 && (reset.seconds > 0 || reset.nanos > 0),
            "{reset:?}"
        );
    }
    let r = ask(
        &mut client,
        request("rules", vec![descriptor(&[("five", "a")])]),
    )
    .await;
    assert_eq!(r.overall_code, OVER);
    assert_eq!(codes(&r), vec![OVER]);
    assert_eq!(r.statuses[0].limit_remaining, 0);
    // Another value of the bare key has its own counter.
    let r = ask(
        &mut client,
        request("rules", vec![descriptor(&[("five", "b")])]),
    )
    .await;
    assert_eq!((r.overall_code, r.statuses[0].limit_remaining), (OK, 4));
}

#[tokio::test]
async fn the_rule_name_and_quota_strings_show_in_current_limit() {
    let service = start();
    let r = one(&service, &[("named", "x")]).await;
    let limit = r.statuses[0].current_limit.clone().unwrap();
    assert_eq!(
        (limit.name.as_str(), limit.requests_per_unit, limit.unit),
        ("my_limit", 2, 3)
    );
    // 3 per 10 s is shown as 18 per minute, the shortest whole unit.
    let r = one(&service, &[("odd", "x")]).await;
    let limit = r.statuses[0].current_limit.clone().unwrap();
    assert_eq!((limit.requests_per_unit, limit.unit), (18, 2));
}

#[tokio::test]
async fn hits_addend_of_the_request_and_of_a_descriptor() {
    let service = start();
    let mut client = service.client().await;
    // The request's hits_addend counts for every descriptor.
    let mut req = request("rules", vec![descriptor(&[("ten", "a")])]);
    req.hits_addend = 3;
    let r = ask(&mut client, req).await;
    assert_eq!(r.statuses[0].limit_remaining, 7);
    // A descriptor's own hits_addend wins over the request's.
    let mut req = request("rules", vec![with_hits(descriptor(&[("ten", "a")]), 4)]);
    req.hits_addend = 3;
    assert_eq!(ask(&mut client, req).await.statuses[0].limit_remaining, 3);
    // 0 only looks.
    let req = request("rules", vec![with_hits(descriptor(&[("ten", "a")]), 0)]);
    let r = ask(&mut client, req).await;
    assert_eq!((r.overall_code, r.statuses[0].limit_remaining), (OK, 3));
    let req = request("rules", vec![with_hits(descriptor(&[("ten", "a")]), 0)]);
    assert_eq!(ask(&mut client, req).await.statuses[0].limit_remaining, 3);
    // A cost over what is left is denied and consumes nothing.
    let req = request("rules", vec![with_hits(descriptor(&[("ten", "a")]), 4)]);
    let r = ask(&mut client, req).await;
    assert_eq!(r.overall_code, OVER);
    let req = request("rules", vec![with_hits(descriptor(&[("ten", "a")]), 3)]);
    let r = ask(&mut client, req).await;
    assert_eq!((r.overall_code, r.statuses[0].limit_remaining), (OK, 0));
    // Negative hits (Envoy's is_negative_hits, giving quota back) only look.
    let mut giving_back = with_hits(descriptor(&[("ten", "neg")]), 3);
    giving_back.is_negative_hits = true;
    let r = ask(&mut client, request("rules", vec![giving_back])).await;
    assert_eq!((r.overall_code, r.statuses[0].limit_remaining), (OK, 10));
    let r = ask(&mut client, request("rules", vec![descriptor(&[("ten", "neg")])])).await;
    assert_eq!(r.statuses[0].limit_remaining, 9);
    // A cost beyond the whole capacity can never fit: over, not an error.
    let req = request("rules", vec![with_hits(descriptor(&[("ten", "b")]), 11)]);
    let r = ask(&mut client, req).await;
    assert_eq!(r.overall_code, OVER);
    let r = ask(
        &mut client,
        request("rules", vec![descriptor(&[("ten", "b")])]),
    )
    .await;
    assert_eq!(r.statuses[0].limit_remaining, 9);
}

#[tokio::test]
async fn a_request_is_all_or_nothing() {
    let service = start();
    let mut client = service.client().await;
    let both = || {
        request(
            "rules",
            vec![descriptor(&[("one", "u")]), descriptor(&[("ten", "u")])],
        )
    };
    let r = ask(&mut client, both()).await;
    assert_eq!(codes(&r), vec![OK, OK]);
    assert_eq!(r.statuses[1].limit_remaining, 9);
    for _ in 0..3 {
        let r = ask(&mut client, both()).await;
        assert_eq!(r.overall_code, OVER);
        assert_eq!(codes(&r), vec![OVER, OK]);
    }
    // The denied requests consumed nothing from the second limit.
    let peek = request("rules", vec![with_hits(descriptor(&[("ten", "u")]), 0)]);
    assert_eq!(ask(&mut client, peek).await.statuses[0].limit_remaining, 9);
    // A deny-all rule beside a limit: nothing is consumed either.
    let r = ask(
        &mut client,
        request(
            "rules",
            vec![descriptor(&[("ten", "u")]), descriptor(&[("blocked", "x")])],
        ),
    )
    .await;
    assert_eq!(codes(&r), vec![OK, OVER]);
    let peek = request("rules", vec![with_hits(descriptor(&[("ten", "u")]), 0)]);
    assert_eq!(ask(&mut client, peek).await.statuses[0].limit_remaining, 9);
}

#[tokio::test]
async fn shadow_mode_reports_over_but_never_denies() {
    let service = start();
    let mut client = service.client().await;
    let req = || {
        request(
            "rules",
            vec![descriptor(&[("shadow", "s")]), descriptor(&[("ten", "s")])],
        )
    };
    let r = ask(&mut client, req()).await;
    assert_eq!((r.overall_code, codes(&r)), (OK, vec![OK, OK]));
    let r = ask(&mut client, req()).await;
    assert_eq!(
        r.overall_code, OK,
        "a shadow rule never makes the request over"
    );
    assert_eq!(codes(&r), vec![OVER, OK]);
    // The other descriptor was counted both times.
    assert_eq!(r.statuses[1].limit_remaining, 8);
    let shadow = service
        .metric("ratelimit_service_rate_limit_shadow_mode{domain=\"rules\",key=\"shadow\"}")
        .expect("the shadow_mode counter");
    assert_eq!(shadow, 1.0);
}

#[tokio::test]
async fn unlimited_deny_all_unknown_and_deeper_descriptors() {
    let service = start();
    let mut client = service.client().await;
    for _ in 0..3 {
        let r = one(&service, &[("free", "x")]).await;
        assert_eq!(r.overall_code, OK);
        assert_eq!(r.statuses[0].limit_remaining, u32::MAX);
        assert!(r.statuses[0].current_limit.is_none());
    }
    let r = one(&service, &[("blocked", "x")]).await;
    assert_eq!(r.overall_code, OVER);
    let limit = r.statuses[0].current_limit.clone().unwrap();
    assert_eq!(limit.requests_per_unit, 0);
    // No rule: OK, no current_limit, remaining 0.
    for entries in [
        &[("nobody", "x")][..],
        &[("one", "x"), ("deeper", "y")][..],
        &[("outer", "x")][..],
    ] {
        let r = one(&service, entries).await;
        assert_eq!(r.overall_code, OK, "{entries:?}");
        assert!(r.statuses[0].current_limit.is_none(), "{entries:?}");
        assert_eq!(r.statuses[0].limit_remaining, 0);
    }
    // Nested: the limit is where the last entry lands.
    let r = one(&service, &[("outer", "x"), ("inner", "y")]).await;
    assert_eq!(
        r.statuses[0]
            .current_limit
            .clone()
            .unwrap()
            .requests_per_unit,
        1
    );
    // An unknown domain: everything OK.
    let r = ask(
        &mut client,
        request("nowhere", vec![descriptor(&[("one", "x")]); 3]),
    )
    .await;
    assert_eq!((r.overall_code, codes(&r)), (OK, vec![OK, OK, OK]));
    assert!(r.statuses.iter().all(|s| s.current_limit.is_none()));
}

#[tokio::test]
async fn wildcards_count_per_value_unless_they_share_the_threshold() {
    let service = start();
    assert_eq!(one(&service, &[("wild", "v1")]).await.overall_code, OK);
    assert_eq!(one(&service, &[("wild", "v2")]).await.overall_code, OK);
    assert_eq!(one(&service, &[("wild", "v1")]).await.overall_code, OVER);
    assert!(one(&service, &[("wild", "x")]).await.statuses[0]
        .current_limit
        .is_none());
    assert_eq!(one(&service, &[("shared", "v1")]).await.overall_code, OK);
    assert_eq!(one(&service, &[("shared", "v2")]).await.overall_code, OVER);
}

#[tokio::test]
async fn keys_are_exact_whatever_the_values_contain() {
    let service = start();
    assert_eq!(
        one(&service, &[("outer", "ab"), ("inner", "c")])
            .await
            .overall_code,
        OK
    );
    assert_eq!(
        one(&service, &[("outer", "a"), ("inner", "bc")])
            .await
            .overall_code,
        OK
    );
    assert_eq!(
        one(&service, &[("outer", "a"), ("inner", "bc")])
            .await
            .overall_code,
        OVER
    );
}

#[tokio::test]
async fn replaces_drops_the_replaced_limit() {
    let service = start();
    let mut client = service.client().await;
    let both = || {
        request(
            "rules",
            vec![
                descriptor(&[("key_1", "value_1"), ("user", "bkthomps")]),
                descriptor(&[("key_2", "value_2"), ("user", "bkthomps")]),
            ],
        )
    };
    let r = ask(&mut client, both()).await;
    assert!(
        r.statuses[0].current_limit.is_none(),
        "the replaced limit is not evaluated"
    );
    assert_eq!(
        r.statuses[1]
            .current_limit
            .clone()
            .unwrap()
            .requests_per_unit,
        10
    );
    // And its own counter was not touched.
    let alone = request(
        "rules",
        vec![descriptor(&[("key_1", "value_1"), ("user", "bkthomps")])],
    );
    let r = ask(&mut client, alone).await;
    assert_eq!(r.statuses[0].limit_remaining, 4);
}

#[tokio::test]
async fn a_descriptor_limit_override_gets_its_own_counter() {
    let service = start();
    let mut client = service.client().await;
    let req = || {
        request(
            "rules",
            vec![with_override(descriptor(&[("ten", "o")]), 2, 3)],
        )
    };
    let r = ask(&mut client, req()).await;
    let limit = r.statuses[0].current_limit.clone().unwrap();
    assert_eq!((limit.requests_per_unit, limit.unit), (2, 3));
    assert_eq!(r.statuses[0].limit_remaining, 1);
    assert_eq!(ask(&mut client, req()).await.overall_code, OK);
    assert_eq!(ask(&mut client, req()).await.overall_code, OVER);
    // The configured limit of the same key is untouched.
    let r = ask(
        &mut client,
        request("rules", vec![descriptor(&[("ten", "o")])]),
    )
    .await;
    assert_eq!(r.statuses[0].limit_remaining, 9);
    // An unknown unit is refused.
    let bad = request(
        "rules",
        vec![with_override(descriptor(&[("ten", "o")]), 2, 99)],
    );
    let e = client.should_rate_limit(bad).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn unusable_requests_are_invalid_argument_with_a_reason() {
    let service = start();
    let mut client = service.client().await;
    let cases = [
        (
            request("", vec![descriptor(&[("one", "x")])]),
            "empty domain",
        ),
        (request("rules", vec![]), "no descriptors"),
        (request("rules", vec![descriptor(&[])]), "no entries"),
        (
            request("rules", vec![descriptor(&[("one", "x")]); 65]),
            "65 descriptors",
        ),
        (
            request("rules", vec![descriptor(&[("k", "v"); 33])]),
            "33 entries",
        ),
        (
            request("rules", vec![descriptor(&[("one", &"x".repeat(2000))])]),
            "2000 bytes",
        ),
        (
            request("rules", vec![descriptor(&[("", "x")])]),
            "empty key",
        ),
        (
            request(
                "rules",
                vec![with_hits(descriptor(&[("one", "x")]), u64::MAX)],
            ),
            "hits_addend",
        ),
    ];
    for (req, words) in cases {
        let e = client.should_rate_limit(req).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{words}");
        assert!(e.message().contains(words), "{words}: {}", e.message());
    }
    // A message beyond the size limit is refused, and the server keeps serving.
    let big = "x".repeat(1000);
    let huge = request(
        "rules",
        vec![descriptor(&[("one", &big), ("two", &big)]); 64],
    );
    let e = client.should_rate_limit(huge).await.unwrap_err();
    assert_ne!(e.code(), Code::Ok);
    assert_eq!(
        one(&service, &[("one", "still-serving")])
            .await
            .overall_code,
        OK
    );
}

#[tokio::test]
async fn response_headers_are_added_when_asked_for() {
    let plain = start();
    assert!(one(&plain, &[("one", "h")])
        .await
        .response_headers_to_add
        .is_empty());

    let service = start_config(CONFIG, &["--response-headers"]);
    let headers = |r: &RateLimitResponse| -> Vec<(String, String)> {
        r.response_headers_to_add
            .iter()
            .map(|h| (h.key.clone(), h.value.clone()))
            .collect()
    };
    let r = one(&service, &[("one", "h")]).await;
    assert_eq!(
        headers(&r)[..2],
        [
            (
                "ratelimit-policy".to_string(),
                "\"one\";q=1;w=3600".to_string()
            ),
            (
                "ratelimit".to_string(),
                format!(
                    "\"one\";r=0;t={}",
                    headers(&r)[1].1.rsplit('=').next().unwrap()
                )
            ),
        ]
    );
    assert_eq!(headers(&r).len(), 2, "no Retry-After while OK");
    let r = one(&service, &[("one", "h")]).await;
    let h = headers(&r);
    let retry: u64 = h
        .iter()
        .find(|(k, _)| k == "retry-after")
        .expect("Retry-After")
        .1
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry), "{retry}");
    // No rule matched: no headers.
    assert!(one(&service, &[("nobody", "h")])
        .await
        .response_headers_to_add
        .is_empty());
}

/// Each algorithm, named in the config, admits its quota and then denies.
#[tokio::test]
async fn every_algorithm_through_the_config() {
    let algorithms = [
        "gcra",
        "token-bucket",
        "leaky-bucket",
        "fixed-window",
        "sliding-window",
        "sliding-log",
    ];
    let mut config = String::from("domain: algos\ndescriptors:\n");
    for name in algorithms {
        config.push_str(&format!(
            "  - key: {name}\n    rate_limit: {{quota: \"3/hour\", algorithm: {name}}}\n"
        ));
    }
    config.push_str("  - key: burst\n    rate_limit: {unit: hour, requests_per_unit: 2, burst: 6, algorithm: gcra}\n");
    let service = start_config(&config, &[]);
    let mut client = service.client().await;
    for name in algorithms.into_iter().chain(["burst"]) {
        let mut allowed = 0;
        let mut first_denial = None;
        for i in 0..10 {
            let r = ask(
                &mut client,
                request("algos", vec![descriptor(&[(name, "k")])]),
            )
            .await;
            assert_ne!(r.overall_code, 0, "never UNKNOWN");
            if r.overall_code == OK {
                allowed += 1;
            } else if first_denial.is_none() {
                first_denial = Some(i);
            }
        }
        let expected = if name == "burst" { 6 } else { 3 };
        assert_eq!(allowed, expected, "{name}");
        assert_eq!(
            first_denial,
            Some(expected),
            "{name}: denials come after the quota"
        );
    }
}

/// Raw bytes as a gRPC message, to send what no generated client would.
mod raw {
    use prost::bytes::{Buf, BufMut};
    use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
    use tonic::Status;

    #[derive(Debug, Default, Clone)]
    pub struct Raw;

    impl Codec for Raw {
        type Encode = Vec<u8>;
        type Decode = Vec<u8>;
        type Encoder = Raw;
        type Decoder = Raw;
        fn encoder(&mut self) -> Raw {
            Raw
        }
        fn decoder(&mut self) -> Raw {
            Raw
        }
    }

    impl Encoder for Raw {
        type Item = Vec<u8>;
        type Error = Status;
        fn encode(&mut self, item: Vec<u8>, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
            buf.put_slice(&item);
            Ok(())
        }
        fn buffer_settings(&self) -> BufferSettings {
            BufferSettings::default()
        }
    }

    impl Decoder for Raw {
        type Item = Vec<u8>;
        type Error = Status;
        fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
            let mut out = vec![0; buf.remaining()];
            buf.copy_to_slice(&mut out);
            Ok(Some(out))
        }
        fn buffer_settings(&self) -> BufferSettings {
            BufferSettings::default()
        }
    }
}

#[tokio::test]
async fn malformed_protobuf_and_non_utf8_are_invalid_argument() {
    let service = start();
    let channel =
        tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{}", service.grpc))
            .unwrap()
            .connect()
            .await
            .unwrap();
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(
        "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
    );
    let cases: [(&[u8], &str); 3] = [
        // domain (field 1) holding bytes that are not UTF-8
        (&[0x0a, 0x02, 0xff, 0xfe], "UTF-8"),
        // a length running past the end
        (&[0x0a, 0x7f, b'a'], "valid RateLimitRequest"),
        // a field with an invalid wire type
        (&[0x0f, 0x01], "valid RateLimitRequest"),
    ];
    for (bytes, words) in cases {
        let mut grpc = tonic::client::Grpc::new(channel.clone());
        grpc.ready().await.unwrap();
        let e = grpc
            .unary(tonic::Request::new(bytes.to_vec()), path.clone(), raw::Raw)
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{bytes:?}: {e:?}");
        assert!(e.message().contains(words), "{bytes:?}: {}", e.message());
    }
    assert_eq!(one(&service, &[("one", "after")]).await.overall_code, OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_admit_exactly_the_limit_all_or_nothing() {
    let service = start();
    let clients: Vec<_> = {
        let mut made = Vec::new();
        for _ in 0..4 {
            made.push(service.client().await);
        }
        made
    };
    let mut calls = Vec::new();
    for i in 0..100 {
        let mut client = clients[i % clients.len()].clone();
        calls.push(tokio::spawn(async move {
            let both = request(
                "rules",
                vec![descriptor(&[("twenty", "c")]), descriptor(&[("thousand", "c")])],
            );
            ask(&mut client, both).await.overall_code
        }));
    }
    let mut admitted = 0;
    for call in calls {
        admitted += u32::from(call.await.unwrap() == OK);
    }
    assert_eq!(admitted, 20, "exactly the tighter limit");
    // The wider limit counted the admitted requests only.
    let mut client = clients[0].clone();
    let peek = request("rules", vec![with_hits(descriptor(&[("thousand", "c")]), 0)]);
    assert_eq!(ask(&mut client, peek).await.statuses[0].limit_remaining, 980);
}
