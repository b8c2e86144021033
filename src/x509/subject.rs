//! The user of a verified leaf certificate (k8s `CommonNameUserConversion`).

use std::borrow::Cow;
use std::sync::Arc;

use super::der::{self, TbsView, Tlv};
use super::verify::err;
use crate::error::{Error, ErrorKind};
use crate::user::{SharedStr, TextKey, UserInfo};

pub(crate) const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
pub(crate) const OID_O: &[u8] = &[0x55, 0x04, 0x0a];
/// 1.3.6.1.4.1.57683.2, Kubernetes' UID attribute (apimachinery `X509UID()`).
const OID_UID: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xc2, 0x53, 0x02];

/// The most organisations (groups) read from one subject.
///
/// ```
/// assert_eq!(kube_authn::x509::MAX_SUBJECT_ATTRIBUTES, 256);
/// ```
pub const MAX_SUBJECT_ATTRIBUTES: usize = 256;

/// Decodes an ASN.1 string the way Go's `parseASN1String` does (`crypto/x509`), borrowing
/// from the DER where the value is already UTF-8. `None` for a value that is not one of the
/// string types Go reads (Go fails to parse such a certificate); `Some(Err(()))` for a string
/// Go refuses.
///
/// * UTF8String: valid UTF-8.
/// * PrintableString: Go's set, with the `*` and `&` it tolerates ("existing practice").
/// * IA5String: ASCII. NumericString: digits and space.
/// * T61String: every byte is a Latin-1 character, as Go (and BoringSSL) read it.
/// * BMPString: UCS-2 big-endian; a trailing `00 00` terminator is dropped; surrogates and
///   the noncharacters U+FFFE, U+FFFF and U+FDD0–U+FDEF are refused.
pub(crate) fn asn1_string(v: Tlv<'_>) -> Option<Result<Cow<'_, str>, ()>> {
    let c = v.content;
    let ascii_if = |ok: bool| {
        if ok {
            // All of these sets are ASCII, so the bytes are UTF-8.
            std::str::from_utf8(c).map(Cow::Borrowed).map_err(|_| ())
        } else {
            Err(())
        }
    };
    Some(match v.tag {
        0x0c => std::str::from_utf8(c).map(Cow::Borrowed).map_err(|_| ()),
        0x13 => ascii_if(
            c.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b" '()+,-./:=?*&".contains(&b)),
        ),
        0x16 => ascii_if(c.is_ascii()),
        0x12 => ascii_if(c.iter().all(|&b| b.is_ascii_digit() || b == b' ')),
        0x14 if c.is_ascii() => ascii_if(true),
        0x14 => Ok(Cow::Owned(c.iter().map(|&b| char::from(b)).collect())),
        0x1e => bmp_string(c).map(Cow::Owned),
        _ => return None,
    })
}

/// A BMPString's content as Go's `parseASN1String` reads it (see [`asn1_string`]).
fn bmp_string(content: &[u8]) -> Result<String, ()> {
    if !content.len().is_multiple_of(2) {
        return Err(());
    }
    let content = content.strip_suffix(&[0, 0]).unwrap_or(content);
    let mut out = String::with_capacity(content.len() / 2);
    for unit in content.chunks_exact(2) {
        let unit = u16::from_be_bytes([unit[0], unit[1]]);
        if matches!(unit, 0xfffe | 0xffff | 0xfdd0..=0xfdef | 0xd800..=0xdfff) {
            return Err(());
        }
        // No surrogates are left, so every unit is a scalar value.
        out.push(char::from_u32(u32::from(unit)).ok_or(())?);
    }
    Ok(out)
}

const ERR_NOT_STRING: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: subject attribute is not a valid string",
);
pub(crate) const ERR_CONTROL: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: subject attribute contains a control character",
);
pub(crate) const ERR_MALFORMED_SUBJECT: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: malformed certificate subject",
);

/// The identity fields of a subject, borrowed from the certificate where possible.
#[derive(Debug, Default)]
pub(crate) struct Subject<'a> {
    /// The **last** CN (Go's `pkix.Name.CommonName`).
    pub(crate) common_name: Cow<'a, str>,
    /// Every O, in order, already in the shared form a user's group list stores.
    pub(crate) organizations: Vec<SharedStr>,
    pub(crate) uids: Vec<Cow<'a, str>>,
    /// The first of our own refusals, which Go does not have: a control character in CN, O
    /// or UID, more than [`MAX_SUBJECT_ATTRIBUTES`] attributes. Kept apart from the errors
    /// Go's parser has (those fail [`subject_of_view`] itself), because Go gives an empty CN
    /// "not mine" before it looks at anything else; [`Subject::refusal`] reports it.
    refusal: Option<Error>,
}

