//! Service-account token authenticator (kube-apiserver `pkg/serviceaccount`): legacy
//! (secret-based) and bound (TokenRequest / projected) tokens, signed with the keys of
//! `--service-account-key-file`.
//!
//! Two authenticators are built from the same keys, as in kube-apiserver:
//! * **legacy**: issuer `kubernetes/serviceaccount`, claims
//!   `kubernetes.io/serviceaccount/{namespace,secret.name,service-account.name,service-account.uid}`,
//!   no time checks, optional lookup (`--service-account-lookup`, default true);
//! * **bound**: issuers = every `--service-account-issuer`, claims under `kubernetes.io`,
//!   `nbf`/`exp`/`iat` with 60 s leeway, lookups of the service account and of the bound
//!   secret / pod / node with a 60 s deletion grace.
//!
//! The algorithm (§2.4 of the reference notes), exactly:
//! 1. issuer pre-check ([`UntrustedJwt::parse`] + issuer set): any failure → *not mine*;
//! 2. `kid` selects keys by Kubernetes key id ([`PublicKey::key_id`]); a `kid` that matches
//!    nothing (or no keys) → `invalid signature, no keys found`; no `kid` → every key in order;
//! 3. the first key that verifies wins; otherwise go-jose's
//!    `go-jose/go-jose: error in cryptographic primitive`;
//! 4. claims decode (strict; wrong types are errors with go-jose's texts);
//! 5. audiences: no `aud` (or `[]`) = legacy token → the implicit API audiences; the
//!    intersection with the requested audiences (in requested order) must be non-empty unless
//!    there are no API audiences at all:
//!    `token audiences ["foo"] is invalid for the target audiences ["api"]`;
//! 6. the legacy or bound validator, with Kubernetes' exact error strings;
//! 7. user `system:serviceaccount:<ns>:<name>`, uid, groups `system:serviceaccounts`,
//!    `system:serviceaccounts:<ns>`, extras `authentication.kubernetes.io/{pod-name,pod-uid,
//!    node-name,node-uid,credential-id}`.
//!
//! Without lookups, the request path never copies a claim before the user: the claims are
//! read borrowed from the validated payload (the `kubernetes.io` object in one pass) and the
//! user is built from them directly, with the fewest allocations (≈ 9 k instructions per
//! token after the JWS parse, down from ≈ 16.5 k, then ≈ 11 k; see [`crate::jwt`] for the
//! figures).
//!
//! Lookups go through [`ServiceAccountLookup`], which the embedding application implements
//! (an informer cache, a REST client). Without a lookup the authenticator answers synchronously
//! (a ready future, no allocation for the future); with one it is async.
//!
//! ```
//! use kube_authn::token::service_account::{ServiceAccountAuthenticator, LEGACY_ISSUER};
//! use kube_authn::jwt::key::parse_pem_keys;
//! use kube_authn::authenticator::{Audiences, Context, TokenAuthenticator};
//! # let pem = b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL\nX2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==\n-----END PUBLIC KEY-----\n";
//! let keys = parse_pem_keys(pem).unwrap();
//! let sa = ServiceAccountAuthenticator::bound(
//!     vec!["https://kubernetes.default.svc".into()],
//!     keys,
//!     Audiences::default(),
//!     None,
//! );
//! // An opaque token is not ours.
//! let r = sa.authenticate_token("abc", &Context::default()).into_ready().unwrap();
//! assert!(r.unwrap().is_none());
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};

use crate::authenticator::{
    Audiences, AuthFuture, AuthResult, Context, Response, TokenAuthenticator,
};
use crate::error::{ConfigError, Error, ErrorKind};
use crate::jwt::alg::AlgorithmSet;
use crate::jwt::before;
use crate::jwt::compact::{HeaderError, UntrustedJwt};
use crate::jwt::json::{
    Cursor, ERR_AUDIENCE, ERR_CLAIM_TYPE, NumericDate, RawAudience, RawJson, RawObject, opt_str,
};
use crate::jwt::key::{KeySet, PublicKey, parse_pem_keys};
use crate::jwt::router::{IssuerRouter, JwtAuthenticator};
use crate::jwt::{Clock, SignatureError, SystemClock, go_quote, go_quote_list, verify_signature};
mod metrics;
use metrics::Counter;
pub use metrics::{SERVICE_ACCOUNT_METRICS, ServiceAccountMetrics};

use crate::user::{
    ALL_SERVICE_ACCOUNTS_GROUP, SERVICE_ACCOUNT_USERNAME_PREFIX, SharedStr, TextKey, UserInfo,
};

/// The issuer of legacy (secret-based) tokens.
///
/// ```
/// use kube_authn::token::service_account::LEGACY_ISSUER;
/// assert_eq!(LEGACY_ISSUER, "kubernetes/serviceaccount");
/// let legacy = kube_authn::token::service_account::ServiceAccountAuthenticator::legacy(vec![], Default::default(), None);
/// assert_eq!(legacy.issuers().collect::<Vec<_>>(), [LEGACY_ISSUER]);
/// ```
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";
/// Leeway for bound-token time claims and deletion timestamps (seconds).
///
/// ```
/// use kube_authn::token::service_account::LEEWAY_SECONDS;
/// assert_eq!(LEEWAY_SECONDS, 60);
/// ```
pub const LEEWAY_SECONDS: i64 = 60;
pub use crate::user::{NODE_NAME_KEY, NODE_UID_KEY, POD_NAME_KEY, POD_UID_KEY};
/// Label marking a legacy token secret invalid.
///
/// ```
/// use kube_authn::token::service_account::LEGACY_TOKEN_INVALID_SINCE_LABEL;
/// assert_eq!(LEGACY_TOKEN_INVALID_SINCE_LABEL, "kubernetes.io/legacy-token-invalid-since");
/// ```
pub const LEGACY_TOKEN_INVALID_SINCE_LABEL: &str = "kubernetes.io/legacy-token-invalid-since";

/// go-jose's text for any signature failure (go-jose v2 maps every verify error to it).
///
/// ```
/// use kube_authn::token::service_account::ERR_CRYPTO;
/// assert_eq!(ERR_CRYPTO, "go-jose/go-jose: error in cryptographic primitive");
/// ```
pub const ERR_CRYPTO: &str = "go-jose/go-jose: error in cryptographic primitive";
/// Kubernetes' text when no key matches the token's `kid`.
///
/// ```
/// use kube_authn::token::service_account::ERR_NO_KEYS;
/// assert_eq!(ERR_NO_KEYS, "invalid signature, no keys found");
/// ```
pub const ERR_NO_KEYS: &str = "invalid signature, no keys found";
/// Bound-token lookup failures.
///
/// ```
/// use kube_authn::token::service_account::ERR_INVALIDATED;
/// assert_eq!(ERR_INVALIDATED, "service account token has been invalidated");
/// ```
pub const ERR_INVALIDATED: &str = "service account token has been invalidated";
/// A bound token whose `kubernetes.io` claims bind it to a validating or mutating webhook
/// configuration: kube-apiserver 1.37 refuses it while its alpha feature gate
/// `APIServerWebhookAuthenticationToken` is off (the default), and so does kube-authn, which
/// does not implement webhook-bound tokens.
///
/// ```
/// use kube_authn::token::service_account::ERR_WEBHOOK_BOUND;
/// assert_eq!(
///     ERR_WEBHOOK_BOUND,
///     r#"feature gate "APIServerWebhookAuthenticationToken" is disabled, but token is webhook bound"#
/// );
/// ```
pub const ERR_WEBHOOK_BOUND: &str =
    r#"feature gate "APIServerWebhookAuthenticationToken" is disabled, but token is webhook bound"#;
/// A bound token whose `kubernetes.io.serviceaccount.name` is missing or empty: client-go's
/// refusal of a GET without a name, which is what kube-apiserver's lookup answers.
///
/// ```
/// use kube_authn::token::service_account::ERR_EMPTY_NAME;
/// assert_eq!(ERR_EMPTY_NAME, "resource name may not be empty");
/// ```
pub const ERR_EMPTY_NAME: &str = "resource name may not be empty";
/// A bound token with a service-account name but no `kubernetes.io.namespace`: kube-apiserver's
/// lookup then asks for `/api/v1/serviceaccounts/NAME`, a path with no route (404).
///
/// ```
/// use kube_authn::token::service_account::ERR_NO_ROUTE;
/// assert_eq!(ERR_NO_ROUTE, "the server could not find the requested resource");
/// ```
pub const ERR_NO_ROUTE: &str = "the server could not find the requested resource";

/// kube-apiserver's `Validate()` text for service-account keys without an issuer.
pub(crate) const ERR_ISSUER_REQUIRED: &str = "service-account-issuer is a required flag";
/// kube-apiserver's `Validate()` text for an issuer without keys.
pub(crate) const ERR_KEYS_REQUIRED: &str =
    "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set";

