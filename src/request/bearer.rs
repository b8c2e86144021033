//! `Authorization: Bearer <token>` (k8s `request/bearertoken`), fail-closed parsing.

use std::sync::Arc;

use http::request::Parts;

use super::{Authorization, parse_authorization};
use crate::authenticator::{
    AuthFuture, AuthResult, Context, Description, RequestAuthenticator, Schemes, TokenAuthenticator,
};
use crate::error::Error;

/// Takes the bearer token from `Authorization` and asks a token authenticator.
///
/// * no `Authorization`, or another scheme (a well-formed `Basic` too): not mine;
/// * a malformed header (see [`crate::request`]), a malformed `Basic` one included: an error;
/// * the token authenticator's answer, where "not mine" becomes `invalid bearer token`
///   (so a token nobody accepts is a 401 even with anonymous enabled, as in Kubernetes).
///
/// The middleware removes `Authorization` after any successful authentication.
///
/// ```
/// use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
/// use kube_authn::request::Bearer;
/// use kube_authn::user::UserInfo;
///
/// let tokens = SyncTokenFn::new(|t: &str, _: &Context| {
///     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"good").is_ok()).then(|| Response::new(UserInfo::new("alice").into())))
/// });
/// let bearer = Bearer::new(tokens);
/// let (req, _) = http::Request::get("/").header("authorization", "Bearer bad").body(()).unwrap().into_parts();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let err = bearer.authenticate_request(&req, &Context::default()).await.unwrap_err();
/// assert_eq!(err.to_string(), "invalid bearer token");
/// # });
/// ```
#[derive(Clone)]
pub struct Bearer<T: ?Sized = dyn TokenAuthenticator> {
    tokens: Arc<T>,
}

impl<T: TokenAuthenticator> Bearer<T> {
    /// Wraps a token authenticator.
    ///
    /// ```
    /// use kube_authn::{authenticator::SyncTokenFn, request::Bearer};
    /// let b = Bearer::new(SyncTokenFn::new(|_: &str, _: &_| Ok(None)));
    /// ```
    pub fn new(tokens: T) -> Self {
        Self {
            tokens: Arc::new(tokens),
        }
    }
}

impl<T: TokenAuthenticator + ?Sized> Bearer<T> {
    /// Wraps a shared token authenticator (for example the token union that the bearer and
    /// WebSocket authenticators share).
    ///
    /// ```
    /// use kube_authn::{authenticator::{SyncTokenFn, TokenAuthenticator}, request::Bearer};
    /// use std::sync::Arc;
    /// let shared: Arc<dyn TokenAuthenticator> = Arc::new(SyncTokenFn::new(|_: &str, _: &_| Ok(None)));
    /// let b = Bearer::from_arc(shared);
    /// ```
    pub fn from_arc(tokens: Arc<T>) -> Self {
        Self { tokens }
    }
}

/// Turns a token authenticator's "not mine" into `invalid bearer token`.
pub(crate) fn claim_token(result: AuthResult) -> AuthResult {
    match result {
        Ok(None) => Err(Error::invalid_bearer_token()),
        other => other,
    }
}

