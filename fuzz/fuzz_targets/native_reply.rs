//! What the client reads back from Redis: the module's packed reply (`unpack_native`) and
//! each group's element of it, as a server that is not sluicegate's module (or a corrupted
//! connection) could send them. A reply that is not one is an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluicegate::redis::fuzzing::read_native_reply(data);
});
