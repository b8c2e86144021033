//! Test PKI built at test time with the openssl CLI (multi-valued subjects, v1 certificates,
//! RSA keys of any size) and a real TLS server running kube-authn's accept loop.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use kube_authn::authenticator::{Context, RequestAuthenticator};
use kube_authn::tls::pki_types::pem::PemObject;
use kube_authn::tls::pki_types::{CertificateDer, PrivateKeyDer};
use kube_authn::tls::{ClientCertPolicy, TlsServer, server_config};

pub const UID_OID: &str = "1.3.6.1.4.1.57683.2";

#[derive(Clone, Copy, Debug)]
pub enum Key {
    P256,
    Rsa(u32),
    /// A checked-in test key (PKCS#8 PEM), for sizes too slow to generate per run.
    Pem(&'static str),
    /// An ECDSA key on the named curve (`P-224`, `P-384`, …).
    Ec(&'static str),
}

/// A real 8200-bit RSA key (test material only; generating one takes 30 s or more).
pub const RSA_8200_KEY: &str = include_str!("rsa8200.key");

pub struct Pki {
    pub dir: tempfile::TempDir,
}

#[derive(Clone, Debug)]
pub struct Issued {
    pub name: String,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub der: CertificateDer<'static>,
}

impl Issued {
    pub fn pem(&self) -> String {
        std::fs::read_to_string(&self.cert).unwrap()
    }
}

/// What to issue.
pub struct Spec<'a> {
    pub subj: &'a str,
    pub key: Key,
    /// `None`: self-signed.
    pub issuer: Option<&'a Issued>,
    /// openssl extension lines (`basicConstraints=CA:TRUE`, …); empty for an X.509 v1 certificate.
    pub ext: &'a str,
    pub days: u32,
    pub md: &'a str,
    pub serial: u64,
}

impl Default for Spec<'_> {
    fn default() -> Self {
        Spec {
            subj: "/CN=default",
            key: Key::P256,
            issuer: None,
            ext: "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth",
            days: 3650,
            md: "sha256",
            serial: 1,
        }
    }
}

pub const CA_EXT: &str = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash";
pub const LEAF_EXT: &str = "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid";

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .expect("openssl CLI is required for these tests");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Pki {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("openssl.cnf"),
            format!(
                "oid_section = new_oids\n[new_oids]\nkube_uid = {UID_OID}\n[req]\ndistinguished_name = dn\n[dn]\n"
            ),
        )
        .unwrap();
        Pki { dir }
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn genkey(&self, name: &str, key: Key) -> PathBuf {
        let path = self.path(&format!("{name}.key"));
        if let Key::Pem(pem) = key {
            std::fs::write(&path, pem).unwrap();
            return path;
        }
        let mut cmd = Command::new("openssl");
        cmd.arg("genpkey").arg("-out").arg(&path);
        match key {
            Key::P256 => cmd.args(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]),
            Key::Rsa(bits) => cmd.args([
                "-algorithm",
                "RSA",
                "-pkeyopt",
                &format!("rsa_keygen_bits:{bits}"),
            ]),
            Key::Ec(curve) => cmd.args([
                "-algorithm",
                "EC",
                "-pkeyopt",
                &format!("ec_paramgen_curve:{curve}"),
            ]),
            Key::Pem(_) => unreachable!("written above"),
        };
        run(&mut cmd);
        path
    }

    pub fn issue(&self, name: &str, spec: Spec<'_>) -> Issued {
        let key = self.genkey(name, spec.key);
        let csr = self.path(&format!("{name}.csr"));
        let cert = self.path(&format!("{name}.pem"));
        let cnf = self.path("openssl.cnf");
        run(Command::new("openssl")
            .args(["req", "-new", "-config"])
            .arg(&cnf)
            .arg("-key")
            .arg(&key)
            .args(["-subj", spec.subj, "-out"])
            .arg(&csr));
        let mut cmd = Command::new("openssl");
        cmd.args(["x509", "-req", "-in"])
            .arg(&csr)
            .args(["-days", &spec.days.to_string(), &format!("-{}", spec.md)])
            .args(["-set_serial", &spec.serial.to_string(), "-out"])
            .arg(&cert);
        match spec.issuer {
            Some(issuer) => cmd
                .arg("-CA")
                .arg(&issuer.cert)
                .arg("-CAkey")
                .arg(&issuer.key),
            None => cmd.arg("-signkey").arg(&key),
        };
        if !spec.ext.is_empty() {
            let ext = self.path(&format!("{name}.ext"));
            std::fs::write(&ext, spec.ext).unwrap();
            cmd.arg("-extfile").arg(&ext);
        }
        run(&mut cmd);
        let der = CertificateDer::from_pem_file(&cert).unwrap();
        Issued {
            name: name.to_owned(),
            cert,
            key,
            der,
        }
    }

    pub fn ca(&self, name: &str, key: Key) -> Issued {
        self.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                key,
                ext: CA_EXT,
                ..Spec::default()
            },
        )
    }

    pub fn leaf(&self, name: &str, subj: &str, issuer: &Issued) -> Issued {
        self.issue(
            name,
            Spec {
                subj,
                issuer: Some(issuer),
                ext: LEAF_EXT,
                serial: 2,
                ..Spec::default()
            },
        )
    }

    /// A serving certificate for `localhost` and 127.0.0.1 issued by `ca`.
    pub fn serving(&self, ca: &Issued) -> Issued {
        self.issue(
            "serving",
            Spec {
                subj: "/CN=localhost",
                issuer: Some(ca),
                ext: "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1",
                ..Spec::default()
            },
        )
    }

    /// Writes `certs` as one PEM bundle and returns its path.
    pub fn bundle(&self, file: &str, certs: &[&Issued]) -> PathBuf {
        let path = self.path(file);
        let text: String = certs.iter().map(|c| c.pem()).collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Concatenates leaf + intermediates into a client cert file for curl/reqwest.
    pub fn chain_file(&self, file: &str, certs: &[&Issued]) -> PathBuf {
        self.bundle(file, certs)
    }
}

