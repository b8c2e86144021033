//! OpenID discovery and JWKS fetching over HTTPS (reqwest + rustls): what turns an
//! [`OidcAuthenticator`] from "not initialized" into a working verifier, and what refetches
//! its keys when the provider rotates them.
//!
//! # Behaviour (Kubernetes `oidc.go` + go-oidc `NewProvider` / `remoteKeySet`)
//!
//! - **Discovery**: `GET <issuer.url less one trailing "/">/.well-known/openid-configuration`, or
//!   exactly `issuer.discoveryURL` when set (Kubernetes rewrites that one request to the
//!   discovery URL). The document's `issuer` must equal `issuer.url` byte for byte — also when a
//!   discovery URL is used — else `oidc: issuer did not match the issuer returned by provider,
//!   expected "…" got "…"`. Its `jwks_uri` must be present (`provider did not return JWKS URL`:
//!   Kubernetes' own check, made with the `StructuredAuthenticationConfigurationJWKSMetrics`
//!   gate, on by default; go-oidc v2.5.0 has none) and `https://`. A failed request names
//!   `<issuer>/.well-known/openid-configuration` (`Get "<that URL>": <cause>`) also when a
//!   discovery URL is fetched: Kubernetes' round tripper sends a rewritten clone of go-oidc's
//!   request, and Go's `url.Error` names the original.
//! - **Bodies that break off** read as Go's `io.ReadAll` reports them (`unexpected EOF`), under
//!   go-oidc's `unable to read response body: %v` (discovery; a JWKS answer other than `200`),
//!   Kubernetes' metrics round tripper's `error reading JWKS response: %w` (a JWKS `200`) or
//!   `could not decode distributed claim response` (distributed claims).
//! - **Transport**: the CA is `--oidc-ca-file` / `certificateAuthority` (PEM), else the system
//!   roots; proxies from the environment (as Go's `http.ProxyFromEnvironment`); redirects are
//!   **not** followed (a `3xx` is an error); every request has a timeout
//!   ([`DiscoveryOptions::timeout`], 30 s like Kubernetes' client); bodies are capped
//!   ([`MAX_DISCOVERY_BYTES`], [`MAX_JWKS_BYTES`]) and read chunk by chunk, so a huge or endless
//!   response costs at most the cap.
//! - **Non-blocking start**: [`spawn`] returns at once; a background task runs discovery and
//!   the first JWKS fetch, and on failure retries with a doubling delay from
//!   [`DiscoveryOptions::initial_retry`] up to [`DiscoveryOptions::retry_interval`] (Kubernetes
//!   polls every 10 s) until it succeeds. Until then tokens for the issuer fail with
//!   `oidc: authenticator not initialized` (other issuers are unaffected) and
//!   [`DiscoveryHandle::health`] reports Kubernetes' `oidc: authenticator for issuer "…" is not
//!   healthy: <last error>`.
//! - **Rotation**: a token no key of the current set verifies (an unknown `kid`, no `kid`, or a
//!   known `kid` whose key fails: go-oidc's remote key set) triggers one JWKS refetch through
//!   [`KeyRefresher`], then one more try: concurrent callers share the one request, and at most
//!   one fetch happens per [`DiscoveryOptions::refresh_cooldown`] (10^4 random `kid`s or bad
//!   signatures cost one fetch). A failed or empty fetch keeps the last good keys.
//!
//! Start-up errors ([`ConfigError`]) are only local ones: an unreadable CA bundle, no
//! Tokio runtime.
//!
//! ```no_run
//! # async fn f() -> Result<(), kube_authn::ConfigError> {
//! use std::sync::Arc;
//! use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator};
//! use kube_authn::token::oidc::discovery::{spawn, DiscoveryOptions};
//! let cfg = OidcFlags { issuer_url: "https://issuer.example".into(), client_id: "kube".into(), ..Default::default() }.to_config(&[])?;
//! let authn = Arc::new(OidcAuthenticator::new(cfg));
//! let handle = spawn(&authn, DiscoveryOptions::default())?; // returns at once
//! // keep `handle` alive for as long as `authn` serves; dropping it stops the retry task
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, SystemTime};

use super::gojson::{self, GoType};
use super::metrics::JwtAuthenticatorMetrics;
use super::refresh::{Fetched, KeyRefresher};
use super::{ClaimFetcher, OidcAuthenticator, strip_password};
use crate::error::ConfigError;
use crate::jwt::go_quote;
use crate::jwt::key::{PublicKey, decode_jwks};
use crate::outbound::{ConnectionInfo, Pem, ReadError};

/// Largest discovery document read (1 MiB).
///
/// ```
/// assert_eq!(kube_authn::token::oidc::discovery::MAX_DISCOVERY_BYTES, 1024 * 1024);
/// ```
pub const MAX_DISCOVERY_BYTES: usize = 1 << 20;
/// The shortest delay between two initialisation attempts (100 ms): a smaller
/// [`DiscoveryOptions::initial_retry`] or [`DiscoveryOptions::retry_interval`] is raised to it.
///
/// ```
/// assert_eq!(kube_authn::token::oidc::discovery::MIN_RETRY.as_millis(), 100);
/// ```
pub const MIN_RETRY: Duration = Duration::from_millis(100);

/// The delay after `delay`: doubled, at least [`MIN_RETRY`], at most `max` (itself at least
/// [`MIN_RETRY`]). Never zero, never overflows.
fn next_retry(delay: Duration, max: Duration) -> Duration {
    delay
        .saturating_mul(2)
        .max(MIN_RETRY)
        .min(max.max(MIN_RETRY))
}

/// The initialisation error for a key set without a usable key (kube-authn's own rule:
/// docs/compatibility.md).
const ERR_NO_USABLE_KEY: &str = "oidc: JWKS contains no usable signing key";

