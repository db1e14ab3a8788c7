//! The period units a quota string may name, largest first.

/// One unit: its length, the short form [`Display`](std::fmt::Display) writes after a count,
/// the word it writes for a single unit (`"100/minute"`), and every spelling the parser accepts.
pub(super) struct Unit {
    pub(super) nanos: u64,
    pub(super) abbrev: &'static str,
    pub(super) word: Option<&'static str>,
    pub(super) spellings: &'static [&'static str],
}

/// Weeks, months and years are fixed lengths, as the service's config and `limits` count
/// them: a week is 7 days, a month 30 days, a year 365 days (not calendar months or years).
pub(super) const UNITS: [Unit; 10] = [
    Unit {
        nanos: 365 * 86_400_000_000_000,
        abbrev: "y",
        word: Some("year"),
        spellings: &["y", "yr", "yrs", "year", "years"],
    },
    Unit {
        nanos: 30 * 86_400_000_000_000,
        abbrev: "mo",
        word: Some("month"),
        spellings: &["mo", "mos", "month", "months"],
    },
    Unit {
        nanos: 7 * 86_400_000_000_000,
        abbrev: "w",
        word: Some("week"),
        spellings: &["w", "wk", "wks", "week", "weeks"],
    },
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
