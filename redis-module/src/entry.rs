//! entry.lua without Redis: one call (alone, or a batch of queued calls) decided group by
//! group in arrival order on the values read, each string key written once at the end under
//! prelude.lua's TTL rule. `lib.rs` reads the keys and applies what this returns.

use crate::rules::rule;

/// A key's value when the call began.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Missing,
    Str(Vec<u8>),
    /// A key of another type: every group touching it fails with this.
    Wrong,
}

/// One group's element of the reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    /// Each member's six packed numbers.
    Numbers(Vec<u8>),
    /// A reservation that wrote: its numbers, the value before ('' for none) and the one written.
    Undo(Vec<u8>, Vec<u8>, Vec<u8>),
    Error(String),
}

/// A key to write once the call is decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// Its place among the call's keys (from 0).
    pub key: usize,
    pub value: Vec<u8>,
    /// The TTL to set (ms), `None` to keep the key's.
    pub ttl_ms: Option<i64>,
}

/// What a call decided: the reply's elements, and the keys to write.
#[derive(Debug, Default)]
pub struct Outcome {
    pub elements: Vec<Element>,
    pub writes: Vec<Write>,
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const MALFORMED: &str = "ERR sluicegate: a malformed SLUICEGATE.DECIDE call";
pub const TTL_RANGE: &str =
    "ERR sluicegate: a state's expiry is out of range (a time far in the future)";

/// The script fails a call whose TTL Redis reads as not an integer: a number from 1e17 ms
/// on reaches Redis in exponent notation. Here the call fails before writing anything.
const MAX_TTL_MS: f64 = 1e17;

/// Per key: whether the call changed it, and what the TTL rule needs to write it.
#[derive(Clone, Default)]
struct Track {
    seen: bool,
    dirty: bool,
    /// The fresh time of the state held when the call began.
    first: Option<f64>,
    fresh: f64,
    now: f64,
    own: bool,
}

/// One member of a group, decided (entry.lua's replies, writes, at, fresh_at, nows, owns).
struct Decided {
    reply: [f64; 6],
    write: Option<Vec<u8>>,
    key: usize,
    fresh: f64,
    now: f64,
    own: bool,
}

/// A big-endian reader over the packed groups.
struct Blob<'a>(&'a [u8]);

impl Blob<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take::<1>()?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take()?))
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_be_bytes(self.take()?))
    }
}

/// A member as packed: `>HBdddddd`.
struct Member {
    key: usize,
    letter: u8,
    now: f64,
    n: f64,
    params: [f64; 4],
}

fn member(blob: &mut Blob<'_>, keys: usize) -> Option<Member> {
    let key = usize::from(blob.u16()?);
    let letter = blob.u8()?;
    let (now, n) = (blob.f64()?, blob.f64()?);
    let params = [blob.f64()?, blob.f64()?, blob.f64()?, blob.f64()?];
    // KEYS is 1-based in the blob.
    (1..=keys).contains(&key).then(|| Member {
        key: key - 1,
        letter,
        now,
        n,
        params,
    })
}

/// An error reply; in a group of several, naming the failing limit (from 1).
fn named(err: &str, m: usize, k: usize) -> Element {
    if m > 1 {
        Element::Error(format!("{err} (limit {k})"))
    } else {
        Element::Error(err.to_owned())
    }
}

/// prelude.lua's `expiry`: the TTL in ms to set, or `None` to keep the key's.
fn expiry(fresh: f64, before: Option<f64>, now: f64, own: bool) -> Option<i64> {
    let due = (fresh / 1_000_000.0).ceil() * 1_000_000.0;
    if let Some(before) = before {
        if own && due <= (before / 1_000_000.0).ceil() * 1_000_000.0 {
            return None;
        }
    }
    let ms = ((due - now) / 1000.0).ceil().max(1000.0);
    // Exact as an integer below 2^53; `run` refuses anything from MAX_TTL_MS on.
    Some(ms.min(MAX_TTL_MS) as i64)
}

