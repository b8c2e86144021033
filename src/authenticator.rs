//! The core model: three authenticator traits, the three outcomes, audiences and the response.
//!
//! Every authenticator answers one of three things, visible in [`AuthResult`]:
//!
//! | outcome | value | Kubernetes (Go) |
//! |---|---|---|
//! | authenticated | `Ok(Some(response))` | `(resp, true, nil)` |
//! | not mine (no opinion; the union moves on) | `Ok(None)` | `(nil, false, nil)` |
//! | mine and bad | `Err(error)` | `(nil, false, err)` |
//!
//! There are three traits, as in k8s.io/apiserver: [`RequestAuthenticator`] sees the request
//! head (headers, path, extensions such as the TLS peer chain), [`TokenAuthenticator`] sees a
//! bearer token, [`PasswordAuthenticator`] sees a user name and password. Adapters in
//! [`crate::request`] turn token and password authenticators into request authenticators.
//!
//! # Async without a box on the fast path
//!
//! The traits are object safe (chains are built at run time from flags) and async, but most
//! authenticators answer without waiting: a token-file lookup, a cached certificate check.
//! They return an [`AuthFuture`], which is either *ready* (no allocation) or a boxed future.
//! Combinators such as the union keep going synchronously while their children are ready and
//! box only from the first child that actually waits, so a chain of in-memory authenticators
//! runs without a single allocation for the future machinery.
//!
//! Your own authenticator can be sync ([`SyncTokenFn`]) or async ([`AsyncTokenFn`]), the way
//! kopf lets an operator register a plain or an `async` login handler:
//!
//! ```
//! use aws_lc_rs::constant_time::verify_slices_are_equal;
//! use kube_authn::authenticator::{AsyncTokenFn, Context, Response, SyncTokenFn, TokenAuthenticator};
//! use kube_authn::user::UserInfo;
//! use std::sync::Arc;
//!
//! // Synchronous: answered in place. Secrets are compared in constant time (`==` stops at the
//! // first differing byte).
//! let sync = SyncTokenFn::new(|token: &str, _ctx: &Context| {
//!     let known = verify_slices_are_equal(token.as_bytes(), b"let-me-in").is_ok();
//!     Ok(known.then(|| Response::new(Arc::new(UserInfo::new("alice")))))
//! });
//! // Asynchronous: may call other services.
//! let remote = AsyncTokenFn::new(|token: String, _ctx: Context| async move {
//!     tokio::task::yield_now().await;
//!     let known = verify_slices_are_equal(token.as_bytes(), b"remote").is_ok();
//!     Ok(known.then(|| Response::new(Arc::new(UserInfo::new("bob")))))
//! });
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let ctx = Context::default();
//! assert_eq!(sync.authenticate_token("let-me-in", &ctx).await.unwrap().unwrap().user.name(), "alice");
//! assert!(sync.authenticate_token("nope", &ctx).await.unwrap().is_none());
//! assert_eq!(remote.authenticate_token("remote", &ctx).await.unwrap().unwrap().user.name(), "bob");
//! # });
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use http::HeaderName;
use http::request::Parts;

use crate::error::{Error, ErrorKind};
use crate::user::UserInfo;

/// The result of one authentication attempt: `Ok(Some(_))` authenticated, `Ok(None)` not mine,
/// `Err(_)` mine and bad (the table in the [module docs](self) maps them to Kubernetes').
///
/// ```
/// use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
/// use kube_authn::user::UserInfo;
/// use kube_authn::{AuthResult, Error};
///
/// // Owns the tokens that start with `team-`.
/// let teams = SyncTokenFn::new(|token: &str, _: &Context| -> AuthResult {
///     match token.strip_prefix("team-") {
///         None => Ok(None),
///         Some("payments") => Ok(Some(Response::new(UserInfo::new("payments-bot").into()))),
///         Some(_) => Err(Error::msg("unknown team token")),
///     }
/// });
/// let ctx = Context::default();
/// let outcome = |token| teams.authenticate_token(token, &ctx).into_ready().unwrap();
/// assert_eq!(outcome("team-payments").unwrap().unwrap().user.name(), "payments-bot");
/// assert!(outcome("eyJhbGciOi...").unwrap().is_none()); // not mine: the next one is asked
/// assert_eq!(outcome("team-nobody").unwrap_err().to_string(), "unknown team token");
/// ```
pub type AuthResult = Result<Option<Response>, Error>;

/// A successful authentication: the user and the audiences the credential was validated for.
///
/// The user is behind an [`Arc`] and never mutated: caches and the middleware share it.
///
/// ```
/// use kube_authn::authenticator::{Audiences, Response};
/// use kube_authn::user::UserInfo;
/// use std::sync::Arc;
///
/// let r = Response::new(Arc::new(UserInfo::new("a"))).with_audiences(Audiences::from(["api"]));
/// assert_eq!(r.audiences.iter().collect::<Vec<_>>(), ["api"]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The authenticated user.
    pub user: Arc<UserInfo>,
    /// Audiences the credential was validated against; empty when the authenticator is not
    /// audience-aware.
    pub audiences: Audiences,
}

