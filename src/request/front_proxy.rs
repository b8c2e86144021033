//! The authenticating front proxy (k8s `headerrequest` behind `x509.NewDynamicCAVerifier`):
//! a client certificate signed by the request-header CA, with an allowed CN, vouches for the
//! identity in `X-Remote-User`, `X-Remote-Uid`, `X-Remote-Group` and `X-Remote-Extra-*`.

use std::path::PathBuf;
use std::sync::Arc;

use http::request::Parts;
use http::{HeaderMap, HeaderName};

use crate::authenticator::{
    AuthFuture, AuthResult, Context, Description, RequestAuthenticator, Response,
};
use crate::error::{ConfigError, Error, ErrorKind};
use crate::tls::{CacheEntry, PeerCertificates};
use crate::user::UserInfo;
use crate::x509::{self, CaBundle, CaSource, Clock, KeyUsage, Moment};

/// The most group values (all group headers together) accepted from a proxy; more is an error.
/// Over HTTP/1.1 the server's header-line bound applies first: `tls::TlsServer` allows
/// `tls::HTTP1_MAX_HEADERS` lines (`MAX_GROUPS` + 128, so one `X-Remote-Group` line per group
/// fits; see `TlsServer::http1_max_headers`), while `axum::serve` (with `tls::axum::TlsListener`)
/// keeps hyper's default of 100 lines; HTTP/2 bounds the header list's bytes, not its lines.
///
/// ```
/// use kube_authn::request::{FrontProxy, MAX_GROUPS, RequestHeaderConfig};
/// use kube_authn::tls::PeerCertificates;
/// assert_eq!(MAX_GROUPS, 4096);
/// # let config = RequestHeaderConfig { client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()), ..RequestHeaderConfig::standard() };
/// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
/// let proxy = FrontProxy::new(config).unwrap();
/// // A request from the proxy (its client certificate is `chain`) with these headers.
/// let from_proxy = |headers: &http::HeaderMap| {
///     let mut req = http::Request::get("/").body(()).unwrap();
///     *req.headers_mut() = headers.clone();
///     req.extensions_mut().insert(PeerCertificates::from_handshake(chain.clone()));
///     req.into_parts().0
/// };
/// let mut headers = http::HeaderMap::new();
/// headers.insert("x-remote-user", "bob".parse().unwrap());
/// for i in 0..MAX_GROUPS {
///     headers.append("x-remote-group", format!("g{i}").parse().unwrap());
/// }
/// let resp = proxy.authenticate_parts(&from_proxy(&headers)).unwrap().unwrap();
/// assert_eq!(resp.user.groups().len(), 4096);
/// headers.append("x-remote-group", "one-more".parse().unwrap());
/// let err = proxy.authenticate_parts(&from_proxy(&headers)).unwrap_err();
/// assert_eq!(err.to_string(), "request header: too many group values");
/// ```
pub const MAX_GROUPS: usize = 4096;
/// The most extra values (all extra headers together) accepted from a proxy.
///
/// ```
/// use kube_authn::request::{FrontProxy, MAX_EXTRA_VALUES, RequestHeaderConfig};
/// use kube_authn::tls::PeerCertificates;
/// assert_eq!(MAX_EXTRA_VALUES, 4096);
/// # let config = RequestHeaderConfig { client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()), ..RequestHeaderConfig::standard() };
/// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
/// let proxy = FrontProxy::new(config).unwrap();
/// let from_proxy = |headers: &http::HeaderMap| {
///     let mut req = http::Request::get("/").body(()).unwrap();
///     *req.headers_mut() = headers.clone();
///     req.extensions_mut().insert(PeerCertificates::from_handshake(chain.clone()));
///     req.into_parts().0
/// };
/// let mut headers = http::HeaderMap::new();
/// headers.insert("x-remote-user", "bob".parse().unwrap());
/// for i in 0..MAX_EXTRA_VALUES {
///     headers.append("x-remote-extra-scopes", format!("s{i}").parse().unwrap());
/// }
/// let resp = proxy.authenticate_parts(&from_proxy(&headers)).unwrap().unwrap();
/// assert_eq!(resp.user.extra()["scopes"].len(), 4096);
/// headers.append("x-remote-extra-scopes", "one-more".parse().unwrap());
/// let err = proxy.authenticate_parts(&from_proxy(&headers)).unwrap_err();
/// assert_eq!(err.to_string(), "request header: too many extra values");
/// ```
pub const MAX_EXTRA_VALUES: usize = 4096;

