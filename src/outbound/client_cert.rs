//! A client certificate and key read from files and re-read when they change, as client-go
//! rotates a kubeconfig's `client-certificate` / `client-key` files (cert-manager, kubelet-style
//! renewals): new TLS connections present the pair on disk, looked at at most once per
//! [`CHECK_EVERY`]. A changed pair that cannot be used (unreadable, not PEM, a key that does not
//! match the certificate: the typical half-written rotation) keeps the previous one, is logged,
//! and is tried again at the next check; files rewritten with the same bytes are not a rotation.
//! Connections already open keep the certificate they were made with (the server checked it at
//! their handshake); a rotation makes
//! [`Credential::client`](super::vault::Credential::client) return a new client, so they are not
//! reused for later requests.
//!
//! A handshake takes the pair in use without a lock. The handshake or request that finds a
//! check due starts the look (a `stat` of each file, and a read when that changed) on Tokio's
//! blocking pool and goes on with the pair in use: a file on a stalled mount never stalls a
//! Tokio worker. The handshakes after the look present what it loaded (client-go reads the
//! files in the handshake that finds them due). Outside a Tokio runtime the look is made where
//! the check is due. One look at a time.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;

use rustls::SignatureScheme;
use rustls::client::ResolvesClientCert;
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::Pem;
use super::every::Every;
use crate::error::ConfigError;
use crate::token::cache::Clock;

/// How often, at most, the files are looked at (by a new connection's handshake, or by a
/// request asking its credential for the client).
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(1);

/// What identifies one version of the two files: modification time and length of each.
type Stamp = [(Option<SystemTime>, u64); 2];

fn stamp(cert: &Path, key: &Path) -> Stamp {
    [cert, key].map(|p| match std::fs::metadata(p) {
        Ok(m) => (m.modified().ok(), m.len()),
        Err(_) => (None, 0),
    })
}

/// Parses a client certificate chain and its key (PEM) as client-go does, with Go's
/// `tls.X509KeyPair` (its choice of PEM blocks, its checks and its error texts; see
/// [`key_pair`](crate::tls::key_pair)). Errors never carry the key's contents.
pub(crate) fn parse_pair(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ConfigError> {
    let (certified, key) = crate::tls::key_pair::x509_key_pair(cert_pem, key_pem)?;
    Ok((certified.cert, key))
}

/// [`parse_pair`], as a pair rustls can present with `provider`.
fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    provider: &CryptoProvider,
) -> Result<CertifiedKey, ConfigError> {
    let (chain, key) = parse_pair(cert_pem, key_pem)?;
    CertifiedKey::from_der(chain, key, provider).map_err(|e| ConfigError::new(format!("tls: {e}")))
}

pub(crate) struct RotatingClientCert(Arc<Inner>);

struct Inner {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    every: Every,
    /// A look at the files is under way: a check that falls due meanwhile is skipped, so looks
    /// never overlap (one on a stalled mount could outlast [`CHECK_EVERY`]), and only that
    /// look swaps the pair.
    reading: AtomicBool,
    /// The pair in use, read without a lock by every handshake.
    loaded: ArcSwap<Loaded>,
    /// How many times a different pair was loaded.
    generation: AtomicU64,
}

/// The pair in use and what it was loaded from.
struct Loaded {
    stamp: Stamp,
    /// SHA-256 of the certificate and key files as loaded: a file rewritten with the same
    /// bytes (or only touched) is not a rotation.
    digest: [u8; 32],
    pair: Arc<CertifiedKey>,
}

/// Ends a look: dropped when it finishes, or with the blocking task if that never runs (the
/// runtime shutting down), so that a later check can look again.
struct Reading(Arc<Inner>);

impl Drop for Reading {
    fn drop(&mut self) {
        self.0.reading.store(false, Ordering::Release);
    }
}

impl fmt::Debug for RotatingClientCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RotatingClientCert")
            .field("cert", &self.0.cert)
            .field("key", &self.0.key)
            .finish_non_exhaustive()
    }
}

