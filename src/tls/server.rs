//! Our own TLS accept loop: tokio-rustls handshakes with a timeout, hyper-util's auto builder
//! (HTTP/1.1 and HTTP/2), graceful shutdown, and [`PeerCertificates`] on every request; a
//! connection that starts no request (32 s) or stays idle (90 s) is closed, and at most
//! [`default_max_connections`] (derived from the open-file limit) are open at once. A
//! connection sent GOAWAY (a response marked [`CloseConnection`], the idle timeout, shutdown)
//! refuses the HTTP/2 streams opened after it without calling the service and closes 1 s
//! after its earlier requests are done, as Go's HTTP/2 server does (CVE-2023-44487).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower_service::Service;

use super::PeerCertificates;
use crate::middleware::CloseConnection;

/// How long a client may take to complete the TLS handshake: 10 s, shorter than
/// kube-apiserver's 32 s. Go's `http.Server` bounds the handshake by the smallest of
/// `ReadHeaderTimeout`, `ReadTimeout` and `WriteTimeout` that is set (`tlsHandshakeTimeout`),
/// and kube-apiserver sets only `ReadHeaderTimeout` (32 s); the shorter deadline frees sooner
/// the connection slot of a client that never finishes its handshake (a deliberate
/// difference, listed in `docs/compatibility.md`).
///
/// ```
/// use std::time::Duration;
/// assert_eq!(kube_authn::tls::DEFAULT_HANDSHAKE_TIMEOUT, Duration::from_secs(10));
/// ```
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay open after its handshake without starting a request:
/// kube-apiserver's `ReadHeaderTimeout` (32 s). Without it, a client that completes the
/// handshake and then sends nothing (or only part of the HTTP/2 preface) holds its socket
/// forever.
///
/// ```
/// assert_eq!(kube_authn::tls::DEFAULT_FIRST_REQUEST_TIMEOUT.as_secs(), 32);
/// ```
pub const DEFAULT_FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(32);

/// How long a connection may stay open with no request in progress after its last one
/// ended: kube-apiserver's `IdleTimeout` (90 s, for HTTP/1.1 keep-alive and for HTTP/2 alike).
/// A request is in progress from the moment it arrives until its response body is finished
/// or dropped, so a long response (a stream) keeps its connection. An idle HTTP/2 connection
/// is closed with GOAWAY. Over HTTP/1.1 the next request's head must have arrived whole
/// within it: kube-apiserver waits this long for its first byte, then 32 s more for the rest
/// (`ReadHeaderTimeout`), but hyper cannot tell an idle client from one sending a head.
///
/// ```
/// assert_eq!(kube_authn::tls::DEFAULT_IDLE_TIMEOUT.as_secs(), 90);
/// ```
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The connection cap when the open-file limit cannot be read (not a Unix system): the cap
/// [`max_connections_for_open_files`] derives from a soft limit of 1024.
const UNKNOWN_OPEN_FILE_LIMIT: u64 = 1024;

/// The fewest connections the derived default allows, however low the open-file limit.
const MIN_DEFAULT_CONNECTIONS: usize = 16;

/// The most connections a cap may allow (a tokio semaphore's and `acquire_many`'s bound).
const MOST_CONNECTIONS: usize = if tokio::sync::Semaphore::MAX_PERMITS < u32::MAX as usize {
    tokio::sync::Semaphore::MAX_PERMITS
} else {
    u32::MAX as usize
};

/// The default connection cap for a process whose soft open-file limit (`RLIMIT_NOFILE`) is
/// `soft_limit`: the limit less a reserve of one eighth of it, and at least 64, for
/// everything else the process opens (the listener, the runtime, CA and token files, outbound
/// connections to webhooks and OIDC issuers); never below 16, and at most `u32::MAX` (or
/// tokio's `Semaphore::MAX_PERMITS` where that is lower, as on 32-bit targets).
///
/// kube-apiserver has no connection cap: Go raises the soft limit to the hard limit at
/// startup and a flood of connections ends in `accept` failing with `EMFILE` (retried with a
/// back-off). A cap just below the limit keeps those failures from spilling onto the files
/// and outbound sockets that requests need, while leaving almost all descriptors to clients:
/// with the limit raised as `kube-authn serve` raises it (often to 524288 or 1048576), an
/// attacker must hold hundreds of thousands of idle TCP connections to lock clients out.
///
/// ```
/// use kube_authn::tls::max_connections_for_open_files;
/// assert_eq!(max_connections_for_open_files(1024), 896);      // a common default soft limit
/// assert_eq!(max_connections_for_open_files(1 << 20), 917_504);
/// assert_eq!(max_connections_for_open_files(256), 192);        // macOS' default
/// assert_eq!(max_connections_for_open_files(20), 16);          // the floor
/// // Unlimited: the most a cap may be (`u32::MAX` on 64-bit targets).
/// let most = (u32::MAX as usize).min(tokio::sync::Semaphore::MAX_PERMITS);
/// assert_eq!(max_connections_for_open_files(u64::MAX), most);
/// ```
pub fn max_connections_for_open_files(soft_limit: u64) -> usize {
    let reserve = (soft_limit / 8).max(64);
    let cap = soft_limit.saturating_sub(reserve);
    usize::try_from(cap)
        .unwrap_or(usize::MAX)
        .clamp(MIN_DEFAULT_CONNECTIONS, MOST_CONNECTIONS)
}

/// The default connection cap ([`TlsServer::max_connections`],
/// [`TlsListener::max_connections`](super::axum::TlsListener::max_connections)): derived by
/// [`max_connections_for_open_files`] from the process's soft open-file limit as it is now (one
/// `getrlimit` call; a limit that cannot be read counts as 1024). Further clients wait in the
/// listen backlog until a connection closes, instead of the process running out of file
/// descriptors for the files and outbound connections its requests need.
///
/// ```
/// let cap = kube_authn::tls::default_max_connections();
/// assert!(cap >= 16);
/// ```
pub fn default_max_connections() -> usize {
    max_connections_for_open_files(open_file_limit().unwrap_or(UNKNOWN_OPEN_FILE_LIMIT))
}

