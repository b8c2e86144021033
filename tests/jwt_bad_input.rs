//! The security reference's JWT bad-input list (security.md §2.5), each a named case with a
//! defined outcome, against the service-account authenticator behind the issuer router.
//! Every case is bounded in time (asserted) and never panics.

mod jwt_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use jwt_support::*;
use kube_authn::AuthResult;
use kube_authn::authenticator::{Audiences, Context, TokenAuthenticator};
use kube_authn::jwt::FixedClock;
use kube_authn::jwt::key::parse_pem_keys;
use kube_authn::jwt::router::IssuerRouter;
use kube_authn::token::service_account::*;
use serde_json::json;

const ISS: &str = "https://kubernetes.default.svc";

#[derive(Debug)]
enum Want {
    Ok,
    NotMine,
    Err(&'static str),
}

fn check(router: &IssuerRouter, name: &str, token: &str, want: Want) {
    let start = Instant::now();
    let got: AuthResult = router
        .authenticate_token(token, &Context::default())
        .into_ready()
        .expect("no lookup configured: must be ready");
    // Guards against unbounded work on hostile input (a 1 MB kid, 100k dots, a 10k-deep JSON
    // payload): each case is bounded by the size cap and the JSON depth limit, so 5 s catches
    // runaway work, not the slowness of a debug build on a loaded machine.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{name}: took {:?}",
        start.elapsed()
    );
    match (&want, &got) {
        (Want::NotMine, Ok(None)) | (Want::Ok, Ok(Some(_))) => {}
        (Want::Err(m), Err(e)) => assert_eq!(e.to_string(), *m, "{name}"),
        _ => panic!("{name}: want {want:?}, got {got:?}"),
    }
}

fn forge(header: &serde_json::Value, claims: &serde_json::Value, sig: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes()),
        b64(sig)
    )
}

