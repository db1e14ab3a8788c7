//! Coalescing: while a call to a node is in flight, calls that arrive for the same node
//! queue; when it returns, everything queued goes in one call of `entry.lua`, which
//! decides each call in arrival order exactly as it would have been decided alone.
//!
//! - A lane is one standalone Redis, or one hash slot of a cluster (a script's keys must
//!   share a slot; redis-rs routes it and follows `MOVED`/`ASK` as for any call).
//! - No timer: an idle lane sends a lone call at once with its own script, so one task sees
//!   today's latency; batches form only under concurrency, exactly as large as it is.
//! - A batch holds at most [`MAX_GROUPS`] calls and [`MAX_BYTES`] of keys and arguments, so
//!   one script never holds Redis's single thread for long: a decision costs 2-7 µs of Redis
//!   CPU inside a batch (its share of the call's one `MGET`, its key's one write, and the
//!   rule's arithmetic), so a full batch of string states measured well under 1 ms on a
//!   loaded 2-core VM, the sliding log's about 1.2 ms, a hundredth of the default timeout;
//!   by 64 the per-call cost (parsing, the reply, the syscalls) is already spread thin, so
//!   larger batches would only hold Redis longer (BENCHMARKS.md, "Redis batching" and
//!   "Issue 33"). A lane that fills a batch while another is in
//!   flight sends it at once, up to [`MAX_IN_FLIGHT`] batches, so Redis is not idle while a
//!   round trip is out.
//! - Each caller keeps its own timeout, counted from when it queued, without a timer of its
//!   own (a timer per call took 6-8% of the client's CPU a batched decision: BENCHMARKS.md,
//!   "K-batching"): a lane's watchdog fails the queued calls whose time is up, and a batch in
//!   flight fails each of its calls at that call's deadline, while the batch itself runs on
//!   to its own timeout so that the breaker still counts it. A batch that fails as a whole
//!   (timeout, connection) fails every call in it with that error; an error of one call (a
//!   key of another type) is caught inside the script and fails that call only.
//!   Fallbacks and the deny cache stay per call, above this layer.
//! - A call abandoned (timed out, or its future dropped) before its batch is sent is left
//!   out of it: nothing is decided for it.

use super::error::{classify, RedisError};
use super::group::{Call, Group};
use super::keys::hash_slot;
use super::lanes::{Enqueued, HandOver, Lanes, Limits, Waiting};
use super::link::{failing_key, Link};
use super::reply::{self, Answers};
use redis::cluster_routing::Slot;
use redis::Value;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Calls per batch at most.
pub(crate) const MAX_GROUPS: usize = 64;
/// Bytes of keys and arguments per batch at most (a single larger call still goes, alone).
pub(crate) const MAX_BYTES: usize = 32 * 1024;
/// Calls (lone or batches) in flight per lane at most.
const MAX_IN_FLIGHT: u32 = 4;

/// Each member's numbers, or why the call failed.
type Answer = Result<Answers, RedisError>;

/// A queued call, where its answer goes, and when its caller's timeout (`after`) ends.
struct Queued {
    group: Group,
    reply: oneshot::Sender<Answer>,
    deadline: Instant,
    after: Duration,
}

impl Waiting for Queued {
    type Time = Instant;