impl Response {
    /// A response for `user` with no audiences.
    ///
    /// ```
    /// let r = kube_authn::Response::new(std::sync::Arc::new(kube_authn::user::UserInfo::new("u")));
    /// assert!(r.audiences.is_empty());
    /// ```
    pub fn new(user: Arc<UserInfo>) -> Self {
        Self {
            user,
            audiences: Audiences::default(),
        }
    }

    /// This response with `audiences` set.
    ///
    /// ```
    /// use kube_authn::{authenticator::Audiences, user::UserInfo, Response};
    /// let r = Response::new(UserInfo::new("u").into()).with_audiences(Audiences::from(["a"]));
    /// assert!(r.audiences.has("a"));
    /// ```
    pub fn with_audiences(mut self, audiences: Audiences) -> Self {
        self.audiences = audiences;
        self
    }
}

/// A list of audiences (k8s `authenticator.Audiences`). Cheap to clone.
///
/// ```
/// use kube_authn::authenticator::Audiences;
/// let a = Audiences::from(["foo", "bar"]);
/// let t = Audiences::from(["foo", "wat"]);
/// assert_eq!(a.intersect(&t), Audiences::from(["foo"]));
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Audiences(Option<Arc<[Box<str>]>>);

impl Audiences {
    /// Builds audiences from strings.
    ///
    /// ```
    /// let a = kube_authn::authenticator::Audiences::new(vec!["x".to_string()]);
    /// assert_eq!(a.len(), 1);
    /// ```
    pub fn new<I, S>(audiences: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let list: Vec<Box<str>> = audiences.into_iter().map(|s| s.as_ref().into()).collect();
        if list.is_empty() {
            Self(None)
        } else {
            Self(Some(list.into()))
        }
    }

    /// Whether there are none.
    ///
    /// ```
    /// assert!(kube_authn::authenticator::Audiences::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// How many there are (duplicates included).
    ///
    /// ```
    /// assert_eq!(kube_authn::authenticator::Audiences::from(["a", "a"]).len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |a| a.len())
    }

    /// The audiences in order.
    ///
    /// ```
    /// let a = kube_authn::authenticator::Audiences::from(["a", "b"]);
    /// assert_eq!(a.iter().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        self.0.as_deref().unwrap_or(&[]).iter().map(|s| &**s)
    }

    /// Exact-match membership (k8s `Has`).
    ///
    /// ```
    /// assert!(kube_authn::authenticator::Audiences::from(["a"]).has("a"));
    /// ```
    pub fn has(&self, audience: &str) -> bool {
        self.iter().any(|a| a == audience)
    }

    /// k8s `a.Intersect(t)`: the elements of `target`, in `target`'s order and with its
    /// duplicates, that `self` contains. Does not allocate when every element of `target` is
    /// kept (the common case of request audiences equal to the API audiences).
    ///
    /// ```
    /// use kube_authn::authenticator::Audiences;
    /// let a = Audiences::from(["foo", "bar"]);
    /// assert_eq!(a.intersect(&Audiences::from(["pls", "wat"])), Audiences::default());
    /// ```
    pub fn intersect(&self, target: &Audiences) -> Audiences {
        match (&self.0, &target.0) {
            (Some(a), Some(t)) if Arc::ptr_eq(a, t) => target.clone(),
            (Some(_), Some(t)) => {
                if t.iter().all(|x| self.has(x)) {
                    target.clone()
                } else {
                    Audiences::new(t.iter().filter(|x| self.has(x)))
                }
            }
            _ => Audiences::default(),
        }
    }

    /// Whether `self` and `other` share at least one audience.
    ///
    /// ```
    /// use kube_authn::authenticator::Audiences;
    /// assert!(Audiences::from(["a", "b"]).intersects(&Audiences::from(["b"])));
    /// ```
    pub fn intersects(&self, other: &Audiences) -> bool {
        // The same non-empty list (the audience-agnostic wrapper hands the API audiences back
        // on every request) intersects itself without comparing strings.
        if let (Some(a), Some(b)) = (&self.0, &other.0)
            && Arc::ptr_eq(a, b)
            && !a.is_empty()
        {
            return true;
        }
        other.iter().any(|x| self.has(x))
    }
}

impl<const N: usize> From<[&str; N]> for Audiences {
    fn from(list: [&str; N]) -> Self {
        Audiences::new(list)
    }
}

