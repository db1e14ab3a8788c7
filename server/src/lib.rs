//! `sluicegate-server`: the sluicegate engine behind Envoy's rate limit service API
//! (`envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`, gRPC) and a JSON form of
//! the same call over HTTP.
//!
//! The binary is a thin `main` over this library, which the integration tests also use for
//! the generated protobuf types.
#![warn(missing_docs, rust_2018_idioms)]

pub mod cli;
pub mod codec;
pub mod config;
pub mod engine;
pub mod grpc;
pub mod http;
pub mod input;
pub mod json;
pub mod limits;
pub mod net;
pub mod proto;
pub mod reload;
pub mod response;
pub mod server;
pub mod status;
pub mod telemetry;
