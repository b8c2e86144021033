//! kubeconfig files as the webhook configuration format
//! (`--authentication-token-webhook-config-file`, client-go `clientcmd`).
//!
//! The file is read from exactly the given path (`$KUBECONFIG` is ignored, as kube-apiserver
//! does). The `current-context` picks a cluster and a user; without one, the entries named `""`
//! are used (kube-apiserver's own webhook tests write unnamed entries), or the only entry when
//! there is exactly one. Relative file paths are resolved against the kubeconfig's directory.
//! `exec` and `auth-provider` plugins are refused at load time: running programs named in a
//! configuration file is out of scope for this crate.
//!
//! ```
//! use kube_authn::outbound::kubeconfig::Kubeconfig;
//! let cfg = Kubeconfig::parse(br#"
//! clusters:
//! - name: authn
//!   cluster:
//!     server: https://127.0.0.1:8443/authenticate
//!     insecure-skip-tls-verify: true
//! users:
//! - name: apiserver
//!   user:
//!     token: s3cr3t
//! contexts:
//! - name: webhook
//!   context: {cluster: authn, user: apiserver}
//! current-context: webhook
//! "#).unwrap();
//! let info = cfg.connection_info(None).unwrap();
//! assert_eq!(info.server, "https://127.0.0.1:8443/authenticate");
//! assert!(info.token.is_some());
//! ```

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

use super::{BearerToken, ConnectionInfo, Pem, Secret, read_bounded};
use crate::error::ConfigError;

/// A parsed kubeconfig (only what a client connection needs).
///
/// ```
/// let k = kube_authn::outbound::kubeconfig::Kubeconfig::parse(b"clusters: []").unwrap();
/// assert!(k.connection_info(None).is_err());
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Kubeconfig {
    /// `clusters`.
    #[serde(default)]
    pub clusters: Vec<NamedCluster>,
    /// `users` (called AuthInfos in Go).
    #[serde(default)]
    pub users: Vec<NamedUser>,
    /// `contexts`.
    #[serde(default)]
    pub contexts: Vec<NamedContext>,
    /// `current-context`.
    #[serde(default)]
    pub current_context: String,
}

/// A named cluster entry.
///
/// ```
/// let c: kube_authn::outbound::kubeconfig::NamedCluster = serde_yaml_ng::from_str("cluster: {server: https://x}").unwrap();
/// assert_eq!(c.name, "");
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[non_exhaustive]
pub struct NamedCluster {
    /// Entry name.
    #[serde(default)]
    pub name: String,
    /// The cluster.
    #[serde(default)]
    pub cluster: Cluster,
}

/// `clusters[].cluster`. `Debug` masks a password in the server or proxy URL (`u:***@`) and
/// shows only whether CA data is present (it is long, not secret).
///
/// ```
/// let c: kube_authn::outbound::kubeconfig::Cluster =
///     serde_yaml_ng::from_str("server: https://x\nproxy-url: http://u:s3cr3t@proxy:3128").unwrap();
/// assert_eq!(c.server, "https://x");
/// assert!(!format!("{c:?}").contains("s3cr3t"));
/// ```
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Cluster {
    /// Server URL.
    #[serde(default)]
    pub server: String,
    /// CA file.
    #[serde(default)]
    pub certificate_authority: Option<String>,
    /// CA data (base64 PEM).
    #[serde(default)]
    pub certificate_authority_data: Option<String>,
    /// Skip server verification.
    #[serde(default)]
    pub insecure_skip_tls_verify: bool,
    /// Server name to verify.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// Proxy URL.
    #[serde(default)]
    pub proxy_url: Option<String>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("server", &super::redact_url(&self.server))
            .field("certificate_authority", &self.certificate_authority)
            .field(
                "has_certificate_authority_data",
                &self.certificate_authority_data.is_some(),
            )
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("tls_server_name", &self.tls_server_name)
            .field(
                "proxy_url",
                &self.proxy_url.as_deref().map(super::redact_url),
            )
            .finish()
    }
}

