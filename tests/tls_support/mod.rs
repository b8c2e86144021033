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

/// A client certificate resolver that sends no certificate and records the CA names of the
/// server's CertificateRequest.
#[derive(Debug, Default)]
struct RecordHints(std::sync::Mutex<Option<Vec<Vec<u8>>>>);

impl rustls::client::ResolvesClientCert for RecordHints {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        _sigschemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        *self.0.lock().unwrap() = Some(root_hint_subjects.iter().map(|s| s.to_vec()).collect());
        None
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// One handshake with the server at `addr` as `server_name`, trusting `roots`, over TLS 1.2
/// or 1.3 (both name the CAs): the common names of the acceptable client CAs the server
/// named, in order. Panics if the server did not ask for a client certificate.
pub async fn offered_ca_names(
    addr: std::net::SocketAddr,
    roots: rustls::RootCertStore,
    server_name: &str,
    tls12: bool,
) -> Vec<String> {
    let versions: &[&rustls::SupportedProtocolVersion] = if tls12 {
        &[&rustls::version::TLS12]
    } else {
        &[&rustls::version::TLS13]
    };
    let record = Arc::new(RecordHints::default());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_protocol_versions(versions)
    .unwrap()
    .with_root_certificates(roots)
    .with_client_cert_resolver(record.clone());
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(
            rustls::pki_types::ServerName::try_from(server_name.to_owned()).unwrap(),
            tcp,
        )
        .await
        .unwrap();
    let names = record
        .0
        .lock()
        .unwrap()
        .take()
        .expect("the server requested a client certificate");
    names
        .iter()
        .map(|der| {
            // A DER Name (SEQUENCE of RDNs); its common name's UTF8String/PrintableString.
            let (_, name) =
                <x509_parser::x509::X509Name as x509_parser::prelude::FromDer<_>>::from_der(der)
                    .expect("a DER Name");
            name.iter_common_name()
                .next()
                .and_then(|cn| cn.as_str().ok())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}
