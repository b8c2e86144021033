//! End-to-end tests of the remote and proxy authenticators wired into `kube-authn serve`: the
//! real binary over real TLS on 127.0.0.1, called with curl and reqwest.
//!
//! * webhook TokenReview: two chained instances — B serves a token file (and client
//!   certificates), A sends every bearer token to B's `tokenreviews` endpoint;
//! * the request-header front proxy;
//! * service-account tokens minted by PyJWT, with and without lookups through an API server
//!   (a test-only one: no kube-apiserver runs here).
#![cfg(feature = "server")]

mod go_support;
mod serve_support;
mod webhook_server;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serve_support::*;

/// B's administrator (reads B's metrics).
const ADMIN_TOKEN: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
/// The credential A presents to B.
const WEBHOOK_CLIENT_TOKEN: &str = "c0ffee00c0ffee00c0ffee00c0ffee00";
/// A user only B knows.
const BOB_TOKEN: &str = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0";

/// A CA and a client certificate signed by it (rcgen), written as PEM files into `dir`:
/// (CA, client certificate, client key).
fn client_pki(dir: &Path, prefix: &str, cn: &str, orgs: &[&str]) -> (PathBuf, PathBuf, PathBuf) {
    let (ca, mut leaves) = pki(dir, prefix, &[(cn, orgs)]);
    let (cert, key) = leaves.remove(0);
    (ca, cert, key)
}

/// A CA (`<prefix>-ca.pem`) and one client certificate per `(cn, orgs)` signed by it
/// (`<prefix>-<cn>.pem`, `<prefix>-<cn>.key`).
fn pki(dir: &Path, prefix: &str, leaves: &[(&str, &[&str])]) -> (PathBuf, Vec<(PathBuf, PathBuf)>) {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("{prefix} CA"));
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let ca_path = dir.join(format!("{prefix}-ca.pem"));
    std::fs::write(&ca_path, ca.pem()).unwrap();
    let mut out = Vec::new();
    for (cn, orgs) in leaves {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, *cn);
        for o in *orgs {
            params.distinguished_name.push(DnType::OrganizationName, *o);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca).unwrap();
        let paths = (
            dir.join(format!("{prefix}-{cn}.pem")),
            dir.join(format!("{prefix}-{cn}.key")),
        );
        std::fs::write(&paths.0, cert.pem()).unwrap();
        std::fs::write(&paths.1, key.serialize_pem()).unwrap();
        out.push(paths);
    }
    (ca_path, out)
}

fn cert_args(cert: &Path, key: &Path) -> Vec<String> {
    vec![
        "--cert".into(),
        cert.display().to_string(),
        "--key".into(),
        key.display().to_string(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Webhook TokenReview: instance A asks instance B.

/// Instance B: a token file (admin, the webhook client, bob) and a client CA that signed a
/// certificate for `webhook-client-cert`.
struct Backend {
    server: Server,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn start_backend(extra: &[&str]) -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        format!(
            "{ADMIN_TOKEN},admin,1,\"system:masters\"\n\
             {WEBHOOK_CLIENT_TOKEN},client,2,\"system:auth-delegator\"\n\
             {BOB_TOKEN},bob,3,\"team-b,on-call\"\n"
        ),
    )
    .unwrap();
    let (ca, client_cert, client_key) =
        client_pki(dir.path(), "b-clients", "client", &["delegators"]);
    let mut args = vec![
        format!("--token-auth-file={}", tokens.display()),
        format!("--client-ca-file={}", ca.display()),
        // A's webhook client: the token user's group and the client certificate's O.
        "--token-review-groups=system:auth-delegator,delegators".to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Backend {
        server: Server::spawn(dir, &args),
        client_cert,
        client_key,
    }
}

/// How A authenticates to B.
#[derive(Clone, Copy, Debug)]
enum Caller<'a> {
    Token(&'a str),
    ClientCert,
}

/// Writes A's webhook kubeconfig (pointing at B's `version` tokenreviews) into `dir`.
fn webhook_kubeconfig(dir: &Path, backend: &Backend, version: &str, caller: Caller<'_>) -> PathBuf {
    let user = match caller {
        Caller::Token(t) => format!("    token: {t}\n"),
        Caller::ClientCert => format!(
            "    client-certificate: {}\n    client-key: {}\n",
            backend.client_cert.display(),
            backend.client_key.display()
        ),
    };
    let config = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: b\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: a\n  user:\n{user}contexts:\n- name: webhook\n  context:\n    cluster: b\n    user: a\ncurrent-context: webhook\n",
        backend.server.url(&format!(
            "/apis/authentication.k8s.io/{version}/tokenreviews"
        )),
        backend.server.ca().display(),
    );
    let path = dir.join("webhook.kubeconfig");
    std::fs::write(&path, config).unwrap();
    path
}

fn start_frontend(backend: &Backend, version: &str, caller: Caller<'_>, extra: &[&str]) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = webhook_kubeconfig(dir.path(), backend, version, caller);
    let mut args = vec![
        format!(
            "--authentication-token-webhook-config-file={}",
            kubeconfig.display()
        ),
        format!("--authentication-token-webhook-version={version}"),
        // bob (team-b), authenticated through B, reviews tokens on A in these tests.
        "--token-review-groups=team-b".to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Server::spawn(dir, &args)
}

#[test]
fn webhook_two_chained_instances() {
    let backend = start_backend(&[]);
    type Case<'a> = (&'a str, Caller<'a>, &'a str);
    let cases: [Case<'_>; 4] = [
        ("v1beta1", Caller::Token(WEBHOOK_CLIENT_TOKEN), "client"),
        ("v1", Caller::Token(WEBHOOK_CLIENT_TOKEN), "client"),
        ("v1beta1", Caller::ClientCert, "client"),
        ("v1", Caller::ClientCert, "client"),
    ];
    // B counts authenticated callers by name (kube's compressUsername keeps `client`, the name both credentials carry),
    // so the caller's counter at B is the number of reviews A sent.
    let calls = |caller: &str| {
        backend.server.metric(
            ADMIN_TOKEN,
            &format!("authenticated_user_requests{{username=\"{caller}\"}}"),
        )
    };
    for (version, caller, caller_name) in cases {
        let case = format!("{version} {caller:?}");
        let frontend = start_frontend(&backend, version, caller, &[]);
        let before = calls(caller_name);

        // A token only B knows: B's user, as B's chain saw it.
        let bob = format!("Authorization: Bearer {BOB_TOKEN}");
        let (code, body) = whoami_curl(&frontend, &["-H", &bob]);
        assert_eq!(code, 201, "{case}: {body}\n{}", frontend.log());
        let user = &body["status"]["userInfo"];
        assert_eq!(user["username"], "bob", "{case}");
        assert_eq!(user["uid"], "3", "{case}");
        assert_eq!(
            user["groups"],
            json!(["team-b", "on-call", "system:authenticated"]),
            "{case}"
        );
        assert_eq!(calls(caller_name), before + 1, "{case}: one review at B");

        // Again: answered from A's webhook cache (2m), B is not asked.
        let (code, _) = whoami_curl(&frontend, &["-H", &bob]);
        assert_eq!(code, 201, "{case}");
        assert_eq!(calls(caller_name), before + 1, "{case}: cached");

        // An unknown token: B answers `authenticated: false` with B's chain error
        // (`invalid bearer token`, as kube-apiserver's TokenReview does), so A answers 401.
        let (code, body) = whoami_curl(&frontend, &["-H", "Authorization: Bearer nobody-knows-me"]);
        assert_eq!(code, 401, "{case}: {body}");
        assert_eq!(body["reason"], "Unauthorized", "{case}");
        assert_eq!(calls(caller_name), before + 2, "{case}: B was asked");
        // Errors are never cached by the webhook cache (cacheErrs=false): B is asked again.
        let (code, _) = whoami_curl(&frontend, &["-H", "Authorization: Bearer nobody-knows-me"]);
        assert_eq!(code, 401, "{case}");
        assert_eq!(calls(caller_name), before + 3, "{case}: error not cached");

        // Over reqwest (HTTP/2), TokenReview at A delegates to B as well.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let review: Value = rt.block_on(async {
            frontend
                .reqwest()
                .post(frontend.url("/apis/authentication.k8s.io/v1/tokenreviews"))
                .bearer_auth(BOB_TOKEN)
                .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": BOB_TOKEN}}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        });
        assert_eq!(review["status"]["authenticated"], true, "{case}: {review}");
        assert_eq!(review["status"]["user"]["username"], "bob", "{case}");
        // No secret in A's log.
        let log = frontend.log();
        for secret in [BOB_TOKEN, WEBHOOK_CLIENT_TOKEN, "nobody-knows-me"] {
            assert!(!log.contains(secret), "{case}: {secret} in A's log:\n{log}");
        }

        // A's webhook cache, under kube-apiserver's metric names: 3 misses (bob once, the
        // unknown token twice: errors are not cached), one `ok` and two `error` fetches, and
        // everything else with bob (the review, this read) answered from the cache.
        let text = frontend.metrics_text(BOB_TOKEN);
        for line in [
            "authentication_token_cache_active_fetch_count{status=\"blocked\"} 0\n",
            "authentication_token_cache_active_fetch_count{status=\"in_flight\"} 0\n",
            "authentication_token_cache_fetch_total{status=\"error\"} 2\n",
            "authentication_token_cache_fetch_total{status=\"ok\"} 1\n",
            "authentication_token_cache_request_duration_seconds_count{status=\"miss\"} 3\n",
            "authentication_token_cache_request_total{status=\"miss\"} 3\n",
            "# HELP authentication_token_cache_request_total [ALPHA] \n",
        ] {
            assert!(text.contains(line), "{case}: {line:?} in\n{text}");
        }
        let hits = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("authentication_token_cache_request_total{status=\"hit\"} ")
            })
            .and_then(|v| v.parse::<u64>().ok());
        assert!(hits.is_some_and(|h| h >= 2), "{case}: {text}");
        // A has no --client-ca-file and no service-account keys: neither family is exported.
        for absent in [
            "apiserver_client_certificate_expiration_seconds",
            "serviceaccount_",
        ] {
            assert!(!text.contains(absent), "{case}: {absent} in\n{text}");
        }
    }
    // B has a client CA (the histogram is exported) and no token cache.
    let text = backend.server.metrics_text(ADMIN_TOKEN);
    assert!(
        text.contains("# TYPE apiserver_client_certificate_expiration_seconds histogram\n"),
        "{text}"
    );
    for absent in ["authentication_token_cache_", "serviceaccount_"] {
        assert!(!text.contains(absent), "B: {absent} in\n{text}");
    }
}

