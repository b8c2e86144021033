//! 10^4 random `kid`s in a burst → at most one JWKS fetch per cooldown (security bad-input
//! list); fetches resume after the cooldown; a slow fetch coalesces concurrent callers.

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
