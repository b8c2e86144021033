//! Issuer routing: every JWT goes, by its unverified `iss`, to the authenticator(s) that own
//! that issuer — a constant-cost lookup whatever the number of issuers: up to
//! [`LINEAR_MAX`] issuers (the usual case: the legacy and bound service-account issuers and a
//! few OIDC issuers) a scan comparing lengths first, which is cheaper than SipHashing a
//! 40-byte URL; beyond that one `HashMap` lookup (SipHash, so an attacker choosing `iss`
//! cannot aim at a bucket).
//!
//! kube-apiserver asks each JWT authenticator in turn (legacy SA, bound SA, then each
//! `jwt[]` entry) and each one first peeks at `iss` and skips foreign tokens. Because issuers
//! are unique across authenticators (the SA issuers are "disallowed" for `jwt[]`, `jwt[]`
//! issuers must be distinct), at most one of them can claim a given token, so asking only the
//! owner gives the same externally visible result: same success, same error text, and
//! *not mine* for opaque tokens and unknown issuers (which then go on to bootstrap tokens and
//! the webhook). If an issuer is registered twice (a bound SA issuer equal to
//! `kubernetes/serviceaccount`), its owners are tried in registration order with union
//! semantics (first success wins, errors aggregated).
//!
//! The payload is parsed once here and handed to the owner ([`JwtAuthenticator`]).
//!
//! ```
//! use kube_authn::jwt::router::IssuerRouter;
//! use kube_authn::authenticator::{Context, TokenAuthenticator};
//! let router = IssuerRouter::new();
//! let t = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJzb21lb25lIn0.c2ln";
//! let r = router.authenticate_token(t, &Context::default()).into_ready().unwrap();
//! assert!(r.unwrap().is_none()); // nobody owns "someone"
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::compact::UntrustedJwt;
use crate::authenticator::{AuthFuture, Context, TokenAuthenticator};
use crate::error::Error;

/// An authenticator for JWTs whose issuer it owns.
///
/// ```
/// use kube_authn::jwt::{compact::UntrustedJwt, router::JwtAuthenticator};
/// use kube_authn::authenticator::{AuthFuture, Context};
/// struct Never;
/// impl JwtAuthenticator for Never {
///     fn authenticate_jwt<'a>(&'a self, _: UntrustedJwt<'a>, _: &'a str, _: &'a Context) -> AuthFuture<'a> {
///         AuthFuture::ready(Err(kube_authn::Error::msg("no")))
///     }
/// }
/// ```
pub trait JwtAuthenticator: Send + Sync {
    /// Authenticates `jwt` (already parsed from `token`; its issuer is one this
    /// authenticator was registered for). The JWT is *untrusted*: the implementation must
    /// verify its signature before believing any claim.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kube_authn::authenticator::{AuthFuture, Context, Response, TokenAuthenticator};
    /// use kube_authn::jwt::compact::UntrustedJwt;
    /// use kube_authn::jwt::router::{IssuerRouter, JwtAuthenticator};
    /// use kube_authn::user::UserInfo;
    ///
    ///     /// Trusts `sub` without checking the signature: a sketch, never do this.
    /// struct SubOnly;
    /// impl JwtAuthenticator for SubOnly {
    ///     fn authenticate_jwt<'a>(&'a self, jwt: UntrustedJwt<'a>, _: &'a str, _: &'a Context) -> AuthFuture<'a> {
    ///         let sub = jwt.claims().and_then(|c| c.get("sub")).and_then(|v| v.as_str());
    ///         AuthFuture::ready(match sub {
    ///             Some(sub) => Ok(Some(Response::new(UserInfo::new(&*sub).into()))),
    ///             None => Err(kube_authn::Error::msg("sub claim is missing")),
    ///         })
    ///     }
    /// }
    /// let jwt = UntrustedJwt::parse("e30.eyJzdWIiOiJqYW5lIn0.c2ln").unwrap(); // {"sub":"jane"}
    /// let r = SubOnly.authenticate_jwt(jwt, "", &Context::default()).into_ready().unwrap();
    /// assert_eq!(r.unwrap().unwrap().user.name(), "jane");
    /// let jwt = UntrustedJwt::parse("e30.e30.c2ln").unwrap(); // {}
    /// let r = SubOnly.authenticate_jwt(jwt, "", &Context::default()).into_ready().unwrap();
    /// assert_eq!(r.unwrap_err().to_string(), "sub claim is missing");
    /// ```
    fn authenticate_jwt<'a>(
        &'a self,
        jwt: UntrustedJwt<'a>,
        token: &'a str,
        ctx: &'a Context,
    ) -> AuthFuture<'a>;
}