impl RotatingClientCert {
    /// Loads the pair now: an unusable pair at startup is an error. The checks are timed by
    /// `clock`.
    pub(crate) fn new(
        cert: PathBuf,
        key: PathBuf,
        provider: Arc<CryptoProvider>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ConfigError> {
        let stamp = stamp(&cert, &key);
        let (pair, digest) = load(&cert, &key, &provider)?;
        Ok(Self(Arc::new(Inner {
            cert,
            key,
            provider,
            every: Every::new(clock, CHECK_EVERY),
            reading: AtomicBool::new(false),
            loaded: ArcSwap::from_pointee(Loaded {
                stamp,
                digest,
                pair: Arc::new(pair),
            }),
            generation: AtomicU64::new(0),
        })))
    }

    /// The pair to present now (a new connection's handshake). When a check is due, the files
    /// are looked at on Tokio's blocking pool (where the check is due outside a runtime): this
    /// handshake presents the pair in use, the ones after that look the pair it loaded.
    pub(crate) fn current(&self) -> Arc<CertifiedKey> {
        self.look_if_due();
        self.0.loaded.load().pair.clone()
    }

    /// How many times a different pair has been loaded, after the same check as
    /// [`current`](Self::current): it changes when the pair new connections present does.
    /// Between checks (every request asks) it is a clock read and atomic loads.
    pub(crate) fn generation(&self) -> u64 {
        self.look_if_due();
        self.0.generation.load(Ordering::Acquire)
    }

    /// [`pair_digest`] of the pair in use (no look at the files).
    pub(crate) fn digest(&self) -> [u8; 32] {
        self.0.loaded.load().digest
    }

    /// Starts a look at the files when one is due and none is under way.
    fn look_if_due(&self) {
        if self.0.every.due() && !self.0.reading.swap(true, Ordering::AcqRel) {
            let reading = Reading(self.0.clone());
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn_blocking(move || reading.0.look());
                }
                Err(_) => reading.0.look(),
            }
        }
    }

    #[cfg(test)]
    fn loaded(&self) -> Arc<CertifiedKey> {
        self.0.loaded.load().pair.clone()
    }
}

/// Reads the two files (bounded) and the pair they hold, with [`pair_digest`] of their bytes.
fn load(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<(CertifiedKey, [u8; 32]), ConfigError> {
    let cert_pem = Pem::File(cert.to_owned()).bytes()?;
    let key_pem = Pem::File(key.to_owned()).bytes()?;
    let pair = certified_key(&cert_pem, &key_pem, provider)?;
    Ok((pair, pair_digest(&cert_pem, &key_pem)))
}

/// SHA-256 of a certificate and key as read (each length-prefixed).
pub(crate) fn pair_digest(cert_pem: &[u8], key_pem: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [cert_pem, key_pem] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part);
    }
    h.finalize().into()
}

impl Inner {
    /// Stats the files and loads them when that changed (the only writer of `loaded`:
    /// `reading` keeps looks from overlapping).
    fn look(&self) {
        let stamp_now = stamp(&self.cert, &self.key);
        let loaded = self.loaded.load_full();
        if stamp_now == loaded.stamp {
            return;
        }
        match load(&self.cert, &self.key, &self.provider) {
            Ok((pair, digest)) => {
                let rotated = digest != loaded.digest;
                self.loaded.store(Arc::new(Loaded {
                    stamp: stamp_now,
                    digest,
                    pair: if rotated {
                        Arc::new(pair)
                    } else {
                        loaded.pair.clone()
                    },
                }));
                if rotated {
                    self.generation.fetch_add(1, Ordering::AcqRel);
                    tracing::info!(cert = %self.cert.display(), "client certificate reloaded");
                }
            }
            // Not recorded as seen: tried again at the next check.
            Err(e) => tracing::warn!(
                cert = %self.cert.display(),
                error = %e,
                "client certificate files changed but cannot be used; keeping the previous pair"
            ),
        }
    }
}

