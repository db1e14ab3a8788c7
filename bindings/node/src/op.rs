//! The three operations, as the small integers the JavaScript side passes.

use sluicegate::backend::Op;

/// `check`: consumes when allowed.
pub(crate) const CHECK: u32 = 0;
/// `peek`: the same answer, consuming nothing.
pub(crate) const PEEK: u32 = 1;

/// The operation `code` names; anything else is a `hit` (records unconditionally).
#[inline(always)]
pub(crate) fn from_code(code: u32) -> Op {
    match code {
        CHECK => Op::Check,
        PEEK => Op::Peek,
        _ => Op::Hit,
    }
}
