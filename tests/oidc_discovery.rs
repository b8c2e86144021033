//! Discovery / JWKS failure modes and distributed claims, against a **test-only** HTTPS server
//! (tests/webhook_server: hyper + rustls on 127.0.0.1, scripted replies). A real provider
//! cannot be made to answer with a wrong issuer, a 1 MiB+ body, a redirect or a distributed
//! claims endpoint, so these cases use scripted replies; the happy paths against a real
//! provider are in tests/oidc_provider.rs. ID tokens and distributed-claim JWTs are minted by
//! jwcrypto (tests/tools/jwt_mint.py).

mod jwt_support;
mod webhook_server;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use jwt_support::{fixture, mint, req};
use kube_authn::authenticator::{Context, TokenAuthenticator};
use kube_authn::token::oidc::OidcAuthenticator;
use kube_authn::token::oidc::config::{JwtAuthenticatorConfig, OidcFlags, PrefixedClaim};
use kube_authn::token::oidc::discovery::{DiscoveryHandle, DiscoveryOptions, spawn};
use kube_authn::token::oidc::go_time_utc;
use serde_json::{Value, json};
use webhook_server::{Pki, RawFault, Reply, Seen, Server};

type Route = dyn Fn(&Seen, &str) -> Reply + Send + Sync;

/// A scripted HTTPS site; `route` gets the request and the site's own base URL.
async fn site(
    pki: &Pki,
    route: impl Fn(&Seen, &str) -> Reply + Send + Sync + 'static,
) -> (Server, String) {
    let base: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let b = base.clone();
    let route: Arc<Route> = Arc::new(route);
    let server = Server::start(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        move |s, _| route(s, b.get().map_or("", |s| s.as_str())),
    )
    .await;
    let url = server.url("");
    base.set(url.clone()).unwrap();
    (server, url)
}

fn cfg(issuer: &str, ca: Option<&str>) -> JwtAuthenticatorConfig {
    let mut c = OidcFlags {
        issuer_url: issuer.into(),
        client_id: "my-client".into(),
        ..Default::default()
    }
    .to_config(&[])
    .unwrap();
    c.certificate_authority = ca.map(str::to_owned);
    c.username = PrefixedClaim {
        claim: "username".into(),
        prefix: String::new(),
    };
    c
}

fn fast() -> DiscoveryOptions {
    DiscoveryOptions::default()
        .with_retry(Duration::from_millis(50), Duration::from_millis(100))
        .with_timeout(Duration::from_secs(2))
        .with_trust_env(false)
}

/// Kubernetes' health error before the first initialisation attempt ends (oidc.go: the
/// initial `errorHolder`, wrapped by `HealthCheck`).
fn not_initialized(issuer: &str) -> String {
    format!(
        "oidc: authenticator for issuer \"{issuer}\" is not healthy: oidc: authenticator for issuer \"{issuer}\" is not initialized"
    )
}

/// Waits for the first initialisation error (or success → `Ok`).
async fn first_outcome(h: &DiscoveryHandle) -> Result<(), String> {
    for _ in 0..200 {
        match h.health() {
            Ok(()) => return Ok(()),
            Err(e) if e != not_initialized(h.issuer()) => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
        }
    }
    panic!("no outcome");
}

fn json_reply(v: Value) -> Reply {
    Reply::json(200, v)
}

fn discovery_doc(base: &str) -> Reply {
    json_reply(json!({"issuer": base, "jwks_uri": format!("{base}/keys")}))
}