/// client-go's typed `Get` of a namespaced object, before any request
/// (`NamespaceIfScoped(namespace, namespace != "")` then `Name(name)`, rest/request.go): a
/// namespace, then a name, that is not a valid path segment (`IsValidPathSegmentName`:
/// not `.` or `..`, no `/` or `%`) is refused with client-go's text; an empty name is
/// [`ERR_EMPTY_NAME`]. kube-apiserver's lookups go through that client for any object its
/// informer cache lacks, and no object has such a name, so these are its usual answers. One
/// case is stricter here: its informer is asked first, and with an empty namespace the cache
/// key is the bare name, so claims of namespace `""` and name `ns/sa` find the service account
/// `ns/sa` there (user `system:serviceaccount::ns/sa`). Only an issuer that signed such claims
/// could send them; they are refused here (`docs/compatibility.md`).
fn client_go_get(namespace: &str, name: &str) -> Result<(), String> {
    fn invalid(name: &str) -> Option<String> {
        if name == "." || name == ".." {
            return Some(format!("[may not be '{name}']"));
        }
        let msgs: Vec<&str> = [("/", "may not contain '/'"), ("%", "may not contain '%'")]
            .into_iter()
            .filter(|(c, _)| name.contains(c))
            .map(|(_, m)| m)
            .collect();
        (!msgs.is_empty()).then(|| format!("[{}]", msgs.join(" ")))
    }
    if !namespace.is_empty()
        && let Some(m) = invalid(namespace)
    {
        return Err(format!("invalid namespace {}: {m}", go_quote(namespace)));
    }
    if name.is_empty() {
        return Err(ERR_EMPTY_NAME.to_owned());
    }
    match invalid(name) {
        Some(m) => Err(format!("invalid resource name {}: {m}", go_quote(name))),
        None => Ok(()),
    }
}

/// Legacy-token lookup failures.
///
/// ```
/// use kube_authn::token::service_account::ERR_LEGACY_INVALIDATED;
/// assert_eq!(ERR_LEGACY_INVALIDATED, "Token has been invalidated");
/// ```
pub const ERR_LEGACY_INVALIDATED: &str = "Token has been invalidated";

// ---------------------------------------------------------------------------------------------
// Lookup

/// Metadata of an object the validator looks up.
///
/// ```
/// let o = kube_authn::token::service_account::ObjectMeta { uid: "u".into(), deletion_timestamp: None };
/// assert_eq!(o.uid, "u");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectMeta {
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.deletionTimestamp` as Unix seconds.
    pub deletion_timestamp: Option<i64>,
}

/// A ServiceAccount as the validator needs it.
///
/// ```
/// let sa = kube_authn::token::service_account::ServiceAccount::default();
/// assert!(sa.secrets.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceAccount {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Names in `secrets[]` (auto-generated legacy token secrets).
    pub secrets: Vec<String>,
}

/// A Secret as the legacy validator needs it. `Debug` never shows the token.
///
/// ```
/// let s = kube_authn::token::service_account::Secret { token: Some(b"t".to_vec()), ..Default::default() };
/// assert!(!format!("{s:?}").contains("\"t\""));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret {
    /// Metadata.
    pub meta: ObjectMeta,
    /// `data.token`.
    pub token: Option<Vec<u8>>,
    /// The `kubernetes.io/legacy-token-invalid-since` label, if set.
    pub invalid_since: Option<String>,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret")
            .field("meta", &self.meta)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("invalid_since", &self.invalid_since)
            .finish()
    }
}

/// Why a lookup failed. `NotFound` renders as the API server does
/// (`serviceaccounts "x" not found`).
///
/// ```
/// use kube_authn::token::service_account::LookupError;
/// let e = LookupError::NotFound { resource: "serviceaccounts", name: "x".into() };
/// assert_eq!(e.to_string(), r#"serviceaccounts "x" not found"#);
/// ```
///
/// New variants may be added: a `match` needs a wildcard arm.
///
/// ```compile_fail,E0004
/// use kube_authn::token::service_account::LookupError;
/// fn kind(e: LookupError) -> u8 {
///     match e {
///         LookupError::NotFound { .. } => 0,
///         LookupError::Other(_) => 1,
///     }
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LookupError {
    /// The object does not exist.
    NotFound {
        /// Plural resource name (`serviceaccounts`, `secrets`, `pods`, `nodes`).
        resource: &'static str,
        /// Object name.
        name: String,
    },
    /// Any other failure (network, authorization), with its text.
    Other(String),
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NotFound { resource, name } => {
                write!(f, "{resource} {} not found", go_quote(name))
            }
            LookupError::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for LookupError {}

/// The kind of a failed lookup's error (its text is Kubernetes'): a bad credential when the
/// object is gone, [`ErrorKind::Unavailable`] when the API server could not be asked (network
/// failure, 5xx, timeout, no permission), so that
/// [`UnavailableAs503`](crate::middleware::UnavailableAs503) can answer 503 for an outage.
fn lookup_kind(e: &LookupError) -> ErrorKind {
    match e {
        LookupError::NotFound { .. } => ErrorKind::InvalidCredential,
        LookupError::Other(_) => ErrorKind::Unavailable,
    }
}

/// A failed secret, pod or node lookup: the client gets Kubernetes' `text`, which does not say
/// why; the cause is logged (kube-apiserver logs it at `klog.V(4)`). A lookup that could not
/// ask (no permission, an outage) is logged at WARN, since kube-apiserver reads its own storage
/// and never meets that; a gone object at DEBUG. The cause holds resource and object names and
/// a status or transport error, never a token.
fn lookup_failed(e: LookupError, text: &'static str) -> Error {
    match &e {
        LookupError::Other(cause) => {
            tracing::warn!(error = %cause, "service account token: lookup failed")
        }
        LookupError::NotFound { .. } => {
            tracing::debug!(error = %e, "service account token: bound object not found")
        }
    }
    Error::from_static(lookup_kind(&e), text)
}

/// The future a lookup returns: the object, or why it could not be had.
///
/// ```
/// use kube_authn::token::service_account::{LookupError, LookupFuture, ObjectMeta};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let node: LookupFuture<'_, ObjectMeta> = Box::pin(async {
///     Err(LookupError::NotFound { resource: "nodes", name: "worker-1".into() })
/// });
/// assert_eq!(node.await.unwrap_err().to_string(), r#"nodes "worker-1" not found"#);
/// # });
/// ```
pub type LookupFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, LookupError>> + Send + 'a>>;

/// Gets the objects a service-account token is bound to (Kubernetes'
/// `ServiceAccountTokenGetter`), implemented by the embedding application.
///
/// Semantics the validators rely on: return the *current* object (an informer cache is fine);
/// [`LookupError::NotFound`] when it does not exist; never block without bound (the
/// authenticator adds no timeout of its own).
///
/// ```
/// use kube_authn::token::service_account::{StaticLookup, ServiceAccount, ObjectMeta, ServiceAccountLookup};
/// let mut l = StaticLookup::default();
/// l.service_accounts.insert(("ns".into(), "sa".into()), ServiceAccount { meta: ObjectMeta { uid: "u".into(), deletion_timestamp: None }, secrets: vec![] });
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(l.service_account("ns", "sa").await.unwrap().meta.uid, "u");
/// assert!(l.service_account("ns", "other").await.is_err());
/// # });
/// ```
pub trait ServiceAccountLookup: Send + Sync {
    /// GET serviceaccounts `namespace/name`.
    ///
    /// ```
    /// use kube_authn::token::service_account::{ServiceAccount, ServiceAccountLookup, StaticLookup};
    /// let mut lookup = StaticLookup::default();
    /// let builder = ServiceAccount { secrets: vec!["builder-token".into()], ..Default::default() };
    /// lookup.service_accounts.insert(("ci".into(), "builder".into()), builder);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert_eq!(lookup.service_account("ci", "builder").await.unwrap().secrets, ["builder-token"]);
    /// let err = lookup.service_account("ci", "deployer").await.unwrap_err();
    /// assert_eq!(err.to_string(), r#"serviceaccounts "deployer" not found"#);
    /// # });
    /// ```
    fn service_account<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> LookupFuture<'a, ServiceAccount>;
    /// GET secrets `namespace/name`.
    ///
    /// ```
    /// use kube_authn::token::service_account::{Secret, ServiceAccountLookup, StaticLookup};
    /// let mut lookup = StaticLookup::default();
    /// let secret = Secret { token: Some(b"stored-token".to_vec()), ..Default::default() };
    /// lookup.secrets.insert(("ci".into(), "builder-token".into()), secret);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let found = lookup.secret("ci", "builder-token").await.unwrap();
    /// assert_eq!(found.token.as_deref(), Some(&b"stored-token"[..]));
    /// let err = lookup.secret("default", "builder-token").await.unwrap_err();
    /// assert_eq!(err.to_string(), r#"secrets "builder-token" not found"#);
    /// # });
    /// ```
    fn secret<'a>(&'a self, namespace: &'a str, name: &'a str) -> LookupFuture<'a, Secret>;
    /// GET pods `namespace/name`.
    ///
    /// ```
    /// use kube_authn::token::service_account::{ObjectMeta, ServiceAccountLookup, StaticLookup};
    /// let meta = |uid: &str| ObjectMeta { uid: uid.into(), deletion_timestamp: None };
    /// let mut lookup = StaticLookup::default();
    /// lookup.pods.insert(("ci".into(), "runner-0".into()), meta("pod-uid"));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert_eq!(lookup.pod("ci", "runner-0").await.unwrap().uid, "pod-uid");
    /// let err = lookup.pod("ci", "runner-1").await.unwrap_err();
    /// assert_eq!(err.to_string(), r#"pods "runner-1" not found"#);
    /// # });
    /// ```
    fn pod<'a>(&'a self, namespace: &'a str, name: &'a str) -> LookupFuture<'a, ObjectMeta>;
    /// GET nodes `name`.
    ///
    /// ```
    /// use kube_authn::token::service_account::{ObjectMeta, ServiceAccountLookup, StaticLookup};
    /// let meta = |uid: &str| ObjectMeta { uid: uid.into(), deletion_timestamp: None };
    /// let mut lookup = StaticLookup::default();
    /// lookup.nodes.insert("worker-1".into(), meta("node-uid"));
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert_eq!(lookup.node("worker-1").await.unwrap().uid, "node-uid");
    /// let err = lookup.node("worker-2").await.unwrap_err();
    /// assert_eq!(err.to_string(), r#"nodes "worker-2" not found"#);
    /// # });
    /// ```
    fn node<'a>(&'a self, name: &'a str) -> LookupFuture<'a, ObjectMeta>;
}

