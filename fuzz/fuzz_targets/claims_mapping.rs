//! Claims decoding and mapping: the strict JSON scanner, NumericDate / Audience decoding,
//! service-account username splitting and user construction. (OIDC claim mappings will be
//! added here when `token::oidc` lands.) Must never panic; error texts never echo input.
#![no_main]
use kube_authn::jwt::json::{check_no_duplicates, claims_error_message, scan_object, Audience, NumericDate};
use kube_authn::token::service_account::{split_username, ServiceAccountInfo};
use libfuzzer_sys::fuzz_target;

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct C<'a> {
    #[serde(default)]
    exp: Option<NumericDate>,
    #[serde(borrow, default)]
    aud: Option<Audience<'a>>,
    #[serde(borrow, default)]
    sub: Option<std::borrow::Cow<'a, str>>,
}

fuzz_target!(|data: &[u8]| {
    let _ = scan_object(data);
    let _ = check_no_duplicates(data);
    if let Err(e) = serde_json::from_slice::<C<'_>>(data) {
        let msg = claims_error_message(&e);
        assert!(msg.len() < 120);
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Some((ns, name)) = split_username(s) {
            let info = ServiceAccountInfo { namespace: ns.into(), name: name.into(), ..Default::default() };
            assert_eq!(info.user_info().name(), s);
        }
    }
});