    fn size(&self) -> usize {
        self.group.size()
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    fn is_abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    fn time_out(self) {
        let _ = self
            .reply
            .send(Err(RedisError::Timeout { after: self.after }));
    }
}

/// The lanes of one link (`None` for a standalone Redis, else the slot), and counts of what
/// they sent.
struct Batcher {
    lanes: Lanes<Option<Slot>, Queued>,
    batches: AtomicU64,
    largest: AtomicU64,
}

impl Default for Batcher {
    fn default() -> Self {
        Batcher {
            lanes: Lanes::new(Limits {
                max_groups: MAX_GROUPS,
                max_bytes: MAX_BYTES,
                max_in_flight: MAX_IN_FLIGHT,
            }),
            batches: AtomicU64::new(0),
            largest: AtomicU64::new(0),
        }
    }
}

impl Batcher {
    fn stats(&self) -> (u64, u64) {
        (self.batches.load(Relaxed), self.largest.load(Relaxed))
    }
}

/// Where a limiter's calls go: its [`Link`], and the calls queued for it while one is in
/// flight. Owns the batching, so that the link below it knows nothing of batches.
pub(crate) struct Sender {
    pub(crate) link: Arc<Link>,
    batcher: Batcher,
    /// False: every call goes alone at once.
    batching: bool,
    /// Calls the module can decide go to it (`RedisBuilder::module`); cleared for good when
    /// Redis does not know its command.
    native: AtomicBool,
}

impl Sender {
    pub(crate) fn new(link: Arc<Link>, batching: bool, native: bool) -> Arc<Sender> {
        Arc::new(Sender {
            link,
            batcher: Batcher::default(),
            batching,
            native: AtomicBool::new(native),
        })
    }

    /// Runs `call`: by the module's command when it can, else by the script.
    async fn run(&self, call: &Call<'_>) -> Result<Value, RedisError> {
        if call.native && self.native.load(Relaxed) {
            match self.link.decide_natively(&call.keys, &call.blob).await? {
                Some(value) => return Ok(value),
                None => {
                    self.native.store(false, Relaxed);
                    #[cfg(feature = "tracing")]
                    tracing::warn!(
                        redis = %self.link.identity(),
                        "Redis has no SLUICEGATE.DECIDE (the sluicegate module is not \
                         loaded): deciding with the scripts from now on"
                    );
                }
            }
        }
        self.link.eval(call.script, &call.keys, &call.args()).await
    }

    /// Batch scripts sent (each carrying two calls or more), and the most calls one carried.
    pub(crate) fn stats(&self) -> (u64, u64) {
        self.batcher.stats()
    }
}

/// Where [`Sender::enqueue`] sends a call.
enum Route {
    /// The lane was idle: the call goes at once, alone.
    Alone(Group),
    /// The call queued: its answer comes here.
    Queued(oneshot::Receiver<Answer>),
}

/// Marks a lane's lone call done when dropped, also when the caller gives up on it.
struct Flight<'a> {
    sender: &'a Arc<Sender>,
    lane: Option<Slot>,
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        self.sender.hand_over(self.lane);
    }
}

impl Sender {
    /// Decides `group` (one call): at once when its lane is idle, else in the next batch.
    /// Within the link's timeout either way.
    pub(crate) async fn decide(self: &Arc<Self>, group: Group) -> Answer {
        self.link.ready().await?;
        let lane = self
            .link
            .is_cluster()
            .then(|| hash_slot(group.members[0].key.as_bytes()));
        if !self.batching {
            return self.alone(&group).await;
        }
        let answer = match self.enqueue(lane, group) {
            Route::Queued(answer) => answer,
            Route::Alone(group) => {
                let flight = Flight { sender: self, lane };
                let answer = self.alone(&group).await;
                drop(flight);
                return answer;
            }
        };
        // Answered by its deadline: by the batch that carries it, or by the lane's watchdog.
        answer.await.unwrap_or_else(|_| {
            Err(RedisError::unavailable(
                "the batch carrying this call was dropped (the runtime is shutting down)",
            ))
        })
    }

    /// The error of a call whose caller's timeout ended.
    fn timed_out(&self) -> Answer {
        Err(RedisError::Timeout {
            after: self.link.timeout(),
        })
    }

    /// Sends `group` in a call of its own.
    async fn alone(&self, group: &Group) -> Answer {
        let value = self.run(&group.alone()).await?;
        self.answer(group, reply::only(value)?)
    }

