//! Group adders (k8s `pkg/authentication/group`).
//!
//! * [`AuthenticatedGroupAdder`] appends `system:authenticated` to every authenticated user
//!   except `system:anonymous` and users already in `system:authenticated` or
//!   `system:unauthenticated` (k8s `NewAuthenticatedGroupAdder`).
//! * [`GroupAdder`] appends fixed groups, with no de-duplication (k8s `NewGroupAdder`).
//!
//! Both build a new [`UserInfo`](crate::user::UserInfo) and never change the response they
//! were given, so a cached identity stays as it was (k8s commit `3677d6afc`). Both wrap request
//! and token authenticators alike.
//!
//! ```
//! use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
//! use kube_authn::chain::group::AuthenticatedGroupAdder;
//! use kube_authn::user::UserInfo;
//!
//! let inner = SyncTokenFn::new(|_: &str, _: &Context| {
//!     Ok(Some(Response::new(UserInfo::builder("user").group("some-group").build().into())))
//! });
//! let adder = AuthenticatedGroupAdder::new(inner);
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let r = adder.authenticate_token("t", &Context::default()).await.unwrap().unwrap();
//! assert_eq!(r.user.groups().collect::<Vec<_>>(), ["some-group", "system:authenticated"]);
//! # });
//! ```

use std::sync::Arc;

use http::request::Parts;

use crate::authenticator::{
    AuthFuture, AuthResult, Context, Description, RequestAuthenticator, Response,
    TokenAuthenticator,
};
use crate::user::SharedStr;

/// Appends `system:authenticated` to every authenticated user except the anonymous one and
/// users already in `system:authenticated` or `system:unauthenticated` (the rules are in the
/// [module docs](self)).
///
/// ```
/// use std::sync::Arc;
/// use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
/// use kube_authn::chain::group::AuthenticatedGroupAdder;
/// use kube_authn::user::UserInfo;
///
/// // A stored identity, as a token file or cache keeps it.
/// let stored = Arc::new(UserInfo::builder("jane").group("dev").build());
/// let shared = stored.clone();
/// let adder = AuthenticatedGroupAdder::new(SyncTokenFn::new(move |t: &str, _: &Context| {
///     Ok(Some(Response::new(match t {
///         "anon" => UserInfo::anonymous(),
///         _ => shared.clone(),
///     })))
/// }));
/// let ask = |t| adder.authenticate_token(t, &Context::default()).into_ready().unwrap().unwrap().unwrap();
/// assert_eq!(ask("jane").user.groups().collect::<Vec<_>>(), ["dev", "system:authenticated"]);
/// assert_eq!(stored.groups().collect::<Vec<_>>(), ["dev"]); // the stored identity is unchanged
/// assert_eq!(ask("anon").user.groups().collect::<Vec<_>>(), ["system:unauthenticated"]);
/// ```
#[derive(Debug, Clone)]
pub struct AuthenticatedGroupAdder<A> {
    inner: A,
}

impl<A> AuthenticatedGroupAdder<A> {
    /// Wraps `inner`.
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, group::AuthenticatedGroupAdder};
    /// let a = AuthenticatedGroupAdder::new(Anonymous::new());
    /// ```
    pub fn new(inner: A) -> Self {
        Self { inner }
    }
}

fn add_authenticated(result: AuthResult) -> AuthResult {
    match result {
        Ok(Some(response)) => match response.user.authenticated_twin() {
            Some(user) => Ok(Some(Response {
                user,
                audiences: response.audiences,
            })),
            None => Ok(Some(response)),
        },
        other => other,
    }
}

impl<A: RequestAuthenticator> RequestAuthenticator for AuthenticatedGroupAdder<A> {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        self.inner
            .authenticate_request(req, ctx)
            .map(add_authenticated)
    }

    fn describe(&self, description: &mut Description) {
        self.inner.describe(description)
    }

    fn always_ready(&self) -> bool {
        self.inner.always_ready()
    }
}

impl<A: TokenAuthenticator> TokenAuthenticator for AuthenticatedGroupAdder<A> {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        self.inner
            .authenticate_token(token, ctx)
            .map(add_authenticated)
    }

    fn always_ready(&self) -> bool {
        self.inner.always_ready()
    }
}

