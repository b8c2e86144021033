//! **INSECURE**: the legacy "any token" authenticator (`--insecure-allow-any-token`, removed
//! from Kubernetes in 1.8 by kubernetes#49045; `plugin/pkg/auth/authenticator/token/anytoken`).
//!
//! It accepts **every** non-empty bearer token and believes what the token says about the user:
//! `name` or `name/group1,group2` (split at the **last** `/`; an empty group part means no
//! groups). Anyone who can reach the server can claim to be anyone, including
//! `system:masters` members. It exists only for local experiments and for compatibility tests;
//! never enable it on a server reachable by anyone but you.
//!
//! It can only be built through the loudly named [`AnyToken::insecure_allow_any_token`], which
//! logs a warning. Put it **last** in a chain, as Kubernetes did, so every real authenticator is
//! tried first.
//!
//! | token | user |
//! |---|---|
//! | `joe` | name `joe` |
//! | `scheme/joe/` | name `scheme/joe`, no groups |
//! | `joe/group1,group2` | name `joe`, groups `group1`, `group2` |
//! | `scheme/joe/group1,group2` | name `scheme/joe`, groups `group1`, `group2` |
//!
//! An empty token is "not mine" (Kubernetes' bearer extractor never passed one; this
//! authenticator refuses it even when called directly). So is a token naming more than
//! [`MAX_GROUPS`] groups (Kubernetes had no limit): each group is
//! an allocation, and a 64 KiB token of commas would otherwise be 16,000 of them per request.
//! Empty group names (`joe/,`) share one allocation.
//!
//! ```
//! use kube_authn::token::anytoken::AnyToken;
//!
//! let any = AnyToken::insecure_allow_any_token();
//! let user = |token| any.user_for(token).map(|u| (u.name().to_owned(), u.groups().map(str::to_owned).collect::<Vec<_>>()));
//! assert_eq!(user("joe"), Some(("joe".into(), vec![])));
//! assert_eq!(user("scheme/joe/"), Some(("scheme/joe".into(), vec![])));
//! assert_eq!(user("joe/group1,group2"), Some(("joe".into(), vec!["group1".into(), "group2".into()])));
//! // Anyone can claim cluster-admin: that is why this authenticator is insecure.
//! assert_eq!(user("mallory/system:masters").unwrap().1, ["system:masters"]);
//! assert_eq!(user(""), None);
//! ```

use std::sync::Arc;

use std::sync::LazyLock;

use crate::authenticator::{AuthFuture, Context, Response, TokenAuthenticator};
use crate::request::MAX_GROUPS;
use crate::user::{Extra, SharedStr, UserInfo, shared_groups};

/// The one allocation every empty group name shares.
static EMPTY_GROUP: LazyLock<SharedStr> = LazyLock::new(|| Arc::from(""));

/// Accepts any non-empty token as the identity it spells. **Insecure**; see the
/// [module docs](self).
///
/// ```
/// use kube_authn::authenticator::{Context, TokenAuthenticator};
/// use kube_authn::token::anytoken::AnyToken;
///
/// let any = AnyToken::insecure_allow_any_token();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let r = any.authenticate_token("scheme/joe/group1,group2", &Context::default()).await.unwrap().unwrap();
/// assert_eq!(r.user.name(), "scheme/joe");
/// assert_eq!(r.user.groups().collect::<Vec<_>>(), ["group1", "group2"]);
/// # });
/// ```
#[derive(Debug)]
pub struct AnyToken {
    _explicit: (),
}

impl AnyToken {
    /// Builds the authenticator and logs a warning. Every token is accepted: do not use this
    /// outside local experiments.
    ///
    /// ```
    /// let _any = kube_authn::token::anytoken::AnyToken::insecure_allow_any_token();
    /// ```
    pub fn insecure_allow_any_token() -> Self {
        tracing::warn!(
            "INSECURE: the any-token authenticator is enabled; every bearer token is accepted as the user and groups it names"
        );
        Self { _explicit: () }
    }