/// kube-apiserver's `--requestheader-*` flags (and the keys of the
/// `kube-system/extension-apiserver-authentication` ConfigMap).
///
/// ```
/// use kube_authn::request::RequestHeaderConfig;
/// let config = RequestHeaderConfig {
///     client_ca_file: Some("/etc/kubernetes/pki/front-proxy-ca.crt".into()),
///     allowed_names: vec!["front-proxy-client".into()],
///     ..RequestHeaderConfig::standard()
/// };
/// assert_eq!(config.username_headers, ["X-Remote-User"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestHeaderConfig {
    /// `--requestheader-client-ca-file`: the CA that signs the proxy's client certificate.
    pub client_ca_file: Option<PathBuf>,
    /// The same CA as PEM content (from the ConfigMap); used when `client_ca_file` is `None`.
    pub client_ca_pem: Option<Vec<u8>>,
    /// `--requestheader-allowed-names`: CNs the proxy certificate may have; empty = any.
    pub allowed_names: Vec<String>,
    /// `--requestheader-username-headers`.
    pub username_headers: Vec<String>,
    /// `--requestheader-uid-headers`.
    pub uid_headers: Vec<String>,
    /// `--requestheader-group-headers`.
    pub group_headers: Vec<String>,
    /// `--requestheader-extra-headers-prefix`.
    pub extra_headers_prefix: Vec<String>,
}

impl RequestHeaderConfig {
    /// The header names kube-apiserver's aggregation setups use: `X-Remote-User`,
    /// `X-Remote-Uid`, `X-Remote-Group`, `X-Remote-Extra-`; no CA.
    ///
    /// ```
    /// let c = kube_authn::request::RequestHeaderConfig::standard();
    /// assert_eq!(c.extra_headers_prefix, ["X-Remote-Extra-"]);
    /// ```
    pub fn standard() -> Self {
        Self {
            username_headers: vec!["X-Remote-User".into()],
            uid_headers: vec!["X-Remote-Uid".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_headers_prefix: vec!["X-Remote-Extra-".into()],
            ..Self::default()
        }
    }

    /// kube-apiserver's flag validation (`RequestHeaderAuthenticationOptions.Validate`, UID rule
    /// included); warnings for missing standard names are logged. Every error is reported, in
    /// kube-apiserver's order, several as its aggregate `[a, b]`.
    ///
    /// ```
    /// use kube_authn::request::RequestHeaderConfig;
    /// let mut c = RequestHeaderConfig::standard();
    /// c.group_headers.push("  ".into());
    /// assert_eq!(c.validate().unwrap_err().to_string(), "empty value in \"requestheader-group-headers\"");
    /// c.allowed_names = vec!["front-proxy-client".into(), "".into()];
    /// assert_eq!(
    ///     c.validate().unwrap_err().to_string(),
    ///     "[empty value in \"requestheader-group-headers\", empty value in \"requestheader-allowed-names\"]"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        let errors = self.validation_errors();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(crate::token::oidc::config::aggregate(errors))
        }
    }

    /// The errors of [`RequestHeaderConfig::validate`], one text each, in kube-apiserver's
    /// order (its `Validate() []error`, which kube-apiserver appends to the other options'
    /// errors before aggregating them all).
    pub(crate) fn validation_errors(&self) -> Vec<String> {
        let mut errors: Vec<String> = Vec::new();
        let blank = [
            ("requestheader-username-headers", &self.username_headers),
            ("requestheader-group-headers", &self.group_headers),
            (
                "requestheader-extra-headers-prefix",
                &self.extra_headers_prefix,
            ),
            ("requestheader-allowed-names", &self.allowed_names),
        ];
        for (flag, list) in blank {
            if list.iter().any(|v| v.trim().is_empty()) {
                errors.push(format!("empty value in {flag:?}"));
            }
        }
        let standards: [(&str, &[String], &str, &str); 3] = [
            (
                "requestheader-username-headers",
                &self.username_headers,
                "X-Remote-User",
                "header",
            ),
            (
                "requestheader-group-headers",
                &self.group_headers,
                "X-Remote-Group",
                "header",
            ),
            (
                "requestheader-extra-headers-prefix",
                &self.extra_headers_prefix,
                "X-Remote-Extra-",
                "header prefix",
            ),
        ];
        for (flag, list, standard, what) in standards {
            if !list.is_empty() && !list.iter().any(|h| h.eq_ignore_ascii_case(standard)) {
                tracing::warn!(
                    "--{flag} is set without specifying the standard {standard} {what} - API aggregation will not work"
                );
            }
        }
        if self.uid_headers.iter().any(|v| v.trim().is_empty()) {
            errors.push("empty value in \"requestheader-uid-headers\"".to_owned());
        }
        if !self.uid_headers.is_empty()
            && !self
                .uid_headers
                .iter()
                .any(|h| h.eq_ignore_ascii_case("X-Remote-Uid"))
        {
            errors.push(
                "--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work".to_owned(),
            );
        }
        errors
    }

    /// Refuses a front-proxy CA that shares a CA with the client CA while `allowed_names` is
    /// empty (kube-apiserver's check): otherwise every ordinary client certificate could set
    /// identity headers for any user. Shared means the same certificate or, beyond
    /// kube-apiserver's byte comparison, one with the same subject and public key (a renewed
    /// copy: see [`CaBundle::overlaps`]).
    ///
    /// ```
    /// use kube_authn::request::RequestHeaderConfig;
    /// use kube_authn::x509::{doc_ca_pem, CaBundle};
    /// let ca = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// let err = RequestHeaderConfig::standard().check_ca_overlap(&ca, &ca).unwrap_err();
    /// assert!(err.to_string().starts_with("--requestheader-client-ca-file and --client-ca-file contain overlapping certificates"));
    /// ```
    pub fn check_ca_overlap(
        &self,
        client_ca: &CaBundle,
        request_header_ca: &CaBundle,
    ) -> Result<(), ConfigError> {
        if self.allowed_names.is_empty() && client_ca.overlaps(request_header_ca) {
            return Err(ConfigError::new(CA_OVERLAP));
        }
        Ok(())
    }
}

