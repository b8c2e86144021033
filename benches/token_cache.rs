//! Token cache: hit for a 1.2 KB token, key-hash alternatives, 8 threads hitting one cache.
//!
//! `cargo bench --bench token_cache -- --warm-up-time 1 --measurement-time 3`
//!
//! Every timed call must be a cache hit that yields a user (a miss returns a pending future,
//! which would time something much cheaper than a lookup), and each loop checks afterwards that
//! the cache counted no miss.
//!
//! Besides the criterion rows, `token_cache/hit_on_cpu` prints on-CPU figures (`on-cpu: …`
//! lines, long loops outside criterion). It runs under `cargo bench` when the criterion filter
//! is empty or selects `token_cache/hit_on_cpu` (`-- hit_on_cpu`, `-- token_cache`), or with
//! `KUBE_AUTHN_BENCH_EXTRAS=1` whatever the filter (see `filter_support`).
//!
//! Counting mode, for callgrind: `TOKEN_CACHE_COUNT=hit` (HMAC-SHA256 keys) or `hit-gmac`
//! (AES-GMAC keys) with `TOKEN_CACHE_ITERS=<n>` runs `n` checked hits of a 1.2 KB token and
//! exits; the per-hit cost is the difference of two runs' totals divided by the difference of
//! their `n` (the set-up is the same in both). With `TOKEN_CACHE_ONCPU=1` the loop's on-CPU
//! time per hit is printed (thread CPU time).

#[path = "count_support/mod.rs"]
#[allow(dead_code)]
mod count_support;
#[path = "filter_support/mod.rs"]
mod filter_support;

use std::hash::Hasher;
use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kube_authn::authenticator::{Audiences, Context, Response, SyncTokenFn, TokenAuthenticator};
use kube_authn::token::cache::{CachedTokenAuthenticator, KeyFunc};
use kube_authn::user::UserInfo;
use sha2::Digest;

/// One cache lookup that must be a hit with a user: a miss (a pending future), an error or
/// "not mine" panics. Returns the response, dropped by the caller as the plain call's would be.
#[inline(always)]
fn hit_user<T: TokenAuthenticator + 'static>(
    cache: &CachedTokenAuthenticator<T>,
    token: &str,
    ctx: &Context,
) -> Response {
    cache
        .authenticate_token(token, ctx)
        .into_ready()
        .expect("a cache hit (a miss returns a pending future)")
        .expect("a cached success")
        .expect("a user")
}

/// Panics unless `cache` counted no miss since `before` (its `stats().misses`).
fn assert_no_miss<T: TokenAuthenticator + 'static>(
    what: &str,
    cache: &CachedTokenAuthenticator<T>,
    before: u64,
) {
    let after = cache.stats().misses;
    assert_eq!(
        after, before,
        "{what}: the cache counted misses while timed"
    );
}

/// A 1.2 KB JWT-shaped token (fixed, checked-in material).
fn token_1200(i: usize) -> String {
    let mut t = format!("eyJhbGciOiJSUzI1NiIsImtpZCI6ImJlbmNoIn0.{i:08}.");
    while t.len() < 1200 {
        t.push_str("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_");
    }
    t.truncate(1200);
    t
}

fn cache_with(tokens: &[String]) -> CachedTokenAuthenticator<impl TokenAuthenticator + 'static> {
    cache_keyed(tokens, KeyFunc::random().unwrap())
}

fn cache_keyed(
    tokens: &[String],
    keys: KeyFunc,
) -> CachedTokenAuthenticator<impl TokenAuthenticator + 'static> {
    let user = Arc::new(
        UserInfo::builder("system:serviceaccount:default:bench")
            .uid("5e2d1c1e-0000-4000-8000-000000000001")
            .groups(["system:serviceaccounts", "system:serviceaccounts:default"])
            .build(),
    );
    let cache = CachedTokenAuthenticator::builder(SyncTokenFn::new(move |_: &str, _: &Context| {
        Ok(Some(Response::new(user.clone())))
    }))
    .success_ttl(Duration::from_secs(3600))
    .key_func(keys)
    .build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for t in tokens {
            cache
                .authenticate_token(t, &Context::default())
                .await
                .unwrap();
            cache
                .authenticate_token(
                    t,
                    &Context::with_audiences(Audiences::from(["https://kubernetes.default.svc"])),
                )
                .await
                .unwrap();
        }
    });
    cache
}

