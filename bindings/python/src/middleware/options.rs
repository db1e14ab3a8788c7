//! The middlewares' options (`limits`, `trusted_proxies`, `ipv6_prefix`, `forwarded_headers`,
//! `redis`, `redis_cluster`, `on_backend_error`, `max_keys`), read from Python into the
//! library's own values, and the `RequestLimiter`s they describe, in process or on Redis.
//!
//! A limit's quota string may hold several quotas (`"5/minute; 100/hour"`, the library's
//! `Quota::parse_many`): each is one library limit (named `NAME-1`, `NAME-2`...), so the
//! library decides them all-or-nothing. A limit whose quota is a function of the request
//! chooses, per request, one of a bounded set of quotas (`quotas`, its tiers): each tier has
//! its own tables, built once, and the middleware holds one `RequestLimiter` per combination
//! of the tiers its limits may choose, sharing every limit's tables.

use crate::args::{text, type_name};
use crate::errors;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use sluicegate::http::front_end::{
    in_process_backend_bounded, key_extractor, parse_backend_error_mode, redis_backend,
    FrontEndError, FrontEndOption, FrontEndOptions, GivenKey,
};
use sluicegate::http::spec::RedisSpec;
use sluicegate::http::{
    BackendErrorMode, ClientAddr, ClientIp, Peer, ProblemJson, RateLimitBuilder, Rejection,
    RequestLimit, RequestLimiter, DEFAULT_MAX_KEYS,
};
use sluicegate::policy::{quota_name, AlgorithmKind, KeySpec, Policy, PolicyError};
use sluicegate::redis::AnyRedisLimiter;
use sluicegate::Quota;

/// Every option, checked.
pub(crate) struct Options {
    limits: Vec<Limit>,
    client_ip: ClientIp,
    /// True when a limit's key is the client's address (`"ip"`, or a key function given it).
    keys_by_client: bool,
    /// `on_backend_error`: what the limits on Redis do while it cannot decide (the library's
    /// answer and fallback).
    on_backend_error: BackendErrorMode,
    /// Where the limits live when not in this process.
    redis: Option<RedisSpec>,
    standard_headers: bool,
    legacy_headers: bool,
    body: Body,
    /// The most keys each in-process keyed table holds.
    max_keys: usize,
}

/// The most combinations of tiers one middleware's quota functions may choose among.
const MAX_COMBINATIONS: usize = 256;

/// The body of a refusal: the library's plain text, the sentence as FastAPI's JSON
/// `{"detail": ...}`, or the library's RFC 9457 problem details.
#[derive(Clone, Copy)]
enum Body {
    Text,
    Json,
    Problem,
}

/// One limit. `key` is `Global` and unused where a function computes the key.
struct Limit {
    name: String,
    algorithm: AlgorithmKind,
    key: KeySpec,
    cost: u32,
    given: bool,
    /// The quotas of each tier it may decide by (one tier when its quota is fixed), each
    /// tier's quotas decided all-or-nothing.
    tiers: Vec<Vec<Quota>>,
    /// The library limits the options build, one per tier and quota, by `built`.
    stride: usize,
}

/// A limit whose key a Python function computes: its name, the function, and whether it
/// takes the client's address (the one the trusted-proxy rules resolved) as a second argument.
pub(crate) type KeyFunction = (String, Py<PyAny>, bool);

/// A limit whose quota a Python function chooses per request: its name, the function, the
/// quota strings it may return (in order), and how far one step of its choice moves in the
/// list of combinations.
pub(crate) struct QuotaFunction {
    pub(crate) name: String,
    pub(crate) function: Py<PyAny>,
    pub(crate) quotas: Vec<String>,
    pub(crate) stride: usize,
}

/// The fields a limit's dict may have.
const FIELDS: [&str; 6] = ["name", "key", "quota", "quotas", "algorithm", "cost"];

/// A limiter and its limits' names, in order.
pub(crate) type Named = (RequestLimiter, std::sync::Arc<[String]>);

/// What the options build: one `RequestLimiter` per combination of tiers (one in all without
/// quota functions), each with its limits' names in order, sharing their tables; and the
/// limiters on Redis (their counters say how Redis fares).
pub(crate) struct Built {
    pub(crate) limiters: Vec<Named>,
    pub(crate) remotes: Vec<AnyRedisLimiter>,
}