impl<T: TokenAuthenticator + ?Sized> RequestAuthenticator for Bearer<T> {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        match parse_authorization(&req.headers) {
            Ok(Authorization::Bearer(token)) => {
                self.tokens.authenticate_token(token, ctx).map(claim_token)
            }
            // A malformed `Basic` credential is a 401 here too (module docs).
            Ok(Authorization::Basic(encoded)) => {
                AuthFuture::ready(super::basic::check_syntax(encoded).map(|()| None))
            }
            Ok(_) => AuthFuture::ready(Ok(None)),
            Err(e) => AuthFuture::ready(Err(e)),
        }
    }

    fn describe(&self, description: &mut Description) {
        description.schemes |= Schemes::BEARER;
    }

    fn always_ready(&self) -> bool {
        self.tokens.always_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authenticator::{Response, SyncTokenFn};
    use crate::user::UserInfo;
    use std::sync::Mutex;

    /// A token authenticator that records the tokens it saw and answers `answer`.
    fn recording(answer: fn() -> AuthResult) -> (Arc<Mutex<Vec<String>>>, impl TokenAuthenticator) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let auth = SyncTokenFn::new(move |t: &str, _: &Context| {
            s.lock().unwrap().push(t.to_owned());
            answer()
        });
        (seen, auth)
    }

    fn ok() -> AuthResult {
        Ok(Some(Response::new(Arc::new(UserInfo::new("myuser")))))
    }

    fn request(values: &[&str]) -> Parts {
        let mut b = http::Request::get("/");
        for v in values {
            b = b.header("authorization", *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[tokio::test]
    async fn bearer_vectors() {
        // bearertoken_test.go, with this crate's fail-closed rows marked.
        type Case = (
            &'static str,
            &'static [&'static str],
            fn() -> AuthResult,
            &'static str,
            &'static [&'static str],
        );
        let cases: &[Case] = &[
            (
                "TestAuthenticateRequest",
                &["Bearer token"],
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "IncludingValueAfterToken a",
                &["Bearer token a"],
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "IncludingValueAfterToken abc",
                &["Bearer token a b c"],
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "IncludingValueAfterToken spaces",
                &["Bearer token   a"],
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "TokenInvalid",
                &["Bearer token"],
                || Ok(None),
                "err invalid bearer token",
                &["token"],
            ),
            (
                "TokenInvalidCustomError",
                &["Bearer token"],
                || Err(Error::msg("custom")),
                "err custom",
                &["token"],
            ),
            ("BadValue no header", &[], ok, "none", &[]),
            ("BadValue bear", &["bear token"], ok, "none", &[]),
            ("BadValue Bearer colon", &["Bearer: token"], ok, "none", &[]),
            (
                "non-bearer header",
                &["Basic dXNlcjpwYXNz"],
                ok,
                "none",
                &[],
            ),
            // k8s: no opinion; here a Basic credential Go cannot parse is refused (docs/compatibility.md).
            (
                "malformed basic header (fail closed)",
                &["Basic 123"],
                ok,
                "err malformed basic credentials",
                &[],
            ),
            ("empty header", &[""], ok, "none", &[]),
            // k8s: no opinion (so anonymous); here: an error (docs/compatibility.md).
            (
                "BadValue Bearer alone (fail closed)",
                &["Bearer"],
                ok,
                "err malformed bearer token: expected \"Bearer <token>\" with a single space",
                &[],
            ),
            (
                "empty bearer token (fail closed)",
                &["Bearer "],
                ok,
                "err malformed bearer token: expected \"Bearer <token>\" with a single space",
                &[],
            ),
            (
                "two spaces (fail closed)",
                &["Bearer  token"],
                ok,
                "err malformed bearer token: expected \"Bearer <token>\" with a single space",
                &[],
            ),
            (
                "two headers (fail closed)",
                &["Bearer token", "Bearer other"],
                ok,
                "err multiple Authorization headers",
                &[],
            ),
            // Found by fuzzing (input `bASIC`): a malformed header is malformed for every reader.
            (
                "malformed Basic is an error for Bearer too",
                &["bASIC"],
                ok,
                "err malformed basic credentials",
                &[],
            ),
            (
                "well-formed Basic stays not mine",
                &["Basic dXNlcjpwYXNz"],
                ok,
                "none",
                &[],
            ),
        ];
        for (name, headers, answer, want, want_seen) in cases {
            let (seen, tokens) = recording(*answer);
            let bearer = Bearer::new(tokens);
            let got = match bearer
                .authenticate_request(&request(headers), &Context::default())
                .await
            {
                Ok(Some(r)) => format!("ok {}", r.user.name()),
                Ok(None) => "none".into(),
                Err(e) => format!("err {e}"),
            };
            assert_eq!(got, *want, "case {name}");
            assert_eq!(
                *seen.lock().unwrap(),
                *want_seen,
                "case {name}: tokens seen"
            );
        }
    }

    #[test]
    fn describes_bearer_scheme() {
        let mut d = Description::default();
        Bearer::new(SyncTokenFn::new(|_: &str, _: &Context| Ok(None))).describe(&mut d);
        assert!(d.schemes.bearer() && !d.schemes.basic());
    }
}
