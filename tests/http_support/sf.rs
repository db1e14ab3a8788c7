//! A small, strict parser for RFC 9651 Structured Field Lists of Items (what `RateLimit` and
//! `RateLimit-Policy` are), written from the RFC's parsing algorithms, independent of the
//! library's serializer. Inner lists and byte sequences are refused (neither header uses
//! them).

#![allow(dead_code)]

#[derive(Debug, Clone, PartialEq)]
pub enum Bare {
    Integer(i64),
    Decimal(f64),
    String(String),
    Token(String),
    Boolean(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub bare: Bare,
    pub params: Vec<(String, Bare)>,
}

impl Item {
    pub fn param(&self, key: &str) -> Option<&Bare> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        match self.param(key)? {
            Bare::Integer(i) => Some(*i),
            _ => None,
        }
    }

    pub fn string(&self) -> Option<&str> {
        match &self.bare {
            Bare::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Parses a List; any deviation from the grammar is an error.
pub fn parse_list(input: &str) -> Result<Vec<Item>, String> {
    if !input.is_ascii() {
        return Err("not ASCII".into());
    }
    let bytes = input.as_bytes();
    let mut p = Parser { bytes, at: 0 };
    p.skip(|b| b == b' ');
    let mut items = Vec::new();
    while p.at < bytes.len() {
        if p.peek() == Some(b'(') {
            return Err("inner lists are not expected".into());
        }
        items.push(p.item()?);
        p.skip(|b| b == b' ' || b == b'\t');
        if p.at == bytes.len() {
            break;
        }
        if p.peek() != Some(b',') {
            return Err(format!("expected ',' at {}", p.at));
        }
        p.at += 1;
        p.skip(|b| b == b' ' || b == b'\t');
        if p.at == bytes.len() {
            return Err("trailing comma".into());
        }
    }
    Ok(items)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.at += 1;
        }
    }

    fn item(&mut self) -> Result<Item, String> {
        let bare = self.bare()?;
        let mut params = Vec::new();
        while self.peek() == Some(b';') {
            self.at += 1;
            self.skip(|b| b == b' ');
            let key = self.key()?;
            let value = if self.peek() == Some(b'=') {
                self.at += 1;
                self.bare()?
            } else {
                Bare::Boolean(true)
            };
            if let Some(slot) = params.iter_mut().find(|(k, _)| *k == key) {
                slot.1 = value;
            } else {
                params.push((key, value));
            }
        }
        Ok(Item { bare, params })
    }

    fn key(&mut self) -> Result<String, String> {
        let start = self.at;
        match self.peek() {
            Some(b'a'..=b'z' | b'*') => self.at += 1,
            _ => return Err(format!("bad key at {start}")),
        }
        self.skip(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'*'));
        Ok(String::from_utf8(self.bytes[start..self.at].to_vec()).unwrap())
    }

    fn bare(&mut self) -> Result<Bare, String> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'"') => self.string(),
            Some(b'?') => {
                self.at += 1;
                let value = match self.peek() {
                    Some(b'0') => false,
                    Some(b'1') => true,
                    _ => return Err("bad boolean".into()),
                };
                self.at += 1;
                Ok(Bare::Boolean(value))
            }
            Some(b) if b.is_ascii_alphabetic() || b == b'*' => {
                let start = self.at;
                self.at += 1;
                self.skip(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&b));
                Ok(Bare::Token(
                    String::from_utf8(self.bytes[start..self.at].to_vec()).unwrap(),
                ))
            }
            other => Err(format!(
                "unexpected {:?} at {}",
                other.map(char::from),
                self.at
            )),
        }
    }

    fn number(&mut self) -> Result<Bare, String> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits_start = self.at;
        self.skip(|b| b.is_ascii_digit());
        let int_digits = self.at - digits_start;
        if int_digits == 0 {
            return Err("a number needs digits".into());
        }
        if self.peek() == Some(b'.') {
            if int_digits > 12 {
                return Err("decimal too long".into());
            }
            self.at += 1;
            let frac_start = self.at;
            self.skip(|b| b.is_ascii_digit());
            let frac = self.at - frac_start;
            if frac == 0 || frac > 3 {
                return Err("bad decimal fraction".into());
            }
            let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap();
            return Ok(Bare::Decimal(text.parse().unwrap()));
        }
        if int_digits > 15 {
            return Err("integer longer than 15 digits".into());
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap();
        Ok(Bare::Integer(text.parse().unwrap()))
    }

    fn string(&mut self) -> Result<Bare, String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err("unterminated string".into()),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(Bare::String(out));
                }
                Some(b'\\') => {
                    match self.bytes.get(self.at + 1) {
                        Some(&c @ (b'"' | b'\\')) => out.push(char::from(c)),
                        _ => return Err("bad escape".into()),
                    }
                    self.at += 2;
                }
                Some(c @ 0x20..=0x7e) => {
                    out.push(char::from(c));
                    self.at += 1;
                }
                Some(c) => return Err(format!("byte {c:#x} in a string")),
            }
        }
    }
}

#[test]
fn the_parser_itself_is_strict() {
    let items = parse_list(r#""a\"b";q=100;w=60, "day";q=5000"#).unwrap();
    assert_eq!(items[0].string(), Some("a\"b"));
    assert_eq!(items[0].int("q"), Some(100));
    assert_eq!(items[1].int("w"), None);
    for bad in [
        "\"a\";q=1,",
        "\"a\";Q=1",
        "\"a\";q=1234567890123456",
        "\"a\" ;q=1",
        "\"a\\x\"",
        "\"a",
        "\"a\";q=1 x",
        "(\"a\")",
        "\"é\"",
    ] {
        assert!(parse_list(bad).is_err(), "{bad}");
    }
}
