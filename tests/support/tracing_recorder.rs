//! A `tracing` subscriber that records every event (level, target, fields as text), for
//! the tests of the log events: the unit tests of `src/telemetry/log` include this file, and
//! so do the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One event as recorded: level, target and every field as text (the message under
/// `message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub level: Level,
    pub target: String,
    pub fields: BTreeMap<String, String>,
}

/// Records every event at or above `max`.
#[derive(Clone)]
pub struct Recorder {
    max: Level,
    events: Arc<Mutex<Vec<Recorded>>>,
}

impl Recorder {
    pub fn new(max: Level) -> Recorder {
        Recorder {
            max,
            events: Arc::default(),
        }
    }

    /// Runs `f` with this recorder as the thread's subscriber; returns what it recorded.
    pub fn record(&self, f: impl FnOnce()) -> Vec<Recorded> {
        tracing::subscriber::with_default(self.clone(), f);
        std::mem::take(&mut *self.events.lock().unwrap())
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max
    }

    // Asked at every event, not cached per callsite: tests run recorders of different
    // levels on parallel threads.
    fn register_callsite(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(self.max.into())
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.events.lock().unwrap().push(Recorded {
            level: *event.metadata().level(),
            target: event.metadata().target().into(),
            fields,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// `(name, value)` pairs as the recorded fields of an event of `level` from sluicegate.
pub fn event(level: Level, fields: &[(&str, String)]) -> Recorded {
    Recorded {
        level,
        target: "sluicegate".into(),
        fields: fields
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect(),
    }
}
