//! [`RedisBuilder`]: the knobs of a [`RedisLimiter`].

use super::any::AnyRedisLimiter;
use super::batch::Sender;
use super::deny_cache::DenyCache;
use super::error::RedisError;
use super::fallback::{Fallback, Standby};
use super::inner::Inner;
use super::keys::KeySpace;
use super::limiter::RedisLimiter;
use super::link::{Endpoint, Link};
use super::params::Params;
use super::reset_watch::ResetWatch;
use super::target::{SentinelAuth, Tls};
use super::telemetry::Telemetry;
use super::time::{RedisTime, TimeSource};
use crate::algorithm::AlgorithmKind;
use crate::dynamic::for_kind;
use crate::keyed::ClockSource;
use crate::quota::Quota;
use crate::state::Algorithm;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The prefix of every key, unless [`RedisBuilder::prefix`] says otherwise.
pub const DEFAULT_PREFIX: &str = "sluicegate:";
/// The per-call timeout, unless [`RedisBuilder::timeout`] says otherwise: short enough for a
/// request path, long enough for a loaded Redis on the same network.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);
/// The timeout of a connection attempt, unless [`RedisBuilder::connect_timeout`] says
/// otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// Keys the deny cache holds at most, unless [`RedisBuilder::deny_cache_capacity`] says
/// otherwise: about a megabyte.
pub const DEFAULT_DENY_CACHE_CAPACITY: usize = 10_000;

/// Builds a [`RedisLimiter`]; start with [`RedisLimiter::builder`], or with
/// [`AnyRedisLimiter::builder`] for an algorithm chosen at run time (then `A` is
/// [`AlgorithmKind`]).
///
/// ```no_run
/// use std::time::Duration;
/// use sluicegate::clock::ManualClock;
/// use sluicegate::redis::{Fallback, RedisLimiter};
/// use sluicegate::{algorithm::Gcra, Quota};
///
/// # async fn run() -> Result<(), sluicegate::redis::RedisError> {
/// let clock = ManualClock::new();
/// let limiter = RedisLimiter::<Gcra, ManualClock>::builder(
///     Quota::per_second(10),
///     "redis://127.0.0.1:6379/",
/// )
/// .clock(clock.clone()) // client time instead of Redis's TIME
/// .prefix("test:") // every key starts with it
/// .name("api") // the `limiter` label of metrics and logs
/// .timeout(Duration::from_millis(50)) // per call
/// .fallback(Fallback::Local { servers: 4 }) // while Redis is down
/// .lazy(true) // build now even if Redis is down
/// .connect()
/// .await?;
/// # Ok(())
/// # }
/// ```
pub struct RedisBuilder<A, C> {
    quota: Quota,
    url: String,
    prefix: String,
    name: Option<String>,
    clock: ClockSource<C>,
    timeout: Duration,
    connect_timeout: Duration,
    cluster: bool,
    lazy: bool,
    batching: bool,
    deny_cache: bool,
    deny_cache_capacity: usize,
    reset_watch: bool,
    module: bool,
    fallback: Fallback,
    tls: Tls,
    sentinel_auth: SentinelAuth,
    /// The algorithm: `A::KIND` for a typed builder, any for an [`AnyRedisLimiter`]'s.
    kind: AlgorithmKind,
    algorithm: PhantomData<fn() -> A>,
}

impl<A, C: TimeSource> RedisBuilder<A, C> {
    pub(super) fn new(quota: Quota, url: &str, kind: AlgorithmKind) -> Self
    where
        C: Default,
    {
        RedisBuilder {
            kind,
            quota,
            url: url.to_owned(),
            prefix: DEFAULT_PREFIX.to_owned(),
            name: None,
            clock: ClockSource::Default(C::default),
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            cluster: false,
            lazy: false,
            batching: true,
            deny_cache: true,
            deny_cache_capacity: DEFAULT_DENY_CACHE_CAPACITY,
            reset_watch: true,
            module: false,
            fallback: Fallback::Error,
            tls: Tls::default(),
            sentinel_auth: SentinelAuth::default(),
            algorithm: PhantomData,
        }
    }

