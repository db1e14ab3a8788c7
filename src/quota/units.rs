//! The period units a quota string may name, largest first.

/// One unit: its length, the short form [`Display`](std::fmt::Display) writes after a count,
/// the word it writes for a single unit (`"100/minute"`), and every spelling the parser accepts.
pub(super) struct Unit {
    pub(super) nanos: u64,
    pub(super) abbrev: &'static str,
    pub(super) word: Option<&'static str>,
    pub(super) spellings: &'static [&'static str],
}

pub(super) const UNITS: [Unit; 7] = [
    Unit {
        nanos: 86_400_000_000_000,
        abbrev: "d",
        word: Some("day"),
        spellings: &["d", "day", "days"],
    },
    Unit {
        nanos: 3_600_000_000_000,
        abbrev: "h",
        word: Some("hour"),
        spellings: &["h", "hr", "hrs", "hour", "hours"],
    },
    Unit {
        nanos: 60_000_000_000,
        abbrev: "min",
        word: Some("minute"),
        spellings: &["m", "min", "mins", "minute", "minutes"],
    },
    Unit {
        nanos: 1_000_000_000,
        abbrev: "s",
        word: Some("second"),
        spellings: &["s", "sec", "secs", "second", "seconds"],
    },
    Unit {
        nanos: 1_000_000,
        abbrev: "ms",
        word: None,
        spellings: &["ms", "msec", "millisecond", "milliseconds"],
    },
    Unit {
        nanos: 1_000,
        abbrev: "us",
        word: None,
        spellings: &["us", "µs", "usec", "microsecond", "microseconds"],
    },
    Unit {
        nanos: 1,
        abbrev: "ns",
        word: None,
        spellings: &["ns", "nsec", "nanosecond", "nanoseconds"],
    },
];

/// The length in nanoseconds of the unit spelled `word` (any case), if it is one.
pub(super) fn nanos_of(word: &str) -> Option<u64> {
    let word = word.to_lowercase();
    UNITS
        .iter()
        .find(|unit| unit.spellings.contains(&word.as_str()))
        .map(|unit| unit.nanos)
}
