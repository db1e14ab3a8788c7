//! [`RequestLimiter`]: where an HTTP request is decided, once, for every front end.

use super::builder::RateLimitBuilder;
use super::decide::{self, Outcome};
use super::headers::{self, RateLimitHeaders, Report};
use super::key::KeyBuf;
use super::limit::RequestLimit;
use super::on_backend_error::OnBackendError;
use super::rejection::Rejection;
use super::respond::Responder;
use super::verdict::{Deciding, PendingVerdict, Verdict};
use crate::backend::{BackendError, BackendErrorKind, Op};
use bytes::Bytes;
use http::header::{HeaderValue, ACCESS_CONTROL_REQUEST_METHOD};
use http::request::Parts;
use http::{Method, Response};
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Decides HTTP requests against named limits: the one decision behind every HTTP front end.
///
/// Given what a front end knows of a request (its method, URI, headers and, as a
/// `SocketAddr` extension, the peer's address, in an [`http::request::Parts`]), it extracts
/// each limit's key and cost, decides every limit at once by the one all-or-nothing protocol
/// (a denial consumes nothing anywhere), and returns a [`Verdict`]: pass the request on with
/// the rate-limit headers to add, or answer it with a ready response (`429`, `400`, `413`,
/// `503`). The tower [`RateLimitLayer`](super::RateLimitLayer) is a thin adapter over it, and
/// so are the Node and Python middlewares; build one with [`RateLimitBuilder::limiter`].
///
/// ```
/// use sluicegate::http::{ClientIp, Deciding, RateLimitLayer, RequestLimit, Verdict};
/// use sluicegate::{KeyedLimiter, Quota};
/// use std::net::SocketAddr;
///
/// let limiter = RateLimitLayer::builder()
///     .limit(RequestLimit::new("ip", KeyedLimiter::<String>::new(Quota::per_second(1))?).key(ClientIp::new()))
///     .limiter()?;
/// let mut request = http::Request::get("/").body(())?;
/// request.extensions_mut().insert("192.0.2.7:4000".parse::<SocketAddr>()?);
/// let (parts, ()) = request.into_parts();
/// let Deciding::Now(Verdict::Pass { headers, .. }) = limiter.decide(&parts) else { panic!() };
/// let mut response = http::Response::new(());
/// headers.apply(response.headers_mut());
/// assert_eq!(response.headers()["ratelimit"], r#""ip";r=0;t=1"#);
/// let Deciding::Now(Verdict::Refuse(refused)) = limiter.decide(&parts) else { panic!() };
/// assert_eq!(refused.status(), 429);
/// assert_eq!(refused.headers()["retry-after"], "1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RequestLimiter {
    pub(crate) settings: Arc<Settings>,
}

/// A limiter's settings, shared by its clones.
pub(crate) struct Settings {
    pub(crate) limits: Box<[RequestLimit]>,
    /// Each limit's name as a Structured Field String.
    pub(crate) names: Vec<String>,
    pub(crate) policy: Option<HeaderValue>,
    pub(crate) standard_headers: bool,
    /// The form of the standard headers.
    pub(crate) draft: headers::HeaderDraft,
    /// Each limit's own policy, for the drafts that report one limit's (6 and 7).
    pub(crate) limit_policies: Vec<Option<HeaderValue>>,
    pub(crate) legacy_headers: bool,
    pub(crate) on_backend_error: OnBackendError,
    pub(crate) exempt_preflight: bool,
    pub(crate) skip: Option<Skip>,
    pub(crate) responder: Arc<dyn Responder>,
    /// Every backend answers at once.
    pub(crate) immediate: bool,
}

pub(crate) type Skip = Arc<dyn Fn(&Parts) -> bool + Send + Sync>;

/// A request's keys and costs, one per limit.
pub(crate) struct Extracted {
    pub(crate) keys: Vec<KeyBuf>,
    pub(crate) costs: Vec<u32>,
}

impl RequestLimiter {
    pub(crate) fn new(settings: Settings) -> Self {
        RequestLimiter {
            settings: Arc::new(settings),
        }
    }

    /// A builder for the limits and the settings.
    pub fn builder() -> RateLimitBuilder {
        RateLimitBuilder::default()
    }

    /// The limits, in the order they are decided.
    pub fn limits(&self) -> &[RequestLimit] {
        &self.settings.limits
    }

