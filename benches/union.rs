//! A bearer token through a union of 8 token authenticators, in-process.
//!
//! Each authenticator is a `HashMap`-backed `SyncTokenFn` of 100 tokens, so the figures are the
//! union's own cost and not a token store's (the token file, `TokenFile`, is measured in
//! `benches/static_token.rs`). Cases: the token matches the last authenticator (the union tries
//! all 8), the first one, and none (the path an attacker picks). When none matches, each
//! authenticator answers "not mine", so the union does too (an aggregate error arises only from
//! members that return errors) and `Bearer` answers Kubernetes' `invalid bearer token`. Each
//! case's outcome is asserted once before it is timed.
//!
//! A second group, `union8_errors`, times the error paths with 8 members that each fail with
//! their own error (a backend that is down): the plain union tries all 8 and answers an
//! aggregate of the 8 errors (Kubernetes' `utilerrors.NewAggregate`), and the fail-on-error
//! union (`TokenUnion::fail_on_error`) stops at the first. Criterion, 2026-11-29, load average
//! ≈ 4.7 on the 2-core Xeon (the `union8` group ran at 312 / 123 / 254 ns in the same session):
//! all 8 failing, aggregated ≈ 220 ns; fail-on-error, first member fails ≈ 61 ns.
//!
//! Run: `cargo bench --bench union -- --warm-up-time 1 --measurement-time 3`
//!
//! For load-independent figures: `UNION_COUNT=<case> UNION_ITERS=<n>` runs one case `n` times
//! outside criterion, for `valgrind --tool=callgrind`.
//!
//! Measured on the shared 2-core box (load average 12–15, so criterion's wall-clock figures
//! were 3–4× these): instructions (callgrind) and CPU time (user time of 3·10⁶ calls):
//!
//! | case | instructions | CPU time |
//! |---|---|---|
//! | last of 8 matches | ≈4 030 | ≈330 ns |
//! | first matches | ≈1 740 | ≈180 ns |
//! | none matches (`invalid bearer token`) | ≈4 100 | ≈265 ns |
//!
//! About 100 ns of each is the `Authorization` parsing; each further `HashMap` probe (SipHash
//! of a 32-byte token) costs ≈25–30 ns. Those CPU times are from an older machine (an AMD
//! EPYC) under heavy load; criterion on the current Xeon, less loaded (`conformance/bench.sh`,
//! `docs/performance.md`): last of 8 ≈ 190 ns, first ≈ 70 ns, none ≈ 165–175 ns.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group};
use kube_authn::authenticator::{
    AuthResult, Context, RequestAuthenticator, Response, SyncTokenFn, TokenAuthenticator,
};
use kube_authn::chain::union::TokenUnion;
use kube_authn::request::Bearer;
use kube_authn::user::UserInfo;

fn table(i: usize) -> Arc<dyn TokenAuthenticator> {
    let map: HashMap<String, Response> = (0..100)
        .map(|j| {
            let token = format!("{i:02}{j:030}"); // 32-byte opaque tokens
            let user = UserInfo::builder(format!("user-{i}-{j}"))
                .uid(format!("{i}{j}"))
                .group("team")
                .build();
            (token, Response::new(Arc::new(user)))
        })
        .collect();
    Arc::new(SyncTokenFn::new(
        move |t: &str, _: &Context| -> AuthResult { Ok(map.get(t).cloned()) },
    ))
}

/// The outcome a case must give: `Ok(Some(user name))`, `Ok(None)` (not mine) or
/// `Err(error text)`.
type Want = Result<Option<&'static str>, &'static str>;

