//! HEAD requests get headers and no body over HTTP/2 as over HTTP/1.1 (RFC 9113 §8.1, RFC 9110
//! §9.3.2), as Go's servers answer them: `kube-authn serve` (its `TlsServer`, the
//! authentication middleware's 401 included) and `axum::serve` with `TlsListener`. Real TLS on
//! 127.0.0.1; the h2 crate, raw HTTP/1.1 and curl as clients.
#![cfg(feature = "server")]

mod serve_support;

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serve_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";

fn roots_from(certs: impl IntoIterator<Item = CertificateDer<'static>>) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    for cert in certs {
        roots.add(cert).unwrap();
    }
    roots
}

async fn tls(
    addr: SocketAddr,
    roots: &rustls::RootCertStore,
    name: &str,
    alpn: &[u8],
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots.clone())
    .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from(name.to_owned()).unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(alpn));
    tls
}

/// One HTTP/2 exchange as the h2 crate sees it.
#[derive(Debug)]
struct H2Answer {
    status: u16,
    content_length: Option<String>,
    /// The HEADERS frame carried END_STREAM (no DATA frame follows).
    ended_with_headers: bool,
    body: Vec<u8>,
    /// A stream or connection error while reading the body (a PROTOCOL_ERROR, say).
    error: Option<String>,
}