/// An in-memory [`ServiceAccountLookup`] (tests, or applications that keep their own cache).
///
/// ```
/// let l = kube_authn::token::service_account::StaticLookup::default();
/// assert!(l.pods.is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct StaticLookup {
    /// Service accounts by (namespace, name).
    pub service_accounts: HashMap<(String, String), ServiceAccount>,
    /// Secrets by (namespace, name).
    pub secrets: HashMap<(String, String), Secret>,
    /// Pods by (namespace, name).
    pub pods: HashMap<(String, String), ObjectMeta>,
    /// Nodes by name.
    pub nodes: HashMap<String, ObjectMeta>,
}

fn found<T: Clone + Send + 'static>(
    v: Option<&T>,
    resource: &'static str,
    name: &str,
) -> LookupFuture<'static, T> {
    let r = v.cloned().ok_or_else(|| LookupError::NotFound {
        resource,
        name: name.to_owned(),
    });
    Box::pin(std::future::ready(r))
}

impl ServiceAccountLookup for StaticLookup {
    fn service_account<'a>(
        &'a self,
        ns: &'a str,
        name: &'a str,
    ) -> LookupFuture<'a, ServiceAccount> {
        found(
            self.service_accounts.get(&(ns.to_owned(), name.to_owned())),
            "serviceaccounts",
            name,
        )
    }
    fn secret<'a>(&'a self, ns: &'a str, name: &'a str) -> LookupFuture<'a, Secret> {
        found(
            self.secrets.get(&(ns.to_owned(), name.to_owned())),
            "secrets",
            name,
        )
    }
    fn pod<'a>(&'a self, ns: &'a str, name: &'a str) -> LookupFuture<'a, ObjectMeta> {
        found(
            self.pods.get(&(ns.to_owned(), name.to_owned())),
            "pods",
            name,
        )
    }
    fn node<'a>(&'a self, name: &'a str) -> LookupFuture<'a, ObjectMeta> {
        found(self.nodes.get(name), "nodes", name)
    }
}

// ---------------------------------------------------------------------------------------------
// Claims

/// Every claim either validator reads (Go decodes the same JSON into the public claims and
/// the validator's private claims; one walk over the payload does both). The payload was
/// validated by the router's pre-check, so this is a walk over known-good JSON text: strings
/// borrow from the payload (unless escaped), nothing is re-validated. Type errors are
/// reported for the first offending claim in document order, with go-jose's texts.
#[derive(Default)]
struct PublicClaims<'a> {
    iss: Option<Cow<'a, str>>,
    sub: Option<Cow<'a, str>>,
    aud: Option<RawAudience<'a>>,
    exp: Option<NumericDate>,
    nbf: Option<NumericDate>,
    iat: Option<NumericDate>,
    jti: Option<Cow<'a, str>>,
    namespace: Option<Cow<'a, str>>,
    secret_name: Option<Cow<'a, str>>,
    sa_name: Option<Cow<'a, str>>,
    sa_uid: Option<Cow<'a, str>>,
    kubernetes: Option<KubernetesClaims<'a>>,
}

impl<'a> PublicClaims<'a> {
    fn decode(claims: RawObject<'a>) -> Result<Self, &'static str> {
        let mut c = PublicClaims::default();
        for (name, v) in claims.iter() {
            match &*name {
                "iss" => c.iss = go_str(v)?,
                "sub" => c.sub = go_str(v)?,
                // go-jose's `Audience` is not a pointer: `null` reaches its UnmarshalJSON,
                // which refuses it (unlike `exp`/`nbf`/`iat`, where `null` is absent).
                "aud" if v.is_null() => return Err(ERR_AUDIENCE),
                "aud" => c.aud = RawAudience::from_raw(v)?,
                "exp" => c.exp = NumericDate::from_raw(v)?,
                "nbf" => c.nbf = NumericDate::from_raw(v)?,
                "iat" => c.iat = NumericDate::from_raw(v)?,
                "jti" => c.jti = go_str(v)?,
                "kubernetes.io/serviceaccount/namespace" => c.namespace = go_str(v)?,
                "kubernetes.io/serviceaccount/secret.name" => c.secret_name = go_str(v)?,
                "kubernetes.io/serviceaccount/service-account.name" => c.sa_name = go_str(v)?,
                "kubernetes.io/serviceaccount/service-account.uid" => c.sa_uid = go_str(v)?,
                "kubernetes.io" => c.kubernetes = KubernetesClaims::decode(v)?,
                _ => {}
            }
        }
        Ok(c)
    }
}

/// The Go types kube-apiserver decodes service-account claims into, for go-jose's type-error
/// texts ([`type_error`]).
#[derive(Clone, Copy)]
enum GoType {
    String,
    /// `kubernetes.io` (`serviceaccount.kubernetes`).
    Kubernetes,
    /// An object reference (`serviceaccount.ref`).
    Ref,
    /// `kubernetes.io.attestations` (`map[string]authentication.AttestationValue`).
    Attestations,
    /// One attestation (`authentication.AttestationValue`, a `[]string`).
    AttestationValue,
}

/// go-jose's (`encoding/json`'s) text for a claim of the wrong JSON type, `json: cannot
/// unmarshal <JSON type> into Go value of type <Go type>`, from the first byte of the value.
fn type_error(first: Option<u8>, go: GoType) -> &'static str {
    macro_rules! texts {
        ($go:literal) => {
            [
                concat!("json: cannot unmarshal string into Go value of type ", $go),
                concat!("json: cannot unmarshal number into Go value of type ", $go),
                concat!("json: cannot unmarshal bool into Go value of type ", $go),
                concat!("json: cannot unmarshal array into Go value of type ", $go),
                concat!("json: cannot unmarshal object into Go value of type ", $go),
            ]
        };
    }
    const STRING: [&str; 5] = texts!("string");
    const KUBERNETES: [&str; 5] = texts!("serviceaccount.kubernetes");
    const REF: [&str; 5] = texts!("serviceaccount.ref");
    const ATTESTATIONS: [&str; 5] = texts!("map[string]authentication.AttestationValue");
    const ATTESTATION_VALUE: [&str; 5] = texts!("authentication.AttestationValue");
    let i = match first {
        Some(b'"') => 0,
        Some(b'-' | b'0'..=b'9') => 1,
        Some(b't' | b'f') => 2,
        Some(b'[') => 3,
        Some(b'{') => 4,
        // `null` is never a type error; anything else is not JSON the scanner accepted.
        _ => return ERR_CLAIM_TYPE,
    };
    match go {
        GoType::String => STRING[i],
        GoType::Kubernetes => KUBERNETES[i],
        GoType::Ref => REF[i],
        GoType::Attestations => ATTESTATIONS[i],
        GoType::AttestationValue => ATTESTATION_VALUE[i],
    }
}

/// A string claim (`null`: absent), any other type refused with go-jose's text.
fn go_str(v: RawJson<'_>) -> Result<Option<Cow<'_, str>>, &'static str> {
    opt_str(v).map_err(|_| type_error(v.text().as_bytes().first().copied(), GoType::String))
}

/// [`go_str`] for the value at the cursor.
fn cur_str<'a>(cur: &mut Cursor<'a>) -> Result<Option<Cow<'a, str>>, &'static str> {
    let first = cur.peek();
    cur.opt_str().map_err(|_| type_error(first, GoType::String))
}

/// An object claim at the cursor: `Ok(true)` for an object, `Ok(false)` for `null` (absent,
/// moved past); any other type is refused with go-jose's text for `go` (as Go's
/// `json.Unmarshal` into a struct pointer or a map).
fn is_object(cur: &mut Cursor<'_>, go: GoType) -> Result<bool, &'static str> {
    match cur.peek() {
        Some(b'{') => Ok(true),
        Some(b'n') => {
            cur.value();
            Ok(false)
        }
        first => Err(type_error(first, go)),
    }
}

#[derive(Default)]
struct Ref<'a> {
    name: Option<Cow<'a, str>>,
    uid: Option<Cow<'a, str>>,
}

impl<'a> Ref<'a> {
    fn read(cur: &mut Cursor<'a>) -> Result<Option<Self>, &'static str> {
        if !is_object(cur, GoType::Ref)? {
            return Ok(None);
        }
        let mut r = Ref::default();
        cur.members(|name, cur| {
            match name {
                "name" => r.name = cur_str(cur)?,
                "uid" => r.uid = cur_str(cur)?,
                _ => {}
            }
            Ok(())
        })?;
        Ok(Some(r))
    }
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
    fn uid(&self) -> &str {
        self.uid.as_deref().unwrap_or("")
    }
}

#[derive(Default)]
struct KubernetesClaims<'a> {
    namespace: Option<Cow<'a, str>>,
    serviceaccount: Option<Ref<'a>>,
    pod: Option<Ref<'a>>,
    secret: Option<Ref<'a>>,
    node: Option<Ref<'a>>,
    warnafter: Option<NumericDate>,
    /// A `validatingwebhookconfiguration` or `mutatingwebhookconfiguration` reference (an
    /// object, even `{}`; `null` is no reference).
    webhook_bound: bool,
}

