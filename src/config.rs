//! kube-apiserver's authentication flags, as a plain struct, turned into a [`Chain`].
//!
//! [`AuthenticationOptions`] mirrors the flags of `kube-apiserver` (and `kube-authn serve`)
//! field by field, with kube-apiserver's defaults, and [`AuthenticationOptions::build`]
//! assembles the chain in kube-apiserver's order (`pkg/kubeapiserver/authenticator/config.go`):
//!
//! ```text
//! front proxy (--requestheader-*, audience-agnostic)
//! basic auth (--basic-auth-file, the ≤1.18 position)
//! Keystone Basic auth (--experimental-keystone-url, ≤1.10)
//! client certificates (--client-ca-file)
//! bearer + WebSocket over union(
//!     token file (--token-auth-file, audience-agnostic),
//!     service-account tokens, legacy then bound (--service-account-key-file,
//!         --service-account-issuer; audience-aware), routed by issuer,
//!     OIDC issuers (--oidc-*, --authentication-config; discovered in the background),
//!     webhook TokenReview (--authentication-token-webhook-config-file, behind its own cache),
//! )
//! → system:authenticated group adder
//! → fail-on-error union with anonymous (--anonymous-auth, default true; or the
//!   --authentication-config file's `anonymous` section)
//! ```
//!
//! `--api-audiences` defaults to the `--service-account-issuer` values, as in kube-apiserver.
//!
//! Files are watched and reloaded (see [`crate::reload`]), and OIDC issuers are discovered, by
//! background tasks the returned [`Built`] owns: keep the whole [`Built`] (not only its
//! [`chain`](Built::chain)) alive for as long as the chain is used. Dropping it stops them:
//!
//! * [`Built::tasks`]: the token, password, client-CA and request-header-CA files are no
//!   longer reloaded (the chain keeps serving their last content);
//! * `Built::oidc` (feature `remote`): issuers not discovered yet never are, and every token
//!   they would verify fails with `oidc: authenticator not initialized`;
//! * `Built::authentication_config` (feature `remote`): the `--authentication-config` file
//!   is no longer reloaded (the chain keeps the configuration last in effect).
//!
//! So `let chain = options.build()?.chain;` compiles but drops them all at once.
//!
//! ```no_run
//! use kube_authn::config::AuthenticationOptions;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let options = AuthenticationOptions {
//!     token_auth_file: Some("/etc/kubernetes/tokens.csv".into()),
//!     anonymous_auth: Some(false),
//!     ..AuthenticationOptions::default()
//! };
//! let built = options.build().expect("valid configuration");
//! assert!(built.chain.schemes().bearer());
//! # });
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::authenticator::{Audiences, RequestAuthenticator};
use crate::chain::anonymous::Anonymous;
use crate::chain::audiences::AudienceAgnostic;
use crate::chain::{Chain, ChainBuilder};
use crate::error::ConfigError;
use crate::jwt::router::IssuerRouter;
use crate::password::file::PasswordFile;
use crate::reload::WatchTask;
use crate::request::{Basic, BuildError, FrontProxy, RequestHeaderConfig};
use crate::token::anytoken::AnyToken;
use crate::token::file::TokenFile;
use crate::token::service_account::ServiceAccountOptions;
use crate::x509::{CaBundle, X509Authenticator};

/// The startup warning of `--service-account-lookup=false` without
/// `--service-account-lookup-kubeconfig`.
const NO_BOUND_LOOKUP: &str = "--service-account-lookup=false without --service-account-lookup-kubeconfig: bound service-account tokens are not checked against the API server (a token stays valid until it expires after its pod, secret, node or service account is deleted); kube-apiserver always checks them";

/// Why `--service-account-lookup=true` cannot start without an API server to ask.
const NO_LOOKUP: &str = "--service-account-lookup=true needs the cluster's service accounts, secrets, pods and nodes: set --service-account-lookup-kubeconfig (or run in a pod with a service account), or set --service-account-lookup=false (tokens are then valid until they expire, whatever happens to the objects they name)";

/// How often watched files are checked for changes.
///
/// ```
/// use std::time::Duration;
/// use kube_authn::config::{AuthenticationOptions, DEFAULT_RELOAD_INTERVAL};
/// assert_eq!(DEFAULT_RELOAD_INTERVAL, Duration::from_secs(1));
/// assert_eq!(AuthenticationOptions::default().reload_interval, DEFAULT_RELOAD_INTERVAL);
/// ```
pub const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// kube-apiserver's authentication flags. See the [module docs](self).
///
/// ```
/// let o = kube_authn::config::AuthenticationOptions::default();
/// assert_eq!(o.anonymous_auth, None); // not set: anonymous requests allowed, as in kube-apiserver
/// ```
#[derive(Clone, Debug)]
pub struct AuthenticationOptions {
    /// `--token-auth-file`: static tokens, CSV `token,user,uid,"group1,group2"`.
    pub token_auth_file: Option<PathBuf>,
    /// `--client-ca-file`: CA bundle that client certificates must chain to; the certificate's
    /// last CN is the user name and its O values the groups. Reloaded when it changes.
    pub client_ca_file: Option<PathBuf>,
    /// `--basic-auth-file`: static passwords, CSV `password,user,uid,"group1,group2"`
    /// (removed from kube-apiserver in 1.19).
    pub basic_auth_file: Option<PathBuf>,
    /// `--experimental-keystone-url` (removed from kube-apiserver in 1.11): Basic credentials
    /// are checked against this OpenStack Identity v3 endpoint (https only; feature `remote`).
    pub experimental_keystone_url: Option<String>,
    /// `--experimental-keystone-ca-file`: the CA bundle that signs the Keystone server's
    /// certificate (default: the system roots).
    pub experimental_keystone_ca_file: Option<PathBuf>,
    /// `--requestheader-client-ca-file`, `--requestheader-allowed-names`,
    /// `--requestheader-{username,uid,group}-headers`, `--requestheader-extra-headers-prefix`:
    /// the authenticating front proxy, enabled when a CA is set. kube-apiserver's defaults
    /// are all empty ([`RequestHeaderConfig::default`]); kubeadm sets
    /// [`RequestHeaderConfig::standard`]'s names and `front-proxy-client`.
    pub requestheader: RequestHeaderConfig,
    /// `--anonymous-auth`; `None` when not set, which means true unless the
    /// `--authentication-config` file has an `anonymous` section (that section and an
    /// explicit flag together are an error, as in kube-apiserver).
    pub anonymous_auth: Option<bool>,
    /// `--api-audiences`.
    pub api_audiences: Vec<String>,
    /// `--service-account-key-file` (repeatable): PEM public keys (or RSA / SEC1 EC private
    /// keys, whose public half is used) that verify service-account tokens. Read at startup.
    pub service_account_key_files: Vec<PathBuf>,
    /// `--service-account-issuer` (repeatable): the accepted `iss` values of bound tokens;
    /// also the default `--api-audiences`.
    pub service_account_issuers: Vec<String>,
    /// `--service-account-lookup` (default true): check that the service account (and for
    /// legacy tokens the secret, for bound tokens the pod, secret or node) still exists, through
    /// the API server named by [`service_account_lookup_kubeconfig`](Self::service_account_lookup_kubeconfig)
    /// or, inside a pod, the in-cluster configuration (feature `remote`). With neither, `true`
    /// together with key files is a startup error; see `docs/compatibility.md`. As in
    /// kube-apiserver, `false` affects legacy tokens only: bound tokens are still looked up
    /// when a kubeconfig is given (without one they are trusted, with a startup warning).
    pub service_account_lookup: bool,
    /// `--service-account-lookup-kubeconfig` (kube-authn only): the kubeconfig of the API
    /// server that service-account lookups ask (`get` on serviceaccounts, secrets, pods,
    /// nodes); used for bound tokens even with `--service-account-lookup=false`.
    pub service_account_lookup_kubeconfig: Option<PathBuf>,
    /// `--oidc-issuer-url`, `--oidc-client-id`, `--oidc-ca-file`, `--oidc-username-claim`,
    /// `--oidc-username-prefix`, `--oidc-groups-claim`, `--oidc-groups-prefix`,
    /// `--oidc-required-claim`, `--oidc-signing-algs` (feature `remote`): one OpenID Connect
    /// issuer, discovered in the background (start-up never waits for it).
    pub oidc: crate::token::oidc::config::OidcFlags,
    /// `--authentication-config`: an `AuthenticationConfiguration` file whose `jwt[]` issuers
    /// are authenticated like `--oidc-*` (mutually exclusive with those flags; feature `remote`).
    pub authentication_config: Option<PathBuf>,
    /// `--authentication-token-webhook-config-file`: a kubeconfig naming the TokenReview
    /// webhook (needs the `remote` feature).
    pub authentication_token_webhook_config_file: Option<PathBuf>,
    /// `--authentication-token-webhook-version` (`v1` or `v1beta1`, default `v1beta1`).
    pub authentication_token_webhook_version: String,
    /// `--authentication-token-webhook-cache-ttl` (default 2m): how long the webhook's
    /// answers (successes and denials, never errors) are cached.
    pub authentication_token_webhook_cache_ttl: Duration,
    /// `--insecure-allow-any-token` (removed from kube-apiserver in 1.8): accept **any** bearer
    /// token as `user/group1,group2`. Never use outside throw-away test setups.
    pub insecure_allow_any_token: bool,
    /// How often watched files are checked for changes.
    pub reload_interval: Duration,
    /// The API server identity the OIDC authenticators' JWKS fetch metrics carry (as
    /// `apiserver_id_hash`); see [`crate::token::oidc::metrics::apiserver_id`]. Default empty.
    pub apiserver_id: String,
}

