//! The rules suites (support/rules_suite.rs, support/quotas_suite.rs,
//! support/anchored_suite.rs) against the server deciding on Redis: a real `redis-server` per
//! test, on a free port, stopped by its PID.

// The workspace's one helper for real redis-servers, shared with the library's tests.
#[path = "../../tests/support/redis_server.rs"]
mod redis_server;
#[path = "support/service.rs"]
mod service;

use redis_server::RedisServer;
use service::*;
use std::ops::Deref;

/// A server on its own Redis; the server stops first (fields drop in order).
#[derive(Debug)]
struct Running {
    service: Service,
    _redis: RedisServer,
}

impl Deref for Running {
    type Target = Service;

    fn deref(&self) -> &Service {
        &self.service
    }
}

fn start_config(config: &str, flags: &[&str]) -> Running {
    let redis = RedisServer::start();
    let url = redis.url();
    let mut flags = flags.to_vec();
    flags.extend(["--redis", url.as_str()]);
    Running {
        service: Service::start(config, &flags),
        _redis: redis,
    }
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