/// The soft `RLIMIT_NOFILE`, if this system has one and it can be read.
fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rlimit::getrlimit(rlimit::Resource::NOFILE)
            .ok()
            .map(|(soft, _hard)| soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// TCP keep-alive on accepted connections, as kube-apiserver's: the first probe after 3
/// minutes of silence (`defaultKeepAlivePeriod`, secure_serving.go), then Go's defaults, a
/// probe every 15 s and 9 unanswered probes before the kernel drops the connection.
const TCP_KEEPALIVE_IDLE: Duration = Duration::from_secs(180);

/// Sets on an accepted connection what Go's `net` package and kube-apiserver set on theirs:
/// `TCP_NODELAY` (no Nagle delay for small writes such as HTTP/2 frames and TLS alerts) and
/// TCP keep-alive ([`TCP_KEEPALIVE_IDLE`]), so a peer that vanished (a powered-off client, a
/// dropped NAT mapping) in the middle of a long request is found dead and its slot given back.
/// A failure is logged at debug level and ignored, as Go ignores it.
pub(crate) fn tune_accepted(tcp: &tokio::net::TcpStream) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "cannot set TCP_NODELAY on an accepted connection");
    }
    let keepalive = socket2::TcpKeepalive::new().with_time(TCP_KEEPALIVE_IDLE);
    #[cfg(any(
        target_os = "android",
        target_os = "dragonfly",
        target_os = "freebsd",
        target_os = "fuchsia",
        target_os = "illumos",
        target_os = "ios",
        target_os = "linux",
        target_os = "macos",
        target_os = "netbsd",
        target_os = "windows",
    ))]
    let keepalive = keepalive
        .with_interval(Duration::from_secs(15))
        .with_retries(9);
    if let Err(e) = socket2::SockRef::from(tcp).set_tcp_keepalive(&keepalive) {
        tracing::debug!(error = %e, "cannot set TCP keep-alive on an accepted connection");
    }
}

/// How long to wait before the next `accept` after one failed (`EMFILE`, `ENFILE`,
/// `ENOBUFS`, …), as Go's `http.Server.Serve` does: 5 ms after the first failure, doubling
/// after each further one, at most 1 s; a successful accept starts again from `None`.
pub(crate) fn accept_backoff(previous: Option<Duration>) -> Duration {
    const FIRST: Duration = Duration::from_millis(5);
    const MOST: Duration = Duration::from_secs(1);
    match previous {
        None => FIRST,
        Some(d) => d.saturating_mul(2).clamp(FIRST, MOST),
    }
}

/// The most header lines an HTTP/1.1 request may have (hyper's `max_headers`; more is refused
/// with 431 before authentication): [`MAX_GROUPS`](crate::request::MAX_GROUPS) (4096) plus
/// 128, so a front proxy can send every group the front-proxy authenticator accepts, one
/// `X-Remote-Group` line each, with the request's other headers. hyper's default, 100, refused
/// a user in about 95 groups over HTTP/1.1 (HTTP/2 has no line count, only
/// [`HTTP2_MAX_HEADER_LIST_SIZE`]).
///
/// Not Go's 16384 (`MaxHeaderValueCount`), because hyper sizes its parse buffers by this
/// bound, not by the request: two buffers of 32 bytes per allowed line (here 2 × 132 KiB) are
/// allocated for every parse of every request head, even a 5-line one, and again each time
/// more of an incomplete head arrives. Measured with hyper 1.12 over an in-memory connection,
/// per request of 6 header lines: about 0.1 µs on a multi-threaded runtime once the allocator
/// reuses the memory, up to +5 µs where glibc hands it back to the system between requests
/// (a current-thread runtime); with 16384 lines, +70 µs (multi-threaded) to +340 µs
/// (current-thread), as the 1 MiB is faulted in again for every request.
///
/// [`TlsServer::http1_max_headers`] sets another bound for one server.
///
/// ```
/// assert_eq!(kube_authn::tls::HTTP1_MAX_HEADERS, kube_authn::request::MAX_GROUPS + 128);
/// ```
pub const HTTP1_MAX_HEADERS: usize = crate::request::MAX_GROUPS + 128;

/// The fewest and the most header lines [`TlsServer::http1_max_headers`] allows: a client's
/// own headers fit in 32, and 16384 is Go's bound (`MaxHeaderValueCount`), at a cost of tens
/// to hundreds of microseconds per request (see [`HTTP1_MAX_HEADERS`]).
const HTTP1_MAX_HEADERS_RANGE: std::ops::RangeInclusive<usize> = 32..=16384;

/// The HTTP/1.1 read-buffer bound for a request head (request line and headers) in bytes:
/// hyper's default, 8 KiB + 400 KiB, set explicitly. Every head up to it is read; hyper
/// refuses with 431 a head still incomplete once this much is buffered, but checks only then,
/// so a head that is complete when parsed may be larger, up to what the buffer already holds
/// (less than twice this bound; about 508 KB was measured for a head written at once): heads
/// from 408 KiB to about 816 KiB may or may not be refused, larger ones always are.
/// (hyper's exact `max_header_size` is not exposed by hyper-util's auto builder.)
/// kube-apiserver allows 1 MiB (Go's `MaxHeaderBytes`); 408 KiB holds a 64 KiB bearer token
/// and [`HTTP1_MAX_HEADERS`] lines of 80 bytes, and keeps the memory a slow client can hold
/// per connection before its first request times out smaller. The request target alone may
/// have at most 65,534 bytes (hyper's bound; more is 414 before the service).
///
/// ```
/// assert_eq!(kube_authn::tls::HTTP1_MAX_HEAD_BYTES, 417_792);
/// ```
pub const HTTP1_MAX_HEAD_BYTES: usize = 8192 + 4096 * 100;

/// The most concurrent HTTP/2 streams per connection (`SETTINGS_MAX_CONCURRENT_STREAMS`):
/// kube-apiserver's default (`MaxConcurrentStreams = 100`, the value Go's HTTP/2 client
/// assumes), instead of hyper's 200.
///
/// ```
/// assert_eq!(kube_authn::tls::HTTP2_MAX_CONCURRENT_STREAMS, 100);
/// ```
pub const HTTP2_MAX_CONCURRENT_STREAMS: u32 = 100;

