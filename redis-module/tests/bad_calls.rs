//! Calls the client never sends get an error reply, and Redis goes on: duplicate keys, a
//! truncated or trailing blob, a key index out of range, no blob, an algorithm the module
//! leaves to the scripts; a call beyond a cap (`limits.rs`), refused naming it; a value of no
//! state's length, refused unread.

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

#[test]
fn every_cap_is_refused_naming_it_and_writes_nothing() {
    use sluicegate_redis::limits::{MAX_ARGUMENT_BYTES, MAX_GROUPS, MAX_KEYS, MAX_MEMBERS};
    let server = server_with_module();
    let mut con = connect(&server);
    // 30 MB of empty groups once made Redis allocate 1.27 GB for one call.
    let empty_groups = b"c\0\0".repeat(10_000_000);
    let reply = decide(&mut con, &["a"], Some(&empty_groups));
    assert!(
        error_text(&reply).contains(&format!("at most {MAX_ARGUMENT_BYTES} bytes")),
        "{reply:?}"
    );
    let reply = decide(&mut con, &["a"], Some(&b"c\0\0".repeat(MAX_GROUPS + 1)));
    assert!(
        error_text(&reply).contains(&format!("at most {MAX_GROUPS} groups")),
        "{reply:?}"
    );
    let names: Vec<String> = (0..=MAX_KEYS).map(|i| format!("k{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let reply = decide(&mut con, &names, Some(&group(1, b'f')));
    assert!(
        error_text(&reply).contains(&format!("at most {MAX_KEYS} keys")),
        "{reply:?}"
    );
    let mut wide = group(1, b'f');
    let member = wide[3..].to_vec();
    wide[1..3].copy_from_slice(&(MAX_MEMBERS as u16 + 1).to_be_bytes());
    for _ in 0..MAX_MEMBERS {
        wide.extend_from_slice(&member);
    }
    let reply = decide(&mut con, &["a"], Some(&wide));
    assert!(
        error_text(&reply).contains(&format!("at most {MAX_MEMBERS} members")),
        "{reply:?}"
    );
    let keys: i64 = redis::cmd("DBSIZE").query(&mut con).unwrap();
    assert_eq!(keys, 0, "nothing written by a refused call");
    // At the caps, a call is decided: the widest group, and the most keys.
    let mut widest = group(1, b'f');
    widest[1..3].copy_from_slice(&(MAX_MEMBERS as u16).to_be_bytes());
    for _ in 1..MAX_MEMBERS {
        widest.extend_from_slice(&member);
    }
    let reply = decide(&mut con, &["a"], Some(&widest));
    assert!(matches!(reply, Value::BulkString(_)), "{reply:?}");
    let names: Vec<String> = (0..MAX_KEYS).map(|i| format!("k{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let reply = decide(&mut con, &names, Some(&group(MAX_KEYS as u16, b'f')));
    assert!(matches!(reply, Value::BulkString(_)), "{reply:?}");
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
}

/// A string of no state's length is refused (`SGFOREIGN`, as the script refuses it) without
/// being read: Redis would otherwise turn a short string's compact encoding into a raw copy
/// to hand the module its bytes.
#[test]
fn a_value_of_no_states_length_is_refused_unread() {
    let server = server_with_module();
    let mut con = connect(&server);
    for (key, value) in [("short", "not a state"), ("number", "12345")] {
        let _: () = redis::cmd("SET")
            .arg(key)
            .arg(value)
            .query(&mut con)
            .unwrap();
        let before: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg(key)
            .query(&mut con)
            .unwrap();
        let Value::Array(items) = decide(&mut con, &[key], Some(&group(1, b'f'))) else {
            panic!("an array")
        };
        assert!(error_text(&items[0]).contains("SGFOREIGN"), "{items:?}");
        let after: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg(key)
            .query(&mut con)
            .unwrap();
        assert_eq!(before, after, "{key}: the value was left as it was");
        let kept: String = redis::cmd("GET").arg(key).query(&mut con).unwrap();
        assert_eq!(kept, value);
    }
}
