//! First-request chain verification against the bare signature checks it contains, and the
//! per-connection cached path.
//!
//! The authenticator is the default one, with the client-certificate expiration histogram
//! (`apiserver_client_certificate_expiration_seconds`) recorded on every request as
//! kube-apiserver records it, so the rows time what a server does.
//!
//! `cargo bench --bench x509 -- --warm-up-time 1 --measurement-time 3`
//!
//! With `X509_COUNT=<chain>/<case>` (chain `rsa2048/1-level`, …; case `signatures`, `first`,
//! `both` or `cached`) and `X509_ITERS=<n>` the binary runs that case `n` times outside
//! criterion, for `valgrind --tool=callgrind`. Every run issues new keys, and an RSA key's
//! Montgomery setup cost varies with its modulus, so compare within one run: with `both`, the
//! inclusive costs of the functions `x509::signatures` and `x509::first_request` (which, like
//! the criterion routine, drops its `PeerCertificates`) divided by `n`.
//!
//! With `X509_ONCPU=<n>` it prints, for every chain, the on-CPU time per call of the
//! signatures alone and of a first request (thread CPU time, `CLOCK_THREAD_CPUTIME_ID`,
//! `n` calls of each in 41 alternating rounds, medians): robust to a shared machine, where
//! wall-clock figures include time spent descheduled.

use std::hint::black_box;

use aws_lc_rs::signature::ParsedPublicKey;
use criterion::{BatchSize, Criterion, criterion_group};
use kube_authn::tls::PeerCertificates;
use kube_authn::tls::pki_types::CertificateDer;
use kube_authn::x509::{CaBundle, X509Authenticator, signed_parts, subject_public_key};

#[path = "x509_support/mod.rs"]
mod x509_pki;

struct Chain {
    name: &'static str,
    rsa: bool,
    root: CertificateDer<'static>,
    /// leaf first, then the intermediates
    presented: Vec<CertificateDer<'static>>,
    /// (signed cert, issuer cert) pairs: the signature checks a verification performs
    signatures: Vec<(CertificateDer<'static>, CertificateDer<'static>)>,
}

fn chains(pki: &x509_pki::Pki) -> Vec<Chain> {
    let mut out = Vec::new();
    for (rsa, kind) in [(true, "rsa2048"), (false, "p256")] {
        let root = pki.issue(&format!("{kind}-root"), rsa, "/CN=root", true, None);
        let inter = pki.issue(
            &format!("{kind}-inter"),
            rsa,
            "/CN=inter",
            true,
            Some(&format!("{kind}-root")),
        );
        let leaf1 = pki.issue(
            &format!("{kind}-leaf1"),
            rsa,
            "/O=system:masters/O=dev/CN=alice",
            false,
            Some(&format!("{kind}-root")),
        );
        let leaf2 = pki.issue(
            &format!("{kind}-leaf2"),
            rsa,
            "/O=system:masters/O=dev/CN=alice",
            false,
            Some(&format!("{kind}-inter")),
        );
        out.push(Chain {
            name: if rsa {
                "rsa2048/1-level"
            } else {
                "p256/1-level"
            },
            rsa,
            root: root.clone(),
            presented: vec![leaf1.clone()],
            signatures: vec![(leaf1, root.clone())],
        });
        out.push(Chain {
            name: if rsa {
                "rsa2048/2-level"
            } else {
                "p256/2-level"
            },
            rsa,
            root: root.clone(),
            presented: vec![leaf2.clone(), inter.clone()],
            signatures: vec![(leaf2, inter.clone()), (inter, root)],
        });
    }
    out
}

#[inline(never)]
fn raw_verify(rsa: bool, signed: &[u8], issuer: &[u8]) {
    use aws_lc_rs::signature::{
        ECDSA_P256_SHA256_ASN1, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey,
    };
    let (tbs, _alg, sig) = signed_parts(signed).unwrap();
    let key = subject_public_key(issuer).unwrap();
    let r = if rsa {
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key).verify(tbs, sig)
    } else {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, key).verify(tbs, sig)
    };
    r.unwrap();
}

