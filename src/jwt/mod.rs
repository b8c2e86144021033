//! The shared JWT core: a strict compact-JWS verifier over aws-lc-rs, keys parsed once, and
//! the issuer router that sends every JWT to the one authenticator that owns its `iss`.
//!
//! Used by the service-account authenticator ([`crate::token::service_account`]) and the
//! OIDC/JWT authenticators ([`crate::token::oidc`]).
//!
//! | step | where | rule |
//! |---|---|---|
//! | shape | [`compact`] | ≤ 64 KiB, no leading `{`, exactly 3 segments, unpadded canonical base64url |
//! | payload | [`json`] | one JSON object, duplicate names rejected at any depth (routed by the last `iss`, as kube-apiserver does, then refused by the owner after the signature), depth ≤ 128, string `iss` |
//! | route | [`router`] | `iss` → owner (string scan up to 8 issuers, one `HashMap` lookup beyond); nobody's issuer → *not mine* |
//! | header | [`compact`] | `alg` string from [`alg::Algorithm`] only (no `none`, no `HS*`); `crit`/`b64` rejected; `jwk`/`jku`/`x5u`/`x5c` never read; `kid` ≤ 1 KiB |
//! | keys | [`key`] | selected by `kid` (no fallback when a `kid` matches nothing), per-issuer allow-list, key type must fit `alg` |
//! | signature | [`key::PublicKey::verify`] | aws-lc-rs `ParsedPublicKey`; ECDSA fixed `r‖s` only; RSA 2048–8192 bits |
//! | claims | [`json`] | `exp`/`nbf`/`iat` must be numbers, `aud` string or string array; errors never echo values |
//!
//! # Why our own verifier (decision and figures)
//!
//! **Decision: our own verifier on the request path; `jsonwebtoken` 10 (aws-lc backend) only
//! as a dev-dependency differential oracle** (`tests/jwt_core.rs` checks both agree on 800
//! signature mutations over RS256/PS256/RS512/ES256). Reasons: keys are parsed once into
//! aws-lc-rs `ParsedPublicKey`s (one per algorithm the key may verify) instead of per call;
//! the three segments are decoded into one buffer; the payload is validated once by a
//! hand-written scanner (duplicate names at any depth, `iss`, an index of the top-level
//! members: [`json`]) and the claims are then read from that validated text, borrowing
//! strings; and the rules
//! `jsonwebtoken` lacks (duplicate names, `crit`, leading `{`, Kubernetes' `kid` semantics,
//! RSA size caps, JWK `alg` pinning) live in one small, fuzzable place.
//!
//! ## Measured
//!
//! The issue's target is "verify ≤ aws-lc-rs primitive + 1 µs". `benches/jwt.rs` measures
//! three things beside the primitive, per algorithm:
//!
//! * **core**: the shared JWT core alone, through its public API, as both authenticators use
//!   it: [`compact::UntrustedJwt::parse`] (segments, base64url, header, validating payload
//!   scan), the key by `kid`, [`verify_signature`], and the registered claims (`iss`, `aud`
//!   with [`json::RawAudience`], `exp`/`nbf`/`iat` with [`json::NumericDate`]) checked
//!   against the clock. This is "JWT verify" as the reference measured it (split + base64 +
//!   verify + claims);
//! * **SA full path**: issuer router + core + the service-account claims (`kubernetes.io`,
//!   audiences as Kubernetes intersects them) + building the [`crate::user::UserInfo`] and
//!   dropping it; claims as kube-apiserver mints them (560-byte payload, bound pod + node +
//!   `jti`);
//! * OIDC's full path is `benches/oidc.rs` (email, `email_verified`, three groups, `jti`).
//!
//! **Criterion**, quiet machine (load average 0.8–1.0), medians,
//! `cargo bench --bench jwt -- 'verify/' --warm-up-time 2 --measurement-time 5` and
//! `cargo bench --bench oidc -- --warm-up-time 2 --measurement-time 5`:
//!
//! | alg | aws-lc-rs primitive | core | SA full path | OIDC full path | `jsonwebtoken` 10 `decode` |
//! |---|---|---|---|---|---|
//! | RS256 (2048) | 15.71 µs | 16.72 µs (+1.01) | 17.35 µs (+1.64) | 15.56 → 17.00 µs (+1.44) | 23.8 µs |
//! | PS256 (2048) | 16.32 µs | 17.27 µs (+0.94) | 17.91 µs (+1.59) | 15.97 → 17.59 µs (+1.62) | 24.4 µs |
//! | ES256 | 49.31 µs | 50.40 µs (+1.09) | 51.94 µs (+2.63) | 49.15 → 50.89 µs (+1.73) | 56.3 µs |
//! | EdDSA | 37.69 µs | 38.60 µs (+0.91) | 39.13 µs (+1.44) | — | 44.7 µs |
//!
//! A second run an hour later (load average 1.1–1.2, the code unchanged but for ≈ 0.1 k
//! instructions) gave: core +1.10 / +0.93 / +0.42 / +0.71 µs, SA full path +1.94 / +1.76 /
//! +1.41 / +1.55 µs, OIDC +1.42 / +1.36 / +2.07 µs (RS256 / PS256 / ES256 / EdDSA): gaps move
//! by ± 0.3 µs between runs on this shared machine, which is why decisions were made on
//! instruction counts.
//!
//! **Paired** (the steadier figure): `JWT_COUNT=<alg>-paired JWT_ITERS=2000 cargo bench --bench
//! jwt` and `OIDC_COUNT=<alg>-paired OIDC_ITERS=2000 cargo bench --bench oidc` time blocks of
//! 32 calls of the primitive and of each path, interleaved, 2000 rounds, and print the median
//! of the per-round differences; drift that moves two separate criterion rows by ± 0.3 µs
//! falls on both sides of a pair alike. Two runs on a quiet machine (load average 0.1–1.0),
//! time over the primitive:
//!
//! | alg | pre-check, then the primitive | core | SA full path | OIDC full path |
//! |---|---|---|---|---|
//! | RS256 | 0.77 / 0.78 µs | 1.03 / 1.01 µs | 1.94 / 1.91 µs | 1.43 / 1.42 µs |
//! | PS256 | 0.70 / 0.61 µs | 1.02 / 0.88 µs | 1.89 / 1.76 µs | 1.40 / 1.40 µs |
//! | ES256 | 0.54 / 0.71 µs | 0.99 / 1.01 µs | 1.90 / 2.20 µs | 1.84 / 1.94 µs |
//! | EdDSA | 0.67 / 0.65 µs | 0.89 / 0.81 µs | 1.78 / 1.74 µs | — |
//!
//! A later run (2026-11-23 01:49 UTC, load average 0.3–0.9, fixed bench keys): pre-check
//! 0.67 / 0.65 / 0.74 / 0.63 µs, core 0.98 / 1.07 / 1.06 / 0.83 µs, SA full path 1.88 / 1.84 /
//! 2.25 / 1.77 µs (RS256 / PS256 / ES256 / EdDSA): the same picture. Again at 04:22 UTC (load
//! average 0.3–1.2): pre-check 0.76 / 0.68 / 0.76 / 0.65 µs, core 1.00 / 1.03 / 1.18 / 0.84 µs,
//! SA full path 1.88 / 1.95 / 2.13 / 1.73 µs.
//!
//! Then (2026-11-23, the next session) `NumericDate` reads eight digits per step and the claim
//! index keeps each name's fingerprint, so `get` compares one word per member: core 12.78 k →
//! 12.58 k instructions (`JWT_COUNT=sa-bound`, the SA path with its lookup-free user, is
//! 20.2 k). Paired at
//! 07:29 UTC (load average 1.0–1.2): pre-check 0.68 / 0.63 / 0.67 / 0.69 µs, core 0.98 / 0.96 /
//! 1.05 / 0.85 µs, SA full path 1.87 / 1.82 / 2.18 / 1.80 µs. The same picture again: the
//! remaining micro-optimisations are worth 1–2 % each.
//!
//! Tried since and reverted: a 16-byte string scan written so that the compiler vectorizes it
//! without `unsafe` (one load, three compares: it does become SSE2) instead of the 8-byte SWAR
//! scan: +0.3 k instructions per token (short names pay for the wider step) and no change in the
//! paired figures. Explicit SSE2 intrinsics are not callable without `unsafe` in a crate that
//! forbids it (Rust 1.95 still requires `#[target_feature]` on the caller, even for x86-64's
//! baseline features).
//!
//! Latest (2026-11-28 06:13 UTC, load average 0.5–1.0; the scan and the claims reading as
//! described below): paired, core +0.76 / +0.73 / +0.72 / +0.75 µs and SA full path +1.46 /
//! +1.46 / +1.50 / +1.52 µs (RS256 / PS256 / ES256 / EdDSA); criterion in the same hour, core
//! +0.73 / +0.72 / +1.09 / +1.15 µs and SA full path +1.38 / +1.44 / +2.09 / +1.51 µs, the
//! pre-check alone 0.49–0.50 µs. Callgrind (EdDSA, 5,000 calls): the core 12.3 k instructions
//! and the SA full path 20.0 k beyond the primitive's.
//!
//! So the core is *at* the target (0.72–1.15 µs over the primitive, under it when paired), not
//! under it with a margin everywhere, and the full paths miss it by 0.4–1.1 µs. The pre-check is 0.59–0.62 µs in a
//! loop of its own (`verify/*/pre-check parse only`) and 0.54–0.78 µs (0.68 on average)
//! beside a signature verification, most likely because the verification leaves caches and
//! branch predictors cold for the next token (this machine has no hardware counters to show
//! it): the non-crypto work costs somewhat more in place than alone. On ES256 the full path costs more than its instructions predict (+2.6 µs for
//! about the instructions RS256 spends in +1.6): P-256 verification works through large
//! precomputed tables, and what the request does around it (claims, the user, the
//! allocator) evicts part of them between iterations.
//!
//! **Instructions per token** (stable on a shared machine, so the decision metric:
//! `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*IssuerRouter*as*TokenAuthenticator*authenticate_token*'` on
//! `JWT_COUNT=RS256 JWT_ITERS=1000 target/release/deps/jwt-* --bench` (`OIDC_COUNT` for
//! `oidc-*`, `JWT_COUNT=RS256-core` with `--toggle-collect='*core_verify*'` for the core);
//! "non-crypto" = that total − the inclusive cost of aws-lc-rs's `parsed_verify_sig` inside
//! it, without dropping the answer):
//!
//! | alg | aws-lc-rs verify | core | SA: serde_json → raw walk → last session → now | OIDC: serde_json → raw walk → last session → now |
//! |---|---|---|---|---|
//! | RS256 (2048) | 304 k | 12.9 k | 60.1 → 39.7 → 21.9 → 19.1 k | 41.0 → 30.5 → 15.4 → 13.8 k |
//! | PS256 (2048) | 327 k | 12.9 k | 60.1 → 39.7 → 22.0 → 19.1 k | 41.0 → 30.5 → 15.4 → 13.8 k |
//! | ES256 | 746 k | 13.3 k | 57.5 → 38.5 → 22.4 → 19.5 k | 37.8 → 28.9 → 15.6 → 14.1 k |
//! | EdDSA | 497 k | 14.0 k | 57.5 → 39.3 → 23.1 → 20.3 k | — |
//!
//! Since then the OIDC path decodes the ID token's claims as go-oidc v2.5.0 does (every
//! member looked at once, `iat` read, typed distributed-claim maps: Kubernetes' exact errors),
//! and the session's other fixes landed: RS256 OIDC was then 14.9 k (SA 19.9 k, core 12.8 k;
//! `OIDC_COUNT=RS256` minus `OIDC_COUNT=RS256-primitive` over 1,000 calls). Later, with Go's
//! handling of lone surrogate escapes and the refusal of members Go case-folds onto go-oidc's
//! `idToken` fields: OIDC 16.0 k, SA 20.4 k, core 12.7 k (inclusive costs per call from 100
//! and 300 calls: `IssuerRouter::authenticate_token` or `core_verify` minus `verify_signature`
//! or `parsed_verify_sig`).
//!
//! Dropping the answer costs 0.6 k more for SA (2.1 k before the user's extra values moved
//! into its text) and 0.8 k for OIDC. Allocations per token (callgrind's count of
//! `__rust_alloc` calls): SA 7 (was 18: the user's 6 instead of 17), OIDC 11.
//!
//! Where the SA path's ≈ 19 k go (RS256):
//!
//! * **the pre-check, 9.5 k** ([`compact::UntrustedJwt::parse`]): the validating payload
//!   scan ≈ 6.2 k ([`json`]: strings eight bytes per step, scalars without a call, one
//!   fingerprinted name stack shared by all open objects, digits eight per step, no
//!   whole-document UTF-8 pass), base64url of the three segments 1.9 k (`base64-simd`, AVX2
//!   chosen at run time; the `base64` crate took 8.7 k), the two `.` searches 0.2 k (SIMD
//!   `memchr`; a third segment is looked for only when the signature fails to decode), the
//!   header 0.6 k (the compact form JOSE libraries write is read in one pass; anything
//!   else goes through the scanner: it took 1.6 k);
//! * **after it, ≈ 9 k**: `UntrustedJwt::claims` converts the payload to `str` once
//!   (≈ 0.4 k), the top-level claims ≈ 3 k (index walk, `exp`/`iat`/`nbf`, `aud`, audiences,
//!   time, key lookup), the `kubernetes.io` object 3.2 k (one pass, [`json`]'s cursor), the
//!   user ≈ 1.8 k: name, uid and the five extra values written into one string, the extra map
//!   built only if someone reads it ([`crate::user::UserInfo::extra`]).
//!
//! Why the full paths still miss "+ 1 µs": the validating scan is ≈ 11 instructions a byte,
//! spread over ≈ 45 strings and 25 members (per member: the name, its fingerprint and the
//! duplicate check, whitespace, the value, the index entry), and no step left is above a
//! third of the rest. Reaching + 1 µs on the full path needs the scan itself several times
//! cheaper: a SIMD structural index (simdjson's stage 1), which needs `std::arch`
//! intrinsics (this crate is `#![forbid(unsafe_code)]`) or a SIMD JSON dependency with its
//! own duplicate-name pass.
//!
//! Tried and measured, then reverted: recording the members of nested objects in the scan's
//! index too, so that the `kubernetes.io` claims are read from it instead of by a second walk.
//! The scan grew by 0.66 k instructions and the service-account reading shrank by only 0.1 k:
//! the cursor already reads each value where it stands, and reading the values (names
//! matched, strings checked for escapes) is what costs, not finding them. The benches sign
//! with fixed keys (`benches/keys/`, PKCS#8): with a key generated per run the RSA modulus,
//! and so the primitive's instruction count, changed between runs; totals now repeat to
//! ± 50 instructions over 1,000 calls, so whole-run counts can be compared directly.
//!
//! Routing alone (parse + route, `cargo bench --bench jwt -- route/`): an unknown issuer
//! 541–563 ns with 1 issuer configured, 560–588 ns with 100; an owned issuer without keys
//! 601–626 ns and 653–654 ns. Flat: a string scan up to [`router::LINEAR_MAX`] issuers, one
//! `HashMap` lookup (≈ 25 ns more) beyond, whatever the count.
//!
//! ```
//! use kube_authn::jwt::{compact::UntrustedJwt, key::{parse_pem_keys, KeySet}, alg::AlgorithmSet, verify_signature};
//! # let pem = b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n";
//! let keys = KeySet::by_key_id(parse_pem_keys(pem).unwrap());
//! let jwt = UntrustedJwt::parse("eyJhbGciOiJFUzI1NiJ9.e30.c2ln").unwrap();
//! let header = jwt.header().unwrap();
//! assert!(verify_signature(&jwt, header, keys.find(header.kid()), AlgorithmSet::KUBERNETES).is_err());
//! ```

