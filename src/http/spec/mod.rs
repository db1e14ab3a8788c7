//! The front-end specification: everything an HTTP front end is configured with, in one
//! plain description that every front end translates its host's options into (the tower
//! layer's users, the Node and Python middlewares, `sluicegate-server`'s config, the framework
//! adapters), and that the library alone checks and builds.
//!
//! A [`FrontEndSpec`] holds the limits ([`LimitSpec`]: a name, a key, one quota or several,
//! an algorithm, a cost, or [tiers](TiersSpec) chosen per request), the client-address rules,
//! Redis ([`RedisSpec`]), what a backend failure answers, the headers, the refusals' body,
//! `max_keys`, exemptions by path and refunds. Values a user can get wrong are plain text and
//! numbers, read by [`FrontEndSpec::build`], which reports every problem at once (a
//! [`BuildError`](super::BuildError)), each naming its option by path as the user wrote it, in the host's
//! spelling ([`BuildError::naming`](super::BuildError::naming)). Functions stay in the host: a limit keyed by a host
//! function says `key: "given"`, one whose tier a host function chooses says
//! `tiers.by: "given"`, and the built [`FrontEnd`] says which limits need a key or a tier
//! handed in with each request ([`GivenKeys`](super::front_end::GivenKeys),
//! [`GivenTiers`](super::front_end::GivenTiers)).
//!
//! With feature `serde`, a spec reads from JSON, YAML, TOML or a binding's objects; field
//! names are snake case, and the camel-case names JavaScript uses are accepted too
//! (`trustedProxies`, `onBackendError`, `maxKeys`...).
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use sluicegate::http::spec::FrontEndSpec;
//!
//! let spec: FrontEndSpec = serde_json::from_str(r#"{
//!     "limits": [
//!         { "name": "ip", "key": "ip", "quota": "5/second" },
//!         { "name": "token", "key": "header:x-api-key", "quota": "100/minute burst 20; 1000/day",
//!           "algorithm": "sliding-window" },
//!         { "name": "plan", "key": "ip",
//!           "tiers": { "by": "header:x-plan", "default": "free",
//!                      "quotas": { "free": "10/minute", "pro": "100/minute" } } }
//!     ],
//!     "trusted_proxies": ["10.0.0.0/8"],
//!     "headers": "draft-10",
//!     "body": "problem+json",
//!     "exempt": ["/health"]
//! }"#).unwrap();
//! let front_end = spec.build().unwrap();
//! // "token" is two limits, one per quota: token-1 and token-2.
//! let names: Vec<&str> = front_end.limiter().limits().iter().map(|l| l.name()).collect();
//! assert_eq!(names, ["ip", "token-1", "token-2", "plan"]);
//! # }
//! ```
//!
//! The defaults are those of the tower layer: key `ip`, algorithm `gcra`, cost 1,
//! `x-forwarded-for` from trusted proxies only (none by default), IPv6 clients grouped by /64,
//! `on_backend_error` `allow`, draft-10's headers, a plain-text body, at most
//! [`DEFAULT_MAX_KEYS`](super::DEFAULT_MAX_KEYS) keys per in-process limit.

mod build;
mod check;
#[cfg(feature = "serde")]
mod de;
mod front_end;
#[cfg(feature = "redis")]
mod on_redis;
mod quotas;

pub use check::pem_text;
pub use front_end::FrontEnd;
pub use quotas::{LimitQuotas, QuotaPart, QuotaProblem};