/// A YAML error with the values it quotes (`invalid type: string "<value>"`, where the value
/// may be a token or password in the wrong place) replaced by `"…"`. Field names stay: serde
/// writes them in backticks.
fn without_quoted_values(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut quoted = false;
    for c in message.chars() {
        match (c, quoted) {
            ('"', false) => {
                out.push_str("\"…");
                quoted = true;
            }
            ('"', true) => {
                out.push('"');
                quoted = false;
            }
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}

/// A named user entry.
///
/// ```
/// let u: kube_authn::outbound::kubeconfig::NamedUser = serde_yaml_ng::from_str("name: a\nuser: {token: t}").unwrap();
/// assert_eq!(u.name, "a");
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[non_exhaustive]
pub struct NamedUser {
    /// Entry name.
    #[serde(default)]
    pub name: String,
    /// The user.
    #[serde(default)]
    pub user: User,
}

/// `users[].user`. `Debug` redacts secrets.
///
/// ```
/// let u: kube_authn::outbound::kubeconfig::User = serde_yaml_ng::from_str("token: s3cr3t").unwrap();
/// assert!(!format!("{u:?}").contains("s3cr3t"));
/// ```
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct User {
    /// Client certificate file.
    #[serde(default)]
    pub client_certificate: Option<String>,
    /// Client certificate data (base64 PEM).
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// Client key file.
    #[serde(default)]
    pub client_key: Option<String>,
    /// Client key data (base64 PEM).
    #[serde(default)]
    pub client_key_data: Option<String>,
    /// Bearer token.
    #[serde(default)]
    pub token: Option<String>,
    /// Bearer token file (note the camelCase key, as in client-go).
    #[serde(default, rename = "tokenFile")]
    pub token_file: Option<String>,
    /// Basic user name.
    #[serde(default)]
    pub username: Option<String>,
    /// Basic password.
    #[serde(default)]
    pub password: Option<String>,
    /// `exec` plugin (refused).
    #[serde(default)]
    pub exec: Option<serde_yaml_ng::Value>,
    /// `auth-provider` plugin (refused).
    #[serde(default)]
    pub auth_provider: Option<serde_yaml_ng::Value>,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("client_certificate", &self.client_certificate)
            .field("client_key", &self.client_key)
            .field("has_client_key_data", &self.client_key_data.is_some())
            .field("has_token", &self.token.is_some())
            .field("token_file", &self.token_file)
            .field("username", &self.username)
            .field("has_password", &self.password.is_some())
            .finish_non_exhaustive()
    }
}

/// A named context.
///
/// ```
/// let c: kube_authn::outbound::kubeconfig::NamedContext = serde_yaml_ng::from_str("name: a\ncontext: {cluster: c, user: u}").unwrap();
/// assert_eq!(c.context.cluster, "c");
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[non_exhaustive]
pub struct NamedContext {
    /// Entry name.
    #[serde(default)]
    pub name: String,
    /// The context.
    #[serde(default)]
    pub context: ContextRef,
}

/// `contexts[].context`.
///
/// ```
/// let c = kube_authn::outbound::kubeconfig::ContextRef::default();
/// assert!(c.cluster.is_empty());
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[non_exhaustive]
pub struct ContextRef {
    /// Cluster name.
    #[serde(default)]
    pub cluster: String,
    /// User name.
    #[serde(default)]
    pub user: String,
}

impl Kubeconfig {
    /// Parses kubeconfig YAML (or JSON) bytes.
    ///
    /// ```
    /// assert!(kube_authn::outbound::kubeconfig::Kubeconfig::parse(b"clusters: 5").is_err());
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, ConfigError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ConfigError::new(
                "invalid configuration: no configuration has been provided",
            ));
        }
        serde_yaml_ng::from_slice(bytes).map_err(|e| {
            ConfigError::new(format!(
                "kubeconfig: {}",
                without_quoted_values(&e.to_string())
            ))
        })
    }

    /// Reads and parses `path` (at most 1 MiB) and resolves its connection info, with relative
    /// paths taken from the file's directory.
    ///
    /// ```
    /// let e = kube_authn::outbound::kubeconfig::Kubeconfig::load("/nonexistent").unwrap_err();
    /// assert!(e.to_string().contains("/nonexistent"));
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<ConnectionInfo, ConfigError> {
        let path = path.as_ref();
        let bytes = read_bounded(path)?;
        let cfg = Self::parse(&bytes)
            .map_err(|e| ConfigError::new(format!("{}: {e}", path.display())))?;
        cfg.connection_info(path.parent())
            .map_err(|e| ConfigError::new(format!("{}: {e}", path.display())))
    }

    /// The connection info of the current context; relative paths are resolved against `base`.
    ///
    /// ```
    /// let k = kube_authn::outbound::kubeconfig::Kubeconfig::parse(b"clusters: [{cluster: {server: 'https://x'}}]").unwrap();
    /// assert_eq!(k.connection_info(None).unwrap().server, "https://x");
    /// ```
    pub fn connection_info(&self, base: Option<&Path>) -> Result<ConnectionInfo, ConfigError> {
        let (cluster_name, user_name) = if self.current_context.is_empty() {
            (None, None)
        } else {
            let ctx = self
                .contexts
                .iter()
                .find(|c| c.name == self.current_context)
                .ok_or_else(|| {
                    ConfigError::new(format!(
                        "invalid configuration: context was not found for specified context: {}",
                        self.current_context
                    ))
                })?;
            (
                Some(ctx.context.cluster.as_str()),
                Some(ctx.context.user.as_str()),
            )
        };
        let cluster = pick(&self.clusters, cluster_name, |c| &c.name)
            .map(|c| &c.cluster)
            .ok_or_else(|| {
                ConfigError::new("invalid configuration: no configuration has been provided")
            })?;
        let user = pick(&self.users, user_name, |u| &u.name)
            .map(|u| u.user.clone())
            .unwrap_or_default();
        if cluster.server.is_empty() {
            return Err(ConfigError::new(
                "invalid configuration: no server found for cluster",
            ));
        }
        let url = reqwest::Url::parse(&cluster.server).map_err(|e| {
            ConfigError::new(format!(
                "invalid server URL {:?}: {e}",
                super::redact_url(&cluster.server)
            ))
        })?;
        if url.scheme() != "https" && url.scheme() != "http" {
            return Err(ConfigError::new(format!(
                "invalid server URL scheme {:?}",
                url.scheme()
            )));
        }
        if user.exec.is_some() || user.auth_provider.is_some() {
            return Err(ConfigError::new(
                "kubeconfig exec and auth-provider plugins are not supported",
            ));
        }
        let resolve = |p: &str| -> PathBuf {
            let p = Path::new(p);
            match base {
                Some(b) if p.is_relative() => b.join(p),
                _ => p.to_path_buf(),
            }
        };
        let pem = |file: &Option<String>,
                   data: &Option<String>,
                   what: &str|
         -> Result<Option<Pem>, ConfigError> {
            match (file, data) {
                (_, Some(d)) if !d.is_empty() => base64::engine::general_purpose::STANDARD
                    .decode(d.trim())
                    .map(|b| Some(Pem::Data(b)))
                    .map_err(|e| ConfigError::new(format!("{what}-data: {e}"))),
                (Some(f), _) if !f.is_empty() => Ok(Some(Pem::File(resolve(f)))),
                _ => Ok(None),
            }
        };
        let mut info = ConnectionInfo::new(cluster.server.clone());
        info.certificate_authority = pem(
            &cluster.certificate_authority,
            &cluster.certificate_authority_data,
            "certificate-authority",
        )?;
        info.insecure_skip_tls_verify = cluster.insecure_skip_tls_verify;
        info.tls_server_name = cluster.tls_server_name.clone().filter(|s| !s.is_empty());
        info.proxy_url = cluster.proxy_url.clone().filter(|s| !s.is_empty());
        info.client_certificate = pem(
            &user.client_certificate,
            &user.client_certificate_data,
            "client-certificate",
        )?;
        info.client_key = pem(&user.client_key, &user.client_key_data, "client-key")?;
        if info.client_certificate.is_some() != info.client_key.is_some() {
            return Err(ConfigError::new(
                "client-cert-data and client-key-data must be specified together",
            ));
        }
        match (&user.token, &user.token_file) {
            (Some(t), _) if !t.is_empty() => {
                info.token = Some(BearerToken::Static(Secret::new(t.as_str())))
            }
            (_, Some(f)) if !f.is_empty() => info.token = Some(BearerToken::from_file(resolve(f))?),
            _ => {}
        }
        if let Some(u) = user.username.as_ref().filter(|u| !u.is_empty()) {
            if info.token.is_some() {
                return Err(ConfigError::new(
                    "username/password or bearer token may be set, but not both",
                ));
            }
            info = info.with_basic(
                u.clone(),
                Secret::new(user.password.clone().unwrap_or_default()),
            );
        }
        Ok(info)
    }
}

