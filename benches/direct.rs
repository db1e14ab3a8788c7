//! ns per `check()` of a direct limiter: every algorithm against governor's direct limiter,
//! on the allow path and the deny path, with a precise clock (TSC) and a coarse one (an
//! atomic kept fresh by an upkeep thread).
//!
//! Groups: `direct/{allow,deny}/{tsc,coarse}`; functions: one per algorithm, plus `governor`.
//! Run with `cargo bench --bench direct`; `scripts/bench_report.py` turns the results into
//! BENCHMARKS.md.

use criterion::measurement::WallTime;
use criterion::{criterion_group, BenchmarkGroup, Criterion, Throughput};
use governor::clock::QuantaUpkeepClock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::{Clock, CoarseClock, TscClock};
use sluicegate::Algorithm;
use sluicegate::{Limiter, Quota};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// One `check()`, reporting whether it was allowed. Only that boolean goes through `black_box`:
/// it is all a caller needs, so the bench pays for what a caller pays for (black-boxing the
/// whole `Decision` would force its lazily derived fields to be materialized).
trait Check {
    fn allowed(&self) -> bool;
}

impl<A: Algorithm, C: Clock> Check for Limiter<A, C> {
    // Always inlined, as `check()` itself is into a caller's code: the bench then measures
    // the check, not whether the compiler chose to inline this wrapper.
    #[inline(always)]
    fn allowed(&self) -> bool {
        black_box(self.check().is_allowed())
    }
}

type Governor<GC> = governor::RateLimiter<
    NotKeyed,
    InMemoryState,
    GC,
    NoOpMiddleware<<GC as governor::clock::Clock>::Instant>,
>;

impl<GC: governor::clock::Clock> Check for Governor<GC> {
    // Always inlined, as `check()` itself is into a caller's code: the bench then measures
    // the check, not whether the compiler chose to inline this wrapper.
    #[inline(always)]
    fn allowed(&self) -> bool {
        black_box(self.check().is_ok())
    }
}

// ---- Quotas -------------------------------------------------------------------------------

/// What each algorithm brings to the bench: its function name in every group, and a quota for
/// the allow path.
trait Subject: Algorithm {
    const FUNCTION: &'static str;

    /// A quota that admits every check one timed call makes (at most ~10^8, the last warm-up
    /// call) from a fresh state, even if the clock did not move at all, so the measured loop
    /// never takes a denial. Each algorithm bounds the quotas it accepts (see its header in
    /// src/algorithm/), hence one per algorithm.
    fn allow_quota() -> Quota;
}

impl Subject for Gcra {
    const FUNCTION: &'static str = "gcra";
    /// Any quota whose full refill fits in 146 years: the largest burst there is (4.29e9
    /// checks) over the longest period.
    fn allow_quota() -> Quota {
        quota(u32::MAX, Quota::MAX_PERIOD).with_burst(u32::MAX)
    }
}

impl Subject for LeakyBucket {
    const FUNCTION: &'static str = "leaky_bucket";
    /// The same range as GCRA (same emission core).
    fn allow_quota() -> Quota {
        Gcra::allow_quota()
    }
}

impl Subject for TokenBucket {
    const FUNCTION: &'static str = "token_bucket";
    /// Needs `burst * limit <= ~period_ns / 8` (2^55 here): a 2^31 burst (2.1e9 checks)
    /// refilling at 2^20 per period.
    fn allow_quota() -> Quota {
        quota(1 << 20, Quota::MAX_PERIOD).with_burst(1 << 31)
    }
}

impl Subject for FixedWindow {
    const FUNCTION: &'static str = "fixed_window";
    /// Admits `limit` per window: 4.29e9 per 9-year window.
    fn allow_quota() -> Quota {
        quota(u32::MAX, Quota::MAX_PERIOD)
    }
}

impl Subject for SlidingWindow {
    const FUNCTION: &'static str = "sliding_window";
    /// Packs two counts beside the window index (`period_ns >= ~limit^2 / 4`): 2^29 - 1
    /// (5.4e8) is the largest limit it runs, as two 30-bit counts leave too few index bits
    /// even for the longest period.
    fn allow_quota() -> Quota {
        quota((1 << 29) - 1, Quota::MAX_PERIOD)
    }
}

