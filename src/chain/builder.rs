use std::sync::Arc;

use http::request::Parts;

use super::anonymous::Anonymous;
use super::group::AuthenticatedGroupAdder;
use super::union::{TokenUnion, Union};
use crate::authenticator::{
    AuthFuture, Context, Description, RequestAuthenticator, Schemes, TokenAuthenticator,
};
use crate::request::{Bearer, CredentialSyntax, WebSocketProtocol};

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
/// A chain without token authenticators (k8s.io/apiserver's assembly with no token
/// authenticator, such as a delegating server without a TokenReview client) ends with the
/// bearer and WebSocket authenticators' syntax checks instead: a malformed `Authorization`
/// header or token subprotocol is a 401 there too (in Go nothing reads them, and the request
/// becomes anonymous), while a well-formed credential nobody takes is "not mine". (kube-apiserver
/// itself always has a token authenticator, its JWT authenticator, empty when nothing configures
/// it; [`crate::config::AuthenticationOptions::build`] adds the same, so a token nobody takes is
/// `invalid bearer token` there.)
///
/// With no authenticator and anonymous disabled, k8s.io/apiserver turns authentication off and
/// lets every request through. This chain instead rejects every request (see
/// `docs/compatibility.md`).
///
/// ```
/// use aws_lc_rs::constant_time::verify_slices_are_equal;
/// use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
/// use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
/// use kube_authn::user::UserInfo;
///
/// let chain = ChainBuilder::new()
///     .token(SyncTokenFn::new(|t: &str, _: &Context| {
///         // Constant time: `==` stops at the first differing byte.
///         let known = verify_slices_are_equal(t.as_bytes(), b"secret").is_ok();
///         Ok(known.then(|| Response::new(UserInfo::new("alice").into())))
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
        if self.tokens.is_empty() {
            // Nothing else reads `Authorization` or the token subprotocol (or only `Basic`
            // does): a malformed credential must still be a 401, not an anonymous request.
            list.push(Arc::new(CredentialSyntax));
        } else {
            let mut tokens = TokenUnion::new(self.tokens).into_dyn();
            if let Some(wrap) = self.token_wrapper {
                tokens = wrap(tokens);
            }
            list.push(Arc::new(Bearer::from_arc(tokens.clone())));
            list.push(Arc::new(WebSocketProtocol::from_arc(tokens)));
        }
        let credentials: Arc<dyn RequestAuthenticator> =
            Arc::new(AuthenticatedGroupAdder::new(Union::new(list).into_dyn()));
        let inner = match self.anonymous {
            Some(anonymous) => {
                Union::fail_on_error(vec![credentials.clone(), Arc::new(anonymous)]).into_dyn()
            }
            None => credentials.clone(),
        };
        let mut description = Description::default();
        inner.describe(&mut description);
        Chain {
            inner,
            credentials,
            description,
        }
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
    /// The chain without its anonymous fallback ([`Chain::without_anonymous`]).
    credentials: Arc<dyn RequestAuthenticator>,
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
        Self {
            credentials: inner.clone(),
            inner,
            description,
        }
    }

    /// The same chain without its anonymous fallback: a request with no credential, or one
    /// no authenticator claims, is "not mine" instead of `system:anonymous`. For questions
    /// about a credential rather than about a request — `kube-authn serve` checks
    /// `TokenReview` tokens with it, so that a review never vouches for a token as the
    /// anonymous user. A chain made with [`Chain::from_authenticator`] is returned as it is.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, RequestAuthenticator};
    /// use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
    /// let chain = ChainBuilder::new().anonymous(Anonymous::new()).build();
    /// let (req, _) = http::Request::get("/").header("authorization", "Bearer t").body(()).unwrap().into_parts();
    /// let ctx = Context::default();
    /// let anonymous = chain.authenticate_request(&req, &ctx).into_ready().unwrap().unwrap();
    /// assert_eq!(anonymous.unwrap().user.name(), "system:anonymous");
    /// let strict = chain.without_anonymous();
    /// assert!(strict.authenticate_request(&req, &ctx).into_ready().unwrap().unwrap().is_none());
    /// ```
    pub fn without_anonymous(&self) -> Chain {
        let mut description = Description::default();
        self.credentials.describe(&mut description);
        Chain {
            inner: self.credentials.clone(),
            credentials: self.credentials.clone(),
            description,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authenticator::{Response, SyncTokenFn};
    use crate::user::UserInfo;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut req = http::Request::get("/");
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req.body(()).unwrap().into_parts().0
    }

    /// What each chain answers: the user's name, `none` (not mine) or `error`.
    fn answer(chain: &Chain, headers: &[(&str, &str)]) -> String {
        match chain
            .authenticate_request(&parts(headers), &Context::default())
            .into_ready()
            .expect("no I/O in these chains")
        {
            Ok(Some(r)) => r.user.name().to_owned(),
            Ok(None) => "none".into(),
            Err(_) => "error".into(),
        }
    }

    /// A malformed credential is an error whether or not the chain has a token authenticator
    /// (Kubernetes: anonymous when nothing reads the header); a well-formed one nobody takes is
    /// anonymous; without anonymous, nothing is.
    #[test]
    fn malformed_credentials_fail_in_every_chain() {
        let token = || {
            SyncTokenFn::new(|t: &str, _: &Context| {
                Ok((t == "good").then(|| Response::new(UserInfo::new("alice").into())))
            })
        };
        let chains = [
            (
                "anonymous only",
                ChainBuilder::new().anonymous(Anonymous::new()).build(),
            ),
            (
                "tokens and anonymous",
                ChainBuilder::new()
                    .token(token())
                    .anonymous(Anonymous::new())
                    .build(),
            ),
        ];
        const WS: &str = "base64url.bearer.authorization.k8s.io.";
        let ws_empty = format!("{WS}, chat");
        type Headers<'a> = Vec<(&'a str, &'a str)>;
        let cases: Vec<(&str, Headers<'_>, [&str; 2])> = vec![
            (
                "no credential",
                vec![],
                ["system:anonymous", "system:anonymous"],
            ),
            (
                "good token",
                vec![("authorization", "Bearer good")],
                ["system:anonymous", "alice"],
            ),
            (
                "unknown token",
                vec![("authorization", "Bearer other")],
                ["system:anonymous", "error"],
            ),
            (
                "well-formed basic",
                vec![("authorization", "Basic dXNlcjpwYXNz")],
                ["system:anonymous", "system:anonymous"],
            ),
            (
                "two spaces",
                vec![("authorization", "Bearer  good")],
                ["error", "error"],
            ),
            (
                "bare scheme",
                vec![("authorization", "Bearer")],
                ["error", "error"],
            ),
            (
                "basic, two words",
                vec![("authorization", "Basic a b")],
                ["error", "error"],
            ),
            (
                "basic, bad base64",
                vec![("authorization", "Basic !!!")],
                ["error", "error"],
            ),
            (
                "basic without a colon",
                vec![("authorization", "Basic YWxpY2U=")],
                ["error", "error"],
            ),
            (
                "basic, not UTF-8",
                vec![("authorization", "Basic /w==")],
                ["error", "error"],
            ),
            (
                "two headers",
                vec![
                    ("authorization", "Bearer good"),
                    ("authorization", "Bearer good"),
                ],
                ["error", "error"],
            ),
            (
                "empty token subprotocol",
                vec![
                    ("connection", "Upgrade"),
                    ("upgrade", "websocket"),
                    ("sec-websocket-protocol", &ws_empty),
                ],
                ["error", "error"],
            ),
        ];
        for (name, headers, want) in &cases {
            for ((chain_name, chain), want) in chains.iter().zip(want) {
                assert_eq!(&answer(chain, headers), want, "{chain_name}: {name}");
                // Without anonymous: the same errors and users, and `none` for anonymous.
                let strict = if *want == "system:anonymous" {
                    "none"
                } else {
                    want
                };
                assert_eq!(
                    answer(&chain.without_anonymous(), headers),
                    strict,
                    "{chain_name} without anonymous: {name}"
                );
            }
        }
    }
}
