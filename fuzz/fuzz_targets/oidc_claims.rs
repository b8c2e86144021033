//! OIDC per-token pipeline past the signature: the fuzz input is the tail of a claims object
//! whose head routes it to the issuer (`{"iss":…,"aud":…,"exp":…,` + input), signed with a real
//! ES256 key, so go-oidc's claim checks, distributed-claim parsing and the username / groups /
//! uid / required-claim mapping all see attacker-shaped JSON. Must never panic; every outcome
//! is ready at once (no claim fetcher is installed, so distributed groups fail immediately).
#![no_main]
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll, Waker};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use kube_authn::authenticator::{Context, TokenAuthenticator};
use kube_authn::jwt::key::parse_jwk;
use kube_authn::token::oidc::config::{OidcFlags, PrefixedClaim};
use kube_authn::token::oidc::OidcAuthenticator;
use libfuzzer_sys::fuzz_target;

struct Setup {
    key: EcdsaKeyPair,
    authn: OidcAuthenticator,
}

fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = key.public_key().as_ref();
        let jwk = serde_json::json!({"kty": "EC", "crv": "P-256", "kid": "k",
            "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])});
        let mut cfg = OidcFlags {
            issuer_url: "https://i".into(),
            client_id: "c".into(),
            username_claim: "email".into(),
            groups_claim: Some("groups".into()),
            groups_prefix: "g:".into(),
            required_claims: vec![("hd".into(), "example.com".into())],
            signing_algs: vec!["ES256".into()],
            ..Default::default()
        }
        .to_config(&[])
        .unwrap();
        cfg.uid_claim = Some("uid".into());
        cfg.username = PrefixedClaim { claim: "email".into(), prefix: "p:".into() };
        let authn = OidcAuthenticator::new(cfg);
        authn.set_keys(vec![Arc::new(parse_jwk(jwk.to_string().as_bytes()).unwrap().unwrap())]);
        Setup { key, authn }
    })
}

fuzz_target!(|data: &[u8]| {
    let s = setup();
    let mut payload = br#"{"iss":"https://i","aud":"c","exp":4000000000,"#.to_vec();
    payload.extend_from_slice(data);
    let input = format!("{}.{}", B64.encode(br#"{"alg":"ES256","kid":"k"}"#), B64.encode(&payload));
    let sig = s.key.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
    let token = format!("{input}.{}", B64.encode(sig.as_ref()));
    let ctx = Context::default();
    let mut fut = s.authn.authenticate_token(&token, &ctx);
    let mut cx = TaskContext::from_waker(Waker::noop());
    match std::pin::Pin::new(&mut fut).poll(&mut cx) {
        Poll::Ready(Ok(Some(r))) => {
            assert!(r.user.name().starts_with("p:"));
            assert!(r.user.groups().all(|g| g.starts_with("g:")));
        }
        Poll::Ready(Ok(None)) => {}
        // A required claim's value is quoted in its mismatch error, as Go does: bounded by the input.
        Poll::Ready(Err(e)) => assert!(e.to_string().len() <= 4096 + 8 * data.len()),
        Poll::Pending => panic!("no I/O without a claim fetcher: must be ready"),
    }
});
