//! Chain verification with rustls-webpki, with Go `crypto/x509` behaviour where it is safe:
//! `anyExtendedKeyUsage` satisfies clientAuth, expired roots are refused, every issuer (root
//! included) must pass Go's `CheckSignatureFrom` constraint (basicConstraints cA, keyUsage
//! keyCertSign), a certificate of the path (leaf, intermediate or root) with a critical
//! extension Go's parser does not handle is refused, validity is exact to
//! the nanosecond, a leaf that is itself in the CA bundle verifies as a one-element chain.
//! Like Go, extended key usage and certificate policies ([`super::policy`]) are checked on the
//! chains built (Go's candidate chains), not while building them. Errors use Go's texts.

use std::cell::Cell;

use rustls_pki_types::{CertificateDer, SignatureVerificationAlgorithm, UnixTime};

use super::anchor_keys::N_ALGS;
use webpki::{EndEntityCert, ExtendedKeyUsageValidator, KeyPurposeIdIter};

use super::bundle::CaBundle;
use super::{Moment, der, go_parse, names, policy, subject};
use crate::error::{Error, ErrorKind};

/// The most certificates a presented chain may hold (leaf included). kubectl and every
/// Kubernetes component send one to three; webpki itself uses at most six intermediates.
///
/// ```
/// use kube_authn::tls::PeerCertificates;
/// use kube_authn::x509::{CaBundle, MAX_CHAIN_LEN, X509Authenticator, doc_ca_pem, doc_client_pem, parse_pem_bundle};
/// assert_eq!(MAX_CHAIN_LEN, 10);
/// let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
/// let leaf = parse_pem_bundle(doc_client_pem().as_bytes()).unwrap().remove(0);
/// let peer = PeerCertificates::injected(vec![leaf; MAX_CHAIN_LEN + 1]);
/// let err = auth.authenticate_peer(&peer).unwrap_err().to_string();
/// // "verifying certificate SN=…, SKID=…, AKID=… failed: x509: client certificate chain …"
/// assert!(err.ends_with(" failed: x509: client certificate chain of 11 certificates exceeds the limit of 10"), "{err}");
/// ```
pub const MAX_CHAIN_LEN: usize = 10;
/// The largest single certificate accepted, in DER bytes (64 KiB; TLS 1.3 caps a whole
/// handshake message at 16 MiB, rustls at 64 KiB).
///
/// ```
/// use kube_authn::tls::{PeerCertificates, pki_types::CertificateDer};
/// use kube_authn::x509::{CaBundle, MAX_CERT_LEN, X509Authenticator, doc_ca_pem};
/// assert_eq!(MAX_CERT_LEN, 64 * 1024);
/// let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
/// let huge = CertificateDer::from(vec![0x30; MAX_CERT_LEN + 1]);
/// let err = auth.authenticate_peer(&PeerCertificates::injected(vec![huge])).unwrap_err();
/// let err = err.to_string();
/// assert!(err.ends_with(" failed: x509: client certificate exceeds the size limit of 65536 bytes"), "{err}");
/// ```
pub const MAX_CERT_LEN: usize = 64 * 1024;

const EKU_CLIENT_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02];
const EKU_SERVER_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01];

/// The extended key usage "validator" webpki runs on the leaf and each intermediate while it
/// builds a path: it only requires the extension to be readable. Go checks extended key usage
/// on the chains it has built (`checkChainForKeyUsage`, in `check_path`), so a leaf of the
/// wrong usage from an unknown issuer is `signed by unknown authority`, as in Go (webpki would
/// refuse its usage before looking for an issuer). An *empty* EKU extension (`SEQUENCE {}`) is
/// refused by webpki before this runs; Go accepts it as "no EKU". RFC 5280 requires at least
/// one purpose (`SIZE (1..MAX)`), so we keep webpki's refusal (listed in
/// `docs/compatibility.md`).
struct ReadableEku;

impl ExtendedKeyUsageValidator for ReadableEku {
    fn validate(&self, iter: KeyPurposeIdIter<'_, '_>) -> Result<(), webpki::Error> {
        for id in iter {
            id?;
        }
        Ok(())
    }
}

/// The error `check_path` ends a candidate chain with when Go's filters (policies, key usage)
/// refuse it; the text comes from [`Filtered`].
fn filtered_out() -> webpki::Error {
    webpki::Error::RequiredEkuNotFoundContext(webpki::RequiredEkuNotFoundContext {
        required: webpki::KeyUsage::required_if_present(EKU_CLIENT_AUTH),
        present: Vec::new(),
    })
}

