//! The JWT authenticator metrics of k8s.io/apiserver `plugin/pkg/authenticator/token/oidc/metrics.go`
//! (all `ALPHA`; the JWKS families are behind the `StructuredAuthenticationConfigurationJWKSMetrics`
//! feature gate, on by default since Kubernetes 1.35).
//!
//! | metric | type | labels | recorded when |
//! |---|---|---|---|
//! | `apiserver_authentication_jwt_authenticator_latency_seconds` | histogram, buckets 1 ms … 10 s | `result` (`success`, `failure`), `jwt_issuer_hash` | an [`OidcAuthenticator`](super::OidcAuthenticator) answers a token it owns: with a user (`success`) or an error (`failure`, also "not initialized"); a token of another issuer, or one whose audiences the authenticator cannot serve, records nothing |
//! | `apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds` | gauge | `result`, `jwt_issuer_hash`, `apiserver_id_hash` | every JWKS fetch (discovery's first one and each refetch for a token no current key verifies): the wall-clock time, in seconds, of its end |
//! | `apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info` | gauge (always 1) | `jwt_issuer_hash`, `apiserver_id_hash`, `hash` | a successful JWKS fetch: `hash` is that document's hash |
//!
//! A fetch is a `success` when the issuer answered `200 OK` with a body that decodes as a JSON Web
//! Key Set; anything else (transport error, other status, a body over
//! [`MAX_JWKS_BYTES`](super::discovery::MAX_JWKS_BYTES), not a key set) is a `failure`. Hashes
//! are Kubernetes' `getHash`: `sha256:` and the lower-case hex SHA-256 of the text, or the empty
//! string for empty text (so a library user who sets no API server ID gets
//! `apiserver_id_hash=""`). [`apiserver_id`] computes kube-apiserver's identity from a host
//! name.
//!
//! Series exist from their first observation on (Go's `WithLabelValues`), so [`encode`] writes
//! nothing before the first token or fetch. Every authenticator records into the process-wide
//! [`JWT_AUTHENTICATOR_METRICS`] unless given its own
//! ([`OidcAuthenticator::with_metrics`](super::OidcAuthenticator::with_metrics)).
//!
//! # Hot path
//!
//! Each authenticator holds its issuer's series; recording a token is two clock readings, one
//! relaxed `fetch_add` on a bucket and one compare-and-swap on the float sum. The registry's
//! lock is taken only when an authenticator is built, a JWKS is fetched, or the metrics are
//! written.
//!
//! [`encode`]: JwtAuthenticatorMetrics::encode
//!
//! ```
//! use kube_authn::token::oidc::metrics::JwtAuthenticatorMetrics;
//! static METRICS: JwtAuthenticatorMetrics = JwtAuthenticatorMetrics::new();
//! let mut text = String::new();
//! METRICS.encode(&mut text);
//! assert!(text.is_empty(), "no series before the first token");
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use crate::metrics::{add_f64, write_go_float, write_histogram_series};

const LATENCY: &str = "apiserver_authentication_jwt_authenticator_latency_seconds";
const LATENCY_HELP: &str = "[ALPHA] Latency of jwt authentication operations in seconds. This is the time spent authenticating a token for cache miss only (i.e. when the token is not found in the cache).";
const FETCH_TIMESTAMP: &str =
    "apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds";
const FETCH_TIMESTAMP_HELP: &str = "[ALPHA] Timestamp of the last successful or failed JWKS fetch split by result, api server identity and jwt issuer for the JWT authenticator.";
const KEY_SET_INFO: &str =
    "apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info";
const KEY_SET_INFO_HELP: &str = "[ALPHA] Information about the last JWKS fetched by the JWT authenticator with hash as label, split by api server identity and jwt issuer.";

