//! [`TlsServer`]'s protocol bounds, through the real server on 127.0.0.1: a small connection
//! cap with idle TCP connections (no TLS), thousands of front-proxy group header lines over
//! HTTP/1.1 ([`HTTP1_MAX_HEADERS`]), and kube-apiserver's 100 concurrent HTTP/2 streams (a
//! 101st, sent with raw frames, is refused).

#![cfg(feature = "tls")]

mod tls_support;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kube_authn::authenticator::{Context, SyncTokenFn};
use kube_authn::chain::ChainBuilder;
use kube_authn::middleware::{Authenticated, AuthenticationLayer};
use kube_authn::request::{FrontProxy, MAX_GROUPS, RequestHeaderConfig};
use kube_authn::tls::pki_types::pem::PemObject;
use kube_authn::tls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use kube_authn::tls::{
    ClientCertPolicy, HTTP1_MAX_HEADERS, HTTP2_MAX_CONCURRENT_STREAMS, TlsServer,
};
use kube_authn::x509::{doc_ca_pem, doc_client_key_pem, doc_client_pem};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::Layer;

/// A serving configuration for `localhost` (self-signed) that requests client certificates.
fn serving() -> (Arc<rustls::ServerConfig>, CertificateDer<'static>) {
    tls_support::localhost_config(&ClientCertPolicy::Request { hints: vec![] })
}

