//! [`RestLookup`]: a [`ServiceAccountLookup`] that asks a Kubernetes API server through its
//! REST API (feature `remote`), for the service-account lookup kube-apiserver does against its
//! own storage (`--service-account-lookup`).
//!
//! It GETs `/api/v1/namespaces/{ns}/serviceaccounts/{name}`, `…/secrets/{name}`,
//! `…/pods/{name}` and `/api/v1/nodes/{name}` with the credentials of an outbound
//! [`Vault`] (a kubeconfig, the in-cluster service account, or an application's own
//! provider): the caller needs `get` on those resources. Answers:
//!
//! * 200: the object (only the fields the validators read are kept; a Secret's token is never
//!   logged or shown by `Debug`);
//! * 404: [`LookupError::NotFound`], which the validators turn into Kubernetes' texts
//!   (`serviceaccounts "x" not found`, …);
//! * 401: the credential is marked bad in the vault and the next one is tried (at most
//!   [`MAX_CREDENTIAL_TRIES`], never the same one twice); a kubeconfig's or the in-cluster
//!   credential is used again by the next lookup ([`Vault::credential`]);
//! * anything else, a transport error, a body over [`DEFAULT_MAX_BODY_BYTES`] or a request
//!   over the per-request timeout: [`LookupError::Other`], and the token is refused (fail
//!   closed: a lookup that cannot be answered never lets a token through).
//!
//! Names come from verified token claims, but are still checked to be Kubernetes object names
//! (RFC 1123 subdomain characters, ≤ 253 bytes) before they go into a URL path.
//!
//! There is no cache: every lookup is a request, as with kube-apiserver's storage-backed
//! getter without its informers. Put a [`crate::token::cache::CachedTokenAuthenticator`] in
//! front of the service-account authenticator to bound the load (kube-apiserver caches token
//! results for 10 s).
//!
//! ```no_run
//! use std::sync::Arc;
//! use kube_authn::jwt::router::IssuerRouter;
//! use kube_authn::token::service_account::ServiceAccountOptions;
//! use kube_authn::token::service_account_rest::RestLookup;
//!
//! let lookup = RestLookup::from_kubeconfig("/etc/kube-authn/lookup.kubeconfig").unwrap();
//! let options = ServiceAccountOptions {
//!     key_files: vec!["/etc/kubernetes/pki/sa.pub".into()],
//!     issuers: vec!["https://kubernetes.default.svc".into()],
//!     ..Default::default()
//! };
//! let mut router = IssuerRouter::new();
//! options.register(&mut router, Some(Arc::new(lookup))).unwrap();
//! ```

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use serde::Deserialize;

use super::service_account::{
    LookupError, LookupFuture, ObjectMeta, Secret, ServiceAccount, ServiceAccountLookup,
};
use crate::error::ConfigError;
use crate::outbound::kubeconfig::Kubeconfig;
use crate::outbound::vault::{Credential, Vault};
use crate::outbound::{ConnectionInfo, ReadError, read_capped, root_cause};

/// Largest response body read (4 MiB). Stored objects are capped by etcd's request limit
/// (1.5 MiB by default), but their JSON is larger: a Secret holding 1 MiB of data is 1.33 MiB
/// of base64 alone, before its metadata and managed fields, and a pod or node near the limit
/// grows likewise. 4 MiB leaves room for any object the API server can store and still
/// bounds what a broken server can make us buffer.
///
/// ```
/// assert_eq!(kube_authn::token::service_account_rest::DEFAULT_MAX_BODY_BYTES, 4 * 1024 * 1024);
/// ```
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;
/// Default per-request timeout.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(kube_authn::token::service_account_rest::DEFAULT_TIMEOUT, Duration::from_secs(10));
/// ```
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Credentials tried for one lookup when the server answers 401.
///
/// ```
/// assert_eq!(kube_authn::token::service_account_rest::MAX_CREDENTIAL_TRIES, 3);
/// ```
pub const MAX_CREDENTIAL_TRIES: usize = 3;

const LEGACY_TOKEN_INVALID_SINCE: &str = "kubernetes.io/legacy-token-invalid-since";

