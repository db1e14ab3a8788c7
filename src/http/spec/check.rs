//! Checking a [`FrontEndSpec`]: every option read into the library's values, every problem
//! recorded with its option's path, none left for a front end to check again.

use super::quotas::{LimitQuotas, QuotaPart};
use super::{FrontEndSpec, LimitSpec, RedisSpec, TiersSpec};
use crate::algorithm::AlgorithmKind;
use crate::http::error::{BuildError, OptionPath, Problems};
use crate::http::headers::{check_name, HeaderDraft};
use crate::http::ip::TrustedProxies;
use crate::http::key::{ClientIp, ForwardedHeaders};
use crate::http::on_backend_error::BackendErrorMode;
use crate::http::policy::DEFAULT_MAX_KEYS;
use crate::http::tiers::TierSource;
use crate::policy::{quota_name, KeySpec, PolicyError};
use http::HeaderName;

/// A spec, checked.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) limits: Vec<LimitPlan>,
    pub(crate) client_ip: ClientIp,
    pub(crate) redis: Option<RedisPlan>,
    /// What a backend failure answers (and, `local`, what limits on Redis do meanwhile).
    pub(crate) on_backend_error: BackendErrorMode,
    pub(crate) standard: Option<HeaderDraft>,
    pub(crate) legacy: bool,
    pub(crate) body: Body,
    pub(crate) max_keys: usize,
    pub(crate) exempt: Vec<Exempt>,
    pub(crate) exempt_preflight: bool,
    pub(crate) refund_failed: bool,
    pub(crate) refund_successful: bool,
}

/// One limit, checked.
#[derive(Debug)]
pub(crate) struct LimitPlan {
    pub(crate) name: String,
    /// `None`: the host hands the key in.
    pub(crate) key: Option<KeySpec>,
    pub(crate) algorithm: AlgorithmKind,
    pub(crate) cost: u32,
    pub(crate) quotas: QuotasPlan,
}

/// A limit's quotas: the same for every request, or its tiers'.
#[derive(Debug)]
pub(crate) enum QuotasPlan {
    Fixed(Vec<QuotaPart>),
    Tiered(TiersPlan),
}

/// A limit's tiers, checked.
#[derive(Debug)]
pub(crate) struct TiersPlan {
    pub(crate) by: TierSource,
    /// Declared tiers: label and quotas.
    pub(crate) tiers: Vec<(String, Vec<QuotaPart>)>,
    pub(crate) default: Option<String>,
    /// Open tiers: at most this many.
    pub(crate) open: Option<usize>,
}

/// Where the limits live on Redis (never built without feature `redis`: the spec is refused).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) struct RedisPlan {
    /// The spec as checked, its URL trimmed.
    pub(crate) spec: RedisSpec,
    /// Build after a first answer (falling back to a background connection).
    pub(crate) connect_now: bool,
}

/// A refusal's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    Text,
    Json,
    Problem,
}

/// A path passed uncounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exempt {
    /// This path exactly.
    Path(String),
    /// Every path starting so.
    Under(String),
}

impl Exempt {
    pub(crate) fn covers(&self, path: &str) -> bool {
        match self {
            Exempt::Path(exact) => path == exact,
            Exempt::Under(prefix) => path.starts_with(prefix.as_str()),
        }
    }
}

/// The most open tiers one limit keeps.
const MAX_OPEN_TIERS: u64 = 1024;