#[test]
fn webhook_audiences_follow_kube_apiserver() {
    // A has API audiences, so its reviews carry `spec.audiences`. A backend whose token file is
    // audience-agnostic with other (or no) API audiences has no opinion for those audiences, as
    // kube-apiserver's WrapAudienceAgnosticToken: the user is unknown and A answers 401.
    let bob = format!("Authorization: Bearer {BOB_TOKEN}");
    for (name, backend_args, want) in [
        ("backend without API audiences", vec![], 401),
        (
            "backend with other API audiences",
            vec!["--api-audiences=https://b.example"],
            401,
        ),
        (
            "backend that shares A's audience",
            vec!["--api-audiences=https://b.example,https://a.example"],
            201,
        ),
    ] {
        let backend = start_backend(&backend_args);
        let frontend = start_frontend(
            &backend,
            "v1",
            Caller::Token(WEBHOOK_CLIENT_TOKEN),
            &["--api-audiences=https://a.example"],
        );
        let (code, body) = whoami_curl(&frontend, &["-H", &bob]);
        assert_eq!(code, want, "{name}: {body}");
        if want == 201 {
            assert_eq!(body["status"]["userInfo"]["username"], "bob", "{name}");
            // TokenReview at A: the audiences A asked for, as B confirmed them.
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let review: Value = rt.block_on(async {
                frontend
                    .reqwest()
                    .post(frontend.url("/apis/authentication.k8s.io/v1/tokenreviews"))
                    .bearer_auth(BOB_TOKEN)
                    .json(&json!({"spec": {"token": BOB_TOKEN}}))
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap()
            });
            assert_eq!(
                review["status"]["audiences"],
                json!(["https://a.example"]),
                "{review}"
            );
        }
    }
}

#[test]
fn webhook_rejected_caller_credential_is_401_and_logged() {
    let backend = start_backend(&[]);
    let frontend = start_frontend(&backend, "v1", Caller::Token("not-a-token-b-knows"), &[]);
    let bob = format!("Authorization: Bearer {BOB_TOKEN}");
    let (code, body) = whoami_curl(&frontend, &["-H", &bob]);
    assert_eq!(code, 401, "{body}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !frontend
        .log()
        .contains("Failed to make webhook authenticator request")
    {
        assert!(
            Instant::now() < deadline,
            "webhook error not logged:\n{}",
            frontend.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = frontend.log();
    // The backend's 401 carries kube-apiserver's Status, whose message client-go reports.
    assert!(
        log.contains("Failed to make webhook authenticator request: Unauthorized"),
        "{log}"
    );
    assert!(
        !log.contains("not-a-token-b-knows") && !log.contains(BOB_TOKEN),
        "{log}"
    );
    // B refused A's credential: no caller but the admin reading metrics ever authenticated.
    assert_eq!(
        backend.server.metric(
            ADMIN_TOKEN,
            "authenticated_user_requests{username=\"client\"}"
        ),
        0
    );
    assert!(
        backend
            .server
            .metric(ADMIN_TOKEN, "authentication_attempts{result=\"error\"}")
            >= 1
    );
}

#[test]
fn webhook_backend_down_is_401_in_bounded_time() {
    let mut backend = start_backend(&[]);
    let frontend = start_frontend(
        &backend,
        "v1beta1",
        Caller::Token(WEBHOOK_CLIENT_TOKEN),
        &[],
    );
    let _ = backend.server.child.kill();
    let _ = backend.server.child.wait();
    let bob = format!("Authorization: Bearer {BOB_TOKEN}");
    let started = Instant::now();
    let (code, body) = whoami_curl(&frontend, &["-H", &bob]);
    let took = started.elapsed();
    assert_eq!(code, 401, "{body}");
    // A refused connection is not retried (kube-apiserver's rule), so this is fast; the review
    // deadline (30 s) bounds every other failure.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    frontend.wait_for_log(
        "Failed to make webhook authenticator request",
        1,
        Duration::from_secs(30),
    );
}

#[test]
fn webhook_hanging_backend_is_401_within_the_review_deadline() {
    // B accepts connections and never answers (not even the TLS handshake). A's outbound
    // connect (TCP + TLS) times out after 10 s and the whole review, retries included, has a
    // 30 s deadline (kube-authn's bounds; see docs/compatibility.md): a 401, never a hang.
    let backend = start_backend(&[]);
    let hang = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hang.local_addr().unwrap().port();
    let held = Arc::new(Mutex::new(Vec::new()));
    {
        let held = held.clone();
        std::thread::spawn(move || {
            for conn in hang.incoming().map_while(Result::ok) {
                held.lock().unwrap().push(conn);
            }
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = webhook_kubeconfig(
        dir.path(),
        &backend,
        "v1",
        Caller::Token(WEBHOOK_CLIENT_TOKEN),
    );
    let config = std::fs::read_to_string(&kubeconfig).unwrap().replace(
        &format!("127.0.0.1:{}", backend.server.port),
        &format!("127.0.0.1:{port}"),
    );
    std::fs::write(&kubeconfig, config).unwrap();
    let frontend = Server::spawn(
        dir,
        &[format!(
            "--authentication-token-webhook-config-file={}",
            kubeconfig.display()
        )],
    );
    let bob = format!("Authorization: Bearer {BOB_TOKEN}");
    let started = Instant::now();
    let (code, body) = whoami_curl(&frontend, &["-H", &bob]);
    let took = started.elapsed();
    assert_eq!(code, 401, "{body}");
    assert!(took < Duration::from_secs(40), "took {took:?}");
    assert!(!held.lock().unwrap().is_empty(), "A never connected");
    frontend.wait_for_log(
        "Failed to make webhook authenticator request",
        1,
        Duration::from_secs(30),
    );
}

#[test]
fn webhook_startup_errors_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("webhook.kubeconfig");
    std::fs::write(
        &kubeconfig,
        "clusters:\n- name: b\n  cluster:\n    server: https://127.0.0.1:1/\n",
    )
    .unwrap();
    type Case = (&'static str, Vec<String>, &'static str);
    let cases: Vec<Case> = vec![
        (
            "missing kubeconfig",
            vec!["--authentication-token-webhook-config-file=/nonexistent/kubeconfig".into()],
            // kube-apiserver prints LoadKubeconfig's error as it is.
            "Error: stat /nonexistent/kubeconfig: no such file or directory",
        ),
        (
            "missing kubeconfig and a bad version: the kubeconfig is loaded first",
            vec![
                "--authentication-token-webhook-config-file=/nonexistent/kubeconfig".into(),
                "--authentication-token-webhook-version=v2".into(),
            ],
            "Error: stat /nonexistent/kubeconfig: no such file or directory",
        ),
        (
            "bad version",
            vec![
                format!(
                    "--authentication-token-webhook-config-file={}",
                    kubeconfig.display()
                ),
                "--authentication-token-webhook-version=v2".into(),
            ],
            r#"Error: unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1""#,
        ),
        (
            "bad ttl",
            vec!["--authentication-token-webhook-cache-ttl=2 minutes".into()],
            "time: ",
        ),
    ];
    assert_startup_errors(dir.path(), &cases);
}

// ---------------------------------------------------------------------------------------------
// Request-header front proxy.

#[test]
fn front_proxy_headers_need_the_proxy_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy_ca, proxies) = pki(
        dir.path(),
        "front-proxy",
        &[("front-proxy-client", &[]), ("evil-proxy", &[])],
    );
    let (client_ca, clients) = pki(dir.path(), "clients", &[("carol", &["qa"])]);
    let args = vec![
        format!("--requestheader-client-ca-file={}", proxy_ca.display()),
        "--requestheader-allowed-names=front-proxy-client".into(),
        // What kubeadm sets (kube-apiserver's defaults are empty).
        "--requestheader-username-headers=X-Remote-User".into(),
        "--requestheader-uid-headers=X-Remote-Uid".into(),
        "--requestheader-group-headers=X-Remote-Group".into(),
        "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
        format!("--client-ca-file={}", client_ca.display()),
    ];
    let server = Server::spawn(dir, &args);
    let identity = [
        "-H",
        "X-Remote-User: alice",
        "-H",
        "X-Remote-Uid: uid-42",
        "-H",
        "X-Remote-Group: admins",
        "-H",
        "X-Remote-Group: ops",
        "-H",
        "X-Remote-Extra-Scopes: read",
        "-H",
        "X-Remote-Extra-Scopes: write",
        "-H",
        "X-Remote-Extra-Acme.com%2Fteam: blue",
    ];
    let with = |cert: Option<&(PathBuf, PathBuf)>, headers: &[&str]| {
        let mut args: Vec<String> = cert.map(|(c, k)| cert_args(c, k)).unwrap_or_default();
        args.extend(headers.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        whoami_curl(&server, &args)
    };

    // The proxy certificate with an allowed CN: the headers are the identity.
    let (code, body) = with(Some(&proxies[0]), &identity);
    assert_eq!(code, 201, "{body}\n{}", server.log());
    let user = &body["status"]["userInfo"];
    assert_eq!(user["username"], "alice");
    assert_eq!(user["uid"], "uid-42");
    assert_eq!(
        user["groups"],
        json!(["admins", "ops", "system:authenticated"])
    );
    assert_eq!(
        user["extra"],
        json!({"scopes": ["read", "write"], "acme.com/team": ["blue"]})
    );

    // The same headers without a certificate: nobody vouches for them, the request is
    // anonymous (which SelfSubjectReview refuses with 403).
    let (code, body) = with(None, &identity);
    assert_eq!(code, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("system:anonymous"),
        "{body}"
    );

    // A front-proxy user in system:unauthenticated only (so not in system:authenticated):
    // refused, fail closed, and each 403 names the user, as kube-apiserver's RBAC does.
    let bob = [
        "-H",
        "X-Remote-User: bob",
        "-H",
        "X-Remote-Group: system:unauthenticated",
    ];
    let (code, body) = with(Some(&proxies[0]), &bob);
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "selfsubjectreviews.authentication.k8s.io is forbidden: User \"bob\" cannot create resource \"selfsubjectreviews\" in API group \"authentication.k8s.io\" at the cluster scope",
        "{body}"
    );
    let mut args = cert_args(&proxies[0].0, &proxies[0].1);
    args.extend(bob.iter().map(|s| s.to_string()));
    let review = r#"{"spec":{"token":"x"}}"#;
    let url = server.url("/apis/authentication.k8s.io/v1/tokenreviews");
    args.extend([
        "--http1.1".into(),
        "-H".into(),
        "Content-Type: application/json".into(),
        "-d".into(),
        review.into(),
        url,
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (body, code, _) = server.curl(&args);
    assert_eq!(code, 403, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        body["message"],
        "tokenreviews.authentication.k8s.io is forbidden: User \"bob\" cannot create resource \"tokenreviews\" in API group \"authentication.k8s.io\" at the cluster scope",
        "{body}"
    );

    // The same headers with an ordinary client certificate: the certificate's user, headers
    // ignored.
    let (code, body) = with(Some(&clients[0]), &identity);
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["status"]["userInfo"]["username"], "carol");
    assert_eq!(
        body["status"]["userInfo"]["groups"],
        json!(["qa", "system:authenticated"])
    );

    // A certificate from the proxy CA with a CN that is not allowed: 401, never anonymous.
    let (code, body) = with(Some(&proxies[1]), &identity);
    assert_eq!(code, 401, "{body}");
    assert!(
        server
            .log()
            .contains("x509: subject with cn=evil-proxy is not in the allowed list"),
        "{}",
        server.log()
    );

    // The proxy certificate without a user header: the front proxy has no opinion, the
    // certificate is not a client certificate (other CA) → 401, as kube-apiserver.
    let (code, body) = with(Some(&proxies[0]), &["-H", "X-Remote-Group: admins"]);
    assert_eq!(code, 401, "{body}");
}

/// Only client certificates (no token authenticator configured) and anonymous on,
/// kube-apiserver's default. kube-apiserver still runs its bearer and WebSocket authenticators
/// there, over its always-present (here empty) JWT authenticator
/// (`pkg/kubeapiserver/authenticator/config.go`, v1.37.2): a well-formed token nobody takes is
/// `invalid bearer token`, a 401, and a review of it answers that error. A malformed header
/// (`Bearer  abc`, `Bearer`) is anonymous in kube-apiserver (its bearer authenticator passes
/// it over) and a 401 here; a `Basic` credential on a server without basic auth stays
/// "not mine" in both (anonymous).
#[test]
fn without_token_authenticators_bad_credentials_fail_and_reviews_vouch_for_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let (client_ca, clients) = pki(dir.path(), "clients", &[("reviewer", &["system:masters"])]);
    let args = vec![format!("--client-ca-file={}", client_ca.display())];
    let server = Server::spawn(dir, &args);
    let cases: [(&str, &[&str], u16); 9] = [
        (
            "no credential: anonymous (403 from SelfSubjectReview)",
            &[],
            403,
        ),
        (
            "well-formed bearer token nobody takes: invalid bearer token",
            &["-H", "Authorization: Bearer abc"],
            401,
        ),
        (
            "well-formed token subprotocol nobody takes: invalid bearer token",
            &[
                "-H",
                "Connection: Upgrade",
                "-H",
                "Upgrade: websocket",
                "-H",
                "Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.YWJj, chat",
            ],
            401,
        ),
        (
            "well-formed basic credential: not mine",
            &["-H", "Authorization: Basic dXNlcjpwYXNz"],
            403,
        ),
        ("two spaces", &["-H", "Authorization: Bearer  abc"], 401),
        ("bare scheme", &["-H", "Authorization: Bearer"], 401),
        (
            "basic with two words",
            &["-H", "Authorization: Basic a b"],
            401,
        ),
        (
            "two Authorization headers",
            &[
                "-H",
                "Authorization: Bearer a",
                "-H",
                "Authorization: Bearer b",
            ],
            401,
        ),
        (
            "empty token subprotocol on a WebSocket request",
            &[
                "-H",
                "Connection: Upgrade",
                "-H",
                "Upgrade: websocket",
                "-H",
                "Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io., chat",
            ],
            401,
        ),
    ];
    for (name, headers, want) in cases {
        let (code, body) = whoami_curl(&server, headers);
        assert_eq!(code, want, "{name}: {body}\n{}", server.log());
    }

    assert!(
        server.log().contains("invalid bearer token"),
        "the 401 names why: {}",
        server.log()
    );

    // TokenReview, by a client certificate in system:masters: no token authenticates.
    let (cert, key) = &clients[0];
    let mut auth = cert_args(cert, key);
    auth.extend([
        "-H".to_string(),
        "Content-Type: application/json".to_string(),
    ]);
    for token in ["abc", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln", "  "] {
        let review = json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token}
        })
        .to_string();
        let url = server.url("/apis/authentication.k8s.io/v1/tokenreviews");
        let mut args: Vec<&str> = vec!["--http1.1"];
        args.extend(auth.iter().map(String::as_str));
        args.extend(["-d", review.as_str(), url.as_str()]);
        let (body, code, _) = server.curl(&args);
        assert_eq!(code, 201, "{token:?}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            body["status"]["authenticated"],
            Value::Null,
            "{token:?}: {body}"
        );
        assert_eq!(body["status"]["user"], json!({}), "{token:?}: {body}");
        if token.trim().is_empty() {
            // No token after trimming: malformed, as in a header.
            let error = body["status"]["error"].as_str().unwrap_or_default();
            assert!(error.starts_with("malformed bearer token"), "{body}");
        } else {
            assert_eq!(
                body["status"]["error"], "invalid bearer token",
                "{token:?}: {body}"
            );
        }
    }
}

