//! The token cache's metrics: k8s.io/apiserver `pkg/authentication/token/cache/stats.go`.
//!
//! | metric | type | `status` |
//! |---|---|---|
//! | `authentication_token_cache_request_total` | counter | `hit`, `miss` |
//! | `authentication_token_cache_request_duration_seconds` | histogram, Prometheus' default buckets | `hit`, `miss` |
//! | `authentication_token_cache_fetch_total` | counter | `ok`, `error` |
//! | `authentication_token_cache_active_fetch_count` | gauge | `in_flight`, `blocked` |
//!
//! All are `ALPHA` with no HELP text of their own, so their HELP line is Kubernetes'
//! `"[ALPHA] "` (with the trailing space). As in Kubernetes, every request is timed from before
//! its cache key is computed until it is answered, and the latency is truncated to whole
//! milliseconds before it is observed (`float64(latency.Milliseconds()) / 1000`): a hit
//! observes 0. A miss counts as `blocked` from the miss until its caller has the answer (or
//! goes away); a delegate call counts as `in_flight` while it runs and then as one `ok` or
//! `error` fetch. Like Go's global registry, every cache records into one process-wide
//! [`TOKEN_CACHE_METRICS`] unless given its own.
//!
//! # Hot path
//!
//! A hit costs one clock reading more than before (the start; the end is the reading the
//! freshness check takes anyway) and one relaxed `fetch_add` on a counter striped over eight
//! 128-byte-aligned slots, one per thread (assigned round-robin): hits on different threads do
//! not share a cache line. The `le="0.005"` bucket *is* that striped counter; the request count
//! is the histogram's count (one family cannot disagree with the other), and a zero
//! observation does not touch the sum. Misses, fetches and gauges use plain relaxed atomics.
//!
//! ```
//! use kube_authn::token::cache::CacheMetrics;
//! static METRICS: CacheMetrics = CacheMetrics::new();
//! let mut text = String::new();
//! METRICS.encode(&mut text);
//! assert!(text.is_empty(), "no series before the first request");
//! ```

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use crate::metrics::{Striped, add_f64, write_go_float, write_histogram_series};

/// Prometheus' `DefBuckets` (what a Kubernetes histogram without `Buckets` gets).
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

const REQUEST_TOTAL: &str = "authentication_token_cache_request_total";
const REQUEST_DURATION: &str = "authentication_token_cache_request_duration_seconds";
const FETCH_TOTAL: &str = "authentication_token_cache_fetch_total";
const ACTIVE_FETCH: &str = "authentication_token_cache_active_fetch_count";

/// Whether a request was answered from the cache (`status` of the request families).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    Hit = 0,
    Miss = 1,
}

const LOOKUPS: [(Lookup, &str); 2] = [(Lookup::Hit, "hit"), (Lookup::Miss, "miss")];

struct Latency {
    /// Observations in the first bucket (`le="0.005"`: every hit that took under 6 ms).
    first: Striped,
    /// Non-cumulative counts of the other finite buckets, then `+Inf`.
    rest: [AtomicU64; BUCKETS.len()],
    /// The observations' `f64` sum, as bits.
    sum_bits: AtomicU64,
}

impl Latency {
    const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const ZERO: AtomicU64 = AtomicU64::new(0);
        Self {
            first: Striped::new(),
            rest: [ZERO; BUCKETS.len()],
            sum_bits: ZERO,
        }
    }

    fn observe(&self, elapsed: Duration) {
        // Go: `float64(latency.Milliseconds()) / 1000`.
        let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        let seconds = ms as f64 / 1000.0;
        match BUCKETS.iter().position(|&b| seconds <= b) {
            Some(0) => self.first.increment(),
            Some(i) => {
                self.rest[i - 1].fetch_add(1, Relaxed);
            }
            None => {
                self.rest[BUCKETS.len() - 1].fetch_add(1, Relaxed);
            }
        }
        if ms != 0 {
            add_f64(&self.sum_bits, seconds);
        }
    }

    /// A snapshot of the non-cumulative bucket counts (the last is `+Inf`).
    fn counts(&self) -> [u64; BUCKETS.len() + 1] {
        let mut out = [0; BUCKETS.len() + 1];
        out[0] = self.first.get();
        for (slot, c) in out[1..].iter_mut().zip(&self.rest) {
            *slot = c.load(Relaxed);
        }
        out
    }
}

/// A gauge series; it exists (is exported, possibly at 0) from its first change on, as a
/// `GaugeVec` child does from its first `WithLabelValues`.
struct Gauge {
    value: AtomicI64,
    touched: AtomicBool,
}

impl Gauge {
    const fn new() -> Self {
        Self {
            value: AtomicI64::new(0),
            touched: AtomicBool::new(false),
        }
    }

    fn add(&self, delta: i64) {
        if !self.touched.load(Relaxed) {
            self.touched.store(true, Relaxed);
        }
        self.value.fetch_add(delta, Relaxed);
    }
}

