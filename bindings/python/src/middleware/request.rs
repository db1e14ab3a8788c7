//! A request as the library reads it (`sluicegate::http::front_end::request_parts_from`), from
//! an ASGI scope or a WSGI environ: a change of representation, no rule of its own. The peer
//! is the server's (ASGI `client`, WSGI `REMOTE_ADDR`), read by the library's `Peer::from_host`
//! (no host, as on a Unix socket, and a host that is not an IP address, as a test client's
//! `"testclient"`, are keyed as it says); whether to believe forwarding headers is the
//! library's trusted-proxy rule alone.

use crate::args::{text, type_name};
use crate::middleware::options::KeyFunction;
use http::request::Parts;
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use sluicegate::http::front_end::{request_parts_from, GivenKeys};
use sluicegate::http::Peer;

/// The parts of an ASGI `http` scope: `method`, `raw_path` (else `path`) and
/// `query_string`, `headers` (`(bytes, bytes)` pairs) and `client` (`(host, port)` or
/// `None`).
pub(crate) fn asgi(scope: &Bound<'_, PyAny>) -> PyResult<Parts> {
    let py = scope.py();
    let scope = dict(scope, "an ASGI scope")?;
    // Interned keys: a scope is read on every request.
    let method = required(scope, intern!(py, "method"))?;
    let method = text(&method, "method")?;
    let mut uri = String::new();
    match scope
        .get_item(intern!(py, "raw_path"))?
        .filter(|v| !v.is_none())
    {
        Some(raw) => push_uri(&mut uri, &raw, "raw_path")?,
        None => push_uri(&mut uri, &required(scope, intern!(py, "path"))?, "path")?,
    }
    if let Some(query) = scope.get_item(intern!(py, "query_string"))? {
        let query = query
            .cast::<PyBytes>()
            .map_err(|_| not("query_string", "bytes", &query))?;
        if !query.as_bytes().is_empty() {
            uri.push('?');
            push_uri(&mut uri, query, "query_string")?;
        }
    }
    let mut pairs = Vec::new();
    if let Some(headers) = scope.get_item(intern!(py, "headers"))? {
        for pair in headers.try_iter()? {
            let (name, value) = two(&pair?)?;
            let name = name
                .cast_into::<PyBytes>()
                .map_err(|e| not("a header name", "bytes", e.into_inner().as_any()))?;
            let value = value
                .cast_into::<PyBytes>()
                .map_err(|e| not("a header value", "bytes", e.into_inner().as_any()))?;
            pairs.push((name, value));
        }
    }
    let peer = match scope
        .get_item(intern!(py, "client"))?
        .filter(|v| !v.is_none())
    {
        Some(client) => {
            let (host, port) = two(&client)?;
            let port = port.extract::<u16>().unwrap_or(0);
            Peer::from_host(text(&host, "client host").ok(), port)
        }
        // uvicorn --uds: a Unix socket's peer has no address.
        None => Peer::from_host(None, 0),
    };
    let headers = pairs
        .iter()
        .map(|(name, value)| (name.as_bytes(), value.as_bytes()));
    Ok(request_parts_from(method, &uri, headers, peer))
}

