//! Logs, metrics and snapshots. Under construction.
