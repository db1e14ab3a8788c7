//! The module among other clients and users: a peek or a denial aborts no other client's
//! `WATCH`, ACL users are granted the command by its categories where Redis has them (7.2 and
//! later) and by its name on 7.0, and Redis's allocator serves the module.

mod support;

use redis::{ConnectionLike, Value};
use support::{connect, server_with_module, server_with_module_and, RedisServer};

/// One fixed-window call on key 1 (one an hour), of `op` (`c` check, `p` peek, `h` hit).
fn call(op: u8) -> Vec<u8> {
    let mut blob = vec![op, 0, 1, 0, 1, b'f'];
    for x in [-1.0, 1.0, 1.0, 1.0, 3_600_000_000.0, 0.0] {
        blob.extend_from_slice(&f64::to_be_bytes(x));
    }
    blob
}

fn decide(con: &mut impl ConnectionLike, key: &str, op: u8) -> Value {
    let mut cmd = redis::cmd("SLUICEGATE.DECIDE");
    cmd.arg(key).arg(call(op));
    con.req_packed_command(&cmd.get_packed_command()).unwrap()
}

/// `WATCH key`, then `other` runs, then `MULTI SET x 1 EXEC`: whether the transaction ran.
fn transaction_survives(watcher: &mut redis::Connection, key: &str, other: impl FnOnce()) -> bool {
    let _: () = redis::cmd("WATCH").arg(key).query(watcher).unwrap();
    other();
    let outcome: Option<Vec<String>> = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("x")
        .arg(1)
        .query(watcher)
        .unwrap();
    outcome.is_some()
}

#[test]
fn peeks_and_denials_leave_other_clients_watch_alone() {
    let server = server_with_module();
    let mut watcher = connect(&server);
    let mut other = connect(&server);
    // The one request of the hour: written.
    decide(&mut other, "k", b'c');
    assert!(
        transaction_survives(&mut watcher, "k", || {
            decide(&mut other, "k", b'p');
        }),
        "a peek aborted another client's transaction"
    );
    assert!(
        transaction_survives(&mut watcher, "k", || {
            decide(&mut other, "k", b'c');
        }),
        "a denial (nothing written) aborted another client's transaction"
    );
    // An admitted check writes: the watcher must see that.
    assert!(
        !transaction_survives(&mut watcher, "fresh", || {
            decide(&mut other, "fresh", b'c');
        }),
        "a write left WATCH unaware"
    );
}

/// `INFO server`'s Redis version as (major, minor).
fn version(server: &RedisServer) -> (u32, u32) {
    let info = server.cli(&["INFO", "server"]);
    let version = info
        .lines()
        .find_map(|line| line.strip_prefix("redis_version:"))
        .expect("redis_version in INFO");
    let mut parts = version.trim().split('.').map(|n| n.parse().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

/// Whether `user` (password `pw`) may run the command.
fn permitted(server: &RedisServer, user: &str) -> bool {
    let url = format!("redis://{user}:pw@127.0.0.1:{}/", server.port());
    let mut con = redis::Client::open(url)
        .and_then(|client| client.get_connection())
        .expect("an ACL user's connection");
    match decide(&mut con, &format!("acl:{user}"), b'c') {
        Value::BulkString(_) => true,
        other if format!("{other:?}").contains("NOPERM") => false,
        other => panic!("{user}: {other:?}"),
    }
}

#[test]
fn acl_users_are_granted_the_command_as_documented() {
    let server = server_with_module();
    for (user, rule) in [
        ("writer", "+@write"),
        ("reader", "+@all -@write"),
        ("named", "+sluicegate.decide"),
    ] {
        let mut args = vec!["ACL", "SETUSER", user, "on", ">pw", "~*"];
        args.extend(rule.split(' '));
        assert_eq!(server.cli(&args), "OK");
    }
    // Granting the command by name works on every version.
    assert!(permitted(&server, "named"));
    if version(&server) >= (7, 2) {
        // The command is in @write.
        assert!(permitted(&server, "writer"));
        assert!(!permitted(&server, "reader"));
    } else {
        // Redis 7.0 and 7.1 let no module command join a category (README.md, "ACL").
        assert!(!permitted(&server, "writer"));
        assert!(permitted(&server, "reader"));
    }
}

#[test]
fn the_module_allocates_through_redis() {
    let log = std::env::temp_dir().join(format!(
        "sluicegate-module-alloc-{}.log",
        std::process::id()
    ));
    let server = server_with_module_and(&["--logfile", log.to_str().unwrap()]);
    let mut con = connect(&server);
    assert!(matches!(decide(&mut con, "k", b'c'), Value::BulkString(_)));
    drop(server);
    let text = std::fs::read_to_string(&log).expect("redis-server's log");
    let _ = std::fs::remove_file(&log);
    assert!(
        text.contains("sluicegate: the module allocates through Redis's allocator"),
        "{text}"
    );
}
