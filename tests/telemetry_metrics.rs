//! The metrics publisher, under a recording `metrics::Recorder`: the exact counters and
//! gauges a known trace produces, absolute values that never double, limiters forgotten when
//! dropped, descriptions, and the background thread.
#![cfg(feature = "metrics")]

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, Key, KeyName, Metadata, Recorder, SharedString,
    Unit,
};
use sluicegate::algorithm::Gcra;
use sluicegate::clock::ManualClock;
use sluicegate::dynamic::AnyKeyedLimiter;
use sluicegate::policy::AlgorithmKind;
use sluicegate::telemetry::{names, Observed, Publisher};
use sluicegate::tiers::TieredLimiter;
use sluicegate::{KeyedLimiter, Limiter, Quota};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One metric's value: a counter's count, or a gauge's `f64` bits.
#[derive(Default)]
struct Cell(AtomicU64);

impl CounterFn for Cell {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::SeqCst);
    }

    fn absolute(&self, value: u64) {
        self.0.fetch_max(value, Ordering::SeqCst);
    }
}

impl GaugeFn for Cell {
    fn increment(&self, value: f64) {
        self.set(f64::from_bits(self.0.load(Ordering::SeqCst)) + value);
    }

    fn decrement(&self, value: f64) {
        GaugeFn::increment(self, -value);
    }

    fn set(&self, value: f64) {
        self.0.store(value.to_bits(), Ordering::SeqCst);
    }
}

/// Records every counter and gauge by `name{label=value,...}` (labels sorted).
#[derive(Default, Clone)]
struct TestRecorder {
    counters: Arc<Mutex<BTreeMap<String, Arc<Cell>>>>,
    gauges: Arc<Mutex<BTreeMap<String, Arc<Cell>>>>,
    descriptions: Arc<Mutex<BTreeMap<String, Option<Unit>>>>,
}

fn id(key: &Key) -> String {
    let mut labels: Vec<String> = key
        .labels()
        .map(|label| format!("{}={}", label.key(), label.value()))
        .collect();
    labels.sort();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl TestRecorder {
    fn counters(&self) -> BTreeMap<String, u64> {
        let counters = self.counters.lock().unwrap();
        counters
            .iter()
            .map(|(key, cell)| (key.clone(), cell.0.load(Ordering::SeqCst)))
            .collect()
    }

    fn gauges(&self) -> BTreeMap<String, f64> {
        let gauges = self.gauges.lock().unwrap();
        gauges
            .iter()
            .map(|(key, cell)| (key.clone(), f64::from_bits(cell.0.load(Ordering::SeqCst))))
            .collect()
    }

    fn cell(map: &Mutex<BTreeMap<String, Arc<Cell>>>, key: &Key) -> Arc<Cell> {
        map.lock().unwrap().entry(id(key)).or_default().clone()
    }

    fn describe(&self, key: KeyName, unit: Option<Unit>) {
        self.descriptions
            .lock()
            .unwrap()
            .insert(key.as_str().to_owned(), unit);
    }
}

impl Recorder for TestRecorder {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, _: SharedString) {
        self.describe(key, unit);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, _: SharedString) {
        self.describe(key, unit);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, _: SharedString) {
        self.describe(key, unit);
    }

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Self::cell(&self.counters, key))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Self::cell(&self.gauges, key))
    }

    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn publish(recorder: &TestRecorder, publisher: &Publisher) -> usize {
    metrics::with_local_recorder(recorder, || publisher.publish())
}

fn map<V: Clone>(entries: &[(&str, V)]) -> BTreeMap<String, V> {
    entries
        .iter()
        .map(|(key, value)| ((*key).to_owned(), value.clone()))
        .collect()
}

/// alice: 3 checks of a 2/second quota (2 allowed, 1 denied) and a peek (not counted);
/// bob: 1 check.
fn known_trace(limiter: &KeyedLimiter<String, Gcra, ManualClock>) {
    for _ in 0..3 {
        limiter.check("alice");
    }
    limiter.peek("alice");
    limiter.check("bob");
}

