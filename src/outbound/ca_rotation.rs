//! A CA *file* (kubeconfig `certificate-authority`, the in-cluster `ca.crt`) re-read as
//! client-go v0.37 re-reads it (its `ClientsAllowCARotation` gate, on by default:
//! `transport/ca_rotation.go`): at most once per [`CA_CHECK_EVERY`], by a request (between
//! checks a request only compares the time). A file that cannot be read, is empty, or holds no
//! usable certificate keeps the roots in use (logged, and tried again at the next check); the
//! same bytes again change nothing. New roots take effect for new connections:
//! [`RotatingClient`](super::RotatingClient) builds a new client (a new pool) when
//! [`generation`](RotatingCa::generation) moves, as client-go swaps its transport and closes the
//! old one's idle connections. CA *data* (`certificate-authority-data`) never changes.
//!
//! client-go reads the file and parses it in the request that finds the check due. Here that
//! request starts the read on Tokio's blocking pool and goes on with the roots in use (the
//! Tokio worker does not wait for this read: a CA file on a stalled mount would stall every
//! task on it); the requests after the read has finished use the new roots. Outside a Tokio
//! runtime the read is made where the check is due. Either way: one read of at most
//! [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES) per [`CA_CHECK_EVERY`], one at a time, no lock held.
//!
//! The client certificate files are looked at off the worker too
//! ([`client_cert`](super::client_cert)). A bearer token file is looked at on the calling
//! task ([`BearerTokenFile`](super::BearerTokenFile)): one `stat` per
//! [`TOKEN_FILE_CHECK_EVERY`](super::TOKEN_FILE_CHECK_EVERY) (its content when that changed),
//! and after 401s one read per [`TOKEN_FILE_REREAD_GAP`](super::TOKEN_FILE_REREAD_GAP) at
//! most; and building a credential ([`Credential::new`](super::vault::Credential::new)) reads its
//! files where it is called.

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{CertificateError, DigitallySignedStruct, ExtendedKeyPurpose, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use super::every::Every;
use super::read_bounded;
use crate::error::ConfigError;
use crate::token::cache::Clock;

/// How often, at most, the CA file is read again (client-go's `caRefreshDuration`).
pub(crate) const CA_CHECK_EVERY: Duration = Duration::from_secs(5 * 60);

/// The server certificate verifier for `pem` (a CA bundle).
pub(crate) fn verifier_for(
    pem: &[u8],
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<PoolVerifier>, ConfigError> {
    let (roots, digests) = super::roots_from_pem(pem)?;
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| ConfigError::new(format!("TLS configuration: {e}")))?;
    Ok(Arc::new(PoolVerifier {
        webpki,
        roots: digests.into_iter().collect(),
    }))
}

/// A root pool's server certificate verifier: webpki's, and Go's rule for a server certificate
/// that is itself one of the roots. Go's `x509.Certificate.Verify` takes such a leaf as the
/// whole chain (`Roots.contains(leaf)`: the same DER) and then checks only its validity
/// period, the host name and its extended key usage (none, `serverAuth` or
/// `anyExtendedKeyUsage`); webpki refuses a leaf with basicConstraints cA=TRUE
/// (`CaUsedAsEndEntity`) before it looks at the roots. So a self-signed certificate made by
/// `openssl req -x509` (cA=TRUE by default) and given as the CA works in Go and is accepted
/// here: when webpki refuses a leaf for that reason alone and the leaf is one of the roots, the
/// leaf is checked as Go checks it. Any pool: a configured CA bundle, and the system bundle
/// (Go applies the rule to the system pool too). A cA=TRUE leaf that a root *signed* is still
/// refused (Go accepts it; docs/compatibility.md). The handshake signature is verified as
/// before.
#[derive(Debug)]
pub(crate) struct PoolVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    /// The SHA-256 digest of each root's DER.
    roots: HashSet<[u8; 32]>,
}

