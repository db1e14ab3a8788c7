//! Throwing the engine's capacity error as a JavaScript `RangeError`.

use napi::Env;
use sluicegate::CapacityError;

/// Throws `error` ("a request of cost 11 can never be admitted: the capacity is 5") as a
/// `RangeError`. The caller returns a dummy value, which JavaScript never sees.
#[cold]
pub(crate) fn throw_capacity(env: &Env, error: CapacityError) {
    // Throwing only fails when an exception is already pending, which then propagates.
    let _ = env.throw_range_error(&error.to_string(), Some("ERR_SLUICEGATE_CAPACITY"));
}
