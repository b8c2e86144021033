//! The service-account token counters of kube-apiserver's `pkg/serviceaccount/metrics.go`
//! (subsystem `serviceaccount`, counters without labels: `legacy_tokens_total`,
//! `stale_tokens_total` and `valid_tokens_total` are `BETA`, the rest `ALPHA`).
//!
//! | metric | counted when |
//! |---|---|
//! | `serviceaccount_legacy_tokens_total` | a token with a verified signature and a known issuer has no `aud` (or `[]`), before the audience check |
//! | `serviceaccount_stale_tokens_total` | a bound token with a non-zero `kubernetes.io.warnafter` is accepted after that instant |
//! | `serviceaccount_valid_tokens_total` | … is accepted at or before it |
//! | `serviceaccount_invalid_legacy_auto_token_uses_total` | a legacy token's secret (lookup on) carries a non-empty `kubernetes.io/legacy-token-invalid-since` label, after the service-account checks (the token is then refused) |
//! | `serviceaccount_legacy_auto_token_uses_total` | a looked-up legacy token is accepted and its secret is listed in the service account's `secrets` |
//! | `serviceaccount_legacy_manual_token_uses_total` | … and its secret is not listed |
//!
//! Plain counters are exported (at 0) from registration on, so [`ServiceAccountMetrics::encode`]
//! always writes all six. Every [`ServiceAccountAuthenticator`](super::ServiceAccountAuthenticator)
//! records into the process-wide [`SERVICE_ACCOUNT_METRICS`] unless given its own
//! ([`with_metrics`](super::ServiceAccountAuthenticator::with_metrics)).
//!
//! ```
//! use kube_authn::token::service_account::ServiceAccountMetrics;
//! static METRICS: ServiceAccountMetrics = ServiceAccountMetrics::new();
//! let mut text = String::new();
//! METRICS.encode(&mut text);
//! assert!(text.starts_with("# HELP serviceaccount_invalid_legacy_auto_token_uses_total [ALPHA] Cumulative invalid auto-generated legacy tokens used\n"));
//! assert!(text.ends_with("serviceaccount_valid_tokens_total 0\n"));
//! ```

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::metrics::write_go_float;

/// Which counter (index into [`ServiceAccountMetrics`]), in exposition (name) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counter {
    InvalidLegacyAuto = 0,
    LegacyAuto = 1,
    LegacyManual = 2,
    LegacyTokens = 3,
    Stale = 4,
    Valid = 5,
}

/// Names, stability levels and HELP texts, in name order (how Go's client sorts families).
/// Kubernetes 1.37 graduated the legacy, stale and valid counters to BETA
/// (kubernetes/kubernetes#137072); the other three are ALPHA.
const FAMILIES: [(&str, &str, &str); 6] = [
    (
        "serviceaccount_invalid_legacy_auto_token_uses_total",
        "ALPHA",
        "Cumulative invalid auto-generated legacy tokens used",
    ),
    (
        "serviceaccount_legacy_auto_token_uses_total",
        "ALPHA",
        "Cumulative auto-generated legacy tokens used",
    ),
    (
        "serviceaccount_legacy_manual_token_uses_total",
        "ALPHA",
        "Cumulative manually created legacy tokens used",
    ),
    (
        "serviceaccount_legacy_tokens_total",
        "BETA",
        "Cumulative legacy service account tokens used",
    ),
    (
        "serviceaccount_stale_tokens_total",
        "BETA",
        "Cumulative stale projected service account tokens used",
    ),
    (
        "serviceaccount_valid_tokens_total",
        "BETA",
        "Cumulative valid projected service account tokens used",
    ),
];

/// kube-apiserver's six `serviceaccount_*` counters.
///
/// ```
/// use kube_authn::token::service_account::ServiceAccountMetrics;
/// let m = ServiceAccountMetrics::new();
/// assert_eq!(m.get("serviceaccount_legacy_tokens_total"), Some(0));
/// assert_eq!(m.get("serviceaccount_no_such_total"), None);
/// ```
#[derive(Debug, Default)]
pub struct ServiceAccountMetrics {
    counters: [AtomicU64; 6],
}

/// The process-wide counters (Kubernetes' global registry); what `kube-authn serve` exposes
/// when service-account tokens are configured.
///
/// ```
/// let mut text = String::new();
/// kube_authn::token::service_account::SERVICE_ACCOUNT_METRICS.encode(&mut text);
/// assert_eq!(text.lines().count(), 18);
/// ```
pub static SERVICE_ACCOUNT_METRICS: ServiceAccountMetrics = ServiceAccountMetrics::new();

impl ServiceAccountMetrics {
    /// All counters at 0.
    ///
    /// ```
    /// static M: kube_authn::token::service_account::ServiceAccountMetrics =
    ///     kube_authn::token::service_account::ServiceAccountMetrics::new();
    /// ```
    pub const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const ZERO: AtomicU64 = AtomicU64::new(0);
        Self {
            counters: [ZERO; 6],
        }
    }

    pub(crate) fn inc(&self, counter: Counter) {
        self.counters[counter as usize].fetch_add(1, Relaxed);
    }

    /// The value of the counter named `name` (its full Prometheus name).
    ///
    /// ```
    /// let m = kube_authn::token::service_account::ServiceAccountMetrics::new();
    /// assert_eq!(m.get("serviceaccount_stale_tokens_total"), Some(0));
    /// ```
    pub fn get(&self, name: &str) -> Option<u64> {
        FAMILIES
            .iter()
            .position(|(n, _, _)| *n == name)
            .map(|i| self.counters[i].load(Relaxed))
    }

    /// Writes the six counters in the Prometheus text format, as Go's client writes them.
    ///
    /// ```
    /// let mut text = String::new();
    /// kube_authn::token::service_account::ServiceAccountMetrics::new().encode(&mut text);
    /// assert!(text.contains("# TYPE serviceaccount_stale_tokens_total counter\nserviceaccount_stale_tokens_total 0\n"));
    /// ```
    pub fn encode(&self, out: &mut String) {
        for ((name, level, help), value) in FAMILIES.iter().zip(&self.counters) {
            let _ = write!(
                out,
                "# HELP {name} [{level}] {help}\n# TYPE {name} counter\n{name} "
            );
            write_go_float(out, value.load(Relaxed) as f64);
            out.push('\n');
        }
    }
}
