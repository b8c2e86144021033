//! The TokenReview webhook against a TLS TokenReview server on 127.0.0.1 (test-only server:
//! no real TokenReview backend runs here except kube-authn itself; hyper + rustls, real TLS).
//! Vectors from kube-apiserver's `webhook_v1_test.go` / `webhook_v1beta1_test.go`.
#![cfg(feature = "remote")]

mod log_support;
mod webhook_server;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube_authn::ErrorKind;
use kube_authn::authenticator::{Audiences, AuthResult, Context, TokenAuthenticator};
use kube_authn::outbound::vault::{SyncProvider, Vault};
use kube_authn::outbound::{BearerToken, ConnectionInfo, Pem, Secret};
use kube_authn::token::webhook::{
    Backoff, Sleeper, Version, WebhookOptions, WebhookTokenAuthenticator,
};
use log_support::capture_logs;
use serde_json::json;
use webhook_server::{H2Fault, Pki, RawFault, Reply, Seen, Server};

const TOKEN: &str = "my-s3cr3t-t0ken";

/// Records the retry delays instead of sleeping.
#[derive(Default)]
struct RecordingSleeper(Mutex<Vec<Duration>>);

impl Sleeper for RecordingSleeper {
    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.0.lock().unwrap().push(d);
        Box::pin(async {})
    }
}

fn opts(version: Version, sleeper: Arc<RecordingSleeper>) -> WebhookOptions {
    let mut o = WebhookOptions::default();
    o.version = version;
    o.sleeper = sleeper;
    o
}

fn info_for(pki: &Pki, url: String) -> ConnectionInfo {
    ConnectionInfo::new(url)
        .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
        .with_client_cert(
            Pem::Data(pki.client_cert_pem.clone().into_bytes()),
            Pem::Data(pki.client_key_pem.clone().into_bytes()),
        )
        .with_trust_env(false)
}

fn webhook(info: ConnectionInfo, o: WebhookOptions) -> WebhookTokenAuthenticator {
    WebhookTokenAuthenticator::new(Vault::from_info(info), o).unwrap()
}

fn allow(name: &str) -> Reply {
    Reply::json(
        200,
        json!({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":name}}}),
    )
}

fn name(r: &AuthResult) -> Option<String> {
    r.as_ref()
        .ok()
        .and_then(|o| o.as_ref())
        .map(|r| r.user.name().to_owned())
}

/// `TestV1WebhookTokenAuthenticator` (and the v1beta1 twin): mutual TLS, kubeconfig loader.
#[tokio::test]
async fn kubernetes_vectors_over_mutual_tls_from_a_kubeconfig() {
    let pki = Pki::new();
    let status = Arc::new(Mutex::new(json!({})));
    let st = status.clone();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, Some(&pki.client_ca_pem), move |req, _| {
        let v = req.json();
        Reply::json(200, json!({"apiVersion": v["apiVersion"], "kind":"TokenReview","status": st.lock().unwrap().clone()}))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    std::fs::write(dir.path().join("client.pem"), &pki.client_cert_pem).unwrap();
    std::fs::write(dir.path().join("client-key.pem"), &pki.client_key_pem).unwrap();
    let kubeconfig = dir.path().join("webhook.kubeconfig");
    // Unnamed entries and no context, exactly as kube-apiserver's own webhook tests write them.
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: {}\n    certificate-authority: ca.pem\nusers:\n- user:\n    client-certificate: client.pem\n    client-key: client-key.pem\n",
            server.url("/tokenreview")
        ),
    )
    .unwrap();

    type Want = Result<Option<(&'static str, &'static [&'static str])>, &'static str>;
    let full = json!({"authenticated":true,"user":{"username":"person@place.com","uid":"abcd-1234","groups":["stuff-dev","main-eng"],"extra":{"foo":["bar","baz"]}}});
    /// (name, implicit audiences, ctx audiences, server status, expected)
    type VectorCase = (
        &'static str,
        &'static [&'static str],
        Option<&'static [&'static str]>,
        serde_json::Value,
        Want,
    );
    let two_kib: &'static str = "x".repeat(2048).leak();
    let cases: Vec<VectorCase> = vec![
        (
            "simple",
            &[],
            None,
            json!({"authenticated":true,"user":{"username":"somebody"}}),
            Ok(Some(("somebody", &[]))),
        ),
        (
            "all fields",
            &[],
            None,
            full,
            Ok(Some(("person@place.com", &[]))),
        ),
        (
            "denied with garbage user",
            &[],
            None,
            json!({"authenticated":false,"user":{"username":"garbage","uid":"abcd-1234"}}),
            Ok(None),
        ),
        (
            "denied",
            &[],
            None,
            json!({"authenticated":false}),
            Ok(None),
        ),
        (
            "audiences: implicit",
            &["api"],
            Some(&["api"]),
            json!({"authenticated":true,"user":{"username":"somebody"}}),
            Ok(Some(("somebody", &["api"]))),
        ),
        (
            "audiences: implicit superset",
            &["api", "other"],
            Some(&["api"]),
            json!({"authenticated":true,"user":{"username":"somebody"}}),
            Ok(Some(("somebody", &["api"]))),
        ),
        (
            "audiences: mismatch denied",
            &["api"],
            Some(&["other"]),
            json!({"authenticated":false}),
            Ok(None),
        ),
        (
            "audiences: audience-unaware backend",
            &["api"],
            Some(&["other"]),
            json!({"authenticated":true,"user":{"username":"somebody"}}),
            Ok(None),
        ),
        (
            "audiences: explicit match",
            &["api"],
            Some(&["api"]),
            json!({"authenticated":true,"user":{"username":"somebody"},"audiences":["api"]}),
            Ok(Some(("somebody", &["api"]))),
        ),
        (
            "audiences: none in ctx, no check",
            &[],
            None,
            json!({"authenticated":true,"user":{"username":"somebody"},"audiences":["api"]}),
            Ok(Some(("somebody", &[]))),
        ),
        (
            "audiences: explicit mismatch",
            &["api"],
            Some(&["api"]),
            json!({"authenticated":true,"user":{"username":"somebody"},"audiences":["other"]}),
            Ok(None),
        ),
        (
            "audience mismatch wins over error",
            &["api"],
            Some(&["api"]),
            json!({"authenticated":false,"audiences":["other"],"error":"bad"}),
            Ok(None),
        ),
        (
            "error with authenticated false",
            &[],
            None,
            json!({"authenticated":false,"error":"token expired"}),
            Err("token expired"),
        ),
        // Deliberate differences (docs/compatibility.md): the backend's text reaches logs and
        // reviews, so it is bounded and cannot break lines.
        (
            "error text: control characters become spaces",
            &[],
            None,
            json!({"authenticated":false,"error":"token expired\nFAKE LOG LINE\r"}),
            Err("token expired FAKE LOG LINE "),
        ),
        (
            "error text: at most 2 KiB",
            &[],
            None,
            json!({"authenticated":false,"error":"x".repeat(100_000)}),
            Err(two_kib),
        ),
    ];
    for version in [Version::V1, Version::V1Beta1] {
        for (name, implicit, ctx_auds, resp, want) in &cases {
            *status.lock().unwrap() = resp.clone();
            let mut o = opts(version, Arc::default());
            o.implicit_audiences = Audiences::new(*implicit);
            let w = WebhookTokenAuthenticator::from_kubeconfig(&kubeconfig, o).unwrap();
            let ctx = match ctx_auds {
                Some(a) => Context::with_audiences(Audiences::new(*a)),
                None => Context::default(),
            };
            let got = w.authenticate_token(TOKEN, &ctx).await;
            let seen = server.last();
            let body = seen.json();
            assert_eq!(
                body["apiVersion"],
                format!("authentication.k8s.io/{}", version.as_str()),
                "{name}"
            );
            assert_eq!(body["kind"], "TokenReview", "{name}");
            assert_eq!(body["spec"]["token"], TOKEN, "{name}");
            match ctx_auds {
                Some(a) => assert_eq!(body["spec"]["audiences"], json!(a), "{name}"),
                None => assert!(body["spec"].get("audiences").is_none(), "{name}"),
            }
            assert_eq!(seen.method, "POST");
            assert_eq!(
                seen.uri, "/tokenreview?timeout=30s",
                "as client-go's REST client"
            );
            assert_eq!(seen.headers["content-type"], "application/json");
            assert_eq!(seen.headers["accept"], "application/json, */*");
            match (want, got) {
                (Ok(None), Ok(None)) => {}
                (Ok(Some((user, auds))), Ok(Some(r))) => {
                    assert_eq!(r.user.name(), *user, "{name}");
                    assert_eq!(r.audiences.iter().collect::<Vec<_>>(), *auds, "{name}");
                    if *name == "all fields" {
                        assert_eq!(r.user.uid(), "abcd-1234");
                        assert_eq!(
                            r.user.groups().collect::<Vec<_>>(),
                            ["stuff-dev", "main-eng"]
                        );
                        assert_eq!(r.user.extra()["foo"], ["bar", "baz"]);
                    }
                }
                (Err(text), Err(e)) => assert_eq!(e.to_string(), *text, "{name}"),
                (want, got) => panic!("{name} ({version:?}): want {want:?}, got {got:?}"),
            }
        }
    }
}

/// `TestV1WebhookCacheAndRetry`: the cached webhook, 2400 h TTL, counted backend calls.
#[tokio::test]
async fn cache_and_retry_sequence_from_kubernetes() {
    let pki = Pki::new();
    let code = Arc::new(Mutex::new(200u16));
    let c = code.clone();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        move |_, _| match *c.lock().unwrap() {
            200 => allow("fake"),
            other => Reply::Http(other, vec![], vec![]),
        },
    )
    .await;
    let sleeper = Arc::new(RecordingSleeper::default());
    let mut o = opts(Version::V1, sleeper.clone());
    o.backoff = Backoff {
        initial: Duration::from_millis(5),
        factor: 1.5,
        jitter: 0.2,
        steps: 5,
    };
    let ttl = Duration::from_secs(2400 * 3600);
    let w = webhook(info_for(&pki, server.url("/")), o).cached(ttl);
    let ctx = Context::default();
    let steps: &[(&str, u16, bool, usize)] = &[
        ("t0k3n", 500, false, 5),
        ("t0k3n", 404, false, 1),
        ("t0k3n", 200, true, 1),
        ("t0k3n", 500, true, 0),
        ("an0th3r_t0k3n", 500, false, 5),
        ("an0th3r_t0k3n", 429, false, 5),
        ("an0th3r_t0k3n", 200, true, 1),
        ("an0th3r_t0k3n", 500, true, 0),
    ];
    for (i, (token, status, ok, calls)) in steps.iter().enumerate() {
        *code.lock().unwrap() = *status;
        let before = server.calls();
        let got = w.authenticate_token(token, &ctx).await;
        assert_eq!(got.is_ok(), *ok, "step {i}: {got:?}");
        assert_eq!(server.calls() - before, *calls, "step {i}: backend calls");
    }
    // 5 attempts sleep 4 times: 5, 7.5, 11.25, 16.875 ms, each plus up to 20 % jitter.
    let delays = sleeper.0.lock().unwrap().clone();
    let base = [5.0, 7.5, 11.25, 16.875];
    for (j, d) in delays[..4].iter().enumerate() {
        let ms = d.as_secs_f64() * 1000.0;
        assert!(
            ms >= base[j] - 0.001 && ms <= base[j] * 1.2 + 0.001,
            "delay {j}: {ms} ms"
        );
    }
}

