//! A small credential vault (kopf's `Vault` and login handlers).
//!
//! Credentials come from [`CredentialProvider`]s — a fixed list, a kubeconfig, the in-cluster
//! service account, or an application's own sync ([`SyncProvider`]) or async
//! ([`AsyncProvider`]) function. The vault hands out the first usable one:
//!
//! * expired credentials ([`ConnectionInfo::expiration`]) are dropped;
//! * a credential the remote answered 401 for is [`invalidate`](Vault::invalidate)d: its
//!   *fingerprint* (server, current token, basic credentials, client certificate) goes on a
//!   bounded known-bad list, and the next credential is used;
//! * when none is left, the providers are asked again (one login at a time; concurrent callers
//!   wait for it), and credentials already known to be bad are not accepted back — so a provider
//!   that keeps returning the same rejected token ends in an error, never a loop;
//! * except from a [fixed](CredentialProvider::is_fixed) provider (a kubeconfig loaded once, the
//!   in-cluster configuration), which has nothing else to give: when only its known-bad
//!   credentials are left, [`credential`](Vault::credential) takes them back for the next
//!   request, so one 401 (a proxy in front of a restarting backend) fails that request only, as
//!   in Kubernetes. [`next_credential`](Vault::next_credential), used within the request that
//!   got the 401, never does.
//!
//! A token file is looked at again at most once per
//! [`TOKEN_FILE_CHECK_EVERY`](super::TOKEN_FILE_CHECK_EVERY) (client-go's cached file token
//! source), and read by the next request after a 401 for the token read last (client-go resets
//! its cache then too; here at most once per
//! [`TOKEN_FILE_REREAD_GAP`](super::TOKEN_FILE_REREAD_GAP)): the vault looks at it so too before
//! it takes in a credential it is handed (from a provider or [`add`](Vault::add)), since a
//! credential known to be bad is never sent, so a rotated projected token gets a new
//! fingerprint and becomes usable again without restarting anything, even one rotated after
//! the read that followed the 401 (at the next periodic look). A 401
//! marks the token that request sent as bad, not one another request read since.
//!
//! ```
//! use kube_authn::outbound::{ConnectionInfo, Secret, vault::{Vault, SyncProvider}};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let vault = Vault::new(vec![Box::new(SyncProvider::new(|| {
//!     Ok(vec![
//!         ConnectionInfo::new("https://authn.example").with_token(Secret::new("first")),
//!         ConnectionInfo::new("https://authn.example").with_token(Secret::new("second")),
//!     ])
//! }))]);
//! let a = vault.credential().await.unwrap();
//! vault.invalidate(&a); // say the server answered 401
//! let b = vault.credential().await.unwrap();
//! assert_ne!(a.fingerprint(), b.fingerprint());
//! vault.invalidate(&b);
//! // The provider only knows the two bad tokens: an error, not a loop.
//! assert!(vault.credential().await.is_err());
//! # });
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::ConnectionInfo;
use crate::error::{ConfigError, Error, ErrorKind};

/// How many known-bad fingerprints are remembered (the oldest is forgotten first).
///
/// ```
/// assert_eq!(kube_authn::outbound::vault::MAX_KNOWN_BAD, 1024);
/// ```
pub const MAX_KNOWN_BAD: usize = 1024;
/// How many credentials the vault holds at most (adding one more drops the oldest).
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, Secret, vault::{MAX_CREDENTIALS, Vault}};
/// assert_eq!(MAX_CREDENTIALS, 64);
/// let vault = Vault::new(vec![]);
/// for i in 0..=MAX_CREDENTIALS {
///     let info = ConnectionInfo::new("https://x").with_token(Secret::new(format!("t{i}")));
///     assert!(vault.add(info).unwrap());
/// }
/// assert_eq!(vault.len(), MAX_CREDENTIALS);
/// ```
pub const MAX_CREDENTIALS: usize = 64;

/// A usable credential: connection info plus the HTTP client built for it.
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, vault::Credential};
/// let c = Credential::new(ConnectionInfo::new("https://x"), std::time::Duration::from_secs(5)).unwrap();
/// assert_eq!(c.info().server, "https://x");
/// ```
///
/// The vault hands each caller its own `Credential` (sharing the connection info and the
/// client): it remembers the bearer token its last request was sent with, and
/// [`Vault::invalidate`] marks *that* token bad, not one read from the token file since by
/// another request.
#[derive(Debug)]
pub struct Credential {
    info: Arc<ConnectionInfo>,
    /// Rebuilt when client certificate files rotate (see [`client`](Self::client)).
    client: Arc<super::RotatingClient>,
    targets: Arc<Targets>,
    /// What the last request built through this handle was sent with.
    sent: Mutex<Sent>,
}

/// The bearer token a request carries, and the client certificate pair its client had
/// loaded then (its [`pair_digest`](super::client_cert::pair_digest), for files).
#[derive(Clone, Default)]
struct Sent {
    token: Option<super::SentToken>,
    cert: Option<[u8; 32]>,
}

/// The token as its own `Debug` shows it; of the certificate digest (of the key too), only
/// whether there is one.
impl fmt::Debug for Sent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sent")
            .field("token", &self.token)
            .field("cert", &self.cert.is_some())
            .finish()
    }
}

#[derive(Debug)]
struct Targets {
    /// Where [`post`](Credential::post) sends requests.
    target: super::RestTarget,
    /// The server URL as client-go's REST client bases its request paths on it (its path
    /// cleaned, no query, no fragment): see [`get`](Credential::get).
    base: super::RestTarget,
}

/// A clone shares the connection info and the client, and remembers the same sent token.
impl Clone for Credential {
    fn clone(&self) -> Self {
        Self {
            info: self.info.clone(),
            client: self.client.clone(),
            targets: self.targets.clone(),
            sent: Mutex::new(self.sent.lock().unwrap_or_else(|p| p.into_inner()).clone()),
        }
    }
}

