//! Outbound connections: how to reach and authenticate to a remote service (a TokenReview
//! webhook, an OpenStack Keystone, an OIDC issuer, the Kubernetes API).
//!
//! A [`ConnectionInfo`] says everything needed — server URL, CA (file or data; a file is read
//! again at most every 5 minutes, as client-go reads it), client certificate and key (file or
//! data), a bearer token (static, or a file re-read when it changes, as projected
//! service-account tokens rotate, looked at no more than every 50 s), basic credentials, a
//! proxy URL and whether `HTTP(S)_PROXY`/`NO_PROXY` are honoured, insecure-skip-verify, an
//! expiry — and nothing about where it came from (kopf's `ConnectionInfo`). It is loaded from
//! a kubeconfig file ([`kubeconfig`], the webhook configuration format), from in-cluster
//! service-account files ([`ConnectionInfo::in_cluster`]), or returned by an application's own
//! sync or async [`vault::CredentialProvider`]. Credentials live in a [`vault::Vault`] that drops expired
//! ones, skips one that got a 401 for the rest of that request (a fixed provider's, such as a
//! kubeconfig's, is offered again to the next request; a rotating provider must yield a new
//! one), and asks the providers again when none is left.
//!
//! TLS is rustls with the aws-lc-rs provider; HTTP is reqwest with redirects disabled
//! (a redirect could send the TokenReview, and with it the token, to another host:
//! CVE-2020-8561, CVE-2022-3172). Secrets never appear in `Debug` output.
//!
//! ```
//! use kube_authn::outbound::{ConnectionInfo, Secret};
//! let info = ConnectionInfo::new("https://authn.example:8443/review")
//!     .with_token(Secret::new("s3cr3t"))
//!     .with_trust_env(false);
//! assert!(!format!("{info:?}").contains("s3cr3t"));
//! let client = info.client(std::time::Duration::from_secs(30)).unwrap();
//! # let _ = client;
//! ```

mod ca_rotation;
#[cfg(test)]
pub(crate) use ca_rotation::loopback_pki;
mod client_cert;
mod every;
pub mod kubeconfig;
mod proxy;
pub mod vault;

pub(crate) use crate::go_url::rest::{RestTarget, rest_target};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use sha2::Sha256;

use crate::error::ConfigError;
use crate::reload::FileReloader;
use crate::token::cache::{Clock, SystemClock};

/// How long establishing a connection (TCP connect and TLS handshake together) may take, at
/// most (never more than the request's own timeout). client-go has two bounds
/// (`transport/cache.go`): a 30 s dial, then a 10 s TLS handshake; reqwest has one. 10 s keeps
/// Go's bound for the usual hang (a server that accepts and never completes the handshake),
/// within the webhook's 30 s deadline so that its error is reported and retried; a TCP
/// connect slower than 10 s fails here where Go would wait up to 30 s (`docs/compatibility.md`).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest PEM or token file read (1 MiB).
///
/// ```
/// use kube_authn::outbound::{BearerToken, MAX_FILE_BYTES};
/// assert_eq!(MAX_FILE_BYTES, 1024 * 1024);
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("token");
/// std::fs::write(&path, "t".repeat(MAX_FILE_BYTES as usize + 1)).unwrap();
/// let err = BearerToken::from_file(&path).unwrap_err();
/// assert!(err.to_string().ends_with("is larger than the limit of 1048576 bytes"), "{err}");
/// ```
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A secret string (token, password). `Debug` and `Display` never show it.
///
/// ```
/// let s = kube_authn::outbound::Secret::new("hunter2");
/// assert_eq!(s.expose(), "hunter2");
/// assert!(!format!("{s:?}").contains("hunter2"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wraps `value`.
    ///
    /// ```
    /// let _ = kube_authn::outbound::Secret::new(String::from("x"));
    /// ```
    pub fn new(value: impl Into<Arc<str>>) -> Self {
        Self(value.into())
    }

    /// The secret value (for building a request; never log it).
    ///
    /// ```
    /// assert_eq!(kube_authn::outbound::Secret::new("x").expose(), "x");
    /// ```
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<redacted {} bytes>", self.0.len())
    }
}

/// PEM material: a file (read when a client is built; a CA file or a client certificate and key
/// pair is read again when it changes, see [`vault::Credential::client`]) or inline data.
///
/// ```
/// use kube_authn::outbound::Pem;
/// let p = Pem::Data(b"-----BEGIN CERTIFICATE-----".to_vec());
/// assert!(format!("{p:?}").contains("bytes"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub enum Pem {
    /// A PEM file.
    File(PathBuf),
    /// Inline PEM (kubeconfig `*-data`, base64-decoded).
    Data(Vec<u8>),
}

impl Pem {
    /// The PEM bytes (reads a file, bounded by [`MAX_FILE_BYTES`]).
    ///
    /// ```
    /// assert_eq!(kube_authn::outbound::Pem::Data(b"x".to_vec()).bytes().unwrap(), b"x");
    /// ```
    pub fn bytes(&self) -> Result<Vec<u8>, ConfigError> {
        match self {
            Pem::Data(d) => Ok(d.clone()),
            Pem::File(p) => read_bounded(p),
        }
    }
}

impl fmt::Debug for Pem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pem::File(p) => write!(f, "File({})", p.display()),
            Pem::Data(d) => write!(f, "Data(<{} bytes>)", d.len()),
        }
    }
}

/// The file's bytes (at most [`MAX_FILE_BYTES`]), an I/O failure in Rust's words
/// (`open <path>: …`, `read <path>: …`).
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, ConfigError> {
    read_file_capped(path, |op, e| format!("{op} {}: {e}", path.display()))
        .map_err(ConfigError::new)
}

/// The file's bytes, at most [`MAX_FILE_BYTES`]; `io_text` words a failure to `open` or `read`
/// it.
pub(crate) fn read_file_capped(
    path: &Path,
    io_text: impl Fn(&str, &std::io::Error) -> String,
) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| io_text("open", &e))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_text("read", &e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{} is larger than {MAX_FILE_BYTES} bytes",
            path.display()
        ));
    }
    Ok(bytes)
}

/// How often, at most, a token file is looked at again: client-go keeps a token read from a
/// file for a minute less a 10 s leeway (`transport/token_source.go`: `NewCachedFileTokenSource`,
/// `cachingTokenSource`), so it reads the file again 50 s after the last read. A 401 for a token
/// makes the next request read the file at once if the token in use is still the one that
/// request sent (client-go's `ResetTokenOlderThan`; here
/// [`Vault::invalidate`](vault::Vault::invalidate)), at most once per
/// [`TOKEN_FILE_REREAD_GAP`].
///
/// ```
/// assert_eq!(kube_authn::outbound::TOKEN_FILE_CHECK_EVERY, std::time::Duration::from_secs(50));
/// ```
pub const TOKEN_FILE_CHECK_EVERY: Duration = Duration::from_secs(50);

/// The shortest time between two reads of a token file made because the server answered 401:
/// a backend that refuses every request, or a token that is bad for good, costs at most one
/// file read per second, not one per request. (client-go has no floor: it reads the file again
/// for each request after a refused one.)
///
/// ```
/// assert_eq!(kube_authn::outbound::TOKEN_FILE_REREAD_GAP, std::time::Duration::from_secs(1));
/// ```
pub const TOKEN_FILE_REREAD_GAP: Duration = Duration::from_secs(1);

/// A bearer token: static, or a file re-read when it changes (projected service-account tokens
/// rotate), looked at no more than once per [`TOKEN_FILE_CHECK_EVERY`]. A changed file that is
/// empty or unreadable keeps the previous token.
///
/// ```
/// use kube_authn::outbound::{BearerToken, Secret};
/// let t = BearerToken::Static(Secret::new("abc"));
/// assert_eq!(t.current().expose(), "abc");
/// ```
#[derive(Clone, Debug)]
pub enum BearerToken {
    /// A fixed token.
    Static(Secret),
    /// A token file (kubeconfig `tokenFile`, the in-cluster service-account token).
    File(BearerTokenFile),
}

/// A bearer token file, re-read when it changes: see [`BearerToken::from_file`]. Clones share
/// the token and the times of the last checks. (Not [`token::file::TokenFile`], the static
/// token file of users that kube-authn authenticates.)
///
/// [`token::file::TokenFile`]: crate::token::file::TokenFile
///
/// ```
/// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("token");
/// std::fs::write(&p, "abc").unwrap();
/// use kube_authn::outbound::{BearerToken, BearerTokenFile};
/// let BearerToken::File(f) = BearerToken::from_file(&p).unwrap() else { unreachable!() };
/// let f: BearerTokenFile = f;
/// assert_eq!(f.path(), p);
/// assert_eq!(f.current().expose(), "abc");
/// ```
#[derive(Clone)]
pub struct BearerTokenFile {
    file: FileReloader<Secret>,
    check: Arc<TokenCheck>,
}

struct TokenCheck {
    /// The periodic look (the file's metadata, its content when that changed).
    every: every::Every,
    /// A read is asked for: the server refused the token read last.
    reread: std::sync::atomic::AtomicBool,
    /// Those reads at most once per [`TOKEN_FILE_REREAD_GAP`] (the first one at once).
    reread_gap: every::Every,
    /// The last look found the file failing (as the reloader reports it, which logged that):
    /// a read after a 401 then only looks at the metadata, so that a file that stays missing or
    /// unreadable is not read (and the failure not logged again) for every refused request.
    /// Cleared by any look that finds the file good again, changed or not.
    failing: std::sync::atomic::AtomicBool,
}

impl fmt::Debug for BearerTokenFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerTokenFile")
            .field("path", &self.file.path())
            .finish_non_exhaustive()
    }
}

