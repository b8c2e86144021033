//! Tower middleware: kube-apiserver's `WithAuthentication` filter for any `http` server
//! (axum, hyper, tonic, anything built on `tower`).
//!
//! Per request, [`AuthenticationService`]:
//!
//! 1. runs the [`Chain`] on the request head with the API audiences in the [`Context`]
//!    (cloned, not rebuilt: no allocation);
//! 2. on success checks the audiences as kube-apiserver's `audiencesAreAcceptable` does
//!    (acceptable if either list is empty, otherwise they must intersect; otherwise the error
//!    `unable to match the audience: [x] , accepted: [y]` is logged and the request refused);
//! 3. on success removes `Authorization`, the standard front-proxy headers `X-Remote-User`,
//!    `X-Remote-Uid`, `X-Remote-Group` and every `X-Remote-Extra-*` header, the identity headers
//!    and prefixes the chain declares ([`Description`]), and the WebSocket bearer-token
//!    subprotocol. Header names are matched case-insensitively **and** with `_` read as `-`
//!    (`x_remote_user`), because some proxies and CGI-style frameworks fold the two; inserts
//!    [`Authenticated`] into the request extensions; and calls the inner service;
//! 4. otherwise logs `Unable to authenticate the request` with the error (never the
//!    credential, never header values) and answers through [`OnFailure`]: by default
//!    [`Unauthorized`], kube-apiserver's 401 `Status`;
//! 5. records [`Metrics`] when given a handle, and runs the authentication in a `debug`
//!    tracing span `authenticate` with fields `method`, `path` (no query: it may carry
//!    tokens), `result` and `user` (the user name, which Kubernetes also logs and audits).
//!
//! ```
//! use aws_lc_rs::constant_time::verify_slices_are_equal;
//! use kube_authn::authenticator::{Context, Response, SyncTokenFn};
//! use kube_authn::chain::ChainBuilder;
//! use kube_authn::middleware::{Authenticated, AuthenticationLayer};
//! use kube_authn::user::UserInfo;
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! let chain = ChainBuilder::new()
//!     .token(SyncTokenFn::new(|t: &str, _: &Context| {
//!         // Constant time: `==` stops at the first differing byte.
//!         let known = verify_slices_are_equal(t.as_bytes(), b"s3cret").is_ok();
//!         Ok(known.then(|| Response::new(UserInfo::new("jane").into())))
//!     }))
//!     .build();
//! let app = AuthenticationLayer::new(chain).layer(service_fn(|req: http::Request<String>| async move {
//!     let who = Authenticated::from_request(&req).unwrap().user.name().to_owned();
//!     assert!(req.headers().get("authorization").is_none());
//!     Ok::<_, std::convert::Infallible>(http::Response::new(format!("hello {who}")))
//! }));
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let ok = http::Request::get("/").header("authorization", "Bearer s3cret").body(String::new()).unwrap();
//! let res = app.clone().oneshot(ok).await.unwrap();
//! assert_eq!(res.status(), 200);
//!
//! let bad = http::Request::get("/").header("authorization", "Bearer nope").body(String::new()).unwrap();
//! let res = app.oneshot(bad).await.unwrap();
//! assert_eq!(res.status(), 401);
//! # });
//! ```
//!
//! # Design decisions
//!
//! * **Any body, any server.** The service works on `http::Request<B>` for every `B`, and
//!   answers `http::Response<`[`AuthBody`]`<ResBody>>`: either the inner body untouched or the
//!   failure body. No `Send` bound is put on the request body beyond what the inner service
//!   needs, and no conversion is asked of the response body.
//! * **Exactly one evaluation of the chain; no future allocated when nothing can wait.** The
//!   chain's future borrows the request head. When every authenticator in the chain declares
//!   [`RequestAuthenticator::always_ready`] (token and password files, x509, front proxy,
//!   anonymous, sync functions, and the combinators over them), the layer authenticates inside
//!   `Service::call` on the caller's stack and calls the inner service right away: no boxed
//!   future and no moves of the head. Otherwise (webhook, OIDC, caches) one boxed future owns
//!   the head while authentication runs. Evaluating the chain twice to avoid that box would
//!   repeat side effects; correctness wins.
//!
//! # Measured cost (`benches/middleware.rs`)
//!
//! Per request, minus the no-op inner service and the request construction; chain = bearer +
//! WebSocket over a 10,000-token `TokenFile` behind the audience-agnostic wrapper with API
//! audiences, authenticated-group adder, anonymous behind fail-on-error; metrics on.
//! Instructions from callgrind (`MW_COUNT`), on-CPU time from `MW_ONCPU=1000000` (thread CPU
//! time, best of three), criterion from `cargo bench --bench middleware` (`valid_token` minus
//! `inner_only`); AMD EPYC, 2 vCPUs:
//!
//! | case | instructions | on-CPU time | criterion |
//! |---|---|---|---|
//! | valid bearer token | ≈3 070 (was 3 560) | 288–308 ns (was ≈430) | 285 ns median, 299 ns mean (was ≈400) |
//! | unknown token (401) | ≈3 280 (was 3 490) | 288–316 ns (was ≈410) | |
//! | no credential (anonymous) | ≈1 220 (was 1 350) | 90–110 ns (was ≈150) | |
//!
//! Where a valid-token request goes (instructions): `Authorization` parsing ≈540 (the
//! header-map lookup 160, UTF-8 validation 90), the token-file lookup ≈410 (keyed SipHash-2-4
//! of the token: see the token file module), the identity in `http::Extensions` ≈600 (three
//! allocations and their frees, all inside `http`), removing `Authorization` and scanning for
//! identity headers ≈340, metrics ≈125, the chain's plumbing (two unions, the bearer
//! extractor, the audience wrapper, the group adder) ≈490, and the layer itself (moving the
//! request head in and out of `Parts`, the decision, the response future) ≈460.
//!
//! What was cut to get here, and why it is safe: the group adder's result is built once per
//! stored user and shared ([`UserInfo`](crate::user::UserInfo) keeps it), instead of one
//! allocation per request; `authentication_attempts` is read from the duration histogram's
//! count instead of being a second counter (three atomic additions per request, not five);
//! the duration is timed with the CPU's time-stamp counter through `quanta` (two readings
//! ≈28 ns instead of ≈75 ns for `Instant::now` + `elapsed` on this virtual machine, where
//! `clock_gettime` is slow); `Bearer ` is matched before the general scheme scan.
//! Against kube-apiserver's authentication filter, the whole request is ≈ 2.7× faster here
//! (`docs/performance.md`, written by `conformance/bench.sh`, has the figures of its last run and
//! how the two sides' token tables differ).
//! * **Readiness is the inner service's** (tower's convention: `poll_ready` asks the inner
//!   service, and the call that follows uses the readiness it reserved). A concurrency limit
//!   placed *inside* this layer therefore also holds back requests that will be refused, and
//!   with an asynchronous chain (webhook, OIDC) a request keeps the slot it reserved while it
//!   authenticates. kube-apiserver runs its in-flight limits after authentication; to get that,
//!   put the limit in the application behind the layer (as `kube-authn serve` does for reviews)
//!   or check the limit in the handler, not as a tower layer under this one.
//! * **The failure is pluggable** ([`OnFailure`]): [`Unauthorized`] (Kubernetes' 401),
//!   [`UnavailableAs503`] (opt-in 503 when a backend is down, so clients retry),
//!   [`GrpcUnauthenticated`] (`grpc-status: 16` for tonic).
//! * **HTTP/2 and CVE-2023-44487.** kube-apiserver sets `Connection: close` on the response to
//!   an HTTP/2 request that failed authentication or was anonymous, which Go's HTTP/2 server
//!   turns into a GOAWAY so an unauthenticated client cannot keep a connection open for
//!   rapid-reset floods. hyper removes connection-specific headers from HTTP/2 responses (they
//!   are illegal there) and offers no way for a service to end its connection, so this layer
//!   marks such responses with the [`CloseConnection`] extension instead, and
//!   [`CloseConnection::watch`] gives the accept loop what it needs to call hyper's
//!   `graceful_shutdown` (GOAWAY) on that connection; it is also woken when an HTTP/2 request
//!   is dropped (the client reset its stream) while its authentication is pending, where
//!   kube-apiserver's cancelled authentication ends in the same `Connection: close`. See
//!   `examples/hyper.rs`.
//!
//! [`Chain`]: crate::chain::Chain
//! [`Context`]: crate::authenticator::Context
//! [`Description`]: crate::authenticator::Description
//! [`Metrics`]: crate::metrics::Metrics

