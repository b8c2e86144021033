//! Strict JSON for JOSE headers and JWT claims.
//!
//! * **Duplicate member names are rejected** at every depth (RFC 7515 §5.2 allows "reject or
//!   last wins"; go-jose rejects on the verification path, Go's std JSON keeps the last one on
//!   the issuer-peek path — we use one rule, reject, on both paths so they can never disagree).
//!   Names are compared decoded: `"i\u0073s"` is `iss` (as Go's `encoding/json` reads it), so
//!   it collides with a plain `iss` and is routed as `iss`.
//! * Nesting is bounded exactly as serde_json bounds it (at most 127 open arrays/objects,
//!   [`MAX_DEPTH`]); 10 000-deep documents fail fast.
//! * `exp`/`nbf`/`iat` must be JSON numbers ([`NumericDate`]); a string is an error, never
//!   "absent" (the jsonwebtoken CVE-2026-25537 class). `aud` must be a string or an array of
//!   strings ([`Audience`]).
//! * Error messages never contain claim values.
//!
//! # One validating pass, then walks over known-good text
//!
//! The request path validates each untrusted payload **once**, with a hand-written scanner
//! ([`scan_object`], [`validate_object`]): UTF-8, RFC 8259 grammar exactly as serde_json
//! accepts it (no control characters in strings, no leading zeros, numbers that overflow `f64`
//! refused), except that a lone UTF-16 surrogate escape is accepted and decoded to U+FFFD as
//! Go's `encoding/json` and go-jose decode it (serde_json refuses it), duplicate names at every depth and the depth cap, capturing
//! the top-level `iss` for the router. Strings — most of a JWT — are scanned eight bytes per
//! step; member names sit on one fixed stack shared by all open objects (32 names as
//! fingerprinted raw ranges, a hashed set per object beyond that; names with escapes are
//! compared decoded), so nesting costs no stack space per level. No allocation for ordinary
//! tokens.
//!
//! The authenticators then read claims through [`RawObject`] / [`RawJson`]: a structural walk
//! over the validated text (no re-validation, strings borrowed unless escaped), with typed
//! readers that keep the serde rules and error texts ([`NumericDate::from_raw`],
//! [`Audience::from_raw`], [`opt_str`]). Nested objects an authenticator decodes (the
//! service account's `kubernetes.io`) are read with a crate-internal cursor in one pass: each
//! member's value is read where it stands (a string scanned once for its end and its
//! escapes), not skipped by the iterator and walked again by the reader; `aud` is checked and
//! then read in place, without collecting it. serde_json remains for JWKS documents and as the
//! test oracle: the previous serde-based scanner is kept in the tests, and a proptest checks
//! that both accept and refuse the same documents (random and byte-mutated JSON; the oracle
//! reads them with each lone surrogate escape replaced by `\ufffd`, Go's reading).
//!
//! Measured (callgrind, bench payload of 560 bytes): the validating scan costs ≈ 7.5 k
//! instructions (serde_json two-pass scan + typed decode: ≈ 14 k + 15 k); see
//! [`crate::jwt`] for the per-algorithm figures.
//!
//! ```
//! use kube_authn::jwt::json::scan_object;
//! assert_eq!(scan_object(br#"{"iss":"a","x":{"y":1}}"#).unwrap().as_deref(), Some("a"));
//! assert!(scan_object(br#"{"iss":"a","iss":"b"}"#).is_err());
//! assert!(scan_object(br#"{"a":{"b":1,"b":2}}"#).is_err());
//! assert!(scan_object(br#"{"iss":5}"#).is_err());
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

/// go-jose's text for a non-numeric `exp`/`nbf`/`iat`.
///
/// ```
/// use kube_authn::jwt::json::ERR_NUMERIC_DATE;
/// assert_eq!(ERR_NUMERIC_DATE, "go-jose/go-jose/jwt: expected number value to unmarshal NumericDate");
/// ```
pub const ERR_NUMERIC_DATE: &str =
    "go-jose/go-jose/jwt: expected number value to unmarshal NumericDate";
/// go-jose's text for an `aud` that is neither a string nor an array of strings.
///
/// ```
/// use kube_authn::jwt::json::ERR_AUDIENCE;
/// assert_eq!(
///     ERR_AUDIENCE,
///     "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience"
/// );
/// ```
pub const ERR_AUDIENCE: &str =
    "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience";
/// Our text for a duplicated JSON member name.
///
/// ```
/// use kube_authn::jwt::json::ERR_DUPLICATE;
/// assert_eq!(ERR_DUPLICATE, "duplicate JSON member name");
/// ```
pub const ERR_DUPLICATE: &str = "duplicate JSON member name";

/// Nesting limit: a document may open at most `MAX_DEPTH - 1` (127) arrays/objects inside
/// each other — exactly serde_json's recursion limit, so both decoders accept the same
/// documents.
///
/// ```
/// use kube_authn::jwt::json::{check_no_duplicates, MAX_DEPTH};
/// let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
/// assert!(check_no_duplicates(nest(MAX_DEPTH - 1).as_bytes()).is_ok());
/// assert!(check_no_duplicates(nest(MAX_DEPTH).as_bytes()).is_err());
/// ```
pub const MAX_DEPTH: usize = 128;

/// Checks that `bytes` is one JSON object without duplicate member names (at any depth) and
/// returns its top-level `iss` member. `iss` must be a string (or `null`, read as absent) when
/// present.
///
/// This is the single validating pass the issuer router makes over an untrusted payload
/// ([`validate_object`] without the `iss` capture). Errors carry no part of the input.
///
/// ```
/// use kube_authn::jwt::json::scan_object;
/// assert_eq!(scan_object(br#"{"sub":"x"}"#).unwrap(), None);
/// assert_eq!(scan_object(br#"{"i\u0073s":"a"}"#).unwrap().as_deref(), Some("a"));
/// assert!(scan_object(b"[1]").is_err());
/// ```
pub fn scan_object(bytes: &[u8]) -> Result<Option<Cow<'_, str>>, serde_json::Error> {
    let (text, iss) = scan(bytes, true).map_err(|e| e.into_serde(bytes))?;
    Ok(iss.map(|r| RawJson(&text[r]).string_unchecked()))
}

/// Checks that `bytes` is one JSON object without duplicate member names at any depth and
/// returns a view of its members (see [`RawObject`]).
///
/// ```
/// use kube_authn::jwt::json::validate_object;
/// let o = validate_object(br#"{"a":[1,{"b":null}],"c":"d"}"#).unwrap();
/// assert_eq!(o.get("c").unwrap().as_str().as_deref(), Some("d"));
/// assert!(validate_object(br#"{"a":{"b":1,"b":2}}"#).is_err());
/// ```
pub fn validate_object(bytes: &[u8]) -> Result<RawObject<'_>, serde_json::Error> {
    let (text, _) = scan(bytes, true).map_err(|e| e.into_serde(bytes))?;
    Ok(RawObject::walk(&text[trim_bytes(bytes)]))
}

/// Checks that `bytes` is valid JSON without duplicate member names at any depth.
///
/// ```
/// assert!(kube_authn::jwt::json::check_no_duplicates(br#"[{"a":1},{"a":2}]"#).is_ok());
/// assert!(kube_authn::jwt::json::check_no_duplicates(br#"[{"a":1,"a":2}]"#).is_err());
/// ```
pub fn check_no_duplicates(bytes: &[u8]) -> Result<(), serde_json::Error> {
    scan(bytes, false)
        .map(|_| ())
        .map_err(|e| e.into_serde(bytes))
}

/// Decodes `bytes` into `T` after [`check_no_duplicates`].
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct C { sub: String }
/// let c: C = kube_authn::jwt::json::from_slice_strict(br#"{"sub":"x"}"#).unwrap();
/// assert_eq!(c.sub, "x");
/// ```
pub fn from_slice_strict<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, serde_json::Error> {
    check_no_duplicates(bytes)?;
    serde_json::from_slice(bytes)
}

/// The router's pass over a JWT payload (no error value is built: a refused payload is
/// simply *not a JWT*): the range of the object inside `bytes` (surrounding whitespace
/// trimmed) and the range of its top-level `iss` string (raw, quotes included).
pub(crate) fn scan_jwt_payload(
    bytes: &[u8],
    index: &mut TopIndex,
) -> Option<(Range<usize>, Option<Range<usize>>)> {
    let iss = scan_indexed(bytes, true, true, Some(index)).ok()?;
    Some((trim_bytes(bytes), iss))
}

/// For a payload [`scan_jwt_payload`] refused, kube-apiserver's reading of it, for routing
/// only: `(iss, why the claims are refused)`. kube-apiserver peeks at `iss` with Go's
/// `encoding/json`, where a repeated member name is allowed and the last one wins, and leaves
/// the duplicate to go-jose, which refuses it (`json: duplicate key 'NAME' in object`) after
/// the signature. So a payload whose only fault (up to the first repeat, in document order) is
/// a repeated member name is routed by its last `iss` string, and its claims are refused with
/// go-jose's text naming the first repeat at any depth. `None`: not a JWT payload for anyone:
/// refused by the strict rules for any other reason (invalid UTF-8, a number
/// beyond `f64`, too deep: *not mine*, see docs/compatibility.md), not an object, no string
/// `iss`. Error path only: the scanner runs once more, then serde_json reads the `iss` members.
pub(crate) fn refused_payload(bytes: &[u8]) -> Option<(String, String)> {
    let mut s = Scanner {
        b: bytes,
        i: 0,
        depth: 0,
        iss: None,
        iss_variant: false,
        claims: false,
        index: None,
        names: Names::default(),
    };
    s.ws();
    if s.peek() != Some(b'{') {
        return None;
    }
    let (Err(ScanError::Duplicate), Some(name)) = (s.object(true), s.names.dup) else {
        return None;
    };
    // serde_json refuses lone surrogate escapes as strings: it reads them as Go does.
    let iss = serde_json::from_slice::<GoIssuerPeek>(&go_lone_surrogates(bytes))
        .ok()?
        .0?;
    Some((
        iss,
        format!(
            "json: duplicate key '{}' in object",
            decode_name(bytes, name)
        ),
    ))
}

/// kube-apiserver's unverified issuer peek (`json.Unmarshal` of the payload into a struct with
/// one string field `iss`), over a payload that may repeat member names: every top-level member
/// Go matches to `iss` (case-insensitively: `ISS`, `Iss`, …) is decoded in document order, a
/// string replaces the value, `null` leaves it, any other type fails the peek (`None`, as does
/// an empty result: no issuer is `""`). A value last set by a member not named exactly `iss`
/// is `None` too: the claims are read by exact names, so the router and the verifier would
/// read different issuers.
struct GoIssuerPeek(Option<String>);

impl<'de> Deserialize<'de> for GoIssuerPeek {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = GoIssuerPeek;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<GoIssuerPeek, A::Error> {
                let (mut iss, mut bad, mut variant) = (String::new(), false, false);
                while let Some(name) = map.next_key::<Cow<'de, str>>()? {
                    if folds_to_iss(&name) {
                        match map.next_value::<serde_json::Value>()? {
                            serde_json::Value::String(s) => {
                                iss = s;
                                variant = name != "iss";
                            }
                            serde_json::Value::Null => {}
                            _ => bad = true,
                        }
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                // Routed by a member the claims are not read by (`ISS`): refused, as by the scan.
                Ok(GoIssuerPeek(
                    (!bad && !variant && !iss.is_empty()).then_some(iss),
                ))
            }
        }
        d.deserialize_map(V)
    }
}

/// [`validate_object`] without building an error, reading members through the scan's
/// `index` (no second walk): for the JOSE header, whose errors have one fixed text.
pub(crate) fn validate_object_quiet<'a>(
    bytes: &'a [u8],
    index: &'a mut TopIndex,
) -> Option<RawObject<'a>> {
    scan_indexed(bytes, true, false, Some(&mut *index)).ok()?;
    let text = as_text(bytes).ok()?;
    raw_object_indexed(text, trim_bytes(bytes), index)
}

/// A view of the object at `object` in `doc`, which [`scan_jwt_payload`] accepted and
/// indexed into `index`.
pub(crate) fn raw_object_indexed<'a>(
    doc: &'a str,
    object: Range<usize>,
    index: &'a TopIndex,
) -> Option<RawObject<'a>> {
    Some(RawObject {
        text: doc.get(object)?,
        index: index.members().map(|m| (doc, m)),
    })
}