/// Every fault has a defined outcome and a counted number of backend calls.
#[tokio::test]
async fn faults_have_defined_outcomes() {
    let pki = Pki::new();
    let other = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |_, _| {
        allow("elsewhere")
    })
    .await;
    let other_url = other.url("/stolen");

    type Script = Box<dyn Fn(&Seen, usize) -> Reply + Send + Sync>;
    struct Case {
        name: &'static str,
        script: Script,
        want_ok: Option<&'static str>,
        want_err: &'static str,
        calls: usize,
        sleeps: usize,
    }
    let html = "<html><body>login</body></html>".to_string();
    let cases = vec![
        Case {
            name: "500 then 200",
            script: Box::new(|_, n| {
                if n < 2 {
                    Reply::Http(500, vec![], vec![])
                } else {
                    allow("late")
                }
            }),
            want_ok: Some("late"),
            want_err: "",
            calls: 3,
            sleeps: 2,
        },
        Case {
            name: "404 not retried",
            script: Box::new(|_, _| Reply::Http(404, vec![], vec![])),
            want_ok: None,
            want_err: "the server could not find the requested resource",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "400 not retried",
            script: Box::new(|_, _| Reply::Http(400, vec![], vec![])),
            want_ok: None,
            want_err: "the server rejected our request for an unknown reason",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "503 without Retry-After not retried",
            script: Box::new(|_, _| Reply::Http(503, vec![], vec![])),
            want_ok: None,
            want_err: "the server is currently unable to handle the request",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "503, Retry-After: 0: not retried (SuggestsClientDelay wants > 0)",
            script: Box::new(|_, _| Reply::Http(503, vec![("retry-after", "0".into())], vec![])),
            want_ok: None,
            want_err: "the server is currently unable to handle the request",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "207 with an authenticated review is an error (client-go: 200..=206 only)",
            script: Box::new(|_, _| {
                Reply::Http(
                    207,
                    vec![("content-type", "application/json".into())],
                    br#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":"multi"}}}"#.to_vec(),
                )
            }),
            want_ok: None,
            want_err: "the server responded with the status code 207 but did not return more information",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "503 with Retry-After retried",
            script: Box::new(|_, n| {
                if n == 0 {
                    Reply::Http(503, vec![("retry-after", "2".into())], vec![])
                } else {
                    allow("patient")
                }
            }),
            want_ok: Some("patient"),
            want_err: "",
            calls: 2,
            sleeps: 1,
        },
        Case {
            name: "429 with Retry-After",
            script: Box::new(|_, n| {
                if n == 0 {
                    Reply::Http(429, vec![("retry-after", "3".into())], vec![])
                } else {
                    allow("throttled")
                }
            }),
            want_ok: Some("throttled"),
            want_err: "",
            calls: 2,
            sleeps: 1,
        },
        Case {
            name: "429 always",
            script: Box::new(|_, _| Reply::Http(429, vec![], vec![])),
            want_ok: None,
            want_err: "the server has received too many requests and has asked us to try again later",
            calls: 5,
            sleeps: 4,
        },
        Case {
            name: "504 retried",
            script: Box::new(|_, _| Reply::Http(504, vec![], vec![])),
            want_ok: None,
            want_err: "the server was unable to return a response in the time allotted, but may still be processing the request",
            calls: 5,
            sleeps: 4,
        },
        Case {
            name: "500 text body",
            script: Box::new(|_, _| {
                Reply::Http(
                    500,
                    vec![("content-type", "text/plain".into())],
                    b"HTTP Error".to_vec(),
                )
            }),
            want_ok: None,
            want_err: r#"an error on the server ("HTTP Error") has prevented the request from succeeding"#,
            calls: 5,
            sleeps: 4,
        },
        Case {
            name: "301 to another host not followed",
            script: {
                let u = other_url.clone();
                Box::new(move |_, _| Reply::Http(301, vec![("location", u.clone())], vec![]))
            },
            want_ok: None,
            want_err: "the server responded with the status code 301 but did not return more information",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "10 MB body capped",
            script: Box::new(|_, _| {
                Reply::Http(
                    200,
                    vec![("content-type", "application/json".into())],
                    vec![b' '; 10 << 20],
                )
            }),
            want_ok: None,
            want_err: "webhook response body is larger than 1048576 bytes",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "malformed JSON",
            script: Box::new(|_, _| {
                Reply::Http(
                    200,
                    vec![("content-type", "application/json".into())],
                    b"{\"status\": {\"authenticated\": tru".to_vec(),
                )
            }),
            want_ok: None,
            want_err: "webhook: cannot decode TokenReview response: truncated JSON",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "HTML 200",
            script: {
                let h = html.clone();
                Box::new(move |_, _| {
                    Reply::Http(
                        200,
                        vec![("content-type", "text/html".into())],
                        h.clone().into_bytes(),
                    )
                })
            },
            want_ok: None,
            want_err: "webhook: cannot decode TokenReview response: invalid JSON",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "empty 200",
            script: Box::new(|_, _| {
                Reply::Http(
                    200,
                    vec![("content-type", "application/json".into())],
                    vec![],
                )
            }),
            want_ok: None,
            want_err: "0-length response with status code: 200 and content type: application/json",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "connection closed without an answer: not retried (Go: EOF)",
            script: Box::new(|_, _| Reply::Close),
            want_ok: None,
            want_err: "",
            calls: 1,
            sleeps: 0,
        },
        Case {
            name: "backend echoing the token in an error",
            script: Box::new(|_, _| {
                Reply::json(
                    200,
                    json!({"status":{"authenticated":false,"error":format!("bad token {TOKEN}")}}),
                )
            }),
            want_ok: None,
            want_err: "bad token <redacted>",
            calls: 1,
            sleeps: 0,
        },
    ];
    for case in cases {
        let script = case.script;
        let server = Server::start(
            &pki.server_cert_pem,
            &pki.server_key_pem,
            Some(&pki.client_ca_pem),
            move |r, n| script(r, n),
        )
        .await;
        let sleeper = Arc::new(RecordingSleeper::default());
        let w = webhook(
            info_for(&pki, server.url("/review")),
            opts(Version::V1, sleeper.clone()),
        );
        let got = w.authenticate_token(TOKEN, &Context::default()).await;
        match case.want_ok {
            Some(user) => assert_eq!(name(&got).as_deref(), Some(user), "{}: {got:?}", case.name),
            None => {
                let e = got.expect_err(case.name);
                if !case.want_err.is_empty() {
                    assert_eq!(e.to_string(), case.want_err, "{}", case.name);
                }
                assert!(
                    !e.to_string().contains(TOKEN),
                    "{}: token leaked",
                    case.name
                );
                assert!(
                    !format!("{e:?}").contains(TOKEN),
                    "{}: token leaked in Debug",
                    case.name
                );
            }
        }
        assert_eq!(server.calls(), case.calls, "{}: backend calls", case.name);
        let sleeps = sleeper.0.lock().unwrap().clone();
        assert_eq!(
            sleeps.len(),
            case.sleeps,
            "{}: retry sleeps {sleeps:?}",
            case.name
        );
        if case.name.contains("with Retry-After") {
            let want = if case.name.starts_with("429") { 3 } else { 2 };
            assert!(
                sleeps[0] >= Duration::from_secs(want),
                "{}: Retry-After honoured: {sleeps:?}",
                case.name
            );
        }
    }
    assert_eq!(other.calls(), 0, "the redirect target was never contacted");
}

#[tokio::test]
async fn down_hanging_and_wrong_certificate() {
    let pki = Pki::new();
    // Down: nothing listens (dial error, not retried, as in k8s).
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let sleeper = Arc::new(RecordingSleeper::default());
    let w = webhook(
        info_for(&pki, format!("https://127.0.0.1:{port}/")),
        opts(Version::V1, sleeper.clone()),
    );
    let e = w
        .authenticate_token(TOKEN, &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert!(
        e.to_string()
            .starts_with(&format!("Post \"https://127.0.0.1:{port}/?timeout=30s\": ")),
        "{e}"
    );
    assert!(
        sleeper.0.lock().unwrap().is_empty(),
        "dial errors are not retried"
    );

    // Hanging: bounded by the whole-request deadline.
    let hang = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        |_, _| Reply::Hang,
    )
    .await;
    let mut o = opts(Version::V1, Arc::default());
    o.deadline = Duration::from_millis(400);
    let w = webhook(info_for(&pki, hang.url("/")), o);
    let start = Instant::now();
    let e = w
        .authenticate_token(TOKEN, &Context::default())
        .await
        .unwrap_err();
    let took = start.elapsed();
    assert_eq!(
        e.to_string(),
        "webhook authenticator request deadline exceeded"
    );
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert_eq!(hang.calls(), 1);

    // Wrong server certificate: the client trusts another CA. TLS errors are not retried.
    let good = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        |_, _| allow("x"),
    )
    .await;
    let stranger = Pki::new();
    let sleeper = Arc::new(RecordingSleeper::default());
    let mut info = info_for(&pki, good.url("/"));
    info.certificate_authority = Some(Pem::Data(stranger.ca_pem.into_bytes()));
    let w = webhook(info, opts(Version::V1, sleeper.clone()));
    let e = w
        .authenticate_token(TOKEN, &Context::default())
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("UnknownIssuer")
            || e.to_string().to_lowercase().contains("certificate"),
        "{e}"
    );
    assert_eq!(good.calls(), 0);
    assert!(sleeper.0.lock().unwrap().is_empty());

    // Server requires a client certificate and none is presented. Under TLS 1.3 the server's
    // alert arrives on the first read, after the client's handshake is done: still a TLS
    // error, not retried (Go's DefaultShouldRetry).
    let sleeper = Arc::new(RecordingSleeper::default());
    let w = webhook(
        ConnectionInfo::new(good.url("/"))
            .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
            .with_trust_env(false),
        opts(Version::V1, sleeper.clone()),
    );
    let e = w
        .authenticate_token(TOKEN, &Context::default())
        .await
        .unwrap_err();
    assert_eq!(good.calls(), 0);
    assert!(
        sleeper.0.lock().unwrap().is_empty(),
        "a refused client certificate is not retried: {e}"
    );

    // tls-server-name: the certificate is for "localhost"; verifying another name fails.
    let w = webhook(
        info_for(&pki, good.url("/")).with_tls_server_name("localhost"),
        opts(Version::V1, Arc::default()),
    );
    assert_eq!(
        name(&w.authenticate_token(TOKEN, &Context::default()).await).as_deref(),
        Some("x")
    );
    let w = webhook(
        info_for(&pki, good.url("/")).with_tls_server_name("evil.example"),
        opts(Version::V1, Arc::default()),
    );
    assert!(
        w.authenticate_token(TOKEN, &Context::default())
            .await
            .is_err()
    );
    assert_eq!(good.calls(), 1);
}

