//! Automatic reloading of an `--authentication-config` file, as kube-apiserver does it
//! (`pkg/kubeapiserver/options/authentication.go`, `ApplyTo`):
//!
//! * the file is read again every [`ReloadOptions::poll_interval`]; text equal to the last text
//!   tracked changes nothing;
//! * text that does not decode (logged `failed to load authentication config: …`) or
//!   validate (Kubernetes' rules, the service-account issuers still refused), or whose
//!   `anonymous` section differs from the one the server started with (`anonymous: Forbidden:
//!   changed from initial configuration file`, after the validation errors), is a **failure**
//!   (logged `failed to validate authentication config: …` with all of them, `[e1, e2]`) and is
//!   tracked, so it is not retried until the file changes again;
//! * otherwise new JWT authenticators are built and started; once every issuer is initialised
//!   (discovery and a key set with a usable key), within [`ReloadOptions::update_timeout`]
//!   (Kubernetes: one minute), they replace the old ones atomically and the reload is a
//!   **success**. An issuer that does not come up in time, or a file that cannot be read, is a
//!   failure that is **not** tracked: it is tried again after [`ReloadOptions::retry_interval`],
//!   or as soon as the file changes;
//! * replaced (or never applied) authenticators stop recording JWKS metrics, and the series of
//!   issuers the configuration in effect does not have are removed;
//! * every attempt is counted in [`ConfigControllerMetrics`], which also carries the hash of the
//!   configuration in effect from start-up on.
//!
//! Until a reload succeeds, the authenticators of the previous configuration keep answering. A
//! request already inside an old authenticator finishes with it (it holds it); Kubernetes
//! instead cancels the old authenticators one minute after the swap.
//!
//! ```no_run
//! # async fn f() -> Result<(), kube_authn::ConfigError> {
//! use kube_authn::token::oidc::discovery::DiscoveryOptions;
//! use kube_authn::token::oidc::reload::{AuthenticationConfigReloader, ReloadOptions};
//! let path = std::path::PathBuf::from("/etc/kubernetes/authn.yaml");
//! let data = std::fs::read(&path).unwrap();
//! let reloader = AuthenticationConfigReloader::start(
//!     path, data, None, vec![], DiscoveryOptions::default(), ReloadOptions::default())?;
//! let authenticator = reloader.authenticator(); // put it in the token chain
//! # let _ = authenticator; Ok(()) }
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;

use super::config::{
    AnonymousSection, JwtAuthenticatorConfig, aggregate, anonymous_section,
    check_authentication_configuration, reread_authentication_configuration,
};
use super::discovery::DiscoveryOptions;
use super::metrics::{AUTHENTICATION_CONFIG_CONTROLLER_METRICS, ConfigControllerMetrics};
use super::remote::{OidcAuthenticators, jwt_configs, start};
use crate::authenticator::{Audiences, AuthFuture, Context, TokenAuthenticator};
use crate::error::ConfigError;
use crate::jwt::router::IssuerRouter;

/// How the reloader polls and waits.
///
/// ```
/// let o = kube_authn::token::oidc::reload::ReloadOptions::default();
/// assert_eq!(o.update_timeout, std::time::Duration::from_secs(60));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReloadOptions {
    /// How often the file is read and compared. Default 1 s (Kubernetes watches the file and
    /// also polls it every minute).
    pub poll_interval: Duration,
    /// How long new authenticators may take to initialise before the reload fails.
    /// Default 60 s (Kubernetes' `UpdateAuthenticationConfigTimeout`).
    pub update_timeout: Duration,
    /// Wait before retrying after a failure that is not tracked (an unreadable file, an issuer
    /// that did not come up). Default 60 s (Kubernetes' poll period).
    pub retry_interval: Duration,
    /// The API server identity the metrics are labelled with (hashed). Default empty.
    pub apiserver_id: String,
    /// Where attempts are counted. Default the process-wide
    /// [`AUTHENTICATION_CONFIG_CONTROLLER_METRICS`].
    pub metrics: &'static ConfigControllerMetrics,
}

