//! HTTP rate limiting (feature `http`): a tower layer with the standard `RateLimit` headers,
//! client keys that cannot be spoofed, and (with feature `tokio`) a client-side layer that
//! waits instead of being refused.
//!
//! ```
//! use sluicegate::http::{ClientIp, RateLimitLayer, RequestLimit};
//! use sluicegate::{KeyedLimiter, Quota};
//!
//! let per_client = RequestLimit::new("ip", KeyedLimiter::<String>::new(Quota::per_second(5))?)
//!     .key(ClientIp::new().trust("10.0.0.0/8".parse()?));
//! let layer = RateLimitLayer::new(per_client)?;
//! // axum: Router::new().route(..).layer(layer)
//! # let _ = layer;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With axum (the peer address comes from axum's `ConnectInfo`):
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use axum::{extract::ConnectInfo, routing::get, Router};
//! use sluicegate::http::{ClientIp, HeaderKey, RateLimitLayer, RequestLimit};
//! use sluicegate::{KeyedLimiter, Quota};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // The client's address: the peer, or what our load balancers (10.0.0.0/8) forwarded.
//!     let client_ip = ClientIp::new()
//!         .peer_from(|info: &ConnectInfo<SocketAddr>| info.0)
//!         .trust("10.0.0.0/8".parse()?);
//!     let rate_limit = RateLimitLayer::builder()
//!         .limit(
//!             RequestLimit::new("ip", KeyedLimiter::<String>::new(Quota::per_second(5))?)
//!                 .key(client_ip),
//!         )
//!         .limit(
//!             RequestLimit::new("token", KeyedLimiter::<String>::new("100/minute burst 20".parse()?)?)
//!                 .key(HeaderKey::parse("x-api-key")?),
//!         )
//!         .build()?;
//!     let app = Router::new()
//!         .route("/", get(|| async { "hello" }))
//!         .layer(rate_limit); // a CorsLayer would go after this line: outside
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//!     axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await?;
//!     Ok(())
//! }
//! ```
//!
//! # Where a request is decided
//!
//! In one place, [`RequestLimiter::decide`], for every HTTP front end: the tower
//! [`RateLimitLayer`] (a thin adapter), the `http_server` example, and the Node and Python
//! middlewares, which call it through their bindings; `sluicegate-server` decides Envoy's
//! descriptors itself but writes its headers with the same writer
//! ([`RateLimitHeaders::for_decisions`]). Given what a front end knows of a request (method,
//! URI, headers and the peer's address, as [`http::request::Parts`]), it extracts each
//! limit's key and cost, decides every limit at once by the one all-or-nothing protocol, and
//! returns a [`Verdict`]: pass the request on with the [`RateLimitHeaders`] to add (after a
//! leaky bucket's `wait`), or answer it with a ready response (`429`, `400`, `413`, `503`).
//!
//! A front end outside Rust's HTTP stack builds the parts with
//! [`front_end::request_parts`] (the peer address from its socket, never from its framework's
//! own proxy handling: the [trusted-proxy rule](ClientIp) here is the only one), hands the
//! keys its users' functions compute in as [`front_end::GivenKeys`], reads its client-address
//! options with [`front_end::FrontEndOptions`] (so every binding accepts the same spellings),
//! and builds its limits from [`Policy`](crate::policy::Policy) values with
//! [`RequestLimit::from_policy`] or, shared through Redis under [`redis_prefix`],
//! `RequestLimit::from_policy_on_redis` (or `from_policy_on_redis_connected`, which connects
//! first, where the limits are built as requests arrive): the [`front_end`] module holds what
//! only such front ends need.
//!
//! A front end that counts only some responses (express-rate-limit's `skipFailedRequests`,
//! `skipSuccessfulRequests`) decides with [`RequestLimiter::decide_reserving`] instead: the
//! same verdict, and for a passed request a [`Refund`] that gives its cost back after the
//! response, by the backends' own undo (exact, or nothing; see [`Refund`]).
//!
//! # The layer
//!
//! [`RateLimitLayer`] holds named [`RequestLimit`]s: each a [backend](crate::backend::Backend)
//! (in-process or shared), a [key](KeyExtractor) and a [cost](Cost). A request is admitted
//! only if every limit admits it, and a denial consumes nothing anywhere.
//!
//! # Keys
//!
//! [`Global`], [`ClientIp`] (the peer, or the client behind [trusted
//! proxies](TrustedProxies), IPv6 grouped by /64), [`HeaderKey`] (an API key, length-capped),
//! a closure ([`key_fn`]), and fallbacks ([`KeyExtractor::or`]). A request without its key
//! gets `400` with a message saying what is missing.
//!
//! # Headers
//!
//! Every response carries `RateLimit-Policy` (each limit's `q` and `w`) and `RateLimit` (`r`
//! and `t` of the limit with the least remaining), as draft-ietf-httpapi-ratelimit-headers-10
//! defines them; a `429` also carries `Retry-After` in whole seconds rounded up, equal to
//! `RateLimit`'s `t`. See [`RATELIMIT`] for the details; the legacy `X-RateLimit-*` trio is
//! a [switch](RateLimitBuilder::legacy_headers) away.
//!
//! # CORS
//!
//! Put tower-http's `CorsLayer` *outside* this layer (`.layer(rate_limit).layer(cors)` in
//! axum, where the last layer added is the outermost): it answers preflights before they are
//! counted, and it adds its headers to this layer's `429`s, which browsers would otherwise
//! hide from scripts. Add `ratelimit`, `ratelimit-policy` and `retry-after` to its exposed
//! headers so scripts can read them. Without a `CorsLayer`,
//! [`exempt_preflight`](RateLimitBuilder::exempt_preflight) lets preflights through.