/// How many of Go's candidate chains (paths that passed every building check) its filters
/// refused, for Go's error text.
#[derive(Clone, Copy, Debug, Default)]
struct Filtered {
    invalid_policies: usize,
    incompatible_usage: usize,
}

impl Filtered {
    /// Go's `Verify` error once every candidate chain was filtered out (`None`: there was no
    /// candidate chain).
    fn error(self) -> Option<Error> {
        let Filtered {
            invalid_policies: policies,
            incompatible_usage: usage,
        } = self;
        if policies == 0 && usage == 0 {
            return None;
        }
        if policies == 0 {
            return Some(ERR_KEY_USAGE);
        }
        let mut details = Vec::new();
        if usage > 0 {
            details.push(format!(
                "{usage} candidate chains with incompatible key usage"
            ));
        }
        details.push(format!("{policies} candidate chains with invalid policies"));
        Some(err(format!(
            "x509: no valid chains built: {}",
            details.join(", ")
        )))
    }
}

/// Which extended key usage chains are verified for.
///
/// ```
/// use kube_authn::tls::PeerCertificates;
/// use kube_authn::x509::{CaBundle, KeyUsage, X509Authenticator, doc_ca_pem, doc_client_pem, parse_pem_bundle};
/// let bundle = || CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
/// // The documentation client certificate has the clientAuth usage only.
/// let peer = PeerCertificates::injected(parse_pem_bundle(doc_client_pem().as_bytes()).unwrap());
/// assert_eq!(KeyUsage::default(), KeyUsage::ClientAuth);
/// assert!(X509Authenticator::new(bundle()).authenticate_peer(&peer).unwrap().is_some());
/// let server = X509Authenticator::new(bundle()).with_key_usage(KeyUsage::ServerAuth);
/// let err = server.authenticate_peer(&peer).unwrap_err();
/// assert!(err.to_string().contains("incompatible key usage"), "{err}");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyUsage {
    /// `clientAuth` (what kube-apiserver uses, `DefaultVerifyOptions`).
    #[default]
    ClientAuth,
    /// `serverAuth` (Go's default when `KeyUsages` is empty; only for tests and odd setups).
    ServerAuth,
}

impl KeyUsage {
    fn oid(self) -> &'static [u8] {
        match self {
            KeyUsage::ClientAuth => EKU_CLIENT_AUTH,
            KeyUsage::ServerAuth => EKU_SERVER_AUTH,
        }
    }
}

/// A successful verification: the window (Unix seconds, inclusive) in which every certificate
/// of the verified path, root included, is valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) not_before: i64,
    pub(crate) not_after: i64,
}

impl Window {
    fn new(nb: i64, na: i64) -> Self {
        Self {
            not_before: nb,
            not_after: na,
        }
    }
    fn narrow(&mut self, nb: i64, na: i64) {
        self.not_before = self.not_before.max(nb);
        self.not_after = self.not_after.min(na);
    }
}

pub(crate) fn err(text: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidCredential, text.into())
}

/// Checks sizes before any parsing.
pub(crate) fn check_bounds(chain: &[CertificateDer<'_>]) -> Result<(), Error> {
    if chain.len() > MAX_CHAIN_LEN {
        return Err(err(format!(
            "x509: client certificate chain of {} certificates exceeds the limit of {MAX_CHAIN_LEN}",
            chain.len()
        )));
    }
    if chain.iter().any(|c| c.len() > MAX_CERT_LEN) {
        return Err(Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: client certificate exceeds the size limit of 65536 bytes",
        ));
    }
    Ok(())
}

/// Verifies `chain` (leaf first; the rest only as intermediates) against `bundle` at `now`.
/// The error text is Go's where Go has one, without the `verifying certificate` prefix.
pub(crate) fn verify_chain(
    bundle: &CaBundle,
    chain: &[CertificateDer<'_>],
    now: Moment,
    usage: KeyUsage,
) -> Result<Window, Error> {
    let leaf_view = match chain.first() {
        Some(leaf) if leaf.len() <= MAX_CERT_LEN => der::tbs_view(leaf),
        _ => None,
    };
    verify_chain_with_view(bundle, chain, leaf_view, now, usage)
}

/// The first issuer a path was refused for, Go's `CheckSignatureFrom` constraint failing on
/// it: the hint of Go's `UnknownAuthorityError`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refused {
    /// `bundle.ders[i]`.
    Root(usize),
    /// `chain[i]`.
    Presented(usize),
}