/// kube-apiserver's error for a client CA and request-header CA that overlap while
/// `--requestheader-allowed-names` is empty.
pub(crate) const CA_OVERLAP: &str = "--requestheader-client-ca-file and --client-ca-file contain overlapping certificates; --requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users";

/// Parses configured header names: trimmed, non-empty (`empty header "<original>"`), valid
/// HTTP header names, lower-cased.
fn header_names(list: &[String]) -> Result<Box<[HeaderName]>, ConfigError> {
    list.iter()
        .map(|raw| {
            let name = raw.trim();
            if name.is_empty() {
                return Err(ConfigError::new(format!("empty header {raw:?}")));
            }
            HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
                .map_err(|_| ConfigError::new(format!("invalid header name {raw:?}")))
        })
        .collect()
}

/// Parses configured header prefixes: trimmed, non-empty (`empty header "<original>"`),
/// lower-cased.
fn header_prefixes(list: &[String]) -> Result<Box<[String]>, ConfigError> {
    list.iter()
        .map(|raw| {
            let prefix = raw.trim();
            if prefix.is_empty() {
                Err(ConfigError::new(format!("empty header {raw:?}")))
            } else {
                Ok(prefix.to_ascii_lowercase())
            }
        })
        .collect()
}

/// Why [`FrontProxy::build`] failed: the request-header CA, or one flag's header list (so the
/// flag path can name the right flag).
#[derive(Debug)]
pub(crate) enum BuildError {
    /// Loading the CA (file or PEM), or no CA at all.
    Ca(ConfigError),
    /// A header name or prefix of the flag named (without its `--`).
    Header {
        flag: &'static str,
        error: ConfigError,
    },
}

impl From<BuildError> for ConfigError {
    fn from(e: BuildError) -> Self {
        match e {
            BuildError::Ca(error) | BuildError::Header { error, .. } => error,
        }
    }
}

/// Authenticates requests from an authenticating front proxy (kube-apiserver's aggregator,
/// or any proxy with a request-header client certificate). See the [`request` module docs](crate::request).
///
/// ```
/// use kube_authn::request::{FrontProxy, RequestHeaderConfig};
/// # let dir = tempfile::tempdir().unwrap();
/// # let ca_file = dir.path().join("ca.pem");
/// # std::fs::write(&ca_file, kube_authn::x509::doc_ca_pem()).unwrap();
/// let proxy = FrontProxy::new(RequestHeaderConfig {
///     client_ca_file: Some(ca_file),
///     allowed_names: vec!["doc-admin".into()],
///     ..RequestHeaderConfig::standard()
/// })
/// .unwrap();
///
/// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
/// let mut req = http::Request::get("/apis").header("X-Remote-User", "jane")
///     .header("X-Remote-Group", "dev, ops").header("X-Remote-Extra-Acme.com%2Fteam", "a")
///     .body(()).unwrap();
/// req.extensions_mut().insert(kube_authn::tls::PeerCertificates::from_handshake(chain));
/// let (parts, _) = req.into_parts();
/// let resp = proxy.authenticate_parts(&parts).unwrap().unwrap();
/// assert_eq!(resp.user.name(), "jane");
/// assert_eq!(resp.user.groups().collect::<Vec<_>>(), ["dev, ops"]); // never split
/// assert_eq!(resp.user.extra()["acme.com/team"], ["a"]);
/// ```
#[derive(Clone)]
pub struct FrontProxy {
    id: u64,
    ca: CaSource,
    allowed_names: Arc<[String]>,
    username: Box<[HeaderName]>,
    uid: Box<[HeaderName]>,
    group: Box<[HeaderName]>,
    extra_prefixes: Box<[String]>,
    clock: Option<Clock>,
}