mod failure;
mod headers;
mod identity;

pub use failure::{
    Failure, GrpcUnauthenticated, OnFailure, Reason, Unauthorized, UnavailableAs503, wants_pretty,
};
pub use identity::Authenticated;
#[cfg(feature = "axum")]
pub use identity::MissingAuthentication;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http::request::Parts;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;
use tracing::Instrument;

use crate::authenticator::{Audiences, Context, Description, RequestAuthenticator, Schemes};
use crate::chain::Chain;
use crate::error::{Error, ErrorKind};
use crate::metrics::{Metrics, Outcome};
use headers::HeaderRules;

/// Everything the services built by one layer share.
struct Shared<F> {
    chain: Chain,
    context: Context,
    api_audiences: Audiences,
    /// The chain's description with the builder's identity headers.
    description: Description,
    rules: HeaderRules,
    on_failure: F,
    metrics: Option<Arc<Metrics>>,
    /// Times attempts for `metrics` (see the metrics module docs); read raw, scaled once.
    clock: Option<quanta::Clock>,
    /// The chain never suspends ([`RequestAuthenticator::always_ready`]): authenticate inside
    /// `call`, without a boxed future.
    ready: bool,
}

/// Builds an [`AuthenticationLayer`] with options.
///
/// ```
/// use kube_authn::{authenticator::Audiences, chain::ChainBuilder, metrics::Metrics};
/// use kube_authn::middleware::{AuthenticationLayer, UnavailableAs503};
/// let metrics = std::sync::Arc::new(Metrics::new());
/// let layer = AuthenticationLayer::builder(ChainBuilder::new().build())
///     .api_audiences(Audiences::from(["https://kubernetes.default.svc"]))
///     .metrics(metrics.clone())
///     .on_failure(UnavailableAs503::new())
///     .build();
/// ```
pub struct Builder<F> {
    chain: Chain,
    api_audiences: Audiences,
    on_failure: F,
    metrics: Option<Arc<Metrics>>,
    /// Identity headers stripped beside the chain's own declarations.
    strip: Description,
}

