//! ns per `check(&key)` of a keyed limiter, against governor's default keyed limiter (a
//! `DashMap` of states, on quanta's TSC clock).
//!
//! Groups (every function id is parameterised by the number of keys in the table):
//! - `keyed/u64/coarse`: every algorithm with `u64` keys and `CoarseClock`, at 1, 1,000,
//!   100,000 and 1,000,000 keys, plus `governor`;
//! - `keyed/u64/tsc`: GCRA on `TscClock` and `governor` (whose default clock is the TSC too),
//!   at 1,000 and 1,000,000 keys: the like-for-like clock, and the counterpart of
//!   `direct/allow/tsc`;
//! - `keyed/string`: `String` keys (checked by `&str`) at 100,000 keys;
//! - `keyed/insert`: the first check of a new key, amortized over growing a fresh table from
//!   empty to 1,000,000 keys;
//! - `keyed/hot_key`: one key checked over and over, beside the direct limiter's `check()`
//!   (`gcra_direct`), so the price of the keyed lookup can be read off;
//! - `keyed/batch`: `check_many` over slices of 256 keys of the same shuffled sequence
//!   (`gcra_many`), beside single checks of the same 1,000,000-key table (`gcra`).
//!
//! What is measured: checks of keys that are already in the table, on the allow path (quotas
//! far too large to run out), in a random order: a shuffled sequence of sixteen entries a key
//! (every key of the table, repeated; 2^12 to 2^20 entries) is built before timing and cycled
//! through, so the tables larger than the caches pay their cache misses, and small tables do
//! not pay for streaming a sequence far larger than themselves. Every table is built, and every key
//! inserted, once per benchmark function, outside the timed loop; the timed loop asserts that
//! every check was allowed. The checks of the loop are independent of one another, so the
//! CPU may overlap the cache misses of consecutive checks: this is throughput (what a server
//! checking a stream of requests sees), not the latency of one isolated check.
//!
//! Only the boolean a caller needs goes through `black_box`, as in `benches/direct.rs`.
//! Run with `cargo bench --bench keyed`; `scripts/bench_report.py` turns the results into
//! BENCHMARKS.md.

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, Bencher, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode,
    Throughput,
};
use governor::DefaultKeyedRateLimiter;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::{Clock, CoarseClock, TscClock};
use sluicegate::Algorithm;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::hash::Hash;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// Table sizes of `keyed/u64/coarse`.
const SIZES: [usize; 4] = [1, 1_000, 100_000, 1_000_000];
/// Length of the shuffled key sequence the timed loops cycle through: sixteen entries a key,
/// a power of two between 2^12 and 2^20. Streaming a longer sequence than the table needs
/// would itself cost a few ns a check (an 8 MiB sequence costs 7-12 ns on the 2-core VM).
fn sequence_len(keys: usize) -> usize {
    (keys * 16).next_power_of_two().clamp(1 << 12, 1 << 20)
}

// ---- Keys ---------------------------------------------------------------------------------

/// splitmix64's finalizer: a bijection, so `mix(0..n)` are `n` distinct, random-looking keys.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` distinct `u64` keys.
fn u64_keys(n: usize) -> Vec<u64> {
    (0..n as u64).map(mix).collect()
}

/// `n` distinct string keys of 21 bytes, `user:` and 16 hex digits.
fn string_keys(n: usize) -> Vec<String> {
    (0..n as u64)
        .map(|i| format!("user:{:016x}", mix(i)))
        .collect()
}

