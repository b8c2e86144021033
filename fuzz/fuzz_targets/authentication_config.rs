//! `--authentication-config` files (`AuthenticationConfiguration`): decoding, Kubernetes'
//! validation (issuer and discovery URLs through the model of Go's `url.Parse`, claim
//! mappings, the `anonymous` section) never panic, and a file is either accepted by both
//! loaders' shared decoding or refused by both.
#![no_main]

use libfuzzer_sys::fuzz_target;

use kube_authn::token::oidc::config::{load_anonymous_configuration, load_authentication_configuration};

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let disallowed = ["https://kubernetes.default.svc".to_owned()];
    let jwt = load_authentication_configuration(data, &disallowed);
    let anonymous = load_anonymous_configuration(data);
    // Whatever the full validation says, the anonymous loader validates only its section: a
    // file the full loader accepts is one the anonymous loader accepts too.
    if jwt.is_ok() {
        assert!(anonymous.is_ok(), "accepted as a whole, refused for its anonymous section");
    }
    if let Ok(Some(a)) = anonymous {
        // Conditions only with `enabled: true` (Kubernetes' rule).
        assert!(a.enabled || a.paths.is_empty());
        let _ = a.authenticator();
    }
});
