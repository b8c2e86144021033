//! Extra-key percent-decoding (`X-Remote-Extra-<key>`): never panics; a successful decode is
//! valid UTF-8 without control characters, and input without `%` is only lower-cased.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(key) = std::str::from_utf8(data) else {
        return;
    };
    match kube_authn::request::decode_extra_key(key) {
        Ok(decoded) => {
            assert!(decoded.len() <= key.len());
            if !key.contains('%') {
                assert_eq!(decoded, key.to_ascii_lowercase());
            } else {
                assert!(!decoded.chars().any(char::is_control) || decoded == key.to_ascii_lowercase());
            }
        }
        Err(e) => assert!(e.to_string().starts_with("request header: ")),
    }
    // The same key through the whole front-proxy header path (when it is a valid header name).
    if let Ok(name) = http::HeaderName::from_bytes(format!("x-remote-extra-{key}").as_bytes()) {
        let mut h = http::HeaderMap::new();
        h.insert("x-remote-user", http::HeaderValue::from_static("u"));
        h.insert(name, http::HeaderValue::from_static("v"));
        let fp = proxy();
        let _ = fp.user_from_headers_unverified(&h);
    }
});

fn proxy() -> &'static kube_authn::request::FrontProxy {
    static P: std::sync::OnceLock<kube_authn::request::FrontProxy> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        kube_authn::request::FrontProxy::new(kube_authn::request::RequestHeaderConfig {
            client_ca_pem: Some(kube_authn::x509::doc_ca_pem().into()),
            ..kube_authn::request::RequestHeaderConfig::standard()
        })
        .unwrap()
    })
}
