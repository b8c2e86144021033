//! Service-account per-token pipeline past the signature: the fuzz input (after a selector
//! byte) is the tail of a claims object whose head routes it to the bound (`{"iss":"https://i",
//! "aud":["api"],"exp":…,` + input) or the legacy (`{"iss":"kubernetes/serviceaccount",` +
//! input) authenticator, signed with a real ES256 key whose `kid` is Kubernetes' key id, so the
//! public claims, the hand-written `kubernetes.io` reader, the legacy claim checks and the
//! bound-token time checks all see attacker-shaped JSON.
//!
//! Properties: no panic; every outcome is ready at once (no lookup is configured); an
//! authenticated user is always `system:serviceaccount:<ns>:<name>` with both non-empty, in
//! the groups `system:serviceaccounts` and `system:serviceaccounts:<ns>`; error texts stay
//! bounded by the input.
#![no_main]
use std::sync::{Arc, OnceLock};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use kube_authn::authenticator::{Context, TokenAuthenticator};
use kube_authn::jwt::key::parse_jwk;
use kube_authn::jwt::router::IssuerRouter;
use kube_authn::jwt::FixedClock;
use kube_authn::token::service_account::ServiceAccountAuthenticator;
use libfuzzer_sys::fuzz_target;

struct Setup {
    key: EcdsaKeyPair,
    kid: String,
    router: IssuerRouter,
}

fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = key.public_key().as_ref();
        let jwk = serde_json::json!({"kty": "EC", "crv": "P-256",
            "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])});
        let public = Arc::new(parse_jwk(jwk.to_string().as_bytes()).unwrap().unwrap());
        let kid = public.key_id().to_owned();
        let clock = Arc::new(FixedClock::new(1_700_000_000));
        let mut router = IssuerRouter::new();
        let bound = ServiceAccountAuthenticator::bound(vec!["https://i".into()], vec![public.clone()], ["api"].into(), None)
            .with_clock(clock.clone());
        router.add("https://i", Arc::new(bound));
        let legacy = ServiceAccountAuthenticator::legacy(vec![public], ["api"].into(), None).with_clock(clock);
        router.add("kubernetes/serviceaccount", Arc::new(legacy));
        Setup { key, kid, router }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, tail)) = data.split_first() else { return };
    let s = setup();
    let mut payload = if selector & 1 == 0 {
        br#"{"iss":"https://i","aud":["api"],"exp":4000000000,"#.to_vec()
    } else {
        br#"{"iss":"kubernetes/serviceaccount","#.to_vec()
    };
    payload.extend_from_slice(tail);
    let header = format!(r#"{{"alg":"ES256","kid":"{}"}}"#, s.kid);
    let input = format!("{}.{}", B64.encode(header), B64.encode(&payload));
    let sig = s.key.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
    let token = format!("{input}.{}", B64.encode(sig.as_ref()));
    let Ok(result) = s.router.authenticate_token(&token, &Context::default()).into_ready() else {
        panic!("no lookup configured: must answer synchronously");
    };
    match result {
        Ok(Some(r)) => {
            // Kubernetes' MakeUsername: a `:` inside the name is allowed (only non-empty is
            // checked), so the namespace comes from the namespace group, not from splitting.
            let name = r.user.name();
            let groups: Vec<&str> = r.user.groups().collect();
            assert!(groups.contains(&"system:serviceaccounts"), "{groups:?}");
            let ns = groups
                .iter()
                .find_map(|g| g.strip_prefix("system:serviceaccounts:"))
                .expect("the namespace group");
            assert!(!ns.is_empty(), "{groups:?}");
            let sa = name
                .strip_prefix(&format!("system:serviceaccount:{ns}:"))
                .expect("system:serviceaccount:<namespace>:<name>");
            assert!(!sa.is_empty(), "{name}");
        }
        Ok(None) => {}
        // Errors may quote claim values (Go's %q), at most a few bytes per input byte.
        Err(e) => assert!(e.to_string().len() <= 4096 + 8 * data.len()),
    }
});
