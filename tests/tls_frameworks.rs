//! Client certificates through the frameworks' own serving paths: `axum::serve` with
//! [`TlsListener`] + [`PeerCertificatesLayer`], and a tonic `Routes` (gRPC) served by
//! [`TlsServer`] behind `AuthenticationLayer`. Real TLS on 127.0.0.1, real clients (reqwest,
//! curl), certificates from the openssl CLI.

mod tls_support;
#[path = "x509_support/mod.rs"]
mod x509_support;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tls_support::serve_on_free_port;

use axum::Router;
use axum::routing::get;
use bytes::Bytes;
use kube_authn::authenticator::{Context, Response as AuthResponse, SyncTokenFn};
use kube_authn::chain::ChainBuilder;
use kube_authn::middleware::{Authenticated, AuthenticationLayer, GrpcUnauthenticated};
use kube_authn::tls::axum::{PeerCertificatesLayer, TlsConnectInfo, TlsListener};
use kube_authn::tls::pki_types::PrivateKeyDer;
use kube_authn::tls::pki_types::pem::PemObject;
use kube_authn::tls::{ClientCertPolicy, TlsServer, server_config};
use kube_authn::user::UserInfo;
use kube_authn::x509::{CaBundle, X509Authenticator};
use tower::Layer;
use x509_support::*;

struct Setup {
    pki: Pki,
    client_ca: Issued,
    alice: Issued,
    server_ca: Issued,
    config: Arc<rustls::ServerConfig>,
}

fn setup() -> Setup {
    let pki = Pki::new();
    let client_ca = pki.ca("client-ca", Key::P256);
    let alice = pki.leaf("alice", "/O=dev/CN=alice", &client_ca);
    let server_ca = pki.ca("server-ca", Key::P256);
    let serving = pki.serving(&server_ca);

    let bundle = Arc::new(CaBundle::from_der(vec![client_ca.der.clone()]).unwrap());
    let key = PrivateKeyDer::from_pem_file(&serving.key).unwrap();
    let config = server_config(
        vec![serving.der.clone()],
        key,
        &ClientCertPolicy::Request {
            hints: vec![bundle],
        },
    )
    .unwrap();
    Setup {
        pki,
        client_ca,
        alice,
        server_ca,
        config: Arc::new(config),
    }
}

/// Client certificates, or the bearer token `tok` for `bob`.
fn chain(s: &Setup) -> kube_authn::chain::Chain {
    ChainBuilder::new()
        .request(X509Authenticator::new(
            CaBundle::from_der(vec![s.client_ca.der.clone()]).unwrap(),
        ))
        .token(SyncTokenFn::new(|t: &str, _: &Context| {
            Ok((t == "tok").then(|| AuthResponse::new(Arc::new(UserInfo::new("bob")))))
        }))
        .build()
}

fn client(s: &Setup, addr: std::net::SocketAddr, with_cert: bool) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&s.server_ca.cert).unwrap()).unwrap();
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(ca)
        .resolve("localhost", addr)
        .timeout(Duration::from_secs(10));
    if with_cert {
        b = b.identity(reqwest::Identity::from_pem(&identity(&[&s.alice], &s.alice)).unwrap());
    }
    b.build().unwrap()
}