/// [`verify_chain`] for a caller that has already read the leaf's TBS (`None`: the leaf is
/// over [`MAX_CERT_LEN`] or malformed).
pub(crate) fn verify_chain_with_view(
    bundle: &CaBundle,
    chain: &[CertificateDer<'_>],
    leaf_view: Option<der::TbsView<'_>>,
    now: Moment,
    usage: KeyUsage,
) -> Result<Window, Error> {
    check_bounds(chain)?;
    let leaf_der = &chain[0];
    let leaf_view = leaf_view.ok_or(ERR_MALFORMED)?;
    let leaf = EndEntityCert::try_from(leaf_der).map_err(|e| map_error(&e))?;
    check_presented_names(leaf_der, &leaf_view, &chain[1..])?;
    // Go's `isValid` on the leaf: a critical extension its parser does not handle first (a
    // critical subjectAltName with no name Go reads, a critical nameConstraints with a form
    // it does not read: webpki takes both as handled), then the validity period. A leaf our
    // reader cannot walk (Go's parser, just run, accepted it) is refused, fail closed.
    let leaf_facts = der::issuer_facts(leaf_der).ok_or(ERR_MALFORMED)?;
    if leaf_facts.unhandled_critical {
        return Err(ERR_UNHANDLED_CRITICAL);
    }
    check_validity(leaf_view.not_before, leaf_view.not_after, now)?;

    let window = Cell::new(Window::new(leaf_view.not_before, leaf_view.not_after));
    let refused = Cell::new(None);
    let filtered = Cell::new(Filtered::default());
    // Go's `constraintsHintErr`: the first candidate chain's name constraint failure.
    let constraints_hint: Cell<Option<String>> = Cell::new(None);
    let refuse = |which: Refused| {
        if refused.get().is_none() {
            refused.set(Some(which));
        }
        webpki::Error::EndEntityUsedAsCa
    };
    let check_path = |path: &webpki::VerifiedPath<'_>| -> Result<(), webpki::Error> {
        // webpki ignores keyUsage (and has already refused an intermediate without
        // basicConstraints cA=TRUE); Go's `CheckSignatureFrom` refuses a parent whose keyUsage
        // lacks keyCertSign. Go builds from the leaf up, so the lowest refused issuer is its
        // hint. Then, per issuer, Go's `isValid` (as for a root below): a critical extension
        // Go's parser does not handle (webpki takes a critical subjectAltName and
        // nameConstraints of any form as handled).
        for cert in path.intermediate_certificates() {
            let der = cert.der();
            let facts = der::issuer_facts(&der).unwrap_or(der::IssuerFacts::UNREADABLE);
            if !facts.may_sign_certificates() {
                let at = chain
                    .iter()
                    .position(|c| c.as_ref() == der.as_ref())
                    .unwrap_or(0);
                return Err(refuse(Refused::Presented(at)));
            }
            if facts.unhandled_critical {
                return Err(webpki::Error::UnsupportedCriticalExtension);
            }
        }
        let anchor = path.anchor();
        let idx = bundle
            .anchors
            .iter()
            .position(|a| std::ptr::eq(a, anchor))
            .ok_or(webpki::Error::UnknownIssuer)?;
        // webpki takes any bundle certificate as an anchor; Go's `CheckSignatureFrom` refuses
        // a root that is v3 without basicConstraints, has cA=FALSE (a pinned client
        // certificate, say), or whose keyUsage lacks keyCertSign.
        let facts = bundle.root_facts[idx];
        if !facts.may_sign_certificates() {
            return Err(refuse(Refused::Root(idx)));
        }
        // Go's `isValid` refuses a root with a critical extension it does not handle; webpki
        // does not look at an anchor's extensions.
        if facts.unhandled_critical {
            return Err(webpki::Error::UnsupportedCriticalExtension);
        }
        let (nb, na) = bundle.validity[idx];
        // webpki does not check roots' validity; Go does. An expired root ends this path and
        // webpki tries the next candidate.
        if now.is_before(nb) {
            return Err(webpki::Error::CertNotValidYet {
                time: unix(now),
                not_before: unix(Moment::at(nb)),
            });
        }
        if now.is_after(na) {
            return Err(webpki::Error::CertExpired {
                time: unix(now),
                not_after: unix(Moment::at(na)),
            });
        }
        // Go applies the root's pathLenConstraint too (webpki only its intermediates'): at most
        // that many intermediates below it.
        if let Some(max) = bundle.max_path_len[idx]
            && path.intermediate_certificates().count() as u64 > max
        {
            return Err(webpki::Error::PathLenConstraintViolated);
        }
        let mut w = Window::new(leaf_view.not_before, leaf_view.not_after);
        w.narrow(nb, na);
        for cert in path.intermediate_certificates() {
            let der = cert.der();
            let view = der::tbs_view(&der).ok_or(webpki::Error::BadDer)?;
            // webpki compares whole seconds (`now` rounded down); Go compares to the
            // nanosecond, so an intermediate is expired any fraction of a second past its
            // notAfter.
            if now.is_after(view.not_after) {
                return Err(webpki::Error::CertExpired {
                    time: unix(now),
                    not_after: unix(Moment::at(view.not_after)),
                });
            }
            w.narrow(view.not_before, view.not_after);
        }
        // A candidate chain in Go: its filters come now, policies first, then extended key
        // usage on the whole chain, root included (`checkChainForKeyUsage`).
        let ders: Vec<CertificateDer<'_>> = std::iter::once(leaf_der.clone())
            .chain(path.intermediate_certificates().map(|c| c.der()))
            .collect();
        let certs: Option<Vec<policy::ChainCert<'_>>> = ders
            .iter()
            .map(|d| policy::ChainCert::read(d.as_ref()))
            .collect();
        let mut counts = filtered.get();
        let Some(certs) = certs else {
            counts.invalid_policies += 1;
            filtered.set(counts);
            return Err(filtered_out());
        };
        if !policy::policies_valid(&certs) {
            counts.invalid_policies += 1;
            filtered.set(counts);
            return Err(filtered_out());
        }
        if !bundle.root_eku[idx].allows(usage == KeyUsage::ClientAuth)
            || !certs.iter().all(|c| c.allows_usage(usage.oid()))
        {
            counts.incompatible_usage += 1;
            filtered.set(counts);
            return Err(filtered_out());
        }
        // Then Go's name constraints (`checkChainConstraints`): webpki has matched the names
        // of the constrained types; Go first parses every name below a constrained CA. Of the
        // root only its nameConstraints flag counts (read once, with the bundle). Without a
        // constrained CA above the leaf there is nothing to parse: the common case skips it.
        let root_constrained = bundle.root_name_constraints[idx];
        if root_constrained || certs[1..].iter().any(|c| c.names.name_constraints) {
            let root_names = names::ChainNames {
                name_constraints: root_constrained,
                san: None,
            };
            let names: Vec<_> = certs
                .iter()
                .map(|c| c.names)
                .chain(std::iter::once(root_names))
                .collect();
            if let Some(why) = names::unparsable_name(&names) {
                let first = constraints_hint.take().unwrap_or(why);
                constraints_hint.set(Some(first));
                return Err(filtered_out());
            }
        }
        window.set(w);
        Ok(())
    };
    let now_unix = unix(now);
    // webpki's algorithms, verifying against this bundle's anchors with keys parsed once.
    let algs = bundle.keys.algorithms();
    let algs: [&dyn SignatureVerificationAlgorithm; N_ALGS] =
        std::array::from_fn(|i| &algs[i] as _);
    match leaf.verify_for_usage(
        &algs,
        &bundle.anchors,
        &chain[1..],
        now_unix,
        ReadableEku,
        None,
        Some(&check_path),
    ) {
        Ok(_) => Ok(window.get()),
        Err(e) => {
            // Go: a leaf that is itself in the roots verifies as a one-element chain, without
            // any issuer check (`Verify` takes `[leaf]` when `Roots.contains(leaf)`).
            if bundle.ders.iter().any(|d| d.as_ref() == leaf_der.as_ref()) {
                if pinned_leaf_ok(&leaf_facts, usage) {
                    return Ok(Window::new(leaf_view.not_before, leaf_view.not_after));
                }
                return Err(ERR_KEY_USAGE);
            }
            // Go returns a chain-building error only when it built no candidate chain, and a
            // name constraint failure before the other filters' counts.
            if let Some(why) = constraints_hint.take() {
                return Err(err(format!(
                    "x509: a root or intermediate certificate is not authorized to sign for \
                     this name: {why}"
                )));
            }
            if let Some(e) = filtered.get().error() {
                return Err(e);
            }
            // webpki refuses a CA-flagged leaf before looking for its issuer; Go would first
            // fail to find the issuer. Report what Go reports when no issuer is known.
            if matches!(e, webpki::Error::CaUsedAsEndEntity) {
                let issuer_known = bundle
                    .anchors
                    .iter()
                    .any(|a| a.subject.as_ref() == leaf_view.issuer)
                    || chain[1..]
                        .iter()
                        .any(|c| der::tbs_view(c).is_some_and(|v| v.subject == leaf_view.issuer));
                if !issuer_known {
                    return Err(map_error(&webpki::Error::UnknownIssuer));
                }
            }
            // An issuer Go's `CheckSignatureFrom` refuses: refused by `check_path` (which
            // names it), or an intermediate webpki refused for its basicConstraints.
            if matches!(e, webpki::Error::EndEntityUsedAsCa) {
                let hint = match refused.get() {
                    Some(Refused::Root(i)) => Some(bundle.ders[i].as_ref()),
                    Some(Refused::Presented(i)) => Some(chain[i].as_ref()),
                    None => refused_intermediate(&leaf_view, chain),
                };
                return Err(match hint {
                    Some(cert) => cannot_sign(cert),
                    None => map_error(&webpki::Error::UnknownIssuer),
                });
            }
            Err(map_error(&e))
        }
    }
}

