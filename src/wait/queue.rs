//! [`WaitQueue`]: waiting in line for a limit, first come first served per key, bounded by
//! how many may wait and how long one may: the one queue behind every "wait for my turn"
//! (Node's `throttle`, Python's `acquire` and `wait`, [`WaitQueue::acquire`] in Rust).
//!
//! The queue decides; the host waits. Its rules are here once: who asks the limiter (the head
//! of a key's line, one at a time), what an answer means (go, after a leaky bucket's shaping
//! delay; sleep exactly the limiter's `retry_after`, then ask again; or give up at once when
//! that sleep would end past the request's `max_wait`), who is refused before waiting at all
//! (`max_queue` requests already waiting) and who gives up in line (its `max_wait` passed).
//! A host with its own event loop (JavaScript's timers, Python's threads or asyncio) drives
//! it with [`join`](WaitQueue::join), [`is_turn`](WaitQueue::is_turn),
//! [`after`](WaitQueue::after) and [`leave`](WaitQueue::leave); Rust awaits
//! [`acquire`](WaitQueue::acquire) on tokio. A refusal consumes nothing: only an admitted
//! request was counted, and a request that leaves the line was never admitted.

use crate::backend::{BackendError, BackendErrorKind};
use crate::decision::Decision;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Requests waiting for a limit, one first-come-first-served line per key.
///
/// ```
/// use sluicegate::wait::{Next, WaitQueue};
/// use sluicegate::{KeyedLimiter, Quota};
/// use std::time::Duration;
///
/// let limiter = KeyedLimiter::<String>::new(Quota::per_second(10).with_burst(1))?;
/// let queue = WaitQueue::new(Some(100), Some(Duration::from_secs(5)));
/// let ticket = queue.join("api", false).expect("room in line");
/// assert!(queue.is_turn(&ticket));
/// let first = queue.after(&ticket, &limiter.check("api"));
/// assert!(matches!(first, Next::Go { .. }));
/// queue.leave(ticket);
/// // The next request for "api" is told to sleep a tenth of a second, then ask again.
/// let ticket = queue.join("api", false).expect("room in line");
/// let Next::Sleep(pause) = queue.after(&ticket, &limiter.check("api")) else { panic!() };
/// assert!(pause <= Duration::from_millis(100));
/// queue.leave(ticket);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct WaitQueue {
    max_queue: Option<usize>,
    max_wait: Option<Duration>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    lines: HashMap<String, Line>,
    /// Requests waiting, every line together.
    waiting: usize,
    next_id: u64,
}

#[derive(Default)]
struct Line {
    /// Ticket ids in turn order, with the waker of whoever waits for that ticket's turn.
    tickets: VecDeque<(u64, Option<Waker>)>,
    /// Nothing is asked of the limiter for this key before then (a server's `429` said so).
    paused_until: Option<Instant>,
}

/// A place in a key's line, from [`WaitQueue::join`]; give it back with
/// [`leave`](WaitQueue::leave) whatever happens (a dropped ticket keeps its place until the
/// queue is dropped: hosts leave explicitly, and [`WaitQueue::acquire`] leaves when it ends
/// or is dropped).
#[derive(Debug, PartialEq, Eq)]
pub struct Ticket {
    id: u64,
    key: String,
    /// Joined at.
    since: Instant,
    /// Refused once its wait would end after this.
    deadline: Option<Instant>,
}

impl Ticket {
    /// The key whose line it is in.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// How long it has waited.
    pub fn waited(&self) -> Duration {
        self.since.elapsed()
    }
}

/// What the head of a line does with the limiter's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Admitted: leave the line and go, after `wait` (a leaky bucket's shaping delay; zero
    /// otherwise).
    Go {
        /// How long to hold the request before sending it.
        wait: Duration,
    },
    /// Sleep this long (exactly until the limiter would admit the request), then ask again.
    Sleep(Duration),
    /// Refused: leave the line; nothing was consumed.
    Refuse(Refused),
}

