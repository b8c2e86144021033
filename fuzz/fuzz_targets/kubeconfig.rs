//! kubeconfig parsing and resolution (`Kubeconfig::parse` + `connection_info`): never panics,
//! reads no file outside a non-existent directory, and secrets (token, password) never reach
//! `Debug` output or error messages. Each non-empty secret is replaced by a marker before
//! resolution, so a token that happens to equal fixed error text or a public field (a context
//! name, a path) is not mistaken for a leak; a marker the input also spells in a public field
//! is skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let Ok(mut cfg) = kube_authn::outbound::kubeconfig::Kubeconfig::parse(data) else {
        return;
    };
    let mut markers = Vec::new();
    for (i, u) in cfg.users.iter_mut().enumerate() {
        for (j, slot) in [&mut u.user.token, &mut u.user.password].into_iter().enumerate() {
            if slot.as_deref().is_some_and(|s| !s.is_empty()) {
                let marker = format!("kubeauthnfuzzsecret{i}x{j}q");
                *slot = Some(marker.clone());
                markers.push(marker);
            }
        }
    }
    // `Kubeconfig`'s Debug redacts secrets: it is the public view of the input.
    let public = format!("{cfg:?}");
    markers.retain(|m| !public.contains(m.as_str()));
    let shown = match cfg.connection_info(Some(std::path::Path::new("/nonexistent-fuzz-dir"))) {
        Ok(info) => {
            let _ = info.fingerprint();
            format!("{info:?}")
        }
        Err(e) => e.to_string(),
    };
    for m in markers {
        assert!(!shown.contains(m.as_str()), "a secret reached Debug or an error");
    }
});
