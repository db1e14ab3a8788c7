//! Limits shared by many servers through Redis (feature `redis`): [`RedisLimiter`].
//!
//! "100 per minute per user" must hold across every server of a service, not per process.
//! A [`RedisLimiter`] keeps each key's state in Redis and decides every request in one
//! round trip: the algorithm's Lua script runs atomically on the server (`EVALSHA`),
//! reading and writing the state and answering with the same [`Decision`](crate::Decision)
//! as the in-process limiters, exact `retry_after` included.
//!
//! ```no_run
//! use sluicegate::redis::{RedisError, RedisLimiter};
//! use sluicegate::{algorithm::Gcra, Quota};
//!
//! # async fn run() -> Result<(), RedisError> {
//! let limit = RedisLimiter::<Gcra>::connect(Quota::per_minute(100), "redis://127.0.0.1/").await?;
//! let decision = limit.check("user:42").await?;
//! assert!(decision.is_allowed());
//! # Ok(())
//! # }
//! ```
//!
//! [`AnyRedisLimiter`] is the same limiter with its algorithm chosen at run time (from a
//! configuration, an [`AlgorithmKind`](crate::algorithm::AlgorithmKind)), as
//! [`AnyKeyedLimiter`](crate::dynamic::AnyKeyedLimiter) is in process; it writes the same
//! keys as the typed limiter of that algorithm, so the two share state.
//!
//! # Time and exactness
//!
//! By default every script reads Redis's own clock (`TIME`): one clock decides, whatever the
//! app servers' clocks say. [`RedisBuilder::clock`] sends client time instead (a
//! [`ManualClock`](crate::clock::ManualClock) in tests; its 0 is the UNIX epoch), with which
//! decisions equal the reference models on the same trace. Windows align to wall-clock
//! multiples of the period in both cases.
//!
//! Scripts count time in whole microseconds, `TIME`'s resolution, and Redis's Lua has only
//! doubles, exact to 2^53. Each script picks units in which its quota's arithmetic is whole
//! (GCRA counts 1/D µs so that `period / limit` is whole; the token bucket counts fractions
//! of a token refilled whole per µs; the windows split a period of P ns into whole units of
//! `gcd(P, 1000)` ns), and keeps every integer at or below 2^52: decisions are exact, not
//! approximate. Each `.lua` file's header states its rule, stored fields, units and range.
//! Quotas that would leave that range are refused when the limiter is built
//! ([`RedisError::Quota`], naming the bound), never mis-enforced: a period under 1 µs; a
//! burst whose GCRA backlog passes 2^51 units; a sliding window whose
//! `limit x period` passes 2^52 (per day, limits up to 52,124); a sliding log over 65,536.
//!
//! Because Redis's time moves in whole microseconds, `retry_after` is the time until the
//! first whole microsecond at which the script admits, and `reset_after` until the first
//! whole microsecond at which the state is fresh: the in-process numbers rounded up to the
//! microsecond grid. The token bucket here is exact, where the packed in-process one lags
//! an exact bucket by under one token.
//!
//! # Keys and TTLs
//!
//! A key's state is stored under `<prefix>{<key>}<algorithm><quota>`
//! ([`RedisLimiter::redis_key`]), e.g. `sluicegate:{user:42}gbewwN` for a GCRA of 100 per
//! minute with a burst of 20:
//!
//! - every key starts with the prefix (default `"sluicegate:"`; one prefix per limit);
//! - the caller's key is the hash tag, so each key's state sits in one cluster slot (braces
//!   and `%` in keys are percent-escaped; a prefix with braces is refused);
//! - HTTP front ends (the tower layer's Redis limits, the `http_server` example, the Node and
//!   Python middlewares) give the limit named `N` the prefix `sluicegate:http:N:`
//!   ([`http::redis_prefix`](crate::http::redis_prefix), feature `http`), so processes in
//!   any language share a limit by naming it alike;
//! - the algorithm's letter and a 30-bit fingerprint of the quota end the name (six
//!   characters: Redis memory per key grows with the name), so changing a quota starts from
//!   fresh state rather than misreading the old one, whose keys then expire.
//!
//! Five algorithms keep one string per key (a one-letter tag and two or three packed
//! doubles, 17 or 25 bytes); the sliding log keeps a sorted set with one 8-byte member per
//! admitted unit (at most `limit`). Every write sets a TTL equal to the time
//! until the state is fresh again, at least one second: idle keys vanish by themselves, and
//! Redis memory is bounded by the keys active within their period, without a sweeper. A key
//! holding anything else (a value of another Redis type, or a string that is not this
//! algorithm's state) is an error ([`RedisError::WrongType`], [`RedisError::Foreign`]) and
//! is left untouched: never a panic, never a reset.
//!
//! # Failures
//!
//! Every call is bounded by the limiter's timeout (default 100 ms) and returns a
//! [`RedisError`] that says what happened. The connection (redis-rs's `ConnectionManager`,
//! one multiplexed connection for all tasks) reconnects by itself. A connection error, or
//! three timeouts in a row, mark Redis down: calls then fail at once, without a round trip,
//! while one background `PING` every 100 ms waits for Redis to answer again. A script the
//! server does not know (a restart, `SCRIPT FLUSH`) is sent again with `EVAL`.
//!
//! On top, [`Fallback`] chooses what to answer during an outage: the error (the default,
//! for the HTTP layer's own policy), fail open, fail closed, or decide locally with an
//! in-process [`KeyedLimiter`](crate::KeyedLimiter) of the same algorithm and a share of
//! the quota. [`RedisBuilder::lazy`] builds a limiter while Redis is down.
//!
//! # The deny cache
//!
//! On by default ([`RedisBuilder::deny_cache`]). Once Redis denies a key, this process
//! denies that key itself until the instant a single request would be admitted, with the
//! exact numbers Redis would give (`remaining` 0, the remaining `retry_after`, and
//! `reset_after`) if no other server wrote meanwhile; other servers can only push the next
//! admission later, so it never denies what Redis would admit. The one exception, a
//! [`reset`](RedisLimiter::reset) in another process, is heard over Redis pub/sub
//! ([`RedisBuilder::reset_watch`]) and forgotten here within the message's flight; a lost
//! subscription forgets every cached denial when it resubscribes. It is aware of cost: it
//! answers requests of cost 1 and of the cost Redis denied; a request of another cost asks
//! Redis. Times are on the limiter's own timeline: a client clock's readings, exactly as
//! sent to Redis; with Redis's clock, a local monotonic clock read when the denied call was
//! sent (so a cached denial may end up to a round trip before Redis's, and then Redis is
//! asked). A [`hit`](RedisLimiter::hit) always goes to Redis (and may update the cache).
//! Under a flood from one client, Redis sees about one call per `retry_after` per server.
//! Bounded to [`RedisBuilder::deny_cache_capacity`] keys.
//!
//! # Batching
//!
//! While a call is in flight to a node (a standalone Redis, or one slot of a cluster), calls
//! that arrive for it queue; when it returns, the queue goes in one script that decides each
//! call in arrival order exactly as if it had been sent alone (same decisions and numbers; a
//! denial writes nothing; a composite group stays all-or-nothing). No timer: an idle limiter
//! sends a lone call at once. A batch carries at most 64 calls and 32 KiB, so one script
//! holds Redis for well under a millisecond (about one for the sliding log). Each call keeps
//! its own timeout;
//! a batch that fails fails each of its calls with the error it would have had alone, and
//! an error of one call (a key of another type) fails that call only. Reservations go
//! alone. [`RedisStats::batches`] counts the batches.
//!
//! # The Redis module
//!
//! The scripts' cost on Redis is mostly the Lua interpreter's, not their commands (BENCHMARKS.md,
//! "Issue 33"). `redis-module/` in the repository builds `libsluicegate_redis.so`, a Redis
//! module (tested with Redis 7.0) whose command `SLUICEGATE.DECIDE` takes a call exactly as the
//! decision script does and answers, reads and writes exactly what it would: the same replies,
//! the same stored states, the same TTL rule, so limiters with and without it can share keys.
//! Load it into Redis (`redis-server --loadmodule /path/to/libsluicegate_redis.so`, or
//! `loadmodule` in redis.conf) and build the limiter with [`RedisBuilder::module`]`(true)`.
//! It decides the fixed, anchored and sliding windows, GCRA and the leaky and token buckets;
//! calls of the sliding log (a sorted set) run the scripts. A Redis that answers that it does
//! not know the command (the module is not loaded) gets that call as a script, and every call
//! after it. Its writes reach replicas and the AOF as one `EVAL` per call that replays them
//! (each key's state and expiry), so replicas need no module; a managed Redis that loads no
//! modules keeps the scripts.
//!
//! # Composites
//!
//! [`backend::all_of`](crate::backend::all_of) decides one request against several limits
//! (per user and global, any algorithms), all-or-nothing, on Redis or mixed with in-process
//! limits. A [`RedisLimiter`] names its node through the seam's batch hook
//! ([`Backend::joint`](crate::backend::Backend::joint)): when every key is on one node
//! (standalone Redis, or one cluster slot: limits on the same key always are) the group is
//! one script, which decides every limit before writing any. Otherwise the protocol reserves
//! in order and undoes on a race, erring toward denial.
//!
//! # Redis Cluster
//!
//! [`RedisBuilder::cluster`] takes seed nodes and routes each script to its key's slot
//! (redis-rs's `ClusterConnection`, which follows resharding and failover itself). Every
//! decision still touches one key on one node. The circuit breaker is off for clusters (one
//! node down must not stop the others' slots); calls to a failed node time out, or fail
//! when the connection is refused, and the fallback applies.
//!
//! # Where Redis runs
//!
//! The URL says where Redis is: `redis://[user:password@]host:port[/db]` (an ACL user, or
//! `:password` for `requirepass`), `rediss://` for TLS (feature `redis-tls`), a Redis
//! Cluster's seed nodes with [`RedisBuilder::cluster`], or the master a set of Sentinels
//! names: `redis-sentinel://[user:password@]host1:26379,host2:26379[/db]#master`
//! (`rediss-sentinel://` for TLS), followed through failovers.
//!
//! TLS is rustls with the *ring* provider (no OpenSSL to link). It verifies the server's
//! certificate and host name against the system's roots, or against
//! [`RedisBuilder::ca_cert`]; [`RedisBuilder::client_cert`] and [`RedisBuilder::client_key`]
//! answer a server that asks for a client certificate. Files that do not fit the URL, or
//! that hold no PEM certificate or key, are [`RedisError::Config`] before anything connects.
//! A refused password, or a certificate that does not verify, is
//! [`RedisError::Unavailable`] saying why.
//!
//! Through Sentinels the URL's credentials and database are the data nodes';
//! [`RedisBuilder::sentinel_auth`] gives the Sentinels' own. The limiter asks the Sentinels
//! for the master (and checks its `ROLE`); a call that fails as a failover makes calls fail
//! (the connection refused or dropped, `READONLY`, `MASTERDOWN`) starts a refresh, and while
//! the master is down the probe asks the Sentinels again every 100 ms, so decisions resume
//! within that of the Sentinels promoting a replica: their `down-after-milliseconds`, their
//! vote, and at most 100 ms (2.3 s after a kill with `down-after-milliseconds 1000`, in
//! `tests/redis_sentinel.rs`). Calls meanwhile fail as outages, which the [`Fallback`]
//! answers. Replication is asynchronous: writes the old primary had not yet sent to its
//! replica are lost with it.
//!
//! # Metrics and logs
//!
//! With the `metrics` feature: `sluicegate_redis_call_duration_seconds{limiter}`,
//! `sluicegate_redis_errors_total{limiter, kind}`,
//! `sluicegate_redis_fallbacks_total{limiter, mode}` and
//! `sluicegate_redis_deny_cache_hits_total{limiter}`. With `tracing`: a `warn` per backend
//! error, at most once a second per limiter with a count of those suppressed, showing a
//! hash of the key, never the key. [`RedisLimiter::stats`] counts the same without either.