impl Options {
    /// Reads the options; a `ValueError` or `TypeError` says which one is wrong and why.
    /// Returns the key functions beside them, in the order of their limits.
    #[allow(clippy::too_many_arguments)] // the middlewares' keyword arguments
    pub(crate) fn read(
        limits: &Bound<'_, PyAny>,
        trusted_proxies: Option<&Bound<'_, PyAny>>,
        ipv6_prefix: u32,
        forwarded_headers: &str,
        redis: Option<&Bound<'_, PyAny>>,
        redis_cluster: bool,
        on_backend_error: &str,
        header_form: &Bound<'_, PyAny>,
        body: &str,
        max_keys: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Options, Vec<KeyFunction>, Vec<QuotaFunction>)> {
        if limits.is_instance_of::<PyString>() || limits.is_instance_of::<PyDict>() {
            return Err(PyTypeError::new_err(format!(
                "limits must be a list of dicts, got {}: write limits=[{{\"name\": \"ip\", \
                 \"key\": \"ip\", \"quota\": \"5/second\"}}]",
                type_name(limits)
            )));
        }
        let mut read = Vec::new();
        let mut functions = Vec::new();
        let mut choosers = Vec::new();
        for (i, item) in limits.try_iter()?.enumerate() {
            let (limit, function, chooser) = limit(i, &item?)?;
            if let Some(function) = function {
                let takes_client = takes_client(function.bind(limits.py()))?;
                functions.push((limit.name.clone(), function, takes_client));
            }
            if let Some(chooser) = chooser {
                choosers.push((read.len(), chooser));
            }
            read.push(limit);
        }
        // Combination `c` takes tier `(c / stride) % tiers` of each limit, the last limit's
        // varying fastest.
        let mut combinations = 1usize;
        for limit in read.iter_mut().rev() {
            limit.stride = combinations;
            combinations = combinations.saturating_mul(limit.tiers.len());
        }
        if combinations > MAX_COMBINATIONS {
            return Err(PyValueError::new_err(format!(
                "the quota functions choose among {combinations} combinations of quotas; at \
                 most {MAX_COMBINATIONS} (each is its own set of tables): give fewer quotas="
            )));
        }
        let choosers = choosers
            .into_iter()
            .map(|(i, (function, quotas))| QuotaFunction {
                name: read[i].name.clone(),
                function,
                quotas,
                stride: read[i].stride,
            })
            .collect();
        let max_keys = crate::args::max_keys(max_keys)?.unwrap_or(DEFAULT_MAX_KEYS);
        // Read by the library, as Node's are: the same spellings in every binding.
        let client_ip = FrontEndOptions {
            trusted_proxies: &trusted(trusted_proxies)?,
            forwarded_headers,
            ipv6_prefix,
        }
        .client_ip()
        .map_err(named)?;
        let on_backend_error = parse_backend_error_mode(on_backend_error).map_err(named)?;
        let keys_by_client = functions.iter().any(|(_, _, client)| *client)
            || read
                .iter()
                .any(|limit| matches!(limit.key, KeySpec::PeerIp));
        let (standard_headers, legacy_headers) = header_forms(header_form)?;
        let body = match body {
            "text" => Body::Text,
            "json" => Body::Json,
            "problem+json" => Body::Problem,
            other => {
                return Err(PyValueError::new_err(format!(
                    "body: {other:?} is not a body: \"text\", \"json\" ({{\"detail\": ...}}) or \
                     \"problem+json\" (RFC 9457)"
                )))
            }
        };
        let redis = redis
            .filter(|r| !r.is_none())
            .map(|r| crate::redis_target::redis_option(r, redis_cluster))
            .transpose()?;
        let options = Options {
            limits: read,
            client_ip,
            keys_by_client,
            on_backend_error,
            redis,
            standard_headers,
            legacy_headers,
            body,
            max_keys,
        };
        // Checks every limit and the set of them (names, count) now, even when the limits
        // will live on Redis, so that a mistake fails where the middleware is built.
        options.in_process().map_err(errors::value)?;
        Ok((options, functions, choosers))
    }