/// A TLS client connection to `addr` trusting `ca`, offering `alpn`, with the doc client
/// certificate (the front proxy's) when `with_cert`.
async fn tls_connect(
    addr: std::net::SocketAddr,
    ca: &CertificateDer<'static>,
    alpn: &[&[u8]],
    with_cert: bool,
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let client_auth = with_cert.then(|| {
        let chain = CertificateDer::pem_slice_iter(doc_client_pem().as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(doc_client_key_pem().as_bytes()).unwrap();
        (chain, key)
    });
    let config = tls_support::client_config(ca, alpn, client_auth);
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
    let (addr, _stop) = tls_support::serve_on_free_port(server, app).await;

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
    let (addr, stop) = tls_support::serve_on_free_port(TlsServer::new(config), app).await;
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

/// One HTTP/2 frame: the 9-byte header (24-bit length, type, flags, stream id) and payload.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).unwrap();
    assert!(len < 1 << 14, "within the default SETTINGS_MAX_FRAME_SIZE");
    let mut frame = len.to_be_bytes()[1..].to_vec();
    frame.extend([kind, flags]);
    frame.extend(stream.to_be_bytes());
    frame.extend(payload);
    frame
}

const H2_DATA: u8 = 0x0;
const H2_HEADERS: u8 = 0x1;
const H2_RST_STREAM: u8 = 0x3;
const H2_SETTINGS: u8 = 0x4;
const H2_GOAWAY: u8 = 0x7;
const H2_END_STREAM: u8 = 0x1;
const H2_END_HEADERS: u8 = 0x4;
const H2_ACK: u8 = 0x1;
const H2_SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
const H2_REFUSED_STREAM: u32 = 0x7;

/// A GET of `https://localhost{path}` with no body: an HPACK block of an indexed `:method: GET`
/// and `:scheme: https` and literals without indexing (no Huffman) for `:path` and
/// `:authority` (RFC 7541 static-table names 4 and 1).
fn h2_get(path: &str) -> Vec<u8> {
    let mut block = vec![0x82, 0x87];
    for (name_index, value) in [(4u8, path), (1, "localhost")] {
        assert!(value.len() < 127);
        block.push(name_index);
        block.push(u8::try_from(value.len()).unwrap());
        block.extend(value.as_bytes());
    }
    block
}

/// Reads one frame: (type, flags, stream id, payload).
async fn read_h2_frame(
    tls: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
) -> (u8, u8, u32, Vec<u8>) {
    let mut header = [0u8; 9];
    tls.read_exact(&mut header).await.expect("a frame header");
    let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
    let stream = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & !(1 << 31);
    let mut payload = vec![0u8; len];
    tls.read_exact(&mut payload).await.expect("a frame payload");
    (header[3], header[4], stream, payload)
}

/// The server itself refuses a 101st concurrent stream: a client written with raw frames
/// (h2's and hyper's clients hold back streams beyond the server's SETTINGS, so they never
/// send it) opens 101 streams at once whose handlers all block; the server answers the 101st
/// with RST_STREAM(REFUSED_STREAM) (h2's answer, RFC 9113 §5.1.2), runs the other 100 at
/// once, and serves them all once they are released.
#[tokio::test]
async fn http2_connections_refuse_a_101st_concurrent_stream() {
    let (config, ca) = serving();
    let in_progress = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let app = {
        let (in_progress, release) = (in_progress.clone(), release.clone());
        tower::service_fn(move |req: http::Request<hyper::body::Incoming>| {
            let (in_progress, release) = (in_progress.clone(), release.clone());
            async move {
                assert_eq!(req.uri().path(), "/block");
                in_progress.fetch_add(1, Ordering::SeqCst);
                release.acquire().await.unwrap().forget();
                Ok::<_, Infallible>(http::Response::new(String::from("ok")))
            }
        })
    };
    let (addr, _stop) = tls_support::serve_on_free_port(TlsServer::new(config), app).await;

    let mut tls = tls_connect(addr, &ca, &[b"h2"], false).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend(h2_frame(H2_SETTINGS, 0, 0, &[]));
    tls.write_all(&hello).await.unwrap();

    // The server's SETTINGS announce the limit; acknowledge them.
    let within = Duration::from_secs(10);
    let settings = tokio::time::timeout(within, async {
        loop {
            let (kind, flags, _, payload) = read_h2_frame(&mut tls).await;
            if kind == H2_SETTINGS && flags & H2_ACK == 0 {
                break payload;
            }
        }
    })
    .await
    .expect("the server's SETTINGS");
    let max_streams = settings
        .chunks_exact(6)
        .find(|s| u16::from_be_bytes([s[0], s[1]]) == H2_SETTINGS_MAX_CONCURRENT_STREAMS)
        .map(|s| u32::from_be_bytes([s[2], s[3], s[4], s[5]]));
    assert_eq!(max_streams, Some(HTTP2_MAX_CONCURRENT_STREAMS));
    assert_eq!(HTTP2_MAX_CONCURRENT_STREAMS, 100);

    // 101 requests on streams 1, 3, …, 201, sent at once without waiting for anything.
    let mut requests = h2_frame(H2_SETTINGS, H2_ACK, 0, &[]);
    let get = h2_get("/block");
    let streams: Vec<u32> = (0..101).map(|i| 2 * i + 1).collect();
    for &stream in &streams {
        requests.extend(h2_frame(
            H2_HEADERS,
            H2_END_STREAM | H2_END_HEADERS,
            stream,
            &get,
        ));
    }
    tls.write_all(&requests).await.unwrap();

    // The 101st is refused, and only it.
    let refused = tokio::time::timeout(within, async {
        loop {
            let (kind, _, stream, payload) = read_h2_frame(&mut tls).await;
            assert_ne!(kind, H2_GOAWAY, "the connection was closed: {payload:?}");
            assert_ne!(
                kind, H2_HEADERS,
                "stream {stream} answered before the release"
            );
            if kind == H2_RST_STREAM {
                let code = u32::from_be_bytes(payload[..4].try_into().unwrap());
                break (stream, code);
            }
        }
    })
    .await
    .expect("a RST_STREAM");
    assert_eq!(refused, (201, H2_REFUSED_STREAM));
    // The other 100 run at once (and no more, though nothing else holds them back).
    let deadline = tokio::time::Instant::now() + within;
    while in_progress.load(Ordering::SeqCst) < 100 {
        assert!(tokio::time::Instant::now() < deadline, "not all 100 ran");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Released, all 100 are answered 200 (`:status: 200` is the static-table entry 8).
    release.add_permits(100);
    let mut answered = std::collections::BTreeSet::new();
    let mut ended = std::collections::BTreeSet::new();
    tokio::time::timeout(within, async {
        while ended.len() < 100 {
            let (kind, flags, stream, payload) = read_h2_frame(&mut tls).await;
            assert!(
                ![H2_RST_STREAM, H2_GOAWAY].contains(&kind),
                "frame {kind} on stream {stream}: {payload:?}"
            );
            if kind == H2_HEADERS {
                assert_eq!(payload.first(), Some(&0x88), "stream {stream}: not 200");
                assert!(answered.insert(stream), "stream {stream} answered twice");
            }
            if [H2_HEADERS, H2_DATA].contains(&kind) && flags & H2_END_STREAM != 0 {
                ended.insert(stream);
            }
        }
    })
    .await
    .expect("all 100 answered");
    assert_eq!(answered.into_iter().collect::<Vec<_>>(), streams[..100]);
    assert_eq!(ended.into_iter().collect::<Vec<_>>(), streams[..100]);
    assert_eq!(in_progress.load(Ordering::SeqCst), 100);
}

/// A client that sets its HTTP/2 flow-control window to 0 never lets a response body be sent,
/// so the request stays in progress and neither the idle timeout nor the close after GOAWAY
/// ever fires (Go's server holds it for ever too). `response_stall_timeout` closes such a
/// connection; without it the connection stays open. A raw-frame client, because h2's own
/// client always opens its window.
#[tokio::test]
async fn a_zero_window_client_is_closed_by_the_response_stall_timeout() {
    const H2_SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
    // (case, stall timeout, whether the connection is closed within the wait)
    let cases = [
        (
            "with a stall timeout",
            Some(Duration::from_millis(300)),
            true,
        ),
        ("without one", None, false),
    ];
    for (name, stall, closed) in cases {
        let (config, ca) = serving();
        let app = tower::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
            Ok::<_, Infallible>(http::Response::new(String::from("a body never sent")))
        });
        let mut server = TlsServer::new(config).idle_timeout(Duration::from_secs(60));
        if let Some(stall) = stall {
            server = server.response_stall_timeout(stall);
        }
        let (addr, _stop) = tls_support::serve_on_free_port(server, app).await;
        let mut tls = tls_connect(addr, &ca, &[b"h2"], false).await.unwrap();
        let mut zero_window = H2_SETTINGS_INITIAL_WINDOW_SIZE.to_be_bytes().to_vec();
        zero_window.extend(0u32.to_be_bytes());
        let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        hello.extend(h2_frame(H2_SETTINGS, 0, 0, &zero_window));
        hello.extend(h2_frame(
            H2_HEADERS,
            H2_END_STREAM | H2_END_HEADERS,
            1,
            &h2_get("/x"),
        ));
        tls.write_all(&hello).await.unwrap();
        // Reads frames (acknowledging the server's SETTINGS) until the connection ends.
        let read_all = async {
            let mut header = [0u8; 9];
            let mut response_headers = false;
            loop {
                if tls.read_exact(&mut header).await.is_err() {
                    return response_headers;
                }
                let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
                let mut payload = vec![0u8; len];
                if tls.read_exact(&mut payload).await.is_err() {
                    return response_headers;
                }
                assert_ne!(header[3], H2_DATA, "{name}: no DATA fits a zero window");
                if header[3] == H2_HEADERS {
                    response_headers = true;
                }
                if header[3] == H2_SETTINGS && header[4] & H2_ACK == 0 {
                    let ack = h2_frame(H2_SETTINGS, H2_ACK, 0, &[]);
                    if tls.write_all(&ack).await.is_err() {
                        return response_headers;
                    }
                }
            }
        };
        match tokio::time::timeout(Duration::from_secs(3), read_all).await {
            Ok(saw_headers) => {
                assert!(closed, "{name}: the connection was closed");
                assert!(saw_headers, "{name}: the response's HEADERS came first");
            }
            Err(_) => assert!(!closed, "{name}: the connection is still open"),
        }
    }
}

