//! The HTTP side: `POST /json`, `GET /healthcheck`, `GET /metrics`, `GET /rlconfig`.
//!
//! `/json` takes only `Content-Type: application/json` (415 otherwise): a browser's
//! cross-site "simple" request (a form, or `fetch` without a preflight) can only send
//! `text/plain`, form types or none, so no web page can spend a user's quota through it.

use crate::engine::{Engine, Refusal};
use crate::telemetry::{self, Api, BadInput};
use crate::{json, response};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the HTTP handlers share.
#[derive(Debug, Clone)]
pub struct Shared {
    /// The decision maker.
    pub engine: Arc<Engine>,
    /// Set when shutdown starts: `/healthcheck` then answers 503.
    pub draining: Arc<AtomicBool>,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// `--response-headers`.
    pub response_headers: bool,
    /// `--max-message-bytes`: the largest `/json` body.
    pub max_body_bytes: usize,
    /// `--http-body-timeout`: how long a `/json` body may take to arrive.
    pub body_timeout: Duration,
}

/// The router.
pub fn router(shared: Shared) -> Router {
    Router::new()
        .route("/json", post(should_rate_limit))
        .route("/healthcheck", get(healthcheck))
        .route("/metrics", get(metrics))
        .route("/rlconfig", get(rlconfig))
        .with_state(shared)
}

fn text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Refuses a `/json` request as the client's fault: counted, logged (throttled), and
/// answered with `status` and the sentence.
fn refuse(status: StatusCode, kind: BadInput, why: String) -> Response {
    telemetry::refused(Api::Json, kind, &why);
    text(status, format!("{why}\n"))
}

/// True for `application/json`, with or without parameters (`; charset=utf-8`).
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The body, read within the body timeout and the size limit.
async fn read_body(shared: &Shared, request: axum::extract::Request) -> Result<Bytes, Response> {
    let max = shared.max_body_bytes;
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            BadInput::TooLarge,
            format!("the body is larger than the {max} bytes allowed"),
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > max as u64) {
        return Err(too_large());
    }
    let body: Body = request.into_body();
    match tokio::time::timeout(shared.body_timeout, axum::body::to_bytes(body, max)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            let over = std::error::Error::source(&e)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            if over {
                Err(too_large())
            } else {
                Err(refuse(
                    StatusCode::BAD_REQUEST,
                    BadInput::Undecodable,
                    format!("the body could not be read: {e}"),
                ))
            }
        }
        Err(_) => Err(refuse(
            StatusCode::REQUEST_TIMEOUT,
            BadInput::BodyTimeout,
            format!(
                "the body did not arrive within {} s",
                shared.body_timeout.as_secs_f64()
            ),
        )),
    }
}

async fn should_rate_limit(
    State(shared): State<Shared>,
    request: axum::extract::Request,
) -> Response {
    let started = Instant::now();
    if !is_json(request.headers()) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            BadInput::ContentType,
            "POST /json takes Content-Type: application/json".into(),
        );
    }
    let body = match read_body(&shared, request).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let request = match json::parse_request(&body) {
        Ok(request) => request,
        Err(why) => return refuse(StatusCode::BAD_REQUEST, BadInput::Undecodable, why),
    };
    let decided = shared.engine.decide(&request).await;
    telemetry::latency("json", started.elapsed());
    let verdict = match decided {
        Ok(verdict) => verdict,
        Err(Refusal::Invalid(kind, why)) => return refuse(StatusCode::BAD_REQUEST, kind, why),
        Err(Refusal::Unavailable(why)) => {
            return text(StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n"))
        }
    };
    let proto = response::to_proto(&verdict, shared.response_headers);
    let status = if verdict.over {
        StatusCode::TOO_MANY_REQUESTS
    } else {
        StatusCode::OK
    };
    let mut reply = (status, axum::Json(json::response(&proto))).into_response();
    let headers = response::rate_limit_headers(&verdict);
    if shared.response_headers {
        headers.apply(reply.headers_mut());
    } else if verdict.over {
        let retry = headers.retry_after().unwrap_or(1);
        reply
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry));
    }
    reply
}

async fn healthcheck(State(shared): State<Shared>) -> Response {
    if shared.draining.load(Ordering::Relaxed) {
        return text(StatusCode::SERVICE_UNAVAILABLE, "draining\n".into());
    }
    if !shared.engine.healthy() {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "backend unavailable\n".into(),
        );
    }
    text(StatusCode::OK, "OK\n".into())
}

async fn metrics(State(shared): State<Shared>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        shared.metrics.render(),
    )
        .into_response()
}

async fn rlconfig(State(shared): State<Shared>) -> Response {
    text(StatusCode::OK, shared.engine.snapshot().config.to_string())
}