pub mod alg;
pub mod compact;
pub mod der;
mod go_print;
pub mod json;
pub mod key;
mod key_file;
pub mod router;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use alg::AlgorithmSet;
use compact::{Header, HeaderAlg, UntrustedJwt};
use key::PublicKey;

/// Why a signature check failed.
///
/// ```
/// use std::sync::Arc;
/// use kube_authn::jwt::alg::AlgorithmSet;
/// use kube_authn::jwt::compact::UntrustedJwt;
/// use kube_authn::jwt::key::parse_jwks;
/// use kube_authn::jwt::{SignatureError, verify_signature};
///
/// let keys = parse_jwks(br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#).unwrap();
/// // {"alg":"EdDSA"}, a 64-byte signature of zeros
/// let sig = "A".repeat(86);
/// let token = format!("eyJhbGciOiJFZERTQSJ9.e30.{sig}");
/// let jwt = UntrustedJwt::parse(&token).unwrap();
/// let header = jwt.header().unwrap();
/// let check = |allowed| verify_signature(&jwt, header, keys.iter(), allowed).unwrap_err();
/// // EdDSA is not among Kubernetes' algorithms
/// assert_eq!(check(AlgorithmSet::KUBERNETES), SignatureError::AlgorithmNotAllowed);
/// let with_eddsa = AlgorithmSet::KUBERNETES.with(kube_authn::jwt::alg::Algorithm::EdDSA);
/// assert_eq!(check(with_eddsa), SignatureError::Invalid);
/// let none: [Arc<_>; 0] = [];
/// let err = verify_signature(&jwt, header, none.iter(), with_eddsa).unwrap_err();
/// assert_eq!(err, SignatureError::NoKeys);
/// assert_eq!(err.to_string(), "no keys found");
/// ```
///
/// New variants may be added: a `match` needs a wildcard arm.
///
/// ```compile_fail,E0004
/// use kube_authn::jwt::SignatureError;
/// fn kind(e: SignatureError) -> u8 {
///     match e {
///         SignatureError::NoKeys => 0,
///         SignatureError::AlgorithmNotAllowed => 1,
///         SignatureError::Invalid => 2,
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignatureError {
    /// No key matched the token's `kid` (or the key set is empty).
    NoKeys,
    /// `alg` is not one we verify, or not in this issuer's allow-list.
    AlgorithmNotAllowed,
    /// Every candidate key refused the signature (or could not verify `alg`).
    Invalid,
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SignatureError::NoKeys => "no keys found",
            SignatureError::AlgorithmNotAllowed => "algorithm not allowed",
            SignatureError::Invalid => "invalid signature",
        })
    }
}