#[tokio::test]
async fn axum_serve_with_tls_listener_authenticates_client_certificates() {
    let s = setup();
    let app = Router::new()
        .route(
            "/",
            get(|who: Authenticated| async move {
                format!(
                    "{} {:?}",
                    who.user.name(),
                    who.user.groups().collect::<Vec<_>>()
                )
            }),
        )
        .layer(AuthenticationLayer::new(chain(&s)))
        .layer(PeerCertificatesLayer);
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let listener =
        TlsListener::new(tcp, s.config.clone()).handshake_timeout(Duration::from_secs(5));
    let server = tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<TlsConnectInfo>(),
        )
        .await
    });

    // A client that opens a TCP connection and never starts its handshake must not hold up
    // anyone else (handshakes run concurrently).
    let _stalled = tokio::net::TcpStream::connect(addr).await.unwrap();

    let url = format!("https://localhost:{}/", addr.port());
    type Case = (&'static str, bool, Option<&'static str>, u16, &'static str);
    let cases: [Case; 4] = [
        (
            "client certificate",
            true,
            None,
            200,
            "alice [\"dev\", \"system:authenticated\"]",
        ),
        (
            "bearer token, no certificate",
            false,
            Some("tok"),
            200,
            "bob [\"system:authenticated\"]",
        ),
        ("nothing", false, None, 401, "Unauthorized"),
        (
            "certificate wins over a bad token",
            true,
            Some("bad"),
            200,
            "alice",
        ),
    ];
    for (name, cert, token, status, body) in cases {
        let mut req = client(&s, addr, cert).get(&url);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = tokio::time::timeout(Duration::from_secs(5), req.send())
            .await
            .unwrap_or_else(|_| panic!("{name}: timed out (handshakes serialised?)"))
            .unwrap();
        assert_eq!(resp.status().as_u16(), status, "{name}");
        let text = resp.text().await.unwrap();
        assert!(text.contains(body), "{name}: {text}");
    }
    server.abort();
}

/// A minimal gRPC service for the tonic test: `/kube_authn.test.WhoAmI/Get` answers the
/// caller's user name as one raw gRPC message (no protobuf), with `grpc-status: 0`.
#[derive(Clone)]
struct WhoAmI;

impl tonic::server::NamedService for WhoAmI {
    const NAME: &'static str = "kube_authn.test.WhoAmI";
}

impl tower::Service<http::Request<tonic::body::Body>> for WhoAmI {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Infallible>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let name = Authenticated::from_request(&req)
            .map(|a| a.user.name().to_owned())
            .unwrap_or_default();
        Box::pin(async move {
            // Read the request message first, as a real gRPC server does.
            let _ = http_body_util::BodyExt::collect(req.into_body()).await;
            Ok(reply(&name))
        })
    }
}

fn reply(name: &str) -> http::Response<tonic::body::Body> {
    let mut frame = vec![0u8];
    frame.extend((name.len() as u32).to_be_bytes());
    frame.extend(name.as_bytes());
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    let body = GrpcReply {
        data: Some(Bytes::from(frame)),
        trailers: Some(trailers),
    };
    http::Response::builder()
        .header("content-type", "application/grpc")
        .body(tonic::body::Body::new(body))
        .unwrap()
}

/// One data frame, then the trailers.
struct GrpcReply {
    data: Option<Bytes>,
    trailers: Option<http::HeaderMap>,
}

impl http_body::Body for GrpcReply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let frame = match self.data.take() {
            Some(data) => Some(http_body::Frame::data(data)),
            None => self.trailers.take().map(http_body::Frame::trailers),
        };
        std::task::Poll::Ready(frame.map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.trailers.is_none()
    }
}