const H2_PING: u8 = 0x6;
const H2_RST_STREAM_REFUSED: u32 = H2_REFUSED_STREAM;

/// [`h2_get`] with an `authorization` header: a literal without indexing whose name is the
/// static-table entry 23 (index 23 in a 4-bit prefix: 0x0f, then 23 - 15).
fn h2_get_with_authorization(path: &str, authorization: &str) -> Vec<u8> {
    let mut block = h2_get(path);
    assert!(authorization.len() < 127);
    block.extend([0x0f, 23 - 15, u8::try_from(authorization.len()).unwrap()]);
    block.extend(authorization.as_bytes());
    block
}

/// What a raw HTTP/2 client saw, and when.
#[derive(Debug)]
enum Seen {
    Headers(u32),
    Reset(u32, u32),
    GoAway,
    Ping,
    Closed,
}

/// A raw-frame HTTP/2 connection to `addr` after the preface and the SETTINGS exchange: the
/// write half, and the frames read from then on (every PING left unacknowledged, as h2's and
/// hyper's clients never would).
async fn raw_h2_client(
    addr: std::net::SocketAddr,
    ca: &CertificateDer<'static>,
) -> (
    tokio::io::WriteHalf<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>,
    tokio::sync::mpsc::UnboundedReceiver<(std::time::Instant, Seen)>,
) {
    let mut tls = tls_connect(addr, ca, &[b"h2"], false).await.unwrap();
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend(h2_frame(H2_SETTINGS, 0, 0, &[]));
    tls.write_all(&hello).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (kind, flags, _, _) = read_h2_frame(&mut tls).await;
            if kind == H2_SETTINGS && flags & H2_ACK == 0 {
                break;
            }
        }
    })
    .await
    .expect("the server's SETTINGS");
    tls.write_all(&h2_frame(H2_SETTINGS, H2_ACK, 0, &[]))
        .await
        .unwrap();
    let (mut read, write) = tokio::io::split(tls);
    let (seen, frames) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut header = [0u8; 9];
        loop {
            if read.read_exact(&mut header).await.is_err() {
                let _ = seen.send((std::time::Instant::now(), Seen::Closed));
                return;
            }
            let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
            let stream =
                u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & !(1 << 31);
            let mut payload = vec![0u8; len];
            if read.read_exact(&mut payload).await.is_err() {
                let _ = seen.send((std::time::Instant::now(), Seen::Closed));
                return;
            }
            let frame = match header[3] {
                H2_HEADERS => Seen::Headers(stream),
                H2_RST_STREAM => {
                    Seen::Reset(stream, u32::from_be_bytes(payload[..4].try_into().unwrap()))
                }
                H2_GOAWAY => Seen::GoAway,
                H2_PING if header[4] & H2_ACK == 0 => Seen::Ping,
                _ => continue,
            };
            let _ = seen.send((std::time::Instant::now(), frame));
        }
    });
    (write, frames)
}