impl FrontEndSpec {
    /// Reads every option; every problem, with its path.
    pub(crate) fn check(&self) -> Result<Plan, BuildError> {
        let mut problems = Problems::default();
        let limits_path = OptionPath::field("limits");
        if self.limits.is_empty() {
            problems.add(
                limits_path.clone(),
                "give at least one limit, such as { name: \"ip\", quota: \"5/second\" }",
            );
        }
        let limits: Vec<Option<LimitPlan>> = self
            .limits
            .iter()
            .enumerate()
            .map(|(i, limit)| limit.check(&limits_path.at(i), &mut problems))
            .collect();
        check_limit_names(&self.limits, &limits, &limits_path, &mut problems);
        let client_ip = self.client_ip(&mut problems);
        let on_backend_error = self.on_backend_error(&mut problems);
        let (standard, legacy) = header_forms(&self.headers, &mut problems);
        let body = match self.body.as_deref().map(|b| b.trim().to_ascii_lowercase()) {
            None => Some(Body::Text),
            Some(body) => match body.as_str() {
                "text" => Some(Body::Text),
                "json" => Some(Body::Json),
                "problem+json" | "problem" => Some(Body::Problem),
                _ => {
                    problems.add(
                        OptionPath::field("body"),
                        format!(
                            "{:?} is not a body: text, json ({{\"detail\": ...}}) or \
                             problem+json (RFC 9457)",
                            self.body.as_deref().unwrap_or_default()
                        ),
                    );
                    None
                }
            },
        };
        let max_keys = match self.max_keys {
            None => Some(DEFAULT_MAX_KEYS),
            Some(n) if n >= 1 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Some(n) => {
                problems.add(
                    OptionPath::field("max_keys"),
                    format!("must be at least 1, got {n}"),
                );
                None
            }
        };
        let exempt = self.exempt(&mut problems);
        let (refund_failed, refund_successful) = self.refunds(&mut problems);
        let redis = self
            .redis
            .as_ref()
            .and_then(|redis| redis.check(&mut problems));
        problems.done(|| Plan {
            limits: limits.into_iter().flatten().collect(),
            client_ip: client_ip.unwrap_or_default(),
            redis,
            on_backend_error,
            standard,
            legacy,
            body: body.unwrap_or(Body::Text),
            max_keys: max_keys.unwrap_or(DEFAULT_MAX_KEYS),
            exempt,
            exempt_preflight: self.exempt_preflight,
            refund_failed,
            refund_successful,
        })
    }

    /// The client-address rules: `trusted_proxies`, `forwarded_headers`, `ipv6_prefix`.
    pub(crate) fn client_ip(&self, problems: &mut Problems) -> Option<ClientIp> {
        let mut trusted = TrustedProxies::none();
        let path = OptionPath::field("trusted_proxies");
        for (i, entry) in self.trusted_proxies.iter().enumerate() {
            // A network, or `unix` for a Unix socket's peer: the one reading of an entry.
            for network in entry.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                problems.ok(path.at(i), trusted.push_entry(network));
            }
        }
        let headers: Option<ForwardedHeaders> = match &self.forwarded_headers {
            None => Some(ForwardedHeaders::default()),
            Some(text) => problems.ok(OptionPath::field("forwarded_headers"), text.parse()),
        };
        let bits = match self.ipv6_prefix {
            None => Some(64),
            Some(bits) => {
                let fits = u8::try_from(bits).ok().filter(|bits| *bits <= 128);
                if fits.is_none() {
                    problems.add(
                        OptionPath::field("ipv6_prefix"),
                        format!("an IPv6 prefix is 0 to 128 bits, not {bits}"),
                    );
                }
                fits
            }
        };
        let client_ip = ClientIp::new()
            .trust(trusted)
            .forwarded_headers(headers?)
            .ipv6_prefix(bits?);
        problems.ok(OptionPath::field("ipv6_prefix"), client_ip)
    }

    fn on_backend_error(&self, problems: &mut Problems) -> BackendErrorMode {
        let Some(text) = &self.on_backend_error else {
            return BackendErrorMode::default();
        };
        text.parse().unwrap_or_else(|_| {
            problems.add(
                OptionPath::field("on_backend_error"),
                format!(
                    "expected allow, deny or local (decide in this process while Redis \
                     cannot), got {text:?}"
                ),
            );
            BackendErrorMode::default()
        })
    }

    fn exempt(&self, problems: &mut Problems) -> Vec<Exempt> {
        let mut exempt = Vec::new();
        for (i, path) in self.exempt.iter().enumerate() {
            let rule = match path.strip_suffix('*') {
                _ if !path.starts_with('/') => None,
                Some(prefix) if !prefix.contains('*') => Some(Exempt::Under(prefix.to_owned())),
                None if !path.contains('*') => Some(Exempt::Path(path.clone())),
                _ => None,
            };
            match rule {
                Some(rule) => exempt.push(rule),
                None => problems.add(
                    OptionPath::field("exempt").at(i),
                    format!(
                        "{path:?} is not a path to exempt: \"/health\" (that path) or \
                         \"/static/*\" (every path under it)"
                    ),
                ),
            }
        }
        exempt
    }

    fn refunds(&self, problems: &mut Problems) -> (bool, bool) {
        let (mut failed, mut successful) = (false, false);
        for (i, which) in self.refund.iter().enumerate() {
            match which.trim().to_ascii_lowercase().as_str() {
                "failed" => failed = true,
                "successful" => successful = true,
                _ => problems.add(
                    OptionPath::field("refund").at(i),
                    format!(
                        "{which:?} is not a refund: failed (responses the host finds failed \
                         give their request back) or successful"
                    ),
                ),
            }
        }
        (failed, successful)
    }
}

