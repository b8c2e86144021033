//! The anonymous authenticator (k8s `request/anonymous`, with KEP-4633 path conditions).
//!
//! It authenticates every request as `system:anonymous` in group `system:unauthenticated`, and
//! echoes the request's audiences. kube-apiserver places it *after* the main chain in a
//! fail-on-error union, so it is reached only when no authenticator succeeded **and** none
//! returned an error; see [`crate::chain::ChainBuilder`].
//!
//! # Path conditions and how paths are compared
//!
//! With [`Anonymous::with_paths`], only requests whose path is exactly one of the listed paths
//! are anonymous; any other path is "not mine" (so the request gets a 401). The comparison is
//! Kubernetes' own: exact, case-sensitive equality with the percent-*decoded* path, and nothing
//! else is normalised:
//!
//! | request target | path compared | matches `/healthz`? |
//! |---|---|---|
//! | `/healthz?verbose` | `/healthz` (query ignored) | yes |
//! | `/heal%74hz` | `/healthz` | yes (as in Kubernetes) |
//! | `/healthz/` | `/healthz/` | no (no trailing-slash folding) |
//! | `//healthz` | `//healthz` | no (no slash merging) |
//! | `/api/../healthz` | `/api/../healthz` | no (no dot-segment removal) |
//! | `/healthz%2F` | `/healthz/` | no |
//! | `/HEALTHZ` | `/HEALTHZ` | no (case-sensitive) |
//! | `/healthz%zz`, `/healthz%` | (invalid escape) | no |
//! | `/%FF` | (not UTF-8) | no |
//!
//! What a router then does with it: a request is let in only when its decoded path *equals* an
//! allowed path, but its raw spelling may differ (`/heal%74hz`, `/%68ealthz`). A router that
//! routes on the decoded path (Go's `ServeMux`, so kube-apiserver) sends it to that endpoint.
//! A router that routes on the raw path (axum and its `matchit`, like most Rust routers) does
//! not match the `/healthz` route with it and sends it to whatever handles unmatched paths: a
//! 404 by default, but an axum `.fallback` handler or a `/{*rest}` wildcard route **receives
//! it as `system:anonymous`**, whatever that handler serves. So, with path conditions, either
//! route on the decoded path, or give fallback and wildcard handlers nothing an anonymous
//! caller may not have (check [`UserInfo::is_anonymous`] there), or call
//! [`Anonymous::require_raw_path_match`], which lets in only a path spelled exactly as listed
//! (a difference from Kubernetes, opt-in). No spelling that a router might resolve to a
//! *different* endpoint by normalising it (dot segments, doubled slashes, encoded slashes)
//! matches, because nothing is normalised on our side: every such trick fails closed with a
//! 401.
//!
//! ```
//! use kube_authn::authenticator::{Context, RequestAuthenticator};
//! use kube_authn::chain::anonymous::Anonymous;
//!
//! let anon = Anonymous::with_paths(["/healthz", "/readyz", "/livez"]);
//! let (ok, _) = http::Request::get("https://h/healthz").body(()).unwrap().into_parts();
//! let (api, _) = http::Request::get("https://h/api").body(()).unwrap().into_parts();
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let ctx = Context::default();
//! let r = anon.authenticate_request(&ok, &ctx).await.unwrap().unwrap();
//! assert_eq!(r.user.name(), "system:anonymous");
//! assert!(anon.authenticate_request(&api, &ctx).await.unwrap().is_none());
//! # });
//! ```

use std::borrow::Cow;
use std::collections::HashSet;

use http::request::Parts;

use crate::authenticator::{AuthFuture, Context, RequestAuthenticator, Response};
use crate::user::UserInfo;

/// Authenticates every request (or, with [`with_paths`](Self::with_paths), every request to
/// one of the listed paths) as `system:anonymous` in group `system:unauthenticated`, with the
/// request's audiences. How paths are compared is in the [module docs](self).
///
/// ```
/// use kube_authn::authenticator::{Audiences, Context, RequestAuthenticator};
/// use kube_authn::chain::anonymous::Anonymous;
///
/// let (req, _) = http::Request::get("/version").body(()).unwrap().into_parts();
/// let ctx = Context::with_audiences(Audiences::from(["api"]));
/// let r = Anonymous::new().authenticate_request(&req, &ctx).into_ready().unwrap().unwrap().unwrap();
/// assert_eq!(r.user.name(), "system:anonymous");
/// assert_eq!(r.user.groups().collect::<Vec<_>>(), ["system:unauthenticated"]);
/// assert_eq!(r.audiences, Audiences::from(["api"]));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Anonymous {
    allowed_paths: HashSet<String>,
    /// Compare the raw path, not the decoded one ([`Anonymous::require_raw_path_match`]).
    raw_path_only: bool,
}