impl Default for ReloadOptions {
    fn default() -> Self {
        Self {
            poll_interval: Duration::from_secs(1),
            update_timeout: Duration::from_secs(60),
            retry_interval: Duration::from_secs(60),
            apiserver_id: String::new(),
            metrics: &AUTHENTICATION_CONFIG_CONTROLLER_METRICS,
        }
    }
}

impl ReloadOptions {
    /// Sets the poll interval, the update timeout and the retry interval.
    ///
    /// ```
    /// use std::time::Duration;
    /// let o = kube_authn::token::oidc::reload::ReloadOptions::default()
    ///     .with_timing(Duration::from_millis(50), Duration::from_secs(2), Duration::from_millis(200));
    /// assert_eq!(o.poll_interval, Duration::from_millis(50));
    /// ```
    pub fn with_timing(
        mut self,
        poll: Duration,
        update_timeout: Duration,
        retry: Duration,
    ) -> Self {
        self.poll_interval = poll.max(Duration::from_millis(1));
        self.update_timeout = update_timeout;
        self.retry_interval = retry.max(Duration::from_millis(1));
        self
    }

    /// Sets the API server identity of the metrics.
    ///
    /// ```
    /// let o = kube_authn::token::oidc::reload::ReloadOptions::default().with_apiserver_id("apiserver-x");
    /// assert_eq!(o.apiserver_id, "apiserver-x");
    /// ```
    pub fn with_apiserver_id(mut self, id: impl Into<String>) -> Self {
        self.apiserver_id = id.into();
        self
    }

    /// Counts into `metrics` instead of the process-wide registry.
    ///
    /// ```
    /// use kube_authn::token::oidc::metrics::ConfigControllerMetrics;
    /// static MINE: ConfigControllerMetrics = ConfigControllerMetrics::new();
    /// let o = kube_authn::token::oidc::reload::ReloadOptions::default().with_metrics(&MINE);
    /// ```
    pub fn with_metrics(mut self, metrics: &'static ConfigControllerMetrics) -> Self {
        self.metrics = metrics;
        self
    }
}

/// One configuration's authenticators: the router the chain asks, and what keeps their
/// discovery running.
struct Generation {
    router: IssuerRouter,
    running: Option<OidcAuthenticators>,
}

impl Generation {
    /// Retires this generation's discovery (no more metrics from it) and forgets the JWKS
    /// series of its issuers that `current` does not have (Kubernetes'
    /// `DeleteJWKSFetchMetrics`).
    fn retire(&self, current: &Generation, apiserver_id: &str) {
        let Some(running) = &self.running else {
            return;
        };
        running.retire();
        let kept = current.issuer_urls();
        for a in &running.authenticators {
            if !kept.iter().any(|k| k == a.issuer_url()) {
                a.metrics().delete_jwks(a.issuer_url(), apiserver_id);
            }
        }
    }

    fn issuer_urls(&self) -> Vec<String> {
        self.running.as_ref().map_or_else(Vec::new, |r| {
            r.authenticators
                .iter()
                .map(|a| a.issuer_url().to_owned())
                .collect()
        })
    }
}

struct Shared {
    current: ArcSwap<Generation>,
}

/// The token authenticator of the configuration in effect (see [`AuthenticationConfigReloader::authenticator`]).
struct Current(Arc<Shared>);

impl TokenAuthenticator for Current {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        {
            // The common case answers at once: no reference count is taken.
            let generation = self.0.current.load();
            if let Ok(result) = generation
                .router
                .authenticate_token(token, ctx)
                .into_ready()
            {
                return AuthFuture::ready(result);
            }
        }
        // It has to wait (a key refetch, distributed claims): the future owns the generation,
        // so a reload meanwhile does not pull it away. The synchronous checks the first call
        // made (claims, and on the distributed-claims path the signature) are made again: the
        // price of not counting references on the common path. The first future was never
        // polled, so nothing was fetched or recorded twice.
        let generation = self.0.current.load_full();
        AuthFuture::new(async move { generation.router.authenticate_token(token, ctx).await })
    }
}