impl Credential {
    /// Builds the client for `info` (per-request `timeout`).
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, vault::Credential};
    /// assert!(Credential::new(ConnectionInfo::new("https://x"), std::time::Duration::from_secs(1)).is_ok());
    /// ```
    ///
    /// A server URL Go's `net/url` cannot parse is refused with its text, and one without a
    /// scheme and a host too (client-go would fall back to plain `http://`):
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, vault::Credential};
    /// let e = Credential::new(ConnectionInfo::new("https://x/%zz"), std::time::Duration::from_secs(1)).unwrap_err();
    /// assert_eq!(e.to_string(), r#"parse "http://https://x/%zz": invalid URL escape "%zz""#);
    /// ```
    pub fn new(info: ConnectionInfo, timeout: Duration) -> Result<Self, ConfigError> {
        Self::with_client(info, timeout, |info| {
            super::RotatingClient::new(info, timeout)
        })
    }

    /// [`new`](Self::new), the client built by `client`.
    pub(crate) fn with_client(
        info: ConnectionInfo,
        timeout: Duration,
        client: impl FnOnce(Arc<ConnectionInfo>) -> Result<super::RotatingClient, ConfigError>,
    ) -> Result<Self, ConfigError> {
        let target = super::rest_target(&info.server, timeout).map_err(ConfigError::new)?;
        // No timeout: no query at all.
        let base = super::rest_target(&info.server, Duration::ZERO).map_err(ConfigError::new)?;
        let info = Arc::new(info);
        let client = Arc::new(client(info.clone())?);
        Ok(Self {
            info,
            client,
            targets: Arc::new(Targets { target, base }),
            sent: Mutex::new(Sent::default()),
        })
    }

    /// A handle for one request: the same connection and client, nothing sent yet.
    fn handle(&self) -> Self {
        Self {
            info: self.info.clone(),
            client: self.client.clone(),
            targets: self.targets.clone(),
            sent: Mutex::new(Sent::default()),
        }
    }

    /// The connection info.
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, vault::Credential};
    /// # let c = Credential::new(ConnectionInfo::new("https://x"), std::time::Duration::from_secs(1)).unwrap();
    /// assert_eq!(c.info().server, "https://x");
    /// ```
    pub fn info(&self) -> &ConnectionInfo {
        &self.info
    }

    /// The HTTP client for a request now. With client certificate *files* or a CA *file*, a
    /// rotation (certificate files are checked at most once a second, a CA file at most once per
    /// 5 minutes, as client-go checks it) gives a new client, so that no request goes out
    /// on a connection made with the previous pair or roots: the previous client and its pooled
    /// connections are dropped when the requests using them finish (client-go closes its
    /// connections on rotation). A due check reads the CA file, or looks at the certificate
    /// files, on Tokio's blocking pool: the requests after that use what it read.
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, vault::Credential};
    /// # let c = Credential::new(ConnectionInfo::new("https://x"), std::time::Duration::from_secs(1)).unwrap();
    /// let client: reqwest::Client = c.client();
    /// ```
    pub fn client(&self) -> reqwest::Client {
        self.client.get()
    }

    /// A POST to the server as client-go's REST client sends one (a webhook's), with this
    /// credential's `Authorization` header: to the server URL with its path cleaned (Go's
    /// `path.Join`: no trailing slash, `//`, `.` or `..`), its query and fragment dropped, and
    /// `?timeout=` the request timeout in Go's notation (`30s`).
    ///
    /// With a `tls-server-name` that is a DNS name other than the URL's host, the request is
    /// made so that the name is sent as SNI (and verified) while the connection goes to the
    /// URL's host and `Host` names the URL's host, as with client-go; such connections speak
    /// HTTP/1.1. Not through a proxy (`proxy-url`, or `HTTPS_PROXY` for the server): there the
    /// name is only verified, and SNI is the URL's host.
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, Secret, vault::Credential};
    /// # let c = Credential::new(ConnectionInfo::new("https://x/review/?key=v").with_token(Secret::new("t")), std::time::Duration::from_secs(30)).unwrap();
    /// let req = c.post().build().unwrap();
    /// assert!(req.headers().contains_key("authorization"));
    /// assert_eq!(req.url().as_str(), "https://x/review?timeout=30s");
    /// ```
    pub fn post(&self) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::POST, &self.targets.target.wire)
    }

    /// A GET of `path` (absolute, clean: `/api/v1/nodes/x`) on the server, as client-go's REST
    /// client sends one (`Request.URL`): the path joined to the server URL's cleaned path, the
    /// server URL's query and fragment dropped; with this credential's `Authorization` header,
    /// and rerouted for a `tls-server-name` as [`post`](Self::post) is.
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, vault::Credential};
    /// # let t = std::time::Duration::from_secs(30);
    /// for (server, want) in [
    ///     ("https://h/?k=v", "https://h/api/v1/nodes/n"),
    ///     ("https://h?k=v#f", "https://h/api/v1/nodes/n"),
    ///     ("https://h/p/", "https://h/p/api/v1/nodes/n"),
    /// ] {
    ///     let c = Credential::new(ConnectionInfo::new(server), t).unwrap();
    ///     assert_eq!(c.get("/api/v1/nodes/n").build().unwrap().url().as_str(), want);
    /// }
    /// ```
    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        let base = self.targets.base.wire.trim_end_matches('/');
        self.request(reqwest::Method::GET, &format!("{base}{path}"))
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let client = self.client();
        let request = match (reqwest::Url::parse(url), self.client.route()) {
            (Ok(url), Some(route)) => match route.reroute(&url) {
                Some((rerouted, host)) => client
                    .request(method, rerouted)
                    .header(http::header::HOST, host),
                None => client.request(method, url),
            },
            (Ok(url), None) => client.request(method, url),
            // reqwest refuses the URL: its error, at `send`.
            (Err(_), _) => client.request(method, url),
        };
        let (request, token) = self.info.authorize_sent(request);
        let cert = self.client.cert_digest();
        if token.is_some() || cert.is_some() {
            let mut sent = self.sent.lock().unwrap_or_else(|p| p.into_inner());
            if token.is_some() {
                sent.token = token;
            }
            sent.cert = cert;
        }
        request
    }

    /// The URL [`post`](Self::post) sends to as Go's errors show it (`Post "<url>": …`): the
    /// password written `***`, and a user name without a password (sent as Basic credentials)
    /// too.
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, vault::Credential};
    /// let c = Credential::new(ConnectionInfo::new("https://u:pw@x/a/"), std::time::Duration::from_secs(30)).unwrap();
    /// assert_eq!(c.shown_url(), "https://u:***@x/a?timeout=30s");
    /// ```
    pub fn shown_url(&self) -> &str {
        &self.targets.target.shown
    }

    /// The fingerprint of the current credential values ([`ConnectionInfo::fingerprint`]), a
    /// client certificate from files counted by the pair this credential's client loaded (no
    /// file is read here).
    ///
    /// ```
    /// # use kube_authn::outbound::{ConnectionInfo, vault::Credential};
    /// # let c = Credential::new(ConnectionInfo::new("https://x"), std::time::Duration::from_secs(1)).unwrap();
    /// assert_eq!(c.fingerprint().len(), 32);
    /// ```
    pub fn fingerprint(&self) -> [u8; 32] {
        let token = self.info.token.as_ref().map(super::BearerToken::last_read);
        self.info
            .fingerprint_with(token.as_ref(), self.client.cert_digest())
    }

    /// The fingerprint of the credential the last request through this handle was sent with
    /// (its bearer token, not one read since; the client certificate pair its client had then),
    /// and that token; the current values when nothing was sent.
    fn sent_fingerprint(&self) -> ([u8; 32], Option<super::SentToken>) {
        let sent = self.sent.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let cert = sent.cert.or_else(|| self.client.cert_digest());
        let fp = match &sent.token {
            Some(token) => self.info.fingerprint_with(Some(token.token()), cert),
            None => {
                let token = self.info.token.as_ref().map(super::BearerToken::last_read);
                self.info.fingerprint_with(token.as_ref(), cert)
            }
        };
        (fp, sent.token)
    }
}

