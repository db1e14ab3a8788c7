//! [`Settings`]: what a [`RequestLimiter`](super::RequestLimiter) decides with (its limits,
//! headers, answers to failures, exemptions), built by the
//! [`RateLimitBuilder`](super::RateLimitBuilder), and the steps of a decision that read them:
//! each limit's key, cost and tier, and the verdict an outcome gives.

use super::decide::{Backends, Outcome};
use super::headers::{self, HeaderForm, RateLimitHeaders};
use super::key::{KeyBuf, KeyError};
use super::limit::RequestLimit;
use super::on_backend_error::OnBackendError;
use super::rejection::Rejection;
use super::report::{Described, Report};
use super::respond::Responder;
use super::verdict::Verdict;
use crate::backend::{Backend, Call, Op};
use crate::quota::Quota;
use bytes::Bytes;
use http::header::{HeaderValue, ACCESS_CONTROL_REQUEST_METHOD};
use http::request::Parts;
use http::{Method, Response};
use std::sync::Arc;

/// A limiter's settings, shared by its clones.
pub(crate) struct Settings {
    /// The limits' slots: one per limit, or per quota of a tiered limit's largest tier.
    pub(crate) limits: Box<[RequestLimit]>,
    /// Each slot's name as a Structured Field String.
    pub(crate) sf_names: Vec<String>,
    /// `RateLimit-Policy` (draft-8 and draft-10), when no limit is tiered.
    pub(crate) policy: Option<HeaderValue>,
    /// Each slot's own policy, for the drafts that report one limit's (6 and 7).
    pub(crate) limit_policies: Vec<Option<HeaderValue>>,
    pub(crate) form: HeaderForm,
    pub(crate) on_backend_error: OnBackendError,
    pub(crate) exempt_preflight: bool,
    pub(crate) skip: Option<Skip>,
    pub(crate) responder: Arc<dyn Responder>,
    /// Every backend answers at once.
    pub(crate) immediate: bool,
    /// Some limit is tiered: its names, quotas and backends are the request's tier's.
    pub(crate) tiered: bool,
}

pub(crate) type Skip = Arc<dyn Fn(&Parts) -> bool + Send + Sync>;

/// A request's keys, costs and tiers, one per slot.
pub(crate) struct Extracted {
    pub(crate) keys: Vec<KeyBuf>,
    pub(crate) costs: Vec<u32>,
    /// Each slot's tier (0 for a slot that is not tiered); empty when no limit is tiered.
    pub(crate) tiers: Vec<usize>,
}

impl Settings {
    /// True when `request` passes uncounted.
    #[inline]
    pub(crate) fn exempt(&self, request: &Parts) -> bool {
        let preflight = self.exempt_preflight
            && request.method == Method::OPTIONS
            && request.headers.contains_key(ACCESS_CONTROL_REQUEST_METHOD);
        preflight || self.skip.as_ref().is_some_and(|skip| skip(request))
    }

    /// Every slot's key, cost and tier for `request`, or the response refusing it (as
    /// [`key_and_cost`](Self::key_and_cost)). A slot its tier does not have gets no key.
    #[inline]
    #[allow(clippy::result_large_err)]
    pub(crate) fn extract(&self, request: &Parts) -> Result<Extracted, Response<Bytes>> {
        let count = self.limits.len();
        let mut extracted = Extracted {
            keys: Vec::with_capacity(count),
            costs: Vec::with_capacity(count),
            tiers: Vec::new(),
        };
        if self.tiered {
            extracted.tiers = self.choose_tiers(request)?;
            if self.immediate {
                self.make_tiers_now(&extracted.tiers)?;
            }
        }
        for i in 0..count {
            let tier = extracted.tiers.get(i).copied().unwrap_or(0);
            if !self.active(i, tier) {
                extracted.keys.push(KeyBuf::new());
                extracted.costs.push(0);
                continue;
            }
            let (key, cost) = self.key_and_cost(i, tier, request)?;
            extracted.keys.push(key);
            extracted.costs.push(cost);
        }
        Ok(extracted)
    }

