//! A test-only HTTPS server on 127.0.0.1 (hyper + rustls) with scripted replies, used as a
//! TokenReview webhook and as an OpenStack Identity endpoint. Real TLS, real HTTP; only the
//! application logic is scripted. Certificates are minted per run with rcgen.

#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// PEM material of one test PKI.
#[derive(Clone)]
pub struct Pki {
    pub ca_pem: String,
    pub server_cert_pem: String,
    pub server_key_pem: String,
    pub client_ca_pem: String,
    pub client_cert_pem: String,
    pub client_key_pem: String,
}

fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), Issuer::new(params, key))
}

fn leaf(issuer: &Issuer<'static, KeyPair>, sans: &[&str], cn: &str) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    let cert = params.signed_by(&key, issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Pki {
    pub fn new() -> Self {
        let (ca_pem, server_ca) = ca("webhook-test-ca");
        let (server_cert_pem, server_key_pem) = leaf(
            &server_ca,
            &["127.0.0.1", "localhost", "webhook.example"],
            "server",
        );
        let (client_ca_pem, client_ca) = ca("webhook-client-ca");
        let (client_cert_pem, client_key_pem) = leaf(&client_ca, &[], "kube-apiserver");
        Self {
            ca_pem,
            server_cert_pem,
            server_key_pem,
            client_ca_pem,
            client_cert_pem,
            client_key_pem,
        }
    }
}

/// What the server does with one request.
pub enum Reply {
    /// Answer with status, headers and body.
    Http(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// Never answer.
    Hang,
    /// Drop the connection without answering.
    Close,
}

impl Reply {
    pub fn json(code: u16, body: serde_json::Value) -> Self {
        Reply::Http(
            code,
            vec![("content-type", "application/json".into())],
            body.to_string().into_bytes(),
        )
    }
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub uri: String,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

type Handler = dyn Fn(&Seen, usize) -> Reply + Send + Sync;

pub struct Server {
    pub addr: SocketAddr,
    pub calls: Arc<AtomicUsize>,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    pub fn last(&self) -> Seen {
        self.seen
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("no request seen")
    }

    /// Starts a TLS server with `cert`/`key`, requiring client certificates from `client_ca`
    /// when given.
    pub async fn start(
        cert_pem: &str,
        key_pem: &str,
        client_ca: Option<&str>,
        handler: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Self::start_now(cert_pem, key_pem, client_ca, handler)
    }

    /// [`start`](Self::start) from synchronous code running inside a Tokio runtime (binds a
    /// std listener, so nothing needs awaiting).
    pub fn start_now(
        cert_pem: &str,
        key_pem: &str,
        client_ca: Option<&str>,
        handler: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Self::start_with(tls_acceptor(cert_pem, key_pem, client_ca), handler)
    }

    /// A TLS server (HTTP/1.1) with `cert`/`key` that records the server name (SNI) of each
    /// client hello it gets, `None` for a hello without one.
    pub fn start_recording_sni(
        cert_pem: &str,
        key_pem: &str,
        handler: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static,
    ) -> (Server, Arc<Mutex<Vec<Option<String>>>>) {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .unwrap();
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
        let signing = provider.key_provider.load_private_key(key).unwrap();
        let names = Arc::new(Mutex::new(Vec::new()));
        let resolver = Arc::new(RecordSni {
            key: Arc::new(rustls::sign::CertifiedKey::new(chain, signing)),
            names: names.clone(),
        });
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_cert_resolver(resolver);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        (Self::start_with(acceptor, handler), names)
    }

    fn start_with(
        acceptor: tokio_rustls::TlsAcceptor,
        handler: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (c, s) = (calls.clone(), seen.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let (calls, seen, handler) = (c.clone(), s.clone(), handler.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = hyper::service::service_fn(
                        move |req: http::Request<hyper::body::Incoming>| {
                            let (calls, seen, handler) =
                                (calls.clone(), seen.clone(), handler.clone());
                            async move {
                                let (parts, body) = req.into_parts();
                                let body = body
                                    .collect()
                                    .await
                                    .map(|b| b.to_bytes().to_vec())
                                    .unwrap_or_default();
                                let req = Seen {
                                    method: parts.method.to_string(),
                                    uri: parts.uri.to_string(),
                                    headers: parts.headers,
                                    body,
                                };
                                let n = calls.fetch_add(1, Ordering::SeqCst);
                                seen.lock().unwrap().push(req.clone());
                                match handler(&req, n) {
                                    Reply::Http(code, headers, body) => {
                                        let mut resp = http::Response::builder().status(code);
                                        for (k, v) in headers {
                                            resp = resp.header(k, v);
                                        }
                                        Ok::<_, std::io::Error>(
                                            resp.body(Full::new(Bytes::from(body))).unwrap(),
                                        )
                                    }
                                    Reply::Hang => {
                                        std::future::pending::<()>().await;
                                        unreachable!()
                                    }
                                    Reply::Close => Err(std::io::Error::other("closing")),
                                }
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), svc)
                        .await;
                });
            }
        });
        Server {
            addr,
            calls,
            seen,
            task,
        }
    }
}