/// Decides every group in `blob` on `values` (one per key). `clock` is Redis's time in us,
/// read at most once. `Err` fails the whole call (a blob the client did not pack).
pub fn run(
    blob: &[u8],
    mut values: Vec<Value>,
    clock: impl Fn() -> f64,
) -> Result<Outcome, &'static str> {
    let keys = values.len();
    let mut blob = Blob(blob);
    let mut track = vec![Track::default(); keys];
    let mut server_now = None;
    let mut out = Outcome::default();
    // This group's members, as decided; reused.
    let mut decided: Vec<Decided> = Vec::new();
    while !blob.0.is_empty() {
        let op = blob.u8().ok_or(MALFORMED)?;
        let m = usize::from(blob.u16().ok_or(MALFORMED)?);
        let hit = op == b'h';
        let (mut all, mut failed) = (true, None);
        decided.clear();
        for k in 1..=m {
            let mb = member(&mut blob, keys).ok_or(MALFORMED)?;
            let own = mb.now < 0.0;
            let now = if own {
                *server_now.get_or_insert_with(&clock)
            } else {
                mb.now
            };
            if failed.is_some() {
                continue;
            }
            let Some(decide) = rule(mb.letter) else {
                failed = Some(named(
                    &format!("SGSCRIPT unknown algorithm {}", mb.letter),
                    m,
                    k,
                ));
                continue;
            };
            let v = match &values[mb.key] {
                Value::Wrong => {
                    failed = Some(named(WRONGTYPE, m, k));
                    continue;
                }
                Value::Missing => None,
                Value::Str(v) => Some(v.as_slice()),
            };
            match decide(v, now, mb.n, hit, mb.params) {
                Err(err) => failed = Some(named(err, m, k)),
                Ok(d) => {
                    let t = &mut track[mb.key];
                    if !t.seen {
                        (t.seen, t.first, t.own) = (true, d.before, true);
                    }
                    all = all && d.allowed;
                    decided.push(Decided {
                        reply: d.reply,
                        write: d.write,
                        key: mb.key,
                        fresh: d.fresh,
                        now,
                        own,
                    });
                }
            }
        }
        if let Some(failed) = failed {
            out.elements.push(failed);
            continue;
        }
        let mut undo = None;
        if hit || ((op == b'c' || op == b'r') && all) {
            for Decided {
                write,
                key,
                fresh,
                now,
                own,
                ..
            } in &mut decided
            {
                let (key, fresh, now, own) = (*key, *fresh, *now, *own);
                let Some(write) = write.take() else { continue };
                if op == b'r' {
                    let before = match &values[key] {
                        Value::Str(v) => v.clone(),
                        _ => Vec::new(),
                    };
                    undo = Some((before, write.clone()));
                }
                values[key] = Value::Str(write);
                let t = &mut track[key];
                (t.dirty, t.fresh, t.now) = (true, fresh, now);
                t.own = t.own && own;
            }
        }
        let mut numbers = Vec::with_capacity(48 * decided.len());
        for member in &decided {
            for x in member.reply {
                numbers.extend_from_slice(&x.to_be_bytes());
            }
        }
        out.elements.push(match undo {
            Some((before, written)) => Element::Undo(numbers, before, written),
            None => Element::Numbers(numbers),
        });
    }
    for (key, t) in track.iter().enumerate().filter(|(_, t)| t.dirty) {
        // Each key is written once, after every group: its value moves out.
        let Value::Str(value) = std::mem::replace(&mut values[key], Value::Missing) else {
            continue;
        };
        let ttl_ms = expiry(t.fresh, t.first, t.now, t.own);
        if ttl_ms.is_some_and(|ms| ms as f64 >= MAX_TTL_MS) {
            return Err(TTL_RANGE);
        }
        out.writes.push(Write { key, value, ttl_ms });
    }
    Ok(out)
}