impl std::error::Error for SignatureError {}

/// Verifies `jwt`'s signature with the first of `candidates` that accepts it, if its `alg` is
/// in `allowed`. Returns the key that verified.
///
/// ```
/// use kube_authn::jwt::{compact::UntrustedJwt, alg::AlgorithmSet, verify_signature, SignatureError};
/// let jwt = UntrustedJwt::parse("eyJhbGciOiJub25lIn0.e30.").unwrap(); // alg none
/// let r = verify_signature(&jwt, jwt.header().unwrap(), std::iter::empty(), AlgorithmSet::KUBERNETES);
/// assert_eq!(r.unwrap_err(), SignatureError::NoKeys);
/// ```
pub fn verify_signature<'k>(
    jwt: &UntrustedJwt<'_>,
    header: &Header,
    candidates: impl Iterator<Item = &'k Arc<PublicKey>>,
    allowed: AlgorithmSet,
) -> Result<&'k Arc<PublicKey>, SignatureError> {
    let mut candidates = candidates.peekable();
    if candidates.peek().is_none() {
        return Err(SignatureError::NoKeys);
    }
    let alg = match header.alg() {
        HeaderAlg::Known(a) if allowed.contains(a) => a,
        _ => return Err(SignatureError::AlgorithmNotAllowed),
    };
    let (input, sig) = (jwt.signing_input(), jwt.signature());
    candidates
        .find(|k| k.verify(alg, input, sig).is_ok())
        .ok_or(SignatureError::Invalid)
}

