//! `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit` over gRPC; `oversize.rs`
//! gives a message over the size limit its conventional code; `serve.rs` serves the listener,
//! on threads of its own when there are several.

mod oversize;
mod serve;

pub use oversize::{layer as oversize_layer, OversizeLayer};
pub use serve::{serve, Settings};

use crate::engine::{Engine, Refusal};
use crate::proto::rate_limit_service_server::{RateLimitService, RateLimitServiceServer};
use crate::proto::{RateLimitRequest, RateLimitResponse};
use crate::telemetry::{self, Api};
use crate::{input, response};
use std::sync::Arc;
use std::time::Instant;
use tonic::{Request, Response, Status};

/// The gRPC service over an [`Engine`].
#[derive(Debug, Clone)]
pub struct Rls {
    engine: Arc<Engine>,
    response_headers: bool,
}

impl Rls {
    /// The tonic server for `engine`, refusing messages over [`input::MAX_MESSAGE_BYTES`].
    pub fn server(engine: Arc<Engine>, response_headers: bool) -> RateLimitServiceServer<Rls> {
        Rls::server_with_limit(engine, response_headers, input::MAX_MESSAGE_BYTES)
    }

    /// The tonic server for `engine`, refusing messages over `max_message_bytes` (with
    /// `RESOURCE_EXHAUSTED` under [`oversize_layer`]).
    pub fn server_with_limit(
        engine: Arc<Engine>,
        response_headers: bool,
        max_message_bytes: usize,
    ) -> RateLimitServiceServer<Rls> {
        RateLimitServiceServer::new(Rls {
            engine,
            response_headers,
        })
        .max_decoding_message_size(max_message_bytes)
    }
}

#[tonic::async_trait]
impl RateLimitService for Rls {
    async fn should_rate_limit(
        &self,
        request: Request<RateLimitRequest>,
    ) -> Result<Response<RateLimitResponse>, Status> {
        let started = Instant::now();
        tracing::debug!(request = ?request.get_ref(), "ShouldRateLimit");
        let decided = self.engine.decide(request.get_ref()).await;
        telemetry::latency("grpc", started.elapsed());
        match decided {
            Ok(verdict) => Ok(Response::new(response::to_proto(
                &verdict,
                self.response_headers,
            ))),
            Err(Refusal::Invalid(kind, why)) => {
                telemetry::refused(Api::Grpc, kind, &why);
                Err(Status::invalid_argument(why))
            }
            Err(Refusal::Unavailable(why)) => Err(Status::unavailable(why)),
        }
    }
}
