//! OIDC configuration: kube-apiserver's legacy `--oidc-*` flags and the subset of
//! `apiserver.config.k8s.io` `JWTAuthenticator` they map to, with Kubernetes' defaults,
//! prefix rules and validation messages (reference §3.1–3.2).
//!
//! ```
//! use kube_authn::token::oidc::config::OidcFlags;
//! let flags = OidcFlags { issuer_url: "https://auth.example.com".into(), client_id: "my-client".into(), ..Default::default() };
//! let cfg = flags.to_config(&[]).unwrap();
//! assert_eq!(cfg.username.claim, "sub");
//! assert_eq!(cfg.username.prefix, "https://auth.example.com#"); // non-email claim, no prefix given
//! ```

use std::path::PathBuf;

use crate::error::ConfigError;
use crate::jwt::alg::AlgorithmSet;
use crate::jwt::go_quote;

/// kube-apiserver's `Validate()` text for `--oidc-*` flags without both the issuer URL and the
/// client id.
pub(crate) const ERR_OIDC_FLAGS_TOGETHER: &str =
    "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set";

/// kube-apiserver's `Validate()` text for `--authentication-config` with `--oidc-*` flags.
pub(crate) const ERR_CONFIG_AND_FLAGS: &str =
    "authentication-config file and oidc-* flags are mutually exclusive";

/// kube-apiserver's `--oidc-*` flags.
///
/// ```
/// let f = kube_authn::token::oidc::config::OidcFlags::default();
/// assert_eq!(f.username_claim, "sub");
/// assert_eq!(f.signing_algs, ["RS256"]);
/// ```
#[derive(Clone, Debug)]
pub struct OidcFlags {
    /// `--oidc-issuer-url`.
    pub issuer_url: String,
    /// `--oidc-client-id`.
    pub client_id: String,
    /// `--oidc-ca-file`.
    pub ca_file: Option<PathBuf>,
    /// `--oidc-username-claim` (default `sub`).
    pub username_claim: String,
    /// `--oidc-username-prefix` (`None` = unset).
    pub username_prefix: Option<String>,
    /// `--oidc-groups-claim`.
    pub groups_claim: Option<String>,
    /// `--oidc-groups-prefix`.
    pub groups_prefix: String,
    /// `--oidc-required-claim key=value` (repeatable).
    pub required_claims: Vec<(String, String)>,
    /// `--oidc-signing-algs` (default `RS256`; an empty list means `RS256` too, as in Kubernetes).
    pub signing_algs: Vec<String>,
    /// Some `--oidc-*` flag was given on the command line, whatever its value (pflag's
    /// `Changed`): kube-apiserver's test for "set", so `--oidc-username-claim=sub` alone counts.
    /// A caller that cannot tell leaves it `false`, and [`any_set`](Self::any_set) then falls
    /// back to comparing the values with the defaults.
    pub given: bool,
}

impl Default for OidcFlags {
    fn default() -> Self {
        Self {
            issuer_url: String::new(),
            client_id: String::new(),
            ca_file: None,
            username_claim: "sub".into(),
            username_prefix: None,
            groups_claim: None,
            groups_prefix: String::new(),
            required_claims: Vec::new(),
            signing_algs: vec!["RS256".into()],
            given: false,
        }
    }
}

/// A claim mapped with a prefix.
///
/// ```
/// let c = kube_authn::token::oidc::config::PrefixedClaim { claim: "sub".into(), prefix: "p:".into() };
/// assert_eq!(c.prefix, "p:");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixedClaim {
    /// Claim name.
    pub claim: String,
    /// Prefix prepended to every value (may be empty).
    pub prefix: String,
}

/// One JWT authenticator (the claim-based subset of `JWTAuthenticator`; CEL expressions are
/// not supported yet).
///
/// ```
/// use kube_authn::token::oidc::config::OidcFlags;
/// let cfg = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ..Default::default() }.to_config(&[]).unwrap();
/// assert_eq!(cfg.audiences, ["c"]);
/// ```
#[derive(Clone, Debug)]
pub struct JwtAuthenticatorConfig {
    /// `issuer.url`.
    pub issuer_url: String,
    /// `issuer.discoveryURL`.
    pub discovery_url: Option<String>,
    /// `issuer.certificateAuthority` (PEM).
    pub certificate_authority: Option<String>,
    /// `issuer.audiences`.
    pub audiences: Vec<String>,
    /// `claimMappings.username`.
    pub username: PrefixedClaim,
    /// `claimMappings.groups`.
    pub groups: Option<PrefixedClaim>,
    /// `claimMappings.uid.claim`.
    pub uid_claim: Option<String>,
    /// `claimValidationRules[].{claim, requiredValue}`, in order.
    pub required_claims: Vec<(String, String)>,
    /// Allowed signing algorithms.
    pub signing_algs: AlgorithmSet,
    /// The allowed algorithms as kube-apiserver lists them in its "unsupported algorithm"
    /// error: `--oidc-signing-algs` as given (order and repeats kept). Used when it names
    /// exactly the set `signing_algs`; otherwise (or empty) the error lists that set in sorted
    /// order, as kube-apiserver does for an `--authentication-config` issuer.
    pub signing_alg_names: Vec<String>,
}

impl OidcFlags {
    /// Whether any `--oidc-*` flag was set: [`given`](Self::given), or a value that differs
    /// from its default.
    ///
    /// ```
    /// use kube_authn::token::oidc::config::OidcFlags;
    /// assert!(!OidcFlags::default().any_set());
    /// assert!(OidcFlags { given: true, ..Default::default() }.any_set());
    /// assert!(OidcFlags { client_id: "c".into(), ..Default::default() }.any_set());
    /// ```
    pub fn any_set(&self) -> bool {
        let d = OidcFlags::default();
        self.given
            || !self.issuer_url.is_empty()
            || !self.client_id.is_empty()
            || self.ca_file.is_some()
            || self.username_claim != d.username_claim
            || self.username_prefix.is_some()
            || self.groups_claim.is_some()
            || !self.groups_prefix.is_empty()
            || !self.required_claims.is_empty()
            || self.signing_algs != d.signing_algs
    }

