//! Keyed digests of static secrets (token-file tokens, password-file user names and passwords).
//!
//! The token and password files never keep a raw secret after loading: every secret is
//! replaced by a 128-bit **keyed** digest, SipHash-2-4 (128-bit output) under a random key
//! drawn once per process from the operating system, with a different key per use
//! ([`Domain`]). Lookups hash the presented credential with the same key and look the digest
//! up: the token file in a `DigestTable` (a sorted array with a directory indexed by the
//! digest's top bits), the password file in a `HashMap` keyed by digests with a pass-through
//! hasher (the digest already is a uniformly distributed keyed PRF output).
//!
//! Why this is sound against timing attacks: everything after the PRF — which directory slot
//! or bucket is probed, which entries or control bytes are compared, the 16-byte equality test
//! — depends only on the digest of the presented credential. Without the key an attacker cannot compute digests, so observing how
//! far a comparison got tells them nothing about the bytes of any stored secret; SipHash's own
//! running time depends only on the input length. A short-circuiting `==` on raw tokens (what a
//! plain `HashMap<String, _>` does) would instead leak the length of the common prefix.
//!
//! Why not SHA-256 or HMAC: the reference measurement (`rust-ecosystem-perf.md` §5.4) put
//! SHA-256 + map lookup at ~169 ns per token against a ≤60 ns target for the whole token
//! authenticator. Measured here as thread CPU time (`benches/static_token.rs`, group `digest`,
//! 43-byte token): SipHash-2-4/128 32–40 ns, SipHash-1-3/128 20–24 ns, SHA-256 (`sha2`) 66 ns,
//! std-style SipHash-1-3/64 17 ns; the whole token-file lookup with SipHash-2-4 was 57–62 ns then (≈ 45 ns in the
//! README's current figures).
//! SipHash-2-4 is the PRF its authors recommend for secret-keyed use (short inputs, 128-bit
//! output); SipHash-1-3 would save ~12 ns but has a smaller security margin, so it is not used
//! for secrets.
//!
//! Collisions: two distinct secrets share a digest with probability 2^-128 per pair
//! (about 2^-88 for a million tokens); a colliding pair would be treated as a duplicate.
//! An online attacker who wants any of `n` stored digests needs about 2^128 / n guesses.

use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::LazyLock;

use siphasher::sip128::SipHasher24;

/// What a digest is for; each domain has its own random key, so a token digest can never be
/// confused with a password digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Domain {
    /// A bearer token from a token file.
    Token = 0,
    /// A user name from a password file (the map key).
    User = 1,
    /// A user name and password together (the password file's lookup key).
    Credential = 2,
    /// The content of a reloaded file ([`ContentHasher`]).
    FileContent = 3,
}

struct Keys([(u64, u64); 4]);

static KEYS: LazyLock<Keys> = LazyLock::new(|| {
    let mut bytes = [0u8; 64];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness (should not happen on any supported platform): fall back to the
        // standard library's randomly keyed hasher state, itself seeded from the OS when it can.
        use std::hash::BuildHasher;
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let v = std::collections::hash_map::RandomState::new().hash_one(i);
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        tracing::warn!(
            "OS randomness unavailable; secret digest keys derived from std RandomState"
        );
    }
    let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
    Keys([
        (word(0), word(1)),
        (word(2), word(3)),
        (word(4), word(5)),
        (word(6), word(7)),
    ])
});

/// A 128-bit keyed digest of a secret. Two `u64` halves (not a `u128`) so that a map entry of
/// digest + pointer is 24 bytes, not 32 (`u128` is 16-byte aligned).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Digest {
    lo: u64,
    hi: u64,
}

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Even a keyed digest is not printed.
        f.write_str("Digest(..)")
    }
}

impl Hash for Digest {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.lo);
    }
}

/// Keyed digest of `secret` in `domain`.
pub(crate) fn digest(domain: Domain, secret: &[u8]) -> Digest {
    let (k0, k1) = KEYS.0[domain as usize];
    let h = SipHasher24::new_with_keys(k0, k1).hash(secret);
    Digest { lo: h.h1, hi: h.h2 }
}

