//! The gRPC code for a message over `--max-message-bytes`: tonic refuses it with
//! `OUT_OF_RANGE` before the service sees it; gRPC's own convention for a message over the
//! limit (grpc-go, grpc-java, C-core) is `RESOURCE_EXHAUSTED`, which this layer answers
//! instead, and counts. The service itself never answers `OUT_OF_RANGE`, so the code alone
//! says where it came from.

use crate::telemetry::{self, Api, BadInput};
use http::{HeaderValue, Response};
use tonic::body::Body;

/// `grpc-status` of `OUT_OF_RANGE` and `RESOURCE_EXHAUSTED`.
const OUT_OF_RANGE: &str = "11";
const RESOURCE_EXHAUSTED: &str = "8";

/// The layer, for `Server::builder().layer(..)`.
pub type OversizeLayer = tower::util::MapResponseLayer<fn(Response<Body>) -> Response<Body>>;

/// A layer turning tonic's size refusals into `RESOURCE_EXHAUSTED`.
pub fn layer() -> OversizeLayer {
    tower::util::MapResponseLayer::new(resource_exhausted as fn(Response<Body>) -> Response<Body>)
}

fn resource_exhausted(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    if headers.get("grpc-status").map(HeaderValue::as_bytes) != Some(OUT_OF_RANGE.as_bytes()) {
        return response;
    }
    // tonic's sentence: "Error, decoded message length too large: found N bytes, the limit
    // is: M bytes" (printable ASCII, no '%', so valid as grpc-message as it is).
    let why = headers
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("the message is too large")
        .to_owned();
    headers.insert("grpc-status", HeaderValue::from_static(RESOURCE_EXHAUSTED));
    telemetry::refused(Api::Grpc, BadInput::TooLarge, &why);
    response
}
