//! Compact JWS parsing (untrusted) — the first thing every JWT authenticator does.
//!
//! [`UntrustedJwt::parse`] is Kubernetes' issuer pre-check (`hasCorrectIssuer` /
//! `untrustedIssuer`) and the JWS parse in one linear, allocation-light pass:
//!
//! 1. at most [`MAX_JWT_LEN`] bytes; a token starting with `{` (JWS JSON serialisation, the
//!    python-jwt polyglot class) is not a compact JWS;
//! 2. exactly three segments: two SIMD `memchr` searches find the first two `.`s; a third
//!    is looked for only when the signature segment fails to decode (`.` is not base64url),
//!    so a token of dots costs two short searches, one failed decode and one more search,
//!    all linear and within [`MAX_JWT_LEN`] (CVE-2025-30204/27144 class);
//! 3. every segment is unpadded base64url with canonical trailing bits (no `=`, `+`, `/`,
//!    whitespace), decoded by `base64-simd` (AVX2/SSSE3/NEON chosen at run time); header,
//!    payload and signature are decoded into **one** buffer;
//! 4. the payload is one JSON object without duplicate member names (any depth, bounded
//!    nesting) whose `iss`, if present, is a string — one pass of the hand-written scanner in
//!    [`json`], which also records the top-level members so that authenticators read claims
//!    ([`UntrustedJwt::claims`]) without parsing the payload again.
//!
//! Any failure of 1–4 means "not a JWT for anyone" (`Err`, which authenticators answer with
//! *not mine*, as Kubernetes does), with one exception: a payload that is a JSON object with a
//! string `iss` but repeats a member name is what kube-apiserver still routes (its issuer peek
//! is Go's `encoding/json`, where the last `iss` wins) and refuses only after the signature.
//! Such a token is parsed, routed by its last `iss`, and its claims are refused with go-jose's
//! text ([`UntrustedJwt::claims_error`]): an error from the owner, not a token that falls
//! through the chain. The header is parsed too, but a bad header is reported
//! only when the token's issuer is claimed by someone ([`UntrustedJwt::header`]): from then
//! on it is that authenticator's token and a bad header is an error (fail closed).
//!
//! Header rules ([`Header`]): `alg` must be present and a string; only the algorithms of
//! [`Algorithm`] are representable (`none`/`HS*` in any case are [`HeaderAlg::Unsupported`]);
//! `crit` (any value) and `b64` are rejected since we implement no extension;
//! `jwk`, `jku`, `x5u`, `x5c`, `x5t` are never read (keys come only from configuration);
//! `kid` must be a string of at most [`MAX_KID_LEN`] bytes.
//!
//! ```
//! use kube_authn::jwt::compact::UntrustedJwt;
//! // {"alg":"RS256","kid":"k"} . {"iss":"https://issuer"} . "sig"
//! let t = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL2lzc3VlciJ9.c2ln";
//! let jwt = UntrustedJwt::parse(t).unwrap();
//! assert_eq!(jwt.issuer(), Some("https://issuer"));
//! assert_eq!(jwt.header().unwrap().kid(), Some("k"));
//! assert!(UntrustedJwt::parse("a.b").is_err());
//! assert!(UntrustedJwt::parse(&format!("{t}.")).is_err());
//! ```

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use super::alg::Algorithm;
use super::json;

/// Largest compact JWS accepted (bytes): the same bound as the bearer-token extractor.
///
/// ```
/// use kube_authn::jwt::compact::MAX_JWT_LEN;
/// assert_eq!(MAX_JWT_LEN, 64 * 1024);
/// assert_eq!(MAX_JWT_LEN, kube_authn::request::MAX_TOKEN_LEN);
/// ```
pub const MAX_JWT_LEN: usize = 64 * 1024;
/// Largest `kid` header value accepted (bytes).
///
/// ```
/// assert_eq!(kube_authn::jwt::compact::MAX_KID_LEN, 1024);
/// ```
pub const MAX_KID_LEN: usize = 1024;

/// Why a string is not a compact JWS anyone could claim (the pre-check's "skip" reasons).
///
/// ```
/// use kube_authn::jwt::compact::{MAX_JWT_LEN, NotJwt, UntrustedJwt};
/// assert_eq!(UntrustedJwt::parse("e30.e30").unwrap_err(), NotJwt::SegmentCount);
/// assert_eq!(UntrustedJwt::parse("e30.W10.c2ln").unwrap_err(), NotJwt::Payload); // `[]`
/// let long = "a".repeat(MAX_JWT_LEN + 1);
/// assert_eq!(UntrustedJwt::parse(&long).unwrap_err(), NotJwt::TooLong);
/// assert_eq!(NotJwt::SegmentCount.to_string(), "token does not have three segments");
/// ```
///
/// New variants may be added: a `match` needs a wildcard arm.
///
/// ```compile_fail,E0004
/// use kube_authn::jwt::compact::NotJwt;
/// fn kind(e: NotJwt) -> u8 {
///     match e {
///         NotJwt::TooLong => 0,
///         NotJwt::JsonSerialization => 1,
///         NotJwt::SegmentCount => 2,
///         NotJwt::Base64 => 3,
///         NotJwt::Payload => 4,
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotJwt {
    /// Longer than [`MAX_JWT_LEN`].
    TooLong,
    /// Starts with `{` (JSON serialisation) after trimming whitespace.
    JsonSerialization,
    /// Not exactly three `.`-separated segments.
    SegmentCount,
    /// A segment is not unpadded base64url.
    Base64,
    /// The payload is not a JSON object with a string (or no) `iss`, or it is refused by the
    /// strict JSON rules for another reason than a repeated member name (a payload whose only
    /// fault is a repeated name is parsed, its claims refused: see
    /// [`UntrustedJwt::claims_error`]).
    Payload,
}