/// The future a provider returns: the credentials it knows now, or why it has none.
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, vault::ProviderFuture};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let server = String::from("https://authn.example");
/// let login: ProviderFuture<'_> = Box::pin(async { Ok(vec![ConnectionInfo::new(server.as_str())]) });
/// assert_eq!(login.await.unwrap().len(), 1);
/// # });
/// ```
pub type ProviderFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<ConnectionInfo>, ConfigError>> + Send + 'a>>;

/// A source of credentials (kopf's login handler).
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, vault::{CredentialProvider, ProviderFuture}};
/// struct Fixed;
/// impl CredentialProvider for Fixed {
///     fn login(&self) -> ProviderFuture<'_> {
///         Box::pin(async { Ok(vec![ConnectionInfo::new("https://x")]) })
///     }
/// }
/// ```
pub trait CredentialProvider: Send + Sync {
    /// Returns the credentials this provider knows now. The [`Vault`] calls it when it has
    /// no usable credential left (one login at a time).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use kube_authn::outbound::{ConnectionInfo, Secret, vault::{CredentialProvider, ProviderFuture, Vault}};
    ///
    /// /// Issues a new token on every login, as an exec plugin would.
    /// struct Rotating(AtomicUsize);
    /// impl CredentialProvider for Rotating {
    ///     fn login(&self) -> ProviderFuture<'_> {
    ///         let n = self.0.fetch_add(1, Ordering::Relaxed);
    ///         let token = Secret::new(format!("token-{n}"));
    ///         Box::pin(async move { Ok(vec![ConnectionInfo::new("https://authn.example").with_token(token)]) })
    ///     }
    /// }
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let provider = Rotating(AtomicUsize::new(0));
    /// assert_eq!(provider.login().await.unwrap().len(), 1);
    /// let vault = Vault::new(vec![Box::new(provider)]);
    /// let first = vault.credential().await.unwrap();
    /// vault.invalidate(&first); // a 401: the vault logs in again and gets a new token
    /// let second = vault.credential().await.unwrap();
    /// assert_ne!(first.fingerprint(), second.fingerprint());
    /// # });
    /// ```
    fn login(&self) -> ProviderFuture<'_>;

    /// Whether [`login`](Self::login) always returns the same credentials (a kubeconfig loaded
    /// once). Such a credential cannot be replaced by asking again, so after a 401 the
    /// [`Vault`] uses it again from the next request on ([`Vault::credential`]) instead of
    /// failing every later request; within the request that got the 401 it is not sent twice
    /// ([`Vault::next_credential`]). Default `false`: a provider that can rotate (an exec-like
    /// function) must yield a new credential before the vault has one again.
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::{CredentialProvider, StaticProvider, SyncProvider}};
    /// assert!(StaticProvider(vec![ConnectionInfo::new("https://x")]).is_fixed());
    /// assert!(!SyncProvider::new(|| Ok(vec![])).is_fixed());
    /// ```
    fn is_fixed(&self) -> bool {
        false
    }
}

/// A provider from a synchronous function. It runs on the task that needs a credential, before
/// the vault's login timeout can apply, so it must not block (read a file, compute); a provider
/// that waits on the network is an [`AsyncProvider`].
///
/// ```
/// use kube_authn::outbound::vault::SyncProvider;
/// let _ = SyncProvider::new(|| Ok(vec![]));
/// ```
pub struct SyncProvider<F>(F);

impl<F> SyncProvider<F>
where
    F: Fn() -> Result<Vec<ConnectionInfo>, ConfigError> + Send + Sync,
{
    /// Wraps `f`.
    ///
    /// ```
    /// let _ = kube_authn::outbound::vault::SyncProvider::new(|| Ok(vec![]));
    /// ```
    pub fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F> CredentialProvider for SyncProvider<F>
where
    F: Fn() -> Result<Vec<ConnectionInfo>, ConfigError> + Send + Sync,
{
    fn login(&self) -> ProviderFuture<'_> {
        let r = (self.0)();
        Box::pin(async move { r })
    }
}

/// A provider from an `async` function.
///
/// ```
/// use kube_authn::outbound::vault::AsyncProvider;
/// let _ = AsyncProvider::new(|| async { Ok(vec![]) });
/// ```
pub struct AsyncProvider<F>(F);

impl<F, Fut> AsyncProvider<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<ConnectionInfo>, ConfigError>> + Send + 'static,
{
    /// Wraps `f`.
    ///
    /// ```
    /// let _ = kube_authn::outbound::vault::AsyncProvider::new(|| async { Ok(vec![]) });
    /// ```
    pub fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F, Fut> CredentialProvider for AsyncProvider<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<ConnectionInfo>, ConfigError>> + Send + 'static,
{
    fn login(&self) -> ProviderFuture<'_> {
        Box::pin((self.0)())
    }
}

/// A provider that always returns the same connection info (a kubeconfig loaded once, the
/// in-cluster configuration).
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, vault::StaticProvider};
/// let _ = StaticProvider(vec![ConnectionInfo::new("https://x")]);
/// ```
#[derive(Clone, Debug)]
pub struct StaticProvider(pub Vec<ConnectionInfo>);

impl CredentialProvider for StaticProvider {
    fn login(&self) -> ProviderFuture<'_> {
        let list = self.0.clone();
        Box::pin(async move { Ok(list) })
    }

    fn is_fixed(&self) -> bool {
        true
    }
}