/// The time source for expiry checks (seconds since the Unix epoch). Inject a
/// [`FixedClock`] in tests.
///
/// ```
/// use kube_authn::jwt::{Clock, SystemClock};
/// assert!(SystemClock.now_unix() > 1_700_000_000);
/// ```
pub trait Clock: Send + Sync + fmt::Debug {
    /// Now, in whole seconds since the epoch.
    ///
    /// ```
    /// use kube_authn::jwt::{Clock, FixedClock};
    /// let clock = FixedClock::new(1_514_764_800); // 2018-01-01T00:00:00Z
    /// assert_eq!(clock.now_unix(), 1_514_764_800);
    /// ```
    fn now_unix(&self) -> i64;

    /// Now, as whole seconds since the epoch and the nanoseconds past that second. Go compares
    /// `time.Time` to the nanosecond, so a token whose `exp` is the current second (after
    /// leeway) has expired once that second has begun; a clock that only knows whole seconds
    /// (the default, and [`FixedClock`]) says 0.
    ///
    /// ```
    /// use kube_authn::jwt::{Clock, FixedClock, SystemClock};
    /// assert_eq!(FixedClock::new(5).now_unix_nanos(), (5, 0));
    /// assert!(SystemClock.now_unix_nanos().1 < 1_000_000_000);
    /// ```
    fn now_unix_nanos(&self) -> (i64, u32) {
        (self.now_unix(), 0)
    }
}

