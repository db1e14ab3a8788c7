//! `detailed_metric` series, bounded: each rule keeps at most `max_per_rule` series named by
//! request values (the first distinct values it sees), and counts every other value under the
//! rule's own key, as if `detailed_metric` were off. An overflow series rather than evicting
//! idle ones: the Prometheus registry cannot forget a series (so eviction would not free
//! anything), and a counter that vanished and came back would read as a reset.
//!
//! The set outlives reloads (it belongs to the engine), so a reload does not open room for
//! another `max_per_rule` series.

use super::RuleCounters;
use crate::config::Rule;
use std::collections::HashMap;
use std::sync::Mutex;

/// Every `detailed_metric` rule's series.
#[derive(Debug)]
pub struct DetailedSeries {
    max_per_rule: usize,
    /// By the rule's domain and key, then by the detailed key.
    rules: Mutex<HashMap<(String, String), HashMap<String, RuleCounters>>>,
}

/// What a detailed value is counted under.
pub enum Series {
    /// Its own series.
    Own(RuleCounters),
    /// The rule's: its rule already has `max_per_rule` series.
    Overflow,
}

impl DetailedSeries {
    /// At most `max_per_rule` series per rule.
    pub fn new(max_per_rule: usize) -> DetailedSeries {
        DetailedSeries {
            max_per_rule,
            rules: Mutex::new(HashMap::new()),
        }
    }

    /// The series of `key` (the request's values) under `rule`.
    pub fn series(&self, rule: &Rule, key: String) -> Series {
        // A panic while holding it leaves at worst a series missing: keep going.
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        let identity = (rule.domain.clone(), rule.key.clone());
        let series = rules.entry(identity).or_default();
        if let Some(found) = series.get(&key) {
            return Series::Own(found.clone());
        }
        if series.len() >= self.max_per_rule {
            return Series::Overflow;
        }
        let made = RuleCounters::new(&rule.domain, &key);
        series.insert(key, made.clone());
        Series::Own(made)
    }

    /// How many series are held, over every rule.
    pub fn len(&self) -> usize {
        let rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        rules.values().map(HashMap::len).sum()
    }

    /// True when none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
