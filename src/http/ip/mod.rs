//! Client addresses behind proxies: networks of trusted proxies, the two forwarding
//! headers, and IPv6 prefix grouping.

mod cidr;
pub(crate) mod forwarded;
mod group;
mod node;
mod walk;
mod xff;

pub use cidr::{Cidr, CidrError, TrustedProxies};
pub use walk::ClientAddr;

pub(crate) use group::{decimal, write_grouped};
pub(crate) use walk::walk_trusted;
pub(crate) use xff::hops as xff_hops;
