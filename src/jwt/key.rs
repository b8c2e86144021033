//! Verification keys: parsed **once** at load (aws-lc-rs `ParsedPublicKey`, one per algorithm
//! the key can verify), identified by Kubernetes' key id and/or a JWK `kid`.
//!
//! Sources:
//! * [`PublicKey::from_spki_der`]: a DER `SubjectPublicKeyInfo` (RSA, EC P-256/384/521, Ed25519);
//! * [`parse_pem_keys`]: what `--service-account-key-file` accepts (client-go
//!   `keyutil.ParsePublicKeysPEM`): per PEM block, **ignoring the PEM type label**, an RSA
//!   private key (PKCS#1 or PKCS#8), an RSA public key (PKIX or inside an X.509 certificate),
//!   an EC private key (SEC1 only, its public key derived from the scalar; PKCS#8 EC keys are
//!   skipped as in Kubernetes), an EC public key (PKIX or certificate; uncompressed points
//!   only), each with the rules of Go's parsers (see [`key_from_der`]). A block none of them
//!   takes is skipped, not an error; Ed25519 is never accepted here.
//! * [`parse_jwks`]: a JWK Set (`RSA`, `EC`, and `OKP`/`Ed25519` keys with `use` absent or `sig`,
//!   `key_ops` not an array or one containing `verify`, no private-key member, certificate
//!   members `x5c`/`x5t`/`x5t#S256`/`x5u` as go-jose requires; `n`/`e`/`x`/`y` in Go's lenient
//!   base64url; a JWK `alg` pins the key to that one algorithm).
//!
//! Limits: RSA moduli of 2048–8192 bits (larger keys are refused so an attacker-supplied
//! JWKS cannot make each verification arbitrarily slow); from a JWKS document at most
//! [`MAX_JWKS_KEYS`] usable keys, out of its first [`MAX_JWKS_ENTRIES`] elements; RSA public
//! exponent at most 2^31-1, the largest Go's `crypto/rsa` verifies with (a JWK with a larger
//! one is skipped like any unusable key; in a key file, an RSA key whose exponent
//! `crypto/rsa` would not verify with, below 3, even or above 2^31-1, is skipped).
//!
//! A key verifies only the algorithms of its type and size: RSA → `RS*`/`PS*`; P-256 → `ES256`,
//! P-384 → `ES384`, P-521 → `ES512`; Ed25519 → `EdDSA`. A JWK `alg` narrows that to one.
//! ECDSA signatures must be the fixed-size JOSE `r || s` form; DER signatures and `r = s = 0`
//! fail in aws-lc-rs.
//!
//! ```
//! use kube_authn::jwt::key::parse_pem_keys;
//! let pem = "-----BEGIN PUBLIC KEY-----
//! MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL
//! X2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==
//! -----END PUBLIC KEY-----";
//! let keys = parse_pem_keys(pem.as_bytes()).unwrap();
//! assert_eq!(keys[0].key_id(), "SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc");
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::signature::{self as sig, ParsedPublicKey, VerificationAlgorithm};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use super::alg::Algorithm;
use super::der;
use super::key_file::GoKey;

/// Smallest RSA modulus accepted (bits).
///
/// ```
/// use kube_authn::jwt::key::{MIN_RSA_BITS, parse_jwk};
/// assert_eq!(MIN_RSA_BITS, 2048);
/// // a 1024-bit modulus
/// let jwk = format!(r#"{{"kty":"RSA","n":"g{}","e":"AQAB"}}"#, "A".repeat(170));
/// let err = parse_jwk(jwk.as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "RSA key size 1024 bits is outside 2048..=8192");
/// ```
pub const MIN_RSA_BITS: usize = 2048;
/// Largest RSA modulus accepted (bits).
///
/// ```
/// use kube_authn::jwt::key::{MAX_RSA_BITS, parse_jwk};
/// assert_eq!(MAX_RSA_BITS, 8192);
/// // an 8193-bit modulus
/// let jwk = format!(r#"{{"kty":"RSA","n":"AQ{}","e":"AQAB"}}"#, "A".repeat(1365));
/// let err = parse_jwk(jwk.as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "RSA key size 8193 bits is outside 2048..=8192");
/// ```
pub const MAX_RSA_BITS: usize = 8192;
/// Most usable keys kept from one JWKS document (later ones are ignored). Keys that are
/// skipped (not for signatures, unsupported, malformed) do not count: they cannot hide a
/// signing key behind them.
///
/// ```
/// use kube_authn::jwt::key::{MAX_JWKS_KEYS, parse_jwks};
/// assert_eq!(MAX_JWKS_KEYS, 100);
/// let jwk = r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
/// let jwks = format!(r#"{{"keys":[{}]}}"#, vec![jwk; MAX_JWKS_KEYS + 5].join(","));
/// assert_eq!(parse_jwks(jwks.as_bytes()).unwrap().len(), MAX_JWKS_KEYS);
/// ```
pub const MAX_JWKS_KEYS: usize = 100;
/// Most elements of one JWKS document examined, usable or not (later ones are ignored), so the
/// work on one document stays bounded. A fetched JWKS is at most 1 MiB; the smallest real keys
/// (Ed25519 about 80 bytes, P-256 about 100) let such a document hold some 10 000 to 13 000
/// keys, and empty elements many more: the elements past the 10 000th are not examined.
///
/// ```
/// assert_eq!(kube_authn::jwt::key::MAX_JWKS_ENTRIES, 10_000);
/// ```
pub const MAX_JWKS_ENTRIES: usize = 10_000;

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
pub(super) const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
pub(super) const OID_P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
pub(super) const OID_P521: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x23];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];

/// The type of a key.
///
/// ```
/// use kube_authn::jwt::key::{KeyType, parse_jwks, parse_pem_keys};
/// # let pem = b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n";
/// assert_eq!(parse_pem_keys(pem).unwrap()[0].key_type(), KeyType::P256);
/// let jwks = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
/// assert_eq!(parse_jwks(jwks).unwrap()[0].key_type(), KeyType::Ed25519);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// RSA with the modulus size in bits.
    Rsa(usize),
    /// ECDSA on NIST P-256.
    P256,
    /// ECDSA on NIST P-384.
    P384,
    /// ECDSA on NIST P-521.
    P521,
    /// Ed25519.
    Ed25519,
}

impl KeyType {
    fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            KeyType::Rsa(_) => &[RS256, RS384, RS512, PS256, PS384, PS512],
            KeyType::P256 => &[ES256],
            KeyType::P384 => &[ES384],
            KeyType::P521 => &[ES512],
            KeyType::Ed25519 => &[EdDSA],
        }
    }
}

fn verification_algorithm(alg: Algorithm) -> &'static dyn VerificationAlgorithm {
    match alg {
        Algorithm::RS256 => &sig::RSA_PKCS1_2048_8192_SHA256,
        Algorithm::RS384 => &sig::RSA_PKCS1_2048_8192_SHA384,
        Algorithm::RS512 => &sig::RSA_PKCS1_2048_8192_SHA512,
        Algorithm::PS256 => &sig::RSA_PSS_2048_8192_SHA256,
        Algorithm::PS384 => &sig::RSA_PSS_2048_8192_SHA384,
        Algorithm::PS512 => &sig::RSA_PSS_2048_8192_SHA512,
        Algorithm::ES256 => &sig::ECDSA_P256_SHA256_FIXED,
        Algorithm::ES384 => &sig::ECDSA_P384_SHA384_FIXED,
        Algorithm::ES512 => &sig::ECDSA_P521_SHA512_FIXED,
        Algorithm::EdDSA => &sig::ED25519,
    }
}

/// Why key material was refused. Its text names the problem, never the key bytes.
///
/// ```
/// use kube_authn::jwt::key::{parse_jwk, parse_pem_keys};
/// let err = parse_pem_keys(b"not a key").unwrap_err();
/// assert_eq!(err.to_string(), "data does not contain any valid RSA or ECDSA public keys");
/// let err = parse_jwk(br#"{"kty":"EC","crv":"P-256","x":"AQ","y":"AQ"}"#).unwrap_err();
/// assert_eq!(err.to_string(), "JWK EC coordinates have the wrong length");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyError(String);

impl KeyError {
    fn new(msg: impl Into<String>) -> Self {
        KeyError(msg.into())
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

/// Why a signature did not verify against a key.
///
/// ```
/// use kube_authn::jwt::alg::Algorithm;
/// use kube_authn::jwt::key::{VerifyError, parse_pem_keys};
/// # let pem = b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n";
/// let key = &parse_pem_keys(pem).unwrap()[0];
/// // a P-256 key verifies ES256 only
/// assert_eq!(key.verify(Algorithm::PS256, b"msg", &[0; 256]), Err(VerifyError::AlgorithmMismatch));
/// assert_eq!(key.verify(Algorithm::ES256, b"msg", &[1; 64]), Err(VerifyError::BadSignature));
/// assert_eq!(VerifyError::BadSignature.to_string(), "invalid signature");
/// ```
///
/// New variants may be added: a `match` needs a wildcard arm.
///
/// ```compile_fail,E0004
/// use kube_authn::jwt::key::VerifyError;
/// fn kind(e: VerifyError) -> u8 {
///     match e {
///         VerifyError::AlgorithmMismatch => 0,
///         VerifyError::BadSignature => 1,
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The key cannot verify this algorithm (wrong type, curve, or JWK `alg`).
    AlgorithmMismatch,
    /// The signature is wrong (including DER-encoded or wrong-length ECDSA signatures).
    BadSignature,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VerifyError::AlgorithmMismatch => "key cannot verify this algorithm",
            VerifyError::BadSignature => "invalid signature",
        })
    }
}