/// Go's text for a chain whose only candidate issuers `CheckSignatureFrom` refused:
/// `UnknownAuthorityError` with the `ConstraintViolationError` hint and the refused
/// certificate's name (its CN, else its first O, else `serial:<decimal>`).
fn cannot_sign(issuer: &[u8]) -> Error {
    err(format!(
        "x509: certificate signed by unknown authority (possibly because of \
         \"x509: invalid signature: parent certificate cannot sign this kind of certificate\" \
         while trying to verify candidate authority certificate {})",
        crate::jwt::go_quote(&hint_name(issuer))
    ))
}

/// The name Go's `UnknownAuthorityError` gives a candidate issuer: `Subject.CommonName` (the
/// last CN), else `Subject.Organization[0]`, else `serial:` and the serial in decimal.
fn hint_name(cert: &[u8]) -> String {
    let mut cn = None;
    let mut first_o = None;
    if let Some(view) = der::tbs_view(cert) {
        let _ = der::for_each_attribute(view.subject, |oid, value| {
            let text = || match subject::asn1_string(value) {
                Some(Ok(s)) => s.into_owned(),
                _ => String::new(),
            };
            if oid == subject::OID_CN {
                cn = Some(text());
            } else if oid == subject::OID_O && first_o.is_none() {
                first_o = Some(text());
            }
        });
    }
    match (cn, first_o) {
        (Some(cn), _) if !cn.is_empty() => cn,
        (_, Some(o)) => o,
        _ => {
            let serial = x509_parser::parse_x509_certificate(cert)
                .map(|(_, c)| c.tbs_certificate.raw_serial().to_vec())
                .unwrap_or_default();
            if serial.len() > MAX_IDENTIFIER_BYTES {
                format!("serial:<{}-byte serial>", serial.len())
            } else {
                format!("serial:{}", signed_decimal(&serial))
            }
        }
    }
}

