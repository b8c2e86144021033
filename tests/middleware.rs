//! The Tower middleware end to end: header stripping, the 401 body, audiences, metrics, logs,
//! and a real hyper server (HTTP/1.1 through reqwest, HTTP/2 through hyper's client).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

mod log_support;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use kube_authn::authenticator::{
    Audiences, AuthFuture, AuthResult, Context, RequestAuthenticator, SyncPasswordFn, SyncTokenFn,
};
use kube_authn::chain::{Chain, ChainBuilder, anonymous::Anonymous};
use kube_authn::metrics::{Metrics, Outcome};
use kube_authn::middleware::{
    Authenticated, AuthenticationLayer, CloseConnection, GrpcUnauthenticated, UnavailableAs503,
};
use kube_authn::request::Basic;
use kube_authn::user::UserInfo;
use kube_authn::{Error, ErrorKind, Response as AuthResponse};
use log_support::capture_logs;
use tower::{Layer, Service, ServiceExt, service_fn};

const COMPACT_401: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";
const PRETTY_401: &str = "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"Unauthorized\",\n  \"reason\": \"Unauthorized\",\n  \"code\": 401\n}";
const TOKEN: &str = "s3cr3t-t0ken-value";

/// The token authenticator every test uses: a fixed map (the token file lands on another
/// branch).
fn tokens() -> SyncTokenFn<impl Fn(&str, &Context) -> AuthResult + Send + Sync> {
    let map: HashMap<&'static str, Arc<UserInfo>> = HashMap::from([
        (
            TOKEN,
            Arc::new(UserInfo::builder("jane").uid("42").group("dev").build()),
        ),
        ("admin-token", Arc::new(UserInfo::new("admin"))),
    ]);
    SyncTokenFn::new(move |t: &str, _: &Context| {
        Ok(map.get(t).map(|u| AuthResponse::new(u.clone())))
    })
}

fn chain(anonymous: bool) -> Chain {
    let b = ChainBuilder::new().token(tokens());
    if anonymous {
        b.anonymous(Anonymous::new()).build()
    } else {
        b.build()
    }
}

/// An inner service that reports who it saw and which headers reached it.
async fn echo(req: Request<Full<Bytes>>) -> Result<Response<Full<Bytes>>, Infallible> {
    let who = match Authenticated::from_request(&req) {
        Some(a) => format!(
            "{} groups={:?} auds={:?}",
            a.user.name(),
            a.user.groups().collect::<Vec<_>>(),
            a.audiences
        ),
        None => "nobody".into(),
    };
    let mut headers: Vec<String> = req
        .headers()
        .iter()
        .map(|(k, v)| format!("{k}={}", String::from_utf8_lossy(v.as_bytes())))
        .collect();
    headers.sort();
    Ok(Response::new(Full::new(Bytes::from(format!(
        "{who}\n{}",
        headers.join("\n")
    )))))
}

async fn send(
    layer: &AuthenticationLayer<impl kube_authn::middleware::OnFailure>,
    req: Request<Full<Bytes>>,
) -> (StatusCode, http::HeaderMap, String) {
    let res = layer.layer(service_fn(echo)).oneshot(req).await.unwrap();
    let (parts, body) = res.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

fn get(uri: &str, headers: &[(&str, &str)]) -> Request<Full<Bytes>> {
    let mut b = Request::get(uri);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Full::default()).unwrap()
}

/// An inner service that counts how often it is cloned (axum's routes are boxed services whose
/// clone allocates).
#[derive(Default)]
struct CountsClones {
    clones: Arc<std::sync::atomic::AtomicUsize>,
}

impl Clone for CountsClones {
    fn clone(&self) -> Self {
        self.clones
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        CountsClones {
            clones: self.clones.clone(),
        }
    }
}

impl Service<Request<Full<Bytes>>> for CountsClones {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Self::Response, Infallible>>;
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, _: Request<Full<Bytes>>) -> Self::Future {
        std::future::ready(Ok(Response::new(Full::default())))
    }
}