#[derive(Default)]
struct State {
    items: Vec<Arc<Credential>>,
    bad: VecDeque<[u8; 32]>,
}

/// Hands out the first usable credential from its providers, drops expired ones, and skips
/// credentials the remote refused; the rules are in the [module docs](self).
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, Secret, vault::Vault};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let info = ConnectionInfo::new("https://authn.example").with_token(Secret::new("t"));
/// let vault = Vault::from_info(info);
/// assert!(vault.is_empty()); // nothing until the first login
/// let cred = vault.credential().await.unwrap();
/// assert_eq!(vault.len(), 1);
/// // A fixed provider's only credential: after a 401 it is not retried within that request ...
/// vault.invalidate(&cred);
/// assert!(vault.next_credential(&cred).await.is_err());
/// // ... but the next request may use it again (as Kubernetes' clients do).
/// assert_eq!(vault.credential().await.unwrap().fingerprint(), cred.fingerprint());
/// # });
/// ```
pub struct Vault {
    providers: Vec<Box<dyn CredentialProvider>>,
    state: Mutex<State>,
    /// One login at a time; holds the outcome of the last one that found nothing usable, and
    /// whether that login could take fixed credentials back.
    login: tokio::sync::Mutex<Option<(bool, String)>>,
    /// Logins finished so far: a caller that waited for someone else's login shares its
    /// failure instead of running (and waiting for) another one.
    logins: std::sync::atomic::AtomicU64,
    request_timeout: Duration,
    login_timeout: Duration,
    now: Box<dyn Fn() -> SystemTime + Send + Sync>,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.state.lock().map_or(0, |s| s.items.len());
        f.debug_struct("Vault")
            .field("providers", &self.providers.len())
            .field("credentials", &n)
            .finish_non_exhaustive()
    }
}

impl Vault {
    /// A vault asking `providers` (in order) when it runs out of credentials. Clients get a
    /// 30 s per-request timeout.
    ///
    /// ```
    /// let v = kube_authn::outbound::vault::Vault::new(vec![]);
    /// # let _ = v;
    /// ```
    pub fn new(providers: Vec<Box<dyn CredentialProvider>>) -> Self {
        Self {
            providers,
            state: Mutex::new(State::default()),
            login: tokio::sync::Mutex::new(None),
            logins: std::sync::atomic::AtomicU64::new(0),
            request_timeout: Duration::from_secs(30),
            login_timeout: Duration::from_secs(30),
            now: Box::new(SystemTime::now),
        }
    }

    /// A vault with one fixed credential source.
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// let _ = Vault::from_info(ConnectionInfo::new("https://x"));
    /// ```
    pub fn from_info(info: ConnectionInfo) -> Self {
        Self::new(vec![Box::new(StaticProvider(vec![info]))])
    }

    /// Per-request timeout of the clients built for credentials.
    ///
    /// ```
    /// let _ = kube_authn::outbound::vault::Vault::new(vec![]).with_request_timeout(std::time::Duration::from_secs(5));
    /// ```
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Wall clock used for expiry (tests).
    ///
    /// ```
    /// let _ = kube_authn::outbound::vault::Vault::new(vec![]).with_wall_clock(std::time::SystemTime::now);
    /// ```
    pub fn with_wall_clock(mut self, now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.now = Box::new(now);
        self
    }

    /// Adds a credential directly (it is rejected if already known to be bad or expired).
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// let v = Vault::new(vec![]);
    /// assert!(v.add(ConnectionInfo::new("https://x")).is_ok());
    /// ```
    ///
    /// A token file the server refused the token of is read again first (at most once per
    /// [`TOKEN_FILE_REREAD_GAP`](super::TOKEN_FILE_REREAD_GAP)), so a clone of a credential
    /// whose file now holds a new token is taken as the new token, not refused as the old one:
    ///
    /// ```
    /// use kube_authn::outbound::{BearerToken, ConnectionInfo, vault::Vault};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap(); let path = dir.path().join("token");
    /// std::fs::write(&path, "old").unwrap();
    /// let info = ConnectionInfo::new("https://x").with_bearer(BearerToken::from_file(&path).unwrap());
    /// let v = Vault::new(vec![]);
    /// v.add(info.clone()).unwrap();
    /// let c = v.credential().await.unwrap();
    /// v.invalidate(&c); // a 401
    /// assert!(v.credential().await.is_err());
    /// std::fs::write(&path, "rotated").unwrap();
    /// v.add(info).unwrap(); // the file is read: the new token
    /// let c = v.credential().await.unwrap();
    /// assert_eq!(c.info().token.as_ref().unwrap().current().expose(), "rotated");
    /// # });
    /// ```
    pub fn add(&self, info: ConnectionInfo) -> Result<bool, ConfigError> {
        self.add_info(info, true).map(|(added, _)| added)
    }

    /// [`add`](Self::add), and the credential's fingerprint (none when it is expired); a token
    /// file is looked at first as the request that sends it would (a refused one read again,
    /// else the periodic look when due) when `look`. The files (a token file, a CA file, client
    /// certificate files) are read with no lock held, by building the credential's client, and
    /// nowhere else: a client certificate pair from files is fingerprinted by what that client
    /// loaded, never by another read (one that could also see another pair).
    fn add_info(
        &self,
        info: ConnectionInfo,
        look: bool,
    ) -> Result<(bool, Option<[u8; 32]>), ConfigError> {
        if info.is_expired((self.now)()) {
            return Ok((false, None));
        }
        // A credential whose token is known to be bad is never picked, so never sent, so its
        // token file is looked at here or nowhere: a file still holding the refused token at
        // the one read after the 401, rotated later, is taken at its next periodic look.
        if look && let Some(token) = &info.token {
            token.look_if_due();
        }
        let known = |st: &State, fp: &[u8; 32]| {
            st.bad.contains(fp) || st.items.iter().any(|c| c.fingerprint() == *fp)
        };
        // With no client certificate files its fingerprint needs no client: a known credential
        // is not built again.
        if !info.client_cert_from_files() {
            let fp = info.fingerprint();
            if known(&self.state.lock().unwrap_or_else(|p| p.into_inner()), &fp) {
                return Ok((false, Some(fp)));
            }
        }
        let cred = Credential::new(info, self.request_timeout)?;
        let fp = cred.fingerprint();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // Another caller may have added or refused the same credential meanwhile.
        if known(&st, &fp) {
            return Ok((false, Some(fp)));
        }
        if st.items.len() >= MAX_CREDENTIALS {
            st.items.remove(0);
        }
        st.items.push(Arc::new(cred));
        Ok((true, Some(fp)))
    }