/// A view of `text`, which must be a value [`scan`] accepted (whitespace trimmed).
pub(crate) fn raw_json_unchecked(text: &str) -> RawJson<'_> {
    RawJson(text)
}

/// Why [`scan`] refused a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScanError {
    Syntax,
    Duplicate,
    Depth,
}

impl ScanError {
    /// The serde_json error callers have always seen: ours for duplicates, serde_json's own
    /// (with its category) for everything else. Error path only.
    fn into_serde(self, bytes: &[u8]) -> serde_json::Error {
        match self {
            ScanError::Duplicate => de::Error::custom(ERR_DUPLICATE),
            ScanError::Depth | ScanError::Syntax => {
                match serde_json::from_slice::<serde_json::Value>(bytes) {
                    Err(e) => e,
                    // Unreachable while the scanner and serde_json agree (a proptest checks
                    // that they do); still an error, never an acceptance.
                    Ok(_) => de::Error::custom("malformed JSON"),
                }
            }
        }
    }
}

/// The validating scanner: RFC 8259 JSON exactly as serde_json accepts it (UTF-8, no control
/// characters in strings, no leading zeros, numbers within `f64`, depth < [`MAX_DEPTH`]) but
/// for lone surrogates in `\u` escapes, which Go accepts (as U+FFFD, see [`unescape`]), plus duplicate member names rejected at every depth.
/// With `object`, the document must be an object and its top-level `iss` (a string or `null`)
/// is returned as the range of its raw value.
///
/// One pass, no allocation for ordinary documents (up to 32 open member names, compared as
/// raw slices; a name with escapes is decoded and compared decoded, so `"i\u0073s"` collides
/// with `iss`).
fn scan(bytes: &[u8], object: bool) -> Result<(&str, Option<Range<usize>>), ScanError> {
    let iss = scan_indexed(bytes, object, object, None)?;
    Ok((as_text(bytes)?, iss))
}

/// The scanned document as text. Every string was checked as it was scanned (so errors come
/// in serde_json's order) and everything outside strings is ASCII: this cannot fail, and is a
/// fast ASCII run; callers that only need ranges skip it.
fn as_text(bytes: &[u8]) -> Result<&str, ScanError> {
    std::str::from_utf8(bytes).map_err(|_| ScanError::Syntax)
}

/// The range of `bytes` without surrounding JSON whitespace.
fn trim_bytes(bytes: &[u8]) -> Range<usize> {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let start = bytes.iter().position(|c| !ws(c)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    start..end
}

/// [`scan`], also recording the top-level members into `index` (when given). `claims`: the
/// document is a claim set, whose top-level `iss` must be a string or `null` (a JOSE header
/// may carry an `iss` of any type: go-jose does not read it).
fn scan_indexed(
    bytes: &[u8],
    object: bool,
    claims: bool,
    mut index: Option<&mut TopIndex>,
) -> Result<Option<Range<usize>>, ScanError> {
    if let Some(index) = index.as_deref_mut() {
        // A reused index starts empty (members of an earlier document never leak in).
        index.len = 0;
        index.overflow = false;
    }
    let mut s = Scanner {
        b: bytes,
        i: 0,
        depth: 0,
        iss: None,
        iss_variant: false,
        claims,
        index,
        names: Names::default(),
    };
    s.ws();
    if object {
        if s.peek() != Some(b'{') {
            return Err(ScanError::Syntax);
        }
        s.object(true)?;
    } else {
        s.value()?;
    }
    s.ws();
    if s.i != bytes.len() {
        return Err(ScanError::Syntax);
    }
    if s.iss_variant {
        // kube-apiserver would route by a member its verifier does not read as `iss`.
        return Err(ScanError::Syntax);
    }
    Ok(s.iss)
}

struct Scanner<'a, 'x> {
    b: &'a [u8],
    i: usize,
    depth: usize,
    iss: Option<Range<usize>>,
    /// The string in `iss` came from a member Go's `encoding/json` matches to `iss` without it
    /// being `iss` (see [`is_iss_variant`]).
    iss_variant: bool,
    /// Capture (and type-check) the top-level `iss`.
    claims: bool,
    index: Option<&'x mut TopIndex>,
    /// Unescaped member names of the objects being scanned, innermost last (see [`Names`]).
    names: Names,
}

/// How many top-level members the validating scan records (a Kubernetes service-account
/// token has 12, an ID token ~10–20); objects with more are walked instead.
const TOP_CAP: usize = 24;

/// One recorded top-level member: byte offsets of the raw name (between the quotes) and of
/// the value, in the scanned document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TopMember {
    key: (u32, u32),
    value: (u32, u32),
    /// The raw name's [`fingerprint`] ([`RawObject::get`] compares one word per member), or
    /// [`NO_FP`] when the name has escapes.
    fp: u64,
}

impl TopMember {
    fn escaped(&self) -> bool {
        self.fp == NO_FP
    }
}

/// The top-level members of a validated object, recorded by the validating scan so that
/// readers do not walk the top level again (see [`RawObject::iter`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TopIndex {
    items: [TopMember; TOP_CAP],
    len: usize,
    overflow: bool,
}

impl Default for TopIndex {
    fn default() -> Self {
        TopIndex {
            items: [TopMember::default(); TOP_CAP],
            len: 0,
            overflow: false,
        }
    }
}

impl TopIndex {
    fn members(&self) -> Option<&[TopMember]> {
        (!self.overflow).then(|| &self.items[..self.len])
    }
}

/// A member name as scanned: its raw text range (between the quotes) and whether it has
/// escapes.
#[derive(Clone, Copy, Default)]
struct NameRef {
    start: usize,
    end: usize,
    escaped: bool,
}

impl Scanner<'_, '_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), ScanError> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(ScanError::Syntax)
        }
    }

    /// One value of any type. Inlined into the container loops so that scalars (most of a JWT)
    /// cost no call; only nested objects and arrays recurse.
    #[inline(always)]
    fn value(&mut self) -> Result<(), ScanError> {
        match self.peek() {
            Some(b'{') => self.object(false),
            Some(b'[') => self.array(),
            Some(b'"') => {
                self.i += 1;
                self.string().map(|_| ())
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(ScanError::Syntax),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), ScanError> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(ScanError::Syntax)
        }
    }

    fn enter(&mut self) -> Result<(), ScanError> {
        self.depth += 1;
        if self.depth >= MAX_DEPTH {
            return Err(ScanError::Depth);
        }
        self.i += 1;
        Ok(())
    }

    fn array(&mut self) -> Result<(), ScanError> {
        self.enter()?;
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(ScanError::Syntax),
            }
        }
    }

    fn object(&mut self, top: bool) -> Result<(), ScanError> {
        self.enter()?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        let base = self.names.len;
        let mut decoded = None;
        loop {
            self.expect(b'"')?;
            let name = self.string()?;
            let fp = match self.names.insert(self.b, base, &mut decoded, name) {
                Ok(fp) => fp,
                Err(e) => {
                    self.names.dup = Some(name);
                    return Err(e);
                }
            };
            self.ws();
            self.expect(b':')?;
            self.ws();
            let start = self.i;
            self.value()?;
            if top {
                if self.claims {
                    let exact = name_is(self.b, name, "iss");
                    if exact || is_iss_variant(self.b, name) {
                        // Go's peek: a string replaces the value, `null` leaves it.
                        match self.b[start] {
                            b'"' => {
                                self.iss = Some(start..self.i);
                                self.iss_variant = !exact;
                            }
                            b'n' => {}
                            _ => return Err(ScanError::Syntax),
                        }
                    }
                }
                if let Some(index) = self.index.as_deref_mut() {
                    if index.len < TOP_CAP && self.i <= u32::MAX as usize {
                        index.items[index.len] = TopMember {
                            key: (name.start as u32, name.end as u32),
                            value: (start as u32, self.i as u32),
                            fp,
                        };
                        index.len += 1;
                    } else {
                        index.overflow = true;
                    }
                }
            }
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    self.names.len = base;
                    return Ok(());
                }
                _ => return Err(ScanError::Syntax),
            }
        }
    }

    /// A string body (after the opening quote), through the closing quote.
    #[inline(always)]
    fn string(&mut self) -> Result<NameRef, ScanError> {
        let start = self.i;
        let mut escaped = false;
        let mut non_ascii = false;
        loop {
            self.i = find_special(self.b, self.i);
            match self.peek() {
                Some(c) if c >= 0x80 => {
                    non_ascii = true;
                    self.i += 1;
                }
                Some(b'"') => {
                    let end = self.i;
                    if non_ascii && std::str::from_utf8(&self.b[start..end]).is_err() {
                        return Err(ScanError::Syntax);
                    }
                    self.i += 1;
                    return Ok(NameRef {
                        start,
                        end,
                        escaped,
                    });
                }
                Some(b'\\') => {
                    escaped = true;
                    self.i += 1;
                    self.escape()?;
                }
                _ => return Err(ScanError::Syntax),
            }
        }
    }

    fn escape(&mut self) -> Result<(), ScanError> {
        match self.peek() {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.i += 1;
                Ok(())
            }
            // Any four hex digits: a surrogate escape that is not half of a valid pair is
            // valid JSON to Go and decodes to U+FFFD (see [`unescape`]).
            Some(b'u') => {
                self.i += 1;
                self.hex4().map(|_| ())
            }
            _ => Err(ScanError::Syntax),
        }
    }

    fn hex4(&mut self) -> Result<u32, ScanError> {
        let digits = self.b.get(self.i..self.i + 4).ok_or(ScanError::Syntax)?;
        let mut n = 0;
        for &d in digits {
            n = n * 16 + (d as char).to_digit(16).ok_or(ScanError::Syntax)?;
        }
        self.i += 4;
        Ok(n)
    }

    /// Skips a run of ASCII digits (eight per step: a NumericDate is ten) and returns its
    /// length.
    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(c) = self.b.get(self.i..self.i + 8) {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            let low = w & !HIGHS;
            // High bit of each byte that is not a digit: `>= 0x80`, `< '0'` or `> '9'` (no
            // carries between bytes: every addend stays below 0x100).
            let not_digit =
                (w | !(low + ONES * (0x80 - b'0') as u64) | (low + ONES * (0x80 - b':') as u64))
                    & HIGHS;
            if not_digit != 0 {
                self.i += (not_digit.trailing_zeros() / 8) as usize;
                return self.i - start;
            }
            self.i += 8;
        }
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<(), ScanError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.i += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(ScanError::Syntax);
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(ScanError::Syntax),
        }
        let mut simple = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(ScanError::Syntax);
            }
            simple = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(ScanError::Syntax);
            }
            simple = false;
        }
        // Up to 18 digits always fits an f64; anything else is range-checked exactly as
        // serde_json does (it refuses numbers that overflow to infinity).
        if !simple || self.i - start > 18 {
            let text =
                std::str::from_utf8(&self.b[start..self.i]).map_err(|_| ScanError::Syntax)?;
            serde_json::from_str::<f64>(text).map_err(|_| ScanError::Syntax)?;
        }
        Ok(())
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `w` equal to `c` (exact for the lowest such byte; bytes above
/// it may be flagged spuriously, which first-match callers never see).
#[inline(always)]
fn bytes_eq(w: u64, c: u8) -> u64 {
    let x = w ^ (ONES * c as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Index of the first byte at or after `i` that is `"`, `\`, a control character or
/// non-ASCII (or `b.len()`): eight bytes per step (SWAR), since strings are most of a JWT.
#[inline]
pub(crate) fn find_special(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // Bytes < 0x20 borrow (high bit set); bytes >= 0x80 have it already.
        let special =
            bytes_eq(w, b'"') | bytes_eq(w, b'\\') | ((w.wrapping_sub(ONES * 0x20) | w) & HIGHS);
        if special != 0 {
            return i + (special.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c) {
            break;
        }
        i += 1;
    }
    i
}

/// Index of the first `"` or `\` at or after `i` (or `b.len()`), eight bytes per step.
#[inline]
fn find_quote_or_escape(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let hit = bytes_eq(w, b'"') | bytes_eq(w, b'\\');
        if hit != 0 {
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' {
            break;
        }
        i += 1;
    }
    i
}

/// Whether the scanned name `n` is `want` (decoding escapes when it has any).
#[inline]
fn name_is(b: &[u8], n: NameRef, want: &str) -> bool {
    let raw = &b[n.start..n.end];
    if n.escaped {
        unescape(raw) == want
    } else {
        raw == want.as_bytes()
    }
}

/// Whether the scanned name `n` is one that Go's `encoding/json` matches to the field `iss`
/// (case-insensitively, `ſ` U+017F folding onto `s`) without it being `iss`: `ISS`, `Iss`,
/// `iſs`, … kube-apiserver's issuer peek reads the last such member (or `iss`) that holds a
/// string, while the claims are read with exact names; a payload whose peeked issuer comes
/// from such a member is refused (*not mine*, docs/compatibility.md).
#[inline]
fn is_iss_variant(b: &[u8], n: NameRef) -> bool {
    let raw = &b[n.start..n.end];
    // Unescaped: three characters, `ſ` two bytes each, starting with `i` or `I`.
    let plausible = (3..=5).contains(&raw.len()) && matches!(raw[0], b'i' | b'I');
    if !n.escaped && !plausible {
        return false;
    }
    let decoded;
    let name = if n.escaped {
        decoded = unescape(raw);
        decoded.as_str()
    } else {
        match std::str::from_utf8(raw) {
            Ok(name) => name,
            Err(_) => return false,
        }
    };
    name != "iss" && folds_to_iss(name)
}

/// Go's `bytes.EqualFold(name, "iss")`.
fn folds_to_iss(name: &str) -> bool {
    let mut c = name.chars();
    matches!(
        (c.next(), c.next(), c.next(), c.next()),
        (
            Some('i' | 'I'),
            Some('s' | 'S' | '\u{17F}'),
            Some('s' | 'S' | '\u{17F}'),
            None
        )
    )
}

/// How many unescaped member names the scan keeps on its stack, over all open objects.
const NAME_STACK: usize = 32;

/// Member names seen so far, for the duplicate check: one stack shared by every open object
/// (an object's names sit above its parent's and are dropped when it closes), so nesting costs
/// no stack space per level. Each entry is a one-word fingerprint (length and first seven bytes)
/// and the raw range: most pairs are told apart by one integer comparison, names of up to seven
/// bytes entirely. An object with a name that has escapes, or whose names do not fit, switches
/// to a set of decoded names of its own (each name decoded once: no quadratic decoding an
/// attacker could aim at; SipHash, so no chosen-bucket collisions).
struct Names {
    stack: [(u64, u32, u32); NAME_STACK],
    len: usize,
    /// The name that was found twice (set when the scan fails with [`ScanError::Duplicate`]).
    dup: Option<NameRef>,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            stack: [(0, 0, 0); NAME_STACK],
            len: 0,
            dup: None,
        }
    }
}