fn jwks(f: &jwt_support::Fixture, names: &[&str]) -> Vec<u8> {
    let keys: Vec<Value> = names
        .iter()
        .map(|n| serde_json::from_slice(&f.read(n)).unwrap())
        .collect();
    json!({ "keys": keys }).to_string().into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_and_jwks_failures_keep_the_authenticator_uninitialised() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let big = vec![b' '; (1 << 20) + 1];
    let good_jwks = jwks(f, &["rsa.jwk"]);
    type Case = (&'static str, Box<Route>, bool, &'static str);
    fn ok(body: Vec<u8>) -> Reply {
        Reply::Http(200, vec![("content-type", "application/json".into())], body)
    }
    let cases: Vec<Case> = vec![
        (
            "issuer mismatch",
            Box::new(|s: &Seen, _b: &str| match s.uri.as_str() {
                "/.well-known/openid-configuration" => json_reply(
                    json!({"issuer": "https://other.example", "jwks_uri": "https://other.example/keys"}),
                ),
                _ => Reply::Http(404, vec![], vec![]),
            }),
            true,
            "oidc: issuer did not match the issuer returned by provider, expected \"{URL}\" got \"https://other.example\"",
        ),
        (
            "404",
            Box::new(|_: &Seen, _: &str| Reply::Http(404, vec![], b"nope".to_vec())),
            true,
            "404 Not Found: nope",
        ),
        (
            "redirect not followed",
            // The redirect points back to this site, so a followed redirect would show up
            // as a request for /elsewhere (checked below).
            Box::new(|s: &Seen, b: &str| match s.uri.as_str() {
                "/elsewhere" => discovery_doc(b),
                _ => Reply::Http(302, vec![("location", format!("{b}/elsewhere"))], vec![]),
            }),
            true,
            "302 Found: ",
        ),
        (
            "not JSON",
            Box::new(|_: &Seen, _: &str| {
                Reply::Http(
                    200,
                    vec![("content-type", "text/html".into())],
                    b"<html>".to_vec(),
                )
            }),
            true,
            "oidc: failed to decode provider discovery object: expected Content-Type = application/json, got \"text/html\": invalid character '<' looking for beginning of value",
        ),
        (
            "truncated JSON",
            Box::new(|_: &Seen, _: &str| ok(br#"{"issuer": "#.to_vec())),
            true,
            "oidc: failed to decode provider discovery object: got Content-Type = application/json, but could not unmarshal as JSON: unexpected end of JSON input",
        ),
        (
            "a truncated literal: Go's scanner judges the end as a space",
            Box::new(|_: &Seen, _: &str| ok(br#"{"issuer": nul"#.to_vec())),
            true,
            "oidc: failed to decode provider discovery object: got Content-Type = application/json, but could not unmarshal as JSON: invalid character ' ' in literal null (expecting 'l')",
        ),
        (
            "a lone surrogate in the issuer is U+FFFD, as Go decodes it",
            Box::new(|_: &Seen, b: &str| {
                ok(format!(r#"{{"issuer": "\ud800", "jwks_uri": "{b}/keys"}}"#).into_bytes())
            }),
            true,
            "oidc: issuer did not match the issuer returned by provider, expected \"{URL}\" got \"\u{fffd}\"",
        ),
        (
            "a dotless i does not fold onto issuer in Go (nor ß onto ss)",
            Box::new(|_: &Seen, b: &str| {
                ok(
                    format!(r#"{{"ıssuer": "{b}", "ißuer": "{b}", "jwks_uri": "{b}/keys"}}"#)
                        .into_bytes(),
                )
            }),
            true,
            "oidc: issuer did not match the issuer returned by provider, expected \"{URL}\" got \"\"",
        ),
        (
            "a field of the wrong type",
            Box::new(|_: &Seen, b: &str| {
                ok(
                    format!(r#"{{"issuer": "{b}", "jwks_uri": "{b}/keys", "token_endpoint": 5}}"#)
                        .into_bytes(),
                )
            }),
            true,
            "oidc: failed to decode provider discovery object: got Content-Type = application/json, but could not unmarshal as JSON: json: cannot unmarshal number into Go struct field providerJSON.token_endpoint of type string",
        ),
        (
            "not an object",
            Box::new(|_: &Seen, _: &str| Reply::Http(200, vec![], b"[]".to_vec())),
            true,
            "oidc: failed to decode provider discovery object: expected Content-Type = application/json, got \"\": json: cannot unmarshal array into Go value of type oidc.providerJSON",
        ),
        // Kubernetes' own text (oidc.go, StructuredAuthenticationConfigurationJWKSMetrics gate,
        // on by default); go-oidc v2.5.0 alone does not check the jwks_uri.
        (
            "jwks_uri null",
            Box::new(|_: &Seen, b: &str| json_reply(json!({"issuer": b, "jwks_uri": null}))),
            true,
            "provider did not return JWKS URL",
        ),
        (
            "issuer and jwks_uri matched in any case, the last one wins, null is no value",
            {
                let good = good_jwks.clone();
                Box::new(move |s: &Seen, b: &str| {
                    match s.uri.as_str() {
                    "/keys" => ok(good.clone()),
                    _ => ok(format!(
                        r#"{{"issuer": "https://wrong.example", "ISSUER": "{b}", "jwks_uri": "{b}/keys", "Jwks_Uri": null, "issuer": null}}"#
                    )
                    .into_bytes()),
                }
                })
            },
            true,
            "",
        ),
        (
            "jwks_uri with a password, not https",
            Box::new(|_: &Seen, b: &str| {
                json_reply(json!({"issuer": b, "jwks_uri": "http://user:hunter2@127.0.0.1:1/keys"}))
            }),
            true,
            "oidc: jwks_uri \"http://user:***@127.0.0.1:1/keys\" is not an https URL",
        ),
        (
            "jwks_uri with a password, unreachable",
            Box::new(|_: &Seen, b: &str| {
                json_reply(
                    json!({"issuer": b, "jwks_uri": "https://user:hunter2@127.0.0.1:1/keys"}),
                )
            }),
            true,
            "oidc: get keys failed Get \"https://user:***@127.0.0.1:1/keys\": ",
        ),
        (
            "no jwks_uri",
            Box::new(|_: &Seen, b: &str| json_reply(json!({"issuer": b}))),
            true,
            "provider did not return JWKS URL",
        ),
        (
            "http jwks_uri",
            Box::new(|_: &Seen, b: &str| {
                json_reply(json!({"issuer": b, "jwks_uri": "http://127.0.0.1:1/keys"}))
            }),
            true,
            "oidc: jwks_uri \"http://127.0.0.1:1/keys\" is not an https URL",
        ),
        (
            "discovery larger than 1 MiB",
            {
                let big = big.clone();
                Box::new(move |_: &Seen, _: &str| ok(big.clone()))
            },
            true,
            "Get \"{URL}/.well-known/openid-configuration\": response body larger than 1048576 bytes",
        ),
        (
            "JWKS larger than 1 MiB",
            {
                let big = big.clone();
                Box::new(move |s: &Seen, b: &str| match s.uri.as_str() {
                    "/keys" => ok(big.clone()),
                    _ => discovery_doc(b),
                })
            },
            true,
            "oidc: get keys failed Get \"{URL}/keys\": response body larger than 1048576 bytes",
        ),
        (
            "JWKS 500",
            Box::new(|s: &Seen, b: &str| match s.uri.as_str() {
                "/keys" => Reply::Http(500, vec![], b"boom".to_vec()),
                _ => discovery_doc(b),
            }),
            true,
            "oidc: get keys failed: 500 Internal Server Error boom",
        ),
        (
            "JWKS without usable keys",
            Box::new(|s: &Seen, b: &str| match s.uri.as_str() {
                "/keys" => json_reply(json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]})),
                _ => discovery_doc(b),
            }),
            true,
            "oidc: JWKS contains no usable signing key",
        ),
        (
            "JWKS holding only a private key (go-oidc cannot verify with one)",
            {
                let private = jwks(f, &["rsa_private.jwk"]);
                Box::new(move |s: &Seen, b: &str| match s.uri.as_str() {
                    "/keys" => ok(private.clone()),
                    _ => discovery_doc(b),
                })
            },
            true,
            "oidc: JWKS contains no usable signing key",
        ),
        (
            "JWKS whose only key has the certificate of another key in x5c (go-jose refuses it)",
            {
                let mut key: Value = serde_json::from_slice(&f.read("rsa2.jwk")).unwrap();
                let pem = String::from_utf8(f.read("rsa_cert.pem")).unwrap();
                let der_b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
                key["x5c"] = json!([der_b64]);
                let body = json!({ "keys": [key] }).to_string().into_bytes();
                Box::new(move |s: &Seen, b: &str| match s.uri.as_str() {
                    "/keys" => ok(body.clone()),
                    _ => discovery_doc(b),
                })
            },
            true,
            "oidc: JWKS contains no usable signing key",
        ),
        (
            "JWKS malformed",
            Box::new(|s: &Seen, b: &str| match s.uri.as_str() {
                "/keys" => ok(b"{\"keys\": 5}".to_vec()),
                _ => discovery_doc(b),
            }),
            true,
            "oidc: failed to decode keys: got Content-Type = application/json, but could not unmarshal as JSON: json: cannot unmarshal number into Go struct field JSONWebKeySet.keys of type []jose.JSONWebKey {\"keys\": 5}",
        ),
        (
            "JWKS not JSON",
            Box::new(|s: &Seen, b: &str| match s.uri.as_str() {
                "/keys" => Reply::Http(
                    200,
                    vec![("content-type", "text/html".into())],
                    b"<html>".to_vec(),
                ),
                _ => discovery_doc(b),
            }),
            true,
            "oidc: failed to decode keys: expected Content-Type = application/json, got \"text/html\": invalid character '<' looking for beginning of value <html>",
        ),
        (
            "JWKS {} (an empty key set for Go)",
            Box::new(|s: &Seen, b: &str| match s.uri.as_str() {
                "/keys" => ok(b"{}".to_vec()),
                _ => discovery_doc(b),
            }),
            true,
            "oidc: JWKS contains no usable signing key",
        ),
        (
            "server not trusted (system roots, no CA configured)",
            Box::new(|_: &Seen, b: &str| discovery_doc(b)),
            false,
            "Get \"{URL}/.well-known/openid-configuration\": invalid peer certificate: UnknownIssuer",
        ),
        (
            "timeout",
            Box::new(|_: &Seen, _: &str| Reply::Hang),
            true,
            "Get \"{URL}/.well-known/openid-configuration\": operation timed out",
        ),
        (
            "success",
            {
                let good = good_jwks.clone();
                Box::new(move |s: &Seen, b: &str| match s.uri.as_str() {
                    "/keys" => ok(good.clone()),
                    _ => discovery_doc(b),
                })
            },
            true,
            "",
        ),
    ];
    for (name, route, with_ca, want) in cases {
        let (server, url) = site(&pki, move |s, b| route(s, b)).await;
        let a = Arc::new(OidcAuthenticator::new(cfg(
            &url,
            with_ca.then_some(pki.ca_pem.as_str()),
        )));
        let h = spawn(&a, fast()).unwrap();
        let got = first_outcome(&h).await;
        if name == "redirect not followed" {
            assert!(
                server
                    .seen
                    .lock()
                    .unwrap()
                    .iter()
                    .all(|s| s.uri != "/elsewhere"),
                "{name}: the redirect was followed"
            );
        }
        let want = want.replace("{URL}", &url);
        match got {
            Ok(()) => assert!(want.is_empty(), "{name}: initialised"),
            Err(e) => {
                let prefix = format!("oidc: authenticator for issuer \"{url}\" is not healthy: ");
                let rest = e
                    .strip_prefix(&prefix)
                    .unwrap_or_else(|| panic!("{name}: {e}"));
                assert!(
                    !want.is_empty() && rest.starts_with(&want),
                    "{name}: {rest}"
                );
                assert!(!rest.contains("hunter2"), "{name}: {rest}");
                assert!(!a.is_initialized(), "{name}");
            }
        }
    }
}

/// A JWK with private-key members is never used to verify: go-jose decodes it as a private
/// key, with which go-oidc's verifier verifies nothing (Kubernetes: `failed to verify id token
/// signature`). A token signed by that key is refused; the set's public keys still serve. It
/// used to be used as the public key it holds, so the token authenticated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_jwk_verifies_no_token() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let keys = jwks(f, &["rsa_private.jwk", "rsa2.jwk"]);
    let (_server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/.well-known/openid-configuration" => discovery_doc(b),
        "/keys" => Reply::Http(200, vec![], keys.clone()),
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    let a = Arc::new(OidcAuthenticator::new(cfg(&url, Some(&pki.ca_pem))));
    let h = spawn(&a, fast()).unwrap();
    assert_eq!(first_outcome(&h).await, Ok(()));
    let claims =
        json!({"iss": url, "aud": "my-client", "exp": 4_000_000_000i64, "username": "jane"});
    let tokens = mint(&[
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            claims.clone(),
        ),
        req(&f.key("rsa2.pem"), "RS256", Some("thumbprint"), claims),
    ]);
    let ctx = Context::default();
    assert_eq!(
        a.authenticate_token(&tokens[0], &ctx)
            .await
            .map(|r| r.map(|r| r.user.name().to_owned()))
            .unwrap_err()
            .to_string(),
        "oidc: verify token: failed to verify signature: failed to verify id token signature"
    );
    let r = a
        .authenticate_token(&tokens[1], &ctx)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.user.name(), "jane");
}

/// An empty `certificateAuthority` (or an empty `--oidc-ca-file`) is no CA, as in Kubernetes
/// (`len(CertificateAuthority) > 0`): the system roots are used. It used to stop start-up
/// (`CA bundle: no valid certificate found`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_certificate_authority_means_system_roots() {
    let pki = Pki::new();
    let (_server, url) = site(&pki, |_: &Seen, b: &str| discovery_doc(b)).await;
    let a = Arc::new(OidcAuthenticator::new(cfg(&url, Some(""))));
    let h = spawn(&a, fast()).expect("an empty CA is not an error");
    let e = first_outcome(&h).await.unwrap_err();
    // The test server's CA is not a system root: refused by the system roots.
    assert!(
        e.ends_with("invalid peer certificate: UnknownIssuer"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_url_trailing_slash_and_last_good_keys() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    // discoveryURL: fetched as given; the document's issuer must still equal issuer.url
    // exactly (trailing slash included), and that is the `iss` tokens carry.
    let issuer = "https://auth.example.com/a/b/foo/";
    let good = jwks(f, &["rsa.jwk"]);
    let (server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/c/d/bar/.well-known/openid-configuration" => {
            json_reply(json!({"issuer": issuer, "jwks_uri": format!("{b}/keys")}))
        }
        // first JWKS fetch succeeds, every later one fails: the last good keys stay
        "/keys" if s.method == "GET" => {
            let n = KEYS_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n == 0 {
                Reply::Http(200, vec![], good.clone())
            } else {
                Reply::Http(503, vec![], b"down".to_vec())
            }
        }
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    static KEYS_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mut c = cfg(issuer, Some(&pki.ca_pem));
    c.discovery_url = Some(format!("{url}/c/d/bar/.well-known/openid-configuration"));
    let a = Arc::new(OidcAuthenticator::new(c));
    let h = spawn(&a, fast().with_refresh_cooldown(Duration::from_secs(60))).unwrap();
    assert_eq!(first_outcome(&h).await, Ok(()));
    let exp = 4_000_000_000i64;
    let claims = |u: &str| json!({"iss": issuer, "aud": "my-client", "exp": exp, "username": u});
    let tokens = mint(&[
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            claims("jane"),
        ),
        req(
            &f.key("rsa2.pem"),
            "RS256",
            Some("thumbprint"),
            claims("mallory"),
        ),
    ]);
    let ctx = Context::default();
    let r = a
        .authenticate_token(&tokens[0], &ctx)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.user.name(), "jane");
    // Unknown kid → one refetch, which fails → go-oidc's error naming the failed fetch
    // (jwks.go `fetching keys %v` inside verify.go's `failed to verify signature: %v`), last
    // good keys kept.
    let e = a.authenticate_token(&tokens[1], &ctx).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "oidc: verify token: failed to verify signature: fetching keys oidc: get keys failed: 503 Service Unavailable down"
    );
    assert_eq!(h.jwks_fetches(), 2);
    // Within the cooldown: no fetch, the current keys answer (docs/compatibility.md).
    let e = a.authenticate_token(&tokens[1], &ctx).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "oidc: verify token: failed to verify signature: failed to verify id token signature"
    );
    assert_eq!(h.jwks_fetches(), 2);
    let r = a
        .authenticate_token(&tokens[0], &ctx)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.user.name(), "jane", "last good keys still verify");
    assert!(h.health().is_ok(), "initialised stays initialised");
    drop(server);
}