impl Default for AuthenticationOptions {
    fn default() -> Self {
        Self {
            token_auth_file: None,
            client_ca_file: None,
            basic_auth_file: None,
            experimental_keystone_url: None,
            experimental_keystone_ca_file: None,
            requestheader: RequestHeaderConfig::default(),
            anonymous_auth: None,
            api_audiences: Vec::new(),
            service_account_key_files: Vec::new(),
            service_account_issuers: Vec::new(),
            service_account_lookup: true,
            service_account_lookup_kubeconfig: None,
            oidc: crate::token::oidc::config::OidcFlags::default(),
            authentication_config: None,
            authentication_token_webhook_config_file: None,
            authentication_token_webhook_version: "v1beta1".into(),
            authentication_token_webhook_cache_ttl: Duration::from_secs(120),
            insecure_allow_any_token: false,
            reload_interval: DEFAULT_RELOAD_INTERVAL,
            apiserver_id: String::new(),
        }
    }
}

/// A built chain and the background tasks that keep it working.
///
/// **Keep the whole `Built` alive for as long as [`chain`](Self::chain) is used**, not only
/// the chain: the chain does not own these tasks, and dropping the fields below stops them
/// (there is no error, the chain just goes stale or refuses tokens):
///
/// * [`tasks`](Self::tasks): the reload tasks of the `--token-auth-file`,
///   `--basic-auth-file`, `--client-ca-file` and `--requestheader-client-ca-file` files;
///   dropped, the chain keeps their content as it was then.
/// * `oidc` (feature `remote`): the discovery of the `--oidc-*` issuer, which runs in the
///   background until the issuer answers; dropped before that, every token for the issuer
///   fails with `oidc: authenticator not initialized`.
/// * `authentication_config` (feature `remote`): the `--authentication-config` file's
///   reloader; dropped, the file is no longer reloaded (the chain keeps the configuration
///   last in effect, whose issuers' discovery the chain itself keeps running).
///
/// `let chain = options.build()?.chain;` compiles, and drops all of them at once. Bind the
/// result instead, and clone the chain out of it:
///
/// ```no_run
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let built = kube_authn::config::AuthenticationOptions::default().build().unwrap();
/// let _chain = built.chain.clone();
/// // … serve with `_chain`, keeping `built` alive until the server stops …
/// drop(built);
/// # });
/// ```
///
/// A `Built` dropped as soon as it is built is refused under `#![deny(unused_must_use)]`
/// (a warning otherwise):
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// kube_authn::config::AuthenticationOptions::default().build().unwrap();
/// # });
/// ```
#[derive(Debug)]
#[must_use = "dropping Built stops file reloading and OIDC discovery: keep it alive while its chain is used"]
pub struct Built {
    /// The chain.
    pub chain: Chain,
    /// The API audiences to put on each request (see the middleware).
    pub api_audiences: Audiences,
    /// The `--client-ca-file` bundle as loaded at start-up, not followed when the file is
    /// reloaded: a start-up snapshot (`Some` tells that an X.509 authenticator was built).
    /// The TLS handshake's acceptable client CAs come from
    /// [`ca_hint_sources`](Self::ca_hint_sources) instead.
    pub client_ca: Option<Arc<CaBundle>>,
    /// The `--requestheader-client-ca-file` bundle as loaded at start-up, not followed when
    /// the file is reloaded: a start-up snapshot (`Some` tells that a front-proxy
    /// authenticator was built). The handshake's hints come from
    /// [`ca_hint_sources`](Self::ca_hint_sources) instead.
    pub requestheader_ca: Option<Arc<CaBundle>>,
    /// The client CA, then the request-header CA, as they are now (reloaded with their
    /// files): what the TLS handshake names as acceptable client CAs (a hint only:
    /// certificates are verified per request; the front proxy must be asked for its
    /// certificate), through `tls::DynamicServerConfig`, as kube-apiserver's dynamic
    /// client-CA content does.
    pub ca_hint_sources: Vec<Arc<dyn crate::x509::CaBundleSource>>,
    /// Reload tasks of the files; dropping them stops reloading (keep them alive while the
    /// chain is used).
    pub tasks: Vec<WatchTask>,
    /// The OIDC issuers' authenticators and discovery tasks; dropping them stops the
    /// background initialisation of issuers not reached yet, whose tokens then all fail
    /// with `oidc: authenticator not initialized` (keep it alive while the chain is used).
    #[cfg(feature = "remote")]
    pub oidc: Option<crate::token::oidc::remote::OidcAuthenticators>,
    /// The `--authentication-config` file's reloader (its JWT authenticators); dropping it
    /// stops reloading (keep it alive while the chain is used).
    #[cfg(feature = "remote")]
    pub authentication_config: Option<crate::token::oidc::reload::AuthenticationConfigReloader>,
}

/// The service-account authenticators behind the 10 s token cache, for tokens they own only.
///
/// A token whose unverified `iss` is not a service-account issuer ([`IssuerRouter::owns`]:
/// webhook tokens, other issuers' JWTs, anything that is not a JWT) is answered *not mine* at
/// once, as the router would answer it, without going through the cache: no cache key (an
/// HMAC-SHA256 over the token), no `authentication_token_cache_*` miss or fetch, no detached
/// lookup. The check costs one JWT pre-check parse per token that reaches this position
/// (≈ 0.5 µs for a 1 KB JWT, almost nothing for a token that is not a JWT), so a
/// service-account token is parsed on a cache hit too (≈ 0.5 µs beside the HMAC's
/// ≈ 0.8 µs), and twice on a miss (here, then in the router behind the cache; the miss
/// waits for API requests anyway).
struct CachedServiceAccounts(crate::token::cache::CachedTokenAuthenticator<IssuerRouter>);

impl crate::authenticator::TokenAuthenticator for CachedServiceAccounts {
    fn authenticate_token<'a>(
        &'a self,
        token: &'a str,
        ctx: &'a crate::authenticator::Context,
    ) -> crate::authenticator::AuthFuture<'a> {
        if self.0.delegate().owns(token) {
            self.0.authenticate_token(token, ctx)
        } else {
            crate::authenticator::AuthFuture::ready(Ok(None))
        }
    }
}

/// kube-apiserver's error for `--anonymous-auth` set beside an `anonymous` section in the
/// `--authentication-config` file.
const ANONYMOUS_FLAG_AND_SECTION: &str = "anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file";