    /// Starts every key with `prefix` (default [`DEFAULT_PREFIX`]). Give each limit its own
    /// prefix (`"login:"`, `"api:"`): two limiters with the same prefix, algorithm and quota
    /// share their keys' state, which is how several servers share one limit. A prefix may
    /// not contain braces, which would move the hash tag.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Names the limiter in metrics (`limiter` label) and logs; the prefix by default.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Decides on `clock` (client time, sent with each call) instead of Redis's `TIME`:
    /// deterministic tests with a [`ManualClock`](crate::clock::ManualClock), or stores that
    /// refuse `TIME` in scripts. Every server must then read the same time; with Redis's
    /// clock (the default, [`RedisTime`](super::RedisTime)) only one clock ever decides.
    /// Keys still expire on Redis's clock, so a client clock must not run slower than real
    /// time by more than the one-second TTL floor.
    pub fn clock<C2: TimeSource>(self, clock: C2) -> RedisBuilder<A, C2> {
        let kind = self.kind;
        self.rebuild(kind, |_| ClockSource::Given(clock))
    }

    /// Bounds every call (one script, one round trip) to `timeout` (default
    /// [`DEFAULT_TIMEOUT`]); a call that takes longer fails with [`RedisError::Timeout`] or
    /// is answered by the fallback. Three timeouts in a row, like a connection error, mark
    /// Redis down until a background `PING` gets an answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Bounds each connection attempt (default [`DEFAULT_CONNECT_TIMEOUT`]), including the
    /// first one in [`connect`](Self::connect) unless [`lazy`](Self::lazy).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Talks to a Redis Cluster: the URL is then one or more seed nodes separated by commas
    /// (`"redis://10.0.0.1:7000,redis://10.0.0.2:7000"`); the rest of the cluster is
    /// discovered. Each key's state sits in one slot (its hash tag is the key), so every
    /// decision is still one script on one node.
    pub fn cluster(mut self, cluster: bool) -> Self {
        self.cluster = cluster;
        self
    }

    /// Returns from [`connect`](Self::connect) at once without waiting for Redis, and
    /// probes it in the background: the first calls wait for that first answer (within the
    /// call timeout); while Redis is found down, calls fail fast with
    /// [`RedisError::Unavailable`] (or the fallback answers) until the probe, every 100 ms,
    /// finds it answering. For servers that must start while Redis is down.
    pub fn lazy(mut self, lazy: bool) -> Self {
        self.lazy = lazy;
        self
    }

    /// Batches calls (the default): while a call is in flight to a node, calls that arrive
    /// for it queue and go together in one script, each decided exactly as alone; see the
    /// [module documentation](super#batching). Off, every call is its own script at once,
    /// which costs Redis several times the CPU per decision under concurrency and changes no
    /// decision: for comparisons, or to keep each call's latency independent of the others'.
    pub fn batching(mut self, on: bool) -> Self {
        self.batching = on;
        self
    }

    /// Turns the local deny cache on (the default) or off; see the
    /// [module documentation](super#the-deny-cache).
    pub fn deny_cache(mut self, on: bool) -> Self {
        self.deny_cache = on;
        self
    }

    /// Holds at most `keys` denied keys in the deny cache (default
    /// [`DEFAULT_DENY_CACHE_CAPACITY`]); 0 turns the cache off.
    pub fn deny_cache_capacity(mut self, keys: usize) -> Self {
        self.deny_cache_capacity = keys;
        self
    }

    /// Hears other processes' [`reset`](RedisLimiter::reset)s of this limit's keys (the
    /// default), so that a denial cached here, or the local fallback's state, is forgotten
    /// with them: one more connection, subscribed to the limit's reset channel, while the
    /// limiter has a deny cache or a local fallback. Off, another process's reset reaches
    /// this process's cached denials only when their countdown ends.
    pub fn reset_watch(mut self, on: bool) -> Self {
        self.reset_watch = on;
        self
    }

