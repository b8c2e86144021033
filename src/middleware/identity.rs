//! The identity the middleware hands to the application, and how to get at it.

use std::sync::Arc;

use crate::authenticator::Audiences;
use crate::user::UserInfo;

/// The authenticated identity, inserted into the request extensions by
/// [`AuthenticationService`](super::AuthenticationService) before the inner service runs.
///
/// Cloning is two reference-count increments. With hyper or tonic use
/// [`from_request`](Self::from_request) / [`from_extensions`](Self::from_extensions); with
/// axum (feature `axum`) take it as an extractor:
///
/// * `Authenticated`: the identity, or a **401** with the Kubernetes `Status` body when the
///   layer is not installed on this route (and an error is logged, because that is a wiring
///   mistake). Failing closed with 401, not 500, is what users of other Rust auth layers asked
///   for (jwt-authorizer#12, #31): a route that forgot the layer must not look like a server
///   fault to clients, nor serve the request.
/// * `Option<Authenticated>`: `None` when the layer is not installed; never rejects.
///
/// # Anonymous requests get an identity too
///
/// When the chain has an anonymous fallback, a request with no credential (or one no
/// authenticator claims) is let through as `system:anonymous` (group
/// `system:unauthenticated`), and **this extractor then succeeds** with that user: it does
/// not mean "a credential was checked". The fallback is on by default, as in
/// kube-apiserver: [`AuthenticationOptions`](crate::config::AuthenticationOptions) has
/// `anonymous_auth: None`, which means `--anonymous-auth=true`. A handler that must not
/// serve anonymous callers refuses them itself with
/// [`UserInfo::is_anonymous`](crate::user::UserInfo::is_anonymous) (or leave anonymous out
/// of the chain: `anonymous_auth: Some(false)`, no
/// [`ChainBuilder::anonymous`](crate::chain::ChainBuilder::anonymous), or
/// [`Chain::without_anonymous`](crate::chain::Chain::without_anonymous)):
///
/// ```
/// use kube_authn::middleware::Authenticated;
/// use kube_authn::user::UserInfo;
///
/// fn handler(who: &Authenticated) -> Result<String, http::StatusCode> {
///     if who.user.is_anonymous() {
///         return Err(http::StatusCode::UNAUTHORIZED);
///     }
///     Ok(format!("hello {}", who.user.name()))
/// }
/// let anonymous = Authenticated::new(UserInfo::anonymous(), Default::default());
/// assert_eq!(handler(&anonymous), Err(http::StatusCode::UNAUTHORIZED));
/// let jane = Authenticated::new(UserInfo::new("jane").into(), Default::default());
/// assert_eq!(handler(&jane).unwrap(), "hello jane");
/// ```
///
/// ```
/// use kube_authn::middleware::Authenticated;
/// use kube_authn::user::UserInfo;
///
/// let mut req = http::Request::new(());
/// assert!(Authenticated::from_request(&req).is_none());
/// req.extensions_mut().insert(Authenticated::new(UserInfo::new("jane").into(), Default::default()));
/// assert_eq!(Authenticated::from_request(&req).unwrap().user.name(), "jane");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    /// The user (shared with the authenticator's caches; immutable).
    pub user: Arc<UserInfo>,
    /// The audiences the credential was validated for (empty when the authenticator is not
    /// audience-aware).
    pub audiences: Audiences,
}

impl Authenticated {
    /// An identity (the middleware builds these; handy in tests of your handlers).
    ///
    /// ```
    /// let a = kube_authn::middleware::Authenticated::new(kube_authn::user::UserInfo::anonymous(), Default::default());
    /// assert!(a.user.is_anonymous());
    /// ```
    pub fn new(user: Arc<UserInfo>, audiences: Audiences) -> Self {
        Self { user, audiences }
    }

    /// The identity in `request`'s extensions, if the middleware ran.
    ///
    /// ```
    /// let req = http::Request::new(());
    /// assert!(kube_authn::middleware::Authenticated::from_request(&req).is_none());
    /// ```
    pub fn from_request<B>(request: &http::Request<B>) -> Option<&Self> {
        Self::from_extensions(request.extensions())
    }

    /// The identity in `extensions` (for tonic: `request.extensions()`), if the middleware ran.
    ///
    /// ```
    /// let ext = http::Extensions::new();
    /// assert!(kube_authn::middleware::Authenticated::from_extensions(&ext).is_none());
    /// ```
    pub fn from_extensions(extensions: &http::Extensions) -> Option<&Self> {
        extensions.get::<Self>()
    }
}

#[cfg(feature = "axum")]
mod axum_impl {
    use std::convert::Infallible;

    use axum_core::body::Body;
    use axum_core::extract::{FromRequestParts, OptionalFromRequestParts};
    use axum_core::response::{IntoResponse, Response};
    use http::request::Parts;

    use super::Authenticated;
    use crate::authenticator::Schemes;
    use crate::middleware::failure::{Failure, OnFailure, Reason, Unauthorized};

    /// The rejection of the [`Authenticated`] extractor: the route is not behind
    /// [`AuthenticationLayer`](crate::middleware::AuthenticationLayer). Answers 401 with the
    /// Kubernetes `Status` body (pretty for curl, as the layer does).
    ///
    /// ```
    /// use axum_core::response::IntoResponse;
    /// let r = kube_authn::middleware::MissingAuthentication { pretty: false }.into_response();
    /// assert_eq!(r.status(), 401);
    /// ```
    #[derive(Clone, Copy, Debug)]
    pub struct MissingAuthentication {
        /// Whether to indent the body (decided from the request like the layer does).
        pub pretty: bool,
    }

    impl IntoResponse for MissingAuthentication {
        fn into_response(self) -> Response {
            let mut b = http::Request::get("/");
            if self.pretty {
                b = b.header(http::header::USER_AGENT, "curl");
            }
            let (parts, _) = b.body(()).unwrap_or_default().into_parts();
            Unauthorized
                .on_failure(&Failure::new(
                    &parts,
                    Reason::NotAuthenticated,
                    Schemes::NONE,
                ))
                .map(Body::from)
        }
    }

    impl<S: Send + Sync> FromRequestParts<S> for Authenticated {
        type Rejection = MissingAuthentication;

        async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
            match parts.extensions.get::<Authenticated>() {
                Some(a) => Ok(a.clone()),
                None => {
                    tracing::error!(
                        path = parts.uri.path(),
                        "the Authenticated extractor ran on a route without AuthenticationLayer; answering 401"
                    );
                    Err(MissingAuthentication {
                        pretty: crate::middleware::failure::is_pretty_print(parts),
                    })
                }
            }
        }
    }

    impl<S: Send + Sync> OptionalFromRequestParts<S> for Authenticated {
        type Rejection = Infallible;

        async fn from_request_parts(
            parts: &mut Parts,
            _: &S,
        ) -> Result<Option<Self>, Self::Rejection> {
            Ok(parts.extensions.get::<Authenticated>().cloned())
        }
    }
}

#[cfg(feature = "axum")]
pub use axum_impl::MissingAuthentication;
