//! The peer-chain request extension and its per-connection verification cache.

use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwapOption;
use rustls_pki_types::CertificateDer;

use crate::authenticator::AuthResult;
use crate::x509::Moment;

/// How a [`PeerCertificates`] came to be.
///
/// ```
/// use kube_authn::tls::{CertSource, PeerCertificates};
/// assert_eq!(PeerCertificates::from_handshake(vec![]).source(), CertSource::Handshake);
/// assert_eq!(PeerCertificates::injected(vec![]).source(), CertSource::Injected);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertSource {
    /// Read from a TLS handshake this process terminated: the peer proved it holds the leaf's
    /// private key (TLS CertificateVerify).
    Handshake,
    /// Inserted by application code that terminated TLS itself (or took the chain from a
    /// trusted proxy). This crate cannot know whether the peer proved key possession.
    Injected,
}

/// The client certificate chain of the connection a request arrived on (leaf first), as a
/// request extension. The X.509 and front-proxy authenticators read only this.
///
/// It is transport neutral: the accept loop in this module inserts it on every request of a
/// TLS connection where the client sent a certificate; an application that terminates TLS
/// itself inserts it by hand. Cloning is one reference-count increment, and clones share one
/// per-connection verification cache, so a chain is verified once per connection (per
/// authenticator and CA bundle) and not once per request.
///
/// ```
/// use kube_authn::tls::PeerCertificates;
/// use rustls_pki_types::CertificateDer;
///
/// # let der = CertificateDer::from(vec![0x30, 0x00]);
/// let mut req = http::Request::new(());
/// req.extensions_mut().insert(PeerCertificates::injected(vec![der]));
/// let peer = req.extensions().get::<PeerCertificates>().unwrap();
/// assert_eq!(peer.chain().len(), 1);
/// ```
#[derive(Clone)]
pub struct PeerCertificates(Arc<Inner>);

struct Inner {
    chain: Box<[CertificateDer<'static>]>,
    source: CertSource,
    cache: ConnCache,
}

impl PeerCertificates {
    /// A chain from a TLS handshake this process performed (used by the accept loop; use
    /// [`PeerCertificates::injected`] otherwise).
    ///
    /// ```
    /// let p = kube_authn::tls::PeerCertificates::from_handshake(vec![]);
    /// assert!(p.is_empty());
    /// ```
    pub fn from_handshake(chain: Vec<CertificateDer<'static>>) -> Self {
        Self::build(chain, CertSource::Handshake)
    }

    /// A chain obtained some other way (your own TLS termination).
    ///
    /// ```
    /// use kube_authn::tls::{CertSource, PeerCertificates};
    /// assert_eq!(PeerCertificates::injected(vec![]).source(), CertSource::Injected);
    /// ```
    pub fn injected(chain: Vec<CertificateDer<'static>>) -> Self {
        Self::build(chain, CertSource::Injected)
    }

    fn build(chain: Vec<CertificateDer<'static>>, source: CertSource) -> Self {
        Self(Arc::new(Inner {
            chain: chain.into_boxed_slice(),
            source,
            cache: ConnCache::default(),
        }))
    }

    /// The chain, leaf first.
    ///
    /// ```
    /// assert!(kube_authn::tls::PeerCertificates::injected(vec![]).chain().is_empty());
    /// ```
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.0.chain
    }

    /// The leaf certificate, if any.
    ///
    /// ```
    /// assert!(kube_authn::tls::PeerCertificates::injected(vec![]).leaf().is_none());
    /// ```
    pub fn leaf(&self) -> Option<&CertificateDer<'static>> {
        self.0.chain.first()
    }

    /// Whether the chain is empty (the client sent no certificate).
    ///
    /// ```
    /// assert!(kube_authn::tls::PeerCertificates::injected(vec![]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.chain.is_empty()
    }

    /// Where the chain came from.
    ///
    /// ```
    /// use kube_authn::tls::{CertSource, PeerCertificates};
    /// assert_eq!(PeerCertificates::from_handshake(vec![]).source(), CertSource::Handshake);
    /// ```
    pub fn source(&self) -> CertSource {
        self.0.source
    }

    pub(crate) fn cache(&self) -> &ConnCache {
        &self.0.cache
    }
}

impl std::fmt::Debug for PeerCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerCertificates")
            .field("certificates", &self.0.chain.len())
            .field("source", &self.0.source)
            .finish()
    }
}