#[tokio::test]
async fn synchronous_chains_never_clone_the_inner_service() {
    let inner = CountsClones::default();
    let clones = inner.clones.clone();
    let mut svc = AuthenticationLayer::new(chain(false)).layer(inner);
    let auth = format!("Bearer {TOKEN}");
    for (name, req, status) in [
        ("authenticated", get("/", &[("authorization", &auth)]), 200),
        (
            "refused",
            get("/", &[("authorization", "Bearer nope")]),
            401,
        ),
        ("no credential", get("/", &[]), 401),
    ] {
        let res = svc.ready().await.unwrap().call(req).await.unwrap();
        assert_eq!(res.status(), status, "{name}");
    }
    assert_eq!(clones.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn identity_reaches_handler_and_credentials_do_not() {
    let layer = AuthenticationLayer::new(chain(false));
    let bearer = format!("Bearer {TOKEN}");
    let (status, _, body) = send(
        &layer,
        get(
            "/api",
            &[
                ("authorization", &bearer),
                ("x-remote-user", "mallory"),
                ("x_remote_group", "system:masters"),
                ("X-Remote-Extra-Scopes", "all"),
                ("x-remote-uid", "0"),
                ("accept", "application/json"),
            ],
        ),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        "jane groups=[\"dev\", \"system:authenticated\"] auds=[]\naccept=application/json"
    );
}

#[tokio::test]
async fn websocket_token_protocol_removed() {
    let layer = AuthenticationLayer::new(chain(false));
    // base64url("s3cr3t-t0ken-value")
    let proto = "base64url.bearer.authorization.k8s.io.czNjcjN0LXQwa2VuLXZhbHVl, v4.channel.k8s.io";
    let (status, _, body) = send(
        &layer,
        get(
            "/api/v1/namespaces/default/pods/p/exec",
            &[
                ("connection", "Upgrade"),
                ("upgrade", "websocket"),
                ("sec-websocket-protocol", proto),
            ],
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("jane "), "{body}");
    assert!(
        body.contains("sec-websocket-protocol=v4.channel.k8s.io"),
        "{body}"
    );
    assert!(!body.contains("czNjcjN0"), "{body}");
}

/// The token subprotocol never reaches the application, whoever authenticated the request:
/// Kubernetes strips it only after the WebSocket authenticator itself succeeds; this crate
/// after every success (docs/compatibility.md).
#[tokio::test]
async fn token_protocol_removed_after_any_success() {
    // base64url("admin-token"): a live token the application must not see, even unread; also
    // behind a no-break space (Go's `strings.TrimSpace` removes it, so a Go reader downstream
    // would use the token) or inside another entry.
    let protos = [
        "base64url.bearer.authorization.k8s.io.YWRtaW4tdG9rZW4, v4.channel.k8s.io",
        "\u{a0}base64url.bearer.authorization.k8s.io.YWRtaW4tdG9rZW4, v4.channel.k8s.io",
        "x-base64url.bearer.authorization.k8s.io.YWRtaW4tdG9rZW4,v4.channel.k8s.io",
    ];
    let bearer = format!("Bearer {TOKEN}");
    let upgrade: &[(&str, &str)] = &[("connection", "Upgrade"), ("upgrade", "websocket")];
    // (name, anonymous enabled, headers besides the subprotocol, who the handler sees)
    type Case<'a> = (&'a str, bool, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (
            "bearer success on a WebSocket request",
            false,
            [upgrade, &[("authorization", bearer.as_str())]].concat(),
            "jane ",
        ),
        (
            "bearer success on a plain request",
            false,
            vec![("authorization", bearer.as_str())],
            "jane ",
        ),
        (
            "anonymous on a plain request",
            true,
            vec![],
            "system:anonymous ",
        ),
    ];
    for (name, anonymous, headers, who) in cases {
        for proto in protos {
            let mut headers = headers.clone();
            headers.push(("sec-websocket-protocol", proto));
            let layer = AuthenticationLayer::new(chain(anonymous));
            let (status, _, body) = send(&layer, get("/api", &headers)).await;
            assert_eq!(status, 200, "{name}, {proto:?}: {body}");
            assert!(body.starts_with(who), "{name}, {proto:?}: {body}");
            assert!(
                body.contains("sec-websocket-protocol=v4.channel.k8s.io"),
                "{name}, {proto:?}: {body}"
            );
            assert!(!body.contains("YWRtaW4"), "{name}, {proto:?}: {body}");
        }
    }
}

#[tokio::test]
async fn unauthorized_bodies_are_exact() {
    let layer = AuthenticationLayer::new(chain(false));
    type Headers<'a> = &'a [(&'a str, &'a str)];
    let cases: &[(&str, &str, Headers<'_>, &str)] = &[
        ("no credential", "/api", &[], COMPACT_401),
        (
            "bad token",
            "/api",
            &[("authorization", "Bearer wrong")],
            COMPACT_401,
        ),
        ("pretty=true", "/api?pretty=true", &[], PRETTY_401),
        (
            "pretty=false beats curl",
            "/api?pretty=false",
            &[("user-agent", "curl/8.5.0")],
            COMPACT_401,
        ),
        ("curl", "/api", &[("user-agent", "curl/8.5.0")], PRETTY_401),
        (
            "browser",
            "/api",
            &[("user-agent", "Mozilla/5.0 (X11; Linux x86_64)")],
            PRETTY_401,
        ),
        (
            "kubectl",
            "/api",
            &[("user-agent", "kubectl/v1.31.0 (linux/amd64)")],
            COMPACT_401,
        ),
        // Content negotiation (apimachinery's NegotiateMediaTypeOptions).
        (
            "accept json",
            "/api",
            &[("accept", "application/json")],
            COMPACT_401,
        ),
        ("accept anything", "/api", &[("accept", "*/*")], COMPACT_401),
        ("accept bare star", "/api", &[("accept", "*")], COMPACT_401),
        (
            "accept application/*",
            "/api",
            &[("accept", "application/*")],
            COMPACT_401,
        ),
        (
            "no acceptable type: WriteRawJSON's indented form",
            "/api",
            &[("accept", "text/plain")],
            PRETTY_401,
        ),
        (
            "types are compared case-sensitively",
            "/api",
            &[("accept", "Application/JSON")],
            PRETTY_401,
        ),
        (
            "a conversion is not acceptable here",
            "/api",
            &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            PRETTY_401,
        ),
        (
            "the next clause is",
            "/api",
            &[(
                "accept",
                "application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
            )],
            COMPACT_401,
        ),
        (
            "pretty=1 on the accepted clause",
            "/api",
            &[("accept", "application/json;pretty=1")],
            PRETTY_401,
        ),
        (
            "pretty=true is not 1",
            "/api",
            &[("accept", "application/json;pretty=true")],
            COMPACT_401,
        ),
        (
            "the higher q decides which clause's pretty counts",
            "/api",
            &[(
                "accept",
                "application/json;q=0.5, application/json;pretty=1;q=0.9",
            )],
            PRETTY_401,
        ),
        (
            "prometheus' Accept ends in */*",
            "/api",
            &[(
                "accept",
                "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
            )],
            COMPACT_401,
        ),
    ];
    for (name, uri, headers, want) in cases {
        let (status, h, body) = send(&layer, get(uri, headers)).await;
        assert_eq!(status, 401, "{name}");
        assert_eq!(body, *want, "{name}");
        assert_eq!(h["content-type"], "application/json", "{name}");
        assert_eq!(h["cache-control"], "no-cache, private", "{name}");
        assert!(h.get("www-authenticate").is_none(), "{name}");
    }
}

#[tokio::test]
async fn www_authenticate_only_when_basic_is_accepted() {
    let basic = Basic::new(SyncPasswordFn::new(|u: &str, p: &str, _: &Context| {
        Ok((u == "admin" && p == "pw").then(|| AuthResponse::new(UserInfo::new(u).into())))
    }));
    let layer =
        AuthenticationLayer::new(ChainBuilder::new().request(basic).token(tokens()).build());
    assert!(layer.schemes().basic() && layer.schemes().bearer());
    assert_eq!(
        layer.security_definitions(),
        serde_json::json!({
            "BearerToken": {"type": "apiKey", "name": "authorization", "in": "header", "description": "Bearer Token authentication"},
            "HTTPBasic": {"type": "basic", "description": "HTTP Basic authentication"},
        })
    );
    let (status, h, _) = send(&layer, get("/", &[])).await;
    assert_eq!(status, 401);
    assert_eq!(h["www-authenticate"], "Basic realm=\"kubernetes-master\"");
    // base64("admin:pw")
    let (status, _, body) =
        send(&layer, get("/", &[("authorization", "Basic YWRtaW46cHc=")])).await;
    assert_eq!(status, 200);
    assert!(body.starts_with("admin "));

    let bearer_only = AuthenticationLayer::new(chain(false));
    let (_, h, _) = send(&bearer_only, get("/", &[])).await;
    assert!(h.get("www-authenticate").is_none());
}

#[tokio::test]
async fn anonymous_never_swallows_a_bad_credential() {
    let layer = AuthenticationLayer::new(chain(true));
    type Headers<'a> = &'a [(&'a str, &'a str)];
    let cases: &[(&str, Headers<'_>, u16, &str)] = &[
        ("no credential", &[], 200, "system:anonymous "),
        (
            "unknown token",
            &[("authorization", "Bearer nope")],
            401,
            "",
        ),
        (
            "malformed bearer",
            &[("authorization", "Bearer  x")],
            401,
            "",
        ),
        (
            "two headers",
            &[("authorization", "Bearer a"), ("authorization", "Bearer b")],
            401,
            "",
        ),
        (
            "other scheme is anonymous, header stripped",
            &[("authorization", "Digest x")],
            200,
            "system:anonymous ",
        ),
    ];
    for (name, headers, want, prefix) in cases {
        let (status, _, body) = send(&layer, get("/", headers)).await;
        assert_eq!(status.as_u16(), *want, "{name}: {body}");
        if *want == 200 {
            assert!(body.starts_with(prefix), "{name}: {body}");
            assert!(!body.contains("authorization="), "{name}: {body}");
        }
    }
}

/// A request authenticator that always answers the same thing.
struct Fixed(fn() -> AuthResult);
impl RequestAuthenticator for Fixed {
    fn authenticate_request<'a>(
        &'a self,
        _: &'a http::request::Parts,
        _: &'a Context,
    ) -> AuthFuture<'a> {
        AuthFuture::ready((self.0)())
    }
}

fn admin() -> AuthResult {
    Ok(Some(AuthResponse::new(UserInfo::new("admin").into())))
}
fn admin_x() -> AuthResult {
    Ok(Some(
        AuthResponse::new(UserInfo::new("admin").into())
            .with_audiences(Audiences::from(["audience-x"])),
    ))
}

/// k8s `TestMetrics` (§8.4), through the layer.
#[tokio::test]
async fn metrics_vectors() {
    const OK: &str = "# HELP authenticated_user_requests [ALPHA] Counter of authenticated requests broken out by username.\n# TYPE authenticated_user_requests counter\nauthenticated_user_requests{username=\"admin\"} 1\n# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.\n# TYPE authentication_attempts counter\nauthentication_attempts{result=\"success\"} 1\n";
    const ERR: &str = "# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.\n# TYPE authentication_attempts counter\nauthentication_attempts{result=\"error\"} 1\n";
    const FAIL: &str = "# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.\n# TYPE authentication_attempts counter\nauthentication_attempts{result=\"failure\"} 1\n";
    type Case = (
        &'static str,
        fn() -> AuthResult,
        &'static [&'static str],
        u16,
        &'static str,
    );
    let cases: &[Case] = &[
        ("auth ok", admin, &[], 200, OK),
        (
            "auth failed with error",
            || Err(Error::msg("some error")),
            &[],
            401,
            ERR,
        ),
        ("auth failed with status false", || Ok(None), &[], 401, FAIL),
        (
            "audiences not intersecting",
            admin_x,
            &["audience-y"],
            401,
            ERR,
        ),
        (
            "audiences not provided in response",
            admin,
            &["audience-y"],
            200,
            OK,
        ),
        ("audiences not provided in request", admin_x, &[], 200, OK),
    ];
    for (name, answer, api, want_status, want) in cases {
        let metrics = Arc::new(Metrics::new());
        let layer =
            AuthenticationLayer::builder(Chain::from_authenticator(Arc::new(Fixed(*answer))))
                .api_audiences(Audiences::new(api.iter()))
                .metrics(metrics.clone())
                .build();
        let (status, _, _) = send(&layer, get("/", &[])).await;
        assert_eq!(status.as_u16(), *want_status, "{name}");
        let mut text = String::new();
        metrics.encode_counters(&mut text);
        assert_eq!(text, *want, "{name}");
        // The histogram is recorded with the same result label.
        let mut all = String::new();
        metrics.encode(&mut all);
        let result = if want.contains("success") {
            "success"
        } else if want.contains("error") {
            "error"
        } else {
            "failure"
        };
        assert!(
            all.contains(&format!(
                "authentication_duration_seconds_count{{result=\"{result}\"}} 1\n"
            )),
            "{name}: {all}"
        );
    }
}

#[tokio::test]
async fn audience_mismatch_is_401_and_logged_with_k8s_text() {
    let (logs, _guard) = capture_logs();
    let metrics = Arc::new(Metrics::new());
    let layer = AuthenticationLayer::builder(Chain::from_authenticator(Arc::new(Fixed(admin_x))))
        .api_audiences(Audiences::from(["audience-y"]))
        .metrics(metrics.clone())
        .build();
    let (status, _, body) = send(&layer, get("/", &[])).await;
    assert_eq!(status, 401);
    assert_eq!(body, COMPACT_401);
    assert_eq!(metrics.attempts(Outcome::Error), 1);
    let text = logs.text();
    assert!(
        text.contains("unable to match the audience: [audience-x] , accepted: [audience-y]"),
        "{text}"
    );
}

#[tokio::test]
async fn api_audiences_reach_the_authenticators() {
    struct EchoAudiences;
    impl RequestAuthenticator for EchoAudiences {
        fn authenticate_request<'a>(
            &'a self,
            _: &'a http::request::Parts,
            ctx: &'a Context,
        ) -> AuthFuture<'a> {
            let auds = ctx.audiences().cloned().unwrap_or_default();
            AuthFuture::ready(Ok(Some(
                AuthResponse::new(UserInfo::new("u").into()).with_audiences(auds),
            )))
        }
    }
    let layer = AuthenticationLayer::builder(Chain::from_authenticator(Arc::new(EchoAudiences)))
        .api_audiences(Audiences::from(["api", "other"]))
        .build();
    let (status, _, body) = send(&layer, get("/", &[])).await;
    assert_eq!(status, 200);
    assert!(
        body.starts_with("u groups=[] auds=[\"api\", \"other\"]"),
        "{body}"
    );
}