impl fmt::Display for NotJwt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotJwt::TooLong => "token too long",
            NotJwt::JsonSerialization => "token is not in compact serialization",
            NotJwt::SegmentCount => "token does not have three segments",
            NotJwt::Base64 => "token segment is not unpadded base64url",
            NotJwt::Payload => "token payload is not a JSON object with a string iss",
        })
    }
}

impl std::error::Error for NotJwt {}

/// The `alg` header value.
///
/// ```
/// use kube_authn::jwt::alg::Algorithm;
/// use kube_authn::jwt::compact::{HeaderAlg, UntrustedJwt};
/// // {"alg":"HS256"}: parsed, but never verifies
/// let hs = UntrustedJwt::parse("eyJhbGciOiJIUzI1NiJ9.e30.c2ln").unwrap();
/// assert_eq!(hs.header().unwrap().alg(), HeaderAlg::Unsupported);
/// // {"alg":"ES256"}
/// let es = UntrustedJwt::parse("eyJhbGciOiJFUzI1NiJ9.e30.c2ln").unwrap();
/// assert_eq!(es.header().unwrap().alg(), HeaderAlg::Known(Algorithm::ES256));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderAlg {
    /// One of the algorithms this crate verifies.
    Known(Algorithm),
    /// Anything else (`none`, `HS256`, `RS1`, …). Never verifies.
    Unsupported,
}

/// A parsed, still untrusted, JOSE header.
///
/// ```
/// use kube_authn::jwt::compact::{HeaderAlg, UntrustedJwt};
/// use kube_authn::jwt::alg::Algorithm;
/// let jwt = UntrustedJwt::parse("eyJhbGciOiJFUzI1NiJ9.e30.c2ln").unwrap();
/// assert_eq!(jwt.header().unwrap().alg(), HeaderAlg::Known(Algorithm::ES256));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    alg: HeaderAlg,
    kid: Kid,
}

/// Longest `kid` kept inline (no allocation): a Kubernetes key id is 43 bytes (unpadded
/// base64url of a SHA-256), and identity providers' are shorter.
const INLINE_KID: usize = 64;

/// The `kid` value: inline when short (no allocation per token), boxed otherwise.
#[derive(Clone, PartialEq, Eq)]
enum Kid {
    None,
    Inline { len: u8, bytes: [u8; INLINE_KID] },
    Boxed(Box<str>),
}

impl fmt::Debug for Kid {
    /// As the `Option<&str>` it stands for (a key id is public), not as its storage.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_str(), f)
    }
}

impl Kid {
    fn new(kid: &str) -> Kid {
        match kid.len() {
            0 => Kid::None,
            len if len <= INLINE_KID => {
                let mut bytes = [0; INLINE_KID];
                bytes[..len].copy_from_slice(kid.as_bytes());
                Kid::Inline {
                    len: len as u8,
                    bytes,
                }
            }
            _ => Kid::Boxed(kid.into()),
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Kid::None => None,
            // Copied from a `&str` whole, so this is valid UTF-8 and never `None`.
            Kid::Inline { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)]).ok(),
            Kid::Boxed(s) => Some(s),
        }
    }
}

impl Header {
    /// The `alg` value.
    ///
    /// ```
    /// use kube_authn::jwt::compact::{HeaderAlg, UntrustedJwt};
    /// let jwt = UntrustedJwt::parse("eyJhbGciOiJub25lIn0.e30.").unwrap();
    /// assert_eq!(jwt.header().unwrap().alg(), HeaderAlg::Unsupported);
    /// ```
    pub fn alg(&self) -> HeaderAlg {
        self.alg
    }

    /// The `kid` value, if present and non-empty.
    ///
    /// ```
    /// use kube_authn::jwt::compact::UntrustedJwt;
    /// let jwt = UntrustedJwt::parse("eyJhbGciOiJFUzI1NiJ9.e30.c2ln").unwrap();
    /// assert_eq!(jwt.header().unwrap().kid(), None);
    /// ```
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_str()
    }
}

/// Why a header was refused.
///
/// ```
/// use kube_authn::jwt::compact::{HeaderError, UntrustedJwt};
/// // `{}`: no `alg`
/// let jwt = UntrustedJwt::parse("e30.e30.c2ln").unwrap();
/// assert_eq!(jwt.header().unwrap_err(), HeaderError::Malformed);
/// // a signature segment that is not unpadded base64url
/// let jwt = UntrustedJwt::parse("eyJhbGciOiJFUzI1NiJ9.e30.c2ln=").unwrap();
/// assert_eq!(jwt.header().unwrap_err(), HeaderError::Signature);
/// assert_eq!(HeaderError::Signature.to_string(), "malformed JWS signature");
/// ```
///
/// New variants may be added: a `match` needs a wildcard arm.
///
/// ```compile_fail,E0004
/// use kube_authn::jwt::compact::HeaderError;
/// fn kind(e: HeaderError) -> u8 {
///     match e {
///         HeaderError::Malformed => 0,
///         HeaderError::KidTooLong => 1,
///         HeaderError::UnsupportedCritical => 2,
///         HeaderError::Signature => 3,
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderError {
    /// Not a JSON object, duplicate names, `alg` missing or not a string, `kid` not a string.
    Malformed,
    /// `kid` longer than [`MAX_KID_LEN`].
    KidTooLong,
    /// A `crit` or `b64` member: extensions we do not implement.
    UnsupportedCritical,
    /// The signature segment is not unpadded base64url.
    Signature,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeaderError::Malformed => "malformed JWS header",
            HeaderError::KidTooLong => "JWS kid header too long",
            HeaderError::UnsupportedCritical => "unsupported critical JWS header",
            HeaderError::Signature => "malformed JWS signature",
        })
    }
}

impl std::error::Error for HeaderError {}

