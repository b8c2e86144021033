//! CA bundles: PEM parsing with client-go's rules, and the parsed trust anchors.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use rustls_pki_types::{CertificateDer, TrustAnchor};

use super::anchor_keys::AnchorKeys;
use super::{der, subject};
use crate::error::ConfigError;
use crate::jwt::go_quote;

/// The largest CA bundle file read (4 MiB): Kubernetes bundles are a few kilobytes.
///
/// ```
/// use kube_authn::x509::{MAX_BUNDLE_BYTES, X509Authenticator};
/// assert_eq!(MAX_BUNDLE_BYTES, 4 * 1024 * 1024);
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("ca.pem");
/// let mut pem = kube_authn::x509::doc_ca_pem().to_owned();
/// pem.push_str(&"\n".repeat(MAX_BUNDLE_BYTES as usize));
/// std::fs::write(&path, pem).unwrap();
/// let err = X509Authenticator::from_ca_file(&path).unwrap_err();
/// assert!(err.to_string().ends_with("is larger than the limit of 4194304 bytes"), "{err}");
/// ```
pub const MAX_BUNDLE_BYTES: u64 = 4 << 20;
/// The most certificates one bundle may hold.
///
/// ```
/// use kube_authn::x509::{MAX_BUNDLE_CERTS, parse_pem_bundle};
/// assert_eq!(MAX_BUNDLE_CERTS, 1000);
/// let one = kube_authn::x509::doc_ca_pem();
/// assert_eq!(parse_pem_bundle(one.repeat(MAX_BUNDLE_CERTS).as_bytes()).unwrap().len(), 1000);
/// let err = parse_pem_bundle(one.repeat(MAX_BUNDLE_CERTS + 1).as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "CA bundle holds more than 1000 certificates");
/// ```
pub const MAX_BUNDLE_CERTS: usize = 1000;

static GENERATION: AtomicU64 = AtomicU64::new(1);

/// A fresh, process-unique number (bundle generations, authenticator ids).
pub(crate) fn next_id() -> u64 {
    GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// The certificates in a PEM bundle, with client-go's `ParseCertsPEM` rules: blocks are read in
/// order, blocks that are not `CERTIFICATE` or that carry PEM headers are skipped, text between
/// blocks is ignored, a block `pem.Decode` does not take (its base64 does not decode as Go's
/// `StdEncoding` decodes it, its END line is not Go's, ...) is skipped, a certificate that does
/// not parse aborts, and no certificate at all is the error
/// `data does not contain any valid RSA or ECDSA certificates`.
///
/// ```
/// use kube_authn::x509::parse_pem_bundle;
/// let err = parse_pem_bundle(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").unwrap_err();
/// assert_eq!(err.to_string(), "data does not contain any valid RSA or ECDSA certificates");
/// ```
pub fn parse_pem_bundle(data: &[u8]) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let mut certs = Vec::new();
    for block in PemBlocks(data) {
        if block.label != b"CERTIFICATE" || block.has_headers {
            continue;
        }
        let der = block.bytes;
        // Every certificate must parse as Go parses it (client-go's ParseCertsPEM returns
        // x509.ParseCertificate's error as it is), and as x509-parser, which reads it later.
        super::go_parse::go_parses_certificate(&der).map_err(ConfigError::new)?;
        x509_parser::parse_x509_certificate(&der)
            .map_err(|e| ConfigError::new(format!("x509: malformed certificate: {e}")))?;
        if !subject::names_decode(&der) {
            return Err(ConfigError::new(
                "x509: malformed certificate: invalid RDNSequence: invalid attribute value",
            ));
        }
        if certs.len() == MAX_BUNDLE_CERTS {
            return Err(ConfigError::new(format!(
                "CA bundle holds more than {MAX_BUNDLE_CERTS} certificates"
            )));
        }
        certs.push(CertificateDer::from(der));
    }
    if certs.is_empty() {
        return Err(ConfigError::new(
            "data does not contain any valid RSA or ECDSA certificates",
        ));
    }
    Ok(certs)
}

/// One block Go's `pem.Decode` returns.
pub(crate) struct PemBlock<'a> {
    /// The type: the BEGIN line after `-----BEGIN ` up to its closing `-----`.
    pub(crate) label: &'a [u8],
    /// Whether Go's `Block.Headers` is not empty (a `key: value` line after the BEGIN line).
    pub(crate) has_headers: bool,
    /// The decoded body (`Block.Bytes`).
    pub(crate) bytes: Vec<u8>,
}

/// Iterates the blocks of Go's `pem.Decode` called in a loop until it finds none, as
/// client-go's `cert.ParseCertsPEM` and `keyutil.ParsePublicKeysPEM` and Go's
/// `CertPool.AppendCertsFromPEM` call it (checked against Go on the vectors of
/// `tests/vectors/go_pem.json`).
pub(crate) struct PemBlocks<'a>(pub(crate) &'a [u8]);

impl<'a> Iterator for PemBlocks<'a> {
    type Item = PemBlock<'a>;

    fn next(&mut self) -> Option<PemBlock<'a>> {
        let (block, rest) = pem_decode(self.0);
        self.0 = rest;
        block
    }
}

const PEM_START: &[u8] = b"\n-----BEGIN ";
const PEM_END: &[u8] = b"\n-----END ";
const PEM_END_OF_LINE: &[u8] = b"-----";

/// Go's `getLine`: the first line (up to `\n`, a `\r` before it dropped), spaces and tabs
/// trimmed on its right; the rest after the `\n`; the bytes consumed.
fn get_line(data: &[u8]) -> (&[u8], &[u8], usize) {
    let (line, next) = match memchr::memchr(b'\n', data) {
        Some(i) => {
            let line = &data[..i];
            (line.strip_suffix(b"\r").unwrap_or(line), i + 1)
        }
        None => (data, data.len()),
    };
    let keep = line.len()
        - line
            .iter()
            .rev()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
    (&line[..keep], &data[next..], next)
}