impl<'a> KubernetesClaims<'a> {
    /// One pass over the `kubernetes.io` object: every nested value is read where it stands.
    fn decode(v: RawJson<'a>) -> Result<Option<Self>, &'static str> {
        let mut cur = Cursor::new(v);
        if !is_object(&mut cur, GoType::Kubernetes)? {
            return Ok(None);
        }
        let mut k = KubernetesClaims::default();
        cur.members(|name, cur| {
            match name {
                "namespace" => k.namespace = cur_str(cur)?,
                "serviceaccount" => k.serviceaccount = Ref::read(cur)?,
                "pod" => k.pod = Ref::read(cur)?,
                "secret" => k.secret = Ref::read(cur)?,
                "node" => k.node = Ref::read(cur)?,
                // Drives the stale/valid token counters (the stale-token audit annotation is
                // not produced by this crate); a wrong type is an error, as in go-jose.
                "warnafter" => k.warnafter = NumericDate::from_raw(cur.value())?,
                "validatingwebhookconfiguration" | "mutatingwebhookconfiguration" => {
                    k.webhook_bound |= Ref::read(cur)?.is_some();
                }
                // Read by kube-apiserver only for webhook-bound tokens, but decoded (so
                // type-checked: a map of string lists) for every bound token.
                "attestations" => check_attestations(cur)?,
                _ => {}
            }
            Ok(())
        })?;
        Ok(Some(k))
    }
}

/// `kubernetes.io.attestations` as Go decodes it (`map[string]AttestationValue`, a value being
/// `[]string`): an object of arrays of strings, or `null` anywhere Go accepts `null`.
fn check_attestations(cur: &mut Cursor<'_>) -> Result<(), &'static str> {
    if !is_object(cur, GoType::Attestations)? {
        return Ok(());
    }
    cur.members(|_, cur| {
        match cur.peek() {
            Some(b'n') => {
                cur.value();
            }
            Some(b'[') => {
                let list = cur.value();
                for item in list.as_array().into_iter().flatten() {
                    if !(item.is_null() || item.as_str().is_some()) {
                        let first = item.text().as_bytes().first().copied();
                        return Err(type_error(first, GoType::String));
                    }
                }
            }
            first => return Err(type_error(first, GoType::AttestationValue)),
        }
        Ok(())
    })
}

/// What a validated token says about its service account (Kubernetes `ServiceAccountInfo`).
///
/// ```
/// use kube_authn::token::service_account::ServiceAccountInfo;
/// let info = ServiceAccountInfo { namespace: "ns".into(), name: "sa".into(), uid: "u".into(), ..Default::default() };
/// let user = info.user_info();
/// assert_eq!(user.name(), "system:serviceaccount:ns:sa");
/// assert_eq!(user.groups().collect::<Vec<_>>(), ["system:serviceaccounts", "system:serviceaccounts:ns"]);
/// assert!(user.extra().is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceAccountInfo {
    /// Namespace.
    pub namespace: String,
    /// Service-account name.
    pub name: String,
    /// Service-account uid.
    pub uid: String,
    /// Bound pod name (from the claims).
    pub pod_name: String,
    /// Bound pod uid (from the claims).
    pub pod_uid: String,
    /// Bound node name.
    pub node_name: String,
    /// Bound node uid.
    pub node_uid: String,
    /// `JTI=<jti>` or empty.
    pub credential_id: String,
}

impl ServiceAccountInfo {
    /// The user Kubernetes builds (`serviceaccount.UserInfo`): extras only when set (pod
    /// name and uid both required; node uid requires node name).
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountInfo;
    /// let info = ServiceAccountInfo { namespace: "n".into(), name: "s".into(), node_uid: "x".into(), ..Default::default() };
    /// assert!(info.user_info().extra().is_empty()); // node uid without node name: nothing
    /// ```
    pub fn user_info(&self) -> UserInfo {
        InfoRef::from(self).user_info()
    }
}

impl<'c> From<&'c ServiceAccountInfo> for InfoRef<'c> {
    fn from(i: &'c ServiceAccountInfo) -> Self {
        InfoRef {
            namespace: &i.namespace,
            name: &i.name,
            uid: &i.uid,
            pod_name: &i.pod_name,
            pod_uid: &i.pod_uid,
            node_name: &i.node_name,
            node_uid: &i.node_uid,
            credential_id: ["", &i.credential_id],
        }
    }
}

/// A [`ServiceAccountInfo`] borrowed from the token's payload: the request path validates
/// the claims and builds the user straight from the payload text (each string is copied
/// once, into the user); only the lookup path makes an owned [`ServiceAccountInfo`].
#[derive(Clone, Copy, Default)]
struct InfoRef<'c> {
    namespace: &'c str,
    name: &'c str,
    uid: &'c str,
    pod_name: &'c str,
    pod_uid: &'c str,
    node_name: &'c str,
    node_uid: &'c str,
    /// The credential id in two parts (`JTI=` and the jti), empty when the second is.
    credential_id: [&'c str; 2],
}

impl InfoRef<'_> {
    fn to_owned_info(self) -> ServiceAccountInfo {
        let [prefix, id] = self.credential_id;
        ServiceAccountInfo {
            namespace: self.namespace.to_owned(),
            name: self.name.to_owned(),
            uid: self.uid.to_owned(),
            pod_name: self.pod_name.to_owned(),
            pod_uid: self.pod_uid.to_owned(),
            node_name: self.node_name.to_owned(),
            node_uid: self.node_uid.to_owned(),
            credential_id: if id.is_empty() {
                String::new()
            } else {
                [prefix, id].concat()
            },
        }
    }

    /// Kubernetes' `serviceaccount.UserInfo` with the fewest allocations: the namespace
    /// group, the name, the uid and the extra values are written into one scratch string;
    /// the group is shared from it and the rest becomes the user's one text (the extra map is
    /// built from it only if someone reads it: [`UserInfo::extra`]); `system:serviceaccounts`
    /// is one static shared string. Six allocations for a bound token with pod, node and
    /// `jti`, whatever it carries.
    fn user_info(&self) -> UserInfo {
        static ALL: LazyLock<SharedStr> =
            LazyLock::new(|| SharedStr::from(ALL_SERVICE_ACCOUNTS_GROUP));
        let ns = self.namespace;
        let [prefix, id] = self.credential_id;
        let mut text = String::with_capacity(
            ALL_SERVICE_ACCOUNTS_GROUP.len()
                + SERVICE_ACCOUNT_USERNAME_PREFIX.len()
                + 2 * (ns.len() + 1)
                + self.name.len()
                + self.uid.len()
                + self.pod_name.len()
                + self.pod_uid.len()
                + self.node_name.len()
                + self.node_uid.len()
                + prefix.len()
                + id.len(),
        );
        text.push_str(ALL_SERVICE_ACCOUNTS_GROUP);
        text.push(':');
        text.push_str(ns);
        let group_end = text.len();
        text.push_str(SERVICE_ACCOUNT_USERNAME_PREFIX);
        text.push_str(ns);
        text.push(':');
        text.push_str(self.name);
        let name_len = text.len() - group_end;
        text.push_str(self.uid);
        let uid_end = text.len() - group_end;
        let mut values: [(TextKey, std::ops::Range<usize>); 5] =
            std::array::from_fn(|_| (TextKey::CredentialId, 0..0));
        let mut n = 0;
        let mut put = |key: TextKey, parts: [&str; 2]| {
            let start = text.len() - group_end;
            text.push_str(parts[0]);
            text.push_str(parts[1]);
            values[n] = (key, start..text.len() - group_end);
            n += 1;
        };
        if !self.pod_name.is_empty() && !self.pod_uid.is_empty() {
            put(TextKey::PodName, [self.pod_name, ""]);
            put(TextKey::PodUid, [self.pod_uid, ""]);
        }
        if !self.node_name.is_empty() {
            put(TextKey::NodeName, [self.node_name, ""]);
            if !self.node_uid.is_empty() {
                put(TextKey::NodeUid, [self.node_uid, ""]);
            }
        }
        if !id.is_empty() {
            put(TextKey::CredentialId, [prefix, id]);
        }
        let groups: Arc<[SharedStr]> =
            Arc::from([ALL.clone(), SharedStr::from(&text[..group_end])]);
        UserInfo::from_text(&text[group_end..], name_len, uid_end, groups, &values[..n])
    }
}

/// Kubernetes `serviceaccount.SplitUsername`: `system:serviceaccount:<ns>:<name>` with a valid
/// namespace (DNS-1123 label) and service-account name (DNS-1123 subdomain).
///
/// ```
/// use kube_authn::token::service_account::split_username;
/// assert_eq!(split_username("system:serviceaccount:foo:bar"), Some(("foo", "bar")));
/// assert_eq!(split_username("system:serviceaccount::bar"), None);
/// assert_eq!(split_username("system:serviceaccount:foo:bar:baz"), None);
/// ```
pub fn split_username(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_USERNAME_PREFIX)?;
    let (ns, name) = rest.split_once(':')?;
    if name.contains(':') || !is_dns1123_label(ns) || !is_dns1123_subdomain(name) {
        return None;
    }
    Some((ns, name))
}

/// Kubernetes' `IsDNS1123Label`: at most 63 characters of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns1123_label(s: &str) -> bool {
    s.len() <= 63 && is_label_shape(s)
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, of any length.
fn is_label_shape(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Kubernetes' `IsDNS1123Subdomain` (what `ValidateServiceAccountName` is): at most 253
/// characters, dot-separated labels of the label shape. Unlike a DNS name, a label here may be
/// longer than 63 characters: Kubernetes' pattern does not bound them.
fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label_shape)
}

// ---------------------------------------------------------------------------------------------
// Authenticator

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Legacy,
    Bound,
}

