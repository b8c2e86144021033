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

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{DigitallySignedStruct, SignatureScheme};
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
) -> Result<Arc<WebPkiServerVerifier>, ConfigError> {
    let roots = Arc::new(super::roots_from_pem(pem)?);
    WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| ConfigError::new(format!("TLS configuration: {e}")))
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
    verifier: Arc<WebPkiServerVerifier>,
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
