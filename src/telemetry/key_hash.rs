//! [`KeyHash`]: what logs show instead of a key, which may be an API token.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::sync::OnceLock;

/// A short, keyed hash of a rate-limit key: 8 hex digits, the same for the same key for the
/// life of the process, and revealing nothing about the key.
///
/// Logs show this instead of the key, which may be a secret (an API token) or personal data
/// (an IP address). It is the top 32 bits of SipHash-1-3 (std's `RandomState`) under keys
/// drawn at random once per process. A *fixed* hash would let anyone holding the logs
/// recover low-entropy keys by brute force: there are only 2^32 IPv4 addresses, hashed in
/// seconds. With a secret, per-process key that is impossible, while every log line about one
/// key still carries the same hash, so a flood from one client reads as one. To find the
/// lines of a key you know, compute [`key_hash`] of it in the same process (an admin
/// endpoint, a debugger); hashes change when the process restarts.
///
/// ```
/// use sluicegate::telemetry::key_hash;
///
/// let token = "sk_live_51Hc9...";
/// let hash = key_hash(token);
/// assert_eq!(hash, key_hash(&token.to_string())); // a String hashes as its &str
/// let shown = hash.to_string();
/// assert_eq!(shown.len(), 8);
/// assert!(shown.chars().all(|c| c.is_ascii_hexdigit()));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash(u32);

impl KeyHash {
    /// The hash as a number.
    pub fn value(self) -> u32 {
        self.0
    }
}

/// The [`KeyHash`] of `key` in this process.
pub fn key_hash<Q: Hash + ?Sized>(key: &Q) -> KeyHash {
    static SECRET: OnceLock<RandomState> = OnceLock::new();
    let hash = SECRET.get_or_init(RandomState::new).hash_one(key);
    KeyHash((hash >> 32) as u32)
}

impl fmt::Display for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}", self.0)
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash({self})")
    }
}