/// Go's `base64.StdEncoding.Decode` (padding required, non-zero trailing bits accepted, `\r`
/// and `\n` skipped anywhere) of a PEM body after `removeSpacesAndTabs`: spaces, tabs, `\r`
/// and `\n` are dropped, every other byte must be base64.
fn go_pem_base64(body: &[u8]) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const GO_STD_ENCODING: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    let text: Vec<u8> = body
        .iter()
        .copied()
        .filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .collect();
    GO_STD_ENCODING.decode(text).ok()
}

/// Go's `pem.Decode` (encoding/pem, Go 1.26): the next block and the rest of the input after
/// it, or no block and the whole input. The first `\n-----END ` is found, then the last
/// `-----BEGIN ` before it (at the start of the input or of a line: a BEGIN without an END
/// before a complete block is passed over); the BEGIN line must end in `-----` (spaces and
/// tabs after it allowed); `key: value` lines that follow are headers (a blank line or the END
/// line must come after them); the END line must be `-----END <type>-----` at the start of a
/// line, only spaces and tabs after it; the body is base64 with spaces, tabs and line breaks
/// anywhere. A block failing any of these is passed over and the search goes on after its
/// `-----END `; running out of input while reading headers ends the search.
pub(crate) fn pem_decode(data: &[u8]) -> (Option<PemBlock<'_>>, &[u8]) {
    let mut rest = data;
    // Where the next attempt starts in `rest`; signed as in Go, where the header lines may
    // run past the END line.
    let mut end_trailer_index: isize = 0;
    loop {
        let Some(skip) = usize::try_from(end_trailer_index)
            .ok()
            .filter(|&i| i <= rest.len())
        else {
            return (None, data);
        };
        rest = &rest[skip..];
        let Some(end_at) = memchr::memmem::find(rest, PEM_END) else {
            return (None, data);
        };
        let mut end_index = end_at as isize;
        end_trailer_index = end_index + PEM_END.len() as isize;
        let Some(begin_index) = memchr::memmem::rfind(&rest[..end_at], &PEM_START[1..]) else {
            continue;
        };
        if begin_index > 0 && rest[begin_index - 1] != b'\n' {
            continue;
        }
        let skip = begin_index + PEM_START.len() - 1;
        rest = &rest[skip..];
        end_index -= skip as isize;
        end_trailer_index -= skip as isize;

        let (type_line, next, consumed) = get_line(rest);
        rest = next;
        end_index -= consumed as isize;
        end_trailer_index -= consumed as isize;
        let Some(label) = type_line.strip_suffix(PEM_END_OF_LINE) else {
            continue;
        };

        let mut has_headers = false;
        loop {
            if rest.is_empty() {
                return (None, data);
            }
            let (line, next, consumed) = get_line(rest);
            if !line.contains(&b':') {
                break;
            }
            has_headers = true;
            rest = next;
            end_index -= consumed as isize;
            end_trailer_index -= consumed as isize;
        }
        // Headers need a line break between them and the END line.
        if has_headers && end_index < 0 {
            continue;
        }

        // `-----END ` is followed by the same type, five dashes, and only spaces and tabs.
        let Some(end_trailer) = usize::try_from(end_trailer_index)
            .ok()
            .and_then(|i| rest.get(i..))
        else {
            return (None, data);
        };
        let trailer_len = label.len() + PEM_END_OF_LINE.len();
        if end_trailer.len() < trailer_len {
            continue;
        }
        let (trailer, rest_of_end_line) = end_trailer.split_at(trailer_len);
        if !trailer.starts_with(label) || !trailer.ends_with(PEM_END_OF_LINE) {
            continue;
        }
        if !get_line(rest_of_end_line).0.is_empty() {
            continue;
        }

        let mut bytes = Vec::new();
        if end_index > 0 {
            match go_pem_base64(&rest[..end_index as usize]) {
                Some(b) => bytes = b,
                None => continue,
            }
        }
        // An empty body: `end_index` is -1, the END line's `\n` being the BEGIN line's.
        let Some(after_end) = usize::try_from(end_index + PEM_END.len() as isize - 1)
            .ok()
            .and_then(|i| rest.get(i..))
        else {
            return (None, data);
        };
        let (_, rest, _) = get_line(after_end);
        return (
            Some(PemBlock {
                label,
                has_headers,
                bytes,
            }),
            rest,
        );
    }
}

/// A parsed CA bundle: trust anchors for rustls-webpki plus what webpki does not keep (the
/// roots' validity, their DER for the pinned-leaf rule). Immutable; a reload builds a new one
/// with a new [`generation`](CaBundle::generation).
///
/// ```
/// use kube_authn::x509::{CaBundle, X509Authenticator, doc_ca_pem};
/// let bundle = CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap();
/// assert_eq!(bundle.certificates().len(), 1);
/// assert!(bundle.overlaps(&CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap()));
/// assert!(format!("{bundle:?}").starts_with("CaBundle { certificates: 1"));
/// let auth = X509Authenticator::new(bundle);
/// assert_eq!(auth.bundle().certificates().len(), 1);
/// ```
pub struct CaBundle {
    pub(crate) anchors: Vec<TrustAnchor<'static>>,
    /// `(not_before, not_after)` of each anchor, Unix seconds.
    pub(crate) validity: Vec<(i64, i64)>,
    /// Each root's basicConstraints pathLenConstraint, read as Go reads it (webpki does not
    /// apply a trust anchor's constraints; Go does).
    pub(crate) max_path_len: Vec<Option<u64>>,
    /// Each root's extendedKeyUsage (webpki keeps none for a trust anchor; Go's
    /// `checkChainForKeyUsage` checks the root too).
    pub(crate) root_eku: Vec<RootEku>,
    /// What Go's `CheckSignatureFrom` and `isValid` read from each root (webpki reads neither
    /// a trust anchor's basicConstraints and keyUsage nor its critical extensions). Checked
    /// when a path is verified, as Go does: Go loads such a root and refuses the chains
    /// through it.
    pub(crate) root_facts: Vec<der::IssuerFacts>,
    /// Whether each root has a nameConstraints extension (Go's `hasNameConstraints`): all that
    /// Go's `checkChainConstraints` pre-pass reads of a root (a root's own subjectAltName is
    /// never checked, nothing lies above it). Read once here, not for every candidate path;
    /// `false` for a root that `policy::ChainCert::read` cannot read, as before.
    pub(crate) root_name_constraints: Vec<bool>,
    pub(crate) ders: Vec<CertificateDer<'static>>,
    /// The anchors' public keys, parsed once (see `anchor_keys`).
    pub(crate) keys: AnchorKeys,
    generation: u64,
}

