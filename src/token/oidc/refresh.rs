//! Coalesced, rate-limited key refetching: what an OIDC authenticator does when a token names
//! a `kid` it does not know (a key rotation at the provider, or an attacker spraying kids).
//!
//! [`KeyRefresher::refresh`] runs the fetch at most once per `cooldown`: concurrent callers
//! wait on the one fetch in flight and then see its result; callers arriving within the
//! cooldown after a fetch return immediately without fetching. A failed fetch keeps the last
//! good keys (the fetch closure decides what to install) and still counts for the cooldown,
//! so an unreachable provider is not hammered. 10^4 random `kid`s in a burst cost one fetch.
//!
//! The fetch runs in its own spawned task, which holds the gate until it has recorded its
//! end time; callers only await its handle. A caller that is dropped mid-fetch (a client
//! resetting its HTTP/2 stream while its unknown `kid` is looked up) therefore neither
//! cancels the fetch nor skips the cooldown: the next caller waits for the fetch in flight.
//! Were the fetch part of the caller's future, resetting every stream would drop every
//! fetch before its cooldown was recorded, and the attacker would set the fetch rate.
//!
//! ```
//! use kube_authn::token::oidc::refresh::KeyRefresher;
//! use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
//! use std::time::Duration;
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let n = Arc::new(AtomicUsize::new(0));
//! let m = n.clone();
//! let r = KeyRefresher::new(Duration::from_secs(10), move || {
//!     let m = m.clone();
//!     async move { m.fetch_add(1, Ordering::SeqCst); true }
//! });
//! assert!(r.refresh().await);
//! assert!(!r.refresh().await); // within the cooldown: no fetch
//! assert_eq!(n.load(Ordering::SeqCst), 1);
//! # });
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// Runs a key fetch at most once per cooldown, however many callers ask at once: concurrent
/// callers share the fetch in flight, later ones within the cooldown return at once. The
/// rules are in the [module docs](self).
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::time::Duration;
/// use kube_authn::token::oidc::refresh::KeyRefresher;
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// tokio::time::pause(); // Tokio's test clock: sleeps and the cooldown pass without waiting
/// let fetches = Arc::new(AtomicUsize::new(0));
/// let counter = fetches.clone();
/// let refresher = Arc::new(KeyRefresher::new(Duration::from_secs(10), move || {
///     let counter = counter.clone();
///     async move {
///         counter.fetch_add(1, Ordering::SeqCst);
///         tokio::time::sleep(Duration::from_millis(200)).await; // the JWKS request
///         true
///     }
/// }));
///
/// // A burst of 100 tokens with unknown `kid`s: one fetch; only the caller that ran it says so.
/// let mut burst = tokio::task::JoinSet::new();
/// for _ in 0..100 {
///     let r = refresher.clone();
///     burst.spawn(async move { r.refresh().await });
/// }
/// let fetched = burst.join_all().await.into_iter().filter(|&f| f).count();
/// assert_eq!((fetched, fetches.load(Ordering::SeqCst)), (1, 1));
///
/// // After the cooldown the next unknown `kid` fetches again.
/// tokio::time::advance(Duration::from_secs(10)).await;
/// assert!(refresher.refresh().await);
/// assert_eq!(fetches.load(Ordering::SeqCst), 2);
/// # });
/// ```
pub struct KeyRefresher<F> {
    fetch: F,
    cooldown: Duration,
    last: Arc<Mutex<Option<Instant>>>,
    gate: Arc<tokio::sync::Mutex<()>>,
}

/// Held by the fetch task: records the fetch's end (also if the fetch panics), then releases
/// the gate, so waiters that get the gate always see the cooldown.
struct Finished {
    last: Arc<Mutex<Option<Instant>>>,
    _gate: tokio::sync::OwnedMutexGuard<()>,
}

impl Drop for Finished {
    fn drop(&mut self) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }
}

impl<F, Fut> KeyRefresher<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = bool> + Send + 'static,
{
    /// A refresher running `fetch` (returns whether new keys were installed) at most once per
    /// `cooldown`.
    ///
    /// ```
    /// let r = kube_authn::token::oidc::refresh::KeyRefresher::new(std::time::Duration::from_secs(1), || async { true });
    /// ```
    pub fn new(cooldown: Duration, fetch: F) -> Self {
        Self {
            fetch,
            cooldown,
            last: Arc::new(Mutex::new(None)),
            gate: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    fn cooling(&self, now: Instant) -> bool {
        let last = *self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.is_some_and(|t| now.duration_since(t) < self.cooldown)
    }

    /// Refetches unless a fetch ran within the cooldown; returns whether *this call* fetched
    /// and the fetch installed new keys. Callers then retry verification once. The fetch is
    /// spawned on the current tokio runtime and runs to completion even if this future is
    /// dropped (see the [module docs](self)); outside a tokio runtime it runs inline.
    ///
    /// ```
    /// # use kube_authn::token::oidc::refresh::KeyRefresher;
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let r = KeyRefresher::new(std::time::Duration::from_secs(1), || async { false });
    /// assert!(!r.refresh().await); // fetched, but nothing new
    /// # });
    /// ```
    pub async fn refresh(&self) -> bool {
        if self.cooling(Instant::now()) {
            return false;
        }
        let guard = self.gate.clone().lock_owned().await;
        // Someone else fetched while we waited: their result is ours.
        if self.cooling(Instant::now()) {
            return false;
        }
        let finished = Finished {
            last: self.last.clone(),
            _gate: guard,
        };
        let fetch = (self.fetch)();
        let run = async move {
            let installed = fetch.await;
            drop(finished);
            installed
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => rt.spawn(run).await.unwrap_or(false),
            // Polled outside a tokio runtime: the fetch lives in this future. Dropping it
            // cancels the fetch but still records the cooldown (`Finished` on drop).
            Err(_) => run.await,
        }
    }
}

/// An object-safe handle on a [`KeyRefresher`] (what [`super::OidcAuthenticator`] holds).
///
/// ```
/// use kube_authn::token::oidc::refresh::{KeyRefresher, Refresh};
/// let r: std::sync::Arc<dyn Refresh> = std::sync::Arc::new(KeyRefresher::new(std::time::Duration::from_secs(1), || async { true }));
/// ```
pub trait Refresh: Send + Sync {
    /// Refetches unless a fetch ran within the cooldown; whether this call fetched new keys
    /// (see [`KeyRefresher::refresh`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use kube_authn::token::oidc::refresh::{KeyRefresher, Refresh};
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let r: Arc<dyn Refresh> = Arc::new(KeyRefresher::new(Duration::from_secs(60), || async { true }));
    /// assert!(r.refresh_keys().await); // fetched and installed new keys
    /// assert!(!r.refresh_keys().await); // within the cooldown: nothing fetched
    /// # });
    /// ```
    fn refresh_keys(&self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>>;
}

impl<F, Fut> Refresh for KeyRefresher<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = bool> + Send + 'static,
{
    fn refresh_keys(&self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(self.refresh())
    }
}