    /// Each slot's tier for `request`: chosen once per tiered limit (its slots share it).
    #[allow(clippy::result_large_err)]
    fn choose_tiers(&self, request: &Parts) -> Result<Vec<usize>, Response<Bytes>> {
        let mut tiers = Vec::with_capacity(self.limits.len());
        for (i, limit) in self.limits.iter().enumerate() {
            let Some(slot) = &limit.tier else {
                tiers.push(0);
                continue;
            };
            let shared = i > 0
                && self.limits[i - 1]
                    .tier
                    .as_ref()
                    .is_some_and(|before| Arc::ptr_eq(&before.chooser, &slot.chooser));
            if shared {
                tiers.push(tiers[i - 1]);
                continue;
            }
            match slot.chooser.choose(request) {
                Ok(tier) => tiers.push(tier),
                Err(error) => {
                    let rejection = Rejection::Key {
                        limit: &slot.chooser.limit,
                        error: &error,
                    };
                    return Err(self.response(&rejection, self.no_report(None, &[])));
                }
            }
        }
        Ok(tiers)
    }

    /// Makes the in-process open tiers `tiers` names, at once (before their costs are
    /// checked), or the response refusing the request when one cannot be made.
    #[allow(clippy::result_large_err)]
    fn make_tiers_now(&self, tiers: &[usize]) -> Result<(), Response<Bytes>> {
        let Some(making) = self.ensure_tiers(tiers) else {
            return Ok(());
        };
        let error = match making.now() {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => error.to_string(),
            Err(_) => "an in-process tier was not made at once".to_owned(),
        };
        let error = KeyError::unavailable(format!("a tier could not be made: {error}"));
        let limit = self
            .limits
            .iter()
            .position(|l| l.tier.is_some())
            .unwrap_or(0);
        let rejection = Rejection::Key {
            limit: self.base_name(limit),
            error: &error,
        };
        Err(self.response(&rejection, self.no_report(None, &[])))
    }

    /// The first slot whose cost its backend can never admit, once open tiers are made:
    /// the outcome refusing the request.
    pub(crate) fn too_costly(&self, costs: &[u32], tiers: &[usize]) -> Option<Outcome> {
        (0..self.limits.len()).find_map(|i| {
            let backend = self.backend(i, tiers.get(i).copied().unwrap_or(0))?;
            let cost = costs[i];
            let beyond = Op::Check.within_capacity(cost, backend.max_cost()).err()?;
            Some(Outcome::TooCostly {
                limit: i,
                cost,
                capacity: beyond.capacity(),
            })
        })
    }

    /// True when slot `limit` is decided in `tier` (always, for a slot that is not tiered).
    #[inline]
    fn active(&self, limit: usize, tier: usize) -> bool {
        match &self.limits[limit].tier {
            Some(slot) => slot.chooser.active(tier, slot.part.unwrap_or(0)),
            None => true,
        }
    }

    /// Slot `limit`'s key and cost for `request` in `tier`, or the verdict refusing it: a
    /// `400` when the key is missing, a `413` for a cost above what the limit can ever admit.
    #[inline]
    // Refusing is the rare path, and its response is moved once, into the verdict.
    #[allow(clippy::result_large_err)]
    pub(crate) fn key_and_cost(
        &self,
        limit: usize,
        tier: usize,
        request: &Parts,
    ) -> Result<(KeyBuf, u32), Response<Bytes>> {
        let spec = &self.limits[limit];
        let mut key = KeyBuf::new();
        if let Err(error) = spec.key.extract(request, &mut key) {
            let rejection = Rejection::Key {
                limit: self.base_name(limit),
                error: &error,
            };
            return Err(self.response(&rejection, self.no_report(None, &[])));
        }
        let cost = spec.cost.of(request);
        // An open tier not made yet admits what its quota will: checked once it is.
        let max_cost = match self.backend(limit, tier) {
            Some(backend) => backend.max_cost(),
            None => u32::MAX,
        };
        if let Err(beyond) = Op::Check.within_capacity(cost, max_cost) {
            let rejection = Rejection::TooCostly {
                limit: self.name(limit, tier),
                cost,
                capacity: beyond.capacity(),
            };
            return Err(self.response(&rejection, self.no_report(None, &[])));
        }
        Ok((key, cost))
    }

