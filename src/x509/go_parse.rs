//! Whether Go's `x509.ParseCertificate` (`crypto/x509/parser.go`, Go 1.26) parses a DER
//! certificate, with its error text when it does not.
//!
//! Kubernetes parses every certificate it is given before using any: a CA bundle
//! (`cert.ParseCertsPEM`, which fails the whole bundle), a `--service-account-key-file` block
//! (`keyutil.ParsePublicKeysPEM`, which skips it) and every certificate a TLS client presents
//! (the handshake fails). x509-parser, which the crate uses to read certificates, accepts many
//! that Go refuses; [`go_parses_certificate`] is run besides it so that such a certificate is
//! refused where Go refuses it.
//!
//! The port follows `parseCertificate` step by step with `cryptobyte`'s DER rules (minimal
//! lengths, low tag numbers, minimal INTEGERs), including what Go ignores: bytes after the
//! signature inside the certificate SEQUENCE, after the last field Go reads of the TBS, after
//! an algorithm's parameters or after an extension's value. Not ported (Go refuses, this
//! accepts): a P-224 public key that is not on the curve, `net/url.Parse` errors of a SAN URI
//! other than control characters, and an rfc822Name name constraint holding an `@` that
//! `parseRFC2821Mailbox` refuses.

use std::borrow::Cow;
use std::collections::HashSet;

/// Go's verdict: `Err` holds its error text.
pub(crate) type Verdict = Result<(), Cow<'static, str>>;

const BOOLEAN: u8 = 0x01;
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;
const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;

/// `cryptobyte.String`: DER elements read from the front.
#[derive(Clone, Copy)]
struct S<'a>(&'a [u8]);

impl<'a> S<'a> {
    fn empty(&self) -> bool {
        self.0.is_empty()
    }

    fn peek(&self, tag: u8) -> bool {
        self.0.first() == Some(&tag)
    }

    /// `ReadAnyASN1Element`: `(tag, contents, whole element)`.
    fn any(&mut self) -> Option<(u8, &'a [u8], &'a [u8])> {
        let s = self.0;
        let (&tag, &len_byte) = (s.first()?, s.get(1)?);
        if tag & 0x1f == 0x1f {
            return None;
        }
        let (header, len) = if len_byte & 0x80 == 0 {
            (2, usize::from(len_byte))
        } else {
            let n = usize::from(len_byte & 0x7f);
            if n == 0 || n > 4 || s.len() < 2 + n {
                return None;
            }
            let len = s[2..2 + n]
                .iter()
                .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
            if len < 128 || len >> ((n - 1) * 8) == 0 {
                return None;
            }
            (2 + n, len)
        };
        let end = header.checked_add(len).filter(|&e| e <= s.len())?;
        self.0 = &s[end..];
        Some((tag, &s[header..end], &s[..end]))
    }

    /// `ReadASN1`: the contents of an element of this tag.
    fn read(&mut self, tag: u8) -> Option<&'a [u8]> {
        self.any().filter(|(t, _, _)| *t == tag).map(|(_, c, _)| c)
    }

    /// `ReadASN1Element`.
    fn element(&mut self, tag: u8) -> Option<&'a [u8]> {
        self.any().filter(|(t, _, _)| *t == tag).map(|(_, _, e)| e)
    }

    /// `ReadOptionalASN1`: `Some(None)` when the next element has another tag.
    fn optional(&mut self, tag: u8) -> Option<Option<&'a [u8]>> {
        if self.peek(tag) {
            self.read(tag).map(Some)
        } else {
            Some(None)
        }
    }

    /// `ReadASN1Integer` into a `*big.Int`: the contents.
    fn big_int(&mut self) -> Option<&'a [u8]> {
        self.read(INTEGER).filter(|b| integer_ok(b))
    }

    /// `ReadASN1Integer` into an `int` (`int64`).
    fn int64(&mut self, tag: u8) -> Option<i64> {
        let b = self.read(tag).filter(|b| integer_ok(b) && b.len() <= 8)?;
        Some(
            b.iter()
                .fold(if b[0] & 0x80 != 0 { -1i64 } else { 0 }, |v, &c| {
                    (v << 8) | i64::from(c)
                }),
        )
    }

    /// `ReadASN1ObjectIdentifier`: the components.
    fn oid(&mut self) -> Option<Vec<u64>> {
        oid_components(self.read(OID)?)
    }

    /// `ReadASN1BitString`: the padding checks.
    fn bit_string(&mut self) -> Option<&'a [u8]> {
        let b = self.read(BIT_STRING)?;
        let (&padding, bytes) = b.split_first()?;
        let bad = padding > 7
            || (bytes.is_empty() && padding != 0)
            || bytes
                .last()
                .is_some_and(|l| l & ((1u8 << padding) - 1) != 0);
        (!bad).then_some(b)
    }
}

