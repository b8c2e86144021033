//! One PEM block of a `--service-account-key-file`, read as client-go's
//! `keyutil.ParsePublicKeysPEM` reads it: the block is tried as an RSA private key
//! (`x509.ParsePKCS1PrivateKey`, then `ParsePKCS8PrivateKey` holding RSA), an RSA public key
//! (`ParsePKIXPublicKey`, then `ParseCertificate`), a SEC1 EC private key
//! (`ParseECPrivateKey`) and an EC public key (PKIX or certificate again); a block none of them
//! takes is no key (Kubernetes skips it).
//!
//! Each parser follows the Go rules that decide whether a block is a key: `encoding/asn1`'s
//! struct decoding (trailing bytes after a PKCS#8 or SEC1 structure and extra elements at the
//! end of a SEQUENCE are ignored, an optional explicitly tagged element whose inner tag does
//! not match is left unset, DER lengths and minimal INTEGERs), `cryptobyte` for the RSA key
//! inside a SubjectPublicKeyInfo (its trailing bytes ignored), RSA public keys with exactly
//! NULL parameters, EC public keys as uncompressed points (the curve check is aws-lc's, at
//! [`super::key::PublicKey`] construction), and an EC private key's public key derived from its
//! scalar (`ecdsa.ParseRawPrivateKey`), whatever the embedded one says.
//!
//! What is then done with the key (size limits, keys that can verify nothing) is
//! [`super::key::key_from_der`]'s business.

use aws_lc_rs::agreement;

use super::{der, key};

/// A key Go's parsers take from a block.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum GoKey {
    /// RSA: the modulus (big-endian magnitude, no leading zero) and the exponent (positive,
    /// below 2^63: Go's `int`).
    Rsa { n: Vec<u8>, e: u64 },
    /// ECDSA on a curve that can verify a JWS algorithm: the curve's OID (value bytes) and the
    /// uncompressed point (not yet checked to be on the curve).
    Ec {
        curve_oid: &'static [u8],
        point: Vec<u8>,
    },
    /// A key Go loads that verifies no JWS algorithm (P-224).
    P224,
}

/// The block as client-go's `ParsePublicKeysPEM` reads it; `None` when it is no key.
pub(crate) fn parse_block(der: &[u8]) -> Option<GoKey> {
    // parseRSAPrivateKey
    if let Some(k) = pkcs1_private(der).or_else(|| pkcs8_rsa(der)) {
        return Some(k);
    }
    // parseRSAPublicKey, then (after parseECPrivateKey) parseECPublicKey: one parse serves both.
    let public = pkix(der).or_else(|| certificate(der));
    if let Some(k @ GoKey::Rsa { .. }) = public {
        return Some(k);
    }
    sec1_private(der).or(public)
}

// --- encoding/asn1 ---------------------------------------------------------------------

const UNIVERSAL: u8 = 0;
const CONTEXT: u8 = 2;
const TAG_INTEGER: u64 = 2;
const TAG_BIT_STRING: u64 = 3;
const TAG_OCTET_STRING: u64 = 4;
const TAG_OID: u64 = 6;
const TAG_SEQUENCE: u64 = 16;

/// A tag and length as `encoding/asn1`'s `parseTagAndLength` reads them.
struct Header {
    class: u8,
    compound: bool,
    tag: u64,
    len: usize,
}

