//! The `rateLimit` middleware's native limiter, built from its options: the library's
//! `RequestLimiter` over limits in process (on the real clock, or a `ManualClock` the
//! JavaScript side moves) or on Redis (with the fallback `onBackendError` asks for), the
//! client-address rules read by the library, and what the decisions need beside it.

use crate::clock::NativeClock;
use crate::handle::{self, Tagged};
use crate::options::{algorithm, quota};
use crate::redis_target::RedisTarget;
use napi::bindgen_prelude::{block_on, Float64Array, Unknown};
use napi::{Env, Error, Status};
use napi_derive::napi;
use sluicegate::backend::{Backend, DenyAll};
use sluicegate::clock::{AnyClock, ManualClock};
use sluicegate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use sluicegate::http::front_end::{
    in_process_backend_bounded, key_extractor, parse_backend_error_mode, redis_backend,
    FrontEndError, FrontEndOption, FrontEndOptions, GivenKey,
};
use sluicegate::http::{
    BackendErrorMode, ClientIp, HeaderDraft, KeyExtractor, RateLimitLayer, RequestLimit,
    RequestLimiter, DEFAULT_MAX_KEYS,
};
use sluicegate::policy::{AlgorithmKind, KeySpec, Policy};
use sluicegate::redis::AnyRedisLimiter;
use std::fmt::Display;
use std::sync::Arc;

/// One limit, as `lib/ratelimit_options.js` hands it over.
#[napi(object)]
pub struct HttpLimitOptions {
    pub name: String,
    /// `ip`, `global` or `header:NAME`; ignored when `given`.
    pub key: String,
    /// The key comes from a JavaScript function, passed to each decision.
    pub given: bool,
    pub quota: String,
    pub algorithm: String,
    pub cost: u32,
    /// express-rate-limit's `limit: 0`: every request of this limit is refused (`quota`
    /// then gives the window, as `1/<windowMs>ms`; the library's `DenyAll`).
    pub closed: bool,
    /// Given as express-rate-limit's `windowMs`: a fixed window then starts at each key's
    /// first request, as express-rate-limit counts (other algorithms have no window).
    pub windowed: bool,
}

/// The middleware's options, checked by the JavaScript side.
#[napi(object)]
pub struct HttpOptions {
    pub limits: Vec<HttpLimitOptions>,
    /// Networks (`10.0.0.0/8`, `::1`) whose forwarding headers are believed; `unix` for a
    /// Unix socket's peer.
    pub trusted_proxies: Vec<String>,
    /// `x-forwarded-for`, `forwarded` or `both`.
    pub forwarded_headers: String,
    pub ipv6_prefix: u32,
    /// Where Redis is (a Cluster's seed nodes, comma-separated, when `redis_cluster`).
    pub redis: Option<RedisTarget>,
    pub redis_cluster: bool,
    /// `allow`, `deny` or `local`.
    pub on_backend_error: String,
    pub standard_headers: bool,
    /// `draft-6`, `draft-7`, `draft-8` or `draft-10` (the library's default when absent).
    pub headers_draft: Option<String>,
    pub legacy_headers: bool,
    /// The most keys each in-process keyed limit holds (the library's `DEFAULT_MAX_KEYS`
    /// when absent).
    pub max_keys: Option<u32>,
}

/// What an HTTP limiter handle holds.
pub(crate) struct HttpState {
    pub(crate) limiter: RequestLimiter,
    /// The limits whose keys JavaScript functions compute: index and name.
    pub(crate) given: Vec<(u32, String)>,
    /// Each limit's key extractor, the one the library's limit runs (`key_extractor`, as
    /// `RequestLimit::from_policy` builds it), to say which key a request was counted under;
    /// `None` for a limit keyed by a JavaScript function (JavaScript knows that key).
    pub(crate) extractors: Vec<Option<Arc<dyn KeyExtractor>>>,
    /// The client-address rules, for the one-time warning on a Unix socket.
    pub(crate) client_ip: ClientIp,
    /// Some limit is keyed by the client's address.
    pub(crate) keyed_by_ip: bool,
    /// The limits' Redis backends, for their counters.
    pub(crate) remotes: Vec<AnyRedisLimiter>,
    /// The clock the in-process limits read, for the instants the JavaScript side reports.
    pub(crate) clock: AnyClock,
    /// Keeps the verdict array alive; `out` points into it.
    _array: Float64Array,
    pub(crate) out: *mut f64,
}

