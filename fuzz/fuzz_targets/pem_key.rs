//! PEM / DER key parsing (`--service-account-key-file` forms): must never panic.
#![no_main]
use kube_authn::jwt::key::{key_from_der, parse_pem_keys, PublicKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_pem_keys(data);
    let _ = key_from_der(data);
    if let Ok(k) = PublicKey::from_spki_der(data) {
        assert_eq!(k.key_id().len(), 43);
    }
});