/// The largest HTTP/2 header list a request may carry (`SETTINGS_MAX_HEADER_LIST_SIZE`):
/// 128 KiB, room for a bearer token at [`crate::request::MAX_TOKEN_LEN`] (64 KiB) and the
/// other headers. hyper's own default, 16 KiB, would refuse over HTTP/2 a 16–64 KiB token
/// (an ID token with many groups) that HTTP/1.1 carries (hyper's HTTP/1.1 head limit is about
/// 400 KiB); a larger header list is refused before authentication. kube-apiserver allows
/// 1 MiB for both (Go's `MaxHeaderBytes`); a smaller bound keeps the memory an attacker can
/// hold per stream small.
///
/// ```
/// assert_eq!(kube_authn::tls::HTTP2_MAX_HEADER_LIST_SIZE, 128 * 1024);
/// ```
pub const HTTP2_MAX_HEADER_LIST_SIZE: u32 = 128 * 1024;

/// How long a connection told to close (GOAWAY after a refused or anonymous HTTP/2 request,
/// an idle one, or server shutdown) stays open once no request from before the GOAWAY is in
/// progress on it: 1 s, Go's `goAwayTimeout`, which its HTTP/2 server starts when the last
/// open stream ends. Requests in progress (other streams, and the refused request's own
/// response) run to completion first, as in Go. hyper's own graceful shutdown (GOAWAY with
/// the last stream id 2^31-1, then PING) waits for the PING's acknowledgement, so without this
/// deadline a peer that never acknowledges it would hold the connection open; and streams it
/// opens meanwhile are refused, not served (see [`Activity::draining`]).
const GOAWAY_TIMEOUT: Duration = Duration::from_secs(1);

/// A TLS server that serves a Tower service with the peer chain on every request.
///
/// ```no_run
/// use std::sync::Arc;
/// use kube_authn::tls::{server_config, ClientCertPolicy, PeerCertificates, TlsServer};
/// # use rustls_pki_types::pem::PemObject;
/// # async fn run() -> std::io::Result<()> {
/// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
/// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
/// let config = server_config(chain, key, &ClientCertPolicy::Request { hints: vec![] }).unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
/// let app = tower::service_fn(|req: http::Request<hyper::body::Incoming>| async move {
///     let certs = req.extensions().get::<PeerCertificates>().map_or(0, |p| p.chain().len());
///     Ok::<_, std::convert::Infallible>(http::Response::new(format!("{certs} certificates")))
/// });
/// TlsServer::new(Arc::new(config))
///     .serve(listener, app, async { let _ = tokio::signal::ctrl_c().await; })
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct TlsServer {
    config: ConfigSource,
    handshake_timeout: Duration,
    first_request_timeout: Duration,
    idle_timeout: Duration,
    /// `None`: [`default_max_connections`], read when serving starts.
    max_connections: Option<usize>,
    http1_max_headers: usize,
    grace: Duration,
    /// `None`: no limit (see [`TlsServer::response_stall_timeout`]).
    response_stall_timeout: Option<Duration>,
}

/// Where a connection's TLS configuration comes from.
#[derive(Clone)]
pub(crate) enum ConfigSource {
    Fixed(TlsAcceptor),
    Dynamic(Arc<super::DynamicServerConfig>),
}

impl ConfigSource {
    /// The acceptor for a new connection.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        match self {
            ConfigSource::Fixed(acceptor) => acceptor.clone(),
            ConfigSource::Dynamic(config) => TlsAcceptor::from(config.config_for_client()),
        }
    }
}

impl std::fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsServer")
            .field("handshake_timeout", &self.handshake_timeout)
            .field("first_request_timeout", &self.first_request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_connections", &self.max_connections)
            .field("http1_max_headers", &self.http1_max_headers)
            .field("grace", &self.grace)
            .field("response_stall_timeout", &self.response_stall_timeout)
            .finish_non_exhaustive()
    }
}

impl TlsServer {
    /// A server with `config` (see [`super::server_config`]).
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// let config = server_config(chain, key, &ClientCertPolicy::None).unwrap();
    /// let server = TlsServer::new(std::sync::Arc::new(config));
    /// ```
    pub fn new(config: Arc<rustls::ServerConfig>) -> Self {
        Self::with_source(ConfigSource::Fixed(TlsAcceptor::from(config)))
    }

    /// A server whose connections each get [`DynamicServerConfig::config_for_client`]: the
    /// client-certificate request names the hint CA bundles as they are when the connection
    /// starts (reloaded files included), as kube-apiserver's does.
    ///
    /// [`DynamicServerConfig::config_for_client`]: super::DynamicServerConfig::config_for_client
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use kube_authn::tls::{DynamicServerConfig, TlsServer, server_config};
    /// # use kube_authn::x509::{CaBundle, CaBundleSource, doc_ca_pem, doc_client_key_pem, doc_client_pem, parse_pem_bundle};
    /// # use rustls_pki_types::{PrivateKeyDer, pem::PemObject};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let ca_file = dir.path().join("ca.pem");
    /// # std::fs::write(&ca_file, doc_ca_pem()).unwrap();
    /// // The client CA file, reloaded when it changes (spawn_watch), and named by handshakes.
    /// let x509 = kube_authn::x509::X509Authenticator::from_ca_file(&ca_file).unwrap();
    /// let dynamic = DynamicServerConfig::new(vec![Arc::new(x509.clone())], |policy| {
    ///     let chain = parse_pem_bundle(doc_client_pem().as_bytes())?;
    ///     let key = PrivateKeyDer::from_pem_slice(doc_client_key_pem().as_bytes()).unwrap();
    ///     server_config(chain, key, policy)
    /// })
    /// .unwrap();
    /// let server = TlsServer::dynamic(Arc::new(dynamic));
    /// ```
    pub fn dynamic(config: Arc<super::DynamicServerConfig>) -> Self {
        Self::with_source(ConfigSource::Dynamic(config))
    }

    fn with_source(config: ConfigSource) -> Self {
        Self {
            config,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            first_request_timeout: DEFAULT_FIRST_REQUEST_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: None,
            http1_max_headers: HTTP1_MAX_HEADERS,
            grace: Duration::from_secs(30),
            response_stall_timeout: None,
        }
    }

    /// Closes a connection (without GOAWAY) once responses on it have been waiting for at least
    /// this long (at most twice this long) while no response body on the connection yielded a
    /// frame: over HTTP/2, a client that sets its flow-control window to 0 and never opens it
    /// keeps the response, and with it the request, in progress for ever, so neither the idle
    /// timeout nor the close after GOAWAY ever fires (kube-apiserver's Go server holds such
    /// connections for ever too). Each frame a body yields starts the wait again. hyper asks an
    /// HTTP/2 body for its next frame only once the previous one is sent, so a body of large
    /// frames read slowly can be cut too. Off by default: for services whose responses are
    /// short (as `kube-authn serve`'s are), not for long-lived streaming responses that can stay
    /// silent longer than this.
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// # let config = std::sync::Arc::new(server_config(chain, key, &ClientCertPolicy::None).unwrap());
    /// let server = TlsServer::new(config).response_stall_timeout(std::time::Duration::from_secs(60));
    /// ```
    pub fn response_stall_timeout(mut self, timeout: Duration) -> Self {
        self.response_stall_timeout = Some(timeout);
        self
    }

