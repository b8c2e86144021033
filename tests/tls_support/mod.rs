//! Support for the tests of kube-authn's TLS server: a self-signed `localhost` serving
//! configuration, a client configuration trusting a certificate, and a server on a free
//! 127.0.0.1 port.

#![allow(dead_code)]

use std::sync::Arc;

use kube_authn::tls::pki_types::pem::PemObject;
use kube_authn::tls::pki_types::{CertificateDer, PrivateKeyDer};
use kube_authn::tls::{ClientCertPolicy, TlsServer, server_config};

/// A serving configuration for `localhost` with a fresh self-signed certificate, asking for
/// client certificates as `policy` says; and that certificate, for clients to trust.
pub fn localhost_config(
    policy: &ClientCertPolicy,
) -> (Arc<rustls::ServerConfig>, CertificateDer<'static>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let server_key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
    let config = server_config(vec![cert.der().clone()], server_key, policy).unwrap();
    (Arc::new(config), cert.der().clone())
}

/// A client configuration (aws-lc-rs, safe default versions) trusting `trusted` only,
/// offering `alpn`, with `client_auth` (chain and key) when given.
pub fn client_config(
    trusted: &CertificateDer<'static>,
    alpn: &[&[u8]],
    client_auth: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(trusted.clone()).unwrap();
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots);
    let mut config = match client_auth {
        Some((chain, key)) => builder.with_client_auth_cert(chain, key).unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config
}

/// Serves `app` with `server` on a free 127.0.0.1 port until the returned sender is used or
/// dropped.
pub async fn serve_on_free_port<S, B>(
    server: TlsServer,
    app: S,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>)
where
    S: tower::Service<http::Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve(tcp, app, async {
        let _ = stopped.await;
    }));
    (addr, stop)
}
