//! The Rust engine's answers on fixed traces, kept in `tests/traces/decisions.json`: the file
//! the Node and Python bindings' tests replay through their own `Limiter` and `KeyedLimiter`
//! to show that they answer exactly as Rust does.
//!
//! This test recomputes every answer and requires the file to hold exactly those, so the file
//! can never drift from the engine; and it replays every trace through its textbook model
//! (`tests/reference`, named in the trace's `reference` with the tolerance it is held to:
//! `traces/models.rs`), so the file's numbers are the models' and not only the engine's. After a
//! deliberate change to an algorithm, rewrite it with
//! `SLUICEGATE_BLESS=1 cargo test --release --test binding_traces` (which writes nothing that
//! a model contradicts) and review the diff.

mod harness;
#[path = "traces/models.rs"]
mod models;
mod reference;

use serde_json::{json, Value};
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::policy::AlgorithmKind;
use sluicegate::{CapacityError, Decision, Quota};
use std::path::Path;
use std::time::Duration;

const FILE: &str = "tests/traces/decisions.json";

/// A small deterministic generator (64-bit LCG, Knuth's constants): the traces must be the
/// same on every machine and every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// One operation of a trace, before it is answered.
struct Step {
    at_us: u64,
    op: &'static str,
    key: &'static str,
    cost: u32,
}

/// Steps at whole microseconds (exact in milliseconds and seconds as doubles), bunched so
/// that limits are reached: gaps of 0, a fraction of the emission interval, or a period.
fn steps(quota: Quota, keyed: bool, seed: u64, count: usize) -> Vec<Step> {
    let mut rng = Lcg(seed);
    let period_us = quota.period().as_micros() as u64;
    let interval_us = (period_us / u64::from(quota.limit())).max(1);
    let keys: &[&str] = if keyed { &["a", "b", "user:42"] } else { &[""] };
    let mut at_us = 0;
    (0..count)
        .map(|_| {
            at_us += match rng.below(10) {
                0..=3 => 0,
                4..=6 => rng.below(interval_us + 1),
                7 | 8 => interval_us,
                _ => rng.below(2 * period_us + 1),
            };
            let op = match rng.below(10) {
                0..=6 => "check",
                7 | 8 => "peek",
                _ => "hit",
            };
            let cost = match rng.below(10) {
                0..=5 => 1,
                6 => 0,
                7 | 8 => 1 + rng.below(u64::from(quota.burst().max(quota.limit()))) as u32,
                // Sometimes more than any capacity: a check or peek is then refused.
                _ => 2 * quota.burst().max(quota.limit()) + 1,
            };
            Step {
                at_us,
                op,
                key: keys[rng.below(keys.len() as u64) as usize],
                cost,
            }
        })
        .collect()
}

fn answer(result: Result<Decision, CapacityError>) -> Value {
    match result {
        Ok(d) => {
            let n = d.numbers();
            json!({
                "allowed": d.is_allowed(),
                "limit": d.limit(),
                "remaining": n.remaining,
                "retry_after_ns": n.retry_after.map(|t| t.as_nanos() as u64),
                "reset_after_ns": n.reset_after.as_nanos() as u64,
                "wait_ns": n.wait.as_nanos() as u64,
            })
        }
        Err(_) => json!({ "error": "capacity" }),
    }
}

/// Runs one trace through the engine and returns it with every answer.
fn run(algorithm: AlgorithmKind, quota_text: &str, keyed: bool, seed: u64) -> Value {
    let quota: Quota = quota_text.parse().unwrap();
    let clock = ManualClock::new();
    let keyed_limiter =
        AnyKeyedLimiter::<String, ManualClock>::with_clock(quota, algorithm, clock.clone())
            .unwrap();
    let direct = AnyLimiter::with_clock(quota, algorithm, clock.clone()).unwrap();
    let mut out = Vec::new();
    for step in steps(quota, keyed, seed, 60) {
        clock.set(Duration::from_micros(step.at_us));
        let (key, cost) = (step.key, step.cost);
        let result = match (keyed, step.op) {
            (true, "check") => keyed_limiter.check_n(key, cost),
            (true, "peek") => keyed_limiter.peek_n(key, cost),
            (true, _) => Ok(keyed_limiter.hit(key, cost)),
            (false, "check") => direct.check_n(cost),
            (false, "peek") => direct.peek_n(cost),
            (false, _) => Ok(direct.hit(cost)),
        };
        let mut step_json = json!({
            "at_us": step.at_us,
            "op": step.op,
            "cost": cost,
        });
        if keyed {
            step_json["key"] = json!(key);
        }
        step_json["expect"] = answer(result);
        out.push(step_json);
    }
    json!({
        "algorithm": algorithm.name(),
        "quota": quota_text,
        "keyed": keyed,
        "reference": models::describe(algorithm, &quota),
        "steps": out,
    })
}

