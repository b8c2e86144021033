//! A bearer token through a union of 8 token authenticators, in-process.
//!
//! Each authenticator is a `HashMap`-backed `SyncTokenFn` (the token file lands on another
//! branch; swap it in when merged). Cases: the token matches the last authenticator (the union
//! tries all 8), the first one, and none (an aggregate error: the path an attacker picks).
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
//! of a 32-byte token) costs ≈25–30 ns.

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

fn cases() -> [(&'static str, http::request::Parts); 3] {
    [
        ("last_matches", format!("07{:030}", 42)),
        ("first_matches", format!("00{:030}", 42)),
        ("none_matches", format!("99{:030}", 42)),
    ]
    .map(|(name, token)| {
        let (parts, _) = http::Request::get("/api/v1/pods")
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .unwrap()
            .into_parts();
        (name, parts)
    })
}

fn bench(c: &mut Criterion) {
    let union = TokenUnion::new((0..8).map(table).collect()).into_dyn();
    let bearer = Bearer::from_arc(union);
    let ctx = Context::default();
    let mut group = c.benchmark_group("union8");
    for (name, parts) in cases() {
        group.bench_function(name, |b| {
            b.iter(|| {
                let result = bearer
                    .authenticate_request(black_box(&parts), &ctx)
                    .into_ready()
                    .expect("sync chain");
                black_box(result.is_ok())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    if let (Ok(case), Ok(n)) = (std::env::var("UNION_COUNT"), std::env::var("UNION_ITERS")) {
        let n: usize = n.parse().expect("UNION_ITERS is a number");
        let bearer = Bearer::from_arc(TokenUnion::new((0..8).map(table).collect()).into_dyn());
        let ctx = Context::default();
        let (_, parts) = cases()
            .into_iter()
            .find(|(name, _)| *name == case)
            .expect("UNION_COUNT names a case");
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