impl std::fmt::Debug for CaBundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaBundle")
            .field("certificates", &self.ders.len())
            .field("generation", &self.generation)
            .finish()
    }
}

/// A root's extendedKeyUsage, as Go reads it for the chain check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RootEku {
    /// The extension is present (absent: any usage).
    pub(crate) present: bool,
    /// `anyExtendedKeyUsage`.
    pub(crate) any: bool,
    /// `clientAuth`.
    pub(crate) client_auth: bool,
    /// `serverAuth`.
    pub(crate) server_auth: bool,
}

impl RootEku {
    /// Read as Go reads it ([`der::issuer_facts`]); a root that reader cannot walk has no
    /// usage at all (fail closed; Go's parser, run on every root at load, refuses what that
    /// reader cannot walk).
    fn of(facts: Option<&der::IssuerFacts>) -> Self {
        match facts {
            Some(der::IssuerFacts { eku: None, .. }) => RootEku::default(),
            Some(der::IssuerFacts { eku: Some(eku), .. }) => RootEku {
                present: true,
                any: eku.any,
                client_auth: eku.client_auth,
                server_auth: eku.server_auth,
            },
            None => RootEku {
                present: true,
                ..RootEku::default()
            },
        }
    }

    /// Go's rule for one certificate of the chain: no EKU, `anyExtendedKeyUsage`, or the usage.
    pub(crate) fn allows(self, client_auth: bool) -> bool {
        !self.present
            || self.any
            || if client_auth {
                self.client_auth
            } else {
                self.server_auth
            }
    }
}

impl CaBundle {
    /// Parses a PEM bundle (see [`parse_pem_bundle`]). A certificate that cannot serve as a
    /// trust anchor is an error. No bytes at all is `missing content for CA bundle` (Go's
    /// `newCABundleAndVerifier`); white space only is the parse error, as in Go.
    ///
    /// ```
    /// use kube_authn::x509::CaBundle;
    /// assert_eq!(CaBundle::from_pem(b"").unwrap_err().to_string(), "missing content for CA bundle");
    /// assert_eq!(
    ///     CaBundle::from_pem(b" \n").unwrap_err().to_string(),
    ///     "data does not contain any valid RSA or ECDSA certificates"
    /// );
    /// ```
    pub fn from_pem(pem: &[u8]) -> Result<Self, ConfigError> {
        if pem.is_empty() {
            return Err(ConfigError::new("missing content for CA bundle"));
        }
        Self::from_der(parse_pem_bundle(pem)?)
    }

    /// Builds a bundle from DER certificates. A certificate Go's `x509.ParseCertificate`
    /// refuses is an error with Go's text, as from PEM.
    ///
    /// ```
    /// use kube_authn::x509::CaBundle;
    /// assert!(CaBundle::from_der(vec![]).is_err());
    /// ```
    pub fn from_der(certs: Vec<CertificateDer<'static>>) -> Result<Self, ConfigError> {
        if certs.is_empty() {
            return Err(ConfigError::new(
                "data does not contain any valid RSA or ECDSA certificates",
            ));
        }
        let mut anchors = Vec::with_capacity(certs.len());
        let mut validity = Vec::with_capacity(certs.len());
        let mut max_path_len = Vec::with_capacity(certs.len());
        let mut root_eku = Vec::with_capacity(certs.len());
        let mut root_facts = Vec::with_capacity(certs.len());
        let mut root_name_constraints = Vec::with_capacity(certs.len());
        for cert in &certs {
            // As from PEM: a root Go's x509.ParseCertificate refuses is not loaded.
            super::go_parse::go_parses_certificate(cert).map_err(ConfigError::new)?;
            let anchor = webpki::anchor_from_trusted_cert(cert)
                .map_err(|e| ConfigError::new(format!("x509: unusable CA certificate: {e:?}")))?
                .to_owned();
            let view = der::tbs_view(cert)
                .ok_or_else(|| ConfigError::new("x509: malformed CA certificate validity"))?;
            anchors.push(anchor);
            validity.push((view.not_before, view.not_after));
            let facts = der::issuer_facts(cert);
            root_eku.push(RootEku::of(facts.as_ref()));
            let facts = facts.unwrap_or(der::IssuerFacts::UNREADABLE);
            // Go's `isValid` applies a pathLenConstraint whether or not cA is set (a root
            // with cA=FALSE signs nothing anyway).
            max_path_len.push(facts.max_path_len);
            root_facts.push(facts);
            root_name_constraints.push(
                super::policy::ChainCert::read(cert.as_ref())
                    .is_some_and(|c| c.names.name_constraints),
            );
        }
        Ok(Self {
            keys: AnchorKeys::new(&anchors),
            anchors,
            validity,
            max_path_len,
            root_eku,
            root_facts,
            root_name_constraints,
            ders: certs,
            generation: next_id(),
        })
    }

    /// A process-unique number identifying this parsed bundle (per-connection caches are keyed
    /// by it, so a reload invalidates them).
    ///
    /// ```
    /// # let pem = kube_authn::x509::doc_ca_pem();
    /// let a = kube_authn::x509::CaBundle::from_pem(pem.as_bytes()).unwrap();
    /// let b = kube_authn::x509::CaBundle::from_pem(pem.as_bytes()).unwrap();
    /// assert_ne!(a.generation(), b.generation());
    /// ```
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The certificates, in file order.
    ///
    /// ```
    /// # let pem = kube_authn::x509::doc_ca_pem();
    /// let a = kube_authn::x509::CaBundle::from_pem(pem.as_bytes()).unwrap();
    /// assert_eq!(a.certificates().len(), 1);
    /// ```
    pub fn certificates(&self) -> &[CertificateDer<'static>] {
        &self.ders
    }