#[test]
fn a_known_trace_publishes_exact_counts_keys_and_memory() {
    let recorder = TestRecorder::default();
    let limiter = Arc::new(
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_second(2), ManualClock::new())
            .unwrap(),
    );
    let publisher = Publisher::new();
    publisher.register("api", &limiter);
    known_trace(&limiter);
    assert_eq!(publish(&recorder, &publisher), 1);

    assert_eq!(
        recorder.counters(),
        map(&[
            (
                "sluicegate_decisions_total{decision=allowed,limiter=api}",
                3
            ),
            ("sluicegate_decisions_total{decision=denied,limiter=api}", 1),
            ("sluicegate_swept_keys_total{limiter=api}", 0),
            ("sluicegate_table_full_total{limiter=api}", 0),
        ])
    );
    assert_eq!(
        recorder.gauges(),
        map(&[
            ("sluicegate_keys{limiter=api}", 2.0),
            (
                "sluicegate_memory_bytes{limiter=api}",
                limiter.memory_bytes() as f64
            ),
        ])
    );
}

#[test]
fn counters_are_absolute_so_publishing_again_never_doubles() {
    let recorder = TestRecorder::default();
    let limiter = Arc::new(
        KeyedLimiter::<String, Gcra, _>::with_clock(Quota::per_second(2), ManualClock::new())
            .unwrap(),
    );
    let publisher = Publisher::new();
    publisher.register("api", &limiter);
    known_trace(&limiter);
    publish(&recorder, &publisher);
    publish(&recorder, &publisher);
    limiter.check("carol");
    publish(&recorder, &publisher);
    let counters = recorder.counters();
    assert_eq!(
        counters["sluicegate_decisions_total{decision=allowed,limiter=api}"],
        4
    );
    assert_eq!(
        counters["sluicegate_decisions_total{decision=denied,limiter=api}"],
        1
    );
    assert_eq!(recorder.gauges()["sluicegate_keys{limiter=api}"], 3.0);
}

#[test]
fn dropped_limiters_are_forgotten() {
    let recorder = TestRecorder::default();
    let publisher = Publisher::new();
    let kept = Arc::new(KeyedLimiter::<u64>::new(Quota::per_second(1)).unwrap());
    let dropped = Arc::new(KeyedLimiter::<u64>::new(Quota::per_second(1)).unwrap());
    publisher.register("kept", &kept);
    publisher.register("dropped", &dropped);
    assert_eq!(publisher.len(), 2);
    drop(dropped);
    assert_eq!(publisher.len(), 1);
    assert_eq!(publish(&recorder, &publisher), 1);
    assert!(recorder
        .counters()
        .keys()
        .all(|key| key.contains("limiter=kept")));
}

