//! [`RateLimitBuilder`]: the limits and settings of a [`RequestLimiter`] or a
//! [`RateLimitLayer`].

use super::error::BuildError;
use super::headers::{self, check_name, push_sf_string, HeaderDraft, HeaderForm};
use super::layer::RateLimitLayer;
use super::limit::RequestLimit;
use super::limiter::RequestLimiter;
use super::on_backend_error::OnBackendError;
use super::respond::{PlainText, Responder};
use super::settings::{Settings, Skip};
use super::tiers::TierSlot;
use crate::policy::quota_name;
use http::request::Parts;
use std::fmt;
use std::sync::Arc;

/// # Building
///
/// Here, beside the builder they return, so that the layer knows no builder.
impl RateLimitLayer {
    /// A layer with one limit and the default settings.
    pub fn new(limit: RequestLimit) -> Result<Self, BuildError> {
        RateLimitLayer::builder().limit(limit).build()
    }

    /// A builder for several limits and other settings.
    pub fn builder() -> RateLimitBuilder {
        RateLimitBuilder::default()
    }
}

/// # Building
impl RequestLimiter {
    /// A builder for the limits and the settings.
    pub fn builder() -> RateLimitBuilder {
        RateLimitBuilder::default()
    }
}

/// Builds a [`RateLimitLayer`] (or the [`RequestLimiter`] it adapts, for other front ends).
pub struct RateLimitBuilder {
    limits: Vec<RequestLimit>,
    form: HeaderForm,
    on_backend_error: OnBackendError,
    exempt_preflight: bool,
    skip: Option<Skip>,
    responder: Arc<dyn Responder>,
}

impl Default for RateLimitBuilder {
    fn default() -> Self {
        RateLimitBuilder {
            limits: Vec::new(),
            form: HeaderForm::default(),
            on_backend_error: OnBackendError::default(),
            exempt_preflight: false,
            skip: None,
            responder: Arc::new(PlainText),
        }
    }
}

impl RateLimitBuilder {
    /// Adds a limit; limits are decided in the order they are added.
    pub fn limit(mut self, limit: RequestLimit) -> Self {
        self.limits.push(limit);
        self
    }

    /// Sends `RateLimit-Policy` and `RateLimit` (on by default). Off, and without
    /// [legacy headers](Self::legacy_headers), a `429` carries no `Retry-After` either.
    pub fn standard_headers(mut self, on: bool) -> Self {
        self.form.standard = on;
        self
    }

    /// Sends the standard headers in `draft`'s form ([`HeaderDraft`]; draft-10's by
    /// default), for clients written against an earlier draft; turns them on.
    pub fn headers_draft(mut self, draft: HeaderDraft) -> Self {
        self.form.standard = true;
        self.form.draft = draft;
        self
    }

    /// Also sends the legacy `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
    /// `X-RateLimit-Reset` (a Unix timestamp in seconds) for old clients (off by default).
    pub fn legacy_headers(mut self, on: bool) -> Self {
        self.form.legacy = on;
        self
    }

    /// What to do when a backend cannot decide ([`OnBackendError::Allow`] by default).
    pub fn on_backend_error(mut self, choice: OnBackendError) -> Self {
        self.on_backend_error = choice;
        self
    }

    /// Lets CORS preflights (`OPTIONS` with `Access-Control-Request-Method`) through
    /// uncounted and without headers (off by default). Better still, put tower-http's
    /// `CorsLayer` outside this layer: it answers preflights before they get here, and adds
    /// its headers to this layer's `429`s so that browsers let scripts read them.
    pub fn exempt_preflight(mut self, on: bool) -> Self {
        self.exempt_preflight = on;
        self
    }

    /// Lets requests for which `skip` is true through uncounted (health checks, say).
    pub fn skip_if(mut self, skip: impl Fn(&Parts) -> bool + Send + Sync + 'static) -> Self {
        self.skip = Some(Arc::new(skip));
        self
    }

    /// Answers rejections with `responder` ([`PlainText`] by default;
    /// [`ProblemJson`](super::ProblemJson) for RFC 9457 problem details).
    pub fn responder(mut self, responder: impl Responder) -> Self {
        self.responder = Arc::new(responder);
        self
    }

    /// The layer, or why it cannot be built: no limit, more than 64, a name that is empty or
    /// longer than 64 characters, or two limits of one name.
    pub fn build(self) -> Result<RateLimitLayer, BuildError> {
        self.limiter().map(RateLimitLayer::from)
    }

