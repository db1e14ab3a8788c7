//! Different quotas for different classes of key in one limiter. Under construction.