/// Whether the instant `at` (whole seconds, as JWT dates are) is before `now` (seconds and
/// nanoseconds, see [`Clock::now_unix_nanos`]): Go's `at.Before(now)`.
///
/// ```
/// use kube_authn::jwt::before;
/// assert!(before(9, (10, 0)));
/// assert!(!before(10, (10, 0)));
/// assert!(before(10, (10, 1))); // the second has begun
/// ```
pub fn before(at: i64, now: (i64, u32)) -> bool {
    at < now.0 || (at == now.0 && now.1 > 0)
}

/// Seconds from the Unix epoch to Go's internal one (January 1, year 1): `time.Unix(sec, 0)`
/// stores `sec` plus this, wrapping past `i64::MAX`.
///
/// ```
/// use kube_authn::jwt::{GO_UNIX_TO_INTERNAL, go_unix_overflows};
/// // 1969 years (year 1 to 1970), 477 of them leap years.
/// assert_eq!(GO_UNIX_TO_INTERNAL, 1969 * 365 * 86_400 + 477 * 86_400);
/// assert!(go_unix_overflows(i64::MAX - GO_UNIX_TO_INTERNAL + 1));
/// ```
pub const GO_UNIX_TO_INTERNAL: i64 = 62_135_596_800;

/// Whether Go's `time.Unix(sec, 0)` overflows: past `MaxInt64 − 62135596800` its internal
/// seconds wrap negative, a time in the far past, so an `exp` there has expired in Go
/// (go-jose's `After`, go-oidc's `Before` both compare the wrapped seconds).
///
/// ```
/// use kube_authn::jwt::go_unix_overflows;
/// assert!(!go_unix_overflows(9_223_371_974_719_179_007));
/// assert!(go_unix_overflows(9_223_371_974_719_179_008));
/// assert!(go_unix_overflows(i64::MAX));
/// assert!(!go_unix_overflows(i64::MIN));
/// ```
pub fn go_unix_overflows(sec: i64) -> bool {
    sec.checked_add(GO_UNIX_TO_INTERNAL).is_none()
}

