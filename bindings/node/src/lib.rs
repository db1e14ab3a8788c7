//! The native half of the `sluicegate` npm package: the Rust engine as a Node-API module
//! (napi-rs). The JavaScript half (`lib/`) checks arguments, turns options objects into
//! these constructors' arguments and numbers into decision objects; nothing here or there
//! implements an algorithm again.
//!
//! Every in-process check is one synchronous call that reads the key into a stack buffer
//! (no allocation for keys up to [`key::INLINE`] bytes), decides, and writes the decision's
//! numbers into a `Float64Array` the JavaScript side owns ([`out::Out`]): returning a
//! JavaScript object from Rust costs several property stores through Node-API, which
//! `bench/return_paths.js` measured as the slower way (BENCHMARKS.md, "Node.js").

mod clock;
mod errors;
mod group;
mod key;
mod keyed;
mod limiter;
mod op;
mod options;
mod out;

pub use clock::NativeClock;
pub use group::NativeGroup;
pub use keyed::NativeKeyed;
pub use limiter::NativeLimiter;