/// The signature checks with the root's key parsed once, as `X509Authenticator` does since
/// its CA bundle keeps its anchors' parsed keys; a presented intermediate's key is still
/// parsed per call. Shown beside the baseline, which parses every key per call, so the
/// share of the first request's advantage that comes from that cache is visible.
fn signatures_root_key_parsed(chain: &Chain, root_key: &ParsedPublicKey) {
    for (signed, issuer) in &chain.signatures {
        if issuer == &chain.root {
            let (tbs, _alg, sig) = signed_parts(black_box(signed)).unwrap();
            root_key.verify_sig(tbs, sig).unwrap();
        } else {
            raw_verify(chain.rsa, black_box(signed), black_box(issuer));
        }
    }
}

fn root_key(chain: &Chain) -> ParsedPublicKey {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1, RSA_PKCS1_2048_8192_SHA256};
    let key = subject_public_key(&chain.root).unwrap();
    if chain.rsa {
        ParsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key).unwrap()
    } else {
        ParsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, key).unwrap()
    }
}

fn bench(c: &mut Criterion) {
    let pki = x509_pki::Pki::new();
    for chain in chains(&pki) {
        // The default authenticator: it records the client-certificate expiration histogram
        // on every request, cached ones included, as kube-apiserver does.
        let auth = X509Authenticator::new(CaBundle::from_der(vec![chain.root.clone()]).unwrap());
        // Sanity: the chain verifies.
        let p = PeerCertificates::injected(chain.presented.clone());
        assert_eq!(
            auth.authenticate_peer(&p).unwrap().unwrap().user.name(),
            "alice"
        );

        let mut g = c.benchmark_group(format!("x509/{}", chain.name));
        g.bench_function("signatures only", |b| {
            b.iter(|| {
                for (signed, issuer) in &chain.signatures {
                    raw_verify(chain.rsa, black_box(signed), black_box(issuer));
                }
            })
        });
        let parsed = root_key(&chain);
        g.bench_function("signatures only, root key parsed once", |b| {
            b.iter(|| signatures_root_key_parsed(&chain, &parsed))
        });
        g.bench_function("first request (verify + user)", |b| {
            b.iter_batched(
                || PeerCertificates::injected(chain.presented.clone()),
                |p| {
                    black_box(
                        auth.authenticate_peer(&p)
                            .expect("verified")
                            .expect("a user"),
                    )
                },
                BatchSize::SmallInput,
            )
        });
        g.bench_function("cached (same connection)", |b| {
            let p = PeerCertificates::injected(chain.presented.clone());
            auth.authenticate_peer(&p).unwrap();
            b.iter(|| {
                black_box(
                    auth.authenticate_peer(black_box(&p))
                        .expect("verified")
                        .expect("a user"),
                )
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);

/// Nanoseconds this thread has spent on a CPU (`CLOCK_THREAD_CPUTIME_ID`, exact to the
/// nanosecond; `/proc/thread-self/schedstat` only advances at scheduler ticks).
fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[inline(never)]
fn signatures(chain: &Chain) {
    for (signed, issuer) in &chain.signatures {
        raw_verify(chain.rsa, black_box(signed), black_box(issuer));
    }
}

/// A first request on `p`, which is dropped here (as in criterion's timed routine).
#[inline(never)]
fn first_request(auth: &X509Authenticator, p: PeerCertificates) {
    black_box(
        auth.authenticate_peer(black_box(&p))
            .expect("verified")
            .expect("a user"),
    );
}

fn main() {
    let count = std::env::var("X509_COUNT").ok();
    let oncpu = std::env::var("X509_ONCPU").ok();
    if count.is_none() && oncpu.is_none() {
        benches();
        Criterion::default().configure_from_args().final_summary();
        return;
    }
    let pki = x509_pki::Pki::new();
    let chains = chains(&pki);
    if let Some(want) = &count {
        // A chain name that matches nothing would measure nothing and exit 0.
        let known = chains.iter().any(|c| {
            want.strip_prefix(c.name)
                .is_some_and(|rest| rest.starts_with('/'))
        });
        assert!(
            known,
            "X509_COUNT={want:?}: unknown chain (rsa2048/1-level, rsa2048/2-level, p256/1-level, \
             p256/2-level, then /signatures, /first, /both or /cached)"
        );
    }
    for chain in chains {
        // The default authenticator: it records the client-certificate expiration histogram
        // on every request, cached ones included, as kube-apiserver does.
        let auth = X509Authenticator::new(CaBundle::from_der(vec![chain.root.clone()]).unwrap());
        if let Some(case) = &count {
            let Some(case) = case
                .strip_prefix(chain.name)
                .and_then(|c| c.strip_prefix('/'))
            else {
                continue;
            };
            let n: usize = std::env::var("X509_ITERS")
                .expect("X509_ITERS")
                .parse()
                .expect("X509_ITERS is a number");
            let cached = PeerCertificates::injected(chain.presented.clone());
            auth.authenticate_peer(&cached).unwrap();
            let inputs: Vec<_> = (0..n)
                .map(|_| PeerCertificates::injected(chain.presented.clone()))
                .collect();
            for p in inputs {
                match case {
                    "signatures" => signatures(&chain),
                    "first" => first_request(&auth, p),
                    "both" => {
                        signatures(&chain);
                        first_request(&auth, p);
                    }
                    "cached" => {
                        black_box(
                            auth.authenticate_peer(black_box(&cached))
                                .expect("verified")
                                .expect("a user"),
                        );
                    }
                    other => panic!("unknown case {other}"),
                }
            }
            continue;
        }
        let n: u64 = oncpu
            .as_deref()
            .unwrap()
            .parse()
            .expect("X509_ONCPU is a number");
        // Like criterion's `iter_batched`: the inputs are built untimed, the call and the
        // drop of its input are timed. Short alternating rounds, so that the other load on a
        // shared machine (and the clock speed it causes) affects both cases alike; the
        // medians are reported.
        const ROUNDS: usize = 41;
        let per_round = (n as usize).div_ceil(ROUNDS).max(1);
        let mut sigs = Vec::with_capacity(ROUNDS);
        let mut firsts = Vec::with_capacity(ROUNDS);
        let mut ratios = Vec::with_capacity(ROUNDS);
        let mut cached_sigs = Vec::with_capacity(ROUNDS);
        let parsed = root_key(&chain);
        for _ in 0..ROUNDS {
            let inputs: Vec<_> = (0..per_round)
                .map(|_| PeerCertificates::injected(chain.presented.clone()))
                .collect();
            let t0 = thread_cpu_ns().expect("CLOCK_THREAD_CPUTIME_ID");
            for _ in 0..per_round {
                signatures(&chain);
            }
            let t1 = thread_cpu_ns().unwrap();
            for p in inputs {
                black_box(
                    auth.authenticate_peer(black_box(&p))
                        .expect("verified")
                        .expect("a user"),
                );
            }
            let t2 = thread_cpu_ns().unwrap();
            for _ in 0..per_round {
                signatures_root_key_parsed(&chain, &parsed);
            }
            let t3 = thread_cpu_ns().unwrap();
            cached_sigs.push((t3 - t2) as f64 / per_round as f64);
            let (s, f) = (
                (t1 - t0) as f64 / per_round as f64,
                (t2 - t1) as f64 / per_round as f64,
            );
            sigs.push(s);
            firsts.push(f);
            ratios.push(f / s);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (sig, first, ratio) = (median(&mut sigs), median(&mut firsts), median(&mut ratios));
        let cached_sig = median(&mut cached_sigs);
        println!(
            "on-cpu: {}: signatures {sig:.0} ns, first request {first:.0} ns (+{:.0} ns), \
             median ratio {ratio:.3}×; signatures with the root key parsed once {cached_sig:.0} ns \
             (first request {:.3}× that)",
            chain.name,
            first - sig,
            first / cached_sig,
        );
    }
}