impl std::error::Error for VerifyError {}

/// A public verification key, parsed once. Cheap to share (`Arc`).
///
/// `Debug` shows the type and ids only.
///
/// ```
/// use aws_lc_rs::encoding::AsDer;
/// use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair};
/// use kube_authn::jwt::alg::Algorithm;
/// use kube_authn::jwt::key::{KeyType, PublicKey};
///
/// let rng = aws_lc_rs::rand::SystemRandom::new();
/// let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
/// let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
/// let key = PublicKey::from_spki_der(pair.public_key().as_der().unwrap().as_ref()).unwrap();
///
/// let sig = pair.sign(b"header.payload");
/// assert!(key.verify(Algorithm::EdDSA, b"header.payload", sig.as_ref()).is_ok());
/// assert!(key.verify(Algorithm::EdDSA, b"header.other", sig.as_ref()).is_err());
/// assert!(format!("{key:?}").starts_with("PublicKey { type: Ed25519"));
/// ```
pub struct PublicKey {
    key_type: KeyType,
    key_id: Box<str>,
    jwk_kid: Option<Box<str>>,
    spki: Box<[u8]>,
    verifiers: [Option<ParsedPublicKey>; 10],
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("type", &self.key_type)
            .field("key_id", &self.key_id)
            .field("jwk_kid", &self.jwk_kid)
            .finish()
    }
}

impl PublicKey {
    /// Parses a DER `SubjectPublicKeyInfo`.
    ///
    /// ```
    /// use kube_authn::jwt::key::{KeyType, PublicKey};
    /// let rng = aws_lc_rs::rand::SystemRandom::new();
    /// let pkcs8 = aws_lc_rs::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    /// let pair = aws_lc_rs::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    /// use aws_lc_rs::encoding::AsDer;
    /// use aws_lc_rs::signature::KeyPair;
    /// let spki = pair.public_key().as_der().unwrap();
    /// let key = PublicKey::from_spki_der(spki.as_ref()).unwrap();
    /// assert_eq!(key.key_type(), KeyType::Ed25519);
    /// ```
    pub fn from_spki_der(spki: &[u8]) -> Result<PublicKey, KeyError> {
        Self::build(spki, None, None)
    }

    fn build(
        spki: &[u8],
        jwk_kid: Option<Box<str>>,
        only: Option<Algorithm>,
    ) -> Result<PublicKey, KeyError> {
        let key_type = spki_key_type(spki)?;
        let mut verifiers: [Option<ParsedPublicKey>; 10] = Default::default();
        let mut canonical: Option<Vec<u8>> = None;
        for &alg in key_type.algorithms() {
            if only.is_some_and(|o| o != alg) {
                continue;
            }
            let parsed = ParsedPublicKey::new(verification_algorithm(alg), spki)
                .map_err(|e| KeyError::new(format!("invalid public key: {e}")))?;
            if canonical.is_none() {
                canonical = Some(
                    parsed
                        .as_der()
                        .map_err(|_| KeyError::new("cannot encode public key"))?
                        .as_ref()
                        .to_vec(),
                );
            }
            verifiers[alg.index()] = Some(parsed);
        }
        let canonical = canonical
            .ok_or_else(|| KeyError::new("the JWK alg does not match the key type".to_string()))?;
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &canonical);
        Ok(PublicKey {
            key_type,
            key_id: URL_SAFE_NO_PAD.encode(digest.as_ref()).into(),
            jwk_kid,
            spki: canonical.into(),
            verifiers,
        })
    }

    /// The key type.
    ///
    /// ```
    /// # use kube_authn::jwt::key::*;
    /// # let k = parse_pem_keys(b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n").unwrap();
    /// assert_eq!(k[0].key_type(), KeyType::P256);
    /// ```
    pub fn key_type(&self) -> KeyType {
        self.key_type
    }

    /// Kubernetes' key id (`keyIDFromPublicKey`): unpadded base64url of the SHA-256 of the
    /// canonical PKIX DER encoding of the public key.
    ///
    /// ```
    /// # use kube_authn::jwt::key::*;
    /// # let k = parse_pem_keys(b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n").unwrap();
    /// assert_eq!(k[0].key_id().len(), 43);
    /// ```
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The `kid` of the JWK this key came from, if any.
    ///
    /// ```
    /// let set = kube_authn::jwt::key::parse_jwks(br#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"a","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#).unwrap();
    /// assert_eq!(set[0].jwk_kid(), Some("a"));
    /// ```
    pub fn jwk_kid(&self) -> Option<&str> {
        self.jwk_kid.as_deref()
    }

    /// The canonical DER `SubjectPublicKeyInfo`.
    ///
    /// ```
    /// # use kube_authn::jwt::key::*;
    /// # let k = parse_pem_keys(b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n").unwrap();
    /// assert_eq!(k[0].spki_der()[0], 0x30);
    /// ```
    pub fn spki_der(&self) -> &[u8] {
        &self.spki
    }

    /// Whether this key can verify `alg`.
    ///
    /// ```
    /// # use kube_authn::jwt::{alg::Algorithm, key::*};
    /// # let k = parse_pem_keys(b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n").unwrap();
    /// assert!(k[0].supports(Algorithm::ES256) && !k[0].supports(Algorithm::ES384));
    /// ```
    pub fn supports(&self, alg: Algorithm) -> bool {
        self.verifiers[alg.index()].is_some()
    }

    /// Verifies `signature` over `message` with `alg`.
    ///
    /// ```
    /// # use kube_authn::jwt::{alg::Algorithm, key::*};
    /// # let k = parse_pem_keys(b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n").unwrap();
    /// assert_eq!(k[0].verify(Algorithm::RS256, b"m", b"s"), Err(VerifyError::AlgorithmMismatch));
    /// assert_eq!(k[0].verify(Algorithm::ES256, b"m", &[0; 64]), Err(VerifyError::BadSignature));
    /// ```
    #[inline]
    pub fn verify(
        &self,
        alg: Algorithm,
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), VerifyError> {
        let verifier = self.verifiers[alg.index()]
            .as_ref()
            .ok_or(VerifyError::AlgorithmMismatch)?;
        verifier
            .verify_sig(message, signature)
            .map_err(|_| VerifyError::BadSignature)
    }
}

fn spki_key_type(spki: &[u8]) -> Result<KeyType, KeyError> {
    let bad = || KeyError::new("malformed SubjectPublicKeyInfo");
    let body = der::exact(der::SEQUENCE, spki).ok_or_else(bad)?;
    let (alg_id, rest) = der::expect(der::SEQUENCE, body).ok_or_else(bad)?;
    let bits = der::exact(der::BIT_STRING, rest).ok_or_else(bad)?;
    let (oid, params) = der::expect(der::OID, alg_id).ok_or_else(bad)?;
    match oid {
        OID_RSA => {
            let key = bits.strip_prefix(&[0]).ok_or_else(bad)?;
            let seq = der::exact(der::SEQUENCE, key).ok_or_else(bad)?;
            let (n, rest) = der::expect(der::INTEGER, seq).ok_or_else(bad)?;
            let e = der::exact(der::INTEGER, rest).ok_or_else(bad)?;
            let bits = der::bit_len(n);
            if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) {
                return Err(KeyError::new(format!(
                    "RSA key size {bits} bits is outside {MIN_RSA_BITS}..={MAX_RSA_BITS}"
                )));
            }
            // Go's crypto/rsa refuses to verify with an exponent above 2^31 - 1 ("crypto/rsa:
            // public exponent too large"): such a key could never verify a token there.
            if der::bit_len(e) > 31 {
                return Err(KeyError::new("RSA public exponent too large"));
            }
            Ok(KeyType::Rsa(bits))
        }
        OID_EC => match der::exact(der::OID, params) {
            Some(OID_P256) => Ok(KeyType::P256),
            Some(OID_P384) => Ok(KeyType::P384),
            Some(OID_P521) => Ok(KeyType::P521),
            _ => Err(KeyError::new("unsupported elliptic curve")),
        },
        OID_ED25519 if params.is_empty() => Ok(KeyType::Ed25519),
        _ => Err(KeyError::new("unsupported public key algorithm")),
    }
}

fn spki_from_parts(oid: &[u8], params: Option<&[u8]>, key: &[u8]) -> Vec<u8> {
    let mut alg = Vec::with_capacity(32);
    der::write_tlv(&mut alg, der::OID, oid);
    match params {
        Some(p) => der::write_tlv(&mut alg, der::OID, p),
        None if oid == OID_RSA => der::write_tlv(&mut alg, der::NULL, &[]),
        None => {}
    }
    let mut bits = Vec::with_capacity(key.len() + 1);
    bits.push(0);
    bits.extend_from_slice(key);
    let mut body = Vec::with_capacity(alg.len() + bits.len() + 16);
    der::write_tlv(&mut body, der::SEQUENCE, &alg);
    der::write_tlv(&mut body, der::BIT_STRING, &bits);
    let mut out = Vec::with_capacity(body.len() + 8);
    der::write_tlv(&mut out, der::SEQUENCE, &body);
    out
}

fn rsa_public_key_der(n: &[u8], e: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(n.len() + e.len() + 16);
    der::write_unsigned(&mut body, n);
    der::write_unsigned(&mut body, e);
    let mut out = Vec::with_capacity(body.len() + 8);
    der::write_tlv(&mut out, der::SEQUENCE, &body);
    out
}

