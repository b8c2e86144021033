//! `Authorization: Basic` (RFC 7617; the removed k8s `request/basicauth`), fail-closed parsing.

use std::sync::Arc;

use base64::Engine;
use base64::alphabet::STANDARD;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use http::request::Parts;

use super::{Authorization, ERR_MALFORMED_BASIC, parse_authorization};
use crate::authenticator::{
    AuthFuture, AuthResult, Context, Description, PasswordAuthenticator, RequestAuthenticator,
    Schemes,
};
use crate::error::Error;

/// Go's `base64.StdEncoding` as `Request.BasicAuth` uses it: padding required, non-canonical
/// trailing bits accepted.
const STD: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
        .with_decode_allow_trailing_bits(true),
);

const ERR_INVALID: Error = Error::msg("invalid username/password combination");

/// Takes user name and password from `Authorization: Basic` and asks a password authenticator.
///
/// The credential is base64 (standard alphabet, padded) of `user:password`, split at the
/// **first** colon, so passwords may contain colons. A password authenticator's "not mine"
/// becomes `invalid username/password combination`. Bad base64, a missing colon or non-UTF-8
/// text is an error (Kubernetes ignored such headers; see [`crate::request`]).
///
/// ```
/// use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncPasswordFn};
/// use kube_authn::request::Basic;
/// use kube_authn::user::UserInfo;
///
/// let passwords = SyncPasswordFn::new(|u: &str, p: &str, _: &Context| {
///     Ok((u == "myuser" && aws_lc_rs::constant_time::verify_slices_are_equal(p.as_bytes(), b"mypassword:withcolon").is_ok()).then(|| Response::new(UserInfo::new(u).into())))
/// });
/// let basic = Basic::new(passwords);
/// // base64("myuser:mypassword:withcolon")
/// let (req, _) = http::Request::get("/")
///     .header("authorization", "Basic bXl1c2VyOm15cGFzc3dvcmQ6d2l0aGNvbG9u")
///     .body(()).unwrap().into_parts();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let r = basic.authenticate_request(&req, &Context::default()).await.unwrap().unwrap();
/// assert_eq!(r.user.name(), "myuser");
/// # });
/// ```
#[derive(Clone)]
pub struct Basic<P: ?Sized = dyn PasswordAuthenticator> {
    passwords: Arc<P>,
}

impl<P: PasswordAuthenticator> Basic<P> {
    /// Wraps a password authenticator.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, RequestAuthenticator, SyncPasswordFn};
    /// use kube_authn::request::Basic;
    /// let b = Basic::new(SyncPasswordFn::new(|_: &str, _: &str, _: &_| Ok(None)));
    /// // base64("alice:pw"); the password authenticator's "not mine" becomes an error.
    /// let (req, _) = http::Request::get("/").header("authorization", "Basic YWxpY2U6cHc=")
    ///     .body(()).unwrap().into_parts();
    /// let err = b.authenticate_request(&req, &Context::default()).into_ready().unwrap().unwrap_err();
    /// assert_eq!(err.to_string(), "invalid username/password combination");
    /// ```
    pub fn new(passwords: P) -> Self {
        Self {
            passwords: Arc::new(passwords),
        }
    }
}

impl<P: PasswordAuthenticator + ?Sized> Basic<P> {
    /// Wraps a shared password authenticator.
    ///
    /// ```
    /// use kube_authn::authenticator::{Context, PasswordAuthenticator, RequestAuthenticator, Response, SyncPasswordFn};
    /// use kube_authn::request::Basic;
    /// use kube_authn::user::UserInfo;
    /// use std::sync::Arc;
    /// let p: Arc<dyn PasswordAuthenticator> = Arc::new(SyncPasswordFn::new(|u: &str, p: &str, _: &_| {
    ///     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(p.as_bytes(), b"pw").is_ok()).then(|| Response::new(UserInfo::new(u).into())))
    /// }));
    /// let b = Basic::from_arc(p.clone());
    /// assert_eq!(Arc::strong_count(&p), 2); // shared, not copied
    /// // base64("alice:pw")
    /// let (req, _) = http::Request::get("/").header("authorization", "Basic YWxpY2U6cHc=")
    ///     .body(()).unwrap().into_parts();
    /// let r = b.authenticate_request(&req, &Context::default()).into_ready().unwrap().unwrap().unwrap();
    /// assert_eq!(r.user.name(), "alice");
    /// ```
    pub fn from_arc(passwords: Arc<P>) -> Self {
        Self { passwords }
    }
}

