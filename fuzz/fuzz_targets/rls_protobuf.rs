//! Envoy's `ShouldRateLimit` requests as protobuf bytes, from any gRPC client: decoded as the
//! service's codec does (prost), then checked and decided.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use sluicegate_server::proto::RateLimitRequest;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = RateLimitRequest::decode(data) {
        sluicegate_fuzz::decide(&request);
    }
});
