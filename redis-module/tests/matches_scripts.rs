//! The module against the script it replaces: random calls (batches of groups, composites,
//! checks, peeks, hits and reservations, on missing keys, kept states, foreign values and
//! keys of another type) sent as `SLUICEGATE.DECIDE` to one set of keys and as `EVAL` of
//! entry.lua to a copy of them on the same `redis-server`. Every reply, every stored value
//! and every TTL must be the script's.

mod support;

use redis::{ConnectionLike, Value};
use support::{connect, expand, server_with_module, SCRIPT};

/// Calls per run, over 400 fresh sets of keys.
const SETS: u32 = 400;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One limit as the client would send it: its letter and its four parameters for a cost.
#[derive(Clone, Copy, Debug)]
struct Limit {
    letter: u8,
    limit: u64,
    period_ns: u64,
    burst: u64,
}

impl Limit {
    fn random(rng: &mut Rng) -> Limit {
        let limit = rng.pick(&[1, 2, 3, 5, 10, 100]);
        Limit {
            letter: rng.pick(b"fagltw"),
            limit,
            period_ns: rng.pick(&[333, 1_500_000, 1_000_000_000, 60_000_000_000]),
            burst: limit + rng.below(3),
        }
    }

    /// params.rs's four numbers for a request of `n`.
    fn params(&self, n: u64) -> [f64; 4] {
        let (l, p) = (self.limit, self.period_ns);
        let g = gcd(p, 1000 * l);
        let f = |x: u64| x as f64;
        match self.letter {
            b'f' | b'w' => {
                let g = gcd(1000, p);
                [f(l), f(1000 / g), f(p / g), 0.0]
            }
            b'a' => [f(l), f(p.div_ceil(1000)), 0.0, 0.0],
            b'g' | b'l' => {
                let (d, t) = (1000 * l / g, p / g);
                [f(d), f(t), f(self.burst * t), f(n * t)]
            }
            _ => {
                let (e, r) = (p / g, 1000 * l / g);
                [f(e), f(r), f(self.burst * e), f(n * e)]
            }
        }
    }
}

/// A value a key may hold before the calls: nothing, a state of some rule, or noise.
fn seed(rng: &mut Rng, con: &mut redis::Connection, keys: [&str; 2]) {
    let choice = rng.below(10);
    let mut value: Vec<u8> = Vec::new();
    match choice {
        0..=5 => return,
        6 | 7 => {
            value.push(rng.pick(b"FAGLTWX"));
            let a = rng.pick(&[0.0, 1.0, 1.5, -3.0, 1.7e15, 9.1e15]);
            let b = rng.pick(&[0.0, 1.0, 2.0, 0.5, 1e6, 2.0e15]);
            value.extend_from_slice(&f64::to_be_bytes(a));
            value.extend_from_slice(&f64::to_be_bytes(b));
            // Half the time a third number: the sliding window's length (or a wrong one).
            if rng.below(2) == 0 {
                let c = rng.pick(&[0.0, 1.0, 3.0, 0.5]);
                value.extend_from_slice(&f64::to_be_bytes(c));
            }
        }
        8 => value.extend_from_slice(b"not ours"),
        _ => {
            for key in keys {
                let _: () = redis::cmd("HSET")
                    .arg(key)
                    .arg("a")
                    .arg(1)
                    .query(con)
                    .unwrap();
            }
            return;
        }
    }
    for key in keys {
        let _: () = redis::cmd("SET").arg(key).arg(&value).query(con).unwrap();
    }
}

