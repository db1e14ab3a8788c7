//! A tiered limiter decides for each tier exactly as a separate keyed limiter with that
//! tier's quota and algorithm would; keys moving between tiers behave as documented.

mod harness;
mod reference;

use proptest::prelude::*;
use sluicegate::backend::Backend;
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::AnyKeyedLimiter;
use sluicegate::policy::AlgorithmKind;
use sluicegate::tiers::{TierError, TieredLimiter, UnknownTier};
use sluicegate::Quota;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Free,
    Pro,
    Enterprise,
}

const PLANS: [Plan; 3] = [Plan::Free, Plan::Pro, Plan::Enterprise];

#[derive(Debug, Clone, Copy)]
struct Request {
    gap: u64,
    plan: usize,
    user: u8,
    cost: u32,
    kind: u8, // 0-4 check, 5 peek, 6 hit
}

fn requests() -> impl Strategy<Value = Vec<Request>> {
    let gap = prop_oneof![3 => Just(0u64), 2 => 0u64..=3_000_000_000];
    let request =
        (gap, 0usize..3, 0u8..5, 0u32..=6, 0u8..7).prop_map(|(gap, plan, user, cost, kind)| {
            Request {
                gap,
                plan,
                user,
                cost,
                kind,
            }
        });
    proptest::collection::vec(request, 1..150)
}

fn setups() -> impl Strategy<Value = [(Quota, AlgorithmKind); 3]> {
    let tier = || {
        (
            harness::quota(),
            prop::sample::select(AlgorithmKind::ALL.to_vec()),
        )
    };
    [tier(), tier(), tier()]
}

proptest! {
    #![proptest_config(harness::cases(200))]

    #[test]
    fn each_tier_decides_as_a_separate_limiter(setup in setups(), requests in requests()) {
        let clock = ManualClock::new();
        let separate: Vec<Option<AnyKeyedLimiter<u8, ManualClock>>> = setup
            .iter()
            .map(|&(quota, kind)| AnyKeyedLimiter::with_clock(quota, kind, clock.clone()).ok())
            .collect();
        let mut builder = TieredLimiter::<Plan, u8>::builder().clock(clock.clone());
        for (plan, &(quota, kind)) in PLANS.iter().zip(&setup) {
            builder = builder.tier_with(*plan, quota, kind);
        }
        let tiered = match builder.build() {
            Ok(tiered) => tiered,
            Err(TierError::Quota { tier, error }) => {
                // Refused exactly when a separate limiter refuses, naming that tier.
                let i = separate.iter().position(Option::is_none).expect("one tier refused");
                prop_assert_eq!(tier, format!("{:?}", PLANS[i]));
                prop_assert_eq!(
                    Some(error),
                    AnyKeyedLimiter::<u8, ManualClock>::with_clock(setup[i].0, setup[i].1, clock.clone()).err()
                );
                return Ok(());
            }
            Err(other) => return Err(TestCaseError::fail(format!("{other}"))),
        };
        let separate: Vec<_> = separate.into_iter().map(Option::unwrap).collect();
        for (i, r) in requests.iter().enumerate() {
            clock.advance(Duration::from_nanos(r.gap));
            let (plan, own) = (&PLANS[r.plan], &separate[r.plan]);
            let (got, expected) = match r.kind {
                0..=4 => (
                    tiered.check_n(plan, &r.user, r.cost),
                    own.check_n(&r.user, r.cost).map_err(TierError::Capacity),
                ),
                5 => (
                    tiered.peek_n(plan, &r.user, r.cost),
                    own.peek_n(&r.user, r.cost).map_err(TierError::Capacity),
                ),
                _ => (
                    tiered.hit(plan, &r.user, r.cost).map_err(TierError::from),
                    Ok(own.hit(&r.user, r.cost)),
                ),
            };
            prop_assert_eq!(got, expected, "request {}: {:?}", i, r);
        }
        // Which idle keys a table has dropped on its own depends on how its keys fell into
        // shards (each shard sweeps before it grows); once both sweep, the keys that carry
        // state are the same.
        tiered.sweep();
        separate.iter().for_each(|own| { own.sweep(); });
        let own_len: usize = separate.iter().map(AnyKeyedLimiter::len).sum();
        prop_assert_eq!(tiered.len(), own_len);
        let own_allowed: u64 = separate.iter().map(AnyKeyedLimiter::allowed).sum();
        let own_denied: u64 = separate.iter().map(AnyKeyedLimiter::denied).sum();
        prop_assert_eq!((tiered.allowed(), tiered.denied()), (own_allowed, own_denied));
    }
}

fn plans(clock: &ManualClock) -> TieredLimiter<Plan, String, ManualClock> {
    TieredLimiter::<Plan, String>::builder()
        .clock(clock.clone())
        .tier(Plan::Free, Quota::per_minute(10))
        .tier(Plan::Pro, Quota::per_minute(100))
        .tier(Plan::Enterprise, Quota::per_minute(1000))
        .build()
        .unwrap()
}

#[test]
fn the_three_plans_of_the_issue() {
    let clock = ManualClock::new();
    let limits = plans(&clock);
    let admitted = |plan: Plan, user: &str| {
        (0..2000)
            .filter(|_| limits.check(&plan, user).unwrap().is_allowed())
            .count()
    };
    assert_eq!(admitted(Plan::Free, "f"), 10);
    assert_eq!(admitted(Plan::Pro, "p"), 100);
    assert_eq!(admitted(Plan::Enterprise, "e"), 1000);
    assert_eq!(limits.len(), 3);
}

