//! [`Undo`]: what a reservation wrote, so that [`all_of`](crate::backend::all_of) can take it
//! back when a later limit of a composite denies.

use super::error::RedisError;
use super::link::{Arg, Link};
use super::params::Params;
use super::reply;
use super::scripts::SCRIPTS;
use crate::backend::Receipt;
use redis::Value;
use std::sync::Arc;

/// The data behind a Redis limiter's [`Receipt`].
#[derive(Debug)]
pub(crate) enum Undo {
    /// A string state: restore `before` (empty: delete) if the key still holds `written`.
    String {
        key: String,
        before: Vec<u8>,
        written: Vec<u8>,
    },
    /// A sliding log: remove the `count` members from counter `first`, logged at `at` us.
    Log {
        key: String,
        first: u64,
        count: u64,
        at: u64,
    },
    /// A reservation the local fallback made.
    Local(Receipt),
}

impl Undo {
    /// The undo data a reservation's reply carries after its six numbers.
    pub(crate) fn from_reply(
        params: &Params,
        key: String,
        extra: &[Value],
    ) -> Result<Undo, RedisError> {
        if params.is_string() {
            let [before, written] = extra else {
                return Err(malformed());
            };
            Ok(Undo::String {
                key,
                before: reply::bytes(before)?,
                written: reply::bytes(written)?,
            })
        } else {
            let [first, count, at] = extra else {
                return Err(malformed());
            };
            Ok(Undo::Log {
                key,
                first: reply::int(first)?,
                count: reply::int(count)?,
                at: reply::int(at)?,
            })
        }
    }

    /// Runs the undo script: true when the reservation was undone.
    pub(crate) async fn run(&self, link: &Arc<Link>) -> Result<bool, RedisError> {
        let value = match self {
            Undo::String {
                key,
                before,
                written,
            } => {
                let args = [Arg::Bytes(before), Arg::Bytes(written)];
                link.eval(&SCRIPTS.undo, std::slice::from_ref(key), &args)
                    .await?
            }
            Undo::Log {
                key,
                first,
                count,
                at,
            } => {
                let args = [Arg::Int(*first), Arg::Int(*count), Arg::Int(*at)];
                link.eval(&SCRIPTS.undo_log, std::slice::from_ref(key), &args)
                    .await?
            }
            Undo::Local(_) => return Ok(false),
        };
        Ok(reply::int(&value)? == 1)
    }
}

fn malformed() -> RedisError {
    RedisError::Script {
        message: "unexpected reply from a sluicegate script: no undo data".into(),
    }
}
