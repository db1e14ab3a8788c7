//! Keys as users send them, the same in every bench that includes this file (`#[path]`): the
//! same distinct keys of each kind, and the same shuffled orders.

use std::net::{Ipv4Addr, Ipv6Addr};

/// splitmix64's finalizer: a bijection, so `mix(0..n)` are `n` distinct random-looking words.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A text key kind: its short name (for command lines), its name in tables, and the `i`th
/// distinct key of that kind.
pub struct TextKind {
    pub short: &'static str,
    pub name: &'static str,
    pub make: fn(u64) -> String,
}

/// The text kinds: an IPv4 and an IPv6 client as the HTTP layer keys them (`203.0.113.7`, the
/// /64 network `2001:db8:1:2::/64`), `ip:a.b.c.d`, `user:` and 19 digits, a UUID (36 bytes),
/// a 40-byte API key.
pub const TEXT_KINDS: [TextKind; 6] = [
    TextKind {
        short: "ipv4",
        name: "IPv4 (HTTP layer)",
        make: |i| Ipv4Addr::from(mix(i) as u32).to_string(),
    },
    TextKind {
        short: "ipv6",
        name: "IPv6 /64 (HTTP layer)",
        make: |i| {
            let network = u128::from(0x2001_0db8_0000_0000 ^ (mix(i) & 0xffff_ffff)) << 64;
            format!("{}/64", Ipv6Addr::from(network))
        },
    },
    TextKind {
        short: "ip",
        name: "`ip:a.b.c.d`",
        make: |i| format!("ip:{}", Ipv4Addr::from(mix(i) as u32)),
    },
    TextKind {
        short: "user",
        name: "`user:` + 19 digits",
        make: |i| format!("user:{:019}", mix(i) % 10_u64.pow(19)),
    },
    TextKind {
        short: "uuid",
        name: "UUID (36 B)",
        make: |i| {
            let (a, b) = (mix(i), mix(i ^ 0xdead_beef));
            format!(
                "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
                a >> 32,
                (a >> 16) & 0xffff,
                a & 0xfff,
                b >> 52,
                b & 0xffff_ffff_ffff
            )
        },
    },
    TextKind {
        short: "apikey",
        name: "API key (40 B)",
        make: |i| format!("sk_live_{:016x}{:016x}", mix(i), mix(!i)),
    },
];

/// `n` distinct `u64` keys.
pub fn u64_keys(n: usize) -> Vec<u64> {
    (0..n as u64).map(mix).collect()
}

/// `n` distinct keys of `kind`.
pub fn text_keys(kind: &TextKind, n: usize) -> Vec<String> {
    (0..n as u64).map(kind.make).collect()
}

/// A shuffled order of `0..n` (Fisher-Yates on `mix`).
pub fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (mix(seed ^ i as u64) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// `len` checks of present keys: `order` (a permutation of the keys) walked with a stride, so
/// that every key comes up and consecutive checks are of unrelated keys. The keys are cloned
/// in the order they are checked, so a `String`'s bytes lie in allocation order, as a
/// request's freshly parsed key would be at hand: reading the next key streams through
/// memory, and what is timed is the table's own work.
pub fn present_sequence<K: Clone>(keys: &[K], order: &[usize], len: usize) -> Vec<K> {
    (0..len)
        .map(|j| keys[order[(j * 7919) % order.len()]].clone())
        .collect()
}