    /// Sets how long a connection may stay open after its handshake without starting a
    /// request (default [`DEFAULT_FIRST_REQUEST_TIMEOUT`]); then it is closed.
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// # let config = std::sync::Arc::new(server_config(chain, key, &ClientCertPolicy::None).unwrap());
    /// let server = TlsServer::new(config).first_request_timeout(std::time::Duration::from_secs(10));
    /// ```
    pub fn first_request_timeout(mut self, timeout: Duration) -> Self {
        self.first_request_timeout = timeout;
        self
    }

    /// Sets how long a connection may stay open with no request in progress once it has
    /// served one (default [`DEFAULT_IDLE_TIMEOUT`]); then it is closed (HTTP/2: GOAWAY).
    /// An HTTP/1.1 keep-alive connection stays usable for all of it; the next request's head
    /// must have arrived whole before it ends.
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// # let config = std::sync::Arc::new(server_config(chain, key, &ClientCertPolicy::None).unwrap());
    /// let server = TlsServer::new(config).idle_timeout(std::time::Duration::from_secs(30));
    /// ```
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets how many connections are served at once, handshakes included (at least 1); the
    /// rest wait in the listen backlog. Default: [`default_max_connections`], derived from the
    /// process's soft open-file limit when [`serve`](Self::serve) starts. Keep it below that
    /// limit.
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// # let config = std::sync::Arc::new(server_config(chain, key, &ClientCertPolicy::None).unwrap());
    /// let server = TlsServer::new(config).max_connections(10_000);
    /// ```
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = Some(max.clamp(1, MOST_CONNECTIONS));
        self
    }

    /// Sets the most header lines an HTTP/1.1 request may have (default
    /// [`HTTP1_MAX_HEADERS`], room for a front proxy's [`MAX_GROUPS`](crate::request::MAX_GROUPS)
    /// `X-Remote-Group` lines), clamped to 32..=16384; a request with more is refused with 431
    /// before authentication. HTTP/2 is not affected (its bound is
    /// [`HTTP2_MAX_HEADER_LIST_SIZE`] bytes).
    ///
    /// The bound costs time on every HTTP/1.1 request, however few lines it has: hyper
    /// allocates and fills its parse buffers for the maximum on every parse of a request head.
    /// Measured per request: about 2.1 µs with 100 lines (hyper's default), 3.4 µs with 1024,
    /// 7.2 µs with 4200 (about the default). Lower it (to 100, say) if no front proxy sends
    /// users with many groups over HTTP/1.1 (over HTTP/2 the line count costs nothing); a front
    /// proxy that sends one `X-Remote-Group` line
    /// per group then has its requests for users in more groups than the bound allows refused.
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// # let config = std::sync::Arc::new(server_config(chain, key, &ClientCertPolicy::None).unwrap());
    /// let server = TlsServer::new(config).http1_max_headers(100);
    /// assert!(format!("{server:?}").contains("http1_max_headers: 100"));
    /// ```
    pub fn http1_max_headers(mut self, max: usize) -> Self {
        self.http1_max_headers = max.clamp(
            *HTTP1_MAX_HEADERS_RANGE.start(),
            *HTTP1_MAX_HEADERS_RANGE.end(),
        );
        self
    }

    /// Sets the handshake timeout (default [`DEFAULT_HANDSHAKE_TIMEOUT`]).
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// # let config = std::sync::Arc::new(server_config(chain, key, &ClientCertPolicy::None).unwrap());
    /// let server = TlsServer::new(config).handshake_timeout(std::time::Duration::from_secs(5));
    /// ```
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// How long open connections may take to finish after shutdown starts (default 30 s).
    ///
    /// ```
    /// # use kube_authn::tls::*;
    /// # use rustls_pki_types::pem::PemObject;
    /// # let chain = kube_authn::x509::parse_pem_bundle(kube_authn::x509::doc_client_pem().as_bytes()).unwrap();
    /// # let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(kube_authn::x509::doc_client_key_pem().as_bytes()).unwrap();
    /// # let config = std::sync::Arc::new(server_config(chain, key, &ClientCertPolicy::None).unwrap());
    /// let server = TlsServer::new(config).shutdown_grace(std::time::Duration::from_secs(5));
    /// ```
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Accepts connections on `listener` until `shutdown` completes, then stops accepting and
    /// waits (up to the grace period) for open connections to finish their requests.
    ///
    /// Each connection: TLS handshake (bounded by the handshake timeout; failures are logged at
    /// debug level and dropped), then HTTP/1.1 or HTTP/2 with `service`; when the client sent a
    /// certificate, every request carries the same [`PeerCertificates`]. A connection that
    /// starts no request within the first-request timeout is closed, and so is one that has
    /// had no request in progress for the idle timeout; at most `max_connections` are open
    /// at once (the rest wait to be accepted). A failed `accept` (`EMFILE`: out of file
    /// descriptors) is retried after a back-off, 5 ms doubling to 1 s as in Go, and does not
    /// end the loop.
    ///
    /// HTTP/1.1 requests may have up to [`HTTP1_MAX_HEADERS`] header lines (see
    /// [`http1_max_headers`](Self::http1_max_headers)) in about [`HTTP1_MAX_HEAD_BYTES`]
    /// (see there) and a request target of at most 65,534 bytes; HTTP/2 connections allow [`HTTP2_MAX_CONCURRENT_STREAMS`]
    /// streams at once and header lists up to [`HTTP2_MAX_HEADER_LIST_SIZE`]. The response to
    /// a HEAD request keeps its status and headers and loses its body, over HTTP/2 too (one
    /// HEADERS frame with END_STREAM, as Go's server sends it); its `content-length` is the
    /// one the service set, or else the length of the body it returned when that is known.
    ///
    /// A response marked [`CloseConnection`] (the authentication middleware marks refused and
    /// anonymous HTTP/2 requests, kube-apiserver's CVE-2023-44487 mitigation), the idle timeout
    /// and shutdown send GOAWAY. From then on the connection is closing: every HTTP/2 stream
    /// the client opens is reset without reaching the service (`REFUSED_STREAM`, so clients
    /// send it again elsewhere; hyper itself accepts new streams until the client
    /// acknowledges the PING sent with the GOAWAY, so a client that never does would
    /// otherwise have each new request served), and
    /// the requests already in progress run to completion; 1 s after the last of them ends
    /// (Go's `goAwayTimeout`), or at the end of the grace period during shutdown, the
    /// connection is dropped if the client has not closed it.
    ///
    /// Served on 127.0.0.1 and called with reqwest, without and with a client certificate:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kube_authn::tls::{ClientCertPolicy, PeerCertificates, TlsServer, server_config};
    /// use kube_authn::x509::{doc_client_key_pem, doc_client_pem};
    /// use rustls_pki_types::{PrivateKeyDer, pem::PemObject};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // A self-signed server certificate for `localhost`.
    /// let key = rcgen::KeyPair::generate().unwrap();
    /// let cert = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
    /// let server_key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
    /// let policy = ClientCertPolicy::Request { hints: vec![] };
    /// let config = server_config(vec![cert.der().clone()], server_key, &policy).unwrap();
    ///
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let app = tower::service_fn(|req: http::Request<hyper::body::Incoming>| async move {
    ///     let certs = req.extensions().get::<PeerCertificates>().map_or(0, |p| p.chain().len());
    ///     Ok::<_, std::convert::Infallible>(http::Response::new(format!("{certs} certificates")))
    /// });
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let shutdown = async move {
    ///     let _ = stopped.await;
    /// };
    /// let server = tokio::spawn(TlsServer::new(Arc::new(config)).serve(listener, app, shutdown));
    ///
    /// let client = |identity: Option<reqwest::Identity>| {
    ///     let mut b = reqwest::Client::builder()
    ///         .add_root_certificate(reqwest::Certificate::from_der(cert.der()).unwrap())
    ///         .resolve("localhost", addr);
    ///     if let Some(id) = identity {
    ///         b = b.identity(id);
    ///     }
    ///     b.build().unwrap()
    /// };
    /// let url = format!("https://localhost:{}/", addr.port());
    /// let text = client(None).get(&url).send().await.unwrap().text().await.unwrap();
    /// assert_eq!(text, "0 certificates");
    /// let pem = format!("{}{}", doc_client_pem(), doc_client_key_pem());
    /// let identity = reqwest::Identity::from_pem(pem.as_bytes()).unwrap();
    /// let text = client(Some(identity)).get(&url).send().await.unwrap().text().await.unwrap();
    /// assert_eq!(text, "1 certificates");
    ///
    /// stop.send(()).unwrap();
    /// server.await.unwrap().unwrap(); // stops once the connections are done
    /// # });
    /// ```
    pub async fn serve<S, B>(
        self,
        listener: TcpListener,
        service: S,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<()>
    where
        S: Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // Server shutdown is broadcast to every connection. Each open connection holds one of
        // `slots`' permits, so the accept loop stops at `max_connections` and shutdown can
        // wait for all of them to come back.
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let max_connections = self.max_connections.unwrap_or_else(default_max_connections);
        let slots = Arc::new(tokio::sync::Semaphore::new(max_connections));
        // Connection tasks, which shutdown waits for. An upgraded stream (WebSocket, SPDY) keeps
        // its slot but not its task, so shutdown does not wait for it, as Go's
        // `http.Server.Shutdown` does not wait for hijacked connections.
        let tasks = Arc::new(tokio::sync::Semaphore::new(max_connections));
        let mut builder = auto::Builder::new(TokioExecutor::new());
        // hyper's own head timer (30 s by default) is off: hyper starts it when a keep-alive
        // connection goes idle, so it closed idle connections after 30 s, not the idle
        // timeout. `Activity::idle` bounds the wait for a request instead: from the handshake
        // to the end of the first request's head (first-request timeout), and from the end of
        // one request to the end of the next one's head (idle timeout).
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(None)
            .max_headers(self.http1_max_headers)
            .max_buf_size(HTTP1_MAX_HEAD_BYTES);
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_header_list_size(HTTP2_MAX_HEADER_LIST_SIZE)
            .max_concurrent_streams(HTTP2_MAX_CONCURRENT_STREAMS);
        let mut accept_delay = None;
        tokio::pin!(shutdown);
        loop {
            let slot = tokio::select! {
                slot = slots.clone().acquire_owned() => match slot {
                    Ok(slot) => slot,
                    Err(_) => break, // never closed
                },
                () = &mut shutdown => break,
            };
            let (tcp, remote) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(x) => {
                        accept_delay = None;
                        x
                    }
                    Err(e) => {
                        // EMFILE and friends: back off instead of spinning (the slot is
                        // given back meanwhile).
                        let delay = accept_backoff(accept_delay);
                        accept_delay = Some(delay);
                        tracing::warn!(error = %e, retry_in = ?delay, "accept failed");
                        drop(slot);
                        tokio::select! {
                            () = tokio::time::sleep(delay) => continue,
                            () = &mut shutdown => break,
                        }
                    }
                },
                () = &mut shutdown => break,
            };
            tune_accepted(&tcp);
            let config = self.config.clone();
            let timeout = self.handshake_timeout;
            let first_request = self.first_request_timeout;
            let idle = self.idle_timeout;
            let grace = self.grace;
            let stall = self.response_stall_timeout;
            let service = service.clone();
            let mut stopped = stopped.clone();
            let builder = builder.clone();
            // Never waits: a task holds a slot, so there are never more tasks than slots.
            let task = tasks.clone().try_acquire_owned().ok();
            tokio::spawn(async move {
                let _task = task;
                // Chosen per connection (a dynamic configuration may be rebuilt here, off the
                // accept loop).
                let acceptor = config.acceptor();
                let tls = match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
                    Ok(Ok(tls)) => tls,
                    Ok(Err(e)) => {
                        tracing::debug!(%remote, error = %e, "TLS handshake failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(%remote, "TLS handshake timed out");
                        return;
                    }
                };
                let peer = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .filter(|c| !c.is_empty())
                    .map(|c| PeerCertificates::from_handshake(c.to_vec()));
                // A response marked `CloseConnection` (a refused or anonymous HTTP/2
                // request) ends the connection with GOAWAY, as kube-apiserver's
                // `Connection: close` does (CVE-2023-44487 mitigation).
                let close = Arc::new(tokio::sync::Notify::new());
                let activity = Arc::new(Activity::default());
                let inner = CloseConnection::watch(service, close.clone());
                let svc = TowerToHyperService::new(AddPeer {
                    inner,
                    peer,
                    activity: activity.clone(),
                });
                // The stream carries its slot: given back when the connection ends, or, for
                // an upgraded one (WebSocket, SPDY), when the upgraded stream is dropped (hyper
                // hands the stream over and this task ends first).
                let io = Slotted {
                    io: tls,
                    _slot: slot,
                };
                let conn = builder
                    .serve_connection_with_upgrades(TokioIo::new(io), svc)
                    .into_owned();
                tokio::pin!(conn);
                let result = tokio::select! {
                    result = conn.as_mut() => Some(result),
                    () = close.notified() => None,
                    _ = stopped.wait_for(|stop| *stop) => None,
                    () = activity.stalled(stall) => {
                        tracing::debug!(%remote, "a response was not taken for sending in time");
                        return;
                    }
                    served = activity.idle(first_request, idle) => {
                        if !served {
                            tracing::debug!(%remote, "no request before the first-request timeout");
                            return;
                        }
                        tracing::debug!(%remote, "connection idle for the idle timeout");
                        None
                    }
                };
                let result = match result {
                    Some(result) => result,
                    None => {
                        // From now on, new HTTP/2 streams are refused without reaching the
                        // service (hyper still accepts them until the client acknowledges the
                        // GOAWAY's PING), and the connection closes `GOAWAY_TIMEOUT` after the
                        // requests from before the GOAWAY are done, as Go's server does; when
                        // the server stops, after the grace period at the latest.
                        activity.drain();
                        conn.as_mut().graceful_shutdown();
                        let closed = tokio::select! {
                            result = conn.as_mut() => Some(result),
                            () = activity.quiet(GOAWAY_TIMEOUT) => None,
                            () = activity.stalled(stall) => None,
                            () = async {
                                let _ = stopped.wait_for(|stop| *stop).await;
                                tokio::time::sleep(grace).await;
                            } => None,
                        };
                        match closed {
                            Some(result) => result,
                            None => {
                                tracing::debug!(%remote, "connection did not close in time after GOAWAY");
                                return;
                            }
                        }
                    }
                };
                if let Err(e) = result {
                    tracing::debug!(%remote, error = %e, "connection ended with an error");
                }
            });
        }
        drop(listener);
        let _ = stop.send(true);
        // `max_connections` is at most `u32::MAX` (MOST_CONNECTIONS).
        let all_closed = tasks.acquire_many(u32::try_from(max_connections).unwrap_or(u32::MAX));
        tokio::select! {
            _ = all_closed => {}
            () = tokio::time::sleep(self.grace) => {
                tracing::warn!("shutdown grace period elapsed with connections still open");
            }
        }
        Ok(())
    }
}

