//! 10^6 distinct tokens against the cache: resident memory stays bounded (Linux `/proc` only).
//!
//! Run alone for a clean figure: `cargo test --release --test token_cache_memory -- --nocapture`.
//! Debug builds flood 2·10^5 tokens (a debug miss costs ~75 µs of CPU, 10^6 took 8 minutes on a
//! shared 2-core box); release builds, or `KUBE_AUTHN_FLOOD_TOKENS=1000000`, flood 10^6.
//! Measured (debug, 10^6): RSS 4.0 MiB at start, 26.8 MiB after 10^5 tokens, 28.0 MiB after 10^6,
//! 65 536 entries.

use std::sync::Arc;
use std::time::Duration;

use kube_authn::authenticator::{Context, Response, SyncTokenFn, TokenAuthenticator};
use kube_authn::token::cache::CachedTokenAuthenticator;
use kube_authn::user::UserInfo;

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test]
async fn a_million_distinct_tokens_keep_rss_bounded() {
    let Some(start) = rss_kib() else {
        eprintln!("SKIPPED: /proc/self/status not available on this platform");
        return;
    };
    const MAX_ENTRIES: usize = 65_536;
    // Every token is valid and gets its own identity: the worst case for memory.
    let cache = CachedTokenAuthenticator::builder(SyncTokenFn::new(|t: &str, _: &Context| {
        Ok(Some(Response::new(Arc::new(
            UserInfo::builder(format!("user-{}", &t[..16]))
                .group("flooders")
                .build(),
        ))))
    }))
    .max_entries(MAX_ENTRIES)
    .success_ttl(Duration::from_secs(3600))
    .build();
    let ctx = Context::default();
    let pad = "x".repeat(1000);
    let mut at_100k = 0;
    let total: u32 = std::env::var("KUBE_AUTHN_FLOOD_TOKENS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            200_000
        } else {
            1_000_000
        });
    for i in 0..total {
        let token = format!("{i:016}{pad}");
        let r = cache.authenticate_token(&token, &ctx).await;
        assert!(r.unwrap().is_some());
        if i == 100_000 {
            at_100k = rss_kib().unwrap_or(0);
        }
    }
    let end = rss_kib().unwrap_or(0);
    let entries = cache.stats().entries;
    eprintln!(
        "RSS: start {start} KiB, after 10^5 tokens {at_100k} KiB, after {total} tokens {end} KiB; \
         entries {entries} (cap {MAX_ENTRIES})"
    );
    assert!(entries as usize <= MAX_ENTRIES + MAX_ENTRIES / 10);
    // 65 536 entries × (key + response + user ≈ 250 B) ≈ 16 MiB; allow allocator slack.
    assert!(
        end.saturating_sub(start) < 64 * 1024,
        "RSS grew by {} KiB",
        end - start
    );
    assert!(
        end.saturating_sub(at_100k) < 16 * 1024,
        "RSS keeps growing after the cap: {at_100k} → {end} KiB"
    );
}