    /// Queues `group` on a busy lane (sending a full batch at once if the lane may have one
    /// more in flight) and returns where its answer will come; on an idle lane, marks the
    /// lane busy and hands `group` back to go alone.
    fn enqueue(self: &Arc<Self>, lane: Option<Slot>, group: Group) -> Route {
        let after = self.link.timeout();
        let enqueued = self.batcher.lanes.enqueue(lane, group, |group| {
            // Read under the lock, so that deadlines grow along the queue.
            let deadline = Instant::now() + after;
            let (reply, answer) = oneshot::channel();
            let queued = Queued {
                group,
                reply,
                deadline,
                after,
            };
            (queued, (answer, deadline))
        });
        match enqueued {
            Enqueued::Alone(group) => Route::Alone(group),
            Enqueued::Queued {
                answer: (answer, deadline),
                watchdog,
                flush: flush_now,
            } => {
                if let Some(number) = watchdog {
                    tokio::spawn(watch(Arc::clone(self), lane, number, deadline));
                }
                if flush_now {
                    tokio::spawn(flush(Arc::clone(self), lane));
                }
                Route::Queued(answer)
            }
        }
    }

    /// Fails the calls at the front of `lane`'s queue whose time is up, and returns the
    /// deadline of the next one; `None` when the queue is empty (the watchdog then stops) or
    /// another watchdog has taken over.
    fn expire(&self, lane: Option<Slot>, number: u64) -> Option<Instant> {
        self.batcher.lanes.expire(lane, number, Instant::now())
    }

    /// A call on `lane` returned: what queued meanwhile goes next, from a task of its own so
    /// that the returning caller is not held; with nothing queued the lane is idle again.
    /// Dropped outside any runtime, nothing can send them: their callers see the channel close.
    fn hand_over(self: &Arc<Self>, lane: Option<Slot>) {
        let runtime = || tokio::runtime::Handle::try_current().ok();
        if let HandOver::Flush(runtime) = self.batcher.lanes.hand_over(lane, runtime) {
            runtime.spawn(flush(Arc::clone(self), lane));
        }
    }

    /// Up to a batch of the calls queued on `lane` (those still awaited, in time), oldest first;
    /// none when the queue is empty, and the lane's flight then ends.
    fn take(&self, lane: Option<Slot>) -> Vec<Queued> {
        self.batcher.lanes.take(lane, Instant::now())
    }

    /// Sends `batch` and answers each call in it by that call's deadline.
    async fn send(self: &Arc<Self>, batch: Vec<Queued>) {
        let (groups, mut waiting): (Vec<Group>, Vec<_>) = batch
            .into_iter()
            .map(|queued| (queued.group, Some((queued.reply, queued.deadline))))
            .unzip();
        let run = self.decide_all(&groups);
        tokio::pin!(run);
        let answers = loop {
            let next = waiting
                .iter()
                .flatten()
                .map(|(_, deadline)| *deadline)
                .min();
            let Some(next) = next else {
                // Every caller gave up; the batch still ends (within its own timeout) so
                // that the breaker counts how it went.
                run.await;
                return;
            };
            match tokio::time::timeout_at(next, &mut run).await {
                Ok(answers) => break answers,
                Err(_) => {
                    let now = Instant::now();
                    for slot in &mut waiting {
                        if slot.as_ref().is_some_and(|(_, deadline)| *deadline <= now) {
                            let (reply, _) = slot.take().expect("a waiting call");
                            let _ = reply.send(self.timed_out());
                        }
                    }
                }
            }
        };
        for (slot, answer) in waiting.into_iter().zip(answers) {
            if let Some((reply, _)) = slot {
                let _ = reply.send(answer);
            }
        }
    }

    /// Each group's answer: one alone, several in one batch call.
    async fn decide_all(self: &Arc<Self>, groups: &[Group]) -> Vec<Answer> {
        if let [group] = groups {
            return vec![self.alone(group).await];
        }
        self.batcher.batches.fetch_add(1, Relaxed);
        self.batcher.largest.fetch_max(groups.len() as u64, Relaxed);
        let result = {
            let call = Call::of(groups.iter(), 0);
            self.run(&call).await
        };
        match result {
            Ok(Value::Array(items)) if items.len() == groups.len() => (groups.iter().zip(items))
                .map(|(group, item)| self.answer(group, item))
                .collect(),
            Ok(_) => {
                let error = RedisError::Script {
                    message: "unexpected reply from the sluicegate batch script".into(),
                };
                vec![Err(error); groups.len()]
            }
            Err(error) => vec![Err(error); groups.len()],
        }
    }

