//! `RestLookup` against a Kubernetes-API-shaped server on 127.0.0.1 over TLS. The server is
//! test-only (no kube-apiserver can run here): it answers the four GET endpoints the lookup
//! uses with the JSON kube-apiserver returns, and counts the requests. Then the whole path: a
//! legacy service-account token minted by PyJWT, validated with lookups through `RestLookup`.
#![cfg(feature = "remote")]

mod jwt_support;
mod log_support;
mod webhook_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use jwt_support::*;
use kube_authn::authenticator::{Audiences, Context, TokenAuthenticator};
use kube_authn::jwt::FixedClock;
use kube_authn::jwt::key::parse_pem_keys;
use kube_authn::outbound::vault::{SyncProvider, Vault};
use kube_authn::outbound::{ConnectionInfo, Pem, Secret as Token};
use kube_authn::token::service_account::{
    LookupError, ServiceAccountAuthenticator, ServiceAccountLookup,
};
use kube_authn::token::service_account_rest::RestLookup;
use log_support::capture_logs;
use serde_json::json;
use webhook_server::{Pki, Reply, Seen, Server};

const GOOD: &str = "Bearer lookup-token";

/// The API server: objects by path; `Bearer lookup-token` required. The legacy secret's
/// `data.token` is `secret_token`.
fn api_with(seen: &Seen, secret_token: &str, invalid_since: Option<&str>) -> Reply {
    if seen
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        != Some(GOOD)
    {
        return Reply::json(
            401,
            json!({"kind": "Status", "code": 401, "reason": "Unauthorized"}),
        );
    }
    let not_found = |kind: &str, name: &str| {
        Reply::json(
            404,
            json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404,
                   "message": format!("{kind} \"{name}\" not found")}),
        )
    };
    match seen.uri.as_str() {
        "/api/v1/namespaces/test/serviceaccounts/my-service-account" => Reply::json(
            200,
            json!({"kind": "ServiceAccount", "apiVersion": "v1",
                   "metadata": {"name": "my-service-account", "namespace": "test", "uid": "12345",
                                "resourceVersion": "7", "creationTimestamp": "2024-01-01T00:00:00Z"},
                   "secrets": [{"name": "my-secret"}]}),
        ),
        "/api/v1/namespaces/test/secrets/my-secret" => Reply::json(
            200,
            json!({"kind": "Secret", "apiVersion": "v1", "type": "kubernetes.io/service-account-token",
                   "metadata": {"name": "my-secret", "namespace": "test", "uid": "s-1",
                                "labels": invalid_since
                                    .map(|d| json!({"kubernetes.io/legacy-token-invalid-since": d}))
                                    .unwrap_or(json!({}))},
                   "data": {"token": b64std(secret_token), "namespace": "dGVzdA=="}}),
        ),
        "/api/v1/namespaces/test/pods/doomed" => Reply::json(
            200,
            json!({"kind": "Pod", "metadata": {"name": "doomed", "uid": "p-1",
                                               "deletionTimestamp": "2026-11-22T12:00:00Z"}}),
        ),
        "/api/v1/nodes/node-1" => Reply::json(
            200,
            json!({"kind": "Node", "metadata": {"name": "node-1", "uid": "n-1"}}),
        ),
        "/api/v1/nodes/huge" => Reply::Http(200, vec![], vec![b' '; 5 << 20]),
        "/api/v1/nodes/broken" => Reply::Http(200, vec![], b"<html>".to_vec()),
        // A body serde would quote in its error text ("invalid type: string \"…\"").
        "/api/v1/nodes/leaky" => {
            Reply::Http(200, vec![], br#"{"metadata":"SECRET-DATA"}"#.to_vec())
        }
        "/api/v1/nodes/flaky" => Reply::json(500, json!({"kind": "Status", "code": 500})),
        "/api/v1/nodes/slow" => Reply::Hang,
        uri => {
            let name = uri.rsplit('/').next().unwrap_or_default();
            let kind = uri.rsplit('/').nth(1).unwrap_or_default();
            not_found(kind, name)
        }
    }
}

fn api(seen: &Seen, _: usize) -> Reply {
    api_with(seen, "secret-token", Some("2024-02-01"))
}

