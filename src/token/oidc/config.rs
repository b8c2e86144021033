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
    /// `--oidc-signing-algs` (default `RS256`).
    pub signing_algs: Vec<String>,
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
}

impl OidcFlags {
    /// Whether any `--oidc-*` flag was set (beyond defaults).
    ///
    /// ```
    /// assert!(!kube_authn::token::oidc::config::OidcFlags::default().any_set());
    /// ```
    pub fn any_set(&self) -> bool {
        let d = OidcFlags::default();
        !self.issuer_url.is_empty()
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
        let signing_algs =
            AlgorithmSet::parse_kubernetes(&self.signing_algs).map_err(ConfigError::new)?;
        let cfg = JwtAuthenticatorConfig {
            issuer_url: self.issuer_url.clone(),
            discovery_url: None,
            certificate_authority,
            audiences: vec![self.client_id.clone()],
            username: PrefixedClaim {
                claim: self.username_claim.clone(),
                prefix,
            },
            groups: self.groups_claim.as_ref().map(|c| PrefixedClaim {
                claim: c.clone(),
                prefix: self.groups_prefix.clone(),
            }),
            uid_claim: None,
            required_claims: self.required_claims.clone(),
            signing_algs,
        };
        cfg.validate(disallowed_issuers)?;
        Ok(cfg)
    }
}

/// Validates an issuer URL with Kubernetes' rules; `field` is the field path.
///
/// ```
/// use kube_authn::token::oidc::config::validate_url;
/// assert_eq!(validate_url("issuer.url", "http://issuer-url").unwrap_err(),
///     r#"issuer.url: Invalid value: "http://issuer-url": URL scheme must be https"#);
/// assert!(validate_url("issuer.url", "https://issuer-url/path").is_ok());
/// ```
pub fn validate_url(field: &str, url: &str) -> Result<(), String> {
    if url.is_empty() {
        return Err(format!("{field}: Required value"));
    }
    let invalid = |why: &str| format!("{field}: Invalid value: {}: {why}", go_quote(url));
    let Some(rest) = url.strip_prefix("https://") else {
        return Err(invalid("URL scheme must be https"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(invalid("URL must not contain a username or password"));
    }
    if url.contains('?') {
        return Err(invalid("URL must not contain a query"));
    }
    if url.contains('#') {
        return Err(invalid("URL must not contain a fragment"));
    }
    if authority.is_empty() {
        return Err(invalid("URL must have a host"));
    }
    Ok(())
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
        let mut errs = Vec::new();
        if let Err(e) = validate_url("issuer.url", &self.issuer_url) {
            errs.push(e);
        } else if disallowed_issuers.contains(&self.issuer_url) {
            let mut d = disallowed_issuers.to_vec();
            d.sort();
            errs.push(format!(
                "issuer.url: Invalid value: {}: URL must not overlap with disallowed issuers: [{}]",
                go_quote(&self.issuer_url),
                d.join(" ")
            ));
        }
        if let Some(disc) = &self.discovery_url {
            if let Err(e) = validate_url("issuer.discoveryURL", disc) {
                errs.push(e);
            } else if disc.trim_end_matches('/') == self.issuer_url.trim_end_matches('/') {
                errs.push(format!(
                    "issuer.discoveryURL: Invalid value: {}: discoveryURL must be different from URL",
                    go_quote(disc)
                ));
            }
        }
        if self.audiences.is_empty() {
            errs.push(
                "issuer.audiences: Required value: at least one issuer.audiences is required"
                    .into(),
            );
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
        if self.username.claim.is_empty() {
            errs.push(
                "claimMappings.username: Required value: claim or expression is required".into(),
            );
        }
        if self.signing_algs.is_empty() {
            errs.push("oidc: no signing algorithms".into());
        }
        match errs.len() {
            0 => Ok(()),
            1 => Err(ConfigError::new(errs.remove(0))),
            _ => Err(ConfigError::new(format!("[{}]", errs.join(", ")))),
        }
    }
}