/// `null` is absent (as Go decodes it into a nil pointer); any type but string is malformed.
fn header_str<'a>(v: json::RawJson<'a>) -> Result<Option<Cow<'a, str>>, HeaderError> {
    if v.is_null() {
        return Ok(None);
    }
    v.as_str().map(Some).ok_or(HeaderError::Malformed)
}

fn parse_header(bytes: &[u8]) -> Result<Header, HeaderError> {
    compact_header(bytes).unwrap_or_else(|| parse_header_general(bytes))
}

/// The header as JOSE libraries write it (Kubernetes, Go, Node, Python: no whitespace, each
/// of `alg`, `kid` and `typ` at most once, plain ASCII string values), read in one
/// pass without the validating scanner: ≈ 0.6 k instructions instead of ≈ 1.6 k. Anything
/// else (whitespace, escapes, other members such as `crit`, other value types, a repeated
/// name, no `alg`) is `None`, and [`parse_header_general`] decides. Where this answers, the
/// answer is the general path's (a differential proptest checks it).
fn compact_header(b: &[u8]) -> Option<Result<Header, HeaderError>> {
    let (mut alg, mut kid, mut typ): (Option<&[u8]>, Option<&[u8]>, bool) = (None, None, false);
    let mut i = 1;
    if b.first() != Some(&b'{') {
        return None;
    }
    loop {
        // `"name":"` then the value through its closing quote.
        let name = b.get(i..i + 7)?;
        if name[0] != b'"' || name[4..7] != *b"\":\"" {
            return None;
        }
        let start = i + 7;
        // Up to the first `"`, `\`, control or non-ASCII byte, eight bytes per step: it must
        // be the closing quote.
        let len = json::find_special(b, start) - start;
        if b.get(start + len) != Some(&b'"') {
            return None;
        }
        let value = &b[start..start + len];
        let slot_taken = match &name[1..4] {
            b"alg" => alg.replace(value).is_some(),
            b"kid" => kid.replace(value).is_some(),
            b"typ" => std::mem::replace(&mut typ, true),
            _ => return None,
        };
        if slot_taken {
            return None;
        }
        i = start + len + 1;
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') if i + 1 == b.len() => break,
            _ => return None,
        }
    }
    // ASCII (`find_special` stops at any other byte), so these are `str`.
    let alg = std::str::from_utf8(alg?).ok()?;
    let kid = match kid.map(std::str::from_utf8) {
        None => None,
        Some(Ok(k)) => Some(k),
        Some(Err(_)) => return None,
    };
    Some(Header::from_members(alg, kid))
}

impl Header {
    /// The header from its `alg` and `kid` values, with the rules both parsing paths share.
    fn from_members(alg: &str, kid: Option<&str>) -> Result<Header, HeaderError> {
        let alg = Algorithm::from_name(alg).map_or(HeaderAlg::Unsupported, HeaderAlg::Known);
        let kid = match kid {
            Some(k) if k.len() > MAX_KID_LEN => return Err(HeaderError::KidTooLong),
            Some(k) => Kid::new(k),
            None => Kid::None,
        };
        Ok(Header { alg, kid })
    }
}

/// The header through the validating scanner: any JSON object, with the rules in the module
/// docs.
fn parse_header_general(bytes: &[u8]) -> Result<Header, HeaderError> {
    let mut index = json::TopIndex::default();
    let raw = json::validate_object_quiet(bytes, &mut index).ok_or(HeaderError::Malformed)?;
    let (mut alg, mut kid, mut critical) = (None, None, false);
    for (name, value) in raw.iter() {
        match &*name {
            "alg" => alg = header_str(value)?,
            "kid" => kid = header_str(value)?,
            // Any value but `null` (which Go decodes as absent).
            "crit" | "b64" => critical |= !value.is_null(),
            _ => {}
        }
    }
    if critical {
        return Err(HeaderError::UnsupportedCritical);
    }
    let alg = alg.ok_or(HeaderError::Malformed)?;
    Header::from_members(&alg, kid.as_deref())
}

enum Iss {
    None,
    InPayload(Range<usize>),
    Owned(Box<str>),
}

/// A compact JWS that passed the pre-check (size, three base64url segments, a JSON payload
/// with a string `iss`); nothing in it is verified yet. The rules are in the
/// [module docs](self).
///
/// ```
/// use kube_authn::jwt::compact::UntrustedJwt;
/// // {"alg":"RS256","kid":"k"} . {"iss":"https://issuer"} . "sig"
/// let t = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL2lzc3VlciJ9.c2ln";
/// let jwt = UntrustedJwt::parse(t).unwrap();
/// assert_eq!(jwt.issuer(), Some("https://issuer"));
/// assert_eq!(jwt.payload(), br#"{"iss":"https://issuer"}"#);
/// assert_eq!(jwt.signature(), b"sig");
/// // `Debug` never shows the token or its signature
/// assert!(!format!("{jwt:?}").contains("c2ln"));
/// ```
pub struct UntrustedJwt<'t> {
    signing_input: &'t str,
    buf: Vec<u8>,
    payload: Range<usize>,
    signature: Option<Range<usize>>,
    header: Result<Header, HeaderError>,
    iss: Iss,
    /// The payload object (whitespace trimmed) when it was validated as JSON.
    claims: Option<Range<usize>>,
    /// Its top-level members, as the validating scan recorded them.
    index: json::TopIndex,
    /// Why the claims are refused, for a payload routed although the validating scan refused
    /// it (see [`UntrustedJwt::claims_error`]).
    refusal: Option<Box<str>>,
}

impl fmt::Debug for UntrustedJwt<'_> {
    /// Shows the header and issuer only: never the token, payload or signature.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UntrustedJwt")
            .field("header", &self.header)
            .field("iss", &self.issuer())
            .finish_non_exhaustive()
    }
}

