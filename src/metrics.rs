//! kube-apiserver's authentication metrics, hand-rolled on atomics, with Prometheus text output.
//!
//! The names, labels, HELP strings and buckets are those of k8s.io/apiserver
//! `pkg/endpoints/filters/metrics.go` (all `ALPHA`, no namespace or subsystem):
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `authentication_attempts` | counter | `result` = `success` \| `failure` \| `error` |
//! | `authenticated_user_requests` | counter | `username` = [`compress_username`] of the user |
//! | `authentication_duration_seconds` | histogram, `ExponentialBuckets(0.001, 2, 15)` | `result` |
//!
//! `result` is `error` when the chain returned an error **or** the user's audiences do not
//! intersect the API audiences, `failure` when nobody authenticated the request, and `success`
//! otherwise (only then is `authenticated_user_requests` counted).
//!
//! The crate's other families are process-wide statics in their modules: the token caches'
//! ([`TOKEN_CACHE_METRICS`](crate::token::cache::TOKEN_CACHE_METRICS)), the client
//! certificates' ([`CLIENT_CERT_EXPIRATION`](crate::x509::CLIENT_CERT_EXPIRATION)), the
//! service accounts' ([`SERVICE_ACCOUNT_METRICS`](crate::token::service_account::SERVICE_ACCOUNT_METRICS))
//! and the OIDC authenticators' ([`crate::token::oidc::metrics`]). [`encode_all`] writes them
//! all with these, the families kube-apiserver registers for an
//! [`AuthenticationOptions`](crate::config::AuthenticationOptions), in its order: what
//! `kube-authn serve` answers on `GET /metrics`.
//!
//! # Design
//!
//! The label sets are closed (3 results, 7 compressed user names), so every series is a fixed
//! atomic counter: recording is three relaxed `fetch_add`s (the duration bucket, the duration
//! sum and the compressed user; the attempts counter is the histogram's count), with no lock,
//! no map and no allocation. The counters every request touches (the first bucket, where
//! nearly all attempts land, the sums and the users) are striped over per-thread cache lines,
//! so threads recording at once do not bounce a cache line between cores. There is no
//! dependency on the `prometheus` crate. [`Metrics::encode`] writes the Prometheus text format
//! the way Go's `client_golang` does: families sorted by name, series sorted by label value,
//! only series that have been observed, floats in Go's `%g` shortest form (`1e+06`, `0.001`).
//!
//! The middleware times each attempt with [`quanta`]'s clock (the CPU's invariant time-stamp
//! counter, calibrated once against the OS monotonic clock; the OS clock itself where the
//! counter is not invariant): the two readings per request cost ≈30 ns instead of ≈75 ns for
//! `std::time::Instant` (`clock_gettime` through the vDSO) on the project machine, a tenth of
//! the whole middleware's budget. The histogram's smallest bucket is 1 ms, far above either
//! clock's error.
//!
//! ```
//! use kube_authn::metrics::{Metrics, Outcome};
//! use std::time::Duration;
//!
//! let m = Metrics::new();
//! m.record(Outcome::Success, Some("admin"), Duration::from_micros(300));
//! let mut text = String::new();
//! m.encode_counters(&mut text);
//! assert_eq!(text, "\
//! ## HELP authenticated_user_requests [ALPHA] Counter of authenticated requests broken out by username.
//! ## TYPE authenticated_user_requests counter
//! authenticated_user_requests{username=\"admin\"} 1
//! ## HELP authentication_attempts [ALPHA] Counter of authenticated attempts.
//! ## TYPE authentication_attempts counter
//! authentication_attempts{result=\"success\"} 1
//! ");
//! ```

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// The `result` label of an authentication attempt.
///
/// ```
/// assert_eq!(kube_authn::metrics::Outcome::Error.as_str(), "error");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A user was authenticated and its audiences are acceptable.
    Success,
    /// Nobody authenticated the request and nobody returned an error.
    Failure,
    /// The chain returned an error, or the audiences were not acceptable.
    Error,
}