impl Subject<'_> {
    /// Our own refusal of this subject, if any (see the field). When there is one, the
    /// organisations and UIDs may be incomplete.
    pub(crate) fn refusal(&self) -> Result<(), Error> {
        match &self.refusal {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// Reads CN (last wins), O (in order) and the UID attribute values of a DER certificate,
/// refusing what Go's parser refuses; our own refusals are [`Subject::refusal`].
pub(crate) fn subject_of(cert: &[u8]) -> Result<Subject<'_>, Error> {
    let view = der::tbs_view(cert).ok_or(ERR_MALFORMED_SUBJECT)?;
    subject_of_view(&view)
}

/// [`subject_of`] for an already read TBS. Every attribute is decoded (Go parses them all;
/// the certificate's size bounds the work); at most [`MAX_SUBJECT_ATTRIBUTES`] are kept.
pub(crate) fn subject_of_view<'a>(view: &TbsView<'a>) -> Result<Subject<'a>, Error> {
    let mut out = Subject::default();
    let mut failure: Option<Error> = None;
    let mut count = 0usize;
    der::for_each_attribute(view.subject, |oid, value| {
        if failure.is_some() {
            return;
        }
        count += 1;
        if count == MAX_SUBJECT_ATTRIBUTES + 1 && out.refusal.is_none() {
            out.refusal = Some(Error::from_static(
                ErrorKind::InvalidCredential,
                "x509: certificate subject has too many attributes",
            ));
        }
        let which = if oid == OID_CN {
            0
        } else if oid == OID_O {
            1
        } else if oid == OID_UID {
            2
        } else {
            // Any other attribute is not read, but Go refuses a certificate whose name has
            // a value that is not a string it can decode.
            if !matches!(asn1_string(value), Some(Ok(_))) {
                failure = Some(ERR_NOT_STRING);
            }
            return;
        };
        // A value that is not a string, UID included, is Go's parser's refusal (`x509:
        // invalid RDNSequence: …`): kube-apiserver's `unable to parse UID into a string` is
        // never reached, as Go fails the handshake first.
        let Some(Ok(text)) = asn1_string(value) else {
            failure = Some(ERR_NOT_STRING);
            return;
        };
        if text.chars().any(char::is_control) && out.refusal.is_none() {
            out.refusal = Some(ERR_CONTROL);
        }
        match which {
            // The CN is kept even past the bound or with a control character: whether it is
            // empty decides "not mine" before any refusal.
            0 => out.common_name = text,
            _ if out.refusal.is_some() => {}
            1 => out.organizations.push(SharedStr::from(&*text)),
            _ => out.uids.push(text),
        }
    })
    .ok_or(ERR_MALFORMED_SUBJECT)?;
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

const ERR_NAME_NOT_STRING: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: certificate issuer or intermediate name has an attribute that is not a valid string",
);

/// Checks a `Name` (the content of its SEQUENCE) that is not the leaf's subject: the leaf's
/// issuer, or an intermediate's subject or issuer. Go parses every name of every certificate
/// it is given, and fails on a value that is not a string it can decode (`x509: invalid
/// RDNSequence: …`); nothing here is kept. At most [`MAX_SUBJECT_ATTRIBUTES`] attributes.
pub(crate) fn check_name(name: &[u8]) -> Result<(), Error> {
    match name_check(name, MAX_SUBJECT_ATTRIBUTES) {
        NameCheck::Decodes => Ok(()),
        NameCheck::NotString => Err(ERR_NAME_NOT_STRING),
        NameCheck::TooMany => Err(Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: certificate name has too many attributes",
        )),
        NameCheck::Malformed => Err(Error::from_static(
            ErrorKind::InvalidCredential,
            "x509: malformed certificate name",
        )),
    }
}

/// What [`name_check`] found in a `Name`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NameCheck {
    /// Every attribute value is a string Go decodes.
    Decodes,
    /// A value Go's `parseASN1String` refuses.
    NotString,
    /// More attributes than the limit.
    TooMany,
    /// Not a DER `RDNSequence`.
    Malformed,
}

/// Whether every attribute value of a `Name` (the content of its SEQUENCE) is a string Go
/// decodes, reading at most `limit` attributes.
pub(crate) fn name_check(name: &[u8], limit: usize) -> NameCheck {
    let mut count = 0usize;
    let mut strings = true;
    let structure = der::for_each_attribute(name, |_, value| {
        count += 1;
        strings &= count > limit || matches!(asn1_string(value), Some(Ok(_)));
    });
    match structure {
        None => NameCheck::Malformed,
        Some(()) if count > limit => NameCheck::TooMany,
        Some(()) if !strings => NameCheck::NotString,
        Some(()) => NameCheck::Decodes,
    }
}