/// Appends the decoded `segment` to `buf`; `None` (and `buf` unchanged) unless it is unpadded
/// base64url with canonical trailing bits.
///
/// `base64-simd` (AVX2/SSSE3/NEON chosen at run time, scalar elsewhere) decodes a 1.2 KB token in
/// ≈ 1.6 k instructions where the `base64` crate takes ≈ 8.7 k; both refuse the same inputs
/// (padding, `+`, `/`, whitespace, a 1-character final quantum, non-zero trailing bits), which
/// the differential test below checks on random and mutated segments.
fn decode_into(segment: &str, buf: &mut Vec<u8>) -> Option<Range<usize>> {
    let start = buf.len();
    // Decodes into the spare capacity (no zeroing first); on error `buf` keeps its length.
    base64_simd::URL_SAFE_NO_PAD
        .decode_append(segment.as_bytes(), buf)
        .ok()?;
    Some(start..buf.len())
}

impl<'t> UntrustedJwt<'t> {
    /// Runs the pre-check and parses the token. See the [module docs](self).
    ///
    /// ```
    /// use kube_authn::jwt::compact::{NotJwt, UntrustedJwt};
    /// assert_eq!(UntrustedJwt::parse("{\"payload\":1}").unwrap_err(), NotJwt::JsonSerialization);
    /// assert_eq!(UntrustedJwt::parse("e30=.e30.e30").unwrap_err(), NotJwt::Base64);
    /// ```
    pub fn parse(token: &'t str) -> Result<Self, NotJwt> {
        Self::parse_inner(token, true)
    }

    /// Like [`parse`](Self::parse) but for a JWS whose payload need not be JSON (no `iss`):
    /// for generic JWS test suites such as Wycheproof. Authenticators use `parse`.
    ///
    /// ```
    /// let jws = kube_authn::jwt::compact::UntrustedJwt::parse_jws("e30.Zm9v.c2ln").unwrap();
    /// assert_eq!(jws.payload(), b"foo");
    /// ```
    pub fn parse_jws(token: &'t str) -> Result<Self, NotJwt> {
        Self::parse_inner(token, false)
    }

    fn parse_inner(token: &'t str, json_payload: bool) -> Result<Self, NotJwt> {
        if token.len() > MAX_JWT_LEN {
            return Err(NotJwt::TooLong);
        }
        if token.trim_start().starts_with('{') {
            return Err(NotJwt::JsonSerialization);
        }
        // SIMD `memchr`: ≈ 0.2 k instructions for both searches over a 1.2 KB token
        // (`str::find` took 2.7 k).
        let bytes = token.as_bytes();
        let first = memchr::memchr(b'.', bytes).ok_or(NotJwt::SegmentCount)?;
        let second =
            memchr::memchr(b'.', &bytes[first + 1..]).ok_or(NotJwt::SegmentCount)? + first + 1;
        // A third `.` is looked for only when the signature does not decode (`.` is not
        // base64url): one pass over the signature instead of two.
        let dots = [first, second];
        let header_b64 = &token[..dots[0]];
        let payload_b64 = &token[dots[0] + 1..dots[1]];
        let sig_b64 = &token[dots[1] + 1..];
        let mut buf = Vec::with_capacity(token.len() / 4 * 3 + 3);
        // The signature first, so that a fourth segment is still refused before anything else.
        let signature = decode_into(sig_b64, &mut buf);
        if signature.is_none() && memchr::memchr(b'.', sig_b64.as_bytes()).is_some() {
            return Err(NotJwt::SegmentCount);
        }
        let header_range = decode_into(header_b64, &mut buf).ok_or(NotJwt::Base64)?;
        let payload = decode_into(payload_b64, &mut buf).ok_or(NotJwt::Base64)?;
        let mut index = json::TopIndex::default();
        let mut refusal = None;
        let (claims, iss) = if json_payload {
            let Some((object, iss)) = json::scan_jwt_payload(&buf[payload.clone()], &mut index)
            else {
                // Still routed when kube-apiserver would route it (repeated member names: see
                // `claims_error`); otherwise not a JWT for anyone.
                let (iss, why) =
                    json::refused_payload(&buf[payload.clone()]).ok_or(NotJwt::Payload)?;
                refusal = Some(why.into_boxed_str());
                let header = if signature.is_some() {
                    parse_header(&buf[header_range])
                } else {
                    Err(HeaderError::Signature)
                };
                return Ok(UntrustedJwt {
                    signing_input: &token[..dots[1]],
                    buf,
                    payload,
                    signature,
                    header,
                    iss: Iss::Owned(iss.into_boxed_str()),
                    claims: None,
                    index,
                    refusal,
                });
            };
            let at = payload.start;
            let iss = match iss {
                None => Iss::None,
                Some(r) => {
                    // Inside the quotes; escapes (rare) are decoded once, here.
                    let body = at + r.start + 1..at + r.end - 1;
                    if buf[body.clone()].contains(&b'\\') {
                        let raw = std::str::from_utf8(&buf[at + r.start..at + r.end])
                            .map_err(|_| NotJwt::Payload)?;
                        match json::raw_json_unchecked(raw).as_str() {
                            Some(s) => Iss::Owned(s.into()),
                            None => return Err(NotJwt::Payload),
                        }
                    } else {
                        Iss::InPayload(body)
                    }
                }
            };
            (Some(object), iss)
        } else {
            (None, Iss::None)
        };
        let header = if signature.is_some() {
            parse_header(&buf[header_range])
        } else {
            Err(HeaderError::Signature)
        };
        Ok(UntrustedJwt {
            signing_input: &token[..dots[1]],
            buf,
            payload,
            signature,
            header,
            iss,
            claims,
            index,
            refusal,
        })
    }

    /// The unverified `iss` claim, if present.
    ///
    /// ```
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse("e30.e30.").unwrap();
    /// assert_eq!(jwt.issuer(), None);
    /// ```
    pub fn issuer(&self) -> Option<&str> {
        match &self.iss {
            Iss::None => None,
            Iss::InPayload(r) => std::str::from_utf8(&self.buf[r.clone()]).ok(),
            Iss::Owned(s) => Some(s),
        }
    }

