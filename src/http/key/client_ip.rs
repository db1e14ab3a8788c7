//! [`ClientIp`]: the client's address, believed from forwarding headers only through
//! trusted proxies, IPv6 grouped by prefix.

use super::{KeyBuf, KeyError, KeyExtractor};
use crate::http::error::BuildError;
use crate::http::ip::{self, forwarded, ClientAddr, TrustedProxies};
use crate::http::peer::{Peer, UNIX_PEER_KEY};
use http::request::Parts;
use http::Extensions;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Which forwarding headers the trusted proxies write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ForwardedHeaders {
    /// `X-Forwarded-For` (nginx, HAProxy, AWS and most load balancers). The default.
    #[default]
    XForwardedFor,
    /// `Forwarded`, RFC 7239.
    Forwarded,
    /// Whichever is present. When both are, they must name the same client, or the request
    /// is refused (`400`): a proxy that writes one header passes the other through from the
    /// client, so a disagreement means someone lied, and choosing either could let a client
    /// pick its own key. Prefer naming the one header your proxies write.
    Both,
}

impl std::str::FromStr for ForwardedHeaders {
    type Err = BuildError;

    /// `x-forwarded-for` (or `xff`), `forwarded` or `both`, in any case: the one spelling
    /// every front end's options share.
    fn from_str(text: &str) -> Result<Self, BuildError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" | "xff" => Ok(ForwardedHeaders::XForwardedFor),
            "forwarded" => Ok(ForwardedHeaders::Forwarded),
            "both" => Ok(ForwardedHeaders::Both),
            _ => Err(BuildError::new(format!(
                "forwarded headers are x-forwarded-for, forwarded or both, not {text:?}"
            ))),
        }
    }
}

/// Where the peer address (who opened the connection) is read from.
type PeerSource = Arc<dyn Fn(&Extensions) -> Option<SocketAddr> + Send + Sync>;

/// The client's IP address as the key.
///
/// The peer (the machine that opened the connection) is the client, unless it is one of the
/// [trusted proxies](Self::trust): then the forwarding header is walked from its right end
/// (the entry the nearest proxy wrote) through trusted hops, and the first address that is
/// not a trusted proxy is the client. Untrusted peers' forwarding headers are never read, so
/// a client cannot choose its key by sending `X-Forwarded-For`.
///
/// IPv6 clients are grouped by [prefix](Self::ipv6_prefix) (`/64` by default: every
/// subscriber gets at least a /64 and can use any of its addresses); IPv4-mapped IPv6
/// addresses (`::ffff:192.0.2.1`) count as IPv4.
///
/// The peer address comes from a `SocketAddr` request extension by default; with axum, serve
/// with `into_make_service_with_connect_info::<SocketAddr>()` and read axum's `ConnectInfo`
/// with [`peer_from`](Self::peer_from). A peer without an IP address is described by a
/// [`Peer`] extension instead (what the Node and Python front ends insert): a Unix socket's
/// requests are keyed `unix` (or, with `unix` among the trusted proxies, by the client the
/// proxy in front forwards), a named host's by its name; see [`Peer`]. A request with
/// neither extension is a setup error of the server's, answered with `500` and a message
/// saying what to insert.
///
/// ```
/// use std::net::SocketAddr;
/// use sluicegate::http::{ClientIp, ForwardedHeaders, KeyBuf, KeyExtractor};
///
/// let client_ip = ClientIp::new()
///     .trust("10.0.0.0/8".parse()?)
///     .forwarded_headers(ForwardedHeaders::XForwardedFor)
///     .ipv6_prefix(56)?;
///
/// let mut request = http::Request::get("/")
///     .header("x-forwarded-for", "203.0.113.5, 198.51.100.7, 10.1.1.1")
///     .body(())?;
/// request.extensions_mut().insert("10.0.0.2:4000".parse::<SocketAddr>()?);
/// let (parts, ()) = request.into_parts();
/// let mut key = KeyBuf::new();
/// client_ip.extract(&parts, &mut key)?;
/// assert_eq!(key.as_str(), "198.51.100.7"); // the rightmost address not of a trusted proxy
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ClientIp {
    trusted: TrustedProxies,
    headers: ForwardedHeaders,
    v4_prefix: u8,
    v6_prefix: u8,
    max_hops: usize,
    max_forwarded_bytes: usize,
    peer: Option<PeerSource>,
}

impl ClientIp {
    /// The peer address, no proxy trusted, IPv6 grouped by /64.
    pub fn new() -> Self {
        ClientIp {
            trusted: TrustedProxies::none(),
            headers: ForwardedHeaders::default(),
            v4_prefix: 32,
            v6_prefix: 64,
            max_hops: 16,
            max_forwarded_bytes: 8192,
            peer: None,
        }
    }

