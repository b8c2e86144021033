//! Claims decoding and mapping: the strict JSON scanner (checked against serde_json: whatever
//! it accepts, serde_json must parse once each lone surrogate escape reads as `\ufffd`, which
//! is how Go and the scanner read it and serde_json refuses), the raw claim readers over validated text,
//! NumericDate / Audience decoding, service-account username splitting and user construction (the OIDC claim mapping has its own target,
//! `oidc_claims`). Must never panic; error texts never echo input.
#![no_main]
use kube_authn::jwt::json::{
    check_no_duplicates, claims_error_message, go_lone_surrogates, opt_str, scan_object, validate_object, Audience, NumericDate, RawJson,
};
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

fn walk(v: RawJson<'_>, depth: usize) {
    let _ = (NumericDate::from_raw(v), Audience::from_raw(v), opt_str(v), v.is_null());
    if depth > 4 {
        return;
    }
    if let Some(o) = v.as_object() {
        for (k, inner) in o.iter() {
            assert!(o.get(&k).is_some());
            walk(inner, depth + 1);
        }
    }
    if let Some(items) = v.as_array() {
        for item in items {
            walk(item, depth + 1);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = scan_object(data);
    let go = go_lone_surrogates(data);
    if check_no_duplicates(data).is_ok() {
        assert!(serde_json::from_slice::<serde_json::Value>(&go).is_ok(), "scanner accepted what serde_json refuses");
    }
    if let Ok(o) = validate_object(data) {
        let v: serde_json::Value = serde_json::from_slice(&go).unwrap();
        assert_eq!(o.iter().count(), v.as_object().unwrap().len());
        for (k, raw) in o.iter() {
            let want = &v[&*k];
            let text = go_lone_surrogates(raw.text().as_bytes());
            assert_eq!(&serde_json::from_slice::<serde_json::Value>(&text).unwrap(), want);
            walk(raw, 0);
        }
    }
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