#[tokio::test]
async fn tonic_routes_behind_the_layer_on_tls_server_see_the_certificate_user() {
    let s = setup();
    let routes = tonic::service::Routes::new(WhoAmI);
    let svc = AuthenticationLayer::builder(chain(&s))
        .on_failure(GrpcUnauthenticated::default())
        .build()
        .layer(routes);
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let config = s.config.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        TlsServer::new(config)
            .serve(tcp, svc, async {
                let _ = stopped.await;
            })
            .await
    });
    let target = Target {
        addr,
        server_ca: s.server_ca.cert.clone(),
    };
    let grpc = || {
        let cert = true;
        let target = target.clone();
        let (c, k) = (s.alice.cert.clone(), s.alice.key.clone());
        let (head_file, body_file) = (
            s.pki.path(&format!("grpc-{cert}.head")),
            s.pki.path(&format!("grpc-{cert}.body")),
        );
        tokio::task::spawn_blocking(move || {
            let mut cmd = std::process::Command::new("curl");
            cmd.args(["-sS", "--http2", "--max-time", "10", "-D"])
                .arg(&head_file)
                .arg("-o")
                .arg(&body_file)
                .arg("--cacert")
                .arg(&target.server_ca)
                .arg("--resolve")
                .arg(format!("localhost:{}:127.0.0.1", target.addr.port()))
                .args(["-H", "content-type: application/grpc", "-H", "te: trailers"])
                .args(["--data-binary", "@-"]);
            if cert {
                cmd.arg("--cert").arg(&c).arg("--key").arg(&k);
            }
            cmd.arg(target.url("/kube_authn.test.WhoAmI/Get"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped());
            let mut child = cmd.spawn().expect("curl is required for this test");
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(&[0, 0, 0, 0, 0])
                .unwrap();
            assert!(child.wait().unwrap().success(), "curl failed");
            (
                std::fs::read_to_string(&head_file).unwrap(),
                std::fs::read(&body_file).unwrap_or_default(),
            )
        })
    };
    // Headers and trailers (curl writes both to the header file), then the body.
    let (head, body) = grpc().await.unwrap();
    assert!(head.starts_with("HTTP/2 200"), "{head}");
    assert!(head.contains("grpc-status: 0"), "{head}");
    // One gRPC message: flag 0, length 5, "alice".
    assert_eq!(body, b"\0\0\0\0\x05alice");
    // Refused: a trailers-only gRPC answer. (reqwest here: the server answers before reading
    // the request body and resets the stream with NO_ERROR, which curl 7.88 reports as a
    // failure.)
    let resp = client(&s, addr, false)
        .post(target.url("/kube_authn.test.WhoAmI/Get"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(vec![0u8; 5])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.version(), http::Version::HTTP_2);
    assert_eq!(resp.headers()["grpc-status"], "16");
    assert!(resp.bytes().await.unwrap().is_empty());
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// A TLS client that completes the handshake with the test server (trusting its CA) and
/// then sends nothing.
async fn silent_client(
    s: &Setup,
    addr: std::net::SocketAddr,
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    tls_client(s, addr, &[]).await
}

/// A TLS connection to the test server (trusting its CA), offering `alpn`.
async fn tls_client(
    s: &Setup,
    addr: std::net::SocketAddr,
    alpn: &[&[u8]],
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let config = tls_support::client_config(&s.server_ca.der, alpn, None);
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(
            rustls::pki_types::ServerName::try_from("localhost").unwrap(),
            tcp,
        )
        .await
}

/// Starts a [`TlsServer`] answering "ok" to everything, configured by `f`.
async fn start_plain_server(
    s: &Setup,
    f: impl FnOnce(TlsServer) -> TlsServer,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = tower::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
        Ok::<_, Infallible>(http::Response::new(String::from("ok")))
    });
    serve_on_free_port(f(TlsServer::new(s.config.clone())), app).await
}

#[tokio::test]
async fn tls_server_closes_connections_that_send_no_request() {
    use tokio::io::AsyncReadExt;
    let s = setup();
    let (addr, _stop) =
        start_plain_server(&s, |t| t.first_request_timeout(Duration::from_millis(300))).await;
    // Handshake done, then silence: the server closes the connection after the timeout
    // (without it, the socket stays open forever).
    let mut quiet = silent_client(&s, addr).await.unwrap();
    let started = std::time::Instant::now();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(5), quiet.read(&mut buf))
        .await
        .expect("the server should close a silent connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "closed too early"
    );
    // A client that does send a request in time is served.
    let resp = client(&s, addr, false)
        .get(format!("https://localhost:{}/", addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.text().await.unwrap(), "ok");
}

#[tokio::test]
async fn tls_server_serves_at_most_max_connections() {
    let s = setup();
    let (addr, _stop) = start_plain_server(&s, |t| t.max_connections(1)).await;
    let first = silent_client(&s, addr).await.unwrap();
    // The only slot is taken: the next client is not accepted, so its handshake stalls.
    let second = tokio::time::timeout(Duration::from_millis(500), silent_client(&s, addr)).await;
    assert!(second.is_err(), "a second connection was served");
    // Once the first closes, a new client gets through.
    drop(first);
    let third = tokio::time::timeout(Duration::from_secs(5), silent_client(&s, addr)).await;
    assert!(matches!(third, Ok(Ok(_))), "{third:?}");
}

