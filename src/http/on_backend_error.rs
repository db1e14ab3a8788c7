//! [`OnBackendError`]: what a front end answers when a limit's backend cannot decide.

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
