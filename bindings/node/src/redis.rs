//! [`NativeRedis`]: the engine's `AnyRedisLimiter` (limits shared through Redis, standalone
//! or Cluster), each call a Promise; and [`NativeRedisGroup`], several of them decided
//! all-or-nothing by the engine's protocol, for `throttle`'s `redis` option.
//!
//! A call resolves with a [`RedisAnswer`]: a decision, or the error's kind and sentence, from
//! which the JavaScript side makes the decision object or throws (a `RangeError` for a cost
//! that can never fit, an `Error` with a `code` otherwise).

use crate::clock::NativeClock;
use crate::op::from_code;
use crate::options::{algorithm, quota};
use crate::out::millis;
use crate::redis_target::RedisTarget;
use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Error, Status};
use napi_derive::napi;
use sluicegate::backend::{all_of, Backend, BackendError, Member};
use sluicegate::clock::ManualClock;
use sluicegate::redis::{AnyRedisLimiter, AnyTime, RedisError};
use sluicegate::Decision;
use std::sync::Mutex;
use std::time::Duration;

/// A Redis limiter on Redis's clock, or on a [`NativeClock`] (client time, for tests).
type RedisLimit = AnyRedisLimiter<AnyTime>;

/// How to reach Redis, as the JavaScript options give it.
#[napi(object)]
pub struct RedisOptions {
    pub quota: String,
    pub algorithm: String,
    pub redis: RedisTarget,
    pub prefix: String,
    pub cluster: bool,
    /// Per call, in ms.
    pub timeout: f64,
    /// Per connection attempt, in ms.
    pub connect_timeout: f64,
}

/// A decision, or why there is none.
#[napi(object)]
pub struct RedisAnswer {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    pub retry_after: Option<f64>,
    pub reset_after: f64,
    pub wait: f64,
    /// The error's kind (`capacity`, `timeout`, `unavailable`, `script`, `wrong_type`,
    /// `foreign`, `quota`, `config`, `closed`), when the call failed.
    pub error: Option<String>,
    /// The error's sentence.
    pub message: Option<String>,
}

impl RedisAnswer {
    fn decision(d: &Decision) -> Self {
        let n = d.numbers();
        RedisAnswer {
            allowed: d.is_allowed(),
            limit: d.limit(),
            remaining: n.remaining,
            retry_after: d.retry_hint().map(millis),
            reset_after: millis(n.reset_after),
            wait: millis(n.wait),
            error: None,
            message: None,
        }
    }

    fn failure(kind: &str, message: String) -> Self {
        RedisAnswer {
            allowed: false,
            limit: 0,
            remaining: 0,
            retry_after: None,
            reset_after: 0.0,
            wait: 0.0,
            error: Some(kind.to_owned()),
            message: Some(message),
        }
    }

    fn from_redis(result: Result<Decision, RedisError>) -> Self {
        match result {
            Ok(d) => Self::decision(&d),
            Err(e) => Self::failure(e.label(), e.to_string()),
        }
    }

    pub(crate) fn from_backend(result: Result<Decision, BackendError>) -> Self {
        match result {
            Ok(d) => Self::decision(&d),
            Err(e) => Self::failure(e.label(), e.to_string()),
        }
    }
}

fn duration(ms: f64, what: &str) -> napi::Result<Duration> {
    Duration::try_from_secs_f64(ms / 1000.0)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                format!("`{what}` must be a positive number of milliseconds, got {ms}"),
            )
        })
}

/// Connects one limiter as `options` say.
async fn connect(options: RedisOptions, clock: Option<ManualClock>) -> napi::Result<RedisLimit> {
    let quota = quota(&options.quota)?;
    let kind = algorithm(&options.algorithm)?;
    let builder = AnyRedisLimiter::builder(quota, kind, &options.redis.url)
        .prefix(options.prefix)
        .cluster(options.cluster)
        .timeout(duration(options.timeout, "timeout")?)
        .connect_timeout(duration(options.connect_timeout, "connectTimeout")?);
    let builder = options.redis.configure(builder)?;
    let limiter = builder.clock(AnyTime::from(clock)).connect().await;
    limiter.map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
}

/// One limit on Redis.
#[napi]
pub struct NativeRedis {
    /// `None` once closed.
    limiter: Mutex<Option<RedisLimit>>,
}

impl NativeRedis {
    fn limiter(&self) -> Option<RedisLimit> {
        self.limiter.lock().map(|l| l.clone()).unwrap_or(None)
    }
}

