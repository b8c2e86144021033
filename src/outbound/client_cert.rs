//! A client certificate and key read from files and re-read when they change, as client-go
//! rotates a kubeconfig's `client-certificate` / `client-key` files (cert-manager, kubelet-style
//! renewals): each new TLS connection presents the pair on disk, checked at most once per
//! [`CHECK_EVERY`]. A changed pair that cannot be used (unreadable, not PEM, a key that does not
//! match the certificate: the typical half-written rotation) keeps the previous one, is logged,
//! and is tried again at the next check; files rewritten with the same bytes are not a rotation.
//! Connections already open keep the certificate they were made with (the server checked it at
//! their handshake); a rotation makes
//! [`Credential::client`](super::vault::Credential::client) return a new client, so they are not
//! reused for later requests.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rustls::SignatureScheme;
use rustls::client::ResolvesClientCert;
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::Pem;
use crate::error::ConfigError;

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

/// Parses a client certificate chain and its key (PEM). Errors name what failed, never the
/// key's contents.
pub(crate) fn parse_pair(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ConfigError> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| ConfigError::new(format!("client certificate: {e}")))?;
    if chain.is_empty() {
        return Err(ConfigError::new("client certificate: no certificate found"));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| ConfigError::new(format!("client key: {e}")))?;
    Ok((chain, key))
}

/// [`parse_pair`], as a pair rustls can present (the key checked against the certificate).
fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    provider: &CryptoProvider,
) -> Result<CertifiedKey, ConfigError> {
    let (chain, key) = parse_pair(cert_pem, key_pem)?;
    CertifiedKey::from_der(chain, key, provider)
        .map_err(|e| ConfigError::new(format!("client certificate/key: {e}")))
}

pub(crate) struct RotatingClientCert {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    /// When the next look at the files is due, in nanoseconds after `base`: before it,
    /// [`generation`](Self::generation) takes no lock.
    base: Instant,
    next_check: AtomicU64,
    /// [`State::generation`], readable without the lock.
    generation: AtomicU64,
    state: Mutex<State>,
}

struct State {
    stamp: Stamp,
    /// SHA-256 of the certificate and key files as loaded: a file rewritten with the same
    /// bytes (or only touched) is not a rotation.
    digest: [u8; 32],
    current: Arc<CertifiedKey>,
    /// How many times a different pair was loaded.
    generation: u64,
}

impl fmt::Debug for RotatingClientCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RotatingClientCert")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl RotatingClientCert {
    /// Loads the pair now: an unusable pair at startup is an error.
    pub(crate) fn new(
        cert: PathBuf,
        key: PathBuf,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, ConfigError> {
        let stamp = stamp(&cert, &key);
        let (current, digest) = Self::load(&cert, &key, &provider)?;
        let base = Instant::now();
        Ok(Self {
            cert,
            key,
            provider,
            base,
            next_check: AtomicU64::new(CHECK_EVERY.as_nanos() as u64),
            generation: AtomicU64::new(0),
            state: Mutex::new(State {
                stamp,
                digest,
                current: Arc::new(current),
                generation: 0,
            }),
        })
    }

    fn load(
        cert: &Path,
        key: &Path,
        provider: &CryptoProvider,
    ) -> Result<(CertifiedKey, [u8; 32]), ConfigError> {
        use sha2::{Digest, Sha256};
        let cert_pem = Pem::File(cert.to_owned()).bytes()?;
        let key_pem = Pem::File(key.to_owned()).bytes()?;
        let pair = certified_key(&cert_pem, &key_pem, provider)?;
        let mut h = Sha256::new();
        for part in [&cert_pem, &key_pem] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        Ok((pair, h.finalize().into()))
    }

    fn now_nanos(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The pair to present now (a new connection's handshake), re-reading the files when they
    /// changed (at most once per [`CHECK_EVERY`]).
    pub(crate) fn current(&self) -> Arc<CertifiedKey> {
        self.refresh().current.clone()
    }

    /// How many times a different pair has been loaded, after the same check as
    /// [`current`](Self::current): it changes when the pair new connections present does.
    /// Between checks (every request asks) it is one atomic read.
    pub(crate) fn generation(&self) -> u64 {
        if self.now_nanos() < self.next_check.load(Ordering::Acquire) {
            return self.generation.load(Ordering::Acquire);
        }
        self.refresh().generation
    }

    /// The state, after re-reading the files when they changed (at most once per
    /// [`CHECK_EVERY`]).
    fn refresh(&self) -> std::sync::MutexGuard<'_, State> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.now_nanos();
        if now >= self.next_check.load(Ordering::Acquire) {
            self.next_check.store(
                now.saturating_add(CHECK_EVERY.as_nanos() as u64),
                Ordering::Release,
            );
            let stamp_now = stamp(&self.cert, &self.key);
            if stamp_now != s.stamp {
                match Self::load(&self.cert, &self.key, &self.provider) {
                    Ok((pair, digest)) => {
                        s.stamp = stamp_now;
                        if digest != s.digest {
                            s.digest = digest;
                            s.current = Arc::new(pair);
                            s.generation += 1;
                            self.generation.store(s.generation, Ordering::Release);
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
        s
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
        let r = RotatingClientCert::new(cert.clone(), key.clone(), provider).unwrap();
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

    /// Startup errors name what failed, never a key's contents.
    #[test]
    fn unusable_pairs_at_startup() {
        let dir = tempfile::tempdir().unwrap();
        let secret = "-----BEGIN PRIVATE KEY-----\nU0VDUkVULUtFWS1NQVRFUklBTA==\n-----END PRIVATE KEY-----\n";
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let empty = write("empty.crt", "");
        let key = write("secret.key", secret);
        let missing = dir.path().join("missing.crt");
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let cases: [(&str, &PathBuf, &str); 2] = [
            ("missing certificate file", &missing, "missing.crt"),
            (
                "no certificate in the file",
                &empty,
                "client certificate: no certificate found",
            ),
        ];
        for (name, cert, want) in cases {
            let err = RotatingClientCert::new(cert.clone(), key.clone(), provider.clone())
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{name}: {err}");
            assert!(!err.contains("U0VDUkVU"), "{name}: {err}");
        }
    }
}
