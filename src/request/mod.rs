//! Request authenticators that take a credential out of the request and hand it to a token or
//! password authenticator: [`Bearer`] (`Authorization: Bearer`), [`WebSocketProtocol`] (the
//! `base64url.bearer.authorization.k8s.io.` subprotocol) and [`Basic`] (`Authorization: Basic`).
//!
//! # Parsing `Authorization`, and where we differ from Kubernetes
//!
//! Kubernetes trims the first `Authorization` value, splits it on single spaces and treats
//! anything it does not understand as "no credential", so with anonymous enabled a mangled
//! header becomes an anonymous request. Here a header that is present but malformed is an
//! error (a 401), listed in `docs/compatibility.md`:
//!
//! | header | Kubernetes | kube-authn |
//! |---|---|---|
//! | (none), or an empty value | no opinion | no opinion |
//! | `Bearer tok`, `bearer tok`, `BEARER tok` | token `tok` | token `tok` |
//! | `Bearer tok extra` | token `tok` | token `tok` |
//! | `Bearer  tok` (two spaces) | no opinion + warning | **error** |
//! | `Bearer\ttok`, `Bearer` alone, `Bearer ` | no opinion | **error** |
//! | two `Authorization` headers | first one used | **error** |
//! | bytes outside visible ASCII | passed on as bytes | **error** |
//! | token longer than [`MAX_TOKEN_LEN`] | passed on | **error** |
//! | `Basic` with bad base64, no `:`, non-UTF-8 | no opinion | **error** |
//! | another scheme (`Digest …`, `Bearer: x`) | no opinion | no opinion |
//!
//! The syntax checks belong to the header, not to one authenticator: a malformed `Basic`
//! header (`Basic`, `Basic  x`, `Basic a b`, bad base64, no `:`, not UTF-8) is an error for
//! the bearer authenticator too, so it is a 401 even on a server without basic auth. A
//! well-formed credential of another scheme stays "not mine".
//!
//! ```
//! use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncPasswordFn, SyncTokenFn};
//! use kube_authn::request::{Basic, Bearer};
//! use kube_authn::user::UserInfo;
//!
//! let bearer = Bearer::new(SyncTokenFn::new(|t: &str, _: &Context| {
//!     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"s3cret").is_ok()).then(|| Response::new(UserInfo::new("jane").into())))
//! }));
//! let basic = Basic::new(SyncPasswordFn::new(|u: &str, p: &str, _: &Context| {
//!     Ok((u == "admin" && aws_lc_rs::constant_time::verify_slices_are_equal(p.as_bytes(), b"pw").is_ok()).then(|| Response::new(UserInfo::new("admin").into())))
//! }));
//! let head = |value: &str| {
//!     let req = http::Request::get("/").header("authorization", value).body(()).unwrap();
//!     req.into_parts().0
//! };
//! let ctx = Context::default();
//! let ask = |auth: &dyn RequestAuthenticator, value| auth.authenticate_request(&head(value), &ctx).into_ready().unwrap();
//!
//! assert_eq!(ask(&bearer, "bearer s3cret").unwrap().unwrap().user.name(), "jane");
//! assert_eq!(ask(&basic, "Basic YWRtaW46cHc=").unwrap().unwrap().user.name(), "admin"); // admin:pw
//! // Another scheme, well formed: not mine.
//! assert!(ask(&bearer, "Digest username=\"x\"").unwrap().is_none());
//! // Malformed: an error where Kubernetes would fall through to anonymous.
//! assert!(ask(&bearer, "Bearer  s3cret").is_err()); // two spaces
//! assert!(ask(&bearer, "Basic").is_err()); // a broken Basic header fails the bearer check too
//! assert!(ask(&bearer, "Basic YWRtaW4=").is_err()); // "admin": no colon
//! assert!(ask(&bearer, "Basic YWRtaW46cHc=").unwrap().is_none()); // well formed: not mine
//! ```

mod basic;
mod bearer;
mod front_proxy;
mod websocket;

