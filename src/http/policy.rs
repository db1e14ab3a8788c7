//! Limits from [`Policy`] values: an algorithm, quota and key chosen at run time, in
//! process or on Redis, where [`redis_prefix`] is the one rule naming an HTTP limit's keys.

use super::error::BuildError;
use super::key::{ClientIp, Global, HeaderKey, KeyExtractor};
use super::limit::RequestLimit;
use crate::backend::Backend;
use crate::clock::TscClock;
use crate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use crate::error::QuotaError;
use crate::policy::{AlgorithmKind, KeySpec, Policy};
use crate::quota::Quota;
use std::sync::Arc;

/// The most keys an HTTP limit's in-process table holds unless told otherwise: a client
/// sending a new key with every request (an `x-api-key` header it makes up) then fills a
/// bounded table, whose new keys are refused while it is full (`Rejection::TableFull`, a `503`
/// with `Retry-After: 1`: the server is at capacity, not the client over its limit), instead of
/// growing the process without end.
pub const DEFAULT_MAX_KEYS: usize = 1_000_000;

/// An in-process backend running `algorithm` for `quota`: an
/// [`AnyKeyedLimiter<String>`] (a state per key, at most [`DEFAULT_MAX_KEYS`]) when `keyed`,
/// else an [`AnyLimiter`] (one state; keys ignored).
pub fn in_process_backend(
    algorithm: AlgorithmKind,
    quota: Quota,
    keyed: bool,
) -> Result<Arc<dyn Backend<str>>, QuotaError> {
    in_process_backend_bounded(algorithm, quota, keyed, DEFAULT_MAX_KEYS)
}

/// [`in_process_backend`] holding at most `max_keys` keys when `keyed`.
pub fn in_process_backend_bounded(
    algorithm: AlgorithmKind,
    quota: Quota,
    keyed: bool,
    max_keys: usize,
) -> Result<Arc<dyn Backend<str>>, QuotaError> {
    Ok(if keyed {
        Arc::new(
            AnyKeyedLimiter::<String>::builder(quota, algorithm)
                .max_keys(max_keys)
                .build()?,
        )
    } else {
        Arc::new(AnyLimiter::<TscClock>::new(quota, algorithm)?)
    })
}

/// The extractor a [`KeySpec`] names: [`Global`], `client_ip` for `peer-ip`, or a
/// [`HeaderKey`].
pub fn key_extractor(
    spec: &KeySpec,
    client_ip: &ClientIp,
) -> Result<Arc<dyn KeyExtractor>, BuildError> {
    Ok(match spec {
        KeySpec::Global => Arc::new(Global),
        KeySpec::PeerIp => Arc::new(client_ip.clone()),
        KeySpec::Header(name) => Arc::new(
            HeaderKey::parse(name)
                .map_err(|_| BuildError::new(format!("{name:?} is not an HTTP header name")))?,
        ),
    })
}

impl RequestLimit {
    /// The limit `policy` describes, enforced in process, with `client_ip` as the extractor
    /// for `key=peer-ip`.
    ///
    /// ```
    /// use sluicegate::http::{ClientIp, RequestLimit};
    /// use sluicegate::policy::Policy;
    ///
    /// let policy: Policy = "name=ip; key=peer-ip; quota=5/second; algorithm=gcra".parse()?;
    /// let limit = RequestLimit::from_policy(&policy, &ClientIp::new())?;
    /// assert_eq!(limit.name(), "ip");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_policy(policy: &Policy, client_ip: &ClientIp) -> Result<RequestLimit, BuildError> {
        Self::from_policy_bounded(policy, client_ip, DEFAULT_MAX_KEYS)
    }

    /// [`from_policy`](Self::from_policy) with a table of at most `max_keys` keys (the
    /// default is [`DEFAULT_MAX_KEYS`]).
    pub fn from_policy_bounded(
        policy: &Policy,
        client_ip: &ClientIp,
        max_keys: usize,
    ) -> Result<RequestLimit, BuildError> {
        let keyed = policy.key != KeySpec::Global;
        let backend = in_process_backend_bounded(policy.algorithm, policy.quota, keyed, max_keys)
            .map_err(|e| BuildError::new(format!("limit {:?}: {e}", policy.name)))?;
        let mut limit = RequestLimit::shared(policy.name.clone(), backend);
        limit.key = key_extractor(&policy.key, client_ip)?;
        Ok(limit)
    }
}