/// A distributed-claim JWT signed by a key the cached set does not hold yet (a rotation)
/// causes one refetch of the issuer's keys, as an ID token with an unknown `kid` does (go-oidc's
/// remote key set serves both); it used to be checked against the cached keys only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_claim_jwt_with_a_new_key_refetches_the_keys() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let valid = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 3600;
    let (old_set, new_set) = (jwks(f, &["rsa.jwk"]), jwks(f, &["rsa.jwk", "rsa2.jwk"]));
    let rotated = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let claim_jwt: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let (r, cj) = (rotated.clone(), claim_jwt.clone());
    let (server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/.well-known/openid-configuration" => discovery_doc(b),
        "/keys" if r.load(std::sync::atomic::Ordering::SeqCst) => {
            Reply::Http(200, vec![], new_set.clone())
        }
        "/keys" => Reply::Http(200, vec![], old_set.clone()),
        "/groups" => Reply::Http(
            200,
            vec![],
            cj.get().cloned().unwrap_or_default().into_bytes(),
        ),
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    let minted = mint(&[
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            json!({"iss": url, "aud": "my-client", "exp": valid, "username": "jane",
                   "_claim_names": {"groups": "src1"},
                   "_claim_sources": {"src1": {"endpoint": format!("{url}/groups")}}}),
        ),
        req(
            &f.key("rsa2.pem"),
            "RS256",
            Some("thumbprint"),
            json!({"iss": url, "aud": "my-client", "exp": valid, "groups": ["team1"]}),
        ),
    ]);
    claim_jwt.set(minted[1].clone()).unwrap();
    let mut c = cfg(&url, Some(&pki.ca_pem));
    c.groups = Some(PrefixedClaim {
        claim: "groups".into(),
        prefix: String::new(),
    });
    let a = Arc::new(OidcAuthenticator::new(c));
    let h = spawn(&a, fast().with_refresh_cooldown(Duration::ZERO)).unwrap();
    assert_eq!(first_outcome(&h).await, Ok(()));
    assert_eq!(h.jwks_fetches(), 1);
    // The provider rotates: the claim JWT's key is published only now.
    rotated.store(true, std::sync::atomic::Ordering::SeqCst);
    let r = a
        .authenticate_token(&minted[0], &Context::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.user.groups().collect::<Vec<_>>(), ["team1"]);
    assert_eq!(h.jwks_fetches(), 2, "one refetch for the new key");
    drop(server);
}

/// A distributed-claims endpoint with `user:password@` gets one `Authorization` header, the
/// bearer `access_token`: Kubernetes' `getClaimJWT` sets it, and net/http adds the URL's
/// basic credentials only when no `Authorization` is set. reqwest made a `Basic` header of
/// them and `bearer_auth` appended a second one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_claims_endpoint_userinfo_is_not_sent_beside_the_bearer() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let valid = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 3600;
    let keys = jwks(f, &["rsa.jwk"]);
    let claim_jwt: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
    let cj = claim_jwt.clone();
    let (server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/.well-known/openid-configuration" => discovery_doc(b),
        "/keys" => Reply::Http(200, vec![], keys.clone()),
        "/claims" => Reply::Http(
            200,
            vec![],
            cj.get().cloned().unwrap_or_default().into_bytes(),
        ),
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    let endpoint = url.replacen("https://", "https://u:p@", 1) + "/claims";
    let rsa = f.key("rsa.pem");
    let minted = mint(&[
        req(
            &rsa,
            "RS256",
            Some("thumbprint"),
            json!({"iss": url, "aud": "my-client", "exp": valid, "username": "jane",
                   "_claim_names": {"groups": "src1"},
                   "_claim_sources": {"src1": {"endpoint": endpoint, "access_token": "at"}}}),
        ),
        req(
            &rsa,
            "RS256",
            Some("thumbprint"),
            json!({"iss": url, "aud": "my-client", "exp": valid, "groups": ["team1"]}),
        ),
    ]);
    claim_jwt.set(minted[1].clone()).unwrap();
    let mut c = cfg(&url, Some(&pki.ca_pem));
    c.groups = Some(PrefixedClaim {
        claim: "groups".into(),
        prefix: String::new(),
    });
    let a = Arc::new(OidcAuthenticator::new(c));
    let h = spawn(&a, fast()).unwrap();
    assert_eq!(first_outcome(&h).await, Ok(()));
    let r = a
        .authenticate_token(&minted[0], &Context::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.user.groups().collect::<Vec<_>>(), ["team1"]);
    let seen = server.seen.lock().unwrap().clone();
    let claims: Vec<_> = seen.iter().filter(|s| s.uri == "/claims").collect();
    assert_eq!(claims.len(), 1);
    let auth: Vec<&str> = claims[0]
        .headers
        .get_all("authorization")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(auth, ["Bearer at"]);
}