    /// Decides with the sluicegate Redis module's `SLUICEGATE.DECIDE` (off by default): the
    /// same decisions and the same stored states as the scripts, without Lua, for a fraction
    /// of Redis's CPU; see the [module documentation](super#the-redis-module). Calls of the
    /// sliding window and the sliding log still run the scripts, and so does every call once
    /// Redis has answered that it does not know the command.
    pub fn module(mut self, on: bool) -> Self {
        self.module = on;
        self
    }

    /// Verifies a `rediss://` (or `rediss-sentinel://`) server's certificate against `pem`
    /// (one or more PEM certificates: a private CA) instead of the system's roots. TLS needs
    /// the `redis-tls` feature; see the [module documentation](super#where-redis-runs).
    pub fn ca_cert(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.ca_cert = Some(pem.into());
        self
    }

    /// Shows `pem` (a PEM certificate, or a chain) to a TLS server that asks for a client
    /// certificate (mutual TLS; Redis's `tls-auth-clients yes`), with
    /// [`client_key`](Self::client_key).
    pub fn client_cert(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.client_cert = Some(pem.into());
        self
    }

    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1) of [`client_cert`](Self::client_cert).
    pub fn client_key(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.client_key = Some(pem.into());
        self
    }

    /// Authenticates to the Sentinels of a `redis-sentinel://` URL (their `requirepass`, or
    /// an ACL user when `username` is given); the URL's own credentials are the master's.
    pub fn sentinel_auth(mut self, username: Option<&str>, password: &str) -> Self {
        self.sentinel_auth = SentinelAuth {
            username: username.map(str::to_owned),
            password: Some(password.to_owned()),
        };
        self
    }

    /// What to answer while Redis times out or cannot be reached (default
    /// [`Fallback::Error`]: return the error).
    pub fn fallback(mut self, fallback: Fallback) -> Self {
        self.fallback = fallback;
        self
    }

    /// The same settings for algorithm `B` (chosen at run time, by [`AnyRedisLimiter`]).
    fn with_algorithm<B: Algorithm>(self) -> RedisBuilder<B, C> {
        self.rebuild(B::KIND, |same| same)
    }

    /// The same settings for algorithm `kind` and the clock `clock` makes of this one.
    fn rebuild<A2, C2>(
        self,
        kind: AlgorithmKind,
        clock: impl FnOnce(ClockSource<C>) -> ClockSource<C2>,
    ) -> RedisBuilder<A2, C2> {
        RedisBuilder {
            quota: self.quota,
            url: self.url,
            prefix: self.prefix,
            name: self.name,
            clock: clock(self.clock),
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            cluster: self.cluster,
            lazy: self.lazy,
            batching: self.batching,
            deny_cache: self.deny_cache,
            deny_cache_capacity: self.deny_cache_capacity,
            reset_watch: self.reset_watch,
            module: self.module,
            fallback: self.fallback,
            tls: self.tls,
            sentinel_auth: self.sentinel_auth,
            kind,
            algorithm: PhantomData,
        }
    }
}

impl<A: Algorithm, C: TimeSource> RedisBuilder<A, C> {
    /// Checks the quota against the algorithm's script, connects (unless lazy), and builds
    /// the limiter. Needs a tokio runtime.
    pub async fn connect(self) -> Result<RedisLimiter<A, C>, RedisError> {
        let kind = self.kind;
        let params = Params::new(kind, &self.quota)?;
        let keys = KeySpace::new(&self.prefix, kind, &self.quota)?;
        let time = self.clock.take();
        let local = time.local_clock();
        let standby = Standby::new(self.fallback, self.quota, local.clone())?;
        let endpoint = Endpoint {
            url: self.url,
            cluster: self.cluster,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            lazy: self.lazy,
            tls: self.tls,
            sentinel_auth: self.sentinel_auth,
        };
        let link = Link::connect(&endpoint).await?;
        let name = self.name.unwrap_or_else(|| self.prefix.clone());
        let inner = Inner {
            max_cost: params.max_cost(&self.quota),
            quota: self.quota,
            params,
            keys,
            time,
            local,
            sender: Sender::new(link.clone(), self.batching, self.module),
            deny_cache: (self.deny_cache && self.deny_cache_capacity > 0)
                .then(|| DenyCache::new(self.deny_cache_capacity)),
            standby,
            telemetry: Telemetry::new(&name, self.fallback.label()),
            name,
            reset_watch: OnceLock::new(),
        };
        let limiter = RedisLimiter::from_inner(inner);
        if self.reset_watch && limiter.inner.remembers_keys() {
            let shared = Arc::downgrade(&limiter.inner);
            let watch = ResetWatch::start(
                link,
                limiter.inner.keys.reset_channel(),
                endpoint.connect_timeout,
                Box::new(move |key| {
                    if let Some(inner) = shared.upgrade() {
                        inner.forget_locally(key);
                    }
                }),
            );
            let _ = limiter.inner.reset_watch.set(watch);
        }
        Ok(limiter)
    }
}

