//! kubeconfig parsing and resolution (`Kubeconfig::parse` + `connection_info`): never panics,
//! reads no file outside a non-existent directory, and secrets (token, password) never reach
//! `Debug` output or error messages unless the input also spells them in a public field.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let Ok(cfg) = kube_authn::outbound::kubeconfig::Kubeconfig::parse(data) else {
        return;
    };
    // `Kubeconfig`'s Debug redacts secrets: it is the public view of the input.
    let public = format!("{cfg:?}");
    let secrets: Vec<&str> = cfg
        .users
        .iter()
        .flat_map(|u| [u.user.token.as_deref(), u.user.password.as_deref()])
        .flatten()
        .filter(|s| s.len() >= 8 && !public.contains(*s))
        .collect();
    let shown = match cfg.connection_info(Some(std::path::Path::new("/nonexistent-fuzz-dir"))) {
        Ok(info) => {
            let _ = info.fingerprint();
            format!("{info:?}")
        }
        Err(e) => e.to_string(),
    };
    for s in secrets {
        assert!(!shown.contains(s), "a secret reached Debug or an error");
    }
});
