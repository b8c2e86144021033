//! 10^4 random `kid`s in a burst → at most one JWKS fetch per cooldown (security bad-input
//! list); fetches resume after the cooldown; a slow fetch coalesces concurrent callers.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kube_authn::token::oidc::refresh::KeyRefresher;

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
        fetched += t.await.unwrap() as usize;
    }
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        1,
        "coalesced into one fetch"
    );
    assert_eq!(fetched, 1);
    tokio::time::advance(Duration::from_secs(5)).await;
    assert!(!r.refresh().await, "still cooling down");
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    tokio::time::advance(Duration::from_secs(6)).await;
    assert!(r.refresh().await, "cooldown over");
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
    for _ in 0..100 {
        assert!(!r.refresh().await);
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
        assert!(
            !r.refresh().await,
            "{name}: the second caller fetches nothing itself"
        );
        assert_eq!(started.load(Ordering::SeqCst), 1, "{name}: one fetch");
        assert_eq!(
            finished.load(Ordering::SeqCst),
            1,
            "{name}: the fetch ran to completion"
        );
        // Still one fetch for the rest of the cooldown.
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(!r.refresh().await, "{name}: cooling down");
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
        ("first call fetches", true),
        ("second call cools down", false),
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
