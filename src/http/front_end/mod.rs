//! What a front end outside Rust's HTTP stack needs to decide requests with a
//! [`RequestLimiter`](super::RequestLimiter) (the Node and Python middlewares, or any embedder
//! that is not a tower service): a user of the [tower layer](super::RateLimitLayer) needs none
//! of it.
//!
//! - [`request_parts_from`]: the request as the library reads it, from its method, URL, raw
//!   headers and its [`Peer`](super::Peer) (from the socket, never from a framework's own
//!   proxy handling: the [trusted-proxy rule](super::ClientIp) is the only one), a peer
//!   without an IP address (a Unix socket, a test client's placeholder host) included;
//!   [`request_parts`] takes an IP peer alone. [`ClientIp::shared_key_warning`] is the warning
//!   to give once when every request of a Unix socket shares one key.
//!
//! [`ClientIp::shared_key_warning`]: super::ClientIp::shared_key_warning
//! - [`GivenKeys`] and [`GivenKey`]: the keys the front end's users' functions computed,
//!   handed in beside the request, one per limit.
//! - [`FrontEndOptions`]: the client-address options as a binding received them (text and
//!   numbers), read in one place so that every binding accepts the same spellings;
//!   [`parse_on_backend_error`] likewise, and [`parse_backend_error_mode`] for the whole
//!   `on_backend_error` option (`allow`, `deny` or `local`).
//! - [`in_process_backend`], [`in_process_backend_bounded`] and [`key_extractor`]: a
//!   [`Policy`](crate::policy::Policy)'s backend and key, for limits built one by one;
//!   `redis_backend` (feature `redis`) its Redis backend under the one prefix, with the
//!   fallback a [`BackendErrorMode`](super::BackendErrorMode) asks for, kept by the front end
//!   for its counters (`stats`, `is_available`).
//! - [`DecidedLimit`]: the headers for limits decided elsewhere (`sluicegate-server`), and
//!   [`reported_limit`], which of them the headers report.

mod options;

pub use super::foreign::{reported_limit, DecidedLimit};
pub use super::key::{GivenKey, GivenKeys};
#[cfg(feature = "redis")]
pub use super::policy::redis_backend;
pub use super::policy::{in_process_backend, in_process_backend_bounded, key_extractor};
pub use super::request::{request_parts, request_parts_from};
pub use options::{
    parse_backend_error_mode, parse_on_backend_error, FrontEndError, FrontEndOption,
    FrontEndOptions,
};