impl AuthenticationOptions {
    /// Loads the files and builds the chain. File errors name the flag and the file. Must be
    /// called inside a Tokio runtime (reload tasks are spawned on it). Keep the returned
    /// [`Built`] alive for as long as its chain is used: it owns the reload and discovery
    /// tasks (see [`Built`]).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use kube_authn::config::AuthenticationOptions;
    /// let err = AuthenticationOptions { token_auth_file: Some("/nonexistent".into()), ..Default::default() }
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("--token-auth-file"));
    /// # });
    /// ```
    #[must_use = "dropping Built stops file reloading and OIDC discovery: keep it alive while its chain is used"]
    pub fn build(&self) -> Result<Built, ConfigError> {
        self.validate_flags()?;
        let api_audiences = Audiences::new(self.effective_api_audiences());
        let mut builder = ChainBuilder::new();
        let mut tasks = Vec::new();
        let mut ca_watches = Vec::new();
        let mut requestheader_ca = None;
        let mut requestheader_source = None;
        // With no allowed names, the client CA and the request-header CA must never overlap:
        // checked at start-up below, and at every reload of either file once armed.
        let overlap_guard = self
            .requestheader
            .allowed_names
            .is_empty()
            .then(|| Arc::new(crate::x509::OverlapGuard::default()));
        let mut requestheader_ca_source = None;
        if self.requestheader.client_ca_file.is_some() || self.requestheader.client_ca_pem.is_some()
        {
            refuse_padded_header_names(&self.requestheader)?;
            let proxy = FrontProxy::build(&self.requestheader, overlap_guard.clone()).map_err(
                |e| match e {
                    BuildError::Ca(e) => {
                        ConfigError::new(format!("--requestheader-client-ca-file: {e}"))
                    }
                    BuildError::Header { flag, error } => {
                        ConfigError::new(format!("--{flag}: {error}"))
                    }
                },
            )?;
            // Watched from when the overlap guard is armed (below), not before.
            ca_watches.push(CaWatch::FrontProxy(proxy.clone()));
            requestheader_ca = Some(proxy.bundle());
            requestheader_ca_source = Some(proxy.ca_source().clone());
            requestheader_source =
                Some(Arc::new(proxy.clone()) as Arc<dyn crate::x509::CaBundleSource>);
            builder = builder.request(AudienceAgnostic::new(api_audiences.clone(), proxy));
        }
        if let Some(path) = &self.basic_auth_file {
            let file = PasswordFile::open(path)
                .map_err(|e| ConfigError::new(format!("--basic-auth-file: {e}")))?;
            tasks.extend(file.watch(self.reload_interval));
            builder = builder.request(AudienceAgnostic::new(
                api_audiences.clone(),
                Basic::new(file),
            ));
        }
        if let Some(url) = &self.experimental_keystone_url {
            builder = builder.request(AudienceAgnostic::new(
                api_audiences.clone(),
                self.keystone(url)?,
            ));
        }
        let mut client_ca = None;
        let mut client_ca_source = None;
        let mut ca_hint_sources = Vec::new();
        if let Some(path) = &self.client_ca_file {
            let x509 = X509Authenticator::from_ca_file_guarded(path, overlap_guard.clone())
                .map_err(|e| ConfigError::new(format!("--client-ca-file: {e}")))?;
            client_ca_source = Some(x509.ca_source().clone());
            ca_watches.push(CaWatch::ClientCa(x509.clone()));
            client_ca = Some(x509.bundle());
            ca_hint_sources.push(Arc::new(x509.clone()) as Arc<dyn crate::x509::CaBundleSource>);
            builder = builder.request(x509);
        }
        if let (Some(client), Some(proxy)) = (&client_ca, &requestheader_ca) {
            self.requestheader.check_ca_overlap(client, proxy)?;
        }
        if let (Some(guard), Some(client), Some(proxy)) =
            (&overlap_guard, &client_ca_source, &requestheader_ca_source)
        {
            guard.arm(client, proxy);
        }
        // Only now do the CA files reload: a change while the rest was loading (a large
        // `--basic-auth-file`, say) is a reload the armed guard checks, not one that slips in
        // before it (the startup check above compares the bundles as first loaded).
        for watch in ca_watches {
            tasks.extend(match watch {
                CaWatch::FrontProxy(proxy) => proxy.spawn_watch(self.reload_interval),
                CaWatch::ClientCa(x509) => x509.spawn_watch(self.reload_interval),
            });
        }
        ca_hint_sources.extend(requestheader_source);
        if let Some(path) = &self.token_auth_file {
            let file = TokenFile::open(path)
                .map_err(|e| ConfigError::new(format!("--token-auth-file: {e}")))?;
            tasks.extend(file.watch(self.reload_interval));
            builder = builder.token(AudienceAgnostic::new(api_audiences.clone(), file));
        }
        if let Some((router, remote_lookup)) = self.service_accounts()? {
            if remote_lookup {
                // Every lookup is a request to the API server: cache successes for 10 s, as
                // kube-apiserver caches its whole token chain (`tokencache.New(…, 10s, 0)`);
                // only the tokens of the service-account issuers go through the cache.
                builder = builder.token(CachedServiceAccounts(
                    crate::token::cache::CachedTokenAuthenticator::builder(router)
                        .success_ttl(Duration::from_secs(10))
                        .failure_ttl(Duration::ZERO)
                        .cache_errors(true)
                        .try_build()?,
                ));
            } else {
                builder = builder.token(router);
            }
        }
        #[cfg(feature = "remote")]
        let authentication_config = match &self.authentication_config {
            Some(path) => {
                Some(crate::token::oidc::config::read_authentication_configuration(path)?)
            }
            None => None,
        };
        // kube-apiserver refuses the flag beside the file's section right after decoding the
        // file, before validating it (so before any error in its `jwt` or `anonymous` entries).
        #[cfg(feature = "remote")]
        if let (Some(data), Some(_)) = (&authentication_config, self.anonymous_auth)
            && crate::token::oidc::config::anonymous_section(data)?.is_some()
        {
            return Err(ConfigError::new(ANONYMOUS_FLAG_AND_SECTION));
        }
        #[cfg(feature = "remote")]
        let mut authentication_config_reloader = None;
        #[cfg(feature = "remote")]
        let oidc = match (&self.authentication_config, &authentication_config) {
            // The file: its JWT authenticators are reloaded when it changes, as kube-apiserver
            // does (always in the chain, even with no `jwt` entries yet).
            (Some(path), Some(data)) => {
                let reloader = self.authentication_config_reloader(path, data, &api_audiences)?;
                builder = builder.token_arc(reloader.authenticator());
                authentication_config_reloader = Some(reloader);
                None
            }
            _ => match self.oidc_authenticators(&api_audiences, None)? {
                Some((router, running)) => {
                    builder = builder.token(router);
                    Some(running)
                }
                None => None,
            },
        };
        #[cfg(not(feature = "remote"))]
        if self.oidc.any_set() || self.authentication_config.is_some() {
            return Err(ConfigError::new(
                "--oidc-* and --authentication-config need the `remote` feature",
            ));
        }
        // kube-apiserver always has its JWT authenticator: `ToAuthenticationConfig` sets an
        // empty `AuthenticationConfiguration` when neither the file nor the `--oidc-*` flags
        // give one, and `Config.New` appends the JWT token function whenever it is set. So its
        // bearer and WebSocket authenticators always run, and a well-formed token that nobody
        // takes is `invalid bearer token` (a 401), never an anonymous request.
        #[cfg(feature = "remote")]
        let jwt_in_chain = authentication_config_reloader.is_some() || oidc.is_some();
        #[cfg(not(feature = "remote"))]
        let jwt_in_chain = false;
        if !jwt_in_chain {
            builder = builder.token(crate::chain::union::TokenUnion::fail_on_error(Vec::new()));
        }
        if let Some(path) = &self.authentication_token_webhook_config_file {
            builder = builder.token_arc(self.webhook(path, &api_audiences)?);
        }
        if self.insecure_allow_any_token {
            builder = builder.token_arc(Arc::new(AnyToken::insecure_allow_any_token()));
        }
        #[cfg(feature = "remote")]
        let anonymous_from_file = match authentication_config.as_deref() {
            Some(data) => crate::token::oidc::config::load_anonymous_configuration(data)?,
            None => None,
        };
        #[cfg(not(feature = "remote"))]
        let anonymous_from_file: Option<crate::chain::anonymous::AnonymousConfig> = None;
        let anonymous = match (anonymous_from_file, self.anonymous_auth) {
            (Some(_), Some(_)) => return Err(ConfigError::new(ANONYMOUS_FLAG_AND_SECTION)),
            (Some(from_file), None) => from_file.authenticator(),
            (None, flag) => flag.unwrap_or(true).then(Anonymous::new),
        };
        if let Some(anonymous) = anonymous {
            builder = builder.anonymous(anonymous);
        }
        Ok(Built {
            chain: builder.build(),
            api_audiences,
            client_ca,
            requestheader_ca,
            ca_hint_sources,
            tasks,
            #[cfg(feature = "remote")]
            oidc,
            #[cfg(feature = "remote")]
            authentication_config: authentication_config_reloader,
        })
    }

    /// `--api-audiences`, or the service-account issuers when it is empty (kube-apiserver's
    /// default).
    ///
    /// ```
    /// use kube_authn::config::AuthenticationOptions;
    /// let o = AuthenticationOptions {
    ///     service_account_issuers: vec!["https://kubernetes.default.svc".into()],
    ///     ..Default::default()
    /// };
    /// assert_eq!(o.effective_api_audiences(), ["https://kubernetes.default.svc"]);
    /// ```
    pub fn effective_api_audiences(&self) -> Vec<String> {
        if self.api_audiences.is_empty() {
            self.service_account_issuers.clone()
        } else {
            self.api_audiences.clone()
        }
    }

    /// kube-apiserver's `BuiltInAuthenticationOptions.Validate()` checks that need no file,
    /// in its order, before anything is read or connected (all of them, as apimachinery's
    /// aggregate prints them: `[a, b]`, a repeated text once): the `--oidc-*` flags (`oidc-issuer-url and oidc-client-id
    /// must be specified together …`, or `authentication-config file and oidc-* flags are
    /// mutually exclusive`), the `--service-account-issuer` values, `service-account-issuer
    /// is a required flag` beside `--service-account-key-file` and the key-file requirement
    /// beside an issuer (kube-authn runs without service accounts when neither is given),
    /// then the request-header flags (checked whether or not a CA is set).
    fn validate_flags(&self) -> Result<(), ConfigError> {
        // kube-apiserver's `BuiltInAuthenticationOptions.Validate` collects every error, in
        // this order, and prints them as one aggregate (`[a, b]`, repeated texts once).
        let mut errors: Vec<String> = Vec::new();
        let oidc_set = self.oidc.any_set();
        if self.authentication_config.is_none() {
            if oidc_set && (self.oidc.issuer_url.is_empty() || self.oidc.client_id.is_empty()) {
                errors.push(crate::token::oidc::config::ERR_OIDC_FLAGS_TOGETHER.to_owned());
            }
        } else if oidc_set {
            errors.push(crate::token::oidc::config::ERR_CONFIG_AND_FLAGS.to_owned());
        }
        self.service_account_issuer_errors(&mut errors);
        let keys = !self.service_account_key_files.is_empty();
        if keys && self.service_account_issuers.is_empty() {
            errors.push(crate::token::service_account::ERR_ISSUER_REQUIRED.to_owned());
        }
        if !keys && !self.service_account_issuers.is_empty() {
            errors.push(crate::token::service_account::ERR_KEYS_REQUIRED.to_owned());
        }
        errors.extend(self.requestheader.validation_errors());
        if errors.is_empty() {
            Ok(())
        } else {
            Err(crate::token::oidc::config::aggregate(errors))
        }
    }

    /// kube-apiserver's `--service-account-issuer` checks, every issuer's first failure: an
    /// issuer with a `:` must pass Go's `url.Parse` (its error text; the issuer quoted as Go's
    /// `%q` quotes it), none may be empty, none repeated.
    fn service_account_issuer_errors(&self, errors: &mut Vec<String>) {
        let mut seen = std::collections::HashSet::new();
        for issuer in &self.service_account_issuers {
            if issuer.contains(':')
                && let Err(parse) = crate::go_url::issuer::parse(issuer)
            {
                errors.push(format!(
                    "service-account-issuer {} contained a ':' but was not a valid URL: {parse}",
                    crate::jwt::go_quote(issuer)
                ));
                continue;
            }
            if issuer.is_empty() {
                errors.push("service-account-issuer should not be an empty string".to_owned());
                continue;
            }
            if !seen.insert(issuer.as_str()) {
                errors.push(format!(
                    "service-account-issuer {} is already specified",
                    crate::jwt::go_quote(issuer)
                ));
            }
        }
    }

    /// The legacy and bound service-account authenticators behind one issuer router, and
    /// whether they look objects up over the network; `None` when neither keys nor issuers
    /// are configured.
    ///
    /// As in kube-apiserver, `--service-account-lookup` decides only for legacy
    /// (secret-based) tokens: bound tokens are always checked through the lookup client
    /// when there is one. With `--service-account-lookup=false`, that client is the one of
    /// `--service-account-lookup-kubeconfig` when it is given (no in-cluster detection);
    /// without it, bound tokens are trusted until they expire, and a warning says so.
    fn service_accounts(&self) -> Result<Option<(IssuerRouter, bool)>, ConfigError> {
        if self.service_account_key_files.is_empty() && self.service_account_issuers.is_empty() {
            return Ok(None);
        }
        let has_keys = !self.service_account_key_files.is_empty();
        let lookup = if has_keys
            && (self.service_account_lookup || self.service_account_lookup_kubeconfig.is_some())
        {
            Some(self.service_account_lookup_client()?)
        } else {
            None
        };
        let remote = lookup.is_some();
        let options = ServiceAccountOptions {
            key_files: self.service_account_key_files.clone(),
            issuers: self.service_account_issuers.clone(),
            api_audiences: self.effective_api_audiences(),
            lookup: self.service_account_lookup,
        };
        let mut router = IssuerRouter::new();
        options.register(&mut router, lookup)?;
        if !remote {
            tracing::warn!("{NO_BOUND_LOOKUP}");
        }
        Ok(Some((router, remote)))
    }

    /// The API client service-account lookups use.
    #[cfg(feature = "remote")]
    fn service_account_lookup_client(
        &self,
    ) -> Result<Arc<dyn crate::token::service_account::ServiceAccountLookup>, ConfigError> {
        use crate::token::service_account_rest::RestLookup;
        if let Some(path) = &self.service_account_lookup_kubeconfig {
            let lookup = RestLookup::from_kubeconfig(path).map_err(|e| {
                ConfigError::new(format!("--service-account-lookup-kubeconfig: {e}"))
            })?;
            return Ok(Arc::new(lookup));
        }
        if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
            let lookup = RestLookup::in_cluster().map_err(|e| {
                ConfigError::new(format!(
                    "--service-account-lookup=true: in-cluster configuration: {e}"
                ))
            })?;
            return Ok(Arc::new(lookup));
        }
        Err(ConfigError::new(NO_LOOKUP))
    }

    #[cfg(not(feature = "remote"))]
    fn service_account_lookup_client(
        &self,
    ) -> Result<Arc<dyn crate::token::service_account::ServiceAccountLookup>, ConfigError> {
        if self.service_account_lookup_kubeconfig.is_some() {
            return Err(ConfigError::new(
                "--service-account-lookup-kubeconfig needs the `remote` feature",
            ));
        }
        Err(ConfigError::new(NO_LOOKUP))
    }

    /// Basic auth against Keystone (kube-apiserver ≤ 1.10's position: after the password file).
    #[cfg(feature = "remote")]
    fn keystone(&self, url: &str) -> Result<Arc<dyn RequestAuthenticator>, ConfigError> {
        let keystone = crate::password::keystone::KeystoneAuthenticator::new(
            url,
            self.experimental_keystone_ca_file.as_deref(),
        )
        .map_err(|e| ConfigError::new(format!("--experimental-keystone-url: {e}")))?;
        Ok(Arc::new(Basic::new(keystone)))
    }

    #[cfg(not(feature = "remote"))]
    fn keystone(&self, _url: &str) -> Result<Arc<dyn RequestAuthenticator>, ConfigError> {
        Err(ConfigError::new(
            "--experimental-keystone-url needs the `remote` feature",
        ))
    }

    /// The JWT (OIDC) authenticators of `--oidc-*` or `--authentication-config`, behind their
    /// own issuer router, with discovery started; `None` when neither is set. kube-apiserver
    /// puts them after the service-account authenticators, audience-agnostic when API
    /// audiences are set.
    #[cfg(feature = "remote")]
    fn oidc_authenticators(
        &self,
        api_audiences: &Audiences,
        authentication_config: Option<&[u8]>,
    ) -> Result<Option<(IssuerRouter, crate::token::oidc::remote::OidcAuthenticators)>, ConfigError>
    {
        use crate::token::oidc::discovery::DiscoveryOptions;
        use crate::token::oidc::remote::{jwt_configs, start};
        let configs = jwt_configs(
            &self.oidc,
            authentication_config,
            &self.service_account_issuers,
        )?;
        if configs.is_empty() {
            return Ok(None);
        }
        let mut router = IssuerRouter::new();
        // Always audience-agnostic, even with no API audiences (kube-apiserver's
        // `WrapAudienceAgnosticToken(apiAudiences, …)`): a review that asks for audiences
        // none of the (empty) implicit ones meet is "not mine", not a user without audiences.
        let audiences = Some(api_audiences.clone());
        let opts = DiscoveryOptions::default().with_apiserver_id(self.apiserver_id.clone());
        let running = start(configs, audiences, opts, &mut router)?;
        Ok(Some((router, running)))
    }

    /// The `--authentication-config` file's JWT authenticators, reloaded when the file
    /// changes (every `reload_interval`), audience-agnostic as kube-apiserver wraps them.
    #[cfg(feature = "remote")]
    fn authentication_config_reloader(
        &self,
        path: &std::path::Path,
        data: &[u8],
        api_audiences: &Audiences,
    ) -> Result<crate::token::oidc::reload::AuthenticationConfigReloader, ConfigError> {
        use crate::token::oidc::discovery::DiscoveryOptions;
        use crate::token::oidc::reload::{AuthenticationConfigReloader, ReloadOptions};
        // The flags and the file are mutually exclusive; the file's errors, as at start-up.
        crate::token::oidc::remote::jwt_configs(
            &self.oidc,
            Some(data),
            &self.service_account_issuers,
        )?;
        let reload = ReloadOptions::default().with_apiserver_id(self.apiserver_id.clone());
        let reload = ReloadOptions {
            poll_interval: self.reload_interval.max(Duration::from_millis(1)),
            ..reload
        };
        AuthenticationConfigReloader::start(
            path.to_path_buf(),
            data.to_vec(),
            Some(api_audiences.clone()),
            self.service_account_issuers.clone(),
            DiscoveryOptions::default().with_apiserver_id(self.apiserver_id.clone()),
            reload,
        )
    }

    /// The webhook, cached as kube-apiserver caches it (`cache(webhook, false, ttl, ttl)`, and
    /// successes at least 10 s, as its cache over the token union keeps them).
    #[cfg(feature = "remote")]
    fn webhook(
        &self,
        path: &std::path::Path,
        api_audiences: &Audiences,
    ) -> Result<Arc<dyn crate::authenticator::TokenAuthenticator>, ConfigError> {
        use crate::token::webhook::{WebhookOptions, WebhookTokenAuthenticator};
        let opts = WebhookOptions {
            implicit_audiences: api_audiences.clone(),
            ..WebhookOptions::default()
        };
        let webhook = WebhookTokenAuthenticator::from_flags(
            path,
            &self.authentication_token_webhook_version,
            self.authentication_token_webhook_cache_ttl,
            opts,
        )?;
        Ok(Arc::new(webhook))
    }

    #[cfg(not(feature = "remote"))]
    fn webhook(
        &self,
        _path: &std::path::Path,
        _api_audiences: &Audiences,
    ) -> Result<Arc<dyn crate::authenticator::TokenAuthenticator>, ConfigError> {
        Err(ConfigError::new(
            "--authentication-token-webhook-config-file: kube-authn was built without the \"remote\" feature",
        ))
    }
}

