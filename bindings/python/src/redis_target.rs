//! Where Redis is, as the package's Redis options take it: the middlewares' `redis=` (a URL,
//! or a dict `{"url", "ca_cert", "client_cert", "client_key", "sentinel_username",
//! "sentinel_password"}`) and `RedisLimiter`'s keywords of the same names, made into the
//! library's `RedisSpec`, which reads the PEM options, checks every one and configures the
//! connection (the same spellings as the service's `redis:` and Node's `redis`).

use crate::args::type_name;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use sluicegate::http::spec::RedisSpec;

/// The keys of the dict form.
const FIELDS: [&str; 6] = [
    "url",
    "ca_cert",
    "client_cert",
    "client_key",
    "sentinel_username",
    "sentinel_password",
];

/// What reaching Redis may need beside its URL: TLS files (each a PEM file's path, the PEM
/// text, or `bytes` of it) and the Sentinels' credentials.
#[derive(Default)]
pub(crate) struct Access {
    pub(crate) ca_cert: Option<String>,
    pub(crate) client_cert: Option<String>,
    pub(crate) client_key: Option<String>,
    pub(crate) sentinel_username: Option<String>,
    pub(crate) sentinel_password: Option<String>,
}

impl Access {
    /// The library's description of the Redis at `url` (a Cluster's seed nodes with
    /// `cluster`), every option checked now: a `ValueError` names the one that is wrong.
    pub(crate) fn spec(self, url: String, cluster: bool) -> PyResult<RedisSpec> {
        let mut spec = RedisSpec::new(url);
        spec.cluster = cluster;
        spec.ca_cert = self.ca_cert;
        spec.client_cert = self.client_cert;
        spec.client_key = self.client_key;
        spec.sentinel_username = self.sentinel_username;
        spec.sentinel_password = self.sentinel_password;
        spec.validate()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(spec)
    }
}

/// A PEM option: a `str` (a path or the PEM text), `bytes` of the PEM, or a path object.
pub(crate) fn pem(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<String>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return String::from_utf8(bytes.as_bytes().to_vec())
            .map(Some)
            .map_err(|_| {
                PyValueError::new_err(format!("redis.{name}: the PEM is not UTF-8 text"))
            });
    }
    if !value.is_instance_of::<PyString>() && value.hasattr("__fspath__")? {
        let path = value.py().import("os")?.call_method1("fspath", (value,))?;
        return text(&path, name).map(Some);
    }
    if value.is_instance_of::<PyString>() {
        return text(value, name).map(Some);
    }
    Err(PyTypeError::new_err(format!(
        "redis.{name} must be a PEM file's path, the PEM text or bytes of it, got {}",
        type_name(value)
    )))
}

/// A text option (`sentinel_username`, `sentinel_password`).
pub(crate) fn credential(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<String>> {
    value
        .filter(|v| !v.is_none())
        .map(|v| text(v, name))
        .transpose()
}

/// The middlewares' `redis=`: a URL, or a dict of [`FIELDS`] with `url`.
pub(crate) fn redis_option(value: &Bound<'_, PyAny>, cluster: bool) -> PyResult<RedisSpec> {
    if value.is_instance_of::<PyString>() {
        return Access::default().spec(text(value, "url")?, cluster);
    }
    let Ok(dict) = value.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "redis must be a URL such as \"redis://127.0.0.1:6379/\" or a dict with url and \
             ca_cert, client_cert, client_key, sentinel_username, sentinel_password, got {}",
            type_name(value)
        )));
    };
    for key in dict.keys() {
        let key = key.str()?.to_string();
        if !FIELDS.contains(&key.as_str()) {
            return Err(PyValueError::new_err(format!(
                "redis: unknown option {key:?}; the options are {}",
                FIELDS.join(", ")
            )));
        }
    }
    let field = |name: &str| dict.get_item(name);
    let Some(url) = field("url")? else {
        return Err(PyValueError::new_err(
            "redis: the dict needs url, such as \"rediss://cache.example:6380/\"",
        ));
    };
    let access = Access {
        ca_cert: pem(field("ca_cert")?.as_ref(), "ca_cert")?,
        client_cert: pem(field("client_cert")?.as_ref(), "client_cert")?,
        client_key: pem(field("client_key")?.as_ref(), "client_key")?,
        sentinel_username: credential(field("sentinel_username")?.as_ref(), "sentinel_username")?,
        sentinel_password: credential(field("sentinel_password")?.as_ref(), "sentinel_password")?,
    };
    access.spec(text(&url, "url")?, cluster)
}

/// A `str` option of `redis`, owned.
fn text(value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    crate::args::text(value, &format!("redis.{name}")).map(str::to_owned)
}