/// go-oidc's remote key set refetches whenever no cached key verifies a token (jwks.go
/// `verify`), not only for an unknown `kid`: a token without `kid` signed by a rotated-in key,
/// and a token whose known `kid` names other material at the provider now, authenticate after
/// one refetch (only an unknown `kid` used to refetch). Every such refetch goes through the
/// one coalesced, cooldown-limited refresher: a burst of tokens with bad signatures costs at
/// most one fetch per cooldown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_no_cached_key_verifies_refetches_the_keys() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let jwk = |name: &str, kid: Option<&str>| {
        let mut k: Value = serde_json::from_slice(&f.read(name)).unwrap();
        match kid {
            Some(kid) => k["kid"] = json!(kid),
            None => drop(k.as_object_mut().unwrap().remove("kid")),
        }
        k
    };
    // 0: key A without kid; 1: key B without kid, and A as "k"; 2: B as "k".
    let sets: Vec<Vec<u8>> = [
        vec![jwk("rsa.jwk", None)],
        vec![jwk("rsa2.jwk", None), jwk("rsa.jwk", Some("k"))],
        vec![jwk("rsa2.jwk", Some("k"))],
    ]
    .iter()
    .map(|keys| json!({ "keys": keys }).to_string().into_bytes())
    .collect();
    let phase = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let p = phase.clone();
    let (_server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/.well-known/openid-configuration" => discovery_doc(b),
        "/keys" => Reply::Http(
            200,
            vec![],
            sets[p.load(std::sync::atomic::Ordering::SeqCst)].clone(),
        ),
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    let cooldown = Duration::from_secs(2);
    let a = Arc::new(OidcAuthenticator::new(cfg(&url, Some(&pki.ca_pem))));
    let h = spawn(&a, fast().with_refresh_cooldown(cooldown)).unwrap();
    assert_eq!(first_outcome(&h).await, Ok(()));
    assert_eq!(h.jwks_fetches(), 1);
    let claims =
        json!({"iss": url, "aud": "my-client", "exp": 4_000_000_000i64, "username": "jane"});
    let (rsa2, other) = (f.key("rsa2.pem"), f.key("rsa1024.pem"));
    let t = mint(&[
        req(&rsa2, "RS256", None, claims.clone()),
        req(&rsa2, "RS256", Some("k"), claims.clone()),
        // bad signatures: a key the provider never has, without kid, with an unknown kid
        // and with the known kid "k"
        req(&other, "RS256", None, claims.clone()),
        req(&other, "RS256", Some("thumbprint"), claims.clone()),
        req(&other, "RS256", Some("k"), claims.clone()),
    ]);
    let (b_no_kid, b_as_k) = (&t[0], &t[1]);
    // B's token with a changed signature byte (not the last character: its low bits are
    // padding).
    let mut tampered = t[0].clone().into_bytes();
    let at = tampered.len() - 10;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let bad = [t[2].clone(), t[3].clone(), t[4].clone(), tampered];
    let ctx = Context::default();
    let auth = |token: String| {
        let a = a.clone();
        async move {
            a.authenticate_token(&token, &Context::default())
                .await
                .map(|r| r.map(|r| r.user.name().to_owned()))
                .map_err(|e| e.to_string())
        }
    };
    const SIGNATURE: &str =
        "oidc: verify token: failed to verify signature: failed to verify id token signature";
    let burst = |n: usize| {
        let tasks: Vec<_> = (0..n)
            .map(|i| tokio::spawn(auth(bad[i % bad.len()].clone())))
            .collect();
        async move {
            for t in tasks {
                assert_eq!(t.await.unwrap(), Err(SIGNATURE.to_owned()));
            }
        }
    };

    // The provider rotates to B, published without kid: one refetch.
    phase.store(1, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(auth(b_no_kid.clone()).await, Ok(Some("jane".to_owned())));
    assert_eq!(h.jwks_fetches(), 2, "one refetch for a token without kid");
    // Within the cooldown: bad signatures cost no fetch.
    let t0 = std::time::Instant::now();
    burst(100).await;
    assert!(t0.elapsed() < cooldown, "the burst outlasted the cooldown");
    assert_eq!(h.jwks_fetches(), 2, "within the cooldown: no fetch");
    // After it: a burst costs one coalesced fetch.
    tokio::time::sleep(cooldown).await;
    let t0 = std::time::Instant::now();
    burst(100).await;
    assert!(t0.elapsed() < cooldown, "the burst outlasted the cooldown");
    assert_eq!(
        h.jwks_fetches(),
        3,
        "after the cooldown: one fetch for the burst"
    );

    // The known kid "k" (key A in the cache) now names B at the provider: a B-signed token
    // with kid "k" fails on A, refetches once the cooldown is over, and verifies.
    tokio::time::sleep(cooldown).await;
    phase.store(2, std::sync::atomic::Ordering::SeqCst);
    let r = a.authenticate_token(b_as_k, &ctx).await.unwrap().unwrap();
    assert_eq!(r.user.name(), "jane");
    assert_eq!(
        h.jwks_fetches(),
        4,
        "one refetch for a known kid whose key failed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_groups_claims() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let (valid, expired) = (now + 3600, now - 3600);
    let good = jwks(f, &["rsa.jwk"]);
    // Claim JWTs served at /groups/<i>; minted once the site URL (the issuer) is known.
    let served: Arc<OnceLock<Vec<Option<String>>>> = Arc::new(OnceLock::new());
    let sv = served.clone();
    let (server, url) = site(&pki, move |s, b| {
        if s.uri == "/.well-known/openid-configuration" {
            return discovery_doc(b);
        }
        if s.uri == "/keys" {
            return Reply::Http(200, vec![], good.clone());
        }
        let Some(i) = s
            .uri
            .strip_prefix("/groups/")
            .and_then(|i| i.parse::<usize>().ok())
        else {
            return Reply::Http(404, vec![], vec![]);
        };
        if s.headers.get("authorization").and_then(|v| v.to_str().ok())
            != Some("Bearer groups_token")
        {
            return Reply::Http(401, vec![], vec![]);
        }
        match sv.get().and_then(|v| v[i].clone()) {
            Some(jwt) if jwt == "CLOSE" => Reply::Close,
            Some(jwt) if jwt == "BIG" => Reply::Http(200, vec![], vec![b'a'; (64 << 10) + 1]),
            Some(jwt) => Reply::Http(
                200,
                vec![("content-type", "application/jwt".into())],
                jwt.into_bytes(),
            ),
            None => Reply::Http(404, vec![], vec![]),
        }
    })
    .await;
    let rsa = f.key("rsa.pem");
    let claim_jwt = |c: Value| Some(req(&rsa, "RS256", Some("thumbprint"), c));
    let ep = |i: usize| format!("{url}/groups/{i}");
    let id = |i: usize, name: &str, extra: Value, token: &str| {
        let mut c = json!({
            "iss": url, "aud": "my-client", "exp": valid, "username": "jane",
            "_claim_names": {name: "src1"},
            "_claim_sources": {"src1": {"endpoint": ep(i), "access_token": token}},
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        req(&rsa, "RS256", Some("thumbprint"), c)
    };
    let dist = |claims: Value| {
        let mut c = json!({"iss": url, "aud": "my-client", "exp": valid});
        for (k, v) in claims.as_object().unwrap() {
            c[k] = v.clone();
        }
        claim_jwt(c)
    };
    let wrap = "oidc: could not expand distributed claims: ";
    type Want = Result<Vec<&'static str>, String>;
    // (name, groups claim, groups prefix, ID token claims, endpoint JWT or a raw reply, want)
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Value,
        Option<Value>,
        Option<&'a str>,
        Want,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "groups-distributed",
            "groups",
            "",
            id(0, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["team1", "team2"]})),
            None,
            Ok(vec!["team1", "team2"]),
        ),
        (
            "groups-distributed-unusual-name",
            "rabbits",
            "",
            id(1, "rabbits", json!({}), "groups_token"),
            dist(json!({"rabbits": ["team1", "team2"]})),
            None,
            Ok(vec!["team1", "team2"]),
        ),
        (
            "group-string-claim-distributed",
            "groups",
            "",
            id(2, "groups", json!({}), "groups_token"),
            dist(json!({"groups": "team1"})),
            None,
            Ok(vec!["team1"]),
        ),
        (
            "groups-prefix-distributed",
            "groups",
            "groups:",
            id(3, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["team1", "team2"]})),
            None,
            Ok(vec!["groups:team1", "groups:team2"]),
        ),
        (
            "normal-claim-wins",
            "groups",
            "",
            id(4, "groups", json!({"groups": "team1"}), "groups_token"),
            dist(json!({"groups": ["team2"]})),
            None,
            Ok(vec!["team1"]),
        ),
        (
            "malformed-distributed-claim",
            "groups",
            "",
            id(5, "groups", json!({}), "groups_token"),
            dist(json!({})),
            None,
            Err(format!(
                "{wrap}jwt returned by distributed claim endpoint \"{}\" did not contain claim: groups",
                ep(5)
            )),
        ),
        (
            "wrong-audience",
            "groups",
            "",
            id(6, "groups", json!({}), "groups_token"),
            dist(json!({"aud": "your-client", "groups": ["team1"]})),
            None,
            Err(format!(
                "{wrap}verify distributed claim token: oidc: expected audience \"my-client\" got [\"your-client\"]"
            )),
        ),
        (
            "expired-token",
            "groups",
            "",
            id(7, "groups", json!({}), "groups_token"),
            dist(json!({"exp": expired, "groups": ["team1"]})),
            None,
            Err(format!(
                "{wrap}verify distributed claim token: oidc: token is expired (Token Expiry: {})",
                go_time_utc(expired)
            )),
        ),
        (
            "wrong access token (401)",
            "groups",
            "",
            id(8, "groups", json!({}), "s3cr3t-wrong-access-token"),
            dist(json!({"groups": ["team1"]})),
            None,
            Err(format!(
                "{wrap}while getting distributed claim \"groups\": error while getting distributed claim JWT: 401 Unauthorized"
            )),
        ),
        (
            "transport error",
            "groups",
            "",
            id(9, "groups", json!({}), "groups_token"),
            None,
            Some("CLOSE"),
            Err(format!(
                "{wrap}while getting distributed claim \"groups\": Get \"{}\": ",
                ep(9)
            )),
        ),
        (
            "another issuer",
            "groups",
            "",
            id(10, "groups", json!({}), "groups_token"),
            dist(json!({"iss": "https://evil.example", "groups": ["admins"]})),
            None,
            Err(format!(
                "{wrap}verifying untrusted issuer \"https://evil.example\" failed: verifier not initialized for issuer: \"https://evil.example\""
            )),
        ),
        (
            "response larger than 64 KiB",
            "groups",
            "",
            id(11, "groups", json!({}), "groups_token"),
            None,
            Some("BIG"),
            Err(format!(
                "{wrap}while getting distributed claim \"groups\": Get \"{}\": response body larger than 65536 bytes",
                ep(11)
            )),
        ),
        (
            "plain http endpoint refused",
            "groups",
            "",
            {
                let mut r = id(12, "groups", json!({}), "groups_token");
                r["claims"]["_claim_sources"]["src1"]["endpoint"] =
                    json!("http://127.0.0.1:1/groups");
                r
            },
            None,
            None,
            Err(format!(
                "{wrap}while getting distributed claim \"groups\": Get \"http://127.0.0.1:1/groups\": only https URLs are fetched"
            )),
        ),
        // go-jose v2.6.3's ParseSigned strips every `unicode.IsSpace` rune anywhere in the
        // claim source's body; here tab, LF, FF, CR and space are stripped (a vertical tab or
        // other Unicode space is refused: docs/compatibility.md). The payload segment is also
        // base64-decoded by Kubernetes' untrustedIssuer, where Go's decoder skips only CR and LF.
        // `{jwt}` stands for the endpoint JWT of the row.
        (
            "trailing newline",
            "groups",
            "",
            id(13, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["team1", "team2"]})),
            Some("{jwt}\n"),
            Ok(vec!["team1", "team2"]),
        ),
        (
            "surrounding white space",
            "groups",
            "",
            id(14, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["team1"]})),
            Some(" \t\r\n\x0c{jwt}\r\n \t"),
            Ok(vec!["team1"]),
        ),
        (
            "CRLF-wrapped every 16 characters",
            "groups",
            "",
            id(15, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["team1"]})),
            Some("WRAP"),
            Ok(vec!["team1"]),
        ),
        (
            "space inside the payload segment",
            "groups",
            "",
            id(16, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["team1"]})),
            Some("SPACE_IN_PAYLOAD"),
            Err(format!(
                "{wrap}getting untrusted issuer from endpoint {} failed for claim \"groups\": ",
                ep(16)
            )),
        ),
        (
            "vertical tab: stripped by go-jose, refused here (fails closed)",
            "groups",
            "",
            id(17, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["team1"]})),
            Some("{jwt}\x0b"),
            Err(format!(
                "{wrap}verify distributed claim token: oidc: malformed jwt: "
            )),
        ),
        (
            "id token without its username claim (the claim itself is fine)",
            "groups",
            "",
            {
                let mut r = id(18, "groups", json!({}), "groups_token");
                r["claims"].as_object_mut().unwrap().remove("username");
                r
            },
            dist(json!({"groups": ["team1"]})),
            None,
            Err(r#"oidc: parse username claims "username": claim not present"#.to_owned()),
        ),
        // Kubernetes writes the resolved value into the ID token's claims
        // (`allClaims[r.claim] = value`), so the username, uid and required claims see it as
        // the groups mapping does (their mappings: `mapped` below). Go's answers
        // (k8s.io/apiserver v0.37.2 `oidc.New` against an httptest issuer).
        (
            "required claim satisfied by the distributed value",
            "groups",
            "",
            id(19, "groups", json!({}), "groups_token"),
            dist(json!({"groups": "admins"})),
            None,
            Ok(vec!["admins"]),
        ),
        (
            "username from the distributed claim",
            "groups",
            "",
            id(20, "groups", json!({}), "groups_token"),
            dist(json!({"groups": "admins"})),
            None,
            Ok(vec!["admins"]),
        ),
        (
            "uid from the distributed claim",
            "groups",
            "",
            id(21, "groups", json!({}), "groups_token"),
            dist(json!({"groups": "admins"})),
            None,
            Ok(vec!["admins"]),
        ),
        (
            "required claim on a distributed array",
            "groups",
            "",
            id(22, "groups", json!({}), "groups_token"),
            dist(json!({"groups": ["admins", "x"]})),
            None,
            Err(
                "oidc: parse claim groups: json: cannot unmarshal array into Go value of type string"
                    .to_owned(),
            ),
        ),
        (
            "required claim not matching the distributed value",
            "groups",
            "",
            id(23, "groups", json!({}), "groups_token"),
            dist(json!({"groups": "admins"})),
            None,
            Err(
                "oidc: required claim groups value does not match. Got = admins, want = other"
                    .to_owned(),
            ),
        ),
        (
            "only the resolved claim is copied from the endpoint JWT",
            "groups",
            "",
            id(24, "groups", json!({}), "groups_token"),
            dist(json!({"groups": "admins", "role": "boss"})),
            None,
            Err("oidc: required claim role not present in ID token".to_owned()),
        ),
        (
            "the ID token's own claim wins for required claims too",
            "groups",
            "",
            id(25, "groups", json!({"groups": "devs"}), "groups_token"),
            dist(json!({"groups": "admins"})),
            None,
            Err(
                "oidc: required claim groups value does not match. Got = devs, want = admins"
                    .to_owned(),
            ),
        ),
        (
            "email_verified resolved distributedly",
            "email_verified",
            "",
            id(26, "email_verified", json!({"email": "jane@example.com"}), "groups_token"),
            dist(json!({"email_verified": false})),
            None,
            Err("oidc: email not verified".to_owned()),
        ),
    ];
    // The rows that map more than the groups from the claims: (row, username claim, uid claim,
    // required claims, the user's name and uid).
    type Mapped<'a> = (
        &'a str,
        &'a str,
        Option<&'a str>,
        &'a [(&'a str, &'a str)],
        &'a str,
        &'a str,
    );
    let mapped: &[Mapped<'_>] = &[
        (
            "required claim satisfied by the distributed value",
            "username",
            None,
            &[("groups", "admins")],
            "jane",
            "",
        ),
        (
            "username from the distributed claim",
            "groups",
            None,
            &[],
            "admins",
            "",
        ),
        (
            "uid from the distributed claim",
            "username",
            Some("groups"),
            &[],
            "jane",
            "admins",
        ),
        (
            "required claim on a distributed array",
            "username",
            None,
            &[("groups", "admins")],
            "",
            "",
        ),
        (
            "required claim not matching the distributed value",
            "username",
            None,
            &[("groups", "other")],
            "",
            "",
        ),
        (
            "only the resolved claim is copied from the endpoint JWT",
            "username",
            None,
            &[("role", "boss")],
            "",
            "",
        ),
        (
            "the ID token's own claim wins for required claims too",
            "username",
            None,
            &[("groups", "admins")],
            "",
            "",
        ),
        (
            "email_verified resolved distributedly",
            "email",
            None,
            &[],
            "",
            "",
        ),
    ];
    // Mint every ID token and endpoint JWT in one jwcrypto run.
    let mut reqs = Vec::new();
    for c in &cases {
        reqs.push(c.3.clone());
        reqs.push(c.4.clone().unwrap_or_else(|| dist(json!({})).unwrap()));
    }
    let minted = mint(&reqs);
    let served_jwts: Vec<Option<String>> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| match c.5 {
            Some("WRAP") => {
                let jwt = minted[2 * i + 1].as_bytes();
                let lines: Vec<&str> = jwt
                    .chunks(16)
                    .map(|l| std::str::from_utf8(l).unwrap())
                    .collect();
                Some(lines.join("\r\n"))
            }
            Some("SPACE_IN_PAYLOAD") => {
                let jwt = &minted[2 * i + 1];
                let at = jwt.find('.').unwrap() + 5;
                Some(format!("{} {}", &jwt[..at], &jwt[at..]))
            }
            Some(raw) => Some(raw.replace("{jwt}", &minted[2 * i + 1])),
            None => c.4.as_ref().map(|_| minted[2 * i + 1].clone()),
        })
        .collect();
    served.set(served_jwts).unwrap();
    for (i, (name, claim, prefix, _, _, _, want)) in cases.into_iter().enumerate() {
        let mut c = cfg(&url, Some(&pki.ca_pem));
        c.groups = Some(PrefixedClaim {
            claim: claim.into(),
            prefix: prefix.into(),
        });
        let row = mapped.iter().find(|m| m.0 == name);
        let (want_name, want_uid) = row.map_or(("jane", ""), |m| (m.4, m.5));
        if let Some(&(_, username, uid, required, _, _)) = row {
            c.username.claim = username.into();
            c.uid_claim = uid.map(str::to_owned);
            c.required_claims = required
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        }
        let a = Arc::new(OidcAuthenticator::new(c));
        let h = spawn(&a, fast()).unwrap();
        assert_eq!(first_outcome(&h).await, Ok(()), "{name}");
        let before = server.seen.lock().unwrap().len();
        let got = a
            .authenticate_token(&minted[2 * i], &Context::default())
            .await;
        let first_ok = got.is_ok();
        match (want, got) {
            (Ok(groups), Ok(Some(r))) => {
                assert_eq!(r.user.name(), want_name, "{name}");
                assert_eq!(r.user.uid(), want_uid, "{name}");
                assert_eq!(r.user.groups().collect::<Vec<_>>(), groups, "{name}");
            }
            (Err(msg), Err(e)) => {
                let text = e.to_string();
                assert!(text.starts_with(&msg), "{name}: {text}");
                assert!(
                    !text.contains("s3cr3t") && !format!("{e:?}").contains("s3cr3t"),
                    "{name}: access token leaked"
                );
            }
            (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
        }
        let hit_endpoint = server.seen.lock().unwrap()[before..]
            .iter()
            .any(|s| s.uri.starts_with("/groups/"));
        assert_eq!(
            hit_endpoint,
            ![
                "normal-claim-wins",
                "plain http endpoint refused",
                "the ID token's own claim wins for required claims too"
            ]
            .contains(&name),
            "{name}"
        );
        // The same token again: a claim that verified is reused for 10 s (kube-apiserver's
        // token cache spares its resolver the same fetch); one that failed is fetched anew.
        let before = server.seen.lock().unwrap().len();
        let again = a
            .authenticate_token(&minted[2 * i], &Context::default())
            .await;
        assert_eq!(again.is_ok(), first_ok, "{name}: the same answer again");
        let refetched = server.seen.lock().unwrap()[before..]
            .iter()
            .any(|s| s.uri.starts_with("/groups/"));
        // A body that verified and held the claim is kept even when the ID token's own claims
        // fail the mapping.
        let body_refused =
            !first_ok && !name.starts_with("id token without its username claim") && row.is_none();
        assert_eq!(
            refetched,
            hit_endpoint && body_refused,
            "{name}: fetched again"
        );
    }
}

