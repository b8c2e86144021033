//! The TokenReview webhook token authenticator (k8s.io/apiserver
//! `plugin/pkg/authenticator/token/webhook`), with kube-apiserver's flags:
//! `--authentication-token-webhook-config-file` (a kubeconfig), `--authentication-token-webhook-version`
//! (`v1` or `v1beta1`, default `v1beta1`) and `--authentication-token-webhook-cache-ttl` (default 2m).
//!
//! Each token is POSTed as a `TokenReview` (`spec.token`, `spec.audiences`) to the kubeconfig's
//! server URL as client-go's REST client sends it (path cleaned, `?timeout=30s`, `Accept:
//! application/json, */*`; see [`Credential::post`]) — the token travels only in the body. The
//! answer's `status` decides:
//!
//! 1. if the request context carries audiences, `ctx ∩ (status.audiences or the implicit
//!    audiences)` must be non-empty, otherwise the token is **not mine** (checked before
//!    anything else, even an `error`);
//! 2. `authenticated: false` with an `error` → that error; without → not mine;
//! 3. otherwise the user (`username`, `uid`, `groups`, `extra`) with the intersected audiences.
//!
//! The answer is read as client-go's decoder reads it: its `apiVersion` and `kind`, filled in
//! from the requested type where empty, must name a `TokenReview` of the configured version;
//! any other type is an error in client-go's words (`converting (v1.TokenReview) to
//! (v1beta1.TokenReview): unknown conversion`, `no kind "Foo" is registered for version …`), a
//! `Status` in a 2xx included.
//!
//! Failures follow kube-apiserver: up to 5 attempts with backoff 500 ms × 1.5, jitter 0.2, retried
//! only on a reset connection, 429, 500, 504 and other unlisted 5xx, an error without a `Status`
//! body that carries `Retry-After` above zero (any status, as client-go's
//! `details.retryAfterSeconds`; on a 429/5xx its delay is honoured, within the deadline), or an
//! answer of any status whose `Content-Type` Go's `mime.ParseMediaType` refuses (client-go's
//! internal error `Internal error occurred: mime: …`); never on other 4xx, 503 without
//! `Retry-After`, TLS or dial errors, a connection closed without an answer, or an undecodable
//! body. A failed `Status` in an error body (`kind: Status` of any group/version) decides by
//! its own reason, code and details, as client-go's errors do, and its message is the error.
//! Redirects are not followed, the
//! response body is capped ([`DEFAULT_MAX_RESPONSE_BYTES`]), and the whole review — retries
//! included — has a deadline (30 s), so a hanging backend fails in bounded time. A 401 marks the
//! credential bad in the [`Vault`] and the next credential is tried; with none left the review
//! fails with the 401. A kubeconfig's credential is all there is, so the next review sends it
//! again (one 401 fails one review, as in Kubernetes); a rotating provider must yield a new one.
//!
//! [`WebhookTokenAuthenticator::from_flags`] returns the authenticator behind its cache exactly as
//! kube-apiserver builds it: `cache(webhook, cacheErrs=false, ttl, ttl)` — denials cached as long
//! as successes, errors never.
//!
//! ```no_run
//! use kube_authn::token::webhook::WebhookTokenAuthenticator;
//! use std::time::Duration;
//! let authn = WebhookTokenAuthenticator::from_flags(
//!     "/etc/kubernetes/webhook-authn.kubeconfig",
//!     "v1",
//!     Duration::from_secs(120),
//!     Default::default(),
//! ).unwrap();
//! # let _ = authn;
//! ```
//!
//! ## Delegated authentication: the cluster's tokens, from a pod
//!
//! An extension API server, an operator's HTTP endpoint or a sidecar reviews bearer tokens with
//! the cluster's own API server, as Go's `DelegatingAuthenticationOptions` do: the in-cluster
//! connection (the pod's service-account token and CA), `authentication.k8s.io/v1` TokenReviews
//! POSTed to `/apis/authentication.k8s.io/v1/tokenreviews` (the webhook posts to exactly the
//! server URL, so the path is appended), the whole review (retries included) bounded by 10 s
//! (Go's `TokenRequestTimeout`, a context deadline; Go's client sets no timeout of its own and
//! so sends no `?timeout=`, where this one, its attempts bounded by the same 10 s, sends
//! `?timeout=10s`), and answers cached for 10 s. Go's `apiserver_delegated_authn_request_total` and
//! `apiserver_delegated_authn_request_duration_seconds` metrics are not recorded. The pod's
//! service account needs the right to create TokenReviews: bind it to the
//! `system:auth-delegator` ClusterRole.
//!
//! ```no_run
//! use kube_authn::chain::ChainBuilder;
//! use kube_authn::outbound::ConnectionInfo;
//! use kube_authn::outbound::vault::Vault;
//! use kube_authn::token::webhook::{Version, WebhookOptions, WebhookTokenAuthenticator};
//! use std::time::Duration;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut info = ConnectionInfo::in_cluster()?;
//! info.server.push_str("/apis/authentication.k8s.io/v1/tokenreviews");
//! let mut options = WebhookOptions::default();
//! options.version = Version::V1;
//! options.request_timeout = Duration::from_secs(10);
//! options.deadline = Duration::from_secs(10);
//! let webhook = WebhookTokenAuthenticator::new(Vault::from_info(info), options)?;
//! // The delegating authenticator's cache: successes and denials for 10 s, errors never.
//! let chain = ChainBuilder::new().token(webhook.cached(Duration::from_secs(10))).build();
//! # let _ = chain;
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::api::{METAV1_KINDS as META_KINDS, UNVERSIONED_KINDS};
use crate::api::{ObjectItem, TokenReview, null_or_object};
use crate::authenticator::{
    Audiences, AuthFuture, AuthResult, Context, Response, TokenAuthenticator,
};
use crate::error::{ConfigError, Error, ErrorKind};
use crate::outbound::kubeconfig::Kubeconfig;
use crate::outbound::vault::{Credential, Vault};
use crate::outbound::{ReadError, root_cause};
use crate::token::cache::CachedTokenAuthenticator;

mod mime;

/// Default cap on a TokenReview response body (1 MiB).
///
/// ```
/// use kube_authn::token::webhook::{DEFAULT_MAX_RESPONSE_BYTES, WebhookOptions};
/// assert_eq!(DEFAULT_MAX_RESPONSE_BYTES, 1024 * 1024);
/// assert_eq!(WebhookOptions::default().max_response_bytes, DEFAULT_MAX_RESPONSE_BYTES);
/// ```
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 1 << 20;
/// Default TTL of the webhook cache (`--authentication-token-webhook-cache-ttl`).
///
/// ```
/// use std::time::Duration;
/// assert_eq!(kube_authn::token::webhook::DEFAULT_CACHE_TTL, Duration::from_secs(2 * 60));
/// ```
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(120);
/// How many distinct credentials one attempt may try after 401s.
///
/// ```
/// assert_eq!(kube_authn::token::webhook::MAX_CREDENTIAL_TRIES, 4);
/// ```
pub const MAX_CREDENTIAL_TRIES: usize = 4;

/// The TokenReview API version spoken to the webhook.
///
/// ```
/// use kube_authn::token::webhook::Version;
/// assert_eq!(Version::parse("v1").unwrap(), Version::V1);
/// assert_eq!(Version::default(), Version::V1Beta1);
/// assert_eq!(
///     Version::parse("v2").unwrap_err().to_string(),
///     r#"unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1""#
/// );
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Version {
    /// `authentication.k8s.io/v1`.
    V1,
    /// `authentication.k8s.io/v1beta1` (kube-apiserver's default).
    #[default]
    V1Beta1,
}

impl Version {
    /// Parses the flag value.
    ///
    /// ```
    /// assert!(kube_authn::token::webhook::Version::parse("v1beta1").is_ok());
    /// ```
    pub fn parse(s: &str) -> Result<Self, ConfigError> {
        match s {
            "v1" => Ok(Version::V1),
            "v1beta1" => Ok(Version::V1Beta1),
            other => Err(ConfigError::new(format!(
                "unsupported authentication webhook version {other:?}, supported versions are \"v1\", \"v1beta1\""
            ))),
        }
    }

    /// `v1` or `v1beta1`.
    ///
    /// ```
    /// assert_eq!(kube_authn::token::webhook::Version::V1.as_str(), "v1");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V1Beta1 => "v1beta1",
        }
    }
}

/// Retry backoff (k8s `wait.Backoff`; default 500 ms, ×1.5, jitter 0.2, 5 steps).
///
/// ```
/// let b = kube_authn::token::webhook::Backoff::default();
/// assert_eq!(b.steps, 5);
/// assert!(b.validate().is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// First delay.
    pub initial: Duration,
    /// Multiplier per step.
    pub factor: f64,
    /// Up to this fraction of the delay is added at random.
    pub jitter: f64,
    /// Attempts in total.
    pub steps: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            factor: 1.5,
            jitter: 0.2,
            steps: 5,
        }
    }
}

impl Backoff {
    /// Rejects zero steps (k8s' message), and a `factor` or `jitter` that is not a finite
    /// number >= 0 (k8s does not check them; Go's float-to-duration conversion does not panic,
    /// Rust's does, and such a value is a mistake either way).
    ///
    /// ```
    /// let b = kube_authn::token::webhook::Backoff { steps: 0, ..Default::default() };
    /// assert_eq!(b.validate().unwrap_err().to_string(), "number of webhook retry attempts must be greater than 0, but is: 0");
    /// let b = kube_authn::token::webhook::Backoff { factor: f64::INFINITY, ..Default::default() };
    /// assert!(b.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.steps == 0 {
            return Err(ConfigError::new(format!(
                "number of webhook retry attempts must be greater than 0, but is: {}",
                self.steps
            )));
        }
        for (what, v) in [("factor", self.factor), ("jitter", self.jitter)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ConfigError::new(format!(
                    "webhook retry backoff {what} must be a finite number >= 0, but is: {v}"
                )));
            }
        }
        Ok(())
    }
}