/// Keyed digest of a user name and password together ([`Domain::Credential`]): the name's
/// length first, so `("ab", "c")` and `("a", "bc")` differ. Incremental: no allocation.
pub(crate) fn credential_digest(user: &[u8], password: &[u8]) -> Digest {
    use siphasher::sip128::Hasher128;
    let (k0, k1) = KEYS.0[Domain::Credential as usize];
    let mut h = SipHasher24::new_with_keys(k0, k1);
    h.write(&(user.len() as u64).to_le_bytes());
    h.write(user);
    h.write(password);
    let h = h.finish128();
    Digest { lo: h.h1, hi: h.h2 }
}

/// An incremental keyed digest of a file's content ([`Domain::FileContent`]), for deciding
/// whether a reloaded file changed: SipHash-2-4 with 128-bit output under the per-process
/// random key, so nobody without the key can make two different versions of a file (a token
/// file before and after a revocation) look the same.
pub(crate) struct ContentHasher(SipHasher24);

impl ContentHasher {
    pub(crate) fn new() -> Self {
        let (k0, k1) = KEYS.0[Domain::FileContent as usize];
        Self(SipHasher24::new_with_keys(k0, k1))
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    pub(crate) fn finish(&self) -> Digest {
        use siphasher::sip128::Hasher128;
        let h = self.0.finish128();
        Digest { lo: h.h1, hi: h.h2 }
    }
}

/// A hasher that passes a [`Digest`]'s first half through unchanged.
#[derive(Default, Clone, Copy)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used by `Digest`; a defined, if weak, fold for completeness.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by digests.
pub(crate) type DigestMap<V> =
    std::collections::HashMap<Digest, V, BuildHasherDefault<PassThrough>>;

/// An empty digest map with room for `n` entries.
pub(crate) fn digest_map<V>(n: usize) -> DigestMap<V> {
    DigestMap::with_capacity_and_hasher(n, BuildHasherDefault::default())
}

/// A read-only map from digests to values, built once: entries sorted by digest and a
/// directory indexed by the digest's top bits (each directory slot holds where its run of
/// entries starts). About 36 bytes per entry for a million entries (a `HashMap` at that size
/// has 2^21 buckets of 25 bytes, 50 bytes per entry), built by one sort instead of a million
/// random inserts, and a lookup is one directory read plus a scan of, on average, one entry.
/// Which slot and how many entries are looked at depend only on the presented digest.
pub(crate) struct DigestTable<V> {
    entries: Box<[Entry<V>]>,
    dir: Box<[u32]>,
    shift: u32,
}

/// One row: the digest, the record number it came from (for duplicate warnings) and the value.
pub(crate) struct Entry<V> {
    pub(crate) digest: Digest,
    pub(crate) record: u32,
    pub(crate) value: V,
}

impl<V> DigestTable<V> {
    /// Builds the table. For a digest given several times the entry with the highest record
    /// number wins; the record numbers of the repeats (every occurrence after the first), in
    /// ascending order, are returned too.
    pub(crate) fn build(mut entries: Vec<Entry<V>>) -> (Self, Vec<u32>) {
        entries.sort_unstable_by_key(|e| (e.digest.hi, e.digest.lo, e.record));
        let mut repeats = Vec::new();
        entries.dedup_by(|later, earlier| {
            if later.digest != earlier.digest {
                return false;
            }
            repeats.push(later.record);
            std::mem::swap(&mut later.value, &mut earlier.value);
            earlier.record = later.record;
            true
        });
        repeats.sort_unstable();
        let n = entries.len();
        // 2^bits ≥ n slots (at least one).
        let bits = usize::BITS - n.saturating_sub(1).leading_zeros();
        let shift = 64 - bits;
        let slots = 1usize << bits;
        let mut dir = Vec::with_capacity(slots + 1);
        let mut i = 0usize;
        for slot in 0..slots {
            while i < n && (bucket(entries[i].digest.hi, shift) as usize) < slot {
                i += 1;
            }
            dir.push(i as u32);
        }
        dir.push(n as u32);
        (
            Self {
                entries: entries.into_boxed_slice(),
                dir: dir.into_boxed_slice(),
                shift,
            },
            repeats,
        )
    }