    /// What a backend failure answers.
    pub fn on_backend_error(&self) -> OnBackendError {
        self.settings.on_backend_error
    }

    /// Forgets `key` (as this front end's key extractors write it: a client address, a
    /// header's value, what a key function returned) in every limit: express-rate-limit's
    /// `resetKey`. Resolves to whether any limit held a state for it; complete at once
    /// ([`Call::now`](crate::backend::Call::now)) when every limit is in process. The first
    /// backend error ends it (the limits before it have forgotten the key).
    pub fn reset(&self, key: &str) -> crate::backend::Call<'_, bool> {
        let limits = &self.settings.limits;
        if self.settings.immediate {
            let mut held = false;
            for limit in limits.iter() {
                match limit.backend.reset(key).now() {
                    Ok(Ok(reset)) => held |= reset,
                    Ok(Err(error)) => return crate::backend::Call::ready(Err(error)),
                    Err(_) => unreachable!("an immediate backend's call is complete"),
                }
            }
            return crate::backend::Call::ready(Ok(held));
        }
        let key = key.to_owned();
        crate::backend::Call::new(async move {
            let mut held = false;
            for limit in limits.iter() {
                held |= limit.backend.reset(&key).await?;
            }
            Ok(held)
        })
    }

    /// Decides `request` against every limit: at once ([`Deciding::Now`]) when every limit
    /// is in process, else a [`PendingVerdict`] to await. Exempt requests (a skip rule, a
    /// CORS preflight when exempted) pass with no headers, uncounted.
    pub fn decide(&self, request: &Parts) -> Deciding {
        let settings = &*self.settings;
        if settings.exempt(request) {
            return Deciding::Now(Verdict::Pass {
                headers: RateLimitHeaders::default(),
                wait: Duration::ZERO,
            });
        }
        let on_error = settings.on_backend_error;
        if let [limit] = &settings.limits[..] {
            // One limit, the common case: nothing allocated on the way.
            let (key, cost) = match settings.key_and_cost(0, request) {
                Ok(found) => found,
                Err(refusal) => return Deciding::Now(Verdict::Refuse(refusal)),
            };
            // The decision (small) leaves the borrow of `key`; the verdict (large) is then
            // built once, in place.
            let decided = match limit.backend.decide(key.as_str(), cost, Op::Check).now() {
                Ok(result) => Some(result),
                // A remote backend's call is lazy: dropped unpolled, it did nothing; the
                // decision is made again, owned, in a boxed future.
                Err(lazy) => {
                    drop(lazy);
                    None
                }
            };
            return match decided {
                Some(result) => Deciding::Now(
                    settings.verdict(decide::single(result, on_error), std::slice::from_ref(&key)),
                ),
                None => self.later(Extracted {
                    keys: vec![key],
                    costs: vec![cost],
                }),
            };
        }
        let extracted = match settings.extract(request) {
            Ok(extracted) => extracted,
            Err(refusal) => return Deciding::Now(Verdict::Refuse(refusal)),
        };
        if !settings.immediate {
            return self.later(extracted);
        }
        let deciding = decide::all(
            &settings.limits,
            &extracted.keys,
            &extracted.costs,
            on_error,
        );
        let outcome = match pin!(deciding).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(outcome) => outcome,
            // Every backend answered at once when the limiter was built; one that now waits
            // broke the seam's contract. Its reservations so far stay consumed (erring toward
            // denying) and the request is handled as a backend error.
            Poll::Pending => {
                let error = BackendError::new(
                    BackendErrorKind::Unavailable,
                    "an in-process backend did not answer at once",
                );
                decide::failed(None, error, on_error)
            }
        };
        Deciding::Now(settings.verdict(outcome, &extracted.keys))
    }

    /// Decides in a boxed future: a remote backend's round trip.
    fn later(&self, extracted: Extracted) -> Deciding {
        let settings = Arc::clone(&self.settings);
        Deciding::Later(PendingVerdict(Box::pin(async move {
            let on_error = settings.on_backend_error;
            let Extracted { keys, costs } = extracted;
            let outcome =
                if let ([limit], [key], [cost]) = (&settings.limits[..], &keys[..], &costs[..]) {
                    let result = limit.backend.decide(key.as_str(), *cost, Op::Check).await;
                    decide::single(result, on_error)
                } else {
                    decide::all(&settings.limits, &keys, &costs, on_error).await
                };
            settings.verdict(outcome, &keys)
        })))
    }
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

    /// Every limit's key and cost for `request`, or the response refusing it (as
    /// [`key_and_cost`](Self::key_and_cost)).
    #[inline]
    #[allow(clippy::result_large_err)]
    pub(crate) fn extract(&self, request: &Parts) -> Result<Extracted, Response<Bytes>> {
        let count = self.limits.len();
        let mut extracted = Extracted {
            keys: Vec::with_capacity(count),
            costs: Vec::with_capacity(count),
        };
        for i in 0..count {
            let (key, cost) = self.key_and_cost(i, request)?;
            extracted.keys.push(key);
            extracted.costs.push(cost);
        }
        Ok(extracted)
    }

    /// Limit `limit`'s key and cost for `request`, or the verdict refusing it: a `400`
    /// when the key is missing, a `413` for a cost above what the limit can ever admit.
    #[inline]
    // Refusing is the rare path, and its response is moved once, into the verdict.
    #[allow(clippy::result_large_err)]
    fn key_and_cost(
        &self,
        limit: usize,
        request: &Parts,
    ) -> Result<(KeyBuf, u32), Response<Bytes>> {
        let spec = &self.limits[limit];
        let mut key = KeyBuf::new();
        if let Err(error) = spec.key.extract(request, &mut key) {
            let rejection = Rejection::Key {
                limit: &spec.name,
                error: &error,
            };
            return Err(self.response(&rejection, self.headers(None, None, &[])));
        }
        let cost = spec.cost.of(request);
        if let Err(beyond) = Op::Check.within_capacity(cost, spec.backend.max_cost()) {
            let rejection = Rejection::TooCostly {
                limit: &spec.name,
                cost,
                capacity: beyond.capacity(),
            };
            return Err(self.response(&rejection, self.headers(None, None, &[])));
        }
        Ok((key, cost))
    }

    /// What `outcome` tells the front end, for a request whose key on limit `i` is `keys[i]`
    /// (empty when the keys were not found).
    #[inline]
    pub(crate) fn verdict(&self, outcome: Outcome, keys: &[KeyBuf]) -> Verdict {
        match outcome {
            Outcome::Admit { report, wait } => Verdict::Pass {
                headers: self.headers(report.as_ref(), None, keys),
                wait,
            },
            Outcome::Deny { report, violated } => {
                let names: Vec<&str> = (0..self.limits.len())
                    .filter(|&i| violated & (1 << i) != 0)
                    .map(|i| self.limits[i].name.as_str())
                    .collect();
                let rejection = Rejection::TooManyRequests {
                    violated: &names,
                    retry_after: report.reset,
                };
                let headers = self.headers(Some(&report), Some(report.reset), keys);
                self.refuse(&rejection, headers)
            }
            Outcome::TableFull { limit } => {
                let rejection = Rejection::TableFull {
                    limit: &self.limits[limit].name,
                };
                let retry = crate::TABLE_FULL_RETRY_AFTER.as_secs();
                self.refuse(&rejection, self.headers(None, Some(retry), keys))
            }
            Outcome::Failed { limit, error } => {
                let rejection = Rejection::BackendFailed {
                    limit: limit.map(|i| self.limits[i].name.as_str()),
                    error: &error,
                };
                self.refuse(&rejection, self.headers(None, Some(1), keys))
            }
        }
    }

    /// The headers for a response reporting `report`, with `retry_after` seconds, to a
    /// request of `keys`.
    #[inline]
    fn headers(
        &self,
        report: Option<&Report>,
        retry_after: Option<u64>,
        keys: &[KeyBuf],
    ) -> RateLimitHeaders {
        RateLimitHeaders::for_report(self, report, retry_after, keys)
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

impl fmt::Debug for RequestLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &*self.settings;
        f.debug_struct("RequestLimiter")
            .field("limits", &settings.limits)
            .field("standard_headers", &settings.standard_headers)
            .field("legacy_headers", &settings.legacy_headers)
            .field("on_backend_error", &settings.on_backend_error)
            .field("exempt_preflight", &settings.exempt_preflight)
            .finish_non_exhaustive()
    }
}
