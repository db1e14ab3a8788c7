//! The error code of the engine's capacity error, thrown as a JavaScript `RangeError`
//! ("a request of cost 11 can never be admitted: the capacity is 5").

use std::ffi::CStr;

/// The `code` of a capacity `RangeError`.
pub(crate) const CAPACITY: &CStr = c"ERR_SLUICEGATE_CAPACITY";
