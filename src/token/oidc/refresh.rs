//! Coalesced, rate-limited key refetching: what an OIDC authenticator does when no key it holds
//! verifies a token (a key rotation at the provider, or an attacker spraying kids or bad
//! signatures).
//!
//! [`KeyRefresher::refresh`] runs the fetch at most once per `cooldown`: concurrent callers
//! wait on the one fetch in flight and then get its result ([`Refreshed::Shared`]; the
//! caller that ran it gets [`Refreshed::Ran`]); callers arriving within the cooldown after a
//! fetch return immediately without fetching ([`Refreshed::Cooling`]). A failed fetch keeps
//! the last good keys (the fetch closure decides what to install), hands its error
//! ([`Fetched::Failed`]) to the callers that ran or waited on it (go-oidc's `fetching keys
//! <err>`), and still counts for the cooldown, so an unreachable provider is not hammered.
//! 10^4 random `kid`s in a burst cost one fetch.
//!
//! The fetch runs in its own spawned task, which holds the gate until it has recorded its
//! end time; callers only await its handle. A caller that is dropped mid-fetch (a client
//! resetting its HTTP/2 stream while its token's keys are refetched) therefore neither
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
//! assert!(r.refresh().await.installed_here());
//! assert!(!r.refresh().await.installed_here()); // within the cooldown: no fetch
//! assert_eq!(n.load(Ordering::SeqCst), 1);
//! # });
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// The shortest cooldown (100 ms): [`KeyRefresher::new`] and
/// [`DiscoveryOptions::with_refresh_cooldown`](super::discovery::DiscoveryOptions::with_refresh_cooldown)
/// raise a smaller one to it. Callers that waited on a fetch in flight learn that it ran by
/// finding it within the cooldown: with no cooldown each of them would fetch again in turn,
/// and concurrent callers would no longer share one fetch.
///
/// ```
/// assert_eq!(kube_authn::token::oidc::refresh::MIN_COOLDOWN.as_millis(), 100);
/// ```
pub const MIN_COOLDOWN: Duration = Duration::from_millis(100);

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
/// let fetched = burst.join_all().await.into_iter().filter(|f| f.installed_here()).count();
/// assert_eq!((fetched, fetches.load(Ordering::SeqCst)), (1, 1));
///
/// // After the cooldown the next unknown `kid` fetches again.
/// tokio::time::advance(Duration::from_secs(10)).await;
/// assert!(refresher.refresh().await.installed_here());
/// assert_eq!(fetches.load(Ordering::SeqCst), 2);
/// # });
/// ```
pub struct KeyRefresher<F> {
    fetch: F,
    cooldown: Duration,
    last: Arc<Mutex<Option<Last>>>,
    gate: Arc<tokio::sync::Mutex<()>>,
}

/// What one fetch did.
///
/// ```
/// use kube_authn::token::oidc::refresh::Fetched;
/// assert_eq!(Fetched::from(true), Fetched::Installed);
/// assert_eq!(Fetched::from(false), Fetched::Unchanged);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// New keys were installed.
    Installed,
    /// The fetch succeeded but installed nothing (no usable key, or the authenticator is gone).
    Unchanged,
    /// The fetch failed (go-oidc's `updateKeys` error, e.g. `oidc: get keys failed: 503
    /// Service Unavailable <body>`); the last good keys stay.
    Failed(String),
}

impl From<bool> for Fetched {
    fn from(installed: bool) -> Self {
        if installed {
            Fetched::Installed
        } else {
            Fetched::Unchanged
        }
    }
}

/// What [`KeyRefresher::refresh`] did for its caller.
///
/// ```
/// use kube_authn::token::oidc::refresh::{Fetched, Refreshed};
/// let r = Refreshed::Shared(Fetched::Failed("oidc: get keys failed: 503 Service Unavailable ".into()));
/// assert_eq!(r.fetch_error(), Some("oidc: get keys failed: 503 Service Unavailable "));
/// assert!(!r.installed_here());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refreshed {
    /// This call ran the fetch.
    Ran(Fetched),
    /// This call waited on a fetch in flight and shares its result.
    Shared(Fetched),
    /// A fetch ended within the cooldown before this call (or the fetch it waited on died
    /// without a result): nothing fetched, the current keys are all there is.
    Cooling,
}

impl Refreshed {
    /// Whether this call ran the fetch and it installed new keys.
    ///
    /// ```
    /// use kube_authn::token::oidc::refresh::{Fetched, Refreshed};
    /// assert!(Refreshed::Ran(Fetched::Installed).installed_here());
    /// assert!(!Refreshed::Shared(Fetched::Installed).installed_here());
    /// ```
    pub fn installed_here(&self) -> bool {
        matches!(self, Refreshed::Ran(Fetched::Installed))
    }

    /// The error of the fetch this call ran or waited on, if it failed.
    ///
    /// ```
    /// use kube_authn::token::oidc::refresh::Refreshed;
    /// assert_eq!(Refreshed::Cooling.fetch_error(), None);
    /// ```
    pub fn fetch_error(&self) -> Option<&str> {
        match self {
            Refreshed::Ran(Fetched::Failed(e)) | Refreshed::Shared(Fetched::Failed(e)) => Some(e),
            _ => None,
        }
    }
}

/// The end of the last fetch and its result (`None`: the fetch panicked or was cancelled).
type Last = (Instant, Option<Fetched>);

