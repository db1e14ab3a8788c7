//! Keeping the config current: polls the file or directory every 500 ms, and applies a
//! change once it has stayed the same for the debounce time (`--reload-debounce-ms`), so a
//! file written in several steps is never applied half-written; a file replaced whole by a
//! rename, and `SIGHUP`, apply at once. A valid change is swapped in with the unchanged rules'
//! limiters, an invalid one is refused, logged and counted, and the old config keeps serving.

use crate::config::{self, Fingerprint};
use crate::engine::{Engine, Snapshot};
use crate::limits::{Backing, Limits};
use crate::telemetry;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the config is looked at.
pub const POLL: Duration = Duration::from_millis(500);

/// Loads `path` and builds its limiters, keeping those of `previous` where rules did not
/// change place or algorithm.
pub async fn snapshot(
    path: &Path,
    backing: &Backing,
    previous: Option<&Snapshot>,
) -> Result<Snapshot, String> {
    let config = config::load(path).map_err(|e| e.to_string())?;
    let limits = Limits::build(
        &config,
        backing,
        previous.map(|old| (&old.config, &old.limits)),
    )
    .await?;
    let counters = telemetry::RuleCounters::for_config(&config);
    Ok(Snapshot {
        config,
        limits,
        counters,
    })
}

/// Watches one config path for one engine.
#[derive(Debug)]
pub struct Reloader {
    path: PathBuf,
    engine: Arc<Engine>,
}

impl Reloader {
    /// A reloader for `engine`'s config at `path`.
    pub fn new(path: PathBuf, engine: Arc<Engine>) -> Self {
        Reloader { path, engine }
    }

    /// Loads the config again and serves it if it is valid; otherwise logs why and keeps
    /// the old one.
    pub async fn reload(&self) -> bool {
        let previous = self.engine.snapshot();
        match snapshot(&self.path, &self.engine.backing, Some(&previous)).await {
            Ok(next) => {
                let rules = next.config.rules.len();
                self.engine.replace(next);
                telemetry::config_load(true);
                tracing::info!(path = %self.path.display(), rules, "config reloaded");
                true
            }
            Err(why) => {
                telemetry::config_load(false);
                tracing::error!(path = %self.path.display(), "config refused, the previous one keeps serving: {why}");
                false
            }
        }
    }

    /// Runs until the process ends: reloads when the config's contents change and then stay
    /// unchanged for `debounce` (at once when the change is files replaced by a rename), and
    /// on every `SIGHUP` that `hangup` (from [`hangups`]) delivers.
    pub async fn watch(
        self,
        mut seen: Fingerprint,
        mut hangup: tokio::sync::mpsc::Receiver<()>,
        debounce: Duration,
    ) {
        let mut tick = tokio::time::interval(POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // A change seen but not applied yet, and since when it has looked so.
        let mut pending: Option<(Fingerprint, Instant)> = None;
        loop {
            let forced = tokio::select! {
                _ = tick.tick() => false,
                Some(()) = hangup.recv() => true,
            };
            let path = self.path.clone();
            let now = match tokio::task::spawn_blocking(move || config::fingerprint(&path)).await {
                Ok(now) => now,
                Err(_) => continue,
            };
            let apply = if forced || (now != seen && now.replaced_whole(&seen)) {
                true
            } else if now == seen {
                pending = None;
                false
            } else {
                match &pending {
                    Some((waiting, since)) if *waiting == now => since.elapsed() >= debounce,
                    _ => {
                        pending = Some((now.clone(), Instant::now()));
                        debounce.is_zero()
                    }
                }
            };
            if apply {
                seen = now;
                pending = None;
                self.reload().await;
            }
        }
    }
}

/// `SIGHUP`s as a channel (never firing where there are no such signals). The handler is
/// installed when this returns, so a `SIGHUP` from then on reloads rather than ending the
/// process (the signal's default).
pub fn hangups() -> tokio::sync::mpsc::Receiver<()> {
    let (send, receive) = tokio::sync::mpsc::channel(1);
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut hup) = signal(SignalKind::hangup()) {
            tokio::spawn(async move {
                while hup.recv().await.is_some() {
                    let _ = send.try_send(());
                }
            });
        }
    }
    #[cfg(not(unix))]
    drop(send);
    receive
}
