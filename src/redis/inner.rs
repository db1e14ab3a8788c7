//! [`Inner`]: what the clones of a [`RedisLimiter`](super::RedisLimiter) share, and the path
//! of one decision: capacity, deny cache, script, fallback.

use super::algorithm::script_code;
use super::batch::Sender;
use super::deny_cache::DenyCache;
use super::error::{classify, RedisError};
use super::fallback::Standby;
use super::group::{Group, Member};
use super::keys::KeySpace;
use super::link::failing_key;
use super::params::Params;
use super::reply::{self, ScriptAnswer};
use super::reset_watch::ResetWatch;
use super::telemetry::{Stopwatch, Telemetry};
use super::time::TimeSource;
use super::undo::Undo;
use crate::backend::{Op, Receipt, Reservation};
use crate::clock::Clock;
use crate::decision::Decision;
use crate::quota::Quota;
use crate::state::Algorithm;
use redis::Value;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Everything the clones of a limiter share.
pub(crate) struct Inner<A: Algorithm, C: TimeSource> {
    pub(crate) quota: Quota,
    pub(crate) params: Params,
    pub(crate) max_cost: u32,
    pub(crate) keys: KeySpace,
    pub(crate) time: C,
    pub(crate) local: C::Local,
    pub(crate) sender: Arc<Sender>,
    pub(crate) deny_cache: Option<DenyCache>,
    pub(crate) standby: Standby<A, C::Local>,
    pub(crate) name: String,
    pub(crate) telemetry: Telemetry,
    /// Other processes' resets, heard while this limiter lives (set once it is shared).
    pub(crate) reset_watch: OnceLock<ResetWatch>,
}

impl<A: Algorithm, C: TimeSource> Inner<A, C> {
    /// Refuses what no wait can admit.
    pub(crate) fn fits(&self, cost: u32, op: Op) -> Result<(), RedisError> {
        Ok(op.within_capacity(cost, self.max_cost)?)
    }

    /// The instant to send (`None`: Redis reads `TIME`) and the same instant on the deny
    /// cache's timeline, in microseconds.
    pub(crate) fn instant(&self) -> (Option<u64>, u64) {
        match self.time.decision_micros() {
            Some(us) => (Some(us), us),
            None => (None, self.local.now() / 1_000),
        }
    }

    /// Forgets what this process remembers of `key` (its cached denial, its local fallback
    /// state) or, for `None`, every cached denial.
    pub(crate) fn forget_locally(&self, key: Option<&str>) {
        match key {
            Some(key) => {
                if let Some(cache) = &self.deny_cache {
                    cache.forget(key);
                }
                if let Standby::Local(local) = &self.standby {
                    local.reset(key);
                }
            }
            None => {
                if let Some(cache) = &self.deny_cache {
                    cache.clear();
                }
            }
        }
    }

    /// Whether this process remembers anything of keys that another process's reset must
    /// clear.
    pub(crate) fn remembers_keys(&self) -> bool {
        self.deny_cache.is_some() || matches!(self.standby, Standby::Local(_))
    }

    /// The deny cache's answer, if it has one.
    pub(crate) fn cached(&self, key: &str, cost: u32, op: Op, at: u64) -> Option<Decision> {
        if op == Op::Hit || cost == 0 {
            return None;
        }
        let hit = self.deny_cache.as_ref()?.lookup(key, cost, at)?;
        self.telemetry.deny_cache_hit();
        Some(Decision::new(
            false,
            self.quota.limit(),
            0,
            Some(Duration::from_micros(hit.retry_us)),
            Duration::from_micros(hit.reset_us),
            Duration::ZERO,
        ))
    }

    /// What a reply teaches the deny cache.
    pub(crate) fn learn(&self, key: &str, cost: u32, op: Op, at: u64, numbers: &ScriptAnswer) {
        let Some(cache) = &self.deny_cache else {
            return;
        };
        if numbers.allowed {
            cache.forget(key);
        } else {
            // A hit's numbers are already those of the next single request.
            let cost = if op == Op::Hit { 1 } else { cost };
            let n = numbers;
            cache.record(key, cost, at, n.retry_us, n.retry_one_us, n.reset_us);
        }
    }

    /// The algorithm's parameters for a request of `cost`, encoded for the script.
    pub(crate) fn params(&self, cost: u32) -> [u8; 32] {
        self.params.encoded(cost)
    }

    /// Decides `op` on `redis_key` through the link: at once, or in the next batch while
    /// another call is in flight.
    pub(crate) async fn run(
        &self,
        redis_key: String,
        op: Op,
        cost: u32,
        sent: Option<u64>,
    ) -> Result<ScriptAnswer, RedisError> {
        self.sender.link.ready().await?;
        let member = Member {
            key: redis_key,
            algorithm: script_code(A::KIND, &self.quota),
            now: sent,
            cost,
            params: self.params(cost),
        };
        let watch = Stopwatch::start();
        let result = self.sender.decide(Group::one(op, member)).await;
        self.telemetry.call(watch);
        Ok(result?[0])
    }

    /// A reservation: the algorithm's script with op `r`, alone (never batched: its reply
    /// carries what an undo needs).
    pub(crate) async fn reserve(
        &self,
        redis_key: &str,
        cost: u32,
        sent: Option<u64>,
    ) -> Result<(ScriptAnswer, Vec<Value>), RedisError> {
        self.sender.link.ready().await?;
        let group = Group::one(
            Op::Check,
            Member {
                key: redis_key.to_owned(),
                algorithm: script_code(A::KIND, &self.quota),
                now: sent,
                cost,
                params: self.params(cost),
            },
        );
        let call = group.reservation();
        let watch = Stopwatch::start();
        let result = self
            .sender
            .link
            .eval(call.script, &call.keys, &call.args())
            .await;
        self.telemetry.call(watch);
        match reply::only(result?)? {
            Value::ServerError(error) => {
                let error = redis::RedisError::from(error);
                let key = failing_key(&error, &call.keys);
                Err(classify(&error, &key, self.sender.link.timeout()))
            }
            element => reply::reservation(element),
        }
    }

    /// Redis could not decide: the fallback's answer, or the error.
    pub(crate) fn failed(
        &self,
        key: &str,
        cost: u32,
        op: Op,
        error: RedisError,
    ) -> Result<Decision, RedisError> {
        self.telemetry.error(&error);
        if error.is_outage() {
            if let Some(decision) = self.standby.decide(key, cost, op, self.quota.limit()) {
                self.telemetry.fallback();
                return Ok(decision);
            }
        }
        Err(error)
    }

    /// Redis could not reserve: the fallback's reservation (undone locally), or the error.
    pub(crate) fn failed_reservation(
        &self,
        key: &str,
        cost: u32,
        error: RedisError,
    ) -> Result<Reservation, RedisError> {
        self.telemetry.error(&error);
        if error.is_outage() {
            if let Some(local) = self.standby.reserve(key, cost, self.quota.limit()) {
                self.telemetry.fallback();
                return Ok(Reservation {
                    decision: local.decision,
                    receipt: Receipt::new(Undo::Local(local.receipt)),
                });
            }
        }
        Err(error)
    }
}