impl BearerTokenFile {
    /// The token file's path.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("token");
    /// # std::fs::write(&p, "abc").unwrap();
    /// use kube_authn::outbound::BearerToken;
    /// let BearerToken::File(f) = BearerToken::from_file(&p).unwrap() else { unreachable!() };
    /// assert_eq!(f.path(), p);
    /// ```
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The token; the file is looked at first when a check is due (at most once per
    /// [`TOKEN_FILE_CHECK_EVERY`]: one `stat`, its content when that changed) or after a 401
    /// for the token read last (a read, at most once per [`TOKEN_FILE_REREAD_GAP`]), else not
    /// at all.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("token");
    /// std::fs::write(&p, "abc").unwrap();
    /// use kube_authn::outbound::BearerToken;
    /// let BearerToken::File(f) = BearerToken::from_file(&p).unwrap() else { unreachable!() };
    /// std::fs::write(&p, "rotated").unwrap();
    /// assert_eq!(f.current().expose(), "abc"); // until the next check is due
    /// ```
    pub fn current(&self) -> Secret {
        (*self.current_read()).clone()
    }

    /// [`current`](Self::current), as the value the file's reloader holds: a 401 for it asks
    /// for a read only if it is still that value (see [`expire`](Self::expire)).
    fn current_read(&self) -> Arc<Secret> {
        self.look_if_due();
        self.file.current_arc()
    }

    /// Looks at the file if it is time: a read after a 401 for the token read last (at most
    /// once per [`TOKEN_FILE_REREAD_GAP`]), else the periodic look when it is due (one `stat`
    /// per [`TOKEN_FILE_CHECK_EVERY`], its content when that changed).
    fn look_if_due(&self) {
        if !self.reread_if_refused() && self.check.every.due() {
            self.look(false);
        }
    }

    /// Reads the file if a 401 asked for it and the last such read was at least
    /// [`TOKEN_FILE_REREAD_GAP`] ago; whether it did.
    fn reread_if_refused(&self) -> bool {
        use std::sync::atomic::Ordering;
        let c = &self.check;
        if !c.reread.load(Ordering::Acquire) || !c.reread_gap.due() {
            return false;
        }
        if !c.reread.swap(false, Ordering::AcqRel) {
            return false;
        }
        self.look(true);
        true
    }

    /// Looks at the file: after a 401 (`forced`) its content is read whatever its metadata says,
    /// unless the file is failing. Failures are logged by the reloader (once per version of the
    /// file, and at its periodic full checks).
    fn look(&self, forced: bool) {
        use std::sync::atomic::Ordering;
        let c = &self.check;
        let full = forced && !c.failing.load(Ordering::Acquire);
        let _ = if full {
            self.file.reload_now()
        } else {
            self.file.reload_if_changed()
        };
        // The reloader's verdict, not this look's outcome: a file back with its old content is
        // `Unchanged` and good again, a file still missing is `Unchanged` and still failing.
        let failing = self.file.last_check_failed();
        if c.failing.swap(failing, Ordering::AcqRel) && !failing {
            tracing::info!(path = %self.file.path().display(), "token file read again");
        }
    }

    /// After a 401 for the token `sent` (`None`: not known): the next request reads the file,
    /// unless it has been read since and holds another value (the reloader swaps in a new
    /// `Arc` for each new token; holding `sent` keeps its address from being reused).
    fn expire(&self, sent: Option<&Arc<Secret>>) {
        use std::sync::atomic::Ordering;
        if sent.is_some_and(|sent| !Arc::ptr_eq(sent, &self.file.current_arc())) {
            return;
        }
        self.check.reread.store(true, Ordering::Release);
    }
}

impl BearerToken {
    /// A token read from `path` (whitespace trimmed, must be non-empty).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("token");
    /// std::fs::write(&p, "abc\n").unwrap();
    /// let t = kube_authn::outbound::BearerToken::from_file(&p).unwrap();
    /// assert_eq!(t.current().expose(), "abc");
    /// ```
    pub fn from_file(path: impl Into<PathBuf>) -> Result<Self, ConfigError> {
        Self::from_file_with_clock(path, Arc::new(SystemClock))
    }

    /// [`from_file`](Self::from_file), the checks timed by `clock`.
    pub(crate) fn from_file_with_clock(
        path: impl Into<PathBuf>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ConfigError> {
        let path = path.into();
        let shown = path.display().to_string();
        let file = FileReloader::load(path, MAX_FILE_BYTES, move |bytes| {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| ConfigError::new(format!("token file {shown} is not UTF-8")))?;
            let token = text.trim();
            if token.is_empty() {
                return Err(ConfigError::new(format!("token file {shown} is empty")));
            }
            Ok(Secret::new(token))
        })?;
        let reread_gap = every::Every::new(clock.clone(), TOKEN_FILE_REREAD_GAP);
        // The first read after a 401 is not held back.
        reread_gap.expire();
        Ok(BearerToken::File(BearerTokenFile {
            file,
            check: Arc::new(TokenCheck {
                every: every::Every::new(clock, TOKEN_FILE_CHECK_EVERY),
                reread: std::sync::atomic::AtomicBool::new(false),
                reread_gap,
                failing: std::sync::atomic::AtomicBool::new(false),
            }),
        }))
    }

    /// The current token; for a file, see [`BearerTokenFile::current`].
    ///
    /// ```
    /// let t = kube_authn::outbound::BearerToken::Static(kube_authn::outbound::Secret::new("a"));
    /// assert_eq!(t.current().expose(), "a");
    /// ```
    pub fn current(&self) -> Secret {
        match self {
            BearerToken::Static(s) => s.clone(),
            BearerToken::File(f) => f.current(),
        }
    }

    /// [`current`](Self::current), as the value sent (for a file, the reloader's `Arc`, which
    /// [`expire`](Self::expire) compares with the file's value then).
    fn current_read(&self) -> SentToken {
        match self {
            BearerToken::Static(s) => SentToken(Arc::new(s.clone())),
            BearerToken::File(f) => SentToken(f.current_read()),
        }
    }

    /// The token as last read, without looking at a file (the request that sends it looks,
    /// through [`current`](Self::current)).
    pub(crate) fn last_read(&self) -> Secret {
        match self {
            BearerToken::Static(s) => s.clone(),
            BearerToken::File(f) => (*f.file.current_arc()).clone(),
        }
    }

    /// After a 401 for the token `sent` (`None`: not known): a token file is read again by the
    /// next request, unless it holds another token by then.
    pub(crate) fn expire(&self, sent: Option<&SentToken>) {
        if let BearerToken::File(f) = self {
            f.expire(sent.map(|s| &s.0));
        }
    }

    /// Looks at a token file if it is time, as a request that sends it would (see
    /// [`BearerTokenFile::current`]), so that its fingerprint is the token the next request
    /// would send: the vault calls it before it fingerprints a credential it is handed. Without
    /// it a refused token that the file still held at the one read after the 401 would be
    /// fingerprinted, refused and never sent again, so never looked at again.
    pub(crate) fn look_if_due(&self) {
        if let BearerToken::File(f) = self {
            f.look_if_due();
        }
    }
}

/// The token a request was sent with (for a file, the reloader's value itself): the vault
/// marks that token bad after a 401, not the one read since.
#[derive(Clone, Debug)]
pub(crate) struct SentToken(pub(crate) Arc<Secret>);

impl SentToken {
    /// The token.
    pub(crate) fn token(&self) -> &Secret {
        &self.0
    }
}

/// Basic credentials (`Authorization: Basic`).
///
/// ```
/// use kube_authn::outbound::{BasicCredentials, Secret};
/// let b = BasicCredentials { username: "u".into(), password: Secret::new("p") };
/// assert!(!format!("{b:?}").contains("\"p\""));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BasicCredentials {
    /// User name.
    pub username: String,
    /// Password.
    pub password: Secret,
}

/// How to reach and authenticate to a remote service. See the [module docs](self).
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, Pem};
/// let info = ConnectionInfo::new("https://127.0.0.1:8443/")
///     .with_ca(Pem::File("/etc/webhook/ca.crt".into()));
/// assert_eq!(info.server, "https://127.0.0.1:8443/");
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ConnectionInfo {
    /// The server URL. The webhook POSTs to it as client-go's REST client does: the path
    /// cleaned, the query replaced by `timeout=<request timeout>` (see
    /// [`Credential::post`](vault::Credential::post)); a kubeconfig's `server` is first cleaned
    /// up as client-go's `clientcmd` does.
    pub server: String,
    /// CA bundle trusted for the server; `None` uses the system roots.
    pub certificate_authority: Option<Pem>,
    /// Client certificate chain (PEM).
    pub client_certificate: Option<Pem>,
    /// Client private key (PEM).
    pub client_key: Option<Pem>,
    /// Server name to send (SNI) and verify instead of the URL's host (kubeconfig
    /// `tls-server-name`); the connection still goes to the URL's host. See
    /// [`Credential::post`](vault::Credential::post) for when it is sent as SNI.
    pub tls_server_name: Option<String>,
    /// Do not verify the server certificate (kubeconfig `insecure-skip-tls-verify`).
    pub insecure_skip_tls_verify: bool,
    /// Bearer token.
    pub token: Option<BearerToken>,
    /// Basic credentials.
    pub basic: Option<BasicCredentials>,
    /// Explicit proxy (kubeconfig `proxy-url`); takes precedence over the environment.
    pub proxy_url: Option<String>,
    /// Honour `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` when no explicit proxy is set (client-go
    /// does; kopf's `trust_env` is off by default). Default `true`.
    pub trust_env: bool,
    /// When these credentials stop being usable.
    pub expiration: Option<SystemTime>,
}

