//! kubeconfig files as the webhook configuration format
//! (`--authentication-token-webhook-config-file`, client-go `clientcmd`).
//!
//! The file is read from exactly the given path (`$KUBECONFIG` is ignored, as kube-apiserver
//! does). The `current-context` picks a cluster and a user; without one, the entries named `""`
//! are used (kube-apiserver's own webhook tests write unnamed entries), or the only entry when
//! there is exactly one. Relative file paths are resolved against the kubeconfig's directory.
//! `exec` and `auth-provider` plugins are refused at load time: running programs named in a
//! configuration file is out of scope for this crate. So is impersonation (a user with `as`):
//! sending requests as the base identity instead could give them more rights than the file
//! intends. The checks of client-go's `ConfirmUsable` apply, with its texts (a file and data for
//! one PEM, several authentication methods, `as-uid`, `as-groups` or `as-user-extra` without
//! `as`), and an `http://` server gets no credentials, as in client-go. A server or proxy host
//! that Go keeps as a name but the url crate reads as an IPv4 address (`10.1`, `2130706433`,
//! `0x7f.0.0.1`, `010.1.2.3`) is refused.
//!
//! Errors name no value of the file: where Go's decoder prints one (a `~` key's value, a map
//! or list used as a key), the value is `…`.
//!
//! The file is read as client-go's codec reads it: `sigs.k8s.io/yaml` (go-yaml v2: YAML 1.1
//! scalars such as `yes` and `on`, merge keys `<<`, the first document, a repeated key's last
//! value), then non-strict, case-sensitive JSON decoding (unknown fields ignored), with
//! encoding/json's type-error texts (which name no value).
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

use serde::Deserialize;

use super::{BearerToken, ConnectionInfo, Pem, Secret};
use crate::error::ConfigError;
use crate::token::oidc::config::decode::{self, Node};

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
    /// `clusters` (`null`, as client-go writes an empty list, is empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    /// `users` (called AuthInfos in Go).
    #[serde(default, deserialize_with = "null_as_default")]
    pub users: Vec<NamedUser>,
    /// `contexts`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    /// `current-context`.
    #[serde(default, deserialize_with = "null_as_default")]
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
    #[serde(default, deserialize_with = "null_as_default")]
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
            .field("server", &super::redact_server(&self.server))
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

/// A YAML error with the values it quotes replaced by `…`: serde writes a string
/// `"<value>"` (`invalid type: string "<value>"`) and an integer, float, boolean or character
/// in backticks (``invalid type: integer `123456` ``), where the value may be a token or
/// password in the wrong place. Field names stay (``missing field `server` ``, ``duplicate
/// field `token` ``): the backticks after `field ` hold one of our own field names.
fn without_quoted_values(message: &str) -> String {
    enum In {
        Text,
        /// A `{:?}`-quoted string: an escaped quote inside it does not end it.
        Quoted {
            escaped: bool,
        },
        /// A value in backticks.
        Ticked,
        /// A field name in backticks.
        Field,
    }
    let mut out = String::with_capacity(message.len());
    let mut state = In::Text;
    for c in message.chars() {
        state = match (state, c) {
            (In::Quoted { escaped: true }, _) => In::Quoted { escaped: false },
            (In::Quoted { .. }, '\\') => In::Quoted { escaped: true },
            (In::Quoted { .. }, '"') | (In::Ticked, '`') | (In::Field, '`') => {
                out.push(c);
                In::Text
            }
            (state @ (In::Quoted { .. } | In::Ticked), _) => state,
            (In::Field, c) => {
                out.push(c);
                In::Field
            }
            (In::Text, '"') => {
                out.push_str("\"…");
                In::Quoted { escaped: false }
            }
            (In::Text, '`') if out.ends_with("field ") => {
                out.push(c);
                In::Field
            }
            (In::Text, '`') => {
                out.push_str("`…");
                In::Ticked
            }
            (In::Text, c) => {
                out.push(c);
                In::Text
            }
        };
    }
    out
}