    /// Makes the open tiers `tiers` names that are not made yet (a tier named for the first
    /// time): `None` when none is left to make, else the making's failure, or what to await
    /// (a Redis limiter's connection).
    pub(crate) fn ensure_tiers<'a>(&'a self, tiers: &[usize]) -> Option<Call<'a, ()>> {
        let mut pending = Vec::new();
        for (i, limit) in self.limits.iter().enumerate() {
            if let (Some(slot), Some(&tier)) = (&limit.tier, tiers.get(i)) {
                if slot.chooser.part(tier, 0).is_none() {
                    match slot.chooser.ensure(tier).now() {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => return Some(Call::ready(Err(error))),
                        Err(waiting) => pending.push(waiting),
                    }
                }
            }
        }
        if pending.is_empty() {
            return None;
        }
        Some(Call::new(async move {
            for making in pending {
                making.await?;
            }
            Ok(())
        }))
    }

    /// Slot `limit`'s backend in `tier`; `None` when that tier does not have it (or, an open
    /// tier, is not made yet).
    #[inline]
    pub(crate) fn backend(&self, limit: usize, tier: usize) -> Option<&dyn Backend<str>> {
        let spec = &self.limits[limit];
        match &spec.tier {
            None => Some(&*spec.backend),
            Some(slot) => slot
                .chooser
                .part(tier, slot.part.unwrap_or(0))
                .map(|part| &*part.backend),
        }
    }

    /// Slot `limit`'s backend in `tier`, shared: what a refund keeps.
    pub(crate) fn shared_backend(
        &self,
        limit: usize,
        tier: usize,
    ) -> Option<Arc<dyn Backend<str>>> {
        let spec = &self.limits[limit];
        match &spec.tier {
            None => Some(Arc::clone(&spec.backend)),
            Some(slot) => slot
                .chooser
                .part(tier, slot.part.unwrap_or(0))
                .map(|part| Arc::clone(&part.backend)),
        }
    }

    /// Every slot's backend for a request of `tiers` (empty: no limit is tiered).
    pub(crate) fn backends(&self, tiers: &[usize]) -> Backends<'_> {
        (0..self.limits.len())
            .map(|i| self.backend(i, tiers.get(i).copied().unwrap_or(0)))
            .collect()
    }

    /// Slot `limit`'s name in `tier`.
    pub(crate) fn name(&self, limit: usize, tier: usize) -> &str {
        let spec = &self.limits[limit];
        spec.tier
            .as_ref()
            .and_then(|slot| slot.chooser.part(tier, slot.part.unwrap_or(0)))
            .map_or(spec.name.as_str(), |part| part.name.as_str())
    }

    /// The name a slot's limit was given (a tiered limit's, whatever its quotas).
    fn base_name(&self, limit: usize) -> &str {
        let spec = &self.limits[limit];
        spec.tier
            .as_ref()
            .map_or(spec.name.as_str(), |slot| slot.chooser.limit.as_str())
    }

    /// What `outcome` tells the front end, for a request of `tiers` whose key on slot `i` is
    /// `keys[i]` (empty when the keys were not found).
    #[inline]
    pub(crate) fn verdict(&self, outcome: Outcome, keys: &[KeyBuf], tiers: &[usize]) -> Verdict {
        let tier_of = |i: usize| tiers.get(i).copied().unwrap_or(0);
        match outcome {
            Outcome::Admit { report, wait } => {
                let report = report.map(|r| self.with_tier(r, tiers));
                Verdict::Pass {
                    headers: self.headers(report.as_ref(), None, keys, tiers),
                    wait,
                }
            }
            Outcome::Deny { report, violated } => {
                let report = self.with_tier(report, tiers);
                let names: Vec<&str> = (0..self.limits.len())
                    .filter(|&i| violated & (1 << i) != 0)
                    .map(|i| self.name(i, tier_of(i)))
                    .collect();
                let rejection = Rejection::TooManyRequests {
                    violated: &names,
                    retry_after: report.reset,
                };
                let headers = self.headers(Some(&report), Some(report.reset), keys, tiers);
                self.refuse(&rejection, headers)
            }
            Outcome::TooCostly {
                limit,
                cost,
                capacity,
            } => {
                let rejection = Rejection::TooCostly {
                    limit: self.name(limit, tier_of(limit)),
                    cost,
                    capacity,
                };
                self.refuse(&rejection, self.no_report(None, &[]))
            }
            Outcome::TableFull { limit } => {
                let rejection = Rejection::TableFull {
                    limit: self.name(limit, tier_of(limit)),
                };
                let retry = crate::decision::TABLE_FULL_RETRY_AFTER.as_secs();
                self.refuse(&rejection, self.no_report(Some(retry), keys))
            }
            Outcome::Failed { limit, error } => {
                let rejection = Rejection::BackendFailed {
                    limit: limit.map(|i| self.name(i, tier_of(i))),
                    error: &error,
                };
                self.refuse(&rejection, self.no_report(Some(1), keys))
            }
        }
    }

    /// `report`, saying which tier its limit was decided in when that limit is tiered.
    fn with_tier(&self, mut report: Report, tiers: &[usize]) -> Report {
        if self.limits[report.limit].tier.is_some() {
            report.tier = tiers.get(report.limit).copied();
        }
        report
    }

    /// The headers for a response reporting `report`, with `retry_after` seconds, to a
    /// request of `keys` and `tiers`.
    #[inline]
    fn headers(
        &self,
        report: Option<&Report>,
        retry_after: Option<u64>,
        keys: &[KeyBuf],
        tiers: &[usize],
    ) -> RateLimitHeaders {
        if self.tiered {
            let chosen = Chosen {
                settings: self,
                tiers,
            };
            RateLimitHeaders::for_report(&self.form, &chosen, report, retry_after, keys)
        } else {
            RateLimitHeaders::for_report(&self.form, self, report, retry_after, keys)
        }
    }

    /// The headers of a response that reports no limit, to a request of `keys`: the policy
    /// and `retry_after`.
    fn no_report(&self, retry_after: Option<u64>, keys: &[KeyBuf]) -> RateLimitHeaders {
        RateLimitHeaders::for_report(&self.form, self, None, retry_after, keys)
    }

    /// Refuses with the response to `rejection`.
    fn refuse(&self, rejection: &Rejection<'_>, headers: RateLimitHeaders) -> Verdict {
        Verdict::Refuse(self.response(rejection, headers))
    }

    /// The response to `rejection`, with `headers`, and what they report as an extension.
    fn response(&self, rejection: &Rejection<'_>, headers: RateLimitHeaders) -> Response<Bytes> {
        let mut response = self.responder.respond(rejection);
        if let Some(report) = headers.report {
            response.extensions_mut().insert(report);
        }
        headers.apply(response.headers_mut());
        response
    }
}