    fn pick(&self) -> Option<Arc<Credential>> {
        let now = (self.now)();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.items.retain(|c| !c.info.is_expired(now));
        let State { items, bad } = &*st;
        items
            .iter()
            .find(|c| !bad.contains(&c.fingerprint()))
            .map(|c| Arc::new(c.handle()))
    }

    /// The first usable credential for a new request, asking the providers again when none is
    /// left. When they have nothing that is not known to be bad, the credentials of
    /// [fixed](CredentialProvider::is_fixed) providers are taken back: a kubeconfig's
    /// credential is all there is, so a 401 fails the request that got it, never every later
    /// one (as in Kubernetes).
    ///
    /// Errors ([`ErrorKind::Unavailable`]) when no provider has a credential that is not
    /// expired and, for providers that are not fixed, not known to be bad.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let v = kube_authn::outbound::vault::Vault::new(vec![]);
    /// assert!(v.credential().await.is_err());
    /// # });
    /// ```
    pub async fn credential(&self) -> Result<Arc<Credential>, Error> {
        self.acquire(true).await
    }

    /// The credential to try after the remote answered 401 for `rejected`, within the same
    /// request: `rejected` is [invalidate](Self::invalidate)d and the next usable one returned.
    /// Credentials already known to be bad are not taken back here, and `rejected` is never
    /// returned; it errors when none is left.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// let v = Vault::from_info(ConnectionInfo::new("https://x"));
    /// let c = v.credential().await.unwrap();
    /// assert!(v.next_credential(&c).await.is_err()); // nothing else for this request
    /// assert!(v.credential().await.is_ok()); // a kubeconfig's credential is used again
    /// # });
    /// ```
    pub async fn next_credential(&self, rejected: &Credential) -> Result<Arc<Credential>, Error> {
        self.invalidate(rejected);
        let next = self.acquire(false).await?;
        // A concurrent request may have taken a fixed credential back meanwhile: never the
        // values `rejected` was sent with again. The same credential with a token read from its
        // file since (by another request) was never tried: it is the next one.
        if next.fingerprint() == rejected.sent_fingerprint().0 {
            return Err(Error::from_static(
                ErrorKind::Unavailable,
                "no other credential for the remote service",
            ));
        }
        Ok(next)
    }

    async fn acquire(&self, take_back_fixed: bool) -> Result<Arc<Credential>, Error> {
        if let Some(c) = self.pick() {
            return Ok(c);
        }
        let before = self.logins.load(std::sync::atomic::Ordering::Acquire);
        let mut last_failure = self.login.lock().await;
        if let Some(c) = self.pick() {
            return Ok(c);
        }
        if self.logins.load(std::sync::atomic::Ordering::Acquire) != before {
            // A login finished while this caller waited for it and left nothing usable: its
            // answer is this caller's too (k waiters must not run k logins one after another,
            // each up to the login timeout).
            // Only a login that was allowed as much: one that did not take fixed credentials
            // back (after a 401) says nothing about a new request, which may.
            if let Some((taking_back, message)) = last_failure.as_ref()
                && (*taking_back || !take_back_fixed)
            {
                return Err(Error::new(ErrorKind::Unavailable, message.clone()));
            }
        }
        let result = self.login_once(take_back_fixed).await;
        *last_failure = result
            .as_ref()
            .err()
            .map(|e| (take_back_fixed, e.to_string()));
        self.logins
            .fetch_add(1, std::sync::atomic::Ordering::Release);
        result
    }

    /// Asks every provider once (under the login lock) and picks a credential.
    async fn login_once(&self, take_back_fixed: bool) -> Result<Arc<Credential>, Error> {
        let mut problems = Vec::new();
        let mut fixed = Vec::new();
        // The fingerprints of the fixed providers' credentials, as `add_info` computed them
        // (from what their clients loaded: no file is read again here).
        let mut fps: Vec<[u8; 32]> = Vec::new();
        for p in &self.providers {
            match tokio::time::timeout(self.login_timeout, p.login()).await {
                Ok(Ok(list)) => {
                    for info in list {
                        let take_back = take_back_fixed && p.is_fixed();
                        if take_back {
                            fixed.push(info.clone());
                        }
                        // A new request reads a refused token file again; the request that got
                        // the 401 does not: it never sends the same credential twice, and a read
                        // now could come before the file is rotated.
                        match self.add_info(info, take_back_fixed) {
                            Ok((_, Some(fp))) if take_back => fps.push(fp),
                            Ok(_) => {}
                            Err(e) => problems.push(e.to_string()),
                        }
                    }
                }
                Ok(Err(e)) => problems.push(e.to_string()),
                Err(_) => problems.push("credential provider timed out".to_owned()),
            }
        }
        if !fixed.is_empty() && self.pick().is_none() {
            // Only known-bad credentials of fixed providers are left: take them back.
            self.state
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .bad
                .retain(|fp| !fps.contains(fp));
            for info in fixed {
                // Errors were collected above already.
                let _ = self.add_info(info, false);
            }
        }
        self.pick().ok_or_else(|| {
            let detail = if problems.is_empty() {
                String::new()
            } else {
                format!(": {}", problems.join("; "))
            };
            Error::new(
                ErrorKind::Unavailable,
                format!("no valid credentials left for the remote service{detail}"),
            )
        })
    }

    /// Marks the values `cred`'s last request was sent with as bad (the remote answered 401;
    /// its current values if it sent none): they are skipped from now on, and not accepted back
    /// from a provider — except from a [fixed](CredentialProvider::is_fixed) one when nothing
    /// else is left (see [`credential`](Self::credential)). A token file is read again by the
    /// next request if the refused token is still the one read last (client-go's
    /// `ResetTokenOlderThan`), at most once per
    /// [`TOKEN_FILE_REREAD_GAP`](super::TOKEN_FILE_REREAD_GAP).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use kube_authn::outbound::{ConnectionInfo, vault::{SyncProvider, Vault}};
    /// let v = Vault::new(vec![Box::new(SyncProvider::new(|| Ok(vec![ConnectionInfo::new("https://x")])))]);
    /// let c = v.credential().await.unwrap();
    /// v.invalidate(&c);
    /// assert!(v.credential().await.is_err());
    /// # });
    /// ```
    pub fn invalidate(&self, cred: &Credential) {
        // The token the request was sent with: another request may have read a new one from
        // the token file since, which this 401 says nothing about.
        let (fp, sent) = cred.sent_fingerprint();
        // A token file is read again by the next request (client-go's `ResetTokenOlderThan`),
        // not only when its next check is due, unless it holds another token by now.
        if let Some(token) = &cred.info.token {
            token.expire(sent.as_ref());
        }
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if !st.bad.contains(&fp) {
            if st.bad.len() >= MAX_KNOWN_BAD {
                st.bad.pop_front();
            }
            st.bad.push_back(fp);
        }
    }

