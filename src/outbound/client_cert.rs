//! A client certificate and key read from files and re-read when they change, as client-go
//! rotates a kubeconfig's `client-certificate` / `client-key` files (cert-manager, kubelet-style
//! renewals): each new TLS connection presents the pair on disk, checked at most once per
//! [`CHECK_EVERY`]. A changed pair that cannot be used (unreadable, not PEM, a key that does not
//! match the certificate: the typical half-written rotation) keeps the previous one, is logged,
//! and is tried again at the next check. Connections already open keep the certificate they
//! were made with (the server checked it at their handshake); a rotation makes
//! [`Credential::client`](super::vault::Credential::client) return a new client, so they are
//! not reused for later requests.

use std::fmt;
use std::path::{Path, PathBuf};
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

/// How often, at most, the files are looked at (on a new connection only).
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
    state: Mutex<State>,
}

struct State {
    checked: Instant,
    stamp: Stamp,
    current: Arc<CertifiedKey>,
    /// How many times a new pair was loaded.
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
        let current = Arc::new(Self::load(&cert, &key, &provider)?);
        Ok(Self {
            cert,
            key,
            provider,
            state: Mutex::new(State {
                checked: Instant::now(),
                stamp,
                current,
                generation: 0,
            }),
        })
    }

    fn load(
        cert: &Path,
        key: &Path,
        provider: &CryptoProvider,
    ) -> Result<CertifiedKey, ConfigError> {
        let cert_pem = Pem::File(cert.to_owned()).bytes()?;
        let key_pem = Pem::File(key.to_owned()).bytes()?;
        certified_key(&cert_pem, &key_pem, provider)
    }

    /// The pair to present now, re-reading the files when they changed (at most once per
    /// [`CHECK_EVERY`]).
    pub(crate) fn current(&self) -> Arc<CertifiedKey> {
        self.refresh().current.clone()
    }

    /// How many times a new pair has been loaded, after the same check as
    /// [`current`](Self::current): it changes when the pair presented by new connections does.
    pub(crate) fn generation(&self) -> u64 {
        self.refresh().generation
    }

    /// The state, after re-reading the files when they changed (at most once per
    /// [`CHECK_EVERY`]).
    fn refresh(&self) -> std::sync::MutexGuard<'_, State> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.checked.elapsed() >= CHECK_EVERY {
            s.checked = Instant::now();
            let now = stamp(&self.cert, &self.key);
            if now != s.stamp {
                match Self::load(&self.cert, &self.key, &self.provider) {
                    Ok(pair) => {
                        s.current = Arc::new(pair);
                        s.stamp = now;
                        s.generation += 1;
                        tracing::info!(cert = %self.cert.display(), "client certificate reloaded");
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