#[test]
fn security_reference_bad_inputs() {
    let Some(f) = fixture() else { return };
    let mut keys = parse_pem_keys(&f.read("rsa.pem")).unwrap();
    keys.extend(parse_pem_keys(&f.read("ec256.pem")).unwrap());
    let rsa_kid = keys[0].key_id().to_owned();
    let ec_kid = keys[1].key_id().to_owned();
    let sa =
        ServiceAccountAuthenticator::bound(vec![ISS.into()], keys, Audiences::from(["api"]), None)
            .with_clock(Arc::new(FixedClock::new(NOW)));
    let mut router = IssuerRouter::new();
    router.add(ISS, Arc::new(sa));
    let claims = bound_claims(ISS, &["api"], NOW, 3600);
    let good = mint(&[
        req(&f.key("rsa.pem"), "RS256", Some("k8s"), claims.clone()),
        req(&f.key("ec256.pem"), "ES256", Some("k8s"), claims.clone()),
        // attacker embeds their own key (jwk / jku / x5u) in the header and signs with it
        json!({"key": f.key("rsa2.pem"), "header_raw": format!(r#"{{"alg":"RS256","kid":"{rsa_kid}","jwk":{{"kty":"RSA","n":"AQAB","e":"AQAB"}},"jku":"https://127.0.0.1:1/jwks","x5u":"https://127.0.0.1:1/x5u"}}"#), "claims": claims}),
        // duplicate member names
        json!({"key": f.key("rsa.pem"), "header_raw": format!(r#"{{"alg":"RS256","kid":"{rsa_kid}","alg":"none"}}"#), "claims": claims}),
        json!({"key": f.key("rsa.pem"), "header": {"alg": "RS256", "kid": rsa_kid}, "payload_raw": format!(r#"{{"iss":"{ISS}","iss":"{ISS}","aud":"api"}}"#)}),
        // crit with an unknown name
        json!({"key": f.key("rsa.pem"), "header_raw": format!(r#"{{"alg":"RS256","kid":"{rsa_kid}","crit":["exp"],"exp":1}}"#), "claims": claims}),
        // email_verified as a string is irrelevant to SA tokens but must not confuse decoding
        req(&f.key("rsa.pem"), "RS256", Some("k8s"), {
            let mut c = claims.clone();
            c["email_verified"] = json!("true");
            c
        }),
        // runs of '?' and '>' (0x3F, 0x3E): their base64url always holds '_' and '-', so the
        // standard-alphabet form of this token surely differs from it
        req(&f.key("rsa.pem"), "RS256", Some("k8s"), {
            let mut c = claims.clone();
            c["x"] = json!("??????>>>>>>");
            c
        }),
    ]);
    let (rs, es) = (good[0].as_str(), good[1].as_str());
    let parts: Vec<&str> = rs.split('.').collect();
    let (h, p, sig) = (parts[0], parts[1], parts[2]);
    let es_parts: Vec<&str> = es.split('.').collect();
    let es_sig = unb64(es_parts[2]);
    let cases: Vec<(&str, String, Want)> = vec![
        ("valid RS256 control", rs.into(), Want::Ok),
        ("valid ES256 control", es.into(), Want::Ok),
        (
            "alg none",
            forge(&json!({"alg":"none","kid":rsa_kid}), &claims, b""),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "alg None",
            forge(&json!({"alg":"None","kid":rsa_kid}), &claims, b""),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "alg NONE",
            forge(&json!({"alg":"NONE","kid":rsa_kid}), &claims, b""),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "alg nOnE with the RSA signature",
            format!(
                "{}.{p}.{sig}",
                b64(json!({"alg":"nOnE","kid":rsa_kid}).to_string().as_bytes())
            ),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "alg missing",
            forge(&json!({"kid":rsa_kid}), &claims, b"x"),
            Want::Err("malformed JWS header"),
        ),
        (
            "alg not a string",
            forge(&json!({"alg":256,"kid":rsa_kid}), &claims, b"x"),
            Want::Err("malformed JWS header"),
        ),
        (
            "HS256 signed with the RSA public key PEM",
            {
                let hdr = b64(json!({"alg":"HS256","kid":rsa_kid}).to_string().as_bytes());
                let input = format!("{hdr}.{p}");
                let k =
                    aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &f.read("rsa_pub.pem"));
                format!(
                    "{input}.{}",
                    b64(aws_lc_rs::hmac::sign(&k, input.as_bytes()).as_ref())
                )
            },
            Want::Err(ERR_CRYPTO),
        ),
        (
            "ES256 header against the RSA key",
            format!(
                "{}.{p}.{}",
                b64(json!({"alg":"ES256","kid":rsa_kid}).to_string().as_bytes()),
                es_parts[2]
            ),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "RS256 header against the EC key",
            format!(
                "{}.{p}.{sig}",
                b64(json!({"alg":"RS256","kid":ec_kid}).to_string().as_bytes())
            ),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "ECDSA signature in DER form",
            {
                let (r, s_) = es_sig.split_at(32);
                let mut body = Vec::new();
                kube_authn::jwt::der::write_unsigned(&mut body, r);
                kube_authn::jwt::der::write_unsigned(&mut body, s_);
                let mut der = Vec::new();
                kube_authn::jwt::der::write_tlv(&mut der, 0x30, &body);
                format!("{}.{}.{}", es_parts[0], es_parts[1], b64(&der))
            },
            Want::Err(ERR_CRYPTO),
        ),
        (
            "ECDSA r = s = 0",
            format!("{}.{}.{}", es_parts[0], es_parts[1], b64(&[0u8; 64])),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "ECDSA signature one byte short",
            format!("{}.{}.{}", es_parts[0], es_parts[1], b64(&es_sig[..63])),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "RSA signature one byte long",
            format!("{h}.{p}.{}", b64(&[unb64(sig), vec![0]].concat())),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "empty signature",
            format!("{h}.{p}."),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "attacker jwk/jku/x5u header, signed with attacker key",
            good[2].clone(),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "duplicate alg in header",
            good[3].clone(),
            Want::Err("malformed JWS header"),
        ),
        // Routed as kube-apiserver routes it (by the last `iss`, with Go's encoding/json), then
        // refused after the signature with go-jose's text: an error, never *not mine*, for a
        // token our key signed.
        (
            "duplicate iss in payload",
            good[4].clone(),
            Want::Err("json: duplicate key 'iss' in object"),
        ),
        (
            "duplicate iss in payload, signature not ours",
            {
                let (signed, sig) = good[4].rsplit_once('.').unwrap();
                let mut sig = sig.as_bytes().to_vec();
                sig[5] = if sig[5] == b'A' { b'B' } else { b'A' };
                format!("{signed}.{}", String::from_utf8(sig).unwrap())
            },
            Want::Err(ERR_CRYPTO),
        ),
        (
            // Refused, with go-jose's text (it parses `crit` and refuses it when verifying).
            "crit with unknown name",
            good[5].clone(),
            Want::Err(ERR_CRYPTO),
        ),
        (
            "email_verified string is just another claim",
            good[6].clone(),
            Want::Ok,
        ),
        (
            "kid path traversal",
            forge(
                &json!({"alg":"RS256","kid":"../../../../dev/null"}),
                &claims,
                b"x",
            ),
            Want::Err(ERR_NO_KEYS),
        ),
        (
            "kid SQL",
            forge(&json!({"alg":"RS256","kid":"' OR 1=1 --"}), &claims, b"x"),
            Want::Err(ERR_NO_KEYS),
        ),
        (
            "kid as a number",
            forge(&json!({"alg":"RS256","kid":5}), &claims, b"x"),
            Want::Err("malformed JWS header"),
        ),
        (
            "kid 2 KiB",
            forge(
                &json!({"alg":"RS256","kid":"k".repeat(2048)}),
                &claims,
                b"x",
            ),
            Want::Err("JWS kid header too long"),
        ),
        (
            "kid 1 MB (token over the size cap)",
            forge(
                &json!({"alg":"RS256","kid":"k".repeat(1 << 20)}),
                &claims,
                b"x",
            ),
            Want::NotMine,
        ),
        ("2 segments", format!("{h}.{p}"), Want::NotMine),
        ("4 segments", format!("{h}.{p}.{sig}.{sig}"), Want::NotMine),
        ("trailing dot", format!("{rs}."), Want::NotMine),
        ("padded base64", format!("{h}.{p}=.{sig}"), Want::NotMine),
        (
            "standard-alphabet base64",
            {
                let url_safe = good.last().unwrap().as_str();
                assert!(url_safe.contains('-') && url_safe.contains('_'));
                url_safe.replace('-', "+").replace('_', "/")
            },
            Want::NotMine,
        ),
        (
            "whitespace inside",
            format!("{h}. {p}.{sig}"),
            Want::NotMine,
        ),
        ("100k dots", ".".repeat(100_000), Want::NotMine),
        (
            "60k dots (under the size cap)",
            ".".repeat(60_000),
            Want::NotMine,
        ),
        (
            "JSON serialization",
            format!(r#"{{"payload":"{p}","protected":"{h}","signature":"{sig}"}}"#),
            Want::NotMine,
        ),
        (
            "10k-deep JSON payload",
            format!(
                "{h}.{}.{sig}",
                b64(format!(
                    r#"{{"iss":"{ISS}","x":{}{}}}"#,
                    "[".repeat(10_000),
                    "]".repeat(10_000)
                )
                .as_bytes())
            ),
            Want::NotMine,
        ),
        (
            "payload not an object",
            format!("{h}.{}.{sig}", b64(b"[1]")),
            Want::NotMine,
        ),
        (
            "iss not a string",
            forge(&json!({"alg":"RS256"}), &json!({"iss": 5}), b"x"),
            Want::NotMine,
        ),
        (
            "iss with different case key",
            forge(&json!({"alg":"RS256"}), &json!({"ISS": ISS}), b"x"),
            Want::NotMine,
        ),
        (
            "foreign issuer",
            forge(
                &json!({"alg":"RS256"}),
                &json!({"iss": "https://evil"}),
                b"x",
            ),
            Want::NotMine,
        ),
        ("opaque token", "0123456789abcdef".into(), Want::NotMine),
    ];
    for (name, token, want) in cases {
        check(&router, name, &token, want);
    }
}

#[test]
fn claim_type_confusion_with_valid_signatures() {
    let Some(f) = fixture() else { return };
    let keys = parse_pem_keys(&f.read("rsa.pem")).unwrap();
    let sa =
        ServiceAccountAuthenticator::bound(vec![ISS.into()], keys, Audiences::from(["api"]), None)
            .with_clock(Arc::new(FixedClock::new(NOW)));
    let mut router = IssuerRouter::new();
    router.add(ISS, Arc::new(sa));
    let base = bound_claims(ISS, &["api"], NOW, 3600);
    let edits: Vec<(&str, serde_json::Value, Want)> = vec![
        (
            "exp as string",
            {
                let mut c = base.clone();
                c["exp"] = json!("9999999999");
                c
            },
            Want::Err("go-jose/go-jose/jwt: expected number value to unmarshal NumericDate"),
        ),
        ("exp 1e400", json!(null), Want::NotMine),
        (
            "exp 2^63",
            {
                let mut c = base.clone();
                c["exp"] = json!(9223372036854775808u64);
                c
            },
            Want::Err("go-jose/go-jose/jwt: expected number value to unmarshal NumericDate"),
        ),
        (
            "nbf i64::MAX",
            {
                let mut c = base.clone();
                c["nbf"] = json!(i64::MAX);
                c
            },
            Want::Err("service account token is not valid yet"),
        ),
        (
            "exp -1",
            {
                let mut c = base.clone();
                c["exp"] = json!(-1);
                c
            },
            Want::Err("service account token has expired"),
        ),
        (
            "aud []",
            {
                let mut c = base.clone();
                c["aud"] = json!([]);
                c
            },
            Want::Ok,
        ),
        (
            "aud number",
            {
                let mut c = base.clone();
                c["aud"] = json!(1);
                c
            },
            Want::Err(
                "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience",
            ),
        ),
        (
            "missing exp",
            {
                let mut c = base.clone();
                c.as_object_mut().unwrap().remove("exp");
                c
            },
            Want::Ok,
        ),
        (
            "sub non-string",
            {
                let mut c = base.clone();
                c["sub"] = json!(5);
                c
            },
            Want::Err("json: cannot unmarshal number into Go value of type string"),
        ),
        // kube-apiserver peeks at the issuer with Go's case-insensitive `encoding/json`
        // (the last match wins) but reads the claims by exact names.
        (
            "ISS after iss: Go routes by ISS",
            json!(null),
            Want::NotMine,
        ),
        (
            "ISS before iss: Go routes by iss",
            {
                let mut c = base.clone();
                // serde_json's map is sorted: `ISS` comes first.
                c["ISS"] = json!("https://other.example");
                c
            },
            Want::Ok,
        ),
    ];
    let mut reqs = Vec::new();
    for (name, c, _) in &edits {
        if *name == "exp 1e400" {
            reqs.push(json!({"key": f.key("rsa.pem"), "header": {"alg":"RS256","kid":"k8s"}, "payload_raw": format!(r#"{{"iss":"{ISS}","aud":"api","exp":1e400}}"#)}));
        } else if *name == "ISS after iss: Go routes by ISS" {
            let raw = base.to_string();
            let raw = format!(
                r#"{},"ISS":"https://other.example"}}"#,
                raw.strip_suffix('}').unwrap()
            );
            reqs.push(json!({"key": f.key("rsa.pem"), "header": {"alg":"RS256","kid":"k8s"}, "payload_raw": raw}));
        } else {
            reqs.push(req(&f.key("rsa.pem"), "RS256", Some("k8s"), c.clone()));
        }
    }
    let tokens = mint(&reqs);
    for ((name, _, want), token) in edits.into_iter().zip(tokens) {
        check(&router, name, &token, want);
    }
}
