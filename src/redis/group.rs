//! [`Group`]: one call as the link sends it: one limit (a decision) or several decided
//! all-or-nothing (a composite group), with each member's key, algorithm, instant, cost and
//! parameters. A call sent alone goes as today's single or composite script; queued calls go
//! together in the batch script (see `batch.rs`), which decides each group as it would have
//! been decided alone.

use super::error::RedisError;
use super::link::Arg;
use super::reply::{self, ScriptAnswer};
use super::scripts::{Script, SCRIPTS};
use crate::backend::Op;
use smallvec::SmallVec;

/// One limit of a call.
#[derive(Debug)]
pub(crate) struct Member {
    pub(crate) key: String,
    /// The algorithm's letter (`g`, `t`, ...), as composite.lua and batch.lua read it.
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
    /// The algorithm's own script, for a call of one member sent alone (smaller and quicker
    /// for Redis than the composite script).
    pub(crate) single: &'static Script,
}

impl Group {
    /// A decision on one key.
    pub(crate) fn one(op: Op, member: Member, single: &'static Script) -> Group {
        let mut members = SmallVec::new();
        members.push(member);
        Group {
            op,
            members,
            single,
        }
    }

    /// The keys, in order.
    pub(crate) fn keys(&self) -> SmallVec<[&str; 1]> {
        self.members.iter().map(|m| m.key.as_str()).collect()
    }

    /// Bytes this group adds to a batch's command (its keys and arguments), for the cap.
    pub(crate) fn size(&self) -> usize {
        self.members.iter().map(|m| m.key.len() + 64).sum::<usize>() + 8
    }

    /// Appends this group's `batch.lua` arguments.
    pub(crate) fn batch_args<'a>(&'a self, args: &mut Vec<Arg<'a>>) {
        args.push(Arg::Str(self.op.code()));
        args.push(Arg::Int(self.members.len() as u64));
        self.member_args(args);
    }

    /// Composite.lua's four fields per member.
    fn member_args<'a>(&'a self, args: &mut Vec<Arg<'a>>) {
        for m in &self.members {
            args.push(Arg::Str(m.algorithm));
            args.push(m.now.map_or(Arg::Str(""), Arg::Int));
            args.push(Arg::Int(u64::from(m.cost)));
            args.push(Arg::Bytes(&m.params));
        }
    }

    /// The script and arguments when this call goes alone.
    pub(crate) fn alone(&self) -> (&'static Script, Vec<Arg<'_>>) {
        if let [m] = &self.members[..] {
            let args = vec![
                Arg::Str(self.op.code()),
                m.now.map_or(Arg::Str(""), Arg::Int),
                Arg::Int(u64::from(m.cost)),
                Arg::Bytes(&m.params),
            ];
            return (self.single, args);
        }
        let mut args = Vec::with_capacity(1 + 4 * self.members.len());
        args.push(Arg::Str(self.op.code()));
        self.member_args(&mut args);
        (&SCRIPTS.composite, args)
    }

    /// Each member's numbers from the reply to [`alone`](Self::alone).
    pub(crate) fn alone_reply(&self, value: redis::Value) -> Result<Vec<ScriptAnswer>, RedisError> {
        if self.members.len() == 1 {
            return Ok(vec![reply::single(value)?.0]);
        }
        Ok(reply::composite(value, self.members.len())?.1)
    }

    /// Each member's numbers from this group's element of a batch's reply.
    pub(crate) fn batch_reply(&self, value: redis::Value) -> Result<Vec<ScriptAnswer>, RedisError> {
        Ok(reply::composite(value, self.members.len())?.1)
    }
}
