//! Where each trace's numbers come from: the textbook models of `tests/reference`, which share
//! no code with the engine. Every trace of `decisions.json` states its model and how close the
//! engine must be to it (its `reference`), and `binding_traces.rs` replays each step through
//! that model, before the file is written and whenever it is compared.
//!
//! Exact: every decision and number is the model's. Where the engine's arithmetic is
//! documented as approximate, the trace states the bound and the step is checked within it;
//! the engine never admits what the model denies, and the model then follows the engine's
//! admissions (as `tests/properties_bounded.rs` does), so one early denial does not shift the
//! rest of the trace.

use crate::harness::debt_horizon;
use crate::reference::{
    probe, AnchoredWindowModel, FixedWindowModel, GcraModel, LeakyModel, Model, SlidingLogModel,
    SlidingWindowModel, TokenBucketModel,
};
use serde_json::{json, Value};
use sluicegate::policy::AlgorithmKind;
use sluicegate::Quota;
use std::collections::BTreeMap;

/// How close the engine's numbers must be to the model's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tolerance {
    /// Identical.
    Exact,
    /// The token bucket's fixed-point tokens: it may deny a request when the model holds
    /// fewer than one token more than it needs, `remaining` may be one below the model's,
    /// and `retry_after`, `reset_after` may be up to `late_ns` (one emission interval)
    /// after the model's, never before.
    OneToken { late_ns: u64 },
    /// GCRA's (and the leaky bucket's) fractional mode: it may deny a request the model
    /// would still deny `late_ns` (2) nanoseconds earlier, `remaining` may be one below
    /// the model's, and `retry_after`, `reset_after`, `wait` may be up to `late_ns` after
    /// the model's, never before.
    Nanos { late_ns: u64 },
}

/// GCRA's integral mode (`limit / gcd(period, limit) <= 3`): exact.
fn integral(quota: &Quota) -> bool {
    let (l, p) = (u64::from(quota.limit()), quota.period().as_nanos() as u64);
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    l / gcd(p, l) <= 3
}

/// The model a trace of `algorithm` on `quota` is checked against, and how closely.
pub fn reference(algorithm: AlgorithmKind, quota: &Quota) -> (&'static str, Tolerance) {
    let emission = (quota.period().as_nanos() as u64).div_ceil(u64::from(quota.limit()));
    match algorithm {
        AlgorithmKind::Gcra if integral(quota) => ("GcraModel", Tolerance::Exact),
        AlgorithmKind::Gcra => ("GcraModel", Tolerance::Nanos { late_ns: 2 }),
        AlgorithmKind::LeakyBucket if integral(quota) => ("LeakyModel", Tolerance::Exact),
        AlgorithmKind::LeakyBucket => ("LeakyModel", Tolerance::Nanos { late_ns: 2 }),
        AlgorithmKind::TokenBucket => (
            "TokenBucketModel",
            Tolerance::OneToken { late_ns: emission },
        ),
        AlgorithmKind::FixedWindow if quota.is_anchored() => {
            ("AnchoredWindowModel", Tolerance::Exact)
        }
        AlgorithmKind::FixedWindow => ("FixedWindowModel", Tolerance::Exact),
        AlgorithmKind::SlidingWindow => ("SlidingWindowModel", Tolerance::Exact),
        AlgorithmKind::SlidingLog => ("SlidingLogModel", Tolerance::Exact),
    }
}

/// What the trace file says of its model: the model's name and the tolerance, in words and
/// in numbers.
pub fn describe(algorithm: AlgorithmKind, quota: &Quota) -> Value {
    let (model, tolerance) = reference(algorithm, quota);
    let model = format!("tests/reference/mod.rs {model}");
    match tolerance {
        Tolerance::Exact => json!({ "model": model, "tolerance": "exact" }),
        Tolerance::OneToken { late_ns } => json!({
            "model": model,
            "tolerance": format!(
                "within one token (fixed-point tokens): never admits what the model denies; may \
                 deny when the model holds less than one token more than the cost; remaining \
                 up to 1 below the model's; retry_after and reset_after up to late_ns (one \
                 emission interval) after the model's, never before"
            ),
            "late_ns": late_ns,
        }),
        Tolerance::Nanos { late_ns } => json!({
            "model": model,
            "tolerance": format!(
                "fractional mode (period / limit is not a whole fraction of a nanosecond): \
                 never admits what the model denies; may deny what the model admits only if \
                 the model denies it late_ns earlier; remaining up to 1 below the model's; \
                 retry_after, reset_after and wait up to late_ns after the model's, never before"
            ),
            "late_ns": late_ns,
        }),
    }
}

/// Replays `trace` (one object of `decisions.json`) through its model; the first step that
/// the model contradicts (beyond the tolerance) is the error.
pub fn check(trace: &Value) -> Result<(), String> {
    let algorithm: AlgorithmKind = trace["algorithm"].as_str().unwrap().parse().unwrap();
    let quota: Quota = trace["quota"].as_str().unwrap().parse().unwrap();
    let (_, tolerance) = reference(algorithm, &quota);
    let steps = trace["steps"].as_array().unwrap();
    match reference(algorithm, &quota).0 {
        "GcraModel" => replay::<GcraModel>(quota, tolerance, steps),
        "LeakyModel" => replay::<LeakyModel>(quota, tolerance, steps),
        "TokenBucketModel" => replay::<TokenBucketModel>(quota, tolerance, steps),
        "AnchoredWindowModel" => replay::<AnchoredWindowModel>(quota, tolerance, steps),
        "FixedWindowModel" => replay::<FixedWindowModel>(quota, tolerance, steps),
        "SlidingWindowModel" => replay::<SlidingWindowModel>(quota, tolerance, steps),
        "SlidingLogModel" => replay::<SlidingLogModel>(quota, tolerance, steps),
        other => unreachable!("{other}"),
    }
}