/// Authenticates service-account JWTs signed with the cluster's service-account keys: either
/// the legacy (secret-based) or the bound (TokenRequest) kind. The validation steps are in the
/// [module docs](self).
///
/// A legacy token, minted here with an ES256 key, checked against the secret that holds it:
///
/// ```
/// use std::sync::Arc;
/// use aws_lc_rs::encoding::AsDer;
/// use aws_lc_rs::rand::SystemRandom;
/// use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
/// use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD as B64};
/// use kube_authn::authenticator::{Context, TokenAuthenticator};
/// use kube_authn::jwt::key::PublicKey;
/// use kube_authn::token::service_account::*;
///
/// // The service-account signing key (`--service-account-key-file` holds its public half).
/// let rng = SystemRandom::new();
/// let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
/// let public = PublicKey::from_spki_der(pair.public_key().as_der().unwrap().as_ref()).unwrap();
/// let keys = vec![Arc::new(public)];
/// let claims = r#"{"iss":"kubernetes/serviceaccount","sub":"system:serviceaccount:ci:builder",
///     "kubernetes.io/serviceaccount/namespace":"ci",
///     "kubernetes.io/serviceaccount/secret.name":"builder-token",
///     "kubernetes.io/serviceaccount/service-account.name":"builder",
///     "kubernetes.io/serviceaccount/service-account.uid":"7f3e"}"#;
/// let input = format!("{}.{}", B64.encode(r#"{"alg":"ES256"}"#), B64.encode(claims));
/// let sig = pair.sign(&rng, input.as_bytes()).unwrap();
/// let token = format!("{input}.{}", B64.encode(sig.as_ref()));
///
/// // What the API server holds: the service account and its token secret.
/// let meta = |uid: &str| ObjectMeta { uid: uid.into(), deletion_timestamp: None };
/// let mut lookup = StaticLookup::default();
/// lookup.service_accounts.insert(
///     ("ci".into(), "builder".into()),
///     ServiceAccount { meta: meta("7f3e"), secrets: vec!["builder-token".into()] },
/// );
/// let secret = Secret { meta: meta("s1"), token: Some(token.clone().into_bytes()), invalid_since: None };
/// lookup.secrets.insert(("ci".into(), "builder-token".into()), secret);
/// let lookup = Arc::new(lookup);
///
/// let sa = ServiceAccountAuthenticator::legacy(keys.clone(), Default::default(), Some(lookup.clone()));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let ctx = Context::default();
/// let user = sa.authenticate_token(&token, &ctx).await.unwrap().unwrap().user;
/// assert_eq!(user.name(), "system:serviceaccount:ci:builder");
/// assert_eq!(user.uid(), "7f3e");
/// assert_eq!(user.groups().collect::<Vec<_>>(), ["system:serviceaccounts", "system:serviceaccounts:ci"]);
///
/// // A changed signature: go-jose's error text.
/// let forged = format!("{input}.{}", B64.encode([0u8; 64]));
/// let err = sa.authenticate_token(&forged, &ctx).await.unwrap_err();
/// assert_eq!(err.to_string(), ERR_CRYPTO);
///
/// // The secret is gone: the token is no longer valid.
/// let mut emptied = (*lookup).clone();
/// emptied.secrets.clear();
/// let sa = ServiceAccountAuthenticator::legacy(keys, Default::default(), Some(Arc::new(emptied)));
/// let err = sa.authenticate_token(&token, &ctx).await.unwrap_err();
/// assert_eq!(err.to_string(), ERR_LEGACY_INVALIDATED);
/// # });
/// ```
pub struct ServiceAccountAuthenticator {
    kind: Kind,
    issuers: Vec<Box<str>>,
    keys: KeySet,
    implicit_audiences: Audiences,
    lookup: Option<Arc<dyn ServiceAccountLookup>>,
    algorithms: AlgorithmSet,
    clock: Arc<dyn Clock>,
    metrics: &'static ServiceAccountMetrics,
}

impl fmt::Debug for ServiceAccountAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccountAuthenticator")
            .field("kind", &self.kind)
            .field("issuers", &self.issuers)
            .field("keys", &self.keys.keys().len())
            .field("implicit_audiences", &self.implicit_audiences)
            .field("lookup", &self.lookup.is_some())
            .finish()
    }
}

impl ServiceAccountAuthenticator {
    /// The legacy authenticator (issuer `kubernetes/serviceaccount`). `lookup` = `None` is
    /// `--service-account-lookup=false`.
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountAuthenticator;
    /// let a = ServiceAccountAuthenticator::legacy(vec![], ["api"].into(), None);
    /// assert_eq!(a.issuers().collect::<Vec<_>>(), ["kubernetes/serviceaccount"]);
    /// ```
    pub fn legacy(
        keys: Vec<Arc<PublicKey>>,
        implicit_audiences: Audiences,
        lookup: Option<Arc<dyn ServiceAccountLookup>>,
    ) -> Self {
        Self::new(
            Kind::Legacy,
            vec![LEGACY_ISSUER.into()],
            keys,
            implicit_audiences,
            lookup,
        )
    }

    /// The bound-token authenticator for `issuers` (all accepted). Kubernetes always looks
    /// bound tokens up; `lookup = None` trusts the claims (a documented difference for
    /// embedders without API access).
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountAuthenticator;
    /// let a = ServiceAccountAuthenticator::bound(vec!["https://k".into()], vec![], Default::default(), None);
    /// assert_eq!(a.issuers().count(), 1);
    /// ```
    pub fn bound(
        issuers: Vec<String>,
        keys: Vec<Arc<PublicKey>>,
        implicit_audiences: Audiences,
        lookup: Option<Arc<dyn ServiceAccountLookup>>,
    ) -> Self {
        Self::new(
            Kind::Bound,
            issuers.into_iter().map(Into::into).collect(),
            keys,
            implicit_audiences,
            lookup,
        )
    }

    fn new(
        kind: Kind,
        issuers: Vec<Box<str>>,
        keys: Vec<Arc<PublicKey>>,
        implicit_audiences: Audiences,
        lookup: Option<Arc<dyn ServiceAccountLookup>>,
    ) -> Self {
        Self {
            kind,
            issuers,
            keys: KeySet::by_key_id(keys),
            implicit_audiences,
            lookup,
            algorithms: AlgorithmSet::KUBERNETES,
            clock: Arc::new(SystemClock),
            metrics: &SERVICE_ACCOUNT_METRICS,
        }
    }

    /// Counts into `metrics` instead of the process-wide [`SERVICE_ACCOUNT_METRICS`].
    ///
    /// ```
    /// use kube_authn::token::service_account::{ServiceAccountAuthenticator, ServiceAccountMetrics};
    /// static MINE: ServiceAccountMetrics = ServiceAccountMetrics::new();
    /// let a = ServiceAccountAuthenticator::legacy(vec![], Default::default(), None).with_metrics(&MINE);
    /// ```
    pub fn with_metrics(mut self, metrics: &'static ServiceAccountMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Replaces the clock (tests).
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountAuthenticator;
    /// use kube_authn::jwt::FixedClock;
    /// let a = ServiceAccountAuthenticator::legacy(vec![], Default::default(), None)
    ///     .with_clock(std::sync::Arc::new(FixedClock::new(0)));
    /// ```
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Replaces the algorithm allow-list (default: the nine Kubernetes algorithms).
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountAuthenticator;
    /// use kube_authn::jwt::alg::AlgorithmSet;
    /// let a = ServiceAccountAuthenticator::legacy(vec![], Default::default(), None)
    ///     .with_algorithms(AlgorithmSet::RS256_ONLY);
    /// ```
    pub fn with_algorithms(mut self, algorithms: AlgorithmSet) -> Self {
        self.algorithms = algorithms;
        self
    }

    /// The accepted issuers.
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountAuthenticator;
    /// let a = ServiceAccountAuthenticator::legacy(vec![], Default::default(), None);
    /// assert_eq!(a.issuers().next(), Some("kubernetes/serviceaccount"));
    /// ```
    pub fn issuers(&self) -> impl Iterator<Item = &str> + '_ {
        self.issuers.iter().map(|s| &**s)
    }

