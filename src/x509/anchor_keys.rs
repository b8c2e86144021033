//! Trust-anchor public keys parsed once per CA bundle instead of once per signature check.
//!
//! rustls-webpki hands every signature check the issuer's raw key bytes, and its aws-lc-rs
//! algorithms parse them on every call (`UnparsedPublicKey::verify`): for an RSA-2048 root that
//! is a modulus parse plus aws-lc's Montgomery setup (`BN_MONT_CTX_new_for_modulus`, a 2048-bit
//! division), about 28 000 instructions, paid again by every new connection. The roots of a
//! bundle never change, so [`CachingAlg`] wraps each webpki algorithm: when webpki checks a
//! signature against the key of one of *this bundle's* trust anchors (recognised by identity:
//! the bytes webpki passes are the anchor's own storage), it verifies with an aws-lc-rs
//! [`ParsedPublicKey`] built once for that (anchor, algorithm) pair; any other key (presented
//! intermediates) goes to the webpki algorithm unchanged.
//!
//! Nothing webpki checks is skipped: it still selects the algorithm by the certificate's
//! signature algorithm identifier and refuses a key whose algorithm identifier does not match
//! before calling us, and every name, validity, EKU, basic-constraints, path-length and
//! critical-extension check is webpki's own. The cached key verifies with the very aws-lc-rs
//! algorithm webpki's would (same digest, padding, RSA 2048–8192 bit bound, checked on every
//! verification), and the EC point-encoding check webpki's aws-lc-rs wrapper makes is made
//! here too. A key that fails to parse is not cached and goes to webpki (which then fails).
//!
//! Memory: at most one parsed key per anchor and algorithm (an RSA anchor can only ever meet
//! the 9 RSA algorithms, an ECDSA anchor the 2–3 of its curve), created on first use.

use std::sync::OnceLock;

use aws_lc_rs::signature::{self, ParsedPublicKey, VerificationAlgorithm};
use rustls_pki_types::{
    AlgorithmIdentifier, FipsStatus, InvalidSignature, SignatureVerificationAlgorithm, TrustAnchor,
    alg_id,
};

use super::der;

/// How many signature algorithms chains may use ([`ALGS`]).
pub(crate) const N_ALGS: usize = 17;

/// Signature algorithms accepted in chains: webpki's aws-lc-rs set (RSA 2048–8192 PKCS#1 and
/// PSS with SHA-256/384/512, ECDSA P-256/P-384/P-521, Ed25519). No SHA-1, no RSA below 2048
/// bits, no RSA above 8192 bits.
pub(crate) static ALGS: [&dyn SignatureVerificationAlgorithm; N_ALGS] = [
    webpki::aws_lc_rs::ECDSA_P256_SHA256,
    webpki::aws_lc_rs::ECDSA_P256_SHA384,
    webpki::aws_lc_rs::ECDSA_P384_SHA256,
    webpki::aws_lc_rs::ECDSA_P384_SHA384,
    webpki::aws_lc_rs::ECDSA_P521_SHA256,
    webpki::aws_lc_rs::ECDSA_P521_SHA384,
    webpki::aws_lc_rs::ECDSA_P521_SHA512,
    webpki::aws_lc_rs::ED25519,
    webpki::aws_lc_rs::RSA_PKCS1_2048_8192_SHA256,
    webpki::aws_lc_rs::RSA_PKCS1_2048_8192_SHA384,
    webpki::aws_lc_rs::RSA_PKCS1_2048_8192_SHA512,
    webpki::aws_lc_rs::RSA_PKCS1_2048_8192_SHA256_ABSENT_PARAMS,
    webpki::aws_lc_rs::RSA_PKCS1_2048_8192_SHA384_ABSENT_PARAMS,
    webpki::aws_lc_rs::RSA_PKCS1_2048_8192_SHA512_ABSENT_PARAMS,
    webpki::aws_lc_rs::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
    webpki::aws_lc_rs::RSA_PSS_2048_8192_SHA384_LEGACY_KEY,
    webpki::aws_lc_rs::RSA_PSS_2048_8192_SHA512_LEGACY_KEY,
];