    /// How many credentials are held (usable or not).
    ///
    /// ```
    /// assert_eq!(kube_authn::outbound::vault::Vault::new(vec![]).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.state.lock().map_or(0, |s| s.items.len())
    }

    /// Whether no credential is held.
    ///
    /// ```
    /// assert!(kube_authn::outbound::vault::Vault::new(vec![]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbound::Secret;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn info(token: &str) -> ConnectionInfo {
        ConnectionInfo::new("https://127.0.0.1:1").with_token(Secret::new(token))
    }

    /// A credential's `Debug` shows no password from the server URL, no token and no
    /// password of Basic credentials.
    #[test]
    fn credential_debug_shows_no_secret() {
        let cases = [
            (
                "password in the server URL",
                ConnectionInfo::new("https://u:pw-SECRET@127.0.0.1:1/"),
            ),
            (
                "user-only userinfo",
                ConnectionInfo::new("https://tok-SECRET@127.0.0.1:1/"),
            ),
            ("bearer token", info("tok-SECRET")),
        ];
        for (name, info) in cases {
            let c = Credential::new(info, Duration::from_secs(1)).unwrap();
            let shown = format!("{c:?}");
            assert!(!shown.contains("SECRET"), "{name}: {shown}");
        }
    }

    #[tokio::test]
    async fn expired_dropped_bad_skipped_providers_reasked_without_looping() {
        let logins = Arc::new(AtomicUsize::new(0));
        let l = logins.clone();
        let now = Arc::new(Mutex::new(
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
        ));
        let n = now.clone();
        let vault = Vault::new(vec![Box::new(SyncProvider::new(move || {
            let round = l.fetch_add(1, Ordering::SeqCst);
            Ok(vec![
                info("a").with_expiration(SystemTime::UNIX_EPOCH + Duration::from_secs(2_000)),
                info("b"),
                info(&format!("fresh-{round}")),
            ])
        }))])
        .with_wall_clock(move || *n.lock().unwrap());

        let first = vault.credential().await.unwrap();
        assert_eq!(first.info().token.as_ref().unwrap().current().expose(), "a");
        assert_eq!(logins.load(Ordering::SeqCst), 1);
        // Expiry drops `a`.
        *now.lock().unwrap() = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000);
        let second = vault.credential().await.unwrap();
        assert_eq!(
            second.info().token.as_ref().unwrap().current().expose(),
            "b"
        );
        vault.invalidate(&second);
        let third = vault.credential().await.unwrap();
        assert_eq!(
            third.info().token.as_ref().unwrap().current().expose(),
            "fresh-0"
        );
        vault.invalidate(&third);
        // None left: providers asked again; `b` and `fresh-0` are known bad, `fresh-1` is new.
        let fourth = vault.credential().await.unwrap();
        assert_eq!(
            fourth.info().token.as_ref().unwrap().current().expose(),
            "fresh-1"
        );
        assert_eq!(logins.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_provider_returning_only_bad_credentials_ends_in_an_error() {
        let logins = Arc::new(AtomicUsize::new(0));
        let l = logins.clone();
        let vault = Vault::new(vec![Box::new(AsyncProvider::new(move || {
            l.fetch_add(1, Ordering::SeqCst);
            async { Ok(vec![info("same-S3CRET")]) }
        }))]);
        let c = vault.credential().await.unwrap();
        vault.invalidate(&c);
        for _ in 0..3 {
            let e = vault.credential().await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Unavailable);
            assert!(!e.to_string().contains("S3CRET"));
        }
        // One login per exhausted lookup, never a spin.
        assert_eq!(logins.load(Ordering::SeqCst), 4);
    }

    /// Callers that wait for someone else's login share its failure: five concurrent lookups
    /// against a slow, failing provider run one login, not five in a row.
    #[tokio::test]
    async fn waiters_share_a_failed_login() {
        let logins = Arc::new(AtomicUsize::new(0));
        let l = logins.clone();
        let vault = Arc::new(Vault::new(vec![Box::new(AsyncProvider::new(move || {
            l.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Err(ConfigError::new("identity provider is down"))
            }
        }))]));
        let started = std::time::Instant::now();
        let lookups: Vec<_> = (0..5)
            .map(|_| {
                let v = vault.clone();
                tokio::spawn(async move { v.credential().await })
            })
            .collect();
        for lookup in lookups {
            let e = lookup.await.unwrap().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Unavailable);
            assert!(e.to_string().contains("identity provider is down"), "{e}");
        }
        assert_eq!(logins.load(Ordering::SeqCst), 1);
        assert!(
            started.elapsed() < Duration::from_millis(1_200),
            "{:?}",
            started.elapsed()
        );
        // A lookup that starts afterwards asks again.
        assert!(vault.credential().await.is_err());
        assert_eq!(logins.load(Ordering::SeqCst), 2);
    }

    /// A login after a 401 (which does not take a fixed credential back) fails by design; new
    /// requests that queued behind it must not share that failure: they take the kubeconfig's
    /// credential back, so one 401 fails only the request that got it, even under load.
    #[tokio::test]
    async fn a_failure_after_a_401_is_not_shared_with_new_requests() {
        struct SlowFixed(Arc<AtomicUsize>);
        impl CredentialProvider for SlowFixed {
            fn login(&self) -> ProviderFuture<'_> {
                self.0.fetch_add(1, Ordering::SeqCst);
                Box::pin(async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    Ok(vec![info("a")])
                })
            }
            fn is_fixed(&self) -> bool {
                true
            }
        }
        let logins = Arc::new(AtomicUsize::new(0));
        let vault = Arc::new(Vault::new(vec![Box::new(SlowFixed(logins.clone()))]));
        let a = vault.credential().await.unwrap();
        let rejected = {
            let (v, a) = (vault.clone(), a.clone());
            tokio::spawn(async move { v.next_credential(&a).await })
        };
        // The new requests arrive while the post-401 login runs, and wait for it.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let fresh: Vec<_> = (0..3)
            .map(|_| {
                let v = vault.clone();
                tokio::spawn(async move { v.credential().await })
            })
            .collect();
        assert!(
            rejected.await.unwrap().is_err(),
            "nothing else for the rejected request"
        );
        for request in fresh {
            let c = request.await.unwrap().unwrap();
            assert_eq!(c.fingerprint(), a.fingerprint());
        }
        // The first login, the post-401 one, and one that took the credential back.
        assert_eq!(logins.load(Ordering::SeqCst), 3);
    }

    /// A fixed provider's (a kubeconfig's) credential is taken back for the next request
    /// after a 401; a provider that can rotate must yield a new one first.
    #[tokio::test]
    async fn fixed_provider_credentials_come_back_on_the_next_request() {
        type MakeProvider = fn() -> Box<dyn CredentialProvider>;
        // (name, provider with tokens a and b, taken back)
        let cases: &[(&str, MakeProvider, bool)] = &[
            (
                "static (kubeconfig)",
                || Box::new(StaticProvider(vec![info("a"), info("b")])),
                true,
            ),
            (
                "sync function",
                || Box::new(SyncProvider::new(|| Ok(vec![info("a"), info("b")]))),
                false,
            ),
            (
                "async function",
                || {
                    Box::new(AsyncProvider::new(|| async {
                        Ok(vec![info("a"), info("b")])
                    }))
                },
                false,
            ),
        ];
        let token = |c: &Credential| {
            c.info()
                .token
                .as_ref()
                .unwrap()
                .current()
                .expose()
                .to_owned()
        };
        for &(name, provider, taken_back) in cases {
            let vault = Vault::new(vec![provider()]);
            let a = vault.credential().await.unwrap();
            assert_eq!(token(&a), "a", "{name}");
            // Within one request: a, then b, then nothing (never a again).
            let b = vault.next_credential(&a).await.unwrap();
            assert_eq!(token(&b), "b", "{name}");
            assert!(vault.next_credential(&b).await.is_err(), "{name}");
            // The next request.
            match vault.credential().await {
                Ok(again) => {
                    assert!(taken_back, "{name}: taken back");
                    assert_eq!(token(&again), "a", "{name}");
                    // Once taken back, a 401 moves on within the request as before.
                    assert_eq!(token(&vault.next_credential(&again).await.unwrap()), "b");
                }
                Err(e) => {
                    assert!(!taken_back, "{name}: {e}");
                    assert!(
                        e.to_string().starts_with("no valid credentials left"),
                        "{e}"
                    );
                }
            }
        }
    }

    #[tokio::test]
    async fn rotated_token_file_is_usable_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "old").unwrap();
        let clock = Arc::new(crate::token::cache::ManualClock::new());
        let token = crate::outbound::BearerToken::from_file_with_clock(&path, clock.clone());
        let file_info = ConnectionInfo::new("https://127.0.0.1:1").with_bearer(token.unwrap());
        let vault = Vault::from_info(file_info);
        let token = |c: &Credential| {
            let t = c.info().token.as_ref().unwrap().current();
            t.expose().to_owned()
        };
        let c = vault.credential().await.unwrap();
        // Not sent twice in the request that got the 401; sent again with the next one.
        assert!(vault.next_credential(&c).await.is_err());
        assert_eq!(token(&vault.credential().await.unwrap()), "old");
        vault.invalidate(&c);
        std::fs::write(&path, "new-token-longer").unwrap();
        // Read again at most once per gap: the read a moment ago found the old token.
        assert_eq!(token(&vault.credential().await.unwrap()), "old");
        clock.advance(crate::outbound::TOKEN_FILE_REREAD_GAP);
        assert_eq!(
            token(&vault.credential().await.unwrap()),
            "new-token-longer"
        );
    }

    /// A client certificate from files is known by the pair's content, not by its paths: after
    /// a 401 the same pair is refused, the pair rotated on disk is taken back (a provider that
    /// is not fixed, here `add`).
    #[tokio::test]
    async fn a_client_certificate_rotated_on_disk_is_usable_again() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("c.crt"), dir.path().join("c.key"));
        let write = |cn: &str| {
            let k = rcgen::KeyPair::generate().unwrap();
            let c = rcgen::CertificateParams::new(vec![cn.to_owned()])
                .unwrap()
                .self_signed(&k)
                .unwrap();
            std::fs::write(&cert, c.pem()).unwrap();
            std::fs::write(&key, k.serialize_pem()).unwrap();
        };
        write("a");
        let info = ConnectionInfo::new("https://127.0.0.1:1")
            .with_client_cert(
                crate::outbound::Pem::File(cert.clone()),
                crate::outbound::Pem::File(key.clone()),
            )
            .with_trust_env(false);
        let vault = Vault::new(vec![]);
        assert!(vault.add(info.clone()).unwrap());
        let refused = vault.credential().await.unwrap();
        vault.invalidate(&refused);
        assert!(vault.credential().await.is_err());
        assert!(
            !vault.add(info.clone()).unwrap(),
            "the same pair: known bad"
        );
        write("b");
        assert!(vault.add(info).unwrap(), "the rotated pair");
        let c = vault.credential().await.unwrap();
        assert_ne!(c.fingerprint(), refused.fingerprint());
    }

    /// A client certificate pair from files is fingerprinted by what the credential's client
    /// loaded: the only reads of the certificate file (a FIFO counting its readers, standing for
    /// a slow mount) are those building a client does, one per credential built — one at the
    /// login that takes the fixed provider's pair in, two at the login after a 401 (the pair
    /// built and found known bad, then built and found held once its fingerprint is no longer
    /// bad). Fingerprinting by reading the files again, on the async task, read it 5 times.
    #[tokio::test]
    async fn fingerprinting_a_client_certificate_from_files_reads_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("c.crt"), dir.path().join("c.key"));
        let k = rcgen::KeyPair::generate().unwrap();
        let c = rcgen::CertificateParams::new(vec!["a".to_owned()])
            .unwrap()
            .self_signed(&k)
            .unwrap();
        std::fs::write(&key, k.serialize_pem()).unwrap();
        let writer = crate::outbound::stalled_file::serve(&cert, c.pem(), Duration::ZERO);
        let info = ConnectionInfo::new("https://127.0.0.1:1")
            .with_client_cert(
                crate::outbound::Pem::File(cert.clone()),
                crate::outbound::Pem::File(key.clone()),
            )
            .with_trust_env(false);
        let vault = Vault::from_info(info);
        let first = vault.credential().await.unwrap();
        vault.invalidate(&first);
        let again = vault.credential().await.unwrap();
        assert_eq!(again.fingerprint(), first.fingerprint(), "taken back");
        assert_eq!(writer.stop(), 3, "reads of the certificate file");
    }

    /// `add` reads a credential's files (here a CA file on a stalled mount, a FIFO whose writer
    /// comes 2 s later) with no lock held: the vault answers meanwhile.
    #[test]
    fn add_reads_files_with_no_lock_held() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = params.self_signed(&key).unwrap().pem();
        let dir = tempfile::tempdir().unwrap();
        let ca_file = dir.path().join("ca.crt");
        let writer = crate::outbound::stalled_file::serve(&ca_file, ca, Duration::from_secs(2));
        let vault = Arc::new(Vault::new(vec![]));
        let adder = {
            let vault = vault.clone();
            let info = ConnectionInfo::new("https://127.0.0.1:1")
                .with_ca(crate::outbound::Pem::File(ca_file));
            std::thread::spawn(move || vault.add(info))
        };
        std::thread::sleep(Duration::from_millis(300));
        let started = std::time::Instant::now();
        assert_eq!(vault.len(), 0);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "the vault was locked for {:?}",
            started.elapsed()
        );
        assert!(adder.join().unwrap().unwrap());
        assert_eq!(vault.len(), 1);
        assert_eq!(writer.stop(), 1);
    }

    /// R1 sends the token file's T1; R3 reads T2 from the rotated file; then R1's 401 arrives:
    /// it marks T1 bad, not T2, and asks for no read (the file was read after R1's token). The
    /// provider is not fixed, so a wrongly refused T2 would leave nothing.
    #[tokio::test]
    async fn a_401_marks_the_token_sent_not_one_read_since() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "T1").unwrap();
        let clock = Arc::new(crate::token::cache::ManualClock::new());
        let token = crate::outbound::BearerToken::from_file_with_clock(&path, clock.clone());
        let file_info = ConnectionInfo::new("https://127.0.0.1:1").with_bearer(token.unwrap());
        let sent = |req: reqwest::RequestBuilder| {
            let req = req.build().unwrap();
            req.headers()["authorization"].to_str().unwrap().to_owned()
        };
        let vault = Vault::new(vec![Box::new(SyncProvider::new(move || {
            Ok(vec![file_info.clone()])
        }))]);
        let r1 = vault.credential().await.unwrap();
        assert_eq!(sent(r1.post()), "Bearer T1");
        std::fs::write(&path, "T2-rotated").unwrap();
        clock.advance(crate::outbound::TOKEN_FILE_CHECK_EVERY);
        let r3 = vault.credential().await.unwrap();
        assert_eq!(sent(r3.post()), "Bearer T2-rotated");
        vault.invalidate(&r1);
        let r4 = vault.credential().await.unwrap();
        assert_eq!(sent(r4.get("/x")), "Bearer T2-rotated");
        // T2 refused in its turn: no other credential.
        vault.invalidate(&r4);
        let e = vault.credential().await.unwrap_err();
        assert!(
            e.to_string().starts_with("no valid credentials left"),
            "{e}"
        );
    }

    /// A vault over a provider that is not fixed, handing out a credential with the token file
    /// `path` (holding `first`), timed by the returned clock; and what a request sends.
    fn rotating_vault(
        path: &std::path::Path,
        first: &str,
    ) -> (Vault, Arc<crate::token::cache::ManualClock>) {
        std::fs::write(path, first).unwrap();
        let clock = Arc::new(crate::token::cache::ManualClock::new());
        let token = crate::outbound::BearerToken::from_file_with_clock(path, clock.clone());
        let file_info = ConnectionInfo::new("https://127.0.0.1:1").with_bearer(token.unwrap());
        let vault = Vault::new(vec![Box::new(SyncProvider::new(move || {
            Ok(vec![file_info.clone()])
        }))]);
        (vault, clock)
    }

    fn sent(req: reqwest::RequestBuilder) -> String {
        let req = req.build().unwrap();
        req.headers()["authorization"].to_str().unwrap().to_owned()
    }

    /// T1 refused; the next request's read after the 401 still finds T1 (the kubelet has not
    /// rewritten the file yet), so that credential is never picked and never sent. The file
    /// then rotates: the vault's periodic look (one stat per `TOKEN_FILE_CHECK_EVERY`) before
    /// it fingerprints the provider's credential takes T2, not a stale T1 forever.
    #[tokio::test]
    async fn a_token_file_rotated_after_the_read_for_a_401_is_taken_at_the_next_look() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let (vault, clock) = rotating_vault(&path, "T1");
        let r1 = vault.credential().await.unwrap();
        assert_eq!(sent(r1.post()), "Bearer T1");
        vault.invalidate(&r1);
        // The one read after the 401 finds T1 again.
        assert!(vault.credential().await.is_err());
        std::fs::write(&path, "T2-rotated").unwrap();
        assert!(vault.credential().await.is_err(), "not looked at yet");
        clock.advance(crate::outbound::TOKEN_FILE_CHECK_EVERY);
        let r2 = vault.credential().await.unwrap();
        assert_eq!(sent(r2.post()), "Bearer T2-rotated");
    }

    /// R1 sends T1; R2 reads T2 from the rotated file; R1 gets its 401: the same credential,
    /// now carrying T2 (never tried), is R1's next one, not "no other credential".
    #[tokio::test]
    async fn next_credential_after_a_401_may_be_the_same_one_with_a_token_read_since() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let (vault, clock) = rotating_vault(&path, "T1");
        let r1 = vault.credential().await.unwrap();
        assert_eq!(sent(r1.post()), "Bearer T1");
        std::fs::write(&path, "T2-rotated").unwrap();
        clock.advance(crate::outbound::TOKEN_FILE_CHECK_EVERY);
        let r2 = vault.credential().await.unwrap();
        assert_eq!(sent(r2.post()), "Bearer T2-rotated");
        let next = vault.next_credential(&r1).await.unwrap();
        assert_eq!(sent(next.post()), "Bearer T2-rotated");
        // T2 refused in its turn within that request: nothing else.
        assert!(vault.next_credential(&next).await.is_err());
    }
}