pub use basic::Basic;
pub use bearer::Bearer;
pub(crate) use front_proxy::{BuildError, CA_OVERLAP};
pub use front_proxy::{
    ExtensionApiserverAuthentication, FrontProxy, MAX_CONFIGMAP_BYTES, MAX_EXTRA_VALUES,
    MAX_GROUPS, RequestHeaderConfig, decode_extra_key,
};
pub use websocket::{PROTOCOL_PREFIX, WebSocketProtocol, remove_token_protocol};

use http::HeaderMap;
use http::header::AUTHORIZATION;

use crate::error::{Error, ErrorKind};

/// The longest bearer token (or decoded WebSocket token, or Basic credential) accepted:
/// 64 KiB. Longer credentials are rejected before any authenticator sees them, so the cost of
/// hashing or parsing an attacker's token is bounded. Real tokens (service-account JWTs, OIDC
/// ID tokens with large group claims) stay well under 16 KiB.
///
/// ```
/// use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
/// use kube_authn::request::{Bearer, MAX_TOKEN_LEN};
/// use kube_authn::user::UserInfo;
/// assert_eq!(MAX_TOKEN_LEN, 64 * 1024);
///
/// // Accepts any token and names the user after its length.
/// let bearer = Bearer::new(SyncTokenFn::new(|t: &str, _: &Context| {
///     Ok(Some(Response::new(UserInfo::new(format!("len-{}", t.len())).into())))
/// }));
/// let ask = |len: usize| {
///     let value = format!("Bearer {}", "a".repeat(len));
///     let (req, _) = http::Request::get("/").header("authorization", value).body(()).unwrap().into_parts();
///     bearer.authenticate_request(&req, &Context::default()).into_ready().unwrap()
/// };
/// assert_eq!(ask(MAX_TOKEN_LEN).unwrap().unwrap().user.name(), "len-65536");
/// assert_eq!(ask(MAX_TOKEN_LEN + 1).unwrap_err().to_string(), "credential exceeds the maximum length");
/// ```
pub const MAX_TOKEN_LEN: usize = 64 * 1024;

pub(crate) const ERR_MULTIPLE: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "multiple Authorization headers",
);
pub(crate) const ERR_NOT_ASCII: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "Authorization header contains bytes outside visible ASCII",
);
pub(crate) const ERR_MALFORMED_BEARER: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "malformed bearer token: expected \"Bearer <token>\" with a single space",
);
pub(crate) const ERR_MALFORMED_BASIC: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "malformed basic credentials",
);
pub(crate) const ERR_TOO_LONG: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "credential exceeds the maximum length",
);