fn b64std(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn info(pki: &Pki, server: &Server, token: &str) -> ConnectionInfo {
    ConnectionInfo::new(server.url(""))
        .with_ca(Pem::Data(pki.ca_pem.as_bytes().to_vec()))
        .with_token(Token::new(token))
}

#[tokio::test]
async fn lookups_follow_the_api_server() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, api).await;
    let lookup = RestLookup::new(Vault::from_info(info(&pki, &server, "lookup-token")))
        .request_timeout(Duration::from_secs(2));

    let sa = lookup
        .service_account("test", "my-service-account")
        .await
        .unwrap();
    assert_eq!(sa.meta.uid, "12345");
    assert_eq!(sa.secrets, ["my-secret"]);
    let secret = lookup.secret("test", "my-secret").await.unwrap();
    assert_eq!(secret.token.as_deref(), Some(b"secret-token".as_slice()));
    assert_eq!(secret.invalid_since.as_deref(), Some("2024-02-01"));
    assert!(!format!("{secret:?}").contains("secret-token"));
    let pod = lookup.pod("test", "doomed").await.unwrap();
    assert_eq!(
        (pod.uid.as_str(), pod.deletion_timestamp),
        ("p-1", Some(1_795_348_800))
    );
    assert_eq!(lookup.node("node-1").await.unwrap().uid, "n-1");
    assert_eq!(server.last().headers["accept"], "application/json");

    // Kubernetes' NotFound wording comes from the error type.
    let err = lookup.service_account("test", "gone").await.unwrap_err();
    assert_eq!(
        err,
        LookupError::NotFound {
            resource: "serviceaccounts",
            name: "gone".into()
        }
    );
    assert_eq!(err.to_string(), r#"serviceaccounts "gone" not found"#);

    type Case = (&'static str, &'static str, &'static str);
    let failures: [Case; 5] = [
        ("body over the cap", "huge", "larger than 4194304 bytes"),
        (
            "not JSON",
            "broken",
            "malformed response: invalid JSON at line 1 column 1",
        ),
        (
            "a body whose text serde would quote",
            "leaky",
            "malformed response: unexpected JSON shape at line 1 column 25",
        ),
        ("server error", "flaky", "the server answered 500"),
        ("hanging server", "slow", "request failed"),
    ];
    for (name, node, want) in failures {
        let start = Instant::now();
        let err = lookup.node(node).await.unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains("SECRET"), "{name}: {err}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{name}: unbounded"
        );
    }

    // Names that are not Kubernetes names never reach the server: no such object exists, so
    // the answer is the API server's NotFound (the token is refused with a 401, not reported
    // as an outage).
    let before = server.calls();
    for bad in ["../nodes/x", "a/b", "A", "", "x%2Fy"] {
        let err = lookup.node(bad).await.unwrap_err();
        assert_eq!(
            err,
            LookupError::NotFound {
                resource: "nodes",
                name: bad.into()
            },
            "{bad:?}"
        );
        let err = lookup.secret(bad, "s").await.unwrap_err();
        assert_eq!(err.to_string(), r#"secrets "s" not found"#, "{bad:?}");
    }
    assert_eq!(server.calls(), before);
}

/// Lookup URLs are built as client-go's REST client builds them (`Request.URL`): the object's
/// path joined to the server URL's path, the server URL's query and fragment dropped (never
/// `https://h/?k=v/api/v1/…`). Directly and through a kubeconfig (whose `server` clientcmd
/// keeps as written when its path is `/` or empty).
#[tokio::test]
async fn lookup_urls_join_the_path_and_drop_the_query() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, api).await;
    let base = server.url("");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    // (server URL, the request's path and query)
    let cases = [
        (format!("{base}/?k=v"), "/api/v1/nodes/node-1"),
        (format!("{base}?k=v"), "/api/v1/nodes/node-1"),
        (format!("{base}/p/"), "/p/api/v1/nodes/node-1"),
        (format!("{base}/p/./q/..//?k=v#f"), "/p/api/v1/nodes/node-1"),
        (format!("{base}#f"), "/api/v1/nodes/node-1"),
    ];
    for (url, want) in &cases {
        let direct = ConnectionInfo::new(url.as_str())
            .with_ca(Pem::Data(pki.ca_pem.as_bytes().to_vec()))
            .with_token(Token::new("lookup-token"));
        let cfg = dir.path().join("kubeconfig");
        std::fs::write(
            &cfg,
            format!(
                "clusters:\n- cluster:\n    server: '{url}'\n    certificate-authority: ca.pem\nusers:\n- user:\n    token: lookup-token\n"
            ),
        )
        .unwrap();
        let lookups = [
            ("direct", RestLookup::new(Vault::from_info(direct))),
            ("kubeconfig", RestLookup::from_kubeconfig(&cfg).unwrap()),
        ];
        for (how, lookup) in lookups {
            // The API server stand-in knows the node at the root only: the answer does not
            // matter, the request line does. `last` is the latest request of the whole test,
            // so the count shows this lookup sent exactly one.
            let before = server.calls();
            let _ = lookup.node("node-1").await;
            assert_eq!(server.calls(), before + 1, "{how}: {url}: one request");
            assert_eq!(server.last().uri, *want, "{how}: {url}");
        }
    }
}