impl From<Vec<String>> for Audiences {
    fn from(list: Vec<String>) -> Self {
        Audiences::new(list)
    }
}

impl fmt::Debug for Audiences {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Per-request data every authenticator may consult: today the API audiences the request is
/// checked against (k8s `authenticator.WithAudiences` on the request context).
///
/// `audiences()` is `None` when no audiences were set at all, which is different from an empty
/// set: the audience-agnostic wrappers skip their checks only in the first case.
///
/// ```
/// use kube_authn::authenticator::{Audiences, Context};
/// assert!(Context::default().audiences().is_none());
/// let ctx = Context::with_audiences(Audiences::from(["api"]));
/// assert!(ctx.audiences().unwrap().has("api"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Context {
    audiences: Option<Audiences>,
}

impl Context {
    /// A context carrying `audiences` (possibly empty, which is not the same as none).
    ///
    /// ```
    /// let ctx = kube_authn::authenticator::Context::with_audiences(Default::default());
    /// assert!(ctx.audiences().is_some());
    /// ```
    pub fn with_audiences(audiences: Audiences) -> Self {
        Self {
            audiences: Some(audiences),
        }
    }

    /// The audiences, if any were set.
    ///
    /// ```
    /// assert!(kube_authn::authenticator::Context::default().audiences().is_none());
    /// ```
    pub fn audiences(&self) -> Option<&Audiences> {
        self.audiences.as_ref()
    }
}

/// The future an authenticator returns: either already *ready* (no allocation) or boxed.
/// See the [module docs](self).
///
/// ```
/// use kube_authn::authenticator::AuthFuture;
/// let f = AuthFuture::ready(Ok(None));
/// assert!(f.is_ready());
/// assert!(matches!(f.into_ready(), Ok(Ok(None))));
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct AuthFuture<'a>(FutureRepr<'a>);

enum FutureRepr<'a> {
    Ready(Option<AuthResult>),
    Boxed(Pin<Box<dyn Future<Output = AuthResult> + Send + 'a>>),
}

impl<'a> AuthFuture<'a> {
    /// An already-known result.
    ///
    /// ```
    /// let _ = kube_authn::authenticator::AuthFuture::ready(Ok(None));
    /// ```
    #[inline]
    pub fn ready(result: AuthResult) -> Self {
        Self(FutureRepr::Ready(Some(result)))
    }

    /// Boxes a future.
    ///
    /// ```
    /// let f = kube_authn::authenticator::AuthFuture::new(async { Ok(None) });
    /// assert!(!f.is_ready());
    /// ```
    pub fn new(future: impl Future<Output = AuthResult> + Send + 'a) -> Self {
        Self(FutureRepr::Boxed(Box::pin(future)))
    }

    /// Whether the result is already known (awaiting it will not wait).
    ///
    /// ```
    /// assert!(kube_authn::authenticator::AuthFuture::ready(Ok(None)).is_ready());
    /// ```
    pub fn is_ready(&self) -> bool {
        matches!(self.0, FutureRepr::Ready(Some(_)))
    }

    /// The result of a future from an authenticator that declares
    /// [`always_ready`](RequestAuthenticator::always_ready). A pending future breaks that
    /// promise: it is logged and becomes an internal error (fail closed), never awaited.
    pub(crate) fn expect_ready(self) -> AuthResult {
        self.into_ready().unwrap_or_else(|_pending| {
            tracing::error!(
                "an authenticator declared always_ready() but returned a pending future; refusing the request"
            );
            Err(Error::from_static(
                ErrorKind::Internal,
                "authenticator returned a pending future despite always_ready()",
            ))
        })
    }

    /// The result if it is already known, otherwise the future back.
    ///
    /// ```
    /// use kube_authn::authenticator::AuthFuture;
    /// assert!(AuthFuture::new(async { Ok(None) }).into_ready().is_err());
    /// ```
    #[inline]
    pub fn into_ready(self) -> Result<AuthResult, Self> {
        match self.0 {
            FutureRepr::Ready(Some(result)) => Ok(result),
            other => Err(Self(other)),
        }
    }

    /// Applies `f` to the result: in place when ready, otherwise in a new boxed future.
    ///
    /// ```
    /// use kube_authn::authenticator::AuthFuture;
    /// let f = AuthFuture::ready(Ok(None)).map(|_| Err(kube_authn::Error::msg("no")));
    /// assert!(matches!(f.into_ready(), Ok(Err(_))));
    /// ```
    #[inline]
    pub fn map(self, f: impl FnOnce(AuthResult) -> AuthResult + Send + 'a) -> Self {
        match self.into_ready() {
            Ok(result) => Self::ready(f(result)),
            Err(pending) => Self::new(async move { f(pending.await) }),
        }
    }
}