impl Tagged for HttpState {
    const TAG: u64 = 0x5e_11_03;
}

/// Numbers in the verdict array.
pub(crate) const VERDICT_LEN: usize = 7;

/// An HTTP limiter handle for `options`, writing verdicts' numbers into `out`
/// ([`VERDICT_LEN`] numbers), its in-process limits on `clock` when given (a test's time).
/// Limits on Redis are built without waiting for Redis (while it is down, decisions fail and
/// `onBackendError` answers).
#[napi]
pub fn new_http_limiter<'env>(
    env: &'env Env,
    options: HttpOptions,
    mut out: Float64Array,
    clock: Option<&NativeClock>,
) -> napi::Result<Unknown<'env>> {
    if out.len() < VERDICT_LEN {
        return Err(invalid(format!(
            "the verdict array needs {VERDICT_LEN} numbers, got {}",
            out.len()
        )));
    }
    let client_ip = client_ip(&options)?;
    let mode = parse_backend_error_mode(&options.on_backend_error).map_err(named)?;
    let mut builder = RateLimitLayer::builder()
        .on_backend_error(mode.answer())
        .standard_headers(options.standard_headers)
        .legacy_headers(options.legacy_headers);
    if let (true, Some(draft)) = (options.standard_headers, &options.headers_draft) {
        builder = builder.headers_draft(draft.parse::<HeaderDraft>().map_err(invalid)?);
    }
    let manual = clock.map(|c| c.clock.clone());
    let building = Building {
        client_ip: &client_ip,
        options: &options,
        mode,
        manual: manual.as_ref(),
    };
    let mut given = Vec::new();
    let mut extractors = Vec::new();
    let mut remotes = Vec::new();
    for (i, spec) in options.limits.iter().enumerate() {
        builder = builder.limit(building.limit(spec, &mut remotes)?);
        if spec.given {
            given.push((i as u32, spec.name.clone()));
            extractors.push(None);
        } else {
            extractors.push(Some(
                key_extractor(&key_spec(spec)?, &client_ip).map_err(invalid)?,
            ));
        }
    }
    let keyed_by_ip = options
        .limits
        .iter()
        .any(|spec| !spec.given && matches!(key_spec(spec), Ok(KeySpec::PeerIp)));
    let limiter = builder.limiter().map_err(invalid)?;
    // SAFETY: only this thread writes the array, through `out`, between two reads of it.
    let data = unsafe { out.as_mut() }.as_mut_ptr();
    handle::create(
        env,
        HttpState {
            limiter,
            given,
            extractors,
            client_ip,
            keyed_by_ip,
            remotes,
            clock: AnyClock::from(manual),
            _array: out,
            out: data,
        },
    )
}

/// The client-IP key the options describe, read by the library (as Python's are).
fn client_ip(options: &HttpOptions) -> napi::Result<ClientIp> {
    FrontEndOptions {
        trusted_proxies: &options.trusted_proxies,
        forwarded_headers: &options.forwarded_headers,
        ipv6_prefix: options.ipv6_prefix,
    }
    .client_ip()
    .map_err(named)
}

/// The library's error about an option, under the option's Node name.
fn named(error: FrontEndError) -> Error {
    let option = match error.option {
        FrontEndOption::TrustedProxies => "trustedProxies",
        FrontEndOption::ForwardedHeaders => "forwardedHeaders",
        FrontEndOption::Ipv6Prefix => "ipv6Prefix",
        FrontEndOption::OnBackendError => "onBackendError",
        _ => "an option",
    };
    invalid(format!("{option}: {error}"))
}

