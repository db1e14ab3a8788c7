//! `Forwarded` (RFC 7239): `for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`.
//!
//! Quoted strings may hold commas, so the header cannot be split from the right the way
//! `X-Forwarded-For` is: each line is tokenized from the left (bounded by a byte budget),
//! keeping only the last hops in a fixed ring on the stack, and those are walked nearest
//! first. A syntax error anywhere refuses the whole header, since past an unterminated quote
//! no one can tell which element a proxy appended.

use super::node::{parse_node, Node};
use super::walk::Hop;
use crate::http::key::KeyError;
use http::header::HeaderMap;

/// The most hops a walk may go through; [`ClientIp::max_hops`](crate::http::ClientIp::max_hops)
/// is capped by it.
pub(crate) const MAX_HOPS_LIMIT: usize = 64;
const RING: usize = MAX_HOPS_LIMIT + 1;

/// The last [`RING`] elements' `for=` hops of every `Forwarded` line.
pub(crate) struct Hops<'a> {
    ring: [Hop<'a>; RING],
    pushed: usize,
}

impl<'a> Hops<'a> {
    fn push(&mut self, hop: Hop<'a>) {
        self.ring[self.pushed % RING] = hop;
        self.pushed += 1;
    }

    /// Nearest first: the last element of the last line first.
    pub(crate) fn nearest_first(&self) -> impl Iterator<Item = Hop<'a>> + '_ {
        let kept = self.pushed.min(RING);
        (1..=kept).map(move |back| self.ring[(self.pushed - back) % RING])
    }
}

/// Reads every `Forwarded` line (at most `max_bytes` in all).
pub(crate) fn hops(headers: &HeaderMap, max_bytes: usize) -> Result<Hops<'_>, KeyError> {
    let mut hops = Hops {
        ring: [Hop::Empty; RING],
        pushed: 0,
    };
    let mut total = 0usize;
    for line in headers.get_all("forwarded") {
        total = total.saturating_add(line.len());
        if total > max_bytes {
            return Err(KeyError::invalid(format!(
                "the Forwarded header is longer than {max_bytes} bytes"
            )));
        }
        parse_line(line.as_bytes(), &mut hops)
            .map_err(|()| KeyError::invalid("the Forwarded header is malformed"))?;
    }
    Ok(hops)
}

/// One line: `element *( OWS "," OWS element )`, empty elements allowed.
fn parse_line<'a>(line: &'a [u8], hops: &mut Hops<'a>) -> Result<(), ()> {
    let mut p = Parser { bytes: line, at: 0 };
    loop {
        p.skip_ows();
        match p.peek() {
            None => return Ok(()),
            Some(b',') => {
                p.at += 1;
                continue;
            }
            Some(_) => {}
        }
        hops.push(parse_element(&mut p)?);
        if p.peek() == Some(b',') {
            p.at += 1;
        }
    }
}

/// `[ pair ] *( ";" [ pair ] )`, returning the element's `for` hop. A missing or repeated
/// `for` (RFC 7239 allows each parameter once) makes the hop malformed, not the header.
fn parse_element<'a>(p: &mut Parser<'a>) -> Result<Hop<'a>, ()> {
    let mut found: Option<Hop<'a>> = None;
    let mut repeated = false;
    loop {
        p.skip_ows();
        match p.peek() {
            None | Some(b',') => break,
            Some(b';') => {
                p.at += 1;
                continue;
            }
            Some(_) => {}
        }
        let name = p.token()?;
        if p.peek() != Some(b'=') {
            return Err(());
        }
        p.at += 1;
        let value = p.value()?;
        if name.eq_ignore_ascii_case(b"for") {
            repeated |= found.replace(value.hop()).is_some();
        }
        p.skip_ows();
        if !matches!(p.peek(), None | Some(b';' | b',')) {
            return Err(());
        }
    }
    Ok(match found {
        Some(hop) if !repeated => hop,
        _ => Hop::Malformed,
    })
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

