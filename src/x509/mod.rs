//! X.509 client-certificate authentication (`--client-ca-file`), k8s
//! `pkg/authentication/request/x509`.
//!
//! [`X509Authenticator`] reads the peer chain from the [`PeerCertificates`] request extension
//! (put there by [`crate::tls`]'s accept loop, or by your own TLS code), verifies it with
//! rustls-webpki against the client CA bundle for the `clientAuth` usage, using the other
//! presented certificates only as intermediates, and maps the leaf's subject to a user the way
//! Kubernetes' `CommonNameUserConversion` does:
//!
//! | certificate | user |
//! |---|---|
//! | subject CN (the **last** CN when there are several, as Go's `pkix.Name`) | name |
//! | every O, in order | groups |
//! | the attribute 1.3.6.1.4.1.57683.2, exactly one, non-empty | uid |
//! | SHA-256 of the DER leaf | extra `authentication.kubernetes.io/credential-id: X509SHA256=<hex>` |
//!
//! Outcomes: no extension or an empty chain → not mine; a verified leaf with an empty CN → not
//! mine; a chain that does not verify → an error
//! `verifying certificate SN=<serial>, SKID=<AB:CD..>, AKID=<..> failed: <reason>`, so a bad
//! certificate on a server with anonymous access enabled gets a 401 rather than anonymous.
//!
//! # Verification, and where it differs from Go's `crypto/x509`
//!
//! Verification is rustls-webpki's path building (budgeted: at most 100 signature checks per
//! chain, 6 intermediates) with Go's behaviours added on top where webpki is laxer or
//! different: `anyExtendedKeyUsage` satisfies clientAuth on any certificate of the path; the
//! root's extendedKeyUsage and pathLenConstraint apply (webpki applies neither for a trust
//! anchor); a root outside its validity period ends that path (webpki does not look at root
//! validity); every issuer, root included, must be one Go's `CheckSignatureFrom` accepts as a
//! parent (not v3 without basicConstraints, not cA=FALSE, keyCertSign if it has a keyUsage:
//! webpki ignores keyUsage and a trust anchor's basicConstraints); a root with a critical
//! extension Go does not handle signs nothing (`x509: unhandled critical extension`; webpki
//! ignores an anchor's extensions); validity is compared to the nanosecond, as Go's
//! `now.After(NotAfter)` does (webpki compares whole seconds); and a leaf that is itself a
//! certificate of the CA bundle verifies as a one-element chain, with no issuer check (k8s'
//! "ca with multiple organizations" case). What remains different, each with a test in
//! `tests/x509.rs` and an entry in `docs/compatibility.md`:
//!
//! | input | Go / kube-apiserver | kube-authn |
//! |---|---|---|
//! | X.509 v1 leaf or intermediate | accepted (v1 intermediates fail) | refused: `only X.509 v3 … supported` |
//! | leaf with `basicConstraints cA=TRUE` that is not itself in the bundle | accepted | refused |
//! | RSA keys below 2048 bits (Go accepts 1024) or above 8192 | 1024–8192 accepted | refused |
//! | SHA-1 signatures | refused (except root self-signatures) | refused |
//! | chain longer than [`MAX_CHAIN_LEN`], a certificate over [`MAX_CERT_LEN`] bytes | verified | refused before parsing |
//! | control characters (NUL, CR, LF, …) in CN, O or UID | accepted | refused (a certificate without a CN is "not mine" first, as in Go) |
//! | an empty extendedKeyUsage extension | accepted as "no EKU" | refused (RFC 5280: at least one purpose) |
//! | a subject of more than [`MAX_SUBJECT_ATTRIBUTES`] attributes | accepted | refused (without a CN: "not mine", as in Go) |
//!
//! # Caching
//!
//! A verified result (user or error) is stored in the connection's [`PeerCertificates`]
//! (per authenticator, keyed by the CA bundle's generation) until the first notBefore/notAfter
//! boundary of the verified path (the notAfter itself is the last instant, to the
//! nanosecond), so every later request on a keep-alive or HTTP/2 connection
//! costs a few atomic loads and a clock read (measured 0.05–0.06 µs, `benches/x509.rs`). A CA
//! reload makes a new generation and thereby invalidates every cached result; failures are
//! cached for the current second only.
//!
//! # First-request cost
//!
//! A first verification is dominated by its signature checks. `benches/x509.rs` measures it
//! beside "signatures only": aws-lc-rs `UnparsedPublicKey::verify` of each (certificate,
//! issuer) pair, **every key parsed per call**, as a verifier that starts from the issuers'
//! SPKI must. The authenticator does better than that baseline on one point, deliberately:
//! its [`CaBundle`] keeps each trust anchor's key parsed (an aws-lc-rs `ParsedPublicKey`,
//! created on first use), so the root's signature check skips the RSA modulus parse and
//! Montgomery setup (≈ 2.4 µs for RSA-2048; the point decoding, ≈ 1.4 µs, for P-256) that
//! webpki's own algorithms repeat on every call. webpki still performs every other part of the
//! verification — path building, name chaining, validity, `clientAuth` EKU, basicConstraints
//! and pathLen, critical extensions, the algorithm and key-size policy — and the cached key
//! verifies with the same aws-lc-rs algorithm webpki's would; presented intermediates' keys
//! are parsed per call. The bench also shows "signatures only, root key parsed once" so that
//! this part of the comparison is visible.
//!
//! On top of the signatures, a first request pays: SHA-256 of the whole leaf for the
//! `X509SHA256=` credential id (≈ 0.5 µs for a 1 KiB leaf with SHA-NI on the bench machine;
//! required by Kubernetes' semantics), webpki's own parse of the leaf and its path checks, one
//! walk of the leaf's TBS by our DER reader (shared by the expiration metric, the validity
//! window and the subject), the user built from subject strings borrowed from the DER, the
//! per-connection cache entry, and the drop of the connection's state: 1–2 µs in all (2.1 µs
//! for the one-level RSA-2048 chain, the "vs. root key parsed once" column).
//! Measured on-CPU (thread CPU time, medians of 41 alternating rounds, `X509_ONCPU=20000`,
//! three runs on a 2-core machine shared with two compiling engineers):
//!
//! | chain | signatures only | first request | ratio | vs. root key parsed once |
//! |---|---|---|---|---|
//! | RSA-2048, 1 level | 18.1–18.3 µs | 17.7–17.9 µs | 0.97–0.99× | 1.13× |
//! | RSA-2048, 2 levels | 36.5–37.8 µs | 37.4–38.8 µs | 1.02–1.03× | 1.09× |
//! | P-256, 1 level | 50.8–52.1 µs | 51.9–54.7 µs | 1.02× (one run 1.07×) | 1.03–1.10× |
//! | P-256, 2 levels | 102.3–102.9 µs | 104.7–105.6 µs | 1.02–1.03× | 1.03–1.04× |
//!
//! (Before the anchor-key cache, the single TBS walk, the borrowed subject strings and the
//! lazily created cache slots, the same harness measured 1.13×, 1.10×, 1.05–1.07× and 1.04×.)
//! In instructions (callgrind, `X509_COUNT=<chain>/both`, which also counts SHA-256 without
//! SHA-NI, as valgrind hides it) the first request is now 1.032×, 1.026×, 1.017× and 1.013× the
//! signatures (before: 1.134×, 1.077×, 1.042×, 1.025×).
//!
//! # Example: an admission webhook that authenticates the API server
//!
//! An admission (or conversion) webhook, like the ones kopf runs for operators, receives
//! requests *from* kube-apiserver. kube-apiserver presents a client certificate when its
//! admission-control configuration (`AdmissionConfiguration` → `kubeConfigFile`) names one for
//! the webhook's host; the webhook then trusts only that client CA and checks the name:
//!
//! ```
//! use kube_authn::authenticator::{Context, RequestAuthenticator};
//! use kube_authn::tls::PeerCertificates;
//! use kube_authn::x509::X509Authenticator;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! # let dir = tempfile::tempdir().unwrap();
//! # let ca_file = dir.path().join("ca.pem");
//! # std::fs::write(&ca_file, kube_authn::x509::doc_ca_pem()).unwrap();
//! // The CA that signed the API server's webhook client certificate.
//! let auth = X509Authenticator::from_ca_file(&ca_file).unwrap();
//!
//! // In the webhook's handler (the TLS accept loop put the chain on the request):
//! # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
//! let mut req = http::Request::post("/validate").body(()).unwrap();
//! req.extensions_mut().insert(PeerCertificates::from_handshake(chain));
//! let (parts, _) = req.into_parts();
//! let user = match auth.authenticate_request(&parts, &Context::default()).await {
//!     Ok(Some(resp)) => resp.user,
//!     Ok(None) => panic!("no client certificate: answer 401"),
//!     Err(e) => panic!("bad client certificate: answer 401 ({e})"),
//! };
//! // Only the API server's identity may call the webhook.
//! assert_eq!(user.name(), "doc-admin");
//! assert!(user.in_group("system:masters"));
//! # });
//! ```
//!
//! Serving it over TLS with the peer chain on every request is [`crate::tls::TlsServer`]'s job
//! (feature `tls`); `tests/x509.rs` runs exactly this with curl and reqwest.