/// The credential in the `Authorization` header, as this crate parses it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Authorization<'a> {
    /// No header, or an empty one.
    Absent,
    /// `Bearer <token>`.
    Bearer(&'a str),
    /// `Basic <base64>` (still encoded).
    Basic(&'a str),
    /// Some other scheme: not ours.
    Other,
}

/// The syntax checks of [`Bearer`], [`Basic`] and [`WebSocketProtocol`] without a credential
/// check: a malformed `Authorization` header or token subprotocol is their error; anything
/// else (no credential, or a well-formed one) is "not mine". [`crate::chain::ChainBuilder`]
/// puts it in a chain that has no token authenticator, so that a malformed credential is a
/// 401 there too instead of an anonymous request (Kubernetes has no such check: without a
/// token authenticator nothing reads the header).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CredentialSyntax;

impl crate::authenticator::RequestAuthenticator for CredentialSyntax {
    fn authenticate_request<'a>(
        &'a self,
        req: &'a http::request::Parts,
        _: &'a crate::authenticator::Context,
    ) -> crate::authenticator::AuthFuture<'a> {
        let checked = parse_authorization(&req.headers)
            .and_then(|auth| match auth {
                Authorization::Basic(encoded) => basic::check_syntax(encoded),
                _ => Ok(()),
            })
            .and_then(|()| websocket::check_syntax(&req.headers))
            .map(|()| None);
        crate::authenticator::AuthFuture::ready(checked)
    }

    fn always_ready(&self) -> bool {
        true
    }
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Parses the `Authorization` header with the rules in the [module docs](self).
///
/// This runs on every request: it never allocates, checks ASCII a machine word at a time, and
/// scans the token once for its end and for tabs.
pub(crate) fn parse_authorization(headers: &HeaderMap) -> Result<Authorization<'_>, Error> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(Authorization::Absent);
    };
    if values.next().is_some() {
        return Err(ERR_MULTIPLE);
    }
    // `HeaderValue` already excludes control bytes other than tab, so "visible ASCII" is
    // "ASCII" here; `is_ascii` checks a machine word at a time.
    let bytes = trim_spaces(value.as_bytes());
    if !bytes.is_ascii() {
        return Err(ERR_NOT_ASCII);
    }
    if bytes.is_empty() {
        return Ok(Authorization::Absent);
    }
    // ASCII, so valid UTF-8 and every byte offset is a character boundary.
    let text = std::str::from_utf8(bytes).map_err(|_| ERR_NOT_ASCII)?;
    // The common case first: `Bearer ` in any case, then a token that does not start with a
    // space or tab (the same rules as below, without scanning for the scheme's end).
    if let [b0, b1, b2, b3, b4, b5, b' ', first, ..] = bytes
        && [*b0, *b1, *b2, *b3, *b4, *b5].eq_ignore_ascii_case(b"bearer")
        && !is_space(*first)
    {
        return bearer_token(bytes, text, 7);
    }
    let scheme_end = bytes
        .iter()
        .position(|&b| is_space(b))
        .unwrap_or(bytes.len());
    let scheme = &bytes[..scheme_end];
    // Everything after the scheme must start with exactly one space; the credential follows.
    let credential_start = scheme_end + 1;
    let single_space = bytes.get(scheme_end) == Some(&b' ')
        && bytes.get(credential_start).is_some_and(|&b| !is_space(b));
    if scheme.eq_ignore_ascii_case(b"bearer") {
        if !single_space {
            return Err(ERR_MALFORMED_BEARER);
        }
        bearer_token(bytes, text, credential_start)
    } else if scheme.eq_ignore_ascii_case(b"basic") {
        if !single_space {
            return Err(ERR_MALFORMED_BASIC);
        }
        let encoded = &bytes[credential_start..];
        if encoded.len() > MAX_TOKEN_LEN {
            return Err(ERR_TOO_LONG);
        }
        if encoded.iter().copied().any(is_space) {
            return Err(ERR_MALFORMED_BASIC);
        }
        Ok(Authorization::Basic(&text[credential_start..]))
    } else {
        Ok(Authorization::Other)
    }
}

/// The bearer token starting at `start` (after `Bearer` and its single space): it runs to the
/// next space (k8s ignores what follows); a tab in it is malformed. `text` is `bytes` as `str`.
fn bearer_token<'a>(bytes: &[u8], text: &'a str, start: usize) -> Result<Authorization<'a>, Error> {
    let rest = bytes.get(start..).unwrap_or_default();
    let len = first_space(rest);
    if rest.get(len) == Some(&b'\t') {
        return Err(ERR_MALFORMED_BEARER);
    }
    if len > MAX_TOKEN_LEN {
        return Err(ERR_TOO_LONG);
    }
    text.get(start..start + len)
        .map(Authorization::Bearer)
        .ok_or(ERR_MALFORMED_BEARER)
}

/// `bytes` without leading and trailing spaces and tabs.
fn trim_spaces(mut bytes: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = bytes {
        if !is_space(*first) {
            break;
        }
        bytes = rest;
    }
    while let [rest @ .., last] = bytes {
        if !is_space(*last) {
            break;
        }
        bytes = rest;
    }
    bytes
}

