//! Waiting instead of refusing (feature `tokio`). Under construction.
