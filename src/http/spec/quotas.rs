//! [`LimitQuotas`]: the one reading of a limit's quota strings, for the specification and for
//! every configuration that names quotas its own way (`sluicegate-server`'s `rate_limit`).

use crate::algorithm::AlgorithmKind;
use crate::error::QuotaError;
use crate::quota::Quota;
use std::fmt;

/// How a configuration's quota strings are read into a limit's quotas: several in one string
/// or in a list (`"5/minute; 100/hour"`, the library's [`Quota::parse_many`]), each checked
/// against the `algorithm` that will run it ([`AlgorithmKind::check_quota`]), with a `burst`
/// given beside the strings applied to a limit of one quota.
///
/// ```
/// use sluicegate::http::spec::{LimitQuotas, QuotaPart};
/// use sluicegate::policy::AlgorithmKind;
///
/// let read = LimitQuotas::new(AlgorithmKind::SlidingWindow);
/// let parts = read.check(&["5/minute; 100/hour"]).unwrap();
/// assert_eq!(parts.len(), 2);
/// let zero = LimitQuotas::new(AlgorithmKind::FixedWindow).zero_denies(true);
/// assert!(matches!(zero.check(&["0/minute"]).unwrap()[..], [QuotaPart::DenyAll(_)]));
/// let problem = read.check(&["5/fortnight"]).unwrap_err();
/// assert!(problem.reason.contains("fortnight"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitQuotas {
    algorithm: AlgorithmKind,
    burst: Option<u32>,
    zero_denies: bool,
}

/// One quota of a limit, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaPart {
    /// A quota to enforce.
    Quota(Quota),
    /// A limit of 0: every request refused ([`DenyAll`](crate::backend::DenyAll)); the quota
    /// (of 1 request) gives the window, what a refusal says to wait.
    DenyAll(Quota),
}

impl QuotaPart {
    /// The quota: enforced, or the window of a limit of 0.
    pub fn quota(&self) -> Quota {
        match self {
            QuotaPart::Quota(quota) | QuotaPart::DenyAll(quota) => *quota,
        }
    }
}

/// Why a limit's quotas cannot be used, and which of its fields is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaProblem {
    /// True when the `burst` given beside the quotas is wrong, false for the quota strings.
    pub burst: bool,
    /// Why, as a sentence.
    pub reason: String,
}

impl fmt::Display for QuotaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl LimitQuotas {
    /// Quotas run by `algorithm`, with no burst beside them and no limit of 0.
    pub fn new(algorithm: AlgorithmKind) -> Self {
        LimitQuotas {
            algorithm,
            burst: None,
            zero_denies: false,
        }
    }

    /// Applies `burst` to the quota (refused when there are several: which one it meant is a
    /// guess, and the string can say it, `"5/minute burst 2; 100/hour"`).
    pub fn burst(mut self, burst: Option<u32>) -> Self {
        self.burst = burst;
        self
    }

    /// Reads a limit of 0 (`"0/minute"`) as refusing every request; refused as a quota
    /// otherwise (the default).
    pub fn zero_denies(mut self, on: bool) -> Self {
        self.zero_denies = on;
        self
    }

    /// The quotas of `texts`, in order, or the first problem.
    pub fn check<T: AsRef<str>>(&self, texts: &[T]) -> Result<Vec<QuotaPart>, QuotaProblem> {
        let quota_problem = |reason: String| QuotaProblem {
            burst: false,
            reason,
        };
        let mut parts = Vec::new();
        for text in texts {
            parts.extend(self.parts_of(text.as_ref()).map_err(quota_problem)?);
        }
        if parts.is_empty() {
            return Err(quota_problem(
                "no quota: give one such as \"100/minute\"".into(),
            ));
        }
        self.finish(parts)
    }

    /// Quotas a configuration gave as numbers (`requests_per_unit` and `unit`), read as
    /// [`check`](Self::check) reads strings: the burst applied, each checked against the
    /// algorithm.
    pub fn check_quotas(&self, quotas: Vec<Quota>) -> Result<Vec<QuotaPart>, QuotaProblem> {
        self.finish(quotas.into_iter().map(QuotaPart::Quota).collect())
    }

    /// `parts` with the burst applied, each checked against the algorithm.
    fn finish(&self, mut parts: Vec<QuotaPart>) -> Result<Vec<QuotaPart>, QuotaProblem> {
        let quota_problem = |reason: String| QuotaProblem {
            burst: false,
            reason,
        };
        if let Some(burst) = self.burst {
            if parts.len() > 1 {
                return Err(QuotaProblem {
                    burst: true,
                    reason: "applies to one quota, and quota has several: give each its burst \
                             in the quota string (\"5/minute burst 2; 100/hour\")"
                        .into(),
                });
            }
            if let QuotaPart::Quota(quota) = &mut parts[0] {
                *quota = quota.try_with_burst(burst).map_err(|e| QuotaProblem {
                    burst: true,
                    reason: e.to_string(),
                })?;
            }
        }
        for part in &parts {
            if let QuotaPart::Quota(quota) = part {
                self.algorithm
                    .check_quota(quota)
                    .map_err(|e| quota_problem(e.to_string()))?;
            }
        }
        Ok(parts)
    }