/// `TOKEN_CACHE_COUNT` (see the module documentation): runs the hits and exits.
fn count_mode(want: &str) -> ! {
    let iters: usize = std::env::var("TOKEN_CACHE_ITERS")
        .expect("TOKEN_CACHE_ITERS")
        .parse()
        .expect("TOKEN_CACHE_ITERS is a number");
    let tokens: Vec<String> = (0..1000).map(token_1200).collect();
    let keys = match want {
        "hit" => KeyFunc::random().unwrap(),
        "hit-gmac" => KeyFunc::gmac_random().unwrap(),
        other => {
            eprintln!("TOKEN_CACHE_COUNT={other:?}: unknown mode (hit, hit-gmac)");
            std::process::exit(2);
        }
    };
    let cache = cache_keyed(&tokens, keys);
    let ctx = Context::default();
    let misses = cache.stats().misses;
    let i = std::cell::Cell::new(0usize);
    // `run_and_exit` exits: the miss check runs inside the last call.
    count_support::run_and_exit("TOKEN_CACHE", want, iters, &|| {
        let n = i.get();
        i.set(n + 1);
        drop(black_box(hit_user(&cache, &tokens[n % tokens.len()], &ctx)));
        if n + 1 == iters {
            assert_no_miss("TOKEN_CACHE_COUNT", &cache, misses);
        }
    })
}

fn hit(c: &mut Criterion) {
    if let Ok(want) = std::env::var("TOKEN_CACHE_COUNT") {
        count_mode(&want);
    }
    let tokens: Vec<String> = (0..1000).map(token_1200).collect();
    let cache = cache_with(&tokens);
    let gmac = cache_keyed(&tokens, KeyFunc::gmac_random().unwrap());
    let plain = Context::default();
    let with_auds = Context::with_audiences(Audiences::from(["https://kubernetes.default.svc"]));
    let (misses, gmac_misses) = (cache.stats().misses, gmac.stats().misses);
    let mut g = c.benchmark_group("token_cache/hit_1.2KB");
    g.bench_function("no audiences", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % tokens.len();
            hit_user(&cache, &tokens[i], &plain)
        })
    });
    g.bench_function("no audiences, gmac keys", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % tokens.len();
            hit_user(&gmac, &tokens[i], &plain)
        })
    });
    g.bench_function("with audiences", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % tokens.len();
            hit_user(&cache, &tokens[i], &with_auds)
        })
    });
    g.finish();
    assert_no_miss("token_cache/hit_1.2KB", &cache, misses);
    assert_no_miss("token_cache/hit_1.2KB gmac", &gmac, gmac_misses);
}

/// On-CPU time per operation over long loops (1,000,000 calls each; thread CPU time,
/// `CLOCK_THREAD_CPUTIME_ID`), printed as `on-cpu: <name>: <ns>/op` (best of 3). On a
/// shared, overloaded box criterion's wall-clock figures include time spent descheduled.
fn on_cpu(name: &str, iters: u64, mut op: impl FnMut(u64)) {
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t0 = count_support::on_cpu_ns();
        for i in 0..iters {
            op(i);
        }
        let ns = (count_support::on_cpu_ns() - t0) as f64 / iters as f64;
        best = best.min(ns);
    }
    println!("on-cpu: {name}: {best:.0} ns/op");
}

fn hit_cpu_time(_c: &mut Criterion) {
    // Long loops: only under `cargo bench` (criterion gets `--bench`), not when `cargo test`
    // runs the bench targets once as a smoke test, and only when the filter selects them.
    if !filter_support::extra_selected("token_cache/hit_on_cpu") {
        return;
    }
    let tokens: Vec<String> = (0..1000).map(token_1200).collect();
    let cache = cache_with(&tokens);
    let ctx = Context::default();
    let f = KeyFunc::new(&[7u8; 32]);
    let misses = cache.stats().misses;
    on_cpu("cache hit 1.2 KB token", 1_000_000, |i| {
        let t = &tokens[(i % 1000) as usize];
        drop(std::hint::black_box(hit_user(&cache, t, &ctx)));
    });
    assert_no_miss("on-cpu cache hit", &cache, misses);
    let gmac = cache_keyed(&tokens, KeyFunc::gmac_random().unwrap());
    let misses = gmac.stats().misses;
    on_cpu("cache hit 1.2 KB token, gmac keys", 1_000_000, |i| {
        let t = &tokens[(i % 1000) as usize];
        drop(std::hint::black_box(hit_user(&gmac, t, &ctx)));
    });
    assert_no_miss("on-cpu cache hit, gmac keys", &gmac, misses);
    let g = KeyFunc::gmac(&[7u8; 32]);
    on_cpu("key gmac 1.2 KB", 1_000_000, |i| {
        std::hint::black_box(g.key(&tokens[(i % 1000) as usize], None::<&[&str]>));
    });
    on_cpu("key hmac-sha256 1.2 KB", 1_000_000, |i| {
        std::hint::black_box(f.key(&tokens[(i % 1000) as usize], None::<&[&str]>));
    });
    on_cpu("key sha256 1.2 KB", 1_000_000, |i| {
        let d: [u8; 32] = sha2::Sha256::digest(tokens[(i % 1000) as usize].as_bytes()).into();
        std::hint::black_box(d);
    });
    on_cpu("key siphash13-128 1.2 KB", 1_000_000, |i| {
        let mut h = siphasher::sip128::SipHasher13::new_with_keys(1, 2);
        h.write(tokens[(i % 1000) as usize].as_bytes());
        std::hint::black_box(siphasher::sip128::Hasher128::finish128(&h));
    });
}

