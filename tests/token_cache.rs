//! Behaviour of the token cache (k8s `cached_token_authenticator_test.go`), with an injected clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kube_authn::authenticator::{
    AsyncTokenFn, Audiences, AuthResult, Context, Response, SyncTokenFn, TokenAuthenticator,
};
use kube_authn::token::cache::{AUTHN_CRASH, CacheMetrics, CachedTokenAuthenticator, ManualClock};
use kube_authn::user::UserInfo;
use kube_authn::{Error, ErrorKind};

fn user(name: &str) -> AuthResult {
    Ok(Some(Response::new(Arc::new(UserInfo::new(name)))))
}

fn name(r: &AuthResult) -> Option<String> {
    r.as_ref()
        .ok()
        .and_then(|o| o.as_ref())
        .map(|r| r.user.name().to_owned())
}

/// A TTL past the clock's range ("never expire") caches instead of overflowing (the store ran
/// in a detached task whose panic turned every success into an error).
#[tokio::test]
async fn a_ttl_of_duration_max_caches_instead_of_panicking() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let backend = SyncTokenFn::new(move |_: &str, _: &Context| {
        c.fetch_add(1, Ordering::SeqCst);
        user("forever")
    });
    let clock = Arc::new(ManualClock::new());
    let cache = CachedTokenAuthenticator::builder(backend)
        .success_ttl(Duration::MAX)
        .failure_ttl(Duration::MAX)
        .clock(clock.clone())
        .build();
    let ctx = Context::default();
    for _ in 0..3 {
        let got = cache.authenticate_token("t", &ctx).await;
        assert_eq!(name(&got).as_deref(), Some("forever"), "{got:?}");
        clock.advance(Duration::from_secs(365 * 24 * 3600));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "cached, not recomputed");
}

/// k8s `TestCachedTokenAuthenticator`: successes cached for 1 min, failures not cached.
#[tokio::test]
async fn successes_cached_failures_not_then_expire_with_the_clock() {
    let calls = Arc::new(AtomicUsize::new(0));
    let backend_fails = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (c, f) = (calls.clone(), backend_fails.clone());
    let backend = SyncTokenFn::new(move |token: &str, _: &Context| {
        c.fetch_add(1, Ordering::SeqCst);
        if f.load(Ordering::SeqCst) {
            return Err(Error::msg("backend down"));
        }
        match token {
            t if t.starts_with("usertoken") => user(&format!("user{}", &t[9..])),
            _ => Ok(None),
        }
    });
    let clock = Arc::new(ManualClock::new());
    let cache = CachedTokenAuthenticator::builder(backend)
        .cache_errors(true)
        .success_ttl(Duration::from_secs(60))
        .failure_ttl(Duration::ZERO)
        .clock(clock.clone())
        .build();
    let ctx = Context::default();

    for _ in 0..2 {
        for t in ["bad1", "bad2", "bad3"] {
            assert!(cache.authenticate_token(t, &ctx).await.unwrap().is_none());
        }
    }
    assert_eq!(
        calls.swap(0, Ordering::SeqCst),
        6,
        "failures are not cached"
    );

    for t in ["usertoken1", "usertoken2", "usertoken3"] {
        assert!(cache.authenticate_token(t, &ctx).await.unwrap().is_some());
    }
    assert_eq!(calls.swap(0, Ordering::SeqCst), 3);

    backend_fails.store(true, Ordering::SeqCst);
    for (t, want) in [("usertoken1", "user1"), ("usertoken2", "user2")] {
        let hit = cache.authenticate_token(t, &ctx);
        assert!(hit.is_ready(), "a hit is answered without waiting");
        assert_eq!(name(&hit.await).as_deref(), Some(want));
    }
    assert_eq!(calls.swap(0, Ordering::SeqCst), 0, "served from cache");

    clock.advance(Duration::from_secs(59));
    assert!(cache.authenticate_token("usertoken1", &ctx).await.is_ok());
    assert_eq!(calls.swap(0, Ordering::SeqCst), 0, "still fresh at 59 s");

    clock.advance(Duration::from_secs(1));
    let err = cache
        .authenticate_token("usertoken1", &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "backend down");
    assert_eq!(calls.swap(0, Ordering::SeqCst), 1, "expired at exactly ttl");
}

