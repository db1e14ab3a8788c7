//! The seam (`sluicegate::backend`): in-process limiters behind `dyn Backend<str>`, and
//! `all_of`, the all-or-nothing composite over the seam, which must decide exactly as the
//! in-process `Composite` on random traces.

mod harness;
mod reference;

use proptest::prelude::*;
use sluicegate::algorithm::{FixedWindow, Gcra, SlidingLog, TokenBucket};
use sluicegate::backend::{all_of, all_of_each, Backend, BackendErrorKind, Member, Op};
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::policy::AlgorithmKind;
use sluicegate::{Composite, Decision, KeyedLimiter, Limiter, Quota};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Polls a future once: with in-process members every call is already complete.
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("an in-process backend left a call pending"),
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Check { gap: u64, user: u8, cost: u32 },
    Peek { user: u8, cost: u32 },
    Hit { user: u8, cost: u32 },
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let gap = prop_oneof![3 => Just(0u64), 2 => 0u64..=400_000_000];
    let step = prop_oneof![
        6 => (gap, 0u8..4, 0u32..=3).prop_map(|(gap, user, cost)| Step::Check { gap, user, cost }),
        2 => (0u8..4, 0u32..=3).prop_map(|(user, cost)| Step::Peek { user, cost }),
        1 => (0u8..4, 0u32..=5).prop_map(|(user, cost)| Step::Hit { user, cost }),
    ];
    proptest::collection::vec(step, 1..120)
}

/// Two copies of the same two limits (a global `Gcra` and a per-user `SlidingLog`), one
/// driven through `Composite`, the other through `all_of`.
struct Limits {
    global: Limiter<Gcra, ManualClock>,
    per_user: KeyedLimiter<String, SlidingLog, ManualClock>,
}

impl Limits {
    fn new(clock: &ManualClock) -> Limits {
        Limits {
            global: Limiter::with_clock(Quota::per_second(5), clock.clone()).unwrap(),
            per_user: KeyedLimiter::with_clock(Quota::per_second(3), clock.clone()).unwrap(),
        }
    }
}

proptest! {
    #![proptest_config(harness::cases(200))]

    #[test]
    fn all_of_decides_exactly_as_composite(steps in steps()) {
        let clock = ManualClock::new();
        let (sync, seam) = (Limits::new(&clock), Limits::new(&clock));
        for (i, step) in steps.into_iter().enumerate() {
            let (user, cost, op) = match step {
                Step::Check { gap, user, cost } => {
                    clock.advance(Duration::from_nanos(gap));
                    (user, cost, Op::Check)
                }
                Step::Peek { user, cost } => (user, cost, Op::Peek),
                Step::Hit { user, cost } => (user, cost, Op::Hit),
            };
            let key = format!("user-{user}");
            let members = [Member::new(&seam.global, key.as_str()), Member::new(&seam.per_user, key.as_str())];
            let got = ready(all_of(&members, cost, op)).unwrap();
            let expected: Decision = match op {
                Op::Check => Composite::new(&[&sync.global, &sync.per_user.key(key.as_str())]).check_n(cost).unwrap(),
                Op::Peek => Composite::new(&[&sync.global, &sync.per_user.key(key.as_str())]).peek_n(cost).unwrap(),
                Op::Hit => {
                    let (a, b) = (sync.global.hit(cost), sync.per_user.hit(key.as_str(), cost));
                    prop_assert_eq!(got.is_allowed(), a.is_allowed() && b.is_allowed(), "step {}", i);
                    prop_assert_eq!(got.remaining(), a.remaining().min(b.remaining()), "step {}", i);
                    continue;
                }
            };
            prop_assert_eq!(got, expected, "step {}: {:?}", i, step);
        }
    }
}

