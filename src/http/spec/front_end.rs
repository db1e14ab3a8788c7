//! [`FrontEnd`]: what a [`FrontEndSpec`](super::FrontEndSpec) builds, and what a front end
//! needs beside the limiter to hand requests over.

use super::check::open_tier;
use super::quotas::LimitQuotas;
use crate::http::key::ClientIp;
use crate::http::limiter::RequestLimiter;
use std::fmt;
use std::ops::Range;

/// A built front end: the [`RequestLimiter`] that decides its requests, and what a front end
/// must know to hand them over: which limits take a key or a tier from the host per request
/// (under their names, in [`GivenKeys`](crate::http::front_end::GivenKeys) and
/// [`GivenTiers`](crate::http::front_end::GivenTiers)), which of the limiter's limits each
/// configured limit became, the client-address rule, whether to reserve for refunds, and the
/// limiters on Redis (whose counters say how Redis fares).
pub struct FrontEnd {
    pub(crate) limiter: RequestLimiter,
    pub(crate) limits: Vec<Built>,
    pub(crate) client_ip: ClientIp,
    pub(crate) refund_failed: bool,
    pub(crate) refund_successful: bool,
    #[cfg(feature = "redis")]
    pub(crate) redis: Vec<crate::redis::AnyRedisLimiter>,
}

/// One configured limit, built.
#[derive(Debug)]
pub(crate) struct Built {
    pub(crate) name: String,
    /// The host hands its key in.
    pub(crate) given_key: bool,
    /// The host hands its tier in.
    pub(crate) given_tier: bool,
    /// Its slots in the limiter's limits.
    pub(crate) slots: Range<usize>,
    /// How an open tier's label is read, for a host that checks it first.
    pub(crate) open: Option<LimitQuotas>,
}

impl FrontEnd {
    /// The limiter deciding this front end's requests.
    pub fn limiter(&self) -> &RequestLimiter {
        &self.limiter
    }

    /// The limiter, for a front end that needs nothing else.
    pub fn into_limiter(self) -> RequestLimiter {
        self.limiter
    }

    /// The configured limits' names, in order (a limit of several quotas once).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.limits.iter().map(|l| l.name.as_str())
    }

    /// The configured limits whose key the host computes per request (`key: "given"`):
    /// their indices and names. Each request carries their keys in a
    /// [`GivenKeys`](crate::http::front_end::GivenKeys) extension, under these names.
    pub fn given_keys(&self) -> impl Iterator<Item = (usize, &str)> {
        let given = self.limits.iter().enumerate().filter(|(_, l)| l.given_key);
        given.map(|(i, l)| (i, l.name.as_str()))
    }

    /// The configured limits whose tier the host chooses per request (`tiers.by: "given"`):
    /// their indices and names. Each request carries their tiers in a
    /// [`GivenTiers`](crate::http::front_end::GivenTiers) extension, under these names.
    pub fn given_tiers(&self) -> impl Iterator<Item = (usize, &str)> {
        let given = self.limits.iter().enumerate().filter(|(_, l)| l.given_tier);
        given.map(|(i, l)| (i, l.name.as_str()))
    }

    /// Whether `label` is a tier of configured limit `limit`, said before deciding (a host
    /// that raises its own error for a function returning something else): declared tiers
    /// by label, open ones by reading the label as one quota. The reason when not.
    pub fn check_tier(&self, limit: usize, label: &str) -> Result<(), String> {
        let built = self
            .limits
            .get(limit)
            .ok_or_else(|| format!("no limit {limit}"))?;
        if let Some(read) = built.open {
            return open_tier(read, label).map(drop);
        }
        let labels = self.limiter.limits()[built.slots.start]
            .tiers()
            .ok_or_else(|| format!("limit {:?} has no tiers", built.name))?;
        if labels.iter().any(|l| l == label) {
            Ok(())
        } else {
            Err(format!(
                "{label:?} is not one of limit {:?}'s tiers {labels:?}",
                built.name
            ))
        }
    }

    /// The limiter's limits (by index in [`RequestLimiter::limits`]) that configured limit
    /// `limit` became: one, or one per quota (of its largest tier).
    pub fn slots(&self, limit: usize) -> Range<usize> {
        self.limits.get(limit).map_or(0..0, |l| l.slots.clone())
    }

    /// The configured limit that the limiter's limit `slot` belongs to (what a
    /// [`Report`](crate::http::Report)'s `limit` indexes).
    pub fn limit_of(&self, slot: usize) -> Option<usize> {
        self.limits.iter().position(|l| l.slots.contains(&slot))
    }

    /// The client-address rule the options describe (to tell a host's functions the address
    /// the trusted-proxy rules resolved).
    pub fn client_ip(&self) -> &ClientIp {
        &self.client_ip
    }

    /// True when some responses give their request back: decide with
    /// [`RequestLimiter::decide_reserving`] and ask [`refunds`](Self::refunds) once the
    /// response is known.
    pub fn reserves(&self) -> bool {
        self.refund_failed || self.refund_successful
    }

    /// Whether a response the host judged `successful` (or failed) gives its request back.
    pub fn refunds(&self, successful: bool) -> bool {
        if successful {
            self.refund_successful
        } else {
            self.refund_failed
        }
    }

    /// The limiters on Redis, in the order of the limits (their counters and
    /// [`is_available`](crate::redis::AnyRedisLimiter::is_available) say how Redis fares);
    /// open tiers made later are not among them.
    #[cfg(feature = "redis")]
    pub fn redis_limiters(&self) -> &[crate::redis::AnyRedisLimiter] {
        &self.redis
    }
}

impl fmt::Debug for FrontEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrontEnd")
            .field("limiter", &self.limiter)
            .field("limits", &self.limits)
            .field("refund_failed", &self.refund_failed)
            .field("refund_successful", &self.refund_successful)
            .finish_non_exhaustive()
    }
}
