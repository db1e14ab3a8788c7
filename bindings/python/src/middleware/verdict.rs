//! `HttpVerdict`: what the library's one HTTP decision says of a request, in the forms ASGI
//! and WSGI servers take: pass it on (after `wait`) with the rate-limit headers added to the
//! app's response, or answer it with the library's ready refusal (status, headers, body).

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use sluicegate::http::{Report, Verdict};

/// What to do with a request: `passes` (hold it `wait` seconds, then let the app answer,
/// adding the rate-limit headers to its response), or answer with `status`, `headers` and
/// `body`, exactly as the library's tower layer would.
#[pyclass(frozen, module = "sluicegate", name = "HttpVerdict")]
pub(crate) struct HttpVerdict {
    /// 0 when the request passes, else the refusal's status.
    status: u16,
    wait: f64,
    /// A pass: the headers to add to the app's response. A refusal: its every header.
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    /// What the headers report (sent or not), and the reported limit's name.
    report: Option<(Report, String)>,
    retry_after: Option<u64>,
}

impl HttpVerdict {
    /// The verdict of a limiter whose limits are called `names`, in order.
    pub(crate) fn new(verdict: Verdict, names: &[String]) -> Self {
        let named = |report: Report| {
            let name = names.get(report.limit).cloned().unwrap_or_default();
            (report, name)
        };
        match verdict {
            Verdict::Pass { headers, wait } => HttpVerdict {
                status: 0,
                wait: wait.as_secs_f64(),
                headers: headers.iter().collect(),
                body: Bytes::new(),
                report: headers.report().map(named),
                retry_after: None,
            },
            Verdict::Refuse(response) => {
                let report = response.extensions().get::<Report>().copied().map(named);
                // Retry-After, or with every rate-limit header off, the reported limit's `t`
                // (which Retry-After equals on a 429).
                let retry_after = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok()?.parse().ok())
                    .or_else(|| report.as_ref().map(|(report, _)| report.reset));
                let (parts, body) = response.into_parts();
                let mut headers: Vec<_> = parts
                    .headers
                    .iter()
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect();
                // What hyper adds to the tower layer's refusal on the wire; ASGI and WSGI
                // servers would otherwise stream the body chunked.
                if !parts.headers.contains_key(CONTENT_LENGTH) {
                    headers.push((CONTENT_LENGTH, HeaderValue::from(body.len())));
                }
                HttpVerdict {
                    status: parts.status.as_u16(),
                    wait: 0.0,
                    headers,
                    body,
                    report,
                    retry_after,
                }
            }
        }
    }
}

#[pymethods]
impl HttpVerdict {
    /// True when the request goes on to the app.
    #[getter]
    fn passes(&self) -> bool {
        self.status == 0
    }

    /// The refusal's status (`429`, `400`, `413`, `503`, or `500` when the server gave no
    /// client address for an `ip` key); 0 when the request passes.
    #[getter]
    fn status(&self) -> u16 {
        self.status
    }

