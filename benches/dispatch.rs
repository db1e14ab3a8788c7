//! ns per check of the enum-dispatched limiters (`AnyLimiter`, `AnyKeyedLimiter`) beside the
//! generic ones they hold, in the same groups: the cost of choosing the algorithm at run
//! time (the target: at most 1 ns more per check).
//!
//! Groups (coarse clock throughout, so the clock read does not drown the difference):
//! - `dispatch/direct/{allow,deny}`: one `check()`;
//! - `dispatch/keyed/{allow,deny}`: `check(&key)` over a table of 1,000 `u64` keys, in a
//!   shuffled order, as `benches/keyed.rs` does.
//!
//! Function ids are `<algorithm>/generic` and `<algorithm>/any`. Quotas are those of
//! `benches/direct.rs` and `benches/keyed.rs` (see there why each algorithm needs its own);
//! every timed loop asserts that each check took the path it measures. Only the boolean a
//! caller needs goes through `black_box`. Run with `cargo bench --bench dispatch`.

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::CoarseClock;
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::policy::AlgorithmKind;
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::hint::black_box;
use std::time::{Duration, Instant};

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// Keys in the keyed groups.
const KEYS: usize = 1_000;

// ---- What is measured ---------------------------------------------------------------------

/// A direct limiter's `check()`, reporting only whether it was allowed.
trait Direct {
    fn allowed(&self) -> bool;
}

impl<A: Algorithm> Direct for Limiter<A, CoarseClock> {
    #[inline]
    fn allowed(&self) -> bool {
        black_box(self.check().is_allowed())
    }
}

impl Direct for AnyLimiter<CoarseClock> {
    #[inline]
    fn allowed(&self) -> bool {
        black_box(self.check().is_allowed())
    }
}

/// A keyed limiter's `check(&key)` (and the `check_n` that inserts a key to stay).
trait Keyed {
    fn allowed(&self, key: &u64) -> bool;
    fn prime(&self, key: &u64, cost: u32) -> bool;
    fn keys(&self) -> usize;
}

impl<A: Algorithm> Keyed for KeyedLimiter<u64, A, CoarseClock> {
    #[inline]
    fn allowed(&self, key: &u64) -> bool {
        black_box(self.check(key).is_allowed())
    }

    fn prime(&self, key: &u64, cost: u32) -> bool {
        self.check_n(key, cost).is_ok_and(|d| d.is_allowed())
    }

    fn keys(&self) -> usize {
        self.len()
    }
}

impl Keyed for AnyKeyedLimiter<u64, CoarseClock> {
    #[inline]
    fn allowed(&self, key: &u64) -> bool {
        black_box(self.check(key).is_allowed())
    }

    fn prime(&self, key: &u64, cost: u32) -> bool {
        self.check_n(key, cost).is_ok_and(|d| d.is_allowed())
    }

    fn keys(&self) -> usize {
        self.len()
    }
}

// ---- Quotas -------------------------------------------------------------------------------

/// Each algorithm's name, kind and allow-path quotas (those of `benches/direct.rs` and
/// `benches/keyed.rs`).
trait Subject: Algorithm {
    const FUNCTION: &'static str;
    const KIND: AlgorithmKind;
    /// The cost of the check that inserts a key, so it stays non-fresh (never swept).
    const PRIME_COST: u32 = 1;
    /// Checks a key may take after its prime before a denial could come.
    const BUDGET: u64;
    /// Keys go fresh at once: size the table up front so it never grows (and sweeps).
    const PRESIZE: bool = false;
    fn direct_quota() -> Quota;
    fn keyed_quota() -> Quota {
        Self::direct_quota()
    }
}

impl Subject for Gcra {
    const FUNCTION: &'static str = "gcra";
    const KIND: AlgorithmKind = AlgorithmKind::Gcra;
    const PRIME_COST: u32 = 1 << 20;
    const BUDGET: u64 = 1 << 31;
    fn direct_quota() -> Quota {
        quota(u32::MAX, Quota::MAX_PERIOD).with_burst(u32::MAX)
    }
}

impl Subject for LeakyBucket {
    const FUNCTION: &'static str = "leaky_bucket";
    const KIND: AlgorithmKind = AlgorithmKind::LeakyBucket;
    const PRIME_COST: u32 = 1 << 20;
    const BUDGET: u64 = 1 << 31;
    fn direct_quota() -> Quota {
        Gcra::direct_quota()
    }
}