/// The presented intermediate webpki refused as an issuer (`EndEntityUsedAsCa`: no
/// basicConstraints or cA=FALSE), for Go's hint: the first that Go's `CheckSignatureFrom`
/// refuses and whose name is the issuer of the leaf, else of another presented certificate.
fn refused_intermediate<'c>(
    leaf: &der::TbsView<'_>,
    chain: &'c [CertificateDer<'_>],
) -> Option<&'c [u8]> {
    let refused: Vec<(&[u8], der::TbsView<'_>)> = chain[1..]
        .iter()
        .filter(|c| {
            !der::issuer_facts(c)
                .unwrap_or(der::IssuerFacts::UNREADABLE)
                .may_sign_certificates()
        })
        .filter_map(|c| Some((c.as_ref(), der::tbs_view(c)?)))
        .collect();
    let issuers = std::iter::once(leaf.issuer).chain(
        chain[1..]
            .iter()
            .filter_map(|c| der::tbs_view(c).map(|v| v.issuer)),
    );
    for issuer in issuers {
        if let Some((cert, _)) = refused.iter().find(|(_, v)| v.subject == issuer) {
            return Some(cert);
        }
    }
    None
}

/// Go parses every certificate the client presents, and fails on one it cannot parse, even
/// an intermediate the path does not need (webpki skips those). Checked here with our own
/// reader: the leaf's subject and issuer names, and each intermediate's structure and names;
/// then every certificate with Go's
/// `x509.ParseCertificate` checks ([`go_parse::go_parses_certificate`]), which a chain handed
/// to the library directly (not through our TLS stack, whose handshake already refuses such a
/// certificate) has not been through. Go's error has no authenticator text of its own (its
/// TLS server fails the handshake: `tls: failed to parse client certificate: <error>`), so
/// it is wrapped: `x509: malformed certificate: <Go's error>` for the leaf,
/// `x509: malformed intermediate certificate: <Go's error>` for an intermediate. Runs on a
/// cache miss only (once per connection, authenticator and CA bundle while the outcome
/// holds). Bounded: at most [`MAX_CHAIN_LEN`] certificates of at most [`MAX_CERT_LEN`]
/// bytes, checked before this runs.
fn check_presented_names(
    leaf_der: &[u8],
    leaf: &der::TbsView<'_>,
    intermediates: &[CertificateDer<'_>],
) -> Result<(), Error> {
    // The leaf's subject with the texts its user's reading has (only what Go's parser
    // refuses; our own refusals come after verification, as before).
    subject::subject_of_view(leaf)?;
    subject::check_name(leaf.issuer)?;
    for cert in intermediates {
        let view = der::tbs_view(cert).ok_or(ERR_MALFORMED_INTERMEDIATE)?;
        subject::check_name(view.subject)?;
        subject::check_name(view.issuer)?;
    }
    go_parse::go_parses_certificate(leaf_der)
        .map_err(|e| err(format!("x509: malformed certificate: {e}")))?;
    for cert in intermediates {
        go_parse::go_parses_certificate(cert)
            .map_err(|e| err(format!("x509: malformed intermediate certificate: {e}")))?;
    }
    Ok(())
}

const ERR_MALFORMED_INTERMEDIATE: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: malformed intermediate certificate",
);

