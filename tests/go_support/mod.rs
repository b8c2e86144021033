//! The Go programs in `conformance/go/cmd` that tests run beside kube-authn: kube-apiserver's
//! own client code, from k8s.io/apiserver v0.37.2 (see conformance/README.md).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Builds `conformance/go/cmd/<name>` into `dir`. `None` (the caller skips, loudly) when Go is
/// missing and the test tools are not required; with `KUBE_AUTHN_REQUIRE_TEST_TOOLS` set
/// (ci/test.sh) a missing Go fails the test instead, since a skipped test cannot fail.
pub fn go_build(name: &str, dir: &Path) -> Option<PathBuf> {
    if Command::new("go").arg("version").output().is_err() {
        const MSG: &str = "go is not installed (ci/install-conformance.sh installs it)";
        assert!(
            std::env::var_os("KUBE_AUTHN_REQUIRE_TEST_TOOLS").is_none(),
            "{}",
            MSG
        );
        eprintln!("\n*** SKIPPED: {MSG} ***\n");
        return None;
    }
    let bin = dir.join(name);
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(format!("./cmd/{name}"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/go"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "go build ./cmd/{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(bin)
}

/// Runs `bin` with `args`, writes `lines` (one JSON object each) to its stdin and returns its
/// stdout as one JSON value per line. Proxies from the environment are removed (they would not
/// reach 127.0.0.1). Panics with the program's stderr if it fails.
pub fn run_lines(
    bin: &Path,
    args: &[String],
    lines: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    let mut child = Command::new(bin)
        .args(args)
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", bin.display());
    let results: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), lines.len(), "{}: {stderr}", bin.display());
    results
}