#[tokio::test]
async fn unavailable_backend_opt_in_503_and_grpc() {
    let down = || Err(Error::from_static(ErrorKind::Unavailable, "webhook down"));
    let chain = Chain::from_authenticator(Arc::new(Fixed(down)));
    let default = AuthenticationLayer::new(chain.clone());
    assert_eq!(send(&default, get("/", &[])).await.0, 401);
    let opt_in = AuthenticationLayer::builder(chain.clone())
        .on_failure(UnavailableAs503::new())
        .build();
    let (status, h, body) = send(&opt_in, get("/", &[])).await;
    assert_eq!(status, 503);
    assert_eq!(h["retry-after"], "1");
    assert_eq!(
        body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the authentication backend is unavailable\",\"reason\":\"ServiceUnavailable\",\"code\":503}\n"
    );
    let grpc = AuthenticationLayer::builder(chain)
        .on_failure(GrpcUnauthenticated::default())
        .build();
    let (status, h, body) = send(&grpc, get("/pkg.Svc/Call", &[])).await;
    assert_eq!(
        (
            status.as_u16(),
            h["grpc-status"].to_str().unwrap(),
            body.as_str()
        ),
        (200, "16", "")
    );
}

/// Path conditions compare the decoded path, as Kubernetes does, but axum routes on the raw
/// one: `/%68ealthz` is anonymous under `with_paths(["/healthz"])` and misses the `/healthz`
/// route, so a fallback handler serves it as `system:anonymous`. With
/// `require_raw_path_match` it is not anonymous (401); `/healthz` itself still is.
#[tokio::test]
async fn raw_path_match_keeps_other_spellings_of_anonymous_paths_from_fallbacks() {
    use axum::extract::Request as AxumRequest;
    let app = |anonymous: Anonymous| {
        axum::Router::new()
            .route("/healthz", axum::routing::get(|| async { "healthz" }))
            .fallback(|req: AxumRequest| async move {
                let who = Authenticated::from_request(&req).map(|a| a.user.name().to_owned());
                format!("fallback as {}", who.unwrap_or_default())
            })
            .layer(AuthenticationLayer::new(
                ChainBuilder::new()
                    .token(tokens())
                    .anonymous(anonymous)
                    .build(),
            ))
    };
    let ask = |anonymous: Anonymous, path: &'static str| async move {
        let req = AxumRequest::get(path)
            .body(axum::body::Body::empty())
            .unwrap();
        let res = app(anonymous).oneshot(req).await.unwrap();
        let status = res.status();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        (status.as_u16(), String::from_utf8(body.to_vec()).unwrap())
    };
    let decoded = || Anonymous::with_paths(["/healthz"]);
    let raw = || Anonymous::with_paths(["/healthz"]).require_raw_path_match();
    assert_eq!(ask(decoded(), "/healthz").await, (200, "healthz".into()));
    assert_eq!(
        ask(decoded(), "/%68ealthz").await,
        (200, "fallback as system:anonymous".into())
    );
    assert_eq!(ask(raw(), "/healthz").await, (200, "healthz".into()));
    assert_eq!(
        ask(raw(), "/healthz?verbose").await,
        (200, "healthz".into())
    );
    assert_eq!(ask(raw(), "/%68ealthz").await.0, 401);
    assert_eq!(ask(raw(), "/admin").await.0, 401);
}

