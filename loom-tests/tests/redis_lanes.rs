#![cfg(loom)]
//! The Redis batch lanes' bookkeeping (`src/redis/lanes.rs`, driven by `batch.rs`): callers
//! racing to queue on one lane, the lone call's flight returning and flushing what queued,
//! full batches flushed at once, and the lane's watchdog failing late calls. In every
//! interleaving each call is answered exactly once (decided alone, in a batch, or timed out),
//! none is left queued with no flight to take it, no more than the limit is ever in flight,
//! and the lane is forgotten once idle.

use loom::sync::atomic::{AtomicU64, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;
use sluicegate::redis::loom_hooks::{Enqueued, HandOver, Lanes, Limits, Waiting};

/// How each call was answered, by call number.
#[derive(Debug, Default)]
struct Answers(Mutex<Vec<(usize, &'static str)>>);

impl Answers {
    fn answer(&self, call: usize, how: &'static str) {
        self.0.lock().unwrap().push((call, how));
    }

    fn of(&self, call: usize) -> Vec<&'static str> {
        let answers = self.0.lock().unwrap();
        answers
            .iter()
            .filter(|(c, _)| *c == call)
            .map(|(_, how)| *how)
            .collect()
    }
}

/// A queued call: its number and deadline; a timeout is recorded as its answer.
struct Call {
    number: usize,
    deadline: u64,
    answers: Arc<Answers>,
}

impl Waiting for Call {
    type Time = u64;

    fn size(&self) -> usize {
        1
    }

    fn deadline(&self) -> u64 {
        self.deadline
    }

    fn is_abandoned(&self) -> bool {
        false
    }

    fn time_out(self) {
        self.answers.answer(self.number, "timed out");
    }
}

/// One lane (`0`) of the lanes under test, and what the calls were answered.
struct World {
    lanes: Lanes<u8, Call>,
    answers: Arc<Answers>,
    /// The clock deadlines are read from, under the lanes' lock (`batch.rs` reads
    /// `Instant::now()` there), so they grow along the queue.
    clock: AtomicU64,
    /// Each call's timeout.
    timeout: u64,
    /// When the take of a flush happens.
    take_at: u64,
    /// The latest time a watchdog looks at (it would sleep beyond).
    watch_until: u64,
    limits: Limits,
}

impl World {
    fn new(limits: Limits, timeout: u64, take_at: u64, watch_until: u64) -> Arc<World> {
        Arc::new(World {
            lanes: Lanes::new(limits),
            answers: Arc::new(Answers::default()),
            clock: AtomicU64::new(0),
            timeout,
            take_at,
            watch_until,
            limits,
        })
    }

    /// What a caller does in `batch.rs`: queue or go alone; then, as the tasks it would spawn,
    /// the flight's hand-over, a flush, the watchdog.
    fn call(&self, number: usize) {
        let enqueued = self.lanes.enqueue(0, number, |number| {
            let deadline = self.clock.fetch_add(1, SeqCst) + self.timeout;
            let call = Call {
                number,
                deadline,
                answers: self.answers.clone(),
            };
            (call, deadline)
        });
        self.in_flight_within_limit();
        match enqueued {
            Enqueued::Alone(number) => {
                self.answers.answer(number, "alone");
                self.flight_returns();
            }
            Enqueued::Queued {
                answer: deadline,
                watchdog,
                flush,
            } => {
                if flush {
                    self.flush();
                }
                if let Some(watchdog) = watchdog {
                    self.watch(watchdog, deadline);
                }
            }
        }
    }

    /// A flight ended: what queued goes next.
    fn flight_returns(&self) {
        match self.lanes.hand_over(0, || Some(())) {
            HandOver::Flush(()) => self.flush(),
            HandOver::Released => {}
            HandOver::Dropped => unreachable!("a runtime is always there"),
        }
        self.in_flight_within_limit();
    }

    /// `flush` in `batch.rs`: batches until none is left.
    fn flush(&self) {
        loop {
            let batch = self.lanes.take(0, self.take_at);
            if batch.is_empty() {
                return;
            }
            assert!(batch.len() <= self.limits.max_groups);
            for call in batch {
                self.answers.answer(call.number, "in a batch");
            }
        }
    }

    /// `watch` in `batch.rs`, up to `watch_until`: it sleeps until each deadline in turn.
    fn watch(&self, number: u64, first: u64) {
        let mut next = first;
        while next <= self.watch_until {
            match self.lanes.expire(0, number, next) {
                Some(deadline) => next = deadline,
                None => return,
            }
        }
    }

    fn in_flight_within_limit(&self) {
        if let Some((in_flight, ..)) = self.lanes.lane(0) {
            assert!(
                (1..=self.limits.max_in_flight).contains(&in_flight),
                "{in_flight} in flight"
            );
        }
    }
}

/// `callers` threads call once each (plus one on the main thread); once all are done, every
/// call has exactly one answer, the lane is idle and forgotten, and `expect(answers)` holds.
fn race(world: fn() -> Arc<World>, callers: usize, expect: fn(&[Vec<&'static str>])) {
    loom::model(move || {
        let world = world();
        let threads: Vec<_> = (1..=callers)
            .map(|number| {
                let world = world.clone();
                thread::spawn(move || world.call(number))
            })
            .collect();
        world.call(0);
        for thread in threads {
            thread.join().unwrap();
        }
        let answers: Vec<_> = (0..=callers).map(|call| world.answers.of(call)).collect();
        for (call, how) in answers.iter().enumerate() {
            assert_eq!(how.len(), 1, "call {call} was answered {how:?}");
        }
        assert_eq!(world.lanes.busy(), 0, "the lane is idle and forgotten");
        expect(&answers);
    });
}

const ROOMY: Limits = Limits {
    max_groups: 64,
    max_bytes: 1 << 20,
    max_in_flight: 4,
};

#[test]
fn calls_queued_behind_a_flight_go_in_the_next_batch_and_none_is_stranded() {
    // Timeouts far away, a watchdog that sees none of them pass: every call is decided.
    race(
        || World::new(ROOMY, 1_000, 0, 10),
        2,
        |answers| {
            assert!(answers.iter().all(|how| how[0] != "timed out"));
            assert!(answers.iter().any(|how| how[0] == "alone"));
        },
    );
}

#[test]
fn the_watchdog_and_the_flush_race_for_late_calls_and_each_is_answered_once() {
    // Calls time out at 1..3 and the flush takes at 2: some are taken, some are late, and
    // the watchdog (which looks as far as every deadline) fails those still queued.
    race(|| World::new(ROOMY, 1, 2, 100), 2, |_| {});
}

#[test]
fn full_batches_go_at_once_up_to_the_limit_in_flight() {
    // Batches of one: every queued call fills a batch, flushed at once while fewer than two
    // flights are out, otherwise left to the flights that return.
    const BATCHES_OF_ONE: Limits = Limits {
        max_groups: 1,
        max_bytes: 1 << 20,
        max_in_flight: 2,
    };
    race(
        || World::new(BATCHES_OF_ONE, 1_000, 0, 10),
        2,
        |answers| assert!(answers.iter().all(|how| how[0] != "timed out")),
    );
}
