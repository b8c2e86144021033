//! `kube-authn serve --dev`: a self-contained demo setup in a temporary directory.

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use crate::ServeArgs;

/// A demo user written into the dev token and password files.
struct DemoUser {
    name: &'static str,
    uid: &'static str,
    groups: &'static str,
    token: String,
    password: String,
}

pub struct DevSetup {
    dir: PathBuf,
    users: Vec<DemoUser>,
}

fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| format!("random: {e}"))?;
    Ok(buf.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    }))
}

/// Fills in dev defaults (only where the user did not set the flag) and writes the files.
pub fn prepare(args: &mut ServeArgs) -> Result<DevSetup, String> {
    let dir = std::env::temp_dir().join(format!("kube-authn-dev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let users = vec![
        DemoUser {
            name: "admin",
            uid: "1",
            groups: "system:masters",
            token: random_hex(16)?,
            password: random_hex(8)?,
        },
        DemoUser {
            name: "jane",
            uid: "2",
            groups: "developers,qa",
            token: random_hex(16)?,
            password: random_hex(8)?,
        },
    ];
    if args.token_auth_file.is_none() {
        let path = dir.join("tokens.csv");
        let csv: String = users
            .iter()
            .map(|u| format!("{},{},{},\"{}\"\n", u.token, u.name, u.uid, u.groups))
            .collect();
        write_private(&path, &csv)?;
        args.token_auth_file = Some(path);
    }
    if args.basic_auth_file.is_none() {
        let path = dir.join("passwords.csv");
        let csv: String = users
            .iter()
            .map(|u| format!("{},{},{},\"{}\"\n", u.password, u.name, u.uid, u.groups))
            .collect();
        write_private(&path, &csv)?;
        args.basic_auth_file = Some(path);
    }
    if args.bind_address.is_unspecified() {
        args.bind_address = IpAddr::V4(Ipv4Addr::LOCALHOST);
    }
    if args.cert_dir == Path::new("/var/run/kubernetes") {
        args.cert_dir = dir.join("certs");
    }
    Ok(DevSetup { dir, users })
}

fn write_private(path: &Path, content: &str) -> Result<(), String> {
    std::fs::write(path, content).map_err(|e| format!("write {}: {e}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| format!("chmod {}: {e}", path.display()))?;
    }
    Ok(())
}

impl DevSetup {
    /// Prints curl and kubectl lines that work against this server (the demo credentials are
    /// printed on purpose: they exist only in this temporary directory).
    pub fn print_instructions(&self, addr: SocketAddr, ca: Option<&Path>) {
        let base = format!("https://{addr}");
        let cacert = ca
            .map(|p| format!("--cacert {}", p.display()))
            .unwrap_or_else(|| "--insecure".into());
        let whoami = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nkube-authn dev server on {base} (files in {})\n",
            self.dir.display()
        );
        for u in &self.users {
            let _ = writeln!(out, "# who am I, as {} (bearer token):", u.name);
            let _ = writeln!(
                out,
                "curl {cacert} -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' -d '{whoami}' {base}/apis/authentication.k8s.io/v1/selfsubjectreviews\n",
                u.token
            );
        }
        let admin = &self.users[0];
        let _ = writeln!(out, "# the same with basic auth:");
        let _ = writeln!(
            out,
            "curl {cacert} -u '{}:{}' -H 'Content-Type: application/json' -d '{whoami}' {base}/apis/authentication.k8s.io/v1/selfsubjectreviews\n",
            admin.name, admin.password
        );
        let _ = writeln!(
            out,
            "# review another user's token (TokenReview, as a webhook would):"
        );
        let _ = writeln!(
            out,
            "curl {cacert} -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' -d '{{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{{\"token\":\"{}\"}}}}' {base}/apis/authentication.k8s.io/v1/tokenreviews\n",
            admin.token, self.users[1].token
        );
        let kubeconfig = self.dir.join("kubeconfig");
        let ca_line = ca
            .map(|p| format!("    certificate-authority: {}\n", p.display()))
            .unwrap_or_else(|| "    insecure-skip-tls-verify: true\n".into());
        let config = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-authn-dev\n  cluster:\n    server: {base}\n{ca_line}users:\n- name: jane\n  user:\n    token: {}\ncontexts:\n- name: dev\n  context:\n    cluster: kube-authn-dev\n    user: jane\ncurrent-context: dev\n",
            self.users[1].token
        );
        if write_private(&kubeconfig, &config).is_ok() {
            let _ = writeln!(out, "# kubectl:");
            let _ = writeln!(
                out,
                "KUBECONFIG={} kubectl auth whoami\n",
                kubeconfig.display()
            );
        }
        let _ = writeln!(out, "# unauthenticated (anonymous) and a bad token (401):");
        let _ = writeln!(out, "curl {cacert} {base}/healthz");
        let _ = writeln!(
            out,
            "curl {cacert} -H 'Authorization: Bearer wrong' {base}/healthz"
        );
        println!("{out}");
    }
}
