//! Whole password-file bytes: never panics; errors never contain a planted password; a
//! loaded file answers checks.
#![no_main]

use kube_authn::password::file::PasswordFile;
use libfuzzer_sys::fuzz_target;

const MARKER: &str = "ZZSECRETZZ";

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = PasswordFile::from_csv(data, "fuzz") {
        let _ = file.check("user", "password");
        let _ = format!("{file:?}");
    }
    let mut planted = MARKER.as_bytes().to_vec();
    planted.extend_from_slice(data);
    match PasswordFile::from_csv(&planted, "fuzz") {
        Ok(file) => {
            assert!(!format!("{file:?}").contains(MARKER));
            // Duplicate-user warnings name the user (not secret), so check only when the
            // marker can be nothing but the first password.
            if !data.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()) {
                for w in file.warnings() {
                    assert!(!w.contains(MARKER), "secret in warning");
                }
            }
        }
        Err(e) => assert!(!e.to_string().contains(MARKER), "secret in error"),
    }
});