mod anchor_keys;
pub(crate) mod bundle;
pub(crate) mod der;
pub(crate) mod go_parse;
mod metrics;
mod names;
pub(crate) mod policy;
pub(crate) mod subject;
pub(crate) mod verify;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::request::Parts;

pub use bundle::{CaBundle, CaBundleSource, MAX_BUNDLE_BYTES, MAX_BUNDLE_CERTS, parse_pem_bundle};
pub(crate) use bundle::{CaRole, CaSource, OverlapGuard, next_id};
#[doc(hidden)]
pub use der::{signed_parts, subject_public_key};
pub use metrics::{
    BUCKETS, CLIENT_CERT_EXPIRATION, CLIENT_CERT_EXPIRATION_NAME, ExpirationHistogram,
};
pub use subject::MAX_SUBJECT_ATTRIBUTES;
pub use verify::{KeyUsage, MAX_CERT_LEN, MAX_CHAIN_LEN};

use crate::authenticator::{AuthFuture, AuthResult, Context, RequestAuthenticator, Response};
use crate::error::{ConfigError, Error, ErrorKind};
use crate::reload::{FileReloader, WatchTask};
use crate::tls::{CacheEntry, PeerCertificates};

/// A source of the current time (Unix seconds), injectable for tests.
///
/// ```
/// use std::sync::Arc;
/// use std::time::{Duration, UNIX_EPOCH};
/// use kube_authn::tls::PeerCertificates;
/// use kube_authn::x509::{CaBundle, Clock, X509Authenticator, doc_ca_pem, doc_client_pem, parse_pem_bundle};
///
/// let chain = parse_pem_bundle(doc_client_pem().as_bytes()).unwrap();
/// let peer = PeerCertificates::injected(chain);
/// let at = |secs: u64| -> Clock { Arc::new(move || UNIX_EPOCH + Duration::from_secs(secs)) };
/// let auth = |clock| {
///     X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap()).with_clock(clock)
/// };
/// // 2030: within the documentation certificates' validity (2026 to 2126).
/// assert!(auth(at(1_900_000_000)).authenticate_peer(&peer).unwrap().is_some());
/// // 2020: before it.
/// let err = auth(at(1_600_000_000)).authenticate_peer(&peer).unwrap_err();
/// assert!(err.to_string().contains("certificate has expired or is not yet valid"), "{err}");
/// ```
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// An instant as Unix seconds (rounded down, also before the epoch) and the nanoseconds past
/// them. Certificate dates are whole seconds; Go compares them with the current time to the
/// nanosecond (`now.After(NotAfter)`), so a certificate has expired a nanosecond after its
/// notAfter, and the expiration metric observes `NotAfter − now` to the nanosecond, as Go's
/// `Sub` does. Ordered by time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Moment {
    pub(crate) secs: i64,
    /// In `0..1_000_000_000`.
    pub(crate) nanos: u32,
}

