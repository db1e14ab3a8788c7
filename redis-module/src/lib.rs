//! sluicegate's Redis module: `SLUICEGATE.DECIDE key [key ...] calls`, the decision call of
//! the Redis limiter (entry.lua) as a native command, for the algorithms whose state is one
//! string (fixed, anchored and sliding windows, GCRA, leaky and token buckets). It reads and writes
//! exactly what the scripts do, so the two can decide the same keys side by side, and it
//! spends none of the Lua interpreter's time a decision (BENCHMARKS.md, "Issue 33").
//!
//! Load it with `redis-server --loadmodule /path/to/libsluicegate_redis.so` (or
//! `MODULE LOAD`), and build the limiter with `RedisBuilder::module(true)`; calls of the
//! sliding log (a sorted set), and calls to a node without the module, still go to the
//! scripts.
//!
//! The reply is `entry.lua`'s, packed in one string when no group failed (`reply.rs`).
//!
//! A call's writes reach replicas and the AOF as one `EVAL` that replays them
//! (`command.rs`), so replicas need no module. A call is bounded (`limits.rs`) and its
//! memory is Redis's (`alloc.rs`).

#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks
)]

mod alloc;
mod api;
mod command;
pub mod entry;
pub mod limits;
pub mod reply;
pub mod rules;

use std::ffi::c_int;

/// Every allocation of the module, once Redis has loaded it, is Redis's (`alloc.rs`).
#[global_allocator]
static ALLOCATOR: alloc::ModuleAllocator = alloc::ModuleAllocator::new();

/// The command's name, as Redis registers it.
const COMMAND: &std::ffi::CStr = c"sluicegate.decide";

/// Called by Redis when it loads the module.
///
/// # Safety
/// Called by Redis only, with its load context.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut api::Ctx,
    _argv: *mut *mut api::RString,
    _argc: c_int,
) -> c_int {
    // SAFETY: `ctx` is the load context (this function's contract). Nothing before this
    // allocates, so the allocator can still switch to Redis's.
    let Some(api) = (unsafe { api::load(ctx) }) else {
        return api::ERR;
    };
    let log = |level: &std::ffi::CStr, message: &std::ffi::CStr| {
        // SAFETY: `ctx` is valid during the load; the format is `%s` with one C string.
        unsafe { (api.log)(ctx, level.as_ptr(), c"%s".as_ptr(), message.as_ptr()) };
    };
    if ALLOCATOR.route_to_redis(&api.alloc) {
        log(
            c"notice",
            c"sluicegate: the module allocates through Redis's allocator (used_memory and maxmemory count it)",
        );
    } else {
        log(
            c"warning",
            c"sluicegate: the module allocated before it was loaded, so it keeps the C library's allocator (used_memory does not count it)",
        );
    }
    // SAFETY: `ctx` is the load context; every pointer argument is a C string literal.
    unsafe {
        (api.set_module_attribs)(ctx, c"sluicegate".as_ptr(), 1, api::APIVER_1);
        // Keys from the first argument to the one before last, as Redis Cluster must know.
        if (api.create_command)(
            ctx,
            COMMAND.as_ptr(),
            command::decide,
            c"write deny-oom".as_ptr(),
            1,
            -2,
            1,
        ) != api::OK
        {
            return api::ERR;
        }
    }
    // SAFETY: as above.
    if unsafe { acl_categories(api, ctx) } != api::OK {
        log(
            c"warning",
            c"sluicegate: Redis refused the command's ACL categories",
        );
        return api::ERR;
    }
    api::OK
}

/// Puts the command in the ACL category `write` (and in `sluicegate`, where Redis lets a
/// module add a category: 7.4 and later), so that `+@write` grants it and `-@write`
/// withholds it. Redis 7.0 and 7.1 have no such call: there the command is in no category
/// (redis-module/README.md says how to grant it).
///
/// # Safety
/// `ctx` must be the load context.
unsafe fn acl_categories(api: &api::Api, ctx: *mut api::Ctx) -> c_int {
    let (Some(get_command), Some(set_categories)) =
        (api.get_command, api.set_command_acl_categories)
    else {
        return api::OK;
    };
    let mut categories = c"write";
    if let Some(add_category) = api.add_acl_category {
        // SAFETY: `ctx` is the load context; the name is a C string literal.
        if unsafe { add_category(ctx, c"sluicegate".as_ptr()) } == api::OK {
            categories = c"write sluicegate";
        }
    }
    // SAFETY: `ctx` is the load context, and the command was created on it just before.
    let command = unsafe { get_command(ctx, COMMAND.as_ptr()) };
    if command.is_null() {
        return api::ERR;
    }
    // SAFETY: `command` is the live handle Redis just returned; the categories a C string.
    unsafe { set_categories(command, categories.as_ptr()) }
}