impl Outcome {
    /// The label value.
    ///
    /// ```
    /// assert_eq!(kube_authn::metrics::Outcome::Success.as_str(), "success");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Error => "error",
        }
    }

    fn index(self) -> usize {
        match self {
            Outcome::Error => 0,
            Outcome::Failure => 1,
            Outcome::Success => 2,
        }
    }
}

/// Results in label-value order (how Go sorts series).
const OUTCOMES: [Outcome; 3] = [Outcome::Error, Outcome::Failure, Outcome::Success];

/// Compressed user names, in label-value order.
const USERNAMES: [&str; 7] = [
    "admin",
    "client",
    "email_id",
    "kube_proxy",
    "kubelet",
    "other",
    "system:serviceaccount:kube-system:default",
];

/// kube-apiserver's `compressUsername`: a few well-known names are kept, a name containing `@`
/// is `email_id`, anything else is `other` (bounded cardinality, and no user names in metrics).
///
/// ```
/// use kube_authn::metrics::compress_username;
/// assert_eq!(compress_username("kubelet"), "kubelet");
/// assert_eq!(compress_username("jane@example.com"), "email_id");
/// assert_eq!(compress_username("system:serviceaccount:default:app"), "other");
/// ```
pub fn compress_username(name: &str) -> &'static str {
    USERNAMES[username_index(name)]
}

fn username_index(name: &str) -> usize {
    match name {
        "admin" => 0,
        "client" => 1,
        "kube_proxy" => 3,
        "kubelet" => 4,
        "system:serviceaccount:kube-system:default" => 6,
        n if n.as_bytes().contains(&b'@') => 2,
        _ => 5,
    }
}

/// Number of finite buckets: `ExponentialBuckets(0.001, 2, 15)`.
const BUCKETS: usize = 15;

/// Upper bounds in nanoseconds: 1 ms × 2^i, exactly (0.001 … 16.384 s).
const BOUNDS_NANOS: [u64; BUCKETS] = {
    let mut b = [0u64; BUCKETS];
    let mut i = 0;
    while i < BUCKETS {
        b[i] = 1_000_000u64 << i;
        i += 1;
    }
    b
};

#[derive(Default)]
struct Histogram {
    /// The first bucket (≤ 1 ms, where nearly every attempt lands), striped per thread.
    first: Striped,
    /// Non-cumulative counts of the other buckets (index 0 unused); index `BUCKETS` is the
    /// `+Inf` overflow.
    buckets: [AtomicU64; BUCKETS + 1],
    /// Seconds, as `f64` bits per stripe: every observation adds to it. A float, as Go's
    /// client keeps it, so the sum never wraps (integer nanoseconds would wrap after 2^64 ns of
    /// accumulated authentication time).
    sum_seconds: Striped,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        match BOUNDS_NANOS
            .iter()
            .position(|&b| nanos <= b)
            .unwrap_or(BUCKETS)
        {
            0 => self.first.increment(),
            i => {
                self.buckets[i].fetch_add(1, Relaxed);
            }
        }
        self.sum_seconds.add_f64(elapsed.as_secs_f64());
    }

    /// Non-cumulative bucket counts (the `+Inf` overflow last).
    fn counts(&self) -> [u64; BUCKETS + 1] {
        let mut counts: [u64; BUCKETS + 1] = std::array::from_fn(|i| self.buckets[i].load(Relaxed));
        counts[0] = self.first.get();
        counts
    }

    /// Observations so far: the sum of the buckets (no separate counter to keep in step).
    fn count(&self) -> u64 {
        self.counts().iter().sum()
    }
}

/// The three authentication metrics of one server. Share it with an [`Arc`](std::sync::Arc)
/// between the middleware (which records) and the `/metrics` handler (which encodes).
///
/// ```
/// use kube_authn::metrics::{Metrics, Outcome};
/// let m = Metrics::new();
/// m.record(Outcome::Error, None, std::time::Duration::ZERO);
/// assert_eq!(m.attempts(Outcome::Error), 1);
/// ```
#[derive(Default)]
pub struct Metrics {
    // `authentication_attempts{result}` is not a counter of its own: every attempt is one
    // observation of `authentication_duration_seconds{result}`, so the attempts are that
    // histogram's count (two atomic additions per request fewer, and the two families can
    // never disagree).
    /// Striped: every successful attempt adds to one.
    users: [Striped; USERNAMES.len()],
    latency: [Histogram; 3],
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("success", &self.attempts(Outcome::Success))
            .field("failure", &self.attempts(Outcome::Failure))
            .field("error", &self.attempts(Outcome::Error))
            .finish()
    }
}