    /// Maps the flags to a config as kube-apiserver's `ToAuthenticationConfig` does, then
    /// validates it as the `jwt[0]` of an `AuthenticationConfiguration` (`disallowed_issuers` =
    /// the service-account issuers): Kubernetes' field paths and texts, without its
    /// `invalid authentication configuration: ` wrapper. A `--oidc-ca-file` that cannot be read
    /// is Go's `os.ReadFile` error as kube-apiserver prints it (`open <path>: no such file or
    /// directory`).
    ///
    /// ```
    /// use kube_authn::token::oidc::config::OidcFlags;
    /// let f = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), username_claim: "email".into(), ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap().username.prefix, ""); // email: no default prefix
    /// let f = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), username_prefix: Some("-".into()), ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap().username.prefix, ""); // "-" disables
    /// let f = OidcFlags { client_id: "c".into(), ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap_err().to_string(), "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set");
    /// // `--oidc-required-claim==x`: a rule without a claim.
    /// let f = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), required_claims: vec![("".into(), "x".into())], ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap_err().to_string(), "jwt[0].claimValidationRules[0]: Required value: claim or expression is required");
    /// let f = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), ca_file: Some("/nonexistent/ca.pem".into()), ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap_err().to_string(), "open /nonexistent/ca.pem: no such file or directory");
    /// ```
    pub fn to_config(
        &self,
        disallowed_issuers: &[String],
    ) -> Result<JwtAuthenticatorConfig, ConfigError> {
        if self.issuer_url.is_empty() || self.client_id.is_empty() {
            return Err(ConfigError::new(ERR_OIDC_FLAGS_TOGETHER));
        }
        let mut prefix = self.username_prefix.clone().unwrap_or_default();
        if prefix.is_empty() && self.username_claim != "email" {
            prefix = format!("{}#", self.issuer_url);
        }
        if prefix == "-" {
            prefix.clear();
        }
        // `len(o.OIDC.CAFile) != 0`: an empty path is no CA file.
        let certificate_authority =
            match self.ca_file.as_ref().filter(|p| !p.as_os_str().is_empty()) {
                None => None,
                Some(p) => Some(go_read_file(p)?),
            };
        // An empty list is `oidc.New`'s default, RS256 (what `--oidc-signing-algs=` gives
        // kube-apiserver).
        // Checked only after the configuration validates, as `oidc.New` checks it after
        // `ValidateAuthenticationConfiguration` ran (an invalid issuer is reported first).
        let parsed_algs = if self.signing_algs.is_empty() {
            Ok(AlgorithmSet::RS256_ONLY)
        } else {
            AlgorithmSet::parse_kubernetes(&self.signing_algs).map_err(ConfigError::new)
        };
        let signing_algs = parsed_algs.clone().unwrap_or(AlgorithmSet::RS256_ONLY);
        let cfg = JwtAuthenticatorConfig {
            issuer_url: self.issuer_url.clone(),
            discovery_url: None,
            certificate_authority,
            audiences: vec![self.client_id.clone()],
            username: PrefixedClaim {
                claim: self.username_claim.clone(),
                prefix,
            },
            // `if len(o.OIDC.GroupsClaim) > 0`: `--oidc-groups-claim=` maps no groups.
            groups: self
                .groups_claim
                .as_ref()
                .filter(|c| !c.is_empty())
                .map(|c| PrefixedClaim {
                    claim: c.clone(),
                    prefix: self.groups_prefix.clone(),
                }),
            uid_claim: None,
            required_claims: self.required_claims.clone(),
            signing_algs,
            signing_alg_names: if self.signing_algs.is_empty() {
                vec!["RS256".into()]
            } else {
                self.signing_algs.clone()
            },
        };
        let errs: Vec<String> = cfg
            .validation_errors(disallowed_issuers, "jwt[0].")
            .into_iter()
            .map(|e| format!("jwt[0].{e}"))
            .collect();
        match errs.len() {
            0 => parsed_algs.map(|_| cfg),
            1 => Err(ConfigError::new(
                errs.into_iter().next().unwrap_or_default(),
            )),
            _ => Err(ConfigError::new(format!("[{}]", errs.join(", ")))),
        }
    }
}