/// Largest JWKS document read (1 MiB).
///
/// ```
/// assert_eq!(kube_authn::token::oidc::discovery::MAX_JWKS_BYTES, 1024 * 1024);
/// ```
pub const MAX_JWKS_BYTES: usize = 1 << 20;
/// Largest distributed-claims response read (64 KiB: one JWT).
///
/// ```
/// use kube_authn::token::oidc::discovery::MAX_DISTRIBUTED_CLAIM_BYTES;
/// assert_eq!(MAX_DISTRIBUTED_CLAIM_BYTES, 64 * 1024);
/// assert_eq!(MAX_DISTRIBUTED_CLAIM_BYTES, kube_authn::jwt::compact::MAX_JWT_LEN);
/// ```
pub const MAX_DISTRIBUTED_CLAIM_BYTES: usize = 64 << 10;
/// How many distributed-claims fetches may run at once, per issuer. Each is an outbound GET of
/// up to 30 s made with a user's token; beyond this a token with distributed claims is refused
/// (an error: 401) until one finishes.
///
/// ```
/// assert_eq!(kube_authn::token::oidc::discovery::MAX_DISTRIBUTED_FETCHES, 64);
/// ```
pub const MAX_DISTRIBUTED_FETCHES: usize = 64;
/// How long a fetched distributed claim is reused for the same endpoint and access token:
/// Kubernetes' 10 s token success cache, which spares its claim resolver the same fetches.
///
/// ```
/// assert_eq!(kube_authn::token::oidc::discovery::DISTRIBUTED_CLAIM_TTL.as_secs(), 10);
/// ```
pub const DISTRIBUTED_CLAIM_TTL: std::time::Duration = std::time::Duration::from_secs(10);
/// How many fetched distributed claims are kept (each at most
/// [`MAX_DISTRIBUTED_CLAIM_BYTES`]: 16 MiB at most).
const DISTRIBUTED_CLAIM_ENTRIES: usize = 256;
/// How much of an error response body is quoted in an error message.
const MAX_ERROR_BODY: usize = 256;

/// Tunables of the fetcher. The defaults are Kubernetes' where it has one.
///
/// ```
/// let o = kube_authn::token::oidc::discovery::DiscoveryOptions::default();
/// assert_eq!(o.retry_interval, std::time::Duration::from_secs(10));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DiscoveryOptions {
    /// Per-request timeout (connect + headers + body). Default 30 s (Kubernetes' client).
    pub timeout: Duration,
    /// First retry delay after a failed initialisation; doubles up to `retry_interval`.
    /// Default 1 s.
    pub initial_retry: Duration,
    /// Longest delay between initialisation attempts. Default 10 s (Kubernetes' poll period).
    pub retry_interval: Duration,
    /// At most one JWKS refetch (for a token no current key verifies) per this period, at least
    /// [`MIN_COOLDOWN`](super::refresh::MIN_COOLDOWN). Default 10 s.
    pub refresh_cooldown: Duration,
    /// Honour `HTTPS_PROXY`/`NO_PROXY` (Go's `ProxyFromEnvironment`). Default `true`.
    pub trust_env: bool,
    /// The API server identity the JWKS fetch metrics are labelled with (hashed, as
    /// `apiserver_id_hash`; see [`super::metrics`]). Default empty (the label is then empty
    /// too); `kube-authn serve` sets [`super::metrics::apiserver_id`] of its host name.
    pub apiserver_id: String,
}

impl Default for DiscoveryOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            initial_retry: Duration::from_secs(1),
            retry_interval: Duration::from_secs(10),
            refresh_cooldown: Duration::from_secs(10),
            trust_env: true,
            apiserver_id: String::new(),
        }
    }
}

impl DiscoveryOptions {
    /// Sets the per-request timeout.
    ///
    /// ```
    /// let o = kube_authn::token::oidc::discovery::DiscoveryOptions::default().with_timeout(std::time::Duration::from_secs(5));
    /// assert_eq!(o.timeout.as_secs(), 5);
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the first and the longest retry delay of the initialisation task. Both are at
    /// least [`MIN_RETRY`] (also when the public fields are set directly: the task clamps
    /// them), so a zero delay cannot make the task hammer the issuer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube_authn::token::oidc::discovery::{DiscoveryOptions, MIN_RETRY};
    /// let o = DiscoveryOptions::default().with_retry(Duration::from_millis(200), Duration::from_secs(1));
    /// assert_eq!(o.initial_retry, Duration::from_millis(200));
    /// let o = DiscoveryOptions::default().with_retry(Duration::ZERO, Duration::ZERO);
    /// assert_eq!((o.initial_retry, o.retry_interval), (MIN_RETRY, MIN_RETRY));
    /// ```
    pub fn with_retry(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_retry = initial.max(MIN_RETRY);
        self.retry_interval = max.max(self.initial_retry);
        self
    }

    /// Sets the JWKS refetch cooldown: at least [`MIN_COOLDOWN`] (100 ms; also when the public
    /// field is set directly: the refresher raises it), so a zero cooldown cannot undo the
    /// coalescing of concurrent refetches nor let a flood of tokens fetch back to back.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube_authn::token::oidc::{discovery::DiscoveryOptions, refresh::MIN_COOLDOWN};
    /// let o = DiscoveryOptions::default().with_refresh_cooldown(Duration::from_secs(1));
    /// assert_eq!(o.refresh_cooldown.as_secs(), 1);
    /// let o = DiscoveryOptions::default().with_refresh_cooldown(Duration::ZERO);
    /// assert_eq!(o.refresh_cooldown, MIN_COOLDOWN);
    /// ```
    ///
    /// [`MIN_COOLDOWN`]: super::refresh::MIN_COOLDOWN
    pub fn with_refresh_cooldown(mut self, cooldown: Duration) -> Self {
        self.refresh_cooldown = cooldown.max(super::refresh::MIN_COOLDOWN);
        self
    }

    /// Sets whether proxy environment variables are honoured.
    ///
    /// ```
    /// assert!(!kube_authn::token::oidc::discovery::DiscoveryOptions::default().with_trust_env(false).trust_env);
    /// ```
    pub fn with_trust_env(mut self, yes: bool) -> Self {
        self.trust_env = yes;
        self
    }

    /// Sets the API server identity of the JWKS fetch metrics.
    ///
    /// ```
    /// use kube_authn::token::oidc::{discovery::DiscoveryOptions, metrics::apiserver_id};
    /// let o = DiscoveryOptions::default().with_apiserver_id(apiserver_id("node-1", "kube-authn"));
    /// assert_eq!(o.apiserver_id, "apiserver-5uhjv4vtnsm7ovkbhdfg4ua2ya");
    /// ```
    pub fn with_apiserver_id(mut self, id: impl Into<String>) -> Self {
        self.apiserver_id = id.into();
        self
    }
}

