//! Shutdown on `SIGTERM` and `SIGINT`: every call in flight at the signal gets its answer (or
//! a refused connection, never a broken one), a `/json` call still being sent is answered
//! during the grace period, `/healthcheck` never answers 200 while draining (a readiness probe
//! fails), new connections are refused, and the process exits 0 (after at most the grace
//! period when a client holds a connection open).

#[path = "support/service.rs"]
mod service;

use service::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use tonic::Status;

const CONFIG: &str = "domain: ops
descriptors:
  - key: steady
    rate_limit: {unit: hour, requests_per_unit: 1000000000}
";

/// Concurrent gRPC callers: each always has a call outstanding, so about this many calls are
/// in flight whenever the signal arrives.
const CALLERS: usize = 16;

/// How one call ended.
#[derive(Debug)]
enum Outcome {
    Answered,
    /// Refused before the server took it: a refused connection, or a stream the server
    /// refused (HTTP/2 `REFUSED_STREAM`, which says it did no work): safe to retry elsewhere.
    Refused(Status),
    /// Cut after the server took it (a reset connection, a stream closed mid-call).
    Broken(Status),
}

impl Outcome {
    /// How it ended, in words.
    fn describe(&self) -> String {
        match self {
            Outcome::Answered => "answered".into(),
            Outcome::Refused(status) => format!("refused: {status}"),
            Outcome::Broken(status) => format!("broken: {status}"),
        }
    }
}

/// One call: when it was sent, when it ended, and how.
#[derive(Debug)]
struct Call {
    sent: Instant,
    ended: Instant,
    outcome: Outcome,
}