/// Go's `checkChainForKeyUsage` on the one-certificate chain of a pinned leaf: no extended
/// key usage, `anyExtendedKeyUsage`, or the usage (read as Go reads it).
fn pinned_leaf_ok(facts: &der::IssuerFacts, usage: KeyUsage) -> bool {
    match facts.eku {
        None => true,
        Some(eku) => {
            eku.any
                || match usage {
                    KeyUsage::ClientAuth => eku.client_auth,
                    KeyUsage::ServerAuth => eku.server_auth,
                }
        }
    }
}

/// webpki's time: whole seconds, rounded down (webpki's own validity checks are therefore
/// exact for notBefore only; `check_path` checks intermediates' notAfter to the nanosecond).
fn unix(t: Moment) -> UnixTime {
    UnixTime::since_unix_epoch(std::time::Duration::from_secs(t.secs.max(0) as u64))
}

const ERR_MALFORMED: Error =
    Error::from_static(ErrorKind::InvalidCredential, "x509: malformed certificate");
const ERR_UNHANDLED_CRITICAL: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: unhandled critical extension",
);
const ERR_KEY_USAGE: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: certificate specifies an incompatible key usage",
);

/// Go's `isValid` validity check: `now.Before(NotBefore)`, `now.After(NotAfter)` to the
/// nanosecond; the text shows `now` in RFC 3339 (whole seconds), as Go's does.
fn check_validity(nb: i64, na: i64, now: Moment) -> Result<(), Error> {
    if now.is_before(nb) {
        return Err(err(format!(
            "x509: certificate has expired or is not yet valid: current time {} is before {}",
            der::rfc3339(now.secs),
            der::rfc3339(nb)
        )));
    }
    if now.is_after(na) {
        return Err(err(format!(
            "x509: certificate has expired or is not yet valid: current time {} is after {}",
            der::rfc3339(now.secs),
            der::rfc3339(na)
        )));
    }
    Ok(())
}

