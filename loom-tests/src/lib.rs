//! Loom model checks of sluicegate live in `tests/`; this crate has no code of its own.