/// Sleeps between retries; injectable so retry tests run without waiting.
///
/// ```
/// use kube_authn::token::webhook::{Sleeper, TokioSleeper};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// TokioSleeper.sleep(std::time::Duration::from_millis(1)).await;
/// # });
/// ```
pub trait Sleeper: Send + Sync {
    /// Waits `duration`.
    ///
    /// A test sleeper that records the back-off instead of waiting:
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use kube_authn::token::webhook::Sleeper;
    ///
    /// #[derive(Default)]
    /// struct Recorder(Arc<Mutex<Vec<Duration>>>);
    /// impl Sleeper for Recorder {
    ///     fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    ///         self.0.lock().unwrap().push(d);
    ///         Box::pin(std::future::ready(()))
    ///     }
    /// }
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let r = Recorder::default();
    /// r.sleep(Duration::from_millis(500)).await;
    /// assert_eq!(*r.0.lock().unwrap(), [Duration::from_millis(500)]);
    /// # });
    /// ```
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// [`tokio::time::sleep`]: the sleeper the webhook uses unless a test injects another.
///
/// ```
/// use std::time::Duration;
/// use kube_authn::token::webhook::{Sleeper, TokioSleeper};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// tokio::time::pause(); // Tokio's test clock: the sleep completes without waiting
/// let start = tokio::time::Instant::now();
/// TokioSleeper.sleep(Duration::from_secs(30)).await;
/// assert!(start.elapsed() >= Duration::from_secs(30));
/// # });
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Webhook settings beyond the kubeconfig.
///
/// ```
/// use kube_authn::token::webhook::{Version, WebhookOptions};
/// let mut o = WebhookOptions::default();
/// o.version = Version::V1;
/// assert_eq!(o.deadline, std::time::Duration::from_secs(30));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct WebhookOptions {
    /// TokenReview API version.
    pub version: Version,
    /// Implicit audiences (`--api-audiences`), used when the response names none.
    pub implicit_audiences: Audiences,
    /// Retry backoff.
    pub backoff: Backoff,
    /// Timeout of one HTTP attempt (client-go `rest.Config.Timeout`, 30 s).
    pub request_timeout: Duration,
    /// Deadline of a whole review, retries included (30 s).
    pub deadline: Duration,
    /// Cap on the response body.
    pub max_response_bytes: usize,
    /// Sleeper used between retries.
    pub sleeper: Arc<dyn Sleeper>,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        Self {
            version: Version::default(),
            implicit_audiences: Audiences::default(),
            backoff: Backoff::default(),
            request_timeout: Duration::from_secs(30),
            deadline: Duration::from_secs(30),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            sleeper: Arc::new(TokioSleeper),
        }
    }
}

impl fmt::Debug for WebhookOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookOptions")
            .field("version", &self.version)
            .field("implicit_audiences", &self.implicit_audiences)
            .field("backoff", &self.backoff)
            .field("request_timeout", &self.request_timeout)
            .field("deadline", &self.deadline)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish_non_exhaustive()
    }
}

/// Asks a remote service whether a token is valid by POSTing a `TokenReview` to it, and
/// believes its answer (uncached; see [`from_flags`](Self::from_flags) or
/// [`cached`](Self::cached) for kube-apiserver's wiring). Retries, bounds and outcomes are in
/// the [module docs](self).
///
/// Against a stand-in webhook (a raw HTTP/1.1 responder on 127.0.0.1, since no real
/// TokenReview service runs in a doctest):
///
/// ```
/// use kube_authn::authenticator::{Context, TokenAuthenticator};
/// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
/// use kube_authn::token::webhook::WebhookTokenAuthenticator;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let url = format!("http://{}/review", listener.local_addr().unwrap());
/// tokio::spawn(async move {
///     loop {
///         let (mut conn, _) = listener.accept().await.unwrap();
///         // Read the whole request: the head, then `content-length` bytes of body.
///         let mut req = Vec::new();
///         let mut chunk = [0u8; 4096];
///         let body = loop {
///             let n = conn.read(&mut chunk).await.unwrap();
///             req.extend_from_slice(&chunk[..n]);
///             let text = String::from_utf8_lossy(&req).into_owned();
///             if let Some(end) = text.find("\r\n\r\n") {
///                 let len: usize = text[..end].lines()
///                     .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
///                     .unwrap_or(0);
///                 if n == 0 || text.len() >= end + 4 + len {
///                     break text[end + 4..].to_owned();
///                 }
///             }
///         };
///         let status = if body.contains(r#""token":"s3cret""#) {
///             r#"{"authenticated":true,"user":{"username":"jane","uid":"42","groups":["dev"]}}"#
///         } else if body.contains(r#""token":"old-token""#) {
///             r#"{"authenticated":false,"error":"token old-token was revoked"}"#
///         } else {
///             r#"{"authenticated":false}"#
///         };
///         let answer = format!(r#"{{"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview","status":{status}}}"#);
///         let response = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}", answer.len());
///         conn.write_all(response.as_bytes()).await.unwrap();
///     }
/// });
///
/// let webhook = WebhookTokenAuthenticator::new(Vault::from_info(ConnectionInfo::new(url)), Default::default()).unwrap();
/// let ctx = Context::default();
/// let jane = webhook.authenticate_token("s3cret", &ctx).await.unwrap().unwrap().user;
/// assert_eq!((jane.name(), jane.uid()), ("jane", "42"));
/// assert_eq!(jane.groups().collect::<Vec<_>>(), ["dev"]);
/// assert!(webhook.authenticate_token("unknown", &ctx).await.unwrap().is_none());
/// // The webhook's error, with the token it quoted redacted.
/// let err = webhook.authenticate_token("old-token", &ctx).await.unwrap_err();
/// assert_eq!(err.to_string(), "token <redacted> was revoked");
/// # });
/// ```
pub struct WebhookTokenAuthenticator {
    vault: Arc<Vault>,
    opts: WebhookOptions,
}

impl fmt::Debug for WebhookTokenAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookTokenAuthenticator")
            .field("vault", &self.vault)
            .field("opts", &self.opts)
            .finish()
    }
}

/// Outcome of one failed HTTP attempt.
struct AttemptError {
    error: Error,
    retry: bool,
    retry_after: Option<Duration>,
}

impl AttemptError {
    fn fatal(error: Error) -> Self {
        Self {
            error,
            retry: false,
            retry_after: None,
        }
    }
}

impl WebhookTokenAuthenticator {
    /// A webhook authenticator using the credentials of `vault`.
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// use kube_authn::token::webhook::WebhookTokenAuthenticator;
    /// let w = WebhookTokenAuthenticator::new(Vault::from_info(ConnectionInfo::new("https://127.0.0.1:1/")), Default::default()).unwrap();
    /// # let _ = w;
    /// ```
    pub fn new(vault: Vault, opts: WebhookOptions) -> Result<Self, ConfigError> {
        opts.backoff.validate()?;
        Ok(Self {
            vault: Arc::new(vault.with_request_timeout(opts.request_timeout)),
            opts,
        })
    }

    /// A webhook authenticator configured by the kubeconfig at `path` (read once). Its files
    /// rotate as client-go's do: the client certificate and key at most a second after they
    /// change, a `certificate-authority` file checked every 5 minutes, a `tokenFile` looked at
    /// every 50 s and after a 401 (see `docs/compatibility.md`, *Outbound connections*).
    ///
    /// ```
    /// use kube_authn::token::webhook::WebhookTokenAuthenticator;
    /// assert!(WebhookTokenAuthenticator::from_kubeconfig("/nonexistent", Default::default()).is_err());
    /// ```
    pub fn from_kubeconfig(
        path: impl AsRef<Path>,
        opts: WebhookOptions,
    ) -> Result<Self, ConfigError> {
        let info = Kubeconfig::load(path)?;
        // Build the client once now so TLS material errors surface at startup.
        Credential::new(info.clone(), opts.request_timeout)?;
        Self::new(Vault::from_info(info), opts)
    }

    /// kube-apiserver's wiring of the three flags: the kubeconfig authenticator behind
    /// `cache(webhook, cacheErrs=false, ttl, ttl)`, itself behind the 10 s success cache
    /// kube-apiserver puts over its whole token union (`--token-success-cache-ttl`-like, not a
    /// flag): so a success is kept for `ttl` or 10 s, whichever is longer (`0s` included), a
    /// denial for `ttl`, an error never. A `ttl` between 0 and 10 s is warned about, with
    /// kube-apiserver's text. `opts.version` is replaced by `version`, checked once the
    /// kubeconfig has loaded, as kube-apiserver checks it.
    ///
    /// ```
    /// use kube_authn::token::webhook::WebhookTokenAuthenticator;
    /// let ttl = std::time::Duration::from_secs(120);
    /// let e = WebhookTokenAuthenticator::from_flags("/x", "v3", ttl, Default::default());
    /// assert_eq!(e.unwrap_err().to_string(), "stat /x: no such file or directory");
    /// let dir = tempfile::tempdir().unwrap();
    /// let kubeconfig = dir.path().join("kubeconfig");
    /// std::fs::write(&kubeconfig, "clusters:\n- name: b\n  cluster:\n    server: https://127.0.0.1:1/\n").unwrap();
    /// let e = WebhookTokenAuthenticator::from_flags(&kubeconfig, "v3", ttl, Default::default());
    /// assert!(e.unwrap_err().to_string().contains("unsupported authentication webhook version"));
    /// ```
    pub fn from_flags(
        config_file: impl AsRef<Path>,
        version: &str,
        cache_ttl: Duration,
        opts: WebhookOptions,
    ) -> Result<CachedTokenAuthenticator<Self>, ConfigError> {
        // The kubeconfig is loaded first (`LoadKubeconfig`), then `webhook.New` checks the
        // version: a missing file is reported before a bad version.
        let version = Version::parse(version);
        let mut webhook = Self::from_kubeconfig(config_file, opts)?;
        webhook.opts.version = version?;
        if !cache_ttl.is_zero() && cache_ttl < OUTER_SUCCESS_TTL {
            tracing::warn!(
                "the webhook cache ttl of {} is shorter than the overall cache ttl of {} for successful token authentication attempts.",
                crate::go_url::rest::go_duration(cache_ttl),
                crate::go_url::rest::go_duration(OUTER_SUCCESS_TTL)
            );
        }
        Ok(CachedTokenAuthenticator::new(
            webhook,
            false,
            cache_ttl.max(OUTER_SUCCESS_TTL),
            cache_ttl,
        ))
    }