fn key_hashes(c: &mut Criterion) {
    let token = token_1200(7);
    let mut g = c.benchmark_group("token_cache/key_1.2KB");
    g.throughput(Throughput::Bytes(token.len() as u64));
    let f = KeyFunc::new(&[7u8; 32]);
    g.bench_function("hmac-sha256 (k8s keyFunc, used)", |b| {
        b.iter(|| f.key(std::hint::black_box(&token), None::<&[&str]>))
    });
    let aws_key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &[7u8; 32]);
    g.bench_function("hmac-sha256 (aws-lc-rs)", |b| {
        b.iter(|| {
            let mut ctx = aws_lc_rs::hmac::Context::with_key(&aws_key);
            ctx.update(&(token.len() as u32).to_be_bytes());
            ctx.update(std::hint::black_box(token.as_bytes()));
            ctx.update(&0u32.to_be_bytes());
            ctx.sign()
        })
    });
    let gcm = aws_lc_rs::aead::LessSafeKey::new(
        aws_lc_rs::aead::UnboundKey::new(&aws_lc_rs::aead::AES_256_GCM, &[7u8; 32]).unwrap(),
    );
    g.bench_function("gmac (aes-256-gcm, aad only; aws-lc-rs)", |b| {
        b.iter(|| {
            let nonce = aws_lc_rs::aead::Nonce::assume_unique_for_key([0u8; 12]);
            let mut empty: [u8; 0] = [];
            gcm.seal_in_place_separate_tag(
                nonce,
                aws_lc_rs::aead::Aad::from(std::hint::black_box(token.as_bytes())),
                &mut empty,
            )
            .unwrap()
        })
    });
    g.bench_function("sha256", |b| {
        b.iter(|| -> [u8; 32] {
            sha2::Sha256::digest(std::hint::black_box(token.as_bytes())).into()
        })
    });
    g.bench_function("siphash13-128 keyed", |b| {
        b.iter(|| {
            let mut h = siphasher::sip128::SipHasher13::new_with_keys(1, 2);
            h.write(std::hint::black_box(token.as_bytes()));
            siphasher::sip128::Hasher128::finish128(&h)
        })
    });
    g.finish();
}

/// `n` threads hitting one cache. Each iteration spawns the workers (untimed), releases them
/// together through a barrier, and reports the span from the first worker's start to the last
/// worker's end, as each worker measured its own loop: thread creation and joining are not
/// timed.
fn threads(c: &mut Criterion) {
    let tokens: Arc<Vec<String>> = Arc::new((0..1000).map(token_1200).collect());
    let cache = Arc::new(cache_with(&tokens));
    let misses = cache.stats().misses;
    let mut g = c.benchmark_group("token_cache/threads");
    for n in [1usize, 2, 8] {
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(
            BenchmarkId::new("hit per op (aggregate)", n),
            &n,
            |b, &n| {
                b.iter_custom(|iters| {
                    // Exactly `iters` hits in all, shared out as evenly as possible.
                    let (each, extra) = (iters as usize / n, iters as usize % n);
                    let barrier = Barrier::new(n);
                    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
                        let workers: Vec<_> = (0..n)
                            .map(|t| {
                                let (cache, tokens, barrier) = (&cache, &tokens, &barrier);
                                let per = each + usize::from(t < extra);
                                s.spawn(move || {
                                    let ctx = Context::default();
                                    let mut i = t * 97;
                                    barrier.wait();
                                    let start = Instant::now();
                                    for _ in 0..per {
                                        i = (i + 1) % tokens.len();
                                        drop(std::hint::black_box(hit_user(
                                            &**cache, &tokens[i], &ctx,
                                        )));
                                    }
                                    (start, Instant::now())
                                })
                            })
                            .collect();
                        workers.into_iter().map(|w| w.join().unwrap()).collect()
                    });
                    let first = spans.iter().map(|s| s.0).min().unwrap();
                    let last = spans.iter().map(|s| s.1).max().unwrap();
                    last - first
                })
            },
        );
    }
    g.finish();
    assert_no_miss("token_cache/threads", &cache, misses);
}

criterion_group!(benches, hit, hit_cpu_time, key_hashes, threads);
criterion_main!(benches);