impl Future for AuthFuture<'_> {
    type Output = AuthResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<AuthResult> {
        match &mut self.0 {
            FutureRepr::Ready(result) => Poll::Ready(result.take().unwrap_or_else(|| {
                Err(Error::from_static(
                    ErrorKind::Internal,
                    "authentication future polled after completion",
                ))
            })),
            FutureRepr::Boxed(future) => future.as_mut().poll(cx),
        }
    }
}

impl fmt::Debug for AuthFuture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_ready() {
            "AuthFuture::Ready"
        } else {
            "AuthFuture::Pending"
        })
    }
}

/// Authentication schemes a chain accepts in the `Authorization` header (what kube-apiserver
/// once published as OpenAPI `securityDefinitions`).
///
/// ```
/// use kube_authn::authenticator::Schemes;
/// let s = Schemes::BASIC | Schemes::BEARER;
/// assert!(s.basic() && s.bearer());
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Schemes(u8);

impl fmt::Debug for Schemes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = [(self.basic(), "Basic"), (self.bearer(), "Bearer")]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect();
        f.write_str(&names.join("|"))
    }
}

impl Schemes {
    /// No `Authorization` scheme.
    ///
    /// ```
    /// use kube_authn::authenticator::Schemes;
    /// assert!(!Schemes::NONE.basic() && !Schemes::NONE.bearer());
    /// assert_eq!(Schemes::NONE, Schemes::default());
    /// assert_eq!(Schemes::NONE | Schemes::BASIC, Schemes::BASIC);
    /// ```
    pub const NONE: Schemes = Schemes(0);
    /// `Authorization: Basic`.
    ///
    /// ```
    /// use kube_authn::authenticator::{Description, RequestAuthenticator, Schemes, SyncPasswordFn};
    /// use kube_authn::request::Basic;
    /// let mut d = Description::default();
    /// Basic::new(SyncPasswordFn::new(|_: &str, _: &str, _: &_| Ok(None))).describe(&mut d);
    /// assert_eq!(d.schemes, Schemes::BASIC);
    /// assert!(Schemes::BASIC.basic() && !Schemes::BASIC.bearer());
    /// ```
    pub const BASIC: Schemes = Schemes(1);
    /// `Authorization: Bearer` (and the WebSocket bearer subprotocol).
    ///
    /// ```
    /// use kube_authn::authenticator::{Description, RequestAuthenticator, Schemes, SyncTokenFn};
    /// use kube_authn::request::{Bearer, WebSocketProtocol};
    /// let tokens = || SyncTokenFn::new(|_: &str, _: &_| Ok(None));
    /// let mut d = Description::default();
    /// Bearer::new(tokens()).describe(&mut d);
    /// WebSocketProtocol::new(tokens()).describe(&mut d);
    /// assert_eq!(d.schemes, Schemes::BEARER);
    /// assert_eq!(format!("{:?}", Schemes::BEARER | Schemes::BASIC), "Basic|Bearer");
    /// ```
    pub const BEARER: Schemes = Schemes(2);

    /// Whether Basic is accepted.
    ///
    /// ```
    /// assert!(kube_authn::authenticator::Schemes::BASIC.basic());
    /// ```
    pub fn basic(self) -> bool {
        self.0 & Self::BASIC.0 != 0
    }

    /// Whether Bearer is accepted.
    ///
    /// ```
    /// assert!(kube_authn::authenticator::Schemes::BEARER.bearer());
    /// ```
    pub fn bearer(self) -> bool {
        self.0 & Self::BEARER.0 != 0
    }
}