/// A decoded `user:password`, zeroed when dropped (best effort, like the token and password
/// files' buffers: the base64 decoder writes it into one allocation, which this owns; the
/// header value itself belongs to the request).
struct Credential {
    text: String,
    colon: usize,
}

impl Credential {
    /// Decodes `base64(user:password)`.
    fn decode(encoded: &str) -> Result<Self, Error> {
        let bytes = STD.decode(encoded).map_err(|_| ERR_MALFORMED_BASIC)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            crate::csv::wipe(&mut e.into_bytes());
            ERR_MALFORMED_BASIC
        })?;
        let colon = text.find(':');
        let mut credential = Self { text, colon: 0 };
        credential.colon = colon.ok_or(ERR_MALFORMED_BASIC)?;
        Ok(credential)
    }

    fn user(&self) -> &str {
        &self.text[..self.colon]
    }

    fn password(&self) -> &str {
        &self.text[self.colon + 1..]
    }

    /// Overwrites the whole allocation with zeros (left as that many NUL characters, valid
    /// UTF-8), without `unsafe`: the `String` gives its bytes up and takes them back.
    fn wipe(&mut self) {
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        crate::csv::zero_fill(&mut bytes);
        self.text = String::from_utf8(bytes).unwrap_or_default();
        self.colon = 0;
    }
}

impl Drop for Credential {
    fn drop(&mut self) {
        self.wipe();
    }
}

/// The syntax check of a `Basic` credential for the authenticators that do not take one
/// ([`Bearer`](super::Bearer), and the [`CredentialSyntax`](super::CredentialSyntax) of a
/// chain without token authenticators): bad base64, no `:` or text that is not UTF-8 is
/// [`ERR_MALFORMED_BASIC`] in every chain, not only where basic auth is configured. The
/// credential is decoded only to check it, and wiped.
pub(crate) fn check_syntax(encoded: &str) -> Result<(), Error> {
    Credential::decode(encoded).map(drop)
}

