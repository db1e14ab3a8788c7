//! [`Cidr`] and [`TrustedProxies`]: which peers may tell us who the client is.

use ipnet::IpNet;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// A network: an address and a prefix length, `10.0.0.0/8` or `fd00::/8`. A bare address is
/// a network of one (`/32` or `/128`). IPv4-mapped IPv6 networks (`::ffff:10.0.0.0/104`) are
/// the IPv4 networks they map.
///
/// The maths is the `ipnet` crate's; this type adds what a list of trusted proxies needs on
/// top: reasons for a refusal, IPv4-mapped networks and addresses read as IPv4, and host bits
/// beyond the prefix refused rather than silently cleared.
///
/// ```
/// use sluicegate::http::Cidr;
/// let private: Cidr = "10.0.0.0/8".parse()?;
/// assert!(private.contains("10.1.2.3".parse()?));
/// assert!(private.contains("::ffff:10.1.2.3".parse()?)); // IPv4-mapped counts as IPv4
/// assert!("10.1.0.0/8".parse::<Cidr>().is_err()); // host bits set: a typo, most likely
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr(
    /// Always its own network (no host bits), and IPv4 for an IPv4-mapped network.
    IpNet,
);

/// Why a network could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CidrError {
    input: String,
    reason: &'static str,
}

impl fmt::Display for CidrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid network {:?}: {}", self.input, self.reason)
    }
}

impl std::error::Error for CidrError {}

impl Cidr {
    /// The network of `address` with `prefix` bits, or an error when `prefix` is longer
    /// than the address or `address` has bits set beyond it.
    pub fn new(address: IpAddr, prefix: u8) -> Result<Cidr, CidrError> {
        let error = |reason| CidrError {
            input: format!("{address}/{prefix}"),
            reason,
        };
        let (address, prefix) = match address {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) if prefix >= 96 => (IpAddr::V4(v4), prefix - 96),
                _ => (address, prefix),
            },
            v4 => (v4, prefix),
        };
        let network = IpNet::new(address, prefix)
            .map_err(|_| error("the prefix is longer than the address"))?;
        if network.trunc() != network {
            return Err(error(
                "the address has bits set beyond the prefix (write the network's first address)",
            ));
        }
        Ok(Cidr(network))
    }

    /// The network's first address.
    pub fn network(&self) -> IpAddr {
        self.0.network()
    }

    /// The prefix length.
    pub fn prefix(&self) -> u8 {
        self.0.prefix_len()
    }

    /// True when `address` (IPv4-mapped IPv6 read as IPv4) is in this network.
    pub fn contains(&self, address: IpAddr) -> bool {
        self.0.contains(&address.to_canonical())
    }
}

/// Read by hand around `ipnet`, whose parser gives one reason for every mistake ("invalid
/// IP address syntax") and requires a prefix: a refused `--trusted-proxy` should say what
/// is wrong with it.
impl FromStr for Cidr {
    type Err = CidrError;

    fn from_str(text: &str) -> Result<Cidr, CidrError> {
        let text = text.trim();
        let error = |reason| CidrError {
            input: text.to_owned(),
            reason,
        };
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address
            .parse()
            .map_err(|_| error("expected an IPv4 or IPv6 address"))?;
        let prefix = match prefix {
            None => IpNet::from(address).max_prefix_len(),
            Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                digits
                    .parse()
                    .map_err(|_| error("the prefix is longer than the address"))?
            }
            Some(_) => return Err(error("expected a prefix length after '/'")),
        };
        Cidr::new(address, prefix).map_err(|e| error(e.reason))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The proxies whose forwarding headers are believed: a list of networks.
///
/// The client address is taken from `X-Forwarded-For` or `Forwarded` only when the peer
/// (the machine that opened the connection) is in this list, and only through hops that are
/// in it too: anything else in those headers could have been written by the client. Empty
/// (the default), the headers are ignored and the peer is the client.
///
/// A Unix domain socket's peer has no address: the entry `unix` trusts it (a proxy such as
/// nginx on the same machine, `proxy_pass http://unix:/run/app.sock`), so that the headers it
/// writes are walked as any trusted proxy's (see [`Peer`](super::super::Peer)).
///
/// ```
/// use sluicegate::http::TrustedProxies;
/// let proxies: TrustedProxies = "10.0.0.0/8, fd00::/8".parse()?;
/// assert!(proxies.contains("10.9.9.9".parse()?));
/// assert!(!proxies.contains("192.0.2.1".parse()?));
/// assert!(!proxies.trusts_unix_socket());
/// let behind_nginx: TrustedProxies = "unix, 127.0.0.1".parse()?;
/// assert!(behind_nginx.trusts_unix_socket());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    networks: Vec<Cidr>,
    unix: bool,
}

impl TrustedProxies {
    /// No trusted proxy: forwarding headers are ignored.
    pub fn none() -> Self {
        TrustedProxies::default()
    }

    /// Adds `network`.
    pub fn with(mut self, network: Cidr) -> Self {
        self.push(network);
        self
    }

    /// Adds `network`.
    pub fn push(&mut self, network: Cidr) {
        if !self.networks.contains(&network) {
            self.networks.push(network);
        }
    }