/// True when `status` comes from a connection the server refused or a stream it refused.
fn refused(status: &Status) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(status);
    while let Some(error) = source {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        if let Some(h2) = error.downcast_ref::<h2::Error>() {
            if h2.reason() == Some(h2::Reason::REFUSED_STREAM) {
                return true;
            }
        }
        source = error.source();
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_every_call_in_flight_with_grpc_on_threads_of_its_own() {
    every_call_in_flight_is_answered("TERM", &["--workers", "3"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_every_call_in_flight_with_everything_on_one_thread() {
    every_call_in_flight_is_answered("TERM", &["--workers", "1"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_answers_every_call_in_flight() {
    every_call_in_flight_is_answered("INT", &[]).await;
}

/// [`CALLERS`] callers call without pause; once each has been answered once, `signal` is sent.
/// Every call sent before the signal and still unanswered when it was sent must end answered
/// or refused.
async fn every_call_in_flight_is_answered(signal: &str, flags: &[&str]) {
    let mut service = Service::start(CONFIG, flags);
    let grpc = service.grpc;
    let (answered_once, mut all_answered) = tokio::sync::mpsc::channel::<()>(CALLERS);
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let answered_once = answered_once.clone();
            tokio::spawn(async move {
                use sluicegate_server::proto::rate_limit_service_client::RateLimitServiceClient;
                let mut client =
                    RateLimitServiceClient::connect(format!("http://127.0.0.1:{grpc}"))
                        .await
                        .expect("the server is up");
                let mut calls = Vec::new();
                // Calls until the first that is not answered (the server is gone after it).
                loop {
                    let sent = Instant::now();
                    let result = client
                        .should_rate_limit(request("ops", vec![descriptor(&[("steady", "t")])]))
                        .await;
                    let ended = Instant::now();
                    let outcome = match result {
                        Ok(_) => Outcome::Answered,
                        Err(status) if refused(&status) => Outcome::Refused(status),
                        Err(status) => Outcome::Broken(status),
                    };
                    let last = !matches!(outcome, Outcome::Answered);
                    calls.push(Call {
                        sent,
                        ended,
                        outcome,
                    });
                    if calls.len() == 1 {
                        let _ = answered_once.send(()).await;
                    }
                    if last {
                        return calls;
                    }
                }
            })
        })
        .collect();
    drop(answered_once);
    for _ in 0..CALLERS {
        all_answered
            .recv()
            .await
            .expect("every caller is answered once");
    }

    let signalled = Instant::now();
    service.signal(signal);
    let status = tokio::task::block_in_place(|| service.wait_exit());
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        service.logs()
    );
    let mut in_flight = Vec::new();
    for caller in callers {
        let calls = caller.await.unwrap();
        in_flight.extend(
            calls
                .into_iter()
                .filter(|call| call.sent < signalled && call.ended > signalled),
        );
    }
    // Each caller had a call out at the signal unless it was between two calls right then.
    assert!(
        !in_flight.is_empty(),
        "no call was in flight at the signal: the test checked nothing"
    );
    let broken: Vec<String> = in_flight
        .iter()
        .filter(|call| matches!(call.outcome, Outcome::Broken(_)))
        .map(|call| call.outcome.describe())
        .collect();
    assert!(
        broken.is_empty(),
        "{} of the {} calls in flight at SIG{signal} were cut: {broken:#?}\n{}",
        broken.len(),
        in_flight.len(),
        service.logs()
    );
    assert!(
        service.logs().contains("shutting down"),
        "{}",
        service.logs()
    );
    assert!(TcpStream::connect(("127.0.0.1", service.http)).is_err());
    assert!(TcpStream::connect(("127.0.0.1", service.grpc)).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_a_grpc_call_whose_message_is_still_coming_with_grpc_on_threads_of_its_own()
{
    a_grpc_call_in_flight_is_answered("TERM", &["--workers", "3"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_answers_a_grpc_call_whose_message_is_still_coming_with_everything_on_one_thread() {
    a_grpc_call_in_flight_is_answered("INT", &["--workers", "1"]).await;
}

/// A gRPC call held in flight across the signal, by HTTP/2 by hand: its headers and half its
/// message are sent, and a PING answered (so the server has read them: the call is its own,
/// past any GOAWAY's last stream); once the server logs that it is draining, the rest of the
/// message goes, and the call must be answered (status 0 and the decision), not cut.
async fn a_grpc_call_in_flight_is_answered(signal: &str, flags: &[&str]) {
    use bytes::Bytes;
    use prost::Message;
    let mut service = Service::start(CONFIG, flags);
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", service.grpc))
        .await
        .unwrap();
    let (sender, mut connection) = h2::client::Builder::new()
        .handshake::<_, Bytes>(tcp)
        .await
        .expect("an HTTP/2 connection");
    let mut ping_pong = connection.ping_pong().expect("the connection's ping");
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut sender = sender.ready().await.unwrap();
    let call = http::Request::post(
        "http://127.0.0.1/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
    )
    .header("content-type", "application/grpc")
    .header("te", "trailers")
    .body(())
    .unwrap();
    let (response, mut body) = sender.send_request(call, false).unwrap();
    // The gRPC frame: uncompressed, its length, the message.
    let message = request("ops", vec![descriptor(&[("steady", "h2")])]).encode_to_vec();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message);
    let (first, rest) = frame.split_at(frame.len() / 2);
    body.send_data(Bytes::copy_from_slice(first), false)
        .unwrap();
    ping_pong
        .ping(h2::Ping::opaque())
        .await
        .expect("the server read the call");

    service.signal(signal);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !service.logs().contains("shutting down") {
        assert!(
            Instant::now() < deadline,
            "no shutdown:\n{}",
            service.logs()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    body.send_data(Bytes::copy_from_slice(rest), true).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(30), response)
        .await
        .expect("an answer within the grace period")
        .unwrap_or_else(|e| panic!("the call was cut: {e}\n{}", service.logs()));
    assert_eq!(response.status(), 200);
    let mut answer = response.into_body();
    let mut bytes = Vec::new();
    while let Some(chunk) = answer.data().await {
        let chunk = chunk.unwrap_or_else(|e| panic!("the answer was cut: {e}"));
        let _ = answer.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    let trailers = answer
        .trailers()
        .await
        .unwrap_or_else(|e| panic!("the answer was cut: {e}"))
        .expect("trailers");
    assert_eq!(trailers["grpc-status"], "0", "{trailers:?}");
    let decided = sluicegate_server::proto::RateLimitResponse::decode(&bytes[5..])
        .expect("a RateLimitResponse");
    assert_eq!(decided.overall_code, OK);
    drop((sender, driver));
    let status = tokio::task::block_in_place(|| service.wait_exit());
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        service.logs()
    );
}

#[test]
fn sigterm_answers_a_json_call_still_being_sent_and_no_healthcheck_passes_meanwhile() {
    a_json_call_is_answered_during_the_grace_period("TERM");
}

#[test]
fn sigint_answers_a_json_call_still_being_sent_and_no_healthcheck_passes_meanwhile() {
    a_json_call_is_answered_during_the_grace_period("INT");
}

/// Reads from `stream` until `done` holds for what was read, or the stream ends.
fn read_until(stream: &mut TcpStream, done: impl Fn(&str) -> bool) -> String {
    try_read_until(stream, done)
        .unwrap_or_else(|(e, read)| panic!("reading: {e}; read so far: {read:?}"))
}

/// Reads from `stream` until `done` holds for what was read, or the stream ends; an error
/// comes with what was read before it.
fn try_read_until(
    stream: &mut TcpStream,
    done: impl Fn(&str) -> bool,
) -> Result<String, (std::io::Error, String)> {
    let mut raw = Vec::new();
    let mut buffer = [0u8; 4096];
    while !done(&String::from_utf8_lossy(&raw)) {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buffer[..n]),
            Err(e) => return Err((e, String::from_utf8_lossy(&raw).into_owned())),
        }
    }
    Ok(String::from_utf8_lossy(&raw).into_owned())
}

/// A `/json` call whose body is still to come when `signal` arrives (its head was read: the
/// server asked for the body with `100 Continue`), and a connection accepted before the signal
/// that has sent nothing yet: while draining, the first gets its answer once its body comes,
/// the second's `/healthcheck` does not pass (503, or the connection closed: a readiness probe
/// fails either way), and a new connection is refused; then the server exits 0.
fn a_json_call_is_answered_during_the_grace_period(signal: &str) {
    let mut service = Service::start(CONFIG, &["--shutdown-grace", "60"]);
    // Connected first, so accepted first (the listen queue is in order): by the time the
    // server reads the `/json` head below, it has taken this connection too.
    let mut probe = TcpStream::connect(("127.0.0.1", service.http)).unwrap();
    let mut call = TcpStream::connect(("127.0.0.1", service.http)).unwrap();
    for stream in [&probe, &call] {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
    }
    let body = r#"{"domain":"ops","descriptors":[{"entries":[{"key":"steady","value":"j"}]}]}"#;
    write!(
        call,
        "POST /json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    )
    .unwrap();
    let head = read_until(&mut call, |read| read.contains("\r\n\r\n"));
    assert!(head.starts_with("HTTP/1.1 100"), "{head:?}");

    service.signal(signal);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !service.logs().contains("shutting down") {
        assert!(
            Instant::now() < deadline,
            "no shutdown:\n{}",
            service.logs()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        service.try_wait().is_none(),
        "exited with a call in flight:\n{}",
        service.logs()
    );
    let new = TcpStream::connect(("127.0.0.1", service.http));
    assert!(new.is_err(), "a connection made while draining is refused");

    // A write to a connection the server closed may itself fail: that too is no 200.
    let health = write!(
        probe,
        "GET /healthcheck HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    )
    .map_err(|e| (e, String::new()))
    .and_then(|()| try_read_until(&mut probe, |read| read.contains("\r\n\r\n")));
    match &health {
        Ok(answer) => assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 503"),
            "{answer:?}\n{}",
            service.logs()
        ),
        Err((e, read)) => assert!(read.is_empty(), "{e}: {read:?}"),
    }

    call.write_all(body.as_bytes()).unwrap();
    let answer = read_until(&mut call, |read| read.ends_with('}'));
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains(r#""overallCode":"OK""#),
        "{answer:?}\n{}",
        service.logs()
    );
    drop((probe, call));
    let status = service.wait_exit();
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        service.logs()
    );
}

#[test]
fn a_client_that_keeps_its_connection_open_does_not_hold_the_exit_beyond_the_grace() {
    let mut service = Service::start(CONFIG, &["--shutdown-grace", "1"]);
    // A connection accepted (a first request answered on it) that then sends half a request
    // and nothing more: it holds the drain until the grace period ends.
    let mut held = TcpStream::connect(("127.0.0.1", service.http)).unwrap();
    write!(held, "GET /healthcheck HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    held.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let first = read_until(&mut held, |read| {
        read.ends_with("OK\n") || read.ends_with("ok\n")
    });
    assert!(first.starts_with("HTTP/1.1 200"), "{first:?}");
    write!(
        held,
        "POST /json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: 10\r\n\r\n{{"
    )
    .unwrap();
    let started = Instant::now();
    service.signal("TERM");
    let status = service.wait_exit();
    assert!(status.success(), "{status}");
    // It waited out the grace period (the connection held it), and a real timer ended it:
    // `wait_exit` allows 30 s, so a server that ignored the grace would fail there.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "exited after {:?}, before the grace ended:\n{}",
        started.elapsed(),
        service.logs()
    );
    assert!(
        service.logs().contains("exiting anyway"),
        "{}",
        service.logs()
    );
}
