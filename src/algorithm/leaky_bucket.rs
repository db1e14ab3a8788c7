//! [`LeakyBucket`]: a shaping leaky bucket (a queue drained at a constant rate).
//!
//! Rule: admitted requests leave at a constant rate, one every `T = period / limit`; an
//! admitted request is told how long to wait for its slot ([`Decision::wait`]); the queue
//! holds at most `burst` requests: on an idle limiter a burst of `burst` requests is admitted
//! with waits `0, T, ..., (burst - 1)*T` and the next is denied until a slot frees up. The
//! admission rule is GCRA's (`max(next - now, 0) + n*T <= burst*T`), so the two admit the
//! same requests; GCRA lets them through at once, the leaky bucket spaces them out.
//!
//! Layout: the whole `u64` is the next free slot time, in the units of the shared
//! [emission core](super::emission): `[63..0] next`. Fresh: 0.
//!
//! Ranges and precision: as [`Gcra`](super::Gcra). A request of cost `n` takes `n`
//! consecutive slots and waits for the first.

use super::emission::{emission_algorithm, Reading};
use crate::decision::{Decision, Details};

/// A shaping leaky bucket: admits up to `burst` queued requests and tells each how long to
/// [`wait`](Decision::wait) so that the output is smooth at `limit / period`.
///
/// ```
/// use std::time::Duration;
/// use sluicegate::{Limiter, Quota, algorithm::LeakyBucket, clock::ManualClock};
///
/// let clock = ManualClock::new();
/// let limiter = Limiter::<LeakyBucket, _>::with_clock(Quota::per_second(4).with_burst(3), clock)?;
/// let waits: Vec<_> = (0..3).map(|_| limiter.check().wait()).collect();
/// assert_eq!(waits, [Duration::ZERO, Duration::from_millis(250), Duration::from_millis(500)]);
/// assert!(limiter.check().is_denied()); // the queue is full
/// # Ok::<(), sluicegate::QuotaError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct LeakyBucket;

fn explain(d: &Decision) -> Details {
    let reading = Reading::of(d);
    let wait = if d.is_allowed() && d.cost() > 0 {
        reading.slot_wait()
    } else {
        0
    };
    reading.details(wait)
}

emission_algorithm!(LeakyBucket, "LeakyBucket", explain);