enum Value<'a> {
    /// A token, or a quoted string without escapes: the bytes themselves.
    Plain(&'a [u8]),
    /// A quoted string with `\` escapes, quotes excluded.
    Escaped(&'a [u8]),
}

impl<'a> Value<'a> {
    fn hop(&self) -> Hop<'a> {
        match *self {
            Value::Plain(bytes) => parse_node(bytes).map_or(Hop::Malformed, Hop::Node),
            Value::Escaped(raw) => {
                // Addresses never need escapes; unescape into a small buffer in case a proxy
                // escaped anyway. A name must borrow from the header, so an escaped
                // obfuscated identifier is refused.
                let mut buffer = [0u8; 64];
                let mut len = 0;
                let mut bytes = raw.iter();
                while let Some(&byte) = bytes.next() {
                    let byte = if byte == b'\\' {
                        *bytes.next().unwrap_or(&byte)
                    } else {
                        byte
                    };
                    let Some(slot) = buffer.get_mut(len) else {
                        return Hop::Malformed;
                    };
                    *slot = byte;
                    len += 1;
                }
                match parse_node(&buffer[..len]) {
                    Some(Node::Ip(ip)) => Hop::Node(Node::Ip(ip)),
                    Some(Node::Unknown) => Hop::Node(Node::Unknown),
                    Some(Node::Obfuscated(_)) | None => Hop::Malformed,
                }
            }
        }
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// `1*tchar`.
    fn token(&mut self) -> Result<&'a [u8], ()> {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        if self.at == start {
            return Err(());
        }
        Ok(&self.bytes[start..self.at])
    }

    /// `token / quoted-string`. Tokens may also hold `:`, `[` and `]`, tolerating proxies
    /// that write `for=[2001:db8::1]:80` unquoted; none of those can end an element early.
    fn value(&mut self) -> Result<Value<'a>, ()> {
        if self.peek() != Some(b'"') {
            let start = self.at;
            while self
                .peek()
                .is_some_and(|b| is_tchar(b) || matches!(b, b':' | b'[' | b']'))
            {
                self.at += 1;
            }
            if self.at == start {
                return Err(());
            }
            return Ok(Value::Plain(&self.bytes[start..self.at]));
        }
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        loop {
            match self.peek().ok_or(())? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    // quoted-pair: HTAB, SP, VCHAR or obs-text.
                    match self.bytes.get(self.at + 1) {
                        Some(&b) if b == b'\t' || b >= 0x20 && b != 0x7f => self.at += 2,
                        _ => return Err(()),
                    }
                }
                b if b == b'\t' || b >= 0x20 && b != 0x7f => self.at += 1,
                _ => return Err(()),
            }
        }
        let inside = &self.bytes[start..self.at];
        self.at += 1;
        Ok(if escaped {
            Value::Escaped(inside)
        } else {
            Value::Plain(inside)
        })
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn read(lines: &[&[u8]]) -> Result<Vec<Hop<'static>>, KeyError> {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append("forwarded", HeaderValue::from_bytes(line).unwrap());
        }
        // Leak the map so the hops can outlive this helper in assertions.
        let headers: &'static HeaderMap = Box::leak(Box::new(headers));
        Ok(hops(headers, 8192)?.nearest_first().collect())
    }

    fn ip(text: &str) -> Hop<'static> {
        Hop::Node(Node::Ip(text.parse().unwrap()))
    }

    #[test]
    fn reads_the_rfc_7239_examples() {
        assert_eq!(
            read(&[b"for=\"_gazonk\""]).unwrap(),
            [Hop::Node(Node::Obfuscated("_gazonk"))]
        );
        assert_eq!(
            read(&[b"For=\"[2001:db8:cafe::17]:4711\""]).unwrap(),
            [ip("2001:db8:cafe::17")]
        );
        assert_eq!(
            read(&[b"for=192.0.2.60;proto=http;by=203.0.113.43"]).unwrap(),
            [ip("192.0.2.60")]
        );
        assert_eq!(
            read(&[b"for=192.0.2.43, for=198.51.100.17"]).unwrap(),
            [ip("198.51.100.17"), ip("192.0.2.43")]
        );
        assert_eq!(read(&[b"for=unknown"]).unwrap(), [Hop::Node(Node::Unknown)]);
    }

    #[test]
    fn lines_concatenate_and_quoted_commas_do_not_split() {
        let hops = read(&[
            b"for=1.1.1.1;by=\"a,b;c\"",
            b"for=2.2.2.2,,for=\"3.3.3.3:80\"",
        ])
        .unwrap();
        assert_eq!(hops, [ip("3.3.3.3"), ip("2.2.2.2"), ip("1.1.1.1")]);
    }

    #[test]
    fn element_level_problems_spoil_only_that_hop() {
        assert_eq!(read(&[b"proto=https"]).unwrap(), [Hop::Malformed]);
        assert_eq!(
            read(&[b"for=1.1.1.1;for=2.2.2.2"]).unwrap(),
            [Hop::Malformed]
        );
        assert_eq!(read(&[b"for=\"\\1.1.1.1\""]).unwrap(), [ip("1.1.1.1")]);
        assert_eq!(
            read(&[b"for=[2001:db8::1]:80"]).unwrap(),
            [ip("2001:db8::1")]
        );
    }

    #[test]
    fn syntax_errors_refuse_the_header() {
        for bad in [
            &b"for=\"1.1.1.1"[..],
            b"for = 1.1.1.1",
            b"for",
            b"=1.1.1.1",
            b"for=1.1.1.1 junk",
            b"for=\"a\"b",
            b"for=\xff",
        ] {
            let error = read(&[bad]).unwrap_err();
            assert_eq!(
                error.message(),
                "the Forwarded header is malformed",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn keeps_only_the_nearest_hops_of_a_long_chain() {
        let long = "for=10.0.0.1,".repeat(200) + "for=9.9.9.9";
        let hops = read(&[long.as_bytes()]).unwrap();
        assert_eq!(hops.len(), RING);
        assert_eq!(hops[0], ip("9.9.9.9"));
        let error = {
            let mut headers = HeaderMap::new();
            headers.append("forwarded", HeaderValue::from_str(&long).unwrap());
            hops_len_error(&headers)
        };
        assert_eq!(error, "the Forwarded header is longer than 100 bytes");
    }

    fn hops_len_error(headers: &HeaderMap) -> String {
        match hops(headers, 100) {
            Ok(_) => String::from("accepted"),
            Err(error) => error.message().to_owned(),
        }
    }
}
