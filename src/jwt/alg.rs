//! JWS signature algorithms this crate verifies, and per-issuer allow-lists.
//!
//! Only asymmetric algorithms exist here: `RS256/384/512`, `PS256/384/512`, `ES256/384/512` and
//! (optionally, never by default) `EdDSA` (Ed25519). `none` and every `HS*` are not
//! representable, so no configuration can enable them; header values are matched
//! case-sensitively (`"NONE"`, `"None"`, `"rs256"` are unknown).
//!
//! ```
//! use kube_authn::jwt::alg::{Algorithm, AlgorithmSet};
//! assert_eq!(Algorithm::from_name("RS256"), Some(Algorithm::RS256));
//! assert_eq!(Algorithm::from_name("none"), None);
//! assert_eq!(Algorithm::from_name("HS256"), None);
//! let set = AlgorithmSet::KUBERNETES;
//! assert!(set.contains(Algorithm::ES512) && !set.contains(Algorithm::EdDSA));
//! ```

use std::fmt;

/// A JWS `alg` this crate can verify.
///
/// ```
/// use kube_authn::jwt::alg::Algorithm;
/// let alg = Algorithm::from_name("ES384").unwrap();
/// assert_eq!(alg, Algorithm::ES384);
/// assert_eq!(alg.to_string(), "ES384");
/// assert_eq!(Algorithm::from_name("HS256"), None); // symmetric: not representable
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::upper_case_acronyms)]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256 (MGF1 SHA-256, salt 32).
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// ECDSA P-256 with SHA-256, signature `r || s` (64 bytes).
    ES256,
    /// ECDSA P-384 with SHA-384, signature `r || s` (96 bytes).
    ES384,
    /// ECDSA P-521 with SHA-512, signature `r || s` (132 bytes).
    ES512,
    /// EdDSA with Ed25519 (RFC 8037). Never enabled by Kubernetes; opt-in only.
    EdDSA,
}

impl Algorithm {
    /// All algorithms, in a fixed order (the bit order of [`AlgorithmSet`]).
    ///
    /// ```
    /// use kube_authn::jwt::alg::Algorithm;
    /// assert_eq!(Algorithm::ALL.len(), 10);
    /// assert_eq!(Algorithm::ALL[0], Algorithm::RS256);
    /// assert_eq!(Algorithm::ALL[9], Algorithm::EdDSA);
    /// ```
    pub const ALL: [Algorithm; 10] = [
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
        Algorithm::PS384,
        Algorithm::PS512,
        Algorithm::ES256,
        Algorithm::ES384,
        Algorithm::ES512,
        Algorithm::EdDSA,
    ];

    /// Parses a JWS `alg` value (case-sensitive, as RFC 7515 requires).
    ///
    /// ```
    /// use kube_authn::jwt::alg::Algorithm;
    /// assert_eq!(Algorithm::from_name("PS384"), Some(Algorithm::PS384));
    /// assert_eq!(Algorithm::from_name("nOnE"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Some(match name {
            "RS256" => Algorithm::RS256,
            "RS384" => Algorithm::RS384,
            "RS512" => Algorithm::RS512,
            "PS256" => Algorithm::PS256,
            "PS384" => Algorithm::PS384,
            "PS512" => Algorithm::PS512,
            "ES256" => Algorithm::ES256,
            "ES384" => Algorithm::ES384,
            "ES512" => Algorithm::ES512,
            "EdDSA" => Algorithm::EdDSA,
            _ => return None,
        })
    }

    /// The JWS name.
    ///
    /// ```
    /// assert_eq!(kube_authn::jwt::alg::Algorithm::ES256.name(), "ES256");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::RS256 => "RS256",
            Algorithm::RS384 => "RS384",
            Algorithm::RS512 => "RS512",
            Algorithm::PS256 => "PS256",
            Algorithm::PS384 => "PS384",
            Algorithm::PS512 => "PS512",
            Algorithm::ES256 => "ES256",
            Algorithm::ES384 => "ES384",
            Algorithm::ES512 => "ES512",
            Algorithm::EdDSA => "EdDSA",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Algorithm`]s (a bit set; `Copy`).
///
/// ```
/// use kube_authn::jwt::alg::{Algorithm, AlgorithmSet};
/// let s = AlgorithmSet::EMPTY.with(Algorithm::RS256);
/// assert!(s.contains(Algorithm::RS256) && !s.contains(Algorithm::PS256));
/// assert_eq!(s.iter().collect::<Vec<_>>(), [Algorithm::RS256]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AlgorithmSet(u16);