    /// This authenticator behind kube-apiserver's webhook cache (errors never cached, successes
    /// and denials for `ttl`).
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// use kube_authn::token::webhook::WebhookTokenAuthenticator;
    /// let w = WebhookTokenAuthenticator::new(Vault::from_info(ConnectionInfo::new("https://127.0.0.1:1/")), Default::default()).unwrap();
    /// let cached = w.cached(std::time::Duration::from_secs(120));
    /// # let _ = cached;
    /// ```
    pub fn cached(self, ttl: Duration) -> CachedTokenAuthenticator<Self> {
        CachedTokenAuthenticator::new(self, false, ttl, ttl)
    }

    /// Reviews `token` (the body of [`TokenAuthenticator::authenticate_token`]).
    async fn review(&self, token: &str, ctx: &Context) -> AuthResult {
        let want = ctx.audiences();
        let review = TokenReview::request(
            self.opts.version.as_str(),
            token,
            want.map(|a| a.iter().map(str::to_owned).collect())
                .unwrap_or_default(),
        );
        let body = serde_json::to_vec(&review)
            .map_err(|_| Error::from_static(ErrorKind::Internal, "cannot encode TokenReview"))?;
        drop(review);
        let status = match tokio::time::timeout(self.opts.deadline, self.call(body, token)).await {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => {
                tracing::warn!("Failed to make webhook authenticator request: {e}");
                return Err(e);
            }
            Err(_) => {
                let e = Error::from_static(
                    ErrorKind::Unavailable,
                    "webhook authenticator request deadline exceeded",
                );
                tracing::warn!("Failed to make webhook authenticator request: {e}");
                return Err(e);
            }
        };

        let mut auds = Audiences::default();
        if let Some(want) = want {
            let got = if status.audiences.is_empty() {
                self.opts.implicit_audiences.clone()
            } else {
                Audiences::new(&status.audiences)
            };
            auds = want.intersect(&got);
            if auds.is_empty() {
                return Ok(None);
            }
        }
        if !status.authenticated {
            if status.error.is_empty() {
                return Ok(None);
            }
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                printable(shown_text(&status.error, token, false)),
            ));
        }
        Ok(Some(
            Response::new(Arc::new(status.user.to_identity())).with_audiences(auds),
        ))
    }

    /// All attempts, with backoff.
    async fn call(
        &self,
        body: Vec<u8>,
        token: &str,
    ) -> Result<crate::api::TokenReviewStatus, Error> {
        let b = self.opts.backoff;
        let mut delay = b.initial;
        let mut last: Option<Error> = None;
        for attempt in 0..b.steps {
            match self.attempt(&body, token).await {
                Ok(status) => return Ok(status),
                Err(e) => {
                    let retry_after = e.retry_after;
                    last = Some(e.error);
                    if !e.retry || attempt + 1 == b.steps {
                        break;
                    }
                    let mut wait = jittered(delay, b.jitter);
                    if let Some(ra) = retry_after {
                        if ra >= self.opts.deadline {
                            break;
                        }
                        wait = wait.max(ra);
                    }
                    self.opts.sleeper.sleep(wait).await;
                    delay = grow(delay, b.factor);
                }
            }
        }
        Err(last
            .unwrap_or_else(|| Error::from_static(ErrorKind::Internal, "webhook: no attempt made")))
    }

    /// One attempt; a 401 switches to the next credential (bounded).
    async fn attempt(
        &self,
        body: &[u8],
        token: &str,
    ) -> Result<crate::api::TokenReviewStatus, AttemptError> {
        let mut cred = self.vault.credential().await.map_err(AttemptError::fatal)?;
        for tries in 1.. {
            let sent = cred
                .post()
                .header(http::header::CONTENT_TYPE, "application/json")
                // client-go's REST client: the content type, then anything.
                .header(http::header::ACCEPT, "application/json, */*")
                .body(body.to_vec())
                .send()
                .await;
            let resp = match sent {
                Ok(r) => r,
                Err(e) => return Err(transport_error(&cred, &e)),
            };
            let code = resp.status();
            let retry_after = resp
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|v| retry_after_seconds(v.as_bytes()));
            // Go's `Header.Get`: the first value, as bytes; an empty one counts as none.
            let content_type = resp
                .headers()
                .get(http::header::CONTENT_TYPE)
                .map(|v| v.as_bytes().to_owned())
                .filter(|v| !v.is_empty());
            let bytes = read_capped(resp, self.opts.max_response_bytes).await?;
            // client-go's `transformResponse`: once the body is read, a `Content-Type` Go's
            // `mime.ParseMediaType` refuses is an internal error whatever the status (a 401
            // too), and `DefaultShouldRetry` retries internal errors.
            if let Some(Err(e)) = content_type.as_deref().map(mime::parse_media_type) {
                let c = code.as_u16();
                return Err(AttemptError {
                    error: Error::new(
                        ErrorKind::Unavailable,
                        format!("Internal error occurred: {e}"),
                    ),
                    retry: true,
                    retry_after: retry_after
                        .filter(|_| c == 429 || c >= 500)
                        .and_then(retry_delay),
                });
            }
            if code == reqwest::StatusCode::UNAUTHORIZED {
                // Judged as any other status once no other credential is left: a `Status`
                // body saying InternalError or TooManyRequests is retried, as
                // `DefaultShouldRetry` looks only at the decoded error.
                let err = response_error(code, content_type.as_deref(), retry_after, &bytes, token);
                if tries >= MAX_CREDENTIAL_TRIES {
                    self.vault.invalidate(&cred);
                    return Err(err);
                }
                match self.vault.next_credential(&cred).await {
                    Ok(next) => {
                        cred = next;
                        continue;
                    }
                    Err(_) => return Err(err),
                }
            }
            // client-go's `transformResponse`: a status outside 200..=206 is an error.
            if !(200..=206).contains(&code.as_u16()) {
                return Err(response_error(
                    code,
                    content_type.as_deref(),
                    retry_after,
                    &bytes,
                    token,
                ));
            }
            if bytes.is_empty() {
                // client-go names the content type it asked for when the header is missing
                // or empty.
                return Err(AttemptError::fatal(Error::new(
                    ErrorKind::Unavailable,
                    format!(
                        "0-length response with status code: {} and content type: {}",
                        code.as_u16(),
                        content_type
                            .as_deref()
                            .map_or("application/json".into(), String::from_utf8_lossy)
                    ),
                )));
            }
            return decode_answer(&bytes, self.opts.version, token).map_err(AttemptError::fatal);
        }
        unreachable!("the credential loop returns")
    }
}

/// kube-apiserver's success cache over its whole token union (`TokenSuccessCacheTTL`, 10 s;
/// failures are not kept there), which webhook answers also pass through.
const OUTER_SUCCESS_TTL: Duration = Duration::from_secs(10);

/// Parses a TokenReview response body (exposed for fuzzing).
///
/// ```
/// let s = kube_authn::token::webhook::parse_response(br#"{"status":{"authenticated":true,"user":{"username":"a"}}}"#).unwrap();
/// assert_eq!(s.user.username, "a");
/// assert!(kube_authn::token::webhook::parse_response(b"<html>").is_err());
/// ```
pub fn parse_response(bytes: &[u8]) -> Result<crate::api::TokenReviewStatus, Error> {
    // encoding/json reads a lone surrogate escape as U+FFFD, where serde_json refuses it.
    let bytes = &*crate::jwt::json::go_lone_surrogates(bytes);
    // Only a JSON object is a TokenReview: serde also accepts a struct's sequence form
    // (`[]`), which must be an error, not an empty review (Go: "couldn't get version/kind").
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let decoded =
        serde_json::from_slice::<TokenReview>(bytes).map_err(|e| crate::error::json_category(&e));
    // The `metadata` fields `api::ObjectMeta` does not keep, checked as Go decodes them.
    let meta = || {
        serde_json::from_slice::<MetaCheck>(bytes)
            .map_err(|e| crate::error::json_category(&e))
            .and_then(|m| m.metadata.check())
    };
    let decoded = decoded.and_then(|review| {
        if object {
            meta().map(|()| review)
        } else {
            Err("unexpected JSON shape")
        }
    });
    match decoded {
        // metav1.Time's decoding: `time.Parse(time.RFC3339, …)` must accept it.
        Ok(review)
            if review
                .metadata
                .creation_timestamp
                .as_deref()
                .is_some_and(|t| crate::x509::der::go_parse_rfc3339(t).is_none()) =>
        {
            Err("metadata.creationTimestamp is not an RFC 3339 time")
        }
        Ok(review) => Ok(review.status),
        Err(category) => Err(category),
    }
    .map_err(|category| {
        Error::new(
            ErrorKind::Unavailable,
            format!("webhook: cannot decode TokenReview response: {category}"),
        )
    })
}

/// The `metadata` of an answer, for the `metav1.ObjectMeta` fields [`TokenReview`] does not
/// keep.
#[derive(serde::Deserialize)]
struct MetaCheck {
    #[serde(default, deserialize_with = "null_or_object")]
    metadata: ExtraMeta,
}

/// `metadata.selfLink`, `uid`, `deletionTimestamp`, `deletionGracePeriodSeconds` and
/// `managedFields`, decoded for their types (each struct an object or `null`, as Go decodes
/// it: serde's array form of a struct is refused).
#[derive(Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExtraMeta {
    #[serde(default, deserialize_with = "null_as_default")]
    #[allow(dead_code)]
    self_link: String,
    #[serde(default, deserialize_with = "null_as_default")]
    #[allow(dead_code)]
    uid: String,
    #[serde(default)]
    deletion_timestamp: Option<String>,
    #[serde(default, deserialize_with = "crate::api::go_opt_int64")]
    #[allow(dead_code)]
    deletion_grace_period_seconds: Option<i64>,
    #[serde(default, deserialize_with = "null_as_default")]
    managed_fields: Vec<ObjectItem<ManagedFieldsEntry>>,
}

/// `metav1.ManagedFieldsEntry` (`fieldsV1` takes any JSON value).
#[derive(Default, serde::Deserialize)]
#[allow(dead_code)]
struct ManagedFieldsEntry {
    #[serde(default, deserialize_with = "null_as_default")]
    manager: String,
    #[serde(default, deserialize_with = "null_as_default")]
    operation: String,
    #[serde(default, rename = "apiVersion", deserialize_with = "null_as_default")]
    api_version: String,
    #[serde(default)]
    time: Option<String>,
    #[serde(default, rename = "fieldsType", deserialize_with = "null_as_default")]
    fields_type: String,
    #[serde(default, deserialize_with = "null_as_default")]
    subresource: String,
}

