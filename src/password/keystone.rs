//! The legacy OpenStack Keystone password authenticator (`--experimental-keystone-url`,
//! `--experimental-keystone-ca-file`; kubernetes `plugin/pkg/auth/authenticator/password/keystone`,
//! removed in v1.10 in favour of the out-of-tree webhook).
//!
//! Basic credentials are checked with an OpenStack Identity v3 password authentication,
//! `POST {auth-url}/v3/auth/tokens?nocatalog`:
//!
//! ```json
//! {"auth":{"identity":{"methods":["password"],
//!   "password":{"user":{"name":"<user>","domain":{"id":"default"},"password":"<password>"}}}}}
//! ```
//!
//! A `201 Created` whose body is a token (`{"token": {…}}`, at most 1 MiB) means the password is
//! right — exactly what gophercloud's v3 token request accepted — and the user is
//! `{Name: <user name from the request>}` with no UID or groups. Any other answer (another 2xx,
//! a 201 without a token body) and **any** failure — wrong password, unknown user, Keystone
//! down, TLS error — is the error `Failed to authenticate`, so it is a 401 even with anonymous
//! access enabled: an auth URL pointing at some other HTTPS service cannot accept passwords.
//! The URL must be https, checked on the value as given (`Auth URL should be secure and start
//! with https`); an empty one is `Auth URL is empty`. The issued Keystone token is not kept.
//!
//! Kubernetes authenticated through gophercloud with only a user name, which resolves against
//! the identity API's default domain; this implementation names that domain explicitly
//! (`id: default`, configurable with [`KeystoneAuthenticator::with_user_domain_id`]).
//!
//! ```
//! use kube_authn::password::keystone::KeystoneAuthenticator;
//! assert_eq!(
//!     KeystoneAuthenticator::new("http://keystone:5000", None).unwrap_err().to_string(),
//!     "Auth URL should be secure and start with https"
//! );
//! assert_eq!(KeystoneAuthenticator::new("", None).unwrap_err().to_string(), "Auth URL is empty");
//! assert!(KeystoneAuthenticator::new("https://keystone:5000/v3", None).is_ok());
//! ```

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::authenticator::{AuthFuture, AuthResult, Context, PasswordAuthenticator, Response};
use crate::error::{ConfigError, Error, ErrorKind};
use crate::outbound::{ConnectionInfo, Pem};
use crate::user::UserInfo;

/// The error every Keystone failure becomes (Kubernetes' text).
///
/// ```
/// use kube_authn::password::keystone::FAILED_TO_AUTHENTICATE;
/// assert_eq!(FAILED_TO_AUTHENTICATE, "Failed to authenticate");
/// ```
pub const FAILED_TO_AUTHENTICATE: &str = "Failed to authenticate";

/// How many Keystone logins may be in flight at once by default (each Basic request is one
/// outbound POST of up to 30 s: unbounded, anyone could hold that many tasks and connections
/// open and spray passwords at Keystone through this server).
///
/// ```
/// assert_eq!(kube_authn::password::keystone::DEFAULT_MAX_IN_FLIGHT, 256);
/// ```
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// Authenticates user name and password with an OpenStack Identity v3 password login
/// (`201 Created` with a token: the user; anything else: `Failed to authenticate`). The
/// protocol and the differences from Kubernetes are in the [module docs](self).
///
/// Every failure is an error, so it is a 401 even with anonymous access enabled. Here the
/// Keystone address refuses connections:
///
/// ```
/// use kube_authn::authenticator::{Context, PasswordAuthenticator};
/// use kube_authn::password::keystone::{FAILED_TO_AUTHENTICATE, KeystoneAuthenticator};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // Port 1 on the loopback address: nothing listens there.
/// let keystone = KeystoneAuthenticator::new("https://127.0.0.1:1/v3", None).unwrap();
/// let err = keystone.authenticate_password("alice", "s3cret", &Context::default()).await.unwrap_err();
/// assert_eq!(err.to_string(), FAILED_TO_AUTHENTICATE);
/// // The password is never part of the error or of `Debug`.
/// assert!(!format!("{err:?} {keystone:?}").contains("s3cret"));
/// # });
/// ```
#[derive(Clone)]
pub struct KeystoneAuthenticator {
    tokens_url: String,
    client: reqwest::Client,
    user_domain_id: String,
    in_flight: Arc<tokio::sync::Semaphore>,
    /// What `in_flight` was built with (shown by `Debug`).
    max_in_flight: usize,
}

