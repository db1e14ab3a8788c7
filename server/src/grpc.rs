//! `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit` over gRPC.

use crate::engine::{Engine, Refusal};
use crate::proto::rate_limit_service_server::{RateLimitService, RateLimitServiceServer};
use crate::proto::{RateLimitRequest, RateLimitResponse};
use crate::{input, response, telemetry};
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
        RateLimitServiceServer::new(Rls {
            engine,
            response_headers,
        })
        .max_decoding_message_size(input::MAX_MESSAGE_BYTES)
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
            Err(Refusal::Invalid(why)) => Err(Status::invalid_argument(why)),
            Err(Refusal::Unavailable(why)) => Err(Status::unavailable(why)),
        }
    }
}