impl std::ops::BitOr for Schemes {
    type Output = Schemes;
    fn bitor(self, rhs: Schemes) -> Schemes {
        Schemes(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Schemes {
    fn bitor_assign(&mut self, rhs: Schemes) {
        self.0 |= rhs.0;
    }
}

/// What a built chain tells the middleware about itself, collected once at construction
/// through [`RequestAuthenticator::describe`]: the `Authorization` schemes it accepts and the
/// identity headers that must never reach the application.
///
/// ```
/// use kube_authn::authenticator::{Description, Schemes};
/// let mut d = Description::default();
/// d.schemes |= Schemes::BEARER;
/// d.add_identity_header(http::HeaderName::from_static("x-remote-user"));
/// assert_eq!(d.identity_headers().len(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Description {
    /// `Authorization` schemes accepted.
    pub schemes: Schemes,
    identity_headers: Vec<HeaderName>,
    identity_header_prefixes: Vec<String>,
}

impl Description {
    /// Declares a header that carries identity (stripped before the application sees it).
    ///
    /// ```
    /// let mut d = kube_authn::authenticator::Description::default();
    /// d.add_identity_header(http::HeaderName::from_static("x-user"));
    /// d.add_identity_header(http::HeaderName::from_static("x-user"));
    /// assert_eq!(d.identity_headers().len(), 1);
    /// ```
    pub fn add_identity_header(&mut self, name: HeaderName) {
        if !self.identity_headers.contains(&name) {
            self.identity_headers.push(name);
        }
    }

    /// Declares a header-name prefix (matched case-insensitively) that carries identity.
    ///
    /// ```
    /// let mut d = kube_authn::authenticator::Description::default();
    /// d.add_identity_header_prefix("X-Remote-Extra-");
    /// assert_eq!(d.identity_header_prefixes(), ["x-remote-extra-"]);
    /// ```
    pub fn add_identity_header_prefix(&mut self, prefix: &str) {
        let prefix = prefix.to_ascii_lowercase();
        if !self.identity_header_prefixes.contains(&prefix) {
            self.identity_header_prefixes.push(prefix);
        }
    }

    /// Identity headers declared so far.
    ///
    /// ```
    /// assert!(kube_authn::authenticator::Description::default().identity_headers().is_empty());
    /// ```
    pub fn identity_headers(&self) -> &[HeaderName] {
        &self.identity_headers
    }

    /// Identity header prefixes declared so far (lower-case).
    ///
    /// ```
    /// assert!(kube_authn::authenticator::Description::default().identity_header_prefixes().is_empty());
    /// ```
    pub fn identity_header_prefixes(&self) -> &[String] {
        &self.identity_header_prefixes
    }
}

/// Authenticates a request from its head (k8s `authenticator.Request`).
///
/// Implementations must not panic on any input and must not put credentials in errors.
///
/// ```
/// use kube_authn::authenticator::{AuthFuture, Context, RequestAuthenticator, Response};
/// use kube_authn::user::UserInfo;
///
/// /// Trusts a header set by a sidecar on the same pod (an example, not a recommendation).
/// struct LocalSidecar;
/// impl RequestAuthenticator for LocalSidecar {
///     fn authenticate_request<'a>(&'a self, req: &'a http::request::Parts, _: &'a Context) -> AuthFuture<'a> {
///         let user = req.headers.get("x-sidecar-user").and_then(|v| v.to_str().ok());
///         AuthFuture::ready(Ok(user.map(|u| Response::new(UserInfo::new(u).into()))))
///     }
/// }
/// ```
pub trait RequestAuthenticator: Send + Sync {
    /// Authenticates `req`: `Ok(Some)` with the user, `Ok(None)` when the request carries no
    /// credential of this kind, `Err` when it carries one that is bad. `ctx` has the API
    /// audiences the credential must be valid for.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
    /// use kube_authn::request::Bearer;
    /// use kube_authn::user::UserInfo;
    ///
    /// let bearer = Bearer::new(SyncTokenFn::new(|t: &str, _: &Context| {
    ///     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"s3cret").is_ok()).then(|| Response::new(UserInfo::new("jane").into())))
    /// }));
    /// let head = |auth: Option<&str>| {
    ///     let mut req = http::Request::get("/api");
    ///     if let Some(a) = auth {
    ///         req = req.header("authorization", a);
    ///     }
    ///     req.body(()).unwrap().into_parts().0
    /// };
    /// let ctx = Context::default();
    /// let run = |parts| bearer.authenticate_request(&parts, &ctx).into_ready().unwrap();
    /// assert_eq!(run(head(Some("Bearer s3cret"))).unwrap().unwrap().user.name(), "jane");
    /// assert!(run(head(None)).unwrap().is_none());
    /// assert_eq!(run(head(Some("Bearer wrong"))).unwrap_err().to_string(), "invalid bearer token");
    /// ```
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a>;

    /// Adds what this authenticator accepts (schemes, identity headers) to `description`.
    /// Combinators forward to their children. The default declares nothing, so a wrapper of
    /// your own must forward it too, or the middleware does not know its child's identity
    /// headers (name them with [`crate::middleware::Builder::identity_header`] then).
    ///
    /// An authenticator that trusts a header declares it, so that the middleware strips it
    /// before the application sees the request:
    ///
    /// ```
    /// use kube_authn::authenticator::{AuthFuture, Context, Description, RequestAuthenticator, Response};
    /// use kube_authn::user::UserInfo;
    ///
    /// struct LocalSidecar;
    /// impl RequestAuthenticator for LocalSidecar {
    ///     fn authenticate_request<'a>(&'a self, req: &'a http::request::Parts, _: &'a Context) -> AuthFuture<'a> {
    ///         let user = req.headers.get("x-sidecar-user").and_then(|v| v.to_str().ok());
    ///         AuthFuture::ready(Ok(user.map(|u| Response::new(UserInfo::new(u).into()))))
    ///     }
    ///     fn describe(&self, description: &mut Description) {
    ///         description.add_identity_header(http::HeaderName::from_static("x-sidecar-user"));
    ///     }
    /// }
    /// let mut d = Description::default();
    /// LocalSidecar.describe(&mut d);
    /// assert_eq!(d.identity_headers(), ["x-sidecar-user"]);
    /// ```
    fn describe(&self, description: &mut Description) {
        let _ = description;
    }

    /// Whether every future this authenticator returns is ready (it never waits on I/O,
    /// timers or other tasks). The default is `false`. In-memory authenticators return
    /// `true`, combinators when all their children do. [`AuthenticationLayer`] then
    /// authenticates inside `Service::call` and allocates no future per request.
    ///
    /// Returning `true` and then a pending future is a bug in the implementation; the
    /// middleware answers such a request as an authentication error (it fails closed).
    ///
    /// [`AuthenticationLayer`]: crate::middleware::AuthenticationLayer
    ///
    /// ```
    /// use kube_authn::authenticator::{RequestAuthenticator, SyncRequestFn};
    /// assert!(SyncRequestFn::new(|_: &http::request::Parts, _: &_| Ok(None)).always_ready());
    /// ```
    fn always_ready(&self) -> bool {
        false
    }
}

/// Authenticates a bearer token (k8s `authenticator.Token`).
///
/// ```
/// use kube_authn::authenticator::{AuthFuture, Context, TokenAuthenticator};
/// struct Nobody;
/// impl TokenAuthenticator for Nobody {
///     fn authenticate_token<'a>(&'a self, _: &'a str, _: &'a Context) -> AuthFuture<'a> {
///         AuthFuture::ready(Ok(None))
///     }
/// }
/// ```
pub trait TokenAuthenticator: Send + Sync {
    /// Authenticates `token` (already taken out of the request by [`Bearer`] or
    /// [`WebSocketProtocol`]): `Ok(None)` when the token is not one this authenticator
    /// knows, `Err` when it is one of its own and invalid.
    ///
    /// [`Bearer`]: crate::request::Bearer
    /// [`WebSocketProtocol`]: crate::request::WebSocketProtocol
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
    /// use kube_authn::user::UserInfo;
    /// let tokens = SyncTokenFn::new(|t: &str, _: &Context| {
    ///     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"s3cret").is_ok()).then(|| Response::new(UserInfo::new("jane").into())))
    /// });
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let ctx = Context::default();
    /// let resp = tokens.authenticate_token("s3cret", &ctx).await.unwrap().unwrap();
    /// assert_eq!(resp.user.name(), "jane");
    /// assert!(tokens.authenticate_token("other", &ctx).await.unwrap().is_none());
    /// # });
    /// ```
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a>;

    /// Whether every future this authenticator returns is ready (it never waits on I/O,
    /// timers or other tasks). The default is `false`. In-memory authenticators return
    /// `true`, combinators when all their children do. [`AuthenticationLayer`] then
    /// authenticates inside `Service::call` and allocates no future per request.
    ///
    /// Returning `true` and then a pending future is a bug in the implementation; the
    /// middleware answers such a request as an authentication error (it fails closed).
    ///
    /// [`AuthenticationLayer`]: crate::middleware::AuthenticationLayer
    ///
    /// ```
    /// use kube_authn::authenticator::{AsyncTokenFn, SyncTokenFn, TokenAuthenticator};
    /// assert!(SyncTokenFn::new(|_: &str, _: &_| Ok(None)).always_ready());
    /// assert!(!AsyncTokenFn::new(|_, _| async { Ok(None) }).always_ready());
    /// ```
    fn always_ready(&self) -> bool {
        false
    }
}

/// Authenticates a user name and password (k8s `authenticator.Password`, removed from
/// Kubernetes in 1.19 together with basic auth).
///
/// ```
/// use kube_authn::authenticator::{AuthFuture, Context, PasswordAuthenticator};
/// struct Nobody;
/// impl PasswordAuthenticator for Nobody {
///     fn authenticate_password<'a>(&'a self, _: &'a str, _: &'a str, _: &'a Context) -> AuthFuture<'a> {
///         AuthFuture::ready(Ok(None))
///     }
/// }
/// ```
pub trait PasswordAuthenticator: Send + Sync {
    /// Authenticates `user` with `password` (taken out of `Authorization: Basic` by
    /// [`Basic`](crate::request::Basic)).
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, PasswordAuthenticator, Response, SyncPasswordFn};
    /// use kube_authn::user::UserInfo;
    /// use kube_authn::Error;
    /// let passwords = SyncPasswordFn::new(|user: &str, password: &str, _: &Context| match user {
    ///     "admin" if aws_lc_rs::constant_time::verify_slices_are_equal(password.as_bytes(), b"correct horse").is_ok() => Ok(Some(Response::new(UserInfo::new("admin").into()))),
    ///     "admin" => Err(Error::msg("wrong password")),
    ///     _ => Ok(None),
    /// });
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let ctx = Context::default();
    /// let ok = passwords.authenticate_password("admin", "correct horse", &ctx).await;
    /// assert_eq!(ok.unwrap().unwrap().user.name(), "admin");
    /// assert!(passwords.authenticate_password("admin", "guess", &ctx).await.is_err());
    /// assert!(passwords.authenticate_password("bob", "x", &ctx).await.unwrap().is_none());
    /// # });
    /// ```
    fn authenticate_password<'a>(
        &'a self,
        user: &'a str,
        password: &'a str,
        ctx: &'a Context,
    ) -> AuthFuture<'a>;

