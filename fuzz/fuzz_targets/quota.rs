//! Quota strings (`"100/minute burst 20"`, several with `;`): what a user's config, a
//! binding's option or the service's `quota:` field hands `Quota::from_str` and
//! `Quota::parse_many`. Either a quota, or an error whose message is a sentence; a quota
//! parsed prints as a string that parses back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluicegate::Quota;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match text.parse::<Quota>() {
        Ok(quota) => {
            let again: Quota = quota
                .to_string()
                .parse()
                .expect("a quota's own text parses");
            assert_eq!(again, quota, "{text:?} printed as {quota}");
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
    match Quota::parse_many(text) {
        Ok(quotas) => assert!(!quotas.is_empty()),
        Err(error) => assert!(!error.to_string().is_empty()),
    }
});
