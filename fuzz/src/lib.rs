//! What the fuzz targets share: a service engine deciding in process on a fixed config whose
//! rules use every kind of match (exact values, wildcards, bare keys, nesting), so that a
//! request that decodes also runs through matching and deciding.

use sluicegate_server::config;
use sluicegate_server::engine::{Engine, OnBackendError, Refusal, Snapshot};
use sluicegate_server::limits::{Backing, Limits};
use sluicegate_server::proto::RateLimitRequest;
use sluicegate_server::telemetry::RuleCounters;
use std::sync::OnceLock;

/// The config every request is decided on.
pub const CONFIG: &str = "domain: web
descriptors:
  - key: path
    rate_limit: {unit: second, requests_per_unit: 5}
  - key: path
    value: /login
    rate_limit: {quota: \"3/30s burst 2\", algorithm: gcra}
  - key: user
    value: \"vip*\"
    rate_limit: {unlimited: true}
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 0}
    shadow_mode: true
  - key: tenant
    descriptors:
      - key: api
        rate_limit: {unit: hour, requests_per_unit: 100, algorithm: sliding-log}
      - key: api
        value: bulk
        detailed_metric: true
        rate_limit: {quota: \"10/minute\", algorithm: token-bucket}
";

/// A current-thread runtime and the engine on [`CONFIG`], built once per process.
fn engine() -> &'static (tokio::runtime::Runtime, Engine) {
    static ENGINE: OnceLock<(tokio::runtime::Runtime, Engine)> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let config = config::from_texts(&[("fuzz.yaml".into(), CONFIG.into())])
            .expect("the fuzz config is valid");
        let backing = Backing::InProcess { max_keys: 10_000 };
        let limits = runtime
            .block_on(Limits::build(&config, &backing, None))
            .expect("limits");
        let counters = RuleCounters::for_config(&config);
        let snapshot = Snapshot {
            config,
            limits,
            counters,
        };
        let engine = Engine::new(snapshot, backing, OnBackendError::Error);
        (runtime, engine)
    })
}

/// Decides `request` as the service would once it decoded it: refused with a sentence
/// when it cannot be used (its shape, or what matching finds, such as a `limit` override of
/// no known unit), else matched and decided in process; in process no backend fails.
pub fn decide(request: &RateLimitRequest) {
    if let Some(problem) = sluicegate_server::input::problem(request) {
        assert!(problem.len() > 10, "a sentence: {problem:?}");
        return;
    }
    let (runtime, engine) = engine();
    match runtime.block_on(engine.decide(request)) {
        Ok(_) => {}
        Err(Refusal::Invalid(_, sentence)) => assert!(sentence.len() > 10, "{sentence:?}"),
        Err(Refusal::Unavailable(why)) => panic!("no backend fails in process: {why}"),
    }
}
