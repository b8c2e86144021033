//! Basic auth against a password file of 10,000 users: hit, wrong password, unknown user
//! (the last two must cost the same), directly and behind `Authorization: Basic`.
//!
//! `cargo bench --bench basic_auth -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use base64::Engine;
use criterion::{Criterion, criterion_group, criterion_main};
use kube_authn::authenticator::{AuthFuture, Context, PasswordAuthenticator, RequestAuthenticator};
use kube_authn::password::file::PasswordFile;
use kube_authn::request::Basic;

const N: usize = 10_000;

/// Panics, before any timing, unless the (synchronous) call gives `want`: `Ok(Some(user name))`
/// authenticated, `Ok(None)` not mine, `Err(error text)`; a bench of the wrong path is no bench.
fn assert_outcome(case: &str, got: AuthFuture<'_>, want: Result<Option<&str>, &str>) {
    let got = got
        .into_ready()
        .expect("a password file answers synchronously");
    let got = got
        .as_ref()
        .map(|r| r.as_ref().map(|r| r.user.name()))
        .map_err(|e| e.to_string());
    assert_eq!(got, want.map_err(str::to_string), "{case}");
}

fn bench(c: &mut Criterion<cpu_time::ThreadCpu>) {
    let csv: String = (0..N)
        .map(|i| format!("password-{i:024},user-{i},uid-{i},\"system:masters,dev\"\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("basic.csv");
    std::fs::write(&path, csv).unwrap();
    let file = PasswordFile::open(&path).unwrap();
    let ctx = Context::default();
    let user = "user-5000";
    let good = format!("password-{:024}", 5000);
    let bad = format!("password-{:024}", 5001);

    // The file answers "not mine" for both misses (Kubernetes' passwordfile returns
    // `nil, false, nil`); `Basic` turns that into the error below.
    for (name, u, p, want) in [
        ("hit", user, &good, Ok(Some(user))),
        ("wrong_password", user, &bad, Ok(None)),
        ("unknown_user", "nobody-5000", &good, Ok(None)),
    ] {
        assert_outcome(name, file.authenticate_password(u, p, &ctx), want);
    }

    let mut g = c.benchmark_group("password_file");
    g.bench_function("hit", |b| {
        b.iter(|| {
            black_box(
                file.authenticate_password(black_box(user), black_box(&good), &ctx)
                    .into_ready(),
            )
        })
    });
    g.bench_function("wrong_password", |b| {
        b.iter(|| {
            black_box(
                file.authenticate_password(black_box(user), black_box(&bad), &ctx)
                    .into_ready(),
            )
        })
    });
    g.bench_function("unknown_user", |b| {
        b.iter(|| {
            black_box(
                file.authenticate_password(black_box("nobody-5000"), black_box(&good), &ctx)
                    .into_ready(),
            )
        })
    });
    g.finish();

    let basic = Basic::new(file.clone());
    let req = |u: &str, p: &str| {
        let cred = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
        http::Request::get("/")
            .header("authorization", format!("Basic {cred}"))
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    const INVALID: &str = "invalid username/password combination";
    let cases = [
        ("hit", req(user, &good), Ok(Some(user))),
        ("wrong_password", req(user, &bad), Err(INVALID)),
        ("unknown_user", req("nobody-5000", &good), Err(INVALID)),
    ];
    for (name, r, want) in &cases {
        assert_outcome(name, basic.authenticate_request(r, &ctx), *want);
    }
    let mut g = c.benchmark_group("basic_password_file");
    for (name, r, _) in &cases {
        g.bench_function(*name, |b| {
            b.iter(|| black_box(basic.authenticate_request(black_box(r), &ctx).into_ready()))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(cpu_time::ThreadCpu);
    targets = bench
}
criterion_main!(benches);

/// Criterion measurement of this thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`). The benchmark
/// machine is shared (load average far above its two cores), so wall time mostly measures
/// waiting for a core; CPU time measures the code.
#[path = "count_support/mod.rs"]
#[allow(dead_code)] // only its `cpu_time` measurement is used here
mod count_support;
use count_support::cpu_time;
