//! JWT verify: this crate's path (parse + route + verify + claims + user) beside the raw
//! aws-lc-rs primitive and `jsonwebtoken` 10 `decode`, for RS256, PS256, ES256 and EdDSA;
//! issuer routing with 1 and 100 issuers.
//!
//! The service-account authenticator's legacy token and its lookup path (an in-memory
//! `ServiceAccountLookup`) are the groups `service_account/legacy` and
//! `service_account/bound+lookup`.
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
use kube_authn::token::service_account::{
    ERR_INVALIDATED, ERR_LEGACY_INVALIDATED, LEGACY_ISSUER, ObjectMeta, Secret, ServiceAccount,
    ServiceAccountAuthenticator, ServiceAccountLookup, StaticLookup,
};

const ISS: &str = "https://kubernetes.default.svc.cluster.local";

/// Ten years: the tokens' lifetime, so that no run, however long, reaches `exp` (the expired
/// token error path) or `warnafter` (the stale-token path); still ten digits, like a real one.
const LIFETIME: i64 = 10 * 365 * 24 * 3600;

fn claims(now: i64) -> String {
    serde_json::json!({
        "aud": ["https://kubernetes.default.svc.cluster.local"], "exp": now + LIFETIME, "iat": now, "nbf": now,
        "iss": ISS, "jti": "0a8f2f6c-3f4e-4c1e-8c55-6f3b0f3c7a11",
        "sub": "system:serviceaccount:kube-system:coredns",
        "kubernetes.io": {"namespace": "kube-system",
            "node": {"name": "node-1", "uid": "3b4c8a2e-53b1-4c0b-9a7c-2f0d8b1a6e11"},
            "pod": {"name": "coredns-5d78c9869d-abcde", "uid": "8f0e2c1a-7b6d-4e5f-9a8b-1c2d3e4f5a6b"},
            "serviceaccount": {"name": "coredns", "uid": "a087d5a0-e1dd-43ec-93ac-f13d89cd13af"},
            "warnafter": now + LIFETIME + 7}
    })
    .to_string()
}

/// The shared JWT core alone, through its public API, as both authenticators use it: the
/// pre-check (segments, base64url, header, validating payload scan), the key by `kid`, the
/// signature, and the registered claims: `iss` equal to the issuer, `aud` holding the
/// audience, `exp`/`nbf`/`iat` numbers checked against `now` (the service-account leeway).
/// What it leaves out is the authenticator's own part: routing, the `kubernetes.io` claims
/// and building the user (the full-path row has those). Never inlined: it is the callgrind
/// toggle target (`--toggle-collect='*core_verify*'`, see `src/jwt/mod.rs`).
#[inline(never)]
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
        // The SA authenticator's answer, checked before and after the rows are timed (it reads
        // the clock: a token past `exp` would time the error path).
        let check = |when: &str| {
            let user = router
                .authenticate_token(&s.token, &ctx)
                .into_ready()
                .unwrap()
                .unwrap_or_else(|e| panic!("{name} {when}: {e}"))
                .unwrap_or_else(|| panic!("{name} {when}: not mine"))
                .user;
            assert_eq!(
                user.name(),
                "system:serviceaccount:kube-system:coredns",
                "{name} {when}"
            );
        };
        check("before timing");
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
                        .expect("a ready answer")
                        .expect("a verified token")
                        .expect("a user")
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
        check("after timing");
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
        let last = format!("https://issuer-{}.example", n - 1);
        let owned = sign(
            "RS256",
            "x",
            &claims(now).replace(ISS, &last),
            |_| vec![1; 256],
            vec![],
        )
        .token;
        // `JWT_COUNT=route-<n>` (and `route-<n>-owned`): the rows below for callgrind.
        if let Ok(want) = std::env::var("JWT_COUNT") {
            let iters: usize = std::env::var("JWT_ITERS").map_or(1000, |v| v.parse().unwrap());
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
        // The outcomes, checked before and after the rows are timed: "not mine" (`Ok(None)`)
        // for the unknown issuer, an error for the owned one.
        let check = |when: &str| {
            assert!(
                router
                    .authenticate_token(&foreign, &ctx)
                    .into_ready()
                    .unwrap()
                    .unwrap_or_else(|e| panic!("route {n}, unknown issuer, {when}: {e}"))
                    .is_none(),
                "route {n}, unknown issuer, {when}: not Ok(None)"
            );
            assert!(
                router
                    .authenticate_token(&owned, &ctx)
                    .into_ready()
                    .unwrap()
                    .is_err(),
                "route {n}, owned issuer, {when}: not an error"
            );
        };
        check("before timing");
        g.bench_function(format!("{n} issuers, unknown issuer (not mine)"), |b| {
            b.iter(|| {
                let answer = router
                    .authenticate_token(black_box(&foreign), &ctx)
                    .into_ready()
                    .expect("a ready answer")
                    .expect("no error for an unknown issuer");
                assert!(answer.is_none(), "an unknown issuer is not mine");
                answer
            })
        });
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
        check("after timing");
    }
    g.finish();

    service_account_lookup(c, now);
}

