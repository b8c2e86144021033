//! Compact JWS parser + header + signature check against a fixed P-256 key, and the whole
//! service-account authenticator behind the issuer router. Properties: no panic; nothing is
//! ever verified or authenticated (the harness holds no private key for its public key, so an
//! accepted signature or an authenticated user would be a forgery: `alg` confusion, a key
//! from the token, a skipped check); the answer is always synchronous.
#![no_main]
use std::sync::{Arc, OnceLock};

use kube_authn::authenticator::{Context, TokenAuthenticator};
use kube_authn::jwt::alg::AlgorithmSet;
use kube_authn::jwt::compact::UntrustedJwt;
use kube_authn::jwt::key::{parse_pem_keys, KeySet};
use kube_authn::jwt::router::IssuerRouter;
use kube_authn::token::service_account::ServiceAccountAuthenticator;
use libfuzzer_sys::fuzz_target;

const PEM: &[u8] = b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n";

fn state() -> &'static (KeySet, IssuerRouter) {
    static S: OnceLock<(KeySet, IssuerRouter)> = OnceLock::new();
    S.get_or_init(|| {
        let keys = parse_pem_keys(PEM).unwrap();
        let mut router = IssuerRouter::new();
        let sa = ServiceAccountAuthenticator::bound(vec!["i".into()], keys.clone(), ["api"].into(), None);
        router.add("i", Arc::new(sa));
        router.add("kubernetes/serviceaccount", Arc::new(ServiceAccountAuthenticator::legacy(keys.clone(), ["api"].into(), None)));
        (KeySet::by_key_id(keys), router)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let (keys, router) = state();
    if let Ok(jwt) = UntrustedJwt::parse(s) {
        let _ = jwt.issuer();
        // A parsed JWT either has claims or says why not (a repeated member name).
        assert!(jwt.claims().is_some() != jwt.claims_error().is_some());
        if let Ok(h) = jwt.header() {
            let verified = kube_authn::jwt::verify_signature(&jwt, h, keys.find(h.kid()), AlgorithmSet::KUBERNETES);
            assert!(verified.is_err(), "a signature verified without the private key");
        }
    }
    let _ = UntrustedJwt::parse_jws(s);
    let ctx = Context::default();
    let answer = router.authenticate_token(s, &ctx).into_ready();
    let Ok(result) = answer else {
        panic!("no lookup configured: must answer synchronously");
    };
    assert!(!matches!(result, Ok(Some(_))), "a token authenticated without the private key");
});
