//! Draft-8's form of the standard headers (`HeaderDraft::Draft8`), byte for byte as
//! express-rate-limit writes it, for the clients written against it:
//! `RateLimit-Policy: "ip"; q=5; w=60; pk=:MmMyNmI0NmI2OGZm:` (each limit, with the partition
//! key of the request's key on it) and `RateLimit: "ip"; r=4; t=60`.

use super::key::KeyBuf;
use super::report::{Described, Report, SF_INTEGER_MAX};
use http::header::HeaderValue;
use sha2::{Digest, Sha256};
use std::fmt::Write;

/// Draft-8's partition key of `key`, as express-rate-limit computes it: the first 12 hex
/// digits of the key's SHA-256, as text, in base64 (16 characters). It names the client's
/// partition of a quota without revealing the key.
pub(crate) fn partition_key(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    let mut hex = [0u8; 12];
    for (pair, byte) in hex.chunks_exact_mut(2).zip(digest.iter()) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 0x0f)];
    }
    let mut out = String::with_capacity(16);
    for group in hex.chunks_exact(3) {
        let bits = u32::from(group[0]) << 16 | u32::from(group[1]) << 8 | u32::from(group[2]);
        for shift in [18, 12, 6, 0] {
            out.push(char::from(BASE64[((bits >> shift) & 0x3f) as usize]));
        }
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `RateLimit-Policy` for a request whose key on limit `i` is `keys[i]`: every limit's
/// `"name"; q=Q; w=W; pk=:K:` (`w` left out for a period that is not whole seconds, `pk` for
/// a limit with no key here, as on a refusal before the keys were found).
pub(crate) fn policy(limits: &impl Described, keys: &[KeyBuf]) -> Option<HeaderValue> {
    let mut out = String::new();
    limits.each_limit(&mut |i, name, quota| {
        if !out.is_empty() {
            out.push_str(", ");
        }
        let _ = write!(out, "{name}; q={}", quota.limit());
        let period = quota.period();
        if period.subsec_nanos() == 0 && period.as_secs() > 0 {
            let _ = write!(out, "; w={}", period.as_secs().min(SF_INTEGER_MAX));
        }
        if let Some(key) = keys.get(i) {
            let _ = write!(out, "; pk=:{}:", partition_key(key.as_str()));
        }
    });
    HeaderValue::from_str(&out).ok()
}

/// `RateLimit` reporting `report` on the limit named `name` (a Structured Field String).
pub(crate) fn ratelimit(name: &str, report: &Report) -> Option<HeaderValue> {
    let text = format!("{name}; r={}; t={}", report.remaining, report.reset);
    HeaderValue::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_keys_are_express_rate_limits() {
        // Its own tests' value for the key "foo", and two computed by Node's crypto:
        // Buffer.from(createHash('sha256').update(k).digest('hex').slice(0, 12)).toString('base64')
        assert_eq!(partition_key("foo"), "MmMyNmI0NmI2OGZm");
        assert_eq!(partition_key(""), "ZTNiMGM0NDI5OGZj");
        assert_eq!(partition_key("::1"), "ZWZmOGU3Y2E1MDY2");
    }

    #[test]
    fn each_limit_carries_its_own_keys_partition() {
        use crate::http::{Deciding, HeaderDraft, HeaderKey, RateLimitLayer, RequestLimit};
        use crate::http::{Verdict, RATELIMIT, RATELIMIT_POLICY};
        use crate::{KeyedLimiter, Quota};
        let table = |quota| KeyedLimiter::<String>::new(quota).unwrap();
        let limiter = RateLimitLayer::builder()
            .limit(
                RequestLimit::new("user", table(Quota::per_minute(5)))
                    .key(HeaderKey::parse("x-user").unwrap()),
            )
            .limit(
                RequestLimit::new("fast", table("10/500ms".parse().unwrap()))
                    .key(HeaderKey::parse("x-api-key").unwrap()),
            )
            .headers_draft(HeaderDraft::Draft8)
            .limiter()
            .unwrap();
        let request = http::Request::get("/")
            .header("x-user", "foo")
            .header("x-api-key", "::1")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        let Deciding::Now(Verdict::Pass { headers, .. }) = limiter.decide(&parts) else {
            panic!("in process, admitted")
        };
        let header = |name| {
            headers
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_str().unwrap().to_owned())
        };
        assert_eq!(
            header(RATELIMIT_POLICY).as_deref(),
            Some(
                r#""user"; q=5; w=60; pk=:MmMyNmI0NmI2OGZm:, "fast"; q=10; pk=:ZWZmOGU3Y2E1MDY2:"#
            )
        );
        assert_eq!(header(RATELIMIT).as_deref(), Some(r#""user"; r=4; t=12"#));
    }
}
