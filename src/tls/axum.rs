//! `axum::serve` over TLS with client certificates (feature `axum-tls`).
//!
//! axum's own `serve` takes any [`axum::serve::Listener`]. [`TlsListener`] is one: it accepts
//! TCP connections, runs the TLS handshakes concurrently (a client that connects and never
//! finishes its handshake holds one slot until the handshake timeout, not the accept loop),
//! and yields the TLS streams together with a [`TlsConnectInfo`]: the remote address and the
//! client's certificate chain, if it sent one. Serve the router with
//! `into_make_service_with_connect_info::<TlsConnectInfo>()` and add [`PeerCertificatesLayer`]
//! *outside* [`AuthenticationLayer`](crate::middleware::AuthenticationLayer): it copies the
//! chain from axum's `ConnectInfo` into the [`PeerCertificates`] extension that the X.509 and
//! front-proxy authenticators read. The chain is one shared value per connection, so the
//! per-connection verification cache works as with [`TlsServer`](super::TlsServer).
//! [`TlsListener::dynamic`] takes a [`DynamicServerConfig`]: the acceptable client CAs its
//! handshakes name then follow reloads of the CA files, as kube-apiserver's do.
//!
//! Bounds: handshakes time out ([`TlsListener::handshake_timeout`]) and at most
//! [`default_max_connections`] connections (derived from the process's open-file limit) are
//! open at once, handshakes included ([`TlsListener::max_connections`]; the rest wait in the
//! listen backlog); a failed `accept` (`EMFILE`) is retried after a back-off (5 ms doubling
//! to 1 s, as in Go). `axum::serve` itself has no first-request or idle timeout, so the
//! connections bring their own, counted in bytes: a client that sends nothing within
//! [`TlsListener::first_request_timeout`] (32 s) of its handshake, or a connection that then
//! reads and writes nothing for [`TlsListener::idle_timeout`] (90 s), is closed and its slot
//! given back (the read fails with [`io::ErrorKind::TimedOut`] and hyper drops the
//! connection). The listener cannot see requests: unlike [`TlsServer`](super::TlsServer), it
//! also cuts a request in progress that stays silent both ways for the idle timeout (a slow
//! handler, a watch or long poll with no event, a quiet upgraded stream); raise the idle
//! timeout above the longest such silence. Nor can axum's HTTP settings be changed: hyper's
//! defaults apply (100 header lines per HTTP/1.1 request, 200 concurrent HTTP/2 streams per
//! connection, 16 KiB HTTP/2 header lists). Where any of that matters, serve the router with
//! [`TlsServer`](super::TlsServer) instead, which times out connections by requests in
//! progress, has kube-apiserver's 100 streams, room for thousands of front-proxy group
//! headers ([`HTTP1_MAX_HEADERS`](super::HTTP1_MAX_HEADERS)), and puts the
//! [`PeerCertificates`] on every request itself (no [`PeerCertificatesLayer`] needed).
//!
//! ```no_run
//! use std::sync::Arc;
//! use axum::{Router, routing::get};
//! use kube_authn::chain::ChainBuilder;
//! use kube_authn::middleware::{Authenticated, AuthenticationLayer};
//! use kube_authn::tls::axum::{PeerCertificatesLayer, TlsConnectInfo, TlsListener};
//! use kube_authn::x509::X509Authenticator;
//!
//! # async fn run(config: Arc<rustls::ServerConfig>) -> std::io::Result<()> {
//! let chain = ChainBuilder::new()
//!     .request(X509Authenticator::from_ca_file("/etc/kubernetes/pki/ca.crt").unwrap())
//!     .build();
//! let app = Router::new()
//!     .route("/", get(|who: Authenticated| async move { who.user.name().to_owned() }))
//!     .layer(AuthenticationLayer::new(chain))
//!     .layer(PeerCertificatesLayer);
//! let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
//! axum::serve(
//!     TlsListener::new(tcp, config),
//!     app.into_make_service_with_connect_info::<TlsConnectInfo>(),
//! )
//! .await
//! # }
//! ```

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tower_layer::Layer;
use tower_service::Service;

use super::{
    ConfigSource, DEFAULT_FIRST_REQUEST_TIMEOUT, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DynamicServerConfig, PeerCertificates, accept_backoff, default_max_connections, tune_accepted,
};

