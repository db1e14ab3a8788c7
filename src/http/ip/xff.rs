//! `X-Forwarded-For`: comma-separated addresses, the nearest proxy's last.

use super::node::parse_node;
use super::walk::Hop;
use http::header::HeaderMap;

/// The entries of every `X-Forwarded-For` line, nearest first (the last line's last entry
/// first), read lazily from the right: a walk that stops after two hops never looks at the
/// rest of a kilobyte-long header.
pub(crate) fn hops(headers: &HeaderMap) -> impl Iterator<Item = Hop<'_>> {
    headers
        .get_all("x-forwarded-for")
        .iter()
        .rev()
        .flat_map(|line| line.as_bytes().rsplit(|&b| b == b','))
        .map(|entry| match trim(entry) {
            [] => Hop::Empty,
            entry => parse_node(entry).map_or(Hop::Malformed, Hop::Node),
        })
}

/// Without the optional whitespace around a list element.
pub(crate) fn trim(bytes: &[u8]) -> &[u8] {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !is_ows(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_ows(b))
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::super::node::Node;
    use super::*;
    use http::HeaderValue;

    #[test]
    fn reads_lines_and_entries_from_the_right() {
        let mut headers = HeaderMap::new();
        headers.append(
            "x-forwarded-for",
            HeaderValue::from_static("1.1.1.1, 2.2.2.2"),
        );
        headers.append(
            "x-forwarded-for",
            HeaderValue::from_static("3.3.3.3,,[::1]:80 ,junk"),
        );
        let read: Vec<Hop<'_>> = hops(&headers).collect();
        let ip = |s: &str| Hop::Node(Node::Ip(s.parse().unwrap()));
        assert_eq!(
            read,
            [
                Hop::Malformed,
                ip("::1"),
                Hop::Empty,
                ip("3.3.3.3"),
                ip("2.2.2.2"),
                ip("1.1.1.1")
            ]
        );
    }

    #[test]
    fn trims_optional_whitespace_only() {
        assert_eq!(trim(b" \t a b \t"), b"a b");
        assert_eq!(trim(b"   "), b"");
    }
}