/// One key's model and the hits it has recorded (they widen the probes' horizon).
struct Keyed<M> {
    model: M,
    hit_cost: u64,
}

/// What the model says of one step: admitted or not, and the numbers.
#[derive(Debug)]
struct Expected {
    allowed: bool,
    remaining: u32,
    retry_after_ns: Option<u64>,
    reset_after_ns: u64,
    wait_ns: u64,
}

fn replay<M: Model + 'static>(
    quota: Quota,
    tolerance: Tolerance,
    steps: &[Value],
) -> Result<(), String> {
    let mut keys: BTreeMap<String, Keyed<M>> = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        let now = step["at_us"].as_u64().unwrap() * 1_000;
        let cost = step["cost"].as_u64().unwrap() as u32;
        let op = step["op"].as_str().unwrap();
        let key = step["key"].as_str().unwrap_or("").to_owned();
        let got = &step["expect"];
        let state = keys.entry(key).or_insert_with(|| Keyed {
            model: M::new(quota),
            hit_cost: 0,
        });
        let fail = |what: &str| Err(format!("step {i} ({step}): {what}"));

        // A check or peek of more than the capacity is refused, whatever the state.
        let never_fits = op != "hit" && cost > state.model.capacity();
        if never_fits != (got["error"] == json!("capacity")) {
            return fail(&format!(
                "the model's capacity is {}: the error must be given exactly above it",
                state.model.capacity()
            ));
        }
        if never_fits {
            continue;
        }
        if got["limit"].as_u64() != Some(u64::from(quota.limit())) {
            return fail("limit is not the quota's");
        }
        let engine_allowed = got["allowed"].as_bool().unwrap();

        // The model decides on a copy; it keeps the decision only as the engine does.
        let mut after = state.model.clone();
        let model_admits = match op {
            "hit" => after.hit(now, cost),
            _ => after.check(now, cost),
        };
        if op == "hit" {
            state.hit_cost += u64::from(cost);
        }
        let model_allowed = model_admits.is_some();
        if engine_allowed && !model_allowed {
            return fail("admitted what the model denies");
        }
        if !engine_allowed && model_allowed {
            let within = match tolerance {
                Tolerance::Exact => false,
                Tolerance::OneToken { .. } => {
                    let (tokens, per_token) = token_count(&state.model, now);
                    tokens < i128::from(cost + 1) * per_token
                }
                Tolerance::Nanos { late_ns } => state
                    .model
                    .clone()
                    .check(now.saturating_sub(late_ns), cost)
                    .is_none(),
            };
            if !within {
                return fail("denied what the model admits, beyond the tolerance");
            }
        }
        // The numbers describe the state after the request as the engine decided it (a peek's
        // are those of the check it previews); a hit always records.
        let decided = if op == "hit" || engine_allowed {
            after
        } else {
            state.model.clone()
        };
        let horizon = debt_horizon(quota, state.hit_cost);
        let expected = Expected {
            allowed: model_allowed,
            remaining: probe::remaining(&decided, now),
            retry_after_ns: (!engine_allowed).then(|| {
                let retry_cost = if op == "hit" { 1 } else { cost };
                probe::first_admission(&decided, now, retry_cost, horizon)
                    .expect("admissible within the horizon")
                    - now
            }),
            reset_after_ns: probe::first_fresh(&decided, now, horizon)
                .expect("fresh within the horizon")
                - now,
            wait_ns: if engine_allowed {
                model_admits.unwrap_or(0)
            } else {
                0
            },
        };
        compare(got, &expected, tolerance)
            .or_else(|why| fail(&format!("{why}; model: {expected:?}")))?;
        if op != "peek" {
            state.model = decided;
        }
    }
    Ok(())
}

/// The token bucket model's tokens at `now`, as (numerator, denominator).
fn token_count<M: Model + 'static>(model: &M, now: u64) -> (i128, i128) {
    let any: &dyn std::any::Any = model;
    let bucket = any
        .downcast_ref::<TokenBucketModel>()
        .expect("a token tolerance is only given to the token bucket");
    bucket.tokens_at(now)
}

fn compare(got: &Value, expected: &Expected, tolerance: Tolerance) -> Result<(), String> {
    let number = |name: &str| got[name].as_u64();
    let late_ns = match tolerance {
        Tolerance::Exact => 0,
        Tolerance::OneToken { late_ns } | Tolerance::Nanos { late_ns } => late_ns,
    };
    let below = if tolerance == Tolerance::Exact { 0 } else { 1 };
    let remaining = number("remaining").unwrap() as u32;
    if remaining > expected.remaining || remaining + below < expected.remaining {
        return Err(format!("remaining {remaining}"));
    }
    let within = |name: &str, engine: u64, model: u64| {
        if engine < model || engine > model + late_ns {
            Err(format!("{name} {engine} ns"))
        } else {
            Ok(())
        }
    };
    within(
        "reset_after_ns",
        number("reset_after_ns").unwrap(),
        expected.reset_after_ns,
    )?;
    within("wait_ns", number("wait_ns").unwrap(), expected.wait_ns)?;
    match (number("retry_after_ns"), expected.retry_after_ns) {
        (Some(engine), Some(model)) => within("retry_after_ns", engine, model)?,
        (None, None) => {}
        (engine, _) => return Err(format!("retry_after_ns {engine:?}")),
    }
    if tolerance == Tolerance::Exact && got["allowed"].as_bool() != Some(expected.allowed) {
        return Err("allowed differs".into());
    }
    Ok(())
}