impl fmt::Debug for KeystoneAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeystoneAuthenticator")
            .field("tokens_url", &crate::outbound::redact_url(&self.tokens_url))
            .field("user_domain_id", &self.user_domain_id)
            .field("max_in_flight", &self.max_in_flight)
            .finish_non_exhaustive()
    }
}

impl KeystoneAuthenticator {
    /// Builds the authenticator from the two flags (`ca_file` as the only trusted roots when
    /// given, else the system roots). 30 s per request.
    ///
    /// ```
    /// use kube_authn::password::keystone::KeystoneAuthenticator;
    /// let k = KeystoneAuthenticator::new("https://keystone.example:5000", None).unwrap();
    /// assert_eq!(k.tokens_url(), "https://keystone.example:5000/v3/auth/tokens?nocatalog");
    /// ```
    pub fn new(auth_url: &str, ca_file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut info = ConnectionInfo::new(auth_url);
        if let Some(ca) = ca_file {
            info = info.with_ca(Pem::File(ca.to_path_buf()));
        }
        Self::with_connection(info)
    }

    /// Builds the authenticator from connection info (server = the auth URL).
    ///
    /// ```
    /// use kube_authn::{outbound::ConnectionInfo, password::keystone::KeystoneAuthenticator};
    /// let k = KeystoneAuthenticator::with_connection(ConnectionInfo::new("https://k:5000/v3/")).unwrap();
    /// assert_eq!(k.tokens_url(), "https://k:5000/v3/auth/tokens?nocatalog");
    /// ```
    pub fn with_connection(info: ConnectionInfo) -> Result<Self, ConfigError> {
        // The value as given: a leading space is not an https URL (Kubernetes' prefix check).
        let url = info.server.as_str();
        if url.is_empty() {
            return Err(ConfigError::new("Auth URL is empty"));
        }
        if !url.starts_with("https") {
            return Err(ConfigError::new(
                "Auth URL should be secure and start with https",
            ));
        }
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| ConfigError::new(format!("invalid Keystone auth URL: {e}")))?;
        if parsed.scheme() != "https" {
            return Err(ConfigError::new(
                "Auth URL should be secure and start with https",
            ));
        }
        // The tokens path is appended to the URL: a query or fragment would swallow it.
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(ConfigError::new(
                "invalid Keystone auth URL: a query or fragment is not allowed",
            ));
        }
        let base = url.trim_end_matches('/');
        let tokens_url = if base.ends_with("/v3") {
            format!("{base}/auth/tokens?nocatalog")
        } else {
            format!("{base}/v3/auth/tokens?nocatalog")
        };
        let client = info.client(Duration::from_secs(30))?;
        Ok(Self {
            tokens_url,
            client,
            user_domain_id: "default".to_owned(),
            in_flight: Arc::new(tokio::sync::Semaphore::new(DEFAULT_MAX_IN_FLIGHT)),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        })
    }

    /// At most `max` logins in flight (default [`DEFAULT_MAX_IN_FLIGHT`]); beyond that a login
    /// fails at once with `Failed to authenticate` of kind
    /// [`ErrorKind::Unavailable`], without a request.
    ///
    /// A `max` of 0 is taken as 1. `Debug` shows the limit.
    ///
    /// ```
    /// use kube_authn::password::keystone::KeystoneAuthenticator;
    /// let k = KeystoneAuthenticator::new("https://k", None).unwrap();
    /// assert!(format!("{k:?}").contains("max_in_flight: 256"));
    /// let k = k.with_max_in_flight(16);
    /// assert!(format!("{k:?}").contains("max_in_flight: 16"));
    /// let k = k.with_max_in_flight(0);
    /// assert!(format!("{k:?}").contains("max_in_flight: 1,"));
    /// ```
    pub fn with_max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max.max(1);
        self.in_flight = Arc::new(tokio::sync::Semaphore::new(self.max_in_flight));
        self
    }

    /// Uses another user domain than `default`.
    ///
    /// ```
    /// use kube_authn::password::keystone::KeystoneAuthenticator;
    /// let k = KeystoneAuthenticator::new("https://k", None).unwrap();
    /// assert!(format!("{k:?}").contains(r#"user_domain_id: "default""#));
    /// let k = k.with_user_domain_id("corp");
    /// assert!(format!("{k:?}").contains(r#"user_domain_id: "corp""#));
    /// ```
    pub fn with_user_domain_id(mut self, id: impl Into<String>) -> Self {
        self.user_domain_id = id.into();
        self
    }

    /// The URL passwords are POSTed to.
    ///
    /// ```
    /// # use kube_authn::password::keystone::KeystoneAuthenticator;
    /// assert!(KeystoneAuthenticator::new("https://k", None).unwrap().tokens_url().ends_with("/v3/auth/tokens?nocatalog"));
    /// ```
    pub fn tokens_url(&self) -> &str {
        &self.tokens_url
    }

    async fn check(&self, user: &str, password: &str) -> AuthResult {
        let Ok(_slot) = self.in_flight.clone().try_acquire_owned() else {
            tracing::warn!("too many Keystone logins in flight; refusing this one");
            return Err(Error::new(ErrorKind::Unavailable, FAILED_TO_AUTHENTICATE));
        };
        let body = serde_json::json!({
            "auth": {"identity": {
                "methods": ["password"],
                "password": {"user": {
                    "name": user,
                    "domain": {"id": self.user_domain_id},
                    "password": password,
                }},
            }}
        });
        let sent = self
            .client
            .post(&self.tokens_url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(body.to_string())
            .send()
            .await;
        match sent {
            Ok(resp) if resp.status() == reqwest::StatusCode::CREATED => {
                match crate::outbound::read_capped(resp, MAX_TOKEN_BODY).await {
                    Ok(body) if is_token_body(&body) => {
                        Ok(Some(Response::new(Arc::new(UserInfo::new(user)))))
                    }
                    _ => {
                        tracing::info!("Keystone answered 201 without a token body");
                        Err(Error::msg(FAILED_TO_AUTHENTICATE))
                    }
                }
            }
            Ok(resp) => {
                tracing::info!(
                    status = resp.status().as_u16(),
                    "Keystone rejected the credentials"
                );
                Err(Error::msg(FAILED_TO_AUTHENTICATE))
            }
            Err(e) => {
                tracing::info!(
                    "Failed: Starting openstack authenticate client: {}",
                    e.without_url()
                );
                Err(Error::msg(FAILED_TO_AUTHENTICATE))
            }
        }
    }
}

/// Largest token body read (Keystone's tokens with `?nocatalog` are a few KiB).
const MAX_TOKEN_BODY: usize = 1 << 20;

/// Whether `body` is an Identity v3 token answer: a JSON object with a `token` object.
fn is_token_body(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|v| v.get("token").is_some_and(serde_json::Value::is_object))
}

impl PasswordAuthenticator for KeystoneAuthenticator {
    fn authenticate_password<'a>(
        &'a self,
        user: &'a str,
        password: &'a str,
        _ctx: &'a Context,
    ) -> AuthFuture<'a> {
        AuthFuture::new(self.check(user, password))
    }
}
