//! The HTTP overhead benchmark: a hello-world axum server under `wrk` on loopback, with no
//! limiter, with sluicegate's layer (one limit, three limits) and with tower_governor set up
//! alike, runs alternated, medians reported as a Markdown table.
//!
//! ```sh
//! cargo run --release --features http,tokio --example http_bench -- --rounds 5 --duration 5
//! ```
//!
//! A `noop-layer` variant (a layer that passes requests through) shows what wrapping the
//! router costs by itself, `sluicegate-1-no-headers` what the two `RateLimit` headers cost,
//! and `sluicegate-1-route` what axum's `Router::layer` adds to the same layer (it boxes the
//! layered route and its future for every request).
//!
//! Quotas are huge (10^9 a second), so every request is admitted and the figures measure the
//! cost of deciding and of the headers, not of answering 429s. Every variant keys by the peer
//! address (one client, 127.0.0.1: one hot key), and both layers send their headers.
//! Three limits: the peer address, a global limit, and the `x-api-key` header (wrk sends one);
//! tower_governor, which holds one limit per layer, stacks three layers for it.
//!
//! Options: `--rounds N`, `--duration SECONDS`, `--connections N`, `--threads N` (wrk's),
//! `--server-threads N` (tokio workers); `--pin` keeps the server's workers on CPU 0 and wrk
//! on CPU 1 (Linux, `taskset`), so on a 2-core machine neither steals the other's core;
//! `--in-process` skips the network and wrk and times each service called in a loop (ns per
//! request), the steadiest measure of what a layer adds.
//!
//! Needs `wrk` on the PATH (Debian: `apt-get install wrk`).

#[cfg(all(feature = "http", feature = "tokio"))]
mod bench {
    use axum::extract::ConnectInfo;
    use axum::routing::get;
    use axum::{Router, ServiceExt as AxumServiceExt};
    use governor::middleware::StateInformationMiddleware;
    use sluicegate::algorithm::Gcra;
    use sluicegate::http::{ClientIp, HeaderKey, RateLimitLayer, RequestLimit};
    use sluicegate::{KeyedLimiter, Limiter, Quota};
    use std::convert::Infallible;
    use std::net::SocketAddr;
    use std::process::Command;
    use std::time::Duration;
    use tower::util::MapRequestLayer;
    use tower::{Layer, Service, ServiceBuilder, ServiceExt};
    use tower_governor::governor::GovernorConfigBuilder;
    use tower_governor::key_extractor::{GlobalKeyExtractor, KeyExtractor, PeerIpKeyExtractor};
    use tower_governor::{GovernorError, GovernorLayer};

    const VARIANTS: [&str; 8] = [
        "none",
        "noop-layer",
        "sluicegate-1-no-headers",
        "sluicegate-1",
        "governor-1",
        "sluicegate-1-route",
        "sluicegate-3",
        "governor-3",
    ];

    type Request = http::Request<axum::body::Body>;

    /// What is done with a variant's service, whatever its type.
    trait Run<R> {
        fn run<S>(self, service: S) -> R
        where
            S: Service<Request, Response = axum::response::Response, Error = Infallible>
                + Clone
                + Send
                + Sync
                + 'static,
            S::Future: Send + 'static;
    }

    fn huge() -> Quota {
        Quota::per_second(1_000_000_000)
    }

    fn client_ip() -> ClientIp {
        ClientIp::new().peer_from(|info: &ConnectInfo<SocketAddr>| info.0)
    }

    fn one_limit() -> RateLimitLayer {
        RateLimitLayer::new(
            RequestLimit::new("ip", KeyedLimiter::<String, Gcra>::new(huge()).unwrap())
                .key(client_ip()),
        )
        .unwrap()
    }

    fn three_limits() -> RateLimitLayer {
        RateLimitLayer::builder()
            .limit(
                RequestLimit::new("ip", KeyedLimiter::<String, Gcra>::new(huge()).unwrap())
                    .key(client_ip()),
            )
            .limit(RequestLimit::new(
                "global",
                Limiter::<Gcra>::new(huge()).unwrap(),
            ))
            .limit(
                RequestLimit::new("token", KeyedLimiter::<String, Gcra>::new(huge()).unwrap())
                    .key(HeaderKey::parse("x-api-key").unwrap()),
            )
            .build()
            .unwrap()
    }

    fn governor_layer<K: KeyExtractor>(
        extractor: K,
    ) -> GovernorLayer<K, StateInformationMiddleware, axum::body::Body> {
        GovernorLayer::new(
            GovernorConfigBuilder::default()
                .key_extractor(extractor)
                .per_nanosecond(1)
                .burst_size(1_000_000_000)
                .use_headers()
                .finish()
                .unwrap(),
        )
    }

