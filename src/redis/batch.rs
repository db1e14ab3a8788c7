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
//! - Each caller keeps its own timeout, counted from when it queued. A batch that fails as a
//!   whole (timeout, connection) fails every call in it with that error; an error of one call
//!   (a key of another type) is caught inside the script and fails that call only.
//!   Fallbacks and the deny cache stay per call, above this layer.
//! - A call abandoned (timed out, or its future dropped) before its batch is sent is left
//!   out of it: nothing is decided for it.

use super::error::{classify, RedisError};
use super::group::{Call, Group};
use super::keys::hash_slot;
use super::link::{failing_key, Link};
use super::reply::{self, ScriptAnswer};
use redis::cluster_routing::Slot;
use redis::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::oneshot;

/// Calls per batch at most.
pub(crate) const MAX_GROUPS: usize = 64;
/// Bytes of keys and arguments per batch at most (a single larger call still goes, alone).
pub(crate) const MAX_BYTES: usize = 32 * 1024;
/// Calls (lone or batches) in flight per lane at most.
const MAX_IN_FLIGHT: u32 = 4;

/// Each member's numbers, or why the call failed.
type Answer = Result<Vec<ScriptAnswer>, RedisError>;

/// A queued call and where its answer goes.
struct Queued {
    group: Group,
    reply: oneshot::Sender<Answer>,
}

/// One node's (or slot's) calls.
#[derive(Default)]
struct Lane {
    in_flight: u32,
    queue: VecDeque<Queued>,
    bytes: usize,
}

/// The lanes of one link, and counts of what they sent.
#[derive(Default)]
struct Batcher {
    /// `None` for a standalone Redis, else the slot.
    lanes: Mutex<HashMap<Option<Slot>, Lane>>,
    batches: AtomicU64,
    largest: AtomicU64,
}

impl Batcher {
    fn stats(&self) -> (u64, u64) {
        (self.batches.load(Relaxed), self.largest.load(Relaxed))
    }

    fn lanes(&self) -> MutexGuard<'_, HashMap<Option<Slot>, Lane>> {
        // The lock guards plain bookkeeping that no panic leaves half-done.
        self.lanes.lock().unwrap_or_else(PoisonError::into_inner)
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
        match tokio::time::timeout(self.link.timeout(), answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(RedisError::unavailable(
                "the batch carrying this call was dropped (the runtime is shutting down)",
            )),
            Err(_) => Err(RedisError::Timeout {
                after: self.link.timeout(),
            }),
        }
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
        let mut lanes = self.batcher.lanes();
        let entry = lanes.entry(lane).or_default();
        if entry.in_flight == 0 {
            entry.in_flight = 1;
            return Route::Alone(group);
        }
        let (reply, answer) = oneshot::channel();
        entry.bytes += group.size();
        entry.queue.push_back(Queued { group, reply });
        let full = entry.queue.len() >= MAX_GROUPS || entry.bytes >= MAX_BYTES;
        if full && entry.in_flight < MAX_IN_FLIGHT {
            entry.in_flight += 1;
            drop(lanes);
            tokio::spawn(flush(Arc::clone(self), lane));
        }
        Route::Queued(answer)
    }

    /// A call on `lane` returned: what queued meanwhile goes next, from a task of its own so
    /// that the returning caller is not held; with nothing queued the lane is idle again.
    fn hand_over(self: &Arc<Self>, lane: Option<Slot>) {
        let mut lanes = self.batcher.lanes();
        let Some(entry) = lanes.get_mut(&lane) else {
            return;
        };
        if entry.queue.is_empty() {
            release(&mut lanes, lane);
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                drop(lanes);
                runtime.spawn(flush(Arc::clone(self), lane));
            }
            // Dropped outside any runtime: nothing can send them; their callers see the
            // channel close.
            Err(_) => {
                entry.queue.clear();
                entry.bytes = 0;
                release(&mut lanes, lane);
            }
        }
    }

    /// Up to a batch of the calls queued on `lane` (those still awaited), oldest first;
    /// none when the queue is empty, and the lane's flight then ends.
    fn take(&self, lane: Option<Slot>) -> Vec<Queued> {
        let mut lanes = self.batcher.lanes();
        let Some(entry) = lanes.get_mut(&lane) else {
            return Vec::new();
        };
        let mut batch = Vec::with_capacity(entry.queue.len().min(MAX_GROUPS));
        let mut bytes = 0;
        while batch.len() < MAX_GROUPS {
            let Some(next) = entry.queue.front() else {
                break;
            };
            let size = next.group.size();
            if !batch.is_empty() && bytes + size > MAX_BYTES {
                break;
            }
            let next = entry.queue.pop_front().expect("a front");
            entry.bytes -= size;
            if !next.reply.is_closed() {
                bytes += size;
                batch.push(next);
            }
        }
        if batch.is_empty() {
            release(&mut lanes, lane);
        }
        batch
    }

    /// Sends `batch` and answers each call in it.
    async fn send(self: &Arc<Self>, mut batch: Vec<Queued>) {
        if batch.len() == 1 {
            let Queued { group, reply } = batch.pop().expect("one call");
            let answer = self.alone(&group).await;
            let _ = reply.send(answer);
            return;
        }
        self.batcher.batches.fetch_add(1, Relaxed);
        self.batcher.largest.fetch_max(batch.len() as u64, Relaxed);
        let result = {
            let call = Call::of(batch.iter().map(|queued| &queued.group), 0);
            self.run(&call).await
        };
        match result {
            Ok(Value::Array(items)) if items.len() == batch.len() => {
                for (Queued { group, reply }, item) in batch.into_iter().zip(items) {
                    let _ = reply.send(self.answer(&group, item));
                }
            }
            Ok(_) => {
                let error = RedisError::Script {
                    message: "unexpected reply from the sluicegate batch script".into(),
                };
                for queued in batch {
                    let _ = queued.reply.send(Err(error.clone()));
                }
            }
            Err(error) => {
                for queued in batch {
                    let _ = queued.reply.send(Err(error.clone()));
                }
            }
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

/// Ends one flight on `lane`; an idle lane is forgotten (a cluster has many slots).
fn release(lanes: &mut HashMap<Option<Slot>, Lane>, lane: Option<Slot>) {
    if let Some(entry) = lanes.get_mut(&lane) {
        entry.in_flight -= 1;
        if entry.in_flight == 0 && entry.queue.is_empty() {
            lanes.remove(&lane);
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