/// `parseTagAndLength`: the header at `off` and the offset of its contents (not checked to
/// fit: callers apply `invalidLength`).
fn header(bytes: &[u8], off: usize) -> Option<(Header, usize)> {
    let mut at = off;
    let b = *bytes.get(at)?;
    at += 1;
    let mut tag = u64::from(b & 0x1f);
    if tag == 0x1f {
        // parseBase128Int: at most 5 bytes, the first not 0x80, the value an int32; then
        // "non-minimal tag".
        tag = 0;
        for shifted in 0.. {
            let c = *bytes.get(at)?;
            if shifted == 5 || (shifted == 0 && c == 0x80) {
                return None;
            }
            at += 1;
            tag = (tag << 7) | u64::from(c & 0x7f);
            if c & 0x80 == 0 {
                break;
            }
        }
        if tag > i32::MAX as u64 || tag < 0x1f {
            return None;
        }
    }
    let b = *bytes.get(at)?;
    at += 1;
    let len = if b & 0x80 == 0 {
        usize::from(b & 0x7f)
    } else {
        let n = usize::from(b & 0x7f);
        if n == 0 {
            return None; // indefinite length
        }
        let mut len = 0usize;
        for _ in 0..n {
            let c = *bytes.get(at)?;
            at += 1;
            if len >= 1 << 23 {
                return None; // length too large
            }
            len = (len << 8) | usize::from(c);
            if len == 0 {
                return None; // superfluous leading zeros
            }
        }
        if len < 0x80 {
            return None; // non-minimal length
        }
        len
    };
    Some((
        Header {
            class: bytes[off] >> 6,
            compound: bytes[off] & 0x20 != 0,
            tag,
            len,
        },
        at,
    ))
}

/// The elements of a SEQUENCE decoded into a Go struct, field by field (`parseField`).
/// `None` from a method is a decoding error.
struct Fields<'a> {
    bytes: &'a [u8],
    off: usize,
}

impl<'a> Fields<'a> {
    /// `asn1.Unmarshal` into a struct: the SEQUENCE at the start of `input` and the bytes
    /// after it.
    fn unmarshal(input: &'a [u8]) -> Option<(Fields<'a>, &'a [u8])> {
        let (h, at) = header(input, 0)?;
        let end = at.checked_add(h.len).filter(|&e| e <= input.len())?;
        (h.class == UNIVERSAL && h.tag == TAG_SEQUENCE && h.compound).then(|| {
            (
                Fields {
                    bytes: &input[at..end],
                    off: 0,
                },
                &input[end..],
            )
        })
    }

    /// The contents of a TLV at the current offset, advancing past it.
    fn take(&mut self, at: usize, len: usize) -> Option<&'a [u8]> {
        let end = at.checked_add(len).filter(|&e| e <= self.bytes.len())?;
        self.off = end;
        Some(&self.bytes[at..end])
    }

    /// A field of a universal type that is not optional: its contents.
    fn required(&mut self, tag: u64, compound: bool) -> Option<&'a [u8]> {
        self.optional(tag, compound)?
    }

    /// An optional field of a universal type: `Some(None)` when absent or another element.
    fn optional(&mut self, tag: u64, compound: bool) -> Option<Option<&'a [u8]>> {
        if self.off == self.bytes.len() {
            return Some(None);
        }
        let (h, at) = header(self.bytes, self.off)?;
        if h.class != UNIVERSAL || h.tag != tag || h.compound != compound {
            return Some(None);
        }
        self.take(at, h.len).map(Some)
    }

    /// A required SEQUENCE field decoded into a nested struct.
    fn sequence(&mut self) -> Option<Fields<'a>> {
        let bytes = self.required(TAG_SEQUENCE, true)?;
        Some(Fields { bytes, off: 0 })
    }

    /// A required `int` field (`parseInt64`).
    fn int64(&mut self) -> Option<i64> {
        int64(self.required(TAG_INTEGER, false)?)
    }

    /// A `*big.Int` field: its two's-complement contents (minimal).
    fn big_int(&mut self) -> Option<&'a [u8]> {
        self.required(TAG_INTEGER, false)
            .filter(|b| minimal_integer(b))
    }

    /// An optional `*big.Int` field.
    fn optional_big_int(&mut self) -> Option<Option<&'a [u8]>> {
        match self.optional(TAG_INTEGER, false)? {
            Some(b) if !minimal_integer(b) => None,
            v => Some(v),
        }
    }

    /// An `asn1.RawValue` field marked optional: the whole element, whatever its tag.
    fn optional_raw(&mut self) -> Option<Option<&'a [u8]>> {
        if self.off == self.bytes.len() {
            return Some(None);
        }
        let start = self.off;
        let (h, at) = header(self.bytes, start)?;
        self.take(at, h.len)?;
        Some(Some(&self.bytes[start..self.off]))
    }

    /// An optional field marked `explicit,tag:N` of universal type `inner`: the inner
    /// element's contents. Go reads the inner header from the struct's bytes (not bounded by
    /// the tag's length), and an inner element of another type leaves the field unset and the
    /// offset where it was.
    fn optional_explicit(&mut self, n: u64, inner: u64) -> Option<Option<&'a [u8]>> {
        if self.off == self.bytes.len() {
            return Some(None);
        }
        let (h, at) = header(self.bytes, self.off)?;
        if at == self.bytes.len() {
            return None; // "explicit tag has no child"
        }
        if !(h.class == CONTEXT && h.tag == n && (h.len == 0 || h.compound)) {
            return Some(None);
        }
        if h.len == 0 {
            return None; // "zero length explicit tag was not an asn1.Flag"
        }
        let (h2, at2) = header(self.bytes, at)?;
        if h2.class != UNIVERSAL || h2.tag != inner || h2.compound {
            return Some(None);
        }
        self.take(at2, h2.len).map(Some)
    }

    /// A `asn1.BitString` field: `parseBitString`'s checks, then the bytes `RightAlign` returns.
    fn bit_string(&mut self) -> Option<Vec<u8>> {
        crate::x509::der::right_align(self.required(TAG_BIT_STRING, false)?)
    }
}