    /// Runs `variant`'s service. Every layer wraps the whole router (what README.md
    /// recommends), except `sluicegate-1-route`, which goes through axum's `Router::layer`:
    /// that boxes the layered route and its future per request, a cost of its own.
    fn with_variant<R>(variant: &str, run: impl Run<R>) -> R {
        let app = Router::new().route("/", get(|| async { "Hello, World!" }));
        match variant {
            "none" => run.run(app),
            // A layer that does nothing: what wrapping the router in a layer costs by itself.
            "noop-layer" => run.run(MapRequestLayer::new(|request: Request| request).layer(app)),
            "sluicegate-1" => run.run(one_limit().layer(app)),
            "sluicegate-1-no-headers" => run.run(
                RateLimitLayer::builder()
                    .limit(
                        RequestLimit::new("ip", KeyedLimiter::<String, Gcra>::new(huge()).unwrap())
                            .key(client_ip()),
                    )
                    .standard_headers(false)
                    .build()
                    .unwrap()
                    .layer(app),
            ),
            "sluicegate-1-route" => run.run(app.layer(one_limit())),
            "sluicegate-3" => run.run(three_limits().layer(app)),
            "governor-1" => run.run(governor_layer(PeerIpKeyExtractor).layer(app)),
            "governor-3" => run.run(
                ServiceBuilder::new()
                    .layer(governor_layer(PeerIpKeyExtractor))
                    .layer(governor_layer(GlobalKeyExtractor))
                    .layer(governor_layer(ApiKey))
                    .service(app),
            ),
            other => panic!("unknown variant {other}"),
        }
    }

    /// tower_governor's extractor for the `x-api-key` header.
    #[derive(Clone)]
    struct ApiKey;

    impl KeyExtractor for ApiKey {
        type Key = String;

        fn extract<T>(&self, request: &http::Request<T>) -> Result<String, GovernorError> {
            request
                .headers()
                .get("x-api-key")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
                .ok_or(GovernorError::UnableToExtractKey)
        }
    }

    struct Options {
        in_process: bool,
        rounds: usize,
        duration: u64,
        connections: usize,
        threads: usize,
        server_threads: usize,
        /// Server workers on CPU 0, wrk on CPU 1 (Linux): neither steals the other's core.
        pin: bool,
    }

    fn options() -> Options {
        let mut options = Options {
            in_process: false,
            rounds: 3,
            duration: 5,
            connections: 32,
            threads: 1,
            server_threads: 2,
            pin: false,
        };
        let mut args: Vec<String> = std::env::args().skip(1).collect();
        if let Some(at) = args.iter().position(|a| a == "--in-process") {
            options.in_process = true;
            args.remove(at);
        }
        if let Some(at) = args.iter().position(|a| a == "--pin") {
            options.pin = true;
            args.remove(at);
        }
        for pair in args.chunks(2) {
            let value = || {
                pair.get(1)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{} needs a number", pair[0]))
            };
            match pair[0].as_str() {
                "--rounds" => options.rounds = value(),
                "--duration" => options.duration = value() as u64,
                "--connections" => options.connections = value(),
                "--threads" => options.threads = value(),
                "--server-threads" => options.server_threads = value(),
                other => panic!("unknown argument {other}; see the source's header"),
            }
        }
        options
    }

    /// Requests per second and p99 latency (ms) of one wrk run against `variant`.
    fn measure(variant: &str, options: &Options) -> (f64, f64) {
        with_variant(variant, Wrk { variant, options })
    }