/// The name's length in the top byte (saturated) and its first (up to seven) bytes below it:
/// equal names have equal fingerprints. The closing quote follows a name in the document, so
/// eight bytes can usually be read at once.
#[inline]
fn fingerprint(b: &[u8], start: usize, end: usize) -> u64 {
    let head = match b.get(start..start + 8) {
        Some(w) => u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]),
        None => b[start..]
            .iter()
            .take(8)
            .rev()
            .fold(0u64, |acc, &c| acc << 8 | u64::from(c)),
    };
    let len = end - start;
    let mask = (1u64 << (len.min(7) * 8)) - 1;
    (head & mask) | (len.min(255) as u64) << 56
}

/// [`fingerprint`] of a name given as bytes (not in a document).
#[inline]
fn fingerprint_of(name: &[u8]) -> u64 {
    let mut head = [0u8; 8];
    let n = name.len().min(7);
    head[..n].copy_from_slice(&name[..n]);
    u64::from_le_bytes(head) | (name.len().min(255) as u64) << 56
}

impl Names {
    /// Adds `n` to the object whose names start at `base` on the stack (or to its decoded
    /// set, `decoded`, once it has one).
    fn insert(
        &mut self,
        b: &[u8],
        base: usize,
        decoded: &mut Option<HashSet<String>>,
        n: NameRef,
    ) -> Result<u64, ScanError> {
        let small = match (u32::try_from(n.start), u32::try_from(n.end)) {
            (Ok(s), Ok(e)) if !n.escaped && decoded.is_none() && self.len < NAME_STACK => {
                Some((s, e))
            }
            _ => None,
        };
        let Some((start, end)) = small else {
            let set = decoded.get_or_insert_with(|| {
                self.stack[base..self.len]
                    .iter()
                    .map(|&(_, s, e)| unescape(&b[s as usize..e as usize]))
                    .collect()
            });
            return if set.insert(decode_name(b, n)) {
                Ok(if n.escaped {
                    NO_FP
                } else {
                    fingerprint(b, n.start, n.end)
                })
            } else {
                Err(ScanError::Duplicate)
            };
        };
        // Unescaped names only: raw comparison is exact.
        let fp = fingerprint(b, n.start, n.end);
        let long = n.end - n.start > 7;
        let raw = &b[n.start..n.end];
        if self.stack[base..self.len]
            .iter()
            .any(|&(f, s, e)| f == fp && (!long || &b[s as usize..e as usize] == raw))
        {
            return Err(ScanError::Duplicate);
        }
        self.stack[self.len] = (fp, start, end);
        self.len += 1;
        Ok(fp)
    }
}

/// The [`TopMember::fp`] of a name with escapes: no [`fingerprint`] is all ones (its bytes
/// would be `0xFF`, which is never in a JSON string), so [`RawObject::get`]'s one-word
/// comparison never matches it and the decoding walk decides.
const NO_FP: u64 = u64::MAX;

/// `bytes` with each `\uXXXX` surrogate escape that is not half of a valid pair replaced by
/// `\ufffd` (same length, so every other offset is unchanged), which is how Go's
/// `encoding/json` reads it and how this module's decoder reads it: for serde_json, which
/// refuses such escapes in strings. Backslashes occur only inside strings in valid JSON; an
/// invalid document stays invalid. Borrowed when there is nothing to replace.
///
/// Used on error paths, by the server's request decoding, and as the serde_json oracle's
/// input in tests and fuzz targets; not on the request path.
///
/// ```
/// use kube_authn::jwt::json::go_lone_surrogates;
///
/// // A lone high surrogate, and one followed by a letter: U+FFFD, as Go reads them.
/// let go = go_lone_surrogates(br#"{"a":"\ud800","b":"\ud800\u0041"}"#);
/// assert_eq!(&*go, br#"{"a":"\ufffd","b":"\ufffd\u0041"}"#);
/// let v: serde_json::Value = serde_json::from_slice(&go).unwrap();
/// assert_eq!(v["a"], "\u{fffd}");
/// // A valid pair and an escaped backslash stay as they are (and borrowed).
/// let kept = br#"{"a":"\ud83d\ude00","b":"\\ud800"}"#;
/// assert!(matches!(go_lone_surrogates(kept), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn go_lone_surrogates(bytes: &[u8]) -> Cow<'_, [u8]> {
    let unit = |b: &[u8], i: usize| -> Option<u32> {
        let d = b.get(i..i + 6)?;
        if d[0] != b'\\' || d[1] != b'u' || !d[2..].iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        std::str::from_utf8(&d[2..])
            .ok()
            .and_then(|s| u32::from_str_radix(s, 16).ok())
    };
    let mut out = Cow::Borrowed(bytes);
    let mut i = 0;
    while let Some(at) = bytes
        .get(i..)
        .and_then(|r| r.iter().position(|&c| c == b'\\'))
    {
        i += at;
        match unit(bytes, i) {
            Some(0xD800..=0xDBFF) if matches!(unit(bytes, i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
            Some(0xD800..=0xDFFF) => {
                out.to_mut()[i..i + 6].copy_from_slice(b"\\ufffd");
                i += 6;
            }
            _ => i += 2,
        }
    }
    out
}

fn decode_name(b: &[u8], n: NameRef) -> String {
    unescape(&b[n.start..n.end])
}

/// Decodes the body of a JSON string the scanner accepted, as Go's `encoding/json`
/// (`unquoteBytes`) and go-jose's fork of it decode it: a `\uXXXX` high surrogate directly
/// followed by a `\uXXXX` low surrogate is one character; any other surrogate escape (a lone
/// high or low one, a high one followed by anything else, a low one before a high one) is
/// U+FFFD on its own, and what follows it is decoded as usual (`\ud800\u0041` is `\u{FFFD}A`,
/// `\ud800\ud800` two U+FFFD). Never panics: on input the scanner would have refused it
/// substitutes U+FFFD rather than failing.
fn unescape(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    // The code unit of a `\uXXXX` escape at `i`.
    let u4 = |i: usize| -> Option<u32> {
        let d = raw.get(i..i + 6)?;
        if d[0] != b'\\' || d[1] != b'u' {
            return None;
        }
        std::str::from_utf8(&d[2..])
            .ok()
            .and_then(|s| u32::from_str_radix(s, 16).ok())
    };
    while i < raw.len() {
        let run = raw[i..]
            .iter()
            .position(|&c| c == b'\\')
            .unwrap_or(raw.len() - i);
        out.push_str(&String::from_utf8_lossy(&raw[i..i + run]));
        i += run;
        if i >= raw.len() {
            break;
        }
        if raw.get(i + 1) == Some(&b'u') {
            let unit = u4(i).unwrap_or(0xFFFD);
            i += 6;
            let pair = match (unit, u4(i)) {
                (0xD800..=0xDBFF, Some(lo @ 0xDC00..=0xDFFF)) => {
                    i += 6;
                    Some(0x10000 + ((unit - 0xD800) << 10) + (lo - 0xDC00))
                }
                _ => None,
            };
            // A surrogate that is not half of a pair: `from_u32` refuses it.
            out.push(char::from_u32(pair.unwrap_or(unit)).unwrap_or('\u{FFFD}'));
            continue;
        }
        let c = match raw.get(i + 1) {
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(&c) => c as char,
            None => '\u{FFFD}',
        };
        out.push(c);
        i += 2;
    }
    out
}

/// The raw text of one JSON value inside a document the scanner validated (so walking it
/// needs no further checks). Strings borrow from the document unless they have escapes.
///
/// ```
/// use kube_authn::jwt::json::validate_object;
/// let o = validate_object(br#"{"a":"x\ny","n":null,"o":{"k":[1]}}"#).unwrap();
/// assert_eq!(o.get("a").unwrap().as_str().as_deref(), Some("x\ny"));
/// assert!(o.get("n").unwrap().is_null());
/// assert_eq!(o.get("o").unwrap().as_object().unwrap().get("k").unwrap().text(), "[1]");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawJson<'a>(&'a str);

impl<'a> RawJson<'a> {
    /// The value's JSON text.
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(br#"{"a": [1, 2] }"#).unwrap();
    /// assert_eq!(o.get("a").unwrap().text(), "[1, 2]");
    /// ```
    pub fn text(&self) -> &'a str {
        self.0
    }

    /// Whether the value is `null`.
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(br#"{"a":null}"#).unwrap();
    /// assert!(o.get("a").unwrap().is_null());
    /// ```
    pub fn is_null(&self) -> bool {
        self.0.starts_with('n')
    }

    /// The decoded string, if the value is a string (borrowed unless it has escapes).
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(br#"{"a":"\u0041","b":1}"#).unwrap();
    /// assert_eq!(o.get("a").unwrap().as_str().as_deref(), Some("A"));
    /// assert_eq!(o.get("b").unwrap().as_str(), None);
    /// ```
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        self.0.starts_with('"').then(|| self.string_unchecked())
    }

    fn string_unchecked(&self) -> Cow<'a, str> {
        let body = self.0.get(1..self.0.len().saturating_sub(1)).unwrap_or("");
        if has_escape(body.as_bytes()) {
            Cow::Owned(unescape(body.as_bytes()))
        } else {
            Cow::Borrowed(body)
        }
    }

    /// The members, if the value is an object.
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(br#"{"a":{"b":2}}"#).unwrap();
    /// assert_eq!(o.get("a").unwrap().as_object().unwrap().get("b").unwrap().text(), "2");
    /// ```
    pub fn as_object(&self) -> Option<RawObject<'a>> {
        self.0.starts_with('{').then_some(RawObject::walk(self.0))
    }

    /// The elements, if the value is an array.
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(br#"{"a":["x", 2]}"#).unwrap();
    /// let items: Vec<_> = o.get("a").unwrap().as_array().unwrap().map(|v| v.text()).collect();
    /// assert_eq!(items, [r#""x""#, "2"]);
    /// ```
    pub fn as_array(&self) -> Option<Elements<'a>> {
        self.0
            .starts_with('[')
            .then_some(Elements { s: self.0, i: 1 })
    }
}

/// A JSON object the scanner validated: its members in document order, names decoded
/// (borrowed unless escaped). Lookups are linear (JWT objects have ~10 members; names are
/// unique, so the first match is the only one).
///
/// ```
/// let o = kube_authn::jwt::json::validate_object(br#"{"b":1,"a":2}"#).unwrap();
/// let names: Vec<_> = o.iter().map(|(k, _)| k).collect();
/// assert_eq!(names, ["b", "a"]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RawObject<'a> {
    text: &'a str,
    /// The scanned document and the members its validating scan recorded, when it did.
    index: Option<(&'a str, &'a [TopMember])>,
}