/// Serves one certificate and records the SNI of every client hello.
#[derive(Debug)]
struct RecordSni {
    key: Arc<rustls::sign::CertifiedKey>,
    names: Arc<Mutex<Vec<Option<String>>>>,
}

impl rustls::server::ResolvesServerCert for RecordSni {
    fn resolve(
        &self,
        hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        self.names
            .lock()
            .unwrap()
            .push(hello.server_name().map(str::to_owned));
        Some(self.key.clone())
    }
}

/// The server's TLS side: `cert`/`key`, client certificates from `client_ca` when given.
fn tls_acceptor(
    cert_pem: &str,
    key_pem: &str,
    client_ca: Option<&str>,
) -> tokio_rustls::TlsAcceptor {
    tls_acceptor_alpn(cert_pem, key_pem, client_ca, b"http/1.1")
}

fn tls_acceptor_alpn(
    cert_pem: &str,
    key_pem: &str,
    client_ca: Option<&str>,
    alpn: &[u8],
) -> tokio_rustls::TlsAcceptor {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(ca.as_bytes()) {
                roots.add(c.unwrap()).unwrap();
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key).unwrap();
    config.alpn_protocols = vec![alpn.to_vec()];
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

/// A transport fault, for [`Server::start_raw`].
#[derive(Clone, Copy, Debug)]
pub enum RawFault {
    /// Answer the request with bytes that are not HTTP, then close.
    Garbage(&'static [u8]),
    /// Reset the TCP connection (SO_LINGER 0) once the request has arrived.
    Reset,
    /// Reset the TCP connection as soon as it is accepted, during the client's TLS handshake
    /// (`calls` counts connections).
    ResetInHandshake,
}

/// What an HTTP/2 server ([`Server::start_h2`]) does to the first requests it gets.
#[derive(Clone, Copy, Debug)]
pub enum H2Fault {
    /// `RST_STREAM` with `REFUSED_STREAM`: the server did not process the request.
    RefuseStream,
    /// A graceful `GOAWAY` (`NO_ERROR`) whose last stream is 0, so the request was not
    /// processed; then the connection is closed. The frames are written by hand (the h2
    /// server's own shutdown always counts the streams it has accepted as processed).
    GoAwayUnprocessed,
}

impl Server {
    /// A TLS server that reads each request's first bytes and then commits `fault`, counting
    /// requests in `calls` (nothing is recorded in `seen`).
    pub fn start_raw(
        cert_pem: &str,
        key_pem: &str,
        client_ca: Option<&str>,
        fault: RawFault,
    ) -> Server {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let acceptor = tls_acceptor(cert_pem, key_pem, client_ca);
        Server::accepting(move |tcp, calls| {
            let acceptor = acceptor.clone();
            async move {
                if matches!(fault, RawFault::ResetInHandshake) {
                    calls.fetch_add(1, Ordering::SeqCst);
                    let _ = tcp.set_zero_linger();
                    drop(tcp);
                    return;
                }
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut buf = [0u8; 4096];
                if !matches!(tls.read(&mut buf).await, Ok(n) if n > 0) {
                    return;
                }
                calls.fetch_add(1, Ordering::SeqCst);
                match fault {
                    RawFault::Garbage(bytes) => {
                        let _ = tls.write_all(bytes).await;
                        let _ = tls.shutdown().await;
                    }
                    RawFault::Reset => {
                        let _ = tls.get_ref().0.set_zero_linger();
                        drop(tls);
                    }
                    RawFault::ResetInHandshake => unreachable!("handled before TLS"),
                }
            }
        })
    }

    /// Listens on 127.0.0.1 and runs `serve` on each accepted connection, with the request
    /// counter the returned server reports as [`calls`](Self::calls).
    fn accepting<F, Fut>(serve: F) -> Server
    where
        F: Fn(tokio::net::TcpStream, Arc<AtomicUsize>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(tcp, c.clone()));
            }
        });
        Server {
            addr,
            calls,
            seen: Arc::new(Mutex::new(Vec::new())),
            task,
        }
    }
}

