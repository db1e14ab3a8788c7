//! [`Tiers`]: a limit whose backend is chosen per request (free users 10 a minute, pro 100),
//! decided inside the one [`RequestLimiter`](super::RequestLimiter) with the others.
//!
//! A key's state belongs to its tier, as in [`TieredLimiter`](crate::tiers::TieredLimiter):
//! each tier is its own backend (its own keyed table in process, its own Redis limiter under
//! its own prefix), so a key that changes tier starts from that tier's full allowance.

use super::headers::{push_sf_string, window_policy};
use super::key::KeyError;
use crate::backend::{Backend, Call, DenyAll};
use crate::policy::quota_name;
use crate::quota::Quota;
use http::header::{HeaderName, HeaderValue};
use http::request::Parts;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Who chooses a tiered limit's tier for each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TierSource {
    /// The value of this request header names the tier. Only behind a gateway that sets it
    /// (after authenticating the client): a client could name any tier.
    Header(HeaderName),
    /// The front end chooses (a function of the request in the Node and Python middlewares)
    /// and hands the tier in as [`GivenTiers`], under the limit's name.
    Given,
}

/// The tiers a front end chose for a request, by limit name: a request extension that a
/// limit of [`TierSource::Given`] reads, as [`GivenKeys`](super::front_end::GivenKeys) are
/// for keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GivenTiers(Vec<(String, String)>);

impl GivenTiers {
    /// No tiers yet.
    pub fn new() -> Self {
        GivenTiers::default()
    }

    /// Records `tier` as limit `limit`'s tier for this request.
    pub fn insert(&mut self, limit: impl Into<String>, tier: impl Into<String>) {
        self.0.push((limit.into(), tier.into()));
    }

    fn get(&self, limit: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(name, _)| name == limit)
            .map(|(_, tier)| tier.as_str())
    }
}

/// Makes the backend of an open tier the first time a request names it (a tier per distinct
/// number an express-rate-limit `limit` function returns).
pub trait TierMaker: Send + Sync + 'static {
    /// Whether `label` can be a tier, said at once: the reason when not.
    fn check(&self, label: &str) -> Result<(), String>;

    /// The backend of the tier `label` (checked), made: at once in process, or after a
    /// wait (a Redis limiter's connection).
    fn make(&self, label: &str) -> Call<'static, Arc<dyn Backend<str>>>;

    /// True when [`make`](Self::make) answers at once.
    fn immediate(&self) -> bool;
}

/// One tier's backends, one per quota.
type Backends = Vec<Arc<dyn Backend<str>>>;

/// The tiers of one limit and who chooses among them: declared tiers, each one backend or
/// several (a limit of several quotas: one limit each, named by
/// [`quota_name`](crate::policy::quota_name)), or open ones, made as they are named. Give
/// them to [`RequestLimit::tiered`](super::RequestLimit::tiered).
///
/// ```
/// use sluicegate::http::{ClientIp, RequestLimit, TierSource, Tiers};
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let plans = Tiers::new(TierSource::Header(http::HeaderName::from_static("x-plan")))
///     .tier("free", KeyedLimiter::<String>::new(Quota::per_minute(10))?)
///     .tier("pro", KeyedLimiter::<String>::new(Quota::per_minute(100))?)
///     .default_tier("free");
/// let limit = RequestLimit::tiered("plan", plans).key(ClientIp::new());
/// # let _ = limit;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Tiers {
    source: TierSource,
    declared: Vec<(String, Backends)>,
    default: Option<String>,
    open: Option<(usize, Arc<dyn TierMaker>)>,
}

impl Tiers {
    /// No tiers yet, chosen by `source`.
    pub fn new(source: TierSource) -> Self {
        Tiers {
            source,
            declared: Vec::new(),
            default: None,
            open: None,
        }
    }

    /// Adds the tier `label`, decided by `backend`.
    pub fn tier(self, label: impl Into<String>, backend: impl Backend<str> + 'static) -> Self {
        self.tier_of(label, vec![Arc::new(backend)])
    }