    /// Believes forwarding headers from `proxies` (replacing any trusted before).
    pub fn trust(mut self, proxies: TrustedProxies) -> Self {
        self.trusted = proxies;
        self
    }

    /// Reads `headers` from trusted proxies (`X-Forwarded-For` by default).
    pub fn forwarded_headers(mut self, headers: ForwardedHeaders) -> Self {
        self.headers = headers;
        self
    }

    /// Groups IPv6 clients by their first `bits` bits (0 to 128; 64 by default; 128 keys
    /// each address alone).
    pub fn ipv6_prefix(mut self, bits: u8) -> Result<Self, BuildError> {
        if bits > 128 {
            return Err(BuildError::new(format!(
                "an IPv6 prefix is 0 to 128 bits, not {bits}"
            )));
        }
        self.v6_prefix = bits;
        Ok(self)
    }

    /// Groups IPv4 clients by their first `bits` bits (0 to 32; 32 by default, each address
    /// alone).
    pub fn ipv4_prefix(mut self, bits: u8) -> Result<Self, BuildError> {
        if bits > 32 {
            return Err(BuildError::new(format!(
                "an IPv4 prefix is 0 to 32 bits, not {bits}"
            )));
        }
        self.v4_prefix = bits;
        Ok(self)
    }

    /// Refuses (`400`) forwarded chains that would need more than `hops` entries read
    /// (1 to 64; 16 by default), bounding the work a request can cause.
    pub fn max_hops(mut self, hops: usize) -> Result<Self, BuildError> {
        if !(1..=forwarded::MAX_HOPS_LIMIT).contains(&hops) {
            return Err(BuildError::new(format!(
                "max_hops is 1 to {}, not {hops}",
                forwarded::MAX_HOPS_LIMIT
            )));
        }
        self.max_hops = hops;
        Ok(self)
    }

    /// Refuses (`400`) `Forwarded` headers longer than `bytes` in all (8192 by default),
    /// since they must be read from the left.
    pub fn max_forwarded_bytes(mut self, bytes: usize) -> Self {
        self.max_forwarded_bytes = bytes;
        self
    }

