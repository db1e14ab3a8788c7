//! [`AlgorithmKind`]: the six algorithms as values, with their names: the one list of them.

use std::fmt;

/// One of the six algorithms, as a value: what a configuration file or a command line names.
/// The type parameters of [`Limiter`](crate::Limiter) and
/// [`KeyedLimiter`](crate::KeyedLimiter) name them at compile time instead.
///
/// Names are kebab-case: `gcra`, `token-bucket`, `leaky-bucket`, `fixed-window`,
/// `sliding-window`, `sliding-log`.
///
/// ```
/// use sluicegate::policy::AlgorithmKind;
/// let kind: AlgorithmKind = "sliding-window".parse()?;
/// assert_eq!(kind, AlgorithmKind::SlidingWindow);
/// assert_eq!(kind.to_string(), "sliding-window");
/// # Ok::<(), sluicegate::policy::PolicyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AlgorithmKind {
    /// [`Gcra`](crate::algorithm::Gcra), the default.
    #[default]
    Gcra,
    /// [`TokenBucket`](crate::algorithm::TokenBucket).
    TokenBucket,
    /// [`LeakyBucket`](crate::algorithm::LeakyBucket).
    LeakyBucket,
    /// [`FixedWindow`](crate::algorithm::FixedWindow).
    FixedWindow,
    /// [`SlidingWindow`](crate::algorithm::SlidingWindow).
    SlidingWindow,
    /// [`SlidingLog`](crate::algorithm::SlidingLog).
    SlidingLog,
}

impl AlgorithmKind {
    /// Every algorithm, in the order of the README's table.
    pub const ALL: [AlgorithmKind; 6] = [
        AlgorithmKind::Gcra,
        AlgorithmKind::TokenBucket,
        AlgorithmKind::LeakyBucket,
        AlgorithmKind::FixedWindow,
        AlgorithmKind::SlidingWindow,
        AlgorithmKind::SlidingLog,
    ];

    /// The type's name (`Gcra`, `TokenBucket`, ...), as errors and `Debug` print it.
    pub const fn type_name(self) -> &'static str {
        match self {
            AlgorithmKind::Gcra => "Gcra",
            AlgorithmKind::TokenBucket => "TokenBucket",
            AlgorithmKind::LeakyBucket => "LeakyBucket",
            AlgorithmKind::FixedWindow => "FixedWindow",
            AlgorithmKind::SlidingWindow => "SlidingWindow",
            AlgorithmKind::SlidingLog => "SlidingLog",
        }
    }

    /// True when the quota's burst matters (the rate algorithms); the windows and the log
    /// read only the limit.
    pub fn uses_burst(self) -> bool {
        matches!(
            self,
            AlgorithmKind::Gcra | AlgorithmKind::TokenBucket | AlgorithmKind::LeakyBucket
        )
    }

    /// The kebab-case name, as configuration, command lines and Redis key names write it.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmKind::Gcra => "gcra",
            AlgorithmKind::TokenBucket => "token-bucket",
            AlgorithmKind::LeakyBucket => "leaky-bucket",
            AlgorithmKind::FixedWindow => "fixed-window",
            AlgorithmKind::SlidingWindow => "sliding-window",
            AlgorithmKind::SlidingLog => "sliding-log",
        }
    }
}

impl fmt::Display for AlgorithmKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
