//! The scripts' replies, turned into [`Decision`]s: six numbers per limit, packed as
//! big-endian doubles in one string (cheaper for Redis to send than an array; every value is
//! a whole number below 2^53, so exact).

use super::error::RedisError;
use crate::decision::Decision;
use redis::Value;
use smallvec::SmallVec;
use std::time::Duration;

/// One limit's answer on the wire, as a script computes it (times in whole microseconds, and
/// the single-request retry the deny cache needs): what becomes a [`Decision`], not a second
/// form of [`Numbers`](crate::Numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScriptAnswer {
    pub(crate) allowed: bool,
    pub(crate) remaining: u32,
    /// For a denial: until the same request would be admitted.
    pub(crate) retry_us: u64,
    pub(crate) reset_us: u64,
    pub(crate) wait_us: u64,
    /// For a denial: until a single request would be admitted (0 if one would be now).
    pub(crate) retry_one_us: u64,
}

/// Each limit's answer of one call: one, unless the call is a composite (kept inline, a
/// batched decision allocates nothing for its answer).
pub(crate) type Answers = SmallVec<[ScriptAnswer; 1]>;

/// Bytes of one limit's packed numbers.
const PACKED: usize = 48;

impl ScriptAnswer {
    /// The six numbers packed in `bytes` (exactly [`PACKED`] of them).
    fn unpack(bytes: &[u8]) -> Result<ScriptAnswer, RedisError> {
        let mut fields = bytes.chunks_exact(8).map(|chunk| {
            let value = f64::from_be_bytes(chunk.try_into().expect("chunks of 8"));
            if value >= 0.0 && value.fract() == 0.0 && value < 9_007_199_254_740_992.0 {
                Ok(value as u64)
            } else {
                Err(malformed("a number that is not a whole number below 2^53"))
            }
        });
        let mut next = || {
            fields
                .next()
                .unwrap_or_else(|| Err(malformed("too few numbers")))
        };
        Ok(ScriptAnswer {
            allowed: next()? != 0,
            remaining: u32::try_from(next()?).unwrap_or(u32::MAX),
            retry_us: next()?,
            reset_us: next()?,
            wait_us: next()?,
            retry_one_us: next()?,
        })
    }

    /// The decision, for a quota of `limit`.
    pub(crate) fn decision(&self, limit: u32) -> Decision {
        Decision::new(
            self.allowed,
            limit,
            self.remaining,
            (!self.allowed).then(|| Duration::from_micros(self.retry_us)),
            Duration::from_micros(self.reset_us),
            Duration::from_micros(self.wait_us),
        )
    }
}

/// The one element of the reply to a call of one group.
pub(crate) fn only(value: Value) -> Result<Value, RedisError> {
    match value {
        Value::Array(items) if items.len() == 1 => {
            Ok(items.into_iter().next().expect("one element"))
        }
        _ => Err(malformed("expected one element per call")),
    }
}

/// A reservation's element: the numbers, and after one that wrote, what an undo needs.
pub(crate) fn reservation(value: Value) -> Result<(ScriptAnswer, Vec<Value>), RedisError> {
    match value {
        Value::Array(mut fields) if !fields.is_empty() => {
            let extra = fields.split_off(1);
            let numbers = composite(fields.pop().expect("one field"), 1)?.1;
            Ok((numbers[0], extra))
        }
        value => Ok((composite(value, 1)?.1[0], vec![])),
    }
}

/// A group's element of a call's reply: whether every limit allowed, then each limit's
/// numbers.
pub(crate) fn composite(value: Value, limits: usize) -> Result<(bool, Answers), RedisError> {
    let Value::BulkString(bytes) = value else {
        return Err(malformed("expected packed numbers"));
    };
    if bytes.len() != PACKED * limits {
        return Err(malformed("six numbers per limit"));
    }
    let numbers: Answers = bytes
        .chunks_exact(PACKED)
        .map(ScriptAnswer::unpack)
        .collect::<Result<_, _>>()?;
    Ok((numbers.iter().all(|n| n.allowed), numbers))
}

/// The Redis module's reply to a call none of whose groups failed: its elements packed in
/// one string (redis-module/src/reply.rs: per element a tag, `n` numbers or `u` a
/// reservation's three parts, each part a big-endian u32 length and its bytes), read here
/// into the array `entry.lua` replies. One string is far cheaper for redis-rs to read than
/// an array of them.
pub(crate) fn unpack_native(bytes: &[u8]) -> Result<Value, RedisError> {
    let mut rest = bytes;
    let mut elements = Vec::with_capacity(bytes.len() / (PACKED + 5));
    let part = |rest: &mut &[u8]| -> Result<Vec<u8>, RedisError> {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| malformed("a packed reply cut short"))?;
        let len = u32::from_be_bytes(*len) as usize;
        let bytes = tail
            .get(..len)
            .ok_or_else(|| malformed("a packed reply cut short"))?;
        *rest = &tail[len..];
        Ok(bytes.to_vec())
    };
    while let Some((&tag, tail)) = rest.split_first() {
        rest = tail;
        let element = match tag {
            b'n' => Value::BulkString(part(&mut rest)?),
            b'u' => Value::Array(vec![
                Value::BulkString(part(&mut rest)?),
                Value::BulkString(part(&mut rest)?),
                Value::BulkString(part(&mut rest)?),
            ]),
            _ => return Err(malformed("an unknown element in a packed reply")),
        };
        elements.push(element);
    }
    Ok(Value::Array(elements))
}

/// An integer field (non-negative in every reply).
pub(crate) fn int(value: &Value) -> Result<u64, RedisError> {
    match value {
        Value::Int(n) => u64::try_from(*n).map_err(|_| malformed("a negative number")),
        Value::BulkString(bytes) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| malformed("a number that does not parse")),
        _ => Err(malformed("a field that is not a number")),
    }
}

/// A string field (undo data).
pub(crate) fn bytes(value: &Value) -> Result<Vec<u8>, RedisError> {
    match value {
        Value::BulkString(bytes) => Ok(bytes.clone()),
        Value::SimpleString(s) => Ok(s.as_bytes().to_vec()),
        _ => Err(malformed("a field that is not a string")),
    }
}

fn malformed(what: &str) -> RedisError {
    RedisError::Script {
        message: format!("unexpected reply from a sluicegate script: {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(bytes);
    }

    #[test]
    fn a_packed_reply_reads_as_the_scripts_array() {
        let mut packed = vec![b'n'];
        part(&mut packed, &[1; 48]);
        packed.push(b'u');
        part(&mut packed, &[2; 48]);
        part(&mut packed, b"");
        part(&mut packed, &[3; 17]);
        let expected = Value::Array(vec![
            Value::BulkString(vec![1; 48]),
            Value::Array(vec![
                Value::BulkString(vec![2; 48]),
                Value::BulkString(vec![]),
                Value::BulkString(vec![3; 17]),
            ]),
        ]);
        assert_eq!(unpack_native(&packed).unwrap(), expected);
        assert_eq!(unpack_native(b"").unwrap(), Value::Array(vec![]));
        for bad in [&packed[..packed.len() - 1], b"n\0\0", b"x"] {
            assert!(unpack_native(bad).is_err(), "{bad:?}");
        }
    }
}
