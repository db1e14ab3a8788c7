//! The middlewares' options (`limits`, `trusted_proxies`, `ipv6_prefix`, `forwarded_headers`,
//! `redis`, `redis_cluster`, `on_backend_error`), read from Python into the library's own
//! values, and the `RequestLimiter` they describe, in process or on Redis.

use crate::args::{text, type_name};
use crate::errors;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use sluicegate::http::{
    in_process_backend, ClientIp, ForwardedHeaders, GivenKey, OnBackendError, RequestLimit,
    RequestLimiter, TrustedProxies,
};
use sluicegate::policy::{KeySpec, Policy};
use sluicegate::Quota;

/// Every option, checked.
pub(crate) struct Options {
    limits: Vec<Limit>,
    client_ip: ClientIp,
    on_backend_error: OnBackendError,
    redis: Option<Redis>,
}

/// One limit. `policy.key` is `Global` and unused where a function computes the key.
struct Limit {
    policy: Policy,
    cost: u32,
    given: bool,
}

struct Redis {
    url: String,
    cluster: bool,
}

/// A limit whose key a Python function computes: its name and the function.
pub(crate) type KeyFunction = (String, Py<PyAny>);

/// The fields a limit's dict may have.
const FIELDS: [&str; 5] = ["name", "key", "quota", "algorithm", "cost"];

impl Options {
    /// Reads the options; a `ValueError` or `TypeError` says which one is wrong and why.
    /// Returns the key functions beside them, in the order of their limits.
    #[allow(clippy::too_many_arguments)] // the middlewares' keyword arguments
    pub(crate) fn read(
        limits: &Bound<'_, PyAny>,
        trusted_proxies: Option<&Bound<'_, PyAny>>,
        ipv6_prefix: u32,
        forwarded_headers: &str,
        redis: Option<String>,
        redis_cluster: bool,
        on_backend_error: &str,
    ) -> PyResult<(Options, Vec<KeyFunction>)> {
        if limits.is_instance_of::<PyString>() || limits.is_instance_of::<PyDict>() {
            return Err(PyTypeError::new_err(format!(
                "limits must be a list of dicts, got {}",
                type_name(limits)
            )));
        }
        let mut read = Vec::new();
        let mut functions = Vec::new();
        for (i, item) in limits.try_iter()?.enumerate() {
            let (limit, function) = limit(i, &item?)?;
            if let Some(function) = function {
                functions.push((limit.policy.name.clone(), function));
            }
            read.push(limit);
        }
        let headers: ForwardedHeaders = forwarded_headers
            .parse()
            .map_err(|e| PyValueError::new_err(format!("forwarded_headers: {e}")))?;
        let client_ip = ClientIp::new()
            .trust(trusted(trusted_proxies)?)
            .forwarded_headers(headers)
            // Beyond u8 is beyond 128 too: the library's sentence says why.
            .ipv6_prefix(u8::try_from(ipv6_prefix).unwrap_or(u8::MAX))
            .map_err(|e| errors::value(format!("ipv6_prefix: {e}")))?;
        let options = Options {
            limits: read,
            client_ip,
            on_backend_error: on_backend_error
                .parse()
                .map_err(|e| errors::value(format!("on_backend_error: {e}")))?,
            redis: redis.map(|url| Redis {
                url,
                cluster: redis_cluster,
            }),
        };
        // Checks every limit and the set of them (names, count) now, even when the limits
        // will live on Redis, so that a mistake fails where the middleware is built.
        options.in_process().map_err(errors::value)?;
        Ok((options, functions))
    }

    /// True when the limits live on Redis.
    pub(crate) fn on_redis(&self) -> bool {
        self.redis.is_some()
    }