/// A CA file whose watch [`AuthenticationOptions::build`] starts once the CA overlap guard is
/// armed.
enum CaWatch {
    FrontProxy(FrontProxy),
    ClientCa(X509Authenticator),
}

/// The flag path's rule for `--requestheader-{username,uid,group}-headers` and
/// `--requestheader-extra-headers-prefix`: a name or prefix with leading or trailing white
/// space is refused. kube-apiserver hands these lists to `headerrequest.NewDynamic`, which
/// does not trim, so `--requestheader-username-headers="X-Remote-User, X-Proxy-User"` gives
/// the name `" X-Proxy-User"`, which Go silently never matches, while [`FrontProxy::new`]
/// (Go's `New`) would trim it and trust `X-Proxy-User`. Refusing it at startup is the only
/// choice that neither trusts a header kube-apiserver ignores nor ignores one silently.
/// (White space only is `validate`'s `empty value` error, reported before this.)
fn refuse_padded_header_names(r: &RequestHeaderConfig) -> Result<(), ConfigError> {
    let lists: [(&str, &[String], &str); 4] = [
        (
            "requestheader-username-headers",
            &r.username_headers,
            "header name",
        ),
        ("requestheader-uid-headers", &r.uid_headers, "header name"),
        (
            "requestheader-group-headers",
            &r.group_headers,
            "header name",
        ),
        (
            "requestheader-extra-headers-prefix",
            &r.extra_headers_prefix,
            "header prefix",
        ),
    ];
    for (flag, list, what) in lists {
        if let Some(padded) = list.iter().find(|name| name.trim() != name.as_str()) {
            return Err(ConfigError::new(format!(
                "--{flag}: {what} {} has surrounding white space; kube-apiserver would never match it",
                crate::jwt::go_quote(padded)
            )));
        }
    }
    Ok(())
}

/// One occurrence of a list flag as pflag's `StringSlice` reads it (`readAsCSV`): `""` is no
/// value; otherwise the first record of Go's `encoding/csv` (fields split on `,`, a field may
/// be quoted, `""` inside it is one `"`, empty lines before the record skipped, `\r\n` read as
/// `\n`, one trailing `\r` dropped), with pflag's error texts. kube-apiserver's list flags
/// (`--api-audiences`, `--requestheader-*-headers`, `--oidc-signing-algs`, …) append each
/// occurrence's fields.
///
/// ```
/// use kube_authn::config::pflag_string_slice;
/// assert_eq!(pflag_string_slice("api-audiences", r#"a,"b,c""#).unwrap(), ["a", "b,c"]);
/// assert_eq!(pflag_string_slice("api-audiences", "api\r").unwrap(), ["api"]);
/// assert!(pflag_string_slice("api-audiences", "").unwrap().is_empty());
/// assert_eq!(
///     pflag_string_slice("api-audiences", r#"a"b"#).unwrap_err(),
///     r#"invalid argument "a\"b" for "--api-audiences" flag: parse error on line 1, column 2: bare " in non-quoted-field"#
/// );
/// ```
pub fn pflag_string_slice(flag: &str, value: &str) -> Result<Vec<String>, String> {
    pflag_csv_record(value).map_err(|why| {
        format!(
            "invalid argument {} for \"--{flag}\" flag: {why}",
            crate::jwt::go_quote(value)
        )
    })
}

