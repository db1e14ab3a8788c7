//! [`RedisTarget`]: where Redis is, as every Redis option of the package hands it over (a URL,
//! and the TLS files and Sentinel credentials beside it), made into the library's
//! [`RedisSpec`] for `rateLimit` and into a [`RedisBuilder`]'s settings for `throttle` and
//! `RedisLimiter`.

use napi::{Error, Status};
use napi_derive::napi;
use sluicegate::http::spec::RedisSpec;
use sluicegate::redis::{RedisBuilder, TimeSource};

/// A Redis URL (`redis://`, `rediss://`, `redis-sentinel://`, `rediss-sentinel://`; a
/// Cluster's seed nodes separated by commas) and what reaching it may need. Each PEM option
/// is a PEM file's path or the PEM itself, as the library reads it.
#[napi(object)]
pub struct RedisTarget {
    pub url: String,
    /// The CA a `rediss://` server's certificate must chain to.
    pub ca_cert: Option<String>,
    /// The client certificate for mutual TLS.
    pub client_cert: Option<String>,
    /// The client certificate's private key.
    pub client_key: Option<String>,
    /// The Sentinels' user.
    pub sentinel_username: Option<String>,
    /// The Sentinels' password.
    pub sentinel_password: Option<String>,
}

impl RedisTarget {
    /// The library's description of this Redis (a Cluster when `cluster`); the library
    /// reads and checks the PEM options when it builds from it.
    pub(crate) fn spec(&self, cluster: bool) -> RedisSpec {
        let mut spec = RedisSpec::new(self.url.clone());
        spec.cluster = cluster;
        spec.ca_cert = self.ca_cert.clone();
        spec.client_cert = self.client_cert.clone();
        spec.client_key = self.client_key.clone();
        spec.sentinel_username = self.sentinel_username.clone();
        spec.sentinel_password = self.sentinel_password.clone();
        spec
    }

    /// `builder` with this target's TLS files and Sentinel credentials, as the library
    /// applies a [`RedisSpec`]'s.
    pub(crate) fn configure<A, C: TimeSource>(
        &self,
        builder: RedisBuilder<A, C>,
    ) -> napi::Result<RedisBuilder<A, C>> {
        self.spec(false)
            .configure(builder)
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))
    }
}