impl ExtraMeta {
    /// metav1.Time's decoding: `time.Parse(time.RFC3339, …)` must accept each time.
    fn check(&self) -> Result<(), &'static str> {
        let bad = |t: &Option<String>| {
            t.as_deref()
                .is_some_and(|t| crate::x509::der::go_parse_rfc3339(t).is_none())
        };
        if bad(&self.deletion_timestamp) {
            return Err("metadata.deletionTimestamp is not an RFC 3339 time");
        }
        if self.managed_fields.iter().any(|e| bad(&e.0.time)) {
            return Err("metadata.managedFields.time is not an RFC 3339 time");
        }
        Ok(())
    }
}

fn jittered(d: Duration, jitter: f64) -> Duration {
    // No jitter unless jitter > 0 (k8s); NaN included.
    if jitter.is_nan() || jitter <= 0.0 {
        return d;
    }
    let mut b = [0u8; 4];
    let r = if getrandom::fill(&mut b).is_ok() {
        f64::from(u32::from_le_bytes(b)) / f64::from(u32::MAX)
    } else {
        0.5
    };
    d.saturating_add(scale(d, jitter * r))
}

/// The next delay (k8s `wait.Backoff.Step`): `d × factor` in whole nanoseconds (Go converts
/// the product to a `time.Duration` by truncation), so a factor below 1 shrinks it; a factor
/// of 0 (or NaN) leaves it unchanged.
fn grow(d: Duration, factor: f64) -> Duration {
    if factor.is_nan() || factor == 0.0 {
        return d;
    }
    let nanos = d.as_nanos() as f64 * factor;
    if nanos <= 0.0 {
        return Duration::ZERO;
    }
    if nanos >= u64::MAX as f64 {
        return scale(d, factor);
    }
    Duration::from_nanos(nanos as u64)
}

/// `d × f` without `Duration::mul_f64`'s panics: saturates at [`Duration::MAX`]; a NaN,
/// negative or zero product is zero.
fn scale(d: Duration, f: f64) -> Duration {
    let secs = d.as_secs_f64() * f;
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

async fn read_capped(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, AttemptError> {
    crate::outbound::read_capped(resp, max)
        .await
        .map_err(|e| match e {
            ReadError::TooLarge => AttemptError::fatal(Error::new(
                ErrorKind::Unavailable,
                format!("webhook response body is larger than {max} bytes"),
            )),
            ReadError::Transport(e) => AttemptError {
                error: Error::new(
                    ErrorKind::Unavailable,
                    format!("webhook: reading response: {}", root_cause(&e)),
                ),
                retry: !e.is_timeout() && is_connection_lost(&e),
                retry_after: None,
            },
        })
}

/// Classifies a transport error as k8s.io/apiserver's `DefaultShouldRetry` (and, below it,
/// Go's HTTP/2 transport) does: a connection reset is retried wherever it happens, during the
/// TLS handshake too (`IsConnectionReset` finds the wrapped `ECONNRESET`), and so is a stream
/// the server refused or never processed (see [`is_connection_lost`]); a refused connection,
/// TLS failures, timeouts, and answers that are not HTTP are final.
fn transport_error(cred: &Credential, e: &reqwest::Error) -> AttemptError {
    // The URL as client-go sent it, a password shown as `***` (Go's net/http does the same).
    let error = Error::new(
        ErrorKind::Unavailable,
        format!(
            "Post {}: {}",
            crate::jwt::go_quote(cred.shown_url()),
            root_cause(e)
        ),
    );
    let retry = !(e.is_timeout() || e.is_builder() || e.is_redirect() || is_tls_error(e))
        && is_connection_lost(e);
    AttemptError {
        error,
        retry,
        retry_after: None,
    }
}

/// Whether `e`'s chain says the request may be sent again: a reset (`ECONNRESET`, what Go's
/// `IsConnectionReset` looks for); hyper's "operation was canceled" (the request was never
/// written to the connection it was given); or an HTTP/2 stream the server refused
/// (`RST_STREAM` with `REFUSED_STREAM`) or left unprocessed (above a graceful `GOAWAY`'s last
/// stream), which Go's HTTP/2 transport sends again on a new connection by itself. A
/// connection the server closed without answering is not one: Go sees `EOF` (HTTP/2:
/// `unexpected EOF`) and does not retry it.
fn is_connection_lost(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionReset {
                return true;
            }
            // `io::Error::source` skips the error it wraps: look at it directly.
            if let Some(inner) = io.get_ref()
                && is_connection_lost(inner)
            {
                return true;
            }
        }
        if let Some(h) = err.downcast_ref::<hyper::Error>()
            && h.is_canceled()
        {
            return true;
        }
        if let Some(h) = err.downcast_ref::<h2::Error>() {
            let refused = h.is_reset() && h.reason() == Some(h2::Reason::REFUSED_STREAM);
            let unprocessed = h.is_go_away() && h.reason() == Some(h2::Reason::NO_ERROR);
            if h.is_remote() && (refused || unprocessed) {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// Whether a TLS error is in `e`'s chain: a failed handshake, or an alert from the server (a
/// refused client certificate: under TLS 1.3 the client has finished its handshake by then, so
/// the alert arrives on the first read and reqwest does not call it a connect error). Go's
/// `DefaultShouldRetry` retries none of them (`remote error: tls: …`).
fn is_tls_error(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.downcast_ref::<rustls::Error>().is_some() {
            return true;
        }
        // `io::Error::source` skips the error it wraps: look at it directly.
        if let Some(inner) = err
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            && inner.downcast_ref::<rustls::Error>().is_some()
        {
            return true;
        }
        cur = err.source();
    }
    false
}

/// `null` decodes as the zero value, as Go's encoding/json does for a non-pointer field.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Default,
{
    use serde::Deserialize as _;
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A `metav1.Status` as client-go's decoder reads it (field names case-sensitive, `null` the
/// zero value, each struct an object or `null`); the fields only checked for their type are not
/// kept. `kind` and `apiVersion` were read by [`interpret`].
#[derive(serde::Deserialize)]
struct GoStatus {
    #[serde(default, deserialize_with = "null_as_default")]
    #[allow(dead_code)]
    kind: String,
    #[serde(default, rename = "apiVersion", deserialize_with = "null_as_default")]
    #[allow(dead_code)]
    api_version: String,
    #[serde(default, deserialize_with = "null_or_object")]
    #[allow(dead_code)]
    metadata: GoListMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    status: String,
    #[serde(default, deserialize_with = "null_as_default")]
    message: String,
    #[serde(default, deserialize_with = "null_as_default")]
    reason: String,
    #[serde(default, deserialize_with = "crate::api::go_int")]
    code: i32,
    /// A pointer in Go: `null` is none, `{}` an empty one.
    #[serde(default)]
    details: Option<ObjectItem<GoStatusDetails>>,
}

/// `metav1.ListMeta`, for its types.
#[derive(Default, serde::Deserialize)]
#[allow(dead_code)]
struct GoListMeta {
    #[serde(default, rename = "selfLink", deserialize_with = "null_as_default")]
    self_link: String,
    #[serde(
        default,
        rename = "resourceVersion",
        deserialize_with = "null_as_default"
    )]
    resource_version: String,
    #[serde(default, rename = "continue", deserialize_with = "null_as_default")]
    continue_: String,
    #[serde(
        default,
        rename = "remainingItemCount",
        deserialize_with = "crate::api::go_opt_int64"
    )]
    remaining_item_count: Option<i64>,
}

/// `metav1.StatusDetails`.
#[derive(Default, serde::Deserialize)]
#[allow(dead_code)]
struct GoStatusDetails {
    #[serde(default, deserialize_with = "null_as_default")]
    name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    group: String,
    #[serde(default, deserialize_with = "null_as_default")]
    kind: String,
    #[serde(default, deserialize_with = "null_as_default")]
    uid: String,
    #[serde(default, deserialize_with = "null_as_default")]
    causes: Vec<ObjectItem<GoStatusCause>>,
    #[serde(
        default,
        rename = "retryAfterSeconds",
        deserialize_with = "crate::api::go_int"
    )]
    retry_after_seconds: i32,
}

/// `metav1.StatusCause`.
#[derive(Default, serde::Deserialize)]
#[allow(dead_code)]
struct GoStatusCause {
    #[serde(default, deserialize_with = "null_as_default")]
    reason: String,
    #[serde(default, deserialize_with = "null_as_default")]
    message: String,
    #[serde(default, deserialize_with = "null_as_default")]
    field: String,
}

/// The `Status` in an error body, as client-go's `Result.Error` finds it: `meta.Interpret`
/// reads `kind: Status` (matched as encoding/json matches names) and an `apiVersion` that
/// parses as a group/version (empty: `v1`; a group needs a version), `Status` being an
/// unversioned kind of client-go's scheme, so any group/version carries it; then the body
/// decodes as a `metav1.Status`. Lone surrogate escapes are U+FFFD.
fn decode_status(body: &[u8]) -> Option<GoStatus> {
    let body = crate::jwt::json::go_lone_surrogates(body);
    let (api_version, kind) = interpret(&body).ok()?;
    let (group, version) = parse_group_version(&api_version)?;
    if kind != "Status" || (version.is_empty() && !group.is_empty()) {
        return None;
    }
    serde_json::from_slice::<GoStatus>(&body).ok()
}

/// The scheme name client-go's decoder prints in its "no kind is registered" errors.
const SCHEME_NAME: &str = "pkg/runtime/scheme.go:111";