fn cases() -> [(&'static str, http::request::Parts, Want); 3] {
    [
        (
            "last_matches",
            format!("07{:030}", 42),
            Ok(Some("user-7-42")),
        ),
        (
            "first_matches",
            format!("00{:030}", 42),
            Ok(Some("user-0-42")),
        ),
        (
            "none_matches",
            format!("99{:030}", 42),
            Err("invalid bearer token"),
        ),
    ]
    .map(|(name, token, want)| {
        let (parts, _) = http::Request::get("/api/v1/pods")
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .unwrap()
            .into_parts();
        (name, parts, want)
    })
}

/// Panics, before any timing, unless `got` is `want`: a bench of the wrong path is no bench.
fn assert_outcome(case: &str, got: AuthResult, want: Want) {
    if let Err(e) = &got {
        assert!(e.errors().is_empty(), "{case}: unexpected aggregate {e}");
    }
    let got = got
        .as_ref()
        .map(|r| r.as_ref().map(|r| r.user.name()))
        .map_err(|e| e.to_string());
    assert_eq!(got, want.map_err(str::to_string), "{case}");
}

/// Times one request through `bearer` (its outcome checked beforehand by the caller).
fn time(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    bearer: &Bearer<dyn TokenAuthenticator>,
    parts: &http::request::Parts,
) {
    let ctx = Context::default();
    group.bench_function(name, |b| {
        b.iter(|| {
            let result = bearer
                .authenticate_request(black_box(parts), &ctx)
                .into_ready()
                .expect("sync chain");
            black_box(result.is_ok())
        })
    });
}

fn bench(c: &mut Criterion) {
    let union = TokenUnion::new((0..8).map(table).collect()).into_dyn();
    let bearer = Bearer::from_arc(union);
    let ctx = Context::default();
    let mut group = c.benchmark_group("union8");
    for (name, parts, want) in cases() {
        let once = bearer.authenticate_request(&parts, &ctx).into_ready();
        assert_outcome(name, once.expect("sync chain"), want);
        time(&mut group, name, &bearer, &parts);
    }
    group.finish();
}

/// A member that fails every token with its own error.
fn failing(i: usize) -> Arc<dyn TokenAuthenticator> {
    const TEXTS: [&str; 8] = [
        "backend 0 down",
        "backend 1 down",
        "backend 2 down",
        "backend 3 down",
        "backend 4 down",
        "backend 5 down",
        "backend 6 down",
        "backend 7 down",
    ];
    let text = TEXTS[i];
    Arc::new(SyncTokenFn::new(
        move |_: &str, _: &Context| -> AuthResult { Err(kube_authn::Error::msg(text)) },
    ))
}

/// The error paths: (case, union, the error's text, how many errors it aggregates).
fn error_cases() -> [(&'static str, Bearer<dyn TokenAuthenticator>, String, usize); 2] {
    let all: String = (0..8)
        .map(|i| format!("backend {i} down"))
        .collect::<Vec<_>>()
        .join(", ");
    [
        (
            "all_fail_aggregated",
            Bearer::from_arc(TokenUnion::new((0..8).map(failing).collect()).into_dyn()),
            format!("[{all}]"),
            8,
        ),
        (
            "fail_on_error_first",
            Bearer::from_arc(TokenUnion::fail_on_error((0..8).map(failing).collect()).into_dyn()),
            "backend 0 down".to_owned(),
            0,
        ),
    ]
}

fn bench_errors(c: &mut Criterion) {
    let (parts, _) = http::Request::get("/api/v1/pods")
        .header("authorization", format!("Bearer {:032}", 42))
        .body(())
        .unwrap()
        .into_parts();
    let ctx = Context::default();
    let mut group = c.benchmark_group("union8_errors");
    for (name, bearer, text, aggregated) in error_cases() {
        let once = bearer.authenticate_request(&parts, &ctx).into_ready();
        let err = once.expect("sync chain").expect_err(name);
        assert_eq!(
            (err.to_string(), err.errors().len()),
            (text, aggregated),
            "{name}"
        );
        time(&mut group, name, &bearer, &parts);
    }
    group.finish();
}

criterion_group!(benches, bench, bench_errors);

fn main() {
    if let (Ok(case), Ok(n)) = (std::env::var("UNION_COUNT"), std::env::var("UNION_ITERS")) {
        let n: usize = n.parse().expect("UNION_ITERS is a number");
        let bearer = Bearer::from_arc(TokenUnion::new((0..8).map(table).collect()).into_dyn());
        let ctx = Context::default();
        let (_, parts, want) = cases()
            .into_iter()
            .find(|(name, _, _)| *name == case)
            .expect("UNION_COUNT names a case");
        let once = bearer.authenticate_request(&parts, &ctx).into_ready();
        assert_outcome(&case, once.expect("sync chain"), want);
        for _ in 0..n {
            let r = bearer
                .authenticate_request(black_box(&parts), &ctx)
                .into_ready();
            black_box(r.is_ok());
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