    /// The subjects of the certificates (DER content of the `Name` SEQUENCE, without its tag and
    /// length, as webpki stores them): the acceptable-CA hint list a TLS server sends.
    ///
    /// ```
    /// # let pem = kube_authn::x509::doc_ca_pem();
    /// let a = kube_authn::x509::CaBundle::from_pem(pem.as_bytes()).unwrap();
    /// assert_eq!(a.subjects().count(), 1);
    /// ```
    pub fn subjects(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.anchors.iter().map(|a| a.subject.as_ref())
    }

    /// Whether a CA of `self` is also one of `other`: the same certificate (same DER), or a
    /// copy of it with the same subject and public key (renewed or reissued: another serial,
    /// validity or extensions), under which every certificate the CA issued verifies just the
    /// same. kube-apiserver compares the DER only; a renewed copy of the client CA in the
    /// request-header bundle slipped through that check.
    ///
    /// ```
    /// # let pem = kube_authn::x509::doc_ca_pem();
    /// let a = kube_authn::x509::CaBundle::from_pem(pem.as_bytes()).unwrap();
    /// assert!(a.overlaps(&a));
    /// ```
    pub fn overlaps(&self, other: &CaBundle) -> bool {
        self.ders.iter().any(|d| other.ders.contains(d))
            || other
                .anchors
                .iter()
                .any(|b| self.has_ca(&b.subject, &b.subject_public_key_info))
    }

    /// Whether a CA of this bundle has this subject and public key (DER contents).
    fn has_ca(&self, subject: &[u8], spki: &[u8]) -> bool {
        self.anchors
            .iter()
            .any(|a| a.subject.as_ref() == subject && a.subject_public_key_info.as_ref() == spki)
    }

    /// The (subject, public key) of each CA, what [`overlaps`](Self::overlaps) compares.
    fn ca_ids(&self) -> Vec<CaId> {
        self.anchors
            .iter()
            .map(|a| {
                (
                    a.subject.as_ref().into(),
                    a.subject_public_key_info.as_ref().into(),
                )
            })
            .collect()
    }
}

/// A CA bundle as it is now: a fixed one, or one reloaded from its file. The TLS handshake's
/// list of acceptable client CAs follows such sources (`tls::DynamicServerConfig`), as
/// kube-apiserver's follows its dynamic client-CA content.
///
/// ```
/// use std::sync::Arc;
/// use kube_authn::x509::{CaBundle, CaBundleSource, X509Authenticator, doc_ca_pem};
/// let bundle = Arc::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
/// assert_eq!(bundle.current_bundle().generation(), bundle.generation());
/// // An authenticator's bundle (reloaded when it came from a file).
/// let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
/// let sources: Vec<Arc<dyn CaBundleSource>> = vec![Arc::new(auth), Arc::new(bundle)];
/// assert_eq!(sources[0].current_bundle().certificates().len(), 1);
/// ```
pub trait CaBundleSource: Send + Sync + std::fmt::Debug {
    /// The bundle now (an atomic load; never blocks).
    ///
    /// ```
    /// use kube_authn::x509::{CaBundle, CaBundleSource, doc_ca_pem};
    /// let bundle = std::sync::Arc::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
    /// assert_eq!(bundle.current_bundle().certificates().len(), 1);
    /// ```
    fn current_bundle(&self) -> Arc<CaBundle>;

    /// The [`generation`](CaBundle::generation) of the bundle now: what a caller that only
    /// asks whether the bundle changed reads, once per TLS handshake. The default takes the
    /// bundle ([`current_bundle`](Self::current_bundle): a reference count on the shared
    /// bundle, taken and dropped); a fixed bundle, a [`FileReloader`](crate::reload::FileReloader),
    /// an [`X509Authenticator`](super::X509Authenticator) and a
    /// [`FrontProxy`](crate::request::FrontProxy) read it without one (a lock-free `ArcSwap`
    /// guard at most).
    ///
    /// ```
    /// use kube_authn::request::{FrontProxy, RequestHeaderConfig};
    /// use kube_authn::x509::{CaBundle, CaBundleSource, X509Authenticator, doc_ca_pem};
    /// let auth = X509Authenticator::new(CaBundle::from_pem(doc_ca_pem().as_bytes()).unwrap());
    /// assert_eq!(CaBundleSource::generation(&auth), auth.bundle().generation());
    /// let proxy = FrontProxy::new(RequestHeaderConfig {
    ///     client_ca_pem: Some(doc_ca_pem().into()),
    ///     ..RequestHeaderConfig::standard()
    /// })
    /// .unwrap();
    /// assert_eq!(CaBundleSource::generation(&proxy), proxy.bundle().generation());
    /// ```
    fn generation(&self) -> u64 {
        self.current_bundle().generation()
    }
}

impl CaBundleSource for Arc<CaBundle> {
    fn current_bundle(&self) -> Arc<CaBundle> {
        self.clone()
    }

    fn generation(&self) -> u64 {
        CaBundle::generation(self)
    }
}

impl CaBundleSource for crate::reload::FileReloader<CaBundle> {
    fn current_bundle(&self) -> Arc<CaBundle> {
        self.current_arc()
    }

    fn generation(&self) -> u64 {
        CaBundle::generation(&self.current())
    }
}

impl CaBundleSource for super::X509Authenticator {
    fn current_bundle(&self) -> Arc<CaBundle> {
        self.bundle()
    }

    fn generation(&self) -> u64 {
        self.ca.generation()
    }
}

impl CaBundleSource for crate::request::FrontProxy {
    fn current_bundle(&self) -> Arc<CaBundle> {
        self.bundle()
    }

    fn generation(&self) -> u64 {
        self.ca_generation()
    }
}

/// The two bundles an [`OverlapGuard`] keeps apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CaRole {
    /// `--client-ca-file`.
    Client = 0,
    /// `--requestheader-client-ca-file`.
    RequestHeader = 1,
}

/// The subject and public key (DER contents) of a CA: what makes two certificates the same CA
/// for the overlap check.
type CaId = (Box<[u8]>, Box<[u8]>);

/// A bundle as it is now, read without keeping its reloader alive.
type LiveBundle = Box<dyn Fn() -> Option<Arc<CaBundle>> + Send + Sync>;

