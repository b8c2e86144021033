//! OIDC / JWT authenticator (kube-apiserver `plugin/pkg/authenticator/token/oidc`): the
//! per-token pipeline of §3.4–3.6 over a key set that a fetcher installs.
//!
//! Status: configuration from the legacy `--oidc-*` flags and from `--authentication-config`
//! files (claim-based subset, CEL refused) ([`config`]); the verification order and messages of
//! go-oidc and Kubernetes; claim mapping (username with the `email`/`email_verified` rule,
//! groups as string or array, uid, credential id, required claims); distributed groups claims
//! (`_claim_names`/`_claim_sources`, fetched through a [`ClaimFetcher`], the endpoint's JWT
//! verified like an ID token of this issuer). With the `remote` feature, `discovery` fetches
//! `/.well-known/openid-configuration` and the JWKS over HTTPS (CA from the configuration,
//! capped bodies, timeouts, no redirects) in a background task that retries until the issuer
//! answers, and `remote` turns flags or a configuration file into authenticators on an
//! [`IssuerRouter`](crate::jwt::router::IssuerRouter). Until the first keys are installed every
//! token for the issuer fails with `oidc: authenticator not initialized` (Kubernetes'
//! non-blocking start-up). A token no key of the current set verifies (an unknown `kid`, no
//! `kid`, a known `kid` whose key fails) triggers one coalesced, cooldown-limited refetch
//! through the installed [`refresh::Refresh`] (then one retry, if the keys changed); a token a
//! current key verifies is answered synchronously. Not implemented: CEL expressions (refused
//! at load), periodic JWKS refresh without such a token (as in go-oidc, a key removed at the
//! provider stays trusted until the next refetch).
//!
//! # Hot path (measured)
//!
//! Known `kid`: no lock, no I/O, no await (a ready future). The payload is validated once by
//! the shared pre-check ([`crate::jwt::compact`]); go-oidc's checks and the claim mapping then
//! read the claims in place from that validated text with the typed readers of
//! [`crate::jwt::json`] (no serde_json pass per claim), and the user is built directly (one
//! scratch string for the prefixed name and groups; the `jti` credential id is written after
//! the uid and the extra map built only if read; 11 allocations per token). Per RS256 token
//! with a typical ID token (`callgrind`, `benches/oidc.rs` `OIDC_COUNT=RS256`, instructions
//! inside `IssuerRouter::authenticate_token`): 303 k in total, 289.5 k in the aws-lc-rs
//! verify, 13.8 k elsewhere (was 41 k, then 30.5 k, then 15.4 k; 16.0 k since go-oidc's claim
//! decoding, Go's lone-surrogate handling and the case-folded `idToken` names were added). Criterion on a quiet
//! machine (`cargo bench --bench oidc -- --warm-up-time 2 --measurement-time 5`, medians):
//! RS256 15.56 µs primitive vs 17.00 µs full path, PS256 15.97 vs 17.59 µs, ES256 49.15 vs
//! 50.89 µs; i.e. ≈ 1.4–1.7 µs above the primitive, not yet the 1 µs target (see
//! [`crate::jwt`], "Measured", for where the rest goes).
//!
//! ```
//! use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
//! use kube_authn::jwt::compact::UntrustedJwt;
//! use kube_authn::jwt::router::JwtAuthenticator;
//! use kube_authn::authenticator::Context;
//! let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
//! let a = OidcAuthenticator::new(cfg);
//! // {"alg":"RS256"}.{"iss":"https://i"}.sig
//! let t = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2kifQ.c2ln";
//! let r = a.authenticate_jwt(UntrustedJwt::parse(t).unwrap(), t, &Context::default()).into_ready().unwrap();
//! assert_eq!(r.unwrap_err().to_string(), "oidc: authenticator not initialized");
//! ```

mod claims;
pub mod config;
#[cfg(feature = "remote")]
pub mod discovery;
pub(crate) mod gojson;
pub mod metrics;
pub mod refresh;
#[cfg(feature = "remote")]
pub mod reload;
#[cfg(feature = "remote")]
pub mod remote;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use std::borrow::Cow;

use crate::authenticator::{
    Audiences, AuthFuture, AuthResult, Context, Response, TokenAuthenticator,
};
use crate::error::{Error, ErrorKind};
use crate::jwt::alg::{Algorithm, AlgorithmSet};
use crate::jwt::compact::{HeaderAlg, HeaderError, UntrustedJwt};
use crate::jwt::json::{RawAudience, RawJson, RawObject, go_field_name_eq};
use crate::jwt::key::{KeySet, PublicKey};
use crate::jwt::router::JwtAuthenticator;
use crate::jwt::{Clock, SystemClock, go_quote, go_quote_list};
use crate::user::{SharedStr, TextKey, UserInfo, shared_groups};
use claims::{RawClaims, raw_str, raw_type};
use config::JwtAuthenticatorConfig;
use metrics::{IssuerLatency, JWT_AUTHENTICATOR_METRICS, JwtAuthenticatorMetrics};

/// Text while no keys have been fetched.
///
/// ```
/// use kube_authn::authenticator::{Context, TokenAuthenticator};
/// use kube_authn::token::oidc::{ERR_NOT_INITIALIZED, OidcAuthenticator, config::OidcFlags};
/// assert_eq!(ERR_NOT_INITIALIZED, "oidc: authenticator not initialized");
/// let flags = OidcFlags { issuer_url: "https://issuer.example".into(), client_id: "kubectl".into(), ..Default::default() };
/// let oidc = OidcAuthenticator::new(flags.to_config(&[]).unwrap());
/// // {"alg":"RS256"} . {"iss":"https://issuer.example"} . "sig"
/// let token = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlIn0.c2ln";
/// let err = oidc.authenticate_token(token, &Context::default()).into_ready().unwrap().unwrap_err();
/// assert_eq!(err.to_string(), ERR_NOT_INITIALIZED);
/// ```
pub const ERR_NOT_INITIALIZED: &str = "oidc: authenticator not initialized";

/// Text when the username claim maps to an empty name (no prefix): refused, where Kubernetes
/// refuses only an empty name from a CEL expression (`oidc: empty username via CEL expression
/// is not allowed`) and lets the claim mapping's through.
///
/// ```
/// assert!(kube_authn::token::oidc::ERR_EMPTY_USERNAME.starts_with("oidc: empty username"));
/// ```
pub const ERR_EMPTY_USERNAME: &str = "oidc: empty username via claim mapping is not allowed";

/// Fetches a distributed claim's JWT (`GET endpoint` with `Authorization: Bearer
/// <access_token>` when the token is non-empty). [`discovery::spawn`] installs one that uses the
/// issuer's HTTPS client; errors read like Go's `Get "<url>": <cause>`.
///
/// ```
/// use kube_authn::token::oidc::ClaimFetcher;
/// use std::{future::Future, pin::Pin};
/// struct Nothing;
/// impl ClaimFetcher for Nothing {
///     fn fetch<'a>(&'a self, endpoint: &'a str, _: &'a str) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
///         Box::pin(async move { Err(format!("Get {endpoint:?}: unreachable")) })
///     }
/// }
/// ```
pub trait ClaimFetcher: Send + Sync {
    /// The raw response body (a compact JWT) of `endpoint`, fetched with `access_token` as
    /// the bearer token when it is non-empty.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::{future::Future, pin::Pin};
    /// use kube_authn::token::oidc::ClaimFetcher;
    ///
    /// /// Serves fixed bodies (tests, or claims cached by the application).
    /// struct Fixed(HashMap<String, Vec<u8>>);
    /// impl ClaimFetcher for Fixed {
    ///     fn fetch<'a>(&'a self, endpoint: &'a str, _: &'a str) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
    ///         Box::pin(async move {
    ///             self.0.get(endpoint).cloned().ok_or_else(|| format!("Get {endpoint:?}: 404 Not Found"))
    ///         })
    ///     }
    /// }
    /// let fixed = Fixed(HashMap::from([("https://groups.example/claims".into(), b"e30.e30.c2ln".to_vec())]));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert_eq!(fixed.fetch("https://groups.example/claims", "at").await.unwrap(), b"e30.e30.c2ln");
    /// let err = fixed.fetch("https://elsewhere.example/", "").await.unwrap_err();
    /// assert_eq!(err, r#"Get "https://elsewhere.example/": 404 Not Found"#);
    /// # });
    /// ```
    fn fetch<'a>(
        &'a self,
        endpoint: &'a str,
        access_token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>>;

    /// Told that the body [`fetch`](Self::fetch) returned for `endpoint` and `access_token`
    /// was refused (it did not verify, or lacked the claim), so that a fetcher that reuses
    /// bodies fetches anew next time. The default does nothing.
    ///
    /// ```
    /// use kube_authn::token::oidc::ClaimFetcher;
    /// use std::{future::Future, pin::Pin};
    /// struct Nothing;
    /// impl ClaimFetcher for Nothing {
    ///     fn fetch<'a>(&'a self, _: &'a str, _: &'a str) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
    ///         Box::pin(async { Err("no".into()) })
    ///     }
    /// }
    /// Nothing.refused("https://groups.example/claims", "at"); // a no-op
    /// ```
    fn refused(&self, endpoint: &str, access_token: &str) {
        let _ = (endpoint, access_token);
    }
}

/// Verifies the ID tokens (JWTs) of one OIDC issuer, with that issuer's keys, and maps
/// their claims to a user as kube-apiserver's `--oidc-*` flags or a `jwt[]` entry of
/// `--authentication-config` say. The pipeline and its measured cost are in the
/// [module docs](self); [`discovery`] fetches the keys in a real deployment.
///
/// Here the issuer's key is installed by hand and an ES256 ID token is minted with it:
///
/// ```
/// use std::sync::Arc;
/// use aws_lc_rs::encoding::AsDer;
/// use aws_lc_rs::rand::SystemRandom;
/// use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
/// use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD as B64};
/// use kube_authn::authenticator::{Context, TokenAuthenticator};
/// use kube_authn::jwt::{FixedClock, key::PublicKey};
/// use kube_authn::token::oidc::{OidcAuthenticator, config::OidcFlags};
///
/// let flags = OidcFlags {
///     issuer_url: "https://issuer.example".into(),
///     client_id: "kubectl".into(),
///     signing_algs: vec!["ES256".into()],
///     ..Default::default()
/// };
/// let oidc = OidcAuthenticator::new(flags.to_config(&[]).unwrap())
///     .with_clock(Arc::new(FixedClock::new(1_900_000_000)));
///
/// // The provider's signing key; the authenticator gets its public half.
/// let rng = SystemRandom::new();
/// let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
/// let public = PublicKey::from_spki_der(pair.public_key().as_der().unwrap().as_ref()).unwrap();
/// oidc.set_keys(vec![Arc::new(public)]);
///
/// let mint = |claims: &str| {
///     let input = format!("{}.{}", B64.encode(r#"{"alg":"ES256"}"#), B64.encode(claims));
///     let sig = pair.sign(&rng, input.as_bytes()).unwrap();
///     format!("{input}.{}", B64.encode(sig.as_ref()))
/// };
/// let ctx = Context::default();
/// let ask = |token: &str| oidc.authenticate_token(token, &ctx).into_ready().unwrap();
///
/// let token = mint(r#"{"iss":"https://issuer.example","aud":"kubectl","sub":"jane","exp":2000000000}"#);
/// // Without --oidc-username-prefix, a `sub` user name is prefixed with the issuer and `#`.
/// assert_eq!(ask(&token).unwrap().unwrap().user.name(), "https://issuer.example#jane");
///
/// let expired = mint(r#"{"iss":"https://issuer.example","aud":"kubectl","sub":"jane","exp":1800000000}"#);
/// assert!(ask(&expired).unwrap_err().to_string().contains("token is expired"));
/// let other_client = mint(r#"{"iss":"https://issuer.example","aud":"someone","sub":"jane","exp":2000000000}"#);
/// assert!(ask(&other_client).is_err());
/// ```
pub struct OidcAuthenticator {
    cfg: JwtAuthenticatorConfig,
    keys: ArcSwapOption<KeySet>,
    refresher: ArcSwapOption<Box<dyn refresh::Refresh>>,
    claim_fetcher: ArcSwapOption<Box<dyn ClaimFetcher>>,
    implicit_audiences: Option<Audiences>,
    clock: Arc<dyn Clock>,
    metrics: &'static JwtAuthenticatorMetrics,
    /// This issuer's latency series in `metrics`.
    latency: Arc<IssuerLatency>,
}

