//! Reading and writing quotas, algorithms and policies with serde (feature `serde`), from
//! TOML, YAML, JSON or any self-describing format.
//!
//! | type | written as | also read from |
//! |---|---|---|
//! | [`Quota`](crate::Quota) | its string form, `"100/minute burst 20"` | a map `{ limit, period, burst }` |
//! | [`AlgorithmKind`](crate::policy::AlgorithmKind) | `"gcra"`, `"token-bucket"`, `"leaky-bucket"`, `"fixed-window"`, `"sliding-window"`, `"sliding-log"` | any case, `_` for `-` |
//! | [`KeySpec`](crate::policy::KeySpec) | `"global"`, `"peer-ip"`, `"header:NAME"` | |
//! | [`Policy`](crate::policy::Policy) | a map `{ name, quota, algorithm, key }` | the `--limit` string `"name=api; quota=5/s"` |
//!
//! In the map form of a quota, `limit` and `burst` are whole numbers (`burst` is optional and
//! defaults to `limit`) and `period` is either a duration string, a count and a unit as in
//! the quota syntax (`"1m"`, `"60s"`, `"1 minute"`, `"500ms"`, `"hour"`), or a whole number
//! of seconds. A policy needs `name` and `quota`; `algorithm` defaults to `gcra` and `key` to
//! `global`.
//!
//! Bad configuration is an error naming the field by its path and saying what was wrong,
//! such as `quota: invalid quota "100/": expected a period unit after '/' at column 5`,
//! `quota.limit: a quota's limit must be at least 1 request`,
//! `algorithm: unknown algorithm "gcr": expected gcra, token-bucket, ...` or
//! `quota.per: unknown field: expected limit, period, burst or anchored`. Each field is checked
//! as it is read, so the format adds where in the file the bad value is: JSON its line and
//! column, TOML a snippet with the value underlined, YAML its line and column after its own
//! path of the value (`limits.algorithm: algorithm: unknown algorithm ...`). Whether an
//! algorithm can run a quota (each has a range, see the algorithms' documentation) is checked
//! when the limiter is built, as for quotas from anywhere else
//! ([`AlgorithmKind::check_quota`](crate::policy::AlgorithmKind::check_quota) asks before).
//!
//! ```
//! use sluicegate::policy::{AlgorithmKind, KeySpec, Policy};
//! use sluicegate::Quota;
//!
//! #[derive(serde::Deserialize)]
//! struct Config {
//!     limits: Vec<Policy>,
//! }
//!
//! let config: Config = serde_json::from_str(r#"{ "limits": [
//!     { "name": "ip", "key": "peer-ip", "quota": "5/second" },
//!     { "name": "token", "key": "header:x-api-key", "algorithm": "sliding-window",
//!       "quota": { "limit": 100, "period": "1m", "burst": 20 } }
//! ] }"#)?;
//! assert_eq!(config.limits[0].algorithm, AlgorithmKind::Gcra);
//! assert_eq!(config.limits[1].key, KeySpec::Header("x-api-key".into()));
//! assert_eq!(config.limits[1].quota, "100/minute burst 20".parse::<Quota>()?);
//!
//! let error = serde_json::from_str::<Policy>(r#"{ "name": "x", "quota": "100/" }"#).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "quota: invalid quota \"100/\": expected a period unit after '/' at column 5 at line 1 column 30"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod names;
mod period;
mod policy;
mod quota;
mod raw;