impl Subject for TokenBucket {
    const FUNCTION: &'static str = "token_bucket";
    const KIND: AlgorithmKind = AlgorithmKind::TokenBucket;
    const PRIME_COST: u32 = 1 << 10;
    const BUDGET: u64 = 1 << 30;
    fn direct_quota() -> Quota {
        quota(1 << 20, Quota::MAX_PERIOD).with_burst(1 << 31)
    }
}

impl Subject for FixedWindow {
    const FUNCTION: &'static str = "fixed_window";
    const KIND: AlgorithmKind = AlgorithmKind::FixedWindow;
    const BUDGET: u64 = 1 << 31;
    fn direct_quota() -> Quota {
        quota(u32::MAX, Quota::MAX_PERIOD)
    }
}

impl Subject for SlidingWindow {
    const FUNCTION: &'static str = "sliding_window";
    const KIND: AlgorithmKind = AlgorithmKind::SlidingWindow;
    const BUDGET: u64 = 1 << 28;
    fn direct_quota() -> Quota {
        quota((1 << 29) - 1, Quota::MAX_PERIOD)
    }
}

impl Subject for SlidingLog {
    const FUNCTION: &'static str = "sliding_log";
    const KIND: AlgorithmKind = AlgorithmKind::SlidingLog;
    const BUDGET: u64 = u64::MAX;
    const PRESIZE: bool = true;
    /// Entries expire 1 ns after they are logged; the ring covers a coarse tick of checks.
    fn direct_quota() -> Quota {
        quota(1 << 22, Duration::from_nanos(1))
    }
    fn keyed_quota() -> Quota {
        quota(((1 << 22) / KEYS) as u32, Duration::from_nanos(1))
    }
}

/// Deny path: one admission per 9-year window, then every check is denied.
fn deny_quota() -> Quota {
    quota(1, Quota::MAX_PERIOD)
}

fn quota(limit: u32, period: Duration) -> Quota {
    Quota::new(limit, period).expect("bench quota is a valid Quota")
}

// ---- Keys ---------------------------------------------------------------------------------

/// splitmix64's finalizer: a bijection, so `mix(0..n)` are distinct, random-looking keys.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Every key sixteen times, in a seeded random order (16,384 entries).
fn sequence(keys: &[u64]) -> Vec<u64> {
    let len = (keys.len() * 16).next_power_of_two();
    let mut order: Vec<u64> = (0..len).map(|i| keys[i % keys.len()]).collect();
    let mut state = 0x5eed_u64;
    for i in (1..order.len()).rev() {
        state = state.wrapping_add(1);
        order.swap(i, (mix(state) % (i as u64 + 1)) as usize);
    }
    order
}

// ---- Direct -------------------------------------------------------------------------------

/// Times `iters` checks on a fresh limiter, all of which must be allowed.
fn direct_allow<L: Direct>(group: &mut Group<'_>, id: BenchmarkId, make: impl Fn() -> L) {
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let limiter = make();
            let start = Instant::now();
            let mut allowed = 0u64;
            for _ in 0..iters {
                allowed += limiter.allowed() as u64;
            }
            let elapsed = start.elapsed();
            assert_eq!(allowed, iters, "allow-path bench hit a denial");
            elapsed
        })
    });
}

/// Exhausts a limiter with one check, then times checks that are all denied.
fn direct_deny<L: Direct>(group: &mut Group<'_>, id: BenchmarkId, limiter: L) {
    assert!(limiter.allowed(), "the first check must be allowed");
    assert!(!limiter.allowed(), "deny-path bench is not denying");
    group.bench_function(id, |b| b.iter(|| limiter.allowed()));
}

fn direct_pair<A: Subject>(allow: bool, group: &mut Group<'_>, clock: &CoarseClock) {
    let quota = if allow {
        A::direct_quota()
    } else {
        deny_quota()
    };
    let generic = || Limiter::<A, CoarseClock>::with_clock(quota, clock.clone()).unwrap();
    let any = || AnyLimiter::with_clock(quota, <A as Subject>::KIND, clock.clone()).unwrap();
    let id = |how| BenchmarkId::new(A::FUNCTION, how);
    if allow {
        direct_allow(group, id("generic"), generic);
        direct_allow(group, id("any"), any);
    } else {
        direct_deny(group, id("generic"), generic());
        direct_deny(group, id("any"), any());
    }
}

// ---- Keyed --------------------------------------------------------------------------------

