//! Keys as users send them: ns per keyed check, sluicegate against governor's keyed limiter
//! and against the floor of any table holding the same keys, for `u64` keys and six kinds of
//! text key, at 1,000 and 1,000,000 keys, and the heap bytes each holds per key.
//!
//! Kinds (`support/keys.rs`): `u64`; an IPv4 and an IPv6 client as the HTTP layer keys them;
//! `ip:a.b.c.d` text; `user:` and 19 digits; a UUID (36 bytes); a 40-byte API key. sluicegate
//! is a `KeyedLimiter<String, Gcra>` checked with `&str` (`KeyedLimiter<u64, Gcra>` for
//! `u64`), governor a `DefaultKeyedRateLimiter<String>` (`<u64>`), both on the TSC clock, with
//! quotas too large to deny.
//!
//! The floors, measured beside, in the same rounds:
//! - text keys: `hashbrown::HashMap<String, u64>::get(&str)` of the same keys in the same
//!   order: hash, probe, compare, for a table that owns its string keys (no state, no write);
//! - `u64` keys: independent load + CAS of one word per key, at `fastrange(key)` in an array
//!   of 16-byte slots as large as sluicegate's dense table for the keys (68% load): the memory
//!   traffic of an admission, with no hashing, probing or algorithm.
//!
//! Each round, for each kind and size, the subjects take turns (the order rotating):
//! - **inserting**: fresh tables get every key once, in a shuffled order (growth included);
//! - **present**: then a sequence of the table's keys (at least 2^20 checks, each key
//!   already present) is checked, laid out in the order it is checked (see
//!   `support/keys.rs`), so what is timed is the table's own work;
//! - **bytes/key**: live heap bytes (a counting allocator) after the inserts, per key.
//!
//! The figures are medians over the rounds (`STRING_KEYS_ROUNDS`, default 5), printed as a
//! Markdown table with the ratios. Run with `cargo bench --bench string_keys`.
//!
//! Profiling one case (no table; for `valgrind --tool=callgrind --toggle-collect='*timed*'`,
//! which then counts the instructions of the timed loop alone):
//!
//! ```text
//! cargo bench --bench string_keys -- profile <present|insert> <sluicegate|presized|governor|floor>
//!     <u64|ipv4|ipv6|ip|user|uuid|apikey> <keys> [checks]
//! ```

#[path = "support/keys.rs"]
mod keys;

use governor::{DefaultKeyedRateLimiter, Quota as GovernorQuota, RateLimiter};
use keys::{present_sequence, shuffled, text_keys, u64_keys, TEXT_KINDS};
use sluicegate::algorithm::Gcra;
use sluicegate::{KeyedLimiter, Quota};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hash::Hash;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counts live heap bytes, for the bytes-per-key figures.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A burst of 4,096, one more every 10 minutes: no key of a run comes near its burst, and no
/// key's state is fresh again within a run, so growth never sweeps keys away (which would
/// make a "present" check an insert).
fn allow_quota() -> Quota {
    Quota::new(4_096, Duration::from_secs(4_096 * 600)).expect("a valid quota")
}

/// What one subject does with keys of type `K`.
trait Subject<K>: Sized {
    /// A fresh table for `n` keys (only the floors use `n`: the limiters start empty).
    fn build(n: usize) -> Self;
    /// The first check of `key` (inserting it); `None` for a floor, which is built with its
    /// keys instead (see [`Subject::fill`]).
    fn insert(&self, key: &K) -> Option<bool>;
    /// Puts every key in (untimed) when [`insert`](Subject::insert) is not timed.
    fn fill(&mut self, _keys: &[K]) {}
    /// One check of a present key.
    fn check(&self, key: &K) -> bool;
}

struct Ours<K: Hash + Eq + Clone + Send + Sync>(KeyedLimiter<K, Gcra>);

impl Subject<String> for Ours<String> {
    fn build(_: usize) -> Self {
        Ours(KeyedLimiter::new(allow_quota()).unwrap())
    }
    #[inline]
    fn insert(&self, key: &String) -> Option<bool> {
        Some(self.check(key))
    }
    #[inline]
    fn check(&self, key: &String) -> bool {
        self.0.check(key.as_str()).is_allowed()
    }
}