impl<F: OnFailure> Builder<F> {
    /// The API audiences (kube-apiserver `--api-audiences`): put into every request's
    /// [`Context`] and checked against the audiences of the authenticated credential.
    ///
    /// ```
    /// use kube_authn::{authenticator::Audiences, chain::ChainBuilder, middleware::AuthenticationLayer};
    /// let b = AuthenticationLayer::builder(ChainBuilder::new().build()).api_audiences(Audiences::from(["api"]));
    /// ```
    pub fn api_audiences(mut self, audiences: Audiences) -> Self {
        self.api_audiences = audiences;
        self
    }

    /// The response for refused requests (default [`Unauthorized`]).
    ///
    /// ```
    /// use kube_authn::{chain::ChainBuilder, middleware::{AuthenticationLayer, GrpcUnauthenticated}};
    /// let b = AuthenticationLayer::builder(ChainBuilder::new().build()).on_failure(GrpcUnauthenticated::default());
    /// ```
    pub fn on_failure<G: OnFailure>(self, on_failure: G) -> Builder<G> {
        Builder {
            chain: self.chain,
            api_audiences: self.api_audiences,
            on_failure,
            metrics: self.metrics,
            strip: self.strip,
        }
    }

    /// Also strips `name` from every authenticated request, beside the identity headers the
    /// chain declares ([`RequestAuthenticator::describe`]). kube-apiserver's filter is given the
    /// front proxy's header names apart from its authenticator (`WithAuthentication`'s
    /// `requestHeaderConfig`), so they are cleared however the authenticator is wrapped; this
    /// is that for a chain holding a wrapper that does not forward `describe`.
    ///
    /// ```
    /// use kube_authn::{chain::ChainBuilder, middleware::AuthenticationLayer};
    /// let layer = AuthenticationLayer::builder(ChainBuilder::new().build())
    ///     .identity_header(http::HeaderName::from_static("x-proxy-user"))
    ///     .identity_header_prefix("X-Proxy-Extra-")
    ///     .build();
    /// assert!(layer.description().identity_headers().iter().any(|h| h == "x-proxy-user"));
    /// ```
    pub fn identity_header(mut self, name: http::HeaderName) -> Self {
        self.strip.add_identity_header(name);
        self
    }

    /// Also strips every header starting with `prefix` (ASCII case-insensitive) from every
    /// authenticated request; see [`Builder::identity_header`]. An empty `prefix` is ignored:
    /// it would name every header (Go's `ClearAuthenticationHeaders` would clear them all,
    /// but kube-apiserver's `--requestheader-extra-headers-prefix` cannot give it one).
    ///
    /// ```
    /// use kube_authn::{chain::ChainBuilder, middleware::AuthenticationLayer};
    /// let layer = AuthenticationLayer::builder(ChainBuilder::new().build())
    ///     .identity_header_prefix("X-Proxy-Extra-")
    ///     .build();
    /// // Kept lower-cased, as header names are.
    /// assert_eq!(layer.description().identity_header_prefixes(), ["x-proxy-extra-"]);
    /// ```
    pub fn identity_header_prefix(mut self, prefix: &str) -> Self {
        self.strip.add_identity_header_prefix(prefix);
        self
    }

    /// Records `authentication_attempts`, `authentication_duration_seconds` and
    /// `authenticated_user_requests` into `metrics`.
    ///
    /// ```
    /// use kube_authn::{chain::ChainBuilder, metrics::Metrics, middleware::AuthenticationLayer};
    /// let b = AuthenticationLayer::builder(ChainBuilder::new().build()).metrics(Metrics::new().into());
    /// ```
    pub fn metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The layer.
    ///
    /// ```
    /// use kube_authn::{chain::ChainBuilder, middleware::AuthenticationLayer};
    /// let layer = AuthenticationLayer::builder(ChainBuilder::new().build()).build();
    /// ```
    pub fn build(self) -> AuthenticationLayer<F> {
        let context = if self.api_audiences.is_empty() {
            Context::default()
        } else {
            Context::with_audiences(self.api_audiences.clone())
        };
        let mut description = self.chain.description().clone();
        for name in self.strip.identity_headers() {
            description.add_identity_header(name.clone());
        }
        for prefix in self.strip.identity_header_prefixes() {
            description.add_identity_header_prefix(prefix);
        }
        let rules = HeaderRules::new(&description);
        // Building the first clock calibrates quanta's TSC scale against the OS clock (≈0.6 ms,
        // once per process): paid here, not on the first request.
        let clock = self.metrics.as_ref().map(|_| quanta::Clock::new());
        AuthenticationLayer {
            shared: Arc::new(Shared {
                ready: self.chain.always_ready(),
                chain: self.chain,
                context,
                api_audiences: self.api_audiences,
                description,
                rules,
                on_failure: self.on_failure,
                metrics: self.metrics,
                clock,
            }),
        }
    }
}

/// The Tower layer. See the [module docs](self).
///
/// ```
/// use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
/// use kube_authn::middleware::AuthenticationLayer;
/// let layer = AuthenticationLayer::new(ChainBuilder::new().anonymous(Anonymous::new()).build());
/// assert!(!layer.schemes().bearer());
/// ```
pub struct AuthenticationLayer<F = Unauthorized> {
    shared: Arc<Shared<F>>,
}

impl<F> Clone for AuthenticationLayer<F> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<F> fmt::Debug for AuthenticationLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthenticationLayer")
            .field("chain", &self.shared.chain)
            .field("api_audiences", &self.shared.api_audiences)
            .finish_non_exhaustive()
    }
}

