//! The Lua scripts, compiled in: each one the shared prelude, the pieces it needs and a main.
//! They run by `EVALSHA`; a server that does not know one (restarted, `SCRIPT FLUSH`, a new
//! cluster node) answers `NOSCRIPT`, and the call is repeated once as `EVAL`, which also
//! caches it there (`Link::eval` says why not through redis-rs's `ScriptInvocation`).

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

/// The prelude, the rules in `$file`s, the table of `deciders` (algorithm byte => function)
/// and the one entry (entry.lua): a decision script carrying the algorithms listed.
macro_rules! deciding {
    ($($file:literal),* ; $($byte:literal => $decide:literal),*) => {
        concat!(
            lua!("prelude.lua", $($file),*),
            "local deciders = {",
            $("[", $byte, "] = ", $decide, ", ",)*
            "}\n",
            include_str!("lua/entry.lua"),
        )
    };
}

/// Every script, hashed once.
pub(crate) struct Scripts {
    gcra: Script,
    token_bucket: Script,
    leaky_bucket: Script,
    fixed_window: Script,
    anchored_window: Script,
    sliding_window: Script,
    sliding_log: Script,
    /// Every algorithm: calls whose members use several (composite groups of mixed
    /// algorithms, batches of several limiters' calls).
    pub(crate) any: Script,
    /// Undoes a reservation of a string state.
    pub(crate) undo: Script,
    /// Undoes a reservation on a sliding log.
    pub(crate) undo_log: Script,
}

impl Scripts {
    /// The script carrying only the algorithm whose letter is `letter` (`b'g'`, ...); the
    /// one carrying every algorithm for a letter it does not know.
    pub(crate) fn by_letter(&self, letter: u8) -> &Script {
        match letter {
            b'g' => &self.gcra,
            b't' => &self.token_bucket,
            b'l' => &self.leaky_bucket,
            b'f' => &self.fixed_window,
            b'a' => &self.anchored_window,
            b'w' => &self.sliding_window,
            b's' => &self.sliding_log,
            _ => &self.any,
        }
    }
}

/// The scripts. Each decision script is entry.lua over the rules it carries: a call whose
/// members all use one algorithm runs that algorithm's script (Redis runs a script's whole
/// chunk, defining each function in it, on every call, so a smaller one costs less).
pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    gcra: Script::new(deciding!("emission.lua", "gcra.lua"; 103 => "decide_gcra")),
    token_bucket: Script::new(deciding!("token_bucket.lua"; 116 => "decide_token_bucket")),
    leaky_bucket: Script::new(deciding!(
        "emission.lua",
        "leaky_bucket.lua";
        108 => "decide_leaky_bucket"
    )),
    fixed_window: Script::new(deciding!(
        "window.lua",
        "fixed_window.lua";
        102 => "decide_fixed_window"
    )),
    anchored_window: Script::new(deciding!(
        "anchored_window.lua";
        97 => "decide_anchored_window"
    )),
    sliding_window: Script::new(deciding!(
        "window.lua",
        "sliding_window.lua";
        119 => "decide_sliding_window"
    )),
    sliding_log: Script::new(deciding!("sliding_log.lua"; 115 => "decide_sliding_log")),
    any: Script::new(deciding!(
        "emission.lua",
        "gcra.lua",
        "leaky_bucket.lua",
        "token_bucket.lua",
        "window.lua",
        "fixed_window.lua",
        "anchored_window.lua",
        "sliding_window.lua",
        "sliding_log.lua";
        103 => "decide_gcra",
        116 => "decide_token_bucket",
        108 => "decide_leaky_bucket",
        102 => "decide_fixed_window",
        97 => "decide_anchored_window",
        119 => "decide_sliding_window",
        115 => "decide_sliding_log"
    )),
    undo: Script::new(lua!("prelude.lua", "undo.lua")),
    undo_log: Script::new(lua!("prelude.lua", "sliding_log.lua", "undo_log.lua")),
});
