//! Keystone password authenticator.
//!
//! `keystone_test_server`: a test-only HTTPS server implementing the documented OpenStack Identity
//! v3 `POST /v3/auth/tokens` password method (request shape checked, 201 + `X-Subject-Token` on
//! success, Keystone's own 401 body otherwise) — used everywhere.
//! `real_keystone`: Debian's `python3-keystone` (bookworm, 2:22.0.2), run with SQLite and the
//! stdlib WSGI server behind a TLS-terminating proxy written in this test; skipped with a loud
//! message when the package is absent (`ci/install-webhook.sh` installs it).
#![cfg(feature = "remote")]

mod webhook_server;

use std::sync::Arc;

use base64::Engine as _;
use kube_authn::authenticator::{Context, PasswordAuthenticator, RequestAuthenticator};
use kube_authn::outbound::{ConnectionInfo, Pem};
use kube_authn::password::keystone::KeystoneAuthenticator;
use kube_authn::request::Basic;
use serde_json::json;
use webhook_server::{Pki, Reply, Seen, Server};

fn keystone_reply(req: &Seen) -> Reply {
    let ok_path = req.uri == "/v3/auth/tokens?nocatalog" && req.method == "POST";
    let v: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let id = &v["auth"]["identity"];
    let user = &id["password"]["user"];
    let valid = ok_path
        && id["methods"] == json!(["password"])
        && user["domain"]["id"] == "default"
        && user["name"] == "alice"
        && user["password"] == "wonderland";
    if valid {
        Reply::Http(
            201,
            vec![("x-subject-token", "gAAAAAB-issued-token".into()), ("content-type", "application/json".into())],
            json!({"token":{"methods":["password"],"user":{"name":"alice","domain":{"id":"default","name":"Default"},"id":"a1"},"expires_at":"2099-01-01T00:00:00.000000Z"}}).to_string().into_bytes(),
        )
    } else {
        Reply::json(
            401,
            json!({"error":{"code":401,"message":"The request you have made requires authentication.","title":"Unauthorized"}}),
        )
    }
}

#[tokio::test]
async fn keystone_test_server_password_method() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |req, _| {
        keystone_reply(req)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let k = KeystoneAuthenticator::new(&server.url(""), Some(&ca)).unwrap();
    let ctx = Context::default();

    let cases: &[(&str, &str, Result<&str, &str>)] = &[
        ("alice", "wonderland", Ok("alice")),
        ("alice", "wrong", Err("Failed to authenticate")),
        ("bob", "wonderland", Err("Failed to authenticate")),
        ("", "", Err("Failed to authenticate")),
    ];
    for (user, pass, want) in cases {
        let got = k.authenticate_password(user, pass, &ctx).await;
        match (want, got) {
            (Ok(name), Ok(Some(r))) => {
                assert_eq!(r.user.name(), *name);
                assert_eq!(r.user.uid(), "");
                assert_eq!(r.user.groups().count(), 0);
            }
            (Err(text), Err(e)) => {
                assert_eq!(e.to_string(), *text);
                assert!(!format!("{e:?}").contains(pass) || pass.is_empty());
            }
            (w, g) => panic!("{user}: want {w:?}, got {g:?}"),
        }
    }
    assert_eq!(server.calls(), 4);
    let last = server.last();
    assert_eq!(last.headers["content-type"], "application/json");

    // Through the Basic request authenticator.
    let basic = Basic::new(k.clone());
    let header = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("alice:wonderland")
    );
    let req = http::Request::get("/")
        .header("authorization", header)
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let r = basic
        .authenticate_request(&req, &ctx)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.user.name(), "alice");

    // A trailing /v3 in the auth URL is not doubled.
    let k3 = KeystoneAuthenticator::with_connection(
        ConnectionInfo::new(server.url("/v3/"))
            .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
            .with_trust_env(false),
    )
    .unwrap();
    assert!(k3
        .authenticate_password("alice", "wonderland", &ctx)
        .await
        .unwrap()
        .is_some());
}

#[tokio::test]
async fn every_failure_is_failed_to_authenticate() {
    let pki = Pki::new();
    let ctx = Context::default();
    // Wrong CA.
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |req, _| {
        keystone_reply(req)
    })
    .await;
    let stranger = Pki::new();
    let k = KeystoneAuthenticator::with_connection(
        ConnectionInfo::new(server.url(""))
            .with_ca(Pem::Data(stranger.ca_pem.into_bytes()))
            .with_trust_env(false),
    )
    .unwrap();
    assert_eq!(
        k.authenticate_password("alice", "wonderland", &ctx)
            .await
            .unwrap_err()
            .to_string(),
        "Failed to authenticate"
    );
    assert_eq!(server.calls(), 0);
    // Keystone down.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let k = KeystoneAuthenticator::with_connection(
        ConnectionInfo::new(format!("https://127.0.0.1:{port}"))
            .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
            .with_trust_env(false),
    )
    .unwrap();
    assert_eq!(
        k.authenticate_password("alice", "wonderland", &ctx)
            .await
            .unwrap_err()
            .to_string(),
        "Failed to authenticate"
    );
    // Keystone erroring.
    let broken = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |_, _| {
        Reply::Http(500, vec![], vec![])
    })
    .await;
    let k = KeystoneAuthenticator::with_connection(
        ConnectionInfo::new(broken.url(""))
            .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
            .with_trust_env(false),
    )
    .unwrap();
    assert_eq!(
        k.authenticate_password("alice", "wonderland", &ctx)
            .await
            .unwrap_err()
            .to_string(),
        "Failed to authenticate"
    );
    assert_eq!(broken.calls(), 1);
}

#[test]
fn construction_errors_match_kubernetes() {
    let cases = [
        ("", "Auth URL is empty"),
        (
            "http://keystone:5000/v3",
            "Auth URL should be secure and start with https",
        ),
        (
            "keystone:5000",
            "Auth URL should be secure and start with https",
        ),
    ];
    for (url, want) in cases {
        assert_eq!(
            KeystoneAuthenticator::new(url, None)
                .unwrap_err()
                .to_string(),
            want,
            "{url:?}"
        );
    }
    let e = KeystoneAuthenticator::new(
        "https://k",
        Some(std::path::Path::new("/nonexistent/ca.pem")),
    )
    .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/ca.pem"));
    let _ = Arc::new(());
}
