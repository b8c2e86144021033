//! Serving certificates: `--tls-cert-file`/`--tls-private-key-file`, or, like kube-apiserver,
//! a self-signed pair generated into `--cert-dir` (`apiserver.crt` holds the serving certificate
//! followed by the CA that signed it, `apiserver.key` its key; an existing pair is reused, half
//! a pair is refused). Either pair is then served through
//! [`ServingCertReloader`](kube_authn::tls::serving_cert::ServingCertReloader), which reloads it.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SerialNumber,
};

/// The serving certificate and where it lives.
pub struct ServingCert {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    /// The CA of a generated pair (clients pass it to `--cacert`); `None` for user-provided files.
    pub ca_file: Option<PathBuf>,
    pub generated: bool,
}

/// How long a generated certificate is valid: client-go's `GenerateSelfSignedCertKey` default
/// (`maxAge` 365 days).
const VALIDITY: Duration = Duration::from_secs(365 * 24 * 60 * 60);
/// A generated certificate is valid from this long before it was made ("an hour earlier to
/// avoid flakes due to clock skew").
const BACKDATE: Duration = Duration::from_secs(60 * 60);

/// client-go's `CanReadCertAndKey`: `Ok(true)` when both files can be opened, `Ok(false)` when
/// neither can, and an error naming the one that cannot when only one can.
fn can_read_cert_and_key(cert: &Path, key: &Path) -> Result<bool, String> {
    let readable = |p: &Path| std::fs::File::open(p).is_ok();
    match (readable(cert), readable(key)) {
        (true, true) => Ok(true),
        (false, false) => Ok(false),
        (false, true) => Err(format!(
            "error reading {}, certificate and key must be supplied as a pair",
            cert.display()
        )),
        (true, false) => Err(format!(
            "error reading {}, certificate and key must be supplied as a pair",
            key.display()
        )),
    }
}

/// The hosts `kube-authn serve` names in a certificate it generates: `localhost`,
/// `127.0.0.1`, `::1`, and the `--bind-address` unless it is a wildcard or one of these.
pub fn self_signed_hosts(bind_address: IpAddr) -> Vec<String> {
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !bind_address.is_unspecified() {
        hosts.push(bind_address.to_string());
    }
    distinct_hosts(&hosts)
}

/// `hosts` with each one once, in the order first given; addresses are compared (and written)
/// in their canonical form (`0:0:0:0:0:0:0:1` is `::1`, `::ffff:127.0.0.1` is `127.0.0.1`, as
/// Go's x509 writes an IPv4-mapped address in four bytes).
fn distinct_hosts(hosts: &[String]) -> Vec<String> {
    let mut distinct: Vec<String> = Vec::with_capacity(hosts.len());
    for host in hosts {
        let host = match host.parse::<IpAddr>() {
            Ok(ip) => ip.to_canonical().to_string(),
            Err(_) => host.clone(),
        };
        if !distinct.contains(&host) {
            distinct.push(host);
        }
    }
    distinct
}

/// Generates a CA and a serving certificate for `hosts` (DNS names and IP addresses) into `dir`,
/// unless `apiserver.crt`/`apiserver.key` can already be read there (only one of them is an
/// error, as in kube-apiserver). Each host is named once.
pub fn ensure_self_signed(dir: &Path, hosts: &[String]) -> Result<ServingCert, String> {
    ensure_self_signed_at(dir, hosts, SystemTime::now())
}