impl fmt::Debug for RawObject<'_> {
    /// The object's text, once (not the scanned document its index points into again).
    ///
    /// ```
    /// // {"iss":"a","exp":5}: a JWT's claims carry the scan's index
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse("e30.eyJpc3MiOiJhIiwiZXhwIjo1fQ.").unwrap();
    /// let claims = jwt.claims().unwrap();
    /// assert_eq!(format!("{claims:?}"), r#"RawObject { text: "{\"iss\":\"a\",\"exp\":5}", indexed: true }"#);
    /// let o = kube_authn::jwt::json::validate_object(br#"{"a":1}"#).unwrap();
    /// assert_eq!(format!("{o:?}"), r#"RawObject { text: "{\"a\":1}", indexed: false }"#);
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawObject")
            .field("text", &self.text)
            .field("indexed", &self.index.is_some())
            .finish()
    }
}

impl<'a> RawObject<'a> {
    fn walk(text: &'a str) -> Self {
        RawObject { text, index: None }
    }

    /// The members in document order.
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(b"{}").unwrap();
    /// assert_eq!(o.iter().count(), 0);
    /// ```
    pub fn iter(&self) -> Members<'a> {
        Members {
            s: self.text,
            i: 1,
            index: self.index,
        }
    }

    /// The member called `name` (compared after decoding escapes).
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(br#"{"i\u0073s":"x"}"#).unwrap();
    /// assert_eq!(o.get("iss").unwrap().text(), r#""x""#);
    /// ```
    pub fn get(&self, name: &str) -> Option<RawJson<'a>> {
        // Indexed (a JWT payload): compare raw names, length first, without building a key
        // per member. Names are unique after decoding (the scan refused duplicates), so a raw
        // match is the match; only an object with an escaped name needs the decoding walk.
        if let Some((doc, items)) = self.index {
            let want = name.as_bytes();
            let d = doc.as_bytes();
            let raw = |m: &TopMember| d.get(m.key.0 as usize..m.key.1 as usize);
            // One word per member: the fingerprint holds the length and the first seven bytes,
            // so it decides names of up to seven bytes (every registered claim) alone; longer
            // ones are compared in full.
            let fp = fingerprint_of(want);
            let hit = items
                .iter()
                .find(|m| m.fp == fp && (want.len() <= 7 || raw(m) == Some(want)));
            if let Some(m) = hit {
                return doc.get(m.value.0 as usize..m.value.1 as usize).map(RawJson);
            }
            if !items.iter().any(TopMember::escaped) {
                return None;
            }
        }
        self.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The object's JSON text.
    ///
    /// ```
    /// let o = kube_authn::jwt::json::validate_object(br#" {"a":1} "#).unwrap();
    /// assert_eq!(o.text(), r#"{"a":1}"#);
    /// ```
    pub fn text(&self) -> &'a str {
        self.text
    }
}

/// Iterator over a [`RawObject`]'s members (see [`RawObject::iter`]): decoded name and raw
/// value, in document order.
///
/// ```
/// let o = kube_authn::jwt::json::validate_object(br#"{"ab":[1]}"#).unwrap();
/// let mut m = o.iter();
/// let (name, value) = m.next().unwrap();
/// assert_eq!((&*name, value.text()), ("ab", "[1]"));
/// assert!(m.next().is_none());
/// ```
#[derive(Clone)]
pub struct Members<'a> {
    s: &'a str,
    i: usize,
    index: Option<(&'a str, &'a [TopMember])>,
}

impl fmt::Debug for Members<'_> {
    /// How many members are left when that is known (an indexed object), not the document.
    ///
    /// ```
    /// // {"iss":"a","exp":5}
    /// let jwt = kube_authn::jwt::compact::UntrustedJwt::parse("e30.eyJpc3MiOiJhIiwiZXhwIjo1fQ.").unwrap();
    /// let mut m = jwt.claims().unwrap().iter();
    /// m.next();
    /// assert_eq!(format!("{m:?}"), "Members { left: Some(1), .. }");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Members")
            .field("left", &self.index.map(|(_, items)| items.len()))
            .finish_non_exhaustive()
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (Cow<'a, str>, RawJson<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some((doc, items)) = &mut self.index {
            let (m, rest) = items.split_first()?;
            *items = rest;
            let raw_key = doc.get(m.key.0 as usize..m.key.1 as usize)?;
            let key = if m.escaped() {
                Cow::Owned(unescape(raw_key.as_bytes()))
            } else {
                Cow::Borrowed(raw_key)
            };
            let value = doc.get(m.value.0 as usize..m.value.1 as usize)?;
            return Some((key, RawJson(value)));
        }
        let b = self.s.as_bytes();
        let mut i = skip_ws(b, self.i);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
        if b.get(i) != Some(&b'"') {
            self.i = b.len();
            return None;
        }
        let (key_end, escaped) = skip_name(b, i);
        let raw_key = self.s.get(i + 1..key_end.saturating_sub(1))?;
        let key = if escaped {
            Cow::Owned(unescape(raw_key.as_bytes()))
        } else {
            Cow::Borrowed(raw_key)
        };
        i = skip_ws(b, key_end);
        i = skip_ws(b, i + 1); // `:`
        let end = skip_value(b, i);
        let value = self.s.get(i..end)?;
        self.i = end;
        Some((key, RawJson(value)))
    }
}

/// Iterator over a JSON array's elements (see [`RawJson::as_array`]).
///
/// ```
/// let o = kube_authn::jwt::json::validate_object(br#"{"a":[ "x" , {"y":[]} ]}"#).unwrap();
/// let items: Vec<_> = o.get("a").unwrap().as_array().unwrap().map(|v| v.text()).collect();
/// assert_eq!(items, [r#""x""#, r#"{"y":[]}"#]);
/// ```
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = RawJson<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.s.as_bytes();
        let mut i = skip_ws(b, self.i);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
        if matches!(b.get(i), None | Some(b']')) {
            self.i = b.len();
            return None;
        }
        let end = skip_value(b, i);
        let value = self.s.get(i..end)?;
        self.i = end;
        Some(RawJson(value))
    }
}

