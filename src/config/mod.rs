//! Serialization of quotas, algorithms and policies (feature `serde`). Under construction.
