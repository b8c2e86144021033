//! The 10 s token cache that `AuthenticationOptions::build` puts in front of the
//! service-account authenticators when they look objects up over REST: only tokens whose
//! unverified `iss` is a service-account issuer reach it. Others (opaque tokens, JWTs of
//! another issuer, garbage) pass by without a key being computed, so the process-wide
//! `authentication_token_cache_*` metrics do not count them.
//!
//! The API server is test-only (on 127.0.0.1 over TLS, `tests/webhook_server`); the
//! service-account key is an ECDSA P-256 key made here and the tokens are signed with it.
//! This file is its own test binary with one test: the metrics it reads are process-wide.
#![cfg(feature = "remote")]

mod webhook_server;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self as sig, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use kube_authn::authenticator::{Context, RequestAuthenticator};
use kube_authn::config::AuthenticationOptions;
use kube_authn::token::cache::TOKEN_CACHE_METRICS;
use serde_json::{Value, json};
use webhook_server::{Pki, Server, builder_api, lookup_kubeconfig};

const ISSUER: &str = "https://issuer.example";

fn jws(key: &sig::EcdsaKeyPair, header: &Value, claims: &Value) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
}

fn metrics() -> String {
    let mut text = String::new();
    TOKEN_CACHE_METRICS.encode(&mut text);
    text
}

#[tokio::test]
async fn only_service_account_tokens_go_through_the_cache() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, builder_api).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = lookup_kubeconfig(dir.path(), &server.url(""), &pki.ca_pem);
    let key = sig::EcdsaKeyPair::generate(&sig::ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    let spki = key.public_key().as_der().unwrap();
    let pem = format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        STANDARD.encode(spki.as_ref())
    );
    let key_file = dir.path().join("sa.pub");
    std::fs::write(&key_file, pem).unwrap();

    let built = AuthenticationOptions {
        service_account_key_files: vec![key_file],
        service_account_issuers: vec![ISSUER.into()],
        service_account_lookup_kubeconfig: Some(kubeconfig),
        anonymous_auth: Some(false),
        ..AuthenticationOptions::default()
    }
    .build()
    .unwrap();
    let ctx = Context::with_audiences(built.api_audiences.clone());
    let ask = |token: &str| {
        let (req, _) = http::Request::get("/")
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .unwrap()
            .into_parts();
        let chain = built.chain.clone();
        let ctx = ctx.clone();
        async move { chain.authenticate_request(&req, &ctx).await }
    };

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = |iss: &str| {
        json!({
            "aud": [ISSUER], "exp": now + 3600, "iat": now, "nbf": now, "iss": iss,
            "jti": "jti-1", "sub": "system:serviceaccount:ns1:builder",
            "kubernetes.io": {
                "namespace": "ns1",
                "serviceaccount": {"name": "builder", "uid": "uid-builder"},
                "pod": {"name": "builder-pod", "uid": "pod-uid-builder"},
            },
        })
    };
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let service_account = jws(&key, &header, &claims(ISSUER));
    let not_ours = [
        "an-opaque-webhook-token".to_owned(),
        // Another issuer's JWT (an OIDC token, say), validly signed.
        jws(&key, &header, &claims("https://oidc.example")),
        // No `iss` at all.
        jws(&key, &header, &json!({"sub": "jane"})),
        "not.a.jwt".to_owned(),
        "a.b.c.d".to_owned(),
    ];
    for round in 0..3 {
        for token in &not_ours {
            let got = ask(token).await;
            assert!(
                !matches!(got, Ok(Some(_))),
                "round {round}: {token:?} authenticated: {got:?}"
            );
        }
    }
    assert_eq!(
        metrics(),
        "",
        "tokens the service-account issuers do not own went through the cache"
    );
    assert_eq!(server.calls(), 0);

    // A service-account token: a miss and an `ok` fetch (two lookups), then a hit.
    for _ in 0..2 {
        let got = ask(&service_account).await.unwrap().unwrap();
        assert_eq!(got.user.name(), "system:serviceaccount:ns1:builder");
    }
    let text = metrics();
    for sample in [
        "authentication_token_cache_request_total{status=\"miss\"} 1\n",
        "authentication_token_cache_request_total{status=\"hit\"} 1\n",
        "authentication_token_cache_fetch_total{status=\"ok\"} 1\n",
    ] {
        assert!(text.contains(sample), "{sample}: {text}");
    }
    assert!(!text.contains("status=\"error\""), "{text}");
    assert_eq!(server.calls(), 2, "the service account and the pod, once");

    // And foreign tokens still leave the counts as they are.
    for token in &not_ours {
        let _ = ask(token).await;
    }
    assert_eq!(metrics(), text);
}