/// A service that answers every request with `101 Switching Protocols` (WebSocket) and holds
/// the upgraded stream open until the client closes it.
fn upgrading_app() -> impl tower::Service<
    http::Request<hyper::body::Incoming>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl std::future::Future<Output = Result<http::Response<String>, Infallible>> + Send,
> + Clone
+ Send
+ 'static {
    tower::service_fn(|mut req: http::Request<hyper::body::Incoming>| async move {
        use tokio::io::AsyncReadExt;
        let upgrade = hyper::upgrade::on(&mut req);
        tokio::spawn(async move {
            if let Ok(upgraded) = upgrade.await {
                let mut io = hyper_util::rt::TokioIo::new(upgraded);
                let mut buf = [0u8; 64];
                while matches!(io.read(&mut buf).await, Ok(n) if n > 0) {}
            }
        });
        let mut res = http::Response::new(String::new());
        *res.status_mut() = http::StatusCode::SWITCHING_PROTOCOLS;
        res.headers_mut()
            .insert(http::header::CONNECTION, "upgrade".parse().unwrap());
        res.headers_mut()
            .insert(http::header::UPGRADE, "websocket".parse().unwrap());
        Ok::<_, Infallible>(res)
    })
}

/// A TLS connection upgraded to WebSocket (the `101` read).
async fn upgraded_client(
    s: &Setup,
    addr: std::net::SocketAddr,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut upgraded = tls_client(s, addr, &[b"http/1.1"]).await.unwrap();
    upgraded
        .write_all(
            b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
        )
        .await
        .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), upgraded.read(&mut byte))
            .await
            .expect("the 101 arrives")
            .unwrap();
        assert_eq!(
            n,
            1,
            "closed before the 101: {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{:?}",
        String::from_utf8_lossy(&head)
    );
    upgraded
}

/// An upgraded connection (WebSocket, SPDY: exec, attach, port-forward) keeps its connection
/// slot while the upgraded stream is open: hyper hands the stream over and ends the
/// connection's task, which must not give the slot back.
#[tokio::test]
async fn tls_server_upgraded_connections_keep_their_slot() {
    let s = setup();
    let (addr, _stop) = serve_on_free_port(
        TlsServer::new(s.config.clone()).max_connections(1),
        upgrading_app(),
    )
    .await;
    let upgraded = upgraded_client(&s, addr).await;
    // The upgraded stream holds the only slot: the next client is not accepted.
    let second = tokio::time::timeout(Duration::from_millis(500), silent_client(&s, addr)).await;
    assert!(
        second.is_err(),
        "a second connection was served beside an upgraded one"
    );
    // Closing the upgraded stream gives the slot back.
    drop(upgraded);
    let third = tokio::time::timeout(Duration::from_secs(5), silent_client(&s, addr)).await;
    assert!(matches!(third, Ok(Ok(_))), "{third:?}");
}

/// Shutdown waits for connections, not for upgraded streams (as Go's `Shutdown` does not wait
/// for hijacked connections): with a WebSocket open it returns at once, not after the grace.
#[tokio::test]
async fn tls_server_shutdown_does_not_wait_for_upgraded_streams() {
    let s = setup();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = TlsServer::new(s.config.clone()).shutdown_grace(Duration::from_secs(20));
    let serving = tokio::spawn(async move {
        server
            .serve(tcp, upgrading_app(), async {
                let _ = stopped.await;
            })
            .await
    });
    let upgraded = upgraded_client(&s, addr).await;
    stop.send(()).unwrap();
    let done = tokio::time::timeout(Duration::from_secs(5), serving).await;
    assert!(
        matches!(done, Ok(Ok(Ok(())))),
        "shutdown waited for the upgraded stream: {done:?}"
    );
    drop(upgraded);
}

/// A response body that sends `a`, waits, then sends `b`: a response still in progress
/// (a stream) after the server's idle timeout.
struct SlowBody {
    wait: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    step: u8,
}