/// An `--authentication-config` file's JWT authenticators, reloaded when the file changes (see
/// the [module docs](self)). Dropping it stops the reloading; the authenticator it handed out
/// keeps the configuration last in effect.
///
/// ```no_run
/// # fn f(r: kube_authn::token::oidc::reload::AuthenticationConfigReloader) {
/// let chain_part = r.authenticator();
/// # let _ = chain_part; }
/// ```
pub struct AuthenticationConfigReloader {
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for AuthenticationConfigReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthenticationConfigReloader")
            .field("issuers", &self.issuers())
            .finish()
    }
}

impl Drop for AuthenticationConfigReloader {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a reload needs besides the file: the server's fixed settings.
struct Settings {
    path: PathBuf,
    api_audiences: Option<Audiences>,
    disallowed_issuers: Vec<String>,
    discovery: DiscoveryOptions,
    reload: ReloadOptions,
    /// The `anonymous` section the server started with; a reload may not change it (compared
    /// as Kubernetes compares the decoded sections: `conditions: []` is not an absent list).
    anonymous: Option<AnonymousSection>,
}

impl AuthenticationConfigReloader {
    /// Builds the authenticators of `data` (the file's text at start-up, already read from
    /// `path`), starts their discovery, and starts watching `path`. Errors in `data` are
    /// returned (the server does not start); later errors only fail a reload. Must be called
    /// inside a Tokio runtime.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), kube_authn::ConfigError> {
    /// use kube_authn::token::oidc::{discovery::DiscoveryOptions, reload::{AuthenticationConfigReloader, ReloadOptions}};
    /// let data = b"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n".to_vec();
    /// let r = AuthenticationConfigReloader::start("authn.yaml".into(), data, None, vec![],
    ///     DiscoveryOptions::default(), ReloadOptions::default())?;
    /// # drop(r); Ok(()) }
    /// ```
    pub fn start(
        path: PathBuf,
        data: Vec<u8>,
        api_audiences: Option<Audiences>,
        disallowed_issuers: Vec<String>,
        discovery: DiscoveryOptions,
        reload: ReloadOptions,
    ) -> Result<Self, ConfigError> {
        let rt = tokio::runtime::Handle::try_current().map_err(|_| {
            ConfigError::new("--authentication-config: reloading needs a Tokio runtime")
        })?;
        let settings = Settings {
            anonymous: anonymous_section(&data)?,
            path,
            api_audiences,
            disallowed_issuers,
            discovery,
            reload,
        };
        let first = settings.build(&data)?;
        settings
            .reload
            .metrics
            .record_config(&settings.reload.apiserver_id, &data);
        let shared = Arc::new(Shared {
            current: ArcSwap::from_pointee(first),
        });
        let task = rt.spawn(watch(shared.clone(), settings, data));
        Ok(Self { shared, task })
    }

    /// The token authenticator of the configuration in effect, for the chain (kube-apiserver
    /// wraps it audience-agnostic; the authenticators built here already are when
    /// `api_audiences` was given).
    ///
    /// ```no_run
    /// # fn f(r: kube_authn::token::oidc::reload::AuthenticationConfigReloader) {
    /// let a: std::sync::Arc<dyn kube_authn::authenticator::TokenAuthenticator> = r.authenticator();
    /// # }
    /// ```
    pub fn authenticator(&self) -> Arc<dyn TokenAuthenticator> {
        Arc::new(Current(self.shared.clone()))
    }