impl Subject<u64> for Ours<u64> {
    fn build(_: usize) -> Self {
        Ours(KeyedLimiter::new(allow_quota()).unwrap())
    }
    #[inline]
    fn insert(&self, key: &u64) -> Option<bool> {
        Some(self.check(key))
    }
    #[inline]
    fn check(&self, key: &u64) -> bool {
        self.0.check(key).is_allowed()
    }
}

/// sluicegate built for all its keys up front (`initial_capacity`): an insert without its
/// share of growth, for profiling what growth costs.
struct Presized<K: Hash + Eq + Clone + Send + Sync>(Ours<K>);

impl<K: Hash + Eq + Clone + Send + Sync> Subject<K> for Presized<K>
where
    Ours<K>: Subject<K>,
{
    fn build(n: usize) -> Self {
        let limiter = KeyedLimiter::builder(allow_quota())
            .initial_capacity(n)
            .build()
            .unwrap();
        Presized(Ours(limiter))
    }
    #[inline]
    fn insert(&self, key: &K) -> Option<bool> {
        self.0.insert(key)
    }
    #[inline]
    fn check(&self, key: &K) -> bool {
        self.0.check(key)
    }
}

struct Governor<K: Hash + Eq + Clone>(DefaultKeyedRateLimiter<K>);

impl<K: Hash + Eq + Clone> Subject<K> for Governor<K> {
    fn build(_: usize) -> Self {
        Governor(RateLimiter::keyed(GovernorQuota::per_second(
            NonZeroU32::new(u32::MAX).unwrap(),
        )))
    }
    #[inline]
    fn insert(&self, key: &K) -> Option<bool> {
        Some(self.check(key))
    }
    #[inline]
    fn check(&self, key: &K) -> bool {
        self.0.check_key(key).is_ok()
    }
}

/// The floor for text keys: a `hashbrown` map that owns the same keys, looked up by `&str`.
struct MapFloor(hashbrown::HashMap<String, u64>);

impl Subject<String> for MapFloor {
    fn build(n: usize) -> Self {
        MapFloor(hashbrown::HashMap::with_capacity(n))
    }
    fn insert(&self, _: &String) -> Option<bool> {
        None
    }
    fn fill(&mut self, keys: &[String]) {
        self.0.extend(keys.iter().map(|key| (key.clone(), 1)));
    }
    #[inline]
    fn check(&self, key: &String) -> bool {
        self.0.get(key.as_str()).is_some_and(|&value| value != 0)
    }
}

/// The floor for `u64` keys: a load and a CAS of one word per key, at `fastrange(key)` (the
/// keys are random words already) in 16-byte slots, as many as a dense table of sluicegate's
/// holds for the keys at 68% load, on huge pages as sluicegate's large arrays are (2 MiB
/// aligned, `MADV_HUGEPAGE`), so that neither pays TLB misses the other does not.
struct CasFloor {
    slots: *mut [AtomicU64; 2],
    len: usize,
    layout: std::alloc::Layout,
}

impl CasFloor {
    fn slots(&self) -> &[[AtomicU64; 2]] {
        // SAFETY: `len` zeroed (so valid) slots live at `slots` until drop.
        unsafe { std::slice::from_raw_parts(self.slots, self.len) }
    }
}