/// The `authentication_token_cache_*` metrics of one or more
/// [`CachedTokenAuthenticator`](super::CachedTokenAuthenticator)s. Caches record into
/// [`TOKEN_CACHE_METRICS`] unless [`CacheBuilder::metrics`](super::CacheBuilder::metrics)
/// gives them another (a `static`, as the metrics live as long as the process).
///
/// ```
/// use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
/// use kube_authn::token::cache::{CacheMetrics, CachedTokenAuthenticator};
/// use kube_authn::user::UserInfo;
/// use std::sync::Arc;
///
/// static METRICS: CacheMetrics = CacheMetrics::new();
/// let backend = SyncTokenFn::new(|_: &str, _: &Context| Ok(Some(Response::new(Arc::new(UserInfo::new("a"))))));
/// let cache = CachedTokenAuthenticator::builder(backend).metrics(&METRICS).build();
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let ctx = Context::default();
/// cache.authenticate_token("t", &ctx).await.unwrap(); // miss, fetch
/// cache.authenticate_token("t", &ctx).await.unwrap(); // hit
/// # });
/// let mut text = String::new();
/// METRICS.encode(&mut text);
/// assert!(text.contains("authentication_token_cache_request_total{status=\"hit\"} 1\n"));
/// assert!(text.contains("authentication_token_cache_fetch_total{status=\"ok\"} 1\n"));
/// ```
pub struct CacheMetrics {
    latency: [Latency; 2],
    /// `error`, `ok`.
    fetches: [AtomicU64; 2],
    /// `blocked`, `in_flight`.
    active: [Gauge; 2],
}

impl std::fmt::Debug for CacheMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheMetrics")
            .field("hits", &self.requests(Lookup::Hit))
            .field("misses", &self.requests(Lookup::Miss))
            .finish_non_exhaustive()
    }
}

impl Default for CacheMetrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The process-wide token cache metrics (Kubernetes' global registry holds one set for all
/// caches); what `kube-authn serve` exposes.
///
/// ```
/// let mut text = String::new();
/// kube_authn::token::cache::TOKEN_CACHE_METRICS.encode(&mut text);
/// ```
pub static TOKEN_CACHE_METRICS: CacheMetrics = CacheMetrics::new();

impl CacheMetrics {
    /// Empty metrics.
    ///
    /// ```
    /// static M: kube_authn::token::cache::CacheMetrics = kube_authn::token::cache::CacheMetrics::new();
    /// ```
    pub const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const ZERO: AtomicU64 = AtomicU64::new(0);
        Self {
            latency: [Latency::new(), Latency::new()],
            fetches: [ZERO; 2],
            active: [Gauge::new(), Gauge::new()],
        }
    }

    fn requests(&self, lookup: Lookup) -> u64 {
        self.latency[lookup as usize].counts().iter().sum()
    }

    /// One answered request: counted and its latency observed.
    pub(crate) fn request(&self, lookup: Lookup, elapsed: Duration) {
        self.latency[lookup as usize].observe(elapsed);
    }

    /// A miss starts waiting (`blocked`); the returned guard ends it.
    pub(crate) fn blocking(&self) -> Active<'_> {
        self.active[0].add(1);
        Active(&self.active[0])
    }

    /// A delegate call starts (`in_flight`); [`Fetching::done`] ends it and counts its outcome.
    pub(crate) fn fetching(&self) -> Fetching<'_> {
        self.active[1].add(1);
        Fetching(Some(self))
    }

    fn fetched(&self, ok: bool) {
        self.fetches[usize::from(ok)].fetch_add(1, Relaxed);
        self.active[1].add(-1);
    }

    /// Writes the families that have series, in the Prometheus text format as Go's client
    /// writes it (families and series sorted, numbers in Go's `%g` form).
    ///
    /// ```
    /// let mut text = String::new();
    /// kube_authn::token::cache::CacheMetrics::new().encode(&mut text);
    /// assert_eq!(text, "");
    /// ```
    pub fn encode(&self, out: &mut String) {
        let gauges: Vec<_> = [("blocked", &self.active[0]), ("in_flight", &self.active[1])]
            .into_iter()
            .filter(|(_, g)| g.touched.load(Relaxed))
            .map(|(s, g)| (s, g.value.load(Relaxed) as f64))
            .collect();
        write_family(out, ACTIVE_FETCH, "gauge", &gauges);
        let fetches: Vec<_> = [("error", &self.fetches[0]), ("ok", &self.fetches[1])]
            .into_iter()
            .map(|(s, c)| (s, c.load(Relaxed) as f64))
            .filter(|(_, c)| *c > 0.0)
            .collect();
        write_family(out, FETCH_TOTAL, "counter", &fetches);

        let observed: Vec<_> = LOOKUPS
            .iter()
            .map(|(l, s)| (*s, self.latency[*l as usize].counts(), *l))
            .filter(|(_, c, _)| c.iter().sum::<u64>() > 0)
            .collect();
        if !observed.is_empty() {
            help_and_type(out, REQUEST_DURATION, "histogram");
            for (status, counts, lookup) in &observed {
                let sum = self.latency[*lookup as usize].sum_bits.load(Relaxed);
                write_histogram_series(
                    out,
                    REQUEST_DURATION,
                    &format!("status=\"{status}\""),
                    BUCKETS,
                    counts.iter().copied(),
                    f64::from_bits(sum),
                );
            }
        }
        let requests: Vec<_> = observed
            .iter()
            .map(|(s, c, _)| (*s, c.iter().sum::<u64>() as f64))
            .collect();
        write_family(out, REQUEST_TOTAL, "counter", &requests);
    }
}