/// The system clock.
///
/// ```
/// use kube_authn::jwt::{Clock, SystemClock};
/// let (secs, nanos) = SystemClock.now_unix_nanos();
/// assert!(secs > 1_700_000_000 && nanos < 1_000_000_000);
/// assert!(SystemClock.now_unix() >= secs);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix(&self) -> i64 {
        self.now_unix_nanos().0
    }

    fn now_unix_nanos(&self) -> (i64, u32) {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos()))
    }
}

/// A settable clock for tests.
///
/// ```
/// use kube_authn::jwt::{Clock, FixedClock};
/// let c = FixedClock::new(1514764800);
/// c.set(1514764801);
/// assert_eq!(c.now_unix(), 1514764801);
/// ```
#[derive(Debug, Default)]
pub struct FixedClock(AtomicI64);

impl FixedClock {
    /// A clock stopped at `now`.
    ///
    /// ```
    /// use kube_authn::jwt::Clock;
    /// assert_eq!(kube_authn::jwt::FixedClock::new(5).now_unix(), 5);
    /// ```
    pub fn new(now: i64) -> Self {
        FixedClock(AtomicI64::new(now))
    }

    /// Moves the clock.
    ///
    /// ```
    /// let c = kube_authn::jwt::FixedClock::new(5);
    /// c.set(6);
    /// ```
    pub fn set(&self, now: i64) {
        self.0.store(now, Ordering::Relaxed);
    }
}

