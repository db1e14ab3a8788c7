//! [`Publisher`]: reads registered limiters and pushes their figures through `metrics`.

use super::describe::describe;
use super::thread::PublishThread;
use crate::telemetry::names::{
    ALLOWED, DECISION, DECISIONS_TOTAL, DENIED, KEYS, LIMITER, MEMORY_BYTES, SWEPT_KEYS_TOTAL,
    TABLE_FULL_TOTAL,
};
use crate::telemetry::Observed;
use metrics::{counter, gauge, SharedString};
use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

/// Publishes limiters' figures through the `metrics` facade, so any exporter (Prometheus,
/// StatsD, OpenTelemetry) shows them: `sluicegate_decisions_total`, `sluicegate_keys`,
/// `sluicegate_memory_bytes` and the others of [`names`](crate::telemetry::names), labelled
/// with each limiter's name.
///
/// The checks themselves never call the facade: keyed limiters count in per-thread records,
/// and the publisher reads those counts and sets the counters to them
/// ([`Counter::absolute`](metrics::Counter::absolute)) and the gauges to the current figures.
/// Call [`publish`](Self::publish) when you like (before a scrape), or
/// [`spawn`](Self::spawn) one thread that publishes every interval.
///
/// Limiters are held weakly: one dropped elsewhere is forgotten at the next publish.
/// Clones share their registrations.
///
/// ```
/// use std::sync::Arc;
/// use sluicegate::telemetry::Publisher;
/// use sluicegate::{KeyedLimiter, Quota};
///
/// let publisher = Publisher::new();
/// let per_user = Arc::new(KeyedLimiter::<u64>::new(Quota::per_second(10))?);
/// publisher.register("per-user", &per_user);
/// assert_eq!(publisher.publish(), 1);
/// drop(per_user);
/// assert_eq!(publisher.publish(), 0);
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Clone, Default)]
pub struct Publisher {
    registered: Arc<Mutex<Vec<Arc<Registration>>>>,
}

/// Reads the limiter's figures, if it is still alive, and hands them to the callback.
type Read = dyn Fn(&mut dyn FnMut(&dyn Observed)) -> bool + Send + Sync;

struct Registration {
    name: SharedString,
    /// For liveness alone.
    owner: Weak<dyn Any + Send + Sync>,
    read: Box<Read>,
}

impl Publisher {
    /// A publisher with nothing registered.
    pub fn new() -> Publisher {
        Publisher::default()
    }

    /// Publishes `limiter`'s figures under `name` (the `limiter` label) from now on, as long
    /// as it lives. A name may be registered more than once; each registration is published.
    pub fn register<L: Observed + 'static>(&self, name: impl Into<String>, limiter: &Arc<L>) {
        self.register_with(name, limiter, |limiter| limiter as &dyn Observed);
    }

    /// Publishes the limiter that `part` finds inside `owner` (a field of your own state, one
    /// tier of a [`TieredLimiter`](crate::tiers::TieredLimiter)) under `name`, as long as
    /// `owner` lives.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use sluicegate::telemetry::{Observed, Publisher};
    /// use sluicegate::tiers::TieredLimiter;
    /// use sluicegate::Quota;
    ///
    /// let tiers = Arc::new(
    ///     TieredLimiter::<&str, u64>::builder()
    ///         .tier("free", Quota::per_minute(10))
    ///         .tier("pro", Quota::per_minute(100))
    ///         .build()?,
    /// );
    /// let publisher = Publisher::new();
    /// for (tier, _) in tiers.tiers() {
    ///     let tier = *tier;
    ///     publisher.register_with(format!("api-{tier}"), &tiers, move |tiers| {
    ///         tiers.tier(tier).expect("registered from the limiter's own tiers") as &dyn Observed
    ///     });
    /// }
    /// assert_eq!(publisher.publish(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register_with<X, F>(&self, name: impl Into<String>, owner: &Arc<X>, part: F)
    where
        X: Send + Sync + 'static,
        F: for<'x> Fn(&'x X) -> &'x dyn Observed,
        F: Send + Sync + 'static,
    {
        let weak = Arc::downgrade(owner);
        let read = move |visit: &mut dyn FnMut(&dyn Observed)| match weak.upgrade() {
            Some(owner) => {
                visit(part(&owner));
                true
            }
            None => false,
        };
        let registration = Registration {
            name: SharedString::from(Arc::<str>::from(name.into())),
            owner: Arc::downgrade(owner) as Weak<dyn Any + Send + Sync>,
            read: Box::new(read),
        };
        self.lock().push(Arc::new(registration));
    }

    /// Pushes every live registered limiter's figures through the installed recorder now,
    /// forgets the dropped ones, and returns how many were published.
    pub fn publish(&self) -> usize {
        // Copy the list under the lock and publish outside it, so a slow recorder never
        // holds up `register`.
        let registered: Vec<Arc<Registration>> = self.lock().clone();
        describe();
        let mut published = 0;
        for registration in &registered {
            let name = &registration.name;
            if (registration.read)(&mut |limiter| publish_one(name, limiter)) {
                published += 1;
            }
        }
        self.lock()
            .retain(|registration| registration.owner.strong_count() > 0);
        published
    }

    /// Starts one thread (`sluicegate-metrics`) that calls [`publish`](Self::publish) every
    /// `interval` until the returned handle is dropped or [stopped](PublishThread::stop).
    pub fn spawn(&self, interval: Duration) -> std::io::Result<PublishThread> {
        let publisher = self.clone();
        PublishThread::start(
            move || {
                publisher.publish();
            },
            interval,
        )
    }

    /// Registrations whose limiter is still alive.
    pub fn len(&self) -> usize {
        self.lock()
            .iter()
            .filter(|registration| registration.owner.strong_count() > 0)
            .count()
    }

    /// True when no registered limiter is alive.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Registration>>> {
        // A panic elsewhere while registering leaves the list whole: keep using it.
        self.registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// One limiter's figures, each only if it reports it.
fn publish_one(name: &SharedString, limiter: &dyn Observed) {
    if let Some(counts) = limiter.counts() {
        counter!(DECISIONS_TOTAL, LIMITER => name.clone(), DECISION => ALLOWED)
            .absolute(counts.allowed);
        counter!(DECISIONS_TOTAL, LIMITER => name.clone(), DECISION => DENIED)
            .absolute(counts.denied);
    }
    if let Some(keys) = limiter.keys() {
        gauge!(KEYS, LIMITER => name.clone()).set(keys as f64);
    }
    if let Some(bytes) = limiter.memory_bytes() {
        gauge!(MEMORY_BYTES, LIMITER => name.clone()).set(bytes as f64);
    }
    if let Some(swept) = limiter.swept_keys() {
        counter!(SWEPT_KEYS_TOTAL, LIMITER => name.clone()).absolute(swept);
    }
    if let Some(full) = limiter.table_full() {
        counter!(TABLE_FULL_TOTAL, LIMITER => name.clone()).absolute(full);
    }
}

impl fmt::Debug for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .lock()
            .iter()
            .map(|registration| registration.name.to_string())
            .collect();
        f.debug_struct("Publisher")
            .field("limiters", &names)
            .finish()
    }
}