    /// One call's element of a batch's reply: its numbers, or the error it had.
    fn answer(&self, group: &Group, item: Value) -> Answer {
        match item {
            Value::ServerError(error) => {
                let error = redis::RedisError::from(error);
                Err(classify(
                    &error,
                    &failing_key(&error, &group.keys()),
                    self.link.timeout(),
                ))
            }
            item => group.reply(item),
        }
    }
}

/// Fails `lane`'s queued calls as their time ends, until its queue is empty.
async fn watch(sender: Arc<Sender>, lane: Option<Slot>, number: u64, first: Instant) {
    let mut next = first;
    loop {
        tokio::time::sleep_until(next).await;
        match sender.expire(lane, number) {
            Some(deadline) => next = deadline,
            None => return,
        }
    }
}

/// Sends `lane`'s queued calls, a batch at a time, until none is left.
async fn flush(sender: Arc<Sender>, lane: Option<Slot>) {
    loop {
        let batch = sender.take(lane);
        if batch.is_empty() {
            return;
        }
        sender.send(batch).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Op;
    use crate::redis::group::Member;
    use crate::redis::link::Endpoint;
    use std::time::Duration;

    fn group(key: &str) -> Group {
        Group::one(
            Op::Check,
            Member {
                key: key.to_owned(),
                algorithm: "g",
                now: None,
                cost: 1,
                params: [0; 32],
            },
        )
    }

    /// A call queued behind a flight that never ends (nothing is sent here) still gets its
    /// timeout at its deadline, from the lane's watchdog, and leaves the queue. On tokio's
    /// paused clock, so the deadlines are met to the nanosecond however loaded the machine.
    #[tokio::test(start_paused = true)]
    async fn the_watchdog_times_out_a_call_queued_behind_a_stuck_flight() {
        const TIMEOUT: Duration = Duration::from_millis(60);
        let endpoint = Endpoint {
            url: "redis://127.0.0.1:1/".into(),
            cluster: false,
            timeout: TIMEOUT,
            connect_timeout: TIMEOUT,
            lazy: true,
            tls: Default::default(),
            sentinel_auth: Default::default(),
        };
        let sender = Sender::new(Link::connect(&endpoint).await.unwrap(), true, false);
        assert!(matches!(sender.enqueue(None, group("a")), Route::Alone(_)));
        let started = Instant::now();
        let Route::Queued(first) = sender.enqueue(None, group("b")) else {
            panic!("the lane is busy: the call queues")
        };
        tokio::time::sleep(TIMEOUT / 2).await;
        let Route::Queued(second) = sender.enqueue(None, group("c")) else {
            panic!("the lane is busy: the call queues")
        };
        // Each call's answer: a timeout, from the watchdog (without it, none ever comes).
        async fn timed_out(answer: oneshot::Receiver<Answer>) {
            let answer = tokio::time::timeout(Duration::from_secs(2), answer)
                .await
                .expect("answered by the watchdog")
                .unwrap();
            assert!(
                matches!(answer, Err(RedisError::Timeout { .. })),
                "{answer:?}"
            );
        }
        timed_out(first).await;
        assert_eq!(started.elapsed(), TIMEOUT);
        // The second call, queued later, is answered on its own, later deadline.
        timed_out(second).await;
        assert_eq!(started.elapsed(), TIMEOUT + TIMEOUT / 2);
        assert_eq!(
            sender.batcher.lanes.lane(None),
            Some((1, 0, 0, false)),
            "the lone call's flight is still out; nothing queued, no watchdog"
        );
    }
}
