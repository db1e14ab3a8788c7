//! The rules suites (support/rules_suite.rs, support/quotas_suite.rs,
//! support/anchored_suite.rs) against the server deciding in process.

#[path = "support/service.rs"]
mod service;

use service::*;

/// A server in process.
type Running = Service;

fn start_config(config: &str, flags: &[&str]) -> Running {
    Service::start(config, flags)
}

include!("support/rules_suite.rs");

/// Several quotas in one `quota` string (support/quotas_suite.rs).
mod quotas {
    use super::*;
    include!("support/quotas_suite.rs");
}

/// The fixed window anchored at each value's first request (support/anchored_suite.rs).
mod anchored {
    use super::*;
    include!("support/anchored_suite.rs");
}
