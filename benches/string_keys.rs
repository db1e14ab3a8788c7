//! Keys as users send them: ns per keyed check, sluicegate against governor's keyed limiter
//! on the same keys in the same run, for `u64` keys and six kinds of text key, at 1,000 and
//! 1,000,000 keys, and the heap bytes each holds per key.
//!
//! Kinds: `u64`; an IPv4 and an IPv6 client as the HTTP layer keys them (`203.0.113.7`, the
//! /64 network `2001:db8:1:2::/64`); `ip:a.b.c.d` text; `user:` and 19 digits; a UUID (36
//! bytes); a 40-byte API key. sluicegate is a `KeyedLimiter<String, Gcra>` checked with
//! `&str` (`KeyedLimiter<u64, Gcra>` for `u64`), governor a `DefaultKeyedRateLimiter<String>`
//! (`<u64>`), both on the TSC clock, with quotas too large to deny.
//!
//! Each round, for each kind and size, alternating the two libraries:
//! - **inserting**: fresh tables get every key once, in a shuffled order (growth included);
//! - **present**: then a shuffled sequence of the table's keys (at least 2^20 checks) is
//!   checked, each key already present.
//!
//! Each sequence is laid out in the order it is checked, so fetching the next key streams
//! through memory (a server's request is in cache when its limiter runs) and what is timed is
//! the table's own work: hashing, its cache misses, comparing;
//! - **bytes/key**: live heap bytes (a counting allocator) after the inserts, per key, at
//!   1,000,000 keys.
//!
//! The figures are medians over the rounds (`STRING_KEYS_ROUNDS`, default 5), printed as a
//! Markdown table with the ratios sluicegate / governor. Run with
//! `cargo bench --bench string_keys`.