#[test]
fn front_proxy_ca_is_offered_in_the_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy_ca, _) = pki(dir.path(), "front-proxy", &[]);
    let (client_ca, _) = pki(dir.path(), "clients", &[]);
    for (name, args, want) in [
        (
            "request-header CA only",
            vec![
                format!("--requestheader-client-ca-file={}", proxy_ca.display()),
                "--requestheader-username-headers=X-Remote-User".into(),
            ],
            vec!["front-proxy CA"],
        ),
        (
            "both CAs",
            vec![
                format!("--requestheader-client-ca-file={}", proxy_ca.display()),
                format!("--client-ca-file={}", client_ca.display()),
            ],
            vec!["front-proxy CA", "clients CA"],
        ),
    ] {
        let server = Server::spawn(tempfile::tempdir().unwrap(), &args);
        let out = Command::new("openssl")
            .args(["s_client", "-connect"])
            .arg(format!("127.0.0.1:{}", server.port))
            .stdin(Stdio::null())
            .output()
            .expect("openssl is installed");
        let text = String::from_utf8_lossy(&out.stdout);
        let (_, names) = text
            .split_once("Acceptable client certificate CA names")
            .unwrap_or_else(|| panic!("{name}: no CA names offered:\n{text}"));
        for ca in want {
            assert!(names.contains(ca), "{name}: {ca} not offered:\n{names}");
        }
    }
}

/// Runs the curl line `serve --dev` printed that matches `pred` (with sh): the line with curl's
/// stderr, and the parsed JSON answer.
fn run_printed_line(server: &Server, pred: impl Fn(&str) -> bool) -> (String, Value) {
    let out = dev_instructions(server);
    let line = out
        .lines()
        .find(|l| l.starts_with("curl") && pred(l))
        .unwrap_or_else(|| panic!("no such curl line printed:\n{out}"));
    let (body, stderr) = run_printed(line);
    (format!("{line}\n{stderr}"), body)
}

#[test]
fn dev_mode_prints_certificate_front_proxy_and_service_account_commands_that_work() {
    let mut server = Server::spawn(tempfile::tempdir().unwrap(), &["--dev".to_string()]);
    let certs = server.cert_dir();
    for file in [
        "dev-client-ca.crt",
        "dev-client.crt",
        "dev-client.key",
        "front-proxy-ca.crt",
        "front-proxy-client.crt",
        "front-proxy-client.key",
    ] {
        assert!(
            certs.join(file).exists(),
            "{file} not in {}",
            certs.display()
        );
    }
    let (line, body) = run_printed_line(&server, |l| {
        l.contains("dev-client.crt") && l.contains("selfsubjectreviews")
    });
    assert_eq!(
        body["status"]["userInfo"]["username"], "dev-cert-user",
        "{line}"
    );
    assert_eq!(
        body["status"]["userInfo"]["groups"],
        json!(["developers", "system:authenticated"]),
        "{line}"
    );
    let (line, body) = run_printed_line(&server, |l| {
        l.contains("front-proxy-client.crt") && l.contains("X-Remote-User")
    });
    let user = &body["status"]["userInfo"];
    assert_eq!(user["username"], "alice", "{line}");
    assert_eq!(
        user["groups"],
        json!(["admins", "system:authenticated"]),
        "{line}"
    );
    assert_eq!(user["extra"], json!({"scopes": ["read"]}), "{line}");
    // The service-account line mints its token with `kube-authn dev-token` (ES256, the dev key).
    let (line, body) = run_printed_line(&server, |l| l.contains("dev-token"));
    let user = &body["status"]["userInfo"];
    assert_eq!(
        user["username"], "system:serviceaccount:default:demo",
        "{line}"
    );
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]),
        "{line}"
    );
    assert!(
        user["extra"]["authentication.kubernetes.io/credential-id"][0]
            .as_str()
            .is_some_and(|id| id.starts_with("JTI=")),
        "{line}: {body}"
    );
    // The kubectl line, run as printed (with `-o json` to read the answer) when kubectl is
    // installed (ci/install-test-tools.sh installs it; tests/server.rs requires it there).
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok()
    {
        let out = server.stdout.lock().unwrap().clone();
        let line = out
            .lines()
            .find(|l| l.contains("kubectl auth whoami"))
            .unwrap_or_else(|| panic!("no kubectl line printed:\n{out}"))
            .to_owned();
        let run = Command::new("sh")
            .arg("-c")
            .arg(format!("{line} -o json"))
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let review: Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(review["status"]["userInfo"]["username"], "jane", "{line}");
    }
    // The demo credentials live in a new, unguessable, owner-only directory (never one that
    // already existed at a predictable path), written 0600 from the start, and leave with
    // the server.
    let out = server.stdout.lock().unwrap().clone();
    let kubeconfig = out
        .lines()
        .find_map(|l| l.strip_prefix("KUBECONFIG="))
        .and_then(|l| l.split_whitespace().next())
        // Printed as one shell word: in single quotes (the test's path has none inside).
        .map(|word| std::path::PathBuf::from(word.trim_matches('\'')))
        .unwrap_or_else(|| panic!("no kubeconfig path printed:\n{out}"));
    let dev_dir = kubeconfig.parent().unwrap().to_path_buf();
    let name = dev_dir.file_name().unwrap().to_string_lossy().into_owned();
    let pid = server.child.id();
    assert!(
        name.starts_with(&format!("kube-authn-dev-{pid}-"))
            && name.len() > format!("kube-authn-dev-{pid}-").len(),
        "{name}: no random part"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dev_dir), 0o700, "{}", dev_dir.display());
        for private in ["tokens.csv", "passwords.csv", "kubeconfig"] {
            assert_eq!(mode(&dev_dir.join(private)), 0o600, "{private}");
        }
    }
    // SIGTERM: graceful shutdown, then the directory is gone.
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!dev_dir.exists(), "{} left behind", dev_dir.display());
}