/// Go's message for a webpki error, where Go has an equivalent.
fn map_error(e: &webpki::Error) -> Error {
    use webpki::Error as W;
    let secs = |t: &UnixTime| t.as_secs() as i64;
    match e {
        // `EndEntityUsedAsCa` is named by `verify_chain_with_view` (Go's hint); unnamed, it
        // is Go's error without the hint.
        W::UnknownIssuer | W::EndEntityUsedAsCa => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: certificate signed by unknown authority",
        ),
        W::CertExpired { time, not_after } => err(format!(
            "x509: certificate has expired or is not yet valid: current time {} is after {}",
            der::rfc3339(secs(time)),
            der::rfc3339(secs(not_after))
        )),
        W::CertNotValidYet { time, not_before } => err(format!(
            "x509: certificate has expired or is not yet valid: current time {} is before {}",
            der::rfc3339(secs(time)),
            der::rfc3339(secs(not_before))
        )),
        W::RequiredEkuNotFoundContext(_) | W::EmptyEkuExtension => ERR_KEY_USAGE,
        W::UnsupportedCriticalExtension => ERR_UNHANDLED_CRITICAL,
        W::CaUsedAsEndEntity => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: a CA certificate (basicConstraints cA=TRUE) cannot be used as a client certificate",
        ),
        W::UnsupportedCertVersion => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: only X.509 v3 client and intermediate certificates are supported",
        ),
        W::PathLenConstraintViolated => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: too many intermediates for path length constraint",
        ),
        W::NameConstraintViolation => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: a certificate violates its issuer's name constraints",
        ),
        // webpki's stricter DNS name syntax, checked only against name constraints here (Go
        // accepts what `domainNameValid` accepts, `10.0.0.1` say).
        W::MalformedDnsIdentifier => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: a certificate's DNS name cannot be checked against its issuer's name constraints",
        ),
        W::MaximumPathDepthExceeded
        | W::MaximumSignatureChecksExceeded
        | W::MaximumPathBuildCallsExceeded
        | W::MaximumNameConstraintComparisonsExceeded => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: certificate chain too complex to verify",
        ),
        W::InvalidSignatureForPublicKey => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: certificate signature is invalid, or the issuer's key is not accepted (RSA keys must be 2048 to 8192 bits)",
        ),
        // Accepted (`anchor_keys::ALGS`): RSA PKCS#1 v1.5 and PSS with SHA-256/384/512,
        // ECDSA P-256 and P-384 with SHA-256/384, P-521 with SHA-256/384/512, Ed25519. Go
        // also takes ECDSA P-256/P-384 with SHA-512 and P-224 keys: the texts say what was
        // refused, not a cause it may not have.
        W::UnsupportedSignatureAlgorithmContext(_) => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: unsupported signature algorithm (accepted: RSA PKCS#1 v1.5 or PSS with \
             SHA-256, SHA-384 or SHA-512, ECDSA with SHA-256, SHA-384 or SHA-512, Ed25519)",
        ),
        W::UnsupportedSignatureAlgorithmForPublicKeyContext(_) => Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: unsupported combination of signature algorithm and issuer key (ECDSA: P-256 \
             and P-384 with SHA-256 or SHA-384, P-521 with SHA-256, SHA-384 or SHA-512; no \
             other curve)",
        ),
        W::BadDer | W::BadDerTime | W::TrailingData(_) | W::MalformedExtensions => ERR_MALFORMED,
        other => err(format!("x509: certificate verification failed: {other:?}")),
    }
}

/// How many bytes of a serial number or key identifier the error text renders. RFC 5280
/// serials are at most 20 bytes and key identifiers are usually 20: anything longer is an
/// attacker's (a self-signed client certificate can carry a 64 KiB serial), and rendering it
/// would cost quadratic time (decimal) and put kilobytes into every error and log line.
pub(crate) const MAX_IDENTIFIER_BYTES: usize = 64;

/// Go's `certificateIdentifier`: `SN=<decimal serial>, SKID=<HEX:..>, AKID=<HEX:..>`. A serial
/// longer than [`MAX_IDENTIFIER_BYTES`] is shown as `<N-byte serial>` and a longer key
/// identifier is cut there, marked `…(N bytes)` (Go prints them whole).
pub(crate) fn certificate_identifier(der: &[u8]) -> String {
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
        return "SN=<nil>, SKID=, AKID=".to_owned();
    };
    let raw_serial = cert.tbs_certificate.raw_serial();
    let serial = if raw_serial.len() > MAX_IDENTIFIER_BYTES {
        format!("<{}-byte serial>", raw_serial.len())
    } else {
        signed_decimal(raw_serial)
    };
    let mut skid = String::new();
    let mut akid = String::new();
    for ext in cert.extensions() {
        match ext.parsed_extension() {
            x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(k) => {
                skid = hex_colon(k.0)
            }
            x509_parser::extensions::ParsedExtension::AuthorityKeyIdentifier(a) => {
                if let Some(k) = &a.key_identifier {
                    akid = hex_colon(k.0)
                }
            }
            _ => {}
        }
    }
    format!("SN={serial}, SKID={skid}, AKID={akid}")
}

