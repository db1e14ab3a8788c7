//! [`Group`]: one call as the link sends it: one limit (a decision) or several decided
//! all-or-nothing (a composite group), with each member's key, algorithm, instant, cost and
//! parameters; and [`Call`]: one or more groups as one `EVALSHA` of `entry.lua` (alone, or a
//! batch of queued calls, see `batch.rs`), which decides each group as it would have been
//! decided alone. A call sends each distinct key once (so the script reads them with one
//! `MGET` and writes each once), and every group's fields packed in one argument.

use super::error::RedisError;
use super::link::Arg;
use super::reply::{self, Answers};
use super::scripts::{Script, SCRIPTS};
use crate::backend::Op;
use smallvec::SmallVec;
use std::collections::HashMap;

/// One limit of a call.
#[derive(Debug)]
pub(crate) struct Member {
    pub(crate) key: String,
    /// The algorithm's letter (`g`, `t`, ...), as entry.lua reads it.
    pub(crate) algorithm: &'static str,
    /// The instant to send; `None`: Redis reads `TIME`.
    pub(crate) now: Option<u64>,
    pub(crate) cost: u32,
    pub(crate) params: [u8; 32],
}

/// One call: its members, decided together under `op`.
#[derive(Debug)]
pub(crate) struct Group {
    pub(crate) op: Op,
    pub(crate) members: SmallVec<[Member; 1]>,
}

impl Member {
    /// The algorithm's byte, as entry.lua's `deciders` know it.
    fn letter(&self) -> u8 {
        self.algorithm.as_bytes()[0]
    }

    /// True for the algorithms whose state is one string (all but the log).
    fn is_string(&self) -> bool {
        self.letter() != b's'
    }
}

impl Group {
    /// A decision on one key.
    pub(crate) fn one(op: Op, member: Member) -> Group {
        let mut members = SmallVec::new();
        members.push(member);
        Group { op, members }
    }

    /// The keys, in order.
    pub(crate) fn keys(&self) -> SmallVec<[&str; 1]> {
        self.members.iter().map(|m| m.key.as_str()).collect()
    }

    /// Bytes this group adds to a batch's command (its keys and arguments), for the cap.
    pub(crate) fn size(&self) -> usize {
        self.members
            .iter()
            .map(|m| m.key.len() + MEMBER)
            .sum::<usize>()
            + GROUP
    }

    /// The call when this group goes alone.
    pub(crate) fn alone(&self) -> Call<'_> {
        Call::of(
            std::slice::from_ref(self).iter(),
            self.op.code().as_bytes()[0],
        )
    }

    /// The call for a reservation (op `r`): a check whose reply carries what undoing it takes.
    pub(crate) fn reservation(&self) -> Call<'_> {
        Call::of(std::slice::from_ref(self).iter(), b'r')
    }

    /// Each member's numbers from this group's element of a call's reply.
    pub(crate) fn reply(&self, value: redis::Value) -> Result<Answers, RedisError> {
        Ok(reply::composite(value, self.members.len())?.1)
    }
}

/// Bytes of one group's header and one member's fields in [`Call::blob`].
const GROUP: usize = 3;
const MEMBER: usize = 51;

/// One `EVALSHA` of entry.lua: the script carrying the call's algorithms, the distinct keys
/// (string states first, `strings` of them) and every group packed in one argument.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub(crate) script: &'static Script,
    pub(crate) keys: Vec<&'a str>,
    pub(crate) strings: usize,
    pub(crate) blob: Vec<u8>,
    /// Every member's algorithm is one the sluicegate Redis module decides.
    pub(crate) native: bool,
}

