//! [`HeaderKey`]: a request header's value (an API key) as the key.

use super::{KeyBuf, KeyError, KeyExtractor};
use http::header::{HeaderName, InvalidHeaderName};
use http::request::Parts;
use std::fmt::Write;

/// The value of one request header (an API key, a tenant id) is the key.
///
/// - No such header, or an empty one: [`KeyError::missing`] (`400`).
/// - The header twice: [`KeyError::invalid`] (`400`), since a client could otherwise pick
///   which one a proxy or the application believes.
/// - Longer than [`max_len`](Self::max_len) bytes (256 by default): [`KeyError::invalid`]
///   (`400`), so that a client cannot make the limiter store kilobytes per key.
/// - Bytes that are not UTF-8 (HTTP allows any byte from 0x80 up in a value) are kept,
///   escaped losslessly: a value with a backslash or a non-UTF-8 byte is written with `\\`
///   for `\` and `\xHH` for each byte from 0x80 up, and every other value as it is. Escaped
///   keys always contain a `\`, and unescaped ones never do, so two different values never
///   share a key.
///
/// ```
/// use sluicegate::http::{HeaderKey, KeyBuf, KeyExtractor};
///
/// let api_key = HeaderKey::parse("X-Api-Key")?;
/// let (request, ()) = http::Request::get("/").header("x-api-key", "k-123").body(()).unwrap().into_parts();
/// let mut key = KeyBuf::new();
/// api_key.extract(&request, &mut key).unwrap();
/// assert_eq!(key.as_str(), "k-123");
/// # Ok::<(), http::header::InvalidHeaderName>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderKey {
    name: HeaderName,
    max_len: usize,
}

impl HeaderKey {
    /// The longest value accepted unless [`max_len`](Self::max_len) says otherwise.
    pub const DEFAULT_MAX_LEN: usize = 256;

    /// Keys by the header `name`.
    pub fn new(name: HeaderName) -> Self {
        HeaderKey {
            name,
            max_len: Self::DEFAULT_MAX_LEN,
        }
    }

    /// Keys by the header named `name` (any case), or the reason it is not a header name.
    pub fn parse(name: &str) -> Result<Self, InvalidHeaderName> {
        Ok(HeaderKey::new(HeaderName::from_bytes(name.as_bytes())?))
    }

    /// Refuses values longer than `bytes` (before escaping).
    pub fn max_len(mut self, bytes: usize) -> Self {
        self.max_len = bytes;
        self
    }

    /// The header read.
    pub fn name(&self) -> &HeaderName {
        &self.name
    }
}

impl KeyExtractor for HeaderKey {
    fn extract(&self, request: &Parts, key: &mut KeyBuf) -> Result<(), KeyError> {
        let mut values = request.headers.get_all(&self.name).iter();
        let value = values.next().filter(|v| !v.is_empty()).ok_or_else(|| {
            KeyError::missing(format!("the {} header is missing or empty", self.name))
        })?;
        if values.next().is_some() {
            return Err(KeyError::invalid(format!(
                "the {} header is given more than once",
                self.name
            )));
        }
        let bytes = value.as_bytes();
        if bytes.len() > self.max_len {
            return Err(KeyError::invalid(format!(
                "the {} header is longer than {} bytes",
                self.name, self.max_len
            )));
        }
        push_escaped(bytes, key);
        Ok(())
    }
}

/// Writes `bytes` as they are when they are UTF-8 without a backslash, and escaped
/// otherwise (see [`HeaderKey`]): an injective map from byte strings to text.
pub(crate) fn push_escaped(bytes: &[u8], key: &mut KeyBuf) {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\\') => key.push_str(text),
        _ => {
            for &byte in bytes {
                match byte {
                    b'\\' => key.push_str("\\\\"),
                    0x80.. => {
                        // Writing to a KeyBuf cannot fail.
                        let _ = write!(key, "\\x{byte:02x}");
                    }
                    // Below 0x80 a byte is one ASCII character.
                    _ => key.push(char::from(byte)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn extract(header: &HeaderKey, values: &[&[u8]]) -> Result<String, KeyError> {
        let mut request = http::Request::new(()).into_parts().0;
        for value in values {
            let value = HeaderValue::from_bytes(value).unwrap();
            request.headers.append(header.name().clone(), value);
        }
        let mut key = KeyBuf::new();
        header.extract(&request, &mut key)?;
        Ok(key.as_str().to_owned())
    }

    #[test]
    fn missing_empty_duplicated_and_oversized_values_are_client_errors() {
        let header = HeaderKey::parse("X-Api-Key").unwrap().max_len(8);
        let missing = extract(&header, &[]).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "the x-api-key header is missing or empty"
        );
        assert_eq!(missing.status(), http::StatusCode::BAD_REQUEST);
        assert_eq!(
            extract(&header, &[b""]).unwrap_err().kind(),
            super::super::KeyErrorKind::Missing
        );
        let twice = extract(&header, &[b"a", b"b"]).unwrap_err();
        assert_eq!(
            twice.to_string(),
            "the x-api-key header is given more than once"
        );
        assert_eq!(extract(&header, &[b"12345678"]).unwrap(), "12345678");
        let long = extract(&header, &[b"123456789"]).unwrap_err();
        assert_eq!(
            long.to_string(),
            "the x-api-key header is longer than 8 bytes"
        );
    }

    #[test]
    fn non_utf8_and_backslashes_are_escaped_injectively() {
        let header = HeaderKey::parse("k").unwrap();
        assert_eq!(extract(&header, &[b"plain"]).unwrap(), "plain");
        assert_eq!(extract(&header, &[b"a\\b"]).unwrap(), "a\\\\b");
        assert_eq!(extract(&header, &[b"\xff\xfe"]).unwrap(), "\\xff\\xfe");
        // Valid UTF-8 without a backslash passes as is; the escaped form of other bytes
        // always has a backslash, so these three never collide.
        assert_eq!(extract(&header, &["é".as_bytes()]).unwrap(), "é");
        assert_eq!(extract(&header, &[b"\\xff"]).unwrap(), "\\\\xff");
        assert_ne!(
            extract(&header, &[b"\\xff"]).unwrap(),
            extract(&header, &[b"\xff"]).unwrap()
        );
    }
}