/// Appends fixed groups to every authenticated user, without de-duplication, as Kubernetes'
/// `NewGroupAdder` does (see the [module docs](self)).
///
/// ```
/// use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
/// use kube_authn::chain::group::GroupAdder;
/// use kube_authn::user::UserInfo;
///
/// let inner = SyncTokenFn::new(|t: &str, _: &Context| {
///     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"known").is_ok()).then(|| Response::new(UserInfo::builder("jane").group("ops").build().into())))
/// });
/// let adder = GroupAdder::new(inner, ["ops", "tenant-a"]);
/// let ask = |t| adder.authenticate_token(t, &Context::default()).into_ready().unwrap().unwrap();
/// let user = ask("known").unwrap().user;
/// assert_eq!(user.groups().collect::<Vec<_>>(), ["ops", "ops", "tenant-a"]);
/// assert!(ask("unknown").is_none()); // "not mine" passes through
/// ```
#[derive(Debug, Clone)]
pub struct GroupAdder<A> {
    inner: A,
    groups: Arc<[SharedStr]>,
}

impl<A> GroupAdder<A> {
    /// Wraps `inner`, appending `groups` to every authenticated user.
    ///
    /// ```
    /// use kube_authn::chain::{anonymous::Anonymous, group::GroupAdder};
    /// let a = GroupAdder::new(Anonymous::new(), ["extra-group"]);
    /// ```
    pub fn new<I, G>(inner: A, groups: I) -> Self
    where
        I: IntoIterator<Item = G>,
        G: Into<SharedStr>,
    {
        Self {
            inner,
            groups: groups.into_iter().map(Into::into).collect(),
        }
    }

    fn add(&self, result: AuthResult) -> AuthResult {
        let Ok(Some(response)) = result else {
            return result;
        };
        Ok(Some(Response {
            user: Arc::new(
                response
                    .user
                    .with_groups_appended(self.groups.iter().cloned()),
            ),
            audiences: response.audiences,
        }))
    }
}

impl<A: RequestAuthenticator> RequestAuthenticator for GroupAdder<A> {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        self.inner
            .authenticate_request(req, ctx)
            .map(move |r| self.add(r))
    }

    fn describe(&self, description: &mut Description) {
        self.inner.describe(description)
    }

    fn always_ready(&self) -> bool {
        self.inner.always_ready()
    }
}