/// Default bound on handshakes in progress at once.
///
/// ```
/// assert_eq!(kube_authn::tls::axum::DEFAULT_MAX_HANDSHAKES, 1024);
/// ```
pub const DEFAULT_MAX_HANDSHAKES: usize = 1024;

/// What [`TlsListener`] knows about a connection: the remote address and the client's
/// certificate chain (leaf first), if it sent one.
///
/// ```
/// use kube_authn::tls::axum::TlsConnectInfo;
/// let info = TlsConnectInfo { remote_addr: "127.0.0.1:5000".parse().unwrap(), peer: None };
/// assert!(info.peer.is_none());
/// ```
#[derive(Clone, Debug)]
pub struct TlsConnectInfo {
    /// The client's address.
    pub remote_addr: SocketAddr,
    /// The client's certificate chain, if it sent one.
    pub peer: Option<PeerCertificates>,
}

impl Connected<IncomingStream<'_, TlsListener>> for TlsConnectInfo {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        stream.remote_addr().clone()
    }
}

type Handshake = Option<(TlsConnection, TlsConnectInfo)>;

pin_project_lite::pin_project! {
    /// A connection [`TlsListener`] accepted: the TLS stream, holding one of the listener's
    /// connection slots until it is dropped.
    ///
    /// ```no_run
    /// use axum::serve::Listener;
    /// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
    /// # let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let mut listener = kube_authn::tls::axum::TlsListener::new(tcp, config);
    /// let (conn, info) = listener.accept().await;
    /// let alpn = conn.get_ref().get_ref().1.alpn_protocol();
    /// # Ok(()) }
    /// ```
    pub struct TlsConnection {
        #[pin]
        stream: TlsStream<TcpStream>,
        // When the connection is closed for being quiet (see `Quiet`): armed at the
        // first-request deadline, moved once to the idle deadline when the first bytes are
        // read, then moved on lazily, only when it fires, to the idle deadline counted from
        // the last bytes read or written. Boxed: axum's `Listener` wants an `Unpin` stream
        // (one allocation per connection).
        deadline: Pin<Box<tokio::time::Sleep>>,
        quiet: Quiet,
        slot: OwnedSemaphorePermit,
    }
}

/// The longest deadline a connection arms (about 30 years, as tokio's `sleep` caps its own):
/// a timeout of `Duration::MAX` turns the deadline off without overflowing an `Instant`.
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// A connection's first-request and idle timeouts: the idle timeout, and when bytes were last
/// read or written once the client has sent its first ones. Per read or write that moves
/// bytes: one clock read and a store; the timer itself is moved only when it fires.
#[derive(Debug)]
struct Quiet {
    idle: Duration,
    last_activity: Option<tokio::time::Instant>,
}

impl Quiet {
    /// Bytes were read: the first ones move the deadline from the first-request timeout to
    /// the idle timeout.
    fn read(&mut self, deadline: Pin<&mut tokio::time::Sleep>) {
        let now = tokio::time::Instant::now();
        if self.last_activity.is_none() {
            deadline.reset(now + self.idle);
        }
        self.last_activity = Some(now);
    }

    /// Bytes were written: the connection is busy, once the client has sent something (the
    /// server's own first bytes, such as its HTTP/2 SETTINGS, do not count as a request).
    fn wrote(&mut self) {
        if self.last_activity.is_some() {
            self.last_activity = Some(tokio::time::Instant::now());
        }
    }

    /// Whether the connection has been quiet for its timeout (polled while a read is
    /// pending; registers for a wake-up at the deadline otherwise).
    fn expired(
        &self,
        mut deadline: Pin<&mut tokio::time::Sleep>,
        cx: &mut TaskContext<'_>,
    ) -> bool {
        loop {
            if deadline.as_mut().poll(cx).is_pending() {
                return false;
            }
            let Some(last) = self.last_activity else {
                return true;
            };
            let next = last + self.idle;
            if next <= deadline.deadline() {
                return true;
            }
            // Bytes moved since the deadline was set: count the idle time from them.
            deadline.as_mut().reset(next);
        }
    }
}

impl std::fmt::Debug for TlsConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConnection")
            .field("peer_addr", &self.stream.get_ref().0.peer_addr().ok())
            .finish_non_exhaustive()
    }
}

