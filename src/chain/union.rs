//! Union authenticators (k8s `request/union` and `token/union`).
//!
//! * [`Union::new`]: handlers are tried in order; the first success wins and later handlers are
//!   not called (earlier errors are then discarded); if nobody succeeds, the errors are
//!   aggregated ([`Error::aggregate`]: `[a, b]`, de-duplicated) and no errors means "not mine".
//! * [`Union::fail_on_error`]: the first error is returned at once; later handlers are not
//!   called. kube-apiserver uses this to put anonymous *behind* the main chain, so a bad
//!   credential is a 401 and never an anonymous request.
//!
//! A union of one handler behaves exactly like that handler ([`Union::into_dyn`] returns it
//! unwrapped, as k8s' `New` does).
//!
//! ```
//! use kube_authn::authenticator::{Context, SyncTokenFn, TokenAuthenticator, Response};
//! use kube_authn::chain::union::TokenUnion;
//! use kube_authn::{Error, user::UserInfo};
//! use std::sync::Arc;
//!
//! let fails = Arc::new(SyncTokenFn::new(|_: &str, _: &Context| Err(Error::msg("first"))));
//! let works = Arc::new(SyncTokenFn::new(|_: &str, _: &Context| Ok(Some(Response::new(UserInfo::new("u").into())))));
//! let union = TokenUnion::new(vec![fails.clone(), works]);
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // The first success wins and silences the earlier error.
//! assert!(union.authenticate_token("t", &Context::default()).await.unwrap().is_some());
//! // Fail-on-error stops at the first error.
//! let strict = TokenUnion::fail_on_error(vec![fails.clone(), fails]);
//! assert_eq!(strict.authenticate_token("t", &Context::default()).await.unwrap_err().to_string(), "first");
//! # });
//! ```

use std::sync::Arc;

use http::request::Parts;

use crate::authenticator::{
    AuthFuture, AuthResult, Context, Description, RequestAuthenticator, TokenAuthenticator,
};
use crate::error::Error;

/// A union of request authenticators: the first success wins; otherwise the errors are
/// aggregated, or (with [`fail_on_error`](Union::fail_on_error)) the first error ends it.
/// Details in the [module docs](self).
///
/// ```
/// use std::sync::Arc;
/// use kube_authn::authenticator::{Context, RequestAuthenticator, SyncRequestFn};
/// use kube_authn::chain::union::Union;
/// use kube_authn::Error;
///
/// let fails = |msg: &'static str| Arc::new(SyncRequestFn::new(move |_: &http::request::Parts, _: &Context| Err(Error::msg(msg))));
/// let not_mine = Arc::new(SyncRequestFn::new(|_: &http::request::Parts, _: &Context| Ok(None)));
/// let (req, _) = http::Request::get("/").body(()).unwrap().into_parts();
/// let ctx = Context::default();
///
/// let union = Union::new(vec![fails("a"), not_mine.clone(), fails("b"), fails("a")]);
/// let err = union.authenticate_request(&req, &ctx).into_ready().unwrap().unwrap_err();
/// assert_eq!(err.to_string(), "[a, b]");
///
/// let nobody = Union::new(vec![not_mine.clone(), not_mine]);
/// assert!(nobody.authenticate_request(&req, &ctx).into_ready().unwrap().unwrap().is_none());
/// ```
pub struct Union {
    handlers: Vec<Arc<dyn RequestAuthenticator>>,
    fail_on_error: bool,
}

/// A union of token authenticators, with the same rules as [`Union`] (see the
/// [module docs](self)).
///
/// ```
/// use std::sync::Arc;
/// use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
/// use kube_authn::chain::union::TokenUnion;
/// use kube_authn::user::UserInfo;
/// use kube_authn::Error;
///
/// let file = Arc::new(SyncTokenFn::new(|t: &str, _: &Context| {
///     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"from-file").is_ok()).then(|| Response::new(UserInfo::new("file-user").into())))
/// }));
/// let strict = Arc::new(SyncTokenFn::new(|t: &str, _: &Context| {
///     if t.starts_with("sk-") { Err(Error::msg("revoked key")) } else { Ok(None) }
/// }));
/// let union = TokenUnion::new(vec![file, strict]);
/// let ask = |t| union.authenticate_token(t, &Context::default()).into_ready().unwrap();
/// assert_eq!(ask("from-file").unwrap().unwrap().user.name(), "file-user");
/// assert_eq!(ask("sk-123").unwrap_err().to_string(), "revoked key");
/// assert!(ask("other").unwrap().is_none());
/// ```
pub struct TokenUnion {
    handlers: Vec<Arc<dyn TokenAuthenticator>>,
    fail_on_error: bool,
}

impl Union {
    /// A union that aggregates errors and keeps going (k8s `union.New`).
    ///
    /// ```
    /// let empty = kube_authn::chain::union::Union::new(vec![]);
    /// ```
    pub fn new(handlers: Vec<Arc<dyn RequestAuthenticator>>) -> Self {
        Self {
            handlers,
            fail_on_error: false,
        }
    }

