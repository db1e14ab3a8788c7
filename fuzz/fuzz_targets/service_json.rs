//! `POST /json` bodies: the protobuf JSON mapping of a `RateLimitRequest`, from any HTTP
//! client. Either a request (then checked and decided, as the service does), or a sentence
//! naming `RateLimitRequest` for the 400.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluicegate_server::json::parse_request;

fuzz_target!(|data: &[u8]| {
    match parse_request(data) {
        Ok(request) => sluicegate_fuzz::decide(&request),
        Err(why) => assert!(why.contains("RateLimitRequest"), "{why}"),
    }
});
