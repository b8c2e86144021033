//! `kube-authn serve --dev`: a self-contained demo setup in a temporary directory.

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use crate::ServeArgs;
use crate::certs::{ClientLeaf, ensure_client_pki, ensure_service_account_key};

/// A demo user written into the dev token and password files.
struct DemoUser {
    name: &'static str,
    uid: &'static str,
    groups: &'static str,
    token: String,
    password: String,
}

/// The dev directory, removed with everything in it when dropped: when the server stops, and
/// when setting up fails half-way (the demo credentials never outlive the process's use).
struct DevDir(PathBuf);

impl Drop for DevDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub struct DevSetup {
    dir: DevDir,
    users: Vec<DemoUser>,
    /// The demo users' tokens are in the served token file (dev wrote it: no
    /// `--token-auth-file` was given).
    demo_tokens: bool,
    /// Their passwords are in the served password file (no `--basic-auth-file` was given).
    demo_passwords: bool,
    /// A client certificate and key signed by the dev `--client-ca-file`.
    client_cert: Option<(PathBuf, PathBuf)>,
    /// The front proxy's client certificate and key (CN `front-proxy-client`).
    proxy_cert: Option<(PathBuf, PathBuf)>,
    /// The service-account signing key.
    sa_key: Option<PathBuf>,
    /// The first `--api-audiences` value when one was given (the printed token must carry it).
    audience: Option<String>,
    /// The TokenReview line's admin (`system:masters`) may create TokenReviews
    /// (`--token-review-groups`).
    admin_reviews: bool,
}

/// The dev service-account issuer (also the default API audience).
pub const DEV_ISSUER: &str = "https://kube-authn.dev";

/// The dev client certificate's user.
const DEV_CERT_USER: &str = "dev-cert-user";
/// The dev front proxy's CN (kubeadm's name).
const FRONT_PROXY_CN: &str = "front-proxy-client";

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
    // A new directory with an unpredictable name, only the owner's (0700): an existing one
    // (someone else's CA or keys planted at a guessable path) is never reused. Removed when
    // the server stops (`DevSetup`'s drop).
    let dir = std::env::temp_dir().join(format!(
        "kube-authn-dev-{}-{}",
        std::process::id(),
        random_hex(6)?
    ));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .map_err(|e| format!("create {}: {e}", dir.display()))?;
    let dir = DevDir(dir);
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
    let demo_tokens = args.token_auth_file.is_none();
    let demo_passwords = args.basic_auth_file.is_none();
    if args.token_auth_file.is_none() {
        let path = dir.0.join("tokens.csv");
        let csv: String = users
            .iter()
            .map(|u| format!("{},{},{},\"{}\"\n", u.token, u.name, u.uid, u.groups))
            .collect();
        write_private(&path, &csv)?;
        args.token_auth_file = Some(path);
    }
    if args.basic_auth_file.is_none() {
        let path = dir.0.join("passwords.csv");
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
        args.cert_dir = dir.0.join("certs");
    }
    let certs = args.cert_dir.clone();
    let mut client_cert = None;
    if args.client_ca_file.is_none() {
        ensure_client_pki(
            &certs,
            "dev-client-ca.crt",
            "kube-authn dev client CA",
            &[ClientLeaf {
                cert: "dev-client.crt",
                key: "dev-client.key",
                cn: DEV_CERT_USER,
                orgs: &["developers"],
            }],
        )?;
        args.client_ca_file = Some(certs.join("dev-client-ca.crt"));
        client_cert = Some((certs.join("dev-client.crt"), certs.join("dev-client.key")));
    }
    let mut proxy_cert = None;
    if args.requestheader_client_ca_file.is_none() {
        // kubeadm's front-proxy setup: its own CA, CN front-proxy-client, the X-Remote-* names.
        ensure_client_pki(
            &certs,
            "front-proxy-ca.crt",
            "kube-authn dev front-proxy CA",
            &[ClientLeaf {
                cert: "front-proxy-client.crt",
                key: "front-proxy-client.key",
                cn: FRONT_PROXY_CN,
                orgs: &[],
            }],
        )?;
        args.requestheader_client_ca_file = Some(certs.join("front-proxy-ca.crt"));
        let standard = kube_authn::request::RequestHeaderConfig::standard();
        let fill = |flag: &mut Vec<String>, value: Vec<String>| {
            if flag.is_empty() {
                *flag = value;
            }
        };
        fill(
            &mut args.requestheader_allowed_names,
            vec![FRONT_PROXY_CN.into()],
        );
        fill(
            &mut args.requestheader_username_headers,
            standard.username_headers,
        );
        fill(&mut args.requestheader_uid_headers, standard.uid_headers);
        fill(
            &mut args.requestheader_group_headers,
            standard.group_headers,
        );
        fill(
            &mut args.requestheader_extra_headers_prefix,
            standard.extra_headers_prefix,
        );
        proxy_cert = Some((
            certs.join("front-proxy-client.crt"),
            certs.join("front-proxy-client.key"),
        ));
    }
    let mut sa_key = None;
    if args.service_account_key_files.is_empty() && args.service_account_issuers.is_empty() {
        let (private, public) = ensure_service_account_key(&certs)?;
        args.service_account_key_files = vec![public];
        args.service_account_issuers = vec![DEV_ISSUER.into()];
        // There is no cluster to look service accounts up in.
        args.service_account_lookup = false;
        sa_key = Some(private);
    }
    Ok(DevSetup {
        dir,
        users,
        demo_tokens,
        demo_passwords,
        client_cert,
        proxy_cert,
        sa_key,
        audience: args.api_audiences.first().cloned(),
        admin_reviews: args
            .token_review_groups
            .iter()
            .any(|g| g == "system:masters"),
    })
}