mod builder;
#[cfg(feature = "tokio")]
pub mod client;
mod decide;
mod draft8;
mod error;
mod foreign;
pub mod front_end;
mod future;
mod headers;
mod ip;
mod key;
mod layer;
mod limit;
mod limiter;
mod on_backend_error;
mod peer;
mod policy;
mod refund;
mod rejection;
mod report;
mod request;
mod reserve;
mod respond;
mod service;
mod settings;
pub mod spec;
mod tiers;
mod verdict;

pub use builder::RateLimitBuilder;
pub use error::{BuildError, Naming, Problem};
pub use future::ResponseFuture;
pub use headers::{
    HeaderDraft, RateLimitHeaders, RATELIMIT, RATELIMIT_LIMIT, RATELIMIT_POLICY,
    RATELIMIT_REMAINING, RATELIMIT_RESET, X_RATELIMIT_LIMIT, X_RATELIMIT_REMAINING,
    X_RATELIMIT_RESET,
};
pub use ip::{Cidr, ClientAddr, TrustedProxies};
pub use key::{
    key_fn, ClientIp, ForwardedHeaders, Global, HeaderKey, KeyBuf, KeyError, KeyErrorKind,
    KeyExtractor, KeyFn, Or,
};
pub use layer::RateLimitLayer;
pub use limit::{Cost, RequestLimit};
pub use limiter::RequestLimiter;
pub use on_backend_error::{BackendErrorMode, OnBackendError};
pub use peer::{Peer, MAX_PEER_NAME, UNIX_PEER_KEY, UNIX_PROXY_ENTRY};
pub use policy::{redis_prefix, DEFAULT_MAX_KEYS};
pub use refund::Refund;
pub use rejection::Rejection;
pub use report::Report;
pub use reserve::{PendingReserved, Reserved, Reserving};
pub use respond::{JsonDetail, PlainText, ProblemJson, Responder};
pub use service::RateLimitService;
pub use tiers::{TierMaker, TierSource, Tiers};
pub use verdict::{Deciding, PendingVerdict, Verdict};