impl fmt::Debug for OidcAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcAuthenticator")
            .field("issuer", &self.cfg.issuer_url)
            .field("initialized", &self.keys.load().is_some())
            .finish()
    }
}

/// The claims go-oidc's verifier reads, taken from the already-split raw claims (one JSON
/// pass per token), decoded as go-oidc v2.5.0 (what Kubernetes vendors) decodes its `idToken`
/// struct with `encoding/json`: members in document order; `exp`/`iat`/`nbf` through
/// `json.Number` and `aud` through go-oidc's `audience` (custom decoders: their error ends the
/// decoding at once), `iss`/`sub`/`nonce`/`at_hash` as strings and the distributed-claim maps
/// typed (a type error is kept and reported at the end, the first one only), `null` leaving a
/// field unset. Go's texts, checked against k8s.io/apiserver by the `oidc` conformance vectors.
/// One deliberate difference: a quoted number (`"exp": "1700000000"`), which `json.Number`
/// accepts, is refused (a NumericDate must be a number: the issue's type-confusion rule).
struct VerifyClaims<'a> {
    iss: Option<std::borrow::Cow<'a, str>>,
    aud: Option<RawAudience<'a>>,
    exp: Option<i64>,
    nbf: Option<i64>,
    claim_names: Option<RawObject<'a>>,
    claim_sources: Option<RawObject<'a>>,
}

/// The JSON names of go-oidc v2.5.0's `idToken` fields.
const ID_TOKEN_FIELDS: [&str; 10] = [
    "iss",
    "sub",
    "aud",
    "exp",
    "iat",
    "nbf",
    "nonce",
    "at_hash",
    "_claim_names",
    "_claim_sources",
];

/// The `idToken` field Go's `encoding/json` decodes the top-level member `name` into although
/// `name` (decoded) is not that field's name: `EXP`, `Sub`, `_Claim_Names`, `iſs` (U+017F)…
/// go-oidc reads those (so `{"exp":<future>,"EXP":1}` has expired for Go), kube-authn's
/// readers take exact names only: such a member is refused (an error, not *not mine*), so
/// both never read different claims. A string `iss` variant never gets here: the router's scan
/// already refused it (`is_iss_variant` in src/jwt/json.rs).
///
/// Cheap on the request path: the byte lengths the ten names can take (U+017F `ſ` is two bytes
/// where an `s` is one; no name has a `k`, so the Kelvin sign never matches) and their first
/// bytes filter first.
fn folded_id_token_field(name: &str) -> Option<&'static str> {
    let first = name.as_bytes().first().map(u8::to_ascii_lowercase);
    // First bytes: `i s a e n _`, or U+017F's lead byte (`ſub`).
    if !matches!(name.len(), 3..=5 | 7 | 8 | 12..=16)
        || !matches!(first, Some(b'i' | b's' | b'a' | b'e' | b'n' | b'_' | 0xC5))
    {
        return None;
    }
    ID_TOKEN_FIELDS
        .into_iter()
        .find(|field| name != *field && go_field_name_eq(name, field))
}

/// go-oidc's `claimSource` (`endpoint`, `access_token`: strings) decoded from one
/// `_claim_sources` entry: a member matching either field (as Go matches names) with a value
/// that is neither a string nor `null` is Go's type error; other members are ignored.
fn claim_source_fields(fields: &RawObject<'_>, keep: &mut impl FnMut(String)) {
    for (name, v) in fields.iter() {
        let kind = raw_type(v);
        if kind == "string" || kind == "null" {
            continue;
        }
        for field in ["endpoint", "access_token"] {
            if go_field_name_eq(&name, field) {
                keep(format!(
                    "json: cannot unmarshal {kind} into Go struct field claimSource._claim_sources.{field} of type string"
                ));
            }
        }
    }
}

/// go-oidc's `jsonTime.UnmarshalJSON` for claim `name`: a JSON number (an integer, or a float
/// truncated toward zero); `null` reads as the empty `json.Number`, which Go then fails to
/// parse. Integers outside `i64` and floats beyond it are refused with `ParseFloat`'s
/// out-of-range text (Go's `int64(f)` wraps them: on amd64 to `MinInt64`, an `exp` long past,
/// an `nbf` never reached; refusing fails closed). The bounds are exact: `[-2^63, 2^63)`, so
/// no value saturates to `i64::MAX`.
fn go_oidc_time(name: &str, v: RawJson<'_>) -> Result<i64, String> {
    let text = v.text();
    match crate::jwt::json::json_kind(v) {
        "number" => {
            if let Ok(n) = text.parse::<i64>() {
                return Ok(n);
            }
            match text.parse::<f64>() {
                Ok(f)
                    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) =>
                {
                    Ok(f.trunc() as i64)
                }
                Ok(_) => Err(format!(
                    "strconv.ParseFloat: parsing {}: value out of range",
                    go_quote(text)
                )),
                Err(_) => Err(format!(
                    "strconv.ParseFloat: parsing {}: invalid syntax",
                    go_quote(text)
                )),
            }
        }
        "null" => Err(r#"strconv.ParseFloat: parsing "": invalid syntax"#.to_owned()),
        "string" => {
            let body = raw_str(v).unwrap_or_default();
            if crate::jwt::json::is_json_number(&body) {
                // `json.Number` takes a quoted number; kube-authn does not.
                Err(format!(
                    "json: cannot unmarshal string into Go struct field idToken.{name} of type json.Number"
                ))
            } else {
                Err(format!(
                    "json: invalid number literal, trying to unmarshal {} into Number",
                    go_quote(text)
                ))
            }
        }
        kind => Err(format!(
            "json: cannot unmarshal {kind} into Go struct field idToken.{name} of type json.Number"
        )),
    }
}

/// The members of `_claim_sources`, one at a time (in tests, each one counted).
fn source_members<'c>(
    sources: &RawObject<'c>,
) -> impl Iterator<Item = (Cow<'c, str>, RawJson<'c>)> + use<'c> {
    sources.iter().inspect(|_| {
        #[cfg(test)]
        tests::SOURCE_MEMBER_VISITS.with(|n| n.set(n.get() + 1));
    })
}

/// go-oidc's check of the distributed-claim names: each `_claim_names` entry names a
/// non-empty source that `_claim_sources` holds, in document order.
///
/// `_claim_sources` is a nested object (not indexed): a lookup per name would walk it once
/// per name, quadratic in an issuer-signed payload (1,900 × 1,900 entries in 53 KB: ≈ 100 ms).
/// Its names are collected and sorted once, at the first lookup (a token without
/// `_claim_names` allocates nothing), then each name is a binary search.
fn check_claim_sources(claims: &VerifyClaims<'_>) -> Result<(), String> {
    let Some(names) = &claims.claim_names else {
        return Ok(());
    };
    let mut sorted: Option<Vec<Cow<'_, str>>> = None;
    for (_, src) in names.iter() {
        let src = src.as_str().unwrap_or_default();
        if src.is_empty() {
            return Err("oidc: failed to obtain source from claim name".into());
        }
        let Some(sources) = &claims.claim_sources else {
            return Err("oidc: source does not exist".into());
        };
        let sorted = sorted.get_or_insert_with(|| {
            let mut keys: Vec<Cow<'_, str>> = source_members(sources).map(|(k, _)| k).collect();
            keys.sort_unstable();
            keys
        });
        if sorted
            .binary_search_by(|k| k.as_ref().cmp(src.as_ref()))
            .is_err()
        {
            return Err("oidc: source does not exist".into());
        }
    }
    Ok(())
}

impl<'a> VerifyClaims<'a> {
    fn from_raw(c: &RawClaims<'a>) -> Result<Self, String> {
        let fail = |e: String| format!("oidc: failed to unmarshal claims: {e}");
        let mut out = VerifyClaims {
            iss: None,
            aud: None,
            exp: None,
            nbf: None,
            claim_names: None,
            claim_sources: None,
        };
        // encoding/json keeps the first type error and goes on; a custom decoder's error ends
        // the decoding at once.
        let mut kept: Option<String> = None;
        let mut keep = |e: String| {
            kept.get_or_insert(e);
        };
        let type_error = |kind: &str, field: &str, go_type: &str| {
            format!(
                "json: cannot unmarshal {kind} into Go struct field idToken.{field} of type {go_type}"
            )
        };
        for (name, value) in c.iter() {
            let kind = raw_type(value);
            match name {
                "iss" | "sub" | "nonce" | "at_hash" => match kind {
                    "string" if name == "iss" => out.iss = raw_str(value).ok(),
                    "string" | "null" => {}
                    _ => keep(type_error(kind, name, "string")),
                },
                "aud" => out.aud = Some(RawAudience::from_raw_go_oidc(value).map_err(fail)?),
                "exp" => out.exp = Some(go_oidc_time("exp", value).map_err(fail)?),
                "iat" => {
                    go_oidc_time("iat", value).map_err(fail)?;
                }
                // `NotBefore *jsonTime`: a pointer, so `null` leaves it unset (unlike the
                // `exp`/`iat` values, whose decoder sees the `null`).
                "nbf" if kind == "null" => {}
                "nbf" => out.nbf = Some(go_oidc_time("nbf", value).map_err(fail)?),
                "_claim_names" | "_claim_sources" => {
                    // (JSON type of an entry, its Go type, the map's Go type)
                    let (element, go_element, map_type) = if name == "_claim_names" {
                        ("string", "string", "map[string]string")
                    } else {
                        ("object", "oidc.claimSource", "map[string]oidc.claimSource")
                    };
                    match kind {
                        "null" => {}
                        "object" => {
                            // Each entry in document order (Go keeps the first type error).
                            let map = value.as_object();
                            for (_, v) in map.iter().flat_map(|o| o.iter()) {
                                match raw_type(v) {
                                    "null" => {}
                                    k if k == element => {
                                        if let Some(fields) = v.as_object() {
                                            claim_source_fields(&fields, &mut keep);
                                        }
                                    }
                                    k => keep(type_error(k, name, go_element)),
                                }
                            }
                            if name == "_claim_names" {
                                out.claim_names = map;
                            } else {
                                out.claim_sources = map;
                            }
                        }
                        _ => keep(type_error(kind, name, map_type)),
                    }
                }
                other => {
                    if let Some(field) = folded_id_token_field(other) {
                        return Err(fail(format!(
                            "claim {} matches idToken.{field} only by case folding",
                            go_quote(other)
                        )));
                    }
                }
            }
        }
        match kept {
            Some(e) => Err(fail(e)),
            None => Ok(out),
        }
    }
    fn has_aud(&self, want: &str) -> bool {
        self.aud.is_some_and(|a| a.contains(want))
    }