/// The Go type (`package.Kind`) client-go's scheme registers for `kind` in `group/version`,
/// for the review groups' versions (`authentication.k8s.io`, `authorization.k8s.io`; printed
/// from client-go v0.37.2's `scheme.Scheme`); `None` for anything else.
fn registered_type(group: &str, version: &str, kind: &str) -> Option<String> {
    const AUTHN: &[(&str, &[&str])] = &[
        ("v1", &["TokenReview", "TokenRequest", "SelfSubjectReview"]),
        ("v1beta1", &["TokenReview", "SelfSubjectReview"]),
        ("v1alpha1", &["SelfSubjectReview"]),
    ];
    const AUTHZ_KINDS: &[&str] = &[
        "SubjectAccessReview",
        "SelfSubjectAccessReview",
        "LocalSubjectAccessReview",
        "SelfSubjectRulesReview",
    ];
    const AUTHZ: &[(&str, &[&str])] = &[("v1", AUTHZ_KINDS), ("v1beta1", AUTHZ_KINDS)];
    let versions = match group {
        crate::api::AUTHENTICATION_GROUP => AUTHN,
        "authorization.k8s.io" => AUTHZ,
        _ => return None,
    };
    if version == "__internal" {
        return (kind == "WatchEvent").then(|| "v1.InternalEvent".to_owned());
    }
    let (_, kinds) = versions.iter().find(|(v, _)| *v == version)?;
    if kinds.contains(&kind) {
        Some(format!("{version}.{kind}"))
    } else if META_KINDS.contains(&kind) {
        Some(format!("v1.{kind}"))
    } else {
        None
    }
}

/// Why [`interpret`] refused a body.
enum InterpretError {
    /// Not JSON (serde_json's category of the error).
    Json(&'static str),
    /// Go's text.
    Go(String),
}

/// `meta.Interpret`: the body's `apiVersion` and `kind` as encoding/json reads them into a
/// struct of two strings: member names matched as it matches field names (any ASCII case,
/// `ſ` for `s`, the Kelvin sign for `k`), the last match winning, `null` left as `""`; a value
/// of another type, or a body that is neither an object nor `null`, refused with its text.
fn interpret(body: &[u8]) -> Result<(String, String), InterpretError> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

    /// One `apiVersion` or `kind` value.
    enum Value {
        Str(String),
        Null,
        /// The JSON type Go names in its error.
        Other(&'static str),
    }
    /// The whole body.
    enum Top {
        Object {
            api_version: String,
            kind: String,
            error: Option<String>,
        },
        Other(&'static str),
    }
    struct ValueVisitor;
    impl<'de> Visitor<'de> for ValueVisitor {
        type Value = Value;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Value, E> {
            Ok(Value::Other("bool"))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
            Ok(Value::Other("number"))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
            Ok(Value::Other("number"))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
            Ok(Value::Other("number"))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::Str(v.to_owned()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::Str(v))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Value::Other("array"))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Value::Other("object"))
        }
    }
    impl<'de> serde::Deserialize<'de> for Value {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(ValueVisitor)
        }
    }
    struct TopVisitor;
    impl<'de> Visitor<'de> for TopVisitor {
        type Value = Top;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_unit<E>(self) -> Result<Top, E> {
            Ok(Top::Object {
                api_version: String::new(),
                kind: String::new(),
                error: None,
            })
        }
        fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
            Ok(Top::Other("bool"))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
            Ok(Top::Other("number"))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
            Ok(Top::Other("number"))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
            Ok(Top::Other("number"))
        }
        fn visit_str<E>(self, _: &str) -> Result<Top, E> {
            Ok(Top::Other("string"))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Top::Other("array"))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
            let (mut api_version, mut kind, mut error) = (String::new(), String::new(), None);
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                let (field, name) = if crate::jwt::json::go_field_name_eq(&key, "apiVersion") {
                    (&mut api_version, "apiVersion")
                } else if crate::jwt::json::go_field_name_eq(&key, "kind") {
                    (&mut kind, "kind")
                } else {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                };
                match map.next_value::<Value>()? {
                    Value::Str(s) => *field = s,
                    Value::Null => {}
                    Value::Other(t) => {
                        error.get_or_insert(format!(
                            "couldn't get version/kind; json parse error: json: cannot unmarshal {t} into Go struct field .{name} of type string"
                        ));
                    }
                }
            }
            Ok(Top::Object {
                api_version,
                kind,
                error,
            })
        }
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let top = de
        .deserialize_any(TopVisitor)
        .and_then(|top| de.end().map(|()| top))
        .map_err(|e| InterpretError::Json(crate::error::json_category(&e)))?;
    match top {
        Top::Object { error: Some(e), .. } => Err(InterpretError::Go(e)),
        Top::Object {
            api_version, kind, ..
        } => Ok((api_version, kind)),
        Top::Other(t) => Err(InterpretError::Go(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {t} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
        ))),
    }
}

/// `schema.ParseGroupVersion`: `""` and `"/"` are the empty group and version, `v` the core
/// group's version, `g/v` a group's; more than one `/` is refused (`None`; Go's text is
/// `unexpected GroupVersion string: <gv>`).
fn parse_group_version(gv: &str) -> Option<(&str, &str)> {
    match gv.matches('/').count() {
        _ if gv.is_empty() || gv == "/" => Some(("", "")),
        0 => Some(("", gv)),
        1 => gv.split_once('/'),
        _ => None,
    }
}

/// A 2xx answer's body as the webhook's client-go decoder reads it into the configured
/// TokenReview version: `meta.Interpret` ([`interpret`]), the kind and group/version filled in
/// from the requested type where they are empty (`gvkWithDefaults`), then the scheme: the
/// configured TokenReview is decoded ([`parse_response`]); any other type is an error, with
/// client-go's text (a registered one cannot be converted, anything else is not registered).
/// Lone surrogate escapes are U+FFFD, as encoding/json reads them. The answer's `kind` and
/// `apiVersion` in a text are backend text ([`shown_text`]: without `token`, at most 2 KiB
/// each), quoted as Go quotes them or else [`printable`].
fn decode_answer(
    bytes: &[u8],
    version: Version,
    token: &str,
) -> Result<crate::api::TokenReviewStatus, Error> {
    let fail = |text: String| Error::new(ErrorKind::Unavailable, text);
    let shown = |text: &str| shown_text(text, token, false);
    let bytes = crate::jwt::json::go_lone_surrogates(bytes);
    let (api_version, kind) = interpret(&bytes).map_err(|e| match e {
        InterpretError::Json(category) => fail(format!(
            "webhook: cannot decode TokenReview response: {category}"
        )),
        InterpretError::Go(text) => fail(text),
    })?;
    let (group, ver) = parse_group_version(&api_version).ok_or_else(|| {
        fail(printable(format!(
            "unexpected GroupVersion string: {}",
            shown(&api_version)
        )))
    })?;
    let want = version.as_str();
    let kind = if kind.is_empty() {
        "TokenReview"
    } else {
        &kind
    };
    let (group, ver) = match (group, ver) {
        ("", "") => (crate::api::AUTHENTICATION_GROUP, want),
        (crate::api::AUTHENTICATION_GROUP, "") => (crate::api::AUTHENTICATION_GROUP, want),
        other => other,
    };
    if ver.is_empty() {
        // Go quotes the whole body here; it is left out.
        return Err(fail("Object 'apiVersion' is missing".to_owned()));
    }
    let unknown_conversion = |from: &str| {
        fail(format!(
            "converting ({from}) to ({want}.TokenReview): unknown conversion"
        ))
    };
    if UNVERSIONED_KINDS.contains(&kind) {
        // Decoded as that type first: a Status must decode as one.
        if kind == "Status"
            && let Err(e) = serde_json::from_slice::<GoStatus>(&bytes)
        {
            return Err(fail(format!(
                "webhook: cannot decode Status response: {}",
                crate::error::json_category(&e)
            )));
        }
        return Err(unknown_conversion(&format!("v1.{kind}")));
    }
    if group == crate::api::AUTHENTICATION_GROUP
        && kind == "TokenReview"
        && (ver == "v1" || ver == "v1beta1")
    {
        // Decoded as the version it declares (the two have the same fields), then converted.
        let status = parse_response(&bytes)?;
        if ver != want {
            return Err(unknown_conversion(&format!("{ver}.TokenReview")));
        }
        return Ok(status);
    }
    if let Some(go_type) = registered_type(group, ver, kind) {
        return Err(unknown_conversion(&go_type));
    }
    let kind = crate::jwt::go_quote(&shown(kind));
    Err(fail(if ver == "__internal" {
        format!(
            "no kind {kind} is registered for the internal version of group {} in scheme {}",
            crate::jwt::go_quote(&shown(group)),
            crate::jwt::go_quote(SCHEME_NAME)
        )
    } else {
        let group_version = if group.is_empty() {
            ver.to_owned()
        } else {
            format!("{group}/{ver}")
        };
        format!(
            "no kind {kind} is registered for version {} in scheme {}",
            crate::jwt::go_quote(&shown(&group_version)),
            crate::jwt::go_quote(SCHEME_NAME)
        )
    }))
}

/// `Retry-After` as client-go reads it (`strconv.Atoi` of the header's first value as Go's
/// HTTP reader keeps it, spaces and tabs trimmed and nothing else: an optional sign and
/// decimal digits, within 64 bits); `None` when it does not parse (`1\u{a0}` included).
fn retry_after_seconds(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value)
        .ok()?
        .trim_matches([' ', '\t'])
        .parse()
        .ok()
}

/// The wait a `Retry-After` of `seconds` asks for, when above zero.
fn retry_delay(seconds: i64) -> Option<Duration> {
    u64::try_from(seconds)
        .ok()
        .filter(|&s| s > 0)
        .map(Duration::from_secs)
}

/// apimachinery's `knownReasons`: a reason outside it lets the code decide.
const KNOWN_REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "StorageReadError",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

/// k8s.io/apiserver's `DefaultShouldRetry` for an API status error: `IsInternalError`,
/// `IsTimeout`, `IsTooManyRequests` or `SuggestsClientDelay`, judged on the status's own
/// reason, code and details.
fn status_should_retry(reason: &str, code: i32, details: Option<&GoStatusDetails>) -> bool {
    let unknown = !KNOWN_REASONS.contains(&reason);
    reason == "InternalError"
        || (unknown && code == 500)
        || reason == "Timeout"
        || (unknown && code == 504)
        || reason == "TooManyRequests"
        || code == 429
        || details.is_some_and(|d| reason == "ServerTimeout" || d.retry_after_seconds > 0)
}

