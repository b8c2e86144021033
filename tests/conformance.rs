//! Runs every shared conformance vector (`conformance/vectors/*.json`) through kube-authn.
//!
//! The same vectors are run through k8s.io/apiserver itself by `conformance/run.sh`; here no Go
//! is needed. A vector either carries one expectation (`expect`, kube-authn and Kubernetes
//! agree) or two (`k8s` and `kube_authn`, with the `reason` kube-authn deliberately differs);
//! this test checks the kube-authn one. Every case runs twice: once with scripted handlers that
//! answer at once (the allocation-free ready path) and once with handlers that await before
//! answering (the boxed path), so both paths of every combinator are held to the same table.
//!
//! The vector format is described in `conformance/README.md`. Authenticator kinds that are not
//! on this branch yet are counted as *pending* and printed; the test fails on any case that runs
//! and differs, and on any setup it cannot interpret.
//!
//! Run with `cargo test --test conformance -- --nocapture` to see the counts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use http::request::Parts;
use http::{HeaderName, HeaderValue};
use http_body_util::BodyExt;
use kube_authn::authenticator::{
    AsyncPasswordFn, AsyncTokenFn, AuthFuture, AuthResult, Context, PasswordAuthenticator,
    RequestAuthenticator, Response, SyncPasswordFn, SyncTokenFn, TokenAuthenticator,
};
use kube_authn::chain::anonymous::Anonymous;
use kube_authn::chain::audiences::AudienceAgnostic;
use kube_authn::chain::group::{AuthenticatedGroupAdder, GroupAdder};
use kube_authn::chain::union::{TokenUnion, Union};
use kube_authn::chain::{Chain, ChainBuilder};
use kube_authn::middleware::{Authenticated, AuthenticationLayer};
use kube_authn::password::file::PasswordFile;
use kube_authn::request::{Basic, Bearer, FrontProxy, RequestHeaderConfig, WebSocketProtocol};
use kube_authn::tls::PeerCertificates;
use kube_authn::token::anytoken::AnyToken;
use kube_authn::token::cache::{CachedTokenAuthenticator, KeyFunc, ManualClock};
use kube_authn::token::file::TokenFile;
use kube_authn::user::UserInfo;
use kube_authn::x509::{CaBundle, X509Authenticator, parse_pem_bundle};
use kube_authn::{Audiences, Error};
use serde_json::{Map, Value};
use tower::{Layer, ServiceExt};

/// The test-only HTTPS server (hyper + rustls on 127.0.0.1, scripted replies) that plays the
/// OpenStack Identity v3 endpoint of the `keystone` vectors: no real Keystone runs in this test
/// (`tests/keystone.rs` runs Debian's when installed).
#[cfg(feature = "remote")]
mod webhook_server;

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/vectors")
}

/// A JSON string, or `{"hex": "…"}` for bytes that are not UTF-8.
fn bytes(v: &Value) -> Result<Vec<u8>, String> {
    match v {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Object(o) => {
            let hex = o
                .get("hex")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("bad bytes value {v}"))?;
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|e| e.to_string()))
                .collect()
        }
        _ => Err(format!("bad bytes value {v}")),
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// What a scripted handler answers.
#[derive(Clone, Debug)]
enum Scripted {
    NotMine,
    User(Arc<UserInfo>, Vec<String>),
    Fail(String),
}

fn user_from(v: &Value) -> Result<UserInfo, String> {
    let name = v["name"].as_str().ok_or("user without name")?;
    let mut b = UserInfo::builder(name)
        .uid(v["uid"].as_str().unwrap_or(""))
        .groups(strings(v.get("groups")));
    if let Some(extra) = v.get("extra").and_then(Value::as_object) {
        for (k, vals) in extra {
            b = b.extra(k.clone(), strings(Some(vals)));
        }
    }
    Ok(b.build())
}

fn scripted(v: Option<&Value>) -> Result<Scripted, String> {
    match v {
        None => Ok(Scripted::NotMine),
        Some(Value::String(s)) if s == "not_mine" => Ok(Scripted::NotMine),
        Some(Value::Object(o)) if o.contains_key("error") => Ok(Scripted::Fail(
            o["error"].as_str().ok_or("error must be text")?.to_owned(),
        )),
        Some(Value::Object(o)) if o.contains_key("user") => Ok(Scripted::User(
            Arc::new(user_from(&o["user"])?),
            strings(o.get("audiences")),
        )),
        Some(other) => Err(format!("unknown scripted outcome {other}")),
    }
}

fn respond(s: &Scripted) -> AuthResult {
    match s {
        Scripted::NotMine => Ok(None),
        Scripted::Fail(text) => Err(Error::new(kube_authn::ErrorKind::InvalidCredential, text)),
        Scripted::User(user, auds) => Ok(Some(
            Response::new(user.clone()).with_audiences(Audiences::new(auds)),
        )),
    }
}

type Calls = Arc<Mutex<BTreeMap<String, Vec<Vec<Vec<u8>>>>>>;

/// Why a setup could not be built.
enum BuildError {
    /// A configuration error the authenticator itself reported (the expected outcome of some
    /// vectors, e.g. a token file with a short row).
    Config(String),
    /// An authenticator kind that is not on this branch yet (none today; kept so the next
    /// kinds can be added to the vectors before their code lands).
    #[allow(dead_code)]
    Pending(&'static str),
    /// A vector this runner does not understand: always a test failure.
    Harness(String),
}

impl From<String> for BuildError {
    fn from(e: String) -> Self {
        BuildError::Harness(e)
    }
}

impl From<&str> for BuildError {
    fn from(e: &str) -> Self {
        BuildError::Harness(e.to_owned())
    }
}

struct Builder {
    /// Local servers (webhook backends) of this case, stopped when the case ends.
    servers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Local Identity v3 servers (Keystone vectors), stopped when dropped.
    #[cfg(feature = "remote")]
    tls_servers: Mutex<Vec<webhook_server::Server>>,
    calls: Calls,
    slow: bool,
    /// The clock of every token cache in the setup (steps advance it).
    clock: Arc<ManualClock>,
}

/// A scripted request authenticator that awaits before answering (the boxed path).
struct SlowRequest {
    id: String,
    outcome: Scripted,
    calls: Calls,
}

impl RequestAuthenticator for SlowRequest {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, _: &'a Context) -> AuthFuture<'a> {
        record(
            &self.calls,
            &self.id,
            vec![req.uri.path().as_bytes().to_vec()],
        );
        AuthFuture::new(async move {
            tokio::task::yield_now().await;
            respond(&self.outcome)
        })
    }
}

struct FastRequest {
    id: String,
    outcome: Scripted,
    calls: Calls,
}

impl RequestAuthenticator for FastRequest {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, _: &'a Context) -> AuthFuture<'a> {
        record(
            &self.calls,
            &self.id,
            vec![req.uri.path().as_bytes().to_vec()],
        );
        AuthFuture::ready(respond(&self.outcome))
    }
}

fn record(calls: &Calls, id: &str, args: Vec<Vec<u8>>) {
    calls
        .lock()
        .unwrap()
        .entry(id.to_owned())
        .or_default()
        .push(args);
}

fn kind(n: &Value) -> Result<&str, String> {
    n["kind"]
        .as_str()
        .ok_or_else(|| format!("node without kind: {n}"))
}

fn child<'a>(n: &'a Value, key: &str) -> Result<&'a Value, String> {
    n.get(key).ok_or_else(|| format!("{key} missing in {n}"))
}