/// Why a request waits no longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// `max_queue` requests were already waiting when it came.
    Full {
        /// The bound.
        max_queue: usize,
    },
    /// Its wait would last longer than `max_wait`: refused as soon as that is known, when the
    /// limiter's answer says it would need `needed` (from the moment it joined), or when its
    /// `max_wait` passed in line behind others (`needed` unknown).
    TooLong {
        /// The bound.
        max_wait: Duration,
        /// The wait it would have needed, when the limiter said.
        needed: Option<Duration>,
    },
    /// The limiter's table is full of other keys (`max_keys`): no wait is known to help.
    TableFull,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Full { max_queue } => {
                write!(f, "the queue is full ({max_queue} requests waiting)")
            }
            Refused::TooLong {
                max_wait,
                needed: Some(needed),
            } => write!(
                f,
                "the request would wait {needed:?}, longer than its {max_wait:?}"
            ),
            Refused::TooLong { max_wait, .. } => {
                write!(f, "the request could not go within {max_wait:?}")
            }
            Refused::TableFull => {
                f.write_str("the limiter's table is full (max_keys): no slot for a new key")
            }
        }
    }
}

impl Refused {
    /// A short name: `queue_full`, `queue_timeout` or `table_full` (what
    /// [`BackendError::label`] says of a refusal from [`WaitQueue::acquire`]).
    pub fn label(&self) -> &'static str {
        match self {
            Refused::Full { .. } => "queue_full",
            Refused::TooLong { .. } => "queue_timeout",
            Refused::TableFull => "table_full",
        }
    }
}

impl From<Refused> for BackendError {
    /// A refusal as [`WaitQueue::acquire`] returns it: a timeout for a wait too long, the
    /// backend unavailable for a full queue or table, labelled with [`Refused::label`].
    fn from(refused: Refused) -> Self {
        let kind = match refused {
            Refused::TooLong { .. } => BackendErrorKind::Timeout,
            Refused::Full { .. } | Refused::TableFull => BackendErrorKind::Unavailable,
        };
        BackendError::new(kind, refused.to_string()).with_label(refused.label())
    }
}

