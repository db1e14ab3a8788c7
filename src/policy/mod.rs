//! Named policies: a quota, an algorithm and what the key is, chosen at run time from a
//! configuration file or a command line rather than from type parameters.
//!
//! ```
//! use sluicegate::policy::{AlgorithmKind, KeySpec, Policy};
//!
//! let policy: Policy = "name=token; key=header:x-api-key; quota=100/minute burst 20; algorithm=sliding-window".parse()?;
//! assert_eq!(policy.name, "token");
//! assert_eq!(policy.key, KeySpec::Header("x-api-key".into()));
//! assert_eq!(policy.algorithm, AlgorithmKind::SlidingWindow);
//! assert_eq!(policy.quota.burst(), 20);
//! # Ok::<(), sluicegate::policy::PolicyError>(())
//! ```

mod algorithm;
mod error;
mod key;
mod parts;

pub use crate::algorithm::AlgorithmKind;
pub use error::PolicyError;
pub use key::KeySpec;
pub use parts::quota_name;

use crate::quota::Quota;
use std::fmt;
use std::str::FromStr;

/// A named limit: `quota` per key, enforced by `algorithm`, keyed by `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The limit's name, for headers, logs and metrics.
    pub name: String,
    /// The quota each key gets.
    pub quota: Quota,
    /// The algorithm that enforces it.
    pub algorithm: AlgorithmKind,
    /// What a request is counted against.
    pub key: KeySpec,
}

impl fmt::Display for Policy {
    /// The form [`FromStr`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "name={}; key={}; quota={}; algorithm={}",
            self.name, self.key, self.quota, self.algorithm
        )
    }
}

/// `name=NAME; key=KEY; quota=QUOTA; algorithm=ALGORITHM`, fields in any order, separated by
/// `;`. `name` and `quota` are required; `key` defaults to `global` and `algorithm` to `gcra`.
impl FromStr for Policy {
    type Err = PolicyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (mut name, mut quota, mut algorithm, mut key) = (None, None, None, None);
        for field in text.split(';').map(str::trim).filter(|f| !f.is_empty()) {
            let (field_name, value) = field
                .split_once('=')
                .ok_or_else(|| PolicyError::Malformed(field.to_owned()))?;
            let (field_name, value) = (field_name.trim().to_ascii_lowercase(), value.trim());
            let slot_taken = match field_name.as_str() {
                "name" => name.replace(value.to_owned()).is_some(),
                "quota" => {
                    let parsed = value.parse::<Quota>().map_err(PolicyError::Quota)?;
                    quota.replace(parsed).is_some()
                }
                "algorithm" => algorithm.replace(value.parse()?).is_some(),
                "key" => key.replace(value.parse()?).is_some(),
                _ => return Err(PolicyError::UnknownField(field_name)),
            };
            if slot_taken {
                return Err(PolicyError::DuplicateField(field_name));
            }
        }
        let name: String = name.ok_or(PolicyError::MissingField("name"))?;
        if name.is_empty() {
            return Err(PolicyError::EmptyName);
        }
        Ok(Policy {
            name,
            quota: quota.ok_or(PolicyError::MissingField("quota"))?,
            algorithm: algorithm.unwrap_or_default(),
            key: key.unwrap_or(KeySpec::Global),
        })
    }
}