impl AuthenticationLayer<Unauthorized> {
    /// A layer over `chain` with no API audiences, no metrics and the Kubernetes 401.
    ///
    /// ```
    /// let layer = kube_authn::middleware::AuthenticationLayer::new(kube_authn::chain::ChainBuilder::new().build());
    /// ```
    pub fn new(chain: Chain) -> Self {
        Self::builder(chain).build()
    }

    /// A builder over `chain` (any request authenticator becomes a chain with
    /// [`Chain::from_authenticator`]).
    ///
    /// ```
    /// use kube_authn::{chain::{anonymous::Anonymous, Chain}, middleware::AuthenticationLayer};
    /// let layer = AuthenticationLayer::builder(Chain::from_authenticator(std::sync::Arc::new(Anonymous::new()))).build();
    /// ```
    pub fn builder(chain: Chain) -> Builder<Unauthorized> {
        Builder {
            chain,
            api_audiences: Audiences::default(),
            on_failure: Unauthorized,
            metrics: None,
            strip: Description::default(),
        }
    }
}

impl<F> AuthenticationLayer<F> {
    /// The `Authorization` schemes the chain accepts.
    ///
    /// ```
    /// use kube_authn::{authenticator::SyncTokenFn, chain::ChainBuilder, middleware::AuthenticationLayer};
    /// let chain = ChainBuilder::new().token(SyncTokenFn::new(|_: &str, _: &_| Ok(None))).build();
    /// assert!(AuthenticationLayer::new(chain).schemes().bearer());
    /// ```
    pub fn schemes(&self) -> Schemes {
        self.shared.chain.schemes()
    }

    /// What the chain declared (schemes and identity headers), with the identity headers given
    /// to [`Builder::identity_header`] and [`Builder::identity_header_prefix`]: the headers
    /// stripped from authenticated requests, beside the standard `X-Remote-*` ones.
    ///
    /// ```
    /// let layer = kube_authn::middleware::AuthenticationLayer::new(kube_authn::chain::ChainBuilder::new().build());
    /// assert!(layer.description().identity_headers().is_empty());
    /// ```
    pub fn description(&self) -> &Description {
        &self.shared.description
    }

    /// The schemes as the OpenAPI v2 `securityDefinitions` kube-apiserver published
    /// (`BearerToken` and/or `HTTPBasic`).
    ///
    /// ```
    /// use kube_authn::{authenticator::SyncTokenFn, chain::ChainBuilder, middleware::AuthenticationLayer};
    /// let chain = ChainBuilder::new().token(SyncTokenFn::new(|_: &str, _: &_| Ok(None))).build();
    /// let defs = AuthenticationLayer::new(chain).security_definitions();
    /// assert_eq!(defs["BearerToken"]["type"], "apiKey");
    /// assert!(defs.get("HTTPBasic").is_none());
    /// ```
    pub fn security_definitions(&self) -> serde_json::Value {
        let schemes = self.schemes();
        let mut defs = serde_json::Map::new();
        if schemes.bearer() {
            defs.insert(
                "BearerToken".into(),
                serde_json::json!({
                    "type": "apiKey",
                    "name": "authorization",
                    "in": "header",
                    "description": "Bearer Token authentication",
                }),
            );
        }
        if schemes.basic() {
            defs.insert(
                "HTTPBasic".into(),
                serde_json::json!({"type": "basic", "description": "HTTP Basic authentication"}),
            );
        }
        serde_json::Value::Object(defs)
    }

    /// The metrics handle, if one was given.
    ///
    /// ```
    /// let layer = kube_authn::middleware::AuthenticationLayer::new(kube_authn::chain::ChainBuilder::new().build());
    /// assert!(layer.metrics().is_none());
    /// ```
    pub fn metrics(&self) -> Option<&Arc<Metrics>> {
        self.shared.metrics.as_ref()
    }
}

impl<S, F> Layer<S> for AuthenticationLayer<F> {
    type Service = AuthenticationService<S, F>;

    fn layer(&self, inner: S) -> Self::Service {
        AuthenticationService {
            inner,
            shared: self.shared.clone(),
        }
    }
}

/// The service [`AuthenticationLayer`] builds. See the [module docs](self).
///
/// ```
/// use kube_authn::{chain::ChainBuilder, middleware::AuthenticationLayer};
/// use tower::{service_fn, Layer};
/// let svc = AuthenticationLayer::new(ChainBuilder::new().build())
///     .layer(service_fn(|_: http::Request<()>| async { Ok::<_, ()>(http::Response::new(())) }));
/// ```
pub struct AuthenticationService<S, F = Unauthorized> {
    inner: S,
    shared: Arc<Shared<F>>,
}

impl<S: Clone, F> Clone for AuthenticationService<S, F> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: self.shared.clone(),
        }
    }
}

impl<S: fmt::Debug, F> fmt::Debug for AuthenticationService<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthenticationService")
            .field("inner", &self.inner)
            .field("chain", &self.shared.chain)
            .finish_non_exhaustive()
    }
}

