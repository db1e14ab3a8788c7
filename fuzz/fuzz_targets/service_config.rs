//! The service's YAML config (envoyproxy/ratelimit's, with sluicegate's fields): a file an
//! operator writes, read at start and on every change. Either a config that can be shown
//! and matched, or problems each naming the file and saying what is wrong.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluicegate_server::config::from_texts;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match from_texts(&[("fuzz.yaml".into(), text.into())]) {
        Ok(config) => {
            let _ = config.to_string();
            for rule in &config.rules {
                let _ = config.find(&rule.domain, [("key", "value")]);
            }
        }
        Err(error) => {
            assert!(!error.problems.is_empty());
            for problem in &error.problems {
                assert!(problem.starts_with("fuzz.yaml:"), "{problem}");
                assert!(problem.len() > "fuzz.yaml: ".len(), "{problem}");
            }
        }
    }
});
