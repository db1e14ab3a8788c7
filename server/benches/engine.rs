//! The server's in-process decision path against the `limitador` crate, in one criterion
//! run, on the same descriptor workload.
//!
//! - `sluicegate-server`: an [`Engine`] built from a config string (bare-key rules `k1`, `k2`,
//!   `k3`, fixed windows, as envoyproxy/ratelimit and Limitador count), called directly with
//!   a `RateLimitRequest` (no gRPC), the Prometheus recorder installed as the server runs it.
//! - `limitador` 0.14 (`default-features = false`, its in-memory storage): one namespace
//!   (the domain) and, per descriptor key, a limit with that key as its variable and the
//!   same quota, checked and updated with one `check_rate_limited_and_update` per request.
//!
//! Each request carries 1 or 3 descriptors whose values are drawn uniformly from 1,000 keys
//! (a pool of 4,096 requests built beforehand, walked in order). The quota (1,000,000 per
//! second per key) is large enough that every decision allows: this measures the decision
//! path, not denials. Throughput is in decisions (descriptors) per second.
//!
//! `cargo bench -p sluicegate-server --bench engine`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use limitador::limit::{Context, Limit, Namespace};
use limitador::RateLimiter;
use sluicegate_server::config;
use sluicegate_server::engine::{Engine, OnBackendError, Snapshot};
use sluicegate_server::limits::{Backing, Limits};
use sluicegate_server::proto::envoy::extensions::common::ratelimit::v3::rate_limit_descriptor::Entry;
use sluicegate_server::proto::{RateLimitDescriptor, RateLimitRequest};
use sluicegate_server::telemetry::RuleCounters;
use std::collections::HashMap;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

const KEYS: u64 = 1_000;
const POOL: usize = 4_096;
const PER_SECOND: u32 = 1_000_000;
const DOMAIN: &str = "bench";

/// Runs a future that completes without waiting (the in-process engine never waits).
fn now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut TaskContext::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the in-process engine waited"),
    }
}

/// The same uniform draws for both contenders: `descriptors` values per request.
fn draws(descriptors: usize) -> Vec<Vec<u64>> {
    let mut state: u64 = 0x5eed_1234_abcd_0001;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let x = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((u128::from(x) * u128::from(KEYS)) >> 64) as u64
    };
    (0..POOL)
        .map(|_| (0..descriptors).map(|_| next()).collect())
        .collect()
}

fn engine() -> Engine {
    let yaml = format!(
        "domain: {DOMAIN}\ndescriptors:\n{}",
        (1..=3)
            .map(|i| format!(
                "  - key: k{i}\n    rate_limit:\n      unit: second\n      requests_per_unit: {PER_SECOND}\n"
            ))
            .collect::<String>()
    );
    let config = config::from_texts(&[("bench.yaml".into(), yaml)]).expect("a valid config");
    let backing = Backing::InProcess {
        max_keys: 1_000_000,
    };
    let limits = now(Limits::build(&config, &backing, None)).expect("limits");
    let counters = RuleCounters::for_config(&config);
    Engine::new(
        Snapshot {
            config,
            limits,
            counters,
        },
        backing,
        OnBackendError::Error,
    )
}

fn requests(draws: &[Vec<u64>]) -> Vec<RateLimitRequest> {
    draws
        .iter()
        .map(|values| RateLimitRequest {
            domain: DOMAIN.into(),
            descriptors: values
                .iter()
                .enumerate()
                .map(|(i, v)| RateLimitDescriptor {
                    entries: vec![Entry {
                        key: format!("k{}", i + 1),
                        value: v.to_string(),
                    }],
                    ..RateLimitDescriptor::default()
                })
                .collect(),
            hits_addend: 0,
        })
        .collect()
}

fn limitador() -> RateLimiter {
    let limiter = RateLimiter::new(10_000);
    for i in 1..=3 {
        let variable = format!("k{i}");
        limiter.add_limit(Limit::new(
            DOMAIN,
            u64::from(PER_SECOND),
            1,
            Vec::<limitador::limit::Predicate>::new(),
            [limitador::limit::Expression::parse(&variable).expect("a variable")],
        ));
    }
    limiter
}

fn contexts(draws: &[Vec<u64>]) -> Vec<Context<'static>> {
    draws
        .iter()
        .map(|values| {
            let map: HashMap<String, String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("k{}", i + 1), v.to_string()))
                .collect();
            Context::from(map)
        })
        .collect()
}

fn compare(c: &mut Criterion) {
    // The server decides with its Prometheus recorder installed: its counters are part of
    // the decision path.
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    metrics::set_global_recorder(recorder).expect("the only recorder");

    let mut group = c.benchmark_group("engine_1000_keys");
    group
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for descriptors in [1usize, 3] {
        let draws = draws(descriptors);
        group.throughput(Throughput::Elements(descriptors as u64));

        let engine = engine();
        let pool = requests(&draws);
        // Every decision allows: the quota is far above what the bench can spend.
        for request in &pool {
            let verdict = now(engine.decide(request)).expect("a verdict");
            assert!(!verdict.over, "sluicegate-server denied a bench request");
        }
        group.bench_with_input(
            BenchmarkId::new("sluicegate-server", descriptors),
            &pool,
            |b, pool| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % POOL;
                    black_box(now(engine.decide(black_box(&pool[i]))))
                })
            },
        );

        let limiter = limitador();
        let namespace = Namespace::from(DOMAIN);
        let pool = contexts(&draws);
        for ctx in &pool {
            let result = limiter
                .check_rate_limited_and_update(&namespace, ctx, 1)
                .expect("a decision");
            assert!(!result.limited, "limitador denied a bench request");
            assert_eq!(
                result.counters.len(),
                descriptors,
                "one counter per descriptor"
            );
        }
        group.bench_with_input(
            BenchmarkId::new("limitador", descriptors),
            &pool,
            |b, pool| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % POOL;
                    black_box(
                        limiter
                            .check_rate_limited_and_update(&namespace, black_box(&pool[i]), 1)
                            .expect("a decision"),
                    )
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, compare);
criterion_main!(benches);
