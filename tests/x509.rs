//! X.509 client-certificate authentication: k8s `x509_test.go` vectors (regenerated with
//! RSA-2048 / P-256 keys as the reference notes say), the differences from Go's crypto/x509,
//! bounds, caching, CA reload, and real clients (curl, reqwest) over real TLS against
//! kube-authn's own accept loop.

mod log_support;
mod x509_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kube_authn::authenticator::RequestAuthenticator;
use kube_authn::tls::pki_types::CertificateDer;
use kube_authn::tls::{ClientCertPolicy, PeerCertificates};
use kube_authn::x509::{CaBundle, ExpirationHistogram, KeyUsage, X509Authenticator};
use log_support::capture_logs;
use x509_support::*;

const YEAR: i64 = 365 * 86_400;

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn clock_at(secs: i64) -> kube_authn::x509::Clock {
    Arc::new(move || {
        if secs >= 0 {
            UNIX_EPOCH + Duration::from_secs(secs as u64)
        } else {
            UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
        }
    })
}

fn bundle(certs: &[&Issued]) -> CaBundle {
    CaBundle::from_der(certs.iter().map(|c| c.der.clone()).collect()).unwrap()
}

fn peer(certs: &[&Issued]) -> PeerCertificates {
    PeerCertificates::injected(certs.iter().map(|c| c.der.clone()).collect())
}

#[derive(Debug, PartialEq)]
struct Got {
    name: String,
    uid: String,
    groups: Vec<String>,
    credential_id: Option<String>,
}

fn outcome(auth: &X509Authenticator, p: &PeerCertificates) -> Result<Option<Got>, String> {
    auth.authenticate_peer(p)
        .map(|o| {
            o.map(|r| Got {
                name: r.user.name().into(),
                uid: r.user.uid().into(),
                groups: r.user.groups().map(Into::into).collect(),
                credential_id: r
                    .user
                    .extra()
                    .get(kube_authn::user::CREDENTIAL_ID_KEY)
                    .map(|v| v.join(",")),
            })
        })
        .map_err(|e| e.to_string())
}

fn ok(name: &str, uid: &str, groups: &[&str], cert: &Issued) -> Result<Option<Got>, String> {
    Ok(Some(Got {
        name: name.into(),
        uid: uid.into(),
        groups: groups.iter().map(|s| s.to_string()).collect(),
        credential_id: Some(format!("X509SHA256={}", sha256_hex(&cert.der))),
    }))
}

enum Want {
    Exact(Result<Option<Got>, String>),
    /// An error whose text ends with this (after the `verifying certificate … failed: ` prefix).
    ErrEnds(&'static str),
    ErrContains(&'static str),
}

#[test]
fn k8s_x509_vectors_and_go_differences() {
    let pki = Pki::new();
    // §6.6: the root and client certificates, regenerated with RSA-2048 and SHA-256.
    let root = pki.issue(
        "root",
        Spec {
            subj: "/C=US/ST=My State/L=My City/O=My Org/OU=My Unit/CN=ROOT CA",
            key: Key::Rsa(2048),
            ext: CA_EXT,
            ..Spec::default()
        },
    );
    let client_cn = pki.issue(
        "clientCN",
        Spec {
            subj: "/C=US/ST=My State/L=My City/O=My Org/OU=My Unit/CN=client_cn2/CN=client_cn/kube_uid=client_id",
            key: Key::Rsa(2048),
            issuer: Some(&root),
            ext: "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid",
            ..Spec::default()
        },
    );
    let server = pki.issue(
        "server",
        Spec {
            subj: "/O=My Org/CN=127.0.0.1",
            issuer: Some(&root),
            ext: "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE",
            serial: 7,
            ..Spec::default()
        },
    );
    let self_signed = pki.issue(
        "self1",
        Spec {
            subj: "/C=US/ST=My State/L=My City/O=My Org/O=My Unit/CN=self1",
            ext: "basicConstraints=critical,CA:TRUE\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid",
            serial: 0,
            ..Spec::default()
        },
    );
    let multi_uids = pki.issue(
        "caWithMultiUIDs",
        Spec {
            subj: "/C=US/ST=My State/L=My City/CN=caWithMultiUIDs/kube_uid=client_uid1/kube_uid=client_uid2",
            ext: "subjectKeyIdentifier=hash",
            ..Spec::default()
        },
    );
    let with_groups = pki.issue(
        "caWithGroups",
        Spec {
            subj:
                "/C=US/ST=My State/L=My City/O=My Org/O=My Org 1/O=My Org 2/CN=ROOT CA WITH GROUPS",
            ext: "basicConstraints=critical,CA:TRUE",
            ..Spec::default()
        },
    );
    // cfssl testdata: P-256 root → intermediate (EKU clientAuth) → "My Client".
    let ml_root = pki.ca("Root-CA", Key::P256);
    let ml_inter = pki.issue(
        "Intermediate-CA",
        Spec {
            subj: "/CN=Intermediate-CA",
            issuer: Some(&ml_root),
            ext: "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature,keyEncipherment,keyCertSign,cRLSign\nextendedKeyUsage=clientAuth",
            ..Spec::default()
        },
    );
    let ml_client = pki.leaf("client-valid", "/CN=My Client", &ml_inter);
    // Bad inputs and Go differences.
    let inter_not_ca = pki.issue(
        "inter-not-ca",
        Spec {
            subj: "/CN=not a CA",
            issuer: Some(&ml_root),
            ext: "basicConstraints=critical,CA:FALSE",
            ..Spec::default()
        },
    );
    let under_not_ca = pki.leaf("under-not-ca", "/CN=x", &inter_not_ca);
    let inter_server_eku = pki.issue(
        "inter-server-eku",
        Spec {
            subj: "/CN=server-only intermediate",
            issuer: Some(&ml_root),
            ext: "basicConstraints=critical,CA:TRUE\nextendedKeyUsage=serverAuth",
            ..Spec::default()
        },
    );
    let under_server_eku = pki.leaf("under-server-eku", "/CN=y", &inter_server_eku);
    let any_eku = pki.issue(
        "any-eku",
        Spec {
            subj: "/CN=any-eku",
            issuer: Some(&ml_root),
            ext: "basicConstraints=CA:FALSE\nextendedKeyUsage=anyExtendedKeyUsage",
            ..Spec::default()
        },
    );
    let no_eku = pki.issue(
        "no-eku",
        Spec {
            subj: "/CN=no-eku",
            issuer: Some(&ml_root),
            ext: "basicConstraints=CA:FALSE",
            ..Spec::default()
        },
    );
    let ca_leaf = pki.issue(
        "ca-as-leaf",
        Spec {
            subj: "/CN=ca-as-leaf",
            issuer: Some(&ml_root),
            ext: "basicConstraints=critical,CA:TRUE\nextendedKeyUsage=clientAuth",
            ..Spec::default()
        },
    );
    let v1_leaf = pki.issue(
        "v1-leaf",
        Spec {
            subj: "/CN=v1-leaf",
            issuer: Some(&ml_root),
            ext: "",
            ..Spec::default()
        },
    );
    let rsa1024_root = pki.ca("rsa1024-root", Key::Rsa(1024));
    let rsa1024_leaf = pki.leaf("rsa1024-leaf", "/CN=rsa1024", &rsa1024_root);
    let rsa8200_root = pki.ca("rsa8200-root", Key::Pem(RSA_8200_KEY));
    let rsa8200_leaf = pki.leaf("rsa8200-leaf", "/CN=rsa8200", &rsa8200_root);
    let sha1_leaf = pki.issue(
        "sha1-leaf",
        Spec {
            subj: "/CN=sha1",
            issuer: Some(&root),
            md: "sha1",
            ext: LEAF_EXT,
            ..Spec::default()
        },
    );
    let short_root = pki.issue(
        "short-root",
        Spec {
            subj: "/CN=short-lived root",
            ext: CA_EXT,
            days: 1,
            ..Spec::default()
        },
    );
    let under_short_root = pki.leaf("under-short-root", "/CN=z", &short_root);
    let empty_cn = pki.leaf("empty-cn", "/O=only-org", &root);
    // Roots with an extendedKeyUsage: Go's checkChainForKeyUsage checks the root too.
    let server_root = pki.issue(
        "server-eku-root",
        Spec {
            subj: "/CN=serverAuth-only root",
            ext: "basicConstraints=critical,CA:TRUE\nextendedKeyUsage=serverAuth",
            ..Spec::default()
        },
    );
    let under_server_root = pki.leaf("under-server-root", "/CN=s", &server_root);
    let any_root = pki.issue(
        "any-eku-root",
        Spec {
            subj: "/CN=anyExtendedKeyUsage root",
            ext: "basicConstraints=critical,CA:TRUE\nextendedKeyUsage=anyExtendedKeyUsage",
            ..Spec::default()
        },
    );
    let under_any_root = pki.leaf("under-any-root", "/CN=a", &any_root);
    let client_root = pki.issue(
        "client-eku-root",
        Spec {
            subj: "/CN=clientAuth root",
            ext: "basicConstraints=critical,CA:TRUE\nextendedKeyUsage=clientAuth,serverAuth",
            ..Spec::default()
        },
    );
    let under_client_root = pki.leaf("under-client-root", "/CN=c", &client_root);

    let default = bundle(&[&root]);
    let multilevel = bundle(&[&ml_root]);
    let auth = |b: &CaBundle| {
        X509Authenticator::new(CaBundle::from_der(b.certificates().to_vec()).unwrap())
            .with_histogram(None)
    };
    let t = now();

    type Case<'a> = (&'a str, X509Authenticator, Vec<&'a Issued>, Want);
    let cases: Vec<Case<'_>> = vec![
        (
            "common name and UID (last CN wins)",
            auth(&default),
            vec![&client_cn],
            Want::Exact(ok("client_cn", "client_id", &["My Org"], &client_cn)),
        ),
        (
            "self signed",
            auth(&default),
            vec![&self_signed],
            Want::ErrEnds("failed: x509: certificate signed by unknown authority"),
        ),
        (
            "server cert",
            auth(&default),
            vec![&server],
            Want::ErrEnds("failed: x509: certificate specifies an incompatible key usage"),
        ),
        (
            "root whose extendedKeyUsage is serverAuth only (Go checks the root too)",
            auth(&bundle(&[&server_root])),
            vec![&under_server_root],
            Want::ErrEnds("failed: x509: certificate specifies an incompatible key usage"),
        ),
        (
            "root with anyExtendedKeyUsage",
            auth(&bundle(&[&any_root])),
            vec![&under_any_root],
            Want::Exact(ok("a", "", &[], &under_any_root)),
        ),
        (
            "root with clientAuth among its usages",
            auth(&bundle(&[&client_root])),
            vec![&under_client_root],
            Want::Exact(ok("c", "", &[], &under_client_root)),
        ),
        (
            "server cert allowing non-client cert usages",
            auth(&default).with_key_usage(KeyUsage::ServerAuth),
            vec![&server],
            Want::Exact(ok("127.0.0.1", "", &["My Org"], &server)),
        ),
        (
            "ca with multiple UIDs",
            auth(&bundle(&[&multi_uids])),
            vec![&multi_uids],
            Want::Exact(Err(
                "expected 1 UID, but found multiple: [client_uid1 client_uid2]".into(),
            )),
        ),
        (
            "ca with multiple organizations (leaf in roots, CA-flagged)",
            auth(&bundle(&[&with_groups])),
            vec![&with_groups],
            Want::Exact(ok(
                "ROOT CA WITH GROUPS",
                "",
                &["My Org", "My Org 1", "My Org 2"],
                &with_groups,
            )),
        ),
        (
            "future cert",
            auth(&default).with_clock(clock_at(t - 100 * YEAR)),
            vec![&client_cn],
            Want::ErrContains("x509: certificate has expired or is not yet valid: current time "),
        ),
        (
            "expired cert",
            auth(&default).with_clock(clock_at(t + 100 * YEAR)),
            vec![&client_cn],
            Want::ErrContains("x509: certificate has expired or is not yet valid: current time "),
        ),
        (
            "multi-level, valid",
            auth(&multilevel),
            vec![&ml_client, &ml_inter],
            Want::Exact(ok("My Client", "", &[], &ml_client)),
        ),
        (
            "multi-level, missing intermediate",
            auth(&multilevel),
            vec![&ml_client],
            Want::ErrEnds("failed: x509: certificate signed by unknown authority"),
        ),
        (
            "multi-level, expired",
            auth(&multilevel).with_clock(clock_at(t + 20 * YEAR)),
            vec![&ml_client, &ml_inter],
            Want::ErrContains("is after"),
        ),
        (
            "peer intermediates are never roots",
            auth(&default),
            vec![&ml_client, &ml_inter, &ml_root],
            Want::ErrEnds("failed: x509: certificate signed by unknown authority"),
        ),
        (
            "empty CN is not mine",
            auth(&default),
            vec![&empty_cn],
            Want::Exact(Ok(None)),
        ),
        (
            "intermediate without CA flag (Go's CheckSignatureFrom refuses it as a parent)",
            auth(&multilevel),
            vec![&under_not_ca, &inter_not_ca],
            Want::ErrEnds(
                "failed: x509: certificate signed by unknown authority (possibly because of \"x509: invalid signature: parent certificate cannot sign this kind of certificate\" while trying to verify candidate authority certificate \"not a CA\")",
            ),
        ),
        (
            "intermediate with serverAuth-only EKU (Go nests EKU too)",
            auth(&multilevel),
            vec![&under_server_eku, &inter_server_eku],
            Want::ErrEnds("failed: x509: certificate specifies an incompatible key usage"),
        ),
        (
            "anyExtendedKeyUsage leaf accepted (Go parity)",
            auth(&multilevel),
            vec![&any_eku],
            Want::Exact(ok("any-eku", "", &[], &any_eku)),
        ),
        (
            "leaf without EKU accepted (Go parity)",
            auth(&multilevel),
            vec![&no_eku],
            Want::Exact(ok("no-eku", "", &[], &no_eku)),
        ),
        (
            "expired root refused (Go parity; webpki alone accepts)",
            auth(&bundle(&[&short_root])).with_clock(clock_at(t + 3 * 86_400)),
            vec![&under_short_root],
            Want::ErrContains("is after"),
        ),
        (
            "DIFFERENCE: CA-flagged leaf not in the bundle",
            auth(&multilevel),
            vec![&ca_leaf],
            Want::ErrEnds("cannot be used as a client certificate"),
        ),
        (
            "DIFFERENCE: X.509 v1 leaf",
            auth(&multilevel),
            vec![&v1_leaf],
            Want::ErrEnds(
                "failed: x509: only X.509 v3 client and intermediate certificates are supported",
            ),
        ),
        (
            "DIFFERENCE: RSA-1024 chain",
            auth(&bundle(&[&rsa1024_root])),
            vec![&rsa1024_leaf],
            Want::ErrContains("RSA keys must be 2048 to 8192 bits"),
        ),
        (
            "RSA-8200 issuer (above the 8192-bit cap), real key",
            auth(&bundle(&[&rsa8200_root])),
            vec![&rsa8200_leaf],
            Want::ErrContains("RSA keys must be 2048 to 8192 bits"),
        ),
        (
            "SHA-1 signature",
            auth(&default),
            vec![&sha1_leaf],
            Want::ErrEnds(
                "failed: x509: unsupported signature algorithm (accepted: RSA PKCS#1 v1.5 or \
                 PSS with SHA-256, SHA-384 or SHA-512, ECDSA with SHA-256, SHA-384 or SHA-512, \
                 Ed25519)",
            ),
        ),
    ];
    for (name, auth, chain, want) in cases {
        let got = outcome(&auth, &peer(&chain));
        match want {
            Want::Exact(w) => assert_eq!(got, w, "case {name}"),
            Want::ErrEnds(s) => {
                let e = got.expect_err(name);
                assert!(
                    e.starts_with("verifying certificate SN="),
                    "case {name}: {e}"
                );
                assert!(e.ends_with(s), "case {name}: {e}");
            }
            Want::ErrContains(s) => {
                let e = got.expect_err(name);
                assert!(e.contains(s), "case {name}: {e}");
            }
        }
    }
}

fn openssl_ext(cert: &Issued, ext: &str) -> String {
    let out = std::process::Command::new("openssl")
        .args(["x509", "-noout", "-ext", ext, "-in"])
        .arg(&cert.cert)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .nth(1)
        .unwrap_or("")
        .trim()
        .trim_start_matches("keyid:")
        .to_owned()
}

#[test]
fn certificate_identifier_matches_go() {
    let pki = Pki::new();
    let other = pki.ca("other", Key::P256);
    // The serial of k8s' selfSignedCert.
    let cert = pki.issue(
        "self1",
        Spec {
            subj: "/CN=self1",
            ext: "basicConstraints=critical,CA:TRUE\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid",
            serial: 0,
            ..Spec::default()
        },
    );
    // openssl -set_serial takes decimal; u64 is too small for k8s' value, so re-issue via CLI.
    let big = pki.path("big.pem");
    assert!(
        std::process::Command::new("openssl")
            .args(["x509", "-in"])
            .arg(&cert.cert)
            .args(["-signkey"])
            .arg(&cert.key)
            .args([
                "-set_serial",
                "654708847004117259890317394342561449606220871090",
                "-out"
            ])
            .arg(&big)
            .status()
            .unwrap()
            .success()
    );
    let big_cert = Issued {
        der: kube_authn::x509::parse_pem_bundle(&std::fs::read(&big).unwrap()).unwrap()[0].clone(),
        cert: big,
        ..cert.clone()
    };
    let skid = openssl_ext(&big_cert, "subjectKeyIdentifier");
    let akid = openssl_ext(&big_cert, "authorityKeyIdentifier");
    assert_eq!(skid.len(), 59, "{skid}");
    let auth = X509Authenticator::new(bundle(&[&other])).with_histogram(None);
    let err = auth
        .authenticate_peer(&peer(&[&big_cert]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "verifying certificate SN=654708847004117259890317394342561449606220871090, SKID={skid}, AKID={akid} failed: x509: certificate signed by unknown authority"
        )
    );
    // No key identifiers at all: empty strings, as in Go.
    let bare = pki.issue(
        "bare",
        Spec {
            subj: "/CN=bare",
            ext: "basicConstraints=CA:FALSE",
            serial: 1,
            ..Spec::default()
        },
    );
    let err = auth
        .authenticate_peer(&peer(&[&bare]))
        .unwrap_err()
        .to_string();
    // OpenSSL 3 adds a subject key identifier by default; there is no AKID.
    let skid = openssl_ext(&bare, "subjectKeyIdentifier");
    assert!(
        err.starts_with(&format!(
            "verifying certificate SN=1, SKID={skid}, AKID= failed: "
        )),
        "{err}"
    );
}

fn rcgen_leaf(issuer: &Issued, cn: &str, uid: Option<&str>) -> CertificateDer<'static> {
    use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, Issuer, KeyPair};
    let ca_key = KeyPair::from_pem(&std::fs::read_to_string(&issuer.key).unwrap()).unwrap();
    let issuer = Issuer::from_ca_cert_pem(&issuer.pem(), ca_key).unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    if let Some(uid) = uid {
        params
            .distinguished_name
            .push(DnType::CustomDnType(vec![1, 3, 6, 1, 4, 1, 57683, 2]), uid);
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    params.signed_by(&key, &issuer).unwrap().der().clone()
}

