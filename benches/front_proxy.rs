//! Front-proxy request authentication after the proxy certificate is verified (cached per
//! connection): identity from headers with 3 groups and 2 extras.
//!
//! `cargo bench --bench front_proxy -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kube_authn::request::{FrontProxy, RequestHeaderConfig};
use kube_authn::tls::PeerCertificates;

#[path = "x509_support/mod.rs"]
mod x509_pki;

fn bench(c: &mut Criterion) {
    let pki = x509_pki::Pki::new();
    let root = pki.issue("fp-root", false, "/CN=front-proxy-ca", true, None);
    let proxy_cert = pki.issue(
        "fp-client",
        false,
        "/CN=front-proxy-client",
        false,
        Some("fp-root"),
    );
    let pem: String = {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode(root.as_ref());
        format!("-----BEGIN CERTIFICATE-----\n{b64}\n-----END CERTIFICATE-----\n")
    };
    let fp = FrontProxy::new(RequestHeaderConfig {
        client_ca_pem: Some(pem.into_bytes()),
        allowed_names: vec!["front-proxy-client".into()],
        ..RequestHeaderConfig::standard()
    })
    .unwrap();
    let mut req = http::Request::get("/apis/metrics.k8s.io/v1beta1/pods")
        .header("accept", "application/json")
        .header("user-agent", "kube-apiserver/v1.33")
        .header("x-remote-user", "jane")
        .header("x-remote-uid", "1c9e2f")
        .header("x-remote-group", "system:authenticated")
        .header("x-remote-group", "developers")
        .header("x-remote-group", "oncall")
        .header("x-remote-extra-scopes", "view")
        .header("x-remote-extra-acme.com%2fteam", "payments")
        .body(())
        .unwrap();
    req.extensions_mut()
        .insert(PeerCertificates::from_handshake(vec![proxy_cert.clone()]));
    let (parts, _) = req.into_parts();
    let user = fp.authenticate_parts(&parts).unwrap().unwrap().user;
    assert_eq!(user.groups().count(), 3);
    assert_eq!(user.extra().len(), 2);

    let mut g = c.benchmark_group("front_proxy");
    g.bench_function("headers only (3 groups, 2 extras)", |b| {
        b.iter(|| {
            black_box(
                fp.user_from_headers_unverified(black_box(&parts.headers))
                    .unwrap(),
            )
        })
    });
    g.bench_function("request (cached proxy verify + headers)", |b| {
        b.iter(|| black_box(fp.authenticate_parts(black_box(&parts)).unwrap()))
    });
    // A new connection every time: the proxy certificate is verified (what k8s.io/apiserver
    // does on every request), then the headers are read.
    g.bench_function("first request (verify proxy cert + headers)", |b| {
        b.iter_batched(
            || {
                let mut parts = parts.clone();
                parts
                    .extensions
                    .insert(PeerCertificates::from_handshake(vec![proxy_cert.clone()]));
                parts
            },
            |parts| black_box(fp.authenticate_parts(&parts).unwrap()),
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