impl Moment {
    /// Now, by `clock` or the system clock.
    pub(crate) fn now(clock: &Option<Clock>) -> Self {
        let now = match clock {
            Some(c) => c(),
            None => SystemTime::now(),
        };
        match now.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => Self {
                secs: d.as_secs() as i64,
                nanos: d.subsec_nanos(),
            },
            Err(e) => {
                let d = e.duration();
                match d.subsec_nanos() {
                    0 => Self::at(-(d.as_secs() as i64)),
                    n => Self {
                        secs: -(d.as_secs() as i64) - 1,
                        nanos: 1_000_000_000 - n,
                    },
                }
            }
        }
    }

    /// The whole second `secs` (a certificate date).
    pub(crate) const fn at(secs: i64) -> Self {
        Self { secs, nanos: 0 }
    }

    /// The last instant of the second this one falls in.
    pub(crate) const fn end_of_second(self) -> Self {
        Self {
            secs: self.secs,
            nanos: 999_999_999,
        }
    }

    /// Go's `now.After(t)` for a certificate date `t`: any fraction of a second past `t` is
    /// after it.
    pub(crate) fn is_after(self, t: i64) -> bool {
        self > Self::at(t)
    }

    /// Go's `now.Before(t)` for a certificate date `t`.
    pub(crate) fn is_before(self, t: i64) -> bool {
        self.secs < t
    }

    /// The fraction of a second past [`secs`](Self::secs), in `[0, 1)`.
    fn fraction(self) -> f64 {
        f64::from(self.nanos) / 1e9
    }
}

