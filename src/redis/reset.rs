//! [`RedisLimiter::reset`]: forgetting a key on Redis, and everything this process remembers
//! of it (the deny cache, the local fallback's state).

use super::limiter::RedisLimiter;
use super::link::Arg;
use super::scripts::Script;
use super::time::TimeSource;
use super::RedisError;
use crate::state::Algorithm;
use redis::Value;
use std::sync::OnceLock;

/// One `DEL` of the key's state and one `PUBLISH` of the key on the limit's reset channel
/// (for other processes' deny caches: see `reset_watch`), as a script so that it takes the
/// link's one call path (its timeout, its health, the key's node on a cluster). A user
/// whose ACL allows no channel still resets: the `PUBLISH` is a `pcall`.
const CODE: &str = "local deleted = redis.call('DEL', KEYS[1]) \
                    redis.pcall('PUBLISH', ARGV[1], ARGV[2]) \
                    return deleted";

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
    /// fallback forget it too, here at once and in other processes when they hear the reset
    /// (Redis pub/sub; see [`RedisBuilder::reset_watch`](super::RedisBuilder::reset_watch)).
    pub async fn reset(&self, key: &str) -> Result<bool, RedisError> {
        let inner = &*self.inner;
        inner.forget_locally(Some(key));
        let name = inner.keys.name(key);
        let channel = inner.keys.reset_channel();
        let args = [Arg::Bytes(channel.as_bytes()), Arg::Bytes(key.as_bytes())];
        let deleted = inner.sender.link.eval(script(), &[name], &args).await?;
        // A check that cached a denial while the delete was in flight is forgotten too.
        inner.forget_locally(Some(key));
        Ok(matches!(deleted, Value::Int(n) if n > 0))
    }
}
