//! [`Fallback`]: what a [`RedisLimiter`](super::RedisLimiter) answers while Redis cannot.

use super::error::RedisError;
use crate::backend::{Backend, Op, Receipt, Reservation};
use crate::clock::Clock;
use crate::decision::Decision;
use crate::keyed::KeyedLimiter;
use crate::quota::Quota;
use crate::state::Algorithm;
use std::time::Duration;

/// What a limiter answers when Redis times out or cannot be reached (the errors for which
/// [`RedisError::is_outage`] is true). Other errors (a wrong-type key, a capacity error, a
/// script error) are always returned: waiting or another server would not change them.
///
/// While the link is down, calls do not wait for Redis at all: the fallback answers at once
/// until a background probe finds Redis answering again (see
/// [`RedisBuilder::lazy`](super::RedisBuilder::lazy)).
///
/// ```
/// use sluicegate::redis::Fallback;
///
/// // Each of 4 servers admits up to a quarter of the quota on its own while Redis is down.
/// let fallback = Fallback::Local { servers: 4 };
/// assert_ne!(fallback, Fallback::default());
/// assert_eq!(Fallback::default(), Fallback::Error);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Fallback {
    /// Return the [`RedisError`]; the caller decides (the HTTP layer's `on_backend_error`).
    #[default]
    Error,
    /// Fail open: admit, reporting `remaining` 0 (nothing is known).
    Allow,
    /// Fail closed: deny, with a `retry_after` of one second.
    Deny,
    /// Decide in this process with a [`KeyedLimiter`] of the same algorithm and the quota
    /// divided by `servers` (limit and burst, each at least 1), so that `servers` processes
    /// deciding alone admit about what the shared limit would. State kept locally during an
    /// outage is not sent to Redis afterwards.
    Local {
        /// How many servers share the limit (at least 1).
        servers: u32,
    },
}

impl Fallback {
    /// The `mode` label of the fallback metric.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Fallback::Error => "error",
            Fallback::Allow => "allow",
            Fallback::Deny => "deny",
            Fallback::Local { .. } => "local",
        }
    }
}

/// How long a fail-closed denial tells the client to wait.
const DENY_RETRY: Duration = Duration::from_secs(1);

/// The fallback, ready to answer.
pub(crate) enum Standby<A: Algorithm, L: Clock> {
    Error,
    Allow,
    Deny,
    Local(Box<KeyedLimiter<String, A, L>>),
}

impl<A: Algorithm, L: Clock> Standby<A, L> {
    /// The fallback `fallback` for `quota`, on `clock`.
    pub(crate) fn new(fallback: Fallback, quota: Quota, clock: L) -> Result<Self, RedisError> {
        Ok(match fallback {
            Fallback::Error => Standby::Error,
            Fallback::Allow => Standby::Allow,
            Fallback::Deny => Standby::Deny,
            Fallback::Local { servers: 0 } => {
                return Err(RedisError::config(
                    "Fallback::Local needs at least one server",
                ))
            }
            Fallback::Local { servers } => {
                let share = |n: u32| (n / servers).max(1);
                let local = Quota::new(share(quota.limit()), quota.period())?
                    .try_with_burst(share(quota.burst()))?;
                Standby::Local(Box::new(KeyedLimiter::with_clock(local, clock)?))
            }
        })
    }

    /// The fallback's decision, or `None` when the error is to be returned.
    pub(crate) fn decide(&self, key: &str, cost: u32, op: Op, limit: u32) -> Option<Decision> {
        match self {
            Standby::Error => None,
            Standby::Allow => Some(Decision::new(
                true,
                limit,
                0,
                None,
                Duration::ZERO,
                Duration::ZERO,
            )),
            Standby::Deny => Some(denial(limit, DENY_RETRY)),
            Standby::Local(local) => Some(match Backend::decide(&**local, key, cost, op).now() {
                Ok(Ok(decision)) => decision,
                // A cost above the divided capacity: the local share can never admit it.
                _ => denial(limit, local.quota().period()),
            }),
        }
    }

    /// The fallback's reservation, or `None` when the error is to be returned.
    pub(crate) fn reserve(&self, key: &str, cost: u32, limit: u32) -> Option<Reservation> {
        match self {
            Standby::Local(local) => Some(match Backend::reserve(&**local, key, cost).now() {
                Ok(Ok(reservation)) => reservation,
                _ => Reservation {
                    decision: denial(limit, local.quota().period()),
                    receipt: Receipt::none(),
                },
            }),
            other => other
                .decide(key, cost, Op::Check, limit)
                .map(|decision| Reservation {
                    decision,
                    receipt: Receipt::none(),
                }),
        }
    }

    /// Undoes a local reservation.
    pub(crate) fn undo(&self, key: &str, receipt: Receipt) -> bool {
        match self {
            Standby::Local(local) => {
                matches!(Backend::undo(&**local, key, receipt).now(), Ok(Ok(true)))
            }
            _ => false,
        }
    }

    /// True unless errors are returned.
    pub(crate) fn is_active(&self) -> bool {
        !matches!(self, Standby::Error)
    }
}

impl<A: Algorithm, L: Clock> std::fmt::Debug for Standby<A, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Standby::Error => f.write_str("Error"),
            Standby::Allow => f.write_str("Allow"),
            Standby::Deny => f.write_str("Deny"),
            Standby::Local(local) => f.debug_tuple("Local").field(&local.quota()).finish(),
        }
    }
}

fn denial(limit: u32, retry: Duration) -> Decision {
    Decision::new(false, limit, 0, Some(retry), Duration::ZERO, Duration::ZERO)
}