/// The aws-lc-rs algorithm each entry of [`ALGS`] verifies with (webpki's `aws_lc_rs_algs`
/// table; the unit test below checks every pair against real signatures).
static AWS_ALGS: [&dyn VerificationAlgorithm; N_ALGS] = [
    &signature::ECDSA_P256_SHA256_ASN1,
    &signature::ECDSA_P256_SHA384_ASN1,
    &signature::ECDSA_P384_SHA256_ASN1,
    &signature::ECDSA_P384_SHA384_ASN1,
    &signature::ECDSA_P521_SHA256_ASN1,
    &signature::ECDSA_P521_SHA384_ASN1,
    &signature::ECDSA_P521_SHA512_ASN1,
    &signature::ED25519,
    &signature::RSA_PKCS1_2048_8192_SHA256,
    &signature::RSA_PKCS1_2048_8192_SHA384,
    &signature::RSA_PKCS1_2048_8192_SHA512,
    &signature::RSA_PKCS1_2048_8192_SHA256,
    &signature::RSA_PKCS1_2048_8192_SHA384,
    &signature::RSA_PKCS1_2048_8192_SHA512,
    &signature::RSA_PSS_2048_8192_SHA256,
    &signature::RSA_PSS_2048_8192_SHA384,
    &signature::RSA_PSS_2048_8192_SHA512,
];

/// The per-bundle cache of parsed anchor keys.
pub(crate) struct AnchorKeys {
    /// `(address, anchor index)` of each anchor's subjectPublicKey bytes (the slice
    /// webpki passes to `verify_signature`), sorted by address.
    index: Vec<(usize, usize)>,
    /// Per anchor, a copy of those bytes: a lookup that matches by address also compares the
    /// bytes, so the cache stays right even if a later change let an anchor's storage be
    /// freed and reused while a verification runs (today the bundle is immutable and borrowed
    /// for the whole verification). A few hundred bytes compared per first request.
    copies: Vec<Box<[u8]>>,
    /// Per anchor, per algorithm: the key, parsed on first use (`None`: rejected by aws-lc-rs).
    parsed: Vec<[OnceLock<Option<ParsedPublicKey>>; N_ALGS]>,
}

impl AnchorKeys {
    pub(crate) fn new(anchors: &[TrustAnchor<'static>]) -> Self {
        let mut index = Vec::with_capacity(anchors.len());
        let mut copies = Vec::with_capacity(anchors.len());
        for (i, anchor) in anchors.iter().enumerate() {
            let key = spki_key(anchor.subject_public_key_info.as_ref()).unwrap_or_default();
            if !key.is_empty() {
                index.push((key.as_ptr() as usize, i));
            }
            copies.push(Box::from(key));
        }
        index.sort_unstable();
        Self {
            index,
            copies,
            parsed: anchors
                .iter()
                .map(|_| std::array::from_fn(|_| OnceLock::new()))
                .collect(),
        }
    }

    /// The webpki algorithms for a verification against this bundle.
    pub(crate) fn algorithms(&self) -> [CachingAlg<'_>; N_ALGS] {
        std::array::from_fn(|alg| CachingAlg { alg, keys: self })
    }

    /// The parsed key of the anchor whose key storage `key` is, for algorithm `alg`.
    fn lookup(&self, alg: usize, key: &[u8]) -> Option<&ParsedPublicKey> {
        let addr = key.as_ptr() as usize;
        let pos = self.index.binary_search_by(|&(a, _)| a.cmp(&addr)).ok()?;
        let (_, anchor) = self.index[pos];
        if *self.copies[anchor] != *key {
            return None;
        }
        self.parsed[anchor][alg]
            .get_or_init(|| ParsedPublicKey::new(AWS_ALGS[alg], key).ok())
            .as_ref()
    }
}

/// The subjectPublicKey bytes (BIT STRING content after its unused-bits octet) inside the
/// content of a SubjectPublicKeyInfo, as webpki extracts them.
fn spki_key(spki: &[u8]) -> Option<&[u8]> {
    let mut items = der::items(spki);
    let _alg = items.next()??;
    let bits = items.next()??;
    if bits.tag != 0x03 || bits.content.first() != Some(&0) || items.next().is_some() {
        return None;
    }
    Some(&bits.content[1..])
}

/// One of [`ALGS`], verifying against a bundle's anchors with their pre-parsed keys.
#[derive(Clone, Copy)]
pub(crate) struct CachingAlg<'a> {
    alg: usize,
    keys: &'a AnchorKeys,
}

