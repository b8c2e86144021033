//! `HTTPS_PROXY` / `NO_PROXY` from the environment for outbound connections (the webhook here;
//! every outbound client is built by `ConnectionInfo::client`), as client-go's transports use
//! Go's `http.ProxyFromEnvironment` when a kubeconfig names no `proxy-url`.
//!
//! The environment is process-wide, so each case runs this test binary again as a child with
//! its own environment (the `child` test, which does nothing without `PROXY_CASE`). The parent
//! runs a TLS TokenReview server and a CONNECT proxy, both test-only, on 127.0.0.1. The
//! webhook is addressed as `webhook.example`, a name that does not resolve: the request can
//! only arrive through the proxy, which tunnels every CONNECT to the TokenReview server (its
//! certificate names `webhook.example`). A direct attempt fails on the name lookup.
#![cfg(feature = "remote")]

mod webhook_server;

use std::process::Command;
use std::sync::{Arc, Mutex};

use kube_authn::authenticator::{Context, TokenAuthenticator};
use kube_authn::outbound::vault::Vault;
use kube_authn::outbound::{ConnectionInfo, Pem};
use kube_authn::token::webhook::{WebhookOptions, WebhookTokenAuthenticator};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use webhook_server::{Pki, Reply, Server};

/// A CONNECT proxy on 127.0.0.1 that records each target and tunnels it to `upstream`.
async fn connect_proxy(upstream: std::net::SocketAddr) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let record = record.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
                    if client.read_exact(&mut byte).await.is_err() {
                        return;
                    }
                    head.push(byte[0]);
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned();
                let target = line.split(' ').nth(1).unwrap_or("").to_owned();
                record
                    .lock()
                    .unwrap()
                    .push(format!("{} {target}", line.split(' ').next().unwrap_or("")));
                let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                if client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .is_err()
                {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    (port, seen)
}

/// (case, environment, URL host, trust the environment, the review succeeds, what the proxy
/// sees)
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
    bool,
    bool,
    &'static [&'static str],
);

