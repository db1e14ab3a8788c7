//! [`RedisError`]: why a [`RedisLimiter`](super::RedisLimiter) could not decide.

use crate::backend::{BackendError, BackendErrorKind};
use crate::error::{CapacityError, QuotaError};
use std::fmt;
use std::time::Duration;

/// Why a [`RedisLimiter`](super::RedisLimiter) could not decide, or could not be built.
///
/// Every variant says what happened in its `Display`, which never shows a rate-limit key
/// (it may be an API token): keys appear as a
/// [`KeyHash`](crate::telemetry::KeyHash), and [`RedisError::key`] gives the
/// Redis key itself to whoever needs to inspect it.
///
/// [`kind`](RedisError::kind) sorts the variants the way a fallback or the HTTP layer needs:
/// [`Timeout`](RedisError::Timeout) and [`Unavailable`](RedisError::Unavailable) are
/// outages, during which a configured [`Fallback`](super::Fallback) decides instead;
/// everything else is an answer that waiting will not change.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RedisError {
    /// Redis did not answer within the limiter's per-call timeout.
    Timeout {
        /// The timeout that ran out.
        after: Duration,
    },
    /// Redis could not be reached: the connection was refused or lost, the limiter has not
    /// connected yet (built with [`lazy`](super::RedisBuilder::lazy)), it is reconnecting
    /// after such an error, or the server cannot serve writes now (loading, out of memory,
    /// a read-only replica, a cluster without quorum).
    Unavailable {
        /// What the client or the server said.
        reason: String,
    },
    /// The server answered with an error that retrying will not fix: a script error, a
    /// missing permission, a command refused.
    Script {
        /// The server's error message.
        message: String,
    },
    /// The key holds a Redis value of another type (a list, a hash, ...): another program
    /// uses it. It is left untouched.
    WrongType {
        /// The Redis key.
        key: String,
    },
    /// The key holds a value of the right Redis type whose contents are not this
    /// algorithm's state: another program's data, or another sluicegate algorithm's state
    /// under the same prefix. It is left untouched.
    Foreign {
        /// The Redis key.
        key: String,
        /// What the script expected, in its words.
        detail: String,
    },
    /// A request whose cost exceeds the quota's capacity: refused before any round trip,
    /// since no wait can admit it.
    Capacity(CapacityError),
    /// The quota cannot run exactly on Redis with this algorithm (it would need integers
    /// beyond 2^53 in Redis's Lua, or a period shorter than Redis's microsecond clock), or
    /// the local fallback cannot run it.
    Quota(QuotaError),
    /// The limiter's configuration is invalid: a URL that does not parse, a prefix that
    /// would break hash tags.
    Config {
        /// What is wrong.
        reason: String,
    },
}

impl RedisError {
    /// The backend-neutral kind: what the HTTP layer and [`all_of`](crate::backend::all_of)
    /// act on.
    pub fn kind(&self) -> BackendErrorKind {
        match self {
            RedisError::Timeout { .. } => BackendErrorKind::Timeout,
            RedisError::Unavailable { .. } => BackendErrorKind::Unavailable,
            RedisError::Capacity(_) => BackendErrorKind::Capacity,
            RedisError::Script { .. }
            | RedisError::WrongType { .. }
            | RedisError::Foreign { .. }
            | RedisError::Quota(_)
            | RedisError::Config { .. } => BackendErrorKind::Rejected,
        }
    }

    /// True for the failures a [`Fallback`](super::Fallback) covers: a timeout, or Redis
    /// unreachable.
    pub fn is_outage(&self) -> bool {
        matches!(
            self,
            RedisError::Timeout { .. } | RedisError::Unavailable { .. }
        )
    }

    /// The Redis key concerned, for [`WrongType`](Self::WrongType) and
    /// [`Foreign`](Self::Foreign).
    pub fn key(&self) -> Option<&str> {
        match self {
            RedisError::WrongType { key } | RedisError::Foreign { key, .. } => Some(key),
            _ => None,
        }
    }