#[test]
fn a_key_changing_tier_starts_the_new_tier_fresh_and_keeps_the_old_state() {
    let clock = ManualClock::new();
    let limits = plans(&clock);
    for _ in 0..10 {
        assert!(limits.check(&Plan::Free, "alice").unwrap().is_allowed());
    }
    assert!(limits.check(&Plan::Free, "alice").unwrap().is_denied());
    // Upgraded: the pro allowance, whole.
    assert_eq!(limits.check(&Plan::Pro, "alice").unwrap().remaining(), 99);
    // Downgraded again within the minute: the free state is where it was left.
    let back = limits.check(&Plan::Free, "alice").unwrap();
    assert!(back.is_denied());
    assert_eq!(back.retry_after(), Some(Duration::from_secs(6)));
    assert_eq!(limits.len(), 2);
    // A second later the pro state (one unit, refilled in 0.6 s) is fresh and swept; the
    // free one lingers until its minute is up.
    clock.advance(Duration::from_secs(1));
    assert_eq!(limits.sweep(), 1);
    assert_eq!(limits.tier(&Plan::Free).unwrap().len(), 1);
    clock.advance(Duration::from_secs(59));
    assert_eq!(limits.sweep(), 1);
    assert!(limits.is_empty());
}

#[test]
fn unknown_tiers_and_impossible_costs_are_errors() {
    let clock = ManualClock::new();
    let limits = TieredLimiter::<String, u64>::builder()
        .clock(clock)
        .tier("free".into(), Quota::per_second(2))
        .build()
        .unwrap();
    assert_eq!(limits.check("gold", &1).err(), Some(UnknownTier));
    assert_eq!(limits.peek("gold", &1).err(), Some(UnknownTier));
    assert_eq!(limits.hit("gold", &1, 1).err(), Some(UnknownTier));
    assert_eq!(
        limits.check_n("gold", &1, 1).err(),
        Some(TierError::UnknownTier)
    );
    assert_eq!(
        limits.peek_n("gold", &1, 1).err(),
        Some(TierError::UnknownTier)
    );
    match limits.check_n("free", &1, 3) {
        Err(TierError::Capacity(error)) => assert_eq!(error.capacity(), 2),
        other => panic!("expected a capacity error, got {other:?}"),
    }
    assert!(limits.is_empty());
    assert_eq!(
        UnknownTier.to_string(),
        "the tier is not one of the limiter's tiers"
    );
}

#[test]
fn building_refuses_no_tiers_duplicates_and_unsupported_quotas() {
    let none = TieredLimiter::<Plan, u64, ManualClock>::builder().build();
    assert_eq!(none.unwrap_err(), TierError::NoTiers);
    let twice = TieredLimiter::<Plan, u64, ManualClock>::builder()
        .tier(Plan::Free, Quota::per_second(1))
        .tier(Plan::Free, Quota::per_second(2))
        .build();
    assert_eq!(twice.unwrap_err().to_string(), "tier Free is given twice");
    let unsupported = TieredLimiter::<Plan, u64, ManualClock>::builder()
        .tier(Plan::Free, Quota::per_second(1))
        .tier_with(
            Plan::Pro,
            Quota::per_second(1_000_000),
            AlgorithmKind::TokenBucket,
        )
        .build()
        .unwrap_err();
    assert!(
        unsupported
            .to_string()
            .starts_with("tier Pro: TokenBucket cannot run this quota"),
        "{unsupported}"
    );
}

#[test]
fn shared_settings_reach_every_tier() {
    let limits = TieredLimiter::<Plan, u64>::builder()
        .algorithm(AlgorithmKind::SlidingWindow)
        .clock(ManualClock::new())
        .shards(2)
        .max_keys(2)
        .tier(Plan::Free, Quota::per_hour(5))
        .tier_with(Plan::Pro, Quota::per_hour(5), AlgorithmKind::Gcra)
        .build()
        .unwrap();
    let kinds: Vec<_> = limits
        .tiers()
        .map(|(plan, l)| (*plan, l.algorithm(), l.shards()))
        .collect();
    assert_eq!(
        kinds,
        [
            (Plan::Free, AlgorithmKind::SlidingWindow, 2),
            (Plan::Pro, AlgorithmKind::Gcra, 2)
        ]
    );
    // max_keys applies per tier: one live key per shard. Of 64 keys, two find a free shard
    // (all 64 hashing to one shard has odds of 2^-63) and the others a full table.
    for plan in [Plan::Free, Plan::Pro] {
        let full = (0..64u64)
            .filter(|user| limits.check(&plan, user).unwrap().is_table_full())
            .count();
        assert_eq!(full, 62, "{plan:?}");
        assert_eq!(limits.tier(&plan).unwrap().len(), 2);
    }
}

#[test]
fn a_tier_is_a_backend() {
    let clock = ManualClock::new();
    let limits = plans(&clock);
    let pro: &dyn Backend<str> = limits.tier(&Plan::Pro).unwrap();
    assert_eq!(pro.quota(), Quota::per_minute(100));
    let decision = pro.check("bob").now().unwrap().unwrap();
    assert_eq!(decision.remaining(), 99);
    // The seam's check went to the tier: a peek now sees one unit spent.
    assert_eq!(limits.peek(&Plan::Pro, "bob").unwrap().remaining(), 98);
}
