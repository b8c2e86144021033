//! [`TlsServer`] when `accept` fails for want of file descriptors (`EMFILE`): it backs off
//! (5 ms doubling to 1 s, as Go's `http.Server`) instead of spinning, and serves again once
//! descriptors are free. One test in its own binary: it lowers this process's open-file limit.
#![cfg(all(feature = "tls", target_os = "linux"))]

mod tls_support;

use std::convert::Infallible;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube_authn::tls::pki_types::ServerName;
use kube_authn::tls::{ClientCertPolicy, TlsServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Collects the log in memory (writing it needs no file descriptor).
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    fn accept_failures(&self) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|l| l.contains("accept failed"))
            .count()
    }
}

/// Lowers the soft open-file limit to the highest descriptor in use + 1 and fills the holes
/// below it, so that no new descriptor can be had; returns the fillers and the old limit.
fn exhaust_file_descriptors() -> (Vec<std::fs::File>, (u64, u64)) {
    let old = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
    let highest = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap();
    rlimit::setrlimit(rlimit::Resource::NOFILE, highest + 1, old.1).unwrap();
    let mut fillers = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => fillers.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(24), "EMFILE expected: {e}");
                break;
            }
        }
        assert!(fillers.len() < 10_000, "the limit did not take");
    }
    (fillers, old)
}

#[tokio::test]
async fn accept_failures_back_off_and_serving_resumes() {
    let log = Log::default();
    let writer = log.clone();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish(),
    )
    .unwrap();

    let (config, cert) = tls_support::localhost_config(&ClientCertPolicy::None);
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    // Clients that connect now wait in the backlog: accepting them needs a descriptor each.
    let waiting: Vec<_> = (0..3)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    let app = tower::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
        Ok::<_, Infallible>(http::Response::new(String::from("ok")))
    });
    let server = TlsServer::new(config).handshake_timeout(Duration::from_millis(500));

    let (fillers, old) = exhaust_file_descriptors();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(tcp, app, async {
        let _ = stopped.await;
    }));
    // Failures at 0, 5, 15, 35, 75, 155, 315, 635, 1275 ms (then every second): 9 in 2.2 s.
    // Without a back-off (or with a fixed 50 ms one) there would be dozens.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let failures = log.accept_failures();
    assert!(
        (6..=11).contains(&failures),
        "{failures} accept failures in 2.2 s"
    );
    assert!(!serving.is_finished(), "the accept loop ended");

    // Descriptors free again: the next try (at most one 1 s period away) accepts, and a
    // client is served.
    drop(fillers);
    rlimit::setrlimit(rlimit::Resource::NOFILE, old.0, old.1).unwrap();
    let client = tls_support::client_config(&cert, &[], None);
    let started = std::time::Instant::now();
    let served = tokio::time::timeout(Duration::from_secs(5), async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut tls = tokio_rustls::TlsConnector::from(Arc::new(client))
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .unwrap();
        tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut resp = Vec::new();
        let _ = tls.read_to_end(&mut resp).await;
        String::from_utf8_lossy(&resp).into_owned()
    })
    .await
    .expect("served once descriptors are free");
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
    assert!(served.ends_with("ok"), "{served}");
    // The next try is at most one back-off period (1 s) away, and the 2.2 s sleep may have
    // overshot into the next period: one full period plus slack for the handshake and the
    // request in a debug build on a loaded machine. Without retries it would never be served.
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(2800),
        "served {waited:?} after descriptors were freed"
    );
    // No more failures once accepting works.
    let after = log.accept_failures();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(log.accept_failures(), after);
    drop(waiting);
}
