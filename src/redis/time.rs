//! Where a [`RedisLimiter`](super::RedisLimiter)'s decisions take their time from:
//! Redis's own `TIME` ([`RedisTime`], the default), a client [`Clock`], or one of the two
//! chosen at run time ([`AnyTime`]).

use crate::clock::{AnyClock, Clock, ManualClock, TscClock};
use std::fmt;

/// The latest instant a decision uses, in microseconds since the UNIX epoch: 2^52 us, in the
/// year 2112. A client clock reading later is treated as this instant; keeping times here
/// keeps every integer in the scripts exact in Lua's doubles.
pub(crate) const MAX_MICROS: u64 = 1 << 52;

/// Decisions on Redis's clock: every script reads `TIME` on the server, so the app servers'
/// clocks never matter, and only one clock ever decides. The default time source of a
/// [`RedisLimiter`](super::RedisLimiter).
///
/// Locally, such a limiter still needs time for its deny cache and its
/// [`Fallback::Local`](super::Fallback::Local) limiter: it reads a [`TscClock`] for them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedisTime;

mod sealed {
    pub trait Sealed {}
    impl<C: crate::clock::Clock> Sealed for C {}
    impl Sealed for super::RedisTime {}
    impl Sealed for super::AnyTime {}
}

/// Where a [`RedisLimiter`](super::RedisLimiter) takes time from: [`RedisTime`], or any
/// [`Clock`] (e.g. a [`ManualClock`](crate::clock::ManualClock) in tests). Sealed; every
/// `Clock` is one.
pub trait TimeSource: sealed::Sealed + Clone + Send + Sync + fmt::Debug + 'static {
    /// The clock of the limiter's local parts (deny cache, local fallback).
    type Local: Clock;

    /// The decision's instant in whole microseconds since the UNIX epoch, or `None` to let
    /// Redis read its own `TIME`.
    #[doc(hidden)]
    fn decision_micros(&self) -> Option<u64>;

    /// The clock for the limiter's local parts.
    #[doc(hidden)]
    fn local_clock(&self) -> Self::Local;
}

impl<C: Clock> TimeSource for C {
    type Local = C;

    #[inline]
    fn decision_micros(&self) -> Option<u64> {
        Some(unix_micros(self))
    }

    fn local_clock(&self) -> C {
        self.clone()
    }
}

impl TimeSource for RedisTime {
    type Local = TscClock;

    #[inline]
    fn decision_micros(&self) -> Option<u64> {
        None
    }

    fn local_clock(&self) -> TscClock {
        TscClock::new()
    }
}

/// Redis's `TIME` or a [`ManualClock`], chosen at run time: what a limiter takes when whether
/// its time is real is only known when it is built (a language binding's `clock` option), so
/// that one limiter type serves both.
#[derive(Debug, Clone, Default)]
pub enum AnyTime {
    /// Decisions on Redis's clock ([`RedisTime`]).
    #[default]
    Redis,
    /// Decisions on a clock moved by hand (client time).
    Manual(ManualClock),
}

impl From<Option<ManualClock>> for AnyTime {
    /// The manual clock when there is one, Redis's clock otherwise.
    fn from(manual: Option<ManualClock>) -> Self {
        manual.map_or(AnyTime::Redis, AnyTime::Manual)
    }
}

impl TimeSource for AnyTime {
    type Local = AnyClock;

    #[inline]
    fn decision_micros(&self) -> Option<u64> {
        match self {
            AnyTime::Redis => None,
            AnyTime::Manual(clock) => Some(unix_micros(clock)),
        }
    }

    fn local_clock(&self) -> AnyClock {
        match self {
            AnyTime::Redis => AnyClock::Tsc(TscClock::new()),
            AnyTime::Manual(clock) => AnyClock::Manual(clock.clone()),
        }
    }
}

/// `clock`'s reading as whole microseconds since the UNIX epoch (the `ManualClock`'s 0 is the
/// epoch), clamped to [`MAX_MICROS`]: windows then align to wall-clock multiples of the
/// period exactly as in process.
#[inline]
pub(crate) fn unix_micros<C: Clock>(clock: &C) -> u64 {
    (clock.unix_offset().saturating_add(clock.now()) / 1_000).min(MAX_MICROS)
}