impl Metrics {
    /// Empty metrics.
    ///
    /// ```
    /// let m = kube_authn::metrics::Metrics::new();
    /// let mut s = String::new();
    /// m.encode(&mut s);
    /// assert!(s.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one attempt. `user` is the authenticated user's name; it is counted (compressed)
    /// only for [`Outcome::Success`].
    ///
    /// ```
    /// use kube_authn::metrics::{Metrics, Outcome};
    /// let m = Metrics::new();
    /// m.record(Outcome::Success, Some("jane@example.com"), std::time::Duration::from_millis(2));
    /// assert_eq!(m.user_requests("email_id"), 1);
    /// ```
    pub fn record(&self, outcome: Outcome, user: Option<&str>, elapsed: Duration) {
        if outcome == Outcome::Success
            && let Some(name) = user
        {
            self.users[username_index(name)].increment();
        }
        self.latency[outcome.index()].observe(elapsed);
    }

    /// `authentication_attempts{result}` so far.
    ///
    /// ```
    /// assert_eq!(kube_authn::metrics::Metrics::new().attempts(kube_authn::metrics::Outcome::Success), 0);
    /// ```
    pub fn attempts(&self, outcome: Outcome) -> u64 {
        self.latency[outcome.index()].count()
    }

    /// `authenticated_user_requests{username}` so far, by compressed name (`admin`, `email_id`,
    /// `other`, …); 0 for a label value that cannot occur.
    ///
    /// ```
    /// assert_eq!(kube_authn::metrics::Metrics::new().user_requests("other"), 0);
    /// ```
    pub fn user_requests(&self, compressed: &str) -> u64 {
        USERNAMES
            .iter()
            .position(|u| *u == compressed)
            .map_or(0, |i| self.users[i].get())
    }

    /// Writes all three families in the Prometheus text exposition format (version 0.0.4).
    ///
    /// ```
    /// use kube_authn::metrics::{Metrics, Outcome};
    /// let m = Metrics::new();
    /// m.record(Outcome::Failure, None, std::time::Duration::from_micros(1500));
    /// let mut s = String::new();
    /// m.encode(&mut s);
    /// assert!(s.contains("authentication_duration_seconds_bucket{result=\"failure\",le=\"0.002\"} 1\n"));
    /// assert!(s.contains("authentication_duration_seconds_count{result=\"failure\"} 1\n"));
    /// ```
    pub fn encode(&self, out: &mut String) {
        self.encode_counters(out);
        self.encode_latency(out);
    }

    /// Writes `authenticated_user_requests` and `authentication_attempts` only (what
    /// kube-apiserver's `TestMetrics` compares; the latency histogram is time-dependent).
    ///
    /// ```
    /// let mut s = String::new();
    /// kube_authn::metrics::Metrics::new().encode_counters(&mut s);
    /// assert!(s.is_empty());
    /// ```
    pub fn encode_counters(&self, out: &mut String) {
        let users: Vec<(&str, u64)> = USERNAMES
            .iter()
            .zip(&self.users)
            .map(|(u, c)| (*u, c.get()))
            .filter(|(_, c)| *c > 0)
            .collect();
        if !users.is_empty() {
            out.push_str("# HELP authenticated_user_requests [ALPHA] Counter of authenticated requests broken out by username.\n");
            out.push_str("# TYPE authenticated_user_requests counter\n");
            for (user, count) in users {
                let _ = write!(out, "authenticated_user_requests{{username=\"{user}\"}} ");
                write_go_float(out, count as f64);
                out.push('\n');
            }
        }
        let attempts: Vec<(Outcome, u64)> = OUTCOMES
            .iter()
            .map(|o| (*o, self.attempts(*o)))
            .filter(|(_, c)| *c > 0)
            .collect();
        if !attempts.is_empty() {
            out.push_str(
                "# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.\n",
            );
            out.push_str("# TYPE authentication_attempts counter\n");
            for (outcome, count) in attempts {
                let _ = write!(
                    out,
                    "authentication_attempts{{result=\"{}\"}} ",
                    outcome.as_str()
                );
                write_go_float(out, count as f64);
                out.push('\n');
            }
        }
    }

