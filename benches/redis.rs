//! The Redis backend against a local `redis-server` it starts itself (Debian's package).
//!
//! 1. Throughput and latency: with 1, 16 and 256 concurrent tasks on one multiplexed
//!    connection, decisions per second, p50/p99 latency and Redis CPU per decision for each
//!    algorithm (on Redis's clock, deny cache off, 10,000 keys), batched (the default) and
//!    with every call alone (`batching(false)`, each decision its own script), beside (a) a
//!    bare `EVALSHA` that returns a constant, the floor of any script-based limiter, and (b)
//!    the token-bucket script tutorials teach (`HMGET`, compute, `HMSET`, `EXPIRE`); then
//!    batched against alone; and the time Redis spends inside the scripts per decision
//!    (`INFO commandstats`), with what each command a decision runs costs inside Lua.
//! 2. Redis calls per 10,000 requests from one denied client, with and without the deny
//!    cache.
//! 3. Redis memory per key at 100,000 keys for each algorithm (`MEMORY USAGE`).
//!
//! 4. With the sluicegate Redis module (`redis-module/`, built first with
//!    `cargo build --release -p sluicegate-redis-module`), batched decisions per second at
//!    256 tasks against the floor's calls per second.
//!
//! `cargo bench --features redis --bench redis` (add `-- --quick` for shorter runs,
//! `-- --module-only` for the fourth part alone).

#[path = "../tests/support/redis_server.rs"]
mod redis_server;

use redis::aio::ConnectionManager;
use redis_server::RedisServer;
use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::ManualClock;
use sluicegate::redis::RedisLimiter;
use sluicegate::Algorithm;
use sluicegate::Quota;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const KEYS: usize = 10_000;
const CONCURRENCY: [usize; 3] = [1, 16, 256];
const MEMORY_KEYS: usize = 100_000;

/// The token bucket of the tutorials: two hash fields, float arithmetic, three writes.
const TUTORIAL: &str = r"
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])
local ttl = math.floor(capacity / rate * 2)
local data = redis.call('HMGET', key, 'tokens', 'timestamp')
local tokens = tonumber(data[1]) or capacity
local last = tonumber(data[2]) or 0
local filled = math.min(capacity, tokens + math.max(0, now - last) * rate)
local allowed = filled >= requested
if allowed then filled = filled - requested end
redis.call('HMSET', key, 'tokens', filled, 'timestamp', now)
redis.call('EXPIRE', key, ttl)
return { allowed and 1 or 0, filled }
";

/// Per-call latencies and the wall time of one run, and the CPU both sides spent on it.
struct Run {
    latencies: Vec<Duration>,
    wall: Duration,
    /// CPU seconds of this process (the client) and of redis-server.
    client_cpu: f64,
    server_cpu: f64,
}

/// CPU seconds this process has used (user + system).
fn process_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// CPU seconds redis-server has used (user + system), from `INFO cpu`.
fn server_cpu(port: u16) -> f64 {
    let info = redis_server::cli(port, &["INFO", "cpu"]);
    let field = |name: &str| -> f64 {
        info.lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0.0)
    };
    field("used_cpu_sys:") + field("used_cpu_user:")
}

impl Run {
    fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64()
    }

    fn percentile(&mut self, p: f64) -> Duration {
        self.latencies.sort_unstable();
        let i = ((self.latencies.len() as f64 * p) as usize).min(self.latencies.len() - 1);
        self.latencies[i]
    }
}

