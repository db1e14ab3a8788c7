//! [`Op`]: what one step of a limit is asked to do.

use crate::error::CapacityError;

/// What a decision is asked for: the one operation kind every backend, composite and script
/// shares (a Redis script receives its [`code`](Op::code)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Decide, consuming the cost when allowed (`check_n`). A cost above the limit's capacity
    /// is refused with a [`CapacityError`](crate::CapacityError): no wait can admit it.
    Check,
    /// The answer `Check` would give, consuming nothing (`peek_n`).
    Peek,
    /// Record the cost whatever the answer (`hit`); any cost is accepted.
    Hit,
}

impl Op {
    /// The one-letter code the Lua scripts take: `c`, `p` or `h`.
    pub fn code(self) -> &'static str {
        match self {
            Op::Check => "c",
            Op::Peek => "p",
            Op::Hit => "h",
        }
    }

    /// The one capacity rule: a cost above `capacity` (a limit's
    /// [`max_cost`](crate::backend::Backend::max_cost)) can never be admitted, so anything but
    /// a hit (which records whatever the answer) is refused.
    ///
    /// ```
    /// use sluicegate::backend::Op;
    /// assert!(Op::Check.within_capacity(5, 5).is_ok());
    /// assert!(Op::Peek.within_capacity(6, 5).is_err());
    /// assert!(Op::Hit.within_capacity(6, 5).is_ok());
    /// ```
    #[inline]
    pub fn within_capacity(self, cost: u32, capacity: u32) -> Result<(), CapacityError> {
        if cost > capacity && self != Op::Hit {
            return Err(CapacityError::new(cost, capacity));
        }
        Ok(())
    }
}
