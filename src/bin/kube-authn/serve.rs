//! Startup: flags → chain, serving certificate, HTTPS listener, graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kube_authn::authenticator::RequestAuthenticator;
use kube_authn::config::AuthenticationOptions;
use kube_authn::metrics::Metrics;
use kube_authn::middleware::AuthenticationLayer;
use kube_authn::request::RequestHeaderConfig;
use kube_authn::tls::serving_cert::ServingCertReloader;
use kube_authn::tls::{ClientCertPolicy, DynamicServerConfig, TlsOptions, TlsServer};
use tokio::net::TcpListener;
use tower_layer::Layer;

use crate::app::App;
use crate::request_deadline::RequestDeadline;
use crate::request_uri::GoRequestUri;
use crate::{ServeArgs, certs, dev};

/// A TLS handshake that takes longer than this is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn run(mut args: ServeArgs) -> Result<(), String> {
    let dev_setup = if args.dev {
        Some(dev::prepare(&mut args)?)
    } else {
        None
    };

    let options = AuthenticationOptions {
        token_auth_file: args.token_auth_file.clone(),
        client_ca_file: args.client_ca_file.clone(),
        basic_auth_file: args.basic_auth_file.clone(),
        experimental_keystone_url: args.experimental_keystone_url.clone(),
        experimental_keystone_ca_file: args.experimental_keystone_ca_file.clone(),
        requestheader: RequestHeaderConfig {
            client_ca_file: args.requestheader_client_ca_file.clone(),
            client_ca_pem: None,
            allowed_names: args.requestheader_allowed_names.clone(),
            username_headers: args.requestheader_username_headers.clone(),
            uid_headers: args.requestheader_uid_headers.clone(),
            group_headers: args.requestheader_group_headers.clone(),
            extra_headers_prefix: args.requestheader_extra_headers_prefix.clone(),
        },
        anonymous_auth: args.anonymous_auth,
        api_audiences: args.api_audiences.clone(),
        service_account_key_files: args.service_account_key_files.clone(),
        service_account_issuers: args.service_account_issuers.clone(),
        service_account_lookup: args.service_account_lookup,
        service_account_lookup_kubeconfig: args.service_account_lookup_kubeconfig.clone(),
        oidc: kube_authn::token::oidc::config::OidcFlags {
            issuer_url: args.oidc_issuer_url.clone(),
            client_id: args.oidc_client_id.clone(),
            ca_file: args.oidc_ca_file.clone(),
            username_claim: args.oidc_username_claim.clone(),
            username_prefix: args.oidc_username_prefix.clone(),
            groups_claim: args.oidc_groups_claim.clone(),
            groups_prefix: args.oidc_groups_prefix.clone(),
            required_claims: args.oidc_required_claims(),
            signing_algs: args.oidc_signing_algs.clone(),
            given: args.oidc_flags_given,
        },
        authentication_config: args.authentication_config.clone(),
        authentication_token_webhook_config_file: args
            .authentication_token_webhook_config_file
            .clone(),
        authentication_token_webhook_version: args.authentication_token_webhook_version.clone(),
        authentication_token_webhook_cache_ttl: args.authentication_token_webhook_cache_ttl,
        insecure_allow_any_token: args.insecure_allow_any_token,
        // kube-apiserver's identity scheme, with our own identity value.
        apiserver_id: kube_authn::token::oidc::metrics::apiserver_id(&hostname(), "kube-authn"),
        ..AuthenticationOptions::default()
    };
    let built = options.build().map_err(|e| e.to_string())?;

    let serving = match (&args.tls_cert_file, &args.tls_private_key_file) {
        (Some(cert), Some(key)) => certs::ServingCert {
            cert_file: cert.clone(),
            key_file: key.clone(),
            ca_file: None,
            generated: false,
        },
        // kube-apiserver: either flag skips the self-signed certificate, and
        // `NewDynamicServingContentFromFiles` refuses a missing name with this text
        // (`SecureServingOptions.ApplyTo` returns it unwrapped).
        (Some(_), None) | (None, Some(_)) => {
            return Err("missing filename for serving cert".into());
        }
        (None, None) => {
            let hosts = certs::self_signed_hosts(args.bind_address);
            // As kube-apiserver's `Complete` wraps `MaybeDefaultWithSelfSignedCerts`'s error.
            let serving = certs::ensure_self_signed(&args.cert_dir, &hosts)
                .map_err(|e| format!("error creating self-signed certificates: {e}"))?;
            tracing::info!(
                cert = %serving.cert_file.display(),
                key = %serving.key_file.display(),
                generated = serving.generated,
                "using a self-signed serving certificate (set --tls-cert-file and --tls-private-key-file for your own)"
            );
            serving
        }
    };
    // Like kube-apiserver's `NewDynamicServingContentFromFiles` (for `--tls-cert-file` and the
    // `--cert-dir` pair alike): the pair must match at startup, and is reloaded when either file
    // changes (a pair that does not match keeps the previous one, and is logged).
    let serving_pair =
        ServingCertReloader::load(&serving.cert_file, &serving.key_file).map_err(|e| {
            format!(
                "serving certificate ({}, {}): {e}",
                serving.cert_file.display(),
                serving.key_file.display()
            )
        })?;
    let (tls_options, not_offered) =
        TlsOptions::from_flags(&args.tls_min_version, &args.tls_cipher_suites)
            .map_err(|e| e.to_string())?;
    for name in not_offered {
        tracing::warn!(
            "{name} is not offered: rustls implements neither TLS 1.0 and 1.1 nor CBC, RSA key exchange, RC4 or 3DES cipher suites"
        );
    }
    if !tls_options.offers_tls12() && args.tls_min_version != "VersionTLS13" {
        tracing::warn!(
            "--tls-cipher-suites leaves no TLS 1.2 suite rustls implements: only TLS 1.3 is offered"
        );
    }
    // Like kube-apiserver: with a client CA or a request-header CA, the handshake requests (but
    // does not require or verify) a client certificate and names both CAs as acceptable, as
    // they are when the connection starts: the configuration is rebuilt after either file is
    // reloaded (kube-apiserver's dynamic client-CA content). The X.509 and front-proxy
    // authenticators verify the certificate per request.
    let tls_server = if built.ca_hint_sources.is_empty() {
        let tls = serving_pair
            .server_config(&ClientCertPolicy::None, &tls_options)
            .map_err(|e| e.to_string())?;
        TlsServer::new(Arc::new(tls))
    } else {
        let pair = serving_pair.clone();
        let dynamic = DynamicServerConfig::new(built.ca_hint_sources.clone(), move |policy| {
            pair.server_config(policy, &tls_options)
        })
        .map_err(|e| e.to_string())?;
        TlsServer::dynamic(Arc::new(dynamic))
    };
    // Checked off the handshake path, on the blocking pool, at the interval of every other
    // reloaded file; stops when dropped at the end of `run`.
    let _serving_watch = serving_pair.spawn_watch(options.reload_interval);

    // Installed before the listener: from here on, a first SIGTERM or SIGINT starts the
    // graceful shutdown and a second one exits at once.
    let shutdown = shutdown_signals().map_err(|e| format!("install signal handlers: {e}"))?;

    let addr = SocketAddr::new(args.bind_address, args.secure_port);
    let listener = go_listen(addr).map_err(|e| format!("listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("listen on {addr}: {e}"))?;

    let metrics = Arc::new(Metrics::new());
    let app = Arc::new(App {
        review_chain: built.chain.without_anonymous(),
        api_audiences: built.api_audiences.clone(),
        token_review_groups: args.token_review_groups.clone(),
        request_timeout: args.request_timeout,
        inflight: (args.max_mutating_requests_inflight > 0).then(|| {
            Arc::new(tokio::sync::Semaphore::new(
                args.max_mutating_requests_inflight
                    .min(tokio::sync::Semaphore::MAX_PERMITS),
            ))
        }),
        metrics: {
            let metrics = metrics.clone();
            // Only the families kube-apiserver would register for these flags, in name order
            // (one function with the library, so the two cannot drift).
            let options = options.clone();
            Arc::new(move |out: &mut String| {
                kube_authn::metrics::encode_all(&metrics, &options, out)
            })
        },
    });
    let layer = AuthenticationLayer::builder(built.chain.clone())
        .api_audiences(built.api_audiences.clone())
        .metrics(metrics)
        .build();
    // Go's HTTP server refuses a bad request URI (`/apis%zz`) before any handler or
    // authentication, and kube-apiserver's request-deadline filter a bad `?timeout=`: in front
    // of the middleware, every caller gets their answers.
    let service = GoRequestUri::new(RequestDeadline::new(
        layer.layer(tower::service_fn(move |req| {
            let app = app.clone();
            async move { Ok::<_, std::convert::Infallible>(app.handle(req).await) }
        })),
        args.request_timeout,
    ));

    tracing::info!(address = %local, schemes = ?built.chain.schemes(), "Serving securely");
    if let Some(dev) = &dev_setup {
        // Whether `curl …/healthz` is anonymous, as the chain itself answers it (the flag or
        // the configuration file's section, with its path conditions).
        let (healthz, ()) = http::Request::get("/healthz")
            .body(())
            .expect("a static request")
            .into_parts();
        let healthz_anonymous = matches!(
            built
                .chain
                .authenticate_request(&healthz, &kube_authn::authenticator::Context::default())
                .await,
            Ok(Some(_))
        );
        dev.print_instructions(local, serving.ca_file.as_deref(), healthz_anonymous);
    }

    // kube-apiserver's shutdown timeout is its request timeout (`ShutdownTimeout:
    // c.RequestTimeout`, 60 s by default): how long open connections get to finish.
    // Every answer here is short: a response the client does not let be sent (an HTTP/2
    // window kept at 0) for the request timeout (at least 1 s) ends its connection, which Go's
    // server would hold for ever.
    tls_server
        .handshake_timeout(HANDSHAKE_TIMEOUT)
        .shutdown_grace(args.request_timeout)
        .response_stall_timeout(args.request_timeout.max(std::time::Duration::from_secs(1)))
        .serve(listener, service, shutdown)
        .await
        .map_err(|e| format!("serving: {e}"))?;
    tracing::info!("shut down");
    drop(built.tasks);
    Ok(())
}

/// kube-apiserver's `SetupSignalContext`: the future returned completes at the first SIGTERM
/// or SIGINT (the graceful shutdown starts); a second one exits the process at once with status
/// 1, however long the shutdown would still wait. The handlers are installed before this
/// returns (on a Tokio runtime), so no signal is lost once it has.
fn shutdown_signals() -> std::io::Result<impl std::future::Future<Output = ()>> {
    let (first, first_seen) = tokio::sync::oneshot::channel::<()>();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{Signal, SignalKind, signal};
        async fn either(term: &mut Signal, int: &mut Signal) {
            tokio::select! {
                Some(()) = term.recv() => {}
                Some(()) = int.recv() => {}
                else => std::future::pending().await,
            }
        }
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        tokio::spawn(async move {
            either(&mut term, &mut int).await;
            let _ = first.send(());
            either(&mut term, &mut int).await;
            tracing::warn!("a second shutdown signal: exiting at once");
            std::process::exit(1);
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        // Without a handler there is no shutdown signal: `first` is kept, never sent.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        let _ = first.send(());
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(1);
        }
    });
    Ok(async move {
        let _ = first_seen.await;
        tracing::info!(
            "shutting down: open connections may finish within --request-timeout (a second signal exits at once)"
        );
    })
}