/// Marks a response to an HTTP/2 request that was refused or anonymous: kube-apiserver closes
/// such connections (`Connection: close`, which Go turns into a GOAWAY) so unauthenticated
/// clients cannot hold HTTP/2 connections open (CVE-2023-44487 mitigation). hyper drops
/// `Connection` headers on HTTP/2, so the signal travels as this response extension; a server
/// reacts with [`CloseConnection::watch`].
///
/// ```
/// let mut res = http::Response::new(());
/// res.extensions_mut().insert(kube_authn::middleware::CloseConnection);
/// assert!(kube_authn::middleware::CloseConnection::is_set(&res));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseConnection;

impl CloseConnection {
    /// Whether `response` carries the mark.
    ///
    /// ```
    /// assert!(!kube_authn::middleware::CloseConnection::is_set(&http::Response::new(())));
    /// ```
    pub fn is_set<B>(response: &Response<B>) -> bool {
        response.extensions().get::<CloseConnection>().is_some()
    }

    /// Wraps a per-connection service so that a marked response triggers `notify`; the
    /// connection task waits on it and calls hyper's `graceful_shutdown` (HTTP/2 GOAWAY: the
    /// response in flight completes). `notify` is also triggered when an HTTP/2 request is
    /// dropped while [`AuthenticationService`] waits for its authentication (the client reset
    /// the stream before the answer), as kube-apiserver's cancelled authentication ends in a
    /// refusal and `Connection: close`. hyper goes on accepting new streams until the client
    /// acknowledges the GOAWAY's PING, so the connection task should also stop serving and
    /// close the connection on its own ([`TlsServer`](crate::tls) refuses new streams and
    /// closes 1 s after the earlier ones end, as Go does).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tower::{service_fn, ServiceExt};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let notify = Arc::new(tokio::sync::Notify::new());
    /// let svc = kube_authn::middleware::CloseConnection::watch(
    ///     service_fn(|_: http::Request<()>| async {
    ///         let mut r = http::Response::new(());
    ///         r.extensions_mut().insert(kube_authn::middleware::CloseConnection);
    ///         Ok::<_, ()>(r)
    ///     }),
    ///     notify.clone(),
    /// );
    /// svc.oneshot(http::Request::new(())).await.unwrap();
    /// notify.notified().await; // already signalled
    /// # });
    /// ```
    pub fn watch<S>(inner: S, notify: Arc<tokio::sync::Notify>) -> WatchClose<S> {
        WatchClose { inner, notify }
    }
}

/// The service [`CloseConnection::watch`] returns.
///
/// ```
/// let _: Option<kube_authn::middleware::WatchClose<()>> = None;
/// ```
#[derive(Clone, Debug)]
pub struct WatchClose<S> {
    inner: S,
    notify: Arc<tokio::sync::Notify>,
}

impl<S, R, B> Service<R> for WatchClose<S>
where
    S: Service<R, Response = Response<B>>,
    S::Future: Send + 'static,
{
    type Response = Response<B>;
    type Error = S::Error;
    type Future = WatchCloseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> Self::Future {
        WatchCloseFuture {
            future: Some(self.inner.call(req)),
            notify: Some(self.notify.clone()),
        }
    }
}

pin_project! {
    /// The future of [`WatchClose`]: the inner service's response, and a signal to the
    /// connection's `Notify` when that response carries [`CloseConnection`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kube_authn::middleware::{CloseConnection, WatchCloseFuture};
    /// use tower::{Service, service_fn};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let notify = Arc::new(tokio::sync::Notify::new());
    /// let mut svc = CloseConnection::watch(
    ///     service_fn(|req: http::Request<bool>| async move {
    ///         let mut res = http::Response::new(());
    ///         if *req.body() {
    ///             res.extensions_mut().insert(CloseConnection);
    ///         }
    ///         Ok::<_, ()>(res)
    ///     }),
    ///     notify.clone(),
    /// );
    /// let wait = std::time::Duration::from_millis(20);
    ///
    /// // An unmarked response: no signal.
    /// let fut: WatchCloseFuture<_> = svc.call(http::Request::new(false));
    /// fut.await.unwrap();
    /// assert!(tokio::time::timeout(wait, notify.notified()).await.is_err());
    ///
    /// // A marked response signals the connection task.
    /// let res = svc.call(http::Request::new(true)).await.unwrap();
    /// assert!(CloseConnection::is_set(&res));
    /// assert!(tokio::time::timeout(wait, notify.notified()).await.is_ok());
    /// # });
    /// ```
    pub struct WatchCloseFuture<F> {
        // `Some` until dropped (see the `PinnedDrop` below).
        #[pin]
        future: Option<F>,
        // `None` once the response was produced.
        notify: Option<Arc<tokio::sync::Notify>>,
    }

    impl<F> PinnedDrop for WatchCloseFuture<F> {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            let Some(notify) = this.notify.take() else {
                return;
            };
            // Dropped before its response: drop the inner future here, and signal the
            // connection if that abandoned an HTTP/2 authentication ([`CloseIfAbandoned`]).
            AUTHENTICATION_ABANDONED.with(|a| a.set(false));
            this.future.set(None);
            if AUTHENTICATION_ABANDONED.with(|a| a.replace(false)) {
                notify.notify_one();
            }
        }
    }
}

