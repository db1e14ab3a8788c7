//! The key hash that logs show instead of keys: stable within the process, the same for a
//! key and its borrowed form, spread out, and never the key.

use sluicegate::telemetry::key_hash;
use std::collections::HashSet;

#[test]
fn the_same_key_always_hashes_alike() {
    let token = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    assert_eq!(key_hash(token), key_hash(token));
    assert_eq!(key_hash(token), key_hash(&token.to_owned()));
    assert_eq!(key_hash(&42u64), key_hash(&42u64));
    assert_ne!(
        key_hash(token),
        key_hash("sk_live_4eC39HqLyjWDarjtT1zdp7dd")
    );
}

#[test]
fn hashes_are_eight_hex_digits_and_never_the_key() {
    let keys = [
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "203.0.113.7",
        "2001:db8::1",
        "alice@example.com",
        "deadbeefcafe",
    ];
    for key in keys {
        let shown = key_hash(key).to_string();
        assert_eq!(shown.len(), 8, "{shown}");
        assert!(
            shown.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
            "{shown}"
        );
        assert!(
            !shown.contains(key) && !key.contains(&shown),
            "{key} vs {shown}"
        );
        assert_eq!(format!("{:?}", key_hash(key)), format!("KeyHash({shown})"));
        assert_eq!(format!("{:08x}", key_hash(key).value()), shown);
    }
}

#[test]
fn hashes_of_similar_keys_spread_out() {
    // 10,000 IPv4 addresses of one /18: about 0.012 collisions are expected among 32-bit
    // hashes, so more than three means the hash does not spread.
    let hashes: HashSet<u32> = (0..10_000u32)
        .map(|i| key_hash(&format!("10.1.{}.{}", i / 256, i % 256)).value())
        .collect();
    assert!(hashes.len() >= 9_997, "{} distinct", hashes.len());
}
