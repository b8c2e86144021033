//! Webhook TokenReview round trips against a local TLS backend on 127.0.0.1 (HTTP/1.1,
//! keep-alive, mutual TLS): the cost of a cache miss, and of a hit on the cached webhook.
//!
//! `cargo bench --bench webhook -- --warm-up-time 1 --measurement-time 3`

#[path = "../tests/webhook_server/mod.rs"]
mod webhook_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kube_authn::authenticator::{Context, TokenAuthenticator};
use kube_authn::outbound::vault::Vault;
use kube_authn::outbound::{ConnectionInfo, Pem};
use kube_authn::token::webhook::{WebhookOptions, WebhookTokenAuthenticator};
use webhook_server::{Pki, Reply, Server};

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
                serde_json::json!({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview",
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
    g.bench_function("review round trip (uncached, TLS keep-alive)", |b| {
        b.iter(|| {
            rt.block_on(raw.authenticate_token(&token, &ctx))
                .unwrap()
                .unwrap()
        })
    });
    let n = AtomicUsize::new(0);
    g.bench_function("cached webhook miss (new token each time)", |b| {
        b.iter(|| {
            let t = format!("{}{}", n.fetch_add(1, Ordering::Relaxed), token);
            rt.block_on(cached.authenticate_token(&t, &ctx))
                .unwrap()
                .unwrap()
        })
    });
    rt.block_on(cached.authenticate_token(&token, &ctx))
        .unwrap();
    g.bench_function("cached webhook hit (1.2 KB token)", |b| {
        b.iter(|| {
            cached
                .authenticate_token(&token, &ctx)
                .into_ready()
                .unwrap()
                .unwrap()
        })
    });
    g.finish();
    drop(server);
}

criterion_group!(benches, bench);
criterion_main!(benches);