/// [`ensure_self_signed`] with the current time given.
fn ensure_self_signed_at(
    dir: &Path,
    hosts: &[String],
    now: SystemTime,
) -> Result<ServingCert, String> {
    let cert_file = dir.join("apiserver.crt");
    let key_file = dir.join("apiserver.key");
    let ca_file = dir.join("apiserver-ca.crt");
    if can_read_cert_and_key(&cert_file, &key_file)? {
        return Ok(ServingCert {
            ca_file: signing_ca(&cert_file, &ca_file),
            cert_file,
            key_file,
            generated: false,
        });
    }
    // Neither half can be opened. Where one is there all the same (no read permission, a
    // symbolic link to nowhere), kube-apiserver's `WriteFile` overwrites it or fails, depending on
    // who runs it; a file this server cannot read is not deleted to make room for a new pair.
    for path in [&cert_file, &key_file] {
        if std::fs::symlink_metadata(path).is_ok() {
            let why = std::fs::File::open(path)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "it cannot be opened".into());
            return Err(format!(
                "error reading {}: {why} (remove it to have a new pair generated)",
                path.display()
            ));
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("create --cert-dir {}: {e}", dir.display()))?;
    let unix = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    // Whole seconds, as the certificate encodes them.
    let valid_from = Duration::from_secs(unix).saturating_sub(BACKDATE);
    let epoch = rcgen::date_time_ymd(1970, 1, 1);
    let (not_before, not_after) = (epoch + valid_from, epoch + valid_from + VALIDITY);
    let hosts = distinct_hosts(hosts);
    let host = hosts.first().cloned().unwrap_or_else(|| "localhost".into());

    let err = |e: rcgen::Error| format!("generate self-signed certificate: {e}");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.distinguished_name = DistinguishedName::new();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("{host}-ca@{unix}"));
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
    ];
    ca_params.not_before = not_before;
    ca_params.not_after = not_after;
    ca_params.serial_number = Some(random_serial()?);
    let ca_key = KeyPair::generate().map_err(err)?;
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).map_err(err)?;

    let mut params = CertificateParams::new(hosts).map_err(err)?;
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, format!("{host}@{unix}"));
    params.is_ca = IsCa::ExplicitNoCa;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.use_authority_key_identifier_extension = true;
    params.not_before = not_before;
    params.not_after = not_after;
    params.serial_number = Some(random_serial()?);
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

/// The CA to give clients (`--cacert`) for a reused pair: `apiserver-ca.crt` when it holds the
/// certificate that `apiserver.crt` carries after its leaf and that issued that leaf (a pair
/// generated together). After `apiserver.crt` was replaced by hand, an old CA file no longer
/// matches and none is named.
fn signing_ca(cert_file: &Path, ca_file: &Path) -> Option<PathBuf> {
    use x509_parser::pem::Pem;
    let certificates = |path: &Path| -> Option<Vec<Vec<u8>>> {
        let bytes = std::fs::read(path).ok()?;
        Pem::iter_from_buffer(&bytes)
            .map(|pem| {
                pem.ok()
                    .filter(|p| p.label == "CERTIFICATE")
                    .map(|p| p.contents)
            })
            .collect()
    };
    let chain = certificates(cert_file)?;
    let ca = certificates(ca_file)?;
    let (leaf, ca) = match (chain.first(), ca.as_slice()) {
        (Some(leaf), [ca]) if chain[1..].contains(ca) => (leaf, ca),
        _ => return None,
    };
    let leaf = x509_parser::parse_x509_certificate(leaf).ok()?.1;
    let ca_cert = x509_parser::parse_x509_certificate(ca).ok()?.1;
    (leaf.issuer().as_raw() == ca_cert.subject().as_raw()).then(|| ca_file.to_path_buf())
}