/// The start-up overlap check ([`RequestHeaderConfig::check_ca_overlap`], with empty
/// `--requestheader-allowed-names`) applied again whenever the client CA file or the
/// request-header CA file is reloaded: a version that would make the two overlap is refused
/// as a version that does not parse is (the previous bundle stays; an error is logged), but,
/// since the verdict depends on the other file too, the refused version is checked again at
/// the next poll after either bundle's reload went live (and at each full check, and when the
/// file changes). Armed once both bundles are loaded and the start-up check passed. The two
/// reloads check under one lock, each against the other bundle as it is now and as its last
/// accepted reload left it (which may not be swapped in yet), so two files changed at the same
/// moment cannot both pass. A reload is checked only once it is about to go live (after the
/// check that its file did not change while it was read): what the guard records always goes
/// live.
///
/// [`RequestHeaderConfig::check_ca_overlap`]: crate::request::RequestHeaderConfig::check_ca_overlap
#[derive(Default)]
pub(crate) struct OverlapGuard {
    armed: std::sync::Mutex<Option<Armed>>,
    /// How many reloads of either bundle went live: a refused version is checked again once
    /// it changed.
    epoch: std::sync::atomic::AtomicU64,
}

/// One role's reloads, as checked by an [`OverlapGuard`].
struct Guarded {
    guard: Arc<OverlapGuard>,
    role: CaRole,
    name: String,
}

impl crate::reload::Admit<CaBundle> for Guarded {
    fn admit(&self, value: &CaBundle) -> Result<(), ConfigError> {
        self.guard.admit(self.role, value, &self.name)
    }

    fn epoch(&self) -> u64 {
        self.guard.epoch.load(std::sync::atomic::Ordering::Acquire)
    }

    fn went_live(&self) {
        self.guard
            .epoch
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }
}

struct Armed {
    /// Each bundle as it is now, by [`CaRole`].
    live: [LiveBundle; 2],
    /// The CAs of each bundle's last reload this guard let through, by [`CaRole`].
    accepted: [Option<Vec<CaId>>; 2],
}

impl OverlapGuard {
    /// Starts checking reloads against `client` and `request_header` (each bundle as it is
    /// now).
    pub(crate) fn arm(&self, client: &CaSource, request_header: &CaSource) {
        *self.armed.lock().unwrap_or_else(|p| p.into_inner()) = Some(Armed {
            live: [client.live(), request_header.live()],
            accepted: [None, None],
        });
    }

    /// Lets `role`'s reloaded bundle `new` through, or refuses it for overlapping the other.
    fn admit(&self, role: CaRole, new: &CaBundle, name: &str) -> Result<(), ConfigError> {
        let mut armed = self.armed.lock().unwrap_or_else(|p| p.into_inner());
        let Some(armed) = armed.as_mut() else {
            return Ok(());
        };
        let other = 1 - role as usize;
        let pending = armed.accepted[other]
            .as_deref()
            .is_some_and(|ids| ids.iter().any(|(s, k)| new.has_ca(s, k)));
        if pending || (armed.live[other])().is_some_and(|now| new.overlaps(&now)) {
            tracing::error!(
                bundle = %go_quote(name),
                "the reloaded CA bundle overlaps the other of --client-ca-file and --requestheader-client-ca-file while --requestheader-allowed-names is empty; keeping the previous bundle"
            );
            return Err(ConfigError::new(crate::request::CA_OVERLAP));
        }
        armed.accepted[role as usize] = Some(new.ca_ids());
        Ok(())
    }
}

/// Where an authenticator gets its CA bundle: fixed, or a file reloaded on change.
#[derive(Clone)]
pub(crate) enum CaSource {
    Static(Arc<CaBundle>),
    File(crate::reload::FileReloader<CaBundle>),
}

impl CaSource {
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&CaBundle) -> R) -> R {
        match self {
            CaSource::Static(b) => f(b),
            CaSource::File(r) => f(&r.current()),
        }
    }

    /// The current bundle's generation, without taking a reference to it.
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.with(CaBundle::generation)
    }

    /// The bundle as it is now, read without keeping a reloader alive.
    fn live(&self) -> LiveBundle {
        match self {
            CaSource::Static(b) => {
                let b = b.clone();
                Box::new(move || Some(b.clone()))
            }
            CaSource::File(r) => Box::new(r.current_weak()),
        }
    }

    /// Loads the CA file `path` for `purpose` (`client-ca-bundle`, `request-header`) with the
    /// texts kube-apiserver prints through `NewDynamicCAContentFromFile`: the file's `open`
    /// error as Go prints it (`open <path>: no such file or directory`), `missing content for
    /// CA bundle "<purpose>::<path>"` for an empty file, `error loading CA bundle for
    /// "<purpose>::<path>": <parse error>` otherwise (white space only included). `guard`, if
    /// given, also checks every reload, as the bundle of that role.
    pub(crate) fn load_file(
        purpose: &str,
        path: &std::path::Path,
        guard: Option<(Arc<OverlapGuard>, CaRole)>,
    ) -> Result<crate::reload::FileReloader<CaBundle>, ConfigError> {
        let name = format!("{purpose}::{}", path.display());
        let name2 = name.clone();
        // Go's os.ReadFile error (the reloader words its own open and read errors as Go too; its
        // text is kept for what Go has no counterpart for: the size limit).
        go_open_error(path)?;
        let parse = move |bytes: &[u8]| {
            if bytes.is_empty() {
                return Err(ConfigError::new(format!(
                    "missing content for CA bundle {}",
                    go_quote(&name2)
                )));
            }
            CaBundle::from_pem(bytes).map_err(|e| {
                ConfigError::new(format!(
                    "error loading CA bundle for {}: {e}",
                    go_quote(&name2)
                ))
            })
        };
        // The guard checks a reload only once it is about to go live, and a version it
        // refused is checked again once the other bundle changed.
        let admit = guard.map(|(guard, role)| {
            Box::new(Guarded {
                guard,
                role,
                name: name.clone(),
            }) as Box<dyn crate::reload::Admit<CaBundle>>
        });
        // A file gone or unreadable at a reload: `os.ReadFile`'s text, as
        // `DynamicFileCAContent` logs it.
        crate::reload::FileReloader::load_with(
            path,
            MAX_BUNDLE_BYTES,
            parse,
            admit,
            crate::reload::IoText::Go,
        )
        .inspect(|_| tracing::debug!(%name, "loaded CA bundle"))
    }
}