impl http_body::Body for SlowBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        use std::task::Poll;
        match self.step {
            0 => {
                self.step = 1;
                Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from("a")))))
            }
            1 => {
                if let Some(wait) = self.wait.as_mut() {
                    std::task::ready!(wait.as_mut().poll(cx));
                }
                self.step = 2;
                Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from("b")))))
            }
            _ => Poll::Ready(None),
        }
    }
}

/// Starts a [`TlsServer`] with a 400 ms idle timeout: `/` answers at once, `/slow` streams
/// for 1.2 s (three idle timeouts).
async fn start_idle_server(s: &Setup) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = TlsServer::new(s.config.clone()).idle_timeout(Duration::from_millis(400));
    let app = tower::service_fn(|req: http::Request<hyper::body::Incoming>| async move {
        let wait = (req.uri().path() == "/slow")
            .then(|| Box::pin(tokio::time::sleep(Duration::from_millis(1200))));
        let step = if wait.is_some() { 0 } else { 1 };
        Ok::<_, Infallible>(http::Response::new(SlowBody { wait, step }))
    });
    serve_on_free_port(server, app).await
}

/// An HTTP/2 client connection (hyper) to `addr` over TLS with ALPN `h2`: the request sender
/// and the connection's task (finished when the server closes the connection).
async fn h2_connect(
    s: &Setup,
    addr: std::net::SocketAddr,
) -> (
    hyper::client::conn::http2::SendRequest<http_body_util::Empty<Bytes>>,
    tokio::task::JoinHandle<hyper::Result<()>>,
) {
    let tls = tls_client(s, addr, &[b"h2"]).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tls),
    )
    .await
    .unwrap();
    (send, tokio::spawn(conn))
}

/// `GET https://localhost<path>` with an empty body.
fn h2_get(path: &str) -> http::Request<http_body_util::Empty<Bytes>> {
    http::Request::get(format!("https://localhost{path}"))
        .body(http_body_util::Empty::<Bytes>::new())
        .unwrap()
}

