//! TLS plumbing: the peer certificate chain as a request extension ([`PeerCertificates`]),
//! and (feature `tls`) a rustls server configuration that requests client certificates the
//! way kube-apiserver does plus an accept loop that puts the chain on every request.
//!
//! # Why the handshake does not verify client certificates
//!
//! kube-apiserver's listener uses Go's `tls.RequestClientCert`: it asks for a certificate, does
//! not require one and does not verify its chain, but still checks the client's proof that it
//! holds the private key (CertificateVerify). Chains are verified per request by the
//! authenticators, against *different* CA bundles (the client CA for [`crate::x509`], the
//! front-proxy CA for [`crate::request::FrontProxy`]), so an untrusted or expired client
//! certificate does not break a request that also carries a valid bearer token. rustls has no
//! such mode built in (rustls#446); [`ClientCertPolicy::Request`] is ours: it parses the
//! certificate (garbage fails the handshake, as in Go) and delegates the CertificateVerify check
//! to rustls' own webpki-based signature verification. [`ClientCertPolicy::VerifyIfGiven`] and
//! [`ClientCertPolicy::Require`] are the stricter rustls verifiers, for servers that want to
//! refuse unknown certificates at the handshake.
//!
//! # Getting the chain to the request
//!
//! * [`TlsServer`] (feature `tls`): our own accept loop (hyper-util auto: HTTP/1.1 and HTTP/2,
//!   offered by ALPN and told apart by the client's first bytes, tokio-rustls, graceful shutdown; bounded: handshake 10 s, first request 32 s, idle
//!   90 s, connections capped just below the open-file limit ([`default_max_connections`]),
//!   100 HTTP/2 streams per connection). It serves any
//!   `tower::Service<http::Request<hyper::body::Incoming>>`: an axum `Router`, a tonic
//!   `Routes`, or a plain `service_fn`, and inserts [`PeerCertificates`] into every request of
//!   a connection whose client sent a certificate. One `Arc` clone per request.
//! * `axum::serve` (feature `axum-tls`): [`axum::TlsListener`] terminates TLS for axum's own
//!   server and [`axum::PeerCertificatesLayer`] hands the chain to the authenticators.
//! * tonic: a tonic `Routes` (gRPC services) is a Tower service; serve it with [`TlsServer`]
//!   behind [`AuthenticationLayer`](crate::middleware::AuthenticationLayer) and client
//!   certificates authenticate gRPC calls (`tests/tls_frameworks.rs`); this is the bridge for
//!   tonic, with one TLS stack (tonic's own TLS server keeps the chain in a tonic-specific
//!   extension that the authenticators do not read).
//! * Your own TLS termination: insert [`PeerCertificates::injected`] yourself (and reuse the
//!   value for all requests of the connection so the verification cache works).
//!
//! ```
//! use kube_authn::authenticator::{Context, RequestAuthenticator};
//! use kube_authn::tls::PeerCertificates;
//! use kube_authn::x509::{CaBundle, X509Authenticator, doc_ca_pem, doc_client_pem, parse_pem_bundle};
//!
//! let x509 = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
//! // Once per connection, after your own handshake: the client's chain, leaf first.
//! let connection = PeerCertificates::injected(parse_pem_bundle(doc_client_pem().as_bytes()).unwrap());
//! // On every request of that connection: a clone (one reference-count increment).
//! for path in ["/api", "/apis"] {
//!     let mut req = http::Request::get(path).body(()).unwrap();
//!     req.extensions_mut().insert(connection.clone());
//!     let (parts, _) = req.into_parts();
//!     let r = x509.authenticate_request(&parts, &Context::default()).into_ready().unwrap();
//!     assert_eq!(r.unwrap().unwrap().user.name(), "doc-admin");
//! }
//! // A request without the extension is not the X.509 authenticator's.
//! let (plain, _) = http::Request::get("/api").body(()).unwrap().into_parts();
//! assert!(x509.authenticate_request(&plain, &Context::default()).into_ready().unwrap().unwrap().is_none());
//! ```

#[cfg(any(feature = "tls", feature = "remote"))]
pub(crate) mod key_pair;
mod peer;

/// The certificate types used in this module's API (re-exported `rustls-pki-types`).
pub use rustls_pki_types as pki_types;

pub(crate) use peer::CacheEntry;
pub use peer::{CertSource, PeerCertificates};

#[cfg(feature = "axum-tls")]
pub mod axum;
#[cfg(feature = "tls")]
mod server;
#[cfg(feature = "tls")]
pub mod serving_cert;
#[cfg(feature = "tls")]
mod verifier;

/// The rustls and tokio-rustls versions this module's API uses (re-exported).
#[cfg(feature = "tls")]
pub use {rustls, tokio_rustls};

#[cfg(feature = "axum-tls")]
pub(crate) use server::{ConfigSource, accept_backoff, tune_accepted};
#[cfg(feature = "tls")]
pub use server::{
    DEFAULT_FIRST_REQUEST_TIMEOUT, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    HTTP1_MAX_HEAD_BYTES, HTTP1_MAX_HEADERS, HTTP2_MAX_CONCURRENT_STREAMS,
    HTTP2_MAX_HEADER_LIST_SIZE, TlsServer, default_max_connections, max_connections_for_open_files,
    serve,
};
#[cfg(feature = "tls")]
pub use verifier::{
    ClientCertPolicy, DynamicServerConfig, RequestClientCert, TlsOptions, server_config,
    server_config_with,
};