/// The discovery URL Kubernetes fetches for `issuer_url` (or `discovery_url` as given): go-oidc's
/// `strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"`, one trailing slash
/// removed, not all of them.
///
/// ```
/// use kube_authn::token::oidc::discovery::discovery_url;
/// assert_eq!(discovery_url("https://i.example/a/", None), "https://i.example/a/.well-known/openid-configuration");
/// assert_eq!(discovery_url("https://i.example/a//", None), "https://i.example/a//.well-known/openid-configuration");
/// assert_eq!(discovery_url("https://i.example", Some("https://in-cluster/x")), "https://in-cluster/x");
/// // An empty discoveryURL is unset, as in Kubernetes.
/// assert_eq!(discovery_url("https://i.example", Some("")), "https://i.example/.well-known/openid-configuration");
/// ```
pub fn discovery_url(issuer_url: &str, discovery_url: Option<&str>) -> String {
    match discovery_url {
        Some(d) if !d.is_empty() => d.to_owned(),
        _ => format!(
            "{}/.well-known/openid-configuration",
            issuer_url.strip_suffix('/').unwrap_or(issuer_url)
        ),
    }
}

/// One issuer's HTTP side: its client, discovery URL and (once discovered) JWKS URL.
struct Remote {
    authn: Weak<OidcAuthenticator>,
    client: reqwest::Client,
    issuer: String,
    discovery_url: String,
    jwks_uri: OnceLock<String>,
    last_error: Mutex<Option<String>>,
    jwks_fetches: AtomicU64,
    metrics: &'static JwtAuthenticatorMetrics,
    apiserver_id: String,
    /// Set when the handle is dropped or retired (a reload replaced the configuration): a
    /// fetch that still completes records no metrics (Kubernetes' `shouldRecordMetrics`, tied
    /// to the old authenticator's lifecycle).
    retired: AtomicBool,
}

impl Remote {
    fn set_error(&self, e: Option<String>) {
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = e;
    }

    /// Discovery: returns the `jwks_uri`. The document is decoded as go-oidc's
    /// `providerJSON` by Go's `encoding/json` ([`gojson`]: names matched case-insensitively,
    /// `null` is no value, the last of repeated members wins, Go's type errors).
    async fn discover(&self) -> Result<String, String> {
        const PROVIDER_JSON: &[gojson::Field] = &[
            ("issuer", GoType::String),
            ("authorization_endpoint", GoType::String),
            ("token_endpoint", GoType::String),
            ("jwks_uri", GoType::String),
            ("userinfo_endpoint", GoType::String),
            ("id_token_signing_alg_values_supported", GoType::Strings),
        ];
        // Go's url.Error names the URL go-oidc requested, `<issuer>/.well-known/openid-configuration`,
        // also when a discoveryURL is fetched: Kubernetes' `discoveryURLRoundTripper` sends a
        // rewritten clone of that request.
        let well_known = discovery_url(&self.issuer, None);
        let (head, resp) = get(&self.client, &self.discovery_url, &well_known, None).await?;
        // go-oidc's `NewProvider` reads the body (ioutil.ReadAll) before it looks at the status.
        let body = read_body(resp, &head, MAX_DISCOVERY_BYTES)
            .await
            .map_err(|e| e.or_read(|c| format!("unable to read response body: {c}")))?;
        if head.status != reqwest::StatusCode::OK {
            return Err(format!("{}: {}", head.status_text, shown_body(&body)));
        }
        let doc =
            gojson::decode_struct(&body, "oidc", "providerJSON", PROVIDER_JSON).map_err(|e| {
                format!(
                    "oidc: failed to decode provider discovery object: {}",
                    gojson::unmarshal_resp(head.ctype.as_deref(), &e)
                )
            })?;
        let (issuer, jwks_uri) = (gojson::string(doc[0]), gojson::string(doc[3]));
        if issuer != self.issuer {
            return Err(format!(
                "oidc: issuer did not match the issuer returned by provider, expected {} got {}",
                go_quote(&self.issuer),
                go_quote(&strip_password(&issuer))
            ));
        }
        // Kubernetes' check (oidc.go, with the StructuredAuthenticationConfigurationJWKSMetrics
        // gate, beta and on by default since 1.35), before any key fetch.
        if jwks_uri.is_empty() {
            return Err("provider did not return JWKS URL".into());
        }
        if !is_https(&jwks_uri) {
            return Err(format!(
                "oidc: jwks_uri {} is not an https URL",
                go_quote(&strip_password(&jwks_uri))
            ));
        }
        Ok(jwks_uri)
    }

    /// One JWKS fetch, as go-oidc's `updateKeys`: the usable keys (possibly none), or its
    /// error: `oidc: get keys failed <err>` (transport), `oidc: get keys failed: <status>
    /// <body>`, `oidc: failed to decode keys: <unmarshalResp text> <body>`. A body that breaks
    /// off: for a `200`, Kubernetes' metrics round tripper reads it and fails the request
    /// (`oidc: get keys failed Get "<url>": error reading JWKS response: unexpected EOF`), for
    /// another status go-oidc's ReadAll does (`unable to read response body: unexpected EOF`).
    /// The body is decoded
    /// as a `jose.JSONWebKeySet` by Go's `encoding/json` ([`gojson`], through `decode_jwks`,
    /// the path [`crate::jwt::key::parse_jwks`] takes); a key this crate cannot use is
    /// skipped (go-jose refuses the whole set: docs/compatibility.md).
    async fn fetch_jwks(&self, uri: &str) -> Result<Vec<Arc<PublicKey>>, String> {
        self.jwks_fetches.fetch_add(1, Ordering::Relaxed);
        let fetched = async {
            let (head, resp) = get(&self.client, uri, uri, None)
                .await
                .map_err(|e| format!("oidc: get keys failed {e}"))?;
            let body = read_body(resp, &head, MAX_JWKS_BYTES)
                .await
                .map_err(|e| match e {
                    BodyError::TooBig(e) => format!("oidc: get keys failed {e}"),
                    BodyError::Read(c) if head.status == reqwest::StatusCode::OK => format!(
                        "oidc: get keys failed Get {}: error reading JWKS response: {c}",
                        head.shown
                    ),
                    BodyError::Read(c) => format!("unable to read response body: {c}"),
                })?;
            Ok::<_, String>((head, body))
        }
        .await;
        // Kubernetes' metrics round tripper: a success is a 200 whose body decodes as a key
        // set (usable keys or none, `{}` and `{"keys":null}` included); everything else is a
        // failure.
        let decoded = match &fetched {
            Ok((head, body)) if head.status == reqwest::StatusCode::OK => Some(decode_jwks(body)),
            _ => None,
        };
        let now = SystemTime::now();
        let outcome = match (&fetched, &decoded) {
            (Ok((_, body)), Some(Ok(_))) => Ok(body.as_slice()),
            _ => Err(()),
        };
        self.metrics.record_jwks_fetch(
            &self.issuer,
            &self.apiserver_id,
            outcome,
            now,
            &self.retired,
        );
        let (head, body) = fetched?;
        match decoded {
            Some(decoded) => decoded.map_err(|e| {
                format!(
                    "oidc: failed to decode keys: {} {}",
                    gojson::unmarshal_resp(head.ctype.as_deref(), &e),
                    shown_body(&body)
                )
            }),
            None => Err(format!(
                "oidc: get keys failed: {} {}",
                head.status_text,
                shown_body(&body)
            )),
        }
    }