    /// The issuers of the configuration in effect.
    ///
    /// ```no_run
    /// # fn f(r: kube_authn::token::oidc::reload::AuthenticationConfigReloader) {
    /// println!("{} issuers", r.issuers());
    /// # }
    /// ```
    pub fn issuers(&self) -> usize {
        self.shared
            .current
            .load()
            .running
            .as_ref()
            .map_or(0, |r| r.authenticators.len())
    }
}

impl Settings {
    /// Decodes and validates `data` and starts its authenticators (discovery in the
    /// background).
    fn build(&self, data: &[u8]) -> Result<Generation, ConfigError> {
        let configs = jwt_configs(&Default::default(), Some(data), &self.disallowed_issuers)?;
        self.start(configs)
    }

    /// Starts the authenticators of validated `configs` (discovery in the background).
    fn start(&self, configs: Vec<JwtAuthenticatorConfig>) -> Result<Generation, ConfigError> {
        let mut router = IssuerRouter::new();
        let running = if configs.is_empty() {
            None
        } else {
            Some(start(
                configs,
                self.api_audiences.clone(),
                self.discovery.clone(),
                &mut router,
            )?)
        };
        Ok(Generation { router, running })
    }

    /// Everything short of waiting for the issuers: the new generation, or why this text can
    /// never be applied, in kube-apiserver's steps: the decoding (an empty text included),
    /// then the validation, the `anonymous` section compared after it and its change the last
    /// error of the list, then the authenticators built.
    fn prepare(&self, data: &[u8]) -> Result<Generation, Failure> {
        let checked = check_authentication_configuration(data, &self.disallowed_issuers)
            .map_err(Failure::Load)?;
        let (configs, mut errs) = match checked.jwt {
            Ok(configs) => (configs, Vec::new()),
            Err(errs) => (Vec::new(), errs),
        };
        if checked.anonymous != self.anonymous {
            errs.push("anonymous: Forbidden: changed from initial configuration file".to_owned());
        }
        if !errs.is_empty() {
            return Err(Failure::Validate(aggregate(errs)));
        }
        self.start(configs).map_err(Failure::Build)
    }
}

/// Why a text that was read cannot be applied (each is tracked: tried again only when the
/// file changes).
#[derive(Debug)]
enum Failure {
    /// It does not decode: kube-apiserver's `failed to load authentication config`.
    Load(ConfigError),
    /// It does not validate, or changes the `anonymous` section: `failed to validate
    /// authentication config`.
    Validate(ConfigError),
    /// Its authenticators cannot be built (an HTTPS client refused), as kube-apiserver's
    /// update step fails: `failed to update authentication config`.
    Build(ConfigError),
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Failure::Load(e)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Load(e) => write!(f, "failed to load authentication config: {e}"),
            Failure::Validate(e) => write!(f, "failed to validate authentication config: {e}"),
            Failure::Build(e) => write!(f, "failed to update authentication config: {e}"),
        }
    }
}

/// The file, read as at start-up (at most
/// [`MAX_AUTHENTICATION_CONFIG_BYTES`](super::config::MAX_AUTHENTICATION_CONFIG_BYTES); a
/// longer file is an error naming it and the limit, not a read of all of it), an `open` or
/// `read` failure worded as `os.ReadFile`'s (`open <path>: no such file or directory`).
async fn read_bounded(path: &std::path::Path) -> Result<Vec<u8>, ConfigError> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || reread_authentication_configuration(&path))
        .await
        .unwrap_or_else(|e| Err(ConfigError::new(format!("reading the file: {e}"))))
}

/// Runs `prepare` on the blocking pool, handing back the text with its outcome. A panic in
/// `prepare` is a failure of this text (the panic hook reports it), so the text comes back
/// with it: the watcher tracks it and tries it again only when the file changes, not at
/// every poll.
async fn prepare_blocking<T: Send + 'static, E: From<ConfigError> + Send + 'static>(
    data: Vec<u8>,
    prepare: impl FnOnce(&[u8]) -> Result<T, E> + Send + 'static,
) -> (Vec<u8>, Result<T, E>) {
    tokio::task::spawn_blocking(move || {
        let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| prepare(&data)))
            .unwrap_or_else(|_| {
                Err(ConfigError::new("decoding the file: the decoder panicked").into())
            });
        (data, prepared)
    })
    .await
    .unwrap_or_else(|e| {
        // Cancelled (the runtime is shutting down): nothing to track.
        (
            Vec::new(),
            Err(ConfigError::new(format!("decoding the file: {e}")).into()),
        )
    })
}