/// One forward pass over a validated value, for readers that decode nested objects: each
/// member's value is read where it stands (a string is scanned once, for its end and its
/// escapes together; a nested object is walked once, by its reader), instead of being
/// skipped by the iterator and walked again by the reader ([`Members`]). Used for the
/// service account's `kubernetes.io` claim. Never panics, whatever the text.
pub(crate) struct Cursor<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `v`.
    pub(crate) fn new(v: RawJson<'a>) -> Self {
        Cursor { s: v.0, i: 0 }
    }

    /// The first byte of the value at the cursor (`"`, `{`, `[`, `n`, `t`, `f`, or a number's).
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    /// The value at the cursor, raw, moving past it.
    pub(crate) fn value(&mut self) -> RawJson<'a> {
        let end = skip_value(self.s.as_bytes(), self.i);
        let v = self.s.get(self.i..end).unwrap_or("");
        self.i = end;
        RawJson(v)
    }

    /// A string claim at the cursor: `null` is `None`, any type but string is
    /// [`ERR_CLAIM_TYPE`] (as [`opt_str`]).
    pub(crate) fn opt_str(&mut self) -> Result<Option<Cow<'a, str>>, &'static str> {
        match self.peek() {
            Some(b'"') => {
                let (end, escaped) = skip_name(self.s.as_bytes(), self.i);
                let body = self.s.get(self.i + 1..end.saturating_sub(1)).unwrap_or("");
                self.i = end;
                Ok(Some(if escaped {
                    Cow::Owned(unescape(body.as_bytes()))
                } else {
                    Cow::Borrowed(body)
                }))
            }
            Some(b'n') => {
                self.i += 4;
                Ok(None)
            }
            _ => Err(ERR_CLAIM_TYPE),
        }
    }

    /// Walks the object at the cursor, calling `f` with each member's decoded name and the
    /// cursor at its value; `f` reads the value or leaves it (then it is skipped). The cursor
    /// ends after the object. Not an object: nothing is called.
    pub(crate) fn members(
        &mut self,
        mut f: impl FnMut(&str, &mut Cursor<'a>) -> Result<(), &'static str>,
    ) -> Result<(), &'static str> {
        let b = self.s.as_bytes();
        if b.get(self.i) != Some(&b'{') {
            return Ok(());
        }
        let mut i = self.i + 1;
        loop {
            i = skip_ws(b, i);
            if b.get(i) == Some(&b',') {
                i = skip_ws(b, i + 1);
            }
            if b.get(i) != Some(&b'"') {
                // `}` (or the end of a text the scanner would have refused).
                self.i = (i + 1).min(b.len());
                return Ok(());
            }
            let (name_end, escaped) = skip_name(b, i);
            let raw = self.s.get(i + 1..name_end.saturating_sub(1)).unwrap_or("");
            i = skip_ws(b, name_end);
            i = skip_ws(b, i + 1); // `:`
            self.i = i;
            if escaped {
                f(&unescape(raw.as_bytes()), self)?;
            } else {
                f(raw, self)?;
            }
            if self.i == i {
                self.i = skip_value(b, i);
            }
            i = self.i;
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// End (exclusive) of the string starting with the quote at `i`.
fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    loop {
        i = find_quote_or_escape(b, i);
        match b.get(i) {
            Some(b'"') => return i + 1,
            Some(_) => i += 2,
            None => return b.len(),
        }
    }
}

/// End (exclusive) of the string starting with the quote at `i`, and whether it has escapes
/// (for member names: the caller then decodes them without searching again).
#[inline]
fn skip_name(b: &[u8], i: usize) -> (usize, bool) {
    let at = find_quote_or_escape(b, i + 1);
    match b.get(at) {
        Some(b'"') => (at + 1, false),
        Some(_) => (skip_string(b, i), true),
        None => (b.len(), false),
    }
}

/// Whether the body of a validated string (between its quotes, so it holds no bare `"`) has
/// an escape: eight bytes per step, no call (the bodies are short: names, uids).
#[inline]
fn has_escape(body: &[u8]) -> bool {
    find_quote_or_escape(body, 0) < body.len()
}

/// End (exclusive) of the (valid) value starting at `i`.
fn skip_value(b: &[u8], mut i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => skip_string(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            while let Some(&c) = b.get(i) {
                match c {
                    b'"' => {
                        i = skip_string(b, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            b.len()
        }
        _ => {
            while let Some(&c) = b.get(i) {
                if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                i += 1;
            }
            i
        }
    }
}

/// A JSON member name, borrowed when it has no escapes (the serde oracle's key type).
#[cfg(test)]
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

#[cfg(test)]
impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A JWT NumericDate: seconds since the epoch. Accepts any JSON number (fractions truncated,
/// as go-jose does); rejects strings, booleans, arrays, objects and numbers outside `i64`.
/// Use it as `Option<NumericDate>`: absent or `null` is `None` (as Go decodes `null` into a
/// nil pointer), any other wrong type is an error.
///
/// ```
/// use kube_authn::jwt::json::NumericDate;
/// #[derive(serde::Deserialize)]
/// struct C { exp: Option<NumericDate> }
/// let c: C = serde_json::from_str(r#"{"exp": 1700000000.9}"#).unwrap();
/// assert_eq!(c.exp, Some(NumericDate(1700000000)));
/// assert!(serde_json::from_str::<C>(r#"{"exp": "1700000000"}"#).is_err());
/// assert!(serde_json::from_str::<C>(r#"{"exp": null}"#).unwrap().exp.is_none());
/// assert!(serde_json::from_str::<C>(r#"{}"#).unwrap().exp.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NumericDate(pub i64);

impl<'de> Deserialize<'de> for NumericDate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'v> Visitor<'v> for V {
            type Value = NumericDate;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<NumericDate, E> {
                Ok(NumericDate(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<NumericDate, E> {
                i64::try_from(v)
                    .map(NumericDate)
                    .map_err(|_| E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<NumericDate, E> {
                // i64::MAX as f64 rounds up to 2^63, which is out of range: use `<`.
                if v.is_finite() && v >= i64::MIN as f64 && v < i64::MAX as f64 {
                    Ok(NumericDate(v.trunc() as i64))
                } else {
                    Err(E::custom(ERR_NUMERIC_DATE))
                }
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_unit<E: de::Error>(self) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_none<E: de::Error>(self) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_seq<A: SeqAccess<'v>>(self, _: A) -> Result<NumericDate, A::Error> {
                Err(de::Error::custom(ERR_NUMERIC_DATE))
            }
            fn visit_map<A: MapAccess<'v>>(self, _: A) -> Result<NumericDate, A::Error> {
                Err(de::Error::custom(ERR_NUMERIC_DATE))
            }
        }
        d.deserialize_any(V)
    }
}

impl NumericDate {
    /// The seconds go-jose's `NumericDate.Time()` stands for, or `None` when that Go time
    /// overflows (so lies in the far past: an `exp` there has expired). go-jose reads the
    /// claim with `strconv.ParseFloat` and converts the float to `int64`: above 2^53 the
    /// seconds round to a float (steps of 1024 near 2^63), a float of 2^63 is out of `int64`
    /// (amd64 gives `MinInt64`), and `time.Unix` wraps past `MaxInt64 − 62135596800`
    /// ([`go_unix_overflows`](crate::jwt::go_unix_overflows)).
    ///
    /// ```
    /// use kube_authn::jwt::json::NumericDate;
    /// assert_eq!(NumericDate(1_700_000_000).go_jose_unix(), Some(1_700_000_000));
    /// // 2^63 − 62135596801 rounds down to a representable time, 2^63 − 62135596289 up past it.
    /// assert!(NumericDate(9_223_371_974_719_179_008).go_jose_unix().is_some());
    /// assert_eq!(NumericDate(9_223_371_974_719_179_519).go_jose_unix(), None);
    /// assert_eq!(NumericDate(i64::MAX).go_jose_unix(), None);
    /// assert_eq!(NumericDate(i64::MIN).go_jose_unix(), Some(i64::MIN));
    /// ```
    pub fn go_jose_unix(self) -> Option<i64> {
        let f = self.0 as f64;
        // An i64 rounds to at most 2^63 (i64::MAX as f64 is 2^63): out of int64 in Go.
        if f >= i64::MAX as f64 {
            return None;
        }
        let sec = f as i64;
        (!crate::jwt::go_unix_overflows(sec)).then_some(sec)
    }

    /// Decodes a claim value from a validated payload with the same rules as the serde
    /// implementation: `null` is `None`, a number in `i64` range (fractions truncated) is
    /// `Some`, anything else is [`ERR_NUMERIC_DATE`].
    ///
    /// ```
    /// use kube_authn::jwt::json::{validate_object, NumericDate, ERR_NUMERIC_DATE};
    /// let o = validate_object(br#"{"a":17.9,"b":null,"c":"1","d":1e30}"#).unwrap();
    /// assert_eq!(NumericDate::from_raw(o.get("a").unwrap()), Ok(Some(NumericDate(17))));
    /// assert_eq!(NumericDate::from_raw(o.get("b").unwrap()), Ok(None));
    /// assert_eq!(NumericDate::from_raw(o.get("c").unwrap()), Err(ERR_NUMERIC_DATE));
    /// assert_eq!(NumericDate::from_raw(o.get("d").unwrap()), Err(ERR_NUMERIC_DATE));
    /// ```
    pub fn from_raw(v: RawJson<'_>) -> Result<Option<NumericDate>, &'static str> {
        let t = v.text();
        match t.as_bytes().first() {
            Some(b'n') => Ok(None),
            Some(b'-' | b'0'..=b'9') => {
                if let Some(n) = small_integer(t.as_bytes()) {
                    return Ok(Some(NumericDate(n)));
                }
                // Fractions, exponents, integers outside i64: serde_json's own f64 reading,
                // then the serde rule.
                serde_json::from_str::<NumericDate>(t)
                    .map(Some)
                    .map_err(|_| ERR_NUMERIC_DATE)
            }
            _ => Err(ERR_NUMERIC_DATE),
        }
    }
}

/// A JSON integer of at most 18 digits (so it cannot overflow), as `i64`: the common
/// `exp`/`iat`/`nbf` without `str::parse`'s generic path. `None` for anything else
/// (fractions, exponents, longer integers), which the caller reads the general way.
#[inline]
fn small_integer(t: &[u8]) -> Option<i64> {
    let (negative, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut n: i64 = 0;
    let mut rest = digits;
    // Eight digits per step (a NumericDate is ten): check them all in one word, then combine
    // pairs, quads and the two halves with three multiplications.
    while let Some((head, tail)) = rest.split_first_chunk::<8>() {
        let w = u64::from_le_bytes(*head);
        // Every byte in '0'..='9': the high nibble is 3, and adding 6 does not carry out of
        // the low nibble.
        if w & 0xF0F0_F0F0_F0F0_F0F0 != 0x3030_3030_3030_3030
            || (w.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0)
                != 0x3030_3030_3030_3030
        {
            return None;
        }
        let w = w - 0x3030_3030_3030_3030;
        let w = (w.wrapping_mul(10) + (w >> 8)) & 0x00FF_00FF_00FF_00FF;
        let w = (w.wrapping_mul(100) + (w >> 16)) & 0x0000_FFFF_0000_FFFF;
        let w = w.wrapping_mul(10_000) + (w >> 32);
        n = n * 100_000_000 + (w & 0xFFFF_FFFF) as i64;
        rest = tail;
    }
    for &d in rest {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(d - b'0');
    }
    Some(if negative { -n } else { n })
}

/// The `aud` claim: a string (one audience) or an array of strings. `[]` is an empty list.
///
/// ```
/// use kube_authn::jwt::json::Audience;
/// let a: Audience = serde_json::from_str(r#""api""#).unwrap();
/// assert_eq!(a.0, ["api"]);
/// let b: Audience = serde_json::from_str(r#"["a","b"]"#).unwrap();
/// assert_eq!(b.0.len(), 2);
/// assert!(serde_json::from_str::<Audience>("5").is_err());
/// assert!(serde_json::from_str::<Audience>("[1]").is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Audience<'a>(pub Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Audience<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Audience<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of strings")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Audience(vec![Cow::Borrowed(v)]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Audience(vec![Cow::Owned(v.to_owned())]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<StrOnly<'de>>()? {
                    out.push(item.0);
                }
                Ok(Audience(out))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(ERR_AUDIENCE))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'a> Audience<'a> {
    /// Decodes a claim value from a validated payload with the same rules as the serde
    /// implementation: `null` is `None`, a string or an array of strings is `Some`, anything
    /// else (including `null` inside the array) is [`ERR_AUDIENCE`].
    ///
    /// ```
    /// use kube_authn::jwt::json::{validate_object, Audience, ERR_AUDIENCE};
    /// let o = validate_object(br#"{"a":"x","b":["x","y"],"c":[1],"d":null}"#).unwrap();
    /// assert_eq!(Audience::from_raw(o.get("a").unwrap()).unwrap().unwrap().0, ["x"]);
    /// assert_eq!(Audience::from_raw(o.get("b").unwrap()).unwrap().unwrap().0, ["x", "y"]);
    /// assert_eq!(Audience::from_raw(o.get("c").unwrap()), Err(ERR_AUDIENCE));
    /// assert_eq!(Audience::from_raw(o.get("d").unwrap()), Ok(None));
    /// ```
    pub fn from_raw(v: RawJson<'a>) -> Result<Option<Self>, &'static str> {
        if v.is_null() {
            return Ok(None);
        }
        if let Some(s) = v.as_str() {
            return Ok(Some(Audience(vec![s])));
        }
        let items = v.as_array().ok_or(ERR_AUDIENCE)?;
        let mut out = Vec::new();
        for item in items {
            out.push(item.as_str().ok_or(ERR_AUDIENCE)?);
        }
        Ok(Some(Audience(out)))
    }
}

/// The `aud` claim read in place: the same type rules as [`Audience::from_raw`], but the
/// value stays the validated JSON text and is iterated when read, so a request costs no
/// allocation for it.
///
/// ```
/// use kube_authn::jwt::json::{validate_object, RawAudience, ERR_AUDIENCE};
/// let o = validate_object(br#"{"a":"x","b":["x","y"],"c":[],"d":[1],"e":null}"#).unwrap();
/// let b = RawAudience::from_raw(o.get("b").unwrap()).unwrap().unwrap();
/// assert!(b.contains("y") && !b.contains("z"));
/// assert_eq!(b.iter().collect::<Vec<_>>(), ["x", "y"]);
/// assert!(RawAudience::from_raw(o.get("c").unwrap()).unwrap().unwrap().is_empty());
/// assert_eq!(RawAudience::from_raw(o.get("d").unwrap()).unwrap_err(), ERR_AUDIENCE);
/// assert!(RawAudience::from_raw(o.get("e").unwrap()).unwrap().is_none());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RawAudience<'a>(RawJson<'a>);

impl<'a> RawAudience<'a> {
    /// `null` is `None`; a string or an array of strings is `Some`; anything else
    /// (including `null` inside the array) is [`ERR_AUDIENCE`].
    ///
    /// ```
    /// use kube_authn::jwt::json::{validate_object, RawAudience};
    /// let o = validate_object(br#"{"aud":"x"}"#).unwrap();
    /// assert!(RawAudience::from_raw(o.get("aud").unwrap()).unwrap().unwrap().contains("x"));
    /// ```
    pub fn from_raw(v: RawJson<'a>) -> Result<Option<Self>, &'static str> {
        match v.0.as_bytes().first() {
            Some(b'n') => Ok(None),
            Some(b'"') => Ok(Some(RawAudience(v))),
            Some(b'[') => {
                let mut items = v.as_array().ok_or(ERR_AUDIENCE)?;
                if items.all(|item| item.0.starts_with('"')) {
                    Ok(Some(RawAudience(v)))
                } else {
                    Err(ERR_AUDIENCE)
                }
            }
            _ => Err(ERR_AUDIENCE),
        }
    }

    /// The audiences, in order (decoded; borrowed unless escaped).
    ///
    /// ```
    /// use kube_authn::jwt::json::{validate_object, RawAudience};
    /// let o = validate_object(br#"{"aud":["a","\u0062"]}"#).unwrap();
    /// let aud = RawAudience::from_raw(o.get("aud").unwrap()).unwrap().unwrap();
    /// assert_eq!(aud.iter().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Cow<'a, str>> + use<'a> {
        let (single, items) = match self.0.as_array() {
            Some(items) => (None, Some(items)),
            None => (Some(self.0), None),
        };
        single
            .into_iter()
            .chain(items.into_iter().flatten())
            .map(|v| audience_item(v))
    }

    /// go-oidc v2's `audience` (what Kubernetes' OIDC authenticator decodes `aud` with): a
    /// string, `null` (one empty audience), or an array of strings and `null`s (each `null` an
    /// empty audience). Anything else is Go's `json: cannot unmarshal <type> into Go struct
    /// field idToken.aud of type []string` (`… of type string` for a bad element).
    pub(crate) fn from_raw_go_oidc(v: RawJson<'a>) -> Result<Self, String> {
        const NULL_AUDIENCE: RawJson<'static> = RawJson(r#"[""]"#);
        match v.0.as_bytes().first() {
            Some(b'n') => Ok(RawAudience(NULL_AUDIENCE)),
            Some(b'"') => Ok(RawAudience(v)),
            Some(b'[') => {
                let items = v.as_array().into_iter().flatten();
                for item in items {
                    let kind = json_kind(item);
                    if kind != "string" && kind != "null" {
                        return Err(format!(
                            "json: cannot unmarshal {kind} into Go struct field idToken.aud of type string"
                        ));
                    }
                }
                Ok(RawAudience(v))
            }
            _ => Err(format!(
                "json: cannot unmarshal {} into Go struct field idToken.aud of type []string",
                json_kind(v)
            )),
        }
    }

    /// Whether the list is empty (`[]`).
    ///
    /// ```
    /// use kube_authn::jwt::json::{validate_object, RawAudience};
    /// let o = validate_object(br#"{"aud":[ ]}"#).unwrap();
    /// assert!(RawAudience::from_raw(o.get("aud").unwrap()).unwrap().unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        let b = self.0.0.as_bytes();
        b.first() == Some(&b'[') && b.get(skip_ws(b, 1)) == Some(&b']')
    }

    /// Whether `want` is one of the audiences.
    ///
    /// ```
    /// use kube_authn::jwt::json::{validate_object, RawAudience};
    /// let o = validate_object(br#"{"aud":"a"}"#).unwrap();
    /// let aud = RawAudience::from_raw(o.get("aud").unwrap()).unwrap().unwrap();
    /// assert!(aud.contains("a") && !aud.contains("b"));
    /// ```
    pub fn contains(&self, want: &str) -> bool {
        // Each string compared where it stands (borrowed unless it has escapes), without
        // building the chained iterator of `iter`.
        let eq = |v: RawJson<'_>| audience_item(v) == want;
        match self.0.as_array() {
            Some(mut items) => items.any(eq),
            None => eq(self.0),
        }
    }
}

/// Whether `s` is a JSON number literal (Go's `isValidNumber`).
pub(crate) fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    i == b.len()
}

/// One audience: a string's text, or `""` for the `null` go-oidc allows in the list.
fn audience_item(v: RawJson<'_>) -> Cow<'_, str> {
    if v.is_null() {
        Cow::Borrowed("")
    } else {
        v.string_unchecked()
    }
}

/// Go's name of a JSON value's type (`json: cannot unmarshal <type> into …`).
pub(crate) fn json_kind(v: RawJson<'_>) -> &'static str {
    match v.0.as_bytes().first() {
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        Some(b't' | b'f') => "bool",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// A JSON string (borrowed when possible); any other type is an [`ERR_AUDIENCE`] error.
struct StrOnly<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for StrOnly<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrOnly<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(StrOnly(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(StrOnly(Cow::Owned(v.to_owned())))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(ERR_AUDIENCE))
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(ERR_AUDIENCE))
            }
        }
        d.deserialize_any(V)
    }
}

/// Go's `encoding/json` match of an object member's name against a struct field's: exact, or
/// equal under Unicode simple case folding. For the ASCII field names Kubernetes' types use,
/// that is ASCII case plus U+017F (ſ, folds to `s`) and U+212A (Kelvin sign, folds to `k`).
pub(crate) fn go_field_name_eq(name: &str, field: &str) -> bool {
    let fold = |c: char| match c {
        '\u{17f}' => 's',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    };
    name.chars().map(fold).eq(field.chars().map(fold))
}

/// The fixed text for a claim of the wrong JSON type (never echoes the value).
///
/// ```
/// use kube_authn::jwt::json::{claims_error_message, ERR_CLAIM_TYPE};
/// let e = serde_json::from_str::<String>("5").unwrap_err();
/// assert_eq!(claims_error_message(&e), ERR_CLAIM_TYPE);
/// ```
pub const ERR_CLAIM_TYPE: &str = "json: cannot unmarshal claims: a claim has the wrong type";

/// A string claim from a validated payload: `null` is `None`, any type but string is
/// [`ERR_CLAIM_TYPE`].
///
/// ```
/// use kube_authn::jwt::json::{validate_object, opt_str, ERR_CLAIM_TYPE};
/// let o = validate_object(br#"{"a":"x","b":null,"c":1}"#).unwrap();
/// assert_eq!(opt_str(o.get("a").unwrap()).unwrap().as_deref(), Some("x"));
/// assert_eq!(opt_str(o.get("b").unwrap()), Ok(None));
/// assert_eq!(opt_str(o.get("c").unwrap()), Err(ERR_CLAIM_TYPE));
/// ```
pub fn opt_str(v: RawJson<'_>) -> Result<Option<Cow<'_, str>>, &'static str> {
    if v.is_null() {
        return Ok(None);
    }
    v.as_str().map(Some).ok_or(ERR_CLAIM_TYPE)
}

/// Maps a claims-decoding error to a fixed message that never contains a claim value:
/// go-jose's own texts where they apply, a generic one otherwise.
///
/// ```
/// use kube_authn::jwt::json::{claims_error_message, NumericDate, ERR_NUMERIC_DATE};
/// let e = serde_json::from_str::<NumericDate>(r#""secret-ish""#).unwrap_err();
/// assert_eq!(claims_error_message(&e), ERR_NUMERIC_DATE);
/// ```
pub fn claims_error_message(e: &serde_json::Error) -> &'static str {
    let text = e.to_string();
    for known in [ERR_NUMERIC_DATE, ERR_AUDIENCE, ERR_DUPLICATE] {
        if text.starts_with(known) {
            return known;
        }
    }
    if text.starts_with("recursion limit exceeded") {
        return "json: claims nested too deeply";
    }
    if e.is_data() {
        ERR_CLAIM_TYPE
    } else {
        "json: cannot unmarshal claims: malformed JSON"
    }
}

#[cfg(test)]
mod tests {
    //! The previous serde_json-based scanner is kept here as the oracle the hand-written one
    //! is checked against (table-driven cases and a proptest over random JSON).
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn indexed_get_tells_names_apart() {
        // Names that share a fingerprint prefix, a length, or both; an escaped name.
        let doc = br#"{"abcdefgh1":1,"abcdefgh2":2,"abcdefg":3,"abcdefgX":4,"iss":"x","i\u0061t":6,"":7}"#;
        let mut index = TopIndex::default();
        scan_indexed(doc, true, true, Some(&mut index)).unwrap();
        let text = std::str::from_utf8(doc).unwrap();
        let claims = raw_object_indexed(text, 0..text.len(), &index).unwrap();
        let cases = [
            ("abcdefgh1", Some("1")),
            ("abcdefgh2", Some("2")),
            ("abcdefg", Some("3")),
            ("abcdefgX", Some("4")),
            ("iss", Some("\"x\"")),
            ("iat", Some("6")),
            ("", Some("7")),
            ("abcdefgh", None),
            ("abcdefgh3", None),
            ("is", None),
        ];
        for (name, want) in cases {
            assert_eq!(claims.get(name).map(|v| v.text()), want, "{name:?}");
        }
    }

    #[test]
    fn small_integer_table() {
        // (text, value): eight digits per step, then one at a time; anything else is None
        // (the caller then reads the number as serde_json does).
        let cases: [(&str, Option<i64>); 16] = [
            ("0", Some(0)),
            ("7", Some(7)),
            ("12345678", Some(12_345_678)),
            ("123456789", Some(123_456_789)),
            ("1700000000", Some(1_700_000_000)),
            ("-1700000000", Some(-1_700_000_000)),
            ("9876543210987654", Some(9_876_543_210_987_654)),
            ("999999999999999999", Some(999_999_999_999_999_999)),
            ("1000000000000000000", None),
            ("", None),
            ("-", None),
            ("1234567a", None),
            ("12345678a", None),
            ("123:5678", None),
            ("123/5678", None),
            ("1.5", None),
        ];
        for (text, want) in cases {
            assert_eq!(small_integer(text.as_bytes()), want, "{text:?}");
        }
        // Every single byte in each position of an eight-digit run.
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut t = *b"12345678";
                t[pos] = b;
                let digits = t.strip_prefix(b"-").unwrap_or(&t);
                let want = digits
                    .iter()
                    .all(u8::is_ascii_digit)
                    .then(|| std::str::from_utf8(&t).unwrap().parse::<i64>().unwrap());
                assert_eq!(small_integer(&t), want, "{t:?}");
            }
        }
    }

    mod oracle {
        use super::super::ERR_DUPLICATE;
        use super::super::Key;
        use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
        use std::borrow::Cow;
        use std::collections::HashSet;
        use std::fmt;

        pub(super) fn scan_object(bytes: &[u8]) -> Result<Option<Cow<'_, str>>, serde_json::Error> {
            let mut de = serde_json::Deserializer::from_slice(bytes);
            let iss = de.deserialize_map(TopVisitor)?;
            de.end()?;
            Ok(iss)
        }

        pub(super) fn check_no_duplicates(bytes: &[u8]) -> Result<(), serde_json::Error> {
            let mut de = serde_json::Deserializer::from_slice(bytes);
            NoDup.deserialize(&mut de)?;
            de.end()
        }

        /// Remembers member names of one object: the first 16 on the stack (no allocation for
        /// ordinary JWT objects), hashed beyond that.
        struct Seen<'de> {
            small: [Cow<'de, str>; 16],
            len: usize,
            big: Option<HashSet<Cow<'de, str>>>,
        }

        impl Default for Seen<'_> {
            fn default() -> Self {
                Seen {
                    small: std::array::from_fn(|_| Cow::Borrowed("")),
                    len: 0,
                    big: None,
                }
            }
        }

        impl<'de> Seen<'de> {
            fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
                if let Some(big) = &mut self.big {
                    if !big.insert(key) {
                        return Err(E::custom(ERR_DUPLICATE));
                    }
                    return Ok(());
                }
                if self.small[..self.len].contains(&key) {
                    return Err(E::custom(ERR_DUPLICATE));
                }
                if self.len == self.small.len() {
                    let mut big: HashSet<Cow<'de, str>> =
                        self.small.iter_mut().map(std::mem::take).collect();
                    big.insert(key);
                    self.big = Some(big);
                } else {
                    self.small[self.len] = key;
                    self.len += 1;
                }
                Ok(())
            }
        }

        struct NoDup;

        impl<'de> DeserializeSeed<'de> for NoDup {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_any(NoDupVisitor)
            }
        }

        struct NoDupVisitor;

        impl<'de> Visitor<'de> for NoDupVisitor {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<(), E> {
                Ok(())
            }
            fn visit_i64<E>(self, _: i64) -> Result<(), E> {
                Ok(())
            }
            fn visit_u64<E>(self, _: u64) -> Result<(), E> {
                Ok(())
            }
            fn visit_f64<E>(self, _: f64) -> Result<(), E> {
                Ok(())
            }
            fn visit_str<E>(self, _: &str) -> Result<(), E> {
                Ok(())
            }
            fn visit_unit<E>(self) -> Result<(), E> {
                Ok(())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while seq.next_element_seed(NoDup)?.is_some() {}
                Ok(())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                let mut seen = Seen::default();
                while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                    seen.insert(k)?;
                    map.next_value_seed(NoDup)?;
                }
                Ok(())
            }
        }

        struct TopVisitor;

        impl<'de> Visitor<'de> for TopVisitor {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut seen = Seen::default();
                let (mut iss, mut variant) = (None, false);
                while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                    // Go's peek: every member `encoding/json` matches to `iss`; a string
                    // replaces the value, `null` leaves it.
                    let (exact, fold) = (k == "iss", crate::jwt::json::folds_to_iss(&k));
                    seen.insert(k)?;
                    if fold {
                        if let Some(Key(v)) = map.next_value::<Option<Key<'de>>>()? {
                            iss = Some(v);
                            variant = !exact;
                        }
                    } else {
                        map.next_value_seed(NoDup)?;
                    }
                }
                if variant {
                    return Err(de::Error::custom(
                        "issuer peeked from a member not named iss",
                    ));
                }
                Ok(iss)
            }
        }
    }

    /// The scanner and the serde oracle accept and refuse the same documents; the oracle
    /// reads each lone surrogate escape as `\ufffd` (Go's reading, which serde_json refuses).
    fn agree(doc: &[u8]) {
        let go = go_lone_surrogates(doc);
        let ours = scan_object(doc).map_err(|e| e.to_string());
        let theirs = oracle::scan_object(&go).map_err(|e| e.to_string());
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "scan_object {:?}: ours {ours:?} oracle {theirs:?}",
            String::from_utf8_lossy(doc)
        );
        if let (Ok(a), Ok(b)) = (&ours, &theirs) {
            assert_eq!(a, b, "iss of {:?}", String::from_utf8_lossy(doc));
        }
        let ours = check_no_duplicates(doc).map_err(|e| e.to_string());
        let theirs = oracle::check_no_duplicates(&go).map_err(|e| e.to_string());
        if let (Err(a), Err(b)) = (&ours, &theirs) {
            // Which rule fires first may differ only for scan_object's `iss` type check; the
            // plain validation must report the same kind (duplicate or not).
            let dup = |s: &str| s.starts_with(ERR_DUPLICATE);
            assert_eq!(
                dup(a),
                dup(b),
                "error kind of {:?}: {a} / {b}",
                String::from_utf8_lossy(doc)
            );
        }
        let ours = check_no_duplicates(doc);
        let theirs = oracle::check_no_duplicates(&go);
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "check_no_duplicates {:?}: {ours:?} / {theirs:?}",
            String::from_utf8_lossy(doc)
        );
    }

    fn nest(depth: usize, open: &str, close: &str, inner: &str) -> String {
        format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
    }

    #[test]
    fn scanner_table() {
        struct Case {
            name: &'static str,
            doc: Vec<u8>,
            ok: bool,
            iss: Option<&'static str>,
        }
        let case = |name, doc: &[u8], ok, iss| Case {
            name,
            doc: doc.to_vec(),
            ok,
            iss,
        };
        let deep_ok = format!(r#"{{"a":{}}}"#, nest(126, "[", "]", "1"));
        let deep_bad = format!(r#"{{"a":{}}}"#, nest(127, "[", "]", "1"));
        let deep_obj = format!(r#"{{"iss":"x","a":{}}}"#, nest(127, r#"{"b":"#, "}", "1"));
        // 20 outer names, a nested object of 20 (the stack holds 32), then an outer duplicate.
        let members = |prefix: &str, n: usize| -> Vec<String> {
            (0..n).map(|i| format!(r#""{prefix}{i}":{i}"#)).collect()
        };
        let inner = format!("{{{}}}", members("in", 20).join(","));
        let nested_full_dup = format!(
            r#"{{{},"nested":{inner},"out3":0}}"#,
            members("out", 20).join(",")
        );
        let nested_full_ok = format!(
            r#"{{{},"nested":{inner},"out20":0}}"#,
            members("out", 20).join(",")
        );
        let inner_dup = format!(r#"{{{},"in3":0}}"#, members("in", 20).join(","));
        let inner_past_stack_dup = format!(
            r#"{{{},"nested":{inner_dup}}}"#,
            members("out", 20).join(",")
        );
        let many_dup = format!(
            "{{{}\"k7\":0}}",
            (0..40)
                .map(|i| format!("\"k{i}\":{i},"))
                .collect::<String>()
        );
        let many_ok = format!(
            "{{{}\"z\":0}}",
            (0..40)
                .map(|i| format!("\"k{i}\":{i},"))
                .collect::<String>()
        );
        let many_esc_dup = format!(
            "{{{}\"k\\u00337\":0}}",
            (0..40)
                .map(|i| format!("\"k{i}\":{i},"))
                .collect::<String>()
        );
        let cases = [
            case("empty object", b"{}", true, None),
            case("iss", br#"{"iss":"a"}"#, true, Some("a")),
            case("iss null is absent", br#"{"iss":null}"#, true, None),
            case("iss number", br#"{"iss":5}"#, false, None),
            // Go's peek reads every member it matches to `iss` case-insensitively (`ſ` folds
            // onto `s`); the last string wins. Refused when that is not `iss` itself.
            case("ISS alone", br#"{"ISS":"a"}"#, false, None),
            case("iss then ISS", br#"{"iss":"a","ISS":"b"}"#, false, None),
            case("ISS then iss", br#"{"ISS":"b","iss":"a"}"#, true, Some("a")),
            case(
                "iss then ISS null",
                br#"{"iss":"a","ISS":null}"#,
                true,
                Some("a"),
            ),
            case(
                "ISS then iss null",
                br#"{"ISS":"b","iss":null}"#,
                false,
                None,
            ),
            case(
                "iss then Iss number",
                br#"{"iss":"a","Iss":5}"#,
                false,
                None,
            ),
            case(
                "long s",
                "{\"iss\":\"a\",\"i\u{17F}s\":\"b\"}".as_bytes(),
                false,
                None,
            ),
            case("escaped ISS", br#"{"iss":"a","\u0049SS":"b"}"#, false, None),
            case(
                "dotless i is not i",
                "{\"iss\":\"a\",\"\u{131}ss\":\"b\"}".as_bytes(),
                true,
                Some("a"),
            ),
            case(
                "isss is another name",
                br#"{"iss":"a","isss":"b"}"#,
                true,
                Some("a"),
            ),
            case(
                "iss escaped value",
                br#"{"iss":"a\/b\u00e9"}"#,
                true,
                Some("a/bé"),
            ),
            case(
                "escaped key is iss",
                br#"{"i\u0073s":"a"}"#,
                true,
                Some("a"),
            ),
            case(
                "escaped key collides with iss",
                br#"{"iss":"a","i\u0073s":"b"}"#,
                false,
                None,
            ),
            case(
                "escaped key collides, reversed",
                br#"{"\u0069ss":"a","iss":"b"}"#,
                false,
                None,
            ),
            case("nested iss ignored", br#"{"x":{"iss":5}}"#, true, None),
            case("top duplicate", br#"{"a":1,"a":2}"#, false, None),
            case(
                "duplicate at depth 3",
                br#"{"a":[{"b":{"c":1,"c":2}}]}"#,
                false,
                None,
            ),
            case(
                "same name in sibling objects",
                br#"{"a":{"c":1},"b":{"c":2}}"#,
                true,
                None,
            ),
            case("array is not an object", b"[1]", false, None),
            case("string is not an object", br#""x""#, false, None),
            case("trailing garbage", br#"{} x"#, false, None),
            case("two objects", br#"{}{}"#, false, None),
            case(
                "whitespace around",
                b" \t\r\n{ \"iss\" : \"a\" } \n",
                true,
                Some("a"),
            ),
            case("trailing comma", br#"{"a":1,}"#, false, None),
            case("array trailing comma", br#"{"a":[1,]}"#, false, None),
            case("leading zero", br#"{"a":01}"#, false, None),
            case("negative zero", br#"{"a":-0}"#, true, None),
            case("bare minus", br#"{"a":-}"#, false, None),
            case("dot without digits", br#"{"a":1.}"#, false, None),
            case("exponent without digits", br#"{"a":1e}"#, false, None),
            case("huge exponent overflows", br#"{"a":1e400}"#, false, None),
            case(
                "tiny exponent underflows to 0",
                br#"{"a":1e-400}"#,
                true,
                None,
            ),
            case("zero with huge exponent", br#"{"a":0e999999}"#, true, None),
            case(
                "20-digit integer",
                br#"{"a":99999999999999999999}"#,
                true,
                None,
            ),
            case(
                "400-digit integer",
                format!(r#"{{"a":{}}}"#, "9".repeat(400)).as_bytes(),
                false,
                None,
            ),
            case(
                "300-digit integer",
                format!(r#"{{"a":{}}}"#, "9".repeat(300)).as_bytes(),
                true,
                None,
            ),
            case("NaN", br#"{"a":NaN}"#, false, None),
            case("true false null", br#"{"a":[true,false,null]}"#, true, None),
            case("truncated literal", br#"{"a":tru}"#, false, None),
            case("control char in string", b"{\"a\":\"x\x01\"}", false, None),
            case("DEL in string", b"{\"a\":\"x\x7f\"}", true, None),
            case("bad escape", br#"{"a":"\x"}"#, false, None),
            case("short unicode escape", br#"{"a":"\u12"}"#, false, None),
            case("surrogate pair", br#"{"a":"\ud83d\ude00"}"#, true, None),
            // Lone surrogate escapes: valid to Go (U+FFFD), so accepted.
            case("lone high surrogate", br#"{"a":"\ud83d"}"#, true, None),
            case("lone low surrogate", br#"{"a":"\ude00"}"#, true, None),
            case(
                "high surrogate then letter",
                br#"{"a":"\ud83d\u0041"}"#,
                true,
                None,
            ),
            case(
                "two high surrogates",
                br#"{"a":"\ud800\ud800"}"#,
                true,
                None,
            ),
            case("low then high", br#"{"a":"\udc00\ud800"}"#, true, None),
            case(
                "high surrogate then a bad escape",
                br#"{"a":"\ud800\uZZZZ"}"#,
                false,
                None,
            ),
            case(
                "lone surrogate iss",
                br#"{"iss":"a\ud800b"}"#,
                true,
                Some("a\u{FFFD}b"),
            ),
            case(
                "names equal once decoded to U+FFFD",
                br#"{"a\ud800":1,"a\udc00":2}"#,
                false,
                None,
            ),
            case("non-UTF-8 in string", b"{\"a\":\"\xff\"}", false, None),
            case("non-UTF-8 in key", b"{\"\xc3\":1}", false, None),
            case("overlong UTF-8", b"{\"a\":\"\xc0\xaf\"}", false, None),
            case("UTF-8 key", "{\"é\":1,\"e\":2}".as_bytes(), true, None),
            case("unterminated string", br#"{"a":"x}"#, false, None),
            case("unterminated object", br#"{"a":1"#, false, None),
            case("missing colon", br#"{"a" 1}"#, false, None),
            case("empty", b"", false, None),
            case("depth 127 accepted", deep_ok.as_bytes(), true, None),
            case("depth 128 refused", deep_bad.as_bytes(), false, None),
            case("deep objects refused", deep_obj.as_bytes(), false, None),
            case(
                "41 members with a late duplicate",
                many_dup.as_bytes(),
                false,
                None,
            ),
            case("41 distinct members", many_ok.as_bytes(), true, None),
            case(
                "late escaped duplicate past 16",
                many_esc_dup.as_bytes(),
                false,
                None,
            ),
            // The name stack (32 unescaped names shared by all open objects).
            case(
                "outer duplicate after a nested object filled the stack",
                nested_full_dup.as_bytes(),
                false,
                None,
            ),
            case(
                "names stay distinct across a full stack",
                nested_full_ok.as_bytes(),
                true,
                None,
            ),
            case(
                "inner duplicate beyond the stack",
                inner_past_stack_dup.as_bytes(),
                false,
                None,
            ),
            case(
                "outer name repeated only inside a nested object",
                br#"{"abcdefghij":{"abcdefghij":1},"abcdefghik":2}"#,
                true,
                None,
            ),
            case(
                "long names equal in their first seven bytes",
                br#"{"kubernetes.io/a":1,"kubernetes.io/b":2}"#,
                true,
                None,
            ),
            case(
                "long duplicate",
                br#"{"kubernetes.io/a":1,"kubernetes.io/a":2}"#,
                false,
                None,
            ),
            case(
                "prefix of another name",
                br#"{"ab":1,"abc":2,"a":3}"#,
                true,
                None,
            ),
            case(
                "name at the very end of a nested object",
                br#"{"x":{"a":1,"a":2}}"#,
                false,
                None,
            ),
        ];
        for c in cases {
            let got = scan_object(&c.doc);
            assert_eq!(got.is_ok(), c.ok, "{}: {got:?}", c.name);
            if let Ok(iss) = got {
                assert_eq!(iss.as_deref(), c.iss, "{}", c.name);
            }
            agree(&c.doc);
        }
    }

    #[test]
    fn digit_runs_end_at_the_first_non_digit_for_every_byte_and_position() {
        for c in 0..=255u8 {
            for pos in 0..20 {
                let mut doc = vec![b'7'; 20];
                doc[pos] = c;
                let mut s = Scanner {
                    b: &doc,
                    i: 0,
                    depth: 0,
                    iss: None,
                    iss_variant: false,
                    claims: false,
                    index: None,
                    names: Names::default(),
                };
                let want = if c.is_ascii_digit() { 20 } else { pos };
                assert_eq!(s.digits(), want, "byte {c:#04x} at {pos}");
                assert_eq!(s.i, want);
            }
        }
    }

    #[test]
    fn ten_thousand_deep_fails_fast() {
        let doc = nest(10_000, "[", "]", "");
        assert!(check_no_duplicates(doc.as_bytes()).is_err());
        let doc = format!(r#"{{"a":{}}}"#, nest(10_000, "{\"b\":", "}", "1"));
        assert!(scan_object(doc.as_bytes()).is_err());
    }

    #[test]
    fn syntax_errors_keep_serde_categories() {
        // Callers map these through `claims_error_message`: the text must not change.
        let e = check_no_duplicates(br#"{"a":"#).unwrap_err();
        assert_eq!(
            claims_error_message(&e),
            "json: cannot unmarshal claims: malformed JSON"
        );
        let e = check_no_duplicates(br#"{"a":1,"a":1}"#).unwrap_err();
        assert_eq!(claims_error_message(&e), ERR_DUPLICATE);
        let e = check_no_duplicates(nest(200, "[", "]", "").as_bytes()).unwrap_err();
        assert_eq!(claims_error_message(&e), "json: claims nested too deeply");
    }

    #[test]
    fn raw_views_walk_members_and_elements() {
        let o = validate_object(
            br#" { "a" : "x\"y" , "b":[ 1 , {"c":"}"} , "]" ] ,"d\u0065":{"e":null} } "#,
        )
        .unwrap();
        let got: Vec<(String, &str)> = o.iter().map(|(k, v)| (k.into_owned(), v.text())).collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), r#""x\"y""#),
                ("b".to_string(), r#"[ 1 , {"c":"}"} , "]" ]"#),
                ("de".to_string(), r#"{"e":null}"#),
            ]
        );
        assert_eq!(o.get("a").unwrap().as_str().as_deref(), Some("x\"y"));
        let items: Vec<&str> = o
            .get("b")
            .unwrap()
            .as_array()
            .unwrap()
            .map(|v| v.text())
            .collect();
        assert_eq!(items, ["1", r#"{"c":"}"}"#, r#""]""#]);
        assert!(
            o.get("de")
                .unwrap()
                .as_object()
                .unwrap()
                .get("e")
                .unwrap()
                .is_null()
        );
        assert_eq!(o.get("missing"), None);
        assert_eq!(validate_object(b"{}").unwrap().iter().count(), 0);
        assert_eq!(RawJson("[ ]").as_array().unwrap().count(), 0);
    }

    #[test]
    fn raw_audience_agrees_with_audience() {
        let docs = [
            r#""a""#,
            r#""a\u0062""#,
            r#""a\\b""#,
            r#"["x","a\\b"]"#,
            "[]",
            "[ ]",
            r#"["a"]"#,
            r#"[ "a" , "b" ]"#,
            r#"["a",null]"#,
            "[1]",
            r#"[["a"]]"#,
            "null",
            "5",
            "true",
            "{}",
        ];
        for doc in docs {
            let wrapped = format!(r#"{{"aud":{doc}}}"#);
            let o = validate_object(wrapped.as_bytes()).unwrap();
            let v = o.get("aud").unwrap();
            let want = Audience::from_raw(v);
            let got = RawAudience::from_raw(v);
            match (&want, &got) {
                (Ok(Some(w)), Ok(Some(g))) => {
                    assert_eq!(g.iter().collect::<Vec<_>>(), w.0, "{doc}");
                    assert_eq!(g.is_empty(), w.0.is_empty(), "{doc}");
                    for a in ["a", "ab", "b", "c", r"a\b", r"a\\b"] {
                        assert_eq!(g.contains(a), w.0.iter().any(|x| x == a), "{doc} {a}");
                    }
                }
                (Ok(None), Ok(None)) => {}
                (Err(w), Err(g)) => assert_eq!(w, g, "{doc}"),
                _ => panic!("{doc}: {want:?} vs {got:?}"),
            }
        }
    }

    /// Surrogate escapes decode as Go's `encoding/json` and go-jose's fork decode them (Go
    /// 1.26 and go-jose v2.6.3 agree on each): a valid pair is one character, every other
    /// surrogate escape U+FFFD on its own, what follows decoded as usual. Values and names.
    #[test]
    fn lone_surrogates_decode_as_go_decodes_them() {
        let cases = [
            (r#""a\ud800b""#, "a\u{FFFD}b"),
            (r#""\ud800\ud800""#, "\u{FFFD}\u{FFFD}"),
            (r#""\udc00""#, "\u{FFFD}"),
            (r#""\ud800\u0041""#, "\u{FFFD}A"),
            (r#""\ud800\udc00""#, "\u{10000}"),
            (r#""\udc00\ud800""#, "\u{FFFD}\u{FFFD}"),
            (r#""\ud800""#, "\u{FFFD}"),
            (r#""\ud800\n""#, "\u{FFFD}\n"),
            (r#""\udbff\udfff""#, "\u{10FFFF}"),
            (r#""\ud800\\u0041""#, "\u{FFFD}\\u0041"),
            (r#""x\uD83D\uDE00y\uDE00""#, "x\u{1F600}y\u{FFFD}"),
        ];
        for (lit, want) in cases {
            let doc = format!(r#"{{{lit}:{lit}}}"#);
            let o = validate_object(doc.as_bytes()).unwrap_or_else(|e| panic!("{lit}: {e}"));
            let (name, value) = o.iter().next().unwrap();
            assert_eq!(name, want, "name {lit}");
            assert_eq!(value.as_str().unwrap(), want, "value {lit}");
            let mut index = TopIndex::default();
            let o = validate_object_quiet(doc.as_bytes(), &mut index).unwrap();
            assert_eq!(o.get(want).and_then(|v| v.as_str()).unwrap(), want, "{lit}");
            // serde_json reads the same text once the lone ones are Go's `\ufffd`.
            let go: String = serde_json::from_slice(&go_lone_surrogates(lit.as_bytes())).unwrap();
            assert_eq!(go, want, "go_lone_surrogates {lit}");
        }
    }

    #[test]
    fn unescape_matches_serde() {
        for s in [
            r#""plain""#,
            r#""a\nb\t\"\\\/""#,
            r#""\u00e9\u4e2d\ud83d\ude00\b\f\r""#,
        ] {
            let want: String = serde_json::from_str(s).unwrap();
            assert_eq!(RawJson(s).as_str().unwrap(), want);
        }
    }

    #[test]
    fn a_reused_index_starts_empty() {
        // A 30-member object overflows the index (its readers walk); the next document scanned
        // into the same index is indexed again, with only its own members.
        let big: String = (0..30).map(|i| format!(r#""m{i}":{i},"#)).collect();
        let big = format!("{{{big}\"iss\":\"a\"}}");
        let mut index = TopIndex::default();
        let o = validate_object_quiet(big.as_bytes(), &mut index).unwrap();
        assert!(o.index.is_none(), "overflowed");
        assert_eq!(o.get("m29").map(|v| v.text()), Some("29"));
        let small = br#"{"iss":"b"}"#;
        let o = validate_object_quiet(small, &mut index).unwrap();
        assert_eq!(o.index.map(|(_, m)| m.len()), Some(1), "indexed again");
        assert_eq!(o.get("iss").map(|v| v.text()), Some(r#""b""#));
        assert!(o.get("m0").is_none());
    }

    fn json_strategy() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("iss".to_string()),
            Just("i\\u0073s".to_string()),
            Just("a".to_string()),
            Just("\\u0061".to_string()),
            Just("b".to_string()),
            "[a-c]{0,2}",
        ];
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|f| format!("{f:e}")),
            "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,3})?",
            "\"([a-z]|\\\\[nt\"\\\\/]|\\\\u00[0-7][0-9a-f]|\\\\ud83d\\\\ude00|\\\\ud83d|é|\u{1}){0,6}\"",
        ];
        leaf.prop_recursive(6, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec((key.clone(), inner), 0..5).prop_map(|v| {
                    let members: Vec<String> = v
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\" : {v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn scanner_agrees_with_serde_on_random_json(doc in json_strategy()) {
            agree(doc.as_bytes());
            let wrapped = format!("{{\"x\":{doc}}}");
            agree(wrapped.as_bytes());
        }

        #[test]
        fn scanner_agrees_with_serde_on_mutations(doc in json_strategy(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let mut b = format!("{{\"iss\":\"i\",\"y\":{doc}}}").into_bytes();
            let i = at.index(b.len());
            b[i] = byte;
            agree(&b);
        }

        #[test]
        fn cursor_walk_matches_members(doc in json_strategy()) {
            // Each value of an object read by the cursor: the same names and values as the
            // member iterator, strings decoded alike, and nested objects walked in place.
            let wrapped = format!("{{\"x\":{doc},\"s\":\"a\\u0062\",\"y\":[{doc}]}}");
            if let Ok(o) = validate_object(wrapped.as_bytes()) {
                let want: Vec<(String, String)> =
                    o.iter().map(|(k, v)| (k.into_owned(), v.text().to_owned())).collect();
                let mut got = Vec::new();
                let mut cur = Cursor::new(raw_json_unchecked(o.text()));
                cur.members(|name, cur| {
                    let at = cur.i;
                    if cur.peek() == Some(b'"') {
                        let text = Cursor { s: cur.s, i: at }.value().text();
                        let s = cur.opt_str().unwrap().unwrap();
                        assert_eq!(Some(s), RawJson(text).as_str());
                        got.push((name.to_owned(), text.to_owned()));
                    } else if cur.peek() == Some(b'{') {
                        let text = Cursor { s: cur.s, i: at }.value().text();
                        let mut inner = Vec::new();
                        cur.members(|n, _| {
                            inner.push(n.to_owned());
                            Ok(())
                        })
                        .unwrap();
                        let names: Vec<String> =
                            RawJson(text).as_object().unwrap().iter().map(|(k, _)| k.into_owned()).collect();
                        assert_eq!(inner, names);
                        assert_eq!(&cur.s[at..cur.i], text);
                        got.push((name.to_owned(), text.to_owned()));
                    } else {
                        got.push((name.to_owned(), cur.value().text().to_owned()));
                    }
                    Ok(())
                })
                .unwrap();
                prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn indexed_get_matches_the_member_walk(doc in json_strategy()) {
            // An object the scan indexed reads exactly like the same text walked without the
            // index: its members (the index's ranges), and `get` (raw-name fast path,
            // escaped names by the walk) for present and absent, short and long names.
            let wrapped = format!(
                "{{\"x\":{doc},\"i\\u0073\":1,\"kubernetes.io/x\":2,\"y\":[{doc}]}}"
            );
            let mut index = TopIndex::default();
            for text in [doc.as_str(), wrapped.as_str()] {
                if let Some(o) = validate_object_quiet(text.as_bytes(), &mut index) {
                    prop_assert!(o.index.is_some(), "indexed");
                    let walk = RawObject::walk(o.text());
                    let members = |x: &RawObject<'_>| -> Vec<(String, String)> {
                        x.iter().map(|(k, v)| (k.into_owned(), v.text().to_owned())).collect()
                    };
                    prop_assert_eq!(members(&o), members(&walk));
                    let probes = [
                        "iss", "is", "a", "b", "c", "ab", "", "x", "y", "zz",
                        "kubernetes.io/x", "kubernetes.io/y",
                    ];
                    for probe in probes {
                        let walked = walk.get(probe).map(|v| v.text());
                        prop_assert_eq!(o.get(probe).map(|v| v.text()), walked, "{}", probe);
                    }
                }
            }
        }

        #[test]
        fn raw_members_match_serde(doc in json_strategy()) {
            let wrapped = format!("{{\"x\":{doc},\"y\":[{doc}]}}");
            if let Ok(o) = validate_object(wrapped.as_bytes()) {
                let v: serde_json::Value =
                    serde_json::from_slice(&go_lone_surrogates(wrapped.as_bytes())).unwrap();
                for (k, raw) in o.iter() {
                    let want = &v[&*k];
                    let got: serde_json::Value =
                        serde_json::from_slice(&go_lone_surrogates(raw.text().as_bytes())).unwrap();
                    prop_assert_eq!(&got, want);
                }
            }
        }
    }
}