impl Clock for FixedClock {
    fn now_unix(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Go's `%q` for a string (`strconv.Quote`): used to reproduce Kubernetes' error texts, and
/// to keep untrusted text on one visible line in logs. Printable characters stay; `\a \b \f
/// \n \r \t \v` are named; other control characters are `\xHH`; characters Go's
/// `strconv.IsPrint` refuses (white space other than the ASCII space, format characters such
/// as bidi overrides and U+FEFF, private use, noncharacters) are `\uHHHH` / `\UHHHHHHHH`.
/// (Unassigned code points, which Go also escapes, are kept: std has no Unicode tables.)
///
/// ```
/// use kube_authn::jwt::go_quote;
/// assert_eq!(go_quote("a\"b\n"), r#""a\"b\n""#);
/// assert_eq!(go_quote("\u{7}\u{b}\u{0}\u{85}\u{a0}\u{2028}\u{202e}\u{feff}é"), r#""\a\v\x00\u0085\u00a0\u2028\u202e\ufeffé""#);
/// ```
pub fn go_quote(s: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if !go_is_print(c) => {
                if (c as u32) < 0x10000 {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `strconv.Quote` of a string's bytes, which need not be UTF-8: [`go_quote`] for its
/// UTF-8 runs, `\xHH` for each byte that is not UTF-8.
///
/// ```
/// use kube_authn::jwt::go_quote_bytes;
/// assert_eq!(go_quote_bytes(b"a\xff\xe2\x80\x8b\"%"), r#""a\xff\u200b\"%""#);
/// ```
pub fn go_quote_bytes(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        let quoted = go_quote(chunk.valid());
        out.push_str(&quoted[1..quoted.len() - 1]);
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out.push('"');
    out
}

/// Go's `strconv.IsPrint`, what Go's `%q` and `strconv.Quote` leave unescaped: letters,
/// marks, numbers, punctuation, symbols and the ASCII space of Go's Unicode tables (a code
/// point not assigned there, a control or format character, white space other than the
/// space, private use or a noncharacter is escaped). Exactly Go's set: a binary search of
/// the printable ranges printed by go1.26.8's `strconv.IsPrint` (Unicode 15.0.0, the Go
/// release kube-apiserver v1.37 is built with), generated by `conformance/go/cmd/isprint`.
///
/// ```
/// use kube_authn::jwt::go_is_print;
/// assert!(go_is_print('a') && go_is_print(' ') && go_is_print('é') && go_is_print('\u{31350}'));
/// // a tab, a no-break space, a bidi isolate, a tag character, private use, unassigned in
/// // Unicode 15 (U+0378; U+1F6D8, assigned in Unicode 16)
/// for c in ['\t', '\u{a0}', '\u{2066}', '\u{e0041}', '\u{f0000}', '\u{378}', '\u{1f6d8}'] {
///     assert!(!go_is_print(c), "{c:?}");
/// }
/// ```
pub fn go_is_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    go_print::GO_PRINT
        .binary_search_by(|&(first, last)| {
            if last < u {
                std::cmp::Ordering::Less
            } else if first > u {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Go's `%q` for a `[]string`: `["a" "b"]`.
///
/// ```
/// assert_eq!(kube_authn::jwt::go_quote_list(["a", "b"]), r#"["a" "b"]"#);
/// ```
pub fn go_quote_list<I, S>(items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let parts: Vec<String> = items.into_iter().map(|s| go_quote(s.as_ref())).collect();
    format!("[{}]", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::{go_is_print, go_quote};

    /// Expected texts printed by Go 1.x `strconv.Quote` for the same inputs.
    #[test]
    fn go_quote_matches_strconv_quote() {
        let cases = [
            (
                "\u{7}\u{b}\u{0}\u{85}\u{a0}\u{2028}\u{202e}\u{feff}é",
                r#""\a\v\x00\u0085\u00a0\u2028\u202e\ufeffé""#,
            ),
            (
                "\u{ad}\u{200b}\u{2066}\u{e000}\u{f0000}\u{fdd0}\u{ffff}\u{1fffe}",
                r#""\u00ad\u200b\u2066\ue000\U000f0000\ufdd0\uffff\U0001fffe""#,
            ),
            ("a\u{3000}b\u{1680}c", r#""a\u3000b\u1680c""#),
            ("tab\there \"q\" \\", r#""tab\there \"q\" \\""#),
            ("\u{1F600} ok", "\"\u{1F600} ok\""),
            // Code points Go's Unicode tables (15.0.0) do not assign are escaped.
            ("\u{378}", r#""\u0378""#),
            ("\u{E0080}", r#""\U000e0080""#),
            ("\u{2FE0}", r#""\u2fe0""#),
            ("a\u{378}b", r#""a\u0378b""#),
            ("\u{1F00}\u{1F16}", "\"\u{1F00}\\u1f16\""),
            ("\u{1FAF8}\u{1F6D8}", "\"\u{1FAF8}\\U0001f6d8\""),
            ("\u{31350}", "\"\u{31350}\""),
            ("\u{0}\u{ad}\u{61c}", r#""\x00\u00ad\u061c""#),
        ];
        for (input, want) in cases {
            assert_eq!(go_quote(input), want, "{input:?}");
        }
    }

    /// `go_is_print` is Go's `strconv.IsPrint` for every code point: the code points it does
    /// not print, as tests/vectors/go_isprint.txt lists them (written by
    /// conformance/go/cmd/isprint from go1.26.8's strconv), and only those.
    #[test]
    fn go_is_print_is_strconv_is_print() {
        let ranges: Vec<(u32, u32)> = include_str!("../../tests/vectors/go_isprint.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (lo, hi) = l.split_once('-').unwrap();
                let hex = |s| u32::from_str_radix(s, 16).unwrap();
                (hex(lo), hex(hi))
            })
            .collect();
        assert!(
            ranges.windows(2).all(|w| w[0].1 + 1 < w[1].0),
            "sorted, disjoint"
        );
        assert_eq!(ranges.last().unwrap().1, 0x10ffff);
        let mut next = ranges.iter().peekable();
        let mut wrong = Vec::new();
        for u in 0..=0x10ffff_u32 {
            while next.peek().is_some_and(|r| r.1 < u) {
                next.next();
            }
            let printable = next.peek().is_none_or(|r| r.0 > u);
            match char::from_u32(u) {
                Some(c) if go_is_print(c) != printable => wrong.push(u),
                Some(_) => {}
                None => assert!(!printable, "surrogate U+{u:04X} listed as printable"),
            }
        }
        assert!(
            wrong.is_empty(),
            "{} code points differ, first U+{:04X}",
            wrong.len(),
            wrong[0]
        );
    }
}