#[tokio::test]
async fn table_of_store_policies() {
    /// What a caller sees: the user's name, "not mine", or the error text.
    type Seen = Result<Option<&'static str>, &'static str>;
    struct Case {
        name: &'static str,
        cache_errors: bool,
        success: u64,
        failure: u64,
        /// The delegate's answer to its `n`th call (from 0).
        result: fn(usize) -> AuthResult,
        second_call_hits_backend: bool,
        /// What the first and the second caller see.
        want: [Seen; 2],
    }
    let ok = |_| user("u");
    let none = |_| Ok(None);
    let err = |_| Err(Error::msg("boom"));
    let cases = [
        Case {
            name: "success cached",
            cache_errors: false,
            success: 10,
            failure: 0,
            result: ok,
            second_call_hits_backend: false,
            want: [Ok(Some("u")), Ok(Some("u"))],
        },
        Case {
            name: "success ttl 0 disables",
            cache_errors: false,
            success: 0,
            failure: 10,
            result: ok,
            second_call_hits_backend: true,
            want: [Ok(Some("u")), Ok(Some("u"))],
        },
        Case {
            name: "denial cached under failure ttl",
            cache_errors: false,
            success: 0,
            failure: 10,
            result: none,
            second_call_hits_backend: false,
            want: [Ok(None), Ok(None)],
        },
        Case {
            name: "denial not cached with failure ttl 0",
            cache_errors: true,
            success: 10,
            failure: 0,
            result: none,
            second_call_hits_backend: true,
            want: [Ok(None), Ok(None)],
        },
        Case {
            name: "webhook: errors never cached",
            cache_errors: false,
            success: 10,
            failure: 10,
            result: err,
            second_call_hits_backend: true,
            want: [Err("boom"), Err("boom")],
        },
        Case {
            name: "outer: errors cached under failure ttl",
            cache_errors: true,
            success: 10,
            failure: 10,
            result: err,
            second_call_hits_backend: false,
            want: [Err("boom"), Err("boom")],
        },
        Case {
            name: "outer: errors not cached when failure ttl 0",
            cache_errors: true,
            success: 10,
            failure: 0,
            result: err,
            second_call_hits_backend: true,
            want: [Err("boom"), Err("boom")],
        },
        // Go recovers the panic after the call has unwound, so its `cache.set` never runs.
        Case {
            name: "a crash is never cached, even with cache_errors",
            cache_errors: true,
            success: 10,
            failure: 60,
            result: |n| match n {
                0 => panic!("delegate bug"),
                _ => user("u"),
            },
            second_call_hits_backend: true,
            want: [Err(AUTHN_CRASH), Ok(Some("u"))],
        },
    ];
    for case in cases {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let f = case.result;
        let cache = CachedTokenAuthenticator::new(
            SyncTokenFn::new(move |_: &str, _: &Context| f(c.fetch_add(1, Ordering::SeqCst))),
            case.cache_errors,
            Duration::from_secs(case.success),
            Duration::from_secs(case.failure),
        );
        let ctx = Context::default();
        for (i, want) in case.want.iter().enumerate() {
            let got = cache.authenticate_token("tok", &ctx).await;
            let seen = match &got {
                Ok(r) => Ok(r.as_ref().map(|r| r.user.name().to_owned())),
                Err(e) => Err(e.to_string()),
            };
            let want = want.map(|o| o.map(str::to_owned)).map_err(str::to_owned);
            assert_eq!(seen, want, "{}: caller {i}", case.name);
        }
        let want = if case.second_call_hits_backend { 2 } else { 1 };
        assert_eq!(calls.load(Ordering::SeqCst), want, "{}", case.name);
    }
}