/// Serves `service` over TLS on `listener` until `shutdown`: [`TlsServer::new`]`(config)
/// .serve(listener, service, shutdown)`.
///
/// ```no_run
/// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
/// let app = tower::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
///     Ok::<_, std::convert::Infallible>(http::Response::new(String::from("ok")))
/// });
/// kube_authn::tls::serve(listener, config, app, std::future::pending()).await
/// # }
/// ```
pub async fn serve<S, B>(
    listener: TcpListener,
    config: Arc<rustls::ServerConfig>,
    service: S,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    TlsServer::new(config)
        .serve(listener, service, shutdown)
        .await
}

/// What one connection is doing, for its first-request and idle timeouts: how many requests
/// have started, and how many are in progress (from arrival until the response body is
/// finished or dropped). Per request: two atomic increments and one decrement; the watcher is
/// woken only when the last request in progress ends.
#[derive(Default)]
struct Activity {
    started: AtomicU64,
    in_progress: AtomicUsize,
    ended: tokio::sync::Notify,
    /// Responses whose body is being sent (from the response until the body is finished or
    /// dropped), for [`Activity::stalled`].
    sending: AtomicUsize,
    /// Bumped when a response starts or stops being sent and for each frame a body yields.
    progress: AtomicU64,
    /// Woken when `sending` leaves 0.
    send_started: tokio::sync::Notify,
    /// Set once the connection is to close (see [`Activity::draining`]).
    draining: AtomicBool,
}

