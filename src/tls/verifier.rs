//! rustls client-certificate policies.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwap;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use crate::error::ConfigError;
use crate::x509::{self, CaBundle, CaBundleSource, MAX_CERT_LEN, MAX_CHAIN_LEN};

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
    /// subjects are sent as acceptable CAs (kube-apiserver: client CA, then front-proxy CA),
    /// as they are when the verifier is made ([`DynamicServerConfig`] follows reloads).
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
/// [module docs](super). The acceptable-CA names are fixed when it is made; a
/// [`DynamicServerConfig`] follows reloaded bundles.
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
        // Up to 2 × 1000 subjects (two bundles of MAX_BUNDLE_CERTS): deduplicated in linear
        // time, first occurrence kept.
        let count = hints.iter().map(|b| b.subjects().count()).sum();
        let mut seen: HashSet<&[u8]> = HashSet::with_capacity(count);
        let mut names: Vec<DistinguishedName> = Vec::with_capacity(count);
        for bundle in hints {
            for subject in bundle.subjects() {
                if seen.insert(subject) {
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
        // Every presented certificate must parse as Go's x509.ParseCertificate parses it,
        // names included (Go's TLS stack fails the handshake otherwise), intermediates the
        // path may not need included. The attribute-count bound is the request path's.
        if !std::iter::once(end_entity)
            .chain(intermediates)
            .all(|cert| x509::go_parse::go_parses_certificate(cert).is_ok())
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

/// A rustls server configuration whose client-certificate request follows reloaded CA
/// bundles, as kube-apiserver's does: its `DynamicServingCertificateController` rebuilds the
/// TLS configuration (`GetConfigForClient`) with the new `ClientCAs` when the client CA or the
/// request-header CA changes, so the CertificateRequest names the CAs as they are now.
///
/// rustls asks the client-certificate verifier for the names on every handshake
/// ([`ClientCertVerifier::root_hint_subjects`]) but takes them as a slice borrowed from the
/// verifier, which lives inside an immutable [`rustls::ServerConfig`]: a verifier cannot swap
/// its list in place without leaking each old list or `unsafe`. So the whole configuration is
/// chosen per connection instead: [`config_for_client`](Self::config_for_client) compares the
/// sources' bundle generations ([`CaBundleSource::generation`]) with those the current
/// configuration was built from (one atomic load per bundle: a lock-free read that takes no
/// reference for a fixed bundle, a reloaded file and an
/// [`X509Authenticator`](crate::x509::X509Authenticator)) and, when one changed, has a new
/// configuration built with [`ClientCertPolicy::Request`] naming the current bundles.
///
/// On a Tokio runtime the build (which parses the serving key again and collects up to
/// 2 × 1000 CA names) runs on the blocking pool, one at a time, and handshakes meanwhile get
/// the previous configuration, as kube-apiserver's controller rebuilds asynchronously after a
/// change; elsewhere it runs in the calling thread, and a caller that finds another one
/// building gets the previous configuration. A build that fails keeps the previous
/// configuration (logged) until a source changes again. The new configuration keeps the
/// previous one's session cache and ticketer, so sessions resume across a reload.
///
/// Serve it with [`TlsServer::dynamic`](super::TlsServer::dynamic) (or call
/// `config_for_client` for each connection of your own accept loop).
///
/// ```
/// use std::sync::Arc;
/// use kube_authn::tls::{DynamicServerConfig, server_config};
/// use kube_authn::x509::{CaBundle, CaBundleSource, doc_ca_pem, doc_client_key_pem, doc_client_pem, parse_pem_bundle};
/// use rustls_pki_types::{PrivateKeyDer, pem::PemObject};
///
/// let client_ca: Arc<dyn CaBundleSource> =
///     Arc::new(Arc::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap()));
/// let dynamic = DynamicServerConfig::new(vec![client_ca], |policy| {
///     let chain = parse_pem_bundle(doc_client_pem().as_bytes())?;
///     let key = PrivateKeyDer::from_pem_slice(doc_client_key_pem().as_bytes()).unwrap();
///     server_config(chain, key, policy)
/// })
/// .unwrap();
/// // Unchanged sources: the same configuration for every connection.
/// assert!(Arc::ptr_eq(&dynamic.config_for_client(), &dynamic.config_for_client()));
/// ```
pub struct DynamicServerConfig {
    shared: Arc<Shared>,
}

/// What [`DynamicServerConfig`] shares with the build running on the blocking pool.
struct Shared {
    hints: Box<[Arc<dyn CaBundleSource>]>,
    build: Box<BuildConfig>,
    current: ArcSwap<BuiltConfig>,
    /// A build is running (or queued on the blocking pool).
    rebuilding: AtomicBool,
}

/// What builds a [`DynamicServerConfig`]'s configuration for a client-certificate policy.
type BuildConfig =
    dyn Fn(&ClientCertPolicy) -> Result<rustls::ServerConfig, ConfigError> + Send + Sync;

/// A configuration and the generations of the hint bundles it names.
struct BuiltConfig {
    generations: Box<[u64]>,
    config: Arc<rustls::ServerConfig>,
}

/// Clears [`Shared::rebuilding`] when dropped: after the build, or when the blocking pool
/// drops the build without running it (a runtime shutting down), or when a build panics.
struct RebuildingFlag(Arc<Shared>);

impl Drop for RebuildingFlag {
    fn drop(&mut self) {
        self.0.rebuilding.store(false, Ordering::Release);
    }
}

impl std::fmt::Debug for DynamicServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicServerConfig")
            .field("hint_sources", &self.shared.hints.len())
            .field("generations", &self.shared.current.load().generations)
            .finish_non_exhaustive()
    }
}

impl DynamicServerConfig {
    /// A configuration built by `build` with [`ClientCertPolicy::Request`] naming the subjects
    /// of `hints`' bundles (in order, duplicates once; kube-apiserver: the client CA, then the
    /// request-header CA), and built again by `build` when any of them changes. The first
    /// build must succeed. `build` typically is
    /// [`ServingCertReloader::server_config`](super::serving_cert::ServingCertReloader::server_config)
    /// or [`server_config_with`] with the serving certificate and the TLS options.
    ///
    /// ```
    /// use kube_authn::tls::DynamicServerConfig;
    /// let err = DynamicServerConfig::new(vec![], |_| Err(kube_authn::error::ConfigError::new("no key"))).unwrap_err();
    /// assert_eq!(err.to_string(), "no key");
    /// ```
    pub fn new(
        hints: Vec<Arc<dyn CaBundleSource>>,
        build: impl Fn(&ClientCertPolicy) -> Result<rustls::ServerConfig, ConfigError>
        + Send
        + Sync
        + 'static,
    ) -> Result<Self, ConfigError> {
        let hints = hints.into_boxed_slice();
        let (generations, policy) = Shared::policy(&hints);
        let config = Arc::new(build(&policy)?);
        Ok(Self {
            shared: Arc::new(Shared {
                hints,
                build: Box::new(build),
                current: ArcSwap::from_pointee(BuiltConfig {
                    generations,
                    config,
                }),
                rebuilding: AtomicBool::new(false),
            }),
        })
    }

    /// The configuration for a new connection: the current one. When a hint bundle changed
    /// since it was built, a new one is built: on the blocking pool when called on a Tokio
    /// runtime (this connection gets the current one), else first, in this thread (unless
    /// another caller is building it); see the type's docs.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use kube_authn::tls::{DynamicServerConfig, server_config};
    /// # use kube_authn::x509::{doc_client_key_pem, doc_client_pem, parse_pem_bundle};
    /// # use rustls_pki_types::{PrivateKeyDer, pem::PemObject};
    /// let dynamic = DynamicServerConfig::new(vec![], |policy| {
    ///     let chain = parse_pem_bundle(doc_client_pem().as_bytes())?;
    ///     let key = PrivateKeyDer::from_pem_slice(doc_client_key_pem().as_bytes()).unwrap();
    ///     server_config(chain, key, policy)
    /// })
    /// .unwrap();
    /// let acceptor = kube_authn::tls::tokio_rustls::TlsAcceptor::from(dynamic.config_for_client());
    /// # let _ = acceptor;
    /// ```
    pub fn config_for_client(&self) -> Arc<rustls::ServerConfig> {
        let shared = &self.shared;
        let current = shared.current.load();
        let unchanged = shared
            .hints
            .iter()
            .zip(current.generations.iter())
            .all(|(hint, &generation)| hint.generation() == generation);
        if unchanged
            || shared
                .rebuilding
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            // Unchanged, or another caller is building it: this one does not wait.
            return current.config.clone();
        }
        let flag = RebuildingFlag(shared.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                // Off the runtime's workers; this handshake goes on with the current one.
                drop(runtime.spawn_blocking(move || {
                    flag.0.rebuild();
                    drop(flag);
                }));
                current.config.clone()
            }
            Err(_) => {
                let config = shared.rebuild();
                drop(flag);
                config
            }
        }
    }
}