impl<P: PasswordAuthenticator + ?Sized> RequestAuthenticator for Basic<P> {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        let encoded = match parse_authorization(&req.headers) {
            Ok(Authorization::Basic(encoded)) => encoded,
            Ok(_) => return AuthFuture::ready(Ok(None)),
            Err(e) => return AuthFuture::ready(Err(e)),
        };
        // Zeroed when dropped: at the end of this call, or of the future that owns it.
        let credential = match Credential::decode(encoded) {
            Ok(decoded) => decoded,
            Err(e) => return AuthFuture::ready(Err(e)),
        };
        let invalid_if_unknown = |result: AuthResult| match result {
            Ok(None) => Err(ERR_INVALID),
            other => other,
        };
        if self.passwords.always_ready() {
            return AuthFuture::ready(invalid_if_unknown(
                self.passwords
                    .authenticate_password(credential.user(), credential.password(), ctx)
                    .expect_ready(),
            ));
        }
        // The decoded credential is owned, so a future that borrows it must own it too.
        // Basic auth is legacy (removed from Kubernetes in 1.19); the small allocations here
        // are accepted, and measured in benches/basic_auth.rs.
        let passwords = &self.passwords;
        AuthFuture::new(async move {
            let (user, password) = (credential.user(), credential.password());
            invalid_if_unknown(passwords.authenticate_password(user, password, ctx).await)
        })
    }

    fn describe(&self, description: &mut Description) {
        description.schemes |= Schemes::BASIC;
    }

    fn always_ready(&self) -> bool {
        self.passwords.always_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authenticator::{AuthResult, Response, SyncPasswordFn};
    use crate::user::UserInfo;
    use base64::engine::general_purpose::STANDARD as B64;
    use std::sync::Mutex;

    /// The decoded credential splits at the first colon and is zeroed over its whole
    /// allocation when wiped (as on drop); refused inputs leave nothing behind to wipe.
    #[test]
    fn decoded_credential_is_split_and_wiped() {
        for (name, decoded, want) in [
            ("simple", &b"alice:pw"[..], Ok(("alice", "pw"))),
            ("colon in password", b"u:p:w", Ok(("u", "p:w"))),
            ("empty both", b":", Ok(("", ""))),
            ("no colon", b"alice", Err("malformed basic credentials")),
            ("not utf-8", b"u:\xff", Err("malformed basic credentials")),
        ] {
            let mut c = match Credential::decode(&B64.encode(decoded)) {
                Ok(c) => c,
                Err(e) => {
                    assert_eq!(want.err(), Some(e.to_string().as_str()), "{name}");
                    continue;
                }
            };
            assert_eq!(Ok((c.user(), c.password())), want, "{name}");
            c.wipe();
            assert!(
                c.text.len() >= decoded.len(),
                "{name}: the whole allocation"
            );
            assert!(c.text.bytes().all(|b| b == 0), "{name}: zeroed");
        }
    }

    fn basic_header(user: &str, password: &str) -> String {
        format!("Basic {}", B64.encode(format!("{user}:{password}")))
    }

    #[tokio::test]
    async fn basic_auth_vectors() {
        // basicauth_test.go TestBasicAuth, plus this crate's fail-closed rows.
        type Case = (
            &'static str,
            Option<String>,
            fn() -> AuthResult,
            &'static str,
            Option<(&'static str, &'static str)>,
        );
        let not_ok: fn() -> AuthResult = || Ok(None);
        let ok: fn() -> AuthResult =
            || Ok(Some(Response::new(Arc::new(UserInfo::new("returneduser")))));
        let cases: Vec<Case> = vec![
            ("no auth", None, ok, "none", None),
            (
                "empty password",
                Some(basic_header("user_with_empty_password", "")),
                not_ok,
                "err invalid username/password combination",
                Some(("user_with_empty_password", "")),
            ),
            (
                "valid header",
                Some(basic_header("myuser", "mypassword:withcolon")),
                not_ok,
                "err invalid username/password combination",
                Some(("myuser", "mypassword:withcolon")),
            ),
            (
                "returned user",
                Some(basic_header("myuser", "mypw")),
                ok,
                "ok returneduser",
                Some(("myuser", "mypw")),
            ),
            (
                "returned error",
                Some(basic_header("myuser", "mypw")),
                || Err(Error::msg("auth error")),
                "err auth error",
                Some(("myuser", "mypw")),
            ),
            (
                "empty user",
                Some(basic_header("", "pw")),
                ok,
                "ok returneduser",
                Some(("", "pw")),
            ),
            (
                "bearer is not ours",
                Some("Bearer x".into()),
                ok,
                "none",
                None,
            ),
            (
                "bad base64 (fail closed)",
                Some("Basic !!!!".into()),
                ok,
                "err malformed basic credentials",
                None,
            ),
            (
                "missing padding (fail closed)",
                Some("Basic dXNlcjpwYXNzeA".into()),
                ok,
                "err malformed basic credentials",
                None,
            ),
            (
                "url-safe alphabet (fail closed)",
                Some("Basic _-__".into()),
                ok,
                "err malformed basic credentials",
                None,
            ),
            (
                "no colon (fail closed)",
                Some(format!("Basic {}", B64.encode("nocolon"))),
                ok,
                "err malformed basic credentials",
                None,
            ),
            (
                "not utf-8 (fail closed)",
                Some(format!("Basic {}", B64.encode(b"u:\xff"))),
                ok,
                "err malformed basic credentials",
                None,
            ),
        ];
        for (name, header, answer, want, want_seen) in cases {
            let seen = Arc::new(Mutex::new(None));
            let s = seen.clone();
            let basic = Basic::new(SyncPasswordFn::new(move |u: &str, p: &str, _: &Context| {
                *s.lock().unwrap() = Some((u.to_owned(), p.to_owned()));
                answer()
            }));
            let mut b = http::Request::get("/");
            if let Some(h) = &header {
                b = b.header("authorization", h);
            }
            let parts = b.body(()).unwrap().into_parts().0;
            let got = match basic
                .authenticate_request(&parts, &Context::default())
                .await
            {
                Ok(Some(r)) => format!("ok {}", r.user.name()),
                Ok(None) => "none".into(),
                Err(e) => format!("err {e}"),
            };
            assert_eq!(got, want, "case {name}");
            let seen = seen.lock().unwrap().clone();
            assert_eq!(
                seen,
                want_seen.map(|(u, p)| (u.to_owned(), p.to_owned())),
                "case {name}: called with"
            );
        }
    }
}