    /// Reads the peer address from the request extension `T`, e.g. axum's `ConnectInfo`:
    /// `peer_from(|info: &ConnectInfo<SocketAddr>| info.0)`.
    pub fn peer_from<T: Send + Sync + 'static>(mut self, read: fn(&T) -> SocketAddr) -> Self {
        self.peer = Some(Arc::new(move |extensions: &Extensions| {
            extensions.get::<T>().map(read)
        }));
        self
    }

    /// The trusted proxies.
    pub fn trusted(&self) -> &TrustedProxies {
        &self.trusted
    }

    /// The peer address of `request`: its IP address, or an error when it has none (a Unix
    /// socket's or a named [`Peer`]: [`client_addr`](Self::client_addr) keys those) or the
    /// server recorded none.
    pub fn peer_addr(&self, request: &Parts) -> Result<IpAddr, KeyError> {
        match self.peer(request)? {
            Seen::Ip(ip) => Ok(ip),
            Seen::Unix | Seen::Named(_) => Err(KeyError::unavailable(
                "the peer has no IP address (a Unix socket, or a host named by the server)",
            )),
        }
    }

    /// Who opened the connection of `request`.
    #[inline]
    fn peer<'a>(&self, request: &'a Parts) -> Result<Seen<'a>, KeyError> {
        let found = match &self.peer {
            Some(read) => read(&request.extensions),
            None => request.extensions.get::<SocketAddr>().copied(),
        };
        if let Some(address) = found {
            return Ok(Seen::Ip(address.ip()));
        }
        match request.extensions.get::<Peer>() {
            Some(peer) => Ok(match (peer.ip(), peer.name()) {
                (Some(ip), _) => Seen::Ip(ip),
                (None, _) if peer.is_unix() => Seen::Unix,
                (None, name) => Seen::Named(name.unwrap_or(UNIX_PEER_KEY)),
            }),
            None => Err(KeyError::unavailable(
                "the server did not record the client's address on the request: give ClientIp a \
                 SocketAddr request extension (axum: serve with \
                 into_make_service_with_connect_info::<SocketAddr>() and read ConnectInfo through \
                 ClientIp::peer_from), or a sluicegate::http::Peer one for a peer without an IP \
                 address (Peer::unix() on a Unix socket)",
            )),
        }
    }

    /// True when every request from `peer` gets the same key from this extractor, whoever
    /// the client behind it is: a Unix socket's peer that is not trusted (every client of a
    /// proxy in front of the socket then shares one limit). A front end checks it to warn
    /// once, with [`shared_key_warning`](Self::shared_key_warning).
    pub fn shares_one_key(&self, peer: &Peer) -> bool {
        peer.is_unix() && !self.trusted.trusts_unix_socket()
    }

    /// The warning a front end gives once (Node's `process.emitWarning`, Python's
    /// `warnings`) when [`shares_one_key`](Self::shares_one_key) is true for a request's peer,
    /// naming its own trusted-proxy option as `trusted_option` (`trustedProxies`,
    /// `trusted_proxies`); `None` when it is false.
    ///
    /// ```
    /// use sluicegate::http::{ClientIp, Peer};
    ///
    /// let warning = ClientIp::new().shared_key_warning(&Peer::unix(), "trustedProxies").unwrap();
    /// assert!(warning.starts_with("requests arrive on a Unix socket, which has no client address"));
    /// assert!(warning.contains("add \"unix\" to trustedProxies"));
    /// let trusted = ClientIp::new().trust("unix".parse()?);
    /// assert_eq!(trusted.shared_key_warning(&Peer::unix(), "trustedProxies"), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shared_key_warning(&self, peer: &Peer, trusted_option: &str) -> Option<String> {
        if !self.shares_one_key(peer) {
            return None;
        }
        let header = match self.headers {
            ForwardedHeaders::Forwarded => "Forwarded",
            ForwardedHeaders::XForwardedFor | ForwardedHeaders::Both => "X-Forwarded-For",
        };
        Some(format!(
            "requests arrive on a Unix socket, which has no client address: every limit keyed \
             by client address counts all of them under the one key \"{UNIX_PEER_KEY}\", so all \
             clients share it. Behind a proxy on this machine that sets {header} (nginx: \
             proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for), add \"unix\" to \
             {trusted_option} to key each client by the address the proxy forwards"
        ))
    }

    /// Who the client of `request` is, as the key would say before grouping.
    pub fn client_addr<'a>(&self, request: &'a Parts) -> Result<ClientAddr<'a>, KeyError> {
        let start = match self.peer(request)? {
            Seen::Ip(ip) => {
                let ip = ip.to_canonical();
                if !self.trusted.contains(ip) {
                    return Ok(ClientAddr::Ip(ip));
                }
                ClientAddr::Ip(ip)
            }
            Seen::Unix if self.trusted.trusts_unix_socket() => {
                ClientAddr::Obfuscated(UNIX_PEER_KEY)
            }
            Seen::Unix => return Ok(ClientAddr::Obfuscated(UNIX_PEER_KEY)),
            Seen::Named(name) => return Ok(ClientAddr::Obfuscated(name)),
        };
        let headers = &request.headers;
        let via_xff = || {
            let hops = ip::xff_hops(headers);
            ip::walk_trusted(start, hops, &self.trusted, self.max_hops, "X-Forwarded-For")
        };
        let via_forwarded = || {
            let hops = forwarded::hops(headers, self.max_forwarded_bytes)?;
            let hops = hops.nearest_first();
            ip::walk_trusted(start, hops, &self.trusted, self.max_hops, "Forwarded")
        };
        match self.headers {
            ForwardedHeaders::XForwardedFor => via_xff(),
            ForwardedHeaders::Forwarded => via_forwarded(),
            ForwardedHeaders::Both => {
                let has_forwarded = headers.contains_key("forwarded");
                if !headers.contains_key("x-forwarded-for") && has_forwarded {
                    return via_forwarded();
                }
                let from_xff = via_xff()?;
                if has_forwarded && via_forwarded()? != from_xff {
                    return Err(KeyError::invalid(
                        "the X-Forwarded-For and Forwarded headers name different clients",
                    ));
                }
                Ok(from_xff)
            }
        }
    }
}

/// A request's peer, as [`ClientIp`] found it.
enum Seen<'a> {
    Ip(IpAddr),
    Unix,
    Named(&'a str),
}

impl Default for ClientIp {
    fn default() -> Self {
        ClientIp::new()
    }
}

impl KeyExtractor for ClientIp {
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError> {
        match self.client_addr(request)? {
            ClientAddr::Ip(address) => {
                ip::write_grouped(address, self.v4_prefix, self.v6_prefix, key)
            }
            // Starts with `_`, so it never reads as an address.
            ClientAddr::Obfuscated(name) => key.push_str(name),
        }
        Ok(())
    }
}

impl fmt::Debug for ClientIp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientIp")
            .field("trusted", &self.trusted)
            .field("headers", &self.headers)
            .field("v4_prefix", &self.v4_prefix)
            .field("v6_prefix", &self.v6_prefix)
            .field("max_hops", &self.max_hops)
            .field("max_forwarded_bytes", &self.max_forwarded_bytes)
            .field("peer_from", &self.peer.as_ref().map(|_| ".."))
            .finish()
    }
}