    fn encode_latency(&self, out: &mut String) {
        let observed: Vec<Outcome> = OUTCOMES
            .iter()
            .copied()
            .filter(|o| self.latency[o.index()].count() > 0)
            .collect();
        if observed.is_empty() {
            return;
        }
        out.push_str("# HELP authentication_duration_seconds [ALPHA] Authentication duration in seconds broken out by result.\n");
        out.push_str("# TYPE authentication_duration_seconds histogram\n");
        for outcome in observed {
            let h = &self.latency[outcome.index()];
            write_histogram_series(
                out,
                "authentication_duration_seconds",
                &format!("result=\"{}\"", outcome.as_str()),
                (0..BUCKETS as i32).map(|i| 0.001 * 2f64.powi(i)),
                h.counts(),
                h.sum_seconds.get_f64(),
            );
        }
    }
}

/// Writes every authentication metric family kube-apiserver would register for `options`,
/// in name order as Go's `client_golang` writes them: what `kube-authn serve` answers on
/// `GET /metrics` (it calls this function).
///
/// `middleware` is the [`Metrics`] given to the
/// [`AuthenticationLayer`](crate::middleware::AuthenticationLayer); the other families are
/// the process-wide statics, written in this order:
///
/// 1. [`AUTHENTICATION_CONFIG_CONTROLLER_METRICS`](crate::token::oidc::metrics::AUTHENTICATION_CONFIG_CONTROLLER_METRICS),
///    with [`authentication_config`](crate::config::AuthenticationOptions::authentication_config) only;
/// 2. [`JWT_AUTHENTICATOR_METRICS`](crate::token::oidc::metrics::JWT_AUTHENTICATOR_METRICS)
///    (no series until an OIDC authenticator has answered a token or fetched a JWKS);
/// 3. [`CLIENT_CERT_EXPIRATION`](crate::x509::CLIENT_CERT_EXPIRATION), with
///    [`client_ca_file`](crate::config::AuthenticationOptions::client_ca_file) only;
/// 4. `middleware` ([`Metrics::encode`]);
/// 5. [`TOKEN_CACHE_METRICS`](crate::token::cache::TOKEN_CACHE_METRICS) (no series until a
///    token cache has seen a request);
/// 6. [`SERVICE_ACCOUNT_METRICS`](crate::token::service_account::SERVICE_ACCOUNT_METRICS),
///    with service-account key files or issuers only.
///
/// Families without series are not written (as in Go), except the client-certificate
/// histogram and the service-account counters, which Go writes from registration on.
///
/// ```
/// use kube_authn::config::AuthenticationOptions;
/// use kube_authn::metrics::{Metrics, Outcome, encode_all};
///
/// let middleware = Metrics::new();
/// middleware.record(Outcome::Success, Some("admin"), std::time::Duration::from_micros(300));
/// let mut text = String::new();
/// encode_all(&middleware, &AuthenticationOptions::default(), &mut text);
/// assert!(text.contains("authentication_attempts{result=\"success\"} 1\n"));
/// assert!(!text.contains("apiserver_client_certificate_expiration_seconds"));
///
/// let with_client_ca = AuthenticationOptions {
///     client_ca_file: Some("/etc/kubernetes/pki/ca.crt".into()),
///     ..AuthenticationOptions::default()
/// };
/// let mut text = String::new();
/// encode_all(&middleware, &with_client_ca, &mut text);
/// let expiration = text.find("# TYPE apiserver_client_certificate_expiration_seconds histogram").unwrap();
/// assert!(expiration < text.find("# TYPE authentication_attempts counter").unwrap());
/// ```
pub fn encode_all(
    middleware: &Metrics,
    options: &crate::config::AuthenticationOptions,
    out: &mut String,
) {
    if options.authentication_config.is_some() {
        // Registered (and the configuration's hash recorded) with the file.
        crate::token::oidc::metrics::AUTHENTICATION_CONFIG_CONTROLLER_METRICS.encode(out);
    }
    crate::token::oidc::metrics::JWT_AUTHENTICATOR_METRICS.encode(out);
    if options.client_ca_file.is_some() {
        // kube-apiserver registers it when it builds an X.509 authenticator.
        crate::x509::CLIENT_CERT_EXPIRATION.encode(out);
    }
    middleware.encode(out);
    crate::token::cache::TOKEN_CACHE_METRICS.encode(out);
    if !options.service_account_key_files.is_empty() || !options.service_account_issuers.is_empty()
    {
        crate::token::service_account::SERVICE_ACCOUNT_METRICS.encode(out);
    }
}

