//! JWT verify: this crate's path (parse + route + verify + claims + user) beside the raw
//! aws-lc-rs primitive and `jsonwebtoken` 10 `decode`, for RS256, PS256, ES256 and EdDSA;
//! issuer routing with 1 and 100 issuers.
//!
//! Keys are fixed (`benches/keys/`) and tokens signed here with aws-lc-rs (the tests use an
//! independent implementation; the bench only needs realistic sizes).

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
use kube_authn::authenticator::{Audiences, Context, TokenAuthenticator};
use kube_authn::jwt::alg::AlgorithmSet;
use kube_authn::jwt::compact::UntrustedJwt;
use kube_authn::jwt::json::{NumericDate, RawAudience, opt_str};
use kube_authn::jwt::key::{KeySet, PublicKey};
use kube_authn::jwt::router::IssuerRouter;
use kube_authn::jwt::verify_signature;
use kube_authn::token::service_account::ServiceAccountAuthenticator;

const ISS: &str = "https://kubernetes.default.svc.cluster.local";

fn claims(now: i64) -> String {
    serde_json::json!({
        "aud": ["https://kubernetes.default.svc.cluster.local"], "exp": now + 3600, "iat": now, "nbf": now,
        "iss": ISS, "jti": "0a8f2f6c-3f4e-4c1e-8c55-6f3b0f3c7a11",
        "sub": "system:serviceaccount:kube-system:coredns",
        "kubernetes.io": {"namespace": "kube-system",
            "node": {"name": "node-1", "uid": "3b4c8a2e-53b1-4c0b-9a7c-2f0d8b1a6e11"},
            "pod": {"name": "coredns-5d78c9869d-abcde", "uid": "8f0e2c1a-7b6d-4e5f-9a8b-1c2d3e4f5a6b"},
            "serviceaccount": {"name": "coredns", "uid": "a087d5a0-e1dd-43ec-93ac-f13d89cd13af"},
            "warnafter": now + 3607}
    })
    .to_string()
}

/// The shared JWT core alone, through its public API, as both authenticators use it: the
/// pre-check (segments, base64url, header, validating payload scan), the key by `kid`, the
/// signature, and the registered claims: `iss` equal to the issuer, `aud` holding the
/// audience, `exp`/`nbf`/`iat` numbers checked against `now` (the service-account leeway).
/// What it leaves out is the authenticator's own part: routing, the `kubernetes.io` claims
/// and building the user (the full-path row has those).
fn core_verify(token: &str, keys: &KeySet, algs: AlgorithmSet, now: i64) -> bool {
    const LEEWAY: i64 = 60;
    let Ok(jwt) = UntrustedJwt::parse(token) else {
        return false;
    };
    let Ok(header) = jwt.header() else {
        return false;
    };
    if verify_signature(&jwt, header, keys.find(header.kid()), algs).is_err() {
        return false;
    }
    let Some(claims) = jwt.claims() else {
        return false;
    };
    let date = |name| claims.get(name).map_or(Ok(None), NumericDate::from_raw);
    let (Ok(exp), Ok(nbf), Ok(iat)) = (date("exp"), date("nbf"), date("iat")) else {
        return false;
    };
    let iss = claims.get("iss").map(opt_str);
    let aud = claims.get("aud").map(RawAudience::from_raw);
    matches!(iss, Some(Ok(Some(i))) if i == ISS)
        && matches!(aud, Some(Ok(Some(a))) if a.contains(ISS))
        && exp.is_some_and(|NumericDate(e)| now - LEEWAY <= e)
        && nbf.is_none_or(|NumericDate(n)| n <= now + LEEWAY)
        && iat.is_none_or(|NumericDate(i)| i <= now + LEEWAY)
}

struct Signed {
    token: String,
    spki: Vec<u8>,
    message: Vec<u8>,
    signature: Vec<u8>,
}