/// The shared YAML decoder's error with no value of the file in it (the OIDC configuration
/// keeps Go's texts, which print them). Go's key-conversion texts end with the value, printed
/// `%#v` (`unsupported map key of type: %!s(<nil>), key: <nil>, value: "s3cr3t"` for a `~` key,
/// `yaml: invalid map key: map[interface {}]interface {}{"password":"s3cr3t"}` for a map or list
/// key): their prefix stays, the value is `…`. serde_yaml_ng's own texts (`kubeconfig: …`, a
/// tag on the wrong kind: `!!int s3cr3t`) are masked as [`without_quoted_values`] masks. The
/// other texts name no value: go-yaml's and libyaml's syntax errors, an anchor's name, and
/// `json: unsupported value: NaN` (one of three fixed words).
fn without_decoded_values(message: &str) -> String {
    const KEY_VALUE_PREFIXES: [&str; 2] = [
        "unsupported map key of type: %!s(<nil>), key: <nil>, value: ",
        "yaml: invalid map key: ",
    ];
    if let Some(prefix) = KEY_VALUE_PREFIXES.iter().find(|p| message.starts_with(**p)) {
        return format!("{prefix}…");
    }
    if message.starts_with("kubeconfig: ") {
        return without_quoted_values(message);
    }
    message.to_owned()
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
    #[serde(default, deserialize_with = "null_as_default")]
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
    /// Impersonation (`as`; refused).
    #[serde(default, rename = "as")]
    pub impersonate: Option<serde_yaml_ng::Value>,
    /// Impersonated UID (`as-uid`; refused).
    #[serde(default, rename = "as-uid")]
    pub impersonate_uid: Option<serde_yaml_ng::Value>,
    /// Impersonated groups (`as-groups`; refused).
    #[serde(default, rename = "as-groups")]
    pub impersonate_groups: Option<serde_yaml_ng::Value>,
    /// Impersonated extra (`as-user-extra`; refused).
    #[serde(default, rename = "as-user-extra")]
    pub impersonate_user_extra: Option<serde_yaml_ng::Value>,
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
    #[serde(default, deserialize_with = "null_as_default")]
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
            return Err(ConfigError::new(EMPTY_CONFIG));
        }
        // client-go's codec turns the YAML (or JSON, read as YAML) into JSON with
        // `sigs.k8s.io/yaml` (go-yaml v2: YAML 1.1 scalars, merge keys, the first document,
        // a repeated key's last value), then decodes that JSON without strictness.
        let (root, _repeated) = decode::yaml_document(bytes, "kubeconfig")
            .map_err(|e| ConfigError::new(without_decoded_values(&e.to_string())))?;
        check_version_and_kind(&root)?;
        // A null document (`null`, `~`, only a comment, only `---`) is client-go's empty
        // configuration.
        if matches!(root, Node::Null) {
            return Err(ConfigError::new(EMPTY_CONFIG));
        }
        if let Some(e) = type_error(&root, &CONFIG, "", "") {
            return Err(ConfigError::new(e));
        }
        let cfg = Kubeconfig::deserialize(json_value(&root)).map_err(|e| {
            ConfigError::new(format!(
                "kubeconfig: {}",
                without_quoted_values(&e.to_string())
            ))
        })?;
        // client-go decodes every `*-data` of the file when it loads it, used or not.
        for c in &cfg.clusters {
            decode_data(&c.cluster.certificate_authority_data)?;
        }
        for u in &cfg.users {
            decode_data(&u.user.client_certificate_data)?;
            decode_data(&u.user.client_key_data)?;
        }
        // client-go refuses a list with a repeated name when it converts the lists to maps
        // (its text goes on to print the whole list, credentials included: not here).
        fn unique<'a>(
            what: &str,
            names: impl Iterator<Item = &'a String>,
        ) -> Result<(), ConfigError> {
            let mut seen = std::collections::HashSet::new();
            for name in names {
                if !seen.insert(name) {
                    return Err(ConfigError::new(format!(
                        "kubeconfig: duplicate name {name:?} in {what}"
                    )));
                }
            }
            Ok(())
        }
        unique("clusters", cfg.clusters.iter().map(|c| &c.name))?;
        unique("users", cfg.users.iter().map(|u| &u.name))?;
        unique("contexts", cfg.contexts.iter().map(|c| &c.name))?;
        Ok(cfg)
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
        // clientcmd's loader stats the file first (`stat <path>: no such file or directory`).
        std::fs::metadata(path)
            .map_err(|e| ConfigError::new(crate::error::go_path_error("stat", path, &e)))?;
        // clientcmd's loader wraps every failure to read or decode the file (Go's `"%s"`, the
        // path not escaped).
        let loading = |e: String| {
            ConfigError::new(format!(
                "error loading config file \"{}\": {e}",
                path.display()
            ))
        };
        let bytes = read_file(path).map_err(loading)?;
        let cfg = Self::parse(&bytes).map_err(|e| loading(e.to_string()))?;
        // Relative paths in the file are taken from its directory made absolute, as
        // clientcmd's `ResolveLocalPaths` (`filepath.Abs`) takes them.
        let dir = path.parent().unwrap_or(Path::new(""));
        let dir = match std::env::current_dir() {
            Ok(cwd) if dir.is_relative() => cwd.join(dir),
            _ => dir.to_path_buf(),
        };
        cfg.connection_info(Some(&dir))
            .map_err(|e| ConfigError::new(format!("{}: {e}", path.display())))
    }

    /// The connection info of the current context; relative paths are resolved against `base`.
    ///
    /// ```
    /// let k = kube_authn::outbound::kubeconfig::Kubeconfig::parse(b"clusters: [{cluster: {server: 'https://x'}}]").unwrap();
    /// assert_eq!(k.connection_info(None).unwrap().server, "https://x");
    /// ```
    pub fn connection_info(&self, base: Option<&Path>) -> Result<ConnectionInfo, ConfigError> {
        // client-go's ConfirmUsable: every error of the context, the user and the cluster,
        // in that order, aggregated (`invalid configuration: [<a>, <b>]`).
        let mut errs = Vec::new();
        // An empty current-context still names a context: client-go's `getContext` looks up
        // `contexts[""]` (and, with none, uses the empty context: the unnamed entries).
        let (cluster_name, user_name) = match self
            .contexts
            .iter()
            .find(|c| c.name == self.current_context)
        {
            Some(ctx) => (
                Some(ctx.context.cluster.as_str()),
                Some(ctx.context.user.as_str()),
            ),
            None if self.current_context.is_empty() => (None, None),
            None => {
                // An empty context, as client-go takes it: the entries named "".
                errs.push(format!(
                    "context was not found for specified context: {}",
                    self.current_context
                ));
                (Some(""), Some(""))
            }
        };
        let cluster = pick(&self.clusters, cluster_name, |c| &c.name).map(|c| &c.cluster);
        let user = pick(&self.users, user_name, |u| &u.name)
            .map(|u| u.user.clone())
            .unwrap_or_default();
        if user.exec.is_some() || user.auth_provider.is_some() {
            return Err(ConfigError::new(
                "kubeconfig exec and auth-provider plugins are not supported",
            ));
        }
        // A field counts when it has something in it, as client-go's `len(...) > 0` checks.
        let set = |v: &Option<serde_yaml_ng::Value>| match v {
            None | Some(serde_yaml_ng::Value::Null) => false,
            Some(serde_yaml_ng::Value::String(s)) => !s.is_empty(),
            Some(serde_yaml_ng::Value::Sequence(items)) => !items.is_empty(),
            Some(serde_yaml_ng::Value::Mapping(m)) => !m.is_empty(),
            Some(_) => true,
        };
        // client-go impersonates only when `as` is set (then with `as-uid`, `as-groups` and
        // `as-user-extra` too). Sending the requests as the base identity instead could give
        // them more rights than the file intends: refused. Without `as`, the other fields are
        // ConfirmUsable's error, below.
        if set(&user.impersonate) {
            return Err(ConfigError::new(
                "kubeconfig impersonation (as, as-uid, as-groups, as-user-extra) is not supported",
            ));
        }
        let impersonation_without_user = set(&user.impersonate_uid)
            || set(&user.impersonate_groups)
            || set(&user.impersonate_user_extra);
        let resolve = |p: &str| -> PathBuf {
            match base {
                Some(b) if Path::new(p).is_relative() => clean_path(&b.join(p)),
                _ => PathBuf::from(p),
            }
        };
        // validateAuthInfo, then validateClusterInfo, each entry named as the context names it.
        let user_label = user_name.unwrap_or("");
        let cluster_label = cluster_name.unwrap_or("");
        let mut methods = Vec::new();
        if non_empty(&user.token).is_some() {
            methods.push("token");
        }
        if non_empty(&user.username).is_some() || non_empty(&user.password).is_some() {
            methods.push("basicAuth");
        }
        // `*-data` as client-go has it: decoded (an empty decoding is no data).
        let ca_data = cluster
            .map(|c| decode_data(&c.certificate_authority_data))
            .transpose()?
            .flatten();
        let cert_data = decode_data(&user.client_certificate_data)?;
        let key_data = decode_data(&user.client_key_data)?;
        let cert = (non_empty(&user.client_certificate), cert_data.as_ref());
        let key = (non_empty(&user.client_key), key_data.as_ref());
        if cert.0.is_some() || cert.1.is_some() {
            if cert.0.is_some() && cert.1.is_some() {
                errs.push(format!("client-cert-data and client-cert are both specified for {user_label}. client-cert-data will override."));
            }
            if key.0.is_some() && key.1.is_some() {
                errs.push(format!("client-key-data and client-key are both specified for {user_label}; client-key-data will override"));
            }
            if key.0.is_none() && key.1.is_none() {
                errs.push(format!("client-key-data or client-key must be specified for {user_label} to use the clientCert authentication method."));
            }
            for (what, file) in [("client-cert", cert.0), ("client-key", key.0)] {
                if let Some(file) = file
                    && let Err(e) = go_open(&resolve(file))
                {
                    errs.push(format!(
                        "unable to read {what} {} for {user_label} due to {e}",
                        resolve(file).display()
                    ));
                }
            }
        }
        if methods.len() > 1 {
            errs.push(format!(
                "more than one authentication method found for {user_label}; found [{}], only one is allowed",
                methods.join(" ")
            ));
        }
        if impersonation_without_user {
            errs.push(format!(
                "requesting uid, groups or user-extra for {user_label} without impersonating a user"
            ));
        }
        match cluster {
            // Not in the file: client-go's empty cluster.
            None => errs.push(EMPTY_CLUSTER.to_owned()),
            Some(c) => {
                if c.server.is_empty() {
                    errs.push(if cluster_label.is_empty() {
                        "default cluster has no server defined".to_owned()
                    } else {
                        format!(
                            "no server found for cluster {}",
                            crate::jwt::go_quote(cluster_label)
                        )
                    });
                }
                // client-go's parseProxyURL (socks5 passes here; the client refuses it when
                // it is built). Go's text shows the URL; here its password is masked.
                if let Some(proxy) = non_empty(&c.proxy_url) {
                    let shown = super::redact_url(proxy);
                    let why = match crate::go_url::rest::scheme(proxy).as_deref() {
                        None => Some(format!("could not parse: {shown}")),
                        Some("http" | "https" | "socks5") => None,
                        Some(scheme) => Some(format!(
                            "unsupported scheme {}, must be http, https, or socks5",
                            crate::jwt::go_quote(scheme)
                        )),
                    };
                    if let Some(why) = why {
                        errs.push(format!(
                            "invalid 'proxy-url' {} for cluster {}: {why}",
                            crate::jwt::go_quote(&shown),
                            crate::jwt::go_quote(cluster_label)
                        ));
                    }
                }
                let ca_file = non_empty(&c.certificate_authority);
                if ca_file.is_some() && ca_data.is_some() {
                    errs.push(format!("certificate-authority-data and certificate-authority are both specified for {cluster_label}. certificate-authority-data will override."));
                }
                if let Some(file) = ca_file
                    && let Err(e) = go_open(&resolve(file))
                {
                    errs.push(format!(
                        "unable to read certificate-authority {} for {cluster_label} due to {e}",
                        resolve(file).display()
                    ));
                }
            }
        }
        // The empty cluster alone: client-go's "no configuration" error.
        if errs == [EMPTY_CLUSTER] {
            return Err(ConfigError::new(EMPTY_CONFIG));
        }
        if !errs.is_empty() {
            return Err(invalid_configuration(errs));
        }
        let Some(cluster) = cluster else {
            return Err(ConfigError::new(EMPTY_CONFIG));
        };
        let url = reqwest::Url::parse(&cluster.server).map_err(|e| {
            ConfigError::new(format!(
                "invalid server URL {:?}: {e}",
                super::redact_server(&cluster.server)
            ))
        })?;
        if url.scheme() != "https" && url.scheme() != "http" {
            return Err(ConfigError::new(format!(
                "invalid server URL scheme {:?}",
                url.scheme()
            )));
        }
        // A host Go dials as a name, the url crate as an address (`10.1`, `2130706433`,
        // `010.1.2.3`): nothing here can do what client-go does with it.
        if let Some((host, ip)) = super::proxy::ipv4_read_from_a_name(&cluster.server) {
            return Err(ConfigError::new(format!(
                "invalid server URL {:?}: {}",
                super::redact_server(&cluster.server),
                super::proxy::ipv4_read_from_a_name_error(&host, ip)
            )));
        }
        if let Some(proxy) = non_empty(&cluster.proxy_url)
            && let Some((host, ip)) = super::proxy::ipv4_read_from_a_name(proxy)
        {
            return Err(ConfigError::new(format!(
                "proxy-url {}: {}",
                super::redact_url(proxy),
                super::proxy::ipv4_read_from_a_name_error(&host, ip)
            )));
        }
        let pem = |file: &Option<String>, data: Option<Vec<u8>>| match (file, data) {
            (_, Some(d)) => Some(Pem::Data(d)),
            (Some(f), None) if !f.is_empty() => Some(Pem::File(resolve(f))),
            _ => None,
        };
        // clientcmd's cleanup of the server URL (its query dropped when it has a path).
        let mut info = ConnectionInfo::new(crate::go_url::rest::clientcmd_server(&cluster.server));
        info.proxy_url = cluster.proxy_url.clone().filter(|s| !s.is_empty());
        if url.scheme() != "https" {
            // client-go reads the cluster's TLS settings and the user's credentials only for
            // a TLS transport (`IsConfigTransportTLS`): nothing is sent in clear text.
            if !methods.is_empty() || cert.0.is_some() || cert.1.is_some() {
                tracing::warn!(
                    server = %super::redact_server(&cluster.server),
                    "kubeconfig: the server is not https, so the user's credentials are not sent"
                );
            }
            return Ok(info);
        }
        info.certificate_authority = pem(&cluster.certificate_authority, ca_data);
        info.insecure_skip_tls_verify = cluster.insecure_skip_tls_verify;
        info.tls_server_name = cluster.tls_server_name.clone().filter(|s| !s.is_empty());
        info.client_certificate = pem(&user.client_certificate, cert_data);
        info.client_key = pem(&user.client_key, key_data);
        if info.client_certificate.is_some() != info.client_key.is_some() {
            // A key without a certificate (client-go ignores the key).
            return Err(ConfigError::new(
                "client-cert-data and client-key-data must be specified together",
            ));
        }
        info.token = match (non_empty(&user.token), non_empty(&user.token_file)) {
            // client-go reads the file for each request (cached for a minute) and falls back
            // to the static token when it cannot.
            (Some(t), Some(f)) => match BearerToken::from_file(resolve(f)) {
                Ok(file) => Some(file),
                Err(e) => {
                    tracing::warn!("kubeconfig: tokenFile not usable, using token instead: {e}");
                    Some(BearerToken::Static(Secret::new(t)))
                }
            },
            (Some(t), None) => Some(BearerToken::Static(Secret::new(t))),
            // client-go reads it at once (`os.ReadFile`): its error text.
            (None, Some(f)) => {
                go_open(&resolve(f)).map_err(ConfigError::new)?;
                Some(BearerToken::from_file(resolve(f))?)
            }
            (None, None) => None,
        };
        if non_empty(&user.username).is_some() && info.token.is_some() {
            // A token file and a user name (a token and basic credentials were refused above):
            // client-go's transport refuses both (`HTTPWrappersForConfig`).
            return Err(ConfigError::new(
                "username/password or bearer token may be set, but not both",
            ));
        }
        if let Some(u) = non_empty(&user.username) {
            info = info.with_basic(
                u.to_owned(),
                Secret::new(user.password.clone().unwrap_or_default()),
            );
        }
        Ok(info)
    }
}

