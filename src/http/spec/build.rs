//! Building a checked [`FrontEndSpec`]: each limit's backends (in process, or on Redis under
//! [`redis_prefix`]), keys, tiers and the limiter's settings.

use super::check::{open_tier, Body, LimitPlan, Plan, QuotasPlan, TiersPlan};
use super::front_end::{Built, FrontEnd};
use super::quotas::{LimitQuotas, QuotaPart};
use super::FrontEndSpec;
use crate::algorithm::AlgorithmKind;
use crate::backend::{Backend, Call, DenyAll};
use crate::http::error::{BuildError, OptionPath, Problems};
use crate::http::key::{GivenKey, KeyExtractor};
use crate::http::limit::RequestLimit;
use crate::http::limiter::RequestLimiter;
use crate::http::policy::{in_process_backend_bounded, key_extractor};
use crate::http::respond::{JsonDetail, ProblemJson};
use crate::http::tiers::{TierMaker, TierSource, Tiers};
use crate::policy::{quota_name, KeySpec};
use std::sync::Arc;

/// Each limit's backends: per tier (one for a limit of fixed quotas), per quota.
type Made = Vec<Vec<Vec<Arc<dyn Backend<str>>>>>;

impl FrontEndSpec {
    /// Checks every option without building anything: every problem, each naming its
    /// option, or nothing wrong. (A Redis URL is read, not connected to.)
    pub fn validate(&self) -> Result<(), BuildError> {
        self.check().map(drop)
    }

    /// Builds the front end in this process, or reports every problem with its options. A
    /// spec with [`redis`](Self::redis) connects: build it with `build_async` (feature
    /// `redis`, on a tokio runtime).
    pub fn build(&self) -> Result<FrontEnd, BuildError> {
        let plan = self.check()?;
        if plan.redis.is_some() {
            return Err(BuildError::at(
                OptionPath::field("redis"),
                "a front end on Redis connects: build it with build_async (feature redis)",
            ));
        }
        let mut problems = Problems::default();
        let made = in_process(&plan, &mut problems);
        problems.done(|| ())?;
        assemble(plan, made, None)
    }

    /// Builds the front end, in this process or on Redis, or reports every problem with its
    /// options. On Redis, each limit (each quota of each tier) is a Redis limiter under
    /// [`redis_prefix`](crate::http::redis_prefix) of its name, connected as
    /// [`RedisSpec::connect`](super::RedisSpec::connect) says: `now` waits up to a second
    /// for Redis's first answer, and while Redis is down builds all the same (connecting in
    /// the background), so that a front end starts while Redis is down. Needs a tokio
    /// runtime.
    #[cfg(feature = "redis")]
    pub async fn build_async(&self) -> Result<FrontEnd, BuildError> {
        let plan = self.check()?;
        let Some(redis) = plan.redis.clone() else {
            let mut problems = Problems::default();
            let made = in_process(&plan, &mut problems);
            problems.done(|| ())?;
            return assemble(plan, made, None);
        };
        let target = redis::Target {
            plan: redis,
            mode: plan.on_backend_error,
        };
        let mut problems = Problems::default();
        let mut eager = target.plan.connect_now;
        let mut made: Made = Vec::with_capacity(plan.limits.len());
        let mut remotes = Vec::new();
        for (i, limit) in plan.limits.iter().enumerate() {
            let mut tiers = Vec::new();
            for (tier, parts) in tier_parts(limit) {
                let mut backends = Vec::new();
                for (p, part) in parts.iter().enumerate() {
                    let name = quota_name(&limit.name, p, parts.len());
                    let built = match part {
                        QuotaPart::DenyAll(quota) => Ok(Arc::new(DenyAll::new(*quota)) as Arc<_>),
                        QuotaPart::Quota(quota) => {
                            let made = target.limiter(*quota, limit.algorithm, &name, eager).await;
                            made.map(|remote| {
                                eager &= remote.is_available();
                                remotes.push(remote.clone());
                                Arc::new(remote) as Arc<dyn Backend<str>>
                            })
                        }
                    };
                    match built {
                        Ok(backend) => backends.push(backend),
                        Err(e) => {
                            problems.add(quota_path(i, limit, tier), format!("on Redis: {e}"))
                        }
                    }
                }
                tiers.push(backends);
            }
            made.push(tiers);
        }
        problems.done(|| ())?;
        let mut front_end = assemble(plan, made, Some(target))?;
        front_end.redis = remotes;
        Ok(front_end)
    }
}

