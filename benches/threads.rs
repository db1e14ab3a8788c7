//! Aggregate checks per second with several threads checking at once: 1 and 2 threads, and 4,
//! 8 and 16 where the machine has that many cores (`std::thread::available_parallelism`).
//!
//! Groups (function ids are parameterised by the thread count):
//! - `threads/distinct_keys`: `KeyedLimiter<u64, Gcra, CoarseClock>` and governor's default
//!   keyed limiter, each thread checking its own range of 1,024 keys (in the table before
//!   timing starts). Two more rows show where the scaling goes: `gcra_peek` (the same table,
//!   `peek` instead of `check`: nothing written) and `gcra_private` (each thread its own table
//!   of its own keys: nothing shared);
//! - `threads/shared_key`: the same limiters, every thread checking one key (one contended
//!   state word);
//! - `threads/direct`: one shared `Limiter<Gcra, CoarseClock>` and governor's default direct
//!   limiter;
//! - `threads/random_1m_keys`: the same keyed limiters holding 1M keys (`mix(0..2^20)`), thread
//!   `t` of `n` checking random keys `mix(i)` of its own interleaved share (`i % n == t`), so
//!   no key is checked by two threads but most cache lines hold keys of several. The same
//!   `gcra_peek` and `gcra_private` rows (each thread its own table of its share: no line
//!   shared) show what writing costs and what sharing lines costs;
//! - `threads/random_64k_keys`: the same with 64K keys, a table that stays in the last-level
//!   cache, where a line another core wrote is fetched from that core (the steadiest measure
//!   of what sharing lines costs on a noisy VM).
//!
//! governor runs on its default clock (quanta's TSC clock) throughout, as in `benches/keyed.rs`.
//!
//! One criterion iteration is one round in which every thread does one check, and the group's
//! `Throughput::Elements(threads)` turns that into checks per second in aggregate (and
//! `scripts/bench_report.py` into wall time per check). A timed call spawns the threads, lines
//! them up on a `Barrier`, has each do `iters` checks (all on the allow path, asserted), and
//! returns the wall time from the first thread's start to the last one's end.
//!
//! Run with `cargo bench --bench threads`.

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter};
use sluicegate::algorithm::Gcra;
use sluicegate::clock::CoarseClock;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::Barrier;
use std::time::{Duration, Instant};

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// Keys each thread cycles through in `threads/distinct_keys` (a power of two).
const KEYS_PER_THREAD: usize = 1024;

/// Which keys the threads check.
#[derive(Clone, Copy)]
enum Keys<'a> {
    /// Thread `t` cycles through `ranges[t]` in order.
    Cycle(&'a [Vec<u64>]),
    /// Thread `t` of `n` checks random keys `mix(i)`, `i < keys` (a power of two),
    /// `i % n == t`.
    Random { keys: u64 },
}

impl Keys<'_> {
    /// Puts every key `threads` threads will check into `limiter`, each by its thread.
    fn prime<L: Check>(self, limiter: &L, threads: usize, name: &str) {
        let prime = |thread, key| {
            assert!(limiter.prime(thread, &key), "{name}: priming was denied");
        };
        match self {
            Keys::Cycle(ranges) => {
                for (thread, range) in ranges[..threads].iter().enumerate() {
                    range.iter().for_each(|&key| prime(thread, key));
                }
            }
            Keys::Random { keys } => {
                for i in 0..keys {
                    prime(i as usize % threads, mix(i));
                }
            }
        }
    }

    /// Thread `thread` of `threads` checking `iters` keys; returns how many were allowed.
    #[inline]
    fn drive<L: Check>(self, limiter: &L, thread: usize, threads: usize, iters: u64) -> u64 {
        let mut allowed = 0u64;
        match self {
            Keys::Cycle(ranges) => {
                let keys = &ranges[thread];
                assert_eq!(keys.len(), KEYS_PER_THREAD);
                for i in 0..iters as usize {
                    allowed += limiter.allowed(thread, &keys[i & (KEYS_PER_THREAD - 1)]) as u64;
                }
            }
            Keys::Random { keys } => {
                let share = keys / threads as u64;
                // xorshift64, seeded per thread; never zero.
                let mut state = 0x9e37_79b9_7f4a_7c15 ^ (thread as u64 + 1);
                for _ in 0..iters {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    // `state * share / 2^64`: uniform below `share` without a division.
                    let index = ((u128::from(state) * u128::from(share)) >> 64) as u64;
                    let key = mix(index * threads as u64 + thread as u64);
                    allowed += limiter.allowed(thread, &key) as u64;
                }
            }
        }
        allowed
    }
}

