//! The WebSocket subprotocol bearer token (k8s `request/websocket`).
//!
//! Browsers cannot set `Authorization` on a WebSocket, so Kubernetes accepts the token as a
//! subprotocol: `Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.<base64url>,
//! <real protocol>`. This follows Kubernetes exactly, including its error strings; the only
//! additions are a length cap, an error for header bytes that are not text, and an error for
//! an empty token subprotocol (`empty base64.bearer.authorization token`; Kubernetes: not mine, so anonymous).

use std::sync::Arc;

use base64::Engine;
use base64::alphabet::URL_SAFE;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use http::header::{CONNECTION, SEC_WEBSOCKET_PROTOCOL, UPGRADE};
use http::request::Parts;
use http::{HeaderMap, HeaderValue};

use super::bearer::claim_token;
use super::{ERR_TOO_LONG, MAX_TOKEN_LEN};
use crate::authenticator::{
    AuthFuture, Context, Description, RequestAuthenticator, Schemes, TokenAuthenticator,
};
use crate::error::{Error, ErrorKind};

/// The subprotocol prefix that carries a base64url (unpadded) bearer token.
///
/// ```
/// use kube_authn::request::{PROTOCOL_PREFIX, remove_token_protocol};
/// assert_eq!(PROTOCOL_PREFIX, "base64url.bearer.authorization.k8s.io.");
///
/// // `dG9rZW4` is base64url("token"); the middleware strips it before the application sees it.
/// let mut headers = http::HeaderMap::new();
/// let offered = format!("{PROTOCOL_PREFIX}dG9rZW4, v4.channel.k8s.io");
/// headers.insert("sec-websocket-protocol", offered.parse().unwrap());
/// remove_token_protocol(&mut headers);
/// assert_eq!(headers["sec-websocket-protocol"], "v4.channel.k8s.io");
/// ```
pub const PROTOCOL_PREFIX: &str = "base64url.bearer.authorization.k8s.io.";

/// Go's `base64.RawURLEncoding`: URL alphabet, no padding, non-canonical trailing bits allowed.
const RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

// Kubernetes' texts; the kind is `MalformedCredential`, as for the `Authorization` header's
// syntax errors: the subprotocol could not be read as a credential.
const ERR_MULTIPLE_TOKENS: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "multiple base64.bearer.authorization tokens specified",
);
const ERR_ENCODING: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "invalid base64.bearer.authorization token encoding",
);
const ERR_INVALID: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "invalid base64.bearer.authorization token",
);
const ERR_MISSING_PROTOCOL: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "missing additional subprotocol",
);
/// A token subprotocol with nothing after the prefix: Kubernetes has no opinion (so the request
/// may become anonymous); a presented but empty credential fails closed here, as `Bearer ` does.
const ERR_EMPTY: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "empty base64.bearer.authorization token",
);
const ERR_NOT_TEXT: Error = Error::from_static(
    ErrorKind::MalformedCredential,
    "Sec-WebSocket-Protocol header contains bytes outside visible ASCII",
);

/// Authenticates WebSocket requests by the bearer-token subprotocol.
///
/// ```
/// use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
/// use kube_authn::request::WebSocketProtocol;
/// use kube_authn::user::UserInfo;
///
/// let tokens = SyncTokenFn::new(|t: &str, _: &Context| {
///     Ok((aws_lc_rs::constant_time::verify_slices_are_equal(t.as_bytes(), b"token").is_ok()).then(|| Response::new(UserInfo::new("alice").into())))
/// });
/// let ws = WebSocketProtocol::new(tokens);
/// let (req, _) = http::Request::get("/")
///     .header("connection", "Upgrade")
///     .header("upgrade", "websocket")
///     .header("sec-websocket-protocol", "base64url.bearer.authorization.k8s.io.dG9rZW4,v4.channel.k8s.io")
///     .body(()).unwrap().into_parts();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let r = ws.authenticate_request(&req, &Context::default()).await.unwrap().unwrap();
/// assert_eq!(r.user.name(), "alice");
/// # });
/// ```
#[derive(Clone)]
pub struct WebSocketProtocol<T: ?Sized = dyn TokenAuthenticator> {
    tokens: Arc<T>,
}

