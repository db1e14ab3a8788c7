//! `sluicegate-load`: a gRPC load generator for Envoy's `RateLimitService/ShouldRateLimit`
//! (any RLS v3 server: `sluicegate-server`, the `sluicegate-floor`, envoyproxy/ratelimit,
//! Limitador). Used by `scripts/bench.sh`; built with `--features bench`.
//!
//! Requests go over `--connections` HTTP/2 connections (tonic channels), many streams on
//! each. Each request has `--descriptors` descriptors; descriptor `i` has one entry, key
//! `k{i}`, whose value is drawn uniformly at random from `0..--keys` for every request (so a
//! config with a bare-key rule per `k{i}` gives each value its own counter).
//!
//! Two modes:
//! - `closed` (at max): `--concurrency` requests in flight at all times, each sent as soon
//!   as the previous one of its slot answered. Latency: from send to answer.
//! - `open` (at a set rate): request `n` is scheduled at `start + n / --rate`, on a fixed
//!   timetable that does not wait for answers (a dedicated thread dispatches them; at most
//!   `--concurrency` in flight, beyond which dispatch waits). Latency is measured from the
//!   *scheduled* time, so a server that falls behind shows its queueing in the percentiles
//!   rather than slowing the generator down (no coordinated omission).
//!
//! The first `--warmup` seconds are not recorded; then `--duration` seconds are. Prints one
//! line of JSON: decisions (descriptors decided) per second, requests per second, and
//! p50/p99/p99.9/max latency in microseconds from an HDR histogram, with error and
//! over-limit counts.
//!
//! ```sh
//! cargo run --release -p sluicegate-server --features bench --bin sluicegate-load -- \
//!     --target 127.0.0.1:18081 --mode closed --concurrency 64 --descriptors 3 --keys 1000
//! ```

use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use sluicegate_server::proto::envoy::extensions::common::ratelimit::v3::rate_limit_descriptor::Entry;
use sluicegate_server::proto::rate_limit_response::Code;
use sluicegate_server::proto::rate_limit_service_client::RateLimitServiceClient;
use sluicegate_server::proto::{RateLimitDescriptor, RateLimitRequest};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tonic::transport::{Channel, Endpoint};

/// Latencies above this (60 s) are clamped into the histogram's top bucket.
const HIGHEST_US: u64 = 60_000_000;
/// Histogram shards, so concurrent recorders rarely meet on one lock.
const SHARDS: usize = 16;

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// `--concurrency` requests in flight, each slot sending again as soon as it is answered.
    Closed,
    /// `--rate` requests per second on a fixed timetable; latency from the scheduled time.
    Open,
}

/// A gRPC load generator for RLS v3 `ShouldRateLimit`.
#[derive(Debug, Parser)]
#[command(name = "sluicegate-load", version, about, long_about = None)]
struct Args {
    /// The server's gRPC address.
    #[arg(long)]
    target: SocketAddr,
    /// closed (at max) or open (at --rate).
    #[arg(long, value_enum, default_value = "closed")]
    mode: Mode,
    /// Closed: requests in flight. Open: the most in flight before dispatch waits.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Open: requests per second.
    #[arg(long, default_value_t = 10_000.0)]
    rate: f64,
    /// HTTP/2 connections (tonic channels) the streams are spread over.
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Descriptors per request (keys k1, k2, ...).
    #[arg(long, default_value_t = 1)]
    descriptors: usize,
    /// Distinct values per descriptor key, drawn uniformly at random.
    #[arg(long, default_value_t = 1000)]
    keys: u64,
    /// The request's domain.
    #[arg(long, default_value = "bench")]
    domain: String,
    /// Seconds measured.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Seconds run first and not measured.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Stop after this many requests in all (a bound, whatever the duration).
    #[arg(long, default_value_t = 100_000_000)]
    max_requests: u64,
    /// The generator's tokio worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// A label copied into the JSON line.
    #[arg(long, default_value = "")]
    label: String,
    /// The random seed.
    #[arg(long, default_value_t = 0x5eed)]
    seed: u64,
}

/// What one run measured, shared by every task.
struct Tally {
    histograms: Vec<Mutex<Histogram<u64>>>,
    /// Requests answered (measured window only).
    answered: AtomicU64,
    /// Of those, answered OVER_LIMIT.
    over_limit: AtomicU64,
    /// Requests that failed (a gRPC error), measured window only.
    errors: AtomicU64,
    /// The first error seen, for the report.
    first_error: Mutex<Option<String>>,
    /// Requests sent (all, warmup included).
    sent: AtomicU64,
}