// ---------------------------------------------------------------------------------------------
// kube-apiserver's own webhook client, with `serve` as its backend.

/// `serve` as the authentication webhook of kube-apiserver's own client code: the Go program
/// builds the chain kube-apiserver builds for `--authentication-token-webhook-config-file`
/// (kubeconfig, `webhook.New`, token cache, bearer token, group adder) and authenticates
/// bearer tokens through B's `tokenreviews`, for both API versions and both ways of
/// authenticating to B. A service-account token (minted by PyJWT) shows that B's extra
/// reaches kube-apiserver's user unchanged.
#[test]
fn kube_apiserver_webhook_client_uses_serve_as_its_backend() {
    if !have_pyjwt() {
        return;
    }
    let tools = tempfile::tempdir().unwrap();
    let Some(client) = go_support::go_build("webhookclient", tools.path()) else {
        return;
    };
    const ISSUER: &str = "https://issuer.example";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let sa_token = mint(
        tools.path(),
        &json!([{"key": "rsa", "alg": "RS256", "claims": {
            "aud": [ISSUER], "iss": ISSUER, "iat": now, "nbf": now, "exp": now + 3600,
            "jti": "jti-builder", "sub": "system:serviceaccount:ns1:builder",
            "kubernetes.io": {
                "namespace": "ns1",
                "serviceaccount": {"name": "builder", "uid": "uid-builder"},
                "pod": {"name": "builder-pod", "uid": "pod-uid-builder"},
            },
        }}]),
    )
    .remove(0);
    // One signature character changed (still valid base64url): a well-formed token whose
    // signature does not verify.
    let forged = {
        let mut t = sa_token.clone().into_bytes();
        let i = t.len() - 10;
        t[i] = if t[i] == b'A' { b'B' } else { b'A' };
        String::from_utf8(t).unwrap()
    };
    let backend = start_backend(&[
        &format!(
            "--service-account-key-file={}",
            tools.path().join("rsa_pub.pem").display()
        ),
        &format!("--service-account-issuer={ISSUER}"),
        "--service-account-lookup=false",
        // B's API audiences: the issuer (its service-account tokens) and the one kube-apiserver
        // (the Go client) asks for.
        &format!("--api-audiences={ISSUER},https://a.example"),
    ]);
    let bob = json!({
        "username": "bob", "uid": "3",
        "groups": ["team-b", "on-call", "system:authenticated"], "extra": null,
    });
    let builder = json!({
        "username": "system:serviceaccount:ns1:builder", "uid": "uid-builder",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"],
        "extra": {
            "authentication.kubernetes.io/credential-id": ["JTI=jti-builder"],
            "authentication.kubernetes.io/pod-name": ["builder-pod"],
            "authentication.kubernetes.io/pod-uid": ["pod-uid-builder"],
        },
    });
    // (name, token, audiences kube-apiserver asks for, user, audiences of the answer, error)
    type Case<'a> = (&'a str, &'a str, &'a [&'a str], Value, Value, &'a str);
    let cases: [Case<'_>; 6] = [
        (
            "token-file user",
            BOB_TOKEN,
            &[],
            bob.clone(),
            Value::Null,
            "",
        ),
        (
            "token-file user, an audience B shares",
            BOB_TOKEN,
            &["https://a.example"],
            bob,
            json!(["https://a.example"]),
            "",
        ),
        (
            // B does not know the audience: "not mine", which the Go client's bearer-token
            // authenticator turns into its own error.
            "token-file user, an audience B does not have",
            BOB_TOKEN,
            &["https://elsewhere.example"],
            Value::Null,
            Value::Null,
            "invalid bearer token",
        ),
        (
            "bound service-account token: extra carried through",
            &sa_token,
            &[ISSUER],
            builder,
            json!([ISSUER]),
            "",
        ),
        (
            "unknown token",
            "not-a-token-anyone-knows",
            &[],
            Value::Null,
            Value::Null,
            "invalid bearer token",
        ),
        (
            // B's service-account authenticator claims it (B's issuer) and fails it with
            // kube-apiserver's own text for a bad signature; the text travels in `status.error`
            // and becomes the Go client's error.
            "forged service-account token: B's error reaches kube-apiserver",
            &forged,
            &[],
            Value::Null,
            Value::Null,
            "go-jose/go-jose: error in cryptographic primitive",
        ),
    ];
    let input: Vec<Value> = cases
        .iter()
        .map(|(name, token, auds, ..)| json!({"name": name, "token": token, "audiences": auds}))
        .collect();
    for (version, caller) in [
        ("v1", Caller::Token(WEBHOOK_CLIENT_TOKEN)),
        ("v1beta1", Caller::Token(WEBHOOK_CLIENT_TOKEN)),
        ("v1", Caller::ClientCert),
        ("v1beta1", Caller::ClientCert),
    ] {
        let config = tempfile::tempdir().unwrap();
        let kubeconfig = webhook_kubeconfig(config.path(), &backend, version, caller);
        let results = go_support::run_lines(
            &client,
            &[
                format!("-kubeconfig={}", kubeconfig.display()),
                format!("-version={version}"),
                "-api-audiences=https://a.example".into(),
            ],
            &input,
        );
        for ((name, _, _, user, audiences, error), got) in cases.iter().zip(&results) {
            let case = format!("{version} {caller:?}: {name}");
            assert_eq!(got["name"], *name, "{case}");
            assert_eq!(got["authenticated"], !user.is_null(), "{case}: {got}");
            assert_eq!(got["user"], *user, "{case}: {got}");
            assert_eq!(got["audiences"], *audiences, "{case}: {got}");
            assert_eq!(
                got["error"],
                *error,
                "{case}: {got}\n{}",
                backend.server.log()
            );
        }
    }
    // The reviewed tokens never reach B's log.
    let log = backend.server.log();
    for secret in [BOB_TOKEN, sa_token.rsplit('.').next().unwrap()] {
        assert!(!log.contains(secret), "a token reached the log:\n{log}");
    }
}

// ---------------------------------------------------------------------------------------------
// Service-account tokens, minted by PyJWT (an independent JOSE implementation).

/// Generates an RSA-2048 key, an EC P-256 key and a rogue RSA key with pyca/cryptography (public
/// halves written as `rsa_pub.pem`, `ec_pub.pem` into `dir`), then mints one token per request
/// with PyJWT: `{"key": "rsa"|"ec"|"rogue", "alg": "RS256"|"ES256", "claims": {…}}`, headers
/// `{"alg", "kid": Kubernetes' key id}` as kube-apiserver mints them.
const PYJWT_MINT: &str = r#"
import base64, hashlib, json, os, sys
import jwt
from cryptography.hazmat.primitives import serialization as s
from cryptography.hazmat.primitives.asymmetric import ec, rsa
d = sys.argv[1]
keys = {"rsa": rsa.generate_private_key(65537, 2048), "ec": ec.generate_private_key(ec.SECP256R1()),
        "rogue": rsa.generate_private_key(65537, 2048)}
spki = lambda k: k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo)
open(os.path.join(d, "rsa_pub.pem"), "wb").write(spki(keys["rsa"]))
open(os.path.join(d, "ec_pub.pem"), "wb").write(spki(keys["ec"]))
# Private halves in Kubernetes' usual encodings (PKCS#1 RSA, SEC1 EC) for `kube-authn dev-token`.
trad = lambda k: k.private_bytes(s.Encoding.PEM, s.PrivateFormat.TraditionalOpenSSL, s.NoEncryption())
open(os.path.join(d, "rsa.pem"), "wb").write(trad(keys["rsa"]))
open(os.path.join(d, "ec.pem"), "wb").write(trad(keys["ec"]))
kid_of = lambda k: base64.urlsafe_b64encode(hashlib.sha256(k.public_key().public_bytes(s.Encoding.DER, s.PublicFormat.SubjectPublicKeyInfo)).digest()).rstrip(b"=").decode()
jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(keys["rsa"].public_key()))
jwk.update({"kid": kid_of(keys["rsa"]), "alg": "RS256", "use": "sig"})
open(os.path.join(d, "jwks.json"), "w").write(json.dumps({"keys": [jwk]}))
for req in json.load(sys.stdin):
    k = keys[req["key"]]
    der = k.public_key().public_bytes(s.Encoding.DER, s.PublicFormat.SubjectPublicKeyInfo)
    kid = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
    print(jwt.encode(req["claims"], k, algorithm=req["alg"], headers={"kid": kid}))