/// The host name as Go's `os.Hostname` reads it on Linux (`/proc/sys/kernel/hostname`), else
/// `$HOSTNAME`, else empty.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.strip_suffix('\n').unwrap_or(&h).to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

/// The socket Go's `net.Listen("tcp", addr)` listens on, not yet bound: for the IPv4 wildcard
/// (`0.0.0.0`, `--bind-address`'s default) an IPv6 socket with `IPV6_V6ONLY` off on `[::]`,
/// which accepts IPv4 and IPv6 clients alike (Go's `favoriteAddrFamily` picks `AF_INET6` for a
/// wildcard listener where IPv4-mapped addresses work); for any other address a socket of its
/// own family, `IPV6_V6ONLY` off on IPv6 as Go sets it (so `[::]` is dual-stack too).
/// `SO_REUSEADDR` is set, as Go (and Tokio) set it.
fn listen_socket(addr: SocketAddr) -> std::io::Result<(socket2::Socket, SocketAddr)> {
    use socket2::{Domain, Socket, Type};
    if addr.ip() == std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED) {
        let dual = Socket::new(Domain::IPV6, Type::STREAM, None).and_then(|socket| {
            socket.set_only_v6(false)?;
            Ok(socket)
        });
        // No IPv6 on this system: the IPv4 wildcard alone, as Go falls back to `AF_INET`.
        if let Ok(socket) = dual {
            socket.set_reuse_address(true)?;
            let any = SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), addr.port());
            return Ok((socket, any));
        }
    }
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        // Go sets IPV6_V6ONLY off on every IPv6 listener: `[::]` is dual-stack whatever the
        // system's `bindv6only` default.
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    Ok((socket, addr))
}