    /// Whether every future this authenticator returns is ready (it never waits on I/O,
    /// timers or other tasks). The default is `false`. In-memory authenticators return
    /// `true`, combinators when all their children do. [`AuthenticationLayer`] then
    /// authenticates inside `Service::call` and allocates no future per request.
    ///
    /// Returning `true` and then a pending future is a bug in the implementation; the
    /// middleware answers such a request as an authentication error (it fails closed).
    ///
    /// [`AuthenticationLayer`]: crate::middleware::AuthenticationLayer
    ///
    /// ```
    /// use kube_authn::authenticator::{PasswordAuthenticator, SyncPasswordFn};
    /// assert!(SyncPasswordFn::new(|_: &str, _: &str, _: &_| Ok(None)).always_ready());
    /// ```
    fn always_ready(&self) -> bool {
        false
    }
}

macro_rules! forward_pointer_impls {
    ($($ptr:ident),*) => {$(
        impl<T: RequestAuthenticator + ?Sized> RequestAuthenticator for $ptr<T> {
            fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
                (**self).authenticate_request(req, ctx)
            }
            fn describe(&self, description: &mut Description) {
                (**self).describe(description)
            }
            fn always_ready(&self) -> bool {
                (**self).always_ready()
            }
        }
        impl<T: TokenAuthenticator + ?Sized> TokenAuthenticator for $ptr<T> {
            fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
                (**self).authenticate_token(token, ctx)
            }
            fn always_ready(&self) -> bool {
                (**self).always_ready()
            }
        }
        impl<T: PasswordAuthenticator + ?Sized> PasswordAuthenticator for $ptr<T> {
            fn authenticate_password<'a>(&'a self, user: &'a str, password: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
                (**self).authenticate_password(user, password, ctx)
            }
            fn always_ready(&self) -> bool {
                (**self).always_ready()
            }
        }
    )*};
}
forward_pointer_impls!(Arc, Box);

