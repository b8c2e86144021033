//! OIDC authenticator pipeline (reference §3.4–3.6, vectors of `oidc_test.go` `TestToken`)
//! with tokens minted by jwcrypto. Keys are installed directly here; discovery and JWKS
//! fetching against a real provider are in tests/oidc_provider.rs, distributed claims in
//! tests/oidc_discovery.rs.

mod jwt_support;

use std::sync::Arc;

use jwt_support::*;
use kube_authn::authenticator::{Audiences, Context, TokenAuthenticator};
use kube_authn::jwt::FixedClock;
use kube_authn::jwt::alg::AlgorithmSet;
use kube_authn::jwt::key::parse_jwk;
use kube_authn::jwt::router::IssuerRouter;
use kube_authn::token::oidc::config::{JwtAuthenticatorConfig, OidcFlags, PrefixedClaim};
use kube_authn::token::oidc::{ERR_NOT_INITIALIZED, OidcAuthenticator};
use serde_json::json;

const ISS: &str = "https://auth.example.com";
const NOW: i64 = 1257894000;
const VALID: i64 = 1257897600;
const EXPIRED: i64 = 1257890400;

fn base_cfg() -> JwtAuthenticatorConfig {
    let mut c = OidcFlags {
        issuer_url: ISS.into(),
        client_id: "my-client".into(),
        ..Default::default()
    }
    .to_config(&[])
    .unwrap();
    c.username = PrefixedClaim {
        claim: "username".into(),
        prefix: String::new(),
    };
    c
}

fn auth(f: &Fixture, cfg: JwtAuthenticatorConfig, jwks: &[&str]) -> OidcAuthenticator {
    let a = OidcAuthenticator::new(cfg).with_clock(Arc::new(FixedClock::new(NOW)));
    a.set_keys(
        jwks.iter()
            .map(|n| Arc::new(parse_jwk(&f.read(n)).unwrap().unwrap()))
            .collect(),
    );
    a
}

