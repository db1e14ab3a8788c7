//! [`OnBackendError`]: what a front end answers when a limit's backend cannot decide, and
//! [`BackendErrorMode`], the option every front end reads it from (with `local`, which
//! decides in process while Redis cannot).

use super::error::BuildError;
use std::str::FromStr;

/// What to do when a limit's backend cannot decide (Redis down or slow).
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

/// A front end's `on_backend_error` option (`onBackendError` in Node): what its limits on
/// Redis do while Redis cannot decide. Each mode is two settings of the library's, which
/// [`answer`](Self::answer) and [`fallback`](Self::fallback) give: the
/// [`OnBackendError`] of the limiter, and the [`Fallback`](crate::redis::Fallback) of each
/// Redis backend.
///
/// ```
/// use sluicegate::http::{BackendErrorMode, OnBackendError};
///
/// let mode: BackendErrorMode = "Local".parse()?;
/// assert_eq!(mode, BackendErrorMode::Local);
/// assert_eq!(mode.answer(), OnBackendError::Allow);
/// assert_eq!(mode.as_str(), "local");
/// assert!("retry".parse::<BackendErrorMode>().is_err());
/// # Ok::<(), sluicegate::http::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BackendErrorMode {
    /// Let the request through, uncounted by the limit that failed (the default).
    #[default]
    Allow,
    /// Refuse it: `503` with `Retry-After: 1`.
    Deny,
    /// Decide it in this process, by an in-process limit of the same algorithm and quota,
    /// until Redis answers again (the state kept meanwhile is not sent to Redis). Errors
    /// that are not an outage (a key of the wrong type on Redis) let the request through,
    /// as `Allow` does.
    Local,
}

impl BackendErrorMode {
    /// The answer the limiter gives when a backend returns an error: `Deny` for
    /// [`Deny`](Self::Deny), else `Allow` (under `Local`, only errors that are not an
    /// outage reach the limiter: the backend's fallback decides the rest).
    pub fn answer(self) -> OnBackendError {
        match self {
            BackendErrorMode::Deny => OnBackendError::Deny,
            BackendErrorMode::Allow | BackendErrorMode::Local => OnBackendError::Allow,
        }
    }

    /// The fallback of each Redis backend: deciding in process, as one server of one
    /// (`Fallback::Local { servers: 1 }`: the whole quota) for [`Local`](Self::Local), else
    /// none (`Fallback::Error`: the error goes to the limiter, which answers as
    /// [`answer`](Self::answer) says).
    #[cfg(feature = "redis")]
    pub fn fallback(self) -> crate::redis::Fallback {
        match self {
            BackendErrorMode::Local => crate::redis::Fallback::Local { servers: 1 },
            BackendErrorMode::Allow | BackendErrorMode::Deny => crate::redis::Fallback::Error,
        }
    }

    /// `allow`, `deny` or `local`: the option's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendErrorMode::Allow => "allow",
            BackendErrorMode::Deny => "deny",
            BackendErrorMode::Local => "local",
        }
    }
}

impl FromStr for BackendErrorMode {
    type Err = BuildError;

    /// `allow`, `deny` or `local`, in any case.
    fn from_str(text: &str) -> Result<Self, BuildError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "allow" => Ok(BackendErrorMode::Allow),
            "deny" => Ok(BackendErrorMode::Deny),
            "local" => Ok(BackendErrorMode::Local),
            _ => Err(BuildError::new(format!(
                "on-backend-error is allow, deny or local, not {text:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_is_an_answer_and_a_fallback() {
        let modes = [
            ("allow", OnBackendError::Allow),
            (" DENY", OnBackendError::Deny),
            ("Local", OnBackendError::Allow),
        ];
        for (text, answer) in modes {
            let mode: BackendErrorMode = text.parse().unwrap();
            assert_eq!(mode.answer(), answer, "{text}");
            assert_eq!(mode.as_str(), text.trim().to_ascii_lowercase());
            assert_eq!(mode.as_str().parse::<BackendErrorMode>().unwrap(), mode);
        }
        assert_eq!(BackendErrorMode::default(), BackendErrorMode::Allow);
        let error = "fallback".parse::<BackendErrorMode>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "on-backend-error is allow, deny or local, not \"fallback\""
        );
    }

    #[cfg(feature = "redis")]
    #[test]
    fn only_local_falls_back_in_process() {
        use crate::redis::Fallback;
        assert_eq!(
            BackendErrorMode::Local.fallback(),
            Fallback::Local { servers: 1 }
        );
        assert_eq!(BackendErrorMode::Allow.fallback(), Fallback::Error);
        assert_eq!(BackendErrorMode::Deny.fallback(), Fallback::Error);
    }
}