impl Builder {
    fn declare(&self, id: &str) {
        self.calls.lock().unwrap().entry(id.to_owned()).or_default();
    }

    fn request(&self, n: &Value) -> Result<Arc<dyn RequestAuthenticator>, BuildError> {
        Ok(match kind(n)? {
            "scripted" => {
                let id = n["id"].as_str().ok_or("scripted without id")?.to_owned();
                self.declare(&id);
                let outcome = scripted(n.get("outcome"))?;
                let calls = self.calls.clone();
                if self.slow {
                    Arc::new(SlowRequest { id, outcome, calls })
                } else {
                    Arc::new(FastRequest { id, outcome, calls })
                }
            }
            "union" => {
                let handlers = n["handlers"]
                    .as_array()
                    .ok_or("union without handlers")?
                    .iter()
                    .map(|h| self.request(h))
                    .collect::<Result<Vec<_>, _>>()?;
                if n["fail_on_error"].as_bool().unwrap_or(false) {
                    Union::fail_on_error(handlers).into_dyn()
                } else {
                    Union::new(handlers).into_dyn()
                }
            }
            "authenticated_group_adder" => Arc::new(AuthenticatedGroupAdder::new(
                self.request(child(n, "inner")?)?,
            )),
            "group_adder" => Arc::new(GroupAdder::new(
                self.request(child(n, "inner")?)?,
                strings(n.get("groups")),
            )),
            "audience_agnostic" => Arc::new(AudienceAgnostic::new(
                Audiences::new(strings(n.get("implicit"))),
                self.request(child(n, "inner")?)?,
            )),
            "anonymous" => Arc::new(anonymous(n)),
            "bearer" => Arc::new(Bearer::from_arc(self.token(child(n, "token")?)?)),
            "websocket" => Arc::new(WebSocketProtocol::from_arc(self.token(child(n, "token")?)?)),
            "basic" => Arc::new(Basic::from_arc(self.password(child(n, "password")?)?)),
            "chain" => {
                let mut b = ChainBuilder::new();
                for r in n["request"].as_array().into_iter().flatten() {
                    b = b.request_arc(self.request(r)?);
                }
                for t in n["tokens"].as_array().into_iter().flatten() {
                    b = b.token_arc(self.token(t)?);
                }
                if let Some(anon) = n.get("anonymous") {
                    b = b.anonymous(anonymous(anon));
                }
                Arc::new(b.build())
            }
            "x509" => {
                // --client-ca-file: the bundle from the vector, system clock (the vectors'
                // certificates are valid 2020-2120; expired ones ended in 2010).
                let pem = n["ca"].as_str().ok_or("x509 without ca")?;
                let bundle = CaBundle::from_pem(pem.as_bytes())
                    .map_err(|e| BuildError::Config(e.to_string()))?;
                Arc::new(X509Authenticator::new(bundle))
            }
            "request_header" => {
                // --requestheader-*: the CA as PEM content (as the ConfigMap carries it).
                let pem = n["ca"].as_str().ok_or("request_header without ca")?;
                let config = RequestHeaderConfig {
                    client_ca_pem: Some(pem.as_bytes().to_vec()),
                    allowed_names: strings(n.get("allowed_names")),
                    username_headers: strings(n.get("username_headers")),
                    uid_headers: strings(n.get("uid_headers")),
                    group_headers: strings(n.get("group_headers")),
                    extra_headers_prefix: strings(n.get("extra_headers_prefix")),
                    ..RequestHeaderConfig::default()
                };
                Arc::new(FrontProxy::new(config).map_err(|e| BuildError::Config(e.to_string()))?)
            }
            other => return Err(BuildError::Harness(format!("unknown request node {other}"))),
        })
    }