/// The parts of a WSGI environ: `REQUEST_METHOD`, `SCRIPT_NAME` + `PATH_INFO` and
/// `QUERY_STRING`, the `HTTP_*` entries turned back into header names (`HTTP_X_API_KEY` is
/// `x-api-key`) plus `CONTENT_TYPE` and `CONTENT_LENGTH`, and `REMOTE_ADDR`. Values are
/// PEP 3333's latin-1 strings, turned back into the bytes that came.
pub(crate) fn wsgi(environ: &Bound<'_, PyAny>) -> PyResult<Parts> {
    let environ = dict(environ, "a WSGI environ")?;
    let py = environ.py();
    let method = required(environ, intern!(py, "REQUEST_METHOD"))?;
    let method = text(&method, "REQUEST_METHOD")?;
    let mut uri = String::new();
    for field in [intern!(py, "SCRIPT_NAME"), intern!(py, "PATH_INFO")] {
        if let Some(part) = environ.get_item(field)? {
            push_uri(&mut uri, &part, "PATH_INFO")?;
        }
    }
    if uri.is_empty() {
        uri.push('/');
    }
    if let Some(query) = environ.get_item(intern!(py, "QUERY_STRING"))? {
        if query.len().unwrap_or(0) > 0 {
            uri.push('?');
            push_uri(&mut uri, &query, "QUERY_STRING")?;
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
    // gunicorn on a Unix socket gives an empty REMOTE_ADDR (PEP 3333 lets a server leave it
    // out): a peer without an address, as the library reads it.
    let peer = match environ.get_item(intern!(py, "REMOTE_ADDR"))? {
        Some(address) => {
            let port = environ
                .get_item(intern!(py, "REMOTE_PORT"))?
                .and_then(|port| text(&port, "REMOTE_PORT").ok()?.parse().ok())
                .unwrap_or(0);
            Peer::from_host(text(&address, "REMOTE_ADDR").ok(), port)
        }
        None => Peer::from_host(None, 0),
    };
    let headers = pairs.iter().map(|(name, value)| (&name[..], &value[..]));
    Ok(request_parts_from(method, &uri, headers, peer))
}

/// The keys the user's functions compute from `request` (the scope or the environ, or the
/// framework's request for the route helpers), the functions that take two arguments also
/// given `client()`, the client's address: a `str`, or `None` for none (the library then
/// refuses the request with `400`).
pub(crate) fn given_keys(
    functions: &[KeyFunction],
    request: &Bound<'_, PyAny>,
    client: impl FnOnce() -> Option<String>,
) -> PyResult<GivenKeys> {
    let py = request.py();
    let mut keys = GivenKeys::new();
    let mut client = Some(client);
    let mut address: Option<Bound<'_, PyAny>> = None;
    for (limit, function, takes_client) in functions {
        let key = if *takes_client {
            if address.is_none() {
                let found = client.take().and_then(|client| client());
                address = Some(found.into_pyobject(py)?.into_any());
            }
            let address = address.as_ref().expect("set above");
            function.bind(py).call1((request, address))?
        } else {
            function.bind(py).call1((request,))?
        };
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

fn dict<'a, 'py>(value: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyDict>> {
    value.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a dict, got {}", type_name(value)))
    })
}

/// The two items of a pair: a tuple (read directly), or any sequence.
fn two<'py>(pair: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    match pair.cast::<PyTuple>() {
        Ok(tuple) => Ok((tuple.get_item(0)?, tuple.get_item(1)?)),
        Err(_) => Ok((pair.get_item(0)?, pair.get_item(1)?)),
    }
}

/// The item `key` of `dict`, or a `TypeError` saying the request lacks it.
fn required<'py>(
    dict: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    dict.get_item(key)?
        .ok_or_else(|| PyTypeError::new_err(format!("the request has no {key}")))
}

/// Appends `value` (`bytes`, or a `str` of latin-1 characters) to `uri`, each byte as one
/// character where it is visible ASCII and percent-encoded where it is not (a URI is ASCII).
fn push_uri(uri: &mut String, value: &Bound<'_, PyAny>, field: &str) -> PyResult<()> {
    let mut push = |bytes: &mut dyn Iterator<Item = u8>| {
        for byte in bytes {
            if byte.is_ascii_graphic() {
                uri.push(char::from(byte));
            } else {
                let hex = b"0123456789ABCDEF";
                uri.push('%');
                uri.push(char::from(hex[usize::from(byte >> 4)]));
                uri.push(char::from(hex[usize::from(byte & 15)]));
            }
        }
    };
    if let Ok(bytes) = value.cast::<PyBytes>() {
        push(&mut bytes.as_bytes().iter().copied());
    } else if value.is_instance_of::<PyString>() {
        push(&mut latin1(text(value, field)?).into_iter());
    } else {
        return Err(not(field, "str or bytes", value));
    }
    Ok(())
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