/// Whether webpki refused the end-entity certificate for basicConstraints cA=TRUE.
fn ca_used_as_end_entity(e: &rustls::Error) -> bool {
    match e {
        rustls::Error::InvalidCertificate(CertificateError::Other(other)) => matches!(
            other.0.downcast_ref::<webpki::Error>(),
            Some(webpki::Error::CaUsedAsEndEntity)
        ),
        _ => false,
    }
}

/// Go's checks of a leaf its root pool contains, in Go's order: a critical extension it does
/// not handle (read as the x509 authenticator reads roots, [`crate::x509::der::issuer_facts`],
/// a certificate that reader cannot walk included: webpki takes some Go refuses, such as a
/// name constraint on a directory name, and rustls-webpki 0.103.17 a critical SCT list;
/// refused as webpki refuses the others), the validity period at `now`, the host name
/// (webpki's, as for any leaf), then the extended key usage: none, `serverAuth` or
/// `anyExtendedKeyUsage` (Go's `checkChainForKeyUsage` on the one-certificate chain). An empty
/// extended key usage extension is refused, as webpki refuses it on any leaf.
fn verify_root_as_leaf(
    end_entity: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<ServerCertVerified, rustls::Error> {
    let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
    if crate::x509::der::issuer_facts(end_entity.as_ref())
        .is_none_or(|facts| facts.unhandled_critical)
    {
        return Err(CertificateError::Other(rustls::OtherError(Arc::new(
            webpki::Error::UnsupportedCriticalExtension,
        )))
        .into());
    }
    let (_, cert) = x509_parser::parse_x509_certificate(end_entity.as_ref())
        .map_err(|_| CertificateError::BadEncoding)?;
    let at = |secs: i64| UnixTime::since_unix_epoch(Duration::from_secs(secs.max(0) as u64));
    let (not_before, not_after) = (
        cert.validity().not_before.timestamp(),
        cert.validity().not_after.timestamp(),
    );
    let time = now.as_secs();
    if (time as i128) < not_before as i128 {
        return Err(CertificateError::NotValidYetContext {
            time: now,
            not_before: at(not_before),
        }
        .into());
    }
    if (time as i128) > not_after as i128 {
        return Err(CertificateError::ExpiredContext {
            time: now,
            not_after: at(not_after),
        }
        .into());
    }
    rustls::client::verify_server_name(&parsed, server_name)?;
    match cert.extended_key_usage() {
        Ok(None) => Ok(ServerCertVerified::assertion()),
        Ok(Some(eku)) if eku.value.any || eku.value.server_auth => {
            Ok(ServerCertVerified::assertion())
        }
        Ok(Some(eku)) => Err(CertificateError::InvalidPurposeContext {
            required: ExtendedKeyPurpose::ServerAuth,
            presented: presented_purposes(eku.value),
        }
        .into()),
        Err(_) => Err(CertificateError::BadEncoding.into()),
    }
}

/// The purposes of an extended key usage extension, for rustls' error text.
fn presented_purposes(
    eku: &x509_parser::extensions::ExtendedKeyUsage<'_>,
) -> Vec<ExtendedKeyPurpose> {
    let mut presented = Vec::new();
    if eku.client_auth {
        presented.push(ExtendedKeyPurpose::ClientAuth);
    }
    let kp = |last: usize| ExtendedKeyPurpose::Other(vec![1, 3, 6, 1, 5, 5, 7, 3, last]);
    for (set, last) in [
        (eku.code_signing, 3),
        (eku.email_protection, 4),
        (eku.time_stamping, 8),
        (eku.ocsp_signing, 9),
    ] {
        if set {
            presented.push(kp(last));
        }
    }
    for oid in &eku.other {
        let arcs = oid
            .iter()
            .map(|arcs| arcs.map(|a| a as usize).collect())
            .unwrap_or_default();
        presented.push(ExtendedKeyPurpose::Other(arcs));
    }
    presented
}

impl ServerCertVerifier for PoolVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        use sha2::Digest;
        match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(e)
                if ca_used_as_end_entity(&e)
                    && self
                        .roots
                        .contains(&<[u8; 32]>::from(sha2::Sha256::digest(end_entity))) =>
            {
                verify_root_as_leaf(end_entity, server_name, now)
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// The verifier of a CA file: the roots read last, swapped when the file changes.
pub(crate) struct RotatingCa {
    path: PathBuf,
    provider: Arc<CryptoProvider>,
    every: Every,
    /// A read is under way: a check that falls due meanwhile is skipped, so reads never
    /// overlap (one on a stalled mount could outlast [`CA_CHECK_EVERY`]), and only that read
    /// swaps the roots.
    reading: AtomicBool,
    roots: ArcSwap<Roots>,
    /// How many times other roots were loaded.
    generation: AtomicU64,
}

/// The roots in use and the bytes they were read from.
struct Roots {
    pem: Vec<u8>,
    verifier: Arc<PoolVerifier>,
}

/// Ends a read: dropped when it finishes, or with the blocking task if that never runs (the
/// runtime shutting down), so that a later check can read again.
struct Reading(Arc<RotatingCa>);

impl Drop for Reading {
    fn drop(&mut self) {
        self.0.reading.store(false, Ordering::Release);
    }
}

impl fmt::Debug for RotatingCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RotatingCa")
            .field("path", &self.path)
            .field("generation", &self.generation.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl RotatingCa {
    /// Reads `path` now: a CA file that cannot be used at startup is an error.
    pub(crate) fn new(
        path: PathBuf,
        provider: Arc<CryptoProvider>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ConfigError> {
        let bytes = read_bounded(&path)?;
        let verifier = verifier_for(&bytes, &provider)?;
        Ok(Self {
            path,
            provider,
            every: Every::new(clock, CA_CHECK_EVERY),
            reading: AtomicBool::new(false),
            roots: ArcSwap::from_pointee(Roots {
                pem: bytes,
                verifier,
            }),
            generation: AtomicU64::new(0),
        })
    }

    /// How many times other roots have been loaded: it changes when the roots new connections
    /// are verified with do. When a check is due, the file is read on Tokio's blocking pool
    /// (see the [module docs](self)); this call does not wait for it.
    pub(crate) fn generation(self: &Arc<Self>) -> u64 {
        if self.every.due() && !self.reading.swap(true, Ordering::AcqRel) {
            let reading = Reading(self.clone());
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn_blocking(move || reading.0.reload());
                }
                Err(_) => reading.0.reload(),
            }
        }
        self.generation.load(Ordering::Acquire)
    }

    /// Reads the file and swaps in its roots if they are new and usable (the only writer of
    /// `roots`: `reading` keeps reads from overlapping).
    fn reload(&self) {
        let path = self.path.display();
        let bytes = match read_bounded(&self.path) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(%path, error = %e, "CA file cannot be read; keeping the roots in use");
                return;
            }
        };
        if bytes.is_empty() {
            tracing::warn!(%path, "CA file is empty; keeping the roots in use");
            return;
        }
        if self.roots.load().pem == bytes {
            return;
        }
        match verifier_for(&bytes, &self.provider) {
            Ok(verifier) => {
                self.roots.store(Arc::new(Roots {
                    pem: bytes,
                    verifier,
                }));
                self.generation.fetch_add(1, Ordering::AcqRel);
                tracing::info!(%path, "CA file changed: new connections verify with its roots");
            }
            Err(e) => {
                tracing::warn!(%path, error = %e, "CA file holds no usable certificate; keeping the roots in use")
            }
        }
    }
}