/// A `tls-server-name` is sent as SNI by lookups too (as client-go's transport sends
/// `tls.Config.ServerName`), while the connection goes to the URL's host and `Host` names it.
#[tokio::test]
async fn lookups_send_the_tls_server_name_as_sni() {
    let pki = Pki::new(); // the server's certificate names 127.0.0.1, localhost, webhook.example
    let (server, sni) = Server::start_recording_sni(&pki.server_cert_pem, &pki.server_key_pem, api);
    let info = info(&pki, &server, "lookup-token").with_tls_server_name("webhook.example");
    let lookup = RestLookup::new(Vault::from_info(info));
    assert_eq!(lookup.node("node-1").await.unwrap().uid, "n-1");
    assert_eq!(*sni.lock().unwrap(), [Some("webhook.example".to_owned())]);
    let seen = server.last();
    assert_eq!(seen.uri, "/api/v1/nodes/node-1");
    assert_eq!(seen.headers["host"], server.addr.to_string());
}

/// A credential the API server rejects is marked bad and the next one is used; when none is
/// left the lookup fails (and the token is refused), without looping.
#[tokio::test]
async fn a_rejected_credential_moves_to_the_next() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, api).await;
    let (stale, good) = (
        info(&pki, &server, "stale"),
        info(&pki, &server, "lookup-token"),
    );
    let lookup = RestLookup::new(Vault::new(vec![Box::new(SyncProvider::new(move || {
        Ok(vec![stale.clone(), good.clone()])
    }))]));
    assert_eq!(lookup.node("node-1").await.unwrap().uid, "n-1");
    assert_eq!(server.calls(), 2, "one 401, one success");
    assert_eq!(lookup.node("node-1").await.unwrap().uid, "n-1");
    assert_eq!(server.calls(), 3, "the bad credential is not tried again");

    let only_bad = info(&pki, &server, "stale");
    let lookup = RestLookup::new(Vault::new(vec![Box::new(SyncProvider::new(move || {
        Ok(vec![only_bad.clone()])
    }))]));
    let err = lookup.node("node-1").await.unwrap_err().to_string();
    assert!(err.contains("401"), "{err}");
}

/// A 401 on the last try marks that credential bad too: the next lookup does not send it.
#[tokio::test]
async fn a_credential_rejected_on_the_last_try_is_not_sent_again() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, api).await;
    let mut list: Vec<ConnectionInfo> = (0
        ..kube_authn::token::service_account_rest::MAX_CREDENTIAL_TRIES)
        .map(|i| info(&pki, &server, &format!("stale-{i}")))
        .collect();
    list.push(info(&pki, &server, "lookup-token"));
    let lookup = RestLookup::new(Vault::new(vec![Box::new(SyncProvider::new(move || {
        Ok(list.clone())
    }))]));
    let err = lookup.node("node-1").await.unwrap_err().to_string();
    assert!(err.contains("401"), "{err}");
    let tries = kube_authn::token::service_account_rest::MAX_CREDENTIAL_TRIES;
    assert_eq!(server.calls(), tries);
    assert_eq!(lookup.node("node-1").await.unwrap().uid, "n-1");
    assert_eq!(
        server.calls(),
        tries + 1,
        "the last refused credential is not sent again"
    );
}

