//! [`RateLimitBuilder`]: the limits and settings of a [`RequestLimiter`] or a
//! [`RateLimitLayer`].

use super::error::BuildError;
use super::headers::{self, check_name, push_sf_string, HeaderDraft};
use super::layer::RateLimitLayer;
use super::limit::RequestLimit;
use super::limiter::{RequestLimiter, Settings, Skip};
use super::on_backend_error::OnBackendError;
use super::respond::{PlainText, Responder};
use http::request::Parts;
use std::fmt;
use std::sync::Arc;

/// Builds a [`RateLimitLayer`] (or the [`RequestLimiter`] it adapts, for other front ends).
pub struct RateLimitBuilder {
    limits: Vec<RequestLimit>,
    standard_headers: bool,
    draft: HeaderDraft,
    legacy_headers: bool,
    on_backend_error: OnBackendError,
    exempt_preflight: bool,
    skip: Option<Skip>,
    responder: Arc<dyn Responder>,
}

impl Default for RateLimitBuilder {
    fn default() -> Self {
        RateLimitBuilder {
            limits: Vec::new(),
            standard_headers: true,
            draft: HeaderDraft::default(),
            legacy_headers: false,
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
        self.standard_headers = on;
        self
    }

    /// Sends the standard headers in `draft`'s form ([`HeaderDraft`]; draft-10's by
    /// default), for clients written against an earlier draft; turns them on.
    pub fn headers_draft(mut self, draft: HeaderDraft) -> Self {
        self.standard_headers = true;
        self.draft = draft;
        self
    }

    /// Also sends the legacy `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
    /// `X-RateLimit-Reset` (a Unix timestamp in seconds) for old clients (off by default).
    pub fn legacy_headers(mut self, on: bool) -> Self {
        self.legacy_headers = on;
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
        if self.limits.len() > 64 {
            return Err(BuildError::new(
                "a rate-limit layer takes at most 64 limits",
            ));
        }
        for (i, limit) in self.limits.iter().enumerate() {
            check_name(&limit.name).map_err(BuildError::new)?;
            if self.limits[..i].iter().any(|l| l.name == limit.name) {
                return Err(BuildError::new(format!(
                    "two limits are named {:?}; names must differ, since headers report by name",
                    limit.name
                )));
            }
        }
        let names = self
            .limits
            .iter()
            .map(|limit| {
                let mut item = String::new();
                push_sf_string(&mut item, &limit.name);
                item
            })
            .collect();
        let policy = self.standard_headers.then(|| {
            headers::policy_value(
                self.limits
                    .iter()
                    .map(|l| (l.name.as_str(), l.backend.quota())),
            )
        });
        // Draft-6 and draft-7 report one limit's policy: the reported one's.
        let limit_policies = match self.draft {
            HeaderDraft::Draft6 | HeaderDraft::Draft7 => self
                .limits
                .iter()
                .map(|l| headers::window_policy(l.backend.quota()))
                .collect(),
            _ => Vec::new(),
        };
        // An in-process backend answers before returning (the seam's contract); a remote one
        // returns a lazy call, dropped here unpolled. Knowing this up front lets several
        // in-process limits be decided on the stack, without boxing.
        let immediate = self.limits.iter().all(|limit| limit.backend.immediate());
        Ok(RequestLimiter::new(Settings {
            limits: self.limits.into_boxed_slice(),
            names,
            policy: policy.flatten(),
            standard_headers: self.standard_headers,
            draft: self.draft,
            limit_policies,
            legacy_headers: self.legacy_headers,
            on_backend_error: self.on_backend_error,
            exempt_preflight: self.exempt_preflight,
            skip: self.skip,
            responder: self.responder,
            immediate,
        }))
    }
}

impl fmt::Debug for RateLimitBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitBuilder")
            .field("limits", &self.limits)
            .field("standard_headers", &self.standard_headers)
            .field("draft", &self.draft)
            .field("legacy_headers", &self.legacy_headers)
            .field("on_backend_error", &self.on_backend_error)
            .field("exempt_preflight", &self.exempt_preflight)
            .finish_non_exhaustive()
    }
}