/// Go's `url.Parse` lower-cases the scheme, so Kubernetes accepts an issuer written
/// `HTTPS://…` and discovers it, fetches its JWKS (also `HTTPS://…` here) and accepts tokens
/// whose `iss` is that string exactly. Each row: how the issuer's scheme is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issuer_scheme_in_any_case_is_discovered() {
    let Some(f) = fixture() else { return };
    for scheme in ["HTTPS://", "hTtPs://"] {
        let pki = Pki::new();
        let good = jwks(f, &["rsa.jwk"]);
        let (server, url) = site(&pki, move |s, b| {
            let issuer = b.replacen("https://", scheme, 1);
            match s.uri.as_str() {
                "/.well-known/openid-configuration" => {
                    json_reply(json!({"issuer": issuer, "jwks_uri": format!("{issuer}/keys")}))
                }
                "/keys" => Reply::Http(200, vec![], good.clone()),
                _ => Reply::Http(404, vec![], vec![]),
            }
        })
        .await;
        let issuer = url.replacen("https://", scheme, 1);
        let a = Arc::new(OidcAuthenticator::new(cfg(&issuer, Some(&pki.ca_pem))));
        let h = spawn(&a, fast()).unwrap();
        assert_eq!(first_outcome(&h).await, Ok(()), "{scheme}");
        let token = mint(&[req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            json!({"iss": issuer, "aud": "my-client", "exp": 4_000_000_000i64, "username": "jane"}),
        )])
        .remove(0);
        let r = a
            .authenticate_token(&token, &Context::default())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r.user.name(), "jane", "{scheme}");
        assert_eq!(h.jwks_fetches(), 1, "{scheme}");
        drop(server);
    }
}

