//! OIDC verify: the whole per-token path (issuer router + parse + go-oidc checks + signature +
//! claim mapping + user) beside the raw aws-lc-rs primitive, for RS256, PS256 and ES256, with
//! a realistic ID token (email, email_verified, groups, jti). The difference of the two rows is
//! the non-crypto overhead (issue target: ≤ 1 µs).
//!
//! `cargo bench --bench oidc -- --warm-up-time 1 --measurement-time 3`

#[path = "count_support/mod.rs"]
mod count_support;

use std::hint::black_box;
use std::sync::Arc;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self as sig, KeyPair, ParsedPublicKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use kube_authn::authenticator::{Context, TokenAuthenticator};
use kube_authn::jwt::key::parse_jwk;
use kube_authn::jwt::router::IssuerRouter;
use kube_authn::token::oidc::OidcAuthenticator;
use kube_authn::token::oidc::config::OidcFlags;

const ISS: &str = "https://accounts.example.com";

fn bench(c: &mut Criterion) {
    let rng = SystemRandom::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let payload = serde_json::json!({
        "iss": ISS, "sub": "248289761001", "aud": "kubernetes", "exp": now + 3600, "iat": now,
        "email": "jane.doe@example.com", "email_verified": true,
        "groups": ["system-admins", "developers", "on-call"],
        "jti": "0a8f2f6c-3f4e-4c1e-8c55-6f3b0f3c7a11", "name": "Jane Doe"
    })
    .to_string();
    // Fixed key material, checked in (`benches/keys/`, PKCS#8 DER made with `openssl
    // genpkey`): a key generated per run changes the RSA modulus, and with it the primitive's
    // cost and instruction count, between runs.
    let rsa = sig::RsaKeyPair::from_pkcs8(include_bytes!("keys/rsa2048.pk8")).unwrap();
    let rsa_spki = rsa.public_key().as_der().unwrap().as_ref().to_vec();
    let ec = sig::EcdsaKeyPair::from_pkcs8(
        &sig::ECDSA_P256_SHA256_FIXED_SIGNING,
        include_bytes!("keys/p256.pk8"),
    )
    .unwrap();
    let ec_spki = ec.public_key().as_der().unwrap().as_ref().to_vec();
    let rsa_jwk = {
        let pk = rsa.public_key();
        let n = pk.modulus().big_endian_without_leading_zero().to_vec();
        let e = pk.exponent().big_endian_without_leading_zero().to_vec();
        serde_json::json!({"kty": "RSA", "kid": "rsa-1", "n": URL_SAFE_NO_PAD.encode(n), "e": URL_SAFE_NO_PAD.encode(e)})
    };
    let ec_jwk = {
        let point = &ec_spki[ec_spki.len() - 65..];
        serde_json::json!({"kty": "EC", "crv": "P-256", "kid": "ec-1",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])})
    };
    type Signer<'a> = Box<dyn Fn(&[u8]) -> Vec<u8> + 'a>;
    let rsa_sign = |pad: &'static dyn sig::RsaEncoding| -> Signer<'_> {
        let (rsa, rng) = (&rsa, &rng);
        Box::new(move |m: &[u8]| {
            let mut s = vec![0; rsa.public_modulus_len()];
            rsa.sign(pad, rng, m, &mut s).unwrap();
            s
        })
    };
    type Case<'a> = (
        &'a str,
        &'a str,
        Signer<'a>,
        &'a Vec<u8>,
        &'static dyn sig::VerificationAlgorithm,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "RS256",
            "rsa-1",
            rsa_sign(&sig::RSA_PKCS1_SHA256),
            &rsa_spki,
            &sig::RSA_PKCS1_2048_8192_SHA256,
        ),
        (
            "PS256",
            "rsa-1",
            rsa_sign(&sig::RSA_PSS_SHA256),
            &rsa_spki,
            &sig::RSA_PSS_2048_8192_SHA256,
        ),
        (
            "ES256",
            "ec-1",
            Box::new(|m: &[u8]| ec.sign(&rng, m).unwrap().as_ref().to_vec()),
            &ec_spki,
            &sig::ECDSA_P256_SHA256_FIXED,
        ),
    ];
    let ctx = Context::default();
    for (alg, kid, signer, spki, prim) in &cases {
        let h = URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"{alg}","kid":"{kid}","typ":"JWT"}}"#));
        let input = format!("{h}.{}", URL_SAFE_NO_PAD.encode(&payload));
        let signature = signer(input.as_bytes());
        let token = format!("{input}.{}", URL_SAFE_NO_PAD.encode(&signature));
        let cfg = OidcFlags {
            issuer_url: ISS.into(),
            client_id: "kubernetes".into(),
            username_claim: "email".into(),
            groups_claim: Some("groups".into()),
            groups_prefix: "oidc:".into(),
            signing_algs: vec!["RS256".into(), "PS256".into(), "ES256".into()],
            ..Default::default()
        }
        .to_config(&[])
        .unwrap();
        let a = OidcAuthenticator::new(cfg);
        a.set_keys(
            [&rsa_jwk, &ec_jwk]
                .iter()
                .map(|j| Arc::new(parse_jwk(j.to_string().as_bytes()).unwrap().unwrap()))
                .collect(),
        );
        let mut router = IssuerRouter::new();
        router.add(ISS, Arc::new(a));
        let r = router
            .authenticate_token(&token, &ctx)
            .into_ready()
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(r.user.name(), "jane.doe@example.com");
        let parsed = ParsedPublicKey::new(*prim, spki.as_slice()).unwrap();
        // Counting modes: `OIDC_COUNT=RS256 OIDC_ITERS=n` runs the authenticator n times and
        // exits (`RS256-primitive`: the bare primitive), for callgrind. With `OIDC_ONCPU=1` the
        // loop's on-CPU time per call is printed: steadier than criterion on a shared machine.
        // `RS256-paired` (OIDC_ITERS = rounds) prints the authenticator's time over the
        // primitive, measured in interleaved pairs (`count_support::paired_overhead`).
        if let Ok(want) = std::env::var("OIDC_COUNT") {
            let iters: usize = std::env::var("OIDC_ITERS").map_or(1000, |v| v.parse().unwrap());
            if want == *alg {
                count_support::run_and_exit("OIDC", &want, iters, &|| {
                    let _ = black_box(
                        router
                            .authenticate_token(black_box(&token), &ctx)
                            .into_ready(),
                    );
                });
            }
            if want == format!("{alg}-paired") {
                count_support::paired_overhead(
                    alg,
                    iters.max(10),
                    &|| {
                        black_box(
                            parsed.verify_sig(black_box(input.as_bytes()), black_box(&signature)),
                        )
                        .unwrap();
                    },
                    &[("OIDC authenticator", &|| {
                        drop(black_box(
                            router
                                .authenticate_token(black_box(&token), &ctx)
                                .into_ready(),
                        ))
                    })],
                );
                std::process::exit(0);
            }
            if want == format!("{alg}-primitive") {
                count_support::run_and_exit("OIDC", &want, iters, &|| {
                    black_box(
                        parsed.verify_sig(black_box(input.as_bytes()), black_box(&signature)),
                    )
                    .unwrap();
                });
            }
            continue;
        }
        let mut g = c.benchmark_group(format!("oidc/{alg}"));
        g.bench_function("aws-lc-rs primitive (ParsedPublicKey)", |b| {
            b.iter(|| {
                parsed
                    .verify_sig(black_box(input.as_bytes()), black_box(&signature))
                    .unwrap()
            })
        });
        g.bench_function("kube-authn OIDC (router+verify+claims+user)", |b| {
            b.iter(|| {
                router
                    .authenticate_token(black_box(&token), &ctx)
                    .into_ready()
                    .expect("a ready answer")
                    .expect("a verified token")
                    .expect("a user")
            })
        });
        g.finish();
    }
    // Every known mode has run and exited by now: measuring nothing must not look like success.
    if let Ok(want) = std::env::var("OIDC_COUNT") {
        eprintln!("OIDC_COUNT={want:?}: unknown mode (<alg>, <alg>-primitive, <alg>-paired)");
        std::process::exit(2);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