#[tokio::test]
async fn tls_server_closes_idle_http2_connections_but_not_busy_ones() {
    use http_body_util::BodyExt;
    let s = setup();
    let (addr, _stop) = start_idle_server(&s).await;
    let (mut send, conn) = h2_connect(&s, addr).await;
    let get = h2_get;
    // A response that streams for three idle timeouts keeps its connection: no GOAWAY
    // meanwhile, so a new request on the same connection right after it is served.
    let slow = send.send_request(get("/slow")).await.unwrap();
    let body = slow.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "ab");
    assert!(
        !conn.is_finished(),
        "closed while a response was in progress"
    );
    send.ready()
        .await
        .expect("GOAWAY during a response in progress");
    let quick = send.send_request(get("/")).await.unwrap();
    assert_eq!(quick.into_body().collect().await.unwrap().to_bytes(), "b");
    // Then nothing: the server closes the connection (GOAWAY) after the idle timeout.
    let idle_since = std::time::Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(5), conn).await;
    assert!(matches!(closed, Ok(Ok(Ok(())))), "{closed:?}");
    let waited = idle_since.elapsed();
    assert!(
        waited >= Duration::from_millis(350),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn tls_server_closes_idle_http1_keep_alive_connections() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = setup();
    let (addr, _stop) = start_idle_server(&s).await;
    let mut tls = tls_client(&s, addr, &[b"http/1.1"]).await.unwrap();
    tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    // The response (chunked: its body is a stream), then the connection stays open for the
    // next request...
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"0\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), tls.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(
            n > 0,
            "closed before the response: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    assert!(
        got.starts_with(b"HTTP/1.1 200 OK\r\n"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // ...until the idle timeout, when the server closes it.
    let idle_since = std::time::Instant::now();
    let read = tokio::time::timeout(Duration::from_secs(5), tls.read(&mut buf))
        .await
        .expect("the server should close an idle keep-alive connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    let waited = idle_since.elapsed();
    assert!(
        waited >= Duration::from_millis(350),
        "closed after {waited:?}"
    );
}

/// A response marked `CloseConnection` (what the middleware does for a refused or anonymous
/// HTTP/2 request) makes the server send GOAWAY, but, as in Go's HTTP/2 server, streams
/// already open run to completion, however long they take: here a response that streams for
/// longer than the 1 s close deadline, on the same connection, still arrives whole. The
/// connection closes once it is done.
#[tokio::test]
async fn a_goaway_lets_open_http2_streams_finish() {
    use http_body_util::BodyExt;
    let s = setup();
    let app = tower::service_fn(|req: http::Request<hyper::body::Incoming>| async move {
        let slow = req.uri().path() == "/slow";
        let wait = slow.then(|| Box::pin(tokio::time::sleep(Duration::from_millis(6500))));
        let mut res = http::Response::new(SlowBody {
            wait,
            step: if slow { 0 } else { 1 },
        });
        if req.uri().path() == "/close" {
            res.extensions_mut()
                .insert(kube_authn::middleware::CloseConnection);
        }
        Ok::<_, Infallible>(res)
    });
    let (addr, _stop) = serve_on_free_port(TlsServer::new(s.config.clone()), app).await;
    let (mut send, conn) = h2_connect(&s, addr).await;
    let get = h2_get;
    let slow = send.send_request(get("/slow")).await.unwrap();
    let close = send.send_request(get("/close")).await.unwrap();
    assert_eq!(close.into_body().collect().await.unwrap().to_bytes(), "b");
    let body = tokio::time::timeout(Duration::from_secs(15), slow.into_body().collect())
        .await
        .expect("the open stream never finished")
        .expect("the open stream was cut off after the GOAWAY");
    assert_eq!(body.to_bytes(), "ab");
    // Then the connection closes (within the close deadline of its last stream ending).
    let closed = tokio::time::timeout(Duration::from_secs(10), conn).await;
    assert!(closed.is_ok(), "the connection stayed open");
}

#[tokio::test]
async fn tls_server_drops_an_http2_peer_that_never_acknowledges_goaway() {
    // A hand-written HTTP/2 client: the preface, empty SETTINGS, one GET (HPACK: `:method
    // GET`, `:scheme https`, `:path /` from the static table, `:authority localhost`), then
    // it only reads: it never acknowledges the server's SETTINGS, nor the PING that follows
    // the idle timeout's GOAWAY (hyper waits for that PING's ack to send the final GOAWAY).
    // The server must drop it 1 s (Go's goAwayTimeout) after the GOAWAY, not keep it.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = setup();
    let (addr, _stop) = start_idle_server(&s).await;
    let mut tls = tls_client(&s, addr, &[b"h2"]).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend_from_slice(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]); // SETTINGS, empty
    let block = [&[0x82, 0x87, 0x84, 0x41, 9][..], b"localhost"].concat();
    out.extend_from_slice(&[0, 0, block.len() as u8, 0x1, 0x5, 0, 0, 0, 1]); // HEADERS
    out.extend_from_slice(&block);
    tls.write_all(&out).await.unwrap();
    let sent = std::time::Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            match tls.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the connection was kept open");
    let waited = sent.elapsed();
    // Idle timeout (0.4 s), then 1 s after the GOAWAY.
    assert!(waited >= Duration::from_secs(1), "dropped after {waited:?}");
    // Frames received: the response (HEADERS on stream 1), then GOAWAY (type 7).
    let mut types = Vec::new();
    let mut at = 0;
    while at + 9 <= got.len() {
        let len =
            usize::from(got[at]) << 16 | usize::from(got[at + 1]) << 8 | usize::from(got[at + 2]);
        types.push(got[at + 3]);
        at += 9 + len;
    }
    assert!(types.contains(&0x1), "no response: frame types {types:?}");
    assert!(types.contains(&0x7), "no GOAWAY: frame types {types:?}");
}

#[tokio::test]
async fn axum_tls_listener_serves_at_most_max_connections() {
    let s = setup();
    let app = Router::new().route("/", get(|| async { "ok" }));
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let listener = TlsListener::new(tcp, s.config.clone()).max_connections(1);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let first = silent_client(&s, addr).await.unwrap();
    // The only slot is taken: the next client is not accepted, so its handshake stalls.
    let second = tokio::time::timeout(Duration::from_millis(500), silent_client(&s, addr)).await;
    assert!(second.is_err(), "a second connection was served");
    // Once the first closes (axum notices at its next read), a new client gets through and
    // is served.
    drop(first);
    let third = tokio::time::timeout(Duration::from_secs(5), silent_client(&s, addr)).await;
    assert!(matches!(third, Ok(Ok(_))), "{third:?}");
    drop(third);
    let resp = tokio::time::timeout(
        Duration::from_secs(5),
        client(&s, addr, false)
            .get(format!("https://localhost:{}/", addr.port()))
            .send(),
    )
    .await
    .expect("a slot came back")
    .unwrap();
    assert_eq!(resp.text().await.unwrap(), "ok");
}

/// `TlsListener`'s first-request deadline: a client that completes its handshake and then
/// sends nothing loses its connection, and with it the only slot, so the next client is
/// served soon after (without the deadline the silent client held the slot forever).
#[tokio::test]
async fn axum_tls_listener_closes_connections_that_send_no_request() {
    use tokio::io::AsyncReadExt;
    let s = setup();
    let app = Router::new().route("/", get(|| async { "ok" }));
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let listener = TlsListener::new(tcp, s.config.clone())
        .max_connections(1)
        .first_request_timeout(Duration::from_millis(300));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut quiet = silent_client(&s, addr).await.unwrap();
    let started = std::time::Instant::now();
    let resp = tokio::time::timeout(
        Duration::from_secs(2),
        client(&s, addr, false)
            .get(format!("https://localhost:{}/", addr.port()))
            .send(),
    )
    .await
    .expect("the silent client still holds the only slot")
    .unwrap();
    assert_eq!(resp.text().await.unwrap(), "ok");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "served before the silent client's deadline: {:?}",
        started.elapsed()
    );
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(1), quiet.read(&mut buf))
        .await
        .expect("the silent connection is still open");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

