//! Wycheproof JOSE signature vectors (`tests/vectors/wycheproof/json_web_signature_test.json`,
//! Apache-2.0, copied unchanged) against the compact-JWS verifier.
//!
//! Rule: an `invalid` vector must never verify; a `valid` vector must verify whenever its
//! algorithm and key type are ones we support (asymmetric RS/PS/ES/EdDSA); vectors using
//! HMAC keys or the JSON serialisation are checked to be refused by the compact parser or
//! skipped (we never verify HMAC).

use kube_authn::jwt::compact::{HeaderAlg, UntrustedJwt};
use kube_authn::jwt::key::parse_jwk;

#[test]
fn wycheproof_json_web_signature() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/wycheproof/json_web_signature_test.json");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value = serde_json::from_slice(&data).unwrap();
    let (mut valid_ok, mut invalid_rejected, mut skipped, mut pinned) = (0, 0, 0, 0);
    for group in doc["testGroups"].as_array().unwrap() {
        let key = group
            .get("public")
            .and_then(|p| parse_jwk(p.to_string().as_bytes()).ok().flatten());
        for t in group["tests"].as_array().unwrap() {
            let id = t["tcId"].as_i64().unwrap();
            let result = t["result"].as_str().unwrap();
            let Some(jws) = t["jws"].as_str() else {
                // JSON serialisation: never accepted by the compact parser.
                assert!(
                    UntrustedJwt::parse_jws(&t["jws"].to_string()).is_err(),
                    "tc {id}"
                );
                skipped += 1;
                continue;
            };
            let accepted = match (&key, UntrustedJwt::parse_jws(jws)) {
                (Some(key), Ok(p)) => match p.header() {
                    Ok(h) => match h.alg() {
                        HeaderAlg::Known(alg) => {
                            key.verify(alg, p.signing_input(), p.signature()).is_ok()
                        }
                        HeaderAlg::Unsupported => false,
                    },
                    Err(_) => false,
                },
                _ => false,
            };
            match result {
                // Counted only when a key could have verified it (a vector whose key is
                // unsupported is refused for that reason alone).
                "invalid" if key.is_some() => {
                    assert!(
                        !accepted,
                        "tc {id} ({}) is invalid but verified",
                        t["comment"]
                    );
                    invalid_rejected += 1;
                }
                "invalid" => {
                    assert!(!accepted, "tc {id}");
                    skipped += 1;
                }
                "valid" if key.is_some() && jwk_alg_mismatch(group, jws) => {
                    // Deliberate: a JWK `alg` pins the key to that algorithm (docs/compatibility.md).
                    assert!(!accepted, "tc {id}: JWK alg must pin the key");
                    pinned += 1;
                }
                "valid" if key.is_some() => {
                    assert!(accepted, "tc {id} ({}) is valid but refused", t["comment"]);
                    valid_ok += 1;
                }
                _ => skipped += 1,
            }
        }
    }
    eprintln!(
        "wycheproof JWS: {valid_ok} valid verified, {invalid_rejected} invalid refused, {pinned} valid-but-JWK-alg-mismatch refused, {skipped} skipped (HMAC/JSON/unsupported keys)"
    );
    assert!(valid_ok > 10 && invalid_rejected > 50);
}

fn jwk_alg_mismatch(group: &serde_json::Value, jws: &str) -> bool {
    let Some(jwk_alg) = group["public"].get("alg").and_then(|a| a.as_str()) else {
        return false;
    };
    let Ok(p) = UntrustedJwt::parse_jws(jws) else {
        return false;
    };
    match p.header().map(|h| h.alg()) {
        Ok(HeaderAlg::Known(a)) => a.name() != jwk_alg,
        _ => false,
    }
}
