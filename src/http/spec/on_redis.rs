//! [`RedisSpec::limiter`]: a Redis limiter on the Redis a spec names, connected now or in the
//! background: the one connection strategy of every front end built from configuration
//! (the HTTP front ends, `sluicegate-server`).

use super::check::pem_text;
use super::RedisSpec;
use crate::algorithm::AlgorithmKind;
use crate::quota::Quota;
use crate::redis::{AnyRedisLimiter, RedisBuilder, RedisError, RedisTime};

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
        let pem = |name: &str, value: &Option<String>| match value.as_deref() {
            Some(value) => pem_text(value)
                .map(Some)
                .map_err(|e| RedisError::config(format!("redis.{name}: {e}"))),
            None => Ok(None),
        };
        let (ca_cert, client_cert, client_key) = (
            pem("ca_cert", &self.ca_cert)?,
            pem("client_cert", &self.client_cert)?,
            pem("client_key", &self.client_key)?,
        );
        let builder = |lazy: bool| {
            let mut builder = AnyRedisLimiter::builder(quota, algorithm, self.url.trim())
                .prefix(prefix)
                .name(name)
                .cluster(self.cluster)
                .module(self.module)
                .lazy(lazy);
            if let Some(pem) = &ca_cert {
                builder = builder.ca_cert(pem.clone());
            }
            if let Some(pem) = &client_cert {
                builder = builder.client_cert(pem.clone());
            }
            if let Some(pem) = &client_key {
                builder = builder.client_key(pem.clone());
            }
            if let Some(password) = &self.sentinel_password {
                builder = builder.sentinel_auth(self.sentinel_username.as_deref(), password);
            }
            configure(builder)
        };
        if now {
            match builder(false).connect().await {
                Err(RedisError::Unavailable { .. } | RedisError::Timeout { .. }) => {}
                done => return done,
            }
        }
        builder(true).connect().await
    }
}
