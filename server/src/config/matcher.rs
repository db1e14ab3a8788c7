//! Matching a request's descriptor against a domain's tree, by envoyproxy/ratelimit's
//! documented rules: at each level the exact `key`+`value` entry first, then wildcard values,
//! then the bare `key` (any value); the limit is the one where the request's last entry
//! lands, so a request deeper or shallower than a configured limit matches nothing.

use super::{Config, Node, ValueMatch};

/// A rule a descriptor landed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    /// The rule's index in [`Config::rules`].
    pub rule: usize,
    /// Bit `i` is set when level `i` matched through a wildcard value (for
    /// `share_threshold`, whose values share one counter).
    pub wildcard_levels: u64,
}

impl Config {
    /// The rule that a descriptor of `(key, value)` entries lands on in `domain`, if any.
    pub fn find<'e>(
        &self,
        domain: &str,
        entries: impl IntoIterator<Item = (&'e str, &'e str)>,
    ) -> Option<Match> {
        let mut level: &[Node] = &self.domains.get(domain)?.descriptors;
        let mut landed: Option<&Node> = None;
        let mut wildcard_levels = 0u64;
        for (depth, (key, value)) in entries.into_iter().enumerate() {
            // The tree is at most 32 levels deep, so a deeper request has already run out.
            let (node, wildcard) = best(level, key, value)?;
            if wildcard && depth < 64 {
                wildcard_levels |= 1 << depth;
            }
            landed = Some(node);
            level = &node.children;
        }
        Some(Match {
            rule: landed?.rule?,
            wildcard_levels,
        })
    }
}

/// The node at one level that an entry matches, by precedence; and whether by wildcard.
fn best<'n>(level: &'n [Node], key: &str, value: &str) -> Option<(&'n Node, bool)> {
    let same_key = || level.iter().filter(move |n| n.key == key);
    if let Some(node) = same_key().find(|n| matches!(&n.value, ValueMatch::Exact(v) if v == value))
    {
        return Some((node, false));
    }
    if let Some(node) =
        same_key().find(|n| matches!(&n.value, ValueMatch::Wildcard(p) if glob(p, value)))
    {
        return Some((node, true));
    }
    same_key()
        .find(|n| n.value == ValueMatch::Any)
        .map(|node| (node, false))
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters (so `foo*`
/// is a prefix match, as envoyproxy/ratelimit documents). Linear backtracking on the last
/// star: no recursion, no blow-up on many stars.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_prefixes_and_inner_stars() {
        assert!(glob("value*", "value_1"));
        assert!(glob("value*", "value"));
        assert!(!glob("value*", "valu"));
        assert!(glob("*", ""));
        assert!(glob("/api/*/users", "/api/v1/users"));
        assert!(!glob("/api/*/users", "/api/v1/groups"));
        assert!(glob("a*b*c", "aXbYbc"));
        assert!(!glob("a*b*c", "aXbY"));
    }
}
