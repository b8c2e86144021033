//! JWK / JWK Set parsing: must never panic; every key returned must verify nothing it
//! was not built for.
#![no_main]
use kube_authn::jwt::alg::Algorithm;
use kube_authn::jwt::key::{parse_jwk, parse_jwks, KeyType, MAX_JWKS_KEYS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(keys) = parse_jwks(data) {
        assert!(keys.len() <= MAX_JWKS_KEYS);
        for k in keys {
            for alg in Algorithm::ALL {
                let verified = k.verify(alg, b"m", &[0u8; 64]);
                // An all-zero signature is never valid for RSA (s = 0) or ECDSA (r = s = 0, the
                // "psychic signature" class); Ed25519 is left out (a small-order key can accept it).
                if !matches!(k.key_type(), KeyType::Ed25519) {
                    assert!(verified.is_err(), "an all-zero signature verified ({alg:?})");
                }
            }
        }
    }
    let _ = parse_jwk(data);
});