    /// Everything up to (not including) the lookups: signature, claims, audiences, time.
    /// Without a lookup, the answer; with one, what the lookups need (owned).
    fn check(&self, jwt: &UntrustedJwt<'_>, ctx: &Context) -> Result<Checked, Error> {
        let header = jwt.header().map_err(|e| match e {
            // go-jose parses a `crit` header and refuses it when verifying: its crypto text.
            HeaderError::UnsupportedCritical => Error::msg(ERR_CRYPTO),
            e => Error::new(ErrorKind::MalformedCredential, e.to_string()),
        })?;
        match verify_signature(jwt, header, self.keys.find(header.kid()), self.algorithms) {
            Ok(_) => {}
            Err(SignatureError::NoKeys) => return Err(Error::msg(ERR_NO_KEYS)),
            Err(_) => return Err(Error::msg(ERR_CRYPTO)),
        }
        // A payload with a repeated member name reaches this point (as in kube-apiserver,
        // whose go-jose refuses it after the signature), with go-jose's text.
        let claims = jwt.claims().ok_or_else(|| match jwt.claims_error() {
            Some(why) => Error::new(ErrorKind::InvalidCredential, why),
            None => Error::msg("json: cannot unmarshal claims: malformed JSON"),
        })?;
        let c = PublicClaims::decode(claims).map_err(Error::msg)?;
        let audiences = self.audiences(&c, ctx)?;
        let mut warn = None;
        let (info, secret, bound_refs) = match self.kind {
            Kind::Legacy => {
                let info = validate_legacy_claims(&c)?;
                (info, c.secret_name.as_deref(), BoundRefs::default())
            }
            Kind::Bound => {
                // Go reads the clock once, at the start of the validator.
                let now = self.clock.now_unix_nanos();
                self.validate_bound_time(&c)?;
                // `warnafter` set and non-zero: stale once `now.After(warnafter)`, with go-jose's
                // reading of the value (a float, then `time.Unix`, which wraps a value past Go's
                // time range into the far past: stale).
                warn = c
                    .kubernetes
                    .as_ref()
                    .and_then(|k| k.warnafter)
                    .filter(|w| w.0 != 0)
                    .map(|w| match w.go_jose_unix() {
                        Some(at) if !before(at, now) => Counter::Valid,
                        _ => Counter::Stale,
                    });
                let k = c.kubernetes.as_ref();
                let ns = k.and_then(|k| k.namespace.as_deref()).unwrap_or("");
                let sa = k.and_then(|k| k.serviceaccount.as_ref());
                let (name, uid) = sa.map_or(("", ""), |r| (r.name(), r.uid()));
                // kube-apiserver looks the service account up (its informer cache, then its
                // loopback client), and no object has an empty name or namespace, or one that
                // is no path segment: client-go refuses those before any request (the namespace
                // first), and without a namespace the GET has no route. Those are the answers,
                // given here without asking anyone (stricter in one case: `client_go_get`).
                client_go_get(ns, name).map_err(|m| Error::new(ErrorKind::InvalidCredential, m))?;
                if ns.is_empty() {
                    return Err(Error::msg(ERR_NO_ROUTE));
                }
                let pod = k.and_then(|k| k.pod.as_ref());
                let node = k.and_then(|k| k.node.as_ref());
                let info = InfoRef {
                    namespace: ns,
                    name,
                    uid,
                    pod_name: pod.map_or("", Ref::name),
                    pod_uid: pod.map_or("", Ref::uid),
                    node_name: node.map_or("", Ref::name),
                    node_uid: node.map_or("", Ref::uid),
                    credential_id: ["JTI=", c.jti.as_deref().unwrap_or("")],
                };
                let refs = BoundRefs {
                    secret: k
                        .and_then(|k| k.secret.as_ref())
                        .map(|r| (r.name().to_owned(), r.uid().to_owned())),
                    pod: pod.is_some(),
                    node: node.is_some(),
                    webhook: k.is_some_and(|k| k.webhook_bound),
                };
                // Without lookups this is where kube-apiserver's check of webhook-bound
                // tokens comes (it follows the lookups).
                if refs.webhook && self.lookup.is_none() {
                    return Err(Error::msg(ERR_WEBHOOK_BOUND));
                }
                (info, None, refs)
            }
        };
        if self.lookup.is_none() {
            if let Some(counter) = warn {
                self.metrics.inc(counter);
            }
            let user = Arc::new(info.user_info());
            return Ok(Checked::Done(Response::new(user).with_audiences(audiences)));
        }
        Ok(Checked::Lookup(Box::new(Pending {
            audiences,
            info: info.to_owned_info(),
            secret: secret.map(str::to_owned),
            bound_refs,
            warn,
        })))
    }

    /// Kubernetes' audience rule: no `aud` (or `[]`) means the implicit API audiences; the
    /// answer is the requested audiences the token has, in requested order (the requested
    /// list itself, shared, when the token has them all: no allocation). Only a context with
    /// no audiences requests the implicit ones: a present but empty list requests none, so the
    /// intersection is empty (apiserver's `AudiencesFrom` answers `ok` for it).
    fn audiences(&self, public: &PublicClaims<'_>, ctx: &Context) -> Result<Audiences, Error> {
        let iss = public.iss.as_deref().unwrap_or("");
        if !self.issuers.iter().any(|i| **i == *iss) {
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                format!("token issuer {} is invalid", go_quote(iss)),
            ));
        }
        let requested = ctx.audiences().unwrap_or(&self.implicit_audiences);
        let aud = public.aud.filter(|a| !a.is_empty());
        if aud.is_none() {
            // Kubernetes counts a legacy (audience-less) token before the audience check.
            self.metrics.inc(Counter::LegacyTokens);
        }
        let auds = match aud {
            None => self.implicit_audiences.intersect(requested),
            Some(a) if requested.iter().all(|r| a.contains(r)) => requested.clone(),
            Some(a) => Audiences::new(requested.iter().filter(|r| a.contains(r))),
        };
        if auds.is_empty() && !self.implicit_audiences.is_empty() {
            let token_auds = match aud {
                None => go_quote_list(self.implicit_audiences.iter()),
                Some(a) => go_quote_list(a.iter()),
            };
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                format!(
                    "token audiences {token_auds} is invalid for the target audiences {}",
                    go_quote_list(requested.iter())
                ),
            ));
        }
        Ok(auds)
    }

    fn validate_bound_time(&self, c: &PublicClaims<'_>) -> Result<(), Error> {
        let now = self.clock.now_unix();
        if let Some(NumericDate(nbf)) = c.nbf
            && now.saturating_add(LEEWAY_SECONDS) < nbf
        {
            return Err(Error::msg("service account token is not valid yet"));
        }
        if let Some(exp) = c.exp {
            // Go: `now.Add(-leeway).After(exp)`, to the nanosecond, with go-jose's reading of
            // `exp` (a float, then `time.Unix`, which wraps to the far past when too large).
            let (secs, nanos) = self.clock.now_unix_nanos();
            let expired = match exp.go_jose_unix() {
                None => true,
                Some(exp) => before(exp, (secs.saturating_sub(LEEWAY_SECONDS), nanos)),
            };
            if expired {
                return Err(Error::msg("service account token has expired"));
            }
        }
        if let Some(NumericDate(iat)) = c.iat
            && now.saturating_add(LEEWAY_SECONDS) < iat
        {
            return Err(Error::msg("service account token is issued in the future"));
        }
        Ok(())
    }

    async fn lookup_legacy(
        &self,
        lookup: &dyn ServiceAccountLookup,
        token: &str,
        info: &ServiceAccountInfo,
        secret_name: &str,
    ) -> Result<(), Error> {
        let invalidated = || Error::msg(ERR_LEGACY_INVALIDATED);
        let lookup_failed = |e: LookupError| lookup_failed(e, ERR_LEGACY_INVALIDATED);
        let secret = lookup
            .secret(&info.namespace, secret_name)
            .await
            .map_err(lookup_failed)?;
        if secret.meta.deletion_timestamp.is_some() {
            return Err(invalidated());
        }
        let stored = secret.token.as_deref().unwrap_or(&[]);
        // Constant time over the contents (aws-lc's `CRYPTO_memcmp`, a word at a time; the
        // byte-wise `subtle` comparison cost ≈ 8.5 k instructions for a 870-byte token), as
        // Go's `subtle.ConstantTimeCompare`: a length difference alone is not hidden.
        if aws_lc_rs::constant_time::verify_slices_are_equal(stored, token.as_bytes()).is_err() {
            return Err(Error::msg("Token does not match server's copy"));
        }
        let sa = lookup
            .service_account(&info.namespace, &info.name)
            .await
            .map_err(|e| Error::new(lookup_kind(&e), e.to_string()))?;
        if sa.meta.deletion_timestamp.is_some() {
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                format!(
                    "ServiceAccount {}/{} has been deleted",
                    info.namespace, info.name
                ),
            ));
        }
        if sa.meta.uid != info.uid {
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                format!(
                    "ServiceAccount UID ({}) does not match claim ({})",
                    sa.meta.uid, info.uid
                ),
            ));
        }
        if secret
            .invalid_since
            .as_deref()
            .is_some_and(|s| !s.is_empty())
        {
            self.metrics.inc(Counter::InvalidLegacyAuto);
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                format!(
                    "the token in secret {}/{} for service account {}/{} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '{}' label from the secret to temporarily allow use of this token",
                    info.namespace,
                    secret_name,
                    info.namespace,
                    info.name,
                    LEGACY_TOKEN_INVALID_SINCE_LABEL
                ),
            ));
        }
        // Auto-generated: the service account lists the secret (its token controller made it).
        self.metrics
            .inc(if sa.secrets.iter().any(|s| s == secret_name) {
                Counter::LegacyAuto
            } else {
                Counter::LegacyManual
            });
        Ok(())
    }

    async fn lookup_bound(
        &self,
        lookup: &dyn ServiceAccountLookup,
        info: &mut ServiceAccountInfo,
        refs: &BoundRefs,
    ) -> Result<(), Error> {
        // Go: `deletionTimestamp.Before(now.Add(-leeway))`, to the nanosecond.
        let (secs, nanos) = self.clock.now_unix_nanos();
        let deleted = |m: &ObjectMeta| {
            m.deletion_timestamp
                .is_some_and(|t| before(t, (secs.saturating_sub(LEEWAY_SECONDS), nanos)))
        };
        let invalidated = || Error::msg(ERR_INVALIDATED);
        let lookup_failed = |e: LookupError| lookup_failed(e, ERR_INVALIDATED);
        let sa = lookup
            .service_account(&info.namespace, &info.name)
            .await
            .map_err(|e| Error::new(lookup_kind(&e), e.to_string()))?;
        if sa.meta.uid != info.uid {
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                format!(
                    "service account UID ({}) does not match claim ({})",
                    sa.meta.uid, info.uid
                ),
            ));
        }
        if deleted(&sa.meta) {
            return Err(Error::new(
                ErrorKind::InvalidCredential,
                format!(
                    "service account {}/{} has been deleted",
                    info.namespace, info.name
                ),
            ));
        }
        if let Some((name, uid)) = &refs.secret {
            let s = lookup
                .secret(&info.namespace, name)
                .await
                .map_err(lookup_failed)?;
            if s.meta.uid != *uid {
                return Err(Error::new(
                    ErrorKind::InvalidCredential,
                    format!(
                        "secret UID ({}) does not match service account secret ref claim ({uid})",
                        s.meta.uid
                    ),
                ));
            }
            if deleted(&s.meta) {
                return Err(invalidated());
            }
        }
        if refs.pod {
            let p = lookup
                .pod(&info.namespace, &info.pod_name)
                .await
                .map_err(lookup_failed)?;
            if p.uid != info.pod_uid {
                return Err(Error::new(
                    ErrorKind::InvalidCredential,
                    format!(
                        "pod UID ({}) does not match service account pod ref claim ({})",
                        p.uid, info.pod_uid
                    ),
                ));
            }
            if deleted(&p) {
                return Err(invalidated());
            }
        } else if refs.node {
            let n = lookup.node(&info.node_name).await.map_err(lookup_failed)?;
            if n.uid != info.node_uid {
                return Err(Error::new(
                    ErrorKind::InvalidCredential,
                    format!(
                        "node UID ({}) does not match service account node ref claim ({})",
                        n.uid, info.node_uid
                    ),
                ));
            }
            if deleted(&n) {
                return Err(invalidated());
            }
        }
        if refs.webhook {
            return Err(Error::msg(ERR_WEBHOOK_BOUND));
        }
        Ok(())
    }

    fn respond(info: &ServiceAccountInfo, audiences: Audiences) -> AuthResult {
        Ok(Some(
            Response::new(Arc::new(info.user_info())).with_audiences(audiences),
        ))
    }
}

