//! The limiters behind the rules: one keyed limiter per quota of a rule (a rule may have
//! several, decided all or nothing), in this process or on Redis, kept across reloads when a
//! quota's algorithm did not change; and the bounded cache of
//! limiters made for descriptors' `limit` overrides (`overrides.rs`).

mod overrides;

pub use overrides::{Overrides, Shape, DEFAULT_MAX as DEFAULT_MAX_OVERRIDES};

use crate::config::{Config, Limit, QuotaRule, Unit};
use sluicegate::backend::Backend;
use sluicegate::dynamic::AnyKeyedLimiter;
use sluicegate::policy::AlgorithmKind;
use sluicegate::redis::{AnyRedisLimiter, RedisBuilder, RedisTime};
use sluicegate::Quota;
use std::sync::Arc;
use std::time::Duration;

/// How long an eager Redis connection may take before the limiter connects in the
/// background instead.
const EAGER_CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Where the limits' state lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backing {
    /// In this process (the default).
    InProcess {
        /// The most keys (distinct descriptor values) one rule holds; beyond it, a new
        /// key is over the limit until idle keys are dropped. Bounds memory under a flood
        /// of distinct values.
        max_keys: usize,
    },
    /// On Redis, shared by every server that points at it.
    Redis {
        /// The URL (`redis://`, `rediss://`, `redis-sentinel://`, `rediss-sentinel://`); for
        /// a cluster, seed URLs separated by commas.
        url: String,
        /// Whether it is a Redis Cluster.
        cluster: bool,
        /// Whether to decide with the sluicegate Redis module where Redis has it.
        module: bool,
        /// TLS files and Sentinel credentials.
        secrets: RedisSecrets,
    },
}

/// What reaching Redis takes beyond its URL: TLS files (PEM, read at start) and the
/// Sentinels' credentials.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RedisSecrets {
    /// `--redis-ca-cert`: the CA a `rediss` server's certificate must chain to.
    pub ca_cert: Option<Vec<u8>>,
    /// `--redis-client-cert`: the client certificate for mutual TLS.
    pub client_cert: Option<Vec<u8>>,
    /// `--redis-client-key`: its key.
    pub client_key: Option<Vec<u8>>,
    /// `--redis-sentinel-username`.
    pub sentinel_username: Option<String>,
    /// `--redis-sentinel-password`.
    pub sentinel_password: Option<String>,
}

impl std::fmt::Debug for RedisSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSecrets")
            .field("ca_cert", &self.ca_cert.is_some())
            .field("client_cert", &self.client_cert.is_some())
            .field("client_key", &self.client_key.is_some())
            .field("sentinel_username", &self.sentinel_username)
            .field("sentinel_password", &self.sentinel_password.is_some())
            .finish()
    }
}

impl RedisSecrets {
    /// The builder with these files and credentials.
    fn apply(
        &self,
        mut builder: RedisBuilder<AlgorithmKind, RedisTime>,
    ) -> RedisBuilder<AlgorithmKind, RedisTime> {
        if let Some(pem) = &self.ca_cert {
            builder = builder.ca_cert(pem.clone());
        }
        if let Some(pem) = &self.client_cert {
            builder = builder.client_cert(pem.clone());
        }
        if let Some(pem) = &self.client_key {
            builder = builder.client_key(pem.clone());
        }
        if let Some(password) = &self.sentinel_password {
            builder = builder.sentinel_auth(self.sentinel_username.as_deref(), password);
        }
        builder
    }
}

/// One rule's limiter.
#[derive(Clone)]
pub enum RuleLimiter {
    /// In process: decisions complete without waiting.
    Local(Arc<AnyKeyedLimiter<String>>),
    /// On Redis.
    Remote(Arc<AnyRedisLimiter>),
}

impl std::fmt::Debug for RuleLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleLimiter::Local(l) => write!(f, "Local({})", l.algorithm()),
            RuleLimiter::Remote(r) => write!(f, "Remote({}, {})", r.algorithm(), r.quota()),
        }
    }
}

impl RuleLimiter {
    /// False while its Redis is known to be down.
    pub fn available(&self) -> bool {
        match self {
            RuleLimiter::Local(_) => true,
            RuleLimiter::Remote(remote) => remote.is_available(),
        }
    }

    /// The limiter through the library's seam.
    pub fn backend(&self) -> &dyn Backend<str> {
        match self {
            RuleLimiter::Local(local) => &**local,
            RuleLimiter::Remote(remote) => &**remote,
        }
    }
}

/// One quota of a rule: its limiter, and how `current_limit` shows the quota.
#[derive(Debug, Clone)]
pub struct RuleQuota {
    /// The limiter.
    pub limiter: RuleLimiter,
    /// `current_limit`'s requests per unit, and the unit.
    pub shown: (u32, Unit),
}