/// Polls the file and applies changes until aborted.
async fn watch(shared: Arc<Shared>, settings: Settings, initial: Vec<u8>) {
    let settings = Arc::new(settings);
    let mut tracked = initial;
    let metrics = settings.reload.metrics;
    let id = settings.reload.apiserver_id.clone();
    let jwks_id = settings.discovery.apiserver_id.clone();
    loop {
        tokio::time::sleep(settings.reload.poll_interval).await;
        let data = match read_bounded(&settings.path).await {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(path = %settings.path.display(), "failed to read authentication config file: {e}");
                metrics.record_reload(&id, None, SystemTime::now());
                // Not tracked: the file may come back.
                settings.wait_retry(None).await;
                continue;
            }
        };
        if data == tracked {
            continue;
        }
        // Decoding a large file is CPU work (the reading is on the blocking pool too).
        let (data, prepared) = {
            let settings = Arc::clone(&settings);
            prepare_blocking(data, move |data| settings.prepare(data)).await
        };
        let generation = match prepared {
            Ok(g) => g,
            Err(failure) => {
                // `failed to load …` / `failed to validate …` / `failed to update …`.
                tracing::error!("{failure}");
                metrics.record_reload(&id, None, SystemTime::now());
                // This text will never be valid: wait for the file to change.
                tracked = data;
                continue;
            }
        };
        let ready = match &generation.running {
            Some(running) => {
                // An issuer whose initialisation task ended without success never comes up:
                // its error at once, not after the timeout (nor `Ok`, as it used to be).
                match tokio::time::timeout(settings.reload.update_timeout, running.initialized())
                    .await
                {
                    Ok(ready) => ready,
                    Err(_) => Err(running
                        .health()
                        .err()
                        .unwrap_or_else(|| "timed out".to_owned())),
                }
            }
            None => Ok(()),
        };
        if let Err(e) = ready {
            tracing::error!("failed to update authentication config: {e}");
            metrics.record_reload(&id, None, SystemTime::now());
            generation.retire(&shared.current.load(), &jwks_id);
            drop(generation);
            // Not tracked: the issuer may come up; try again later (or when the file changes).
            settings.wait_retry(Some(&data)).await;
            continue;
        }
        let generation = Arc::new(generation);
        let old = shared.current.swap(generation.clone());
        old.retire(&generation, &jwks_id);
        metrics.record_reload(&id, Some(&data), SystemTime::now());
        tracing::info!("reloaded authentication config");
        tracked = data;
    }
}

