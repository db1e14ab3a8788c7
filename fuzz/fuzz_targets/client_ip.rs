//! `X-Forwarded-For` and `Forwarded` headers, which any client can send: the request as a
//! front end hands it to the library (`request_parts`), its client found through trusted
//! proxies (`ClientIp`) and written as the limit's key. The input's first byte picks the
//! settings (which header, which proxies are trusted, the prefixes); the rest is header
//! lines, `name: value`, one per line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluicegate::http::front_end::request_parts;
use sluicegate::http::{ClientIp, ForwardedHeaders, KeyBuf, KeyExtractor, TrustedProxies};
use std::net::SocketAddr;

fuzz_target!(|data: &[u8]| {
    let Some((&settings, rest)) = data.split_first() else {
        return;
    };
    let headers: Vec<(&[u8], &[u8])> = rest
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let colon = line.iter().position(|&b| b == b':')?;
            let (name, value) = line.split_at(colon);
            Some((name, value[1..].trim_ascii_start()))
        })
        .collect();
    let peer: SocketAddr = if settings & 1 == 0 {
        "10.1.2.3:4000".parse().unwrap()
    } else {
        "[2001:db8::7]:4000".parse().unwrap()
    };
    let parts = request_parts("GET", "/", headers, Some(peer));
    let trusted = match (settings >> 1) & 3 {
        0 => TrustedProxies::none(),
        1 => "10.0.0.0/8".parse().unwrap(),
        2 => "10.0.0.0/8, 2001:db8::/32, 192.168.0.0/16".parse().unwrap(),
        _ => "0.0.0.0/0, ::/0".parse().unwrap(),
    };
    let headers = match (settings >> 3) & 3 {
        0 => ForwardedHeaders::XForwardedFor,
        1 => ForwardedHeaders::Forwarded,
        _ => ForwardedHeaders::Both,
    };
    let client_ip = ClientIp::new()
        .trust(trusted)
        .forwarded_headers(headers)
        .ipv6_prefix(if settings & 0x20 == 0 { 64 } else { 128 })
        .unwrap();
    let mut key = KeyBuf::new();
    match client_ip.extract(&parts, &mut key) {
        Ok(()) => assert!(!key.is_empty()),
        Err(error) => assert!(!error.to_string().is_empty()),
    }
});