/// [`sequence_len`] keys: every key of `keys` (repeated to fill the sequence), in a random order
/// (a seeded Fisher-Yates shuffle). The keys are cloned in sequence order, so a `String`'s
/// bytes lie in allocation order, as a request's freshly parsed key would be at hand.
fn sequence<K: Clone>(keys: &[K]) -> Vec<K> {
    let len = sequence_len(keys.len());
    let mut order: Vec<u32> = (0..len).map(|i| (i % keys.len()) as u32).collect();
    let mut state = 0x5eed_u64;
    for i in (1..order.len()).rev() {
        state = state.wrapping_add(1);
        let j = (mix(state) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order.iter().map(|&i| keys[i as usize].clone()).collect()
}

// ---- The limiters -------------------------------------------------------------------------

/// A keyed limiter as the benches drive it.
trait KeyedCheck<K> {
    /// One check of `key`; only the boolean a caller needs goes through `black_box`.
    fn allowed(&self, key: &K) -> bool;

    /// The check that inserts `key` while the table is built: it must leave a state that
    /// stays non-fresh for the whole run, or the table could sweep the key when it grows and
    /// the timed loop would measure re-insertions.
    fn prime(&self, key: &K) -> bool {
        self.allowed(key)
    }

    /// Keys held.
    fn keys(&self) -> usize;
}

impl<A: Subject, C: Clock> KeyedCheck<u64> for KeyedLimiter<u64, A, C> {
    #[inline]
    fn allowed(&self, key: &u64) -> bool {
        black_box(self.check(key).is_allowed())
    }

    fn prime(&self, key: &u64) -> bool {
        self.check_n(key, A::PRIME_COST)
            .is_ok_and(|decision| decision.is_allowed())
    }

    fn keys(&self) -> usize {
        self.len()
    }
}

impl<C: Clock> KeyedCheck<String> for KeyedLimiter<String, Gcra, C> {
    #[inline]
    fn allowed(&self, key: &String) -> bool {
        black_box(self.check(key.as_str()).is_allowed())
    }

    fn prime(&self, key: &String) -> bool {
        self.check_n(key.as_str(), Gcra::PRIME_COST)
            .is_ok_and(|decision| decision.is_allowed())
    }

    fn keys(&self) -> usize {
        self.len()
    }
}

impl<K: Hash + Eq + Clone> KeyedCheck<K> for DefaultKeyedRateLimiter<K> {
    #[inline]
    fn allowed(&self, key: &K) -> bool {
        black_box(self.check_key(key).is_ok())
    }

    fn keys(&self) -> usize {
        self.len()
    }
}

// ---- Quotas -------------------------------------------------------------------------------

/// What each algorithm brings to the bench: its function name, a quota for the allow path
/// and how to insert its keys so that they stay.
trait Subject: Algorithm {
    const FUNCTION: &'static str;

    /// The cost of the check that inserts a key (see [`KeyedCheck::prime`]).
    const PRIME_COST: u32 = 1;

    /// Checks one key may take after its prime before a denial could come: a table is
    /// rebuilt (outside the timed loop) before its keys have taken that many on average.
    const BUDGET: u64;

    /// True when keys go fresh at once (so the table is sized for its keys up front, and
    /// never grows, hence never sweeps, while it is built).
    const PRESIZE: bool = false;

    /// A quota that keeps every check of a table of `keys` keys on the allow path; see
    /// `benches/direct.rs` for each algorithm's range.
    fn allow_quota(keys: usize) -> Quota;
}

impl Subject for Gcra {
    const FUNCTION: &'static str = "gcra";
    /// T = 9 years / 2^32 = 66 ms, so 2^20 units keep the key 19 hours.
    const PRIME_COST: u32 = 1 << 20;
    const BUDGET: u64 = 1 << 31;
    fn allow_quota(_keys: usize) -> Quota {
        quota(u32::MAX, Quota::MAX_PERIOD).with_burst(u32::MAX)
    }
}

impl Subject for LeakyBucket {
    const FUNCTION: &'static str = "leaky_bucket";
    const PRIME_COST: u32 = Gcra::PRIME_COST;
    const BUDGET: u64 = Gcra::BUDGET;
    fn allow_quota(keys: usize) -> Quota {
        Gcra::allow_quota(keys)
    }
}

impl Subject for TokenBucket {
    const FUNCTION: &'static str = "token_bucket";
    /// A token refills in 270 s: 2^10 of them keep the key 77 hours.
    const PRIME_COST: u32 = 1 << 10;
    const BUDGET: u64 = 1 << 30;
    fn allow_quota(_keys: usize) -> Quota {
        quota(1 << 20, Quota::MAX_PERIOD).with_burst(1 << 31)
    }
}

impl Subject for FixedWindow {
    const FUNCTION: &'static str = "fixed_window";
    /// The 9-year window keeps a count until its end.
    const BUDGET: u64 = 1 << 31;
    fn allow_quota(_keys: usize) -> Quota {
        quota(u32::MAX, Quota::MAX_PERIOD)
    }
}

impl Subject for SlidingWindow {
    const FUNCTION: &'static str = "sliding_window";
    const BUDGET: u64 = 1 << 28;
    fn allow_quota(_keys: usize) -> Quota {
        quota((1 << 29) - 1, Quota::MAX_PERIOD)
    }
}

impl Subject for SlidingLog {
    const FUNCTION: &'static str = "sliding_log";
    /// Entries expire as soon as the clock moves.
    const BUDGET: u64 = u64::MAX;
    const PRESIZE: bool = true;
    /// A ring per key, each entry expiring 1 ns after it is logged (as in `benches/direct.rs`),
    /// holding enough entries for every check of its key between two ticks of the coarse
    /// clock (~1 ms) or a late one: 2^22 / keys (~40 ms of checks at 10^8/s), at least 16.
    /// 1,000,000 keys then hold ~16 timestamps each (~180 MiB in all).
    fn allow_quota(keys: usize) -> Quota {
        let limit = ((1usize << 22) / keys).clamp(16, 1 << 22);
        quota(limit as u32, Duration::from_nanos(1))
    }
}

fn quota(limit: u32, period: Duration) -> Quota {
    Quota::new(limit, period).expect("bench quota is a valid Quota")
}

/// governor: 1 per ns with a burst of u32::MAX, which no run exhausts (see `benches/direct.rs`).
fn governor_allow_quota() -> governor::Quota {
    governor::Quota::per_second(NonZeroU32::MAX)
}

/// A keyed limiter of ours for `keys` keys, refusing loudly if the algorithm does not accept
/// the quota.
fn ours<K, A: Subject, C: Clock + Default>(keys: usize) -> KeyedLimiter<K, A, C>
where
    K: Hash + Eq + Clone + Send + Sync,
{
    let quota = A::allow_quota(keys);
    let builder = KeyedLimiter::<K, A, C>::builder(quota);
    let builder = if A::PRESIZE {
        builder.initial_capacity(keys)
    } else {
        builder
    };
    builder
        .build()
        .unwrap_or_else(|error| panic!("{} refuses the bench quota {quota}: {error}", A::FUNCTION))
}

fn governor<K: Hash + Eq + Clone>() -> DefaultKeyedRateLimiter<K> {
    governor::RateLimiter::keyed(governor_allow_quota())
}

// ---- Measurements -------------------------------------------------------------------------

/// Builds a table holding every key of `keys` (outside the timed region), then times checks
/// of the keys in the order of `sequence`, continuing where the previous timed call stopped.
/// The table is rebuilt (untimed) when its keys would otherwise exceed `budget` checks each.
/// The benchmark is `name/parameter`, or `name` without a parameter.
fn existing<K, L: KeyedCheck<K>>(
    group: &mut Group<'_>,
    name: &str,
    parameter: Option<usize>,
    make: impl Fn() -> L,
    budget: u64,
    keys: &[K],
    sequence: &[K],
) {
    assert!(sequence.len().is_power_of_two());
    let mask = sequence.len() - 1;
    let label = match parameter {
        Some(parameter) => format!("{name}/{parameter}"),
        None => name.to_owned(),
    };
    let build = || {
        let limiter = make();
        for key in keys {
            assert!(limiter.prime(key), "{label}: inserting a key was denied");
        }
        assert_eq!(
            limiter.keys(),
            keys.len(),
            "{label}: keys missing after building"
        );
        limiter
    };
    let budget = budget.saturating_mul(keys.len() as u64);
    // Built on the first call, outside the timed routine, so that a benchmark left out by a
    // filter builds nothing.
    let mut table: Option<L> = None;
    let mut used = 0u64;
    let mut cursor = 0usize;
    let mut routine = |b: &mut Bencher<'_>| {
        let limiter = table.get_or_insert_with(&build);
        b.iter_custom(|iters| {
            if used.saturating_add(iters) > budget {
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
            assert_eq!(allowed, iters, "{label}: allow-path bench hit a denial");
            elapsed
        })
    };
    match parameter {
        Some(parameter) => group.bench_function(BenchmarkId::new(name, parameter), &mut routine),
        None => group.bench_function(name, &mut routine),
    };
    if let Some(limiter) = table {
        let held = limiter.keys();
        assert_eq!(held, keys.len(), "{label}: keys lost while measuring");
    }
}

fn existing_ours<A: Subject, C: Clock + Default>(
    group: &mut Group<'_>,
    keys: &[u64],
    sequence: &[u64],
) {
    existing(
        group,
        A::FUNCTION,
        Some(keys.len()),
        || ours::<u64, A, C>(keys.len()),
        A::BUDGET,
        keys,
        sequence,
    );
}

fn existing_governor<K: Hash + Eq + Clone>(group: &mut Group<'_>, keys: &[K], sequence: &[K]) {
    existing(
        group,
        "governor",
        Some(keys.len()),
        governor::<K>,
        u64::MAX,
        keys,
        sequence,
    );
}

/// Like [`existing`] for our `Gcra` table, but through `check_many`, a slice of
/// [`BATCH`] keys of the sequence at a time; reported per key.
fn batched(group: &mut Group<'_>, keys: &[u64], sequence: &[u64]) {
    let n = keys.len();
    let build = || {
        let limiter = ours::<u64, Gcra, CoarseClock>(n);
        for key in keys {
            assert!(limiter.prime(key), "gcra_many: inserting a key was denied");
        }
        limiter
    };
    let budget = Gcra::BUDGET.saturating_mul(n as u64);
    let mut table = None;
    let (mut used, mut cursor) = (0u64, 0usize);
    group.bench_function(BenchmarkId::new("gcra_many", n), |b| {
        let limiter = table.get_or_insert_with(build);
        b.iter_custom(|iters| {
            let batches = iters.div_ceil(BATCH as u64);
            if used.saturating_add(batches * BATCH as u64) > budget {
                *limiter = build();
                used = 0;
            }
            used += batches * BATCH as u64;
            let mut allowed = 0u64;
            let start = Instant::now();
            for _ in 0..batches {
                let slice = &sequence[cursor..cursor + BATCH];
                allowed += limiter
                    .check_many(slice)
                    .iter()
                    .filter(|d| d.is_allowed())
                    .count() as u64;
                cursor = (cursor + BATCH) % sequence.len();
            }
            let elapsed = start.elapsed();
            assert_eq!(allowed, batches * BATCH as u64, "gcra_many: a denial");
            elapsed.mul_f64(iters as f64 / (batches * BATCH as u64) as f64)
        })
    });
}

/// Keys per `check_many` call in `keyed/batch`.
const BATCH: usize = 256;

/// Times the first check of each of `keys` on a fresh limiter: one call grows one or more
/// fresh tables from empty to `keys.len()` keys (building and dropping them untimed) and
/// reports the mean per insert over those whole growths, times `iters`. So each sample is
/// the amortized insert cost of complete growths, migrations included.
fn inserts<L: KeyedCheck<u64>>(
    group: &mut Group<'_>,
    name: &str,
    make: impl Fn() -> L,
    keys: &[u64],
) {
    let n = keys.len() as u64;
    group.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter_custom(|iters| {
            let growths = iters.div_ceil(n).max(1);
            let mut total = Duration::ZERO;
            for _ in 0..growths {
                let limiter = make();
                let mut allowed = 0u64;
                let start = Instant::now();
                for key in keys {
                    allowed += limiter.allowed(key) as u64;
                }
                total += start.elapsed();
                assert_eq!(allowed, n, "{name}: an insert was denied");
                assert_eq!(limiter.keys(), keys.len(), "{name}: keys missing");
                drop(limiter);
            }
            total.mul_f64(iters as f64 / (growths * n) as f64)
        })
    });
}