impl Activity {
    /// Marks the connection as closing: a GOAWAY was decided (a response marked
    /// [`CloseConnection`], the idle timeout, or server shutdown).
    fn drain(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// Whether the connection is closing. A new HTTP/2 stream on a closing connection is reset
    /// (`REFUSED_STREAM`, which tells the client it was not processed) without reaching the
    /// service and without counting as in progress, as Go's HTTP/2 server ignores the streams
    /// a client opens once it is going away. hyper's graceful shutdown accepts new streams until
    /// the client acknowledges the PING it sends with its first GOAWAY (whose last stream id is
    /// 2^31-1), so a client that never acknowledges it could otherwise have request after
    /// request authenticated on a connection meant to be closed (CVE-2023-44487).
    fn draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    fn start(self: &Arc<Self>) -> InProgress {
        self.started.fetch_add(1, Ordering::Relaxed);
        self.in_progress.fetch_add(1, Ordering::AcqRel);
        InProgress(self.clone())
    }

    /// Completes when the connection should close for being quiet: `false` when no request
    /// started within `first_request`, `true` when, after one did, no request was in progress
    /// for `idle`. Pending while requests are in progress.
    async fn idle(&self, first_request: Duration, idle: Duration) -> bool {
        let mut wait = first_request;
        loop {
            let seen = self.started.load(Ordering::Relaxed);
            if self.in_progress.load(Ordering::Acquire) > 0 {
                // Woken when the last one ends (a permit stored meanwhile wakes at once).
                self.ended.notified().await;
                wait = idle;
                continue;
            }
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                // One ended while we slept: the quiet period starts again from now.
                () = self.ended.notified() => {
                    wait = idle;
                    continue;
                }
            }
            if self.started.load(Ordering::Relaxed) == seen
                && self.in_progress.load(Ordering::Acquire) == 0
            {
                return seen > 0;
            }
            wait = idle;
        }
    }
}

