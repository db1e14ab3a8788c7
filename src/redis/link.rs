//! [`Link`]: the connection a limiter talks through, with its timeout, its script calls and
//! its health.
//!
//! Standalone Redis goes through redis-rs's `ConnectionManager`: one multiplexed connection
//! for every task, reconnecting by itself. A cluster goes through `ClusterConnection`, which
//! routes each script to the node of its keys' slot and follows the cluster's changes. A
//! master named by Sentinels goes through a `ConnectionManager` to it that moves to the new
//! master after a failover (`sentinel.rs`). Where and how to connect (TLS files included)
//! is `target.rs`'s.
//! Every call is wrapped in `tokio::time::timeout`, so it returns within the limiter's timeout
//! whatever the network does. The link keeps a [`Health`] (a circuit breaker) and runs its
//! probe; the breaker knows nothing of the link.

use super::error::{classify, RedisError};
use super::health::{Health, PROBE_INTERVAL};
use super::reply;
use super::scripts::Script;
use super::sentinel::SentinelConn;
use super::target::{self, redact, SentinelAuth, SentinelUrl, Tls};
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::{ClusterClient, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ErrorKind, ServerErrorKind, ToRedisArgs, Value};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::Notify;

/// How to reach Redis.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// One URL, or for a cluster a comma-separated list of seed nodes.
    pub(crate) url: String,
    pub(crate) cluster: bool,
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) lazy: bool,
    /// TLS files for a `rediss` URL.
    pub(crate) tls: Tls,
    /// Credentials for the Sentinels of a Sentinel URL.
    pub(crate) sentinel_auth: SentinelAuth,
}

impl Endpoint {
    /// The nodes of a cluster's seed list.
    fn nodes(&self) -> Vec<&str> {
        self.url
            .split(',')
            .map(str::trim)
            .filter(|node| !node.is_empty())
            .collect()
    }

    /// Equal for limiters that reach the same Redis the same way: their keys can share one
    /// script call.
    pub(crate) fn identity(&self) -> String {
        let kind = if self.cluster {
            "cluster"
        } else if target::is_sentinel(&self.url) {
            "sentinel"
        } else {
            "standalone"
        };
        format!("{kind} {}", self.nodes().join(","))
    }
}

#[derive(Clone)]
enum Conn {
    Standalone(ConnectionManager),
    Cluster(ClusterConnection),
    Sentinel(Arc<SentinelConn>),
}

impl Conn {
    /// Sends `cmd`; an error reply comes back as `Err` (the raw connection returns it as a
    /// value). Errors inside an array stay there: the batch script answers each call's error
    /// in its own element.
    async fn query(&mut self, cmd: &Cmd) -> redis::RedisResult<Value> {
        let reply = match self {
            Conn::Standalone(conn) => conn.req_packed_command(cmd).await,
            Conn::Cluster(conn) => conn.req_packed_command(cmd).await,
            Conn::Sentinel(conn) => conn.query(cmd).await,
        };
        match reply? {
            Value::ServerError(error) => Err(error.into()),
            value => Ok(value),
        }
    }
}

/// One argument of a script call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

