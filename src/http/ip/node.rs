//! One hop of a forwarding header: an address, `unknown`, or an obfuscated identifier.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The longest hop read; longer ones are malformed without further work.
const MAX_NODE: usize = 64;

/// Who a proxy says it received the request from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Node<'a> {
    /// An address (the port, if any, dropped).
    Ip(IpAddr),
    /// RFC 7239 `unknown`: the proxy does not know.
    Unknown,
    /// RFC 7239 obfuscated identifier (`_hidden`): a name the proxy uses for the client.
    Obfuscated(&'a str),
}

/// Reads one hop: `192.0.2.1`, `192.0.2.1:8080`, `2001:db8::1`, `[2001:db8::1]`,
/// `[2001:db8::1]:8080`, `unknown`, or `_obfuscated` (each optionally with an RFC 7239
/// obfuscated port `:_p1`). `None` when it is none of these.
pub(crate) fn parse_node(bytes: &[u8]) -> Option<Node<'_>> {
    if bytes.is_empty() || bytes.len() > MAX_NODE {
        return None;
    }
    if let Some(rest) = bytes.strip_prefix(b"[") {
        let close = rest.iter().position(|&b| b == b']')?;
        let (inside, after) = (&rest[..close], &rest[close + 1..]);
        if !after.is_empty() && !is_port(after.strip_prefix(b":")?) {
            return None;
        }
        return Some(Node::Ip(IpAddr::V6(parse::<Ipv6Addr>(inside)?)));
    }
    let colons = bytes.iter().filter(|&&b| b == b':').count();
    if colons >= 2 {
        // A bare IPv6 address: RFC 7239 wants brackets, but X-Forwarded-For writes it bare.
        return parse::<Ipv6Addr>(bytes).map(|v6| Node::Ip(IpAddr::V6(v6)));
    }
    let (name, port) = match bytes.iter().position(|&b| b == b':') {
        Some(at) => (&bytes[..at], Some(&bytes[at + 1..])),
        None => (bytes, None),
    };
    if port.is_some_and(|port| !is_port(port)) {
        return None;
    }
    if name.eq_ignore_ascii_case(b"unknown") {
        return Some(Node::Unknown);
    }
    if is_obfuscated(name) {
        // Checked ASCII just above.
        return std::str::from_utf8(name).ok().map(Node::Obfuscated);
    }
    parse::<Ipv4Addr>(name).map(|v4| Node::Ip(IpAddr::V4(v4)))
}

fn parse<T: std::str::FromStr>(bytes: &[u8]) -> Option<T> {
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// RFC 7239 `obfnode` / `obfport`: `_` then letters, digits, `.`, `_`, `-`.
fn is_obfuscated(bytes: &[u8]) -> bool {
    bytes.len() > 1
        && bytes[0] == b'_'
        && bytes[1..]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A port number (1 to 5 digits, at most 65535) or an obfuscated port.
fn is_port(bytes: &[u8]) -> bool {
    if is_obfuscated(bytes) {
        return true;
    }
    (1..=5).contains(&bytes.len())
        && bytes.iter().all(u8::is_ascii_digit)
        && parse::<u32>(bytes).is_some_and(|port| port <= 65535)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Option<Node<'static>> {
        Some(Node::Ip(text.parse().unwrap()))
    }

    #[test]
    fn reads_every_form_of_address() {
        assert_eq!(parse_node(b"192.0.2.60"), ip("192.0.2.60"));
        assert_eq!(parse_node(b"192.0.2.60:4711"), ip("192.0.2.60"));
        assert_eq!(parse_node(b"2001:db8:cafe::17"), ip("2001:db8:cafe::17"));
        assert_eq!(parse_node(b"[2001:db8:cafe::17]"), ip("2001:db8:cafe::17"));
        assert_eq!(
            parse_node(b"[2001:db8:cafe::17]:4711"),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(parse_node(b"[::ffff:1.2.3.4]:80"), ip("::ffff:1.2.3.4"));
        assert_eq!(parse_node(b"unknown"), Some(Node::Unknown));
        assert_eq!(parse_node(b"UNKNOWN:_p"), Some(Node::Unknown));
        assert_eq!(parse_node(b"_hidden"), Some(Node::Obfuscated("_hidden")));
        assert_eq!(
            parse_node(b"_SEVKISEK:_port-1"),
            Some(Node::Obfuscated("_SEVKISEK"))
        );
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            &b""[..],
            b"1.2.3",
            b"1.2.3.4:",
            b"1.2.3.4:65536",
            b"1.2.3.4:123456",
            b"1.2.3.4:http",
            b"01.2.3.4",
            b"[1.2.3.4]",
            b"[2001:db8::1",
            b"[2001:db8::1]x",
            b"[2001:db8::1]:",
            b"fe80::1%eth0",
            b"_",
            b"_a b",
            b"example.com",
            b"\xff\xfe",
            b"1.2.3.4 ",
        ] {
            assert_eq!(parse_node(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_node(&[b'1'; 65]), None);
    }
}