use governor::{DefaultKeyedRateLimiter, Quota as GovernorQuota, RateLimiter};
use sluicegate::algorithm::Gcra;
use sluicegate::{KeyedLimiter, Quota};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hash::Hash;
use std::hint::black_box;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// splitmix64's finalizer: a bijection, so `mix(0..n)` are `n` distinct random-looking words.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A text key kind: its name and the `i`th distinct key of that kind.
type Kind = (&'static str, fn(u64) -> String);

const TEXT_KINDS: [Kind; 6] = [
    ("IPv4 (HTTP layer)", |i| {
        Ipv4Addr::from(mix(i) as u32).to_string()
    }),
    ("IPv6 /64 (HTTP layer)", |i| {
        let network = u128::from(0x2001_0db8_0000_0000 ^ (mix(i) & 0xffff_ffff)) << 64;
        format!("{}/64", Ipv6Addr::from(network))
    }),
    ("`ip:a.b.c.d`", |i| {
        format!("ip:{}", Ipv4Addr::from(mix(i) as u32))
    }),
    ("`user:` + 19 digits", |i| {
        format!("user:{:019}", mix(i) % 10_u64.pow(19))
    }),
    ("UUID (36 B)", |i| {
        let (a, b) = (mix(i), mix(i ^ 0xdead_beef));
        format!(
            "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        )
    }),
    ("API key (40 B)", |i| {
        format!("sk_live_{:016x}{:016x}", mix(i), mix(!i))
    }),
];

/// A shuffled order of `0..n` (Fisher-Yates on `mix`).
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (mix(seed ^ i as u64) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// A burst of 4,096, one more every 10 minutes: no key of a run comes near its burst, and no
/// key's state is fresh again within a run, so growth never sweeps keys away (which would
/// make a "present" check an insert).
fn allow_quota() -> Quota {
    Quota::new(4_096, Duration::from_secs(4_096 * 600)).expect("a valid quota")
}

/// What one library does with keys of type `K`.
trait Subject<K> {
    fn build() -> Self;
    fn check(&self, key: &K) -> bool;
}

struct Ours<K: Hash + Eq + Clone + Send + Sync>(KeyedLimiter<K, Gcra>);

impl Subject<String> for Ours<String> {
    fn build() -> Self {
        Ours(KeyedLimiter::new(allow_quota()).unwrap())
    }
    #[inline]
    fn check(&self, key: &String) -> bool {
        self.0.check(key.as_str()).is_allowed()
    }
}

impl Subject<u64> for Ours<u64> {
    fn build() -> Self {
        Ours(KeyedLimiter::new(allow_quota()).unwrap())
    }
    #[inline]
    fn check(&self, key: &u64) -> bool {
        self.0.check(key).is_allowed()
    }
}

struct Governor<K: Hash + Eq + Clone>(DefaultKeyedRateLimiter<K>);

impl<K: Hash + Eq + Clone> Subject<K> for Governor<K> {
    fn build() -> Self {
        Governor(RateLimiter::keyed(GovernorQuota::per_second(
            NonZeroU32::new(u32::MAX).unwrap(),
        )))
    }
    #[inline]
    fn check(&self, key: &K) -> bool {
        self.0.check_key(key).is_ok()
    }
}

/// One round's figures for one library: ns per insert, ns per present check, heap bytes a key.
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

/// Inserts every key into fresh tables, then checks a shuffled sequence of present keys.
/// Both sequences are laid out in the order they are checked (each key's bytes allocated in
/// that order), so reading the next key streams through memory as a request's key would be
/// in cache, and the table's own misses are what is timed.
fn round<K: Clone, L: Subject<K>>(keys: &[K], order: &[usize], figures: &mut Figures) {
    let inserts: Vec<K> = order.iter().map(|&i| keys[i].clone()).collect();
    let checks = order.len().max(1 << 20);
    let present: Vec<K> = (0..checks)
        .map(|j| keys[order[(j * 7919) % order.len()]].clone())
        .collect();
    let tables: Vec<L> = (0..tables_for(keys.len())).map(|_| L::build()).collect();
    let before = LIVE.load(Ordering::Relaxed);
    let start = Instant::now();
    let mut allowed = 0usize;
    for table in &tables {
        for key in &inserts {
            allowed += usize::from(table.check(key));
        }
    }
    let elapsed = start.elapsed();
    assert_eq!(allowed, tables.len() * keys.len(), "every insert allowed");
    figures
        .insert
        .push(ns_per(elapsed, tables.len() * keys.len()));
    figures
        .bytes
        .push((LIVE.load(Ordering::Relaxed) - before) as f64 / (tables.len() * keys.len()) as f64);

    let table = &tables[0];
    let start = Instant::now();
    let mut allowed = 0usize;
    for key in &present {
        allowed += usize::from(black_box(table.check(key)));
    }
    let elapsed = start.elapsed();
    assert_eq!(allowed, checks, "every check allowed");
    figures.present.push(ns_per(elapsed, checks));
}

fn ns_per(elapsed: Duration, n: usize) -> f64 {
    elapsed.as_nanos() as f64 / n as f64
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Both libraries over `rounds` alternated rounds; one Markdown row per figure.
fn compare<K>(kind: &str, keys: &[K], rounds: usize)
where
    K: Hash + Eq + Clone + Send + Sync,
    Ours<K>: Subject<K>,
{
    let (mut ours, mut theirs) = (Figures::default(), Figures::default());
    for r in 0..rounds {
        let order = shuffled(keys.len(), r as u64);
        if r % 2 == 0 {
            round::<K, Ours<K>>(keys, &order, &mut ours);
            round::<K, Governor<K>>(keys, &order, &mut theirs);
        } else {
            round::<K, Governor<K>>(keys, &order, &mut theirs);
            round::<K, Ours<K>>(keys, &order, &mut ours);
        }
    }
    let n = keys.len();
    println!(
        "| {kind} | {n} | {:.1} | {:.1} | {:.2}x | {:.1} | {:.1} | {:.2}x | {:.0} | {:.0} |",
        median(&ours.present),
        median(&theirs.present),
        median(&ours.present) / median(&theirs.present),
        median(&ours.insert),
        median(&theirs.insert),
        median(&ours.insert) / median(&theirs.insert),
        median(&ours.bytes),
        median(&theirs.bytes),
    );
}

fn main() {
    // `cargo test --benches` runs each bench binary with `--bench` absent: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rounds: usize = std::env::var("STRING_KEYS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(if quick { 1 } else { 5 });
    let sizes: &[usize] = if quick { &[1_000] } else { &[1_000, 1_000_000] };
    println!(
        "| keys | n | sluicegate present ns | governor present ns | ratio | sluicegate insert ns \
         | governor insert ns | ratio | sluicegate B/key | governor B/key |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in sizes {
        let keys: Vec<u64> = (0..n as u64).map(mix).collect();
        compare("`u64`", &keys, rounds);
        for (kind, make) in TEXT_KINDS {
            let keys: Vec<String> = (0..n as u64).map(make).collect();
            compare(kind, &keys, rounds);
        }
    }
}
