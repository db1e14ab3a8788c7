//! Reference models: each algorithm written the plain textbook way, in exact arithmetic
//! (u128 rationals scaled by the period or the limit, a `Vec` of timestamps), sharing no code
//! with the library. Property tests run random traces through a model and the packed
//! limiter and compare every decision.
//!
//! Time is nanoseconds on a `ManualClock`, whose 0 is the UNIX epoch, so windows are
//! `[i * period, (i + 1) * period)`. Traces given to a model never go backwards.
#![allow(dead_code)]

use sluicegate::Quota;
use std::collections::BTreeMap;

/// One algorithm's textbook model.
pub trait Model: Clone + std::fmt::Debug {
    /// A fresh model of `quota`.
    fn new(quota: Quota) -> Self;
    /// Decides a request of `cost` at `now`: `Some(wait in ns)` when admitted (the wait is 0
    /// except for the leaky bucket), `None` when denied. Admission consumes.
    fn check(&mut self, now: u64, cost: u32) -> Option<u64>;
    /// Records a request of `cost` at `now` whatever the answer (a hit): returns what `check`
    /// would have, and keeps the cost even when that is `None` (the state goes into debt).
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64>;
    /// True when the state at `t` carries no information: a full bucket, an empty window, an
    /// empty log.
    fn is_fresh_at(&self, t: u64) -> bool;
    /// Enforces `quota` from `now` on, keeping what was consumed (the rule every algorithm's
    /// header states): rate algorithms keep the requests still owed, windows their counts (a
    /// new period moves what still counts into the window holding `now`), the log its live
    /// entries. Fractions are rounded toward denial.
    fn reconfigure(&mut self, quota: Quota, now: u64);
    /// The largest cost ever admissible.
    fn capacity(&self) -> u32;
}

fn parts(q: &Quota) -> (u128, u128, u128) {
    (
        u128::from(q.limit()),
        u128::from(q.burst()),
        q.period().as_nanos(),
    )
}

/// GCRA by virtual scheduling: theoretical arrival time `tat`, emission interval
/// `T = P / L`, tolerance `tau = T * (B - 1)`. A request of cost n is conforming iff
/// `max(tat, t) + n*T - t <= tau + T`. Times are kept multiplied by `L`, so `T` is exactly `P`.
#[derive(Clone, Debug)]
pub struct GcraModel {
    l: u128,
    b: u128,
    p: u128,
    /// tat * L.
    tat_l: u128,
}

impl Model for GcraModel {
    fn new(q: Quota) -> Self {
        let (l, b, p) = parts(&q);
        GcraModel { l, b, p, tat_l: 0 }
    }

    fn check(&mut self, now: u64, cost: u32) -> Option<u64> {
        if cost == 0 {
            return Some(0);
        }
        let now_l = u128::from(now) * self.l;
        let start = self.tat_l.max(now_l);
        let after = start + u128::from(cost) * self.p;
        if after - now_l > self.b * self.p {
            return None;
        }
        self.tat_l = after;
        Some(0)
    }

    /// A hit owes its whole cost: `tat` moves on by `n*T` whether or not it conformed.
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64> {
        let within = self.clone().check(now, cost);
        let now_l = u128::from(now) * self.l;
        self.tat_l = self.tat_l.max(now_l) + u128::from(cost) * self.p;
        within
    }

    fn is_fresh_at(&self, t: u64) -> bool {
        self.tat_l <= u128::from(t) * self.l
    }

    /// The backlog `tat - now` is `backlog / T` requests owed; they stay owed at the new `T`.
    fn reconfigure(&mut self, quota: Quota, now: u64) {
        let backlog_l = self.tat_l.saturating_sub(u128::from(now) * self.l);
        let (l, b, p) = parts(&quota);
        let owed = (backlog_l * p).div_ceil(self.p);
        let tat_l = if owed == 0 {
            0
        } else {
            u128::from(now) * l + owed
        };
        *self = GcraModel { l, b, p, tat_l };
    }

    fn capacity(&self) -> u32 {
        self.b as u32
    }
}

/// The leaky bucket as a queue: the next free departure slot; a request of cost n departs at
/// `max(next, t)` and occupies n slots of `T = P / L`; at most B slots may be queued.
#[derive(Clone, Debug)]
pub struct LeakyModel {
    l: u128,
    b: u128,
    p: u128,
    /// next * L.
    next_l: u128,
}

impl Model for LeakyModel {
    fn new(q: Quota) -> Self {
        let (l, b, p) = parts(&q);
        LeakyModel { l, b, p, next_l: 0 }
    }