/// Runs `call(key)` from `tasks` tasks for `duration`, each on its own stride of keys, against
/// the server on `port`.
async fn drive<F, Fut>(port: u16, tasks: usize, duration: Duration, call: F) -> Run
where
    F: Fn(Arc<str>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send,
{
    let keys: Arc<Vec<Arc<str>>> =
        Arc::new((0..KEYS).map(|i| format!("user:{i}").into()).collect());
    let call = Arc::new(call);
    let (client_before, server_before) = (process_cpu(), server_cpu(port));
    let start = Instant::now();
    let deadline = start + duration;
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (keys, call) = (Arc::clone(&keys), Arc::clone(&call));
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(1 << 14);
                let mut i = task * 7_919;
                while Instant::now() < deadline {
                    let key = Arc::clone(&keys[i % KEYS]);
                    let began = Instant::now();
                    call(key).await;
                    latencies.push(began.elapsed());
                    i += 1;
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for handle in handles {
        latencies.extend(handle.await.unwrap());
    }
    let wall = start.elapsed();
    Run {
        latencies,
        wall,
        client_cpu: process_cpu() - client_before,
        server_cpu: server_cpu(port) - server_before,
    }
}

async fn floor(port: u16, conn: &ConnectionManager, tasks: usize, duration: Duration) -> Run {
    let script = redis::Script::new("return 1");
    let mut warm = conn.clone();
    let _: i64 = script.key("k").invoke_async(&mut warm).await.unwrap();
    let sha = script.get_hash().to_owned();
    let conn = conn.clone();
    drive(port, tasks, duration, move |key| {
        let (mut conn, sha) = (conn.clone(), sha.clone());
        async move {
            let reply: i64 = redis::cmd("EVALSHA")
                .arg(&sha)
                .arg(1)
                .arg(&*key)
                .query_async(&mut conn)
                .await
                .unwrap();
            assert_eq!(reply, 1);
        }
    })
    .await
}

async fn tutorial(port: u16, conn: &ConnectionManager, tasks: usize, duration: Duration) -> Run {
    let script = redis::Script::new(TUTORIAL);
    let mut warm = conn.clone();
    let _: Vec<f64> = script
        .key("warm")
        .arg(100)
        .arg(100)
        .arg(0)
        .arg(1)
        .invoke_async(&mut warm)
        .await
        .unwrap();
    let sha = script.get_hash().to_owned();
    let conn = conn.clone();
    drive(port, tasks, duration, move |key| {
        let (mut conn, sha) = (conn.clone(), sha.clone());
        async move {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs_f64();
            let _: Vec<f64> = redis::cmd("EVALSHA")
                .arg(&sha)
                .arg(1)
                .arg(format!("tutorial:{key}"))
                .arg(100)
                .arg(100)
                .arg(now)
                .arg(1)
                .query_async(&mut conn)
                .await
                .unwrap();
        }
    })
    .await
}

async fn algorithm<A: Algorithm>(
    server: &RedisServer,
    tasks: usize,
    duration: Duration,
    batching: bool,
) -> Run {
    decide::<A>(server, tasks, duration, batching, false).await
}

/// `algorithm`, with the sluicegate Redis module's command when `module`.
async fn decide<A: Algorithm>(
    server: &RedisServer,
    tasks: usize,
    duration: Duration,
    batching: bool,
    module: bool,
) -> Run {
    let url = server.url();
    let limiter = RedisLimiter::<A>::builder(Quota::per_second(100), &url)
        .prefix("bench:")
        .deny_cache(false)
        .batching(batching)
        .module(module)
        .timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    limiter.check("warm").await.unwrap();
    drive(server.port(), tasks, duration, move |key| {
        let limiter = limiter.clone();
        async move {
            limiter.check(&key).await.unwrap();
        }
    })
    .await
}

/// One run's figures: decisions/s, p50 and p99 µs, Redis CPU µs per decision.
#[derive(Clone, Copy)]
struct Figures {
    rate: f64,
    p50: f64,
    p99: f64,
    server: f64,
}

/// One table row; `floor` is the floor's run at the same concurrency.
fn row(name: &str, tasks: usize, mut run: Run, floor: (f64, f64)) -> Figures {
    let rate = run.rate();
    let (p50, p99) = (run.percentile(0.50), run.percentile(0.99));
    let per_decision = |cpu: f64| cpu / run.latencies.len() as f64 * 1e6;
    let server = per_decision(run.server_cpu);
    println!(
        "| {name} | {tasks} | {rate:.0} | {:.2}x | {:.0} | {:.0} | {server:.2} ({:.2}x) | {:.2} |",
        floor.0 / rate,
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        server / floor.1,
        per_decision(run.client_cpu),
    );
    Figures {
        rate,
        p50: p50.as_secs_f64() * 1e6,
        p99: p99.as_secs_f64() * 1e6,
        server,
    }
}

/// Batched and alone, each against the floor's rate at the same concurrency.
struct Compared {
    name: &'static str,
    tasks: usize,
    floor: f64,
    batched: Figures,
    alone: Figures,
}

/// Runs `A` batched and alone and prints both rows.
async fn both<A: Algorithm>(
    server: &RedisServer,
    name: &'static str,
    tasks: usize,
    duration: Duration,
    base: (f64, f64),
) -> Compared {
    let run = algorithm::<A>(server, tasks, duration, true).await;
    let batched = row(name, tasks, run, base);
    let run = algorithm::<A>(server, tasks, duration, false).await;
    let alone = row(&format!("{name}, alone"), tasks, run, base);
    Compared {
        name,
        tasks,
        floor: base.0,
        batched,
        alone,
    }
}

async fn throughput(server: &RedisServer, duration: Duration) {
    println!("\n### Decisions per second and latency (one multiplexed connection)\n");
    println!(
        "| script | tasks | decisions/s | time / floor's | p50 µs | p99 µs \
         | Redis CPU µs/decision (/ floor's) | client CPU µs/decision |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let client = redis::Client::open(server.url().as_str()).unwrap();
    let mut compared = Vec::new();
    for tasks in CONCURRENCY {
        let port = server.port();
        let conn = ConnectionManager::new(client.clone()).await.unwrap();
        let run = floor(port, &conn, tasks, duration).await;
        let base = (
            run.rate(),
            run.server_cpu / run.latencies.len() as f64 * 1e6,
        );
        row("floor: EVALSHA returning 1", tasks, run, base);
        let conn = ConnectionManager::new(client.clone()).await.unwrap();
        let run = tutorial(port, &conn, tasks, duration).await;
        row("tutorial token bucket", tasks, run, base);
        compared.push(both::<Gcra>(server, "Gcra", tasks, duration, base).await);
        compared.push(both::<TokenBucket>(server, "TokenBucket", tasks, duration, base).await);
        compared.push(both::<LeakyBucket>(server, "LeakyBucket", tasks, duration, base).await);
        compared.push(both::<FixedWindow>(server, "FixedWindow", tasks, duration, base).await);
        compared.push(both::<SlidingWindow>(server, "SlidingWindow", tasks, duration, base).await);
        compared.push(both::<SlidingLog>(server, "SlidingLog", tasks, duration, base).await);
        server.cli(&["FLUSHALL"]);
    }
    println!("\n### Batched against every call alone (same run)\n");
    println!(
        "| algorithm | tasks | decisions/s batched / floor's | batched / alone \
         | p50 batched / alone | p99 batched / alone | Redis CPU µs/decision batched, alone (ratio) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for c in &compared {
        let (b, a) = (c.batched, c.alone);
        println!(
            "| {} | {} | {:.2}x | {:.2}x | {:.2}x | {:.2}x | {:.2}, {:.2} ({:.2}x) |",
            c.name,
            c.tasks,
            b.rate / c.floor,
            b.rate / a.rate,
            b.p50 / a.p50,
            b.p99 / a.p99,
            b.server,
            a.server,
            b.server / a.server,
        );
    }
}

/// `(calls, µs)` of `command` in `INFO commandstats` since the last `CONFIG RESETSTAT`.
fn command_stats(server: &RedisServer, command: &str) -> (f64, f64) {
    let info = server.cli(&["INFO", "commandstats"]);
    let Some(line) = info
        .lines()
        .find_map(|line| line.strip_prefix(&format!("cmdstat_{command}:")))
    else {
        return (0.0, 0.0);
    };
    let field = |name: &str| -> f64 {
        line.split(',')
            .find_map(|kv| kv.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    (field("calls="), field("usec="))
}

/// Where a decision's Redis time goes at 256 tasks: scripts run, decisions per script and
/// the time Redis spends inside them (`INFO commandstats`, nested commands included), batched
/// and alone; the rest of Redis's CPU is per call (reading, parsing, replying).
async fn script_time(server: &RedisServer, duration: Duration) {
    println!("\n### Inside the scripts at 256 tasks (INFO commandstats)\n");
    println!(
        "| algorithm | calls | scripts run | decisions per script | µs per script \
         | script µs per decision | Redis CPU µs per decision |"
    );
    println!("|---|---|---|---|---|---|---|");
    for name in ["Gcra", "SlidingWindow", "SlidingLog"] {
        for batching in [true, false] {
            server.cli(&["CONFIG", "RESETSTAT"]);
            let run = match name {
                "Gcra" => algorithm::<Gcra>(server, 256, duration, batching).await,
                "SlidingWindow" => {
                    algorithm::<SlidingWindow>(server, 256, duration, batching).await
                }
                _ => algorithm::<SlidingLog>(server, 256, duration, batching).await,
            };
            let (calls, usec) = command_stats(server, "evalsha");
            let decisions = run.latencies.len() as f64;
            println!(
                "| {name} | {} | {calls:.0} | {:.1} | {:.1} | {:.2} | {:.2} |",
                if batching { "batched" } else { "alone" },
                decisions / calls,
                usec / calls,
                usec / decisions,
                run.server_cpu / decisions * 1e6,
            );
            server.cli(&["FLUSHALL"]);
        }
    }
    println!("\n### What one decision's commands cost inside Lua (1,000 in one EVAL)\n");
    println!("| loop body | µs each |");
    println!("|---|---|");
    let key = "local k = 'sluicegate:{user:' .. i .. '}gAbCdE'";
    for (name, body) in [
        ("build the key name", ""),
        ("GET", "redis.call('GET', k)"),
        (
            "SET … PX",
            "redis.call('SET', k, 'GAAAAAAAAAAAAAAAA', 'PX', 100000)",
        ),
        ("GET of the state just set", "redis.call('GET', k)"),
        ("TIME", "redis.call('TIME')"),
        (
            "struct.pack of 6 doubles",
            "struct.pack('>dddddd', i, i, i, i, i, i)",
        ),
    ] {
        let script = format!("for i = 1, 1000 do {key}; {body} end return 1");
        server.cli(&["CONFIG", "RESETSTAT"]);
        server.cli(&["EVAL", &script, "0"]);
        let (_, usec) = command_stats(server, "eval");
        println!("| {name} | {:.2} |", usec / 1_000.0);
    }
    server.cli(&["FLUSHALL"]);
}

async fn deny_cache(server: &RedisServer) {
    println!("\n### Redis calls per 10,000 requests from one denied client (Gcra, 10/s)\n");
    println!("| traffic | with the deny cache | without |");
    println!("|---|---|---|");
    // As fast as one task can ask, on Redis's clock.
    let mut calls = Vec::new();
    for cache in [true, false] {
        let limiter = RedisLimiter::<Gcra>::builder(Quota::per_second(10), &server.url())
            .prefix(format!("flood{cache}:"))
            .deny_cache(cache)
            .connect()
            .await
            .unwrap();
        let started = Instant::now();
        for _ in 0..10_000 {
            limiter.check("client").await.unwrap();
        }
        calls.push((limiter.stats().calls, started.elapsed()));
    }
    println!(
        "| back to back, Redis's clock ({:?} / {:?}) | {} | {} |",
        calls[0].1, calls[1].1, calls[0].0, calls[1].0
    );
    // One request per millisecond for ten seconds, on a manual clock.
    let mut calls = Vec::new();
    for cache in [true, false] {
        let clock = ManualClock::starting_at(Duration::from_secs(1_000));
        let limiter =
            RedisLimiter::<Gcra, ManualClock>::builder(Quota::per_second(10), &server.url())
                .clock(clock.clone())
                .prefix(format!("paced{cache}:"))
                .deny_cache(cache)
                .connect()
                .await
                .unwrap();
        for _ in 0..10_000 {
            clock.advance(Duration::from_millis(1));
            limiter.check("client").await.unwrap();
        }
        calls.push(limiter.stats().calls);
    }
    println!(
        "| one per ms for 10 s (manual clock) | {} | {} |",
        calls[0], calls[1]
    );
}

async fn memory_of<A: Algorithm>(server: &RedisServer, name: &str, cost: u32) {
    server.cli(&["FLUSHALL"]);
    let used = |server: &RedisServer| -> u64 {
        let info = server.cli(&["INFO", "memory"]);
        info.lines()
            .find_map(|line| line.strip_prefix("used_memory:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let before = used(server);
    // Per hour: every key stays (its freshness time is minutes) while the others are written.
    let limiter = RedisLimiter::<A>::builder(Quota::per_hour(100), &server.url())
        .prefix("mem:")
        .deny_cache(false)
        .timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    let limiter = Arc::new(limiter);
    let handles: Vec<_> = (0..64)
        .map(|task| {
            let limiter = Arc::clone(&limiter);
            tokio::spawn(async move {
                for i in (task..MEMORY_KEYS).step_by(64) {
                    limiter
                        .check_n(&format!("user:{i:06}"), cost)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await.unwrap();
    }
    assert_eq!(server.cli(&["DBSIZE"]), MEMORY_KEYS.to_string());
    let after = used(server);
    let mut conn = redis::Client::open(server.url().as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut sampled = 0u64;
    for i in (0..MEMORY_KEYS).step_by(MEMORY_KEYS / 1_000) {
        let key = limiter.redis_key(&format!("user:{i:06}"));
        let bytes: u64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        sampled += bytes;
    }
    let example = limiter.redis_key("user:000042");
    println!(
        "| {name} | {cost} | {} | {:.0} | `{example}` |",
        sampled / 1_000,
        (after - before) as f64 / MEMORY_KEYS as f64
    );
}

async fn memory(server: &RedisServer) {
    println!("\n### Redis memory per key at 100,000 keys (quota 100/hour)\n");
    println!("| algorithm | units recorded | MEMORY USAGE bytes | used_memory / key | key name |");
    println!("|---|---|---|---|---|");
    memory_of::<Gcra>(server, "Gcra", 1).await;
    memory_of::<TokenBucket>(server, "TokenBucket", 1).await;
    memory_of::<LeakyBucket>(server, "LeakyBucket", 1).await;
    memory_of::<FixedWindow>(server, "FixedWindow", 1).await;
    memory_of::<SlidingWindow>(server, "SlidingWindow", 1).await;
    memory_of::<SlidingLog>(server, "SlidingLog", 1).await;
    memory_of::<SlidingLog>(server, "SlidingLog", 10).await;
    // Redis rounds a key's allocations up in steps: the same 17-byte state (with a TTL)
    // under names of growing length.
    println!("\n| name length (bytes) | MEMORY USAGE of a 17-byte state |\n|---|---|");
    for len in [6, 7, 14, 15, 30, 31, 46, 47] {
        let name = "k".repeat(len);
        server.cli(&["SET", &name, "GAAAAAAAAAAAAAAAA", "PX", "100000"]);
        println!("| {len} | {} |", server.cli(&["MEMORY", "USAGE", &name]));
    }
    server.cli(&["FLUSHALL"]);
}

/// The module built beside the benches (`cargo build --release -p sluicegate-redis-module`),
/// or `SLUICEGATE_REDIS_MODULE`.
fn module_path() -> Option<String> {
    let path = std::env::var("SLUICEGATE_REDIS_MODULE").unwrap_or_else(|_| {
        let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        format!("{target}/release/libsluicegate_redis.so")
    });
    // redis-server runs in a directory of its own: it needs the whole path.
    let path = std::fs::canonicalize(path).ok()?;
    path.to_str().map(str::to_owned)
}

/// Batched decisions by the module's command against the floor (a bare `EVALSHA`, on a
/// Redis without the module) at 256 tasks: the K-batching target of issue 33.
async fn module_throughput(floor_server: &RedisServer, duration: Duration) {
    println!("\n### With the sluicegate Redis module (SLUICEGATE.DECIDE), 256 tasks\n");
    let Some(path) = module_path() else {
        println!("(not run: build it with `cargo build --release -p sluicegate-redis-module`)");
        return;
    };
    let server = RedisServer::start_with(&["--loadmodule", &path]);
    println!(
        "| algorithm | decisions/s | / floor's calls/s | p50 µs | p99 µs | Redis CPU µs/decision (/ floor's per call) | client CPU µs/decision (/ floor's per call) | the scripts batched: decisions/s / floor's, Redis CPU µs/decision |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let tasks = 256;
    let client = redis::Client::open(floor_server.url().as_str()).unwrap();
    let conn = ConnectionManager::new(client).await.unwrap();
    let run = floor(floor_server.port(), &conn, tasks, duration).await;
    let per_call = |cpu: f64, run: &Run| cpu / run.latencies.len() as f64 * 1e6;
    let base = (
        run.rate(),
        per_call(run.server_cpu, &run),
        per_call(run.client_cpu, &run),
    );
    macro_rules! pair {
        ($a:ty, $name:literal) => {{
            let scripts = decide::<$a>(floor_server, tasks, duration, true, false).await;
            let scripts_cpu = per_call(scripts.server_cpu, &scripts);
            let mut run = decide::<$a>(&server, tasks, duration, true, true).await;
            let rate = run.rate();
            let (p50, p99) = (run.percentile(0.50), run.percentile(0.99));
            let (cpu, client) = (per_call(run.server_cpu, &run), per_call(run.client_cpu, &run));
            println!(
                "| {} | {rate:.0} | {:.2}x | {:.0} | {:.0} | {cpu:.2} ({:.2}x) | {client:.2} ({:.2}x) | {:.2}x, {scripts_cpu:.2} |",
                $name,
                rate / base.0,
                p50.as_secs_f64() * 1e6,
                p99.as_secs_f64() * 1e6,
                cpu / base.1,
                client / base.2,
                scripts.rate() / base.0,
            );
        }};
    }
    pair!(Gcra, "Gcra");
    pair!(TokenBucket, "TokenBucket");
    pair!(LeakyBucket, "LeakyBucket");
    pair!(FixedWindow, "FixedWindow");
    pair!(SlidingWindow, "SlidingWindow");
    let calls = server.cli(&["INFO", "commandstats"]);
    let native = calls
        .lines()
        .any(|line| line.starts_with("cmdstat_sluicegate.decide:"));
    let scripts = calls
        .lines()
        .any(|line| line.starts_with("cmdstat_evalsha:"));
    assert!(
        native && !scripts,
        "every decision went to the module: {calls}"
    );
    println!(
        "\nfloor: {:.0} calls/s, Redis CPU {:.2} µs a call, client CPU {:.2} µs a call",
        base.0, base.1, base.2
    );
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let duration = Duration::from_millis(if quick { 300 } else { 1_500 });
    let server = RedisServer::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "redis bench: {} on 127.0.0.1:{}, client runtime of 2 worker threads, {} cores",
        server
            .cli(&["INFO", "server"])
            .lines()
            .find(|line| line.starts_with("redis_version"))
            .unwrap_or("redis_version:?")
            .trim(),
        server.port(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let module_only = std::env::args().any(|arg| arg == "--module-only");
    runtime.block_on(async {
        if module_only {
            module_throughput(&server, duration).await;
            return;
        }
        throughput(&server, duration).await;
        module_throughput(&server, duration).await;
        script_time(&server, duration).await;
        deny_cache(&server).await;
        memory(&server).await;
    });
}