#[derive(Default)]
struct BoundRefs {
    secret: Option<(String, String)>,
    pod: bool,
    node: bool,
    /// Bound to a webhook configuration: refused ([`ERR_WEBHOOK_BOUND`]) after the lookups.
    webhook: bool,
}

/// What [`ServiceAccountAuthenticator::check`] decided.
enum Checked {
    /// No lookup configured: the answer.
    Done(Response),
    /// The lookups still to make (outlive the token's payload, so owned; boxed: the lookup
    /// path allocates its future anyway).
    Lookup(Box<Pending>),
}

struct Pending {
    audiences: Audiences,
    info: ServiceAccountInfo,
    secret: Option<String>,
    bound_refs: BoundRefs,
    /// The stale/valid counter to bump if the lookups accept the token.
    warn: Option<Counter>,
}

fn validate_legacy_claims<'c>(c: &'c PublicClaims<'_>) -> Result<InfoRef<'c>, Error> {
    fn present<'x>(v: &'x Option<Cow<'_, str>>) -> Option<&'x str> {
        v.as_deref().filter(|s| !s.is_empty())
    }
    let sub = present(&c.sub).ok_or(Error::msg("sub claim is missing"))?;
    let ns = present(&c.namespace).ok_or(Error::msg("namespace claim is missing"))?;
    present(&c.secret_name).ok_or(Error::msg("secretName claim is missing"))?;
    let name = present(&c.sa_name).ok_or(Error::msg("serviceAccountName claim is missing"))?;
    let uid = present(&c.sa_uid).ok_or(Error::msg("serviceAccountUID claim is missing"))?;
    match split_username(sub) {
        Some((sub_ns, sub_name)) if sub_ns == ns && sub_name == name => {}
        _ => return Err(Error::msg("sub claim is invalid")),
    }
    Ok(InfoRef {
        namespace: ns,
        name,
        uid,
        ..Default::default()
    })
}

impl JwtAuthenticator for ServiceAccountAuthenticator {
    fn authenticate_jwt<'a>(
        &'a self,
        jwt: UntrustedJwt<'a>,
        token: &'a str,
        ctx: &'a Context,
    ) -> AuthFuture<'a> {
        let pending = match self.check(&jwt, ctx) {
            Ok(Checked::Done(response)) => return AuthFuture::ready(Ok(Some(response))),
            Ok(Checked::Lookup(p)) => p,
            Err(e) => return AuthFuture::ready(Err(e)),
        };
        drop(jwt);
        let Some(lookup) = self.lookup.as_deref() else {
            return AuthFuture::ready(Self::respond(&pending.info, pending.audiences));
        };
        AuthFuture::new(async move {
            let mut pending = *pending;
            match self.kind {
                Kind::Legacy => {
                    let secret = pending.secret.as_deref().unwrap_or("");
                    self.lookup_legacy(lookup, token, &pending.info, secret)
                        .await?;
                }
                Kind::Bound => {
                    let refs = std::mem::take(&mut pending.bound_refs);
                    self.lookup_bound(lookup, &mut pending.info, &refs).await?;
                    if let Some(counter) = pending.warn {
                        self.metrics.inc(counter);
                    }
                }
            }
            Self::respond(&pending.info, pending.audiences)
        })
    }
}

impl TokenAuthenticator for ServiceAccountAuthenticator {
    fn authenticate_token<'a>(&'a self, token: &'a str, ctx: &'a Context) -> AuthFuture<'a> {
        let Ok(jwt) = UntrustedJwt::parse(token) else {
            return AuthFuture::ready(Ok(None));
        };
        if !jwt
            .issuer()
            .is_some_and(|iss| self.issuers.iter().any(|i| **i == *iss))
        {
            return AuthFuture::ready(Ok(None));
        }
        self.authenticate_jwt(jwt, token, ctx)
    }
}

// ---------------------------------------------------------------------------------------------
// Flags

/// kube-apiserver's service-account flags.
///
/// ```
/// use kube_authn::token::service_account::ServiceAccountOptions;
/// let o = ServiceAccountOptions { issuers: vec!["https://k".into()], ..Default::default() };
/// assert_eq!(o.api_audiences(), vec!["https://k".to_string()]);
/// ```
#[derive(Clone, Debug)]
pub struct ServiceAccountOptions {
    /// `--service-account-key-file` (repeatable).
    pub key_files: Vec<std::path::PathBuf>,
    /// `--service-account-issuer` (repeatable; the first one signs, all are accepted).
    pub issuers: Vec<String>,
    /// `--api-audiences` (empty: the issuers).
    pub api_audiences: Vec<String>,
    /// `--service-account-lookup` (default true).
    pub lookup: bool,
}

impl Default for ServiceAccountOptions {
    fn default() -> Self {
        Self {
            key_files: Vec::new(),
            issuers: Vec::new(),
            api_audiences: Vec::new(),
            lookup: true,
        }
    }
}

impl ServiceAccountOptions {
    /// `--api-audiences`, defaulted to the issuers when unset (as kube-apiserver does).
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountOptions;
    /// let o = ServiceAccountOptions { api_audiences: vec!["api".into()], issuers: vec!["i".into()], ..Default::default() };
    /// assert_eq!(o.api_audiences(), vec!["api".to_string()]);
    /// ```
    pub fn api_audiences(&self) -> Vec<String> {
        if self.api_audiences.is_empty() {
            self.issuers.clone()
        } else {
            self.api_audiences.clone()
        }
    }

    /// Reads every key file, in order (Kubernetes concatenates all keys of all files).
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountOptions;
    /// let o = ServiceAccountOptions { key_files: vec!["/nonexistent".into()], ..Default::default() };
    /// assert!(o.load_keys().unwrap_err().to_string().starts_with("error reading public key file /nonexistent"));
    /// ```
    pub fn load_keys(&self) -> Result<Vec<Arc<PublicKey>>, ConfigError> {
        let mut keys = Vec::new();
        for path in &self.key_files {
            let data = std::fs::read(path).map_err(|e| {
                ConfigError::new(format!(
                    "error reading public key file {}: {e}",
                    path.display()
                ))
            })?;
            let mut k = parse_pem_keys(&data).map_err(|e| {
                ConfigError::new(format!(
                    "error reading public key file {}: {e}",
                    path.display()
                ))
            })?;
            keys.append(&mut k);
        }
        Ok(keys)
    }

