//! [`RequestLimiter`]: where an HTTP request is decided, once, for every front end.

use super::decide::{self, Outcome};
use super::headers::RateLimitHeaders;
use super::limit::RequestLimit;
use super::on_backend_error::OnBackendError;
use super::report::Report;
use super::settings::{Extracted, Settings};
use super::verdict::{Deciding, PendingVerdict, Verdict};
use crate::backend::{BackendError, BackendErrorKind, Call, Op};
use http::request::Parts;
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
/// so are the Node and Python middlewares; build one with [`RateLimitBuilder::limiter`](super::RateLimitBuilder::limiter).
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

impl RequestLimiter {
    pub(crate) fn new(settings: Settings) -> Self {
        RequestLimiter {
            settings: Arc::new(settings),
        }
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
    /// header's value, what a key function returned) in every limit, and in every tier of a
    /// tiered one: express-rate-limit's `resetKey`. Resolves to whether any limit held a
    /// state for it; complete at once ([`Call::now`]) when every limit is in process. The
    /// first backend error ends it (the limits before it have forgotten the key).
    pub fn reset(&self, key: &str) -> Call<'_, bool> {
        let settings = &*self.settings;
        let backends = move || {
            settings
                .limits
                .iter()
                .enumerate()
                .flat_map(move |(i, limit)| {
                    // A tiered limit's backends once, with its first slot.
                    let first_slot = limit.tier.as_ref().map(|slot| {
                        i == 0
                            || !settings.limits[i - 1]
                                .tier
                                .as_ref()
                                .is_some_and(|before| Arc::ptr_eq(&before.chooser, &slot.chooser))
                    });
                    let tiered: Vec<&dyn crate::backend::Backend<str>> =
                        match (&limit.tier, first_slot) {
                            (Some(slot), Some(true)) => {
                                slot.chooser.backends().map(|b| &**b).collect()
                            }
                            (Some(_), _) => Vec::new(),
                            (None, _) => vec![&*limit.backend],
                        };
                    tiered
                })
        };
        if settings.immediate {
            let mut held = false;
            for backend in backends() {
                match backend.reset(key).now() {
                    Ok(Ok(reset)) => held |= reset,
                    Ok(Err(error)) => return Call::ready(Err(error)),
                    Err(_) => unreachable!("an immediate backend's call is complete"),
                }
            }
            return Call::ready(Ok(held));
        }
        let key = key.to_owned();
        Call::new(async move {
            let mut held = false;
            for backend in backends() {
                held |= backend.reset(&key).await?;
            }
            Ok(held)
        })
    }

    /// The name of the limit `report` reports, in the tier the request took: what its
    /// `RateLimit` header names.
    pub fn reported_name(&self, report: &Report) -> &str {
        self.settings.name(report.limit, report.tier.unwrap_or(0))
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
        if let ([limit], false) = (&settings.limits[..], settings.tiered) {
            // One limit, the common case: nothing allocated on the way.
            let (key, cost) = match settings.key_and_cost(0, 0, request) {
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
                Some(result) => Deciding::Now(settings.verdict(
                    decide::single(result, on_error),
                    std::slice::from_ref(&key),
                    &[],
                )),
                None => self.later(Extracted {
                    keys: vec![key],
                    costs: vec![cost],
                    tiers: Vec::new(),
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
        let backends = settings.backends(&extracted.tiers);
        let deciding = decide::all(&backends, &extracted.keys, &extracted.costs, on_error);
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
        Deciding::Now(settings.verdict(outcome, &extracted.keys, &extracted.tiers))
    }

    /// Decides in a boxed future: a remote backend's round trip.
    fn later(&self, extracted: Extracted) -> Deciding {
        let settings = Arc::clone(&self.settings);
        Deciding::Later(PendingVerdict(Box::pin(async move {
            let on_error = settings.on_backend_error;
            let Extracted { keys, costs, tiers } = extracted;
            let outcome = decide_later(&settings, &keys, &costs, &tiers, on_error).await;
            settings.verdict(outcome, &keys, &tiers)
        })))
    }
}

/// A request's decision on backends that may wait: its open tiers made first, then every
/// limit decided (one alone without the protocol's steps).
async fn decide_later(
    settings: &Settings,
    keys: &[super::key::KeyBuf],
    costs: &[u32],
    tiers: &[usize],
    on_error: OnBackendError,
) -> Outcome {
    if let Some(making) = settings.ensure_tiers(tiers) {
        if let Err(error) = making.await {
            return decide::failed(None, error, on_error);
        }
        if let Some(refusal) = settings.too_costly(costs, tiers) {
            return refusal;
        }
    }
    if let ([limit], [key], [cost], false) = (&settings.limits[..], keys, costs, settings.tiered) {
        let result = limit.backend.decide(key.as_str(), *cost, Op::Check).await;
        return decide::single(result, on_error);
    }
    let backends = settings.backends(tiers);
    decide::all(&backends, keys, costs, on_error).await
}

impl fmt::Debug for RequestLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &*self.settings;
        f.debug_struct("RequestLimiter")
            .field("limits", &settings.limits)
            .field("standard_headers", &settings.form.standard)
            .field("legacy_headers", &settings.form.legacy)
            .field("on_backend_error", &settings.on_backend_error)
            .field("exempt_preflight", &settings.exempt_preflight)
            .finish_non_exhaustive()
    }
}
