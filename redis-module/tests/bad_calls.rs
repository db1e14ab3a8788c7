//! Calls the client never sends get an error reply, and Redis goes on: duplicate keys, a
//! truncated or trailing blob, a key index out of range, no blob, an algorithm the module
//! leaves to the scripts.

mod support;

use redis::{ConnectionLike, Value};
use support::{connect, server_with_module};

/// One fixed-window check of key `index` (from 1).
fn group(index: u16, letter: u8) -> Vec<u8> {
    let mut blob = vec![b'c', 0, 1];
    blob.extend_from_slice(&index.to_be_bytes());
    blob.push(letter);
    for x in [-1.0, 1.0, 10.0, 1.0, 1e6, 0.0] {
        blob.extend_from_slice(&f64::to_be_bytes(x));
    }
    blob
}

fn decide(con: &mut redis::Connection, keys: &[&str], blob: Option<&[u8]>) -> Value {
    let mut cmd = redis::cmd("SLUICEGATE.DECIDE");
    cmd.arg(keys);
    if let Some(blob) = blob {
        cmd.arg(blob);
    }
    con.req_packed_command(&cmd.get_packed_command()).unwrap()
}

fn error_text(value: &Value) -> String {
    match value {
        Value::ServerError(error) => format!("{error:?}"),
        other => panic!("an error reply, not {other:?}"),
    }
}

#[test]
fn every_malformed_call_is_refused_and_writes_nothing() {
    let server = server_with_module();
    let mut con = connect(&server);
    let good = group(1, b'f');
    let truncated = &good[..good.len() - 3];
    let mut trailing = good.clone();
    trailing.push(0);
    let cases: Vec<(&str, Vec<&str>, Vec<u8>)> = vec![
        ("duplicate keys", vec!["a", "a"], good.clone()),
        ("a truncated member", vec!["a"], truncated.to_vec()),
        ("a trailing byte", vec!["a"], trailing),
        ("a key index out of range", vec!["a"], group(2, b'f')),
        ("index 0", vec!["a"], group(0, b'f')),
    ];
    for (what, keys, blob) in cases {
        let reply = decide(&mut con, &keys, Some(&blob));
        assert!(
            error_text(&reply).contains("malformed"),
            "{what}: {reply:?}"
        );
    }
    // No blob at all: a key and nothing else is the wrong number of arguments.
    let reply = decide(&mut con, &["a"], None);
    assert!(error_text(&reply).contains("wrong number"), "{reply:?}");
    let keys: i64 = redis::cmd("DBSIZE").query(&mut con).unwrap();
    assert_eq!(keys, 0, "nothing written by a refused call");
    // An algorithm the module leaves to the scripts fails its own group only.
    let mut blob = group(1, b's');
    blob.extend(group(1, b'f'));
    let Value::Array(items) = decide(&mut con, &["a"], Some(&blob)) else {
        panic!("an array")
    };
    assert!(
        error_text(&items[0]).contains("unknown algorithm 115"),
        "{items:?}"
    );
    assert!(matches!(&items[1], Value::BulkString(numbers) if numbers.len() == 48));
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
}