/// A [`ServiceAccountLookup`] that GETs service accounts, secrets, pods and nodes from a
/// Kubernetes API server with the credentials of a [`Vault`]; 404 is
/// [`LookupError::NotFound`], any other failure refuses the token. Details in the
/// [module docs](self).
///
/// Against a stand-in API server (a raw HTTP/1.1 responder on 127.0.0.1, since no real API
/// server runs in a doctest):
///
/// ```
/// use kube_authn::outbound::{ConnectionInfo, Secret, vault::Vault};
/// use kube_authn::token::service_account::{LookupError, ServiceAccountLookup};
/// use kube_authn::token::service_account_rest::RestLookup;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let server = format!("http://{}", listener.local_addr().unwrap());
/// tokio::spawn(async move {
///     loop {
///         let (mut conn, _) = listener.accept().await.unwrap();
///         let mut buf = vec![0; 4096];
///         let n = conn.read(&mut buf).await.unwrap();
///         let head = String::from_utf8_lossy(&buf[..n]).to_lowercase();
///         let sa = "get /api/v1/namespaces/ci/serviceaccounts/builder ";
///         let (status, body) = if !head.contains("authorization: bearer lookup-token") {
///             ("401 Unauthorized", "{}")
///         } else if head.starts_with(sa) {
///             ("200 OK", r#"{"metadata":{"uid":"7f3e"},"secrets":[{"name":"builder-token"}]}"#)
///         } else {
///             ("404 Not Found", "{}")
///         };
///         let response = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
///         conn.write_all(response.as_bytes()).await.unwrap();
///     }
/// });
///
/// let info = ConnectionInfo::new(server).with_token(Secret::new("lookup-token"));
/// let lookup = RestLookup::new(Vault::from_info(info));
/// let sa = lookup.service_account("ci", "builder").await.unwrap();
/// assert_eq!((sa.meta.uid.as_str(), sa.secrets.as_slice()), ("7f3e", &["builder-token".to_owned()][..]));
/// let gone = lookup.pod("ci", "runner-0").await.unwrap_err();
/// assert_eq!(gone.to_string(), r#"pods "runner-0" not found"#);
/// // A name no object can have never reaches a URL.
/// assert!(matches!(lookup.secret("ci", "../nodes/x").await, Err(LookupError::NotFound { .. })));
///
/// // An unreachable API server: the lookup fails, so the token is refused.
/// let down = RestLookup::new(Vault::from_info(ConnectionInfo::new("http://127.0.0.1:1")));
/// assert!(matches!(down.node("worker-1").await, Err(LookupError::Other(_))));
/// # });
/// ```
pub struct RestLookup {
    vault: Vault,
    max_body: usize,
}

impl std::fmt::Debug for RestLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestLookup")
            .field("vault", &self.vault)
            .field("max_body", &self.max_body)
            .finish()
    }
}

