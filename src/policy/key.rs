//! [`KeySpec`]: what a policy's key is, as configuration names it.

use std::fmt;
use std::str::FromStr;

/// What a request is counted against: everything together, the client's address, or a
/// header's value. The HTTP layer turns each into a key extractor.
///
/// Written `global`, `peer-ip` (or `ip`, as the Node and Python middlewares name it) or
/// `header:NAME`.
///
/// ```
/// use sluicegate::policy::KeySpec;
/// assert_eq!("header:X-Api-Key".parse::<KeySpec>()?, KeySpec::Header("x-api-key".into()));
/// assert_eq!(KeySpec::PeerIp.to_string(), "peer-ip");
/// assert_eq!("ip".parse::<KeySpec>()?, KeySpec::PeerIp);
/// # Ok::<(), sluicegate::policy::PolicyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeySpec {
    /// One limit for every request.
    Global,
    /// The client's IP address: the peer, or the nearest address a trusted proxy forwarded;
    /// IPv6 clients grouped by prefix.
    PeerIp,
    /// The value of a request header (an API key); the name is stored lowercase.
    Header(String),
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySpec::Global => f.write_str("global"),
            KeySpec::PeerIp => f.write_str("peer-ip"),
            KeySpec::Header(name) => write!(f, "header:{name}"),
        }
    }
}

impl FromStr for KeySpec {
    type Err = super::PolicyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let unknown = || super::PolicyError::UnknownKey(text.to_owned());
        match text.to_ascii_lowercase().as_str() {
            "global" => Ok(KeySpec::Global),
            "peer-ip" | "peer_ip" | "ip" => Ok(KeySpec::PeerIp),
            lower => {
                let name = lower.strip_prefix("header:").ok_or_else(unknown)?.trim();
                // RFC 9110 field names are tokens: visible ASCII but separators.
                let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
                if name.is_empty() || !name.chars().all(token) {
                    return Err(super::PolicyError::BadHeaderName(name.to_owned()));
                }
                Ok(KeySpec::Header(name.to_owned()))
            }
        }
    }
}