    fn aud_list(&self) -> String {
        match self.aud {
            Some(a) => go_quote_list(a.iter()),
            None => go_quote_list([""; 0]),
        }
    }
}

/// Go's `time.Time` `%v` in UTC of `time.Unix(secs, nanos)` (`Time.String`): [`go_time_utc`]
/// with the nanoseconds after the seconds, trailing zeros trimmed and no dot when there are
/// none (`2026-11-28 22:26:02.50244817 +0000 UTC`). Go prints `time.Now()` with its monotonic
/// clock reading after that (` m=+0.102201679`), which has no counterpart here.
fn go_time_utc_nanos((secs, nanos): (i64, u32)) -> String {
    let mut text = go_time_utc(secs);
    if nanos > 0 && nanos < 1_000_000_000 {
        let digits = format!("{nanos:09}");
        let at = text.find(" +0000").unwrap_or(text.len());
        text.insert_str(at, &format!(".{}", digits.trim_end_matches('0')));
    }
    text
}

/// Go's `time.Time` `%v` in UTC, of `time.Unix(unix, 0)`: `2009-11-10 22:00:00 +0000 UTC`.
///
/// Exact for every `i64`, as Go computes it: the seconds are moved to Go's absolute epoch
/// (March 1 of year −292277022400) in unsigned arithmetic that wraps modulo 2^64, so a time
/// whose `time.Unix` overflowed, or `MinInt64`, prints as Go prints it; a negative year has
/// its sign before four or more digits (`-0001`).
///
/// ```
/// use kube_authn::token::oidc::go_time_utc;
/// assert_eq!(go_time_utc(1257890400), "2009-11-10 22:00:00 +0000 UTC");
/// assert_eq!(go_time_utc(i64::MAX), "292277026596-12-04 15:30:07 +0000 UTC");
/// assert_eq!(go_time_utc(i64::MIN), "292277026596-12-04 15:30:08 +0000 UTC");
/// assert_eq!(go_time_utc(-62198755200), "-0001-01-01 00:00:00 +0000 UTC");
/// ```
pub fn go_time_utc(unix: i64) -> String {
    // Go's unixToInternal + internalToAbsolute, and absoluteYears.
    const UNIX_TO_ABSOLUTE: u64 = 9_223_372_028_741_760_000;
    const ABSOLUTE_YEARS: i64 = 292_277_022_400;
    let abs = (unix as u64).wrapping_add(UNIX_TO_ABSOLUTE);
    // At most 2^64 / 86400 days: well inside i64.
    let days = (abs / 86400) as i64;
    let secs = (abs % 86400) as i64;
    // Howard Hinnant's civil_from_days, from March 1 of a year that is 0 modulo 400.
    let era = days / 146097;
    let doe = days % 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400 - ABSOLUTE_YEARS;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    let sign = if y < 0 { "-" } else { "" };
    format!(
        "{sign}{:04}-{m:02}-{d:02} {:02}:{:02}:{:02} +0000 UTC",
        y.unsigned_abs(),
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// `url` with the password of its userinfo replaced by `***`, as Go's net/http
/// `stripPassword` shows a URL in a `url.Error` (`https://user:***@host/…`). Used wherever a
/// URL that came from an issuer's document or a token (`jwks_uri`, distributed-claim
/// endpoints) goes into an error or a log (`https://u:p@h/x` → `https://u:***@h/x`).
pub(crate) fn strip_password(url: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let Some(scheme_end) = url.find("://") else {
        return Cow::Borrowed(url);
    };
    let start = scheme_end + 3;
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let authority = &url[start..authority_end];
    let Some(at) = authority.rfind('@') else {
        return Cow::Borrowed(url);
    };
    let Some(colon) = authority[..at].find(':') else {
        return Cow::Borrowed(url);
    };
    Cow::Owned(format!(
        "{}:***{}",
        &url[..start + colon],
        &url[start + at..]
    ))
}

fn bad(msg: String) -> Error {
    Error::new(ErrorKind::InvalidCredential, msg)
}

/// Why a routed token's claims are refused (a payload with a repeated member name: go-oidc
/// would read it with the last value winning; kube-authn refuses it, see
/// docs/compatibility.md).
fn refusal<'j>(jwt: &'j UntrustedJwt<'_>) -> &'j str {
    jwt.claims_error()
        .unwrap_or("json: cannot unmarshal claims: malformed JSON")
}

/// A distributed claim source's body as go-jose's `ParseSigned` reads it: white space removed
/// anywhere, so a trailing newline or a wrapped token is fine. go-jose removes every Unicode
/// space (`unicode.IsSpace`); only tab, LF, FF, CR and space are removed here, so a body with
/// a vertical tab, a no-break space or another Unicode space is refused (docs/compatibility.md).
/// The payload segment was already base64-decoded unstripped by [`go_untrusted_issuer`]
/// (Go's decoder skips only CR and LF), so a tab, FF or space there never gets here; such a
/// body is left as it is all the same. Only for claim sources: a bearer token is never
/// rewritten.
fn strip_claim_jwt_whitespace(body: &str) -> std::borrow::Cow<'_, str> {
    let ws = |b: u8| matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ');
    if !body.bytes().any(ws) {
        return std::borrow::Cow::Borrowed(body);
    }
    let payload = body.split('.').nth(1).unwrap_or("");
    if payload.bytes().any(|b| matches!(b, b'\t' | b'\x0c' | b' ')) {
        return std::borrow::Cow::Borrowed(body);
    }
    std::borrow::Cow::Owned(
        body.chars()
            .filter(|&c| !(c.is_ascii() && ws(c as u8)))
            .collect(),
    )
}

/// Go's `base64.RawURLEncoding.DecodeString` ([`crate::api::go_base64`]): the error is the
/// offset Go's `CorruptInputError` names.
fn go_raw_url_base64(src: &[u8]) -> Result<Vec<u8>, usize> {
    crate::api::go_base64(src, true, false)
}

/// Kubernetes' `untrustedIssuer` (k8s.io/apiserver plugin/pkg/authenticator/token/oidc): the
/// `iss` of a distributed claim source's body, read before anything is verified, or its error
/// text. The body is taken as it was served: after Go's `strings.TrimSpace` it must not start
/// with `{`; split on `.` it must have exactly three parts; the second is decoded by
/// [`go_raw_url_base64`] and then read by Go's `encoding/json` into an anonymous struct with
/// one `iss` string ([`gojson::decode_struct`]: names matched as Go matches them, the last
/// one winning, `null` leaving it empty). The legacy Google issuer `accounts.google.com` is
/// `https://accounts.google.com`.
fn go_untrusted_issuer(token: &[u8]) -> Result<String, String> {
    const CLAIMS: &str = r#"struct { Issuer string "json:\"iss\"" }"#;
    // Go's `TrimSpace` trims Unicode white space (Rust's `trim_start` trims the same set);
    // an invalid UTF-8 byte is not white space, nor `{`.
    let lead = match std::str::from_utf8(token) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&token[..e.valid_up_to()]).unwrap_or_default(),
    };
    if lead.trim_start().starts_with('{') {
        return Err("token is not compact JWT".into());
    }
    let mut parts = token.split(|&b| b == b'.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("malformed token".into());
    };
    let payload = go_raw_url_base64(payload)
        .map_err(|at| format!("error decoding token: illegal base64 data at input byte {at}"))?;
    // A top-level value that is not an object names the struct's type, which `decode_struct`
    // prints as `<pkg>.<name>`: an anonymous struct has no `.`.
    let fields = gojson::decode_struct(&payload, CLAIMS, "", &[("iss", gojson::GoType::String)])
        .map_err(|e| {
            let e = match e.strip_suffix('.') {
                Some(t) if t.ends_with(CLAIMS) => t.to_owned(),
                _ => e,
            };
            format!("while unmarshaling token: {e}")
        })?;
    let iss = gojson::string(fields[0]);
    if iss == "accounts.google.com" {
        return Ok("https://accounts.google.com".into());
    }
    Ok(iss)
}

/// go-jose's `ParseSigned` error for a body that passed [`go_untrusted_issuer`], as far as it
/// is a base64 error: go-jose first removes every Unicode space (`unicode.IsSpace`; an invalid
/// UTF-8 byte becomes U+FFFD), then decodes the header, payload and signature segments in
/// that order. `None` when all three decode (go-jose's other errors, about the header's JSON,
/// are not reproduced).
fn go_jose_segment_error(body: &[u8]) -> Option<String> {
    let stripped: String = crate::api::go_utf8_lossy(body)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if stripped.matches('.').count() != 2 {
        return Some("go-jose/go-jose: compact JWS format must have three parts".into());
    }
    stripped
        .split('.')
        .find_map(|segment| go_raw_url_base64(segment.as_bytes()).err())
        .map(|at| format!("illegal base64 data at input byte {at}"))
}

impl OidcAuthenticator {
    /// An uninitialised authenticator for `cfg` (no keys yet).
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// assert!(!OidcAuthenticator::new(cfg).is_initialized());
    /// ```
    pub fn new(cfg: JwtAuthenticatorConfig) -> Self {
        let latency = JWT_AUTHENTICATOR_METRICS.issuer(&cfg.issuer_url);
        Self {
            cfg,
            keys: ArcSwapOption::empty(),
            refresher: ArcSwapOption::empty(),
            claim_fetcher: ArcSwapOption::empty(),
            implicit_audiences: None,
            clock: Arc::new(SystemClock),
            metrics: &JWT_AUTHENTICATOR_METRICS,
            latency,
        }
    }

    /// Records into `metrics` instead of the process-wide
    /// [`JWT_AUTHENTICATOR_METRICS`] (the latency of the
    /// tokens it answers, and the JWKS fetches its discovery task makes).
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// use kube_authn::token::oidc::metrics::JwtAuthenticatorMetrics;
    /// static MINE: JwtAuthenticatorMetrics = JwtAuthenticatorMetrics::new();
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// let a = OidcAuthenticator::new(cfg).with_metrics(&MINE);
    /// ```
    pub fn with_metrics(mut self, metrics: &'static JwtAuthenticatorMetrics) -> Self {
        self.latency = metrics.issuer(&self.cfg.issuer_url);
        self.metrics = metrics;
        self
    }

