//! What a front end outside Rust's HTTP stack needs to decide requests with a
//! [`RequestLimiter`](super::RequestLimiter) (the Node and Python middlewares, or any embedder
//! that is not a tower service): a user of the [tower layer](super::RateLimitLayer) needs none
//! of it.
//!
//! - [`request_parts`]: the request as the library reads it, from its method, URL, raw headers
//!   and the peer's address (from the socket, never from a framework's own proxy handling:
//!   the [trusted-proxy rule](super::ClientIp) is the only one).
//! - [`GivenKeys`] and [`GivenKey`]: the keys the front end's users' functions computed,
//!   handed in beside the request, one per limit.
//! - [`FrontEndOptions`]: the client-address options as a binding received them (text and
//!   numbers), read in one place so that every binding accepts the same spellings;
//!   [`parse_on_backend_error`] likewise.
//! - [`in_process_backend`], [`in_process_backend_bounded`] and [`key_extractor`]: a
//!   [`Policy`](crate::policy::Policy)'s backend and key, for limits built one by one
//!   (`RequestLimit::from_policy_on_redis_connected` connects a Redis one first).
//! - [`DecidedLimit`]: the headers for limits decided elsewhere (`sluicegate-server`), and
//!   [`reported_limit`], which of them the headers report.

mod options;

pub use super::foreign::{reported_limit, DecidedLimit};
pub use super::key::{GivenKey, GivenKeys};
pub use super::policy::{in_process_backend, in_process_backend_bounded, key_extractor};
pub use super::request::request_parts;
pub use super::tiers::GivenTiers;
pub use options::{parse_on_backend_error, FrontEndError, FrontEndOption, FrontEndOptions};