/// Bearer authentication to the webhook; the reviewed token travels only in the body; a
/// credential that starts getting 401 is replaced by the next, and never retried once bad.
#[tokio::test]
async fn bearer_credentials_rotate_on_401_without_looping() {
    let pki = Pki::new();
    let accepted = Arc::new(Mutex::new(vec!["cred-A".to_string(), "cred-B".to_string()]));
    let acc = accepted.clone();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        move |req, _| {
            let auth = req
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if acc
                .lock()
                .unwrap()
                .iter()
                .any(|t| auth == format!("Bearer {t}"))
            {
                allow(auth.trim_start_matches("Bearer "))
            } else {
                Reply::Http(401, vec![], vec![])
            }
        },
    )
    .await;
    let logins = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (l, url, ca) = (logins.clone(), server.url("/"), pki.ca_pem.clone());
    let vault = Vault::new(vec![Box::new(SyncProvider::new(move || {
        l.fetch_add(1, Ordering::SeqCst);
        Ok(["cred-A", "cred-B"]
            .iter()
            .map(|t| {
                ConnectionInfo::new(url.clone())
                    .with_ca(Pem::Data(ca.clone().into_bytes()))
                    .with_token(Secret::new(*t))
                    .with_trust_env(false)
            })
            .collect())
    }))]);
    let w = WebhookTokenAuthenticator::new(vault, opts(Version::V1, Arc::default())).unwrap();
    let ctx = Context::default();

    assert_eq!(
        name(&w.authenticate_token("review-1", &ctx).await).as_deref(),
        Some("cred-A")
    );
    assert_eq!(server.calls(), 1);
    let seen = server.last();
    assert!(!seen.uri.contains("review-1"), "token not in the URL");
    for (k, v) in &seen.headers {
        assert!(
            !v.to_str().unwrap_or("").contains("review-1"),
            "token not in header {k}"
        );
    }
    assert_eq!(seen.json()["spec"]["token"], "review-1");

    // cred-A revoked mid-run: one 401, then cred-B.
    accepted.lock().unwrap().retain(|t| t != "cred-A");
    assert_eq!(
        name(&w.authenticate_token("review-2", &ctx).await).as_deref(),
        Some("cred-B")
    );
    assert_eq!(server.calls(), 3);
    assert_eq!(
        name(&w.authenticate_token("review-3", &ctx).await).as_deref(),
        Some("cred-B")
    );
    assert_eq!(server.calls(), 4, "cred-A is not tried again");

    // Everything revoked: one 401 per review, then no backend call at all; no loop.
    accepted.lock().unwrap().clear();
    let e = w.authenticate_token("review-4", &ctx).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server has asked for the client to provide credentials"
    );
    assert_eq!(server.calls(), 5);
    let e = w.authenticate_token("review-5", &ctx).await.unwrap_err();
    assert!(
        e.to_string().starts_with("no valid credentials left"),
        "{e}"
    );
    assert_eq!(
        server.calls(),
        5,
        "known-bad credentials are not sent again"
    );
    assert!(
        logins.load(Ordering::SeqCst) <= 3,
        "providers asked only when the vault ran dry"
    );
}

/// A webhook backend that allows a review sent with `Bearer <current>` and answers 401 to any
/// other; `current` can be changed (the token rotates on the server).
async fn accepting_one_token(first: &str) -> (Pki, Server, Arc<Mutex<String>>) {
    let pki = Pki::new();
    let current = Arc::new(Mutex::new(first.to_string()));
    let cur = current.clone();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        move |req, _| {
            let want = format!("Bearer {}", cur.lock().unwrap());
            if req
                .headers
                .get("authorization")
                .is_some_and(|v| v == want.as_str())
            {
                allow("ok")
            } else {
                Reply::Http(401, vec![], vec![])
            }
        },
    )
    .await;
    (pki, server, current)
}

#[tokio::test]
async fn token_file_credential_rotates_from_the_kubeconfig() {
    let (pki, server, current) = accepting_one_token("sa-token-1").await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "sa-token-1\n").unwrap();
    let cfg = dir.path().join("kubeconfig");
    let ca_b64 = base64_encode(pki.ca_pem.as_bytes());
    std::fs::write(&cfg, format!("clusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca_b64}\nusers:\n- name: u\n  user:\n    tokenFile: token\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n", server.url("/"))).unwrap();
    let cached = WebhookTokenAuthenticator::from_flags(
        &cfg,
        "v1",
        Duration::ZERO,
        WebhookOptions::default(),
    )
    .unwrap();
    assert!(
        cached
            .authenticate_token("t1", &Context::default())
            .await
            .unwrap()
            .is_some()
    );
    // The token rotates on the server and then in the file.
    *current.lock().unwrap() = "sa-token-2-rotated".into();
    assert!(
        cached
            .authenticate_token("t2", &Context::default())
            .await
            .is_err()
    );
    std::fs::write(dir.path().join("token"), "sa-token-2-rotated\n").unwrap();
    assert!(
        cached
            .authenticate_token("t3", &Context::default())
            .await
            .unwrap()
            .is_some()
    );
}

/// kube-apiserver keeps a webhook's success for 10 s even with a shorter (or zero)
/// `--authentication-token-webhook-cache-ttl`: its 10 s success cache over the token union
/// holds it. Denials are kept for the webhook's TTL only (not at all with `0s`).
#[tokio::test]
async fn successes_are_kept_ten_seconds_whatever_the_webhook_ttl() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |req, _| {
        let token = req.json()["spec"]["token"].as_str().unwrap_or("").to_owned();
        if token.starts_with("good") {
            allow("alice")
        } else {
            Reply::json(
                200,
                json!({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":false}}),
            )
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("kubeconfig");
    let ca_b64 = base64_encode(pki.ca_pem.as_bytes());
    std::fs::write(&cfg, format!("clusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca_b64}\ncontexts:\n- name: x\n  context: {{cluster: c}}\ncurrent-context: x\n", server.url("/"))).unwrap();
    let ctx = Context::default();
    // (webhook TTL, token, backend calls after asking twice)
    let cases = [
        ("0s, success", Duration::ZERO, "good-0", 1),
        ("0s, denial", Duration::ZERO, "bad-0", 2),
        ("5s, success", Duration::from_secs(5), "good-5", 1),
        ("5s, denial", Duration::from_secs(5), "bad-5", 1),
        ("2m, success", Duration::from_secs(120), "good-120", 1),
    ];
    for (name, ttl, token, calls) in cases {
        let cached =
            WebhookTokenAuthenticator::from_flags(&cfg, "v1", ttl, WebhookOptions::default())
                .unwrap();
        let before = server.calls();
        for _ in 0..2 {
            let answer = cached.authenticate_token(token, &ctx).await.unwrap();
            assert_eq!(answer.is_some(), token.starts_with("good"), "{name}");
        }
        assert_eq!(server.calls() - before, calls, "{name}");
    }
}

/// A provider that is not fixed (an application's function) hands back a clone of the same
/// token-file credential. After a 401 and the file's rotation the vault reads the file again
/// before it fingerprints the clone, and takes the new token, instead of refusing the clone as
/// the old, known-bad token until a restart.
#[tokio::test]
async fn a_rotating_provider_s_token_file_is_read_again_after_a_401() {
    let (pki, server, current) = accepting_one_token("sa-token-1").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    std::fs::write(&path, "sa-token-1\n").unwrap();
    let info = ConnectionInfo::new(server.url("/"))
        .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
        .with_bearer(BearerToken::from_file(&path).unwrap())
        .with_trust_env(false);
    let vault = Vault::new(vec![Box::new(SyncProvider::new(move || {
        Ok(vec![info.clone()])
    }))]);
    let w = WebhookTokenAuthenticator::new(vault, opts(Version::V1, Arc::default())).unwrap();
    let ctx = Context::default();
    assert_eq!(
        name(&w.authenticate_token("t1", &ctx).await).as_deref(),
        Some("ok")
    );
    // The token rotates on the server, then in the file.
    *current.lock().unwrap() = "sa-token-2-rotated".into();
    let e = w.authenticate_token("t2", &ctx).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server has asked for the client to provide credentials"
    );
    assert_eq!(server.calls(), 2);
    std::fs::write(&path, "sa-token-2-rotated\n").unwrap();
    assert_eq!(
        name(&w.authenticate_token("t3", &ctx).await).as_deref(),
        Some("ok")
    );
    assert_eq!(server.calls(), 3);
    assert_eq!(
        server.last().headers["authorization"],
        "Bearer sa-token-2-rotated"
    );
}

#[test]
fn flag_validation_and_secret_hygiene() {
    let e = WebhookTokenAuthenticator::from_flags(
        "/nonexistent.kubeconfig",
        "v1",
        Duration::from_secs(120),
        WebhookOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("/nonexistent.kubeconfig"));
    // The kubeconfig is loaded first (LoadKubeconfig), then the version checked (webhook.New).
    let e = WebhookTokenAuthenticator::from_flags(
        "/x",
        "v2",
        Duration::from_secs(120),
        WebhookOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "stat /x: no such file or directory");
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "clusters:\n- name: b\n  cluster:\n    server: https://127.0.0.1:1/\n",
    )
    .unwrap();
    let e = WebhookTokenAuthenticator::from_flags(
        &kubeconfig,
        "v2",
        Duration::from_secs(120),
        WebhookOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1""#
    );
    let mut o = WebhookOptions::default();
    o.backoff.steps = 0;
    let e = WebhookTokenAuthenticator::new(Vault::new(vec![]), o).unwrap_err();
    assert_eq!(
        e.to_string(),
        "number of webhook retry attempts must be greater than 0, but is: 0"
    );
    let info = ConnectionInfo::new("https://x")
        .with_token(Secret::new("tok-SECRET"))
        .with_basic("u", Secret::new("pw-SECRET"));
    let w =
        WebhookTokenAuthenticator::new(Vault::from_info(info.clone()), WebhookOptions::default())
            .unwrap();
    assert!(!format!("{info:?} {w:?}").contains("SECRET"));
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// 1 000 concurrent reviews of one uncached token through the cached webhook → one TokenReview.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_concurrent_reviews_make_one_backend_call() {
    let pki = Pki::new();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        |_, _| {
            // A slow backend, so that every caller arrives while the review is in flight.
            std::thread::sleep(Duration::from_millis(300));
            allow("popular")
        },
    )
    .await;
    let cached = Arc::new(
        webhook(
            info_for(&pki, server.url("/")),
            opts(Version::V1, Arc::default()),
        )
        .cached(Duration::from_secs(120)),
    );
    let mut tasks = Vec::new();
    for _ in 0..1000 {
        let c = cached.clone();
        tasks.push(tokio::spawn(async move {
            c.authenticate_token(TOKEN, &Context::default()).await
        }));
    }
    for t in tasks {
        assert_eq!(name(&t.await.unwrap()).as_deref(), Some("popular"));
    }
    assert_eq!(
        server.calls(),
        1,
        "exactly one TokenReview for 1 000 concurrent callers"
    );
    assert_eq!(cached.stats().fetch_ok, 1);
}

/// An explicit proxy URL is used (here a closed port, so the review fails and the server,
/// reachable directly, sees nothing).
#[tokio::test]
async fn explicit_proxy_is_used() {
    let pki = Pki::new();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        |_, _| allow("x"),
    )
    .await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let w = webhook(
        info_for(&pki, server.url("/")).with_proxy(format!("http://127.0.0.1:{port}")),
        opts(Version::V1, Arc::default()),
    );
    assert!(
        w.authenticate_token(TOKEN, &Context::default())
            .await
            .is_err()
    );
    assert_eq!(server.calls(), 0);
    let direct = webhook(
        info_for(&pki, server.url("/")),
        opts(Version::V1, Arc::default()),
    );
    assert!(
        direct
            .authenticate_token(TOKEN, &Context::default())
            .await
            .unwrap()
            .is_some()
    );
}

