//! Limits on what one request may carry, so that no request costs unbounded memory or time,
//! and the checks that enforce them.

use crate::proto::RateLimitRequest;

/// Most descriptors in one request.
pub const MAX_DESCRIPTORS: usize = 64;
/// Most entries in one descriptor.
pub const MAX_ENTRIES: usize = 32;
/// Longest domain, entry key or entry value, in bytes.
pub const MAX_TEXT_BYTES: usize = 1024;
/// Largest request message (gRPC) or `/json` body, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// Why a request cannot be used, as one sentence; `None` when it can.
pub fn problem(request: &RateLimitRequest) -> Option<String> {
    if request.domain.is_empty() {
        return Some("the request has an empty domain: name the config domain to decide in".into());
    }
    if request.domain.len() > MAX_TEXT_BYTES {
        return Some(format!(
            "the domain has {} bytes, more than the {MAX_TEXT_BYTES} allowed",
            request.domain.len()
        ));
    }
    if request.descriptors.is_empty() {
        return Some("the request has no descriptors: send at least one".into());
    }
    if request.descriptors.len() > MAX_DESCRIPTORS {
        return Some(format!(
            "the request has {} descriptors, more than the {MAX_DESCRIPTORS} allowed",
            request.descriptors.len()
        ));
    }
    for (i, descriptor) in request.descriptors.iter().enumerate() {
        if descriptor.entries.is_empty() {
            return Some(format!("descriptor {i} has no entries"));
        }
        if descriptor.entries.len() > MAX_ENTRIES {
            return Some(format!(
                "descriptor {i} has {} entries, more than the {MAX_ENTRIES} allowed",
                descriptor.entries.len()
            ));
        }
        for (j, entry) in descriptor.entries.iter().enumerate() {
            if entry.key.is_empty() {
                return Some(format!("descriptor {i} entry {j} has an empty key"));
            }
            let longest = entry.key.len().max(entry.value.len());
            if longest > MAX_TEXT_BYTES {
                return Some(format!(
                    "descriptor {i} entry {j} has a key or value of {longest} bytes, more than the {MAX_TEXT_BYTES} allowed"
                ));
            }
        }
        if let Some(hits) = descriptor.hits_addend {
            if hits > u64::from(u32::MAX) {
                return Some(format!(
                    "descriptor {i} has hits_addend {}, more than the {} allowed",
                    hits,
                    u32::MAX
                ));
            }
        }
    }
    None
}