/// client-go's error for a non-2xx response, and whether it is retried. A failed `Status` in
/// the body is the error (its message, even an empty one) and decides by its own reason, code
/// and details; anything else is `NewGenericServerResponse` for the HTTP status, whose
/// `details.retryAfterSeconds` is the `Retry-After` header: above zero, it is retried
/// (`SuggestsClientDelay`) whatever the status. Either way a `Retry-After` above zero on a 429
/// or 5xx also makes it retryable, and is waited for (client-go's own request retry honours
/// it; see docs/compatibility.md).
fn response_error(
    code: reqwest::StatusCode,
    content_type: Option<&[u8]>,
    retry_after: Option<i64>,
    body: &[u8],
    token: &str,
) -> AttemptError {
    let c = code.as_u16();
    // client-go's own request retry: a 429 or 5xx with `Retry-After` is sent again after it.
    let delay = retry_after
        .filter(|_| c == 429 || c >= 500)
        .and_then(retry_delay);
    let delay_asked = delay.is_some();
    if let Some(status) = decode_status(body).filter(|s| s.status == "Failure") {
        return AttemptError {
            error: Error::new(
                ErrorKind::Unavailable,
                printable(shown_text(&status.message, token, false)),
            ),
            retry: delay_asked
                || status_should_retry(
                    &status.reason,
                    status.code,
                    status.details.as_ref().map(|d| &d.0),
                ),
            retry_after: delay,
        };
    }
    // `NewGenericServerResponse`'s reasons: 500 and the other 5xx are InternalError, 504
    // Timeout, 429 TooManyRequests (retried), 503 ServiceUnavailable (retried only when it
    // suggests a delay). Its `details.retryAfterSeconds` is `int32(Retry-After)`.
    let suggests_delay = retry_after.is_some_and(|n| n as i32 > 0);
    let retry = c == 429 || (c >= 500 && c != 503) || delay_asked || suggests_delay;
    AttemptError {
        error: status_error(code, content_type, body, token),
        retry,
        retry_after: delay,
    }
}

/// Longest piece of an error body shown in an error message (client-go's
/// `maxUnstructuredResponseTextBytes`).
const MAX_SHOWN_BODY: usize = 2048;

/// client-go's `isTextResponse`: no (or an empty) `Content-Type`, or a media type under
/// `text/` as Go's `mime.ParseMediaType` reads it (lower-cased: `Text/Plain` is text); a type
/// it refuses is not text.
fn is_text_response(content_type: Option<&[u8]>) -> bool {
    content_type.is_none_or(|t| {
        t.is_empty() || mime::parse_media_type(t).is_ok_and(|m| m.starts_with("text/"))
    })
}

/// client-go's `NewGenericServerResponse` text for a non-2xx response whose body is not a
/// failed `Status`.
fn status_error(
    code: reqwest::StatusCode,
    content_type: Option<&[u8]>,
    body: &[u8],
    token: &str,
) -> Error {
    // client-go's `transformUnstructuredResponseError`: a text body (trimmed, at most 2 KiB)
    // is the server's message, else "unknown".
    let is_text = is_text_response(content_type);
    let shown = || {
        if !is_text {
            return "unknown".to_owned();
        }
        // The token is removed from the whole body before it is cut, so an occurrence across
        // the cut cannot leave its first bytes behind; a cut that ends in what could be the
        // start of the token is redacted too.
        shown_text(&String::from_utf8_lossy(body), token, true)
    };
    let c = code.as_u16();
    let text = match c {
        400 => "the server rejected our request for an unknown reason".to_owned(),
        401 => "the server has asked for the client to provide credentials".to_owned(),
        // "the server message has details about who is trying to perform what action"
        403 => printable(shown()),
        404 => "the server could not find the requested resource".to_owned(),
        405 => "the server does not allow this method on the requested resource".to_owned(),
        // "the server message has details about what types are acceptable"
        406 => match printable(shown()) {
            s if s.is_empty() || s == "unknown" => {
                "the server was unable to respond with a content type that the client supports"
                    .to_owned()
            }
            s => s,
        },
        415 => printable(shown()),
        409 => "the server reported a conflict".to_owned(),
        422 => "the server rejected our request due to an error in our request".to_owned(),
        429 => "the server has received too many requests and has asked us to try again later".to_owned(),
        503 => "the server is currently unable to handle the request".to_owned(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".to_owned(),
        c if c >= 500 => {
            format!(
                "an error on the server ({}) has prevented the request from succeeding",
                crate::jwt::go_quote(&shown())
            )
        }
        c => format!("the server responded with the status code {c} but did not return more information"),
    };
    Error::new(ErrorKind::Unavailable, text)
}

/// Text from the backend as it may appear in an error (and from there in logs and a review's
/// `status.error`): the token removed from the whole text before it is cut, at most
/// [`MAX_SHOWN_BODY`] bytes, and `trim`med if asked. Where the text is cut, a tail that is the
/// start of the token (four bytes or more) is redacted too: it reads as a token cut through.
/// A text that is not cut keeps everything but exact copies of the token (`unknown user`
/// stays as it is for the token `user-1234`). Unless it is then quoted (`%q`), pass it
/// through [`printable`].
fn shown_text(text: &str, token: &str, trim: bool) -> String {
    let text = scrub(text, token);
    let mut end = text.len().min(MAX_SHOWN_BODY);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut shown = text[..end].to_owned();
    // Before trimming: a token prefix followed by white space was not cut through.
    if end < text.len() {
        redact_token_prefix_at_end(&mut shown, token);
    }
    if trim { shown.trim().to_owned() } else { shown }
}

/// Control characters (line breaks included) written as spaces, so that a backend's text
/// cannot forge log lines.
fn printable(text: String) -> String {
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    } else {
        text
    }
}

/// Replaces a tail of `text` that is the first four or more bytes of `token` (what a cut
/// through the token would leave).
fn redact_token_prefix_at_end(text: &mut String, token: &str) {
    for len in (4..token.len()).rev() {
        if let Some(prefix) = token.get(..len)
            && text.ends_with(prefix)
        {
            text.truncate(text.len() - len);
            text.push_str("<redacted>");
            return;
        }
    }
}

/// Never let a backend echo the token into an error message (and from there into logs).
fn scrub(text: &str, token: &str) -> String {
    if !token.is_empty() && text.contains(token) {
        text.replace(token, "<redacted>")
    } else {
        text.to_owned()
    }
}