/// The URL of a transport error is the one client-go posted to (`Post "<url>": …`, as
/// kube-apiserver printed it for each row, nothing listening on the port), and no secret of the
/// server URL reaches an error or log: a password (sent by reqwest as Basic credentials) is
/// shown as `u:***@`, as Go's net/http does (`stripPassword`); the query is not sent at all; a
/// user name without a password, which net/http sends as Basic credentials too, is shown as
/// `***@` (Go shows it).
#[tokio::test]
async fn transport_errors_show_the_url_client_go_posted_to() {
    let cases = [
        (
            "https://u:pw-SECRET@127.0.0.1:1/",
            "https://u:***@127.0.0.1:1/?timeout=30s",
        ),
        (
            "https://u:pw-SECRET@127.0.0.1:1/authn?x=1",
            "https://u:***@127.0.0.1:1/authn?timeout=30s",
        ),
        (
            "https://u:pw-SECRET@127.0.0.1:1/a?key=abc",
            "https://u:***@127.0.0.1:1/a?timeout=30s",
        ),
        (
            "https://u:pw-SECRET@127.0.0.1:1/?key=q-SECRET",
            "https://u:***@127.0.0.1:1/?timeout=30s",
        ),
        (
            "https://u:@127.0.0.1:1/",
            "https://u:***@127.0.0.1:1/?timeout=30s",
        ),
        (
            "https://pw-SECRET@127.0.0.1:1/a",
            "https://***@127.0.0.1:1/a?timeout=30s",
        ),
        ("https://127.0.0.1:1", "https://127.0.0.1:1/?timeout=30s"),
        (
            "https://127.0.0.1:1/authn/",
            "https://127.0.0.1:1/authn?timeout=30s",
        ),
        (
            "https://127.0.0.1:1#frag",
            "https://127.0.0.1:1/?timeout=30s",
        ),
    ];
    for (url, masked) in cases {
        let info = ConnectionInfo::new(url).with_trust_env(false);
        let w = webhook(info.clone(), opts(Version::V1, Arc::default()));
        let e = w
            .authenticate_token(TOKEN, &Context::default())
            .await
            .unwrap_err();
        for shown in [e.to_string(), format!("{e:?}")] {
            assert!(!shown.contains("SECRET"), "{url}: {shown}");
        }
        if url.contains("u:pw-SECRET") {
            assert!(!format!("{info:?}").contains("pw-SECRET"), "{url}");
        }
        assert!(
            e.to_string().starts_with(&format!("Post {masked:?}: ")),
            "{url}: {e}"
        );
        assert!(format!("{e:?}").contains(masked), "{url}: {e:?}");
    }
}

/// A 401 from the backend fails that review only, as in kube-apiserver (e.g. a proxy in front
/// of a restarting backend): a kubeconfig's credential — or its absence — is all there is, so
/// it is sent again with the next review instead of being remembered as bad forever.
#[tokio::test]
async fn one_401_fails_only_that_review() {
    let pki = Pki::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    std::fs::write(dir.path().join("client.pem"), &pki.client_cert_pem).unwrap();
    std::fs::write(dir.path().join("client-key.pem"), &pki.client_key_pem).unwrap();
    std::fs::write(dir.path().join("token"), "file-token\n").unwrap();
    // (name, kubeconfig `user` entry, client CA the server requires)
    let cases: &[(&str, &str, bool)] = &[
        ("no credential at all", "{}", false),
        ("bearer token", "{token: kubeconfig-token}", false),
        ("token file", "{tokenFile: token}", false),
        ("basic credentials", "{username: u, password: p}", false),
        (
            "client certificate",
            "{client-certificate: client.pem, client-key: client-key.pem}",
            true,
        ),
    ];
    for &(case, user, mtls) in cases {
        let server = Server::start(
            &pki.server_cert_pem,
            &pki.server_key_pem,
            mtls.then_some(pki.client_ca_pem.as_str()),
            |_, n| {
                if n == 0 {
                    Reply::Http(401, vec![], vec![])
                } else {
                    allow("back")
                }
            },
        )
        .await;
        let cfg = dir.path().join("kubeconfig");
        std::fs::write(
            &cfg,
            format!(
                "clusters:\n- cluster:\n    server: {}\n    certificate-authority: ca.pem\nusers:\n- user: {user}\n",
                server.url("/")
            ),
        )
        .unwrap();
        let mut o = opts(Version::V1, Arc::default());
        o.implicit_audiences = Audiences::default();
        let w = WebhookTokenAuthenticator::from_flags(&cfg, "v1", Duration::ZERO, o).unwrap();
        let ctx = Context::default();
        let e = w.authenticate_token("t1", &ctx).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server has asked for the client to provide credentials",
            "{case}"
        );
        assert_eq!(
            server.calls(),
            1,
            "{case}: one request for the failed review"
        );
        for (i, token) in ["t2", "t3"].into_iter().enumerate() {
            assert_eq!(
                name(&w.authenticate_token(token, &ctx).await).as_deref(),
                Some("back"),
                "{case}: review {token}"
            );
            assert_eq!(server.calls(), 2 + i, "{case}: one request per review");
        }
    }
}

/// Client certificate and key *files* are re-read when they change (client-go rotates them):
/// new connections present the pair on disk once a look has loaded it, and a rotation replaces
/// the HTTP client, so
/// the kept-alive connection made with the previous pair is not used again (without that, the
/// third case would pass on the old connection). A half-written rotation (a certificate whose
/// key does not match) keeps the previous pair; a pair the server does not trust is refused by
/// the server once it is in use; rotating back recovers.
#[tokio::test]
async fn client_certificate_files_rotate() {
    let pki = Pki::new();
    let stranger = Pki::new();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        // Connections are kept alive: after a rotation the client must not reuse one made
        // with the previous pair (client-go closes them; we drop the client that pooled them).
        |_, _| allow("x"),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("client.crt"), dir.path().join("client.key"));
    let write = |c: &str, k: &str| {
        std::fs::write(&cert, c).unwrap();
        std::fs::write(&key, k).unwrap();
    };
    write(&pki.client_cert_pem, &pki.client_key_pem);
    let info = ConnectionInfo::new(server.url("/"))
        .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
        .with_client_cert(Pem::File(cert.clone()), Pem::File(key.clone()))
        .with_trust_env(false);
    let w = webhook(info, opts(Version::V1, Arc::default()));
    // (case, new certificate and key, the review succeeds)
    type Case<'a> = (&'a str, Option<(&'a str, &'a str)>, bool);
    let cases: [Case<'_>; 4] = [
        ("the pair at startup", None, true),
        (
            "a half-written rotation keeps the previous pair",
            Some((&pki.client_cert_pem, &stranger.client_key_pem)),
            true,
        ),
        (
            "a pair from another CA is presented, and refused by the server",
            Some((&stranger.client_cert_pem, &stranger.client_key_pem)),
            false,
        ),
        (
            "rotating back recovers",
            Some((&pki.client_cert_pem, &pki.client_key_pem)),
            true,
        ),
    ];
    for (name, pair, ok) in cases {
        if let Some((c, k)) = pair {
            write(c, k);
            // The files are looked at once a second at most, on the blocking pool: the
            // review that finds the look due goes out with the pair in use (its outcome is not
            // the case's), the ones after the look with what it loaded.
            tokio::time::sleep(Duration::from_millis(1100)).await;
            let _ = w.authenticate_token(TOKEN, &Context::default()).await;
        }
        // The look may still be running on a loaded machine: wait (bounded) for the outcome,
        // then require it to hold for a second, which also catches a look that loads the
        // half-written pair after the first review went out with the previous one.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let r = w.authenticate_token(TOKEN, &Context::default()).await;
            if r.is_ok() == ok {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "case {name}: {r:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let r = w.authenticate_token(TOKEN, &Context::default()).await;
            assert_eq!(r.is_ok(), ok, "case {name}, later: {r:?}");
        }
    }
}