/// A response body that sends `n` chunks `every` apart (a stream that writes more often than
/// the idle timeout).
struct TickingBody {
    ticks: tokio::time::Interval,
    left: usize,
}

impl http_body::Body for TickingBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        if self.left == 0 {
            return std::task::Poll::Ready(None);
        }
        std::task::ready!(self.ticks.poll_tick(cx));
        self.left -= 1;
        std::task::Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from("t")))))
    }
}

/// Reads one HTTP/1.1 response from `tls`: until `end`, or fails if the connection closes.
async fn read_response(
    tls: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    end: &[u8],
) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(end) {
        let n = tokio::time::timeout(Duration::from_secs(5), tls.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(
            n > 0,
            "closed before the response ended: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    got
}

/// `TlsListener`'s idle deadline: a keep-alive connection whose client sends requests more
/// often than the idle timeout, or that streams a response for several idle timeouts, keeps
/// its connection; one that then goes quiet is closed after the idle timeout.
#[tokio::test]
async fn axum_tls_listener_keeps_busy_connections_and_closes_idle_ones() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = setup();
    let app = Router::new().route("/", get(|| async { "ok" })).route(
        "/stream",
        get(|| async {
            // 8 chunks 150 ms apart: 1.2 s, three idle timeouts.
            axum::body::Body::new(TickingBody {
                ticks: tokio::time::interval(Duration::from_millis(150)),
                left: 8,
            })
        }),
    );
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let listener = TlsListener::new(tcp, s.config.clone())
        .max_connections(1)
        .first_request_timeout(Duration::from_millis(300))
        .idle_timeout(Duration::from_millis(400));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut tls = tls_client(&s, addr, &[b"http/1.1"]).await.unwrap();
    // A request every 250 ms for 2 s (five idle timeouts), all on the one connection.
    for _ in 0..8 {
        tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n")
            .await
            .unwrap();
        let got = read_response(&mut tls, b"\r\n\r\nok").await;
        assert!(got.starts_with(b"HTTP/1.1 200 OK\r\n"), "{got:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // A response that streams for three idle timeouts arrives whole.
    tls.write_all(b"GET /stream HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    let got = read_response(&mut tls, b"0\r\n\r\n").await;
    let chunks = got.windows(5).filter(|w| w == b"\r\nt\r\n").count();
    assert_eq!(chunks, 8, "{:?}", String::from_utf8_lossy(&got));
    // Then silence: the connection is closed after the idle timeout.
    let idle_since = std::time::Instant::now();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(5), tls.read(&mut buf))
        .await
        .expect("the server should close an idle connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    let waited = idle_since.elapsed();
    assert!(
        waited >= Duration::from_millis(350),
        "closed after {waited:?}"
    );
}

/// `TlsListener::dynamic`: the acceptable client CAs the handshakes name follow a reload of
/// the client CA file (here `reload_now`, which a watch task calls on a change), and a client
/// certificate from the new CA authenticates through `axum::serve`.
#[tokio::test]
async fn axum_tls_listener_dynamic_names_the_reloaded_client_ca() {
    let s = setup();
    let second_ca = s.pki.ca("second-client-ca", Key::P256);
    let carol = s.pki.leaf("carol", "/O=ops/CN=carol", &second_ca);
    let serving = s.pki.serving(&s.server_ca);
    let ca_file = s.pki.dir.path().join("client-ca-bundle.pem");
    std::fs::write(&ca_file, s.client_ca.pem()).unwrap();

    let x509 = X509Authenticator::from_ca_file(&ca_file).unwrap();
    let (serving_der, serving_key) = (serving.der.clone(), serving.key.clone());
    let dynamic = kube_authn::tls::DynamicServerConfig::new(vec![Arc::new(x509.clone())], {
        move |policy| {
            let key = PrivateKeyDer::from_pem_file(&serving_key).unwrap();
            server_config(vec![serving_der.clone()], key, policy)
        }
    })
    .unwrap();
    let app = Router::new()
        .route(
            "/",
            get(|who: Authenticated| async move { who.user.name().to_owned() }),
        )
        .layer(AuthenticationLayer::new(
            ChainBuilder::new().request(x509.clone()).build(),
        ))
        .layer(PeerCertificatesLayer);
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let listener = TlsListener::dynamic(tcp, Arc::new(dynamic));
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<TlsConnectInfo>(),
        )
        .await
    });
    let roots = || {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(s.server_ca.der.clone()).unwrap();
        roots
    };
    for tls12 in [false, true] {
        let names = tls_support::offered_ca_names(addr, roots(), "localhost", tls12).await;
        assert_eq!(names, ["client-ca"], "TLS 1.2: {tls12}");
    }

    std::fs::write(&ca_file, second_ca.pem()).unwrap();
    x509.reloader().unwrap().reload_now().unwrap();
    // The first handshake after the change may still get the old list (the rebuild runs on
    // the blocking pool); never anything else.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let names = tls_support::offered_ca_names(addr, roots(), "localhost", false).await;
        if names == ["second-client-ca"] {
            break;
        }
        assert_eq!(names, ["client-ca"], "only the old or the new list");
        assert!(std::time::Instant::now() < deadline, "still {names:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        tls_support::offered_ca_names(addr, roots(), "localhost", true).await,
        ["second-client-ca"]
    );

    // Certificates are verified against the current bundle: carol (new CA) in, alice out.
    let url = format!("https://localhost:{}/", addr.port());
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&s.server_ca.cert).unwrap()).unwrap();
    for (who, identity_pem, status, body) in [
        ("carol", identity(&[&carol], &carol), 200, "carol"),
        ("alice", identity(&[&s.alice], &s.alice), 401, ""),
    ] {
        let resp = reqwest::Client::builder()
            .use_rustls_tls()
            .add_root_certificate(ca.clone())
            .resolve("localhost", addr)
            .identity(reqwest::Identity::from_pem(&identity_pem).unwrap())
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap()
            .get(&url)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), status, "{who}");
        if status == 200 {
            assert_eq!(resp.text().await.unwrap(), body, "{who}");
        }
    }
}