    struct Wrk<'a> {
        variant: &'a str,
        options: &'a Options,
    }

    impl Run<(f64, f64)> for Wrk<'_> {
        fn run<S>(self, service: S) -> (f64, f64)
        where
            S: Service<Request, Response = axum::response::Response, Error = Infallible>
                + Clone
                + Send
                + Sync
                + 'static,
            S::Future: Send + 'static,
        {
            let Wrk { variant, options } = self;
            let pin = options.pin;
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(options.server_threads)
                .on_thread_start(move || {
                    if pin {
                        pin_to_cpu(0);
                    }
                })
                .enable_all()
                .build()
                .unwrap();
            let listener = runtime
                .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                .unwrap();
            let address = listener.local_addr().unwrap();
            runtime.spawn(async move {
                axum::serve(
                    listener,
                    AxumServiceExt::<Request>::into_make_service_with_connect_info::<SocketAddr>(
                        service,
                    ),
                )
                .await
                .unwrap();
            });
            let mut wrk = if options.pin {
                let mut taskset = Command::new("taskset");
                taskset.args(["-c", "1", "wrk"]);
                taskset
            } else {
                Command::new("wrk")
            };
            let output = wrk
                .args(["-t", &options.threads.to_string()])
                .args(["-c", &options.connections.to_string()])
                .args(["-d", &format!("{}s", options.duration)])
                .args(["-H", "x-api-key: bench", "--latency"])
                .arg(format!("http://{address}/"))
                .output()
                .expect("wrk must be installed (apt-get install wrk)");
            runtime.shutdown_timeout(Duration::from_secs(1));
            let text = String::from_utf8_lossy(&output.stdout);
            assert!(
                !text.contains("Non-2xx"),
                "{variant} answered errors:\n{text}"
            );
            let rps = text
                .lines()
                .find_map(|l| l.strip_prefix("Requests/sec:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no Requests/sec in:\n{text}"));
            let p99 = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("99%"))
                .map(|v| millis(v.trim()))
                .unwrap_or_else(|| panic!("no 99% in:\n{text}"));
            (rps, p99)
        }
    }

    /// Keeps the calling thread on `cpu`.
    fn pin_to_cpu(cpu: usize) {
        #[cfg(target_os = "linux")]
        // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET and sched_setaffinity only
        // touch the set and the calling thread's affinity.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = cpu;
    }

    fn millis(text: &str) -> f64 {
        let split = text
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: f64 = number.parse().unwrap_or(f64::NAN);
        match unit {
            "us" => number / 1000.0,
            "ms" => number,
            "s" => number * 1000.0,
            _ => f64::NAN,
        }
    }

    fn median(values: &mut [f64]) -> f64 {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        }
    }

    /// Nanoseconds per request through the service alone (no network, no wrk): the layer's
    /// own cost, steadier than a load test on a busy machine.
    fn in_process(variant: &str) -> f64 {
        with_variant(variant, InProcess)
    }

    struct InProcess;

    impl Run<f64> for InProcess {
        fn run<S>(self, mut service: S) -> f64
        where
            S: Service<Request, Response = axum::response::Response, Error = Infallible>
                + Clone
                + Send
                + Sync
                + 'static,
            S::Future: Send + 'static,
        {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let peer: SocketAddr = "127.0.0.1:40000".parse().unwrap();
            let request = || {
                let mut request = http::Request::get("/")
                    .header("x-api-key", "bench")
                    .body(axum::body::Body::empty())
                    .unwrap();
                request.extensions_mut().insert(ConnectInfo(peer));
                request
            };
            runtime.block_on(async {
                let n = 200_000;
                for _ in 0..n / 10 {
                    let response = service
                        .ready()
                        .await
                        .unwrap()
                        .call(request())
                        .await
                        .unwrap();
                    assert_eq!(response.status(), 200);
                }
                let start = std::time::Instant::now();
                for _ in 0..n {
                    let response = service
                        .ready()
                        .await
                        .unwrap()
                        .call(request())
                        .await
                        .unwrap();
                    std::hint::black_box(response);
                }
                start.elapsed().as_nanos() as f64 / n as f64
            })
        }
    }

    pub fn main() {
        let options = options();
        if options.in_process {
            let only = std::env::var("HTTP_BENCH_ONLY").ok();
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
            for _ in 0..options.rounds {
                for (i, variant) in VARIANTS.iter().enumerate() {
                    if only
                        .as_deref()
                        .is_none_or(|only| only == *variant || *variant == "none")
                    {
                        times[i].push(in_process(variant));
                    }
                }
            }
            let base = median(&mut times[0].clone());
            println!("| variant | ns per request (in process) | added by the layer |");
            println!("|---|--:|--:|");
            for (i, variant) in VARIANTS.iter().enumerate() {
                if times[i].is_empty() {
                    continue;
                }
                let t = median(&mut times[i]);
                println!("| {variant} | {t:.0} | {:.0} |", t - base);
            }
            return;
        }
        let mut results: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); VARIANTS.len()];
        for round in 0..options.rounds {
            // Alternate the order too, so no variant always runs right after the same one.
            let mut order: Vec<usize> = (0..VARIANTS.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let (rps, p99) = measure(VARIANTS[i], &options);
                eprintln!(
                    "round {round} {:<14} {rps:>10.0} req/s  p99 {p99:.2} ms",
                    VARIANTS[i]
                );
                results[i].0.push(rps);
                results[i].1.push(p99);
            }
        }
        println!(
            "wrk -t{} -c{} -d{}s, server on {} tokio workers{}, {} rounds alternated; medians, \
             and each variant's median over rounds of its rate over `none`'s in the same round\n",
            options.threads,
            options.connections,
            options.duration,
            options.server_threads,
            if options.pin {
                " pinned to CPU 0 (wrk to CPU 1)"
            } else {
                ""
            },
            options.rounds
        );
        println!("| variant | requests/s | vs none | p99 latency |");
        println!("|---|--:|--:|--:|");
        let baseline = results[0].0.clone();
        for (i, (rps, p99)) in results.iter_mut().enumerate() {
            let mut paired: Vec<f64> = rps.iter().zip(&baseline).map(|(r, b)| r / b).collect();
            println!(
                "| {} | {:.0} | {:+.1}% | {:.2} ms |",
                VARIANTS[i],
                median(rps),
                (median(&mut paired) - 1.0) * 100.0,
                median(p99)
            );
        }
    }
}

fn main() {
    #[cfg(all(feature = "http", feature = "tokio"))]
    bench::main();
    #[cfg(not(all(feature = "http", feature = "tokio")))]
    eprintln!("http_bench needs the http and tokio features: cargo run --release --features http,tokio --example http_bench");
}