impl Subject for SlidingLog {
    const FUNCTION: &'static str = "sliding_log";
    /// Stores one timestamp per admission in a ring of `limit` slots (at most 2^24), so rather
    /// than a huge limit it gets a 1 ns period: every entry expires as soon as the clock moves.
    /// The coarse clock moves only every ~1 ms, so the limit must cover every check of one
    /// tick, or of a late tick: 2^22 (a 32 MiB ring) is ~40 ms of checks at 10^8/s.
    fn allow_quota() -> Quota {
        quota(1 << 22, Duration::from_nanos(1))
    }
}

/// Deny path: one admission, then every check is denied. The period is the longest there is
/// because the window algorithms align windows to wall-clock multiples of it: with an hour,
/// a run crossing the hour would see an admission; the next 9-year edge is years away.
fn deny_quota() -> Quota {
    quota(1, Quota::MAX_PERIOD)
}

fn quota(limit: u32, period: Duration) -> Quota {
    Quota::new(limit, period).expect("bench quota is a valid Quota")
}

/// governor: 1 per ns with a burst of u32::MAX (`per_second(u32::MAX)`: governor clamps the
/// 0.23 ns replenish interval to 1 ns), which admits over 4e9 checks even on a frozen clock.
fn governor_allow_quota() -> governor::Quota {
    governor::Quota::per_second(NonZeroU32::MAX)
}

/// governor has no wall-clock windows, so an hour is plenty for a run of a few seconds.
fn governor_deny_quota() -> governor::Quota {
    governor::Quota::per_hour(NonZeroU32::MIN)
}

// ---- The two paths ------------------------------------------------------------------------

/// Times `iters` checks on a fresh limiter (built outside the timed region), asserting that
/// every one of them was allowed: a denial would measure the other path.
fn allow<L: Check>(group: &mut Group<'_>, name: &str, make: impl Fn() -> L) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let limiter = make();
            let start = Instant::now();
            let mut allowed = 0u64;
            for _ in 0..iters {
                allowed += limiter.allowed() as u64;
            }
            let elapsed = start.elapsed();
            assert_eq!(allowed, iters, "{name}: allow-path bench hit a denial");
            elapsed
        })
    });
}

/// Exhausts a fresh limiter with one check, then times checks that are all denied.
fn deny<L: Check>(group: &mut Group<'_>, name: &str, make: impl Fn() -> L) {
    let limiter = make();
    assert!(limiter.allowed(), "{name}: the first check must be allowed");
    assert!(!limiter.allowed(), "{name}: deny-path bench is not denying");
    group.bench_function(name, |b| b.iter(|| limiter.allowed()));
}

/// A builder of our limiters, refusing loudly if the algorithm does not accept the quota.
fn ours<A: Subject, C: Clock>(quota: Quota, clock: &C) -> impl Fn() -> Limiter<A, C> + '_ {
    move || {
        Limiter::with_clock(quota, clock.clone()).unwrap_or_else(|error| {
            panic!("{} refuses the bench quota {quota}: {error}", A::FUNCTION)
        })
    }
}

fn allow_ours<A: Subject, C: Clock>(group: &mut Group<'_>, clock: &C) {
    allow(group, A::FUNCTION, ours::<A, C>(A::allow_quota(), clock));
}

fn deny_ours<A: Subject, C: Clock>(group: &mut Group<'_>, clock: &C) {
    deny(group, A::FUNCTION, ours::<A, C>(deny_quota(), clock));
}

// ---- Groups -------------------------------------------------------------------------------

fn group<'a>(c: &'a mut Criterion, name: &str) -> Group<'a> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    group
}

fn allow_group<C: Clock, G: Check>(
    c: &mut Criterion,
    clock_name: &str,
    clock: C,
    governor: impl Fn() -> G,
) {
    let mut g = group(c, &format!("direct/allow/{clock_name}"));
    allow_ours::<Gcra, _>(&mut g, &clock);
    allow_ours::<TokenBucket, _>(&mut g, &clock);
    allow_ours::<LeakyBucket, _>(&mut g, &clock);
    allow_ours::<FixedWindow, _>(&mut g, &clock);
    allow_ours::<SlidingWindow, _>(&mut g, &clock);
    allow_ours::<SlidingLog, _>(&mut g, &clock);
    allow(&mut g, "governor", governor);
    g.finish();
}