async fn h2_request(
    addr: SocketAddr,
    roots: &rustls::RootCertStore,
    name: &str,
    method: http::Method,
    path: &str,
    token: &str,
) -> H2Answer {
    let io = tls(addr, roots, name, b"h2").await;
    let (send, conn) = h2::client::handshake(io).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut send = send.ready().await.unwrap();
    let mut req = http::Request::builder()
        .method(method)
        .uri(format!("https://{name}{path}"));
    if !token.is_empty() {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let req = req.body(()).unwrap();
    let (response, _) = send.send_request(req, true).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .unwrap()
        .unwrap();
    let (head, mut body) = response.into_parts();
    let ended_with_headers = body.is_end_stream();
    let mut data = Vec::new();
    let mut error = None;
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(10), body.data())
        .await
        .unwrap()
    {
        match chunk {
            Ok(chunk) => {
                let _ = body.flow_control().release_capacity(chunk.len());
                data.extend_from_slice(&chunk);
            }
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    if error.is_none()
        && let Err(e) = body.trailers().await
    {
        error = Some(e.to_string());
    }
    H2Answer {
        status: head.status.as_u16(),
        content_length: head
            .headers
            .get(http::header::CONTENT_LENGTH)
            .map(|v| v.to_str().unwrap().to_owned()),
        ended_with_headers,
        body: data,
        error,
    }
}

/// A HEAD and then a GET on one HTTP/1.1 connection: the HEAD's head, and everything the
/// server wrote after it (which must be the GET's response: a HEAD body would come first).
async fn h1_head_then_get(
    addr: SocketAddr,
    roots: &rustls::RootCertStore,
    name: &str,
    path: &str,
    token: &str,
) -> (String, String) {
    let mut io = tls(addr, roots, name, b"http/1.1").await;
    let auth = if token.is_empty() {
        String::new()
    } else {
        format!("Authorization: Bearer {token}\r\n")
    };
    let head = format!("HEAD {path} HTTP/1.1\r\nHost: {name}\r\n{auth}\r\n");
    io.write_all(head.as_bytes()).await.unwrap();
    io.flush().await.unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(Duration::from_secs(10), io.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "connection closed before the HEAD response's head");
        buf.extend_from_slice(&chunk[..n]);
    };
    // Give a (wrong) body time to arrive before the next request is written.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let get = format!(
        "GET /healthz HTTP/1.1\r\nHost: {name}\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\nConnection: close\r\n\r\n"
    );
    // The server may have closed the connection after a 401; then nothing follows.
    let _ = io.write_all(get.as_bytes()).await;
    let _ = io.flush().await;
    loop {
        match tokio::time::timeout(Duration::from_secs(10), io.read(&mut chunk))
            .await
            .unwrap()
        {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    (text[..end].to_owned(), text[end..].to_owned())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// (path, token, status) for each case; an empty token sends no `Authorization` (anonymous).
const CASES: [(&str, &str, u16); 4] = [
    ("/healthz", ADMIN_TOKEN, 200),
    ("/healthz", "not-a-token", 401),
    (TOKEN_REVIEWS, ADMIN_TOKEN, 405),
    // RBAC's 403 (`cannot list resource "tokenreviews"`), before go-restful's 405.
    (TOKEN_REVIEWS, "", 403),
];

#[tokio::test]
async fn head_over_http2_and_http1_has_no_body() {
    let server = start_with_tokens();
    let roots = roots_from(
        CertificateDer::pem_file_iter(server.ca())
            .unwrap()
            .map(Result::unwrap),
    );
    let addr: SocketAddr = ([127, 0, 0, 1], server.port).into();
    for (path, token, status) in CASES {
        let case = format!("HEAD {path} ({status})");
        // What a GET would have carried: the HEAD's content-length is that body's length, as
        // Go's servers send it for a body the handler wrote in full.
        let get = h2_request(addr, &roots, "127.0.0.1", http::Method::GET, path, token).await;
        assert_eq!(get.status, status, "{case}: GET {get:?}");
        assert!(!get.body.is_empty(), "{case}: GET {get:?}");
        let len = get.body.len().to_string();

        let h2 = h2_request(addr, &roots, "127.0.0.1", http::Method::HEAD, path, token).await;
        assert_eq!(h2.status, status, "{case}: {h2:?}");
        assert!(
            h2.ended_with_headers,
            "{case}: HEADERS without END_STREAM: {h2:?}"
        );
        assert!(h2.body.is_empty() && h2.error.is_none(), "{case}: {h2:?}");
        assert_eq!(
            h2.content_length.as_deref(),
            Some(len.as_str()),
            "{case}: {h2:?}"
        );

        let (head, rest) = h1_head_then_get(addr, &roots, "127.0.0.1", path, token).await;
        assert!(
            head.starts_with(&format!("HTTP/1.1 {status} ")),
            "{case}: {head}"
        );
        assert_eq!(
            header(&head, "content-length"),
            Some(len.as_str()),
            "{case}: {head}"
        );
        assert!(
            rest.is_empty() || rest.starts_with("HTTP/1.1 200 OK\r\n"),
            "{case}: bytes after the HEAD response: {rest:?}"
        );
    }
    // The connection stays usable after an authorized HEAD.
    let (_, rest) = h1_head_then_get(addr, &roots, "127.0.0.1", "/healthz", ADMIN_TOKEN).await;
    assert!(
        rest.starts_with("HTTP/1.1 200 OK\r\n") && rest.ends_with("ok"),
        "{rest:?}"
    );
}

/// The reported symptom: `curl -I` over HTTP/2 exited 92 (stream not closed cleanly) or 16
/// (framing layer error).
#[test]
fn curl_head_over_http2_and_http1() {
    let server = start_with_tokens();
    for (path, token, status) in CASES {
        for version in ["--http2", "--http1.1"] {
            let mut curl = Command::new("curl");
            curl.args(["-sS", "-I", "--max-time", "20", version, "--cacert"])
                .arg(server.ca());
            if !token.is_empty() {
                curl.args(["-H", &format!("Authorization: Bearer {token}")]);
            }
            let out = curl
                .arg(server.url(path))
                .output()
                .expect("curl is installed");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "curl -I {version} {path}: {:?}\n{stderr}\n{stdout}",
                out.status
            );
            let want = if version == "--http2" {
                format!("HTTP/2 {status}")
            } else {
                format!("HTTP/1.1 {status}")
            };
            assert!(stdout.starts_with(&want), "{version} {path}: {stdout}");
        }
    }
}

/// `axum::serve` with `TlsListener`: axum's `Router` strips HEAD bodies itself (its routes'
/// futures replace the body and keep content-length), the middleware's 401 included when the
/// middleware is a `Router::layer`.
#[cfg(feature = "axum-tls")]
#[tokio::test]
async fn axum_serve_with_tls_listener_head_has_no_body() {
    use axum::Router;
    use axum::routing::{get, post};
    use kube_authn::authenticator::{Context, Response as AuthResponse, SyncTokenFn};
    use kube_authn::chain::ChainBuilder;
    use kube_authn::middleware::AuthenticationLayer;
    use kube_authn::tls::axum::{PeerCertificatesLayer, TlsConnectInfo, TlsListener};
    use kube_authn::tls::{ClientCertPolicy, server_config};
    use kube_authn::user::UserInfo;

    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let server_key =
        rustls::pki_types::PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
    let config = server_config(
        vec![cert.der().clone()],
        server_key,
        &ClientCertPolicy::None,
    )
    .unwrap();
    let chain = ChainBuilder::new()
        .token(SyncTokenFn::new(|t: &str, _: &Context| {
            Ok((t == ADMIN_TOKEN).then(|| AuthResponse::new(Arc::new(UserInfo::new("admin")))))
        }))
        .build();
    let app = Router::new()
        .route("/healthz", get(|| async { Bytes::from_static(b"ok") }))
        .route(TOKEN_REVIEWS, post(|| async { "review" }))
        .layer(AuthenticationLayer::new(chain))
        .layer(PeerCertificatesLayer);
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let listener = TlsListener::new(tcp, Arc::new(config));
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<TlsConnectInfo>(),
        )
        .await
    });
    let roots = roots_from([cert.der().clone()]);
    // This chain has no anonymous authenticator: the anonymous row is kube-authn serve's.
    for (path, token, status) in CASES.into_iter().filter(|(_, token, _)| !token.is_empty()) {
        let case = format!("axum HEAD {path} ({status})");
        let get = h2_request(addr, &roots, "localhost", http::Method::GET, path, token).await;
        assert_eq!(get.status, status, "{case}: GET {get:?}");
        let h2 = h2_request(addr, &roots, "localhost", http::Method::HEAD, path, token).await;
        assert_eq!(h2.status, status, "{case}: {h2:?}");
        assert!(
            h2.ended_with_headers,
            "{case}: HEADERS without END_STREAM: {h2:?}"
        );
        assert!(h2.body.is_empty() && h2.error.is_none(), "{case}: {h2:?}");
        assert_eq!(
            h2.content_length,
            Some(get.body.len().to_string()),
            "{case}: {h2:?}"
        );
    }
}