/// Each tier's quotas (one tier for a limit of fixed quotas), with its label.
fn tier_parts(limit: &LimitPlan) -> Vec<(Option<&str>, &[QuotaPart])> {
    match &limit.quotas {
        QuotasPlan::Fixed(parts) => vec![(None, parts.as_slice())],
        QuotasPlan::Tiered(tiers) => tiers
            .tiers
            .iter()
            .map(|(label, parts)| (Some(label.as_str()), parts.as_slice()))
            .collect(),
    }
}

/// Where a limit's quota (or tier's) is given, for a problem building it.
fn quota_path(i: usize, limit: &LimitPlan, tier: Option<&str>) -> OptionPath {
    let path = OptionPath::field("limits").at(i);
    match (tier, &limit.quotas) {
        (Some(label), QuotasPlan::Tiered(_)) => path.then("tiers").then("quotas").key(label),
        _ => path.then("quota"),
    }
}

/// Whether a limit holds a state per key.
fn keyed(limit: &LimitPlan) -> bool {
    limit.key != Some(KeySpec::Global)
}

/// One backend in this process.
fn local_backend(
    part: QuotaPart,
    algorithm: AlgorithmKind,
    keyed: bool,
    max_keys: usize,
) -> Result<Arc<dyn Backend<str>>, String> {
    match part {
        QuotaPart::DenyAll(quota) => Ok(Arc::new(DenyAll::new(quota))),
        QuotaPart::Quota(quota) => {
            in_process_backend_bounded(algorithm, quota, keyed, max_keys).map_err(|e| e.to_string())
        }
    }
}

/// Every limit's backends in this process.
fn in_process(plan: &Plan, problems: &mut Problems) -> Made {
    let mut made = Vec::with_capacity(plan.limits.len());
    for (i, limit) in plan.limits.iter().enumerate() {
        let mut tiers = Vec::new();
        for (tier, parts) in tier_parts(limit) {
            let mut backends = Vec::new();
            for part in parts {
                match local_backend(*part, limit.algorithm, keyed(limit), plan.max_keys) {
                    Ok(backend) => backends.push(backend),
                    Err(e) => problems.add(quota_path(i, limit, tier), e),
                }
            }
            tiers.push(backends);
        }
        made.push(tiers);
    }
    made
}

/// Where open tiers are made on Redis.
#[cfg(feature = "redis")]
type Target = redis::Target;
#[cfg(not(feature = "redis"))]
type Target = std::convert::Infallible;

/// The front end of `plan`, from each limit's `made` backends.
fn assemble(plan: Plan, made: Made, target: Option<Target>) -> Result<FrontEnd, BuildError> {
    let mut builder = RequestLimiter::builder()
        .on_backend_error(plan.on_backend_error.answer())
        .legacy_headers(plan.legacy)
        .exempt_preflight(plan.exempt_preflight);
    builder = match plan.standard {
        Some(draft) => builder.headers_draft(draft),
        None => builder.standard_headers(false),
    };
    builder = match plan.body {
        Body::Text => builder,
        Body::Json => builder.responder(JsonDetail),
        Body::Problem => builder.responder(ProblemJson),
    };
    if !plan.exempt.is_empty() {
        let exempt = plan.exempt.clone();
        builder = builder.skip_if(move |request| {
            let path = request.uri.path();
            exempt.iter().any(|rule| rule.covers(path))
        });
    }
    let mut limits = Vec::with_capacity(plan.limits.len());
    let mut next_slot = 0;
    for (limit, tiers) in plan.limits.iter().zip(made) {
        let key: Arc<dyn KeyExtractor> = match &limit.key {
            Some(spec) => key_extractor(spec, &plan.client_ip)?,
            None => Arc::new(GivenKey::new(limit.name.clone())),
        };
        let (slots, open) = match &limit.quotas {
            QuotasPlan::Fixed(_) => {
                let parts = tiers.into_iter().next().unwrap_or_default();
                let count = parts.len();
                for (p, backend) in parts.into_iter().enumerate() {
                    let one = RequestLimit::shared(quota_name(&limit.name, p, count), backend);
                    builder = builder.limit(finish(one, &key, limit.cost));
                }
                (count, None)
            }
            QuotasPlan::Tiered(plan_tiers) => {
                let (tiered, width, open) =
                    tiered(limit, plan_tiers, tiers, plan.max_keys, target.as_ref());
                builder = builder.limit(finish(tiered, &key, limit.cost));
                (width, open)
            }
        };
        limits.push(Built {
            name: limit.name.clone(),
            given_key: limit.key.is_none(),
            given_tier: matches!(&limit.quotas, QuotasPlan::Tiered(t) if t.by == TierSource::Given),
            slots: next_slot..next_slot + slots,
            open,
        });
        next_slot += slots;
    }
    Ok(FrontEnd {
        limiter: builder.limiter()?,
        limits,
        client_ip: plan.client_ip,
        refund_failed: plan.refund_failed,
        refund_successful: plan.refund_successful,
        #[cfg(feature = "redis")]
        redis: Vec::new(),
    })
}

