//! [`Peer`]: who opened the connection, as a server that is not Rust's knows it, including
//! the peers that have no IP address.

use std::net::{IpAddr, SocketAddr};

/// The key of every request that arrives on a Unix domain socket whose peer is not trusted.
pub const UNIX_PEER_KEY: &str = "unix";

/// The entry of a trusted-proxy list that trusts a Unix socket's peer (a proxy such as nginx
/// on the same machine), read in any case.
pub const UNIX_PROXY_ENTRY: &str = "unix";

/// The most bytes of a peer's host name kept as its key.
pub const MAX_PEER_NAME: usize = 64;

/// The peer of a connection (the machine, or socket, that opened it), as a front end outside
/// Rust's HTTP stack knows it: an IP address and port, a Unix domain socket (which has no
/// address), or a host name that is not an IP address (a test client's placeholder, such as
/// Starlette's `TestClient`, whose host is `"testclient"`).
///
/// [`ClientIp`](super::ClientIp) reads it as a request extension where there is no
/// `SocketAddr` one ([`front_end::request_parts_from`](super::front_end::request_parts_from)
/// puts it there), so a request from a peer without an IP address is keyed, never refused:
///
/// - a Unix socket's requests are keyed [`UNIX_PEER_KEY`] (`"unix"`), all of them under one
///   key, unless the socket is trusted ([`TrustedProxies::trust_unix_socket`], the entry
///   `"unix"` in a front end's trusted proxies): then the forwarding headers the proxy in
///   front writes are walked as through any trusted proxy;
/// - a named host's requests are keyed by the name: at most [`MAX_PEER_NAME`] bytes, each
///   byte that is not an ASCII letter, digit, `-`, `.`, `_` or `~` written as `_` (so it never
///   reads as an IP address, a network or a Redis hash tag).
///
/// [`TrustedProxies::trust_unix_socket`]: super::TrustedProxies::trust_unix_socket
///
/// ```
/// use sluicegate::http::Peer;
///
/// assert_eq!(Peer::from_host(Some("192.0.2.7"), 4000).ip(), Some("192.0.2.7".parse()?));
/// assert_eq!(Peer::from_host(Some("fe80::1%eth0"), 4000).ip(), Some("fe80::1".parse()?));
/// assert!(Peer::from_host(None, 0).is_unix());           // Node's undefined remoteAddress
/// assert!(Peer::from_host(Some(""), 0).is_unix());       // WSGI's empty REMOTE_ADDR
/// assert_eq!(Peer::from_host(Some("testclient"), 50000).name(), Some("testclient"));
/// assert_eq!(Peer::named("a host/with spaces").name(), Some("a_host_with_spaces"));
/// # Ok::<(), std::net::AddrParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Peer(Kind);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Kind {
    Ip(SocketAddr),
    Unix,
    Named(Box<str>),
}

impl Peer {
    /// An IP peer.
    pub fn address(address: SocketAddr) -> Peer {
        Peer(Kind::Ip(address))
    }

    /// A Unix domain socket's peer.
    pub fn unix() -> Peer {
        Peer(Kind::Unix)
    }

    /// A peer the server names by `host`, which is not read as an IP address: kept as its
    /// key, bounded and with odd bytes replaced (see [`Peer`]). An empty `host` is a Unix
    /// socket's peer.
    pub fn named(host: &str) -> Peer {
        if host.is_empty() {
            return Peer::unix();
        }
        let mut end = host.len().min(MAX_PEER_NAME);
        while !host.is_char_boundary(end) {
            end -= 1;
        }
        let name = host[..end]
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Peer(Kind::Named(name))
    }