impl Activity {
    /// Completes when a response has been waiting to be sent for `timeout` while no body on
    /// the connection yielded a frame (never with `None`, nor while no response is waiting).
    async fn stalled(&self, timeout: Option<Duration>) {
        let Some(timeout) = timeout else {
            return std::future::pending().await;
        };
        loop {
            if self.sending.load(Ordering::Acquire) == 0 {
                self.send_started.notified().await;
                continue;
            }
            let seen = self.progress.load(Ordering::Acquire);
            tokio::time::sleep(timeout).await;
            if self.sending.load(Ordering::Acquire) > 0
                && self.progress.load(Ordering::Acquire) == seen
            {
                return;
            }
        }
    }

    fn sent_frame(&self) {
        self.progress.fetch_add(1, Ordering::AcqRel);
    }

    /// Completes once no request has been in progress for `quiet` (pending while any is).
    async fn quiet(&self, quiet: Duration) {
        loop {
            if self.in_progress.load(Ordering::Acquire) > 0 {
                self.ended.notified().await;
                continue;
            }
            tokio::select! {
                () = tokio::time::sleep(quiet) => {}
                () = self.ended.notified() => continue,
            }
            if self.in_progress.load(Ordering::Acquire) == 0 {
                return;
            }
        }
    }
}

/// One request in progress on a connection (see [`Activity`]); ends when dropped.
struct InProgress(Arc<Activity>);

impl Drop for InProgress {
    fn drop(&mut self) {
        if self.0.in_progress.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.ended.notify_one();
        }
    }
}

/// A response whose body is being sent (see [`Activity::stalled`]); ends when dropped.
struct Sending(Arc<Activity>);

impl Sending {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.sent_frame();
        if activity.sending.fetch_add(1, Ordering::AcqRel) == 0 {
            activity.send_started.notify_one();
        }
        Sending(activity.clone())
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.0.sending.fetch_sub(1, Ordering::AcqRel);
        self.0.sent_frame();
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The error of a stream refused because its connection is closing ([`Activity::draining`]):
/// hyper resets the stream with the HTTP/2 error code it finds in a service's error, here
/// `REFUSED_STREAM` (RFC 9113 §8.7: not processed, safe to send again on another connection,
/// which Go's and hyper's clients do by themselves); the service is not called.
fn refused_stream() -> BoxError {
    Box::new(h2::Error::from(h2::Reason::REFUSED_STREAM))
}

pin_project_lite::pin_project! {
    /// A response future that keeps its request in progress, then hands that on to the
    /// response body; the response to a HEAD request gets an empty body (see [`head_response`]).
    /// `None`: a stream refused on a closing connection ([`refused_stream`]). A response
    /// marked [`CloseConnection`] makes the connection closing at once, before the connection
    /// task is woken.
    struct Tracked<F> {
        #[pin]
        inner: Option<F>,
        request: Option<InProgress>,
        head: bool,
    }
}

impl<F, B, E> Future for Tracked<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
    B: http_body::Body,
    E: Into<BoxError>,
{
    type Output = Result<http::Response<TrackedBody<B>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(inner) = this.inner.as_pin_mut() else {
            return Poll::Ready(Err(refused_stream()));
        };
        let result = std::task::ready!(inner.poll(cx)).map_err(Into::into);
        let request = this.request.take();
        let head = *this.head;
        if let (Ok(resp), Some(request)) = (&result, &request)
            && CloseConnection::is_set(resp)
        {
            request.0.drain();
        }
        Poll::Ready(result.map(|resp| {
            if head {
                head_response(resp, request)
            } else {
                let sending = request.as_ref().map(|r| Sending::start(&r.0));
                resp.map(|inner| TrackedBody {
                    inner: Some(inner),
                    sending,
                    _request: request,
                })
            }
        }))
    }
}

/// The response to a HEAD request: the handler's status and headers without its body, so the
/// HTTP/2 response is one HEADERS frame with END_STREAM (RFC 9113 §8.1: no DATA; hyper's HTTP/2
/// server would send the body, which clients treat as a PROTOCOL_ERROR) and the HTTP/1.1
/// response ends after its head (as hyper already wrote it).
///
/// `content-length` is what Go's servers send (`http2responseWriterState.writeChunk`, and
/// `net/http`'s `chunkWriter.writeHeader`): the handler's own header if it set one, otherwise
/// the length of the body it produced when that is known (hyper: an exact size hint) and not
/// zero, and the status allows a body (not 1xx, 204 or 304). Go also omits it for a body
/// larger than its write buffer (4 KiB over HTTP/2), which it does not hold in full; here an
/// exact size hint is always sent.
fn head_response<B: http_body::Body>(
    resp: http::Response<B>,
    request: Option<InProgress>,
) -> http::Response<TrackedBody<B>> {
    let (mut parts, body) = resp.into_parts();
    let status = parts.status;
    let body_allowed = !status.is_informational()
        && status != http::StatusCode::NO_CONTENT
        && status != http::StatusCode::NOT_MODIFIED;
    if body_allowed
        && !parts.headers.contains_key(http::header::CONTENT_LENGTH)
        && let Some(len) = body.size_hint().exact().filter(|&len| len > 0)
    {
        parts
            .headers
            .insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(len));
    }
    // Dropped now: a HEAD response never sends it.
    drop(body);
    http::Response::from_parts(
        parts,
        TrackedBody {
            inner: None,
            sending: None,
            _request: request,
        },
    )
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request in progress until it is finished or dropped;
    /// `None` for the response to a HEAD request (no body: ends at once).
    struct TrackedBody<B> {
        #[pin]
        inner: Option<B>,
        // Dropped before `_request` (field order), so the response stops being sent first.
        sending: Option<Sending>,
        _request: Option<InProgress>,
    }
}

impl<B: http_body::Body> http_body::Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        let this = self.project();
        match this.inner.as_pin_mut() {
            Some(inner) => {
                let frame = inner.poll_frame(cx);
                if let (Poll::Ready(Some(Ok(_))), Some(sending)) = (&frame, this.sending) {
                    sending.0.sent_frame();
                }
                frame
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner
            .as_ref()
            .is_none_or(|inner| inner.is_end_stream())
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.as_ref().map_or_else(
            || http_body::SizeHint::with_exact(0),
            |inner| inner.size_hint(),
        )
    }
}

/// Inserts the connection's peer chain into every request, tracks it as in progress, and
/// answers HEAD requests without a body ([`head_response`]).
#[derive(Clone)]
struct AddPeer<S> {
    inner: S,
    peer: Option<PeerCertificates>,
    activity: Arc<Activity>,
}