/// Transport faults are retried as k8s.io/apiserver's `DefaultShouldRetry` retries them: a
/// connection reset is retried, after the request was sent or during the TLS handshake (Go's
/// `IsConnectionReset` finds `ECONNRESET` in both); an answer that is not HTTP is not (and a
/// connection closed without an answer is not either: the `Reply::Close` case of the fault
/// table).
#[tokio::test]
async fn transport_faults_are_retried_as_kubernetes_retries_them() {
    let pki = Pki::new();
    // (name, fault, backend calls, what the error says)
    let cases = [
        (
            "an answer that is not HTTP",
            RawFault::Garbage(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"),
            1,
            "Post",
        ),
        ("a connection reset", RawFault::Reset, 5, "Post"),
        (
            "a connection reset in the TLS handshake",
            RawFault::ResetInHandshake,
            5,
            "Post",
        ),
    ];
    for (name, fault, calls, says) in cases {
        let server = Server::start_raw(
            &pki.server_cert_pem,
            &pki.server_key_pem,
            Some(&pki.client_ca_pem),
            fault,
        );
        let sleeper = Arc::new(RecordingSleeper::default());
        let w = webhook(
            info_for(&pki, server.url("/review")),
            opts(Version::V1, sleeper.clone()),
        );
        let e = w
            .authenticate_token(TOKEN, &Context::default())
            .await
            .expect_err(name);
        assert!(e.to_string().starts_with(says), "{name}: {e}");
        assert!(!e.to_string().contains(TOKEN), "{name}: {e}");
        assert_eq!(server.calls(), calls, "{name}: backend calls ({e})");
        assert_eq!(sleeper.0.lock().unwrap().len(), calls - 1, "{name}");
    }
}

/// HTTP/2 streams the server did not process are sent again, as Go's HTTP/2 transport sends
/// them again under client-go (a `REFUSED_STREAM` reset; a stream above a graceful GOAWAY's
/// last stream): a webhook backend that restarts or sheds load does not fail the review.
/// hyper sends such a request again itself a few times; past that the webhook's own retries
/// (with backoff) take over, where before they gave up on the first such error.
#[tokio::test]
async fn unprocessed_http2_streams_are_sent_again() {
    let pki = Pki::new();
    const ANSWER: &str = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":"jane"}}}"#;
    // (fault, requests it hits before one is answered, whether the webhook backed off)
    let cases = [
        (H2Fault::RefuseStream, 2, false),
        (H2Fault::RefuseStream, 8, true),
        (H2Fault::GoAwayUnprocessed, 2, false),
        (H2Fault::GoAwayUnprocessed, 8, true),
    ];
    for (fault, faulty, backed_off) in cases {
        let server = Server::start_h2(
            &pki.server_cert_pem,
            &pki.server_key_pem,
            Some(&pki.client_ca_pem),
            fault,
            faulty,
            ANSWER,
        );
        let sleeper = Arc::new(RecordingSleeper::default());
        let w = webhook(
            info_for(&pki, server.url("/review")),
            opts(Version::V1, sleeper.clone()),
        );
        let case = format!("{fault:?} x{faulty}");
        let r = w.authenticate_token(TOKEN, &Context::default()).await;
        assert_eq!(name(&r).as_deref(), Some("jane"), "{case}: {r:?}");
        assert_eq!(server.calls(), faulty + 1, "{case}: backend calls");
        let steps = sleeper.0.lock().unwrap().len();
        assert_eq!(steps > 0, backed_off, "{case}: {steps} backoff steps");
    }
}

/// The request kube-apiserver's webhook authenticator sends (client-go's REST client on the
/// kubeconfig's `server`): each row's request target was recorded from it by a local server
/// (`webhookutil.LoadKubeconfig` + `webhook.New`, k8s.io/apiserver v0.37.2), as were the
/// headers: `POST` to the server's path cleaned (`path.Join`), its query replaced by
/// `timeout=30s` (Go's notation for the request timeout: the last row), `Accept:
/// application/json, */*`, `Content-Type: application/json`, `Host` the URL's.
#[tokio::test]
async fn request_line_and_headers_as_kube_apiserver_sends_them() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |_, _| {
        allow("x")
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let ca = base64_encode(pki.ca_pem.as_bytes());
    // (server URL after the host, request timeout, request target)
    let cases: &[(&str, u64, &str)] = &[
        ("", 30, "/?timeout=30s"),
        ("/", 30, "/?timeout=30s"),
        ("/authn/", 30, "/authn?timeout=30s"),
        ("/authn?key=abc&x=1", 30, "/authn?timeout=30s"),
        ("/a//b/../c", 30, "/a/c?timeout=30s"),
        ("/authn#frag", 30, "/authn%23frag?timeout=30s"),
        ("/p%2Fq", 30, "/p%2Fq?timeout=30s"),
        ("/authn", 90, "/authn?timeout=1m30s"),
    ];
    for (suffix, secs, target) in cases {
        std::fs::write(
            &kubeconfig,
            format!(
                "clusters:\n- cluster:\n    server: '{}{suffix}'\n    certificate-authority-data: {ca}\n",
                server.url("")
            ),
        )
        .unwrap();
        let mut o = opts(Version::V1, Arc::default());
        o.request_timeout = Duration::from_secs(*secs);
        let w = WebhookTokenAuthenticator::from_kubeconfig(&kubeconfig, o).unwrap();
        let got = w.authenticate_token(TOKEN, &Context::default()).await;
        assert_eq!(name(&got).as_deref(), Some("x"), "{suffix}: {got:?}");
        let seen = server.last();
        assert_eq!(
            (seen.method.as_str(), seen.uri.as_str()),
            ("POST", *target),
            "{suffix}"
        );
        assert_eq!(seen.headers["accept"], "application/json, */*", "{suffix}");
        assert_eq!(seen.headers["content-type"], "application/json", "{suffix}");
        assert_eq!(seen.headers["host"], server.addr.to_string(), "{suffix}");
    }
}

/// A kubeconfig `tls-server-name` is sent as SNI and verified, as Go's transport does with
/// `tls.Config.ServerName`, while the connection goes to the URL's host and `Host` names it
/// (what kube-apiserver sent, recorded by a Go server: SNI `authn.example`, Host
/// `127.0.0.1:<port>`; an IP address as tls-server-name: no SNI at all).
#[tokio::test]
async fn tls_server_name_is_sent_as_sni() {
    let pki = Pki::new(); // the server's certificate names 127.0.0.1, localhost, webhook.example
    let (server, sni) =
        Server::start_recording_sni(&pki.server_cert_pem, &pki.server_key_pem, |_, _| allow("x"));
    let port = server.addr.port();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let ca = format!(
        "certificate-authority-data: {}",
        base64_encode(pki.ca_pem.as_bytes())
    );
    // (name, the server URL's host, cluster settings, the SNI the server got)
    let cases: &[(&str, &str, String, Option<&str>)] = &[
        (
            "a DNS name for an IP address",
            "127.0.0.1",
            format!("{ca}\n    tls-server-name: webhook.example"),
            Some("webhook.example"),
        ),
        (
            "a DNS name for another DNS name",
            "localhost",
            format!("{ca}\n    tls-server-name: webhook.example"),
            Some("webhook.example"),
        ),
        (
            // Go sends the name as written; a DNS name's case means nothing.
            "in capitals",
            "localhost",
            format!("{ca}\n    tls-server-name: WEBHOOK.example"),
            Some("webhook.example"),
        ),
        (
            "no tls-server-name",
            "localhost",
            ca.clone(),
            Some("localhost"),
        ),
        (
            "the URL's own host",
            "localhost",
            format!("{ca}\n    tls-server-name: localhost"),
            Some("localhost"),
        ),
        (
            "an IP address: verified, never sent",
            "localhost",
            format!("{ca}\n    tls-server-name: 127.0.0.1"),
            None,
        ),
        (
            "with insecure-skip-tls-verify",
            "127.0.0.1",
            "insecure-skip-tls-verify: true\n    tls-server-name: other.example".to_owned(),
            Some("other.example"),
        ),
    ];
    for (name_, host, cluster, want) in cases {
        std::fs::write(
            &kubeconfig,
            format!(
                "clusters:\n- cluster:\n    server: https://{host}:{port}/authn\n    {cluster}\n"
            ),
        )
        .unwrap();
        sni.lock().unwrap().clear();
        let mut o = opts(Version::V1, Arc::default());
        o.request_timeout = Duration::from_secs(10);
        let w = WebhookTokenAuthenticator::from_kubeconfig(&kubeconfig, o).unwrap();
        let got = w.authenticate_token(TOKEN, &Context::default()).await;
        assert_eq!(name(&got).as_deref(), Some("x"), "{name_}: {got:?}");
        assert_eq!(
            *sni.lock().unwrap(),
            [want.map(str::to_owned)],
            "{name_}: the SNI of the one handshake"
        );
        let seen = server.last();
        assert_eq!(seen.headers["host"], format!("{host}:{port}"), "{name_}");
        assert_eq!(seen.uri, "/authn?timeout=10s", "{name_}");
    }
    // A name the certificate does not hold is sent, and refused by verification.
    std::fs::write(
        &kubeconfig,
        format!(
            "clusters:\n- cluster:\n    server: https://127.0.0.1:{port}/\n    {ca}\n    tls-server-name: evil.example\n"
        ),
    )
    .unwrap();
    sni.lock().unwrap().clear();
    let w =
        WebhookTokenAuthenticator::from_kubeconfig(&kubeconfig, WebhookOptions::default()).unwrap();
    let e = w
        .authenticate_token(TOKEN, &Context::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("certificate"), "{e}");
    assert_eq!(*sni.lock().unwrap(), [Some("evil.example".to_owned())]);
}

/// kubeconfig files as client-go loads them (`clientcmd.Load`, checked against
/// `webhookutil.LoadKubeconfig`): `*-data` wrapped over several lines (a YAML `|` block) is
/// decoded (Go's base64 decoder skips `\r` and `\n`), and an `apiVersion` or `kind` other than
/// `v1` `Config` is refused with client-go's text.
#[tokio::test]
async fn kubeconfig_files_load_as_client_go_loads_them() {
    let pki = Pki::new();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        Some(&pki.client_ca_pem),
        |_, _| allow("wrapped"),
    )
    .await;
    // As `base64 -w 64` writes it, indented as a block scalar.
    let block = |pem: &str| {
        let b64 = base64_encode(pem.as_bytes());
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!("|\n      {}", lines.join("\n      "))
    };
    let body = format!(
        "clusters:\n- cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
        server.url("/"),
        block(&pki.ca_pem),
        block(&pki.client_cert_pem),
        block(&pki.client_key_pem),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    // (name, head of the file, client-go's error)
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            "data wrapped over lines",
            "apiVersion: v1\nkind: Config\n",
            None,
        ),
        ("no apiVersion and kind", "", None),
        (
            "apiVersion v2",
            "apiVersion: v2\nkind: Config\n",
            Some(
                r#"no kind "Config" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111""#,
            ),
        ),
        (
            "kind Pod",
            "apiVersion: v1\nkind: Pod\n",
            Some(
                r#"no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111""#,
            ),
        ),
    ];
    for (name_, head, want) in cases {
        std::fs::write(&kubeconfig, format!("{head}{body}")).unwrap();
        let w = WebhookTokenAuthenticator::from_kubeconfig(
            &kubeconfig,
            opts(Version::V1, Arc::default()),
        );
        match (w, want) {
            (Ok(w), None) => {
                let got = w.authenticate_token(TOKEN, &Context::default()).await;
                assert_eq!(name(&got).as_deref(), Some("wrapped"), "{name_}: {got:?}");
            }
            // clientcmd's loader names the file (`error loading config file "%s": %v`).
            (Err(e), Some(text)) => assert_eq!(
                e.to_string(),
                format!(
                    "error loading config file \"{}\": {text}",
                    kubeconfig.display()
                ),
                "{name_}"
            ),
            (Ok(_), Some(text)) => panic!("{name_}: loaded, expected {text}"),
            (Err(e), None) => panic!("{name_}: {e}"),
        }
    }
}

/// A connection that cannot be established ends the review after 10 s, in one attempt: the
/// connect bound (TCP and TLS together) is client-go's TLS handshake timeout, whatever the
/// request timeout (120 s here) and the review's deadline (300 s), and a connect timeout is
/// not retried (client-go's 30 s dial timeout alone is a documented difference). A listener
/// whose accept queue is full drops the SYN, so the connect hangs until a timeout ends it;
/// Tokio's paused clock jumps to each timer, so nothing really waits.
#[tokio::test(start_paused = true)]
async fn connecting_is_bounded_at_ten_seconds() {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(0).unwrap();
    let addr = listener.local_addr().unwrap();
    // Fill the accept queue (nothing accepts): a connect that does not finish at once finds it
    // full.
    let mut held = Vec::new();
    for _ in 0..8 {
        match tokio::time::timeout(
            Duration::from_millis(100),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        {
            Ok(Ok(conn)) => held.push(conn),
            _ => break,
        }
    }
    assert!(held.len() < 8, "the accept queue never filled");
    let mut o = opts(Version::V1, Arc::default());
    o.request_timeout = Duration::from_secs(120);
    o.deadline = Duration::from_secs(300);
    let w = webhook(
        ConnectionInfo::new(format!("https://{addr}/"))
            .with_insecure_skip_tls_verify(true)
            .with_trust_env(false),
        o,
    );
    let start = tokio::time::Instant::now();
    let e = w
        .authenticate_token(TOKEN, &Context::default())
        .await
        .unwrap_err();
    let waited = start.elapsed();
    // One 10 s attempt: a connect timeout is not retried.
    assert!(
        waited >= Duration::from_secs(10) && waited < Duration::from_secs(11),
        "{waited:?}: {e}"
    );
    drop(listener);
}

/// apimachinery's `wait.Backoff`: a `factor` between 0 and 1 shrinks the delay step by step
/// (`time.Duration(float64(d) * factor)`), 0 keeps it.
#[tokio::test]
async fn backoff_factor_below_one_shrinks_the_delay() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |_, _| {
        Reply::Http(500, vec![], vec![])
    })
    .await;
    let ms = Duration::from_millis;
    // (factor, the delays slept)
    let cases: &[(f64, [Duration; 3])] = &[
        (0.5, [ms(8), ms(4), ms(2)]),
        (0.25, [ms(8), ms(2), Duration::from_micros(500)]),
        (0.0, [ms(8), ms(8), ms(8)]),
        (2.0, [ms(8), ms(16), ms(32)]),
    ];
    for (factor, want) in cases {
        let sleeper = Arc::new(RecordingSleeper::default());
        let mut o = opts(Version::V1, sleeper.clone());
        o.backoff = Backoff {
            initial: ms(8),
            factor: *factor,
            jitter: 0.0,
            steps: 4,
        };
        let w = webhook(
            ConnectionInfo::new(server.url("/"))
                .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
                .with_trust_env(false),
            o,
        );
        assert!(
            w.authenticate_token(TOKEN, &Context::default())
                .await
                .is_err()
        );
        assert_eq!(*sleeper.0.lock().unwrap(), want.to_vec(), "factor {factor}");
    }
}

