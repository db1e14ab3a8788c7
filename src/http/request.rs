//! [`request_parts`]: a request as a front end outside Rust's HTTP stack knows it (a Node or
//! Python server's), in the form a [`RequestLimiter`](super::RequestLimiter) reads.

use http::header::{HeaderName, HeaderValue};
use http::request::Parts;
use http::{Method, Request, Uri};
use std::net::SocketAddr;

/// The request parts for a request of `method` on `uri` (a path with its query, or a whole
/// URL) with `headers` (names and values as bytes, repeated names kept), received from
/// `peer`, which becomes the `SocketAddr` extension [`ClientIp`](super::ClientIp) reads.
///
/// What `http` cannot represent is left out rather than guessed: a header with an invalid
/// name or value is dropped (a limit keyed by it then finds its key missing and refuses with
/// `400`), an unparsable method or URI becomes `GET /`.
///
/// ```
/// use sluicegate::http::front_end::request_parts;
///
/// let headers: [(&[u8], &[u8]); 1] = [(b"X-Api-Key", b"k-1")];
/// let parts = request_parts("GET", "/items?page=2", headers, Some("192.0.2.7:4000".parse()?));
/// assert_eq!(parts.headers["x-api-key"], "k-1");
/// assert_eq!(parts.uri.path(), "/items");
/// # Ok::<(), std::net::AddrParseError>(())
/// ```
pub fn request_parts<'a>(
    method: &str,
    uri: &str,
    headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    peer: Option<SocketAddr>,
) -> Parts {
    let (mut parts, ()) = Request::new(()).into_parts();
    parts.method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
    parts.uri = uri.parse::<Uri>().unwrap_or_else(|_| Uri::from_static("/"));
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            parts.headers.append(name, value);
        }
    }
    if let Some(peer) = peer {
        parts.extensions.insert(peer);
    }
    parts
}
