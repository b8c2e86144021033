//! A bearer token through a union of 8 token authenticators, in-process.
//!
//! Each authenticator is a `HashMap`-backed `SyncTokenFn` (the token file lands on another
//! branch; swap it in when merged). Cases: the token matches the last authenticator (the union
//! tries all 8), the first one, and none (an aggregate error: the path an attacker picks).
//!
//! Run: `cargo bench --bench union -- --warm-up-time 1 --measurement-time 3`

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
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

fn bench(c: &mut Criterion) {
    let union = TokenUnion::new((0..8).map(table).collect()).into_dyn();
    let bearer = Bearer::from_arc(union);
    let ctx = Context::default();
    let mut group = c.benchmark_group("union8");
    for (name, token) in [
        ("last_matches", format!("07{:030}", 42)),
        ("first_matches", format!("00{:030}", 42)),
        ("none_matches", format!("99{:030}", 42)),
    ] {
        let (parts, _) = http::Request::get("/api/v1/pods")
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .unwrap()
            .into_parts();
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
criterion_main!(benches);
