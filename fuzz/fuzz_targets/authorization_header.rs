//! Arbitrary `Authorization` header bytes through `Bearer` (and `Basic`, which must ignore
//! bearer credentials).
//!
//! Properties: no panic; the token authenticator is called at most once, and only with a
//! non-empty token of visible ASCII with no space or tab, at most `MAX_TOKEN_LEN` bytes, equal
//! to what a simple reference parser extracts; a request is authenticated only with the one
//! good token; a malformed header is an error, never "not mine" when the scheme is Bearer;
//! bytes outside visible ASCII are an error whatever the scheme.

#![no_main]

use std::sync::Mutex;

use http::header::AUTHORIZATION;
use http::HeaderValue;
use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
use kube_authn::request::{Bearer, MAX_TOKEN_LEN};
use kube_authn::user::UserInfo;
use libfuzzer_sys::fuzz_target;

/// `Basic` with anything but one space and a credential without white space is malformed, and a
/// malformed `Authorization` header is an error for whichever authenticator reads it (fail
/// closed, see `kube_authn::request`): found by a 10-minute run with the input `bASIC`. So is a
/// credential that is not Go's padded standard base64 (trailing bits allowed) of UTF-8 text
/// with a `:`.
fn malformed_basic(value: &[u8]) -> bool {
    use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
    use base64::engine::DecodePaddingMode;
    use base64::Engine;
    const GO_STD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
            .with_decode_allow_trailing_bits(true),
    );
    let well_formed = |cred: &[u8]| {
        GO_STD
            .decode(cred)
            .ok()
            .and_then(|text| String::from_utf8(text).ok())
            .is_some_and(|text| text.contains(':'))
    };
    let is_ws = |b: &u8| *b == b' ' || *b == b'\t';
    let Some(start) = value.iter().position(|b| !is_ws(b)) else {
        return false;
    };
    let end = value.iter().rposition(|b| !is_ws(b)).map_or(0, |e| e + 1);
    let v = &value[start..end];
    let scheme_end = v.iter().position(is_ws).unwrap_or(v.len());
    if !v[..scheme_end].eq_ignore_ascii_case(b"basic") {
        return false;
    }
    match v[scheme_end..].strip_prefix(b" ") {
        Some(cred) => {
            cred.is_empty() || cred.iter().any(is_ws) || cred.len() > MAX_TOKEN_LEN || !well_formed(cred)
        }
        None => true,
    }
}

/// The reference: trim spaces and tabs, scheme up to the first space or tab, case-insensitive
/// `bearer`, then exactly one space and a token running to the next space.
fn reference(value: &[u8]) -> Option<Result<&[u8], ()>> {
    let is_ws = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !is_ws(b))?;
    let end = value.iter().rposition(|b| !is_ws(b))? + 1;
    let v = &value[start..end];
    let scheme_end = v.iter().position(is_ws).unwrap_or(v.len());
    if !v[..scheme_end].eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let rest = &v[scheme_end..];
    let Some(rest) = rest.strip_prefix(b" ") else {
        return Some(Err(()));
    };
    let tok_end = rest.iter().position(|b| *b == b' ').unwrap_or(rest.len());
    let tok = &rest[..tok_end];
    if tok.is_empty() || tok.contains(&b'\t') || tok.len() > MAX_TOKEN_LEN {
        return Some(Err(()));
    }
    Some(Ok(tok))
}

fuzz_target!(|data: &[u8]| {
    // First byte: how many header lines (1 or 2), then the value(s) split at 0xFF.
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let values: Vec<&[u8]> = rest.splitn(1 + usize::from(n & 1), |b| *b == 0xFF).collect();
    let mut req = http::Request::get("/");
    for v in &values {
        match HeaderValue::from_bytes(v) {
            Ok(v) => req = req.header(AUTHORIZATION, v),
            Err(_) => return,
        }
    }
    let (parts, _) = req.body(()).unwrap().into_parts();

    let seen = Mutex::new(Vec::<String>::new());
    let tokens = SyncTokenFn::new(|t: &str, _: &Context| {
        assert!(!t.is_empty(), "empty token accepted");
        assert!(!t.contains([' ', '\t']), "token with white space: {t:?}");
        assert!(t.len() <= MAX_TOKEN_LEN);
        assert!(t.bytes().all(|b| (b'!'..=b'~').contains(&b)));
        seen.lock().unwrap().push(t.to_owned());
        Ok((t == "good").then(|| Response::new(UserInfo::new("u").into())))
    });
    let bearer = Bearer::new(tokens);
    let ctx = Context::default();
    let result = bearer
        .authenticate_request(&parts, &ctx)
        .into_ready()
        .expect("a sync token authenticator gives a ready answer");
    let seen = seen.into_inner().unwrap();
    assert!(seen.len() <= 1);

    let visible = |v: &[u8]| v.iter().all(|&b| b == b'\t' || (b' '..=b'~').contains(&b));
    if values.len() == 1 && !visible(values[0]) {
        // Bytes outside visible ASCII: an error whatever the scheme (fail closed).
        assert!(result.is_err(), "obs-text or control bytes accepted");
        assert!(seen.is_empty());
    } else if values.len() == 1 {
        match reference(values[0]) {
            None if malformed_basic(values[0]) => {
                assert!(result.is_err(), "malformed Basic header accepted");
                assert!(seen.is_empty());
            }
            None => assert!(matches!(result, Ok(None)), "not a bearer header, yet {result:?}"),
            Some(Err(())) => assert!(result.is_err(), "malformed bearer accepted"),
            Some(Ok(tok)) => {
                // Visible ASCII only (the parser rejects obs-text and controls).
                assert_eq!(seen, [String::from_utf8(tok.to_vec()).unwrap()]);
                assert_eq!(result.is_ok(), tok == b"good");
            }
        }
    } else {
        assert!(result.is_err(), "two Authorization headers must be an error");
        assert!(seen.is_empty());
    }
    if let Ok(Some(r)) = &result {
        assert_eq!(r.user.name(), "u");
        assert_eq!(seen, ["good"]);
    }
    // A rejected token gives exactly Kubernetes' fixed text (never the credential).
    if let (Err(e), Some(_)) = (&result, seen.first()) {
        assert_eq!(e.to_string(), "invalid bearer token");
    }
});