/// Builds a table holding every key (primed to stay), then times checks in the order of
/// `sequence`, continuing where the previous timed call stopped. The table is rebuilt
/// (untimed) before its keys could exceed `budget` checks each; every check must go the
/// expected way.
fn keyed<L: Keyed>(
    group: &mut Group<'_>,
    id: BenchmarkId,
    make: impl Fn() -> L,
    (prime_cost, budget, allow): (u32, u64, bool),
    keys: &[u64],
    sequence: &[u64],
) {
    let mask = sequence.len() - 1;
    let build = || {
        let limiter = make();
        for key in keys {
            assert!(limiter.prime(key, prime_cost), "inserting a key was denied");
        }
        assert_eq!(limiter.keys(), keys.len(), "keys missing after building");
        limiter
    };
    let budget = budget.saturating_mul(keys.len() as u64);
    let (mut table, mut used, mut cursor): (Option<L>, u64, usize) = (None, 0, 0);
    group.bench_function(id, |b| {
        let limiter = table.get_or_insert_with(&build);
        b.iter_custom(|iters| {
            if allow && used.saturating_add(iters) > budget {
                *limiter = build();
                used = 0;
            }
            used += iters;
            let mut i = cursor;
            let mut allowed = 0u64;
            let start = Instant::now();
            for _ in 0..iters {
                allowed += limiter.allowed(&sequence[i & mask]) as u64;
                i = i.wrapping_add(1);
            }
            let elapsed = start.elapsed();
            cursor = i;
            let expected = if allow { iters } else { 0 };
            assert_eq!(allowed, expected, "a check took the other path");
            elapsed
        })
    });
}

fn keyed_pair<A: Subject>(allow: bool, group: &mut Group<'_>, keys: &[u64], sequence: &[u64]) {
    let quota = if allow {
        A::keyed_quota()
    } else {
        deny_quota()
    };
    let presize = if A::PRESIZE { 4 * KEYS } else { 0 };
    let generic = || {
        KeyedLimiter::<u64, A, CoarseClock>::builder(quota)
            .initial_capacity(presize)
            .build()
            .unwrap()
    };
    let any = || {
        AnyKeyedLimiter::<u64, CoarseClock>::builder(quota, <A as Subject>::KIND)
            .initial_capacity(presize)
            .build()
            .unwrap()
    };
    let prime = if allow { A::PRIME_COST } else { 1 };
    let run = (prime, A::BUDGET, allow);
    let id = |how| BenchmarkId::new(A::FUNCTION, how);
    keyed(group, id("generic"), generic, run, keys, sequence);
    keyed(group, id("any"), any, run, keys, sequence);
}

// ---- Groups -------------------------------------------------------------------------------

fn group<'a>(c: &'a mut Criterion, name: &str) -> Group<'a> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    group
}

fn direct(c: &mut Criterion) {
    let clock = CoarseClock::default();
    for (allow, name) in [
        (true, "dispatch/direct/allow"),
        (false, "dispatch/direct/deny"),
    ] {
        let mut g = group(c, name);
        direct_pair::<Gcra>(allow, &mut g, &clock);
        direct_pair::<TokenBucket>(allow, &mut g, &clock);
        direct_pair::<LeakyBucket>(allow, &mut g, &clock);
        direct_pair::<FixedWindow>(allow, &mut g, &clock);
        direct_pair::<SlidingWindow>(allow, &mut g, &clock);
        direct_pair::<SlidingLog>(allow, &mut g, &clock);
        g.finish();
    }
}

fn keyed_groups(c: &mut Criterion) {
    let keys: Vec<u64> = (0..KEYS as u64).map(mix).collect();
    let sequence = sequence(&keys);
    for (allow, name) in [
        (true, "dispatch/keyed/allow"),
        (false, "dispatch/keyed/deny"),
    ] {
        let mut g = group(c, name);
        keyed_pair::<Gcra>(allow, &mut g, &keys, &sequence);
        keyed_pair::<TokenBucket>(allow, &mut g, &keys, &sequence);
        keyed_pair::<LeakyBucket>(allow, &mut g, &keys, &sequence);
        keyed_pair::<FixedWindow>(allow, &mut g, &keys, &sequence);
        keyed_pair::<SlidingWindow>(allow, &mut g, &keys, &sequence);
        keyed_pair::<SlidingLog>(allow, &mut g, &keys, &sequence);
        g.finish();
    }
}

criterion_group! {
    name = benches;
    // 48 benchmarks at ~2 s each: about 2 minutes on the 2-core VM.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(30);
    targets = direct, keyed_groups
}
criterion_main!(benches);