/// `s` as one POSIX shell word: in single quotes, each `'` written as `'\''`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `s` as a YAML double-quoted scalar (JSON's string syntax, which YAML reads the same way),
/// with DEL and the C1 controls escaped too: JSON leaves them raw, and go-yaml refuses a raw
/// one (`control characters are not allowed`) or reads U+0085 as a line break.
fn yaml_quote(s: &str) -> String {
    let json = serde_json::Value::from(s).to_string();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

fn write_private(path: &Path, content: &str) -> Result<(), String> {
    crate::certs::write_file(path, content.to_owned(), true)
}

impl DevSetup {
    /// Prints curl and kubectl lines that work against this server (the demo credentials are
    /// printed on purpose: they exist only in this temporary directory). `healthz_anonymous`:
    /// the built chain answers a request to `/healthz` without credentials with the anonymous
    /// user (`--anonymous-auth`, or the `anonymous` section of `--authentication-config` with
    /// its path conditions).
    pub fn print_instructions(&self, addr: SocketAddr, ca: Option<&Path>, healthz_anonymous: bool) {
        let base = format!("https://{addr}");
        let cacert = ca
            .map(|p| format!("--cacert {}", sh_quote(&p.display().to_string())))
            .unwrap_or_else(|| "--insecure".into());
        let whoami = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nkube-authn dev server on {base} (files in {})\n",
            self.dir.0.display()
        );
        // The demo users exist only in the files dev wrote: with a given --token-auth-file or
        // --basic-auth-file their lines would only get 401s.
        let admin = &self.users[0];
        if self.demo_tokens {
            for u in &self.users {
                let _ = writeln!(out, "# who am I, as {} (bearer token):", u.name);
                let _ = writeln!(
                    out,
                    "curl {cacert} -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' -d '{whoami}' {base}/apis/authentication.k8s.io/v1/selfsubjectreviews\n",
                    u.token
                );
            }
        }
        if self.demo_passwords {
            let _ = writeln!(out, "# who am I, with basic auth:");
            let _ = writeln!(
                out,
                "curl {cacert} -u '{}:{}' -H 'Content-Type: application/json' -d '{whoami}' {base}/apis/authentication.k8s.io/v1/selfsubjectreviews\n",
                admin.name, admin.password
            );
        }
        if self.demo_tokens && self.admin_reviews {
            let _ = writeln!(
                out,
                "# review another user's token (TokenReview, as a webhook would):"
            );
            let _ = writeln!(
                out,
                "curl {cacert} -H 'Authorization: Bearer {}' -H 'Content-Type: application/json' -d '{{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{{\"token\":\"{}\"}}}}' {base}/apis/authentication.k8s.io/v1/tokenreviews\n",
                admin.token, self.users[1].token
            );
        }
        let ssr = format!(
            "-H 'Content-Type: application/json' -d '{whoami}' {base}/apis/authentication.k8s.io/v1/selfsubjectreviews"
        );
        if let Some((cert, key)) = &self.client_cert {
            let _ = writeln!(
                out,
                "# who am I, with a client certificate (--client-ca-file; user {DEV_CERT_USER}):"
            );
            let _ = writeln!(
                out,
                "curl {cacert} --cert {} --key {} {ssr}\n",
                sh_quote(&cert.display().to_string()),
                sh_quote(&key.display().to_string())
            );
        }
        if let Some((cert, key)) = &self.proxy_cert {
            let _ = writeln!(
                out,
                "# who am I, through the front proxy (its certificate, CN {FRONT_PROXY_CN}, vouches for the X-Remote-* headers):"
            );
            let _ = writeln!(
                out,
                "curl {cacert} --cert {} --key {} -H 'X-Remote-User: alice' -H 'X-Remote-Group: admins' -H 'X-Remote-Extra-Scopes: read' {ssr}\n",
                sh_quote(&cert.display().to_string()),
                sh_quote(&key.display().to_string())
            );
        }
        if let Some(key) = &self.sa_key {
            // Minted for the first API audience when they were given (the issuer otherwise).
            let audience = self
                .audience
                .as_deref()
                .map(|a| format!(" --audience {}", sh_quote(a)))
                .unwrap_or_default();
            let exe = std::env::current_exe()
                .map(|p| sh_quote(&p.display().to_string()))
                .unwrap_or_else(|_| "kube-authn".into());
            let _ = writeln!(
                out,
                "# who am I, with a service-account token (issuer {DEV_ISSUER}, minted by `kube-authn dev-token`):"
            );
            let _ = writeln!(
                out,
                "curl {cacert} -H \"Authorization: Bearer $({exe} dev-token --key-file {} --namespace default --name demo{audience})\" {ssr}\n",
                sh_quote(&key.display().to_string())
            );
        }
        let kubeconfig = self.dir.0.join("kubeconfig");
        let ca_line = ca
            .map(|p| {
                format!(
                    "    certificate-authority: {}\n",
                    yaml_quote(&p.display().to_string())
                )
            })
            .unwrap_or_else(|| "    insecure-skip-tls-verify: true\n".into());
        let config = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-authn-dev\n  cluster:\n    server: {base}\n{ca_line}users:\n- name: jane\n  user:\n    token: {}\ncontexts:\n- name: dev\n  context:\n    cluster: kube-authn-dev\n    user: jane\ncurrent-context: dev\n",
            self.users[1].token
        );
        if self.demo_tokens && write_private(&kubeconfig, &config).is_ok() {
            let _ = writeln!(out, "# kubectl:");
            let _ = writeln!(
                out,
                "KUBECONFIG={} kubectl auth whoami\n",
                sh_quote(&kubeconfig.display().to_string())
            );
        }
        if !healthz_anonymous {
            let _ = writeln!(
                out,
                "# unauthenticated (401: anonymous requests are off for /healthz) and a bad token (401):"
            );
        } else {
            let _ = writeln!(out, "# unauthenticated (anonymous) and a bad token (401):");
        }
        let _ = writeln!(out, "curl {cacert} {base}/healthz");
        let _ = writeln!(
            out,
            "curl {cacert} -H 'Authorization: Bearer wrong' {base}/healthz"
        );
        println!("{out}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each printed value is one shell word that the shell gives back unchanged, whatever it
    /// holds (a `TMPDIR` or `--cert-dir` with spaces, quotes, `$`, `;` or a newline).
    #[test]
    fn printed_values_are_one_shell_word() {
        for value in [
            "/tmp/plain/apiserver-ca.crt",
            "/tmp/with space/ca.crt",
            "/tmp/it's/ca.crt",
            "/tmp/'';$(touch /tmp/owned)`id`;\"x\"/ca.crt",
            "/tmp/new\nline",
            "",
        ] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", sh_quote(value)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), value, "{value:?}");
        }
    }

    /// The kubeconfig's CA path reads back as written, even with YAML's own characters.
    #[test]
    fn kubeconfig_paths_are_yaml_strings() {
        for value in [
            "/tmp/plain",
            "/tmp/a: b #c",
            "/tmp/\"q\"\\",
            "- [x]",
            "/tmp/new\nline",
            "/tmp/del\u{7f}",
            "/tmp/nel\u{85}",
            "/tmp/c1\u{90}",
        ] {
            let doc = format!("certificate-authority: {}\n", yaml_quote(value));
            let parsed: std::collections::BTreeMap<String, String> =
                serde_yaml_ng::from_str(&doc).unwrap();
            assert_eq!(parsed["certificate-authority"], value, "{doc}");
            // Printable ASCII only, which go-yaml reads back unchanged.
            assert!(
                doc.chars().all(|c| c == '\n' || (' '..='~').contains(&c)),
                "{doc:?}"
            );
        }
    }
}
