//! Connections to [`TlsServer`] and to `axum::serve` with [`TlsListener`] (+
//! [`PeerCertificatesLayer`]), with real rustls clients on 127.0.0.1: the client certificate
//! authenticates every request of a connection (HTTP/1.1 keep-alive, concurrent HTTP/2
//! streams), over TLS 1.3 and TLS 1.2; an idle HTTP/1.1 keep-alive connection stays usable
//! for the idle timeout (not hyper's 30 s head timeout); accepted sockets get TCP_NODELAY and
//! kube-apiserver's TCP keep-alive; and [`PeerCertificatesLayer`] never lets through a
//! `PeerCertificates` the connection did not provide.

#![cfg(feature = "axum-tls")]

mod tls_support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use bytes::Bytes;
use kube_authn::chain::ChainBuilder;
use kube_authn::middleware::{Authenticated, AuthenticationLayer};
use kube_authn::tls::axum::{PeerCertificatesLayer, TlsConnectInfo, TlsListener};
use kube_authn::tls::pki_types::pem::PemObject;
use kube_authn::tls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use kube_authn::tls::{CertSource, ClientCertPolicy, PeerCertificates, TlsServer};
use kube_authn::x509::{
    CaBundle, X509Authenticator, doc_ca_pem, doc_client_key_pem, doc_client_pem,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::{Layer, ServiceExt};

type Tls = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

/// The user the doc client certificate authenticates as.
const DOC_USER: &str = "doc-admin";

/// The two ways this crate serves TLS with client certificates.
#[derive(Clone, Copy, Debug)]
enum Serving {
    TlsServer,
    AxumTlsListener,
}

/// A server task, stopped when dropped.
struct Running {
    addr: SocketAddr,
    ca: CertificateDer<'static>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts `serving` on a free 127.0.0.1 port, requesting client certificates, with the idle
/// timeout `idle` (the default when `None`): every request is authenticated by the doc client
/// CA and answered with the user's name (401 without a certificate).
async fn start(serving: Serving, idle: Option<Duration>) -> Running {
    let (config, ca) = tls_support::localhost_config(&ClientCertPolicy::Request { hints: vec![] });
    let chain = ChainBuilder::new()
        .request(X509Authenticator::new(
            CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap(),
        ))
        .build();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let task = match serving {
        Serving::TlsServer => {
            let app = AuthenticationLayer::new(chain).layer(tower::service_fn(
                |req: http::Request<hyper::body::Incoming>| async move {
                    let who = req.extensions().get::<Authenticated>().unwrap();
                    Ok::<_, Infallible>(http::Response::new(who.user.name().to_owned()))
                },
            ));
            let mut server = TlsServer::new(config);
            if let Some(idle) = idle {
                server = server.idle_timeout(idle);
            }
            tokio::spawn(async move {
                server
                    .serve(tcp, app, std::future::pending())
                    .await
                    .unwrap();
            })
        }
        Serving::AxumTlsListener => {
            let app = Router::new()
                .route(
                    "/",
                    get(|who: Authenticated| async move { who.user.name().to_owned() }),
                )
                .layer(AuthenticationLayer::new(chain))
                .layer(PeerCertificatesLayer);
            let mut listener = TlsListener::new(tcp, config);
            if let Some(idle) = idle {
                listener = listener.idle_timeout(idle);
            }
            tokio::spawn(async move {
                axum::serve(
                    listener,
                    app.into_make_service_with_connect_info::<TlsConnectInfo>(),
                )
                .await
                .unwrap();
            })
        }
    };
    Running { addr, ca, task }
}

/// A TLS connection to `server` offering `alpn`, over TLS 1.2 only when `tls12` (else the
/// safe defaults, TLS 1.3 negotiated), with the doc client certificate when `with_cert`.
async fn connect(server: &Running, alpn: &[u8], tls12: bool, with_cert: bool) -> Tls {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(server.ca.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = if tls12 {
        rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS12])
    } else {
        rustls::ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions()
    }
    .unwrap()
    .with_root_certificates(roots);
    let mut config = if with_cert {
        let chain = CertificateDer::pem_slice_iter(doc_client_pem().as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(doc_client_key_pem().as_bytes()).unwrap();
        builder.with_client_auth_cert(chain, key).unwrap()
    } else {
        builder.with_no_client_auth()
    };
    config.alpn_protocols = vec![alpn.to_vec()];
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let (_, session) = tls.get_ref();
    let version = if tls12 {
        rustls::ProtocolVersion::TLSv1_2
    } else {
        rustls::ProtocolVersion::TLSv1_3
    };
    assert_eq!(session.protocol_version(), Some(version));
    assert_eq!(session.alpn_protocol(), Some(alpn));
    tls
}

fn get_root() -> http::Request<http_body_util::Empty<Bytes>> {
    http::Request::get("https://localhost/")
        .header(http::header::HOST, "localhost")
        .body(http_body_util::Empty::new())
        .unwrap()
}

/// Status and body of one response.
async fn status_and_body(resp: http::Response<hyper::body::Incoming>) -> (u16, String) {
    use http_body_util::BodyExt;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

/// `requests` requests on one HTTP/1.1 keep-alive connection, one after the other.
async fn http1_requests(tls: Tls, requests: usize) -> Vec<(u16, String)> {
    let (mut send, conn) =
        hyper::client::conn::http1::handshake::<_, http_body_util::Empty<Bytes>>(
            hyper_util::rt::TokioIo::new(tls),
        )
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    let mut answers = Vec::new();
    for _ in 0..requests {
        send.ready().await.expect("the connection stays open");
        let resp = send.send_request(get_root()).await.unwrap();
        answers.push(status_and_body(resp).await);
    }
    assert!(!conn.is_finished(), "the keep-alive connection was closed");
    answers
}

/// `streams` concurrent requests on one HTTP/2 connection.
async fn http2_requests(tls: Tls, streams: usize) -> Vec<(u16, String)> {
    let (send, conn) = hyper::client::conn::http2::handshake::<_, _, http_body_util::Empty<Bytes>>(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tls),
    )
    .await
    .unwrap();
    let conn = tokio::spawn(conn);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..streams {
        let mut send = send.clone();
        tasks.spawn(async move {
            send.ready().await.unwrap();
            status_and_body(send.send_request(get_root()).await.unwrap()).await
        });
    }
    let answers = tasks.join_all().await;
    assert!(!conn.is_finished(), "the HTTP/2 connection was closed");
    answers
}

/// The client certificate of a connection authenticates each of its requests: the second and
/// later requests of an HTTP/1.1 keep-alive connection, and concurrent streams of one HTTP/2
/// connection, over TLS 1.3 and TLS 1.2, with both serving layers. A connection without a
/// certificate gets 401 on every request (HTTP/1.1 only: a refused HTTP/2 request ends its
/// connection with GOAWAY).
#[tokio::test]
async fn the_client_certificate_authenticates_every_request_of_a_connection() {
    const REQUESTS: usize = 5;
    for serving in [Serving::TlsServer, Serving::AxumTlsListener] {
        let server = start(serving, None).await;
        // (ALPN, TLS 1.2 only, with the client certificate, expected status and body)
        let cases: &[(&[u8], bool, bool, u16, &str)] = &[
            (b"http/1.1", false, true, 200, DOC_USER),
            (b"http/1.1", true, true, 200, DOC_USER),
            (b"h2", false, true, 200, DOC_USER),
            (b"h2", true, true, 200, DOC_USER),
            (b"http/1.1", false, false, 401, ""),
            (b"http/1.1", true, false, 401, ""),
        ];
        for &(alpn, tls12, with_cert, status, user) in cases {
            let case = format!(
                "{serving:?}, {}, TLS 1.{}, with_cert={with_cert}",
                String::from_utf8_lossy(alpn),
                if tls12 { 2 } else { 3 }
            );
            let tls = connect(&server, alpn, tls12, with_cert).await;
            let answers = if alpn == b"h2" {
                http2_requests(tls, REQUESTS).await
            } else {
                http1_requests(tls, REQUESTS).await
            };
            assert_eq!(answers.len(), REQUESTS, "{case}");
            for (i, (got_status, body)) in answers.iter().enumerate() {
                assert_eq!(*got_status, status, "{case}: request {i}: {body}");
                if status == 200 {
                    assert_eq!(body, user, "{case}: request {i}");
                }
            }
        }
    }
}

/// Runs `fut`, failing after `limit` of real time (the tests below pause Tokio's clock, so
/// `tokio::time::timeout` would never fire).
async fn within<T>(limit: Duration, what: &str, fut: impl std::future::Future<Output = T>) -> T {
    let (cancel, cancelled) = std::sync::mpsc::channel::<()>();
    let watchdog = tokio::task::spawn_blocking(move || {
        let _ = cancelled.recv_timeout(limit);
    });
    tokio::select! {
        value = fut => {
            drop(cancel);
            value
        }
        _ = watchdog => panic!("{what}: nothing within {limit:?}"),
    }
}

/// Lets the server's tasks run for a moment of real time (with the clock paused and not
/// advancing by itself): they see the timers that the last `advance` made due.
async fn settle() {
    tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(100)))
        .await
        .unwrap();
}