/// cryptobyte's `checkASN1Integer`.
fn integer_ok(b: &[u8]) -> bool {
    match b {
        [] => false,
        [0x00, next, ..] => next & 0x80 != 0,
        [0xff, next, ..] => next & 0x80 == 0,
        _ => true,
    }
}

/// Whether `ReadASN1ObjectIdentifier` decodes these OBJECT IDENTIFIER contents.
pub(crate) fn oid_valid(b: &[u8]) -> bool {
    oid_components(b).is_some()
}

/// `ReadASN1ObjectIdentifier`'s decoding: non-empty, each arc minimal and below 2^31.
fn oid_components(mut b: &[u8]) -> Option<Vec<u64>> {
    if b.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() + 1);
    let mut first = true;
    while !b.is_empty() {
        let mut v: u64 = 0;
        let mut i = 0;
        loop {
            if i == 5 || v >= 1 << (31 - 7) {
                return None;
            }
            let (&c, rest) = b.split_first()?;
            b = rest;
            if i == 0 && c == 0x80 {
                return None;
            }
            v = (v << 7) | u64::from(c & 0x7f);
            i += 1;
            if c & 0x80 == 0 {
                break;
            }
        }
        if first {
            if v < 80 {
                out.extend([v / 40, v % 40]);
            } else {
                out.extend([2, v - 80]);
            }
            first = false;
        } else {
            out.push(v);
        }
    }
    Some(out)
}

fn dotted(oid: &[u64]) -> String {
    oid.iter().map(u64::to_string).collect::<Vec<_>>().join(".")
}

fn err<T>(text: &'static str) -> Result<T, Cow<'static, str>> {
    Err(Cow::Borrowed(text))
}

/// `x509.ParseCertificate(der)`: `Ok(())` when Go parses it, otherwise Go's error text.
pub(crate) fn go_parses_certificate(der: &[u8]) -> Verdict {
    go_parse_certificate(der).map(|_| ())
}

/// [`go_parses_certificate`], answering the OID of the subject public key's algorithm when Go
/// parses the certificate (what Go's `Certificate.PublicKey` is typed by).
pub(crate) fn go_parse_certificate(der: &[u8]) -> Result<Vec<u64>, Cow<'static, str>> {
    let mut input = S(der);
    let raw = input
        .element(SEQUENCE)
        .ok_or(Cow::Borrowed("x509: malformed certificate"))?;
    let mut input = S(raw);
    let Some(body) = input.read(SEQUENCE) else {
        return err("x509: malformed certificate");
    };
    let mut input = S(body);
    let Some(tbs) = input.element(SEQUENCE) else {
        return err("x509: malformed tbs certificate");
    };
    let Some(tbs) = S(tbs).read(SEQUENCE) else {
        return err("x509: malformed tbs certificate");
    };
    let mut tbs = S(tbs);

    // Version: [0] EXPLICIT INTEGER DEFAULT 0.
    let version = match tbs.optional(0xa0) {
        None => return err("x509: malformed version"),
        Some(None) => 0,
        Some(Some(v)) => {
            let mut v = S(v);
            match v.int64(INTEGER) {
                Some(n) if v.empty() && n >= 0 => n,
                _ => return err("x509: malformed version"),
            }
        }
    } + 1;
    if version > 3 {
        return err("x509: invalid version");
    }

    let Some(serial) = tbs.big_int() else {
        return err("x509: malformed serial number");
    };
    if serial[0] & 0x80 != 0 {
        return err("x509: negative serial number");
    }

    let Some(sig_ai) = tbs.read(SEQUENCE) else {
        return err("x509: malformed signature algorithm identifier");
    };
    let Some(outer_ai) = input.read(SEQUENCE) else {
        return err("x509: malformed algorithm identifier");
    };
    if outer_ai != sig_ai {
        return err("x509: inner and outer signature algorithm identifiers don't match");
    }
    parse_ai(sig_ai)?;

    let Some(issuer) = tbs.element(SEQUENCE) else {
        return err("x509: malformed issuer");
    };
    parse_name(issuer)?;

    let Some(validity) = tbs.read(SEQUENCE) else {
        return err("x509: malformed validity");
    };
    let mut validity = S(validity);
    parse_time(&mut validity)?;
    parse_time(&mut validity)?;

    let Some(subject) = tbs.element(SEQUENCE) else {
        return err("x509: malformed issuer");
    };
    parse_name(subject)?;

    let Some(spki) = tbs.element(SEQUENCE).and_then(|e| S(e).read(SEQUENCE)) else {
        return err("x509: malformed spki");
    };
    let mut spki = S(spki);
    let Some(pk_ai) = spki.read(SEQUENCE) else {
        return err("x509: malformed public key algorithm identifier");
    };
    let (alg, params) = parse_ai(pk_ai)?;
    let Some(key) = spki.bit_string() else {
        return err("x509: malformed subjectPublicKey");
    };
    parse_public_key(&alg, params, key)?;

    if version > 1 {
        if tbs.peek(0x81) && tbs.read(0x81).is_none() {
            return err("x509: malformed issuerUniqueID");
        }
        if tbs.peek(0x82) && tbs.read(0x82).is_none() {
            return err("x509: malformed subjectUniqueID");
        }
        if version == 3 {
            let Some(extensions) = tbs.optional(0xa3) else {
                return err("x509: malformed extensions");
            };
            if let Some(extensions) = extensions {
                let Some(list) = S(extensions).read(SEQUENCE) else {
                    return err("x509: malformed extensions");
                };
                let mut list = S(list);
                // Repeats are found by comparing OIDs: a scan of the few extensions a
                // certificate has, and a set once there are more (bounded work for a
                // certificate with thousands). The dotted form is written only for the error.
                const SCAN: usize = 16;
                let mut seen: HashSet<Vec<u64>> = HashSet::new();
                let mut all: Vec<Extension<'_>> = Vec::new();
                while !list.empty() {
                    let Some(ext) = list.read(SEQUENCE) else {
                        return err("x509: malformed extension");
                    };
                    let ext = parse_extension(ext)?;
                    let repeated = if all.len() < SCAN {
                        all.iter().any(|(id, _, _)| *id == ext.0)
                    } else {
                        if seen.is_empty() {
                            seen.extend(all.iter().map(|(id, _, _)| id.clone()));
                        }
                        !seen.insert(ext.0.clone())
                    };
                    if repeated {
                        return Err(Cow::Owned(format!(
                            "x509: certificate contains duplicate extension with OID \"{}\"",
                            dotted(&ext.0)
                        )));
                    }
                    all.push(ext);
                }
                for (id, critical, value) in all {
                    process_extension(&id, critical, value)?;
                }
            }
        }
    }

    if input.bit_string().is_none() {
        return err("x509: malformed signature");
    }
    if raw.len() != der.len() {
        return err("x509: trailing data");
    }
    Ok(alg)
}