/// Whether a DER certificate's subject and issuer both decode as Go's parser decodes them
/// (no attribute bound: the certificate's size bounds the work). For the TLS handshake and
/// CA bundles, where Go's `x509.ParseCertificate` would fail.
pub(crate) fn names_decode(cert: &[u8]) -> bool {
    der::tbs_view(cert).is_some_and(|v| {
        name_check(v.subject, usize::MAX) == NameCheck::Decodes
            && name_check(v.issuer, usize::MAX) == NameCheck::Decodes
    })
}

/// The user of a verified leaf certificate whose TBS is `view`.
/// k8s `CommonNameUserConversion`: `Ok(None)` for an empty CN, before anything else is
/// looked at (a subject Go's parser refuses is still an error: Go never gets this far).
///
/// Built from the borrowed subject strings: one allocation per group, one scratch `String`
/// (name, uid and credential id, copied once into the user's own text) and the few the user's
/// storage needs.
pub(crate) fn user_from_view(cert: &[u8], view: &TbsView<'_>) -> Result<Option<UserInfo>, Error> {
    let subject = subject_of_view(view)?;
    if subject.common_name.is_empty() {
        return Ok(None);
    }
    subject.refusal()?;
    let uid: &str = match subject.uids.as_slice() {
        [] => "",
        [uid] if uid.is_empty() => {
            return Err(Error::from_static(
                ErrorKind::InvalidCredential,
                "UID cannot be an empty string",
            ));
        }
        [uid] => uid,
        uids => {
            return Err(err(format!(
                "expected 1 UID, but found multiple: [{}]",
                uids.join(" ")
            )));
        }
    };
    // Name, uid and credential id in one string; the extra map is built from it only if
    // someone reads it ([`UserInfo::extra`]).
    let mut text = String::with_capacity(subject.common_name.len() + uid.len() + CREDENTIAL_ID_LEN);
    text.push_str(&subject.common_name);
    text.push_str(uid);
    let uid_end = text.len();
    push_credential_id(cert, &mut text);
    Ok(Some(UserInfo::from_text(
        &text,
        subject.common_name.len(),
        uid_end,
        Arc::from(subject.organizations),
        &[(TextKey::CredentialId, uid_end..text.len())],
    )))
}

const CREDENTIAL_ID_PREFIX: &str = "X509SHA256=";
const CREDENTIAL_ID_LEN: usize = CREDENTIAL_ID_PREFIX.len() + 64;

