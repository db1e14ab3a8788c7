//! [`Reservation`] and [`Receipt`]: a consuming decision, and what undoing it takes.

use crate::decision::Decision;
use crate::state::outcome::Swap;
use std::any::Any;
use std::fmt;

/// A consuming decision and what undoing it takes.
#[derive(Debug)]
pub struct Reservation {
    /// The decision; only an allowed one consumed anything.
    pub decision: Decision,
    /// What [`Backend::undo`](super::Backend::undo) needs.
    pub receipt: Receipt,
}

/// What undoing a [`Reservation`] takes; opaque to everyone but the backend that made it.
/// In-process limiters keep their undo data inline, so a composite of them allocates nothing.
pub struct Receipt(Held);

enum Held {
    Nothing,
    Swap(Swap),
    Boxed(Box<dyn Any + Send + Sync>),
}

impl Receipt {
    /// A receipt that undoes nothing.
    pub fn none() -> Receipt {
        Receipt(Held::Nothing)
    }

    /// A receipt carrying a backend's own undo data.
    pub fn new(data: impl Any + Send + Sync) -> Receipt {
        Receipt(Held::Boxed(Box::new(data)))
    }

    /// True for a receipt that undoes nothing.
    #[cfg(feature = "http")]
    pub(crate) fn is_none(&self) -> bool {
        matches!(self.0, Held::Nothing)
    }

    /// The undo data, if this receipt carries a `T`.
    pub fn downcast<T: Any>(self) -> Option<T> {
        match self.0 {
            Held::Boxed(data) => data.downcast().ok().map(|data| *data),
            Held::Nothing | Held::Swap(_) => None,
        }
    }

    /// An in-process limiter's receipt: the word its check swapped, if it consumed.
    pub(crate) fn swap(swap: Option<Swap>) -> Receipt {
        Receipt(swap.map_or(Held::Nothing, Held::Swap))
    }

    /// The swap of [`swap`](Self::swap).
    pub(crate) fn into_swap(self) -> Option<Swap> {
        match self.0 {
            Held::Swap(swap) => Some(swap),
            Held::Nothing | Held::Boxed(_) => None,
        }
    }
}

impl fmt::Debug for Receipt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Held::Nothing => "Receipt(none)",
            Held::Swap(_) | Held::Boxed(_) => "Receipt(..)",
        })
    }
}
