//! [`Config`]: what the client-side layer waits on, shared by the layer and each service it
//! wraps.

use crate::backend::Backend;
use crate::http::{Cost, KeyExtractor};
use crate::wait::Jitter;
use std::sync::Arc;

/// The limit a throttled client waits on: its backend, key, cost and jitter.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) backend: Arc<dyn Backend<str>>,
    pub(crate) key: Arc<dyn KeyExtractor>,
    pub(crate) cost: Cost,
    pub(crate) jitter: Jitter,
}