impl ResolvesClientCert for RotatingClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system_clock() -> Arc<dyn Clock> {
        Arc::new(crate::token::cache::SystemClock)
    }

    /// The generation moves only when a pair with other content is loaded: rewriting the same
    /// bytes (a new modification time) or a pair that cannot be used does not move it.
    #[test]
    fn generation_counts_rotations_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("c.crt"), dir.path().join("c.key"));
        let pair = |cn: &str| {
            let k = rcgen::KeyPair::generate().unwrap();
            let c = rcgen::CertificateParams::new(vec![cn.to_owned()])
                .unwrap()
                .self_signed(&k)
                .unwrap();
            (c.pem(), k.serialize_pem())
        };
        let write = |(c, k): &(String, String)| {
            std::fs::write(&cert, c).unwrap();
            std::fs::write(&key, k).unwrap();
        };
        let (a, b) = (pair("a"), pair("b"));
        write(&a);
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let r =
            RotatingClientCert::new(cert.clone(), key.clone(), provider, system_clock()).unwrap();
        let mismatched = (b.0.clone(), a.1.clone());
        // (step, files written, generation after the next check)
        let steps: [(&str, &(String, String), u64); 4] = [
            ("the same bytes again", &a, 0),
            ("a pair whose key does not match", &mismatched, 0),
            ("a new pair", &b, 1),
            ("back to the first pair", &a, 2),
        ];
        for (step, files, want) in steps {
            write(files);
            std::thread::sleep(CHECK_EVERY + Duration::from_millis(100));
            assert_eq!(r.generation(), want, "{step}");
            assert_eq!(r.generation(), want, "{step}: between checks");
        }
    }

    /// A handshake that finds the check due does not read the files: the read runs on the
    /// blocking pool (here the certificate file is a FIFO whose writer comes 2 s later, a
    /// stalled mount), the handshake goes on with the pair in use, and a second handshake
    /// meanwhile completes at once (no lock held across the read); the handshakes after the
    /// read present the new pair.
    #[tokio::test]
    async fn a_due_check_reads_the_files_off_the_handshake() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("c.crt"), dir.path().join("c.key"));
        let pair = |cn: &str| {
            let k = rcgen::KeyPair::generate().unwrap();
            let c = rcgen::CertificateParams::new(vec![cn.to_owned()])
                .unwrap()
                .self_signed(&k)
                .unwrap();
            (c.pem(), k.serialize_pem(), c.der().clone())
        };
        let (a, b) = (pair("a"), pair("b"));
        std::fs::write(&cert, &a.0).unwrap();
        std::fs::write(&key, &a.1).unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let r = Arc::new(
            RotatingClientCert::new(cert.clone(), key.clone(), provider, system_clock()).unwrap(),
        );
        std::fs::write(&key, &b.1).unwrap();
        tokio::time::sleep(CHECK_EVERY + Duration::from_millis(100)).await;
        let writer = crate::outbound::stalled_file::serve(&cert, b.0, Duration::from_secs(2));
        let started = std::time::Instant::now();
        // The handshake that finds the check due, then another one on another task.
        let first = r.resolve(&[], &[]).unwrap();
        let second = {
            let r = r.clone();
            tokio::spawn(async move { r.resolve(&[], &[]).unwrap() })
        }
        .await
        .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "the handshakes waited {:?} for the files",
            started.elapsed()
        );
        assert_eq!(first.cert[0], a.2, "the pair in use");
        assert_eq!(second.cert[0], a.2, "the pair in use");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while r.0.generation.load(Ordering::Acquire) == 0 {
            assert!(std::time::Instant::now() < deadline, "the read never ended");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(
            r.loaded().cert[0],
            b.2,
            "the new pair, for the next handshakes"
        );
        assert_eq!(writer.stop(), 1, "one read");
    }

    /// Startup errors name what failed, never a key's contents: each case feeds real key
    /// material that cannot be used (a key of another certificate, a truncated key, a key
    /// whose base64 is broken, an encrypted key of another certificate, a certificate where the
    /// key should be), with Go's `tls.X509KeyPair` texts, and
    /// no part of it (base64 text, DER bytes in hex or as a byte list) may be in the error,
    /// from files (`RotatingClientCert`) or from data (`tls_config`).
    #[test]
    fn unusable_pairs_at_startup() {
        use base64::Engine as _;
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let pair = |cn: &str| {
            let k = rcgen::KeyPair::generate().unwrap();
            let c = rcgen::CertificateParams::new(vec![cn.to_owned()])
                .unwrap()
                .self_signed(&k)
                .unwrap();
            (c.pem(), k.serialize_pem())
        };
        let (cert_a, key_a) = pair("a");
        let (_, key_b) = pair("b");
        let body = |pem: &str| -> String {
            pem.lines()
                .filter(|l| !l.starts_with("-----"))
                .collect::<String>()
        };
        let pem = |label: &str, b64: &str| {
            format!("-----BEGIN {label}-----\n{b64}\n-----END {label}-----\n")
        };
        // Whole base64 quanta, so that it decodes to the first part of the DER.
        let truncated = pem("PRIVATE KEY", &body(&key_a)[..body(&key_a).len() / 8 * 4]);
        let mut broken = body(&key_a);
        broken.insert(40, '!');
        let broken = pem("PRIVATE KEY", &broken);
        // Go 1.26's `X509KeyPair` does not look at the headers: the body is parsed as it is
        // (here another certificate's key, in the clear).
        let encrypted = format!(
            "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n{}\n-----END EC PRIVATE KEY-----\n",
            body(&key_b)
        );
        // Every key given here, as text and as DER.
        let secrets: Vec<String> = [&key_a, &key_b]
            .iter()
            .flat_map(|k| {
                let b64 = body(k);
                let der = base64::engine::general_purpose::STANDARD
                    .decode(&b64)
                    .unwrap();
                let hex: String = der.iter().map(|b| format!("{b:02x}")).collect();
                let mut parts = Vec::new();
                // The DER's first bytes are the same for every key of a kind: from byte 16 on.
                for i in (0..b64.len() - 12).step_by(4).skip(6) {
                    parts.push(b64[i..i + 12].to_owned());
                }
                for i in (32..hex.len() - 16).step_by(2) {
                    parts.push(hex[i..i + 16].to_owned());
                    parts.push(hex[i..i + 16].to_ascii_uppercase());
                }
                for i in 16..der.len() - 4 {
                    let list = format!("{:?}", &der[i..i + 4]);
                    parts.push(list.trim_matches(['[', ']']).to_owned());
                }
                parts
            })
            .collect();
        let cert = write("a.crt", &cert_a);
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        // (case, certificate file, key text, what the error says)
        let cases: [(&str, &PathBuf, &str, &str); 7] = [
            (
                "missing certificate file",
                &dir.path().join("missing.crt"),
                &key_a,
                "missing.crt",
            ),
            (
                "no certificate in the file",
                &write("empty.crt", ""),
                &key_a,
                "tls: failed to find any PEM data in certificate input",
            ),
            (
                "the key of another certificate",
                &cert,
                &key_b,
                "tls: private key does not match public key",
            ),
            (
                "a truncated key",
                &cert,
                &truncated,
                "tls: failed to parse private key",
            ),
            (
                "a key whose base64 is broken",
                &cert,
                &broken,
                "tls: failed to find any PEM data in key input",
            ),
            (
                "an encrypted key",
                &cert,
                &encrypted,
                "tls: private key does not match public key",
            ),
            (
                "a certificate as the key",
                &cert,
                &cert_a,
                "tls: found a certificate rather than a key in the PEM for the private key",
            ),
        ];
        for (name, cert, key_text, want) in cases {
            let key = write("k.key", key_text);
            let from_files =
                RotatingClientCert::new(cert.clone(), key, provider.clone(), system_clock())
                    .unwrap_err()
                    .to_string();
            let mut errors = vec![from_files];
            if let Ok(cert_pem) = std::fs::read(cert) {
                let info = crate::outbound::ConnectionInfo::new("https://x")
                    .with_client_cert(Pem::Data(cert_pem), Pem::Data(key_text.as_bytes().to_vec()));
                errors.push(info.tls_config().unwrap_err().to_string());
            }
            for err in errors {
                assert!(err.contains(want), "{name}: {err}");
                if let Some(leak) = secrets.iter().find(|s| err.contains(s.as_str())) {
                    panic!("{name}: the error shows key material {leak:?}: {err}");
                }
            }
        }
    }
}