    /// The user a token claims to be, or `None` (not mine) for an empty token or one naming
    /// more than [`MAX_GROUPS`] groups.
    ///
    /// ```
    /// use kube_authn::request::MAX_GROUPS;
    /// let any = kube_authn::token::anytoken::AnyToken::insecure_allow_any_token();
    /// assert_eq!(any.user_for("joe/").unwrap().name(), "joe");
    /// assert!(any.user_for("").is_none());
    /// let groups = |n: usize| format!("joe/{}", vec!["g"; n].join(","));
    /// assert_eq!(any.user_for(&groups(MAX_GROUPS)).unwrap().groups().count(), MAX_GROUPS);
    /// assert!(any.user_for(&groups(MAX_GROUPS + 1)).is_none());
    /// ```
    pub fn user_for(&self, token: &str) -> Option<UserInfo> {
        if token.is_empty() {
            return None;
        }
        let (name, groups) = match token.rfind('/') {
            None => (token, ""),
            Some(i) => (&token[..i], &token[i + 1..]),
        };
        let groups: Vec<SharedStr> = if groups.is_empty() {
            Vec::new()
        } else {
            let n = memchr::memchr_iter(b',', groups.as_bytes()).count() + 1;
            if n > MAX_GROUPS {
                return None;
            }
            let mut list = Vec::with_capacity(n);
            list.extend(groups.split(',').map(|g| {
                if g.is_empty() {
                    EMPTY_GROUP.clone()
                } else {
                    Arc::from(g)
                }
            }));
            list
        };
        Some(UserInfo::from_parts(
            name,
            "",
            shared_groups(groups),
            Extra::new(),
        ))
    }
}

impl TokenAuthenticator for AnyToken {
    fn authenticate_token<'a>(&'a self, token: &'a str, _ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::ready(Ok(self.user_for(token).map(|u| Response::new(Arc::new(u)))))
    }

    fn always_ready(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anytoken_vectors() {
        let any = AnyToken::insecure_allow_any_token();
        let cases: [(&str, &str, &[&str]); 7] = [
            ("joe", "joe", &[]),
            ("scheme/joe/", "scheme/joe", &[]),
            ("joe/group1,group2", "joe", &["group1", "group2"]),
            (
                "scheme/joe/group1,group2",
                "scheme/joe",
                &["group1", "group2"],
            ),
            ("/g", "", &["g"]),
            ("joe/,", "joe", &["", ""]),
            ("a/b/c", "a/b", &["c"]),
        ];
        for (token, name, groups) in cases {
            let u = any.user_for(token).unwrap();
            assert_eq!(u.name(), name, "token {token:?}");
            assert_eq!(u.uid(), "", "token {token:?}");
            assert_eq!(u.groups().collect::<Vec<_>>(), groups, "token {token:?}");
            assert!(u.extra().is_empty());
        }
        assert!(any.user_for("").is_none());
        let r = any
            .authenticate_token("", &Context::default())
            .into_ready()
            .unwrap();
        assert!(r.unwrap().is_none());
    }

    /// At most `MAX_GROUPS` groups (more is not mine, before anything is allocated); empty
    /// group names share one allocation.
    #[test]
    fn anytoken_group_limit_and_shared_empty_groups() {
        let any = AnyToken::insecure_allow_any_token();
        let cases: [(&str, String, Option<usize>); 5] = [
            ("one", "joe/g".into(), Some(1)),
            (
                "max named",
                format!("joe/{}", vec!["g"; MAX_GROUPS].join(",")),
                Some(MAX_GROUPS),
            ),
            (
                "max empty",
                format!("joe/{}", ",".repeat(MAX_GROUPS - 1)),
                Some(MAX_GROUPS),
            ),
            (
                "max + 1 empty",
                format!("a/{}", ",".repeat(MAX_GROUPS)),
                None,
            ),
            (
                "max + 1 named",
                format!("joe/{}", vec!["g"; MAX_GROUPS + 1].join(",")),
                None,
            ),
        ];
        for (name, token, want) in cases {
            let got = any.user_for(&token).map(|u| u.groups().count());
            assert_eq!(got, want, "case {name}");
            let r = any
                .authenticate_token(&token, &Context::default())
                .into_ready()
                .unwrap()
                .unwrap();
            assert_eq!(r.map(|r| r.user.groups().count()), want, "case {name}");
        }
        let u = any.user_for(&format!("joe/{}", ",".repeat(9))).unwrap();
        let groups = u.shared_groups();
        assert_eq!(groups.len(), 10);
        assert!(groups.iter().all(|g| Arc::ptr_eq(g, &groups[0])));
        assert!(Arc::ptr_eq(&groups[0], &EMPTY_GROUP));
    }
}
