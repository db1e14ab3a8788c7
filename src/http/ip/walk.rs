//! The walk from the peer back through trusted proxies to the client.

use super::cidr::TrustedProxies;
use super::node::Node;
use crate::http::key::KeyError;
use std::net::IpAddr;

/// One entry of a forwarding header, nearest proxy first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hop<'a> {
    /// An empty list element (`a,,b`), skipped as RFC 9110 lists allow.
    Empty,
    /// A readable entry.
    Node(Node<'a>),
    /// An entry that is not an address (or, in `Forwarded`, an element without `for=`).
    Malformed,
}

/// Who the client is: an address, or a name standing for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAddr<'a> {
    /// The client's address (IPv4-mapped IPv6 already read as IPv4).
    Ip(IpAddr),
    /// A name instead of an address, used as the key as it is: an RFC 7239 obfuscated
    /// identifier (`_hidden`) that a trusted proxy wrote for the client, or the
    /// [name](crate::http::Peer::name) of a peer without an IP address (`unix` for a Unix
    /// socket's, a test client's placeholder host such as `testclient`).
    Obfuscated(&'a str),
}

/// Walks `hops` (nearest first) from `peer`, a trusted proxy (an address, or the name of a
/// trusted Unix socket's peer): each hop is believed only while every hop nearer than it is
/// a trusted proxy too; the first untrusted address is the client. If every hop is trusted,
/// the farthest one is the client (no one untrusted wrote it), the peer itself when there
/// is none. The caller has found the peer trusted: an untrusted peer is the client, and its
/// forwarding headers are never read.
pub(crate) fn walk_trusted<'a>(
    peer: ClientAddr<'a>,
    hops: impl Iterator<Item = Hop<'a>>,
    trusted: &TrustedProxies,
    max_hops: usize,
    header: &str,
) -> Result<ClientAddr<'a>, KeyError> {
    let mut client = peer;
    for (read, hop) in hops.enumerate() {
        if read == max_hops {
            return Err(KeyError::invalid(format!(
                "the {header} chain is longer than {max_hops} entries"
            )));
        }
        match hop {
            Hop::Empty => continue,
            Hop::Malformed => {
                return Err(KeyError::invalid(format!(
                    "the {header} header has an unreadable entry where the client's address \
                     should be"
                )))
            }
            Hop::Node(Node::Unknown) => {
                return Err(KeyError::invalid(format!(
                    "a trusted proxy wrote `unknown` in {header} where the client's address \
                     should be"
                )))
            }
            Hop::Node(Node::Obfuscated(name)) => return Ok(ClientAddr::Obfuscated(name)),
            Hop::Node(Node::Ip(ip)) => {
                let ip = ip.to_canonical();
                client = ClientAddr::Ip(ip);
                if !trusted.contains(ip) {
                    return Ok(client);
                }
            }
        }
    }
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hops<'a>(entries: &'a [&'static str]) -> impl Iterator<Item = Hop<'static>> + 'a {
        entries.iter().copied().map(|e| match e {
            "" => Hop::Empty,
            "?" => Hop::Malformed,
            other => {
                super::super::node::parse_node(other.as_bytes()).map_or(Hop::Malformed, Hop::Node)
            }
        })
    }

    /// The walk from an IP peer, as `ClientIp` does it: an untrusted peer is the client.
    fn walk<'a>(
        peer: IpAddr,
        hops: impl Iterator<Item = Hop<'a>>,
        trusted: &TrustedProxies,
        max_hops: usize,
        header: &str,
    ) -> Result<ClientAddr<'a>, KeyError> {
        let peer = peer.to_canonical();
        if !trusted.contains(peer) {
            return Ok(ClientAddr::Ip(peer));
        }
        walk_trusted(ClientAddr::Ip(peer), hops, trusted, max_hops, header)
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn walk_from(
        peer: &str,
        trusted: &str,
        nearest_first: &[&'static str],
    ) -> Result<String, KeyError> {
        let trusted: TrustedProxies = trusted.parse().unwrap();
        walk(
            peer.parse().unwrap(),
            hops(nearest_first),
            &trusted,
            8,
            "X-Forwarded-For",
        )
        .map(|client| match client {
            ClientAddr::Ip(ip) => ip.to_string(),
            ClientAddr::Obfuscated(name) => name.to_owned(),
        })
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        assert_eq!(
            walk_from("203.0.113.9", "10.0.0.0/8", &["1.1.1.1"]).unwrap(),
            "203.0.113.9"
        );
        assert_eq!(walk_from("203.0.113.9", "", &["?"]).unwrap(), "203.0.113.9");
    }

    #[test]
    fn the_rightmost_untrusted_hop_is_the_client() {
        let chain = ["10.0.0.2", "10.0.0.1", "198.51.100.7", "6.6.6.6"];
        assert_eq!(
            walk_from("10.0.0.3", "10.0.0.0/8", &chain).unwrap(),
            "198.51.100.7"
        );
        assert_eq!(
            walk_from("10.0.0.3", "10.0.0.0/8", &["", "198.51.100.7"]).unwrap(),
            "198.51.100.7"
        );
        assert_eq!(
            walk_from("::ffff:10.0.0.3", "10.0.0.0/8", &["::ffff:198.51.100.7"]).unwrap(),
            "198.51.100.7"
        );
    }

    #[test]
    fn an_all_trusted_chain_ends_at_its_farthest_hop() {
        assert_eq!(
            walk_from("10.0.0.3", "10.0.0.0/8", &["10.0.0.2", "10.0.0.1"]).unwrap(),
            "10.0.0.1"
        );
        assert_eq!(
            walk_from("10.0.0.3", "10.0.0.0/8", &[]).unwrap(),
            "10.0.0.3"
        );
    }

    #[test]
    fn unreadable_hops_only_matter_where_the_client_should_be() {
        // Beyond the client, garbage is never read.
        assert_eq!(
            walk_from("10.0.0.3", "10.0.0.0/8", &["198.51.100.7", "?"]).unwrap(),
            "198.51.100.7"
        );
        let error = walk_from("10.0.0.3", "10.0.0.0/8", &["10.0.0.2", "?"]).unwrap_err();
        assert_eq!(error.status(), http::StatusCode::BAD_REQUEST);
        assert!(walk_from("10.0.0.3", "10.0.0.0/8", &["unknown"]).is_err());
        assert_eq!(
            walk_from("10.0.0.3", "10.0.0.0/8", &["_hidden"]).unwrap(),
            "_hidden"
        );
    }

    #[test]
    fn a_trusted_peer_without_an_address_is_walked_from_like_any() {
        let trusted: TrustedProxies = "unix, 10.0.0.0/8".parse().unwrap();
        let from_unix = |chain: &[&'static str]| {
            walk_trusted(
                ClientAddr::Obfuscated("unix"),
                hops(chain),
                &trusted,
                8,
                "X",
            )
        };
        assert_eq!(from_unix(&[]).unwrap(), ClientAddr::Obfuscated("unix"));
        assert_eq!(
            from_unix(&["198.51.100.7", "6.6.6.6"]).unwrap(),
            ClientAddr::Ip(ip("198.51.100.7"))
        );
        assert_eq!(
            from_unix(&["10.0.0.2", "198.51.100.7"]).unwrap(),
            ClientAddr::Ip(ip("198.51.100.7"))
        );
        assert!(from_unix(&["?"]).is_err());
    }

    #[test]
    fn chains_longer_than_the_limit_are_refused() {
        let long = ["10.0.0.1"; 9];
        let error = walk_from("10.0.0.3", "10.0.0.0/8", &long).unwrap_err();
        assert_eq!(
            error.message(),
            "the X-Forwarded-For chain is longer than 8 entries"
        );
        assert_eq!(
            walk_from("10.0.0.3", "10.0.0.0/8", &long[..8]).unwrap(),
            "10.0.0.1"
        );
    }
}
