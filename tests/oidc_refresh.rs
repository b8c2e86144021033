//! 10^4 random `kid`s in a burst → at most one JWKS fetch per cooldown (security bad-input
//! list); fetches resume after the cooldown; a slow fetch coalesces concurrent callers.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kube_authn::token::oidc::refresh::{Fetched, KeyRefresher, Refreshed};

#[tokio::test(start_paused = true)]
async fn burst_of_unknown_kids_costs_one_fetch_per_cooldown() {
    let fetches = Arc::new(AtomicUsize::new(0));
    let f = fetches.clone();
    let r = Arc::new(KeyRefresher::new(Duration::from_secs(10), move || {
        let f = f.clone();
        async move {
            f.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(200)).await; // a slow provider
            true
        }
    }));
    let mut tasks = Vec::new();
    for _ in 0..10_000 {
        let r = r.clone();
        tasks.push(tokio::spawn(async move { r.refresh().await }));
    }
    let mut fetched = 0;
    for t in tasks {
        fetched += t.await.unwrap().installed_here() as usize;
    }
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        1,
        "coalesced into one fetch"
    );
    assert_eq!(fetched, 1);
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(r.refresh().await, Refreshed::Cooling, "still cooling down");
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    tokio::time::advance(Duration::from_secs(6)).await;
    assert!(r.refresh().await.installed_here(), "cooldown over");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn failed_fetch_also_cools_down() {
    let fetches = Arc::new(AtomicUsize::new(0));
    let f = fetches.clone();
    let r = KeyRefresher::new(Duration::from_secs(10), move || {
        let f = f.clone();
        async move {
            f.fetch_add(1, Ordering::SeqCst);
            false // provider down: nothing installed, last good keys stay
        }
    });
    assert_eq!(r.refresh().await, Refreshed::Ran(Fetched::Unchanged));
    for _ in 0..99 {
        assert_eq!(r.refresh().await, Refreshed::Cooling);
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
}

/// A caller dropped mid-fetch (an HTTP/2 stream reset while its unknown `kid` is being looked
/// up) must neither cancel the fetch nor skip the cooldown: otherwise an attacker who resets
/// every stream sets the JWKS fetch rate. Each row: how long the first caller waits before
/// it is dropped; the fetch takes 1 s. The next caller (arriving right after the drop) waits
/// for the one fetch in flight and does not start another.
#[tokio::test(start_paused = true)]
async fn cancelled_caller_neither_cancels_nor_uncounts_the_fetch() {
    for (name, cancel_after) in [
        ("dropped at once", Duration::from_millis(1)),
        ("dropped after 10ms", Duration::from_millis(10)),
        ("dropped just before the end", Duration::from_millis(999)),
    ] {
        let started = Arc::new(AtomicUsize::new(0));
        let finished = Arc::new(AtomicUsize::new(0));
        let (s, f) = (started.clone(), finished.clone());
        let r = KeyRefresher::new(Duration::from_secs(10), move || {
            let (s, f) = (s.clone(), f.clone());
            async move {
                s.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(1)).await;
                f.fetch_add(1, Ordering::SeqCst);
                true
            }
        });
        assert!(
            tokio::time::timeout(cancel_after, r.refresh())
                .await
                .is_err(),
            "{name}: the first caller is dropped mid-fetch"
        );
        assert_eq!(
            r.refresh().await,
            Refreshed::Shared(Fetched::Installed),
            "{name}: the second caller fetches nothing itself and shares the result"
        );
        assert_eq!(started.load(Ordering::SeqCst), 1, "{name}: one fetch");
        assert_eq!(
            finished.load(Ordering::SeqCst),
            1,
            "{name}: the fetch ran to completion"
        );
        // Still one fetch for the rest of the cooldown.
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(
            r.refresh().await,
            Refreshed::Cooling,
            "{name}: cooling down"
        );
        assert_eq!(started.load(Ordering::SeqCst), 1, "{name}: still one fetch");
    }
}

/// Outside a tokio runtime (a caller polling with another executor) the fetch runs inside
/// the caller's future instead of panicking on `tokio::spawn`; the cooldown still holds.
#[test]
fn refresh_outside_a_tokio_runtime_runs_inline() {
    let fetches = Arc::new(AtomicUsize::new(0));
    let f = fetches.clone();
    let r = KeyRefresher::new(Duration::from_secs(10), move || {
        let f = f.clone();
        async move {
            f.fetch_add(1, Ordering::SeqCst);
            true
        }
    });
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    for (call, want) in [
        ("first call fetches", Refreshed::Ran(Fetched::Installed)),
        ("second call cools down", Refreshed::Cooling),
    ] {
        let mut fut = std::pin::pin!(r.refresh());
        assert_eq!(
            fut.as_mut().poll(&mut cx),
            std::task::Poll::Ready(want),
            "{call}"
        );
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
}

/// A failed fetch's error goes to the caller that ran it and to every caller that waited on
/// it (they answer with go-oidc's `fetching keys <err>`); callers arriving after it, within
/// the cooldown, get no error (the current keys are all there is). It used to be dropped:
/// `refresh` returned a bool.
#[tokio::test(start_paused = true)]
async fn a_failed_fetch_hands_its_error_to_the_runner_and_the_waiters() {
    const ERR: &str = "oidc: get keys failed: 503 Service Unavailable down";
    let r = Arc::new(KeyRefresher::new(Duration::from_secs(10), || async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Fetched::Failed(ERR.into())
    }));
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let r = r.clone();
        tasks.push(tokio::spawn(async move { r.refresh().await }));
    }
    let (mut ran, mut shared) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Refreshed::Ran(Fetched::Failed(e)) if e == ERR => ran += 1,
            Refreshed::Shared(Fetched::Failed(e)) if e == ERR => shared += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((ran, shared), (1, 9));
    tokio::time::advance(Duration::from_secs(1)).await;
    let later = r.refresh().await;
    assert_eq!(
        (later.clone(), later.fetch_error()),
        (Refreshed::Cooling, None)
    );
}

/// A fetch that dies without a result (it panicked) still counts for the cooldown; the
/// caller that ran it and the waiters get no error to report.
#[tokio::test(start_paused = true)]
async fn a_fetch_that_panics_gives_no_result() {
    let r = Arc::new(KeyRefresher::new(Duration::from_secs(10), || async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        if true {
            panic!("fetch died");
        }
        Fetched::Installed
    }));
    let r2 = r.clone();
    let first = tokio::spawn(async move { r2.refresh().await });
    tokio::task::yield_now().await;
    assert_eq!(r.refresh().await, Refreshed::Cooling);
    assert_eq!(first.await.unwrap(), Refreshed::Cooling);
}