impl std::fmt::Debug for FrontProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontProxy")
            .field("allowed_names", &self.allowed_names)
            .field("username_headers", &self.username)
            .field("uid_headers", &self.uid)
            .field("group_headers", &self.group)
            .field("extra_headers_prefix", &self.extra_prefixes)
            .finish_non_exhaustive()
    }
}

impl FrontProxy {
    /// Builds the authenticator (k8s `headerrequest.New` + `NewDynamicCAVerifier`): the CA is
    /// loaded (a file is reloaded when it changes; see [`FrontProxy::spawn_watch`]), then the
    /// header names and prefixes are read as `New` reads them: **surrounding white space is
    /// trimmed** (`" X-Proxy-User"` is the header `X-Proxy-User`), a name that is empty once
    /// trimmed is `empty header "<name>"`, and a name that is not an HTTP header name is
    /// `invalid header name "<name>"` (Go would keep it and never match it). Matching is
    /// case-insensitive.
    ///
    /// kube-apiserver's flags and a delegating server's ConfigMap reach Go's `NewDynamic`,
    /// which does **not** trim, so there a name with surrounding white space never matches.
    /// [`AuthenticationOptions::build`](crate::config::AuthenticationOptions::build) (the
    /// flag path) therefore refuses such names before calling this. Flag-level rules
    /// (standard names, the UID header rule) are [`RequestHeaderConfig::validate`], which
    /// kube-apiserver applies to flags only; call it for flag input.
    ///
    /// ```
    /// use kube_authn::request::{FrontProxy, RequestHeaderConfig};
    /// let err = FrontProxy::new(RequestHeaderConfig::standard()).unwrap_err();
    /// assert_eq!(err.to_string(), "--requestheader-client-ca-file is required");
    ///
    /// let ca = Some(kube_authn::x509::doc_ca_pem().into());
    /// let trimmed = FrontProxy::new(RequestHeaderConfig {
    ///     client_ca_pem: ca.clone(),
    ///     username_headers: vec![" X-Proxy-User ".into()],
    ///     ..RequestHeaderConfig::default()
    /// })
    /// .unwrap();
    /// assert!(format!("{trimmed:?}").contains(r#"username_headers: ["x-proxy-user"]"#));
    /// let err = FrontProxy::new(RequestHeaderConfig {
    ///     client_ca_pem: ca,
    ///     group_headers: vec!["X Group".into()],
    ///     ..RequestHeaderConfig::default()
    /// })
    /// .unwrap_err();
    /// assert_eq!(err.to_string(), r#"invalid header name "X Group""#);
    /// ```
    pub fn new(config: RequestHeaderConfig) -> Result<Self, ConfigError> {
        Ok(Self::build(&config, None)?)
    }

    /// [`FrontProxy::new`], telling a CA error from a header-name error; `guard`, if given,
    /// checks every reload of the CA file.
    pub(crate) fn build(
        config: &RequestHeaderConfig,
        guard: Option<Arc<x509::OverlapGuard>>,
    ) -> Result<Self, BuildError> {
        let ca = match (&config.client_ca_file, &config.client_ca_pem) {
            (Some(path), _) => CaSource::File(
                CaSource::load_file(
                    "request-header",
                    path,
                    guard.map(|g| (g, x509::CaRole::RequestHeader)),
                )
                .map_err(BuildError::Ca)?,
            ),
            (None, Some(pem)) => {
                CaSource::Static(Arc::new(CaBundle::from_pem(pem).map_err(|e| {
                    BuildError::Ca(ConfigError::new(format!(
                        "error loading CA bundle for \"request-header\": {e}"
                    )))
                })?))
            }
            (None, None) => {
                return Err(BuildError::Ca(ConfigError::new(
                    "--requestheader-client-ca-file is required",
                )));
            }
        };
        let header = |flag: &'static str| move |error| BuildError::Header { flag, error };
        Ok(Self {
            id: x509::next_id(),
            ca,
            allowed_names: config.allowed_names.clone().into(),
            username: header_names(&config.username_headers)
                .map_err(header("requestheader-username-headers"))?,
            uid: header_names(&config.uid_headers).map_err(header("requestheader-uid-headers"))?,
            group: header_names(&config.group_headers)
                .map_err(header("requestheader-group-headers"))?,
            extra_prefixes: header_prefixes(&config.extra_headers_prefix)
                .map_err(header("requestheader-extra-headers-prefix"))?,
            clock: None,
        })
    }

