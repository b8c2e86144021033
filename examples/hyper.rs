//! A plain hyper 1 + hyper-util server whose service is wrapped by `AuthenticationLayer`.
//!
//! HTTP/1.1 and HTTP/2 (h2c) on one port. Responses to refused or anonymous HTTP/2 requests
//! carry `CloseConnection`; the accept loop reacts with `graceful_shutdown` (GOAWAY), which is
//! what kube-apiserver's `Connection: close` does in Go (CVE-2023-44487 mitigation), and drops
//! the connection 1 s later if the client has not closed it.
//!
//! ```text
//! cargo run --example hyper
//! curl -s -H 'Authorization: Bearer s3cr3t' http://127.0.0.1:8081/api
//! curl -s --http2-prior-knowledge http://127.0.0.1:8081/api        # anonymous, then GOAWAY
//! curl -s -H 'Authorization: Bearer wrong' http://127.0.0.1:8081/api  # 401 Status
//! ```

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use aws_lc_rs::constant_time::verify_slices_are_equal;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use kube_authn::authenticator::{Context, Response, SyncTokenFn};
use kube_authn::chain::{ChainBuilder, anonymous::Anonymous};
use kube_authn::middleware::{Authenticated, AuthenticationLayer, CloseConnection};
use kube_authn::user::UserInfo;
use tower::{Layer, service_fn};

async fn handler(req: http::Request<Incoming>) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let user = Authenticated::from_request(&req).map_or("?", |a| a.user.name());
    Ok(http::Response::new(Full::new(Bytes::from(format!(
        "hello, {user}\n"
    )))))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let jane = Arc::new(UserInfo::builder("jane").group("dev").build());
    let chain = ChainBuilder::new()
        .token(SyncTokenFn::new(move |t: &str, _: &Context| {
            // Constant time: `==` stops at the first differing byte.
            let known = verify_slices_are_equal(t.as_bytes(), b"s3cr3t").is_ok();
            Ok(known.then(|| Response::new(jane.clone())))
        }))
        .anonymous(Anonymous::new())
        .build();
    let layer = AuthenticationLayer::new(chain);

    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:8081".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let layer = layer.clone();
        tokio::spawn(async move {
            let close = Arc::new(tokio::sync::Notify::new());
            let svc = CloseConnection::watch(layer.layer(service_fn(handler)), close.clone());
            let builder = auto::Builder::new(TokioExecutor::new());
            let conn =
                builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc));
            tokio::pin!(conn);
            tokio::select! {
                res = conn.as_mut() => { let _ = res; return; }
                _ = close.notified() => conn.as_mut().graceful_shutdown(),
            }
            // hyper goes on accepting and serving new streams until the client acknowledges
            // the PING sent with the GOAWAY: a client that never does would keep the
            // connection, and its unauthenticated requests, going for ever. Drop it after 1 s
            // (Go's `goAwayTimeout`). This also cuts requests still in progress after 1 s;
            // `kube_authn::tls::TlsServer` instead refuses the new streams, lets the earlier
            // requests finish and closes 1 s after them.
            let _ = tokio::time::timeout(Duration::from_secs(1), conn).await;
        });
    }
}