/// Held by the fetch task: records the fetch's end and result (also if the fetch panics:
/// then without a result), then releases the gate, so waiters that get the gate always see
/// the cooldown and the result.
struct Finished {
    last: Arc<Mutex<Option<Last>>>,
    result: Option<Fetched>,
    _gate: tokio::sync::OwnedMutexGuard<()>,
}

impl Drop for Finished {
    fn drop(&mut self) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), self.result.take()));
    }
}

impl<F, Fut> KeyRefresher<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future + Send + 'static,
    Fut::Output: Into<Fetched>,
{
    /// A refresher running `fetch` at most once per `cooldown` (at least [`MIN_COOLDOWN`]: a
    /// smaller one, zero included, is raised to it). `fetch` returns a [`Fetched`], or a
    /// `bool` (whether new keys were installed).
    ///
    /// ```
    /// let r = kube_authn::token::oidc::refresh::KeyRefresher::new(std::time::Duration::from_secs(1), || async { true });
    /// ```
    pub fn new(cooldown: Duration, fetch: F) -> Self {
        Self {
            fetch,
            cooldown: cooldown.max(MIN_COOLDOWN),
            last: Arc::new(Mutex::new(None)),
            gate: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// The last fetch's result, if it ended within the cooldown (`Some(None)`: it ended
    /// without a result).
    fn cooling(&self, now: Instant) -> Option<Option<Fetched>> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        match &*last {
            Some((t, r)) if now.duration_since(*t) < self.cooldown => Some(r.clone()),
            _ => None,
        }
    }

    /// Refetches unless a fetch ran within the cooldown; returns what this call did: ran the
    /// fetch, shared the result of the one in flight, or nothing (cooling down). Callers then
    /// retry verification once, or report the fetch's error. The fetch is spawned on the
    /// current tokio runtime and runs to completion even if this future is dropped (see the
    /// [module docs](self)); outside a tokio runtime it runs inline.
    ///
    /// ```
    /// use kube_authn::token::oidc::refresh::{Fetched, KeyRefresher, Refreshed};
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let r = KeyRefresher::new(std::time::Duration::from_secs(1), || async {
    ///     Fetched::Failed("oidc: get keys failed: 503 Service Unavailable down".into())
    /// });
    /// assert_eq!(r.refresh().await.fetch_error(), Some("oidc: get keys failed: 503 Service Unavailable down"));
    /// assert_eq!(r.refresh().await, Refreshed::Cooling); // within the cooldown: no fetch
    /// # });
    /// ```
    pub async fn refresh(&self) -> Refreshed {
        if self.cooling(Instant::now()).is_some() {
            return Refreshed::Cooling;
        }
        let guard = self.gate.clone().lock_owned().await;
        // Someone else fetched while we waited: their result is ours.
        if let Some(result) = self.cooling(Instant::now()) {
            return result.map_or(Refreshed::Cooling, Refreshed::Shared);
        }
        let mut finished = Finished {
            last: self.last.clone(),
            result: None,
            _gate: guard,
        };
        let fetch = (self.fetch)();
        let run = async move {
            let result: Fetched = fetch.await.into();
            finished.result = Some(result.clone());
            drop(finished);
            result
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => rt
                .spawn(run)
                .await
                .map_or(Refreshed::Cooling, Refreshed::Ran),
            // Polled outside a tokio runtime: the fetch lives in this future. Dropping it
            // cancels the fetch but still records the cooldown (`Finished` on drop).
            Err(_) => Refreshed::Ran(run.await),
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
    /// Refetches unless a fetch ran within the cooldown; what this call did (see
    /// [`KeyRefresher::refresh`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use kube_authn::token::oidc::refresh::{KeyRefresher, Refresh};
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let r: Arc<dyn Refresh> = Arc::new(KeyRefresher::new(Duration::from_secs(60), || async { true }));
    /// assert!(r.refresh_keys().await.installed_here()); // fetched and installed new keys
    /// assert!(!r.refresh_keys().await.installed_here()); // within the cooldown: nothing fetched
    /// # });
    /// ```
    fn refresh_keys(&self) -> Pin<Box<dyn Future<Output = Refreshed> + Send + '_>>;
}

impl<F, Fut> Refresh for KeyRefresher<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future + Send + 'static,
    Fut::Output: Into<Fetched>,
{
    fn refresh_keys(&self) -> Pin<Box<dyn Future<Output = Refreshed> + Send + '_>> {
        Box::pin(self.refresh())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A zero cooldown is raised to [`MIN_COOLDOWN`]: concurrent callers still share one
    /// fetch (with no floor each caller that waited on the gate fetched again in turn: 100
    /// callers, 100 fetches), and the next fetch comes only after the floor.
    #[tokio::test(start_paused = true)]
    async fn a_zero_cooldown_still_coalesces() {
        let fetches = Arc::new(AtomicUsize::new(0));
        let n = fetches.clone();
        let r = Arc::new(KeyRefresher::new(Duration::ZERO, move || {
            let n = n.clone();
            async move {
                n.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
                true
            }
        }));
        let mut burst = tokio::task::JoinSet::new();
        for _ in 0..100 {
            let r = r.clone();
            burst.spawn(async move { r.refresh().await });
        }
        let results = burst.join_all().await;
        assert_eq!(fetches.load(Ordering::SeqCst), 1, "one coalesced fetch");
        assert_eq!(results.iter().filter(|f| f.installed_here()).count(), 1);
        assert_eq!(r.refresh().await, Refreshed::Cooling, "within the floor");
        tokio::time::advance(MIN_COOLDOWN).await;
        assert!(r.refresh().await.installed_here(), "after the floor");
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }
}