/// Times `check()` of a direct limiter, for the hot-key comparison.
fn direct<A: Subject, C: Clock + Default>(group: &mut Group<'_>, name: &str) {
    let quota = A::allow_quota(1);
    let make = || Limiter::<A, C>::new(quota).expect("bench quota is accepted");
    let mut limiter = make();
    let mut used = 0u64;
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            if used.saturating_add(iters) > A::BUDGET {
                limiter = make();
                used = 0;
            }
            used += iters;
            let mut allowed = 0u64;
            let start = Instant::now();
            for _ in 0..iters {
                allowed += black_box(limiter.check().is_allowed()) as u64;
            }
            let elapsed = start.elapsed();
            assert_eq!(allowed, iters, "{name}: allow-path bench hit a denial");
            elapsed
        })
    });
}

// ---- Groups -------------------------------------------------------------------------------

fn group<'a>(c: &'a mut Criterion, name: &str) -> Group<'a> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    group
}

fn u64_coarse(c: &mut Criterion) {
    let mut g = group(c, "keyed/u64/coarse");
    for n in SIZES {
        let keys = u64_keys(n);
        let sequence = sequence(&keys);
        existing_ours::<Gcra, CoarseClock>(&mut g, &keys, &sequence);
        existing_ours::<TokenBucket, CoarseClock>(&mut g, &keys, &sequence);
        existing_ours::<LeakyBucket, CoarseClock>(&mut g, &keys, &sequence);
        existing_ours::<FixedWindow, CoarseClock>(&mut g, &keys, &sequence);
        existing_ours::<SlidingWindow, CoarseClock>(&mut g, &keys, &sequence);
        existing_ours::<SlidingLog, CoarseClock>(&mut g, &keys, &sequence);
        existing_governor(&mut g, &keys, &sequence);
    }
    g.finish();
}