#[test]
fn dynamic_and_tiered_limiters_publish_too() {
    let recorder = TestRecorder::default();
    let clock = ManualClock::new();
    let any = Arc::new(
        AnyKeyedLimiter::<u64, _>::with_clock(
            Quota::per_second(1),
            AlgorithmKind::SlidingLog,
            clock.clone(),
        )
        .unwrap(),
    );
    let tiers = Arc::new(
        TieredLimiter::<&str, u64>::builder()
            .clock(clock.clone())
            .tier("free", Quota::per_second(1))
            .tier("pro", Quota::per_second(5))
            .build()
            .unwrap(),
    );
    // Direct limiters count their checks in per-thread records, as keyed ones do.
    let direct = Arc::new(Limiter::<Gcra, _>::with_clock(Quota::per_second(1), clock).unwrap());
    any.check(&1);
    any.check(&1);
    tiers.check(&"free", &1).unwrap();
    tiers.check(&"free", &1).unwrap();
    tiers.check(&"pro", &1).unwrap();
    direct.check();

    let publisher = Publisher::new();
    publisher.register("any", &any);
    publisher.register("tiers", &tiers);
    for tier in ["free", "pro"] {
        publisher.register_with(format!("tiers-{tier}"), &tiers, move |tiers| {
            tiers.tier(tier).unwrap() as &dyn Observed
        });
    }
    publisher.register("direct", &direct);
    assert_eq!(publish(&recorder, &publisher), 5);
    let decisions = |limiter: &str, decision: &str| {
        recorder.counters()
            [&format!("sluicegate_decisions_total{{decision={decision},limiter={limiter}}}")]
    };
    assert_eq!(
        (decisions("any", "allowed"), decisions("any", "denied")),
        (1, 1)
    );
    assert_eq!(
        (decisions("tiers", "allowed"), decisions("tiers", "denied")),
        (2, 1)
    );
    assert_eq!(
        (
            decisions("tiers-free", "allowed"),
            decisions("tiers-free", "denied")
        ),
        (1, 1)
    );
    assert_eq!(
        (
            decisions("tiers-pro", "allowed"),
            decisions("tiers-pro", "denied")
        ),
        (1, 0)
    );
    assert_eq!(recorder.gauges()["sluicegate_keys{limiter=tiers}"], 2.0);
    assert_eq!(
        (
            decisions("direct", "allowed"),
            decisions("direct", "denied")
        ),
        (1, 0)
    );
}

#[test]
fn every_metric_is_described_with_its_unit() {
    let recorder = TestRecorder::default();
    publish(&recorder, &Publisher::new());
    let descriptions = recorder.descriptions.lock().unwrap().clone();
    assert_eq!(
        descriptions,
        map(&[
            (names::DECISIONS_TOTAL, Some(Unit::Count)),
            (names::KEYS, Some(Unit::Count)),
            (names::MEMORY_BYTES, Some(Unit::Bytes)),
            (names::REDIS_CALL_DURATION_SECONDS, Some(Unit::Seconds)),
            (names::REDIS_DENY_CACHE_HITS_TOTAL, Some(Unit::Count)),
            (names::REDIS_ERRORS_TOTAL, Some(Unit::Count)),
            (names::REDIS_FALLBACKS_TOTAL, Some(Unit::Count)),
            (names::SWEPT_KEYS_TOTAL, Some(Unit::Count)),
            (names::TABLE_FULL_TOTAL, Some(Unit::Count)),
        ])
    );
    for name in descriptions.keys() {
        assert!(name.starts_with("sluicegate_"), "{name}");
    }
}

/// The one test using the global recorder, which the background thread publishes to.
#[test]
fn the_background_thread_publishes_every_interval_until_stopped() {
    let recorder = TestRecorder::default();
    metrics::set_global_recorder(recorder.clone()).expect("no other test sets it");
    let limiter = Arc::new(KeyedLimiter::<u64>::new(Quota::per_second(1)).unwrap());
    let publisher = Publisher::new();
    publisher.register("background", &limiter);
    let thread = publisher.spawn(Duration::from_millis(5)).unwrap();
    let allowed = "sluicegate_decisions_total{decision=allowed,limiter=background}";
    let wait_for = |count: u64| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while recorder.counters().get(allowed) != Some(&count) {
            assert!(Instant::now() < deadline, "never published {count}");
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    limiter.check(&1);
    wait_for(1);
    limiter.check(&2);
    wait_for(2);
    assert_eq!(publishing_threads(), 1);
    thread.stop();
    // Stopped means ended: no thread is left that could publish.
    assert_eq!(publishing_threads(), 0, "the thread outlived stop()");
    limiter.check(&3);
    assert_eq!(recorder.counters()[allowed], 2);
    assert_eq!(limiter.allowed(), 3);
}

/// Threads of this process named `sluicegate-metrics` (Linux keeps the first 15 bytes).
fn publishing_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("Linux's /proc")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim_end() == "sluicegate-metr")
        .count()
}
