//! The whole `AuthenticationLayer` in-process around a no-op inner service.
//!
//! Chain (kube-apiserver's shape): bearer + WebSocket over an in-memory token map
//! (`HashMap`-backed `SyncTokenFn`; the token file lands on another branch), the authenticated
//! group adder, and anonymous behind a fail-on-error union. Metrics on. Cases: a valid token
//! (the hot path), an unknown token (401), no credential (anonymous). Request construction is
//! outside the measurement; dropping the response is inside. `inner_only` is the no-op service
//! alone, for subtraction.
//!
//! Run: `cargo bench --bench middleware -- --warm-up-time 1 --measurement-time 3`

use std::collections::HashMap;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use kube_authn::authenticator::{AuthResult, Context, Response, SyncTokenFn};
use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
use kube_authn::metrics::Metrics;
use kube_authn::middleware::AuthenticationLayer;
use kube_authn::user::UserInfo;
use tower::{service_fn, Layer, Service};

/// Polls a future that must be ready (everything here answers synchronously).
fn now<F: Future>(f: F) -> F::Output {
    match pin!(f).poll(&mut TaskContext::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("not ready"),
    }
}

fn request(auth: Option<&str>) -> http::Request<()> {
    let mut b = http::Request::get("/api/v1/namespaces/default/pods")
        .header("accept", "application/json")
        .header(
            "user-agent",
            "kubectl/v1.31.0 (linux/amd64) kubernetes/abcdef",
        );
    if let Some(a) = auth {
        b = b.header("authorization", a);
    }
    b.body(()).unwrap()
}

fn bench(c: &mut Criterion) {
    let map: HashMap<String, Response> = (0..1000)
        .map(|j| {
            let user = UserInfo::builder(format!("user-{j}"))
                .uid(format!("{j}"))
                .group("team")
                .build();
            (format!("{j:032}"), Response::new(Arc::new(user)))
        })
        .collect();
    let tokens =
        SyncTokenFn::new(move |t: &str, _: &Context| -> AuthResult { Ok(map.get(t).cloned()) });
    let chain = ChainBuilder::new()
        .token(tokens)
        .anonymous(Anonymous::new())
        .build();
    let layer = AuthenticationLayer::builder(chain)
        .metrics(Arc::new(Metrics::new()))
        .build();
    let noop = service_fn(|_: http::Request<()>| {
        std::future::ready(Ok::<_, std::convert::Infallible>(http::Response::new(())))
    });
    let mut svc = layer.layer(noop);

    let mut group = c.benchmark_group("middleware");
    let good = format!("Bearer {:032}", 421);
    let cases = [
        ("valid_token", Some(good.as_str()), 200),
        (
            "unknown_token_401",
            Some("Bearer 99999999999999999999999999999999"),
            401,
        ),
        ("anonymous", None, 200),
    ];
    for (name, auth, status) in cases {
        assert_eq!(now(svc.call(request(auth))).unwrap().status(), status);
        group.bench_function(name, |b| {
            b.iter_batched(
                || request(auth),
                |req| black_box(now(svc.call(req)).unwrap().status()),
                BatchSize::SmallInput,
            )
        });
    }
    let mut inner = noop;
    group.bench_function("inner_only", |b| {
        b.iter_batched(
            || request(Some(&good)),
            |req| black_box(now(inner.call(req)).unwrap().status()),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