/// `limit` keyed by `key`, costing `cost`.
fn finish(limit: RequestLimit, key: &Arc<dyn KeyExtractor>, cost: u32) -> RequestLimit {
    limit.key(Arc::clone(key)).cost(cost)
}

/// A tiered limit of declared tiers (`tiers`, their backends made) or open ones; with its
/// slots' count, and how an open tier's label is read.
fn tiered(
    limit: &LimitPlan,
    plan: &TiersPlan,
    made: Vec<Vec<Arc<dyn Backend<str>>>>,
    max_keys: usize,
    target: Option<&Target>,
) -> (RequestLimit, usize, Option<LimitQuotas>) {
    let mut tiers = Tiers::new(plan.by.clone());
    let mut width = 1;
    let mut open = None;
    if let Some(max) = plan.open {
        let read = LimitQuotas::new(limit.algorithm).zero_denies(true);
        let maker = OpenTiers {
            #[cfg(feature = "redis")]
            name: limit.name.clone(),
            read,
            algorithm: limit.algorithm,
            keyed: keyed(limit),
            max_keys,
            #[cfg(feature = "redis")]
            target: target.cloned(),
        };
        #[cfg(not(feature = "redis"))]
        let _ = target;
        tiers = tiers.open(max, maker);
        open = Some(read);
    } else {
        for ((label, _), backends) in plan.tiers.iter().zip(made) {
            width = width.max(backends.len());
            tiers = tiers.tier_of(label.clone(), backends);
        }
    }
    if let Some(default) = &plan.default {
        tiers = tiers.default_tier(default.clone());
    }
    (RequestLimit::tiered(limit.name.clone(), tiers), width, open)
}

/// Open tiers: each the one quota its label reads as, made on first use, in process or on
/// Redis.
struct OpenTiers {
    #[cfg(feature = "redis")]
    name: String,
    read: LimitQuotas,
    algorithm: AlgorithmKind,
    keyed: bool,
    max_keys: usize,
    #[cfg(feature = "redis")]
    target: Option<redis::Target>,
}

impl TierMaker for OpenTiers {
    fn check(&self, label: &str) -> Result<(), String> {
        open_tier(self.read, label).map(drop)
    }

    fn make(&self, label: &str) -> Call<'static, Arc<dyn Backend<str>>> {
        let part = match open_tier(self.read, label) {
            Ok(part) => part,
            Err(reason) => {
                return Call::ready(Err(crate::backend::BackendError::new(
                    crate::backend::BackendErrorKind::Rejected,
                    reason,
                )))
            }
        };
        #[cfg(feature = "redis")]
        if let (Some(target), QuotaPart::Quota(quota)) = (&self.target, part) {
            let (target, name, algorithm) = (target.clone(), self.name.clone(), self.algorithm);
            return Call::new(async move {
                let remote = target.limiter(quota, algorithm, &name, false).await?;
                Ok(Arc::new(remote) as Arc<dyn Backend<str>>)
            });
        }
        let made = local_backend(part, self.algorithm, self.keyed, self.max_keys);
        Call::ready(made.map_err(|reason| {
            crate::backend::BackendError::new(crate::backend::BackendErrorKind::Rejected, reason)
        }))
    }

    fn immediate(&self) -> bool {
        #[cfg(feature = "redis")]
        if self.target.is_some() {
            return false;
        }
        true
    }
}

#[cfg(feature = "redis")]
mod redis {
    use super::super::check::RedisPlan;
    use crate::algorithm::AlgorithmKind;
    use crate::http::on_backend_error::BackendErrorMode;
    use crate::http::policy::redis_prefix;
    use crate::quota::Quota;
    use crate::redis::{AnyRedisLimiter, RedisError};

    /// The Redis a front end's limits live on.
    #[derive(Debug, Clone)]
    pub(super) struct Target {
        pub(super) plan: RedisPlan,
        /// What a failure answers: `local` decides in this process while Redis cannot.
        pub(super) mode: BackendErrorMode,
    }

    impl Target {
        /// The limiter of `quota` named `name`, under its HTTP prefix: connected first when
        /// `eager` ([`RedisSpec::limiter`]).
        pub(super) async fn limiter(
            &self,
            quota: Quota,
            algorithm: AlgorithmKind,
            name: &str,
            eager: bool,
        ) -> Result<AnyRedisLimiter, RedisError> {
            let spec = &self.plan.spec;
            let fallback = self.mode.fallback();
            let prefix = redis_prefix(name);
            spec.limiter(quota, algorithm, &prefix, name, eager, |builder| {
                builder.fallback(fallback)
            })
            .await
        }
    }
}