    /// A union that stops at the first error (k8s `union.NewFailOnError`).
    ///
    /// ```
    /// let u = kube_authn::chain::union::Union::fail_on_error(vec![]);
    /// ```
    pub fn fail_on_error(handlers: Vec<Arc<dyn RequestAuthenticator>>) -> Self {
        Self {
            handlers,
            fail_on_error: true,
        }
    }

    /// The union as a shared trait object; a union of exactly one handler is that handler.
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, union::Union};
    /// use std::sync::Arc;
    /// let only: Arc<dyn kube_authn::RequestAuthenticator> = Arc::new(Anonymous::new());
    /// let u = Union::new(vec![only.clone()]).into_dyn();
    /// assert!(Arc::ptr_eq(&u, &only));
    /// ```
    pub fn into_dyn(mut self) -> Arc<dyn RequestAuthenticator> {
        if self.handlers.len() == 1 {
            return self.handlers.pop().expect("length checked");
        }
        Arc::new(self)
    }
}

impl TokenUnion {
    /// A union that aggregates errors and keeps going (k8s `tokenunion.New`).
    ///
    /// ```
    /// let empty = kube_authn::chain::union::TokenUnion::new(vec![]);
    /// ```
    pub fn new(handlers: Vec<Arc<dyn TokenAuthenticator>>) -> Self {
        Self {
            handlers,
            fail_on_error: false,
        }
    }

    /// A union that stops at the first error (k8s `tokenunion.NewFailOnError`).
    ///
    /// ```
    /// let u = kube_authn::chain::union::TokenUnion::fail_on_error(vec![]);
    /// ```
    pub fn fail_on_error(handlers: Vec<Arc<dyn TokenAuthenticator>>) -> Self {
        Self {
            handlers,
            fail_on_error: true,
        }
    }

    /// The union as a shared trait object; a union of exactly one handler is that handler.
    ///
    /// ```
    /// let u = kube_authn::chain::union::TokenUnion::new(vec![]).into_dyn();
    /// ```
    pub fn into_dyn(mut self) -> Arc<dyn TokenAuthenticator> {
        if self.handlers.len() == 1 {
            return self.handlers.pop().expect("length checked");
        }
        Arc::new(self)
    }
}

impl RequestAuthenticator for Union {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        run(&self.handlers, self.fail_on_error, move |h| {
            h.authenticate_request(req, ctx)
        })
    }

    fn describe(&self, description: &mut Description) {
        self.handlers.iter().for_each(|h| h.describe(description));
    }

    fn always_ready(&self) -> bool {
        self.handlers.iter().all(|h| h.always_ready())
    }
}

impl TokenAuthenticator for TokenUnion {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        run(&self.handlers, self.fail_on_error, move |h| {
            h.authenticate_token(token, ctx)
        })
    }

    fn always_ready(&self) -> bool {
        self.handlers.iter().all(|h| h.always_ready())
    }
}

/// What one handler's result means for the union: `Some` ends it with that result.
fn step(result: AuthResult, fail_on_error: bool, errors: &mut Vec<Error>) -> Option<AuthResult> {
    match result {
        Ok(Some(response)) => Some(Ok(Some(response))),
        Ok(None) => None,
        Err(e) if fail_on_error => Some(Err(e)),
        Err(e) => {
            errors.push(e);
            None
        }
    }
}

fn finish(errors: Vec<Error>) -> AuthResult {
    match Error::aggregate(errors) {
        Some(e) => Err(e),
        None => Ok(None),
    }
}