/// Appends `X509SHA256=<lower-case hex SHA-256 of the DER certificate>` to `out`.
fn push_credential_id(cert: &[u8], out: &mut String) {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, cert);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str(CREDENTIAL_ID_PREFIX);
    let mut hex = [0u8; 64];
    for (pair, &b) in hex.chunks_exact_mut(2).zip(digest.as_ref()) {
        pair[0] = HEX[usize::from(b >> 4)];
        pair[1] = HEX[usize::from(b & 0x0f)];
    }
    // Every byte is an ASCII hex digit.
    out.push_str(std::str::from_utf8(&hex).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asn1_strings_decode_like_go() {
        let t = |tag: u8, content: &'static [u8]| Tlv { tag, content };
        type Case = (&'static str, Tlv<'static>, Option<Result<&'static str, ()>>);
        let cases: Vec<Case> = vec![
            ("utf8", t(0x0c, "héllo".as_bytes()), Some(Ok("héllo"))),
            ("printable", t(0x13, b"abc"), Some(Ok("abc"))),
            ("ia5", t(0x16, b"a@b"), Some(Ok("a@b"))),
            // Go's character sets (parseASN1String).
            (
                "printable with every allowed punctuation",
                t(0x13, b"A z 0 '()+,-./:=?*&"),
                Some(Ok("A z 0 '()+,-./:=?*&")),
            ),
            ("printable with @", t(0x13, b"a@b"), Some(Err(()))),
            (
                "printable with UTF-8",
                t(0x13, "ädmin".as_bytes()),
                Some(Err(())),
            ),
            ("ia5 with UTF-8", t(0x16, "ädmin".as_bytes()), Some(Err(()))),
            ("numeric", t(0x12, b"12 34"), Some(Ok("12 34"))),
            ("numeric with a letter", t(0x12, b"12a"), Some(Err(()))),
            ("bmp", t(0x1e, &[0x00, 0x41, 0x00, 0xe9]), Some(Ok("Aé"))),
            ("bmp odd length", t(0x1e, &[0x00]), Some(Err(()))),
            ("bmp lone surrogate", t(0x1e, &[0xd8, 0x00]), Some(Err(()))),
            ("invalid utf8", t(0x0c, &[0xff, 0xfe]), Some(Err(()))),
            // T61String is Latin-1 to Go: each byte one character (UTF-8 bytes included).
            ("t61 ascii", t(0x14, b"admin"), Some(Ok("admin"))),
            (
                "t61 latin-1",
                t(0x14, &[0x63, 0x61, 0x66, 0xe9]),
                Some(Ok("café")),
            ),
            (
                "t61 holding UTF-8 bytes",
                t(0x14, &[0x61, 0x64, 0xc3, 0xa9]),
                Some(Ok("adÃ©")),
            ),
            // BMPString: Go drops one trailing 00 00 and refuses noncharacters and every
            // surrogate (a valid pair too: UCS-2 has none).
            (
                "bmp terminator",
                t(0x1e, &[0, 0x61, 0, 0x6c, 0, 0]),
                Some(Ok("al")),
            ),
            ("bmp only a terminator", t(0x1e, &[0, 0]), Some(Ok(""))),
            (
                "bmp two terminators",
                t(0x1e, &[0, 0x61, 0, 0, 0, 0]),
                Some(Ok("a\0")),
            ),
            ("bmp U+FFFE", t(0x1e, &[0, 0x61, 0xff, 0xfe]), Some(Err(()))),
            ("bmp U+FFFF", t(0x1e, &[0xff, 0xff]), Some(Err(()))),
            ("bmp U+FDD0", t(0x1e, &[0xfd, 0xd0]), Some(Err(()))),
            ("bmp U+FDEF", t(0x1e, &[0xfd, 0xef]), Some(Err(()))),
            ("bmp U+FDF0", t(0x1e, &[0xfd, 0xf0]), Some(Ok("\u{fdf0}"))),
            (
                "bmp surrogate pair",
                t(0x1e, &[0xd8, 0x3d, 0xde, 0x00]),
                Some(Err(())),
            ),
            ("sequence is not a string", t(0x30, b""), None),
            ("integer is not a string", t(0x02, &[1]), None),
        ];
        for (name, tlv, want) in cases {
            let got = asn1_string(tlv);
            assert_eq!(
                got.as_ref().map(|r| r.as_deref().map_err(|_| ())),
                want,
                "case {name}"
            );
            // Already UTF-8 values are borrowed, not copied.
            if let Some(Ok(s)) = &got {
                assert_eq!(
                    matches!(s, Cow::Borrowed(_)),
                    tlv.tag != 0x1e && tlv.content.is_ascii() || tlv.tag == 0x0c,
                    "case {name}"
                );
            }
        }
    }

    #[test]
    fn names_other_than_the_subject_must_decode_like_go() {
        // One RDN holding one attribute (OID 2.5.4.11, OU) with the given value.
        fn name(tag: u8, value: &[u8]) -> Vec<u8> {
            let mut atv = vec![0x06, 0x03, 0x55, 0x04, 0x0b, tag, value.len() as u8];
            atv.extend_from_slice(value);
            let mut set = vec![0x30, atv.len() as u8];
            set.extend(atv);
            let mut rdn = vec![0x31, set.len() as u8];
            rdn.extend(set);
            rdn
        }
        let cases: [(&str, Vec<u8>, Result<(), &str>); 5] = [
            ("printable", name(0x13, b"ops"), Ok(())),
            ("t61 latin-1", name(0x14, &[0xe9]), Ok(())),
            (
                "printable with @",
                name(0x13, b"a@b"),
                Err(
                    "x509: certificate issuer or intermediate name has an attribute that is not a valid string",
                ),
            ),
            (
                "integer",
                name(0x02, &[1]),
                Err(
                    "x509: certificate issuer or intermediate name has an attribute that is not a valid string",
                ),
            ),
            (
                "not a SET of attributes",
                vec![0x30, 0x00],
                Err("x509: malformed certificate name"),
            ),
        ];
        for (case, der, want) in cases {
            let got = check_name(&der).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "case {case}");
        }
        let many: Vec<u8> = (0..=MAX_SUBJECT_ATTRIBUTES)
            .flat_map(|_| name(0x13, b"x"))
            .collect();
        assert_eq!(
            check_name(&many).unwrap_err().to_string(),
            "x509: certificate name has too many attributes"
        );
        assert_eq!(name_check(&many, usize::MAX), NameCheck::Decodes);
    }
}