/// Up to this many issuers, routing compares strings instead of hashing `iss`.
///
/// ```
/// assert_eq!(kube_authn::jwt::router::LINEAR_MAX, 8);
/// ```
pub const LINEAR_MAX: usize = 8;

/// A token authenticator that sends each JWT, by its unverified `iss`, to the
/// authenticator(s) registered for that issuer; opaque tokens and unknown issuers are
/// *not mine*. Why this matches Kubernetes is in the [module docs](self).
///
/// ```
/// use std::sync::Arc;
/// use kube_authn::authenticator::{AuthFuture, Context, Response, TokenAuthenticator};
/// use kube_authn::jwt::compact::UntrustedJwt;
/// use kube_authn::jwt::router::{IssuerRouter, JwtAuthenticator};
/// use kube_authn::user::UserInfo;
///
/// /// Trusts `sub` without checking the signature: a sketch, never do this.
/// struct SubOnly;
/// impl JwtAuthenticator for SubOnly {
///     fn authenticate_jwt<'a>(&'a self, jwt: UntrustedJwt<'a>, _: &'a str, _: &'a Context) -> AuthFuture<'a> {
///         let sub = jwt.claims().and_then(|c| c.get("sub")).and_then(|v| v.as_str());
///         AuthFuture::ready(match sub {
///             Some(sub) => Ok(Some(Response::new(UserInfo::new(&*sub).into()))),
///             None => Err(kube_authn::Error::msg("sub claim is missing")),
///         })
///     }
/// }
/// let mut router = IssuerRouter::new();
/// router.add("https://issuer", Arc::new(SubOnly));
/// let ask = |t| router.authenticate_token(t, &Context::default()).into_ready().unwrap();
///
/// // {"alg":"RS256","kid":"k"} . {"iss":"https://issuer","sub":"jane"} . "sig"
/// let ours = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL2lzc3VlciIsInN1YiI6ImphbmUifQ.c2ln";
/// assert_eq!(ask(ours).unwrap().unwrap().user.name(), "jane");
/// // {"iss":"https://other","sub":"jane"}: nobody owns that issuer
/// let foreign = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL290aGVyIiwic3ViIjoiamFuZSJ9.c2ln";
/// assert!(ask(foreign).unwrap().is_none());
/// assert!(ask("an-opaque-token").unwrap().is_none());
/// ```
#[derive(Clone, Default)]
pub struct IssuerRouter {
    routes: HashMap<Box<str>, Vec<Arc<dyn JwtAuthenticator>>>,
}

