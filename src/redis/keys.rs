//! Redis key names: `<prefix>{<key>}<algorithm letter><quota fingerprint>`.
//!
//! - The prefix comes first, so every key a limiter writes starts with it (`SCAN` by prefix
//!   finds them all).
//! - The caller's key is the hash tag, so everything one key stores sits in one hash slot,
//!   and two limits on the same key (per-user limits of different kinds) share that slot: a
//!   composite of them is decided in one script even on a cluster. Braces in the key are
//!   percent-escaped (`%` too, so escaping stays one-to-one): a key can never end the tag
//!   early and land in another key's slot or state.
//! - The algorithm and quota end the name in six characters, e.g.
//!   `sluicegate:{user:42}gK3x_Q`: the algorithm's letter (`g`, `t`, `l`, `f`, `w`, `s`, and
//!   `a` for the anchored fixed window, as the scripts know them) and five base64url characters, 30 bits of an FNV-1a hash of the
//!   quota's description (`gcra:100/1m:b20`). A state is read only by the algorithm and quota
//!   that wrote it (two quotas share a name with odds of one in 2^30), so changing a quota (a
//!   deploy) starts from fresh state under new names while the old ones expire on their own,
//!   instead of reinterpreting one algorithm's numbers with another's parameters.
//! - Why so short: Redis's allocator rounds a name up in steps (by `MEMORY USAGE`, a string
//!   state costs 80 B with a name of up to 6 bytes, 88 B up to 14, 104 B up to 30 and 120 B
//!   up to 46), so the old spelled-out suffix (`:gcra:100/1m:b20`, 16 bytes) put typical
//!   keys a step or two higher than six characters do.

use super::algorithm::script_code;
use super::error::RedisError;
use crate::algorithm::AlgorithmKind;
use crate::quota::Quota;
use redis::cluster_routing::Slot;
use std::fmt::Write;

/// Builds the Redis key names of one limiter.
#[derive(Debug, Clone)]
pub(crate) struct KeySpace {
    prefix: Box<str>,
    suffix: Box<str>,
}

impl KeySpace {
    /// The names for `kind` and `quota` under `prefix`, which must not contain braces (they
    /// would move the hash tag).
    pub(crate) fn new(
        prefix: &str,
        kind: AlgorithmKind,
        quota: &Quota,
    ) -> Result<Self, RedisError> {
        if prefix.contains(['{', '}']) {
            return Err(RedisError::config(format!(
                "the prefix {prefix:?} contains a brace, which would break the hash tag that \
                 keeps each key's state in one cluster slot"
            )));
        }
        let mut quota_name = format!(
            "{}:{}/{}",
            kind.name(),
            quota.limit(),
            compact_period(quota.period_nanos())
        );
        if kind.uses_burst() {
            let _ = write!(quota_name, ":b{}", quota.burst());
        }
        let mut suffix = String::from(script_code(kind, quota));
        suffix.extend(fingerprint(&quota_name));
        Ok(KeySpace {
            prefix: prefix.into(),
            suffix: suffix.into(),
        })
    }

    /// The Redis key holding `key`'s state.
    pub(crate) fn name(&self, key: &str) -> String {
        let mut name = String::with_capacity(self.prefix.len() + key.len() + self.suffix.len() + 2);
        name.push_str(&self.prefix);
        name.push('{');
        // Runs between escapes are copied whole (most keys have none).
        let mut rest = key;
        while let Some(at) = rest.find(['%', '{', '}']) {
            name.push_str(&rest[..at]);
            name.push_str(match rest.as_bytes()[at] {
                b'%' => "%25",
                b'{' => "%7B",
                _ => "%7D",
            });
            rest = &rest[at + 1..];
        }
        name.push_str(rest);
        name.push('}');
        name.push_str(&self.suffix);
        name
    }

    /// The pub/sub channel on which resets of this limit's keys are published: under the
    /// prefix, and as specific as a key name (another quota's keys are other keys).
    pub(crate) fn reset_channel(&self) -> String {
        format!("{}resets:{}", self.prefix, self.suffix)
    }

    /// The prefix.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }
}

/// Five base64url characters: the top 30 bits of the 64-bit FNV-1a hash of `text`. A
/// stable hash by definition (unlike std's), so names never change between builds.
fn fingerprint(text: &str) -> impl Iterator<Item = char> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (0..5).map(move |i| char::from(ALPHABET[(hash >> (58 - 6 * i)) as usize & 63]))
}