/// Parses one DER blob the way client-go's `ParsePublicKeysPEM` does for a PEM block
/// (`x509` and `encoding/asn1` rules; see `key_file.rs`): `Ok(None)` when the blob is none of
/// the accepted forms (Kubernetes skips it silently). Of the keys Go takes, kube-authn refuses
/// RSA keys outside [`MIN_RSA_BITS`]`..=`[`MAX_RSA_BITS`] with an error (a misconfiguration
/// made visible at startup), and skips keys that can verify no JWS algorithm: P-224, RSA
/// keys whose exponent Go's `crypto/rsa` refuses to verify with (below 3, even, above
/// 2^31-1), and keys aws-lc refuses (an even modulus, a point off the curve).
///
/// ```
/// assert!(kube_authn::jwt::key::key_from_der(&[0x30, 0x00]).unwrap().is_none());
/// ```
pub fn key_from_der(der_bytes: &[u8]) -> Result<Option<PublicKey>, KeyError> {
    let spki = match super::key_file::parse_block(der_bytes) {
        None | Some(GoKey::P224) => return Ok(None),
        Some(GoKey::Rsa { n, e }) => {
            let bits = der::bit_len(&n);
            if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) {
                return Err(KeyError::new(format!(
                    "RSA key size {bits} bits is outside {MIN_RSA_BITS}..={MAX_RSA_BITS}"
                )));
            }
            // crypto/rsa's checkPublicKey, run before every verification.
            if e < 3 || e % 2 == 0 || e > i32::MAX as u64 {
                return Ok(None);
            }
            spki_from_parts(OID_RSA, None, &rsa_public_key_der(&n, &e.to_be_bytes()))
        }
        Some(GoKey::Ec { curve_oid, point }) => spki_from_parts(OID_EC, Some(curve_oid), &point),
    };
    Ok(PublicKey::from_spki_der(&spki).ok())
}

/// Largest PEM input read (bytes).
///
/// ```
/// use kube_authn::jwt::key::{MAX_PEM_LEN, parse_pem_keys};
/// assert_eq!(MAX_PEM_LEN, 4 * 1024 * 1024);
/// let err = parse_pem_keys(&vec![b'\n'; MAX_PEM_LEN + 1]).unwrap_err();
/// assert_eq!(err.to_string(), "key data is larger than 4194304 bytes");
/// ```
pub const MAX_PEM_LEN: usize = 4 * 1024 * 1024;

/// Iterates the DER bodies of the PEM blocks in `data` (labels ignored, text between blocks
/// ignored, as Go's `pem.Decode` loop does). Blocks whose body is not base64 are skipped.
///
/// ```
/// let blocks = kube_authn::jwt::key::pem_blocks(b"junk\n-----BEGIN X-----\nAQI=\n-----END X-----\n");
/// assert_eq!(blocks, vec![vec![1u8, 2]]);
/// ```
pub fn pem_blocks(data: &[u8]) -> Vec<Vec<u8>> {
    // Go's `pem.Decode` loop, shared with CA bundles (`x509::bundle::PemBlocks`): RFC 1421
    // headers are left out of the body (an encrypted key then fails to parse and is skipped,
    // as in Kubernetes).
    crate::x509::bundle::PemBlocks(data)
        .map(|block| block.bytes)
        .collect()
}

/// Parses every key in PEM `data` (see the [module docs](self)). Zero keys is Kubernetes'
/// error `data does not contain any valid RSA or ECDSA public keys`.
///
/// ```
/// let err = kube_authn::jwt::key::parse_pem_keys(b"").unwrap_err();
/// assert_eq!(err.to_string(), "data does not contain any valid RSA or ECDSA public keys");
/// ```
pub fn parse_pem_keys(data: &[u8]) -> Result<Vec<Arc<PublicKey>>, KeyError> {
    if data.len() > MAX_PEM_LEN {
        return Err(KeyError::new(format!(
            "key data is larger than {MAX_PEM_LEN} bytes"
        )));
    }
    let mut keys = Vec::new();
    for block in pem_blocks(data) {
        if let Some(key) = key_from_der(&block)? {
            keys.push(Arc::new(key));
        }
    }
    if keys.is_empty() {
        return Err(KeyError::new(
            "data does not contain any valid RSA or ECDSA public keys",
        ));
    }
    Ok(keys)
}

#[derive(Deserialize)]
struct RawJwk {
    kty: Option<String>,
    kid: Option<String>,
    #[serde(rename = "use")]
    use_: Option<String>,
    alg: Option<String>,
    // Not read by go-jose at all: any value is accepted (see `jwk_to_key`).
    key_ops: Option<serde_json::Value>,
    n: Option<String>,
    e: Option<String>,
    crv: Option<String>,
    x: Option<String>,
    y: Option<String>,
    // Private-key members (RFC 7518 §6.2.2, §6.3.2; `oth` for multi-prime RSA), read for their
    // presence only (a `null` member is absent, as in Go).
    d: Option<serde::de::IgnoredAny>,
    p: Option<serde::de::IgnoredAny>,
    q: Option<serde::de::IgnoredAny>,
    dp: Option<serde::de::IgnoredAny>,
    dq: Option<serde::de::IgnoredAny>,
    qi: Option<serde::de::IgnoredAny>,
    oth: Option<serde::de::IgnoredAny>,
    // The certificate members go-jose checks (`x5u` is not fetched by either, only decoded:
    // see `x5u_decodes`).
    x5c: Option<Vec<String>>,
    x5u: Option<serde_json::Value>,
    x5t: Option<String>,
    #[serde(rename = "x5t#S256")]
    x5t_s256: Option<String>,
}

impl RawJwk {
    /// Whether the JWK carries private-key material: `d` (RSA, EC, OKP), or for RSA any of
    /// `p`, `q`, `dp`, `dq`, `qi`, `oth`. go-jose decodes a JWK with `d` as a private key,
    /// which go-oidc's verifier cannot verify with; such a key is never used here.
    fn has_private_members(&self) -> bool {
        self.d.is_some()
            || (self.kty.as_deref() == Some("RSA")
                && (self.p.is_some()
                    || self.q.is_some()
                    || self.dp.is_some()
                    || self.dq.is_some()
                    || self.qi.is_some()
                    || self.oth.is_some()))
    }
}

/// A JWK string member, `None` when absent, `null` or empty.
fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// A JWK key member (`n`, `e`, `x`, `y`) as go-jose's `byteBuffer` reads it: Go's
/// `base64.RawURLEncoding`, which is not strict (non-zero trailing bits accepted, `\r` and `\n`
/// ignored anywhere; padding and other characters refused).
fn b64(s: &Option<String>) -> Result<Vec<u8>, KeyError> {
    let s = s
        .as_deref()
        .ok_or_else(|| KeyError::new("JWK member missing"))?;
    go_base64(s, false).ok_or_else(|| KeyError::new("JWK member is not base64url"))
}

/// Whether go-jose decodes a JWK's `x5u` (`null` is absent, never passed here): its
/// `rawJSONWebKey` declares it `*url.URL`, and `url.URL` has no JSON decoding of its own, so
/// Go's JSON reads it as a struct. A string (even `""`), number, boolean or array fails
/// (`cannot unmarshal string into Go value of type url.URL`), and with it the whole JWKS; an
/// object decodes, its members matched to `url.URL`'s fields by exact name (others ignored),
/// each of which must have its field's type (`null` leaves a field unset).
fn x5u_decodes(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    let Value::Object(members) = value else {
        return false;
    };
    members.iter().all(|(name, value)| match name.as_str() {
        "Scheme" | "Opaque" | "Host" | "Path" | "Fragment" | "RawQuery" | "RawPath"
        | "RawFragment" => matches!(value, Value::Null | Value::String(_)),
        "ForceQuery" | "OmitHost" => matches!(value, Value::Null | Value::Bool(_)),
        // `*url.Userinfo`: no exported fields, so any object.
        "User" => matches!(value, Value::Null | Value::Object(_)),
        _ => true,
    })
}

/// Parses one JWK (a JSON object). `Ok(None)` for keys that are not for signatures, of a
/// type this crate does not verify, or that carry private-key members (`d`; for RSA also `p`,
/// `q`, `dp`, `dq`, `qi`, `oth`: go-jose reads a JWK with `d` as a private key, which go-oidc
/// cannot verify with). An error for a malformed key, or one whose certificate members go-jose
/// refuses: an `x5c` whose entries are not certificates or whose first one holds another key,
/// an `x5t`/`x5t#S256` that is not a base64url SHA-1/SHA-256 digest or not the leaf's, an
/// `x5u` that is not `null` or an object (go-jose decodes it into Go's `url.URL` struct, so a
/// URL string fails).
///
/// ```
/// use kube_authn::jwt::key::parse_jwk;
/// let k = parse_jwk(br#"{"kty":"oct","k":"c2VjcmV0"}"#).unwrap();
/// assert!(k.is_none()); // symmetric keys are never used
/// let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
/// let public = format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}"}}"#);
/// assert!(parse_jwk(public.as_bytes()).unwrap().is_some());
/// let private = format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","d":"{x}"}}"#);
/// assert!(parse_jwk(private.as_bytes()).unwrap().is_none()); // a private key: never used
/// ```
pub fn parse_jwk(json: &[u8]) -> Result<Option<PublicKey>, KeyError> {
    // go-jose decodes a JWK from an object only (`json: cannot unmarshal array into Go value
    // of type jose.rawJSONWebKey`); serde would also take an array, member by member in order.
    if json.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(KeyError::new("malformed JWK: not a JSON object"));
    }
    // Go's strings: invalid UTF-8 and lone surrogate escapes read as U+FFFD (serde_json refuses
    // both), so an odd member does not cost the key.
    let text = match std::str::from_utf8(json) {
        Ok(_) => std::borrow::Cow::Borrowed(json),
        Err(_) => std::borrow::Cow::Owned(crate::api::go_utf8_lossy(json).into_bytes()),
    };
    let json = &*super::json::go_lone_surrogates(&text);
    let raw: RawJwk = super::json::from_slice_strict(json).map_err(|e| {
        KeyError::new(format!(
            "malformed JWK: {}",
            super::json::claims_error_message(&e)
        ))
    })?;
    jwk_to_key(raw)
}