/// 1 and 2, then 4, 8 and 16 as far as the machine has cores.
fn thread_counts() -> Vec<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    [1, 2, 4, 8, 16]
        .into_iter()
        .filter(|&threads| threads <= 2 || threads <= cores)
        .collect()
}

/// splitmix64's finalizer: a bijection, so `mix(0..n)` are `n` distinct keys.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

// ---- The limiters -------------------------------------------------------------------------

type Keyed = KeyedLimiter<u64, Gcra, CoarseClock>;
type Direct = Limiter<Gcra, CoarseClock>;

/// A limiter as the threads drive it: one check of `key` (ignored by direct limiters), of
/// which only the boolean a caller needs goes through `black_box`.
/// `thread` is the checking thread's index (only private tables use it).
trait Check: Sync {
    fn allowed(&self, thread: usize, key: &u64) -> bool;

    /// The check that inserts a key before timing, leaving a state that stays for hours (so
    /// no growth of the table sweeps it).
    fn prime(&self, thread: usize, key: &u64) -> bool {
        self.allowed(thread, key)
    }
}

impl Check for Keyed {
    #[inline]
    fn allowed(&self, _thread: usize, key: &u64) -> bool {
        black_box(self.check(key).is_allowed())
    }

    fn prime(&self, _thread: usize, key: &u64) -> bool {
        // 2^20 emission intervals of 66 ms: 19 hours.
        self.check_n(key, 1 << 20)
            .is_ok_and(|decision| decision.is_allowed())
    }
}

/// The shared table read only: what the threads' reads alone cost.
struct Peeking(Keyed);

impl Check for Peeking {
    #[inline]
    fn allowed(&self, _thread: usize, key: &u64) -> bool {
        black_box(self.0.peek(key).is_allowed())
    }

    fn prime(&self, thread: usize, key: &u64) -> bool {
        self.0.prime(thread, key)
    }
}

/// One table per thread: what the engine does with no line shared between threads.
struct Private(Vec<Keyed>);

impl Check for Private {
    #[inline]
    fn allowed(&self, thread: usize, key: &u64) -> bool {
        Check::allowed(&self.0[thread], thread, key)
    }

    fn prime(&self, thread: usize, key: &u64) -> bool {
        self.0[thread].prime(thread, key)
    }
}

impl Check for DefaultKeyedRateLimiter<u64> {
    #[inline]
    fn allowed(&self, _thread: usize, key: &u64) -> bool {
        black_box(self.check_key(key).is_ok())
    }
}

impl Check for Direct {
    #[inline]
    fn allowed(&self, _thread: usize, _key: &u64) -> bool {
        black_box(self.check().is_allowed())
    }
}

impl Check for DefaultDirectRateLimiter {
    #[inline]
    fn allowed(&self, _thread: usize, _key: &u64) -> bool {
        black_box(self.check().is_ok())
    }
}

/// GCRA admitting 2^32 checks at once (see `benches/direct.rs`): the allow path throughout.
fn allow_quota() -> Quota {
    Quota::new(u32::MAX, Quota::MAX_PERIOD)
        .expect("valid quota")
        .with_burst(u32::MAX)
}

/// Checks one state may take before the table is rebuilt (a margin below its 2^32 burst).
const BUDGET: u64 = 1 << 31;

/// governor: 1 per ns, burst u32::MAX; never exhausted by a run.
fn governor_allow_quota() -> governor::Quota {
    governor::Quota::per_second(NonZeroU32::MAX)
}

// ---- Measurement --------------------------------------------------------------------------