impl fmt::Debug for ConnectionInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionInfo")
            .field("server", &redact_server(&self.server))
            .field("certificate_authority", &self.certificate_authority)
            .field("client_certificate", &self.client_certificate)
            .field("client_key", &self.client_key)
            .field("tls_server_name", &self.tls_server_name)
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("token", &self.token)
            .field("basic", &self.basic)
            .field("proxy_url", &self.proxy_url.as_deref().map(redact_url))
            .field("trust_env", &self.trust_env)
            .field("expiration", &self.expiration)
            .finish()
    }
}

impl ConnectionInfo {
    /// Connection info for `server` with nothing else set (system roots, env proxies honoured).
    ///
    /// ```
    /// let i = kube_authn::outbound::ConnectionInfo::new("https://x");
    /// assert!(i.trust_env && i.token.is_none());
    /// ```
    pub fn new(server: impl Into<String>) -> Self {
        Self {
            server: server.into(),
            certificate_authority: None,
            client_certificate: None,
            client_key: None,
            tls_server_name: None,
            insecure_skip_tls_verify: false,
            token: None,
            basic: None,
            proxy_url: None,
            trust_env: true,
            expiration: None,
        }
    }

    /// Sets the CA bundle.
    ///
    /// ```
    /// let _ = kube_authn::outbound::ConnectionInfo::new("https://x").with_ca(kube_authn::outbound::Pem::Data(vec![]));
    /// ```
    pub fn with_ca(mut self, ca: Pem) -> Self {
        self.certificate_authority = Some(ca);
        self
    }