/// Binds and listens on `addr` as Go does ([`listen_socket`]), with Tokio's backlog (1024).
/// If the dual-stack bind fails (IPv6 present but not usable there), the IPv4 wildcard is
/// bound instead.
fn go_listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let (socket, at) = listen_socket(addr)?;
    let bound = socket.bind(&at.into()).map(|()| socket);
    let socket = match bound {
        Ok(socket) => socket,
        Err(_) if at != addr => {
            let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
            socket.set_reuse_address(true)?;
            socket.bind(&addr.into())?;
            socket
        }
        Err(e) => return Err(e),
    };
    socket.listen(1024)?;
    socket.set_nonblocking(true)?;
    TcpListener::from_std(socket.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without binding anything: the IPv4 wildcard becomes a dual-stack `[::]` socket (where
    /// this system has IPv6), every other address keeps its own family and value.
    #[test]
    fn the_ipv4_wildcard_listens_dual_stack_as_go_does() {
        let (socket, at) = listen_socket("0.0.0.0:6443".parse().unwrap()).unwrap();
        if socket2::Socket::new(socket2::Domain::IPV6, socket2::Type::STREAM, None).is_ok() {
            assert_eq!(at, "[::]:6443".parse().unwrap());
            assert!(!socket.only_v6().unwrap());
        } else {
            assert_eq!(at, "0.0.0.0:6443".parse().unwrap());
        }
        assert!(socket.reuse_address().unwrap());
        for addr in ["127.0.0.1:6443", "[::]:6443", "[::1]:0", "10.1.2.3:443"] {
            let addr: SocketAddr = addr.parse().unwrap();
            let Ok((socket, at)) = listen_socket(addr) else {
                continue; // no IPv6 here
            };
            assert_eq!(at, addr);
            assert_eq!(socket.domain().unwrap(), socket2::Domain::for_address(addr));
            if addr.is_ipv6() {
                assert!(!socket.only_v6().unwrap(), "{addr}");
            }
        }
    }

    /// A real listener on 127.0.0.1 (the only address tests listen on) through the same path.
    #[tokio::test]
    async fn go_listen_serves_loopback() {
        let listener = go_listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        assert!(addr.ip().is_loopback());
        let (client, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
        assert_eq!(client.unwrap().local_addr().unwrap(), accepted.unwrap().1);
    }
}