/// `parseAI`: the algorithm's OID and its parameters element (empty when absent).
fn parse_ai(ai: &[u8]) -> Result<(Vec<u64>, &[u8]), Cow<'static, str>> {
    let mut s = S(ai);
    let Some(oid) = s.oid() else {
        return err("x509: malformed OID");
    };
    if s.empty() {
        return Ok((oid, &[]));
    }
    match s.any() {
        Some((_, _, params)) => Ok((oid, params)),
        None => err("x509: malformed parameters"),
    }
}

/// `parseName`: an RDNSequence whose every value is a string `parseASN1String` decodes.
fn parse_name(name: &[u8]) -> Verdict {
    let Some(rdns) = S(name).read(SEQUENCE) else {
        return err("x509: invalid RDNSequence");
    };
    let mut rdns = S(rdns);
    while !rdns.empty() {
        let Some(set) = rdns.read(SET) else {
            return err("x509: invalid RDNSequence");
        };
        let mut set = S(set);
        while !set.empty() {
            let Some(atav) = set.read(SEQUENCE) else {
                return err("x509: invalid RDNSequence: invalid attribute");
            };
            let mut atav = S(atav);
            if atav.oid().is_none() {
                return err("x509: invalid RDNSequence: invalid attribute type");
            }
            let Some((tag, value, _)) = atav.any() else {
                return err("x509: invalid RDNSequence: invalid attribute value");
            };
            let why = match super::subject::asn1_string(super::der::Tlv {
                tag,
                content: value,
            }) {
                Some(Ok(_)) => continue,
                None => {
                    return Err(Cow::Owned(format!(
                        "x509: invalid RDNSequence: invalid attribute value: unsupported string type: {tag}"
                    )));
                }
                Some(Err(())) => match tag {
                    0x13 => "invalid PrintableString",
                    0x0c => "invalid UTF-8 string",
                    0x1e => "invalid BMPString",
                    0x16 => "invalid IA5String",
                    _ => "invalid NumericString",
                },
            };
            return Err(Cow::Owned(format!(
                "x509: invalid RDNSequence: invalid attribute value: {why}"
            )));
        }
    }
    Ok(())
}