impl std::fmt::Debug for CachingAlg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CachingAlg").field(&ALGS[self.alg]).finish()
    }
}

impl SignatureVerificationAlgorithm for CachingAlg<'_> {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        let inner = ALGS[self.alg];
        let public_key_alg = inner.public_key_alg_id();
        // webpki's aws-lc-rs wrapper refuses EC keys in any encoding but these three; leave
        // every other case to it.
        let ec_ok = !matches!(
            public_key_alg,
            alg_id::ECDSA_P256 | alg_id::ECDSA_P384 | alg_id::ECDSA_P521
        ) || matches!(public_key.first(), Some(0x02..=0x04));
        if ec_ok && let Some(parsed) = self.keys.lookup(self.alg, public_key) {
            return parsed
                .verify_sig(message, signature)
                .map_err(|_| InvalidSignature);
        }
        inner.verify_signature(public_key, message, signature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        ALGS[self.alg].public_key_alg_id()
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        ALGS[self.alg].signature_alg_id()
    }

    fn fips_status(&self) -> FipsStatus {
        ALGS[self.alg].fips_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};

    /// Every algorithm, through the cache, accepts exactly the signatures webpki's own
    /// algorithm accepts: signatures of every scheme and key type, valid and tampered, against
    /// every algorithm (so a wrong digest or padding in [`AWS_ALGS`] would show).
    #[test]
    fn cached_keys_verify_exactly_like_webpki() {
        let rng = SystemRandom::new();
        let msg = b"tbsCertificate bytes";
        let rsa = RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
        let mut sigs: Vec<(&str, Vec<u8>, Vec<u8>)> = Vec::new();
        for (name, pad) in [
            ("rsa pkcs1 sha256", &signature::RSA_PKCS1_SHA256),
            ("rsa pkcs1 sha384", &signature::RSA_PKCS1_SHA384),
            ("rsa pkcs1 sha512", &signature::RSA_PKCS1_SHA512),
            ("rsa pss sha256", &signature::RSA_PSS_SHA256),
            ("rsa pss sha384", &signature::RSA_PSS_SHA384),
            ("rsa pss sha512", &signature::RSA_PSS_SHA512),
        ] as [(&str, &'static dyn signature::RsaEncoding); 6]
        {
            let mut sig = vec![0; rsa.public_modulus_len()];
            rsa.sign(pad, &rng, msg, &mut sig).unwrap();
            sigs.push((name, rsa.public_key().as_ref().to_vec(), sig));
        }
        for (name, alg) in [
            ("p256 sha256", &signature::ECDSA_P256_SHA256_ASN1_SIGNING),
            ("p384 sha384", &signature::ECDSA_P384_SHA384_ASN1_SIGNING),
            ("p521 sha256", &signature::ECDSA_P521_SHA256_ASN1_SIGNING),
            ("p521 sha384", &signature::ECDSA_P521_SHA384_ASN1_SIGNING),
            ("p521 sha512", &signature::ECDSA_P521_SHA512_ASN1_SIGNING),
        ] {
            let kp = EcdsaKeyPair::generate(alg).unwrap();
            let sig = kp.sign(&rng, msg).unwrap();
            sigs.push((
                name,
                kp.public_key().as_ref().to_vec(),
                sig.as_ref().to_vec(),
            ));
        }
        let ed = Ed25519KeyPair::generate().unwrap();
        sigs.push((
            "ed25519",
            ed.public_key().as_ref().to_vec(),
            ed.sign(msg).as_ref().to_vec(),
        ));

        let mut accepted = 0;
        for (name, key, sig) in &sigs {
            // The key must live where the cache looks: an "anchor" owning exactly these bytes.
            let keys = AnchorKeys {
                index: vec![(key.as_ptr() as usize, 0)],
                copies: vec![Box::from(&key[..])],
                parsed: vec![std::array::from_fn(|_| OnceLock::new())],
            };
            let mut bad = sig.clone();
            *bad.last_mut().unwrap() ^= 1;
            for (i, cached) in keys.algorithms().iter().enumerate() {
                for (what, s) in [("valid", sig), ("tampered", &bad)] {
                    let want = ALGS[i].verify_signature(key, msg, s).is_ok();
                    let got = cached.verify_signature(key, msg, s).is_ok();
                    assert_eq!(got, want, "{name} {what} with {:?}", ALGS[i]);
                    accepted += usize::from(got);
                    // And the key was served from the cache when aws-lc-rs accepts it.
                    if want {
                        assert!(keys.lookup(i, key).is_some(), "{name} not cached");
                    }
                }
            }
        }
        // Every scheme verifies under its algorithm(s): RSA PKCS#1 twice (with and without
        // NULL parameters), everything else once. (aws-lc-rs cannot sign P-256/SHA-384 or
        // P-384/SHA-256; those two algorithms are checked by the rejections only.)
        assert_eq!(accepted, 3 * 2 + 3 + 5 + 1);
    }

    #[test]
    fn keys_outside_the_bundle_and_bad_ec_encodings_go_to_webpki() {
        let kp = EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_ASN1_SIGNING).unwrap();
        let key = kp.public_key().as_ref().to_vec();
        let sig = kp.sign(&SystemRandom::new(), b"m").unwrap();
        let keys = AnchorKeys {
            index: vec![(key.as_ptr() as usize, 0)],
            copies: vec![Box::from(&key[..])],
            parsed: vec![std::array::from_fn(|_| OnceLock::new())],
        };
        // Equal bytes elsewhere: not an anchor's storage, not cached, still verified.
        let copy = key.clone();
        assert!(keys.lookup(0, &copy).is_none());
        assert!(
            keys.algorithms()[0]
                .verify_signature(&copy, b"m", sig.as_ref())
                .is_ok()
        );
        // A sub-slice of the anchor key is not the anchor key.
        assert!(keys.lookup(0, &key[..key.len() - 1]).is_none());
        // Other bytes at the anchor's address (storage reused) are not the anchor key either.
        let mut reused = key.clone();
        let stale = AnchorKeys {
            index: vec![(reused.as_ptr() as usize, 0)],
            copies: vec![Box::from(&key[..])],
            parsed: vec![std::array::from_fn(|_| OnceLock::new())],
        };
        assert!(stale.lookup(0, &reused).is_some());
        reused[1] ^= 1;
        assert!(stale.lookup(0, &reused).is_none());
        // An anchor EC key in an encoding webpki refuses (first octet not 02/03/04) is refused
        // without touching the cache.
        let mut odd = key.clone();
        odd[0] = 0x05;
        let odd_keys = AnchorKeys {
            index: vec![(odd.as_ptr() as usize, 0)],
            copies: vec![Box::from(&odd[..])],
            parsed: vec![std::array::from_fn(|_| OnceLock::new())],
        };
        assert!(
            odd_keys.algorithms()[0]
                .verify_signature(&odd, b"m", sig.as_ref())
                .is_err()
        );
        assert!(odd_keys.parsed[0][0].get().is_none());
        assert!(spki_key(b"").is_none());
    }

    /// A real bundle: webpki hands the anchor's own key bytes to the algorithm (the layout
    /// `spki_key` assumes), so the first verification parses the key once and keeps it.
    #[test]
    fn chain_verification_parses_the_anchor_key_once() {
        use crate::x509::{CaBundle, KeyUsage, doc_ca_pem, doc_client_pem, parse_pem_bundle};
        let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
        let chain = parse_pem_bundle(doc_client_pem().as_bytes()).unwrap();
        let cached = |b: &CaBundle| {
            b.keys.parsed[0]
                .iter()
                .filter(|slot| matches!(slot.get(), Some(Some(_))))
                .count()
        };
        assert_eq!(cached(&bundle), 0);
        let now = crate::x509::Moment::now(&None);
        for _ in 0..2 {
            crate::x509::verify::verify_chain(&bundle, &chain, now, KeyUsage::ClientAuth).unwrap();
            assert_eq!(cached(&bundle), 1);
        }
    }
}