    /// A short name for the kind, for metric labels: `timeout`, `unavailable`, `script`,
    /// `wrong_type`, `foreign`, `capacity`, `quota` or `config`.
    pub fn label(&self) -> &'static str {
        match self {
            RedisError::Timeout { .. } => "timeout",
            RedisError::Unavailable { .. } => "unavailable",
            RedisError::Script { .. } => "script",
            RedisError::WrongType { .. } => "wrong_type",
            RedisError::Foreign { .. } => "foreign",
            RedisError::Capacity(_) => "capacity",
            RedisError::Quota(_) => "quota",
            RedisError::Config { .. } => "config",
        }
    }

    pub(crate) fn unavailable(reason: impl Into<String>) -> RedisError {
        RedisError::Unavailable {
            reason: reason.into(),
        }
    }

    pub(crate) fn config(reason: impl Into<String>) -> RedisError {
        RedisError::Config {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hash = |key: &str| crate::telemetry::key_hash(key);
        match self {
            RedisError::Timeout { after } => {
                write!(f, "Redis did not answer within the timeout of {after:?}")
            }
            RedisError::Unavailable { reason } => write!(f, "Redis is unavailable: {reason}"),
            RedisError::Script { message } => write!(f, "Redis refused the call: {message}"),
            RedisError::WrongType { key } => write!(
                f,
                "the Redis key (hash {}) holds a value of another type; it was left untouched",
                hash(key)
            ),
            RedisError::Foreign { key, detail } => write!(
                f,
                "the Redis key (hash {}) holds a foreign value ({detail}); it was left untouched",
                hash(key)
            ),
            RedisError::Capacity(error) => error.fmt(f),
            RedisError::Quota(error) => error.fmt(f),
            RedisError::Config { reason } => write!(f, "invalid Redis limiter: {reason}"),
        }
    }
}

impl std::error::Error for RedisError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RedisError::Capacity(error) => Some(error),
            RedisError::Quota(error) => Some(error),
            _ => None,
        }
    }
}

impl From<CapacityError> for RedisError {
    fn from(error: CapacityError) -> Self {
        RedisError::Capacity(error)
    }
}

impl From<QuotaError> for RedisError {
    fn from(error: QuotaError) -> Self {
        RedisError::Quota(error)
    }
}

impl From<RedisError> for BackendError {
    fn from(error: RedisError) -> Self {
        let label = error.label();
        BackendError::new(error.kind(), error).with_label(label)
    }
}

/// Sorts a client error into ours. `key` is the Redis key the call was about, `timeout` the
/// per-call timeout (the client's own response timeout is set to it).
pub(crate) fn classify(error: &redis::RedisError, key: &str, timeout: Duration) -> RedisError {
    use redis::{ErrorKind, ServerErrorKind};
    match error.code() {
        Some("WRONGTYPE") => {
            return RedisError::WrongType {
                key: key.to_owned(),
            }
        }
        Some("SGFOREIGN") => {
            return RedisError::Foreign {
                key: key.to_owned(),
                detail: error
                    .detail()
                    .unwrap_or("not sluicegate's state")
                    .to_owned(),
            }
        }
        // Conditions of the server, not of the call: it cannot serve writes now.
        Some(
            "OOM" | "READONLY" | "LOADING" | "BUSY" | "MASTERDOWN" | "CLUSTERDOWN" | "TRYAGAIN",
        ) => return RedisError::unavailable(error.to_string()),
        _ => {}
    }
    if error.is_timeout() {
        return RedisError::Timeout { after: timeout };
    }
    // A connection whose AUTH failed is no connection: an outage, named as such.
    if error.kind() == ErrorKind::AuthenticationFailed || error.code() == Some("WRONGPASS") {
        return RedisError::unavailable(format!(
            "Redis refused the credentials (the URL's user:password): {error}"
        ));
    }
    if error.code() == Some("NOAUTH") {
        return RedisError::unavailable(format!(
            "Redis asks for credentials that were not given (user:password in the URL; for \
             Sentinels, their own): {error}"
        ));
    }
    let outage = error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_cluster_error()
        || matches!(
            error.kind(),
            ErrorKind::ClusterConnectionNotFound
                | ErrorKind::Server(ServerErrorKind::BusyLoading | ServerErrorKind::MasterDown)
        );
    if outage {
        RedisError::unavailable(error.to_string())
    } else {
        RedisError::Script {
            message: error.to_string(),
        }
    }
}
