//! String and byte-string keys, which the table stores in text slots (in the slot up to 48
//! bytes, on the heap past that): exact at every length and under colliding hashes, through
//! growth, sweeps and reconfiguration, for every text key type, and beside a plain key type.

use sluicegate::algorithm::{FixedWindow, Gcra};
use sluicegate::clock::ManualClock;
use sluicegate::{KeyedLimiter, Quota};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

/// Every key hashes alike: one probe sequence, all tags equal, so only bytes tell keys apart.
#[derive(Clone, Copy, Default)]
struct Collide;

struct Constant;

impl Hasher for Constant {
    fn finish(&self) -> u64 {
        0x0123_4567_89ab_cdef
    }
    fn write(&mut self, _bytes: &[u8]) {}
}

impl BuildHasher for Collide {
    type Hasher = Constant;
    fn build_hasher(&self) -> Constant {
        Constant
    }
}

/// Keys of every length from 0 to 120 bytes, many sharing long prefixes (the last bytes
/// differ), several of each length.
fn keys() -> Vec<String> {
    let mut keys = Vec::new();
    for len in 0..=120usize {
        for variant in 0..3u8 {
            if len == 0 && variant > 0 {
                continue;
            }
            let mut key = "p".repeat(len.saturating_sub(1));
            if len > 0 {
                key.push(char::from(b'a' + variant));
            }
            keys.push(key);
        }
    }
    keys
}

/// Every key gets its own burst of 2 from `limiter`, checked through `as_key`: 2 admitted,
/// the third denied, whatever the others did.
fn each_key_has_its_own_state<K, S>(
    limiter: &KeyedLimiter<K, Gcra, ManualClock, S>,
    keys: &[String],
    as_key: impl Fn(&str) -> K,
) where
    K: Hash + Eq + Clone + Send + Sync,
    S: BuildHasher,
{
    for round in 0..3 {
        for key in keys {
            let decision = limiter.check(&as_key(key));
            assert_eq!(decision.is_allowed(), round < 2, "{key:?}, check {round}");
        }
    }
    assert_eq!(limiter.len(), keys.len());
}

fn limiter<K: Hash + Eq + Clone + Send + Sync, S: BuildHasher>(
    hasher: S,
) -> KeyedLimiter<K, Gcra, ManualClock, S> {
    KeyedLimiter::<K, Gcra, ManualClock>::builder(Quota::per_hour(2))
        .hasher(hasher)
        .shards(1)
        .initial_capacity(0)
        .build()
        .unwrap()
}

#[test]
fn every_text_key_type_is_exact_at_every_length() {
    let keys = keys();
    each_key_has_its_own_state(
        &limiter::<String, _>(ahash::RandomState::new()),
        &keys,
        |k| k.to_owned(),
    );
    each_key_has_its_own_state(
        &limiter::<Box<str>, _>(ahash::RandomState::new()),
        &keys,
        |k| k.into(),
    );
    each_key_has_its_own_state(
        &limiter::<Arc<str>, _>(ahash::RandomState::new()),
        &keys,
        |k| k.into(),
    );
    each_key_has_its_own_state(
        &limiter::<Vec<u8>, _>(ahash::RandomState::new()),
        &keys,
        |k| k.as_bytes().to_vec(),
    );
    // A plain key type beside them, on the same traces.
    each_key_has_its_own_state(
        &limiter::<(u8, String), _>(ahash::RandomState::new()),
        &keys,
        |k| (7, k.to_owned()),
    );
}

#[test]
fn colliding_text_keys_are_told_apart_by_their_bytes() {
    // 361 keys on one probe sequence, through every growth of a one-shard table.
    let keys = keys();
    each_key_has_its_own_state(&limiter::<String, _>(Collide), &keys, |k| k.to_owned());
    each_key_has_its_own_state(&limiter::<Vec<u8>, _>(Collide), &keys, |k| {
        k.as_bytes().to_vec()
    });
}

#[test]
fn borrowed_and_owned_lookups_find_the_same_state() {
    let names = limiter::<String, _>(ahash::RandomState::new());
    let long = "x".repeat(100);
    assert!(names.check("alice").is_allowed());
    assert!(names.check(&"alice".to_owned()).is_allowed());
    assert!(names.check("alice").is_denied());
    assert!(names.check(long.as_str()).is_allowed());
    assert!(names.check(&long).is_allowed());
    assert!(names.check(long.as_str()).is_denied());
    let bytes = limiter::<Vec<u8>, _>(ahash::RandomState::new());
    assert!(bytes.check(&b"alice"[..]).is_allowed());
    assert!(bytes.check(&b"alice".to_vec()).is_allowed());
    assert!(bytes.check(&b"alice"[..]).is_denied());
    assert_eq!(bytes.len(), 1);
}

/// Sweeps drop idle text keys and compaction copies the rest; the keys that still hold
/// state keep it, and swept keys start afresh.
#[test]
fn sweeps_and_reconfiguration_keep_text_keys_exact() {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<String, FixedWindow, ManualClock>::builder(Quota::per_second(2))
        .clock(clock.clone())
        .shards(2)
        .initial_capacity(0)
        .build()
        .unwrap();
    let keys = keys();
    for key in &keys {
        assert!(limiter.check(key.as_str()).is_allowed());
    }
    clock.advance(Duration::from_secs(1));
    let (busy, idle) = keys.split_at(keys.len() / 2);
    for key in busy {
        assert!(limiter.check(key.as_str()).is_allowed());
        assert!(limiter.check(key.as_str()).is_allowed());
    }
    assert_eq!(limiter.sweep(), idle.len(), "the idle half is fresh");
    assert_eq!(limiter.len(), busy.len());
    limiter.set_quota(Quota::per_second(3)).unwrap();
    for key in busy {
        let decision = limiter.check(key.as_str());
        assert!(decision.is_allowed(), "{key:?}: 2 of 3 used");
        assert!(limiter.check(key.as_str()).is_denied(), "{key:?}");
    }
    for key in idle {
        assert_eq!(
            limiter.check(key.as_str()).remaining(),
            2,
            "{key:?} starts afresh"
        );
    }
}

/// A text slot is one cache line: a million-key table of short string keys spends what one
/// line a key at its load costs, not a separate allocation a key.
#[test]
fn text_slots_cost_a_line_a_key() {
    let limiter = KeyedLimiter::<String, Gcra>::new(Quota::per_hour(10)).unwrap();
    let keys: Vec<String> = (0..200_000)
        .map(|n| format!("ip:10.{}.{}.{}", n >> 16, (n >> 8) & 255, n & 255))
        .collect();
    for key in &keys {
        limiter.check(key.as_str());
    }
    let per_key = limiter.memory_bytes() as f64 / keys.len() as f64;
    // 64 bytes a slot at a dense load of 68-85%, plus retired arrays not yet freed.
    assert!((64.0..=200.0).contains(&per_key), "{per_key} bytes a key");
}