    /// `on_backend_error` as the library spells it: `"allow"`, `"deny"` or `"local"`.
    pub(crate) fn on_backend_error(&self) -> &'static str {
        self.on_backend_error.as_str()
    }

    /// True when the limits live on Redis.
    pub(crate) fn on_redis(&self) -> bool {
        self.redis.is_some()
    }

    /// The limits' names, in order (as given: a limit of several quotas is one name here).
    pub(crate) fn names(&self) -> Vec<String> {
        self.limits.iter().map(|l| l.name.clone()).collect()
    }

    /// The client's address as the trusted-proxy rules resolve it (before grouping), or
    /// `None` when the server gave none or the forwarding headers are malformed.
    pub(crate) fn client_address(&self, request: &http::request::Parts) -> Option<String> {
        match self.client_ip.client_addr(request).ok()? {
            ClientAddr::Ip(ip) => Some(ip.to_string()),
            ClientAddr::Obfuscated(name) => Some(name.to_owned()),
        }
    }

    /// The warning to give once when every request from `peer` shares one key for the limits
    /// keyed by the client's address (a Unix socket nobody trusts): the library's sentence.
    pub(crate) fn shared_key_warning(&self, peer: &Peer) -> Option<String> {
        if !self.keys_by_client {
            return None;
        }
        self.client_ip.shared_key_warning(peer, "trusted_proxies")
    }

    /// A builder with the settings (headers, body, backend errors) and no limit yet.
    fn builder(&self) -> RateLimitBuilder {
        let builder = RequestLimiter::builder()
            .on_backend_error(self.on_backend_error.answer())
            .standard_headers(self.standard_headers)
            .legacy_headers(self.legacy_headers);
        match self.body {
            Body::Text => builder,
            Body::Problem => builder.responder(ProblemJson),
            Body::Json => builder.responder(json_detail),
        }
    }

    /// The limiters with every limit in this process.
    pub(crate) fn in_process(&self) -> Result<Built, String> {
        let tiers = self.tiers(|limit, policy| {
            if limit.given {
                let backend =
                    in_process_backend_bounded(policy.algorithm, policy.quota, true, self.max_keys)
                        .map_err(|e| format!("limit {:?}: {e}", limit.name))?;
                Ok(RequestLimit::shared(policy.name.clone(), backend))
            } else {
                RequestLimit::from_policy_bounded(policy, &self.client_ip, self.max_keys)
                    .map_err(|e| e.to_string())
            }
        })?;
        Ok(Built {
            limiters: self.combine(&tiers)?,
            remotes: Vec::new(),
        })
    }

    /// The limiters the options describe: on Redis when `redis` is set (connected when Redis
    /// answers, so that the first request is decided there, else built all the same; needs
    /// the tokio runtime), else in process.
    pub(crate) async fn limiter(&self) -> Result<Built, String> {
        let Some(redis_spec) = &self.redis else {
            return self.in_process();
        };
        let mut remotes = Vec::new();
        let mut tiers = Vec::new();
        for limit in &self.limits {
            let mut built = Vec::new();
            for tier in limit.policies() {
                let mut parts = Vec::new();
                for policy in tier {
                    // Connected first, so that the first request is decided on Redis when
                    // it answers; built lazily all the same when it does not.
                    let backend = redis_backend(&policy, redis_spec, self.on_backend_error, true)
                        .await
                        .map_err(|e| format!("limit {:?} on Redis: {e}", policy.name))?;
                    remotes.push(backend.clone());
                    let mut one = RequestLimit::new(policy.name.clone(), backend);
                    if !limit.given {
                        one = one.key(
                            key_extractor(&policy.key, &self.client_ip)
                                .map_err(|e| e.to_string())?,
                        );
                    }
                    parts.push(limit.finish(one));
                }
                built.push(parts);
            }
            tiers.push(built);
        }
        Ok(Built {
            limiters: self.combine(&tiers)?,
            remotes,
        })
    }

    /// Each limit's tiers, each tier's library limits, built by `build` from their policies.
    fn tiers(
        &self,
        build: impl Fn(&Limit, &Policy) -> Result<RequestLimit, String>,
    ) -> Result<Vec<Vec<Vec<RequestLimit>>>, String> {
        self.limits
            .iter()
            .map(|limit| {
                limit
                    .policies()
                    .into_iter()
                    .map(|tier| {
                        tier.iter()
                            .map(|policy| build(limit, policy).map(|one| limit.finish(one)))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }

    /// One `RequestLimiter` per combination of tiers, in the order `QuotaFunction::stride`
    /// counts them, with its limits' names.
    fn combine(&self, tiers: &[Vec<Vec<RequestLimit>>]) -> Result<Vec<Named>, String> {
        let combinations: usize = tiers.iter().map(Vec::len).product();
        (0..combinations)
            .map(|combination| {
                let mut builder = self.builder();
                let mut names = Vec::new();
                for (limit, tiers) in self.limits.iter().zip(tiers) {
                    let tier = (combination / limit.stride) % tiers.len();
                    for one in &tiers[tier] {
                        names.push(one.name().to_owned());
                        builder = builder.limit(one.clone());
                    }
                }
                let limiter = builder.limiter().map_err(|e| e.to_string())?;
                Ok((limiter, names.into()))
            })
            .collect()
    }
}

impl Limit {
    /// `built` with this limit's cost, and keyed by the key function's answer if it has one.
    fn finish(&self, built: RequestLimit) -> RequestLimit {
        let built = built.cost(self.cost);
        if self.given {
            built.key(GivenKey::new(self.name.clone()))
        } else {
            built
        }
    }

    /// The policies of each tier: one per quota, named by the library's `quota_name`
    /// (`NAME`, or `NAME-1`, `NAME-2`... for several: headers report by name, and each name
    /// is its own prefix on Redis).
    fn policies(&self) -> Vec<Vec<Policy>> {
        self.tiers
            .iter()
            .map(|quotas| {
                quotas
                    .iter()
                    .enumerate()
                    .map(|(i, quota)| Policy {
                        name: quota_name(&self.name, i, quotas.len()).into_owned(),
                        quota: *quota,
                        algorithm: self.algorithm,
                        key: self.key.clone(),
                    })
                    .collect()
            })
            .collect()
    }
}

/// A quota function and the quota strings it may return.
type Chooser = (Py<PyAny>, Vec<String>);

/// `limits[i]`: `{"name", "key", "quota", "quotas"?, "algorithm"?, "cost"?}`, its key
/// function if `key` is one, and its quota function if `quota` is one.
fn limit(
    i: usize,
    item: &Bound<'_, PyAny>,
) -> PyResult<(Limit, Option<Py<PyAny>>, Option<Chooser>)> {
    let Ok(item) = item.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "limits[{i}] must be a dict, got {}",
            type_name(item)
        )));
    };
    for field in item.keys() {
        let known = text(&field, "a field").is_ok_and(|field| FIELDS.contains(&field));
        if !known {
            return Err(PyValueError::new_err(format!(
                "limits[{i}] has an unknown field {}: a limit has name, key, quota, quotas, \
                 algorithm and cost",
                field.repr()?
            )));
        }
    }
    let field_text = |field: &str, default: Option<&str>| -> PyResult<String> {
        match item.get_item(field)? {
            Some(value) => value.extract::<String>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "limits[{i}][{field:?}] must be a str, got {}",
                    type_name(&value)
                ))
            }),
            None => default
                .map(str::to_owned)
                .ok_or_else(|| PyValueError::new_err(format!("limits[{i}] has no {field:?}"))),
        }
    };
    let name = field_text("name", None)?;
    let invalid = |e: &dyn std::fmt::Display| errors::value(format!("limit {name:?}: {e}"));
    // Several quotas in one string are the library's to read (`Quota::parse_many`).
    let quotas_of =
        |text: &str| -> PyResult<Vec<Quota>> { Quota::parse_many(text).map_err(|e| invalid(&e)) };
    let (tiers, chooser) = match item.get_item("quota")? {
        Some(function) if function.is_callable() => {
            let Some(listed) = item.get_item("quotas")?.filter(|q| !q.is_none()) else {
                return Err(invalid(
                    &"a quota given as a function of the request needs \"quotas\", the list \
                     of quota strings it may return",
                ));
            };
            if listed.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "limit {name:?}: \"quotas\" must be a list of quota strings, got str"
                )));
            }
            let mut labels: Vec<String> = Vec::new();
            let mut tiers = Vec::new();
            for one in listed.try_iter()? {
                let one = one?;
                let label = text(&one, "each of quotas")?.to_owned();
                if labels.contains(&label) {
                    return Err(invalid(&format!("quotas lists {label:?} twice")));
                }
                tiers.push(quotas_of(&label)?);
                labels.push(label);
            }
            if tiers.is_empty() {
                return Err(invalid(&"\"quotas\" is empty"));
            }
            (tiers, Some((function.unbind(), labels)))
        }
        _ => {
            if item.get_item("quotas")?.is_some_and(|q| !q.is_none()) {
                return Err(invalid(
                    &"\"quotas\" goes with a quota given as a function of the request",
                ));
            }
            (vec![quotas_of(&field_text("quota", None)?)?], None)
        }
    };
    let algorithm = field_text("algorithm", Some("gcra"))?
        .parse()
        .map_err(|e| invalid(&e))?;
    let cost = match item.get_item("cost")? {
        None => 1,
        Some(cost) => cost.extract::<crate::args::Cost>()?.0,
    };
    let (key, function) = match item.get_item("key")? {
        Some(function) if function.is_callable() => (KeySpec::Global, Some(function.unbind())),
        Some(_) => {
            let spec = field_text("key", None)?;
            let parsed = spec.parse().map_err(|error| match error {
                PolicyError::BadHeaderName(_) => invalid(&error),
                _ => invalid(&format!(
                    "unknown key {spec:?}: expected \"ip\" (the client's address), \"global\", \
                     \"header:NAME\" or a function of the request"
                )),
            })?;
            (parsed, None)
        }
        None => {
            return Err(PyValueError::new_err(format!(
                "limit {name:?} has no \"key\": \"ip\", \"global\", \"header:NAME\" or a function of the request"
            )))
        }
    };
    let limit = Limit {
        given: function.is_some(),
        name,
        algorithm,
        key,
        cost,
        tiers,
        stride: 1,
    };
    Ok((limit, function, chooser))
}

