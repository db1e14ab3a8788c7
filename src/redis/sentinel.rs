//! [`SentinelConn`]: a connection to the master a set of Redis Sentinels names, that follows
//! a failover.
//!
//! It asks the Sentinels for the master's address (`SENTINEL get-master-addr-by-name`,
//! then `ROLE` on that address, by redis-rs's `SentinelClient`) and talks to it through a
//! `ConnectionManager`, as to a standalone Redis. A call that fails as a failover makes
//! calls fail (the connection refused or dropped, `READONLY` from a demoted master,
//! `MASTERDOWN`) starts one background refresh, which asks the Sentinels again and moves to
//! the master they name if it is another one. While the master is down the link's breaker
//! fails calls fast and its probe (a `PING` every 100 ms) keeps refreshing, so calls come
//! back within a probe interval of the Sentinels naming the new master.

use super::error::RedisError;
use super::target::{SentinelAuth, SentinelUrl, Tls};
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::sentinel::SentinelClient;
use redis::{Cmd, RedisResult, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The master now, and the connection to it.
struct Master {
    address: String,
    conn: ConnectionManager,
}

/// The connection to the master the Sentinels name.
pub(crate) struct SentinelConn {
    sentinels: tokio::sync::Mutex<SentinelClient>,
    master: RwLock<Option<Master>>,
    config: ConnectionManagerConfig,
    /// Bounds each question to the Sentinels.
    connect_timeout: Duration,
    /// A refresh is running (one at a time).
    refreshing: AtomicBool,
}

impl SentinelConn {
    /// The connection for `url` (asking nothing yet: the first call, or the probe, does).
    pub(crate) fn new(
        url: &SentinelUrl,
        tls: &Tls,
        auth: &SentinelAuth,
        config: ConnectionManagerConfig,
        connect_timeout: Duration,
    ) -> Result<SentinelConn, RedisError> {
        Ok(SentinelConn {
            sentinels: tokio::sync::Mutex::new(url.client(tls, auth)?),
            master: RwLock::new(None),
            config,
            connect_timeout,
            refreshing: AtomicBool::new(false),
        })
    }

    /// Sends `cmd` to the master, asking the Sentinels first if no master is known yet;
    /// after a failure that a failover explains, starts a refresh.
    pub(crate) async fn query(self: &Arc<Self>, cmd: &Cmd) -> RedisResult<Value> {
        let current = self.current();
        let mut conn = match current {
            Some(conn) => conn,
            // Boxed: asking the Sentinels is a deep future, and rare; the call's stays small.
            None => Box::pin(self.refresh()).await?,
        };
        let reply = conn.req_packed_command(cmd).await;
        let failed_over = match &reply {
            Ok(Value::ServerError(error)) => {
                matches!(error.code(), "READONLY" | "MASTERDOWN")
            }
            Ok(_) => false,
            Err(error) => {
                error.is_io_error()
                    || error.is_connection_dropped()
                    || error.is_connection_refusal()
                    || error.is_timeout()
                    || matches!(error.code(), Some("READONLY" | "MASTERDOWN"))
            }
        };
        if failed_over {
            self.refresh_in_background();
        }
        reply
    }

    /// The connection to the master known now.
    fn current(&self) -> Option<ConnectionManager> {
        let master = self.master.read().unwrap_or_else(|e| e.into_inner());
        master.as_ref().map(|master| master.conn.clone())
    }

    /// Starts a refresh unless one is running.
    fn refresh_in_background(self: &Arc<Self>) {
        if self.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let conn = Arc::downgrade(self);
        tokio::spawn(async move {
            if let Some(conn) = conn.upgrade() {
                let _ = conn.refresh().await;
                conn.refreshing.store(false, Ordering::Release);
            }
        });
    }

    /// Asks the Sentinels for the master (within the connect timeout) and connects to it,
    /// keeping the connection when the master did not change.
    pub(crate) async fn refresh(&self) -> RedisResult<ConnectionManager> {
        let asked = async {
            let mut sentinels = self.sentinels.lock().await;
            sentinels.async_get_client().await
        };
        let client = match tokio::time::timeout(self.connect_timeout, asked).await {
            Ok(client) => client?,
            Err(_) => {
                return Err(redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "no Sentinel named the master within the connect timeout",
                )))
            }
        };
        let address = client.get_connection_info().addr().to_string();
        if let Some(master) = self
            .master
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            if master.address == address {
                return Ok(master.conn.clone());
            }
        }
        let conn = ConnectionManager::new_lazy_with_config(client, self.config.clone())?;
        *self.master.write().unwrap_or_else(|e| e.into_inner()) = Some(Master {
            address,
            conn: conn.clone(),
        });
        Ok(conn)
    }

    /// The master's address now, if known (for the reset watch's subscription).
    pub(crate) async fn master_client(&self) -> Option<redis::Client> {
        let asked = async {
            let mut sentinels = self.sentinels.lock().await;
            sentinels.async_get_client().await
        };
        tokio::time::timeout(self.connect_timeout, asked)
            .await
            .ok()?
            .ok()
    }
}