    /// Uses `clock` instead of the system time (tests) to check the proxy's certificate.
    ///
    /// ```
    /// # use kube_authn::request::*;
    /// # let c = RequestHeaderConfig { client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()), ..RequestHeaderConfig::standard() };
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// let far_future = std::time::UNIX_EPOCH + std::time::Duration::from_secs(8_000_000_000);
    /// let p = FrontProxy::new(c).unwrap().with_clock(std::sync::Arc::new(move || far_future));
    /// let mut req = http::Request::get("/").header("X-Remote-User", "jane").body(()).unwrap();
    /// req.extensions_mut().insert(kube_authn::tls::PeerCertificates::from_handshake(chain));
    /// // The proxy's certificate (valid until 2126) has expired by then: an error, not "jane".
    /// let err = p.authenticate_parts(&req.into_parts().0).unwrap_err().to_string();
    /// assert!(
    ///     err.ends_with("x509: certificate has expired or is not yet valid: current time 2223-07-06T14:13:20Z is after 2126-10-29T08:37:42Z"),
    ///     "{err}"
    /// );
    /// ```
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        // A new owner for the per-connection cache: a clone with another clock must not reuse
        // this one's results.
        self.id = x509::next_id();
        self
    }

    /// Polls the CA file every `interval` (`None` when the CA is not a file).
    ///
    /// ```
    /// # use kube_authn::request::*;
    /// # let c = RequestHeaderConfig { client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()), ..RequestHeaderConfig::standard() };
    /// assert!(FrontProxy::new(c).unwrap().spawn_watch(std::time::Duration::from_secs(1)).is_none());
    /// ```
    #[must_use = "dropping the WatchTask stops reloading"]
    pub fn spawn_watch(&self, interval: std::time::Duration) -> Option<crate::reload::WatchTask> {
        match &self.ca {
            CaSource::File(r) => Some(r.spawn_watch(interval)),
            CaSource::Static(_) => None,
        }
    }

    /// Where the request-header CA bundle comes from.
    pub(crate) fn ca_source(&self) -> &CaSource {
        &self.ca
    }

    /// The current request-header CA bundle.
    ///
    /// ```
    /// # use kube_authn::request::*;
    /// # let c = RequestHeaderConfig { client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()), ..RequestHeaderConfig::standard() };
    /// assert_eq!(FrontProxy::new(c).unwrap().bundle().certificates().len(), 1);
    /// ```
    pub fn bundle(&self) -> Arc<CaBundle> {
        match &self.ca {
            CaSource::Static(b) => b.clone(),
            CaSource::File(r) => r.current_arc(),
        }
    }

    /// The current request-header CA bundle's generation, without taking a reference to it
    /// (read on every TLS handshake for the client-certificate request's CA hints).
    pub(crate) fn ca_generation(&self) -> u64 {
        self.ca.generation()
    }

    /// Verifies the proxy certificate (cached per connection) and checks its CN.
    /// `Ok(true)`: a trusted proxy; `Ok(false)`: no certificate.
    fn verify_proxy(&self, peer: Option<&PeerCertificates>) -> Result<bool, Error> {
        let Some(peer) = peer.filter(|p| !p.is_empty()) else {
            return Ok(false);
        };
        let now = Moment::now(&self.clock);
        self.ca.with(|bundle| {
            let generation = bundle.generation();
            if let Some(r) = peer
                .cache()
                .get(self.id, generation, now, |e| e.outcome.clone())
            {
                return r.map(|_| true);
            }
            let (outcome, from, until): (AuthResult, i64, Moment) =
                match x509::verify::verify_chain(bundle, peer.chain(), now, KeyUsage::ClientAuth) {
                    Ok(w) => match self.check_cn(&peer.chain()[0]) {
                        Ok(()) => (Ok(None), w.not_before, Moment::at(w.not_after)),
                        Err(e) => (Err(e), w.not_before, Moment::at(w.not_after)),
                    },
                    // A failure is kept for the rest of the current second only.
                    Err(e) => (Err(e), now.secs, now.end_of_second()),
                };
            peer.cache().put(CacheEntry {
                owner: self.id,
                generation,
                valid_from: from,
                valid_until: until,
                leaf_not_after: None,
                outcome: outcome.clone(),
            });
            outcome.map(|_| true)
        })
    }

    /// k8s `Verifier.verifySubject`: only the subject's CN (the last one) is compared with
    /// the allowed names; the subject's other attributes are not looked at (a proxy
    /// certificate with `O=a<TAB>b` or more than `MAX_SUBJECT_ATTRIBUTES` attributes is
    /// accepted, as in Go). Our one refusal: a CN with a control character (Go compares it,
    /// and prints it raw in its error), as the client-certificate path refuses one.
    fn check_cn(&self, leaf: &[u8]) -> Result<(), Error> {
        if self.allowed_names.is_empty() {
            return Ok(());
        }
        let subject = x509::subject::subject_of(leaf)?;
        let cn = subject.common_name;
        if cn.chars().any(char::is_control) {
            return Err(x509::subject::ERR_CONTROL);
        }
        if self.allowed_names.iter().any(|name| **name == *cn) {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::InvalidCredential,
                format!("x509: subject with cn={cn} is not in the allowed list"),
            ))
        }
    }

    /// Authenticates a request head (what `authenticate_request` does, synchronously).
    ///
    /// ```
    /// # use kube_authn::request::*;
    /// # let c = RequestHeaderConfig { client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()), ..RequestHeaderConfig::standard() };
    /// let proxy = FrontProxy::new(c).unwrap();
    /// // No client certificate: not mine, whatever the headers say.
    /// let (parts, _) = http::Request::get("/").header("X-Remote-User", "admin").body(()).unwrap().into_parts();
    /// assert!(proxy.authenticate_parts(&parts).unwrap().is_none());
    /// ```
    pub fn authenticate_parts(&self, req: &Parts) -> AuthResult {
        if !self.verify_proxy(req.extensions.get::<PeerCertificates>())? {
            return Ok(None);
        }
        self.user_from_headers_unverified(&req.headers)
    }

    /// **Trusts the identity headers of anyone.** Reads the user from `headers` without
    /// checking that the request came from the proxy: no client certificate, no CA, no
    /// allowed-names check (k8s `requestheader` `AuthenticateRequest` alone). Any client can
    /// set `X-Remote-User: system:admin`; calling this on a request that did not pass
    /// [`FrontProxy::authenticate_parts`]' certificate check is an authentication bypass.
    /// Hidden; only for tests, benchmarks and fuzzing of the header parsing. Use
    /// [`FrontProxy::authenticate_parts`] or the [`RequestAuthenticator`] implementation.
    ///
    /// ```
    /// # use kube_authn::request::*;
    /// # let c = RequestHeaderConfig { client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()), ..RequestHeaderConfig::standard() };
    /// let proxy = FrontProxy::new(c).unwrap();
    /// let mut h = http::HeaderMap::new();
    /// h.insert("x-remote-user", "bob".parse().unwrap());
    /// // No certificate anywhere, yet "bob" is believed: this is what "unverified" means.
    /// assert_eq!(proxy.user_from_headers_unverified(&h).unwrap().unwrap().user.name(), "bob");
    /// ```
    #[doc(hidden)]
    pub fn user_from_headers_unverified(&self, headers: &HeaderMap) -> AuthResult {
        let name = first_value(headers, &self.username)?;
        if name.is_empty() {
            return Ok(None);
        }
        let uid = first_value(headers, &self.uid)?;
        let mut builder = UserInfo::builder(name).uid(uid);
        let mut groups = 0usize;
        for h in self.group.iter() {
            for v in headers.get_all(h) {
                let v = value_str(v)?;
                if v.is_empty() {
                    continue;
                }
                groups += 1;
                if groups > MAX_GROUPS {
                    return Err(Error::from_static(
                        ErrorKind::MalformedCredential,
                        "request header: too many group values",
                    ));
                }
                builder = builder.group(v);
            }
        }
        let mut extras = 0usize;
        for prefix in self.extra_prefixes.iter() {
            for (k, v) in headers.iter() {
                let k = k.as_str();
                let Some(rest) = k.strip_prefix(prefix.as_str()) else {
                    continue;
                };
                extras += 1;
                if extras > MAX_EXTRA_VALUES {
                    return Err(Error::from_static(
                        ErrorKind::MalformedCredential,
                        "request header: too many extra values",
                    ));
                }
                let key = decode_extra_key(rest)?;
                builder = builder.extra(key, [value_str(v)?]);
            }
        }
        Ok(Some(Response::new(Arc::new(builder.build()))))
    }
}