impl Subject<u64> for CasFloor {
    fn build(n: usize) -> Self {
        let len = (n * 100).div_ceil(68).max(1);
        let layout = std::alloc::Layout::from_size_align(len * 16, 2 << 20).unwrap();
        // SAFETY: a non-zero size.
        let slots = unsafe { std::alloc::alloc(layout) };
        assert!(!slots.is_null(), "the floor's slots");
        // Advised before the first touch, as sluicegate's arrays are.
        #[cfg(target_os = "linux")]
        // SAFETY: the range is our allocation; the advice only changes how it is backed.
        unsafe {
            libc::madvise(slots.cast(), layout.size(), libc::MADV_HUGEPAGE)
        };
        // SAFETY: the allocation's bytes; zero words are valid `AtomicU64`s.
        unsafe { std::ptr::write_bytes(slots, 0, layout.size()) };
        CasFloor {
            slots: slots.cast(),
            len,
            layout,
        }
    }
    fn insert(&self, _: &u64) -> Option<bool> {
        None
    }
    #[inline]
    fn check(&self, key: &u64) -> bool {
        let slots = self.slots();
        let index = ((u128::from(*key) * slots.len() as u128) >> 64) as usize;
        let word = &slots[index][0];
        let current = word.load(Ordering::Acquire);
        word.compare_exchange(current, current + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

impl Drop for CasFloor {
    fn drop(&mut self) {
        // SAFETY: allocated in `build` with this layout.
        unsafe { std::alloc::dealloc(self.slots.cast(), self.layout) };
    }
}

/// One round's figures for one subject: ns per insert, ns per present check, heap bytes a key.
#[derive(Default, Clone)]
struct Figures {
    insert: Vec<f64>,
    present: Vec<f64>,
    bytes: Vec<f64>,
}

/// Tables fresh in each round for `n` keys: enough inserts to time.
fn tables_for(n: usize) -> usize {
    (1_000_000 / n).clamp(1, 16)
}

/// Checks of present keys in a round: at least 2^20.
fn checks_for(n: usize) -> usize {
    n.max(1 << 20)
}

/// Inserts every key into fresh tables in `order` (timed, unless `L` is a floor), then
/// checks a sequence of present keys.
fn round<K: Clone, L: Subject<K>>(keys: &[K], order: &[usize], figures: &mut Figures) {
    let inserts: Vec<K> = order.iter().map(|&i| keys[i].clone()).collect();
    let present = present_sequence(keys, order, checks_for(keys.len()));
    let before = LIVE.load(Ordering::Relaxed);
    let (tables, elapsed) = timed_inserts::<K, L>(&inserts, tables_for(keys.len()));
    if let Some(elapsed) = elapsed {
        let inserted = tables.len() * keys.len();
        figures.insert.push(ns_per(elapsed, inserted));
        let bytes = LIVE.load(Ordering::Relaxed) - before;
        figures.bytes.push(bytes as f64 / inserted as f64);
    }
    let elapsed = timed_checks(&tables[0], &present);
    figures.present.push(ns_per(elapsed, present.len()));
}

/// `count` fresh tables holding `keys`, and how long inserting them took (`None` for a floor,
/// which is filled untimed).
#[inline(never)]
fn timed_inserts<K: Clone, L: Subject<K>>(keys: &[K], count: usize) -> (Vec<L>, Option<Duration>) {
    let mut tables: Vec<L> = (0..count).map(|_| L::build(keys.len())).collect();
    let start = Instant::now();
    let mut allowed = 0usize;
    for table in &tables {
        for key in keys {
            match table.insert(key) {
                Some(ok) => allowed += usize::from(ok),
                None => break,
            }
        }
    }
    let elapsed = start.elapsed();
    if allowed == 0 {
        for table in &mut tables {
            table.fill(keys);
        }
        return (tables, None);
    }
    assert_eq!(allowed, count * keys.len(), "every insert allowed");
    (tables, Some(elapsed))
}

/// How long checking every key of `sequence` (all present in `table`) took.
#[inline(never)]
fn timed_checks<K, L: Subject<K>>(table: &L, sequence: &[K]) -> Duration {
    let start = Instant::now();
    let mut allowed = 0usize;
    for key in sequence {
        allowed += usize::from(black_box(table.check(key)));
    }
    let elapsed = start.elapsed();
    assert_eq!(allowed, sequence.len(), "every check allowed");
    elapsed
}

fn ns_per(elapsed: Duration, n: usize) -> f64 {
    elapsed.as_nanos() as f64 / n as f64
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// The three subjects over `rounds` rounds, the order rotating; one Markdown row, and the
/// row's figures for the summary.
fn compare<K, F>(kind: &str, keys: &[K], rounds: usize) -> Row
where
    K: Hash + Eq + Clone + Send + Sync,
    Ours<K>: Subject<K>,
    F: Subject<K>,
{
    let mut figures = [Figures::default(), Figures::default(), Figures::default()];
    for r in 0..rounds {
        let order = shuffled(keys.len(), r as u64);
        for turn in 0..3 {
            match (r + turn) % 3 {
                0 => round::<K, Ours<K>>(keys, &order, &mut figures[0]),
                1 => round::<K, Governor<K>>(keys, &order, &mut figures[1]),
                _ => round::<K, F>(keys, &order, &mut figures[2]),
            }
        }
    }
    let [ours, theirs, floor] = figures.map(|f| {
        (
            median(&f.present),
            (!f.insert.is_empty()).then(|| median(&f.insert)),
            (!f.bytes.is_empty()).then(|| median(&f.bytes)),
        )
    });
    let row = Row {
        present: [ours.0, theirs.0, floor.0],
        insert: [ours.1.unwrap(), theirs.1.unwrap()],
    };
    println!(
        "| {kind} | {n} | {:.1} | {:.1} | {:.2}x | {:.1} | {:.2}x | {:.1} | {:.1} | {:.2}x | {:.0} | {:.0} |",
        row.present[0],
        row.present[1],
        row.present[0] / row.present[1],
        row.present[2],
        row.present[0] / row.present[2],
        row.insert[0],
        row.insert[1],
        row.insert[0] / row.insert[1],
        ours.2.unwrap(),
        theirs.2.unwrap(),
        n = keys.len(),
    );
    row
}

/// Medians of one row: present (ours, governor, floor), insert (ours, governor).
struct Row {
    present: [f64; 3],
    insert: [f64; 2],
}

/// The range of `ratio` over `rows`, as `lo–hi`.
fn range(rows: &[Row], ratio: impl Fn(&Row) -> f64) -> String {
    let (lo, hi) = bounds(rows, ratio);
    format!("{lo:.2}–{hi:.2}")
}

/// The range of a time in ns over `rows`, as `lo–hi`.
fn ns_range(rows: &[Row], time: impl Fn(&Row) -> f64) -> String {
    let (lo, hi) = bounds(rows, time);
    format!("{lo:.0}–{hi:.0}")
}

fn bounds(rows: &[Row], value: impl Fn(&Row) -> f64) -> (f64, f64) {
    let values: Vec<f64> = rows.iter().map(value).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    (lo, hi)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("profile") {
        return profile(&args[1..]);
    }
    // `cargo test --benches` runs each bench binary with `--bench` absent: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rounds: usize = std::env::var("STRING_KEYS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(if quick { 1 } else { 5 });
    let sizes: &[usize] = if quick { &[1_000] } else { &[1_000, 1_000_000] };
    println!(
        "| keys | n | sluicegate present ns | governor present ns | ratio | floor present ns \
         | ratio to floor | sluicegate insert ns | governor insert ns | ratio | sluicegate B/key \
         | governor B/key |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut summary = Vec::new();
    for &n in sizes {
        let u64_row = compare::<u64, CasFloor>("`u64`", &u64_keys(n), rounds);
        let text_rows: Vec<Row> = TEXT_KINDS
            .iter()
            .map(|kind| compare::<String, MapFloor>(kind.name, &text_keys(kind, n), rounds))
            .collect();
        summary.push((n, u64_row, text_rows));
    }
    println!();
    for (n, u64_row, text) in &summary {
        let ratio = |i: usize, j: usize| move |row: &Row| row.present[i] / row.present[j];
        let insert = |row: &Row| row.insert[0] / row.insert[1];
        println!(
            "- {n} keys, text (six kinds): present {}x governor, {}x the floor; inserting {}x \
             governor. `u64`: present {:.2}x governor, {:.2}x the floor; inserting {:.2}x governor.",
            range(text, ratio(0, 1)),
            range(text, ratio(0, 2)),
            range(text, insert),
            ratio(0, 1)(u64_row),
            ratio(0, 2)(u64_row),
            insert(u64_row),
        );
        if *n != 1_000_000 {
            continue;
        }
        // The headline figures (scripts/bench_report.py): `headline: ID: RATIO | FLOOR`.
        let [ours, governor, floor] = u64_row.present;
        println!(
            "headline: u64-present: {:.2}x ({ours:.1} ns against {governor:.1}) | load+CAS \
             {floor:.1} ns; {:.1}x the floor",
            ours / governor,
            ours / floor
        );
        let [ours, governor] = u64_row.insert;
        println!(
            "headline: u64-insert: {:.2}x ({ours:.0} ns against {governor:.0}) | —",
            ours / governor
        );
        println!(
            "headline: string-present: {}x ({} ns against {}) | `hashbrown` get {} ns; {}x \
             the floor",
            range(text, ratio(0, 1)),
            ns_range(text, |row| row.present[0]),
            ns_range(text, |row| row.present[1]),
            ns_range(text, |row| row.present[2]),
            range(text, ratio(0, 2)),
        );
        println!(
            "headline: string-insert: {}x ({} ns against {}) | —",
            range(text, insert),
            ns_range(text, |row| row.insert[0]),
            ns_range(text, |row| row.insert[1]),
        );
    }
}

/// `profile <present|insert> <subject> <kind> <keys> [checks]`: one case, its timed loop in
/// `timed_inserts` or `timed_checks` (the names callgrind's `--toggle-collect` matches).
fn profile(args: &[String]) {
    let usage = "profile <present|insert> <sluicegate|presized|governor|floor> \
                 <u64|ipv4|ipv6|ip|user|uuid|apikey> <keys> [checks]";
    let [what, subject, kind, n, rest @ ..] = args else {
        panic!("usage: {usage}");
    };
    let n: usize = n.replace('_', "").parse().expect(usage);
    let checks: usize = rest
        .first()
        .map_or(checks_for(n), |c| c.replace('_', "").parse().expect(usage));
    let present = what == "present";
    let ns = if kind == "u64" {
        let keys = u64_keys(n);
        match subject.as_str() {
            "sluicegate" => profile_one::<u64, Ours<u64>>(&keys, present, checks),
            "presized" => profile_one::<u64, Presized<u64>>(&keys, present, checks),
            "governor" => profile_one::<u64, Governor<u64>>(&keys, present, checks),
            "floor" => profile_one::<u64, CasFloor>(&keys, present, checks),
            _ => panic!("usage: {usage}"),
        }
    } else {
        let kind = TEXT_KINDS.iter().find(|k| k.short == kind).expect(usage);
        let keys = text_keys(kind, n);
        match subject.as_str() {
            "sluicegate" => profile_one::<String, Ours<String>>(&keys, present, checks),
            "presized" => profile_one::<String, Presized<String>>(&keys, present, checks),
            "governor" => profile_one::<String, Governor<String>>(&keys, present, checks),
            "floor" => profile_one::<String, MapFloor>(&keys, present, checks),
            _ => panic!("usage: {usage}"),
        }
    };
    let (wall, cpu) = ns;
    println!("{what} {subject} {kind} {n}: {wall:.1} ns per operation ({cpu:.1} ns of CPU)");
}

/// ns per operation of one case: wall time, and this thread's CPU time (user and system),
/// which a machine shared with other work disturbs less (time spent waiting for a core is
/// not counted; cache contention still is).
fn profile_one<K: Clone, L: Subject<K>>(keys: &[K], present: bool, checks: usize) -> (f64, f64) {
    let order = shuffled(keys.len(), 0);
    let inserts: Vec<K> = order.iter().map(|&i| keys[i].clone()).collect();
    if present {
        let sequence = present_sequence(keys, &order, checks);
        let (tables, _) = timed_inserts::<K, L>(&inserts, 1);
        let cpu = thread_cpu();
        let wall = timed_checks(&tables[0], &sequence);
        let cpu = thread_cpu() - cpu;
        (ns_per(wall, sequence.len()), ns_per(cpu, sequence.len()))
    } else {
        let before = LIVE.load(Ordering::Relaxed);
        let cpu = thread_cpu();
        let (tables, elapsed) = timed_inserts::<K, L>(&inserts, 1);
        let cpu = thread_cpu() - cpu;
        let bytes = LIVE.load(Ordering::Relaxed) - before;
        println!("{:.1} heap bytes a key", bytes as f64 / keys.len() as f64);
        drop(tables);
        let wall = elapsed.expect("a floor has no insert to profile");
        (ns_per(wall, keys.len()), ns_per(cpu, keys.len()))
    }
}

/// This thread's CPU time so far (zero where the platform does not say).
fn thread_cpu() -> Duration {
    #[cfg(target_os = "linux")]
    {
        let mut time = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `time` is a valid timespec to write.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time) } == 0 {
            return Duration::new(time.tv_sec as u64, time.tv_nsec as u32);
        }
    }
    Duration::ZERO
}