/// A connection to Redis, shared by the clones of a limiter (and by its probe task).
pub(crate) struct Link {
    conn: Conn,
    identity: String,
    timeout: Duration,
    connect_timeout: Duration,
    pub(crate) health: Health,
    /// A lazy link whose first probe has not answered yet: calls wait for that answer
    /// rather than fail, so a service's first requests are decided on Redis.
    starting: AtomicBool,
    /// Wakes the calls waiting on the first probe.
    settled: Notify,
    /// Why the probe's last `PING` failed, for the errors of calls failed fast meanwhile
    /// (a refused password says so, rather than "not connected").
    last_failure: Mutex<Option<String>>,
    /// How the link was made: its subscribers (the reset watch) connect alike.
    endpoint: Endpoint,
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("endpoint", &redact(&self.identity))
            .field("timeout", &self.timeout)
            .field("available", &self.health.is_up())
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Connects (or, lazily, prepares to). A standalone link that is not lazy answers a
    /// `PING` within the connect timeout or fails; a lazy one starts unavailable and probes
    /// in the background until Redis answers.
    pub(crate) async fn connect(endpoint: &Endpoint) -> Result<Arc<Link>, RedisError> {
        if endpoint.timeout.is_zero() || endpoint.connect_timeout.is_zero() {
            return Err(RedisError::config("timeouts must be longer than zero"));
        }
        endpoint.tls.check(&endpoint.url)?;
        let conn = if target::is_sentinel(&endpoint.url) {
            if endpoint.cluster {
                return Err(RedisError::config(
                    "a Sentinel URL names one master: it cannot be a cluster",
                ));
            }
            Self::sentinel(endpoint)?
        } else if endpoint.cluster {
            Self::cluster(endpoint).await?
        } else {
            Self::standalone(endpoint)?
        };
        let link = Arc::new(Link {
            conn,
            identity: endpoint.identity(),
            timeout: endpoint.timeout,
            connect_timeout: endpoint.connect_timeout,
            // A cluster connection fails over per node by itself: a breaker for the whole
            // cluster would stop every slot for one node's outage.
            health: Health::new(!endpoint.cluster && endpoint.lazy, endpoint.cluster),
            starting: AtomicBool::new(!endpoint.cluster && endpoint.lazy),
            settled: Notify::new(),
            last_failure: Mutex::new(None),
            endpoint: endpoint.clone(),
        });
        if endpoint.lazy {
            link.start_probe();
        } else if !endpoint.cluster {
            let ping = tokio::time::timeout(endpoint.connect_timeout, link.ping());
            match ping.await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => return Err(error),
                Err(_) => {
                    return Err(RedisError::unavailable(format!(
                        "no answer from {} within the connect timeout of {:?}",
                        redact(&endpoint.url),
                        endpoint.connect_timeout
                    )))
                }
            }
        }
        Ok(link)
    }

    /// The `ConnectionManager` settings of a link to one node.
    fn manager_config(endpoint: &Endpoint) -> ConnectionManagerConfig {
        // Few, quick reconnection attempts: while Redis is down the limiter does not send
        // calls (the breaker fails them fast) and its probe asks again every interval, so
        // a long backoff inside the manager would only delay recovery. No response timeout
        // of its own: `eval` bounds the whole call (connection wait included) with one timer.
        ConnectionManagerConfig::new()
            .set_response_timeout(None)
            .set_connection_timeout(Some(endpoint.connect_timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(20))
            .set_max_delay(Duration::from_millis(200))
    }

    fn standalone(endpoint: &Endpoint) -> Result<Conn, RedisError> {
        let client = target::node_client(&endpoint.url, &endpoint.tls)?;
        ConnectionManager::new_lazy_with_config(client, Self::manager_config(endpoint))
            .map(Conn::Standalone)
            .map_err(|e| RedisError::config(format!("cannot use {}: {e}", redact(&endpoint.url))))
    }

    fn sentinel(endpoint: &Endpoint) -> Result<Conn, RedisError> {
        let url = SentinelUrl::parse(&endpoint.url)?;
        let conn = SentinelConn::new(
            &url,
            &endpoint.tls,
            &endpoint.sentinel_auth,
            Self::manager_config(endpoint),
            endpoint.connect_timeout,
        )?;
        Ok(Conn::Sentinel(Arc::new(conn)))
    }

    async fn cluster(endpoint: &Endpoint) -> Result<Conn, RedisError> {
        let certificates = target::cluster_certificates(&endpoint.url, &endpoint.tls)?;
        let builder = ClusterClient::builder(endpoint.nodes());
        #[cfg(feature = "redis-tls")]
        let builder = match certificates {
            Some(certificates) => builder.certs(certificates),
            None => builder,
        };
        #[cfg(not(feature = "redis-tls"))]
        let _ = certificates;
        let client = builder
            .retries(2)
            .min_retry_wait(10)
            .max_retry_wait(100)
            .connection_timeout(endpoint.connect_timeout)
            .response_timeout(endpoint.timeout)
            .build()
            .map_err(|e| {
                RedisError::config(format!("bad cluster nodes {}: {e}", redact(&endpoint.url)))
            })?;
        let config = ClusterConfig::new()
            .set_connection_timeout(endpoint.connect_timeout)
            .set_response_timeout(endpoint.timeout);
        if endpoint.lazy {
            return Ok(Conn::Cluster(
                client.get_pending_async_connection_with_config(config),
            ));
        }
        let connect = client.get_async_connection_with_config(config);
        match tokio::time::timeout(endpoint.connect_timeout, connect).await {
            Ok(Ok(conn)) => Ok(Conn::Cluster(conn)),
            Ok(Err(e)) => Err(classify(&e, "", endpoint.connect_timeout)),
            Err(_) => Err(RedisError::unavailable(format!(
                "no answer from the cluster {} within the connect timeout of {:?}",
                redact(&endpoint.url),
                endpoint.connect_timeout
            ))),
        }
    }

    /// The identity of the endpoint (see [`Endpoint::identity`]).
    pub(crate) fn identity(&self) -> &str {
        &self.identity
    }

    /// True for a cluster connection.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.conn, Conn::Cluster(_))
    }

    /// The per-call timeout.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Ok when calls should go to Redis; `Unavailable` at once while it is known to be down.
    /// A lazy link that has not heard from Redis yet waits for its first probe (within the
    /// call timeout): not knowing yet is not an outage, and answering a new service's first
    /// requests by the fallback would let them all through.
    pub(crate) async fn ready(&self) -> Result<(), RedisError> {
        if self.health.is_up() {
            return Ok(());
        }
        if self.starting.load(Ordering::Acquire) {
            // Registered before the second look, so the probe's wake-up cannot be missed.
            let settled = self.settled.notified();
            if self.starting.load(Ordering::Acquire) {
                let _ = tokio::time::timeout(self.timeout, settled).await;
            }
            if self.health.is_up() {
                return Ok(());
            }
        }
        let last = self.last_failure.lock().unwrap_or_else(|e| e.into_inner());
        Err(RedisError::unavailable(match last.as_deref() {
            Some(why) => format!("not connected (reconnecting in the background; last: {why})"),
            None => "not connected (reconnecting in the background)".to_owned(),
        }))
    }

    /// Clients for subscribing to pub/sub channels on this Redis: the one node, a cluster's
    /// seeds (every node hears every `PUBLISH`), or the master the Sentinels name now.
    pub(crate) async fn subscriber_clients(&self) -> Vec<redis::Client> {
        match &self.conn {
            Conn::Sentinel(sentinel) => sentinel.master_client().await.into_iter().collect(),
            Conn::Cluster(_) => (self.endpoint.nodes().into_iter())
                .filter_map(|node| target::node_client(node, &self.endpoint.tls).ok())
                .collect(),
            Conn::Standalone(_) => target::node_client(&self.endpoint.url, &self.endpoint.tls)
                .into_iter()
                .collect(),
        }
    }

    /// The first probe has answered (either way): calls stop waiting for it.
    fn settle(&self) {
        if self.starting.swap(false, Ordering::AcqRel) {
            self.settled.notify_waiters();
        }
    }

    /// Runs `script` on `keys` with `args`: one round trip (two when the server has to be
    /// taught the script), within the timeout. Fails fast while the link is known to be down.
    pub(crate) async fn eval<K: AsRef<str> + ToRedisArgs>(
        self: &Arc<Self>,
        script: &Script,
        keys: &[K],
        args: &[Arg<'_>],
    ) -> Result<Value, RedisError> {
        self.ready().await?;
        // The script runs by hand rather than through redis-rs's `ScriptInvocation`, which
        // would work over both connections, hashes a script once and leaves us its error to
        // classify, but on `NOSCRIPT` sends `SCRIPT LOAD` and then `EVALSHA` again: three
        // round trips where `EVAL` (which runs the script and caches it) takes two, and on a
        // cluster `SCRIPT LOAD` has no key, so `ClusterConnection` sends it to every node and
        // fails unless all answer: one node down would fail calls for every slot, where
        // `EVAL` goes to the key's node only. It also copies each key and argument into a
        // `Vec<u8>` of its own per call before building the command; `command` writes them
        // into the command directly.
        let call = async {
            let mut conn = self.conn.clone();
            let sha = command("EVALSHA", &script.sha, keys, args);
            match conn.query(&sha).await {
                Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    conn.query(&command("EVAL", script.code, keys, args)).await
                }
                other => other,
            }
        };
        self.within(keys, call).await
    }

    /// `SLUICEGATE.DECIDE keys... calls`: the decision `entry.lua` would make, by the
    /// sluicegate Redis module. `Ok(None)`: this node has no such command.
    pub(crate) async fn decide_natively<K: AsRef<str> + ToRedisArgs>(
        self: &Arc<Self>,
        keys: &[K],
        calls: &[u8],
    ) -> Result<Option<Value>, RedisError> {
        self.ready().await?;
        let call = async {
            let mut conn = self.conn.clone();
            let mut cmd = redis::cmd(NATIVE_COMMAND);
            cmd.arg(keys).arg(calls);
            match conn.query(&cmd).await {
                Err(e) if is_unknown_command(&e) => Ok(None),
                other => other.map(Some),
            }
        };
        match self.within(keys, call).await? {
            Some(Value::BulkString(packed)) => reply::unpack_native(&packed).map(Some),
            other => Ok(other),
        }
    }

    /// Awaits `call` within the timeout, keeping the breaker's count.
    async fn within<K: AsRef<str>, T>(
        self: &Arc<Self>,
        keys: &[K],
        call: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, RedisError> {
        let outcome = tokio::time::timeout(self.timeout, call).await;
        let error = match outcome {
            Ok(Ok(value)) => {
                self.health.succeeded();
                return Ok(value);
            }
            Ok(Err(e)) => classify(&e, &failing_key(&e, keys), self.timeout),
            Err(_) => RedisError::Timeout {
                after: self.timeout,
            },
        };
        if self.health.failed(&error) {
            self.spawn_probe();
        }
        Err(error)
    }

    /// Starts the probe unless one is running (or there is no breaker). Needs a tokio
    /// runtime.
    fn start_probe(self: &Arc<Self>) {
        if self.health.claim_probe() {
            self.spawn_probe();
        }
    }

    /// Runs the probe that [`Health`] asked for.
    fn spawn_probe(self: &Arc<Self>) {
        tokio::spawn(probe(Arc::downgrade(self)));
    }

    /// `PING`, for the probe and for connecting; through Sentinels, to the master they
    /// name now (so a probe during a failover finds the new master as soon as they do).
    async fn ping(&self) -> Result<(), RedisError> {
        let mut conn = self.conn.clone();
        if let Conn::Sentinel(sentinel) = &conn {
            if let Err(e) = Box::pin(sentinel.refresh()).await {
                return Err(classify(&e, "", self.timeout));
            }
        }
        match conn.query(&redis::cmd("PING")).await {
            Ok(_) => Ok(()),
            Err(e) => Err(classify(&e, "", self.timeout)),
        }
    }

    /// Records why the probe's `PING` failed (`None`: it answered).
    fn record_probe(&self, failure: Option<String>) {
        *self.last_failure.lock().unwrap_or_else(|e| e.into_inner()) = failure;
    }
}