fn value_str(v: &http::HeaderValue) -> Result<&str, Error> {
    let s = std::str::from_utf8(v.as_bytes()).map_err(|_| {
        Error::from_static(
            ErrorKind::MalformedCredential,
            "request header: identity header value is not valid UTF-8",
        )
    })?;
    if s.chars().any(char::is_control) {
        return Err(Error::from_static(
            ErrorKind::MalformedCredential,
            "request header: identity header value contains a control character",
        ));
    }
    Ok(s)
}

/// k8s `headerValue`: for each header in order, its **first** value; the first non-empty wins.
fn first_value<'h>(headers: &'h HeaderMap, names: &[HeaderName]) -> Result<&'h str, Error> {
    for name in names {
        if let Some(v) = headers.get(name) {
            let v = value_str(v)?;
            if !v.is_empty() {
                return Ok(v);
            }
        }
    }
    Ok("")
}

/// k8s `unescapeExtraKey(ToLower(key))`: lower-case (the header map already did), then
/// percent-decode once (`url.PathUnescape`); an invalid escape keeps the raw key. A decoded
/// key that is not UTF-8 or contains control characters is refused (k8s keeps it).
///
/// ```
/// use kube_authn::request::decode_extra_key;
/// assert_eq!(decode_extra_key("example.com%2fpercent%2520encoded").unwrap(), "example.com/percent%20encoded");
/// assert_eq!(decode_extra_key("almost%zzpercent").unwrap(), "almost%zzpercent");
/// assert!(decode_extra_key("bad%ff").is_err());
/// ```
pub fn decode_extra_key(key: &str) -> Result<String, Error> {
    let lower = key.to_ascii_lowercase();
    if !lower.contains('%') {
        return Ok(lower);
    }
    let b = lower.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            match (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                _ => return Ok(lower), // invalid escape: the raw (lower-cased) key
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).map_err(|_| {
        Error::from_static(
            ErrorKind::MalformedCredential,
            "request header: decoded extra key is not valid UTF-8",
        )
    })?;
    if s.chars().any(char::is_control) {
        return Err(Error::from_static(
            ErrorKind::MalformedCredential,
            "request header: decoded extra key contains a control character",
        ));
    }
    Ok(s)
}