/// `time.Duration`'s limits in seconds, as `Duration.Seconds()` gives them (±(2^63 − 1) ns and
/// −2^63 ns, both rounding to ±9223372036.854776 in a float64).
const GO_DURATION_MAX_SECS: f64 = 9_223_372_036.854_776;
const GO_DURATION_MIN_SECS: f64 = -9_223_372_036.854_776;

/// Authenticates requests by client certificate. See the [module docs](self).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let ca_file = dir.path().join("ca.pem");
/// # std::fs::write(&ca_file, kube_authn::x509::doc_ca_pem()).unwrap();
/// let auth = kube_authn::x509::X509Authenticator::from_ca_file(&ca_file).unwrap();
/// ```
#[derive(Clone)]
pub struct X509Authenticator {
    id: u64,
    ca: CaSource,
    usage: KeyUsage,
    clock: Option<Clock>,
    metric: Option<&'static ExpirationHistogram>,
}

impl std::fmt::Debug for X509Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X509Authenticator")
            .field("usage", &self.usage)
            .finish_non_exhaustive()
    }
}

impl X509Authenticator {
    /// Trusts the CA bundle in `path` (`--client-ca-file`). The first load must succeed.
    ///
    /// The bundle is **not** reloaded by itself: it follows the file only while a watch runs.
    /// Start one with [`spawn_watch`](Self::spawn_watch) on a Tokio runtime and keep the
    /// [`WatchTask`] it returns (dropping it stops reloading), or call
    /// [`reloader`](Self::reloader)`().reload_if_changed()` yourself; otherwise the bundle
    /// stays as loaded here. Once watched, a broken later version keeps the previous bundle
    /// and is logged and counted.
    ///
    /// ```
    /// let err = kube_authn::x509::X509Authenticator::from_ca_file("/nonexistent").unwrap_err();
    /// assert_eq!(err.to_string(), "open /nonexistent: no such file or directory");
    /// ```
    pub fn from_ca_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::from_ca_file_guarded(path.as_ref(), None)
    }

    /// [`from_ca_file`](Self::from_ca_file); `guard`, if given, checks every reload.
    pub(crate) fn from_ca_file_guarded(
        path: &Path,
        guard: Option<Arc<OverlapGuard>>,
    ) -> Result<Self, ConfigError> {
        let guard = guard.map(|g| (g, CaRole::Client));
        let reloader = CaSource::load_file("client-ca-bundle", path, guard)?;
        Ok(Self::with_source(CaSource::File(reloader)))
    }

    /// Where the CA bundle comes from.
    pub(crate) fn ca_source(&self) -> &CaSource {
        &self.ca
    }

    /// Trusts a fixed bundle.
    ///
    /// ```
    /// use kube_authn::x509::{CaBundle, X509Authenticator};
    /// let bundle = CaBundle::from_pem(kube_authn::x509::doc_ca_pem().as_bytes()).unwrap();
    /// let auth = X509Authenticator::new(bundle);
    /// ```
    pub fn new(bundle: CaBundle) -> Self {
        Self::with_source(CaSource::Static(Arc::new(bundle)))
    }

    fn with_source(ca: CaSource) -> Self {
        Self {
            id: next_id(),
            ca,
            usage: KeyUsage::ClientAuth,
            clock: None,
            metric: Some(&CLIENT_CERT_EXPIRATION),
        }
    }

    /// Uses `clock` instead of the system time (tests).
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// # let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// # let peer = kube_authn::tls::PeerCertificates::injected(parse_pem_bundle(doc_client_pem().as_bytes()).unwrap());
    /// let far_future = std::time::UNIX_EPOCH + std::time::Duration::from_secs(8_000_000_000);
    /// let auth = X509Authenticator::new(bundle).with_clock(std::sync::Arc::new(move || far_future));
    /// // The client certificate (valid until 2126) has expired by then.
    /// let err = auth.authenticate_peer(&peer).unwrap_err().to_string();
    /// assert!(
    ///     err.ends_with("x509: certificate has expired or is not yet valid: current time 2223-07-06T14:13:20Z is after 2126-10-29T08:37:42Z"),
    ///     "{err}"
    /// );
    /// ```
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        // A new owner for the per-connection cache: a clone configured otherwise must not
        // reuse this one's results.
        self.id = next_id();
        self
    }

    /// Verifies for `usage` instead of clientAuth (Go's `VerifyOptions.KeyUsages`).
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// # let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// # let peer = kube_authn::tls::PeerCertificates::injected(parse_pem_bundle(doc_client_pem().as_bytes()).unwrap());
    /// let auth = X509Authenticator::new(bundle).with_key_usage(KeyUsage::ServerAuth);
    /// // A client certificate (extendedKeyUsage clientAuth only) is not good for serverAuth.
    /// let err = auth.authenticate_peer(&peer).unwrap_err().to_string();
    /// assert!(err.ends_with("x509: certificate specifies an incompatible key usage"), "{err}");
    /// ```
    pub fn with_key_usage(mut self, usage: KeyUsage) -> Self {
        self.usage = usage;
        // As in `with_clock`: the cached outcome depends on the usage.
        self.id = next_id();
        self
    }

    /// Records to `histogram` instead of the process-wide [`CLIENT_CERT_EXPIRATION`], or to
    /// nothing.
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// # let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// # let peer = kube_authn::tls::PeerCertificates::injected(parse_pem_bundle(doc_client_pem().as_bytes()).unwrap());
    /// static MINE: ExpirationHistogram = ExpirationHistogram::new();
    /// let auth = X509Authenticator::new(bundle).with_histogram(Some(&MINE));
    /// assert!(auth.authenticate_peer(&peer).unwrap().is_some());
    /// assert_eq!(MINE.count(), 1);
    /// // `None`: nothing is recorded.
    /// let quiet = auth.clone().with_histogram(None);
    /// assert!(quiet.authenticate_peer(&peer).unwrap().is_some());
    /// assert_eq!(MINE.count(), 1);
    /// ```
    pub fn with_histogram(mut self, histogram: Option<&'static ExpirationHistogram>) -> Self {
        self.metric = histogram;
        self
    }

    /// The file reloader, when the bundle comes from a file.
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// # let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// assert!(X509Authenticator::new(bundle).reloader().is_none());
    /// ```
    pub fn reloader(&self) -> Option<&FileReloader<CaBundle>> {
        match &self.ca {
            CaSource::File(r) => Some(r),
            CaSource::Static(_) => None,
        }
    }

    /// Polls the CA file every `interval` (Kubernetes: fsnotify plus a one-minute resync);
    /// `None` for a fixed bundle. Must be called on a Tokio runtime.
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// # let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// assert!(X509Authenticator::new(bundle).spawn_watch(std::time::Duration::from_secs(1)).is_none());
    /// ```
    #[must_use = "dropping the WatchTask stops reloading"]
    pub fn spawn_watch(&self, interval: Duration) -> Option<WatchTask> {
        self.reloader().map(|r| r.spawn_watch(interval))
    }

    /// The current bundle.
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// # let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// assert_eq!(X509Authenticator::new(bundle).bundle().certificates().len(), 1);
    /// ```
    pub fn bundle(&self) -> Arc<CaBundle> {
        match &self.ca {
            CaSource::Static(b) => b.clone(),
            CaSource::File(r) => r.current_arc(),
        }
    }

    /// Authenticates a chain directly (what `authenticate_request` does with the chain of the
    /// request's [`PeerCertificates`]).
    ///
    /// ```
    /// # use kube_authn::x509::*;
    /// # let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
    /// let auth = X509Authenticator::new(bundle);
    /// let chain = parse_pem_bundle(doc_client_pem().as_bytes()).unwrap();
    /// let peer = kube_authn::tls::PeerCertificates::injected(chain);
    /// let resp = auth.authenticate_peer(&peer).unwrap().unwrap();
    /// assert_eq!(resp.user.name(), "doc-admin");
    /// ```
    pub fn authenticate_peer(&self, peer: &PeerCertificates) -> AuthResult {
        let Some(leaf) = peer.leaf() else {
            return Ok(None);
        };
        let now = Moment::now(&self.clock);
        // Go's `NotAfter.Sub(now)` saturates at the limits of `time.Duration` (about ±292
        // years), so a "never expires" 9999-12-31 certificate adds 9.2e9 s to `_sum`, not 2.5e11.
        let remaining = |not_after: i64| {
            ((not_after.saturating_sub(now.secs)) as f64 - now.fraction())
                .clamp(GO_DURATION_MIN_SECS, GO_DURATION_MAX_SECS)
        };
        self.ca.with(|bundle| {
            let generation = bundle.generation();
            if let Some(result) = peer.cache().get(self.id, generation, now, |e| {
                if let (Some(m), Some(na)) = (self.metric, e.leaf_not_after) {
                    m.observe(remaining(na));
                }
                e.outcome.clone()
            }) {
                return result;
            }
            // The leaf's TBS is read once, here, for the metric, the verification and the user.
            let leaf_view = if leaf.len() <= MAX_CERT_LEN {
                der::tbs_view(leaf)
            } else {
                None
            };
            let leaf_not_after = leaf_view.map(|v| v.not_after);
            if let (Some(m), Some(na)) = (self.metric, leaf_not_after) {
                m.observe(remaining(na));
            }
            let (outcome, valid_from, valid_until) = match verify::verify_chain_with_view(
                bundle,
                peer.chain(),
                leaf_view,
                now,
                self.usage,
            ) {
                Ok(window) => {
                    let outcome = leaf_view
                        .ok_or(subject::ERR_MALFORMED_SUBJECT)
                        .and_then(|view| subject::user_from_view(leaf, &view))
                        .map(|u| u.map(|u| Response::new(Arc::new(u))));
                    (outcome, window.not_before, Moment::at(window.not_after))
                }
                // A failure is kept for the rest of the current second only.
                Err(e) => (Err(prefixed(leaf, &e)), now.secs, now.end_of_second()),
            };
            peer.cache().put(CacheEntry {
                owner: self.id,
                generation,
                valid_from,
                valid_until,
                leaf_not_after,
                outcome: outcome.clone(),
            });
            outcome
        })
    }
}

