//! rustls client-certificate policies.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use crate::error::ConfigError;
use crate::x509::{self, CaBundle, MAX_CERT_LEN, MAX_CHAIN_LEN};

/// What the TLS handshake does with client certificates.
///
/// ```
/// use kube_authn::tls::ClientCertPolicy;
/// // kube-apiserver's behaviour: ask, verify later per request.
/// let policy = ClientCertPolicy::Request { hints: vec![] };
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ClientCertPolicy {
    /// Do not ask for a client certificate.
    None,
    /// Ask for one, accept none or any (still checking the client holds the key): Go's
    /// `tls.RequestClientCert`, what kube-apiserver uses. `hints` are the CA bundles whose
    /// subjects are sent as acceptable CAs (kube-apiserver: client CA, then front-proxy CA).
    Request {
        /// CA bundles named in the CertificateRequest (hints only).
        hints: Vec<Arc<CaBundle>>,
    },
    /// Accept no certificate, or one that verifies against `roots` (Go's
    /// `VerifyClientCertIfGiven`; rustls `allow_unauthenticated`).
    VerifyIfGiven {
        /// Trusted CAs.
        roots: Arc<CaBundle>,
    },
    /// Require a certificate that verifies against `roots` (Go's `RequireAndVerifyClientCert`).
    Require {
        /// Trusted CAs.
        roots: Arc<CaBundle>,
    },
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Go's `tls.RequestClientCert` for rustls: requests a certificate, accepts any (or none)
/// without chain verification, checks the CertificateVerify signature. See the
/// [module docs](super).
///
/// ```
/// let v = kube_authn::tls::RequestClientCert::new(&[]);
/// ```
#[derive(Debug)]
pub struct RequestClientCert {
    hints: Vec<DistinguishedName>,
    algs: WebPkiSupportedAlgorithms,
}

impl RequestClientCert {
    /// A verifier naming the subjects of `hints` as acceptable CAs.
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// let ca = std::sync::Arc::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
    /// let v = kube_authn::tls::RequestClientCert::new(&[ca]);
    /// ```
    pub fn new(hints: &[Arc<CaBundle>]) -> Self {
        let mut seen: Vec<&[u8]> = Vec::new();
        let mut names: Vec<DistinguishedName> = Vec::new();
        for bundle in hints {
            for subject in bundle.subjects() {
                if !seen.contains(&subject) {
                    seen.push(subject);
                    names.push(DistinguishedName::in_sequence(subject));
                }
            }
        }
        Self {
            hints: names,
            algs: provider().signature_verification_algorithms,
        }
    }
}

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        // Go parses every presented certificate during the handshake; so do we (cheaply), so
        // that garbage never reaches the application. Chain verification happens per request.
        if intermediates.len() + 1 > MAX_CHAIN_LEN
            || std::iter::once(end_entity)
                .chain(intermediates)
                .any(|c| c.len() > MAX_CERT_LEN)
        {
            return Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::BadEncoding,
            ));
        }
        let bad = || rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding);
        webpki::EndEntityCert::try_from(end_entity).map_err(|_| bad())?;
        // Every name of every presented certificate must decode as Go decodes it (Go's
        // parser fails the handshake otherwise), intermediates the path may not need
        // included. The attribute-count bound is the request path's, not the handshake's.
        if !std::iter::once(end_entity)
            .chain(intermediates)
            .all(|cert| x509::subject::names_decode(cert))
        {
            return Err(bad());
        }
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

impl ClientCertPolicy {
    /// The rustls verifier for this policy, `None` for [`ClientCertPolicy::None`].
    ///
    /// ```
    /// assert!(kube_authn::tls::ClientCertPolicy::None.verifier().unwrap().is_none());
    /// ```
    pub fn verifier(&self) -> Result<Option<Arc<dyn ClientCertVerifier>>, ConfigError> {
        let roots = |bundle: &CaBundle| -> Result<Arc<RootCertStore>, ConfigError> {
            let mut store = RootCertStore::empty();
            for cert in bundle.certificates() {
                store
                    .add(cert.clone())
                    .map_err(|e| ConfigError::new(format!("client CA: {e}")))?;
            }
            Ok(Arc::new(store))
        };
        let built = |b: rustls::server::ClientCertVerifierBuilder| {
            b.build()
                .map_err(|e| ConfigError::new(format!("client certificate verifier: {e}")))
        };
        Ok(match self {
            ClientCertPolicy::None => None,
            ClientCertPolicy::Request { hints } => Some(Arc::new(RequestClientCert::new(hints))),
            ClientCertPolicy::VerifyIfGiven { roots: r } => Some(built(
                WebPkiClientVerifier::builder_with_provider(roots(r)?, provider())
                    .allow_unauthenticated(),
            )?),
            ClientCertPolicy::Require { roots: r } => Some(built(
                WebPkiClientVerifier::builder_with_provider(roots(r)?, provider()),
            )?),
        })
    }
}

/// A rustls server configuration with the serving certificate `chain`/`key`, the client
/// certificate `policy`, ALPN `h2` and `http/1.1`, and the aws-lc-rs provider.
///
/// ```
/// use kube_authn::tls::{server_config, ClientCertPolicy};
/// # use rustls_pki_types::pem::PemObject;
/// let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
/// let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
/// let config = server_config(chain, key, &ClientCertPolicy::Request { hints: vec![] }).unwrap();
/// assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
/// ```
pub fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    policy: &ClientCertPolicy,
) -> Result<rustls::ServerConfig, ConfigError> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::new(format!("TLS configuration: {e}")))?;
    let builder = match policy.verifier()? {
        Some(v) => builder.with_client_cert_verifier(v),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| ConfigError::new(format!("serving certificate: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}