impl RequestAuthenticator for FrontProxy {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, _ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::ready(self.authenticate_parts(req))
    }

    fn describe(&self, description: &mut Description) {
        for h in self
            .username
            .iter()
            .chain(self.uid.iter())
            .chain(self.group.iter())
        {
            description.add_identity_header(h.clone());
        }
        for p in self.extra_prefixes.iter() {
            description.add_identity_header_prefix(p);
        }
    }

    fn always_ready(&self) -> bool {
        true
    }
}

/// The largest ConfigMap document read (Kubernetes caps a ConfigMap at 1 MiB).
///
/// ```
/// use kube_authn::request::{ExtensionApiserverAuthentication, MAX_CONFIGMAP_BYTES};
/// assert_eq!(MAX_CONFIGMAP_BYTES, 1024 * 1024);
/// let huge = vec![b' '; MAX_CONFIGMAP_BYTES + 1];
/// let err = ExtensionApiserverAuthentication::from_configmap(&huge).unwrap_err();
/// assert_eq!(err.to_string(), "ConfigMap is larger than 1048576 bytes");
/// ```
pub const MAX_CONFIGMAP_BYTES: usize = 1 << 20;

/// What a delegating (aggregated) API server reads from the
/// `kube-system/extension-apiserver-authentication` ConfigMap.
///
/// ```
/// use kube_authn::request::ExtensionApiserverAuthentication;
/// let cm = br#"{"apiVersion":"v1","kind":"ConfigMap","data":{}}"#;
/// let auth = ExtensionApiserverAuthentication::from_configmap(cm).unwrap();
/// assert!(auth.client_ca.is_none() && auth.request_header.is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtensionApiserverAuthentication {
    /// `client-ca-file`: the client CA bundle (PEM), if present and non-empty.
    pub client_ca: Option<Vec<u8>>,
    /// The request-header settings; present only when `requestheader-client-ca-file` is
    /// non-empty (the writer's rule), with the CA in [`RequestHeaderConfig::client_ca_pem`].
    pub request_header: Option<RequestHeaderConfig>,
}

#[derive(serde::Deserialize)]
struct ConfigMapDoc {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    data: Option<std::collections::BTreeMap<String, String>>,
}

/// k8s `deserializeStrings`: `""` and `null` are empty; otherwise a JSON array of strings.
fn deserialize_strings(key: &str, value: Option<&String>) -> Result<Vec<String>, ConfigError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let list: Option<Vec<String>> = serde_json::from_str(value)
        .map_err(|e| ConfigError::new(format!("{key}: not a JSON array of strings: {e}")))?;
    Ok(list.unwrap_or_default())
}

/// Drops the header names (or prefixes) of a ConfigMap list that carry surrounding white space,
/// with a warning. kube-apiserver writes its flag values there as given, and its delegated
/// servers (`NewDynamic`) never trim them, so such a name never matches a header: dropping it
/// gives Go's outcome, where [`FrontProxy::new`]'s trimming would trust a header Go ignores.
fn without_padded(key: &str, mut list: Vec<String>) -> Vec<String> {
    list.retain(|name| {
        let padded = name.trim() != name && !name.trim().is_empty();
        if padded {
            tracing::warn!(
                "{key}: header name {name:?} has surrounding white space; ignored, as kube-apiserver's delegated servers never match it"
            );
        }
        !padded
    });
    list
}

/// [`without_padded`] for header names (not prefixes): a non-empty name that is not an HTTP
/// token (`X Bad`, `X-Remote-User:`) is dropped with a warning too. kube-apiserver accepts
/// such flag values (it refuses only empty ones) and publishes them; Go's delegated servers
/// never match them, while the other names go on working. An empty entry is kept, for the
/// front proxy to refuse (kube-apiserver cannot write one).
fn matchable_names(key: &str, list: Vec<String>) -> Vec<String> {
    let mut list = without_padded(key, list);
    list.retain(|name| {
        let unmatchable = !name.trim().is_empty() && HeaderName::from_bytes(name.as_bytes()).is_err();
        if unmatchable {
            tracing::warn!(
                "{key}: header name {name:?} is not a valid HTTP header name; ignored, as kube-apiserver's delegated servers never match it"
            );
        }
        !unmatchable
    });
    list
}