    /// The [`RequestLimiter`] the layer would adapt, for a front end of another kind; it
    /// fails as [`build`](Self::build) does.
    pub fn limiter(self) -> Result<RequestLimiter, BuildError> {
        if self.limits.is_empty() {
            return Err(BuildError::new(
                "a rate-limit layer needs at least one limit",
            ));
        }
        let limits = slots(self.limits)?;
        if limits.len() > 64 {
            return Err(BuildError::new(format!(
                "a rate-limit layer takes at most 64 limits (a tier of several quotas counts \
                 each), not {}",
                limits.len()
            )));
        }
        check_names(&limits)?;
        let sf_names = limits
            .iter()
            .map(|limit| {
                let mut item = String::new();
                push_sf_string(&mut item, &limit.name);
                item
            })
            .collect();
        let tiered = limits.iter().any(|limit| limit.tier.is_some());
        let policy = (self.form.standard && !tiered).then(|| {
            headers::policy_value(limits.iter().map(|l| (l.name.as_str(), l.backend.quota())))
        });
        // Draft-6 and draft-7 report one limit's policy: the reported one's.
        let limit_policies = match self.form.draft {
            HeaderDraft::Draft6 | HeaderDraft::Draft7 => limits
                .iter()
                .map(|l| headers::window_policy(l.backend.quota()))
                .collect(),
            _ => Vec::new(),
        };
        // An in-process backend answers before returning (the seam's contract); a remote one
        // returns a lazy call, dropped here unpolled. Knowing this up front lets several
        // in-process limits be decided on the stack, without boxing.
        let immediate = limits.iter().all(|limit| match &limit.tier {
            Some(slot) => slot.chooser.immediate(),
            None => limit.backend.immediate(),
        });
        Ok(RequestLimiter::new(Settings {
            limits: limits.into_boxed_slice(),
            sf_names,
            policy: policy.flatten(),
            limit_policies,
            form: self.form,
            on_backend_error: self.on_backend_error,
            exempt_preflight: self.exempt_preflight,
            skip: self.skip,
            responder: self.responder,
            immediate,
            tiered,
        }))
    }
}

/// The limiter's slots: each limit, and a tiered one as one slot per quota of its largest
/// tier (each slot named, before any request, as its first tier names it).
fn slots(limits: Vec<RequestLimit>) -> Result<Vec<RequestLimit>, BuildError> {
    let mut slots = Vec::with_capacity(limits.len());
    for limit in limits {
        if let Some(reason) = &limit.invalid {
            return Err(BuildError::new(reason.clone()));
        }
        let Some(TierSlot { chooser, .. }) = limit.tier.clone() else {
            slots.push(limit);
            continue;
        };
        for part in 0..chooser.width {
            slots.push(RequestLimit {
                name: quota_name(&limit.name, part, chooser.width).into_owned(),
                backend: chooser.first_backend(part),
                key: Arc::clone(&limit.key),
                cost: limit.cost.clone(),
                tier: Some(TierSlot {
                    chooser: Arc::clone(&chooser),
                    part: Some(part),
                }),
                invalid: None,
            });
        }
    }
    Ok(slots)
}

/// Refuses a name that is empty or longer than 64 characters, and two limits that could be
/// named alike in one response (a tiered limit by its own name or any of its quotas').
fn check_names(limits: &[RequestLimit]) -> Result<(), BuildError> {
    let mut names: Vec<&str> = Vec::with_capacity(limits.len());
    for limit in limits {
        check_name(&limit.name).map_err(BuildError::new)?;
        names.push(&limit.name);
        // A tiered limit of several quotas shows its own name in a tier of one.
        if let Some(slot) = limit
            .tier
            .as_ref()
            .filter(|s| s.part == Some(0) && s.chooser.width > 1)
        {
            names.push(&slot.chooser.limit);
        }
    }
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(BuildError::new(format!(
                "two limits are named {name:?}; names must differ, since headers report by name"
            )));
        }
    }
    Ok(())
}

impl fmt::Debug for RateLimitBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitBuilder")
            .field("limits", &self.limits)
            .field("standard_headers", &self.form.standard)
            .field("draft", &self.form.draft)
            .field("legacy_headers", &self.form.legacy)
            .field("on_backend_error", &self.on_backend_error)
            .field("exempt_preflight", &self.exempt_preflight)
            .finish_non_exhaustive()
    }
}
