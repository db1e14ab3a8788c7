//! Floods for the memory-bound tests: many requests over one HTTP/2 channel, `concurrency`
//! in flight. Include it with `#[path = "support/flood.rs"] mod flood;` after `service`.

use super::service::ask;
use sluicegate_server::proto::rate_limit_service_client::RateLimitServiceClient;
use sluicegate_server::proto::{RateLimitRequest, RateLimitResponse};
use std::sync::Arc;
use tonic::transport::Channel;

/// Sends `make(i)` for every `i` in `0..count`, `concurrency` at a time; returns how many
/// answers satisfied `counted`.
pub async fn flood(
    client: &RateLimitServiceClient<Channel>,
    count: usize,
    concurrency: usize,
    make: impl Fn(usize) -> RateLimitRequest + Send + Sync + 'static,
    counted: impl Fn(&RateLimitResponse) -> bool + Send + Sync + 'static,
) -> usize {
    let make = Arc::new(make);
    let counted = Arc::new(counted);
    let tasks: Vec<_> = (0..concurrency)
        .map(|first| {
            let mut client = client.clone();
            let make = make.clone();
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut n = 0;
                for i in (first..count).step_by(concurrency) {
                    n += usize::from(counted(&ask(&mut client, make(i)).await));
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("a flood task");
    }
    total
}