    /// The quotas of one string (several, separated as `Quota::parse_many` reads them).
    fn parts_of(&self, text: &str) -> Result<Vec<QuotaPart>, String> {
        match Quota::parse_many(text) {
            Ok(quotas) => Ok(quotas.into_iter().map(QuotaPart::Quota).collect()),
            Err(QuotaError::ZeroLimit) if self.zero_denies => {
                // Each part on its own: the zero ones refuse all, with their window.
                let mut parts = Vec::new();
                for one in split_quotas(text) {
                    parts.push(match one.parse::<Quota>() {
                        Ok(quota) => QuotaPart::Quota(quota),
                        Err(QuotaError::ZeroLimit) => QuotaPart::DenyAll(window_of_zero(one)?),
                        Err(e) => return Err(e.to_string()),
                    });
                }
                Ok(parts)
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The quotas of a string of several, as `Quota::parse_many` separates them (`;`, `,` before
/// a limit, or `|`).
fn split_quotas(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let separates = match b {
            b';' | b'|' => true,
            // A comma separates two quotas when a limit (a digit) follows; else it comes
            // before `burst` or `anchored`.
            b',' => text[i + 1..]
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit()),
            _ => false,
        };
        if separates {
            parts.push(text[start..i].trim());
            start = i + 1;
        }
    }
    parts.push(text[start..].trim());
    parts
}

/// The window of a limit of 0 (`"0/minute"`): the quota of one request per that period.
fn window_of_zero(text: &str) -> Result<Quota, String> {
    let rest = text.trim_start().trim_start_matches('0');
    format!("1{rest}")
        .parse::<Quota>()
        .map_err(|e| format!("invalid quota {text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_quotas_in_strings_and_lists() {
        let read = LimitQuotas::new(AlgorithmKind::Gcra);
        let parts = read.check(&["5/minute; 100/hour", "1000/day"]).unwrap();
        let quotas: Vec<Quota> = parts.iter().map(QuotaPart::quota).collect();
        assert_eq!(
            quotas,
            [
                Quota::per_minute(5),
                Quota::per_hour(100),
                "1000/day".parse().unwrap()
            ]
        );
        assert!(read
            .check::<&str>(&[])
            .unwrap_err()
            .reason
            .contains("no quota"));
    }

    #[test]
    fn zero_refuses_all_only_when_asked() {
        let read = LimitQuotas::new(AlgorithmKind::FixedWindow);
        assert!(read.check(&["0/minute"]).is_err());
        let zero = read.zero_denies(true);
        let parts = zero.check(&["0/15m; 5/second"]).unwrap();
        assert_eq!(
            parts,
            [
                QuotaPart::DenyAll("1/15m".parse().unwrap()),
                QuotaPart::Quota(Quota::per_second(5))
            ]
        );
        assert_eq!(
            zero.check(&["0/60000ms anchored"]).unwrap(),
            [QuotaPart::DenyAll("1/60000ms anchored".parse().unwrap())]
        );
        assert!(zero
            .check(&["0/fortnight"])
            .unwrap_err()
            .reason
            .contains("fortnight"));
        assert!(zero.check(&["0/minute;"]).is_err());
    }

    #[test]
    fn a_burst_beside_goes_with_one_quota() {
        let read = LimitQuotas::new(AlgorithmKind::Gcra).burst(Some(20));
        let parts = read.check(&["100/minute"]).unwrap();
        assert_eq!(parts[0].quota().burst(), 20);
        let several = read.check(&["5/minute; 100/hour"]).unwrap_err();
        assert!(several.burst && several.reason.contains("several"));
        let zero = LimitQuotas::new(AlgorithmKind::Gcra).burst(Some(0));
        assert!(zero.check(&["5/minute"]).unwrap_err().burst);
    }

    #[test]
    fn the_algorithm_must_run_each_quota() {
        let anchored = ["5/minute anchored"];
        assert!(LimitQuotas::new(AlgorithmKind::FixedWindow)
            .check(&anchored)
            .is_ok());
        let problem = LimitQuotas::new(AlgorithmKind::Gcra)
            .check(&anchored)
            .unwrap_err();
        assert!(!problem.burst);
    }
}
