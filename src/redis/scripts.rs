//! The Lua scripts, compiled in: each one the shared prelude, the pieces it needs and a main.
//! They run by `EVALSHA`; a server that does not know one (restarted, `SCRIPT FLUSH`, a new
//! cluster node) answers `NOSCRIPT`, and the call is repeated once as `EVAL`, which also
//! caches it there (`Link::eval` says why not through redis-rs's `ScriptInvocation`).

use crate::algorithm::AlgorithmKind;
use std::sync::LazyLock;

/// A script's source and its SHA1.
#[derive(Debug)]
pub(crate) struct Script {
    pub(crate) code: &'static str,
    pub(crate) sha: String,
}

impl Script {
    fn new(code: &'static str) -> Script {
        Script {
            code,
            sha: redis::Script::new(code).get_hash().to_owned(),
        }
    }
}

macro_rules! lua {
    ($($file:literal),* $(,)?) => {
        concat!($(include_str!(concat!("lua/", $file)), "\n"),*)
    };
}

/// Every algorithm's rule, then `$entry`: the scripts that decide limits of any algorithm.
macro_rules! every_rule {
    ($entry:literal) => {
        lua!(
            "prelude.lua",
            "emission.lua",
            "gcra.lua",
            "leaky_bucket.lua",
            "token_bucket.lua",
            "window.lua",
            "fixed_window.lua",
            "sliding_window.lua",
            "sliding_log.lua",
            $entry,
        )
    };
}

macro_rules! single {
    ($($file:literal),* ; $decide:literal) => {
        concat!(
            lua!("prelude.lua", $($file),*),
            "local decide = ", $decide, "\n",
            include_str!("lua/single.lua"),
        )
    };
}

/// Every script, hashed once.
pub(crate) struct Scripts {
    gcra: Script,
    token_bucket: Script,
    leaky_bucket: Script,
    fixed_window: Script,
    sliding_window: Script,
    sliding_log: Script,
    /// Several limits, any algorithms, one atomic call.
    pub(crate) composite: Script,
    /// Queued calls (each one limit or a composite group), one atomic call.
    pub(crate) batch: Script,
    /// Undoes a reservation of a string state.
    pub(crate) undo: Script,
    /// Undoes a reservation on a sliding log.
    pub(crate) undo_log: Script,
}

impl Scripts {
    /// The script deciding one key of `kind`.
    pub(crate) fn single(&self, kind: AlgorithmKind) -> &Script {
        match kind {
            AlgorithmKind::Gcra => &self.gcra,
            AlgorithmKind::TokenBucket => &self.token_bucket,
            AlgorithmKind::LeakyBucket => &self.leaky_bucket,
            AlgorithmKind::FixedWindow => &self.fixed_window,
            AlgorithmKind::SlidingWindow => &self.sliding_window,
            AlgorithmKind::SlidingLog => &self.sliding_log,
        }
    }
}

/// The scripts.
pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    gcra: Script::new(single!("emission.lua", "gcra.lua"; "decide_gcra")),
    token_bucket: Script::new(single!("token_bucket.lua"; "decide_token_bucket")),
    leaky_bucket: Script::new(single!("emission.lua", "leaky_bucket.lua"; "decide_leaky_bucket")),
    fixed_window: Script::new(single!("window.lua", "fixed_window.lua"; "decide_fixed_window")),
    sliding_window: Script::new(single!(
        "window.lua",
        "sliding_window.lua";
        "decide_sliding_window"
    )),
    sliding_log: Script::new(single!("sliding_log.lua"; "decide_sliding_log")),
    composite: Script::new(every_rule!("composite.lua")),
    batch: Script::new(every_rule!("batch.lua")),
    undo: Script::new(lua!("prelude.lua", "undo.lua")),
    undo_log: Script::new(lua!("prelude.lua", "sliding_log.lua", "undo_log.lua")),
});
