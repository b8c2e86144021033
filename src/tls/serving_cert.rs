//! A serving certificate and key read from two PEM files and reloaded when either changes, as
//! kube-apiserver's `--tls-cert-file`/`--tls-private-key-file`
//! (`dynamiccertificates.NewDynamicServingContentFromFiles`) are.
//!
//! [`ServingCertReloader`] is a rustls [`ResolvesServerCert`]: every handshake gets the current
//! [`CertifiedKey`] from an atomic pointer (no lock, no file access); the files are checked off
//! the handshake path by [`ServingCertReloader::spawn_watch`] (a blocking-pool task, the crate's
//! [`FileReloader`] machinery for each file: size, time and inode every poll, the content every
//! [`FULL_CHECK_EVERY`](crate::reload::FULL_CHECK_EVERY) polls).
//!
//! When either file changed, the pair is parsed again and the private key must match the leaf
//! certificate's public key (Go's `tls.X509KeyPair`). A pair that does not (a broken file, a
//! key of another certificate, a certificate replaced before its key) **keeps the previous
//! certificate**; the failure is logged (paths and reason only: never key material) and counted.
//! Replacing the certificate and then the key therefore serves the old pair until the key has
//! arrived too, then the new one.
//!
//! ```
//! use kube_authn::tls::serving_cert::ServingCertReloader;
//! use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
//! let dir = tempfile::tempdir().unwrap();
//! let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
//! std::fs::write(&cert, doc_client_pem()).unwrap();
//! std::fs::write(&key, doc_client_key_pem()).unwrap();
//! let serving = ServingCertReloader::load(&cert, &key).unwrap();
//! // Every handshake asks the reloader (a rustls `ResolvesServerCert`) for the pair.
//! assert_eq!(serving.current().cert.len(), 1);
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::ConfigError;
use crate::jwt::key::{MAX_RSA_BITS, MIN_RSA_BITS};
use crate::reload::{FileReloader, Reloaded, WatchTask};

use super::{ClientCertPolicy, TlsOptions, server_config_with};

/// The largest certificate or key file read (4 MiB, as a CA bundle).
///
/// ```
/// assert_eq!(kube_authn::tls::serving_cert::MAX_SERVING_FILE_BYTES, 4 * 1024 * 1024);
/// ```
pub const MAX_SERVING_FILE_BYTES: u64 = 4 << 20;

/// A serving certificate chain and private key, loaded from two PEM files and reloaded when
/// they change; a rustls [`ResolvesServerCert`] that always serves the last good pair. See the
/// [module docs](self).
///
/// Clones share the same pair and counters. `Debug` shows the paths and counters, never the key.
///
/// ```
/// use kube_authn::tls::serving_cert::ServingCertReloader;
/// use kube_authn::tls::{ClientCertPolicy, TlsOptions};
/// use kube_authn::reload::Reloaded;
/// use kube_authn::x509::{doc_ca_pem, doc_client_key_pem, doc_client_pem};
///
/// let dir = tempfile::tempdir().unwrap();
/// let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
/// std::fs::write(&cert, doc_client_pem()).unwrap();
/// std::fs::write(&key, doc_client_key_pem()).unwrap();
/// let serving = ServingCertReloader::load(&cert, &key).unwrap();
///
/// // A rustls server configuration that resolves every handshake's certificate through it
/// // (or put `Arc::new(serving.clone())` into `ServerConfig::cert_resolver` yourself).
/// let config = serving
///     .server_config(&ClientCertPolicy::None, &TlsOptions::default())
///     .unwrap();
/// # let _ = config;
/// // On a Tokio runtime: `let _task = serving.spawn_watch(Duration::from_secs(1));`
///
/// // A certificate whose public key is not the key file's: refused, the old pair stays.
/// let tmp = dir.path().join("tmp");
/// std::fs::write(&tmp, doc_ca_pem()).unwrap();
/// std::fs::rename(&tmp, &cert).unwrap();
/// let err = serving.reload_if_changed().unwrap_err();
/// assert!(err.to_string().contains("private key does not match public key"), "{err}");
/// assert_eq!(serving.failures(), 1);
/// let served = serving.current();
/// assert_eq!(served.end_entity_cert().unwrap().as_ref(),
///            kube_authn::x509::parse_pem_bundle(doc_client_pem().as_bytes()).unwrap()[0].as_ref());
///
/// // Back to a matching pair: served from the next check on.
/// std::fs::write(&tmp, doc_client_pem()).unwrap();
/// std::fs::rename(&tmp, &cert).unwrap();
/// assert_eq!(serving.reload_if_changed().unwrap(), Reloaded::Unchanged); // the same pair again
/// assert!(!format!("{serving:?}").contains("PRIVATE"));
/// ```
#[derive(Clone)]
pub struct ServingCertReloader {
    shared: Arc<Shared>,
}