fn pick<'a, T>(
    list: &'a [T],
    name: Option<&str>,
    name_of: impl Fn(&T) -> &String,
) -> Option<&'a T> {
    match name {
        Some(n) => list.iter().find(|e| name_of(e) == n),
        None => list
            .iter()
            .find(|e| name_of(e).is_empty())
            .or(if list.len() == 1 { list.first() } else { None }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_of_kubeconfigs() {
        type Check = fn(&ConnectionInfo);
        let cases: Vec<(&str, &str, Result<Check, &str>)> = vec![
            (
                "unnamed entries as in kube-apiserver's webhook tests",
                "clusters: [{cluster: {server: 'https://127.0.0.1:1/x', certificate-authority-data: 'LS0t'}}]\nusers: [{user: {token: t}}]",
                Ok(|i| {
                    assert_eq!(i.certificate_authority, Some(Pem::Data(b"---".to_vec())));
                    assert_eq!(i.token.as_ref().unwrap().current().expose(), "t");
                }),
            ),
            (
                "current context picks named entries",
                "clusters: [{name: a, cluster: {server: 'https://a'}}, {name: b, cluster: {server: 'https://b', proxy-url: 'http://p:3128'}}]\nusers: [{name: ub, user: {username: u, password: p}}]\ncontexts: [{name: c, context: {cluster: b, user: ub}}]\ncurrent-context: c",
                Ok(|i| {
                    assert_eq!(i.server, "https://b");
                    assert_eq!(i.proxy_url.as_deref(), Some("http://p:3128"));
                    assert_eq!(i.basic.as_ref().unwrap().username, "u");
                }),
            ),
            (
                "relative files resolve against the kubeconfig directory",
                "clusters: [{cluster: {server: 'https://x', certificate-authority: ca.pem}}]\nusers: [{user: {client-certificate: c.pem, client-key: /abs/k.pem}}]",
                Ok(|i| {
                    assert_eq!(
                        i.certificate_authority,
                        Some(Pem::File("/cfg/ca.pem".into()))
                    );
                    assert_eq!(i.client_certificate, Some(Pem::File("/cfg/c.pem".into())));
                    assert_eq!(i.client_key, Some(Pem::File("/abs/k.pem".into())));
                }),
            ),
            (
                "missing context",
                "clusters: [{cluster: {server: 'https://x'}}]\ncurrent-context: nope",
                Err("context was not found for specified context: nope"),
            ),
            (
                "no clusters",
                "users: []",
                Err("no configuration has been provided"),
            ),
            (
                "empty file",
                "  \n",
                Err("no configuration has been provided"),
            ),
            (
                "no server",
                "clusters: [{cluster: {}}]",
                Err("no server found for cluster"),
            ),
            (
                "bad scheme",
                "clusters: [{cluster: {server: 'ftp://x'}}]",
                Err("invalid server URL scheme"),
            ),
            (
                "exec refused",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {exec: {command: evil}}}]",
                Err("exec and auth-provider plugins are not supported"),
            ),
            (
                "cert without key",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {client-certificate-data: 'LS0t'}}]",
                Err("must be specified together"),
            ),
            (
                "bad base64",
                "clusters: [{cluster: {server: 'https://x', certificate-authority-data: '@@@'}}]",
                Err("certificate-authority-data"),
            ),
            (
                "token and basic",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: t, username: u}}]",
                Err("not both"),
            ),
            ("not yaml", "clusters: [", Err("kubeconfig:")),
        ];
        for (name, yaml, want) in cases {
            let got = Kubeconfig::parse(yaml.as_bytes())
                .and_then(|k| k.connection_info(Some(Path::new("/cfg"))));
            match (got, want) {
                (Ok(info), Ok(check)) => check(&info),
                (Err(e), Err(text)) => assert!(e.to_string().contains(text), "{name}: {e}"),
                (Ok(_), Err(text)) => panic!("{name}: expected error containing {text:?}"),
                (Err(e), Ok(_)) => panic!("{name}: unexpected error {e}"),
            }
        }
    }

    #[test]
    fn secrets_never_in_debug_or_errors() {
        let k = Kubeconfig::parse(b"clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: tok-SECRET, username: u, password: pw-SECRET}}]").unwrap();
        assert!(!format!("{k:?}").contains("SECRET"));
        let e = k.connection_info(None).unwrap_err();
        assert!(!e.to_string().contains("SECRET"));
        let ok = Kubeconfig::parse(
            b"clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: tok-SECRET}}]",
        )
        .unwrap();
        assert!(!format!("{:?}", ok.connection_info(None).unwrap()).contains("SECRET"));
        // A password in a server URL that does not parse (bad port) is masked in the error;
        // one that parses is masked in the connection info's `Debug`.
        for (server, want) in [
            ("https://u:pw-SECRET@x:99999/", "https://u:***@x:99999/"),
            ("https://u:pw-SECRET@x/", "https://u:***@x/"),
        ] {
            let k = Kubeconfig::parse(
                format!("clusters: [{{cluster: {{server: '{server}'}}}}]").as_bytes(),
            )
            .unwrap();
            let shown = match k.connection_info(None) {
                Ok(info) => format!("{info:?}"),
                Err(e) => format!("{e} {e:?}"),
            };
            assert!(!shown.contains("SECRET"), "{shown}");
            assert!(shown.contains(want), "{shown}");
        }
        // A secret in the wrong place is not quoted by the YAML error.
        let e = Kubeconfig::parse(b"users: [{name: u, user: \"tok-SECRET\"}]").unwrap_err();
        assert!(!e.to_string().contains("SECRET"), "{e}");
        assert!(e.to_string().starts_with("kubeconfig: "), "{e}");
        assert!(e.to_string().contains("invalid type: string \"…\""), "{e}");
        // The parsed kubeconfig itself: passwords in the server and proxy URLs are masked.
        let k = Kubeconfig::parse(
            b"clusters: [{cluster: {server: 'https://u:pw-SECRET@x/', proxy-url: 'http://p:px-SECRET@proxy:3128', certificate-authority-data: 'LS0t'}}]",
        )
        .unwrap();
        let shown = format!("{k:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("https://u:***@x/"), "{shown}");
        assert!(shown.contains("http://p:***@proxy:3128"), "{shown}");
        assert!(
            shown.contains("has_certificate_authority_data: true"),
            "{shown}"
        );
    }
}
