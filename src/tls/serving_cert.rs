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
use rustls_pki_types::PrivateKeyDer;

use crate::error::ConfigError;
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
    /// The files' bytes: they are parsed together, as a pair (kube-apiserver reads both and
    /// then calls `tls.X509KeyPair`).
    cert: FileReloader<Vec<u8>>,
    key: FileReloader<Vec<u8>>,
    current: ArcSwap<Pair>,
    /// Serialises checks (the watch task and explicit calls).
    check: Mutex<()>,
    reloads: AtomicU64,
    failures: AtomicU64,
}

/// The pair being served, the key's DER (to build a `ServerConfig` from), and the files' bytes
/// it was parsed from (kube-apiserver compares them to tell a new pair).
struct Pair {
    certified: Arc<CertifiedKey>,
    key: PrivateKeyDer<'static>,
    files: [Arc<Vec<u8>>; 2],
}

/// kube-apiserver's `loadCertKeyPair`: both files hold something (`missing content for serving
/// cert "serving-cert::<crt>::<key>"`), then Go's `tls.X509KeyPair` on them (its texts; see
/// [`key_pair`](super::key_pair)). Errors never carry bytes of the key file.
fn certified(
    cert_path: &Path,
    key_path: &Path,
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<(CertifiedKey, PrivateKeyDer<'static>), ConfigError> {
    if cert_pem.is_empty() || key_pem.is_empty() {
        return Err(ConfigError::new(format!(
            "missing content for serving cert \"serving-cert::{}::{}\"",
            cert_path.display(),
            key_path.display()
        )));
    }
    super::key_pair::x509_key_pair(cert_pem, key_pem)
}

impl ServingCertReloader {
    /// Reads `cert_file` (the serving certificate, then any intermediates, PEM) and `key_file`
    /// (its private key: PKCS#1, PKCS#8 or SEC1 PEM) and checks that they are a pair, as
    /// kube-apiserver does (Go's `tls.X509KeyPair`: its choice of PEM blocks and its error
    /// texts). Errors never carry key material.
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
    /// assert_eq!(
    ///     err.to_string(),
    ///     format!("missing content for serving cert \"serving-cert::{}::{}\"", cert.display(), key.display())
    /// );
    /// ```
    pub fn load(
        cert_file: impl AsRef<Path>,
        key_file: impl AsRef<Path>,
    ) -> Result<Self, ConfigError> {
        let cert_path: PathBuf = cert_file.as_ref().to_owned();
        let key_path: PathBuf = key_file.as_ref().to_owned();
        let cert = FileReloader::load(&cert_path, MAX_SERVING_FILE_BYTES, |b| Ok(b.to_vec()))?;
        let key = FileReloader::load(&key_path, MAX_SERVING_FILE_BYTES, |b| Ok(b.to_vec()))?;
        let files = [cert.current_arc(), key.current_arc()];
        let (certified, key_der) = certified(&cert_path, &key_path, &files[0], &files[1])?;
        let pair = Pair {
            certified: Arc::new(certified),
            key: key_der,
            files,
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
    #[must_use = "dropping the WatchTask stops reloading"]
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
        let files = [self.cert.current_arc(), self.key.current_arc()];
        let served = self.current.load();
        if served.files == files {
            return Ok(Reloaded::Unchanged);
        }
        match certified(self.cert.path(), self.key.path(), &files[0], &files[1]) {
            Ok((certified, key)) => {
                self.current.store(Arc::new(Pair {
                    certified: Arc::new(certified),
                    key,
                    files,
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
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;

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

        // A key file whose body is broken base64 (with the real key's first line in it): Go's
        // `pem.Decode` passes the block over, and finds none.
        let body: Vec<&str> = b_key.lines().collect();
        let garbage = format!("{}\n{}!!\n{}\n", body[0], body[1], body[body.len() - 1]);
        replace(&key, &garbage);
        let err = s.reload_if_changed().unwrap_err().to_string();
        assert_eq!(err, "tls: failed to find any PEM data in key input");
        assert_eq!(served_der(&s), der(&b_cert));
        let debug = format!("{s:?}");
        for line in &body[1..body.len() - 1] {
            assert!(!err.contains(line) && !debug.contains(line));
        }
        assert!(!debug.contains("PRIVATE KEY"), "{debug}");

        // An empty key file: Kubernetes' "missing content".
        replace(&key, "");
        let err = s.reload_if_changed().unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "missing content for serving cert \"serving-cert::{}::{}\"",
                cert.display(),
                key.display()
            )
        );
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