/// The whole path: a legacy token (PyJWT, kube-apiserver's layout) validated with lookups
/// through the REST API: the service account and secret exist with matching UIDs and token.
#[tokio::test]
async fn legacy_tokens_are_checked_against_the_api_server() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let secret = Arc::new(std::sync::Mutex::new((String::new(), None::<&'static str>)));
    let current = secret.clone();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        move |s, _| {
            let (token, label) = current.lock().unwrap().clone();
            api_with(s, &token, label)
        },
    )
    .await;
    let lookup: Arc<dyn ServiceAccountLookup> = Arc::new(RestLookup::new(Vault::from_info(info(
        &pki,
        &server,
        "lookup-token",
    ))));
    let keys = parse_pem_keys(&f.read("rsa_pub.pem")).unwrap();
    let auth = ServiceAccountAuthenticator::legacy(keys, Audiences::from(["api"]), Some(lookup))
        .with_clock(Arc::new(FixedClock::new(NOW)));
    let rsa = f.key("rsa.pem");
    let mut wrong_uid = legacy_claims();
    wrong_uid["kubernetes.io/serviceaccount/service-account.uid"] = json!("99999");
    let mut gone = legacy_claims();
    gone["kubernetes.io/serviceaccount/service-account.name"] = json!("gone");
    gone["sub"] = json!("system:serviceaccount:test:gone");
    let tokens = mint(&[
        req(&rsa, "RS256", None, legacy_claims()),
        req(&rsa, "RS256", None, wrong_uid),
        req(&rsa, "RS256", None, gone),
    ]);
    let ctx = Context::default();
    // (name, token presented, the secret's data.token and invalid-since label, expected user
    // or error text)
    type Case<'a> = (
        &'a str,
        &'a String,
        &'a String,
        Option<&'static str>,
        Result<&'a str, &'a str>,
    );
    let cases: [Case<'_>; 5] = [
        (
            "valid",
            &tokens[0],
            &tokens[0],
            None,
            Ok("system:serviceaccount:test:my-service-account"),
        ),
        (
            "secret holds another token",
            &tokens[0],
            &tokens[1],
            None,
            Err("Token does not match server's copy"),
        ),
        (
            "secret labelled invalid",
            &tokens[0],
            &tokens[0],
            Some("2024-02-01"),
            Err("has been marked invalid"),
        ),
        (
            "service account UID differs",
            &tokens[1],
            &tokens[1],
            None,
            Err("ServiceAccount UID (12345) does not match claim (99999)"),
        ),
        (
            "service account gone",
            &tokens[2],
            &tokens[2],
            None,
            Err(r#"serviceaccounts "gone" not found"#),
        ),
    ];
    for (name, token, stored, label, want) in cases {
        *secret.lock().unwrap() = (stored.to_string(), label);
        let got = auth.authenticate_token(token, &ctx).await;
        match want {
            Ok(user) => assert_eq!(got.unwrap().unwrap().user.name(), user, "{name}"),
            Err(text) => {
                let err = got.unwrap_err().to_string();
                assert!(err.contains(text), "{name}: {err}");
            }
        }
    }
    assert!(server.calls() >= 4);
}

#[tokio::test]
async fn an_api_server_outage_is_unavailable_not_a_bad_credential() {
    // Kubernetes' texts either way; the kind tells a gone object (a bad credential) from an
    // API server that could not be asked, so that `UnavailableAs503` can answer 503. Why the
    // lookup failed is logged (WARN for an outage, DEBUG for a gone object), never a token.
    use kube_authn::ErrorKind;
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    // Nothing listens on this port once the listener is dropped.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let down = ConnectionInfo::new(format!("https://{closed}"))
        .with_ca(Pem::Data(pki.ca_pem.as_bytes().to_vec()))
        .with_token(Token::new("lookup-token"));
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, api).await;
    let up = info(&pki, &server, "lookup-token");
    let keys = parse_pem_keys(&f.read("rsa_pub.pem")).unwrap();
    let mut gone = legacy_claims();
    gone["kubernetes.io/serviceaccount/secret.name"] = json!("gone-secret");
    let tokens = mint(&[
        req(&f.key("rsa.pem"), "RS256", None, legacy_claims()),
        req(&f.key("rsa.pem"), "RS256", None, gone),
    ]);
    type Case<'a> = (
        &'a str,
        ConnectionInfo,
        &'a String,
        ErrorKind,
        &'a str,
        &'a str,
    );
    let cases: [Case<'_>; 2] = [
        (
            "API server down",
            down,
            &tokens[0],
            ErrorKind::Unavailable,
            "Token has been invalidated",
            " WARN kube_authn::token::service_account: service account token: lookup failed error=secrets \"",
        ),
        (
            "secret not found",
            up,
            &tokens[1],
            ErrorKind::InvalidCredential,
            "Token has been invalidated",
            r#"DEBUG kube_authn::token::service_account: service account token: bound object not found error=secrets "gone-secret" not found"#,
        ),
    ];
    for (name, api_server, token, kind, text, logged) in cases {
        let (logs, guard) = capture_logs();
        let lookup: Arc<dyn ServiceAccountLookup> =
            Arc::new(RestLookup::new(Vault::from_info(api_server)));
        let auth = ServiceAccountAuthenticator::legacy(
            keys.clone(),
            Audiences::from(["api"]),
            Some(lookup),
        )
        .with_clock(Arc::new(FixedClock::new(NOW)));
        let err = auth
            .authenticate_token(token, &Context::default())
            .await
            .unwrap_err();
        assert_eq!(
            (err.kind(), err.to_string().as_str()),
            (kind, text),
            "{name}"
        );
        drop(guard);
        let logs = logs.text();
        assert!(logs.contains(logged), "{name}: {logged:?} not in\n{logs}");
        for secret in ["lookup-token", token.as_str()] {
            assert!(
                !logs.contains(secret),
                "{name}: a token was logged:\n{logs}"
            );
        }
    }
}
