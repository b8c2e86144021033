//! A tonic 0.14 gRPC server behind `AuthenticationLayer` with the gRPC failure response
//! (`grpc-status: 16 UNAUTHENTICATED`).
//!
//! The service is hand-written (a raw-bytes codec, no protobuf code generation) to keep the
//! example small: `kube_authn.example.WhoAmI/Get` answers the caller's user name as bytes.
//!
//! ```text
//! cargo run --example tonic
//! # a unary call with an empty message (5-byte gRPC frame header), with and without a token:
//! printf '\0\0\0\0\0' | curl -s --http2-prior-knowledge -H 'content-type: application/grpc' \
//!     -H 'te: trailers' -H 'authorization: Bearer s3cr3t' --data-binary @- \
//!     http://127.0.0.1:50051/kube_authn.example.WhoAmI/Get -o - | tail -c +6
//! printf '\0\0\0\0\0' | curl -si --http2-prior-knowledge -H 'content-type: application/grpc' \
//!     --data-binary @- http://127.0.0.1:50051/kube_authn.example.WhoAmI/Get   # grpc-status: 16
//! ```

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use aws_lc_rs::constant_time::verify_slices_are_equal;
use bytes::{Buf, BufMut};
use kube_authn::authenticator::{Context, Response, SyncTokenFn};
use kube_authn::chain::ChainBuilder;
use kube_authn::middleware::{Authenticated, AuthenticationLayer, GrpcUnauthenticated};
use kube_authn::user::UserInfo;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::server::{Grpc, NamedService, UnaryService};

/// Messages are raw bytes.
#[derive(Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let mut v = vec![0; src.remaining()];
        src.copy_to_slice(&mut v);
        Ok(Some(v))
    }
}

/// `Get`: answers the authenticated user's name.
struct Get;

impl UnaryService<Vec<u8>> for Get {
    type Response = Vec<u8>;
    type Future = std::future::Ready<Result<tonic::Response<Vec<u8>>, Status>>;
    fn call(&mut self, req: tonic::Request<Vec<u8>>) -> Self::Future {
        // tonic's extensions are http's: the middleware's identity is there.
        let name = Authenticated::from_extensions(req.extensions())
            .map(|a| a.user.name().to_owned())
            .unwrap_or_default();
        std::future::ready(Ok(tonic::Response::new(name.into_bytes())))
    }
}

#[derive(Clone)]
struct WhoAmI;

impl NamedService for WhoAmI {
    const NAME: &'static str = "kube_authn.example.WhoAmI";
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower::Service<http::Request<tonic::body::Body>> for WhoAmI {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        Box::pin(async move {
            if req.uri().path() != "/kube_authn.example.WhoAmI/Get" {
                return Ok(Status::unimplemented("no such method").into_http());
            }
            Ok(Grpc::new(Raw).unary(Get, req).await)
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let jane = Arc::new(UserInfo::new("jane"));
    let chain = ChainBuilder::new()
        .token(SyncTokenFn::new(move |t: &str, _: &Context| {
            // Constant time: `==` stops at the first differing byte.
            let known = verify_slices_are_equal(t.as_bytes(), b"s3cr3t").is_ok();
            Ok(known.then(|| Response::new(jane.clone())))
        }))
        .build();
    let layer = AuthenticationLayer::builder(chain)
        .on_failure(GrpcUnauthenticated::default())
        .build();
    let addr = std::env::var("ADDR")
        .unwrap_or_else(|_| "127.0.0.1:50051".into())
        .parse()?;
    println!("gRPC on {addr}");
    tonic::transport::Server::builder()
        .layer(layer)
        .add_service(WhoAmI)
        .serve(addr)
        .await?;
    Ok(())
}