"#;

fn have_pyjwt() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import jwt, cryptography"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        const MSG: &str = "python3 with PyJWT and cryptography is not installed (ci/install-test-tools.sh installs them)";
        // ci/test.sh installs the tools and sets this: there a missing tool fails the test
        // instead of skipping it (a skipped test cannot fail).
        assert!(
            std::env::var_os("KUBE_AUTHN_REQUIRE_TEST_TOOLS").is_none(),
            "{}",
            MSG
        );
        eprintln!("\n*** SKIPPED: {MSG} ***\n");
    }
    ok
}

fn mint(dir: &Path, requests: &Value) -> Vec<String> {
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(PYJWT_MINT)
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(requests.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn service_account_tokens_minted_by_pyjwt() {
    if !have_pyjwt() {
        return;
    }
    const ISSUER: &str = "https://issuer.example";
    const OLD_ISSUER: &str = "https://old-issuer.example";
    let dir = tempfile::tempdir().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let bound = |iss: &str, aud: &[&str], ns: &str, name: &str, iat: u64, exp: u64| {
        json!({
            "aud": aud, "exp": exp, "iat": iat, "nbf": iat, "iss": iss,
            "jti": format!("jti-{name}"),
            "sub": format!("system:serviceaccount:{ns}:{name}"),
            "kubernetes.io": {
                "namespace": ns,
                "serviceaccount": {"name": name, "uid": format!("uid-{name}")},
                "pod": {"name": format!("{name}-pod"), "uid": format!("pod-uid-{name}")},
            },
        })
    };
    let legacy = json!({
        "iss": "kubernetes/serviceaccount",
        "sub": "system:serviceaccount:ns2:deployer",
        "kubernetes.io/serviceaccount/namespace": "ns2",
        "kubernetes.io/serviceaccount/secret.name": "deployer-token-x2x9z",
        "kubernetes.io/serviceaccount/service-account.name": "deployer",
        "kubernetes.io/serviceaccount/service-account.uid": "uid-deployer",
    });
    // (case, key, alg, claims, expected user or None for 401)
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        Value,
        Option<Value>,
    );
    let cases: Vec<Case> = vec![
        (
            "bound RS256, first issuer, pod-bound",
            "rsa",
            "RS256",
            bound(ISSUER, &[ISSUER], "ns1", "builder", now, now + 3600),
            Some(json!({
                "username": "system:serviceaccount:ns1:builder",
                "uid": "uid-builder",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"],
                "extra": {
                    "authentication.kubernetes.io/pod-name": ["builder-pod"],
                    "authentication.kubernetes.io/pod-uid": ["pod-uid-builder"],
                    "authentication.kubernetes.io/credential-id": ["JTI=jti-builder"],
                },
            })),
        ),
        (
            "bound ES256, second issuer and audience",
            "ec",
            "ES256",
            bound(OLD_ISSUER, &[OLD_ISSUER], "ns3", "runner", now, now + 3600),
            Some(json!({
                "username": "system:serviceaccount:ns3:runner",
                "uid": "uid-runner",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:ns3", "system:authenticated"],
                "extra": {
                    "authentication.kubernetes.io/pod-name": ["runner-pod"],
                    "authentication.kubernetes.io/pod-uid": ["pod-uid-runner"],
                    "authentication.kubernetes.io/credential-id": ["JTI=jti-runner"],
                },
            })),
        ),
        (
            "legacy secret-based token",
            "rsa",
            "RS256",
            legacy,
            Some(json!({
                "username": "system:serviceaccount:ns2:deployer",
                "uid": "uid-deployer",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:ns2", "system:authenticated"],
            })),
        ),
        (
            "bound, warnafter ahead: counted valid",
            "rsa",
            "RS256",
            with_warnafter(
                bound(ISSUER, &[ISSUER], "ns1", "fresh", now, now + 7200),
                now + 3600,
            ),
            Some(bound_user("ns1", "fresh")),
        ),
        (
            "bound, warnafter passed: counted stale",
            "rsa",
            "RS256",
            with_warnafter(
                bound(ISSUER, &[ISSUER], "ns1", "stale", now - 3700, now + 3500),
                now - 100,
            ),
            Some(bound_user("ns1", "stale")),
        ),
        (
            "wrong issuer",
            "rsa",
            "RS256",
            bound(
                "https://evil.example",
                &[ISSUER],
                "ns1",
                "builder",
                now,
                now + 3600,
            ),
            None,
        ),
        (
            "audience that is not an API audience",
            "rsa",
            "RS256",
            bound(
                ISSUER,
                &["https://other-api"],
                "ns1",
                "builder",
                now,
                now + 3600,
            ),
            None,
        ),
        (
            "expired (beyond the 60 s leeway)",
            "rsa",
            "RS256",
            bound(ISSUER, &[ISSUER], "ns1", "builder", now - 7200, now - 120),
            None,
        ),
        (
            "signed by a key the server does not have",
            "rogue",
            "RS256",
            bound(ISSUER, &[ISSUER], "ns1", "builder", now, now + 3600),
            None,
        ),
    ];
    let requests: Vec<Value> = cases
        .iter()
        .map(|(_, key, alg, claims, _)| json!({"key": key, "alg": alg, "claims": claims}))
        .collect();
    let tokens = mint(dir.path(), &Value::Array(requests));
    assert_eq!(tokens.len(), cases.len());
    // `kube-authn dev-token` with the same (pyca-generated) private keys: RS256 and ES256.
    let dev_tokens: Vec<(String, String)> = [("rsa.pem", "tool-rsa"), ("ec.pem", "tool-ec")]
        .iter()
        .map(|(key, name)| {
            let out = Command::new(env!("CARGO_BIN_EXE_kube-authn"))
                .args([
                    "dev-token",
                    "--issuer",
                    ISSUER,
                    "--namespace",
                    "ns9",
                    "--name",
                    name,
                ])
                .arg("--key-file")
                .arg(dir.path().join(key))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            (
                name.to_string(),
                String::from_utf8(out.stdout).unwrap().trim().to_owned(),
            )
        })
        .collect();
    let args = vec![
        format!(
            "--service-account-key-file={}",
            dir.path().join("rsa_pub.pem").display()
        ),
        format!(
            "--service-account-key-file={}",
            dir.path().join("ec_pub.pem").display()
        ),
        format!("--service-account-issuer={ISSUER}"),
        format!("--service-account-issuer={OLD_ISSUER}"),
        "--service-account-lookup=false".into(),
        // The TokenReview below is sent with a service-account token.
        "--token-review-groups=system:serviceaccounts".into(),
    ];
    let server = Server::spawn(dir, &args);
    for ((name, _, _, _, want), token) in cases.iter().zip(&tokens) {
        let auth = format!("Authorization: Bearer {token}");
        let (code, body) = whoami_curl(&server, &["-H", &auth]);
        match want {
            Some(user) => {
                assert_eq!(code, 201, "{name}: {body}\n{}", server.log());
                let got = &body["status"]["userInfo"];
                for field in ["username", "uid", "groups"] {
                    assert_eq!(got[field], user[field], "{name}: {field}");
                }
                if let Some(extra) = user.get("extra") {
                    assert_eq!(&got["extra"], extra, "{name}: extra");
                }
            }
            None => {
                assert_eq!(code, 401, "{name}: {body}");
                assert_eq!(body["reason"], "Unauthorized", "{name}");
            }
        }
    }
    for (name, token) in &dev_tokens {
        let auth = format!("Authorization: Bearer {token}");
        let (code, body) = whoami_curl(&server, &["-H", &auth]);
        assert_eq!(code, 201, "dev-token {name}: {body}\n{}", server.log());
        assert_eq!(
            body["status"]["userInfo"]["username"],
            format!("system:serviceaccount:ns9:{name}")
        );
    }
    // The TokenReview view of the first token: audiences are the API audiences (the issuers).
    let admin = &tokens[0];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let review: Value = rt.block_on(async {
        server
            .reqwest()
            .post(server.url("/apis/authentication.k8s.io/v1/tokenreviews"))
            .bearer_auth(admin)
            .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": tokens[1]}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(review["status"]["authenticated"], true, "{review}");
    assert_eq!(
        review["status"]["audiences"],
        json!([OLD_ISSUER]),
        "{review}"
    );
    // kube-apiserver's service-account counters, all six (plain counters: exported from the
    // start): one audience-less (legacy) token, one fresh and one stale `warnafter`; no
    // lookups, so no legacy secret counters. No client CA, no token cache: not exported.
    let text = server.metrics_text(admin);
    for (name, value) in [
        ("serviceaccount_invalid_legacy_auto_token_uses_total", 0),
        ("serviceaccount_legacy_auto_token_uses_total", 0),
        ("serviceaccount_legacy_manual_token_uses_total", 0),
        ("serviceaccount_legacy_tokens_total", 1),
        ("serviceaccount_stale_tokens_total", 1),
        ("serviceaccount_valid_tokens_total", 1),
    ] {
        let line = format!("# TYPE {name} counter\n{name} {value}\n");
        assert!(text.contains(&line), "{line:?} in\n{text}");
    }
    for absent in [
        "apiserver_client_certificate_expiration_seconds",
        "authentication_token_cache_",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
    let log = server.log();
    for token in &tokens {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!log.contains(signature), "a token reached the log:\n{log}");
    }
}

/// `claims` with `kubernetes.io.warnafter` set.
fn with_warnafter(mut claims: Value, warnafter: u64) -> Value {
    claims["kubernetes.io"]["warnafter"] = json!(warnafter);
    claims
}

/// The user of a pod-bound token made by `service_account_tokens_minted_by_pyjwt`'s `bound`.
fn bound_user(ns: &str, name: &str) -> Value {
    json!({
        "username": format!("system:serviceaccount:{ns}:{name}"),
        "uid": format!("uid-{name}"),
        "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{ns}"), "system:authenticated"],
    })
}

/// A test-only HTTPS server on 127.0.0.1 (`tests/webhook_server`) with scripted replies, on a
/// runtime of its own so the blocking test body can call the `kube-authn serve` child; keep
/// the returned runtime alive as long as the server is used.
fn scripted_https(
    handler: impl Fn(&webhook_server::Seen, usize) -> webhook_server::Reply + Send + Sync + 'static,
) -> (
    tokio::runtime::Runtime,
    webhook_server::Pki,
    webhook_server::Server,
) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let pki = webhook_server::Pki::new();
    let server = rt.block_on(webhook_server::Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        handler,
    ));
    (rt, pki, server)
}

