//! Unit-level properties of the JWT core, and a differential test against `jsonwebtoken`
//! (the dev-dependency oracle): on signature acceptance the two must agree.

use std::sync::Arc;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self as sig, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kube_authn::jwt::alg::AlgorithmSet;
use kube_authn::jwt::compact::{NotJwt, UntrustedJwt};
use kube_authn::jwt::json::{check_no_duplicates, scan_object};
use kube_authn::jwt::key::{KeySet, PublicKey};
use kube_authn::jwt::verify_signature;
use proptest::prelude::*;

#[test]
fn duplicates_beyond_the_inline_set_are_found() {
    let mut members: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
    let unique = format!("{{{}}}", members.join(","));
    assert!(check_no_duplicates(unique.as_bytes()).is_ok());
    members.push(r#""k3":0"#.into());
    let dup = format!("{{{}}}", members.join(","));
    assert!(check_no_duplicates(dup.as_bytes()).is_err());
    assert!(scan_object(dup.as_bytes()).is_err());
    // Escaped and unescaped spellings of one name are the same name.
    assert!(check_no_duplicates(br#"{"iss":1,"\u0069ss":2}"#).is_err());
}

#[test]
fn deep_nesting_is_bounded() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(check_no_duplicates(deep.as_bytes()).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// Arbitrary strings never panic the parser, and anything accepted has 3 segments.
    #[test]
    fn parse_never_panics(s in "[A-Za-z0-9_.={}\"-]{0,200}") {
        if let Ok(j) = UntrustedJwt::parse(&s) {
            prop_assert_eq!(s.matches('.').count(), 2);
            let _ = j.header();
        }
    }
}

type SignFn = Box<dyn Fn(&[u8]) -> Vec<u8>>;

struct Signer {
    alg: &'static str,
    jalg: jsonwebtoken::Algorithm,
    key: Arc<PublicKey>,
    dk: jsonwebtoken::DecodingKey,
    sign: SignFn,
}

fn signers() -> Vec<Signer> {
    let rsa = Arc::new(sig::RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap());
    let rsa_spki = rsa.public_key().as_der().unwrap().as_ref().to_vec();
    let (n, e) = {
        let pk = rsa.public_key();
        let comps: aws_lc_rs::rsa::PublicKeyComponents<Vec<u8>> = pk.into();
        (comps.n, comps.e)
    };
    let ec = Arc::new(sig::EcdsaKeyPair::generate(&sig::ECDSA_P256_SHA256_FIXED_SIGNING).unwrap());
    let ec_spki = ec.public_key().as_der().unwrap().as_ref().to_vec();
    let point = ec.public_key().as_ref().to_vec();
    let mk_rsa = |alg: &'static str, jalg, pad: &'static dyn sig::RsaEncoding| {
        let rsa = rsa.clone();
        Signer {
            alg,
            jalg,
            key: Arc::new(PublicKey::from_spki_der(&rsa_spki).unwrap()),
            dk: jsonwebtoken::DecodingKey::from_rsa_raw_components(&n, &e),
            sign: Box::new(move |m| {
                let mut s = vec![0; rsa.public_modulus_len()];
                rsa.sign(pad, &SystemRandom::new(), m, &mut s).unwrap();
                s
            }),
        }
    };
    vec![
        mk_rsa(
            "RS256",
            jsonwebtoken::Algorithm::RS256,
            &sig::RSA_PKCS1_SHA256,
        ),
        mk_rsa(
            "PS256",
            jsonwebtoken::Algorithm::PS256,
            &sig::RSA_PSS_SHA256,
        ),
        mk_rsa(
            "RS512",
            jsonwebtoken::Algorithm::RS512,
            &sig::RSA_PKCS1_SHA512,
        ),
        Signer {
            alg: "ES256",
            jalg: jsonwebtoken::Algorithm::ES256,
            key: Arc::new(PublicKey::from_spki_der(&ec_spki).unwrap()),
            dk: jsonwebtoken::DecodingKey::from_ec_components(
                &URL_SAFE_NO_PAD.encode(&point[1..33]),
                &URL_SAFE_NO_PAD.encode(&point[33..]),
            )
            .unwrap(),
            sign: Box::new(move |m| ec.sign(&SystemRandom::new(), m).unwrap().as_ref().to_vec()),
        },
    ]
}

#[test]
fn differential_against_jsonwebtoken() {
    let mut agree = 0;
    for s in signers() {
        let keys = KeySet::by_key_id(vec![s.key.clone()]);
        let header = URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"{}"}}"#, s.alg));
        let payload = URL_SAFE_NO_PAD.encode(r#"{"iss":"i","sub":"s","exp":4102444800}"#);
        let input = format!("{header}.{payload}");
        let good = (s.sign)(input.as_bytes());
        let mut v = jsonwebtoken::Validation::new(s.jalg);
        v.validate_aud = false;
        let mut rng_state = 0x2545F4914F6CDD1Du64;
        for i in 0..200 {
            let mut sig_bytes = good.clone();
            if i > 0 {
                rng_state ^= rng_state << 13;
                rng_state ^= rng_state >> 7;
                rng_state ^= rng_state << 17;
                let idx = (rng_state as usize) % sig_bytes.len();
                match i % 4 {
                    0 => sig_bytes[idx] ^= 1 << (rng_state % 8),
                    1 => sig_bytes.truncate(idx),
                    2 => sig_bytes.push((rng_state >> 8) as u8),
                    _ => sig_bytes.iter_mut().for_each(|b| *b = 0),
                }
            }
            let token = format!("{input}.{}", URL_SAFE_NO_PAD.encode(&sig_bytes));
            let ours = UntrustedJwt::parse(&token)
                .ok()
                .and_then(|j| {
                    let h = j.header().ok()?.clone();
                    verify_signature(&j, &h, keys.find(None), AlgorithmSet::KUBERNETES)
                        .ok()
                        .map(|_| ())
                })
                .is_some();
            let theirs = jsonwebtoken::decode::<serde_json::Value>(&token, &s.dk, &v).is_ok();
            assert_eq!(ours, theirs, "{} mutation {i}", s.alg);
            assert_eq!(ours, i == 0 || sig_bytes == good, "{} mutation {i}", s.alg);
            agree += 1;
        }
    }
    assert_eq!(agree, 800);
    assert_eq!(
        UntrustedJwt::parse("a.b").unwrap_err(),
        NotJwt::SegmentCount
    );
}