fn jwk_to_key(raw: RawJwk) -> Result<Option<PublicKey>, KeyError> {
    // go-jose reads `use` and `alg` as plain strings: "" is the same as absent.
    let (use_, alg) = (non_empty(&raw.use_), non_empty(&raw.alg));
    if use_.is_some_and(|u| u != "sig") {
        return Ok(None);
    }
    if raw.has_private_members() {
        return Ok(None);
    }
    // go-jose does not read `key_ops` (any value is accepted and ignored). An array without
    // "verify" is a key its issuer does not let verify: skipped (fail closed). Any other value
    // is ignored, as in Go.
    if let Some(serde_json::Value::Array(ops)) = &raw.key_ops
        && !ops.iter().any(|o| o.as_str() == Some("verify"))
    {
        return Ok(None);
    }
    let only = match alg {
        None => None,
        Some(a) => match Algorithm::from_name(a) {
            Some(a) => Some(a),
            None => return Ok(None), // e.g. HS256, RSA-OAEP: not a signature key we use
        },
    };
    let kid = raw.kid.as_deref().map(Box::from);
    let spki = match raw.kty.as_deref() {
        Some("RSA") => {
            let n = b64(&raw.n)?;
            let e = b64(&raw.e)?;
            spki_from_parts(OID_RSA, None, &rsa_public_key_der(&n, &e))
        }
        Some("EC") => {
            let (oid, size) = match raw.crv.as_deref() {
                Some("P-256") => (OID_P256, 32),
                Some("P-384") => (OID_P384, 48),
                Some("P-521") => (OID_P521, 66),
                _ => return Ok(None),
            };
            let x = b64(&raw.x)?;
            let y = b64(&raw.y)?;
            if x.len() != size || y.len() != size {
                return Err(KeyError::new("JWK EC coordinates have the wrong length"));
            }
            let mut point = Vec::with_capacity(1 + 2 * size);
            point.push(4);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            spki_from_parts(OID_EC, Some(oid), &point)
        }
        Some("OKP") if raw.crv.as_deref() == Some("Ed25519") => {
            let x = b64(&raw.x)?;
            if x.len() != 32 {
                return Err(KeyError::new("JWK Ed25519 key has the wrong length"));
            }
            spki_from_parts(OID_ED25519, None, &x)
        }
        _ => return Ok(None),
    };
    check_certificates(&raw, &spki)?;
    PublicKey::build(&spki, kid, only).map(Some)
}

/// Go's lenient base64 (`encoding/base64` without `Strict`, [`crate::api::go_base64`]):
/// `padded` for `StdEncoding`, else `RawURLEncoding`.
fn go_base64(s: &str, padded: bool) -> Option<Vec<u8>> {
    crate::api::go_base64(s.as_bytes(), !padded, padded).ok()
}

/// A JWK thumbprint member (`x5t`, `x5t#S256`) as go-jose reads it: base64url; decoded to
/// twice the digest size, hex (either case) of the digest; otherwise empty or the digest size.
fn thumbprint(value: Option<&str>, name: &str, size: usize) -> Result<Vec<u8>, KeyError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let mut bytes = go_base64(value, false)
        .ok_or_else(|| KeyError::new(format!("invalid JWK, {name} header has invalid encoding")))?;
    if bytes.len() == 2 * size {
        let hex = |c: u8| (c as char).to_digit(16);
        bytes = bytes
            .chunks(2)
            .map(|p| Some((hex(p[0])? * 16 + hex(p[1])?) as u8))
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(|| KeyError::new(format!("invalid JWK, unable to hex decode {name}")))?;
    }
    if !bytes.is_empty() && bytes.len() != size {
        return Err(KeyError::new(format!(
            "invalid JWK, {name} header is of incorrect size"
        )));
    }
    Ok(bytes)
}

/// go-jose's checks of a JWK's certificate members (`JSONWebKey.UnmarshalJSON`): every `x5c`
/// entry standard base64 of a certificate `x509.ParseCertificate` takes, the first one
/// holding the JWK's own public key (`spki`, as [`jwk_to_key`] built it); `x5t` and `x5t#S256`
/// base64url SHA-1 / SHA-256 digests (or their hex), which with a chain must be its leaf's;
/// an `x5u` Go's JSON can decode into `url.URL` ([`x5u_decodes`]). go-jose refuses such a JWK, and with it the whole JWKS; here the key is skipped. No key
/// material is put in the errors.
fn check_certificates(raw: &RawJwk, spki: &[u8]) -> Result<(), KeyError> {
    if raw.x5u.as_ref().is_some_and(|u| !x5u_decodes(u)) {
        return Err(KeyError::new("invalid JWK, x5u is not a url.URL"));
    }
    let mut chain = Vec::with_capacity(raw.x5c.as_ref().map_or(0, Vec::len));
    for entry in raw.x5c.iter().flatten() {
        let der = go_base64(entry, true)
            .ok_or_else(|| KeyError::new("invalid JWK, x5c entry is not base64"))?;
        if super::key_file::certificate_spki(&der).is_none() {
            return Err(KeyError::new("invalid JWK, x5c entry is not a certificate"));
        }
        chain.push(der);
    }
    if let Some(leaf) = chain.first() {
        let leaf_spki = super::key_file::certificate_spki(leaf).unwrap_or_default();
        let same = match super::key_file::pkix_key(leaf_spki) {
            Some(GoKey::Rsa { n, e }) => {
                spki_from_parts(OID_RSA, None, &rsa_public_key_der(&n, &e.to_be_bytes())) == spki
            }
            Some(GoKey::Ec { curve_oid, point }) => {
                spki_from_parts(OID_EC, Some(curve_oid), &point) == spki
            }
            Some(GoKey::P224) => false,
            // Ed25519 (Go refuses parameters and other lengths): the canonical DER itself.
            None => leaf_spki == spki,
        };
        if !same {
            return Err(KeyError::new(
                "invalid JWK, public keys in key and x5c fields do not match",
            ));
        }
    }
    let sha1 = thumbprint(raw.x5t.as_deref(), "x5t", 20)?;
    let sha256 = thumbprint(raw.x5t_s256.as_deref(), "x5t#S256", 32)?;
    if let Some(leaf) = chain.first() {
        use aws_lc_rs::digest::{SHA1_FOR_LEGACY_USE_ONLY, SHA256, digest};
        if !sha1.is_empty() && digest(&SHA1_FOR_LEGACY_USE_ONLY, leaf).as_ref() != sha1 {
            return Err(KeyError::new(
                "invalid JWK, x5c thumbprint does not match x5t value",
            ));
        }
        if !sha256.is_empty() && digest(&SHA256, leaf).as_ref() != sha256 {
            return Err(KeyError::new(
                "invalid JWK, x5c thumbprint does not match x5t#S256 value",
            ));
        }
    }
    Ok(())
}

/// Parses a JWK Set (`{"keys":[…]}`) as go-oidc decodes a fetched JWKS, the same path an
/// OIDC issuer's key set takes: the document is decoded as go-jose's `JSONWebKeySet` by Go's
/// `encoding/json` (v1) rules — Go's syntax-error texts, the member `keys` matched
/// case-insensitively with Go's folding, a repeated `keys` won by the last one, a missing or
/// `null` `keys` an empty set, a `keys` that is not an array Go's type error. Then each
/// element (at most [`MAX_JWKS_ENTRIES`]) is read by [`parse_jwk`], keeping at most
/// [`MAX_JWKS_KEYS`] usable keys: keys that are not for signatures, of unsupported types,
/// private, malformed, RSA keys whose exponent Go's `crypto/rsa` refuses to verify with
/// (above 2^31-1), with certificate members go-jose refuses (`x5c`, `x5t`, `x5t#S256`, an
/// `x5u` that does not decode as Go's `url.URL`: a string), or refused by its strict JSON (a duplicate member, a lone surrogate) are skipped (one bad
/// key does not take down the others, where go-jose would refuse the whole set).
///
/// ```
/// use kube_authn::jwt::key::parse_jwks;
/// let keys = parse_jwks(br#"{"keys":[{"kty":"RSA","n":"AQ","e":"AQAB"}]}"#).unwrap();
/// assert!(keys.is_empty()); // an 8-bit RSA key is refused
/// // No `keys`, or `null`: an empty set, as go-oidc decodes it (not an error).
/// assert!(parse_jwks(b"{}").unwrap().is_empty());
/// assert!(parse_jwks(br#"{"keys":null}"#).unwrap().is_empty());
/// // Go's error texts.
/// assert_eq!(
///     parse_jwks(br#"{"keys":5}"#).unwrap_err().to_string(),
///     "malformed JWKS: json: cannot unmarshal number into Go struct field JSONWebKeySet.keys of type []jose.JSONWebKey"
/// );
/// assert_eq!(
///     parse_jwks(b"nul").unwrap_err().to_string(),
///     "malformed JWKS: invalid character ' ' in literal null (expecting 'l')"
/// );
/// ```
pub fn parse_jwks(json: &[u8]) -> Result<Vec<Arc<PublicKey>>, KeyError> {
    decode_jwks(json).map_err(|e| KeyError::new(format!("malformed JWKS: {e}")))
}