/// An authenticator's error text is the attacker's to choose (an OIDC claim value, a
/// webhook's message): the middleware's log line shows it escaped, so a line break in it
/// cannot forge a log line of its own.
#[tokio::test]
async fn authentication_errors_cannot_forge_log_lines() {
    let (logs, _guard) = capture_logs();
    let forged = "x\n2026-01-01T00:00:00.000000Z  INFO kube_authn: user admin authenticated (FORGED)\r\rFORGED-CR";
    let layer = AuthenticationLayer::new(
        ChainBuilder::new()
            .token(SyncTokenFn::new(move |_: &str, _: &Context| {
                Err(Error::new(ErrorKind::InvalidCredential, forged.to_owned()))
            }))
            .build(),
    );
    let (status, _, _) = send(&layer, get("/api", &[("authorization", "Bearer t")])).await;
    assert_eq!(status, 401);
    let text = logs.text();
    assert!(!text.contains('\r'), "{text:?}");
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("FORGED")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].contains("Unable to authenticate the request"),
        "{text}"
    );
    assert!(lines[0].contains(r"x\n2026-01-01T00:00:00"), "{text}");
    assert!(lines[0].contains(r"(FORGED)\r\rFORGED-CR"), "{text}");
}

#[tokio::test]
async fn secrets_never_reach_the_logs() {
    let (logs, _guard) = capture_logs();
    let layer = AuthenticationLayer::new(chain(true));
    let wrong = "wr0ng-but-secret-t0ken";
    let bearer = format!("Bearer {wrong}");
    let (status, _, _) = send(
        &layer,
        get("/api?token=q5ecret", &[("authorization", &bearer)]),
    )
    .await;
    assert_eq!(status, 401);
    let good = format!("Bearer {TOKEN}");
    let (status, _, _) = send(
        &layer,
        get(
            "/api",
            &[("authorization", &good), ("x-remote-user", "h3ader-value")],
        ),
    )
    .await;
    assert_eq!(status, 200);
    // base64("admin:hunter2-pw")
    let (status, _, _) = send(
        &layer,
        get(
            "/api",
            &[("authorization", "Basic YWRtaW46aHVudGVyMi1wdw==")],
        ),
    )
    .await;
    assert_eq!(status, 200); // nobody handles Basic here: anonymous, header stripped
    let text = logs.text();
    assert!(
        text.contains("Unable to authenticate the request"),
        "{text}"
    );
    assert!(text.contains("invalid bearer token"), "{text}");
    assert!(
        text.contains("user=\"jane\"") || text.contains("user=jane"),
        "{text}"
    );
    for secret in [
        wrong,
        TOKEN,
        "q5ecret",
        "h3ader-value",
        "YWRtaW46aHVudGVyMi1wdw",
        "hunter2",
    ] {
        assert!(!text.contains(secret), "{secret} leaked into:\n{text}");
    }
    // Debug of the layer, its service and an in-flight response future do not show the
    // credential either: with an asynchronous chain the future holds the request's parts
    // (headers included) while it authenticates.
    use kube_authn::authenticator::AsyncTokenFn;
    let waiting = AuthenticationLayer::new(
        ChainBuilder::new()
            .token(AsyncTokenFn::new(|_: String, _: Context| async {
                tokio::task::yield_now().await;
                Ok(None)
            }))
            .build(),
    );
    let mut svc = waiting.layer(service_fn(echo));
    let fut = svc
        .ready()
        .await
        .unwrap()
        .call(get("/", &[("authorization", &good)]));
    let shown = format!("{layer:?} {waiting:?} {svc:?} {fut:?}");
    assert!(shown.contains("ResponseFuture"), "{shown}");
    assert!(!shown.contains(TOKEN), "{shown}");
    assert_eq!(fut.await.unwrap().status(), 401);
}