fn all_traces() -> Value {
    let quotas = [
        "5/second burst 3",
        "3/10s",
        "100/minute burst 20",
        "7/250ms",
    ];
    let mut traces = Vec::new();
    let mut seed = 1;
    for algorithm in AlgorithmKind::ALL {
        for quota in quotas {
            for keyed in [true, false] {
                traces.push(run(algorithm, quota, keyed, seed));
                seed += 1;
            }
        }
    }
    // The fixed window anchored at each key's first request.
    for quota in ["3/10s anchored", "100/minute anchored", "7/250ms anchored"] {
        for keyed in [true, false] {
            traces.push(run(AlgorithmKind::FixedWindow, quota, keyed, seed));
            seed += 1;
        }
    }
    json!({
        "about": "The Rust engine's answers (tests/binding_traces.rs) on fixed traces, replayed \
                  by the Node and Python bindings' tests. A ManualClock starting at 0 is set to \
                  at_us before each step; `hit` records whatever the answer; a cost that can \
                  never fit is the error \"capacity\" for check and peek. Each trace's \
                  `reference` names the textbook model (tests/reference) its numbers are \
                  checked against, and within what tolerance.",
        "traces": traces,
    })
}

/// The file's text: a trace's fields on one line each and a step per line, so that a change
/// shows in a diff as the steps it changed.
fn compact(all: &Value) -> String {
    let mut out = format!("{{\n\"about\": {},\n\"traces\": [\n", all["about"]);
    let traces = all["traces"].as_array().unwrap();
    for (i, trace) in traces.iter().enumerate() {
        let mut head = trace.clone();
        head.as_object_mut().unwrap().remove("steps");
        let head = head.to_string();
        out.push_str(&head[..head.len() - 1]);
        out.push_str(",\"steps\": [\n");
        let steps = trace["steps"].as_array().unwrap();
        for (j, step) in steps.iter().enumerate() {
            let comma = if j + 1 < steps.len() { "," } else { "" };
            out.push_str(&format!("  {step}{comma}\n"));
        }
        out.push_str(if i + 1 < traces.len() {
            "]},\n"
        } else {
            "]}\n"
        });
    }
    out.push_str("]\n}\n");
    out
}

#[test]
fn the_trace_file_holds_the_engines_answers() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE);
    let computed = all_traces();
    // Before anything is written or compared: every answer is its model's.
    for trace in computed["traces"].as_array().unwrap() {
        if let Err(why) = models::check(trace) {
            panic!(
                "the engine's {} trace of {} (keyed: {}) contradicts {}: {why}",
                trace["algorithm"], trace["quota"], trace["keyed"], trace["reference"]
            );
        }
    }
    if std::env::var_os("SLUICEGATE_BLESS").is_some() {
        let text = compact(&computed);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{FILE}: {e}; write it with SLUICEGATE_BLESS=1"));
    let stored: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        stored, computed,
        "{FILE} differs from the engine's answers; if the change is deliberate, rewrite it \
         with SLUICEGATE_BLESS=1 and review the diff"
    );
    // The traces exercise what they should: denials, errors, every op, on every algorithm.
    let steps: Vec<&Value> = computed["traces"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["steps"].as_array().unwrap())
        .collect();
    let count = |f: &dyn Fn(&Value) -> bool| steps.iter().filter(|s| f(s)).count();
    assert!(count(&|s| s["expect"]["allowed"] == json!(false)) > 100);
    assert!(count(&|s| s["expect"]["error"] == json!("capacity")) > 20);
    assert!(count(&|s| s["op"] == json!("hit")) > 50);
    assert!(count(&|s| s["expect"]["wait_ns"].as_u64().is_some_and(|w| w > 0)) > 5);
}