/// The standard headers' draft (`None`: no standard headers) and the legacy trio.
fn header_forms(forms: &[String], problems: &mut Problems) -> (Option<HeaderDraft>, bool) {
    if forms.is_empty() {
        return (Some(HeaderDraft::default()), false);
    }
    let path = OptionPath::field("headers");
    let (mut draft, mut legacy, mut none) = (None, false, false);
    for (i, form) in forms.iter().enumerate() {
        let mut standard = |wanted: HeaderDraft, problems: &mut Problems| match draft {
            Some(chosen) if chosen != wanted => problems.add(
                path.at(i),
                format!(
                    "{form:?}: the standard headers follow one draft, and {chosen:?} is given too"
                ),
            ),
            _ => draft = Some(wanted),
        };
        match form.trim().to_ascii_lowercase().as_str() {
            "standard" => standard(HeaderDraft::default(), problems),
            "legacy" => legacy = true,
            "both" => {
                standard(HeaderDraft::default(), problems);
                legacy = true;
            }
            "none" => none = true,
            other => match other.parse::<HeaderDraft>() {
                Ok(wanted) => standard(wanted, problems),
                Err(_) => problems.add(
                    path.at(i),
                    format!(
                        "{form:?} is not a header form: standard (draft-10: RateLimit-Policy \
                         and RateLimit), draft-6, draft-7, draft-8, legacy (X-RateLimit-*), both, \
                         or none"
                    ),
                ),
            },
        }
    }
    if none && (draft.is_some() || legacy) {
        problems.add(path, "none goes alone: it sends no rate-limit header");
    }
    (draft, legacy)
}

impl LimitSpec {
    /// This limit, checked; its problems recorded under `path`.
    fn check(&self, path: &OptionPath, problems: &mut Problems) -> Option<LimitPlan> {
        let before = problems.len();
        if let Err(reason) = check_name(&self.name) {
            problems.add(path.then("name"), reason);
        }
        // `Some(None)`: given by the host; `None`: wrong.
        let key = match self.key.as_deref().map(str::trim) {
            None => Some(Some(KeySpec::PeerIp)),
            Some("given") => Some(None),
            Some(text) => match text.parse::<KeySpec>() {
                Ok(key) => Some(Some(key)),
                Err(error) => {
                    let reason = match error {
                        PolicyError::BadHeaderName(name) => {
                            format!("{name:?} is not an HTTP header name")
                        }
                        _ => format!(
                            "unknown key {text:?}: expected ip (the client's address), global, \
                             header:NAME or given (a key the host computes per request)"
                        ),
                    };
                    problems.add(path.then("key"), reason);
                    None
                }
            },
        };
        let algorithm = match self.algorithm.as_deref() {
            None => Some(AlgorithmKind::default()),
            Some(text) => {
                let parsed = text.parse::<AlgorithmKind>().ok();
                if parsed.is_none() {
                    problems.add(
                        path.then("algorithm"),
                        format!(
                            "unknown algorithm {text:?}: expected gcra, token-bucket, \
                             leaky-bucket, fixed-window, sliding-window or sliding-log"
                        ),
                    );
                }
                parsed
            }
        };
        let quotas = match (&self.tiers, self.quota.is_empty()) {
            (Some(_), false) => {
                problems.add(
                    path.then("quota"),
                    "give quota or tiers, not both: tiers hold each tier's quota",
                );
                None
            }
            (None, true) => {
                problems.add(
                    path.then("quota"),
                    "missing: give a quota such as \"100/minute\", or tiers",
                );
                None
            }
            (None, false) => algorithm.and_then(|algorithm| {
                let read = LimitQuotas::new(algorithm).zero_denies(true);
                problems
                    .ok(path.then("quota"), read.check(&self.quota))
                    .map(QuotasPlan::Fixed)
            }),
            (Some(tiers), true) => tiers
                .check(&path.then("tiers"), algorithm, problems)
                .map(QuotasPlan::Tiered),
        };
        if problems.len() > before {
            return None;
        }
        Some(LimitPlan {
            name: self.name.clone(),
            key: key?,
            algorithm: algorithm?,
            cost: self.cost,
            quotas: quotas?,
        })
    }
}