pub fn sha256_hex(der: &[u8]) -> String {
    let out = Command::new("openssl")
        .args(["dgst", "-sha256", "-r"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(der)?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// A running test server: kube-authn's TLS accept loop serving a tiny hyper service that runs
/// `auth` and answers the identity as JSON (a test-only server; the real `kube-authn serve`
/// binary is wired elsewhere).
pub struct TestServer {
    pub addr: std::net::SocketAddr,
    pub server_ca: PathBuf,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    pub async fn start(
        pki: &Pki,
        auth: Arc<dyn RequestAuthenticator>,
        policy: ClientCertPolicy,
    ) -> TestServer {
        let server_ca = pki.ca("server-ca", Key::P256);
        let serving = pki.serving(&server_ca);
        let key = PrivateKeyDer::from_pem_file(&serving.key).unwrap();
        let config = server_config(vec![serving.der.clone()], key, &policy).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let service = tower::service_fn(move |req: http::Request<hyper::body::Incoming>| {
            let auth = auth.clone();
            async move {
                let (parts, _) = req.into_parts();
                let result = auth.authenticate_request(&parts, &Context::default()).await;
                let (status, body) = match result {
                    Ok(Some(resp)) => {
                        let u = &resp.user;
                        (
                            200,
                            serde_json::json!({
                                "username": u.name(),
                                "uid": u.uid(),
                                "groups": u.groups().collect::<Vec<_>>(),
                                "extra": u.extra(),
                                "version": format!("{:?}", parts.version),
                            }),
                        )
                    }
                    Ok(None) => (401, serde_json::json!({"error": "no credentials"})),
                    Err(e) => (401, serde_json::json!({"error": e.to_string()})),
                };
                Ok::<_, std::convert::Infallible>(
                    http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(body.to_string())
                        .unwrap(),
                )
            }
        });
        let task = tokio::spawn(
            TlsServer::new(Arc::new(config))
                .handshake_timeout(std::time::Duration::from_secs(2))
                .shutdown_grace(std::time::Duration::from_secs(2))
                .serve(listener, service, async {
                    let _ = rx.await;
                }),
        );
        TestServer {
            addr,
            server_ca: server_ca.cert.clone(),
            shutdown: Some(tx),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.addr.port())
    }

    /// What a blocking client needs to reach the server.
    pub fn target(&self) -> Target {
        Target {
            addr: self.addr,
            server_ca: self.server_ca.clone(),
        }
    }

    pub async fn stop(mut self) {
        let _ = self.shutdown.take().unwrap().send(());
        let res = self.task.take().unwrap().await.unwrap();
        res.unwrap();
    }
}

/// Address and CA of a running [`TestServer`].
#[derive(Clone, Debug)]
pub struct Target {
    pub addr: std::net::SocketAddr,
    pub server_ca: PathBuf,
}

impl Target {
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.addr.port())
    }
}

/// curl with `--cert/--key` (and extra args); returns (status, body).
pub fn curl(
    server: &Target,
    cert: Option<(&Path, &Path)>,
    extra: &[&str],
) -> (u16, serde_json::Value) {
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "--max-time",
        "10",
        "-w",
        "\n%{http_code}",
        "--cacert",
    ])
    .arg(&server.server_ca)
    .arg("--resolve")
    .arg(format!("localhost:{}:127.0.0.1", server.addr.port()));
    if let Some((c, k)) = cert {
        cmd.arg("--cert").arg(c).arg("--key").arg(k);
    }
    cmd.args(extra).arg(server.url("/"));
    let out = cmd.output().expect("curl is required for these tests");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        eprintln!("curl: {}", String::from_utf8_lossy(&out.stderr));
    }
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (
        code.trim().parse().unwrap_or(0),
        serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    )
}