impl Tally {
    fn new() -> Result<Tally, String> {
        let histograms = (0..SHARDS)
            .map(|_| {
                Histogram::new_with_bounds(1, HIGHEST_US, 3)
                    .map(Mutex::new)
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<_, _>>()?;
        Ok(Tally {
            histograms,
            answered: AtomicU64::new(0),
            over_limit: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
            sent: AtomicU64::new(0),
        })
    }

    /// Records one outcome; `shard` spreads the locking.
    fn record(&self, shard: usize, latency: Duration, outcome: Result<bool, tonic::Status>) {
        match outcome {
            Ok(over) => {
                let us = u64::try_from(latency.as_micros()).unwrap_or(HIGHEST_US);
                self.histograms[shard % SHARDS]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .saturating_record(us.clamp(1, HIGHEST_US));
                self.answered.fetch_add(1, Ordering::Relaxed);
                if over {
                    self.over_limit.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(status) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
                if first.is_none() {
                    *first = Some(format!("{:?}: {}", status.code(), status.message()));
                }
            }
        }
    }

    fn merged(&self) -> Histogram<u64> {
        let mut all = self.histograms[0]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for h in &self.histograms[1..] {
            let h = h.lock().unwrap_or_else(|e| e.into_inner());
            // Same bounds everywhere: adding cannot fail.
            let _ = all.add(&*h);
        }
        all
    }
}

/// xorshift64*: fast, and plenty uniform for drawing keys.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that neighbouring seeds give unrelated streams.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-40 for n ≤ 2^24).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// The request shape: domain, keys and how many values each draws from.
#[derive(Clone)]
struct Shape {
    domain: String,
    keys: Vec<String>,
    values: u64,
}

impl Shape {
    fn request(&self, rng: &mut Rng) -> RateLimitRequest {
        RateLimitRequest {
            domain: self.domain.clone(),
            descriptors: self
                .keys
                .iter()
                .map(|key| RateLimitDescriptor {
                    entries: vec![Entry {
                        key: key.clone(),
                        value: rng.below(self.values).to_string(),
                    }],
                    ..RateLimitDescriptor::default()
                })
                .collect(),
            hits_addend: 0,
        }
    }
}

/// Sends one request; `Ok(true)` when the answer was OVER_LIMIT.
async fn call(
    client: &mut RateLimitServiceClient<Channel>,
    request: RateLimitRequest,
) -> Result<bool, tonic::Status> {
    let response = client.should_rate_limit(request).await?.into_inner();
    Ok(response.overall_code == Code::OverLimit as i32)
}

async fn connect(args: &Args) -> Result<Vec<RateLimitServiceClient<Channel>>, String> {
    let uri = format!("http://{}", args.target);
    let mut clients = Vec::with_capacity(args.connections);
    for _ in 0..args.connections.max(1) {
        let channel = Endpoint::from_shared(uri.clone())
            .map_err(|e| e.to_string())?
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", args.target))?;
        clients.push(RateLimitServiceClient::new(channel).max_decoding_message_size(64 << 20));
    }
    Ok(clients)
}

/// The measured window: started at `from`, ending at `to`.
#[derive(Clone, Copy)]
struct Window {
    from: Instant,
    to: Instant,
}

impl Window {
    fn holds(&self, t: Instant) -> bool {
        t >= self.from && t < self.to
    }
}

async fn closed(
    args: &Args,
    shape: Shape,
    clients: Vec<RateLimitServiceClient<Channel>>,
    tally: Arc<Tally>,
    window: Window,
) {
    let budget = Arc::new(AtomicU64::new(args.max_requests));
    let mut tasks = Vec::with_capacity(args.concurrency);
    for slot in 0..args.concurrency.max(1) {
        let mut client = clients[slot % clients.len()].clone();
        let shape = shape.clone();
        let tally = tally.clone();
        let budget = budget.clone();
        let mut rng = Rng::new(args.seed.wrapping_add(slot as u64));
        tasks.push(tokio::spawn(async move {
            loop {
                let sent = Instant::now();
                if sent >= window.to
                    || budget
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                        .is_err()
                {
                    break;
                }
                let request = shape.request(&mut rng);
                tally.sent.fetch_add(1, Ordering::Relaxed);
                let outcome = call(&mut client, request).await;
                if window.holds(sent) {
                    tally.record(slot, sent.elapsed(), outcome);
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
}

async fn open(
    args: &Args,
    shape: Shape,
    clients: Vec<RateLimitServiceClient<Channel>>,
    tally: Arc<Tally>,
    start: Instant,
    window: Window,
) {
    let in_flight = Arc::new(Semaphore::new(args.concurrency.max(1)));
    let handle = tokio::runtime::Handle::current();
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let max_requests = args.max_requests;
    let seed = args.seed;
    let dispatcher = {
        let in_flight = in_flight.clone();
        let tally = tally.clone();
        std::thread::spawn(move || {
            let mut rng = Rng::new(seed);
            let mut n: u64 = 0;
            loop {
                let scheduled = start + period.mul_f64(n as f64);
                if scheduled >= window.to || n >= max_requests {
                    break;
                }
                let now = Instant::now();
                if scheduled > now {
                    // std's sleep is precise to tens of µs on Linux; tokio's timer is 1 ms.
                    std::thread::sleep(scheduled - now);
                }
                // Waits only when --concurrency requests are in flight: later requests are
                // then late, and their latency (from the schedule) shows it.
                let Ok(permit) = handle.block_on(in_flight.clone().acquire_owned()) else {
                    break;
                };
                let request = shape.request(&mut rng);
                let mut client = clients[(n as usize) % clients.len()].clone();
                let tally = tally.clone();
                tally.sent.fetch_add(1, Ordering::Relaxed);
                handle.spawn(async move {
                    let outcome = call(&mut client, request).await;
                    if window.holds(scheduled) {
                        tally.record(n as usize, scheduled.elapsed(), outcome);
                    }
                    drop(permit);
                });
                n += 1;
            }
        })
    };
    let _ = tokio::task::spawn_blocking(move || dispatcher.join()).await;
    // Every permit back: every request answered (or failed).
    let all = u32::try_from(args.concurrency.max(1)).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(Duration::from_secs(10), in_flight.acquire_many(all)).await;
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.descriptors == 0 || args.keys == 0 || args.rate <= 0.0 || args.duration <= 0.0 {
        eprintln!("sluicegate-load: --descriptors, --keys, --rate and --duration must be positive");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sluicegate-load: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&args)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("sluicegate-load: {why}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> Result<String, String> {
    let clients = connect(args).await?;
    let shape = Shape {
        domain: args.domain.clone(),
        keys: (1..=args.descriptors).map(|i| format!("k{i}")).collect(),
        values: args.keys,
    };
    let tally = Arc::new(Tally::new()?);
    let start = Instant::now();
    let from = start + Duration::from_secs_f64(args.warmup.max(0.0));
    let window = Window {
        from,
        to: from + Duration::from_secs_f64(args.duration),
    };
    match args.mode {
        Mode::Closed => closed(args, shape, clients, tally.clone(), window).await,
        Mode::Open => open(args, shape, clients, tally.clone(), start, window).await,
    }
    let seconds = args.duration;
    let histogram = tally.merged();
    let answered = tally.answered.load(Ordering::Relaxed);
    let errors = tally.errors.load(Ordering::Relaxed);
    let requests_per_s = answered as f64 / seconds;
    let line = serde_json::json!({
        "label": args.label,
        "target": args.target.to_string(),
        "mode": match args.mode { Mode::Closed => "closed", Mode::Open => "open" },
        "descriptors": args.descriptors,
        "keys": args.keys,
        "connections": args.connections,
        "concurrency": args.concurrency,
        "rate": if args.mode == Mode::Open { Some(args.rate) } else { None },
        "duration_s": seconds,
        "requests": answered,
        "requests_per_s": requests_per_s.round(),
        "decisions_per_s": (requests_per_s * args.descriptors as f64).round(),
        "p50_us": histogram.value_at_quantile(0.50),
        "p99_us": histogram.value_at_quantile(0.99),
        "p999_us": histogram.value_at_quantile(0.999),
        "max_us": histogram.max(),
        "mean_us": (histogram.mean() * 10.0).round() / 10.0,
        "over_limit": tally.over_limit.load(Ordering::Relaxed),
        "errors": errors,
        "first_error": *tally.first_error.lock().unwrap_or_else(|e| e.into_inner()),
        "sent": tally.sent.load(Ordering::Relaxed),
    });
    Ok(line.to_string())
}