    /// The metrics this authenticator records into.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn metrics(&self) -> &'static JwtAuthenticatorMetrics {
        self.metrics
    }

    /// Makes the authenticator audience-agnostic with the server's API audiences (as
    /// kube-apiserver wraps its JWT authenticators).
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// let a = OidcAuthenticator::new(cfg).with_api_audiences(["api"].into());
    /// ```
    pub fn with_api_audiences(mut self, audiences: Audiences) -> Self {
        self.implicit_audiences = Some(audiences);
        self
    }

    /// Replaces the clock (tests).
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// let a = OidcAuthenticator::new(cfg).with_clock(std::sync::Arc::new(kube_authn::jwt::FixedClock::new(0)));
    /// ```
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Installs a key set (indexed by JWK `kid`); lock-free for readers. A failed fetch should
    /// simply not call this, so the last good keys stay.
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// let a = OidcAuthenticator::new(cfg);
    /// a.set_keys(vec![]);
    /// assert!(a.is_initialized());
    /// ```
    pub fn set_keys(&self, keys: Vec<Arc<PublicKey>>) {
        self.keys.store(Some(Arc::new(KeySet::by_jwk_kid(keys))));
    }

    /// Installs the refresher asked for when no key of the current set verifies a token (an
    /// unknown `kid`, no `kid`, a known `kid` whose key fails): one coalesced,
    /// cooldown-limited refetch, then one more verification if the keys changed.
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator, refresh::KeyRefresher};
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// let a = OidcAuthenticator::new(cfg);
    /// a.set_refresher(Box::new(KeyRefresher::new(std::time::Duration::from_secs(10), || async { false })));
    /// ```
    pub fn set_refresher(&self, refresher: Box<dyn refresh::Refresh>) {
        self.refresher.store(Some(Arc::new(refresher)));
    }

    /// Installs the fetcher used for distributed claims (`_claim_names`/`_claim_sources`) of
    /// the groups claim. Without one, a token whose groups are distributed is refused.
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator, ClaimFetcher};
    /// # use std::{future::Future, pin::Pin};
    /// # struct Nothing;
    /// # impl ClaimFetcher for Nothing {
    /// #     fn fetch<'a>(&'a self, _: &'a str, _: &'a str) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> { Box::pin(async { Err("no".into()) }) }
    /// # }
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// let a = OidcAuthenticator::new(cfg);
    /// a.set_claim_fetcher(Box::new(Nothing));
    /// ```
    pub fn set_claim_fetcher(&self, fetcher: Box<dyn ClaimFetcher>) {
        self.claim_fetcher.store(Some(Arc::new(fetcher)));
    }

    /// The configuration.
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// assert_eq!(OidcAuthenticator::new(cfg).config().audiences, ["c"]);
    /// ```
    pub fn config(&self) -> &JwtAuthenticatorConfig {
        &self.cfg
    }

    /// Whether keys have been installed.
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// assert!(!OidcAuthenticator::new(cfg).is_initialized());
    /// ```
    pub fn is_initialized(&self) -> bool {
        self.keys.load().is_some()
    }

    /// The configured issuer URL (the router key; `https://accounts.google.com` is also
    /// reachable as `accounts.google.com`).
    ///
    /// ```
    /// # use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
    /// # let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
    /// assert_eq!(OidcAuthenticator::new(cfg).issuer_url(), "https://i");
    /// ```
    pub fn issuer_url(&self) -> &str {
        &self.cfg.issuer_url
    }

    /// go-oidc v2.5.0's `IDTokenVerifier.Verify` (the version Kubernetes uses), first part, in
    /// its order: the header's algorithm (its only check before it looks for a key), then a
    /// key of `keys` for the token's `kid` (every key for a token without one) that verifies
    /// the signature ([`Unverified::NoKey`] when none does). The claims follow in
    /// [`Self::verify_claims`].
    fn verify_signature(&self, jwt: &UntrustedJwt<'_>, keys: &KeySet) -> Result<(), Unverified> {
        let alg = self.check_alg(jwt).map_err(Unverified::Refused)?;
        let header = jwt
            .header()
            .map_err(|e| Unverified::Refused(format!("oidc: malformed jwt: {e}")))?;
        let (input, sig) = (jwt.signing_input(), jwt.signature());
        if keys
            .find(header.kid())
            .any(|k| k.verify(alg, input, sig).is_ok())
        {
            Ok(())
        } else {
            Err(Unverified::NoKey)
        }
    }

    /// go-oidc's remote key set when no cached key verified the token (jwks.go `verify`): the
    /// keys are fetched again, through the installed refresher (coalesced with concurrent
    /// callers, at most one fetch per cooldown: within it the keys are what they are), and the
    /// token is tried once more if the key set changed since `tried`. The error is go-oidc's:
    /// `failed to verify signature: fetching keys <err>` when the fetch this call ran or waited
    /// on failed, else `… failed to verify id token signature`.
    async fn verify_signature_refetching(
        &self,
        jwt: &UntrustedJwt<'_>,
        tried: Option<Arc<KeySet>>,
    ) -> Result<(), String> {
        let Some(refresher) = self.refresher.load_full() else {
            return Err(Unverified::NoKey.to_string());
        };
        let refreshed = refresher.refresh_keys().await;
        if let Some(keys) = self.keys.load_full() {
            let changed = tried.as_ref().is_none_or(|t| !Arc::ptr_eq(t, &keys));
            if changed {
                match self.verify_signature(jwt, &keys) {
                    Ok(()) => return Ok(()),
                    Err(Unverified::Refused(e)) => return Err(e),
                    Err(Unverified::NoKey) => {}
                }
            }
        }
        match refreshed.fetch_error() {
            Some(e) => Err(format!("failed to verify signature: fetching keys {e}")),
            None => Err(Unverified::NoKey.to_string()),
        }
    }

    /// go-oidc's checks after the signature, in its order: the claims (unmarshalled,
    /// distributed-claim sources, issuer, a single audience, expiry, not-before); then
    /// Kubernetes' check of several audiences. The verified claims are returned.
    fn verify_claims<'j>(&self, jwt: &'j UntrustedJwt<'_>) -> Result<RawClaims<'j>, String> {
        let raw = jwt
            .claims()
            .map(RawClaims::new)
            .ok_or_else(|| format!("oidc: failed to unmarshal claims: {}", refusal(jwt)))?;
        let claims = self.check_claims(&raw)?;
        if self.cfg.audiences.len() > 1 && !self.cfg.audiences.iter().any(|a| claims.has_aud(a)) {
            let mut want = self.cfg.audiences.clone();
            want.sort();
            return Err(format!(
                "oidc: expected audience in {} got {}",
                go_quote_list(want),
                claims.aud_list()
            ));
        }
        Ok(raw)
    }

    /// go-oidc's only check before it looks for a key (so before a JWKS refetch): the
    /// header's algorithm must be one of the configured ones.
    fn check_alg(&self, jwt: &UntrustedJwt<'_>) -> Result<Algorithm, String> {
        let header = jwt
            .header()
            .map_err(|e| format!("oidc: malformed jwt: {e}"))?;
        match header.alg() {
            HeaderAlg::Known(a) if self.cfg.signing_algs.contains(a) => Ok(a),
            other => {
                let got = match other {
                    HeaderAlg::Known(a) => a.name(),
                    HeaderAlg::Unsupported => "unsupported",
                };
                let names = &self.cfg.signing_alg_names;
                let listed = !names.is_empty()
                    && AlgorithmSet::parse_kubernetes(names).ok() == Some(self.cfg.signing_algs);
                let expected: Vec<&str> = if !listed {
                    let mut names: Vec<&str> =
                        self.cfg.signing_algs.iter().map(|a| a.name()).collect();
                    names.sort_unstable();
                    names
                } else {
                    names.iter().map(String::as_str).collect()
                };
                Err(format!(
                    "oidc: id token signed with unsupported algorithm, expected {} got {}",
                    go_quote_list(expected),
                    go_quote(got)
                ))
            }
        }
    }

    /// go-oidc's checks of the claims once the signature has verified, in its order:
    /// unmarshalling, distributed-claim sources, issuer, single audience, expiry, not-before.
    fn check_claims<'c>(&self, raw: &RawClaims<'c>) -> Result<VerifyClaims<'c>, String> {
        let claims = VerifyClaims::from_raw(raw)?;
        check_claim_sources(&claims)?;
        let iss = claims.iss.as_deref().unwrap_or("");
        if !self.owns_issuer(iss) {
            return Err(format!(
                "oidc: id token issued by a different provider, expected {} got {}",
                go_quote(&self.cfg.issuer_url),
                go_quote(iss)
            ));
        }
        if let [only] = self.cfg.audiences.as_slice()
            && !claims.has_aud(only)
        {
            return Err(format!(
                "oidc: expected audience {} got {}",
                go_quote(only),
                claims.aud_list()
            ));
        }
        // go-oidc: `expiry.Before(now)`, to the nanosecond.
        let now_nanos = self.clock.now_unix_nanos();
        let now = now_nanos.0;
        // `time.Unix(exp, 0)` wraps past `MaxInt64 − 62135596800`: a time long past in Go.
        let exp = claims.exp.unwrap_or(i64::MIN);
        if crate::jwt::go_unix_overflows(exp) || crate::jwt::before(exp, now_nanos) {
            let shown = claims
                .exp
                .map_or("0001-01-01 00:00:00 +0000 UTC".to_owned(), go_time_utc);
            return Err(format!("oidc: token is expired (Token Expiry: {shown})"));
        }
        if let Some(nbf) = claims.nbf
            && now.saturating_add(60) < nbf
        {
            return Err(format!(
                "oidc: current time {} before the nbf (not before) time: {}",
                go_time_utc_nanos(now_nanos),
                go_time_utc(nbf)
            ));
        }
        Ok(claims)
    }

    /// The distributed source of the groups claim, if it must be fetched (Kubernetes
    /// `claimResolver.expand`): `Ok(None)` when the claim is present, not distributed, or
    /// aggregated (an inline `JWT`, unsupported and ignored as in Kubernetes).
    fn distributed_source(
        &self,
        claims: &RawClaims<'_>,
    ) -> Result<Option<(String, String)>, String> {
        let Some(g) = &self.cfg.groups else {
            return Ok(None);
        };
        if claims.get(&g.claim).is_some() {
            return Ok(None);
        }
        let Some(names) = claims.get("_claim_names") else {
            return Ok(None);
        };
        // go-oidc has already refused any `_claim_names` but `null` or an object of strings
        // (or nulls, as empty sources), and any `_claim_sources` but `null` or an object of
        // objects (or nulls) whose `endpoint` and `access_token` are strings (or nulls).
        let Some(sources) = claims.get("_claim_sources") else {
            return Err("oidc: no claim sources".into());
        };
        // Kubernetes reads the sources as `map[string]endpoint` (`endpoint`, `access_token`,
        // `JWT`: strings; names matched as Go matches them, the last one winning; a `null`
        // member leaves the field as it was, so `"endpoint":"x","ENDPOINT":null` keeps `x`; a
        // `null` source is an empty one); `JWT` is the one field go-oidc did not type-check.
        #[derive(Default)]
        struct Endpoint {
            url: String,
            access_token: String,
        }
        let mut table: Vec<(Cow<'_, str>, Endpoint)> = Vec::new();
        for (key, entry) in sources.as_object().iter().flat_map(|o| o.iter()) {
            let mut ep = Endpoint::default();
            for (field, v) in entry.as_object().iter().flat_map(|o| o.iter()) {
                if v.is_null() {
                    continue;
                }
                let text = || raw_str(v).map(|s| s.into_owned()).unwrap_or_default();
                if go_field_name_eq(&field, "endpoint") {
                    ep.url = text();
                } else if go_field_name_eq(&field, "access_token") {
                    ep.access_token = text();
                } else if go_field_name_eq(&field, "JWT") {
                    let kind = raw_type(v);
                    if kind != "string" && kind != "null" {
                        return Err(format!(
                            "oidc: could not parse claim sources: json: cannot unmarshal {kind} into Go struct field endpoint.JWT of type string"
                        ));
                    }
                }
            }
            table.push((key, ep));
        }
        let src = names
            .as_object()
            .and_then(|o| o.iter().filter(|(n, _)| n == g.claim.as_str()).last())
            .map(|(_, v)| raw_str(v).unwrap_or_default());
        let Some(src) = src else {
            return Ok(None);
        };
        let Some((_, source)) = table.into_iter().rfind(|(k, _)| *k == src) else {
            return Err(format!(
                "id token _claim_names contained a source {src} missing in _claims_sources"
            ));
        };
        if source.url.is_empty() {
            return Ok(None);
        }
        Ok(Some((source.url, source.access_token)))
    }

    /// Fetches and verifies a distributed groups claim, then maps the user (Kubernetes
    /// `claimResolver.resolve`): the endpoint's JWT must come from this issuer and pass the
    /// same verification as an ID token (keys, algorithms, audiences, expiry).
    async fn resolve_distributed(
        &self,
        id_token: &UntrustedJwt<'_>,
        endpoint: String,
        access_token: String,
    ) -> AuthResult {
        let wrap = |e: String| bad(format!("oidc: could not expand distributed claims: {e}"));
        let claim = self.cfg.groups.as_ref().map_or("", |g| g.claim.as_str());
        let fetcher = self.claim_fetcher.load_full().ok_or_else(|| {
            wrap(format!(
                "while getting distributed claim {}: no HTTP client for distributed claims",
                go_quote(claim)
            ))
        })?;
        let body = fetcher.fetch(&endpoint, &access_token).await.map_err(|e| {
            wrap(format!(
                "while getting distributed claim {}: {e}",
                go_quote(claim)
            ))
        })?;
        let mut body_accepted = false;
        let result = self
            .check_distributed(id_token, &endpoint, &body, &mut body_accepted)
            .await;
        // Only a body that did not verify or lacked the claim is dropped: an ID token whose
        // own claims fail the mapping says nothing about the body.
        if result.is_err() && !body_accepted {
            fetcher.refused(&endpoint, &access_token);
        }
        result
    }

    /// The rest of [`Self::resolve_distributed`], on the fetched body; `body_accepted` is set
    /// once the body has verified and held the claim.
    async fn check_distributed(
        &self,
        id_token: &UntrustedJwt<'_>,
        endpoint: &str,
        body: &[u8],
        body_accepted: &mut bool,
    ) -> AuthResult {
        let wrap = |e: String| bad(format!("oidc: could not expand distributed claims: {e}"));
        let claim = self.cfg.groups.as_ref().map_or("", |g| g.claim.as_str());
        let untrusted = |e: &dyn fmt::Display| {
            wrap(format!(
                "getting untrusted issuer from endpoint {} failed for claim {}: {e}",
                strip_password(endpoint),
                go_quote(claim)
            ))
        };
        // Kubernetes reads the issuer from the body as served (`untrustedIssuer`), asks for
        // that issuer's verifier, and only then has go-oidc parse the JWS.
        let iss = go_untrusted_issuer(body).map_err(|e| untrusted(&e))?;
        if !self.owns_issuer(&iss) {
            return Err(wrap(format!(
                "verifying untrusted issuer {} failed: verifier not initialized for issuer: {}",
                go_quote(&iss),
                go_quote(&iss)
            )));
        }
        let wrap_verify = |e: String| wrap(format!("verify distributed claim token: {e}"));
        // go-jose's base64 error where it has one, else ours (a segment Go decodes but the
        // strict parser refuses: non-canonical trailing bits, white space other than what
        // `strip_claim_jwt_whitespace` removes; or a payload the JWT scanner refuses).
        let malformed = |ours: &dyn fmt::Display| {
            let e = go_jose_segment_error(body).unwrap_or_else(|| ours.to_string());
            wrap_verify(format!("oidc: malformed jwt: {e}"))
        };
        let text = std::str::from_utf8(body).map_err(|_| malformed(&"malformed token"))?;
        let text = strip_claim_jwt_whitespace(text);
        let jwt = UntrustedJwt::parse(&text).map_err(|e| malformed(&e))?;
        if jwt.header() == Err(HeaderError::Signature)
            && let Some(e) = go_jose_segment_error(body)
        {
            return Err(wrap_verify(format!("oidc: malformed jwt: {e}")));
        }
        // The claim JWT goes through the issuer's key set like an ID token: when no key
        // verifies it (a rotation), one refetch (coalesced, rate-limited) once its algorithm
        // has passed (go-oidc's only check before the key lookup), then one more try.
        let keys = self
            .keys
            .load_full()
            .ok_or_else(|| Error::from_static(ErrorKind::Unavailable, ERR_NOT_INITIALIZED))?;
        match self.verify_signature(&jwt, &keys) {
            Ok(()) => {}
            Err(Unverified::Refused(e)) => return Err(wrap_verify(e)),
            Err(Unverified::NoKey) => self
                .verify_signature_refetching(&jwt, Some(keys))
                .await
                .map_err(wrap_verify)?,
        }
        let dist = self.verify_claims(&jwt).map_err(wrap_verify)?;
        let value = dist.get(claim).ok_or_else(|| {
            wrap(format!(
                "jwt returned by distributed claim endpoint {} did not contain claim: {claim}",
                go_quote(&strip_password(endpoint))
            ))
        })?;
        *body_accepted = true;
        let mut claims = RawClaims::new(
            id_token
                .claims()
                .ok_or_else(|| bad(format!("oidc: parse claims: {}", refusal(id_token))))?,
        );
        // Kubernetes writes the resolved value into the ID token's claims
        // (`allClaims[r.claim] = value`): the username, uid and required claims see it too,
        // not only the groups mapping. Only that claim: the endpoint JWT's others are not
        // copied.
        claims.set(claim, value);
        let user = self.map_claims(&claims)?;
        Ok(Some(Response::new(Arc::new(user))))
    }

    fn owns_issuer(&self, iss: &str) -> bool {
        iss == self.cfg.issuer_url
            || (self.cfg.issuer_url == "https://accounts.google.com"
                && iss == "accounts.google.com")
    }

    /// Username, groups, uid, credential id and required claims (a resolved distributed claim
    /// already set in `claims`), in Kubernetes' order; then the user, built directly: name and
    /// uid in one string, each group one shared string, no builder.
    fn map_claims(&self, claims: &RawClaims<'_>) -> Result<UserInfo, Error> {
        // Username.
        let uc = &self.cfg.username.claim;
        let raw = claims.get(uc).ok_or_else(|| {
            bad(format!(
                "oidc: parse username claims {}: claim not present",
                go_quote(uc)
            ))
        })?;
        let username = raw_str(raw)
            .map_err(|e| bad(format!("oidc: parse username claims {}: {e}", go_quote(uc))))?;
        if uc == "email"
            && let Some(v) = claims.get("email_verified")
        {
            match v.text() {
                "true" => {}
                "false" | "null" => return Err(bad("oidc: email not verified".into())),
                _ => {
                    return Err(bad(format!(
                        "oidc: parse 'email_verified' claim: json: cannot unmarshal {} into Go value of type bool",
                        raw_type(v)
                    )));
                }
            }
        }
        // Kubernetes refuses an empty name only from a CEL expression; a claim mapping that
        // yields one (an empty claim, no prefix) is refused too: fail closed
        // (docs/compatibility.md).
        if username.is_empty() && self.cfg.username.prefix.is_empty() {
            return Err(bad(ERR_EMPTY_USERNAME.into()));
        }
        // Groups.
        // One scratch string serves every prefixed group and then the name+uid text (sized
        // for common claims: one allocation).
        let mut scratch = String::with_capacity(128);
        let mut groups: Vec<SharedStr> = Vec::new();
        if let Some(g) = &self.cfg.groups
            && let Some(v) = claims.get(&g.claim)
        {
            let mut group = |s: &str| -> SharedStr {
                if g.prefix.is_empty() {
                    return SharedStr::from(s);
                }
                scratch.clear();
                scratch.push_str(&g.prefix);
                scratch.push_str(s);
                SharedStr::from(scratch.as_str())
            };
            let parse_err = |e: String| {
                bad(format!(
                    "oidc: parse groups claim {}: {e}",
                    go_quote(&g.claim)
                ))
            };
            match raw_type(v) {
                "string" => groups.push(group(&raw_str(v).map_err(parse_err)?)),
                "null" => {}
                "array" => {
                    // Kubernetes' stringOrArray: when the array is not all strings (or
                    // null, Go's zero string), it retries the value as one string, so
                    // the error names the array, not the element.
                    for item in v.as_array().into_iter().flatten() {
                        let item = raw_str(item).map_err(|_| {
                            parse_err(
                                "json: cannot unmarshal array into Go value of type string".into(),
                            )
                        })?;
                        groups.push(group(&item));
                    }
                }
                other => {
                    return Err(parse_err(format!(
                        "json: cannot unmarshal {other} into Go value of type string"
                    )));
                }
            }
        }
        // UID.
        let mut uid = std::borrow::Cow::Borrowed("");
        if let Some(c) = &self.cfg.uid_claim {
            let raw = claims.get(c).ok_or_else(|| {
                bad(format!(
                    "oidc: parse uid claim {}: claim not present",
                    go_quote(c)
                ))
            })?;
            uid = raw_str(raw)
                .map_err(|e| bad(format!("oidc: parse uid claim {}: {e}", go_quote(c))))?;
        }
        // Credential id (only a string jti): written after the uid, see below.
        let jti = claims
            .get("jti")
            .filter(|v| raw_type(*v) == "string")
            .and_then(|v| raw_str(v).ok())
            // `CredentialIDForJTI("")` is "": no credential id.
            .filter(|jti| !jti.is_empty());
        // Required claims, in configuration order.
        for (k, want) in &self.cfg.required_claims {
            let v = claims
                .get(k)
                .ok_or_else(|| bad(format!("oidc: required claim {k} not present in ID token")))?;
            let got = raw_str(v).map_err(|e| bad(format!("oidc: parse claim {k}: {e}")))?;
            if got != want.as_str() {
                return Err(bad(format!(
                    "oidc: required claim {k} value does not match. Got = {got}, want = {want}"
                )));
            }
        }
        // Name, uid and the credential id in one string: the user's one text (its extra map
        // is built from it only if someone reads it).
        let prefix = &self.cfg.username.prefix;
        let text = &mut scratch;
        text.clear();
        text.reserve(
            prefix.len() + username.len() + uid.len() + jti.as_ref().map_or(0, |j| 4 + j.len()),
        );
        text.push_str(prefix);
        text.push_str(&username);
        let name_len = text.len();
        text.push_str(&uid);
        let uid_end = text.len();
        let mut extra: Option<(TextKey, std::ops::Range<usize>)> = None;
        if let Some(jti) = &jti {
            text.push_str("JTI=");
            text.push_str(jti);
            extra = Some((TextKey::CredentialId, uid_end..text.len()));
        }
        Ok(UserInfo::from_text(
            text,
            name_len,
            uid_end,
            shared_groups(groups),
            extra.as_slice(),
        ))
    }

    /// The pipeline on the key set `keys` up to the point where I/O may be needed: not
    /// initialised, refused, no key verified ([`Step::NoKey`]: the caller may refetch), or the
    /// rest after the signature ([`Self::after_signature`]).
    fn authenticate(&self, jwt: &UntrustedJwt<'_>, keys: Option<&KeySet>) -> Step {
        let Some(keys) = keys else {
            return Step::Done(Err(Error::from_static(
                ErrorKind::Unavailable,
                ERR_NOT_INITIALIZED,
            )));
        };
        match self.verify_signature(jwt, keys) {
            Ok(()) => self.after_signature(jwt),
            Err(Unverified::NoKey) => Step::NoKey,
            Err(Unverified::Refused(e)) => Step::Done(Err(bad(format!("oidc: verify token: {e}")))),
        }
    }

    /// Everything after a verified signature: the claims, then the mapping or a distributed
    /// claim to fetch.
    fn after_signature(&self, jwt: &UntrustedJwt<'_>) -> Step {
        let claims = match self.verify_claims(jwt) {
            Ok(claims) => claims,
            Err(e) => return Step::Done(Err(bad(format!("oidc: verify token: {e}")))),
        };
        match self.distributed_source(&claims) {
            Err(e) => Step::Done(Err(bad(format!(
                "oidc: could not expand distributed claims: {e}"
            )))),
            Ok(Some((endpoint, access_token))) => Step::Distributed {
                endpoint,
                access_token,
            },
            Ok(None) => Step::Done(
                self.map_claims(&claims)
                    .map(|user| Some(Response::new(Arc::new(user)))),
            ),
        }
    }

    async fn finish_step(&self, jwt: &UntrustedJwt<'_>, step: Step) -> AuthResult {
        match step {
            Step::Done(r) => r,
            Step::NoKey => Err(bad(format!("oidc: verify token: {}", Unverified::NoKey))),
            Step::Distributed {
                endpoint,
                access_token,
            } => self.resolve_distributed(jwt, endpoint, access_token).await,
        }
    }
}

