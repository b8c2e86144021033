//! Whole token-file bytes: never panics; a loaded file answers lookups; errors never contain
//! a marker planted as the first token.
#![no_main]

use kube_authn::token::file::TokenFile;
use libfuzzer_sys::fuzz_target;

const MARKER: &str = "ZZSECRETZZ";

fuzz_target!(|data: &[u8]| {
    match TokenFile::from_csv(data, "fuzz") {
        Ok(file) => {
            let _ = file.lookup("token");
            let _ = file.len();
            let _ = format!("{file:?}");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    // The same input behind a planted secret: no message may quote it.
    let mut planted = MARKER.as_bytes().to_vec();
    planted.extend_from_slice(data);
    match TokenFile::from_csv(&planted, "fuzz") {
        Ok(file) => {
            assert!(!format!("{file:?}").contains(MARKER));
            for w in file.warnings() {
                assert!(!w.contains(MARKER));
            }
        }
        Err(e) => assert!(!e.to_string().contains(MARKER), "secret in error"),
    }
});