/// An attempt whose authentication never finishes (hyper drops the request future when the
/// client goes away while a webhook or lookup is pending) is still counted, as an `error`
/// (kube-apiserver: the cancelled context fails the authenticator and its deferred metrics
/// call records it); one that finishes is counted once, with its own result.
#[tokio::test]
async fn abandoned_attempts_are_counted_as_errors() {
    use kube_authn::authenticator::AsyncTokenFn;
    type Case = (&'static str, bool, &'static str);
    let cases: &[Case] = &[
        ("dropped while the chain waits", false, "error"),
        ("answers after a suspension", true, "success"),
    ];
    for (name, answers, want) in cases {
        let answers = *answers;
        let chain = ChainBuilder::new()
            .token(AsyncTokenFn::new(move |_: String, _: Context| async move {
                tokio::task::yield_now().await;
                if !answers {
                    std::future::pending::<()>().await;
                }
                Ok(Some(AuthResponse::new(UserInfo::new("admin").into())))
            }))
            .build();
        let metrics = Arc::new(Metrics::new());
        let layer = AuthenticationLayer::builder(chain)
            .metrics(metrics.clone())
            .build();
        let mut svc = layer.layer(service_fn(echo));
        let fut = svc
            .ready()
            .await
            .unwrap()
            .call(get("/", &[("authorization", "Bearer t")]));
        let done = tokio::time::timeout(std::time::Duration::from_millis(200), fut).await;
        assert_eq!(done.is_ok(), answers, "{name}");
        let mut text = String::new();
        metrics.encode(&mut text);
        assert!(
            text.contains(&format!("authentication_attempts{{result=\"{want}\"}} 1\n")),
            "{name}: {text}"
        );
        assert!(
            text.contains(&format!(
                "authentication_duration_seconds_count{{result=\"{want}\"}} 1\n"
            )),
            "{name}: {text}"
        );
        assert_eq!(
            text.matches("authentication_attempts{").count(),
            1,
            "{name}: {text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A real hyper server.

async fn serve(layer: AuthenticationLayer) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let layer = layer.clone();
            tokio::spawn(async move {
                let notify = Arc::new(tokio::sync::Notify::new());
                let svc = CloseConnection::watch(
                    layer.layer(service_fn(
                        |req: Request<hyper::body::Incoming>| async move {
                            let (parts, body) = req.into_parts();
                            let body = Full::new(body.collect().await.unwrap().to_bytes());
                            echo(Request::from_parts(parts, body)).await
                        },
                    )),
                    notify.clone(),
                );
                let builder = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                );
                let conn = builder.serve_connection(
                    hyper_util::rt::TokioIo::new(stream),
                    hyper_util::service::TowerToHyperService::new(svc),
                );
                tokio::pin!(conn);
                tokio::select! {
                    _ = conn.as_mut() => return,
                    _ = notify.notified() => conn.as_mut().graceful_shutdown(),
                }
                let _ = conn.await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_server_http1_with_reqwest() {
    let addr = serve(AuthenticationLayer::new(chain(true))).await;
    let client = reqwest::Client::new();
    let base = format!("http://{addr}");

    let res = client
        .get(format!("{base}/api"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body = res.text().await.unwrap();
    assert!(
        body.starts_with("jane groups=[\"dev\", \"system:authenticated\"]"),
        "{body}"
    );
    assert!(!body.contains("authorization"), "{body}");

    let res = client
        .get(format!("{base}/api"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(res.headers()["content-type"], "application/json");
    assert_eq!(res.headers()["content-length"], "129");
    assert_eq!(res.text().await.unwrap(), COMPACT_401);

    let res = client
        .get(format!("{base}/api"))
        .bearer_auth("wrong")
        .header("user-agent", "curl/8.5.0")
        .send()
        .await
        .unwrap();
    assert_eq!(res.text().await.unwrap(), PRETTY_401);

    let res = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.text().await.unwrap().starts_with("system:anonymous"));
}

/// kube-apiserver's `TestUnauthenticatedHTTP2ClientConnectionClose`, adapted: on one HTTP/2
/// connection, an authenticated request keeps the connection, while a refused or anonymous
/// one makes the server send GOAWAY (the connection ends after the response).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_server_http2_goaway_for_unauthenticated() {
    let addr = serve(AuthenticationLayer::new(chain(true))).await;
    let cases: &[(&str, Option<&str>, u16, bool)] = &[
        ("known user keeps the connection", Some(TOKEN), 200, false),
        ("refused: connection closed", Some("wrong"), 401, true),
        ("anonymous: connection closed", None, 200, true),
    ];
    for (name, token, want_status, want_closed) in cases {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(stream),
        )
        .await
        .unwrap();
        let conn = tokio::spawn(conn);
        let mut req = Request::get(format!("http://{addr}/api"));
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let res = sender
            .send_request(req.body(Full::<Bytes>::default()).unwrap())
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), *want_status, "{name}");
        // On a connection being closed, the client may see the GOAWAY before the body's end
        // (a race between the two under load); on a kept one the body must arrive whole.
        if let Err(e) = res.into_body().collect().await {
            assert!(*want_closed, "{name}: {e}");
        }
        let closed = tokio::time::timeout(std::time::Duration::from_secs(2), conn)
            .await
            .is_ok();
        assert_eq!(closed, *want_closed, "{name}");
    }
}

#[cfg(feature = "axum")]
mod axum_extractor {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;

    async fn whoami(who: Authenticated) -> String {
        who.user.name().to_owned()
    }

    async fn maybe(who: Option<Authenticated>) -> String {
        who.map_or_else(|| "none".to_owned(), |a| a.user.name().to_owned())
    }

    async fn call(app: Router, req: Request<Body>) -> (StatusCode, String) {
        let res = app.oneshot(req).await.unwrap();
        let status = res.status();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    fn req(uri: &str, auth: Option<&str>) -> Request<Body> {
        let mut b = Request::get(uri);
        if let Some(a) = auth {
            b = b.header("authorization", a);
        }
        b.body(Body::empty()).unwrap()
    }

    #[tokio::test]
    async fn extractor_with_layer() {
        let app = Router::new()
            .route("/whoami", get(whoami))
            .route("/maybe", get(maybe))
            .layer(AuthenticationLayer::new(chain(false)));
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(
            call(app.clone(), req("/whoami", Some(&bearer))).await,
            (StatusCode::OK, "jane".into())
        );
        assert_eq!(
            call(app.clone(), req("/maybe", Some(&bearer))).await,
            (StatusCode::OK, "jane".into())
        );
        assert_eq!(
            call(app, req("/whoami", Some("Bearer nope"))).await,
            (StatusCode::UNAUTHORIZED, COMPACT_401.into())
        );
    }

    /// A route without the layer: the extractor fails closed with the 401 Status (pretty for
    /// curl, like the layer), the optional extractor sees `None`.
    #[tokio::test]
    async fn extractor_without_layer_is_401() {
        let app = Router::new()
            .route("/whoami", get(whoami))
            .route("/maybe", get(maybe));
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(
            call(app.clone(), req("/whoami", Some(&bearer))).await,
            (StatusCode::UNAUTHORIZED, COMPACT_401.into())
        );
        let mut curl = req("/whoami", None);
        curl.headers_mut()
            .insert("user-agent", "curl/8.5.0".parse().unwrap());
        assert_eq!(
            call(app.clone(), curl).await,
            (StatusCode::UNAUTHORIZED, PRETTY_401.into())
        );
        assert_eq!(
            call(app, req("/maybe", Some(&bearer))).await,
            (StatusCode::OK, "none".into())
        );
    }
}

/// The chain is evaluated exactly once per request, also when an authenticator has to wait
/// (the middleware never re-runs a chain to avoid its one allocation).
#[tokio::test]
async fn async_chain_runs_exactly_once() {
    use kube_authn::authenticator::AsyncTokenFn;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let sync_calls = Arc::new(AtomicUsize::new(0));
    let async_calls = Arc::new(AtomicUsize::new(0));
    let (s, a) = (sync_calls.clone(), async_calls.clone());
    let chain = ChainBuilder::new()
        .token(SyncTokenFn::new(move |_: &str, _: &Context| {
            s.fetch_add(1, Ordering::SeqCst);
            Ok(None)
        }))
        .token(AsyncTokenFn::new(move |t: String, _: Context| {
            a.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::task::yield_now().await;
                Ok((t == "remote").then(|| AuthResponse::new(UserInfo::new("bob").into())))
            }
        }))
        .build();
    let layer = AuthenticationLayer::new(chain);
    let (status, _, body) = send(&layer, get("/", &[("authorization", "Bearer remote")])).await;
    assert_eq!(status, 200);
    assert!(body.starts_with("bob "), "{body}");
    assert_eq!(sync_calls.load(Ordering::SeqCst), 1);
    assert_eq!(async_calls.load(Ordering::SeqCst), 1);
    let (status, _, _) = send(&layer, get("/", &[("authorization", "Bearer other")])).await;
    assert_eq!(status, 401);
    assert_eq!(sync_calls.load(Ordering::SeqCst), 2);
    assert_eq!(async_calls.load(Ordering::SeqCst), 2);
}

/// Which chains the middleware may authenticate synchronously (no boxed future): only those
/// whose every authenticator declares `always_ready`, through every combinator.
#[test]
fn always_ready_is_declared_through_the_chain() {
    use kube_authn::authenticator::AsyncTokenFn;
    use kube_authn::chain::audiences::AudienceAgnostic;
    use kube_authn::token::file::TokenFile;
    let file = || TokenFile::from_csv(b"t,u,1\n".as_slice(), "mem").unwrap();
    let remote = || AsyncTokenFn::new(|_: String, _: Context| async { Ok(None) });
    let cases: Vec<(&str, Chain, bool)> = vec![
        ("empty chain", ChainBuilder::new().build(), true),
        ("sync tokens + anonymous", chain(true), true),
        (
            "token file behind the audience wrapper",
            ChainBuilder::new()
                .token(AudienceAgnostic::new(["api"].into(), file()))
                .anonymous(Anonymous::new())
                .build(),
            true,
        ),
        (
            "basic over a sync password function",
            ChainBuilder::new()
                .request(Basic::new(SyncPasswordFn::new(
                    |_: &str, _: &str, _: &Context| Ok(None),
                )))
                .build(),
            true,
        ),
        (
            "one async token authenticator among sync ones",
            ChainBuilder::new()
                .token(file())
                .token(remote())
                .anonymous(Anonymous::new())
                .build(),
            false,
        ),
    ];
    for (name, chain, want) in cases {
        assert_eq!(chain.always_ready(), want, "{name}");
    }
}

/// An authenticator that declares `always_ready` but returns a pending future is a bug; the
/// middleware must not let the request through (it cannot await a future that borrows the
/// request head it has already handed on).
#[tokio::test]
async fn a_false_always_ready_fails_closed() {
    struct Liar;
    impl RequestAuthenticator for Liar {
        fn authenticate_request<'a>(
            &'a self,
            _: &'a http::request::Parts,
            _: &'a Context,
        ) -> AuthFuture<'a> {
            AuthFuture::new(async { Ok(Some(AuthResponse::new(UserInfo::new("mallory").into()))) })
        }
        fn always_ready(&self) -> bool {
            true
        }
    }
    let chain = Chain::from_authenticator(Arc::new(Liar));
    assert!(chain.always_ready());
    let layer = AuthenticationLayer::new(chain);
    let (status, _, body) = send(&layer, get("/", &[])).await;
    assert_eq!(status, 401);
    assert_eq!(body, COMPACT_401);
}

/// Identity headers a chain declares (a front proxy's configured names) are stripped after
/// any successful authentication, in both spellings.
#[tokio::test]
async fn declared_identity_headers_are_stripped() {
    use kube_authn::authenticator::Description;
    struct Proxy;
    impl RequestAuthenticator for Proxy {
        fn authenticate_request<'a>(
            &'a self,
            req: &'a http::request::Parts,
            _: &'a Context,
        ) -> AuthFuture<'a> {
            let user = req
                .headers
                .get("x-proxy-user")
                .and_then(|v| v.to_str().ok());
            AuthFuture::ready(Ok(user.map(|u| AuthResponse::new(UserInfo::new(u).into()))))
        }
        fn describe(&self, d: &mut Description) {
            d.add_identity_header(http::HeaderName::from_static("x-proxy-user"));
            d.add_identity_header_prefix("X-Proxy-Extra-");
        }
    }
    let layer =
        AuthenticationLayer::new(ChainBuilder::new().request(Proxy).token(tokens()).build());
    let bearer = format!("Bearer {TOKEN}");
    for (via, headers) in [
        (
            "alice ",
            vec![
                ("x-proxy-user", "alice"),
                ("x-proxy-extra-scopes", "s"),
                ("x_proxy_extra_team", "t"),
                ("keep", "1"),
            ],
        ),
        // `x_proxy_user` is not the proxy's header: the bearer token authenticates.
        (
            "jane ",
            vec![
                ("authorization", bearer.as_str()),
                ("x_proxy_user", "mallory"),
                ("X-Proxy-Extra-Foo", "f"),
                ("keep", "1"),
            ],
        ),
    ] {
        let (status, _, body) = send(&layer, get("/", &headers)).await;
        assert_eq!(status, 200, "{body}");
        let mut lines = body.lines();
        let who = lines.next().unwrap();
        assert!(who.starts_with(via), "{who}");
        assert_eq!(lines.collect::<Vec<_>>(), ["keep=1"], "{headers:?}");
    }
}