/// A uniformly random serial number in [1, 2^63 - 1), as client-go draws it.
fn random_serial() -> Result<SerialNumber, String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| format!("generate a serial number: {e}"))?;
    let n = (u64::from_be_bytes(bytes) & (i64::MAX as u64)) % (i64::MAX as u64 - 1) + 1;
    Ok(SerialNumber::from(n))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;
    use x509_parser::certificate::X509Certificate;
    use x509_parser::pem::Pem;

    fn pems(path: &Path) -> Vec<Pem> {
        let bytes = std::fs::read(path).unwrap();
        Pem::iter_from_buffer(&bytes)
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn bounds(c: &X509Certificate<'_>) -> (i64, i64) {
        (
            c.validity().not_before.timestamp(),
            c.validity().not_after.timestamp(),
        )
    }

    /// client-go's `GenerateSelfSignedCertKey`: both certificates valid from an hour before
    /// "now" (whole seconds) for 365 days; the CA may sign certificates (KeyEncipherment,
    /// DigitalSignature, CertSign); the leaf is no CA and serves (KeyEncipherment,
    /// DigitalSignature, ServerAuth); random serials in [1, 2^63 - 1).
    #[test]
    fn generated_pair_is_valid_for_a_year_from_an_hour_before_now() {
        let dir = tempfile::tempdir().unwrap();
        let now = UNIX_EPOCH + Duration::from_millis(1_800_000_000_700);
        let hosts = ["localhost".to_string(), "127.0.0.1".into()];
        let out = ensure_self_signed_at(dir.path(), &hosts, now).unwrap();
        assert!(out.generated);
        let chain = pems(&out.cert_file);
        assert_eq!(chain.len(), 2);
        let ca_alone = pems(out.ca_file.as_deref().unwrap());
        assert_eq!(ca_alone[0].contents, chain[1].contents);
        let leaf = chain[0].parse_x509().unwrap();
        let ca = chain[1].parse_x509().unwrap();
        let from = 1_800_000_000 - 3600;
        for (name, c) in [("leaf", &leaf), ("ca", &ca)] {
            assert_eq!(bounds(c), (from, from + 365 * 86400), "{name}");
            let serial = c.tbs_certificate.serial.clone();
            assert!(serial > 0u32.into(), "{name}");
            assert!(serial < (i64::MAX as u64).into(), "{name}");
        }
        assert_eq!(
            ca.subject().to_string(),
            "CN=localhost-ca@1800000000".to_string()
        );
        assert_eq!(leaf.subject().to_string(), "CN=localhost@1800000000");

        let ca_usage = ca.key_usage().unwrap().unwrap().value;
        assert!(ca_usage.key_encipherment());
        assert!(ca_usage.digital_signature());
        assert!(ca_usage.key_cert_sign());
        assert!(!ca_usage.crl_sign());
        assert!(ca.basic_constraints().unwrap().unwrap().value.ca);

        let usage = leaf.key_usage().unwrap().unwrap().value;
        assert!(usage.key_encipherment());
        assert!(usage.digital_signature());
        assert!(!usage.key_cert_sign());
        let eku = leaf.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.server_auth);
        assert!(!eku.client_auth);
        assert!(!leaf.basic_constraints().unwrap().unwrap().value.ca);
        assert!(leaf.verify_signature(Some(ca.public_key())).is_ok());
    }

    /// The leaf's subject alternative names, in order, as `DNS:<name>` and `IP:<address>`.
    fn sans(leaf: &X509Certificate<'_>) -> Vec<String> {
        use x509_parser::extensions::GeneralName;
        let Ok(Some(ext)) = leaf.subject_alternative_name() else {
            return Vec::new();
        };
        ext.value
            .general_names
            .iter()
            .map(|name| match name {
                GeneralName::DNSName(dns) => format!("DNS:{dns}"),
                GeneralName::IPAddress(ip) => match ip.len() {
                    4 => format!(
                        "IP:{}",
                        <[u8; 4]>::try_from(*ip)
                            .map(std::net::Ipv4Addr::from)
                            .unwrap()
                    ),
                    16 => format!(
                        "IP:{}",
                        <[u8; 16]>::try_from(*ip)
                            .map(std::net::Ipv6Addr::from)
                            .unwrap()
                    ),
                    n => format!("IP of {n} bytes"),
                },
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// Each host is named once, in the order given, whatever the spelling of an address:
    /// `serve --bind-address=127.0.0.1` asked for 127.0.0.1 twice (it is always a SAN), and
    /// the certificate listed it twice.
    #[test]
    fn generated_pair_names_each_host_once() {
        let cases: [(&[&str], &[&str]); 3] = [
            (
                &["localhost", "127.0.0.1", "::1", "127.0.0.1"],
                &["DNS:localhost", "IP:127.0.0.1", "IP:::1"],
            ),
            (
                &[
                    "localhost",
                    "127.0.0.1",
                    "::1",
                    "0:0:0:0:0:0:0:1",
                    "::ffff:127.0.0.1",
                ],
                &["DNS:localhost", "IP:127.0.0.1", "IP:::1"],
            ),
            (
                &["localhost", "127.0.0.1", "::1", "10.1.2.3", "localhost"],
                &["DNS:localhost", "IP:127.0.0.1", "IP:::1", "IP:10.1.2.3"],
            ),
        ];
        for (hosts, want) in cases {
            let dir = tempfile::tempdir().unwrap();
            let hosts: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
            let out = ensure_self_signed_at(dir.path(), &hosts, SystemTime::now()).unwrap();
            let chain = pems(&out.cert_file);
            assert_eq!(sans(&chain[0].parse_x509().unwrap()), want, "{hosts:?}");
        }
    }

    /// `serve`'s hosts: the loopback names always, the bind address once when it is not a
    /// wildcard.
    #[test]
    fn serve_names_the_bind_address_once() {
        for (bind, want) in [
            ("0.0.0.0", &["localhost", "127.0.0.1", "::1"][..]),
            ("::", &["localhost", "127.0.0.1", "::1"]),
            ("127.0.0.1", &["localhost", "127.0.0.1", "::1"]),
            ("::1", &["localhost", "127.0.0.1", "::1"]),
            ("::ffff:127.0.0.1", &["localhost", "127.0.0.1", "::1"]),
            ("10.1.2.3", &["localhost", "127.0.0.1", "::1", "10.1.2.3"]),
            ("fd00::1", &["localhost", "127.0.0.1", "::1", "fd00::1"]),
        ] {
            assert_eq!(self_signed_hosts(bind.parse().unwrap()), want, "{bind}");
        }
    }

    /// The real clock: `ensure_self_signed` dates the pair an hour before the call.
    #[test]
    fn generated_pair_starts_an_hour_before_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let secs = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        let before = secs(SystemTime::now());
        let out = ensure_self_signed(dir.path(), &["localhost".into()]).unwrap();
        let after = secs(SystemTime::now());
        for pem in pems(&out.cert_file) {
            let (nb, na) = bounds(&pem.parse_x509().unwrap());
            assert!((before - 3600..=after - 3600).contains(&nb), "{nb}");
            assert_eq!(na - nb, 365 * 86400);
        }
    }

    #[test]
    fn an_existing_pair_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = ensure_self_signed(dir.path(), &["localhost".into()]).unwrap();
        let cert = std::fs::read(&first.cert_file).unwrap();
        let again = ensure_self_signed(dir.path(), &["localhost".into()]).unwrap();
        assert!(!again.generated);
        assert_eq!(std::fs::read(&again.cert_file).unwrap(), cert);
    }

    /// A reused pair names `apiserver-ca.crt` only while it holds the CA that issued the leaf
    /// in `apiserver.crt`: after `apiserver.crt` is replaced by a pair from another CA (or a
    /// lone leaf), the stale CA file is not offered to clients.
    #[test]
    fn a_reused_pair_names_only_the_ca_that_issued_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = ensure_self_signed(dir.path(), &["localhost".into()]).unwrap();
        let other = tempfile::tempdir().unwrap();
        let second = ensure_self_signed(other.path(), &["localhost".into()]).unwrap();
        let leaf_only = |path: &Path| {
            let pem = std::fs::read_to_string(path).unwrap();
            let end = pem.find("-----END CERTIFICATE-----").unwrap();
            pem[..end + "-----END CERTIFICATE-----".len() + 1].to_owned()
        };
        let cases: [(&str, Option<String>, Option<String>, bool); 5] = [
            ("generated together", None, None, true),
            (
                "apiserver.crt from another CA",
                Some(std::fs::read_to_string(&second.cert_file).unwrap()),
                None,
                false,
            ),
            (
                "apiserver.crt a lone leaf",
                Some(leaf_only(&first.cert_file)),
                None,
                false,
            ),
            (
                "the CA file is another CA",
                None,
                Some(std::fs::read_to_string(second.ca_file.as_deref().unwrap()).unwrap()),
                false,
            ),
            ("the CA file is not PEM", None, Some("junk".into()), false),
        ];
        let (cert, ca) = (
            std::fs::read_to_string(&first.cert_file).unwrap(),
            std::fs::read_to_string(first.ca_file.as_deref().unwrap()).unwrap(),
        );
        for (name, new_cert, new_ca, named) in cases {
            std::fs::write(&first.cert_file, new_cert.as_deref().unwrap_or(&cert)).unwrap();
            std::fs::write(
                first.ca_file.as_deref().unwrap(),
                new_ca.as_deref().unwrap_or(&ca),
            )
            .unwrap();
            let again = ensure_self_signed(dir.path(), &["localhost".into()]).unwrap();
            assert!(!again.generated, "{name}");
            assert_eq!(again.ca_file.is_some(), named, "{name}");
        }
    }

    /// Neither half can be opened but one is there (a symbolic link to nowhere; a file without
    /// read permission for a user that is not root): it is not deleted for a new pair.
    #[cfg(unix)]
    #[test]
    fn an_unreadable_pair_is_not_replaced() {
        for half in ["apiserver.crt", "apiserver.key"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(half);
            std::os::unix::fs::symlink(dir.path().join("nowhere"), &path).unwrap();
            let err = ensure_self_signed(dir.path(), &["localhost".into()])
                .err()
                .unwrap_or_else(|| panic!("{half}: a pair was generated over it"));
            assert!(
                err.starts_with(&format!("error reading {}: ", path.display()))
                    && err.ends_with("(remove it to have a new pair generated)"),
                "{half}: {err}"
            );
            assert_eq!(
                std::fs::read_link(&path).unwrap(),
                dir.path().join("nowhere"),
                "{half} replaced"
            );
            assert!(!dir.path().join("apiserver-ca.crt").exists(), "{half}");
        }
    }

    /// client-go's `CanReadCertAndKey`: half a pair is an error naming the missing half, and
    /// the half that is there is left as it was (not overwritten by a new pair).
    #[test]
    fn half_a_pair_is_refused_and_left_alone() {
        for (present, missing) in [
            ("apiserver.crt", "apiserver.key"),
            ("apiserver.key", "apiserver.crt"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(present), "mine").unwrap();
            let err = ensure_self_signed(dir.path(), &["localhost".into()])
                .err()
                .unwrap_or_else(|| panic!("only {present}: generated a pair"));
            assert_eq!(
                err,
                format!(
                    "error reading {}, certificate and key must be supplied as a pair",
                    dir.path().join(missing).display()
                )
            );
            assert_eq!(
                std::fs::read_to_string(dir.path().join(present)).unwrap(),
                "mine"
            );
            assert!(!dir.path().join(missing).exists());
            assert!(!dir.path().join("apiserver-ca.crt").exists());
        }
    }

    /// "Readable", not "exists": a half that cannot be opened is the missing half. Each half in
    /// turn is a symbolic link to itself, which nobody can open (`ELOOP`, for root too: the
    /// test runs as root in CI, where a mode of 000 would not stop it); it is left as it was.
    #[cfg(unix)]
    #[test]
    fn an_unreadable_half_counts_as_missing() {
        for half in ["apiserver.crt", "apiserver.key"] {
            let dir = tempfile::tempdir().unwrap();
            ensure_self_signed(dir.path(), &["localhost".into()]).unwrap();
            let path = dir.path().join(half);
            std::fs::remove_file(&path).unwrap();
            std::os::unix::fs::symlink(&path, &path).unwrap();
            assert!(std::fs::File::open(&path).is_err(), "{half} can be opened");
            let err = ensure_self_signed(dir.path(), &["localhost".into()])
                .err()
                .unwrap_or_else(|| panic!("an unreadable {half} is half a pair"));
            assert_eq!(
                err,
                format!(
                    "error reading {}, certificate and key must be supplied as a pair",
                    path.display()
                )
            );
            assert_eq!(std::fs::read_link(&path).unwrap(), path, "{half} replaced");
        }
    }
}