impl ExtensionApiserverAuthentication {
    /// Parses the ConfigMap as JSON or as YAML (`kubectl get cm -n kube-system
    /// extension-apiserver-authentication -o yaml`). Lists are
    /// JSON arrays as kube-apiserver writes them; `""` and `null` mean empty.
    ///
    /// ```
    /// use kube_authn::request::ExtensionApiserverAuthentication;
    /// let cm = serde_json::json!({"kind": "ConfigMap", "data": {
    ///     "requestheader-client-ca-file": kube_authn::x509::doc_ca_pem(),
    ///     "requestheader-username-headers": "not json",
    /// }});
    /// let err = ExtensionApiserverAuthentication::from_configmap(cm.to_string().as_bytes()).unwrap_err();
    /// assert!(err.to_string().starts_with("requestheader-username-headers: not a JSON array of strings"));
    /// ```
    pub fn from_configmap(bytes: &[u8]) -> Result<Self, ConfigError> {
        if bytes.len() > MAX_CONFIGMAP_BYTES {
            return Err(ConfigError::new(format!(
                "ConfigMap is larger than {MAX_CONFIGMAP_BYTES} bytes"
            )));
        }
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        let doc: ConfigMapDoc = if first == Some(&b'{') {
            serde_json::from_slice(bytes)
                .map_err(|e| ConfigError::new(format!("ConfigMap is not valid JSON: {e}")))?
        } else {
            parse_yaml(bytes)?
        };
        if let Some(kind) = &doc.kind
            && kind != "ConfigMap"
        {
            return Err(ConfigError::new(format!(
                "expected kind ConfigMap, found {kind:?}"
            )));
        }
        let data = doc.data.unwrap_or_default();
        let non_empty = |k: &str| {
            data.get(k)
                .filter(|v| !v.trim().is_empty())
                .map(|v| v.as_bytes().to_vec())
        };
        let client_ca = non_empty("client-ca-file");
        let request_header = match non_empty("requestheader-client-ca-file") {
            None => None,
            Some(pem) => Some(RequestHeaderConfig {
                client_ca_file: None,
                client_ca_pem: Some(pem),
                allowed_names: deserialize_strings(
                    "requestheader-allowed-names",
                    data.get("requestheader-allowed-names"),
                )?,
                username_headers: matchable_names(
                    "requestheader-username-headers",
                    deserialize_strings(
                        "requestheader-username-headers",
                        data.get("requestheader-username-headers"),
                    )?,
                ),
                uid_headers: matchable_names(
                    "requestheader-uid-headers",
                    deserialize_strings(
                        "requestheader-uid-headers",
                        data.get("requestheader-uid-headers"),
                    )?,
                ),
                group_headers: matchable_names(
                    "requestheader-group-headers",
                    deserialize_strings(
                        "requestheader-group-headers",
                        data.get("requestheader-group-headers"),
                    )?,
                ),
                extra_headers_prefix: without_padded(
                    "requestheader-extra-headers-prefix",
                    deserialize_strings(
                        "requestheader-extra-headers-prefix",
                        data.get("requestheader-extra-headers-prefix"),
                    )?,
                ),
            }),
        };
        Ok(Self {
            client_ca,
            request_header,
        })
    }
}

impl RequestHeaderConfig {
    /// The request-header settings of an `extension-apiserver-authentication` ConfigMap
    /// (`None` when it has no request-header CA). See
    /// [`ExtensionApiserverAuthentication::from_configmap`].
    ///
    /// ```
    /// use kube_authn::request::RequestHeaderConfig;
    /// assert!(RequestHeaderConfig::from_configmap(br#"{"data":{}}"#).unwrap().is_none());
    /// ```
    pub fn from_configmap(bytes: &[u8]) -> Result<Option<Self>, ConfigError> {
        Ok(ExtensionApiserverAuthentication::from_configmap(bytes)?.request_header)
    }
}

/// The ConfigMap's YAML: typed (`kind` and `data` strings, the rest skipped without
/// following aliases, so an alias never makes it grow); flow nesting past go-yaml's limit is
/// refused before libyaml's scanner spends minutes on it.
fn parse_yaml(bytes: &[u8]) -> Result<ConfigMapDoc, ConfigError> {
    if let Some(e) = crate::token::oidc::config::decode::flow_depth_error(bytes) {
        return Err(ConfigError::new(format!(
            "ConfigMap is not valid YAML: {e}"
        )));
    }
    serde_yaml_ng::from_slice(bytes)
        .map_err(|e| ConfigError::new(format!("ConfigMap is not valid YAML: {e}")))
}