    /// Builds the legacy and bound authenticators and registers them on `router` (legacy
    /// first, as kube-apiserver orders them). Validation: `service-account-issuer is a
    /// required flag` when keys are given without issuers.
    ///
    /// ```
    /// use kube_authn::token::service_account::ServiceAccountOptions;
    /// use kube_authn::jwt::router::IssuerRouter;
    /// let mut r = IssuerRouter::new();
    /// let err = ServiceAccountOptions { key_files: vec!["k.pem".into()], ..Default::default() }
    ///     .register(&mut r, None).unwrap_err();
    /// assert_eq!(err.to_string(), "service-account-issuer is a required flag");
    /// ```
    pub fn register(
        &self,
        router: &mut IssuerRouter,
        lookup: Option<Arc<dyn ServiceAccountLookup>>,
    ) -> Result<(), ConfigError> {
        if self.issuers.is_empty() {
            return Err(ConfigError::new(ERR_ISSUER_REQUIRED));
        }
        if self.key_files.is_empty() {
            return Err(ConfigError::new(ERR_KEYS_REQUIRED));
        }
        let keys = self.load_keys()?;
        let auds = Audiences::new(self.api_audiences());
        let legacy_lookup = if self.lookup { lookup.clone() } else { None };
        let legacy = Arc::new(ServiceAccountAuthenticator::legacy(
            keys.clone(),
            auds.clone(),
            legacy_lookup,
        ));
        router.add(LEGACY_ISSUER, legacy);
        let bound = Arc::new(ServiceAccountAuthenticator::bound(
            self.issuers.clone(),
            keys,
            auds,
            lookup,
        ));
        for iss in &self.issuers {
            router.add(iss.as_str(), bound.clone());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jwt::json::{ERR_NUMERIC_DATE, validate_object};
    use crate::user::CREDENTIAL_ID_KEY;

    fn decode(doc: &str) -> Result<PublicClaims<'_>, &'static str> {
        PublicClaims::decode(validate_object(doc.as_bytes()).expect("valid JSON"))
    }

    #[test]
    fn claims_decode_table() {
        let full = r#"{"iss":"i","sub":"s","aud":["a","b"],"exp":10,"nbf":1.9,"iat":-0,"jti":"j",
            "kubernetes.io":{"namespace":"ns","serviceaccount":{"name":"sa","uid":"u"},
              "pod":{"name":"p","uid":"pu"},"secret":{"name":"sec","uid":"su"},
              "node":{"name":"n","uid":"nu"},"warnafter":5,"other":[1,{"x":2}]},
            "kubernetes.io/serviceaccount/namespace":"lns","unknown":{"deep":[null]}}"#;
        let c = decode(full).unwrap();
        assert_eq!(c.iss.as_deref(), Some("i"));
        assert_eq!(c.sub.as_deref(), Some("s"));
        assert_eq!(c.aud.unwrap().iter().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(
            (c.exp, c.nbf, c.iat),
            (
                Some(NumericDate(10)),
                Some(NumericDate(1)),
                Some(NumericDate(0))
            )
        );
        assert_eq!(c.jti.as_deref(), Some("j"));
        assert_eq!(c.namespace.as_deref(), Some("lns"));
        let k = c.kubernetes.unwrap();
        assert_eq!(k.namespace.as_deref(), Some("ns"));
        let sa = k.serviceaccount.unwrap();
        assert_eq!((sa.name(), sa.uid()), ("sa", "u"));
        assert_eq!(k.pod.unwrap().uid(), "pu");
        assert_eq!(k.secret.unwrap().name(), "sec");
        assert_eq!(k.node.unwrap().name(), "n");

        let wrong = [
            (
                "sub number",
                r#"{"sub":5}"#,
                "json: cannot unmarshal number into Go value of type string",
            ),
            (
                "legacy namespace bool",
                r#"{"kubernetes.io/serviceaccount/namespace":true}"#,
                "json: cannot unmarshal bool into Go value of type string",
            ),
            ("exp string", r#"{"exp":"5"}"#, ERR_NUMERIC_DATE),
            (
                "exp beyond i64",
                r#"{"exp":9223372036854775808}"#,
                ERR_NUMERIC_DATE,
            ),
            ("aud number", r#"{"aud":5}"#, ERR_AUDIENCE),
            ("aud with null", r#"{"aud":["a",null]}"#, ERR_AUDIENCE),
            (
                "aud null (go-jose's Audience is no pointer)",
                r#"{"aud":null}"#,
                ERR_AUDIENCE,
            ),
            (
                "first wrong claim wins (exp)",
                r#"{"exp":"x","aud":5}"#,
                ERR_NUMERIC_DATE,
            ),
            (
                "first wrong claim wins (aud)",
                r#"{"aud":5,"exp":"x"}"#,
                ERR_AUDIENCE,
            ),
            (
                "kubernetes.io string",
                r#"{"kubernetes.io":"ns"}"#,
                "json: cannot unmarshal string into Go value of type serviceaccount.kubernetes",
            ),
            (
                "kubernetes.io array (Go refuses)",
                r#"{"kubernetes.io":["ns"]}"#,
                "json: cannot unmarshal array into Go value of type serviceaccount.kubernetes",
            ),
            (
                "pod array (Go refuses)",
                r#"{"kubernetes.io":{"pod":["p","u"]}}"#,
                "json: cannot unmarshal array into Go value of type serviceaccount.ref",
            ),
            (
                "pod name number",
                r#"{"kubernetes.io":{"pod":{"name":1}}}"#,
                "json: cannot unmarshal number into Go value of type string",
            ),
            (
                "webhook reference string",
                r#"{"kubernetes.io":{"mutatingwebhookconfiguration":"m"}}"#,
                "json: cannot unmarshal string into Go value of type serviceaccount.ref",
            ),
            (
                "attestations array",
                r#"{"kubernetes.io":{"attestations":[]}}"#,
                "json: cannot unmarshal array into Go value of type map[string]authentication.AttestationValue",
            ),
            (
                "attestation value string",
                r#"{"kubernetes.io":{"attestations":{"a":"b"}}}"#,
                "json: cannot unmarshal string into Go value of type authentication.AttestationValue",
            ),
            (
                "attestation item object",
                r#"{"kubernetes.io":{"attestations":{"a":["b",{}]}}}"#,
                "json: cannot unmarshal object into Go value of type string",
            ),
            (
                "warnafter string",
                r#"{"kubernetes.io":{"warnafter":"x"}}"#,
                ERR_NUMERIC_DATE,
            ),
            (
                "escaped name is the claim",
                r#"{"\u0065xp":"x"}"#,
                ERR_NUMERIC_DATE,
            ),
        ];
        for (name, doc, want) in wrong {
            assert_eq!(decode(doc).err(), Some(want), "{name}");
        }

        let nulls = decode(r#"{"iss":null,"exp":null,"kubernetes.io":null}"#).unwrap();
        assert!(nulls.iss.is_none() && nulls.exp.is_none() && nulls.kubernetes.is_none());
        let escaped =
            decode(r#"{"s\u0075b":"a\/b","kubernetes.io":{"namespace":"n\u00e9"}}"#).unwrap();
        assert_eq!(escaped.sub.as_deref(), Some("a/b"));
        assert_eq!(escaped.kubernetes.unwrap().namespace.as_deref(), Some("né"));
    }

    #[test]
    fn split_username_follows_kubernetes_name_rules() {
        // The namespace is a DNS-1123 label (≤ 63); the name a DNS-1123 subdomain (≤ 253, and
        // Kubernetes' pattern puts no bound on one label).
        let long = |n: usize| "a".repeat(n);
        let cases: Vec<(String, Option<(String, String)>)> = vec![
            (
                "system:serviceaccount:ns:sa".into(),
                Some(("ns".into(), "sa".into())),
            ),
            (
                format!("system:serviceaccount:ns:{}", long(64)),
                Some(("ns".into(), long(64))),
            ),
            (
                format!("system:serviceaccount:ns:{}.b", long(100)),
                Some(("ns".into(), format!("{}.b", long(100)))),
            ),
            (
                format!("system:serviceaccount:ns:{}", long(253)),
                Some(("ns".into(), long(253))),
            ),
            (format!("system:serviceaccount:ns:{}", long(254)), None),
            (
                format!("system:serviceaccount:{}:sa", long(63)),
                Some((long(63), "sa".into())),
            ),
            (format!("system:serviceaccount:{}:sa", long(64)), None),
            ("system:serviceaccount:ns:a..b".into(), None),
            ("system:serviceaccount:ns:-a".into(), None),
            ("system:serviceaccount:ns:A".into(), None),
            ("system:serviceaccount:ns.x:sa".into(), None),
        ];
        for (username, want) in cases {
            let got = split_username(&username).map(|(n, s)| (n.to_owned(), s.to_owned()));
            assert_eq!(got, want, "{username}");
        }
    }

    #[test]
    fn user_info_matches_the_builder() {
        let full = ServiceAccountInfo {
            namespace: "ns".into(),
            name: "sa".into(),
            uid: "u".into(),
            pod_name: "p".into(),
            pod_uid: "pu".into(),
            node_name: "n".into(),
            node_uid: "nu".into(),
            credential_id: "JTI=j".into(),
        };
        let base = || {
            UserInfo::builder("system:serviceaccount:ns:sa")
                .uid("u")
                .groups(["system:serviceaccounts", "system:serviceaccounts:ns"])
        };
        let cases = [
            (
                "everything",
                full.clone(),
                base()
                    .extra(POD_NAME_KEY, ["p"])
                    .extra(POD_UID_KEY, ["pu"])
                    .extra(NODE_NAME_KEY, ["n"])
                    .extra(NODE_UID_KEY, ["nu"])
                    .extra(CREDENTIAL_ID_KEY, ["JTI=j"])
                    .build(),
            ),
            (
                "pod uid without pod name, node uid without node name",
                ServiceAccountInfo {
                    pod_name: String::new(),
                    node_name: String::new(),
                    credential_id: String::new(),
                    ..full.clone()
                },
                base().build(),
            ),
            (
                "node name only",
                ServiceAccountInfo {
                    pod_uid: String::new(),
                    node_uid: String::new(),
                    ..full.clone()
                },
                base()
                    .extra(NODE_NAME_KEY, ["n"])
                    .extra(CREDENTIAL_ID_KEY, ["JTI=j"])
                    .build(),
            ),
        ];
        for (name, info, want) in cases {
            assert_eq!(info.user_info(), want, "{name}");
            // The request path's borrowed form (credential id in two parts) agrees.
            let mut r = InfoRef::from(&info);
            if let Some(jti) = info.credential_id.strip_prefix("JTI=") {
                r.credential_id = ["JTI=", jti];
            }
            assert_eq!(r.user_info(), want, "{name} (borrowed)");
            assert_eq!(r.to_owned_info(), info, "{name} (owned)");
        }
        let info = full;
        let a = info.user_info();
        assert_eq!(a.name(), "system:serviceaccount:ns:sa");
        assert_eq!(
            a.groups().collect::<Vec<_>>(),
            ["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        assert_eq!(a.extra().len(), 5);
        assert_eq!(a.extra()[CREDENTIAL_ID_KEY], ["JTI=j"]);
    }
}
