//! A request as the library reads it (`sluicegate::http::request_parts`), from an ASGI scope
//! or a WSGI environ: a change of representation, no rule of its own. The peer address is
//! the server's (ASGI `client`, WSGI `REMOTE_ADDR`); whether to believe forwarding headers is
//! the library's trusted-proxy rule alone.

use crate::args::{text, type_name};
use crate::middleware::options::KeyFunction;
use http::request::Parts;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use sluicegate::http::{request_parts, GivenKeys};
use std::net::{IpAddr, SocketAddr};

/// The parts of an ASGI `http` scope: `method`, `raw_path` (else `path`) and
/// `query_string`, `headers` (`(bytes, bytes)` pairs) and `client` (`(host, port)` or
/// `None`).
pub(crate) fn asgi(scope: &Bound<'_, PyAny>) -> PyResult<Parts> {
    let scope = dict(scope, "an ASGI scope")?;
    let method = text_item(scope, "method")?;
    let mut uri = match scope.get_item("raw_path")?.filter(|v| !v.is_none()) {
        Some(raw) => latin1_of(&raw, "raw_path")?,
        None => text_item(scope, "path")?,
    };
    if let Some(query) = scope.get_item("query_string")? {
        let query = query
            .cast::<PyBytes>()
            .map_err(|_| not("query_string", "bytes", &query))?;
        if !query.as_bytes().is_empty() {
            uri.push('?');
            uri.push_str(&String::from_utf8_lossy(query.as_bytes()));
        }
    }
    let mut pairs = Vec::new();
    if let Some(headers) = scope.get_item("headers")? {
        for pair in headers.try_iter()? {
            let pair = pair?;
            let name = pair.get_item(0)?;
            let value = pair.get_item(1)?;
            let name = name
                .cast_into::<PyBytes>()
                .map_err(|e| not("a header name", "bytes", e.into_inner().as_any()))?;
            let value = value
                .cast_into::<PyBytes>()
                .map_err(|e| not("a header value", "bytes", e.into_inner().as_any()))?;
            pairs.push((name, value));
        }
    }
    let peer = match scope.get_item("client")?.filter(|v| !v.is_none()) {
        Some(client) => {
            let host = client.get_item(0)?;
            let port = client.get_item(1)?.extract::<u16>().unwrap_or(0);
            peer(text(&host, "client host").ok(), port)
        }
        None => None,
    };
    let headers = pairs
        .iter()
        .map(|(name, value)| (name.as_bytes(), value.as_bytes()));
    Ok(request_parts(&method, &uri, headers, peer))
}

/// The parts of a WSGI environ: `REQUEST_METHOD`, `SCRIPT_NAME` + `PATH_INFO` and
/// `QUERY_STRING`, the `HTTP_*` entries turned back into header names (`HTTP_X_API_KEY` is
/// `x-api-key`) plus `CONTENT_TYPE` and `CONTENT_LENGTH`, and `REMOTE_ADDR`. Values are
/// PEP 3333's latin-1 strings, turned back into the bytes that came.
pub(crate) fn wsgi(environ: &Bound<'_, PyAny>) -> PyResult<Parts> {
    let environ = dict(environ, "a WSGI environ")?;
    let method = text_item(environ, "REQUEST_METHOD")?;
    let mut uri = String::new();
    for field in ["SCRIPT_NAME", "PATH_INFO"] {
        if let Some(part) = environ.get_item(field)? {
            uri.push_str(&latin1_of(&part, field)?);
        }
    }
    if uri.is_empty() {
        uri.push('/');
    }
    if let Some(query) = environ.get_item("QUERY_STRING")? {
        let query = latin1_of(&query, "QUERY_STRING")?;
        if !query.is_empty() {
            uri.push('?');
            uri.push_str(&query);
        }
    }
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for (field, value) in environ.iter() {
        if !field.is_instance_of::<PyString>() {
            continue;
        }
        let field = text(&field, "an environ key")?;
        let name = match field {
            "CONTENT_TYPE" => "content-type".to_owned(),
            "CONTENT_LENGTH" => "content-length".to_owned(),
            _ => match field.strip_prefix("HTTP_") {
                Some(name) => name.to_ascii_lowercase().replace('_', "-"),
                None => continue,
            },
        };
        if !value.is_instance_of::<PyString>() {
            continue;
        }
        pairs.push((name.into_bytes(), latin1(text(&value, field)?)));
    }
    let peer = match environ.get_item("REMOTE_ADDR")? {
        Some(address) => {
            let port = environ
                .get_item("REMOTE_PORT")?
                .and_then(|port| text(&port, "REMOTE_PORT").ok()?.parse().ok())
                .unwrap_or(0);
            peer(text(&address, "REMOTE_ADDR").ok(), port)
        }
        None => None,
    };
    let headers = pairs.iter().map(|(name, value)| (&name[..], &value[..]));
    Ok(request_parts(&method, &uri, headers, peer))
}

/// The keys the user's functions compute from `request` (the scope or the environ): a `str`,
/// or `None` for none (the library then refuses the request with `400`).
pub(crate) fn given_keys(
    functions: &[KeyFunction],
    request: &Bound<'_, PyAny>,
) -> PyResult<GivenKeys> {
    let mut keys = GivenKeys::new();
    for (limit, function) in functions {
        let key = function.bind(request.py()).call1((request,))?;
        let key = if key.is_none() {
            None
        } else {
            Some(key.extract::<String>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "the key function of limit {limit:?} returned {}: it must return a str or None",
                    type_name(&key)
                ))
            })?)
        };
        keys.insert(limit.as_str(), key);
    }
    Ok(keys)
}

/// The peer's address; `None` when the server gave none that is an IP address (a Unix
/// socket, a test client's made-up name), which the library answers for `ip` keys.
fn peer(host: Option<&str>, port: u16) -> Option<SocketAddr> {
    // A link-local address may carry its interface (`fe80::1%eth0`), which `IpAddr` does not.
    let ip: IpAddr = host?.split('%').next()?.parse().ok()?;
    Some(SocketAddr::new(ip, port))
}

fn dict<'a, 'py>(value: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyDict>> {
    value.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a dict, got {}", type_name(value)))
    })
}

/// A `str` item of `dict`, or a `TypeError`.
fn text_item(dict: &Bound<'_, PyDict>, field: &str) -> PyResult<String> {
    match dict.get_item(field)? {
        Some(value) => value
            .extract::<String>()
            .map_err(|_| not(field, "str", &value)),
        None => Err(PyTypeError::new_err(format!(
            "the request has no {field:?}"
        ))),
    }
}

/// A `str` of latin-1 characters or `bytes`, as text holding each byte as one character
/// where it is ASCII and percent-encoded where it is not (a URI is ASCII).
fn latin1_of(value: &Bound<'_, PyAny>, field: &str) -> PyResult<String> {
    let bytes = if let Ok(bytes) = value.cast::<PyBytes>() {
        bytes.as_bytes().to_vec()
    } else if value.is_instance_of::<PyString>() {
        latin1(text(value, field)?)
    } else {
        return Err(not(field, "str or bytes", value));
    };
    let mut uri = String::with_capacity(bytes.len());
    for byte in bytes {
        if byte.is_ascii_graphic() {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    Ok(uri)
}

/// PEP 3333's "native strings": each character is one byte (characters above U+00FF, which
/// a server never puts there, become `?`).
fn latin1(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

#[cold]
fn not(what: &str, expected: &str, value: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "{what} must be {expected}, got {}",
        type_name(value)
    ))
}