struct Shared {
    cert: FileReloader<Vec<CertificateDer<'static>>>,
    key: FileReloader<PrivateKeyDer<'static>>,
    current: ArcSwap<Pair>,
    /// Serialises checks (the watch task and explicit calls).
    check: Mutex<()>,
    reloads: AtomicU64,
    failures: AtomicU64,
}

/// The pair being served, and the key's DER (to build a `ServerConfig` from).
struct Pair {
    certified: Arc<CertifiedKey>,
    key: PrivateKeyDer<'static>,
}

/// PEM errors without the bytes some of them quote (a line of the file, a marker): the key
/// file's content must never reach a log or an error.
fn pem_error(e: &pem::Error) -> &'static str {
    match e {
        pem::Error::MissingSectionEnd { .. } => "a PEM section has no END line",
        pem::Error::IllegalSectionStart { .. } => "a PEM BEGIN line is malformed",
        pem::Error::Base64Decode(_) => "a PEM section is not valid base64",
        pem::Error::Io(_) => "read error",
        pem::Error::NoItemsFound => "no PEM data found",
        _ => "invalid PEM",
    }
}

fn parse_chain(path: &Path, bytes: &[u8]) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    if bytes.is_empty() {
        return Err(ConfigError::new(format!(
            "{}: missing content for serving cert",
            path.display()
        )));
    }
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| ConfigError::new(format!("{}: {}", path.display(), pem_error(&e))))?;
    if chain.is_empty() {
        return Err(ConfigError::new(format!(
            "{}: tls: failed to find any PEM data in certificate input",
            path.display()
        )));
    }
    Ok(chain)
}

fn parse_key(path: &Path, bytes: &[u8]) -> Result<PrivateKeyDer<'static>, ConfigError> {
    if bytes.is_empty() {
        return Err(ConfigError::new(format!(
            "{}: missing content for serving cert",
            path.display()
        )));
    }
    PrivateKeyDer::from_pem_slice(bytes).map_err(|e| {
        let reason = match e {
            pem::Error::NoItemsFound => "tls: failed to find any PEM data in key input",
            e => pem_error(&e),
        };
        ConfigError::new(format!("{}: {reason}", path.display()))
    })
}