/// Kubernetes' buckets for the latency histogram ("default histogram buckets with a 1ms
/// starting point").
const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Kubernetes' `getHash`: `sha256:<hex>` of `data`, or `""` for empty data. Go hashes
/// `string(data)`, the bytes as they are, so a file that is not UTF-8 is hashed as read.
///
/// ```
/// use kube_authn::token::oidc::metrics::hash_label;
/// assert_eq!(hash_label(""), "");
/// assert_eq!(
///     hash_label("https://issuer.example"),
///     "sha256:ffb55acfff1cbc1b78adb75565bb3ff6e96ee5b7830905fe7feadc7d97736da8"
/// );
/// assert_eq!(
///     hash_label(b"x\xff"),
///     "sha256:41add8152e6530cd1f5030084f5c4fd3a28b735897c8c8801e3f4eec08c62028"
/// );
/// ```
pub fn hash_label(data: impl AsRef<[u8]>) -> String {
    let data = data.as_ref();
    if data.is_empty() {
        return String::new();
    }
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in Sha256::digest(data) {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// kube-apiserver's API server identity (`k8s.io/apiserver/pkg/server/config.go`, feature
/// `APIServerIdentity`): `apiserver-` and the lower-case, unpadded base32 of the first 16 bytes
/// of SHA-256 over the host name and the identity value, each preceded by its length as a
/// big-endian `u16` (Go's `cryptobyte` length prefixes). kube-apiserver's identity value is
/// `kube-apiserver`; `kube-authn serve` uses `kube-authn`. A part longer than 65,535 bytes is cut
/// there (Go's builder would fail).
///
/// ```
/// use kube_authn::token::oidc::metrics::apiserver_id;
/// // Vectors from Go (cryptobyte, crypto/sha256, encoding/base32).
/// assert_eq!(apiserver_id("node-1", "kube-apiserver"), "apiserver-lgabes5ywnaqeagh5dny4zlzs4");
/// assert_eq!(apiserver_id("node-1", "kube-authn"), "apiserver-5uhjv4vtnsm7ovkbhdfg4ua2ya");
/// ```
pub fn apiserver_id(hostname: &str, identity: &str) -> String {
    let mut h = Sha256::new();
    for part in [hostname.as_bytes(), identity.as_bytes()] {
        let part = &part[..part.len().min(usize::from(u16::MAX))];
        h.update((part.len() as u16).to_be_bytes());
        h.update(part);
    }
    let digest = h.finalize();
    let mut out = String::from("apiserver-");
    base32_lower(&digest[..16], &mut out);
    out
}

/// RFC 4648 base32 (standard alphabet, lower-cased, no padding).
fn base32_lower(data: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &b in data {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
}

/// One latency series: non-cumulative bucket counts (the last is `+Inf`) and the float sum.
struct Histogram {
    counts: [AtomicU64; BUCKETS.len() + 1],
    sum_bits: AtomicU64,
}

impl Histogram {
    fn new() -> Self {
        Self {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_bits: AtomicU64::new(0),
        }
    }

    fn observe(&self, elapsed: Duration) {
        // Go: `duration.Seconds()`, no truncation.
        let seconds = elapsed.as_secs_f64();
        let i = BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(BUCKETS.len());
        self.counts[i].fetch_add(1, Relaxed);
        add_f64(&self.sum_bits, seconds);
    }

    fn snapshot(&self) -> ([u64; BUCKETS.len() + 1], f64) {
        let mut out = [0; BUCKETS.len() + 1];
        for (slot, c) in out.iter_mut().zip(&self.counts) {
            *slot = c.load(Relaxed);
        }
        (out, f64::from_bits(self.sum_bits.load(Relaxed)))
    }
}

/// The latency series of one issuer (`failure`, then `success`), shared by every authenticator
/// for that issuer in one registry.
pub(crate) struct IssuerLatency {
    issuer_hash: String,
    results: [Histogram; 2],
}

impl IssuerLatency {
    /// Records one answered token: `success` with a user, `failure` with an error.
    pub(crate) fn observe(&self, success: bool, elapsed: Duration) {
        self.results[usize::from(success)].observe(elapsed);
    }
}

/// The last JWKS fetches of one (API server, issuer) pair.
#[derive(Default)]
struct JwksFetches {
    /// Seconds since the epoch of the last failed and the last successful fetch.
    last: [Option<f64>; 2],
    /// The hash of the last key set fetched successfully.
    key_set_hash: Option<String>,
}

/// kube-apiserver's three `apiserver_authentication_jwt_authenticator_*` families.
///
/// ```
/// use kube_authn::token::oidc::metrics::JwtAuthenticatorMetrics;
/// let m = JwtAuthenticatorMetrics::new();
/// assert_eq!(m.latency_count("https://issuer.example", true), 0);
/// ```
pub struct JwtAuthenticatorMetrics {
    latency: Mutex<Vec<Arc<IssuerLatency>>>,
    /// Keyed by (`apiserver_id_hash`, `jwt_issuer_hash`): both exposed families sort their
    /// series by these labels first.
    jwks: Mutex<BTreeMap<(String, String), JwksFetches>>,
}

impl std::fmt::Debug for JwtAuthenticatorMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuthenticatorMetrics")
            .field("issuers", &lock(&self.latency).len())
            .field("jwks_series", &lock(&self.jwks).len())
            .finish()
    }
}

impl Default for JwtAuthenticatorMetrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The process-wide JWT authenticator metrics (Kubernetes' global registry); what
/// `kube-authn serve` exposes.
///
/// ```
/// let mut text = String::new();
/// kube_authn::token::oidc::metrics::JWT_AUTHENTICATOR_METRICS.encode(&mut text);
/// ```
pub static JWT_AUTHENTICATOR_METRICS: JwtAuthenticatorMetrics = JwtAuthenticatorMetrics::new();

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl JwtAuthenticatorMetrics {
    /// No series.
    ///
    /// ```
    /// static M: kube_authn::token::oidc::metrics::JwtAuthenticatorMetrics =
    ///     kube_authn::token::oidc::metrics::JwtAuthenticatorMetrics::new();
    /// ```
    pub const fn new() -> Self {
        Self {
            latency: Mutex::new(Vec::new()),
            jwks: Mutex::new(BTreeMap::new()),
        }
    }

    /// The latency series of `issuer` (registered on first use; one per issuer however many
    /// authenticators are built for it, as Go's label values make it).
    pub(crate) fn issuer(&self, issuer: &str) -> Arc<IssuerLatency> {
        let hash = hash_label(issuer);
        let mut all = lock(&self.latency);
        if let Some(found) = all.iter().find(|s| s.issuer_hash == hash) {
            return found.clone();
        }
        let series = Arc::new(IssuerLatency {
            issuer_hash: hash,
            results: [Histogram::new(), Histogram::new()],
        });
        all.push(series.clone());
        series
    }

    /// Records a JWKS fetch for `issuer` by the API server `apiserver_id` that ended at `now`:
    /// `Ok(body)` for a key set that decoded (its text is hashed), `Err(())` for a failure;
    /// nothing once `retired` is set (read under the lock [`delete_jwks`](Self::delete_jwks)
    /// takes, so a fetch that ends during a reload cannot bring back a removed series).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn record_jwks_fetch(
        &self,
        issuer: &str,
        apiserver_id: &str,
        result: Result<&[u8], ()>,
        now: SystemTime,
        retired: &std::sync::atomic::AtomicBool,
    ) {
        let seconds = unix_seconds(now);
        let key = (hash_label(apiserver_id), hash_label(issuer));
        // Hashed outside the lock.
        let body_hash = result.ok().map(hash_label);
        let mut all = lock(&self.jwks);
        if retired.load(Relaxed) {
            return;
        }
        let entry = all.entry(key).or_default();
        entry.last[usize::from(body_hash.is_some())] = Some(seconds);
        if let Some(h) = body_hash {
            entry.key_set_hash = Some(h);
        }
    }

    /// Forgets the JWKS series of `issuer` for `apiserver_id` (Kubernetes'
    /// `DeleteJWKSFetchMetrics`, called when a reload removes the issuer).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn delete_jwks(&self, issuer: &str, apiserver_id: &str) {
        let key = (hash_label(apiserver_id), hash_label(issuer));
        lock(&self.jwks).remove(&key);
    }

    /// How many tokens of `issuer` were answered with `success` (or not): the histogram's
    /// count.
    ///
    /// ```
    /// let m = kube_authn::token::oidc::metrics::JwtAuthenticatorMetrics::new();
    /// assert_eq!(m.latency_count("https://i", false), 0);
    /// ```
    pub fn latency_count(&self, issuer: &str, success: bool) -> u64 {
        let hash = hash_label(issuer);
        lock(&self.latency)
            .iter()
            .filter(|s| s.issuer_hash == hash)
            .map(|s| {
                s.results[usize::from(success)]
                    .snapshot()
                    .0
                    .iter()
                    .sum::<u64>()
            })
            .sum()
    }

    /// Writes the families that have series, in the Prometheus text format as Go's client
    /// writes them: families by name, series by label values (label names sorted, `le` last).
    ///
    /// ```
    /// let mut text = String::new();
    /// kube_authn::token::oidc::metrics::JwtAuthenticatorMetrics::new().encode(&mut text);
    /// assert_eq!(text, "");
    /// ```
    pub fn encode(&self, out: &mut String) {
        {
            let jwks = lock(&self.jwks);
            // key_set_info: labels apiserver_id_hash, hash, jwt_issuer_hash.
            let mut info: Vec<(&str, &str, &str)> = jwks
                .iter()
                .filter_map(|((api, iss), f)| {
                    f.key_set_hash
                        .as_deref()
                        .map(|h| (api.as_str(), h, iss.as_str()))
                })
                .collect();
            info.sort_unstable();
            if !info.is_empty() {
                let _ = write!(
                    out,
                    "# HELP {KEY_SET_INFO} {KEY_SET_INFO_HELP}\n# TYPE {KEY_SET_INFO} gauge\n"
                );
                for (api, hash, iss) in info {
                    let _ = writeln!(
                        out,
                        "{KEY_SET_INFO}{{apiserver_id_hash=\"{api}\",hash=\"{hash}\",jwt_issuer_hash=\"{iss}\"}} 1"
                    );
                }
            }
            // last_timestamp: labels apiserver_id_hash, jwt_issuer_hash, result; the map's
            // order, then "failure" before "success".
            if jwks.values().any(|f| f.last.iter().any(Option::is_some)) {
                let _ = write!(
                    out,
                    "# HELP {FETCH_TIMESTAMP} {FETCH_TIMESTAMP_HELP}\n# TYPE {FETCH_TIMESTAMP} gauge\n"
                );
                for ((api, iss), f) in jwks.iter() {
                    for (result, at) in ["failure", "success"].iter().zip(f.last) {
                        if let Some(at) = at {
                            let _ = write!(
                                out,
                                "{FETCH_TIMESTAMP}{{apiserver_id_hash=\"{api}\",jwt_issuer_hash=\"{iss}\",result=\"{result}\"}} "
                            );
                            write_go_float(out, at);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        // latency: labels jwt_issuer_hash, result.
        let mut series: Vec<(String, &str, [u64; BUCKETS.len() + 1], f64)> = Vec::new();
        for s in lock(&self.latency).iter() {
            for (result, h) in ["failure", "success"].iter().zip(&s.results) {
                let (counts, sum) = h.snapshot();
                if counts.iter().any(|&c| c != 0) {
                    series.push((s.issuer_hash.clone(), result, counts, sum));
                }
            }
        }
        if series.is_empty() {
            return;
        }
        series.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let _ = write!(
            out,
            "# HELP {LATENCY} {LATENCY_HELP}\n# TYPE {LATENCY} histogram\n"
        );
        for (iss, result, counts, sum) in series {
            let labels = format!("jwt_issuer_hash=\"{iss}\",result=\"{result}\"");
            write_histogram_series(out, LATENCY, &labels, BUCKETS, counts, sum);
        }
    }
}

const RELOADS_TOTAL: &str = "apiserver_authentication_config_controller_automatic_reloads_total";
const RELOADS_TOTAL_HELP: &str = "[BETA] Total number of automatic reloads of authentication configuration split by status and apiserver identity.";
const RELOAD_TIMESTAMP: &str =
    "apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds";
const RELOAD_TIMESTAMP_HELP: &str = "[BETA] Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.";
const LAST_CONFIG_INFO: &str = "apiserver_authentication_config_controller_last_config_info";
const LAST_CONFIG_INFO_HELP: &str = "[ALPHA] Information about the last applied authentication configuration with hash as label, split by apiserver identity.";

/// kube-apiserver's `apiserver_authentication_config_controller_*` families
/// (`k8s.io/apiserver/pkg/server/options/authenticationconfig/metrics`), recorded by the
/// `--authentication-config` reloader ([`super::reload`]):
///
/// | metric | type | labels | recorded |
/// |---|---|---|---|
/// | `…_automatic_reloads_total` | counter (`BETA`) | `status` (`success`, `failure`), `apiserver_id_hash` | each reload attempt of a changed (or unreadable) file |
/// | `…_automatic_reload_last_timestamp_seconds` | gauge (`BETA`) | `status`, `apiserver_id_hash` | the time of that attempt |
/// | `…_last_config_info` | gauge, always 1 (`ALPHA`) | `apiserver_id_hash`, `hash` | at start-up and on each successful reload: the hash of the file's text |
///
/// ```
/// use kube_authn::token::oidc::metrics::ConfigControllerMetrics;
/// static M: ConfigControllerMetrics = ConfigControllerMetrics::new();
/// M.record_config("apiserver-x", "apiVersion: apiserver.config.k8s.io/v1\n");
/// let mut text = String::new();
/// M.encode(&mut text);
/// assert!(text.contains("apiserver_authentication_config_controller_last_config_info{apiserver_id_hash=\"sha256:"));
/// ```
pub struct ConfigControllerMetrics {
    state: Mutex<ControllerState>,
}

#[derive(Default)]
struct ControllerState {
    /// (`apiserver_id_hash`, success) → (count, last time in seconds).
    reloads: BTreeMap<(String, bool), (u64, f64)>,
    /// (`apiserver_id_hash`, `hash`) of the configuration in effect.
    last_config: Option<(String, String)>,
}

impl std::fmt::Debug for ConfigControllerMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigControllerMetrics")
            .field("series", &lock(&self.state).reloads.len())
            .finish()
    }
}

impl Default for ConfigControllerMetrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The process-wide configuration-controller metrics; what `kube-authn serve` exposes.
///
/// ```
/// let mut text = String::new();
/// kube_authn::token::oidc::metrics::AUTHENTICATION_CONFIG_CONTROLLER_METRICS.encode(&mut text);
/// ```
pub static AUTHENTICATION_CONFIG_CONTROLLER_METRICS: ConfigControllerMetrics =
    ConfigControllerMetrics::new();

impl ConfigControllerMetrics {
    /// No series.
    ///
    /// ```
    /// static M: kube_authn::token::oidc::metrics::ConfigControllerMetrics =
    ///     kube_authn::token::oidc::metrics::ConfigControllerMetrics::new();
    /// ```
    pub const fn new() -> Self {
        Self {
            state: Mutex::new(ControllerState {
                reloads: BTreeMap::new(),
                last_config: None,
            }),
        }
    }

    /// Records the configuration in effect (Kubernetes'
    /// `RecordAuthenticationConfigLastConfigInfo`): `data` is the file's content, hashed as
    /// read (bytes that are not UTF-8 included, as Go hashes them).
    ///
    /// ```
    /// let m = kube_authn::token::oidc::metrics::ConfigControllerMetrics::new();
    /// m.record_config("", "kind: AuthenticationConfiguration\n");
    /// ```
    pub fn record_config(&self, apiserver_id: &str, data: impl AsRef<[u8]>) {
        let entry = (hash_label(apiserver_id), hash_label(data));
        lock(&self.state).last_config = Some(entry);
    }

    /// Records one automatic reload at `now`: a success also records `data` as the
    /// configuration in effect.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn record_reload(
        &self,
        apiserver_id: &str,
        success: Option<&[u8]>,
        now: SystemTime,
    ) {
        let seconds = unix_seconds(now);
        let api = hash_label(apiserver_id);
        let config = success.map(hash_label);
        let mut state = lock(&self.state);
        let slot = state
            .reloads
            .entry((api.clone(), config.is_some()))
            .or_insert((0, 0.0));
        slot.0 += 1;
        slot.1 = seconds;
        if let Some(hash) = config {
            state.last_config = Some((api, hash));
        }
    }

    /// How many reloads ended with `success` (or not), over all API server identities.
    ///
    /// ```
    /// let m = kube_authn::token::oidc::metrics::ConfigControllerMetrics::new();
    /// assert_eq!(m.reloads(true), 0);
    /// ```
    pub fn reloads(&self, success: bool) -> u64 {
        lock(&self.state)
            .reloads
            .iter()
            .filter(|((_, s), _)| *s == success)
            .map(|(_, (n, _))| n)
            .sum()
    }

    /// Writes the families that have series, as Go's client writes them (families by name,
    /// series by label values).
    ///
    /// ```
    /// let mut text = String::new();
    /// kube_authn::token::oidc::metrics::ConfigControllerMetrics::new().encode(&mut text);
    /// assert_eq!(text, "");
    /// ```
    pub fn encode(&self, out: &mut String) {
        let state = lock(&self.state);
        if !state.reloads.is_empty() {
            // Both families have the same series: (apiserver_id_hash, status).
            type Family = (
                &'static str,
                &'static str,
                &'static str,
                fn(&(u64, f64)) -> f64,
            );
            let families: [Family; 2] = [
                (
                    RELOAD_TIMESTAMP,
                    RELOAD_TIMESTAMP_HELP,
                    "gauge",
                    |&(_, at)| at,
                ),
                (RELOADS_TOTAL, RELOADS_TOTAL_HELP, "counter", |&(n, _)| {
                    n as f64
                }),
            ];
            for (name, help, kind, value) in families {
                let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n");
                for ((api, success), v) in &state.reloads {
                    let status = if *success { "success" } else { "failure" };
                    let _ = write!(
                        out,
                        "{name}{{apiserver_id_hash=\"{api}\",status=\"{status}\"}} "
                    );
                    write_go_float(out, value(v));
                    out.push('\n');
                }
            }
        }
        if let Some((api, hash)) = &state.last_config {
            let _ = write!(
                out,
                "# HELP {LAST_CONFIG_INFO} {LAST_CONFIG_INFO_HELP}\n# TYPE {LAST_CONFIG_INFO} gauge\n\
                 {LAST_CONFIG_INFO}{{apiserver_id_hash=\"{api}\",hash=\"{hash}\"}} 1\n"
            );
        }
    }
}

/// Go's `SetToCurrentTime`: `float64(UnixNano) / 1e9`.
fn unix_seconds(now: SystemTime) -> f64 {
    match now.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as f64 / 1e9,
        Err(e) => -(e.duration().as_nanos() as f64) / 1e9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apiserver_id_matches_go() {
        // (host name, identity value, Go's ID): computed with cryptobyte, sha256 and base32.
        let cases = [
            (
                "node-1",
                "kube-apiserver",
                "apiserver-lgabes5ywnaqeagh5dny4zlzs4",
            ),
            (
                "node-1",
                "kube-authn",
                "apiserver-5uhjv4vtnsm7ovkbhdfg4ua2ya",
            ),
            ("", "kube-authn", "apiserver-k2gyijeaanofixnd2avpu3pxwa"),
        ];
        for (host, ident, want) in cases {
            assert_eq!(apiserver_id(host, ident), want, "{host:?} {ident:?}");
        }
        assert_eq!(
            hash_label("apiserver-5uhjv4vtnsm7ovkbhdfg4ua2ya"),
            "sha256:937880bbd8287255e50d1cbadaa4bdf9c24ae352404d93cbc676edaafff67f13"
        );
    }

    #[test]
    fn latency_buckets() {
        // (elapsed, index of the bucket it lands in; 12 = +Inf)
        let cases = [
            (Duration::ZERO, 0),
            (Duration::from_micros(1000), 0),
            (Duration::from_micros(1001), 1),
            (Duration::from_millis(5), 1),
            (Duration::from_millis(30), 4),
            (Duration::from_secs(1), 8),
            (Duration::from_secs(10), 11),
            (Duration::from_millis(10_001), 12),
        ];
        for (elapsed, want) in cases {
            let h = Histogram::new();
            h.observe(elapsed);
            let (counts, sum) = h.snapshot();
            let mut expected = [0u64; 13];
            expected[want] = 1;
            assert_eq!(counts, expected, "{elapsed:?}");
            assert_eq!(sum, elapsed.as_secs_f64(), "{elapsed:?}");
        }
    }

    #[test]
    fn exposition_as_go_writes_it() {
        let m = JwtAuthenticatorMetrics::new();
        let b = m.issuer("https://b.example");
        let a = m.issuer("https://a.example");
        assert!(
            Arc::ptr_eq(&a, &m.issuer("https://a.example")),
            "one series per issuer"
        );
        b.observe(true, Duration::from_millis(2));
        b.observe(false, Duration::from_micros(500));
        a.observe(true, Duration::from_secs(20));
        // Go: `float64(UnixNano) / 1e9`, formatted by strconv: 1.7638908122499998e+09 (checked
        // with Go).
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_763_890_812_250);
        let live = std::sync::atomic::AtomicBool::new(false);
        m.record_jwks_fetch("https://a.example", "", Err(()), at, &live);
        m.record_jwks_fetch("https://a.example", "", Ok(b"{\"keys\":[]}"), at, &live);
        m.record_jwks_fetch("https://b.example", "apiserver-x", Err(()), at, &live);
        let retired = std::sync::atomic::AtomicBool::new(true);
        m.record_jwks_fetch("https://c.example", "", Err(()), at, &retired);
        let mut text = String::new();
        m.encode(&mut text);
        let ha = hash_label("https://a.example");
        let hb = hash_label("https://b.example");
        let hx = hash_label("apiserver-x");
        let hk = hash_label("{\"keys\":[]}");
        let mut want = format!(
            "# HELP {KEY_SET_INFO} {KEY_SET_INFO_HELP}\n# TYPE {KEY_SET_INFO} gauge\n\
             {KEY_SET_INFO}{{apiserver_id_hash=\"\",hash=\"{hk}\",jwt_issuer_hash=\"{ha}\"}} 1\n\
             # HELP {FETCH_TIMESTAMP} {FETCH_TIMESTAMP_HELP}\n# TYPE {FETCH_TIMESTAMP} gauge\n\
             {FETCH_TIMESTAMP}{{apiserver_id_hash=\"\",jwt_issuer_hash=\"{ha}\",result=\"failure\"}} 1.7638908122499998e+09\n\
             {FETCH_TIMESTAMP}{{apiserver_id_hash=\"\",jwt_issuer_hash=\"{ha}\",result=\"success\"}} 1.7638908122499998e+09\n\
             {FETCH_TIMESTAMP}{{apiserver_id_hash=\"{hx}\",jwt_issuer_hash=\"{hb}\",result=\"failure\"}} 1.7638908122499998e+09\n\
             # HELP {LATENCY} {LATENCY_HELP}\n# TYPE {LATENCY} histogram\n"
        );
        // Issuer hashes sort: which of a/b comes first is the hashes' order.
        let mut series = vec![
            (
                ha.clone(),
                "success",
                [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                20.0,
            ),
            (
                hb.clone(),
                "failure",
                [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                0.0005,
            ),
            (
                hb.clone(),
                "success",
                [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                0.002,
            ),
        ];
        series.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
        for (iss, result, counts, sum) in series {
            let mut cumulative = 0;
            for (i, c) in counts.iter().enumerate() {
                cumulative += c;
                let le = match BUCKETS.get(i) {
                    Some(b) => {
                        let mut s = String::new();
                        write_go_float(&mut s, *b);
                        s
                    }
                    None => "+Inf".into(),
                };
                let _ = writeln!(
                    want,
                    "{LATENCY}_bucket{{jwt_issuer_hash=\"{iss}\",result=\"{result}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let mut s = String::new();
            write_go_float(&mut s, sum);
            let _ = write!(
                want,
                "{LATENCY}_sum{{jwt_issuer_hash=\"{iss}\",result=\"{result}\"}} {s}\n\
                 {LATENCY}_count{{jwt_issuer_hash=\"{iss}\",result=\"{result}\"}} 1\n"
            );
        }
        assert_eq!(text, want);
        assert_eq!(m.latency_count("https://b.example", false), 1);
        assert_eq!(m.latency_count("https://b.example", true), 1);
        assert_eq!(m.latency_count("https://c.example", true), 0);
    }

    #[test]
    fn config_controller_exposition() {
        let m = ConfigControllerMetrics::new();
        let mut text = String::new();
        m.encode(&mut text);
        assert_eq!(text, "", "nothing before the first configuration");
        m.record_config("testAPIServerID", "a");
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_763_890_812);
        m.record_reload("testAPIServerID", None, at);
        m.record_reload("testAPIServerID", None, at);
        m.record_reload("testAPIServerID", Some(b"b"), at);
        let mut text = String::new();
        m.encode(&mut text);
        // The API server ID hash is the one in Kubernetes' own metrics test.
        let api = "sha256:14f9d63e669337ac6bfda2e2162915ee6a6067743eddd4e5c374b572f951ff37";
        assert_eq!(hash_label("testAPIServerID"), api);
        let b = hash_label("b");
        assert_eq!(
            text,
            format!(
                "# HELP {RELOAD_TIMESTAMP} {RELOAD_TIMESTAMP_HELP}\n# TYPE {RELOAD_TIMESTAMP} gauge\n\
                 {RELOAD_TIMESTAMP}{{apiserver_id_hash=\"{api}\",status=\"failure\"}} 1.763890812e+09\n\
                 {RELOAD_TIMESTAMP}{{apiserver_id_hash=\"{api}\",status=\"success\"}} 1.763890812e+09\n\
                 # HELP {RELOADS_TOTAL} {RELOADS_TOTAL_HELP}\n# TYPE {RELOADS_TOTAL} counter\n\
                 {RELOADS_TOTAL}{{apiserver_id_hash=\"{api}\",status=\"failure\"}} 2\n\
                 {RELOADS_TOTAL}{{apiserver_id_hash=\"{api}\",status=\"success\"}} 1\n\
                 # HELP {LAST_CONFIG_INFO} {LAST_CONFIG_INFO_HELP}\n# TYPE {LAST_CONFIG_INFO} gauge\n\
                 {LAST_CONFIG_INFO}{{apiserver_id_hash=\"{api}\",hash=\"{b}\"}} 1\n"
            )
        );
        assert_eq!((m.reloads(true), m.reloads(false)), (1, 2));
    }
}