impl<A: TokenAuthenticator> TokenAuthenticator for GroupAdder<A> {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        self.inner
            .authenticate_token(token, ctx)
            .map(move |r| self.add(r))
    }

    fn always_ready(&self) -> bool {
        self.inner.always_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authenticator::SyncTokenFn;
    use crate::error::Error;
    use crate::user::UserInfo;

    fn returning(user: UserInfo) -> impl TokenAuthenticator {
        let user = Arc::new(user);
        SyncTokenFn::new(move |_: &str, _: &Context| Ok(Some(Response::new(user.clone()))))
    }

    async fn groups_after<A: TokenAuthenticator>(a: &A) -> Vec<String> {
        let r = a
            .authenticate_token("t", &Context::default())
            .await
            .unwrap()
            .unwrap();
        r.user.groups().map(str::to_owned).collect()
    }

    #[tokio::test]
    async fn authenticated_group_adder_vectors() {
        // group/authenticated_group_adder_test.go TestAuthenticatedGroupAdder
        let cases: [(&str, &str, &[&str], &[&str]); 5] = [
            (
                "adds",
                "user",
                &["some-group"],
                &["some-group", "system:authenticated"],
            ),
            (
                "already authenticated",
                "user",
                &["system:authenticated", "some-group"],
                &["system:authenticated", "some-group"],
            ),
            (
                "anonymous name",
                "system:anonymous",
                &["some-group"],
                &["some-group"],
            ),
            (
                "unauthenticated group",
                "user",
                &["system:unauthenticated", "some-group"],
                &["system:unauthenticated", "some-group"],
            ),
            ("no groups", "user", &[], &["system:authenticated"]),
        ];
        for (name, user, groups, want) in cases {
            let a = AuthenticatedGroupAdder::new(returning(
                UserInfo::builder(user)
                    .groups(groups.iter().copied())
                    .build(),
            ));
            assert_eq!(groups_after(&a).await, want, "case {name}");
        }
    }

    #[tokio::test]
    async fn the_added_user_is_built_once_per_user_and_shared() {
        // The adder's answer for one stored user is the same `Arc` on every request (built on
        // the first); an exempt user comes back as the very `Arc` the delegate returned.
        let cases: [(&str, UserInfo, bool); 3] = [
            ("adds", UserInfo::builder("u").group("g").build(), true),
            ("anonymous", UserInfo::new("system:anonymous"), false),
            (
                "already authenticated",
                UserInfo::builder("u").group("system:authenticated").build(),
                false,
            ),
        ];
        for (name, user, adds) in cases {
            let stored = Arc::new(user);
            let inner = {
                let stored = stored.clone();
                SyncTokenFn::new(move |_: &str, _: &Context| {
                    Ok(Some(Response::new(stored.clone())))
                })
            };
            let a = AuthenticatedGroupAdder::new(inner);
            let ctx = Context::default();
            let first = a.authenticate_token("t", &ctx).await.unwrap().unwrap().user;
            let second = a.authenticate_token("t", &ctx).await.unwrap().unwrap().user;
            assert!(Arc::ptr_eq(&first, &second), "case {name}: shared");
            assert_eq!(!Arc::ptr_eq(&first, &stored), adds, "case {name}");
            assert_eq!(
                first
                    .groups()
                    .filter(|g| *g == "system:authenticated")
                    .count(),
                usize::from(adds || name == "already authenticated"),
                "case {name}"
            );
            // The stored user itself never changes.
            assert_eq!(
                stored.groups().any(|g| g == "system:authenticated"),
                name == "already authenticated",
                "case {name}"
            );
        }
    }

    #[tokio::test]
    async fn a_user_built_per_request_gets_the_group_without_a_cache() {
        // The delegate builds a new user on every call (as the JWT and x509 authenticators do):
        // nobody keeps it, so the adder builds its answer directly each time.
        for (name, user, adds) in [
            ("adds", "u", true),
            ("anonymous", "system:anonymous", false),
        ] {
            let a = AuthenticatedGroupAdder::new(SyncTokenFn::new(move |_: &str, _: &Context| {
                Ok(Some(Response::new(Arc::new(
                    UserInfo::builder(user).group("g").build(),
                ))))
            }));
            let ctx = Context::default();
            let first = a.authenticate_token("t", &ctx).await.unwrap().unwrap().user;
            let second = a.authenticate_token("t", &ctx).await.unwrap().unwrap().user;
            assert!(!Arc::ptr_eq(&first, &second), "case {name}");
            let want: &[&str] = if adds {
                &["g", "system:authenticated"]
            } else {
                &["g"]
            };
            assert_eq!(first.groups().collect::<Vec<_>>(), want, "case {name}");
            assert_eq!(second.groups().collect::<Vec<_>>(), want, "case {name}");
        }
    }

    #[tokio::test]
    async fn adders_never_mutate_the_delegates_response() {
        let shared = Arc::new(
            UserInfo::builder("user")
                .uid("1")
                .group("original")
                .extra("k", ["v"])
                .build(),
        );
        let before = format!("{shared:?}");
        let inner = {
            let shared = shared.clone();
            SyncTokenFn::new(move |_: &str, _: &Context| Ok(Some(Response::new(shared.clone()))))
        };
        let adder = GroupAdder::new(AuthenticatedGroupAdder::new(inner), ["added"]);
        for _ in 0..3 {
            // Repeated calls (as with a cached identity) give identical groups.
            assert_eq!(
                groups_after(&adder).await,
                ["original", "system:authenticated", "added"]
            );
        }
        assert_eq!(format!("{shared:?}"), before, "cached identity changed");
    }

    #[tokio::test]
    async fn group_adder_keeps_duplicates_and_passes_failures_through() {
        let a = GroupAdder::new(returning(UserInfo::builder("u").group("g").build()), ["g"]);
        assert_eq!(groups_after(&a).await, ["g", "g"]);

        let failing = GroupAdder::new(
            SyncTokenFn::new(|_: &str, _: &Context| Err(Error::msg("boom"))),
            ["g"],
        );
        let err = failing
            .authenticate_token("t", &Context::default())
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "boom");
        let none = AuthenticatedGroupAdder::new(SyncTokenFn::new(|_: &str, _: &Context| Ok(None)));
        assert!(
            none.authenticate_token("t", &Context::default())
                .await
                .unwrap()
                .is_none()
        );
    }
}
