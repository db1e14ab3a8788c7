//! The native half of the `sluicegate` npm package: the Rust engine as a Node-API module
//! (napi-rs). The JavaScript half (`lib/`) checks arguments, turns options objects into
//! these functions' arguments and numbers into decision objects; nothing here or there
//! implements an algorithm again.
//!
//! Every in-process check is one synchronous call (`raw.rs`: a plain Node-API callback on an
//! external handle) that copies the key's UTF-16 code units onto the stack (no allocation for
//! keys up to 256 units), decides, and writes the decision's numbers into a `Float64Array`
//! the JavaScript side owns (`out.rs`). Returning a JavaScript object built in Rust measured
//! slower (`bench/return_paths.js`, BENCHMARKS.md "Node.js").

// napi-rs registers the exported functions only outside `cfg(test)`; `cargo clippy
// --all-targets` still checks this library as a test, where they then look unused.
#![cfg_attr(test, allow(dead_code))]

mod clock;
mod errors;
mod group;
mod handle;
mod http_build;
mod http_limiter;
mod http_refund;
mod key;
mod keyed;
mod limiter;
mod op;
mod options;
mod out;
mod raw;
mod redis;
mod redis_target;
mod text;

pub use clock::NativeClock;
pub use group::NativeGroup;
pub use redis::{NativeRedis, NativeRedisGroup};

use napi::bindgen_prelude::Object;
use napi::{Env, JsValue};
use napi_derive::napi;

/// Adds the hot path's plain callbacks to the module's exports.
#[napi(module_exports)]
pub fn exports(exports: Object<'_>, env: Env) -> napi::Result<()> {
    let (env, exports) = (env.raw(), exports.raw());
    let callbacks: [(&std::ffi::CStr, raw::Callback); 12] = [
        (c"limiterCheck", limiter::limiter_check),
        (c"keyedCheck", keyed::keyed_check),
        (c"limiterDecide", limiter::limiter_decide),
        (c"limiterMaxCost", limiter::limiter_max_cost),
        (c"keyedDecide", keyed::keyed_decide),
        (c"keyedDecideObject", keyed::keyed_decide_object),
        (c"keyedSize", keyed::keyed_size),
        (c"keyedReset", keyed::keyed_reset),
        (c"keyedMaxCost", keyed::keyed_max_cost),
        (c"httpDecide", http_limiter::http_decide),
        (c"httpKey", http_limiter::http_key),
        // A bench floor (`bench/keyed.js`), not the package's API.
        (c"benchFloor", keyed::bench_floor),
    ];
    for (name, callback) in callbacks {
        // SAFETY: `env` and `exports` are the module's, valid during its initialization.
        unsafe { raw::export(env, exports, name, callback)? };
    }
    Ok(())
}