/// CVE-2023-44487: after a refused HTTP/2 request the server sends GOAWAY, and a client that
/// goes on opening streams without acknowledging the GOAWAY's PING (so hyper's graceful
/// shutdown never lowers its last stream id) has none of them authenticated: each is reset
/// with REFUSED_STREAM without reaching the service, and the connection is closed about 1 s
/// (Go's `goAwayTimeout`) after the refused request's response. Before, every such stream was
/// authenticated and answered 401 (10,000 of 10,000 on one connection) and the connection
/// stayed open as long as requests kept coming.
#[tokio::test]
async fn streams_opened_after_goaway_are_refused_and_the_connection_closes() {
    let (config, ca) = serving();
    let attempts = Arc::new(AtomicUsize::new(0));
    let chain = {
        let attempts = attempts.clone();
        ChainBuilder::new()
            .token(SyncTokenFn::new(move |_: &str, _: &Context| {
                attempts.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            }))
            .build()
    };
    let app = AuthenticationLayer::new(chain).layer(tower::service_fn(
        |_req: http::Request<hyper::body::Incoming>| async {
            Ok::<_, Infallible>(http::Response::new(String::from("not reached")))
        },
    ));
    let server = TlsServer::new(config).idle_timeout(Duration::from_secs(60));
    let (addr, _stop) = tls_support::serve_on_free_port(server, app).await;
    let (mut write, mut frames) = raw_h2_client(addr, &ca).await;
    let request = h2_get_with_authorization("/api", "Bearer wrong");
    let flags = H2_END_STREAM | H2_END_HEADERS;
    write
        .write_all(&h2_frame(H2_HEADERS, flags, 1, &request))
        .await
        .unwrap();

    // The 401 on stream 1, then a stream every 200 ms until the connection closes (at most
    // 4 s: before the fix it stayed open).
    let mut seen = Vec::new();
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (at, frame) = frames.recv().await.expect("the reader reports the close");
            let first = matches!(frame, Seen::Headers(1));
            assert!(
                !matches!(frame, Seen::Closed),
                "closed before the 401: {seen:?}"
            );
            seen.push(frame);
            if first {
                break at;
            }
        }
    })
    .await
    .expect("the 401 on stream 1");
    let mut next_stream = 3;
    let mut closed = None;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    while closed.is_none() && answered.elapsed() < Duration::from_secs(4) {
        tokio::select! {
            _ = tick.tick() => {
                let frame = h2_frame(H2_HEADERS, flags, next_stream, &request);
                next_stream += 2;
                // The server may have closed the connection meanwhile.
                let _ = write.write_all(&frame).await;
            }
            frame = frames.recv() => match frame {
                Some((at, Seen::Closed)) => closed = Some(at),
                Some((_, frame)) => seen.push(frame),
                None => closed = Some(std::time::Instant::now()),
            },
        }
    }

    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "only stream 1 is authenticated: {seen:?}"
    );
    let closed = closed.unwrap_or_else(|| panic!("the connection is still open: {seen:?}"));
    let after = closed - answered;
    assert!(
        after < Duration::from_secs(2),
        "closed {after:?} after the 401"
    );
    assert!(seen.iter().any(|f| matches!(f, Seen::GoAway)), "{seen:?}");
    assert!(seen.iter().any(|f| matches!(f, Seen::Ping)), "{seen:?}");
    // Streams opened meanwhile (there were some: 1 s at one per 200 ms) are refused, none
    // answered; `REFUSED_STREAM` tells the client they were not processed.
    assert!(next_stream > 5, "streams opened after the 401: {seen:?}");
    let mut refused = 0;
    for frame in &seen {
        match *frame {
            Seen::Headers(stream) => assert_eq!(stream, 1, "{seen:?}"),
            Seen::Reset(stream, code) => {
                assert!(stream > 1, "{seen:?}");
                assert_eq!(code, H2_RST_STREAM_REFUSED, "{seen:?}");
                refused += 1;
            }
            _ => {}
        }
    }
    assert!(refused >= 1, "{seen:?}");
}

