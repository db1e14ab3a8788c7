//! [`RateLimitLayer`] and its builder: the limits, the headers, and what to do on errors.

use super::error::BuildError;
use super::headers::{self, check_name, push_sf_string, Report, Stamp};
use super::key::KeyBuf;
use super::limit::RequestLimit;
use super::rejection::Rejection;
use super::respond::{PlainText, Responder};
use super::service::RateLimitService;
use crate::backend::{BackendError, Op};
use bytes::Bytes;
use http::header::{HeaderValue, ACCESS_CONTROL_REQUEST_METHOD};
use http::request::Parts;
use http::{Method, Response};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use tower_layer::Layer;

/// What the layer does when a limit's backend cannot decide (Redis down or slow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnBackendError {
    /// Let the request through, as if that limit admitted it (the default, like Envoy's
    /// rate-limit filter: a limiter outage should not become a service outage). The other
    /// limits still apply, and the response has no `RateLimit` header for the failed one.
    #[default]
    Allow,
    /// Answer `503 Service Unavailable` with `Retry-After: 1`.
    Deny,
}

impl FromStr for OnBackendError {
    type Err = BuildError;

    /// `allow` or `deny`.
    fn from_str(text: &str) -> Result<Self, BuildError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "allow" => Ok(OnBackendError::Allow),
            "deny" => Ok(OnBackendError::Deny),
            _ => Err(BuildError::new(format!(
                "on-backend-error is allow or deny, not {text:?}"
            ))),
        }
    }
}

/// A tower [`Layer`] that rate-limits requests by one or more named limits.
///
/// A request is admitted only if every limit admits it, and a denial consumes nothing from
/// any limit ([`all_of`](crate::backend::all_of)). Denials are answered `429` with
/// `Retry-After`; every response, allowed ones too, carries `RateLimit-Policy` and
/// `RateLimit` (see [`headers`](super#headers)). Requests whose key cannot be found get a
/// `400` saying why, never a `500`.
///
/// ```
/// use sluicegate::http::{ClientIp, HeaderKey, KeyExtractor, RateLimitLayer, RequestLimit};
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let layer = RateLimitLayer::builder()
///     .limit(RequestLimit::new("ip", KeyedLimiter::<String>::new(Quota::per_second(5))?).key(ClientIp::new()))
///     .limit(
///         RequestLimit::new("token", KeyedLimiter::<String>::new("100/minute burst 20".parse()?)?)
///             .key(HeaderKey::parse("x-api-key")?),
///     )
///     .legacy_headers(true)
///     .build()?;
/// # let _ = layer;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RateLimitLayer {
    shared: Arc<Shared>,
}

impl RateLimitLayer {
    /// A layer with one limit and the default settings.
    pub fn new(limit: RequestLimit) -> Result<Self, BuildError> {
        RateLimitLayer::builder().limit(limit).build()
    }

    /// A builder for several limits and other settings.
    pub fn builder() -> RateLimitBuilder {
        RateLimitBuilder::default()
    }

    /// The limits, in the order they are decided.
    pub fn limits(&self) -> &[RequestLimit] {
        &self.shared.limits
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimitService<S>;

    fn layer(&self, inner: S) -> RateLimitService<S> {
        RateLimitService::new(inner, Arc::clone(&self.shared))
    }
}

impl fmt::Debug for RateLimitLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

/// Builds a [`RateLimitLayer`].
pub struct RateLimitBuilder {
    limits: Vec<RequestLimit>,
    standard_headers: bool,
    legacy_headers: bool,
    on_backend_error: OnBackendError,
    exempt_preflight: bool,
    skip: Option<Skip>,
    responder: Arc<dyn Responder>,
}

type Skip = Arc<dyn Fn(&Parts) -> bool + Send + Sync>;

impl Default for RateLimitBuilder {
    fn default() -> Self {
        RateLimitBuilder {
            limits: Vec::new(),
            standard_headers: true,
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

    /// Sends `RateLimit-Policy` and `RateLimit` (on by default).
    pub fn standard_headers(mut self, on: bool) -> Self {
        self.standard_headers = on;
        self
    }

    /// Also sends the legacy `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
    /// `X-RateLimit-Reset` (delay seconds) for old clients (off by default).
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

    /// The layer, or why it cannot be built: no limit, more than 64, a name that cannot go
    /// into a header (1 to 64 printable ASCII characters), or two limits of one name.
    pub fn build(self) -> Result<RateLimitLayer, BuildError> {
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
        // An in-process backend answers before returning (the seam's contract); a remote one
        // returns a lazy call, dropped here unpolled. Knowing this up front lets several
        // in-process limits be decided on the stack, without boxing.
        let immediate = self.limits.iter().all(|limit| limit.backend.immediate());
        Ok(RateLimitLayer {
            shared: Arc::new(Shared {
                limits: self.limits.into_boxed_slice(),
                names,
                policy: policy.flatten(),
                standard_headers: self.standard_headers,
                legacy_headers: self.legacy_headers,
                on_backend_error: self.on_backend_error,
                exempt_preflight: self.exempt_preflight,
                skip: self.skip,
                responder: self.responder,
                immediate,
            }),
        })
    }
}

impl fmt::Debug for RateLimitBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitBuilder")
            .field("limits", &self.limits)
            .field("standard_headers", &self.standard_headers)
            .field("legacy_headers", &self.legacy_headers)
            .field("on_backend_error", &self.on_backend_error)
            .field("exempt_preflight", &self.exempt_preflight)
            .finish_non_exhaustive()
    }
}

/// The layer's settings, shared by every service it makes.
pub(crate) struct Shared {
    pub(crate) limits: Box<[RequestLimit]>,
    /// Each limit's name as a Structured Field String.
    names: Vec<String>,
    policy: Option<HeaderValue>,
    standard_headers: bool,
    legacy_headers: bool,
    pub(crate) on_backend_error: OnBackendError,
    exempt_preflight: bool,
    skip: Option<Skip>,
    responder: Arc<dyn Responder>,
    /// Every backend answers at once.
    pub(crate) immediate: bool,
}

impl Shared {
    /// True when `request` passes uncounted.
    #[inline]
    pub(crate) fn exempt(&self, request: &Parts) -> bool {
        let preflight = self.exempt_preflight
            && request.method == Method::OPTIONS
            && request.headers.contains_key(ACCESS_CONTROL_REQUEST_METHOD);
        preflight || self.skip.as_ref().is_some_and(|skip| skip(request))
    }