/// A token authenticator from a synchronous function (answered without allocation).
///
/// ```
/// use kube_authn::authenticator::{Context, SyncTokenFn};
/// let auth = SyncTokenFn::new(|_token: &str, _ctx: &Context| Ok(None));
/// ```
#[derive(Clone)]
pub struct SyncTokenFn<F>(F);

impl<F> SyncTokenFn<F>
where
    F: Fn(&str, &Context) -> AuthResult + Send + Sync,
{
    /// Wraps `f`.
    ///
    /// ```
    /// let _ = kube_authn::authenticator::SyncTokenFn::new(|_: &str, _: &_| Ok(None));
    /// ```
    pub fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F> TokenAuthenticator for SyncTokenFn<F>
where
    F: Fn(&str, &Context) -> AuthResult + Send + Sync,
{
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::ready((self.0)(token, ctx))
    }

    fn always_ready(&self) -> bool {
        true
    }
}

/// A token authenticator from an `async` function. The function gets owned copies of the
/// token and context so its future may outlive the call.
///
/// ```
/// use kube_authn::authenticator::{AsyncTokenFn, Context};
/// let auth = AsyncTokenFn::new(|_token: String, _ctx: Context| async { Ok(None) });
/// ```
#[derive(Clone)]
pub struct AsyncTokenFn<F>(F);

impl<F, Fut> AsyncTokenFn<F>
where
    F: Fn(String, Context) -> Fut + Send + Sync,
    Fut: Future<Output = AuthResult> + Send + 'static,
{
    /// Wraps `f`.
    ///
    /// ```
    /// let _ = kube_authn::authenticator::AsyncTokenFn::new(|_, _| async { Ok(None) });
    /// ```
    pub fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F, Fut> TokenAuthenticator for AsyncTokenFn<F>
where
    F: Fn(String, Context) -> Fut + Send + Sync,
    Fut: Future<Output = AuthResult> + Send + 'static,
{
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::new((self.0)(token.to_owned(), ctx.clone()))
    }
}

