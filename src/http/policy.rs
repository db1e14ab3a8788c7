//! Limits from [`Policy`] values: an algorithm, quota and key chosen at run time.

use super::error::BuildError;
use super::key::{ClientIp, Global, HeaderKey, KeyExtractor};
use super::limit::RequestLimit;
use crate::backend::Backend;
use crate::clock::TscClock;
use crate::dynamic::{AnyKeyedLimiter, AnyLimiter};
use crate::policy::{AlgorithmKind, KeySpec, Policy};
use crate::{Quota, QuotaError};
use std::sync::Arc;

/// An in-process backend running `algorithm` for `quota`: an
/// [`AnyKeyedLimiter<String>`] (a state per key) when `keyed`, else an [`AnyLimiter`] (one
/// state; keys ignored).
pub fn in_process_backend(
    algorithm: AlgorithmKind,
    quota: Quota,
    keyed: bool,
) -> Result<Arc<dyn Backend<str>>, QuotaError> {
    Ok(if keyed {
        Arc::new(AnyKeyedLimiter::<String>::new(quota, algorithm)?)
    } else {
        Arc::new(AnyLimiter::<TscClock>::new(quota, algorithm)?)
    })
}

/// The extractor a [`KeySpec`] names: [`Global`], `client_ip` for `peer-ip`, or a
/// [`HeaderKey`].
pub fn key_extractor(
    spec: &KeySpec,
    client_ip: &ClientIp,
) -> Result<Arc<dyn KeyExtractor>, BuildError> {
    Ok(match spec {
        KeySpec::Global => Arc::new(Global),
        KeySpec::PeerIp => Arc::new(client_ip.clone()),
        KeySpec::Header(name) => Arc::new(
            HeaderKey::parse(name)
                .map_err(|_| BuildError::new(format!("{name:?} is not an HTTP header name")))?,
        ),
    })
}

impl RequestLimit {
    /// The limit `policy` describes, enforced in process, with `client_ip` as the extractor
    /// for `key=peer-ip`.
    ///
    /// ```
    /// use sluicegate::http::{ClientIp, RequestLimit};
    /// use sluicegate::policy::Policy;
    ///
    /// let policy: Policy = "name=ip; key=peer-ip; quota=5/second; algorithm=gcra".parse()?;
    /// let limit = RequestLimit::from_policy(&policy, &ClientIp::new())?;
    /// assert_eq!(limit.name(), "ip");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_policy(policy: &Policy, client_ip: &ClientIp) -> Result<RequestLimit, BuildError> {
        let keyed = policy.key != KeySpec::Global;
        let backend = in_process_backend(policy.algorithm, policy.quota, keyed)
            .map_err(|e| BuildError::new(format!("limit {:?}: {e}", policy.name)))?;
        let mut limit = RequestLimit::shared(policy.name.clone(), backend);
        limit.key = key_extractor(&policy.key, client_ip)?;
        Ok(limit)
    }
}