    /// The headers for a response reporting `report`, with `retry_after` seconds.
    #[inline]
    fn stamp(&self, report: Option<&Report>, retry_after: Option<u64>) -> Stamp {
        let ratelimit = match report {
            Some(report) if self.standard_headers => {
                headers::ratelimit_value(&self.names[report.limit], report)
            }
            _ => None,
        };
        Stamp {
            // A static value (see `headers::policy_value`): cloning it copies a pointer.
            policy: self.policy.clone(),
            ratelimit,
            retry_after,
            legacy: report.copied().filter(|_| self.legacy_headers),
        }
    }

    /// The headers for an admitted request.
    #[inline]
    pub(crate) fn admitted(&self, report: Option<&Report>) -> Stamp {
        self.stamp(report, None)
    }

    /// The response to `rejection`, with headers.
    fn reject<B: From<Bytes>>(&self, rejection: &Rejection<'_>, stamp: Stamp) -> Response<B> {
        let mut response = self.responder.respond(rejection).map(B::from);
        stamp.apply(response.headers_mut());
        response
    }

    /// Limit `limit`'s key and cost for `request`, or the response refusing it: a `400`
    /// when the key is missing, a `413` for a cost above what the limit can ever admit.
    #[inline]
    pub(crate) fn key_and_cost<B: From<Bytes>>(
        &self,
        limit: usize,
        request: &Parts,
    ) -> Result<(KeyBuf, u32), Response<B>> {
        let spec = &self.limits[limit];
        let mut key = KeyBuf::new();
        if let Err(error) = spec.key.extract(request, &mut key) {
            let rejection = Rejection::Key {
                limit: &spec.name,
                error: &error,
            };
            return Err(self.reject(&rejection, self.stamp(None, None)));
        }
        let cost = spec.cost.of(request);
        if let Err(beyond) = Op::Check.within_capacity(cost, spec.backend.max_cost()) {
            let rejection = Rejection::TooCostly {
                limit: &spec.name,
                cost,
                capacity: beyond.capacity(),
            };
            return Err(self.reject(&rejection, self.stamp(None, None)));
        }
        Ok((key, cost))
    }

    pub(crate) fn denied<B: From<Bytes>>(&self, report: &Report, violated: u64) -> Response<B> {
        let names: Vec<&str> = (0..self.limits.len())
            .filter(|&i| violated & (1 << i) != 0)
            .map(|i| self.limits[i].name.as_str())
            .collect();
        let rejection = Rejection::TooManyRequests {
            violated: &names,
            retry_after: report.reset,
        };
        self.reject(&rejection, self.stamp(Some(report), Some(report.reset)))
    }

    pub(crate) fn table_full<B: From<Bytes>>(&self, limit: usize) -> Response<B> {
        let rejection = Rejection::TableFull {
            limit: &self.limits[limit].name,
        };
        self.reject(&rejection, self.stamp(None, Some(1)))
    }

    pub(crate) fn failed<B: From<Bytes>>(
        &self,
        limit: Option<usize>,
        error: &BackendError,
    ) -> Response<B> {
        let rejection = Rejection::BackendFailed {
            limit: limit.map(|i| self.limits[i].name.as_str()),
            error,
        };
        self.reject(&rejection, self.stamp(None, Some(1)))
    }
}