mod algorithm;
mod any;
mod backend;
mod batch;
mod builder;
mod composite;
mod deny_cache;
mod error;
mod fallback;
mod group;
mod health;
mod inner;
mod keys;
mod lanes;
mod limiter;
mod link;
mod params;
mod reply;
mod reset;
mod reset_watch;
mod scripts;
mod sentinel;
mod target;
mod telemetry;
mod time;
mod undo;

pub use any::AnyRedisLimiter;
pub use builder::{
    RedisBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_DENY_CACHE_CAPACITY, DEFAULT_PREFIX,
    DEFAULT_TIMEOUT,
};
pub use error::RedisError;
pub use fallback::Fallback;
pub use limiter::RedisLimiter;
pub(crate) use target::check_url;
pub use telemetry::RedisStats;
pub use time::{AnyTime, RedisTime, TimeSource};

/// Entry points for the fuzz targets (`fuzz/`), built only by `cargo fuzz` (which sets
/// `--cfg fuzzing`): not part of the API.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    /// Reads `bytes` as the client reads the module's packed reply, then each element as a
    /// group of one limit, of two, and as a reservation: errors for what is not a reply,
    /// never a panic.
    pub fn read_native_reply(bytes: &[u8]) {
        let Ok(redis::Value::Array(elements)) = super::reply::unpack_native(bytes) else {
            return;
        };
        for element in elements {
            let _ = super::reply::composite(element.clone(), 1);
            let _ = super::reply::composite(element.clone(), 2);
            if let Ok((answer, _)) = super::reply::reservation(element) {
                let _ = answer.decision(10);
            }
        }
    }
}