/// The error Go's `os.ReadFile(path)` gives for a file that cannot be opened or read (a
/// directory): `open <path>: <errno text>` / `read <path>: is a directory`, the errno text being
/// the C library's, lower-cased as Go's `syscall.Errno` strings are.
fn go_open_error(path: &std::path::Path) -> Result<(), ConfigError> {
    let file = std::fs::File::open(path)
        .map_err(|e| ConfigError::new(crate::error::go_path_error("open", path, &e)))?;
    match file.metadata() {
        Ok(m) if m.is_dir() => Err(ConfigError::new(format!(
            "read {}: is a directory",
            path.display()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root's extendedKeyUsage as the chain check reads it: absent allows any usage; a
    /// root whose extensions cannot be read allows none (it once allowed any).
    #[test]
    fn root_eku_fails_closed_when_unreadable() {
        let read = |any, client_auth, server_auth| der::IssuerFacts {
            eku: Some(der::Eku {
                any,
                client_auth,
                server_auth,
            }),
            ..der::IssuerFacts::UNREADABLE
        };
        let absent = der::IssuerFacts {
            eku: None,
            ..der::IssuerFacts::UNREADABLE
        };
        let cases = [
            ("absent", Some(absent), (true, true)),
            (
                "anyExtendedKeyUsage",
                Some(read(true, false, false)),
                (true, true),
            ),
            ("clientAuth", Some(read(false, true, false)), (true, false)),
            ("serverAuth", Some(read(false, false, true)), (false, true)),
            ("unreadable certificate", None, (false, false)),
        ];
        for (name, facts, want) in cases {
            let eku = RootEku::of(facts.as_ref());
            assert_eq!((eku.allows(true), eku.allows(false)), want, "{name}");
        }
    }

    /// Each block's type, headers flag and bytes (base64 again).
    fn labels(data: &str) -> Vec<(String, bool, String)> {
        PemBlocks(data.as_bytes())
            .map(|b| {
                (
                    String::from_utf8_lossy(b.label).into_owned(),
                    b.has_headers,
                    base64::engine::general_purpose::STANDARD.encode(&b.bytes),
                )
            })
            .collect()
    }

    /// tests/vectors/go_pem.json, written by conformance/go/cmd/pemdecode (Go 1.26): the
    /// blocks Go's `pem.Decode` loop finds in each of a corpus of hand-picked inputs and
    /// mutants of them. Every row is compared.
    #[test]
    fn pem_blocks_match_go_vectors() {
        use serde_json::Value;
        fn bytes(v: &Value) -> Vec<u8> {
            match v {
                Value::String(s) => s.as_bytes().to_vec(),
                Value::Object(o) => unhex(o["hex"].as_str().unwrap()),
                _ => panic!("{v}"),
            }
        }
        fn unhex(h: &str) -> Vec<u8> {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        }
        let file: Value = serde_json::from_str(include_str!("../../tests/vectors/go_pem.json"))
            .expect("tests/vectors/go_pem.json");
        let rows = file["rows"].as_array().expect("rows");
        assert!(rows.len() > 2000, "{}", rows.len());
        let mut failures = Vec::new();
        for row in rows {
            let input = bytes(&row["in"]);
            let want: Vec<(Vec<u8>, bool, Vec<u8>)> = row["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    (
                        bytes(&b["type"]),
                        b["headers"].as_bool().unwrap(),
                        unhex(b["bytes"].as_str().unwrap()),
                    )
                })
                .collect();
            let got: Vec<(Vec<u8>, bool, Vec<u8>)> = PemBlocks(&input)
                .map(|b| (b.label.to_vec(), b.has_headers, b.bytes))
                .collect();
            if got != want {
                failures.push(format!(
                    "{:?}:\n  go:   {want:?}\n  ours: {got:?}",
                    String::from_utf8_lossy(&input)
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} rows differ from Go, the first:\n{}",
            failures.len(),
            rows.len(),
            failures[..failures.len().min(10)].join("\n")
        );
    }

    #[test]
    fn pem_blocks_follow_go_pem_decode() {
        type Case<'a> = (&'a str, &'a str, Vec<(&'a str, bool, &'a str)>);
        let cases: &[Case<'_>] = &[
            ("empty", "", vec![]),
            (
                "one block with leading text",
                "junk\n-----BEGIN CERTIFICATE-----\nQUJD\nREVG\n-----END CERTIFICATE-----\n",
                vec![("CERTIFICATE", false, "QUJDREVG")],
            ),
            (
                "headers flagged",
                "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nQUJD\n-----END CERTIFICATE-----\n",
                vec![("CERTIFICATE", true, "QUJD")],
            ),
            (
                "mismatched END skipped",
                "-----BEGIN CERTIFICATE-----\nQUJD\n-----END KEY-----\n-----BEGIN X-----\nQQ==\n-----END X-----",
                vec![("X", false, "QQ==")],
            ),
            (
                "BEGIN not at line start ignored",
                "x-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n",
                vec![],
            ),
            (
                "CRLF line endings",
                "-----BEGIN CERTIFICATE-----\r\nQUJD\r\n-----END CERTIFICATE-----\r\n",
                vec![("CERTIFICATE", false, "QUJD")],
            ),
            (
                "unterminated",
                "-----BEGIN CERTIFICATE-----\nQUJD\n",
                vec![],
            ),
            (
                "base64 with non-zero trailing bits is taken (StdEncoding is not strict)",
                "-----BEGIN CERTIFICATE-----\nQUJ=\n-----END CERTIFICATE-----\n",
                vec![("CERTIFICATE", false, "QUI=")],
            ),
            (
                "base64 padding is required",
                "-----BEGIN CERTIFICATE-----\nQUI\n-----END CERTIFICATE-----\n",
                vec![],
            ),
            (
                "a truncated block before a full one: the last BEGIN before the first END",
                "-----BEGIN CERTIFICATE-----\nMIIB\n-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n",
                vec![("CERTIFICATE", false, "QUJD")],
            ),
            (
                "a form feed in the body is not skipped (only spaces, tabs, CR and LF are)",
                "-----BEGIN CERTIFICATE-----\nQU\x0cJD\n-----END CERTIFICATE-----\n",
                vec![],
            ),
            (
                "spaces, tabs and CR in the body are skipped",
                "-----BEGIN CERTIFICATE-----\n Q U\tJ\rD \n-----END CERTIFICATE-----\n",
                vec![("CERTIFICATE", false, "QUJD")],
            ),
            (
                "an indented END line ends nothing",
                "-----BEGIN CERTIFICATE-----\nQUJD\n  -----END CERTIFICATE-----\n",
                vec![],
            ),
            (
                "text after the END line's dashes",
                "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----x\n",
                vec![],
            ),
            (
                "spaces and tabs after the END line",
                "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE----- \t\n",
                vec![("CERTIFICATE", false, "QUJD")],
            ),
            (
                "no final line break",
                "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----",
                vec![("CERTIFICATE", false, "QUJD")],
            ),
            (
                "headers run into the END line: no block",
                "-----BEGIN CERTIFICATE-----\nA: b\n-----END CERTIFICATE-----\n",
                vec![],
            ),
            (
                "an END line with a colon read as a header ends the search",
                "-----BEGIN X-----\nA: b\n-----END X-----:\n-----BEGIN Y-----\nQUJD\n-----END Y-----\n",
                vec![],
            ),
            (
                "a bad block is passed over from its END marker",
                "-----BEGIN -----\n!!!!\n-----END -----BEGIN X-----\nQUJD\n-----END X-----\n",
                vec![("X", false, "QUJD")],
            ),
            (
                "an empty block",
                "-----BEGIN X-----\n-----END X-----\n",
                vec![("X", false, "")],
            ),
            (
                "the type line is trimmed on the right only (getLine)",
                "-----BEGIN  CERTIFICATE-----  \nQUJD\n-----END  CERTIFICATE-----\n",
                vec![(" CERTIFICATE", false, "QUJD")],
            ),
        ];
        for (name, input, want) in cases {
            let got = labels(input);
            let want: Vec<_> = want
                .iter()
                .map(|(a, b, c)| (a.to_string(), *b, c.to_string()))
                .collect();
            assert_eq!(got, want, "case {name}");
        }
    }

    #[test]
    fn ca_file_errors_are_kube_apiservers_texts() {
        // dynamiccertificates.NewDynamicCAContentFromFile: os.ReadFile's error as is, then
        // `missing content` for no bytes, then `error loading CA bundle for` the parse error.
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, content: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, content).unwrap();
            p
        };
        let missing = dir.path().join("missing.crt");
        let empty = file("empty.crt", b"");
        let blank = file("blank.crt", b" \n\t\n");
        let garbage = file("garbage.crt", b"not a certificate\n");
        let good = file("good.crt", crate::x509::doc_ca_pem().as_bytes());
        let name = |p: &std::path::Path| format!("\"request-header::{}\"", p.display());
        let no_certs = "data does not contain any valid RSA or ECDSA certificates";
        let cases: Vec<(&str, &std::path::Path, Result<(), String>)> = vec![
            (
                "missing",
                &missing,
                Err(format!(
                    "open {}: no such file or directory",
                    missing.display()
                )),
            ),
            (
                "a directory",
                dir.path(),
                Err(format!("read {}: is a directory", dir.path().display())),
            ),
            (
                "empty",
                &empty,
                Err(format!("missing content for CA bundle {}", name(&empty))),
            ),
            (
                "white space only",
                &blank,
                Err(format!(
                    "error loading CA bundle for {}: {no_certs}",
                    name(&blank)
                )),
            ),
            (
                "garbage",
                &garbage,
                Err(format!(
                    "error loading CA bundle for {}: {no_certs}",
                    name(&garbage)
                )),
            ),
            ("a CA", &good, Ok(())),
        ];
        for (case, path, want) in cases {
            let got = CaSource::load_file("request-header", path, None)
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert_eq!(got, want, "case {case}");
        }
    }

    /// A CA file that goes away or becomes a directory at runtime: the reload fails with
    /// `os.ReadFile`'s text, as `DynamicFileCAContent.RunOnce` reports it (not Rust's
    /// `No such file or directory (os error 2)`), for both CA flags; the bundle stays.
    #[test]
    fn ca_file_reload_errors_are_kube_apiservers_texts() {
        let pem = crate::x509::doc_ca_pem();
        for purpose in ["client-ca-bundle", "request-header"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("ca.crt");
            type Change = fn(&std::path::Path);
            let cases: [(&str, Change, String); 2] = [
                (
                    "deleted",
                    |p| std::fs::remove_file(p).unwrap(),
                    format!("open {}: no such file or directory", path.display()),
                ),
                (
                    "now a directory",
                    |p| {
                        let _ = std::fs::remove_file(p);
                        std::fs::create_dir(p).unwrap();
                    },
                    format!("read {}: is a directory", path.display()),
                ),
            ];
            for (case, change, want) in cases {
                let _ = std::fs::remove_dir(&path);
                std::fs::write(&path, pem).unwrap();
                let reloader = CaSource::load_file(purpose, &path, None).unwrap();
                change(&path);
                let got = reloader.reload_now().map_err(|e| e.to_string());
                assert_eq!(got, Err(want), "{purpose}: {case}");
                assert_eq!(reloader.failures(), 1, "{purpose}: {case}");
                assert_eq!(
                    reloader.current().certificates().len(),
                    1,
                    "{purpose}: {case}"
                );
            }
        }
    }

    /// A CA bundle read while the file changed is discarded (the next check reads the file
    /// again), and so is what the overlap guard learnt from it: here the client CA file is
    /// caught mid-write holding `c`, then the request-header CA file becomes `c`, which must
    /// load (the client bundle never held `c`).
    #[cfg(unix)]
    #[test]
    fn a_torn_read_of_a_ca_file_leaves_the_overlap_guard_as_it_was() {
        use crate::reload::Reloaded;
        use std::io::Write;
        let ca = |cn: &str| {
            let key = rcgen::KeyPair::generate().unwrap();
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, cn);
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params.self_signed(&key).unwrap().pem()
        };
        let (a, b, c) = (ca("a"), ca("b"), ca("c"));
        let dir = tempfile::tempdir().unwrap();
        let (client_path, rh_path) = (dir.path().join("client.pem"), dir.path().join("rh.pem"));
        std::fs::write(&client_path, &a).unwrap();
        std::fs::write(&rh_path, &b).unwrap();
        let guard = Arc::new(OverlapGuard::default());
        let client = CaSource::load_file(
            "client-ca-bundle",
            &client_path,
            Some((guard.clone(), CaRole::Client)),
        )
        .unwrap();
        let rh = CaSource::load_file(
            "request-header",
            &rh_path,
            Some((guard.clone(), CaRole::RequestHeader)),
        )
        .unwrap();
        guard.arm(&CaSource::File(client.clone()), &CaSource::File(rh.clone()));

        // The client CA file becomes a FIFO whose writer writes `c` a while after the reader
        // opened it: the file's modification time changes while it is read.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        std::fs::rename(&fifo, &client_path).unwrap();
        let writer = {
            let (path, c) = (client_path.clone(), c.clone());
            std::thread::spawn(move || {
                let mut file = std::fs::File::options().write(true).open(path).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(50));
                file.write_all(c.as_bytes()).unwrap();
            })
        };
        assert_eq!(client.reload_now().unwrap(), Reloaded::Unchanged);
        writer.join().unwrap();
        assert_eq!(client.current().certificates().len(), 1);
        assert_eq!(client.failures(), 0);
        std::fs::remove_file(&client_path).unwrap();

        std::fs::write(&rh_path, &c).unwrap();
        assert_eq!(
            rh.reload_now().map_err(|e| e.to_string()),
            Ok(Reloaded::Updated),
            "a CA the client bundle never held is refused"
        );
        // The client CA file holding `c` now is refused.
        std::fs::write(&client_path, &c).unwrap();
        assert!(client.reload_now().is_err());
    }

    #[test]
    fn bundles_fail_on_a_certificate_go_does_not_parse() {
        // client-go's ParseCertsPEM returns x509.ParseCertificate's error as it is, and the
        // whole bundle is refused, whatever the other certificates are. Go's verdicts:
        // tests/vectors/go_parse_certificate.json (conformance/go/cmd/certparse).
        let file: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/vectors/go_parse_certificate.json"
        ))
        .unwrap();
        let good = crate::x509::doc_ca_pem();
        let mut failures = Vec::new();
        for case in file["cases"].as_array().unwrap() {
            let want = case["go"].as_str().unwrap();
            if want.is_empty() {
                continue;
            }
            let hex = case["der"].as_str().unwrap();
            let der: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let b64 = base64::engine::general_purpose::STANDARD.encode(&der);
            let pem =
                format!("{good}-----BEGIN CERTIFICATE-----\n{b64}\n-----END CERTIFICATE-----\n");
            match CaBundle::from_pem(pem.as_bytes()) {
                Err(e) if e.to_string() == want => {}
                other => failures.push(format!(
                    "{}: Go {want:?}, ours {:?}",
                    case["name"],
                    other.map(|_| ()).map_err(|e| e.to_string())
                )),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn bundle_errors() {
        let cases: &[(&str, &[u8], &str)] = &[
            ("empty", b"", "missing content for CA bundle"),
            (
                "blank",
                b" \n",
                "data does not contain any valid RSA or ECDSA certificates",
            ),
            (
                "no certificates",
                b"hello",
                "data does not contain any valid RSA or ECDSA certificates",
            ),
            (
                "bad base64 is skipped (pem.Decode), leaving nothing",
                b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
                "data does not contain any valid RSA or ECDSA certificates",
            ),
        ];
        for (name, input, want) in cases {
            let err = CaBundle::from_pem(input).unwrap_err();
            assert_eq!(err.to_string(), *want, "case {name}");
        }
        // A CA certificate whose name Go's parser refuses (CN turned into a PrintableString
        // with an `@`; the signature is not looked at when a bundle is loaded): refused, as
        // Go's `x509.ParseCertificate` refuses it. Patched in the issuer name, then in both.
        let der = parse_pem_bundle(crate::x509::doc_ca_pem().as_bytes()).unwrap()[0].to_vec();
        let cn = b"\x0c\x11kube-authn doc CA";
        let bad = b"\x13\x11kube@authn doc CA";
        let first = der.windows(cn.len()).position(|w| w == cn).unwrap();
        let second = first
            + 1
            + der[first + 1..]
                .windows(cn.len())
                .position(|w| w == cn)
                .unwrap();
        for patch_at in [vec![first], vec![first, second]] {
            let mut patched = der.clone();
            for at in patch_at {
                patched[at..at + cn.len()].copy_from_slice(bad);
            }
            let b64 = base64::engine::general_purpose::STANDARD.encode(&patched);
            let pem = format!("-----BEGIN CERTIFICATE-----\n{b64}\n-----END CERTIFICATE-----\n");
            assert_eq!(
                CaBundle::from_pem(pem.as_bytes()).unwrap_err().to_string(),
                "x509: invalid RDNSequence: invalid attribute value: invalid PrintableString"
            );
        }
        // A valid certificate beside a block whose base64 does not decode, or whose type line
        // has a space after BEGIN: Go keeps the one certificate, and so do we.
        let good = crate::x509::doc_ca_pem();
        for extra in [
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
            "-----BEGIN  CERTIFICATE-----\nQUJD\n-----END  CERTIFICATE-----\n",
        ] {
            for pem in [format!("{good}{extra}"), format!("{extra}{good}")] {
                let bundle = CaBundle::from_pem(pem.as_bytes()).unwrap();
                assert_eq!(bundle.certificates().len(), 1, "{pem}");
            }
        }
        let err =
            CaBundle::from_pem(b"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n")
                .unwrap_err();
        assert!(
            err.to_string().starts_with("x509: malformed certificate"),
            "{err}"
        );
    }
}
