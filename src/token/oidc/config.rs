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
    /// validates it (`disallowed_issuers` = the service-account issuers).
    ///
    /// ```
    /// use kube_authn::token::oidc::config::OidcFlags;
    /// let f = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), username_claim: "email".into(), ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap().username.prefix, ""); // email: no default prefix
    /// let f = OidcFlags { issuer_url: "https://i".into(), client_id: "c".into(), username_prefix: Some("-".into()), ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap().username.prefix, ""); // "-" disables
    /// let f = OidcFlags { client_id: "c".into(), ..Default::default() };
    /// assert_eq!(f.to_config(&[]).unwrap_err().to_string(), "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set");
    /// ```
    pub fn to_config(
        &self,
        disallowed_issuers: &[String],
    ) -> Result<JwtAuthenticatorConfig, ConfigError> {
        if self.issuer_url.is_empty() || self.client_id.is_empty() {
            return Err(ConfigError::new(
                "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set",
            ));
        }
        let mut prefix = self.username_prefix.clone().unwrap_or_default();
        if prefix.is_empty() && self.username_claim != "email" {
            prefix = format!("{}#", self.issuer_url);
        }
        if prefix == "-" {
            prefix.clear();
        }
        let certificate_authority =
            match &self.ca_file {
                None => None,
                Some(p) => Some(std::fs::read_to_string(p).map_err(|e| {
                    ConfigError::new(format!("Failed to read the CA contents: {e}"))
                })?),
            };
        // An empty list is `oidc.New`'s default, RS256 (what `--oidc-signing-algs=` gives
        // kube-apiserver).
        let signing_algs = if self.signing_algs.is_empty() {
            AlgorithmSet::RS256_ONLY
        } else {
            AlgorithmSet::parse_kubernetes(&self.signing_algs).map_err(ConfigError::new)?
        };
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
        cfg.validate(disallowed_issuers)?;
        Ok(cfg)
    }
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
    let u = match super::go_url::parse(url) {
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
    /// assert_eq!(f.to_config(&["https://k".into()]).unwrap_err().to_string(),
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
    /// own path (`jwt[0].` in a configuration file, `""` for flags), which Kubernetes also
    /// writes into the audiences-required detail (`atLeastOneRequiredErrFmt`).
    fn validation_errors(&self, disallowed_issuers: &[String], path: &str) -> Vec<String> {
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
        }
        for (i, a) in self.audiences.iter().enumerate() {
            if a.is_empty() {
                errs.push(format!("issuer.audiences[{i}]: Required value"));
            } else if self.audiences[..i].contains(a) {
                errs.push(format!(
                    "issuer.audiences[{i}]: Duplicate value: {}",
                    go_quote(a)
                ));
            }
        }
        // `validateCertificateAuthority`: a CA that is set must hold a certificate (its
        // contents are not echoed).
        if let Some(ca) = self
            .certificate_authority
            .as_ref()
            .filter(|ca| !ca.is_empty())
        {
            if let Err(e) = crate::x509::parse_pem_bundle(ca.as_bytes()) {
                errs.push(format!(
                    "issuer.certificateAuthority: Invalid value: \"<omitted>\": {e}"
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
}

// ---------------------------------------------------------------------------------------------
// --authentication-config (apiserver.config.k8s.io AuthenticationConfiguration)

/// Most `jwt[]` entries accepted (Kubernetes' limit).
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
/// assert!(err.contains("jwt: Too many: 65: must have at most 64 items"), "{err}");
/// ```
pub const MAX_JWT_AUTHENTICATORS: usize = 64;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileConfig {
    api_version: String,
    kind: String,
    #[serde(default)]
    jwt: Vec<FileJwt>,
    #[serde(default)]
    anonymous: Option<FileAnonymous>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAnonymous {
    #[serde(default)]
    enabled: bool,
    #[serde(default)]
    conditions: Vec<FileAnonymousCondition>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAnonymousCondition {
    #[serde(default)]
    path: String,
}

impl FileAnonymous {
    /// Kubernetes' rule for the section (`ValidateAuthenticationConfiguration`), with its text
    /// (the value as Go's `%#v` prints it).
    fn validate(&self) -> Option<String> {
        if self.enabled || self.conditions.is_empty() {
            return None;
        }
        let conditions: Vec<String> = self
            .conditions
            .iter()
            .map(|c| {
                format!(
                    "apiserver.AnonymousAuthCondition{{Path:{}}}",
                    go_quote(&c.path)
                )
            })
            .collect();
        Some(format!(
            "anonymous.conditions: Invalid value: []apiserver.AnonymousAuthCondition{{{}}}: enabled should be set to true when conditions are defined",
            conditions.join(", ")
        ))
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileJwt {
    issuer: FileIssuer,
    #[serde(default)]
    claim_validation_rules: Vec<FileRule>,
    #[serde(default)]
    claim_mappings: FileMappings,
    #[serde(default)]
    user_validation_rules: Vec<FileUserRule>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileIssuer {
    #[serde(default)]
    url: String,
    #[serde(default, rename = "discoveryURL")]
    discovery_url: Option<String>,
    #[serde(default)]
    certificate_authority: Option<String>,
    #[serde(default)]
    audiences: Vec<String>,
    #[serde(default)]
    audience_match_policy: String,
    #[serde(default)]
    egress_selector_type: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileRule {
    #[serde(default)]
    claim: String,
    #[serde(default)]
    required_value: String,
    #[serde(default)]
    expression: String,
    #[serde(default)]
    message: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileUserRule {
    #[serde(default)]
    expression: String,
    #[serde(default)]
    #[allow(dead_code)]
    message: String,
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileMappings {
    #[serde(default)]
    username: FilePrefixed,
    #[serde(default)]
    groups: Option<FilePrefixed>,
    #[serde(default)]
    uid: Option<FileUid>,
    #[serde(default)]
    extra: Vec<serde_yaml_ng::Value>,
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FilePrefixed {
    #[serde(default)]
    claim: String,
    #[serde(default)]
    prefix: Option<String>,
    #[serde(default)]
    expression: String,
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileUid {
    #[serde(default)]
    claim: String,
    #[serde(default)]
    expression: String,
}

const CEL_UNSUPPORTED: &str = "CEL expressions are not supported yet";

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

/// Loads an `AuthenticationConfiguration` file (`--authentication-config`): strict YAML/JSON
/// (unknown fields are errors), `apiVersion` `apiserver.config.k8s.io/{v1,v1beta1,v1alpha1}`,
/// Kubernetes' validation with `jwt[i].` field paths, duplicate issuers and discovery URLs
/// refused, service-account issuers refused (`disallowed_issuers`). Every CEL field
/// (`expression`, `valueExpression`, `userValidationRules`) is refused with
/// "CEL expressions are not supported yet". All nine algorithms are allowed.
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
/// ```
pub fn load_authentication_configuration(
    data: &[u8],
    disallowed_issuers: &[String],
) -> Result<Vec<JwtAuthenticatorConfig>, ConfigError> {
    let file = decode_authentication_configuration(data)?;
    let mut errs = Vec::new();
    // The section itself configures the anonymous authenticator
    // (`load_anonymous_configuration`); its errors are reported with the rest of the file's.
    errs.extend(file.anonymous.as_ref().and_then(FileAnonymous::validate));
    if file.jwt.len() > MAX_JWT_AUTHENTICATORS {
        errs.push(format!(
            "jwt: Too many: {}: must have at most {MAX_JWT_AUTHENTICATORS} items",
            file.jwt.len()
        ));
    }
    let mut out = Vec::new();
    let mut seen_urls: Vec<&str> = Vec::new();
    let mut seen_discovery: Vec<&str> = Vec::new();
    for (i, j) in file.jwt.iter().enumerate() {
        let p = format!("jwt[{i}]");
        let mut local = Vec::new();
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
        match (j.issuer.audiences.len(), j.issuer.audience_match_policy.as_str()) {
            (n, "MatchAny") if n > 1 => {}
            (n, other) if n > 1 => local.push(format!(
                "issuer.audienceMatchPolicy: Invalid value: {}: audienceMatchPolicy must be MatchAny for multiple audiences",
                go_quote(other)
            )),
            (1, "" | "MatchAny") | (0, _) => {}
            (_, other) => local.push(format!(
                "issuer.audienceMatchPolicy: Invalid value: {}: audienceMatchPolicy must be empty or MatchAny for single audience",
                go_quote(other)
            )),
        }
        if let Some(e) = &j.issuer.egress_selector_type {
            local.push(format!(
                "issuer.egressSelectorType: Invalid value: {}: egress selector is not supported when StructuredAuthenticationConfigurationEgressSelector feature gate is disabled",
                go_quote(e)
            ));
        }
        // Kubernetes' `validateClaimValidationRules`, its errors in its order.
        let mut required: Vec<(String, String)> = Vec::new();
        for (r, rule) in j.claim_validation_rules.iter().enumerate() {
            let f = format!("claimValidationRules[{r}]");
            match (rule.claim.is_empty(), rule.expression.is_empty()) {
                (false, false) => local.push(format!(
                    "{f}: Invalid value: {}: claim and expression can't both be set",
                    go_quote(&rule.claim)
                )),
                (true, true) => local.push(format!(
                    "{f}: Required value: claim or expression is required"
                )),
                (false, true) => {
                    if !rule.message.is_empty() {
                        local.push(format!(
                            "{f}.message: Invalid value: {}: may not be specified when claim is set",
                            go_quote(&rule.message)
                        ));
                    }
                    if required.iter().any(|(c, _)| *c == rule.claim) {
                        local.push(format!(
                            "{f}.claim: Duplicate value: {}",
                            go_quote(&rule.claim)
                        ));
                    } else {
                        required.push((rule.claim.clone(), rule.required_value.clone()));
                    }
                }
                (true, false) => {
                    if !rule.required_value.is_empty() {
                        local.push(format!(
                            "{f}.requiredValue: Invalid value: {}: may not be specified when expression is set",
                            go_quote(&rule.required_value)
                        ));
                    }
                    local.push(format!(
                        "{f}.expression: Invalid value: {}: {CEL_UNSUPPORTED}",
                        go_quote(&rule.expression)
                    ));
                }
            }
        }
        let username = mapping(
            "claimMappings.username",
            &j.claim_mappings.username,
            true,
            &mut local,
        );
        let groups = j
            .claim_mappings
            .groups
            .as_ref()
            .and_then(|g| mapping("claimMappings.groups", g, false, &mut local));
        let uid_claim = match &j.claim_mappings.uid {
            Some(u) if !u.expression.is_empty() && !u.claim.is_empty() => {
                local.push(
                    "claimMappings.uid: Invalid value: \"\": claim and expression can't both be set"
                        .into(),
                );
                None
            }
            Some(u) if !u.expression.is_empty() => {
                local.push(format!(
                    "claimMappings.uid.expression: Invalid value: {}: {CEL_UNSUPPORTED}",
                    go_quote(&u.expression)
                ));
                None
            }
            Some(u) if !u.claim.is_empty() => Some(u.claim.clone()),
            _ => None,
        };
        if !j.claim_mappings.extra.is_empty() {
            local.push(format!(
                "claimMappings.extra: Invalid value: {}: {CEL_UNSUPPORTED}",
                j.claim_mappings.extra.len()
            ));
        }
        for (r, rule) in j.user_validation_rules.iter().enumerate() {
            local.push(format!(
                "userValidationRules[{r}].expression: Invalid value: {}: {CEL_UNSUPPORTED}",
                go_quote(&rule.expression)
            ));
        }
        let cfg = JwtAuthenticatorConfig {
            issuer_url: j.issuer.url.clone(),
            discovery_url: j.issuer.discovery_url.clone(),
            certificate_authority: j.issuer.certificate_authority.clone(),
            audiences: j.issuer.audiences.clone(),
            username: username.clone().unwrap_or(PrefixedClaim {
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
        let mut v = cfg.validation_errors(disallowed_issuers, &format!("{p}."));
        if username.is_none() {
            v.retain(|e| !e.starts_with("claimMappings.username"));
        }
        local.extend(v);
        errs.extend(local.into_iter().map(|e| format!("{p}.{e}")));
        out.push(cfg);
    }
    match errs.len() {
        0 => Ok(out),
        1 => Err(ConfigError::new(errs.remove(0))),
        _ => Err(ConfigError::new(format!("[{}]", errs.join(", ")))),
    }
}

/// Decodes an `AuthenticationConfiguration` file (size cap, strict fields, kind and version).
fn decode_authentication_configuration(data: &[u8]) -> Result<FileConfig, ConfigError> {
    if data.len() > 1024 * 1024 {
        return Err(ConfigError::new(
            "authentication configuration file too large",
        ));
    }
    let file: FileConfig = serde_yaml_ng::from_slice(data).map_err(|e| {
        ConfigError::new(format!(
            "failed to decode authentication configuration: {e}"
        ))
    })?;
    if file.kind != "AuthenticationConfiguration"
        || !matches!(
            file.api_version.as_str(),
            "apiserver.config.k8s.io/v1"
                | "apiserver.config.k8s.io/v1beta1"
                | "apiserver.config.k8s.io/v1alpha1"
        )
    {
        return Err(ConfigError::new(format!(
            "no kind {} is registered for version {}",
            go_quote(&file.kind),
            go_quote(&file.api_version)
        )));
    }
    Ok(file)
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
        paths: anonymous.conditions.into_iter().map(|c| c.path).collect(),
    }))
}
