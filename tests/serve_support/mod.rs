//! The `kube-authn serve` binary as a child process for end-to-end tests: started on
//! 127.0.0.1 on a free port with its own `--cert-dir`, its logs captured, and curl/reqwest
//! clients that trust its generated CA.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Server {
    pub child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub log: Arc<Mutex<String>>,
    pub stdout: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

type Captured = Arc<Mutex<String>>;

/// `kube-authn serve`, without the environment of the pod the tests may run in:
/// `KUBERNETES_SERVICE_HOST` would make `--service-account-lookup=true` (the default) use the
/// in-cluster configuration instead of refusing to start, as the tests expect.
pub fn serve_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kube-authn"));
    command
        .arg("serve")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT");
    command
}

/// Starts the child on `port` with its stderr and stdout captured.
fn launch(dir: &tempfile::TempDir, args: &[String], port: u16) -> (Child, Captured, Captured) {
    let mut child = serve_command()
        .args(args)
        .arg(format!("--cert-dir={}", dir.path().join("certs").display()))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--secure-port={port}"))
        .env("RUST_LOG", "debug")
        // `--dev` writes its demo directory under TMPDIR and removes it on a graceful stop;
        // the test's own directory takes it when the server is killed.
        .env("TMPDIR", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kube-authn");
    let log = Arc::new(Mutex::new(String::new()));
    let stdout = Arc::new(Mutex::new(String::new()));
    capture(child.stderr.take().unwrap(), log.clone());
    capture(child.stdout.take().unwrap(), stdout.clone());
    (child, log, stdout)
}

pub fn capture(stream: impl Read + Send + 'static, into: Arc<Mutex<String>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let mut buf = into.lock().unwrap();
            buf.push_str(&line);
            buf.push('\n');
        }
    });
}

impl Server {
    /// Starts `kube-authn serve` with `args` (plus `--cert-dir` in `dir`, 127.0.0.1 and a free
    /// port) and waits until it answers. If another process took the port between
    /// [`free_port`] and the bind, the server is started once more on a new port.
    pub fn spawn(dir: tempfile::TempDir, args: &[String]) -> Server {
        let port = free_port();
        let (child, log, stdout) = launch(&dir, args, port);
        let mut server = Server {
            child,
            port,
            dir,
            log,
            stdout,
        };
        if let Err(log) = server.try_wait_ready() {
            assert!(
                log.contains("Address already in use"),
                "server exited at startup; log:\n{log}"
            );
            server.port = free_port();
            (server.child, server.log, server.stdout) = launch(&server.dir, args, server.port);
            server.wait_ready();
        }
        server
    }

    /// Waits until the server answers; fails at once, with its log, if it exited.
    pub fn wait_ready(&mut self) {
        if let Err(log) = self.try_wait_ready() {
            panic!("server exited at startup; log:\n{log}");
        }
    }

    /// Waits until the server answers (`Ok`) or exits (`Err` with its whole log).
    fn try_wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // The capture thread drops its clone of `log` at the end of stderr.
                while Arc::strong_count(&self.log) > 1 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return Err(format!("({status})\n{}", self.log()));
            }
            if self.ca().exists() {
                // A short limit: whoever else holds the port may never answer.
                let url = self.url("/healthz");
                let out = self.curl(&["--max-time", "5", "-o", "/dev/null", &url]);
                if out.1 != 0 {
                    return Ok(());
                }
            }
            assert!(
                Instant::now() < deadline,
                "server did not start; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls the captured log until it contains `needle` `times` times; returns the log.
    /// Fails with the log after `timeout`.
    pub fn wait_for_log(&self, needle: &str, times: usize, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let log = self.log();
            if log.matches(needle).count() >= times {
                return log;
            }
            assert!(
                Instant::now() < deadline,
                "{needle:?} not logged {times} times within {timeout:?}:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub fn ca(&self) -> PathBuf {
        self.cert_dir().join("apiserver-ca.crt")
    }

    pub fn cert_dir(&self) -> PathBuf {
        self.dir.path().join("certs")
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// Runs curl; returns (body, HTTP status, response headers).
    pub fn curl(&self, args: &[&str]) -> (String, u16, String) {
        let headers = self.dir.path().join(format!("headers-{}", free_port()));
        let out = Command::new("curl")
            .args(["-sS", "--max-time", "60", "--cacert"])
            .arg(self.ca())
            .arg("-D")
            .arg(&headers)
            .args(["-w", "\n%{http_code}"])
            .args(args)
            .output()
            .expect("curl is installed");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
        let headers = std::fs::read_to_string(&headers).unwrap_or_default();
        (body.to_owned(), code.trim().parse().unwrap_or(0), headers)
    }

    pub fn reqwest(&self) -> reqwest::Client {
        let ca = std::fs::read(self.ca()).unwrap();
        reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
            .build()
            .unwrap()
    }

    /// The whole `/metrics` page, read with `token`.
    pub fn metrics_text(&self, token: &str) -> String {
        let auth = format!("Authorization: Bearer {token}");
        let (body, code, _) = self.curl(&["-H", &auth, &self.url("/metrics")]);
        assert_eq!(code, 200, "{body}");
        body
    }

    /// The value of one Prometheus sample (`name{labels}`), 0 when absent.
    pub fn metric(&self, admin_token: &str, sample: &str) -> u64 {
        self.metrics_text(admin_token)
            .lines()
            .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0)
    }
}

/// The demo bearer tokens of [`start_with_tokens`]: `admin` in system:masters, `jane` in
/// developers.
pub const ADMIN_TOKEN: &str = "f3a9c1d2e4b5a6978877665544332211";
pub const JANE_TOKEN: &str = "0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e";

/// The server with a token file holding [`ADMIN_TOKEN`] (`admin`, system:masters) and
/// [`JANE_TOKEN`] (`jane`, developers).
pub fn start_with_tokens() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        format!("{ADMIN_TOKEN},admin,1,\"system:masters\"\n{JANE_TOKEN},jane,2,\"developers\"\n"),
    )
    .unwrap();
    Server::spawn(dir, &[format!("--token-auth-file={}", tokens.display())])
}