std::thread_local! {
    /// Set by a [`ResponseFuture`] dropped while authenticating an HTTP/2 request, for the
    /// [`WatchCloseFuture`] dropping it (synchronously, on the same thread) to read.
    static AUTHENTICATION_ABANDONED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Armed while a [`ResponseFuture`] waits for the authentication of an HTTP/2 request: if the
/// future is dropped meanwhile (the client reset the stream, `RST_STREAM`, before the answer),
/// the connection is closed as after a refused request. kube-apiserver's authentication
/// fails when the request is cancelled, and the failure's `Connection: close` starts its
/// graceful shutdown; without this, a client could make unlimited cheap attempts on one
/// HTTP/2 connection by resetting each stream before the 401 (CVE-2023-44487).
struct CloseIfAbandoned(bool);

impl Drop for CloseIfAbandoned {
    fn drop(&mut self) {
        if self.0 {
            AUTHENTICATION_ABANDONED.with(|a| a.set(true));
        }
    }
}

impl<F, B, E> Future for WatchCloseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(future) = this.future.as_pin_mut() else {
            // Only the drop glue empties it.
            return Poll::Pending;
        };
        let out = std::task::ready!(future.poll(cx));
        if let (Ok(res), Some(notify)) = (&out, this.notify.take())
            && CloseConnection::is_set(res)
        {
            notify.notify_one();
        }
        Poll::Ready(out)
    }
}

/// Kubernetes' `audiencesAreAcceptable`.
fn audiences_acceptable(api: &Audiences, response: &Audiences) -> bool {
    api.is_empty() || response.is_empty() || api.intersects(response)
}

/// Go's `%v` of a `[]string`: `[a b]`.
fn go_list(audiences: &Audiences) -> String {
    let mut s = String::from("[");
    for (i, a) in audiences.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(a);
    }
    s.push(']');
    s
}

/// The outcome of authentication: the (possibly modified) head, and either whether to mark
/// the response for connection close, or the failure response.
type Decision = (Parts, Verdict);

/// What to do with the request once authentication is over.
enum Verdict {
    /// Call the inner service; `close` marks the response for connection close.
    Pass { close: bool },
    /// Answer with this failure response.
    Refuse(Response<Bytes>),
}
type AuthTask = Pin<Box<dyn Future<Output = Decision> + Send>>;

fn span(parts: &Parts) -> tracing::Span {
    tracing::debug_span!(
        "authenticate",
        method = %parts.method,
        path = parts.uri.path(),
        result = tracing::field::Empty,
        user = tracing::field::Empty,
    )
}

/// Authenticates in a boxed future (a chain that may suspend).
fn authenticate<F: OnFailure>(shared: Arc<Shared<F>>, parts: Parts) -> AuthTask {
    let span = span(&parts);
    // Without a subscriber interested in the span, skip entering and leaving it on every
    // poll (measured: ~180 instructions per request).
    if span.is_disabled() {
        Box::pin(run(shared, parts, span))
    } else {
        Box::pin(run(shared, parts, span.clone()).instrument(span))
    }
}

async fn run<F: OnFailure>(
    shared: Arc<Shared<F>>,
    mut parts: Parts,
    span: tracing::Span,
) -> Decision {
    let start = shared.clock.as_ref().map(quanta::Clock::raw);
    let abandoned = Abandoned {
        shared: &shared,
        start,
        span: &span,
    };
    let result = shared
        .chain
        .authenticate_request(&parts, &shared.context)
        .await;
    std::mem::forget(abandoned);
    let decision = decide(&shared, &mut parts, result, start, &span);
    (parts, decision)
}

/// Records an attempt whose authentication never finished (the connection closed, or the
/// server dropped the request, while the chain was waiting on a webhook, a JWKS or a lookup)
/// as an `error`, as kube-apiserver does: there the cancelled request context makes the
/// authenticator return an error, which its deferred metrics call records. Without it,
/// errors would go uncounted exactly when a backend is slow.
struct Abandoned<'a, F> {
    shared: &'a Shared<F>,
    start: Option<u64>,
    span: &'a tracing::Span,
}

impl<F> Drop for Abandoned<'_, F> {
    fn drop(&mut self) {
        record(self.shared, self.span, self.start, Outcome::Error, None);
    }
}

/// Records an attempt's outcome on its span and in the metrics (with the time since `start`).
fn record<F>(
    shared: &Shared<F>,
    span: &tracing::Span,
    start: Option<u64>,
    outcome: Outcome,
    user: Option<&str>,
) {
    if !span.is_disabled() {
        span.record("result", outcome.as_str());
    }
    if let (Some(m), Some(clock), Some(start)) = (&shared.metrics, &shared.clock, start) {
        let nanos = clock.delta_as_nanos(start, clock.raw());
        m.record(outcome, user, std::time::Duration::from_nanos(nanos));
    }
}

/// Authenticates on the caller's stack (a chain whose futures are always ready).
fn authenticate_now<F: OnFailure>(shared: &Shared<F>, parts: &mut Parts) -> Verdict {
    let span = span(parts);
    let _entered = (!span.is_disabled()).then(|| span.enter());
    let start = shared.clock.as_ref().map(quanta::Clock::raw);
    let result = shared
        .chain
        .authenticate_request(parts, &shared.context)
        .expect_ready();
    decide(shared, parts, result, start, &span)
}

/// An authentication error as the log shows it: Go-quoted (`%q`, as klog's structured
/// output quotes a string), so that text an attacker chose (a claim value, a backend's
/// message) cannot break the line and forge a log line of its own, whatever the subscriber
/// (tracing-subscriber's `fmt` writes a `%` field raw). Evaluated only when the event is
/// enabled.
fn log_text(err: &Error) -> String {
    crate::jwt::go_quote(&err.to_string())
}