impl RestLookup {
    /// Looks objects up with the credentials of `vault`, with a per-request timeout of
    /// [`DEFAULT_TIMEOUT`] (it replaces the vault's own; change it with
    /// [`Self::request_timeout`]).
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// let _ = kube_authn::token::service_account_rest::RestLookup::new(
    ///     Vault::from_info(ConnectionInfo::new("https://127.0.0.1:6443")),
    /// );
    /// ```
    pub fn new(vault: Vault) -> Self {
        Self {
            vault: vault.with_request_timeout(DEFAULT_TIMEOUT),
            max_body: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// Looks objects up on the API server a kubeconfig names (its current context).
    ///
    /// ```
    /// let e = kube_authn::token::service_account_rest::RestLookup::from_kubeconfig("/nonexistent");
    /// assert!(e.is_err());
    /// ```
    pub fn from_kubeconfig(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let info = Kubeconfig::load(path)?;
        Credential::new(info.clone(), DEFAULT_TIMEOUT)?;
        Ok(Self::new(Vault::from_info(info)))
    }

    /// Looks objects up on the cluster this process runs in (the pod's service account).
    ///
    /// ```
    /// // Outside a pod there is no in-cluster configuration.
    /// assert!(kube_authn::token::service_account_rest::RestLookup::in_cluster().is_err());
    /// ```
    pub fn in_cluster() -> Result<Self, ConfigError> {
        let info = ConnectionInfo::in_cluster()?;
        Credential::new(info.clone(), DEFAULT_TIMEOUT)?;
        Ok(Self::new(Vault::from_info(info)))
    }

    /// Sets the per-request timeout (default [`DEFAULT_TIMEOUT`]).
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// let _ = kube_authn::token::service_account_rest::RestLookup::new(
    ///     Vault::from_info(ConnectionInfo::new("https://127.0.0.1:6443")),
    /// ).request_timeout(std::time::Duration::from_secs(2));
    /// ```
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.vault = self.vault.with_request_timeout(timeout);
        self
    }

    /// Caps response bodies at `bytes` (default [`DEFAULT_MAX_BODY_BYTES`]).
    ///
    /// ```
    /// use kube_authn::outbound::{ConnectionInfo, vault::Vault};
    /// let _ = kube_authn::token::service_account_rest::RestLookup::new(
    ///     Vault::from_info(ConnectionInfo::new("https://127.0.0.1:6443")),
    /// ).max_body_bytes(64 * 1024);
    /// ```
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// GETs `path` and decodes it as `T`; `resource`/`name` word a 404.
    async fn get<T: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        resource: &'static str,
        name: &str,
    ) -> Result<T, LookupError> {
        let other = |what: String| LookupError::Other(format!("{resource} {name:?}: {what}"));
        let mut cred = self
            .vault
            .credential()
            .await
            .map_err(|e| other(e.to_string()))?;
        for tries in 1..=MAX_CREDENTIAL_TRIES {
            // client-go's `Request.URL`: the path joined to the server URL's path, its query
            // and fragment dropped.
            let request = cred
                .get(path)
                .header(http::header::ACCEPT, "application/json");
            let resp = request
                .send()
                .await
                .map_err(|e| other(format!("request failed: {}", root_cause(&e))))?;
            match resp.status().as_u16() {
                200 => {
                    let body = read_capped(resp, self.max_body)
                        .await
                        .map_err(|e| match e {
                            ReadError::TooLarge => other(format!(
                                "response body is larger than {} bytes",
                                self.max_body
                            )),
                            ReadError::Transport(e) => {
                                other(format!("reading response: {}", root_cause(&e)))
                            }
                        })?;
                    // The category and position only: serde's text can quote the body, and a
                    // Secret's body holds its token.
                    return serde_json::from_slice(&body).map_err(|e| {
                        other(format!(
                            "malformed response: {} at line {} column {}",
                            crate::error::json_category(&e),
                            e.line(),
                            e.column()
                        ))
                    });
                }
                404 => {
                    return Err(LookupError::NotFound {
                        resource,
                        name: name.to_owned(),
                    });
                }
                401 if tries < MAX_CREDENTIAL_TRIES => {
                    cred = self
                        .vault
                        .next_credential(&cred)
                        .await
                        .map_err(|e| other(format!("401 Unauthorized, then {e}")))?;
                }
                401 => {
                    // The last try: that credential is bad for the next lookups too (as the
                    // webhook marks it).
                    self.vault.invalidate(&cred);
                    return Err(other("the server answered 401".into()));
                }
                code => return Err(other(format!("the server answered {code}"))),
            }
        }
        Err(other("401 Unauthorized with every credential".into()))
    }
}