/// One cached verification outcome.
pub(crate) struct CacheEntry {
    /// The authenticator that stored it.
    pub(crate) owner: u64,
    /// The CA bundle (and configuration) generation it was computed with.
    pub(crate) generation: u64,
    /// The first second (Unix seconds, inclusive) at which the outcome is valid.
    pub(crate) valid_from: i64,
    /// The last instant (inclusive, to the nanosecond) at which the outcome is valid: a
    /// verified chain's first notAfter itself (Go: expired a nanosecond later), or the end
    /// of the second a failure was computed in.
    pub(crate) valid_until: Moment,
    /// The leaf's notAfter (for the expiration metric), if known.
    pub(crate) leaf_not_after: Option<i64>,
    pub(crate) outcome: AuthResult,
}

const SLOTS: usize = 4;

/// A tiny lock-free cache: a few slots, one per authenticator that looks at the connection
/// (normally two: front proxy and client CA). Bounded by construction.
///
/// A slot's `ArcSwapOption` is created on its first store: loading, storing and dropping an
/// `ArcSwap` each walk arc-swap's debt lists, so a connection that never fills a slot should
/// not pay for it (a first request used to load four empty slots twice and drop four).
#[derive(Default)]
pub(crate) struct ConnCache {
    slots: [OnceLock<ArcSwapOption<CacheEntry>>; SLOTS],
}

impl ConnCache {
    /// Calls `f` with the entry of `owner` if it is current for `generation` at `now`.
    #[inline]
    pub(crate) fn get<R>(
        &self,
        owner: u64,
        generation: u64,
        now: Moment,
        f: impl FnOnce(&CacheEntry) -> R,
    ) -> Option<R> {
        for slot in self.slots.iter().filter_map(OnceLock::get) {
            let guard = slot.load();
            if let Some(entry) = guard.as_deref()
                && entry.owner == owner
            {
                if entry.generation == generation
                    && !now.is_before(entry.valid_from)
                    && now <= entry.valid_until
                {
                    return Some(f(entry));
                }
                return None;
            }
        }
        None
    }

    /// Stores an entry, replacing the owner's previous one (or, when every slot belongs to
    /// another owner, the slot the owner id hashes to).
    pub(crate) fn put(&self, entry: CacheEntry) {
        let owner = entry.owner;
        let mut target = None;
        for (i, slot) in self.slots.iter().enumerate() {
            let current = slot.get().map(ArcSwapOption::load);
            match current.as_ref().and_then(|g| g.as_deref()) {
                Some(e) if e.owner == owner => {
                    target = Some(i);
                    break;
                }
                None if target.is_none() => target = Some(i),
                _ => {}
            }
        }
        let i = target.unwrap_or((owner as usize) % SLOTS);
        let mut entry = Some(Arc::new(entry));
        let slot = self.slots[i].get_or_init(|| ArcSwapOption::new(entry.take()));
        // The slot existed already (or another request created it meanwhile): replace.
        if let Some(entry) = entry {
            slot.store(Some(entry));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(owner: u64, generation: u64) -> CacheEntry {
        CacheEntry {
            owner,
            generation,
            valid_from: 10,
            valid_until: Moment::at(20),
            leaf_not_after: None,
            outcome: Ok(None),
        }
    }

    #[test]
    fn cache_hits_only_for_same_owner_generation_and_window() {
        let c = ConnCache::default();
        c.put(entry(1, 7));
        let at = |secs, nanos| Moment { secs, nanos };
        let cases = [
            ("hit", 1, 7, at(15, 0), true),
            ("window start inclusive", 1, 7, at(10, 0), true),
            ("window end inclusive", 1, 7, at(20, 0), true),
            ("before window", 1, 7, at(9, 999_999_999), false),
            // Go: a certificate has expired a nanosecond after its notAfter.
            ("a nanosecond after the window", 1, 7, at(20, 1), false),
            (
                "half a second after the window",
                1,
                7,
                at(20, 500_000_000),
                false,
            ),
            ("after window", 1, 7, at(21, 0), false),
            ("new generation", 1, 8, at(15, 0), false),
            ("other owner", 2, 7, at(15, 0), false),
        ];
        for (name, owner, generation, now, hit) in cases {
            assert_eq!(
                c.get(owner, generation, now, |_| ()).is_some(),
                hit,
                "{name}"
            );
        }
    }

    #[test]
    fn cache_is_bounded_and_replaces_per_owner() {
        let c = ConnCache::default();
        for owner in 0..100 {
            c.put(entry(owner, 1));
        }
        let live = c
            .slots
            .iter()
            .filter(|s| s.get().is_some_and(|s| s.load().is_some()))
            .count();
        assert_eq!(live, SLOTS);
        c.put(entry(99, 2));
        assert!(c.get(99, 2, Moment::at(15), |_| ()).is_some());
        assert!(c.get(99, 1, Moment::at(15), |_| ()).is_none());
    }
}
