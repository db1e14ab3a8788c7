//! [`RequestLimit`]: one named limit of the layer: a backend, a key, a cost.

use super::key::{Global, KeyExtractor};
use super::tiers::{TierChooser, TierSlot, Tiers};
use crate::backend::Backend;
use http::request::Parts;
use std::fmt;
use std::sync::Arc;

/// What one request costs under a limit.
#[derive(Clone)]
pub enum Cost {
    /// The same for every request.
    Fixed(u32),
    /// Computed from the request (a batch size, a `Content-Length`).
    Function(Arc<dyn Fn(&Parts) -> u32 + Send + Sync>),
}

impl Cost {
    /// What `request` costs.
    #[inline]
    pub fn of(&self, request: &Parts) -> u32 {
        match self {
            Cost::Fixed(cost) => *cost,
            Cost::Function(f) => f(request),
        }
    }
}

impl fmt::Debug for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cost::Fixed(cost) => write!(f, "Fixed({cost})"),
            Cost::Function(_) => f.write_str("Function(..)"),
        }
    }
}

/// One named limit: a [backend](crate::backend::Backend) holding a quota per key, the
/// [key](KeyExtractor) a request is counted against (by default [`Global`]), and what a
/// request costs (by default 1).
///
/// The backend is anything behind the seam with `str` keys: a
/// [`KeyedLimiter<String, _>`](crate::KeyedLimiter), a direct [`Limiter`](crate::Limiter)
/// (one state, for [`Global`]), a Redis limiter, or an `Arc<dyn Backend<str>>` chosen at run
/// time.
///
/// ```
/// use sluicegate::http::{ClientIp, RequestLimit};
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let per_ip = RequestLimit::new("ip", KeyedLimiter::<String>::new(Quota::per_second(5))?)
///     .key(ClientIp::new());
/// let uploads = RequestLimit::new("upload-kib", KeyedLimiter::<String>::new(Quota::per_minute(10_240))?)
///     .key(ClientIp::new())
///     .cost_fn(|request| {
///         let bytes: u64 = request
///             .headers
///             .get(http::header::CONTENT_LENGTH)
///             .and_then(|v| v.to_str().ok()?.parse().ok())
///             .unwrap_or(0);
///         u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX)
///     });
/// # let _ = (per_ip, uploads);
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Clone)]
pub struct RequestLimit {
    pub(crate) name: String,
    pub(crate) backend: Arc<dyn Backend<str>>,
    pub(crate) key: Arc<dyn KeyExtractor>,
    pub(crate) cost: Cost,
    /// For a tiered limit: its tiers, and which of its quotas this slot decides.
    pub(crate) tier: Option<TierSlot>,
    /// Why a tiered limit's tiers cannot be used, reported when the limiter is built.
    pub(crate) invalid: Option<String>,
}

impl RequestLimit {
    /// A limit called `name` (1 to 64 printable ASCII characters: it goes into the headers)
    /// enforced by `backend`.
    pub fn new(name: impl Into<String>, backend: impl Backend<str> + 'static) -> Self {
        RequestLimit::shared(name, Arc::new(backend))
    }

    /// A limit enforced by a shared `backend` (chosen at run time, or also used elsewhere).
    pub fn shared(name: impl Into<String>, backend: Arc<dyn Backend<str>>) -> Self {
        RequestLimit {
            name: name.into(),
            backend,
            key: Arc::new(Global),
            cost: Cost::Fixed(1),
            tier: None,
            invalid: None,
        }
    }

    /// A limit called `name` whose backend each request chooses among `tiers` (by a header,
    /// or as the front end says): one limit in the headers per quota of the tier a request
    /// takes. A key's state belongs to its tier: see [`Tiers`].
    pub fn tiered(name: impl Into<String>, tiers: Tiers) -> Self {
        let name = name.into();
        match TierChooser::new(&name, tiers) {
            Ok(chooser) => RequestLimit {
                backend: chooser.first_backend(0),
                key: Arc::new(Global),
                cost: Cost::Fixed(1),
                tier: Some(TierSlot {
                    chooser: Arc::new(chooser),
                    part: None,
                }),
                invalid: None,
                name,
            },
            Err(reason) => {
                let mut limit = RequestLimit::new(
                    name,
                    crate::backend::DenyAll::new(crate::quota::Quota::per_second(1)),
                );
                limit.invalid = Some(reason);
                limit
            }
        }
    }

    /// Counts requests against the key `extractor` finds.
    pub fn key(mut self, extractor: impl KeyExtractor) -> Self {
        self.key = Arc::new(extractor);
        self
    }

    /// Every request costs `cost` (0 admits every request and consumes nothing).
    pub fn cost(mut self, cost: u32) -> Self {
        self.cost = Cost::Fixed(cost);
        self
    }

    /// A request costs what `cost` computes from it.
    pub fn cost_fn(mut self, cost: impl Fn(&Parts) -> u32 + Send + Sync + 'static) -> Self {
        self.cost = Cost::Function(Arc::new(cost));
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The backend (of a tiered limit, the first tier's).
    pub fn backend(&self) -> &Arc<dyn Backend<str>> {
        &self.backend
    }

    /// For a tiered limit, the labels of its tiers so far, in order; `None` for one quota.
    pub fn tiers(&self) -> Option<Vec<String>> {
        let slot = self.tier.as_ref()?;
        Some(slot.chooser.labels().map(str::to_owned).collect())
    }
}

impl fmt::Debug for RequestLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestLimit")
            .field("name", &self.name)
            .field("quota", &self.backend.quota())
            .field("cost", &self.cost)
            .finish_non_exhaustive()
    }
}