fn sign(
    alg: &str,
    kid: &str,
    payload: &str,
    f: impl Fn(&[u8]) -> Vec<u8>,
    spki: Vec<u8>,
) -> Signed {
    let h = URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"{alg}","kid":"{kid}"}}"#));
    let p = URL_SAFE_NO_PAD.encode(payload);
    let input = format!("{h}.{p}");
    let signature = f(input.as_bytes());
    Signed {
        token: format!("{input}.{}", URL_SAFE_NO_PAD.encode(&signature)),
        spki,
        message: input.into_bytes(),
        signature,
    }
}

fn kid_of(spki: &[u8]) -> String {
    PublicKey::from_spki_der(spki).unwrap().key_id().to_owned()
}

fn bench(c: &mut Criterion) {
    let rng = SystemRandom::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let payload = claims(now);

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
    let ed = sig::Ed25519KeyPair::from_pkcs8_maybe_unchecked(include_bytes!("keys/ed25519.pk8"))
        .unwrap();
    let ed_spki = ed.public_key().as_der().unwrap().as_ref().to_vec();

    let rsa_sign = |pad: &'static dyn sig::RsaEncoding| {
        let rsa = &rsa;
        let rng = &rng;
        move |m: &[u8]| {
            let mut s = vec![0; rsa.public_modulus_len()];
            rsa.sign(pad, rng, m, &mut s).unwrap();
            s
        }
    };
    let cases = vec![
        (
            "RS256",
            sign(
                "RS256",
                &kid_of(&rsa_spki),
                &payload,
                rsa_sign(&sig::RSA_PKCS1_SHA256),
                rsa_spki.clone(),
            ),
            &sig::RSA_PKCS1_2048_8192_SHA256 as &'static dyn sig::VerificationAlgorithm,
            jsonwebtoken::Algorithm::RS256,
        ),
        (
            "PS256",
            sign(
                "PS256",
                &kid_of(&rsa_spki),
                &payload,
                rsa_sign(&sig::RSA_PSS_SHA256),
                rsa_spki.clone(),
            ),
            &sig::RSA_PSS_2048_8192_SHA256,
            jsonwebtoken::Algorithm::PS256,
        ),
        (
            "ES256",
            sign(
                "ES256",
                &kid_of(&ec_spki),
                &payload,
                |m| ec.sign(&rng, m).unwrap().as_ref().to_vec(),
                ec_spki.clone(),
            ),
            &sig::ECDSA_P256_SHA256_FIXED,
            jsonwebtoken::Algorithm::ES256,
        ),
        (
            "EdDSA",
            sign(
                "EdDSA",
                &kid_of(&ed_spki),
                &payload,
                |m| ed.sign(m).as_ref().to_vec(),
                ed_spki.clone(),
            ),
            &sig::ED25519,
            jsonwebtoken::Algorithm::EdDSA,
        ),
    ];
    let ctx = Context::default();
    for (name, s, prim, jalg) in &cases {
        let key = Arc::new(PublicKey::from_spki_der(&s.spki).unwrap());
        let mut algs = kube_authn::jwt::alg::AlgorithmSet::KUBERNETES;
        algs = algs.with(kube_authn::jwt::alg::Algorithm::EdDSA);
        let sa = ServiceAccountAuthenticator::bound(
            vec![ISS.into()],
            vec![key.clone()],
            Audiences::from([ISS]),
            None,
        )
        .with_algorithms(algs);
        let mut router = IssuerRouter::new();
        router.add(ISS, Arc::new(sa));
        assert!(
            router
                .authenticate_token(&s.token, &ctx)
                .into_ready()
                .unwrap()
                .unwrap()
                .is_some(),
            "{name}"
        );
        let keys = KeySet::by_key_id(vec![key.clone()]);
        assert!(core_verify(&s.token, &keys, algs, now), "{name} core");
        let parsed = ParsedPublicKey::new(*prim, &s.spki).unwrap();
        // Counting modes: `JWT_COUNT=RS256 JWT_ITERS=n` runs the authenticator n times and exits
        // (`RS256-parse`: the pre-check alone, `RS256-core`: the shared JWT core alone,
        // `RS256-primitive`: the bare primitive), for
        // callgrind (`--toggle-collect` on the function of interest). With `JWT_ONCPU=1` the
        // loop's on-CPU time per call is printed: steadier than criterion on a shared machine.
        // `RS256-paired` (JWT_ITERS = rounds) prints the core's and the SA authenticator's time
        // over the primitive, measured in interleaved pairs (`count_support::paired_overhead`).
        if let Ok(want) = std::env::var("JWT_COUNT") {
            let iters: usize = std::env::var("JWT_ITERS").map_or(1000, |v| v.parse().unwrap());
            if want == *name {
                count_support::run_and_exit("JWT", &want, iters, &|| {
                    let _ = black_box(
                        router
                            .authenticate_token(black_box(&s.token), &ctx)
                            .into_ready(),
                    );
                });
            }
            if want == format!("{name}-parse") {
                count_support::run_and_exit("JWT", &want, iters, &|| {
                    let _ = black_box(UntrustedJwt::parse(black_box(&s.token)));
                });
            }
            if want == format!("{name}-core") {
                count_support::run_and_exit("JWT", &want, iters, &|| {
                    black_box(core_verify(black_box(&s.token), &keys, algs, now));
                });
            }
            if want == format!("{name}-paired") {
                let rounds = iters.max(10);
                count_support::paired_overhead(
                    name,
                    rounds,
                    &|| {
                        black_box(
                            parsed.verify_sig(black_box(&s.message), black_box(&s.signature)),
                        )
                        .unwrap();
                    },
                    &[
                        // What the pre-check costs beside a signature verification (alone,
                        // in a loop of its own, it is the `pre-check parse only` row).
                        ("pre-check, then the primitive", &|| {
                            black_box(UntrustedJwt::parse(black_box(&s.token)).is_ok());
                            black_box(
                                parsed.verify_sig(black_box(&s.message), black_box(&s.signature)),
                            )
                            .unwrap();
                        }),
                        ("JWT core verify", &|| {
                            assert!(core_verify(black_box(&s.token), &keys, algs, now))
                        }),
                        ("SA authenticator", &|| {
                            drop(black_box(
                                router
                                    .authenticate_token(black_box(&s.token), &ctx)
                                    .into_ready(),
                            ))
                        }),
                    ],
                );
                std::process::exit(0);
            }
            if want == format!("{name}-primitive") {
                count_support::run_and_exit("JWT", &want, iters, &|| {
                    black_box(parsed.verify_sig(black_box(&s.message), black_box(&s.signature)))
                        .unwrap();
                });
            }
            continue;
        }
        let mut g = c.benchmark_group(format!("verify/{name}"));
        g.bench_function("aws-lc-rs primitive (ParsedPublicKey)", |b| {
            b.iter(|| {
                parsed
                    .verify_sig(black_box(&s.message), black_box(&s.signature))
                    .unwrap()
            })
        });
        g.bench_function(
            "kube-authn SA authenticator (router+verify+claims+user)",
            |b| {
                b.iter(|| {
                    router
                        .authenticate_token(black_box(&s.token), &ctx)
                        .into_ready()
                        .unwrap()
                        .unwrap()
                })
            },
        );
        // The shared JWT core alone: pre-check, key, signature, registered claims.
        g.bench_function(
            "kube-authn JWT core verify (parse+verify+registered claims)",
            |b| b.iter(|| assert!(core_verify(black_box(&s.token), &keys, algs, now))),
        );
        // The untrusted pre-check alone (segments, base64url, header, validating payload scan).
        g.bench_function("pre-check parse only (UntrustedJwt::parse)", |b| {
            b.iter(|| UntrustedJwt::parse(black_box(&s.token)).unwrap())
        });
        // jsonwebtoken oracle: the same token, its own validation.
        let dk = match *name {
            "RS256" | "PS256" => {
                // n, e from the SPKI
                let der = &s.spki;
                let k = kube_authn::jwt::der::exact(0x30, der).unwrap();
                let (_, rest) = kube_authn::jwt::der::expect(0x30, k).unwrap();
                let bits = kube_authn::jwt::der::exact(0x03, rest).unwrap();
                let seq = kube_authn::jwt::der::exact(0x30, &bits[1..]).unwrap();
                let (n, rest) = kube_authn::jwt::der::expect(0x02, seq).unwrap();
                let e = kube_authn::jwt::der::exact(0x02, rest).unwrap();
                jsonwebtoken::DecodingKey::from_rsa_raw_components(strip(n), strip(e))
            }
            "ES256" => {
                let point = &s.spki[s.spki.len() - 65..];
                jsonwebtoken::DecodingKey::from_ec_components(
                    &URL_SAFE_NO_PAD.encode(&point[1..33]),
                    &URL_SAFE_NO_PAD.encode(&point[33..]),
                )
                .unwrap()
            }
            _ => jsonwebtoken::DecodingKey::from_ed_der(&s.spki[s.spki.len() - 32..]),
        };
        let mut v = jsonwebtoken::Validation::new(*jalg);
        v.set_audience(&[ISS]);
        v.set_issuer(&[ISS]);
        let ok = jsonwebtoken::decode::<serde_json::Value>(&s.token, &dk, &v);
        if ok.is_ok() {
            g.bench_function("jsonwebtoken 10 decode", |b| {
                b.iter(|| {
                    jsonwebtoken::decode::<serde_json::Value>(black_box(&s.token), &dk, &v).unwrap()
                })
            });
        } else {
            eprintln!("jsonwebtoken refused {name}: {ok:?}");
        }
        g.finish();
    }

    // Routing: 1 vs 100 issuers (1 takes the router's linear path, 100 its hash map): a token
    // for an unknown issuer (parse + routing: "not mine"), and one for the last-registered
    // issuer, whose authenticator has no keys (parse + routing + the key lookup failing: an
    // error), so both rows time routing without a signature check.
    let mut g = c.benchmark_group("route");
    for n in [1usize, 100] {
        let mut router = IssuerRouter::new();
        for i in 0..n {
            let sa = ServiceAccountAuthenticator::bound(
                vec![format!("https://issuer-{i}.example")],
                vec![],
                Audiences::default(),
                None,
            );
            router.add(format!("https://issuer-{i}.example"), Arc::new(sa));
        }
        let foreign = sign(
            "RS256",
            "x",
            &claims(now).replace(ISS, "https://nobody.example"),
            |_| vec![1; 256],
            vec![],
        )
        .token;
        // `JWT_COUNT=route-<n>` (and `route-<n>-owned`): the rows below for callgrind.
        if let Ok(want) = std::env::var("JWT_COUNT") {
            let iters: usize = std::env::var("JWT_ITERS").map_or(1000, |v| v.parse().unwrap());
            let last = format!("https://issuer-{}.example", n - 1);
            let owned = sign(
                "RS256",
                "x",
                &claims(now).replace(ISS, &last),
                |_| vec![1; 256],
                vec![],
            )
            .token;
            for (mode, token) in [
                (format!("route-{n}"), &foreign),
                (format!("route-{n}-owned"), &owned),
            ] {
                if want == mode {
                    count_support::run_and_exit("JWT", &want, iters, &|| {
                        let _ = black_box(
                            router
                                .authenticate_token(black_box(token), &ctx)
                                .into_ready(),
                        );
                    });
                }
            }
            continue;
        }
        g.bench_function(format!("{n} issuers, unknown issuer (not mine)"), |b| {
            b.iter(|| {
                router
                    .authenticate_token(black_box(&foreign), &ctx)
                    .into_ready()
                    .unwrap()
                    .unwrap()
            })
        });
        let last = format!("https://issuer-{}.example", n - 1);
        let owned = sign(
            "RS256",
            "x",
            &claims(now).replace(ISS, &last),
            |_| vec![1; 256],
            vec![],
        )
        .token;
        g.bench_function(
            format!("{n} issuers, owned issuer (no keys → error)"),
            |b| {
                b.iter(|| {
                    router
                        .authenticate_token(black_box(&owned), &ctx)
                        .into_ready()
                        .unwrap()
                        .unwrap_err()
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

fn strip(b: &[u8]) -> &[u8] {
    let skip = b.iter().take_while(|x| **x == 0).count();
    &b[skip..]
}