/// reqwest with a client identity; returns (status, body).
pub async fn reqwest_get(
    server: &TestServer,
    identity_pem: Option<Vec<u8>>,
    headers: &[(&str, &str)],
) -> (u16, serde_json::Value) {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&server.server_ca).unwrap()).unwrap();
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(ca)
        .resolve("localhost", server.addr);
    if let Some(pem) = identity_pem {
        b = b.identity(reqwest::Identity::from_pem(&pem).unwrap());
    }
    let client = b.build().unwrap();
    let mut req = client.get(server.url("/"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

/// PEM identity (certificate chain + PKCS#8 key) for reqwest.
pub fn identity(certs: &[&Issued], key: &Issued) -> Vec<u8> {
    let mut pem: Vec<u8> = certs.iter().flat_map(|c| c.pem().into_bytes()).collect();
    pem.extend(std::fs::read(&key.key).unwrap());
    pem
}

/// DER element at the start of `input`: (the whole element, its content, the rest).
pub fn der_element(input: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let (len, header) = match input[1] {
        n if n < 0x80 => (usize::from(n), 2),
        n => {
            let k = usize::from(n & 0x7f);
            let len = input[2..2 + k]
                .iter()
                .fold(0usize, |acc, &b| acc << 8 | usize::from(b));
            (len, 2 + k)
        }
    };
    (
        &input[..header + len],
        &input[header..header + len],
        &input[header + len..],
    )
}

pub fn der_encode(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match content.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n < 0x100 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(content);
    out
}

/// `cert` with each placeholder in its TBS replaced by bytes of the same length, then signed
/// again with `issuer`'s key: certificates no generator writes (T61 Latin-1 bytes, a BMP
/// terminator, strings Go refuses), still correctly signed, so only the names differ.
pub fn resigned(
    cert: &Issued,
    issuer: &Issued,
    patches: &[(&[u8], &[u8])],
) -> CertificateDer<'static> {
    use rcgen::{KeyPair, SigningKey};
    let (_, outer, _) = der_element(cert.der.as_ref());
    let (tbs, _, rest) = der_element(outer);
    let (alg, _, _) = der_element(rest);
    let mut tbs = tbs.to_vec();
    for (from, to) in patches {
        assert_eq!(from.len(), to.len(), "a patch keeps the length");
        let at = tbs
            .windows(from.len())
            .position(|w| w == *from)
            .unwrap_or_else(|| panic!("placeholder {from:02x?} not in {}", cert.name));
        tbs[at..at + from.len()].copy_from_slice(to);
    }
    let key = KeyPair::from_pem(&std::fs::read_to_string(&issuer.key).unwrap()).unwrap();
    let mut bits = vec![0u8];
    bits.extend(key.sign(&tbs).unwrap());
    let mut body = tbs;
    body.extend_from_slice(alg);
    body.extend(der_encode(0x03, &bits));
    CertificateDer::from(der_encode(0x30, &body))
}
