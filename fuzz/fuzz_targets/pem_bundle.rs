//! CA bundle parsing (client-go `ParseCertsPEM` rules) and trust-anchor construction: never
//! panics, and every certificate returned is one a bundle can be built from or a clear error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(certs) = kube_authn::x509::parse_pem_bundle(data) {
        assert!(!certs.is_empty());
        assert!(certs.len() <= kube_authn::x509::MAX_BUNDLE_CERTS);
        let _ = kube_authn::x509::CaBundle::from_der(certs);
    }
    let _ = kube_authn::x509::CaBundle::from_pem(data);
    // The same bytes as a presented DER chain: verification must fail cleanly.
    let bundle = kube_authn::x509::CaBundle::from_pem(kube_authn::x509::doc_ca_pem().as_bytes()).unwrap();
    let auth = kube_authn::x509::X509Authenticator::new(bundle).with_histogram(None);
    let peer = kube_authn::tls::PeerCertificates::injected(vec![data.to_vec().into()]);
    let _ = auth.authenticate_peer(&peer);
});