/// The status of one HTTP/1.1 GET of a `target_len`-byte request target with an `x-filler`
/// header of `filler` bytes, written at once, to a server whose handler answers 200.
async fn http1_status_for_head(target_len: usize, filler: usize) -> u16 {
    let (config, ca) = serving();
    let app = tower::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
        Ok::<_, Infallible>(http::Response::new(String::from("ok")))
    });
    let (addr, _stop) = tls_support::serve_on_free_port(TlsServer::new(config), app).await;
    let mut tls = tls_connect(addr, &ca, &[b"http/1.1"], false).await.unwrap();
    let target = format!("/{}", "a".repeat(target_len - 1));
    let head = format!(
        "GET {target} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\nx-filler: {}\r\n\r\n",
        "f".repeat(filler)
    );
    // The server may answer and close before it has read everything.
    let _ = tls.write_all(head.as_bytes()).await;
    let mut resp = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut resp))
        .await
        .expect("an answer");
    let resp = String::from_utf8_lossy(&resp);
    resp.get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {resp:?}"))
}

/// hyper's bounds on an HTTP/1.1 request head, which answer before the service (and so before
/// authentication). The head: `HTTP1_MAX_HEAD_BYTES` (408 KiB) is hyper's read-buffer bound,
/// checked only while the head is incomplete, so a head that is complete when parsed may be
/// larger, up to what the buffer holds (less than twice the bound: about 508 KB was measured
/// for a head written at once); twice the bound and more is always 431. kube-apiserver's is
/// 1 MiB (+ 4 KiB), so a head between the two is refused here and served there. The request
/// target: more than 65,534 bytes is hyper's 414 (`MAX_URI_LEN`), where Go only applies its
/// 1 MiB head bound and the request reaches the handler.
#[tokio::test]
async fn http1_request_heads_beyond_hypers_bounds_are_refused() {
    use kube_authn::tls::HTTP1_MAX_HEAD_BYTES;
    // (case, request-target length, filler header bytes, status)
    let cases = [
        ("a 300 KB head", 1, 300_000, 200),
        (
            "a head just under the bound",
            1,
            HTTP1_MAX_HEAD_BYTES - 1024,
            200,
        ),
        (
            "a head of twice the bound",
            1,
            2 * HTTP1_MAX_HEAD_BYTES,
            431,
        ),
        ("a head of 1 MiB (Go's bound)", 1, 1 << 20, 431),
        ("a 65,534-byte target", 65_534, 0, 200),
        ("a 65,535-byte target", 65_535, 0, 414),
        ("a 65,600-byte target", 65_600, 0, 414),
    ];
    for (case, target_len, filler, status) in cases {
        assert_eq!(
            http1_status_for_head(target_len, filler).await,
            status,
            "{case}"
        );
    }
}