    /// Sets the client certificate and key.
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, Pem};
    /// let _ = ConnectionInfo::new("https://x").with_client_cert(Pem::File("c.crt".into()), Pem::File("c.key".into()));
    /// ```
    pub fn with_client_cert(mut self, cert: Pem, key: Pem) -> Self {
        self.client_certificate = Some(cert);
        self.client_key = Some(key);
        self
    }

    /// Sets a static bearer token.
    ///
    /// ```
    /// let _ = kube_authn::outbound::ConnectionInfo::new("https://x").with_token(kube_authn::outbound::Secret::new("t"));
    /// ```
    pub fn with_token(mut self, token: Secret) -> Self {
        self.token = Some(BearerToken::Static(token));
        self
    }

    /// Sets a bearer token source (static or file).
    ///
    /// ```
    /// use kube_authn::outbound::{BearerToken, ConnectionInfo, Secret};
    /// let _ = ConnectionInfo::new("https://x").with_bearer(BearerToken::Static(Secret::new("t")));
    /// ```
    pub fn with_bearer(mut self, token: BearerToken) -> Self {
        self.token = Some(token);
        self
    }

    /// Sets basic credentials.
    ///
    /// ```
    /// let _ = kube_authn::outbound::ConnectionInfo::new("https://x").with_basic("u", kube_authn::outbound::Secret::new("p"));
    /// ```
    pub fn with_basic(mut self, username: impl Into<String>, password: Secret) -> Self {
        self.basic = Some(BasicCredentials {
            username: username.into(),
            password,
        });
        self
    }

    /// Sets an explicit proxy URL.
    ///
    /// ```
    /// let _ = kube_authn::outbound::ConnectionInfo::new("https://x").with_proxy("http://proxy:3128");
    /// ```
    pub fn with_proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy_url = Some(url.into());
        self
    }

    /// Whether `HTTP(S)_PROXY`/`NO_PROXY` are honoured.
    ///
    /// ```
    /// assert!(!kube_authn::outbound::ConnectionInfo::new("https://x").with_trust_env(false).trust_env);
    /// ```
    pub fn with_trust_env(mut self, yes: bool) -> Self {
        self.trust_env = yes;
        self
    }

    /// Skips server certificate verification (tests only).
    ///
    /// ```
    /// assert!(kube_authn::outbound::ConnectionInfo::new("https://x").with_insecure_skip_tls_verify(true).insecure_skip_tls_verify);
    /// ```
    pub fn with_insecure_skip_tls_verify(mut self, yes: bool) -> Self {
        self.insecure_skip_tls_verify = yes;
        self
    }

    /// Sets the server name verified in the server certificate.
    ///
    /// ```
    /// let _ = kube_authn::outbound::ConnectionInfo::new("https://127.0.0.1").with_tls_server_name("authn.local");
    /// ```
    pub fn with_tls_server_name(mut self, name: impl Into<String>) -> Self {
        self.tls_server_name = Some(name.into());
        self
    }

    /// Sets an expiry.
    ///
    /// ```
    /// let _ = kube_authn::outbound::ConnectionInfo::new("https://x").with_expiration(std::time::SystemTime::now());
    /// ```
    pub fn with_expiration(mut self, at: SystemTime) -> Self {
        self.expiration = Some(at);
        self
    }

    /// Whether the credentials have expired at `now`.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// let i = kube_authn::outbound::ConnectionInfo::new("https://x").with_expiration(SystemTime::UNIX_EPOCH);
    /// assert!(i.is_expired(SystemTime::now()));
    /// ```
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expiration.is_some_and(|e| now >= e)
    }

    /// In-cluster connection info from the standard service-account mount and the
    /// `KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT` environment (client-go
    /// `rest.InClusterConfig`).
    ///
    /// ```
    /// // Outside a pod this fails with client-go's message.
    /// # if std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
    /// let e = kube_authn::outbound::ConnectionInfo::in_cluster().unwrap_err();
    /// assert!(e.to_string().contains("KUBERNETES_SERVICE_HOST"));
    /// # }
    /// ```
    pub fn in_cluster() -> Result<Self, ConfigError> {
        Self::in_cluster_from(
            Path::new("/var/run/secrets/kubernetes.io/serviceaccount"),
            std::env::var("KUBERNETES_SERVICE_HOST").ok().as_deref(),
            std::env::var("KUBERNETES_SERVICE_PORT").ok().as_deref(),
        )
    }

    /// [`in_cluster`](Self::in_cluster) with an explicit mount directory and host/port.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("token"), "sa-token").unwrap();
    /// std::fs::write(dir.path().join("ca.crt"), "-----BEGIN CERTIFICATE-----\n").unwrap();
    /// let i = kube_authn::outbound::ConnectionInfo::in_cluster_from(dir.path(), Some("10.0.0.1"), Some("443")).unwrap();
    /// assert_eq!(i.server, "https://10.0.0.1:443");
    /// ```
    pub fn in_cluster_from(
        dir: &Path,
        host: Option<&str>,
        port: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let (Some(host), Some(port)) = (
            host.filter(|h| !h.is_empty()),
            port.filter(|p| !p.is_empty()),
        ) else {
            return Err(ConfigError::new(
                "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined",
            ));
        };
        // net.JoinHostPort: brackets around IPv6 literals.
        let hostport = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let token = BearerToken::from_file(dir.join("token"))?;
        let ca = dir.join("ca.crt");
        if !ca.exists() {
            return Err(ConfigError::new(format!(
                "expected to load root CA config from {}, but got err: no such file",
                ca.display()
            )));
        }
        let mut info = ConnectionInfo::new(format!("https://{hostport}"))
            .with_bearer(token)
            .with_ca(Pem::File(ca));
        info.trust_env = true;
        Ok(info)
    }

    /// A digest of the *current* credentials (server, token value as last read, basic
    /// credentials, client certificate), stable within this process: the [`vault::Vault`]
    /// remembers known-bad credentials by it. It is an HMAC under a key drawn at random once per
    /// process, so a fingerprint that ends up in a log cannot be used to test password guesses
    /// offline. A client certificate and key from files count by their paths here: no file is
    /// read (this may run on an async task). A [`vault::Credential`]'s fingerprint counts them by
    /// the pair its client loaded, so a pair rotated on disk is another credential there.
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, Secret};
    /// let a = ConnectionInfo::new("https://x").with_token(Secret::new("a"));
    /// let b = ConnectionInfo::new("https://x").with_token(Secret::new("b"));
    /// assert_ne!(a.fingerprint(), b.fingerprint());
    /// ```
    pub fn fingerprint(&self) -> [u8; 32] {
        // The token as last read: a token file is looked at by the request that sends it
        // (`authorize`) and by the vault before it takes a credential in (see
        // `BearerToken::look_if_due`), not here.
        let token = self.token.as_ref().map(BearerToken::last_read);
        self.fingerprint_with(token.as_ref(), None)
    }

    /// Whether the client certificate and key both come from files: a client built for this
    /// connection loads the pair, and its credential is fingerprinted by what it loaded
    /// ([`client_cert::pair_digest`]), which [`fingerprint`](Self::fingerprint) cannot know.
    pub(crate) fn client_cert_from_files(&self) -> bool {
        matches!(
            (&self.client_certificate, &self.client_key),
            (Some(Pem::File(_)), Some(Pem::File(_)))
        )
    }

    /// [`fingerprint`](Self::fingerprint) with `token` as the token (the one a request sent) and
    /// `cert_files` as the [`client_cert::pair_digest`] of client certificate files (the pair a
    /// credential's client loaded), read from nothing.
    pub(crate) fn fingerprint_with(
        &self,
        token: Option<&Secret>,
        cert_files: Option<[u8; 32]>,
    ) -> [u8; 32] {
        use hmac::Mac as _;
        static KEY: std::sync::LazyLock<[u8; 32]> = std::sync::LazyLock::new(|| {
            let mut key = [0; 32];
            // The system generator cannot fail on a supported platform; a zero key would only
            // make fingerprints unkeyed, never wrong.
            let _ = aws_lc_rs::rand::fill(&mut key);
            key
        });
        let mut h = <hmac::Hmac<Sha256> as hmac::Mac>::new_from_slice(&*KEY)
            .expect("HMAC takes a key of any length");
        let mut field = |tag: u8, bytes: &[u8]| {
            h.update(&[tag]);
            h.update(&(bytes.len() as u64).to_be_bytes());
            h.update(bytes);
        };
        field(1, self.server.as_bytes());
        if let Some(t) = token {
            field(2, t.expose().as_bytes());
        }
        if let Some(b) = &self.basic {
            field(3, b.username.as_bytes());
            field(4, b.password.expose().as_bytes());
        }
        match (&self.client_certificate, cert_files) {
            (Some(Pem::Data(d)), _) => field(5, d),
            (Some(Pem::File(_)), Some(digest)) => field(7, &digest),
            (Some(Pem::File(p)), None) => field(6, p.to_string_lossy().as_bytes()),
            (None, _) => {}
        }
        h.finalize().into_bytes().into()
    }

    /// The rustls client configuration (aws-lc-rs provider) for this connection.
    ///
    /// ```
    /// let cfg = kube_authn::outbound::ConnectionInfo::new("https://x").tls_config();
    /// # let _ = cfg;
    /// ```
    pub fn tls_config(&self) -> Result<rustls::ClientConfig, ConfigError> {
        self.tls_config_parts(Arc::new(SystemClock))
            .map(|parts| parts.config)
    }

    /// [`tls_config`](Self::tls_config), with the rotating client certificate it presents when
    /// the pair comes from files and the rotating verifier of a CA file (its checks timed by
    /// `clock`).
    fn tls_config_parts(&self, clock: Arc<dyn Clock>) -> Result<TlsParts, ConfigError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut rotating_ca = None;
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| ConfigError::new(format!("TLS configuration: {e}")))?;
        let builder = if self.insecure_skip_tls_verify {
            if self.certificate_authority.is_some() {
                return Err(ConfigError::new(
                    "specifying a root certificates file with the insecure flag is not allowed",
                ));
            }
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerification(provider.clone())))
        } else {
            // A CA file is read again as client-go reads it (`ca_rotation`); data, or the
            // system roots, never change.
            let verifier: Arc<dyn ServerCertVerifier> = match &self.certificate_authority {
                Some(Pem::File(path)) => {
                    let ca = Arc::new(ca_rotation::RotatingCa::new(
                        path.clone(),
                        provider.clone(),
                        clock.clone(),
                    )?);
                    rotating_ca = Some(ca.clone());
                    ca
                }
                Some(Pem::Data(pem)) => ca_rotation::verifier_for(pem, &provider)?,
                None => ca_rotation::verifier_for(&system_roots()?, &provider)?,
            };
            let verifier = match &self.tls_server_name {
                Some(name) => {
                    let name = ServerName::try_from(name.clone()).map_err(|_| {
                        ConfigError::new(format!("invalid tls-server-name {name:?}"))
                    })?;
                    Arc::new(NameOverride { verifier, name })
                }
                None => verifier,
            };
            builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
        };
        let mut rotating = None;
        let mut config = match (&self.client_certificate, &self.client_key) {
            // Files: re-read when they change, for each new connection (client-go rotates
            // them too; see `client_cert`).
            (Some(Pem::File(cert)), Some(Pem::File(key))) => {
                let resolver = Arc::new(client_cert::RotatingClientCert::new(
                    cert.clone(),
                    key.clone(),
                    provider.clone(),
                    clock.clone(),
                )?);
                rotating = Some(resolver.clone());
                builder.with_client_cert_resolver(resolver)
            }
            (Some(cert), Some(key)) => {
                let (chain, key) = client_cert::parse_pair(&cert.bytes()?, &key.bytes()?)?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| ConfigError::new(format!("client certificate/key: {e}")))?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => {
                return Err(ConfigError::new(
                    "client-cert-data and client-key-data must be specified together",
                ));
            }
        };
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        // An IP address as tls-server-name is verified but never sent as SNI (Go's
        // crypto/tls sends none for an IP `ServerName`), whatever the URL's host.
        if self
            .tls_server_name
            .as_deref()
            .is_some_and(|n| n.parse::<std::net::IpAddr>().is_ok())
        {
            config.enable_sni = false;
        }
        // No session resumption, as client-go (its `tls.Config` has no `ClientSessionCache`):
        // every new connection is a full handshake, so the server sees the client certificate
        // on disk now (a rotated or replaced pair), not the identity of a resumed session.
        config.resumption = rustls::client::Resumption::disabled();
        Ok(TlsParts {
            config,
            client_cert: rotating,
            ca: rotating_ca,
        })
    }

    /// An HTTP client for this connection: its TLS settings, its proxy settings, redirects not
    /// followed, `timeout` per request. Authentication headers are added per request by
    /// [`authorize`](Self::authorize).
    ///
    /// ```
    /// let c = kube_authn::outbound::ConnectionInfo::new("https://x").client(std::time::Duration::from_secs(5));
    /// assert!(c.is_ok());
    /// ```
    pub fn client(&self, timeout: Duration) -> Result<reqwest::Client, ConfigError> {
        // A snapshot: the CA file as it is now (a `Credential`'s client follows its changes).
        self.client_with_tls(self.tls_config()?, timeout, None)
    }

    /// When requests to this server must be rerouted so that the `tls-server-name` is sent as
    /// SNI (see [`SniRoute`]): an `https` server, a `tls-server-name` that is a DNS name other
    /// than the URL's host, and no proxy for the server. An IP address is never sent as SNI
    /// (Go's crypto/tls and rustls agree), so such a name only changes verification.
    fn sni_route(&self) -> Option<SniRoute> {
        let name = self.tls_server_name.as_deref()?;
        let url = reqwest::Url::parse(&self.server).ok()?;
        if url.scheme() != "https" || self.proxy_url.is_some() {
            return None;
        }
        if name.parse::<std::net::IpAddr>().is_ok() {
            return None;
        }
        // A name as it stands in a URL (Go sends it as written; rustls refuses non-ASCII
        // names when the TLS configuration is built).
        let named = reqwest::Url::parse(&format!("https://{name}/")).ok()?;
        if !named.domain()?.eq_ignore_ascii_case(name) {
            return None;
        }
        let url_host = url.host_str()?;
        if url_host.eq_ignore_ascii_case(name) {
            return None;
        }
        if self.trust_env
            && proxy::EnvProxy::from_env()
                .for_server(&self.server)
                .proxy_for(&url)
                .is_some()
        {
            return None;
        }
        Some(SniRoute {
            name: name.to_ascii_lowercase(),
            url_host: url_host.to_owned(),
            connect_host: url_host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
        })
    }

    fn client_with_tls(
        &self,
        mut tls: rustls::ClientConfig,
        timeout: Duration,
        route: Option<&SniRoute>,
    ) -> Result<reqwest::Client, ConfigError> {
        // A host Go dials as a name, the url crate as an address (`10.1`, `2130706433`).
        if let Some((host, ip)) = proxy::ipv4_read_from_a_name(&self.server) {
            return Err(ConfigError::new(format!(
                "server URL {}: {}",
                crate::jwt::go_quote(&redact_server(&self.server)),
                proxy::ipv4_read_from_a_name_error(&host, ip)
            )));
        }
        if route.is_some() {
            // The request names the URL's host in `Host`, which HTTP/2 would contradict with
            // an `:authority` naming the tls-server-name.
            tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        }
        let mut b = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout.min(CONNECT_TIMEOUT));
        if let Some(route) = route {
            b = b
                .http1_only()
                .dns_resolver(Arc::new(SniResolver(route.clone())));
        }
        if let Some(proxy) = &self.proxy_url {
            check_proxy_url(proxy)?;
            if let Some((host, ip)) = proxy::ipv4_read_from_a_name(proxy) {
                return Err(ConfigError::new(format!(
                    "proxy-url {}: {}",
                    redact_url(proxy),
                    proxy::ipv4_read_from_a_name_error(&host, ip)
                )));
            }
            // A URL the url crate takes but `http::Uri` refuses (a `"` in the host) would make
            // reqwest connect directly, without a word: refused here instead.
            if reqwest::Url::parse(proxy).is_ok_and(|u| !proxy_uri_usable(&u)) {
                return Err(ConfigError::new(format!(
                    "proxy-url {}: {PROXY_NOT_A_URI}",
                    redact_url(proxy)
                )));
            }
            // The URL (which may hold a password) never reaches the error.
            let proxy = reqwest::Proxy::all(proxy.as_str()).map_err(|e| {
                ConfigError::new(format!(
                    "proxy-url {}: {}",
                    redact_url(proxy),
                    e.without_url()
                ))
            })?;
            b = b.proxy(proxy);
        } else {
            // Never reqwest's own environment rules: Go's (`proxy` module docs) or none.
            b = b.no_proxy();
            if self.trust_env {
                let env = proxy::EnvProxy::from_env().for_server(&self.server);
                let unsupported = reqwest::Url::parse(&self.server)
                    .ok()
                    .and_then(|url| env.unsupported(&url));
                if let Some((var, scheme)) = unsupported {
                    return Err(ConfigError::new(format!(
                        "{var}: unsupported proxy scheme {scheme:?} (http and https are supported)"
                    )));
                }
                // Go's request through such a proxy fails; reqwest would go direct.
                let unusable = reqwest::Url::parse(&self.server)
                    .ok()
                    .and_then(|url| env.unusable(&url));
                if let Some((var, proxy)) = unusable {
                    return Err(ConfigError::new(format!(
                        "{var}: proxy {}: {PROXY_NOT_A_URI}",
                        redact_url(proxy.as_str())
                    )));
                }
                if let Some(e) = reqwest::Url::parse(&self.server)
                    .ok()
                    .and_then(|url| env.ipv4_read_from_a_name(&url))
                {
                    return Err(ConfigError::new(e));
                }
                if !env.is_empty() {
                    // A rerouted request names the tls-server-name in its URL: it goes where
                    // the server URL goes, which `sni_route` found is not through a proxy.
                    let rerouted = route.map(|r| r.name.clone());
                    b = b.proxy(reqwest::Proxy::custom(move |url| {
                        if rerouted.is_some() && url.host_str() == rerouted.as_deref() {
                            return None;
                        }
                        env.proxy_for(url)
                    }));
                }
            }
        }
        b.build()
            .map_err(|e| ConfigError::new(format!("HTTP client: {e}")))
    }

    /// Sets this connection's `Authorization` header (bearer token, else basic) on `request`,
    /// marked sensitive. It replaces the Basic header reqwest derives from a `user:password@`
    /// in the URL, as Go's `net/http` uses the URL's user only when no `Authorization` header
    /// is set (a request never carries two).
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, Secret};
    /// let info = ConnectionInfo::new("https://x").with_token(Secret::new("t"));
    /// let client = info.client(std::time::Duration::from_secs(1)).unwrap();
    /// let req = info.authorize(client.post("https://u:p@x")).build().unwrap();
    /// assert_eq!(req.headers().get_all("authorization").iter().count(), 1);
    /// assert!(req.headers()["authorization"].is_sensitive());
    /// assert_eq!(req.headers()["authorization"], "Bearer t");
    /// ```
    pub fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        self.authorize_sent(request).0
    }

    /// [`authorize`](Self::authorize), and the bearer token it set (for the vault, which
    /// marks that token bad after a 401).
    pub(crate) fn authorize_sent(
        &self,
        request: reqwest::RequestBuilder,
    ) -> (reqwest::RequestBuilder, Option<SentToken>) {
        use base64::Engine as _;
        let sent = self.token.as_ref().map(BearerToken::current_read);
        let value = if let Some(t) = &sent {
            format!("Bearer {}", t.token().expose())
        } else if let Some(b) = &self.basic {
            let pair = format!("{}:{}", b.username, b.password.expose());
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        } else {
            return (request, None);
        };
        let request = match http::HeaderValue::from_str(&value) {
            Ok(mut value) => {
                value.set_sensitive(true);
                let mut headers = http::HeaderMap::new();
                headers.insert(http::header::AUTHORIZATION, value);
                // `headers` replaces an existing value; `header` would append a second one.
                request.headers(headers)
            }
            // Not a valid header value: let reqwest's own setter report it as a builder error
            // (its message does not include the value).
            Err(_) => match (&sent, &self.basic) {
                (Some(t), _) => request.bearer_auth(t.token().expose()),
                (None, Some(b)) => request.basic_auth(&b.username, Some(b.password.expose())),
                (None, None) => request,
            },
        };
        (request, sent)
    }
}