/// `threads` threads checking `keys` on the limiter `make` builds.
fn bench<L: Check>(
    group: &mut Group<'_>,
    name: &str,
    threads: usize,
    make: impl Fn() -> L,
    keys: Keys<'_>,
) {
    let build = || {
        let limiter = make();
        keys.prime(&limiter, threads, name);
        limiter
    };
    let mut limiter = build();
    let mut used = 0u64;
    group.throughput(Throughput::Elements(threads as u64));
    group.bench_function(BenchmarkId::new(name, threads), |b| {
        b.iter_custom(|iters| {
            // Every check might land on one state (the shared key, the direct limiter).
            let checks = iters.saturating_mul(threads as u64);
            if used.saturating_add(checks) > BUDGET {
                limiter = build();
                used = 0;
            }
            used += checks;
            run(&limiter, keys, threads, iters)
        })
    });
}

/// Spawns `threads` threads, starts them together, and returns the wall time from the first
/// start to the last end of `iters` checks each.
fn run<L: Check>(limiter: &L, keys: Keys<'_>, threads: usize, iters: u64) -> Duration {
    let barrier = Barrier::new(threads);
    let barrier = &barrier;
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                scope.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    let allowed = keys.drive(limiter, thread, threads, iters);
                    let end = Instant::now();
                    assert_eq!(allowed, iters, "threads bench hit a denial");
                    (start, end)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("bench thread panicked"))
            .collect()
    });
    let start = spans.iter().map(|span| span.0).min().expect("one thread");
    let end = spans.iter().map(|span| span.1).max().expect("one thread");
    end - start
}

// ---- Groups -------------------------------------------------------------------------------

fn threads(c: &mut Criterion) {
    let counts = thread_counts();
    let max = *counts.last().expect("at least one thread count");
    let ours = || Keyed::new(allow_quota()).expect("valid quota");
    let governor = || governor::RateLimiter::keyed(governor_allow_quota());

    // Each thread its own 1,024 keys.
    let distinct: Vec<Vec<u64>> = (0..max)
        .map(|t| {
            (0..KEYS_PER_THREAD)
                .map(|i| mix((t * KEYS_PER_THREAD + i) as u64))
                .collect()
        })
        .collect();
    // Every thread the same key.
    let shared: Vec<Vec<u64>> = vec![vec![mix(0); KEYS_PER_THREAD]; max];
    let shared = Keys::Cycle(&shared);

    let distinct = Keys::Cycle(&distinct);
    let mut g = c.benchmark_group("threads/distinct_keys");
    for &threads in &counts {
        bench(&mut g, "gcra", threads, ours, distinct);
        bench(&mut g, "gcra_peek", threads, || Peeking(ours()), distinct);
        let private = || Private((0..threads).map(|_| ours()).collect());
        bench(&mut g, "gcra_private", threads, private, distinct);
        bench(&mut g, "governor", threads, governor, distinct);
    }
    g.finish();

    let mut g = c.benchmark_group("threads/shared_key");
    for &threads in &counts {
        bench(&mut g, "gcra", threads, ours, shared);
        bench(&mut g, "governor", threads, governor, shared);
    }
    g.finish();

    let mut g = c.benchmark_group("threads/direct");
    for &threads in &counts {
        bench(
            &mut g,
            "gcra",
            threads,
            || Direct::new(allow_quota()).expect("valid quota"),
            shared,
        );
        bench(
            &mut g,
            "governor",
            threads,
            || governor::RateLimiter::direct(governor_allow_quota()),
            shared,
        );
    }
    g.finish();

    // Each thread checking random keys of its own share: 1M keys (mostly beyond the caches),
    // and 64K (1.3 MB of slots: in the last-level cache, where sharing lines costs most).
    for (name, keys) in [("random_1m_keys", 1 << 20), ("random_64k_keys", 1 << 16)] {
        let keys = Keys::Random { keys };
        let mut g = c.benchmark_group(format!("threads/{name}"));
        for &threads in &counts {
            bench(&mut g, "gcra", threads, ours, keys);
            bench(&mut g, "gcra_peek", threads, || Peeking(ours()), keys);
            let private = || Private((0..threads).map(|_| ours()).collect());
            bench(&mut g, "gcra_private", threads, private, keys);
            bench(&mut g, "governor", threads, governor, keys);
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    // 32 benchmarks at ~2.2 s each on a 2-core machine (80 on a 16-core one), plus building
    // the 1M-key tables: 1.5-4 minutes.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(30);
    targets = threads
}
criterion_main!(benches);