    fn check(&mut self, now: u64, cost: u32) -> Option<u64> {
        if cost == 0 {
            return Some(0);
        }
        let now_l = u128::from(now) * self.l;
        let departs = self.next_l.max(now_l);
        let queued_after = departs + u128::from(cost) * self.p - now_l;
        if queued_after > self.b * self.p {
            return None;
        }
        self.next_l = departs + u128::from(cost) * self.p;
        // Waits until the first whole nanosecond at or after its departure.
        Some((departs.div_ceil(self.l) - u128::from(now)) as u64)
    }

    /// A hit takes its slots whether or not the queue had room for them.
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64> {
        let within = self.clone().check(now, cost);
        let now_l = u128::from(now) * self.l;
        self.next_l = self.next_l.max(now_l) + u128::from(cost) * self.p;
        within
    }

    fn is_fresh_at(&self, t: u64) -> bool {
        self.next_l <= u128::from(t) * self.l
    }

    /// The queued slots stay queued, each taking the new `T`.
    fn reconfigure(&mut self, quota: Quota, now: u64) {
        let queued_l = self.next_l.saturating_sub(u128::from(now) * self.l);
        let (l, b, p) = parts(&quota);
        let owed = (queued_l * p).div_ceil(self.p);
        let next_l = if owed == 0 {
            0
        } else {
            u128::from(now) * l + owed
        };
        *self = LeakyModel { l, b, p, next_l };
    }

    fn capacity(&self) -> u32 {
        self.b as u32
    }
}

/// A continuous token bucket: capacity B, refilled at L per P, starting full. Tokens are kept
/// multiplied by `P`, so the refill of `dt` ns is exactly `dt * L`.
#[derive(Clone, Debug)]
pub struct TokenBucketModel {
    l: u128,
    b: u128,
    p: u128,
    /// tokens * P; negative after a hit took more than the bucket held.
    tokens_p: i128,
    last: u64,
}

impl TokenBucketModel {
    fn refilled(&self, now: u64) -> i128 {
        let elapsed = i128::from(now.saturating_sub(self.last));
        (self.tokens_p + elapsed * self.l as i128).min((self.b * self.p) as i128)
    }

    /// Tokens at `now`, as a fraction of one token: (numerator, denominator P).
    pub fn tokens_at(&self, now: u64) -> (i128, i128) {
        (self.refilled(now), self.p as i128)
    }
}

impl Model for TokenBucketModel {
    fn new(q: Quota) -> Self {
        let (l, b, p) = parts(&q);
        TokenBucketModel {
            l,
            b,
            p,
            tokens_p: (b * p) as i128,
            last: 0,
        }
    }

    fn check(&mut self, now: u64, cost: u32) -> Option<u64> {
        let tokens = self.refilled(now);
        self.tokens_p = tokens;
        self.last = self.last.max(now);
        let need = i128::from(cost) * self.p as i128;
        if tokens < need && cost > 0 {
            return None;
        }
        self.tokens_p -= need;
        Some(0)
    }

    /// A hit takes its tokens whether or not they were there: the bucket goes negative.
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64> {
        let within = self.check(now, cost);
        if within.is_none() {
            self.tokens_p -= i128::from(cost) * self.p as i128;
        }
        within
    }

    fn is_fresh_at(&self, t: u64) -> bool {
        self.refilled(t) == (self.b * self.p) as i128
    }

    /// The tokens consumed (the burst minus the tokens held, debt included) stay consumed.
    fn reconfigure(&mut self, quota: Quota, now: u64) {
        let consumed = (self.b * self.p) as i128 - self.refilled(now);
        let (l, b, p) = parts(&quota);
        let consumed = (consumed * p as i128 + self.p as i128 - 1).div_euclid(self.p as i128);
        *self = TokenBucketModel {
            l,
            b,
            p,
            tokens_p: (b * p) as i128 - consumed,
            last: now,
        };
    }

    fn capacity(&self) -> u32 {
        self.b as u32
    }
}

/// A fixed window counter: a count per window `[i*P, (i+1)*P)`; admitted iff the window's
/// count plus the cost stays within L.
#[derive(Clone, Debug)]
pub struct FixedWindowModel {
    l: u64,
    p: u64,
    counts: BTreeMap<u64, u64>,
}

impl Model for FixedWindowModel {
    fn new(q: Quota) -> Self {
        FixedWindowModel {
            l: u64::from(q.limit()),
            p: q.period().as_nanos() as u64,
            counts: BTreeMap::new(),
        }
    }

    fn check(&mut self, now: u64, cost: u32) -> Option<u64> {
        if cost == 0 {
            return Some(0);
        }
        let count = self.counts.entry(now / self.p).or_insert(0);
        if *count + u64::from(cost) > self.l {
            return None;
        }
        *count += u64::from(cost);
        Some(0)
    }