    /// Adds the tier `label`, decided by every one of `backends` (one per quota), all or
    /// nothing.
    pub fn tier_of(
        mut self,
        label: impl Into<String>,
        backends: Vec<Arc<dyn Backend<str>>>,
    ) -> Self {
        self.declared.push((label.into(), backends));
        self
    }

    /// Requests whose header is missing or names no tier (or for which the front end gave
    /// none) take tier `label`; without one, they are refused (`400` for a header).
    pub fn default_tier(mut self, label: impl Into<String>) -> Self {
        self.default = Some(label.into());
        self
    }

    /// Open tiers: any label `maker` accepts is a tier, made the first time a request names
    /// it, at most `max` of them (chosen by the front end: [`TierSource::Given`]).
    pub fn open(mut self, max: usize, maker: impl TierMaker) -> Self {
        self.open = Some((max, Arc::new(maker)));
        self
    }
}

impl fmt::Debug for Tiers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels: Vec<&str> = self.declared.iter().map(|(l, _)| l.as_str()).collect();
        f.debug_struct("Tiers")
            .field("source", &self.source)
            .field("declared", &labels)
            .field("default", &self.default)
            .field("open", &self.open.as_ref().map(|(max, _)| max))
            .finish()
    }
}

/// One limit of one tier, as the headers and refusals name it.
pub(crate) struct TierPart {
    pub(crate) name: String,
    /// The name as a Structured Field String.
    pub(crate) sf_name: String,
    pub(crate) backend: Arc<dyn Backend<str>>,
    /// Its draft-6/draft-7 `RateLimit-Policy`.
    pub(crate) window_policy: Option<HeaderValue>,
}

/// Which part of a tiered limit a slot of the limiter decides: its `part`-th quota, in the
/// tier each request takes (`None`: the whole limit, before the builder lays out its slots).
#[derive(Clone)]
pub(crate) struct TierSlot {
    pub(crate) chooser: Arc<TierChooser>,
    pub(crate) part: Option<usize>,
}

/// A tiered limit, shared by its slots (one per quota of its largest tier): its tiers'
/// labels and parts, and the choice of one per request.
pub(crate) struct TierChooser {
    /// The limit's name, under which tiers and keys are handed in.
    pub(crate) limit: String,
    source: TierSource,
    /// The labels, in order; an open tier's is written once, before `count` counts it.
    labels: Box<[OnceLock<String>]>,
    count: AtomicUsize,
    /// The parts of each tier; an open tier's are made on first use.
    parts: Box<[OnceLock<Box<[TierPart]>>]>,
    default: Option<usize>,
    maker: Option<Arc<dyn TierMaker>>,
    /// Serializes adding an open tier.
    adding: Mutex<()>,
    /// The most parts a tier has: the limit's slots.
    pub(crate) width: usize,
    immediate: bool,
}