    /// Discovery (once) + JWKS; installs the keys.
    async fn initialize(&self) -> Result<(), String> {
        let uri = match self.jwks_uri.get() {
            Some(u) => u.clone(),
            None => {
                let u = self.discover().await?;
                self.jwks_uri.get_or_init(|| u).clone()
            }
        };
        let keys = self.fetch_jwks(&uri).await?;
        if keys.is_empty() {
            return Err(ERR_NO_USABLE_KEY.into());
        }
        let Some(authn) = self.authn.upgrade() else {
            return Ok(());
        };
        authn.set_keys(keys);
        Ok(())
    }

    /// A refetch for a token no current key verifies. A set without a usable key installs
    /// nothing (Go would install the empty set and then find no key: the token's error is the
    /// same, `failed to verify id token signature`); a failed fetch's error is handed back.
    async fn refetch(&self) -> Fetched {
        let Some(uri) = self.jwks_uri.get() else {
            return Fetched::Unchanged;
        };
        match self.fetch_jwks(uri).await {
            Ok(keys) if keys.is_empty() => {
                tracing::warn!(issuer = %self.issuer, "oidc: JWKS refetch: {ERR_NO_USABLE_KEY}, keeping the last good keys");
                Fetched::Unchanged
            }
            Ok(keys) => match self.authn.upgrade() {
                Some(a) => {
                    a.set_keys(keys);
                    self.set_error(None);
                    Fetched::Installed
                }
                None => Fetched::Unchanged,
            },
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, "oidc: JWKS refetch failed, keeping the last good keys: {e}");
                self.set_error(Some(e.clone()));
                Fetched::Failed(e)
            }
        }
    }

    /// Kubernetes' `getClaimJWT`: the status is checked before the body is read, and a body
    /// that breaks off is `could not decode distributed claim response` (no cause).
    async fn get_distributed(&self, endpoint: &str, access_token: &str) -> Result<Vec<u8>, String> {
        let token = (!access_token.is_empty()).then_some(access_token);
        let (head, resp) = get(&self.client, endpoint, endpoint, token).await?;
        if !(200..=226).contains(&head.status.as_u16()) {
            return Err(format!(
                "error while getting distributed claim JWT: {}",
                head.status_text
            ));
        }
        read_body(resp, &head, MAX_DISTRIBUTED_CLAIM_BYTES)
            .await
            .map_err(|e| e.or_read(|_| "could not decode distributed claim response".into()))
    }
}

/// The distributed-claims fetcher of a remote issuer: bounded ([`MAX_DISTRIBUTED_FETCHES`]
/// at once) and reusing a claim fetched in the last [`DISTRIBUTED_CLAIM_TTL`] for the same
/// endpoint and access token (the body is verified again on every use). kube-apiserver gets
/// both from the 10 s success cache in front of its token chain; kube-authn does not cache
/// whole OIDC answers, so without them a replayed token would be one outbound GET per request.
struct RemoteClaims {
    remote: Arc<Remote>,
    /// Bodies by a keyed digest of the endpoint and access token (neither stored raw).
    cache: quick_cache::sync::Cache<[u8; 32], (std::time::Instant, Vec<u8>)>,
    keys: crate::token::cache::KeyFunc,
    in_flight: tokio::sync::Semaphore,
}

impl RemoteClaims {
    fn new(remote: Arc<Remote>) -> Self {
        // A fixed key would do no harm (digests never leave the process), but the OS has
        // randomness: use it.
        let keys = crate::token::cache::KeyFunc::random()
            .unwrap_or_else(|_| crate::token::cache::KeyFunc::new(&[0; 32]));
        Self {
            remote,
            cache: quick_cache::sync::Cache::new(DISTRIBUTED_CLAIM_ENTRIES),
            keys,
            in_flight: tokio::sync::Semaphore::new(MAX_DISTRIBUTED_FETCHES),
        }
    }

    async fn fetch_bounded(&self, endpoint: &str, access_token: &str) -> Result<Vec<u8>, String> {
        let key = self.keys.key(access_token, Some(&[endpoint]));
        if let Some((at, body)) = key.and_then(|k| self.cache.get(&k))
            && at.elapsed() < DISTRIBUTED_CLAIM_TTL
        {
            return Ok(body);
        }
        let Ok(_permit) = self.in_flight.try_acquire() else {
            return Err(format!(
                "Get {}: too many distributed claim fetches in flight (at most {MAX_DISTRIBUTED_FETCHES})",
                go_quote(&strip_password(endpoint))
            ));
        };
        let body = self.remote.get_distributed(endpoint, access_token).await?;
        if let Some(k) = key {
            self.cache
                .insert(k, (std::time::Instant::now(), body.clone()));
        }
        Ok(body)
    }
}

impl ClaimFetcher for RemoteClaims {
    fn fetch<'a>(
        &'a self,
        endpoint: &'a str,
        access_token: &'a str,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
        Box::pin(self.fetch_bounded(endpoint, access_token))
    }

    fn refused(&self, endpoint: &str, access_token: &str) {
        if let Some(k) = self.keys.key(access_token, Some(&[endpoint])) {
            self.cache.remove(&k);
        }
    }
}

fn shown_body(body: &[u8]) -> String {
    let cut = &body[..body.len().min(MAX_ERROR_BODY)];
    let s = String::from_utf8_lossy(cut);
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if body.len() > MAX_ERROR_BODY {
        format!("{s}…")
    } else {
        s
    }
}

/// Whether `url` starts `https://` in any case: Go's url.Parse lower-cases the scheme, so
/// Kubernetes accepts and fetches `HTTPS://…`.
fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
}