/// `--service-account-lookup=true` through `--service-account-lookup-kubeconfig`: the test
/// API server (test-only, on 127.0.0.1 over TLS) knows service account `ns1/builder` and its
/// pod; bound tokens naming anything else are refused, and a valid token is looked up once
/// per 10 s (kube-apiserver's token success cache).
#[test]
fn service_account_lookup_through_a_kubeconfig() {
    if !have_pyjwt() {
        return;
    }
    const ISSUER: &str = "https://issuer.example";
    let dir = tempfile::tempdir().unwrap();
    let (_rt, pki, api) = scripted_https(webhook_server::builder_api);
    let kubeconfig = webhook_server::lookup_kubeconfig(dir.path(), &api.url(""), &pki.ca_pem);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let bound = |sa: &str, sa_uid: &str, pod_uid: &str| {
        json!({
            "aud": [ISSUER], "exp": now + 3600, "iat": now, "nbf": now, "iss": ISSUER,
            "jti": "jti-1", "sub": format!("system:serviceaccount:ns1:{sa}"),
            "kubernetes.io": {
                "namespace": "ns1",
                "serviceaccount": {"name": sa, "uid": sa_uid},
                "pod": {"name": "builder-pod", "uid": pod_uid},
            },
        })
    };
    let cases: [(&str, Value, u16); 4] = [
        (
            "service account and pod exist",
            bound("builder", "uid-builder", "pod-uid-builder"),
            201,
        ),
        (
            "service account unknown to the API server",
            bound("ghost", "uid-ghost", "pod-uid-builder"),
            401,
        ),
        (
            "service account recreated (UID differs)",
            bound("builder", "uid-old", "pod-uid-builder"),
            401,
        ),
        (
            "pod recreated (UID differs)",
            bound("builder", "uid-builder", "pod-uid-old"),
            401,
        ),
    ];
    let requests: Vec<Value> = cases
        .iter()
        .map(|(_, claims, _)| json!({"key": "rsa", "alg": "RS256", "claims": claims}))
        .collect();
    let tokens = mint(dir.path(), &Value::Array(requests));
    let args = vec![
        format!(
            "--service-account-key-file={}",
            dir.path().join("rsa_pub.pem").display()
        ),
        format!("--service-account-issuer={ISSUER}"),
        format!(
            "--service-account-lookup-kubeconfig={}",
            kubeconfig.display()
        ),
    ];
    let server = Server::spawn(dir, &args);
    for ((name, _, want), token) in cases.iter().zip(&tokens) {
        let auth = format!("Authorization: Bearer {token}");
        let (code, body) = whoami_curl(&server, &["-H", &auth]);
        assert_eq!(code, *want, "{name}: {body}\n{}", server.log());
        if *want == 201 {
            assert_eq!(
                body["status"]["userInfo"]["username"],
                "system:serviceaccount:ns1:builder"
            );
        }
    }
    // The valid token again: answered from the 10 s cache, no new lookup.
    let calls = api.calls();
    let auth = format!("Authorization: Bearer {}", tokens[0]);
    assert_eq!(whoami_curl(&server, &["-H", &auth]).0, 201);
    assert_eq!(api.calls(), calls, "a cached token was looked up again");
    assert!(api.seen.lock().unwrap().iter().all(|s| s.method == "GET"));

    // Tokens of no service-account issuer pass the cache by: an opaque token and a JWT of
    // another issuer, twice each, leave `authentication_token_cache_*` as they were (reading
    // the metrics with the valid token is itself one hit).
    let sample = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let other_issuer = {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!(
            "{}.{}.c2ln",
            b64(r#"{"alg":"RS256"}"#),
            b64(r#"{"iss":"https://oidc.example","sub":"jane"}"#)
        )
    };
    let before = server.metrics_text(&tokens[0]);
    for token in ["an-opaque-token", other_issuer.as_str()].repeat(2) {
        let auth = format!("Authorization: Bearer {token}");
        assert_eq!(whoami_curl(&server, &["-H", &auth]).0, 401, "{token}");
    }
    let after = server.metrics_text(&tokens[0]);
    for name in [
        "authentication_token_cache_request_total{status=\"miss\"}",
        "authentication_token_cache_fetch_total{status=\"ok\"}",
        "authentication_token_cache_fetch_total{status=\"error\"}",
    ] {
        assert_eq!(
            sample(&before, name),
            sample(&after, name),
            "{name}:\n{after}"
        );
    }
    let hits = "authentication_token_cache_request_total{status=\"hit\"}";
    assert_eq!(sample(&after, hits), sample(&before, hits) + 1, "{after}");
    assert!(
        sample(
            &after,
            "authentication_token_cache_request_total{status=\"miss\"}"
        ) > 0
    );
    assert_eq!(api.calls(), calls, "{}", server.log());
    drop(server);
    drop(api);
}

/// `--service-account-lookup=false` affects legacy tokens only, as in kube-apiserver (whose
/// bound-token validator always has the token getter): with a
/// `--service-account-lookup-kubeconfig`, bound tokens are still looked up (a deleted or
/// recreated pod or service account refuses them) while legacy tokens are not (their secret
/// and service account are unknown to the test API server, and no request is made for
/// them). Without the kubeconfig, both are trusted, as documented, and a startup warning
/// says so.
#[test]
fn service_account_lookup_false_still_checks_bound_tokens() {
    if !have_pyjwt() {
        return;
    }
    const ISSUER: &str = "https://issuer.example";
    const WARNING: &str = "bound service-account tokens are not checked against the API server";
    let keys = tempfile::tempdir().unwrap();
    let (_rt, pki, api) = scripted_https(webhook_server::builder_api);
    let kubeconfig = webhook_server::lookup_kubeconfig(keys.path(), &api.url(""), &pki.ca_pem);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let bound = |sa: &str, sa_uid: &str, pod: &str, pod_uid: &str| {
        json!({
            "aud": [ISSUER], "exp": now + 3600, "iat": now, "nbf": now, "iss": ISSUER,
            "jti": format!("jti-{sa}-{pod}-{pod_uid}"),
            "sub": format!("system:serviceaccount:ns1:{sa}"),
            "kubernetes.io": {
                "namespace": "ns1",
                "serviceaccount": {"name": sa, "uid": sa_uid},
                "pod": {"name": pod, "uid": pod_uid},
            },
        })
    };
    let legacy = json!({
        "iss": "kubernetes/serviceaccount",
        "sub": "system:serviceaccount:ns2:deployer",
        "kubernetes.io/serviceaccount/namespace": "ns2",
        "kubernetes.io/serviceaccount/secret.name": "deployer-token-x2x9z",
        "kubernetes.io/serviceaccount/service-account.name": "deployer",
        "kubernetes.io/serviceaccount/service-account.uid": "uid-deployer",
    });
    // (case, claims, status with the kubeconfig, status without it)
    let cases: [(&str, Value, u16, u16); 5] = [
        (
            "bound: service account and pod exist",
            bound("builder", "uid-builder", "builder-pod", "pod-uid-builder"),
            201,
            201,
        ),
        (
            "bound: pod deleted",
            bound("builder", "uid-builder", "gone-pod", "pod-uid-gone"),
            401,
            201,
        ),
        (
            "bound: pod recreated (UID differs)",
            bound("builder", "uid-builder", "builder-pod", "pod-uid-old"),
            401,
            201,
        ),
        (
            "bound: service account deleted",
            bound("ghost", "uid-ghost", "builder-pod", "pod-uid-builder"),
            401,
            201,
        ),
        (
            "legacy: secret and service account unknown to the API server",
            legacy,
            201,
            201,
        ),
    ];
    let requests: Vec<Value> = cases
        .iter()
        .map(|(_, claims, _, _)| json!({"key": "rsa", "alg": "RS256", "claims": claims}))
        .collect();
    let tokens = mint(keys.path(), &Value::Array(requests));
    assert_eq!(tokens.len(), cases.len());
    let base = vec![
        format!(
            "--service-account-key-file={}",
            keys.path().join("rsa_pub.pem").display()
        ),
        format!("--service-account-issuer={ISSUER}"),
        "--service-account-lookup=false".to_owned(),
    ];
    let mut with_kubeconfig = base.clone();
    with_kubeconfig.push(format!(
        "--service-account-lookup-kubeconfig={}",
        kubeconfig.display()
    ));
    for (setup, args, has_kubeconfig) in [
        ("with the kubeconfig", with_kubeconfig, true),
        ("without a kubeconfig", base, false),
    ] {
        let server = Server::spawn(tempfile::tempdir().unwrap(), &args);
        for ((name, claims, with, without), token) in cases.iter().zip(&tokens) {
            let want = if has_kubeconfig { *with } else { *without };
            let calls = api.calls();
            let auth = format!("Authorization: Bearer {token}");
            let (code, body) = whoami_curl(&server, &["-H", &auth]);
            assert_eq!(code, want, "{setup}, {name}: {body}\n{}", server.log());
            let looked_up = api.calls() > calls;
            let is_bound = claims["iss"] == ISSUER;
            assert_eq!(
                looked_up,
                has_kubeconfig && is_bound,
                "{setup}, {name}: API server asked: {looked_up}"
            );
        }
        if has_kubeconfig {
            assert!(
                !server.log().contains(WARNING),
                "{setup}:\n{}",
                server.log()
            );
        } else {
            server.wait_for_log(WARNING, 1, Duration::from_secs(10));
        }
    }
    drop(api);
}

/// `--experimental-keystone-url` / `--experimental-keystone-ca-file`: Basic credentials are
/// checked against an OpenStack Identity v3 endpoint (a test-only one implementing the
/// documented `POST /v3/auth/tokens` password method; `tests/keystone.rs` also runs Debian's
/// real Keystone against the library).
#[test]
fn keystone_flags_check_basic_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, pki, keystone) = scripted_https(|req, _| {
        use webhook_server::Reply;
        let v: Value = serde_json::from_slice(&req.body).unwrap_or_default();
        let user = &v["auth"]["identity"]["password"]["user"];
        if req.uri == "/v3/auth/tokens?nocatalog"
            && user["name"] == "kuser"
            && user["password"] == "kpass"
        {
            Reply::Http(
                201,
                vec![("x-subject-token", "t".into())],
                br#"{"token":{"methods":["password"]}}"#.to_vec(),
            )
        } else {
            Reply::json(
                401,
                json!({"error": {"code": 401, "title": "Unauthorized"}}),
            )
        }
    });
    let ca = dir.path().join("keystone-ca.crt");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let args = vec![
        format!("--experimental-keystone-url={}", keystone.url("")),
        format!("--experimental-keystone-ca-file={}", ca.display()),
    ];
    let server = Server::spawn(dir, &args);
    let cases: [(&str, &str, u16); 3] = [
        ("right password", "kuser:kpass", 201),
        ("wrong password", "kuser:nope", 401),
        ("unknown user", "other:kpass", 401),
    ];
    for (name, creds, want) in cases {
        let (code, body) = whoami_curl(&server, &["-u", creds]);
        assert_eq!(code, want, "{name}: {body}\n{}", server.log());
        if want == 201 {
            assert_eq!(body["status"]["userInfo"]["username"], "kuser", "{name}");
        }
    }
    assert_eq!(keystone.calls(), 3);
    assert!(
        !server.log().contains("kpass"),
        "a password reached the log"
    );
    assert_startup_errors(
        tempfile::tempdir().unwrap().path(),
        &[(
            "keystone over plain http",
            vec!["--experimental-keystone-url=http://127.0.0.1:5000".to_string()],
            "Auth URL should be secure and start with https",
        )],
    );
}