fn deny_group<C: Clock, G: Check>(
    c: &mut Criterion,
    clock_name: &str,
    clock: C,
    governor: impl Fn() -> G,
) {
    let mut g = group(c, &format!("direct/deny/{clock_name}"));
    deny_ours::<Gcra, _>(&mut g, &clock);
    deny_ours::<TokenBucket, _>(&mut g, &clock);
    deny_ours::<LeakyBucket, _>(&mut g, &clock);
    deny_ours::<FixedWindow, _>(&mut g, &clock);
    deny_ours::<SlidingWindow, _>(&mut g, &clock);
    deny_ours::<SlidingLog, _>(&mut g, &clock);
    deny(&mut g, "governor", governor);
    g.finish();
}

fn direct(c: &mut Criterion) {
    // governor's coarse counterpart of CoarseClock: quanta's `recent()`, refreshed every 1 ms
    // by quanta's upkeep thread. Only one such thread may run per process, so it is built once
    // and cloned (it stops when the last clone is dropped).
    let governor_coarse = QuantaUpkeepClock::from_interval(Duration::from_millis(1))
        .expect("start quanta's upkeep thread");

    // tsc: governor's default clock reads quanta's TSC clock, as TscClock does.
    allow_group(c, "tsc", TscClock::new(), || {
        governor::RateLimiter::direct(governor_allow_quota())
    });
    allow_group(c, "coarse", CoarseClock::default(), || {
        governor::RateLimiter::direct_with_clock(governor_allow_quota(), governor_coarse.clone())
    });
    deny_group(c, "tsc", TscClock::new(), || {
        governor::RateLimiter::direct(governor_deny_quota())
    });
    deny_group(c, "coarse", CoarseClock::default(), || {
        governor::RateLimiter::direct_with_clock(governor_deny_quota(), governor_coarse.clone())
    });
}

criterion_group! {
    name = benches;
    // 28 benchmarks at ~3 s each (plus analysis): about 2-3 minutes on the 2-core VM.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(800))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50);
    targets = direct
}

/// `cargo bench --bench direct -- profile <allow|deny> <algorithm> <checks>`: that many checks
/// of one limiter on the coarse clock in `timed_loop`, for
/// `valgrind --tool=callgrind --toggle-collect='*timed_loop*'` (instructions per check = the
/// count over `checks`). Otherwise, criterion's benches.
fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("profile") {
        return profile(&args[1..]);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

fn profile(args: &[String]) {
    let usage = "profile <allow|deny> <gcra|token_bucket|leaky_bucket|fixed_window|\
                 sliding_window|sliding_log> <checks>";
    let [path, algorithm, checks] = args else {
        panic!("usage: {usage}");
    };
    let checks: u64 = checks.replace('_', "").parse().expect(usage);
    let allow = path == "allow";
    let clock = CoarseClock::default();
    let allowed = match algorithm.as_str() {
        "gcra" => profile_one::<Gcra>(allow, &clock, checks),
        "token_bucket" => profile_one::<TokenBucket>(allow, &clock, checks),
        "leaky_bucket" => profile_one::<LeakyBucket>(allow, &clock, checks),
        "fixed_window" => profile_one::<FixedWindow>(allow, &clock, checks),
        "sliding_window" => profile_one::<SlidingWindow>(allow, &clock, checks),
        "sliding_log" => profile_one::<SlidingLog>(allow, &clock, checks),
        _ => panic!("usage: {usage}"),
    };
    println!("{path} {algorithm}: {allowed} of {checks} allowed");
}

fn profile_one<A: Subject>(allow: bool, clock: &CoarseClock, checks: u64) -> u64 {
    let quota = if allow {
        A::allow_quota()
    } else {
        deny_quota()
    };
    let limiter = ours::<A, _>(quota, clock)();
    if !allow {
        assert!(Check::allowed(&limiter), "the first check must be allowed");
    }
    timed_loop(&limiter, checks)
}

#[inline(never)]
fn timed_loop<L: Check>(limiter: &L, checks: u64) -> u64 {
    (0..checks).map(|_| limiter.allowed() as u64).sum()
}