/// `trusted_proxies`: networks (`"10.0.0.0/8"`, `"::1"`) in a list, or in one string
/// separated by commas; read by the library.
fn trusted(value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(value) = value.filter(|value| !value.is_none()) else {
        return Ok(Vec::new());
    };
    if value.is_instance_of::<PyString>() {
        return Ok(vec![text(value, "trusted_proxies")?.to_owned()]);
    }
    let mut networks = Vec::new();
    for network in value.try_iter()? {
        let network = network?;
        let network = text(
            &network,
            "each of trusted_proxies (a network such as \"10.0.0.0/8\")",
        )?;
        networks.push(network.to_owned());
    }
    Ok(networks)
}

/// The library's error about an option, under the option's Python name.
fn named(error: FrontEndError) -> PyErr {
    let option = match error.option {
        FrontEndOption::TrustedProxies => "trusted_proxies",
        FrontEndOption::ForwardedHeaders => "forwarded_headers",
        FrontEndOption::Ipv6Prefix => "ipv6_prefix",
        FrontEndOption::OnBackendError => "on_backend_error",
        _ => "an option",
    };
    errors::value(format!("{option}: {error}"))
}

/// `headers`: which rate-limit headers responses carry: `True` or `"standard"` (draft-10's
/// `RateLimit-Policy` and `RateLimit`, the default), `"legacy"` (`X-RateLimit-*`), `"both"`,
/// or `False`/`None` (none; a refusal still says `Retry-After`).
fn header_forms(value: &Bound<'_, PyAny>) -> PyResult<(bool, bool)> {
    if value.is_none() {
        return Ok((false, false));
    }
    if let Ok(on) = value.cast::<pyo3::types::PyBool>() {
        return Ok((on.is_true(), false));
    }
    match text(value, "headers")? {
        "standard" => Ok((true, false)),
        "legacy" => Ok((false, true)),
        "both" => Ok((true, true)),
        other => Err(PyValueError::new_err(format!(
            "headers: {other:?} is not a header form: \"standard\" (RateLimit-Policy and \
             RateLimit), \"legacy\" (X-RateLimit-*), \"both\", or False for none"
        ))),
    }
}