impl ServerCertVerifier for RotatingCa {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.roots.load().verifier.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.roots
            .load()
            .verifier
            .verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.roots
            .load()
            .verifier
            .verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.roots.load().verifier.supported_verify_schemes()
    }
}

/// Test support shared by the outbound and OIDC unit tests: a new CA's PEM, and a rustls
/// server configuration (aws-lc-rs, no client authentication) whose certificate, for
/// 127.0.0.1, that CA signed.
#[cfg(test)]
pub(crate) fn loopback_pki() -> (String, rustls::ServerConfig) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    use rustls_pki_types::PrivateKeyDer;
    use rustls_pki_types::pem::PemObject;
    let ca_key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = params.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap(),
    )
    .unwrap();
    (ca_pem, config)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::Mutex;

    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    use rustls_pki_types::PrivateKeyDer;
    use rustls_pki_types::pem::PemObject;

    use super::*;
    use crate::outbound::{ConnectionInfo, Pem, RotatingClient};
    use crate::token::cache::ManualClock;

    /// A CA's PEM, and the server configuration of a certificate for 127.0.0.1 it signed.
    fn pki() -> (String, Arc<rustls::ServerConfig>) {
        let (ca_pem, config) = loopback_pki();
        (ca_pem, Arc::new(config))
    }

    /// An HTTPS server on 127.0.0.1 answering `200 ok` and closing every connection (so each
    /// request is a new handshake), with the certificate in `config` at that moment.
    fn serve(config: Arc<Mutex<Arc<rustls::ServerConfig>>>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let current = config.lock().unwrap().clone();
                let conn = rustls::ServerConnection::new(current).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut request = Vec::new();
                let mut buf = [0; 1024];
                // A refused handshake ends in an error here: the next connection.
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                if request.windows(4).any(|w| w == b"\r\n\r\n") {
                    let _ = tls.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    );
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                }
            }
        });
        addr
    }

    /// A CA bundle is read as Go reads one (`pem.Decode`): a block after a valid CA whose
    /// base64 does not decode, or a BEGIN without an END, is skipped, as Go's
    /// `certutil.NewPoolFromBytes` (an OIDC issuer's `certificateAuthority`) and
    /// `AppendCertsFromPEM` (a kubeconfig's CA) skip it (both checked with Go: the pool
    /// verifies the server), and the client verifies with the valid CA.
    #[tokio::test]
    async fn a_bad_block_after_a_valid_ca_is_skipped() {
        let (ca, server) = pki();
        let addr = serve(Arc::new(Mutex::new(server)));
        let url = format!("https://{addr}/");
        for junk in [
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
            "-----BEGIN CERTIFICATE-----\nAAAA\n",
        ] {
            let client = ConnectionInfo::new(url.as_str())
                .with_ca(Pem::Data(format!("{ca}{junk}").into_bytes()))
                .with_trust_env(false)
                .client(Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("{junk:?}: {e}"));
            let answer = client.get(url.as_str()).send().await;
            assert_eq!(
                answer.map(|r| r.status().as_u16()).ok(),
                Some(200),
                "{junk:?}"
            );
        }
    }

    /// Serves `cert` with `key` (not checked against each other, so a server can present a
    /// certificate whose key it does not hold).
    fn server_config(cert: &rcgen::Certificate, key: &KeyPair) -> Arc<rustls::ServerConfig> {
        #[derive(Debug)]
        struct Fixed(Arc<rustls::sign::CertifiedKey>);
        impl rustls::server::ResolvesServerCert for Fixed {
            fn resolve(
                &self,
                _: rustls::server::ClientHello<'_>,
            ) -> Option<Arc<rustls::sign::CertifiedKey>> {
                Some(self.0.clone())
            }
        }
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let signing = provider
            .key_provider
            .load_private_key(
                PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap(),
            )
            .unwrap();
        let certified = rustls::sign::CertifiedKey::new(vec![cert.der().clone()], signing);
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(Fixed(Arc::new(certified))));
        Arc::new(config)
    }

    /// A reqwest error with its causes, as one line.
    fn error_chain(e: &reqwest::Error) -> String {
        let mut text = e.to_string();
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }

    /// A server certificate that is itself one of the configured roots, with basicConstraints
    /// cA=TRUE (what `openssl req -x509` makes by default), is verified as Go's
    /// `x509.Certificate.Verify` verifies a leaf its root pool contains: as the one-certificate
    /// chain, its validity, host name and extended key usage (none, serverAuth or any) checked;
    /// webpki alone refuses it (`CaUsedAsEndEntity`). Each row was checked with a Go 1.26 client
    /// (`certutil.NewPoolFromBytes` of the same kind of PEM as its `RootCAs`) except the last
    /// two: Go accepts a cA=TRUE server certificate a root signed (its `isValid` does not look
    /// at a leaf's basicConstraints) and we refuse it, as for client certificates
    /// (docs/compatibility.md); and a server that does not hold the key fails the handshake.
    #[tokio::test]
    async fn a_self_signed_ca_in_the_pool_serves_as_its_own_leaf() {
        use rcgen::{ExtendedKeyUsagePurpose as Eku, date_time_ymd};
        struct Leaf {
            names: &'static [&'static str],
            ca: bool,
            eku: Vec<Eku>,
            dates: Option<(i32, i32)>,
            /// Anything else the certificate carries.
            extra: Option<fn(&mut CertificateParams)>,
        }
        let leaf = |names, eku, dates| Leaf {
            names,
            ca: true,
            eku,
            dates,
            extra: None,
        };
        let here: &[&str] = &["localhost", "127.0.0.1"];
        let with = |extra: fn(&mut CertificateParams)| Leaf {
            extra: Some(extra),
            ..leaf(here, vec![], None)
        };
        let self_signed = |l: &Leaf| {
            let key = KeyPair::generate().unwrap();
            let mut params =
                CertificateParams::new(l.names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                    .unwrap();
            if l.ca {
                params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            }
            params.extended_key_usages = l.eku.clone();
            if let Some((from, to)) = l.dates {
                params.not_before = date_time_ymd(from, 1, 1);
                params.not_after = date_time_ymd(to, 1, 1);
            }
            if let Some(extra) = l.extra {
                extra(&mut params);
            }
            let cert = params.self_signed(&key).unwrap();
            (cert, key)
        };
        // (case, the leaf, how the pool and server are made, tls-server-name, the error or
        // None when accepted)
        enum Pool {
            /// The pool is the leaf.
            Leaf,
            /// The pool is another CA, then the leaf.
            AfterAnother,
            /// The pool is the leaf, given as a file.
            File,
            /// The pool is a CA that signed the leaf.
            SignedBy,
            /// The pool is the leaf; the server holds another key.
            WrongKey,
        }
        type Case = (
            &'static str,
            Leaf,
            Pool,
            Option<&'static str>,
            Option<&'static str>,
        );
        let cases: Vec<Case> = vec![
            ("no EKU", leaf(here, vec![], None), Pool::Leaf, None, None),
            (
                "after another root",
                leaf(here, vec![], None),
                Pool::AfterAnother,
                None,
                None,
            ),
            (
                "from a CA file",
                leaf(here, vec![], None),
                Pool::File,
                None,
                None,
            ),
            (
                "tls-server-name",
                leaf(&["example.test"], vec![], None),
                Pool::Leaf,
                Some("example.test"),
                None,
            ),
            (
                "EKU serverAuth",
                leaf(here, vec![Eku::ServerAuth], None),
                Pool::Leaf,
                None,
                None,
            ),
            (
                "EKU any",
                leaf(here, vec![Eku::Any], None),
                Pool::Leaf,
                None,
                None,
            ),
            (
                "EKU clientAuth and serverAuth",
                leaf(here, vec![Eku::ClientAuth, Eku::ServerAuth], None),
                Pool::Leaf,
                None,
                None,
            ),
            (
                "EKU clientAuth only",
                leaf(here, vec![Eku::ClientAuth], None),
                Pool::Leaf,
                None,
                Some(
                    "invalid peer certificate: certificate does not allow extended key usage for server authentication, allows client authentication",
                ),
            ),
            (
                "EKU unknown only",
                leaf(here, vec![Eku::Other(vec![1, 2, 3, 4])], None),
                Pool::Leaf,
                None,
                Some(
                    "invalid peer certificate: certificate does not allow extended key usage for server authentication, allows 1, 2, 3, 4",
                ),
            ),
            (
                "expired",
                leaf(here, vec![], Some((2000, 2001))),
                Pool::Leaf,
                None,
                Some("invalid peer certificate: certificate expired: verification time"),
            ),
            (
                "not yet valid",
                leaf(here, vec![], Some((2200, 2201))),
                Pool::Leaf,
                None,
                Some("invalid peer certificate: certificate not valid yet: verification time"),
            ),
            (
                "another host name",
                leaf(&["other.test"], vec![], None),
                Pool::Leaf,
                None,
                Some(
                    "invalid peer certificate: certificate not valid for name \"127.0.0.1\"; certificate is only valid for DnsName(\"other.test\")",
                ),
            ),
            (
                "tls-server-name of another host",
                leaf(here, vec![], None),
                Pool::Leaf,
                Some("other.test"),
                Some("invalid peer certificate: certificate not valid for name \"other.test\""),
            ),
            // Critical extensions Go's parser does not handle (Go: `x509: unhandled critical
            // extension`): webpki takes the name constraint, and from 0.103.17 the SCT list.
            (
                "a critical name constraint on a directory name",
                with(|p| {
                    let mut dn = rcgen::DistinguishedName::new();
                    dn.push(rcgen::DnType::OrganizationName, "x");
                    p.name_constraints = Some(rcgen::NameConstraints {
                        permitted_subtrees: vec![rcgen::GeneralSubtree::DirectoryName(dn)],
                        excluded_subtrees: vec![],
                    });
                }),
                Pool::Leaf,
                None,
                Some("invalid peer certificate: Other(OtherError(UnsupportedCriticalExtension))"),
            ),
            (
                "a critical SCT list",
                with(|p| {
                    let mut sct = rcgen::CustomExtension::from_oid_content(
                        &[1, 3, 6, 1, 4, 1, 11129, 2, 4, 2],
                        vec![0x04, 0x00],
                    );
                    sct.set_criticality(true);
                    p.custom_extensions.push(sct);
                }),
                Pool::Leaf,
                None,
                Some("invalid peer certificate: Other(OtherError(UnsupportedCriticalExtension))"),
            ),
            (
                "signed by the pool's CA (Go accepts it)",
                leaf(here, vec![], None),
                Pool::SignedBy,
                None,
                Some("invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))"),
            ),
            (
                "the server does not hold the key",
                leaf(here, vec![], None),
                Pool::WrongKey,
                None,
                Some("invalid peer certificate: BadSignature"),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (case, l, pool, server_name, want) in cases {
            let (cert, key) = self_signed(&l);
            let (pool_pem, server) = match pool {
                Pool::Leaf | Pool::File => (cert.pem(), server_config(&cert, &key)),
                Pool::AfterAnother => {
                    let (other, _) = self_signed(&leaf(&["other.test"], vec![], None));
                    (
                        format!("{}{}", other.pem(), cert.pem()),
                        server_config(&cert, &key),
                    )
                }
                Pool::SignedBy => {
                    // A CA and a cA=TRUE leaf it signed.
                    let ca_key = KeyPair::generate().unwrap();
                    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
                    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
                    let ca_cert = ca.self_signed(&ca_key).unwrap();
                    let issuer = Issuer::new(ca, ca_key);
                    let leaf_key = KeyPair::generate().unwrap();
                    let mut params = CertificateParams::new(
                        l.names.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
                    )
                    .unwrap();
                    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
                    let leaf_cert = params.signed_by(&leaf_key, &issuer).unwrap();
                    (ca_cert.pem(), server_config(&leaf_cert, &leaf_key))
                }
                Pool::WrongKey => (
                    cert.pem(),
                    server_config(&cert, &KeyPair::generate().unwrap()),
                ),
            };
            let addr = serve(Arc::new(Mutex::new(server)));
            let url = format!("https://{addr}/");
            let ca = match pool {
                Pool::File => {
                    let path = dir.path().join("ca.crt");
                    std::fs::write(&path, &pool_pem).unwrap();
                    Pem::File(path)
                }
                _ => Pem::Data(pool_pem.into_bytes()),
            };
            let mut info = ConnectionInfo::new(url.as_str())
                .with_ca(ca)
                .with_trust_env(false);
            if let Some(name) = server_name {
                info = info.with_tls_server_name(name);
            }
            let client = info.client(Duration::from_secs(5)).unwrap();
            let got = match client.get(url.as_str()).send().await {
                Ok(r) => Ok(r.status().as_u16()),
                Err(e) => Err(error_chain(&e)),
            };
            match want {
                None => assert_eq!(got, Ok(200), "{case}"),
                Some(text) => {
                    let err = got.expect_err(case);
                    assert!(err.contains(text), "{case}: {err}");
                }
            }
        }
    }

    /// The validity period of a root serving as its own leaf is checked at the verification
    /// time, to the second, as Go checks it (webpki checks it too before it refuses the
    /// cA=TRUE leaf, so through TLS this check is not reached).
    #[test]
    fn a_root_as_its_own_leaf_is_checked_for_validity() {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.not_before = rcgen::date_time_ymd(2030, 1, 1);
        params.not_after = rcgen::date_time_ymd(2031, 1, 1);
        let cert = params.self_signed(&key).unwrap();
        let (from, to) = (1_893_456_000_u64, 1_924_992_000_u64);
        let name = ServerName::try_from("localhost").unwrap();
        let at = |secs| UnixTime::since_unix_epoch(Duration::from_secs(secs));
        // (case, verification time, accepted)
        let cases = [
            ("a second before notBefore", from - 1, false),
            ("at notBefore", from, true),
            ("at notAfter", to, true),
            ("a second after notAfter", to + 1, false),
        ];
        for (case, now, ok) in cases {
            let got = verify_root_as_leaf(cert.der(), &name, at(now));
            assert_eq!(got.is_ok(), ok, "{case}: {got:?}");
        }
        let err = verify_root_as_leaf(cert.der(), &name, at(to + 1)).unwrap_err();
        assert_eq!(
            err,
            rustls::Error::InvalidCertificate(CertificateError::ExpiredContext {
                time: at(to + 1),
                not_after: at(to),
            })
        );
    }

    /// Waits until no read of the CA file is under way.
    async fn read_finished(client: &RotatingClient) {
        let ca = client.ca.as_ref().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while ca.reading.load(Ordering::Acquire) {
            assert!(std::time::Instant::now() < deadline, "the read never ended");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The request that finds the check due does not wait for the file: it is read on the
    /// blocking pool (here a FIFO whose writer comes 2 s later), the request goes on with the
    /// roots in use, and a check due meanwhile starts no second read.
    #[tokio::test]
    async fn a_due_check_reads_the_file_off_the_request() {
        let (ca1, _) = pki();
        let (ca2, _) = pki();
        let dir = tempfile::tempdir().unwrap();
        let ca_file = dir.path().join("ca.crt");
        std::fs::write(&ca_file, &ca1).unwrap();
        let clock = Arc::new(ManualClock::new());
        let info = ConnectionInfo::new("https://127.0.0.1:1/")
            .with_ca(Pem::File(ca_file.clone()))
            .with_trust_env(false);
        let client =
            RotatingClient::with_clock(Arc::new(info), Duration::from_secs(5), clock.clone())
                .unwrap();
        let writer = crate::outbound::stalled_file::serve(&ca_file, ca2, Duration::from_secs(2));
        clock.advance(CA_CHECK_EVERY);
        let started = std::time::Instant::now();
        let _ = client.get();
        // Due again while the first read waits: no second read (it would wait too).
        clock.advance(CA_CHECK_EVERY);
        let _ = client.get();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "the request waited {:?} for the CA file",
            started.elapsed()
        );
        assert_eq!(client.ca.as_ref().unwrap().generation(), 0);
        read_finished(&client).await;
        assert_eq!(client.ca.as_ref().unwrap().generation(), 1, "the new roots");
        assert_eq!(writer.stop(), 1, "one read");
    }

    /// The CA file is read again once the check is due (5 minutes after the last one, by an
    /// injected clock), and new connections verify with its roots; an empty or unparsable file
    /// keeps the roots in use; going back to the first CA works too.
    #[tokio::test]
    async fn a_rotated_ca_file_is_used_after_the_check_interval() {
        let (ca1, server1) = pki();
        let (ca2, server2) = pki();
        let served = Arc::new(Mutex::new(server1.clone()));
        let addr = serve(served.clone());
        let dir = tempfile::tempdir().unwrap();
        let ca_file = dir.path().join("ca.crt");
        std::fs::write(&ca_file, &ca1).unwrap();
        let clock = Arc::new(ManualClock::new());
        let url = format!("https://{addr}/");
        let info = ConnectionInfo::new(url.as_str())
            .with_ca(Pem::File(ca_file.clone()))
            .with_trust_env(false);
        let client =
            RotatingClient::with_clock(Arc::new(info), Duration::from_secs(5), clock.clone())
                .unwrap();
        let just_before = CA_CHECK_EVERY - Duration::from_secs(1);
        // (step, CA file written, server configuration, clock advance, the request succeeds)
        type Step<'a> = (
            &'a str,
            Option<&'a str>,
            &'a Arc<rustls::ServerConfig>,
            Duration,
            bool,
        );
        let steps: [Step<'_>; 9] = [
            ("startup", None, &server1, Duration::ZERO, true),
            (
                "rotated: the old roots until the check",
                Some(&ca2),
                &server2,
                Duration::ZERO,
                false,
            ),
            (
                "a second before the check",
                None,
                &server2,
                just_before,
                false,
            ),
            (
                "the check is due",
                None,
                &server2,
                Duration::from_secs(1),
                true,
            ),
            (
                "an empty file keeps the roots",
                Some(""),
                &server2,
                CA_CHECK_EVERY,
                true,
            ),
            (
                "a file with no certificate keeps the roots",
                Some("not a certificate\n"),
                &server2,
                CA_CHECK_EVERY,
                true,
            ),
            (
                "a missing file keeps the roots",
                None,
                &server2,
                CA_CHECK_EVERY,
                true,
            ),
            (
                "back to the first CA, not yet read",
                Some(&ca1),
                &server2,
                Duration::ZERO,
                true,
            ),
            (
                "read: the server's CA is no longer trusted",
                None,
                &server2,
                CA_CHECK_EVERY,
                false,
            ),
        ];
        for (step, ca, server, advance, ok) in steps {
            match ca {
                Some(pem) => std::fs::write(&ca_file, pem).unwrap(),
                None if step.starts_with("a missing") => std::fs::remove_file(&ca_file).unwrap(),
                None => {}
            }
            *served.lock().unwrap() = server.clone();
            clock.advance(advance);
            // The request that finds the check due starts the read; the next ones use its roots.
            let _ = client.get();
            read_finished(&client).await;
            let result = client.get().get(url.as_str()).send().await;
            assert_eq!(result.is_ok(), ok, "{step}: {result:?}");
        }
        assert_eq!(client.ca.as_ref().unwrap().generation(), 2);
    }
}
