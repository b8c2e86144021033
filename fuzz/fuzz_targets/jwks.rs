//! JWK / JWK Set parsing: must never panic; every key returned must verify nothing it
//! was not built for.
#![no_main]
use kube_authn::jwt::alg::Algorithm;
use kube_authn::jwt::key::{parse_jwk, parse_jwks, MAX_JWKS_KEYS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(keys) = parse_jwks(data) {
        assert!(keys.len() <= MAX_JWKS_KEYS);
        for k in keys {
            for alg in Algorithm::ALL {
                let _ = k.verify(alg, b"m", &[0u8; 64]);
            }
        }
    }
    let _ = parse_jwk(data);
});
