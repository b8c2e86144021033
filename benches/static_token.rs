//! Static token lookup: the token file as a token authenticator and behind `Authorization:
//! Bearer`, hit and miss, with 10,000 tokens; plus the secret-digest alternatives considered
//! (see `src/digest.rs`). Target: ≤60 ns per token-authenticator call on one core.
//!
//! `cargo bench --bench static_token -- --warm-up-time 1 --measurement-time 3`

use std::collections::HashMap;
use std::hash::Hasher;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kube_authn::authenticator::{AuthFuture, Context, RequestAuthenticator, TokenAuthenticator};
use kube_authn::request::Bearer;
use kube_authn::token::file::TokenFile;
use sha2::Digest as _;

const N: usize = 10_000;

/// Panics, before any timing, unless the (synchronous) call gives `want`: `Ok(Some(user name))`
/// authenticated, `Ok(None)` not mine, `Err(error text)`; a bench of the wrong path is no bench.
fn assert_outcome(case: &str, got: AuthFuture<'_>, want: Result<Option<&str>, &str>) {
    let got = got
        .into_ready()
        .expect("a token file answers synchronously");
    let got = got
        .as_ref()
        .map(|r| r.as_ref().map(|r| r.user.name()))
        .map_err(|e| e.to_string());
    assert_eq!(got, want.map_err(str::to_string), "{case}");
}

fn token(i: usize) -> String {
    // 43 characters, like base64url of 32 random bytes.
    let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    (0..43)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % 64) as usize] as char
        })
        .collect()
}

fn csv() -> String {
    (0..N)
        .map(|i| {
            format!(
                "{},user-{i},3f2b1c4e-0000-4000-8000-{i:012},\"system:masters,dev\"\n",
                token(i)
            )
        })
        .collect()
}

fn bench(c: &mut Criterion<cpu_time::ThreadCpu>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, csv()).unwrap();
    let file = TokenFile::open(&path).unwrap();
    let memory = TokenFile::from_csv(csv().as_bytes(), "mem").unwrap();
    assert_eq!(file.len(), N);
    let hit = token(N / 2);
    let miss = token(N + 7);
    let ctx = Context::default();
    let hit_user = format!("user-{}", N / 2);
    for (name, authn, token, want) in [
        ("token_file/hit", &file, &hit, Ok(Some(hit_user.as_str()))),
        ("token_file/miss", &file, &miss, Ok(None)),
        (
            "token_file/hit_in_memory",
            &memory,
            &hit,
            Ok(Some(&hit_user)),
        ),
    ] {
        assert_outcome(name, authn.authenticate_token(token, &ctx), want);
    }

    let mut g = c.benchmark_group("token_file");
    g.bench_function("hit", |b| {
        b.iter(|| black_box(file.authenticate_token(black_box(&hit), &ctx).into_ready()))
    });
    g.bench_function("miss", |b| {
        b.iter(|| black_box(file.authenticate_token(black_box(&miss), &ctx).into_ready()))
    });
    g.bench_function("hit_in_memory", |b| {
        b.iter(|| {
            black_box(
                memory
                    .authenticate_token(black_box(&hit), &ctx)
                    .into_ready(),
            )
        })
    });
    g.finish();

    let bearer = Bearer::new(file.clone());
    let req = |t: &str| {
        http::Request::get("/")
            .header("authorization", format!("Bearer {t}"))
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    let (hit_req, miss_req) = (req(&hit), req(&miss));
    // The file's "not mine" becomes Kubernetes' `invalid bearer token` behind `Bearer`.
    for (name, r, want) in [
        (
            "bearer_token_file/hit",
            &hit_req,
            Ok(Some(hit_user.as_str())),
        ),
        (
            "bearer_token_file/miss",
            &miss_req,
            Err("invalid bearer token"),
        ),
    ] {
        assert_outcome(name, bearer.authenticate_request(r, &ctx), want);
    }
    let mut g = c.benchmark_group("bearer_token_file");
    g.bench_function("hit", |b| {
        b.iter(|| {
            black_box(
                bearer
                    .authenticate_request(black_box(&hit_req), &ctx)
                    .into_ready(),
            )
        })
    });
    g.bench_function("miss", |b| {
        b.iter(|| {
            black_box(
                bearer
                    .authenticate_request(black_box(&miss_req), &ctx)
                    .into_ready(),
            )
        })
    });
    g.finish();

    // The alternatives for keying the map (digest of a 43-byte token only), and the insecure
    // baseline of a plain `HashMap<Box<str>, _>` lookup with std's SipHash-1-3.
    let mut g = c.benchmark_group("digest");
    let key = [7u8; 16];
    g.bench_function("siphash24_128", |b| {
        b.iter(|| {
            siphasher::sip128::SipHasher24::new_with_key(&key).hash(black_box(hit.as_bytes()))
        })
    });
    g.bench_function("siphash13_128", |b| {
        b.iter(|| {
            siphasher::sip128::SipHasher13::new_with_key(&key).hash(black_box(hit.as_bytes()))
        })
    });
    g.bench_function("sha256", |b| {
        b.iter(|| sha2::Sha256::digest(black_box(hit.as_bytes())))
    });
    g.bench_function("siphash13_64_std", |b| {
        b.iter(|| {
            let mut h = siphasher::sip::SipHasher13::new_with_key(&key);
            h.write(black_box(hit.as_bytes()));
            h.finish()
        })
    });
    let plain: HashMap<Box<str>, usize> = (0..N).map(|i| (token(i).into_boxed_str(), i)).collect();
    assert_eq!(plain.get(hit.as_str()), Some(&(N / 2)), "plain map: a hit");
    g.bench_function("insecure_plain_map_lookup", |b| {
        b.iter(|| black_box(plain.get(black_box(hit.as_str()))))
    });
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
