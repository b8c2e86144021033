//! Audience-agnostic wrappers (k8s `authenticator.WrapAudienceAgnosticRequest` / `…Token`).
//!
//! An authenticator that knows nothing about audiences (a token file, a front proxy) is made
//! safe to use on a server with API audiences by wrapping it with the server's *implicit*
//! audiences:
//!
//! 1. no audiences on the request context: the delegate's answer, unchanged;
//! 2. otherwise `implicit ∩ requested` (in the requested order); if empty, "not mine"
//!    **without calling the delegate**;
//! 3. the delegate's error or "not mine" is passed on;
//! 4. a delegate that itself returned audiences is an error
//!    (`audience agnostic authenticator wrapped an authenticator that returned audiences: ["a"]`);
//! 5. otherwise the response carries the intersection.
//!
//! ```
//! use kube_authn::authenticator::{Audiences, Context, Response, SyncTokenFn, TokenAuthenticator};
//! use kube_authn::chain::audiences::AudienceAgnostic;
//! use kube_authn::user::UserInfo;
//!
//! let inner = SyncTokenFn::new(|_: &str, _: &Context| Ok(Some(Response::new(UserInfo::new("u").into()))));
//! let wrapped = AudienceAgnostic::new(Audiences::from(["api", "other"]), inner);
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let ctx = Context::with_audiences(Audiences::from(["api"]));
//! let r = wrapped.authenticate_token("t", &ctx).await.unwrap().unwrap();
//! assert_eq!(r.audiences, Audiences::from(["api"]));
//! let elsewhere = Context::with_audiences(Audiences::from(["someone-else"]));
//! assert!(wrapped.authenticate_token("t", &elsewhere).await.unwrap().is_none());
//! # });
//! ```

use http::request::Parts;

use crate::authenticator::{
    Audiences, AuthFuture, AuthResult, Context, Description, RequestAuthenticator,
    TokenAuthenticator,
};
use crate::error::{Error, ErrorKind};

/// Makes an authenticator that knows nothing about audiences usable on a server with API
/// audiences, by answering for the server's implicit audiences (the rules are in the
/// [module docs](self)).
///
/// ```
/// use kube_authn::authenticator::{Audiences, Context, Response, SyncTokenFn, TokenAuthenticator};
/// use kube_authn::chain::audiences::AudienceAgnostic;
/// use kube_authn::user::UserInfo;
///
/// // A delegate that (wrongly, for this wrapper) answers with its own audiences.
/// let aware = SyncTokenFn::new(|_: &str, _: &Context| {
///     Ok(Some(Response::new(UserInfo::new("u").into()).with_audiences(Audiences::from(["a"]))))
/// });
/// let wrapped = AudienceAgnostic::new(Audiences::from(["api"]), aware);
/// let ask = |ctx: &Context| wrapped.authenticate_token("t", ctx).into_ready().unwrap();
///
/// // No audiences requested: the delegate's answer, unchanged.
/// assert_eq!(ask(&Context::default()).unwrap().unwrap().audiences, Audiences::from(["a"]));
/// // Audiences requested: a delegate that returns its own is an error.
/// let err = ask(&Context::with_audiences(Audiences::from(["api"]))).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#"audience agnostic authenticator wrapped an authenticator that returned audiences: ["a"]"#
/// );
/// ```
#[derive(Debug, Clone)]
pub struct AudienceAgnostic<A> {
    implicit: Audiences,
    inner: A,
}

impl<A> AudienceAgnostic<A> {
    /// Wraps `inner` with the server's implicit audiences.
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, audiences::AudienceAgnostic};
    /// let a = AudienceAgnostic::new(["api"].into(), Anonymous::new());
    /// ```
    pub fn new(implicit: Audiences, inner: A) -> Self {
        Self { implicit, inner }
    }

    /// The audiences to use for this request: `None` = pass through unchanged,
    /// `Some(empty)` = skip without calling the delegate.
    fn target(&self, ctx: &Context) -> Option<Audiences> {
        ctx.audiences()
            .map(|requested| self.implicit.intersect(requested))
    }
}

fn apply(result: AuthResult, audiences: Audiences) -> AuthResult {
    match result {
        Ok(Some(mut response)) => {
            if !response.audiences.is_empty() {
                // Go's `%q` of the slice.
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!(
                        "audience agnostic authenticator wrapped an authenticator that returned audiences: {}",
                        crate::jwt::go_quote_list(response.audiences.iter())
                    ),
                ));
            }
            response.audiences = audiences;
            Ok(Some(response))
        }
        other => other,
    }
}

impl<A: TokenAuthenticator> TokenAuthenticator for AudienceAgnostic<A> {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        match self.target(ctx) {
            None => self.inner.authenticate_token(token, ctx),
            Some(auds) if auds.is_empty() => AuthFuture::ready(Ok(None)),
            Some(auds) => self
                .inner
                .authenticate_token(token, ctx)
                .map(move |r| apply(r, auds)),
        }
    }

    fn always_ready(&self) -> bool {
        self.inner.always_ready()
    }
}