/// Why [`OidcAuthenticator::verify_signature`] did not pass a token.
enum Unverified {
    /// Refused before the key lookup (go-oidc's text: the algorithm, a malformed header).
    Refused(String),
    /// No key for the token's `kid` verified its signature (go-oidc's remote key set then
    /// refetches).
    NoKey,
}

impl fmt::Display for Unverified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unverified::Refused(e) => f.write_str(e),
            Unverified::NoKey => {
                f.write_str("failed to verify signature: failed to verify id token signature")
            }
        }
    }
}

/// What the synchronous part of the pipeline decided.
enum Step {
    Done(AuthResult),
    /// The signature checks passed up to the key: no key of the current set verified it.
    NoKey,
    /// The groups claim is distributed: fetch it, then map.
    Distributed {
        endpoint: String,
        access_token: String,
    },
}

impl JwtAuthenticator for OidcAuthenticator {
    fn authenticate_jwt<'a>(
        &'a self,
        jwt: UntrustedJwt<'a>,
        _token: &'a str,
        ctx: &'a Context,
    ) -> AuthFuture<'a> {
        // Audience-agnostic wrapping (k8s WrapAudienceAgnosticToken).
        let target = match (&self.implicit_audiences, ctx.audiences()) {
            (Some(implicit), Some(requested)) => {
                let t = implicit.intersect(requested);
                if t.is_empty() {
                    return AuthFuture::ready(Ok(None));
                }
                Some(t)
            }
            _ => None,
        };
        // kube-apiserver's instrumented JWT authenticator sits inside the audience-agnostic
        // wrapper: from here on the token is this authenticator's, and its answer is timed.
        let start = std::time::Instant::now();
        let latency = &self.latency;
        let finish = move |r: AuthResult| {
            match &r {
                Ok(Some(_)) => latency.observe(true, start.elapsed()),
                Err(_) => latency.observe(false, start.elapsed()),
                Ok(None) => {}
            }
            r.map(|o| {
                o.map(|resp| match target {
                    Some(t) => resp.with_audiences(t),
                    None => resp,
                })
            })
        };
        let keys = self.keys.load();
        match self.authenticate(&jwt, keys.as_deref()) {
            Step::Done(r) => AuthFuture::ready(finish(r)),
            // No key verified (an unknown `kid`, no `kid`, or a known one whose key failed) and
            // a refresher: refetch once (coalesced, rate-limited), then retry on the new keys.
            // A token refused before the key lookup (its algorithm) never gets here.
            Step::NoKey if self.refresher.load().is_some() => {
                let tried = arc_swap::Guard::into_inner(keys);
                AuthFuture::new(async move {
                    let step = match self.verify_signature_refetching(&jwt, tried).await {
                        Ok(()) => self.after_signature(&jwt),
                        Err(e) => Step::Done(Err(bad(format!("oidc: verify token: {e}")))),
                    };
                    finish(self.finish_step(&jwt, step).await)
                })
            }
            Step::NoKey => AuthFuture::ready(finish(Err(bad(format!(
                "oidc: verify token: {}",
                Unverified::NoKey
            ))))),
            step => AuthFuture::new(async move { finish(self.finish_step(&jwt, step).await) }),
        }
    }
}

