//! A tour of sluicegate: the six algorithms side by side on the classic traces.
//!
//! ```text
//! cargo run --release --example tour
//! ```
//!
//! Every limiter reads a `ManualClock`, so the output is the same on every run. The clock
//! starts at 0, which the window algorithms take as the UNIX epoch: per-minute windows start
//! at 0:00, 1:00, ... and per-second windows at every whole second.

use std::time::Duration;

use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::Algorithm;
use sluicegate::{Decision, Limiter, Quota};

/// Runs a trace (one single-cost request at each instant) through a fresh limiter.
type Runner = fn(Quota, &[Duration]) -> Vec<Decision>;

/// One algorithm of the tour: its name, what it does, and its runner.
struct Contender {
    name: &'static str,
    rule: &'static str,
    run: Runner,
    /// The leaky bucket shapes rather than polices: its admitted requests wait for a slot.
    shows_wait: bool,
}

const CONTENDERS: [Contender; 6] = [
    Contender {
        name: "Gcra",
        rule: "token bucket kept as one timestamp: `burst` at once, then one per period/limit",
        run: run::<Gcra>,
        shows_wait: false,
    },
    Contender {
        name: "TokenBucket",
        rule: "`burst` tokens refilled continuously at limit/period (Gcra's decisions, in fixed point)",
        run: run::<TokenBucket>,
        shows_wait: false,
    },
    Contender {
        name: "LeakyBucket",
        rule: "admits as Gcra, but each request is told how long to wait for its output slot",
        run: run::<LeakyBucket>,
        shows_wait: true,
    },
    Contender {
        name: "FixedWindow",
        rule: "`limit` per wall-clock window; the count resets at each window edge",
        run: run::<FixedWindow>,
        shows_wait: false,
    },
    Contender {
        name: "SlidingWindow",
        rule: "current window + previous window weighted by its overlap must stay < limit",
        run: run::<SlidingWindow>,
        shows_wait: false,
    },
    Contender {
        name: "SlidingLog",
        rule: "exact: at most `limit` admitted in any trailing period (one timestamp each)",
        run: run::<SlidingLog>,
        shows_wait: false,
    },
];

/// Width of one algorithm's column in the per-request tables; fits `NO retry 59.8s`.
const CELL: usize = 14;
/// Width of the algorithm name in the per-algorithm lines.
const NAME: usize = 14;

/// The generic part of the tour: a fresh limiter of algorithm `A` on its own manual clock,
/// fed one request at each instant of `trace`. `Decision` carries everything needed to print
/// it later, so the table can be laid out once all six algorithms have run.
fn run<A: Algorithm>(quota: Quota, trace: &[Duration]) -> Vec<Decision> {
    let clock = ManualClock::new();
    let limiter = Limiter::<A, ManualClock>::with_clock(quota, clock.clone())
        .unwrap_or_else(|e| panic!("{quota} is within every algorithm's range: {e}"));
    trace
        .iter()
        .map(|&at| {
            clock.set(at);
            limiter.check()
        })
        .collect()
}

/// Every algorithm's decisions on `trace`, in `CONTENDERS` order.
fn run_all(quota: Quota, trace: &[Duration]) -> Vec<Vec<Decision>> {
    CONTENDERS.iter().map(|c| (c.run)(quota, trace)).collect()
}

/// `n` requests at the same instant.
fn burst(at: Duration, n: usize) -> Vec<Duration> {
    vec![at; n]
}

/// Clock time as `m:ss.mmm`.
fn clock_time(at: Duration) -> String {
    let ms = at.as_millis();
    format!("{}:{:02}.{:03}", ms / 60_000, ms / 1000 % 60, ms % 1000)
}