/// A password authenticator from a synchronous function.
///
/// ```
/// use kube_authn::authenticator::{Context, SyncPasswordFn};
/// let auth = SyncPasswordFn::new(|_user: &str, _password: &str, _ctx: &Context| Ok(None));
/// ```
#[derive(Clone)]
pub struct SyncPasswordFn<F>(F);

impl<F> SyncPasswordFn<F>
where
    F: Fn(&str, &str, &Context) -> AuthResult + Send + Sync,
{
    /// Wraps `f`.
    ///
    /// ```
    /// let _ = kube_authn::authenticator::SyncPasswordFn::new(|_: &str, _: &str, _: &_| Ok(None));
    /// ```
    pub fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F> PasswordAuthenticator for SyncPasswordFn<F>
where
    F: Fn(&str, &str, &Context) -> AuthResult + Send + Sync,
{
    fn authenticate_password<'a>(
        &'a self,
        user: &'a str,
        password: &'a str,
        ctx: &'a Context,
    ) -> AuthFuture<'a> {
        AuthFuture::ready((self.0)(user, password, ctx))
    }

    fn always_ready(&self) -> bool {
        true
    }
}

/// A password authenticator from an `async` function (owned user, password and context).
///
/// ```
/// use kube_authn::authenticator::{AsyncPasswordFn, Context};
/// let auth = AsyncPasswordFn::new(|_u: String, _p: String, _c: Context| async { Ok(None) });
/// ```
#[derive(Clone)]
pub struct AsyncPasswordFn<F>(F);

impl<F, Fut> AsyncPasswordFn<F>
where
    F: Fn(String, String, Context) -> Fut + Send + Sync,
    Fut: Future<Output = AuthResult> + Send + 'static,
{
    /// Wraps `f`.
    ///
    /// ```
    /// let _ = kube_authn::authenticator::AsyncPasswordFn::new(|_, _, _| async { Ok(None) });
    /// ```
    pub fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F, Fut> PasswordAuthenticator for AsyncPasswordFn<F>
where
    F: Fn(String, String, Context) -> Fut + Send + Sync,
    Fut: Future<Output = AuthResult> + Send + 'static,
{
    fn authenticate_password<'a>(
        &'a self,
        user: &'a str,
        password: &'a str,
        ctx: &'a Context,
    ) -> AuthFuture<'a> {
        AuthFuture::new((self.0)(user.to_owned(), password.to_owned(), ctx.clone()))
    }
}

/// A request authenticator from a synchronous function.
///
/// ```
/// use kube_authn::authenticator::{Context, SyncRequestFn};
/// let auth = SyncRequestFn::new(|_req: &http::request::Parts, _ctx: &Context| Ok(None));
/// ```
#[derive(Clone)]
pub struct SyncRequestFn<F>(F);

impl<F> SyncRequestFn<F>
where
    F: Fn(&Parts, &Context) -> AuthResult + Send + Sync,
{
    /// Wraps `f`.
    ///
    /// ```
    /// let _ = kube_authn::authenticator::SyncRequestFn::new(|_: &http::request::Parts, _: &_| Ok(None));
    /// ```
    pub fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F> RequestAuthenticator for SyncRequestFn<F>
where
    F: Fn(&Parts, &Context) -> AuthResult + Send + Sync,
{
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::ready((self.0)(req, ctx))
    }

    fn always_ready(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersect_follows_kubernetes_vectors() {
        // audiences_test.go TestIntersect: a.Intersect(t)
        let cases: &[(&[&str], &[&str], &[&str])] = &[
            (&[], &[], &[]),
            (&[], &["foo"], &[]),
            (&["foo"], &[], &[]),
            (&["foo"], &["foo"], &["foo"]),
            (&["foo", "bar"], &["foo", "bar"], &["foo", "bar"]),
            (&["foo", "bar"], &["foo", "wat"], &["foo"]),
            (&["foo", "bar"], &["pls", "wat"], &[]),
            (&["foo"], &["foo", "foo"], &["foo", "foo"]),
            (&["b", "a"], &["a", "b"], &["a", "b"]),
        ];
        for (a, t, want) in cases {
            let got = Audiences::new(*a).intersect(&Audiences::new(*t));
            assert_eq!(got.iter().collect::<Vec<_>>(), *want, "{a:?} ∩ {t:?}");
        }
    }

    #[test]
    fn polling_a_ready_future_twice_is_an_error_not_a_panic() {
        let mut f = AuthFuture::ready(Ok(None));
        let waker = std::task::Waker::noop();
        let mut cx = TaskContext::from_waker(waker);
        assert!(matches!(
            Pin::new(&mut f).poll(&mut cx),
            Poll::Ready(Ok(None))
        ));
        match Pin::new(&mut f).poll(&mut cx) {
            Poll::Ready(Err(e)) => assert_eq!(e.kind(), ErrorKind::Internal),
            other => panic!("unexpected {other:?}"),
        }
    }
}