    fn token(&self, n: &Value) -> Result<Arc<dyn TokenAuthenticator>, BuildError> {
        Ok(match kind(n)? {
            "scripted" => {
                let id = n["id"].as_str().ok_or("scripted without id")?.to_owned();
                self.declare(&id);
                let default = scripted(n.get("outcome"))?;
                // token → answers (a list answers one per call, the last repeating).
                let mut by_token = BTreeMap::new();
                for (tok, out) in n
                    .get("tokens")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    let answers = match out.as_array() {
                        Some(list) if !list.is_empty() => list
                            .iter()
                            .map(|o| scripted(Some(o)))
                            .collect::<Result<Vec<_>, _>>()?,
                        Some(_) => return Err("empty scripted answer list".into()),
                        None => vec![scripted(Some(out))?],
                    };
                    by_token.insert(tok.clone(), answers);
                }
                let calls = self.calls.clone();
                let answer = move |token: &str| -> AuthResult {
                    let before = calls.lock().unwrap().get(&id).map_or(0, |rows| {
                        rows.iter().filter(|r| r[..] == [token.as_bytes()]).count()
                    });
                    record(&calls, &id, vec![token.as_bytes().to_vec()]);
                    match by_token.get(token) {
                        Some(answers) => respond(&answers[before.min(answers.len() - 1)]),
                        None => respond(&default),
                    }
                };
                if self.slow {
                    let answer = Arc::new(answer);
                    Arc::new(AsyncTokenFn::new(move |token: String, _: Context| {
                        let result = answer(&token);
                        async move {
                            tokio::task::yield_now().await;
                            result
                        }
                    }))
                } else {
                    Arc::new(SyncTokenFn::new(move |token: &str, _: &Context| {
                        answer(token)
                    }))
                }
            }
            "union" => {
                let handlers = n["handlers"]
                    .as_array()
                    .ok_or("union without handlers")?
                    .iter()
                    .map(|h| self.token(h))
                    .collect::<Result<Vec<_>, _>>()?;
                if n["fail_on_error"].as_bool().unwrap_or(false) {
                    TokenUnion::fail_on_error(handlers).into_dyn()
                } else {
                    TokenUnion::new(handlers).into_dyn()
                }
            }
            "authenticated_group_adder" => Arc::new(AuthenticatedGroupAdder::new(
                self.token(child(n, "inner")?)?,
            )),
            "group_adder" => Arc::new(GroupAdder::new(
                self.token(child(n, "inner")?)?,
                strings(n.get("groups")),
            )),
            "audience_agnostic" => Arc::new(AudienceAgnostic::new(
                Audiences::new(strings(n.get("implicit"))),
                self.token(child(n, "inner")?)?,
            )),
            "token_cache" => {
                let ms = |key: &str| std::time::Duration::from_millis(n[key].as_u64().unwrap_or(0));
                let clock: Arc<dyn kube_authn::token::cache::Clock> = self.clock.clone();
                Arc::new(
                    CachedTokenAuthenticator::builder(self.token(child(n, "inner")?)?)
                        .cache_errors(n["cache_errors"].as_bool().unwrap_or(false))
                        .success_ttl(ms("success_ttl_ms"))
                        .failure_ttl(ms("failure_ttl_ms"))
                        .clock(clock)
                        .key_func(KeyFunc::new(b"conformance"))
                        .build(),
                )
            }
            #[cfg(feature = "remote")]
            "webhook" => self.webhook(n)?,
            #[cfg(not(feature = "remote"))]
            "webhook" => return Err(BuildError::Pending("webhook needs the `remote` feature")),
            "service_account" => service_account(n)?,
            "oidc" => oidc(n)?,
            "token_file" => token_file(child(n, "csv")?)?,
            "anytoken" => Arc::new(AnyToken::insecure_allow_any_token()),
            other => return Err(BuildError::Harness(format!("unknown token node {other}"))),
        })
    }

    fn password(&self, n: &Value) -> Result<Arc<dyn PasswordAuthenticator>, BuildError> {
        Ok(match kind(n)? {
            "scripted" => {
                let id = n["id"].as_str().ok_or("scripted without id")?.to_owned();
                self.declare(&id);
                let outcome = scripted(n.get("outcome"))?;
                let calls = self.calls.clone();
                let answer = move |u: &str, p: &str| -> AuthResult {
                    record(
                        &calls,
                        &id,
                        vec![u.as_bytes().to_vec(), p.as_bytes().to_vec()],
                    );
                    respond(&outcome)
                };
                if self.slow {
                    let answer = Arc::new(answer);
                    Arc::new(AsyncPasswordFn::new(
                        move |u: String, p: String, _: Context| {
                            let result = answer(&u, &p);
                            async move {
                                tokio::task::yield_now().await;
                                result
                            }
                        },
                    ))
                } else {
                    Arc::new(SyncPasswordFn::new(move |u: &str, p: &str, _: &Context| {
                        answer(u, p)
                    }))
                }
            }
            "password_file" => password_file(child(n, "csv")?)?,
            #[cfg(feature = "remote")]
            "keystone" => self.keystone(n)?,
            #[cfg(not(feature = "remote"))]
            "keystone" => return Err(BuildError::Pending("keystone needs the `remote` feature")),
            other => {
                return Err(BuildError::Harness(format!(
                    "unknown password node {other}"
                )));
            }
        })
    }
}

