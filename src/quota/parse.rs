//! Reads quota strings:
//! `<limit> ('/' | 'per') [<count>] <unit> [[,] burst [=|:] <n>] [[,] anchored]`.
//!
//! Case-insensitive, spaces allowed around every part, `_` allowed between digits. Each error
//! names what was expected and the 1-based column where it was not found.

use super::units::nanos_of;
use super::Quota;
use crate::error::QuotaError;
use std::time::Duration;

pub(super) fn parse(input: &str) -> Result<Quota, QuotaError> {
    let mut scan = Scanner::new(input);
    scan.skip_spaces();
    let limit_column = scan.column();
    let limit = scan.number("a limit (a whole number, as in \"100/minute\")")?;
    let limit = scan.fit_u32(limit, "limit", limit_column)?;

    scan.skip_spaces();
    let separator = if scan.eat_char('/') {
        "'/'"
    } else if scan.eat_word("per") {
        "'per'"
    } else {
        return Err(scan.error("expected '/' or 'per' after the limit"));
    };

    scan.skip_spaces();
    let count_column = scan.column();
    let count = if scan.at_digit() {
        let count = scan.number("a period count")?;
        scan.skip_spaces();
        count
    } else {
        1
    };
    if count == 0 {
        return Err(scan.error_at(count_column, "the period count must be at least 1"));
    }

    let unit_column = scan.column();
    let unit = scan.word();
    if unit.is_empty() {
        return Err(scan.error(&format!("expected a period unit after {separator}")));
    }
    let unit_nanos = nanos_of(&unit).ok_or_else(|| {
        scan.error_at(
            unit_column,
            &format!(
                "unknown period unit '{unit}' (expected ns, us, ms, s, m, h, d, w, mo, y, \
                 or second, minute, hour, day, week, month, year)"
            ),
        )
    })?;
    let period_nanos = count
        .checked_mul(unit_nanos)
        .ok_or(QuotaError::PeriodTooLong {
            period: Duration::MAX,
            max: Quota::MAX_PERIOD,
        })?;
    let quota = Quota::new(limit, Duration::from_nanos(period_nanos))?;

    scan.skip_spaces();
    let burst_start = scan.position;
    scan.eat_char(',');
    scan.skip_spaces();
    let quota = if scan.eat_word("burst") {
        scan.skip_spaces();
        let _ = scan.eat_char('=') || scan.eat_char(':');
        scan.skip_spaces();
        let burst_column = scan.column();
        let burst = scan.number("a burst size after 'burst'")?;
        quota.try_with_burst(scan.fit_u32(burst, "burst", burst_column)?)?
    } else {
        scan.position = burst_start;
        quota
    };

    scan.skip_spaces();
    let anchor_start = scan.position;
    scan.eat_char(',');
    scan.skip_spaces();
    let quota = if scan.eat_word("anchored") {
        quota.anchored()
    } else {
        scan.position = anchor_start;
        quota
    };

    scan.skip_spaces();
    if let Some(rest) = scan.rest() {
        return Err(scan.error(&format!(
            "unexpected '{rest}' (expected 'burst <n>', 'anchored' or the end)"
        )));
    }
    Ok(quota)
}

/// Reads several quotas: `"5/minute; 100/hour"`, separated by `;`, `|`, or `,` before a
/// limit (a `,` before `burst` belongs to its quota), as `limits`, slowapi and Flask-Limiter
/// write them. Errors name the column in the whole input.
pub(super) fn parse_many(input: &str) -> Result<Vec<Quota>, QuotaError> {
    let mut quotas = Vec::new();
    let mut start = 0;
    let mut parts = Vec::new();
    for (at, c) in input.char_indices() {
        let separates = match c {
            ';' | '|' => true,
            ',' => input[at + 1..]
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit()),
            _ => false,
        };
        if separates {
            parts.push((start, &input[start..at]));
            start = at + 1;
        }
    }
    parts.push((start, &input[start..]));
    for (offset, part) in parts {
        let quota = parse(part).map_err(|error| match error {
            QuotaError::Parse { column, reason, .. } => QuotaError::Parse {
                input: input.to_string(),
                column: column + input[..offset].chars().count(),
                reason,
            },
            other => other,
        })?;
        quotas.push(quota);
    }
    Ok(quotas)
}

/// A cursor over the input's characters that knows each one's column.
struct Scanner<'a> {
    input: &'a str,
    chars: Vec<char>,
    position: usize,
}

impl<'a> Scanner<'a> {
    fn new(input: &'a str) -> Self {
        Scanner {
            input,
            chars: input.chars().collect(),
            position: 0,
        }
    }

    fn column(&self) -> usize {
        self.position + 1
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.position).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.position += 1;
        }
    }

    fn at_digit(&self) -> bool {
        self.peek().is_some_and(|c| c.is_ascii_digit())
    }

    fn eat_char(&mut self, expected: char) -> bool {
        let found = self.peek() == Some(expected);
        if found {
            self.position += 1;
        }
        found
    }

    /// Consumes `expected` (any case) only when it is a whole word, not the start of a longer one.
    fn eat_word(&mut self, expected: &str) -> bool {
        let start = self.position;
        let word = self.word();
        if word.eq_ignore_ascii_case(expected) {
            return true;
        }
        self.position = start;
        false
    }

    /// Consumes a run of letters (including `µ`) and returns it.
    fn word(&mut self) -> String {
        let start = self.position;
        while self.peek().is_some_and(char::is_alphabetic) {
            self.position += 1;
        }
        self.chars[start..self.position].iter().collect()
    }

    /// Consumes a whole number: digits, with `_` allowed between them.
    fn number(&mut self, what: &str) -> Result<u64, QuotaError> {
        let start = self.position;
        if !self.at_digit() {
            return Err(self.error(&format!("expected {what}")));
        }
        let mut value: u64 = 0;
        while let Some(c) = self.peek() {
            if let Some(digit) = c.to_digit(10) {
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(digit)))
                    .ok_or_else(|| self.error_at(start + 1, "number is too large"))?;
            } else if c != '_'
                || !self
                    .chars
                    .get(self.position + 1)
                    .is_some_and(char::is_ascii_digit)
            {
                break;
            }
            self.position += 1;
        }
        Ok(value)
    }

    fn fit_u32(&self, value: u64, what: &str, column: usize) -> Result<u32, QuotaError> {
        u32::try_from(value).map_err(|_| {
            self.error_at(
                column,
                &format!(
                    "the {what} {value} is too large (the maximum is {})",
                    u32::MAX
                ),
            )
        })
    }

    fn rest(&self) -> Option<String> {
        (self.position < self.chars.len()).then(|| self.chars[self.position..].iter().collect())
    }

    fn error(&self, reason: &str) -> QuotaError {
        self.error_at(self.column(), reason)
    }

    fn error_at(&self, column: usize, reason: &str) -> QuotaError {
        QuotaError::Parse {
            input: self.input.to_string(),
            column,
            reason: reason.to_string(),
        }
    }
}