/// client-go parses the `Content-Type` of every answer with Go's `mime.ParseMediaType`
/// (`transformResponse`) once the body is read, before it looks at the status: a type Go
/// refuses is `Internal error occurred: mime: …`, an internal error the webhook retries, so a
/// 2xx review is not used and the backend is asked 5 times, whatever the status (404 and 401
/// included). An empty header stands for `application/json`. The parsed type, lower-cased,
/// decides whether an error body is text (`isTextResponse`): `Text/Plain` is. Each row's
/// outcome (user or error, and the number of requests) was printed by kube-apiserver's
/// authenticator (k8s.io/apiserver v0.37.2 `webhook.New`) against a Go server sending the
/// same answer.
#[tokio::test]
async fn content_types_are_parsed_as_client_go_parses_them() {
    const JANE: &str = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":"jane"}}}"#;
    struct Case {
        name: &'static str,
        code: u16,
        content_type: &'static str,
        body: &'static str,
        /// The user, or the error.
        want: Result<&'static str, &'static str>,
        calls: usize,
    }
    let case = |name, code, content_type, body, want, calls| Case {
        name,
        code,
        content_type,
        body,
        want,
        calls,
    };
    let cases = [
        case(
            "200, a parameter without a value",
            200,
            "application/json; charset",
            JANE,
            Err("Internal error occurred: mime: invalid media parameter"),
            5,
        ),
        case(
            "200, no media type",
            200,
            "@@@",
            JANE,
            Err("Internal error occurred: mime: no media type"),
            5,
        ),
        case(
            "200, a trailing semicolon",
            200,
            "application/json;",
            JANE,
            Ok("jane"),
            1,
        ),
        case(
            "200, upper case and a parameter",
            200,
            "Application/JSON; charset=utf-8",
            JANE,
            Ok("jane"),
            1,
        ),
        case(
            "200, a parameter twice with two values",
            200,
            "application/json; a=1; a=2",
            JANE,
            Err("Internal error occurred: mime: duplicate parameter name"),
            5,
        ),
        case(
            "200, a parameter twice with one value",
            200,
            "application/json; a=1; a=1",
            JANE,
            Ok("jane"),
            1,
        ),
        case(
            "200, white space before the slash",
            200,
            "application /json",
            JANE,
            Err("Internal error occurred: mime: expected slash after first token"),
            5,
        ),
        case(
            "200, nothing after the slash",
            200,
            "application/",
            JANE,
            Err("Internal error occurred: mime: expected token after slash"),
            5,
        ),
        case(
            "200, content after the subtype",
            200,
            "application/json/x",
            JANE,
            Err("Internal error occurred: mime: unexpected content after media subtype"),
            5,
        ),
        case(
            "200, an RFC 2231 part twice",
            200,
            "application/json; a*0=x; a*0=y",
            JANE,
            Err("Internal error occurred: mime: duplicate parameter name"),
            5,
        ),
        case(
            "200, an RFC 2231 value that does not decode",
            200,
            "application/json; a*=utf-8''%zz",
            JANE,
            Ok("jane"),
            1,
        ),
        case(
            "200, an unterminated quoted string",
            200,
            "application/json; a=\"x",
            JANE,
            Err("Internal error occurred: mime: invalid media parameter"),
            5,
        ),
        case(
            "200, UTF-8 in a quoted string",
            200,
            "application/json; a=\"\u{e9}\"",
            JANE,
            Ok("jane"),
            1,
        ),
        case("200, an empty Content-Type", 200, "", JANE, Ok("jane"), 1),
        case(
            "200, an empty Content-Type and no body",
            200,
            "",
            "",
            Err("0-length response with status code: 200 and content type: application/json"),
            1,
        ),
        case(
            "200, a refused type and no body",
            200,
            "application/json; charset",
            "",
            Err("Internal error occurred: mime: invalid media parameter"),
            5,
        ),
        case(
            "500, a refused type",
            500,
            "text/plain; charset",
            "oops",
            Err("Internal error occurred: mime: invalid media parameter"),
            5,
        ),
        case(
            "404, a refused type",
            404,
            "@@@",
            "",
            Err("Internal error occurred: mime: no media type"),
            5,
        ),
        case(
            "401, a refused type",
            401,
            "@@@",
            "",
            Err("Internal error occurred: mime: no media type"),
            5,
        ),
        case(
            "503, a refused type",
            503,
            "text/plain;;",
            "",
            Err("Internal error occurred: mime: invalid media parameter"),
            5,
        ),
        case(
            "500, a media type with UTF-8",
            500,
            "text/pl\u{e4}in",
            "oops",
            Err("Internal error occurred: mime: unexpected content after media subtype"),
            5,
        ),
        case(
            "500, Text/Plain",
            500,
            "Text/Plain",
            "oops",
            Err(r#"an error on the server ("oops") has prevented the request from succeeding"#),
            5,
        ),
        case(
            "403, TEXT/plain with a parameter",
            403,
            "TEXT/plain; charset=utf-8",
            "denied here",
            Err("denied here"),
            1,
        ),
        case(
            "403, text/html",
            403,
            "text/html",
            "<b>no</b>",
            Err("<b>no</b>"),
            1,
        ),
        case(
            "403, JSON that is not a Status",
            403,
            "application/json",
            "denied here",
            Err("unknown"),
            1,
        ),
        case(
            "403, Text/Plain with UTF-8 in a parameter",
            403,
            "Text/Plain; x=\"\u{e9}\"",
            "denied",
            Err("denied"),
            1,
        ),
        case(
            "500, JSON with UTF-8 in a parameter",
            500,
            "application/json; x=\"\u{e9}\"",
            "oops",
            Err(r#"an error on the server ("unknown") has prevented the request from succeeding"#),
            5,
        ),
    ];
    let pki = Pki::new();
    for c in cases {
        let (code, content_type, body) = (c.code, c.content_type, c.body);
        let server = Server::start(
            &pki.server_cert_pem,
            &pki.server_key_pem,
            Some(&pki.client_ca_pem),
            move |_, _| {
                Reply::Http(
                    code,
                    vec![("content-type", content_type.into())],
                    body.into(),
                )
            },
        )
        .await;
        let sleeper = Arc::new(RecordingSleeper::default());
        let w = webhook(
            info_for(&pki, server.url("/review")),
            opts(Version::V1, sleeper.clone()),
        );
        let got = w.authenticate_token(TOKEN, &Context::default()).await;
        match c.want {
            Ok(user) => assert_eq!(name(&got).as_deref(), Some(user), "{}: {got:?}", c.name),
            Err(want) => {
                let e = got.expect_err(c.name);
                assert_eq!(e.to_string(), want, "{}", c.name);
            }
        }
        assert_eq!(server.calls(), c.calls, "{}: backend calls", c.name);
        assert_eq!(
            sleeper.0.lock().unwrap().len(),
            c.calls - 1,
            "{}: retry sleeps",
            c.name
        );
    }
}

/// A review's `status.error` reaches the error as the webhook wrote it, with exact copies of
/// the reviewed token replaced by `<redacted>` and nothing else: words that only begin as the
/// token does stay (kube-apiserver returns every row's text unchanged). Only a text cut at
/// 2 KiB has a tail that is the token's first bytes redacted, as a token cut through.
#[tokio::test]
async fn review_errors_keep_text_that_only_begins_as_the_token() {
    let pad = "x".repeat(2040);
    // (name, token, status.error, the error)
    let cases: Vec<(&str, &str, String, String)> = vec![
        (
            "a word the token starts with",
            "user-1234",
            "unknown user".into(),
            "unknown user".into(),
        ),
        (
            "a bootstrap token's id",
            "abcdef.0123456789abcdef",
            "bootstrap token not found: abcdef".into(),
            "bootstrap token not found: abcdef".into(),
        ),
        (
            "a JWT's first bytes",
            "eyJhbGciOiJSUzI1NiJ9.x.y",
            "not a JWT: eyJh".into(),
            "not a JWT: eyJh".into(),
        ),
        (
            "a part of the token",
            TOKEN,
            "unknown token my-s3cr3t".into(),
            "unknown token my-s3cr3t".into(),
        ),
        (
            "the token",
            TOKEN,
            format!("unknown token {TOKEN}"),
            "unknown token <redacted>".into(),
        ),
        (
            "cut at 2 KiB through the token's first bytes",
            TOKEN,
            format!("{pad}my-s3cr3t and more"),
            format!("{pad}<redacted>"),
        ),
        (
            "cut at 2 KiB after the token's first bytes",
            TOKEN,
            format!("{}my-s3cr3t and more", &pad[..2035]),
            format!("{}my-s3cr3t and", &pad[..2035]),
        ),
    ];
    let pki = Pki::new();
    for (case, token, error, want) in cases {
        let review = json!({"status":{"authenticated":false,"error":error}});
        let server = Server::start(
            &pki.server_cert_pem,
            &pki.server_key_pem,
            Some(&pki.client_ca_pem),
            move |_, _| Reply::json(200, review.clone()),
        )
        .await;
        let w = webhook(
            info_for(&pki, server.url("/review")),
            opts(Version::V1, Arc::default()),
        );
        let e = w
            .authenticate_token(token, &Context::default())
            .await
            .expect_err(case);
        assert_eq!(e.kind(), ErrorKind::InvalidCredential, "{case}");
        assert_eq!(e.to_string(), want, "{case}");
        assert_eq!(server.calls(), 1, "{case}");
    }
}

/// The answer's `apiVersion` and `kind` as client-go's decoder reads them (`meta.Interpret`,
/// then the scheme), error bodies recognised as a `Status` of any group/version, and a
/// `Retry-After` above zero retried for any status. Each row's outcome, text and request count
/// were printed by `webhook.New` (k8s.io/apiserver v0.37.2) against the same answer; the rows
/// marked "ours" are documented differences (docs/compatibility.md).
#[tokio::test]
async fn answers_are_decoded_as_client_go_decodes_them() {
    const AUTHN: &str = r#""status":{"authenticated":true,"user":{"username":"a"}}"#;
    struct Case {
        name: &'static str,
        version: Version,
        code: u16,
        headers: &'static [(&'static str, &'static str)],
        body: String,
        /// The user, or the error.
        want: Result<&'static str, &'static str>,
        calls: usize,
    }
    let b1 = Version::V1Beta1;
    let review = |api_version: &str, kind: &str| {
        format!(r#"{{"apiVersion":"{api_version}","kind":"{kind}",{AUTHN}}}"#)
    };
    let case = |name, version, code, headers, body: String, want, calls| Case {
        name,
        version,
        code,
        headers,
        body,
        want,
        calls,
    };
    let status_403 = |api_version: &str| {
        format!(
            r#"{{"kind":"Status","apiVersion":"{api_version}","status":"Failure","message":"custom msg","reason":"BadRequest","code":400}}"#
        )
    };
    const RA: &[(&str, &str)] = &[("retry-after", "1")];
    let cases = vec![
        // The answer's type.
        case("v1 answer to a v1beta1 client", b1, 200, &[], review("authentication.k8s.io/v1", "TokenReview"),
            Err("converting (v1.TokenReview) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("v1beta1 answer to a v1 client", Version::V1, 200, &[], review("authentication.k8s.io/v1beta1", "TokenReview"),
            Err("converting (v1beta1.TokenReview) to (v1.TokenReview): unknown conversion"), 1),
        case("v1 answer, apiVersion only", b1, 200, &[], format!(r#"{{"apiVersion":"authentication.k8s.io/v1",{AUTHN}}}"#),
            Err("converting (v1.TokenReview) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("kind Foo", b1, 200, &[], review("authentication.k8s.io/v1beta1", "Foo"),
            Err(r#"no kind "Foo" is registered for version "authentication.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("kind Foo only", b1, 200, &[], format!(r#"{{"kind":"Foo",{AUTHN}}}"#),
            Err(r#"no kind "Foo" is registered for version "authentication.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("kind in lower case", b1, 200, &[], review("authentication.k8s.io/v1beta1", "tokenreview"),
            Err(r#"no kind "tokenreview" is registered for version "authentication.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("core v1 TokenReview", b1, 200, &[], review("v1", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("authentication.k8s.io/v2", b1, 200, &[], review("authentication.k8s.io/v2", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for version "authentication.k8s.io/v2" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("the group alone is a version", b1, 200, &[], review("authentication.k8s.io", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for version "authentication.k8s.io" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("the group in another case", b1, 200, &[], review("Authentication.k8s.io/v1beta1", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for version "Authentication.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("the version in another case", b1, 200, &[], review("authentication.k8s.io/V1beta1", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for version "authentication.k8s.io/V1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("/v1beta1 is the core group", b1, 200, &[], review("/v1beta1", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for version "v1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("the internal version", b1, 200, &[], review("authentication.k8s.io/__internal", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for the internal version of group "authentication.k8s.io" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("v1alpha1 has no TokenReview", b1, 200, &[], review("authentication.k8s.io/v1alpha1", "TokenReview"),
            Err(r#"no kind "TokenReview" is registered for version "authentication.k8s.io/v1alpha1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("SubjectAccessReview", b1, 200, &[], r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":true}}"#.into(),
            Err("converting (v1.SubjectAccessReview) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("SelfSubjectReview of the same group", Version::V1, 200, &[], review("authentication.k8s.io/v1", "SelfSubjectReview"),
            Err("converting (v1.SelfSubjectReview) to (v1.TokenReview): unknown conversion"), 1),
        case("v1alpha1 SelfSubjectReview", b1, 200, &[], review("authentication.k8s.io/v1alpha1", "SelfSubjectReview"),
            Err("converting (v1alpha1.SelfSubjectReview) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("TokenRequest", Version::V1, 200, &[], review("authentication.k8s.io/v1", "TokenRequest"),
            Err("converting (v1.TokenRequest) to (v1.TokenReview): unknown conversion"), 1),
        case("WatchEvent, registered in every group version", b1, 200, &[], review("authentication.k8s.io/v1beta1", "WatchEvent"),
            Err("converting (v1.WatchEvent) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("CreateOptions", b1, 200, &[], review("authentication.k8s.io/v1beta1", "CreateOptions"),
            Err("converting (v1.CreateOptions) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("APIVersions, an unversioned kind", b1, 200, &[], review("foo/v9", "APIVersions"),
            Err("converting (v1.APIVersions) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("apiVersion a/b/c", b1, 200, &[], review("a/b/c", "TokenReview"),
            Err("unexpected GroupVersion string: a/b/c"), 1),
        case("apiVersion a number", b1, 200, &[], format!(r#"{{"apiVersion":1,{AUTHN}}}"#),
            Err("couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string"), 1),
        case("a bool", b1, 200, &[], "true".into(),
            Err(r#"couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#), 1),
        case("ours: apiVersion foo/ (Go quotes the body)", b1, 200, &[], review("foo/", "TokenReview"),
            Err("Object 'apiVersion' is missing"), 1),
        // Names matched as encoding/json matches them, the last one winning.
        case("APIVERSION", b1, 200, &[], format!(r#"{{"APIVERSION":"authentication.k8s.io/v1","kind":"TokenReview",{AUTHN}}}"#),
            Err("converting (v1.TokenReview) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("a Kelvin sign in kind", b1, 200, &[], format!(r#"{{"\u212aind":"Foo",{AUTHN}}}"#),
            Err(r#"no kind "Foo" is registered for version "authentication.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        case("two kinds, the last wins", b1, 200, &[], format!(r#"{{"kind":"TokenReview","KIND":"Foo",{AUTHN}}}"#),
            Err(r#"no kind "Foo" is registered for version "authentication.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111""#), 1),
        // Filled in from the requested type.
        case("kind only", b1, 200, &[], format!(r#"{{"kind":"TokenReview",{AUTHN}}}"#), Ok("a"), 1),
        case("apiVersion only", b1, 200, &[], format!(r#"{{"apiVersion":"authentication.k8s.io/v1beta1",{AUTHN}}}"#), Ok("a"), 1),
        case("kind null", b1, 200, &[], format!(r#"{{"kind":null,"apiVersion":"authentication.k8s.io/v1beta1",{AUTHN}}}"#), Ok("a"), 1),
        case("the group without a version", b1, 200, &[], review("authentication.k8s.io/", "TokenReview"), Ok("a"), 1),
        case("apiVersion /", b1, 200, &[], review("/", "TokenReview"), Ok("a"), 1),
        case("v1 full", Version::V1, 200, &[], review("authentication.k8s.io/v1", "TokenReview"), Ok("a"), 1),
        // A Status in a 200 is never a review.
        case("200 Status of authentication.k8s.io/v1beta1", b1, 200, &[], r#"{"kind":"Status","apiVersion":"authentication.k8s.io/v1beta1"}"#.into(),
            Err("converting (v1.Status) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("200 Status meta.k8s.io/v1", b1, 200, &[], r#"{"kind":"Status","apiVersion":"meta.k8s.io/v1"}"#.into(),
            Err("converting (v1.Status) to (v1beta1.TokenReview): unknown conversion"), 1),
        case("ours: 200 Status whose status is a review's (Go: json: cannot unmarshal object into Go struct field Status.status of type string)", b1, 200, &[],
            format!(r#"{{"kind":"Status","apiVersion":"v1",{AUTHN}}}"#),
            Err("webhook: cannot decode Status response: unexpected JSON shape"), 1),
        // Lone surrogates are U+FFFD, as encoding/json reads them.
        case("a lone surrogate in the user name", b1, 200, &[], r#"{"status":{"authenticated":true,"user":{"username":"x\ud800"}}}"#.into(), Ok("x\u{fffd}"), 1),
        case("a lone surrogate in kind", b1, 200, &[], format!(r#"{{"kind":"\ud800",{AUTHN}}}"#),
            Err("no kind \"\u{fffd}\" is registered for version \"authentication.k8s.io/v1beta1\" in scheme \"pkg/runtime/scheme.go:111\""), 1),
        // metadata as metav1.ObjectMeta decodes it (ours: the category, Go: its decoder's text).
        case("metadata.uid a number", b1, 200, &[], format!(r#"{{"metadata":{{"uid":5}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: unexpected JSON shape"), 1),
        case("metadata.selfLink a number", b1, 200, &[], format!(r#"{{"metadata":{{"selfLink":5}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: unexpected JSON shape"), 1),
        case("metadata.deletionGracePeriodSeconds 1.0", b1, 200, &[], format!(r#"{{"metadata":{{"deletionGracePeriodSeconds":1.0}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: unexpected JSON shape"), 1),
        case("metadata.deletionTimestamp garbage", b1, 200, &[], format!(r#"{{"metadata":{{"deletionTimestamp":"garbage"}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: metadata.deletionTimestamp is not an RFC 3339 time"), 1),
        case("metadata.deletionTimestamp null", b1, 200, &[], format!(r#"{{"metadata":{{"deletionTimestamp":null}},{AUTHN}}}"#), Ok("a"), 1),
        case("metadata.managedFields an object", b1, 200, &[], format!(r#"{{"metadata":{{"managedFields":{{}}}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: unexpected JSON shape"), 1),
        case("metadata.managedFields with a bad time", b1, 200, &[], format!(r#"{{"metadata":{{"managedFields":[{{"time":"x"}}]}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: metadata.managedFields.time is not an RFC 3339 time"), 1),
        case("metadata.managedFields item an array", b1, 200, &[], format!(r#"{{"metadata":{{"managedFields":[["m","Apply"]]}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: unexpected JSON shape"), 1),
        case("metadata.managedFields item an empty array", b1, 200, &[], format!(r#"{{"metadata":{{"managedFields":[[]]}},{AUTHN}}}"#),
            Err("webhook: cannot decode TokenReview response: unexpected JSON shape"), 1),
        case("metadata.managedFields as Go writes them", b1, 200, &[],
            format!(r#"{{"metadata":{{"managedFields":[{{"manager":"m","operation":"Apply","time":"2026-01-01T00:00:00Z","fieldsV1":{{"f:x":{{}}}},"fieldsType":"FieldsV1"}},null,{{"fieldsV1":"any"}}]}},{AUTHN}}}"#),
            Ok("a"), 1),
        // Error bodies: kind Status of any group/version is a Status.
        case("403 Status of authentication.k8s.io/v1beta1", b1, 403, &[], status_403("authentication.k8s.io/v1beta1"), Err("custom msg"), 1),
        case("403 Status of meta.k8s.io/v1", b1, 403, &[], status_403("meta.k8s.io/v1"), Err("custom msg"), 1),
        case("403 Status of foo/v1", b1, 403, &[], status_403("foo/v1"), Err("custom msg"), 1),
        case("403 Status of v2", b1, 403, &[], status_403("v2"), Err("custom msg"), 1),
        case("403 Status of /", b1, 403, &[], status_403("/"), Err("custom msg"), 1),
        case("403 Status of v1beta1 to a v1 client", Version::V1, 403, &[], status_403("authentication.k8s.io/v1beta1"), Err("custom msg"), 1),
        case("403 KIND Status", b1, 403, &[], r#"{"KIND":"Status","status":"Failure","message":"custom msg"}"#.into(), Err("custom msg"), 1),
        case("403 Status with a null message", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":null,"reason":null}"#.into(), Err(""), 1),
        case("403 Status of foo/ is no Status", b1, 403, &[], status_403("foo/"), Err(r#"{"kind":"Status","apiVersion":"foo/","status":"Failure","message":"custom msg","reason":"BadRequest","code":400}"#), 1),
        case("403 Status of a/b/c is no Status", b1, 403, &[], status_403("a/b/c"), Err(r#"{"kind":"Status","apiVersion":"a/b/c","status":"Failure","message":"custom msg","reason":"BadRequest","code":400}"#), 1),
        case("403 kind status is no Status", b1, 403, &[], r#"{"kind":"status","status":"Failure","message":"custom msg"}"#.into(), Err(r#"{"kind":"status","status":"Failure","message":"custom msg"}"#), 1),
        case("403 Status with a string code is no Status", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","code":"x"}"#.into(), Err(r#"{"kind":"Status","status":"Failure","message":"m","code":"x"}"#), 1),
        case("403 Status with bad metadata is no Status", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","metadata":{"resourceVersion":5}}"#.into(), Err(r#"{"kind":"Status","status":"Failure","message":"m","metadata":{"resourceVersion":5}}"#), 1),
        case("403 Status with bad details is no Status", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","details":{"name":5}}"#.into(), Err(r#"{"kind":"Status","status":"Failure","message":"m","details":{"name":5}}"#), 1),
        case("403 Status with details an array is no Status", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","details":["n","g","k","u",null,5]}"#.into(),
            Err(r#"{"kind":"Status","status":"Failure","message":"m","details":["n","g","k","u",null,5]}"#), 1),
        case("403 JSON Status with details an array is no Status", b1, 403, &[("content-type", "application/json")],
            r#"{"kind":"Status","status":"Failure","message":"m","details":["n","g","k","u",null,5]}"#.into(), Err("unknown"), 1),
        case("403 Status with metadata an array is no Status", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","metadata":[]}"#.into(),
            Err(r#"{"kind":"Status","status":"Failure","message":"m","metadata":[]}"#), 1),
        case("403 Status with a cause an array is no Status", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","details":{"causes":[["r","m","f"]]}}"#.into(),
            Err(r#"{"kind":"Status","status":"Failure","message":"m","details":{"causes":[["r","m","f"]]}}"#), 1),
        case("403 Status with a null cause", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","details":{"causes":[null,{"reason":"r"}]}}"#.into(), Err("m"), 1),
        case("403 Status with null details and metadata", b1, 403, &[], r#"{"kind":"Status","status":"Failure","message":"m","details":null,"metadata":null}"#.into(), Err("m"), 1),
        case("503 InternalError Status with details an array is no Status: not retried", b1, 503, &[],
            r#"{"kind":"Status","status":"Failure","message":"m","reason":"InternalError","details":[]}"#.into(), Err("the server is currently unable to handle the request"), 1),
        case("503 Status of authentication.k8s.io/v1beta1, InternalError: retried", b1, 503, &[],
            r#"{"kind":"Status","apiVersion":"authentication.k8s.io/v1beta1","status":"Failure","message":"m","reason":"InternalError","code":500}"#.into(), Err("m"), 5),
        // Retry-After above zero retries any status (details.retryAfterSeconds).
        case("400, Retry-After: 1", b1, 400, RA, "bad".into(), Err("the server rejected our request for an unknown reason"), 5),
        case("401, Retry-After: 1", b1, 401, RA, "x".into(), Err("the server has asked for the client to provide credentials"), 5),
        case("403, Retry-After: 1", b1, 403, RA, "x".into(), Err("x"), 5),
        case("404, Retry-After: 1", b1, 404, RA, "bad".into(), Err("the server could not find the requested resource"), 5),
        case("409, Retry-After: 1", b1, 409, RA, "x".into(), Err("the server reported a conflict"), 5),
        case("302, Retry-After: 1", b1, 302, RA, "x".into(), Err("the server responded with the status code 302 but did not return more information"), 5),
        case("400, Retry-After: +1", b1, 400, &[("retry-after", "+1")], "x".into(), Err("the server rejected our request for an unknown reason"), 5),
        case("400, Retry-After: 0", b1, 400, &[("retry-after", "0")], "x".into(), Err("the server rejected our request for an unknown reason"), 1),
        case("400, Retry-After: -1", b1, 400, &[("retry-after", "-1")], "x".into(), Err("the server rejected our request for an unknown reason"), 1),
        case("400, Retry-After: space 1 tab", b1, 400, &[("retry-after", " 1\t")], "x".into(), Err("the server rejected our request for an unknown reason"), 5),
        case("400, Retry-After: 1 no-break space", b1, 400, &[("retry-after", "1\u{a0}")], "x".into(), Err("the server rejected our request for an unknown reason"), 1),
        case("400, Retry-After: no-break space 1", b1, 400, &[("retry-after", "\u{a0}1")], "x".into(), Err("the server rejected our request for an unknown reason"), 1),
        case("400, Retry-After: 1 ideographic space", b1, 400, &[("retry-after", "1\u{3000}")], "x".into(), Err("the server rejected our request for an unknown reason"), 1),
        case("400, Retry-After: 1.5", b1, 400, &[("retry-after", "1.5")], "x".into(), Err("the server rejected our request for an unknown reason"), 1),
        case("400, Retry-After 2^32+1 (int32 1)", b1, 400, &[("retry-after", "4294967297")], "x".into(), Err("the server rejected our request for an unknown reason"), 5),
        case("400, Retry-After 2^31 (int32 negative)", b1, 400, &[("retry-after", "2147483648")], "x".into(), Err("the server rejected our request for an unknown reason"), 1),
        case("400, Retry-After: 1, a Status body decides", b1, 400, &[("retry-after", "1"), ("content-type", "application/json")],
            r#"{"kind":"Status","status":"Failure","message":"sm","reason":"BadRequest","code":400}"#.into(), Err("sm"), 1),
        case("400, Retry-After: 1, a JSON body that is no Status", b1, 400, &[("retry-after", "1"), ("content-type", "application/json")],
            "{}".into(), Err("the server rejected our request for an unknown reason"), 5),
    ];
    let pki = Pki::new();
    let reply = Arc::new(Mutex::new((
        200u16,
        Vec::<(&'static str, String)>::new(),
        Vec::<u8>::new(),
    )));
    let r = reply.clone();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        move |_, _| {
            let (code, headers, body) = r.lock().unwrap().clone();
            Reply::Http(code, headers, body)
        },
    )
    .await;
    let mut failures = Vec::new();
    for c in &cases {
        *reply.lock().unwrap() = (
            c.code,
            c.headers.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            c.body.clone().into_bytes(),
        );
        let mut o = opts(c.version, Arc::default());
        o.backoff.initial = Duration::from_millis(1);
        let info = ConnectionInfo::new(server.url("/authn"))
            .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
            .with_trust_env(false);
        let w = webhook(info, o);
        let before = server.calls();
        let got = w.authenticate_token(TOKEN, &Context::default()).await;
        let calls = server.calls() - before;
        let got = match got {
            Ok(Some(r)) => Ok(r.user.name().to_owned()),
            Ok(None) => Err("<not mine>".to_owned()),
            Err(e) => Err(e.to_string()),
        };
        let want = c.want.map(str::to_owned).map_err(str::to_owned);
        if got != want || calls != c.calls {
            failures.push(format!(
                "{}: want {want:?} in {} calls, got {got:?} in {calls}",
                c.name, c.calls
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The answer's `kind` and `apiVersion` quoted into a decoding error are backend text: the
/// token removed, each cut to 2 KiB, and control characters written as spaces where Go does
/// not quote them (`%q` keeps Go's escapes), in the error and in the warning that logs it. The
/// texts are otherwise Go's (`webhook.New`, k8s.io/apiserver v0.37.2, printed the same rows
/// with the token unredacted and the long values whole).
#[tokio::test]
async fn answer_types_in_errors_never_show_the_token_nor_forge_log_lines() {
    const AUTHN: &str = r#""status":{"authenticated":true,"user":{"username":"a"}}"#;
    const SCHEME: &str = r#"in scheme "pkg/runtime/scheme.go:111""#;
    let long = "k".repeat(200_000);
    // (name, apiVersion, kind, the error)
    let cases: Vec<(&str, String, String, String)> = vec![
        (
            "kind the token",
            "authentication.k8s.io/v1beta1".into(),
            TOKEN.into(),
            format!(
                r#"no kind "<redacted>" is registered for version "authentication.k8s.io/v1beta1" {SCHEME}"#
            ),
        ),
        (
            "the token in a group/version with three parts",
            format!("a/b/{TOKEN}"),
            "TokenReview".into(),
            "unexpected GroupVersion string: a/b/<redacted>".into(),
        ),
        (
            "the token as the group",
            format!("{TOKEN}/v1"),
            "TokenReview".into(),
            format!(r#"no kind "TokenReview" is registered for version "<redacted>/v1" {SCHEME}"#),
        ),
        (
            "the token as the group of the internal version",
            format!("{TOKEN}/__internal"),
            "TokenReview".into(),
            format!(
                r#"no kind "TokenReview" is registered for the internal version of group "<redacted>" {SCHEME}"#
            ),
        ),
        (
            "a line break in a group/version with three parts",
            "a/b/x\nFAKE LOG LINE".into(),
            "TokenReview".into(),
            "unexpected GroupVersion string: a/b/x FAKE LOG LINE".into(),
        ),
        (
            "a line break in kind, quoted as Go quotes it",
            "authentication.k8s.io/v1beta1".into(),
            "x\nFAKE LOG LINE".into(),
            format!(
                r#"no kind "x\nFAKE LOG LINE" is registered for version "authentication.k8s.io/v1beta1" {SCHEME}"#
            ),
        ),
        (
            "a 200 kB kind",
            "authentication.k8s.io/v1beta1".into(),
            long.clone(),
            format!(
                r#"no kind "{}" is registered for version "authentication.k8s.io/v1beta1" {SCHEME}"#,
                &long[..2048]
            ),
        ),
        (
            "a 200 kB version",
            format!("g/{long}"),
            "TokenReview".into(),
            format!(
                r#"no kind "TokenReview" is registered for version "g/{}" {SCHEME}"#,
                &long[..2046]
            ),
        ),
        (
            "a 200 kB group/version with three parts",
            format!("a/b/{long}"),
            "TokenReview".into(),
            format!("unexpected GroupVersion string: a/b/{}", &long[..2044]),
        ),
    ];
    let pki = Pki::new();
    let body = Arc::new(Mutex::new(String::new()));
    let b = body.clone();
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        move |_, _| {
            Reply::Http(
                200,
                vec![("content-type", "application/json".into())],
                b.lock().unwrap().clone().into_bytes(),
            )
        },
    )
    .await;
    let info = || {
        ConnectionInfo::new(server.url("/authn"))
            .with_ca(Pem::Data(pki.ca_pem.clone().into_bytes()))
            .with_trust_env(false)
    };
    // The warning's callsite registered by this thread, under a subscriber: with a single
    // scoped subscriber alive, tracing caches the interest of a callsite another test's thread
    // registers first as that thread's (none), until the next subscriber recomputes it.
    {
        let _warm_up = capture_logs();
        *body.lock().unwrap() = r#"{"apiVersion":"a/b/c"}"#.into();
        let _ = webhook(info(), opts(Version::V1Beta1, Arc::default()))
            .authenticate_token(TOKEN, &Context::default())
            .await;
    }
    let mut failures = Vec::new();
    for (case, api_version, kind, want) in &cases {
        *body.lock().unwrap() = format!(
            "{{\"apiVersion\":{},\"kind\":{},{AUTHN}}}",
            json!(api_version),
            json!(kind)
        );
        let w = webhook(info(), opts(Version::V1Beta1, Arc::default()));
        let (logs, guard) = capture_logs();
        let e = w
            .authenticate_token(TOKEN, &Context::default())
            .await
            .expect_err(case);
        drop(guard);
        let logs = logs.text();
        if e.to_string() != *want {
            failures.push(format!("{case}: want {want:?}, got {:?}", e.to_string()));
        }
        let warning = format!("Failed to make webhook authenticator request: {want}");
        if !logs.contains(&warning) {
            failures.push(format!("{case}: the warning is not logged: {logs:?}"));
        }
        if logs.contains(TOKEN) {
            failures.push(format!("{case}: the token is logged"));
        }
        if logs.lines().any(|l| l.starts_with("FAKE")) {
            failures.push(format!("{case}: a forged log line"));
        }
        if let Some(l) = logs.lines().find(|l| l.len() > 8 * 1024) {
            failures.push(format!("{case}: a log line of {} bytes", l.len()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
