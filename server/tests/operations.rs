//! Operations on the running server: config reloads (file change, directory change,
//! SIGHUP; valid and invalid), state kept across reloads (shutdown: `shutdown.rs`).

#[path = "support/service.rs"]
mod service;

use service::*;
use std::time::Duration;

fn config(limit: u32, algorithm: &str) -> String {
    format!(
        "domain: ops
descriptors:
  - key: changing
    rate_limit: {{unit: hour, requests_per_unit: {limit}, algorithm: {algorithm}}}
  - key: steady
    rate_limit: {{unit: hour, requests_per_unit: 10}}
"
    )
}

fn one_status(entries: &[(&str, &str)]) -> sluicegate_server::proto::RateLimitRequest {
    request("ops", vec![descriptor(entries)])
}

/// Longer than any test runs: with it, only a file replaced whole (or `SIGHUP`) can apply.
const DEBOUNCE_FOR_EVER: &str = "3600000";

/// How long a test waits for a reload (at the next poll, every 500 ms; after the 1 s
/// debounce; on `SIGHUP`): a real timer in another process, given the slack a loaded
/// two-core machine needs.
const RELOADED_WITHIN: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_renamed_change_applies_at_the_next_poll_without_the_debounce_and_keeps_state() {
    let service = Service::start(
        &config(2, "fixed-window"),
        &["--reload-debounce-ms", DEBOUNCE_FOR_EVER],
    );
    let mut client = service.client().await;
    for _ in 0..2 {
        assert_eq!(
            ask(&mut client, one_status(&[("changing", "k")]))
                .await
                .overall_code,
            OK
        );
    }
    for _ in 0..4 {
        ask(&mut client, one_status(&[("steady", "k")])).await;
    }
    assert_eq!(
        ask(&mut client, one_status(&[("changing", "k")]))
            .await
            .overall_code,
        OVER
    );

    // Replaced whole by a rename: applied at the next poll, the debounce (an hour) skipped.
    service.write("config.yaml", &config(5, "fixed-window"));
    let peek = || one_status(&[("changing", "k")]);
    let applied = eventually(RELOADED_WITHIN, || {
        let mut client = client.clone();
        async move {
            let mut req = peek();
            req.descriptors[0].hits_addend = Some(0);
            let r = ask(&mut client, req).await;
            r.statuses[0]
                .current_limit
                .as_ref()
                .map(|l| l.requests_per_unit)
                == Some(5)
        }
    })
    .await;
    assert!(
        applied,
        "the renamed file did not apply at a poll:\n{}",
        service.logs()
    );
    // set_quota carried the 2 used: 3 left of 5.
    let r = ask(&mut client, one_status(&[("changing", "k")])).await;
    assert_eq!((r.overall_code, r.statuses[0].limit_remaining), (OK, 2));
    // The unchanged rule kept its state.
    let r = ask(&mut client, one_status(&[("steady", "k")])).await;
    assert_eq!(r.statuses[0].limit_remaining, 5);

    // A changed algorithm starts afresh.
    service.write("config.yaml", &config(5, "sliding-log"));
    let fresh = eventually(RELOADED_WITHIN, || {
        let mut client = client.clone();
        async move {
            let mut req = one_status(&[("changing", "k")]);
            req.descriptors[0].hits_addend = Some(0);
            ask(&mut client, req).await.statuses[0].limit_remaining == 5
        }
    })
    .await;
    assert!(fresh, "{}", service.logs());
}

#[tokio::test]
async fn an_invalid_change_is_refused_counted_and_the_old_config_serves() {
    let service = Service::start(&config(3, "gcra"), &[]);
    let mut client = service.client().await;
    ask(&mut client, one_status(&[("changing", "k")])).await;
    service.write("config.yaml", "domain: ops\ndescriptors: [{key: changing, rate_limit: {unit: lunar_cycle, requests_per_unit: 1}}]\n");
    let refused = eventually(RELOADED_WITHIN, || async {
        service.metric("ratelimit_service_config_load_total{result=\"failed\"}") == Some(1.0)
    })
    .await;
    assert!(refused, "{}", service.logs());
    assert!(
        service.logs().contains("lunar_cycle"),
        "the reason is logged:\n{}",
        service.logs()
    );
    let r = ask(&mut client, one_status(&[("changing", "k")])).await;
    let limit = r.statuses[0].current_limit.clone().unwrap();
    assert_eq!(limit.requests_per_unit, 3);
    assert_eq!(
        r.statuses[0].limit_remaining, 1,
        "the old limiter kept its state"
    );
    // Fixing it applies.
    service.write("config.yaml", &config(4, "gcra"));
    let fixed = eventually(RELOADED_WITHIN, || {
        let mut client = client.clone();
        async move {
            let r = ask(&mut client, one_status(&[("steady", "x")])).await;
            r.statuses[0].current_limit.is_some()
                && ask(&mut client, {
                    let mut req = one_status(&[("changing", "x")]);
                    req.descriptors[0].hits_addend = Some(0);
                    req
                })
                .await
                .statuses[0]
                    .current_limit
                    .as_ref()
                    .map(|l| l.requests_per_unit)
                    == Some(4)
        }
    })
    .await;
    assert!(fixed, "{}", service.logs());
}

