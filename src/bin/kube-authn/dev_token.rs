//! `kube-authn dev-token`: mints a bound service-account token in exactly the layout
//! kube-apiserver's TokenRequest API mints (`pkg/serviceaccount/claims.go`, signed as
//! `JWTTokenGenerator` signs), for the `--dev` server or any key the caller holds.
//!
//! * header `{"alg":…,"kid":…}`: `ES256`/`ES384`/`ES512` for EC P-256/384/521 keys, `RS256` for
//!   RSA; `kid` is Kubernetes' key id (base64url of the SHA-256 of the public key's PKIX DER);
//! * payload, keys sorted as Go's JSON encoding of go-jose's merged claim map sorts them:
//!   `aud`, `exp`, `iat`, `iss`, `jti`, `kubernetes.io` {`namespace`, `serviceaccount`
//!   {`name`, `uid`}}, `nbf`, `sub`.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use sha2::{Digest, Sha256};

use crate::DevTokenArgs;

/// A private key that can sign JWS.
enum Signer {
    Ecdsa(EcdsaKeyPair, &'static str),
    Rsa(RsaKeyPair),
}

impl Signer {
    fn load(path: &Path) -> Result<Self, String> {
        let key = PrivateKeyDer::from_pem_file(path)
            .map_err(|e| format!("--key-file {}: {e}", path.display()))?;
        let der = key.secret_der();
        let ec: [(&'static signature::EcdsaSigningAlgorithm, &str); 3] = [
            (&signature::ECDSA_P256_SHA256_FIXED_SIGNING, "ES256"),
            (&signature::ECDSA_P384_SHA384_FIXED_SIGNING, "ES384"),
            (&signature::ECDSA_P521_SHA512_FIXED_SIGNING, "ES512"),
        ];
        for (alg, name) in ec {
            if let Ok(k) = EcdsaKeyPair::from_private_key_der(alg, der) {
                return Ok(Signer::Ecdsa(k, name));
            }
        }
        let pkcs1 = match RsaKeyPair::from_der(der) {
            Ok(k) => return Ok(Signer::Rsa(k)),
            Err(e) => e,
        };
        let pkcs8 = match RsaKeyPair::from_pkcs8(der) {
            Ok(k) => return Ok(Signer::Rsa(k)),
            Err(e) => e,
        };
        // An RSA key aws-lc-rs reads but will not sign with: it signs with 2048 bits and more.
        if [&pkcs1, &pkcs8]
            .iter()
            .any(|e| e.description_() == "TooSmall")
        {
            return Err(format!(
                "--key-file {}: the RSA key is shorter than 2048 bits",
                path.display()
            ));
        }
        if [&pkcs1, &pkcs8]
            .iter()
            .any(|e| e.description_() == "TooLarge")
        {
            return Err(format!(
                "--key-file {}: the RSA key is longer than 8192 bits",
                path.display()
            ));
        }
        Err(format!(
            "--key-file {}: not an RSA or EC (P-256, P-384, P-521) private key",
            path.display()
        ))
    }

    fn alg(&self) -> &'static str {
        match self {
            Signer::Ecdsa(_, alg) => alg,
            Signer::Rsa(_) => "RS256",
        }
    }

    /// Kubernetes' key id: base64url(SHA-256(PKIX DER of the public key)).
    fn key_id(&self) -> Result<String, String> {
        let der = match self {
            Signer::Ecdsa(k, _) => k.public_key().as_der(),
            Signer::Rsa(k) => k.public_key().as_der(),
        }
        .map_err(|_| "cannot encode the public key".to_string())?;
        Ok(B64.encode(Sha256::digest(der.as_ref())))
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, String> {
        let rng = SystemRandom::new();
        match self {
            Signer::Ecdsa(k, _) => k
                .sign(&rng, input)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| "signing failed".into()),
            Signer::Rsa(k) => {
                let mut sig = vec![0; k.public_modulus_len()];
                k.sign(&signature::RSA_PKCS1_SHA256, &rng, input, &mut sig)
                    .map_err(|_| "signing failed".to_string())?;
                Ok(sig)
            }
        }
    }
}

/// A random (version 4) UUID, as Kubernetes uses for `jti` and object UIDs.
fn uuid_v4() -> Result<String, String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| format!("random: {e}"))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The claims of a bound token, serialised with Go's key order.
pub fn claims(args: &DevTokenArgs, uid: &str, jti: &str, now: u64, expiration: Duration) -> String {
    let audiences: Vec<&str> = if args.audience.is_empty() {
        vec![args.issuer.as_str()]
    } else {
        args.audience.iter().map(String::as_str).collect()
    };
    let aud = audiences
        .iter()
        .map(|a| json_str(a))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        r#"{{"aud":[{aud}],"exp":{exp},"iat":{now},"iss":{iss},"jti":{jti},"kubernetes.io":{{"namespace":{ns},"serviceaccount":{{"name":{name},"uid":{uid}}}}},"nbf":{now},"sub":{sub}}}"#,
        exp = now + expiration.as_secs(),
        iss = json_str(&args.issuer),
        jti = json_str(jti),
        ns = json_str(&args.namespace),
        name = json_str(&args.name),
        uid = json_str(uid),
        sub = json_str(&format!(
            "system:serviceaccount:{}:{}",
            args.namespace, args.name
        )),
    )
}