    /// The peer a server describes by its host text and port, the one rule every front end
    /// reads them by: an IP address (a link-local one's `%zone` and an IPv6 address's
    /// brackets dropped) is an IP peer; no host or an empty one is a Unix socket's peer
    /// (Node's `socket.remoteAddress` is `undefined` there, ASGI's `client` is `None`,
    /// WSGI's `REMOTE_ADDR` empty); any other text is a [named](Self::named) peer.
    pub fn from_host(host: Option<&str>, port: u16) -> Peer {
        let Some(host) = host.map(str::trim).filter(|h| !h.is_empty()) else {
            return Peer::unix();
        };
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let bare = bare.split('%').next().unwrap_or(bare);
        match bare.parse::<IpAddr>() {
            Ok(ip) => Peer::address(SocketAddr::new(ip, port)),
            Err(_) => Peer::named(host),
        }
    }

    /// The IP address, for an IP peer.
    pub fn ip(&self) -> Option<IpAddr> {
        match &self.0 {
            Kind::Ip(address) => Some(address.ip()),
            _ => None,
        }
    }

    /// The socket address, for an IP peer.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match &self.0 {
            Kind::Ip(address) => Some(*address),
            _ => None,
        }
    }

    /// True for a Unix domain socket's peer.
    pub fn is_unix(&self) -> bool {
        matches!(self.0, Kind::Unix)
    }

    /// The key of a peer without an IP address when it is not trusted: [`UNIX_PEER_KEY`] for
    /// a Unix socket, the (bounded) name for a named host; `None` for an IP peer.
    pub fn name(&self) -> Option<&str> {
        match &self.0 {
            Kind::Ip(_) => None,
            Kind::Unix => Some(UNIX_PEER_KEY),
            Kind::Named(name) => Some(name),
        }
    }
}

impl From<SocketAddr> for Peer {
    fn from(address: SocketAddr) -> Peer {
        Peer::address(address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_texts_read_as_the_front_ends_give_them() {
        let ip = |text: &str| {
            Peer::from_host(Some(text), 80)
                .ip()
                .map(|ip| ip.to_string())
        };
        assert_eq!(ip("203.0.113.9").as_deref(), Some("203.0.113.9"));
        assert_eq!(ip(" ::1 ").as_deref(), Some("::1"));
        assert_eq!(ip("[2001:db8::1]").as_deref(), Some("2001:db8::1"));
        assert_eq!(ip("fe80::1%eth0").as_deref(), Some("fe80::1"));
        assert_eq!(ip("::ffff:192.0.2.1").as_deref(), Some("::ffff:192.0.2.1"));
        assert_eq!(
            Peer::from_host(Some("192.0.2.1"), 8080).socket_addr(),
            Some("192.0.2.1:8080".parse().unwrap())
        );
        for unix in [None, Some(""), Some("  ")] {
            let peer = Peer::from_host(unix, 0);
            assert!(peer.is_unix(), "{unix:?}");
            assert_eq!(peer.name(), Some("unix"));
            assert_eq!(peer.ip(), None);
        }
        assert_eq!(
            Peer::from_host(Some("testclient"), 50000).name(),
            Some("testclient")
        );
        assert!(!Peer::from_host(Some("testclient"), 1).is_unix());
    }

    #[test]
    fn a_name_is_bounded_and_never_reads_as_an_address() {
        let long = "h".repeat(200);
        assert_eq!(Peer::named(&long).name().unwrap().len(), MAX_PEER_NAME);
        // A multi-byte character across the bound is dropped whole, then replaced.
        let edge = format!("{}é", "a".repeat(MAX_PEER_NAME - 1));
        assert_eq!(
            Peer::named(&edge).name(),
            Some("a".repeat(MAX_PEER_NAME - 1).as_str())
        );
        for (host, key) in [
            ("10.0.0.0/8", "10.0.0.0_8"),
            ("2001:db8::/64", "2001_db8___64"),
            ("{tag}", "_tag_"),
            ("a\nb", "a_b"),
            ("héllo", "h_llo"),
            ("my-host.local_1~", "my-host.local_1~"),
        ] {
            assert_eq!(Peer::named(host).name(), Some(key), "{host:?}");
        }
        assert!(Peer::named("").is_unix());
    }
}