/// [`parse_jwks`] with the decode error as Go's bare `encoding/json` text (what go-oidc's
/// `unmarshalResp` wraps).
pub(crate) fn decode_jwks(json: &[u8]) -> Result<Vec<Arc<PublicKey>>, String> {
    use crate::token::oidc::gojson::{self, GoType};
    const KEY_SET: &[gojson::Field] = &[("keys", GoType::Slice("[]jose.JSONWebKey"))];
    let fields = gojson::decode_struct(json, "jose", "JSONWebKeySet", KEY_SET)?;
    Ok(gojson::elements(fields[0])
        .take(MAX_JWKS_ENTRIES)
        .filter_map(|k| parse_jwk(k).ok().flatten())
        .take(MAX_JWKS_KEYS)
        .map(Arc::new)
        .collect())
}

// `KeySet::find`'s bit mask of matching positions is a `u32`.
const _: () = assert!(KeySet::LINEAR_MAX < u32::BITS as usize);

/// An immutable set of keys with an index by id (Kubernetes key id or JWK `kid`).
///
/// ```
/// use kube_authn::jwt::key::{parse_pem_keys, KeySet};
/// # let k = parse_pem_keys(b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n").unwrap();
/// let set = KeySet::by_key_id(k);
/// assert_eq!(set.find(Some("SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc")).count(), 1);
/// assert_eq!(set.find(Some("other")).count(), 0);
/// assert_eq!(set.find(None).count(), 1);
/// ```
#[derive(Debug, Default, Clone)]
pub struct KeySet {
    keys: Vec<Arc<PublicKey>>,
    /// Each key's id, parallel to `keys` (small sets are searched by a scan of these).
    ids: Vec<Option<Box<str>>>,
    /// Key positions by id, for sets larger than [`KeySet::LINEAR_MAX`] (empty otherwise).
    index: HashMap<Box<str>, Vec<usize>>,
}

impl KeySet {
    /// Up to this many keys, [`find`](Self::find) compares the `kid` with each key's id
    /// instead of hashing it (an issuer has one to a few keys: a scan of short strings is
    /// several times cheaper than SipHash); beyond, one `HashMap` lookup. Both find the same
    /// keys in the same order.
    ///
    /// ```
    /// assert_eq!(kube_authn::jwt::key::KeySet::LINEAR_MAX, 8);
    /// ```
    pub const LINEAR_MAX: usize = 8;

    /// Indexes `keys` by their Kubernetes key id (service-account keys).
    ///
    /// ```
    /// assert!(kube_authn::jwt::key::KeySet::by_key_id(vec![]).is_empty());
    /// ```
    pub fn by_key_id(keys: Vec<Arc<PublicKey>>) -> KeySet {
        Self::index_with(keys, |k| Some(k.key_id()))
    }

    /// Indexes `keys` by their JWK `kid` (keys without one are found only by a token without
    /// a `kid`, as go-oidc does).
    ///
    /// ```
    /// assert!(kube_authn::jwt::key::KeySet::by_jwk_kid(vec![]).is_empty());
    /// ```
    pub fn by_jwk_kid(keys: Vec<Arc<PublicKey>>) -> KeySet {
        Self::index_with(keys, |k| k.jwk_kid())
    }

    fn index_with(keys: Vec<Arc<PublicKey>>, id: impl Fn(&PublicKey) -> Option<&str>) -> KeySet {
        let ids: Vec<Option<Box<str>>> = keys.iter().map(|k| id(k).map(Box::from)).collect();
        let mut index: HashMap<Box<str>, Vec<usize>> = HashMap::new();
        if keys.len() > Self::LINEAR_MAX {
            for (i, id) in ids.iter().enumerate() {
                if let Some(id) = id {
                    index.entry(id.clone()).or_default().push(i);
                }
            }
        }
        KeySet { keys, ids, index }
    }