#[test]
fn in_process_limiters_answer_through_dyn_backend_without_an_executor() {
    let clock = ManualClock::new();
    let per_key =
        KeyedLimiter::<String, TokenBucket, _>::with_clock(Quota::per_second(2), clock.clone())
            .unwrap();
    let global = Limiter::<FixedWindow, _>::with_clock(Quota::per_second(1), clock).unwrap();
    let backends: [&dyn Backend<str>; 2] = [&per_key, &global];
    for backend in backends {
        let first = backend
            .check("a")
            .now()
            .expect("in-process calls are ready")
            .unwrap();
        assert!(first.is_allowed());
    }
    assert_eq!(
        per_key.peek("a").remaining(),
        0,
        "the seam's check consumed"
    );
    let error = per_key
        .decide("a", 3, Op::Check)
        .now()
        .unwrap()
        .unwrap_err();
    assert_eq!(error.kind(), BackendErrorKind::Capacity);
    assert!(error.to_string().contains("capacity is 2"), "{error}");
    // A hit takes any cost.
    assert!(per_key
        .decide("a", 3, Op::Hit)
        .now()
        .unwrap()
        .unwrap()
        .is_denied());
}

#[test]
fn limiters_chosen_at_run_time_say_they_answer_at_once_for_every_algorithm() {
    // The HTTP front ends decide without an executor only when every backend says so.
    for kind in AlgorithmKind::ALL {
        let keyed = AnyKeyedLimiter::<String>::new(Quota::per_second(2), kind).unwrap();
        let direct = AnyLimiter::<ManualClock>::new(Quota::per_second(2), kind).unwrap();
        let backends: [&dyn Backend<str>; 2] = [&keyed, &direct];
        for backend in backends {
            assert!(backend.immediate(), "{kind}");
            assert!(backend
                .check("a")
                .now()
                .expect("ready")
                .unwrap()
                .is_allowed());
            assert!(backend.reset("a").now().expect("ready").is_ok(), "{kind}");
        }
    }
}

#[test]
fn undo_through_the_seam_restores_the_state_exactly_unless_written_since() {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_second(3), clock).unwrap();
    let backend: &dyn Backend<str> = &limiter;
    backend.check("k").now().unwrap().unwrap();
    let before = limiter.peek("k").remaining();
    let reservation = ready(backend.reserve("k", 1)).unwrap();
    assert!(reservation.decision.is_allowed());
    assert!(ready(backend.undo("k", reservation.receipt)).unwrap());
    assert_eq!(limiter.peek("k").remaining(), before, "undone exactly");

    let reservation = ready(backend.reserve("k", 1)).unwrap();
    backend.check("k").now().unwrap().unwrap(); // another admission lands on top
    assert!(
        !ready(backend.undo("k", reservation.receipt)).unwrap(),
        "not undone over a later write"
    );
    assert_eq!(limiter.peek("k").remaining(), before.saturating_sub(2));

    // Undo finds the key again after the table grew (its word was migrated, unchanged).
    let reservation = ready(backend.reserve("moving", 1)).unwrap();
    for n in 0..5_000 {
        limiter.check(format!("filler-{n}").as_str());
    }
    assert!(ready(backend.undo("moving", reservation.receipt)).unwrap());
    assert_eq!(limiter.peek("moving").remaining(), 2);
}

/// A sliding log whose ring has wrapped: the reservation overwrites the slot of an expired
/// entry that later decisions still read. Undone, it must leave the log deciding as if it
/// had never been made (it once left its own time there, and the undone unit kept denying).
#[test]
fn an_undone_reservation_on_a_wrapped_sliding_log_leaves_no_trace() {
    let quota = Quota::per_second(3);
    let clock = ManualClock::new();
    let keyed = KeyedLimiter::<String, SlidingLog, _>::with_clock(quota, clock.clone()).unwrap();
    let direct = Limiter::<SlidingLog, _>::with_clock(quota, clock.clone()).unwrap();
    let twin = Limiter::<SlidingLog, _>::with_clock(quota, clock.clone()).unwrap();
    let reserved: [&dyn Backend<str>; 2] = [&keyed, &direct];
    for backend in reserved.iter().chain([&twin as &dyn Backend<str>].iter()) {
        for _ in 0..3 {
            assert!(ready(backend.check("k")).unwrap().is_allowed());
        }
    }
    clock.advance(Duration::from_secs(2)); // every entry expired; the ring is full
    for backend in reserved {
        let reservation = ready(backend.reserve("k", 1)).unwrap();
        assert!(reservation.decision.is_allowed());
        assert!(ready(backend.undo("k", reservation.receipt)).unwrap());
    }
    clock.advance(Duration::from_millis(100));
    for _ in 0..4 {
        let expected = twin.check();
        for backend in reserved {
            assert_eq!(ready(backend.check("k")).unwrap(), expected);
        }
    }
}