    /// A hit counts in its window whether or not it fitted; a window holds at most `L` (the
    /// documented saturation, visible only to a later, larger quota in the same window).
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64> {
        let within = self.clone().check(now, cost);
        let count = self.counts.entry(now / self.p).or_insert(0);
        *count = (*count + u64::from(cost)).min(self.l);
        within
    }

    fn is_fresh_at(&self, t: u64) -> bool {
        self.counts.get(&(t / self.p)).copied().unwrap_or(0) == 0
    }

    /// The current window's count stays, in the new window holding `now`.
    fn reconfigure(&mut self, quota: Quota, now: u64) {
        let count = self.counts.get(&(now / self.p)).copied().unwrap_or(0);
        self.l = u64::from(quota.limit());
        self.p = quota.period().as_nanos() as u64;
        self.counts = BTreeMap::from([(now / self.p, count.min(self.l))]);
    }

    fn capacity(&self) -> u32 {
        self.l as u32
    }
}

/// The anchored fixed window, as express-rate-limit's memory store keeps it: per key, the
/// window's start and count. A request of cost > 0 at `t` when no window holds `t` starts one
/// at `t` (rounded down to the documented resolution, 2^(bits(L) - 1) ns); admitted iff the
/// count plus the cost stays within L. The window is `[start, start + P)`.
#[derive(Clone, Debug)]
pub struct AnchoredWindowModel {
    l: u64,
    p: u64,
    /// The current window: `(start, count)`.
    window: Option<(u64, u64)>,
}

impl AnchoredWindowModel {
    fn resolution(l: u64) -> u64 {
        let bits = 64 - l.leading_zeros();
        1 << (bits - 1)
    }

    /// The window holding `t`, if any.
    fn holding(&self, t: u64) -> Option<(u64, u64)> {
        self.window
            .filter(|&(start, count)| count > 0 && t < start + self.p)
    }

    fn started_at(&self, t: u64) -> u64 {
        t / Self::resolution(self.l) * Self::resolution(self.l)
    }
}

impl Model for AnchoredWindowModel {
    fn new(q: Quota) -> Self {
        assert!(q.is_anchored(), "the anchored model is for anchored quotas");
        AnchoredWindowModel {
            l: u64::from(q.limit()),
            p: q.period().as_nanos() as u64,
            window: None,
        }
    }

    fn check(&mut self, now: u64, cost: u32) -> Option<u64> {
        if cost == 0 {
            return Some(0);
        }
        let (start, count) = self.holding(now).unwrap_or((self.started_at(now), 0));
        if count + u64::from(cost) > self.l {
            return None;
        }
        self.window = Some((start, count + u64::from(cost)));
        Some(0)
    }

    /// A hit counts whether or not it fitted, saturating at L (as the aligned window does).
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64> {
        let within = self.clone().check(now, cost);
        if cost > 0 {
            let (start, count) = self.holding(now).unwrap_or((self.started_at(now), 0));
            self.window = Some((start, (count + u64::from(cost)).min(self.l)));
        }
        within
    }

    fn is_fresh_at(&self, t: u64) -> bool {
        self.holding(t).is_none()
    }

    /// The window keeps its start (at the new resolution) and its count, up to the new
    /// limit; it ends one new period after its start.
    fn reconfigure(&mut self, quota: Quota, now: u64) {
        let held = self.holding(now);
        self.l = u64::from(quota.limit());
        self.p = quota.period().as_nanos() as u64;
        self.window = held.map(|(start, count)| (self.started_at(start), count.min(self.l)));
    }

    fn capacity(&self) -> u32 {
        self.l as u32
    }
}

/// The sliding window counter: with `prev` and `curr` the counts of the previous and current
/// windows and `f = elapsed / P` the fraction of the current window gone, the estimate is
/// `prev * (1 - f) + curr`; each unit of a request must find it below L. In rationals over P:
/// `prev * (P - elapsed) + (curr + n - 1) * P < L * P`.
#[derive(Clone, Debug)]
pub struct SlidingWindowModel {
    l: u128,
    p: u64,
    counts: BTreeMap<u64, u64>,
}

impl SlidingWindowModel {
    fn counts_at(&self, t: u64) -> (u128, u128, u128) {
        let window = t / self.p;
        let count = |w: u64| u128::from(self.counts.get(&w).copied().unwrap_or(0));
        let prev = window.checked_sub(1).map_or(0, count);
        (prev, count(window), u128::from(t % self.p))
    }
}

impl Model for SlidingWindowModel {
    fn new(q: Quota) -> Self {
        SlidingWindowModel {
            l: u128::from(q.limit()),
            p: q.period().as_nanos() as u64,
            counts: BTreeMap::new(),
        }
    }

