#![cfg(loom)]
//! The suite can fail: `racy_check_for_loom` is GCRA with a load-then-store instead of a CAS,
//! and loom must find the interleaving in which two racing checks are both admitted from a
//! burst of 1, both through a plain assertion and through the linearizability checker. The
//! same models with the real `check` pass.

mod linearizable;
#[path = "../../tests/reference/mod.rs"]
mod reference;

use linearizable::{assert_linearizable, expect_violation, Observed, Op, Single};
use loom::model;
use loom::sync::Arc;
use loom::thread;
use reference::{GcraModel, Model};
use sluicegate::algorithm::Gcra;
use sluicegate::clock::ManualClock;
use sluicegate::{Decision, Limiter, Quota};

const OVER_ADMITTED: &str = "over-admitted: both racing checks were allowed from a burst of 1";

/// Two threads each make one check (`racy` or the real one) on a burst of 1; `verdict` judges
/// the two decisions.
fn two_checks(racy: bool, verdict: fn(&[Observed])) {
    model(move || {
        let clock = ManualClock::new();
        let limiter = Arc::new(
            Limiter::<Gcra, ManualClock>::with_clock(Quota::per_second(1), clock).unwrap(),
        );
        let check = move |limiter: &Limiter<Gcra, ManualClock>| -> Decision {
            if racy {
                limiter.racy_check_for_loom()
            } else {
                limiter.check()
            }
        };
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let limiter = limiter.clone();
                thread::spawn(move || Observed::of(&check(&limiter)))
            })
            .collect();
        let observed: Vec<Observed> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        verdict(&observed);
    });
}

fn at_most_one_admitted(observed: &[Observed]) {
    let admitted = observed.iter().filter(|o| o.allowed).count();
    assert!(admitted <= 1, "{OVER_ADMITTED}: {observed:?}");
}

fn linearizable(observed: &[Observed]) {
    let threads: Vec<_> = observed.iter().map(|&o| vec![(Op::Check(1), o)]).collect();
    let spec = Single::new(GcraModel::new(Quota::per_second(1)), 0);
    assert_linearizable(&spec, &threads, &[]);
}

#[test]
fn loom_finds_the_racy_check_over_admitting() {
    let message = expect_violation(OVER_ADMITTED, || two_checks(true, at_most_one_admitted));
    println!("{message}");
}

#[test]
fn the_linearizability_checker_rejects_the_racy_check() {
    let message = expect_violation("not linearizable", || two_checks(true, linearizable));
    println!("{message}");
}

#[test]
fn the_real_check_passes_both() {
    two_checks(false, at_most_one_admitted);
    two_checks(false, linearizable);
}