#[cfg(feature = "remote")]
impl Builder {
    /// kube-authn's webhook authenticator against a local TokenReview server (plain HTTP on
    /// 127.0.0.1, a test-only backend: no real webhook can run here) that answers the node's
    /// scripted responses in turn and records `[spec.token, spec.audiences joined by ","]` of
    /// every request as calls of `webhook`.
    fn webhook(&self, n: &Value) -> Result<Arc<dyn TokenAuthenticator>, BuildError> {
        use kube_authn::outbound::{ConnectionInfo, vault::Vault};
        use kube_authn::token::webhook::{
            Backoff, Version, WebhookOptions, WebhookTokenAuthenticator,
        };

        let responses: Vec<(u16, String, String)> = n["responses"]
            .as_array()
            .ok_or("webhook without responses")?
            .iter()
            .map(|r| {
                (
                    r["status"].as_u64().unwrap_or(200) as u16,
                    r["content_type"].as_str().unwrap_or("").to_owned(),
                    r["body"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        if responses.is_empty() {
            return Err("webhook without responses".into());
        }
        self.declare("webhook");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        let calls = self.calls.clone();
        let served = Arc::new(Mutex::new(0usize));
        let responses = Arc::new(responses);
        let handler = move |body: bytes::Bytes| {
            let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let token = review["spec"]["token"].as_str().unwrap_or("").to_owned();
            let auds = strings(review["spec"].get("audiences")).join(",");
            record(
                &calls,
                "webhook",
                vec![token.into_bytes(), auds.into_bytes()],
            );
            let mut i = served.lock().unwrap();
            let (status, content_type, body) = responses[(*i).min(responses.len() - 1)].clone();
            *i += 1;
            let mut resp = http::Response::builder().status(status);
            if !content_type.is_empty() {
                resp = resp.header(http::header::CONTENT_TYPE, content_type);
            }
            resp.body(axum::body::Body::from(body)).unwrap()
        };
        let app = axum::Router::new().fallback(move |body: bytes::Bytes| {
            let handler = handler.clone();
            async move { handler(body) }
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        self.servers.lock().unwrap().push(server);
        let mut opts = WebhookOptions::default();
        opts.version = Version::parse(n["version"].as_str().unwrap_or("v1beta1"))
            .map_err(|e| BuildError::Config(e.to_string()))?;
        opts.implicit_audiences = Audiences::new(strings(n.get("implicit_audiences")));
        opts.backoff = Backoff {
            initial: std::time::Duration::from_millis(1),
            factor: 1.0,
            jitter: 0.0,
            steps: n["retry_steps"].as_u64().unwrap_or(1) as u32,
        };
        let vault = Vault::from_info(ConnectionInfo::new(format!("http://{addr}/")));
        Ok(Arc::new(
            WebhookTokenAuthenticator::new(vault, opts)
                .map_err(|e| BuildError::Config(e.to_string()))?,
        ))
    }
}

#[cfg(feature = "remote")]
impl Builder {
    /// kube-authn's Keystone password authenticator (`--experimental-keystone-url`) against a
    /// test-only OpenStack Identity v3 server over TLS on 127.0.0.1 that answers the node's
    /// scripted replies in turn (one per request, the last repeating) and records every request
    /// as a call of `keystone`: `[method, request target, content-type, body]`, the body as
    /// canonical JSON (keys sorted, compact) when it parses.
    fn keystone(&self, n: &Value) -> Result<Arc<dyn PasswordAuthenticator>, BuildError> {
        use kube_authn::outbound::{ConnectionInfo, Pem};
        use kube_authn::password::keystone::KeystoneAuthenticator;
        use webhook_server::{Reply, Server};

        let replies: Vec<Value> = n["replies"]
            .as_array()
            .filter(|r| !r.is_empty())
            .ok_or("keystone without replies")?
            .clone();
        self.declare("keystone");
        let calls = self.calls.clone();
        let handler = move |seen: &webhook_server::Seen, i: usize| -> Reply {
            let content_type = seen
                .headers
                .get(http::header::CONTENT_TYPE)
                .map(|v| v.as_bytes().to_vec())
                .unwrap_or_default();
            let body = match serde_json::from_slice::<Value>(&seen.body) {
                Ok(v) => canonical_json(&v).into_bytes(),
                Err(_) => seen.body.clone(),
            };
            record(
                &calls,
                "keystone",
                vec![
                    seen.method.clone().into_bytes(),
                    seen.uri.clone().into_bytes(),
                    content_type,
                    body,
                ],
            );
            let r = &replies[i.min(replies.len() - 1)];
            if r["close"].as_bool() == Some(true) {
                return Reply::Close;
            }
            if r["hang"].as_bool() == Some(true) {
                return Reply::Hang;
            }
            let headers = r["headers"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|h| {
                    let name: &'static str =
                        Box::leak(h[0].as_str().unwrap_or("").to_ascii_lowercase().into());
                    (name, h[1].as_str().unwrap_or("").to_owned())
                })
                .collect();
            Reply::Http(
                r["status"].as_u64().unwrap_or(200) as u16,
                headers,
                r["body"].as_str().unwrap_or("").as_bytes().to_vec(),
            )
        };
        let pki = test_pki();
        let server = Server::start_now(&pki.server_cert_pem, &pki.server_key_pem, None, handler);
        let base = server.url("");
        self.tls_servers.lock().unwrap().push(server);
        let mut url = n["auth_url"]
            .as_str()
            .ok_or("keystone without auth_url")?
            .replace("{server}", &base);
        if url.contains("{closed}") {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| e.to_string())?
                .port();
            url = url.replace("{closed}", &format!("https://127.0.0.1:{port}"));
        }
        let ca = match n["trust"].as_str().unwrap_or("server") {
            "server" => pki.ca_pem.clone(),
            "other" => stranger_pki().ca_pem.clone(),
            other => return Err(BuildError::Harness(format!("keystone trust {other:?}"))),
        };
        let info = ConnectionInfo::new(url)
            .with_ca(Pem::Data(ca.into_bytes()))
            .with_trust_env(false);
        Ok(Arc::new(
            KeystoneAuthenticator::with_connection(info)
                .map_err(|e| BuildError::Config(e.to_string()))?,
        ))
    }
}

/// The test PKI of the Identity v3 server (minted once per run).
#[cfg(feature = "remote")]
fn test_pki() -> &'static webhook_server::Pki {
    static PKI: std::sync::OnceLock<webhook_server::Pki> = std::sync::OnceLock::new();
    PKI.get_or_init(webhook_server::Pki::new)
}

/// A CA that did not sign the server's certificate.
#[cfg(feature = "remote")]
fn stranger_pki() -> &'static webhook_server::Pki {
    static PKI: std::sync::OnceLock<webhook_server::Pki> = std::sync::OnceLock::new();
    PKI.get_or_init(webhook_server::Pki::new)
}

/// JSON with object keys sorted at every level, compact (Python's
/// `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`).
#[cfg(feature = "remote")]
fn canonical_json(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&o[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

/// Whether the case has a Keystone reply that never comes: it then runs on a paused clock, so
/// the client's 30 s timeout fires as soon as nothing else can happen.
fn needs_paused_clock(v: &Value) -> bool {
    match v {
        Value::Object(o) => {
            (o.get("kind").and_then(Value::as_str) == Some("keystone")
                && o["replies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["hang"].as_bool() == Some(true)))
                || o.values().any(needs_paused_clock)
        }
        Value::Array(a) => a.iter().any(needs_paused_clock),
        _ => false,
    }
}

/// `--service-account-key-file` / `--service-account-issuer`: the legacy authenticator
/// (`--service-account-lookup=false`) or the bound one with an in-memory lookup, on a fixed clock.
fn service_account(n: &Value) -> Result<Arc<dyn TokenAuthenticator>, BuildError> {
    use kube_authn::token::service_account::{
        ObjectMeta, Secret, ServiceAccount, ServiceAccountAuthenticator, StaticLookup,
    };
    let pem = n["keys"].as_str().unwrap_or("");
    let keys = if pem.is_empty() {
        Vec::new()
    } else {
        kube_authn::jwt::key::parse_pem_keys(pem.as_bytes())
            .map_err(|e| BuildError::Config(e.to_string()))?
    };
    let implicit = Audiences::new(strings(n.get("implicit_audiences")));
    let now = n["now"].as_i64().ok_or("service_account without now")?;
    let meta = |o: &Value| ObjectMeta {
        uid: o["uid"].as_str().unwrap_or("").to_owned(),
        deletion_timestamp: o["deletion_timestamp"].as_i64(),
    };
    let key = |o: &Value| {
        (
            o["namespace"].as_str().unwrap_or("").to_owned(),
            o["name"].as_str().unwrap_or("").to_owned(),
        )
    };
    let lookup = n.get("lookup").filter(|l| !l.is_null()).map(|l| {
        let mut s = StaticLookup::default();
        for o in l["service_accounts"].as_array().into_iter().flatten() {
            s.service_accounts.insert(
                key(o),
                ServiceAccount {
                    meta: meta(o),
                    secrets: strings(o.get("secrets")),
                },
            );
        }
        for o in l["secrets"].as_array().into_iter().flatten() {
            s.secrets.insert(
                key(o),
                Secret {
                    meta: meta(o),
                    token: o["token"].as_str().map(|t| t.as_bytes().to_vec()),
                    invalid_since: o["invalid_since"].as_str().map(str::to_owned),
                },
            );
        }
        for o in l["pods"].as_array().into_iter().flatten() {
            s.pods.insert(key(o), meta(o));
        }
        for o in l["nodes"].as_array().into_iter().flatten() {
            s.nodes
                .insert(o["name"].as_str().unwrap_or("").to_owned(), meta(o));
        }
        Arc::new(s) as Arc<dyn kube_authn::token::service_account::ServiceAccountLookup>
    });
    let sa = match n["mode"].as_str() {
        Some("legacy") => ServiceAccountAuthenticator::legacy(keys, implicit, lookup),
        Some("bound") => {
            ServiceAccountAuthenticator::bound(strings(n.get("issuers")), keys, implicit, lookup)
        }
        other => {
            return Err(BuildError::Harness(format!(
                "service_account mode {other:?}"
            )));
        }
    };
    Ok(Arc::new(sa.with_clock(Arc::new(
        kube_authn::jwt::FixedClock::new(now),
    ))))
}

/// The OIDC JWT authenticator with the vector's claim mappings; the JWKS is installed with
/// `set_keys` (kube-authn's discovery/JWKS fetcher is not on this branch; the Go oracle fetches
/// the same JWKS over HTTP).
fn oidc(n: &Value) -> Result<Arc<dyn TokenAuthenticator>, BuildError> {
    use kube_authn::jwt::alg::AlgorithmSet;
    use kube_authn::token::oidc::OidcAuthenticator;
    use kube_authn::token::oidc::config::{JwtAuthenticatorConfig, PrefixedClaim};
    let text = |k: &str| n[k].as_str().unwrap_or("").to_owned();
    let cfg = JwtAuthenticatorConfig {
        issuer_url: text("issuer"),
        discovery_url: None,
        certificate_authority: None,
        audiences: strings(n.get("audiences")),
        username: PrefixedClaim {
            claim: text("username_claim"),
            prefix: text("username_prefix"),
        },
        groups: n.get("groups_claim").map(|_| PrefixedClaim {
            claim: text("groups_claim"),
            prefix: text("groups_prefix"),
        }),
        uid_claim: n.get("uid_claim").map(|_| text("uid_claim")),
        required_claims: n["required_claims"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p[0].as_str().unwrap_or("").to_owned(),
                    p[1].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect(),
        signing_algs: AlgorithmSet::parse_kubernetes(strings(n.get("signing_algs")))
            .map_err(BuildError::Config)?,
        signing_alg_names: strings(n.get("signing_algs")),
    };
    let keys = kube_authn::jwt::key::parse_jwks(text("jwks").as_bytes())
        .map_err(|e| BuildError::Config(e.to_string()))?;
    let a = OidcAuthenticator::new(cfg);
    a.set_keys(keys);
    Ok(Arc::new(a))
}

fn anonymous(n: &Value) -> Anonymous {
    match n.get("paths") {
        Some(paths) => Anonymous::with_paths(strings(Some(paths))),
        None => Anonymous::new(),
    }
}

/// Writes `csv` to a temporary file, as the flags would name one, and loads it with `load`.
fn from_file<T>(
    csv: &Value,
    load: impl FnOnce(&Path) -> Result<T, kube_authn::ConfigError>,
) -> Result<T, BuildError> {
    let csv = csv.as_str().ok_or("csv must be text")?;
    let file = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    std::fs::write(file.path(), csv).map_err(|e| e.to_string())?;
    load(file.path()).map_err(|e| BuildError::Config(e.to_string()))
}

/// `--token-auth-file`.
fn token_file(csv: &Value) -> Result<Arc<dyn TokenAuthenticator>, BuildError> {
    Ok(Arc::new(from_file(csv, |p| TokenFile::open(p))?))
}

/// `--basic-auth-file`.
fn password_file(csv: &Value) -> Result<Arc<dyn PasswordAuthenticator>, BuildError> {
    Ok(Arc::new(from_file(csv, |p| PasswordFile::open(p))?))
}

/// An observed outcome, in the vectors' JSON shape.
fn observed(result: AuthResult, calls: &Calls) -> Value {
    let mut out = Map::new();
    match result {
        Ok(Some(r)) => {
            out.insert("result".into(), "authenticated".into());
            let extra: Map<String, Value> = r
                .user
                .extra()
                .iter()
                .map(|(k, v)| (k.to_string(), Value::from(v.clone())))
                .collect();
            out.insert(
                "user".into(),
                serde_json::json!({
                    "name": r.user.name(),
                    "uid": r.user.uid(),
                    "groups": r.user.groups().collect::<Vec<_>>(),
                    "extra": extra,
                }),
            );
            out.insert(
                "audiences".into(),
                Value::from(r.audiences.iter().collect::<Vec<_>>()),
            );
        }
        Ok(None) => {
            out.insert("result".into(), "not_mine".into());
        }
        Err(e) => {
            out.insert("result".into(), "error".into());
            out.insert("error".into(), e.to_string().into());
        }
    }
    let calls: Map<String, Value> = calls
        .lock()
        .unwrap()
        .iter()
        .map(|(id, rows)| {
            let rows: Vec<Value> = rows
                .iter()
                .map(|args| {
                    Value::from(
                        args.iter()
                            .map(|a| match std::str::from_utf8(a) {
                                Ok(s) => Value::from(s),
                                Err(_) => serde_json::json!({ "hex": hex(a) }),
                            })
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            (id.clone(), Value::from(rows))
        })
        .collect();
    out.insert("calls".into(), Value::Object(calls));
    Value::Object(out)
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

/// Normalises a user for comparison: absent groups and extra are empty.
fn norm_user(u: &Value) -> Value {
    let mut u = u.clone();
    for key in ["groups", "uid"] {
        if u.get(key).is_none_or(Value::is_null) {
            u[key] = if key == "uid" {
                "".into()
            } else {
                Value::Array(vec![])
            };
        }
    }
    if u.get("extra").is_none_or(Value::is_null) {
        u["extra"] = Value::Object(Map::new());
    }
    u
}

/// `None` when `got` satisfies `want`, else the difference.
fn diff(want: &Value, got: &Value) -> Option<String> {
    let (w, g) = (&want["result"], &got["result"]);
    if w != g {
        return Some(format!("result: want {w}, got {g} ({got})"));
    }
    match w.as_str() {
        Some("authenticated") => {
            let (wu, gu) = (norm_user(&want["user"]), norm_user(&got["user"]));
            if wu != gu {
                return Some(format!("user: want {wu}, got {gu}"));
            }
            let empty = Value::Array(vec![]);
            let wa = want.get("audiences").unwrap_or(&empty);
            let ga = got.get("audiences").unwrap_or(&empty);
            if wa != ga {
                return Some(format!("audiences: want {wa}, got {ga}"));
            }
        }
        Some("handler") => {
            let (wu, gu) = (&want["user"], &got["user"]);
            if wu.is_null() != gu.is_null() {
                return Some(format!("user: want {wu}, got {gu}"));
            }
            if !wu.is_null() && norm_user(wu) != norm_user(gu) {
                return Some(format!(
                    "user: want {}, got {}",
                    norm_user(wu),
                    norm_user(gu)
                ));
            }
            for (name, wv) in want
                .get("headers")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let gv = got["headers"]
                    .get(name)
                    .cloned()
                    .unwrap_or(Value::Array(vec![]));
                if wv != &gv {
                    return Some(format!(
                        "header {name} seen by the handler: want {wv}, got {gv}"
                    ));
                }
            }
        }
        Some("rejected") => {
            for key in ["status", "content_type"] {
                if want.get(key).is_some() && want[key] != got[key] {
                    return Some(format!("{key}: want {}, got {}", want[key], got[key]));
                }
            }
            // Bytes, so a {"hex"} form and a string form of the same bytes agree.
            if let Some(body) = want.get("body")
                && bytes(body).ok() != bytes(&got["body"]).ok()
            {
                return Some(format!("body: want {body}, got {}", got["body"]));
            }
        }
        Some("key") if want["key"] != got["key"] => {
            return Some(format!("key: want {}, got {}", want["key"], got["key"]));
        }
        Some("sequence") => {
            let empty = Vec::new();
            let (wo, go) = (
                want["outcomes"].as_array().unwrap_or(&empty),
                got["outcomes"].as_array().unwrap_or(&empty),
            );
            if wo.len() != go.len() {
                return Some(format!(
                    "steps: want {} outcomes, got {}",
                    wo.len(),
                    go.len()
                ));
            }
            for (i, (w, g)) in wo.iter().zip(go).enumerate() {
                if let Some(d) = diff(w, g) {
                    return Some(format!("step {i}: {d}"));
                }
            }
        }
        Some("error") | Some("config_error") => {
            let ge = got["error"].as_str().unwrap_or("<none>");
            if let Some(we) = want.get("error").and_then(Value::as_str)
                && we != ge
            {
                return Some(format!("error: want {we:?}, got {ge:?}"));
            }
            if let Some(wc) = want.get("error_contains").and_then(Value::as_str)
                && !ge.contains(wc)
            {
                return Some(format!("error: want text containing {wc:?}, got {ge:?}"));
            }
        }
        _ => {}
    }
    if let Some(calls) = want.get("calls").and_then(Value::as_object) {
        for (id, wc) in calls {
            let gc = got["calls"]
                .get(id)
                .cloned()
                .unwrap_or(Value::Array(vec![]));
            // Compare bytes, so a {"hex"} form and a string form of the same bytes agree.
            let as_bytes = |v: &Value| -> Vec<Vec<Vec<u8>>> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .map(|row| {
                        row.as_array()
                            .into_iter()
                            .flatten()
                            .map(|a| bytes(a).unwrap_or_default())
                            .collect()
                    })
                    .collect()
            };
            if as_bytes(wc) != as_bytes(&gc) {
                return Some(format!("calls of {id}: want {wc}, got {gc}"));
            }
        }
    }
    None
}

fn parts(input: &Value) -> Result<Parts, String> {
    let path = input["path"].as_str().unwrap_or("/");
    let mut b = http::Request::get(path);
    for h in input["headers"].as_array().into_iter().flatten() {
        let name = HeaderName::from_bytes(&bytes(&h[0])?).map_err(|e| e.to_string())?;
        let value = HeaderValue::from_bytes(&bytes(&h[1])?).map_err(|e| e.to_string())?;
        b = b.header(name, value);
    }
    let mut parts = b
        .body(())
        .map_err(|e| format!("request: {e}"))?
        .into_parts()
        .0;
    // A request over TLS: the chain the client presented in the handshake (leaf first).
    if let Some(chain) = input.get("peer_chain").and_then(Value::as_array) {
        let mut certs = Vec::new();
        for pem in chain {
            let pem = pem.as_str().ok_or("peer_chain entries are PEM text")?;
            certs.extend(parse_pem_bundle(pem.as_bytes()).map_err(|e| e.to_string())?);
        }
        parts
            .extensions
            .insert(PeerCertificates::from_handshake(certs));
    }
    Ok(parts)
}

fn text(input: &Value, key: &str) -> Result<String, String> {
    match input.get(key) {
        None => Ok(String::new()),
        Some(v) => String::from_utf8(bytes(v)?).map_err(|_| format!("{key} is not UTF-8")),
    }
}

/// Runs the request through `AuthenticationLayer` around a handler that records who arrived
/// and the headers it saw.
async fn run_filter(b: &Builder, filter: &Value, input: &Value) -> Result<Run, BuildError> {
    let chain = Chain::from_authenticator(b.request(child(filter, "chain")?)?);
    let mut layer = AuthenticationLayer::builder(chain);
    if let Some(auds) = filter.get("api_audiences") {
        layer = layer.api_audiences(Audiences::new(strings(Some(auds))));
    }
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let record = seen.clone();
    let inner = tower::service_fn(move |req: http::Request<()>| {
        let user = Authenticated::from_request(&req).map(|a| {
            let extra: Map<String, Value> = a
                .user
                .extra()
                .iter()
                .map(|(k, v)| (k.to_string(), Value::from(v.clone())))
                .collect();
            serde_json::json!({
                "name": a.user.name(), "uid": a.user.uid(),
                "groups": a.user.groups().collect::<Vec<_>>(), "extra": extra,
            })
        });
        let mut headers = Map::new();
        for name in req.headers().keys() {
            let values: Vec<Value> = req
                .headers()
                .get_all(name)
                .iter()
                .map(|v| Value::from(String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect();
            headers.insert(name.as_str().to_owned(), Value::from(values));
        }
        *record.lock().unwrap() = Some(serde_json::json!({
            "result": "handler", "user": user, "headers": headers,
        }));
        std::future::ready(Ok::<_, std::convert::Infallible>(http::Response::new(
            http_body_util::Empty::<bytes::Bytes>::new(),
        )))
    });
    let svc = layer.build().layer(inner);
    let response = svc
        .oneshot(parts_request(input)?)
        .await
        .map_err(|e| format!("service: {e}"))?;
    if let Some(handled) = seen.lock().unwrap().take() {
        return Ok(Run::Done(handled));
    }
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|_| "body".to_owned())?
        .to_bytes();
    Ok(Run::Done(serde_json::json!({
        "result": "rejected", "status": status, "content_type": content_type,
        "body": match std::str::from_utf8(&body) {
            Ok(text) => Value::from(text),
            Err(_) => serde_json::json!({ "hex": hex(&body) }),
        },
    })))
}

fn parts_request(input: &Value) -> Result<http::Request<()>, String> {
    let p = parts(input)?;
    Ok(http::Request::from_parts(p, ()))
}

enum Run {
    Done(Value),
    Pending(&'static str),
}

async fn run_case(case: &Value, slow: bool) -> Result<Run, String> {
    let b = Builder {
        calls: Calls::default(),
        slow,
        clock: Arc::new(ManualClock::new()),
        servers: Mutex::default(),
        #[cfg(feature = "remote")]
        tls_servers: Mutex::default(),
    };
    let result = run_built(&b, case).await;
    for server in b.servers.lock().unwrap().drain(..) {
        server.abort();
    }
    result
}

async fn run_built(b: &Builder, case: &Value) -> Result<Run, String> {
    let setup = &case["setup"];
    let input = &case["input"];
    let ctx = match input.get("audiences") {
        Some(a) => Context::with_audiences(Audiences::new(strings(Some(a)))),
        None => Context::default(),
    };
    if let Some(filter) = setup.get("filter") {
        return match run_filter(b, filter, input).await {
            Ok(run) => Ok(run),
            Err(BuildError::Pending(why)) => Ok(Run::Pending(why)),
            Err(BuildError::Harness(e)) | Err(BuildError::Config(e)) => Err(e),
        };
    }
    if let Some(key) = setup.get("cache_key") {
        // The token cache's key function with a fixed HMAC secret.
        let secret = key["secret"].as_str().ok_or("cache_key without secret")?;
        let auds = input.get("audiences").map(|a| strings(Some(a)));
        let auds: Option<Vec<&str>> = auds
            .as_ref()
            .map(|a| a.iter().map(String::as_str).collect());
        let k = KeyFunc::new(secret.as_bytes())
            .key(&text(input, "token")?, auds.as_deref())
            .ok_or("no key")?;
        return Ok(Run::Done(
            serde_json::json!({"result": "key", "key": hex(&k)}),
        ));
    }
    if let (Some(n), Some(steps)) = (
        setup.get("token"),
        input.get("steps").and_then(Value::as_array),
    ) {
        // Several calls on one authenticator; the clock advances before each.
        let t = match b.token(n) {
            Ok(t) => t,
            Err(BuildError::Pending(why)) => return Ok(Run::Pending(why)),
            Err(BuildError::Harness(e)) | Err(BuildError::Config(e)) => return Err(e),
        };
        let mut outcomes = Vec::new();
        for step in steps {
            b.clock.advance(std::time::Duration::from_millis(
                step["advance_ms"].as_u64().unwrap_or(0),
            ));
            let ctx = match step.get("audiences") {
                Some(a) => Context::with_audiences(Audiences::new(strings(Some(a)))),
                None => Context::default(),
            };
            let result = t.authenticate_token(&text(step, "token")?, &ctx).await;
            let mut out = observed(result, &Calls::default());
            if let Some(o) = out.as_object_mut() {
                o.remove("calls");
            }
            outcomes.push(out);
        }
        let mut seq = serde_json::json!({"result": "sequence", "outcomes": outcomes});
        seq["calls"] = observed(Ok(None), &b.calls)["calls"].take();
        return Ok(Run::Done(seq));
    }
    let built = if let Some(n) = setup.get("request") {
        b.request(n).map(|a| (Some(a), None, None))
    } else if let Some(n) = setup.get("token") {
        b.token(n).map(|t| (None, Some(t), None))
    } else if let Some(n) = setup.get("password") {
        b.password(n).map(|p| (None, None, Some(p)))
    } else {
        return Err("case without setup".into());
    };
    let result = match built {
        Err(BuildError::Pending(why)) => return Ok(Run::Pending(why)),
        Err(BuildError::Harness(e)) => return Err(e),
        Err(BuildError::Config(e)) => {
            return Ok(Run::Done(
                serde_json::json!({"result": "config_error", "error": e}),
            ));
        }
        Ok((Some(r), _, _)) => {
            let parts = parts(input)?;
            r.authenticate_request(&parts, &ctx).await
        }
        Ok((_, Some(t), _)) => t.authenticate_token(&text(input, "token")?, &ctx).await,
        Ok((_, _, Some(p))) => {
            p.authenticate_password(&text(input, "user")?, &text(input, "password")?, &ctx)
                .await
        }
        Ok(_) => unreachable!(),
    };
    Ok(Run::Done(observed(result, &b.calls)))
}

#[derive(Default)]
struct Count {
    cases: usize,
    passed: usize,
    pending: usize,
    documented_difference: usize,
    reference_only: usize,
    known_bug: usize,
}

#[tokio::test]
async fn every_vector_matches_kube_authn() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("conformance/vectors exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vector files found");

    let mut counts: BTreeMap<String, Count> = BTreeMap::new();
    let mut pending_why: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut known_bugs = Vec::new();
    for path in &files {
        let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let suite = doc["suite"].as_str().expect("suite name");
        for case in doc["cases"].as_array().expect("cases") {
            let name = case["name"].as_str().expect("case name");
            let label = case["authenticator"].as_str().unwrap_or(suite).to_owned();
            let count = counts.entry(label).or_default();
            count.cases += 1;
            if case.get("oracle").and_then(Value::as_str) == Some("reference") {
                count.reference_only += 1;
            }
            let want = match (case.get("expect"), case.get("kube_authn"), case.get("k8s")) {
                (Some(w), None, None) => w,
                (None, Some(w), Some(_)) => {
                    assert!(
                        case["reason"].as_str().is_some_and(|r| !r.is_empty()),
                        "{suite}/{name}: two expectations need a reason"
                    );
                    count.documented_difference += 1;
                    w
                }
                _ => panic!("{suite}/{name}: needs expect, or k8s + kube_authn + reason"),
            };
            let known_bug = case.get("known_bug").and_then(Value::as_str);
            let mut ok = true;
            let mut pending = None;
            let failures_before = failures.len();
            for slow in [false, true] {
                let run = if needs_paused_clock(&case["setup"]) {
                    // Its own current-thread runtime on a paused clock (the server runs there
                    // too, so the runtime idles only when both sides wait).
                    let case = case.clone();
                    tokio::task::spawn_blocking(move || {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .start_paused(true)
                            .build()
                            .expect("runtime")
                            .block_on(run_case(&case, slow))
                    })
                    .await
                    .expect("paused-clock case")
                } else {
                    run_case(case, slow).await
                };
                match run {
                    Ok(Run::Pending(why)) => pending = Some(why),
                    Ok(Run::Done(got)) => {
                        if let Some(d) = diff(want, &got) {
                            failures.push(format!(
                                "{suite}/{name} ({}): {d}",
                                if slow { "async" } else { "sync" }
                            ));
                            ok = false;
                        }
                    }
                    Err(e) => {
                        failures.push(format!("{suite}/{name}: harness: {e}"));
                        ok = false;
                    }
                }
            }
            if let (Some(bug), None) = (known_bug, pending) {
                // The vector keeps Kubernetes' expectation; kube-authn is known not to meet it.
                if ok {
                    failures.push(format!(
                        "{suite}/{name}: marked known_bug but kube-authn now passes: remove the marker"
                    ));
                } else {
                    let observed: Vec<String> = failures.drain(failures_before..).collect();
                    known_bugs.push(format!(
                        "{suite}/{name}: {bug}\n    {}",
                        observed.join("\n    ")
                    ));
                    count.known_bug += 1;
                }
                continue;
            }
            match pending {
                Some(why) => {
                    count.pending += 1;
                    *pending_why.entry(why).or_default() += 1;
                }
                None if ok => count.passed += 1,
                None => {}
            }
        }
    }

    let mut report = format!(
        "\n{:<16} {:>6} {:>7} {:>8} {:>16} {:>15} {:>10}\n",
        "authenticator",
        "cases",
        "passed",
        "pending",
        "documented diff",
        "reference only",
        "known bug"
    );
    let mut total = Count::default();
    for (label, c) in &counts {
        let _ = writeln!(
            report,
            "{label:<16} {:>6} {:>7} {:>8} {:>16} {:>15} {:>10}",
            c.cases, c.passed, c.pending, c.documented_difference, c.reference_only, c.known_bug
        );
        total.cases += c.cases;
        total.passed += c.passed;
        total.pending += c.pending;
        total.documented_difference += c.documented_difference;
        total.reference_only += c.reference_only;
        total.known_bug += c.known_bug;
    }
    let _ = writeln!(
        report,
        "{:<16} {:>6} {:>7} {:>8} {:>16} {:>15} {:>10}",
        "total",
        total.cases,
        total.passed,
        total.pending,
        total.documented_difference,
        total.reference_only,
        total.known_bug
    );
    for bug in &known_bugs {
        let _ = writeln!(report, "KNOWN BUG {bug}");
    }
    for (why, n) in &pending_why {
        let _ = writeln!(report, "PENDING {n} cases: {why}");
    }
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "{} vector(s) differ from kube-authn's expectation:\n{}\n{report}",
        failures.len(),
        failures.join("\n")
    );
    // Every case in the files ran and has an outcome (counted here from the files themselves).
    let in_files: usize = std::fs::read_dir(vectors_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let doc: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            doc["cases"].as_array().map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(total.cases, in_files, "cases run vs cases in the files");
    assert_eq!(
        total.passed + total.pending + total.known_bug,
        total.cases,
        "every case passed, is pending or is a known bug"
    );
    // Pending means an authenticator kind this build cannot construct; with `remote` every
    // kind is built.
    #[cfg(feature = "remote")]
    assert_eq!(total.pending, 0, "pending with the remote feature:{report}");
}

/// The case counts the docs quote (`conformance/README.md`'s table, the README's status row)
/// are the vectors' own, so adding a vector without updating the docs fails here.
#[test]
fn documented_vector_counts_are_the_vectors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut counts = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(vectors_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let suite = path.file_stem().unwrap().to_str().unwrap().to_owned();
            counts.insert(suite, doc["cases"].as_array().unwrap().len());
        }
    }
    let total: usize = counts.values().sum();
    // Any-token and Keystone are gone from Kubernetes: no Go code checks them.
    let by_go = total - counts["anytoken"] - counts["keystone"];

    let table = std::fs::read_to_string(root.join("conformance/README.md")).unwrap();
    let mut seen = 0;
    for line in table.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let Ok(n) = cells[2].parse::<usize>() else {
            continue;
        };
        if cells[1] == "total" {
            assert_eq!(n, total, "conformance/README.md total");
            assert!(
                cells[5].starts_with(&format!("{by_go} by Go")),
                "conformance/README.md: {line}"
            );
        } else if let Some(&want) = counts.get(cells[1]) {
            assert_eq!(n, want, "conformance/README.md row {}", cells[1]);
            seen += 1;
        }
    }
    assert_eq!(
        seen,
        counts.len(),
        "every suite has a row in conformance/README.md"
    );
    assert!(table.contains(&format!("the cases (data), {total} today")));

    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let thousands = |n: usize| format!("{},{:03}", n / 1000, n % 1000);
    assert!(
        readme.contains(&format!("{} shared vectors", thousands(total))),
        "README.md: the shared vector count is {total}"
    );
    assert!(
        readme.contains(&format!("{} checked against", thousands(by_go))),
        "README.md: the Go-checked count is {by_go}"
    );
    assert!(
        readme.contains(&format!(
            "{} vectors run in k8s.io/kubernetes",
            counts["service_account"]
        )),
        "README.md: the service-account vector count is {}",
        counts["service_account"]
    );
}