/// A period in the largest unit that divides it: `1m`, `500ms`, `7000003ns`.
fn compact_period(nanos: u64) -> String {
    const UNITS: [(u64, &str); 7] = [
        (86_400_000_000_000, "d"),
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    let (size, unit) = UNITS
        .into_iter()
        .find(|(size, _)| nanos.is_multiple_of(*size))
        .unwrap_or((1, "ns"));
    format!("{}{unit}", nanos / size)
}

/// The Redis Cluster hash slot of a key: CRC16 (XMODEM) of its hash tag (the part between
/// the first `{` and the next `}`, if not empty) or of the whole key, modulo 16384. redis-rs
/// computes it, with the same hash tags as the cluster's routing of our scripts.
pub(crate) fn hash_slot(key: &[u8]) -> Slot {
    Slot::for_key(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn names_put_the_key_in_the_tag_and_the_quota_at_the_end() {
        let quota = Quota::per_minute(100).with_burst(20);
        let gcra = KeySpace::new("sluicegate:", AlgorithmKind::Gcra, &quota).unwrap();
        let name = gcra.name("user:42");
        assert_eq!(
            name,
            format!("sluicegate:{{user:42}}g{}", print("gcra:100/1m:b20"))
        );
        assert_eq!(name.len(), "sluicegate:{user:42}".len() + 6);
        let window = KeySpace::new("api:", AlgorithmKind::SlidingWindow, &quota).unwrap();
        assert_eq!(
            window.name("user:42"),
            format!("api:{{user:42}}w{}", print("sliding-window:100/1m"))
        );
        let odd = Quota::new(5, Duration::from_nanos(7_000_003)).unwrap();
        let log = KeySpace::new("", AlgorithmKind::SlidingLog, &odd).unwrap();
        assert_eq!(
            log.name(""),
            format!("{{}}s{}", print("sliding-log:5/7000003ns"))
        );
    }

    fn print(text: &str) -> String {
        fingerprint(text).collect()
    }

    #[test]
    fn a_quota_change_changes_the_name() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published test vector): its top 30
        // bits in base64url.
        assert_eq!(print("a"), "r2PcT");
        let name = |kind, quota: Quota| KeySpace::new("p:", kind, &quota).unwrap().name("k");
        let base = Quota::per_minute(100).with_burst(20);
        let mut names = vec![
            name(AlgorithmKind::Gcra, base),
            name(AlgorithmKind::Gcra, Quota::per_minute(101).with_burst(20)),
            name(AlgorithmKind::Gcra, Quota::per_minute(100).with_burst(21)),
            name(AlgorithmKind::Gcra, Quota::per_second(100).with_burst(20)),
            name(AlgorithmKind::LeakyBucket, base),
            name(AlgorithmKind::TokenBucket, base),
            name(AlgorithmKind::FixedWindow, base),
            name(AlgorithmKind::SlidingWindow, base),
            name(AlgorithmKind::SlidingLog, base),
        ];
        // The windows and the log ignore the burst: a burst change keeps their state.
        assert_eq!(
            name(AlgorithmKind::FixedWindow, base),
            name(AlgorithmKind::FixedWindow, Quota::per_minute(100))
        );
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn braces_in_keys_are_escaped_one_to_one_and_refused_in_prefixes() {
        let quota = Quota::per_second(1);
        let space = KeySpace::new("p:", AlgorithmKind::FixedWindow, &quota).unwrap();
        assert!(space.name("a}b{c%").starts_with("p:{a%7Db%7Bc%25}f"));
        assert!(space.name("é%%ü}").starts_with("p:{é%25%25ü%7D}f"));
        assert!(space.name("").starts_with("p:{}f"));
        assert_ne!(space.name("%7D"), space.name("}"));
        let name = space.name("x}y");
        assert_eq!(hash_slot(name.as_bytes()), hash_slot(b"x%7Dy"));
        assert!(matches!(
            KeySpace::new("a{b}:", AlgorithmKind::Gcra, &quota),
            Err(RedisError::Config { .. })
        ));
    }

    #[test]
    fn hash_slots_follow_the_cluster_spec() {
        // The slots `CLUSTER KEYSLOT` answers for these keys (the first is the example of the
        // Redis Cluster specification: CRC16 0x31c3).
        for (key, slot) in [
            (&b"123456789"[..], 12_739),
            (b"{user1000}.following", 3443),
            (b"user1000", 3443),
            // An empty tag does not count: the whole key is hashed.
            (b"foo{}{bar}", 8363),
            (b"foo{{bar}}zap", 4015),
            (b"{bar", 4015),
            (b"foo{bar}{zap}", 5061),
            (b"bar", 5061),
        ] {
            assert_eq!(hash_slot(key), Slot::new(slot).unwrap(), "{key:?}");
        }
        assert_eq!(hash_slot(b"{user1000}.following"), hash_slot(b"user1000"));
        assert_ne!(hash_slot(b"foo{}{bar}"), hash_slot(b"bar"));
        assert_eq!(hash_slot(b"foo{{bar}}zap"), hash_slot(b"{bar"));
        assert_eq!(hash_slot(b"foo{bar}{zap}"), hash_slot(b"bar"));
    }
}