/// The size in bits of an RSA private key's modulus: PKCS#1, or PKCS#8 holding an
/// `rsaEncryption` key; `None` for any other key, or one whose DER does not parse.
fn rsa_modulus_bits(key: &PrivateKeyDer<'_>) -> Option<usize> {
    use crate::x509::der::{items, read_tlv};
    const INTEGER: u8 = 0x02;
    const OCTET_STRING: u8 = 0x04;
    const OID: u8 = 0x06;
    const SEQUENCE: u8 = 0x30;
    // 1.2.840.113549.1.1.1
    const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    let sequence = |der| {
        read_tlv(der)
            .filter(|(tlv, _)| tlv.tag == SEQUENCE)
            .map(|(tlv, _)| tlv.content)
    };
    let pkcs1 = match key {
        PrivateKeyDer::Pkcs1(k) => k.secret_pkcs1_der(),
        PrivateKeyDer::Pkcs8(k) => {
            // PrivateKeyInfo: version, AlgorithmIdentifier, OCTET STRING (the PKCS#1 key).
            let mut fields = items(sequence(k.secret_pkcs8_der())?);
            fields.next()?.filter(|v| v.tag == INTEGER)?;
            let algorithm = fields.next()?.filter(|a| a.tag == SEQUENCE)?;
            let (oid, _) = read_tlv(algorithm.content)?;
            if oid.tag != OID || oid.content != RSA_ENCRYPTION {
                return None;
            }
            fields.next()?.filter(|p| p.tag == OCTET_STRING)?.content
        }
        _ => return None,
    };
    // RSAPrivateKey: version, modulus, …
    let mut fields = items(sequence(pkcs1)?);
    fields.next()?.filter(|v| v.tag == INTEGER)?;
    let modulus = fields.next()?.filter(|m| m.tag == INTEGER)?.content;
    Some(crate::jwt::der::bit_len(modulus)).filter(|&bits| bits > 0)
}

/// Go's `tls.X509KeyPair` checks: the key parses, the leaf parses, and the key is the leaf's.
fn certified(
    chain: &[CertificateDer<'static>],
    key: &PrivateKeyDer<'static>,
) -> Result<CertifiedKey, ConfigError> {
    // rustls' parse errors name the algorithms tried, never the key. An RSA key aws-lc-rs
    // refuses for its size (Go serves 1024 bits and up) says so: the size is no secret.
    let signing = rustls::crypto::aws_lc_rs::sign::any_supported_type(key).map_err(|_| {
        match rsa_modulus_bits(key) {
            Some(bits) if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) => {
                ConfigError::new(format!(
                    "tls: failed to parse private key: RSA keys must be {MIN_RSA_BITS} to {MAX_RSA_BITS} bits (this key has {bits})"
                ))
            }
            _ => ConfigError::new("tls: failed to parse private key"),
        }
    })?;
    let certified = CertifiedKey::new(chain.to_vec(), signing);
    match certified.keys_match() {
        Ok(()) => Ok(certified),
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => Err(
            ConfigError::new("tls: private key does not match public key"),
        ),
        Err(rustls::Error::InconsistentKeys(_)) => Err(ConfigError::new(
            "tls: cannot tell whether the private key matches the public key",
        )),
        Err(e) => Err(ConfigError::new(format!(
            "tls: failed to parse certificate: {e}"
        ))),
    }
}

impl ServingCertReloader {
    /// Reads `cert_file` (the serving certificate, then any intermediates, PEM) and `key_file`
    /// (its private key: PKCS#8, PKCS#1 or SEC1 PEM) and checks that they are a pair. Errors
    /// name the file and the reason, never key material.
    ///
    /// ```
    /// use kube_authn::tls::serving_cert::ServingCertReloader;
    /// use kube_authn::x509::{doc_ca_pem, doc_client_key_pem, doc_client_pem};
    /// let dir = tempfile::tempdir().unwrap();
    /// let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    /// std::fs::write(&cert, doc_client_pem()).unwrap();
    /// std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// assert!(ServingCertReloader::load(&cert, &key).is_ok());
    ///
    /// std::fs::write(&cert, doc_ca_pem()).unwrap(); // another certificate's public key
    /// let err = ServingCertReloader::load(&cert, &key).unwrap_err();
    /// assert_eq!(err.to_string(), "tls: private key does not match public key");
    /// std::fs::write(&key, "").unwrap();
    /// let err = ServingCertReloader::load(&cert, &key).unwrap_err();
    /// assert!(err.to_string().ends_with("tls.key: missing content for serving cert"), "{err}");
    /// ```
    pub fn load(
        cert_file: impl AsRef<Path>,
        key_file: impl AsRef<Path>,
    ) -> Result<Self, ConfigError> {
        let cert_path: PathBuf = cert_file.as_ref().to_owned();
        let key_path: PathBuf = key_file.as_ref().to_owned();
        let cert = {
            let path = cert_path.clone();
            FileReloader::load(&cert_path, MAX_SERVING_FILE_BYTES, move |b| {
                parse_chain(&path, b)
            })?
        };
        let key = {
            let path = key_path.clone();
            FileReloader::load(&key_path, MAX_SERVING_FILE_BYTES, move |b| {
                parse_key(&path, b)
            })?
        };
        let certified = certified(&cert.current(), &key.current())?;
        let pair = Pair {
            certified: Arc::new(certified),
            key: key.current().clone_key(),
        };
        Ok(Self {
            shared: Arc::new(Shared {
                cert,
                key,
                current: ArcSwap::from_pointee(pair),
                check: Mutex::new(()),
                reloads: AtomicU64::new(0),
                failures: AtomicU64::new(0),
            }),
        })
    }

