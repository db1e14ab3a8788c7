//! [`Responder`]: how a [`Rejection`] becomes a response; plain text by default, RFC 9457
//! problem details available, or the owner's own.

use super::rejection::Rejection;
use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::Response;
use std::fmt::Write;

/// Turns the layer's rejections into responses. The layer adds `Retry-After` and the
/// `RateLimit` headers to whatever it returns.
///
/// Closures are responders too:
///
/// ```
/// use bytes::Bytes;
/// use sluicegate::http::Rejection;
///
/// let terse = |rejection: &Rejection<'_>| {
///     http::Response::builder()
///         .status(rejection.status())
///         .body(Bytes::from_static(b"slow down"))
///         .unwrap_or_default()
/// };
/// # fn takes(_: impl sluicegate::http::Responder) {}
/// takes(terse);
/// ```
pub trait Responder: Send + Sync + 'static {
    /// The response to `rejection`.
    fn respond(&self, rejection: &Rejection<'_>) -> Response<Bytes>;
}

impl<F> Responder for F
where
    F: Fn(&Rejection<'_>) -> Response<Bytes> + Send + Sync + 'static,
{
    fn respond(&self, rejection: &Rejection<'_>) -> Response<Bytes> {
        self(rejection)
    }
}

/// The default: `text/plain` with the rejection's sentence, e.g.
/// `too many requests for limit "ip"; retry after 3 seconds`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainText;

impl Responder for PlainText {
    fn respond(&self, rejection: &Rejection<'_>) -> Response<Bytes> {
        let mut response = Response::new(Bytes::from(format!("{rejection}\n")));
        *response.status_mut() = rejection.status();
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        response
    }
}

/// RFC 9457 problem details (`application/problem+json`) with the draft's problem types and
/// its `violated-policies` member:
///
/// ```json
/// {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
///  "title":"Request cannot be satisfied as assigned quota has been exceeded",
///  "status":429,"detail":"too many requests for limit \"ip\"; retry after 3 seconds",
///  "violated-policies":["ip"]}
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ProblemJson;

impl Responder for ProblemJson {
    fn respond(&self, rejection: &Rejection<'_>) -> Response<Bytes> {
        let mut body = String::from("{\"type\":");
        push_json_string(&mut body, rejection.problem_type());
        body.push_str(",\"title\":");
        push_json_string(&mut body, rejection.title());
        let _ = write!(
            body,
            ",\"status\":{},\"detail\":",
            rejection.status().as_u16()
        );
        push_json_string(&mut body, &rejection.to_string());
        body.push_str(",\"violated-policies\":[");
        for (i, name) in rejection.violated().iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            push_json_string(&mut body, name);
        }
        body.push_str("]}");
        let mut response = Response::new(Bytes::from(body));
        *response.status_mut() = rejection.status();
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        response
    }
}

/// `{"detail": sentence}` (`application/json`): the rejection's sentence as FastAPI,
/// Django REST framework and many JSON APIs write errors.
///
/// ```
/// use sluicegate::http::{JsonDetail, Rejection, Responder};
/// let violated = ["ip"];
/// let response = JsonDetail.respond(&Rejection::TooManyRequests { violated: &violated, retry_after: 2 });
/// assert_eq!(response.body(), r#"{"detail":"too many requests for limit \"ip\"; retry after 2 seconds"}"#);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonDetail;

impl Responder for JsonDetail {
    fn respond(&self, rejection: &Rejection<'_>) -> Response<Bytes> {
        let mut body = String::from("{\"detail\":");
        push_json_string(&mut body, &rejection.to_string());
        body.push('}');
        let mut response = Response::new(Bytes::from(body));
        *response.status_mut() = rejection.status();
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

/// Writes `text` as a JSON string.
fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::KeyError;

    #[test]
    fn plain_text_says_what_happened() {
        let violated = ["ip", "token"];
        let rejection = Rejection::TooManyRequests {
            violated: &violated,
            retry_after: 3,
        };
        let response = PlainText.respond(&rejection);
        assert_eq!(response.status(), 429);
        assert_eq!(
            response.body(),
            "too many requests for limit \"ip\", limit \"token\"; retry after 3 seconds\n"
        );
    }

    #[test]
    fn problem_json_is_valid_json_with_the_drafts_members() {
        let error = KeyError::missing("the x-api-key header is missing or empty");
        let rejection = Rejection::Key {
            limit: "to\"ken",
            error: &error,
        };
        let response = ProblemJson.respond(&rejection);
        assert_eq!(response.status(), 400);
        assert_eq!(response.headers()[CONTENT_TYPE], "application/problem+json");
        let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(body["type"], "about:blank");
        assert_eq!(body["title"], "Bad Request");
        assert_eq!(body["status"], 400);
        assert_eq!(
            body["detail"],
            "limit \"to\\\"ken\": the x-api-key header is missing or empty"
        );
        assert_eq!(body["violated-policies"][0], "to\"ken");
        let mut out = String::new();
        push_json_string(&mut out, "\u{1}\n");
        assert_eq!(out, "\"\\u0001\\n\"");
    }
}
