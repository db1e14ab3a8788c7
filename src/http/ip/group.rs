//! Grouping addresses by prefix, and writing them as keys.

use crate::http::key::KeyBuf;
use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use std::fmt::Write;
use std::net::{IpAddr, Ipv4Addr};

/// Writes `address`'s group as a key: IPv4 as `192.0.2.1` (or `192.0.2.0/24` under a shorter
/// `v4_prefix`), IPv6 as its network with the prefix, `2001:db8:1:2::/64` (or the bare
/// address under `/128`). IPv4-mapped IPv6 is written as IPv4. Every client owns at least an
/// IPv6 /64 and can rotate through its 2^64 addresses at will, so keying per address would
/// let it escape any limit; grouping by prefix does not.
pub(crate) fn write_grouped(address: IpAddr, v4_prefix: u8, v6_prefix: u8, key: &mut KeyBuf) {
    // The prefixes are clamped to the address's length, so the assertions cannot fail.
    let group = match address.to_canonical() {
        IpAddr::V4(v4) => IpNet::V4(Ipv4Net::new_assert(v4, v4_prefix.min(32))),
        IpAddr::V6(v6) => IpNet::V6(Ipv6Net::new_assert(v6, v6_prefix.min(128))),
    };
    match group.network() {
        // The common case, written by hand: `fmt` costs more than the rest of the key.
        IpAddr::V4(v4) => push_ipv4(v4, key),
        // Writing to a KeyBuf cannot fail.
        IpAddr::V6(v6) => drop(write!(key, "{v6}")),
    }
    if group.prefix_len() != group.max_prefix_len() {
        key.push('/');
        push_decimal(u32::from(group.prefix_len()), key);
    }
}

/// Dotted decimal, as `Ipv4Addr`'s `Display` writes it, assembled on the stack and pushed
/// once: pushed piece by piece, it cost more than the limiter's check.
fn push_ipv4(address: Ipv4Addr, key: &mut KeyBuf) {
    let mut text = [0u8; 15];
    let mut len = 0;
    for (i, octet) in address.octets().into_iter().enumerate() {
        if i > 0 {
            text[len] = b'.';
            len += 1;
        }
        if octet >= 100 {
            text[len] = b'0' + octet / 100;
            len += 1;
        }
        if octet >= 10 {
            text[len] = b'0' + octet / 10 % 10;
            len += 1;
        }
        text[len] = b'0' + octet % 10;
        len += 1;
    }
    key.push_ascii(&text[..len]);
}

/// `n` in decimal, without `fmt`.
pub(crate) fn push_decimal(n: u32, key: &mut KeyBuf) {
    let mut digits = [0u8; 10];
    let start = decimal(u64::from(n), &mut digits);
    key.push_ascii(&digits[start..]);
}

/// Writes `n`'s digits at the end of `out` (20 bytes hold any u64; 10 any u32 given here),
/// returning where they start.
pub(crate) fn decimal(mut n: u64, out: &mut [u8]) -> usize {
    let mut at = out.len();
    loop {
        at -= 1;
        out[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grouped(address: &str, v4: u8, v6: u8) -> String {
        let mut key = KeyBuf::new();
        write_grouped(address.parse().unwrap(), v4, v6, &mut key);
        key.as_str().to_owned()
    }

    #[test]
    fn ipv6_addresses_in_one_prefix_share_a_key() {
        assert_eq!(grouped("2001:db8:1:2:aaaa::1", 32, 64), "2001:db8:1:2::/64");
        assert_eq!(
            grouped("2001:db8:1:2:ffff:ffff:ffff:ffff", 32, 64),
            "2001:db8:1:2::/64"
        );
        assert_eq!(grouped("2001:db8:1:3::1", 32, 64), "2001:db8:1:3::/64");
        assert_eq!(grouped("2001:db8:1:3::1", 32, 48), "2001:db8:1::/48");
        assert_eq!(grouped("2001:db8:1:3::1", 32, 128), "2001:db8:1:3::1");
        assert_eq!(grouped("2001:db8:1:3::1", 32, 0), "::/0");
    }

    #[test]
    fn hand_written_ipv4_matches_display() {
        for octet in 0..=255u8 {
            for octets in [[octet, 0, 9, 255], [10, octet, 100, octet]] {
                let text = Ipv4Addr::from(octets).to_string();
                assert_eq!(grouped(&text, 32, 64), text);
            }
        }
    }

    #[test]
    fn ipv4_and_ipv4_mapped_addresses_are_ipv4() {
        assert_eq!(grouped("192.0.2.77", 32, 64), "192.0.2.77");
        assert_eq!(grouped("::ffff:192.0.2.77", 32, 64), "192.0.2.77");
        assert_eq!(grouped("192.0.2.77", 24, 64), "192.0.2.0/24");
    }
}