fn decide<F: OnFailure>(
    shared: &Shared<F>,
    parts: &mut Parts,
    result: crate::authenticator::AuthResult,
    start: Option<u64>,
    span: &tracing::Span,
) -> Verdict {
    let record = |outcome: Outcome, user: Option<&str>| record(shared, span, start, outcome, user);
    let http2 = failure::is_http2(parts);
    let refuse = |parts: &Parts, reason: Reason<'_>| {
        let mut res =
            shared
                .on_failure
                .on_failure(&Failure::new(parts, reason, shared.chain.schemes()));
        if http2 {
            res.extensions_mut().insert(CloseConnection);
        }
        Verdict::Refuse(res)
    };
    match result {
        Ok(Some(response)) => {
            if !audiences_acceptable(&shared.api_audiences, &response.audiences) {
                let err = Error::new(
                    ErrorKind::InvalidCredential,
                    format!(
                        "unable to match the audience: {} , accepted: {}",
                        go_list(&response.audiences),
                        go_list(&shared.api_audiences)
                    ),
                );
                record(Outcome::Error, None);
                tracing::error!(error = %log_text(&err), "Unable to authenticate the request");
                return refuse(parts, Reason::AudienceMismatch(&err));
            }
            record(Outcome::Success, Some(response.user.name()));
            if !span.is_disabled() {
                span.record("user", response.user.name());
            }
            shared.rules.strip(&mut parts.headers);
            let close = http2 && response.user.is_anonymous();
            parts
                .extensions
                .insert(Authenticated::new(response.user, response.audiences));
            Verdict::Pass { close }
        }
        Ok(None) => {
            record(Outcome::Failure, None);
            refuse(parts, Reason::NotAuthenticated)
        }
        Err(err) => {
            record(Outcome::Error, None);
            tracing::error!(error = %log_text(&err), "Unable to authenticate the request");
            refuse(parts, Reason::Error(&err))
        }
    }
}

impl<S, F, ReqBody, ResBody> Service<Request<ReqBody>> for AuthenticationService<S, F>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    F: OnFailure,
{
    type Response = Response<AuthBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S, ReqBody>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let (parts, body) = req.into_parts();
        if !self.shared.ready {
            // The inner service is called after an await: the service that was polled ready
            // goes with this request and a clone stays behind (tower's pattern). The
            // synchronous path below calls it in place, so it clones nothing (with axum each
            // route is a boxed service whose clone allocates).
            let clone = self.inner.clone();
            let inner = std::mem::replace(&mut self.inner, clone);
            let http2 = parts.version == http::Version::HTTP_2;
            return ResponseFuture {
                auth: Some(authenticate(self.shared.clone(), parts)),
                pending: Some((inner, body)),
                close: false,
                failure: None,
                abandoned: CloseIfAbandoned(http2),
                call: None,
            };
        }
        // The whole chain answers synchronously: decide now and call the inner service (or
        // keep the failure response) without allocating a future.
        let mut parts = parts;
        match authenticate_now(&self.shared, &mut parts) {
            Verdict::Pass { close } => ResponseFuture {
                auth: None,
                pending: None,
                close,
                failure: None,
                abandoned: CloseIfAbandoned(false),
                call: Some(self.inner.call(Request::from_parts(parts, body))),
            },
            Verdict::Refuse(res) => ResponseFuture {
                auth: None,
                pending: None,
                close: false,
                failure: Some(res),
                abandoned: CloseIfAbandoned(false),
                call: None,
            },
        }
    }
}

pin_project! {
    /// The future of [`AuthenticationService`]: authentication (when the chain has to wait),
    /// then the inner service's response, or the failure response.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, Response, SyncTokenFn};
    /// use kube_authn::chain::ChainBuilder;
    /// use kube_authn::middleware::{AuthBody, AuthenticationLayer};
    /// use kube_authn::user::UserInfo;
    /// use http_body_util::BodyExt;
    /// use tower::{Layer, Service, service_fn};
    ///
    /// let chain = ChainBuilder::new()
    ///     .token(SyncTokenFn::new(|t: &str, _: &Context| {
    ///         Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"s3cret").is_ok()).then(|| Response::new(UserInfo::new("jane").into())))
    ///     }))
    ///     .build();
    /// let mut svc = AuthenticationLayer::new(chain).layer(service_fn(|_: http::Request<()>| async {
    ///     Ok::<_, std::convert::Infallible>(http::Response::new(String::from("hello")))
    /// }));
    /// let req = |token: &str| {
    ///     http::Request::get("/").header("authorization", format!("Bearer {token}")).body(()).unwrap()
    /// };
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let ok = svc.call(req("s3cret")).await.unwrap();
    /// assert_eq!(ok.status(), 200);
    /// let refused = svc.call(req("wrong")).await.unwrap();
    /// assert_eq!(refused.status(), 401);
    /// # });
    /// ```
    pub struct ResponseFuture<S, B>
    where
        S: Service<Request<B>>,
    {
        auth: Option<AuthTask>,
        pending: Option<(S, B)>,
        close: bool,
        failure: Option<Response<Bytes>>,
        abandoned: CloseIfAbandoned,
        #[pin]
        call: Option<S::Future>,
    }
}

impl<S, B> fmt::Debug for ResponseFuture<S, B>
where
    S: Service<Request<B>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("authenticating", &self.auth.is_some())
            .finish_non_exhaustive()
    }
}