impl WaitQueue {
    /// A queue where at most `max_queue` requests wait at once (all keys together; `None`:
    /// no bound) and each waits at most `max_wait` (`None`: as long as it takes).
    pub fn new(max_queue: Option<usize>, max_wait: Option<Duration>) -> Self {
        WaitQueue {
            max_queue,
            max_wait,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Joins `key`'s line, at its end, or at its head when `first` (a request sent again
    /// after a refusal had its turn already); refused at once when `max_queue` requests are
    /// waiting (a request coming `first` is never refused so).
    pub fn join(&self, key: &str, first: bool) -> Result<Ticket, Refused> {
        let mut state = self.state();
        if let Some(max_queue) = self.max_queue {
            if state.waiting >= max_queue && !first {
                return Err(Refused::Full { max_queue });
            }
        }
        state.waiting += 1;
        state.next_id += 1;
        let id = state.next_id;
        let line = state.lines.entry(key.to_owned()).or_default();
        if first {
            line.tickets.push_front((id, None));
        } else {
            line.tickets.push_back((id, None));
        }
        let since = Instant::now();
        Ok(Ticket {
            id,
            key: key.to_owned(),
            since,
            deadline: self.max_wait.map(|wait| since + wait),
        })
    }

    /// True when `ticket` heads its line: its turn to ask the limiter.
    pub fn is_turn(&self, ticket: &Ticket) -> bool {
        let state = self.state();
        let line = state.lines.get(&ticket.key);
        line.and_then(|line| line.tickets.front())
            .is_some_and(|(id, _)| *id == ticket.id)
    }

    /// True when `ticket`'s `max_wait` has passed: a request still behind others gives up
    /// ([`Refused::TooLong`], [`leave`](Self::leave)).
    pub fn expired(&self, ticket: &Ticket) -> bool {
        ticket
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
    }

    /// What the head of a line does with the limiter's `decision` for its request: go, sleep
    /// exactly the limiter's `retry_after` (or what is left of a [pause](Self::pause)) and
    /// ask again, or give up at once when that would end past its `max_wait`.
    pub fn after(&self, ticket: &Ticket, decision: &Decision) -> Next {
        let now = Instant::now();
        if decision.is_allowed() {
            return Next::Go {
                wait: decision.wait(),
            };
        }
        let retry = match decision.retry_after() {
            Some(retry) if !decision.is_table_full() => retry,
            _ => return Next::Refuse(Refused::TableFull),
        };
        let paused = self
            .state()
            .lines
            .get(&ticket.key)
            .and_then(|line| line.paused_until)
            .map_or(Duration::ZERO, |until| until.saturating_duration_since(now));
        let sleep = retry.max(paused);
        if let (Some(deadline), Some(max_wait)) = (ticket.deadline, self.max_wait) {
            if now + sleep > deadline {
                return Next::Refuse(Refused::TooLong {
                    max_wait,
                    needed: Some(now.saturating_duration_since(ticket.since) + sleep),
                });
            }
        }
        Next::Sleep(sleep)
    }

    /// Asks nothing of the limiter for `key` for `pause` (a server's `429` said to wait):
    /// the head's next [`after`](Self::after) sleeps at least until then.
    pub fn pause(&self, key: &str, pause: Duration) {
        let until = Instant::now() + pause;
        let mut state = self.state();
        let line = state.lines.entry(key.to_owned()).or_default();
        line.paused_until = Some(line.paused_until.map_or(until, |old| old.max(until)));
    }

    /// How long `key`'s line is still paused.
    pub fn paused(&self, key: &str) -> Duration {
        let state = self.state();
        let until = state.lines.get(key).and_then(|line| line.paused_until);
        until.map_or(Duration::ZERO, |until| {
            until.saturating_duration_since(Instant::now())
        })
    }

    /// Leaves the line (admitted, refused or cancelled). Returns whether another request now
    /// heads that line (its host wakes it: its turn has come).
    pub fn leave(&self, ticket: Ticket) -> bool {
        let mut state = self.state();
        let Some(line) = state.lines.get_mut(&ticket.key) else {
            return false;
        };
        let Some(at) = line.tickets.iter().position(|(id, _)| *id == ticket.id) else {
            return false;
        };
        line.tickets.remove(at);
        let next = (at == 0)
            .then(|| line.tickets.front_mut().and_then(|(_, waker)| waker.take()))
            .flatten();
        let has_head = at == 0 && !line.tickets.is_empty();
        let idle = line.tickets.is_empty()
            && line
                .paused_until
                .is_none_or(|until| until <= Instant::now());
        if idle {
            state.lines.remove(&ticket.key);
        }
        state.waiting -= 1;
        drop(state);
        if let Some(waker) = next {
            waker.wake();
        }
        has_head
    }

    /// Requests waiting, every key together.
    pub fn len(&self) -> usize {
        self.state().waiting
    }

    /// True when no request waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys with a line (waiting requests, or a pause in effect).
    pub fn lines(&self) -> usize {
        self.state().lines.len()
    }

    /// Registers `waker` to be woken when `ticket` heads its line; true if it does already.
    fn wait_turn(&self, ticket: &Ticket, waker: &Waker) -> bool {
        let mut state = self.state();
        let Some(line) = state.lines.get_mut(&ticket.key) else {
            return true;
        };
        match line.tickets.iter_mut().position(|(id, _)| *id == ticket.id) {
            Some(0) | None => true,
            Some(at) => {
                line.tickets[at].1 = Some(waker.clone());
                false
            }
        }
    }
}

impl fmt::Debug for WaitQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitQueue")
            .field("max_queue", &self.max_queue)
            .field("max_wait", &self.max_wait)
            .field("waiting", &self.len())
            .finish()
    }
}

