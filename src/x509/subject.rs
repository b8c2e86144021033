//! The user of a verified leaf certificate (k8s `CommonNameUserConversion`).

use std::borrow::Cow;
use std::sync::Arc;

use super::der::{self, TbsView, Tlv};
use super::verify::err;
use crate::error::{Error, ErrorKind};
use crate::user::{SharedStr, TextKey, UserInfo};

const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
const OID_O: &[u8] = &[0x55, 0x04, 0x0a];
/// 1.3.6.1.4.1.57683.2, Kubernetes' UID attribute (apimachinery `X509UID()`).
const OID_UID: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xc2, 0x53, 0x02];

/// The most organisations (groups) read from one subject.
///
/// ```
/// assert_eq!(kube_authn::x509::MAX_SUBJECT_ATTRIBUTES, 256);
/// ```
pub const MAX_SUBJECT_ATTRIBUTES: usize = 256;

/// Decodes an ASN.1 string the way Go's `parseASN1String` does for the types Go accepts,
/// borrowing from the DER where the value is already UTF-8. `None` for a value that is not a
/// string (Go fails to parse such a certificate).
pub(crate) fn asn1_string(v: Tlv<'_>) -> Option<Result<Cow<'_, str>, ()>> {
    // The character sets Go's parser enforces (a value outside one is a parse error there).
    let allowed = match v.tag {
        // PrintableString, plus the '*' and '&' Go tolerates ("existing practice").
        0x13 => v
            .content
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b" '()+,-./:=?*&".contains(&b)),
        // IA5String: ASCII.
        0x16 => v.content.is_ascii(),
        // NumericString: digits and space.
        0x12 => v.content.iter().all(|&b| b.is_ascii_digit() || b == b' '),
        _ => true,
    };
    if !allowed {
        return Some(Err(()));
    }
    match v.tag {
        // UTF8String, PrintableString, IA5String, NumericString, T61String (Go keeps T61's raw
        // bytes; we require them to be UTF-8).
        0x0c | 0x13 | 0x16 | 0x12 | 0x14 => Some(
            std::str::from_utf8(v.content)
                .map(Cow::Borrowed)
                .map_err(|_| ()),
        ),
        // BMPString: UCS-2 big-endian.
        0x1e => {
            if v.content.len() % 2 != 0 {
                return Some(Err(()));
            }
            let units = v
                .content
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]));
            Some(
                char::decode_utf16(units)
                    .collect::<Result<String, _>>()
                    .map(Cow::Owned)
                    .map_err(|_| ()),
            )
        }
        _ => None,
    }
}

const ERR_NOT_STRING: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: subject attribute is not a valid string",
);
const ERR_CONTROL: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: subject attribute contains a control character",
);
pub(crate) const ERR_MALFORMED_SUBJECT: Error = Error::from_static(
    ErrorKind::InvalidCredential,
    "x509: malformed certificate subject",
);

fn checked(s: Cow<'_, str>) -> Result<Cow<'_, str>, Error> {
    if s.chars().any(char::is_control) {
        return Err(ERR_CONTROL);
    }
    Ok(s)
}

/// The identity fields of a subject, borrowed from the certificate where possible.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Subject<'a> {
    /// The **last** CN (Go's `pkix.Name.CommonName`).
    pub(crate) common_name: Cow<'a, str>,
    /// Every O, in order, already in the shared form a user's group list stores.
    pub(crate) organizations: Vec<SharedStr>,
    pub(crate) uids: Vec<Cow<'a, str>>,
}

/// Reads CN (last wins), O (in order) and the UID attribute values of a DER certificate.
pub(crate) fn subject_of(cert: &[u8]) -> Result<Subject<'_>, Error> {
    let view = der::tbs_view(cert).ok_or(ERR_MALFORMED_SUBJECT)?;
    subject_of_view(&view)
}

/// [`subject_of`] for an already read TBS.
pub(crate) fn subject_of_view<'a>(view: &TbsView<'a>) -> Result<Subject<'a>, Error> {
    let mut out = Subject::default();
    let mut failure: Option<Error> = None;
    let mut count = 0usize;
    der::for_each_attribute(view.subject, |oid, value| {
        if failure.is_some() {
            return;
        }
        count += 1;
        if count > MAX_SUBJECT_ATTRIBUTES {
            failure = Some(Error::from_static(
                ErrorKind::InvalidCredential,
                "x509: certificate subject has too many attributes",
            ));
            return;
        }
        let which = if oid == OID_CN {
            0
        } else if oid == OID_O {
            1
        } else if oid == OID_UID {
            2
        } else {
            return;
        };
        let text = match asn1_string(value) {
            Some(Ok(s)) => checked(s),
            Some(Err(())) => Err(ERR_NOT_STRING),
            None if which == 2 => Err(Error::from_static(
                ErrorKind::InvalidCredential,
                "unable to parse UID into a string",
            )),
            None => Err(ERR_NOT_STRING),
        };
        match text {
            Ok(s) => match which {
                0 => out.common_name = s,
                1 => out.organizations.push(SharedStr::from(&*s)),
                _ => out.uids.push(s),
            },
            Err(e) => failure = Some(e),
        }
    })
    .ok_or(ERR_MALFORMED_SUBJECT)?;
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The user of a verified leaf certificate whose TBS is `view`.
/// k8s `CommonNameUserConversion`: `Ok(None)` for an empty CN.
///
/// Built from the borrowed subject strings: one allocation per group, one scratch `String`
/// (name, uid and credential id, copied once into the user's own text) and the few the user's
/// storage needs.
pub(crate) fn user_from_view(cert: &[u8], view: &TbsView<'_>) -> Result<Option<UserInfo>, Error> {
    let subject = subject_of_view(view)?;
    if subject.common_name.is_empty() {
        return Ok(None);
    }
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
                    tlv.tag != 0x1e,
                    "case {name}"
                );
            }
        }
    }
}
