//! The whole `AuthenticationLayer` in-process around a no-op inner service.
//!
//! Chain (kube-apiserver's shape): bearer + WebSocket over a 10,000-token `TokenFile` behind the
//! audience-agnostic wrapper (API audiences set), the authenticated group adder, and anonymous
//! behind a fail-on-error union. Metrics on. Cases: a valid token
//! (the hot path), an unknown token (401), no credential (anonymous). Request construction is
//! outside the measurement; dropping the response is inside. `inner_only` is the no-op service
//! alone, for subtraction.
//!
//! Run: `cargo bench --bench middleware -- --warm-up-time 1 --measurement-time 3`
//!
//! On a loaded machine wall-clock figures are noise; instruction counts are not. With
//! `MW_COUNT=<case>` (`valid_token`, `unknown_token_401`, `anonymous`, `inner_only`) and
//! `MW_ITERS=<n>` the binary runs the case `n` times outside criterion, for
//! `valgrind --tool=callgrind` (instructions per request = difference of two runs divided by
//! the difference of `n`, leaving out `OnceCell::initialize` and `clock_gettime`: quanta's
//! one-time clock calibration runs a variable number of rounds and would otherwise add
//! ±200 instructions of noise per request).
//!
//! With `MW_ONCPU=<iterations>` it prints each case's on-CPU time per request instead (thread
//! CPU time from `/proc/thread-self/schedstat`, best of three runs; request construction
//! included, so subtract `inner_only`): robust to a shared machine, where wall-clock
//! figures include time spent descheduled.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use criterion::{BatchSize, Criterion, criterion_group};
use kube_authn::authenticator::Audiences;
use kube_authn::chain::{ChainBuilder, anonymous::Anonymous, audiences::AudienceAgnostic};
use kube_authn::metrics::Metrics;
use kube_authn::middleware::AuthenticationLayer;
use kube_authn::token::file::TokenFile;
use kube_authn::user::UserInfo;
use tower::{Layer, Service, service_fn};

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

type Svc = Box<dyn FnMut(http::Request<()>) -> http::StatusCode>;
type Case = (&'static str, Option<String>, u16, Svc);

/// The services under test, by case name.
fn services() -> Vec<Case> {
    // kube-apiserver's wiring: the token file behind the audience-agnostic wrapper, with API
    // audiences set, so the intersection runs on every request.
    let audiences = Audiences::from(["https://kubernetes.default.svc"]);
    let tokens = TokenFile::from_tokens((0..10_000).map(|j| {
        let user = UserInfo::builder(format!("user-{j}"))
            .uid(format!("{j}"))
            .group("team")
            .build();
        (format!("{j:032}"), user)
    }));
    let chain = ChainBuilder::new()
        .token(AudienceAgnostic::new(audiences.clone(), tokens))
        .anonymous(Anonymous::new())
        .build();
    let layer = AuthenticationLayer::builder(chain)
        .api_audiences(audiences)
        .metrics(Arc::new(Metrics::new()))
        .build();
    let noop = service_fn(|_: http::Request<()>| {
        std::future::ready(Ok::<_, std::convert::Infallible>(http::Response::new(())))
    });
    let good = format!("Bearer {:032}", 421);
    let mut out: Vec<Case> = Vec::new();
    for (name, auth, status) in [
        ("valid_token", Some(good.clone()), 200),
        (
            "unknown_token_401",
            Some("Bearer 99999999999999999999999999999999".to_owned()),
            401,
        ),
        ("anonymous", None, 200),
    ] {
        let mut svc = layer.layer(noop);
        out.push((
            name,
            auth,
            status,
            Box::new(move |req| now(svc.call(req)).unwrap().status()),
        ));
    }
    let mut inner = noop;
    out.push((
        "inner_only",
        Some(good),
        200,
        Box::new(move |req| now(inner.call(req)).unwrap().status()),
    ));
    out
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("middleware");
    for (name, auth, status, mut svc) in services() {
        assert_eq!(svc(request(auth.as_deref())), status);
        group.bench_function(name, |b| {
            b.iter_batched(
                || request(auth.as_deref()),
                |req| black_box(svc(req)),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);

/// Nanoseconds this thread has spent on a CPU (Linux `schedstat`).
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() {
    if let Ok(n) = std::env::var("MW_ONCPU") {
        let n: u64 = n.parse().expect("MW_ONCPU is a number");
        let mut inner = 0.0;
        for (name, auth, status, mut svc) in services().into_iter().rev() {
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t0 = thread_cpu_ns().expect("Linux schedstat");
                for _ in 0..n {
                    let req = request(auth.as_deref());
                    assert_eq!(black_box(svc(black_box(req))), status);
                }
                let ns = (thread_cpu_ns().unwrap() - t0) as f64 / n as f64;
                best = best.min(ns);
            }
            if name == "inner_only" {
                inner = best;
                println!("on-cpu: {name}: {best:.0} ns/request");
            } else {
                println!(
                    "on-cpu: {name}: {best:.0} ns/request, middleware {:.0} ns",
                    best - inner
                );
            }
        }
        return;
    }
    if let (Ok(case), Ok(n)) = (std::env::var("MW_COUNT"), std::env::var("MW_ITERS")) {
        let n: usize = n.parse().expect("MW_ITERS is a number");
        let (_, auth, status, mut svc) = services()
            .into_iter()
            .find(|(name, ..)| *name == case)
            .expect("MW_COUNT names a case");
        for _ in 0..n {
            let req = request(auth.as_deref());
            assert_eq!(black_box(svc(black_box(req))), status);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