fn prefixed(leaf: &[u8], e: &Error) -> Error {
    let id = if leaf.len() <= MAX_CERT_LEN {
        verify::certificate_identifier(leaf)
    } else {
        "SN=<nil>, SKID=, AKID=".to_owned()
    };
    Error::new(
        ErrorKind::InvalidCredential,
        format!("verifying certificate {id} failed: {e}"),
    )
}

impl RequestAuthenticator for X509Authenticator {
    fn authenticate_request<'a>(&'a self, req: &'a Parts, _ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::ready(match req.extensions.get::<PeerCertificates>() {
            Some(peer) => self.authenticate_peer(peer),
            None => Ok(None),
        })
    }

    fn always_ready(&self) -> bool {
        true
    }
}

/// A P-256 CA used by this crate's documentation examples (valid until 2126).
///
/// ```
/// let ca = kube_authn::x509::CaBundle::from_pem(kube_authn::x509::doc_ca_pem().as_bytes()).unwrap();
/// assert_eq!(ca.certificates().len(), 1);
/// ```
#[doc(hidden)]
pub fn doc_ca_pem() -> &'static str {
    include_str!("testdata/doc-ca.pem")
}

/// A client certificate (`CN=doc-admin, O=system:masters, O=dev`) issued by [`doc_ca_pem`].
///
/// ```
/// use kube_authn::x509::{CaBundle, X509Authenticator, doc_ca_pem, doc_client_pem, parse_pem_bundle};
/// let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
/// let peer = kube_authn::tls::PeerCertificates::injected(parse_pem_bundle(doc_client_pem().as_bytes()).unwrap());
/// let user = auth.authenticate_peer(&peer).unwrap().unwrap().user;
/// assert_eq!(user.groups().collect::<Vec<_>>(), ["system:masters", "dev"]);
/// ```
#[doc(hidden)]
pub fn doc_client_pem() -> &'static str {
    include_str!("testdata/doc-client.pem")
}