    /// The header, or why it was refused.
    ///
    /// ```
    /// use kube_authn::jwt::compact::{HeaderError, UntrustedJwt};
    /// // {"alg":"RS256","crit":["exp"]}
    /// let jwt = UntrustedJwt::parse("eyJhbGciOiJSUzI1NiIsImNyaXQiOlsiZXhwIl19.e30.c2ln").unwrap();
    /// assert_eq!(jwt.header().unwrap_err(), HeaderError::UnsupportedCritical);
    /// ```
    pub fn header(&self) -> Result<&Header, HeaderError> {
        self.header.as_ref().map_err(|e| *e)
    }

    /// The payload's top-level members, walked without re-validation (the pre-check already
    /// validated it: one JSON object, no duplicate names at any depth). `None` for a JWS
    /// parsed with [`parse_jws`](Self::parse_jws), and for a payload with a repeated member
    /// name ([`claims_error`](Self::claims_error) says why).
    ///
    /// ```
    /// // {"iss":"a","exp":5}
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse("e30.eyJpc3MiOiJhIiwiZXhwIjo1fQ.").unwrap();
    /// assert_eq!(jwt.claims().unwrap().get("exp").unwrap().text(), "5");
    /// ```
    pub fn claims(&self) -> Option<json::RawObject<'_>> {
        let object = self.claims.clone()?;
        let doc = std::str::from_utf8(self.payload()).ok()?;
        json::raw_object_indexed(doc, object, &self.index)
    }

    /// Why [`claims`](Self::claims) is `None` for a token that was parsed as a JWT all the
    /// same: its payload is a JSON object with a string `iss` but repeats a member name, which
    /// kube-apiserver routes by the last `iss` and then refuses after the signature, with
    /// go-jose's text. The owning authenticator reports it as an error where it reads the
    /// claims (both after the signature, as Kubernetes and go-oidc v2 do): *not mine*
    /// would let a token signed by a trusted key fall through to the rest of the chain.
    ///
    /// ```
    /// use base64::Engine;
    /// let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    /// let token = format!("{}.{}.c2ln", b64("{}"), b64(r#"{"iss":"a","sub":"x","iss":"b"}"#));
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse(&token).unwrap();
    /// assert_eq!(jwt.issuer(), Some("b")); // the last one, as Go's encoding/json reads it
    /// assert!(jwt.claims().is_none());
    /// assert_eq!(jwt.claims_error(), Some("json: duplicate key 'iss' in object"));
    /// ```
    pub fn claims_error(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// The decoded payload bytes (a JSON object; without duplicate names unless
    /// [`claims_error`](Self::claims_error) says otherwise).
    ///
    /// ```
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse("e30.e30.").unwrap();
    /// assert_eq!(jwt.payload(), b"{}");
    /// ```
    pub fn payload(&self) -> &[u8] {
        &self.buf[self.payload.clone()]
    }

    /// The decoded signature bytes (empty when the signature segment did not decode).
    ///
    /// ```
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse("e30.e30.c2ln").unwrap();
    /// assert_eq!(jwt.signature(), b"sig");
    /// ```
    pub fn signature(&self) -> &[u8] {
        self.signature
            .as_ref()
            .map_or(&[], |r| &self.buf[r.clone()])
    }

    /// The JWS signing input: `base64url(header) "." base64url(payload)`.
    ///
    /// ```
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse("e30.e30.c2ln").unwrap();
    /// assert_eq!(jwt.signing_input(), b"e30.e30");
    /// ```
    pub fn signing_input(&self) -> &'t [u8] {
        self.signing_input.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn token(header: &str) -> String {
        let b = |s: &str| URL_SAFE_NO_PAD.encode(s);
        format!(
            "{}.{}.{}",
            b(header),
            b(r#"{"iss":"https://issuer.example","sub":"x"}"#),
            b("sig")
        )
    }

    /// The `base64` crate's strict decoder is the oracle for `decode_into` (`base64-simd`).
    fn agree(case: &str, segment: &str) {
        let mut buf = b"prefix".to_vec();
        let got = decode_into(segment, &mut buf).map(|r| buf[r].to_vec());
        let want = URL_SAFE_NO_PAD.decode(segment).ok();
        assert_eq!(got, want, "case {case}: segment {segment:?}");
        if want.is_none() {
            assert_eq!(
                buf, b"prefix",
                "a refused segment leaves the buffer as it was"
            );
        }
    }

    #[test]
    fn segment_decoding_table() {
        // (case, segment): each decoded or refused exactly as the `base64` crate does.
        let long = URL_SAFE_NO_PAD.encode((0..=255u8).cycle().take(1000).collect::<Vec<_>>());
        let cases: &[(&str, &str)] = &[
            ("empty", ""),
            ("one byte", "QQ"),
            ("two bytes", "QUI"),
            ("three bytes", "QUJD"),
            ("one character quantum", "Q"),
            ("five characters", "QUJDR"),
            ("non-canonical 2-char tail", "QR"),
            ("non-canonical 3-char tail", "QUJ"),
            ("padding", "QQ=="),
            ("padding after a full quantum", "QUJD="),
            ("standard alphabet +", "-_+A"),
            ("standard alphabet /", "-_/A"),
            ("url alphabet", "-_-_"),
            ("space", "QU JD"),
            ("newline", "QUJD\nQUJD"),
            ("NUL", "QU\0D"),
            ("non-ASCII", "QUJé"),
            ("long (SIMD path)", &long),
            (
                "long with a bad byte late",
                &format!("{}*{}", &long[..900], &long[901..]),
            ),
            (
                "long with a bad byte in the tail",
                &format!("{}=", &long[..long.len() - 1]),
            ),
        ];
        for (case, segment) in cases {
            agree(case, segment);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn segment_decoding_agrees_with_base64_on_random_input(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            byte in proptest::prelude::any::<u8>(),
            mutate in proptest::prelude::any::<bool>(),
        ) {
            let mut seg = URL_SAFE_NO_PAD.encode(&data).into_bytes();
            if mutate && !seg.is_empty() {
                let i = at.index(seg.len());
                seg[i] = byte;
            }
            if let Ok(seg) = std::str::from_utf8(&seg) {
                agree("random", seg);
            }
        }
    }

    #[test]
    fn segment_table() {
        // (case, token, the error, or Ok(whether the signature decodes))
        let cases: &[(&str, &str, Result<bool, NotJwt>)] = &[
            ("three segments", "e30.e30.c2ln", Ok(true)),
            ("empty signature", "e30.e30.", Ok(true)),
            ("bad signature", "e30.e30.c2l!", Ok(false)),
            ("one dot", "e30.e30", Err(NotJwt::SegmentCount)),
            ("no dot", "e30", Err(NotJwt::SegmentCount)),
            (
                "four segments",
                "e30.e30.c2ln.c2ln",
                Err(NotJwt::SegmentCount),
            ),
            ("trailing dot", "e30.e30.c2ln.", Err(NotJwt::SegmentCount)),
            (
                "four segments, bad header",
                "e3!.e30.c2ln.x",
                Err(NotJwt::SegmentCount),
            ),
            (
                "four segments, bad payload",
                "e30.e3!.c2ln.x",
                Err(NotJwt::SegmentCount),
            ),
            ("bad header", "e3!.e30.c2ln", Err(NotJwt::Base64)),
            ("bad payload", "e30.e3!.c2ln", Err(NotJwt::Base64)),
            (
                "bad header and signature",
                "e3!.e30.c2l!",
                Err(NotJwt::Base64),
            ),
        ];
        for (case, token, want) in cases {
            let got = UntrustedJwt::parse(token)
                .map(|j| j.header().err() != Some(HeaderError::Signature));
            assert_eq!(got, *want, "{case}");
        }
    }

    /// The compact-header fast path answers the common shapes (so it cannot silently stop
    /// firing), leaves everything else to the general path, and never disagrees with it.
    #[test]
    fn compact_header_table() {
        let long_kid = "k".repeat(MAX_KID_LEN + 1);
        let too_long = format!(r#"{{"alg":"RS256","kid":"{long_kid}"}}"#);
        // (case, header, whether the fast path answers)
        let cases: &[(&str, &str, bool)] = &[
            (
                "Kubernetes",
                r#"{"alg":"RS256","kid":"JkLs8YcG8Uq8dpW7cQxYv2cJ3nL0hQ9xR5mYzY9P1aQ"}"#,
                true,
            ),
            (
                "OIDC with typ",
                r#"{"alg":"ES256","typ":"JWT","kid":"k1"}"#,
                true,
            ),
            ("alg only", r#"{"alg":"EdDSA"}"#, true),
            ("alg none", r#"{"alg":"none"}"#, true),
            ("HS256", r#"{"alg":"HS256","kid":"a"}"#, true),
            ("empty kid", r#"{"alg":"RS256","kid":""}"#, true),
            ("kid too long", &too_long, true),
            ("no alg", r#"{"kid":"k"}"#, false),
            ("empty object", "{}", false),
            ("whitespace", r#"{ "alg":"RS256"}"#, false),
            ("whitespace after colon", r#"{"alg": "RS256"}"#, false),
            ("escaped kid", r#"{"alg":"RS256","kid":"a\u0062c"}"#, false),
            ("escaped name", r#"{"\u0061lg":"RS256"}"#, false),
            ("non-ASCII kid", r#"{"alg":"RS256","kid":"é"}"#, false),
            ("control byte", "{\"alg\":\"RS\u{1}256\"}", false),
            ("duplicate alg", r#"{"alg":"RS256","alg":"none"}"#, false),
            (
                "duplicate typ",
                r#"{"alg":"RS256","typ":"a","typ":"b"}"#,
                false,
            ),
            ("crit", r#"{"alg":"RS256","crit":["b64"]}"#, false),
            ("b64", r#"{"alg":"RS256","b64":false}"#, false),
            ("numeric kid", r#"{"alg":"RS256","kid":1}"#, false),
            ("null kid", r#"{"alg":"RS256","kid":null}"#, false),
            ("numeric typ", r#"{"alg":"RS256","typ":1}"#, false),
            ("trailing bytes", r#"{"alg":"RS256"}x"#, false),
            ("trailing comma", r#"{"alg":"RS256",}"#, false),
            ("unterminated", r#"{"alg":"RS256""#, false),
            ("unterminated value", r#"{"alg":"RS256"#, false),
            ("short name", r#"{"al":"RS256"}"#, false),
            (
                "other member",
                r#"{"alg":"RS256","x5u":"https://a"}"#,
                false,
            ),
        ];
        for (case, header, fast) in cases {
            let got = compact_header(header.as_bytes());
            assert_eq!(got.is_some(), *fast, "{case}: fast path answers");
            if let Some(got) = got {
                assert_eq!(got, parse_header_general(header.as_bytes()), "{case}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        #[test]
        fn compact_header_agrees_with_the_general_path(
            members in proptest::collection::vec(
                (
                    proptest::prop_oneof!["alg", "kid", "typ", "crit", "al", "algx", "[a-z]{3}"],
                    proptest::prop_oneof![
                        "\"[ -~]{0,12}\"",
                        "\"(RS256|ES256|none|HS256|EdDSA)\"",
                        "\"[a\\\\é\u{1}]{0,3}\"",
                        "null", "1", "\\[\\]", "\\{\\}",
                    ],
                ),
                0..5,
            ),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            byte in proptest::prelude::any::<u8>(),
            mutate in proptest::prelude::any::<bool>(),
        ) {
            let body: Vec<String> =
                members.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            let mut header = format!("{{{}}}", body.join(",")).into_bytes();
            if mutate {
                let i = at.index(header.len());
                header[i] = byte;
            }
            if let Some(got) = compact_header(&header) {
                proptest::prop_assert_eq!(got, parse_header_general(&header));
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Headers as JOSE libraries write them (`alg`, optional `kid` of any length up to
        /// past the cap, optional `typ`, in any order): the fast path always answers, and
        /// answers what the general path does; one changed byte anywhere never makes them
        /// disagree.
        #[test]
        fn compact_headers_take_the_fast_path(
            alg in proptest::prop_oneof!["RS256", "ES384", "EdDSA", "none", "HS256", "[ -!#-\\[\\]-~]{0,8}"],
            kid in proptest::option::of(proptest::prop_oneof![
                "[A-Za-z0-9_-]{0,64}",
                proptest::strategy::Strategy::prop_map(0usize..3, |d| "k".repeat(MAX_KID_LEN - 1 + d)),
            ]),
            typ in proptest::option::of("[ -!#-\\[\\]-~]{0,5}"),
            order in proptest::sample::select(vec![[0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 2, 0]]),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            byte in proptest::prelude::any::<u8>(),
        ) {
            let members = [
                Some(format!(r#""alg":"{alg}""#)),
                kid.map(|k| format!(r#""kid":"{k}""#)),
                typ.map(|t| format!(r#""typ":"{t}""#)),
            ];
            let body: Vec<&str> = order.iter().filter_map(|&i| members[i].as_deref()).collect();
            let header = format!("{{{}}}", body.join(","));
            let fast = compact_header(header.as_bytes());
            proptest::prop_assert!(fast.is_some(), "fast path for {}", header);
            proptest::prop_assert_eq!(fast.unwrap(), parse_header_general(header.as_bytes()));
            let mut mutated = header.into_bytes();
            let i = at.index(mutated.len());
            mutated[i] = byte;
            if let Some(got) = compact_header(&mutated) {
                proptest::prop_assert_eq!(got, parse_header_general(&mutated));
            }
        }
    }

    #[test]
    fn kid_table() {
        // (case, kid length in bytes, Ok(whether kid() returns it) or the error)
        let cases: &[(&str, usize, Result<bool, HeaderError>)] = &[
            ("empty kid is absent", 0, Ok(false)),
            ("Kubernetes kid (43 bytes)", 43, Ok(true)),
            ("longest inline kid", INLINE_KID, Ok(true)),
            ("first boxed kid", INLINE_KID + 1, Ok(true)),
            ("longest kid", MAX_KID_LEN, Ok(true)),
            (
                "kid too long",
                MAX_KID_LEN + 1,
                Err(HeaderError::KidTooLong),
            ),
        ];
        for (case, len, want) in cases {
            // Exactly `len` bytes, non-ASCII included (é is two bytes).
            let kid = format!("{}{}", "é".repeat(len / 2), "k".repeat(len % 2));
            let t = token(&format!(r#"{{"alg":"RS256","kid":"{kid}"}}"#));
            let jwt = UntrustedJwt::parse(&t).expect(case);
            let got = jwt.header().map(|h| h.kid().map(str::to_owned));
            let want = (*want).map(|present: bool| present.then(|| kid.clone()));
            assert_eq!(got, want, "case {case}");
        }
        // An escaped kid is decoded before it is stored.
        let t = token(r#"{"alg":"RS256","kid":"a\u0062c"}"#);
        let jwt = UntrustedJwt::parse(&t).unwrap();
        assert_eq!(jwt.header().unwrap().kid(), Some("abc"));
        // Debug shows the key id, not its inline storage.
        let shown = format!("{:?}", jwt.header().unwrap());
        assert!(shown.contains(r#"kid: Some("abc")"#), "{shown}");
    }

    #[test]
    fn jose_header_table() {
        // (case, header JSON, Ok(alg name) or the error)
        let cases: &[(&str, &str, Result<&str, HeaderError>)] = &[
            ("plain", r#"{"alg":"RS256"}"#, Ok("RS256")),
            ("kid", r#"{"alg":"ES256","kid":"k1"}"#, Ok("ES256")),
            // go-jose does not read a header `iss`; its type does not matter there either.
            ("numeric iss", r#"{"alg":"RS256","iss":1}"#, Ok("RS256")),
            (
                "object iss",
                r#"{"alg":"RS256","iss":{"a":1}}"#,
                Ok("RS256"),
            ),
            ("null kid", r#"{"alg":"RS256","kid":null}"#, Ok("RS256")),
            ("array header", r#"["RS256"]"#, Err(HeaderError::Malformed)),
            ("no alg", r#"{"kid":"k"}"#, Err(HeaderError::Malformed)),
            ("numeric alg", r#"{"alg":256}"#, Err(HeaderError::Malformed)),
            (
                "duplicate alg",
                r#"{"alg":"RS256","alg":"HS256"}"#,
                Err(HeaderError::Malformed),
            ),
            (
                "escaped duplicate alg",
                r#"{"alg":"RS256","\u0061lg":"HS256"}"#,
                Err(HeaderError::Malformed),
            ),
            (
                "crit",
                r#"{"alg":"RS256","crit":["exp"]}"#,
                Err(HeaderError::UnsupportedCritical),
            ),
        ];
        // More members than the scan indexes (24): read by a walk instead, same answers.
        let many: String = (0..30).map(|i| format!(r#""x{i}":{i},"#)).collect();
        let many_ok = format!(r#"{{{many}"alg":"ES256","kid":"k"}}"#);
        let many_crit = format!(r#"{{{many}"alg":"ES256","crit":["x"]}}"#);
        let many_dup = format!(r#"{{{many}"alg":"ES256","x7":1}}"#);
        let cases: Vec<(&str, &str, Result<&str, HeaderError>)> = cases
            .iter()
            .copied()
            .chain([
                ("30 members", many_ok.as_str(), Ok("ES256")),
                (
                    "30 members and crit",
                    many_crit.as_str(),
                    Err(HeaderError::UnsupportedCritical),
                ),
                (
                    "30 members, duplicate",
                    many_dup.as_str(),
                    Err(HeaderError::Malformed),
                ),
            ])
            .collect();
        for (name, header, want) in &cases {
            let t = token(header);
            let jwt = UntrustedJwt::parse(&t).expect(name);
            let got = jwt.header().map(|h| match h.alg() {
                HeaderAlg::Known(a) => a.name(),
                HeaderAlg::Unsupported => "unsupported",
            });
            assert_eq!(got, *want, "case {name}");
        }
    }

    /// Payloads the validating scan refuses: routed as kube-apiserver routes them (the last
    /// `iss`, by Go's `encoding/json`) when the only fault is a repeated member name, with
    /// go-jose's text for the claims; anything else stays "not a JWT".
    #[test]
    fn refused_payload_table() {
        let b = |s: &str| URL_SAFE_NO_PAD.encode(s);
        // (case, payload, Ok((issuer, claims error)) or Err(NotJwt))
        type Want = Result<(&'static str, &'static str), NotJwt>;
        let cases: &[(&str, &str, Want)] = &[
            (
                "repeated iss: the last one routes",
                r#"{"iss":"a","iss":"b"}"#,
                Ok(("b", "json: duplicate key 'iss' in object")),
            ),
            (
                "repeat deep inside: the first repeat in document order is named",
                r#"{"iss":"a","x":{"y":[{"k":1,"k":2}]},"z":1,"z":2}"#,
                Ok(("a", "json: duplicate key 'k' in object")),
            ),
            (
                "an escaped repeat is named decoded",
                r#"{"iss":"a","sub":"x","s\u0075b":"y"}"#,
                Ok(("a", "json: duplicate key 'sub' in object")),
            ),
            (
                "repeated name, no iss: nobody's",
                r#"{"sub":"x","sub":"y"}"#,
                Err(NotJwt::Payload),
            ),
            (
                "repeated name, iss a number: nobody's (Go's peek fails too)",
                r#"{"iss":5,"sub":"x","sub":"y"}"#,
                Err(NotJwt::Payload),
            ),
            (
                "the last iss null: Go's decoder keeps the string before it",
                r#"{"iss":"a","iss":null}"#,
                Ok(("a", "json: duplicate key 'iss' in object")),
            ),
            (
                "one iss of another type: Go's peek fails",
                r#"{"iss":"a","iss":"b","iss":[]}"#,
                Err(NotJwt::Payload),
            ),
            (
                "only null issuers: no issuer",
                r#"{"iss":null,"iss":null}"#,
                Err(NotJwt::Payload),
            ),
            (
                "an array with repeats inside: not a claim set",
                r#"[{"iss":"a","iss":"b"}]"#,
                Err(NotJwt::Payload),
            ),
            ("not JSON", r#"{"iss":"a","iss":"b""#, Err(NotJwt::Payload)),
            (
                "Go's peek ends on ISS, which the claims do not read as iss: nobody's",
                r#"{"iss":"a","ISS":"b","z":1,"z":2}"#,
                Err(NotJwt::Payload),
            ),
            (
                "Go's peek ends on iss after an ISS: routed by it",
                r#"{"ISS":"b","iss":"a","z":1,"z":2}"#,
                Ok(("a", "json: duplicate key 'z' in object")),
            ),
            (
                "a number beyond f64 (no repeat): nobody's",
                r#"{"iss":"a","x":1e400}"#,
                Err(NotJwt::Payload),
            ),
            (
                "a lone surrogate is U+FFFD, as Go reads it: the repeat is named",
                r#"{"iss":"a","x":"\ud800","x\ud800":1,"x\udc00":2}"#,
                Ok(("a", "json: duplicate key 'x\u{FFFD}' in object")),
            ),
            (
                "a number beyond f64 before a repeat: nobody's",
                r#"{"iss":"a","x":1e400,"iss":"a"}"#,
                Err(NotJwt::Payload),
            ),
            (
                "a repeat before a number beyond f64: routed",
                r#"{"iss":"a","iss":"a","x":1e400}"#,
                Ok(("a", "json: duplicate key 'iss' in object")),
            ),
        ];
        for (name, payload, want) in cases {
            let token = format!("{}.{}.{}", b(r#"{"alg":"RS256"}"#), b(payload), b("sig"));
            let got = UntrustedJwt::parse(&token).map(|jwt| {
                assert!(jwt.claims().is_none(), "{name}");
                (
                    jwt.issuer().unwrap().to_owned(),
                    jwt.claims_error().unwrap().to_owned(),
                )
            });
            let want = want.map(|(i, e)| (i.to_owned(), e.to_owned()));
            assert_eq!(got, want, "{name}");
        }
        // Raw invalid UTF-8 in a value (no repeat): nobody's.
        let raw = [&br#"{"iss":"a","x":""#[..], &[0xFF], &br#""}"#[..]].concat();
        let token_raw = format!(
            "{}.{}.{}",
            b(r#"{"alg":"RS256"}"#),
            URL_SAFE_NO_PAD.encode(raw),
            b("sig")
        );
        assert_eq!(UntrustedJwt::parse(&token_raw).err(), Some(NotJwt::Payload));
        // A valid payload has claims and no claims error.
        let valid = token(r#"{"alg":"RS256"}"#);
        let jwt = UntrustedJwt::parse(&valid).unwrap();
        assert!(jwt.claims().is_some() && jwt.claims_error().is_none());
    }
}
