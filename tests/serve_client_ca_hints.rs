//! The acceptable client CAs that `kube-authn serve` names in its TLS CertificateRequest follow
//! the reloaded `--client-ca-file` (and `--requestheader-client-ca-file`), as kube-apiserver's
//! dynamic client-CA content rebuilds its TLS configuration. Real server on 127.0.0.1, a
//! rustls client that records the names it was offered.
#![cfg(feature = "server")]

mod serve_support;
mod tls_support;

use std::path::Path;
use std::time::{Duration, Instant};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serve_support::*;

/// A self-signed CA certificate (PEM) with the common name `cn`.
fn ca_pem(cn: &str) -> String {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .self_signed(&KeyPair::generate().unwrap())
        .unwrap()
        .pem()
}

/// Replaces `path` with `content` at once (a new inode, as a kubelet-mounted file changes).
fn replace(path: &Path, content: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, content).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// One handshake (TLS 1.3 and 1.2 alike name the CAs); the common names of the acceptable CAs
/// the server named, in order.
async fn offered_ca_names(server: &Server, tls12: bool) -> Vec<String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(server.ca()).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], server.port));
    tls_support::offered_ca_names(addr, roots, "127.0.0.1", tls12).await
}

#[tokio::test]
async fn certificate_request_names_the_reloaded_client_ca() {
    let dir = tempfile::tempdir().unwrap();
    let client_ca = dir.path().join("client-ca.pem");
    let proxy_ca = dir.path().join("proxy-ca.pem");
    std::fs::write(&client_ca, ca_pem("first client CA")).unwrap();
    std::fs::write(&proxy_ca, ca_pem("front proxy CA")).unwrap();
    let server = Server::spawn(
        dir,
        &[
            format!("--client-ca-file={}", client_ca.display()),
            format!("--requestheader-client-ca-file={}", proxy_ca.display()),
            "--requestheader-username-headers=X-Remote-User".into(),
        ],
    );
    // kube-apiserver's order: the client CA, then the request-header CA.
    for tls12 in [false, true] {
        assert_eq!(
            offered_ca_names(&server, tls12).await,
            ["first client CA", "front proxy CA"],
            "TLS 1.2: {tls12}"
        );
    }

    replace(&client_ca, &ca_pem("second client CA"));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let names = offered_ca_names(&server, false).await;
        if names == ["second client CA", "front proxy CA"] {
            break;
        }
        assert_eq!(
            names,
            ["first client CA", "front proxy CA"],
            "only the old or the new list"
        );
        assert!(
            Instant::now() < deadline,
            "the CertificateRequest still names {names:?}; log:\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        offered_ca_names(&server, true).await,
        ["second client CA", "front proxy CA"]
    );

    // The request-header CA is followed too.
    replace(&proxy_ca, &ca_pem("second front proxy CA"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while offered_ca_names(&server, false).await != ["second client CA", "second front proxy CA"] {
        assert!(Instant::now() < deadline, "log:\n{}", server.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A broken file keeps the previous bundle, and so the previous names.
    std::fs::write(server.dir.path().join("client-ca.pem"), "not a certificate").unwrap();
    server.wait_for_log(
        "reload failed; keeping the previous content",
        1,
        Duration::from_secs(20),
    );
    assert_eq!(
        offered_ca_names(&server, false).await,
        ["second client CA", "second front proxy CA"]
    );
}