impl<'a> Call<'a> {
    /// The call deciding `groups` in order; `op` overrides each group's op code when it is
    /// `r` (a reservation), else each group's own is used.
    pub(crate) fn of<I>(groups: I, op: u8) -> Call<'a>
    where
        I: Iterator<Item = &'a Group> + Clone,
    {
        // Distinct keys, the string states' first: a member's index is provisional (its
        // place among its kind's keys) until the number of string keys is known.
        let mut strings: Vec<&'a str> = Vec::new();
        let mut logs: Vec<&'a str> = Vec::new();
        let mut index: HashMap<&'a str, u32, ahash::RandomState> = HashMap::default();
        let mut places: SmallVec<[u32; 8]> = SmallVec::new();
        let mut letter = None;
        let mut mixed = false;
        let mut hashed = false;
        let mut native = true;
        for member in groups.clone().flat_map(|g| g.members.iter()) {
            native &= NATIVE.contains(&member.letter());
            let key = member.key.as_str();
            let (kind, tag) = if member.is_string() {
                (&mut strings, 0)
            } else {
                (&mut logs, LOG)
            };
            // Small calls scan; from 16 distinct keys on, a map.
            let found = if hashed {
                index.get(key).copied()
            } else {
                (kind.iter().position(|k| *k == key)).map(|i| i as u32 | tag)
            };
            let place = match found {
                Some(place) => place,
                None => {
                    kind.push(key);
                    let place = (kind.len() - 1) as u32 | tag;
                    if hashed {
                        index.insert(key, place);
                    } else if strings.len() + logs.len() >= 16 {
                        hashed = true;
                        index.extend((strings.iter().enumerate()).map(|(i, k)| (*k, i as u32)));
                        index.extend((logs.iter().enumerate()).map(|(i, k)| (*k, i as u32 | LOG)));
                    }
                    place
                }
            };
            places.push(place);
            match letter {
                None => letter = Some(member.letter()),
                Some(l) if l != member.letter() => mixed = true,
                Some(_) => {}
            }
        }
        let strings_len = strings.len();
        let mut blob = Vec::with_capacity(places.len() * MEMBER + 8 * GROUP);
        let mut places = places.into_iter();
        for group in groups.clone() {
            let code = if op == b'r' {
                b'r'
            } else {
                group.op.code().as_bytes()[0]
            };
            blob.push(code);
            blob.extend_from_slice(&(group.members.len() as u16).to_be_bytes());
            for member in &group.members {
                let place = places.next().expect("a place per member");
                let at = if place & LOG != 0 {
                    (place & !LOG) as usize + strings_len
                } else {
                    place as usize
                };
                // KEYS is 1-based in Lua.
                blob.extend_from_slice(&((at + 1) as u16).to_be_bytes());
                blob.push(member.letter());
                let now = member.now.map_or(-1.0, |now| now as f64);
                blob.extend_from_slice(&now.to_be_bytes());
                blob.extend_from_slice(&f64::from(member.cost).to_be_bytes());
                blob.extend_from_slice(&member.params);
            }
        }
        strings.extend(logs);
        let groups = groups.map(|group| group.members.len());
        native &= within_module_caps(groups, strings.len(), blob.len());
        let script = match letter {
            Some(letter) if !mixed => SCRIPTS.by_letter(letter),
            _ => &SCRIPTS.any,
        };
        Call {
            script,
            keys: strings,
            strings: strings_len,
            blob,
            native,
        }
    }

    /// The arguments after the keys.
    pub(crate) fn args(&self) -> [Arg<'_>; 2] {
        [Arg::Int(self.strings as u64), Arg::Bytes(&self.blob)]
    }
}

/// The algorithms the sluicegate Redis module decides (redis-module/src/rules): those whose
/// state is one string (all but the sliding log).
const NATIVE: &[u8] = b"fagltw";

/// What one `SLUICEGATE.DECIDE` call may carry: the module's caps (redis-module/src/limits.rs,
/// whose tests hold the module to them), beyond which it refuses the call. The batches
/// stay far below them (64 calls, about 32 KiB); a composite of more than 1024 limits goes
/// to the scripts.
const MODULE_MAX_ARGUMENT_BYTES: usize = 256 * 1024;
const MODULE_MAX_KEYS: usize = 4096;
const MODULE_MAX_GROUPS: usize = 1024;
const MODULE_MAX_MEMBERS: usize = 1024;

/// Whether the module takes a call of groups of `members` each, on `keys` keys, packed in
/// `bytes`.
fn within_module_caps(members: impl Iterator<Item = usize>, keys: usize, bytes: usize) -> bool {
    let mut groups = 0;
    for members in members {
        groups += 1;
        if members > MODULE_MAX_MEMBERS || groups > MODULE_MAX_GROUPS {
            return false;
        }
    }
    keys <= MODULE_MAX_KEYS && bytes <= MODULE_MAX_ARGUMENT_BYTES
}

/// Marks a provisional index as a sorted set's.
const LOG: u32 = 1 << 31;