/// A client that resets its HTTP/2 stream (RST_STREAM) while the request is still being
/// authenticated gets no 401, hence no GOAWAY from the refusal; the abandoned authentication
/// closes the connection instead (kube-apiserver's cancelled authentication ends in a
/// refusal with `Connection: close`), or each reset would be a free attempt on one
/// connection. A reset while the handler runs, after authentication, closes nothing.
#[tokio::test]
async fn a_stream_reset_during_authentication_closes_the_http2_connection() {
    use kube_authn::authenticator::{AsyncTokenFn, Response};
    use kube_authn::user::UserInfo;
    const H2_CANCEL: u32 = 0x8;
    // (case, token, whether a GOAWAY follows the reset)
    let cases = [
        ("reset while authenticating", "Bearer slow", true),
        ("reset while the handler runs", "Bearer fast", false),
    ];
    for (case, token, goaway) in cases {
        let (config, ca) = serving();
        let chain = ChainBuilder::new()
            .token(AsyncTokenFn::new(|token: String, _: Context| async move {
                if token == "slow" {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    return Ok(None);
                }
                Ok(Some(Response::new(UserInfo::new("jane").into())))
            }))
            .build();
        let app = AuthenticationLayer::new(chain).layer(tower::service_fn(
            |_req: http::Request<hyper::body::Incoming>| async {
                tokio::time::sleep(Duration::from_millis(500)).await;
                Ok::<_, Infallible>(http::Response::new(String::from("ok")))
            },
        ));
        let server = TlsServer::new(config).idle_timeout(Duration::from_secs(60));
        let (addr, _stop) = tls_support::serve_on_free_port(server, app).await;
        let (mut write, mut frames) = raw_h2_client(addr, &ca).await;
        let request = h2_get_with_authorization("/api", token);
        let flags = H2_END_STREAM | H2_END_HEADERS;
        write
            .write_all(&h2_frame(H2_HEADERS, flags, 1, &request))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        write
            .write_all(&h2_frame(H2_RST_STREAM, 0, 1, &H2_CANCEL.to_be_bytes()))
            .await
            .unwrap();
        let reset = std::time::Instant::now();
        let mut seen = Vec::new();
        let got_goaway = tokio::time::timeout(Duration::from_secs(1), async {
            loop {
                match frames.recv().await {
                    Some((_, Seen::GoAway)) => return true,
                    Some((_, Seen::Closed)) | None => return false,
                    Some((_, frame)) => seen.push(frame),
                }
            }
        })
        .await
        .unwrap_or(false);
        assert_eq!(
            got_goaway,
            goaway,
            "{case}: after {:?}, {seen:?}",
            reset.elapsed()
        );
        assert!(
            !seen.iter().any(|f| matches!(f, Seen::Headers(_))),
            "{case}: no answer on a reset stream: {seen:?}"
        );
    }
}