/// Connects a Redis limiter; the Promise rejects with an `Error` saying why when Redis
/// cannot be reached or the options are wrong.
#[napi]
pub fn connect_redis<'env>(
    env: &'env Env,
    options: RedisOptions,
    clock: Option<&NativeClock>,
) -> napi::Result<PromiseRaw<'env, NativeRedis>> {
    let clock = clock.map(|c| c.clock.clone());
    env.spawn_future(async move {
        let limiter = connect(options, clock).await?;
        Ok(NativeRedis {
            limiter: Mutex::new(Some(limiter)),
        })
    })
}

#[napi]
impl NativeRedis {
    /// Decides `op` (0 check, 1 peek, 2 hit) for `cost` on `key`, on Redis.
    #[napi]
    pub fn decide<'env>(
        &self,
        env: &'env Env,
        key: String,
        op: u32,
        cost: u32,
    ) -> napi::Result<PromiseRaw<'env, RedisAnswer>> {
        let limiter = self.limiter();
        env.spawn_future(async move {
            Ok(match limiter {
                None => RedisAnswer::failure("closed", "the RedisLimiter is closed".into()),
                Some(l) => RedisAnswer::from_redis(l.decide_op(&key, cost, from_code(op)).await),
            })
        })
    }

    /// Forgets `key` on Redis (the engine's `reset`); resolves to whether a state was held.
    #[napi]
    pub fn reset<'env>(&self, env: &'env Env, key: String) -> napi::Result<PromiseRaw<'env, bool>> {
        let limiter = self.limiter();
        env.spawn_future(async move {
            match limiter {
                None => Err(napi::Error::from_reason("the RedisLimiter is closed")),
                Some(l) => Backend::reset(&l, &key)
                    .await
                    .map_err(|e| napi::Error::from_reason(e.to_string())),
            }
        })
    }

    /// The largest cost one check can be allowed.
    #[napi(getter)]
    pub fn max_cost(&self) -> u32 {
        self.limiter().map_or(0, |l| l.max_cost())
    }

    /// Whether Redis is answering, as the limiter's health check last saw.
    #[napi(getter)]
    pub fn available(&self) -> bool {
        self.limiter().is_some_and(|l| l.is_available())
    }

    /// Lets go of the connection: later calls answer "closed".
    #[napi]
    pub fn close(&self) {
        if let Ok(mut limiter) = self.limiter.lock() {
            *limiter = None;
        }
    }
}

/// Several limits on Redis, decided together.
#[napi]
pub struct NativeRedisGroup {
    limits: Mutex<Option<Vec<RedisLimit>>>,
}

/// Connects one limiter per entry of `limits`; see [`NativeRedisGroup::decide`].
#[napi]
pub fn connect_redis_group<'env>(
    env: &'env Env,
    limits: Vec<RedisOptions>,
) -> napi::Result<PromiseRaw<'env, NativeRedisGroup>> {
    env.spawn_future(async move {
        let mut connected = Vec::with_capacity(limits.len());
        for options in limits {
            connected.push(connect(options, None).await?);
        }
        Ok(NativeRedisGroup {
            limits: Mutex::new(Some(connected)),
        })
    })
}

#[napi]
impl NativeRedisGroup {
    /// Decides `op` for a request of `cost` against every limit, `keys[i]` being its key on
    /// limit `i`: allowed only if all allow, and then all consume (the engine's
    /// all-or-nothing protocol: one script when every key is on one Redis node).
    #[napi]
    pub fn decide<'env>(
        &self,
        env: &'env Env,
        keys: Vec<String>,
        op: u32,
        cost: u32,
    ) -> napi::Result<PromiseRaw<'env, RedisAnswer>> {
        let limits = self.limits.lock().map(|l| l.clone()).unwrap_or(None);
        env.spawn_future(async move {
            let Some(limits) = limits else {
                return Ok(RedisAnswer::failure(
                    "closed",
                    "the throttle's Redis limits are closed".into(),
                ));
            };
            if keys.len() != limits.len() {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!(
                        "expected {} keys, one per limit, got {}",
                        limits.len(),
                        keys.len()
                    ),
                ));
            }
            let members: Vec<Member<'_, str>> = limits
                .iter()
                .zip(&keys)
                .map(|(limit, key)| Member::new(limit as &dyn Backend<str>, key.as_str()))
                .collect();
            Ok(RedisAnswer::from_backend(
                all_of(&members, cost, from_code(op)).await,
            ))
        })
    }

    /// Lets go of the connections.
    #[napi]
    pub fn close(&self) {
        if let Ok(mut limits) = self.limits.lock() {
            *limits = None;
        }
    }
}
