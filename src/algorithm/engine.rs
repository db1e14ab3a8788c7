//! The machinery behind [`Algorithm`](super::Algorithm): how a limiter runs an algorithm.
//!
//! Public only inside this private module, which seals the public trait.

use crate::decision::Decision;
use crate::error::QuotaError;
use crate::quota::Quota;
use std::fmt;

/// Whether a check consumes or only looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Consume the cost when allowed.
    Consume,
    /// Answer as `Consume` would, writing nothing.
    Peek,
}

/// What a limiter needs from an algorithm: its parameters, its concurrent state, a check.
pub trait Engine: Send + Sync + Sized + 'static {
    /// The algorithm's name, for errors and `Debug`.
    const NAME: &'static str;
    /// The quota, preprocessed for the hot path.
    type Params: Copy + fmt::Debug + Send + Sync;
    /// One limiter's (or one key's) concurrent state.
    type Cell: fmt::Debug + Send + Sync;

    /// Validates `quota` for this algorithm. `unix_offset` is the clock's
    /// [`unix_offset`](crate::clock::Clock::unix_offset), for window alignment.
    fn params(quota: &Quota, unix_offset: u64) -> Result<Self::Params, QuotaError>;
    /// The largest cost a single check can ever be allowed.
    fn capacity(params: &Self::Params) -> u32;
    /// A fresh state: a full bucket, an empty window, an empty log.
    fn new_cell(params: &Self::Params) -> Self::Cell;
    /// Decides a request of `cost` at `now` (already clamped), consuming it unless peeking.
    /// `cost` never exceeds `capacity`.
    fn check(cell: &Self::Cell, params: &Self::Params, now: u64, cost: u32, mode: Mode)
        -> Decision;
}

/// An algorithm whose whole state is one `u64`: a pure transition the CAS cell applies.
pub trait Packed: Send + Sync + Sized + 'static {
    /// See [`Engine::NAME`].
    const NAME: &'static str;
    /// See [`Engine::Params`].
    type Params: Copy + fmt::Debug + Send + Sync;

    /// See [`Engine::params`].
    fn params(quota: &Quota, unix_offset: u64) -> Result<Self::Params, QuotaError>;
    /// See [`Engine::capacity`].
    fn capacity(params: &Self::Params) -> u32;
    /// The packed fresh state.
    fn fresh(params: &Self::Params) -> u64;
    /// The decision on `state` for `cost` at `now`, and the state to write if it is allowed
    /// and changes anything. Pure.
    fn transition(
        state: u64,
        now: u64,
        cost: u32,
        params: &Self::Params,
    ) -> (Option<u64>, Decision);
}

/// Implements [`Engine`] for a [`Packed`] algorithm on a [`StateCell`](crate::cell::StateCell).
macro_rules! packed_engine {
    ($algorithm:ty) => {
        impl $crate::algorithm::engine::Engine for $algorithm {
            const NAME: &'static str = <$algorithm as $crate::algorithm::engine::Packed>::NAME;
            type Params = <$algorithm as $crate::algorithm::engine::Packed>::Params;
            type Cell = $crate::cell::StateCell;

            fn params(
                quota: &$crate::quota::Quota,
                unix_offset: u64,
            ) -> Result<Self::Params, $crate::error::QuotaError> {
                <$algorithm as $crate::algorithm::engine::Packed>::params(quota, unix_offset)
            }

            fn capacity(params: &Self::Params) -> u32 {
                <$algorithm as $crate::algorithm::engine::Packed>::capacity(params)
            }

            fn new_cell(params: &Self::Params) -> Self::Cell {
                $crate::cell::StateCell::new(
                    <$algorithm as $crate::algorithm::engine::Packed>::fresh(params),
                )
            }

            #[inline]
            fn check(
                cell: &Self::Cell,
                params: &Self::Params,
                now: u64,
                cost: u32,
                mode: $crate::algorithm::engine::Mode,
            ) -> $crate::decision::Decision {
                cell.apply::<$algorithm>(params, now, cost, mode)
            }
        }
    };
}
pub(crate) use packed_engine;