fn u64_tsc(c: &mut Criterion) {
    let mut g = group(c, "keyed/u64/tsc");
    for n in [1_000, 1_000_000] {
        let keys = u64_keys(n);
        let sequence = sequence(&keys);
        existing_ours::<Gcra, TscClock>(&mut g, &keys, &sequence);
        existing_governor(&mut g, &keys, &sequence);
    }
    g.finish();
}

fn string(c: &mut Criterion) {
    let mut g = group(c, "keyed/string");
    let keys = string_keys(100_000);
    let sequence = sequence(&keys);
    existing(
        &mut g,
        Gcra::FUNCTION,
        Some(keys.len()),
        || ours::<String, Gcra, CoarseClock>(keys.len()),
        Gcra::BUDGET,
        &keys,
        &sequence,
    );
    existing_governor(&mut g, &keys, &sequence);
    g.finish();
}

fn insert(c: &mut Criterion) {
    let mut g = group(c, "keyed/insert");
    // Each sample is at least one whole growth to 1,000,000 keys (~0.3-1 s with the untimed
    // build and drop): flat sampling, ten samples, and a warm-up of one growth.
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(8));
    let keys = u64_keys(1_000_000);
    // One check leaves a state for an hour, so growing never sweeps a key away.
    let per_hour = Quota::per_hour(1);
    inserts(
        &mut g,
        Gcra::FUNCTION,
        || KeyedLimiter::<u64, Gcra, CoarseClock>::new(per_hour).expect("valid quota"),
        &keys,
    );
    inserts(
        &mut g,
        "governor",
        || governor::RateLimiter::keyed(governor::Quota::per_hour(NonZeroU32::MIN)),
        &keys,
    );
    g.finish();
}

fn hot_key(c: &mut Criterion) {
    let mut g = group(c, "keyed/hot_key");
    let keys = u64_keys(1);
    let sequence = sequence(&keys);
    existing(
        &mut g,
        Gcra::FUNCTION,
        None,
        || ours::<u64, Gcra, CoarseClock>(1),
        Gcra::BUDGET,
        &keys,
        &sequence,
    );
    direct::<Gcra, CoarseClock>(&mut g, "gcra_direct");
    existing(
        &mut g,
        "governor",
        None,
        governor::<u64>,
        u64::MAX,
        &keys,
        &sequence,
    );
    g.finish();
}

fn batch(c: &mut Criterion) {
    let mut g = group(c, "keyed/batch");
    let keys = u64_keys(1_000_000);
    let sequence = sequence(&keys);
    batched(&mut g, &keys, &sequence);
    existing_ours::<Gcra, CoarseClock>(&mut g, &keys, &sequence);
    g.finish();
}

criterion_group! {
    name = benches;
    // 39 benchmarks at ~2.5 s each, building the tables and ~20 s of inserts: about 2 min 10 s
    // on the 2-core VM.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(30);
    targets = u64_coarse, u64_tsc, string, insert, hot_key, batch
}
criterion_main!(benches);
