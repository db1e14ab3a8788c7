//! [`request_parts`] and [`request_parts_from`]: a request as a front end outside Rust's HTTP
//! stack knows it (a Node or Python server's), in the form a
//! [`RequestLimiter`](super::RequestLimiter) reads.

use super::peer::Peer;
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
///
/// `None` records no peer: a limit keyed by client address then answers `500` (a setup
/// error). A front end that may serve a peer without an IP address (a Unix socket) calls
/// [`request_parts_from`] instead.
pub fn request_parts<'a>(
    method: &str,
    uri: &str,
    headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    peer: Option<SocketAddr>,
) -> Parts {
    let mut parts = parts_without_peer(method, uri, headers);
    if let Some(peer) = peer {
        parts.extensions.insert(peer);
    }
    parts
}

/// [`request_parts`] from any [`Peer`], the one a front end outside Rust's HTTP stack calls:
/// an IP peer becomes the `SocketAddr` extension, one without an IP address (a Unix socket,
/// a named host) the `Peer` extension, which [`ClientIp`](super::ClientIp) keys as [`Peer`]
/// says, never with a `500`. Read the peer with [`Peer::from_host`].
///
/// ```
/// use sluicegate::http::front_end::request_parts_from;
/// use sluicegate::http::{ClientIp, KeyBuf, KeyExtractor, Peer};
///
/// let none: [(&[u8], &[u8]); 0] = [];
/// let parts = request_parts_from("GET", "/", none, Peer::from_host(None, 0)); // a Unix socket
/// let mut key = KeyBuf::new();
/// ClientIp::new().extract(&parts, &mut key)?;
/// assert_eq!(key.as_str(), "unix");
/// # Ok::<(), sluicegate::http::KeyError>(())
/// ```
pub fn request_parts_from<'a>(
    method: &str,
    uri: &str,
    headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    peer: Peer,
) -> Parts {
    let mut parts = parts_without_peer(method, uri, headers);
    match peer.socket_addr() {
        Some(address) => drop(parts.extensions.insert(address)),
        None => drop(parts.extensions.insert(peer)),
    }
    parts
}

/// The parts of a request of `method` on `uri` with `headers`, without a peer.
fn parts_without_peer<'a>(
    method: &str,
    uri: &str,
    headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
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
    parts
}