impl<S, B, RB> Service<http::Request<B>> for AddPeer<S>
where
    S: Service<http::Request<B>, Response = http::Response<RB>>,
    S::Error: Into<BoxError>,
    RB: http_body::Body,
{
    type Response = http::Response<TrackedBody<RB>>;
    type Error = BoxError;
    type Future = Tracked<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        if req.version() == http::Version::HTTP_2 && self.activity.draining() {
            // A stream opened on a closing connection: refused, neither served nor counted.
            return Tracked {
                inner: None,
                request: None,
                head: false,
            };
        }
        let request = self.activity.start();
        let head = req.method() == http::Method::HEAD;
        // Never trust an extension that came from elsewhere: the connection decides.
        req.extensions_mut().remove::<PeerCertificates>();
        if let Some(peer) = &self.peer {
            req.extensions_mut().insert(peer.clone());
        }
        Tracked {
            inner: Some(self.inner.call(req)),
            request: Some(request),
            head,
        }
    }
}

pin_project_lite::pin_project! {
    /// A connection's stream with the connection slot it holds ([`TlsServer::max_connections`]).
    struct Slotted<T> {
        #[pin]
        io: T,
        _slot: tokio::sync::OwnedSemaphorePermit,
    }
}

impl<T: tokio::io::AsyncRead> tokio::io::AsyncRead for Slotted<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.project().io.poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite> tokio::io::AsyncWrite for Slotted<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.project().io.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.project().io.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.project().io.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.project().io.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_connection_cap_follows_the_open_file_limit() {
        // (soft limit, cap): the limit less max(limit / 8, 64), at least 16, at most
        // MOST_CONNECTIONS.
        let cases: &[(u64, usize)] = &[
            (0, 16),
            (20, 16),
            (80, 16),
            (81, 17),
            (256, 192),
            (512, 448),
            (1024, 896),
            (4096, 3584),
            (65_536, 57_344),
            (524_288, 458_752),
            (1 << 20, 917_504),
            (u64::MAX, MOST_CONNECTIONS),
        ];
        // The most a cap may be: `u32::MAX` (`acquire_many`'s bound), or tokio's
        // `MAX_PERMITS` where that is lower (32-bit targets).
        assert_eq!(
            MOST_CONNECTIONS,
            (u32::MAX as usize).min(tokio::sync::Semaphore::MAX_PERMITS)
        );
        #[cfg(target_pointer_width = "64")]
        assert_eq!(MOST_CONNECTIONS, u32::MAX as usize);
        for &(limit, cap) in cases {
            assert_eq!(max_connections_for_open_files(limit), cap, "limit {limit}");
        }
        // Monotonic: a higher limit never lowers the cap, and the cap stays below the limit
        // once the limit is above the floor.
        let mut last = 0;
        for limit in (0..70_000u64).step_by(97) {
            let cap = max_connections_for_open_files(limit);
            assert!(cap >= last, "limit {limit}");
            if limit > 80 {
                assert!((cap as u64) < limit, "limit {limit}");
            }
            last = cap;
        }
    }

    #[cfg(unix)]
    #[test]
    fn default_max_connections_reads_the_current_soft_limit() {
        let (soft, _) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
        assert_eq!(
            default_max_connections(),
            max_connections_for_open_files(soft)
        );
    }

    /// One HTTP/1.1 request with `lines` header lines (Host included) to a server with
    /// `http1_max_headers(max)`; the response's status line.
    async fn status_with_header_lines(max: usize, lines: usize) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let server_key = rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        let config = super::super::server_config(
            vec![cert.der().clone()],
            server_key,
            &super::super::ClientCertPolicy::None,
        )
        .unwrap();
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tcp.local_addr().unwrap();
        let app = tower::service_fn(|_req: http::Request<Incoming>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(String::from("ok")))
        });
        let server = TlsServer::new(Arc::new(config)).http1_max_headers(max);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve(tcp, app, async {
            let _ = stopped.await;
        }));

        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert.der().clone()).unwrap();
        let client = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut tls = tokio_rustls::TlsConnector::from(Arc::new(client))
            .connect(
                rustls_pki_types::ServerName::try_from("localhost").unwrap(),
                tcp,
            )
            .await
            .unwrap();
        let mut head = String::from("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
        for i in 2..lines {
            head.push_str(&format!("X-Remote-Group: g{i}\r\n"));
        }
        head.push_str("\r\n");
        tls.write_all(head.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        let _ = tls.read_to_end(&mut response).await;
        let _ = stop.send(());
        serving.await.unwrap().unwrap();
        let response = String::from_utf8_lossy(&response).into_owned();
        response.lines().next().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn http1_max_headers_bounds_the_header_lines() {
        // Lines beyond the bound: 431 before the service; within it: the service answers.
        assert_eq!(
            status_with_header_lines(50, 60).await,
            "HTTP/1.1 431 Request Header Fields Too Large"
        );
        assert_eq!(status_with_header_lines(50, 40).await, "HTTP/1.1 200 OK");
        assert_eq!(status_with_header_lines(50, 50).await, "HTTP/1.1 200 OK");
        // The default is far above hyper's 100.
        assert_eq!(
            status_with_header_lines(HTTP1_MAX_HEADERS, 1000).await,
            "HTTP/1.1 200 OK"
        );
        // Clamped to 32..=16384.
        let config = |server: TlsServer| format!("{server:?}");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let server_config = Arc::new(
            super::super::server_config(
                vec![cert.der().clone()],
                rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
                &super::super::ClientCertPolicy::None,
            )
            .unwrap(),
        );
        let server = TlsServer::new(server_config);
        assert!(
            config(server.clone()).contains(&format!("http1_max_headers: {HTTP1_MAX_HEADERS},"))
        );
        assert!(config(server.clone().http1_max_headers(0)).contains("http1_max_headers: 32,"));
        assert!(config(server.http1_max_headers(usize::MAX)).contains("http1_max_headers: 16384,"));
    }

    #[test]
    fn accept_backoff_doubles_from_5ms_to_1s() {
        let mut delay = None;
        let mut seen = Vec::new();
        for _ in 0..12 {
            let d = accept_backoff(delay);
            seen.push(d.as_millis());
            delay = Some(d);
        }
        assert_eq!(
            seen,
            [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000]
        );
        // A success resets it.
        assert_eq!(accept_backoff(None), Duration::from_millis(5));
    }
}
