//! Wiring for a server: `--oidc-*` flags or an `--authentication-config` file → one
//! [`OidcAuthenticator`] per issuer, registered on an [`IssuerRouter`], each connected to its
//! issuer by [`discovery::spawn`] (non-blocking: an unreachable issuer does not delay or fail
//! start-up).
//!
//! ```no_run
//! # async fn f() -> Result<(), kube_authn::ConfigError> {
//! use kube_authn::jwt::router::IssuerRouter;
//! use kube_authn::token::oidc::config::OidcFlags;
//! use kube_authn::token::oidc::discovery::DiscoveryOptions;
//! use kube_authn::token::oidc::remote::{jwt_configs, start};
//! let flags = OidcFlags { issuer_url: "https://issuer.example".into(), client_id: "kube".into(), ..Default::default() };
//! let sa_issuers = vec!["https://kubernetes.default.svc".to_string()];
//! let configs = jwt_configs(&flags, None, &sa_issuers)?;
//! let mut router = IssuerRouter::new(); // the service-account authenticators go on it too
//! let oidc = start(configs, None, DiscoveryOptions::default(), &mut router)?;
//! // serve with `router` in the token chain; keep `oidc` alive as long as the server runs
//! # drop(oidc); Ok(()) }
//! ```

use std::sync::Arc;

use super::OidcAuthenticator;
use super::config::{JwtAuthenticatorConfig, OidcFlags, load_authentication_configuration};
use super::discovery::{self, DiscoveryHandle, DiscoveryOptions};
use crate::authenticator::Audiences;
use crate::error::ConfigError;
use crate::jwt::router::IssuerRouter;

/// The JWT authenticator configurations of a server: from the `--oidc-*` flags, or from the
/// `--authentication-config` file's bytes (never both: Kubernetes' "authentication-config file
/// and oidc-* flags are mutually exclusive"). `disallowed_issuers` are the service-account
/// issuers. No flags and no file → no authenticators.
///
/// ```
/// use kube_authn::token::oidc::{config::OidcFlags, remote::jwt_configs};
/// assert!(jwt_configs(&OidcFlags::default(), None, &[]).unwrap().is_empty());
/// let flags = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() };
/// assert_eq!(jwt_configs(&flags, None, &[]).unwrap().len(), 1);
/// let file = b"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
/// assert_eq!(jwt_configs(&flags, Some(file), &[]).unwrap_err().to_string(),
///     "authentication-config file and oidc-* flags are mutually exclusive");
/// ```
pub fn jwt_configs(
    flags: &OidcFlags,
    authentication_config: Option<&[u8]>,
    disallowed_issuers: &[String],
) -> Result<Vec<JwtAuthenticatorConfig>, ConfigError> {
    match (flags.any_set(), authentication_config) {
        (true, Some(_)) => Err(ConfigError::new(super::config::ERR_CONFIG_AND_FLAGS)),
        (true, None) => Ok(vec![flags.to_config(disallowed_issuers)?]),
        (false, Some(data)) => load_authentication_configuration(data, disallowed_issuers),
        (false, None) => Ok(Vec::new()),
    }
}

/// The running OIDC authenticators of a server and their background tasks. Dropping it
/// stops the initialisation tasks of issuers not yet reached.
///
/// ```no_run
/// # fn f(oidc: kube_authn::token::oidc::remote::OidcAuthenticators) {
/// for h in &oidc.handles {
///     if let Err(e) = h.health() { eprintln!("{e}"); }
/// }
/// # }
/// ```
#[derive(Debug)]
#[must_use = "dropping it stops the background initialisation"]
pub struct OidcAuthenticators {
    /// One authenticator per `jwt[]` entry (or the flags), in configuration order.
    pub authenticators: Vec<Arc<OidcAuthenticator>>,
    /// Their discovery handles, in the same order.
    pub handles: Vec<DiscoveryHandle>,
}

impl OidcAuthenticators {
    /// Kubernetes' health check over all issuers: the first unhealthy one's error.
    ///
    /// ```no_run
    /// # fn f(oidc: kube_authn::token::oidc::remote::OidcAuthenticators) {
    /// assert!(oidc.health().is_ok());
    /// # }
    /// ```
    pub fn health(&self) -> Result<(), String> {
        self.handles.iter().try_for_each(|h| h.health())
    }

    /// Stops recording JWKS metrics for these issuers (a reload replaced them).
    pub(crate) fn retire(&self) {
        self.handles.iter().for_each(DiscoveryHandle::retire);
    }

    /// Waits until every issuer is initialised (forever if one never answers); `Err` (that
    /// issuer's health text) as soon as one's initialisation task ended without success
    /// ([`DiscoveryHandle::initialized`]).
    ///
    /// ```no_run
    /// # async fn f(oidc: kube_authn::token::oidc::remote::OidcAuthenticators) {
    /// if let Err(e) = oidc.initialized().await { eprintln!("{e}"); }
    /// # }
    /// ```
    pub async fn initialized(&self) -> Result<(), String> {
        for h in &self.handles {
            h.initialized().await?;
        }
        Ok(())
    }
}

/// Builds one [`OidcAuthenticator`] per configuration (audience-agnostic with
/// `api_audiences` when given, as kube-apiserver wraps them), registers each on `router` under
/// its issuer URL (and `accounts.google.com` for `https://accounts.google.com`), and starts
/// its discovery task. Must be called inside a Tokio runtime; returns at once.
///
/// ```no_run
/// # async fn f() -> Result<(), kube_authn::ConfigError> {
/// use kube_authn::{jwt::router::IssuerRouter, token::oidc::{config::OidcFlags, discovery::DiscoveryOptions, remote::start}};
/// let cfg = OidcFlags { issuer_url: "https://i.example".into(), client_id: "c".into(), ..Default::default() }.to_config(&[])?;
/// let mut router = IssuerRouter::new();
/// let oidc = start(vec![cfg], None, DiscoveryOptions::default(), &mut router)?;
/// assert!(router.has_issuer("https://i.example"));
/// # drop(oidc); Ok(()) }
/// ```
pub fn start(
    configs: Vec<JwtAuthenticatorConfig>,
    api_audiences: Option<Audiences>,
    opts: DiscoveryOptions,
    router: &mut IssuerRouter,
) -> Result<OidcAuthenticators, ConfigError> {
    let mut authenticators = Vec::with_capacity(configs.len());
    let mut handles = Vec::with_capacity(configs.len());
    for cfg in configs {
        let mut a = OidcAuthenticator::new(cfg);
        if let Some(aud) = &api_audiences {
            a = a.with_api_audiences(aud.clone());
        }
        let a = Arc::new(a);
        handles.push(discovery::spawn(&a, opts.clone())?);
        authenticators.push(a);
    }
    for a in &authenticators {
        let url = a.issuer_url();
        router.add(url, a.clone());
        if url == "https://accounts.google.com" {
            router.add("accounts.google.com", a.clone());
        }
    }
    Ok(OidcAuthenticators {
        authenticators,
        handles,
    })
}