/// A client leaf with the given subject attributes, in order (`None`: no such attribute).
fn rcgen_leaf_subject(
    issuer: &Issued,
    cn: Option<&str>,
    o: Option<rcgen::DnValue>,
    uid: Option<&str>,
) -> CertificateDer<'static> {
    use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, Issuer, KeyPair};
    let ca_key = KeyPair::from_pem(&std::fs::read_to_string(&issuer.key).unwrap()).unwrap();
    let issuer = Issuer::from_ca_cert_pem(&issuer.pem(), ca_key).unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    // rcgen's default subject is CN=rcgen self signed cert.
    params.distinguished_name = rcgen::DistinguishedName::new();
    if let Some(cn) = cn {
        params.distinguished_name.push(DnType::CommonName, cn);
    }
    if let Some(o) = o {
        params.distinguished_name.push(DnType::OrganizationName, o);
    }
    if let Some(uid) = uid {
        params
            .distinguished_name
            .push(DnType::CustomDnType(vec![1, 3, 6, 1, 4, 1, 57683, 2]), uid);
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    params.signed_by(&key, &issuer).unwrap().der().clone()
}

#[test]
fn an_empty_cn_is_not_mine_before_our_own_subject_refusals() {
    // Go's CommonNameUserConversion returns "not mine" for an empty CN before it reads
    // anything else; our own refusals (control characters, the attribute bound, UID rules)
    // apply to a certificate that names a user. What Go's parser refuses stays an error.
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    let auth = X509Authenticator::new(bundle(&[&root])).with_histogram(None);
    let universal = || {
        rcgen::DnValue::UniversalString(rcgen::string::UniversalString::try_from("ops").unwrap())
    };
    let many_orgs: String = (0..300).map(|i| format!("/O=g{i}")).collect();
    let many = pki.leaf("many-orgs-no-cn", &many_orgs, &root);
    type Case = (
        &'static str,
        CertificateDer<'static>,
        Result<Option<&'static str>, &'static str>,
    );
    let cases: Vec<Case> = vec![
        (
            "no CN, O with a TAB",
            rcgen_leaf_subject(&root, None, Some("a\tb".into()), None),
            Ok(None),
        ),
        (
            "empty CN, O with a newline",
            rcgen_leaf_subject(&root, Some(""), Some("a\nb".into()), None),
            Ok(None),
        ),
        (
            "CN, O with a TAB",
            rcgen_leaf_subject(&root, Some("u"), Some("a\tb".into()), None),
            Err("x509: subject attribute contains a control character"),
        ),
        (
            "no CN, empty UID",
            rcgen_leaf_subject(&root, None, None, Some("")),
            Ok(None),
        ),
        ("no CN, 300 organisations", many.der.clone(), Ok(None)),
        (
            "no CN, O that Go's parser refuses (UniversalString)",
            rcgen_leaf_subject(&root, None, Some(universal()), None),
            Err("x509: subject attribute is not a valid string"),
        ),
        (
            "CN, O that Go's parser refuses",
            rcgen_leaf_subject(&root, Some("u"), Some(universal()), None),
            Err("x509: subject attribute is not a valid string"),
        ),
    ];
    for (name, leaf, want) in cases {
        let got = outcome(&auth, &PeerCertificates::injected(vec![leaf]));
        match (got, want) {
            (Ok(None), Ok(None)) => {}
            (Ok(Some(got)), Ok(Some(user))) => assert_eq!(got.name, user, "{name}"),
            (Err(e), Err(text)) => assert!(e.ends_with(text), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

/// A leaf whose extendedKeyUsage extension is an empty SEQUENCE.
fn rcgen_leaf_empty_eku(issuer: &Issued) -> CertificateDer<'static> {
    use rcgen::{CertificateParams, CustomExtension, DnType, Issuer, KeyPair};
    let ca_key = KeyPair::from_pem(&std::fs::read_to_string(&issuer.key).unwrap()).unwrap();
    let issuer = Issuer::from_ca_cert_pem(&issuer.pem(), ca_key).unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "empty-eku");
    params
        .custom_extensions
        .push(CustomExtension::from_oid_content(
            &[2, 5, 29, 37],
            vec![0x30, 0x00],
        ));
    let key = KeyPair::generate().unwrap();
    params.signed_by(&key, &issuer).unwrap().der().clone()
}

#[test]
fn bad_input_has_defined_bounded_outcomes() {
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    let leaf = pki.leaf("leaf", "/CN=ok", &root);
    let auth = X509Authenticator::new(bundle(&[&root])).with_histogram(None);
    let run = |chain: Vec<CertificateDer<'static>>| {
        let start = std::time::Instant::now();
        let r = auth
            .authenticate_peer(&PeerCertificates::injected(chain))
            .map(|o| o.map(|r| r.user.name().to_owned()))
            .map_err(|e| e.to_string());
        assert!(start.elapsed() < Duration::from_secs(1), "not bounded");
        r
    };
    type Case = (
        &'static str,
        Vec<CertificateDer<'static>>,
        Result<Option<&'static str>, &'static str>,
    );
    let cases: Vec<Case> = vec![
        ("empty chain", vec![], Ok(None)),
        (
            "100 certificates",
            vec![leaf.der.clone(); 100],
            Err("x509: client certificate chain of 100 certificates exceeds the limit of 10"),
        ),
        (
            "5 MB certificate",
            vec![CertificateDer::from(vec![0x30u8; 5 << 20])],
            Err("x509: client certificate exceeds the size limit of 65536 bytes"),
        ),
        (
            "garbage DER",
            vec![CertificateDer::from(b"not a certificate".to_vec())],
            Err("x509: malformed certificate"),
        ),
        (
            "CN with a newline",
            vec![rcgen_leaf(&root, "evil\nsystem:admin", None)],
            Err("x509: subject attribute contains a control character"),
        ),
        (
            "CN with NUL",
            vec![rcgen_leaf(&root, "admin\0x", None)],
            Err("x509: subject attribute contains a control character"),
        ),
        (
            "empty UID",
            vec![rcgen_leaf(&root, "u", Some(""))],
            Err("UID cannot be an empty string"),
        ),
        (
            "one UID",
            vec![rcgen_leaf(&root, "u", Some("42"))],
            Ok(Some("u")),
        ),
        // Go reads an empty EKU list as "no EKU" (any usage); RFC 5280 says SIZE (1..MAX),
        // webpki refuses it, and so do we (docs/compatibility.md).
        (
            "empty extendedKeyUsage extension",
            vec![rcgen_leaf_empty_eku(&root)],
            Err("x509: certificate specifies an incompatible key usage"),
        ),
    ];
    for (name, chain, want) in cases {
        let got = run(chain);
        match want {
            Ok(w) => assert_eq!(got, Ok(w.map(str::to_owned)), "case {name}"),
            Err(w) => {
                let e = got.expect_err(name);
                assert!(e.ends_with(w), "case {name}: {e}");
            }
        }
    }
}

#[test]
fn cache_follows_time_and_ca_generation_and_reload_keeps_good_bundle() {
    let pki = Pki::new();
    let ca_a = pki.ca("ca-a", Key::P256);
    let ca_b = pki.ca("ca-b", Key::P256);
    let leaf = pki.leaf("leaf", "/CN=alice/O=dev", &ca_a);
    let ca_file = pki.bundle("client-ca.pem", &[&ca_a]);
    let t = Arc::new(AtomicI64::new(now()));
    let t2 = t.clone();
    static HIST: ExpirationHistogram = ExpirationHistogram::new();
    let auth = X509Authenticator::from_ca_file(&ca_file)
        .unwrap()
        .with_histogram(Some(&HIST))
        .with_clock(Arc::new(move || {
            UNIX_EPOCH + Duration::from_secs(t2.load(Ordering::Relaxed) as u64)
        }));
    let p = peer(&[&leaf]);
    let name = |a: &X509Authenticator| {
        a.authenticate_peer(&p)
            .map(|o| o.map(|r| r.user.name().to_owned()))
            .map_err(|e| e.to_string())
    };
    assert_eq!(name(&auth), Ok(Some("alice".into())));
    assert_eq!(name(&auth), Ok(Some("alice".into())), "cached");
    assert_eq!(HIST.count(), 2, "observed on every request, cached or not");

    // The validity window is crossed: the cached success must not be reused.
    t.fetch_add(11 * YEAR, Ordering::Relaxed);
    assert!(name(&auth).unwrap_err().contains("is after"));
    t.fetch_sub(11 * YEAR, Ordering::Relaxed);
    assert_eq!(name(&auth), Ok(Some("alice".into())));

    // A broken new file keeps the previous bundle (and the cached result stays valid).
    let r = auth.reloader().unwrap();
    for broken in [
        &b""[..],
        b"garbage",
        b"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n",
    ] {
        std::fs::write(&ca_file, broken).unwrap();
        assert!(r.reload_now().is_err());
        assert_eq!(name(&auth), Ok(Some("alice".into())));
    }
    assert_eq!(r.failures(), 3);

    // A new CA replaces the old one: new generation, the cached success is gone.
    std::fs::write(&ca_file, ca_b.pem()).unwrap();
    r.reload_now().unwrap();
    assert!(
        name(&auth)
            .unwrap_err()
            .ends_with("x509: certificate signed by unknown authority")
    );
    let mut text = String::new();
    HIST.encode(&mut text);
    // 8 requests: every one observed, cached or not.
    assert!(
        text.contains("apiserver_client_certificate_expiration_seconds_count 8\n"),
        "{text}"
    );
    // Only the request at +11 years saw an expired (negative) lifetime; a fresh 10-year
    // certificate lands in +Inf.
    for line in [
        "apiserver_client_certificate_expiration_seconds_bucket{le=\"0\"} 1\n",
        "apiserver_client_certificate_expiration_seconds_bucket{le=\"3.1104e+07\"} 1\n",
        "apiserver_client_certificate_expiration_seconds_bucket{le=\"+Inf\"} 8\n",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
}

/// A `--client-ca-file` removed (or replaced by a directory) at runtime: the failed reload is
/// logged with `os.ReadFile`'s text, as kube-apiserver's `DynamicFileCAContent` logs it
/// (`open <path>: no such file or directory`, checked against k8s.io/apiserver v0.37.2), not
/// Rust's `No such file or directory (os error 2)`; the previous bundle keeps authenticating.
#[test]
fn a_ca_file_gone_at_runtime_is_logged_with_kube_apiservers_text() {
    let pki = Pki::new();
    let ca = pki.ca("ca", Key::P256);
    let leaf = pki.leaf("leaf", "/CN=alice", &ca);
    type Change = fn(&std::path::Path);
    let cases: [(&str, Change, &str); 2] = [
        (
            "removed",
            |p| std::fs::remove_file(p).unwrap(),
            "open {}: no such file or directory",
        ),
        (
            "replaced by a directory",
            |p| {
                std::fs::remove_file(p).unwrap();
                std::fs::create_dir(p).unwrap();
            },
            "read {}: is a directory",
        ),
    ];
    for (i, (case, change, want)) in cases.into_iter().enumerate() {
        let ca_file = pki.bundle(&format!("client-ca-{i}.crt"), &[&ca]);
        let auth = X509Authenticator::from_ca_file(&ca_file).unwrap();
        let (logs, _guard) = capture_logs();
        change(&ca_file);
        let err = auth
            .reloader()
            .unwrap()
            .reload_now()
            .unwrap_err()
            .to_string();
        let want = want.replace("{}", &ca_file.display().to_string());
        assert_eq!(err, want, "{case}");
        let text = logs.text();
        assert!(text.contains(&format!("error={want}\n")), "{case}: {text}");
        assert!(!text.contains("os error"), "{case}: {text}");
        let user = auth
            .authenticate_peer(&peer(&[&leaf]))
            .map(|o| o.map(|r| r.user.name().to_owned()))
            .map_err(|e| e.to_string());
        assert_eq!(user, Ok(Some("alice".to_owned())), "{case}");
    }
}

#[test]
fn leaf_signed_by_other_ca_is_an_error_not_anonymous() {
    // With anonymous enabled, an error (not "not mine") is what makes the union answer 401.
    let pki = Pki::new();
    let client_ca = pki.ca("client-ca", Key::P256);
    let front_proxy_ca = pki.ca("front-proxy-ca", Key::P256);
    let proxy_cert = pki.leaf("proxy", "/CN=front-proxy-client", &front_proxy_ca);
    let auth = X509Authenticator::new(bundle(&[&client_ca])).with_histogram(None);
    let chain = kube_authn::chain::ChainBuilder::new()
        .request(auth)
        .anonymous(kube_authn::chain::anonymous::Anonymous::new())
        .build();
    let mut req = http::Request::new(());
    req.extensions_mut().insert(peer(&[&proxy_cert]));
    let (parts, _) = req.into_parts();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = rt.block_on(chain.authenticate_request(&parts, &Default::default()));
    let err = result.expect_err("an error, not anonymous").to_string();
    assert!(
        err.ends_with("x509: certificate signed by unknown authority"),
        "{err}"
    );
}

// ---- real TLS, real clients ----

struct Fixture {
    pki: Pki,
    root: Issued,
    inter: Issued,
    leaf: Issued,
    chained: Issued,
    untrusted: Issued,
}

fn fixture() -> Fixture {
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    let inter = pki.issue(
        "inter",
        Spec {
            subj: "/CN=inter",
            issuer: Some(&root),
            ext: CA_EXT,
            ..Spec::default()
        },
    );
    let leaf = pki.leaf("alice", "/O=system:masters/O=dev/CN=alice", &root);
    let chained = pki.leaf("bob", "/O=ops/CN=bob", &inter);
    let other = pki.ca("other", Key::P256);
    let untrusted = pki.leaf("mallory", "/CN=mallory", &other);
    Fixture {
        pki,
        root,
        inter,
        leaf,
        chained,
        untrusted,
    }
}

fn has_tool(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_and_reqwest_over_real_tls_request_client_cert() {
    assert!(has_tool("curl"), "curl is required (ci/install-x509.sh)");
    let f = fixture();
    let ca_file = f.pki.bundle("client-ca.pem", &[&f.root]);
    let auth = Arc::new(
        X509Authenticator::from_ca_file(&ca_file)
            .unwrap()
            .with_histogram(None),
    );
    let server = TestServer::start(
        &f.pki,
        auth.clone(),
        ClientCertPolicy::Request {
            hints: vec![auth.bundle()],
        },
    )
    .await;

    let target = server.target();
    let leaf = (f.leaf.cert.clone(), f.leaf.key.clone());
    let untrusted = (f.untrusted.cert.clone(), f.untrusted.key.clone());
    let chain_file = f.pki.chain_file("bob-chain.pem", &[&f.chained, &f.inter]);
    let bob_key = f.chained.key.clone();
    // curl blocks: run it off the runtime that drives the server.
    let curl_results = tokio::task::spawn_blocking(move || {
        let s = &target;
        vec![
            (
                "h1 valid cert",
                curl(s, Some((&leaf.0, &leaf.1)), &["--http1.1"]),
            ),
            (
                "h2 valid cert",
                curl(s, Some((&leaf.0, &leaf.1)), &["--http2"]),
            ),
            (
                "chain with intermediate",
                curl(s, Some((&chain_file, &bob_key)), &[]),
            ),
            ("no cert", curl(s, None, &[])),
            (
                "untrusted cert still connects",
                curl(s, Some((&untrusted.0, &untrusted.1)), &[]),
            ),
        ]
    })
    .await
    .unwrap();
    for (name, (status, body)) in &curl_results {
        match *name {
            "h1 valid cert" | "h2 valid cert" => {
                assert_eq!(*status, 200, "{name}: {body}");
                assert_eq!(body["username"], "alice", "{name}");
                assert_eq!(
                    body["groups"],
                    serde_json::json!(["system:masters", "dev"]),
                    "{name}"
                );
                let want_version = if *name == "h2 valid cert" {
                    "HTTP/2.0"
                } else {
                    "HTTP/1.1"
                };
                assert_eq!(body["version"], want_version, "{name}");
                assert_eq!(
                    body["extra"]["authentication.kubernetes.io/credential-id"][0],
                    format!("X509SHA256={}", sha256_hex(&f.leaf.der))
                );
            }
            "chain with intermediate" => {
                assert_eq!(*status, 200, "{name}: {body}");
                assert_eq!(body["username"], "bob");
            }
            "no cert" => {
                assert_eq!(*status, 401, "{name}");
                assert_eq!(body["error"], "no credentials");
            }
            "untrusted cert still connects" => {
                assert_eq!(*status, 401, "{name}");
                let e = body["error"].as_str().unwrap();
                assert!(e.starts_with("verifying certificate SN=2"), "{e}");
                assert!(
                    e.ends_with("failed: x509: certificate signed by unknown authority"),
                    "{e}"
                );
            }
            _ => unreachable!(),
        }
    }

    // reqwest (rustls client) with a client identity, leaf + intermediate.
    let (status, body) = reqwest_get(
        &server,
        Some(identity(&[&f.chained, &f.inter], &f.chained)),
        &[],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["username"], "bob");
    assert_eq!(body["groups"], serde_json::json!(["ops"]));
    let (status, _) = reqwest_get(&server, None, &[]).await;
    assert_eq!(status, 401);

    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stricter_handshake_policies_and_handshake_timeout() {
    let f = fixture();
    let roots = Arc::new(bundle(&[&f.root]));
    let auth: Arc<dyn RequestAuthenticator> =
        Arc::new(X509Authenticator::new(bundle(&[&f.root])).with_histogram(None));

    // Require: no certificate fails the handshake; a trusted one works.
    let server = TestServer::start(
        &f.pki,
        auth.clone(),
        ClientCertPolicy::Require {
            roots: roots.clone(),
        },
    )
    .await;
    let client = |id: Option<Vec<u8>>| {
        let ca =
            reqwest::Certificate::from_pem(&std::fs::read(&server.server_ca).unwrap()).unwrap();
        let mut b = reqwest::Client::builder()
            .use_rustls_tls()
            .add_root_certificate(ca)
            .resolve("localhost", server.addr);
        if let Some(id) = id {
            b = b.identity(reqwest::Identity::from_pem(&id).unwrap());
        }
        b.build().unwrap()
    };
    assert!(
        client(None).get(server.url("/")).send().await.is_err(),
        "Require without a certificate must fail the handshake"
    );
    let resp = client(Some(identity(&[&f.leaf], &f.leaf)))
        .get(server.url("/"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let untrusted = client(Some(identity(&[&f.untrusted], &f.untrusted)))
        .get(server.url("/"))
        .send()
        .await;
    assert!(
        untrusted.is_err(),
        "Require with an untrusted certificate must fail the handshake"
    );
    server.stop().await;

    // VerifyIfGiven: none is fine (401 from the app), untrusted fails the handshake.
    let server = TestServer::start(
        &f.pki,
        auth.clone(),
        ClientCertPolicy::VerifyIfGiven { roots },
    )
    .await;
    let (status, _) = reqwest_get(&server, None, &[]).await;
    assert_eq!(status, 401);
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&server.server_ca).unwrap()).unwrap();
    let c = reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(ca)
        .resolve("localhost", server.addr)
        .identity(reqwest::Identity::from_pem(&identity(&[&f.untrusted], &f.untrusted)).unwrap())
        .build()
        .unwrap();
    assert!(c.get(server.url("/")).send().await.is_err());

    // Handshake timeout: a client that connects and sends nothing is dropped (2 s in tests).
    use tokio::io::AsyncReadExt;
    let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let mut buf = [0u8; 16];
    let start = std::time::Instant::now();
    let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf))
        .await
        .expect("server must close the idle handshake")
        .unwrap_or(0);
    assert_eq!(n, 0);
    assert!(
        start.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axum_router_served_by_the_accept_loop_sees_peer_certificates() {
    use axum::extract::Extension;
    use axum::routing::get;
    use kube_authn::tls::pki_types::pem::PemObject;

    let f = fixture();
    let auth = Arc::new(X509Authenticator::new(bundle(&[&f.root])).with_histogram(None));
    let app = axum::Router::new().route(
        "/whoami",
        get(move |Extension(peer): Extension<PeerCertificates>| {
            let auth = auth.clone();
            async move {
                match auth.authenticate_peer(&peer) {
                    Ok(Some(r)) => r.user.name().to_owned(),
                    Ok(None) => "anonymous".to_owned(),
                    Err(e) => e.to_string(),
                }
            }
        }),
    );
    let server_ca = f.pki.ca("axum-server-ca", Key::P256);
    let serving = f.pki.issue(
        "axum-serving",
        Spec {
            subj: "/CN=localhost",
            issuer: Some(&server_ca),
            ext: "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost",
            ..Spec::default()
        },
    );
    let key = kube_authn::tls::pki_types::PrivateKeyDer::from_pem_file(&serving.key).unwrap();
    let config = kube_authn::tls::server_config(
        vec![serving.der.clone()],
        key,
        &ClientCertPolicy::Request { hints: vec![] },
    )
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(kube_authn::tls::serve(
        listener,
        Arc::new(config),
        app,
        async {
            let _ = rx.await;
        },
    ));
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(reqwest::Certificate::from_pem(server_ca.pem().as_bytes()).unwrap())
        .resolve("localhost", addr)
        .identity(reqwest::Identity::from_pem(&identity(&[&f.leaf], &f.leaf)).unwrap())
        .build()
        .unwrap();
    let body = client
        .get(format!("https://localhost:{}/whoami", addr.port()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, "alice");
    tx.send(()).unwrap();
    task.await.unwrap().unwrap();
}

/// A client certificate resolver that always presents one chain and key.
#[derive(Debug)]
struct FixedClientCert(Arc<kube_authn::tls::rustls::sign::CertifiedKey>);

impl kube_authn::tls::rustls::client::ResolvesClientCert for FixedClientCert {
    fn resolve(
        &self,
        _: &[&[u8]],
        _: &[kube_authn::tls::rustls::SignatureScheme],
    ) -> Option<Arc<kube_authn::tls::rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }
    fn has_certs(&self) -> bool {
        true
    }
}

/// `GET /` over TLS (rustls client, aws-lc-rs) to `server`, presenting `chain` with the key in
/// `key_file`: the raw HTTP/1.1 response, or the handshake's or the connection's error. An empty
/// response means the server closed the connection without answering (a refused certificate
/// under TLS 1.3 shows up here, when the client reads).
async fn tls_get(
    server: &TestServer,
    chain: Vec<CertificateDer<'static>>,
    key_file: &std::path::Path,
) -> Result<String, String> {
    use kube_authn::tls::pki_types::pem::PemObject;
    use kube_authn::tls::pki_types::{PrivateKeyDer, ServerName};
    use kube_authn::tls::rustls;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&server.server_ca).unwrap())
        .unwrap();
    let key = provider
        .key_provider
        .load_private_key(PrivateKeyDer::from_pem_file(key_file).unwrap())
        .unwrap();
    let ck = Arc::new(rustls::sign::CertifiedKey::new(chain, key));
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_client_cert_resolver(Arc::new(FixedClientCert(ck)));
    let connector = kube_authn::tls::tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let mut tls = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .map_err(|e| e.to_string())?;
    tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    tls.read_to_end(&mut out).await.map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A client certificate presented with a private key that does not match it: the handshake's
/// CertificateVerify must fail even under the "request, don't verify" policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_policy_still_checks_proof_of_possession() {
    let f = fixture();
    let auth: Arc<dyn RequestAuthenticator> =
        Arc::new(X509Authenticator::new(bundle(&[&f.root])).with_histogram(None));
    let server = TestServer::start(&f.pki, auth, ClientCertPolicy::Request { hints: vec![] }).await;
    let get = |key_file: std::path::PathBuf| {
        let server = &server;
        let leaf = f.leaf.der.clone();
        async move { tls_get(server, vec![leaf], &key_file).await }
    };
    let good = get(f.leaf.key.clone()).await.unwrap();
    assert!(good.starts_with("HTTP/1.1 200"), "{good}");
    assert!(good.contains("\"username\":\"alice\""), "{good}");
    // Alice's certificate, Mallory's key: refused in the handshake, no HTTP response.
    let bad = get(f.untrusted.key.clone()).await;
    assert!(
        bad.as_ref().map_or(true, |body| body.is_empty()),
        "a certificate without its key must not reach the application: {bad:?}"
    );
    server.stop().await;
}

#[test]
fn a_clone_with_another_key_usage_or_clock_does_not_reuse_the_cached_result() {
    // The per-connection cache is keyed by the authenticator: a clone configured otherwise
    // (key usage, clock) is another authenticator and must verify for itself.
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    let server = pki.issue(
        "server-only",
        Spec {
            subj: "/O=My Org/CN=127.0.0.1",
            issuer: Some(&root),
            ext: "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE",
            serial: 9,
            ..Spec::default()
        },
    );
    let client = X509Authenticator::new(bundle(&[&root])).with_histogram(None);
    let for_servers = client.clone().with_key_usage(KeyUsage::ServerAuth);
    let p = peer(&[&server]);
    assert!(matches!(outcome(&for_servers, &p), Ok(Some(_))));
    assert!(
        outcome(&client, &p)
            .unwrap_err()
            .ends_with("x509: certificate specifies an incompatible key usage"),
        "a clientAuth authenticator accepted a serverAuth-only certificate from the cache"
    );

    // The same for the clock. A cached outcome is kept for a window (a success until the
    // chain's first notAfter, a failure for the rest of its second), so a clone whose clock
    // is outside that window would verify again whatever the cache key. The clone's clock is
    // therefore inside it: the first authenticator refuses the leaf half a second after its
    // notAfter (Go: expired), which is cached for that second; the clone's clock reads
    // exactly notAfter, in the same second, where the leaf is still valid.
    let leaf = pki.leaf("alice", "/CN=alice", &root);
    let p = peer(&[&leaf]);
    // The chain's first notAfter (the root was made first, possibly a second earlier).
    let na = not_after(&leaf).min(not_after(&root));
    let expired = X509Authenticator::new(bundle(&[&root]))
        .with_histogram(None)
        .with_clock(clock_at_nanos(na, 500_000_000));
    let valid = expired.clone().with_clock(clock_at_nanos(na, 0));
    assert!(outcome(&expired, &p).unwrap_err().contains("is after"));
    assert!(
        matches!(outcome(&valid, &p), Ok(Some(_))),
        "the clone at notAfter reused the failure cached at notAfter + 0.5 s"
    );
    // Control: the failure is cached for that second, so an authenticator that kept the
    // first one's cache identity would have been served it.
    let shared = Arc::new(AtomicI64::new(500_000_000));
    let shared2 = shared.clone();
    let moving = X509Authenticator::new(bundle(&[&root]))
        .with_histogram(None)
        .with_clock(Arc::new(move || {
            UNIX_EPOCH
                + Duration::from_secs(na as u64)
                + Duration::from_nanos(shared2.load(Ordering::Relaxed) as u64)
        }));
    assert!(outcome(&moving, &p).unwrap_err().contains("is after"));
    shared.store(0, Ordering::Relaxed);
    assert!(outcome(&moving, &p).unwrap_err().contains("is after"));
    assert!(matches!(outcome(&moving, &peer(&[&leaf])), Ok(Some(_))));
}

/// A clock at Unix second `secs` (after the epoch) plus `nanos`.
fn clock_at_nanos(secs: i64, nanos: u32) -> kube_authn::x509::Clock {
    let t = UNIX_EPOCH + Duration::from_secs(secs as u64) + Duration::from_nanos(nanos.into());
    Arc::new(move || t)
}

/// A certificate's notAfter, Unix seconds.
fn not_after(cert: &Issued) -> i64 {
    x509_parser::parse_x509_certificate(&cert.der)
        .unwrap()
        .1
        .validity()
        .not_after
        .timestamp()
}

/// Go's `crypto/x509` compares the current time with a certificate's dates to the
/// nanosecond (`now.After(NotAfter)`): a leaf, an intermediate or a root is expired any
/// fraction of a second past its notAfter, and the per-connection cache does not keep a
/// success past it either. notBefore is whole seconds too: valid from its first instant.
#[test]
fn certificates_expire_a_nanosecond_after_not_after() {
    let pki = Pki::new();
    // Outlives the leaves it signs (a day longer than their ten years).
    let root = pki.issue(
        "root",
        Spec {
            subj: "/CN=root",
            ext: CA_EXT,
            days: 3651,
            ..Spec::default()
        },
    );
    let leaf = pki.leaf("alice", "/CN=alice", &root);
    // An intermediate and a root that expire long before the leaves under them.
    let short_inter = pki.issue(
        "short-inter",
        Spec {
            subj: "/CN=short-lived intermediate",
            issuer: Some(&root),
            ext: CA_EXT,
            days: 1,
            serial: 3,
            ..Spec::default()
        },
    );
    let under_inter = pki.leaf("bob", "/CN=bob", &short_inter);
    let short_root = pki.issue(
        "short-root",
        Spec {
            subj: "/CN=short-lived root",
            ext: CA_EXT,
            days: 1,
            serial: 4,
            ..Spec::default()
        },
    );
    let under_short_root = pki.leaf("carol", "/CN=carol", &short_root);
    let nb = x509_parser::parse_x509_certificate(&leaf.der)
        .unwrap()
        .1
        .validity()
        .not_before
        .timestamp();
    type Case<'a> = (
        &'a str,
        &'a Issued,
        Vec<&'a Issued>,
        i64,
        u32,
        Option<&'a str>,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "leaf at its notAfter",
            &root,
            vec![&leaf],
            not_after(&leaf),
            0,
            Some("alice"),
        ),
        (
            "leaf a nanosecond past notAfter",
            &root,
            vec![&leaf],
            not_after(&leaf),
            1,
            None,
        ),
        (
            "leaf half a second past notAfter",
            &root,
            vec![&leaf],
            not_after(&leaf),
            500_000_000,
            None,
        ),
        (
            "leaf at the last instant of its notAfter second",
            &root,
            vec![&leaf],
            not_after(&leaf),
            999_999_999,
            None,
        ),
        (
            "leaf a second past notAfter",
            &root,
            vec![&leaf],
            not_after(&leaf) + 1,
            0,
            None,
        ),
        (
            "leaf at its notBefore",
            &root,
            vec![&leaf],
            nb,
            0,
            Some("alice"),
        ),
        (
            "leaf the last instant before notBefore",
            &root,
            vec![&leaf],
            nb - 1,
            999_999_999,
            None,
        ),
        (
            "intermediate at its notAfter",
            &root,
            vec![&under_inter, &short_inter],
            not_after(&short_inter),
            0,
            Some("bob"),
        ),
        (
            "intermediate half a second past notAfter",
            &root,
            vec![&under_inter, &short_inter],
            not_after(&short_inter),
            500_000_000,
            None,
        ),
        (
            "root at its notAfter",
            &short_root,
            vec![&under_short_root],
            not_after(&short_root),
            0,
            Some("carol"),
        ),
        (
            "root half a second past notAfter",
            &short_root,
            vec![&under_short_root],
            not_after(&short_root),
            500_000_000,
            None,
        ),
    ];
    for (name, ca, chain, secs, nanos, want) in cases {
        let auth = X509Authenticator::new(bundle(&[ca]))
            .with_histogram(None)
            .with_clock(clock_at_nanos(secs, nanos));
        match (outcome(&auth, &peer(&chain)), want) {
            (Ok(Some(got)), Some(user)) => assert_eq!(got.name, user, "{name}"),
            (Err(e), None) => assert!(
                e.contains(
                    "failed: x509: certificate has expired or is not yet valid: current time "
                ),
                "{name}: {e}"
            ),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    // The per-connection cache: a success verified at notAfter is not served half a second
    // later, for the leaf's notAfter or an intermediate's.
    for (name, chain, na) in [
        ("leaf", vec![&leaf], not_after(&leaf)),
        (
            "intermediate",
            vec![&under_inter, &short_inter],
            not_after(&short_inter),
        ),
    ] {
        let nanos = Arc::new(AtomicI64::new(0));
        let nanos2 = nanos.clone();
        let auth = X509Authenticator::new(bundle(&[&root]))
            .with_histogram(None)
            .with_clock(Arc::new(move || {
                UNIX_EPOCH
                    + Duration::from_secs(na as u64)
                    + Duration::from_nanos(nanos2.load(Ordering::Relaxed) as u64)
            }));
        let p = peer(&chain);
        assert!(
            matches!(outcome(&auth, &p), Ok(Some(_))),
            "{name}: at notAfter"
        );
        nanos.store(500_000_000, Ordering::Relaxed);
        let e = outcome(&auth, &p).unwrap_err();
        assert!(e.contains("is after"), "{name}: cached past notAfter: {e}");
    }
}

/// Go's `buildChains` calls `CheckSignatureFrom(parent)` for every candidate issuer, root or
/// intermediate: a v3 parent without basicConstraints, a parent with cA=FALSE, or one whose
/// keyUsage lacks keyCertSign cannot sign, and the chain fails with Go's unknown-authority
/// error naming that candidate. webpki alone ignores keyUsage and a trust anchor's
/// basicConstraints. A leaf that is itself in the bundle is still a chain of one (Go takes it
/// without any issuer check). Every expectation was checked against k8s.io/apiserver v0.37.2's
/// x509 authenticator on certificates made the same way.
#[test]
fn issuers_go_refuses_sign_no_chains() {
    let pki = Pki::new();
    let leaf_ext = "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth";
    let self_signed = |name: &str, subj: &str, ext: &str, serial: u64| {
        pki.issue(
            name,
            Spec {
                subj,
                ext,
                serial,
                ..Spec::default()
            },
        )
    };
    let issued = |name: &str, subj: &str, issuer: &Issued, ext: &str, serial: u64| {
        pki.issue(
            name,
            Spec {
                subj,
                issuer: Some(issuer),
                ext,
                serial,
                ..Spec::default()
            },
        )
    };
    let root = pki.ca("root", Key::P256);
    // A client certificate pinned in the CA bundle (a common way to trust one client).
    let pinned = self_signed(
        "pinned",
        "/CN=pinned-client/O=dev",
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth",
        10,
    );
    let under_pinned = pki.leaf("under-pinned", "/CN=mallory/O=system:masters", &pinned);
    let noks = self_signed(
        "noks",
        "/CN=noks-root",
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature",
        11,
    );
    let under_noks = pki.leaf("under-noks", "/CN=carol", &noks);
    let nobc = self_signed(
        "nobc",
        "/CN=nobc-root",
        "keyUsage=critical,keyCertSign\nsubjectKeyIdentifier=hash",
        12,
    );
    let under_nobc = pki.leaf("under-nobc", "/CN=dave", &nobc);
    let org_only = self_signed(
        "org-only",
        "/O=org-only-root/O=second",
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature",
        13,
    );
    let under_org_only = pki.leaf("under-org-only", "/CN=olga", &org_only);
    let v1_root = self_signed("v1-root", "/CN=v1-root", "", 14);
    let under_v1 = issued("under-v1", "/CN=vera", &v1_root, leaf_ext, 15);
    let no_ku_root = self_signed(
        "no-ku-root",
        "/CN=no-ku-root",
        "basicConstraints=critical,CA:TRUE",
        16,
    );
    let under_no_ku = pki.leaf("under-no-ku", "/CN=nina", &no_ku_root);
    let signature_only = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature";
    let inter_noks = issued("inter-noks", "/CN=inter-noks", &root, signature_only, 17);
    let under_inter_noks = pki.leaf("under-inter-noks", "/CN=erin", &inter_noks);
    let inter_good = issued("inter-good", "/CN=inter-good", &root, CA_EXT, 18);
    let inter_noks2 = issued(
        "inter-noks-2",
        "/CN=inter-noks-2",
        &inter_good,
        signature_only,
        19,
    );
    let under_inter_noks2 = pki.leaf("under-inter-noks-2", "/CN=fred", &inter_noks2);
    let inter_under_noks = issued(
        "inter-under-noks",
        "/CN=inter-under-noks",
        &noks,
        CA_EXT,
        20,
    );
    let under_inter_under_noks = pki.leaf("under-inter-under-noks", "/CN=gina", &inter_under_noks);
    let inter_nobc = issued(
        "inter-nobc",
        "/CN=inter-nobc",
        &root,
        "subjectKeyIdentifier=hash",
        21,
    );
    let under_inter_nobc = pki.leaf("under-inter-nobc", "/CN=ivan", &inter_nobc);
    // The same name and key as `noks`, with keyCertSign: Go finds the chain through it.
    let noks_twin = pki.issue(
        "noks-twin",
        Spec {
            subj: "/CN=noks-root",
            key: Key::Pem(Box::leak(
                std::fs::read_to_string(&noks.key).unwrap().into_boxed_str(),
            )),
            ext: CA_EXT,
            serial: 22,
            ..Spec::default()
        },
    );
    let auth = |roots: &[&Issued]| X509Authenticator::new(bundle(roots)).with_histogram(None);
    let refused = |name: &str| {
        format!(
            "failed: x509: certificate signed by unknown authority (possibly because of \"x509: invalid signature: parent certificate cannot sign this kind of certificate\" while trying to verify candidate authority certificate \"{name}\")"
        )
    };
    type Case<'a> = (
        &'a str,
        Vec<&'a Issued>,
        Vec<&'a Issued>,
        Result<&'a str, String>,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "a pinned client certificate (cA=FALSE) signs nothing",
            vec![&pinned],
            vec![&under_pinned],
            Err(refused("pinned-client")),
        ),
        (
            "the pinned client certificate itself: a chain of one",
            vec![&pinned],
            vec![&pinned],
            Ok("pinned-client"),
        ),
        (
            "root whose keyUsage lacks keyCertSign",
            vec![&noks],
            vec![&under_noks],
            Err(refused("noks-root")),
        ),
        (
            "that root itself, pinned",
            vec![&noks],
            vec![&noks],
            Ok("noks-root"),
        ),
        (
            "v3 root without basicConstraints",
            vec![&nobc],
            vec![&under_nobc],
            Err(refused("nobc-root")),
        ),
        (
            "that root itself, pinned",
            vec![&nobc],
            vec![&nobc],
            Ok("nobc-root"),
        ),
        (
            "a root without a CN is named by its first O",
            vec![&org_only],
            vec![&under_org_only],
            Err(refused("org-only-root")),
        ),
        (
            "X.509 v1 root (no basicConstraints to check, as in Go)",
            vec![&v1_root],
            vec![&under_v1],
            Ok("vera"),
        ),
        (
            "CA root without keyUsage",
            vec![&no_ku_root],
            vec![&under_no_ku],
            Ok("nina"),
        ),
        (
            "intermediate whose keyUsage lacks keyCertSign",
            vec![&root],
            vec![&under_inter_noks, &inter_noks],
            Err(refused("inter-noks")),
        ),
        (
            "second intermediate whose keyUsage lacks keyCertSign",
            vec![&root],
            vec![&under_inter_noks2, &inter_noks2, &inter_good],
            Err(refused("inter-noks-2")),
        ),
        (
            "good intermediate under a root whose keyUsage lacks keyCertSign",
            vec![&noks],
            vec![&under_inter_under_noks, &inter_under_noks],
            Err(refused("noks-root")),
        ),
        (
            "v3 intermediate without basicConstraints",
            vec![&root],
            vec![&under_inter_nobc, &inter_nobc],
            Err(refused("inter-nobc")),
        ),
        (
            "a refused root beside one that may sign, same name and key",
            vec![&noks, &noks_twin],
            vec![&under_noks],
            Ok("carol"),
        ),
        (
            "the same, the refused root last",
            vec![&noks_twin, &noks],
            vec![&under_noks],
            Ok("carol"),
        ),
    ];
    for (name, roots, chain, want) in cases {
        match (outcome(&auth(&roots), &peer(&chain)), want) {
            (Ok(Some(got)), Ok(user)) => assert_eq!(got.name, user, "{name}"),
            (Err(e), Err(text)) => {
                assert!(e.starts_with("verifying certificate SN="), "{name}: {e}");
                assert!(e.ends_with(&text), "{name}: {e}");
            }
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

/// Go's `isValid` refuses a root with a critical extension its parser does not handle
/// (`x509: unhandled critical extension`); webpki does not look at a trust anchor's
/// extensions. Go loads such a bundle, so it loads here too and the chains through the root
/// fail. Critical extensions Go handles (certificatePolicies) and unknown non-critical ones
/// do not matter.
#[test]
fn a_root_with_an_unknown_critical_extension_signs_no_chains() {
    let pki = Pki::new();
    let root = |name: &str, extra: &str, serial: u64| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                ext: &format!("{CA_EXT}\n{extra}"),
                serial,
                ..Spec::default()
            },
        )
    };
    let unknown = root("root-unknown", "1.2.3.4=critical,ASN1:UTF8String:x", 1);
    let policy = root("root-policy", "certificatePolicies=critical,1.2.3.5", 2);
    let noncritical = root("root-noncritical", "1.2.3.4=ASN1:UTF8String:x", 3);
    let under =
        |issuer: &Issued, cn: &str| pki.leaf(&format!("under-{cn}"), &format!("/CN={cn}"), issuer);
    let (alice, paula, ulla) = (
        under(&unknown, "alice"),
        under(&policy, "paula"),
        under(&noncritical, "ulla"),
    );
    type Case<'a> = (&'a str, &'a Issued, &'a Issued, Result<&'a str, &'a str>);
    let cases: Vec<Case<'_>> = vec![
        (
            "unknown critical extension",
            &unknown,
            &alice,
            Err("failed: x509: unhandled critical extension"),
        ),
        (
            "that root itself, pinned (Go checks the leaf first)",
            &unknown,
            &unknown,
            Err("failed: x509: unhandled critical extension"),
        ),
        (
            "critical certificatePolicies (Go handles it)",
            &policy,
            &paula,
            Ok("paula"),
        ),
        (
            "unknown non-critical extension",
            &noncritical,
            &ulla,
            Ok("ulla"),
        ),
    ];
    for (name, ca, leaf, want) in cases {
        let auth = X509Authenticator::new(bundle(&[ca])).with_histogram(None);
        match (outcome(&auth, &peer(&[leaf])), want) {
            (Ok(Some(got)), Ok(user)) => assert_eq!(got.name, user, "{name}"),
            (Err(e), Err(text)) => {
                assert!(e.starts_with("verifying certificate SN="), "{name}: {e}");
                assert!(e.ends_with(text), "{name}: {e}");
            }
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn a_pinned_leaf_with_an_unknown_critical_extension_is_refused() {
    // Go's Verify checks the leaf itself (isValid: unhandled critical extensions) before it
    // takes a leaf that is in the roots as a chain of one.
    let pki = Pki::new();
    let pinned = pki.issue(
        "pinned",
        Spec {
            subj: "/CN=pinned",
            ext: "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n1.2.3.4=critical,ASN1:UTF8String:x",
            serial: 11,
            ..Spec::default()
        },
    );
    let plain = pki.issue(
        "pinned-plain",
        Spec {
            subj: "/CN=pinned-plain",
            ext: "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth",
            serial: 12,
            ..Spec::default()
        },
    );
    let auth = X509Authenticator::new(bundle(&[&pinned, &plain])).with_histogram(None);
    type Case<'a> = (&'a str, &'a Issued, Result<&'a str, &'a str>);
    let cases: [Case<'_>; 2] = [
        ("pinned, no critical extension", &plain, Ok("pinned-plain")),
        (
            "pinned, unknown critical extension",
            &pinned,
            Err("x509: unhandled critical extension"),
        ),
    ];
    for (name, cert, want) in cases {
        match (outcome(&auth, &peer(&[cert])), want) {
            (Ok(Some(got)), Ok(user)) => assert_eq!(got.name, user, "{name}"),
            (Err(e), Err(text)) => assert!(e.ends_with(text), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn subjects_with_more_than_256_attributes_are_refused() {
    // A deliberate bound (Go's pkix.Name takes any number): 256 attributes are read, 257 are
    // an error, not a partial identity.
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    let auth = X509Authenticator::new(bundle(&[&root])).with_histogram(None);
    for (orgs, want) in [
        (255usize, Ok(255usize)),
        (
            256,
            Err("x509: certificate subject has too many attributes"),
        ),
    ] {
        let subj: String = std::iter::once("/CN=many".to_owned())
            .chain((0..orgs).map(|i| format!("/O=g{i}")))
            .collect();
        let leaf = pki.leaf(&format!("many-{orgs}"), &subj, &root);
        match (outcome(&auth, &peer(&[&leaf])), want) {
            (Ok(Some(got)), Ok(groups)) => {
                assert_eq!(
                    (got.name.as_str(), got.groups.len()),
                    ("many", groups),
                    "{orgs}"
                )
            }
            (Err(e), Err(text)) => assert!(e.ends_with(text), "{orgs}: {e}"),
            (got, want) => panic!("{orgs} organisations: got {got:?}, want {want:?}"),
        }
    }
}

/// Go's `crypto/x509` parses every name of every certificate a client presents: T61String
/// is Latin-1, a BMPString's trailing `00 00` is dropped and its noncharacters refused, and
/// any attribute that is not a string Go decodes (even one nobody reads, even in an
/// intermediate the path does not need) makes the certificate unparseable, so Go fails the
/// handshake. Both the library path (`authenticate_peer`) and a real TLS handshake through
/// kube-authn's accept loop (`ClientCertPolicy::Request`, as kube-apiserver) are checked.
/// Expected users and refusals were confirmed against Go 1.26's `x509.ParseCertificate`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presented_names_are_parsed_as_go_parses_them() {
    let f = fixture();
    let pki = &f.pki;
    // Placeholders: openssl writes these subject values as UTF8String (tag 0x0c).
    let t61_utf8 = pki.leaf("t61-utf8", "/CN=adXY", &f.root);
    let t61_latin1 = pki.leaf("t61-latin1", "/CN=cafX", &f.root);
    let bmp_term = pki.leaf("bmp-term", "/CN=PPPPPP", &f.root);
    let bmp_nonchar = pki.leaf("bmp-nonchar", "/CN=PPPP", &f.root);
    let ou_printable = pki.leaf("ou-printable", "/CN=carol/OU=QQQ", &f.root);
    let ou_integer = pki.leaf("ou-integer", "/CN=carol/OU=ZZZ", &f.root);
    let uid_integer = pki.leaf("uid-integer", "/CN=carol/kube_uid=ZZZ", &f.root);
    let garbage: CertificateDer<'static> = CertificateDer::from(b"\x30\x03\x02\x01\x05".to_vec());
    let bad_inter = resigned(&f.inter, &f.root, &[(b"\x0c\x05inter", b"\x13\x05in@er")]);
    let cases: Vec<ChainCase> = vec![
        (
            "T61String holding UTF-8 bytes is read as Latin-1",
            vec![resigned(
                &t61_utf8,
                &f.root,
                &[(b"\x0c\x04adXY", b"\x14\x04ad\xc3\xa9")],
            )],
            t61_utf8.key.clone(),
            Ok("adÃ©"),
        ),
        (
            "T61String Latin-1 byte",
            vec![resigned(
                &t61_latin1,
                &f.root,
                &[(b"\x0c\x04cafX", b"\x14\x04caf\xe9")],
            )],
            t61_latin1.key.clone(),
            Ok("café"),
        ),
        (
            "BMPString terminator dropped",
            vec![resigned(
                &bmp_term,
                &f.root,
                &[(b"\x0c\x06PPPPPP", b"\x1e\x06\x00a\x00l\x00\x00")],
            )],
            bmp_term.key.clone(),
            Ok("al"),
        ),
        (
            "BMPString noncharacter",
            vec![resigned(
                &bmp_nonchar,
                &f.root,
                &[(b"\x0c\x04PPPP", b"\x1e\x04\x00a\xff\xfe")],
            )],
            bmp_nonchar.key.clone(),
            Err("x509: subject attribute is not a valid string"),
        ),
        (
            "an unread attribute (OU) that is not a valid PrintableString",
            vec![resigned(
                &ou_printable,
                &f.root,
                &[(b"\x0c\x03QQQ", b"\x13\x03a@b")],
            )],
            ou_printable.key.clone(),
            Err("x509: subject attribute is not a valid string"),
        ),
        (
            "an unread attribute (OU) that is an INTEGER",
            vec![resigned(
                &ou_integer,
                &f.root,
                &[(b"\x0c\x03ZZZ", b"\x02\x03\x01\x02\x03")],
            )],
            ou_integer.key.clone(),
            Err("x509: subject attribute is not a valid string"),
        ),
        (
            // kube-apiserver's `unable to parse UID into a string` is never reached: Go's
            // parser refuses the certificate first.
            "a UID attribute that is an INTEGER",
            vec![resigned(
                &uid_integer,
                &f.root,
                &[(b"\x0c\x03ZZZ", b"\x02\x03\x01\x02\x03")],
            )],
            uid_integer.key.clone(),
            Err("x509: subject attribute is not a valid string"),
        ),
        (
            "the leaf's issuer name has a string Go refuses",
            vec![resigned(
                &f.leaf,
                &f.root,
                &[(b"\x0c\x04root", b"\x13\x04r@ot")],
            )],
            f.leaf.key.clone(),
            Err(
                "x509: certificate issuer or intermediate name has an attribute that is not a valid string",
            ),
        ),
        (
            "an unneeded intermediate that does not parse",
            vec![f.leaf.der.clone(), garbage],
            f.leaf.key.clone(),
            Err("x509: malformed intermediate certificate"),
        ),
        (
            "an unneeded intermediate whose name Go refuses",
            vec![f.leaf.der.clone(), bad_inter],
            f.leaf.key.clone(),
            Err(
                "x509: certificate issuer or intermediate name has an attribute that is not a valid string",
            ),
        ),
        (
            "control: alice",
            vec![f.leaf.der.clone()],
            f.leaf.key.clone(),
            Ok("alice"),
        ),
    ];

    // The library path: chains handed to the authenticator.
    let auth = X509Authenticator::new(bundle(&[&f.root])).with_histogram(None);
    for (name, chain, _, want) in &cases {
        let got = auth
            .authenticate_peer(&PeerCertificates::injected(chain.clone()))
            .map(|o| o.map(|r| r.user.name().to_owned()))
            .map_err(|e| e.to_string());
        match (got, want) {
            (Ok(Some(user)), Ok(w)) => assert_eq!(user, *w, "case {name}"),
            (Err(e), Err(w)) => assert!(e.ends_with(w), "case {name}: {e}"),
            (got, want) => panic!("case {name}: got {got:?}, want {want:?}"),
        }
    }

    // A real handshake: what Go cannot parse never reaches the application.
    assert_handshake_outcomes(pki, &f.root, &cases).await;
}

/// A chain to present, the key file of its leaf, and the user it authenticates as or the
/// error it gets.
type ChainCase = (
    &'static str,
    Vec<CertificateDer<'static>>,
    std::path::PathBuf,
    Result<&'static str, &'static str>,
);

/// Serves an x509 authenticator trusting `root` over kube-authn's TLS stack
/// (`ClientCertPolicy::Request`, as kube-apiserver) and presents each case's chain: a good
/// one is served as its user; any refused one fails the handshake, as Go's TLS server fails it
/// on a certificate it cannot parse.
async fn assert_handshake_outcomes(pki: &Pki, root: &Issued, cases: &[ChainCase]) {
    let shared: Arc<dyn RequestAuthenticator> =
        Arc::new(X509Authenticator::new(bundle(&[root])).with_histogram(None));
    let server = TestServer::start(pki, shared, ClientCertPolicy::Request { hints: vec![] }).await;
    for (name, chain, key_file, want) in cases {
        let response = tls_get(&server, chain.clone(), key_file).await;
        match want {
            Ok(user) => {
                let body = response.unwrap_or_else(|e| panic!("case {name}: {e}"));
                assert!(body.starts_with("HTTP/1.1 200"), "case {name}: {body}");
                let expected = format!("\"username\":{}", serde_json::to_string(user).unwrap());
                assert!(body.contains(&expected), "case {name}: {body}");
            }
            // TLS 1.3: the client learns of the refusal when it reads; no HTTP response.
            Err(_) => assert!(
                response.as_ref().map_or(true, |b| b.is_empty()),
                "case {name}: a certificate Go cannot parse must fail the handshake: {response:?}"
            ),
        }
    }
    server.stop().await;
}

/// A certificate Go's `x509.ParseCertificate` refuses — here a negative serial number or a
/// duplicate extension, in the leaf or in the (needed) intermediate — is refused on every path:
/// a chain handed to the library directly (`authenticate_peer`, the front proxy's path) is
/// refused with Go's parse error wrapped (`x509: malformed certificate: …`, `x509: malformed
/// intermediate certificate: …`), and over kube-authn's own TLS stack the handshake fails, as
/// Go's TLS server fails it (`tls: failed to parse client certificate: …`). The good chains
/// are served. Go's texts from Go 1.26's `x509.ParseCertificate` on these very certificates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_go_cannot_parse_are_refused_directly_and_in_the_handshake() {
    let f = fixture();
    // Version `a0 03 02 01 02`, then the serial: 2 for a leaf, 1 for a CA.
    let negative_leaf = resigned(
        &f.leaf,
        &f.root,
        &[(
            b"\xa0\x03\x02\x01\x02\x02\x01\x02",
            b"\xa0\x03\x02\x01\x02\x02\x01\xfe",
        )],
    );
    // authorityKeyIdentifier's OID made subjectKeyIdentifier's: two 2.5.29.14 extensions.
    let duplicate_leaf = resigned(
        &f.leaf,
        &f.root,
        &[(b"\x06\x03\x55\x1d\x23", b"\x06\x03\x55\x1d\x0e")],
    );
    let negative_inter = resigned(
        &f.inter,
        &f.root,
        &[(
            b"\xa0\x03\x02\x01\x02\x02\x01\x01",
            b"\xa0\x03\x02\x01\x02\x02\x01\xff",
        )],
    );
    let duplicate_inter = resigned(
        &f.inter,
        &f.root,
        &[(b"\x06\x03\x55\x1d\x23", b"\x06\x03\x55\x1d\x0e")],
    );
    let cases: Vec<ChainCase> = vec![
        (
            "leaf with a negative serial number",
            vec![negative_leaf],
            f.leaf.key.clone(),
            Err("x509: malformed certificate: x509: negative serial number"),
        ),
        (
            "leaf with a duplicate extension",
            vec![duplicate_leaf],
            f.leaf.key.clone(),
            Err(
                "x509: malformed certificate: x509: certificate contains duplicate extension with OID \"2.5.29.14\"",
            ),
        ),
        (
            "intermediate with a negative serial number",
            vec![f.chained.der.clone(), negative_inter],
            f.chained.key.clone(),
            Err("x509: malformed intermediate certificate: x509: negative serial number"),
        ),
        (
            "intermediate with a duplicate extension",
            vec![f.chained.der.clone(), duplicate_inter],
            f.chained.key.clone(),
            Err(
                "x509: malformed intermediate certificate: x509: certificate contains duplicate extension with OID \"2.5.29.14\"",
            ),
        ),
        (
            "control: alice",
            vec![f.leaf.der.clone()],
            f.leaf.key.clone(),
            Ok("alice"),
        ),
        (
            "control: bob through the intermediate",
            vec![f.chained.der.clone(), f.inter.der.clone()],
            f.chained.key.clone(),
            Ok("bob"),
        ),
    ];

    // Handed to the library directly: refused with Go's parse error, once per connection
    // (the second request on the same `PeerCertificates` is answered from its cache).
    let auth = X509Authenticator::new(bundle(&[&f.root])).with_histogram(None);
    for (name, chain, _, want) in &cases {
        let peer = PeerCertificates::injected(chain.clone());
        for attempt in 0..2 {
            let got = auth
                .authenticate_peer(&peer)
                .map(|o| o.map(|r| r.user.name().to_owned()))
                .map_err(|e| e.to_string());
            match (got, want) {
                (Ok(Some(user)), Ok(w)) => assert_eq!(user, *w, "case {name} ({attempt})"),
                (Err(e), Err(w)) => assert!(
                    e.starts_with("verifying certificate ")
                        && e.ends_with(&format!(" failed: {w}")),
                    "case {name} ({attempt}): {e}"
                ),
                (got, want) => panic!("case {name} ({attempt}): got {got:?}, want {want:?}"),
            }
        }
    }

    // Over kube-authn's TLS stack: the handshake fails, as Go's does.
    assert_handshake_outcomes(&f.pki, &f.root, &cases).await;
}

fn vector_certs(file: &str) -> Vec<CertificateDer<'static>> {
    let path = format!(
        "{}/tests/vectors/x509_issuer_extensions/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    use kube_authn::tls::pki_types::pem::PemObject;
    CertificateDer::pem_file_iter(path)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Issuer extensions read as Go reads them (tests/vectors/x509_issuer_extensions, Go's
/// verdicts in its README): keyUsage with bytes after the BIT STRING signs (Go's
/// parseKeyUsageExtension does not look past it); a non-minimal length does not parse; a
/// critical authorityKeyIdentifier does not parse. A root Go would not load is refused by
/// `CaBundle::from_pem` and `from_der` alike, with Go's text.
#[test]
fn issuer_extensions_are_read_as_go_reads_them() {
    type Case = (
        &'static str,
        Result<CaBundle, String>,
        Result<&'static str, &'static str>,
    );
    let pem = |s: &str| {
        let path = format!(
            "{}/tests/vectors/x509_issuer_extensions/{s}-roots.pem",
            env!("CARGO_MANIFEST_DIR")
        );
        CaBundle::from_pem(&std::fs::read(path).unwrap()).map_err(|e| e.to_string())
    };
    let der = |s: &str| {
        CaBundle::from_der(vector_certs(&format!("{s}-roots.pem"))).map_err(|e| e.to_string())
    };
    let cases: Vec<Case> = vec![
        (
            "s5-inter-ku-trailing",
            pem("s5-inter-ku-trailing"),
            Ok("dina"),
        ),
        (
            "s7-inter-ku-nonminimal",
            pem("s7-inter-ku-nonminimal"),
            Err("x509: malformed intermediate certificate: x509: invalid key usage"),
        ),
        (
            "s8-root-ku-nonminimal",
            pem("s8-root-ku-nonminimal"),
            Err("bundle: x509: invalid key usage"),
        ),
        (
            "s1-root-akid-critical",
            pem("s1-root-akid-critical"),
            Err("bundle: x509: authority key identifier incorrectly marked critical"),
        ),
        // Go does not load these roots at all; nor does `from_der`.
        (
            "s8-root-ku-nonminimal",
            der("s8-root-ku-nonminimal"),
            Err("bundle: x509: invalid key usage"),
        ),
        (
            "s1-root-akid-critical",
            der("s1-root-akid-critical"),
            Err("bundle: x509: authority key identifier incorrectly marked critical"),
        ),
    ];
    for (name, bundle, want) in cases {
        let got = match bundle {
            Err(e) => Err(format!("bundle: {e}")),
            Ok(bundle) => {
                let auth = X509Authenticator::new(bundle).with_histogram(None);
                let chain = vector_certs(&format!("{name}-chain.pem"));
                auth.authenticate_peer(&PeerCertificates::injected(chain))
                    .map(|o| o.map(|r| r.user.name().to_owned()))
                    .map_err(|e| e.to_string())
            }
        };
        match (got, want) {
            (Ok(Some(user)), Ok(w)) => assert_eq!(user, w, "{name}"),
            (Err(e), Err(w)) => assert!(e.ends_with(w), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

/// Writes a case (roots, then the presented chain, leaf first) for a Go cross-check when
/// `KUBE_AUTHN_GO_CASES` names a directory (`<dir>/<case>/roots.pem`, `chain.pem`).
fn dump_for_go(case: &str, roots: &[&Issued], chain: &[&Issued]) {
    let Some(dir) = std::env::var_os("KUBE_AUTHN_GO_CASES") else {
        return;
    };
    let dir = std::path::Path::new(&dir).join(case.replace([' ', '/', ','], "_"));
    std::fs::create_dir_all(&dir).unwrap();
    let pems = |certs: &[&Issued]| certs.iter().map(|c| c.pem()).collect::<String>();
    std::fs::write(dir.join("roots.pem"), pems(roots)).unwrap();
    std::fs::write(dir.join("chain.pem"), pems(chain)).unwrap();
}

/// Go's `policiesValid` (RFC 5280 6.1 as updated by RFC 9618, no user-supplied policies) runs
/// on every candidate chain, before the key-usage check: a non-critical policyConstraints,
/// policyMappings or inhibitAnyPolicy that webpki ignores makes Go refuse the chain with
/// `x509: no valid chains built: 1 candidate chains with invalid policies`. Every outcome was
/// checked with Go 1.26's `Certificate.Verify` (KeyUsages clientAuth).
#[test]
fn certificate_policies_are_validated_as_go_validates_them() {
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    const INVALID: &str = "x509: no valid chains built: 1 candidate chains with invalid policies";
    let ca = |name: &str, issuer: &Issued, ext: &str| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                issuer: Some(issuer),
                ext: &format!("{CA_EXT}\n{ext}"),
                serial: 3,
                ..Spec::default()
            },
        )
    };
    let leaf = |name: &str, issuer: &Issued, ext: &str| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                issuer: Some(issuer),
                ext: &format!("basicConstraints=critical,CA:FALSE\n{ext}"),
                serial: 4,
                ..Spec::default()
            },
        )
    };
    const CLIENT: &str = "extendedKeyUsage=clientAuth";
    let require0 = ca(
        "require0",
        &root,
        "policyConstraints=requireExplicitPolicy:0",
    );
    let require0_p1 = ca(
        "require0-p1",
        &root,
        "policyConstraints=requireExplicitPolicy:0\ncertificatePolicies=1.2.3.4",
    );
    let require0_any = ca(
        "require0-any",
        &root,
        "policyConstraints=requireExplicitPolicy:0\ncertificatePolicies=2.5.29.32.0",
    );
    let require0_inhibit_any = ca(
        "require0-inhibit-any",
        &root,
        "policyConstraints=requireExplicitPolicy:0\ninhibitAnyPolicy=0\ncertificatePolicies=2.5.29.32.0",
    );
    let require1 = ca(
        "require1",
        &root,
        "policyConstraints=requireExplicitPolicy:1",
    );
    let require1_under = ca("require1-under", &require1, "");
    let maps_to_any = ca(
        "maps-to-any",
        &root,
        "certificatePolicies=1.2.3.4\npolicyMappings=1.2.3.4:2.5.29.32.0",
    );
    let maps = ca(
        "maps",
        &root,
        "policyConstraints=requireExplicitPolicy:0\ncertificatePolicies=1.2.3.4\npolicyMappings=1.2.3.4:1.2.3.5",
    );
    let inhibit_mapping = ca(
        "inhibit-mapping",
        &root,
        "policyConstraints=requireExplicitPolicy:0,inhibitPolicyMapping:0\ncertificatePolicies=1.2.3.4",
    );
    let inhibited_maps = ca(
        "inhibited-maps",
        &inhibit_mapping,
        "certificatePolicies=1.2.3.4\npolicyMappings=1.2.3.4:1.2.3.5",
    );
    // The same name and key as `require0`, without policy constraints: a second candidate
    // chain for every leaf under `require0`.
    let require0_key: &'static str = Box::leak(
        std::fs::read_to_string(&require0.key)
            .unwrap()
            .into_boxed_str(),
    );
    let require0_twin = pki.issue(
        "require0-twin",
        Spec {
            subj: "/CN=require0",
            key: Key::Pem(require0_key),
            issuer: Some(&root),
            ext: CA_EXT,
            serial: 6,
            ..Spec::default()
        },
    );
    let maps_from_any = ca(
        "maps-from-any",
        &root,
        "certificatePolicies=1.2.3.4\npolicyMappings=2.5.29.32.0:1.2.3.4",
    );
    let policies_only = ca("policies-only", &root, "certificatePolicies=1.2.3.4");
    let policy_root = pki.issue(
        "policy-root",
        Spec {
            subj: "/CN=policy-root",
            ext: &format!("{CA_EXT}\npolicyConstraints=requireExplicitPolicy:0"),
            ..Spec::default()
        },
    );
    type Case<'a> = (
        &'a str,
        Vec<&'a Issued>,
        Vec<Issued>,
        Result<&'a str, &'a str>,
    );
    let cases: Vec<Case> = vec![
        (
            "intermediate requires an explicit policy, leaf has none",
            vec![&root],
            vec![leaf("l1", &require0, CLIENT), require0.clone()],
            Err(INVALID),
        ),
        (
            "leaf requires an explicit policy and has none",
            vec![&root],
            vec![leaf(
                "l2",
                &root,
                &format!("{CLIENT}\npolicyConstraints=requireExplicitPolicy:0"),
            )],
            Err(INVALID),
        ),
        (
            "leaf requires an explicit policy and has one",
            vec![&root],
            vec![leaf(
                "l3",
                &root,
                &format!(
                    "{CLIENT}\npolicyConstraints=requireExplicitPolicy:0\ncertificatePolicies=1.2.3.4"
                ),
            )],
            Ok("l3"),
        ),
        (
            "explicit policy required, the same policy in both",
            vec![&root],
            vec![
                leaf(
                    "l4",
                    &require0_p1,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.4"),
                ),
                require0_p1.clone(),
            ],
            Ok("l4"),
        ),
        (
            "explicit policy required, another policy in the leaf",
            vec![&root],
            vec![
                leaf(
                    "l5",
                    &require0_p1,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.5"),
                ),
                require0_p1.clone(),
            ],
            Err(INVALID),
        ),
        (
            "explicit policy required, anyPolicy above a leaf policy",
            vec![&root],
            vec![
                leaf(
                    "l6",
                    &require0_any,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.5"),
                ),
                require0_any.clone(),
            ],
            Ok("l6"),
        ),
        (
            "anyPolicy inhibited, leaf has anyPolicy only",
            vec![&root],
            vec![
                leaf(
                    "l7",
                    &require0_inhibit_any,
                    &format!("{CLIENT}\ncertificatePolicies=2.5.29.32.0"),
                ),
                require0_inhibit_any.clone(),
            ],
            Err(INVALID),
        ),
        (
            "anyPolicy inhibited, leaf has a policy under the intermediate's anyPolicy",
            vec![&root],
            vec![
                leaf(
                    "l8",
                    &require0_inhibit_any,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.4"),
                ),
                require0_inhibit_any.clone(),
            ],
            Ok("l8"),
        ),
        (
            "explicit policy required one certificate below, leaf has none",
            vec![&root],
            vec![
                leaf("l9", &require1_under, CLIENT),
                require1_under.clone(),
                require1.clone(),
            ],
            Err(INVALID),
        ),
        (
            "explicit policy required one certificate below, direct leaf has none",
            vec![&root],
            vec![leaf("l10", &require1, CLIENT), require1.clone()],
            Err(INVALID),
        ),
        (
            "a mapping to anyPolicy",
            vec![&root],
            vec![
                leaf(
                    "l11",
                    &maps_to_any,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.4"),
                ),
                maps_to_any.clone(),
            ],
            Err(INVALID),
        ),
        (
            "a mapping from anyPolicy",
            vec![&root],
            vec![
                leaf(
                    "l21",
                    &maps_from_any,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.4"),
                ),
                maps_from_any.clone(),
            ],
            Err(INVALID),
        ),
        (
            "a leaf's own mapping to anyPolicy is not applied",
            vec![&root],
            vec![leaf(
                "l22",
                &root,
                &format!(
                    "{CLIENT}\npolicyConstraints=requireExplicitPolicy:0\ncertificatePolicies=1.2.3.4\npolicyMappings=1.2.3.4:2.5.29.32.0"
                ),
            )],
            Ok("l22"),
        ),
        (
            "a mapping to the leaf's policy",
            vec![&root],
            vec![
                leaf(
                    "l12",
                    &maps,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.5"),
                ),
                maps.clone(),
            ],
            Ok("l12"),
        ),
        (
            "the unmapped policy under a mapping",
            vec![&root],
            vec![
                leaf(
                    "l13",
                    &maps,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.4"),
                ),
                maps.clone(),
            ],
            Err(INVALID),
        ),
        (
            "a mapping inhibited from above",
            vec![&root],
            vec![
                leaf(
                    "l14",
                    &inhibited_maps,
                    &format!("{CLIENT}\ncertificatePolicies=1.2.3.5"),
                ),
                inhibited_maps.clone(),
                inhibit_mapping.clone(),
            ],
            Err(INVALID),
        ),
        (
            "policies without constraints, leaf has none",
            vec![&root],
            vec![leaf("l15", &policies_only, CLIENT), policies_only.clone()],
            Ok("l15"),
        ),
        (
            "the root's policy constraints are not applied",
            vec![&policy_root],
            vec![leaf("l16", &policy_root, CLIENT)],
            Ok("l16"),
        ),
        (
            "a second candidate chain without the constraint",
            vec![&root],
            vec![
                leaf("l18", &require0, CLIENT),
                require0.clone(),
                require0_twin.clone(),
            ],
            Ok("l18"),
        ),
        (
            "the same, the chain without the constraint first",
            vec![&root],
            vec![
                leaf("l19", &require0, CLIENT),
                require0_twin.clone(),
                require0.clone(),
            ],
            Ok("l19"),
        ),
        (
            "two candidate chains, one of invalid policies, both of the wrong usage",
            vec![&root],
            vec![
                leaf("l20", &require0, "extendedKeyUsage=serverAuth"),
                require0.clone(),
                require0_twin.clone(),
            ],
            Err(
                "x509: no valid chains built: 1 candidate chains with incompatible key usage, 1 candidate chains with invalid policies",
            ),
        ),
        (
            "invalid policies are counted before the key usage",
            vec![&root],
            vec![
                leaf("l17", &require0, "extendedKeyUsage=serverAuth"),
                require0.clone(),
            ],
            Err(INVALID),
        ),
    ];
    for (name, roots, chain, _) in &cases {
        dump_for_go(name, roots, &chain.iter().collect::<Vec<_>>());
    }
    for (name, roots, chain, want) in cases {
        let chain_refs: Vec<&Issued> = chain.iter().collect();
        let auth = X509Authenticator::new(bundle(&roots)).with_histogram(None);
        match (outcome(&auth, &peer(&chain_refs)), want) {
            (Ok(Some(got)), Ok(user)) => assert_eq!(got.name, user, "{name}"),
            (Err(e), Err(text)) => {
                assert!(e.starts_with("verifying certificate SN="), "{name}: {e}");
                assert!(e.ends_with(&format!(" failed: {text}")), "{name}: {e}");
            }
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

/// Go builds the chains first and checks extended key usage on the chains it built: a leaf
/// for serverAuth only whose issuer is unknown is `signed by unknown authority`, as any
/// other leaf of an unknown issuer (webpki checks the leaf's usage first).
#[test]
fn a_leaf_of_the_wrong_usage_from_an_unknown_issuer_is_of_an_unknown_authority() {
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    let other = pki.ca("other", Key::P256);
    let server_leaf = |name: &str, issuer: &Issued| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                issuer: Some(issuer),
                ext: "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth",
                serial: 5,
                ..Spec::default()
            },
        )
    };
    let unknown = server_leaf("unknown", &other);
    let known = server_leaf("known", &root);
    let cases = [
        (
            "serverAuth leaf of an unknown issuer",
            &unknown,
            "x509: certificate signed by unknown authority",
        ),
        (
            "serverAuth leaf of a known issuer",
            &known,
            "x509: certificate specifies an incompatible key usage",
        ),
    ];
    let auth = X509Authenticator::new(bundle(&[&root])).with_histogram(None);
    for (name, leaf, _) in cases {
        dump_for_go(name, &[&root], &[leaf]);
    }
    for (name, leaf, want) in cases {
        let e = outcome(&auth, &peer(&[leaf])).expect_err(name);
        assert!(e.starts_with("verifying certificate SN="), "{name}: {e}");
        assert!(e.ends_with(&format!(" failed: {want}")), "{name}: {e}");
    }
}

/// Go 1.26's `checkChainConstraints` parses every subject alternative name of a certificate
/// below a CA with a nameConstraints extension (of any name type) before matching any, and
/// refuses the chain when one does not parse; webpki reads only the names of a constrained
/// type. Texts checked against Go 1.26's `Verify`.
#[test]
fn names_below_a_constrained_ca_are_parsed_as_go_parses_them() {
    const NOT_AUTHORIZED: &str =
        "x509: a root or intermediate certificate is not authorized to sign for this name: ";
    let pki = Pki::new();
    let ext = |extra: &str| format!("{CA_EXT}\n{extra}");
    let ca = |name: &str, issuer: Option<&Issued>, extra: &str| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                issuer,
                ext: &ext(extra),
                serial: 7,
                ..Spec::default()
            },
        )
    };
    let root = pki.ca("nc-root", Key::P256);
    let dns_ca = ca(
        "nc-dns",
        Some(&root),
        "nameConstraints=critical,permitted;DNS:example.com",
    );
    let ip_ca = ca(
        "nc-ip",
        Some(&root),
        "nameConstraints=critical,permitted;IP:10.0.0.0/255.0.0.0",
    );
    let plain_ca = ca("nc-none", Some(&root), "");
    let constrained_root = ca(
        "nc-root-dns",
        None,
        "nameConstraints=critical,permitted;DNS:example.com",
    );
    let int_with_urn = ca(
        "nc-int-urn",
        Some(&constrained_root),
        "subjectAltName=URI:urn:example:int",
    );
    let leaf = |name: &str, issuer: &Issued, san: &str| {
        pki.issue(
            name,
            Spec {
                subj: "/O=nc-group/CN=alice",
                issuer: Some(issuer),
                ext: &format!("{LEAF_EXT}\nsubjectAltName={san}"),
                serial: 9,
                ..Spec::default()
            },
        )
    };
    type Case<'a> = (&'a str, &'a Issued, &'a Issued, &'a str, Option<&'a str>);
    let cases: Vec<Case<'_>> = vec![
        (
            "F1 URI without a host",
            &root,
            &dns_ca,
            "DNS:a.example.com,URI:urn:example:alice",
            Some(
                "URI with empty host (\"urn:example:alice\") cannot be matched against constraints",
            ),
        ),
        (
            "F2 URI with an IP host",
            &root,
            &dns_ca,
            "DNS:a.example.com,URI:https://10.0.0.1/alice",
            Some("URI with IP (\"https://10.0.0.1/alice\") cannot be matched against constraints"),
        ),
        (
            "F3 email that is no mailbox",
            &root,
            &dns_ca,
            "DNS:a.example.com,email:alice",
            Some("cannot parse rfc822Name \"alice\""),
        ),
        (
            "F4 invalid DNS name under an IP-only constraint",
            &root,
            &ip_ca,
            "IP:10.0.0.1,DNS:foo..example.com",
            Some("x509: cannot parse dnsName \"foo..example.com\""),
        ),
        (
            "F1 in an intermediate below a constrained root",
            &constrained_root,
            &int_with_urn,
            "DNS:a.example.com",
            Some("URI with empty host (\"urn:example:int\") cannot be matched against constraints"),
        ),
        // Controls Go accepts.
        (
            "URI with a host under a DNS constraint",
            &root,
            &dns_ca,
            "DNS:a.example.com,URI:https://a.example.com/alice",
            None,
        ),
        (
            "a mailbox under a DNS constraint",
            &root,
            &dns_ca,
            "DNS:a.example.com,email:alice@example.com",
            None,
        ),
        (
            "no constraint anywhere",
            &root,
            &plain_ca,
            "DNS:foo..example.com,URI:urn:example:alice,email:alice",
            None,
        ),
    ];
    let mut wrong = Vec::new();
    for (i, (name, anchor, issuer, san, want)) in cases.into_iter().enumerate() {
        let leaf = leaf(&format!("nc-leaf-{i}"), issuer, san);
        let auth = X509Authenticator::new(bundle(&[anchor])).with_histogram(None);
        let got = outcome(&auth, &peer(&[&leaf, issuer]));
        let ok = match (&got, want) {
            (Ok(Some(user)), None) => user.name == "alice",
            (Err(e), Some(want)) => {
                e.starts_with("verifying certificate SN=9, ")
                    && e.ends_with(&format!(" failed: {NOT_AUTHORIZED}{want}"))
            }
            _ => false,
        };
        if !ok {
            wrong.push(format!("{name}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Go's parser handles a critical subjectAltName only when it read at least one name of a
/// form it knows (rfc822Name, dNSName, URI, iPAddress), and a critical nameConstraints only
/// when every subtree is of such a form; otherwise the extension is in
/// `UnhandledCriticalExtensions` and `isValid` refuses the certificate, leaf (before its
/// validity, and even when it is pinned in the bundle) or intermediate: `x509: unhandled
/// critical extension`. webpki takes both extensions as handled whatever they hold. Outcomes
/// confirmed with Go 1.26 and k8s.io/apiserver's x509 authenticator (`KUBE_AUTHN_GO_CASES`).
#[test]
fn critical_names_go_does_not_read_are_unhandled_critical_extensions() {
    let pki = Pki::new();
    let root = pki.ca("root", Key::P256);
    const OTHER_NAME: &str = "a00a06032a0304a0030c0178";
    const DIRECTORY_NAME: &str = "a40e300c310a300806035504030c0178";
    let san = |names: &str| {
        let len = names.len() / 2;
        format!("30{len:02x}{names}")
    };
    let issue = |name: &str, issuer: &Issued, ext: String, serial: u64| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                issuer: Some(issuer),
                ext: &ext,
                serial,
                ..Spec::default()
            },
        )
    };
    let leaf_with = |name: &str, extra: &str, serial: u64| {
        issue(name, &root, format!("{LEAF_EXT}\n{extra}"), serial)
    };
    let inter_with = |name: &str, extra: &str, serial: u64| {
        issue(name, &root, format!("{CA_EXT}\n{extra}"), serial)
    };
    let crit_san = |hex: String| format!("2.5.29.17=critical,DER:{hex}");
    // NameConstraints { permittedSubtrees [0] { GeneralSubtree { base } } }.
    let crit_nc = |base: &str| {
        let subtree = format!("30{:02x}{base}", base.len() / 2);
        let permitted = format!("a0{:02x}{subtree}", subtree.len() / 2);
        format!(
            "2.5.29.30=critical,DER:30{:02x}{permitted}",
            permitted.len() / 2
        )
    };
    let leaves = [
        leaf_with("san-othername", &crit_san(san(OTHER_NAME)), 10),
        leaf_with("san-dirname", &crit_san(san(DIRECTORY_NAME)), 11),
        leaf_with("san-empty", &crit_san(san("")), 12),
        leaf_with("san-registeredid", &crit_san(san("88032a0304")), 13),
        leaf_with(
            "san-dns-and-othername",
            &crit_san(san(&format!("820161{OTHER_NAME}"))),
            14,
        ),
        leaf_with(
            "san-email",
            &crit_san(san("8105614062 2e63".replace(' ', "").as_str())),
            15,
        ),
        leaf_with(
            "san-othername-noncritical",
            &format!("2.5.29.17=DER:{}", san(OTHER_NAME)),
            16,
        ),
        leaf_with("nc-dirname", &crit_nc(DIRECTORY_NAME), 17),
        leaf_with("nc-dns", &crit_nc("820b6578616d706c652e636f6d"), 18),
    ];
    let inters = [
        inter_with("inter-san-othername", &crit_san(san(OTHER_NAME)), 20),
        inter_with("inter-san-dirname", &crit_san(san(DIRECTORY_NAME)), 21),
        inter_with("inter-san-dns", &crit_san(san("820161")), 22),
    ];
    let under: Vec<Issued> = inters
        .iter()
        .enumerate()
        .map(|(i, inter)| {
            pki.leaf(
                &format!("under-{}", inter.name),
                &format!("/CN=under-{i}"),
                inter,
            )
        })
        .collect();
    // A client certificate pinned in the bundle, with a critical otherName-only SAN.
    let pinned = pki.issue(
        "pinned-san-othername",
        Spec {
            subj: "/CN=pinned",
            ext: &format!(
                "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n{}",
                crit_san(san(OTHER_NAME))
            ),
            serial: 30,
            ..Spec::default()
        },
    );
    const UNHANDLED: &str = "failed: x509: unhandled critical extension";
    type Case<'a> = (&'a str, Vec<&'a Issued>, Result<&'a str, &'a str>);
    let cases: Vec<Case<'_>> = vec![
        (
            "leaf: critical SAN, otherName only",
            vec![&leaves[0]],
            Err(UNHANDLED),
        ),
        (
            "leaf: critical SAN, directoryName only",
            vec![&leaves[1]],
            Err(UNHANDLED),
        ),
        (
            "leaf: critical SAN, empty SEQUENCE",
            vec![&leaves[2]],
            Err(UNHANDLED),
        ),
        (
            "leaf: critical SAN, registeredID only",
            vec![&leaves[3]],
            Err(UNHANDLED),
        ),
        (
            "leaf: critical SAN, a DNS name and an otherName",
            vec![&leaves[4]],
            Ok("san-dns-and-othername"),
        ),
        (
            "leaf: critical SAN, an email address",
            vec![&leaves[5]],
            Ok("san-email"),
        ),
        (
            "leaf: non-critical SAN, otherName only",
            vec![&leaves[6]],
            Ok("san-othername-noncritical"),
        ),
        (
            "leaf: critical nameConstraints, directoryName",
            vec![&leaves[7]],
            Err(UNHANDLED),
        ),
        (
            "leaf: critical nameConstraints, dNSName",
            vec![&leaves[8]],
            Ok("nc-dns"),
        ),
        (
            "intermediate: critical SAN, otherName only",
            vec![&under[0], &inters[0]],
            Err(UNHANDLED),
        ),
        (
            "intermediate: critical SAN, directoryName only",
            vec![&under[1], &inters[1]],
            Err(UNHANDLED),
        ),
        (
            "intermediate: critical SAN, a DNS name",
            vec![&under[2], &inters[2]],
            Ok("under-2"),
        ),
        (
            "pinned leaf: critical SAN, otherName only",
            vec![&pinned],
            Err(UNHANDLED),
        ),
    ];
    let auth = X509Authenticator::new(bundle(&[&root, &pinned])).with_histogram(None);
    for (name, chain, want) in cases {
        dump_for_go(name, &[&root, &pinned], &chain);
        match (outcome(&auth, &peer(&chain)), want) {
            (Ok(Some(got)), Ok(user)) => assert_eq!(got.name, user, "{name}"),
            (Err(e), Err(text)) => {
                assert!(e.starts_with("verifying certificate SN="), "{name}: {e}");
                assert!(e.ends_with(text), "{name}: {e}");
            }
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    // The front proxy's certificate goes through the same verification.
    let proxy = kube_authn::request::FrontProxy::new(kube_authn::request::RequestHeaderConfig {
        client_ca_pem: Some(root.pem().into_bytes()),
        ..kube_authn::request::RequestHeaderConfig::standard()
    })
    .unwrap();
    let proxied = |chain: &[&Issued]| {
        let mut r = http::Request::get("/")
            .header("X-Remote-User", "system:admin")
            .body(())
            .unwrap();
        r.extensions_mut().insert(peer(chain));
        proxy
            .authenticate_parts(&r.into_parts().0)
            .map(|o| o.map(|r| r.user.name().to_owned()))
            .map_err(|e| e.to_string())
    };
    let proxy_cases: [(&str, Vec<&Issued>, Result<&str, &str>); 3] = [
        (
            "proxy leaf: critical SAN, otherName only",
            vec![&leaves[0]],
            Err("x509: unhandled critical extension"),
        ),
        (
            "proxy intermediate: critical SAN, directoryName only",
            vec![&under[1], &inters[1]],
            Err("x509: unhandled critical extension"),
        ),
        (
            "proxy leaf: critical SAN, DNS and otherName",
            vec![&leaves[4]],
            Ok("system:admin"),
        ),
    ];
    for (name, chain, want) in proxy_cases {
        match (proxied(&chain), want) {
            (Ok(Some(user)), Ok(w)) => assert_eq!(user, w, "{name}"),
            (Err(e), Err(text)) => assert!(e.ends_with(text), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    // Go checks the leaf before its validity: an expired leaf with such a SAN is refused for
    // the extension.
    let expired = X509Authenticator::new(bundle(&[&root]))
        .with_histogram(None)
        .with_clock(clock_at(now() + 20 * YEAR));
    let e = outcome(&expired, &peer(&[&leaves[0]])).unwrap_err();
    assert!(e.ends_with(UNHANDLED), "{e}");
    let e = outcome(&expired, &peer(&[&leaves[4]])).unwrap_err();
    assert!(
        e.contains("certificate has expired or is not yet valid"),
        "{e}"
    );
}

/// A root's basicConstraints and extendedKeyUsage read as Go reads them: Go's
/// `parseBasicConstraintsExtension` reads an optional BOOLEAN and an optional INTEGER and
/// ignores what follows, so a root with `SEQUENCE { TRUE, INTEGER 0, NULL }` has pathLen 0
/// (x509-parser refused that SEQUENCE, and the root then had no limit).
/// Outcomes confirmed with Go 1.26 and k8s.io/apiserver's x509 authenticator.
#[test]
fn root_constraints_are_read_as_go_reads_them() {
    let pki = Pki::new();
    let root = |name: &str, ext: &str, serial: u64| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                ext,
                serial,
                ..Spec::default()
            },
        )
    };
    const BC_3: &str = "2.5.29.19=critical,DER:30080101ff0201000500";
    const KU: &str = "keyUsage=critical,keyCertSign,cRLSign";
    let bc3 = root("bc3-root", &format!("{BC_3}\n{KU}"), 1);
    let bc3_server = root(
        "bc3-server-root",
        &format!("{BC_3}\n{KU}\nextendedKeyUsage=serverAuth"),
        2,
    );
    let inter = pki.issue(
        "bc3-inter",
        Spec {
            subj: "/CN=bc3-inter",
            issuer: Some(&bc3),
            ext: CA_EXT,
            serial: 3,
            ..Spec::default()
        },
    );
    let via_inter = pki.leaf("via-inter", "/CN=via-inter", &inter);
    let direct = pki.leaf("direct", "/CN=direct", &bc3);
    let server_only = pki.leaf("server-only", "/CN=server-only", &bc3_server);
    type Case<'a> = (&'a str, Vec<&'a Issued>, Result<&'a str, &'a str>);
    let cases: Vec<Case<'_>> = vec![
        (
            "pathLen 0 followed by NULL, one intermediate",
            vec![&via_inter, &inter],
            Err("failed: x509: too many intermediates for path length constraint"),
        ),
        (
            "pathLen 0 followed by NULL, no intermediate",
            vec![&direct],
            Ok("direct"),
        ),
        (
            "the same root with extendedKeyUsage serverAuth",
            vec![&server_only],
            Err("failed: x509: certificate specifies an incompatible key usage"),
        ),
    ];
    let roots = [&bc3, &bc3_server];
    let auth = X509Authenticator::new(bundle(&roots)).with_histogram(None);
    for (name, chain, want) in cases {
        dump_for_go(name, &roots, &chain);
        match (outcome(&auth, &peer(&chain)), want) {
            (Ok(Some(got)), Ok(user)) => assert_eq!(got.name, user, "{name}"),
            (Err(e), Err(text)) => assert!(e.ends_with(text), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    // DIFFERENCE: bytes after the basicConstraints SEQUENCE (Go ignores them and loads the
    // root) make webpki refuse the certificate, so the bundle does not load.
    let trailing = root(
        "bc-trailing-root",
        &format!("2.5.29.19=critical,DER:30030101ff0500\n{KU}"),
        4,
    );
    // So do bytes after an extendedKeyUsage SEQUENCE (Go reads the usages before them).
    let eku_trailing = root(
        "eku-trailing-root",
        &format!("{CA_EXT}\n2.5.29.37=DER:300a06082b060105050703010500"),
        5,
    );
    for cert in [&trailing, &eku_trailing] {
        let err = CaBundle::from_der(vec![cert.der.clone()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "x509: unusable CA certificate: BadDer",
            "{}",
            cert.name
        );
    }
}

/// Signature algorithm and issuer key combinations outside webpki's set are refused, with a
/// text that says what was refused (the old one blamed RSA key sizes or SHA-1). Go 1.26
/// accepts all three chains (documented difference).
#[test]
fn unsupported_signature_algorithms_are_named_as_such() {
    let pki = Pki::new();
    let p256 = pki.ca("p256-root", Key::P256);
    let p384 = pki.issue(
        "p384-root",
        Spec {
            subj: "/CN=p384-root",
            key: Key::Ec("P-384"),
            ext: CA_EXT,
            ..Spec::default()
        },
    );
    let p224 = pki.issue(
        "p224-root",
        Spec {
            subj: "/CN=p224-root",
            key: Key::Ec("P-224"),
            ext: CA_EXT,
            ..Spec::default()
        },
    );
    let leaf = |name: &str, issuer: &Issued, md: &'static str| {
        pki.issue(
            name,
            Spec {
                subj: &format!("/CN={name}"),
                issuer: Some(issuer),
                ext: LEAF_EXT,
                md,
                serial: 2,
                ..Spec::default()
            },
        )
    };
    const COMBINATION: &str = "failed: x509: unsupported combination of signature algorithm and \
                               issuer key (ECDSA: P-256 and P-384 with SHA-256 or SHA-384, P-521 \
                               with SHA-256, SHA-384 or SHA-512; no other curve)";
    let cases = [
        (
            "P-256 issuer, ecdsa-with-SHA512",
            leaf("p256-sha512", &p256, "sha512"),
        ),
        (
            "P-384 issuer, ecdsa-with-SHA512",
            leaf("p384-sha512", &p384, "sha512"),
        ),
        (
            "P-224 issuer, ecdsa-with-SHA256",
            leaf("p224-sha256", &p224, "sha256"),
        ),
    ];
    let roots = [&p256, &p384, &p224];
    let auth = X509Authenticator::new(bundle(&roots)).with_histogram(None);
    for (name, leaf) in &cases {
        dump_for_go(name, &roots, &[leaf]);
        let e = outcome(&auth, &peer(&[leaf])).unwrap_err();
        assert!(e.ends_with(COMBINATION), "{name}: {e}");
    }
    let control = leaf("p256-sha384", &p256, "sha384");
    assert!(outcome(&auth, &peer(&[&control])).unwrap().is_some());
}