impl Shared {
    /// The bundles' generations and the policy naming them.
    fn policy(hints: &[Arc<dyn CaBundleSource>]) -> (Box<[u64]>, ClientCertPolicy) {
        let bundles: Vec<Arc<CaBundle>> = hints.iter().map(|h| h.current_bundle()).collect();
        let generations = bundles.iter().map(|b| CaBundle::generation(b)).collect();
        (generations, ClientCertPolicy::Request { hints: bundles })
    }

    /// Builds and stores the configuration for the bundles as they are now (the caller holds
    /// [`Shared::rebuilding`]); returns the configuration stored.
    fn rebuild(&self) -> Arc<rustls::ServerConfig> {
        let (generations, policy) = Self::policy(&self.hints);
        let previous = self.current.load_full();
        if previous.generations == generations {
            // Built meanwhile by the caller that held the flag before.
            return previous.config.clone();
        }
        let config = match (self.build)(&policy) {
            Ok(mut config) => {
                config.session_storage = previous.config.session_storage.clone();
                config.ticketer = previous.config.ticketer.clone();
                tracing::info!("client CA bundles changed: new handshakes name the current CAs");
                Arc::new(config)
            }
            Err(e) => {
                tracing::warn!(error = %e, "TLS configuration for the changed client CA bundles failed; keeping the previous one");
                previous.config.clone()
            }
        };
        self.current.store(Arc::new(BuiltConfig {
            generations,
            config: config.clone(),
        }));
        config
    }
}

