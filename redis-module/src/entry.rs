//! entry.lua without Redis: one call (alone, or a batch of queued calls) decided group by
//! group in arrival order on the values read, each string key written once at the end under
//! prelude.lua's TTL rule. `lib.rs` reads the keys and applies what this returns.

use crate::rules::rule;

/// A key's value when the call began.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No such key.
    Missing,
    /// A string of a state's length (one of [`STATE_LENGTHS`]).
    Str(Vec<u8>),
    /// A string of any other length, left unread: no rule's state (`SGFOREIGN`).
    Foreign,
    /// A key of another type: every group touching it fails with this.
    Wrong,
}

/// The lengths of every rule's state: a string of another length is no state, and is not
/// read.
pub const STATE_LENGTHS: [usize; 2] = [crate::rules::STATE, crate::rules::WIDE_STATE];

/// One group's element of the reply.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // The fields are the variants' documented parts.
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
    /// The state to store.
    pub value: Vec<u8>,
    /// The TTL to set (ms), `None` to keep the key's.
    pub ttl_ms: Option<i64>,
}

/// What a call decided: the reply's elements, and the keys to write.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The reply's elements, one per group.
    pub elements: Vec<Element>,
    /// The keys to write, each once.
    pub writes: Vec<Write>,
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// The error reply to a call the client did not pack.
pub const MALFORMED: &str = "ERR sluicegate: a malformed SLUICEGATE.DECIDE call";

/// The longest TTL a write sets: 20 years (7,305 days) in ms, as prelude.lua's `expiry`
/// caps it. A state fresh later than that (a debt recorded by hits far beyond the limit,
/// or parameters no quota the client accepts makes) is dropped after 20 years rather than
/// kept for as long as the parameters ask; every quota's window or bucket, at most twice
/// `Quota::MAX_PERIOD` (18.3 years), expires within it.
pub const MAX_TTL_MS: i64 = 631_152_000_000;

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
    // A whole number from 1000 to the cap, so exact as an integer.
    Some(ms.min(MAX_TTL_MS as f64) as i64)
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
                // Every rule refuses a string of no state's length.
                Value::Foreign => Some(&[][..]),
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
        out.writes.push(Write { key, value, ttl_ms });
    }
    Ok(out)
}