#[tokio::test]
async fn environment_proxies() {
    let pki = Pki::new();
    let server = Server::start(&pki.server_cert_pem, &pki.server_key_pem, None, |_, _| {
        Reply::json(
            200,
            json!({"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":"alice"}}}),
        )
    })
    .await;
    let (proxy_port, seen) = connect_proxy(server.addr).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let cases: &[Case] = &[
        (
            "HTTPS_PROXY carries a named host",
            &[("HTTPS_PROXY", "P")],
            "webhook.example",
            true,
            true,
            &["CONNECT webhook.example:PORT"],
        ),
        (
            "lower-case https_proxy too",
            &[("https_proxy", "P")],
            "webhook.example",
            true,
            true,
            &["CONNECT webhook.example:PORT"],
        ),
        (
            "NO_PROXY names the host: direct, and the name does not resolve",
            &[("HTTPS_PROXY", "P"), ("NO_PROXY", "webhook.example")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "NO_PROXY domain suffix",
            &[("HTTPS_PROXY", "P"), ("NO_PROXY", ".example")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "NO_PROXY=* disables every proxy",
            &[("HTTPS_PROXY", "P"), ("NO_PROXY", "*")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "NO_PROXY for another host leaves this one proxied",
            &[
                ("HTTPS_PROXY", "P"),
                ("NO_PROXY", "other.example,10.0.0.0/8"),
            ],
            "webhook.example",
            true,
            true,
            &["CONNECT webhook.example:PORT"],
        ),
        (
            "HTTP_PROXY is not used for https",
            &[("HTTP_PROXY", "P")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "a loopback address is never proxied (Go; reqwest's own rules would)",
            &[("HTTPS_PROXY", "P")],
            "127.0.0.1",
            true,
            true,
            &[],
        ),
        (
            "localhost is never proxied",
            &[("HTTPS_PROXY", "P")],
            "localhost",
            true,
            true,
            &[],
        ),
        (
            "LOCALHOST is proxied: Go compares the host as written with localhost",
            &[("HTTPS_PROXY", "P")],
            "LOCALHOST",
            true,
            true,
            &["CONNECT localhost:PORT"],
        ),
        (
            "a NO_PROXY CIDR with leading zeros (client-go's sloppy parse) sends an IP host direct",
            &[("HTTPS_PROXY", "P"), ("NO_PROXY", "000.0.0.0/8")],
            // Direct, 0.0.0.0 is this host, whose certificate does not name it.
            "0.0.0.0",
            true,
            false,
            &[],
        ),
        (
            "a SOCKS proxy (unsupported here) is refused, naming the variable",
            &[("HTTPS_PROXY", "socks5://127.0.0.1:1")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "a SOCKS proxy is not used for loopback either",
            &[("HTTPS_PROXY", "socks5://127.0.0.1:1")],
            "127.0.0.1",
            true,
            true,
            &[],
        ),
        // The url crate takes these hosts, `http::Uri` does not: reqwest would connect
        // directly (Go's request through such a proxy fails); the client is refused instead.
        (
            "a proxy whose host has a brace is refused, not skipped",
            &[("HTTPS_PROXY", "http://proxy{x:3128")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "a proxy whose host has a backtick is refused, not skipped",
            &[("https_proxy", "http://u:s3cr3t@proxy`x:3128")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        // Hosts Go keeps as names (it proxies `https://127.1/`, dials `127.1` by name) that the
        // url crate reads as addresses: refused rather than sent somewhere else.
        (
            "a shorthand loopback server host is refused, not sent direct",
            &[("HTTPS_PROXY", "P")],
            "127.1",
            true,
            false,
            &[],
        ),
        (
            "a proxy whose host is a shorthand address is refused, not dialed as an address",
            &[("HTTPS_PROXY", "P127.1")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "ALL_PROXY is not read (Go has none)",
            &[("ALL_PROXY", "P")],
            "webhook.example",
            true,
            false,
            &[],
        ),
        (
            "a kubeconfig with trust_env off ignores the environment",
            &[("HTTPS_PROXY", "P")],
            "webhook.example",
            false,
            false,
            &[],
        ),
    ];
    for (name, env, host, trust_env, succeeds, want_seen) in cases {
        seen.lock().unwrap().clear();
        let mut child = Command::new(std::env::current_exe().unwrap());
        child
            .args(["--exact", "child", "--nocapture", "--test-threads=1"])
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .env("PROXY_CASE", name)
            .env(
                "PROXY_CASE_URL",
                format!("https://{host}:{}/", server.addr.port()),
            )
            .env("PROXY_CASE_CA", &ca)
            .env("PROXY_CASE_TRUST_ENV", trust_env.to_string())
            .env("PROXY_CASE_SUCCEEDS", succeeds.to_string());
        for (k, v) in env.iter() {
            let value = match *v {
                "P" => proxy.clone(),
                // The proxy, its host written another way.
                "P127.1" => format!("http://127.1:{proxy_port}"),
                v => v.to_owned(),
            };
            child.env(k, value);
        }
        // The SOCKS case must fail on the proxy, not on the name lookup a direct attempt makes.
        if name.contains("SOCKS proxy (unsupported here) is refused") {
            child.env(
                "PROXY_CASE_ERROR",
                "HTTPS_PROXY: unsupported proxy scheme \"socks5\"",
            );
        }
        // So must these (the password masked).
        if name.contains("brace is refused") {
            child.env(
                "PROXY_CASE_ERROR",
                "HTTPS_PROXY: proxy http://proxy{x:3128/: not a valid HTTP URI",
            );
        }
        if name.contains("shorthand loopback server host is refused") {
            child.env(
                "PROXY_CASE_ERROR",
                format!(
                    "server URL \"https://127.1:{}/\": host \"127.1\" is a host name to Go but the IPv4 address 127.0.0.1 to this client",
                    server.addr.port()
                ),
            );
        }
        if name.contains("shorthand address is refused") {
            child.env(
                "PROXY_CASE_ERROR",
                format!(
                    "HTTPS_PROXY: proxy http://127.1:{proxy_port}: host \"127.1\" is a host name to Go but the IPv4 address 127.0.0.1 to this client"
                ),
            );
        }
        if name.contains("backtick is refused") {
            child.env(
                "PROXY_CASE_ERROR",
                "HTTPS_PROXY: proxy http://u:***@proxy`x:3128/: not a valid HTTP URI",
            );
        }
        let out = tokio::task::spawn_blocking(move || child.output().unwrap())
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "case {name}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let want: Vec<String> = want_seen
            .iter()
            .map(|s| s.replace("PORT", &server.addr.port().to_string()))
            .collect();
        assert_eq!(
            *seen.lock().unwrap(),
            want,
            "case {name}: what the proxy saw"
        );
    }
}

/// One case, in a child process with the case's environment (see the module docs).
#[tokio::test]
async fn child() {
    let Ok(name) = std::env::var("PROXY_CASE") else {
        return;
    };
    let var = |k: &str| std::env::var(k).unwrap();
    let info = ConnectionInfo::new(var("PROXY_CASE_URL"))
        .with_ca(Pem::File(var("PROXY_CASE_CA").into()))
        .with_trust_env(var("PROXY_CASE_TRUST_ENV") == "true");
    // One attempt: a failure is the outcome under test, not something to retry.
    let mut options = WebhookOptions::default();
    options.backoff.steps = 1;
    let result = match WebhookTokenAuthenticator::new(Vault::from_info(info), options) {
        Ok(webhook) => {
            webhook
                .authenticate_token("token", &Context::default())
                .await
        }
        Err(e) => Err(kube_authn::Error::new(
            kube_authn::ErrorKind::Internal,
            e.to_string(),
        )),
    };
    let user = match &result {
        Ok(Some(r)) => Some(r.user.name().to_owned()),
        _ => None,
    };
    if var("PROXY_CASE_SUCCEEDS") == "true" {
        assert_eq!(user.as_deref(), Some("alice"), "{name}: {result:?}");
    } else {
        assert!(result.is_err(), "{name}: {result:?}");
        if let (Ok(want), Err(e)) = (std::env::var("PROXY_CASE_ERROR"), &result) {
            assert!(e.to_string().contains(&want), "{name}: {e}");
        }
    }
}
