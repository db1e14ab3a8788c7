//! The Redis module's argument, from any client allowed to run `SLUICEGATE.DECIDE`: the
//! packed calls checked against the caps, then decided on the keys' values (missing, a
//! key of another type, a string of a state's length, or of another), and the reply packed
//! and read back. The input's first byte is the number of keys (at most 8); then, per key,
//! a byte choosing its value (and for a state, its 17 or 25 bytes); the rest is the blob.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluicegate_redis::entry::{run, Element, Value};
use sluicegate_redis::{limits, reply};

fuzz_target!(|data: &[u8]| {
    let Some((&keys, mut rest)) = data.split_first() else {
        return;
    };
    let keys = usize::from(keys % 9);
    let mut values = Vec::with_capacity(keys);
    for _ in 0..keys {
        let Some((&kind, tail)) = rest.split_first() else {
            return;
        };
        rest = tail;
        values.push(match kind % 4 {
            0 => Value::Missing,
            1 => Value::Wrong,
            2 => Value::Foreign,
            _ => {
                let len = if kind & 4 == 0 { 17 } else { 25 };
                let Some((state, tail)) = rest.split_at_checked(len) else {
                    return;
                };
                rest = tail;
                Value::Str(state.to_vec())
            }
        });
    }
    let blob = rest;
    if limits::check(keys, blob).is_err() {
        return;
    }
    // Redis's clock: a fixed instant, as the command reads it once.
    let outcome = run(blob, values, || 1_795_000_000_000_000.0).expect("a checked call runs");
    for write in &outcome.writes {
        assert!(write.key < keys);
        assert!(matches!(write.value.len(), 17 | 25), "{write:?}");
        if let Some(ms) = write.ttl_ms {
            assert!(
                (1000..=sluicegate_redis::entry::MAX_TTL_MS).contains(&ms),
                "{ms}"
            );
        }
    }
    if let Some(packed) = reply::pack(&outcome.elements) {
        let parts = reply::unpack(&packed).expect("a packed reply reads back");
        assert_eq!(parts.len(), outcome.elements.len());
    } else {
        assert!(outcome
            .elements
            .iter()
            .any(|element| matches!(element, Element::Error(_))));
    }
});