/// `checkInteger`: non-empty and minimally encoded.
fn minimal_integer(b: &[u8]) -> bool {
    match b {
        [] => false,
        [_] => true,
        [0x00, next, ..] => next & 0x80 != 0,
        [0xff, next, ..] => next & 0x80 == 0,
        _ => true,
    }
}

/// `parseInt64`.
fn int64(b: &[u8]) -> Option<i64> {
    if !minimal_integer(b) || b.len() > 8 {
        return None;
    }
    let mut v: i64 = if b[0] & 0x80 != 0 { -1 } else { 0 };
    for &c in b {
        v = (v << 8) | i64::from(c);
    }
    Some(v)
}

// --- cryptobyte (the RSA key inside a SubjectPublicKeyInfo) -----------------------------

/// `cryptobyte.String.ReadASN1` of a low-numbered `tag` byte: `(contents, rest)`.
fn cb_read(tag: u8, s: &[u8]) -> Option<(&[u8], &[u8])> {
    let (&t, rest) = s.split_first()?;
    let (&l, rest) = rest.split_first()?;
    if t & 0x1f == 0x1f || t != tag {
        return None;
    }
    let (len, rest) = if l & 0x80 == 0 {
        (usize::from(l), rest)
    } else {
        let n = usize::from(l & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        if len < 128 || rest[0] == 0 {
            return None;
        }
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

// --- crypto/x509 ------------------------------------------------------------------------

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const NULL: &[u8] = &[0x05, 0x00];

/// A named curve Go knows (`namedCurveFromOID`).
struct Curve {
    /// The OID's value bytes.
    oid: &'static [u8],
    /// Bytes of a scalar and of a coordinate.
    size: usize,
    /// What derives a public point from a scalar here; `None` for P-224, which kube-authn does
    /// not load.
    ecdh: Option<&'static agreement::Algorithm>,
}

fn curve(oid: &[u8]) -> Option<Curve> {
    let (oid, size, ecdh): (&'static [u8], _, _) = match oid {
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07] => {
            (key::OID_P256, 32, Some(&agreement::ECDH_P256))
        }
        [0x2b, 0x81, 0x04, 0x00, 0x22] => (key::OID_P384, 48, Some(&agreement::ECDH_P384)),
        [0x2b, 0x81, 0x04, 0x00, 0x23] => (key::OID_P521, 66, Some(&agreement::ECDH_P521)),
        [0x2b, 0x81, 0x04, 0x00, 0x21] => (&[0x2b, 0x81, 0x04, 0x00, 0x21], 28, None),
        _ => return None,
    };
    Some(Curve { oid, size, ecdh })
}

/// `x509.ParsePKCS1PrivateKey`: the structure (no trailing bytes, version at most 1, positive
/// values), then the key's consistency, checked by aws-lc (`RSA_check_key`) on the canonical
/// two-prime encoding for the sizes kube-authn accepts (other sizes are refused later with
/// their own error). Keys Go completes or checks itself and aws-lc cannot (no CRT values,
/// more than two primes) are no keys here.
fn pkcs1_private(input: &[u8]) -> Option<GoKey> {
    let (mut f, rest) = Fields::unmarshal(input)?;
    if !rest.is_empty() {
        return None; // "trailing data"
    }
    let version = f.int64()?;
    let n = f.big_int()?;
    let e = f.int64()?;
    let d = f.big_int()?;
    let p = f.big_int()?;
    let q = f.big_int()?;
    let crt = [
        f.optional_big_int()?,
        f.optional_big_int()?,
        f.optional_big_int()?,
    ];
    let more_primes = f
        .optional(TAG_SEQUENCE, true)?
        .is_some_and(|primes| !primes.is_empty());
    let positive = |b: &[u8]| b[0] & 0x80 == 0 && b != [0];
    if version > 1
        || ![n, d, p, q].into_iter().all(positive)
        || crt.iter().flatten().any(|b| !positive(b))
        || e <= 0
    {
        return None;
    }
    let n_bits = der::bit_len(n);
    if (key::MIN_RSA_BITS..=key::MAX_RSA_BITS).contains(&n_bits) {
        let [Some(dp), Some(dq), Some(qinv)] = crt else {
            return None;
        };
        if more_primes || !go_checks_private_key(n, e, d, p, q, dp, dq, qinv) {
            return None;
        }
        let mut body = Vec::with_capacity(input.len());
        der::write_tlv(&mut body, der::INTEGER, &[0]);
        for v in [n, &e.to_be_bytes(), d, p, q, dp, dq, qinv] {
            der::write_unsigned(&mut body, v);
        }
        let mut canonical = Vec::with_capacity(body.len() + 8);
        der::write_tlv(&mut canonical, der::SEQUENCE, &body);
        aws_lc_rs::rsa::KeyPair::from_der(&canonical).ok()?;
    }
    Some(GoKey::Rsa {
        n: magnitude(n),
        e: e as u64,
    })
}

/// What Go's `crypto/internal/fips140/rsa` (`NewPrivateKeyWithPrecomputation` and
/// `checkPrivateKey`, run by `rsa.PrivateKey.Validate` from `x509.ParsePKCS1PrivateKey`) refuses
/// in a two-prime key with its CRT values, beyond what aws-lc's `RSA_check_key` checks (the
/// products and congruences): a value at or above its modulus (`d` and `p`, `q` not below `n`,
/// `qInv` not below `p`: "input overflows the modulus size" / "invalid prime"; `dP`, `dQ` not
/// below `p - 1`, `q - 1`: "invalid CRT exponent"), a prime of at most 2, an even modulus, an
/// exponent that is even, below 2 or above 2^31 - 1, `p == q`, `|p - q|` of at most
/// `nlen/2 - 100` bits ("|p - q| too small") and `d` of at most `nlen/2` bits ("d too small").
/// All values are positive minimal INTEGER contents.
#[allow(clippy::too_many_arguments)]
fn go_checks_private_key(
    n: &[u8],
    e: i64,
    d: &[u8],
    p: &[u8],
    q: &[u8],
    dp: &[u8],
    dq: &[u8],
    qinv: &[u8],
) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    let (n, d, p, q, dp, dq, qinv) = (
        trim(n),
        trim(d),
        trim(p),
        trim(q),
        trim(dp),
        trim(dq),
        trim(qinv),
    );
    let two: &[u8] = &[2];
    let n_bits = der::bit_len(n);
    let p_minus_1 = sub(p, &[1]);
    let q_minus_1 = sub(q, &[1]);
    let diff = match cmp(p, q) {
        Greater => sub(p, q),
        Less => sub(q, p),
        _ => return false, // "p == q"
    };
    n.last().is_some_and(|b| b & 1 == 1)
        && (2..=i64::from(i32::MAX)).contains(&e)
        && e & 1 == 1
        && cmp(d, n) == Less
        && cmp(p, n) == Less
        && cmp(q, n) == Less
        && cmp(p, two) == Greater
        && cmp(q, two) == Greater
        && cmp(qinv, p) == Less
        && cmp(dp, &p_minus_1) == Less
        && cmp(dq, &q_minus_1) == Less
        && der::bit_len(&diff) > (n_bits / 2).saturating_sub(100)
        && der::bit_len(d) > n_bits / 2
}

/// A big-endian magnitude without its leading zeros.
fn trim(b: &[u8]) -> &[u8] {
    &b[b.iter().take_while(|&&c| c == 0).count()..]
}

/// Compares two big-endian magnitudes without leading zeros.
fn cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (a, b) = (trim(a), trim(b));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `a - b` of big-endian magnitudes, `a >= b`.
fn sub(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = a.to_vec();
    let mut borrow = 0u16;
    for i in 0..out.len() {
        let x = u16::from(out[out.len() - 1 - i]);
        let y = u16::from(b.len().checked_sub(1 + i).map_or(0, |j| b[j])) + borrow;
        let at = out.len() - 1 - i;
        if x >= y {
            out[at] = (x - y) as u8;
            borrow = 0;
        } else {
            out[at] = (x + 256 - y) as u8;
            borrow = 1;
        }
    }
    out
}

/// A positive minimal INTEGER's magnitude (its sign byte dropped).
fn magnitude(b: &[u8]) -> Vec<u8> {
    b.strip_prefix(&[0]).unwrap_or(b).to_vec()
}

/// `x509.ParsePKCS8PrivateKey` of an RSA key (any other algorithm is not an RSA key).
fn pkcs8_rsa(input: &[u8]) -> Option<GoKey> {
    let (mut f, _trailing) = Fields::unmarshal(input)?;
    f.int64()?;
    let mut alg = f.sequence()?;
    let oid = alg.required(TAG_OID, false)?;
    alg.optional_raw()?;
    let private = f.required(TAG_OCTET_STRING, false)?;
    (oid == OID_RSA).then(|| pkcs1_private(private)).flatten()
}

/// `x509.ParsePKIXPublicKey` (no trailing bytes) then `parsePublicKey` for RSA and ECDSA.
fn pkix(input: &[u8]) -> Option<GoKey> {
    let (f, rest) = Fields::unmarshal(input)?;
    if !rest.is_empty() {
        return None; // "trailing data after ASN.1 of public-key"
    }
    public_key_info(f)
}

/// `parsePublicKey` on a decoded `publicKeyInfo` (its algorithm and bit string).
fn public_key_info(mut f: Fields<'_>) -> Option<GoKey> {
    let mut alg = f.sequence()?;
    let oid = alg.required(TAG_OID, false)?;
    let params = alg.optional_raw()?.unwrap_or(&[]);
    let data = f.bit_string()?;
    if oid == OID_RSA {
        if params != NULL {
            return None; // "RSA key missing NULL parameters"
        }
        let (key, _) = cb_read(0x30, &data)?;
        let (n, key) = cb_read(0x02, key)?;
        let (e, _) = cb_read(0x02, key)?;
        if !minimal_integer(n) || n[0] & 0x80 != 0 || n == [0] {
            return None; // invalid, or not a positive number
        }
        let e = int64(e).filter(|&e| e > 0)?;
        return Some(GoKey::Rsa {
            n: magnitude(n),
            e: e as u64,
        });
    }
    if oid == OID_EC {
        let (oid, rest) = cb_read(0x06, params)?;
        if !rest.is_empty() {
            return None;
        }
        let curve = curve(oid)?;
        // `ecdsa.ParseUncompressedPublicKey`: 0x04 || X || Y (on the curve: aws-lc's check).
        if data.first() != Some(&4) || data.len() != 1 + 2 * curve.size {
            return None;
        }
        if curve.ecdh.is_none() {
            return Some(GoKey::P224);
        }
        return Some(GoKey::Ec {
            curve_oid: curve.oid,
            point: data,
        });
    }
    None
}

/// `x509.ParseCertificate` ([`crate::x509::go_parse::go_parses_certificate`]; x509-parser
/// too, which the crate reads certificates with), then the same `parsePublicKey` on its
/// SubjectPublicKeyInfo.
fn certificate(input: &[u8]) -> Option<GoKey> {
    let (f, _) = Fields::unmarshal(certificate_spki(input)?)?;
    public_key_info(f)
}

/// The SubjectPublicKeyInfo (DER) of a certificate Go's `x509.ParseCertificate` takes (the
/// checks of [`certificate`]), `None` when it would refuse it. Also what go-jose requires of a
/// JWK's `x5c` entries.
pub(crate) fn certificate_spki(input: &[u8]) -> Option<&[u8]> {
    if !matches!(x509_parser::parse_x509_certificate(input), Ok(([], _))) {
        return None;
    }
    if crate::x509::go_parse::go_parses_certificate(input).is_err() {
        return None;
    }
    spki_of_certificate(input)
}

/// `x509.ParsePKIXPublicKey` for the RSA and EC keys Go's key-file parsers take (`None` for
/// anything else, Ed25519 included).
pub(crate) fn pkix_key(spki: &[u8]) -> Option<GoKey> {
    pkix(spki)
}

/// The SubjectPublicKeyInfo inside an X.509 certificate.
fn spki_of_certificate(input: &[u8]) -> Option<&[u8]> {
    let cert = der::exact(der::SEQUENCE, input)?;
    let (tbs, _) = der::expect(der::SEQUENCE, cert)?;
    let mut rest = tbs;
    if rest.first() == Some(&0xa0) {
        rest = der::read_tlv(rest)?.2; // [0] version
    }
    let (_, rest) = der::expect(der::INTEGER, rest)?; // serial
    let (_, rest) = der::expect(der::SEQUENCE, rest)?; // signature algorithm
    let (_, rest) = der::expect(der::SEQUENCE, rest)?; // issuer
    let (_, rest) = der::expect(der::SEQUENCE, rest)?; // validity
    let (_, rest) = der::expect(der::SEQUENCE, rest)?; // subject
    let (_, after) = der::expect(der::SEQUENCE, rest)?; // subjectPublicKeyInfo
    Some(&rest[..rest.len() - after.len()])
}

/// `x509.ParseECPrivateKey` (SEC1): the structure (version 1, the named curve in `[0]`, an
/// embedded public key in `[1]` decoded but not used), the scalar with Go's tolerance for
/// leading zeros, and the public key derived from it.
fn sec1_private(input: &[u8]) -> Option<GoKey> {
    let (mut f, _trailing) = Fields::unmarshal(input)?;
    let version = f.int64()?;
    let scalar = f.required(TAG_OCTET_STRING, false)?;
    let oid = f.optional_explicit(0, TAG_OID)?;
    if let Some(bits) = f.optional_explicit(1, TAG_BIT_STRING)? {
        crate::x509::der::right_align(bits)?;
    }
    if version != 1 {
        return None;
    }
    let curve = curve(oid?)?;
    // "Some private keys have leading zero padding" / "remove all leading zeros".
    let mut scalar = scalar;
    while scalar.len() > curve.size {
        scalar = scalar.strip_prefix(&[0])?;
    }
    let mut padded = vec![0u8; curve.size];
    padded[curve.size - scalar.len()..].copy_from_slice(scalar);
    let Some(ecdh) = curve.ecdh else {
        return Some(GoKey::P224);
    };
    // `ecdsa.ParseRawPrivateKey`: 1 <= d < n, public point d·G.
    let private = agreement::PrivateKey::from_private_key(ecdh, &padded).ok()?;
    let point = private.compute_public_key().ok()?.as_ref().to_vec();
    Some(GoKey::Ec {
        curve_oid: curve.oid,
        point,
    })
}