    /// Keys for a token's `kid`: with a `kid`, exactly the keys with that id (possibly none —
    /// there is no fallback to "try all"); without one, every key in order.
    ///
    /// ```
    /// assert_eq!(kube_authn::jwt::key::KeySet::default().find(None).count(), 0);
    /// ```
    pub fn find<'s>(&'s self, kid: Option<&str>) -> impl Iterator<Item = &'s Arc<PublicKey>> + 's {
        // Small sets: the positions whose id is `kid`, as a bit mask. Only a set of at most
        // LINEAR_MAX (< 32) keys can have a bit set, and only then are its keys scanned, so no
        // shift reaches the mask's width whatever the set's size.
        let mut matched: u32 = 0;
        let indices: &'s [usize] = match kid {
            Some(kid) if self.keys.len() <= Self::LINEAR_MAX => {
                for (i, id) in self.ids.iter().enumerate() {
                    if id.as_deref() == Some(kid) {
                        matched |= 1 << i;
                    }
                }
                &[]
            }
            Some(kid) => self.index.get(kid).map_or(&[], |v| v.as_slice()),
            None => &[],
        };
        let all = kid.is_none();
        let small: &'s [Arc<PublicKey>] = if matched != 0 { &self.keys } else { &[] };
        let scanned = small
            .iter()
            .enumerate()
            .filter(move |(i, _)| matched & (1 << i) != 0)
            .map(|(_, k)| k);
        let by_id = indices.iter().map(|i| &self.keys[*i]);
        let every = self.keys.iter().filter(move |_| all);
        scanned.chain(by_id).chain(every)
    }

    /// All keys in order.
    ///
    /// ```
    /// assert!(kube_authn::jwt::key::KeySet::default().keys().is_empty());
    /// ```
    pub fn keys(&self) -> &[Arc<PublicKey>] {
        &self.keys
    }

    /// Whether the set is empty.
    ///
    /// ```
    /// assert!(kube_authn::jwt::key::KeySet::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// go-oidc decodes `{}` and `{"keys":null}` as an empty key set (Go's `encoding/json`);
    /// they used to be refused as malformed. A `keys` that is not an array still is.
    #[test]
    fn jwks_without_keys_is_an_empty_set() {
        for body in [&b"{}"[..], br#"{"keys":null}"#, br#"{"keys":[]}"#] {
            assert!(parse_jwks(body).unwrap().is_empty(), "{body:?}");
        }
        assert!(parse_jwks(br#"{"keys":5}"#).is_err());
    }

    /// `parse_jwks` decodes the set as go-oidc does (Go's `encoding/json`, the path an OIDC
    /// issuer's JWKS takes): `keys` matched case-insensitively, the last of repeated `keys`
    /// wins, a top-level `null` is an empty set; each key goes through [`parse_jwk`], so a key
    /// with a duplicate member is skipped as it is for an issuer (it used to be collapsed by
    /// `serde_json::from_value` and used).
    #[test]
    fn jwks_decodes_as_the_discovery_path() {
        let key =
            r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
        let n = |body: String| parse_jwks(body.as_bytes()).map(|k| k.len());
        assert_eq!(n(format!(r#"{{"Keys":[{key}]}}"#)), Ok(1));
        assert_eq!(n(format!("{{\"\u{212a}eys\":[{key}]}}")), Ok(1));
        assert_eq!(n(format!(r#"{{"keys":[{key}],"KEYS":[]}}"#)), Ok(0));
        assert_eq!(n(format!(r#"{{"keys":[],"keys":[{key},{key}]}}"#)), Ok(2));
        assert_eq!(n("null".into()), Ok(0));
        let dup = r#"{"kty":"OKP","kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
        assert_eq!(n(format!(r#"{{"keys":[{dup},{key}]}}"#)), Ok(1));
        assert_eq!(
            parse_jwks(b"{\"keys\":[").unwrap_err().to_string(),
            "malformed JWKS: unexpected end of JSON input"
        );
    }
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};

    /// The members of benches/keys/rsa2048.pk8 as base64url JWK values, in PKCS#1 order:
    /// `n`, `e`, `d`, `p`, `q`, `dp`, `dq`, `qi`.
    fn rsa_members() -> Vec<String> {
        let pk8: &[u8] = include_bytes!("../../benches/keys/rsa2048.pk8");
        let seq = der::exact(der::SEQUENCE, pk8).unwrap();
        let (_, rest) = der::expect(der::INTEGER, seq).unwrap();
        let (_, rest) = der::expect(der::SEQUENCE, rest).unwrap();
        let (pkcs1, _) = der::expect(der::OCTET_STRING, rest).unwrap();
        let mut rest = der::exact(der::SEQUENCE, pkcs1).unwrap();
        rest = der::expect(der::INTEGER, rest).unwrap().1; // version
        (0..8)
            .map(|_| {
                let (int, next) = der::expect(der::INTEGER, rest).unwrap();
                rest = next;
                let skip = int.iter().take_while(|b| **b == 0).count();
                URL_SAFE_NO_PAD.encode(&int[skip..])
            })
            .collect()
    }

    /// go-jose refuses a JWK whose certificate members are inconsistent (`invalid JWK, public
    /// keys in key and x5c fields to not match`, `x5t header has invalid encoding`, …), and
    /// with it the whole JWKS; here that key is skipped, the set's other keys still used. The
    /// members were ignored, so such keys were used.
    #[test]
    fn jwks_certificate_members_are_checked_as_go_jose_checks_them() {
        use aws_lc_rs::digest::{SHA1_FOR_LEGACY_USE_ONLY, SHA256, digest};
        let cert_of = |key: &rcgen::KeyPair| {
            let params = rcgen::CertificateParams::new(vec!["jwks.example".into()]).unwrap();
            params.self_signed(key).unwrap().der().to_vec()
        };
        let m = rsa_members();
        let rsa = rcgen::KeyPair::try_from(&include_bytes!("../../benches/keys/rsa2048.pk8")[..])
            .unwrap();
        let ec = rcgen::KeyPair::generate().unwrap();
        let ed = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        let (ec_point, ed_x) = (ec.public_key_raw(), ed.public_key_raw());
        // (JWK members, its certificate)
        let keys = [
            (
                format!(r#""kty":"RSA","n":"{}","e":"{}""#, m[0], m[1]),
                cert_of(&rsa),
            ),
            (
                format!(
                    r#""kty":"EC","crv":"P-256","x":"{}","y":"{}""#,
                    URL_SAFE_NO_PAD.encode(&ec_point[1..33]),
                    URL_SAFE_NO_PAD.encode(&ec_point[33..])
                ),
                cert_of(&ec),
            ),
            (
                format!(
                    r#""kty":"OKP","crv":"Ed25519","x":"{}""#,
                    URL_SAFE_NO_PAD.encode(ed_x)
                ),
                cert_of(&ed),
            ),
        ];
        let std64 = |der: &[u8]| base64::engine::general_purpose::STANDARD.encode(der);
        let url64 = |bytes: &[u8]| URL_SAFE_NO_PAD.encode(bytes);
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02X}")).collect::<String>();
        for (i, (jwk, cert)) in keys.iter().enumerate() {
            let other = &keys[(i + 1) % keys.len()].1;
            let (sha1, sha256) = (
                digest(&SHA1_FOR_LEGACY_USE_ONLY, cert),
                digest(&SHA256, cert),
            );
            let (sha1, sha256) = (sha1.as_ref(), sha256.as_ref());
            let n = |extra: String| {
                let doc = format!(r#"{{"keys":[{{{jwk}{extra}}}]}}"#);
                parse_jwks(doc.as_bytes()).unwrap().len()
            };
            let x5c = |certs: &[&[u8]]| {
                let list: Vec<String> =
                    certs.iter().map(|c| format!(r#""{}""#, std64(c))).collect();
                format!(r#","x5c":[{}]"#, list.join(","))
            };
            let usable = [
                ("no certificate members", String::new()),
                ("its own certificate", x5c(&[cert])),
                ("a chain whose leaf is its certificate", x5c(&[cert, other])),
                ("an empty x5c", r#","x5c":[]"#.into()),
                (
                    "null members",
                    r#","x5c":null,"x5t":null,"x5t#S256":null"#.into(),
                ),
                ("empty thumbprints", r#","x5t":"","x5t#S256":"""#.into()),
                (
                    "the leaf's thumbprints",
                    format!(
                        r#"{},"x5t":"{}","x5t#S256":"{}""#,
                        x5c(&[cert]),
                        url64(sha1),
                        url64(sha256)
                    ),
                ),
                (
                    "the leaf's thumbprints in hex",
                    format!(
                        r#"{},"x5t":"{}","x5t#S256":"{}""#,
                        x5c(&[cert]),
                        url64(hex(sha1).as_bytes()),
                        url64(hex(sha256).to_lowercase().as_bytes())
                    ),
                ),
                (
                    "thumbprints without x5c are not compared",
                    format!(r#","x5t":"{}""#, url64(&[7; 20])),
                ),
                ("x5c with line breaks (Go's base64 skips them)", {
                    let b = std64(cert);
                    format!(r#","x5c":["{}\r\n{}\n"]"#, &b[..64], &b[64..])
                }),
            ];
            for (name, extra) in usable {
                assert_eq!(n(extra), 1, "{i}: {name}");
            }
            let refused = [
                ("another key's certificate", x5c(&[other])),
                (
                    "a chain with an entry that is not a certificate",
                    x5c(&[cert, b"junk"]),
                ),
                ("an x5c entry that is not base64", r#","x5c":["!!"]"#.into()),
                (
                    "an x5c entry in base64url",
                    format!(r#","x5c":["{}"]"#, url64(cert)),
                ),
                ("an x5t that is not base64url", r#","x5t":"!!""#.into()),
                (
                    "an x5t#S256 that is not base64url",
                    r#","x5t#S256":"!!""#.into(),
                ),
                (
                    "an x5t with padding",
                    format!(r#","x5t":"{}=""#, url64(&[7; 20])),
                ),
                (
                    "an x5t of the wrong size",
                    format!(r#","x5t":"{}""#, url64(&[7; 32])),
                ),
                (
                    "an x5t#S256 of the wrong size",
                    format!(r#","x5t#S256":"{}""#, url64(&[7; 20])),
                ),
                (
                    "an x5t of 40 bytes that are not hex",
                    format!(r#","x5t":"{}""#, url64(&[b'g'; 40])),
                ),
                (
                    "another certificate's x5t",
                    format!(
                        r#"{},"x5t":"{}""#,
                        x5c(&[cert]),
                        url64(digest(&SHA1_FOR_LEGACY_USE_ONLY, other).as_ref())
                    ),
                ),
                (
                    "another certificate's x5t#S256",
                    format!(
                        r#"{},"x5t#S256":"{}""#,
                        x5c(&[cert]),
                        url64(digest(&SHA256, other).as_ref())
                    ),
                ),
                (
                    "an x5c that is not a list of strings",
                    r#","x5c":"abc""#.into(),
                ),
            ];
            for (name, extra) in refused {
                assert_eq!(n(extra), 0, "{i}: {name}");
            }
        }
        // One refused key does not take the others down (go-jose refuses the whole set).
        let (rsa_jwk, ec_jwk, ec_cert) = (&keys[0].0, &keys[1].0, &keys[1].1);
        let doc = format!(
            r#"{{"keys":[{{{rsa_jwk},"x5c":["{}"]}},{{{ec_jwk}}}]}}"#,
            std64(ec_cert)
        );
        let set = parse_jwks(doc.as_bytes()).unwrap();
        assert_eq!(set.len(), 1);
        assert_eq!(set[0].key_type(), KeyType::P256);
    }

    /// Strings are Go's: invalid UTF-8 and lone surrogate escapes anywhere in a JWK are U+FFFD
    /// (the key used, its `kid` as Go reads it), where serde_json refused the whole key.
    #[test]
    fn jwk_strings_are_read_as_go_reads_them() {
        let (x, y) = (
            "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
        );
        let key = |extra: &[u8], kid: &str| {
            let mut doc = format!(
                r#"{{"keys":[{{"kty":"EC","crv":"P-256","x":"{x}","y":"{y}","kid":"{kid}""#
            )
            .into_bytes();
            doc.extend_from_slice(extra);
            doc.extend_from_slice(b"}]}");
            parse_jwks(&doc).unwrap()
        };
        for (name, extra, kid, want_kid) in [
            (
                "lone surrogate in a member name",
                &br#","\ud800":1"#[..],
                "k1",
                "k1",
            ),
            ("lone surrogate in kid", b"", r"\ud800", "\u{fffd}"),
            (
                "lone surrogate in key_ops",
                br#","key_ops":["verify","\udc00"]"#,
                "k1",
                "k1",
            ),
            (
                "invalid UTF-8 in another member",
                b",\"note\":\"\xff\"",
                "k1",
                "k1",
            ),
        ] {
            let keys = key(extra, kid);
            assert_eq!(keys.len(), 1, "{name}");
            assert_eq!(keys[0].jwk_kid(), Some(want_kid), "{name}");
        }
    }

    /// An element that is not an object is skipped (docs/compatibility.md: go-jose cannot
    /// decode it); serde's array form of a struct read `["EC",…]` member by member as a key.
    #[test]
    fn jwks_elements_that_are_not_objects_are_skipped() {
        let (x, y) = (
            "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
        );
        // RawJwk's 21 members in order: kty, kid, use, alg, key_ops, n, e, crv, x, y, then
        // the private and certificate members.
        let nulls = [",null"; 11].concat();
        let array =
            format!(r#"["EC","k","sig","ES256",null,null,null,"P-256","{x}","{y}"{nulls}]"#);
        let object = format!(r#"{{"kty":"EC","kid":"k","crv":"P-256","x":"{x}","y":"{y}"}}"#);
        for (name, doc, used) in [
            ("array element", format!(r#"{{"keys":[{array}]}}"#), 0),
            (
                "array, then an object",
                format!(r#"{{"keys":[{array},{object}]}}"#),
                1,
            ),
            ("object", format!(r#"{{"keys":[{object}]}}"#), 1),
        ] {
            assert_eq!(parse_jwks(doc.as_bytes()).unwrap().len(), used, "{name}");
        }
        let e = parse_jwk(array.as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), "malformed JWK: not a JSON object");
    }

    /// JWK members decoded as go-jose v2 decodes them (outcomes checked against go-oidc v2.5.0 /
    /// go-jose v2.6.3 decoding the same JWKS):
    /// * `x5u` is Go's `*url.URL`: a string (even `""`) fails go-jose's decode (`cannot
    ///   unmarshal string into Go value of type url.URL`) and with it the whole set, so the key
    ///   is skipped here (it was used); `null` and an object whose `url.URL` fields have their
    ///   types decode (the key is used);
    /// * `n`/`e`/`x`/`y` are read with Go's non-strict `RawURLEncoding`: a set trailing bit and
    ///   `\r`/`\n` anywhere are accepted (such keys were skipped), padding and spaces refused;
    /// * `key_ops` is not read by go-jose: a value that is not an array is ignored (it used to
    ///   fail the key's decode); an array without `verify` still skips the key (fail closed, Go
    ///   uses it).
    #[test]
    fn jwk_members_decode_as_go_jose_decodes_them() {
        // RFC 7515 A.3's P-256 key.
        let (x, y) = (
            "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
        );
        let ec = |x: &str, y: &str| format!(r#""kty":"EC","crv":"P-256","x":"{x}","y":"{y}""#);
        let base = ec(x, y);
        let key_id = |members: &str| {
            let doc = format!(r#"{{"keys":[{{{members}}}]}}"#);
            let keys = parse_jwks(doc.as_bytes()).unwrap();
            assert!(keys.len() <= 1, "{members}");
            keys.first().map(|k| k.key_id().to_owned())
        };
        let expected = key_id(&base).unwrap();
        let with = |extra: &str| format!("{base},{extra}");
        // (case, JWK members, used)
        let cases = [
            (
                "x5u URL string",
                with(r#""x5u":"https://example.com/c.pem""#),
                false,
            ),
            ("x5u empty string", with(r#""x5u":"""#), false),
            ("x5u array", with(r#""x5u":[]"#), false),
            ("x5u number", with(r#""x5u":1"#), false),
            ("x5u boolean", with(r#""x5u":true"#), false),
            ("x5u Scheme a number", with(r#""x5u":{"Scheme":1}"#), false),
            ("x5u Path an array", with(r#""x5u":{"Path":["a"]}"#), false),
            (
                "x5u Fragment an object",
                with(r#""x5u":{"Fragment":{}}"#),
                false,
            ),
            ("x5u User a string", with(r#""x5u":{"User":"x"}"#), false),
            (
                "x5u OmitHost a string",
                with(r#""x5u":{"OmitHost":"t"}"#),
                false,
            ),
            (
                "x5u ForceQuery a number",
                with(r#""x5u":{"ForceQuery":1}"#),
                false,
            ),
            ("x5u null", with(r#""x5u":null"#), true),
            ("x5u empty object", with(r#""x5u":{}"#), true),
            (
                "x5u url.URL fields",
                with(
                    r#""x5u":{"Scheme":"https","Opaque":"o","Host":"h","Path":"/p","RawPath":"/p","RawQuery":"q","Fragment":"f","RawFragment":"f","ForceQuery":true,"OmitHost":false}"#,
                ),
                true,
            ),
            (
                "x5u null fields, any User object",
                with(r#""x5u":{"Path":null,"ForceQuery":null,"User":{"username":"a","x":[1]}}"#),
                true,
            ),
            (
                "x5u unknown and differently cased members",
                with(r#""x5u":{"scheme":1,"rawpath":[],"Foo":{"a":[1,{"b":2}]}}"#),
                true,
            ),
            (
                "y with a set trailing bit",
                ec(x, &format!("{}1", &y[..42])),
                true,
            ),
            (
                "x and y with line breaks",
                ec(
                    &format!("{}\\r\\n{}", &x[..20], &x[20..]),
                    &format!("\\n{y}\\n"),
                ),
                true,
            ),
            ("y padded", ec(x, &format!("{y}=")), false),
            (
                "x with a space",
                ec(&format!("{} {}", &x[..20], &x[20..]), y),
                false,
            ),
            ("key_ops verify string", with(r#""key_ops":"verify""#), true),
            ("key_ops sign string", with(r#""key_ops":"sign""#), true),
            ("key_ops number", with(r#""key_ops":1"#), true),
            ("key_ops object", with(r#""key_ops":{}"#), true),
            ("key_ops null", with(r#""key_ops":null"#), true),
            (
                "key_ops with verify and a number",
                with(r#""key_ops":["verify",1]"#),
                true,
            ),
            (
                "key_ops without verify",
                with(r#""key_ops":["sign"]"#),
                false,
            ),
            ("key_ops empty", with(r#""key_ops":[]"#), false),
            ("key_ops of numbers", with(r#""key_ops":[1]"#), false),
        ];
        let wrong: Vec<&str> = cases
            .iter()
            .filter(|(_, members, used)| key_id(members) != used.then(|| expected.clone()))
            .map(|(name, _, _)| *name)
            .collect();
        assert!(wrong.is_empty(), "outcomes unlike go-jose's: {wrong:?}");
    }

    /// The [`MAX_JWKS_KEYS`] cap counts usable keys only: 100 `use: "enc"` keys in front of
    /// the signing key used to fill it and hide that key. The number of elements examined is
    /// bounded by [`MAX_JWKS_ENTRIES`].
    #[test]
    fn jwks_cap_counts_usable_keys_only() {
        let sig =
            r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
        let enc = r#"{"kty":"OKP","crv":"Ed25519","use":"enc","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
        let n = |skipped: usize, usable: usize| {
            let mut keys = vec![enc; skipped];
            keys.extend(vec![sig; usable]);
            let doc = format!(r#"{{"keys":[{}]}}"#, keys.join(","));
            parse_jwks(doc.as_bytes()).unwrap().len()
        };
        assert_eq!(
            n(MAX_JWKS_KEYS, 1),
            1,
            "enc keys do not hide the signing key"
        );
        assert_eq!(n(MAX_JWKS_KEYS, MAX_JWKS_KEYS + 1), MAX_JWKS_KEYS);
        assert_eq!(n(MAX_JWKS_ENTRIES - 1, 1), 1, "the last element examined");
        assert_eq!(n(MAX_JWKS_ENTRIES, 1), 0, "beyond MAX_JWKS_ENTRIES");
    }

    /// go-jose reads `use` and `alg` as plain strings, so `""` is the same as absent (go-oidc
    /// then verifies with the key); they used to make the key skipped.
    #[test]
    fn empty_use_and_alg_are_absent() {
        let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
        let key = |extra: &str| {
            let jwk = format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}"{extra}}}"#);
            parse_jwk(jwk.as_bytes()).unwrap()
        };
        for extra in ["", r#","use":"""#, r#","alg":"""#, r#","use":"","alg":"""#] {
            let k = key(extra).unwrap_or_else(|| panic!("{extra}: skipped"));
            assert_eq!(k.key_type(), KeyType::Ed25519, "{extra}");
        }
        assert!(key(r#","use":"enc""#).is_none());
        let pinned = format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","alg":"RS256"}}"#);
        assert!(
            parse_jwk(pinned.as_bytes()).is_err(),
            "an alg of another key type"
        );
    }

    /// A JWK carrying private-key members is never a verification key: go-jose decodes one
    /// with `d` as a private key, and go-oidc's verifier cannot verify with that (Kubernetes:
    /// `failed to verify id token signature`). It used to be used as the public key it holds,
    /// so a token signed by it authenticated. RSA's other private members without `d`
    /// (`p`, `q`, `dp`, `dq`, `qi`, `oth`) are refused too; a `null` member is absent.
    #[test]
    fn jwks_with_private_key_members_are_not_used() {
        use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
        let m = rsa_members();
        let public = format!(r#""kty":"RSA","kid":"k1","n":"{}","e":"{}""#, m[0], m[1]);
        let jwks = |extra: &str| format!(r#"{{"keys":[{{{public}{extra}}}]}}"#);
        let private = format!(
            r#","d":"{}","p":"{}","q":"{}","dp":"{}","dq":"{}","qi":"{}""#,
            m[2], m[3], m[4], m[5], m[6], m[7]
        );
        // A token signed by the key (RS256 over a signing input).
        let pair =
            RsaKeyPair::from_pkcs8(include_bytes!("../../benches/keys/rsa2048.pk8")).unwrap();
        let input = b"eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.e30";
        let mut sig = vec![0; pair.public_modulus_len()];
        pair.sign(
            &RSA_PKCS1_SHA256,
            &aws_lc_rs::rand::SystemRandom::new(),
            input,
            &mut sig,
        )
        .unwrap();
        let verifies = |jwks: &str| {
            let set = KeySet::by_jwk_kid(parse_jwks(jwks.as_bytes()).unwrap());
            set.find(Some("k1"))
                .any(|k| k.verify(Algorithm::RS256, input, &sig).is_ok())
        };
        assert!(verifies(&jwks("")), "the public JWK verifies");
        assert!(verifies(&jwks(r#","d":null"#)), "a null d is no d");
        let mut cases = vec![("the whole private key".to_owned(), jwks(&private))];
        for (name, value) in ["d", "p", "q", "dp", "dq", "qi"].iter().zip(&m[2..]) {
            cases.push((
                format!("{name} alone"),
                jwks(&format!(r#","{name}":"{value}""#)),
            ));
        }
        cases.push((
            "oth".into(),
            jwks(r#","oth":[{"r":"AQ","d":"AQ","t":"AQ"}]"#),
        ));
        for (name, doc) in &cases {
            assert!(parse_jwks(doc.as_bytes()).unwrap().is_empty(), "{name}");
            assert!(!verifies(doc), "{name}");
        }
        // EC and OKP: `d` (its presence is what counts).
        let ec = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let point = ec.public_key().as_ref();
        let (x, y) = (
            URL_SAFE_NO_PAD.encode(&point[1..33]),
            URL_SAFE_NO_PAD.encode(&point[33..]),
        );
        let ec_jwk = format!(r#""kty":"EC","crv":"P-256","x":"{x}","y":"{y}""#);
        let okp =
            r#""kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo""#;
        for key in [ec_jwk.as_str(), okp] {
            let n = |extra: &str| {
                parse_jwks(format!(r#"{{"keys":[{{{key}{extra}}}]}}"#).as_bytes())
                    .unwrap()
                    .len()
            };
            assert_eq!(n(""), 1, "{key}");
            assert_eq!(n(&format!(r#","d":"{x}""#)), 0, "{key}");
            // Only RSA has the other private members.
            assert_eq!(n(r#","p":"AQ""#), 1, "{key}");
        }
    }

    fn ec_key() -> Arc<PublicKey> {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let spki = pair.public_key().as_der().unwrap();
        Arc::new(PublicKey::from_spki_der(spki.as_ref()).unwrap())
    }

    /// Go's `x509.ParsePKCS1PrivateKey` validates a private key and skips one that fails (so
    /// a file of only such keys holds no key); so do we.
    #[test]
    fn inconsistent_rsa_private_keys_are_no_keys() {
        let pk8: &[u8] = include_bytes!("../../benches/keys/rsa2048.pk8");
        let seq = der::exact(der::SEQUENCE, pk8).unwrap();
        let (_, rest) = der::expect(der::INTEGER, seq).unwrap();
        let (_, rest) = der::expect(der::SEQUENCE, rest).unwrap();
        let (pkcs1, _) = der::expect(der::OCTET_STRING, rest).unwrap();
        assert!(crate::jwt::key_file::parse_block(pkcs1).is_some());
        // Flip the last bit of the prime p (version, n, e, d, then p): same length, no longer
        // a factor of n.
        let body = der::exact(der::SEQUENCE, pkcs1).unwrap();
        let mut rest = body;
        for _ in 0..4 {
            rest = der::expect(der::INTEGER, rest).unwrap().1;
        }
        let (p, _) = der::expect(der::INTEGER, rest).unwrap();
        let at = p.as_ptr() as usize - pkcs1.as_ptr() as usize + p.len() - 1;
        let mut bad = pkcs1.to_vec();
        bad[at] ^= 1;
        assert!(crate::jwt::key_file::parse_block(&bad).is_none());
        let pem = |der: &[u8]| {
            use base64::Engine;
            let b64 = base64::engine::general_purpose::STANDARD.encode(der);
            format!("-----BEGIN RSA PRIVATE KEY-----\n{b64}\n-----END RSA PRIVATE KEY-----\n")
        };
        assert_eq!(parse_pem_keys(pem(pkcs1).as_bytes()).unwrap().len(), 1);
        assert!(parse_pem_keys(pem(&bad).as_bytes()).is_err());
    }

    /// Key files are read as Go's `pem.Decode` loop reads them (`keyutil.ParsePublicKeysPEM`).
    #[test]
    fn pem_key_files_follow_go_pem_decode() {
        const KEY: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n";
        let body = KEY.lines().nth(1).unwrap();
        let cases: Vec<(&str, String, Result<usize, &str>)> = vec![
            ("one key", KEY.into(), Ok(1)),
            (
                "a block closed by another label does not hide the next",
                format!("-----BEGIN PUBLIC KEY-----\n{body}\n-----END RSA PUBLIC KEY-----\n{KEY}"),
                Ok(1),
            ),
            (
                "a body that is not base64 is skipped",
                format!("-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n{KEY}"),
                Ok(1),
            ),
            (
                "RFC 1421 headers are left out of the body",
                KEY.replacen("-----\n", "-----\nComment: rotated 2026\n\n", 1),
                Ok(1),
            ),
            (
                "an encrypted key is not a key",
                "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n".into(),
                Err("data does not contain any valid RSA or ECDSA public keys"),
            ),
            (
                "larger than MAX_PEM_LEN is an error, not a silent cut",
                format!("{KEY}{}", " ".repeat(MAX_PEM_LEN)),
                Err("key data is larger than 4194304 bytes"),
            ),
        ];
        for (name, input, want) in cases {
            let got = parse_pem_keys(input.as_bytes())
                .map(|k| k.len())
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{name}");
        }
    }

    fn ec_key_with_kid(kid: String) -> Arc<PublicKey> {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let spki = pair.public_key().as_der().unwrap();
        Arc::new(PublicKey::build(spki.as_ref(), Some(kid.into()), None).unwrap())
    }

    fn key_id_of(k: &PublicKey) -> Option<&str> {
        Some(k.key_id())
    }

    /// `find` gives the same keys in the same order whether the set is scanned (at most
    /// [`KeySet::LINEAR_MAX`] keys) or indexed, for both constructors. Sets of 33 keys and more
    /// (a service-account key file or a JWKS may hold up to [`MAX_JWKS_KEYS`]) used to panic
    /// with `attempt to shift left with overflow` in builds with overflow checks: the scan's
    /// `u32` bit mask was tested for every key position, whatever the set's size.
    #[test]
    fn find_scans_small_sets_and_indexes_large_ones_alike() {
        type Id = fn(&PublicKey) -> Option<&str>;
        let ptrs = |it: &mut dyn Iterator<Item = &Arc<PublicKey>>| -> Vec<*const PublicKey> {
            it.map(Arc::as_ptr).collect()
        };
        // Sizes on both sides of LINEAR_MAX and of 32; the first key appears twice (same id),
        // first and last, so order and duplicates are checked in both modes.
        for distinct in [
            1,
            3,
            KeySet::LINEAR_MAX - 1,
            KeySet::LINEAR_MAX,
            20,
            33,
            40,
            MAX_JWKS_KEYS,
        ] {
            let mut keys: Vec<Arc<PublicKey>> = (0..distinct)
                .map(|i| ec_key_with_kid(format!("kid-{i}")))
                .collect();
            keys.push(keys[0].clone());
            let all: Vec<*const PublicKey> = keys.iter().map(Arc::as_ptr).collect();
            let constructors: [(&str, KeySet, Id); 2] = [
                ("by_key_id", KeySet::by_key_id(keys.clone()), key_id_of),
                (
                    "by_jwk_kid",
                    KeySet::by_jwk_kid(keys.clone()),
                    PublicKey::jwk_kid,
                ),
            ];
            for (name, set, id) in &constructors {
                let ids: Vec<&str> = keys.iter().filter_map(|k| id(k)).collect();
                assert_eq!(ids.len(), keys.len(), "{name}");
                for want in ids.iter().copied().chain(["absent", ""]) {
                    let expect: Vec<*const PublicKey> = keys
                        .iter()
                        .filter(|k| id(k) == Some(want))
                        .map(Arc::as_ptr)
                        .collect();
                    let got = ptrs(&mut set.find(Some(want)));
                    assert_eq!(got, expect, "{name}, {} keys, kid {want:?}", keys.len());
                }
                // A key at a position past 32 (the last distinct one when there are fewer
                // than 36) is found alone.
                if distinct > 32 {
                    let at = distinct.min(36) - 1;
                    let kid = id(&keys[at]).unwrap();
                    let got = ptrs(&mut set.find(Some(kid)));
                    assert_eq!(got, vec![all[at]], "{name}, {} keys, key {at}", keys.len());
                }
                assert_eq!(
                    ptrs(&mut set.find(None)),
                    all,
                    "{name}, {} keys",
                    keys.len()
                );
                let none = set.find(Some("unknown-kid")).count();
                assert_eq!(none, 0, "{name}, {} keys", keys.len());
            }
            // A JWK set where no key has a kid: only a token without kid finds them.
            let mut anonymous: Vec<Arc<PublicKey>> = (0..distinct).map(|_| ec_key()).collect();
            anonymous.push(anonymous[0].clone());
            let set = KeySet::by_jwk_kid(anonymous.clone());
            assert_eq!(set.find(Some("x")).count(), 0, "{} keys", anonymous.len());
            assert_eq!(set.find(None).count(), anonymous.len());
        }
    }

    /// Go's `crypto/rsa` refuses to verify with a public exponent above 2^31 - 1 (`crypto/rsa:
    /// public exponent too large`), so go-oidc can never verify a token with such a JWK: it
    /// is skipped like any unusable key (`RSA public exponent too large`). Exponents of 32 and
    /// 33 bits used to be kept. 2^31 - 1 verifies in Go (checked with go-jose.v2 and Go
    /// 1.26) and is kept; leading zero bytes do not count.
    #[test]
    fn jwk_rsa_exponents_go_cannot_verify_with_are_skipped() {
        let n = &rsa_members()[0];
        let cases: &[(&str, &str, Result<(), &str>)] = &[
            ("65537", "AQAB", Ok(())),
            ("3", "Aw", Ok(())),
            ("2^31-1", "f____w", Ok(())),
            ("2^31-1 after two zero bytes", "AAB_____", Ok(())),
            ("2^31+1", "gAAAAQ", Err("RSA public exponent too large")),
            ("2^32+1", "AQAAAAE", Err("RSA public exponent too large")),
            ("2^33-1", "Af____8", Err("RSA public exponent too large")),
            (
                "2^64+65537",
                "AQAAAAAAAQAB",
                Err("RSA public exponent too large"),
            ),
        ];
        for (name, e, want) in cases {
            let jwk = format!(r#"{{"kty":"RSA","kid":"k","n":"{n}","e":"{e}"}}"#);
            let got = parse_jwk(jwk.as_bytes())
                .map(|k| assert!(k.is_some(), "{name}: skipped without an error"))
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{name}");
            let jwks = format!(r#"{{"keys":[{jwk}]}}"#);
            let kept = parse_jwks(jwks.as_bytes()).unwrap().len();
            assert_eq!(kept, usize::from(want.is_ok()), "{name} in a JWKS");
        }
    }
}