/// The lookups a bound or legacy token needs, from memory: the crate's `StaticLookup`
/// (`HashMap`s) answers at once, so these rows time the lookup plumbing (the owned copy of
/// the claims, the boxed future, the lookups and their checks) and no network.
fn memory_lookup(legacy_token: &str) -> StaticLookup {
    let meta = |uid: &str| ObjectMeta {
        uid: uid.into(),
        deletion_timestamp: None,
    };
    let mut lookup = StaticLookup::default();
    lookup.service_accounts.insert(
        ("kube-system".into(), "coredns".into()),
        ServiceAccount {
            meta: meta(SA_UID),
            secrets: vec![SECRET_NAME.into()],
        },
    );
    lookup.secrets.insert(
        ("kube-system".into(), SECRET_NAME.into()),
        Secret {
            meta: meta("5c1b9f0e-6d3a-4f2e-8b7c-0a1d2e3f4a5b"),
            token: Some(legacy_token.as_bytes().to_vec()),
            invalid_since: None,
        },
    );
    lookup.pods.insert(
        ("kube-system".into(), "coredns-5d78c9869d-abcde".into()),
        meta("8f0e2c1a-7b6d-4e5f-9a8b-1c2d3e4f5a6b"),
    );
    lookup
}

const SA_UID: &str = "a087d5a0-e1dd-43ec-93ac-f13d89cd13af";
const SECRET_NAME: &str = "coredns-token-x7k2p";

/// Polls a service-account answer once: with an in-memory lookup it must be ready (a pending
/// future would mean the rows time something else than the lookup plumbing).
fn poll_once(
    f: kube_authn::authenticator::AuthFuture<'_>,
) -> kube_authn::authenticator::AuthResult {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(r) => r,
        std::task::Poll::Pending => panic!("an in-memory lookup answered Pending"),
    }
}