impl fmt::Debug for IssuerRouter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuerRouter")
            .field("issuers", &self.routes.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl IssuerRouter {
    /// An empty router (every token is *not mine*).
    ///
    /// ```
    /// assert_eq!(kube_authn::jwt::router::IssuerRouter::new().issuer_count(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `authenticator` for `issuer` (exact string match, as Kubernetes compares).
    ///
    /// ```
    /// # use kube_authn::jwt::{compact::UntrustedJwt, router::*};
    /// # use kube_authn::authenticator::{AuthFuture, Context};
    /// # struct A;
    /// # impl JwtAuthenticator for A {
    /// #     fn authenticate_jwt<'a>(&'a self, _: UntrustedJwt<'a>, _: &'a str, _: &'a Context) -> AuthFuture<'a> { AuthFuture::ready(Ok(None)) }
    /// # }
    /// let mut r = IssuerRouter::new();
    /// r.add("https://issuer", std::sync::Arc::new(A));
    /// assert_eq!(r.issuer_count(), 1);
    /// ```
    pub fn add(&mut self, issuer: impl Into<Box<str>>, authenticator: Arc<dyn JwtAuthenticator>) {
        self.routes
            .entry(issuer.into())
            .or_default()
            .push(authenticator);
    }

    /// How many distinct issuers are routed.
    ///
    /// ```
    /// assert_eq!(kube_authn::jwt::router::IssuerRouter::new().issuer_count(), 0);
    /// ```
    pub fn issuer_count(&self) -> usize {
        self.routes.len()
    }

    /// Whether `issuer` is routed.
    ///
    /// ```
    /// assert!(!kube_authn::jwt::router::IssuerRouter::new().has_issuer("x"));
    /// ```
    pub fn has_issuer(&self, issuer: &str) -> bool {
        self.owners(issuer).is_some()
    }

    /// Whether `token` is a JWT whose unverified `iss` is routed here: whether
    /// [`authenticate_token`](TokenAuthenticator::authenticate_token) hands it to an
    /// authenticator. When `false`, the router answers *not mine* (`Ok(None)`) for it. Nothing
    /// is verified; a wrapper uses it to leave foreign tokens alone (the service-account token
    /// cache computes no key for them).
    ///
    /// Cost: one [`UntrustedJwt::parse`] (the pre-check: two `memchr`s, base64 decoding into
    /// one allocation, a JSON scan; ≈ 0.5 µs for a 1 KB token, `verify/*/pre-check parse
    /// only` in `benches/jwt.rs`) and the issuer lookup; a string that is not a compact JWS
    /// is refused by the first checks. The router parses the token again when asked.
    ///
    /// ```
    /// # use kube_authn::jwt::{compact::UntrustedJwt, router::*};
    /// # use kube_authn::authenticator::{AuthFuture, Context};
    /// # struct A;
    /// # impl JwtAuthenticator for A {
    /// #     fn authenticate_jwt<'a>(&'a self, _: UntrustedJwt<'a>, _: &'a str, _: &'a Context) -> AuthFuture<'a> { AuthFuture::ready(Ok(None)) }
    /// # }
    /// let mut r = IssuerRouter::new();
    /// r.add("someone", std::sync::Arc::new(A));
    /// // {"alg":"RS256"} . {"iss":"someone"} . "sig"
    /// assert!(r.owns("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJzb21lb25lIn0.c2ln"));
    /// // {"alg":"RS256"} . {} . "sig"
    /// assert!(!r.owns("eyJhbGciOiJSUzI1NiJ9.e30.c2ln"));
    /// assert!(!r.owns("an-opaque-token"));
    /// ```
    pub fn owns(&self, token: &str) -> bool {
        UntrustedJwt::parse(token)
            .is_ok_and(|jwt| jwt.issuer().is_some_and(|iss| self.owners(iss).is_some()))
    }

    fn owners(&self, issuer: &str) -> Option<&Vec<Arc<dyn JwtAuthenticator>>> {
        if self.routes.len() <= LINEAR_MAX {
            self.routes
                .iter()
                .find(|(k, _)| k.len() == issuer.len() && &***k == issuer)
                .map(|(_, v)| v)
        } else {
            self.routes.get(issuer)
        }
    }
}

impl TokenAuthenticator for IssuerRouter {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        let Ok(jwt) = UntrustedJwt::parse(token) else {
            return AuthFuture::ready(Ok(None));
        };
        let Some(owners) = jwt.issuer().and_then(|iss| self.owners(iss)) else {
            return AuthFuture::ready(Ok(None));
        };
        if let [only] = owners.as_slice() {
            return only.authenticate_jwt(jwt, token, ctx);
        }
        drop(jwt);
        AuthFuture::new(async move {
            let mut errors = Vec::new();
            for owner in owners {
                let Ok(jwt) = UntrustedJwt::parse(token) else {
                    return Ok(None);
                };
                match owner.authenticate_jwt(jwt, token, ctx).await {
                    Ok(Some(r)) => return Ok(Some(r)),
                    Ok(None) => {}
                    Err(e) => errors.push(e),
                }
            }
            match Error::aggregate(errors) {
                Some(e) => Err(e),
                None => Ok(None),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    struct Owner(usize);

    impl JwtAuthenticator for Owner {
        fn authenticate_jwt<'a>(
            &'a self,
            _: UntrustedJwt<'a>,
            _: &'a str,
            _: &'a Context,
        ) -> AuthFuture<'a> {
            AuthFuture::ready(Err(Error::new(
                ErrorKind::InvalidCredential,
                format!("owner {}", self.0),
            )))
        }
    }

    fn token(iss: &str) -> String {
        let payload = URL_SAFE_NO_PAD.encode(format!(r#"{{"iss":"{iss}"}}"#));
        format!("eyJhbGciOiJSUzI1NiJ9.{payload}.c2ln")
    }

    #[test]
    fn routes_to_the_owner_below_and_above_the_linear_limit() {
        for n in [1, LINEAR_MAX, LINEAR_MAX + 1, 100] {
            let mut router = IssuerRouter::new();
            for i in 0..n {
                router.add(format!("https://issuer-{i}.example"), Arc::new(Owner(i)));
            }
            let ctx = Context::default();
            for i in [0, n / 2, n - 1] {
                let t = token(&format!("https://issuer-{i}.example"));
                let r = router.authenticate_token(&t, &ctx).into_ready().unwrap();
                assert_eq!(
                    r.unwrap_err().to_string(),
                    format!("owner {i}"),
                    "{n} issuers"
                );
            }
            for unknown in ["https://issuer-0.example/", "https://issuer-.example", ""] {
                let t = token(unknown);
                let r = router.authenticate_token(&t, &ctx).into_ready().unwrap();
                assert!(r.unwrap().is_none(), "{n} issuers, {unknown:?}");
                assert!(!router.has_issuer(unknown));
            }
            assert!(router.has_issuer("https://issuer-0.example"));
        }
    }

    /// `owns` is exactly "the router hands the token to an owner": every token it disowns is
    /// answered *not mine*, every token it owns reaches an owner (here, its error).
    #[test]
    fn owns_agrees_with_routing() {
        for n in [1, LINEAR_MAX + 1] {
            let mut router = IssuerRouter::new();
            for i in 0..n {
                router.add(format!("https://issuer-{i}.example"), Arc::new(Owner(i)));
            }
            let payload =
                |p: &str| format!("eyJhbGciOiJSUzI1NiJ9.{}.c2ln", URL_SAFE_NO_PAD.encode(p));
            let cases = [
                (token("https://issuer-0.example"), true),
                (token(&format!("https://issuer-{}.example", n - 1)), true),
                (token("https://issuer-0.example/"), false),
                (token(""), false),
                (payload("{}"), false),
                (payload(r#"{"iss":5}"#), false),
                (payload("not json"), false),
                ("an-opaque-token".to_owned(), false),
                ("a.b.c.d".to_owned(), false),
                (String::new(), false),
            ];
            let ctx = Context::default();
            for (t, owned) in &cases {
                assert_eq!(router.owns(t), *owned, "{n} issuers, {t:?}");
                let r = router.authenticate_token(t, &ctx).into_ready().unwrap();
                assert_eq!(r.is_err(), *owned, "{n} issuers, {t:?}: {r:?}");
                if !owned {
                    assert!(r.unwrap().is_none(), "{n} issuers, {t:?}");
                }
            }
        }
    }
}
