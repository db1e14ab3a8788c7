//! The HTTP side: `POST /json`, `GET /healthcheck`, `GET /metrics`, `GET /rlconfig`.

use crate::engine::{Engine, Refusal};
use crate::{input, json, response, telemetry};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

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
}

/// The router.
pub fn router(shared: Shared) -> Router {
    Router::new()
        .route("/json", post(should_rate_limit))
        .route("/healthcheck", get(healthcheck))
        .route("/metrics", get(metrics))
        .route("/rlconfig", get(rlconfig))
        .layer(DefaultBodyLimit::max(input::MAX_MESSAGE_BYTES))
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

async fn should_rate_limit(State(shared): State<Shared>, body: Bytes) -> Response {
    let started = Instant::now();
    let request = match json::parse_request(&body) {
        Ok(request) => request,
        Err(why) => return text(StatusCode::BAD_REQUEST, format!("{why}\n")),
    };
    let decided = shared.engine.decide(&request).await;
    telemetry::latency("json", started.elapsed());
    let verdict = match decided {
        Ok(verdict) => verdict,
        Err(Refusal::Invalid(why)) => return text(StatusCode::BAD_REQUEST, format!("{why}\n")),
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
