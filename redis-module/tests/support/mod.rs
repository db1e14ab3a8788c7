//! What the module's tests share: the module's file, a `redis-server` that loads it, and the
//! Lua decision script it must match.
#![allow(dead_code)]

#[path = "../../../tests/support/redis_server.rs"]
pub mod redis_server;

pub use redis_server::RedisServer;
use std::path::PathBuf;

/// The module cargo built beside this test (`target/<profile>/libsluicegate_redis.so`).
pub fn module_path() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let name = format!(
        "{}sluicegate_redis{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    [
        deps.join(&name),
        deps.parent().expect("target/<profile>").join(&name),
    ]
    .into_iter()
    .find(|path| path.exists())
    .unwrap_or_else(|| {
        panic!("{name} is built with the tests (cargo test -p sluicegate-redis-module)")
    })
}

/// A `redis-server` with the module loaded.
pub fn server_with_module() -> RedisServer {
    server_with_module_and(&[])
}

/// The same with more `redis-server` arguments.
pub fn server_with_module_and(extra: &[&str]) -> RedisServer {
    let path = module_path();
    let mut args = vec!["--loadmodule", path.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(extra);
    RedisServer::start_with(&args)
}

pub fn connect(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .and_then(|client| client.get_connection())
        .expect("a connection to the test's redis-server")
}

macro_rules! lua {
    ($($file:literal),*) => {
        concat!($(include_str!(concat!("../../../src/redis/lua/", $file)), "\n"),*)
    };
}

/// entry.lua over every rule, as the library's `any` script is built (src/redis/scripts.rs).
pub const SCRIPT: &str = concat!(
    lua!(
        "prelude.lua",
        "emission.lua",
        "gcra.lua",
        "leaky_bucket.lua",
        "token_bucket.lua",
        "window.lua",
        "fixed_window.lua",
        "anchored_window.lua",
        "sliding_window.lua",
        "sliding_log.lua"
    ),
    "local deciders = {[103] = decide_gcra, [116] = decide_token_bucket, ",
    "[108] = decide_leaky_bucket, [102] = decide_fixed_window, [97] = decide_anchored_window, ",
    "[119] = decide_sliding_window, [115] = decide_sliding_log, }\n",
    include_str!("../../../src/redis/lua/entry.lua"),
);

/// The module's reply in the shape of the script's: a packed reply (one string, see
/// `reply.rs`) as the array of elements it packs; any other reply as it came.
pub fn expand(reply: redis::Value) -> redis::Value {
    use redis::Value;
    let Value::BulkString(bytes) = reply else {
        return reply;
    };
    let elements = sluicegate_redis::reply::unpack(&bytes)
        .unwrap_or_else(|| panic!("a packed reply: {bytes:?}"));
    let element = |mut parts: Vec<Vec<u8>>| {
        if parts.len() == 1 {
            Value::BulkString(parts.pop().expect("one part"))
        } else {
            Value::Array(parts.into_iter().map(Value::BulkString).collect())
        }
    };
    Value::Array(elements.into_iter().map(element).collect())
}