impl<S, B, ResBody> Future for ResponseFuture<S, B>
where
    S: Service<Request<B>, Response = Response<ResBody>>,
{
    type Output = Result<Response<AuthBody<ResBody>>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            if let Some(call) = this.call.as_mut().as_pin_mut() {
                let mut res = std::task::ready!(call.poll(cx))?;
                if *this.close {
                    res.extensions_mut().insert(CloseConnection);
                }
                return Poll::Ready(Ok(res.map(AuthBody::inner)));
            }
            if let Some(res) = this.failure.take() {
                return Poll::Ready(Ok(res.map(AuthBody::failure)));
            }
            let auth = this
                .auth
                .as_mut()
                .expect("ResponseFuture polled after completion");
            let (parts, decision) = std::task::ready!(auth.as_mut().poll(cx));
            *this.auth = None;
            this.abandoned.0 = false;
            match decision {
                Verdict::Pass { close } => {
                    let (mut inner, body) = this
                        .pending
                        .take()
                        .expect("ResponseFuture polled after completion");
                    *this.close = close;
                    this.call
                        .set(Some(inner.call(Request::from_parts(parts, body))));
                }
                Verdict::Refuse(res) => {
                    this.pending.take();
                    return Poll::Ready(Ok(res.map(AuthBody::failure)));
                }
            }
        }
    }
}

pin_project! {
    /// The response body of [`AuthenticationService`]: the inner service's body, or the
    /// failure body.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, Response, SyncTokenFn};
    /// use kube_authn::chain::ChainBuilder;
    /// use kube_authn::middleware::{AuthBody, AuthenticationLayer};
    /// use kube_authn::user::UserInfo;
    /// use http_body_util::BodyExt;
    /// use tower::{Layer, Service, service_fn};
    ///
    /// let chain = ChainBuilder::new()
    ///     .token(SyncTokenFn::new(|t: &str, _: &Context| {
    ///         Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"s3cret").is_ok()).then(|| Response::new(UserInfo::new("jane").into())))
    ///     }))
    ///     .build();
    /// let mut svc = AuthenticationLayer::new(chain).layer(service_fn(|_: http::Request<()>| async {
    ///     Ok::<_, std::convert::Infallible>(http::Response::new(String::from("hello")))
    /// }));
    /// let req = |token: &str| {
    ///     http::Request::get("/").header("authorization", format!("Bearer {token}")).body(()).unwrap()
    /// };
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let ok: http::Response<AuthBody<String>> = svc.call(req("s3cret")).await.unwrap();
    /// assert_eq!(ok.into_body().collect().await.unwrap().to_bytes(), "hello");
    /// let refused = svc.call(req("wrong")).await.unwrap();
    /// let body = refused.into_body().collect().await.unwrap().to_bytes();
    /// assert!(std::str::from_utf8(&body).unwrap().contains(r#""reason":"Unauthorized""#));
    /// # });
    /// ```
    pub struct AuthBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B> {
        Inner { #[pin] body: B },
        Failure { data: Option<Bytes> },
    }
}

impl<B> AuthBody<B> {
    /// Wraps the inner service's body.
    ///
    /// ```
    /// use http_body::Body;
    /// let b = kube_authn::middleware::AuthBody::inner(String::from("x"));
    /// assert_eq!(b.size_hint().exact(), Some(1));
    /// ```
    pub fn inner(body: B) -> Self {
        Self {
            kind: Kind::Inner { body },
        }
    }

    /// A failure body.
    ///
    /// ```
    /// use http_body::Body;
    /// let b = kube_authn::middleware::AuthBody::<String>::failure(bytes::Bytes::from_static(b"no"));
    /// assert_eq!(b.size_hint().exact(), Some(2));
    /// ```
    pub fn failure(data: Bytes) -> Self {
        Self {
            kind: Kind::Failure {
                data: (!data.is_empty()).then_some(data),
            },
        }
    }
}

impl<B: fmt::Debug> fmt::Debug for AuthBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Inner { body } => f.debug_tuple("AuthBody::Inner").field(body).finish(),
            Kind::Failure { data } => f
                .debug_tuple("AuthBody::Failure")
                .field(&data.as_ref().map_or(0, Bytes::len))
                .finish(),
        }
    }
}

impl<B> Body for AuthBody<B>
where
    B: Body,
    B::Data: From<Bytes>,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        match self.project().kind.project() {
            KindProj::Inner { body } => body.poll_frame(cx),
            KindProj::Failure { data } => {
                Poll::Ready(data.take().map(|d| Ok(Frame::data(B::Data::from(d)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            Kind::Failure { data } => data.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Failure { data } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences_acceptable_vectors() {
        // TestAuthenticateRequestWithAud.
        let none = Audiences::default();
        let other = Audiences::from(["other"]);
        let some = Audiences::from(["some"]);
        assert!(audiences_acceptable(&none, &none));
        assert!(audiences_acceptable(&none, &other));
        assert!(audiences_acceptable(&other, &none));
        assert!(audiences_acceptable(&other, &other));
        assert!(!audiences_acceptable(&other, &some));
        assert!(audiences_acceptable(
            &Audiences::from(["a", "b"]),
            &Audiences::from(["c", "b"])
        ));
    }

    #[test]
    fn go_list_format() {
        assert_eq!(go_list(&Audiences::from(["x", "y"])), "[x y]");
        assert_eq!(go_list(&Audiences::default()), "[]");
    }
}