    /// The pair served now.
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// assert_eq!(serving.current().cert.len(), 1);
    /// ```
    pub fn current(&self) -> Arc<CertifiedKey> {
        self.shared.current.load().certified.clone()
    }

    /// The certificate file's path.
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// assert_eq!(serving.cert_file(), cert);
    /// ```
    pub fn cert_file(&self) -> &Path {
        self.shared.cert.path()
    }

    /// The key file's path.
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// assert_eq!(serving.key_file(), key);
    /// ```
    pub fn key_file(&self) -> &Path {
        self.shared.key.path()
    }

    /// How many checks swapped in a new pair.
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// assert_eq!(serving.reloads(), 0);
    /// ```
    pub fn reloads(&self) -> u64 {
        self.shared.reloads.load(Ordering::Relaxed)
    }

    /// How many checks found a changed file but no usable pair (the previous one was kept).
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// std::fs::write(&key, "not a key").unwrap();
    /// assert!(serving.reload_if_changed().is_err());
    /// assert_eq!(serving.failures(), 1);
    /// ```
    pub fn failures(&self) -> u64 {
        self.shared.failures.load(Ordering::Relaxed)
    }

    /// Checks both files once (on the calling thread: file reads and a signature-key parse)
    /// and swaps in the new pair if either changed and they match. On failure the previous
    /// pair is kept, the failure is logged and counted, and the error is returned.
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::reload::Reloaded;
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// assert_eq!(serving.reload_if_changed().unwrap(), Reloaded::Unchanged);
    /// ```
    pub fn reload_if_changed(&self) -> Result<Reloaded, ConfigError> {
        self.shared.check()
    }

    /// Checks the files every `interval` on the Tokio runtime's blocking pool (an interval
    /// under [`MIN_POLL_INTERVAL`](crate::reload::MIN_POLL_INTERVAL) is taken as that). The
    /// task stops when the returned handle or the last clone of this reloader is dropped.
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// let _task = serving.spawn_watch(std::time::Duration::from_secs(1));
    /// # });
    /// ```
    pub fn spawn_watch(&self, interval: Duration) -> WatchTask {
        // Failures are logged and counted inside `check`.
        WatchTask::poll(interval, Arc::downgrade(&self.shared), |shared| {
            let _ = shared.check();
        })
    }

    /// [`server_config_with`] for the pair served now, with this reloader as the
    /// configuration's certificate resolver: every handshake gets the current pair.
    ///
    /// ```
    /// # use kube_authn::tls::serving_cert::ServingCertReloader;
    /// # use kube_authn::tls::{ClientCertPolicy, TlsOptions};
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    /// # std::fs::write(&cert, doc_client_pem()).unwrap();
    /// # std::fs::write(&key, doc_client_key_pem()).unwrap();
    /// let serving = ServingCertReloader::load(&cert, &key).unwrap();
    /// let config = serving.server_config(&ClientCertPolicy::None, &TlsOptions::default()).unwrap();
    /// assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
    /// ```
    pub fn server_config(
        &self,
        policy: &ClientCertPolicy,
        options: &TlsOptions,
    ) -> Result<rustls::ServerConfig, ConfigError> {
        let pair = self.shared.current.load_full();
        let mut config = server_config_with(
            pair.certified.cert.clone(),
            pair.key.clone_key(),
            policy,
            options,
        )?;
        config.cert_resolver = Arc::new(self.clone());
        Ok(config)
    }
}

