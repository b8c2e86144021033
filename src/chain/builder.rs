use std::sync::Arc;

use http::request::Parts;

use super::anonymous::Anonymous;
use super::group::AuthenticatedGroupAdder;
use super::union::{TokenUnion, Union};
use crate::authenticator::{
    AuthFuture, Context, Description, RequestAuthenticator, Schemes, TokenAuthenticator,
};
use crate::request::{Bearer, WebSocketProtocol};

type TokenWrapper = Box<dyn FnOnce(Arc<dyn TokenAuthenticator>) -> Arc<dyn TokenAuthenticator>>;

/// Assembles a chain the way kube-apiserver does (`pkg/kubeapiserver/authenticator/config.go`):
///
/// ```text
/// union(request authenticators…, bearer(T), websocket(T))      T = wrap(union(token authenticators…))
///   → authenticated-group adder
///   → fail-on-error union with anonymous (if enabled)
/// ```
///
/// Request authenticators run in the order they were added (kube-apiserver: front proxy, then
/// client certificates), then the bearer and WebSocket authenticators over one shared token
/// union (token authenticators in the order added). Anonymous runs only when nothing succeeded
/// **and** nothing failed, so a bad credential is always a 401.
///
/// With no authenticator and anonymous disabled, Kubernetes turns authentication off and lets
/// every request through. This chain instead rejects every request (see
/// `docs/compatibility.md`).
///
/// ```
/// use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
/// use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
/// use kube_authn::user::UserInfo;
///
/// let chain = ChainBuilder::new()
///     .token(SyncTokenFn::new(|t: &str, _: &Context| {
///         Ok((t == "secret").then(|| Response::new(UserInfo::new("alice").into())))
///     }))
///     .anonymous(Anonymous::new())
///     .build();
/// assert!(chain.description().schemes.bearer());
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let ctx = Context::default();
/// let (good, _) = http::Request::get("/").header("authorization", "Bearer secret").body(()).unwrap().into_parts();
/// let user = chain.authenticate_request(&good, &ctx).await.unwrap().unwrap().user;
/// assert_eq!(user.groups().collect::<Vec<_>>(), ["system:authenticated"]);
///
/// let (bad, _) = http::Request::get("/").header("authorization", "Bearer wrong").body(()).unwrap().into_parts();
/// assert!(chain.authenticate_request(&bad, &ctx).await.is_err()); // not anonymous
///
/// let (none, _) = http::Request::get("/").body(()).unwrap().into_parts();
/// assert_eq!(chain.authenticate_request(&none, &ctx).await.unwrap().unwrap().user.name(), "system:anonymous");
/// # });
/// ```
#[derive(Default)]
pub struct ChainBuilder {
    request: Vec<Arc<dyn RequestAuthenticator>>,
    tokens: Vec<Arc<dyn TokenAuthenticator>>,
    token_wrapper: Option<TokenWrapper>,
    anonymous: Option<Anonymous>,
}

impl ChainBuilder {
    /// An empty builder.
    ///
    /// ```
    /// let chain = kube_authn::chain::ChainBuilder::new().build();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a request authenticator.
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
    /// let b = ChainBuilder::new().request(Anonymous::new());
    /// ```
    pub fn request(self, authenticator: impl RequestAuthenticator + 'static) -> Self {
        self.request_arc(Arc::new(authenticator))
    }

    /// Appends a shared request authenticator.
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
    /// let b = ChainBuilder::new().request_arc(std::sync::Arc::new(Anonymous::new()));
    /// ```
    pub fn request_arc(mut self, authenticator: Arc<dyn RequestAuthenticator>) -> Self {
        self.request.push(authenticator);
        self
    }

    /// Appends a token authenticator (reached through `Authorization: Bearer` and the WebSocket
    /// subprotocol).
    ///
    /// ```
    /// use kube_authn::{authenticator::SyncTokenFn, chain::ChainBuilder};
    /// let b = ChainBuilder::new().token(SyncTokenFn::new(|_: &str, _: &_| Ok(None)));
    /// ```
    pub fn token(self, authenticator: impl TokenAuthenticator + 'static) -> Self {
        self.token_arc(Arc::new(authenticator))
    }

