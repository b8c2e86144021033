//! What an unauthenticated client can make `kube-authn serve` log during a TLS handshake: a
//! ClientHello whose server name (SNI) is not a valid DNS name is a failed handshake, logged
//! by the accept loop at debug level only; rustls' own warning ("Illegal SNI hostname
//! received …", with the client's bytes, up to 64 KiB per ClientHello) no longer reaches the
//! log. kube-apiserver logs handshake errors at klog V(5) only.
#![cfg(feature = "server")]

mod serve_support;

use std::sync::Arc;
use std::time::Duration;

use serve_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server name rustls' client accepts, and the same length of bytes that no DNS name has.
const VALID_SNI: &[u8] = b"sni-marker-0123456789.example";
const INVALID_SNI: &[u8] = b"sni-marker-0123456789!example";

/// A rustls client's first flight (the ClientHello record) for the server name `VALID_SNI`,
/// with that name replaced by `INVALID_SNI` (same length, so every length field still holds).
fn client_hello_with_invalid_sni() -> Vec<u8> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(std::str::from_utf8(VALID_SNI).unwrap())
        .unwrap()
        .to_owned();
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut hello = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut hello).unwrap();
    }
    let at = hello
        .windows(VALID_SNI.len())
        .position(|w| w == VALID_SNI)
        .expect("the SNI is in the ClientHello");
    hello[at..at + VALID_SNI.len()].copy_from_slice(INVALID_SNI);
    hello
}

#[tokio::test]
async fn an_invalid_sni_is_not_logged_above_debug() {
    // Logs at debug level (RUST_LOG=debug), so the accept loop's own line is seen.
    let server = Server::spawn(tempfile::tempdir().unwrap(), &[]);
    let hello = client_hello_with_invalid_sni();
    for _ in 0..3 {
        let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        tcp.write_all(&hello).await.unwrap();
        // The server's answer (an alert, or its first flight); then the client goes away.
        let mut buf = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf)).await;
    }
    let log = server.wait_for_log("TLS handshake failed", 3, Duration::from_secs(20));
    let loud: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR ") || l.contains("rustls"))
        .collect();
    assert!(
        loud.is_empty(),
        "logged above debug or by rustls:\n{loud:#?}"
    );
    assert!(
        !log.contains("sni-marker"),
        "the client's SNI bytes were logged:\n{log}"
    );
}