impl<T: TokenAuthenticator> WebSocketProtocol<T> {
    /// Wraps a token authenticator.
    ///
    /// ```
    /// use kube_authn::{authenticator::SyncTokenFn, request::WebSocketProtocol};
    /// let w = WebSocketProtocol::new(SyncTokenFn::new(|_: &str, _: &_| Ok(None)));
    /// ```
    pub fn new(tokens: T) -> Self {
        Self {
            tokens: Arc::new(tokens),
        }
    }
}

impl<T: TokenAuthenticator + ?Sized> WebSocketProtocol<T> {
    /// Wraps a shared token authenticator.
    ///
    /// ```
    /// use kube_authn::{authenticator::{SyncTokenFn, TokenAuthenticator}, request::WebSocketProtocol};
    /// use std::sync::Arc;
    /// let shared: Arc<dyn TokenAuthenticator> = Arc::new(SyncTokenFn::new(|_: &str, _: &_| Ok(None)));
    /// let w = WebSocketProtocol::from_arc(shared);
    /// ```
    pub fn from_arc(tokens: Arc<T>) -> Self {
        Self { tokens }
    }
}

/// k8s `wsstream.IsWebSocketRequest`: the first `Upgrade` is `websocket` (any case) and some
/// `Connection` value contains `upgrade` (any case).
fn is_websocket_request(headers: &HeaderMap) -> bool {
    let upgrade = headers
        .get(UPGRADE)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
    upgrade
        && headers.get_all(CONNECTION).iter().any(|v| {
            v.as_bytes()
                .windows(7)
                .any(|w| w.eq_ignore_ascii_case(b"upgrade"))
        })
}

/// Go `strings.TrimSpace` on header text (only ASCII white space can occur in a header).
fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// Extracts the token following k8s' algorithm: `Ok(None)` = no token (not mine).
fn extract_token(headers: &HeaderMap) -> Result<Option<String>, Error> {
    let mut token: Option<String> = None;
    let mut others = 0usize;
    for value in headers.get_all(SEC_WEBSOCKET_PROTOCOL) {
        let text = value.to_str().map_err(|_| ERR_NOT_TEXT)?;
        for protocol in text.split(',').map(trim) {
            let Some(encoded) = protocol.strip_prefix(PROTOCOL_PREFIX) else {
                others += 1;
                continue;
            };
            if token.is_some() {
                return Err(ERR_MULTIPLE_TOKENS);
            }
            // The longest unpadded encoding of a `MAX_TOKEN_LEN`-byte token; the decoded
            // length is checked too, so the cap is exactly the `Authorization` header's.
            if encoded.len() > (MAX_TOKEN_LEN * 4).div_ceil(3) {
                return Err(ERR_TOO_LONG);
            }
            let decoded = RAW_URL.decode(encoded).map_err(|_| ERR_ENCODING)?;
            if decoded.len() > MAX_TOKEN_LEN {
                return Err(ERR_TOO_LONG);
            }
            token = Some(String::from_utf8(decoded).map_err(|_| ERR_INVALID)?);
        }
    }
    match token {
        Some(t) if t.is_empty() => Err(ERR_EMPTY),
        Some(_) if others == 0 => Err(ERR_MISSING_PROTOCOL),
        Some(t) => Ok(Some(t)),
        None => Ok(None),
    }
}

/// The subprotocol's syntax alone, for chains without token authenticators
/// ([`super::CredentialSyntax`]): a malformed token subprotocol on a WebSocket request is the
/// error [`WebSocketProtocol`] would give; a well-formed one is not checked further.
pub(super) fn check_syntax(headers: &HeaderMap) -> Result<(), Error> {
    if is_websocket_request(headers) {
        extract_token(headers)?;
    }
    Ok(())
}