impl<A: RequestAuthenticator> RequestAuthenticator for AudienceAgnostic<A> {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        match self.target(ctx) {
            None => self.inner.authenticate_request(req, ctx),
            Some(auds) if auds.is_empty() => AuthFuture::ready(Ok(None)),
            Some(auds) => self
                .inner
                .authenticate_request(req, ctx)
                .map(move |r| apply(r, auds)),
        }
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Clone, Copy, Debug)]
    enum Delegate {
        Ok,
        Err,
        NoOpinion,
        OkWithAudiences,
        /// Audiences Go's `%q` and Rust's `{:?}` print differently.
        OkWithOddAudiences,
    }

    fn delegate(kind: Delegate, calls: Arc<AtomicUsize>) -> impl TokenAuthenticator {
        SyncTokenFn::new(move |_: &str, _: &Context| {
            calls.fetch_add(1, Ordering::SeqCst);
            match kind {
                Delegate::Ok => Ok(Some(Response::new(Arc::new(UserInfo::new("test_user"))))),
                Delegate::Err => Err(Error::msg("uhoh")),
                Delegate::NoOpinion => Ok(None),
                Delegate::OkWithAudiences => Ok(Some(
                    Response::new(Arc::new(UserInfo::new("test_user")))
                        .with_audiences(Audiences::from(["x", "y"])),
                )),
                Delegate::OkWithOddAudiences => Ok(Some(
                    Response::new(Arc::new(UserInfo::new("test_user"))).with_audiences(
                        Audiences::from(["x\x01", "é", "\u{a0}", "\u{200b}", "a\"b", "\u{301}x"]),
                    ),
                )),
            }
        })
    }

    #[tokio::test]
    async fn audagnostic_vectors() {
        // audagnostic_test.go TestAuthenticate, plus the no-audiences pass-through.
        type Case = (
            &'static [&'static str],
            Option<&'static [&'static str]>,
            Delegate,
            &'static str,
            usize,
        );
        let cases: &[Case] = &[
            (&["api"], Some(&["api"]), Delegate::Ok, "ok [api]", 1),
            (
                &["api", "other"],
                Some(&["api"]),
                Delegate::Ok,
                "ok [api]",
                1,
            ),
            (
                &["api"],
                Some(&["api", "other"]),
                Delegate::Ok,
                "ok [api]",
                1,
            ),
            (
                &["api", "other"],
                Some(&["api", "other_other"]),
                Delegate::Ok,
                "ok [api]",
                1,
            ),
            (
                &["api", "other_api"],
                Some(&["api", "other_api"]),
                Delegate::Ok,
                "ok [api, other_api]",
                1,
            ),
            (&["api"], Some(&["api"]), Delegate::Err, "err uhoh", 1),
            (&["api"], Some(&["api"]), Delegate::NoOpinion, "none", 1),
            (&["api"], Some(&["other_api"]), Delegate::Err, "none", 0),
            (&[], Some(&["other_api"]), Delegate::Ok, "none", 0),
            (&["api"], Some(&[]), Delegate::Ok, "none", 0),
            (&["api", "other"], Some(&[]), Delegate::Err, "none", 0),
            (&[], Some(&["api", "other"]), Delegate::Ok, "none", 0),
            (&["api"], None, Delegate::Ok, "ok []", 1),
            (&["api"], None, Delegate::OkWithAudiences, "ok [x, y]", 1),
            (
                &["api"],
                Some(&["api"]),
                Delegate::OkWithAudiences,
                "err audience agnostic authenticator wrapped an authenticator that returned audiences: [\"x\" \"y\"]",
                1,
            ),
            // Go's text (printed with Go 1.26): `%q` escapes what is not printable.
            (
                &["api"],
                Some(&["api"]),
                Delegate::OkWithOddAudiences,
                "err audience agnostic authenticator wrapped an authenticator that returned audiences: [\"x\\x01\" \"é\" \"\\u00a0\" \"\\u200b\" \"a\\\"b\" \"\u{301}x\"]",
                1,
            ),
        ];
        for (implicit, requested, kind, want, want_calls) in cases {
            let calls = Arc::new(AtomicUsize::new(0));
            let a =
                AudienceAgnostic::new(Audiences::new(*implicit), delegate(*kind, calls.clone()));
            let ctx = match requested {
                Some(r) => Context::with_audiences(Audiences::new(*r)),
                None => Context::default(),
            };
            let got = match a.authenticate_token("t", &ctx).await {
                Ok(Some(r)) => {
                    format!("ok [{}]", r.audiences.iter().collect::<Vec<_>>().join(", "))
                }
                Ok(None) => "none".to_string(),
                Err(e) => format!("err {e}"),
            };
            let label = format!("implicit {implicit:?} requested {requested:?} delegate {kind:?}");
            assert_eq!(got, *want, "{label}");
            assert_eq!(
                calls.load(Ordering::SeqCst),
                *want_calls,
                "{label}: delegate calls"
            );
        }
    }
}
