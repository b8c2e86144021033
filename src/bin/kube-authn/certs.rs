//! Serving certificates: load `--tls-cert-file`/`--tls-private-key-file`, or, like kube-apiserver,
//! generate a self-signed pair into `--cert-dir` (`apiserver.crt` holds the serving certificate
//! followed by the CA that signed it, `apiserver.key` its key; an existing pair is reused).

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The serving certificate and where it lives.
pub struct ServingCert {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// The CA of a generated pair (clients pass it to `--cacert`); `None` for user-provided files.
    pub ca_file: Option<PathBuf>,
    pub generated: bool,
}

/// Generates a CA and a serving certificate for `hosts` (DNS names and IP addresses) into `dir`,
/// unless `apiserver.crt`/`apiserver.key` already exist there.
pub fn ensure_self_signed(dir: &Path, hosts: &[String]) -> Result<ServingCert, String> {
    let cert_file = dir.join("apiserver.crt");
    let key_file = dir.join("apiserver.key");
    let ca_file = dir.join("apiserver-ca.crt");
    if cert_file.exists() && key_file.exists() {
        return Ok(ServingCert {
            ca_file: ca_file.exists().then_some(ca_file),
            cert_file,
            key_file,
            generated: false,
        });
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("create --cert-dir {}: {e}", dir.display()))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let host = hosts.first().cloned().unwrap_or_else(|| "localhost".into());

    let err = |e: rcgen::Error| format!("generate self-signed certificate: {e}");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.distinguished_name = DistinguishedName::new();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("{host}-ca@{now}"));
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().map_err(err)?;
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).map_err(err)?;

    let mut params = CertificateParams::new(hosts.to_vec()).map_err(err)?;
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, format!("{host}@{now}"));
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let key = KeyPair::generate().map_err(err)?;
    let cert = params.signed_by(&key, &ca).map_err(err)?;

    let write = write_file;
    write(&cert_file, format!("{}{}", cert.pem(), ca.pem()), false)?;
    write(&key_file, key.serialize_pem(), true)?;
    write(&ca_file, ca.pem(), false)?;
    Ok(ServingCert {
        cert_file,
        key_file,
        ca_file: Some(ca_file),
        generated: true,
    })
}

/// Loads a certificate chain and key for rustls.
pub fn load(
    cert_file: &Path,
    key_file: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .map_err(|e| format!("--tls-cert-file {}: {e}", cert_file.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--tls-cert-file {}: {e}", cert_file.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "--tls-cert-file {}: no certificates found",
            cert_file.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(key_file)
        .map_err(|e| format!("--tls-private-key-file {}: {e}", key_file.display()))?;
    Ok((certs, key))
}

/// A client certificate to issue: file names (inside the directory), CN and O values.
pub struct ClientLeaf<'a> {
    pub cert: &'a str,
    pub key: &'a str,
    pub cn: &'a str,
    pub orgs: &'a [&'a str],
}

/// Writes a CA (`ca_file`, CN `ca_cn`) and client certificates it signs (ClientAuth EKU) into
/// `dir`, unless every file already exists there. Development and tests only.
pub fn ensure_client_pki(
    dir: &Path,
    ca_file: &str,
    ca_cn: &str,
    leaves: &[ClientLeaf<'_>],
) -> Result<(), String> {
    let all_exist = std::iter::once(ca_file)
        .chain(leaves.iter().flat_map(|l| [l.cert, l.key]))
        .all(|f| dir.join(f).exists());
    if all_exist {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let err = |e: rcgen::Error| format!("generate {ca_cn}: {e}");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.distinguished_name = DistinguishedName::new();
    ca_params.distinguished_name.push(DnType::CommonName, ca_cn);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(err)?).map_err(err)?;
    for leaf in leaves {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
        params.distinguished_name = DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, leaf.cn);
        for o in leaf.orgs {
            params.distinguished_name.push(DnType::OrganizationName, *o);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let key = KeyPair::generate().map_err(err)?;
        let cert = params.signed_by(&key, &ca).map_err(err)?;
        write_file(&dir.join(leaf.cert), cert.pem(), false)?;
        write_file(&dir.join(leaf.key), key.serialize_pem(), true)?;
    }
    write_file(&dir.join(ca_file), ca.pem(), false)
}

/// Writes `data` to `path` as a new file: whatever was there (a file, or a symlink someone
/// placed) is removed first and the file is created exclusively (`O_EXCL`, which never follows a
/// symlink); `private` files are created readable by the owner only (0600 from the start, as
/// Go's `keyutil.WriteKey`), not made so after being written.
pub fn write_file(path: &Path, data: String, private: bool) -> Result<(), String> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("replace {}: {e}", path.display())),
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    let _ = private;
    options
        .open(path)
        .and_then(|mut f| f.write_all(data.as_bytes()))
        .map_err(|e| format!("write {}: {e}", path.display()))
}

/// Writes a service-account signing key pair (`sa.key`, PKCS#8 EC P-256; `sa.pub`, PKIX) into
/// `dir` unless both exist; returns their paths. Development only.
pub fn ensure_service_account_key(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let private = dir.join("sa.key");
    let public = dir.join("sa.pub");
    if private.exists() && public.exists() {
        return Ok((private, public));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let key = KeyPair::generate().map_err(|e| format!("generate service-account key: {e}"))?;
    write_file(&private, key.serialize_pem(), true)?;
    write_file(&public, key.public_key_pem(), false)?;
    Ok((private, public))
}