impl TlsConnection {
    /// The TLS stream (for its session: ALPN, peer certificates, …).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use axum::serve::Listener;
    /// use kube_authn::tls::axum::TlsListener;
    /// use kube_authn::tls::{ClientCertPolicy, rustls, server_config, tokio_rustls};
    /// use rustls_pki_types::{PrivateKeyDer, ServerName, pem::PemObject};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // A self-signed server certificate for `localhost`.
    /// let key = rcgen::KeyPair::generate().unwrap();
    /// let cert = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
    /// let server_key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
    /// let config = server_config(vec![cert.der().clone()], server_key, &ClientCertPolicy::None).unwrap();
    /// let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let addr = tcp.local_addr().unwrap();
    /// let mut listener = TlsListener::new(tcp, Arc::new(config));
    ///
    /// // A client that offers HTTP/2 by ALPN.
    /// let mut roots = rustls::RootCertStore::empty();
    /// roots.add(cert.der().clone()).unwrap();
    /// let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    /// let mut client = rustls::ClientConfig::builder_with_provider(provider)
    ///     .with_safe_default_protocol_versions()
    ///     .unwrap()
    ///     .with_root_certificates(roots)
    ///     .with_no_client_auth();
    /// client.alpn_protocols = vec![b"h2".to_vec()];
    /// let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    /// let dial = tokio::spawn(async move {
    ///     let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    ///     connector.connect(ServerName::try_from("localhost").unwrap(), tcp).await.unwrap()
    /// });
    ///
    /// let (conn, info) = listener.accept().await;
    /// let (_tcp, session) = conn.get_ref().get_ref();
    /// assert_eq!(session.alpn_protocol(), Some(&b"h2"[..]));
    /// assert!(info.peer.is_none()); // no client certificate
    /// dial.await.unwrap();
    /// # });
    /// ```
    pub fn get_ref(&self) -> &TlsStream<TcpStream> {
        &self.stream
    }
}

impl AsyncRead for TlsConnection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.project();
        let before = buf.filled().len();
        match this.stream.poll_read(cx, buf) {
            Poll::Pending => {
                if this.quiet.expired(this.deadline.as_mut(), cx) {
                    // hyper ends the connection on the error; dropping it frees the slot.
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "connection quiet for its first-request or idle timeout",
                    )));
                }
                Poll::Pending
            }
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.quiet.read(this.deadline.as_mut());
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
        }
    }
}

impl AsyncWrite for TlsConnection {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let written = std::task::ready!(this.stream.poll_write(cx, buf));
        if matches!(written, Ok(n) if n > 0) {
            this.quiet.wrote();
        }
        Poll::Ready(written)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        self.project().stream.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        self.project().stream.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let written = std::task::ready!(this.stream.poll_write_vectored(cx, bufs));
        if matches!(written, Ok(n) if n > 0) {
            this.quiet.wrote();
        }
        Poll::Ready(written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// An [`axum::serve::Listener`] that terminates TLS. See the [module docs](self).
///
/// ```no_run
/// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
/// let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
/// let listener = kube_authn::tls::axum::TlsListener::new(tcp, config)
///     .handshake_timeout(std::time::Duration::from_secs(5));
/// # Ok(()) }
/// ```
pub struct TlsListener {
    tcp: TcpListener,
    config: ConfigSource,
    handshake_timeout: Duration,
    first_request_timeout: Duration,
    idle_timeout: Duration,
    max_handshakes: usize,
    handshakes: JoinSet<Handshake>,
    slots: Arc<Semaphore>,
    /// A slot taken for the next connection to accept.
    next_slot: Option<OwnedSemaphorePermit>,
    /// The back-off after the last failed `accept`, if the last one failed.
    accept_delay: Option<Duration>,
    /// When to try `accept` again after a failure.
    accept_paused_until: Option<tokio::time::Instant>,
}

impl std::fmt::Debug for TlsListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsListener")
            .field("local_addr", &self.tcp.local_addr().ok())
            .field("handshake_timeout", &self.handshake_timeout)
            .field("first_request_timeout", &self.first_request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("handshakes_in_progress", &self.handshakes.len())
            .field("free_connection_slots", &self.slots.available_permits())
            .finish_non_exhaustive()
    }
}

impl TlsListener {
    /// Terminates TLS with `config` (see [`server_config`](super::server_config)) on `tcp`.
    ///
    /// ```no_run
    /// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
    /// let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let _listener = kube_authn::tls::axum::TlsListener::new(tcp, config);
    /// # Ok(()) }
    /// ```
    pub fn new(tcp: TcpListener, config: Arc<rustls::ServerConfig>) -> Self {
        Self::with_source(tcp, ConfigSource::Fixed(TlsAcceptor::from(config)))
    }