impl TiersSpec {
    fn check(
        &self,
        path: &OptionPath,
        algorithm: Option<AlgorithmKind>,
        problems: &mut Problems,
    ) -> Option<TiersPlan> {
        let before = problems.len();
        let by = match self.by.trim() {
            "given" => Some(TierSource::Given),
            text => match text.parse::<KeySpec>() {
                Ok(KeySpec::Header(name)) => {
                    HeaderName::try_from(name).ok().map(TierSource::Header)
                }
                _ => None,
            },
        };
        if by.is_none() {
            problems.add(
                path.then("by"),
                format!(
                    "{:?} chooses no tier: header:NAME (the header's value names the tier) or \
                     given (the host chooses per request)",
                    self.by
                ),
            );
        }
        let read = algorithm.map(|a| LimitQuotas::new(a).zero_denies(true));
        let mut tiers = Vec::new();
        let quotas_path = path.then("quotas");
        for (i, tier) in self.quotas.iter().enumerate() {
            if self.quotas[..i].iter().any(|t| t.label == tier.label) {
                problems.add(
                    quotas_path.key(&tier.label),
                    format!("tier {:?} is given twice", tier.label),
                );
                continue;
            }
            if let Some(read) = read {
                if let Some(parts) =
                    problems.ok(quotas_path.key(&tier.label), read.check(&tier.quota))
                {
                    tiers.push((tier.label.clone(), parts));
                }
            }
        }
        let open = match (self.open, self.quotas.is_empty()) {
            (Some(_), false) => {
                problems.add(
                    path.then("open"),
                    "give quotas or open, not both: open tiers are the quota strings the host names",
                );
                None
            }
            (None, true) => {
                problems.add(
                    quotas_path.clone(),
                    "is empty: give the tiers' quotas, or open: N for any quota the host names",
                );
                None
            }
            (None, false) => None,
            (Some(max), true) => {
                if !(1..=MAX_OPEN_TIERS).contains(&max) {
                    problems.add(
                        path.then("open"),
                        format!("must be 1 to {MAX_OPEN_TIERS} tiers, got {max}"),
                    );
                }
                if by != Some(TierSource::Given) && by.is_some() {
                    problems.add(
                        path.then("by"),
                        "open tiers are chosen by the host (given): a client's header could \
                         name any quota",
                    );
                }
                Some(max as usize)
            }
        };
        if let Some(default) = &self.default {
            let known = match open {
                Some(_) => read.is_none_or(|read| open_tier(read, default).is_ok()),
                None => self.quotas.iter().any(|t| &t.label == default),
            };
            if !known {
                problems.add(
                    path.then("default"),
                    format!("{default:?} is not one of the tiers"),
                );
            }
        }
        if problems.len() > before {
            return None;
        }
        Some(TiersPlan {
            by: by?,
            tiers,
            default: self.default.clone(),
            open,
        })
    }
}

/// An open tier's one quota: its label read as one quota string.
pub(crate) fn open_tier(read: LimitQuotas, label: &str) -> Result<QuotaPart, String> {
    match read.check(&[label]) {
        Ok(parts) if parts.len() == 1 => Ok(parts[0]),
        Ok(_) => Err(format!("{label:?} is several quotas; an open tier is one")),
        Err(problem) => Err(problem.reason),
    }
}