impl TierChooser {
    /// The chooser of `tiers` for the limit `limit`, or why they cannot be used.
    pub(crate) fn new(limit: &str, tiers: Tiers) -> Result<TierChooser, String> {
        let Tiers {
            source,
            declared,
            default,
            open,
        } = tiers;
        if declared.is_empty() && open.is_none() {
            return Err(format!("limit {limit:?} is tiered but has no tier"));
        }
        if open.is_some() && !declared.is_empty() {
            return Err(format!(
                "limit {limit:?}: tiers are declared or open, not both"
            ));
        }
        if open.is_some() && source != TierSource::Given {
            return Err(format!(
                "limit {limit:?}: open tiers are chosen by the front end (TierSource::Given), \
                 never by a client's header"
            ));
        }
        let capacity = match &open {
            Some((max, _)) if *max == 0 => {
                return Err(format!(
                    "limit {limit:?}: open tiers need room for at least one"
                ))
            }
            Some((max, _)) => *max,
            None => declared.len(),
        };
        let mut chooser = TierChooser {
            limit: limit.to_owned(),
            source,
            labels: (0..capacity).map(|_| OnceLock::new()).collect(),
            count: AtomicUsize::new(0),
            parts: (0..capacity).map(|_| OnceLock::new()).collect(),
            default: None,
            maker: None,
            adding: Mutex::new(()),
            width: 1,
            immediate: true,
        };
        for (i, (label, backends)) in declared.into_iter().enumerate() {
            if chooser.find(&label).is_some() {
                return Err(format!("limit {limit:?}: tier {label:?} is given twice"));
            }
            if backends.is_empty() {
                return Err(format!("limit {limit:?}: tier {label:?} has no backend"));
            }
            chooser.width = chooser.width.max(backends.len());
            chooser.immediate &= backends.iter().all(|b| b.immediate());
            let _ = chooser.labels[i].set(label);
            let _ = chooser.parts[i].set(chooser.parts_of(backends));
            chooser.count.store(i + 1, Ordering::Release);
        }
        if let Some((_, maker)) = open {
            chooser.immediate = maker.immediate();
            chooser.maker = Some(maker);
        }
        if let Some(label) = default {
            if let Some(maker) = &chooser.maker {
                maker
                    .check(&label)
                    .map_err(|e| format!("limit {limit:?}: default tier: {e}"))?;
                chooser.default = Some(chooser.add(&label).map_err(|e| e.to_string())?);
            } else {
                chooser.default = Some(chooser.find(&label).ok_or_else(|| {
                    format!("limit {limit:?}: the default tier {label:?} is not one of its tiers")
                })?);
            }
        }
        Ok(chooser)
    }

    /// True when every tier's backend answers at once.
    pub(crate) fn immediate(&self) -> bool {
        self.immediate
    }

    /// A backend for the limit's slot `part` to show before any request (the first tier's,
    /// or, with none made yet, one refusing everything).
    pub(crate) fn first_backend(&self, part: usize) -> Arc<dyn Backend<str>> {
        match self
            .parts
            .first()
            .and_then(OnceLock::get)
            .and_then(|p| p.get(part))
        {
            Some(found) => Arc::clone(&found.backend),
            None => Arc::new(DenyAll::new(Quota::per_second(1))),
        }
    }

    /// The tier a request takes: chosen by its header or handed in by the front end, else
    /// the default, else a key error (`400` for a header naming no tier, `500` for a front
    /// end that gave none or an unknown one).
    pub(crate) fn choose(&self, request: &Parts) -> Result<usize, KeyError> {
        match &self.source {
            TierSource::Header(header) => {
                let named = request
                    .headers
                    .get(header)
                    .map(|v| v.to_str().unwrap_or(""));
                if let Some(tier) = named.and_then(|label| self.find(label)) {
                    return Ok(tier);
                }
                self.default.ok_or_else(|| {
                    let what = match named {
                        None => format!("the {header} header is missing"),
                        Some(label) => format!("the {header} header names no tier ({label:?})"),
                    };
                    KeyError::missing(format!("{what}: it says which tier applies"))
                })
            }
            TierSource::Given => {
                let given = request
                    .extensions
                    .get::<GivenTiers>()
                    .and_then(|tiers| tiers.get(&self.limit));
                match given {
                    Some(label) => match self.find(label) {
                        Some(tier) => Ok(tier),
                        None if self.maker.is_some() => self.add(label),
                        None => Err(KeyError::unavailable(format!(
                            "the front end chose tier {label:?}, which is none of its tiers"
                        ))),
                    },
                    None => self.default.ok_or(KeyError::unavailable(
                        "the front end gave no tier for this limit (a GivenTiers request \
                         extension)",
                    )),
                }
            }
        }
    }

    /// The tier labelled `label`, if any.
    pub(crate) fn find(&self, label: &str) -> Option<usize> {
        let count = self.count.load(Ordering::Acquire);
        (0..count).find(|&i| self.labels[i].get().is_some_and(|l| l == label))
    }