/// The service-account authenticator's other paths, RS256, registered as kube-apiserver
/// registers them (legacy under `kubernetes/serviceaccount`, bound under the issuer, in one
/// router): the legacy token, without and with `--service-account-lookup` (the secret and the
/// service account, the token compared with the secret's copy), and the bound token with
/// lookups (the service account and the pod it is bound to), each beside the same token
/// without lookups. `JWT_COUNT=sa-<row>` (`sa-legacy`, `sa-legacy+lookup`, `sa-bound`,
/// `sa-bound+lookup`) runs one row for callgrind / `JWT_ONCPU`; `JWT_COUNT=sa-lookup-paired`
/// prints each lookup row's time over the same token without lookups, measured in pairs (the
/// row without lookups is what the output calls "the primitive").
///
/// Measured (callgrind, the difference between 100 and 300 calls): the lookups add ≈ 10.2 k
/// instructions to a legacy token (≈ 8.5 k of them the constant-time comparison of the
/// ≈ 870-byte token with the secret's copy) and ≈ 4.6 k to a bound one (two `HashMap`
/// lookups with owned keys, clones of the answers, the boxed future); paired on-CPU
/// ≈ 1.9 µs and ≈ 0.46 µs, against ≈ 17–18 µs for the RS256 path without lookups.
fn service_account_lookup(c: &mut Criterion, now: i64) {
    let rng = SystemRandom::new();
    let rsa = sig::RsaKeyPair::from_pkcs8(include_bytes!("keys/rsa2048.pk8")).unwrap();
    let spki = rsa.public_key().as_der().unwrap().as_ref().to_vec();
    let key = Arc::new(PublicKey::from_spki_der(&spki).unwrap());
    let rs256 = |payload: &str| {
        sign(
            "RS256",
            &kid_of(&spki),
            payload,
            |m| {
                let mut s = vec![0; rsa.public_modulus_len()];
                rsa.sign(&sig::RSA_PKCS1_SHA256, &rng, m, &mut s).unwrap();
                s
            },
            spki.clone(),
        )
        .token
    };
    // What the legacy token controller put in a `kubernetes.io/service-account-token` secret.
    let legacy = rs256(
        &serde_json::json!({
            "iss": LEGACY_ISSUER,
            "kubernetes.io/serviceaccount/namespace": "kube-system",
            "kubernetes.io/serviceaccount/secret.name": SECRET_NAME,
            "kubernetes.io/serviceaccount/service-account.name": "coredns",
            "kubernetes.io/serviceaccount/service-account.uid": SA_UID,
            "sub": "system:serviceaccount:kube-system:coredns",
        })
        .to_string(),
    );
    let bound = rs256(&claims(now));
    let lookup: Arc<dyn ServiceAccountLookup> = Arc::new(memory_lookup(&legacy));
    let router = |lookup: Option<Arc<dyn ServiceAccountLookup>>| {
        let auds = Audiences::from([ISS]);
        let mut router = IssuerRouter::new();
        let legacy =
            ServiceAccountAuthenticator::legacy(vec![key.clone()], auds.clone(), lookup.clone());
        router.add(LEGACY_ISSUER, Arc::new(legacy));
        let bound =
            ServiceAccountAuthenticator::bound(vec![ISS.into()], vec![key.clone()], auds, lookup);
        router.add(ISS, Arc::new(bound));
        router
    };
    let (plain, looked_up) = (router(None), router(Some(lookup)));
    let ctx = Context::default();
    let rows: [(&str, &str, &str, &IssuerRouter, &str); 4] = [
        (
            "service_account/legacy",
            "no lookup",
            "sa-legacy",
            &plain,
            &legacy,
        ),
        (
            "service_account/legacy",
            "lookup (in-memory: secret + service account)",
            "sa-legacy+lookup",
            &looked_up,
            &legacy,
        ),
        (
            "service_account/bound+lookup",
            "no lookup (for comparison)",
            "sa-bound",
            &plain,
            &bound,
        ),
        (
            "service_account/bound+lookup",
            "lookup (in-memory: service account + pod)",
            "sa-bound+lookup",
            &looked_up,
            &bound,
        ),
    ];
    // Every row's user, checked before and after the rows are timed (the authenticator reads
    // the clock: a bound token past `exp` would time the error path).
    let check_rows = |when: &str| {
        for (group, row, _, router, token) in &rows {
            let user = poll_once(router.authenticate_token(token, &ctx))
                .unwrap_or_else(|e| panic!("{group}/{row} {when}: {e}"))
                .unwrap_or_else(|| panic!("{group}/{row} {when}: not mine"))
                .user;
            assert_eq!(
                user.name(),
                "system:serviceaccount:kube-system:coredns",
                "{group}/{row} {when}"
            );
            assert_eq!(user.uid(), SA_UID, "{group}/{row} {when}");
        }
    };
    check_rows("before timing");
    // An in-memory lookup that disagrees must fail: the lookup rows do look the objects up.
    let mut gone = memory_lookup(&legacy);
    gone.secrets.clear();
    gone.pods.clear();
    let gone = router(Some(Arc::new(gone)));
    for (token, want) in [(&legacy, ERR_LEGACY_INVALIDATED), (&bound, ERR_INVALIDATED)] {
        let err = poll_once(gone.authenticate_token(token, &ctx)).unwrap_err();
        assert_eq!(err.to_string(), want);
    }

    if let Ok(want) = std::env::var("JWT_COUNT") {
        let iters: usize = std::env::var("JWT_ITERS").map_or(1000, |v| v.parse().unwrap());
        for (_, _, mode, router, token) in &rows {
            if want == *mode {
                count_support::run_and_exit("JWT", mode, iters, &|| {
                    black_box(poll_once(router.authenticate_token(black_box(token), &ctx)).is_ok());
                });
            }
        }
        if want == "sa-lookup-paired" {
            for pair in rows.chunks(2) {
                let [(_, _, base, r0, t0), (_, _, mode, r1, t1)] = pair else {
                    unreachable!()
                };
                count_support::paired_overhead(
                    base,
                    iters.max(10),
                    &|| {
                        drop(black_box(poll_once(
                            r0.authenticate_token(black_box(t0), &ctx),
                        )))
                    },
                    &[(mode, &|| {
                        drop(black_box(poll_once(
                            r1.authenticate_token(black_box(t1), &ctx),
                        )))
                    })],
                );
            }
            std::process::exit(0);
        }
        // Every known mode has run and exited by now (the algorithms', the routing and the
        // service-account ones): measuring nothing must not look like success.
        eprintln!(
            "JWT_COUNT={want:?}: unknown mode (<alg>, <alg>-parse, <alg>-core, <alg>-primitive, \
             <alg>-paired, route-<n>[-owned], sa-<row>, sa-lookup-paired)"
        );
        std::process::exit(2);
    }
    for group in ["service_account/legacy", "service_account/bound+lookup"] {
        let mut g = c.benchmark_group(group);
        for (_, row, _, router, token) in rows.iter().filter(|r| r.0 == group) {
            g.bench_function(*row, |b| {
                b.iter(|| poll_once(router.authenticate_token(black_box(token), &ctx)))
            });
        }
        g.finish();
    }
    check_rows("after timing");
}

criterion_group!(benches, bench);
criterion_main!(benches);

fn strip(b: &[u8]) -> &[u8] {
    let skip = b.iter().take_while(|x| **x == 0).count();
    &b[skip..]
}