/// A short duration: `0`, `200ms`, `11.8s`.
fn short(d: Duration) -> String {
    if d.is_zero() {
        "0".to_string()
    } else if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// One table cell: `ok r=4` (remaining), `ok w=200ms` (the leaky bucket's wait) or
/// `NO retry 12.3s`.
fn cell(decision: &Decision, shows_wait: bool) -> String {
    match decision.retry_after() {
        Some(retry) => format!("NO retry {}", short(retry)),
        None if shows_wait => format!("ok w={}", short(decision.wait())),
        None => format!("ok r={}", decision.remaining()),
    }
}

fn heading(title: &str, quota: Quota, look_for: &str) {
    println!("\n== {title} (quota \"{quota}\")");
    println!("   {look_for}");
}

/// One row per request: its clock time, then each algorithm's decision.
fn print_table(trace: &[Duration], results: &[Vec<Decision>]) {
    let names = CONTENDERS.iter().map(|c| c.name.to_string());
    print_row("time", names);
    for (i, &at) in trace.iter().enumerate() {
        let cells = CONTENDERS
            .iter()
            .zip(results)
            .map(|(c, decisions)| cell(&decisions[i], c.shows_wait));
        print_row(&clock_time(at), cells);
    }
}

/// A table row: the time right-aligned, then the cells in fixed-width columns.
fn print_row(time: &str, cells: impl Iterator<Item = String>) {
    let mut row = format!("{time:>9} ");
    for cell in cells {
        row += &format!(" {cell:<CELL$}");
    }
    println!("{}", row.trim_end());
}

/// Admitted count per algorithm, as `name: x of n`, two algorithms to a line.
fn print_counts(results: &[Vec<Decision>]) {
    for (pair, decisions) in CONTENDERS.chunks(2).zip(results.chunks(2)) {
        let line: Vec<String> = pair
            .iter()
            .zip(decisions)
            .map(|(c, d)| {
                let admitted = d.iter().filter(|d| d.is_allowed()).count();
                format!("{:<NAME$} admitted {:>2} of {}", c.name, admitted, d.len())
            })
            .collect();
        println!("   {}", line.join("    "));
    }
}

/// Steady traffic: per algorithm, admissions per second and a timeline, one character per
/// request (`#` admitted, `.` denied), a space between seconds.
fn print_timelines(results: &[Vec<Decision>], per_second: usize) {
    for (c, decisions) in CONTENDERS.iter().zip(results) {
        let seconds: Vec<&[Decision]> = decisions.chunks(per_second).collect();
        let counts: Vec<String> = seconds
            .iter()
            .map(|s| format!("{:>2}", s.iter().filter(|d| d.is_allowed()).count()))
            .collect();
        let timeline: Vec<String> = seconds
            .iter()
            .map(|s| {
                s.iter()
                    .map(|d| if d.is_allowed() { '#' } else { '.' })
                    .collect()
            })
            .collect();
        println!(
            "   {:<NAME$} {} /s   {}",
            c.name,
            counts.join(" "),
            timeline.join(" ")
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("sluicegate tour: six algorithms, one API (`Limiter::<A, _>::check`), same traces.");
    println!("Cells: `ok r=N` admitted, N more would be; `NO retry T` denied, retry in T;");
    println!(
        "       LeakyBucket `ok w=T`: admitted, start it after T to keep the output smooth.\n"
    );
    for c in &CONTENDERS {
        println!("  {:<NAME$} {}", c.name, c.rule);
    }

    // 1. Ten idle seconds fill every bucket and leave every window empty; then a burst. The
    //    burst lands mid-second so that the windows' retry (to the window edge, or to when the
    //    oldest entry expires) differs from the buckets' (one emission interval, 200 ms).
    let quota = Quota::per_second(5);
    let trace = burst(Duration::from_millis(10_600), 8);
    heading(
        "1. A burst of 8 at once after 10 s idle",
        quota,
        "Rate algorithms admit `burst` (5), windows `limit` (5); LeakyBucket admits 5 but spaces them 200 ms apart.",
    );
    print_table(&trace, &run_all(quota, &trace));

    // 2. A full limit just before a window edge, and again just after it.
    let quota = Quota::per_minute(5);
    let mut trace = burst(Duration::from_millis(59_900), 5);
    trace.extend(burst(Duration::from_millis(60_100), 5));
    heading(
        "2. The fixed-window boundary attack: 5 at 0:59.9, 5 at 1:00.1",
        quota,
        "FixedWindow admits all 10 within 0.2 s; SlidingWindow lets 1 more in (estimate 5 x 59.9/60 < 5).",
    );
    let results = run_all(quota, &trace);
    print_table(&trace, &results);
    print_counts(&results);

    // 3. Twice the allowed rate, for long enough to see each algorithm settle.
    let quota: Quota = "10/s burst 3".parse()?;
    let per_second = 20;
    let trace: Vec<Duration> = (0..3 * per_second)
        .map(|i| Duration::from_millis(50 * i))
        .collect();
    heading(
        "3. Steady traffic above the rate: one request every 50 ms (20/s) for 3 s",
        quota,
        "All settle at 10/s after the buckets spend their burst of 3; FixedWindow and SlidingLog admit in clumps.",
    );
    print_timelines(&run_all(quota, &trace), per_second as usize);

    println!("\nSummary: the buckets absorb a `burst`, then pace to the rate (LeakyBucket admits alike but hands out waits);");
    println!("the windows count per period: FixedWindow passes 2x its limit at an edge, SlidingWindow ~1x, SlidingLog exactly 1x.");
    Ok(())
}