/// Every rule's limiters, indexed like [`Config::rules`], and the limiters made for
/// descriptors' `limit` overrides.
#[derive(Debug)]
pub struct Limits {
    backing: Backing,
    /// One per quota of each rule, in the config's order; none for rules without a quota.
    per_rule: Vec<Vec<RuleQuota>>,
    /// By rule index and the override's requests per unit and unit, bounded.
    overrides: Overrides,
}

/// Why an override got no limiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverrideError {
    /// The rule's algorithm cannot run it: the client's fault.
    Invalid(String),
    /// Every cached override limiter still carries state: no room for a new one.
    NoRoom,
}

impl Limits {
    /// Limiters for `config`'s rules. A rule of `previous` at the same place (domain and
    /// key) keeps the limiters of its quotas that are unchanged (quota and algorithm); with as
    /// many quotas as before, a changed one takes over the limiter at its place when the
    /// algorithm is the same, in process with its quota changed by `set_quota` (state carries
    /// over). The override cache is as large as `previous`'s, or [`DEFAULT_MAX_OVERRIDES`]
    /// (see [`Limits::with_max_overrides`]).
    pub async fn build(
        config: &Config,
        backing: &Backing,
        previous: Option<(&Config, &Limits)>,
    ) -> Result<Limits, String> {
        let mut per_rule = Vec::with_capacity(config.rules.len());
        // Connect eagerly while Redis answers, so the first calls find a connection; once a
        // connection fails, the rest connect in the background rather than each waiting.
        let mut eager = true;
        for rule in &config.rules {
            let Limit::Quotas(wanted) = &rule.limit else {
                per_rule.push(Vec::new());
                continue;
            };
            let had = previous.and_then(|(old_config, old_limits)| {
                let i = old_config
                    .rules
                    .iter()
                    .position(|old| old.identity() == rule.identity())?;
                let Limit::Quotas(had) = &old_config.rules[i].limit else {
                    return None;
                };
                Some((had.as_slice(), old_limits.per_rule.get(i)?.as_slice()))
            });
            let mut quotas = Vec::with_capacity(wanted.len());
            for (i, want) in wanted.iter().enumerate() {
                let kept = had.and_then(|(had, limiters)| kept(had, limiters, wanted, i));
                let limiter = match kept {
                    Some(limiter) => limiter,
                    None => {
                        // Every quota of a rule shares its prefix: Redis keys end with the
                        // quota's fingerprint, so they stay apart.
                        let prefix = prefix(&rule.domain, &rule.key, None);
                        let made =
                            make(backing, want.quota, want.algorithm, &prefix, eager).await?;
                        eager &= made.available();
                        made
                    }
                };
                quotas.push(RuleQuota {
                    limiter,
                    shown: want.shown,
                });
            }
            per_rule.push(quotas);
        }
        let max_overrides = previous.map_or(DEFAULT_MAX_OVERRIDES, |(_, old)| old.overrides.max());
        Ok(Limits {
            backing: backing.clone(),
            per_rule,
            overrides: Overrides::new(max_overrides),
        })
    }

    /// The same limits, with room for at most `max` override limiters (empty).
    pub fn with_max_overrides(mut self, max: usize) -> Limits {
        self.overrides = Overrides::new(max);
        self
    }

    /// The override limiters' cache.
    pub fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// Every in-process limiter, for the sweeper: the rules' and the overrides'.
    pub fn sweep(&self) -> usize {
        let mut swept = 0;
        for quota in self.per_rule.iter().flatten() {
            if let RuleLimiter::Local(local) = &quota.limiter {
                swept += local.sweep();
            }
        }
        swept + self.overrides.sweep()
    }

    /// The limiters of rule `rule`'s quotas (none for unlimited and deny-all rules).
    pub fn rule(&self, rule: usize) -> Option<&[RuleQuota]> {
        Some(self.per_rule.get(rule)?.as_slice()).filter(|quotas| !quotas.is_empty())
    }

    /// The limiter for rule `rule` under a descriptor's override of `requests` per `unit`,
    /// made on first use with the rule's algorithm.
    pub async fn for_override(
        &self,
        config: &Config,
        rule: usize,
        requests: u32,
        unit: Unit,
    ) -> Result<RuleLimiter, OverrideError> {
        let wanted = (rule, requests, unit);
        if let Some(found) = self.overrides.get(&wanted) {
            return Ok(found);
        }
        // A rule's quotas share one algorithm.
        let algorithm = match &config.rules[rule].limit {
            Limit::Quotas(quotas) => quotas.first().map(|q| q.algorithm),
            _ => None,
        }
        .unwrap_or(AlgorithmKind::FixedWindow);
        let invalid = |e: &dyn std::fmt::Display| {
            OverrideError::Invalid(format!(
                "the limit override of {requests} per {unit} cannot be decided by the rule's {algorithm} limiter: {e}"
            ))
        };
        let quota = Quota::new(requests, unit.duration()).map_err(|e| invalid(&e))?;
        if !self.overrides.room() {
            return Err(OverrideError::NoRoom);
        }
        let r = &config.rules[rule];
        let prefix = prefix(&r.domain, &r.key, Some((requests, unit)));
        // Everything `make` can refuse is the quota (Redis connects in the background).
        let made = make(&self.backing, quota, algorithm, &prefix, self.available())
            .await
            .map_err(|e| invalid(&e))?;
        // Two first uses may race: the first one stored wins, so both share it.
        self.overrides
            .insert(wanted, made)
            .ok_or(OverrideError::NoRoom)
    }