/// Number of [`Striped`] slots.
const STRIPES: usize = 8;

/// One counter slot on a cache line of its own (128 bytes: adjacent-line prefetch pairs lines).
#[repr(align(128))]
struct Padded(AtomicU64);

/// A counter split over [`STRIPES`] cache lines, each thread adding to its own slot (assigned
/// round-robin on first use), so threads counting at once do not bounce one cache line between
/// cores. Reading sums the slots. For counters bumped on a hot path by many threads (token
/// cache hits).
pub(crate) struct Striped([Padded; STRIPES]);

impl Default for Striped {
    fn default() -> Self {
        Self::new()
    }
}

impl Striped {
    pub(crate) const fn new() -> Self {
        #[allow(clippy::declare_interior_mutable_const)]
        const ZERO: Padded = Padded(AtomicU64::new(0));
        Self([ZERO; STRIPES])
    }

    pub(crate) fn increment(&self) {
        self.add(1);
    }

    pub(crate) fn add(&self, n: u64) {
        self.0[stripe()].0.fetch_add(n, Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.iter().map(|p| p.0.load(Relaxed)).sum()
    }

    /// Adds `v` to this thread's slot, the slots holding `f64` bits (a float sum: use either
    /// `add`/`get` or `add_f64`/`get_f64` on one `Striped`, never both).
    pub(crate) fn add_f64(&self, v: f64) {
        add_f64(&self.0[stripe()].0, v);
    }

    /// The float sum of the slots written by [`add_f64`](Self::add_f64).
    pub(crate) fn get_f64(&self) -> f64 {
        self.0
            .iter()
            .map(|p| f64::from_bits(p.0.load(Relaxed)))
            .sum()
    }
}

/// This thread's slot index.
fn stripe() -> usize {
    use std::sync::atomic::AtomicUsize;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Relaxed) % STRIPES;
    }
    SLOT.with(|s| *s)
}

/// Writes one histogram series as Go's client does: `{name}_bucket{<labels>,le="<bound>"}` with
/// the cumulative count for each bound and `+Inf`, then `{name}_sum` and `{name}_count`.
/// `labels` is the series' label pairs (`result="success"`), or empty; `counts` are the
/// non-cumulative bucket counts, one per bound and then the `+Inf` overflow. The count is the
/// buckets' total, so `+Inf` and `_count` agree even while other threads record. Returns it.
pub(crate) fn write_histogram_series(
    out: &mut String,
    name: &str,
    labels: &str,
    bounds: impl IntoIterator<Item = f64>,
    counts: impl IntoIterator<Item = u64>,
    sum: f64,
) -> u64 {
    let sep = if labels.is_empty() { "" } else { "," };
    let mut cumulative = 0u64;
    let mut bounds = bounds.into_iter();
    for count in counts {
        cumulative += count;
        let _ = write!(out, "{name}_bucket{{{labels}{sep}le=\"");
        match bounds.next() {
            Some(bound) => write_go_float(out, bound),
            None => out.push_str("+Inf"),
        }
        out.push_str("\"} ");
        write_go_float(out, cumulative as f64);
        out.push('\n');
    }
    let braced = if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    };
    let _ = write!(out, "{name}_sum{braced} ");
    write_go_float(out, sum);
    let _ = write!(out, "\n{name}_count{braced} ");
    write_go_float(out, cumulative as f64);
    out.push('\n');
    cumulative
}