    /// Appends a shared token authenticator.
    ///
    /// ```
    /// use kube_authn::{authenticator::{SyncTokenFn, TokenAuthenticator}, chain::ChainBuilder};
    /// let t: std::sync::Arc<dyn TokenAuthenticator> = std::sync::Arc::new(SyncTokenFn::new(|_: &str, _: &_| Ok(None)));
    /// let b = ChainBuilder::new().token_arc(t);
    /// ```
    pub fn token_arc(mut self, authenticator: Arc<dyn TokenAuthenticator>) -> Self {
        self.tokens.push(authenticator);
        self
    }

    /// Wraps the token union once it is built (kube-apiserver puts its 10 s success cache
    /// here).
    ///
    /// ```
    /// use kube_authn::chain::{group::GroupAdder, ChainBuilder};
    /// use std::sync::Arc;
    /// let b = ChainBuilder::new().wrap_tokens(|t| Arc::new(GroupAdder::new(t, ["via-token"])));
    /// ```
    pub fn wrap_tokens(
        mut self,
        wrapper: impl FnOnce(Arc<dyn TokenAuthenticator>) -> Arc<dyn TokenAuthenticator> + 'static,
    ) -> Self {
        self.token_wrapper = Some(Box::new(wrapper));
        self
    }

    /// Enables anonymous requests (kube-apiserver's `--anonymous-auth`, on by default there).
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
    /// let b = ChainBuilder::new().anonymous(Anonymous::with_paths(["/healthz"]));
    /// ```
    pub fn anonymous(mut self, anonymous: Anonymous) -> Self {
        self.anonymous = Some(anonymous);
        self
    }

    /// Builds the chain.
    ///
    /// ```
    /// let chain = kube_authn::chain::ChainBuilder::new().build();
    /// assert_eq!(chain.description().schemes, kube_authn::authenticator::Schemes::NONE);
    /// ```
    pub fn build(self) -> Chain {
        let mut list = self.request;
        if !self.tokens.is_empty() {
            let mut tokens = TokenUnion::new(self.tokens).into_dyn();
            if let Some(wrap) = self.token_wrapper {
                tokens = wrap(tokens);
            }
            list.push(Arc::new(Bearer::from_arc(tokens.clone())));
            list.push(Arc::new(WebSocketProtocol::from_arc(tokens)));
        }
        let inner: Arc<dyn RequestAuthenticator> = match (list.is_empty(), self.anonymous) {
            (true, None) => Arc::new(Union::new(Vec::new())),
            (true, Some(anonymous)) => Arc::new(anonymous),
            (false, anonymous) => {
                let main: Arc<dyn RequestAuthenticator> =
                    Arc::new(AuthenticatedGroupAdder::new(Union::new(list).into_dyn()));
                match anonymous {
                    Some(anonymous) => {
                        Union::fail_on_error(vec![main, Arc::new(anonymous)]).into_dyn()
                    }
                    None => main,
                }
            }
        };
        let mut description = Description::default();
        inner.describe(&mut description);
        Chain { inner, description }
    }
}

/// A built chain: a request authenticator that also knows its [`Description`].
///
/// ```
/// let chain = kube_authn::chain::ChainBuilder::new().build();
/// let _: &kube_authn::authenticator::Description = chain.description();
/// ```
#[derive(Clone)]
pub struct Chain {
    inner: Arc<dyn RequestAuthenticator>,
    description: Description,
}

impl Chain {
    /// What the chain accepts: schemes and identity headers.
    ///
    /// ```
    /// let chain = kube_authn::chain::ChainBuilder::new().build();
    /// assert!(chain.description().identity_headers().is_empty());
    /// ```
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The `Authorization` schemes the chain accepts (seed 003's `securityDefinitions`).
    ///
    /// ```
    /// let chain = kube_authn::chain::ChainBuilder::new().build();
    /// assert!(!chain.schemes().bearer());
    /// ```
    pub fn schemes(&self) -> Schemes {
        self.description.schemes
    }

    /// Wraps any request authenticator as a chain (describing it once).
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, Chain};
    /// let chain = Chain::from_authenticator(std::sync::Arc::new(Anonymous::new()));
    /// ```
    pub fn from_authenticator(inner: Arc<dyn RequestAuthenticator>) -> Self {
        let mut description = Description::default();
        inner.describe(&mut description);
        Self { inner, description }
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

impl RequestAuthenticator for Chain {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        self.inner.authenticate_request(req, ctx)
    }

    fn describe(&self, description: &mut Description) {
        self.inner.describe(description)
    }

    fn always_ready(&self) -> bool {
        self.inner.always_ready()
    }
}
