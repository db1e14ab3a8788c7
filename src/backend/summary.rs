//! [`Summary`]: one decision standing for several limits' decisions.

use crate::decision::{Decision, Details};

/// The tightest remaining and the longest times among the limits' decisions.
#[derive(Default)]
pub(crate) struct Summary {
    remaining: Option<(u32, u32)>,
    retry_after: u64,
    reset_after: u64,
    wait: u64,
    table_full: bool,
}

impl Summary {
    /// A limit with `remaining` left of `limit`.
    pub(crate) fn add_remaining_value(&mut self, remaining: u32, limit: u32) {
        if self.remaining.is_none_or(|(r, _)| remaining < r) {
            self.remaining = Some((remaining, limit));
        }
    }

    pub(crate) fn add_times(&mut self, d: &Decision) {
        let nanos = |t: std::time::Duration| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        if let Some(retry) = d.retry_after() {
            self.retry_after = self.retry_after.max(nanos(retry));
        }
        self.table_full |= d.is_table_full();
        self.reset_after = self.reset_after.max(nanos(d.reset_after()));
        self.wait = self.wait.max(nanos(d.wait()));
    }

    pub(crate) fn decision(&self, allowed: bool) -> Decision {
        let (remaining, limit) = self.remaining.unwrap_or((u32::MAX, u32::MAX));
        if !allowed && self.table_full {
            return Decision::table_full(limit);
        }
        Decision::eager(
            allowed,
            limit,
            Details {
                remaining,
                retry_after: self.retry_after,
                reset_after: self.reset_after,
                wait: self.wait,
            },
        )
    }
}
