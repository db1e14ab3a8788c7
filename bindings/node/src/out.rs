//! [`Out`]: where a check writes its decision's numbers, a `Float64Array` the JavaScript side
//! owns and reads right after the call.

use napi::bindgen_prelude::Float64Array;
use napi::{Error, Status};
use sluicegate::Decision;
use std::time::Duration;

/// Slots of the output array, in order.
pub(crate) const LIMIT: usize = 0;
pub(crate) const REMAINING: usize = 1;
pub(crate) const RETRY_AFTER: usize = 2;
pub(crate) const RESET_AFTER: usize = 3;
pub(crate) const WAIT: usize = 4;
/// Why a denial denied: 0 allowed, 1 the limit, 2 a full table ([`TABLE_FULL`]).
pub(crate) const REASON: usize = 5;
/// Slots the array must have.
pub(crate) const LEN: usize = 6;

/// The reason slot's value for a denial of a new key by a table full of active keys.
pub(crate) const TABLE_FULL: f64 = 2.0;

/// The retry a denial by a full table answers, in ms: the library's one answer
/// (`TABLE_FULL_RETRY_AFTER`, the HTTP layer's `Retry-After: 1`), as Python reports it.
pub(crate) const TABLE_FULL_RETRY_MS: f64 = sluicegate::TABLE_FULL_RETRY_AFTER.as_millis() as f64;

/// `decision`'s retry in ms: NaN when allowed, finite for every denial.
#[inline(always)]
pub(crate) fn retry_millis(decision: &Decision) -> Option<f64> {
    if decision.is_table_full() {
        return Some(TABLE_FULL_RETRY_MS);
    }
    decision.numbers().retry_after.map(millis)
}

/// A held `Float64Array` of at least [`LEN`] numbers: limit, remaining, retry-after (ms; NaN
/// when allowed), reset-after (ms), wait (ms), reason.
pub(crate) struct Out {
    /// Keeps the array (and so its memory) alive as long as the limiter.
    _array: Float64Array,
    data: *mut f64,
}

impl Out {
    /// Holds `array`, or says why it cannot be used.
    pub(crate) fn new(mut array: Float64Array) -> napi::Result<Out> {
        if array.len() < LEN {
            return Err(Error::new(
                Status::InvalidArg,
                format!("the output array needs {LEN} numbers"),
            ));
        }
        // SAFETY: only this thread writes the array, through `data`, between two reads of it.
        let data = unsafe { array.as_mut() }.as_mut_ptr();
        Ok(Out {
            _array: array,
            data,
        })
    }

    /// Writes `decision`'s numbers and returns whether it allowed.
    #[inline(always)]
    pub(crate) fn write(&self, decision: &Decision) -> bool {
        let n = decision.numbers();
        let (retry, reason) = match n.retry_after {
            Some(t) => (millis(t), 1.0),
            None if decision.is_allowed() => (f64::NAN, 0.0),
            None => (TABLE_FULL_RETRY_MS, TABLE_FULL),
        };
        let values = [
            f64::from(decision.limit()),
            f64::from(n.remaining),
            retry,
            millis(n.reset_after),
            millis(n.wait),
            reason,
        ];
        // SAFETY: `data` points at `LEN` or more f64s of a non-resizable ArrayBuffer that
        // `_array` keeps alive; only the JavaScript thread that owns it calls us.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), self.data, LEN) };
        decision.is_allowed()
    }
}

/// A duration in milliseconds, `Infinity` for "never" (the engine's saturated maximum).
#[inline(always)]
pub(crate) fn millis(d: Duration) -> f64 {
    // Through u64 nanoseconds: converting a u128 to f64 is a slow library call.
    match d
        .as_secs()
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(u64::from(d.subsec_nanos())))
    {
        Some(ns) if ns < u64::MAX => ns as f64 / 1e6,
        _ => f64::INFINITY,
    }
}

// The JavaScript side reads the slots by these numbers.
const _: () = assert!(
    LIMIT == 0
        && REMAINING == 1
        && RETRY_AFTER == 2
        && RESET_AFTER == 3
        && WAIT == 4
        && REASON == 5
);