/// go-oidc builds the discovery URL with `strings.TrimSuffix(issuer, "/")`: one trailing slash
/// goes, so an issuer ending `//` is discovered at `…/a//.well-known/openid-configuration` (all
/// trailing slashes used to be stripped: `/a/.well-known/…`, a URL Kubernetes never fetches).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issuer_with_two_trailing_slashes_loses_one() {
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let good = jwks(f, &["rsa.jwk"]);
    let (server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/a//.well-known/openid-configuration" => {
            json_reply(json!({"issuer": format!("{b}/a//"), "jwks_uri": format!("{b}/keys")}))
        }
        "/keys" => Reply::Http(200, vec![], good.clone()),
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    let issuer = format!("{url}/a//");
    let a = Arc::new(OidcAuthenticator::new(cfg(&issuer, Some(&pki.ca_pem))));
    let h = spawn(&a, fast()).unwrap();
    assert_eq!(first_outcome(&h).await, Ok(()));
    let seen: Vec<String> = server
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.uri.clone())
        .collect();
    assert_eq!(seen, ["/a//.well-known/openid-configuration", "/keys"]);
}

/// The value of the one line of `text` that starts with `prefix` (a series name and labels).
fn series_value(text: &str, prefix: &str) -> Option<f64> {
    let mut found = text.lines().filter_map(|l| l.strip_prefix(prefix));
    let v = found.next()?.trim().parse().ok();
    assert!(found.next().is_none(), "two series {prefix}");
    v
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Kubernetes' `apiserver_authentication_jwt_authenticator_*` metrics over a JWKS that first
/// answers and then fails: the latency of each token the authenticator owns by result (none for
/// another issuer's token or one whose audiences it cannot serve), the last fetch time by
/// result, and the hash of the last key set fetched, labelled with the issuer's and the API
/// server identity's hashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_authenticator_metrics() {
    use kube_authn::token::oidc::metrics::{JwtAuthenticatorMetrics, hash_label};
    static METRICS: JwtAuthenticatorMetrics = JwtAuthenticatorMetrics::new();
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let good = jwks(f, &["rsa.jwk"]);
    let served = good.clone();
    let (server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/.well-known/openid-configuration" => discovery_doc(b),
        "/keys" => match CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => Reply::Http(200, vec![], served.clone()),
            _ => Reply::Http(503, vec![], b"down".to_vec()),
        },
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    let before = unix_now();
    let a = Arc::new(
        OidcAuthenticator::new(cfg(&url, Some(&pki.ca_pem)))
            .with_metrics(&METRICS)
            .with_api_audiences(["api"].into()),
    );
    let h = spawn(
        &a,
        fast()
            .with_refresh_cooldown(Duration::from_secs(60))
            .with_apiserver_id("apiserver-test"),
    )
    .unwrap();
    assert_eq!(first_outcome(&h).await, Ok(()));
    let iss_hash = hash_label(&url);
    let api_hash = hash_label("apiserver-test");
    let mut text = String::new();
    METRICS.encode(&mut text);
    let info = format!(
        "apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info{{apiserver_id_hash=\"{api_hash}\",hash=\"{}\",jwt_issuer_hash=\"{iss_hash}\"}} ",
        hash_label(std::str::from_utf8(&good).unwrap())
    );
    let stamp = |result: &str| {
        format!(
            "apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds{{apiserver_id_hash=\"{api_hash}\",jwt_issuer_hash=\"{iss_hash}\",result=\"{result}\"}} "
        )
    };
    assert_eq!(series_value(&text, &info), Some(1.0), "{text}");
    let ok_at = series_value(&text, &stamp("success")).expect("success timestamp");
    assert!((before..=unix_now()).contains(&ok_at), "{ok_at} {text}");
    assert_eq!(series_value(&text, &stamp("failure")), None, "{text}");
    assert!(
        !text.contains("jwt_authenticator_latency_seconds"),
        "no latency series before a token: {text}"
    );

    let claims =
        |u: &str| json!({"iss": url, "aud": "my-client", "exp": 4_000_000_000i64, "username": u});
    let tokens = mint(&[
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            claims("jane"),
        ),
        req(
            &f.key("rsa2.pem"),
            "RS256",
            Some("thumbprint"),
            claims("mallory"),
        ),
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            json!({"iss": "https://other.example", "aud": "my-client", "exp": 4_000_000_000i64, "username": "x"}),
        ),
    ]);
    // (name, token, requested audiences, answered with a user / an error / not mine)
    type Row<'a> = (&'a str, &'a str, Option<&'a [&'a str]>, Option<bool>);
    let rows: [Row<'_>; 5] = [
        ("owned, valid", &tokens[0], None, Some(true)),
        (
            "owned, unknown key: refetch fails",
            &tokens[1],
            None,
            Some(false),
        ),
        (
            "owned, valid again: last good keys",
            &tokens[0],
            Some(&["api"]),
            Some(true),
        ),
        (
            "owned, audiences it cannot serve",
            &tokens[0],
            Some(&["other"]),
            None,
        ),
        ("another issuer", &tokens[2], None, None),
    ];
    let (mut ok, mut failed) = (0, 0);
    for (name, token, audiences, want) in rows {
        let ctx = match audiences {
            Some(a) => {
                Context::with_audiences(a.iter().map(|s| s.to_string()).collect::<Vec<_>>().into())
            }
            None => Context::default(),
        };
        let got = a.authenticate_token(token, &ctx).await;
        match want {
            Some(true) => {
                assert!(matches!(got, Ok(Some(_))), "{name}: {got:?}");
                ok += 1;
            }
            Some(false) => {
                assert!(got.is_err(), "{name}: {got:?}");
                failed += 1;
            }
            None => assert!(matches!(got, Ok(None)), "{name}: {got:?}"),
        }
        assert_eq!(METRICS.latency_count(&url, true), ok, "{name}");
        assert_eq!(METRICS.latency_count(&url, false), failed, "{name}");
    }
    let mut text = String::new();
    METRICS.encode(&mut text);
    // The failed refetch: a failure time, the success time and the key set hash unchanged.
    let failed_at = series_value(&text, &stamp("failure")).expect("failure timestamp");
    assert!(failed_at >= ok_at && failed_at <= unix_now(), "{text}");
    assert_eq!(
        series_value(&text, &stamp("success")),
        Some(ok_at),
        "{text}"
    );
    assert_eq!(series_value(&text, &info), Some(1.0), "{text}");
    for (result, n) in [("success", 2.0), ("failure", 1.0)] {
        let count = format!(
            "apiserver_authentication_jwt_authenticator_latency_seconds_count{{jwt_issuer_hash=\"{iss_hash}\",result=\"{result}\"}} "
        );
        assert_eq!(series_value(&text, &count), Some(n), "{result}: {text}");
    }
    assert!(
        !text.contains(&hash_label("https://other.example")),
        "{text}"
    );
    drop(server);
}