    /// Terminates TLS on `tcp` with the configuration `config` holds when each connection
    /// arrives: the acceptable client CAs its handshakes name follow reloads of the hint
    /// bundles, as with [`TlsServer::dynamic`](super::TlsServer::dynamic) (a rebuild after a
    /// change runs on the blocking pool; until it is done, handshakes name the previous list).
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use std::sync::Arc;
    /// use kube_authn::tls::{DynamicServerConfig, server_config};
    /// use kube_authn::x509::{X509Authenticator, doc_client_key_pem, doc_client_pem, parse_pem_bundle};
    /// use rustls_pki_types::{PrivateKeyDer, pem::PemObject};
    ///
    /// // The client CA file, reloaded when it changes, and named by every handshake.
    /// let x509 = X509Authenticator::from_ca_file("/etc/kubernetes/pki/ca.crt").unwrap();
    /// let _watch = x509.reloader().unwrap().spawn_watch(std::time::Duration::from_secs(1));
    /// let dynamic = DynamicServerConfig::new(vec![Arc::new(x509.clone())], |policy| {
    ///     let chain = parse_pem_bundle(doc_client_pem().as_bytes())?;
    ///     let key = PrivateKeyDer::from_pem_slice(doc_client_key_pem().as_bytes()).unwrap();
    ///     server_config(chain, key, policy)
    /// })
    /// .unwrap();
    /// let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let _listener = kube_authn::tls::axum::TlsListener::dynamic(tcp, Arc::new(dynamic));
    /// # Ok(()) }
    /// ```
    pub fn dynamic(tcp: TcpListener, config: Arc<DynamicServerConfig>) -> Self {
        Self::with_source(tcp, ConfigSource::Dynamic(config))
    }

    fn with_source(tcp: TcpListener, config: ConfigSource) -> Self {
        Self {
            tcp,
            config,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            first_request_timeout: DEFAULT_FIRST_REQUEST_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
            handshakes: JoinSet::new(),
            slots: Arc::new(Semaphore::new(default_max_connections())),
            next_slot: None,
            accept_delay: None,
            accept_paused_until: None,
        }
    }

    /// Sets how many connections may be open at once, handshakes included (at least 1).
    /// Default: [`default_max_connections`], derived from the process's soft open-file limit
    /// when the listener is made. Keep it below that limit.
    ///
    /// ```no_run
    /// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
    /// # let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let l = kube_authn::tls::axum::TlsListener::new(tcp, config).max_connections(10_000);
    /// # Ok(()) }
    /// ```
    pub fn max_connections(mut self, max: usize) -> Self {
        self.slots = Arc::new(Semaphore::new(max.clamp(1, Semaphore::MAX_PERMITS)));
        self.next_slot = None;
        self
    }

    /// Sets the handshake timeout (default [`DEFAULT_HANDSHAKE_TIMEOUT`]).
    ///
    /// ```no_run
    /// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
    /// # let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let l = kube_authn::tls::axum::TlsListener::new(tcp, config)
    ///     .handshake_timeout(std::time::Duration::from_secs(3));
    /// # Ok(()) }
    /// ```
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Sets how long a connection may stay open after its handshake before the client sends
    /// its first bytes (default [`DEFAULT_FIRST_REQUEST_TIMEOUT`], kube-apiserver's
    /// `ReadHeaderTimeout`); then the connection is closed and its slot given back.
    /// `Duration::MAX` turns the deadline off.
    ///
    /// ```no_run
    /// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
    /// # let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let l = kube_authn::tls::axum::TlsListener::new(tcp, config)
    ///     .first_request_timeout(std::time::Duration::from_secs(10));
    /// # Ok(()) }
    /// ```
    pub fn first_request_timeout(mut self, timeout: Duration) -> Self {
        self.first_request_timeout = timeout;
        self
    }

