//! The `extension-apiserver-authentication` ConfigMap loader (JSON and YAML): never panics,
//! bounded input, and a loaded request-header config either builds a front proxy or fails
//! with a configuration error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(config)) = kube_authn::request::RequestHeaderConfig::from_configmap(data) {
        let _ = config.validate();
        let _ = kube_authn::request::FrontProxy::new(config);
    }
});