/// A response whose body is not read yet.
struct Head {
    status: reqwest::StatusCode,
    /// Go's `resp.Status` ([`go_status`]).
    status_text: String,
    /// The `Content-Type`.
    ctype: Option<String>,
    /// The URL a Go error names, quoted, its password shown as `***`.
    shown: String,
}

/// Why a body could not be read.
enum BodyError {
    /// Larger than the cap (kube-authn's own): `Get "<url>": response body larger than <max>
    /// bytes`.
    TooBig(String),
    /// The body broke off: the cause as Go's `io.ReadAll` gives it ([`read_cause`]).
    Read(String),
}

impl BodyError {
    /// The text: [`BodyError::TooBig`]'s own, or `read` of a [`BodyError::Read`] cause.
    fn or_read(self, read: impl FnOnce(String) -> String) -> String {
        match self {
            BodyError::TooBig(e) => e,
            BodyError::Read(cause) => read(cause),
        }
    }
}

/// GET `url`, up to the response headers. `shown` is the URL Go's `url.Error` names (the one
/// the Go client was asked for: `url` but for a rewritten discovery request); a failure reads
/// like Go's `Get "<shown>": <cause>`.
async fn get(
    client: &reqwest::Client,
    url: &str,
    shown: &str,
    bearer: Option<&str>,
) -> Result<(Head, reqwest::Response), String> {
    // Go's `url.Error` quotes the URL with its password replaced (net/http stripPassword).
    let shown = go_quote(&strip_password(shown));
    if !is_https(url) {
        return Err(format!("Get {shown}: only https URLs are fetched"));
    }
    let mut req = client.get(url);
    if let Some(t) = bearer {
        req = with_bearer(req, t);
    }
    let resp = match req.send().await {
        Ok(resp) => resp,
        Err(e) => return Err(format!("Get {shown}: {}", root_cause(&e))),
    };
    let head = Head {
        status: resp.status(),
        status_text: go_status(&resp),
        ctype: resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        shown,
    };
    Ok((head, resp))
}

/// Reads `resp`'s body, at most `max` bytes (a larger declared or actual body is refused as
/// soon as it is seen, never buffered).
async fn read_body(resp: reqwest::Response, head: &Head, max: usize) -> Result<Vec<u8>, BodyError> {
    crate::outbound::read_capped(resp, max)
        .await
        .map_err(|e| match e {
            ReadError::TooLarge => BodyError::TooBig(format!(
                "Get {}: response body larger than {max} bytes",
                head.shown
            )),
            ReadError::Transport(e) => BodyError::Read(read_cause(&e)),
        })
}

/// A failed body read as Go's readers report it: `unexpected EOF` (`io.ErrUnexpectedEOF`) for
/// a body that ends before its `Content-Length` or inside a chunk (hyper's `IncompleteBody`,
/// an `UnexpectedEof` I/O error) and for a TLS stream cut inside a record; else the innermost
/// cause.
fn read_cause(e: &reqwest::Error) -> String {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
        {
            return "unexpected EOF".into();
        }
        cur = err.source();
    }
    root_cause(e)
}

/// Go's `resp.Status`. Over HTTP/1 the status line after the version, as received: hyper
/// keeps a reason phrase other than the http crate's canonical one ([`hyper::ext::ReasonPhrase`],
/// an empty one included: `599 `), else the line had the canonical one. HTTP/2 has no reason
/// phrase: Go's HTTP/2 transport writes the code and `http.StatusText` ([`go_status_text`];
/// empty for a code it does not name). Bytes of a reason that are not UTF-8 are shown as
/// U+FFFD (Go prints them as they are).
fn go_status(resp: &reqwest::Response) -> String {
    let code = resp.status();
    let reason = if resp.version() >= http::Version::HTTP_2 {
        std::borrow::Cow::Borrowed(go_status_text(code.as_u16()))
    } else if let Some(reason) = resp.extensions().get::<hyper::ext::ReasonPhrase>() {
        String::from_utf8_lossy(reason.as_bytes())
    } else {
        std::borrow::Cow::Borrowed(
            code.canonical_reason()
                .unwrap_or_else(|| go_status_text(code.as_u16())),
        )
    };
    format!("{} {reason}", code.as_u16())
}

/// Go's `net/http.StatusText` (Go 1.26): the name Go gives a status code, empty for a code it
/// does not name. Some differ from the http crate's (`413 Request Entity Too Large`,
/// `414 Request URI Too Long`, `416 Requested Range Not Satisfiable`).
fn go_status_text(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Request Entity Too Large",
        414 => "Request URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Requested Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Entity",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => "",
    }
}

/// Sets `Authorization: Bearer <token>` as the one `Authorization` header, as Kubernetes'
/// `getClaimJWT` does. reqwest has already made a `Basic` header of the URL's `user:password@`
/// (net/http adds that only when no `Authorization` is set) and `bearer_auth` would append a
/// second header: `headers` replaces it. The value is marked sensitive.
fn with_bearer(req: reqwest::RequestBuilder, token: &str) -> reqwest::RequestBuilder {
    match http::HeaderValue::from_str(&format!("Bearer {token}")) {
        Ok(mut value) => {
            value.set_sensitive(true);
            let mut headers = http::HeaderMap::new();
            headers.insert(http::header::AUTHORIZATION, value);
            req.headers(headers)
        }
        // Not a valid header value: reqwest's own setter fails the request with a builder
        // error (its message does not include the value).
        Err(_) => req.bearer_auth(token),
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The background side of one remote OIDC authenticator: the initialisation task, health
/// and counters. Dropping it stops the initialisation task (a started refetch still
/// completes); keep it as long as the authenticator serves.
///
/// ```no_run
/// # async fn f(h: kube_authn::token::oidc::discovery::DiscoveryHandle) {
/// h.initialized().await.ok(); // waits until discovery and the first JWKS fetch succeeded
/// assert!(h.health().is_ok());
/// # }
/// ```
#[must_use = "dropping the handle stops the background initialisation"]
pub struct DiscoveryHandle {
    remote: Arc<Remote>,
    task: tokio::task::JoinHandle<()>,
    ready: tokio::sync::watch::Receiver<bool>,
}

impl fmt::Debug for DiscoveryHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiscoveryHandle")
            .field("issuer", &self.remote.issuer)
            .field("initialized", &*self.ready.borrow())
            .finish()
    }
}