/// The Redis key prefix of the HTTP limit named `name`: `sluicegate:http:<name>:`.
///
/// Every HTTP front end names its Redis limits this way (the layer's
/// [`RequestLimit::from_policy_on_redis`], the `http_server` example's `--redis`, the Node
/// and Python middlewares), so processes in any language share a limit by giving it the same
/// name, algorithm and quota on the same Redis. Each key's state then lies at
/// `sluicegate:http:<name>:{<key>}` followed by the algorithm's letter and a fingerprint of
/// the quota ([`RedisLimiter::redis_key`](crate::redis::RedisLimiter::redis_key)).
///
/// ```
/// assert_eq!(sluicegate::http::redis_prefix("ip"), "sluicegate:http:ip:");
/// ```
pub fn redis_prefix(name: &str) -> String {
    format!("sluicegate:http:{name}:")
}

#[cfg(feature = "redis")]
impl RequestLimit {
    /// The limit `policy` describes, shared through the Redis at `url` (a Redis Cluster's
    /// seed nodes, separated by commas, when `cluster`) under [`redis_prefix`], with
    /// `client_ip` as the extractor for `key=peer-ip`.
    ///
    /// It is built without waiting for Redis (the first decisions wait for a background
    /// probe's first answer, within the call timeout): while Redis is down, decisions fail
    /// and the layer's [`OnBackendError`](super::OnBackendError) says what then, until the
    /// probe finds Redis answering.
    pub async fn from_policy_on_redis(
        policy: &Policy,
        client_ip: &ClientIp,
        url: &str,
        cluster: bool,
    ) -> Result<RequestLimit, BuildError> {
        let mut redis = super::spec::RedisSpec::new(url);
        redis.cluster = cluster;
        let backend = redis_backend(policy, &redis, Default::default(), false)
            .await
            .map_err(|e| redis_build_error(policy, e))?;
        RequestLimit::on_backend(policy, client_ip, backend)
    }

    /// [`from_policy_on_redis`](Self::from_policy_on_redis), but connecting first (a `PING`
    /// within the connect timeout, one second), where `from_policy_on_redis` returns at once
    /// and its first decisions wait for its background probe (within the call timeout). For
    /// a front end that builds its limits as a request arrives, such as the Python
    /// middleware in each worker a server forks. When Redis does not answer, the limit is
    /// built all the same, as `from_policy_on_redis` builds it.
    pub async fn from_policy_on_redis_connected(
        policy: &Policy,
        client_ip: &ClientIp,
        url: &str,
        cluster: bool,
    ) -> Result<RequestLimit, BuildError> {
        let mut redis = super::spec::RedisSpec::new(url);
        redis.cluster = cluster;
        let backend = redis_backend(policy, &redis, Default::default(), true)
            .await
            .map_err(|e| redis_build_error(policy, e))?;
        RequestLimit::on_backend(policy, client_ip, backend)
    }

    /// The limit `policy` names on `backend`.
    fn on_backend(
        policy: &Policy,
        client_ip: &ClientIp,
        backend: crate::redis::AnyRedisLimiter,
    ) -> Result<RequestLimit, BuildError> {
        let mut limit = RequestLimit::new(policy.name.clone(), backend);
        limit.key = key_extractor(&policy.key, client_ip)?;
        Ok(limit)
    }
}

/// The Redis limiter behind the HTTP limit `policy`: under [`redis_prefix`], named after it,
/// on the Redis `redis` describes (its URL, Cluster, TLS files, Sentinels), with the fallback
/// `mode` asks for ([`BackendErrorMode::fallback`](super::BackendErrorMode::fallback):
/// deciding in process while Redis cannot, for `local`). With `connect_first`, it connects
/// first (a `PING` within the connect timeout) so that the first request is decided on
/// Redis, and is built lazily all the same when Redis does not answer; else it is built
/// lazily at once (its first decisions wait for a background probe's first answer, within
/// the call timeout). Errors are a URL or option Redis refuses outright.
///
/// A front end keeps it (cheap to clone) for its counters ([`stats`], [`is_available`]) and
/// builds its limit with `RequestLimit::new(name, backend)` keyed by [`key_extractor`].
///
/// [`stats`]: crate::redis::AnyRedisLimiter::stats
/// [`is_available`]: crate::redis::AnyRedisLimiter::is_available
#[cfg(feature = "redis")]
pub async fn redis_backend(
    policy: &Policy,
    redis: &super::spec::RedisSpec,
    mode: super::BackendErrorMode,
    connect_first: bool,
) -> Result<crate::redis::AnyRedisLimiter, crate::redis::RedisError> {
    let prefix = redis_prefix(&policy.name);
    redis
        .limiter(
            policy.quota,
            policy.algorithm,
            &prefix,
            &policy.name,
            connect_first,
            |b| b.fallback(mode.fallback()),
        )
        .await
}

#[cfg(feature = "redis")]
fn redis_build_error(policy: &Policy, error: crate::redis::RedisError) -> BuildError {
    BuildError::new(format!("limit {:?} on Redis: {error}", policy.name))
}