/// Pings every [`PROBE_INTERVAL`] (each `PING` within the connect timeout) until Redis
/// answers, then marks the link up; ends early when the limiter is gone.
async fn probe(link: Weak<Link>) {
    loop {
        let Some(strong) = link.upgrade() else {
            return;
        };
        let ping = tokio::time::timeout(strong.connect_timeout, strong.ping()).await;
        if matches!(ping, Ok(Ok(()))) {
            strong.record_probe(None);
            strong.health.recovered();
            strong.settle();
            return;
        }
        strong.record_probe(Some(match ping {
            Ok(Err(RedisError::Unavailable { reason })) => reason,
            Ok(Err(error)) => error.to_string(),
            _ => format!("no answer within {:?}", strong.connect_timeout),
        }));
        strong.settle();
        drop(strong);
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
}

/// The sluicegate Redis module's command (redis-module/).
const NATIVE_COMMAND: &str = "SLUICEGATE.DECIDE";

/// A node's answer to a command it does not have (no module loaded).
fn is_unknown_command(error: &redis::RedisError) -> bool {
    error.to_string().contains("unknown command")
}

/// `EVALSHA sha` or `EVAL code`, then the keys and the arguments.
fn command<K: ToRedisArgs>(name: &str, script: &str, keys: &[K], args: &[Arg<'_>]) -> Cmd {
    let mut cmd = redis::cmd(name);
    cmd.arg(script).arg(keys.len()).arg(keys);
    for arg in args {
        match arg {
            Arg::Int(n) => cmd.arg(*n),
            Arg::Bytes(b) => cmd.arg(*b),
        };
    }
    cmd
}

/// The key an error reply is about: a group of several limits names the one (`(limit N)`,
/// from 1) that failed; a group of one has one key.
pub(crate) fn failing_key<K: AsRef<str>>(error: &redis::RedisError, keys: &[K]) -> String {
    let index = error
        .detail()
        .and_then(|detail| detail.rsplit_once("(limit "))
        .and_then(|(_, rest)| rest.trim_end_matches(')').parse::<usize>().ok())
        .and_then(|n| n.checked_sub(1));
    keys.get(index.unwrap_or(0))
        .map(|key| key.as_ref().to_owned())
        .unwrap_or_default()
}