/// What client-go's loader (`clientcmd.Load`: its codec's `Interpret`, then the scheme) makes of
/// the file's `apiVersion` and `kind`: absent or empty they default to `v1` and `Config`; any
/// other pair is refused with its text. The keys match as Go's encoding/json matches field
/// names (any ASCII case, `ſ` for `s`, the Kelvin sign for `k`) and the last one counts.
fn check_version_and_kind(root: &Node) -> Result<(), ConfigError> {
    let (version, kind) = decode::interpret_type_meta(root)?;
    let (group, version) = decode::parse_group_version(&version)?;
    let (group, version) = (group.to_owned(), version.to_owned());
    let kind = if kind.is_empty() {
        "Config".to_owned()
    } else {
        kind
    };
    let version = match (group.is_empty(), version.is_empty()) {
        (true, true) => "v1".to_owned(),
        // Go prints the whole file here; not its secrets.
        (false, true) => {
            return Err(ConfigError::new("Object 'apiVersion' is missing"));
        }
        (_, false) => version,
    };
    if group.is_empty() && version == "v1" && kind == "Config" {
        return Ok(());
    }
    let group_version = if group.is_empty() {
        version
    } else {
        format!("{group}/{version}")
    };
    Err(ConfigError::new(format!(
        "no kind {} is registered for version {} in scheme \"pkg/runtime/scheme.go:111\"",
        crate::jwt::go_quote(&kind),
        crate::jwt::go_quote(&group_version)
    )))
}