/// Everything an HTTP front end is configured with. See the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct FrontEndSpec {
    /// The limits, decided in this order; a request passes only if every one admits it.
    pub limits: Vec<LimitSpec>,
    /// The networks of the proxies whose forwarding headers are believed (`"10.0.0.0/8"`,
    /// `"::1"`), each entry one network or several separated by commas. None by default: the
    /// client is the peer.
    #[cfg_attr(
        feature = "serde",
        serde(default, alias = "trustedProxies", deserialize_with = "de::texts")
    )]
    pub trusted_proxies: Vec<String>,
    /// Which forwarding headers name the client behind a trusted proxy: `x-forwarded-for`
    /// (or `xff`, the default), `forwarded` or `both`.
    #[cfg_attr(feature = "serde", serde(default, alias = "forwardedHeaders"))]
    pub forwarded_headers: Option<String>,
    /// The bits IPv6 clients are grouped by, 0 to 128 (default 64: a home network is one
    /// client).
    #[cfg_attr(feature = "serde", serde(default, alias = "ipv6Prefix"))]
    pub ipv6_prefix: Option<u32>,
    /// Share the limits through Redis; in process when absent.
    #[cfg_attr(feature = "serde", serde(default))]
    pub redis: Option<RedisSpec>,
    /// What a backend failure answers: `allow` (the default: the request passes that limit),
    /// `deny` (`503` with `Retry-After: 1`), or `local` (limits on Redis decide in this
    /// process while Redis cannot, then go back to it).
    #[cfg_attr(feature = "serde", serde(default, alias = "onBackendError"))]
    pub on_backend_error: Option<String>,
    /// Which rate-limit headers responses carry, one form or several: `standard` (or
    /// `draft-10`, the default: `RateLimit-Policy` and `RateLimit`), `draft-6`, `draft-7`,
    /// `draft-8`, `legacy` (`X-RateLimit-*`), `both` (standard and legacy) or `none`. As a
    /// boolean: `true` is `standard`, `false` is `none`.
    #[cfg_attr(feature = "serde", serde(default, deserialize_with = "de::forms"))]
    pub headers: Vec<String>,
    /// The body of a refusal: `text` (the default: the sentence), `json`
    /// (`{"detail": sentence}`, as FastAPI writes errors) or `problem+json` (RFC 9457).
    #[cfg_attr(feature = "serde", serde(default))]
    pub body: Option<String>,
    /// The most keys each in-process keyed limit holds (default
    /// [`DEFAULT_MAX_KEYS`](super::DEFAULT_MAX_KEYS)); a new key beyond it is refused with a
    /// `503` until idle keys are dropped.
    #[cfg_attr(feature = "serde", serde(default, alias = "maxKeys"))]
    pub max_keys: Option<u64>,
    /// Paths that pass uncounted and without headers: `/health` (that path exactly) or
    /// `/static/*` (every path under it).
    #[cfg_attr(feature = "serde", serde(default, deserialize_with = "de::texts"))]
    pub exempt: Vec<String>,
    /// Lets CORS preflights (`OPTIONS` with `Access-Control-Request-Method`) pass uncounted.
    #[cfg_attr(feature = "serde", serde(default, alias = "exemptPreflight"))]
    pub exempt_preflight: bool,
    /// Which responses give their request back, decided by the host once the response is
    /// known: `failed` (express-rate-limit's `skipFailedRequests`), `successful`
    /// (`skipSuccessfulRequests`), both, or none (the default). With any, the front end
    /// decides with [`RequestLimiter::decide_reserving`](super::RequestLimiter::decide_reserving)
    /// ([`FrontEnd::reserves`]).
    #[cfg_attr(feature = "serde", serde(default, deserialize_with = "de::texts"))]
    pub refund: Vec<String>,
}

/// One limit of a [`FrontEndSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct LimitSpec {
    /// The limit's name: 1 to 64 characters, unique. It names the limit in the headers, in
    /// refusals and on Redis (under [`redis_prefix`](super::redis_prefix)); a limit of
    /// several quotas is one limit per quota, named by
    /// [`quota_name`](crate::policy::quota_name) (`NAME-1`, `NAME-2`...).
    pub name: String,
    /// What a request is counted against: `ip` (the client's address, the default),
    /// `global`, `header:NAME`, or `given` (a key the host computes per request and hands in
    /// as [`GivenKeys`](super::front_end::GivenKeys) under this limit's name).
    #[cfg_attr(feature = "serde", serde(default))]
    pub key: Option<String>,
    /// The quota: one string (`"100/minute burst 20"`), several in one string
    /// (`"5/minute; 100/hour"`) or a list of strings, each decided, all or nothing. A limit of
    /// 0 (`"0/minute"`) refuses every request (the window says when to retry). `… anchored`
    /// starts each key's window at its first request (express-rate-limit's `windowMs`; the
    /// fixed window only). Not given when [`tiers`](Self::tiers) are.
    #[cfg_attr(feature = "serde", serde(default, deserialize_with = "de::texts"))]
    pub quota: Vec<String>,
    /// Quotas chosen per request instead of one [`quota`](Self::quota).
    #[cfg_attr(feature = "serde", serde(default))]
    pub tiers: Option<TiersSpec>,
    /// `gcra` (the default), `token-bucket`, `leaky-bucket`, `fixed-window`,
    /// `sliding-window` or `sliding-log`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub algorithm: Option<String>,
    /// What one request costs (default 1; 0 counts nothing).
    #[cfg_attr(feature = "serde", serde(default = "de::one"))]
    pub cost: u32,
}

/// A limit whose quota is chosen per request among tiers (free users 10 a minute, pro 100).
///
/// Each tier has its own states, in process and on Redis: a key's state belongs to its tier,
/// as in [`TieredLimiter`](crate::tiers::TieredLimiter) (a key that changes tier starts from
/// that tier's full allowance). A tier of several quotas is one limit per quota, named by
/// [`quota_name`](crate::policy::quota_name) as a limit of several quotas is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct TiersSpec {
    /// Who chooses: `header:NAME` (the header's value names the tier; only behind a gateway
    /// that sets it, since a client could name any), or `given` (the host chooses per request
    /// and hands the tier in as [`GivenTiers`](super::front_end::GivenTiers)).
    pub by: String,
    /// The tiers, by label: a map of labels to quotas (each one string, several in one
    /// string, or a list), or a list of quota strings, each its own label.
    #[cfg_attr(feature = "serde", serde(default, deserialize_with = "de::tiers"))]
    pub quotas: Vec<TierSpec>,
    /// The tier of a request whose header is missing or names no tier; without one, such a
    /// request is refused with `400`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub default: Option<String>,
    /// Instead of [`quotas`](Self::quotas): any one quota string the host names is a tier,
    /// made the first time it is named (express-rate-limit's `limit` as a function of the
    /// request), at most this many (1 to 1024).
    #[cfg_attr(feature = "serde", serde(default))]
    pub open: Option<u64>,
}

