//! Limits shared by many servers through Redis (feature `redis`). Under construction.