impl TokenAuthenticator for WebhookTokenAuthenticator {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::new(self.review(token, ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_body_matches_kubernetes() {
        let r = TokenReview::request("v1", "my-s3cr3t-t0ken", vec!["api".into()]);
        let v: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(v["apiVersion"], "authentication.k8s.io/v1");
        assert_eq!(v["kind"], "TokenReview");
        assert_eq!(v["spec"]["token"], "my-s3cr3t-t0ken");
        assert_eq!(v["spec"]["audiences"], serde_json::json!(["api"]));
        assert_eq!(v["status"], serde_json::json!({"user": {}}));
        let none = serde_json::to_value(TokenReview::request("v1beta1", "t", vec![])).unwrap();
        assert!(
            none["spec"].get("audiences").is_none(),
            "omitted when empty"
        );
        assert_eq!(none["apiVersion"], "authentication.k8s.io/v1beta1");
    }

    #[test]
    fn response_errors_follow_client_go() {
        use reqwest::StatusCode as S;
        let cases: &[(u16, Option<&str>, &[u8], &str)] = &[
            (404, None, b"", "the server could not find the requested resource"),
            (401, None, b"", "the server has asked for the client to provide credentials"),
            (500, Some("text/plain"), b"HTTP Error", r#"an error on the server ("HTTP Error") has prevented the request from succeeding"#),
            (500, Some("application/octet-stream"), b"\x00\x01", r#"an error on the server ("unknown") has prevented the request from succeeding"#),
            (500, Some("text/plain"), b"echo tok-SECRET", r#"an error on the server ("echo <redacted>") has prevented the request from succeeding"#),
            (429, None, b"", "the server has received too many requests and has asked us to try again later"),
            (503, None, b"", "the server is currently unable to handle the request"),
            (504, None, b"", "the server was unable to return a response in the time allotted, but may still be processing the request"),
            (301, None, b"", "the server responded with the status code 301 but did not return more information"),
            (403, Some("application/json"), br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"denied by policy","code":403}"#, "denied by policy"),
            // client-go: an empty text body is the message "" (not "unknown").
            (500, Some("text/plain"), b"", r#"an error on the server ("") has prevented the request from succeeding"#),
            (500, Some(""), b"  \n", r#"an error on the server ("") has prevented the request from succeeding"#),
            (403, Some("text/plain"), b"", ""),
            (207, None, b"", "the server responded with the status code 207 but did not return more information"),
            // Go's %q: a control byte is \x1b (Rust's {:?} would say \u{1b}).
            (500, Some("text/plain"), b"a\x1bb", r#"an error on the server ("a\x1bb") has prevented the request from succeeding"#),
            // Unquoted texts: control characters become spaces (no forged log lines).
            (403, Some("text/plain"), b"denied\nFAKE LOG LINE", "denied FAKE LOG LINE"),
            // isTextResponse parses the media type, lower-cased: any case of text/ is text.
            (500, Some("Text/Plain"), b"oops", r#"an error on the server ("oops") has prevented the request from succeeding"#),
            (403, Some("TEXT/plain; charset=utf-8"), b"denied here", "denied here"),
            (403, Some(" text/HTML "), b"<b>no</b>", "<b>no</b>"),
            (406, Some("Text/Plain"), b"only YAML", "only YAML"),
            (500, Some("application/json; x=\"\u{e9}\""), b"oops", r#"an error on the server ("unknown") has prevented the request from succeeding"#),
            (403, Some("textual/plain"), b"denied", "unknown"),
        ];
        for (code, ct, body, want) in cases {
            let e = response_error(
                S::from_u16(*code).unwrap(),
                ct.map(str::as_bytes),
                None,
                body,
                "tok-SECRET",
            );
            assert_eq!(e.error.to_string(), *want, "{code}");
        }
    }

    /// The token is removed before the body is cut to 2 KiB: neither an occurrence across the
    /// cut nor a cut through the token's first bytes leaves any of it in the message.
    #[test]
    fn error_bodies_never_show_part_of_the_token() {
        use reqwest::StatusCode as S;
        let token = "tok-0123456789abcdefghij";
        let pad = |n: usize| "x".repeat(n);
        let cases = [
            ("token across the cut", format!("{}{token} tail", pad(2040))),
            (
                "token longer than what is left",
                format!("{}{token}", pad(2046)),
            ),
            (
                "cut through the token's start",
                format!("{}{} tail", pad(2040), &token[..12]),
            ),
            ("token after the cut", format!("{}{token}", pad(4000))),
        ];
        for (name, body) in cases {
            for code in [500, 403] {
                let e = status_error(
                    S::from_u16(code).unwrap(),
                    Some(b"text/plain"),
                    body.as_bytes(),
                    token,
                );
                let text = e.to_string();
                assert!(
                    !text.contains("tok-0123"),
                    "{name} {code}: …{}",
                    &text[text.len().saturating_sub(40)..]
                );
                assert!(text.len() < 2200, "{name} {code}");
            }
        }
        let e = status_error(
            S::INTERNAL_SERVER_ERROR,
            Some(b"text/plain"),
            format!("{}{} tail", pad(2040), &token[..12]).as_bytes(),
            token,
        );
        assert_eq!(
            e.to_string(),
            format!(
                r#"an error on the server ("{}<redacted>") has prevented the request from succeeding"#,
                pad(2040)
            )
        );
    }

    /// A text is cut at 2 KiB after the token is removed; only where it is cut is a tail that
    /// is the token's first four or more bytes redacted. Elsewhere only exact copies of the
    /// token are (docs/compatibility.md): a backend's words that begin as the token does
    /// stay.
    #[test]
    fn token_prefixes_are_redacted_only_at_a_cut() {
        let pad = |n: usize| "x".repeat(n);
        // (name, token, text, trim, shown)
        let cases: Vec<(&str, &str, String, bool, String)> = vec![
            (
                "a word the token starts with",
                "user-1234",
                "unknown user".into(),
                false,
                "unknown user".into(),
            ),
            (
                "a bootstrap token's id",
                "abcdef.0123456789abcdef",
                "bootstrap token not found: abcdef".into(),
                false,
                "bootstrap token not found: abcdef".into(),
            ),
            (
                "a JWT's header start",
                "eyJhbGciOiJSUzI1NiJ9.x.y",
                "not a JWT: eyJh".into(),
                false,
                "not a JWT: eyJh".into(),
            ),
            (
                "a text body ending in the token's start, trimmed",
                "tok-0123456789",
                "denied tok-0123 \n".into(),
                true,
                "denied tok-0123".into(),
            ),
            (
                "the token itself",
                "user-1234",
                "unknown user-1234".into(),
                false,
                "unknown <redacted>".into(),
            ),
            (
                "exactly 2 KiB is not cut",
                "tok-0123456789",
                format!("{}tok-0123", pad(2040)),
                false,
                format!("{}tok-0123", pad(2040)),
            ),
            (
                "cut through the token's start",
                "tok-0123456789",
                format!("{}tok-0123456", pad(2040)),
                false,
                format!("{}<redacted>", pad(2040)),
            ),
            (
                "cut through the token's start, trimmed",
                "tok-0123456789",
                format!(" {}tok-0123456", pad(2039)),
                true,
                format!("{}<redacted>", pad(2039)),
            ),
            (
                "cut after white space that follows the token's start",
                "tok-0123456789",
                format!("{}tok-0123 more", pad(2039)),
                true,
                format!("{}tok-0123", pad(2039)),
            ),
            (
                "cut, the tail not the token's start",
                "tok-0123456789",
                format!("{}tokXYZ", pad(2045)),
                false,
                format!("{}tok", pad(2045)),
            ),
        ];
        for (name, token, text, trim, want) in cases {
            assert_eq!(shown_text(&text, token, trim), want, "{name}");
        }
    }

    /// An answer's structs are objects: serde's array form of a struct
    /// (`"status":[true,{"username":"admin"}]`) authenticated `admin`; Go refuses it
    /// (`json: cannot unmarshal array into Go struct field TokenReview.status …`), for the
    /// structs only type-checked too (`metadata.managedFields[]`: `json: cannot unmarshal array
    /// into Go struct field ObjectMeta.metadata.managedFields of type v1.ManagedFieldsEntry`).
    #[test]
    fn structs_given_as_arrays_fail_the_review() {
        for (name, body) in [
            ("status", r#"{"status":[true,{"username":"admin"}]}"#),
            (
                "user",
                r#"{"status":{"authenticated":true,"user":["admin"]}}"#,
            ),
            (
                "spec",
                r#"{"spec":["t"],"status":{"authenticated":true,"user":{"username":"a"}}}"#,
            ),
            (
                "metadata",
                r#"{"metadata":[],"status":{"authenticated":true,"user":{"username":"a"}}}"#,
            ),
            (
                "a managedFields entry",
                r#"{"metadata":{"managedFields":[["m","Apply"]]},"status":{"authenticated":true,"user":{"username":"a"}}}"#,
            ),
            (
                "an empty managedFields entry",
                r#"{"metadata":{"managedFields":[[]]},"status":{"authenticated":true,"user":{"username":"a"}}}"#,
            ),
        ] {
            let e = parse_response(body.as_bytes()).expect_err(name);
            assert_eq!(
                e.to_string(),
                "webhook: cannot decode TokenReview response: unexpected JSON shape",
                "{name}"
            );
        }
    }

    /// An error body is a `Status` only if each of its structs is an object or `null`, as Go
    /// decodes a `metav1.Status` (an array is `json: cannot unmarshal array into Go struct
    /// field …`, and the body is then the generic error of its HTTP status).
    #[test]
    fn status_structs_given_as_arrays_are_no_status() {
        let cases = [
            ("details", r#""details":["n","g","k","u",null,5]"#, false),
            ("empty details", r#""details":[]"#, false),
            ("metadata", r#""metadata":[]"#, false),
            ("a cause", r#""details":{"causes":[["r","m","f"]]}"#, false),
            (
                "null details and metadata",
                r#""details":null,"metadata":null"#,
                true,
            ),
            (
                "a null cause",
                r#""details":{"causes":[null,{"reason":"r"}]}"#,
                true,
            ),
            (
                "objects",
                r#""details":{"causes":[{}]},"metadata":{}"#,
                true,
            ),
        ];
        for (name, field, is_status) in cases {
            let body = format!(r#"{{"kind":"Status","status":"Failure","message":"m",{field}}}"#);
            assert_eq!(
                decode_status(body.as_bytes()).is_some(),
                is_status,
                "{name}"
            );
        }
    }

    /// client-go's `Retry-After`: the header value as Go's HTTP reader keeps it (space and tab
    /// trimmed, nothing else), then `strconv.Atoi`.
    #[test]
    fn retry_after_is_read_as_client_go_reads_it() {
        let cases: &[(&str, Option<i64>)] = &[
            ("1", Some(1)),
            (" 1\t", Some(1)),
            ("+1", Some(1)),
            ("-1", Some(-1)),
            ("1\u{a0}", None),
            ("\u{a0}1", None),
            ("1\u{3000}", None),
            ("1\u{b}", None),
            ("1.5", None),
            ("", None),
        ];
        for (value, want) in cases {
            assert_eq!(retry_after_seconds(value.as_bytes()), *want, "{value:?}");
        }
    }

    /// `-0` is an integer to Go's encoding/json (0); serde_json reads it as a float, which an
    /// integer field refused, so such an answer failed to decode and such a `Status` was none.
    #[test]
    fn minus_zero_integers_decode_as_go_decodes_them() {
        let review = parse_response(
            br#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","metadata":{"deletionGracePeriodSeconds":-0},"status":{"authenticated":true,"user":{"username":"admin"}}}"#,
        )
        .unwrap();
        assert_eq!(review.user.username, "admin");
        for (name, body) in [
            (
                "code",
                r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"m","code":-0}"#,
            ),
            (
                "retryAfterSeconds",
                r#"{"kind":"Status","apiVersion":"v1","message":"m","details":{"retryAfterSeconds":-0}}"#,
            ),
            (
                "remainingItemCount",
                r#"{"kind":"Status","apiVersion":"v1","message":"m","metadata":{"remainingItemCount":-0}}"#,
            ),
        ] {
            let status = decode_status(body.as_bytes()).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(status.message, "m", "{name}");
        }
        // Out of int32's range is still an error, as in Go.
        assert!(
            decode_status(
                br#"{"kind":"Status","apiVersion":"v1","message":"m","code":3000000000}"#
            )
            .is_none()
        );
    }

    /// Go webhooks built on `k8s.io/api` types without `omitempty` send `null` for unset
    /// slices and maps (and some send it for strings); Go's encoding/json leaves the zero value.
    #[test]
    fn null_fields_decode_as_go_zero_values() {
        struct Case {
            name: &'static str,
            body: &'static str,
            user: &'static str,
            uid: &'static str,
            groups: &'static [&'static str],
            extra: &'static [(&'static str, &'static [&'static str])],
            auds: &'static [&'static str],
        }
        let cases: &[Case] = &[
            Case {
                name: "review finding: groups and extra null",
                body: r#"{"status":{"authenticated":true,"user":{"username":"a","groups":null,"extra":null}}}"#,
                user: "a",
                uid: "",
                groups: &[],
                extra: &[],
                auds: &[],
            },
            Case {
                name: "null username",
                body: r#"{"status":{"authenticated":true,"user":{"username":null,"uid":"u1","groups":["g"]}}}"#,
                user: "",
                uid: "u1",
                groups: &["g"],
                extra: &[],
                auds: &[],
            },
            Case {
                name: "null uid",
                body: r#"{"status":{"authenticated":true,"user":{"username":"b","uid":null}}}"#,
                user: "b",
                uid: "",
                groups: &[],
                extra: &[],
                auds: &[],
            },
            Case {
                name: "null extra value list",
                body: r#"{"status":{"authenticated":true,"user":{"username":"c","extra":{"k":null,"scopes":["s"]}}}}"#,
                user: "c",
                uid: "",
                groups: &[],
                extra: &[("k", &[]), ("scopes", &["s"])],
                auds: &[],
            },
            Case {
                name: "null status audiences and error",
                body: r#"{"status":{"authenticated":true,"user":{"username":"d"},"audiences":null,"error":null}}"#,
                user: "d",
                uid: "",
                groups: &[],
                extra: &[],
                auds: &[],
            },
            Case {
                name: "null items of groups, extra values and audiences are \"\"",
                body: r#"{"status":{"authenticated":true,"user":{"username":"f","groups":[null,"g"],"extra":{"k":[null]}},"audiences":[null]}}"#,
                user: "f",
                uid: "",
                groups: &["", "g"],
                extra: &[("k", &[""])],
                auds: &[""],
            },
            Case {
                name: "everything a Go v1 TokenReview without omitempty sends",
                body: r#"{"apiVersion":null,"kind":null,"metadata":null,"spec":{"token":null,"audiences":null},"status":{"authenticated":true,"user":{"username":"e","uid":null,"groups":null,"extra":null},"audiences":["api"],"error":null}}"#,
                user: "e",
                uid: "",
                groups: &[],
                extra: &[],
                auds: &["api"],
            },
        ];
        for Case {
            name,
            body,
            user,
            uid,
            groups,
            extra,
            auds,
        } in cases
        {
            let status = parse_response(body.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(status.authenticated, "{name}");
            assert!(status.error.is_empty(), "{name}");
            assert_eq!(status.audiences, *auds, "{name}");
            let id = status.user.to_identity();
            assert_eq!(id.name(), *user, "{name}");
            assert_eq!(id.uid(), *uid, "{name}");
            assert_eq!(id.groups().collect::<Vec<_>>(), *groups, "{name}");
            let got: Vec<(String, Vec<String>)> = id
                .extra()
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            let want: Vec<(String, Vec<String>)> = extra
                .iter()
                .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
                .collect();
            assert_eq!(got, want, "{name}");
        }
        // `null` for a whole object is Go's zero value too; an unauthenticated review.
        let status = parse_response(br#"{"status":{"authenticated":null,"user":null}}"#).unwrap();
        assert_eq!(status, crate::api::TokenReviewStatus::default());
        let status = parse_response(br#"{"status":null}"#).unwrap();
        assert_eq!(status, crate::api::TokenReviewStatus::default());
        // A wrong type is still an error, not a zero value.
        assert!(parse_response(br#"{"status":{"user":{"groups":"g"}}}"#).is_err());
    }

    /// `metadata.creationTimestamp` as `metav1.Time` decodes it (`time.Parse(time.RFC3339,
    /// …)`); each row's outcome was printed by json.Unmarshal into a metav1.Time
    /// (k8s.io/apimachinery v0.37.2). A time Go refuses fails the review, as there.
    #[test]
    fn creation_timestamp_decodes_as_metav1_time() {
        let cases: &[(&str, bool)] = &[
            ("null", true),
            ("\"2026-01-01T00:00:00Z\"", true),
            ("\"2026-01-01T00:00:00.5Z\"", true),
            ("\"2026-01-01T00:00:00,5Z\"", true),
            ("\"2026-01-01T00:00:00.123456789123Z\"", true),
            ("\"2026-01-01T00:00:00+01:00\"", true),
            ("\"2026-01-01T00:00:00+24:00\"", true),
            ("\"2026-01-01T00:00:00+01:60\"", true),
            ("\"2026-01-01T00:00:00-00:00\"", true),
            ("\"2026-01-01T00:00:00.5+01:00\"", true),
            ("\"2024-02-29T00:00:00Z\"", true),
            ("\"0000-01-01T00:00:00Z\"", true),
            ("\"2026-01-01T0:00:00Z\"", true),
            ("\"\"", false),
            ("\"garbage\"", false),
            ("5", false),
            ("\"2026-01-01t00:00:00Z\"", false),
            ("\"2026-02-30T00:00:00Z\"", false),
            ("\"2026-01-01T24:00:00Z\"", false),
            ("\"2026-01-01T00:00:60Z\"", false),
            ("\"2026-01-01 00:00:00Z\"", false),
            ("\"2026-01-01T00:00:00\"", false),
            ("\"2026-01-01T00:00:00z\"", false),
            ("\"2026-1-01T00:00:00Z\"", false),
            ("\"2026-01-01T00:00:00.Z\"", false),
            ("\"2026-01-01T00:00:00+0100\"", false),
            ("\"10000-01-01T00:00:00Z\"", false),
            ("\"+2026-01-01T00:00:00Z\"", false),
            ("\" 2026-01-01T00:00:00Z\"", false),
            ("\"2026-01-01T00:00:00Z \"", false),
            ("\"2026-01-01T00:00:00+1:00\"", false),
            ("\"2026-01-01T00:00:00Z07:00\"", false),
            ("\"2026-00-01T00:00:00Z\"", false),
            ("\"2026-01-00T00:00:00Z\"", false),
            ("\"2026-13-01T00:00:00Z\"", false),
            ("\"2026-01-01T00:00:00UTC\"", false),
            ("\"2026-01-01T00:00:00+01\"", false),
        ];
        for (ts, ok) in cases {
            let body = format!(
                r#"{{"metadata":{{"creationTimestamp":{ts}}},"status":{{"authenticated":true,"user":{{"username":"a"}}}}}}"#
            );
            let got = parse_response(body.as_bytes());
            assert_eq!(got.is_ok(), *ok, "{ts}: {got:?}");
        }
        assert_eq!(
            parse_response(br#"{"metadata":{"creationTimestamp":"garbage"}}"#)
                .unwrap_err()
                .to_string(),
            "webhook: cannot decode TokenReview response: metadata.creationTimestamp is not an RFC 3339 time"
        );
        // Only an object is a TokenReview, whatever its sequence form would decode to (found
        // by the fuzz target: an array whose `metadata` element holds a bad timestamp).
        assert_eq!(
            parse_response(b"[\"\",\"\",{\"creationTimestamp\":\"garbage\"}]")
                .unwrap_err()
                .to_string(),
            "webhook: cannot decode TokenReview response: unexpected JSON shape"
        );
        let found: &[u8] =
            b"[\r\":\"\r,\r\":0 \"\r,\t[\t\"{ \"\r,\r\r\"\"\r,\r\t\"{ \"\r,\r\" \",4,\r\"\"]]\n";
        assert_eq!(
            parse_response(found).unwrap_err().to_string(),
            "webhook: cannot decode TokenReview response: unexpected JSON shape"
        );
    }

    #[test]
    fn backoff_validation_rejects_non_finite_and_negative_values() {
        let inf = f64::INFINITY;
        // (name, factor, jitter, accepted)
        let cases: &[(&str, f64, f64, bool)] = &[
            ("default", 1.5, 0.2, true),
            (
                "no growth, no jitter (k8s: factor 0 is no growth)",
                0.0,
                0.0,
                true,
            ),
            ("huge but finite", f64::MAX, f64::MAX, true),
            ("factor +inf", inf, 0.2, false),
            ("factor -inf", -inf, 0.2, false),
            ("factor NaN", f64::NAN, 0.2, false),
            ("factor negative", -1.5, 0.2, false),
            ("jitter +inf", 1.5, inf, false),
            ("jitter NaN", 1.5, f64::NAN, false),
            ("jitter negative", 1.5, -0.2, false),
        ];
        for &(name, factor, jitter, ok) in cases {
            let b = Backoff {
                factor,
                jitter,
                ..Backoff::default()
            };
            assert_eq!(b.validate().is_ok(), ok, "{name}: {:?}", b.validate());
        }
        let e = Backoff {
            factor: inf,
            ..Backoff::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "webhook retry backoff factor must be a finite number >= 0, but is: inf"
        );
        let e = Backoff {
            jitter: f64::NAN,
            ..Backoff::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "webhook retry backoff jitter must be a finite number >= 0, but is: NaN"
        );
    }

    /// The delay arithmetic saturates instead of panicking (`Duration::mul_f64` and `+` panic
    /// on overflow, a negative or a NaN), whatever an API caller put in `Backoff`.
    #[test]
    fn backoff_arithmetic_never_panics() {
        let delays = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(500),
            Duration::from_secs(u64::MAX / 2),
            Duration::MAX,
        ];
        let values = [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            0.2,
            1.5,
            1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -1.5,
        ];
        for d in delays {
            for v in values {
                let g = grow(d, v);
                if v >= 1.0 {
                    assert!(g >= d, "grow({d:?}, {v}) = {g:?} shrank");
                } else if v > 0.0 {
                    assert!(g <= d, "grow({d:?}, {v}) = {g:?} grew");
                }
                let j = jittered(d, v);
                assert!(j >= d, "jittered({d:?}, {v}) = {j:?} shrank");
            }
        }
        assert_eq!(grow(Duration::MAX, 1.5), Duration::MAX);
        assert_eq!(grow(Duration::from_secs(1), f64::INFINITY), Duration::MAX);
        assert_eq!(grow(Duration::from_secs(2), 1.5), Duration::from_secs(3));
        assert_eq!(
            jittered(Duration::from_secs(1), f64::NAN),
            Duration::from_secs(1)
        );
    }

    /// apimachinery's `wait.Backoff.Step`: the next delay is `time.Duration(float64(d) *
    /// factor)` whenever the factor is not 0, so a factor between 0 and 1 shrinks it, and the
    /// product is truncated to whole nanoseconds.
    #[test]
    fn backoff_factor_steps_as_apimachinery() {
        let ms = Duration::from_millis;
        let ns = Duration::from_nanos;
        // (delay, factor, next)
        let cases: &[(Duration, f64, Duration)] = &[
            (ms(500), 1.5, ms(750)),
            (ms(500), 1.0, ms(500)),
            (ms(500), 0.0, ms(500)),
            (ms(500), 0.5, ms(250)),
            (ms(500), 0.1, ms(50)),
            (ns(3), 1.5, ns(4)),
            (ns(1), 0.5, Duration::ZERO),
            (ns(7), 0.3, ns(2)),
            (ms(8), 0.25, ms(2)),
        ];
        for (d, factor, next) in cases {
            assert_eq!(grow(*d, *factor), *next, "{d:?} × {factor}");
        }
    }

    #[test]
    fn jitter_stays_within_bounds() {
        let delays: Vec<Duration> = (0..100)
            .map(|_| jittered(Duration::from_millis(500), 0.2))
            .collect();
        for d in &delays {
            assert!(
                *d >= Duration::from_millis(500) && *d <= Duration::from_millis(600),
                "{d:?}"
            );
        }
        // Jitter is applied, and varies (100 equal draws from 2^32 values would be a broken
        // random source).
        assert!(delays.iter().any(|d| *d > Duration::from_millis(500)));
        assert!(delays.iter().any(|d| *d != delays[0]));
        assert_eq!(
            jittered(Duration::from_millis(500), 0.0),
            Duration::from_millis(500)
        );
        assert_eq!(
            jittered(Duration::from_millis(500), f64::NAN),
            Duration::from_millis(500)
        );
    }
}