/// One declared tier: its label and its quota (one string, several, or a list).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TierSpec {
    /// The label the header or the host names it by.
    pub label: String,
    /// Its quotas, as [`LimitSpec::quota`].
    pub quota: Vec<String>,
}

/// Where limits are shared: a Redis server or Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(from = "de::RedisForm"))]
#[non_exhaustive]
pub struct RedisSpec {
    /// `redis://host:port/` (`rediss://` for TLS; `redis-sentinel://host1,host2/#master` or
    /// `rediss-sentinel://` through Sentinels); a Cluster's seed nodes separated by commas.
    pub url: String,
    /// A Redis Cluster.
    pub cluster: bool,
    /// Decide with the sluicegate Redis module's `SLUICEGATE.DECIDE` where Redis has it
    /// loaded, else with the scripts.
    pub module: bool,
    /// `now` (the default: build after a first answer, within a second, so the first
    /// requests are decided on Redis; while Redis is down, build all the same) or `lazy`
    /// (build at once; the first requests wait for a background connection, within the call
    /// timeout).
    pub connect: Option<String>,
    /// The CA a `rediss://` server's certificate must chain to, instead of the system's
    /// roots: a PEM file's path, or the PEM itself (text beginning `-----BEGIN`).
    pub ca_cert: Option<String>,
    /// The client certificate shown for mutual TLS, as `ca_cert`; with `client_key`.
    pub client_cert: Option<String>,
    /// The client certificate's private key, as `ca_cert`.
    pub client_key: Option<String>,
    /// The user the Sentinels of a `redis-sentinel://` URL know (the URL's own user is the
    /// master's).
    pub sentinel_username: Option<String>,
    /// The Sentinels' password (their `requirepass`, or `sentinel_username`'s).
    pub sentinel_password: Option<String>,
}

impl FrontEndSpec {
    /// A spec of `limits` and every default.
    pub fn new(limits: impl IntoIterator<Item = LimitSpec>) -> Self {
        FrontEndSpec {
            limits: limits.into_iter().collect(),
            trusted_proxies: Vec::new(),
            forwarded_headers: None,
            ipv6_prefix: None,
            redis: None,
            on_backend_error: None,
            headers: Vec::new(),
            body: None,
            max_keys: None,
            exempt: Vec::new(),
            exempt_preflight: false,
            refund: Vec::new(),
        }
    }
}

impl LimitSpec {
    /// A limit called `name` of `quota` (one quota string or several), keyed by client IP,
    /// decided by GCRA at a cost of 1.
    pub fn new(name: impl Into<String>, quota: impl Into<String>) -> Self {
        LimitSpec {
            name: name.into(),
            key: None,
            quota: vec![quota.into()],
            tiers: None,
            algorithm: None,
            cost: 1,
        }
    }

    /// A limit called `name` whose quota is chosen per request by `tiers`.
    pub fn tiered(name: impl Into<String>, tiers: TiersSpec) -> Self {
        LimitSpec {
            name: name.into(),
            key: None,
            quota: Vec::new(),
            tiers: Some(tiers),
            algorithm: None,
            cost: 1,
        }
    }

    /// Keyed by `key`: `ip`, `global`, `header:NAME` or `given`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Decided by `algorithm`.
    pub fn algorithm(mut self, algorithm: impl Into<String>) -> Self {
        self.algorithm = Some(algorithm.into());
        self
    }

    /// Each request costs `cost`.
    pub fn cost(mut self, cost: u32) -> Self {
        self.cost = cost;
        self
    }
}

impl TiersSpec {
    /// Tiers chosen `by` (`header:NAME` or `given`) among `tiers`, `(label, quota)` pairs.
    pub fn new<L: Into<String>, Q: Into<String>>(
        by: impl Into<String>,
        tiers: impl IntoIterator<Item = (L, Q)>,
    ) -> Self {
        TiersSpec {
            by: by.into(),
            quotas: tiers
                .into_iter()
                .map(|(label, quota)| TierSpec {
                    label: label.into(),
                    quota: vec![quota.into()],
                })
                .collect(),
            default: None,
            open: None,
        }
    }

    /// Any one quota string the host names (`by` `given`), at most `max` of them.
    pub fn open(by: impl Into<String>, max: u64) -> Self {
        TiersSpec {
            by: by.into(),
            quotas: Vec::new(),
            default: None,
            open: Some(max),
        }
    }

    /// Requests whose header is missing or names no tier take tier `label`.
    pub fn default_tier(mut self, label: impl Into<String>) -> Self {
        self.default = Some(label.into());
        self
    }
}

impl RedisSpec {
    /// The Redis at `url`, connected now, deciding with the scripts.
    pub fn new(url: impl Into<String>) -> Self {
        RedisSpec {
            url: url.into(),
            cluster: false,
            module: false,
            connect: None,
            ca_cert: None,
            client_cert: None,
            client_key: None,
            sentinel_username: None,
            sentinel_password: None,
        }
    }
}