    /// The labels of the tiers so far, in order.
    pub(crate) fn labels(&self) -> impl Iterator<Item = &str> {
        let count = self.count.load(Ordering::Acquire);
        self.labels[..count]
            .iter()
            .filter_map(|l| l.get().map(String::as_str))
    }

    /// Adds the open tier `label` (made later, by [`ensure`](Self::ensure)).
    fn add(&self, label: &str) -> Result<usize, KeyError> {
        let maker = self.maker.as_ref().expect("only open tiers are added");
        maker.check(label).map_err(|reason| {
            KeyError::unavailable(format!("the front end chose tier {label:?}: {reason}"))
        })?;
        let _adding = self.adding.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tier) = self.find(label) {
            return Ok(tier);
        }
        let count = self.count.load(Ordering::Acquire);
        if count == self.labels.len() {
            return Err(KeyError::unavailable(format!(
                "the front end chose a tier ({label:?}) beyond the {} this limit keeps, each \
                 with its own states",
                self.labels.len()
            )));
        }
        let _ = self.labels[count].set(label.to_owned());
        self.count.store(count + 1, Ordering::Release);
        Ok(count)
    }

    /// Makes tier `tier`'s parts if they are not yet: at once in process.
    pub(crate) fn ensure(&self, tier: usize) -> Call<'_, ()> {
        if self.parts[tier].get().is_some() {
            return Call::ready(Ok(()));
        }
        let (Some(maker), Some(label)) = (&self.maker, self.labels[tier].get()) else {
            return Call::ready(Ok(()));
        };
        match maker.make(label).now() {
            Ok(made) => Call::ready(made.map(|backend| self.store(tier, backend))),
            Err(pending) => {
                // Two first requests may make it both; the first stored wins.
                Call::new(async move {
                    let backend = pending.await?;
                    self.store(tier, backend);
                    Ok(())
                })
            }
        }
    }

    /// Stores open tier `tier`'s backend: one limit, named as the limit.
    fn store(&self, tier: usize, backend: Arc<dyn Backend<str>>) {
        let _ = self.parts[tier].set(Box::new([part(self.limit.clone(), backend)]));
    }

    /// Tier `tier`'s part `part`: `None` when the tier has fewer parts (the slot is not
    /// decided in that tier) or is not made yet.
    #[inline]
    pub(crate) fn part(&self, tier: usize, part: usize) -> Option<&TierPart> {
        self.parts.get(tier)?.get()?.get(part)
    }

    /// True when slot `part` is decided in tier `tier` (an open tier not yet made has one).
    #[inline]
    pub(crate) fn active(&self, tier: usize, part: usize) -> bool {
        match self.parts.get(tier).and_then(OnceLock::get) {
            Some(parts) => part < parts.len(),
            None => part == 0,
        }
    }

    /// Every backend made so far.
    pub(crate) fn backends(&self) -> impl Iterator<Item = &Arc<dyn Backend<str>>> {
        self.parts
            .iter()
            .filter_map(OnceLock::get)
            .flat_map(|parts| parts.iter().map(|p| &p.backend))
    }

    fn parts_of(&self, backends: Vec<Arc<dyn Backend<str>>>) -> Box<[TierPart]> {
        let count = backends.len();
        backends
            .into_iter()
            .enumerate()
            .map(|(i, backend)| part(quota_name(&self.limit, i, count).into_owned(), backend))
            .collect()
    }
}

fn part(name: String, backend: Arc<dyn Backend<str>>) -> TierPart {
    let mut sf_name = String::new();
    push_sf_string(&mut sf_name, &name);
    TierPart {
        window_policy: window_policy(backend.quota()),
        name,
        sf_name,
        backend,
    }
}

impl fmt::Debug for TierChooser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TierChooser")
            .field("limit", &self.limit)
            .field("source", &self.source)
            .field("tiers", &self.labels().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