impl DiscoveryHandle {
    /// Stops recording metrics for this issuer's fetches (its configuration was replaced);
    /// the authenticator itself keeps working for requests that still hold it.
    pub(crate) fn retire(&self) {
        self.remote.retired.store(true, Ordering::Relaxed);
    }
}

impl Drop for DiscoveryHandle {
    fn drop(&mut self) {
        self.retire();
        self.task.abort();
    }
}

impl DiscoveryHandle {
    /// The issuer URL.
    ///
    /// ```no_run
    /// # fn f(h: kube_authn::token::oidc::discovery::DiscoveryHandle) {
    /// println!("{}", h.issuer());
    /// # }
    /// ```
    pub fn issuer(&self) -> &str {
        &self.remote.issuer
    }

    /// Whether discovery and the first JWKS fetch have succeeded.
    ///
    /// ```no_run
    /// # fn f(h: kube_authn::token::oidc::discovery::DiscoveryHandle) {
    /// if !h.is_initialized() { eprintln!("still waiting for {}", h.issuer()); }
    /// # }
    /// ```
    pub fn is_initialized(&self) -> bool {
        *self.ready.borrow()
    }

    /// Waits until initialised (forever if the issuer never answers: wrap it in a timeout).
    ///
    /// ```no_run
    /// # async fn f(h: kube_authn::token::oidc::discovery::DiscoveryHandle) {
    /// tokio::time::timeout(std::time::Duration::from_secs(60), h.initialized()).await.ok();
    /// # }
    /// ```
    ///
    /// `Err` (the [`health`](Self::health) text) when the initialisation task ended without
    /// success: the authenticator was dropped, or the task died. It then never becomes ready.
    pub async fn initialized(&self) -> Result<(), String> {
        let mut rx = self.ready.clone();
        // An error means the task (the sender) is gone: ready only if it said so first.
        let ended_ready = rx.wait_for(|r| *r).await.is_ok();
        if ended_ready || *rx.borrow() {
            Ok(())
        } else {
            Err(self.unhealthy())
        }
    }

    /// Kubernetes' health check: `Ok` once initialised, else
    /// `oidc: authenticator for issuer "<url>" is not healthy: <last error>` (before the first
    /// attempt ends: `… is not healthy: oidc: authenticator for issuer "<url>" is not
    /// initialized`).
    ///
    /// ```no_run
    /// # fn f(h: kube_authn::token::oidc::discovery::DiscoveryHandle) {
    /// if let Err(e) = h.health() { eprintln!("{e}"); }
    /// # }
    /// ```
    pub fn health(&self) -> Result<(), String> {
        if self.is_initialized() {
            return Ok(());
        }
        Err(self.unhealthy())
    }

    /// The health error: the last initialisation error, or (before the first attempt ended)
    /// Kubernetes' `oidc: authenticator for issuer "<url>" is not initialized`.
    fn unhealthy(&self) -> String {
        let issuer = go_quote(&self.remote.issuer);
        let last = self
            .remote
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| {
                format!("oidc: authenticator for issuer {issuer} is not initialized")
            });
        format!("oidc: authenticator for issuer {issuer} is not healthy: {last}")
    }

    /// How many JWKS fetches were attempted (initial, retries and refetches).
    ///
    /// ```no_run
    /// # fn f(h: kube_authn::token::oidc::discovery::DiscoveryHandle) {
    /// println!("{} JWKS fetches", h.jwks_fetches());
    /// # }
    /// ```
    pub fn jwks_fetches(&self) -> u64 {
        self.remote.jwks_fetches.load(Ordering::Relaxed)
    }
}