/// The limits as every request sees them: no limit is tiered.
impl Described for Settings {
    #[inline]
    fn policy(&self) -> Option<HeaderValue> {
        self.policy.clone()
    }

    #[inline]
    fn sf_name(&self, limit: usize) -> &str {
        &self.sf_names[limit]
    }

    fn window_policy(&self, limit: usize) -> Option<HeaderValue> {
        self.limit_policies.get(limit).cloned().flatten()
    }

    fn each_limit(&self, each: &mut dyn FnMut(usize, &str, Quota)) {
        for (i, limit) in self.limits.iter().enumerate() {
            each(i, &self.sf_names[i], limit.backend.quota());
        }
    }
}

/// The limits as one request saw them: each tiered limit's names and quotas are its tier's,
/// and the slots its tier does not have are left out.
struct Chosen<'a> {
    settings: &'a Settings,
    tiers: &'a [usize],
}

impl Chosen<'_> {
    fn tier(&self, limit: usize) -> usize {
        self.tiers.get(limit).copied().unwrap_or(0)
    }
}

impl Described for Chosen<'_> {
    fn policy(&self) -> Option<HeaderValue> {
        let settings = self.settings;
        let shown = (0..settings.limits.len()).filter_map(|i| {
            let backend = settings.backend(i, self.tier(i))?;
            Some((settings.name(i, self.tier(i)), backend.quota()))
        });
        headers::policy_value(shown)
    }

    fn sf_name(&self, limit: usize) -> &str {
        let spec = &self.settings.limits[limit];
        spec.tier
            .as_ref()
            .and_then(|slot| slot.chooser.part(self.tier(limit), slot.part.unwrap_or(0)))
            .map_or(self.settings.sf_names[limit].as_str(), |part| {
                part.sf_name.as_str()
            })
    }

    fn window_policy(&self, limit: usize) -> Option<HeaderValue> {
        let spec = &self.settings.limits[limit];
        match &spec.tier {
            Some(slot) => slot
                .chooser
                .part(self.tier(limit), slot.part.unwrap_or(0))?
                .window_policy
                .clone(),
            None => self.settings.window_policy(limit),
        }
    }

    fn each_limit(&self, each: &mut dyn FnMut(usize, &str, Quota)) {
        for i in 0..self.settings.limits.len() {
            if let Some(backend) = self.settings.backend(i, self.tier(i)) {
                each(i, self.sf_name(i), backend.quota());
            }
        }
    }
}
