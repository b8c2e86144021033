//! `apiserver_client_certificate_expiration_seconds`: the remaining lifetime of the client
//! certificates that authenticate requests (k8s `x509.go`, ALPHA). Lock-free atomics; one
//! process-wide instance like Kubernetes' global registry.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::metrics::{add_f64, write_histogram_series};

/// Metric name, as in Kubernetes.
///
/// ```
/// use kube_authn::x509::CLIENT_CERT_EXPIRATION_NAME;
/// assert_eq!(CLIENT_CERT_EXPIRATION_NAME, "apiserver_client_certificate_expiration_seconds");
/// ```
pub const CLIENT_CERT_EXPIRATION_NAME: &str = "apiserver_client_certificate_expiration_seconds";

const HELP: &str = "[ALPHA] Distribution of the remaining lifetime on the certificate used to authenticate a request.";

const HOUR: f64 = 3600.0;
const DAY: f64 = 24.0 * HOUR;

/// Kubernetes' buckets: 0, 30m, 1h, 2h, 6h, 12h, 1d, 2d, 4d, 7d, 30d, 90d, 180d, 360d.
///
/// ```
/// use kube_authn::x509::BUCKETS;
/// let (h, d) = (3600.0, 86400.0);
/// assert_eq!(
///     BUCKETS,
///     [0.0, 1800.0, h, 2.0 * h, 6.0 * h, 12.0 * h, d, 2.0 * d, 4.0 * d, 7.0 * d, 30.0 * d, 90.0 * d, 180.0 * d, 360.0 * d]
/// );
/// ```
pub const BUCKETS: [f64; 14] = [
    0.0,
    1800.0,
    HOUR,
    2.0 * HOUR,
    6.0 * HOUR,
    12.0 * HOUR,
    DAY,
    2.0 * DAY,
    4.0 * DAY,
    7.0 * DAY,
    30.0 * DAY,
    90.0 * DAY,
    180.0 * DAY,
    360.0 * DAY,
];

/// A Prometheus histogram with Kubernetes' client-certificate expiration buckets.
///
/// ```
/// use kube_authn::x509::ExpirationHistogram;
/// let h = ExpirationHistogram::new();
/// h.observe(3000.0);
/// let mut out = String::new();
/// h.encode(&mut out);
/// assert!(out.contains("apiserver_client_certificate_expiration_seconds_bucket{le=\"3600\"} 1"));
/// assert!(out.contains("apiserver_client_certificate_expiration_seconds_bucket{le=\"1800\"} 0"));
/// assert!(out.contains("apiserver_client_certificate_expiration_seconds_count 1"));
/// ```
#[derive(Debug)]
pub struct ExpirationHistogram {
    /// Non-cumulative counts per bucket; the last slot is +Inf.
    buckets: [AtomicU64; 15],
    count: AtomicU64,
    sum_bits: AtomicU64,
}

impl Default for ExpirationHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl ExpirationHistogram {
    /// An empty histogram.
    ///
    /// ```
    /// let _ = kube_authn::x509::ExpirationHistogram::new();
    /// ```
    pub const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const ZERO: AtomicU64 = AtomicU64::new(0);
        Self {
            buckets: [ZERO; 15],
            count: ZERO,
            sum_bits: ZERO,
        }
    }

    /// Records one remaining lifetime in seconds (negative for an expired certificate).
    ///
    /// ```
    /// let h = kube_authn::x509::ExpirationHistogram::new();
    /// h.observe(-5.0);
    /// assert_eq!(h.count(), 1);
    /// ```
    pub fn observe(&self, seconds: f64) {
        let idx = BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(BUCKETS.len());
        self.buckets[idx].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        add_f64(&self.sum_bits, seconds);
    }

    /// How many observations were recorded.
    ///
    /// ```
    /// assert_eq!(kube_authn::x509::ExpirationHistogram::new().count(), 0);
    /// ```
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Appends the histogram in the Prometheus text format (HELP, TYPE, cumulative buckets,
    /// sum, count).
    ///
    /// ```
    /// let mut s = String::new();
    /// kube_authn::x509::ExpirationHistogram::new().encode(&mut s);
    /// assert!(s.starts_with("# HELP apiserver_client_certificate_expiration_seconds"));
    /// ```
    pub fn encode(&self, out: &mut String) {
        let name = CLIENT_CERT_EXPIRATION_NAME;
        let _ = writeln!(out, "# HELP {name} {HELP}");
        let _ = writeln!(out, "# TYPE {name} histogram");
        // Numbers as Go's client writes them (`strconv.FormatFloat(v, 'g', -1, 64)`):
        // `le="2.592e+06"`, a count of a million is `1e+06`.
        write_histogram_series(
            out,
            name,
            "",
            BUCKETS,
            self.buckets.iter().map(|b| b.load(Ordering::Relaxed)),
            f64::from_bits(self.sum_bits.load(Ordering::Relaxed)),
        );
    }
}

