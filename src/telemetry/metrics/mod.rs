//! The metrics publisher (feature `metrics`): limiters' counts pushed through the `metrics`
//! facade as absolute values, on demand or from one background thread.

mod describe;
mod publisher;
mod thread;

pub use describe::describe;
pub use publisher::Publisher;
pub use thread::PublishThread;