impl TokenAuthenticator for OidcAuthenticator {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        let Ok(jwt) = UntrustedJwt::parse(token) else {
            return AuthFuture::ready(Ok(None));
        };
        let iss = jwt.issuer().unwrap_or("");
        let google =
            self.cfg.issuer_url == "https://accounts.google.com" && iss == "accounts.google.com";
        if iss != self.cfg.issuer_url && !google {
            return AuthFuture::ready(Ok(None));
        }
        self.authenticate_jwt(jwt, token, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::strip_password;

    thread_local! {
        /// `_claim_sources` members walked by `check_claim_sources` on this thread.
        pub(super) static SOURCE_MEMBER_VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Kubernetes' `untrustedIssuer` on a distributed claim source's body, as served. Go's
    /// answers (Go 1.26, `untrustedIssuer` of k8s.io/apiserver v0.37.2 run on each body).
    #[test]
    fn untrusted_issuer_reads_the_body_as_kubernetes_does() {
        const H: &str = "eyJhbGciOiJSUzI1NiJ9"; // {"alg":"RS256"}
        let b64 = |s: &str| {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
        };
        let jwt = |payload: &str| format!("{H}.{}.c2ln", b64(payload));
        let anon = r#"struct { Issuer string "json:\"iss\"" }"#;
        let table: Vec<(&str, Vec<u8>, Result<&str, String>)> = vec![
            ("not a JWT", b"hello".to_vec(), Err("malformed token".into())),
            ("two parts", b"a.b".to_vec(), Err("malformed token".into())),
            ("four parts", b"a.b.c.d".to_vec(), Err("malformed token".into())),
            (
                "JSON after a space",
                br#" {"groups":["x"]}"#.to_vec(),
                Err("token is not compact JWT".into()),
            ),
            (
                "JSON after a no-break space",
                "\u{a0}{".into(),
                Err("token is not compact JWT".into()),
            ),
            (
                "payload with a bad symbol",
                format!("{H}.ey!J.c2ln").into_bytes(),
                Err("error decoding token: illegal base64 data at input byte 2".into()),
            ),
            (
                "payload with a space",
                format!("{H}.e30 .c2ln").into_bytes(),
                Err("error decoding token: illegal base64 data at input byte 3".into()),
            ),
            (
                "payload with one symbol left over",
                format!("{H}.abcde.c2ln").into_bytes(),
                Err("error decoding token: illegal base64 data at input byte 4".into()),
            ),
            (
                "one symbol left over, then a newline",
                format!("{H}.ab\ncde\r\n.c2ln").into_bytes(),
                Err("error decoding token: illegal base64 data at input byte 7".into()),
            ),
            (
                "payload not JSON",
                jwt("not json").into_bytes(),
                Err("while unmarshaling token: invalid character 'o' in literal null (expecting 'u')".into()),
            ),
            (
                "empty payload",
                format!("{H}..c2ln").into_bytes(),
                Err("while unmarshaling token: unexpected end of JSON input".into()),
            ),
            (
                "payload an array",
                jwt("[1]").into_bytes(),
                Err(format!("while unmarshaling token: json: cannot unmarshal array into Go value of type {anon}")),
            ),
            (
                "iss a number",
                jwt(r#"{"iss":5}"#).into_bytes(),
                Err("while unmarshaling token: json: cannot unmarshal number into Go struct field .iss of type string".into()),
            ),
            ("iss", jwt(r#"{"iss":"https://i"}"#).into_bytes(), Ok("https://i")),
            (
                "ISS, then a null iss",
                jwt(r#"{"ISS":"a","iss":null}"#).into_bytes(),
                Ok("a"),
            ),
            ("payload null", jwt("null").into_bytes(), Ok("")),
            (
                "legacy Google issuer",
                jwt(r#"{"iss":"accounts.google.com"}"#).into_bytes(),
                Ok("https://accounts.google.com"),
            ),
            (
                "newline-wrapped payload",
                format!("{H}.eyJpc3Mi\r\nOiJhIn0\n.c2ln").into_bytes(),
                Ok("a"),
            ),
            (
                "invalid UTF-8 outside the payload",
                [b"e\xffJ.", b64(r#"{"iss":"a"}"#).as_bytes(), b".c\xff"].concat(),
                Ok("a"),
            ),
        ];
        for (name, body, want) in table {
            let got = super::go_untrusted_issuer(&body);
            assert_eq!(got, want.map(str::to_owned), "{name}");
        }
    }

    /// go-jose's `ParseSigned` base64 errors (Go 1.26, go-jose v2.6.3), after it removed
    /// every Unicode space; an invalid UTF-8 byte is U+FFFD there.
    #[test]
    fn go_jose_segment_errors_are_go_jose_texts() {
        // `eyJpc3MiOiJodHRwczovL2kifQ`: {"iss":"https://i"}
        let table: &[(&str, &[u8], Option<&str>)] = &[
            ("well formed", b"eyJhbGciOiJSUzI1NiJ9.e30.c2ln", None),
            (
                "header",
                b"e!J.eyJpc3MiOiJodHRwczovL2kifQ.c2ln",
                Some("illegal base64 data at input byte 1"),
            ),
            (
                "signature",
                b"eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2kifQ.c2!n",
                Some("illegal base64 data at input byte 2"),
            ),
            (
                "one signature symbol",
                b"eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2kifQ.c",
                Some("illegal base64 data at input byte 0"),
            ),
            (
                "space and invalid UTF-8 in the header",
                b"e \xffJ.e30.c2ln",
                Some("illegal base64 data at input byte 1"),
            ),
            (
                "truncated UTF-8 in the signature",
                b"e30.e30.c2l\xe2\x82",
                Some("illegal base64 data at input byte 3"),
            ),
            ("a vertical tab is stripped", b"e30.e30.c2l\x0b", None),
            ("non-canonical trailing bits", b"e30.e30.c2lx", None),
        ];
        for (name, body, want) in table {
            assert_eq!(
                super::go_jose_segment_error(body).as_deref(),
                *want,
                "{name}"
            );
        }
    }

    /// A distributed claim source's body that Kubernetes' `untrustedIssuer` refuses, whose
    /// issuer is not the authenticator's, or whose JWS go-jose cannot decode: Kubernetes'
    /// texts in Kubernetes' frames (checked with k8s.io/apiserver v0.37.2 `oidc.New` against
    /// an httptest issuer for `hello` and the JSON body; the others with `untrustedIssuer`
    /// and go-jose's `ParseSigned` run on the body). Except for the issuer quoted (`%q`, see
    /// docs/compatibility.md).
    #[tokio::test]
    async fn distributed_claim_bodies_fail_with_kubernetes_texts() {
        use crate::jwt::compact::UntrustedJwt;
        use crate::token::oidc::config::OidcFlags;
        const H: &str = "eyJhbGciOiJSUzI1NiJ9"; // {"alg":"RS256"}
        const P: &str = "eyJpc3MiOiJodHRwczovL2kifQ"; // {"iss":"https://i"}
        let b64 = |s: &str| {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
        };
        let wrap = "oidc: could not expand distributed claims: ";
        let untrusted = format!(
            "{wrap}getting untrusted issuer from endpoint https://i/dist failed for claim \"groups\": "
        );
        let verify = format!("{wrap}verify distributed claim token: oidc: malformed jwt: ");
        let google = format!("{H}.{}.c2ln", b64(r#"{"iss":"accounts.google.com"}"#));
        // (name, issuer, body, want)
        let table: Vec<(&str, &str, Vec<u8>, String)> = vec![
            (
                "not a JWT",
                "https://i",
                b"hello".to_vec(),
                format!("{untrusted}malformed token"),
            ),
            (
                "JSON after a space",
                "https://i",
                br#" {"groups":["x"]}"#.to_vec(),
                format!("{untrusted}token is not compact JWT"),
            ),
            (
                "payload not base64",
                "https://i",
                format!("{H}.ey!J.c2ln").into_bytes(),
                format!("{untrusted}error decoding token: illegal base64 data at input byte 2"),
            ),
            (
                "payload not JSON",
                "https://i",
                format!("{H}.{}.c2ln", b64("not json")).into_bytes(),
                format!(
                    "{untrusted}while unmarshaling token: invalid character 'o' in literal null (expecting 'u')"
                ),
            ),
            (
                "legacy Google issuer, mapped",
                "https://i",
                google.clone().into_bytes(),
                format!(
                    "{wrap}verifying untrusted issuer \"https://accounts.google.com\" failed: verifier not initialized for issuer: \"https://accounts.google.com\""
                ),
            ),
            (
                "legacy Google issuer for the Google authenticator: on to the keys",
                "https://accounts.google.com",
                google.into_bytes(),
                super::ERR_NOT_INITIALIZED.to_owned(),
            ),
            (
                "header not base64",
                "https://i",
                format!("e!J.{P}.c2ln").into_bytes(),
                format!("{verify}illegal base64 data at input byte 1"),
            ),
            (
                "signature not base64",
                "https://i",
                format!("{H}.{P}.c2!n").into_bytes(),
                format!("{verify}illegal base64 data at input byte 2"),
            ),
            (
                "invalid UTF-8 in the header",
                "https://i",
                [b"e \xffJ.", P.as_bytes(), b".c2ln"].concat(),
                format!("{verify}illegal base64 data at input byte 1"),
            ),
        ];
        let id_token = format!("{H}.{P}.c2ln");
        let id_token = UntrustedJwt::parse(&id_token).unwrap();
        for (name, issuer, body, want) in table {
            let cfg = OidcFlags {
                issuer_url: issuer.into(),
                client_id: "c".into(),
                groups_claim: Some("groups".into()),
                ..Default::default()
            }
            .to_config(&[])
            .unwrap();
            let oidc = super::OidcAuthenticator::new(cfg);
            let mut accepted = false;
            let got = oidc
                .check_distributed(&id_token, "https://i/dist", &body, &mut accepted)
                .await;
            assert_eq!(got.unwrap_err().to_string(), want, "{name}");
            assert!(!accepted, "{name}");
        }
    }

    /// go-oidc's distributed-claim name check is one walk of `_claim_sources` however many
    /// `_claim_names` there are (a lookup per name over the unindexed object was quadratic:
    /// 1,900 × 1,900 entries in a 53 KB payload took ≈ 100 ms). Outcomes and texts are
    /// go-oidc's.
    #[test]
    fn claim_source_lookup_is_linear() {
        const M: usize = 2000;
        // (name, `_claim_names` entries as (claim, source), want)
        let all: Vec<(String, String)> = (0..M)
            .map(|i| (format!("c{i:x}"), format!("{:x}", M - 1 - i)))
            .collect();
        let with_last = |src: &str| {
            let mut v = all.clone();
            v.push(("last".into(), src.into()));
            v
        };
        type Row<'a> = (&'a str, Vec<(String, String)>, Result<(), &'a str>);
        let table: Vec<Row<'_>> = vec![
            ("every source present", all.clone(), Ok(())),
            (
                "the last source missing",
                with_last("nope"),
                Err("oidc: source does not exist"),
            ),
            (
                "the last source empty",
                with_last(""),
                Err("oidc: failed to obtain source from claim name"),
            ),
        ];
        for (name, names, want) in table {
            let mut p = String::from(r#"{"_claim_sources":{"#);
            for i in 0..M {
                if i > 0 {
                    p.push(',');
                }
                p.push_str(&format!(r#""{i:x}":{{}}"#));
            }
            p.push_str(r#"},"_claim_names":{"#);
            for (i, (claim, src)) in names.iter().enumerate() {
                if i > 0 {
                    p.push(',');
                }
                p.push_str(&format!(r#""{claim}":"{src}""#));
            }
            p.push_str("}}");
            let raw =
                super::RawClaims::new(crate::jwt::json::validate_object(p.as_bytes()).unwrap());
            let claims = super::VerifyClaims::from_raw(&raw).unwrap();
            SOURCE_MEMBER_VISITS.with(|n| n.set(0));
            let got = super::check_claim_sources(&claims);
            assert_eq!(got, want.map_err(str::to_owned), "{name}");
            let visits = SOURCE_MEMBER_VISITS.with(|n| n.get());
            assert!(
                visits <= M,
                "{name}: {visits} member visits for {M} sources"
            );
        }
    }

    /// `time.Unix(s, 0).UTC().String()` as Go 1.26 prints it, for times Go's calendar wraps
    /// (`MaxInt64`, `MinInt64`, one second past the last time `time.Unix` holds), negative
    /// years and years past 9999.
    #[test]
    fn go_time_utc_prints_as_go_does() {
        let table: &[(i64, &str)] = &[
            (1257890400, "2009-11-10 22:00:00 +0000 UTC"),
            (i64::MAX, "292277026596-12-04 15:30:07 +0000 UTC"),
            (i64::MIN, "292277026596-12-04 15:30:08 +0000 UTC"),
            (-62198755200, "-0001-01-01 00:00:00 +0000 UTC"),
            (-62135596801, "0000-12-31 23:59:59 +0000 UTC"),
            (9223371974719179008, "292277024627-12-06 15:30:08 +0000 UTC"),
            (-1_000_000_000_000_000, "-31686769-06-29 22:13:20 +0000 UTC"),
            (253402300800, "10000-01-01 00:00:00 +0000 UTC"),
        ];
        for (unix, want) in table {
            assert_eq!(super::go_time_utc(*unix), *want, "{unix}");
        }
    }

    /// `exp`/`nbf`/`iat` outside `i64` are refused (fail closed) with `ParseFloat`'s
    /// out-of-range text, whether written as an integer or a float; nothing saturates to
    /// `i64::MAX`. Go's answers differ only where its `int64(f)` wraps (amd64: `MinInt64`):
    /// `2^63` and `9.25e18` are `token is expired (Token Expiry: 292277026596-12-04 15:30:08
    /// +0000 UTC)` for an `exp`, and an `nbf` of `9.25e18` is accepted (k8s.io/apiserver
    /// v0.37.2). `-9223372036854775809` rounds to `-2^63` as a float: `MinInt64`, as in Go.
    #[test]
    fn go_oidc_time_refuses_values_outside_i64() {
        let out_of_range = |t: &str| {
            Err(format!(
                "strconv.ParseFloat: parsing \"{t}\": value out of range"
            ))
        };
        let table: &[(&str, &str, Result<i64, String>)] = &[
            ("i64::MAX", "9223372036854775807", Ok(i64::MAX)),
            ("i64::MIN", "-9223372036854775808", Ok(i64::MIN)),
            (
                "2^63 integer",
                "9223372036854775808",
                out_of_range("9223372036854775808"),
            ),
            (
                "2^63 float",
                "9.223372036854775808e18",
                out_of_range("9.223372036854775808e18"),
            ),
            (
                "i64::MAX with a fraction is 2^63",
                "9223372036854775807.0",
                out_of_range("9223372036854775807.0"),
            ),
            ("9.25e18", "9.25e18", out_of_range("9.25e18")),
            ("9.3e18", "9.3e18", out_of_range("9.3e18")),
            (
                "largest float below 2^63",
                "9.223372036854774784e18",
                Ok(9_223_372_036_854_774_784),
            ),
            (
                "-2^63-1 rounds to -2^63",
                "-9223372036854775809",
                Ok(i64::MIN),
            ),
            (
                "next float below -2^63",
                "-9223372036854777856",
                out_of_range("-9223372036854777856"),
            ),
            ("-9.25e18", "-9.25e18", out_of_range("-9.25e18")),
            ("1e400", "1e400", out_of_range("1e400")),
            ("fraction truncated", "1.9", Ok(1)),
            ("negative fraction truncated", "-1.9", Ok(-1)),
        ];
        for (name, text, want) in table {
            let got = super::go_oidc_time("exp", crate::jwt::json::raw_json_unchecked(text));
            assert_eq!(&got, want, "{name}");
        }
    }

    /// A distributed-claims endpoint comes from the token: when its body is no JWT, the
    /// error names the endpoint with its password replaced (docs/compatibility.md: every URL
    /// in an error has its password stripped; Kubernetes prints `ep.URL` as it is).
    #[test]
    fn untrusted_issuer_error_strips_the_endpoint_password() {
        use super::{ClaimFetcher, OidcAuthenticator, config::OidcFlags};
        use crate::authenticator::{Context, TokenAuthenticator};
        use crate::jwt::{FixedClock, key::PublicKey};
        use aws_lc_rs::encoding::AsDer;
        use aws_lc_rs::rand::SystemRandom;
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
        use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD as B64};
        use std::{future::Future, pin::Pin, sync::Arc};

        struct NotAJwt;
        impl ClaimFetcher for NotAJwt {
            fn fetch<'a>(
                &'a self,
                _: &'a str,
                _: &'a str,
            ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
                Box::pin(async { Ok(b"<html>not a jwt</html>".to_vec()) })
            }
        }
        let flags = OidcFlags {
            issuer_url: "https://issuer.example".into(),
            client_id: "kubectl".into(),
            signing_algs: vec!["ES256".into()],
            groups_claim: Some("groups".into()),
            ..Default::default()
        };
        let oidc = OidcAuthenticator::new(flags.to_config(&[]).unwrap())
            .with_clock(Arc::new(FixedClock::new(1_900_000_000)));
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let public =
            PublicKey::from_spki_der(pair.public_key().as_der().unwrap().as_ref()).unwrap();
        oidc.set_keys(vec![Arc::new(public)]);
        oidc.set_claim_fetcher(Box::new(NotAJwt));
        let claims = r#"{"iss":"https://issuer.example","aud":"kubectl","sub":"jane","exp":2000000000,
            "_claim_names":{"groups":"src1"},
            "_claim_sources":{"src1":{"endpoint":"https://u:s3cr3tpw@groups.example/claims","access_token":"at"}}}"#;
        let input = format!(
            "{}.{}",
            B64.encode(r#"{"alg":"ES256"}"#),
            B64.encode(claims)
        );
        let sig = pair.sign(&rng, input.as_bytes()).unwrap();
        let token = format!("{input}.{}", B64.encode(sig.as_ref()));
        let got = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(oidc.authenticate_token(&token, &Context::default()));
        let err = got.unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(
                "oidc: could not expand distributed claims: getting untrusted issuer from endpoint \
                 https://u:***@groups.example/claims failed for claim \"groups\": "
            ),
            "{text}"
        );
        assert!(
            !text.contains("s3cr3tpw") && !format!("{err:?}").contains("s3cr3tpw"),
            "{text}"
        );
    }

    /// A clock at fixed seconds and nanoseconds.
    #[derive(Debug)]
    struct NanoClock(i64, u32);
    impl crate::jwt::Clock for NanoClock {
        fn now_unix(&self) -> i64 {
            self.0
        }
        fn now_unix_nanos(&self) -> (i64, u32) {
            (self.0, self.1)
        }
    }

    /// Records each distributed-claims fetch (endpoint, access token) and fails it.
    #[derive(Default, Clone)]
    struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>);
    impl super::ClaimFetcher for Recorder {
        fn fetch<'a>(
            &'a self,
            endpoint: &'a str,
            access_token: &'a str,
        ) -> std::pin::Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
            self.0
                .lock()
                .unwrap()
                .push((endpoint.to_owned(), access_token.to_owned()));
            Box::pin(async { Err("recorded".into()) })
        }
    }

    /// Authenticates an ES256 token of `claims` (a JSON text) with an authenticator for
    /// `https://issuer.example` (client id `kubectl`, username from `sub` without a prefix,
    /// groups from `groups`) at `clock`, with `fetcher` for distributed claims.
    fn authenticate(
        claims: &str,
        clock: (i64, u32),
        fetcher: Recorder,
    ) -> crate::authenticator::AuthResult {
        use super::{OidcAuthenticator, config::OidcFlags};
        use crate::authenticator::{Context, TokenAuthenticator};
        use crate::jwt::key::PublicKey;
        use aws_lc_rs::encoding::AsDer;
        use aws_lc_rs::rand::SystemRandom;
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
        use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD as B64};
        use std::sync::Arc;

        let flags = OidcFlags {
            issuer_url: "https://issuer.example".into(),
            client_id: "kubectl".into(),
            signing_algs: vec!["ES256".into()],
            username_claim: "sub".into(),
            username_prefix: Some("-".into()),
            groups_claim: Some("groups".into()),
            ..Default::default()
        };
        let oidc = OidcAuthenticator::new(flags.to_config(&[]).unwrap())
            .with_clock(Arc::new(NanoClock(clock.0, clock.1)));
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let public =
            PublicKey::from_spki_der(pair.public_key().as_der().unwrap().as_ref()).unwrap();
        oidc.set_keys(vec![Arc::new(public)]);
        oidc.set_claim_fetcher(Box::new(fetcher));
        let input = format!(
            "{}.{}",
            B64.encode(r#"{"alg":"ES256"}"#),
            B64.encode(claims)
        );
        let sig = pair.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
        let token = format!("{input}.{}", B64.encode(sig.as_ref()));
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(oidc.authenticate_token(&token, &Context::default()))
    }

    const BASE: &str = r#""iss":"https://issuer.example","aud":"kubectl","exp":2000000000"#;

    /// Kubernetes decodes `_claim_sources` entries with `encoding/json`: a member matched to a
    /// field (in any case) replaces it, a `null` one leaves it as it was (Go, k8s.io/apiserver
    /// v0.37.2: `"endpoint":E,"ENDPOINT":null` fetches E; `"access_token":"tok",
    /// "ACCESS_TOKEN":null` sends `Bearer tok`). A `null` is no empty string.
    #[test]
    fn a_null_claim_source_member_leaves_the_field_as_it_was() {
        // (case, the source entry, the fetch: endpoint and access token)
        type Case = (
            &'static str,
            &'static str,
            Option<(&'static str, &'static str)>,
        );
        let cases: &[Case] = &[
            (
                "endpoint then ENDPOINT null",
                r#"{"endpoint":"https://idp/claims","ENDPOINT":null}"#,
                Some(("https://idp/claims", "")),
            ),
            (
                "access_token then ACCESS_TOKEN null",
                r#"{"endpoint":"https://idp/claims","access_token":"tok","ACCESS_TOKEN":null}"#,
                Some(("https://idp/claims", "tok")),
            ),
            (
                "ENDPOINT null then endpoint",
                r#"{"ENDPOINT":null,"endpoint":"https://idp/claims"}"#,
                Some(("https://idp/claims", "")),
            ),
            (
                "a later string replaces an earlier one",
                r#"{"endpoint":"https://a/claims","Endpoint":"https://b/claims","access_token":"x","Access_Token":"y"}"#,
                Some(("https://b/claims", "y")),
            ),
            (
                "only a null endpoint: nothing to fetch",
                r#"{"endpoint":null}"#,
                None,
            ),
        ];
        for (name, source, want) in cases {
            let claims = format!(
                r#"{{{BASE},"sub":"alice","_claim_names":{{"groups":"s"}},"_claim_sources":{{"s":{source}}}}}"#
            );
            let fetches = Recorder::default();
            let got = authenticate(&claims, (1_900_000_000, 0), fetches.clone());
            let seen = fetches.0.lock().unwrap().clone();
            match want {
                Some((endpoint, token)) => {
                    assert_eq!(seen, [(endpoint.to_string(), token.to_string())], "{name}");
                    let err = got.unwrap_err().to_string();
                    assert_eq!(
                        err,
                        "oidc: could not expand distributed claims: while getting distributed claim \"groups\": recorded",
                        "{name}"
                    );
                }
                None => {
                    assert!(seen.is_empty(), "{name}: {seen:?}");
                    let user = got.unwrap().unwrap().user;
                    assert_eq!(user.groups().count(), 0, "{name}");
                }
            }
        }
    }

    /// go-oidc prints `time.Now()` in the nbf error: `Time.String` with the nanoseconds
    /// (trailing zeros trimmed, no dot for none). Its monotonic suffix (` m=+0.1…`) has no
    /// counterpart (docs/compatibility.md).
    #[test]
    fn nbf_error_prints_the_current_time_with_its_nanoseconds() {
        let cases: &[((i64, u32), &str)] = &[
            (
                (1_257_894_000, 502_448_174),
                "2009-11-10 23:00:00.502448174 +0000 UTC",
            ),
            (
                (1_257_894_000, 500_000_000),
                "2009-11-10 23:00:00.5 +0000 UTC",
            ),
            (
                (1_257_894_000, 1),
                "2009-11-10 23:00:00.000000001 +0000 UTC",
            ),
            (
                (1_257_894_000, 120_000),
                "2009-11-10 23:00:00.00012 +0000 UTC",
            ),
            ((1_257_894_000, 0), "2009-11-10 23:00:00 +0000 UTC"),
        ];
        for (now, shown) in cases {
            assert_eq!(super::go_time_utc_nanos(*now), *shown);
            let claims = format!(r#"{{{BASE},"sub":"alice","nbf":1257897600}}"#);
            let err = authenticate(&claims, *now, Recorder::default()).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "oidc: verify token: oidc: current time {shown} before the nbf (not before) time: 2009-11-11 00:00:00 +0000 UTC"
                )
            );
        }
        assert_eq!(
            super::go_time_utc_nanos((-62_198_755_200, 10)),
            "-0001-01-01 00:00:00.00000001 +0000 UTC"
        );
    }

    /// go-oidc decodes its `idToken` with `encoding/json`, which matches member names to
    /// fields in any case (and `ſ` U+017F as `s`): Go reads `EXP`, `AUD`, `Sub`… as the
    /// claims (`{"exp":<future>,"EXP":1}` has expired, `"Sub":5` is a type error). kube-authn
    /// reads exact names, so such a member is refused, naming it; other names in any case
    /// (`EMAIL_VERIFIED`) and escaped exact names are claims like any other.
    #[test]
    fn members_go_folds_onto_id_token_fields_are_refused() {
        let refused: &[(&str, &str, &str)] = &[
            (r#""EXP":1"#, "\"EXP\"", "exp"),
            (r#""AUD":"other""#, "\"AUD\"", "aud"),
            (r#""Sub":5"#, "\"Sub\"", "sub"),
            (r#""IAT":true"#, "\"IAT\"", "iat"),
            (r#""nBf":1"#, "\"nBf\"", "nbf"),
            (r#""NONCE":"n""#, "\"NONCE\"", "nonce"),
            (r#""At_Hash":"h""#, "\"At_Hash\"", "at_hash"),
            (
                r#""_Claim_Names":{"groups":"s"}"#,
                "\"_Claim_Names\"",
                "_claim_names",
            ),
            (
                r#""_CLAIM_SOURCES":null"#,
                "\"_CLAIM_SOURCES\"",
                "_claim_sources",
            ),
            (
                r#""_claim_ſources":{}"#,
                "\"_claim_ſources\"",
                "_claim_sources",
            ),
            (r#""ISS":null"#, "\"ISS\"", "iss"),
            (r#""i\u017fs":null"#, "\"iſs\"", "iss"),
            (r#""S\u0055B":"x""#, "\"SUB\"", "sub"),
        ];
        for (member, quoted, field) in refused {
            let claims = format!(r#"{{{BASE},"sub":"alice",{member}}}"#);
            let err = authenticate(&claims, (1_900_000_000, 0), Recorder::default())
                .unwrap_err()
                .to_string();
            assert_eq!(
                err,
                format!(
                    "oidc: verify token: oidc: failed to unmarshal claims: claim {quoted} matches idToken.{field} only by case folding"
                ),
                "{member}"
            );
        }
        for member in [
            r#""EMAIL_VERIFIED":false"#,
            r#""e\u0078p":2000000001"#,
            r#""expiry":1"#,
            r#""subs":5"#,
            r#""Kid":1"#,
        ] {
            let claims = format!(
                r#"{{"iss":"https://issuer.example","aud":"kubectl","sub":"alice",{member}}}"#
            );
            let claims = if member.contains("u0078p") {
                claims
            } else {
                claims.replacen('{', "{\"exp\":2000000000,", 1)
            };
            let user = authenticate(&claims, (1_900_000_000, 0), Recorder::default())
                .unwrap_or_else(|e| panic!("{member}: {e}"))
                .unwrap()
                .user;
            assert_eq!(user.name(), "alice", "{member}");
        }
    }

    /// A lone surrogate escape in an ID token is U+FFFD, as Go decodes it (k8s.io/apiserver
    /// v0.37.2 authenticates `"sub":"a\ud800b"` as `a\u{FFFD}b`): no longer "not mine".
    #[test]
    fn lone_surrogates_in_claims_are_decoded_as_go_decodes_them() {
        let cases = [
            (r#""a\ud800b""#, "a\u{FFFD}b"),
            (r#""\udc00""#, "\u{FFFD}"),
            (r#""\ud800\u0041""#, "\u{FFFD}A"),
            (r#""\ud800\ud800""#, "\u{FFFD}\u{FFFD}"),
        ];
        for (sub, want) in cases {
            let claims = format!(r#"{{{BASE},"sub":{sub},"groups":[{sub}]}}"#);
            let user = authenticate(&claims, (1_900_000_000, 0), Recorder::default())
                .unwrap_or_else(|e| panic!("{sub}: {e}"))
                .unwrap_or_else(|| panic!("{sub}: not mine"))
                .user;
            assert_eq!(user.name(), want, "{sub}");
            assert_eq!(user.groups().collect::<Vec<_>>(), [want], "{sub}");
        }
    }

    /// Go's net/http `stripPassword` (client.go): `user:***@`; a URL without a password (or
    /// without userinfo) unchanged; `@` in the path is not userinfo; the last `@` of the
    /// authority ends it, the first `:` starts the password.
    #[test]
    fn strip_password_as_go() {
        for (url, want) in [
            (
                "https://u:secret@h.example/keys",
                "https://u:***@h.example/keys",
            ),
            ("https://u:a:b@c@h:443/x?y#z", "https://u:***@h:443/x?y#z"),
            ("https://:pw@h/", "https://:***@h/"),
            ("https://u@h/", "https://u@h/"),
            ("https://h/p:q@r", "https://h/p:q@r"),
            ("https://h?u:p@x", "https://h?u:p@x"),
            ("https://u:p@h", "https://u:***@h"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(strip_password(url), want, "{url}");
        }
    }
}
