//! `kube-authn serve`'s serving certificate, end to end: `--tls-cert-file` /
//! `--tls-private-key-file` and the generated `--cert-dir` pair are reloaded while the server
//! runs (kube-apiserver's `DynamicCertKeyPairContent`), a pair that does not match keeps the
//! previous one, and half a pair in `--cert-dir` is refused (client-go's `CanReadCertAndKey`).
#![cfg(feature = "server")]

mod serve_support;

use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serve_support::*;

type Ca = CertifiedIssuer<'static, KeyPair>;

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// A serving certificate for 127.0.0.1 signed by `ca` and its key, PEM.
fn leaf(ca: &Ca, cn: &str) -> (String, String) {
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, ca).unwrap();
    (cert.pem(), key.serialize_pem())
}

fn der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .unwrap()
        .to_vec()
}

/// Replaces `path` atomically (write, then rename), as Secret volumes and cert-manager do.
fn replace(path: &Path, content: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, content).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The leaf certificate the server presents to a new TLS connection from a rustls client that
/// trusts the CA in `ca_file`.
fn served_leaf(port: u16, ca_file: &Path) -> Vec<u8> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca_file).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    while conn.is_handshaking() {
        conn.complete_io(&mut sock).unwrap();
    }
    conn.peer_certificates().unwrap()[0].to_vec()
}

