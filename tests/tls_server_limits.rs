//! [`TlsServer`]'s protocol bounds, through the real server on 127.0.0.1: a small connection
//! cap with idle TCP connections (no TLS), thousands of front-proxy group header lines over
//! HTTP/1.1 ([`HTTP1_MAX_HEADERS`]), and kube-apiserver's 100 concurrent HTTP/2 streams.

#![cfg(feature = "tls")]

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use kube_authn::chain::ChainBuilder;
use kube_authn::middleware::{Authenticated, AuthenticationLayer};
use kube_authn::request::{FrontProxy, MAX_GROUPS, RequestHeaderConfig};
use kube_authn::tls::pki_types::pem::PemObject;
use kube_authn::tls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use kube_authn::tls::{
    ClientCertPolicy, HTTP1_MAX_HEADERS, HTTP2_MAX_CONCURRENT_STREAMS, TlsServer, server_config,
};
use kube_authn::x509::{doc_ca_pem, doc_client_key_pem, doc_client_pem};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::Layer;

/// A serving configuration for `localhost` (self-signed) that requests client certificates.
fn serving() -> (Arc<rustls::ServerConfig>, CertificateDer<'static>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let server_key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
    let policy = ClientCertPolicy::Request { hints: vec![] };
    let config = server_config(vec![cert.der().clone()], server_key, &policy).unwrap();
    (Arc::new(config), cert.der().clone())
}

/// Serves `app` with `server` on a free 127.0.0.1 port until the sender is used or dropped.
async fn serve<S, B>(
    server: TlsServer,
    app: S,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>)
where
    S: tower::Service<http::Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve(tcp, app, async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// A TLS client connection to `addr` trusting `ca`, offering `alpn`, with the doc client
/// certificate (the front proxy's) when `with_cert`.
async fn tls_connect(
    addr: std::net::SocketAddr,
    ca: &CertificateDer<'static>,
    alpn: &[&[u8]],
    with_cert: bool,
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
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
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
}

#[tokio::test]
async fn a_small_cap_holds_idle_tcp_connections_only_until_the_handshake_timeout() {
    let (config, ca) = serving();
    let app = tower::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
        Ok::<_, Infallible>(http::Response::new(String::from("ok")))
    });
    let server = TlsServer::new(config)
        .max_connections(3)
        .handshake_timeout(Duration::from_millis(600));
    let (addr, _stop) = serve(server, app).await;

    // Three TCP connections that never start TLS take the three slots.
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A TLS client now waits in the backlog: its handshake does not progress...
    let waiting = tokio::spawn(async move {
        let tls = tls_connect(addr, &ca, &[b"http/1.1"], false).await;
        (std::time::Instant::now(), tls)
    });
    // ...until the handshake timeout closes the idle connections and frees their slots. Each
    // idle connection is read by its own task, which notes when it saw the server close it.
    let closed: Vec<_> = idle
        .into_iter()
        .map(|mut conn| {
            tokio::spawn(async move {
                let mut buf = [0u8; 8];
                let read = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf))
                    .await
                    .expect("the server closes a connection that never starts its handshake");
                assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
                std::time::Instant::now()
            })
        })
        .collect();
    let mut first_closed = None::<std::time::Instant>;
    for task in closed {
        let at = task.await.unwrap();
        first_closed = Some(first_closed.map_or(at, |first| first.min(at)));
    }
    let (connected, tls) = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("a slot came back")
        .unwrap();
    // The server closes an idle connection before it accepts the waiting client, so the
    // close is seen (its reader task woken) no later than the client's handshake completes,
    // however the scheduler stalls: no duration is assumed.
    let first_closed = first_closed.unwrap();
    assert!(
        connected >= first_closed,
        "the handshake completed {:?} before any idle connection was closed",
        first_closed - connected
    );
    // And it is served.
    let mut tls = tls.unwrap();
    tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut resp = Vec::new();
    // (The answer is all that matters, not how the TLS session ends.)
    let _ = tls.read_to_end(&mut resp).await;
    let resp = String::from_utf8_lossy(&resp);
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.ends_with("ok"), "{resp}");
}

/// A server that authenticates with the front proxy (trusting the doc CA) and answers with
/// the user's name and groups, one per line.
async fn front_proxy_server() -> (
    std::net::SocketAddr,
    CertificateDer<'static>,
    tokio::sync::oneshot::Sender<()>,
) {
    let (config, ca) = serving();
    let proxy = FrontProxy::new(RequestHeaderConfig {
        client_ca_pem: Some(doc_ca_pem().into()),
        ..RequestHeaderConfig::standard()
    })
    .unwrap();
    let chain = ChainBuilder::new().request(proxy).build();
    let app = AuthenticationLayer::new(chain).layer(tower::service_fn(
        |req: http::Request<hyper::body::Incoming>| async move {
            let who = req.extensions().get::<Authenticated>().unwrap();
            let mut body = who.user.name().to_owned();
            for g in who.user.groups() {
                body.push('\n');
                body.push_str(g);
            }
            Ok::<_, Infallible>(http::Response::new(body))
        },
    ));
    let (addr, stop) = serve(TlsServer::new(config), app).await;
    (addr, ca, stop)
}

