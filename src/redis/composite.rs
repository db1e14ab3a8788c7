//! Redis's side of the seam's batch hook ([`JointStore`]): limits on one node (one standalone
//! Redis, or one hash slot of a cluster: limits on the same key share its slot, since the key
//! is the hash tag) decide a group in one script, which decides every limit before writing
//! any, so a check writes only if every limit admits and a denial consumes nothing anywhere,
//! with no race at all. Keys in different slots are not a group: the seam's protocol then
//! decides them member by member.

use super::algorithm::script_code;
use super::batch::Sender;
use super::error::RedisError;
use super::group::{Group, Member};
use super::inner::Inner;
use super::keys::hash_slot;
use super::telemetry::Stopwatch;
use super::time::TimeSource;
use crate::backend::{Call, Joint, JointStore, Op};
use crate::decision::Decision;
use crate::state::Algorithm;
use smallvec::SmallVec;
use std::sync::Arc;

/// A limiter as a group member knows it: a handle every [`RedisLimiter`](super::RedisLimiter)
/// keeps, whatever its algorithm and clock, for [`Joint::limit`].
pub(crate) type Handle = Arc<dyn Part>;

/// What the composite needs of each limiter, whatever its algorithm and clock.
pub(crate) trait Part: Send + Sync {
    fn redis_key(&self, key: &str) -> String;
    /// The limit of `redis_key` at `cost`, as a call carries it.
    fn member(&self, redis_key: String, cost: u32) -> Member;
    /// The quota's limit.
    fn limit(&self) -> u32;
    /// True when an outage is answered by a fallback rather than returned.
    fn has_fallback(&self) -> bool;
    /// The fallback's decision (counted as one).
    fn fallback(&self, key: &str, cost: u32, op: Op) -> Option<Decision>;
    fn record_call(&self, watch: Stopwatch);
    fn record_error(&self, error: &RedisError);
}

impl<A: Algorithm, C: TimeSource> Part for Inner<A, C> {
    fn redis_key(&self, key: &str) -> String {
        self.keys.name(key)
    }

    fn member(&self, key: String, cost: u32) -> Member {
        let (now, _) = self.instant();
        Member {
            key,
            algorithm: script_code(A::KIND, &self.quota),
            now,
            cost,
            params: self.params(cost),
        }
    }

    fn limit(&self) -> u32 {
        self.quota.limit()
    }

    fn has_fallback(&self) -> bool {
        self.standby.is_active()
    }

    fn fallback(&self, key: &str, cost: u32, op: Op) -> Option<Decision> {
        let decision = self.standby.decide(key, cost, op, self.limit())?;
        self.telemetry.fallback();
        Some(decision)
    }

    fn record_call(&self, watch: Stopwatch) {
        self.telemetry.call(watch);
    }

    fn record_error(&self, error: &RedisError) {
        self.telemetry.error(error);
    }
}

impl JointStore for Arc<Sender> {
    fn identity(&self) -> &str {
        self.link.identity()
    }

    fn decide_group<'a>(
        &'a self,
        group: &'a [(Joint<'a>, u32)],
        op: Op,
    ) -> Option<Call<'a, Vec<Decision>>> {
        let parts: SmallVec<[&dyn Part; 4]> = group
            .iter()
            .map(|(joint, _)| joint.limit.downcast_ref::<Handle>().map(|part| &**part))
            .collect::<Option<_>>()?;
        let keys: Vec<String> = (parts.iter().zip(group))
            .map(|(part, (joint, _))| part.redis_key(joint.key))
            .collect();
        if self.link.is_cluster() {
            let slot = hash_slot(keys[0].as_bytes());
            if keys.iter().any(|key| hash_slot(key.as_bytes()) != slot) {
                return None;
            }
        }
        Some(Call::new(async move {
            match in_one_script(self, &parts, group, keys, op).await {
                Ok(decisions) => Ok(decisions),
                Err(error) => {
                    for part in &parts {
                        part.record_error(&error);
                    }
                    if error.is_outage() && parts.iter().all(|p| p.has_fallback()) {
                        Ok(fall_back(&parts, group, op))
                    } else {
                        Err(error.into())
                    }
                }
            }
        }))
    }
}

/// The group as one call (alone, or a part of a batch): every limit
/// decided, then written only if all admit.
async fn in_one_script(
    sender: &Arc<Sender>,
    parts: &[&dyn Part],
    group: &[(Joint<'_>, u32)],
    keys: Vec<String>,
    op: Op,
) -> Result<Vec<Decision>, RedisError> {
    let members = (parts.iter().zip(group).zip(keys))
        .map(|((part, &(_, cost)), key)| part.member(key, cost))
        .collect();
    let call = Group { op, members };
    let watch = Stopwatch::start();
    let result = sender.decide(call).await;
    parts[0].record_call(watch);
    Ok((parts.iter().zip(&result?))
        .map(|(part, numbers)| numbers.decision(part.limit()))
        .collect())
}

/// While Redis is down: the members' fallbacks, peeked first so that a denial consumes
/// nothing among them either.
fn fall_back(parts: &[&dyn Part], group: &[(Joint<'_>, u32)], op: Op) -> Vec<Decision> {
    let decide = |op: Op| -> Vec<Decision> {
        (parts.iter().zip(group))
            .filter_map(|(part, (joint, cost))| part.fallback(joint.key, *cost, op))
            .collect()
    };
    let probe = if op == Op::Hit { Op::Hit } else { Op::Peek };
    let found = decide(probe);
    if op == Op::Check && found.iter().all(Decision::is_allowed) {
        return decide(Op::Check);
    }
    found
}