/// A Kubernetes object name: non-empty, ≤ 253 bytes, lower-case alphanumerics, `-` and `.`
/// (RFC 1123 subdomain characters), so it is safe in a URL path.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// Refuses names no object can have (they never reach a URL). Such an object does not exist,
/// so the answer is the API server's: not found (a 401 for the token, not an outage).
fn check_names(resource: &'static str, parts: &[&str], name: &str) -> Result<(), LookupError> {
    if parts.iter().all(|p| valid_name(p)) {
        Ok(())
    } else {
        Err(LookupError::NotFound {
            resource,
            name: name.to_owned(),
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireMeta {
    uid: String,
    #[serde(rename = "deletionTimestamp")]
    deletion_timestamp: Option<String>,
    labels: std::collections::BTreeMap<String, String>,
}

impl WireMeta {
    fn meta(&self) -> Result<ObjectMeta, LookupError> {
        let deletion_timestamp =
            match &self.deletion_timestamp {
                None => None,
                Some(t) => Some(crate::x509::der::go_parse_rfc3339(t).ok_or_else(|| {
                    LookupError::Other(format!("malformed deletionTimestamp {t:?}"))
                })?),
            };
        Ok(ObjectMeta {
            uid: self.uid.clone(),
            deletion_timestamp,
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireObject {
    metadata: WireMeta,
    secrets: Vec<WireRef>,
    data: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireRef {
    name: String,
}

impl ServiceAccountLookup for RestLookup {
    fn service_account<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> LookupFuture<'a, ServiceAccount> {
        Box::pin(async move {
            check_names("serviceaccounts", &[namespace, name], name)?;
            let path = format!("/api/v1/namespaces/{namespace}/serviceaccounts/{name}");
            let o: WireObject = self.get(&path, "serviceaccounts", name).await?;
            Ok(ServiceAccount {
                meta: o.metadata.meta()?,
                secrets: o.secrets.into_iter().map(|r| r.name).collect(),
            })
        })
    }

    fn secret<'a>(&'a self, namespace: &'a str, name: &'a str) -> LookupFuture<'a, Secret> {
        Box::pin(async move {
            check_names("secrets", &[namespace, name], name)?;
            let path = format!("/api/v1/namespaces/{namespace}/secrets/{name}");
            let o: WireObject = self.get(&path, "secrets", name).await?;
            let token = match o.data.get("token") {
                None => None,
                Some(b64) => Some(
                    base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .map_err(|_| {
                            LookupError::Other(format!("secret {name:?}: data.token is not base64"))
                        })?,
                ),
            };
            Ok(Secret {
                meta: o.metadata.meta()?,
                token,
                invalid_since: o.metadata.labels.get(LEGACY_TOKEN_INVALID_SINCE).cloned(),
            })
        })
    }

    fn pod<'a>(&'a self, namespace: &'a str, name: &'a str) -> LookupFuture<'a, ObjectMeta> {
        Box::pin(async move {
            check_names("pods", &[namespace, name], name)?;
            let path = format!("/api/v1/namespaces/{namespace}/pods/{name}");
            let o: WireObject = self.get(&path, "pods", name).await?;
            o.metadata.meta()
        })
    }

    fn node<'a>(&'a self, name: &'a str) -> LookupFuture<'a, ObjectMeta> {
        Box::pin(async move {
            check_names("nodes", &[name], name)?;
            let path = format!("/api/v1/nodes/{name}");
            let o: WireObject = self.get(&path, "nodes", name).await?;
            o.metadata.meta()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_table() {
        let cases: &[(&str, Option<i64>)] = &[
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2026-11-22T12:00:00Z", Some(1_795_348_800)),
            ("2000-02-29T23:59:59Z", Some(951_868_799)),
            ("2026-13-01T00:00:00Z", None),
            // metav1.Time is Go's time.Parse(time.RFC3339): offsets are accepted and applied.
            ("2026-11-22T12:00:00+01:00", Some(1_795_348_800 - 3600)),
            ("2026-11-22T12:00:00.25-00:30", Some(1_795_348_800 + 1800)),
            ("2026-11-22 12:00:00Z", None),
            ("+026-11-22T12:00:00Z", None),
            ("", None),
        ];
        for (s, want) in cases {
            assert_eq!(crate::x509::der::go_parse_rfc3339(s), *want, "{s}");
        }
    }

    #[test]
    fn names_that_cannot_reach_a_url_path() {
        let cases: &[(&str, bool)] = &[
            ("default", true),
            ("kube-system", true),
            ("my.app-1", true),
            ("", false),
            ("..", false),
            ("a/b", false),
            ("a%2Fb", false),
            ("A", false),
            ("a?b", false),
            ("a b", false),
        ];
        for (name, ok) in cases {
            assert_eq!(valid_name(name), *ok, "{name:?}");
        }
        assert!(!valid_name(&"a".repeat(254)));
    }
}