fn help_and_type(out: &mut String, name: &str, kind: &str) {
    // Kubernetes' HELP for a metric declared without one: "[ALPHA] " (trailing space kept).
    let _ = write!(out, "# HELP {name} [ALPHA] \n# TYPE {name} {kind}\n");
}

fn write_family(out: &mut String, name: &str, kind: &str, series: &[(&str, f64)]) {
    if series.is_empty() {
        return;
    }
    help_and_type(out, name, kind);
    for (status, value) in series {
        let _ = write!(out, "{name}{{status=\"{status}\"}} ");
        write_go_float(out, *value);
        out.push('\n');
    }
}

/// Ends one `active_fetch_count` unit when dropped.
pub(crate) struct Active<'a>(&'a Gauge);

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.add(-1);
    }
}

/// One delegate call in flight. [`done`](Self::done) records its outcome; dropped without
/// one (its task was cancelled), it counts as an error.
pub(crate) struct Fetching<'a>(Option<&'a CacheMetrics>);

impl Fetching<'_> {
    pub(crate) fn done(mut self, ok: bool) {
        if let Some(m) = self.0.take() {
            m.fetched(ok);
        }
    }
}

impl Drop for Fetching<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            m.fetched(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_is_truncated_to_milliseconds_and_bucketed_like_go() {
        let m = CacheMetrics::new();
        // (elapsed, bucket it lands in)
        let cases = [
            (Duration::from_micros(999), "0.005"),   // 0 ms
            (Duration::from_micros(5_999), "0.005"), // 5 ms
            (Duration::from_millis(6), "0.01"),
            (Duration::from_millis(10), "0.01"),
            (Duration::from_millis(11), "0.025"),
            (Duration::from_secs(10), "10"),
            (Duration::from_millis(10_001), "+Inf"),
        ];
        for (elapsed, _) in cases {
            m.request(Lookup::Miss, elapsed);
        }
        let mut text = String::new();
        m.encode(&mut text);
        let mut cumulative = 0;
        for le in ["0.005", "0.01", "0.025", "10", "+Inf"] {
            cumulative += cases.iter().filter(|(_, b)| *b == le).count();
            let line =
                format!("{REQUEST_DURATION}_bucket{{status=\"miss\",le=\"{le}\"}} {cumulative}\n");
            assert!(text.contains(&line), "{line} in\n{text}");
        }
        // 0.005 + 0.006 + 0.01 + 0.011 + 10 + 10.001, summed in this order as Go sums floats.
        let sum = [0.005, 0.006, 0.01, 0.011, 10.0, 10.001]
            .iter()
            .fold(0.0f64, |a, b| a + b);
        let mut want = format!("{REQUEST_DURATION}_sum{{status=\"miss\"}} ");
        write_go_float(&mut want, sum);
        assert!(text.contains(&want), "{want} in\n{text}");
        assert!(text.contains(&format!("{REQUEST_TOTAL}{{status=\"miss\"}} 7\n")));
        assert!(!text.contains("status=\"hit\""), "{text}");
    }

    #[test]
    fn gauges_exist_from_their_first_change_and_cancelled_fetches_are_errors() {
        let m = CacheMetrics::new();
        let mut text = String::new();
        m.encode(&mut text);
        assert_eq!(text, "");
        let blocked = m.blocking();
        let fetching = m.fetching();
        text.clear();
        m.encode(&mut text);
        assert_eq!(
            text,
            "# HELP authentication_token_cache_active_fetch_count [ALPHA] \n\
             # TYPE authentication_token_cache_active_fetch_count gauge\n\
             authentication_token_cache_active_fetch_count{status=\"blocked\"} 1\n\
             authentication_token_cache_active_fetch_count{status=\"in_flight\"} 1\n"
        );
        drop(fetching); // cancelled: an error
        drop(blocked);
        m.fetching().done(true);
        text.clear();
        m.encode(&mut text);
        assert_eq!(
            text,
            "# HELP authentication_token_cache_active_fetch_count [ALPHA] \n\
             # TYPE authentication_token_cache_active_fetch_count gauge\n\
             authentication_token_cache_active_fetch_count{status=\"blocked\"} 0\n\
             authentication_token_cache_active_fetch_count{status=\"in_flight\"} 0\n\
             # HELP authentication_token_cache_fetch_total [ALPHA] \n\
             # TYPE authentication_token_cache_fetch_total counter\n\
             authentication_token_cache_fetch_total{status=\"error\"} 1\n\
             authentication_token_cache_fetch_total{status=\"ok\"} 1\n"
        );
    }
}