impl Shared {
    fn check(&self) -> Result<Reloaded, ConfigError> {
        let _serial = self.check.lock().unwrap_or_else(|p| p.into_inner());
        // Each reloader logs and counts its own read and parse failures, and keeps its last
        // good content; the pair is rebuilt when either took a new version.
        let cert = self.cert.reload_if_changed();
        let key = self.key.reload_if_changed();
        let changed = matches!(cert, Ok(Reloaded::Updated)) || matches!(key, Ok(Reloaded::Updated));
        if !changed {
            return match (cert, key) {
                (Err(e), _) | (_, Err(e)) => {
                    self.failures.fetch_add(1, Ordering::Relaxed);
                    Err(e)
                }
                _ => Ok(Reloaded::Unchanged),
            };
        }
        let chain = self.cert.current();
        let key_der = self.key.current();
        let served = self.current.load();
        if served.certified.cert == **chain && served.key.secret_der() == key_der.secret_der() {
            return Ok(Reloaded::Unchanged);
        }
        match certified(&chain, &key_der) {
            Ok(certified) => {
                self.current.store(Arc::new(Pair {
                    certified: Arc::new(certified),
                    key: key_der.clone_key(),
                }));
                self.reloads.fetch_add(1, Ordering::Relaxed);
                tracing::info!(
                    cert = %self.cert.path().display(),
                    key = %self.key.path().display(),
                    "loaded a new serving certificate and key"
                );
                Ok(Reloaded::Updated)
            }
            Err(e) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                tracing::error!(
                    cert = %self.cert.path().display(),
                    key = %self.key.path().display(),
                    error = %e,
                    "serving certificate reload failed; keeping the previous certificate"
                );
                Err(e)
            }
        }
    }
}

impl ResolvesServerCert for ServingCertReloader {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

impl std::fmt::Debug for ServingCertReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingCertReloader")
            .field("cert_file", &self.cert_file())
            .field("key_file", &self.key_file())
            .field("reloads", &self.reloads())
            .field("failures", &self.failures())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed serving certificate for 127.0.0.1 and its PKCS#8 key, PEM.
    fn pair(cn: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        (params.self_signed(&key).unwrap().pem(), key.serialize_pem())
    }