/// A wrapper that does not forward `describe` hides its identity headers from the middleware;
/// the builder's `identity_header`/`identity_header_prefix` strip them anyway, as
/// kube-apiserver's filter is given the front proxy's names apart from its authenticator.
#[tokio::test]
async fn builder_identity_headers_are_stripped_without_describe() {
    let bearer = format!("Bearer {TOKEN}");
    let headers = [
        ("authorization", bearer.as_str()),
        ("X-Proxy-User", "mallory"),
        ("x-proxy-extra-scopes", "s"),
        ("keep", "1"),
    ];
    let cases: &[(&str, bool, &[&str])] = &[
        (
            "chain only",
            false,
            &["keep=1", "x-proxy-extra-scopes=s", "x-proxy-user=mallory"],
        ),
        ("builder names", true, &["keep=1"]),
    ];
    for (name, strip, want) in cases {
        let mut builder = AuthenticationLayer::builder(ChainBuilder::new().token(tokens()).build());
        if *strip {
            builder = builder
                .identity_header(http::HeaderName::from_static("x-proxy-user"))
                .identity_header_prefix("X-PROXY-EXTRA-");
        }
        let layer = builder.build();
        let (status, _, body) = send(&layer, get("/", &headers)).await;
        assert_eq!(status, 200, "{name}: {body}");
        let mut lines = body.lines();
        assert!(lines.next().unwrap().starts_with("jane "), "{name}");
        let mut left: Vec<_> = lines.collect();
        left.sort();
        assert_eq!(left, *want, "{name}");
    }
}

