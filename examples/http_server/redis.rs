//! `--redis`: the one place the example builds shared backends.

use sluicegate::backend::Backend;
use sluicegate::policy::Policy;
use std::sync::Arc;

/// A backend for `policy` shared through the Redis server at `url`, under the limit's name.
///
/// It is built lazily: the server starts and listens while Redis is down (decisions fail,
/// and `--on-backend-error` says what then, until a background probe finds Redis answering).
#[cfg(feature = "redis")]
pub async fn backend(url: &str, policy: &Policy) -> Result<Arc<dyn Backend<str>>, String> {
    use sluicegate::algorithm::{
        FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
    };
    use sluicegate::policy::AlgorithmKind;
    use sluicegate::redis::{RedisAlgorithm, RedisLimiter};

    async fn build<A: RedisAlgorithm>(
        url: &str,
        policy: &Policy,
    ) -> Result<Arc<dyn Backend<str>>, String> {
        let limiter = RedisLimiter::<A>::builder(policy.quota, url)
            .name(policy.name.clone())
            .prefix(format!("sluicegate:http_server:{}:", policy.name))
            .lazy(true)
            .connect()
            .await
            .map_err(|e| format!("--redis {url}, limit {:?}: {e}", policy.name))?;
        Ok(Arc::new(limiter))
    }
    match policy.algorithm {
        AlgorithmKind::Gcra => build::<Gcra>(url, policy).await,
        AlgorithmKind::TokenBucket => build::<TokenBucket>(url, policy).await,
        AlgorithmKind::LeakyBucket => build::<LeakyBucket>(url, policy).await,
        AlgorithmKind::FixedWindow => build::<FixedWindow>(url, policy).await,
        AlgorithmKind::SlidingWindow => build::<SlidingWindow>(url, policy).await,
        AlgorithmKind::SlidingLog => build::<SlidingLog>(url, policy).await,
    }
}

/// Without the `redis` feature there is no shared backend to build.
#[cfg(not(feature = "redis"))]
pub async fn backend(url: &str, policy: &Policy) -> Result<Arc<dyn Backend<str>>, String> {
    let _ = policy;
    Err(format!(
        "--redis {url}: this build has no Redis support; build with --features redis (or --all-features)"
    ))
}
