//! Shared by the x509 and front-proxy benches: a small openssl-CLI PKI.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use kube_authn::tls::pki_types::CertificateDer;

pub struct Pki(pub tempfile::TempDir);

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("the benches need the openssl CLI");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Pki {
    pub fn new() -> Self {
        Pki(tempfile::tempdir().unwrap())
    }

    fn p(&self, f: &str) -> PathBuf {
        self.0.path().join(f)
    }

    /// Issues `name` with key type `rsa` (RSA-2048) or P-256, signed by `issuer` (or self).
    pub fn issue(
        &self,
        name: &str,
        rsa: bool,
        subj: &str,
        ca: bool,
        issuer: Option<&str>,
    ) -> CertificateDer<'static> {
        let key = self.p(&format!("{name}.key"));
        let mut g = Command::new("openssl");
        g.arg("genpkey").arg("-out").arg(&key);
        if rsa {
            g.args(["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]);
        } else {
            g.args(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]);
        }
        run(&mut g);
        let csr = self.p(&format!("{name}.csr"));
        run(Command::new("openssl")
            .args(["req", "-new", "-key"])
            .arg(&key)
            .args(["-subj", subj, "-out"])
            .arg(&csr));
        let ext = self.p(&format!("{name}.ext"));
        std::fs::write(
            &ext,
            if ca {
                "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign"
            } else {
                "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth"
            },
        )
        .unwrap();
        let cert = self.p(&format!("{name}.pem"));
        let mut x = Command::new("openssl");
        x.args([
            "x509",
            "-req",
            "-sha256",
            "-days",
            "3650",
            "-set_serial",
            "5",
            "-in",
        ])
        .arg(&csr)
        .arg("-extfile")
        .arg(&ext)
        .arg("-out")
        .arg(&cert);
        match issuer {
            Some(i) => x
                .arg("-CA")
                .arg(self.p(&format!("{i}.pem")))
                .arg("-CAkey")
                .arg(self.p(&format!("{i}.key"))),
            None => x.arg("-signkey").arg(&key),
        };
        run(&mut x);
        let pem = std::fs::read(&cert).unwrap();
        kube_authn::x509::parse_pem_bundle(&pem).unwrap().remove(0)
    }

    pub fn path(&self, f: &str) -> PathBuf {
        self.p(f)
    }
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}