    /// Sets how long a connection may go without reading or writing a byte once the client
    /// has sent its first ones (default [`DEFAULT_IDLE_TIMEOUT`], kube-apiserver's
    /// `IdleTimeout`); then the connection is closed and its slot given back.
    /// `Duration::MAX` turns the deadline off.
    ///
    /// The listener sees bytes, not requests: a request in progress that neither reads nor
    /// writes for this long (a handler that takes longer to start its response, a watch or
    /// long poll with no event, a quiet upgraded stream) is cut with its connection, where
    /// [`TlsServer`](super::TlsServer) keeps a connection with a request in progress. A
    /// streaming response keeps its connection as long as it writes more often than this.
    /// Raise the timeout above the longest such silence of your service.
    ///
    /// ```no_run
    /// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
    /// # let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let l = kube_authn::tls::axum::TlsListener::new(tcp, config)
    ///     .idle_timeout(std::time::Duration::from_secs(300));
    /// # Ok(()) }
    /// ```
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets how many handshakes may be in progress at once (default
    /// [`DEFAULT_MAX_HANDSHAKES`]); beyond that, new connections wait in the kernel's backlog.
    ///
    /// ```no_run
    /// # async fn run(config: std::sync::Arc<rustls::ServerConfig>) -> std::io::Result<()> {
    /// # let tcp = tokio::net::TcpListener::bind("127.0.0.1:8443").await?;
    /// let l = kube_authn::tls::axum::TlsListener::new(tcp, config).max_handshakes(64);
    /// # Ok(()) }
    /// ```
    pub fn max_handshakes(mut self, n: usize) -> Self {
        self.max_handshakes = n.max(1);
        self
    }

    fn start_handshake(
        &mut self,
        tcp: TcpStream,
        remote_addr: SocketAddr,
        slot: OwnedSemaphorePermit,
    ) {
        let acceptor = self.config.acceptor();
        let timeout = self.handshake_timeout;
        let first_request = self.first_request_timeout.min(FAR_FUTURE);
        let idle = self.idle_timeout.min(FAR_FUTURE);
        self.handshakes.spawn(async move {
            let tls = match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => {
                    tracing::debug!(%remote_addr, error = %e, "TLS handshake failed");
                    return None;
                }
                Err(_) => {
                    tracing::debug!(%remote_addr, "TLS handshake timed out");
                    return None;
                }
            };
            let peer = tls
                .get_ref()
                .1
                .peer_certificates()
                .filter(|c| !c.is_empty())
                .map(|c| PeerCertificates::from_handshake(c.to_vec()));
            Some((
                TlsConnection {
                    stream: tls,
                    deadline: Box::pin(tokio::time::sleep(first_request)),
                    quiet: Quiet {
                        idle,
                        last_activity: None,
                    },
                    slot,
                },
                TlsConnectInfo { remote_addr, peer },
            ))
        });
    }
}

impl Listener for TlsListener {
    type Io = TlsConnection;
    type Addr = TlsConnectInfo;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let paused_until = self.accept_paused_until;
            let room = self.handshakes.len() < self.max_handshakes
                && self.next_slot.is_some()
                && paused_until.is_none();
            let busy = !self.handshakes.is_empty();
            let need_slot = self.next_slot.is_none();
            tokio::select! {
                done = self.handshakes.join_next(), if busy => {
                    if let Some(Ok(Some((tls, info)))) = done {
                        return (tls, info);
                    }
                }
                // Never closed, so this always yields a permit.
                slot = self.slots.clone().acquire_owned(), if need_slot => {
                    self.next_slot = slot.ok();
                }
                accepted = self.tcp.accept(), if room => match accepted {
                    Ok((tcp, remote)) => {
                        self.accept_delay = None;
                        tune_accepted(&tcp);
                        if let Some(slot) = self.next_slot.take() {
                            self.start_handshake(tcp, remote, slot);
                        }
                    }
                    Err(e) => {
                        // EMFILE and friends: back off instead of spinning, while handshakes
                        // in progress still complete and are handed out.
                        let delay = accept_backoff(self.accept_delay);
                        self.accept_delay = Some(delay);
                        self.accept_paused_until = Some(tokio::time::Instant::now() + delay);
                        tracing::warn!(error = %e, retry_in = ?delay, "accept failed");
                    }
                },
                () = tokio::time::sleep_until(paused_until.unwrap_or_else(tokio::time::Instant::now)),
                    if paused_until.is_some() =>
                {
                    self.accept_paused_until = None;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(TlsConnectInfo {
            remote_addr: self.tcp.local_addr()?,
            peer: None,
        })
    }
}

/// Copies the client certificate chain from axum's `ConnectInfo<`[`TlsConnectInfo`]`>` into
/// the [`PeerCertificates`] request extension. See the [module docs](self).
///
/// A [`PeerCertificates`] already on the request is removed first: the chain the
/// authenticators see is always the connection's, or none (no client certificate, or no
/// `ConnectInfo<TlsConnectInfo>`). So the layer is for [`TlsListener`] only; behind
/// [`TlsServer`](super::TlsServer), which puts the chain on every request itself, it would
/// remove it.
///
/// The app must be served with
/// `into_make_service_with_connect_info::<TlsConnectInfo>()`: without it no request has a
/// `ConnectInfo<TlsConnectInfo>`, and every client certificate is ignored. The first such
/// request of the process logs an error naming that fix (once: the wiring is the same for
/// every request).
///
/// ```
/// use tower::Layer;
/// let svc = kube_authn::tls::axum::PeerCertificatesLayer.layer(tower::service_fn(
///     |_: http::Request<()>| async { Ok::<_, std::convert::Infallible>(http::Response::new(())) },
/// ));
/// # let _ = svc;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerCertificatesLayer;

impl<S> Layer<S> for PeerCertificatesLayer {
    type Service = PeerCertificatesService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PeerCertificatesService { inner }
    }
}

/// The service [`PeerCertificatesLayer`] builds.
///
/// ```
/// let _: Option<kube_authn::tls::axum::PeerCertificatesService<()>> = None;
/// ```
#[derive(Clone, Debug)]
pub struct PeerCertificatesService<S> {
    inner: S,
}

impl<S, B> Service<http::Request<B>> for PeerCertificatesService<S>
where
    S: Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        let peer = match req.extensions().get::<ConnectInfo<TlsConnectInfo>>() {
            Some(info) => info.0.peer.clone(),
            None => {
                missing_connect_info();
                None
            }
        };
        // Never trust an extension that came from elsewhere (a layer further out, a test
        // harness): the connection decides, as `TlsServer` does.
        req.extensions_mut().remove::<PeerCertificates>();
        if let Some(peer) = peer {
            req.extensions_mut().insert(peer);
        }
        self.inner.call(req)
    }
}