#[tokio::test]
async fn a_directory_gains_a_domain_and_sighup_reloads() {
    let service = Service::start_with(Options {
        files: vec![(
            "a.yaml".into(),
            "domain: a\ndescriptors: [{key: k, rate_limit: {unit: hour, requests_per_unit: 1}}]\n"
                .into(),
        )],
        ..Options::default()
    });
    let mut client = service.client().await;
    let r = ask(&mut client, request("b", vec![descriptor(&[("k", "v")])])).await;
    assert!(r.statuses[0].current_limit.is_none());
    service.write(
        "b.yml",
        "domain: b\ndescriptors: [{key: k, rate_limit: {unit: hour, requests_per_unit: 7}}]\n",
    );
    // A new file waits out the debounce (1 s): it may still be being written.
    let added = eventually(RELOADED_WITHIN, || {
        let mut client = client.clone();
        async move {
            let r = ask(&mut client, request("b", vec![descriptor(&[("k", "v")])])).await;
            r.statuses[0].current_limit.is_some()
        }
    })
    .await;
    assert!(added, "{}", service.logs());

    let loads = || {
        service
            .metric("ratelimit_service_config_load_total{result=\"ok\"}")
            .unwrap_or(0.0)
    };
    let before = loads();
    service.signal("HUP");
    let reloaded = eventually(RELOADED_WITHIN, || async { loads() == before + 1.0 }).await;
    assert!(
        reloaded,
        "SIGHUP reloads even an unchanged config:\n{}",
        service.logs()
    );
}

#[tokio::test]
async fn max_keys_bounds_the_keys_one_rule_holds() {
    let service = Service::start(&config(1, "gcra"), &["--max-keys", "8"]);
    let mut client = service.client().await;
    let mut admitted = 0;
    for i in 0..200 {
        let value = format!("flood-{i}");
        let r = ask(&mut client, one_status(&[("changing", &value)])).await;
        admitted += u32::from(r.overall_code == OK);
    }
    // Every new key carries state for an hour, so the table fills and refuses the rest.
    assert!((1..=8).contains(&admitted), "{admitted} keys admitted");
    // Another rule has its own table.
    let r = ask(&mut client, one_status(&[("steady", "x")])).await;
    assert_eq!(r.overall_code, OK);
}

#[tokio::test]
async fn a_file_written_in_two_steps_is_applied_once_whole_and_keeps_state() {
    let whole = "domain: ops
descriptors:
  - key: first
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: second
    rate_limit: {unit: hour, requests_per_unit: 10}
";
    let service = Service::start(whole, &[]);
    let mut client = service.client().await;
    for _ in 0..3 {
        ask(&mut client, one_status(&[("second", "k")])).await;
    }
    let loads = || {
        service
            .metric("ratelimit_service_config_load_total{result=\"ok\"}")
            .unwrap_or(0.0)
    };
    assert_eq!(loads(), 1.0);

    // Rewritten in place in two steps, 600 ms apart (longer than a poll): the first step
    // alone is a valid config without the rule `second`.
    let (head, tail) = whole.split_at(whole.find("  - key: second").unwrap());
    let changed_tail = tail.replace("requests_per_unit: 10}", "requests_per_unit: 10, name: n}");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&service.config).unwrap();
        file.write_all(head.as_bytes()).unwrap();
        file.sync_all().unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
        file.write_all(changed_tail.as_bytes()).unwrap();
        file.sync_all().unwrap();
    }
    let applied = eventually(RELOADED_WITHIN, || {
        let mut client = client.clone();
        async move {
            let mut req = one_status(&[("second", "k")]);
            req.descriptors[0].hits_addend = Some(0);
            let r = ask(&mut client, req).await;
            r.statuses[0]
                .current_limit
                .as_ref()
                .map(|l| l.name.as_str())
                == Some("n")
        }
    })
    .await;
    assert!(applied, "the whole file applied:\n{}", service.logs());
    assert_eq!(
        loads(),
        2.0,
        "one reload, of the whole file:\n{}",
        service.logs()
    );
    let mut req = one_status(&[("second", "k")]);
    req.descriptors[0].hits_addend = Some(0);
    let r = ask(&mut client, req).await;
    assert_eq!(r.statuses[0].limit_remaining, 7, "`second` kept its state");
}