/// Go's `os.ReadFile(path)`, its error as Go prints it: `open <path>: <errno text>` (or
/// `read <path>: …`, a directory), the text being the C library's lower-cased, as Go's
/// `syscall.Errno` strings are. The contents need not be UTF-8 (a CA is PEM; other bytes are
/// replaced and then fail the PEM check as Go's would).
fn go_read_file(path: &std::path::Path) -> Result<String, ConfigError> {
    use std::io::Read as _;
    let errno = |op: &str, e: std::io::Error| {
        let text = match e.raw_os_error() {
            Some(code) => {
                let t = std::io::Error::from_raw_os_error(code).to_string();
                let t = t.split(" (os error").next().unwrap_or_default().to_owned();
                let mut c = t.chars();
                match c.next() {
                    Some(first) => first.to_lowercase().chain(c).collect(),
                    None => t,
                }
            }
            None => e.to_string(),
        };
        ConfigError::new(format!("{op} {}: {text}", path.display()))
    };
    let mut file = std::fs::File::open(path).map_err(|e| errno("open", e))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| errno("read", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Validates an issuer URL with Kubernetes' rules (`validateURL`); `field` is the field path.
/// Several errors are aggregated `[a, b]`, as Kubernetes reports them.
///
/// ```
/// use kube_authn::token::oidc::config::validate_url;
/// assert_eq!(validate_url("issuer.url", "http://issuer-url").unwrap_err(),
///     r#"issuer.url: Invalid value: "http://issuer-url": URL scheme must be https"#);
/// assert_eq!(validate_url("issuer.url", "https://issuer-url:invalid-port").unwrap_err(),
///     r#"issuer.url: Invalid value: "https://issuer-url:invalid-port": parse "https://issuer-url:invalid-port": invalid port ":invalid-port" after host"#);
/// assert!(validate_url("issuer.url", "https://issuer-url/path").is_ok());
/// assert!(validate_url("issuer.url", "HTTPS://issuer-url").is_ok()); // Go lower-cases the scheme
/// ```
pub fn validate_url(field: &str, url: &str) -> Result<(), String> {
    if url.is_empty() {
        return Err(format!("{field}: Required value"));
    }
    let mut errs = url_errors(field, url, &[]);
    match errs.len() {
        0 => Ok(()),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

/// Kubernetes' `validateURL` for a non-empty URL: every error, in Kubernetes' order (the
/// disallowed issuers, then Go's `url.Parse` error alone, or the scheme, userinfo, query and
/// fragment checks). One addition: a URL Kubernetes accepts without a host (`https://`,
/// `https:///p`, `https:x`) is refused here, since no issuer can be discovered at it
/// (docs/compatibility.md).
fn url_errors(field: &str, url: &str, disallowed_issuers: &[String]) -> Vec<String> {
    let invalid = |why: &str| format!("{field}: Invalid value: {}: {why}", go_quote(url));
    let mut errs = Vec::new();
    if disallowed_issuers.iter().any(|d| d == url) {
        let mut d = disallowed_issuers.to_vec();
        d.sort();
        d.dedup();
        errs.push(invalid(&format!(
            "URL must not overlap with disallowed issuers: [{}]",
            d.join(" ")
        )));
    }
    let u = match crate::go_url::issuer::parse(url) {
        Ok(u) => u,
        Err(e) => {
            errs.push(invalid(&e));
            return errs;
        }
    };
    let before = errs.len();
    if u.scheme != "https" {
        errs.push(invalid("URL scheme must be https"));
    }
    if u.user {
        errs.push(invalid("URL must not contain a username or password"));
    }
    if u.query {
        errs.push(invalid("URL must not contain a query"));
    }
    if u.fragment {
        errs.push(invalid("URL must not contain a fragment"));
    }
    if errs.len() == before && !u.host {
        errs.push(invalid("URL must have a host"));
    }
    errs
}

impl JwtAuthenticatorConfig {
    /// Kubernetes' validation of the fields this crate supports (messages from
    /// `validation.go`; several errors are aggregated `[a, b]`).
    ///
    /// ```
    /// use kube_authn::token::oidc::config::OidcFlags;
    /// let f = OidcFlags { issuer_url: "https://k".into(), client_id: "c".into(), ..Default::default() };
    /// let cfg = f.to_config(&[]).unwrap();
    /// assert_eq!(cfg.validate(&["https://k".into()]).unwrap_err().to_string(),
    ///     r#"issuer.url: Invalid value: "https://k": URL must not overlap with disallowed issuers: [https://k]"#);
    /// ```
    pub fn validate(&self, disallowed_issuers: &[String]) -> Result<(), ConfigError> {
        let mut errs = self.validation_errors(disallowed_issuers, "");
        match errs.len() {
            0 => Ok(()),
            1 => Err(ConfigError::new(errs.remove(0))),
            _ => Err(ConfigError::new(format!("[{}]", errs.join(", ")))),
        }
    }

    /// The validation errors, their field paths relative to this authenticator; `path` is its
    /// own path (`jwt[0].`), which Kubernetes also writes into the audiences-required detail
    /// (`atLeastOneRequiredErrFmt`). Kubernetes' order: the issuer, the claim rules, the
    /// username mapping.
    fn validation_errors(&self, disallowed_issuers: &[String], path: &str) -> Vec<String> {
        let mut errs = self.issuer_errors(disallowed_issuers, path, None);
        // `--oidc-required-claim==x` maps to a rule without a claim.
        for (i, (claim, _)) in self.required_claims.iter().enumerate() {
            if claim.is_empty() {
                errs.push(format!(
                    "claimValidationRules[{i}]: Required value: claim or expression is required"
                ));
            } else if self.required_claims[..i].iter().any(|(c, _)| c == claim) {
                errs.push(format!(
                    "claimValidationRules[{i}].claim: Duplicate value: {}",
                    go_quote(claim)
                ));
            }
        }
        if self.username.claim.is_empty() {
            errs.push(
                "claimMappings.username: Required value: claim or expression is required".into(),
            );
        }
        if self.signing_algs.is_empty() {
            errs.push("oidc: no signing algorithms".into());
        }
        errs
    }

    /// Kubernetes' `validateIssuer` for the supported fields, in its order: url, discoveryURL,
    /// audiences (each one, then `audienceMatchPolicy` when `policy` is given: the flags have
    /// none), certificateAuthority.
    fn issuer_errors(
        &self,
        disallowed_issuers: &[String],
        path: &str,
        policy: Option<&str>,
    ) -> Vec<String> {
        let mut errs = Vec::new();
        if self.issuer_url.is_empty() {
            errs.push("issuer.url: Required value".into());
        } else {
            errs.extend(url_errors(
                "issuer.url",
                &self.issuer_url,
                disallowed_issuers,
            ));
        }
        // An empty discoveryURL is unset; it is not checked against the disallowed issuers.
        if let Some(disc) = self.discovery_url.as_deref().filter(|d| !d.is_empty()) {
            if !self.issuer_url.is_empty()
                && disc.trim_end_matches('/') == self.issuer_url.trim_end_matches('/')
            {
                errs.push(format!(
                    "issuer.discoveryURL: Invalid value: {}: discoveryURL must be different from URL",
                    go_quote(disc)
                ));
            }
            errs.extend(url_errors("issuer.discoveryURL", disc, &[]));
        }
        if self.audiences.is_empty() {
            errs.push(format!(
                "issuer.audiences: Required value: at least one {path}issuer.audiences is required"
            ));
        } else {
            // Each audience is checked for both: `["", ""]` is required twice and a duplicate.
            for (i, a) in self.audiences.iter().enumerate() {
                if a.is_empty() {
                    errs.push(format!("issuer.audiences[{i}]: Required value"));
                }
                if self.audiences[..i].contains(a) {
                    errs.push(format!(
                        "issuer.audiences[{i}]: Duplicate value: {}",
                        go_quote(a)
                    ));
                }
            }
            // The policy is a named string type: Go's field error prints it as JSON.
            match (self.audiences.len(), policy) {
                (_, None) | (1, Some("" | "MatchAny")) => {}
                (n, Some(p)) if n > 1 && p != "MatchAny" => errs.push(format!(
                    "issuer.audienceMatchPolicy: Invalid value: {}: audienceMatchPolicy must be MatchAny for multiple audiences",
                    go_json_quote(p)
                )),
                (1, Some(p)) => errs.push(format!(
                    "issuer.audienceMatchPolicy: Invalid value: {}: audienceMatchPolicy must be empty or MatchAny for single audience",
                    go_json_quote(p)
                )),
                _ => {}
            }
        }
        // `validateCertificateAuthority`: a CA that is set must hold a certificate (its
        // contents are not echoed).
        if let Some(ca) = self
            .certificate_authority
            .as_ref()
            .filter(|ca| !ca.is_empty())
            && let Err(e) = crate::x509::parse_pem_bundle(ca.as_bytes())
        {
            errs.push(format!(
                "issuer.certificateAuthority: Invalid value: \"<omitted>\": {e}"
            ));
        }
        errs
    }
}

/// Go's `json.Marshal` of a string (how apimachinery's field errors print a value whose type
/// is not `string` itself): `"` and `\\` escaped, `\b \f \n \r \t`, other control characters
/// as `\u00XX`, and `<`, `>`, `&`, U+2028, U+2029 as `\uXXXX` (HTML-safe): `a<b` is
/// `"a\u003cb"`.
fn go_json_quote(s: &str) -> String {
    let json = crate::api::go_json_escapes(serde_json::to_vec(s).unwrap_or_default());
    // serde_json writes valid UTF-8 and the escapes are ASCII.
    String::from_utf8(json).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// --authentication-config (apiserver.config.k8s.io AuthenticationConfiguration)

/// Most `jwt[]` entries accepted (Kubernetes' limit). Beyond it, Kubernetes reports that alone.
///
/// ```
/// use kube_authn::token::oidc::config::{MAX_JWT_AUTHENTICATORS, load_authentication_configuration};
/// assert_eq!(MAX_JWT_AUTHENTICATORS, 64);
/// let mut yaml = String::from("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n");
/// for i in 0..=MAX_JWT_AUTHENTICATORS {
///     yaml += &format!("- issuer: {{url: \"https://issuer-{i}.example\", audiences: [app]}}\n");
///     yaml += "  claimMappings: {username: {claim: sub, prefix: \"\"}}\n";
/// }
/// let err = load_authentication_configuration(yaml.as_bytes(), &[]).unwrap_err().to_string();
/// assert_eq!(err, "jwt: Too many: 65: must have at most 64 items");
/// ```
pub const MAX_JWT_AUTHENTICATORS: usize = 64;

/// The file as kube-apiserver's decoding leaves it (the `v1` types; `v1beta1` and `v1alpha1`
/// have the same fields). Strings Go's JSON decoding leaves unset (`null`) are empty.
#[derive(Default)]
struct FileConfig {
    jwt: Vec<FileJwt>,
    anonymous: Option<FileAnonymous>,
}

#[derive(Default)]
struct FileAnonymous {
    enabled: bool,
    /// `conditions[].path`; `None` is Go's nil slice (absent or `null`), which a reload
    /// compares as different from `[]`.
    conditions: Option<Vec<String>>,
}

impl FileAnonymous {
    /// Kubernetes' rule for the section (`ValidateAuthenticationConfiguration`), with its text
    /// (the conditions printed as apimachinery prints a non-string value: JSON).
    fn validate(&self) -> Option<String> {
        let conditions = self.conditions.as_deref().unwrap_or_default();
        if self.enabled || conditions.is_empty() {
            return None;
        }
        let conditions: Vec<String> = conditions
            .iter()
            .map(|p| format!("{{\"Path\":{}}}", go_json_quote(p)))
            .collect();
        Some(format!(
            "anonymous.conditions: Invalid value: [{}]: enabled should be set to true when conditions are defined",
            conditions.join(",")
        ))
    }
}

#[derive(Default)]
struct FileJwt {
    issuer: FileIssuer,
    claim_validation_rules: Vec<FileRule>,
    claim_mappings: FileMappings,
    user_validation_rules: Vec<FileUserRule>,
}

#[derive(Default)]
struct FileIssuer {
    url: String,
    discovery_url: Option<String>,
    certificate_authority: String,
    audiences: Vec<String>,
    audience_match_policy: String,
    egress_selector_type: String,
}

#[derive(Default)]
struct FileRule {
    claim: String,
    required_value: String,
    expression: String,
    message: String,
}

#[derive(Default)]
struct FileUserRule {
    expression: String,
}

#[derive(Default)]
struct FileMappings {
    username: FilePrefixed,
    groups: FilePrefixed,
    uid: FileUid,
    extra: Vec<FileExtra>,
}

#[derive(Default)]
struct FileExtra {
    key: String,
    value_expression: String,
}

#[derive(Default)]
struct FilePrefixed {
    claim: String,
    prefix: Option<String>,
    expression: String,
}

#[derive(Default)]
struct FileUid {
    claim: String,
    expression: String,
}

const CEL_UNSUPPORTED: &str = "CEL expressions are not supported yet";

/// apimachinery's `IsDomainPrefixedPath` for `claimMappings.extra[i].key` (`field` is that
/// path): required; a non-empty host before the first `/` and a non-empty path after it; the
/// host an RFC 1123 subdomain (`IsDNS1123Subdomain`: its length, then its shape, both
/// reported); the path `httpPathFmt`. The invalid values are the host and the path alone.
fn domain_prefixed_path_errors(field: &str, key: &str) -> Vec<String> {
    const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const HTTP_PATH: &str =
        "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')";
    if key.is_empty() {
        return vec![format!("{field}: Required value")];
    }
    let invalid = |v: &str, why: &str| format!("{field}: Invalid value: {}: {why}", go_quote(v));
    let (host, path) = match key.split_once('/') {
        Some((h, p)) if !h.is_empty() && !p.is_empty() => (h, p),
        _ => {
            return vec![invalid(
                key,
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            )];
        }
    };
    let mut errs = Vec::new();
    if host.len() > 253 {
        errs.push(invalid(host, "must be no more than 253 characters"));
    }
    let label = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    };
    if !host.split('.').all(label) {
        errs.push(invalid(host, DNS1123_SUBDOMAIN));
    }
    let path_char = |c: &u8| c.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(c);
    if !path.as_bytes().iter().all(path_char) {
        errs.push(invalid(path, HTTP_PATH));
    }
    errs
}

/// Kubernetes' `isKubernetesDomainPrefix`: the text before the first `/` is `k8s.io`,
/// `kubernetes.io` or a subdomain of either (case-sensitive, as in Go).
fn is_kubernetes_domain_prefix(key: &str) -> bool {
    let Some((domain, _)) = key.split_once('/') else {
        return false;
    };
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|d| domain == *d || domain.strip_suffix(d).is_some_and(|s| s.ends_with('.')))
}

/// Kubernetes' `validatePrefixClaimOrExpression`: `required` is false for `groups` (a mapping
/// with neither claim nor expression maps nothing).
fn mapping(
    field: &str,
    m: &FilePrefixed,
    required: bool,
    errs: &mut Vec<String>,
) -> Option<PrefixedClaim> {
    if !m.expression.is_empty() && !m.claim.is_empty() {
        errs.push(format!(
            "{field}: Invalid value: \"\": claim and expression can't both be set"
        ));
        return None;
    }
    if !m.expression.is_empty() {
        if let Some(p) = &m.prefix {
            errs.push(format!(
                "{field}.prefix: Invalid value: {}: may not be specified when expression is set",
                go_quote(p)
            ));
        }
        errs.push(format!(
            "{field}.expression: Invalid value: {}: {CEL_UNSUPPORTED}",
            go_quote(&m.expression)
        ));
        return None;
    }
    if m.claim.is_empty() {
        if required {
            errs.push(format!(
                "{field}: Required value: claim or expression is required"
            ));
        }
        return None;
    }
    match &m.prefix {
        None => {
            errs.push(format!(
                "{field}.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"
            ));
            None
        }
        Some(p) => Some(PrefixedClaim {
            claim: m.claim.clone(),
            prefix: p.clone(),
        }),
    }
}

/// Loads an `AuthenticationConfiguration` file (`--authentication-config`), decoded as
/// kube-apiserver decodes it (only the first YAML document, YAML 1.1 scalars, typed JSON fields,
/// `null` as unset, unknown and repeated fields refused, with Go's texts), then
/// validated as Kubernetes validates it, its errors in Kubernetes' order (each `jwt[i]`'s
/// issuer, claim rules and mappings, then the duplicates, `anonymous` last), with `jwt[i].`
/// field paths; service-account issuers are refused (`disallowed_issuers`). Every check of
/// Kubernetes' that is not CEL compilation is made with its text (`extra[i].key`, a required
/// `valueExpression` or user-rule `expression`, repeated expressions); a non-empty CEL
/// expression that passes them (`expression`, `valueExpression`, a user rule) is then refused
/// where Kubernetes would compile it, with "CEL expressions are not supported yet", and
/// `egressSelectorType` as if its feature gate were off. All nine algorithms are allowed.
///
/// ```
/// use kube_authn::token::oidc::config::load_authentication_configuration;
/// let yaml = br#"
/// apiVersion: apiserver.config.k8s.io/v1
/// kind: AuthenticationConfiguration
/// jwt:
/// - issuer: {url: "https://issuer.example.com", audiences: [my-app]}
///   claimMappings:
///     username: {claim: sub, prefix: ""}
/// "#;
/// let cfgs = load_authentication_configuration(yaml, &[]).unwrap();
/// assert_eq!(cfgs[0].audiences, ["my-app"]);
/// let cel = String::from_utf8_lossy(yaml).replace("{claim: sub, prefix: \"\"}", "{expression: claims.sub}");
/// let err = load_authentication_configuration(cel.as_bytes(), &[]).unwrap_err().to_string();
/// assert!(err.contains("CEL expressions are not supported yet"), "{err}");
/// // YAML 1.1, as Go reads it: `yes` is a boolean, which a string field refuses.
/// let yes = String::from_utf8_lossy(yaml).replace("[my-app]", "[yes]");
/// let err = load_authentication_configuration(yes.as_bytes(), &[]).unwrap_err().to_string();
/// assert_eq!(err, "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.audiences of type string");
/// ```
pub fn load_authentication_configuration(
    data: &[u8],
    disallowed_issuers: &[String],
) -> Result<Vec<JwtAuthenticatorConfig>, ConfigError> {
    let file = decode_authentication_configuration(data)?;
    validate_authentication_configuration(&file, disallowed_issuers).map_err(aggregate)
}

/// Kubernetes' `ValidateAuthenticationConfiguration` over a decoded file: the authenticators'
/// configurations, or every error in its order.
fn validate_authentication_configuration(
    file: &FileConfig,
    disallowed_issuers: &[String],
) -> Result<Vec<JwtAuthenticatorConfig>, Vec<String>> {
    if file.jwt.len() > MAX_JWT_AUTHENTICATORS {
        return Err(vec![format!(
            "jwt: Too many: {}: must have at most {MAX_JWT_AUTHENTICATORS} items",
            file.jwt.len()
        )]);
    }
    let mut errs = Vec::new();
    let mut out = Vec::new();
    let mut seen_urls: Vec<&str> = Vec::new();
    let mut seen_discovery: Vec<&str> = Vec::new();
    for (i, j) in file.jwt.iter().enumerate() {
        let p = format!("jwt[{i}]");
        let mut local = Vec::new();
        // Kubernetes' `validateClaimValidationRules`, its errors in its order.
        let mut required: Vec<(String, String)> = Vec::new();
        let mut seen_expressions: Vec<&str> = Vec::new();
        let mut rule_errs = Vec::new();
        for (r, rule) in j.claim_validation_rules.iter().enumerate() {
            let f = format!("claimValidationRules[{r}]");
            match (rule.claim.is_empty(), rule.expression.is_empty()) {
                (false, false) => rule_errs.push(format!(
                    "{f}: Invalid value: {}: claim and expression can't both be set",
                    go_quote(&rule.claim)
                )),
                (true, true) => rule_errs.push(format!(
                    "{f}: Required value: claim or expression is required"
                )),
                (false, true) => {
                    if !rule.message.is_empty() {
                        rule_errs.push(format!(
                            "{f}.message: Invalid value: {}: may not be specified when claim is set",
                            go_quote(&rule.message)
                        ));
                    }
                    if required.iter().any(|(c, _)| *c == rule.claim) {
                        rule_errs.push(format!(
                            "{f}.claim: Duplicate value: {}",
                            go_quote(&rule.claim)
                        ));
                    } else {
                        required.push((rule.claim.clone(), rule.required_value.clone()));
                    }
                }
                (true, false) => {
                    if !rule.required_value.is_empty() {
                        rule_errs.push(format!(
                            "{f}.requiredValue: Invalid value: {}: may not be specified when expression is set",
                            go_quote(&rule.required_value)
                        ));
                    }
                    // A repeated expression is not compiled (so not refused as CEL).
                    if seen_expressions.contains(&rule.expression.as_str()) {
                        rule_errs.push(format!(
                            "{f}.expression: Duplicate value: {}",
                            go_quote(&rule.expression)
                        ));
                    } else {
                        seen_expressions.push(&rule.expression);
                        rule_errs.push(format!(
                            "{f}.expression: Invalid value: {}: {CEL_UNSUPPORTED}",
                            go_quote(&rule.expression)
                        ));
                    }
                }
            }
        }
        let mut mapping_errs = Vec::new();
        let username = mapping(
            "claimMappings.username",
            &j.claim_mappings.username,
            true,
            &mut mapping_errs,
        );
        let groups = mapping(
            "claimMappings.groups",
            &j.claim_mappings.groups,
            false,
            &mut mapping_errs,
        );
        let uid = &j.claim_mappings.uid;
        let uid_claim = match (uid.claim.is_empty(), uid.expression.is_empty()) {
            (false, false) => {
                mapping_errs.push(
                    "claimMappings.uid: Invalid value: \"\": claim and expression can't both be set"
                        .into(),
                );
                None
            }
            (true, false) => {
                mapping_errs.push(format!(
                    "claimMappings.uid.expression: Invalid value: {}: {CEL_UNSUPPORTED}",
                    go_quote(&uid.expression)
                ));
                None
            }
            (false, true) => Some(uid.claim.clone()),
            (true, true) => None,
        };
        // `validateClaimMappings`' extra loop: the key's checks, a repeated key (nothing more
        // for that entry), a required valueExpression, then its compilation.
        let mut seen_keys: Vec<&str> = Vec::new();
        for (x, e) in j.claim_mappings.extra.iter().enumerate() {
            let f = format!("claimMappings.extra[{x}]");
            let key_field = format!("{f}.key");
            mapping_errs.extend(domain_prefixed_path_errors(&key_field, &e.key));
            if e.key != e.key.to_lowercase() {
                mapping_errs.push(format!(
                    "{key_field}: Invalid value: {}: must be lowercase",
                    go_quote(&e.key)
                ));
            }
            if is_kubernetes_domain_prefix(&e.key) {
                mapping_errs.push(format!(
                    "{key_field}: Invalid value: {}: k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use",
                    go_quote(&e.key)
                ));
            }
            if seen_keys.contains(&e.key.as_str()) {
                mapping_errs.push(format!(
                    "{key_field}: Duplicate value: {}",
                    go_quote(&e.key)
                ));
                continue;
            }
            seen_keys.push(&e.key);
            if e.value_expression.is_empty() {
                mapping_errs.push(format!("{f}.valueExpression: Required value"));
            } else {
                mapping_errs.push(format!(
                    "{f}.valueExpression: Invalid value: {}: {CEL_UNSUPPORTED}",
                    go_quote(&e.value_expression)
                ));
            }
        }
        // `validateUserValidationRules`: required, not repeated, then compiled.
        let mut seen_user_rules: Vec<&str> = Vec::new();
        for (r, rule) in j.user_validation_rules.iter().enumerate() {
            let f = format!("userValidationRules[{r}].expression");
            if rule.expression.is_empty() {
                mapping_errs.push(format!("{f}: Required value"));
            } else if seen_user_rules.contains(&rule.expression.as_str()) {
                mapping_errs.push(format!(
                    "{f}: Duplicate value: {}",
                    go_quote(&rule.expression)
                ));
            } else {
                seen_user_rules.push(&rule.expression);
                mapping_errs.push(format!(
                    "{f}: Invalid value: {}: {CEL_UNSUPPORTED}",
                    go_quote(&rule.expression)
                ));
            }
        }
        let cfg = JwtAuthenticatorConfig {
            issuer_url: j.issuer.url.clone(),
            discovery_url: j.issuer.discovery_url.clone(),
            certificate_authority: Some(j.issuer.certificate_authority.clone())
                .filter(|ca| !ca.is_empty()),
            audiences: j.issuer.audiences.clone(),
            username: username.unwrap_or(PrefixedClaim {
                claim: String::new(),
                prefix: String::new(),
            }),
            groups,
            uid_claim,
            required_claims: required,
            signing_algs: AlgorithmSet::KUBERNETES,
            // kube-apiserver passes `oidc.AllValidSigningAlgorithms()`: sorted.
            signing_alg_names: Vec::new(),
        };
        local.extend(cfg.issuer_errors(
            disallowed_issuers,
            &format!("{p}."),
            Some(j.issuer.audience_match_policy.as_str()),
        ));
        // `validateEgressSelector` with the feature gate off; an empty value is unset.
        let egress = &j.issuer.egress_selector_type;
        if !egress.is_empty() {
            local.push(format!(
                "issuer.egressSelectorType: Invalid value: {}: egress selector is not supported when StructuredAuthenticationConfigurationEgressSelector feature gate is disabled",
                go_json_quote(egress)
            ));
            if egress != "controlplane" && egress != "cluster" {
                local.push(format!(
                    "issuer.egressSelectorType: Invalid value: {}: egress selector must be either controlplane or cluster",
                    go_json_quote(egress)
                ));
            }
        }
        local.extend(rule_errs);
        local.extend(mapping_errs);
        errs.extend(local.into_iter().map(|e| format!("{p}.{e}")));
        if seen_urls.contains(&j.issuer.url.as_str()) {
            errs.push(format!(
                "{p}.issuer.url: Duplicate value: {}",
                go_quote(&j.issuer.url)
            ));
        }
        seen_urls.push(&j.issuer.url);
        // Kubernetes checks discoveryURL duplicates only when it is set (`len(…) > 0`).
        if let Some(d) = j.issuer.discovery_url.as_ref().filter(|d| !d.is_empty()) {
            if seen_discovery.contains(&d.as_str()) {
                errs.push(format!(
                    "{p}.issuer.discoveryURL: Duplicate value: {}",
                    go_quote(d)
                ));
            }
            seen_discovery.push(d);
        }
        out.push(cfg);
    }
    // The section itself configures the anonymous authenticator
    // (`load_anonymous_configuration`); its error is reported with the rest of the file's.
    errs.extend(file.anonymous.as_ref().and_then(FileAnonymous::validate));
    if errs.is_empty() { Ok(out) } else { Err(errs) }
}

/// A list of field errors as one error, as apimachinery's `ErrorList.ToAggregate` prints it:
/// repeated texts once, a single error alone, several as `[e1, e2]`.
pub(crate) fn aggregate(errs: Vec<String>) -> ConfigError {
    let mut unique: Vec<String> = Vec::with_capacity(errs.len());
    for e in errs {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match unique.len() {
        1 => ConfigError::new(unique.remove(0)),
        _ => ConfigError::new(format!("[{}]", unique.join(", "))),
    }
}

/// A file decoded, then validated as kube-apiserver validates it at a reload: the decoding
/// failed (`Err`), or the authenticators' configurations or their errors, with the `anonymous`
/// section to compare.
#[cfg(feature = "remote")]
pub(crate) struct CheckedConfiguration {
    /// The authenticators' configurations, or the validation errors in Kubernetes' order.
    pub(crate) jwt: Result<Vec<JwtAuthenticatorConfig>, Vec<String>>,
    /// The `anonymous` section, for the reload's comparison.
    pub(crate) anonymous: Option<AnonymousSection>,
}

/// Decodes `data` once and validates it (see [`CheckedConfiguration`]).
#[cfg(feature = "remote")]
pub(crate) fn check_authentication_configuration(
    data: &[u8],
    disallowed_issuers: &[String],
) -> Result<CheckedConfiguration, ConfigError> {
    let file = decode_authentication_configuration(data)?;
    Ok(CheckedConfiguration {
        jwt: validate_authentication_configuration(&file, disallowed_issuers),
        anonymous: file.anonymous.map(|a| AnonymousSection {
            enabled: a.enabled,
            conditions: a.conditions,
        }),
    })
}

/// The `anonymous` section of an `AuthenticationConfiguration` file (`--authentication-config`),
/// if it has one, validated as Kubernetes does (`conditions` need `enabled: true`). The rest of
/// the file is decoded as strictly as by [`load_authentication_configuration`] but not
/// validated here.
///
/// ```
/// use kube_authn::token::oidc::config::load_anonymous_configuration;
/// let yaml = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n";
/// let anon = load_anonymous_configuration(yaml.as_bytes()).unwrap().unwrap();
/// assert_eq!((anon.enabled, anon.paths), (true, vec!["/livez".to_owned()]));
/// let none = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
/// assert!(load_anonymous_configuration(none.as_bytes()).unwrap().is_none());
/// ```
pub fn load_anonymous_configuration(
    data: &[u8],
) -> Result<Option<crate::chain::anonymous::AnonymousConfig>, ConfigError> {
    let Some(anonymous) = decode_authentication_configuration(data)?.anonymous else {
        return Ok(None);
    };
    if let Some(e) = anonymous.validate() {
        return Err(ConfigError::new(e));
    }
    Ok(Some(crate::chain::anonymous::AnonymousConfig {
        enabled: anonymous.enabled,
        paths: anonymous.conditions.unwrap_or_default(),
    }))
}

/// The `anonymous` section as kube-apiserver compares it on a reload (`reflect.DeepEqual` of
/// the decoded section): absent and `null` are the same, `conditions` absent (or `null`) and
/// `conditions: []` are not.
#[cfg(feature = "remote")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AnonymousSection {
    enabled: bool,
    conditions: Option<Vec<String>>,
}

/// The file's `anonymous` section for that comparison (decoded, not validated).
#[cfg(feature = "remote")]
pub(crate) fn anonymous_section(data: &[u8]) -> Result<Option<AnonymousSection>, ConfigError> {
    Ok(decode_authentication_configuration(data)?
        .anonymous
        .map(|a| AnonymousSection {
            enabled: a.enabled,
            conditions: a.conditions,
        }))
}

// ---------------------------------------------------------------------------------------------
// Decoding, as kube-apiserver decodes the file

/// The largest `--authentication-config` file accepted: 64 MiB. kube-apiserver reads the file
/// whole (`os.ReadFile`, no limit); a few issuers each with a CA bundle can pass 1 MiB, so the
/// bound is high, only there so that a wrong path (a device, a log) cannot exhaust memory.
///
/// ```
/// assert_eq!(kube_authn::token::oidc::config::MAX_AUTHENTICATION_CONFIG_BYTES, 64 << 20);
/// ```
pub const MAX_AUTHENTICATION_CONFIG_BYTES: usize = 64 << 20;

/// The refusal of a file over [`MAX_AUTHENTICATION_CONFIG_BYTES`], naming the file when known.
fn too_large(path: Option<&std::path::Path>) -> String {
    let file = match path {
        Some(p) => format!("authentication configuration file {}", p.display()),
        None => "authentication configuration file".to_owned(),
    };
    format!("{file} too large: larger than {MAX_AUTHENTICATION_CONFIG_BYTES} bytes")
}

/// Reads an `--authentication-config` file, at most [`MAX_AUTHENTICATION_CONFIG_BYTES`]
/// (reading stops one byte past it): a longer file is refused with its path and the limit,
/// a file that cannot be read with `os.ReadFile`'s text, as kube-apiserver reports it inside
/// its `failed to load authentication configuration from file "<path>": ` wrapper (`open
/// <path>: no such file or directory`, `read <path>: is a directory`).
///
/// ```
/// use kube_authn::token::oidc::config::read_authentication_configuration;
/// let err = read_authentication_configuration("/nonexistent/authn.yaml".as_ref()).unwrap_err();
/// assert_eq!(err.to_string(), "open /nonexistent/authn.yaml: no such file or directory");
/// ```
pub fn read_authentication_configuration(path: &std::path::Path) -> Result<Vec<u8>, ConfigError> {
    use std::io::Read as _;
    let io =
        |op: &str, e: std::io::Error| ConfigError::new(crate::error::go_path_error(op, path, &e));
    let file = std::fs::File::open(path).map_err(|e| io("open", e))?;
    let mut data = Vec::new();
    file.take(MAX_AUTHENTICATION_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut data)
        .map_err(|e| io("read", e))?;
    if data.len() > MAX_AUTHENTICATION_CONFIG_BYTES {
        return Err(ConfigError::new(too_large(Some(path))));
    }
    Ok(data)
}

/// The file read again at a reload: [`read_authentication_configuration`], whose texts are
/// `os.ReadFile`'s, as kube-apiserver's reload logs them.
#[cfg(feature = "remote")]
pub(crate) fn reread_authentication_configuration(
    path: &std::path::Path,
) -> Result<Vec<u8>, ConfigError> {
    read_authentication_configuration(path)
}

/// Decodes an `AuthenticationConfiguration` file as kube-apiserver does
/// (`runtime.Decode(codecs.UniversalDecoder(), data)`, the codec factory strict):
///
/// * a file whose first non-space byte is `{` is JSON; anything else is YAML, of which only the
///   first document is read, converted to JSON as `sigs.k8s.io/yaml` does (go-yaml v2: YAML 1.1
///   plain scalars, so `yes`/`no`/`on`/`off`/`y`/`n` are booleans, `012` and `1_000` numbers;
///   `<<` merge keys; each mapping's keys then in sorted order);
/// * `apiVersion` and `kind` read as `meta.Interpret` reads them (case-insensitive names), then
///   checked against the registered versions;
/// * the typed decoding of `encoding/json` with `sigs.k8s.io/json`'s strictness: a value of the
///   wrong type is an error (`json: cannot unmarshal bool into Go struct field …`, the first one
///   in document order), `null` leaves a field unset, a name matches only as spelled, and
///   unknown or repeated fields are `strict decoding error: …`.
fn decode_authentication_configuration(data: &[u8]) -> Result<FileConfig, ConfigError> {
    if data.is_empty() {
        return Err(ConfigError::new("empty config data"));
    }
    if data.len() > MAX_AUTHENTICATION_CONFIG_BYTES {
        return Err(ConfigError::new(too_large(None)));
    }
    let json = decode::is_json(data);
    let (root, repeated) = if json {
        (decode::json_tree(data)?, Vec::new())
    } else {
        decode::yaml_tree(data)?
    };
    let version = decode::type_meta(&root, data)?;
    let mut typed = decode::Typed::new(version, json);
    let file = typed.config(&root);
    typed.finish(repeated)?;
    Ok(file)
}

// Also the kubeconfig decoder's YAML reading (`crate::outbound::kubeconfig`).
pub(crate) mod decode;