impl Anonymous {
    /// Anonymous for every path.
    ///
    /// ```
    /// let a = kube_authn::chain::anonymous::Anonymous::new();
    /// assert!(a.allowed_paths().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Anonymous only for these exact paths (an empty list means every path, as in k8s).
    ///
    /// ```
    /// let a = kube_authn::chain::anonymous::Anonymous::with_paths(["/livez"]);
    /// assert!(a.allowed_paths().contains("/livez"));
    /// ```
    pub fn with_paths<I, S>(paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allowed_paths: paths.into_iter().map(Into::into).collect(),
            raw_path_only: false,
        }
    }

    /// Lets in only a request whose path is spelled exactly as one of the listed paths, not
    /// percent-decoded first (Kubernetes decodes; see the [module docs](self)): `/%68ealthz`
    /// then no longer matches `/healthz`, so a router that routes on the raw path (axum) never
    /// hands an anonymous request to a fallback or wildcard handler under another spelling of
    /// an allowed path. A request path with any `%` escape is then never anonymous, so a listed
    /// path with a character a client must percent-encode (a space, a non-ASCII letter, `%`)
    /// never matches; the raw mode only ever lets in less than Kubernetes. No effect without
    /// path conditions.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, RequestAuthenticator};
    /// use kube_authn::chain::anonymous::Anonymous;
    ///
    /// let anon = Anonymous::with_paths(["/healthz"]).require_raw_path_match();
    /// let ask = |path: &str| {
    ///     let (req, _) = http::Request::get(path).body(()).unwrap().into_parts();
    ///     anon.authenticate_request(&req, &Context::default()).into_ready().unwrap().unwrap()
    /// };
    /// assert!(ask("/healthz?verbose").is_some());
    /// assert!(ask("/%68ealthz").is_none()); // not mine: the request gets a 401
    /// ```
    pub fn require_raw_path_match(mut self) -> Self {
        self.raw_path_only = true;
        self
    }

    /// The configured path conditions.
    ///
    /// ```
    /// assert!(kube_authn::chain::anonymous::Anonymous::new().allowed_paths().is_empty());
    /// ```
    pub fn allowed_paths(&self) -> &HashSet<String> {
        &self.allowed_paths
    }

    fn path_allowed(&self, raw_path: &str) -> bool {
        if self.allowed_paths.is_empty() {
            return true;
        }
        if self.raw_path_only {
            // Only a path with no escape in it: Kubernetes compares the decoded path, so a
            // listed `/a%2Fb` must not let in the request `/a%2Fb` (Kubernetes reads `/a/b`).
            return !raw_path.contains('%') && self.allowed_paths.contains(raw_path);
        }
        match decode_path(raw_path) {
            Some(path) => self.allowed_paths.contains(path.as_ref()),
            None => false,
        }
    }
}

/// The `anonymous` section of an `AuthenticationConfiguration` file (`--authentication-config`):
/// whether anonymous requests are allowed at all, and on which paths (`conditions[].path`;
/// none: every path). kube-apiserver takes it instead of `--anonymous-auth`, which may then not
/// be set.
///
/// ```
/// use kube_authn::chain::anonymous::AnonymousConfig;
/// let c = AnonymousConfig { enabled: true, paths: vec!["/livez".into()] };
/// assert!(c.authenticator().unwrap().allowed_paths().contains("/livez"));
/// assert!(AnonymousConfig::default().authenticator().is_none()); // enabled: false
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnonymousConfig {
    /// `enabled`.
    pub enabled: bool,
    /// `conditions[].path`, in order.
    pub paths: Vec<String>,
}

impl AnonymousConfig {
    /// The authenticator it configures, or `None` when anonymous requests are disabled.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, RequestAuthenticator};
    /// use kube_authn::chain::anonymous::AnonymousConfig;
    ///
    /// let config = AnonymousConfig { enabled: true, paths: vec!["/livez".into(), "/readyz".into()] };
    /// let anon = config.authenticator().unwrap();
    /// let ask = |path: &str| {
    ///     let (req, _) = http::Request::get(path).body(()).unwrap().into_parts();
    ///     anon.authenticate_request(&req, &Context::default()).into_ready().unwrap().unwrap()
    /// };
    /// assert!(ask("/livez").is_some());
    /// assert!(ask("/api/v1/pods").is_none()); // not mine: the request gets a 401
    ///
    /// let disabled = AnonymousConfig { enabled: false, paths: vec!["/livez".into()] };
    /// assert!(disabled.authenticator().is_none());
    /// ```
    pub fn authenticator(&self) -> Option<Anonymous> {
        self.enabled
            .then(|| Anonymous::with_paths(self.paths.iter().cloned()))
    }
}

