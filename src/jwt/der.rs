//! A minimal, bounded DER reader: just enough to take keys out of PEM blocks
//! (SubjectPublicKeyInfo, PKCS#1, PKCS#8, SEC1, X.509 certificates).
//!
//! Every function returns `None` on any malformed input; nothing here panics, recurses or
//! allocates. Lengths are definite only (DER), at most four length bytes.
//!
//! ```
//! // An INTEGER 5 followed by nothing.
//! let (tag, value, rest) = kube_authn::jwt::der::read_tlv(&[0x02, 0x01, 0x05]).unwrap();
//! assert_eq!((tag, value, rest.len()), (0x02, &[5u8][..], 0));
//! ```

/// DER tag of SEQUENCE.
///
/// ```
/// use kube_authn::jwt::der::{SEQUENCE, read_tlv};
/// assert_eq!(SEQUENCE, 0x30);
/// assert_eq!(read_tlv(&[0x30, 0x03, 0x02, 0x01, 0x05]).unwrap().0, SEQUENCE);
/// ```
pub const SEQUENCE: u8 = 0x30;
/// DER tag of INTEGER.
///
/// ```
/// use kube_authn::jwt::der::{INTEGER, read_tlv};
/// assert_eq!(INTEGER, 0x02);
/// assert_eq!(read_tlv(&[0x02, 0x01, 0x05]).unwrap().0, INTEGER);
/// ```
pub const INTEGER: u8 = 0x02;
/// DER tag of BIT STRING.
///
/// ```
/// use kube_authn::jwt::der::{BIT_STRING, read_tlv};
/// assert_eq!(BIT_STRING, 0x03);
/// assert_eq!(read_tlv(&[0x03, 0x02, 0x00, 0xff]).unwrap().0, BIT_STRING);
/// ```
pub const BIT_STRING: u8 = 0x03;
/// DER tag of OCTET STRING.
///
/// ```
/// use kube_authn::jwt::der::{OCTET_STRING, read_tlv};
/// assert_eq!(OCTET_STRING, 0x04);
/// assert_eq!(read_tlv(&[0x04, 0x01, 0xaa]).unwrap().0, OCTET_STRING);
/// ```
pub const OCTET_STRING: u8 = 0x04;
/// DER tag of OBJECT IDENTIFIER.
///
/// ```
/// use kube_authn::jwt::der::{OID, read_tlv};
/// assert_eq!(OID, 0x06);
/// assert_eq!(read_tlv(&[0x06, 0x03, 0x2b, 0x65, 0x70]).unwrap().0, OID);
/// ```
pub const OID: u8 = 0x06;
/// DER tag of NULL.
///
/// ```
/// use kube_authn::jwt::der::{NULL, read_tlv};
/// assert_eq!(NULL, 0x05);
/// assert_eq!(read_tlv(&[0x05, 0x00]).unwrap().0, NULL);
/// ```
pub const NULL: u8 = 0x05;

/// Reads one tag-length-value: `(tag, value, rest)`. Only single-byte tags.
///
/// ```
/// assert!(kube_authn::jwt::der::read_tlv(&[0x30, 0x05, 0x00]).is_none()); // short
/// ```
pub fn read_tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    if tag & 0x1f == 0x1f {
        return None; // multi-byte tags are never needed here
    }
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        first as usize
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let mut len = 0usize;
        for &b in &rest[..n] {
            len = (len << 8) | b as usize;
        }
        rest = &rest[n..];
        if len < 0x80 {
            return None; // not minimal: DER requires the short form
        }
        len
    };
    if rest.len() < len {
        return None;
    }
    let (value, rest) = rest.split_at(len);
    Some((tag, value, rest))
}

/// Reads a TLV and requires its tag to be `tag`: `(value, rest)`.
///
/// ```
/// use kube_authn::jwt::der;
/// assert!(der::expect(der::SEQUENCE, &[0x02, 0x01, 0x05]).is_none());
/// ```
pub fn expect(tag: u8, input: &[u8]) -> Option<(&[u8], &[u8])> {
    let (t, value, rest) = read_tlv(input)?;
    (t == tag).then_some((value, rest))
}

/// The whole input must be exactly one TLV with tag `tag`; returns its value.
///
/// ```
/// use kube_authn::jwt::der;
/// assert_eq!(der::exact(der::INTEGER, &[0x02, 0x01, 0x07]), Some(&[7u8][..]));
/// assert!(der::exact(der::INTEGER, &[0x02, 0x01, 0x07, 0x00]).is_none());
/// ```
pub fn exact(tag: u8, input: &[u8]) -> Option<&[u8]> {
    let (value, rest) = expect(tag, input)?;
    rest.is_empty().then_some(value)
}

/// Appends a DER TLV (definite length) to `out`.
///
/// ```
/// let mut v = Vec::new();
/// kube_authn::jwt::der::write_tlv(&mut v, 0x04, &[1, 2]);
/// assert_eq!(v, [0x04, 0x02, 1, 2]);
/// ```
pub fn write_tlv(out: &mut Vec<u8>, tag: u8, value: &[u8]) {
    out.push(tag);
    let len = value.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u32).to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (4 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(value);
}

/// Appends a non-negative DER INTEGER whose big-endian magnitude is `magnitude`.
///
/// ```
/// let mut v = Vec::new();
/// kube_authn::jwt::der::write_unsigned(&mut v, &[0x00, 0x80]);
/// assert_eq!(v, [0x02, 0x02, 0x00, 0x80]);
/// ```
pub fn write_unsigned(out: &mut Vec<u8>, magnitude: &[u8]) {
    let trimmed = {
        let skip = magnitude.iter().take_while(|b| **b == 0).count();
        &magnitude[skip..]
    };
    let mut value = Vec::with_capacity(trimmed.len() + 1);
    if trimmed.first().is_none_or(|b| b & 0x80 != 0) {
        value.push(0);
    }
    value.extend_from_slice(trimmed);
    write_tlv(out, INTEGER, &value);
}

/// Bit length of a big-endian unsigned magnitude (leading zero bytes ignored).
///
/// ```
/// assert_eq!(kube_authn::jwt::der::bit_len(&[0x00, 0x01, 0x00]), 9);
/// ```
pub fn bit_len(magnitude: &[u8]) -> usize {
    let skip = magnitude.iter().take_while(|b| **b == 0).count();
    match magnitude.get(skip) {
        None => 0,
        Some(b) => (magnitude.len() - skip - 1) * 8 + (8 - b.leading_zeros() as usize),
    }
}