/// Sends an HTTP/1.1 request from the front proxy with `groups` `X-Remote-Group` lines and
/// `filler` other lines, besides `host`, `connection` and `x-remote-user`; returns the status
/// code and body.
async fn http1_with_groups(
    addr: std::net::SocketAddr,
    ca: &CertificateDer<'static>,
    groups: usize,
    filler: usize,
) -> (u16, String) {
    let mut req = String::from(
        "GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\nx-remote-user: bob\r\n",
    );
    for i in 0..groups {
        req.push_str(&format!("x-remote-group: g{i}\r\n"));
    }
    for i in 0..filler {
        req.push_str(&format!("x-filler-{i}: 1\r\n"));
    }
    req.push_str("\r\n");
    let mut tls = tls_connect(addr, ca, &[b"http/1.1"], true).await.unwrap();
    // The server may answer 431 and close before it has read everything.
    let _ = tls.write_all(req.as_bytes()).await;
    let mut resp = Vec::new();
    // The server may close once it has answered 431, before reading the rest.
    let _ = tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut resp))
        .await
        .expect("an answer");
    let resp = String::from_utf8(resp).unwrap();
    let status = resp
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {resp:?}"));
    let body = resp
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_owned());
    (status, body)
}

#[tokio::test]
async fn http1_requests_with_a_thousand_group_lines_reach_the_front_proxy() {
    let (addr, ca, _stop) = front_proxy_server().await;
    let (status, body) = http1_with_groups(addr, &ca, 1000, 0).await;
    assert_eq!(status, 200, "{body}");
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("bob"));
    let groups: Vec<&str> = lines.collect();
    let expected: Vec<String> = (0..1000).map(|i| format!("g{i}")).collect();
    // The front proxy's groups, in order, then the authenticated group.
    assert_eq!(groups[..1000], expected[..]);
    assert_eq!(groups[1000..], ["system:authenticated"]);
}

#[tokio::test]
async fn http1_requests_at_and_beyond_the_header_line_limit() {
    let (addr, ca, _stop) = front_proxy_server().await;
    // Every group the front proxy accepts, plus other lines up to the limit: served.
    let filler = HTTP1_MAX_HEADERS - 3 - MAX_GROUPS;
    let (status, body) = http1_with_groups(addr, &ca, MAX_GROUPS, filler).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body.lines().count(),
        1 + MAX_GROUPS + 1,
        "name, groups, system:authenticated"
    );
    // One line more: refused by the HTTP/1.1 parser, before authentication.
    let (status, _) = http1_with_groups(addr, &ca, MAX_GROUPS, filler + 1).await;
    assert_eq!(status, 431);
    // Without the filler, that many group lines is the front proxy's own refusal.
    let (status, _) = http1_with_groups(addr, &ca, MAX_GROUPS + 1, 0).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn http2_connections_allow_100_concurrent_streams() {
    let (config, ca) = serving();
    let in_progress = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let app = {
        let (in_progress, peak, release) = (in_progress.clone(), peak.clone(), release.clone());
        tower::service_fn(move |_req: http::Request<hyper::body::Incoming>| {
            let (in_progress, peak, release) = (in_progress.clone(), peak.clone(), release.clone());
            async move {
                let now = in_progress.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                release.acquire().await.unwrap().forget();
                in_progress.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, Infallible>(http::Response::new(String::from("ok")))
            }
        })
    };
    let (addr, _stop) = serve(TlsServer::new(config), app).await;

    // The server's SETTINGS, as the h2 client sees them.
    let tls = tls_connect(addr, &ca, &[b"h2"], false).await.unwrap();
    let (send, mut conn) = h2::client::handshake(tls).await.unwrap();
    let setting = std::future::poll_fn(|cx| {
        // Drive the connection until the server's SETTINGS have arrived.
        let _ = conn.poll_unpin(cx);
        match conn.max_concurrent_send_streams() {
            n if n != usize::MAX => std::task::Poll::Ready(n),
            _ => std::task::Poll::Pending,
        }
    });
    let setting = tokio::time::timeout(Duration::from_secs(5), setting)
        .await
        .expect("the server's SETTINGS");
    assert_eq!(setting, HTTP2_MAX_CONCURRENT_STREAMS as usize);
    drop(send);

    // And the server enforces it: 150 requests on one connection, at most 100 at once.
    let tls = tls_connect(addr, &ca, &[b"h2"], false).await.unwrap();
    let (send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tls),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let mut requests = tokio::task::JoinSet::new();
    for _ in 0..150 {
        let mut send = send.clone();
        requests.spawn(async move {
            send.ready().await?;
            let req = http::Request::get("https://localhost/")
                .body(http_body_util::Empty::<Bytes>::new())
                .unwrap();
            send.send_request(req).await.map(|r| r.status())
        });
    }
    // Wait until the server has all it will take at once.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while in_progress.load(Ordering::SeqCst) < 100 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(in_progress.load(Ordering::SeqCst), 100);
    release.add_permits(150);
    while let Some(status) = requests.join_next().await {
        assert_eq!(status.unwrap().unwrap(), http::StatusCode::OK);
    }
    assert_eq!(peak.load(Ordering::SeqCst), 100);
}

use futures_util_shim::PollUnpin as _;

/// `poll_unpin` for the h2 connection without a futures dependency.
mod futures_util_shim {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    pub trait PollUnpin: Future + Unpin {
        fn poll_unpin(&mut self, cx: &mut Context<'_>) -> Poll<Self::Output> {
            Pin::new(self).poll(cx)
        }
    }

    impl<F: Future + Unpin> PollUnpin for F {}
}
