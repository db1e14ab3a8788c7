//! [`RedisSpec::limiter`]: a Redis limiter on the Redis a spec names, connected now or in the
//! background: the one connection strategy of every front end built from configuration
//! (the HTTP front ends, `sluicegate-server`).

use super::check::pem_text;
use super::RedisSpec;
use crate::algorithm::AlgorithmKind;
use crate::quota::Quota;
use crate::redis::{AnyRedisLimiter, RedisBuilder, RedisError, RedisTime, TimeSource};

impl RedisSpec {
    /// A limiter on this Redis (its URL, Cluster, module, TLS and Sentinel settings) for `quota`, decided by
    /// `algorithm`, its keys under `prefix`, `name`d in metrics and logs, with whatever else
    /// `configure` sets (a fallback, timeouts).
    ///
    /// `now`: connected first, so that the first requests are decided on Redis when it
    /// answers within the connect timeout; while it does not, built all the same, connecting
    /// in the background. Otherwise built at once, connecting in the background (the first
    /// calls wait for the connection within their timeout). Either way a front end starts
    /// while Redis is down; what it answers meanwhile is its `on_backend_error`'s (the
    /// limiter's [`is_available`](AnyRedisLimiter::is_available) says whether Redis answered).
    /// The one error is a limiter that can never work: a bad URL, a quota Redis cannot run.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), sluicegate::redis::RedisError> {
    /// use sluicegate::http::spec::RedisSpec;
    /// use sluicegate::policy::AlgorithmKind;
    /// use sluicegate::Quota;
    ///
    /// let redis = RedisSpec::new("redis://127.0.0.1:6379/");
    /// let limiter = redis
    ///     .limiter(Quota::per_minute(10), AlgorithmKind::Gcra, "app:", "app", true, |b| b)
    ///     .await?;
    /// # let _ = limiter;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn limiter(
        &self,
        quota: Quota,
        algorithm: AlgorithmKind,
        prefix: &str,
        name: &str,
        now: bool,
        configure: impl Fn(
            RedisBuilder<AlgorithmKind, RedisTime>,
        ) -> RedisBuilder<AlgorithmKind, RedisTime>,
    ) -> Result<AnyRedisLimiter, RedisError> {
        let builder = |lazy: bool| {
            let builder = AnyRedisLimiter::builder(quota, algorithm, self.url.trim())
                .prefix(prefix)
                .name(name)
                .cluster(self.cluster)
                .module(self.module)
                .lazy(lazy);
            self.configure(builder).map(&configure)
        };
        if now {
            match builder(false)?.connect().await {
                Err(RedisError::Unavailable { .. } | RedisError::Timeout { .. }) => {}
                done => return done,
            }
        }
        builder(true)?.connect().await
    }

    /// `builder` with this Redis's TLS files (each read as [`pem_text`] reads it) and
    /// Sentinel credentials: what every limiter on this Redis is given, whoever builds it.
    /// The URL, Cluster and module settings are the caller's (its builder's constructor).
    pub fn configure<A, C: TimeSource>(
        &self,
        mut builder: RedisBuilder<A, C>,
    ) -> Result<RedisBuilder<A, C>, RedisError> {
        let pem = |name: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|value| {
                    pem_text(value).map_err(|e| RedisError::config(format!("redis.{name}: {e}")))
                })
                .transpose()
        };
        if let Some(pem) = pem("ca_cert", &self.ca_cert)? {
            builder = builder.ca_cert(pem);
        }
        if let Some(pem) = pem("client_cert", &self.client_cert)? {
            builder = builder.client_cert(pem);
        }
        if let Some(pem) = pem("client_key", &self.client_key)? {
            builder = builder.client_key(pem);
        }
        if let Some(password) = &self.sentinel_password {
            builder = builder.sentinel_auth(self.sentinel_username.as_deref(), password);
        }
        Ok(builder)
    }
}
