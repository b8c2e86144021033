//! Wycheproof JOSE key vectors (`tests/vectors/wycheproof/json_web_key_test.json`,
//! Apache-2.0, copied unchanged) against the JWK Set parser and the verifier, as an OIDC
//! issuer's JWKS is used: the group's public key set (its private set when it has none: the
//! symmetric cases), the key chosen by the JWS header's `kid`, the header's `alg`.
//!
//! Every vector has a named expected outcome below. Wycheproof's verdict is ours except where
//! the table says otherwise, with the reason (each also in `docs/compatibility.md`).

use kube_authn::jwt::compact::{HeaderAlg, UntrustedJwt};
use kube_authn::jwt::key::{KeySet, parse_jwks};

/// What kube-authn does with one vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// The JWS verifies.
    Verified,
    /// The key set is refused as a whole (no key can verify anything).
    SetRefused,
    /// The set parses but no key verifies the JWS.
    NotVerified,
}
use Outcome::*;

/// (tcId, outcome, why when it differs from Wycheproof's verdict)
const EXPECTED: &[(i64, Outcome, &str)] = &[
    // A set mixing an HMAC key with asymmetric ones: the HMAC key is skipped, the HS256 JWS
    // verifies with nothing.
    (1, NotVerified, ""),
    // Symmetric (`oct`) keys are never taken from a JWKS (HMAC with a published key is the
    // `alg` confusion class), so a set of them is empty, and the valid HS* vectors are refused.
    (2, SetRefused, "HMAC keys from a JWKS are never used"),
    (3, SetRefused, ""),
    (4, SetRefused, ""),
    (5, Verified, ""),
    // `use: enc`: the key is skipped (not a signing key).
    (6, SetRefused, ""),
    (
        7,
        Verified,
        "ROCA-weak moduli are not detected, as in Go (go-jose, crypto/rsa)",
    ),
    // RSA below 2048 bits and `e = 1` are refused at parse time.
    (8, SetRefused, ""),
    (9, SetRefused, ""),
    (10, SetRefused, ""),
    (11, SetRefused, ""),
    (12, SetRefused, ""),
    (13, SetRefused, "HMAC keys from a JWKS are never used"),
    (14, SetRefused, "HMAC keys from a JWKS are never used"),
    (15, SetRefused, "HMAC keys from a JWKS are never used"),
    (16, SetRefused, ""),
    (17, SetRefused, ""),
    (18, SetRefused, ""),
    // A JWK `alg` that does not fit its curve, `use: enc`, a point off the curve or another
    // modified key: the key is refused, so the set is empty.
    (19, SetRefused, ""),
    (20, SetRefused, ""),
    (21, SetRefused, ""),
    (22, SetRefused, ""),
    (23, SetRefused, ""),
    (24, SetRefused, ""),
    (25, SetRefused, ""),
    (26, SetRefused, ""),
];

fn run(set: &serde_json::Value, jws: &str) -> Outcome {
    let keys = match parse_jwks(set.to_string().as_bytes()) {
        Ok(keys) if !keys.is_empty() => KeySet::by_jwk_kid(keys),
        _ => return SetRefused,
    };
    let Ok(jwt) = UntrustedJwt::parse_jws(jws) else {
        return NotVerified;
    };
    let Ok(header) = jwt.header() else {
        return NotVerified;
    };
    let HeaderAlg::Known(alg) = header.alg() else {
        return NotVerified;
    };
    let verified = keys
        .find(header.kid())
        .any(|k| k.verify(alg, jwt.signing_input(), jwt.signature()).is_ok());
    if verified { Verified } else { NotVerified }
}

#[test]
fn wycheproof_json_web_key() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/wycheproof/json_web_key_test.json");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut seen = 0;
    for group in doc["testGroups"].as_array().unwrap() {
        let set = group.get("public").unwrap_or(&group["private"]);
        for t in group["tests"].as_array().unwrap() {
            let id = t["tcId"].as_i64().unwrap();
            let (_, want, why) = EXPECTED
                .iter()
                .find(|(tc, ..)| *tc == id)
                .unwrap_or_else(|| panic!("tc {id} has no expected outcome"));
            let wycheproof_accepts = t["result"] == "valid";
            // The table may differ from Wycheproof only with a reason.
            assert_eq!(
                (*want == Verified) == wycheproof_accepts,
                why.is_empty(),
                "tc {id}: a difference from Wycheproof needs a reason, and a reason a difference"
            );
            let got = run(set, t["jws"].as_str().unwrap());
            assert_eq!(got, *want, "tc {id} ({})", t["comment"]);
            seen += 1;
        }
    }
    assert_eq!(seen, EXPECTED.len());
}