fn hex_colon(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let shown = &bytes[..bytes.len().min(MAX_IDENTIFIER_BYTES)];
    let mut s = String::with_capacity(shown.len() * 3 + 16);
    for (i, b) in shown.iter().enumerate() {
        if i > 0 {
            s.push(':');
        }
        let _ = write!(s, "{b:02X}");
    }
    if shown.len() < bytes.len() {
        let _ = write!(s, "…({} bytes)", bytes.len());
    }
    s
}

/// The decimal text of a two's-complement big-endian integer (Go's `big.Int` of a serial).
pub(crate) fn signed_decimal(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "0".into();
    }
    let negative = bytes[0] & 0x80 != 0;
    let mut mag: Vec<u8> = if negative {
        // magnitude = two's complement negation
        let mut v: Vec<u8> = bytes.iter().map(|b| !b).collect();
        for b in v.iter_mut().rev() {
            let (r, carry) = b.overflowing_add(1);
            *b = r;
            if !carry {
                break;
            }
        }
        v
    } else {
        bytes.to_vec()
    };
    let mut digits = Vec::new();
    while mag.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in mag.iter_mut() {
            let cur = (rem << 8) | *b as u32;
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    if negative {
        digits.push(b'-');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_numbers_render_like_go_big_int() {
        let cases: &[(&[u8], &str)] = &[
            (&[0x01], "1"),
            (&[0x00, 0xff], "255"),
            (&[0xff], "-1"),
            (&[0x80], "-128"),
            (&[0x7f, 0xff], "32767"),
            (
                // 654708847004117259890317394342561449606220871090 (the k8s selfSignedCert)
                &[
                    0x72, 0xae, 0x28, 0xf9, 0xb7, 0x7f, 0x16, 0x0a, 0x89, 0xa7, 0x9c, 0xa1, 0xa3,
                    0x88, 0x15, 0x4b, 0x20, 0xeb, 0xf5, 0xb2,
                ],
                "654708847004117259890317394342561449606220871090",
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(signed_decimal(bytes), *want);
        }
    }

    #[test]
    fn key_ids_render_upper_hex_with_colons() {
        assert_eq!(hex_colon(&[0x48, 0x70, 0x75, 0xd4]), "48:70:75:D4");
        assert_eq!(hex_colon(&[]), "");
        // Longer than MAX_IDENTIFIER_BYTES: cut, with the length.
        let long = hex_colon(&[0xab; 1000]);
        assert!(long.starts_with("AB:AB:"), "{long}");
        assert!(long.ends_with("AB…(1000 bytes)"), "{long}");
        assert_eq!(long.matches("AB").count(), MAX_IDENTIFIER_BYTES);
    }

    /// A self-signed client certificate may carry a 60 KB serial (webpki and x509-parser do
    /// not bound it): the error text must not render it in quadratic time, nor whole.
    #[test]
    fn an_attackers_huge_serial_is_named_in_bounded_time_and_size() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["x".into()]).unwrap();
        params.serial_number = Some(rcgen::SerialNumber::from(vec![0x7f; 60_000]));
        let der = params.self_signed(&key).unwrap().der().to_vec();
        let started = std::time::Instant::now();
        let id = certificate_identifier(&der);
        let took = started.elapsed();
        assert!(id.starts_with("SN=<60000-byte serial>, SKID="), "{id:.200}");
        assert!(id.len() < 1024, "{} bytes", id.len());
        // Rendering 60 KB in decimal took seconds; the bounded form takes microseconds
        // (the bound leaves room for a slow, shared CI machine).
        assert!(took < std::time::Duration::from_millis(200), "{took:?}");
        // At the bound the serial is still rendered exactly, as Go's big.Int does.
        let mut at_bound = vec![0u8; MAX_IDENTIFIER_BYTES];
        at_bound[MAX_IDENTIFIER_BYTES - 1] = 7;
        params.serial_number = Some(rcgen::SerialNumber::from(at_bound));
        let der = params.self_signed(&key).unwrap().der().to_vec();
        assert!(certificate_identifier(&der).starts_with("SN=7, "));
    }
}
