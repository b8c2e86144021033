//! kube-apiserver's authentication flags, as a plain struct, turned into a [`Chain`].
//!
//! [`AuthenticationOptions`] mirrors the flags of `kube-apiserver` (and `kube-authn serve`)
//! field by field, with kube-apiserver's defaults, and [`AuthenticationOptions::build`]
//! assembles the chain in kube-apiserver's order (`pkg/kubeapiserver/authenticator/config.go`):
//!
//! ```text
//! basic auth (--basic-auth-file, the ≤1.18 position)
//! client certificates (--client-ca-file)
//! bearer + WebSocket over union(token file (--token-auth-file, audience-agnostic))
//! → system:authenticated group adder
//! → fail-on-error union with anonymous (--anonymous-auth, default true)
//! ```
//!
//! Files are watched and reloaded (see [`crate::reload`]); keep the returned [`Built::tasks`]
//! alive for as long as the chain is used.
//!
//! ```no_run
//! use kube_authn::config::AuthenticationOptions;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let options = AuthenticationOptions {
//!     token_auth_file: Some("/etc/kubernetes/tokens.csv".into()),
//!     anonymous_auth: false,
//!     ..AuthenticationOptions::default()
//! };
//! let built = options.build().expect("valid configuration");
//! assert!(built.chain.schemes().bearer());
//! # });
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::authenticator::Audiences;
use crate::chain::anonymous::Anonymous;
use crate::chain::audiences::AudienceAgnostic;
use crate::chain::{Chain, ChainBuilder};
use crate::error::ConfigError;
use crate::password::file::PasswordFile;
use crate::reload::WatchTask;
use crate::request::Basic;
use crate::token::anytoken::AnyToken;
use crate::token::file::TokenFile;
use crate::x509::{CaBundle, X509Authenticator};

/// How often watched files are checked for changes.
pub const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// kube-apiserver's authentication flags. See the [module docs](self).
///
/// ```
/// let o = kube_authn::config::AuthenticationOptions::default();
/// assert!(o.anonymous_auth); // kube-apiserver's default
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
    /// `--anonymous-auth` (default true).
    pub anonymous_auth: bool,
    /// `--api-audiences`.
    pub api_audiences: Vec<String>,
    /// `--insecure-allow-any-token` (removed from kube-apiserver in 1.8): accept **any** bearer
    /// token as `user/group1,group2`. Never use outside throw-away test setups.
    pub insecure_allow_any_token: bool,
    /// How often watched files are checked for changes.
    pub reload_interval: Duration,
}

impl Default for AuthenticationOptions {
    fn default() -> Self {
        Self {
            token_auth_file: None,
            client_ca_file: None,
            basic_auth_file: None,
            anonymous_auth: true,
            api_audiences: Vec::new(),
            insecure_allow_any_token: false,
            reload_interval: DEFAULT_RELOAD_INTERVAL,
        }
    }
}

/// A built chain and the tasks that keep its files fresh.
///
/// ```no_run
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let built = kube_authn::config::AuthenticationOptions::default().build().unwrap();
/// let _chain = built.chain.clone();
/// # });
/// ```
#[derive(Debug)]
pub struct Built {
    /// The chain.
    pub chain: Chain,
    /// The API audiences to put on each request (see the middleware).
    pub api_audiences: Audiences,
    /// The `--client-ca-file` bundle as loaded at start-up, for the TLS handshake's list of
    /// acceptable client CAs (a hint only: certificates are verified per request).
    pub client_ca: Option<Arc<CaBundle>>,
    /// Reload tasks; dropping them stops reloading.
    pub tasks: Vec<WatchTask>,
}

impl AuthenticationOptions {
    /// Loads the files and builds the chain. File errors name the flag and the file. Must be
    /// called inside a Tokio runtime (reload tasks are spawned on it).
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
    pub fn build(&self) -> Result<Built, ConfigError> {
        let api_audiences = Audiences::new(&self.api_audiences);
        let mut builder = ChainBuilder::new();
        let mut tasks = Vec::new();
        if let Some(path) = &self.basic_auth_file {
            let file = PasswordFile::open(path)
                .map_err(|e| ConfigError::new(format!("--basic-auth-file: {e}")))?;
            tasks.extend(file.watch(self.reload_interval));
            builder = builder.request(AudienceAgnostic::new(
                api_audiences.clone(),
                Basic::new(file),
            ));
        }
        let mut client_ca = None;
        if let Some(path) = &self.client_ca_file {
            let x509 = X509Authenticator::from_ca_file(path)
                .map_err(|e| ConfigError::new(format!("--client-ca-file: {e}")))?;
            tasks.extend(x509.spawn_watch(self.reload_interval));
            client_ca = Some(x509.bundle());
            builder = builder.request(x509);
        }
        if let Some(path) = &self.token_auth_file {
            let file = TokenFile::open(path)
                .map_err(|e| ConfigError::new(format!("--token-auth-file: {e}")))?;
            tasks.extend(file.watch(self.reload_interval));
            builder = builder.token(AudienceAgnostic::new(api_audiences.clone(), file));
        }
        if self.insecure_allow_any_token {
            builder = builder.token_arc(Arc::new(AnyToken::insecure_allow_any_token()));
        }
        if self.anonymous_auth {
            builder = builder.anonymous(Anonymous::new());
        }
        Ok(Built {
            chain: builder.build(),
            api_audiences,
            client_ca,
            tasks,
        })
    }
}
