//! [`ResetWatch`]: resets made by other processes, heard over Redis pub/sub, so that this
//! process forgets what it remembers of the key too.
//!
//! [`RedisLimiter::reset`](super::RedisLimiter::reset) publishes the key on its limit's
//! channel in the same script as the `DEL`. A limiter that remembers denials (its deny
//! cache) or keeps local state (its local fallback) holds one subscribed connection and
//! forgets every key it hears; without it, another process's cached denial would outlive a
//! reset by up to its `retry_after`.
//!
//! Each (re)subscription starts by forgetting every cached denial, so a reset published
//! while the subscription was down is never missed: those keys are only asked of Redis
//! again. What remains is the message's own flight: a request that reaches this process
//! before the message does may still see the denial.

use super::health::PROBE_INTERVAL;
use super::link::Link;
use redis::aio::PubSubStream;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::AbortHandle;

/// The longest wait between failed attempts to subscribe.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// Forgets one key, or (`None`, on subscribing) every cached denial.
pub(crate) type Forget = Box<dyn Fn(Option<&str>) + Send + Sync>;

/// The subscription's task, ended when the limiter (which owns this) is dropped.
#[derive(Debug)]
pub(crate) struct ResetWatch(AbortHandle);

impl Drop for ResetWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl ResetWatch {
    /// Subscribes to `channel` on the first node of `link`'s Redis that answers (on a
    /// cluster every node hears every `PUBLISH`; through Sentinels, the master they name
    /// now), resubscribing whenever the connection ends. Needs a tokio runtime.
    pub(crate) fn start(
        link: Arc<Link>,
        channel: String,
        connect_timeout: Duration,
        forget: Forget,
    ) -> ResetWatch {
        let task = tokio::spawn(async move {
            let mut wait = PROBE_INTERVAL;
            loop {
                let mut heard = false;
                for client in link.subscriber_clients().await {
                    let Some(mut messages) = subscribe(client, &channel, connect_timeout).await
                    else {
                        continue;
                    };
                    heard = true;
                    forget(None);
                    wait = PROBE_INTERVAL;
                    while let Some(message) =
                        poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut messages), cx))
                            .await
                    {
                        if let Ok(key) = std::str::from_utf8(message.get_payload_bytes()) {
                            forget(Some(key));
                        }
                    }
                    break;
                }
                if !heard {
                    // Down, or refused for good (an ACL without this channel): ask less often.
                    wait = (wait * 2).min(MAX_WAIT);
                }
                tokio::time::sleep(wait).await;
            }
        });
        ResetWatch(task.abort_handle())
    }
}

/// A connection of `client` subscribed to `channel`, or `None` if it did not answer in time.
async fn subscribe(
    client: redis::Client,
    channel: &str,
    timeout: Duration,
) -> Option<PubSubStream> {
    let subscribed = async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        redis::RedisResult::Ok(pubsub.into_on_message())
    };
    tokio::time::timeout(timeout, subscribed).await.ok()?.ok()
}
