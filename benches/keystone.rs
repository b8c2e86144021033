//! Keystone password logins (`KeystoneAuthenticator`, `--experimental-keystone-url`) against a
//! local HTTPS server on 127.0.0.1 (HTTP/1.1, keep-alive; the Keystone client accepts only
//! https URLs): the cost of one login round trip, accepted and refused, as a password
//! authenticator and behind `Authorization: Basic`.
//!
//! The server is a **test-only OpenStack Identity v3 responder** (no real Keystone can run in a
//! bench; `tests/keystone.rs` runs Debian's when it is installed): real TLS (rustls) and real
//! HTTP (hyper) from `tests/webhook_server`, answering `POST /v3/auth/tokens?nocatalog` with
//! the documented password method: `201 Created` and a token body for the right password,
//! Keystone's own `401` body otherwise. Each row's outcome is asserted once before timing.
//!
//! `cargo bench --all-features --bench keystone -- --warm-up-time 1 --measurement-time 3`

#[path = "../tests/webhook_server/mod.rs"]
mod webhook_server;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use criterion::{Criterion, criterion_group, criterion_main};
use kube_authn::authenticator::{AuthResult, Context, PasswordAuthenticator, RequestAuthenticator};
use kube_authn::outbound::{ConnectionInfo, Pem};
use kube_authn::password::keystone::{FAILED_TO_AUTHENTICATE, KeystoneAuthenticator};
use kube_authn::request::Basic;
use serde_json::json;
use webhook_server::{Pki, Reply, Seen, Server};

const USER: &str = "alice";
const PASSWORD: &str = "wonderland";

/// The Identity v3 password method, as much of it as the authenticator uses.
fn identity_v3(req: &Seen) -> Reply {
    let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let identity = &body["auth"]["identity"];
    let user = &identity["password"]["user"];
    let valid = req.method == "POST"
        && req.uri == "/v3/auth/tokens?nocatalog"
        && identity["methods"] == json!(["password"])
        && user["domain"]["id"] == "default"
        && user["name"] == USER
        && user["password"] == PASSWORD;
    if valid {
        Reply::Http(
            201,
            vec![
                ("x-subject-token", "gAAAAAB-bench-issued-token".into()),
                ("content-type", "application/json".into()),
            ],
            json!({"token": {"methods": ["password"], "expires_at": "2099-01-01T00:00:00.000000Z",
                "user": {"id": "a1", "name": USER, "domain": {"id": "default", "name": "Default"}}}})
            .to_string()
            .into_bytes(),
        )
    } else {
        Reply::json(
            401,
            json!({"error": {"code": 401, "title": "Unauthorized",
                "message": "The request you have made requires authentication."}}),
        )
    }
}

/// Panics, before any timing, unless `got` is the user `want` (`Ok`) or the error `want`
/// (`Err`): a bench of the wrong path is no bench.
fn check(case: &str, got: AuthResult, want: Result<&str, &str>) {
    let got = got
        .map(|r| r.map(|r| r.user.name().to_owned()))
        .map_err(|e| e.to_string());
    let want = want.map(|u| Some(u.to_owned())).map_err(str::to_owned);
    assert_eq!(got, want, "{case}");
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
        None,
        |req, _| identity_v3(req),
    ));
    let info = ConnectionInfo::new(server.url("/v3"))
        .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
        .with_trust_env(false);
    let keystone = KeystoneAuthenticator::with_connection(info).unwrap();
    let basic = Basic::new(keystone.clone());
    let ctx = Context::default();
    let basic_req = |user: &str, password: &str| {
        let credentials = STANDARD.encode(format!("{user}:{password}"));
        http::Request::get("/api")
            .header("authorization", format!("Basic {credentials}"))
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    let (right, wrong) = (basic_req(USER, PASSWORD), basic_req(USER, "wrong"));

    let login = |user: &'static str, password: &'static str| {
        rt.block_on(keystone.authenticate_password(user, password, &ctx))
    };
    let via_basic = |req| rt.block_on(basic.authenticate_request(req, &ctx));
    // Every outcome, checked before the group and after each row is timed: the network
    // (the test server, the kept-alive connection) can change while criterion runs.
    let check_all = |when: &str| {
        check(&format!("login, {when}"), login(USER, PASSWORD), Ok(USER));
        check(
            &format!("wrong password, {when}"),
            login(USER, "wrong"),
            Err(FAILED_TO_AUTHENTICATE),
        );
        check(&format!("basic, {when}"), via_basic(&right), Ok(USER));
        check(
            &format!("basic wrong, {when}"),
            via_basic(&wrong),
            Err(FAILED_TO_AUTHENTICATE),
        );
    };
    check_all("before timing");

    let mut g = c.benchmark_group("keystone");
    g.bench_function("login accepted (201, TLS keep-alive)", |b| {
        b.iter(|| login(USER, PASSWORD))
    });
    check_all("after timing login accepted");
    g.bench_function("login refused (401, TLS keep-alive)", |b| {
        b.iter(|| login(USER, "wrong"))
    });
    check_all("after timing login refused");
    g.bench_function("Basic header, login accepted", |b| {
        b.iter(|| via_basic(&right))
    });
    check_all("after timing Basic header");
    g.finish();
    drop(server);
}

criterion_group!(benches, bench);
criterion_main!(benches);