/// `--oidc-*` and `--authentication-config`: an OpenID issuer (a test-only HTTPS server on
/// 127.0.0.1 serving a discovery document and a JWKS; `tests/oidc_provider.rs` runs the real npm
/// `oidc-provider` against the library) and ID tokens minted by PyJWT. Discovery runs in the
/// background, so the first requests may see `oidc: authenticator not initialized`.
#[test]
fn oidc_flags_and_authentication_config() {
    if !have_pyjwt() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let jwks_path = dir.path().join("jwks.json");
    let issuer = Arc::new(Mutex::new(String::new()));
    let (jwks, iss) = (jwks_path.clone(), issuer.clone());
    let (_rt, pki, provider) = scripted_https(move |req, _| {
        use webhook_server::Reply;
        let issuer = iss.lock().unwrap().clone();
        match req.uri.as_str() {
            "/.well-known/openid-configuration" => Reply::json(
                200,
                json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                           "id_token_signing_alg_values_supported": ["RS256"]}),
            ),
            "/jwks" => Reply::Http(
                200,
                vec![("content-type", "application/json".into())],
                std::fs::read(&jwks).unwrap_or_default(),
            ),
            _ => Reply::json(404, json!({})),
        }
    });
    let url = provider.url("");
    *issuer.lock().unwrap() = url.clone();
    let ca = dir.path().join("issuer-ca.crt");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = |aud: &str, exp: u64| {
        json!({"iss": url, "aud": aud, "sub": "alice", "email": "alice@example.com",
               "email_verified": true, "tier": "gold", "groups": ["dev", "ops"], "iat": now, "exp": exp})
    };
    type Case<'a> = (&'a str, &'a str, Value, Option<(&'a str, &'a [&'a str])>);
    let cases: [Case<'_>; 4] = [
        (
            "valid",
            "rsa",
            claims("kube", now + 3600),
            Some(("alice", &["dev", "ops"])),
        ),
        ("another audience", "rsa", claims("other", now + 3600), None),
        ("expired", "rsa", claims("kube", now - 60), None),
        (
            "signed by a key the issuer does not publish",
            "rogue",
            claims("kube", now + 3600),
            None,
        ),
    ];
    let requests: Vec<Value> = cases
        .iter()
        .map(|(_, key, c, _)| json!({"key": key, "alg": "RS256", "claims": c}))
        .collect();
    let tokens = mint(dir.path(), &Value::Array(requests));
    // Waits out the background discovery, then checks the outcome.
    let check = |server: &Server, name: &str, token: &str, want: Option<(String, Vec<String>)>| {
        let auth = format!("Authorization: Bearer {token}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let not_initialized = |s: &Server| {
            s.log()
                .matches("oidc: authenticator not initialized")
                .count()
        };
        loop {
            // Only this request's refusal counts: an earlier "not initialized" in the log
            // (a slow discovery on a busy machine) must not make every later 401 look like one.
            let before = not_initialized(server);
            let (code, body) = whoami_curl(server, &["-H", &auth]);
            let initialising = code == 401 && {
                // The log is read from the server's stderr by another thread.
                std::thread::sleep(Duration::from_millis(100));
                not_initialized(server) > before
            };
            match &want {
                Some((user, groups)) if code == 201 => {
                    assert_eq!(body["status"]["userInfo"]["username"], *user, "{name}");
                    assert_eq!(
                        body["status"]["userInfo"]["groups"],
                        json!(groups),
                        "{name}"
                    );
                    return;
                }
                None if code == 401 && !initialising => return,
                _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(200)),
                _ => panic!("{name}: {code} {body}\n{}", server.log()),
            }
        }
    };
    // The flags: user names prefixed with the issuer URL (claim `sub`), groups with `oidc:`.
    let flags = vec![
        format!("--oidc-issuer-url={url}"),
        "--oidc-client-id=kube".into(),
        format!("--oidc-ca-file={}", ca.display()),
        "--oidc-groups-claim=groups".into(),
        "--oidc-groups-prefix=oidc:".into(),
        "--oidc-required-claim=tier=gold".into(),
    ];
    let server = Server::spawn(tempfile::tempdir().unwrap(), &flags);
    for ((name, _, _, want), token) in cases.iter().zip(&tokens) {
        let want = want.map(|(u, g)| {
            (
                format!("{url}#{u}"),
                g.iter()
                    .map(|g| format!("oidc:{g}"))
                    .chain(["system:authenticated".to_string()])
                    .collect(),
            )
        });
        check(&server, name, token, want);
    }
    // kube-apiserver's JWT authenticator metrics, read by the OIDC user itself (one more
    // success): latency by result for this issuer, and the JWKS fetch labelled with the
    // server's identity (kube-apiserver's scheme over this host's name, identity `kube-authn`).
    let text = server.metrics_text(&tokens[0]);
    let sha = |s: &str| kube_authn::token::oidc::metrics::hash_label(s);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let api_hash = sha(&kube_authn::token::oidc::metrics::apiserver_id(
        host.trim_end_matches('\n'),
        "kube-authn",
    ));
    let value = |prefix: String| -> f64 {
        let line = text.lines().find_map(|l| l.strip_prefix(&prefix));
        line.unwrap_or_else(|| panic!("no {prefix}\n{text}"))
            .trim()
            .parse()
            .unwrap()
    };
    let latency = "apiserver_authentication_jwt_authenticator_latency_seconds_count";
    // Exactly two successes ("valid" and this read); at least the three refusals (requests
    // that met the authenticator before discovery finished are failures too).
    assert_eq!(
        value(format!(
            "{latency}{{jwt_issuer_hash=\"{}\",result=\"success\"}} ",
            sha(&url)
        )),
        2.0
    );
    assert!(
        value(format!(
            "{latency}{{jwt_issuer_hash=\"{}\",result=\"failure\"}} ",
            sha(&url)
        )) >= 3.0
    );
    let jwks_text = String::from_utf8(std::fs::read(&jwks_path).unwrap()).unwrap();
    assert_eq!(
        value(format!(
            "apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info{{apiserver_id_hash=\"{api_hash}\",hash=\"{}\",jwt_issuer_hash=\"{}\"}} ",
            sha(&jwks_text),
            sha(&url)
        )),
        1.0
    );
    let fetched_at = value(format!(
        "apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds{{apiserver_id_hash=\"{api_hash}\",jwt_issuer_hash=\"{}\",result=\"success\"}} ",
        sha(&url)
    ));
    assert!(
        (now as f64 - 60.0..=now as f64 + 600.0).contains(&fetched_at),
        "{fetched_at}"
    );
    drop(server);
    // `--oidc-username-prefix=-` with the `email` claim: the bare address (without the `-`
    // rule the name would be `-alice@example.com`); no groups claim, so no groups from the token.
    let email_flags = [
        &flags[..3],
        &[
            "--oidc-username-claim=email".into(),
            "--oidc-username-prefix=-".into(),
        ],
    ]
    .concat();
    let server = Server::spawn(tempfile::tempdir().unwrap(), &email_flags);
    let want = (
        "alice@example.com".into(),
        vec!["system:authenticated".into()],
    );
    check(&server, "email claim, prefix '-'", &tokens[0], Some(want));
    drop(server);
    // The same issuer from an AuthenticationConfiguration file: the `email` claim, a prefix.
    let config = dir.path().join("authn.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: {url}\n    audiences: [kube]\n    certificateAuthority: |\n{}  claimMappings:\n    username:\n      claim: email\n      prefix: \"cfg:\"\n    groups:\n      claim: groups\n      prefix: \"\"\n",
            pki.ca_pem.lines().map(|l| format!("      {l}\n")).collect::<String>()
        ),
    )
    .unwrap();
    let server = Server::spawn(
        tempfile::tempdir().unwrap(),
        &[format!("--authentication-config={}", config.display())],
    );
    check(
        &server,
        "valid, from the file",
        &tokens[0],
        Some((
            "cfg:alice@example.com".into(),
            vec!["dev".into(), "ops".into(), "system:authenticated".into()],
        )),
    );
    check(&server, "another audience, from the file", &tokens[1], None);
    // kube-apiserver reloads the file when it changes: a new prefix takes effect without a
    // restart, and the reload is counted, with the new text's hash as the configuration in
    // effect.
    let reloaded = std::fs::read_to_string(&config)
        .unwrap()
        .replace("prefix: \"cfg:\"", "prefix: \"reloaded:\"");
    assert!(reloaded.contains("reloaded:"));
    // Atomically: a file rewritten in place may be read half-written (a failed attempt).
    let tmp = dir.path().join("authn.yaml.tmp");
    std::fs::write(&tmp, &reloaded).unwrap();
    std::fs::rename(&tmp, &config).unwrap();
    let auth = format!("Authorization: Bearer {}", tokens[0]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, body) = whoami_curl(&server, &["-H", &auth]);
        assert_eq!(code, 201, "{body}");
        match body["status"]["userInfo"]["username"].as_str() {
            Some("reloaded:alice@example.com") => break,
            Some("cfg:alice@example.com") if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200))
            }
            other => panic!("after the reload: {other:?}\n{}", server.log()),
        }
    }
    let text = server.metrics_text(&tokens[0]);
    let api_hash = sha(&kube_authn::token::oidc::metrics::apiserver_id(
        host.trim_end_matches('\n'),
        "kube-authn",
    ));
    for line in [
        format!(
            "apiserver_authentication_config_controller_automatic_reloads_total{{apiserver_id_hash=\"{api_hash}\",status=\"success\"}} 1\n"
        ),
        format!(
            "apiserver_authentication_config_controller_last_config_info{{apiserver_id_hash=\"{api_hash}\",hash=\"{}\"}} 1\n",
            sha(&reloaded)
        ),
    ] {
        assert!(text.contains(&line), "{line}\n{text}");
    }
    assert!(server.log().contains("reloaded authentication config"));
    let log = server.log();
    for token in &tokens {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!log.contains(signature), "a token reached the log:\n{log}");
    }
    drop(server);
    assert_startup_errors(
        dir.path(),
        &[
            (
                "flags and file together",
                vec![
                    format!("--oidc-issuer-url={url}"),
                    "--oidc-client-id=kube".into(),
                    format!("--authentication-config={}", config.display()),
                ],
                "authentication-config file and oidc-* flags are mutually exclusive",
            ),
            (
                "a flag given with its default value and the file (pflag's Changed)",
                vec![
                    "--oidc-username-claim=sub".to_string(),
                    format!("--authentication-config={}", config.display()),
                ],
                "authentication-config file and oidc-* flags are mutually exclusive",
            ),
            (
                "client id without issuer",
                vec!["--oidc-client-id=kube".to_string()],
                "oidc-issuer-url and oidc-client-id must be specified together",
            ),
            (
                "a default-valued flag alone still asks for issuer and client id",
                vec!["--oidc-signing-algs=RS256".to_string()],
                "oidc-issuer-url and oidc-client-id must be specified together",
            ),
            (
                "plain http issuer",
                vec![
                    "--oidc-issuer-url=http://127.0.0.1:1".to_string(),
                    "--oidc-client-id=kube".into(),
                ],
                "URL scheme must be https",
            ),
            (
                "required claim without =",
                vec!["--oidc-required-claim=nope".to_string()],
                "malformed pair, expect string=string",
            ),
        ],
    );
}