    /// True when `address` is in one of the networks.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.networks
            .iter()
            .any(|network| network.contains(address))
    }

    /// True when no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.networks.is_empty() && !self.unix
    }

    /// Trusts a Unix domain socket's peer: requests arriving on one are keyed by the client
    /// its forwarding headers name, as through a trusted proxy.
    pub fn trust_unix_socket(mut self) -> Self {
        self.unix = true;
        self
    }

    /// True when a Unix domain socket's peer is trusted.
    pub fn trusts_unix_socket(&self) -> bool {
        self.unix
    }

    /// Adds one entry of a list as the front ends write it: a network, or `unix`
    /// ([`UNIX_PROXY_ENTRY`](super::super::UNIX_PROXY_ENTRY), in any case) for a Unix
    /// socket's peer. The one parser of a trusted-proxy entry.
    pub fn push_entry(&mut self, entry: &str) -> Result<(), CidrError> {
        let entry = entry.trim();
        if entry.eq_ignore_ascii_case(crate::http::UNIX_PROXY_ENTRY) {
            self.unix = true;
            return Ok(());
        }
        self.push(entry.parse()?);
        Ok(())
    }

    /// The networks.
    pub fn networks(&self) -> &[Cidr] {
        &self.networks
    }
}

impl FromIterator<Cidr> for TrustedProxies {
    fn from_iter<I: IntoIterator<Item = Cidr>>(networks: I) -> Self {
        let mut proxies = TrustedProxies::none();
        networks.into_iter().for_each(|n| proxies.push(n));
        proxies
    }
}

/// A comma-separated list of networks, and `unix` for a Unix socket's peer.
impl FromStr for TrustedProxies {
    type Err = CidrError;

    fn from_str(text: &str) -> Result<Self, CidrError> {
        let mut proxies = TrustedProxies::none();
        for entry in text.split(',').filter(|part| !part.trim().is_empty()) {
            proxies.push_entry(entry)?;
        }
        Ok(proxies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn parses_networks_and_single_addresses() {
        let cidr: Cidr = "192.168.0.0/16".parse().unwrap();
        assert_eq!(cidr.to_string(), "192.168.0.0/16");
        assert!(cidr.contains(ip("192.168.255.1")));
        assert!(!cidr.contains(ip("192.169.0.1")));
        let one: Cidr = "::1".parse().unwrap();
        assert_eq!(one.prefix(), 128);
        assert!(one.contains(ip("::1")) && !one.contains(ip("::2")));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("8.8.8.8")) && !all.contains(ip("::8")));
        let v6: Cidr = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains(ip("2001:db8:ffff::1")) && !v6.contains(ip("2001:db9::1")));
    }

    #[test]
    fn ipv4_mapped_networks_and_addresses_are_ipv4() {
        let mapped: Cidr = "::ffff:10.0.0.0/104".parse().unwrap();
        assert_eq!(mapped.to_string(), "10.0.0.0/8");
        let v4: Cidr = "10.0.0.0/8".parse().unwrap();
        assert!(v4.contains(ip("::ffff:10.2.3.4")));
    }

    #[test]
    fn rejects_typos_with_a_reason() {
        for (input, reason) in [
            ("10.0.0.0/33", "the prefix is longer than the address"),
            ("10.0.0.0/", "expected a prefix length after '/'"),
            ("10.0.0.0/x", "expected a prefix length after '/'"),
            ("10.0.0.0/99999", "the prefix is longer than the address"),
            (
                "10.1.0.0/8",
                "the address has bits set beyond the prefix (write the network's first address)",
            ),
            ("example.com", "expected an IPv4 or IPv6 address"),
            ("", "expected an IPv4 or IPv6 address"),
        ] {
            let error = input.parse::<Cidr>().unwrap_err();
            assert_eq!(error.reason, reason, "{input}");
            assert!(error.to_string().contains(input.trim()), "{error}");
        }
    }

    #[test]
    fn trusted_lists_parse_from_commas() {
        let proxies: TrustedProxies = "127.0.0.1, ::1,10.0.0.0/8".parse().unwrap();
        assert_eq!(proxies.networks().len(), 3);
        assert!(proxies.contains(ip("::ffff:127.0.0.1")));
        assert!(!TrustedProxies::none().contains(ip("127.0.0.1")));
        assert!("10.0.0.0/8, nope".parse::<TrustedProxies>().is_err());
    }

    #[test]
    fn unix_is_the_one_entry_that_is_not_a_network() {
        for text in ["unix", " UNIX ", "10.0.0.0/8, Unix"] {
            let proxies: TrustedProxies = text.parse().unwrap();
            assert!(proxies.trusts_unix_socket(), "{text}");
            assert!(!proxies.is_empty());
            assert!(!proxies.contains(ip("127.0.0.1")), "unix trusts no address");
        }
        assert!(!"::1"
            .parse::<TrustedProxies>()
            .unwrap()
            .trusts_unix_socket());
        assert!(TrustedProxies::none()
            .trust_unix_socket()
            .trusts_unix_socket());
        let error = "unix:/run/app.sock".parse::<TrustedProxies>().unwrap_err();
        assert_eq!(error.reason, "expected an IPv4 or IPv6 address");
    }
}
