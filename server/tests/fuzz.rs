//! Property tests on arbitrary input: the config loader and `/json` never panic and always
//! answer a clear error (naming the file, or a 400 with a sentence).

#[path = "support/service.rs"]
mod service;

use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};
use sluicegate_server::config::from_texts;
use sluicegate_server::json::parse_request;

/// YAML-ish text built from the config's own vocabulary, so that many cases get deep into
/// the loader rather than failing at the first character.
fn config_text() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        Just("second".to_string()),
        Just("minute".to_string()),
        Just("week".to_string()),
        Just("gcra".to_string()),
        Just("sliding-log".to_string()),
        Just("\"5/30s burst 2\"".to_string()),
        Just("true".to_string()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("4294967296".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("\"v*\"".to_string()),
        "[a-z0-9*/ ]{0,8}",
    ];
    let field = prop_oneof![
        Just("key"),
        Just("value"),
        Just("unit"),
        Just("requests_per_unit"),
        Just("unlimited"),
        Just("name"),
        Just("algorithm"),
        Just("burst"),
        Just("quota"),
        Just("shadow_mode"),
        Just("detailed_metric"),
        Just("share_threshold"),
        Just("bogus"),
    ];
    let pair = (field, scalar).prop_map(|(f, v)| format!("{f}: {v}"));
    let rate_limit = prop::collection::vec(pair.clone(), 0..5)
        .prop_map(|pairs| format!("rate_limit: {{{}}}", pairs.join(", ")));
    let descriptor = (
        prop::collection::vec(pair, 0..4),
        prop::option::of(rate_limit),
    )
        .prop_map(|(pairs, rate_limit)| {
            let mut parts = pairs;
            parts.extend(rate_limit);
            format!("{{{}}}", parts.join(", "))
        });
    let nested = descriptor.prop_recursive(3, 16, 4, |inner| {
        (inner.clone(), prop::collection::vec(inner, 0..3)).prop_map(|(outer, children)| {
            let outer = outer.trim_end_matches('}').to_string();
            let sep = if outer.len() > 1 { ", " } else { "" };
            format!("{outer}{sep}descriptors: [{}]}}", children.join(", "))
        })
    });
    (
        prop::option::of("[a-z]{0,6}"),
        prop::collection::vec(nested, 0..4),
    )
        .prop_map(|(domain, descriptors)| {
            let mut text = String::new();
            if let Some(domain) = domain {
                text.push_str(&format!("domain: \"{domain}\"\n"));
            }
            text.push_str(&format!("descriptors: [{}]\n", descriptors.join(", ")));
            text
        })
}

proptest! {
    #![proptest_config(RunnerConfig { cases: 512, ..RunnerConfig::default() })]

    #[test]
    fn the_loader_never_panics_on_arbitrary_text(text in "(?s).{0,400}") {
        check_loader(&text);
    }

    #[test]
    fn the_loader_never_panics_on_config_shaped_text(text in config_text()) {
        check_loader(&text);
    }

    #[test]
    fn json_never_panics_on_arbitrary_bytes(body in prop::collection::vec(any::<u8>(), 0..300)) {
        if let Err(why) = parse_request(&body) {
            prop_assert!(why.contains("RateLimitRequest"), "{}", why);
        }
    }
}

fn check_loader(text: &str) {
    match from_texts(&[("fuzz.yaml".into(), text.into())]) {
        Ok(config) => {
            // Whatever loads can be shown and matched.
            let _ = config.to_string();
            for rule in &config.rules {
                let _ = config.find(&rule.domain, [("key", "value")]);
            }
        }
        Err(e) => {
            assert!(!e.problems.is_empty());
            for problem in &e.problems {
                assert!(problem.starts_with("fuzz.yaml:"), "{problem}");
                assert!(problem.len() > "fuzz.yaml: ".len(), "{problem}");
            }
        }
    }
}

/// JSON-shaped request bodies: right and wrong field names, types and sizes.
fn json_body() -> impl Strategy<Value = String> {
    let text = prop_oneof![
        Just("\"path\"".to_string()),
        Just("\"\"".to_string()),
        Just("\"/a\"".to_string()),
        Just("1".to_string()),
        Just("-1".to_string()),
        Just("\"4294967296\"".to_string()),
        Just("null".to_string()),
        Just("[]".to_string()),
        Just(format!("\"{}\"", "x".repeat(1100))),
        "\"[a-z/]{0,6}\"",
    ];
    let entry =
        (text.clone(), text.clone()).prop_map(|(k, v)| format!("{{\"key\":{k},\"value\":{v}}}"));
    let descriptor = (
        prop::collection::vec(entry, 0..4),
        prop::option::of(text.clone()),
        prop::option::of((text.clone(), text.clone())),
    )
        .prop_map(|(entries, hits, limit)| {
            let mut fields = vec![format!("\"entries\":[{}]", entries.join(","))];
            if let Some(h) = hits {
                fields.push(format!("\"hitsAddend\":{h}"));
            }
            if let Some((r, u)) = limit {
                fields.push(format!(
                    "\"limit\":{{\"requestsPerUnit\":{r},\"unit\":{u}}}"
                ));
            }
            format!("{{{}}}", fields.join(","))
        });
    (
        prop::option::of(prop_oneof![Just("\"web\"".to_string()), text.clone()]),
        prop::collection::vec(descriptor, 0..5),
        prop::option::of(text),
        any::<bool>(),
    )
        .prop_map(|(domain, descriptors, hits, hits_name)| {
            let mut fields = Vec::new();
            if let Some(d) = domain {
                fields.push(format!("\"domain\":{d}"));
            }
            fields.push(format!("\"descriptors\":[{}]", descriptors.join(",")));
            if let Some(h) = hits {
                let name = if hits_name {
                    "hitsAddend"
                } else {
                    "hits_addend"
                };
                fields.push(format!("\"{name}\":{h}"));
            }
            format!("{{{}}}", fields.join(","))
        })
}

#[test]
fn the_running_server_answers_every_json_body_with_200_429_or_400() {
    let service = service::Service::start(
        "domain: web\ndescriptors:\n  - key: path\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
        &[],
    );
    let mut runner = TestRunner::new(RunnerConfig {
        cases: 300,
        ..RunnerConfig::default()
    });
    let bodies = prop_oneof![json_body(), "(?s).{0,200}"];
    runner
        .run(&bodies, |body| {
            let (code, _, text) = service.json(&body);
            prop_assert!(
                matches!(code, 200 | 429 | 400),
                "{} for {}: {}",
                code,
                body,
                text
            );
            if code == 400 {
                prop_assert!(text.trim_end().len() > 10, "a sentence, not {:?}", text);
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(
        service.get("/healthcheck").0,
        200,
        "still serving:\n{}",
        service.logs()
    );
}
