//! `until_ready` on [`Limiter`] and [`KeyedLimiter`].

use super::until::until;
use super::Jitter;
use crate::algorithm::Op;
use crate::clock::Clock;
use crate::decision::Decision;
use crate::error::CapacityError;
use crate::keyed::KeyedLimiter;
use crate::limiter::Limiter;
use crate::state::Algorithm;
use std::borrow::Borrow;
use std::convert::Infallible;
use std::hash::{BuildHasher, Hash};

/// # Waiting instead of refusing (feature `tokio`)
impl<A: Algorithm, C: Clock> Limiter<A, C> {
    /// Waits until one request is admitted, and returns its decision (the unit is consumed).
    ///
    /// Sleeps on tokio's timer exactly until each denial's `retry_after`, then checks again
    /// (another task may have taken the capacity meanwhile); for a
    /// [`LeakyBucket`](crate::algorithm::LeakyBucket), also sleeps the admission's
    /// [`wait`](Decision::wait) before returning. Cancel-safe: dropped while waiting for a
    /// retry, it has consumed nothing. (Dropped during a leaky bucket's final `wait`, the slot
    /// it was given stays used.)
    ///
    /// ```
    /// use std::time::Duration;
    /// use sluicegate::{Limiter, Quota};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), sluicegate::QuotaError> {
    /// let mail_api = Limiter::<sluicegate::algorithm::Gcra>::new(Quota::per_second(50))?;
    /// for _ in 0..3 {
    ///     mail_api.until_ready().await; // at most 50 a second, however fast the loop
    ///     // send_email().await;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn until_ready(&self) -> Decision {
        self.until_ready_with_jitter(Jitter::NONE).await
    }

    /// [`until_ready`](Self::until_ready), adding `jitter` to each wait for a retry.
    pub async fn until_ready_with_jitter(&self, jitter: Jitter) -> Decision {
        let check = || std::future::ready(Ok::<_, Infallible>(self.check()));
        match until(check, jitter).await {
            Ok(decision) => decision,
            Err(never) => match never {},
        }
    }

    /// Waits until a request of cost `n` is admitted; fails at once, without waiting, when
    /// `n` exceeds the capacity (no wait could ever admit it).
    pub async fn until_n_ready(&self, n: u32) -> Result<Decision, CapacityError> {
        self.until_n_ready_with_jitter(n, Jitter::NONE).await
    }

    /// [`until_n_ready`](Self::until_n_ready), adding `jitter` to each wait for a retry.
    pub async fn until_n_ready_with_jitter(
        &self,
        n: u32,
        jitter: Jitter,
    ) -> Result<Decision, CapacityError> {
        Op::Check.within_capacity(n, self.max_cost())?;
        until(|| std::future::ready(self.check_n(n)), jitter).await
    }
}

/// # Waiting instead of refusing (feature `tokio`)
impl<K, A, C, S> KeyedLimiter<K, A, C, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    A: Algorithm,
    C: Clock,
    S: BuildHasher,
{
    /// Waits until one request for `key` is admitted; see
    /// [`Limiter::until_ready`](crate::Limiter::until_ready). If the table is full of active
    /// keys ([`max_keys`](crate::KeyedBuilder::max_keys)), a denial without `retry_after`,
    /// it backs off from 1 ms, doubling up to 1 s, until a key is freed.
    pub async fn until_ready<Q>(&self, key: &Q) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.until_ready_with_jitter(key, Jitter::NONE).await
    }

    /// [`until_ready`](Self::until_ready), adding `jitter` to each wait for a retry.
    pub async fn until_ready_with_jitter<Q>(&self, key: &Q, jitter: Jitter) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let check = || std::future::ready(Ok::<_, Infallible>(self.check(key)));
        match until(check, jitter).await {
            Ok(decision) => decision,
            Err(never) => match never {},
        }
    }

    /// Waits until a request of cost `n` for `key` is admitted; fails at once when `n`
    /// exceeds the capacity.
    pub async fn until_n_ready<Q>(&self, key: &Q, n: u32) -> Result<Decision, CapacityError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.until_n_ready_with_jitter(key, n, Jitter::NONE).await
    }

    /// [`until_n_ready`](Self::until_n_ready), adding `jitter` to each wait for a retry.
    pub async fn until_n_ready_with_jitter<Q>(
        &self,
        key: &Q,
        n: u32,
        jitter: Jitter,
    ) -> Result<Decision, CapacityError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if n > self.max_cost() {
            return Err(CapacityError::new(n, self.max_cost()));
        }
        until(|| std::future::ready(self.check_n(key, n)), jitter).await
    }
}