/// Why a proxy URL that parses is refused when reqwest cannot use it.
const PROXY_NOT_A_URI: &str =
    "not a valid HTTP URI (refused rather than connecting without the proxy)";

/// Whether reqwest can send through `proxy`: it hands the URL, as the url crate writes it, to
/// `http::Uri`, and connects directly, silently, when that refuses it (a host with `{`, `"` or
/// a backtick, which the url crate takes).
pub(crate) fn proxy_uri_usable(proxy: &reqwest::Url) -> bool {
    proxy.as_str().parse::<http::Uri>().is_ok()
}

/// client-go's `parseProxyURL` for a `proxy-url` (Go's `url.Parse`, then the scheme), less
/// `socks5`, which this client does not speak: anything but `http` and `https` is refused
/// here rather than left to reqwest, which would connect directly past a proxy of a scheme it
/// does not know. The URL is shown with its password masked ([`redact_url`]).
fn check_proxy_url(proxy: &str) -> Result<(), ConfigError> {
    let shown = redact_url(proxy);
    match crate::go_url::rest::scheme(proxy).as_deref() {
        Some("http" | "https") => Ok(()),
        Some("socks5") => Err(ConfigError::new(format!(
            "proxy-url {shown}: socks5 proxies are not supported (http and https are)"
        ))),
        Some(scheme) => Err(ConfigError::new(format!(
            "proxy-url {shown}: unsupported scheme {}, must be http or https",
            crate::jwt::go_quote(scheme)
        ))),
        None => Err(ConfigError::new(format!(
            "proxy-url {shown}: could not parse"
        ))),
    }
}

/// The roots of a PEM CA bundle, read as Go's `x509.CertPool.AppendCertsFromPEM` (client-go's
/// CA pool; `certutil.NewPoolFromBytes` reads blocks the same way) reads one: the blocks Go's
/// `pem.Decode` finds ([`PemBlocks`](crate::x509::bundle::PemBlocks), as
/// [`parse_pem_bundle`](crate::x509::parse_pem_bundle) reads them), `CERTIFICATE` blocks
/// without headers; a block whose base64 does not decode or a BEGIN without an END is
/// skipped, and so is a certificate rustls does not take as a root. At least one. With the
/// roots, the SHA-256 digest of each one's DER (Go's `CertPool.contains`, for
/// [`ca_rotation::PoolVerifier`]).
pub(crate) fn roots_from_pem(pem: &[u8]) -> Result<(RootCertStore, Vec<[u8; 32]>), ConfigError> {
    use sha2::Digest;
    let mut roots = RootCertStore::empty();
    let mut digests = Vec::new();
    for block in crate::x509::bundle::PemBlocks(pem) {
        if block.label != b"CERTIFICATE" || block.has_headers {
            continue;
        }
        let digest: [u8; 32] = Sha256::digest(&block.bytes).into();
        if roots.add(CertificateDer::from(block.bytes)).is_ok() {
            digests.push(digest);
        }
    }
    if digests.is_empty() {
        return Err(ConfigError::new("CA bundle: no valid certificate found"));
    }
    Ok((roots, digests))
}

/// A connection's TLS configuration and the files it follows.
struct TlsParts {
    config: rustls::ClientConfig,
    /// The client certificate and key files, when the pair comes from files.
    client_cert: Option<Arc<client_cert::RotatingClientCert>>,
    /// The CA file, when the roots come from one.
    ca: Option<Arc<ca_rotation::RotatingCa>>,
}

/// An HTTP client whose client certificate or CA comes from files: when the certificate files
/// rotate (checked at most once per second, as each request asks for the client) or the CA file
/// changes (read at most once per 5 minutes, as client-go reads it), a new client is built with
/// the same settings (the same TLS configuration, whose certificate and verifier now hold the
/// new files), and the previous one (its pooled connections, made with the old pair or verified
/// with the old roots) is dropped once no request uses it. client-go closes all connections on
/// a certificate rotation, and the idle ones on a CA change, instead; either way no new request
/// goes out on a connection made with the old files.
pub(crate) struct RotatingClient {
    info: Arc<ConnectionInfo>,
    tls: rustls::ClientConfig,
    timeout: Duration,
    /// Decided once, as client-go reads the proxy environment once.
    route: Option<SniRoute>,
    rotation: Option<Arc<client_cert::RotatingClientCert>>,
    ca: Option<Arc<ca_rotation::RotatingCa>>,
    /// The client, with the certificate and CA generations it was built for.
    current: arc_swap::ArcSwap<([u64; 2], reqwest::Client)>,
}

impl fmt::Debug for RotatingClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RotatingClient")
            .field("generation", &self.current.load().0)
            .finish_non_exhaustive()
    }
}

impl RotatingClient {
    /// The client for `info` (per-request `timeout`).
    pub(crate) fn new(info: Arc<ConnectionInfo>, timeout: Duration) -> Result<Self, ConfigError> {
        Self::with_clock(info, timeout, Arc::new(SystemClock))
    }