/// Whether [`missing_connect_info`] has logged its error in this process.
static MISSING_CONNECT_INFO_LOGGED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Logs, once per process, that [`PeerCertificatesLayer`] saw a request without
/// `ConnectInfo<TlsConnectInfo>`: a wiring mistake that silently ignores every client
/// certificate.
fn missing_connect_info() {
    use std::sync::atomic::Ordering::Relaxed;
    if !MISSING_CONNECT_INFO_LOGGED.load(Relaxed)
        && !MISSING_CONNECT_INFO_LOGGED.swap(true, Relaxed)
    {
        tracing::error!(
            "PeerCertificatesLayer: the request has no ConnectInfo<TlsConnectInfo>, so client certificates are ignored; serve the app with into_make_service_with_connect_info::<TlsConnectInfo>() (logged once)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Mutex;
    use std::sync::atomic::Ordering::Relaxed;

    #[derive(Clone)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A request without `ConnectInfo<TlsConnectInfo>` (the app served without
    /// `into_make_service_with_connect_info::<TlsConnectInfo>()`) logs one error per process
    /// naming the fix; a request with it logs nothing.
    #[test]
    fn missing_connect_info_is_logged_once() {
        MISSING_CONNECT_INFO_LOGGED.store(false, Relaxed);
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = Sink(buf.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let with_info = || {
            let mut req = http::Request::new(());
            req.extensions_mut().insert(ConnectInfo(TlsConnectInfo {
                remote_addr: "127.0.0.1:5000".parse().unwrap(),
                peer: None,
            }));
            req
        };
        let without_info = || http::Request::new(());
        let fix = "into_make_service_with_connect_info::<TlsConnectInfo>()";
        // (case, request, how many error lines naming the fix after it)
        let cases: Vec<(&str, http::Request<()>, usize)> = vec![
            ("with connect info", with_info(), 0),
            ("first without", without_info(), 1),
            ("second without", without_info(), 1),
            ("with connect info again", with_info(), 1),
        ];
        let mut svc = PeerCertificatesLayer.layer(tower::service_fn(|_: http::Request<()>| {
            std::future::ready(Ok::<_, std::convert::Infallible>(()))
        }));
        for (case, req, want) in cases {
            drop(svc.call(req));
            let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
            let logged = text
                .lines()
                .filter(|l| l.contains("ERROR") && l.contains(fix))
                .count();
            assert_eq!(logged, want, "{case}: {text}");
        }
    }
}
