//! The time units of envoyproxy/ratelimit's `rate_limit.unit`, and the proto enum they map to.

use crate::proto::rate_limit_response::rate_limit::Unit as ProtoUnit;
use crate::proto::RateLimitUnit;
use std::fmt;
use std::time::Duration;

/// A `rate_limit.unit`. Week, month and year are 7, 30 and 365 days (as envoyproxy/ratelimit
/// counts them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// One second.
    Second,
    /// 60 seconds.
    Minute,
    /// 3,600 seconds.
    Hour,
    /// 86,400 seconds.
    Day,
    /// 7 days.
    Week,
    /// 30 days.
    Month,
    /// 365 days.
    Year,
}

impl Unit {
    /// Every unit, shortest first.
    pub const ALL: [Unit; 7] = [
        Unit::Second,
        Unit::Minute,
        Unit::Hour,
        Unit::Day,
        Unit::Week,
        Unit::Month,
        Unit::Year,
    ];

    /// The unit's length in seconds.
    pub fn seconds(self) -> u64 {
        match self {
            Unit::Second => 1,
            Unit::Minute => 60,
            Unit::Hour => 3_600,
            Unit::Day => 86_400,
            Unit::Week => 7 * 86_400,
            Unit::Month => 30 * 86_400,
            Unit::Year => 365 * 86_400,
        }
    }

    /// The unit's length.
    pub fn duration(self) -> Duration {
        Duration::from_secs(self.seconds())
    }

    /// The config name (`second`, `minute`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Second => "second",
            Unit::Minute => "minute",
            Unit::Hour => "hour",
            Unit::Day => "day",
            Unit::Week => "week",
            Unit::Month => "month",
            Unit::Year => "year",
        }
    }

    /// Parses a config name, case-insensitively (envoyproxy/ratelimit upper-cases it).
    pub fn parse(text: &str) -> Option<Unit> {
        Unit::ALL
            .into_iter()
            .find(|unit| unit.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The `RateLimitResponse.RateLimit.Unit` value.
    pub fn to_proto(self) -> ProtoUnit {
        match self {
            Unit::Second => ProtoUnit::Second,
            Unit::Minute => ProtoUnit::Minute,
            Unit::Hour => ProtoUnit::Hour,
            Unit::Day => ProtoUnit::Day,
            Unit::Week => ProtoUnit::Week,
            Unit::Month => ProtoUnit::Month,
            Unit::Year => ProtoUnit::Year,
        }
    }

    /// The unit of a descriptor's `limit` override; `None` for `UNKNOWN` or a number Envoy
    /// does not define.
    pub fn from_override(unit: i32) -> Option<Unit> {
        Some(match RateLimitUnit::try_from(unit).ok()? {
            RateLimitUnit::Unknown => return None,
            RateLimitUnit::Second => Unit::Second,
            RateLimitUnit::Minute => Unit::Minute,
            RateLimitUnit::Hour => Unit::Hour,
            RateLimitUnit::Day => Unit::Day,
            RateLimitUnit::Week => Unit::Week,
            RateLimitUnit::Month => Unit::Month,
            RateLimitUnit::Year => Unit::Year,
        })
    }

    /// How to show a quota of `limit` per `period` as requests per unit: the shortest unit
    /// in which the count is a whole number (`100/30s` is 200 per minute); when none is,
    /// the shortest unit at least as long as the period, its count rounded down (never
    /// overstating the limit); a period longer than a year is shown per year.
    pub fn show(limit: u32, period: Duration) -> (u32, Unit) {
        let nanos = period.as_nanos().max(1);
        let per = |unit: Unit| u128::from(limit) * u128::from(unit.seconds()) * 1_000_000_000;
        for unit in Unit::ALL {
            if per(unit) % nanos == 0 {
                if let Ok(count) = u32::try_from(per(unit) / nanos) {
                    return (count, unit);
                }
            }
        }
        let unit = Unit::ALL
            .into_iter()
            .find(|unit| unit.duration() >= period)
            .unwrap_or(Unit::Year);
        let count = u32::try_from(per(unit) / nanos).unwrap_or(u32::MAX);
        (count, unit)
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_are_shown_in_the_shortest_whole_unit() {
        assert_eq!(Unit::show(100, Duration::from_secs(1)), (100, Unit::Second));
        assert_eq!(
            Unit::show(100, Duration::from_secs(30)),
            (200, Unit::Minute)
        );
        assert_eq!(Unit::show(5, Duration::from_secs(60)), (5, Unit::Minute));
        assert_eq!(
            Unit::show(7, Duration::from_secs(7 * 86_400)),
            (1, Unit::Day)
        );
        // 1 per 7 s: no whole count per minute (60/7) but 3600/7 is not whole either; a day
        // (86400/7) is not; a week is (86400).
        assert_eq!(Unit::show(1, Duration::from_secs(7)), (86_400, Unit::Week));
        assert_eq!(Unit::show(3, Duration::from_millis(500)), (6, Unit::Second));
    }

    #[test]
    fn unit_names_parse_case_insensitively() {
        assert_eq!(Unit::parse("SECOND"), Some(Unit::Second));
        assert_eq!(Unit::parse("week"), Some(Unit::Week));
        assert_eq!(Unit::parse("fortnight"), None);
    }
}