/// Index of the first space or tab in `bytes` (or its length), eight bytes at a time: a byte
/// equal to `c` is a zero byte of `word ^ c…c`, found with the classic has-zero-byte trick
/// (exact for the lowest match, which is the first byte in little-endian order).
fn first_space(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    const TABS: u64 = u64::from_ne_bytes([b'\t'; 8]);
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let hits = zero(word ^ SPACES) | zero(word ^ TABS);
        if hits != 0 {
            return offset + (hits.trailing_zeros() / 8) as usize;
        }
        offset += 8;
    }
    offset
        + chunks
            .remainder()
            .iter()
            .position(|&b| is_space(b))
            .unwrap_or(chunks.remainder().len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn parse(values: &[&[u8]]) -> Result<Authorization<'static>, String> {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(AUTHORIZATION, HeaderValue::from_bytes(v).unwrap());
        }
        let headers: &'static HeaderMap = Box::leak(Box::new(headers));
        parse_authorization(headers).map_err(|e| e.to_string())
    }

    #[test]
    fn authorization_parsing_table() {
        use Authorization::*;
        let long = format!("Bearer {}", "a".repeat(MAX_TOKEN_LEN + 1));
        let at_limit = format!("Bearer {}", "a".repeat(MAX_TOKEN_LEN));
        type Case<'a> = (&'a str, Vec<&'a [u8]>, Result<Authorization<'a>, &'a str>);
        let cases: Vec<Case<'_>> = vec![
            ("no header", vec![], Ok(Absent)),
            ("empty header", vec![b""], Ok(Absent)),
            ("blank header", vec![b"   "], Ok(Absent)),
            ("bearer", vec![b"Bearer token"], Ok(Bearer("token"))),
            (
                "lower-case scheme",
                vec![b"bearer token"],
                Ok(Bearer("token")),
            ),
            (
                "upper-case scheme",
                vec![b"BEARER token"],
                Ok(Bearer("token")),
            ),
            (
                "surrounding spaces trimmed",
                vec![b"  Bearer token  "],
                Ok(Bearer("token")),
            ),
            (
                "value after token ignored (k8s)",
                vec![b"Bearer token a b c"],
                Ok(Bearer("token")),
            ),
            (
                "value after token, several spaces (k8s)",
                vec![b"Bearer token   a"],
                Ok(Bearer("token")),
            ),
            (
                "two spaces",
                vec![b"Bearer  token"],
                Err("malformed bearer token: expected \"Bearer <token>\" with a single space"),
            ),
            (
                "tab separator",
                vec![b"Bearer\ttoken"],
                Err("malformed bearer token: expected \"Bearer <token>\" with a single space"),
            ),
            (
                "tab in token",
                vec![b"Bearer tok\ten"],
                Err("malformed bearer token: expected \"Bearer <token>\" with a single space"),
            ),
            (
                "scheme alone",
                vec![b"Bearer"],
                Err("malformed bearer token: expected \"Bearer <token>\" with a single space"),
            ),
            (
                "scheme and space",
                vec![b"Bearer "],
                Err("malformed bearer token: expected \"Bearer <token>\" with a single space"),
            ),
            (
                "bearer colon is another scheme",
                vec![b"Bearer: token"],
                Ok(Other),
            ),
            ("bear is another scheme", vec![b"bear token"], Ok(Other)),
            ("digest", vec![b"Digest username=x"], Ok(Other)),
            (
                "basic",
                vec![b"Basic dXNlcjpwYXNz"],
                Ok(Basic("dXNlcjpwYXNz")),
            ),
            (
                "basic lower-case",
                vec![b"basic dXNlcjpwYXNz"],
                Ok(Basic("dXNlcjpwYXNz")),
            ),
            (
                "basic two spaces",
                vec![b"Basic  dXNlcjpwYXNz"],
                Err("malformed basic credentials"),
            ),
            (
                "basic empty",
                vec![b"Basic"],
                Err("malformed basic credentials"),
            ),
            (
                "basic trailing",
                vec![b"Basic dXNl cjpwYXNz"],
                Err("malformed basic credentials"),
            ),
            (
                "two headers",
                vec![b"Bearer a", b"Bearer b"],
                Err("multiple Authorization headers"),
            ),
            (
                "two headers, one empty",
                vec![b"", b"Bearer b"],
                Err("multiple Authorization headers"),
            ),
            (
                "obs-text",
                vec![b"Bearer tok\xffen"],
                Err("Authorization header contains bytes outside visible ASCII"),
            ),
            (
                "utf-8 bytes",
                vec!["Bearer tökén".as_bytes()],
                Err("Authorization header contains bytes outside visible ASCII"),
            ),
            (
                "token at the limit",
                vec![at_limit.as_bytes()],
                Ok(Bearer(&at_limit[7..])),
            ),
            (
                "token over the limit",
                vec![long.as_bytes()],
                Err("credential exceeds the maximum length"),
            ),
        ];
        for (name, values, want) in cases {
            let got = parse(&values);
            assert_eq!(got, want.map_err(str::to_owned), "case {name}");
        }
    }

    #[test]
    fn dots_token_is_bounded() {
        let token = format!("Bearer {}", ".".repeat(100_000));
        assert_eq!(
            parse(&[token.as_bytes()]),
            Err("credential exceeds the maximum length".into())
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn headers_with(value: &[u8]) -> Option<HeaderMap> {
            let value = HeaderValue::from_bytes(value).ok()?;
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, value);
            Some(headers)
        }

        /// Visible ASCII without space: what a well-formed token68/opaque token looks like.
        fn token() -> impl Strategy<Value = String> {
            proptest::string::string_regex("[!-~]{1,200}").unwrap()
        }

        proptest! {
            #[test]
            fn never_panics_and_bearer_tokens_are_clean(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
                if let Some(headers) = headers_with(&bytes)
                    && let Ok(Authorization::Bearer(token)) = parse_authorization(&headers) {
                        prop_assert!(!token.is_empty());
                        prop_assert!(!token.contains(' ') && !token.contains('\t'));
                        prop_assert!(token.bytes().all(|b| (b'!'..=b'~').contains(&b)));
                        let haystack = String::from_utf8_lossy(&bytes);
                        prop_assert!(haystack.contains(token));
                    }
            }

            #[test]
            fn any_scheme_case_with_one_space_yields_the_token(t in token(), mask in any::<u8>(), trailing in "( [a-z]{1,5}){0,2}") {
                let scheme: String = "bearer".chars().enumerate()
                    .map(|(i, c)| if mask & (1 << i) != 0 { c.to_ascii_uppercase() } else { c })
                    .collect();
                let value = format!("{scheme} {t}{trailing}");
                let headers = headers_with(value.as_bytes()).unwrap();
                prop_assert_eq!(parse_authorization(&headers).map_err(|e| e.to_string()), Ok(Authorization::Bearer(t.as_str())));
            }

            #[test]
            fn extra_whitespace_before_the_token_fails_closed(t in token(), sep in "[ \t]{2,4}|\t") {
                let value = format!("Bearer{sep}{t}");
                let headers = headers_with(value.as_bytes()).unwrap();
                prop_assert_eq!(parse_authorization(&headers).map_err(|e| e.to_string()), Err(ERR_MALFORMED_BEARER.to_string()));
            }

            #[test]
            fn first_space_matches_a_plain_scan(bytes in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'\t'), 0u8..=255], 0..80)) {
                let want = bytes.iter().position(|&b| b == b' ' || b == b'\t').unwrap_or(bytes.len());
                prop_assert_eq!(first_space(&bytes), want);
            }

            #[test]
            fn basic_credentials_are_kept_encoded(t in "[A-Za-z0-9+/]{1,100}={0,2}") {
                let value = format!("Basic {t}");
                let headers = headers_with(value.as_bytes()).unwrap();
                prop_assert_eq!(parse_authorization(&headers).map_err(|e| e.to_string()), Ok(Authorization::Basic(t.as_str())));
            }
        }
    }
}