/// The process-wide histogram every [`X509Authenticator`](super::X509Authenticator) records to.
///
/// ```
/// use kube_authn::tls::PeerCertificates;
/// use kube_authn::x509::{CLIENT_CERT_EXPIRATION, CaBundle, X509Authenticator, doc_ca_pem, doc_client_pem, parse_pem_bundle};
/// let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
/// let peer = PeerCertificates::injected(parse_pem_bundle(doc_client_pem().as_bytes()).unwrap());
/// let before = CLIENT_CERT_EXPIRATION.count();
/// auth.authenticate_peer(&peer).unwrap().unwrap();
/// assert!(CLIENT_CERT_EXPIRATION.count() > before);
/// let mut text = String::new();
/// CLIENT_CERT_EXPIRATION.encode(&mut text);
/// assert!(text.contains("apiserver_client_certificate_expiration_seconds_bucket"));
/// ```
pub static CLIENT_CERT_EXPIRATION: ExpirationHistogram = ExpirationHistogram::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_is_go_formatted() {
        let h = ExpirationHistogram::new();
        for seconds in [-1.5, 1000.0, 100.0 * DAY, 400.0 * DAY] {
            h.observe(seconds);
        }
        let mut s = String::new();
        h.encode(&mut s);
        let n = CLIENT_CERT_EXPIRATION_NAME;
        let want = format!(
            "# HELP {n} [ALPHA] Distribution of the remaining lifetime on the certificate used to authenticate a request.\n\
             # TYPE {n} histogram\n\
             {n}_bucket{{le=\"0\"}} 1\n\
             {n}_bucket{{le=\"1800\"}} 2\n\
             {n}_bucket{{le=\"3600\"}} 2\n\
             {n}_bucket{{le=\"7200\"}} 2\n\
             {n}_bucket{{le=\"21600\"}} 2\n\
             {n}_bucket{{le=\"43200\"}} 2\n\
             {n}_bucket{{le=\"86400\"}} 2\n\
             {n}_bucket{{le=\"172800\"}} 2\n\
             {n}_bucket{{le=\"345600\"}} 2\n\
             {n}_bucket{{le=\"604800\"}} 2\n\
             {n}_bucket{{le=\"2.592e+06\"}} 2\n\
             {n}_bucket{{le=\"7.776e+06\"}} 2\n\
             {n}_bucket{{le=\"1.5552e+07\"}} 3\n\
             {n}_bucket{{le=\"3.1104e+07\"}} 3\n\
             {n}_bucket{{le=\"+Inf\"}} 4\n\
             {n}_sum 4.32009985e+07\n\
             {n}_count 4\n"
        );
        assert_eq!(s, want);
    }

    #[test]
    fn a_million_observations_print_as_go_does() {
        let h = ExpirationHistogram::new();
        h.buckets[BUCKETS.len()].store(1_000_000, Ordering::Relaxed);
        h.count.store(1_000_000, Ordering::Relaxed);
        let mut s = String::new();
        h.encode(&mut s);
        assert!(s.contains("_bucket{le=\"+Inf\"} 1e+06\n"), "{s}");
        assert!(s.contains("_count 1e+06\n"), "{s}");
        assert!(s.contains("_bucket{le=\"0\"} 0\n"), "{s}");
    }
}