/// The HTTP/2 close mark (kube-apiserver's `Connection: close`) is set only for HTTP/2
/// requests that were refused or anonymous.
#[tokio::test]
async fn close_mark_only_for_unauthenticated_http2() {
    let layer = AuthenticationLayer::new(chain(true));
    let bearer = format!("Bearer {TOKEN}");
    let cases: &[(&str, http::Version, Option<&str>, bool)] = &[
        ("h2 known user", http::Version::HTTP_2, Some(&bearer), false),
        (
            "h2 refused",
            http::Version::HTTP_2,
            Some("Bearer nope"),
            true,
        ),
        ("h2 anonymous", http::Version::HTTP_2, None, true),
        (
            "h1 refused",
            http::Version::HTTP_11,
            Some("Bearer nope"),
            false,
        ),
        ("h1 anonymous", http::Version::HTTP_11, None, false),
    ];
    for (name, version, auth, want) in cases {
        let mut req = get("/", &[]);
        *req.version_mut() = *version;
        if let Some(a) = auth {
            req.headers_mut()
                .insert("authorization", a.parse().unwrap());
        }
        let res = layer.layer(service_fn(echo)).oneshot(req).await.unwrap();
        assert_eq!(CloseConnection::is_set(&res), *want, "{name}");
        assert!(res.headers().get("connection").is_none(), "{name}");
    }
    // kube-apiserver's `anonymous_group` case: a user that is not system:anonymous but is in
    // system:unauthenticated is marked too; a user merely named like a group is not.
    for (name, user, want) in [
        (
            "in system:unauthenticated",
            UserInfo::builder("odd")
                .group("system:unauthenticated")
                .build(),
            true,
        ),
        (
            "named system:unauthenticated, in no such group",
            UserInfo::new("system:unauthenticated"),
            false,
        ),
    ] {
        let user = Arc::new(user);
        let fixed = AuthenticationLayer::new(
            ChainBuilder::new()
                .token(SyncTokenFn::new(move |_: &str, _: &Context| {
                    Ok(Some(AuthResponse::new(user.clone())))
                }))
                .build(),
        );
        let mut req = get("/", &[("authorization", &bearer)]);
        *req.version_mut() = http::Version::HTTP_2;
        let res = fixed.layer(service_fn(echo)).oneshot(req).await.unwrap();
        assert_eq!(res.status(), 200, "{name}");
        assert_eq!(CloseConnection::is_set(&res), want, "{name}");
    }
}
