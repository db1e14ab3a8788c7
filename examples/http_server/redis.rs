//! `--redis`: each limit shared through Redis, under the library's prefix for HTTP limits
//! (`sluicegate:http:<name>:`), so that Rust, Node and Python front ends share it by name.

use sluicegate::http::{ClientIp, RequestLimit};
use sluicegate::policy::Policy;

/// The limit `policy` describes on the Redis at `url`, built without waiting for Redis: the
/// server starts and listens while Redis is down (`--on-backend-error` says what then).
#[cfg(feature = "redis")]
pub async fn limit(
    url: &str,
    policy: &Policy,
    client_ip: &ClientIp,
) -> Result<RequestLimit, String> {
    RequestLimit::from_policy_on_redis(policy, client_ip, url, false)
        .await
        .map_err(|e| format!("--redis: {e}"))
}

/// Without the `redis` feature there is no shared backend to build.
#[cfg(not(feature = "redis"))]
pub async fn limit(
    url: &str,
    policy: &Policy,
    client_ip: &ClientIp,
) -> Result<RequestLimit, String> {
    let _ = (policy, client_ip);
    Err(format!(
        "--redis {url}: this build has no Redis support; build with --features redis (or --all-features)"
    ))
}
