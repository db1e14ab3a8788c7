//! [`RedisAlgorithm`]: the six algorithms, each with its script.

use crate::algorithm::{
    Algorithm, FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};

/// Which script an algorithm runs. Public only inside this private module, which seals
/// [`RedisAlgorithm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScriptKind {
    /// `gcra.lua`.
    Gcra,
    /// `token_bucket.lua`.
    TokenBucket,
    /// `leaky_bucket.lua`.
    LeakyBucket,
    /// `fixed_window.lua`.
    FixedWindow,
    /// `sliding_window.lua`.
    SlidingWindow,
    /// `sliding_log.lua`.
    SlidingLog,
}

impl ScriptKind {
    /// The algorithm's type name, for errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ScriptKind::Gcra => "Gcra",
            ScriptKind::TokenBucket => "TokenBucket",
            ScriptKind::LeakyBucket => "LeakyBucket",
            ScriptKind::FixedWindow => "FixedWindow",
            ScriptKind::SlidingWindow => "SlidingWindow",
            ScriptKind::SlidingLog => "SlidingLog",
        }
    }

    /// The algorithm's kebab-case name, as in key names and configuration.
    pub(crate) fn key_name(self) -> &'static str {
        match self {
            ScriptKind::Gcra => "gcra",
            ScriptKind::TokenBucket => "token-bucket",
            ScriptKind::LeakyBucket => "leaky-bucket",
            ScriptKind::FixedWindow => "fixed-window",
            ScriptKind::SlidingWindow => "sliding-window",
            ScriptKind::SlidingLog => "sliding-log",
        }
    }

    /// The letter the composite script dispatches on.
    pub(crate) fn code(self) -> &'static str {
        match self {
            ScriptKind::Gcra => "g",
            ScriptKind::TokenBucket => "t",
            ScriptKind::LeakyBucket => "l",
            ScriptKind::FixedWindow => "f",
            ScriptKind::SlidingWindow => "w",
            ScriptKind::SlidingLog => "s",
        }
    }

    /// True when the quota's burst matters (the rate algorithms); the windows and the log
    /// read only the limit.
    pub(crate) fn uses_burst(self) -> bool {
        matches!(
            self,
            ScriptKind::Gcra | ScriptKind::TokenBucket | ScriptKind::LeakyBucket
        )
    }
}

pub(crate) mod sealed {
    /// Names an algorithm's script; implemented for the six algorithms only.
    pub trait Scripted {
        /// The script.
        const KIND: super::ScriptKind;
    }
}

/// An [`Algorithm`] that runs on Redis, as a Lua script of its own: every one of the six.
/// Sealed.
pub trait RedisAlgorithm: Algorithm + sealed::Scripted {}

impl<A: Algorithm + sealed::Scripted> RedisAlgorithm for A {}

macro_rules! scripted {
    ($($algorithm:ident),*) => {
        $(impl sealed::Scripted for $algorithm {
            const KIND: ScriptKind = ScriptKind::$algorithm;
        })*
    };
}

scripted!(
    Gcra,
    TokenBucket,
    LeakyBucket,
    FixedWindow,
    SlidingWindow,
    SlidingLog
);