/// k8s `TestCachedTokenAuthenticatorWithAudiences`.
#[tokio::test]
async fn audiences_are_part_of_the_key() {
    let backend = SyncTokenFn::new(|_: &str, ctx: &Context| {
        let aud = ctx
            .audiences()
            .and_then(|a| a.iter().next().map(str::to_owned));
        user(&format!("user-{}", aud.unwrap_or_default()))
    });
    let cache =
        CachedTokenAuthenticator::new(backend, true, Duration::from_secs(60), Duration::ZERO);
    let a = Context::with_audiences(Audiences::from(["audA"]));
    let b = Context::with_audiences(Audiences::from(["audB"]));
    assert_eq!(
        name(&cache.authenticate_token("t", &a).await).unwrap(),
        "user-audA"
    );
    assert_eq!(
        name(&cache.authenticate_token("t", &b).await).unwrap(),
        "user-audB"
    );
    assert_eq!(
        name(&cache.authenticate_token("t", &a).await).unwrap(),
        "user-audA"
    );
    assert_eq!(cache.stats().entries, 2);
}

/// 1 000 concurrent requests for one uncached token → exactly one backend call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_concurrent_misses_make_one_backend_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    let c = calls.clone();
    let backend = AsyncTokenFn::new(move |_t: String, _: Context| {
        c.fetch_add(1, Ordering::SeqCst);
        let mut rx = release_rx.clone();
        async move {
            let _ = rx.wait_for(|go| *go).await;
            user("chewbacca")
        }
    });
    let cache = Arc::new(CachedTokenAuthenticator::new(
        backend,
        false,
        Duration::from_secs(120),
        Duration::from_secs(120),
    ));
    let mut tasks = Vec::new();
    for _ in 0..1000 {
        let cache = cache.clone();
        tasks.push(tokio::spawn(async move {
            cache
                .authenticate_token("one-uncached-token", &Context::default())
                .await
        }));
    }
    // Let every caller reach the shared lookup before the backend answers.
    while cache.stats().misses < 1000 {
        tokio::task::yield_now().await;
    }
    release_tx.send(true).unwrap();
    for t in tasks {
        assert_eq!(name(&t.await.unwrap()).as_deref(), Some("chewbacca"));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "exactly one backend call");
    assert_eq!(cache.stats().fetch_ok, 1);
}