    /// The limiter with every limit in this process.
    pub(crate) fn in_process(&self) -> Result<RequestLimiter, String> {
        let mut builder = RequestLimiter::builder().on_backend_error(self.on_backend_error);
        for limit in &self.limits {
            let built = if limit.given {
                let backend = in_process_backend(limit.policy.algorithm, limit.policy.quota, true)
                    .map_err(|e| format!("limit {:?}: {e}", limit.policy.name))?;
                RequestLimit::shared(limit.policy.name.clone(), backend)
            } else {
                RequestLimit::from_policy(&limit.policy, &self.client_ip)
                    .map_err(|e| e.to_string())?
            };
            builder = builder.limit(limit.finish(built));
        }
        builder.limiter().map_err(|e| e.to_string())
    }

    /// The limiter the options describe: on Redis when `redis` is set (connected when Redis
    /// answers, so that the first request is decided there, else built all the same; needs
    /// the tokio runtime), else in process.
    pub(crate) async fn limiter(&self) -> Result<RequestLimiter, String> {
        let Some(redis) = &self.redis else {
            return self.in_process();
        };
        let mut builder = RequestLimiter::builder().on_backend_error(self.on_backend_error);
        for limit in &self.limits {
            let built = RequestLimit::from_policy_on_redis_connected(
                &limit.policy,
                &self.client_ip,
                &redis.url,
                redis.cluster,
            )
            .await
            .map_err(|e| e.to_string())?;
            builder = builder.limit(limit.finish(built));
        }
        builder.limiter().map_err(|e| e.to_string())
    }
}

impl Limit {
    /// `built` with this limit's cost, and keyed by the key function's answer if it has one.
    fn finish(&self, built: RequestLimit) -> RequestLimit {
        let built = built.cost(self.cost);
        if self.given {
            built.key(GivenKey::new(self.policy.name.clone()))
        } else {
            built
        }
    }
}

/// `limits[i]`: `{"name", "key", "quota", "algorithm"?, "cost"?}`, and its key function if
/// `key` is one.
fn limit(i: usize, item: &Bound<'_, PyAny>) -> PyResult<(Limit, Option<Py<PyAny>>)> {
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
                "limits[{i}] has an unknown field {}: a limit has name, key, quota, algorithm and cost",
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
    let quota: Quota = field_text("quota", None)?
        .parse()
        .map_err(|e| invalid(&e))?;
    let algorithm = field_text("algorithm", Some("gcra"))?
        .parse()
        .map_err(|e| invalid(&e))?;
    let cost = match item.get_item("cost")? {
        None => 1,
        Some(cost) => cost.extract::<crate::args::Cost>()?.0,
    };
    let (key, function) = match item.get_item("key")? {
        Some(function) if function.is_callable() => (KeySpec::Global, Some(function.unbind())),
        Some(_) => (field_text("key", None)?.parse().map_err(|e| invalid(&e))?, None),
        None => {
            return Err(PyValueError::new_err(format!(
                "limit {name:?} has no \"key\": \"ip\", \"global\", \"header:NAME\" or a function of the request"
            )))
        }
    };
    let limit = Limit {
        given: function.is_some(),
        policy: Policy {
            name,
            quota,
            algorithm,
            key,
        },
        cost,
    };
    Ok((limit, function))
}

/// `trusted_proxies`: networks (`"10.0.0.0/8"`, `"::1"`) in a list, or in one string
/// separated by commas.
fn trusted(value: Option<&Bound<'_, PyAny>>) -> PyResult<TrustedProxies> {
    let Some(value) = value.filter(|value| !value.is_none()) else {
        return Ok(TrustedProxies::none());
    };
    let invalid = |network: &str, e: &dyn std::fmt::Display| {
        errors::value(format!("trusted_proxies: {network:?}: {e}"))
    };
    if value.is_instance_of::<PyString>() {
        let networks = text(value, "trusted_proxies")?;
        return networks.parse().map_err(|e| invalid(networks, &e));
    }
    let mut trusted = TrustedProxies::none();
    for network in value.try_iter()? {
        let network = network?;
        let network = text(
            &network,
            "each of trusted_proxies (a network such as \"10.0.0.0/8\")",
        )?;
        trusted.push(network.parse().map_err(|e| invalid(network, &e))?);
    }
    Ok(trusted)
}
