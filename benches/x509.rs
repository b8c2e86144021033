//! First-request chain verification against the bare signature checks it contains, and the
//! per-connection cached path.
//!
//! `cargo bench --bench x509 -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
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

fn bench(c: &mut Criterion) {
    let pki = x509_pki::Pki::new();
    for chain in chains(&pki) {
        let auth = X509Authenticator::new(CaBundle::from_der(vec![chain.root.clone()]).unwrap())
            .with_histogram(None);
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
        g.bench_function("first request (verify + user)", |b| {
            b.iter_batched(
                || PeerCertificates::injected(chain.presented.clone()),
                |p| black_box(auth.authenticate_peer(&p).unwrap()),
                BatchSize::SmallInput,
            )
        });
        g.bench_function("cached (same connection)", |b| {
            let p = PeerCertificates::injected(chain.presented.clone());
            auth.authenticate_peer(&p).unwrap();
            b.iter(|| black_box(auth.authenticate_peer(black_box(&p)).unwrap()))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