/// Leaves the line when the waiting ends, or is dropped.
struct Place<'a> {
    queue: &'a WaitQueue,
    ticket: Option<Ticket>,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.queue.leave(ticket);
        }
    }
}

/// Resolves when a ticket heads its line.
struct Turn<'a> {
    queue: &'a WaitQueue,
    ticket: &'a Ticket,
}

impl Future for Turn<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.queue.wait_turn(self.ticket, cx.waker()) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl WaitQueue {
    /// Waits in `key`'s line until `ask` (the limiter's check of this request) admits it:
    /// the head asks, sleeps exactly the limiter's `retry_after` on tokio's timer when
    /// denied, and asks again, each request in turn; then sleeps an admission's shaping
    /// `wait`. Refused at once by a full queue or when the limiter's answer says the wait
    /// would pass `max_wait`, and when `max_wait` passes in line: a [`BackendError`] whose
    /// [`label`](BackendError::label) is the [`Refused::label`]. Dropping the future leaves
    /// the line, consuming nothing.
    ///
    /// ```
    /// use sluicegate::wait::WaitQueue;
    /// use sluicegate::{KeyedLimiter, Quota};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let limiter = KeyedLimiter::<String>::new(Quota::per_second(20).with_burst(1))?;
    /// let queue = WaitQueue::new(None, Some(Duration::from_secs(1)));
    /// for _ in 0..2 {
    ///     let admitted = queue
    ///         .acquire("mail", || async { Ok(limiter.check("mail")) })
    ///         .await?;
    ///     assert!(admitted.is_allowed()); // the second waited a twentieth of a second
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn acquire<F, Fut>(&self, key: &str, mut ask: F) -> Result<Decision, BackendError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Decision, BackendError>>,
    {
        let ticket = self.join(key, false)?;
        let place = Place {
            queue: self,
            ticket: Some(ticket),
        };
        let ticket = place.ticket.as_ref().expect("held until the end");
        let turn = Turn {
            queue: self,
            ticket,
        };
        match (ticket.deadline, self.max_wait) {
            (Some(deadline), Some(max_wait)) => {
                let deadline = tokio::time::Instant::from_std(deadline);
                if tokio::time::timeout_at(deadline, turn).await.is_err() {
                    return Err(Refused::TooLong {
                        max_wait,
                        needed: None,
                    }
                    .into());
                }
            }
            _ => turn.await,
        }
        loop {
            let decision = ask().await?;
            match self.after(ticket, &decision) {
                Next::Go { wait } => {
                    drop(place);
                    if !wait.is_zero() {
                        tokio::time::sleep(wait).await;
                    }
                    return Ok(decision);
                }
                Next::Sleep(pause) => tokio::time::sleep(pause).await,
                Next::Refuse(refused) => return Err(refused.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::{KeyedLimiter, Quota};

    fn limiter() -> KeyedLimiter<String, crate::algorithm::Gcra, ManualClock> {
        KeyedLimiter::with_clock(Quota::per_second(10).with_burst(1), ManualClock::new()).unwrap()
    }

    #[test]
    fn one_line_per_key_first_come_first_served() {
        let queue = WaitQueue::new(None, None);
        let a = queue.join("k", false).unwrap();
        let b = queue.join("k", false).unwrap();
        let other = queue.join("j", false).unwrap();
        assert!(queue.is_turn(&a) && !queue.is_turn(&b) && queue.is_turn(&other));
        assert!(queue.leave(a), "b heads the line now");
        assert!(queue.is_turn(&b));
        // A retry goes first.
        let retry = queue.join("k", true).unwrap();
        assert!(queue.is_turn(&retry) && !queue.is_turn(&b));
        assert_eq!(queue.len(), 3);
        for ticket in [retry, b, other] {
            queue.leave(ticket);
        }
        assert_eq!(
            (queue.len(), queue.lines()),
            (0, 0),
            "idle keys take no memory"
        );
    }

    #[test]
    fn max_queue_refuses_at_once() {
        let queue = WaitQueue::new(Some(1), None);
        let a = queue.join("k", false).unwrap();
        assert_eq!(queue.join("j", false), Err(Refused::Full { max_queue: 1 }));
        let retry = queue.join("j", true).expect("a retry had its turn already");
        queue.leave(a);
        queue.leave(retry);
        assert!(queue.join("k", false).is_ok());
    }

    #[test]
    fn the_limiters_answer_says_go_sleep_or_refuse() {
        let queue = WaitQueue::new(None, Some(Duration::from_millis(150)));
        let limiter = limiter();
        let ticket = queue.join("k", false).unwrap();
        assert_eq!(
            queue.after(&ticket, &limiter.check("k")),
            Next::Go {
                wait: Duration::ZERO
            }
        );
        // Denied: sleep exactly the limiter's retry_after (100 ms), within the 150 ms.
        assert_eq!(
            queue.after(&ticket, &limiter.check("k")),
            Next::Sleep(Duration::from_millis(100))
        );
        // A retry beyond max_wait is refused at once, saying what it would have needed.
        let far = Decision::new(
            false,
            10,
            0,
            Some(Duration::from_millis(300)),
            Duration::ZERO,
            Duration::ZERO,
        );
        let Next::Refuse(Refused::TooLong {
            needed: Some(needed),
            ..
        }) = queue.after(&ticket, &far)
        else {
            panic!()
        };
        assert!(needed >= Duration::from_millis(300));
        assert_eq!(
            queue.after(&ticket, &Decision::table_full(10)),
            Next::Refuse(Refused::TableFull)
        );
        queue.leave(ticket);
    }

    #[test]
    fn a_pause_holds_the_line() {
        let queue = WaitQueue::new(None, None);
        queue.pause("k", Duration::from_secs(2));
        let ticket = queue.join("k", false).unwrap();
        let denied = Decision::new(
            false,
            1,
            0,
            Some(Duration::from_millis(1)),
            Duration::ZERO,
            Duration::ZERO,
        );
        let Next::Sleep(pause) = queue.after(&ticket, &denied) else {
            panic!()
        };
        assert!(pause > Duration::from_secs(1));
        queue.leave(ticket);
        assert_eq!(
            queue.lines(),
            1,
            "the pause outlives the line's last request"
        );
    }

    #[tokio::test]
    async fn acquire_waits_in_turn_and_max_wait_refuses() {
        let limiter = KeyedLimiter::<String>::new(Quota::per_second(20).with_burst(1)).unwrap();
        let queue = WaitQueue::new(None, Some(Duration::from_millis(120)));
        let ask = || async { Ok(limiter.check("k")) };
        let started = Instant::now();
        let (a, b, c, d) = tokio::join!(
            queue.acquire("k", ask),
            queue.acquire("k", ask),
            queue.acquire("k", ask),
            queue.acquire("k", ask)
        );
        assert!(a.is_ok() && b.is_ok() && c.is_ok(), "{a:?} {b:?} {c:?}");
        // The fourth would go at 150 ms, past its 120: refused as soon as that is known.
        let refused = d.unwrap_err();
        assert_eq!(refused.label(), "queue_timeout", "{refused}");
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert_eq!((queue.len(), queue.lines()), (0, 0));
        // Dropped while it sleeps for its turn: it leaves the line, consuming nothing.
        let before = limiter.peek("k").retry_after();
        let waiting = tokio::time::timeout(Duration::from_millis(5), queue.acquire("k", ask));
        assert!(waiting.await.is_err(), "still waiting when dropped");
        assert_eq!(queue.len(), 0);
        assert!(limiter.peek("k").retry_after() <= before);
    }
}