    /// False while a Redis backend is known to be down.
    pub fn available(&self) -> bool {
        self.per_rule
            .iter()
            .flatten()
            .all(|quota| quota.limiter.available())
    }
}

/// The limiter quota `i` of `wanted` keeps from the rule's previous quotas `had` (and their
/// `limiters`), if any: the one with the same quota and algorithm; else, when the count is
/// unchanged, the one at its place, unless that one is kept as it is by another quota.
fn kept(
    had: &[QuotaRule],
    limiters: &[RuleQuota],
    wanted: &[QuotaRule],
    i: usize,
) -> Option<RuleLimiter> {
    let same = |a: &QuotaRule, b: &QuotaRule| a.quota == b.quota && a.algorithm == b.algorithm;
    let want = wanted[i];
    if let Some(j) = had.iter().position(|old| same(old, &want)) {
        return Some(limiters.get(j)?.limiter.clone());
    }
    let old = *had.get(i)?;
    if had.len() != wanted.len() || wanted.iter().any(|w| same(w, &old)) {
        return None;
    }
    carry_over(limiters.get(i)?.limiter.clone(), old, want)
}

/// The old limiter for the new quota, if it can be kept.
fn carry_over(limiter: RuleLimiter, had: QuotaRule, wanted: QuotaRule) -> Option<RuleLimiter> {
    if had.algorithm != wanted.algorithm {
        return None;
    }
    if had.quota == wanted.quota {
        return Some(limiter);
    }
    match &limiter {
        RuleLimiter::Local(local) => local.set_quota(wanted.quota).ok().map(|()| limiter),
        // Redis state is keyed by quota: a new limiter on the same prefix starts afresh.
        RuleLimiter::Remote(_) => None,
    }
}

/// The Redis key prefix of a rule (and override): readable, and free of the braces that
/// would move Redis Cluster's hash tag.
fn prefix(domain: &str, key: &str, overridden: Option<(u32, Unit)>) -> String {
    let clean = |text: &str| {
        text.replace('%', "%25")
            .replace('{', "%7B")
            .replace('}', "%7D")
            .replace(':', "%3A")
    };
    let mut prefix = format!("sluicegate-server:{}:{}:", clean(domain), clean(key));
    if let Some((requests, unit)) = overridden {
        prefix.push_str(&format!("override-{requests}-per-{unit}:"));
    }
    prefix
}

/// A new limiter for `quota` decided by `algorithm`; on Redis, `eager` connects before
/// returning (falling back to connecting in the background when that fails).
async fn make(
    backing: &Backing,
    quota: Quota,
    algorithm: AlgorithmKind,
    prefix: &str,
    eager: bool,
) -> Result<RuleLimiter, String> {
    match backing {
        Backing::InProcess { max_keys } => AnyKeyedLimiter::builder(quota, algorithm)
            .max_keys(*max_keys)
            .build()
            .map(|limiter| RuleLimiter::Local(Arc::new(limiter)))
            .map_err(|e| e.to_string()),
        Backing::Redis {
            url,
            cluster,
            module,
            secrets,
        } => {
            let remote = redis(
                quota,
                algorithm,
                url,
                (*cluster, *module),
                secrets,
                prefix,
                eager,
            )
            .await?;
            Ok(RuleLimiter::Remote(Arc::new(remote)))
        }
    }
}

/// A Redis limiter, connected when `eager` and Redis answers within
/// [`EAGER_CONNECT_TIMEOUT`], else lazily (connecting in the background), so that the
/// server starts while Redis is down.
async fn redis(
    quota: Quota,
    algorithm: AlgorithmKind,
    url: &str,
    (cluster, module): (bool, bool),
    secrets: &RedisSecrets,
    prefix: &str,
    eager: bool,
) -> Result<AnyRedisLimiter, String> {
    let builder = || {
        let builder = AnyRedisLimiter::builder(quota, algorithm, url)
            .prefix(prefix)
            .name(prefix.trim_end_matches(':'))
            .cluster(cluster)
            .module(module)
            // The service never resets a key: no subscription per rule to hear resets.
            .reset_watch(false);
        secrets.apply(builder)
    };
    if eager {
        match builder()
            .connect_timeout(EAGER_CONNECT_TIMEOUT)
            .connect()
            .await
        {
            Ok(limiter) => return Ok(limiter),
            Err(e) => tracing::warn!(
                prefix,
                "Redis does not answer yet, connecting in the background: {e}"
            ),
        }
    }
    builder()
        .lazy(true)
        .connect()
        .await
        .map_err(|e| format!("Redis limiter {prefix}: {e}"))
}