/// The private key of [`doc_client_pem`] (documentation only; not a secret).
///
/// ```
/// use rustls_pki_types::{PrivateKeyDer, pem::PemObject};
/// let key = PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
/// assert!(matches!(key, PrivateKeyDer::Pkcs8(_)));
/// ```
#[doc(hidden)]
pub fn doc_client_key_pem() -> &'static str {
    include_str!("testdata/doc-client.key")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn moments_round_down_on_both_sides_of_the_epoch() {
        let at = |t: SystemTime| {
            let m = Moment::now(&Some(Arc::new(move || t)));
            (m.secs, m.nanos, m.fraction())
        };
        let e = SystemTime::UNIX_EPOCH;
        let cases = [
            ("epoch", e, (0, 0, 0.0)),
            (
                "after",
                e + Duration::from_millis(5_750),
                (5, 750_000_000, 0.75),
            ),
            ("before, whole", e - Duration::from_secs(5), (-5, 0, 0.0)),
            (
                "before, fraction",
                e - Duration::from_millis(5_250),
                (-6, 750_000_000, 0.75),
            ),
            (
                "a nanosecond after",
                e + Duration::from_nanos(1),
                (0, 1, 1e-9),
            ),
        ];
        for (name, t, want) in cases {
            assert_eq!(at(t), want, "{name}");
        }
    }

    /// Go's `now.After(NotAfter)` and `now.Before(NotBefore)` against whole-second dates.
    #[test]
    fn moments_compare_with_certificate_dates_to_the_nanosecond() {
        let m = |secs, nanos| Moment { secs, nanos };
        let cases = [
            ("at notAfter", m(100, 0), 100, false, false),
            ("a nanosecond past", m(100, 1), 100, true, false),
            ("half a second past", m(100, 500_000_000), 100, true, false),
            (
                "the last instant before",
                m(99, 999_999_999),
                100,
                false,
                true,
            ),
            ("a second past", m(101, 0), 100, true, false),
        ];
        for (name, now, t, after, before) in cases {
            assert_eq!(now.is_after(t), after, "{name}: after");
            assert_eq!(now.is_before(t), before, "{name}: before");
        }
        assert_eq!(m(7, 3).end_of_second(), m(7, 999_999_999));
    }

    /// `NotAfter.Sub(now)` saturates at `time.Duration`'s limits (about 292 years): a client
    /// certificate 400 years from expiring, or expired 400 years ago, adds ±9223372036.854776 s
    /// (Go's `%g`: `9.223372036854776e+09`) to `_sum`, as in kube-apiserver.
    #[test]
    fn expiration_saturates_at_go_duration_limits() {
        let chain = parse_pem_bundle(doc_client_pem().as_bytes()).unwrap();
        let not_after = der::tbs_view(&chain[0]).unwrap().not_after;
        let years_400 = Duration::from_secs(400 * 365 * 86400);
        let at = |secs: i64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs as u64);
        let cases = [
            (
                "400 years before notAfter",
                at(not_after) - years_400,
                "9.223372036854776e+09",
            ),
            (
                "400 years after notAfter",
                at(not_after) + years_400,
                "-9.223372036854776e+09",
            ),
        ];
        for (name, t, sum) in cases {
            let hist: &'static ExpirationHistogram =
                Box::leak(Box::new(ExpirationHistogram::new()));
            let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap())
                .with_histogram(Some(hist))
                .with_clock(Arc::new(move || t));
            let peer = crate::tls::PeerCertificates::injected(chain.clone());
            // Outside the certificate's validity: refused, but observed first, as in Go.
            assert!(auth.authenticate_peer(&peer).is_err(), "{name}");
            let mut text = String::new();
            hist.encode(&mut text);
            assert!(
                text.contains(&format!(
                    "apiserver_client_certificate_expiration_seconds_sum {sum}\n"
                )),
                "{name}: {text}"
            );
        }
    }

    /// Go observes `NotAfter.Sub(time.Now()).Seconds()`: to the nanosecond, on cached and
    /// uncached requests alike.
    #[test]
    fn expiration_is_observed_to_the_fraction_of_a_second() {
        static HIST: ExpirationHistogram = ExpirationHistogram::new();
        let chain = parse_pem_bundle(doc_client_pem().as_bytes()).unwrap();
        let not_after = der::tbs_view(&chain[0]).unwrap().not_after;
        // A second and a quarter before the certificate expires.
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis((not_after as u64 - 2) * 1000 + 750);
        let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap())
            .with_histogram(Some(&HIST))
            .with_clock(Arc::new(move || t));
        let peer = crate::tls::PeerCertificates::injected(chain);
        for _ in 0..2 {
            assert!(auth.authenticate_peer(&peer).unwrap().is_some());
        }
        let mut text = String::new();
        HIST.encode(&mut text);
        assert!(
            text.contains("apiserver_client_certificate_expiration_seconds_sum 2.5\n"),
            "{text}"
        );
    }
}