/// Prints the token.
pub fn run(args: &DevTokenArgs) -> Result<(), String> {
    if args.namespace.is_empty() || args.name.is_empty() {
        return Err("--namespace and --name must not be empty".into());
    }
    let signer = Signer::load(&args.key_file)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|_| "the system clock is before 1970".to_string())?
        .as_secs();
    let uid = match &args.uid {
        Some(uid) => uid.clone(),
        None => uuid_v4()?,
    };
    let header = format!(
        r#"{{"alg":"{}","kid":{}}}"#,
        signer.alg(),
        json_str(&signer.key_id()?)
    );
    let payload = claims(args, &uid, &uuid_v4()?, now, args.expiration);
    let input = format!("{}.{}", B64.encode(header), B64.encode(payload));
    let sig = signer.sign(input.as_bytes())?;
    println!("{input}.{}", B64.encode(sig));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(audience: &[&str]) -> DevTokenArgs {
        DevTokenArgs {
            key_file: "unused".into(),
            issuer: "https://kube-authn.dev".into(),
            audience: audience.iter().map(|s| s.to_string()).collect(),
            namespace: "default".into(),
            name: "demo".into(),
            uid: None,
            expiration: Duration::from_secs(3600),
        }
    }

    #[test]
    fn claims_in_kubernetes_layout_and_go_key_order() {
        // k8s claims_test.go's clock (1514764800) and a fixed jti.
        let got = claims(
            &args(&[]),
            "sa-uid",
            "fixed",
            1_514_764_800,
            Duration::from_secs(3600),
        );
        assert_eq!(
            got,
            r#"{"aud":["https://kube-authn.dev"],"exp":1514768400,"iat":1514764800,"iss":"https://kube-authn.dev","jti":"fixed","kubernetes.io":{"namespace":"default","serviceaccount":{"name":"demo","uid":"sa-uid"}},"nbf":1514764800,"sub":"system:serviceaccount:default:demo"}"#
        );
        let v: serde_json::Value =
            serde_json::from_str(&claims(&args(&["a", "b\"c"]), "u", "j", 0, Duration::ZERO))
                .unwrap();
        assert_eq!(v["aud"], serde_json::json!(["a", "b\"c"]));
        assert_eq!(v["exp"], v["iat"]);
    }

    /// An RSA key under 2048 bits (which aws-lc-rs will not sign with) is named as such, in
    /// PKCS#1 and PKCS#8; a key that is none of the kinds is "not an RSA or EC" key.
    #[test]
    fn key_file_refusals_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let pkcs8 = dir.path().join("rsa1024.pk8");
        let pkcs1 = dir.path().join("rsa1024.pem");
        let dsa = dir.path().join("ed25519.pem");
        // The 8200-bit key the library's tests check in (too slow to generate here).
        let rsa8200 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/x509_support/rsa8200.key");
        let run = |args: &[&str]| {
            let ok = std::process::Command::new("openssl")
                .args(args)
                .output()
                .expect("openssl is installed")
                .status
                .success();
            assert!(ok, "openssl {args:?}");
        };
        let path = |p: &Path| p.to_str().unwrap().to_owned();
        run(&[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:1024",
            "-out",
            &path(&pkcs8),
        ]);
        run(&[
            "rsa",
            "-in",
            &path(&pkcs8),
            "-traditional",
            "-out",
            &path(&pkcs1),
        ]);
        run(&["genpkey", "-algorithm", "ED25519", "-out", &path(&dsa)]);
        assert!(
            std::fs::read_to_string(&pkcs1)
                .unwrap()
                .starts_with("-----BEGIN RSA PRIVATE KEY-----")
        );
        for (name, file, want) in [
            (
                "RSA-1024 PKCS#8",
                &pkcs8,
                "the RSA key is shorter than 2048 bits",
            ),
            (
                "RSA-1024 PKCS#1",
                &pkcs1,
                "the RSA key is shorter than 2048 bits",
            ),
            (
                "RSA-8200 PKCS#8",
                &rsa8200,
                "the RSA key is longer than 8192 bits",
            ),
            (
                "Ed25519",
                &dsa,
                "not an RSA or EC (P-256, P-384, P-521) private key",
            ),
        ] {
            let err = Signer::load(file)
                .err()
                .unwrap_or_else(|| panic!("{name}: loaded"));
            assert_eq!(
                err,
                format!("--key-file {}: {want}", file.display()),
                "{name}"
            );
        }
    }

    #[test]
    fn uuids_are_version_4() {
        let a = uuid_v4().unwrap();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
        assert_ne!(a, uuid_v4().unwrap());
    }
}