#[test]
fn a_race_denial_undoes_the_earlier_members() {
    // A backend whose peek allows but whose reserve denies: the race `all_of` must handle by
    // undoing what it reserved before.
    struct Racy(Limiter<Gcra, ManualClock>);
    impl Backend<str> for Racy {
        fn quota(&self) -> Quota {
            self.0.quota()
        }
        fn max_cost(&self) -> u32 {
            self.0.max_cost()
        }
        fn decide<'a>(&'a self, key: &'a str, cost: u32, op: Op) -> sluicegate::backend::Call<'a> {
            if op == Op::Check {
                // Someone else empties the bucket between the peek and the reserve.
                while self.0.check().is_allowed() {}
            }
            Backend::<str>::decide(&self.0, key, cost, op)
        }
    }
    let clock = ManualClock::new();
    let first =
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_second(3), clock.clone()).unwrap();
    let racy = Racy(Limiter::with_clock(Quota::per_second(3), clock).unwrap());
    let members = [Member::new(&first, "k"), Member::new(&racy, "k")];
    let decision = ready(all_of(&members, 1, Op::Check)).unwrap();
    assert!(decision.is_denied());
    assert!(decision.retry_after().is_some());
    assert_eq!(
        first.peek("k").remaining(),
        2,
        "the first member's reservation was undone"
    );
}

#[test]
fn all_of_each_reports_every_member_at_its_own_cost_and_names_a_failure() {
    let clock = ManualClock::new();
    let requests =
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_second(5), clock.clone()).unwrap();
    let bytes = Limiter::<FixedWindow, _>::with_clock(Quota::per_second(1_000), clock).unwrap();
    let mut decisions = Vec::new();
    let members = [
        Member::new(&requests, "k"),
        Member::new(&bytes, "k").with_cost(600),
    ];
    assert!(ready(all_of_each(&members, Op::Check, &mut decisions)).unwrap());
    let remaining: Vec<u32> = decisions.iter().map(|d| d.remaining()).collect();
    assert_eq!(remaining, [4, 400]);
    // The bytes limit denies the next 600: nothing is consumed, and each answer is reported.
    assert!(!ready(all_of_each(&members, Op::Check, &mut decisions)).unwrap());
    assert_eq!(
        (decisions[0].is_allowed(), decisions[1].is_denied()),
        (true, true)
    );
    assert_eq!(
        requests.peek("k").remaining(),
        3,
        "the denial consumed nothing"
    );
    // A cost beyond a member's capacity names that member.
    let members = [
        Member::new(&requests, "k"),
        Member::new(&bytes, "k").with_cost(2_000),
    ];
    let failed = ready(all_of_each(&members, Op::Check, &mut decisions)).unwrap_err();
    assert_eq!(
        (failed.member(), failed.kind()),
        (Some(1), BackendErrorKind::Capacity)
    );
    assert!(Backend::<str>::immediate(&requests) && Backend::<str>::immediate(&bytes));
    // `numbers` gives what the accessors give.
    let d = requests.check("k");
    let n = d.numbers();
    assert_eq!(
        (n.remaining, n.retry_after, n.reset_after, n.wait),
        (d.remaining(), d.retry_after(), d.reset_after(), d.wait())
    );
}