#[test]
fn oidc_token_table() {
    let Some(f) = fixture() else { return };
    let claims = |extra: serde_json::Value| {
        let mut c = json!({"iss": ISS, "aud": "my-client", "exp": VALID});
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    type Cfg = Box<dyn Fn(&mut JwtAuthenticatorConfig)>;
    let none: fn() -> Cfg = || Box::new(|_| {});
    // The `groups` claim, no prefix (most of the groups rows).
    let groups: fn() -> Cfg = || {
        Box::new(|c| {
            c.groups = Some(PrefixedClaim {
                claim: "groups".into(),
                prefix: String::new(),
            })
        })
    };
    let rsa = f.key("rsa.pem");
    type Want = Result<(&'static str, &'static [&'static str]), &'static str>;
    let cases: Vec<(&str, Cfg, &[&str], serde_json::Value, Want)> = vec![
        (
            "token",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Ok(("jane", &[])),
        ),
        (
            "no-username",
            Box::new(|c| c.username.prefix = "prefix:".into()),
            &["rsa.jwk"],
            req(&rsa, "RS256", Some("thumbprint"), claims(json!({}))),
            Err(r#"oidc: parse username claims "username": claim not present"#),
        ),
        (
            "email",
            Box::new(|c| c.username.claim = "email".into()),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"email": "jane@example.com", "email_verified": true})),
            ),
            Ok(("jane@example.com", &[])),
        ),
        (
            "empty username, no prefix: refused (Kubernetes accepts it as \"\")",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": ""})),
            ),
            Err("oidc: empty username via claim mapping is not allowed"),
        ),
        (
            "empty verified email: refused",
            Box::new(|c| c.username.claim = "email".into()),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"email": "", "email_verified": true})),
            ),
            Err("oidc: empty username via claim mapping is not allowed"),
        ),
        (
            "empty username with a prefix: the prefix alone is the name",
            Box::new(|c| c.username.prefix = "oidc:".into()),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": ""})),
            ),
            Ok(("oidc:", &[])),
        ),
        (
            "email-not-verified",
            Box::new(|c| c.username.claim = "email".into()),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"email": "jane@example.com", "email_verified": false})),
            ),
            Err("oidc: email not verified"),
        ),
        (
            "no-email-verified-claim",
            Box::new(|c| c.username.claim = "email".into()),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"email": "jane@example.com"})),
            ),
            Ok(("jane@example.com", &[])),
        ),
        (
            "invalid-email-verified-claim",
            Box::new(|c| c.username.claim = "email".into()),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"email": "jane@example.com", "email_verified": "true"})),
            ),
            Err(
                "oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool",
            ),
        ),
        (
            "groups",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": ["team1", "team2"]})),
            ),
            Ok(("jane", &["team1", "team2"])),
        ),
        (
            "group-string-claim",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": "team1"})),
            ),
            Ok(("jane", &["team1"])),
        ),
        (
            "no-groups-claim",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Ok(("jane", &[])),
        ),
        (
            "invalid-groups-claim",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": 42})),
            ),
            Err(
                r#"oidc: parse groups claim "groups": json: cannot unmarshal number into Go value of type string"#,
            ),
        ),
        (
            "groups-array-with-a-number",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": [1]})),
            ),
            Err(
                r#"oidc: parse groups claim "groups": json: cannot unmarshal array into Go value of type string"#,
            ),
        ),
        (
            "groups-array-with-a-bool",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": ["team1", true]})),
            ),
            Err(
                r#"oidc: parse groups claim "groups": json: cannot unmarshal array into Go value of type string"#,
            ),
        ),
        (
            "groups-array-with-an-object",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": [{"name": "team1"}]})),
            ),
            Err(
                r#"oidc: parse groups claim "groups": json: cannot unmarshal array into Go value of type string"#,
            ),
        ),
        (
            "groups-array-with-an-array",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": [["team1"]]})),
            ),
            Err(
                r#"oidc: parse groups claim "groups": json: cannot unmarshal array into Go value of type string"#,
            ),
        ),
        (
            "groups-array-with-null (Go: the zero string)",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": [null, "team1"]})),
            ),
            Ok(("jane", &["", "team1"])),
        ),
        (
            "groups-object",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": {"team1": true}})),
            ),
            Err(
                r#"oidc: parse groups claim "groups": json: cannot unmarshal object into Go value of type string"#,
            ),
        ),
        (
            "groups-prefix",
            Box::new(|c| {
                c.username.prefix = "oidc:".into();
                c.groups = Some(PrefixedClaim {
                    claim: "groups".into(),
                    prefix: "groups:".into(),
                });
            }),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "groups": ["team1", "team2"]})),
            ),
            Ok(("oidc:jane", &["groups:team1", "groups:team2"])),
        ),
        (
            "aggregated-not-supported (ignored, no groups)",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(
                    json!({"username": "jane", "_claim_names": {"groups": "src1"}, "_claim_sources": {"src1": {"JWT": "some.jwt.token"}}}),
                ),
            ),
            Ok(("jane", &[])),
        ),
        (
            "malformed-claim-names",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(
                    json!({"username": "jane", "_claim_names": {"groups": "nonexistent-claim-source"}, "_claim_sources": {}}),
                ),
            ),
            Err("oidc: verify token: oidc: source does not exist"),
        ),
        (
            "required-claim",
            Box::new(|c| {
                c.required_claims = vec![
                    ("hd".into(), "example.com".into()),
                    ("sub".into(), "test".into()),
                ]
            }),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "hd": "example.com", "sub": "test"})),
            ),
            Ok(("jane", &[])),
        ),
        (
            "no-required-claim",
            Box::new(|c| c.required_claims = vec![("hd".into(), "example.com".into())]),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Err("oidc: required claim hd not present in ID token"),
        ),
        (
            "invalid-required-claim",
            Box::new(|c| c.required_claims = vec![("hd".into(), "example.com".into())]),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "hd": "example.org"})),
            ),
            Err(
                "oidc: required claim hd value does not match. Got = example.org, want = example.com",
            ),
        ),
        (
            "invalid-signature",
            none(),
            &["rsa2.jwk"],
            req(&rsa, "RS256", None, claims(json!({"username": "jane"}))),
            Err(
                "oidc: verify token: failed to verify signature: failed to verify id token signature",
            ),
        ),
        (
            "unknown kid",
            none(),
            &["rsa2.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Err(
                "oidc: verify token: failed to verify signature: failed to verify id token signature",
            ),
        ),
        (
            "expired",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "exp": EXPIRED})),
            ),
            Err(
                "oidc: verify token: oidc: token is expired (Token Expiry: 2009-11-10 22:00:00 +0000 UTC)",
            ),
        ),
        (
            "missing exp",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                json!({"iss": ISS, "aud": "my-client", "username": "jane"}),
            ),
            Err(
                "oidc: verify token: oidc: token is expired (Token Expiry: 0001-01-01 00:00:00 +0000 UTC)",
            ),
        ),
        (
            "exp as string",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "exp": "1257897600"})),
            ),
            // go-oidc's json.Number takes a quoted number; kube-authn refuses it (the
            // `exp as a quoted number` conformance vector holds both outcomes).
            Err(
                "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal string into Go struct field idToken.exp of type json.Number",
            ),
        ),
        (
            "aud as number",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "aud": 42})),
            ),
            Err(
                "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal number into Go struct field idToken.aud of type []string",
            ),
        ),
        (
            "nbf as string",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "nbf": "1"})),
            ),
            Err(
                "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal string into Go struct field idToken.nbf of type json.Number",
            ),
        ),
        (
            "_claim_names not an object",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "_claim_names": "groups"})),
            ),
            Err(
                "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal string into Go struct field idToken._claim_names of type map[string]string",
            ),
        ),
        (
            "escaped username and groups decode",
            groups(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "ja\"ne\u{e9}", "groups": ["a\nb", null]})),
            ),
            Ok(("ja\"ne\u{e9}", &["a\nb", ""])),
        ),
        (
            "invalid-aud",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "aud": "not-my-client"})),
            ),
            Err(r#"oidc: verify token: oidc: expected audience "my-client" got ["not-my-client"]"#),
        ),
        (
            "aud []",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "aud": []})),
            ),
            Err(r#"oidc: verify token: oidc: expected audience "my-client" got []"#),
        ),
        (
            "aud null (go-oidc reads it as one empty string)",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "aud": null})),
            ),
            Err(r#"oidc: verify token: oidc: expected audience "my-client" got [""]"#),
        ),
        (
            "multiple-audiences",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(
                    json!({"username": "jane", "aud": ["not-my-client", "my-client"], "azp": "not-my-client"}),
                ),
            ),
            Ok(("jane", &[])),
        ),
        (
            "multiple configured audiences, no match",
            Box::new(|c| c.audiences = vec!["random-client".into(), "my-client".into()]),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "aud": ["not-my-client"]})),
            ),
            Err(
                r#"oidc: verify token: oidc: expected audience in ["my-client" "random-client"] got ["not-my-client"]"#,
            ),
        ),
        (
            "invalid-signing-alg",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "PS256",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Err(
                r#"oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "PS256""#,
            ),
        ),
        (
            "ps256",
            Box::new(|c| c.signing_algs = AlgorithmSet::parse_kubernetes(["PS256"]).unwrap()),
            &["rsa.jwk"],
            req(
                &rsa,
                "PS256",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Ok(("jane", &[])),
        ),
        (
            "es512",
            Box::new(|c| c.signing_algs = AlgorithmSet::parse_kubernetes(["ES512"]).unwrap()),
            &["ec256.jwk", "ec521.jwk"],
            req(
                &f.key("ec521.pem"),
                "ES512",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Ok(("jane", &[])),
        ),
        (
            "unsupported alg: --oidc-signing-algs listed in flag order",
            Box::new(|c| {
                let f = OidcFlags {
                    issuer_url: ISS.into(),
                    client_id: "my-client".into(),
                    signing_algs: vec!["ES256".into(), "RS256".into(), "ES256".into()],
                    ..Default::default()
                }
                .to_config(&[])
                .unwrap();
                c.signing_algs = f.signing_algs;
                c.signing_alg_names = f.signing_alg_names;
            }),
            &["rsa.jwk"],
            req(
                &rsa,
                "PS256",
                Some("thumbprint"),
                claims(json!({"username": "jane"})),
            ),
            Err(
                r#"oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["ES256" "RS256" "ES256"] got "PS256""#,
            ),
        ),
        (
            "unsupported alg: an --authentication-config issuer lists all nine, sorted",
            Box::new(|c| {
                c.signing_algs = AlgorithmSet::KUBERNETES;
                c.signing_alg_names = Vec::new();
            }),
            &["rsa.jwk"],
            json!({"key": rsa, "header_raw": r#"{"alg":"none"}"#, "claims": claims(json!({"username": "jane"}))}),
            Err(
                r#"oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["ES256" "ES384" "ES512" "PS256" "PS384" "PS512" "RS256" "RS384" "RS512"] got "unsupported""#,
            ),
        ),
        (
            "alg none",
            none(),
            &["rsa.jwk"],
            json!({"key": rsa, "header_raw": r#"{"alg":"none"}"#, "claims": claims(json!({"username": "jane"}))}),
            Err(
                r#"oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "unsupported""#,
            ),
        ),
        (
            "credential id",
            none(),
            &["rsa.jwk"],
            req(
                &rsa,
                "RS256",
                Some("thumbprint"),
                claims(json!({"username": "jane", "jti": "1234"})),
            ),
            Ok(("jane", &[])),
        ),
    ];
    let tokens = mint(&cases.iter().map(|c| c.3.clone()).collect::<Vec<_>>());
    for ((name, edit, jwks, _, want), token) in cases.into_iter().zip(tokens) {
        let mut cfg = base_cfg();
        edit(&mut cfg);
        let a = auth(f, cfg, jwks);
        let got = a
            .authenticate_token(&token, &Context::default())
            .into_ready()
            .unwrap();
        match (want, got) {
            (Ok((user, groups)), Ok(Some(r))) => {
                assert_eq!(r.user.name(), user, "{name}");
                assert_eq!(r.user.groups().collect::<Vec<_>>(), groups, "{name}");
                if name == "credential id" {
                    assert_eq!(
                        r.user.extra()["authentication.kubernetes.io/credential-id"],
                        ["JTI=1234"]
                    );
                }
            }
            (Err(msg), Err(e)) => assert_eq!(e.to_string(), msg, "{name}"),
            (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn routing_initialisation_and_audience_agnostic() {
    let Some(f) = fixture() else { return };
    let tokens = mint(&[
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            json!({"iss": ISS, "aud": "my-client", "exp": VALID, "username": "jane"}),
        ),
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            json!({"iss": "https://example.com", "aud": "my-client", "exp": VALID, "username": "jane"}),
        ),
        req(
            &f.key("rsa.pem"),
            "RS256",
            Some("thumbprint"),
            json!({"iss": "accounts.google.com", "aud": "my-client", "exp": VALID, "email": "thomas.jefferson@gmail.com"}),
        ),
    ]);
    let a = Arc::new(
        OidcAuthenticator::new(base_cfg())
            .with_clock(Arc::new(FixedClock::new(NOW)))
            .with_api_audiences(Audiences::from(["api"])),
    );
    let mut router = IssuerRouter::new();
    router.add(ISS, a.clone());
    let ctx = Context::default();
    let go = |t: &str, ctx: &Context| router.authenticate_token(t, ctx).into_ready().unwrap();
    // Not initialised: tokens for this issuer fail, others skip.
    assert_eq!(
        go(&tokens[0], &ctx).unwrap_err().to_string(),
        ERR_NOT_INITIALIZED
    );
    assert!(
        go(&tokens[1], &ctx).unwrap().is_none(),
        "invalid-issuer is not mine"
    );
    a.set_keys(vec![Arc::new(
        parse_jwk(&f.read("rsa.jwk")).unwrap().unwrap(),
    )]);
    assert_eq!(go(&tokens[0], &ctx).unwrap().unwrap().user.name(), "jane");
    // Audience-agnostic: request audiences outside --api-audiences → skip; inside → echoed.
    assert!(
        go(
            &tokens[0],
            &Context::with_audiences(Audiences::from(["other"]))
        )
        .unwrap()
        .is_none()
    );
    let r = go(
        &tokens[0],
        &Context::with_audiences(Audiences::from(["api"])),
    )
    .unwrap()
    .unwrap();
    assert_eq!(r.audiences, Audiences::from(["api"]));
    // Key rotation: install a new set; the old key stops working.
    a.set_keys(vec![Arc::new(
        parse_jwk(&f.read("rsa2.jwk")).unwrap().unwrap(),
    )]);
    assert!(go(&tokens[0], &ctx).is_err());
    // accounts.google.com coalescing.
    let mut cfg = OidcFlags {
        issuer_url: "https://accounts.google.com".into(),
        client_id: "my-client".into(),
        username_claim: "email".into(),
        ..Default::default()
    }
    .to_config(&[])
    .unwrap();
    cfg.signing_algs = AlgorithmSet::RS256_ONLY;
    let g = OidcAuthenticator::new(cfg).with_clock(Arc::new(FixedClock::new(NOW)));
    g.set_keys(vec![Arc::new(
        parse_jwk(&f.read("rsa.jwk")).unwrap().unwrap(),
    )]);
    let r = g
        .authenticate_token(&tokens[2], &ctx)
        .into_ready()
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(r.user.name(), "thomas.jefferson@gmail.com");
}

/// kube-apiserver's mapping of the `--oidc-*` flags (`ToAuthenticationConfig` in
/// pkg/kubeapiserver/options/authentication.go; the signing algorithms are checked by
/// k8s.io/apiserver's `oidc.New`), one named row per rule.
#[test]
fn legacy_flag_config_rules() {
    let base = OidcFlags {
        issuer_url: ISS.into(),
        client_id: "my-client".into(),
        ..Default::default()
    };
    let issuer_prefix = "https://auth.example.com#";

    // --oidc-username-claim, --oidc-username-prefix (None = flag not given) → claim mapping.
    type UsernameRow<'a> = (&'a str, &'a str, Option<&'a str>, &'a str);
    let username: [UsernameRow<'_>; 10] = [
        (
            "defaults: sub, no prefix: <issuer-url>#",
            "sub",
            None,
            issuer_prefix,
        ),
        (
            "claim other than email, no prefix: <issuer-url>#",
            "preferred_username",
            None,
            issuer_prefix,
        ),
        (
            "an empty prefix is no prefix given: <issuer-url>#",
            "sub",
            Some(""),
            issuer_prefix,
        ),
        ("email, no prefix: none", "email", None, ""),
        ("email, empty prefix: none", "email", Some(""), ""),
        ("'-' means no prefix", "sub", Some("-"), ""),
        ("'-' with email means no prefix", "email", Some("-"), ""),
        (
            "an explicit prefix is used as given",
            "sub",
            Some("oidc:"),
            "oidc:",
        ),
        (
            "an explicit prefix with email is used as given",
            "email",
            Some("oidc:"),
            "oidc:",
        ),
        ("only '-' itself is special", "sub", Some("--"), "--"),
    ];
    for (name, claim, prefix, want) in username {
        let f = OidcFlags {
            username_claim: claim.into(),
            username_prefix: prefix.map(String::from),
            ..base.clone()
        };
        let c = f.to_config(&[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = PrefixedClaim {
            claim: claim.into(),
            prefix: want.into(),
        };
        assert_eq!(c.username, want, "{name}");
    }

    // --oidc-groups-claim, --oidc-groups-prefix → groups mapping (no issuer default, no '-').
    type GroupsRow<'a> = (
        &'a str,
        Option<&'a str>,
        &'a str,
        Option<(&'a str, &'a str)>,
    );
    let groups: [GroupsRow<'_>; 6] = [
        ("no groups claim: no groups", None, "", None),
        (
            "--oidc-groups-claim= (empty) is unset, as `len(GroupsClaim) > 0`",
            Some(""),
            "g:",
            None,
        ),
        (
            "no groups claim: the prefix alone is ignored",
            None,
            "g:",
            None,
        ),
        (
            "groups claim, prefix default: none",
            Some("groups"),
            "",
            Some(("groups", "")),
        ),
        (
            "groups claim, explicit prefix",
            Some("groups"),
            "oidc:",
            Some(("groups", "oidc:")),
        ),
        (
            "groups prefix '-' is not special",
            Some("groups"),
            "-",
            Some(("groups", "-")),
        ),
    ];
    for (name, claim, prefix, want) in groups {
        let f = OidcFlags {
            groups_claim: claim.map(String::from),
            groups_prefix: prefix.into(),
            ..base.clone()
        };
        let c = f.to_config(&[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = want.map(|(claim, prefix)| PrefixedClaim {
            claim: claim.into(),
            prefix: prefix.into(),
        });
        assert_eq!(c.groups, want, "{name}");
    }

    // --oidc-signing-algs: the nine RS/ES/PS algorithms only, Kubernetes' error text otherwise.
    use kube_authn::jwt::alg::Algorithm;
    let set = |algs: &[Algorithm]| algs.iter().fold(AlgorithmSet::EMPTY, |s, a| s.with(*a));
    type AlgsRow<'a> = (
        &'a str,
        Option<&'a [&'a str]>,
        Result<AlgorithmSet, &'a str>,
    );
    let algs: [AlgsRow<'_>; 9] = [
        ("default: RS256", None, Ok(AlgorithmSet::RS256_ONLY)),
        (
            "an explicit list",
            Some(&["ES256", "PS384", "RS512"]),
            Ok(set(&[Algorithm::ES256, Algorithm::PS384, Algorithm::RS512])),
        ),
        (
            "all nine",
            Some(&[
                "RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512",
            ]),
            Ok(AlgorithmSet::KUBERNETES),
        ),
        (
            "an empty list is RS256 (oidc.New's default)",
            Some(&[]),
            Ok(AlgorithmSet::RS256_ONLY),
        ),
        (
            "HMAC refused",
            Some(&["HS256"]),
            Err(r#"oidc: unsupported signing alg: "HS256""#),
        ),
        (
            "none refused",
            Some(&["none"]),
            Err(r#"oidc: unsupported signing alg: "none""#),
        ),
        (
            "EdDSA refused (not in Kubernetes' list)",
            Some(&["EdDSA"]),
            Err(r#"oidc: unsupported signing alg: "EdDSA""#),
        ),
        (
            "names are case-sensitive",
            Some(&["rs256"]),
            Err(r#"oidc: unsupported signing alg: "rs256""#),
        ),
        (
            "one bad name refuses the list",
            Some(&["RS256", "HS512"]),
            Err(r#"oidc: unsupported signing alg: "HS512""#),
        ),
    ];
    for (name, list, want) in algs {
        let f = OidcFlags {
            signing_algs: match list {
                None => OidcFlags::default().signing_algs,
                Some(l) => l.iter().map(|a| a.to_string()).collect(),
            },
            ..base.clone()
        };
        let got = f
            .to_config(&[])
            .map(|c| c.signing_algs)
            .map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(String::from), "{name}");
    }

    let http = OidcFlags {
        issuer_url: "http://auth.example.com".into(),
        ..base.clone()
    };
    assert_eq!(
        http.to_config(&[]).unwrap_err().to_string(),
        r#"jwt[0].issuer.url: Invalid value: "http://auth.example.com": URL scheme must be https"#
    );
    // kube-apiserver validates the configuration before `oidc.New` checks the algorithms: an
    // invalid issuer is reported, not the algorithm.
    let http_hs256 = OidcFlags {
        signing_algs: vec!["HS256".into()],
        ..http.clone()
    };
    assert_eq!(
        http_hs256.to_config(&[]).unwrap_err().to_string(),
        r#"jwt[0].issuer.url: Invalid value: "http://auth.example.com": URL scheme must be https"#
    );
    for (url, msg) in [
        (
            "https://user:pass@issuer-url",
            "URL must not contain a username or password",
        ),
        ("https://issuer-url?query", "URL must not contain a query"),
        (
            "https://issuer-url#fragment",
            "URL must not contain a fragment",
        ),
    ] {
        let f = OidcFlags {
            issuer_url: url.into(),
            ..base.clone()
        };
        assert!(
            f.to_config(&[]).unwrap_err().to_string().ends_with(msg),
            "{url}"
        );
    }
    let required = OidcFlags {
        required_claims: vec![("hd".into(), "x".into())],
        ..base.clone()
    };
    let c = required.to_config(&[]).unwrap();
    assert_eq!(c.required_claims, vec![("hd".to_string(), "x".to_string())]);
}

#[tokio::test]
async fn unknown_kid_triggers_one_refresh_then_succeeds() {
    let Some(f) = fixture() else { return };
    let token = mint(&[req(
        &f.key("rsa.pem"),
        "RS256",
        Some("thumbprint"),
        json!({"iss": ISS, "aud": "my-client", "exp": VALID, "username": "jane"}),
    )])
    .remove(0);
    let a = Arc::new(OidcAuthenticator::new(base_cfg()).with_clock(Arc::new(FixedClock::new(NOW))));
    a.set_keys(vec![Arc::new(
        parse_jwk(&f.read("rsa2.jwk")).unwrap().unwrap(),
    )]); // rotated: old set
    let fetches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (weak, n, rsa_jwk) = (Arc::downgrade(&a), fetches.clone(), f.read("rsa.jwk"));
    a.set_refresher(Box::new(
        kube_authn::token::oidc::refresh::KeyRefresher::new(
            std::time::Duration::from_secs(60),
            move || {
                let (weak, n, jwk) = (weak.clone(), n.clone(), rsa_jwk.clone());
                async move {
                    n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if let Some(a) = weak.upgrade() {
                        a.set_keys(vec![Arc::new(parse_jwk(&jwk).unwrap().unwrap())]);
                    }
                    true
                }
            },
        ),
    ));
    let ctx = Context::default();
    let r = a.authenticate_token(&token, &ctx).await.unwrap().unwrap();
    assert_eq!(r.user.name(), "jane");
    assert_eq!(fetches.load(std::sync::atomic::Ordering::SeqCst), 1);
    // Known kid now: answered synchronously, no fetch.
    assert!(a.authenticate_token(&token, &ctx).is_ready());
    // A sprayed unknown kid within the cooldown: no further fetch.
    let spray = mint(&[req(
        &f.key("rsa2.pem"),
        "RS256",
        Some("thumbprint"),
        json!({"iss": ISS, "aud": "my-client", "exp": VALID, "username": "x"}),
    )])
    .remove(0);
    assert!(a.authenticate_token(&spray, &ctx).await.is_err());
    assert_eq!(fetches.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// go-oidc v2.5.0 (the version Kubernetes uses) checks the header's algorithm, then the
/// signature (the remote key set refetches for a `kid` it does not hold), and only then the
/// claims. So a token with an algorithm that is not allowed never causes a JWKS fetch, while
/// an expired token with an unknown `kid` does (once per cooldown) and is refused for its
/// signature; with the key known, the claims' errors show.
#[tokio::test]
async fn go_oidc_checks_the_algorithm_then_the_signature_then_the_claims() {
    let Some(f) = fixture() else { return };
    let a = Arc::new(OidcAuthenticator::new(base_cfg()).with_clock(Arc::new(FixedClock::new(NOW))));
    a.set_keys(vec![Arc::new(
        parse_jwk(&f.read("rsa2.jwk")).unwrap().unwrap(),
    )]); // the tokens' kid is not in this set
    let fetches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = fetches.clone();
    a.set_refresher(Box::new(
        kube_authn::token::oidc::refresh::KeyRefresher::new(
            std::time::Duration::from_secs(60),
            move || {
                let n = n.clone();
                async move {
                    n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    false
                }
            },
        ),
    ));
    let rsa = f.key("rsa.pem");
    let expired = json!({"iss": ISS, "aud": "my-client", "exp": EXPIRED, "username": "jane"});
    let other_aud = json!({"iss": ISS, "aud": "other", "exp": VALID, "username": "jane"});
    let not_yet =
        json!({"iss": ISS, "aud": "my-client", "exp": VALID, "nbf": VALID, "username": "jane"});
    const ALG: &str = r#"oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "PS256""#;
    const SIGNATURE: &str =
        "oidc: verify token: failed to verify signature: failed to verify id token signature";
    const EXPIRED_TEXT: &str =
        "oidc: verify token: oidc: token is expired (Token Expiry: 2009-11-10 22:00:00 +0000 UTC)";
    let ctx = Context::default();

    // (case, alg, claims, answered at once, error, fetches so far)
    type Case = (
        &'static str,
        &'static str,
        serde_json::Value,
        bool,
        &'static str,
        usize,
    );
    let unknown_kid: [Case; 4] = [
        (
            "algorithm not allowed, expired",
            "PS256",
            expired.clone(),
            true,
            ALG,
            0,
        ),
        ("expired", "RS256", expired.clone(), false, SIGNATURE, 1),
        // The refetch is rate-limited: no second fetch within the cooldown.
        (
            "another audience",
            "RS256",
            other_aud.clone(),
            false,
            SIGNATURE,
            1,
        ),
        (
            "not yet valid",
            "RS256",
            not_yet.clone(),
            false,
            SIGNATURE,
            1,
        ),
    ];
    for (name, alg, claims, at_once, want, fetched) in unknown_kid {
        let token = mint(&[req(&rsa, alg, Some("thumbprint"), claims)]).remove(0);
        let answer = a.authenticate_token(&token, &ctx);
        assert_eq!(answer.is_ready(), at_once, "{name}: answered at once");
        assert_eq!(answer.await.unwrap_err().to_string(), want, "{name}");
        let n = fetches.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(n, fetched, "{name}: JWKS fetches");
    }

    // With the key known, the claims are checked after the signature, in go-oidc's order.
    a.set_keys(vec![Arc::new(
        parse_jwk(&f.read("rsa.jwk")).unwrap().unwrap(),
    )]);
    let rsa2 = f.key("rsa2.pem");
    let known_kid: [(&str, &std::path::PathBuf, &str, serde_json::Value, &str); 5] = [
        ("expired", &rsa, "RS256", expired.clone(), EXPIRED_TEXT),
        (
            "another audience",
            &rsa,
            "RS256",
            other_aud,
            r#"oidc: verify token: oidc: expected audience "my-client" got ["other"]"#,
        ),
        (
            "not yet valid",
            &rsa,
            "RS256",
            not_yet,
            "oidc: verify token: oidc: current time 2009-11-10 23:00:00 +0000 UTC before the nbf (not before) time: 2009-11-11 00:00:00 +0000 UTC",
        ),
        (
            "algorithm before claims",
            &rsa,
            "PS256",
            expired.clone(),
            ALG,
        ),
        // Signed by another key under the known kid: the signature fails before the expiry
        // is looked at.
        (
            "signature before claims",
            &rsa2,
            "RS256",
            expired,
            SIGNATURE,
        ),
    ];
    for (name, key, alg, claims, want) in known_kid {
        let token = mint(&[req(key, alg, Some("thumbprint"), claims)]).remove(0);
        let err = a.authenticate_token(&token, &ctx).await.unwrap_err();
        assert_eq!(err.to_string(), want, "{name}");
    }
    assert_eq!(fetches.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn authentication_configuration_file() {
    use kube_authn::token::oidc::config::load_authentication_configuration as load;
    let doc = |jwt: &str| {
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n{jwt}"
        )
    };
    let ok = doc(r#"
- issuer:
    url: https://issuer-url
    audiences: [a, b]
    audienceMatchPolicy: MatchAny
  claimValidationRules:
  - {claim: hd, requiredValue: example.com}
  claimMappings:
    username: {claim: sub, prefix: "oidc:"}
    groups: {claim: groups, prefix: ""}
    uid: {claim: sub}
"#);
    let cfgs = load(ok.as_bytes(), &[]).unwrap();
    assert_eq!(cfgs.len(), 1);
    assert_eq!(
        cfgs[0].username,
        PrefixedClaim {
            claim: "sub".into(),
            prefix: "oidc:".into()
        }
    );
    assert_eq!(
        cfgs[0].required_claims,
        vec![("hd".to_string(), "example.com".to_string())]
    );
    assert_eq!(cfgs[0].signing_algs, AlgorithmSet::KUBERNETES);
    // Valid, as in Kubernetes: a groups mapping without a claim maps no groups (it is not
    // required, unlike the username's), and two issuers may both leave discoveryURL empty.
    let optional = doc(
        "- issuer: {url: https://one, audiences: [a], discoveryURL: \"\"}\n  claimMappings: {username: {claim: sub, prefix: \"\"}, groups: {prefix: \"g:\"}}\n- issuer: {url: https://two, audiences: [a], discoveryURL: \"\"}\n  claimMappings: {username: {claim: sub, prefix: \"\"}, groups: {}}\n",
    );
    let cfgs = load(optional.as_bytes(), &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cfgs.len(), 2);
    assert!(cfgs.iter().all(|c| c.groups.is_none()));
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "http url",
            doc(
                "- issuer: {url: http://issuer-url, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"jwt[0].issuer.url: Invalid value: "http://issuer-url": URL scheme must be https"#,
        ),
        (
            "no audiences",
            doc(
                "- issuer: {url: https://issuer-url}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required",
        ),
        (
            "a claim rule with a message (Go prints the message) and a duplicate claim",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimValidationRules:\n  - {claim: hd, requiredValue: x, message: be nice}\n  - {claim: hd, requiredValue: z}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"[jwt[0].claimValidationRules[0].message: Invalid value: "be nice": may not be specified when claim is set, jwt[0].claimValidationRules[1].claim: Duplicate value: "hd"]"#,
        ),
        (
            "a certificateAuthority without a certificate",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a], certificateAuthority: not-a-pem}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates"#,
        ),
        (
            "a claim rule with both claim and expression",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimValidationRules:\n  - {claim: hd, expression: 'claims.hd == \"x\"'}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"jwt[0].claimValidationRules[0]: Invalid value: "hd": claim and expression can't both be set"#,
        ),
        (
            "a uid mapping with both claim and expression",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: \"\"}, uid: {claim: sub, expression: claims.sub}}\n",
            ),
            r#"jwt[0].claimMappings.uid: Invalid value: "": claim and expression can't both be set"#,
        ),
        (
            "a username mapping with both claim and expression",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimMappings: {username: {claim: sub, expression: claims.sub}}\n",
            ),
            r#"jwt[0].claimMappings.username: Invalid value: "": claim and expression can't both be set"#,
        ),
        (
            "two audiences no policy",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a, b]}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences"#,
        ),
        (
            "prefix required",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimMappings: {username: {claim: sub}}\n",
            ),
            "jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing",
        ),
        (
            "username required",
            doc("- issuer: {url: https://issuer-url, audiences: [a]}\n"),
            "jwt[0].claimMappings.username: Required value: claim or expression is required",
        ),
        (
            "CEL username refused",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimMappings: {username: {expression: claims.sub}}\n",
            ),
            r#"jwt[0].claimMappings.username.expression: Invalid value: "claims.sub": CEL expressions are not supported yet"#,
        ),
        (
            "CEL rule refused",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimValidationRules: [{expression: 'claims.hd == \"x\"', message: m}]\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"jwt[0].claimValidationRules[0].expression: Invalid value: "claims.hd == \"x\"": CEL expressions are not supported yet"#,
        ),
        (
            "duplicate issuer",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n- issuer: {url: https://issuer-url, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"jwt[1].issuer.url: Duplicate value: "https://issuer-url""#,
        ),
        (
            "unknown field",
            doc(
                "- issuer: {url: https://issuer-url, audiences: [a], bogus: 1}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
            ),
            r#"strict decoding error: unknown field "jwt[0].issuer.bogus""#,
        ),
    ];
    for (name, yaml, want) in cases {
        let err = load(yaml.as_bytes(), &[]).unwrap_err().to_string();
        assert!(err.starts_with(want), "{name}: {err}");
    }
    // The service-account issuer is disallowed.
    let sa = doc(
        "- issuer: {url: https://kubernetes.default.svc, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: \"\"}}\n",
    );
    assert_eq!(
        load(sa.as_bytes(), &["https://kubernetes.default.svc".into()])
            .unwrap_err()
            .to_string(),
        r#"jwt[0].issuer.url: Invalid value: "https://kubernetes.default.svc": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc]"#
    );
}

/// `issuer.url` / `issuer.discoveryURL` validation as Kubernetes' `validateURL`: Go's
/// `url.Parse` errors (`parse "<url>": …`, the URL without its fragment unless the fragment
/// is what failed), every check aggregated (disallowed issuer, scheme, userinfo, query,
/// fragment), the scheme compared after lower-casing, an empty query (`?`) or fragment (`#`)
/// allowed. Vectors from reference §3.2 (`validation_test.go`) and Go's `url.Parse`.
#[test]
fn issuer_url_validation_matches_go_url_parse() {
    const SCHEME: &str = "URL scheme must be https";
    let inv = |url: &str, why: &str| {
        format!(
            "issuer.url: Invalid value: {}: {why}",
            kube_authn::jwt::go_quote(url)
        )
    };
    let parse = |url: &str, failed: &str, why: &str| {
        inv(
            url,
            &format!("parse {}: {why}", kube_authn::jwt::go_quote(failed)),
        )
    };
    let all = |errs: Vec<String>| format!("[{}]", errs.join(", "));
    // (name, issuer url, discovery url, disallowed issuers, want)
    type Case = (
        &'static str,
        &'static str,
        Option<&'static str>,
        &'static [&'static str],
        Result<(), String>,
    );
    let cases: Vec<Case> = vec![
        ("valid", "https://issuer-url/path", None, &[], Ok(())),
        ("empty", "", None, &[], Err("issuer.url: Required value".into())),
        (
            "invalid port",
            "https://issuer-url:invalid-port",
            None,
            &[],
            Err(parse(
                "https://issuer-url:invalid-port",
                "https://issuer-url:invalid-port",
                r#"invalid port ":invalid-port" after host"#,
            )),
        ),
        (
            "http",
            "http://issuer-url",
            None,
            &[],
            Err(inv("http://issuer-url", SCHEME)),
        ),
        (
            "userinfo",
            "https://user:pass@issuer-url",
            None,
            &[],
            Err(inv(
                "https://user:pass@issuer-url",
                "URL must not contain a username or password",
            )),
        ),
        (
            "query",
            "https://issuer-url?query",
            None,
            &[],
            Err(inv(
                "https://issuer-url?query",
                "URL must not contain a query",
            )),
        ),
        (
            "fragment",
            "https://issuer-url#fragment",
            None,
            &[],
            Err(inv(
                "https://issuer-url#fragment",
                "URL must not contain a fragment",
            )),
        ),
        (
            "disallowed",
            "https://issuer-url",
            None,
            &["b", "https://issuer-url", "a"],
            Err(inv(
                "https://issuer-url",
                "URL must not overlap with disallowed issuers: [a b https://issuer-url]",
            )),
        ),
        ("upper-case scheme", "HTTPS://issuer-url", None, &[], Ok(())),
        ("empty query", "https://issuer-url?", None, &[], Ok(())),
        ("empty fragment", "https://issuer-url#", None, &[], Ok(())),
        (
            "every check at once",
            "http://user@issuer-url?q#f",
            None,
            &[],
            Err(all(vec![
                inv("http://user@issuer-url?q#f", SCHEME),
                inv(
                    "http://user@issuer-url?q#f",
                    "URL must not contain a username or password",
                ),
                inv("http://user@issuer-url?q#f", "URL must not contain a query"),
                inv(
                    "http://user@issuer-url?q#f",
                    "URL must not contain a fragment",
                ),
            ])),
        ),
        (
            "disallowed and http",
            "http://k",
            None,
            &["http://k"],
            Err(all(vec![
                inv(
                    "http://k",
                    "URL must not overlap with disallowed issuers: [http://k]",
                ),
                inv("http://k", SCHEME),
            ])),
        ),
        (
            "disallowed and unparsable",
            "https://k:x",
            None,
            &["https://k:x"],
            Err(all(vec![
                inv(
                    "https://k:x",
                    "URL must not overlap with disallowed issuers: [https://k:x]",
                ),
                parse("https://k:x", "https://k:x", r#"invalid port ":x" after host"#),
            ])),
        ),
        (
            "port error names the URL without its fragment",
            "https://x:bad#frag",
            None,
            &[],
            Err(parse(
                "https://x:bad#frag",
                "https://x:bad",
                r#"invalid port ":bad" after host"#,
            )),
        ),
        (
            "fragment escape error names the whole URL",
            "https://x#%zz",
            None,
            &[],
            Err(parse("https://x#%zz", "https://x#%zz", r#"invalid URL escape "%zz""#)),
        ),
        (
            "missing ]",
            "https://[::1",
            None,
            &[],
            Err(parse("https://[::1", "https://[::1", "missing ']' in host")),
        ),
        (
            "junk after ]",
            "https://[::1]x",
            None,
            &[],
            Err(parse(
                "https://[::1]x",
                "https://[::1]x",
                r#"invalid port "x" after host"#,
            )),
        ),
        ("IPv6 with port", "https://[::1]:8443/p", None, &[], Ok(())),
        (
            "space in host",
            "https://issuer url",
            None,
            &[],
            Err(parse(
                "https://issuer url",
                "https://issuer url",
                r#"invalid character " " in host name"#,
            )),
        ),
        (
            "ASCII escaped in host",
            "https://x%41",
            None,
            &[],
            Err(parse("https://x%41", "https://x%41", r#"invalid URL escape "%41""#)),
        ),
        (
            "bad escape in path",
            "https://issuer-url/%zz",
            None,
            &[],
            Err(parse(
                "https://issuer-url/%zz",
                "https://issuer-url/%zz",
                r#"invalid URL escape "%zz""#,
            )),
        ),
        (
            "control character",
            "https://issuer-url\n",
            None,
            &[],
            Err(parse(
                "https://issuer-url\n",
                "https://issuer-url\n",
                "net/url: invalid control character in URL",
            )),
        ),
        (
            "missing scheme",
            "://issuer-url",
            None,
            &[],
            Err(parse(
                "://issuer-url",
                "://issuer-url",
                "missing protocol scheme",
            )),
        ),
        (
            "no scheme",
            "issuer-url",
            None,
            &[],
            Err(inv("issuer-url", SCHEME)),
        ),
        (
            "colon in first segment",
            "1http://x",
            None,
            &[],
            Err(parse(
                "1http://x",
                "1http://x",
                "first path segment in URL cannot contain colon",
            )),
        ),
        (
            "bad userinfo",
            "https://us er@x",
            None,
            &[],
            Err(parse("https://us er@x", "https://us er@x", "net/url: invalid userinfo")),
        ),
        // Deliberate difference (docs/compatibility.md): Kubernetes accepts a URL without a
        // host, at which no issuer can ever be discovered; it is refused here.
        (
            "no host",
            "https://",
            None,
            &[],
            Err(inv("https://", "URL must have a host")),
        ),
        (
            "empty authority",
            "https:///path",
            None,
            &[],
            Err(inv("https:///path", "URL must have a host")),
        ),
        (
            "opaque",
            "https:issuer-url",
            None,
            &[],
            Err(inv("https:issuer-url", "URL must have a host")),
        ),
        // discoveryURL: compared with the URL first, then the same URL rules.
        ("empty discoveryURL is unset", "https://issuer-url", Some(""), &[], Ok(())),
        (
            "discoveryURL same as URL",
            "https://issuer-url/",
            Some("https://issuer-url"),
            &[],
            Err(r#"issuer.discoveryURL: Invalid value: "https://issuer-url": discoveryURL must be different from URL"#.into()),
        ),
        (
            "discoveryURL same as URL and http",
            "http://issuer-url",
            Some("http://issuer-url///"),
            &["http://issuer-url///"],
            Err(all(vec![
                inv("http://issuer-url", SCHEME),
                r#"issuer.discoveryURL: Invalid value: "http://issuer-url///": discoveryURL must be different from URL"#.into(),
                format!(r#"issuer.discoveryURL: Invalid value: "http://issuer-url///": {SCHEME}"#),
            ])),
        ),
    ];
    for (name, url, discovery, disallowed, want) in cases {
        let mut c = base_cfg();
        c.issuer_url = url.into();
        c.discovery_url = discovery.map(Into::into);
        let disallowed: Vec<String> = disallowed.iter().map(|s| s.to_string()).collect();
        let got = c.validate(&disallowed).map_err(|e| e.to_string());
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn expiry_is_compared_to_the_nanosecond_as_in_go_oidc() {
    // go-oidc: expired when `exp.Before(now)`. With exp = now exactly, that holds as soon as
    // the current second has begun.
    let Some(f) = fixture() else { return };
    let token = &mint(&[req(
        &f.key("rsa.pem"),
        "RS256",
        Some("thumbprint"),
        json!({"iss": ISS, "aud": "my-client", "exp": NOW, "username": "jane"}),
    )])[0];
    let expired =
        "oidc: verify token: oidc: token is expired (Token Expiry: 2009-11-10 23:00:00 +0000 UTC)";
    let cases: [(&str, u32, Result<&str, &str>); 2] = [
        ("exp is now, to the nanosecond", 0, Ok("jane")),
        ("one nanosecond later", 1, Err(expired)),
    ];
    for (name, nanos, want) in cases {
        let a = auth(f, base_cfg(), &["rsa.jwk"]).with_clock(Arc::new(SubSecond(NOW, nanos)));
        let got = a
            .authenticate_token(token, &Context::default())
            .into_ready()
            .unwrap();
        match want {
            Ok(user) => assert_eq!(got.unwrap().unwrap().user.name(), user, "{name}"),
            Err(text) => assert_eq!(got.unwrap_err().to_string(), text, "{name}"),
        }
    }
}