    /// WSGI's status line for a refusal, e.g. `"429 Too Many Requests"`; `""` for a pass.
    #[getter]
    fn status_line(&self) -> String {
        if self.status == 0 {
            return String::new();
        }
        let reason = http::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|status| status.canonical_reason())
            .unwrap_or("");
        format!("{} {reason}", self.status)
    }

    /// Seconds to hold a passing request before the app sees it (a leaky bucket's shaping
    /// delay); 0.0 otherwise.
    #[getter]
    fn wait(&self) -> f64 {
        self.wait
    }

    /// The refusal's body (`b""` for a pass).
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.body)
    }

    /// ASGI's form of the headers: `(bytes, bytes)` pairs, names in lowercase. A pass: the
    /// rate-limit headers; a refusal: all of its headers.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.asgi_headers(py, None, None)
    }

    /// `response` (an ASGI response's `headers`) with this verdict's headers set, replacing
    /// any of the same names, as the tower layer does: a new list. When `status` is a
    /// refusal that already says when to retry (see `keeps_inner_refusal`), `response` as
    /// it is.
    #[pyo3(signature = (response = None, status = None))]
    fn asgi_headers<'py>(
        &self,
        py: Python<'py>,
        response: Option<&Bound<'py, PyAny>>,
        status: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(response) = response {
            let keep = keeps_inner_refusal(status, response, |name| {
                Ok(name
                    .cast::<PyBytes>()
                    .ok()
                    .map(|name| name.as_bytes().to_vec()))
            })?;
            for pair in response.try_iter()? {
                let pair = pair?;
                let name = pair.get_item(0)?;
                let replaced = match name.cast::<PyBytes>() {
                    Ok(name) => !keep && self.sets(name.as_bytes()),
                    Err(_) => false,
                };
                if !replaced {
                    out.append(pair)?;
                }
            }
            if keep {
                return Ok(out);
            }
        }
        for (name, value) in &self.headers {
            let pair = PyTuple::new(
                py,
                [
                    PyBytes::new(py, name.as_str().as_bytes()),
                    PyBytes::new(py, value.as_bytes()),
                ],
            )?;
            out.append(pair)?;
        }
        Ok(out)
    }

    /// `response` (the headers a WSGI app passes to `start_response`) with this verdict's
    /// headers set, replacing any of the same names: a new list of `(str, str)`. When
    /// `status` (`"429 Too Many Requests"`) is a refusal that already says when to retry
    /// (see `keeps_inner_refusal`), `response` as it is.
    #[pyo3(signature = (response = None, status = None))]
    fn wsgi_headers<'py>(
        &self,
        py: Python<'py>,
        response: Option<&Bound<'py, PyAny>>,
        status: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(response) = response {
            let keep = keeps_inner_refusal(status, response, |name| {
                if !name.is_instance_of::<PyString>() {
                    return Ok(None);
                }
                Ok(Some(
                    crate::args::text(name, "a header name")?
                        .as_bytes()
                        .to_vec(),
                ))
            })?;
            for pair in response.try_iter()? {
                let pair = pair?;
                let name = pair.get_item(0)?;
                let replaced = !keep
                    && name.is_instance_of::<PyString>()
                    && self.sets(crate::args::text(&name, "a header name")?.as_bytes());
                if !replaced {
                    out.append(pair)?;
                }
            }
            if keep {
                return Ok(out);
            }
        }
        for (name, value) in &self.headers {
            // Header values are visible ASCII here (the library writes them), so latin-1
            // and UTF-8 agree.
            let value = String::from_utf8_lossy(value.as_bytes());
            let pair = PyTuple::new(
                py,
                [PyString::new(py, name.as_str()), PyString::new(py, &value)],
            )?;
            out.append(pair)?;
        }
        Ok(out)
    }

    /// The name of the limit the headers report (the tightest; on a `429`, the denying
    /// limit that admits the request last); `None` when no limit decided.
    #[getter]
    fn limit(&self) -> Option<String> {
        self.report.as_ref().map(|(_, name)| name.clone())
    }

    /// That limit's quota (requests per window).
    #[getter]
    fn quota(&self) -> Option<u32> {
        self.report.as_ref().map(|(report, _)| report.quota)
    }

    /// Requests left under that limit.
    #[getter]
    fn remaining(&self) -> Option<u32> {
        self.report.as_ref().map(|(report, _)| report.remaining)
    }

    /// Whole seconds until that limit's quota comes back (`RateLimit`'s `t`).
    #[getter]
    fn reset(&self) -> Option<u64> {
        self.report.as_ref().map(|(report, _)| report.reset)
    }

    /// A refusal's `Retry-After`, in whole seconds; `None` for a pass.
    #[getter]
    fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    /// This refusal with another body and `Content-Type` (its status and rate-limit headers
    /// unchanged): a new verdict. A pass is returned as it is.
    fn with_body(&self, body: &[u8], content_type: &str) -> PyResult<HttpVerdict> {
        let content_type = HeaderValue::from_str(content_type).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "content_type {content_type:?} is not a header value"
            ))
        })?;
        let mut headers: Vec<_> = self
            .headers
            .iter()
            .filter(|(name, _)| self.passes() || (name != CONTENT_TYPE && name != CONTENT_LENGTH))
            .cloned()
            .collect();
        if self.passes() {
            return Ok(self.copy(headers, self.body.clone()));
        }
        headers.push((CONTENT_TYPE, content_type));
        headers.push((CONTENT_LENGTH, HeaderValue::from(body.len())));
        Ok(self.copy(headers, Bytes::copy_from_slice(body)))
    }

    fn __bool__(&self) -> bool {
        self.passes()
    }

    fn __repr__(&self) -> String {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(name, value)| format!("{name}: {}", String::from_utf8_lossy(value.as_bytes())))
            .collect();
        if self.passes() {
            format!(
                "HttpVerdict(passes, wait={}, headers={headers:?})",
                self.wait
            )
        } else {
            format!(
                "HttpVerdict({}, headers={headers:?}, body={:?})",
                self.status_line(),
                String::from_utf8_lossy(&self.body)
            )
        }
    }
}

impl HttpVerdict {
    /// This verdict with `headers` and `body`.
    fn copy(&self, headers: Vec<(HeaderName, HeaderValue)>, body: Bytes) -> HttpVerdict {
        HttpVerdict {
            status: self.status,
            wait: self.wait,
            headers,
            body,
            report: self.report.clone(),
            retry_after: self.retry_after,
        }
    }

    /// True when this verdict sets the header `name` (any case).
    fn sets(&self, name: &[u8]) -> bool {
        self.headers
            .iter()
            .any(|(ours, _)| ours.as_str().as_bytes().eq_ignore_ascii_case(name))
    }
}

/// The headers that say which limit refused and when to retry.
const REFUSAL_HEADERS: [&str; 6] = [
    "retry-after",
    "ratelimit",
    "ratelimit-policy",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
];

/// True when the app's response is a `429` (`status`: an int, or a WSGI status line) that
/// already carries `Retry-After` or a rate-limit header: a limit inside the app (a route's)
/// refused it, and its headers, not the outer middleware's, describe that refusal.
fn keeps_inner_refusal(
    status: Option<&Bound<'_, PyAny>>,
    response: &Bound<'_, PyAny>,
    name_of: impl Fn(&Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>>,
) -> PyResult<bool> {
    let Some(status) = status else {
        return Ok(false);
    };
    let code = match status.extract::<u16>() {
        Ok(code) => code,
        Err(_) => crate::args::text(status, "a status")
            .ok()
            .and_then(|line| line.get(..3)?.parse().ok())
            .unwrap_or(0),
    };
    if code != 429 {
        return Ok(false);
    }
    for pair in response.try_iter()? {
        let pair = pair?;
        if let Some(name) = name_of(&pair.get_item(0)?)? {
            if REFUSAL_HEADERS
                .iter()
                .any(|known| known.as_bytes().eq_ignore_ascii_case(&name))
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}