/// A field's Go type in client-go's `clientcmd/api/v1`, as far as its JSON kind goes.
enum GoType {
    Str,
    Bool,
    /// `[]byte` (base64 text in JSON).
    Bytes,
    /// A struct: its name and the fields checked (exact names; the others are not).
    Struct(&'static str, &'static [(&'static str, GoType)]),
    /// A slice of the type.
    List(&'static GoType),
    /// `map[string]<type>`.
    Map(&'static GoType),
}

impl GoType {
    /// The name `encoding/json` prints (`[]v1.NamedCluster`).
    fn name(&self) -> String {
        match self {
            GoType::Str => "string".into(),
            GoType::Bool => "bool".into(),
            GoType::Bytes => "[]uint8".into(),
            GoType::Struct(name, _) => format!("v1.{name}"),
            GoType::List(t) => format!("[]{}", t.name()),
            GoType::Map(t) => format!("map[string]{}", t.name()),
        }
    }
}

const EXTENSIONS: GoType = GoType::List(&GoType::Struct("NamedExtension", &[]));
const CLUSTER: GoType = GoType::Struct(
    "Cluster",
    &[
        ("server", GoType::Str),
        ("tls-server-name", GoType::Str),
        ("insecure-skip-tls-verify", GoType::Bool),
        ("certificate-authority", GoType::Str),
        ("certificate-authority-data", GoType::Bytes),
        ("proxy-url", GoType::Str),
        ("disable-compression", GoType::Bool),
        ("extensions", EXTENSIONS),
    ],
);
const AUTH_INFO: GoType = GoType::Struct(
    "AuthInfo",
    &[
        ("client-certificate", GoType::Str),
        ("client-certificate-data", GoType::Bytes),
        ("client-key", GoType::Str),
        ("client-key-data", GoType::Bytes),
        ("token", GoType::Str),
        ("tokenFile", GoType::Str),
        ("as", GoType::Str),
        ("as-uid", GoType::Str),
        ("as-groups", GoType::List(&GoType::Str)),
        ("as-user-extra", GoType::Map(&GoType::List(&GoType::Str))),
        ("username", GoType::Str),
        ("password", GoType::Str),
        ("auth-provider", GoType::Struct("AuthProviderConfig", &[])),
        ("exec", GoType::Struct("ExecConfig", &[])),
        ("extensions", EXTENSIONS),
    ],
);
const CONTEXT: GoType = GoType::Struct(
    "Context",
    &[
        ("cluster", GoType::Str),
        ("user", GoType::Str),
        ("namespace", GoType::Str),
        ("extensions", EXTENSIONS),
    ],
);
/// `v1.Config` (`apiVersion` and `kind` are checked by [`check_version_and_kind`]).
const CONFIG: GoType = GoType::Struct(
    "Config",
    &[
        ("preferences", GoType::Struct("Preferences", &[])),
        (
            "clusters",
            GoType::List(&GoType::Struct(
                "NamedCluster",
                &[("name", GoType::Str), ("cluster", CLUSTER)],
            )),
        ),
        (
            "users",
            GoType::List(&GoType::Struct(
                "NamedAuthInfo",
                &[("name", GoType::Str), ("user", AUTH_INFO)],
            )),
        ),
        (
            "contexts",
            GoType::List(&GoType::Struct(
                "NamedContext",
                &[("name", GoType::Str), ("context", CONTEXT)],
            )),
        ),
        ("current-context", GoType::Str),
        ("extensions", EXTENSIONS),
    ],
);

/// The first of encoding/json's type errors decoding `node` into `ty` (`json: cannot
/// unmarshal <kind> into Go struct field <Owner>.<path> of type <type>`): the fields in the
/// order it reads them (sorted, as `sigs.k8s.io/yaml` writes a mapping), field names matched
/// exactly (client-go's case-sensitive decoding), `null` fitting any type. The texts name no
/// value.
fn type_error(node: &Node, ty: &GoType, owner: &str, path: &str) -> Option<String> {
    let fits = match (ty, node) {
        (_, Node::Null) => true,
        (GoType::Str | GoType::Bytes, Node::Str(_) | Node::Merge) => true,
        (GoType::Bool, Node::Bool(_)) => true,
        (GoType::Struct(name, fields), Node::Map(members)) => {
            return members.iter().find_map(|m| {
                let (_, field_ty) = fields.iter().find(|(f, _)| *f == m.key)?;
                let path = if path.is_empty() {
                    m.key.clone()
                } else {
                    format!("{path}.{}", m.key)
                };
                type_error(&m.value, field_ty, name, &path)
            });
        }
        (GoType::List(elem), Node::Seq(items)) => {
            return items
                .iter()
                .find_map(|item| type_error(item, elem, owner, path));
        }
        (GoType::Map(elem), Node::Map(members)) => {
            return members
                .iter()
                .find_map(|m| type_error(&m.value, elem, owner, path));
        }
        _ => false,
    };
    (!fits).then(|| {
        format!(
            "json: cannot unmarshal {} into Go struct field {owner}.{path} of type {}",
            node.kind(),
            ty.name()
        )
    })
}

/// The tree as JSON for the typed decoding: a `null` member left out (encoding/json leaves the
/// field as it is), a `null` list element an empty object (the element's zero value). The
/// members of `as-user-extra` (a Go map, where a `null` value is still a key) are all kept.
fn json_value(node: &Node) -> serde_json::Value {
    use serde_json::Value;
    match node {
        Node::Null | Node::NonFinite(_) => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Number(n) => n
            .parse::<serde_json::Number>()
            .map_or(Value::Null, Value::Number),
        Node::Str(s) => Value::String(s.clone()),
        Node::Merge => Value::String("<<".into()),
        Node::Seq(items) => Value::Array(
            items
                .iter()
                .map(|i| match i {
                    Node::Null => Value::Object(serde_json::Map::new()),
                    i => json_value(i),
                })
                .collect(),
        ),
        Node::Map(members) => Value::Object(
            members
                .iter()
                .filter(|m| !matches!(m.value, Node::Null))
                .map(|m| {
                    let value = match (&m.value, m.key.as_str()) {
                        (Node::Map(extra), "as-user-extra") => Value::Object(
                            extra
                                .iter()
                                .map(|e| (e.key.clone(), json_value(&e.value)))
                                .collect(),
                        ),
                        (value, _) => json_value(value),
                    };
                    (m.key.clone(), value)
                })
                .collect(),
        ),
    }
}

/// A kubeconfig `*-data` value decoded as client-go decodes it (encoding/json's `[]byte`); an
/// empty decoding is no data (client-go checks `len(...) > 0`).
fn decode_data(data: &Option<String>) -> Result<Option<Vec<u8>>, ConfigError> {
    let Some(d) = data else {
        return Ok(None);
    };
    let bytes = go_base64(d.as_bytes()).map_err(ConfigError::new)?;
    Ok((!bytes.is_empty()).then_some(bytes))
}

/// Go's `base64.StdEncoding` decoding (what encoding/json does with a string for a `[]byte`),
/// with Go's error text.
fn go_base64(src: &[u8]) -> Result<Vec<u8>, String> {
    crate::api::go_base64(src, false, true)
        .map_err(|at| format!("illegal base64 data at input byte {at}"))
}

/// `null` (client-go writes `users: null` for an empty list) as the type's default.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// client-go's `ErrEmptyCluster`: the context names a cluster the file does not have (or there is
/// no context and no unnamed cluster).
const EMPTY_CLUSTER: &str = "cluster has no server defined";

/// client-go's `ErrEmptyConfig` as `ConfirmUsable` returns it (for an empty cluster and no other
/// error).
const EMPTY_CONFIG: &str = "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable";

/// The file's bytes (at most [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES)), a failure as Go's
/// `os.ReadFile` words it (`read <path>: is a directory`).
fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    super::read_file_capped(path, |op, e| crate::error::go_path_error(op, path, e))
}

/// Whether Go's `os.Open(path)` succeeds; its error text when not (`open <path>: <errno text>`).
fn go_open(path: &Path) -> Result<(), String> {
    std::fs::File::open(path)
        .map(drop)
        .map_err(|e| crate::error::go_path_error("open", path, &e))
}

/// Go's `filepath.Clean` (what `filepath.Join` does to a relative path joined to the file's
/// directory): `.` dropped, `..` taking the previous element away, never above the root.
fn clean_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            c => out.push(c),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// client-go's aggregate of validation errors: `invalid configuration: <one>` or
/// `invalid configuration: [<a>, <b>]` (identical messages once).
fn invalid_configuration(mut errs: Vec<String>) -> ConfigError {
    let mut seen = std::collections::HashSet::new();
    errs.retain(|e| seen.insert(e.clone()));
    let list = match errs.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    ConfigError::new(format!("invalid configuration: {list}"))
}

fn non_empty(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|s| !s.is_empty())
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

    /// A kubeconfig that does not exist is reported as client-go's loader reports it (checked
    /// with webhookutil.LoadKubeconfig): it stats the file first.
    #[test]
    fn a_missing_file_is_reported_as_client_go_reports_it() {
        let e = Kubeconfig::load("/nonexistent/kubeconfig").unwrap_err();
        assert_eq!(
            e.to_string(),
            "stat /nonexistent/kubeconfig: no such file or directory"
        );
    }

    #[test]
    fn table_of_kubeconfigs() {
        // The kubeconfig's directory, with the files some rows name (`{dir}` in the texts).
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for f in ["ca.pem", "c.pem", "k.pem", "token"] {
            std::fs::write(dir.join(f), "from-file\n").unwrap();
        }
        /// Checks the connection info; the directory is the kubeconfig's.
        type Check = fn(&ConnectionInfo, &Path);
        let cases: Vec<(&str, &str, Result<Check, &str>)> = vec![
            (
                "unnamed entries as in kube-apiserver's webhook tests",
                "clusters: [{cluster: {server: 'https://127.0.0.1:1/x', certificate-authority-data: 'LS0t'}}]\nusers: [{user: {token: t}}]",
                Ok(|i, _| {
                    assert_eq!(i.certificate_authority, Some(Pem::Data(b"---".to_vec())));
                    assert_eq!(i.token.as_ref().unwrap().current().expose(), "t");
                }),
            ),
            (
                "current context picks named entries",
                "clusters: [{name: a, cluster: {server: 'https://a'}}, {name: b, cluster: {server: 'https://b', proxy-url: 'http://p:3128'}}]\nusers: [{name: ub, user: {username: u, password: p}}]\ncontexts: [{name: c, context: {cluster: b, user: ub}}]\ncurrent-context: c",
                Ok(|i, _| {
                    assert_eq!(i.server, "https://b");
                    assert_eq!(i.proxy_url.as_deref(), Some("http://p:3128"));
                    assert_eq!(i.basic.as_ref().unwrap().username, "u");
                }),
            ),
            // client-go looks up contexts[""] when current-context is empty (checked with
            // webhookutil.LoadKubeconfig: https://real, real-token; the second row is its
            // "no configuration" error).
            (
                "no current-context: the context named \"\" picks the entries",
                "clusters: [{name: real, cluster: {server: 'https://real'}}, {name: '', cluster: {server: 'https://other'}}]\nusers: [{name: u, user: {token: real-token}}, {name: '', user: {token: other-token}}]\ncontexts: [{name: '', context: {cluster: real, user: u}}]",
                Ok(|i, _| {
                    assert_eq!(i.server, "https://real");
                    assert_eq!(i.token.as_ref().unwrap().current().expose(), "real-token");
                }),
            ),
            (
                "no current-context: the context named \"\" names the unnamed cluster, which is missing",
                "clusters: [{name: only, cluster: {server: 'https://only'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: '', context: {cluster: '', user: u}}]",
                Err(EMPTY_CONFIG),
            ),
            (
                "relative files resolve against the kubeconfig directory",
                "clusters: [{cluster: {server: 'https://x', certificate-authority: ./ca.pem}}]\nusers: [{user: {client-certificate: sub/../c.pem, client-key: k.pem}}]",
                Ok(|i, d| {
                    assert_eq!(i.certificate_authority, Some(Pem::File(d.join("ca.pem"))));
                    assert_eq!(i.client_certificate, Some(Pem::File(d.join("c.pem"))));
                    assert_eq!(i.client_key, Some(Pem::File(d.join("k.pem"))));
                }),
            ),
            (
                "missing context",
                "clusters: [{cluster: {server: 'https://x'}}]\ncurrent-context: nope",
                Err("invalid configuration: context was not found for specified context: nope"),
            ),
            (
                "missing context: the unnamed entries, their errors aggregated",
                "clusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{user: {token: t, username: u}}]\ncurrent-context: nope",
                Err(
                    "invalid configuration: [context was not found for specified context: nope, more than one authentication method found for ; found [token basicAuth], only one is allowed, cluster has no server defined]",
                ),
            ),
            ("no clusters", "users: []", Err(EMPTY_CONFIG)),
            ("empty file", "  \n", Err(EMPTY_CONFIG)),
            // A document that is null or empty (checked with webhookutil.LoadKubeconfig).
            ("null", "null", Err(EMPTY_CONFIG)),
            ("null, the short way", "~\n", Err(EMPTY_CONFIG)),
            ("null after a comment", "# c\nnull", Err(EMPTY_CONFIG)),
            (
                "null after a document start",
                "---\nnull",
                Err(EMPTY_CONFIG),
            ),
            ("only a comment", "# only a comment\n", Err(EMPTY_CONFIG)),
            ("only a document start", "---\n", Err(EMPTY_CONFIG)),
            // Not null: Go's text (clientcmd.Load, client-go v0.37.2).
            (
                "a list",
                "[]",
                Err(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }",
                ),
            ),
            (
                "the context names a cluster the file does not have",
                "clusters: [{name: c, cluster: {server: 'https://x'}}]\ncontexts: [{name: x, context: {cluster: other}}]\ncurrent-context: x",
                Err(EMPTY_CONFIG),
            ),
            (
                "a cluster the file does not have, and a user error",
                "users: [{name: u, user: {token: t, password: p}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: [more than one authentication method found for u; found [token basicAuth], only one is allowed, cluster has no server defined]",
                ),
            ),
            (
                "no server in the unnamed cluster",
                "clusters: [{cluster: {}}]",
                Err("invalid configuration: default cluster has no server defined"),
            ),
            (
                "no server in a named cluster, with a user error",
                "clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t, password: p}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: [more than one authentication method found for u; found [token basicAuth], only one is allowed, no server found for cluster \"c\"]",
                ),
            ),
            (
                "unreadable CA file",
                "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: missing/ca.pem}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: unable to read certificate-authority {dir}/missing/ca.pem for c due to open {dir}/missing/ca.pem: no such file or directory",
                ),
            ),
            (
                "unreadable CA file of an http server: refused as by client-go",
                "clusters: [{cluster: {server: 'http://x', certificate-authority: /nonexistent/ca.pem}}]",
                Err(
                    "invalid configuration: unable to read certificate-authority /nonexistent/ca.pem for  due to open /nonexistent/ca.pem: no such file or directory",
                ),
            ),
            (
                "unreadable client certificate and key files",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {client-certificate: missing.crt, client-key: /nonexistent/k.pem}}]\ncontexts: [{name: x, context: {user: u}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: [unable to read client-cert {dir}/missing.crt for u due to open {dir}/missing.crt: no such file or directory, unable to read client-key /nonexistent/k.pem for u due to open /nonexistent/k.pem: no such file or directory]",
                ),
            ),
            // client-go's parseProxyURL, with Go's texts (each row checked with
            // webhookutil.LoadKubeconfig); the URL's password masked, where Go shows it.
            (
                "proxy-url of a scheme client-go refuses, its password masked",
                "clusters: [{name: c, cluster: {server: 'https://x', proxy-url: 'ftp://u:pw-SECRET@p:21'}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: invalid 'proxy-url' \"ftp://u:***@p:21\" for cluster \"c\": unsupported scheme \"ftp\", must be http, https, or socks5",
                ),
            ),
            (
                "proxy-url that Go cannot parse",
                "clusters: [{cluster: {server: 'https://x', proxy-url: '10.0.0.1:3128'}}]",
                Err(
                    "invalid configuration: invalid 'proxy-url' \"10.0.0.1:3128\" for cluster \"\": could not parse: 10.0.0.1:3128",
                ),
            ),
            (
                "proxy-url without a scheme, host and port read as scheme and opaque",
                "clusters: [{cluster: {server: 'http://x', proxy-url: 'u:pw-SECRET@p:3128'}}]",
                Err(
                    "invalid configuration: invalid 'proxy-url' \"u:***@p:3128\" for cluster \"\": unsupported scheme \"u\", must be http, https, or socks5",
                ),
            ),
            (
                "proxy-url error after the server's, before the CA's, after the user's",
                "clusters: [{name: c, cluster: {proxy-url: 'proxy:3128', certificate-authority: /nonexistent/ca.pem}}]\nusers: [{name: u, user: {token: t, password: p}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: [more than one authentication method found for u; found [token basicAuth], only one is allowed, no server found for cluster \"c\", invalid 'proxy-url' \"proxy:3128\" for cluster \"c\": unsupported scheme \"proxy\", must be http, https, or socks5, unable to read certificate-authority /nonexistent/ca.pem for c due to open /nonexistent/ca.pem: no such file or directory]",
                ),
            ),
            (
                "a socks5 proxy-url loads (the client refuses it when it is built)",
                "clusters: [{cluster: {server: 'https://x', proxy-url: 'socks5://p:1080'}}]",
                Ok(|i, _| {
                    assert_eq!(i.proxy_url.as_deref(), Some("socks5://p:1080"));
                    let e = i.client(std::time::Duration::from_secs(1)).unwrap_err();
                    assert!(e.to_string().contains("not supported"), "{e}");
                }),
            ),
            (
                "bad scheme",
                "clusters: [{cluster: {server: 'ftp://x'}}]",
                Err("invalid server URL scheme \"ftp\""),
            ),
            (
                "a server URL whose password has a slash: shown masked",
                "clusters: [{cluster: {server: 'https://u:pa/ss-SECRET@host/'}}]",
                Err("invalid server URL \"https://u:***@host/\": invalid port number"),
            ),
            (
                "exec refused",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {exec: {command: evil}}}]",
                Err("kubeconfig exec and auth-provider plugins are not supported"),
            ),
            (
                "cert without key",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {client-certificate-data: 'LS0t'}}]",
                Err(
                    "invalid configuration: client-key-data or client-key must be specified for  to use the clientCert authentication method.",
                ),
            ),
            (
                "key without cert",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {client-key-data: 'LS0t'}}]",
                Err("client-cert-data and client-key-data must be specified together"),
            ),
            (
                "client certificate as file and data, key as file and data",
                "clusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {client-certificate-data: 'LS0t', client-certificate: c.pem, client-key: k.pem, client-key-data: 'LS0t'}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: [client-cert-data and client-cert are both specified for u. client-cert-data will override., client-key-data and client-key are both specified for u; client-key-data will override]",
                ),
            ),
            (
                "CA as file and data",
                "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: ca.pem, certificate-authority-data: 'LS0t'}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: certificate-authority-data and certificate-authority are both specified for c. certificate-authority-data will override.",
                ),
            ),
            (
                "user and cluster errors together, user first",
                "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: ca.pem, certificate-authority-data: 'LS0t'}}]\nusers: [{name: u, user: {token: t, password: p}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: [more than one authentication method found for u; found [token basicAuth], only one is allowed, certificate-authority-data and certificate-authority are both specified for c. certificate-authority-data will override.]",
                ),
            ),
            (
                "lists written by client-go as null",
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://x'}\nusers: null\ncontexts: null\ncurrent-context: \"\"\npreferences: {}",
                Ok(|i, _| {
                    assert_eq!(i.server, "https://x");
                    assert!(i.token.is_none());
                }),
            ),
            (
                "http server: no credentials and no TLS settings are used",
                "clusters: [{cluster: {server: 'http://127.0.0.1:1/x', certificate-authority-data: 'LS0t', insecure-skip-tls-verify: true}}]\nusers: [{user: {token: t, client-certificate-data: 'LS0t', client-key-data: 'LS0t'}}]",
                Ok(|i, _| {
                    assert!(i.token.is_none());
                    assert!(i.basic.is_none());
                    assert!(i.client_certificate.is_none() && i.client_key.is_none());
                    assert!(i.certificate_authority.is_none());
                    assert!(!i.insecure_skip_tls_verify);
                }),
            ),
            (
                "http server: basic credentials are not sent either",
                "clusters: [{cluster: {server: 'http://127.0.0.1:1/x'}}]\nusers: [{user: {username: u, password: p}}]",
                Ok(|i, _| assert!(i.basic.is_none())),
            ),
            (
                "token and an unreadable tokenFile: the token",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: static, tokenFile: /nonexistent/token}}]",
                Ok(|i, _| assert_eq!(i.token.as_ref().unwrap().current().expose(), "static")),
            ),
            (
                "an unreadable tokenFile alone",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {tokenFile: /nonexistent/token}}]",
                Err("open /nonexistent/token: no such file or directory"),
            ),
            (
                "a user name and a tokenFile: refused as by client-go's transport",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {username: u, password: p, tokenFile: token}}]",
                Err("username/password or bearer token may be set, but not both"),
            ),
            (
                "a user name without a password and a tokenFile",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {username: u, tokenFile: token}}]",
                Err("username/password or bearer token may be set, but not both"),
            ),
            (
                "a password alone and a tokenFile: no basic credentials, the token",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {password: p, tokenFile: token}}]",
                Ok(|i, _| {
                    assert!(i.basic.is_none());
                    assert_eq!(i.token.as_ref().unwrap().current().expose(), "from-file");
                }),
            ),
            (
                "a user name and a tokenFile for an http server: no credentials, no error",
                "clusters: [{cluster: {server: 'http://x'}}]\nusers: [{user: {username: u, password: p, tokenFile: token}}]",
                Ok(|i, _| assert!(i.basic.is_none() && i.token.is_none())),
            ),
            (
                "impersonation refused",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: t, as: admin, as-groups: [system:masters]}}]",
                Err(
                    "kubeconfig impersonation (as, as-uid, as-groups, as-user-extra) is not supported",
                ),
            ),
            // Without `as`, client-go's ConfirmUsable refuses the other impersonation fields
            // (each text from webhookutil.LoadKubeconfig, k8s.io/apiserver v0.37.2).
            (
                "a group to impersonate without a user: ConfirmUsable's error",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: t, as-groups: [g]}}]",
                Err(
                    "invalid configuration: requesting uid, groups or user-extra for  without impersonating a user",
                ),
            ),
            (
                "a uid to impersonate without a user",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {token: t, as-uid: '1'}}]\ncontexts: [{name: c, context: {user: u}}]\ncurrent-context: c",
                Err(
                    "invalid configuration: requesting uid, groups or user-extra for u without impersonating a user",
                ),
            ),
            (
                "an empty as and a group of an empty name",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: t, as: '', as-groups: ['']}}]",
                Err(
                    "invalid configuration: requesting uid, groups or user-extra for  without impersonating a user",
                ),
            ),
            (
                "user-extra whose key has a null value, for an http server",
                "clusters: [{cluster: {server: 'http://x'}}]\nusers: [{user: {as-user-extra: {a: null}}}]",
                Err(
                    "invalid configuration: requesting uid, groups or user-extra for  without impersonating a user",
                ),
            ),
            (
                "impersonation without a user among the user's errors, before the cluster's",
                "clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t, password: p, as-uid: '1', as-user-extra: {a: []}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x",
                Err(
                    "invalid configuration: [more than one authentication method found for u; found [token basicAuth], only one is allowed, requesting uid, groups or user-extra for u without impersonating a user, no server found for cluster \"c\"]",
                ),
            ),
            // A host Go keeps as a name, the url crate reads as an address: refused.
            (
                "a shorthand IPv4 server host",
                "clusters: [{cluster: {server: 'https://u:pw-SECRET@10.1:8443/x'}}]",
                Err(
                    "invalid server URL \"https://u:***@10.1:8443/x\": host \"10.1\" is a host name to Go but the IPv4 address 10.0.0.1 to this client; write the address as four decimal numbers without leading zeros",
                ),
            ),
            (
                "a server host with a leading zero",
                "clusters: [{cluster: {server: 'http://010.1.2.3/'}}]",
                Err(
                    "invalid server URL \"http://010.1.2.3/\": host \"010.1.2.3\" is a host name to Go but the IPv4 address 8.1.2.3 to this client; write the address as four decimal numbers without leading zeros",
                ),
            ),
            (
                "a shorthand IPv4 proxy-url host",
                "clusters: [{cluster: {server: 'https://x', proxy-url: 'http://u:pw-SECRET@127.1:3128'}}]",
                Err(
                    "proxy-url http://u:***@127.1:3128: host \"127.1\" is a host name to Go but the IPv4 address 127.0.0.1 to this client; write the address as four decimal numbers without leading zeros",
                ),
            ),
            (
                "dotted-quad server and proxy hosts load",
                "clusters: [{cluster: {server: 'https://10.0.0.1:8443/', proxy-url: 'http://127.0.0.1:3128'}}]",
                Ok(|i, _| assert_eq!(i.server, "https://10.0.0.1:8443/")),
            ),
            (
                "empty impersonation fields: no impersonation, as in client-go",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: t, as: '', as-uid: null, as-groups: [], as-user-extra: {}}}]",
                Ok(|i, _| assert_eq!(i.token.as_ref().unwrap().current().expose(), "t")),
            ),
            (
                "repeated cluster name",
                "clusters: [{name: a, cluster: {server: 'https://x'}}, {name: a, cluster: {server: 'https://y'}}]",
                Err("kubeconfig: duplicate name \"a\" in clusters"),
            ),
            (
                "repeated user name",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {token: a}}, {name: u, user: {token: b}}]",
                Err("kubeconfig: duplicate name \"u\" in users"),
            ),
            (
                "bad base64",
                "clusters: [{cluster: {server: 'https://x', certificate-authority-data: '@@@'}}]",
                Err("illegal base64 data at input byte 0"),
            ),
            (
                "token and basic",
                "clusters: [{cluster: {server: 'https://x'}}]\nusers: [{user: {token: t, username: u}}]",
                Err(
                    "invalid configuration: more than one authentication method found for ; found [token basicAuth], only one is allowed",
                ),
            ),
            (
                "not yaml",
                "clusters: [",
                Err("yaml: line 1: did not find expected node content"),
            ),
        ];
        let shown = dir.display().to_string();
        for (name, yaml, want) in cases {
            let got = Kubeconfig::parse(yaml.as_bytes()).and_then(|k| k.connection_info(Some(dir)));
            match (got, want) {
                (Ok(info), Ok(check)) => check(&info, dir),
                (Err(e), Err(text)) => {
                    assert_eq!(e.to_string(), text.replace("{dir}", &shown), "{name}")
                }
                (Ok(_), Err(text)) => panic!("{name}: expected error {text:?}"),
                (Err(e), Ok(_)) => panic!("{name}: unexpected error {e}"),
            }
        }
    }

    /// The `*-data` fields decode as client-go's loader decodes them (encoding/json's
    /// `[]byte`: Go's `base64.StdEncoding`, which skips `\r` and `\n` and nothing else). Every
    /// row's outcome and text was printed by `webhookutil.LoadKubeconfig` (k8s.io/apiserver
    /// v0.37.2) for the same file.
    #[test]
    fn data_fields_decode_as_client_go() {
        // 80 symbols for a 59-byte PEM.
        const B64: &str =
            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";
        let base = "clusters:\n- cluster:\n    server: https://h/x\n";
        let ca = |value: &str| format!("{base}    certificate-authority-data: {value}\n");
        let (head, tail) = B64.split_at(20);
        let (head30, tail30) = B64.split_at(30);
        // (name, file, CA bytes / (certificate, key) bytes, or Go's error)
        type Want = Result<(usize, usize, usize), &'static str>;
        let cases: Vec<(&str, String, Want)> = vec![
            ("one line", ca(B64), Ok((59, 0, 0))),
            (
                "wrapped in a block scalar",
                ca(&format!("|\n      {head}\n      {tail}")),
                Ok((59, 0, 0)),
            ),
            (
                "CRLF inside",
                format!(
                    "clusters:\r\n- cluster:\r\n    server: https://h/x\r\n    certificate-authority-data: \"{head}\\r\\n{tail}\"\r\n"
                ),
                Ok((59, 0, 0)),
            ),
            (
                "newline inside the padding",
                ca(&format!("\"{}\\n=\"", &B64[..79])),
                Ok((59, 0, 0)),
            ),
            ("only a newline: no data", ca("\"\\n\""), Ok((0, 0, 0))),
            ("unused trailing bits", ca("LS1="), Ok((2, 0, 0))),
            (
                "client certificate and key wrapped",
                format!(
                    "{base}users:\n- user:\n    client-certificate-data: |\n      {head}\n      {tail}\n    client-key-data: |\n      {head30}\n      {tail30}\n"
                ),
                Ok((0, 59, 59)),
            ),
            (
                "a space inside",
                ca(&format!("\"{head} {tail}\"")),
                Err("illegal base64 data at input byte 20"),
            ),
            (
                "a tab inside",
                ca(&format!("\"{head}\\t{tail}\"")),
                Err("illegal base64 data at input byte 20"),
            ),
            (
                "a leading space",
                ca(&format!("\" {B64}\"")),
                Err("illegal base64 data at input byte 0"),
            ),
            (
                "a trailing space",
                ca(&format!("\"{B64} \"")),
                Err("illegal base64 data at input byte 80"),
            ),
            (
                "no padding",
                ca("LS0"),
                Err("illegal base64 data at input byte 0"),
            ),
            (
                "URL alphabet",
                ca("-_8="),
                Err("illegal base64 data at input byte 0"),
            ),
            (
                "data after the padding",
                ca("LS0=LS0="),
                Err("illegal base64 data at input byte 4"),
            ),
            (
                "an unused cluster's data",
                format!(
                    "{base}- name: other\n  cluster:\n    server: https://o\n    certificate-authority-data: '@@@'\n"
                ),
                Err("illegal base64 data at input byte 0"),
            ),
        ];
        let len = |p: &Option<Pem>| match p {
            Some(Pem::Data(d)) => d.len(),
            _ => 0,
        };
        for (name, yaml, want) in cases {
            let got = Kubeconfig::parse(yaml.as_bytes()).and_then(|k| k.connection_info(None));
            match (got, want) {
                (Ok(i), Ok(lens)) => assert_eq!(
                    (
                        len(&i.certificate_authority),
                        len(&i.client_certificate),
                        len(&i.client_key)
                    ),
                    lens,
                    "{name}"
                ),
                (Err(e), Err(text)) => assert_eq!(e.to_string(), text, "{name}"),
                (got, _) => panic!("{name}: {got:?}"),
            }
        }
        // Data that decodes to nothing is no data, as in client-go: with a file beside it,
        // the file is used and ConfirmUsable does not call them both specified.
        let tmp = tempfile::tempdir().unwrap();
        let ca_file = tmp.path().join("ca.pem");
        std::fs::write(&ca_file, "").unwrap();
        let k = Kubeconfig::parse(
            format!(
                "{base}    certificate-authority: {}\n    certificate-authority-data: \"\\n\"\n",
                ca_file.display()
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            k.connection_info(None).unwrap().certificate_authority,
            Some(Pem::File(ca_file))
        );
        // Go's decoder, quantum by quantum.
        let cases: &[(&str, Result<&[u8], usize>)] = &[
            ("", Ok(b"")),
            ("\r\n", Ok(b"")),
            ("QQ==", Ok(b"A")),
            ("QQ\n=\r\n=\n", Ok(b"A")),
            ("QUI=", Ok(b"AB")),
            ("QUJD", Ok(b"ABC")),
            ("QQ=", Err(3)),
            ("QQ=x", Err(2)),
            ("Q===", Err(1)),
            ("=", Err(0)),
            ("QUJDQ", Err(4)),
            ("QQ==\nx", Err(5)),
        ];
        for (src, want) in cases {
            let got = go_base64(src.as_bytes());
            match want {
                Ok(bytes) => assert_eq!(got.as_deref(), Ok(*bytes), "{src:?}"),
                Err(at) => assert_eq!(
                    got,
                    Err(format!("illegal base64 data at input byte {at}")),
                    "{src:?}"
                ),
            }
        }
    }

    /// `apiVersion` and `kind` as client-go's loader (`clientcmd.Load`) judges them; each text
    /// was printed by `webhookutil.LoadKubeconfig` (k8s.io/apiserver v0.37.2).
    #[test]
    fn api_version_and_kind_as_client_go() {
        let base = "clusters:\n- cluster:\n    server: https://h/x\n";
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("none", "", None),
            ("v1 Config", "apiVersion: v1\nkind: Config\n", None),
            ("kind only", "kind: Config\n", None),
            ("apiVersion only", "apiVersion: v1\n", None),
            ("empty", "apiVersion: ''\nkind: ''\n", None),
            ("null", "apiVersion: null\nkind: ~\n", None),
            ("slash", "apiVersion: /\n", None),
            ("empty group", "apiVersion: /v1\n", None),
            (
                "v2",
                "apiVersion: v2\nkind: Config\n",
                Some(
                    r#"no kind "Config" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "kind Pod",
                "apiVersion: v1\nkind: Pod\n",
                Some(
                    r#"no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "kind in lower case",
                "kind: config\n",
                Some(
                    r#"no kind "config" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "a group",
                "apiVersion: foo/v1\n",
                Some(
                    r#"no kind "Config" is registered for version "foo/v1" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "keys in another case",
                "APIVERSION: v2\n",
                Some(
                    r#"no kind "Config" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "Kind",
                "Kind: Pod\n",
                Some(
                    r#"no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "Kind with the Kelvin sign",
                "\u{212a}IND: Pod\n",
                Some(
                    r#"no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "apiVersion with a long s",
                "apiVer\u{17f}ion: v2\n",
                Some(
                    r#"no kind "Config" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111""#,
                ),
            ),
            (
                "three parts",
                "apiVersion: a/b/c\n",
                Some("unexpected GroupVersion string: a/b/c"),
            ),
            (
                "a number",
                "apiVersion: 1\n",
                Some(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string",
                ),
            ),
            (
                "a bool",
                "kind: true\n",
                Some(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go struct field .kind of type string",
                ),
            ),
            (
                "a list",
                "kind: [a]\n",
                Some(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go struct field .kind of type string",
                ),
            ),
            (
                "a map",
                "kind: {a: b}\n",
                Some(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal object into Go struct field .kind of type string",
                ),
            ),
        ];
        for (name, head, want) in cases {
            let got = Kubeconfig::parse(format!("{head}{base}").as_bytes());
            match (got, want) {
                (Ok(_), None) => {}
                (Err(e), Some(text)) => assert_eq!(e.to_string(), *text, "{name}"),
                (got, _) => panic!("{name}: {got:?}"),
            }
        }
    }

    /// clientcmd drops the query of a server URL with a path (and reads a `#` as part of the
    /// path): `host` as `webhookutil.LoadKubeconfig` printed it.
    #[test]
    fn server_url_cleaned_up_as_clientcmd_does() {
        let cases: &[(&str, &str)] = &[
            ("https://h/authn?key=abc", "https://h/authn"),
            ("https://h/authn#frag", "https://h/authn%23frag"),
            ("https://h/?key=abc", "https://h/?key=abc"),
            ("https://h?key=abc", "https://h?key=abc"),
            ("https://h/a//b/", "https://h/a//b/"),
        ];
        for (server, want) in cases {
            let k = Kubeconfig::parse(
                format!("clusters: [{{cluster: {{server: '{server}'}}}}]").as_bytes(),
            )
            .unwrap();
            assert_eq!(k.connection_info(None).unwrap().server, *want, "{server}");
        }
    }

    /// A kubeconfig loaded by a relative path: the files it names are taken from its directory
    /// made absolute and cleaned, as clientcmd's `ResolveLocalPaths` (`filepath.Abs`,
    /// `filepath.Join`) takes them, and named so in the errors.
    #[test]
    fn relative_paths_are_resolved_as_clientcmd_does() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = tmp.path().join("kubeconfig");
        std::fs::write(
            &cfg,
            "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: ./sub/../ca.pem}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
        )
        .unwrap();
        let cwd = std::env::current_dir().unwrap();
        let depth = cwd
            .components()
            .filter(|c| matches!(c, std::path::Component::Normal(_)))
            .count();
        let relative = PathBuf::from("../".repeat(depth)).join(cfg.strip_prefix("/").unwrap());
        let ca = tmp.path().join("ca.pem");
        let e = Kubeconfig::load(&relative).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: invalid configuration: unable to read certificate-authority {ca} for c due to open {ca}: no such file or directory",
                relative.display(),
                ca = ca.display()
            )
        );
        std::fs::write(&ca, "").unwrap();
        let info = Kubeconfig::load(&relative).unwrap();
        assert_eq!(info.certificate_authority, Some(Pem::File(ca)));
    }

    /// Where Go's YAML decoder prints a value of the file (a `~` key's value, a map or list used
    /// as a key), the kubeconfig's error has Go's text up to the value and `…` for it; a tag on
    /// the wrong kind (serde_yaml_ng's text here, `yaml: cannot decode !!str `…` as a !!int` in
    /// Go) is masked too. Through `load`, clientcmd's prefix comes first.
    #[test]
    fn decoder_texts_name_no_value() {
        const NULL_KEY: &str = "unsupported map key of type: %!s(<nil>), key: <nil>, value: …";
        const MAP_KEY: &str = "yaml: invalid map key: …";
        let cases: &[(&str, &str)] = &[
            ("users: [{name: u, user: {token: t, ~: s3cr3t}}]", NULL_KEY),
            (
                "users: [{name: u, user: {token: t, ~: [s3cr3t]}}]",
                NULL_KEY,
            ),
            (
                "users: [{name: u, user: {token: t, ~: {a: s3cr3t}}}]",
                NULL_KEY,
            ),
            (
                "users: [{name: u, user: {token: t, null: 123456}}]",
                NULL_KEY,
            ),
            ("users: [{name: u, user: {~: s3cr3t, ~: x}}]", NULL_KEY),
            (
                "users: [{name: u, user: {token: t, {password: s3cr3t}: 1}}]",
                MAP_KEY,
            ),
            ("users: [{name: u, user: {token: t, [s3cr3t]: 1}}]", MAP_KEY),
            (
                "users: [{name: u, user: {? {password: s3cr3t} : 1, ~: s3cr3t}}]",
                MAP_KEY,
            ),
            (
                "users: [{name: u, user: {token: !!int s3cr3t}}]",
                "kubeconfig: users[0].user.token: invalid value: string \"…\", expected an integer at line 1 column 33",
            ),
            (
                "users: [{name: u, user: {token: !!bool s3cr3t}}]",
                "kubeconfig: users[0].user.token: invalid value: string \"…\", expected a boolean at line 1 column 33",
            ),
            (
                "users: [{name: u, user: {token: !!float s3cr3t}}]",
                "kubeconfig: users[0].user.token: invalid value: string \"…\", expected a float at line 1 column 33",
            ),
            (
                "users: [{name: u, user: {token: !!null s3cr3t}}]",
                "kubeconfig: users[0].user.token: invalid value: string \"…\", expected null at line 1 column 33",
            ),
            // Texts that name no value pass as they are.
            (
                "users: [{name: u, user: {token: .nan}}]",
                "json: unsupported value: NaN",
            ),
            (
                "users: [{name: u, user: {token: \"s3cr3t\\q\"}}]",
                "yaml: found unknown escape character",
            ),
        ];
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("kubeconfig");
        for (yaml, want) in cases {
            let e = Kubeconfig::parse(yaml.as_bytes()).unwrap_err().to_string();
            assert!(
                !e.contains("s3cr3t") && !e.contains("123456"),
                "{yaml}: {e}"
            );
            assert_eq!(e, *want, "{yaml}");
            std::fs::write(&path, yaml).unwrap();
            let e = Kubeconfig::load(&path).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("error loading config file \"{}\": {want}", path.display()),
                "{yaml}"
            );
        }
    }

    /// clientcmd's loader wraps a failure to read or decode the file as `error loading config
    /// file "<path>": <text>` (Go's `"%s"`: the path as it is); the checks made after it
    /// (ConfirmUsable's) are prefixed with the path. Each text from webhookutil.LoadKubeconfig
    /// (k8s.io/apiserver v0.37.2) for the same file.
    #[test]
    fn load_errors_are_wrapped_as_clientcmd_wraps_them() {
        let tmp = tempfile::tempdir().unwrap();
        let quoted = tmp.path().join("a\"b");
        std::fs::create_dir(&quoted).unwrap();
        let cases: &[(&str, &str, &str)] = &[
            (
                "kubeconfig",
                "users: [{name: u, user: {token: 123}}]",
                "error loading config file \"{path}\": json: cannot unmarshal number into Go struct field AuthInfo.users.user.token of type string",
            ),
            (
                "a\"b/k",
                "users: [{name: u, user: {token: 123}}]",
                "error loading config file \"{path}\": json: cannot unmarshal number into Go struct field AuthInfo.users.user.token of type string",
            ),
            (
                "bad",
                "clusters: [",
                "error loading config file \"{path}\": yaml: line 1: did not find expected node content",
            ),
            (
                "v2",
                "apiVersion: v2\n",
                "error loading config file \"{path}\": no kind \"Config\" is registered for version \"v2\" in scheme \"pkg/runtime/scheme.go:111\"",
            ),
            (
                "dir",
                "",
                "error loading config file \"{path}\": read {path}: is a directory",
            ),
            (
                "no-server",
                "clusters: [{cluster: {}}]",
                "{path}: invalid configuration: default cluster has no server defined",
            ),
        ];
        for (name, yaml, want) in cases {
            let path = tmp.path().join(name);
            if *name == "dir" {
                std::fs::create_dir(&path).unwrap();
            } else {
                std::fs::write(&path, yaml).unwrap();
            }
            let e = Kubeconfig::load(&path).unwrap_err().to_string();
            assert_eq!(
                e,
                want.replace("{path}", &path.display().to_string()),
                "{name}"
            );
        }
    }

    /// A value in the wrong place is not quoted by the YAML error, whatever its type (serde
    /// writes strings in double quotes, numbers and booleans in backticks); field names stay.
    #[test]
    fn yaml_errors_quote_no_values() {
        let cases: &[(&str, &str)] = &[
            (
                "users: [{name: u, user: 123456}]",
                "json: cannot unmarshal number into Go struct field NamedAuthInfo.users.user of type v1.AuthInfo",
            ),
            (
                "users: [{name: u, user: -123456}]",
                "json: cannot unmarshal number into Go struct field NamedAuthInfo.users.user of type v1.AuthInfo",
            ),
            (
                "users: [{name: u, user: 1234.5}]",
                "json: cannot unmarshal number into Go struct field NamedAuthInfo.users.user of type v1.AuthInfo",
            ),
            (
                "users: [{name: u, user: true}]",
                "json: cannot unmarshal bool into Go struct field NamedAuthInfo.users.user of type v1.AuthInfo",
            ),
            (
                "users: [{name: u, user: \"123456\"}]",
                "json: cannot unmarshal string into Go struct field NamedAuthInfo.users.user of type v1.AuthInfo",
            ),
            (
                "users: [{name: u, user: {token: [123456]}}]",
                "json: cannot unmarshal array into Go struct field AuthInfo.users.user.token of type string",
            ),
            (
                "clusters: [{cluster: {insecure-skip-tls-verify: 123456}}]",
                "json: cannot unmarshal number into Go struct field Cluster.clusters.cluster.insecure-skip-tls-verify of type bool",
            ),
            // The last value counts (a number here).
            (
                "users: [{user: {token: a, token: 123456}}]",
                "json: cannot unmarshal number into Go struct field AuthInfo.users.user.token of type string",
            ),
        ];
        for (yaml, want) in cases {
            let e = Kubeconfig::parse(yaml.as_bytes()).unwrap_err().to_string();
            assert!(
                !e.contains("123456") && !e.contains("1234.5"),
                "{yaml}: {e}"
            );
            assert_eq!(e, *want, "{yaml}");
        }
        // Masking alone, on texts serde writes.
        for (text, want) in [
            (
                "invalid type: integer `123456`, expected struct User",
                "invalid type: integer `…`, expected struct User",
            ),
            (
                "invalid type: string \"a\\\"b`c\", expected x",
                "invalid type: string \"…\", expected x",
            ),
            ("duplicate field `token`", "duplicate field `token`"),
            ("missing field `server`", "missing field `server`"),
            (
                "unknown variant `s3cr3t`, expected `a` or `b`",
                "unknown variant `…`, expected `…` or `…`",
            ),
            (
                "invalid value: character `\"`",
                "invalid value: character `…`",
            ),
        ] {
            assert_eq!(without_quoted_values(text), want, "{text}");
        }
    }

    /// The file is read as client-go reads it (`sigs.k8s.io/yaml`: go-yaml v2, YAML 1.1):
    /// merge keys apply (a CA, a server name or a token merged in is kept, not dropped in
    /// favour of the system roots or no credentials), `yes`/`on`/`n` are booleans, a repeated
    /// key keeps its last value. Every expectation is what Go's `clientcmd.Load` gave for the
    /// same file (client-go v0.37.2).
    #[test]
    fn yaml_is_read_as_client_go_reads_it() {
        struct Want {
            server: &'static str,
            ca_data: Option<&'static str>,
            tls_server_name: Option<&'static str>,
            insecure: bool,
            proxy_url: Option<&'static str>,
            token: Option<&'static str>,
        }
        const BASE: Want = Want {
            server: "https://x",
            ca_data: None,
            tls_server_name: None,
            insecure: false,
            proxy_url: None,
            token: None,
        };
        let ctx = "\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x";
        let cases: &[(&str, &str, Want)] = &[
            (
                "a CA and server name merged from an anchor, a token from a flow map",
                "ca: &ca {certificate-authority-data: aGVsbG8=, tls-server-name: pinned}\nclusters: [{name: c, cluster: {<<: *ca, server: 'https://x'}}]\nusers: [{name: u, user: {<<: {token: s3cr3t}}}]",
                Want {
                    ca_data: Some("aGVsbG8="),
                    tls_server_name: Some("pinned"),
                    token: Some("s3cr3t"),
                    ..BASE
                },
            ),
            (
                "a merge after a key overrides it (go-yaml v2), and brings a proxy",
                "clusters: [{name: c, cluster: {server: 'https://y', <<: {server: 'https://x', proxy-url: 'http://p:1'}}}]",
                Want {
                    proxy_url: Some("http://p:1"),
                    ..BASE
                },
            ),
            (
                "a merge of a list of maps, the first winning",
                "clusters: [{name: c, cluster: {<<: [{server: 'https://x'}, {server: 'https://z', insecure-skip-tls-verify: true}]}}]",
                Want {
                    insecure: true,
                    ..BASE
                },
            ),
            (
                "yes is true",
                "clusters: [{name: c, cluster: {server: 'https://x', insecure-skip-tls-verify: yes}}]",
                Want {
                    insecure: true,
                    ..BASE
                },
            ),
            (
                "on is true",
                "clusters: [{name: c, cluster: {server: 'https://x', insecure-skip-tls-verify: on}}]",
                Want {
                    insecure: true,
                    ..BASE
                },
            ),
            (
                "n is false",
                "clusters: [{name: c, cluster: {server: 'https://x', insecure-skip-tls-verify: n}}]",
                BASE,
            ),
            (
                "a repeated key keeps its last value",
                "clusters: [{name: c, cluster: {server: 'https://y', server: 'https://x'}}]\nusers: [{name: u, user: {token: a, token: b}}]",
                Want {
                    token: Some("b"),
                    ..BASE
                },
            ),
        ];
        for (name, yaml, want) in cases {
            let k = Kubeconfig::parse(format!("{yaml}{ctx}").as_bytes())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let c = &k.clusters[0].cluster;
            assert_eq!(c.server, want.server, "{name}");
            assert_eq!(
                c.certificate_authority_data.as_deref(),
                want.ca_data,
                "{name}"
            );
            assert_eq!(c.tls_server_name.as_deref(), want.tls_server_name, "{name}");
            assert_eq!(c.insecure_skip_tls_verify, want.insecure, "{name}");
            assert_eq!(c.proxy_url.as_deref(), want.proxy_url, "{name}");
            let token = k.users.first().and_then(|u| u.user.token.as_deref());
            assert_eq!(token, want.token, "{name}");
        }
        // The merged CA is the one the connection trusts.
        let k = Kubeconfig::parse(format!("ca: &ca {{certificate-authority-data: aGVsbG8=}}\nclusters: [{{name: c, cluster: {{<<: *ca, server: 'https://x'}}}}]{ctx}").as_bytes()).unwrap();
        let info = k.connection_info(None).unwrap();
        assert!(info.certificate_authority.is_some());
    }

    /// Values of the wrong JSON type are refused with encoding/json's texts (Go's, from
    /// `clientcmd.Load`), which name no value.
    #[test]
    fn type_errors_as_client_go_reports_them() {
        let cases: &[(&str, &str)] = &[
            (
                "clusters: [{name: c, cluster: {server: 'https://x', insecure-skip-tls-verify: 'yes'}}]",
                "json: cannot unmarshal string into Go struct field Cluster.clusters.cluster.insecure-skip-tls-verify of type bool",
            ),
            (
                "users: [{name: u, user: {token: 123}}]",
                "json: cannot unmarshal number into Go struct field AuthInfo.users.user.token of type string",
            ),
            (
                "clusters: [{name: c, cluster: {server: 'https://x', <<: 5}}]",
                "yaml: map merge requires map or sequence of maps as the value",
            ),
            (
                "current-context: yes",
                "json: cannot unmarshal bool into Go struct field Config.current-context of type string",
            ),
            (
                "clusters: 5",
                "json: cannot unmarshal number into Go struct field Config.clusters of type []v1.NamedCluster",
            ),
            (
                "clusters: [5]",
                "json: cannot unmarshal number into Go struct field Config.clusters of type v1.NamedCluster",
            ),
            (
                "users: [{user: {client-key-data: 5}}]",
                "json: cannot unmarshal number into Go struct field AuthInfo.users.user.client-key-data of type []uint8",
            ),
            (
                "preferences: 5",
                "json: cannot unmarshal number into Go struct field Config.preferences of type v1.Preferences",
            ),
            (
                "users: [{user: {as-groups: [1]}}]",
                "json: cannot unmarshal number into Go struct field AuthInfo.users.user.as-groups of type string",
            ),
            (
                "users: [{user: {as-user-extra: {a: 1}}}]",
                "json: cannot unmarshal number into Go struct field AuthInfo.users.user.as-user-extra of type []string",
            ),
            (
                "users: [{user: {exec: 1}}]",
                "json: cannot unmarshal number into Go struct field AuthInfo.users.user.exec of type v1.ExecConfig",
            ),
            (
                "contexts: [{context: {namespace: 1}}]",
                "json: cannot unmarshal number into Go struct field Context.contexts.context.namespace of type string",
            ),
            (
                "clusters: [{name: 1}]",
                "json: cannot unmarshal number into Go struct field NamedCluster.clusters.name of type string",
            ),
            (
                "extensions: [1]",
                "json: cannot unmarshal number into Go struct field Config.extensions of type v1.NamedExtension",
            ),
            // The first in the sorted order encoding/json reads the converted YAML in.
            (
                "clusters: [{cluster: {server: 1, insecure-skip-tls-verify: 2}}]",
                "json: cannot unmarshal number into Go struct field Cluster.clusters.cluster.insecure-skip-tls-verify of type bool",
            ),
            (
                "contexts: 1",
                "json: cannot unmarshal number into Go struct field Config.contexts of type []v1.NamedContext",
            ),
        ];
        for (yaml, want) in cases {
            let e = Kubeconfig::parse(yaml.as_bytes()).unwrap_err().to_string();
            assert_eq!(e, *want, "{yaml}");
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
        assert!(
            e.to_string()
                .starts_with("json: cannot unmarshal string into"),
            "{e}"
        );
        let e = Kubeconfig::parse(b"users: [{name: u, user: 'ab\"tok-SECRET'}]").unwrap_err();
        assert!(!e.to_string().contains("SECRET"), "{e}");
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