impl Settings {
    /// After a failure that is tried again: waits `retry_interval`, or less if the file
    /// changes meanwhile (`failed`: the text that failed, `None` when it could not be read),
    /// as kube-apiserver reacts to a file event at once.
    async fn wait_retry(&self, failed: Option<&[u8]>) {
        let deadline = tokio::time::Instant::now() + self.reload.retry_interval;
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(self.reload.poll_interval).await;
            match (read_bounded(&self.path).await, failed) {
                (Ok(now), Some(failed)) if now != failed => return,
                (Ok(_), None) => return,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text whose decoding panics comes back with the failure, so the watcher tracks it
    /// and decodes it again only when the file changes (not at every poll).
    #[tokio::test]
    async fn a_panicking_decode_hands_back_the_text() {
        let (data, got) = prepare_blocking(b"kind: x\n".to_vec(), |_| -> Result<(), ConfigError> {
            panic!("decoder bug")
        })
        .await;
        assert_eq!(data, b"kind: x\n");
        assert_eq!(
            got.unwrap_err().to_string(),
            "decoding the file: the decoder panicked"
        );
        let (data, got) = prepare_blocking(b"ok".to_vec(), |d| Ok::<_, ConfigError>(d.len())).await;
        assert_eq!((data.as_slice(), got.ok()), (&b"ok"[..], Some(2)));
    }

    /// Start-up errors: no runtime to watch on, and a configuration that does not validate
    /// (returned at once: the server does not start, as kube-apiserver's does not).
    #[test]
    fn start_errors() {
        let path = PathBuf::from("authn.yaml");
        let empty = b"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
        let start = |data: &[u8]| {
            AuthenticationConfigReloader::start(
                path.clone(),
                data.to_vec(),
                None,
                vec!["https://kubernetes.default.svc".into()],
                DiscoveryOptions::default(),
                ReloadOptions::default(),
            )
            .map(drop)
            .map_err(|e| e.to_string())
        };
        assert_eq!(
            start(empty),
            Err("--authentication-config: reloading needs a Tokio runtime".to_owned())
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        assert_eq!(start(empty), Ok(()));
        let sa_issuer = b"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://kubernetes.default.svc\n    audiences: [a]\n  claimMappings:\n    username:\n      claim: sub\n      prefix: \"\"\n";
        let err = start(sa_issuer).unwrap_err();
        assert!(err.contains("https://kubernetes.default.svc"), "{err}");
    }

    /// A reload may not change the `anonymous` section, compared as kube-apiserver compares it
    /// (`reflect.DeepEqual` of the decoded sections; the pairs Go found equal and unequal): an
    /// absent `conditions` (or `null`) is not `[]`, an absent section is `null`, `{}` is
    /// `{enabled: false}`, and `yes` is `true`.
    #[test]
    fn anonymous_section_changes_are_compared_as_kubernetes_compares_them() {
        const HEAD: &str =
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
        const FORBIDDEN: &str = "anonymous: Forbidden: changed from initial configuration file";
        let settings = |initial: &str| Settings {
            path: PathBuf::from("authn.yaml"),
            api_audiences: None,
            disallowed_issuers: Vec::new(),
            discovery: DiscoveryOptions::default(),
            reload: ReloadOptions::default(),
            anonymous: anonymous_section(format!("{HEAD}{initial}").as_bytes()).unwrap(),
        };
        let cases: &[(&str, &str, bool)] = &[
            (
                "anonymous: {enabled: true}\n",
                "anonymous: {enabled: true}\n",
                true,
            ),
            (
                "anonymous: {enabled: true}\n",
                "anonymous: {enabled: true, conditions: null}\n",
                true,
            ),
            (
                "anonymous: {enabled: true}\n",
                "anonymous: {enabled: yes}\n",
                true,
            ),
            (
                "anonymous: {enabled: true}\n",
                "anonymous: {enabled: true, conditions: []}\n",
                false,
            ),
            ("anonymous: {enabled: true}\n", "", false),
            ("", "anonymous: null\n", true),
            ("", "anonymous: {}\n", false),
            ("anonymous: {}\n", "anonymous: {enabled: false}\n", true),
            (
                "anonymous: {enabled: true, conditions: [{path: /a}]}\n",
                "anonymous: {enabled: true, conditions: [{path: /a}]}\n",
                true,
            ),
            (
                "anonymous: {enabled: true, conditions: [{path: /a}]}\n",
                "anonymous: {enabled: true, conditions: [{path: /b}]}\n",
                false,
            ),
        ];
        for &(initial, reloaded, same) in cases {
            let got = settings(initial)
                .prepare(format!("{HEAD}{reloaded}").as_bytes())
                .map(drop)
                .map_err(|e| e.to_string());
            let want = if same {
                Ok(())
            } else {
                Err(format!(
                    "failed to validate authentication config: {FORBIDDEN}"
                ))
            };
            assert_eq!(got, want, "{initial:?} → {reloaded:?}");
        }
    }
}