impl<T: TokenAuthenticator + ?Sized> RequestAuthenticator for WebSocketProtocol<T> {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, ctx: &'a Context) -> AuthFuture<'a> {
        if !is_websocket_request(&req.headers) {
            return AuthFuture::ready(Ok(None));
        }
        match extract_token(&req.headers) {
            // The decoded token is owned, so the future owns it too. WebSocket authentication
            // happens once per connection, so this one allocation is off the hot path.
            Ok(Some(token)) if self.tokens.always_ready() => {
                // The delegate answers at once: no need for a future that owns the token.
                AuthFuture::ready(claim_token(
                    self.tokens.authenticate_token(&token, ctx).expect_ready(),
                ))
            }
            Ok(Some(token)) => {
                let tokens = &self.tokens;
                AuthFuture::new(
                    async move { claim_token(tokens.authenticate_token(&token, ctx).await) },
                )
            }
            Ok(None) => AuthFuture::ready(Ok(None)),
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

/// Removes every bearer-token subprotocol (every entry that contains
/// `base64url.bearer.authorization.k8s.io.`) from `Sec-WebSocket-Protocol`, keeping the other
/// protocols in order as one comma-joined value (what Kubernetes leaves after a successful
/// WebSocket authentication). Does nothing when no token protocol is present. The middleware
/// calls this after every successful authentication, so a token never reaches the application.
///
/// ```
/// use kube_authn::request::remove_token_protocol;
/// let mut h = http::HeaderMap::new();
/// h.append("sec-websocket-protocol", "base64url.bearer.authorization.k8s.io.dG9rZW4".parse().unwrap());
/// h.append("sec-websocket-protocol", "dummy, dummy2".parse().unwrap());
/// remove_token_protocol(&mut h);
/// assert_eq!(h.get_all("sec-websocket-protocol").iter().collect::<Vec<_>>(), ["dummy,dummy2"]);
/// ```
pub fn remove_token_protocol(headers: &mut HeaderMap) {
    let has_token = headers
        .get_all(SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .any(|v| memchr::memmem::find(v.as_bytes(), PROTOCOL_PREFIX.as_bytes()).is_some());
    if !has_token {
        return;
    }
    // Bytes, not text: a value with obs-text bytes keeps its other protocols, as Go's
    // byte strings do.
    let mut joined: Vec<u8> = Vec::new();
    let mut first = true;
    for value in headers.get_all(SEC_WEBSOCKET_PROTOCOL) {
        for protocol in value
            .as_bytes()
            .split(|&b| b == b',')
            .map(<[u8]>::trim_ascii)
        {
            // Any entry holding the prefix, not only one starting with it: Go trims Unicode
            // white space (a no-break space before the prefix still makes a token for a Go
            // reader downstream), and a token must not reach the application in any form.
            if memchr::memmem::find(protocol, PROTOCOL_PREFIX.as_bytes()).is_some() {
                continue;
            }
            // Empty protocols are kept as empty elements, as Go's `strings.Join` keeps them.
            if !first {
                joined.push(b',');
            }
            first = false;
            joined.extend_from_slice(protocol);
        }
    }
    headers.remove(SEC_WEBSOCKET_PROTOCOL);
    if let Ok(value) = HeaderValue::from_bytes(&joined) {
        headers.insert(SEC_WEBSOCKET_PROTOCOL, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authenticator::{AsyncTokenFn, AuthResult, Response, SyncTokenFn};
    use crate::user::UserInfo;
    use std::sync::Mutex;

    fn request(connection: &[&str], upgrade: Option<&str>, protocols: &[&str]) -> Parts {
        let mut b = http::Request::get("/");
        for c in connection {
            b = b.header("connection", *c);
        }
        if let Some(u) = upgrade {
            b = b.header("upgrade", u);
        }
        for p in protocols {
            b = b.header("sec-websocket-protocol", *p);
        }
        b.body(()).unwrap().into_parts().0
    }

    fn ws(protocols: &[&str]) -> Parts {
        request(&["upgrade"], Some("websocket"), protocols)
    }

    type Answer = fn() -> AuthResult;

    async fn run(parts: &Parts, answer: Answer, slow: bool) -> (String, Vec<String>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let got = if slow {
            let auth = WebSocketProtocol::new(AsyncTokenFn::new(move |t: String, _| {
                s.lock().unwrap().push(t);
                async move { answer() }
            }));
            auth.authenticate_request(parts, &Context::default()).await
        } else {
            let auth = WebSocketProtocol::new(SyncTokenFn::new(move |t: &str, _: &Context| {
                s.lock().unwrap().push(t.to_owned());
                answer()
            }));
            auth.authenticate_request(parts, &Context::default()).await
        };
        let got = match got {
            Ok(Some(r)) => format!("ok {}", r.user.name()),
            Ok(None) => "none".into(),
            Err(e) => format!("err {e}"),
        };
        let seen = seen.lock().unwrap().clone();
        (got, seen)
    }

    fn ok() -> AuthResult {
        Ok(Some(Response::new(Arc::new(UserInfo::new("myuser")))))
    }

    #[tokio::test]
    async fn websocket_vectors() {
        const TOK: &str = "base64url.bearer.authorization.k8s.io.dG9rZW4";
        let ffe = format!("{PROTOCOL_PREFIX}__4");
        let cases: Vec<(&str, Parts, Answer, &str, &[&str])> = vec![
            (
                "TestAuthenticateRequest",
                ws(&["base64url.bearer.authorization.k8s.io.dG9rZW4,dummy"]),
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "MultipleConnectionHeaders",
                request(
                    &["not", "upgrade"],
                    Some("websocket"),
                    &["base64url.bearer.authorization.k8s.io.dG9rZW4,dummy"],
                ),
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "Connection contains upgrade",
                request(
                    &["keep-alive, Upgrade"],
                    Some("WebSocket"),
                    &["base64url.bearer.authorization.k8s.io.dG9rZW4,dummy"],
                ),
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "TokenInvalid",
                ws(&["base64url.bearer.authorization.k8s.io.dG9rZW4,dummy"]),
                || Ok(None),
                "err invalid bearer token",
                &["token"],
            ),
            (
                "TokenInvalidCustomError",
                ws(&["base64url.bearer.authorization.k8s.io.dG9rZW4,dummy"]),
                || Err(Error::msg("custom")),
                "err custom",
                &["token"],
            ),
            (
                "BadValue empty request",
                request(&[], None, &[]),
                ok,
                "none",
                &[],
            ),
            (
                "BadValue other protocol",
                ws(&["other-protocol"]),
                ok,
                "none",
                &[],
            ),
            (
                "BadValue empty token (Kubernetes: none; fails closed here)",
                ws(&["base64url.bearer.authorization.k8s.io."]),
                ok,
                "err empty base64.bearer.authorization token",
                &[],
            ),
            (
                "empty token and another protocol (Kubernetes: none; fails closed here)",
                ws(&["base64url.bearer.authorization.k8s.io.,dummy"]),
                ok,
                "err empty base64.bearer.authorization token",
                &[],
            ),
            ("empty header", ws(&[""]), ok, "none", &[]),
            (
                "not a websocket request",
                request(
                    &["keep-alive"],
                    Some("websocket"),
                    &["base64url.bearer.authorization.k8s.io.dG9rZW4,dummy"],
                ),
                ok,
                "none",
                &[],
            ),
            (
                "not a websocket upgrade",
                request(
                    &["upgrade"],
                    Some("h2c"),
                    &["base64url.bearer.authorization.k8s.io.dG9rZW4,dummy"],
                ),
                ok,
                "none",
                &[],
            ),
            (
                "two header lines",
                ws(&[TOK, "dummy, dummy2"]),
                ok,
                "ok myuser",
                &["token"],
            ),
            (
                "missing additional subprotocol",
                ws(&[TOK]),
                ok,
                "err missing additional subprotocol",
                &[],
            ),
            (
                "multiple tokens",
                ws(&[
                    "base64url.bearer.authorization.k8s.io.dG9rZW4,base64url.bearer.authorization.k8s.io.dG9rZW4,x",
                ]),
                ok,
                "err multiple base64.bearer.authorization tokens specified",
                &[],
            ),
            (
                "padded",
                ws(&["base64url.bearer.authorization.k8s.io.dG9rZW4=,x"]),
                ok,
                "err invalid base64.bearer.authorization token encoding",
                &[],
            ),
            (
                "standard alphabet",
                ws(&["base64url.bearer.authorization.k8s.io.a+b/,x"]),
                ok,
                "err invalid base64.bearer.authorization token encoding",
                &[],
            ),
            (
                "not utf-8",
                ws(&[&format!("{ffe},x")]),
                ok,
                "err invalid base64.bearer.authorization token",
                &[],
            ),
            (
                "non-canonical trailing bits accepted (Go)",
                ws(&["base64url.bearer.authorization.k8s.io.dG9rZW5,x"]),
                ok,
                "ok myuser",
                &["token"],
            ),
        ];
        for (name, parts, answer, want, want_seen) in cases {
            for slow in [false, true] {
                let (got, seen) = run(&parts, answer, slow).await;
                assert_eq!(got, want, "case {name} (slow={slow})");
                assert_eq!(seen, want_seen, "case {name} (slow={slow}): tokens seen");
            }
        }
    }

    #[tokio::test]
    async fn syntax_errors_are_malformed_credentials() {
        let long = |n: usize| {
            format!(
                "{PROTOCOL_PREFIX}{},x",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(vec![b'a'; n])
            )
        };
        let cases: Vec<(&str, String)> = vec![
            (
                "multiple tokens",
                format!("{PROTOCOL_PREFIX}dG9rZW4,{PROTOCOL_PREFIX}dG9rZW4,x"),
            ),
            ("padded", format!("{PROTOCOL_PREFIX}dG9rZW4=,x")),
            ("not utf-8", format!("{PROTOCOL_PREFIX}__4,x")),
            (
                "missing additional subprotocol",
                format!("{PROTOCOL_PREFIX}dG9rZW4"),
            ),
            ("empty", format!("{PROTOCOL_PREFIX},x")),
            ("one byte over the cap", long(MAX_TOKEN_LEN + 1)),
            ("two bytes over the cap", long(MAX_TOKEN_LEN + 2)),
            ("three bytes over the cap", long(MAX_TOKEN_LEN + 3)),
        ];
        for (name, protocols) in cases {
            let got = WebSocketProtocol::new(SyncTokenFn::new(|_: &str, _: &Context| ok()))
                .authenticate_request(&ws(&[&protocols]), &Context::default())
                .await;
            let e = got.expect_err(name);
            assert_eq!(e.kind(), ErrorKind::MalformedCredential, "{name}: {e}");
        }
        // The cap is exactly the `Authorization` header's: a 64 KiB token is read whole.
        let (got, seen) = run(&ws(&[&long(MAX_TOKEN_LEN)]), ok, false).await;
        assert_eq!(got, "ok myuser");
        assert_eq!(seen[0].len(), MAX_TOKEN_LEN);
        let (got, _) = run(&ws(&[&long(MAX_TOKEN_LEN + 1)]), ok, false).await;
        assert_eq!(got, "err credential exceeds the maximum length");
    }

    #[test]
    fn remove_token_protocol_keeps_values_with_obs_text() {
        // Go's strings are bytes: the other protocols of a line with a byte ≥ 0x80 stay.
        let mut h = HeaderMap::new();
        h.append(
            SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_bytes(b"a\xff").unwrap(),
        );
        h.append(
            SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_bytes(b"base64url.bearer.authorization.k8s.io.dG9rZW4, b\xe9")
                .unwrap(),
        );
        remove_token_protocol(&mut h);
        let got: Vec<&[u8]> = h
            .get_all(SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .map(HeaderValue::as_bytes)
            .collect();
        assert_eq!(got, [b"a\xff,b\xe9".as_slice()]);
    }

    #[test]
    fn remove_token_protocol_vectors() {
        let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
            (
                vec![
                    "base64url.bearer.authorization.k8s.io.dG9rZW4",
                    "dummy, dummy2",
                ],
                vec!["dummy,dummy2"],
            ),
            (
                vec!["a,,base64url.bearer.authorization.k8s.io.dG9rZW4, b"],
                vec!["a,,b"],
            ),
            (vec!["dummy, dummy2"], vec!["dummy, dummy2"]),
            (vec![], vec![]),
            // Only the token: an empty value is left, as Go's `Header.Set(…, "")` leaves it.
            (
                vec!["base64url.bearer.authorization.k8s.io.dG9rZW4"],
                vec![""],
            ),
            (
                vec!["base64url.bearer.authorization.k8s.io.dG9rZW4, ", "x"],
                vec![",x"],
            ),
        ];
        for (input, want) in cases {
            let mut h = HeaderMap::new();
            for v in &input {
                h.append(SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_str(v).unwrap());
            }
            remove_token_protocol(&mut h);
            let got: Vec<_> = h
                .get_all(SEC_WEBSOCKET_PROTOCOL)
                .iter()
                .map(|v| v.to_str().unwrap())
                .collect();
            assert_eq!(got, want, "{input:?}");
        }
    }
}