/// Runs the union synchronously while handlers answer at once, and boxes the rest from the
/// first handler that has to wait.
fn run<'a, H, F>(handlers: &'a [Arc<H>], fail_on_error: bool, call: F) -> AuthFuture<'a>
where
    H: ?Sized + Send + Sync + 'a,
    F: Fn(&'a H) -> AuthFuture<'a> + Send + 'a,
{
    let mut errors = Vec::new();
    for (i, handler) in handlers.iter().enumerate() {
        match call(handler).into_ready() {
            Ok(result) => {
                if let Some(done) = step(result, fail_on_error, &mut errors) {
                    return AuthFuture::ready(done);
                }
            }
            Err(pending) => {
                return AuthFuture::new(async move {
                    if let Some(done) = step(pending.await, fail_on_error, &mut errors) {
                        return done;
                    }
                    for handler in &handlers[i + 1..] {
                        if let Some(done) = step(call(handler).await, fail_on_error, &mut errors) {
                            return done;
                        }
                    }
                    finish(errors)
                });
            }
        }
    }
    AuthFuture::ready(finish(errors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authenticator::{AsyncTokenFn, Response, SyncTokenFn};
    use crate::user::UserInfo;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Clone)]
    enum Outcome {
        User(&'static str),
        NoOpinion,
        Fail(&'static str),
    }

    /// A token authenticator that answers `outcome` and counts its calls; `slow` makes it wait.
    fn handler(
        outcome: Outcome,
        slow: bool,
        calls: Arc<AtomicUsize>,
    ) -> Arc<dyn TokenAuthenticator> {
        let answer = move || match outcome.clone() {
            Outcome::User(name) => Ok(Some(Response::new(Arc::new(
                UserInfo::builder(name).uid(name).build(),
            )))),
            Outcome::NoOpinion => Ok(None),
            Outcome::Fail(msg) => Err(Error::msg(msg)),
        };
        if slow {
            Arc::new(AsyncTokenFn::new(move |_t, _c| {
                calls.fetch_add(1, Ordering::SeqCst);
                let r = answer();
                async move {
                    tokio::task::yield_now().await;
                    r
                }
            }))
        } else {
            Arc::new(SyncTokenFn::new(move |_: &str, _: &Context| {
                calls.fetch_add(1, Ordering::SeqCst);
                answer()
            }))
        }
    }

    struct Case {
        name: &'static str,
        handlers: Vec<Outcome>,
        fail_on_error: bool,
        want_user: Option<&'static str>,
        want_err: Option<&'static str>,
        want_calls: Vec<usize>,
    }

    fn cases() -> Vec<Case> {
        use Outcome::*;
        vec![
            Case {
                name: "SecondPasses",
                handlers: vec![NoOpinion, User("elegant_sheep")],
                fail_on_error: false,
                want_user: Some("elegant_sheep"),
                want_err: None,
                want_calls: vec![1, 1],
            },
            Case {
                name: "FirstPasses",
                handlers: vec![User("fresh_ferret"), NoOpinion],
                fail_on_error: false,
                want_user: Some("fresh_ferret"),
                want_err: None,
                want_calls: vec![1, 0],
            },
            Case {
                name: "SuppressUnnecessaryErrors",
                handlers: vec![Fail("first"), User("u")],
                fail_on_error: false,
                want_user: Some("u"),
                want_err: None,
                want_calls: vec![1, 1],
            },
            Case {
                name: "NoAuthenticators",
                handlers: vec![],
                fail_on_error: false,
                want_user: None,
                want_err: None,
                want_calls: vec![],
            },
            Case {
                name: "NonePass",
                handlers: vec![NoOpinion, NoOpinion],
                fail_on_error: false,
                want_user: None,
                want_err: None,
                want_calls: vec![1, 1],
            },
            Case {
                name: "AdditiveErrors",
                handlers: vec![Fail("first"), Fail("second")],
                fail_on_error: false,
                want_user: None,
                want_err: Some("[first, second]"),
                want_calls: vec![1, 1],
            },
            Case {
                name: "DuplicateErrorsCollapse",
                handlers: vec![Fail("same"), NoOpinion, Fail("same")],
                fail_on_error: false,
                want_user: None,
                want_err: Some("same"),
                want_calls: vec![1, 1, 1],
            },
            Case {
                name: "FailEarly",
                handlers: vec![Fail("first"), Fail("second")],
                fail_on_error: true,
                want_user: None,
                want_err: Some("first"),
                want_calls: vec![1, 0],
            },
            Case {
                name: "FailOnErrorSuccessAfterNoOpinion",
                handlers: vec![NoOpinion, User("anon")],
                fail_on_error: true,
                want_user: Some("anon"),
                want_err: None,
                want_calls: vec![1, 1],
            },
            Case {
                name: "OneHandlerIsThatHandler",
                handlers: vec![Fail("only")],
                fail_on_error: false,
                want_user: None,
                want_err: Some("only"),
                want_calls: vec![1],
            },
        ]
    }

    #[tokio::test]
    async fn union_semantics_match_kubernetes_sync_and_async() {
        for slow_mask in 0..4u32 {
            for case in cases() {
                let counters: Vec<_> = case
                    .handlers
                    .iter()
                    .map(|_| Arc::new(AtomicUsize::new(0)))
                    .collect();
                let handlers = case
                    .handlers
                    .iter()
                    .enumerate()
                    .map(|(i, o)| {
                        handler(o.clone(), slow_mask & (1 << i) != 0, counters[i].clone())
                    })
                    .collect();
                let union = if case.fail_on_error {
                    TokenUnion::fail_on_error(handlers)
                } else {
                    TokenUnion::new(handlers)
                };
                let got = union.authenticate_token("token", &Context::default()).await;
                let label = format!("{} (slow mask {slow_mask:b})", case.name);
                match (&got, case.want_user, case.want_err) {
                    (Ok(Some(r)), Some(u), None) => assert_eq!(r.user.name(), u, "{label}"),
                    (Ok(None), None, None) => {}
                    (Err(e), None, Some(msg)) => assert_eq!(e.to_string(), msg, "{label}"),
                    _ => panic!("{label}: got {got:?}"),
                }
                let calls: Vec<_> = counters.iter().map(|c| c.load(Ordering::SeqCst)).collect();
                assert_eq!(calls, case.want_calls, "{label}: calls");
            }
        }
    }

    #[test]
    fn sync_chain_answers_without_boxing() {
        let calls = Arc::new(AtomicUsize::new(0));
        let union = TokenUnion::new(vec![
            handler(Outcome::NoOpinion, false, calls.clone()),
            handler(Outcome::User("u"), false, calls),
        ]);
        let ctx = Context::default();
        assert!(union.authenticate_token("t", &ctx).is_ready());
    }
}
