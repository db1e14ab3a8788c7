//! The gRPC codec: prost's, except that a message that does not decode (malformed protobuf,
//! a string that is not UTF-8) is `INVALID_ARGUMENT` with prost's reason, as for every other
//! request the service cannot use, rather than tonic's `INTERNAL`.

use crate::telemetry::{self, Api, BadInput};
use prost::Message;
use std::marker::PhantomData;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic::{Code, Status};
use tonic_prost::{ProstDecoder, ProstEncoder};

/// Prost encoding and decoding, with decode failures as `INVALID_ARGUMENT`.
#[derive(Debug, Clone)]
pub struct RlsCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for RlsCodec<T, U> {
    fn default() -> Self {
        RlsCodec(PhantomData)
    }
}

impl<T, U> Codec for RlsCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = RlsDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        RlsDecoder(ProstDecoder::default())
    }
}

/// [`ProstDecoder`], its failures turned into `INVALID_ARGUMENT`.
#[derive(Debug, Clone)]
pub struct RlsDecoder<U>(ProstDecoder<U>);

impl<U: Message + Default> Decoder for RlsDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.0.decode(buf).map_err(|status| {
            let why = format!(
                "the message is not a valid RateLimitRequest: {}",
                status.message()
            );
            telemetry::refused(Api::Grpc, BadInput::Undecodable, &why);
            Status::new(Code::InvalidArgument, why)
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}