    pub(crate) fn get(&self, digest: &Digest) -> Option<&V> {
        let slot = bucket(digest.hi, self.shift) as usize;
        let (start, end) = (self.dir[slot] as usize, self.dir[slot + 1] as usize);
        self.entries[start..end]
            .iter()
            .find(|e| e.digest == *digest)
            .map(|e| &e.value)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

fn bucket(hi: u64, shift: u32) -> u64 {
    hi.checked_shr(shift).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_deterministic_per_domain_and_separated_between_domains() {
        let a = digest(Domain::Token, b"secret");
        assert_eq!(a, digest(Domain::Token, b"secret"));
        assert_ne!(a, digest(Domain::Credential, b"secret"));
        assert_ne!(a, digest(Domain::User, b"secret"));
        // The credential digest frames the user name with its length.
        assert_eq!(
            credential_digest(b"ab", b"c"),
            credential_digest(b"ab", b"c")
        );
        assert_ne!(
            credential_digest(b"ab", b"c"),
            credential_digest(b"a", b"bc")
        );
        assert_ne!(a, digest(Domain::Token, b"secret2"));
        assert_ne!(digest(Domain::Token, b""), digest(Domain::Token, b"\0"));
    }

    /// The reloader's change detection is keyed: not the unkeyed SipHash-1-3/64 it was
    /// (which anyone can compute, and so collide on purpose), nor unkeyed SipHash-2-4/128, nor
    /// the token domain's digest; incremental writes give the one-shot digest.
    #[test]
    fn content_hasher_is_keyed_and_separated() {
        use std::hash::Hasher as _;
        for content in [&b""[..], b"tok,alice,1\n", &[0u8; 1000]] {
            let mut h = ContentHasher::new();
            h.write(content);
            let keyed = h.finish();
            let unkeyed = SipHasher24::new_with_keys(0, 0).hash(content);
            assert_ne!((keyed.lo, keyed.hi), (unkeyed.h1, unkeyed.h2));
            let mut old = siphasher::sip::SipHasher13::new();
            old.write(content);
            assert_ne!(keyed.lo, old.finish());
            assert_ne!(keyed, digest(Domain::Token, content));
            let mut split = ContentHasher::new();
            for chunk in content.chunks(7) {
                split.write(chunk);
            }
            assert_eq!(split.finish(), keyed);
        }
        let one = |b: &[u8]| {
            let mut h = ContentHasher::new();
            h.write(b);
            h.finish()
        };
        assert_ne!(one(b"tok,alice,1\n"), one(b""));
    }

    #[test]
    fn digest_debug_hides_value() {
        assert_eq!(format!("{:?}", digest(Domain::Token, b"x")), "Digest(..)");
    }

    #[test]
    fn table_lookup_dedupe_and_repeats() {
        for n in [0usize, 1, 2, 3, 7, 64, 1000] {
            let mut entries: Vec<Entry<usize>> = (0..n)
                .map(|i| Entry {
                    digest: digest(Domain::Token, &i.to_le_bytes()),
                    record: i as u32 + 1,
                    value: i,
                })
                .collect();
            // Repeat the first token at the end: the repeat wins.
            if n > 0 {
                entries.push(Entry {
                    digest: digest(Domain::Token, &0usize.to_le_bytes()),
                    record: n as u32 + 1,
                    value: 999_999,
                });
            }
            let (table, repeats) = DigestTable::build(entries);
            assert_eq!(table.len(), n, "n={n}");
            assert_eq!(repeats, if n > 0 { vec![n as u32 + 1] } else { vec![] });
            for i in 0..n {
                let want = if i == 0 { 999_999 } else { i };
                assert_eq!(
                    table.get(&digest(Domain::Token, &i.to_le_bytes())),
                    Some(&want),
                    "n={n} i={i}"
                );
            }
            assert_eq!(table.get(&digest(Domain::Token, b"missing")), None);
        }
    }

    #[test]
    fn digest_map_entry_is_compact() {
        assert_eq!(std::mem::size_of::<(Digest, std::sync::Arc<()>)>(), 24);
    }
}