/// `parseTime`: cryptobyte's UTCTime / GeneralizedTime readers, which parse with Go's layouts
/// and require the text to be what Go would format back.
fn parse_time(s: &mut S<'_>) -> Verdict {
    if s.peek(UTC_TIME) {
        match s.read(UTC_TIME) {
            Some(t) if go_time(t, false) => Ok(()),
            _ => err("x509: malformed UTCTime"),
        }
    } else if s.peek(GENERALIZED_TIME) {
        match s.read(GENERALIZED_TIME) {
            Some(t) if go_time(t, true) => Ok(()),
            _ => err("x509: malformed GeneralizedTime"),
        }
    } else {
        err("x509: unsupported time format")
    }
}

/// Whether `time.Parse(layout, t)` succeeds and `Format(layout)` gives `t` back, for
/// `060102150405Z0700` (or, failing that, `0601021504Z0700`) or `20060102150405Z0700`:
/// digits only, a valid date and time, then `Z` or a non-zero `±hhmm` offset (hours at most
/// 24, minutes at most 59).
fn go_time(t: &[u8], generalized: bool) -> bool {
    let year_len = if generalized { 4 } else { 2 };
    let num = |b: &[u8]| -> Option<u32> {
        b.iter()
            .all(u8::is_ascii_digit)
            .then(|| b.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let with_seconds = |t: &[u8], seconds: bool| -> bool {
        let fixed = year_len + 8 + if seconds { 2 } else { 0 };
        let Some((digits, zone)) = t.split_at_checked(fixed) else {
            return false;
        };
        let Some(year) = num(&digits[..year_len]) else {
            return false;
        };
        let f = |i: usize| num(&digits[year_len + i..year_len + i + 2]);
        let (Some(mo), Some(d), Some(h), Some(mi)) = (f(0), f(2), f(4), f(6)) else {
            return false;
        };
        let sec = if seconds { f(8) } else { Some(0) };
        let Some(sec) = sec else { return false };
        let year = if generalized {
            year
        } else if year >= 69 {
            1900 + year
        } else {
            2000 + year
        };
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match mo {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let date_ok =
            (1..=12).contains(&mo) && (1..=days).contains(&d) && h < 24 && mi < 60 && sec < 60;
        let zone_ok = match zone {
            b"Z" => true,
            [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 4 => {
                let _ = sign;
                match (num(&rest[..2]), num(&rest[2..])) {
                    (Some(zh), Some(zm)) => zh <= 24 && zm < 60 && (zh, zm) != (0, 0),
                    _ => false,
                }
            }
            _ => false,
        };
        date_ok && zone_ok
    };
    with_seconds(t, true) || (!generalized && with_seconds(t, false))
}

const OID_RSA: &[u64] = &[1, 2, 840, 113_549, 1, 1, 1];
const OID_DSA: &[u64] = &[1, 2, 840, 10040, 4, 1];
const OID_ECDSA: &[u64] = &[1, 2, 840, 10045, 2, 1];
const OID_ED25519: &[u64] = &[1, 3, 101, 112];

/// `parsePublicKey` for the algorithms `getPublicKeyAlgorithmFromOID` knows (others are not
/// parsed). `bits` is the BIT STRING's contents (checked: whole bytes are what is read).
fn parse_public_key(alg: &[u64], params: &[u8], bits: &[u8]) -> Verdict {
    // RightAlign: the padding bits are zero (checked), so the key bytes are the shifted ones;
    // the DER readers below see them as Go does.
    let data = super::der::right_align(bits).unwrap_or_default();
    let data = data.as_slice();
    if alg == OID_RSA {
        if params != [0x05, 0x00] {
            return err("x509: RSA key missing NULL parameters");
        }
        let Some(key) = S(data).read(SEQUENCE) else {
            return err("x509: invalid RSA public key");
        };
        let mut key = S(key);
        let Some(n) = key.big_int() else {
            return err("x509: invalid RSA modulus");
        };
        let Some(e) = key.int64(INTEGER) else {
            return err("x509: invalid RSA public exponent");
        };
        if n[0] & 0x80 != 0 || n == [0] {
            return err("x509: RSA modulus is not a positive number");
        }
        if e <= 0 {
            return err("x509: RSA public exponent is not a positive number");
        }
        return Ok(());
    }
    if alg == OID_ECDSA {
        let Some(curve) = S(params).oid() else {
            return err("x509: invalid ECDSA parameters");
        };
        let (name, size, algorithm): (
            _,
            usize,
            Option<&'static aws_lc_rs::signature::EcdsaVerificationAlgorithm>,
        ) = match curve.as_slice() {
            [1, 3, 132, 0, 33] => ("P224", 28, None),
            [1, 2, 840, 10045, 3, 1, 7] => (
                "P256",
                32,
                Some(&aws_lc_rs::signature::ECDSA_P256_SHA256_ASN1),
            ),
            [1, 3, 132, 0, 34] => (
                "P384",
                48,
                Some(&aws_lc_rs::signature::ECDSA_P384_SHA384_ASN1),
            ),
            [1, 3, 132, 0, 35] => (
                "P521",
                66,
                Some(&aws_lc_rs::signature::ECDSA_P521_SHA512_ASN1),
            ),
            _ => return err("x509: unsupported elliptic curve"),
        };
        if data.first() != Some(&4) {
            return err("ecdsa: invalid uncompressed public key");
        }
        if data.len() != 1 + 2 * size {
            return Err(Cow::Owned(format!("invalid {name} point encoding")));
        }
        if let Some(algorithm) = algorithm
            && aws_lc_rs::signature::ParsedPublicKey::new(algorithm, data).is_err()
        {
            return Err(Cow::Owned(format!("{name} point not on curve")));
        }
        return Ok(());
    }
    if alg == OID_ED25519 {
        if !params.is_empty() {
            return err("x509: Ed25519 key encoded with illegal parameters");
        }
        if data.len() != 32 {
            return err("x509: wrong Ed25519 public key size");
        }
        return Ok(());
    }
    if alg == OID_DSA {
        let Some(y) = S(data).big_int() else {
            return err("x509: invalid DSA public key");
        };
        let Some(p) = S(params).read(SEQUENCE) else {
            return err("x509: invalid DSA parameters");
        };
        let mut p = S(p);
        let (Some(pp), Some(q), Some(g)) = (p.big_int(), p.big_int(), p.big_int()) else {
            return err("x509: invalid DSA parameters");
        };
        if [y, pp, q, g].iter().any(|v| v[0] & 0x80 != 0 || *v == [0]) {
            return err("x509: zero or negative DSA parameter");
        }
    }
    Ok(())
}

/// An extension as `parseExtension` reads it: `(id, critical, value)`.
type Extension<'a> = (Vec<u64>, bool, &'a [u8]);

/// `parseExtension`.
fn parse_extension(ext: &[u8]) -> Result<Extension<'_>, Cow<'static, str>> {
    let mut s = S(ext);
    let Some(id) = s.oid() else {
        return err("x509: malformed extension OID field");
    };
    let mut critical = false;
    if s.peek(BOOLEAN) {
        critical = match s.read(BOOLEAN) {
            Some([0xff]) => true,
            Some([0x00]) => false,
            _ => return err("x509: malformed extension critical field"),
        };
    }
    let Some(value) = s.read(OCTET_STRING) else {
        return err("x509: malformed extension value field");
    };
    Ok((id, critical, value))
}

const OID_AIA: &[u64] = &[1, 3, 6, 1, 5, 5, 7, 1, 1];

/// `processExtensions`, one extension: the parsing errors (unhandled critical extensions are
/// not a parse error).
fn process_extension(id: &[u64], critical: bool, value: &[u8]) -> Verdict {
    match id {
        [2, 5, 29, 15] if S(value).bit_string().is_none() => {
            return err("x509: invalid key usage");
        }
        [2, 5, 29, 19] => {
            let Some(bc) = S(value).read(SEQUENCE) else {
                return err("x509: invalid basic constraints");
            };
            let mut bc = S(bc);
            if bc.peek(BOOLEAN) && !matches!(bc.read(BOOLEAN), Some([0x00 | 0xff])) {
                return err("x509: invalid basic constraints");
            }
            if bc.peek(INTEGER) {
                // A `uint` no larger than `math.MaxInt`.
                let ok = bc
                    .read(INTEGER)
                    .is_some_and(|b| integer_ok(b) && b[0] & 0x80 == 0 && b.len() <= 8);
                if !ok {
                    return err("x509: invalid basic constraints");
                }
            }
        }
        [2, 5, 29, 17] => san(value)?,
        [2, 5, 29, 30] => name_constraints(value)?,
        [2, 5, 29, 31] => crl_distribution_points(value)?,
        [2, 5, 29, 35] => {
            if critical {
                return err("x509: authority key identifier incorrectly marked critical");
            }
            let Some(akid) = S(value).read(SEQUENCE) else {
                return err("x509: invalid authority key identifier");
            };
            let mut akid = S(akid);
            if akid.peek(0x80) && akid.read(0x80).is_none() {
                return err("x509: invalid authority key identifier");
            }
        }
        [2, 5, 29, 36] => {
            let Some(pc) = S(value).read(SEQUENCE) else {
                return err("x509: invalid policy constraints extension");
            };
            let mut pc = S(pc);
            for tag in [0x80, 0x81] {
                if pc.peek(tag) && pc.int64(tag).is_none() {
                    return err("x509: invalid policy constraints extension");
                }
            }
        }
        [2, 5, 29, 37] => {
            let Some(list) = S(value).read(SEQUENCE) else {
                return err("x509: invalid extended key usages");
            };
            let mut list = S(list);
            while !list.empty() {
                if list.oid().is_none() {
                    return err("x509: invalid extended key usages");
                }
            }
        }
        [2, 5, 29, 14] => {
            if critical {
                return err("x509: subject key identifier incorrectly marked critical");
            }
            if S(value).read(OCTET_STRING).is_none() {
                return err("x509: invalid subject key identifier");
            }
        }
        [2, 5, 29, 32] => {
            let Some(list) = S(value).read(SEQUENCE) else {
                return err("x509: invalid certificate policies");
            };
            let mut list = S(list);
            let mut seen = HashSet::new();
            while !list.empty() {
                let oid = list.read(SEQUENCE).and_then(|cp| S(cp).read(OID));
                let Some(oid) = oid.filter(|o| policy_oid_ok(o) && seen.insert(*o)) else {
                    return err("x509: invalid certificate policies");
                };
                let _ = oid;
            }
        }
        [2, 5, 29, 33] => {
            let Some(list) = S(value).read(SEQUENCE) else {
                return err("x509: invalid policy mappings extension");
            };
            let mut list = S(list);
            while !list.empty() {
                let ok = list.read(SEQUENCE).is_some_and(|m| {
                    let mut m = S(m);
                    m.read(OID).is_some() && m.read(OID).is_some()
                });
                if !ok {
                    return err("x509: invalid policy mappings extension");
                }
            }
        }
        [2, 5, 29, 54] if S(value).int64(INTEGER).is_none() => {
            return err("x509: invalid inhibit any policy extension");
        }
        _ if id == OID_AIA => {
            if critical {
                return err("x509: authority info access incorrectly marked critical");
            }
            let Some(list) = S(value).read(SEQUENCE) else {
                return err("x509: invalid authority info access");
            };
            let mut list = S(list);
            while !list.empty() {
                let Some(aia) = list.read(SEQUENCE) else {
                    return err("x509: invalid authority info access");
                };
                let mut aia = S(aia);
                if aia.oid().is_none() {
                    return err("x509: invalid authority info access");
                }
                if aia.peek(0x86) && aia.read(0x86).is_none() {
                    return err("x509: invalid authority info access");
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// `newOIDFromDER`: non-empty, the last byte ends an arc, every arc minimal.
fn policy_oid_ok(der: &[u8]) -> bool {
    if der.last().is_none_or(|b| b & 0x80 != 0) {
        return false;
    }
    let mut start = true;
    for &b in der {
        if start && b == 0x80 {
            return false;
        }
        start = b & 0x80 == 0;
    }
    true
}

fn ia5(b: &[u8]) -> bool {
    b.is_ascii()
}

/// `parseSANExtension`.
fn san(value: &[u8]) -> Verdict {
    let Some(names) = S(value).read(SEQUENCE) else {
        return err("x509: invalid subject alternative names");
    };
    let mut names = S(names);
    while !names.empty() {
        let Some((tag, data, _)) = names.any() else {
            return err("x509: invalid subject alternative name");
        };
        match tag ^ 0x80 {
            1 if !ia5(data) => return err("x509: SAN rfc822Name is malformed"),
            2 if !ia5(data) => return err("x509: SAN dNSName is malformed"),
            6 => {
                if !ia5(data) {
                    return err("x509: SAN uniformResourceIdentifier is malformed");
                }
                if let Some(why) = uri_error(data) {
                    return Err(Cow::Owned(format!(
                        "x509: cannot parse URI {}: {why}",
                        crate::jwt::go_quote_bytes(data)
                    )));
                }
            }
            7 if data.len() != 4 && data.len() != 16 => {
                return Err(Cow::Owned(format!(
                    "x509: cannot parse IP address of length {}",
                    data.len()
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// What makes Go refuse a SAN URI, as far as ported: a control character (`url.Parse`), or a
/// host `domainNameValid` refuses.
fn uri_error(uri: &[u8]) -> Option<String> {
    // `url.Parse` cuts the fragment off first and parses (and quotes) the rest only; the
    // fragment is not checked for control characters.
    let without_fragment = uri.split(|&b| b == b'#').next().unwrap_or(uri);
    if without_fragment.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return Some(format!(
            "parse {}: net/url: invalid control character in URL",
            crate::jwt::go_quote_bytes(without_fragment)
        ));
    }
    // scheme "://" authority: the host is after the last '@', up to '/', '?' or '#'.
    let colon = without_fragment.iter().position(|&b| b == b':')?;
    let scheme = &without_fragment[..colon];
    let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b));
    let rest = &without_fragment[colon + 1..];
    let rest = rest.split(|&b| b == b'?').next().unwrap_or(rest);
    let authority = rest.strip_prefix(b"//")?;
    if !scheme_ok {
        return None;
    }
    let authority = authority.split(|&b| b == b'/').next().unwrap_or(authority);
    let host = match authority.iter().rposition(|&b| b == b'@') {
        Some(at) => &authority[at + 1..],
        None => authority,
    };
    if host.contains(&b'%') || host.first() == Some(&b'[') {
        return None; // escapes and IP literals: not ported
    }
    (!domain_name_valid(host, false)).then(|| "invalid domain".to_owned())
}

/// `domainNameValid` (Go 1.26, with the RFC 1034 checks it leaves disabled).
pub(crate) fn domain_name_valid(s: &[u8], constraint: bool) -> bool {
    if s.is_empty() {
        return true;
    }
    if s.last() == Some(&b'.') {
        return false;
    }
    let s = if constraint && s[0] == b'.' {
        &s[1..]
    } else {
        s
    };
    s.iter().all(|&b| (33..=126).contains(&b)) && s.split(|&b| b == b'.').all(|l| !l.is_empty())
}

/// `parseNameConstraintsExtension`.
fn name_constraints(value: &[u8]) -> Verdict {
    const INVALID: &str = "x509: invalid NameConstraints extension";
    let mut outer = S(value);
    let Some(top) = outer.read(SEQUENCE) else {
        return err(INVALID);
    };
    let mut top = S(top);
    let (Some(permitted), Some(excluded)) = (top.optional(0xa0), top.optional(0xa1)) else {
        return err(INVALID);
    };
    if !outer.empty() || !top.empty() {
        return err(INVALID);
    }
    let (permitted, excluded) = (permitted.unwrap_or(&[]), excluded.unwrap_or(&[]));
    if permitted.is_empty() && excluded.is_empty() {
        return err("x509: empty name constraints extension");
    }
    for subtrees in [permitted, excluded] {
        let mut subtrees = S(subtrees);
        while !subtrees.empty() {
            let Some((tag, value, _)) = subtrees.read(SEQUENCE).and_then(|seq| S(seq).any()) else {
                return err(INVALID);
            };
            let ia5_error = || {
                Err(Cow::Owned(format!(
                    "x509: invalid constraint value: x509: {} cannot be encoded as an IA5String",
                    crate::jwt::go_quote_bytes(value)
                )))
            };
            match tag {
                0x82 => {
                    if !ia5(value) {
                        return ia5_error();
                    }
                    if !domain_name_valid(value, true) {
                        return Err(Cow::Owned(format!(
                            "x509: failed to parse dnsName constraint {}",
                            crate::jwt::go_quote_bytes(value)
                        )));
                    }
                }
                0x87 => {
                    let mask = match value.len() {
                        8 => &value[4..],
                        32 => &value[16..],
                        l => {
                            return Err(Cow::Owned(format!(
                                "x509: IP constraint contained value of length {l}"
                            )));
                        }
                    };
                    if !valid_ip_mask(mask) {
                        let hex: String = mask.iter().map(|b| format!("{b:02x}")).collect();
                        return Err(Cow::Owned(format!(
                            "x509: IP constraint contained invalid mask {hex}"
                        )));
                    }
                }
                0x81 => {
                    if !ia5(value) {
                        return ia5_error();
                    }
                    // A mailbox (with '@') is checked by parseRFC2821Mailbox: not ported.
                    if !value.contains(&b'@') && !domain_name_valid(value, true) {
                        return Err(Cow::Owned(format!(
                            "x509: failed to parse rfc822Name constraint {}",
                            crate::jwt::go_quote_bytes(value)
                        )));
                    }
                }
                0x86 => {
                    if !ia5(value) {
                        return ia5_error();
                    }
                    let text = std::str::from_utf8(value).unwrap_or("");
                    if go_parse_ip(text) {
                        return Err(Cow::Owned(format!(
                            "x509: failed to parse URI constraint {}: cannot be IP address",
                            crate::jwt::go_quote_bytes(value)
                        )));
                    }
                    if !domain_name_valid(value, true) {
                        return Err(Cow::Owned(format!(
                            "x509: failed to parse URI constraint {}",
                            crate::jwt::go_quote_bytes(value)
                        )));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// `net.ParseIP`: a dotted IPv4 address or an IPv6 address (no zone).
fn go_parse_ip(s: &str) -> bool {
    if s.contains('%') {
        return false;
    }
    let v4 = s.split('.').count() == 4
        && s.split('.').all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
                && p.parse::<u16>().is_ok_and(|v| v <= 255)
        });
    v4 || (s.contains(':') && s.parse::<std::net::Ipv6Addr>().is_ok())
}

/// `isValidIPMask`.
fn valid_ip_mask(mask: &[u8]) -> bool {
    let mut seen_zero = false;
    for &b in mask {
        if seen_zero {
            if b != 0 {
                return false;
            }
            continue;
        }
        match b {
            0x00 | 0x80 | 0xc0 | 0xe0 | 0xf0 | 0xf8 | 0xfc | 0xfe => seen_zero = true,
            0xff => {}
            _ => return false,
        }
    }
    true
}

/// The cRLDistributionPoints case of `processExtensions`.
fn crl_distribution_points(value: &[u8]) -> Verdict {
    let Some(list) = S(value).read(SEQUENCE) else {
        return err("x509: invalid CRL distribution points");
    };
    let mut list = S(list);
    while !list.empty() {
        let Some(dp) = list.read(SEQUENCE) else {
            return err("x509: invalid CRL distribution point");
        };
        let Some(name) = S(dp).optional(0xa0) else {
            return err("x509: invalid CRL distribution point");
        };
        let Some(name) = name else { continue };
        let Some(full) = S(name).read(0xa0) else {
            return err("x509: invalid CRL distribution point");
        };
        let mut full = S(full);
        while full.peek(0x86) {
            if full.read(0x86).is_none() {
                return err("x509: invalid CRL distribution point");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `url.Parse` on SAN URIs: the fragment is cut off before the control-character check
    /// and the quoted text (Go 1.26's answers).
    #[test]
    fn uri_errors_are_url_parse_s() {
        let cases: [(&str, &[u8], Option<&str>); 4] = [
            ("control character in the fragment", b"http://a#\x01", None),
            ("DEL in the fragment", b"http://a#b\x7f", None),
            (
                "control character before the fragment: only that part quoted",
                b"http://a\x01#b",
                Some("parse \"http://a\\x01\": net/url: invalid control character in URL"),
            ),
            (
                "control character in the path",
                b"https://a/\x01",
                Some("parse \"https://a/\\x01\": net/url: invalid control character in URL"),
            ),
        ];
        for (name, uri, want) in cases {
            assert_eq!(uri_error(uri).as_deref(), want, "{name}");
        }
    }

    /// A repeated extension is found wherever it is, in the scan of the first 16 extensions and
    /// in the set used past them, and named in dotted form as Go names it.
    #[test]
    fn repeated_extensions_are_found_past_the_scan() {
        use rcgen::{CertificateParams, CustomExtension, KeyPair};
        let cert = |oids: &[u64]| {
            let mut params = CertificateParams::new(vec!["a.example".to_string()]).unwrap();
            params.custom_extensions = oids
                .iter()
                .map(|n| {
                    CustomExtension::from_oid_content(
                        &[1, 3, 6, 1, 4, 1, 99999, *n],
                        vec![0x05, 0x00],
                    )
                })
                .collect();
            let key = KeyPair::generate().unwrap();
            params.self_signed(&key).unwrap().der().to_vec()
        };
        let distinct: Vec<u64> = (1..=40).collect();
        let cases: [(&str, Vec<u64>, Option<u64>); 5] = [
            ("40 distinct", distinct.clone(), None),
            ("a repeat among the first few", vec![1, 2, 3, 2], Some(2)),
            (
                "the 17th repeats the first",
                (1..=16).chain([1]).collect(),
                Some(1),
            ),
            (
                "the 30th repeats the 20th",
                (1..=29).chain([20]).collect(),
                Some(20),
            ),
            (
                "the 40th repeats the 39th",
                (1..=39).chain([39]).collect(),
                Some(39),
            ),
        ];
        for (name, oids, repeat) in cases {
            let got = go_parses_certificate(&cert(&oids));
            let want = repeat.map(|n| {
                format!(
                    "x509: certificate contains duplicate extension with OID \"1.3.6.1.4.1.99999.{n}\""
                )
            });
            assert_eq!(got.err().map(|e| e.into_owned()), want, "{name}");
        }
    }

    /// Go's verdict on each certificate of tests/vectors/go_parse_certificate.json (written by
    /// conformance/go/cmd/certparse), text included.
    #[test]
    fn certificates_parse_as_go_parses_them() {
        let file: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/vectors/go_parse_certificate.json"
        ))
        .unwrap();
        let cases = file["cases"].as_array().unwrap();
        assert!(cases.len() >= 90, "{} cases", cases.len());
        let mut failures = Vec::new();
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let hex = case["der"].as_str().unwrap();
            let der: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let want = case["go"].as_str().unwrap();
            let got = match go_parses_certificate(&der) {
                Ok(()) => String::new(),
                Err(e) => e.into_owned(),
            };
            if got != want {
                failures.push(format!("{name}: Go {want:?}, ours {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn go_quote_escapes_as_strconv_quote() {
        assert_eq!(
            crate::jwt::go_quote_bytes(b"a\"\\\x01\n\xff\xc3\xa9"),
            r#""a\"\\\x01\n\xffé""#
        );
    }
}
