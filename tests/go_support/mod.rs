//! The Go programs in `conformance/go/cmd` that tests run beside kube-authn: kube-apiserver's
//! own client code, from k8s.io/apiserver v0.37.2 (see conformance/README.md).

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    let child = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(format!("./cmd/{name}"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/go"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // ci/install-conformance.sh warms the build cache, so this only links; a cold build of the
    // k8s.io tree takes a few minutes.
    let (status, _, stderr) = finish(child, GO_BUILD_LIMIT, &format!("go build ./cmd/{name}"));
    assert!(status.success(), "go build ./cmd/{name}: {stderr}");
    Some(bin)
}

/// How long [`go_build`] lets `go build` run.
const GO_BUILD_LIMIT: Duration = Duration::from_secs(15 * 60);

/// How long [`run_lines`] lets a program run (the OIDC client waits up to 30 s for its
/// issuers, then answers at once).
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Waits for `child`, reading its stdout and stderr on threads of their own (so that a full
/// pipe cannot stall it), and returns its status and output. Past `limit` the child is killed
/// and the test fails with what it wrote to stderr, rather than hanging until CI's own limit.
fn finish(
    mut child: Child,
    limit: Duration,
    what: &str,
) -> (std::process::ExitStatus, String, String) {
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what}: still running after {limit:?}, killed; stderr: {}",
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (
        status,
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    )
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
    let (status, stdout, stderr) = finish(child, RUN_LIMIT, &bin.display().to_string());
    assert!(status.success(), "{}: {stderr}", bin.display());
    let results: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), lines.len(), "{}: {stderr}", bin.display());
    results
}