/// What every limit is built with.
struct Building<'a> {
    client_ip: &'a ClientIp,
    options: &'a HttpOptions,
    mode: BackendErrorMode,
    /// The test clock of the in-process limits, if one was given.
    manual: Option<&'a ManualClock>,
}

impl Building<'_> {
    /// One limit, in process or on Redis under the library's name for HTTP limits (its
    /// backend then kept in `remotes`).
    fn limit(
        &self,
        spec: &HttpLimitOptions,
        remotes: &mut Vec<AnyRedisLimiter>,
    ) -> napi::Result<RequestLimit> {
        let named = |e: &dyn Display| invalid(format!("limit {:?}: {e}", spec.name));
        let key = key_spec(spec)?;
        let algorithm = algorithm(&spec.algorithm).map_err(|e| named(&e.reason))?;
        let mut quota = quota(&spec.quota).map_err(|e| named(&e.reason))?;
        if spec.windowed && algorithm == AlgorithmKind::FixedWindow {
            quota = quota.anchored();
        }
        let policy = Policy {
            name: spec.name.clone(),
            quota,
            algorithm,
            key,
        };
        let limit = if spec.closed {
            // Refusing everything needs no state, in process or on Redis.
            RequestLimit::new(policy.name.clone(), DenyAll::new(policy.quota))
        } else if let Some(target) = &self.options.redis {
            let redis = target.spec(self.options.redis_cluster);
            let backend = block_on(redis_backend(&policy, &redis, self.mode, false))
                .map_err(|e| invalid(format!("limit {:?} on Redis: {e}", policy.name)))?;
            remotes.push(backend.clone());
            RequestLimit::new(policy.name.clone(), backend)
        } else {
            RequestLimit::shared(policy.name.clone(), self.in_process(spec, &policy)?)
        };
        let limit = if spec.given {
            limit.key(GivenKey::new(policy.name))
        } else {
            limit.key(key_extractor(&policy.key, self.client_ip).map_err(invalid)?)
        };
        Ok(limit.cost(spec.cost))
    }

    /// The in-process backend of `policy`: a table of keys unless the limit is global, on
    /// the test clock if one was given (else the library's, on the real clock).
    fn in_process(
        &self,
        spec: &HttpLimitOptions,
        policy: &Policy,
    ) -> napi::Result<Arc<dyn Backend<str>>> {
        let keyed = spec.given || policy.key != KeySpec::Global;
        let max_keys = self
            .options
            .max_keys
            .map_or(DEFAULT_MAX_KEYS, |n| n as usize);
        let named = |e: &dyn Display| invalid(format!("limit {:?}: {e}", spec.name));
        let Some(clock) = self.manual else {
            return in_process_backend_bounded(policy.algorithm, policy.quota, keyed, max_keys)
                .map_err(|e| named(&e));
        };
        let clock = AnyClock::from(clock.clone());
        Ok(if keyed {
            let table =
                AnyKeyedLimiter::<String, AnyClock>::builder(policy.quota, policy.algorithm)
                    .clock(clock)
                    .max_keys(max_keys)
                    .build()
                    .map_err(|e| named(&e))?;
            Arc::new(table)
        } else {
            Arc::new(
                AnyLimiter::with_clock(policy.quota, policy.algorithm, clock)
                    .map_err(|e| named(&e))?,
            )
        })
    }
}

/// A limit's key as the library names it. A function's key is per request: the limit is
/// keyed (`PeerIp` stands for "keyed" here) and its extractor is replaced by the key handed in.
pub(crate) fn key_spec(spec: &HttpLimitOptions) -> napi::Result<KeySpec> {
    if spec.given {
        return Ok(KeySpec::PeerIp);
    }
    // The library's sentence names its own spelling (`peer-ip`); say Node's.
    spec.key.parse().map_err(|_| {
        invalid(format!(
            "limit {:?}: `key` is 'ip', 'global', 'header:NAME' or a function of the request, got {:?}",
            spec.name, spec.key
        ))
    })
}

pub(crate) fn invalid(error: impl Display) -> Error {
    Error::new(Status::InvalidArg, error.to_string())
}