    /// [`new`](Self::new), the CA file's checks timed by `clock`.
    pub(crate) fn with_clock(
        info: Arc<ConnectionInfo>,
        timeout: Duration,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ConfigError> {
        let parts = info.tls_config_parts(clock)?;
        let route = info.sni_route();
        let client = info.client_with_tls(parts.config.clone(), timeout, route.as_ref())?;
        let this = Self {
            info,
            tls: parts.config,
            timeout,
            route,
            rotation: parts.client_cert,
            ca: parts.ca,
            current: arc_swap::ArcSwap::from_pointee(([0, 0], client)),
        };
        let generation = this.generation();
        this.current
            .store(Arc::new((generation, this.current.load().1.clone())));
        Ok(this)
    }

    /// The client certificate and CA generations now (each checked when its check is due).
    fn generation(&self) -> [u64; 2] {
        [
            self.rotation.as_ref().map_or(0, |r| r.generation()),
            self.ca.as_ref().map_or(0, |c| c.generation()),
        ]
    }

    /// [`client_cert::pair_digest`] of the client certificate files' pair in use, when the
    /// pair comes from files (no look at the files).
    pub(crate) fn cert_digest(&self) -> Option<[u8; 32]> {
        self.rotation.as_ref().map(|r| r.digest())
    }

    /// How requests are rerouted to send the tls-server-name as SNI, if they are.
    pub(crate) fn route(&self) -> Option<&SniRoute> {
        self.route.as_ref()
    }

    /// The client for a request now.
    pub(crate) fn get(&self) -> reqwest::Client {
        // A guard, not a reference count: the common case touches no shared counter.
        let current = self.current.load();
        if self.rotation.is_none() && self.ca.is_none() {
            return current.1.clone();
        }
        let generation = self.generation();
        if generation == current.0 {
            return current.1.clone();
        }
        // The same TLS settings (and the same rotating pair, now the new one): only the pool
        // is new. Building re-reads the proxy environment, which could now be unusable: then
        // the old client is kept for this generation (and said so once).
        let rebuilt =
            self.info
                .client_with_tls(self.tls.clone(), self.timeout, self.route.as_ref());
        let (next, rebuilt) = match rebuilt {
            Ok(client) => (Arc::new((generation, client)), true),
            Err(e) => {
                tracing::warn!(server = %redact_server(&self.info.server), error = %e, "client certificate or CA rotated, but a new HTTP client cannot be built; keeping the current connections");
                (Arc::new((generation, current.1.clone())), false)
            }
        };
        // Requests racing here build a client each; the first to swap wins and the others use
        // its client.
        let previous = self.current.compare_and_swap(&current, next.clone());
        if !Arc::ptr_eq(&previous, &current) {
            return previous.1.clone();
        }
        if rebuilt {
            tracing::info!(server = %redact_server(&self.info.server), "client certificate or CA rotated: new connections from now on");
        }
        next.1.clone()
    }
}

/// How a request is made to send a `tls-server-name` as SNI, as Go's transport does
/// (`tls.Config.ServerName`), when reqwest takes SNI from the URL's host: the request URL names
/// the tls-server-name, a resolver of this client's own sends that name's connections to the
/// server URL's host, and the `Host` header names the server URL's host as before. The
/// connections speak HTTP/1.1: under HTTP/2 the `:authority` would name the tls-server-name.
#[derive(Clone, Debug)]
pub(crate) struct SniRoute {
    /// The tls-server-name, as it stands in a URL (lower case).
    name: String,
    /// The server URL's host as reqwest writes it (`[::1]` bracketed).
    url_host: String,
    /// Where the connections go: the server URL's host (an IP address without brackets, or a
    /// DNS name resolved as usual).
    connect_host: String,
}

impl SniRoute {
    /// `url` (a request to the server) rerouted, and the `Host` header it must carry; `None`
    /// for a URL to another host.
    pub(crate) fn reroute(&self, url: &reqwest::Url) -> Option<(reqwest::Url, String)> {
        if url.scheme() != "https" || !url.host_str()?.eq_ignore_ascii_case(&self.url_host) {
            return None;
        }
        // As hyper writes it: the host, and the port when it is not the default.
        let host = match url.port() {
            Some(port) => format!("{}:{port}", self.url_host),
            None => self.url_host.clone(),
        };
        let mut rerouted = url.clone();
        rerouted.set_host(Some(&self.name)).ok()?;
        Some((rerouted, host))
    }
}

/// The resolver of a rerouted client: the tls-server-name resolves to the server URL's host,
/// any other name (a proxy's) as usual (the system resolver, as reqwest's own).
struct SniResolver(SniRoute);

impl reqwest::dns::Resolve for SniResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = if name.as_str().eq_ignore_ascii_case(&self.0.name) {
            self.0.connect_host.clone()
        } else {
            name.as_str().to_owned()
        };
        Box::pin(async move {
            if let Ok(ip) = host.parse::<std::net::IpAddr>() {
                let addr = std::net::SocketAddr::new(ip, 0);
                return Ok(Box::new(std::iter::once(addr)) as reqwest::dns::Addrs);
            }
            let addrs = tokio::task::spawn_blocking(move || {
                std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), 0))
                    .map(|a| a.collect::<Vec<_>>())
            })
            .await
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)??;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Go's `crypto/x509` Linux root locations (`SSL_CERT_FILE` first).
fn system_roots() -> Result<Vec<u8>, ConfigError> {
    const FILES: &[&str] = &[
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem",
        "/etc/pki/tls/cacert.pem",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ];
    let files: Vec<&Path> = FILES.iter().map(Path::new).collect();
    system_roots_from(std::env::var_os("SSL_CERT_FILE").as_deref(), &files)
}

/// `SSL_CERT_FILE` when set and not empty, else the first of `files` that can be opened; each read bounded
/// by [`MAX_FILE_BYTES`] (a larger bundle is an error, not skipped).
fn system_roots_from(
    ssl_cert_file: Option<&std::ffi::OsStr>,
    files: &[&Path],
) -> Result<Vec<u8>, ConfigError> {
    // Go's root_unix.go takes an empty value as unset.
    if let Some(f) = ssl_cert_file.filter(|f| !f.is_empty()) {
        return read_bounded(Path::new(f));
    }
    for f in files {
        if std::fs::File::open(f).is_ok() {
            return read_bounded(f);
        }
    }
    Err(ConfigError::new(
        "no certificate-authority configured and no system CA bundle found",
    ))
}

#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[derive(Debug)]
struct NameOverride {
    verifier: Arc<dyn ServerCertVerifier>,
    name: ServerName<'static>,
}

impl ServerCertVerifier for NameOverride {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier
            .verify_server_cert(end_entity, intermediates, &self.name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.verifier.supported_verify_schemes()
    }
}

/// `url` with its user information masked, for errors, logs and `Debug` output: the password
/// written `***` (`https://u:***@host/`, Go's net/http `stripPassword`), and a user name
/// without a password written `***` too (`https://***@host/`: client-go sends it as Basic
/// credentials, where Go shows it). The rest of the text is kept as given, so even a URL that
/// does not parse can be shown; in one that does not parse, whatever stands before the last
/// `@` counts as user information, since a password may hold a `/`, `?` or `#`
/// (`https://u:pa/ss@host/`, which no parser reads as that password).
pub(crate) fn redact_url(url: &str) -> std::borrow::Cow<'_, str> {
    if reqwest::Url::parse(url).is_err() {
        let masked = crate::go_url::rest::mask_userinfo(url);
        return if masked == url {
            url.into()
        } else {
            masked.into()
        };
    }
    let start = crate::go_url::rest::authority_start(url);
    let end = url[start..]
        .find(['?', '#'])
        .map_or(url.len(), |i| start + i);
    let slash = url[start..end].find('/').map_or(end, |i| start + i);
    // The user information ends at the authority's last `@`; with none there, a `:` in the
    // authority and an `@` further on may be a password holding a `/`
    // (`https://admin:8443/s3cret@host/` parses as host `admin`, port 8443): masking the
    // text up to that `@` shows less than the URL, never the password.
    let at = match url[start..slash].rfind('@') {
        Some(i) => start + i,
        None if url[start..slash].contains(':') => match url[slash..end].rfind('@') {
            Some(i) => slash + i,
            None => return url.into(),
        },
        None => return url.into(),
    };
    match url[start..at].find(':').map(|i| start + i) {
        Some(colon) => format!("{}:***{}", &url[..colon], &url[at..]).into(),
        None => format!("{}***{}", &url[..start], &url[at..]).into(),
    }
}

/// A server URL for `Debug` output and logs: [`redact_url`], and its query and fragment, which
/// may carry a key, written `?***` / `#***` (client-go never sends a kubeconfig's query).
pub(crate) fn redact_server(url: &str) -> String {
    let shown = redact_url(url);
    let start = crate::go_url::rest::authority_start(&shown);
    match shown[start..].find(['?', '#']).map(|i| start + i) {
        Some(cut) => format!("{}{}***", &shown[..cut], &shown[cut..=cut]),
        None => shown.into_owned(),
    }
}

/// The innermost cause of an error chain (reqwest wraps hyper wraps io…): the text worth
/// logging.
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Why [`read_capped`] stopped.
pub(crate) enum ReadError {
    /// The body is larger than the cap.
    TooLarge,
    /// The connection failed while reading.
    Transport(reqwest::Error),
}