    fn check(&mut self, now: u64, cost: u32) -> Option<u64> {
        if cost == 0 {
            return Some(0);
        }
        let (prev, curr, elapsed) = self.counts_at(now);
        let p = u128::from(self.p);
        let estimate_of_last_unit = prev * (p - elapsed) + (curr + u128::from(cost) - 1) * p;
        if estimate_of_last_unit >= self.l * p {
            return None;
        }
        *self.counts.entry(now / self.p).or_insert(0) += u64::from(cost);
        Some(0)
    }

    /// A hit counts in its window whether or not it fitted; a window holds at most `L` (the
    /// documented saturation: a hit beyond the limit records a full window).
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64> {
        let within = self.clone().check(now, cost);
        let count = self.counts.entry(now / self.p).or_insert(0);
        *count = (*count + u64::from(cost)).min(self.l as u64);
        within
    }

    fn is_fresh_at(&self, t: u64) -> bool {
        let (prev, curr, _) = self.counts_at(t);
        prev == 0 && curr == 0
    }

    /// With the same period both windows' counts stay; with another, what still counts now
    /// (the weighted estimate, rounded up) becomes the new current window's count.
    fn reconfigure(&mut self, quota: Quota, now: u64) {
        let (prev, curr, elapsed) = self.counts_at(now);
        let (l, p) = (u128::from(quota.limit()), quota.period().as_nanos() as u64);
        let window = now / self.p;
        self.counts = if p == self.p {
            let mut counts = BTreeMap::from([(window, curr.min(l) as u64)]);
            if let Some(before) = window.checked_sub(1) {
                counts.insert(before, prev.min(l) as u64);
            }
            counts
        } else {
            let old = u128::from(self.p);
            let estimate = (prev * (old - elapsed)).div_ceil(old) + curr;
            BTreeMap::from([(now / p, estimate.min(l) as u64)])
        };
        self.l = l;
        self.p = p;
    }

    fn capacity(&self) -> u32 {
        self.l as u32
    }
}

/// The sliding log: every admitted unit's timestamp; a unit logged at `s` counts during
/// `[s, s + P)`. Admitted iff the live entries plus the cost stay within L.
#[derive(Clone, Debug)]
pub struct SlidingLogModel {
    l: usize,
    p: u64,
    log: Vec<u64>,
}

impl Model for SlidingLogModel {
    fn new(q: Quota) -> Self {
        SlidingLogModel {
            l: q.limit() as usize,
            p: q.period().as_nanos() as u64,
            log: Vec::new(),
        }
    }

    fn check(&mut self, now: u64, cost: u32) -> Option<u64> {
        if cost == 0 {
            return Some(0);
        }
        let live = self.log.iter().filter(|&&s| s + self.p > now).count();
        if live + cost as usize > self.l {
            return None;
        }
        self.log.extend(std::iter::repeat_n(now, cost as usize));
        Some(0)
    }

    /// A hit logs every unit whether or not it fitted.
    fn hit(&mut self, now: u64, cost: u32) -> Option<u64> {
        let within = self.clone().check(now, cost);
        self.log.extend(std::iter::repeat_n(now, cost as usize));
        within
    }

    fn is_fresh_at(&self, t: u64) -> bool {
        self.log.iter().all(|&s| s + self.p <= t)
    }

    /// Every entry still live under the new period stays.
    fn reconfigure(&mut self, quota: Quota, now: u64) {
        self.l = quota.limit() as usize;
        self.p = quota.period().as_nanos() as u64;
        let p = self.p;
        self.log.retain(|&s| s + p > now);
    }

    fn capacity(&self) -> u32 {
        self.l as u32
    }
}

/// What a model says a decision's numbers should be, found by probing clones of it.
pub mod probe {
    use super::Model;

    /// Single requests a model would still admit at `now`.
    pub fn remaining<M: Model>(model: &M, now: u64) -> u32 {
        let mut clone = model.clone();
        let mut admitted = 0;
        while admitted <= clone.capacity() && clone.check(now, 1).is_some() {
            admitted += 1;
        }
        admitted
    }

    /// The first instant at or after `now` at which the model admits `cost`, searching up to
    /// `horizon` ns ahead (admission is monotone in time when nothing else happens).
    pub fn first_admission<M: Model>(model: &M, now: u64, cost: u32, horizon: u64) -> Option<u64> {
        let admits = |t: u64| model.clone().check(t, cost).is_some();
        first_true(now, now + horizon, admits)
    }

    /// The first instant at or after `now` at which the model is fresh.
    pub fn first_fresh<M: Model>(model: &M, now: u64, horizon: u64) -> Option<u64> {
        first_true(now, now + horizon, |t| model.is_fresh_at(t))
    }

    /// The first value in `[lo, hi]` at which `holds` (monotone) is true.
    pub fn first_true(lo: u64, hi: u64, holds: impl Fn(u64) -> bool) -> Option<u64> {
        if !holds(hi) {
            return None;
        }
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if holds(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo)
    }
}