/// A `200` whose body is a key set without a usable key is a successful *fetch* for the
/// metrics (Kubernetes checks only that it decodes as a JWKS), though the authenticator stays
/// uninitialised; a body that is not a key set is a failed one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwks_fetch_metrics_success_means_a_decodable_key_set() {
    use kube_authn::token::oidc::metrics::{JwtAuthenticatorMetrics, hash_label};
    // (name, JWKS body, a fetch that succeeded?)
    let rows: [(&str, &'static [u8], bool); 7] = [
        ("no usable key", br#"{"keys":[]}"#, true),
        // go-oidc decodes both as an empty key set (Go's `encoding/json`: a missing or
        // `null` slice is empty); they used to count as failures.
        ("an empty object", b"{}", true),
        ("keys null", br#"{"keys":null}"#, true),
        ("keys in another case", br#"{"KEYS":[]}"#, true),
        // go-jose cannot decode a key of an unknown type, so Kubernetes counts a failure (and
        // refuses the whole set); we skip the key: docs/compatibility.md.
        (
            "only a key of an unknown type",
            br#"{"keys":[{"kty":"foo"}]}"#,
            true,
        ),
        ("not a key set", br#"{"keys":5}"#, false),
        ("not JSON", b"<html>", false),
    ];
    for (name, body, success) in rows {
        let pki = Pki::new();
        let (server, url) = site(&pki, move |s, b| match s.uri.as_str() {
            "/.well-known/openid-configuration" => discovery_doc(b),
            "/keys" => Reply::Http(200, vec![], body.to_vec()),
            _ => Reply::Http(404, vec![], vec![]),
        })
        .await;
        // A registry per row: a port (so an issuer URL) may be reused by a later row.
        let metrics: &'static JwtAuthenticatorMetrics =
            Box::leak(Box::new(JwtAuthenticatorMetrics::new()));
        let a =
            Arc::new(OidcAuthenticator::new(cfg(&url, Some(&pki.ca_pem))).with_metrics(metrics));
        let h = spawn(&a, fast()).unwrap();
        assert!(first_outcome(&h).await.is_err(), "{name}");
        let mut text = String::new();
        metrics.encode(&mut text);
        let iss_hash = hash_label(&url);
        let stamp = |result: &str| {
            format!(
                "apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds{{apiserver_id_hash=\"\",jwt_issuer_hash=\"{iss_hash}\",result=\"{result}\"}} "
            )
        };
        let info = format!(
            "apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info{{apiserver_id_hash=\"\",hash=\"{}\",jwt_issuer_hash=\"{iss_hash}\"}} ",
            hash_label(std::str::from_utf8(body).unwrap())
        );
        assert_eq!(
            series_value(&text, &stamp("success")).is_some(),
            success,
            "{name}: {text}"
        );
        assert_eq!(
            series_value(&text, &stamp("failure")).is_some(),
            !success,
            "{name}: {text}"
        );
        assert_eq!(
            series_value(&text, &info).is_some(),
            success,
            "{name}: {text}"
        );
        drop(h);
        drop(server);
    }
}

/// An AuthenticationConfiguration for `issuer` (CA inline): user names from `username` with
/// `prefix`, audience `my-client`; `extra` is appended (another section).
fn authn_config(issuer: &str, ca_pem: &str, prefix: &str, extra: &str) -> String {
    let ca: String = ca_pem.lines().map(|l| format!("      {l}\n")).collect();
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: {issuer}\n    audiences: [my-client]\n    certificateAuthority: |\n{ca}  claimMappings:\n    username:\n      claim: username\n      prefix: \"{prefix}\"\n{extra}"
    )
}

/// kube-apiserver's automatic reload of `--authentication-config`, row by row: what the file is
/// changed to, whether the attempt counts as a success or a failure (or is no attempt), and
/// the user the same token then maps to (the configuration in effect). Invalid text is tried
/// once (tracked); an unreadable file or an issuer that does not come up in time is tried again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_config_reload() {
    use kube_authn::token::oidc::metrics::{ConfigControllerMetrics, hash_label};
    use kube_authn::token::oidc::reload::{AuthenticationConfigReloader, ReloadOptions};
    static METRICS: ConfigControllerMetrics = ConfigControllerMetrics::new();
    let Some(f) = fixture() else { return };
    let pki = Pki::new();
    let good = jwks(f, &["rsa.jwk"]);
    let (server, url) = site(&pki, move |s, b| match s.uri.as_str() {
        "/.well-known/openid-configuration" => discovery_doc(b),
        "/keys" => Reply::Http(200, vec![], good.clone()),
        _ => Reply::Http(404, vec![], vec![]),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authn.yaml");
    let config = |prefix: &str, extra: &str| authn_config(&url, &pki.ca_pem, prefix, extra);
    let first = config("a:", "");
    std::fs::write(&path, &first).unwrap();
    let reloader = AuthenticationConfigReloader::start(
        path.clone(),
        first.clone().into_bytes(),
        None,
        vec!["https://kubernetes.default.svc".into()],
        fast(),
        ReloadOptions::default()
            .with_timing(
                Duration::from_millis(20),
                Duration::from_secs(3),
                Duration::from_millis(300),
            )
            .with_apiserver_id("apiserver-test")
            .with_metrics(&METRICS),
    )
    .unwrap();
    let authn = reloader.authenticator();
    let token = mint(&[req(
        &f.key("rsa.pem"),
        "RS256",
        Some("thumbprint"),
        json!({"iss": url, "aud": "my-client", "exp": 4_000_000_000i64, "username": "jane"}),
    )])
    .remove(0);
    let user = || async {
        match authn.authenticate_token(&token, &Context::default()).await {
            Ok(Some(r)) => Ok(r.user.name().to_owned()),
            Ok(None) => Err("not mine".to_owned()),
            Err(e) => Err(e.to_string()),
        }
    };
    // Waits (bounded) until `pred` holds.
    async fn until(what: &str, mut pred: impl FnMut() -> bool) {
        for _ in 0..1200 {
            if pred() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("timed out waiting for {what}");
    }
    let mut last = Err(String::new());
    for _ in 0..200 {
        last = user().await;
        if last.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(last.as_deref(), Ok("a:jane"));
    let info = |text: &[u8]| {
        let mut m = String::new();
        METRICS.encode(&mut m);
        m.contains(&format!(
            "apiserver_authentication_config_controller_last_config_info{{apiserver_id_hash=\"{}\",hash=\"{}\"}} 1\n",
            hash_label("apiserver-test"),
            hash_label(text)
        ))
    };
    assert!(info(first.as_bytes()), "the start-up configuration's hash");

    enum Change {
        Write(Vec<u8>),
        Remove,
    }
    // (name, change, new successes and failures it causes, retried?, user afterwards)
    let unreachable = authn_config("https://127.0.0.1:9", &pki.ca_pem, "x:", "");
    let json_config = serde_json::to_string(&json!({
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AuthenticationConfiguration",
        "jwt": [{
            "issuer": {"url": url, "audiences": ["my-client"], "certificateAuthority": pki.ca_pem},
            "claimMappings": {"username": {"claim": "username", "prefix": "e@:"}},
        }],
    }))
    .unwrap();
    let (head, tail) = json_config.split_once("e@:").unwrap();
    let not_utf8 = [head.as_bytes(), b"e\xff:", tail.as_bytes()].concat();
    type Row<'a> = (&'a str, Change, (u64, u64), bool, &'a str);
    let rows: Vec<Row<'_>> = vec![
        (
            "the same text: no attempt",
            Change::Write(first.clone().into()),
            (0, 0),
            false,
            "a:jane",
        ),
        (
            "a new prefix",
            Change::Write(config("b:", "").into()),
            (1, 0),
            false,
            "b:jane",
        ),
        (
            "not YAML: tried once",
            Change::Write(b"{".to_vec()),
            (0, 1),
            false,
            "b:jane",
        ),
        (
            "an anonymous section the server did not start with",
            Change::Write(config("c:", "anonymous:\n  enabled: true\n").into()),
            (0, 1),
            false,
            "b:jane",
        ),
        (
            "a service-account issuer",
            Change::Write(
                authn_config("https://kubernetes.default.svc", &pki.ca_pem, "d:", "").into(),
            ),
            (0, 1),
            false,
            "b:jane",
        ),
        (
            "an issuer that never comes up: tried again",
            Change::Write(unreachable.into()),
            (0, 2),
            true,
            "b:jane",
        ),
        (
            "the file removed: tried again",
            Change::Remove,
            (0, 2),
            true,
            "b:jane",
        ),
        (
            // Go reads the byte as U+FFFD and hashes the file as read (the metric's hash is
            // `sha256sum` of the file, not of its decoded text).
            "JSON with a byte that is not UTF-8 in a string",
            Change::Write(not_utf8),
            (1, 0),
            false,
            "e\u{fffd}:jane",
        ),
        (
            "back to the first",
            Change::Write(first.clone().into()),
            (1, 0),
            false,
            "a:jane",
        ),
    ];
    let mut previous_retried = false;
    for (name, change, (new_ok, new_failed), retried, want_user) in rows {
        let (ok0, failed0) = (METRICS.reloads(true), METRICS.reloads(false));
        let text = match change {
            Change::Write(t) => {
                // Atomically (a rename), as a ConfigMap update lands: a reader of a file being
                // rewritten in place may see it empty or cut short, which is a failed attempt.
                let tmp = dir.path().join("authn.yaml.tmp");
                std::fs::write(&tmp, &t).unwrap();
                std::fs::rename(&tmp, &path).unwrap();
                Some(t)
            }
            Change::Remove => {
                std::fs::remove_file(&path).unwrap();
                None
            }
        };
        until(name, || {
            METRICS.reloads(true) == ok0 + new_ok && METRICS.reloads(false) >= failed0 + new_failed
        })
        .await;
        if !retried {
            // Tracked (or applied): nothing more happens while the file stays as it is.
            let failed = METRICS.reloads(false);
            tokio::time::sleep(Duration::from_millis(400)).await;
            assert_eq!(
                METRICS.reloads(false),
                failed,
                "{name}: no further attempts"
            );
            if !previous_retried {
                // (After a retried row, one of its attempts may end within this one.)
                assert_eq!(failed, failed0 + new_failed, "{name}");
            }
        }
        assert_eq!(METRICS.reloads(true), ok0 + new_ok, "{name}");
        assert_eq!(user().await.as_deref(), Ok(want_user), "{name}");
        if let (Some(t), 1) = (&text, new_ok) {
            assert!(info(t), "{name}: the applied configuration's hash");
        }
        // The issuer stays configured throughout: its JWKS series is never removed.
        let mut jwks_text = String::new();
        kube_authn::token::oidc::metrics::JWT_AUTHENTICATOR_METRICS.encode(&mut jwks_text);
        assert!(
            jwks_text.contains(&format!(
                "_jwks_fetch_last_key_set_info{{apiserver_id_hash=\"\",hash=\"{}\",jwt_issuer_hash=\"{}\"}} 1",
                hash_label(std::str::from_utf8(&jwks(f, &["rsa.jwk"])).unwrap()),
                hash_label(&url)
            )),
            "{name}: {jwks_text}"
        );
        previous_retried = retried;
    }
    assert!(
        info(first.as_bytes()),
        "the last applied configuration's hash"
    );
    assert_eq!(reloader.issuers(), 1);
    drop(reloader);
    drop(server);
}

/// Before the first attempt ends the health error is Kubernetes' initial one
/// (`oidc: authenticator for issuer %q is not initialized`, oidc.go, inside `HealthCheck`'s
/// `is not healthy: %w`), while tokens get `oidc: authenticator not initialized`. It used to
/// read `… is not healthy: oidc: authenticator not initialized`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_before_the_first_attempt_ends_is_kubernetes_text() {
    let pki = Pki::new();
    // Discovery never answers: the first attempt does not end within the test.
    let (server, url) = site(&pki, |_, _| Reply::Hang).await;
    let a = Arc::new(OidcAuthenticator::new(cfg(&url, Some(&pki.ca_pem))));
    let h = spawn(&a, fast().with_timeout(Duration::from_secs(30))).unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        h.health(),
        Err(format!(
            "oidc: authenticator for issuer \"{url}\" is not healthy: oidc: authenticator for issuer \"{url}\" is not initialized"
        ))
    );
    let token = format!(
        "eyJhbGciOiJSUzI1NiJ9.{}.c2ln",
        base64_url(&json!({"iss": url}).to_string())
    );
    let e = a
        .authenticate_token(&token, &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "oidc: authenticator not initialized");
    drop(h);
    drop(server);
}

/// Fetch failures name what Kubernetes names. A body that breaks off (`Content-Length: 100`,
/// 7 bytes, closed) is `unexpected EOF` under go-oidc's `unable to read response body: %v`
/// (discovery) or under Kubernetes' metrics round tripper's `error reading JWKS response: %w`
/// (JWKS). A failed discovery through a discoveryURL names the issuer's
/// `/.well-known/openid-configuration`: Kubernetes' `discoveryURLRoundTripper` sends a
/// rewritten clone of that request, so net/http's `url.Error` names the original.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_failures_name_what_kubernetes_names() {
    let pki = Pki::new();
    let short = Server::start_raw(
        &pki.server_cert_pem,
        &pki.server_key_pem,
        None,
        RawFault::Garbage(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort!!"),
    );
    let short_url = short.url("");
    let keys_url = short.url("/keys");
    let (site, site_url) = site(&pki, move |_, b| {
        json_reply(json!({"issuer": b, "jwks_uri": keys_url.clone()}))
    })
    .await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_url = format!("https://{}/discovery", closed.local_addr().unwrap());
    drop(closed);
    let in_cluster = "https://issuer.example/a/";
    // (case, issuer, discoveryURL, the health error after `is not healthy: `, whole or prefix)
    let cases: [(&str, &str, Option<&str>, String, bool); 3] = [
        (
            "discovery body cut short",
            &short_url,
            None,
            "unable to read response body: unexpected EOF".into(),
            true,
        ),
        (
            "JWKS body cut short",
            &site_url,
            None,
            format!(
                "oidc: get keys failed Get \"{}/keys\": error reading JWKS response: unexpected EOF",
                short.url("")
            ),
            true,
        ),
        (
            "discoveryURL unreachable",
            in_cluster,
            Some(&closed_url),
            format!("Get \"{in_cluster}.well-known/openid-configuration\": "),
            false,
        ),
    ];
    for (case, issuer, discovery_url, want, whole) in cases {
        let mut c = cfg(issuer, Some(&pki.ca_pem));
        c.discovery_url = discovery_url.map(str::to_owned);
        let a = Arc::new(OidcAuthenticator::new(c));
        let h = spawn(&a, fast()).unwrap();
        let e = first_outcome(&h).await.unwrap_err();
        let want = format!("oidc: authenticator for issuer \"{issuer}\" is not healthy: {want}");
        if whole {
            assert_eq!(e, want, "{case}");
        } else {
            assert!(e.starts_with(&want), "{case}: {e}");
        }
    }
    drop(site);
}

fn base64_url(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
}

/// A zero retry delay (through `with_retry` or the public fields) is raised to
/// `MIN_RETRY` (100 ms): an issuer that keeps failing sees about ten attempts a second, not
/// a tight loop (0 × 2 = 0 used to retry with no delay at all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_retry_delay_does_not_hammer_the_issuer() {
    let pki = Pki::new();
    for (name, opts) in [
        (
            "with_retry(0, 0)",
            fast().with_retry(Duration::ZERO, Duration::ZERO),
        ),
        ("public fields set to zero", {
            let mut o = fast();
            o.initial_retry = Duration::ZERO;
            o.retry_interval = Duration::ZERO;
            o
        }),
    ] {
        let (server, url) = site(&pki, |_, _| Reply::Http(404, vec![], vec![])).await;
        let a = Arc::new(OidcAuthenticator::new(cfg(&url, Some(&pki.ca_pem))));
        let h = spawn(&a, opts).unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(h);
        let attempts = server.seen.lock().unwrap().len();
        // One attempt at once, then one per 100 ms at most (some slack for a slow machine).
        assert!(
            (1..=12).contains(&attempts),
            "{name}: {attempts} attempts in 1 s"
        );
        drop(server);
    }
}

/// `initialized()` reports an initialisation task that ended without success (here: the
/// authenticator was dropped while its issuer was failing) as an error, instead of as
/// ready; the reload waits on it and would otherwise have swapped in a dead configuration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialized_is_an_error_when_the_task_ends_without_success() {
    let pki = Pki::new();
    let (server, url) = site(&pki, |_, _| Reply::Http(404, vec![], b"nope".to_vec())).await;
    let a = Arc::new(OidcAuthenticator::new(cfg(&url, Some(&pki.ca_pem))));
    let h = spawn(&a, fast()).unwrap();
    assert!(first_outcome(&h).await.is_err());
    drop(a);
    let got = tokio::time::timeout(Duration::from_secs(5), h.initialized())
        .await
        .expect("the task ends at its next attempt");
    assert_eq!(
        got,
        Err(format!(
            "oidc: authenticator for issuer \"{url}\" is not healthy: 404 Not Found: nope"
        ))
    );
    assert!(!h.is_initialized());
    drop(server);
}
