//! gRPC served on threads of its own (`--workers N`, N > 1): connections spread over the
//! threads, and a limit is still one limit whichever thread decides.

#[path = "support/service.rs"]
mod service;

use service::*;
use std::collections::HashMap;

const CONFIG: &str = "domain: threads
descriptors:
  - key: shared
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: busy
    rate_limit: {unit: hour, requests_per_unit: 1000000}
";

/// Each thread of the server's by name, with its voluntary context switches (a thread that
/// serves requests sleeps and wakes for them; one left idle parks once).
fn threads(pid: u32) -> HashMap<String, u64> {
    let mut named = HashMap::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let path = task.unwrap().path();
        let Ok(status) = std::fs::read_to_string(path.join("status")) else {
            continue; // the thread ended meanwhile
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .map(|value| value.trim().to_owned())
        };
        let (Some(name), Some(switches)) = (field("Name:"), field("voluntary_ctxt_switches:"))
        else {
            continue;
        };
        named.insert(name, switches.parse().unwrap());
    }
    named
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_spread_over_the_threads_and_share_one_limit() {
    let service = Service::start(CONFIG, &["--workers", "3"]);
    let before = threads(service.pid());
    for index in 0..3 {
        assert!(
            before.contains_key(&format!("grpc-{index}")),
            "threads: {before:?}"
        );
    }
    assert!(!before.contains_key("grpc-3"), "threads: {before:?}");

    // Six connections, two per thread in turn, all on one key of 10 an hour.
    let mut clients = Vec::new();
    for _ in 0..6 {
        clients.push(service.client().await);
    }
    let callers: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut admitted = 0;
                for _ in 0..5 {
                    let shared = request("threads", vec![descriptor(&[("shared", "k")])]);
                    admitted += u32::from(ask(&mut client, shared).await.overall_code == OK);
                    for _ in 0..20 {
                        let busy = request("threads", vec![descriptor(&[("busy", "k")])]);
                        assert_eq!(ask(&mut client, busy).await.overall_code, OK);
                    }
                }
                admitted
            })
        })
        .collect();
    let mut admitted = 0;
    for caller in callers {
        admitted += caller.await.unwrap();
    }
    assert_eq!(
        admitted, 10,
        "30 calls on a limit of 10, over three threads"
    );

    let after = threads(service.pid());
    for index in 0..3 {
        let name = format!("grpc-{index}");
        let woke = after[&name] - before[&name];
        assert!(
            woke >= 20,
            "{name} woke {woke} times for its two connections' 210 calls: {after:?}"
        );
    }
}
