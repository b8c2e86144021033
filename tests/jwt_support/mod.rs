//! Shared test support for the JWT tests: keys and tokens come from an independent JOSE
//! implementation (Python pyca/cryptography + jwcrypto, see tests/tools/), installed by
//! `ci/install-jwt.sh`.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

pub const NOW: i64 = 1514764800;

/// Keys under target/tmp (kept, since the fixture lives in a static that is never dropped:
/// a temporary directory in /tmp would be left behind with private keys on every run).
pub struct Fixture {
    pub path: PathBuf,
}

impl Fixture {
    pub fn key(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.key(name)).unwrap()
    }
}

fn tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools")
}

/// The fixture, or `None` (with a loud message) when Python/jwcrypto are truly absent.
pub fn fixture() -> Option<&'static Fixture> {
    static F: OnceLock<Option<Fixture>> = OnceLock::new();
    F.get_or_init(|| {
        let ok = Command::new("python3")
            .args(["-c", "import jwcrypto, cryptography"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            const MSG: &str = "python3 with jwcrypto/cryptography not found; run ci/install-jwt.sh";
            // ci/test.sh installs the tools and sets this: there a missing tool fails the test
            // instead of skipping it (a skipped test cannot fail).
            assert!(
                std::env::var_os("KUBE_AUTHN_REQUIRE_TEST_TOOLS").is_none(),
                "{}",
                MSG
            );
            eprintln!("\n\n*** SKIPPING: {MSG} ***\n\n");
            return None;
        }
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("jwt-fixture-{}", std::process::id()));
        // A directory left by an earlier process with the same id.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        let st = Command::new("python3")
            .arg(tools().join("jwt_keys.py"))
            .arg(&path)
            .status()
            .unwrap();
        assert!(st.success(), "jwt_keys.py failed");
        Some(Fixture { path })
    })
    .as_ref()
}

/// Mints one token per request with jwcrypto (see tests/tools/jwt_mint.py).
pub fn mint(requests: &[Value]) -> Vec<String> {
    let mut child = Command::new("python3")
        .arg(tools().join("jwt_mint.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for r in requests {
            writeln!(stdin, "{r}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "jwt_mint.py failed");
    let tokens: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(tokens.len(), requests.len());
    tokens
}

pub fn b64(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data)
}

pub fn unb64(data: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(data)
        .unwrap()
}

/// The claims kube-apiserver's TokenRequest puts in a bound token (`claims.go`).
pub fn bound_claims(iss: &str, aud: &[&str], now: i64, ttl: i64) -> Value {
    serde_json::json!({
        "aud": aud, "exp": now + ttl, "iat": now, "nbf": now,
        "iss": iss, "jti": "0a8f2f6c-3f4e-4c1e-8c55-6f3b0f3c7a11",
        "sub": "system:serviceaccount:ns:sa",
        "kubernetes.io": {
            "namespace": "ns",
            "node": {"name": "node-1", "uid": "node-uid"},
            "pod": {"name": "pod-1", "uid": "pod-uid"},
            "serviceaccount": {"name": "sa", "uid": "sa-uid"},
            "warnafter": now + 3607
        }
    })
}

/// The claims of a legacy secret-based token (`legacy.go` `LegacyClaims`).
pub fn legacy_claims() -> Value {
    serde_json::json!({
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": "test",
        "kubernetes.io/serviceaccount/secret.name": "my-secret",
        "kubernetes.io/serviceaccount/service-account.name": "my-service-account",
        "kubernetes.io/serviceaccount/service-account.uid": "12345",
        "sub": "system:serviceaccount:test:my-service-account"
    })
}

pub fn req(key: &Path, alg: &str, kid: Option<&str>, claims: Value) -> Value {
    let mut header = serde_json::json!({"alg": alg});
    if let Some(k) = kid {
        header["kid"] = Value::String(k.into());
    }
    serde_json::json!({"key": key, "header": header, "claims": claims})
}

/// A clock at a whole second plus some nanoseconds (`FixedClock` knows only whole seconds).
#[derive(Debug)]
pub struct SubSecond(pub i64, pub u32);

impl kube_authn::jwt::Clock for SubSecond {
    fn now_unix(&self) -> i64 {
        self.0
    }
    fn now_unix_nanos(&self) -> (i64, u32) {
        (self.0, self.1)
    }
}