/// A rustls server configuration with the serving certificate `chain`/`key`, the client
/// certificate `policy`, ALPN `h2` and `http/1.1`, and the aws-lc-rs provider (TLS 1.2 and
/// 1.3 with its default cipher suites; [`server_config_with`] takes kube-apiserver's
/// `--tls-min-version` and `--tls-cipher-suites`).
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
    server_config_with(chain, key, policy, &TlsOptions::default())
}

/// [`server_config`] with [`TlsOptions`]: the lowest protocol version and the TLS 1.2 cipher
/// suites offered.
///
/// ```
/// use kube_authn::tls::{server_config_with, ClientCertPolicy, TlsOptions};
/// # use rustls_pki_types::pem::PemObject;
/// let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
/// let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
/// let (tls13, _) = TlsOptions::from_flags("VersionTLS13", &[]).unwrap();
/// let config = server_config_with(chain, key, &ClientCertPolicy::Request { hints: vec![] }, &tls13).unwrap();
/// # let _ = config;
/// ```
pub fn server_config_with(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    policy: &ClientCertPolicy,
    options: &TlsOptions,
) -> Result<rustls::ServerConfig, ConfigError> {
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    if let Some(names) = &options.tls12_suites {
        provider.cipher_suites.retain(|s| match s {
            rustls::SupportedCipherSuite::Tls12(_) => names.contains(&format!("{:?}", s.suite())),
            rustls::SupportedCipherSuite::Tls13(_) => true,
        });
    }
    let tls12 = !options.tls13_only
        && provider
            .cipher_suites
            .iter()
            .any(|s| matches!(s, rustls::SupportedCipherSuite::Tls12(_)));
    let versions: &[&'static rustls::SupportedProtocolVersion] = if tls12 {
        &[&rustls::version::TLS13, &rustls::version::TLS12]
    } else {
        &[&rustls::version::TLS13]
    };
    let builder = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(versions)
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

/// Go's `crypto/tls` cipher suite names as component-base's `--tls-cipher-suites` accepts
/// them (Go 1.26's `tls.CipherSuites()` and `tls.InsecureCipherSuites()`, and the two legacy
/// ChaCha20 names), each with the rustls suite it is, or `None` where rustls does not
/// implement it (CBC, RSA key exchange, RC4, 3DES) and `Some("")` for the TLS 1.3 suites,
/// which Go does not let a configuration choose.
const GO_CIPHER_SUITES: &[(&str, Option<&str>)] = &[
    ("TLS_AES_128_GCM_SHA256", Some("")),
    ("TLS_AES_256_GCM_SHA384", Some("")),
    ("TLS_CHACHA20_POLY1305_SHA256", Some("")),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        Some("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        Some("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        Some("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        Some("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        Some("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"),
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
        Some("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
        Some("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"),
    ),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", None),
    ("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", None),
    ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", None),
    ("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", None),
    ("TLS_RSA_WITH_RC4_128_SHA", None),
    ("TLS_RSA_WITH_3DES_EDE_CBC_SHA", None),
    ("TLS_RSA_WITH_AES_128_CBC_SHA", None),
    ("TLS_RSA_WITH_AES_256_CBC_SHA", None),
    ("TLS_RSA_WITH_AES_128_CBC_SHA256", None),
    ("TLS_RSA_WITH_AES_128_GCM_SHA256", None),
    ("TLS_RSA_WITH_AES_256_GCM_SHA384", None),
    ("TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", None),
    ("TLS_ECDHE_RSA_WITH_RC4_128_SHA", None),
    ("TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", None),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", None),
    ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", None),
];

/// kube-apiserver's `--tls-min-version` and `--tls-cipher-suites` for [`server_config_with`].
/// The default offers TLS 1.2 and 1.3 with rustls' suites (all AEAD with ECDHE), which is
/// kube-apiserver's default minimum (`VersionTLS12`).
///
/// ```
/// use kube_authn::tls::TlsOptions;
/// let (o, ignored) = TlsOptions::from_flags("VersionTLS12", &["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".into(), "TLS_RSA_WITH_AES_128_GCM_SHA256".into()]).unwrap();
/// assert_eq!(ignored, ["TLS_RSA_WITH_AES_128_GCM_SHA256"]);
/// # let _ = o;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Only TLS 1.3 (`--tls-min-version=VersionTLS13`).
    tls13_only: bool,
    /// The TLS 1.2 suites offered, by rustls name (`None`: all of rustls').
    tls12_suites: Option<Vec<String>>,
}

impl TlsOptions {
    /// Whether TLS 1.2 is offered: not with `VersionTLS13`, nor when every suite named is one
    /// rustls does not implement (only TLS 1.3 is left then; say so at startup).
    ///
    /// ```
    /// use kube_authn::tls::TlsOptions;
    /// assert!(TlsOptions::default().offers_tls12());
    /// let (cbc_only, _) = TlsOptions::from_flags("", &["TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".into()]).unwrap();
    /// assert!(!cbc_only.offers_tls12());
    /// ```
    pub fn offers_tls12(&self) -> bool {
        !self.tls13_only && self.tls12_suites.as_ref().is_none_or(|s| !s.is_empty())
    }

    /// Reads the two flags as component-base does (`cliflag.TLSVersion`,
    /// `cliflag.TLSCipherSuites`), with Go's errors for names Go does not know: `min_version`
    /// `""` (the default, TLS 1.2), `VersionTLS10`, `VersionTLS11`, `VersionTLS12` or
    /// `VersionTLS13`; `cipher_suites` Go's names (empty: the default). Returns the options
    /// and the names Go knows that are not offered here (rustls implements neither TLS 1.0
    /// and 1.1, so `VersionTLS10` and `VersionTLS11` mean TLS 1.2, nor CBC, RSA key exchange,
    /// RC4 or 3DES suites): the caller should warn about them.
    ///
    /// ```
    /// use kube_authn::tls::TlsOptions;
    /// assert_eq!(TlsOptions::from_flags("VersionTLS14", &[]).unwrap_err().to_string(), r#"unknown tls version "VersionTLS14""#);
    /// assert_eq!(
    ///     TlsOptions::from_flags("", &["TLS_NOPE".into()]).unwrap_err().to_string(),
    ///     "Cipher suite TLS_NOPE not supported or doesn't exist"
    /// );
    /// ```
    pub fn from_flags(
        min_version: &str,
        cipher_suites: &[String],
    ) -> Result<(Self, Vec<String>), ConfigError> {
        let mut ignored = Vec::new();
        let tls13_only = match min_version {
            "" | "VersionTLS12" => false,
            "VersionTLS10" | "VersionTLS11" => {
                ignored.push(min_version.to_owned());
                false
            }
            "VersionTLS13" => true,
            other => {
                return Err(ConfigError::new(format!(
                    "unknown tls version {}",
                    crate::jwt::go_quote(other)
                )));
            }
        };
        let tls12_suites = if cipher_suites.is_empty() {
            None
        } else {
            let mut names = Vec::new();
            for name in cipher_suites {
                match GO_CIPHER_SUITES.iter().find(|(go, _)| go == name) {
                    None => {
                        return Err(ConfigError::new(format!(
                            "Cipher suite {name} not supported or doesn't exist"
                        )));
                    }
                    Some((_, Some(""))) => {}
                    Some((_, Some(rustls_name))) => names.push((*rustls_name).to_owned()),
                    Some((_, None)) => ignored.push(name.clone()),
                }
            }
            Some(names)
        };
        Ok((
            Self {
                tls13_only,
                tls12_suites,
            },
            ignored,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicUsize;
    use std::time::{Duration, Instant};

    use crate::x509::{doc_ca_pem, doc_client_key_pem, doc_client_pem};

    /// A self-signed CA named `cn`, as a bundle.
    fn ca(cn: &str) -> Arc<CaBundle> {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params
            .self_signed(&rcgen::KeyPair::generate().unwrap())
            .unwrap();
        Arc::new(CaBundle::from_der(vec![cert.der().clone()]).unwrap())
    }

    /// A bundle the test replaces (the default `generation`, through `current_bundle`).
    #[derive(Debug)]
    struct Replaceable(Mutex<Arc<CaBundle>>);

    impl CaBundleSource for Replaceable {
        fn current_bundle(&self) -> Arc<CaBundle> {
            self.0.lock().unwrap().clone()
        }
    }

    /// What a build saw: its thread and the generations of the bundles it was asked to name.
    type Builds = Arc<Mutex<Vec<(std::thread::ThreadId, Vec<u64>)>>>;

    /// A dynamic configuration over `source` whose builds are counted in `started` as they
    /// start, wait until `open` (failing after 10 s), and are recorded in `builds`.
    fn dynamic(
        source: Arc<Replaceable>,
        builds: Builds,
        started: Arc<AtomicUsize>,
        open: Arc<AtomicBool>,
    ) -> DynamicServerConfig {
        DynamicServerConfig::new(vec![source], move |policy| {
            started.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(10);
            while !open.load(Ordering::SeqCst) {
                assert!(Instant::now() < deadline, "the build was never let through");
                std::thread::sleep(Duration::from_millis(1));
            }
            let ClientCertPolicy::Request { hints } = policy else {
                panic!("{policy:?}")
            };
            builds.lock().unwrap().push((
                std::thread::current().id(),
                hints.iter().map(|b| CaBundle::generation(b)).collect(),
            ));
            let chain = crate::x509::parse_pem_bundle(doc_client_pem().as_bytes())?;
            let key = PrivateKeyDer::from_pem_slice(doc_client_key_pem().as_bytes()).unwrap();
            server_config(chain, key, policy)
        })
        .unwrap()
    }

    #[test]
    fn hint_names_are_deduplicated_in_order() {
        let (a, b) = (ca("a"), ca("b"));
        let doc = Arc::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
        let subject = |bundle: &CaBundle| bundle.subjects().next().unwrap().to_vec();
        let v = RequestClientCert::new(&[a.clone(), b.clone(), a.clone(), doc.clone(), b.clone()]);
        let names: Vec<&[u8]> = v.root_hint_subjects().iter().map(|n| n.as_ref()).collect();
        // DistinguishedName::in_sequence wraps the subject in its SEQUENCE tag and length.
        let wrapped = |s: Vec<u8>| DistinguishedName::in_sequence(&s).as_ref().to_vec();
        assert_eq!(
            names,
            [
                wrapped(subject(&a)),
                wrapped(subject(&b)),
                wrapped(subject(&doc))
            ]
        );
    }

    #[test]
    fn off_a_runtime_a_change_is_built_by_the_caller() {
        let (a, b) = (ca("a"), ca("b"));
        let source = Arc::new(Replaceable(Mutex::new(a.clone())));
        let builds = Builds::default();
        let started = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(AtomicBool::new(true));
        let dynamic = dynamic(source.clone(), builds.clone(), started, open);
        let first = dynamic.config_for_client();
        assert!(Arc::ptr_eq(&first, &dynamic.config_for_client()));

        *source.0.lock().unwrap() = b.clone();
        let second = dynamic.config_for_client();
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(Arc::ptr_eq(&second, &dynamic.config_for_client()));
        let builds = builds.lock().unwrap();
        let here = std::thread::current().id();
        assert_eq!(
            *builds,
            [(here, vec![a.generation()]), (here, vec![b.generation()])]
        );
    }

    #[tokio::test]
    async fn on_a_runtime_a_change_is_built_once_on_the_blocking_pool_meanwhile_the_previous_is_served()
     {
        let (a, b) = (ca("a"), ca("b"));
        let source = Arc::new(Replaceable(Mutex::new(a.clone())));
        let builds = Builds::default();
        let started = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(AtomicBool::new(true));
        let dynamic = dynamic(
            source.clone(),
            builds.clone(),
            started.clone(),
            open.clone(),
        );
        let first = dynamic.config_for_client();

        open.store(false, Ordering::SeqCst);
        *source.0.lock().unwrap() = b.clone();
        // The handshake that sees the change does not wait for the build (built here, it
        // would fail after 10 s at the closed gate).
        assert!(Arc::ptr_eq(&first, &dynamic.config_for_client()));
        let deadline = Instant::now() + Duration::from_secs(10);
        while started.load(Ordering::SeqCst) < 2 {
            assert!(Instant::now() < deadline, "the build never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // While it runs (held at the closed gate), handshakes get the previous configuration and
        // start no other build.
        for _ in 0..5 {
            assert!(Arc::ptr_eq(&first, &dynamic.config_for_client()));
        }
        assert_eq!(started.load(Ordering::SeqCst), 2);
        open.store(true, Ordering::SeqCst);

        let second = loop {
            let config = dynamic.config_for_client();
            if !Arc::ptr_eq(&first, &config) {
                break config;
            }
            assert!(
                Instant::now() < deadline,
                "the new configuration never came"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(Arc::ptr_eq(&second, &dynamic.config_for_client()));
        assert_eq!(started.load(Ordering::SeqCst), 2);
        let builds = builds.lock().unwrap();
        let here = std::thread::current().id();
        assert_eq!(builds.len(), 2);
        assert_eq!(builds[0], (here, vec![a.generation()]));
        assert_ne!(builds[1].0, here, "built on this runtime's thread");
        assert_eq!(builds[1].1, [b.generation()]);
    }

    /// Every rustls name in the table is a suite of the aws-lc-rs provider, and every TLS 1.2
    /// suite of the provider has a Go name (so `--tls-cipher-suites` can name all of them).
    #[test]
    fn go_names_map_onto_the_provider() {
        let provider = rustls::crypto::aws_lc_rs::default_provider();
        let names: Vec<String> = provider
            .cipher_suites
            .iter()
            .filter(|s| matches!(s, rustls::SupportedCipherSuite::Tls12(_)))
            .map(|s| format!("{:?}", s.suite()))
            .collect();
        for (go, ours) in GO_CIPHER_SUITES {
            if let Some(name) = ours.filter(|n| !n.is_empty()) {
                assert!(names.iter().any(|n| n == name), "{go} → {name}");
            }
        }
        for name in &names {
            assert!(
                GO_CIPHER_SUITES
                    .iter()
                    .any(|(_, ours)| *ours == Some(name.as_str())),
                "{name} has no Go name"
            );
        }
    }

    #[test]
    fn flags_are_read_as_component_base_reads_them() {
        let s = |v: &[&str]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        type Want = Result<(bool, Option<Vec<String>>, Vec<String>), String>;
        let cases: Vec<(&str, Vec<String>, Want)> = vec![
            ("", vec![], Ok((false, None, vec![]))),
            ("VersionTLS12", vec![], Ok((false, None, vec![]))),
            ("VersionTLS13", vec![], Ok((true, None, vec![]))),
            ("VersionTLS10", vec![], Ok((false, None, s(&["VersionTLS10"])))),
            (
                "VersionTLS1.3",
                vec![],
                Err(r#"unknown tls version "VersionTLS1.3""#.into()),
            ),
            (
                "",
                s(&["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_AES_128_GCM_SHA256"]),
                Ok((
                    false,
                    Some(s(&["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"])),
                    vec![],
                )),
            ),
            (
                "",
                s(&["TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"]),
                Ok((false, Some(vec![]), s(&["TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"]))),
            ),
            (
                "",
                s(&["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "tls_ecdhe_rsa_with_aes_128_gcm_sha256"]),
                Err("Cipher suite tls_ecdhe_rsa_with_aes_128_gcm_sha256 not supported or doesn't exist".into()),
            ),
        ];
        for (version, suites, want) in cases {
            let got = TlsOptions::from_flags(version, &suites)
                .map(|(o, ignored)| (o.tls13_only, o.tls12_suites, ignored))
                .map_err(|e| e.to_string());
            assert_eq!(got, want, "{version:?} {suites:?}");
        }
    }
}