pub const WHOAMI: &str = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;

/// POSTs a SelfSubjectReview with curl over HTTP/1.1: when the server answers (401, 403)
/// before reading a POST body, hyper's HTTP/2 server ends the stream with RST_STREAM(NO_ERROR)
/// as RFC 9113 §8.1 allows; curl 7.88 (Debian 12) then sometimes drops the response and exits
/// 92 while still uploading. The HTTP/2 path is covered by GET tests, reqwest, kubectl and the
/// Python client.
pub fn whoami_curl(server: &Server, auth: &[&str]) -> (u16, Value) {
    let mut args = vec!["--http1.1"];
    args.extend_from_slice(auth);
    let url = server.url("/apis/authentication.k8s.io/v1/selfsubjectreviews");
    args.extend([
        "-H",
        "Content-Type: application/json",
        "-d",
        WHOAMI,
        url.as_str(),
    ]);
    let (body, code, _) = server.curl(&args);
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// Runs `kube-authn serve` with `args` (and `--cert-dir` under `dir`, port 0), expecting it
/// to refuse to start; returns its stderr. Fails the case `name` if the server starts instead
/// (after 20 s) or exits successfully.
pub fn startup_stderr<A: AsRef<str>>(dir: &std::path::Path, name: &str, args: &[A]) -> String {
    let mut child = serve_command()
        .args(args.iter().map(AsRef::as_ref))
        .arg(format!("--cert-dir={}", dir.join("certs").display()))
        .arg("--secure-port=0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A server that starts after all (a regression) must fail the case, not hang the run.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("case {name}: the server started instead of refusing to");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
    }
    assert!(!status.success(), "case {name} should fail: {stderr}");
    stderr
}

/// Runs `kube-authn serve` with each case's flags (and `--cert-dir` under `dir`) and asserts
/// that it refuses to start with a message containing the expected text.
pub fn assert_startup_errors<A: AsRef<str>>(
    dir: &std::path::Path,
    cases: &[(&'static str, Vec<A>, &'static str)],
) {
    for (name, args, want) in cases {
        let stderr = startup_stderr(dir, name, args);
        assert!(stderr.contains(want), "case {name}: {stderr}");
    }
}

/// Like [`assert_startup_errors`], but the last line of stderr must be exactly
/// `Error: <want>` (the line kube-authn ends a refused start with).
pub fn assert_startup_error_lines<A: AsRef<str>, W: AsRef<str>>(
    dir: &std::path::Path,
    cases: &[(&str, Vec<A>, W)],
) {
    for (name, args, want) in cases {
        let stderr = startup_stderr(dir, name, args);
        assert_eq!(
            stderr.lines().last(),
            Some(format!("Error: {}", want.as_ref()).as_str()),
            "case {name}: {stderr}"
        );
    }
}

/// What `--dev` printed, once it has printed all of it (the last line is the bad-token one).
pub fn dev_instructions(server: &Server) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = server.stdout.lock().unwrap().clone();
        if out.contains("Bearer wrong") {
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "instructions not printed:\n{out}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs a printed curl line with `-sS`: its JSON answer (`null` when there is none) and stderr.
pub fn run_printed(line: &str) -> (Value, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{line} -sS"))
        .output()
        .unwrap();
    let body = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (body, String::from_utf8_lossy(&out.stderr).into_owned())
}