impl Server {
    /// An HTTP/2-only TLS server (ALPN `h2`, the h2 crate) that commits `fault` on its first
    /// `faulty` requests and answers every later one 200 with `answer` (JSON). `calls` counts
    /// requests, refused ones included.
    pub fn start_h2(
        cert_pem: &str,
        key_pem: &str,
        client_ca: Option<&str>,
        fault: H2Fault,
        faulty: usize,
        answer: &'static str,
    ) -> Server {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let acceptor = tls_acceptor_alpn(cert_pem, key_pem, client_ca, b"h2");
        Server::accepting(move |tcp, calls| {
            let acceptor = acceptor.clone();
            async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                if matches!(fault, H2Fault::GoAwayUnprocessed)
                    && calls.load(Ordering::SeqCst) < faulty
                {
                    // Read the client's preface and frames up to its first HEADERS.
                    let mut got = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !has_headers_frame(&got) {
                        match tls.read(&mut buf).await {
                            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                            _ => return,
                        }
                    }
                    calls.fetch_add(1, Ordering::SeqCst);
                    // SETTINGS (empty), then GOAWAY: last stream 0, NO_ERROR.
                    let mut frames = vec![0, 0, 0, 4, 0, 0, 0, 0, 0];
                    frames.extend_from_slice(&[0, 0, 8, 7, 0, 0, 0, 0, 0]);
                    frames.extend_from_slice(&[0; 8]);
                    let _ = tls.write_all(&frames).await;
                    let _ = tls.flush().await;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    let _ = tls.shutdown().await;
                    return;
                }
                let Ok(mut conn) = h2::server::handshake(tls).await else {
                    return;
                };
                while let Some(Ok((_req, mut respond))) = conn.accept().await {
                    let n = calls.fetch_add(1, Ordering::SeqCst);
                    if n < faulty && matches!(fault, H2Fault::RefuseStream) {
                        respond.send_reset(h2::Reason::REFUSED_STREAM);
                        continue;
                    }
                    let response = http::Response::builder()
                        .status(200)
                        .header("content-type", "application/json")
                        .body(())
                        .unwrap();
                    if let Ok(mut body) = respond.send_response(response, false) {
                        let _ = body.send_data(Bytes::from_static(answer.as_bytes()), true);
                    }
                }
            }
        })
    }
}

/// Whether `bytes` (an HTTP/2 client's preface and frames) hold a HEADERS frame yet.
fn has_headers_frame(bytes: &[u8]) -> bool {
    const PREFACE: usize = 24;
    let mut at = PREFACE;
    while let Some(head) = bytes.get(at..at + 9) {
        if head[3] == 1 {
            return true;
        }
        let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
        at += 9 + len;
    }
    false
}

/// A scripted API server for service-account lookups: service account `ns1/builder` (uid
/// `uid-builder`) and its pod `ns1/builder-pod` (uid `pod-uid-builder`), for callers that send
/// `Authorization: Bearer lookup-token`; other callers get 401, other paths 404 NotFound.
pub fn builder_api(seen: &Seen, _: usize) -> Reply {
    use serde_json::json;
    if seen
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        != Some("Bearer lookup-token")
    {
        return Reply::json(401, json!({"kind": "Status", "code": 401}));
    }
    match seen.uri.as_str() {
        "/api/v1/namespaces/ns1/serviceaccounts/builder" => Reply::json(
            200,
            json!({"kind": "ServiceAccount", "metadata": {"name": "builder", "uid": "uid-builder"}}),
        ),
        "/api/v1/namespaces/ns1/pods/builder-pod" => Reply::json(
            200,
            json!({"kind": "Pod", "metadata": {"name": "builder-pod", "uid": "pod-uid-builder"}}),
        ),
        _ => Reply::json(
            404,
            json!({"kind": "Status", "code": 404, "reason": "NotFound"}),
        ),
    }
}

/// Writes `dir/api-ca.crt` (`ca_pem`) and `dir/lookup.kubeconfig`, a kubeconfig for `server`
/// trusting that CA with the bearer token `lookup-token`; returns the kubeconfig's path.
pub fn lookup_kubeconfig(dir: &std::path::Path, server: &str, ca_pem: &str) -> std::path::PathBuf {
    let ca = dir.join("api-ca.crt");
    std::fs::write(&ca, ca_pem).unwrap();
    let kubeconfig = dir.join("lookup.kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: u\n  user:\n    token: lookup-token\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
            server,
            ca.display()
        ),
    )
    .unwrap();
    kubeconfig
}

#[allow(unused)]
fn _infallible(_: Infallible) {}
