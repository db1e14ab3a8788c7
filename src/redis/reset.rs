//! [`RedisLimiter::reset`]: forgetting a key on Redis, and everything this process remembers
//! of it (the deny cache, the local fallback's state).

use super::limiter::RedisLimiter;
use super::scripts::Script;
use super::time::TimeSource;
use super::{fallback::Standby, RedisError};
use crate::state::Algorithm;
use redis::Value;
use std::sync::OnceLock;

/// One `DEL` of the key's state, as a script so that it takes the link's one call path (its
/// timeout, its health, the key's node on a cluster).
const CODE: &str = "return redis.call('DEL', KEYS[1])";

fn script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| Script {
        code: CODE,
        sha: redis::Script::new(CODE).get_hash().to_owned(),
    })
}

/// # Forgetting a key
impl<A: Algorithm, C: TimeSource> RedisLimiter<A, C> {
    /// Forgets `key` for every process sharing this limit: its next request is decided as a
    /// new key's. Returns whether Redis held a state for it. The deny cache and the local
    /// fallback forget it too (in this process; another process's deny cache keeps a denial
    /// it cached until that denial's countdown ends).
    pub async fn reset(&self, key: &str) -> Result<bool, RedisError> {
        let inner = &*self.inner;
        let forget_locally = || {
            if let Some(cache) = &inner.deny_cache {
                cache.forget(key);
            }
            if let Standby::Local(local) = &inner.standby {
                local.reset(key);
            }
        };
        forget_locally();
        let name = inner.keys.name(key);
        let deleted = inner.sender.link.eval(script(), &[name], &[]).await?;
        // A check that cached a denial while the delete was in flight is forgotten too.
        forget_locally();
        Ok(matches!(deleted, Value::Int(n) if n > 0))
    }
}