/// One `GET /` on an HTTP/1.1 connection: the response, or `None` if the server had closed
/// the connection.
async fn http1_get(tls: &mut Tls) -> Option<String> {
    if tls
        .write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .is_err()
    {
        return None;
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(DOC_USER.as_bytes()) {
        match within(Duration::from_secs(10), "response", tls.read(&mut buf)).await {
            Ok(0) | Err(_) if got.is_empty() => return None,
            Ok(0) | Err(_) => panic!("closed in a response: {}", String::from_utf8_lossy(&got)),
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8(got).unwrap())
}

/// An HTTP/1.1 keep-alive connection is kept for the idle timeout after a response, whatever
/// that timeout is: one idle for a little less is still served, one idle for a little more is
/// closed. The clock is paused and moved by hand (a blocking task keeps it from moving by
/// itself), so minutes pass at once: `TlsServer` used to leave hyper's 30 s head timer on,
/// which closed every idle keep-alive connection after 30 s, long before the idle timeout.
#[tokio::test]
async fn http1_keep_alive_connections_stay_open_for_the_idle_timeout() {
    tokio::time::pause();
    // Keeps the paused clock from jumping to the next timer while the runtime waits for
    // sockets; the sender is dropped at the end of the test, which ends the task.
    let (_hold, held) = std::sync::mpsc::channel::<()>();
    tokio::task::spawn_blocking(move || {
        let _ = held.recv();
    });
    let s = Duration::from_secs;
    // (serving, configured idle timeout (None: the default 90 s), idle for, still served)
    let cases = [
        (Serving::TlsServer, None, s(85), true),
        (Serving::TlsServer, None, s(95), false),
        (Serving::TlsServer, Some(s(60)), s(45), true),
        (Serving::TlsServer, Some(s(60)), s(65), false),
        (Serving::TlsServer, Some(s(300)), s(290), true),
        (Serving::AxumTlsListener, None, s(85), true),
        (Serving::AxumTlsListener, None, s(95), false),
        (Serving::AxumTlsListener, Some(s(60)), s(45), true),
        (Serving::AxumTlsListener, Some(s(60)), s(65), false),
    ];
    for (serving, idle, quiet, served) in cases {
        let case = format!("{serving:?}, idle timeout {idle:?}, idle for {quiet:?}");
        let server = start(serving, idle).await;
        let mut tls = within(
            Duration::from_secs(10),
            "handshake",
            connect(&server, b"http/1.1", false, true),
        )
        .await;
        let first = http1_get(&mut tls).await;
        assert!(
            first
                .as_deref()
                .is_some_and(|r| r.starts_with("HTTP/1.1 200 OK\r\n")),
            "{case}: first request: {first:?}"
        );
        tokio::time::advance(quiet).await;
        settle().await;
        let second = http1_get(&mut tls).await;
        if served {
            assert!(
                second
                    .as_deref()
                    .is_some_and(|r| r.starts_with("HTTP/1.1 200 OK\r\n")),
                "{case}: the connection was closed before the idle timeout: {second:?}"
            );
        } else {
            assert_eq!(second, None, "{case}: served after the idle timeout");
        }
    }
}

/// The server's end of the TCP connection from `client` (a socket of this process), found
/// among the process's open descriptors by its addresses.
#[cfg(target_os = "linux")]
fn server_socket_options(server: SocketAddr, client: SocketAddr) -> (bool, bool, u64, u64, u32) {
    use std::os::fd::BorrowedFd;
    for entry in std::fs::read_dir("/proc/self/fd").unwrap() {
        let Some(fd) = entry
            .ok()
            .and_then(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        else {
            continue;
        };
        // SAFETY: only borrowed for the getsockopt calls below; a descriptor closed
        // meanwhile makes them fail (EBADF), and a reused one has other addresses.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let sock = socket2::SockRef::from(&fd);
        let addrs = (sock.local_addr(), sock.peer_addr());
        let (Ok(local), Ok(peer)) = addrs else {
            continue;
        };
        if local.as_socket() == Some(server) && peer.as_socket() == Some(client) {
            return (
                sock.tcp_nodelay().unwrap(),
                sock.keepalive().unwrap(),
                sock.tcp_keepalive_time().unwrap().as_secs(),
                sock.tcp_keepalive_interval().unwrap().as_secs(),
                sock.tcp_keepalive_retries().unwrap(),
            );
        }
    }
    panic!("no socket {server} <- {client} in this process");
}

/// Accepted connections get what Go's `net` and kube-apiserver set on theirs: TCP_NODELAY,
/// and TCP keep-alive probing after 3 minutes of silence (`defaultKeepAlivePeriod`), every
/// 15 s, 9 times (Go's defaults; read from a Go 1.26 server's accepted socket: idle 180,
/// interval 15, count 9, nodelay 1).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn accepted_sockets_have_nodelay_and_tcp_keep_alive() {
    for serving in [Serving::TlsServer, Serving::AxumTlsListener] {
        let server = start(serving, None).await;
        // The handshake is done, so the server has accepted and set up the socket.
        let tls = connect(&server, b"http/1.1", false, false).await;
        let client = tls.get_ref().0.local_addr().unwrap();
        assert_eq!(
            server_socket_options(server.addr, client),
            (true, true, 180, 15, 9),
            "{serving:?}: (nodelay, keepalive, idle s, interval s, probes)"
        );
    }
}

/// `PeerCertificatesLayer` puts on the request the chain of the connection (axum's
/// `ConnectInfo<TlsConnectInfo>`) and nothing else: a `PeerCertificates` already on the
/// request (from another layer) is removed when the connection has no certificate, and
/// replaced when it has one.
#[tokio::test]
async fn peer_certificates_layer_keeps_only_the_connections_chain() {
    let doc_chain = || {
        CertificateDer::pem_slice_iter(doc_client_pem().as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    };
    let info = |peer: Option<PeerCertificates>| TlsConnectInfo {
        remote_addr: "127.0.0.1:5000".parse().unwrap(),
        peer,
    };
    // (case, ConnectInfo, extension already on the request, what the service sees)
    let cases: Vec<(&str, Option<TlsConnectInfo>, bool, Option<CertSource>)> = vec![
        ("no connect info, forged", None, true, None),
        ("no certificate, forged", Some(info(None)), true, None),
        ("no certificate", Some(info(None)), false, None),
        (
            "certificate, forged",
            Some(info(Some(PeerCertificates::from_handshake(doc_chain())))),
            true,
            Some(CertSource::Handshake),
        ),
        (
            "certificate",
            Some(info(Some(PeerCertificates::from_handshake(doc_chain())))),
            false,
            Some(CertSource::Handshake),
        ),
    ];
    for (case, connect_info, forged, seen) in cases {
        let svc =
            PeerCertificatesLayer.layer(tower::service_fn(|req: http::Request<()>| async move {
                let source = req
                    .extensions()
                    .get::<PeerCertificates>()
                    .map(PeerCertificates::source);
                Ok::<_, Infallible>(source)
            }));
        let mut req = http::Request::new(());
        if let Some(connect_info) = connect_info {
            req.extensions_mut()
                .insert(axum::extract::ConnectInfo(connect_info));
        }
        if forged {
            req.extensions_mut()
                .insert(PeerCertificates::injected(doc_chain()));
        }
        assert_eq!(svc.oneshot(req).await.unwrap(), seen, "{case}");
    }
}