#[test]
fn every_reply_value_and_ttl_is_the_scripts() {
    let server = server_with_module();
    let mut con = connect(&server);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut calls, mut written, mut errors, mut script_failures) = (0, 0, 0, 0);
    // Replies the module packed in one string (no group failed), compared unpacked.
    let mut packed = 0;
    for set in 0..SETS {
        let _: () = redis::cmd("FLUSHALL").query(&mut con).unwrap();
        let count = 1 + rng.below(4) as usize;
        let native: Vec<String> = (0..count).map(|k| format!("m{set}:{k}")).collect();
        let script: Vec<String> = (0..count).map(|k| format!("s{set}:{k}")).collect();
        let limits: Vec<Limit> = (0..count).map(|_| Limit::random(&mut rng)).collect();
        for k in 0..count {
            seed(&mut rng, &mut con, [&native[k], &script[k]]);
        }
        let mut now: u64 = 1_764_000_000_000_000 + rng.below(1 << 40);
        for _ in 0..1 + rng.below(12) {
            now = match rng.below(8) {
                0 => now,
                1 => now.saturating_sub(rng.below(2_000)),
                2 => now + 1,
                3 => now + rng.below(2_000),
                4 => now + rng.below(2_000_000),
                5 => now + rng.below(120_000_000),
                _ => now + rng.below(400),
            };
            let mut blob = Vec::new();
            for _ in 0..1 + rng.below(6) {
                let members = 1 + rng.below(3) as u16;
                blob.push(rng.pick(b"ccphhr"));
                blob.extend_from_slice(&members.to_be_bytes());
                for _ in 0..members {
                    let k = rng.below(count as u64) as usize;
                    // Now and then a limit of another rule than the key holds.
                    let limit = if rng.below(12) == 0 {
                        Limit::random(&mut rng)
                    } else {
                        limits[k]
                    };
                    let n = rng.pick(&[0, 1, 1, 1, 2, 3]);
                    blob.extend_from_slice(&(k as u16 + 1).to_be_bytes());
                    blob.push(limit.letter);
                    blob.extend_from_slice(&(now as f64).to_be_bytes());
                    blob.extend_from_slice(&(n as f64).to_be_bytes());
                    for x in limit.params(n) {
                        blob.extend_from_slice(&x.to_be_bytes());
                    }
                }
            }
            let mut decide = redis::cmd("SLUICEGATE.DECIDE");
            decide.arg(&native).arg(&blob);
            let mut eval = redis::cmd("EVAL");
            eval.arg(SCRIPT)
                .arg(count)
                .arg(&script)
                .arg(count)
                .arg(&blob);
            // Raw replies: an error inside the array stays an element.
            let by_module = con
                .req_packed_command(&decide.get_packed_command())
                .unwrap();
            packed += usize::from(matches!(by_module, Value::BulkString(_)));
            let by_module = expand(by_module);
            let by_script = con.req_packed_command(&eval.get_packed_command()).unwrap();
            if let Value::ServerError(error) = &by_script {
                // The script failed as a whole (a stored time so far ahead that its TTL is
                // no integer to Redis), after writing some keys: the module fails it too,
                // writing none, so the two sets of keys part here.
                assert!(
                    matches!(by_module, Value::ServerError(_)),
                    "set {set}: the script failed ({error:?}), the module answered {by_module:?}"
                );
                script_failures += 1;
                break;
            }
            assert_eq!(
                by_module, by_script,
                "set {set}, limits {limits:?}, blob {blob:?}"
            );
            calls += 1;
            if let Value::Array(items) = &by_module {
                errors += items
                    .iter()
                    .filter(|i| matches!(i, Value::ServerError(_)))
                    .count();
            }
            for k in 0..count {
                let kind: String = redis::cmd("TYPE").arg(&native[k]).query(&mut con).unwrap();
                let value: Option<Vec<u8>> = if kind == "string" {
                    redis::cmd("GET").arg(&native[k]).query(&mut con).unwrap()
                } else {
                    None
                };
                let expected_kind: String =
                    redis::cmd("TYPE").arg(&script[k]).query(&mut con).unwrap();
                assert_eq!(kind, expected_kind, "set {set}, key {k}");
                if kind == "string" {
                    let expected: Option<Vec<u8>> =
                        redis::cmd("GET").arg(&script[k]).query(&mut con).unwrap();
                    assert_eq!(value, expected, "set {set}, key {k}, limits {limits:?}");
                    let ttl: i64 = redis::cmd("PTTL").arg(&native[k]).query(&mut con).unwrap();
                    let expected: i64 = redis::cmd("PTTL").arg(&script[k]).query(&mut con).unwrap();
                    assert!(
                        (ttl - expected).abs() <= 100,
                        "set {set}, key {k}: TTL {ttl} ms, the script's {expected}"
                    );
                    written += 1;
                }
            }
        }
    }
    eprintln!("{calls} calls ({packed} packed replies), {written} values, {errors} error elements, {script_failures} failed scripts");
    // The traces reached what they are for.
    assert!(calls > 1500, "{calls} calls");
    assert!(written > 1000, "{written} stored values compared");
    assert!(errors > 100, "{errors} error elements compared");
    assert!(packed > calls / 8, "{packed} packed replies compared");
    assert!(
        script_failures < SETS / 10,
        "{script_failures} sets ended by a failed script"
    );
}