/// # Connecting
///
/// Here, beside the builder they return, so that the limiter types know no builder.
impl<A: Algorithm, C: TimeSource + Default> RedisLimiter<A, C> {
    /// Connects to the Redis at `url` (e.g. `redis://127.0.0.1:6379/`) with every default:
    /// prefix `"sluicegate:"`, decisions on Redis's clock (or `C::default()`), a timeout of
    /// 100 ms per call, the deny cache on, errors returned while Redis is down.
    ///
    /// Fails if the quota cannot run exactly on Redis ([`RedisError::Quota`]), the URL is
    /// invalid, or Redis does not answer a `PING` within the connect timeout (one second).
    pub async fn connect(quota: Quota, url: &str) -> Result<Self, RedisError> {
        Self::builder(quota, url).connect().await
    }

    /// A builder for everything else: prefix, clock, timeouts, cluster, lazy connection,
    /// deny cache, fallback, name.
    pub fn builder(quota: Quota, url: &str) -> RedisBuilder<A, C> {
        RedisBuilder::new(quota, url, A::KIND)
    }
}

/// # Connecting
///
/// Here, beside the builder they return, so that the limiter types know no builder.
impl AnyRedisLimiter {
    /// Connects to the Redis at `url` with every default, deciding by `algorithm`; see
    /// [`RedisLimiter::connect`].
    pub async fn connect(
        quota: Quota,
        algorithm: AlgorithmKind,
        url: &str,
    ) -> Result<Self, RedisError> {
        Self::builder(quota, algorithm, url).connect().await
    }

    /// A builder with every knob of [`RedisLimiter::builder`]'s (its
    /// [`clock`](RedisBuilder::clock) makes an `AnyRedisLimiter<C>` of another clock).
    pub fn builder(
        quota: Quota,
        algorithm: AlgorithmKind,
        url: &str,
    ) -> RedisBuilder<AlgorithmKind, RedisTime> {
        RedisBuilder::new(quota, url, algorithm)
    }
}

/// A builder whose algorithm is a value: [`AnyRedisLimiter::builder`].
impl<C: TimeSource> RedisBuilder<AlgorithmKind, C> {
    /// Checks the quota against the chosen algorithm's script, connects (unless lazy), and
    /// builds the limiter. Needs a tokio runtime.
    pub async fn connect(self) -> Result<AnyRedisLimiter<C>, RedisError> {
        for_kind!(AnyRedisLimiter, self.kind, A => self.with_algorithm::<A>().connect().await)
    }
}

impl<A, C: fmt::Debug> fmt::Debug for RedisBuilder<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBuilder")
            .field("algorithm", &self.kind)
            .field("quota", &self.quota)
            .field("url", &super::target::redact(&self.url))
            .field("prefix", &self.prefix)
            .field("name", &self.name)
            .field("clock", &self.clock)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("cluster", &self.cluster)
            .field("lazy", &self.lazy)
            .field("deny_cache", &self.deny_cache)
            .field("deny_cache_capacity", &self.deny_cache_capacity)
            .field("reset_watch", &self.reset_watch)
            .field("module", &self.module)
            .field("fallback", &self.fallback)
            .field("tls", &self.tls)
            .field("sentinel_auth", &self.sentinel_auth)
            .finish()
    }
}