/// Polls new connections until the server presents `want`; fails with the log after 15 s.
fn wait_for_leaf(server: &Server, ca_file: &Path, want: &[u8], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while served_leaf(server.port, ca_file) != want {
        assert!(
            Instant::now() < deadline,
            "{what}: not served within 15 s; log:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until `needle` is logged once more than `before` times (counted before the step that
/// should log it), so that an earlier occurrence cannot satisfy the wait.
fn wait_for_one_more(server: &Server, needle: &str, before: usize) {
    server.wait_for_log(needle, before + 1, Duration::from_secs(15));
}

/// How many times `needle` is in the server's log now.
fn logged(server: &Server, needle: &str) -> usize {
    server.log().matches(needle).count()
}

/// The base64 lines of a PEM key: none of them may ever be logged.
fn key_lines(pem: &str) -> Vec<String> {
    pem.lines()
        .filter(|l| !l.starts_with("-----"))
        .map(str::to_owned)
        .collect()
}

/// `--tls-cert-file`/`--tls-private-key-file` replaced while serving: new connections get the
/// new pair after the reload interval (1 s). A certificate whose key is not (yet) the key file's,
/// and a key file that is garbage, keep the previous pair and are logged (without key
/// material); a matching pair afterwards is served again.
#[test]
fn tls_cert_file_is_reloaded_and_a_broken_pair_keeps_the_previous_one() {
    let dir = tempfile::tempdir().unwrap();
    let authority = ca("test serving CA");
    // The support code waits for the server with curl trusting `<cert-dir>/apiserver-ca.crt`.
    let certs = dir.path().join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    let ca_file = certs.join("apiserver-ca.crt");
    std::fs::write(&ca_file, authority.pem()).unwrap();
    let (a_cert, a_key) = leaf(&authority, "serving-a");
    let (b_cert, b_key) = leaf(&authority, "serving-b");
    let (c_cert, c_key) = leaf(&authority, "serving-c");
    let cert = dir.path().join("tls.crt");
    let key = dir.path().join("tls.key");
    std::fs::write(&cert, &a_cert).unwrap();
    std::fs::write(&key, &a_key).unwrap();
    let server = Server::spawn(
        dir,
        &[
            format!("--tls-cert-file={}", cert.display()),
            format!("--tls-private-key-file={}", key.display()),
        ],
    );
    assert_eq!(served_leaf(server.port, &ca_file), der(&a_cert));

    // A rotation: certificate first, then key. (A reload between the two may log a mismatch.)
    const LOADED: &str = "loaded a new serving certificate";
    const MISMATCH: &str = "tls: private key does not match public key";
    const NOT_A_KEY: &str = "tls: failed to find any PEM data in key input";
    let loaded = logged(&server, LOADED);
    replace(&cert, &b_cert);
    replace(&key, &b_key);
    wait_for_leaf(&server, &ca_file, &der(&b_cert), "the new pair");
    wait_for_one_more(&server, LOADED, loaded);

    // A certificate without its key: refused, the previous pair stays.
    let mismatches = logged(&server, MISMATCH);
    replace(&cert, &c_cert);
    wait_for_one_more(&server, MISMATCH, mismatches);
    assert_eq!(served_leaf(server.port, &ca_file), der(&b_cert));
    // A key file that is not a key: refused too.
    let not_keys = logged(&server, NOT_A_KEY);
    replace(&key, "garbage\n");
    wait_for_one_more(&server, NOT_A_KEY, not_keys);
    assert_eq!(served_leaf(server.port, &ca_file), der(&b_cert));

    // The matching key arrives: C is served.
    replace(&key, &c_key);
    wait_for_leaf(&server, &ca_file, &der(&c_cert), "the repaired pair");

    let log = server.log();
    assert!(
        log.contains("serving certificate reload failed; keeping the previous certificate"),
        "{log}"
    );
    for pem in [&a_key, &b_key, &c_key] {
        for line in key_lines(pem) {
            assert!(!log.contains(&line), "key material in the log:\n{log}");
        }
    }
}

/// The self-signed pair in `--cert-dir` is served through the same reloader: replacing
/// `apiserver.crt`/`apiserver.key` changes what new connections see.
#[test]
fn generated_cert_dir_pair_is_reloaded() {
    let server = Server::spawn(tempfile::tempdir().unwrap(), &[]);
    let certs = server.cert_dir();
    let generated = std::fs::read_to_string(certs.join("apiserver.crt")).unwrap();
    assert_eq!(served_leaf(server.port, &server.ca()), der(&generated));

    let authority = ca("replacement CA");
    let (cert, key) = leaf(&authority, "replacement");
    // The client trusts both CAs while the pair changes.
    replace(
        &server.ca(),
        &format!(
            "{}{}",
            std::fs::read_to_string(server.ca()).unwrap(),
            authority.pem()
        ),
    );
    replace(
        &certs.join("apiserver.crt"),
        &format!("{cert}{}", authority.pem()),
    );
    replace(&certs.join("apiserver.key"), &key);
    wait_for_leaf(&server, &server.ca(), &der(&cert), "the replaced pair");
}

/// kube-apiserver refuses to start when `--cert-dir` holds only one half of
/// `apiserver.crt`/`apiserver.key` (naming the missing one, with its whole text: the last line
/// of stderr is compared), and leaves the half that is there alone; a `--tls-cert-file` whose
/// key is another certificate's is refused too.
#[test]
fn half_a_pair_in_cert_dir_and_a_mismatched_pair_are_refused() {
    for (present, missing) in [
        ("apiserver.key", "apiserver.crt"),
        ("apiserver.crt", "apiserver.key"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let certs = dir.path().join("certs");
        std::fs::create_dir_all(&certs).unwrap();
        std::fs::write(certs.join(present), "mine").unwrap();
        // options.go wraps `MaybeDefaultWithSelfSignedCerts`'s error (client-go's).
        let want = format!(
            "error creating self-signed certificates: error reading {}, certificate and key must be supplied as a pair",
            certs.join(missing).display()
        );
        let cases = [("half a pair", Vec::<String>::new(), want)];
        assert_startup_error_lines(dir.path(), &cases);
        assert_eq!(
            std::fs::read_to_string(certs.join(present)).unwrap(),
            "mine"
        );
        assert!(!certs.join(missing).exists());
    }

    let dir = tempfile::tempdir().unwrap();
    let authority = ca("CA");
    let (cert, _) = leaf(&authority, "one");
    let (_, other_key) = leaf(&authority, "two");
    std::fs::write(dir.path().join("tls.crt"), &cert).unwrap();
    std::fs::write(dir.path().join("tls.key"), &other_key).unwrap();
    let cases: Vec<(&'static str, Vec<String>, &'static str)> = vec![(
        "mismatched pair",
        vec![
            format!("--tls-cert-file={}", dir.path().join("tls.crt").display()),
            format!(
                "--tls-private-key-file={}",
                dir.path().join("tls.key").display()
            ),
        ],
        "tls: private key does not match public key",
    )];
    assert_startup_errors(dir.path(), &cases);
}

/// A self-signed RSA certificate for 127.0.0.1 and its key, written by the openssl CLI into
/// `dir` as `rsa<bits>.crt` and `rsa<bits>.key` (PKCS#8) and `rsa<bits>-pkcs1.key` (PKCS#1).
fn openssl_rsa_pair(dir: &Path, bits: u32) -> (std::path::PathBuf, [std::path::PathBuf; 2]) {
    let cert = dir.join(format!("rsa{bits}.crt"));
    let pkcs8 = dir.join(format!("rsa{bits}.key"));
    let pkcs1 = dir.join(format!("rsa{bits}-pkcs1.key"));
    let run = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl is installed");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let newkey = format!("rsa:{bits}");
    run(&[
        "req".as_ref(),
        "-x509".as_ref(),
        "-newkey".as_ref(),
        newkey.as_ref(),
        "-nodes".as_ref(),
        "-keyout".as_ref(),
        pkcs8.as_os_str(),
        "-out".as_ref(),
        cert.as_os_str(),
        "-subj".as_ref(),
        "/CN=127.0.0.1".as_ref(),
        "-addext".as_ref(),
        "subjectAltName=IP:127.0.0.1".as_ref(),
        "-days".as_ref(),
        "1".as_ref(),
    ]);
    run(&[
        "rsa".as_ref(),
        "-in".as_ref(),
        pkcs8.as_os_str(),
        "-traditional".as_ref(),
        "-out".as_ref(),
        pkcs1.as_os_str(),
    ]);
    (cert, [pkcs8, pkcs1])
}

/// Go serves RSA keys of 1024 bits and more; rustls with aws-lc-rs signs with RSA keys of
/// 2048 to 8192 bits only. A 1024-bit serving key (PKCS#8 or PKCS#1) is refused with that
/// reason, by the library and at startup (the whole last line of stderr), where it used to be
/// the bare `tls: failed to parse private key`; a 2048-bit key loads.
#[test]
fn a_serving_rsa_key_under_2048_bits_is_refused_with_the_reason() {
    use kube_authn::tls::serving_cert::ServingCertReloader;
    let dir = tempfile::tempdir().unwrap();
    let want =
        "tls: failed to parse private key: RSA keys must be 2048 to 8192 bits (this key has 1024)";
    let (cert, keys) = openssl_rsa_pair(dir.path(), 1024);
    for key in &keys {
        let err = ServingCertReloader::load(&cert, key).unwrap_err();
        assert_eq!(err.to_string(), want, "{}", key.display());
        let flags = vec![
            format!("--tls-cert-file={}", cert.display()),
            format!("--tls-private-key-file={}", key.display()),
        ];
        let line = format!(
            "serving certificate ({}, {}): {want}",
            cert.display(),
            key.display()
        );
        assert_startup_error_lines(dir.path(), &[("1024-bit RSA key", flags, line)]);
    }
    let (cert, keys) = openssl_rsa_pair(dir.path(), 2048);
    for key in &keys {
        ServingCertReloader::load(&cert, key).unwrap_or_else(|e| panic!("{}: {e}", key.display()));
    }
}

/// Only one of `--tls-cert-file` and `--tls-private-key-file`: kube-apiserver skips the
/// self-signed certificate (either flag set) and its `SecureServingOptions.ApplyTo` returns
/// `NewDynamicServingContentFromFiles`'s error unwrapped: `missing filename for serving cert`
/// (the whole last line of stderr), whether or not the named file exists.
#[test]
fn only_one_serving_flag_is_kube_apiservers_missing_filename() {
    let dir = tempfile::tempdir().unwrap();
    let authority = ca("CA");
    let (cert, key) = leaf(&authority, "one");
    let (cert_file, key_file) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let want = "missing filename for serving cert";
    let cases = [
        (
            "cert without key",
            vec![format!("--tls-cert-file={}", cert_file.display())],
            want,
        ),
        (
            "key without cert",
            vec![format!("--tls-private-key-file={}", key_file.display())],
            want,
        ),
        (
            "a cert that does not exist, without key",
            vec!["--tls-cert-file=/nonexistent/x.crt".to_string()],
            want,
        ),
        (
            "an empty key flag counts as not given",
            vec![
                format!("--tls-cert-file={}", cert_file.display()),
                "--tls-private-key-file=".to_string(),
            ],
            want,
        ),
    ];
    assert_startup_error_lines(dir.path(), &cases);
}