/// True when `function` takes a second positional argument (the client's address).
fn takes_client(function: &Bound<'_, PyAny>) -> PyResult<bool> {
    let inspect = function.py().import("inspect")?;
    let Ok(signature) = inspect.call_method1("signature", (function,)) else {
        return Ok(false);
    };
    let parameter = inspect.getattr("Parameter")?;
    let positional = [
        parameter.getattr("POSITIONAL_ONLY")?,
        parameter.getattr("POSITIONAL_OR_KEYWORD")?,
    ];
    let variadic = parameter.getattr("VAR_POSITIONAL")?;
    let mut count = 0;
    for p in signature
        .getattr("parameters")?
        .call_method0("values")?
        .try_iter()?
    {
        let kind = p?.getattr("kind")?;
        if kind.eq(&variadic)? {
            return Ok(true);
        }
        if positional[0].eq(&kind)? || positional[1].eq(&kind)? {
            count += 1;
        }
    }
    Ok(count >= 2)
}

/// FastAPI's error body: `{"detail": "<the library's sentence>"}`, `application/json`.
fn json_detail(rejection: &Rejection<'_>) -> http::Response<bytes::Bytes> {
    let sentence = rejection.to_string();
    let mut body = String::with_capacity(sentence.len() + 16);
    body.push_str("{\"detail\":\"");
    for c in sentence.chars() {
        match c {
            '"' => body.push_str("\\\""),
            '\\' => body.push_str("\\\\"),
            c if u32::from(c) < 0x20 => body.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => body.push(c),
        }
    }
    body.push_str("\"}");
    let mut response = http::Response::new(bytes::Bytes::from(body));
    *response.status_mut() = rejection.status();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}