/// Connects `authn` to its issuer: builds the HTTPS client (CA from the configuration, else
/// system roots), installs the coalesced, cooldown-limited JWKS refresher and the
/// distributed-claims fetcher, and starts the background initialisation task. Returns at
/// once, whether or not the issuer is reachable. Must be called inside a Tokio runtime.
///
/// ```no_run
/// # async fn f() -> Result<(), kube_authn::ConfigError> {
/// use std::sync::Arc;
/// use kube_authn::token::oidc::{config::OidcFlags, OidcAuthenticator, discovery::{spawn, DiscoveryOptions}};
/// let cfg = OidcFlags { issuer_url: "https://issuer.example".into(), client_id: "kube".into(), ..Default::default() }.to_config(&[])?;
/// let authn = Arc::new(OidcAuthenticator::new(cfg));
/// let handle = spawn(&authn, DiscoveryOptions::default())?;
/// # let _ = handle; Ok(()) }
/// ```
pub fn spawn(
    authn: &Arc<OidcAuthenticator>,
    opts: DiscoveryOptions,
) -> Result<DiscoveryHandle, ConfigError> {
    let rt = tokio::runtime::Handle::try_current()
        .map_err(|_| ConfigError::new("oidc: the discovery task needs a Tokio runtime"))?;
    let cfg = authn.config();
    let mut info = ConnectionInfo::new(cfg.issuer_url.clone()).with_trust_env(opts.trust_env);
    // An empty CA means the system roots (`len(CertificateAuthority) > 0` in Kubernetes).
    if let Some(ca) = cfg
        .certificate_authority
        .as_ref()
        .filter(|ca| !ca.is_empty())
    {
        info = info.with_ca(Pem::Data(ca.as_bytes().to_vec()));
    }
    let client = info.client(opts.timeout).map_err(|e| {
        ConfigError::new(format!("oidc: issuer {}: {e}", go_quote(&cfg.issuer_url)))
    })?;
    let remote = Arc::new(Remote {
        authn: Arc::downgrade(authn),
        client,
        issuer: cfg.issuer_url.clone(),
        discovery_url: discovery_url(&cfg.issuer_url, cfg.discovery_url.as_deref()),
        jwks_uri: OnceLock::new(),
        last_error: Mutex::new(None),
        jwks_fetches: AtomicU64::new(0),
        metrics: authn.metrics(),
        apiserver_id: opts.apiserver_id.clone(),
        retired: AtomicBool::new(false),
    });
    let r = remote.clone();
    authn.set_refresher(Box::new(KeyRefresher::new(
        opts.refresh_cooldown,
        move || {
            let r = r.clone();
            async move { r.refetch().await }
        },
    )));
    authn.set_claim_fetcher(Box::new(RemoteClaims::new(remote.clone())));
    let (tx, rx) = tokio::sync::watch::channel(false);
    let r = remote.clone();
    let task = rt.spawn(async move {
        let mut delay = opts.initial_retry.clamp(MIN_RETRY, opts.retry_interval.max(MIN_RETRY));
        loop {
            if r.authn.strong_count() == 0 {
                return;
            }
            match r.initialize().await {
                // The authenticator went away meanwhile: nothing was installed.
                Ok(()) if r.authn.strong_count() == 0 => return,
                Ok(()) => {
                    r.set_error(None);
                    let _ = tx.send(true);
                    tracing::info!(issuer = %r.issuer, "oidc authenticator initialized");
                    return;
                }
                Err(e) => {
                    tracing::warn!(issuer = %r.issuer, "oidc authenticator: initializing plugin: {e}");
                    r.set_error(Some(e));
                }
            }
            tokio::time::sleep(delay).await;
            delay = next_retry(delay, opts.retry_interval);
        }
    });
    Ok(DiscoveryHandle {
        remote,
        task,
        ready: rx,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::oidc::metrics::JwtAuthenticatorMetrics;

    fn claims_fetcher() -> RemoteClaims {
        RemoteClaims::new(Arc::new(remote_with(reqwest::Client::new())))
    }

    /// A remote for `https://issuer.example` that fetches with `client`.
    fn remote_with(client: reqwest::Client) -> Remote {
        static METRICS: JwtAuthenticatorMetrics = JwtAuthenticatorMetrics::new();
        Remote {
            authn: Weak::new(),
            client,
            issuer: "https://issuer.example".into(),
            discovery_url: "https://issuer.example/.well-known/openid-configuration".into(),
            jwks_uri: OnceLock::new(),
            last_error: Mutex::new(None),
            jwks_fetches: AtomicU64::new(0),
            metrics: &METRICS,
            apiserver_id: String::new(),
            retired: AtomicBool::new(false),
        }
    }

    /// A remote whose client trusts `ca` (PEM).
    fn remote_trusting(ca: &str) -> Remote {
        let client = crate::outbound::ConnectionInfo::new("https://127.0.0.1/")
            .with_ca(crate::outbound::Pem::Data(ca.as_bytes().to_vec()))
            .with_trust_env(false)
            .client(std::time::Duration::from_secs(5))
            .unwrap();
        remote_with(client)
    }

    /// An HTTPS server on 127.0.0.1 that answers every request with `head` (the status line
    /// and headers, as sent) and the body `down`, over HTTP/1.1 only (no ALPN), or over
    /// HTTP/2 (ALPN `h2`, hyper) with `code`.
    async fn status_server(h2: bool, head: &'static str, code: u16) -> (String, String) {
        let answer = format!("{head}\r\ncontent-length: 4\r\nconnection: close\r\n\r\ndown");
        raw_server(h2, answer, code, true).await
    }

    /// The server of [`status_server`]: over HTTP/1.1, writes `answer` as it is and closes the
    /// connection, with a TLS `close_notify` first or not.
    async fn raw_server(
        h2: bool,
        answer: String,
        code: u16,
        close_notify: bool,
    ) -> (String, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (ca, mut config) = crate::outbound::loopback_pki();
        if h2 {
            config.alpn_protocols = vec![b"h2".to_vec()];
        }
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("https://{}/", listener.local_addr().unwrap());
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let answer = answer.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    if h2 {
                        let service = hyper::service::service_fn(move |_req| async move {
                            let mut resp = http::Response::new(http_body_util::Full::new(
                                bytes::Bytes::from_static(b"down"),
                            ));
                            *resp.status_mut() = http::StatusCode::from_u16(code).unwrap();
                            Ok::<_, std::convert::Infallible>(resp)
                        });
                        let _ = hyper::server::conn::http2::Builder::new(
                            hyper_util::rt::TokioExecutor::new(),
                        )
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                        return;
                    }
                    let mut request = Vec::new();
                    let mut buf = [0; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tls.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let _ = tls.write_all(answer.as_bytes()).await;
                    if close_notify {
                        let _ = tls.shutdown().await;
                    } else {
                        // The TCP connection closes with no TLS close_notify.
                        let _ = tls.flush().await;
                    }
                });
            }
        });
        (ca, url)
    }

    /// A failed fetch names the status as Go's `resp.Status` does (go-oidc's discovery and
    /// JWKS errors, Kubernetes' distributed-claim error): over HTTP/1 the status line as
    /// received (a reason phrase of the server's own, an empty one); over HTTP/2, which has no
    /// reason phrase, Go's `http.StatusText` (none for an unknown code, and Go's names where
    /// they differ from the http crate's). Each HTTP/1 line's `resp.Status` was checked with Go
    /// 1.26.
    #[tokio::test]
    async fn a_failed_fetch_names_the_status_as_go_does() {
        // (case, HTTP/2, the status line or code, Go's resp.Status)
        let cases: [(&str, bool, &'static str, u16, &str); 7] = [
            (
                "a reason of the server's",
                false,
                "HTTP/1.1 503 Backend fetch failed",
                0,
                "503 Backend fetch failed",
            ),
            (
                "the canonical reason",
                false,
                "HTTP/1.1 503 Service Unavailable",
                0,
                "503 Service Unavailable",
            ),
            (
                "an unknown code, no reason",
                false,
                "HTTP/1.1 599 ",
                0,
                "599 ",
            ),
            (
                "another name than Go's",
                false,
                "HTTP/1.1 413 Payload Too Large",
                0,
                "413 Payload Too Large",
            ),
            ("HTTP/2", true, "", 503, "503 Service Unavailable"),
            ("HTTP/2, an unknown code", true, "", 599, "599 "),
            (
                "HTTP/2, Go's name",
                true,
                "",
                413,
                "413 Request Entity Too Large",
            ),
        ];
        for (case, h2, head, code, status) in cases {
            let (ca, url) = status_server(h2, head, code).await;
            let mut remote = remote_trusting(&ca);
            remote.discovery_url = url.clone();
            assert_eq!(
                remote.discover().await,
                Err(format!("{status}: down")),
                "{case}: discovery"
            );
            assert_eq!(
                remote.fetch_jwks(&url).await.err(),
                Some(format!("oidc: get keys failed: {status} down")),
                "{case}: JWKS"
            );
            assert_eq!(
                remote.get_distributed(&url, "").await,
                Err(format!(
                    "error while getting distributed claim JWT: {status}"
                )),
                "{case}: distributed claim"
            );
        }
    }

    /// A body that breaks off reads as Go's: `io.ReadAll`'s cause is `unexpected EOF` (a body
    /// shorter than its `Content-Length`, a chunk cut short; with or without a TLS
    /// `close_notify`). Discovery: go-oidc's `unable to read response body: %v`. JWKS: a `200`'s
    /// body is read by Kubernetes' metrics round tripper, whose error fails the request
    /// (`Get "<url>": error reading JWKS response: %w`, under go-oidc's `oidc: get keys failed
    /// %v`); another status's by go-oidc (`unable to read response body: %v`). Distributed
    /// claims: Kubernetes' `getClaimJWT` checks the status first and reads a 2xx body (`could
    /// not decode distributed claim response`, no cause).
    #[tokio::test]
    async fn a_body_that_breaks_off_reads_as_go() {
        let short = "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort!!";
        let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n64\r\nshort!!";
        let short_503 = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 100\r\n\r\nshort!!";
        let eof = "unable to read response body: unexpected EOF";
        let in_metrics =
            "oidc: get keys failed Get \"{URL}\": error reading JWKS response: unexpected EOF";
        let claim = "could not decode distributed claim response";
        // (case, answer, close_notify, discovery, JWKS, distributed claim)
        let cases: [(&str, &str, bool, &str, &str, &str); 5] = [
            (
                "content-length 100, 7 bytes",
                short,
                true,
                eof,
                in_metrics,
                claim,
            ),
            ("no close_notify", short, false, eof, in_metrics, claim),
            ("a chunk cut short", chunked, true, eof, in_metrics, claim),
            (
                "a chunk cut short, no close_notify",
                chunked,
                false,
                eof,
                in_metrics,
                claim,
            ),
            (
                "503, content-length 100, 7 bytes",
                short_503,
                true,
                eof,
                eof,
                "error while getting distributed claim JWT: 503 Service Unavailable",
            ),
        ];
        for (case, answer, close_notify, discovery, jwks, distributed) in cases {
            let (ca, url) = raw_server(false, answer.to_owned(), 0, close_notify).await;
            let mut remote = remote_trusting(&ca);
            remote.discovery_url = url.clone();
            assert_eq!(
                remote.discover().await,
                Err(discovery.to_owned()),
                "{case}: discovery"
            );
            assert_eq!(
                remote.fetch_jwks(&url).await.err(),
                Some(jwks.replace("{URL}", &url)),
                "{case}: JWKS"
            );
            assert_eq!(
                remote.get_distributed(&url, "at").await,
                Err(distributed.to_owned()),
                "{case}: distributed claim"
            );
        }
    }

    /// At most [`MAX_DISTRIBUTED_FETCHES`] fetches at once: one more is refused at once,
    /// without a request (here the endpoint is plain http, which is refused before any
    /// connection once a slot is free).
    #[tokio::test]
    async fn distributed_fetches_are_bounded() {
        let f = claims_fetcher();
        let held = f
            .in_flight
            .acquire_many(MAX_DISTRIBUTED_FETCHES as u32)
            .await
            .unwrap();
        let err = f
            .fetch("http://127.0.0.1:1/groups", "at")
            .await
            .unwrap_err();
        assert_eq!(
            err,
            r#"Get "http://127.0.0.1:1/groups": too many distributed claim fetches in flight (at most 64)"#
        );
        drop(held);
        let err = f
            .fetch("http://127.0.0.1:1/groups", "at")
            .await
            .unwrap_err();
        assert!(err.ends_with("only https URLs are fetched"), "{err}");
    }

    /// The retry delay never reaches zero (0 × 2 = 0 used to retry in a tight loop), doubles
    /// up to the maximum, and does not overflow.
    #[test]
    fn retry_delay_has_a_floor() {
        let ms = Duration::from_millis;
        for (delay, max, want) in [
            (Duration::ZERO, Duration::ZERO, MIN_RETRY),
            (Duration::ZERO, Duration::from_secs(10), MIN_RETRY),
            (ms(1), Duration::from_secs(10), MIN_RETRY),
            (ms(100), Duration::from_secs(10), ms(200)),
            (ms(8000), Duration::from_secs(10), Duration::from_secs(10)),
            (ms(100), ms(50), MIN_RETRY),
            (Duration::MAX, Duration::MAX, Duration::MAX),
        ] {
            assert_eq!(next_retry(delay, max), want, "{delay:?} {max:?}");
        }
    }

    /// A distributed-claims endpoint comes from a token: its password is never shown (Go's
    /// net/http `stripPassword`).
    #[tokio::test]
    async fn distributed_endpoint_password_is_not_shown() {
        let f = claims_fetcher();
        let err = f
            .fetch("http://alice:hunter2@127.0.0.1:1/groups", "at")
            .await
            .unwrap_err();
        assert_eq!(
            err,
            r#"Get "http://alice:***@127.0.0.1:1/groups": only https URLs are fetched"#
        );
        let err = f
            .fetch("https://alice:hunter2@127.0.0.1:1/groups", "at")
            .await
            .unwrap_err();
        assert!(
            err.starts_with(r#"Get "https://alice:***@127.0.0.1:1/groups": "#),
            "{err}"
        );
    }

    /// A stored body is reused within the TTL for the same endpoint and access token only,
    /// and dropped when the caller refuses it.
    #[tokio::test]
    async fn fetched_claims_are_reused_per_endpoint_and_access_token() {
        let f = claims_fetcher();
        let ep = "https://127.0.0.1:1/claims"; // nothing listens: a fetch fails at once
        let key = f.keys.key("at", Some(&[ep])).unwrap();
        f.cache
            .insert(key, (std::time::Instant::now(), b"body".to_vec()));
        assert_eq!(f.fetch(ep, "at").await.unwrap(), b"body");
        // Another access token or endpoint: not this entry.
        assert!(f.fetch(ep, "other").await.is_err());
        assert!(f.fetch("https://127.0.0.1:1/other", "at").await.is_err());
        // Refused by the verifier: gone.
        f.refused(ep, "at");
        assert!(f.fetch(ep, "at").await.is_err());
        // An entry older than the TTL is not used.
        if let Some(old) = std::time::Instant::now().checked_sub(DISTRIBUTED_CLAIM_TTL) {
            f.cache.insert(key, (old, b"stale".to_vec()));
            assert!(f.fetch(ep, "at").await.is_err());
        }
    }
}