/// Adds `v` to the `f64` stored as bits in `sum` (Go's histogram sum is a float sum too).
pub(crate) fn add_f64(sum: &AtomicU64, v: f64) {
    let mut cur = sum.load(Relaxed);
    loop {
        let new = (f64::from_bits(cur) + v).to_bits();
        match sum.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
            Ok(_) => break,
            Err(actual) => cur = actual,
        }
    }
}

/// Writes `v` as Go's `strconv.FormatFloat(v, 'g', -1, 64)` (what `client_golang` uses), with
/// Prometheus' spellings of the special values.
pub(crate) fn write_go_float(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
        return;
    }
    if v == 0.0 {
        // Prometheus' text writer prints any zero as `0`, negative zero included.
        out.push('0');
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digit count ("-1.2345e-5"), but on an exact
    // tie it may pick the odd neighbour where Go picks the even one (rust-lang/rust#130936).
    // `{:.*e}` with that many digits rounds exactly, ties to even: Go's choice whenever it
    // still reads back as `v` (near a power of two the nearer neighbour may not).
    let shortest = format!("{v:e}");
    let digits = shortest
        .split_once('e')
        .map_or(shortest.as_str(), |(m, _)| m)
        .bytes()
        .filter(u8::is_ascii_digit)
        .count()
        .max(1);
    let even = format!("{:.*e}", digits - 1, v);
    let sci = if even.parse::<f64>() == Ok(v) {
        even
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    // One digit before the point, the rest after it.
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let frac = frac.trim_end_matches('0');
    let len = int.len() + frac.len();
    if negative {
        out.push('-');
    }
    // Go: %e when exp < -4 || exp >= 6 (shortest formatting uses precision 6 here).
    if !(-4..6).contains(&exp) {
        out.push_str(int);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
        return;
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..-point {
            out.push('0');
        }
        out.push_str(int);
        out.push_str(frac);
    } else if point as usize >= len {
        out.push_str(int);
        out.push_str(frac);
        for _ in len..point as usize {
            out.push('0');
        }
    } else {
        // 1 <= point < len: the point falls inside `frac`.
        let (before, after) = frac.split_at(point as usize - int.len());
        out.push_str(int);
        out.push_str(before);
        out.push('.');
        out.push_str(after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Striped counters lose nothing: threads recording at once add up exactly.
    #[test]
    fn concurrent_records_add_up() {
        let m = Metrics::new();
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let m = &m;
                scope.spawn(move || {
                    for _ in 0..10_000 {
                        m.record(
                            Outcome::Success,
                            Some("admin"),
                            Duration::from_nanos(100 + t),
                        );
                    }
                    m.record(Outcome::Success, Some("admin"), Duration::from_millis(3));
                });
            }
        });
        assert_eq!(m.attempts(Outcome::Success), 40_004);
        assert_eq!(m.user_requests("admin"), 40_004);
        let mut text = String::new();
        m.encode(&mut text);
        for line in [
            "authentication_duration_seconds_bucket{result=\"success\",le=\"0.001\"} 40000\n",
            "authentication_duration_seconds_bucket{result=\"success\",le=\"0.004\"} 40004\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        // 10,000 × (100 + 101 + 102 + 103) ns + 4 × 3 ms, as a float sum (Go's too is a float,
        // so the last digits depend on the order of the additions).
        let sum = series_value(
            &text,
            "authentication_duration_seconds_sum{result=\"success\"}",
        );
        assert!((sum - 0.01606).abs() < 1e-12, "{sum}");
    }

    /// The value of the series `name` (with its labels) in an exposition.
    fn series_value(text: &str, name: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .parse()
            .unwrap()
    }

    /// The duration sum is a float, as Go's: it cannot wrap (nanoseconds in a `u64` wrapped
    /// after 2^64 ns of accumulated authentication time, and panicked in debug builds).
    #[test]
    fn duration_sum_does_not_wrap() {
        let m = Metrics::new();
        m.record(Outcome::Success, Some("a"), Duration::from_nanos(u64::MAX));
        m.record(Outcome::Success, Some("a"), Duration::from_nanos(2));
        m.record(Outcome::Error, None, Duration::MAX);
        let mut text = String::new();
        m.encode(&mut text);
        let sum = series_value(
            &text,
            "authentication_duration_seconds_sum{result=\"success\"}",
        );
        assert!((sum - u64::MAX as f64 / 1e9).abs() < 1.0, "{sum}");
        let sum = series_value(
            &text,
            "authentication_duration_seconds_sum{result=\"error\"}",
        );
        assert!(sum > 1.8e19, "{sum}");
    }

    /// `encode_all` writes the families kube-apiserver registers for the options, each once,
    /// in name order (as `kube-authn serve` writes them): the client-certificate histogram
    /// with a client CA only, the service-account counters with service-account keys or
    /// issuers only, and the middleware's families always.
    #[test]
    fn encode_all_writes_the_families_of_the_options_in_name_order() {
        use crate::config::AuthenticationOptions;
        let middleware = Metrics::new();
        middleware.record(Outcome::Failure, None, Duration::from_micros(300));
        let defaults = AuthenticationOptions::default;
        // (case, options, client-certificate histogram, service-account counters)
        let cases: Vec<(&str, AuthenticationOptions, bool, bool)> = vec![
            ("defaults", defaults(), false, false),
            (
                "client CA",
                AuthenticationOptions {
                    client_ca_file: Some("/ca.crt".into()),
                    ..defaults()
                },
                true,
                false,
            ),
            (
                "service-account keys",
                AuthenticationOptions {
                    service_account_key_files: vec!["/sa.pub".into()],
                    ..defaults()
                },
                false,
                true,
            ),
            (
                "service-account issuers",
                AuthenticationOptions {
                    service_account_issuers: vec!["https://issuer".into()],
                    ..defaults()
                },
                false,
                true,
            ),
        ];
        for (case, options, x509, service_accounts) in cases {
            let mut text = String::new();
            encode_all(&middleware, &options, &mut text);
            let families: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("# TYPE "))
                .filter_map(|l| l.split(' ').next())
                .collect();
            let mut sorted = families.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(families, sorted, "{case}: in name order, each once");
            let has = |name: &str| families.contains(&name);
            assert!(has("authentication_attempts"), "{case}");
            assert!(has("authentication_duration_seconds"), "{case}");
            assert_eq!(
                has("apiserver_client_certificate_expiration_seconds"),
                x509,
                "{case}"
            );
            assert_eq!(
                has("serviceaccount_legacy_tokens_total"),
                service_accounts,
                "{case}"
            );
        }
    }

    fn go(v: f64) -> String {
        let mut s = String::new();
        write_go_float(&mut s, v);
        s
    }

    #[test]
    // The tie rows spell out each float's exact value, more digits than a shortest literal.
    #[allow(clippy::excessive_precision)]
    fn go_float_formatting_table() {
        // strconv.FormatFloat(v, 'g', -1, 64) outputs.
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (42.0, "42"),
            (999_999.0, "999999"),
            (1_000_000.0, "1e+06"),
            (1_234_567.0, "1.234567e+06"),
            (0.001, "0.001"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000_012_3, "1.23e-05"),
            (16.384, "16.384"),
            (0.064, "0.064"),
            (-2.5, "-2.5"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
            (123_456.0, "123456"),
            (1e21, "1e+21"),
            // Exact ties at the shortest digit count: Go rounds to even where Rust's `{:e}` may
            // not (rust-lang/rust#130936).
            (1_029_887_837_244_557.25, "1.0298878372445572e+15"),
            (83_010_641_151_504.125, "8.301064115150412e+13"),
            (1_763_890_812.003_906_25, "1.7638908120039062e+09"),
            (-1_763_890_812.003_906_25, "-1.7638908120039062e+09"),
            (146_412_666_550.078_125, "1.4641266655007812e+11"),
            (2_240_144_444_209.656_25, "2.2401444442096562e+12"),
            (597_107_879_574_125.25, "5.971078795741252e+14"),
            // 2^-24 is a tie too, but its even neighbour (…062) lies below the narrower
            // rounding interval under a power of two and reads back as another float.
            (5.960_464_477_539_062_5e-8, "5.960464477539063e-08"),
        ];
        for (v, want) in cases {
            assert_eq!(go(*v), *want, "{v}");
        }
    }

    #[test]
    fn buckets_are_exponential_0_001_by_2() {
        let mut bound = 0.001f64;
        let mut got = Vec::new();
        for _ in 0..BUCKETS {
            got.push(go(bound));
            bound *= 2.0;
        }
        assert_eq!(
            got,
            [
                "0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "0.256",
                "0.512", "1.024", "2.048", "4.096", "8.192", "16.384"
            ]
        );
    }

    #[test]
    fn attempts_are_the_duration_histograms_count() {
        let m = Metrics::new();
        let records = [
            (Outcome::Success, Duration::from_micros(3)),
            (Outcome::Success, Duration::from_secs(30)), // +Inf bucket still counts
            (Outcome::Failure, Duration::from_millis(2)),
        ];
        for (o, d) in records {
            m.record(o, Some("u"), d);
        }
        assert_eq!(m.attempts(Outcome::Success), 2);
        assert_eq!(m.attempts(Outcome::Failure), 1);
        assert_eq!(m.attempts(Outcome::Error), 0);
        let mut s = String::new();
        m.encode(&mut s);
        for (result, n) in [("success", 2), ("failure", 1)] {
            assert!(
                s.contains(&format!(
                    "authentication_attempts{{result=\"{result}\"}} {n}\n"
                )),
                "{s}"
            );
            assert!(
                s.contains(&format!(
                    "authentication_duration_seconds_count{{result=\"{result}\"}} {n}\n"
                )),
                "{s}"
            );
        }
        assert!(!s.contains("result=\"error\""), "{s}");
    }

    #[test]
    fn compress_username_table() {
        let cases = [
            ("admin", "admin"),
            ("client", "client"),
            ("kube_proxy", "kube_proxy"),
            ("kubelet", "kubelet"),
            (
                "system:serviceaccount:kube-system:default",
                "system:serviceaccount:kube-system:default",
            ),
            ("Admin", "other"),
            ("system:kube-proxy", "other"),
            ("a@b", "email_id"),
            ("@", "email_id"),
            ("", "other"),
            ("system:anonymous", "other"),
        ];
        for (name, want) in cases {
            assert_eq!(compress_username(name), want, "{name}");
        }
    }

    #[test]
    fn striped_counter_sums_every_threads_slot() {
        static C: Striped = Striped::new();
        std::thread::scope(|s| {
            for _ in 0..STRIPES + 3 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        C.increment();
                    }
                });
            }
        });
        assert_eq!(C.get(), (STRIPES as u64 + 3) * 1000);
        assert!(std::mem::align_of::<Padded>() >= 128);
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_inclusive() {
        let m = Metrics::new();
        m.record(Outcome::Success, Some("x"), Duration::from_millis(1)); // le=0.001 (inclusive)
        m.record(Outcome::Success, Some("x"), Duration::from_micros(1001)); // le=0.002
        m.record(Outcome::Success, Some("x"), Duration::from_secs(20)); // +Inf only
        let mut s = String::new();
        m.encode(&mut s);
        for line in [
            "authentication_duration_seconds_bucket{result=\"success\",le=\"0.001\"} 1\n",
            "authentication_duration_seconds_bucket{result=\"success\",le=\"0.002\"} 2\n",
            "authentication_duration_seconds_bucket{result=\"success\",le=\"16.384\"} 2\n",
            "authentication_duration_seconds_bucket{result=\"success\",le=\"+Inf\"} 3\n",
            "authentication_duration_seconds_sum{result=\"success\"} 20.002001\n",
            "authentication_duration_seconds_count{result=\"success\"} 3\n",
            "authenticated_user_requests{username=\"other\"} 3\n",
        ] {
            assert!(s.contains(line), "missing {line:?} in\n{s}");
        }
        assert!(!s.contains("result=\"error\""));
    }
}