impl AlgorithmSet {
    /// No algorithm.
    ///
    /// ```
    /// use kube_authn::jwt::alg::{Algorithm, AlgorithmSet};
    /// assert_eq!(AlgorithmSet::EMPTY.iter().count(), 0);
    /// assert_eq!(AlgorithmSet::EMPTY, AlgorithmSet::default());
    /// ```
    pub const EMPTY: AlgorithmSet = AlgorithmSet(0);
    /// The nine algorithms Kubernetes accepts: RS/PS/ES 256–512 (what service-account tokens
    /// may use and what `--authentication-config` allows).
    ///
    /// ```
    /// use kube_authn::jwt::alg::{Algorithm, AlgorithmSet};
    /// let names: Vec<_> = AlgorithmSet::KUBERNETES.iter().map(Algorithm::name).collect();
    /// assert_eq!(
    ///     names,
    ///     ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"]
    /// );
    /// ```
    pub const KUBERNETES: AlgorithmSet = AlgorithmSet(0b01_1111_1111);
    /// `--oidc-signing-algs` default: `RS256` only.
    ///
    /// ```
    /// use kube_authn::jwt::alg::{Algorithm, AlgorithmSet};
    /// assert_eq!(AlgorithmSet::RS256_ONLY.iter().collect::<Vec<_>>(), [Algorithm::RS256]);
    /// ```
    pub const RS256_ONLY: AlgorithmSet = AlgorithmSet(1);

    /// This set plus `alg`.
    ///
    /// ```
    /// use kube_authn::jwt::alg::{Algorithm, AlgorithmSet};
    /// assert!(AlgorithmSet::KUBERNETES.with(Algorithm::EdDSA).contains(Algorithm::EdDSA));
    /// ```
    pub const fn with(self, alg: Algorithm) -> Self {
        AlgorithmSet(self.0 | (1 << alg as u16))
    }

    /// Whether `alg` is in the set.
    ///
    /// ```
    /// use kube_authn::jwt::alg::{Algorithm, AlgorithmSet};
    /// assert!(AlgorithmSet::RS256_ONLY.contains(Algorithm::RS256));
    /// ```
    pub const fn contains(self, alg: Algorithm) -> bool {
        self.0 & (1 << alg as u16) != 0
    }

    /// Whether the set is empty.
    ///
    /// ```
    /// assert!(kube_authn::jwt::alg::AlgorithmSet::EMPTY.is_empty());
    /// ```
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The algorithms in the set, in [`Algorithm::ALL`] order.
    ///
    /// ```
    /// assert_eq!(kube_authn::jwt::alg::AlgorithmSet::KUBERNETES.iter().count(), 9);
    /// ```
    pub fn iter(self) -> impl Iterator<Item = Algorithm> {
        Algorithm::ALL
            .into_iter()
            .filter(move |a| self.contains(*a))
    }

    /// Parses Kubernetes' `--oidc-signing-algs` list: only the nine Kubernetes algorithms are
    /// accepted; anything else is `oidc: unsupported signing alg: "<alg>"`.
    ///
    /// ```
    /// use kube_authn::jwt::alg::AlgorithmSet;
    /// assert!(AlgorithmSet::parse_kubernetes(["RS256", "ES256"]).is_ok());
    /// assert_eq!(
    ///     AlgorithmSet::parse_kubernetes(["HS256"]).unwrap_err(),
    ///     r#"oidc: unsupported signing alg: "HS256""#
    /// );
    /// // Quoted as Go's %q quotes it.
    /// assert_eq!(
    ///     AlgorithmSet::parse_kubernetes(["RS\u{7f}"]).unwrap_err(),
    ///     r#"oidc: unsupported signing alg: "RS\x7f""#
    /// );
    /// ```
    pub fn parse_kubernetes<I, S>(names: I) -> Result<AlgorithmSet, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut set = AlgorithmSet::EMPTY;
        for name in names {
            let name = name.as_ref();
            match Algorithm::from_name(name) {
                Some(a) if AlgorithmSet::KUBERNETES.contains(a) => set = set.with(a),
                // Go's %q (a name from the command line can hold anything).
                _ => {
                    return Err(format!(
                        "oidc: unsupported signing alg: {}",
                        super::go_quote(name)
                    ));
                }
            }
        }
        Ok(set)
    }
}

impl fmt::Debug for AlgorithmSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(Algorithm::name))
            .finish()
    }
}