impl RequestAuthenticator for Anonymous {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        if !self.path_allowed(req.uri.path()) {
            return AuthFuture::ready(Ok(None));
        }
        let audiences = ctx.audiences().cloned().unwrap_or_default();
        AuthFuture::ready(Ok(Some(
            Response::new(UserInfo::anonymous()).with_audiences(audiences),
        )))
    }

    fn always_ready(&self) -> bool {
        true
    }
}

/// Percent-decodes a request path the way Go's `url.URL.Path` is derived: every `%XX` is
/// decoded (including `%2F`), `+` stays `+`, and an invalid escape is an error (`None`).
/// A decoded path that is not UTF-8 cannot equal a configured path and is also `None`.
pub(crate) fn decode_path(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.contains('%') {
        return Some(Cow::Borrowed(raw));
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = hex(*bytes.get(i + 1)?)?;
            let lo = hex(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authenticator::Audiences;

    fn parts(uri: &str) -> Parts {
        http::Request::get(uri).body(()).unwrap().into_parts().0
    }

    #[tokio::test]
    async fn unrestricted_anonymous_matches_kubernetes() {
        // anonymous_test.go TestAnonymous
        let r = Anonymous::new()
            .authenticate_request(&parts("/"), &Context::default())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r.user.name(), "system:anonymous");
        assert_eq!(
            r.user.groups().collect::<Vec<_>>(),
            ["system:unauthenticated"]
        );
        assert!(r.audiences.is_empty());
    }

    #[tokio::test]
    async fn echoes_request_audiences() {
        let ctx = Context::with_audiences(Audiences::from(["api"]));
        let r = Anonymous::new()
            .authenticate_request(&parts("/"), &ctx)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r.audiences, Audiences::from(["api"]));
    }

    #[tokio::test]
    async fn path_conditions_and_tricks() {
        let anon = Anonymous::with_paths(["/healthz", "/readyz", "/livez"]);
        let cases = [
            ("https://123.123.123.123/healthz", true),
            ("https://123.123.123.123/readyz", true),
            ("https://123.123.123.123/livez", true),
            ("https://123.123.123.123/api", false),
            ("/healthz?verbose=1", true),
            ("/heal%74hz", true),
            ("/%68ealthz", true),
            ("/healthz/", false),
            ("//healthz", false),
            ("/healthz/../api", false),
            ("/api/../healthz", false),
            ("/./healthz", false),
            ("/healthz%2F", false),
            ("/healthz%2f", false),
            ("/HEALTHZ", false),
            ("/healthz%zz", false),
            ("/healthz%", false),
            ("/healthz%2", false),
            ("/%FF", false),
            ("/healthz%00", false),
            ("/healthz;x", false),
            ("/livez+", false),
        ];
        for (uri, want) in cases {
            let got = anon
                .authenticate_request(&parts(uri), &Context::default())
                .await
                .unwrap()
                .is_some();
            assert_eq!(got, want, "{uri}");
        }
    }

    #[tokio::test]
    async fn raw_path_match_lets_in_less_than_kubernetes() {
        // (request path, anonymous by Kubernetes' decoded match, anonymous in raw mode)
        let cases = [
            ("/healthz", true, true),
            ("/%68ealthz", true, false),
            // Kubernetes decodes `/a%2Fb` to `/a/b`, which is not listed.
            ("/a%2Fb", false, false),
            ("/a%252Fb", true, false),
            ("/a/b", false, false),
        ];
        let listed = ["/healthz", "/a%2Fb"];
        for (uri, decoded, raw) in cases {
            for (mode, anon, want) in [
                ("decoded", Anonymous::with_paths(listed), decoded),
                (
                    "raw",
                    Anonymous::with_paths(listed).require_raw_path_match(),
                    raw,
                ),
            ] {
                let got = anon
                    .authenticate_request(&parts(uri), &Context::default())
                    .await
                    .unwrap()
                    .is_some();
                assert_eq!(got, want, "{mode} {uri}");
            }
        }
    }

    #[test]
    fn decode_path_rules() {
        let cases: [(&str, Option<&str>); 6] = [
            ("/a", Some("/a")),
            ("/a%20b", Some("/a b")),
            ("/a+b", Some("/a+b")),
            ("/%E4%BB%8A", Some("/今")),
            ("/%", None),
            ("/%G0", None),
        ];
        for (raw, want) in cases {
            assert_eq!(decode_path(raw).as_deref(), want, "{raw}");
        }
    }
}