    /// Writes `content` to `path` atomically (a new inode), as a Secret volume update does.
    fn replace(path: &Path, content: &str) {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, content).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    }

    fn served_der(s: &ServingCertReloader) -> Vec<u8> {
        s.current().end_entity_cert().unwrap().to_vec()
    }

    /// A reloader serving pair `a` from `tls.crt`/`tls.key` in a fresh directory, and pair `b`
    /// to rotate to.
    struct Rotation {
        dir: tempfile::TempDir,
        cert: std::path::PathBuf,
        key: std::path::PathBuf,
        a: (String, String),
        b: (String, String),
        s: ServingCertReloader,
    }

    fn rotation() -> Rotation {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let (a, b) = (pair("a"), pair("b"));
        std::fs::write(&cert, &a.0).unwrap();
        std::fs::write(&key, &a.1).unwrap();
        let s = ServingCertReloader::load(&cert, &key).unwrap();
        Rotation {
            dir,
            cert,
            key,
            a,
            b,
            s,
        }
    }

    fn der(pem: &str) -> Vec<u8> {
        CertificateDer::from_pem_slice(pem.as_bytes())
            .unwrap()
            .to_vec()
    }

    /// A rotation that replaces the certificate before the key: the check in between sees a
    /// mismatch and keeps the old pair (and says so); once the key has arrived the new pair is
    /// served. A garbage key keeps the pair too; neither the errors nor `Debug` carry key
    /// material.
    #[test]
    fn certificate_then_key_rotation_and_broken_keys_keep_the_served_pair() {
        let Rotation {
            dir: _dir,
            cert,
            key,
            a: (a_cert, _),
            b: (b_cert, b_key),
            s,
        } = rotation();
        assert_eq!(served_der(&s), der(&a_cert));

        replace(&cert, &b_cert);
        let err = s.reload_if_changed().unwrap_err();
        assert_eq!(
            err.to_string(),
            "tls: private key does not match public key"
        );
        assert_eq!(served_der(&s), der(&a_cert));
        // Nothing new: no new error, no new failure.
        assert_eq!(s.reload_if_changed().unwrap(), Reloaded::Unchanged);
        assert_eq!(s.failures(), 1);

        replace(&key, &b_key);
        assert_eq!(s.reload_if_changed().unwrap(), Reloaded::Updated);
        assert_eq!(served_der(&s), der(&b_cert));
        assert_eq!(s.reloads(), 1);

        // A key file whose body is broken base64 (with the real key's first line in it).
        let body: Vec<&str> = b_key.lines().collect();
        let garbage = format!("{}\n{}!!\n{}\n", body[0], body[1], body[body.len() - 1]);
        replace(&key, &garbage);
        let err = s.reload_if_changed().unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: a PEM section is not valid base64", key.display())
        );
        assert_eq!(served_der(&s), der(&b_cert));
        let debug = format!("{s:?}");
        for line in &body[1..body.len() - 1] {
            assert!(!err.contains(line) && !debug.contains(line));
        }
        assert!(!debug.contains("PRIVATE KEY"), "{debug}");

        // An empty key file: Kubernetes' "missing content".
        replace(&key, "");
        let err = s.reload_if_changed().unwrap_err().to_string();
        assert!(err.ends_with("missing content for serving cert"), "{err}");
        assert_eq!(served_der(&s), der(&b_cert));
    }

    /// The leaf certificate a client sees in an in-memory handshake with `config`, trusting
    /// the self-signed `roots`.
    fn handshake(config: &Arc<rustls::ServerConfig>, roots: &[&str]) -> Vec<u8> {
        let mut store = rustls::RootCertStore::empty();
        for pem in roots {
            store.add(CertificateDer::from(der(pem))).unwrap();
        }
        let client_config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
        let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let mut client = rustls::ClientConnection::new(Arc::new(client_config), name).unwrap();
        let mut server = rustls::ServerConnection::new(config.clone()).unwrap();
        for _ in 0..10 {
            if !client.is_handshaking() && !server.is_handshaking() {
                break;
            }
            let mut buf = Vec::new();
            client.write_tls(&mut buf).unwrap();
            server.read_tls(&mut &buf[..]).unwrap();
            server.process_new_packets().unwrap();
            let mut buf = Vec::new();
            server.write_tls(&mut buf).unwrap();
            client.read_tls(&mut &buf[..]).unwrap();
            client.process_new_packets().unwrap();
        }
        assert!(!client.is_handshaking());
        client.peer_certificates().unwrap()[0].to_vec()
    }

    /// A configuration built once serves, to each new handshake, the pair the last reload
    /// swapped in.
    #[test]
    fn server_config_hands_new_handshakes_the_current_pair() {
        let Rotation {
            dir: _dir,
            cert,
            key,
            a: (a_cert, _),
            b: (b_cert, b_key),
            s,
        } = rotation();
        let config = Arc::new(
            s.server_config(&ClientCertPolicy::None, &TlsOptions::default())
                .unwrap(),
        );
        let roots = [a_cert.as_str(), b_cert.as_str()];
        assert_eq!(handshake(&config, &roots), der(&a_cert));
        replace(&cert, &b_cert);
        replace(&key, &b_key);
        assert_eq!(s.reload_if_changed().unwrap(), Reloaded::Updated);
        assert_eq!(handshake(&config, &roots), der(&b_cert));
        drop(s);
        // The configuration keeps the reloader (and its pair) alive.
        assert_eq!(handshake(&config, &roots), der(&b_cert));
    }
}
