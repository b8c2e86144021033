//! An axum 0.8 server behind `AuthenticationLayer`, with the `Authenticated` extractor and
//! kube-apiserver's metrics.
//!
//! Tokens come from a closure (`SyncTokenFn`) over a fixed map; anonymous requests are allowed
//! only for `/healthz` (KEP-4633 path conditions).
//!
//! ```text
//! cargo run --example axum --features axum
//! curl -s -H 'Authorization: Bearer jane-token' http://127.0.0.1:8080/whoami
//! curl -s http://127.0.0.1:8080/whoami           # 401 Status (pretty, because curl)
//! curl -s http://127.0.0.1:8080/healthz          # anonymous: ok
//! curl -s -H 'Authorization: Bearer jane-token' http://127.0.0.1:8080/metrics
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::Router;
use kube_authn::authenticator::{Context, Response, SyncTokenFn};
use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
use kube_authn::metrics::Metrics;
use kube_authn::middleware::{Authenticated, AuthenticationLayer};
use kube_authn::user::UserInfo;

async fn whoami(who: Authenticated) -> String {
    let user = &who.user;
    format!(
        "name={} uid={} groups={:?}\n",
        user.name(),
        user.uid(),
        user.groups().collect::<Vec<_>>()
    )
}

async fn healthz(who: Option<Authenticated>) -> String {
    let name = who.map_or_else(|| "?".to_owned(), |a| a.user.name().to_owned());
    format!("ok ({name})\n")
}

async fn metrics_text(State(metrics): State<Arc<Metrics>>) -> String {
    let mut text = String::new();
    metrics.encode(&mut text);
    text
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let users: HashMap<&'static str, Arc<UserInfo>> = HashMap::from([
        (
            "jane-token",
            Arc::new(UserInfo::builder("jane").uid("1001").group("dev").build()),
        ),
        (
            "admin-token",
            Arc::new(UserInfo::builder("admin").group("system:masters").build()),
        ),
    ]);
    let tokens = SyncTokenFn::new(move |token: &str, _: &Context| {
        Ok(users.get(token).map(|u| Response::new(u.clone())))
    });
    let chain = ChainBuilder::new()
        .token(tokens)
        .anonymous(Anonymous::with_paths(["/healthz"]))
        .build();
    let metrics = Arc::new(Metrics::new());
    let layer = AuthenticationLayer::builder(chain)
        .metrics(metrics.clone())
        .build();
    println!("accepted schemes: {}", layer.security_definitions());

    let app = Router::new()
        .route("/whoami", get(whoami))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .with_state(metrics)
        .layer(layer);
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:8080".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await
}