#[test]
fn anonymous_section_of_the_authentication_config() {
    // `anonymous` in --authentication-config, instead of --anonymous-auth: anonymous requests
    // only on /livez; everywhere else a request without credentials is refused.
    let dir = tempfile::tempdir().unwrap();
    let head = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
    let file = dir.path().join("authn.yaml");
    std::fs::write(
        &file,
        format!("{head}anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n"),
    )
    .unwrap();
    let errors = dir.path().join("errors");
    std::fs::create_dir(&errors).unwrap();
    let conflict = errors.join("conflict.yaml");
    std::fs::write(&conflict, format!("{head}anonymous:\n  enabled: false\n")).unwrap();
    let invalid = errors.join("invalid.yaml");
    std::fs::write(
        &invalid,
        format!("{head}anonymous:\n  conditions:\n  - path: /livez\n"),
    )
    .unwrap();
    // The flag beside the section is refused before the file is validated (kube-apiserver's
    // order): also when the section or a `jwt` entry is invalid.
    let conflict_and_invalid = errors.join("conflict-and-invalid.yaml");
    std::fs::write(
        &conflict_and_invalid,
        format!(
            "{head}anonymous:\n  enabled: false\n  conditions:\n  - path: /livez\njwt:\n- issuer: {{url: \"http://not-https.example\", audiences: [a]}}\n  claimMappings: {{username: {{claim: sub, prefix: \"\"}}}}\n"
        ),
    )
    .unwrap();
    const FORBIDDEN: &str = "anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file";
    type Case = (&'static str, Vec<String>, &'static str);
    let cases: Vec<Case> = vec![
        (
            "the section and --anonymous-auth",
            vec![
                format!("--authentication-config={}", conflict.display()),
                "--anonymous-auth=true".into(),
            ],
            FORBIDDEN,
        ),
        (
            "the flag beside an invalid section and an invalid jwt entry",
            vec![
                format!("--authentication-config={}", conflict_and_invalid.display()),
                "--anonymous-auth=false".into(),
            ],
            FORBIDDEN,
        ),
        (
            "conditions without enabled",
            vec![format!("--authentication-config={}", invalid.display())],
            "enabled should be set to true when conditions are defined",
        ),
    ];
    assert_startup_errors(&errors, &cases);

    let args = [format!("--authentication-config={}", file.display())];
    let server = Server::spawn(dir, &args);
    let table = [
        ("/livez", 200, "ok"),
        ("/readyz", 401, ""),
        ("/healthz", 401, ""),
    ];
    for (path, want_code, want_body) in table {
        let (body, code, _) = server.curl(&[&server.url(path)]);
        assert_eq!(code, want_code, "{path}: {body}");
        if want_code == 200 {
            assert_eq!(body, want_body, "{path}");
        }
    }
    let (code, review) = whoami_curl(&server, &[]);
    assert_eq!(code, 401, "{review}");
}

#[test]
fn service_account_startup_errors() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("sa.pub");
    std::fs::write(
        &key,
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n",
    )
    .unwrap();
    let key_flag = format!("--service-account-key-file={}", key.display());
    type Case = (&'static str, Vec<String>, &'static str);
    let cases: Vec<Case> = vec![
        (
            "lookup left at its default",
            vec![
                key_flag.clone(),
                "--service-account-issuer=https://i".into(),
            ],
            "set --service-account-lookup=false",
        ),
        (
            "lookup kubeconfig that does not exist",
            vec![
                key_flag.clone(),
                "--service-account-issuer=https://i".into(),
                "--service-account-lookup-kubeconfig=/nonexistent/kubeconfig".into(),
            ],
            "--service-account-lookup-kubeconfig: ",
        ),
        (
            "keys without an issuer",
            vec![key_flag.clone(), "--service-account-lookup=false".into()],
            "service-account-issuer is a required flag",
        ),
        (
            "issuer without keys",
            vec!["--service-account-issuer=https://i".into()],
            "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set",
        ),
        (
            "duplicate issuer",
            vec![
                key_flag.clone(),
                "--service-account-lookup=false".into(),
                "--service-account-issuer=https://i".into(),
                "--service-account-issuer=https://i".into(),
            ],
            r#"service-account-issuer "https://i" is already specified"#,
        ),
        (
            "missing key file",
            vec![
                "--service-account-key-file=/nonexistent/sa.pub".into(),
                "--service-account-issuer=https://i".into(),
                "--service-account-lookup=false".into(),
            ],
            "error reading public key file /nonexistent/sa.pub",
        ),
        (
            // pflag keeps the empty value, and kube-apiserver fails to open it
            // (`open : no such file or directory`); not clap's "needs an argument".
            "empty key file",
            vec![
                "--service-account-key-file=".into(),
                "--service-account-issuer=https://i".into(),
                "--service-account-lookup=false".into(),
            ],
            "error reading public key file : No such file or directory",
        ),
        (
            "empty key file after a valid one",
            vec![
                key_flag.clone(),
                "--service-account-key-file=".into(),
                "--service-account-issuer=https://i".into(),
                "--service-account-lookup=false".into(),
            ],
            "error reading public key file : No such file or directory",
        ),
    ];
    assert_startup_errors(dir.path(), &cases);
}

/// The startup-error cases expect no API server to be found, so they must not depend on the
/// pod the tests run in: `service_account_startup_errors` runs again in a child test process
/// with the in-cluster environment set (`KUBERNETES_SERVICE_HOST`/`_PORT`, as in a CI pod),
/// which the shared test support clears for the servers it starts.
#[test]
fn startup_errors_do_not_depend_on_the_pod_the_tests_run_in() {
    let cases: [(&str, &[(&str, &str)]); 2] = [
        ("outside a pod", &[]),
        (
            "inside a pod",
            &[
                ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
                ("KUBERNETES_SERVICE_PORT", "443"),
            ],
        ),
    ];
    for (name, env) in cases {
        let mut test = Command::new(std::env::current_exe().unwrap());
        test.args(["--exact", "service_account_startup_errors", "--nocapture"])
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("KUBERNETES_SERVICE_PORT")
            .envs(env.iter().copied());
        let out = test.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "case {name}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Documentation.

#[test]
fn readme_flag_table_matches_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-authn"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let in_help: std::collections::BTreeSet<String> = help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .map(|l| {
            let end = l
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(l.len());
            format!("--{}", &l[..end])
        })
        .filter(|f| f != "--help")
        .collect();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = readme
        .split("### Supported flags")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README has a flag table");
    let in_readme: std::collections::BTreeSet<String> = table
        .lines()
        .filter(|l| l.starts_with("| `--"))
        .flat_map(|l| {
            let first = l.split('|').nth(1).unwrap_or_default();
            first
                .split('`')
                .filter(|s| s.starts_with("--"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        in_help, in_readme,
        "README's flag table and `serve --help` disagree"
    );
}
