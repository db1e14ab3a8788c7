//! The limiters made for descriptors' `limit` overrides, one per rule and override shape
//! (requests per unit and unit), at most `max` of them: a client choosing a new shape per
//! request cannot grow memory without bound.
//!
//! When the cache is full, a new shape makes room by dropping idle limiters: in process, those
//! whose every key is back to fresh (nothing is lost: a fresh key decides as a new one); on
//! Redis, the least recently used (the state lives in Redis: a new limiter on the same prefix
//! finds it). When none is idle, the new shape gets no limiter, and its descriptor is over the
//! limit, as a new key is in a full key table: never admitting what a limit would refuse.

use super::RuleLimiter;
use crate::config::Unit;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The default of `--max-override-limiters`.
pub const DEFAULT_MAX: usize = 1000;

/// How often a full cache may look for idle limiters on a request's path (the sweeper task
/// looks too): a flood of new shapes then costs one pass a second, not one per request.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A rule's index and an override's requests per unit and unit.
pub type Shape = (usize, u32, Unit);

/// The cache.
#[derive(Debug)]
pub struct Overrides {
    max: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    limiters: HashMap<Shape, Cached>,
    last_sweep: Option<Instant>,
    /// A counter standing for time: each use takes the next value (least recently used =
    /// smallest).
    uses: u64,
}

#[derive(Debug)]
struct Cached {
    limiter: RuleLimiter,
    last_used: u64,
}

impl Overrides {
    /// An empty cache of at most `max` limiters.
    pub fn new(max: usize) -> Overrides {
        Overrides {
            max,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The bound.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Limiters held now.
    pub fn len(&self) -> usize {
        self.lock().limiters.len()
    }

    /// True when none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The limiter of `shape`, if one is cached.
    pub fn get(&self, shape: &Shape) -> Option<RuleLimiter> {
        let mut inner = self.lock();
        inner.uses += 1;
        let now = inner.uses;
        let cached = inner.limiters.get_mut(shape)?;
        cached.last_used = now;
        Some(cached.limiter.clone())
    }

    /// Whether a new limiter would fit: true when the cache has room, or made room by dropping
    /// idle limiters (tried at most once a second). Asked before making one, so that a flood
    /// of new shapes into a full cache makes nothing.
    pub fn room(&self) -> bool {
        let mut inner = self.lock();
        if inner.limiters.len() < self.max {
            return true;
        }
        let due = inner
            .last_sweep
            .is_none_or(|at| at.elapsed() >= SWEEP_EVERY);
        if !due {
            return false;
        }
        inner.last_sweep = Some(Instant::now());
        inner.drop_idle(self.max);
        inner.limiters.len() < self.max
    }

    /// Caches `made` for `shape` if there is room, returning the limiter to use: the one
    /// already cached when another request stored one first, `None` when there is no room.
    pub fn insert(&self, shape: Shape, made: RuleLimiter) -> Option<RuleLimiter> {
        let mut inner = self.lock();
        inner.uses += 1;
        let now = inner.uses;
        if let Some(cached) = inner.limiters.get_mut(&shape) {
            cached.last_used = now;
            return Some(cached.limiter.clone());
        }
        if inner.limiters.len() >= self.max {
            return None;
        }
        inner.limiters.insert(
            shape,
            Cached {
                limiter: made.clone(),
                last_used: now,
            },
        );
        Some(made)
    }

    /// Drops every idle in-process limiter (the sweeper task's pass); returns how many.
    pub fn sweep(&self) -> usize {
        let mut inner = self.lock();
        let before = inner.limiters.len();
        inner.drop_idle(0);
        before - inner.limiters.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding it cannot leave the map inconsistent: changes are single calls.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Inner {
    /// Drops the in-process limiters whose keys are all fresh; then, while more than `keep`
    /// limiters remain, the least recently used Redis ones (their state stays in Redis).
    fn drop_idle(&mut self, keep: usize) {
        self.limiters.retain(|_, cached| match &cached.limiter {
            RuleLimiter::Local(local) => {
                local.sweep();
                !local.is_empty()
            }
            RuleLimiter::Remote(_) => true,
        });
        if self.limiters.len() < keep || keep == 0 {
            return;
        }
        let mut remote: Vec<(u64, Shape)> = self
            .limiters
            .iter()
            .filter(|(_, cached)| matches!(cached.limiter, RuleLimiter::Remote(_)))
            .map(|(shape, cached)| (cached.last_used, *shape))
            .collect();
        remote.sort_unstable_by_key(|(last_used, _)| *last_used);
        let excess = self.limiters.len() + 1 - keep;
        for (_, shape) in remote.into_iter().take(excess) {
            self.limiters.remove(&shape);
        }
    }
}
