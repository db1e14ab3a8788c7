//! Clients cannot hold the listeners (issue 23, finding 4): over raw TCP on 127.0.0.1, a
//! client trickling its headers or its body one byte a second is cut off by the HTTP
//! timeouts (30 s by default), and idle connections filling the open-file limit leave the
//! gRPC port answering, and the HTTP port answering again once they time out.

#[path = "support/service.rs"]
mod service;

use service::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CONFIG: &str = "domain: slow
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 5}
";

/// The default header and body timeouts (30 s), with room for a busy machine.
const CUT_OFF_WITHIN: Duration = Duration::from_secs(40);

/// Sends `bytes` one a second until the server closes the connection (or `CUT_OFF_WITHIN`
/// passes); returns how long it stayed open and what the server answered.
fn trickle(port: u16, head: &str, bytes: &[u8]) -> (Duration, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(1000)))
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    for byte in bytes.iter().cycle() {
        if started.elapsed() > CUT_OFF_WITHIN {
            break;
        }
        if stream.write_all(&[*byte]).is_err() {
            break;
        }
        let mut buf = [0u8; 1024];
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
    }
    (
        started.elapsed(),
        String::from_utf8_lossy(&answer).into_owned(),
    )
}

#[test]
fn headers_sent_one_byte_a_second_are_cut_off() {
    let service = Service::start(CONFIG, &[]);
    let (open, _) = trickle(
        service.http,
        "POST /json HTTP/1.1\r\nHost: x\r\n",
        b"X-Slow: aaaaaaaa\r\n",
    );
    assert!(open < CUT_OFF_WITHIN, "the connection stayed open {open:?}");
    assert_eq!(
        service
            .json(r#"{"domain":"slow","descriptors":[{"entries":[{"key":"client","value":"c"}]}]}"#)
            .0,
        200
    );
}

#[test]
fn a_body_sent_one_byte_a_second_is_cut_off() {
    let service = Service::start(CONFIG, &[]);
    let (open, answer) = trickle(
        service.http,
        "POST /json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        b" ",
    );
    assert!(open < CUT_OFF_WITHIN, "the connection stayed open {open:?}");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    assert_eq!(
        service
            .metric("ratelimit_service_bad_requests_total{api=\"json\",reason=\"body_timeout\"}"),
        Some(1.0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_past_the_open_file_limit_leave_grpc_answering() {
    // 256 files: the server keeps both listeners' connections within it.
    let service = Service::start_with(Options {
        files: vec![("config.yaml".into(), CONFIG.into())],
        file: true,
        open_files: Some(256),
        ..Options::default()
    });
    let mut idle = Vec::new();
    for _ in 0..300 {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", service.http)) {
            idle.push(stream);
        }
    }
    // Give the server time to accept them all.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    let mut client = tokio::time::timeout(Duration::from_secs(5), service.client())
        .await
        .expect("the gRPC port accepts while the HTTP one is full");
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        client.should_rate_limit(request("slow", vec![descriptor(&[("client", "c")])])),
    )
    .await
    .expect("the gRPC port answers while the HTTP one is full")
    .expect("ShouldRateLimit");
    assert_eq!(r.into_inner().overall_code, OK);
    // The idle ones time out (header timeout, 30 s), and HTTP answers new calls again.
    let mut answered = false;
    while started.elapsed() < CUT_OFF_WITHIN + Duration::from_secs(5) {
        if let Ok((200, _, _)) = http(service.http, "GET", "/healthcheck", "") {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        answered,
        "HTTP answers again once the idle connections time out"
    );
    let refused = service
        .metric("ratelimit_service_connections_refused_total{listener=\"http\"}")
        .unwrap_or(0.0);
    assert!(refused > 0.0, "connections past the cap are closed at once");
    drop(idle);
}
