//! Resident memory per key: sluicegate's `KeyedLimiter<u64>` against governor's keyed limiter.
//!
//! ```text
//! cargo run --release --example memory            # 1,000,000 keys
//! cargo run --release --example memory -- 250000  # another count
//! ```
//!
//! Each limiter runs in a fresh child process (this executable, re-run with `--child NAME N`),
//! so neither inherits the other's heap. The child builds its limiter, reads its resident set
//! (`VmRSS` in /proc/self/status), inserts N distinct keys (one check each, under a quota of
//! one per hour, so every key keeps a state for the whole run and nothing can be swept), and
//! reads it again: the growth over N is the bytes per key, including the table's slack and
//! whatever the allocator keeps of arrays freed while the table grew (glibc need not return
//! them), i.e. the steady figure a process holding N keys sees. The peak (`VmHWM`) is printed
//! too. For sluicegate the child also prints `memory_bytes()` / N, the limiter's own account.
//! Linux only (it reads /proc).

use sluicegate::algorithm::Gcra;
use sluicegate::clock::CoarseClock;
use sluicegate::{KeyedLimiter, Quota};
use std::num::NonZeroU32;
use std::process::{exit, Command};

const DEFAULT_KEYS: u64 = 1_000_000;
const SUBJECTS: [&str; 2] = ["sluicegate", "governor"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, name, keys] if flag == "--child" => child(name, parse_keys(keys)),
        [] => parent(DEFAULT_KEYS),
        [keys] => parent(parse_keys(keys)),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: memory [KEYS]   (default {DEFAULT_KEYS})");
    exit(2)
}

fn parse_keys(text: &str) -> u64 {
    match text.replace('_', "").parse() {
        Ok(keys) if keys > 0 => keys,
        _ => usage(),
    }
}

// ---- Parent: one child per limiter, then the table ----------------------------------------

/// What a child reports, one `key=value` per line on stdout.
#[derive(Default)]
struct Report {
    rss_before: u64,
    rss_after: u64,
    hwm_after: u64,
    memory_bytes: Option<u64>,
}

fn parent(keys: u64) {
    let exe = std::env::current_exe().expect("path of this executable");
    println!("{keys} keys (u64), one check each, each limiter in its own process\n");
    println!(
        "| limiter    | RSS growth | bytes/key (RSS) | bytes/key (peak RSS) | memory_bytes()/key |"
    );
    println!("|---|--:|--:|--:|--:|");
    for name in SUBJECTS {
        let output = Command::new(&exe)
            .args(["--child", name, &keys.to_string()])
            .output()
            .unwrap_or_else(|error| panic!("cannot run the {name} child: {error}"));
        if !output.status.success() {
            eprint!("{}", String::from_utf8_lossy(&output.stderr));
            panic!("the {name} child failed: {}", output.status);
        }
        let report = parse_report(&String::from_utf8_lossy(&output.stdout));
        let growth = report.rss_after.saturating_sub(report.rss_before);
        let peak = report.hwm_after.saturating_sub(report.rss_before);
        let own = report.memory_bytes.map_or("—".to_owned(), |bytes| {
            format!("{:.1}", bytes as f64 / keys as f64)
        });
        println!(
            "| {name:<10} | {:>7.1} MiB | {:.1} | {:.1} | {own} |",
            growth as f64 / (1 << 20) as f64,
            growth as f64 / keys as f64,
            peak as f64 / keys as f64,
        );
    }
    println!(
        "\nRSS growth: VmRSS after inserting minus before (the limiter already built); peak: \
         VmHWM after minus VmRSS before."
    );
}

fn parse_report(text: &str) -> Report {
    let mut report = Report::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value: u64 = value.trim().parse().expect("a number");
        match key.trim() {
            "rss_before" => report.rss_before = value,
            "rss_after" => report.rss_after = value,
            "hwm_after" => report.hwm_after = value,
            "memory_bytes" => report.memory_bytes = Some(value),
            _ => {}
        }
    }
    report
}

// ---- Child: build, measure, insert, measure -----------------------------------------------

/// splitmix64's finalizer: a bijection, so `mix(0..n)` are `n` distinct keys, generated on
/// the fly (a vector of them would count against the limiter).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn child(name: &str, keys: u64) {
    match name {
        "sluicegate" => {
            let limiter = KeyedLimiter::<u64, Gcra, CoarseClock>::new(Quota::per_hour(1))
                .expect("a valid quota");
            let before = status("VmRSS");
            for i in 0..keys {
                assert!(
                    limiter.check(&mix(i)).is_allowed(),
                    "a first check was denied"
                );
            }
            assert_eq!(limiter.len() as u64, keys, "keys missing");
            report(before);
            println!("memory_bytes={}", limiter.memory_bytes());
        }
        "governor" => {
            let limiter = governor::RateLimiter::keyed(governor::Quota::per_hour(NonZeroU32::MIN));
            let before = status("VmRSS");
            for i in 0..keys {
                assert!(
                    limiter.check_key(&mix(i)).is_ok(),
                    "a first check was denied"
                );
            }
            assert_eq!(limiter.len() as u64, keys, "keys missing");
            report(before);
        }
        _ => {
            eprintln!("unknown limiter {name}; expected one of {SUBJECTS:?}");
            exit(2)
        }
    }
}

fn report(rss_before: u64) {
    println!("rss_before={rss_before}");
    println!("rss_after={}", status("VmRSS"));
    println!("hwm_after={}", status("VmHWM"));
}

/// A field of /proc/self/status, in bytes.
fn status(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    text.lines()
        .find_map(|line| {
            let rest = line.strip_prefix(field)?.strip_prefix(':')?;
            let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}