/// Reads a response body of at most `max` bytes (a larger declared or actual body is refused
/// as soon as it is seen, never buffered).
pub(crate) async fn read_capped(
    mut resp: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, ReadError> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(ReadError::TooLarge);
    }
    let mut out = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(ReadError::Transport)? {
        if out.len() + chunk.len() > max {
            return Err(ReadError::TooLarge);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// A FIFO standing for a file on a stalled mount: opening it blocks until a writer comes.
#[cfg(test)]
pub(crate) mod stalled_file {
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// The writer of a FIFO made by [`serve`].
    pub(crate) struct Writer {
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<usize>>,
    }

    impl Writer {
        /// Stops serving, releases a reader still blocked in `open` (it then reads nothing) and
        /// answers how many readers were served.
        pub(crate) fn stop(mut self) -> usize {
            self.finish()
        }

        fn finish(&mut self) -> usize {
            self.stop.store(true, Ordering::Release);
            match self.thread.take().map(std::thread::JoinHandle::join) {
                Some(Ok(served)) => served,
                Some(Err(_)) if std::thread::panicking() => 0,
                Some(Err(e)) => std::panic::resume_unwind(e),
                None => 0,
            }
        }
    }

    /// A test that fails before [`Writer::stop`] does not leave a reader blocked for ever.
    impl Drop for Writer {
        fn drop(&mut self) {
            if self.thread.is_some() {
                let _ = self.finish();
            }
        }
    }

    /// Makes `path` a FIFO; from `after` on, until [`Writer::stop`], each reader that opens it
    /// gets `content`.
    pub(crate) fn serve(path: &Path, content: String, after: Duration) -> Writer {
        let _ = std::fs::remove_file(path);
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
        let path = path.to_owned();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let stopped = || stopped.load(Ordering::Acquire);
            let start = Instant::now() + after;
            while !stopped() && Instant::now() < start {
                std::thread::sleep(Duration::from_millis(10));
            }
            let mut served = 0;
            while !stopped() {
                // Non-blocking: fails (ENXIO) while no reader has it open.
                let opened = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path);
                match opened {
                    Ok(mut w) => {
                        std::io::Write::write_all(&mut w, content.as_bytes()).unwrap();
                        drop(w);
                        served += 1;
                        // Let the reader see the end and close before the next try.
                        std::thread::sleep(Duration::from_millis(300));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            // Opened for reading and writing, a FIFO does not wait for a peer: a reader blocked
            // in `open` gets through, and reads the end of the file once this closes.
            let _ = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path);
            served
        });
        Writer {
            stop,
            thread: Some(thread),
        }
    }

    /// A reader blocked in `open` before the writer serves is released by `stop` (it reads
    /// nothing), not left waiting.
    #[test]
    fn stop_releases_a_blocked_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        let writer = serve(&path, "x".into(), Duration::from_secs(3600));
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = path.clone();
        std::thread::spawn(move || {
            let _ = tx.send(std::fs::read(&reader).map_err(|e| e.kind()));
        });
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(writer.stop(), 0);
        let read = rx.recv_timeout(Duration::from_secs(10));
        assert_eq!(read, Ok(Ok(Vec::new())), "released, read nothing");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_url_masks_the_user_information() {
        let cases = [
            ("https://u:pw@host/", "https://u:***@host/"),
            ("https://u:pw@host", "https://u:***@host"),
            ("https://u:@host:8443/x", "https://u:***@host:8443/x"),
            ("https://u:p:w@host/", "https://u:***@host/"),
            ("https://u:p@w@host/", "https://u:***@host/"),
            ("https://u@host/", "https://***@host/"),
            ("https://tok3n@host/", "https://***@host/"),
            // Passwords no parser reads as such: everything before the last `@` is masked.
            ("https://u:pa/ss@host/", "https://u:***@host/"),
            ("https://u:pa?ss@host", "https://u:***@host"),
            ("https://u:pa#ss@host/x", "https://u:***@host/x"),
            // A URL that parses is read as it parses: host `h`, path `/x@y`.
            ("https://h/x@y", "https://h/x@y"),
            // It parses (host `admin`, port 8443), but the `@` after a `:` may end a password.
            ("https://admin:8443/s3cret@host/", "https://admin:***@host/"),
            // `://` later in the text is not the scheme's.
            ("u:pw@host/x://y", "u:***@host/x://y"),
            ("https://host/a@b?c=d:e@f", "https://host/a@b?c=d:e@f"),
            ("https://host:443/", "https://host:443/"),
            ("u:pw@host", "u:***@host"),
            ("", ""),
            ("https://", "https://"),
        ];
        for (url, want) in cases {
            assert_eq!(redact_url(url), want, "{url}");
        }
        let info = ConnectionInfo::new("https://u:pw-SECRET@host/")
            .with_proxy("http://p:proxy-SECRET@proxy:3128");
        let shown = format!("{info:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("https://u:***@host/"), "{shown}");
        // The server's query and fragment are not shown either.
        for (server, want) in [
            ("https://h/?key=SECRET", "https://h/?***"),
            ("https://h?key=SECRET#x", "https://h?***"),
            ("https://u:pw@h/a#SECRET", "https://u:***@h/a#***"),
            ("https://h/a", "https://h/a"),
        ] {
            assert_eq!(redact_server(server), want);
            assert!(format!("{:?}", ConnectionInfo::new(server)).contains(want));
        }
        // A proxy URL that cannot be used: the client error shows it masked.
        for bad in [
            "http://p:proxy-SECRET@[::1",
            "http://p:proxy-SECRET@ho st:3128",
        ] {
            let err = ConnectionInfo::new("https://host/")
                .with_proxy(bad)
                .client(Duration::from_secs(1))
                .unwrap_err()
                .to_string();
            assert!(
                !err.contains("SECRET") && err.starts_with("proxy-url "),
                "{err}"
            );
        }
    }

    /// A proxy URL this client cannot use is refused when the client is built, as client-go's
    /// `parseProxyURL` refuses it (reqwest would connect directly or fail each request), its
    /// password never shown; socks5, which client-go speaks, is not supported here.
    #[test]
    fn proxy_urls_the_client_cannot_use_are_refused() {
        let cases: &[(&str, Result<(), &str>)] = &[
            (
                "ftp://u:proxy-SECRET@p:21",
                Err(
                    r#"proxy-url ftp://u:***@p:21: unsupported scheme "ftp", must be http or https"#,
                ),
            ),
            (
                "htp://u:proxy-SECRET@p:3128",
                Err(
                    r#"proxy-url htp://u:***@p:3128: unsupported scheme "htp", must be http or https"#,
                ),
            ),
            (
                "foo://p",
                Err(r#"proxy-url foo://p: unsupported scheme "foo", must be http or https"#),
            ),
            (
                "socks5://u:proxy-SECRET@p:1080",
                Err(
                    "proxy-url socks5://u:***@p:1080: socks5 proxies are not supported (http and https are)",
                ),
            ),
            (
                "proxy:3128",
                Err(r#"proxy-url proxy:3128: unsupported scheme "proxy", must be http or https"#),
            ),
            (
                "10.0.0.1:3128",
                Err("proxy-url 10.0.0.1:3128: could not parse"),
            ),
            (
                "u:proxy-SECRET@10.0.0.1:3128",
                Err(
                    r#"proxy-url u:***@10.0.0.1:3128: unsupported scheme "u", must be http or https"#,
                ),
            ),
            (
                "//p:3128",
                Err(r#"proxy-url //p:3128: unsupported scheme "", must be http or https"#),
            ),
            // A host Go dials as a name, the url crate as an address.
            (
                "http://u:proxy-SECRET@127.1:3128",
                Err(
                    r#"proxy-url http://u:***@127.1:3128: host "127.1" is a host name to Go but the IPv4 address 127.0.0.1 to this client; write the address as four decimal numbers without leading zeros"#,
                ),
            ),
            ("http://u:proxy-SECRET@p:3128", Ok(())),
            ("https://p:3128", Ok(())),
            ("HTTP://p:3128", Ok(())),
        ];
        for (proxy, want) in cases {
            let got = ConnectionInfo::new("https://127.0.0.1:1/")
                .with_proxy(*proxy)
                .client(Duration::from_secs(1));
            match (got, want) {
                (Ok(_), Ok(())) => {}
                (Err(e), Err(text)) => {
                    let e = e.to_string();
                    assert_eq!(e, *text, "{proxy}");
                    assert!(!e.contains("SECRET"), "{e}");
                }
                (got, _) => panic!("{proxy}: {got:?}"),
            }
        }
    }

    #[test]
    fn in_cluster_table() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "sa-token\n").unwrap();
        std::fs::write(dir.path().join("ca.crt"), "x").unwrap();
        let empty = tempfile::tempdir().unwrap();
        /// (name, mount dir, host, port, server URL or error text)
        type Case<'a> = (
            &'a str,
            &'a Path,
            Option<&'a str>,
            Option<&'a str>,
            Result<&'a str, &'a str>,
        );
        let cases: &[Case<'_>] = &[
            (
                "ipv4",
                dir.path(),
                Some("10.96.0.1"),
                Some("443"),
                Ok("https://10.96.0.1:443"),
            ),
            (
                "ipv6 bracketed",
                dir.path(),
                Some("fd00::1"),
                Some("443"),
                Ok("https://[fd00::1]:443"),
            ),
            (
                "no host",
                dir.path(),
                None,
                Some("443"),
                Err("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"),
            ),
            (
                "empty port",
                dir.path(),
                Some("h"),
                Some(""),
                Err("must be defined"),
            ),
            (
                "no token file",
                empty.path(),
                Some("h"),
                Some("1"),
                Err("token"),
            ),
        ];
        for (name, d, host, port, want) in cases {
            match (ConnectionInfo::in_cluster_from(d, *host, *port), want) {
                (Ok(i), Ok(url)) => {
                    assert_eq!(i.server, *url, "{name}");
                    assert_eq!(i.token.as_ref().unwrap().current().expose(), "sa-token");
                    assert_eq!(i.certificate_authority, Some(Pem::File(d.join("ca.crt"))));
                }
                (Err(e), Err(text)) => assert!(e.to_string().contains(text), "{name}: {e}"),
                (got, _) => panic!("{name}: {got:?}"),
            }
        }
    }

    /// A token file holding `one`, looked at under an injected clock: its directory (kept
    /// alive by the caller), path, clock and token.
    fn clocked_token_file() -> (
        tempfile::TempDir,
        std::path::PathBuf,
        Arc<crate::token::cache::ManualClock>,
        BearerToken,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "one").unwrap();
        let clock = Arc::new(crate::token::cache::ManualClock::new());
        let token = BearerToken::from_file_with_clock(&path, clock.clone()).unwrap();
        (dir, path, clock, token)
    }

    /// A token file is looked at no more than once per `TOKEN_FILE_CHECK_EVERY` (by an
    /// injected clock): between checks no request touches the file (a deleted file is not even
    /// noticed), at the check a change is taken; after a 401 (`expire`) the next request reads
    /// it whatever the clock says.
    #[test]
    fn token_file_checked_once_per_interval() {
        let (_dir, path, clock, token) = clocked_token_file();
        let BearerToken::File(file) = &token else {
            unreachable!()
        };
        let just_before = TOKEN_FILE_CHECK_EVERY - Duration::from_secs(1);
        // (step, new content (`None`: delete the file), clock advance, token, failed checks)
        type Step<'a> = (&'a str, Option<Option<&'a str>>, Duration, &'a str, u64);
        let steps: [Step<'_>; 6] = [
            (
                "rotated: not looked at yet",
                Some(Some("two-longer")),
                just_before,
                "one",
                0,
            ),
            (
                "the check is due",
                None,
                Duration::from_secs(1),
                "two-longer",
                0,
            ),
            (
                "deleted: not looked at",
                Some(None),
                just_before,
                "two-longer",
                0,
            ),
            (
                "deleted: the check keeps the token",
                None,
                Duration::from_secs(1),
                "two-longer",
                1,
            ),
            (
                "back: not looked at",
                Some(Some("three")),
                Duration::ZERO,
                "two-longer",
                1,
            ),
            ("back: the check", None, TOKEN_FILE_CHECK_EVERY, "three", 1),
        ];
        for (step, write, advance, want, failures) in steps {
            match write {
                Some(Some(text)) => std::fs::write(&path, text).unwrap(),
                Some(None) => std::fs::remove_file(&path).unwrap(),
                None => {}
            }
            clock.advance(advance);
            for _ in 0..100 {
                assert_eq!(token.current().expose(), want, "{step}");
            }
            assert_eq!(file.file.failures(), failures, "{step}");
        }
        // A 401: the next request reads the file, even a same-size edit with the old time.
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, "THREE").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(token.current().expose(), "three", "not expired");
        token.expire(None);
        assert_eq!(token.current().expose(), "THREE", "expired");
    }

    /// After a 401 the file is read again only if the refused token is the one read last
    /// (client-go's `ResetTokenOlderThan`), at most once per `TOKEN_FILE_REREAD_GAP` (by an
    /// injected clock) however many requests are refused, and a file that cannot be read is
    /// not read (nor its failure logged) again for each of them.
    #[test]
    fn reread_after_a_401_is_bounded() {
        use std::sync::atomic::Ordering;
        let (_dir, path, clock, token) = clocked_token_file();
        let BearerToken::File(file) = &token else {
            unreachable!()
        };
        // A request sends the token of the load; it is refused.
        let sent = token.current_read();
        assert_eq!(sent.token().expose(), "one");
        std::fs::write(&path, "two").unwrap();
        token.expire(Some(&sent));
        assert_eq!(token.current().expose(), "two", "the first read is at once");
        // A 401 for a request sent before that read: the file is not read for it.
        std::fs::write(&path, "three").unwrap();
        token.expire(Some(&sent));
        assert!(
            !file.check.reread.load(Ordering::Acquire),
            "read after the refused request"
        );
        assert_eq!(token.current().expose(), "two");
        // Every request refused within the gap: no read.
        for _ in 0..100 {
            let sent = token.current_read();
            token.expire(Some(&sent));
        }
        assert_eq!(token.current().expose(), "two", "one read per gap");
        clock.advance(TOKEN_FILE_REREAD_GAP);
        assert_eq!(token.current().expose(), "three", "the gap is over");
        // The file goes away: one failed read, then one look at the metadata per gap, which
        // does not read it (every FULL_CHECK_EVERY looks the reloader reads it and logs again).
        std::fs::remove_file(&path).unwrap();
        let refused = 200;
        for _ in 0..refused {
            let sent = token.current_read();
            token.expire(Some(&sent));
            clock.advance(TOKEN_FILE_REREAD_GAP);
        }
        assert_eq!(token.current().expose(), "three");
        let reminders = u64::from(refused / crate::reload::FULL_CHECK_EVERY);
        assert!(
            (1..=1 + reminders).contains(&file.file.failures()),
            "{} failed reads for {refused} refused requests",
            file.file.failures()
        );
        // It comes back: taken at the next look.
        std::fs::write(&path, "four").unwrap();
        let sent = token.current_read();
        token.expire(Some(&sent));
        clock.advance(TOKEN_FILE_REREAD_GAP);
        assert_eq!(token.current().expose(), "four");
        assert!(!file.check.failing.load(Ordering::Acquire));
    }

    /// A 401 asks for a read exactly when the refused token is the file's current value: one
    /// read since that found the same token again leaves it current (a 401 for it sent before
    /// that read still asks), one that found a new token does not.
    #[test]
    fn a_401_asks_for_a_read_when_the_refused_token_is_current() {
        use std::sync::atomic::Ordering;
        let (_dir, path, clock, token) = clocked_token_file();
        let BearerToken::File(file) = &token else {
            unreachable!()
        };
        let asked = || file.check.reread.load(Ordering::Acquire);
        let before = token.current_read();
        let refused = token.current_read();
        token.expire(Some(&refused));
        assert!(asked());
        assert_eq!(token.current().expose(), "one", "read: the same token");
        assert!(!asked());
        token.expire(Some(&before));
        assert!(asked(), "sent before that read, still the current token");
        clock.advance(TOKEN_FILE_REREAD_GAP);
        std::fs::write(&path, "two").unwrap();
        let two = token.current_read();
        assert_eq!(two.token().expose(), "two");
        token.expire(Some(&before));
        assert!(!asked(), "a new token read since");
        token.expire(Some(&two));
        assert!(asked(), "the new token refused");
    }

    /// A token file that went away and came back with the same content is good again (the
    /// reloader reports `Unchanged`): a read after the next 401 reads it, not only its
    /// metadata, so a same-size edit with the old time is taken.
    #[test]
    fn a_file_back_with_its_old_content_is_read_after_a_401() {
        use std::sync::atomic::Ordering;
        let (_dir, path, clock, token) = clocked_token_file();
        let BearerToken::File(file) = &token else {
            unreachable!()
        };
        std::fs::remove_file(&path).unwrap();
        clock.advance(TOKEN_FILE_CHECK_EVERY);
        assert_eq!(token.current().expose(), "one");
        assert!(file.check.failing.load(Ordering::Acquire), "missing");
        clock.advance(TOKEN_FILE_CHECK_EVERY);
        assert_eq!(token.current().expose(), "one");
        assert!(file.check.failing.load(Ordering::Acquire), "still missing");
        std::fs::write(&path, "one").unwrap();
        clock.advance(TOKEN_FILE_CHECK_EVERY);
        assert_eq!(token.current().expose(), "one");
        assert!(!file.check.failing.load(Ordering::Acquire), "back");
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, "ONE").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let sent = token.current_read();
        token.expire(Some(&sent));
        assert_eq!(token.current().expose(), "ONE", "a full read after the 401");
    }

    /// System root bundles are read with the crate's bound: `SSL_CERT_FILE` first, else the
    /// first file that exists; a larger one is an error, not read whole.
    #[test]
    fn system_roots_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.pem");
        let large = dir.path().join("large.pem");
        let missing = dir.path().join("missing.pem");
        std::fs::write(&small, "small").unwrap();
        std::fs::write(&large, vec![b'x'; MAX_FILE_BYTES as usize + 1]).unwrap();
        let too_large = format!("{} is larger than {MAX_FILE_BYTES} bytes", large.display());
        // (case, SSL_CERT_FILE, files, bytes or error)
        type Case<'a> = (
            &'a str,
            Option<&'a Path>,
            Vec<&'a Path>,
            Result<&'a str, String>,
        );
        let cases: [Case<'_>; 6] = [
            (
                "an empty SSL_CERT_FILE is unset (Go's root_unix.go)",
                Some(Path::new("")),
                vec![&missing, &small],
                Ok("small"),
            ),
            (
                "the first that exists",
                None,
                vec![&missing, &small, &large],
                Ok("small"),
            ),
            (
                "a large bundle",
                None,
                vec![&missing, &large, &small],
                Err(too_large.clone()),
            ),
            (
                "SSL_CERT_FILE first",
                Some(&small),
                vec![&large],
                Ok("small"),
            ),
            (
                "a large SSL_CERT_FILE",
                Some(&large),
                vec![&small],
                Err(too_large),
            ),
            (
                "none",
                None,
                vec![&missing],
                Err("no certificate-authority configured and no system CA bundle found".into()),
            ),
        ];
        for (name, env, files, want) in cases {
            let got = system_roots_from(env.map(Path::as_os_str), &files);
            match (got, want) {
                (Ok(bytes), Ok(text)) => assert_eq!(bytes, text.as_bytes(), "{name}"),
                (Err(e), Err(text)) => assert_eq!(e.to_string(), text, "{name}"),
                (got, _) => panic!("{name}: {got:?}"),
            }
        }
    }

    /// A kubeconfig `proxy-url` the url crate takes but `http::Uri` refuses is refused when
    /// the client is built (reqwest would connect directly), its password masked; one both
    /// take is used.
    #[test]
    fn proxy_urls_reqwest_would_skip_are_refused() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "http://u:s3cr3t@pro\"xy:3128",
                Some("proxy-url http://u:***@pro\"xy:3128: not a valid HTTP URI"),
            ),
            // Go's url.Parse refuses a brace in a host: refused before that.
            (
                "http://proxy{x:3128",
                Some("proxy-url http://proxy{x:3128: could not parse"),
            ),
            ("http://u:s3cr3t@proxy:3128", None),
        ];
        for (proxy, want) in cases {
            let got = ConnectionInfo::new("https://x")
                .with_proxy(*proxy)
                .client(Duration::from_secs(1));
            match (got, want) {
                (Ok(_), None) => {}
                (Err(e), Some(want)) => {
                    let e = e.to_string();
                    assert!(e.starts_with(want), "{proxy}: {e}");
                    assert!(!e.contains("s3cr3t"), "{proxy}: {e}");
                }
                (got, _) => panic!("{proxy}: {:?}", got.map(drop)),
            }
        }
    }

    #[test]
    fn tls_config_errors() {
        let both = ConnectionInfo::new("https://x")
            .with_ca(Pem::Data(b"x".to_vec()))
            .with_insecure_skip_tls_verify(true);
        assert_eq!(
            both.tls_config().unwrap_err().to_string(),
            "specifying a root certificates file with the insecure flag is not allowed"
        );
        let mut half = ConnectionInfo::new("https://x").with_insecure_skip_tls_verify(true);
        half.client_certificate = Some(Pem::Data(b"x".to_vec()));
        assert!(
            half.tls_config()
                .unwrap_err()
                .to_string()
                .contains("specified together")
        );
        let garbage_ca = ConnectionInfo::new("https://x").with_ca(Pem::Data(b"not pem".to_vec()));
        assert!(garbage_ca.tls_config().is_err());
        assert!(
            ConnectionInfo::new("https://x")
                .with_proxy("::not a url::")
                .client(Duration::from_secs(1))
                .is_err()
        );
    }
}
