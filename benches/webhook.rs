//! Webhook TokenReview round trips against a local TLS backend on 127.0.0.1 (HTTP/1.1,
//! keep-alive, mutual TLS): the cost of a cache miss, and of a hit on the cached webhook.
//!
//! `cargo bench --features remote --bench webhook -- --warm-up-time 1 --measurement-time 3`
//!
//! Each row's answer (the user `bench`) is checked before and after it is timed: a backend
//! that stopped answering, or a cache that stopped hitting, must not be timed silently.

#[path = "../tests/webhook_server/mod.rs"]
mod webhook_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kube_authn::authenticator::{AuthResult, Context, TokenAuthenticator};
use kube_authn::outbound::vault::Vault;
use kube_authn::outbound::{ConnectionInfo, Pem};
use kube_authn::token::webhook::{WebhookOptions, WebhookTokenAuthenticator};
use webhook_server::{Pki, Reply, Server};

/// Panics unless `got` is the webhook's user `bench`.
fn check(row: &str, when: &str, got: AuthResult) {
    let user = got
        .unwrap_or_else(|e| panic!("{row} {when}: {e}"))
        .unwrap_or_else(|| panic!("{row} {when}: not authenticated"))
        .user;
    assert_eq!(user.name(), "bench", "{row} {when}");
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let pki = Pki::new();
    let server = rt.block_on(Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        |_, _| {
            Reply::json(
                200,
                serde_json::json!({"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview",
                    "status":{"authenticated":true,"user":{"username":"bench","groups":["g"]}}}),
            )
        },
    ));
    let info = ConnectionInfo::new(server.url("/review"))
        .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
        .with_client_cert(
            Pem::Data(pki.client_cert_pem.clone().into_bytes()),
            Pem::Data(pki.client_key_pem.clone().into_bytes()),
        )
        .with_trust_env(false);
    let raw =
        WebhookTokenAuthenticator::new(Vault::from_info(info.clone()), WebhookOptions::default())
            .unwrap();
    let cached = WebhookTokenAuthenticator::new(Vault::from_info(info), WebhookOptions::default())
        .unwrap()
        .cached(Duration::from_secs(120));
    let token = "a".repeat(1200);
    let ctx = Context::default();

    let mut g = c.benchmark_group("webhook");
    let row = "review round trip (uncached, TLS keep-alive)";
    let round_trip = || rt.block_on(raw.authenticate_token(&token, &ctx));
    check(row, "before timing", round_trip());
    g.bench_function(row, |b| b.iter(|| round_trip().unwrap().unwrap()));
    check(row, "after timing", round_trip());

    let row = "cached webhook miss (new token each time)";
    let n = AtomicUsize::new(0);
    let miss = || {
        let t = format!("{}{}", n.fetch_add(1, Ordering::Relaxed), token);
        rt.block_on(cached.authenticate_token(&t, &ctx))
    };
    check(row, "before timing", miss());
    g.bench_function(row, |b| b.iter(|| miss().unwrap().unwrap()));
    check(row, "after timing", miss());

    // Fills the cache for the hit row; a hit is answered at once (a miss returns a pending
    // future, and `into_ready` then fails).
    let row = "cached webhook hit (1.2 KB token)";
    check(
        row,
        "filling the cache",
        rt.block_on(cached.authenticate_token(&token, &ctx)),
    );
    let hit = || {
        cached
            .authenticate_token(&token, &ctx)
            .into_ready()
            .unwrap()
    };
    check(row, "before timing", hit());
    g.bench_function(row, |b| b.iter(|| hit().unwrap().unwrap()));
    check(row, "after timing", hit());
    g.finish();
    drop(server);
}

criterion_group!(benches, bench);
criterion_main!(benches);