/// Refuses two limits that could be named alike in one response: names, and the names of
/// each limit's quotas (`NAME-1`, `NAME-2`...).
fn check_limit_names(
    specs: &[LimitSpec],
    plans: &[Option<LimitPlan>],
    path: &OptionPath,
    problems: &mut Problems,
) {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for (i, (spec, plan)) in specs.iter().zip(plans).enumerate() {
        let mut names = vec![spec.name.clone()];
        if let Some(plan) = plan {
            let widths: Vec<usize> = match &plan.quotas {
                QuotasPlan::Fixed(parts) => vec![parts.len()],
                QuotasPlan::Tiered(tiers) => {
                    tiers.tiers.iter().map(|(_, parts)| parts.len()).collect()
                }
            };
            for width in widths {
                for part in 0..width {
                    let name = quota_name(&spec.name, part, width).into_owned();
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        for name in names {
            if let Some((_, other)) = seen.iter().find(|(seen, _)| *seen == name) {
                problems.add(
                    path.at(i).then("name"),
                    format!(
                        "limits[{other}] is named {name:?} too; names must differ, since \
                         headers and Redis keys name each limit"
                    ),
                );
                break;
            }
            seen.push((name, i));
        }
    }
}

impl RedisSpec {
    /// Checks this Redis's options without connecting (the URL, each seed node's for a
    /// Cluster, a Sentinel URL's form, the PEM options, `connect`): every problem, each
    /// named as `redis.<option>`. For a front end that takes Redis apart from a
    /// [`FrontEndSpec`], so that a mistake fails where it is configured, not at the first
    /// request.
    pub fn validate(&self) -> Result<(), BuildError> {
        let mut problems = Problems::default();
        self.check(&mut problems);
        problems.done(|| ())
    }

    fn check(&self, problems: &mut Problems) -> Option<RedisPlan> {
        let path = OptionPath::field("redis");
        let before = problems.len();
        let connect_now = match self.connect.as_deref().map(str::trim) {
            None | Some("now") => true,
            Some("lazy") => false,
            Some(other) => {
                problems.add(
                    path.then("connect"),
                    format!("expected now or lazy, got {other:?}"),
                );
                true
            }
        };
        check_redis_url(&self.url, self.cluster, &path.then("url"), problems);
        for (name, value) in [
            ("ca_cert", &self.ca_cert),
            ("client_cert", &self.client_cert),
            ("client_key", &self.client_key),
        ] {
            if let Some(Err(e)) = value.as_deref().map(pem_text) {
                problems.add(path.then(name), e);
            }
        }
        if self.client_cert.is_some() != self.client_key.is_some() {
            problems.add(
                path.then(if self.client_cert.is_some() {
                    "client_key"
                } else {
                    "client_cert"
                }),
                "a client certificate and its key go together: give both client_cert and \
                 client_key, or neither",
            );
        }
        (problems.len() == before).then(|| RedisPlan {
            spec: RedisSpec {
                url: self.url.trim().to_owned(),
                ..self.clone()
            },
            connect_now,
        })
    }
}

/// A TLS option's PEM (`ca_cert`, `client_cert`, `client_key`): the value itself when it is
/// PEM text, else the file it names; the error says which it was neither of.
pub fn pem_text(value: &str) -> Result<Vec<u8>, String> {
    if value.trim_start().starts_with("-----BEGIN") {
        return Ok(value.as_bytes().to_vec());
    }
    std::fs::read(value).map_err(|e| {
        format!("{value:?} is neither PEM text (-----BEGIN ...) nor a file that can be read: {e}")
    })
}

/// Problems with a Redis URL (each seed node's, for a cluster; a Sentinel URL's form);
/// connecting waits for building.
#[cfg(feature = "redis")]
fn check_redis_url(url: &str, cluster: bool, path: &OptionPath, problems: &mut Problems) {
    let urls: Vec<&str> = if cluster {
        url.split(',').map(str::trim).collect()
    } else {
        vec![url.trim()]
    };
    for one in urls {
        if let Err(e) = crate::redis::check_url(one) {
            problems.add(
                path.clone(),
                format!("{one:?} is not a Redis URL such as \"redis://127.0.0.1:6379/\": {e}"),
            );
        }
    }
}

#[cfg(not(feature = "redis"))]
fn check_redis_url(_url: &str, _cluster: bool, path: &OptionPath, problems: &mut Problems) {
    problems.add(
        path.clone(),
        "this build has no Redis support: sluicegate's feature redis adds it",
    );
}