/// [`pflag_string_slice`] without pflag's `invalid argument "…" for "--flag" flag: ` prefix:
/// the fields of one occurrence, or the cause alone (Go's `encoding/csv` error, or `EOF` for
/// a value with no record), for a flag parser that adds the prefix itself.
///
/// ```
/// use kube_authn::config::pflag_csv_record;
/// assert_eq!(pflag_csv_record(r#"a,"b,c""#).unwrap(), ["a", "b,c"]);
/// assert!(pflag_csv_record("").unwrap().is_empty());
/// assert_eq!(pflag_csv_record("\n").unwrap_err(), "EOF");
/// assert_eq!(
///     pflag_csv_record(r#"a"b"#).unwrap_err(),
///     r#"parse error on line 1, column 2: bare " in non-quoted-field"#
/// );
/// ```
pub fn pflag_csv_record(value: &str) -> Result<Vec<String>, String> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let mut reader = crate::csv::Reader::new(value.as_bytes());
    match reader.read_record() {
        // The value is UTF-8 and fields end at ASCII bytes, so every field is UTF-8 too.
        Ok(Some(record)) => Ok((0..record.len())
            .map(|i| String::from_utf8_lossy(record.get(i)).into_owned())
            .collect()),
        Ok(None) => Err("EOF".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// Go's `time.quote` (src/time/format.go), which `time.ParseDuration` quotes its input and
/// units with: `"` and `\` are escaped with a backslash, every byte of a character below
/// `' '` or above ASCII (and every byte that is not UTF-8) is written `\xNN` (lower-case hex),
/// and the rest (DEL included) as is. Not `strconv.Quote`: `\t` is `\x09`, `µ` is `\xc2\xb5`.
fn go_time_quote(s: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &b in s {
        if b < b' ' || !b.is_ascii() {
            out.push_str("\\x");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            if b == b'"' || b == b'\\' {
                out.push('\\');
            }
            out.push(char::from(b));
        }
    }
    out.push('"');
    out
}

/// Parses a Go duration (`time.ParseDuration`, what kube-apiserver's duration flags accept):
/// a sequence of decimal numbers, each with an optional fraction and a unit suffix — `ns`,
/// `us` (or `µs`, `μs`), `ms`, `s`, `m`, `h` — such as `2m`, `10s`, `1h30m`, `1.5h`, `2m0s`;
/// a bare `0` is zero. Errors are Go's texts. Unlike Go, a negative duration is refused
/// (`-1s` means nothing for a TTL or a timeout); [`go_parse_duration`] is Go's function.
///
/// ```
/// use kube_authn::config::parse_go_duration;
/// use std::time::Duration;
/// assert_eq!(parse_go_duration("1h30m").unwrap(), Duration::from_secs(5400));
/// assert_eq!(parse_go_duration("2m0s").unwrap(), Duration::from_secs(120));
/// assert_eq!(parse_go_duration("1.5s").unwrap(), Duration::from_millis(1500));
/// assert_eq!(parse_go_duration("10").unwrap_err().to_string(), r#"time: missing unit in duration "10""#);
/// ```
pub fn parse_go_duration(input: &str) -> Result<Duration, ConfigError> {
    match go_parse_duration(input.as_bytes())? {
        nanos if nanos < 0 => Err(ConfigError::new(format!(
            "negative duration {} is not allowed",
            go_time_quote(input.as_bytes())
        ))),
        nanos => Ok(Duration::from_nanos(nanos.unsigned_abs())),
    }
}

/// Go's `time.ParseDuration` (Go 1.26, src/time/format.go) over a Go string (bytes, which need
/// not be UTF-8): the signed duration in nanoseconds, negative ones included, or Go's error
/// text (`time: invalid duration "x"`, `time: missing unit in duration "1"`, `time: unknown
/// unit "e" in duration "1e3s"`, quoted by Go's `time.quote`). A port of Go's code: the same
/// overflow checks (`-9223372036854775808ns` is valid, its positive is not) and the fraction
/// scaled in `f64`, so every value rounds as Go's does.
///
/// ```
/// use kube_authn::config::go_parse_duration;
/// assert_eq!(go_parse_duration(b"-1.5s").unwrap(), -1_500_000_000);
/// assert_eq!(go_parse_duration(b"+0").unwrap(), 0);
/// assert_eq!(go_parse_duration(b"\xff").unwrap_err().to_string(), r#"time: invalid duration "\xff""#);
/// ```
pub fn go_parse_duration(input: &[u8]) -> Result<i64, ConfigError> {
    const LIMIT: u64 = 1 << 63;
    let error =
        |message: &str| ConfigError::new(format!("time: {message} {}", go_time_quote(input)));
    let invalid = || error("invalid duration");
    let mut s = input;
    let mut negative = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        negative = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut d: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // leadingInt
        let int_len = s.iter().take_while(|b| b.is_ascii_digit()).count();
        let mut v: u64 = 0;
        for &c in &s[..int_len] {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(c - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
        }
        s = &s[int_len..];
        let pre = int_len > 0;
        // leadingFraction: digits past what fits are dropped.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix(b".") {
            let frac_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let mut overflow = false;
            for &c in &rest[..frac_len] {
                if overflow {
                    continue;
                }
                if f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(c - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            post = frac_len > 0;
            s = &rest[frac_len..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .iter()
            .take_while(|&&c| c != b'.' && !c.is_ascii_digit())
            .count();
        if unit_len == 0 {
            return Err(error("missing unit in duration"));
        }
        let (u, rest) = s.split_at(unit_len);
        s = rest;
        let unit: u64 = match u {
            b"ns" => 1,
            // `µs` (U+00B5) and `μs` (U+03BC).
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            other => {
                return Err(error(&format!(
                    "unknown unit {} in duration",
                    go_time_quote(other)
                )));
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            // Go's float64 arithmetic; the conversion saturates as Go's does for values
            // in range (at most 3.6e12 here).
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        // Go adds in uint64 and wraps: 2^63 + 2^63 is 0, which passes its check.
        d = d.wrapping_add(v);
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if negative {
        // d ≤ 2^63: its negation fits (i64::MIN at most).
        return Ok(0i64.wrapping_sub_unsigned(d));
    }
    i64::try_from(d).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// kube-apiserver's `--service-account-issuer` validation
    /// (`BuiltInAuthenticationOptions.Validate`): an issuer holding a `:` goes through Go's
    /// `url.Parse`, whose first failing check names the error (a control character before a
    /// missing scheme), and the issuer is quoted with `%q`. Expected texts printed by Go 1.26
    /// running the same code (`fmt.Errorf("service-account-issuer %q contained a ':' but was
    /// not a valid URL: %v", issuer, err)`).
    #[test]
    fn service_account_issuer_errors_are_kube_apiservers_texts() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            (
                "control character before the colon",
                &["https://a\x01:b"],
                Some(
                    r#"service-account-issuer "https://a\x01:b" contained a ':' but was not a valid URL: parse "https://a\x01:b": net/url: invalid control character in URL"#,
                ),
            ),
            (
                "control character with no scheme",
                &[":\x01"],
                Some(
                    r#"service-account-issuer ":\x01" contained a ':' but was not a valid URL: parse ":\x01": net/url: invalid control character in URL"#,
                ),
            ),
            (
                "DEL",
                &["https://a\x7f:b"],
                Some(
                    r#"service-account-issuer "https://a\x7f:b" contained a ':' but was not a valid URL: parse "https://a\x7f:b": net/url: invalid control character in URL"#,
                ),
            ),
            (
                "missing scheme",
                &[":x"],
                Some(
                    r#"service-account-issuer ":x" contained a ':' but was not a valid URL: parse ":x": missing protocol scheme"#,
                ),
            ),
            (
                "invalid port",
                &["https://a:b"],
                Some(
                    r#"service-account-issuer "https://a:b" contained a ':' but was not a valid URL: parse "https://a:b": invalid port ":b" after host"#,
                ),
            ),
            (
                "colon in the first path segment, unassigned code point quoted",
                &["\u{378}:x"],
                Some(
                    r#"service-account-issuer "\u0378:x" contained a ':' but was not a valid URL: parse "\u0378:x": first path segment in URL cannot contain colon"#,
                ),
            ),
            (
                "space in the host",
                &["https://a b:1"],
                Some(
                    r#"service-account-issuer "https://a b:1" contained a ':' but was not a valid URL: parse "https://a b:1": invalid character " " in host name"#,
                ),
            ),
            (
                "bad escape in the fragment: the whole issuer is shown",
                &["a:b#%zz"],
                Some(
                    r#"service-account-issuer "a:b#%zz" contained a ':' but was not a valid URL: parse "a:b#%zz": invalid URL escape "%zz""#,
                ),
            ),
            (
                "unassigned code point in a duplicate",
                &["https://h\u{2fe0}", "https://h\u{2fe0}"],
                Some(r#"service-account-issuer "https://h\u2fe0" is already specified"#),
            ),
            (
                "empty",
                &[""],
                Some("service-account-issuer should not be an empty string"),
            ),
            (
                "valid",
                &[
                    "https://kubernetes.default.svc",
                    "api",
                    "https://h/\u{378}:",
                ],
                None,
            ),
        ];
        for (name, issuers, want) in cases {
            let options = AuthenticationOptions {
                service_account_issuers: issuers.iter().map(|s| s.to_string()).collect(),
                ..AuthenticationOptions::default()
            };
            let mut got = Vec::new();
            options.service_account_issuer_errors(&mut got);
            assert_eq!(got.first().map(String::as_str), *want, "{name}");
        }
    }

    /// kube-apiserver's `Validate()` runs before any file is read or any client is made, so
    /// its flag-only errors win over a missing file or a missing lookup client. All of them
    /// are reported, in `BuiltInAuthenticationOptions.Validate`'s order (the OIDC flags, the
    /// issuers, the required service-account flags, the request-header flags), as
    /// apimachinery's aggregate prints them: `[a, b]`, a repeated text once.
    #[test]
    fn flag_errors_come_before_files_and_lookups() {
        const TOGETHER: &str = "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set";
        let missing = || Some(PathBuf::from("/nonexistent/kube-authn-file"));
        let oidc_given = |f: crate::token::oidc::config::OidcFlags| {
            crate::token::oidc::config::OidcFlags { given: true, ..f }
        };
        let cases: Vec<(&str, AuthenticationOptions, &str)> = vec![
            (
                "an oidc flag alone, before the token file",
                AuthenticationOptions {
                    oidc: oidc_given(crate::token::oidc::config::OidcFlags {
                        username_prefix: Some("-".into()),
                        ..Default::default()
                    }),
                    token_auth_file: missing(),
                    ..Default::default()
                },
                TOGETHER,
            ),
            (
                "oidc flags beside the authentication config, before reading it",
                AuthenticationOptions {
                    oidc: oidc_given(crate::token::oidc::config::OidcFlags {
                        groups_prefix: "x".into(),
                        ..Default::default()
                    }),
                    authentication_config: missing(),
                    ..Default::default()
                },
                "authentication-config file and oidc-* flags are mutually exclusive",
            ),
            (
                "a key file without an issuer, before the lookup client",
                AuthenticationOptions {
                    service_account_key_files: vec!["k.pem".into()],
                    service_account_lookup: true,
                    ..Default::default()
                },
                "service-account-issuer is a required flag",
            ),
            (
                "an issuer without a key file, before the token file",
                AuthenticationOptions {
                    service_account_issuers: vec!["https://i".into()],
                    token_auth_file: missing(),
                    ..Default::default()
                },
                "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set",
            ),
            (
                "the oidc check before the issuers",
                AuthenticationOptions {
                    oidc: oidc_given(Default::default()),
                    service_account_issuers: vec![String::new()],
                    ..Default::default()
                },
                "[oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set, service-account-issuer should not be an empty string, either `--service-account-key-file` or `--service-account-signing-endpoint` must be set]",
            ),
            (
                "the oidc check before the request-header flags",
                AuthenticationOptions {
                    oidc: oidc_given(Default::default()),
                    requestheader: RequestHeaderConfig {
                        group_headers: vec![" ".into()],
                        ..Default::default()
                    },
                    ..Default::default()
                },
                "[oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set, empty value in \"requestheader-group-headers\"]",
            ),
            (
                "the issuers before the required flags",
                AuthenticationOptions {
                    service_account_issuers: vec![String::new()],
                    service_account_key_files: vec!["/nonexistent/k.pem".into()],
                    ..Default::default()
                },
                "service-account-issuer should not be an empty string",
            ),
            (
                "the required flags before the request-header flags",
                AuthenticationOptions {
                    service_account_key_files: vec!["k.pem".into()],
                    requestheader: RequestHeaderConfig {
                        group_headers: vec![" ".into()],
                        ..Default::default()
                    },
                    ..Default::default()
                },
                "[service-account-issuer is a required flag, empty value in \"requestheader-group-headers\"]",
            ),
            (
                "every issuer's error, a repeated text once",
                AuthenticationOptions {
                    service_account_issuers: vec![
                        String::new(),
                        "https://a:b".into(),
                        "https://i".into(),
                        "https://i".into(),
                        String::new(),
                    ],
                    service_account_key_files: vec!["k.pem".into()],
                    ..Default::default()
                },
                "[service-account-issuer should not be an empty string, service-account-issuer \"https://a:b\" contained a ':' but was not a valid URL: parse \"https://a:b\": invalid port \":b\" after host, service-account-issuer \"https://i\" is already specified]",
            ),
            (
                "the request-header flags before the files",
                AuthenticationOptions {
                    basic_auth_file: missing(),
                    requestheader: RequestHeaderConfig {
                        group_headers: vec![" ".into()],
                        ..Default::default()
                    },
                    ..Default::default()
                },
                "empty value in \"requestheader-group-headers\"",
            ),
        ];
        let rt = runtime();
        let _guard = rt.enter();
        for (name, options, want) in cases {
            let got = options.build().map(|_| ()).unwrap_err().to_string();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn requestheader_headers_are_declared_for_stripping_and_ca_is_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("front-proxy-ca.crt");
        std::fs::write(&ca, crate::x509::doc_ca_pem()).unwrap();
        runtime().block_on(async {
            let options = AuthenticationOptions {
                requestheader: RequestHeaderConfig {
                    client_ca_file: Some(ca.clone()),
                    allowed_names: vec!["front-proxy-client".into()],
                    username_headers: vec!["X-Remote-User".into(), "X-Proxy-User".into()],
                    uid_headers: vec!["X-Remote-Uid".into()],
                    group_headers: vec!["X-Remote-Group".into(), "X-Proxy-Groups".into()],
                    extra_headers_prefix: vec!["X-Remote-Extra-".into(), "X-Proxy-Extra-".into()],
                    client_ca_pem: None,
                },
                ..AuthenticationOptions::default()
            };
            let built = options.build().unwrap();
            let d = built.chain.description();
            for h in [
                "x-remote-user",
                "x-proxy-user",
                "x-remote-uid",
                "x-remote-group",
                "x-proxy-groups",
            ] {
                assert!(
                    d.identity_headers().iter().any(|n| n.as_str() == h),
                    "{h} not declared: {:?}",
                    d.identity_headers()
                );
            }
            for p in ["x-remote-extra-", "x-proxy-extra-"] {
                assert!(
                    d.identity_header_prefixes().iter().any(|n| n == p),
                    "{p} not declared"
                );
            }
            assert_eq!(built.requestheader_ca.unwrap().certificates().len(), 1);
            assert!(built.client_ca.is_none());
        });
    }

    #[cfg(feature = "remote")]
    #[test]
    fn oidc_is_audience_agnostic_even_without_api_audiences() {
        // kube-apiserver wraps its JWT authenticators in WrapAudienceAgnosticToken(apiAudiences)
        // whatever the audiences: with none configured, a request for audience "x" finds no
        // common audience, so the OIDC issuer's token is not mine (then Bearer's "invalid
        // bearer token"), before the authenticator is even asked.
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let token = format!(
            "{}.{}.{}",
            b64(r#"{"alg":"RS256","kid":"k"}"#),
            b64(r#"{"iss":"https://127.0.0.1:9","aud":"k","exp":4102444800}"#),
            b64("signature")
        );
        runtime().block_on(async {
            let options = AuthenticationOptions {
                oidc: crate::token::oidc::config::OidcFlags {
                    issuer_url: "https://127.0.0.1:9".into(),
                    client_id: "k".into(),
                    ..Default::default()
                },
                anonymous_auth: Some(false),
                ..AuthenticationOptions::default()
            };
            let built = options.build().unwrap();
            let (parts, ()) = http::Request::get("https://h/")
                .header("authorization", format!("Bearer {token}"))
                .body(())
                .unwrap()
                .into_parts();
            let cases = [
                (
                    "audience requested",
                    crate::authenticator::Context::with_audiences(Audiences::from(["x"])),
                    "invalid bearer token",
                ),
                (
                    "no audience requested: the issuer's authenticator answers",
                    crate::authenticator::Context::default(),
                    "oidc: authenticator not initialized",
                ),
            ];
            for (name, ctx, want) in cases {
                let err = built
                    .chain
                    .authenticate_request(&parts, &ctx)
                    .await
                    .unwrap_err();
                assert!(err.to_string().contains(want), "{name}: {err}");
            }
        });
    }

    #[cfg(feature = "remote")]
    #[test]
    fn anonymous_from_the_authentication_configuration_file() {
        // The file's `anonymous` section replaces --anonymous-auth (kube-apiserver's
        // ToAuthenticationConfig): who is anonymous on which path, with no credentials.
        const HEAD: &str =
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
        let dir = tempfile::tempdir().unwrap();
        /// Name, anonymous section, --anonymous-auth, anonymous on [/livez, /api] (or the error).
        type Case = (
            &'static str,
            &'static str,
            Option<bool>,
            Result<[bool; 2], &'static str>,
        );
        let cases: Vec<Case> = vec![
            (
                "no section, flag unset: every path",
                "",
                None,
                Ok([true, true]),
            ),
            (
                "no section, flag false",
                "",
                Some(false),
                Ok([false, false]),
            ),
            (
                "disabled",
                "anonymous:\n  enabled: false\n",
                None,
                Ok([false, false]),
            ),
            (
                "enabled",
                "anonymous:\n  enabled: true\n",
                None,
                Ok([true, true]),
            ),
            (
                "enabled on /livez only",
                "anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n",
                None,
                Ok([true, false]),
            ),
            (
                "conditions while disabled",
                "anonymous:\n  enabled: false\n  conditions:\n  - path: /livez\n",
                None,
                Err(
                    "anonymous.conditions: Invalid value: [{\"Path\":\"/livez\"}]: enabled should be set to true when conditions are defined",
                ),
            ),
            (
                "section and flag together",
                "anonymous:\n  enabled: true\n",
                Some(true),
                Err(
                    "anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file",
                ),
            ),
            (
                "an unknown field in the section",
                "anonymous:\n  enable: true\n",
                None,
                Err("strict decoding error: unknown field \"anonymous.enable\""),
            ),
        ];
        runtime().block_on(async {
            for (name, section, flag, want) in cases {
                let file = dir.path().join("authn.yaml");
                std::fs::write(&file, format!("{HEAD}{section}")).unwrap();
                let options = AuthenticationOptions {
                    authentication_config: Some(file),
                    anonymous_auth: flag,
                    ..AuthenticationOptions::default()
                };
                let built = match (options.build(), want) {
                    (Ok(built), Ok(want)) => (built, want),
                    (Err(e), Err(text)) => {
                        assert!(e.to_string().contains(text), "{name}: {e}");
                        continue;
                    }
                    (Ok(_), Err(text)) => panic!("{name}: built, want {text:?}"),
                    (Err(e), Ok(_)) => panic!("{name}: {e}"),
                };
                let (built, want) = built;
                for (path, anonymous) in ["/livez", "/api"].into_iter().zip(want) {
                    let (parts, ()) = http::Request::get(format!("https://h{path}"))
                        .body(())
                        .unwrap()
                        .into_parts();
                    let got = built
                        .chain
                        .authenticate_request(&parts, &crate::authenticator::Context::default())
                        .await
                        .unwrap();
                    assert_eq!(
                        got.map(|r| r.user.name().to_owned()),
                        anonymous.then(|| "system:anonymous".to_owned()),
                        "{name}: {path}"
                    );
                }
            }
        });
    }

    /// kube-apiserver's bearer and WebSocket authenticators always run, because its JWT
    /// authenticator is always in the token union (empty without `--authentication-config` or
    /// `--oidc-*`): a well-formed token nobody takes is `invalid bearer token`, not anonymous,
    /// whatever else is configured (Go: `pkg/kubeapiserver/authenticator/config.go`, v1.37.2).
    #[test]
    fn a_token_nobody_takes_is_an_error_in_every_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let passwords = dir.path().join("passwords.csv");
        std::fs::write(&passwords, "secret,alice,1\n").unwrap();
        let tokens = dir.path().join("tokens.csv");
        std::fs::write(&tokens, "t0ken,bob,2\n").unwrap();
        let ws = |token: &str| {
            http::Request::get("https://h/api")
                .header("connection", "Upgrade")
                .header("upgrade", "websocket")
                .header(
                    "sec-websocket-protocol",
                    format!("base64url.bearer.authorization.k8s.io.{token}, chat"),
                )
                .body(())
                .unwrap()
                .into_parts()
                .0
        };
        let bearer = |token: &str| {
            http::Request::get("https://h/api")
                .header("authorization", format!("Bearer {token}"))
                .body(())
                .unwrap()
                .into_parts()
                .0
        };
        let cases: Vec<(&str, AuthenticationOptions)> = vec![
            ("no flags", AuthenticationOptions::default()),
            (
                "anonymous off",
                AuthenticationOptions {
                    anonymous_auth: Some(false),
                    ..AuthenticationOptions::default()
                },
            ),
            (
                "basic auth only",
                AuthenticationOptions {
                    basic_auth_file: Some(passwords.clone()),
                    ..AuthenticationOptions::default()
                },
            ),
            (
                "token file",
                AuthenticationOptions {
                    token_auth_file: Some(tokens.clone()),
                    ..AuthenticationOptions::default()
                },
            ),
        ];
        runtime().block_on(async {
            let ctx = crate::authenticator::Context::default();
            for (name, options) in cases {
                let built = options.build().unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(built.chain.description().schemes.bearer(), "{name}");
                // "YWJj" is base64url of "abc".
                for (how, parts) in [("bearer", bearer("abc")), ("websocket", ws("YWJj"))] {
                    let err = built
                        .chain
                        .authenticate_request(&parts, &ctx)
                        .await
                        .map(|r| r.map(|r| r.user.name().to_owned()))
                        .expect_err(&format!("{name}: {how}: a token nobody takes"));
                    assert_eq!(err.to_string(), "invalid bearer token", "{name}: {how}");
                }
                // No credential at all stays anonymous (or not mine with anonymous off).
                let (parts, ()) = http::Request::get("https://h/api")
                    .body(())
                    .unwrap()
                    .into_parts();
                let got = built
                    .chain
                    .authenticate_request(&parts, &ctx)
                    .await
                    .unwrap();
                assert_eq!(
                    got.map(|r| r.user.name().to_owned()).is_some(),
                    name != "anonymous off",
                    "{name}: no credential"
                );
            }
        });
    }

    #[test]
    fn requestheader_flag_errors() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.crt");
        std::fs::write(&ca, crate::x509::doc_ca_pem()).unwrap();
        let with = |r: RequestHeaderConfig, client_ca: bool| AuthenticationOptions {
            requestheader: r,
            client_ca_file: client_ca.then(|| ca.clone()),
            ..AuthenticationOptions::default()
        };
        let cases: Vec<(&str, AuthenticationOptions, &str)> = vec![
            (
                "empty group header",
                with(
                    RequestHeaderConfig {
                        group_headers: vec![" ".into()],
                        ..RequestHeaderConfig::default()
                    },
                    false,
                ),
                "empty value in \"requestheader-group-headers\"",
            ),
            (
                "uid without the standard name",
                with(
                    RequestHeaderConfig {
                        uid_headers: vec!["X-Uid".into()],
                        ..RequestHeaderConfig::default()
                    },
                    false,
                ),
                "--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work",
            ),
            (
                "same CA for clients and proxies, no allowed names",
                with(
                    RequestHeaderConfig {
                        client_ca_file: Some(ca.clone()),
                        ..RequestHeaderConfig::standard()
                    },
                    true,
                ),
                "--requestheader-client-ca-file and --client-ca-file contain overlapping certificates",
            ),
            (
                "missing CA file",
                with(
                    RequestHeaderConfig {
                        client_ca_file: Some("/nonexistent/ca.crt".into()),
                        ..RequestHeaderConfig::standard()
                    },
                    false,
                ),
                "--requestheader-client-ca-file: ",
            ),
        ];
        runtime().block_on(async {
            for (name, options, want) in cases {
                let err = options.build().unwrap_err().to_string();
                assert!(err.contains(want), "{name}: {err}");
            }
            // Overlap is fine once the proxy's CN is pinned (kube-apiserver's rule).
            let pinned = with(
                RequestHeaderConfig {
                    client_ca_file: Some(ca.clone()),
                    allowed_names: vec!["front-proxy-client".into()],
                    ..RequestHeaderConfig::standard()
                },
                true,
            );
            assert!(pinned.build().is_ok());
        });
    }

    #[test]
    fn requestheader_header_names_are_refused_under_their_own_flag() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.crt");
        std::fs::write(&ca, crate::x509::doc_ca_pem()).unwrap();
        let blank = dir.path().join("blank.crt");
        std::fs::write(&blank, " \n").unwrap();
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let with = |f: &dyn Fn(&mut RequestHeaderConfig)| {
            let mut r = RequestHeaderConfig {
                client_ca_file: Some(ca.clone()),
                allowed_names: list(&["front-proxy-client"]),
                ..RequestHeaderConfig::standard()
            };
            f(&mut r);
            AuthenticationOptions {
                requestheader: r,
                ..AuthenticationOptions::default()
            }
        };
        let cases: Vec<(&str, AuthenticationOptions, Result<(), String>)> = vec![
            ("standard names", with(&|_| {}), Ok(())),
            (
                // --requestheader-username-headers="X-Remote-User, X-Proxy-User": Go keeps
                // " X-Proxy-User" and never matches it; FrontProxy::new would trust X-Proxy-User.
                "space after the comma of a username list",
                with(&|r| r.username_headers = list(&["X-Remote-User", " X-Proxy-User"])),
                Err(r#"--requestheader-username-headers: header name " X-Proxy-User" has surrounding white space; kube-apiserver would never match it"#.into()),
            ),
            (
                "trailing TAB in a uid header",
                with(&|r| r.uid_headers = list(&["X-Remote-Uid", "X-Uid\t"])),
                Err(r#"--requestheader-uid-headers: header name "X-Uid\t" has surrounding white space; kube-apiserver would never match it"#.into()),
            ),
            (
                "padded group header",
                with(&|r| r.group_headers = list(&[" X-Remote-Group "])),
                Err(r#"--requestheader-group-headers: header name " X-Remote-Group " has surrounding white space; kube-apiserver would never match it"#.into()),
            ),
            (
                "padded extra prefix",
                with(&|r| r.extra_headers_prefix = list(&["X-Remote-Extra-", "X-Acme- "])),
                Err(r#"--requestheader-extra-headers-prefix: header prefix "X-Acme- " has surrounding white space; kube-apiserver would never match it"#.into()),
            ),
            (
                "invalid group header name is reported under the group flag, not the CA flag",
                with(&|r| r.group_headers = list(&["X-Remote-Group", "bad header"])),
                Err(r#"--requestheader-group-headers: invalid header name "bad header""#.into()),
            ),
            (
                "invalid username header name",
                with(&|r| r.username_headers = list(&["X-Remote-User", "X@User"])),
                Err(r#"--requestheader-username-headers: invalid header name "X@User""#.into()),
            ),
            (
                "missing CA file is reported under the CA flag",
                with(&|r| r.client_ca_file = Some("/nonexistent/ca.crt".into())),
                Err("--requestheader-client-ca-file: open /nonexistent/ca.crt: no such file or directory".into()),
            ),
            (
                "white-space-only CA file",
                with(&|r| r.client_ca_file = Some(blank.clone())),
                Err(format!(
                    "--requestheader-client-ca-file: error loading CA bundle for \"request-header::{}\": data does not contain any valid RSA or ECDSA certificates",
                    blank.display()
                )),
            ),
            (
                "white space only is validate's error, reported first",
                with(&|r| r.group_headers = list(&[" "])),
                Err("empty value in \"requestheader-group-headers\"".into()),
            ),
        ];
        runtime().block_on(async {
            for (name, options, want) in cases {
                let got = options.build().map(|_| ()).map_err(|e| e.to_string());
                assert_eq!(got, want, "case {name}");
            }
        });
    }

    /// `go_parse_duration` is Go's `time.ParseDuration`: each row printed by Go 1.26 for the
    /// same bytes (negative durations, the int64 limits, bytes that are not UTF-8).
    #[test]
    fn go_parse_duration_is_gos() {
        let cases: &[(&[u8], Result<i64, &str>)] = &[
            (b"x", Err(r#"time: invalid duration "x""#)),
            // Go's uint64 sum wraps to 0 (printed by Go 1.26): no overflow panic here.
            (b"9223372036854775808ns9223372036854775808ns", Ok(0)),
            (b"-9223372036854775808ns9223372036854775808ns", Ok(0)),
            (
                b"9223372036854775808ns1ns",
                Err(r#"time: invalid duration "9223372036854775808ns1ns""#),
            ),
            (b"1ns", Ok(1)),
            (b"-1.5s", Ok(-1_500_000_000)),
            (b"+0", Ok(0)),
            (b"0", Ok(0)),
            (b"-0", Ok(0)),
            (b"", Err(r#"time: invalid duration """#)),
            (b"+", Err(r#"time: invalid duration "+""#)),
            (b"-", Err(r#"time: invalid duration "-""#)),
            (b"1", Err(r#"time: missing unit in duration "1""#)),
            (b"1e3s", Err(r#"time: unknown unit "e" in duration "1e3s""#)),
            (b" 1s", Err(r#"time: invalid duration " 1s""#)),
            (b"\xff", Err(r#"time: invalid duration "\xff""#)),
            (
                b"1\xff",
                Err(r#"time: unknown unit "\xff" in duration "1\xff""#),
            ),
            (b"1.5h", Ok(5_400_000_000_000)),
            (b".5s", Ok(500_000_000)),
            (b"5.s", Ok(5_000_000_000)),
            (b"-.s", Err(r#"time: invalid duration "-.s""#)),
            (b"9223372036854775807ns", Ok(i64::MAX)),
            (
                b"9223372036854775808ns",
                Err(r#"time: invalid duration "9223372036854775808ns""#),
            ),
            (b"-9223372036854775808ns", Ok(i64::MIN)),
            (
                b"-9223372036854775809ns",
                Err(r#"time: invalid duration "-9223372036854775809ns""#),
            ),
            (b"2562047h47m16.854775807s", Ok(i64::MAX)),
            (
                b"2562047h47m16.854775808s",
                Err(r#"time: invalid duration "2562047h47m16.854775808s""#),
            ),
            (b"-2562047h47m16.854775808s", Ok(i64::MIN)),
            (b"0.0000000001s", Ok(0)),
            (b"1.0000000000000000000000001h", Ok(3_600_000_000_000)),
            (
                b"18446744073709551616ns",
                Err(r#"time: invalid duration "18446744073709551616ns""#),
            ),
            (b"30s", Ok(30_000_000_000)),
            ("1\u{b5}s".as_bytes(), Ok(1_000)),
            ("1\u{3bc}s".as_bytes(), Ok(1_000)),
            (b"1us", Ok(1_000)),
            (b"\"<", Err(r#"time: invalid duration "\"<""#)),
            (b"1h1h1h", Ok(10_800_000_000_000)),
            (b"3.000000001s", Ok(3_000_000_001)),
            (b"0.3333333333333333333h", Ok(1_200_000_000_000)),
        ];
        for (input, want) in cases {
            let got = go_parse_duration(input).map_err(|e| e.to_string());
            assert_eq!(
                got.as_ref().map_err(String::as_str),
                want.as_ref().map_err(|e| *e),
                "{input:?}"
            );
        }
    }

    /// Duration errors quote as Go's `time.quote` does, not as Rust's `{:?}` (nor Go's `%q`):
    /// expected texts printed by Go 1.26's `time.ParseDuration` for the same inputs (a
    /// negative duration is kube-authn's own error, quoted the same way).
    #[test]
    fn go_duration_errors_quote_as_go_time_quote() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "micro sign without s",
                "1\u{b5}",
                r#"time: unknown unit "\xc2\xb5" in duration "1\xc2\xb5""#,
            ),
            (
                "tab",
                "1\t",
                r#"time: unknown unit "\x09" in duration "1\x09""#,
            ),
            (
                "control byte after a unit",
                "2m\x01",
                r#"time: unknown unit "m\x01" in duration "2m\x01""#,
            ),
            (
                "two-byte letter",
                "1\u{e9}",
                r#"time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9""#,
            ),
            (
                "double quote",
                "1\"",
                r#"time: unknown unit "\"" in duration "1\"""#,
            ),
            (
                "backslash",
                "1\\",
                r#"time: unknown unit "\\" in duration "1\\""#,
            ),
            (
                "DEL is kept as is",
                "1\x7f",
                "time: unknown unit \"\x7f\" in duration \"1\x7f\"",
            ),
            (
                "non-ASCII first",
                "\u{b5}s",
                r#"time: invalid duration "\xc2\xb5s""#,
            ),
            (
                "letter alone",
                "\u{e9}",
                r#"time: invalid duration "\xc3\xa9""#,
            ),
            (
                "newline",
                "1\n",
                r#"time: unknown unit "\x0a" in duration "1\x0a""#,
            ),
            (
                "NUL",
                "1\0",
                r#"time: unknown unit "\x00" in duration "1\x00""#,
            ),
            (
                "four-byte character",
                "1d\u{10348}",
                r#"time: unknown unit "d\xf0\x90\x8d\x88" in duration "1d\xf0\x90\x8d\x88""#,
            ),
            (
                "replacement character",
                "1\u{fffd}",
                r#"time: unknown unit "\xef\xbf\xbd" in duration "1\xef\xbf\xbd""#,
            ),
            (
                "no-break space",
                "1s\u{a0}",
                r#"time: unknown unit "s\xc2\xa0" in duration "1s\xc2\xa0""#,
            ),
            ("leading tab", "\t1s", r#"time: invalid duration "\x091s""#),
            (
                "quote and backslash in a unit",
                "1ms\"x\\",
                r#"time: unknown unit "ms\"x\\" in duration "1ms\"x\\""#,
            ),
            (
                "zero-width space",
                "10\u{200b}",
                r#"time: unknown unit "\xe2\x80\x8b" in duration "10\xe2\x80\x8b""#,
            ),
            (
                "line separator",
                "1h\u{2028}",
                r#"time: unknown unit "h\xe2\x80\xa8" in duration "1h\xe2\x80\xa8""#,
            ),
            (
                "micro sign alone",
                "\u{b5}",
                r#"time: invalid duration "\xc2\xb5""#,
            ),
            (
                "missing unit before a non-ASCII one",
                "1.5.5\u{b5}s",
                r#"time: missing unit in duration "1.5.5\xc2\xb5s""#,
            ),
            (
                "missing unit before a tab",
                "1..\t",
                r#"time: missing unit in duration "1..\x09""#,
            ),
            (
                "negative (kube-authn's own error)",
                "-1\u{b5}s",
                r#"negative duration "-1\xc2\xb5s" is not allowed"#,
            ),
        ];
        for (name, input, want) in cases {
            assert_eq!(
                parse_go_duration(input).unwrap_err().to_string(),
                *want,
                "case {name}"
            );
        }
    }

    #[test]
    fn go_duration_vectors() {
        // Vectors from Go's time.ParseDuration tests (positive ones; we refuse negatives).
        let ok: &[(&str, u64)] = &[
            ("0", 0),
            ("-0", 0),
            ("+0", 0),
            ("5s", 5_000_000_000),
            ("30s", 30_000_000_000),
            ("1478s", 1_478_000_000_000),
            ("+5s", 5_000_000_000),
            ("5.0s", 5_000_000_000),
            ("5.6s", 5_600_000_000),
            ("5.s", 5_000_000_000),
            (".5s", 500_000_000),
            ("1.0s", 1_000_000_000),
            ("1.00s", 1_000_000_000),
            ("1.004s", 1_004_000_000),
            ("1.0040s", 1_004_000_000),
            ("100.00100s", 100_001_000_000),
            ("10ns", 10),
            ("11us", 11_000),
            ("12\u{b5}s", 12_000),
            ("12\u{3bc}s", 12_000),
            ("13ms", 13_000_000),
            ("14s", 14_000_000_000),
            ("15m", 900_000_000_000),
            ("16h", 57_600_000_000_000),
            ("3h30m", 12_600_000_000_000),
            ("10.5s4m", 250_500_000_000),
            ("1h1m1s1ms1us1ns", 3_661_001_001_001),
            ("2m0s", 120_000_000_000),
            ("39h9m14.425s", 140_954_425_000_000),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 1_200_000_000_000),
            ("9007199254740993ns", 9_007_199_254_740_993),
            ("9223372036854775807ns", 9_223_372_036_854_775_807),
            ("9223372036854775.807us", 9_223_372_036_854_775_807),
            ("9223372036s854ms775us807ns", 9_223_372_036_854_775_807),
            ("0.100000000000000000000h", 360_000_000_000),
            ("0.830103483285477580700h", 2_988_372_539_827),
        ];
        for (input, nanos) in ok {
            assert_eq!(
                parse_go_duration(input).unwrap(),
                Duration::from_nanos(*nanos),
                "{input}"
            );
        }
        let bad: &[(&str, &str)] = &[
            ("", r#"time: invalid duration """#),
            ("3", r#"time: missing unit in duration "3""#),
            ("-", r#"time: invalid duration "-""#),
            ("s", r#"time: invalid duration "s""#),
            (".", r#"time: invalid duration ".""#),
            ("-.", r#"time: invalid duration "-.""#),
            (".s", r#"time: invalid duration ".s""#),
            ("+.s", r#"time: invalid duration "+.s""#),
            ("1d", r#"time: unknown unit "d" in duration "1d""#),
            ("2m 0s", r#"time: unknown unit "m " in duration "2m 0s""#),
            (
                "9223372036854775808ns",
                r#"time: invalid duration "9223372036854775808ns""#,
            ),
            (
                "9223372036854775.808us",
                r#"time: invalid duration "9223372036854775.808us""#,
            ),
            ("-1s", r#"negative duration "-1s" is not allowed"#),
        ];
        for (input, want) in bad {
            assert_eq!(
                parse_go_duration(input).unwrap_err().to_string(),
                *want,
                "{input}"
            );
        }
    }
}
