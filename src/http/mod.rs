//! The tower layer (feature `http`). Under construction.
