//! TokenReview response parsing (`kube_authn::token::webhook::parse_response`): never panics;
//! a parsed status survives a serialise/parse round trip; errors never quote the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match kube_authn::token::webhook::parse_response(data) {
        Ok(status) => {
            let again = serde_json::to_vec(&kube_authn::api::TokenReview {
                status: status.clone(),
                ..Default::default()
            })
            .expect("a parsed status serialises");
            let back = kube_authn::token::webhook::parse_response(&again).expect("round trip parses");
            assert_eq!(back, status);
            let _ = status.user.to_identity();
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.starts_with("webhook: cannot decode TokenReview response: "), "{text}");
            // A fixed category (the longest is 51 bytes), never the body.
            assert!(text.len() <= 96, "error text is fixed, never the body: {text}");
        }
    }
});