/// k8s `TestSharedLookup` "first caller bails": the shared lookup is detached.
#[tokio::test]
async fn caller_going_away_does_not_cancel_the_shared_lookup() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    let c = calls.clone();
    let backend = AsyncTokenFn::new(move |_t: String, _: Context| {
        c.fetch_add(1, Ordering::SeqCst);
        let mut rx = release_rx.clone();
        async move {
            let _ = rx.wait_for(|go| *go).await;
            user("chewbacca")
        }
    });
    let cache = Arc::new(CachedTokenAuthenticator::new(
        backend,
        false,
        Duration::from_secs(60),
        Duration::ZERO,
    ));
    let first = {
        let cache = cache.clone();
        tokio::spawn(async move { cache.authenticate_token("tok", &Context::default()).await })
    };
    while cache.stats().in_flight == 0 {
        tokio::task::yield_now().await;
    }
    first.abort();
    let _ = first.await;
    let second = {
        let cache = cache.clone();
        tokio::spawn(async move { cache.authenticate_token("tok", &Context::default()).await })
    };
    tokio::task::yield_now().await;
    release_tx.send(true).unwrap();
    assert_eq!(name(&second.await.unwrap()).as_deref(), Some("chewbacca"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn panicking_delegate_becomes_an_internal_error() {
    let sync_panic = SyncTokenFn::new(|_: &str, _: &Context| -> AuthResult { panic!("sync boom") });
    let async_panic = AsyncTokenFn::new(|_t: String, _: Context| async move {
        tokio::task::yield_now().await;
        panic!("async boom")
    });
    let a =
        CachedTokenAuthenticator::new(sync_panic, false, Duration::from_secs(60), Duration::ZERO);
    let b =
        CachedTokenAuthenticator::new(async_panic, false, Duration::from_secs(60), Duration::ZERO);
    for r in [
        a.authenticate_token("t", &Context::default()).await,
        b.authenticate_token("t", &Context::default()).await,
    ] {
        let e = r.unwrap_err();
        assert_eq!(e.to_string(), AUTHN_CRASH);
        assert_eq!(e.kind(), ErrorKind::Internal);
    }
    assert_eq!(a.stats().fetch_error, 1);
    // The cache keeps working afterwards.
    assert!(
        a.authenticate_token("t", &Context::default())
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn a_hanging_delegate_is_bounded_by_the_lookup_timeout() {
    let backend = AsyncTokenFn::new(|_t: String, _: Context| async move {
        std::future::pending::<()>().await;
        Ok(None)
    });
    let cache = CachedTokenAuthenticator::builder(backend)
        .lookup_timeout(Duration::from_secs(30))
        .build();
    let start = tokio::time::Instant::now();
    let e = cache
        .authenticate_token("t", &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert_eq!(start.elapsed(), Duration::from_secs(30));
    assert_eq!(cache.stats().in_flight, 0);
}

#[tokio::test]
async fn in_flight_lookups_are_bounded() {
    let backend = AsyncTokenFn::new(|_t: String, _: Context| async move {
        std::future::pending::<()>().await;
        Ok(None)
    });
    let cache = Arc::new(
        CachedTokenAuthenticator::builder(backend)
            .max_in_flight(3)
            .build(),
    );
    let mut hanging = Vec::new();
    for i in 0..3 {
        let cache = cache.clone();
        hanging.push(tokio::spawn(async move {
            cache
                .authenticate_token(&format!("t{i}"), &Context::default())
                .await
        }));
    }
    while cache.stats().in_flight < 3 {
        tokio::task::yield_now().await;
    }
    let e = cache
        .authenticate_token("t-over", &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert_eq!(e.to_string(), "too many concurrent token lookups");
    // A waiter on an existing lookup is not refused.
    let mut joined = {
        let cache = cache.clone();
        tokio::spawn(async move { cache.authenticate_token("t0", &Context::default()).await })
    };
    // It waits for the hanging lookup instead of being answered.
    let waited = tokio::time::timeout(Duration::from_millis(50), &mut joined).await;
    assert!(waited.is_err(), "the waiter was answered: {waited:?}");
    joined.abort();
    for h in hanging {
        h.abort();
    }
}

#[tokio::test]
async fn entries_are_bounded_and_cached_identities_shared_not_copied() {
    let cache = CachedTokenAuthenticator::builder(SyncTokenFn::new(|t: &str, _: &Context| user(t)))
        .max_entries(100)
        .success_ttl(Duration::from_secs(60))
        .build();
    let ctx = Context::default();
    let first = cache
        .authenticate_token("keep", &ctx)
        .await
        .unwrap()
        .unwrap();
    let again = cache
        .authenticate_token("keep", &ctx)
        .await
        .unwrap()
        .unwrap();
    assert!(
        Arc::ptr_eq(&first.user, &again.user),
        "the cached identity is shared"
    );
    for i in 0..10_000 {
        let _ = cache.authenticate_token(&format!("flood-{i}"), &ctx).await;
    }
    let n = cache.stats().entries;
    assert!(n <= 110, "entries stay bounded, got {n}");
    // A user whose cached response was handed out is unchanged.
    assert_eq!(first.user.name(), "keep");
    assert_eq!(first.user.groups().count(), 0);
}

#[test]
fn without_a_runtime_a_miss_calls_through() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let cache = CachedTokenAuthenticator::new(
        SyncTokenFn::new(move |_: &str, _: &Context| {
            c.fetch_add(1, Ordering::SeqCst);
            user("u")
        }),
        false,
        Duration::from_secs(60),
        Duration::ZERO,
    );
    let r = futures_lite_block_on(cache.authenticate_token("t", &Context::default()));
    assert_eq!(name(&r).as_deref(), Some("u"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// Set in the process [`a_runtime_without_timers_looks_up_unbounded`] starts for
/// [`runtimes_without_timers_child`].
const CHILD: &str = "KUBE_AUTHN_TIMERLESS_CHILD";

/// In a runtime built without timers (no `enable_time`) the shared lookup runs unbounded
/// instead of panicking on its timeout: the delegate's answer reaches the caller and is
/// cached, on both runtime flavours, with two caches per runtime. Tokio's "timers are
/// disabled" panic is caught once per runtime (the runtime is remembered), not per lookup,
/// also when a fresh multi-thread runtime's first lookups run at the same time.
///
/// The runtimes run in a child process (this test binary, running only
/// [`runtimes_without_timers_child`]), which counts the probes in the default panic hook's
/// output: no test here installs a panic hook or sees another test's panics.
#[test]
fn a_runtime_without_timers_looks_up_unbounded() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "runtimes_without_timers_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    // Two runtimes of each flavour, plus the concurrent ones: one probe each.
    assert_eq!(
        stderr.matches("timers are disabled").count(),
        4 + CONCURRENT_RUNTIMES,
        "one probe per runtime: {stderr}"
    );
}

/// Fresh multi-thread runtimes whose first lookups start together.
const CONCURRENT_RUNTIMES: usize = 3;

/// The runtimes of [`a_runtime_without_timers_looks_up_unbounded`]; does nothing unless run
/// by it.
#[test]
fn runtimes_without_timers_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    type MakeBuilder = fn() -> tokio::runtime::Builder;
    let builders: [(&str, MakeBuilder); 2] = [
        (
            "current_thread",
            tokio::runtime::Builder::new_current_thread,
        ),
        ("multi_thread", || {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            b
        }),
    ];
    for (flavour, builder) in builders {
        for _ in 0..2 {
            let runtime = builder().build().unwrap();
            let calls = Arc::new(AtomicUsize::new(0));
            for round in 0..2 {
                let c = calls.clone();
                let cache = CachedTokenAuthenticator::builder(AsyncTokenFn::new(
                    move |t: String, _: Context| {
                        c.fetch_add(1, Ordering::SeqCst);
                        async move {
                            tokio::task::yield_now().await;
                            user(&t)
                        }
                    },
                ))
                .success_ttl(Duration::from_secs(60))
                .build();
                runtime.block_on(async {
                    let ctx = Context::default();
                    for token in ["a", "b", "a", "b"] {
                        let got = cache.authenticate_token(token, &ctx).await;
                        assert_eq!(
                            name(&got).as_deref(),
                            Some(token),
                            "{flavour} {round}: {got:?}"
                        );
                    }
                });
                assert_eq!(cache.stats().fetch_ok, 2, "{flavour} {round}");
                assert_eq!(cache.stats().fetch_error, 0, "{flavour} {round}");
            }
            assert_eq!(
                calls.load(Ordering::SeqCst),
                4,
                "{flavour}: one call per token and cache"
            );
        }
    }
    // Concurrent first lookups: every worker starts a miss at the same moment.
    const WORKERS: usize = 4;
    for _ in 0..CONCURRENT_RUNTIMES {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKERS)
            .build()
            .unwrap();
        let cache = Arc::new(
            CachedTokenAuthenticator::builder(AsyncTokenFn::new(
                |t: String, _: Context| async move { user(&t) },
            ))
            .build(),
        );
        let start = Arc::new(std::sync::Barrier::new(WORKERS));
        let tasks: Vec<_> = (0..WORKERS)
            .map(|i| {
                let (cache, start) = (cache.clone(), start.clone());
                runtime.spawn(async move {
                    // Blocks its worker, so each task holds one until all are there.
                    start.wait();
                    let token = format!("t{i}");
                    let got = cache.authenticate_token(&token, &Context::default()).await;
                    assert_eq!(name(&got), Some(token));
                })
            })
            .collect();
        runtime.block_on(async {
            for task in tasks {
                task.await.unwrap();
            }
        });
    }
}

fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// A freshly stored entry is a hit right away, even when the cache is full of one-hit entries.
#[tokio::test]
async fn fresh_entry_hits_after_a_flood() {
    let cache = CachedTokenAuthenticator::builder(SyncTokenFn::new(|t: &str, _: &Context| user(t)))
        .max_entries(1000)
        .success_ttl(Duration::from_secs(60))
        .build();
    let ctx = Context::default();
    for i in 0..5_000 {
        let _ = cache.authenticate_token(&format!("flood-{i}"), &ctx).await;
    }
    let _ = cache.authenticate_token("keep", &ctx).await;
    let f = cache.authenticate_token("keep", &ctx);
    assert!(f.is_ready(), "stats {:?}", cache.stats());
}

/// A future created outside the runtime and awaited inside it still goes through the cache.
#[test]
fn future_created_outside_the_runtime_is_cached_when_polled_inside() {
    let cache = CachedTokenAuthenticator::new(
        SyncTokenFn::new(|_: &str, _: &Context| user("u")),
        false,
        Duration::from_secs(60),
        Duration::ZERO,
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let ctx = Context::default();
    let f = cache.authenticate_token("t", &ctx);
    assert!(rt.block_on(f).unwrap().is_some());
    assert!(cache.authenticate_token("t", &ctx).is_ready());
    assert_eq!(cache.stats().fetch_ok, 1);
}

/// The Prometheus text of `authentication_token_cache_request_duration_seconds` for one
/// `status`: cumulative counts per default bucket (0.005 … 10, +Inf), sum and count.
fn duration_series(status: &str, cumulative: [u64; 12], sum: &str) -> String {
    let bounds = [
        "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf",
    ];
    let mut s = String::new();
    for (le, n) in bounds.iter().zip(cumulative) {
        s += &format!(
            "authentication_token_cache_request_duration_seconds_bucket{{status=\"{status}\",le=\"{le}\"}} {n}\n"
        );
    }
    s += &format!(
        "authentication_token_cache_request_duration_seconds_sum{{status=\"{status}\"}} {sum}\n"
    );
    s += &format!(
        "authentication_token_cache_request_duration_seconds_count{{status=\"{status}\"}} {}\n",
        cumulative[11]
    );
    s
}

/// k8s `stats.go`: every request is a hit or a miss, timed (truncated to milliseconds) from
/// before the key to the answer; every delegate call is an `ok` or `error` fetch. The clock
/// only moves inside the delegate, so the latencies are exact.
#[tokio::test]
async fn metrics_count_hits_misses_and_fetches_with_kubernetes_names() {
    static METRICS: CacheMetrics = CacheMetrics::new();
    let clock = Arc::new(ManualClock::new());
    let c = clock.clone();
    let backend = SyncTokenFn::new(move |token: &str, _: &Context| match token {
        "good" => {
            c.advance(Duration::from_micros(7_900)); // observed as 0.007
            user("good")
        }
        "broken" => {
            c.advance(Duration::from_millis(30));
            Err(Error::msg("backend down"))
        }
        "slow" => {
            c.advance(Duration::from_secs(12));
            Ok(None)
        }
        _ => Ok(None),
    });
    let cache = CachedTokenAuthenticator::builder(backend)
        .success_ttl(Duration::from_secs(60))
        .failure_ttl(Duration::ZERO)
        .cache_errors(false)
        .clock(clock.clone())
        .metrics(&METRICS)
        .build();
    let ctx = Context::default();
    // (token, user expected, error expected)
    let steps: &[(&str, Option<&str>, bool)] = &[
        ("good", Some("good"), false), // miss 0.007, fetch ok
        ("good", Some("good"), false), // hit
        ("good", Some("good"), false), // hit
        ("broken", None, true),        // miss 0.03, fetch error (not cached)
        ("broken", None, true),        // miss 0.03, fetch error
        ("nobody", None, false),       // miss 0, fetch ok (failure TTL 0: not cached)
        ("slow", None, false),         // miss 12 s: +Inf
    ];
    for (token, want_user, want_err) in steps {
        let got = cache.authenticate_token(token, &ctx).await;
        assert_eq!(name(&got).as_deref(), *want_user, "{token}");
        assert_eq!(got.is_err(), *want_err, "{token}");
    }
    let mut text = String::new();
    METRICS.encode(&mut text);
    let want = [
        "# HELP authentication_token_cache_active_fetch_count [ALPHA] \n",
        "# TYPE authentication_token_cache_active_fetch_count gauge\n",
        "authentication_token_cache_active_fetch_count{status=\"blocked\"} 0\n",
        "authentication_token_cache_active_fetch_count{status=\"in_flight\"} 0\n",
        "# HELP authentication_token_cache_fetch_total [ALPHA] \n",
        "# TYPE authentication_token_cache_fetch_total counter\n",
        "authentication_token_cache_fetch_total{status=\"error\"} 2\n",
        "authentication_token_cache_fetch_total{status=\"ok\"} 3\n",
        "# HELP authentication_token_cache_request_duration_seconds [ALPHA] \n",
        "# TYPE authentication_token_cache_request_duration_seconds histogram\n",
        &duration_series("hit", [2; 12], "0"),
        &duration_series("miss", [1, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 5], "12.067"),
        "# HELP authentication_token_cache_request_total [ALPHA] \n",
        "# TYPE authentication_token_cache_request_total counter\n",
        "authentication_token_cache_request_total{status=\"hit\"} 2\n",
        "authentication_token_cache_request_total{status=\"miss\"} 5\n",
    ]
    .concat();
    assert_eq!(text, want);
    assert_eq!(cache.stats().misses, 5);
}

/// `active_fetch_count`: every waiting miss is `blocked` (the caller that started the lookup
/// too), the shared delegate call is one `in_flight`; a caller that goes away stops being
/// blocked and is still counted as a miss, as Kubernetes counts a cancelled context.
#[tokio::test]
async fn metrics_gauge_blocked_callers_and_in_flight_lookups() {
    static METRICS: CacheMetrics = CacheMetrics::new();
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    let backend = AsyncTokenFn::new(move |_t: String, _: Context| {
        let mut rx = release_rx.clone();
        async move {
            let _ = rx.wait_for(|go| *go).await;
            user("waited")
        }
    });
    let cache = Arc::new(
        CachedTokenAuthenticator::builder(backend)
            .metrics(&METRICS)
            .build(),
    );
    let gauges = || {
        let mut text = String::new();
        METRICS.encode(&mut text);
        let value = |status: &str| {
            let prefix =
                format!("authentication_token_cache_active_fetch_count{{status=\"{status}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .map(str::to_owned)
        };
        (value("blocked"), value("in_flight"))
    };
    assert_eq!(gauges(), (None, None), "no series before the first miss");
    let spawn = || {
        let cache = cache.clone();
        tokio::spawn(async move { cache.authenticate_token("tok", &Context::default()).await })
    };
    let (a, b, gone) = (spawn(), spawn(), spawn());
    // Wait for the gauges themselves (the fetch task sets `in_flight` when it first runs,
    // after the lookup is registered), bounded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while gauges() != (Some("3".into()), Some("1".into())) {
        assert!(
            std::time::Instant::now() < deadline,
            "gauges: {:?}",
            gauges()
        );
        tokio::task::yield_now().await;
    }
    assert_eq!(cache.stats().misses, 3);
    gone.abort();
    let _ = gone.await;
    assert_eq!(gauges(), (Some("2".into()), Some("1".into())));
    release_tx.send(true).unwrap();
    for t in [a, b] {
        assert_eq!(name(&t.await.unwrap()).as_deref(), Some("waited"));
    }
    assert_eq!(gauges(), (Some("0".into()), Some("0".into())));
    let mut text = String::new();
    METRICS.encode(&mut text);
    for line in [
        "authentication_token_cache_fetch_total{status=\"ok\"} 1\n",
        "authentication_token_cache_request_total{status=\"miss\"} 3\n",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    assert!(!text.contains("status=\"hit\""), "{text}");
}
