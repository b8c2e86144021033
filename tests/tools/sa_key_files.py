#!/usr/bin/env python3
"""Writes the `--service-account-key-file` block cases: tests/vectors/sa_key_files.json.

Each case is a PEM file (`pem`) of one or more blocks: well-formed keys in every form
client-go's `keyutil.ParsePublicKeysPEM` tries, and blocks one of its parsers refuses in one
detail (a point off the curve, a compressed point, an EC private key whose embedded public key
is another key's, an RSA key without the NULL parameters, trailing bytes, ...), most followed
by a valid RSA key so that "the block is skipped" and "the file is refused" differ.

Inputs only: `conformance/go/cmd/keyfiles` then adds what Kubernetes makes of each file
(`go`: the key ids and Go key types, or the error text), and `tests/service_account.rs`
(`key_file_blocks_are_read_as_client_go_reads_them`) checks kube-authn against that.

Deterministic: RSA keys are the checked-in benches/keys/rsa2048.pk8 and fixed primes, EC keys
come from fixed scalars, the certificate is signed with RSA PKCS#1 v1.5 on fixed dates.

    python3 tests/tools/sa_key_files.py
    (cd conformance/go && go run ./cmd/keyfiles ../../tests/vectors/sa_key_files.json)
"""
import base64
import datetime
import json
import math
import os
import random

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization as s
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "vectors", "sa_key_files.json")


# --- a minimal DER writer ---------------------------------------------------------------
def tlv(tag, body):
    n = len(body)
    if n < 0x80:
        length = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + length + body


def seq(*items):
    return tlv(0x30, b"".join(items))


def integer(v):
    if v == 0:
        return tlv(0x02, b"\x00")
    if v > 0:
        b = v.to_bytes((v.bit_length() + 8) // 8, "big")
    else:
        b = v.to_bytes((v.bit_length() + 8) // 8, "big", signed=True)
    return tlv(0x02, b)


def octets(b):
    return tlv(0x04, b)


def bits(b, unused=0):
    return tlv(0x03, bytes([unused]) + b)


def oid(dotted):
    parts = [int(p) for p in dotted.split(".")]
    out = bytes([parts[0] * 40 + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        p >>= 7
        while p:
            chunk.append(0x80 | (p & 0x7F))
            p >>= 7
        out += bytes(reversed(chunk))
    return tlv(0x06, out)


NULL = b"\x05\x00"
RSA = oid("1.2.840.113549.1.1.1")
EC = oid("1.2.840.10045.2.1")
CURVES = {
    "P-224": (oid("1.3.132.0.33"), ec.SECP224R1(), 28),
    "P-256": (oid("1.2.840.10045.3.1.7"), ec.SECP256R1(), 32),
    "P-384": (oid("1.3.132.0.34"), ec.SECP384R1(), 48),
    "P-521": (oid("1.3.132.0.35"), ec.SECP521R1(), 66),
}
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def pem(der, label):
    b64 = base64.encodebytes(der).decode()
    return f"-----BEGIN {label}-----\n{b64}-----END {label}-----\n"


# --- key material -----------------------------------------------------------------------
with open(os.path.join(ROOT, "benches", "keys", "rsa2048.pk8"), "rb") as f:
    RSA_KEY = s.load_der_private_key(f.read(), None)
RSA_PUB = RSA_KEY.public_key().public_bytes(s.Encoding.DER, s.PublicFormat.SubjectPublicKeyInfo)
RSA_PEM = pem(RSA_PUB, "PUBLIC KEY")  # the valid key after a block under test
NUMS = RSA_KEY.private_numbers()
N, E = NUMS.public_numbers.n, NUMS.public_numbers.e


def ec_key(curve, scalar):
    return ec.derive_private_key(scalar, CURVES[curve][1])


def point(key, compressed=False):
    fmt = s.PublicFormat.CompressedPoint if compressed else s.PublicFormat.UncompressedPoint
    return key.public_key().public_bytes(s.Encoding.X962, fmt)


def ec_spki(curve, pt, params=None):
    alg = seq(EC, CURVES[curve][0] if params is None else params)
    return seq(alg, bits(pt))


def rsa_spki(n, e, params=NULL, extra=b""):
    return seq(seq(RSA, params), bits(seq(integer(n), integer(e)) + extra))


def sec1(curve, d_bytes, pub=None, version=1, curve_oid=True, trailing=b""):
    items = [integer(version), octets(d_bytes)]
    if curve_oid:
        items.append(tlv(0xA0, CURVES[curve][0]))
    if pub is not None:
        items.append(tlv(0xA1, pub))
    return seq(*items) + trailing


def pkcs1(n, e, d, p, q, crt=True):
    items = [integer(0), integer(n), integer(e), integer(d), integer(p), integer(q)]
    if crt:
        items += [integer(d % (p - 1)), integer(d % (q - 1)), integer(pow(q, -1, p))]
    return seq(*items)


def patched(der, old, new):
    """`der` with its one occurrence of `old` replaced (the signature is not checked)."""
    assert der.count(old) == 1
    return der.replace(old, new)


def pkcs8(alg, private, version=0, extra=b""):
    return seq(integer(version), alg, octets(private), extra)


def cert(public_key, name_value=None):
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sa-signer")])
    der = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public_key)
        .serial_number(0x5A)
        .not_valid_before(datetime.datetime(2020, 1, 1))
        .not_valid_after(datetime.datetime(2120, 1, 1))
        .sign(RSA_KEY, hashes.SHA256())
        .public_bytes(s.Encoding.DER)
    )
    if name_value is not None:
        # The subject and issuer CN, a UTF8String, become a PrintableString holding '@'.
        cn = b"\x0c\x09sa-signer"
        assert der.count(cn) == 2
        der = der.replace(cn, b"\x13\x09sa@signer")
    return der


P256 = ec_key("P-256", 0x7E83A8B6564D41A07DB8DB26AD6431BEA646B74AB325D633CE2F03A28D15A21F)
P256_D = P256.private_numbers().private_value.to_bytes(32, "big")
OTHER = ec_key("P-256", 0x1234567890ABCDEF1234567890ABCDEF1234567890ABCDEF1234567890ABCDEF)
# A scalar whose first byte is zero: written in 31 bytes by some encoders.
SHORT = ec_key("P-256", 0x00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE)
SHORT_D = SHORT.private_numbers().private_value.to_bytes(32, "big")
assert SHORT_D[0] == 0
P384 = ec_key("P-384", 0x3A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F6071)
P521 = ec_key("P-521", 0x1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6E7F80)
P224 = ec_key("P-224", 0x0102030405060708090A0B0C0D0E0F101112131415161718191A1B1C)


def p_sec1(key, curve, **kw):
    size = CURVES[curve][2]
    d = key.private_numbers().private_value.to_bytes(size, "big")
    return sec1(curve, d, pub=bits(point(key)), **kw)


off_curve = bytearray(point(P256))
off_curve[-1] ^= 1
off_curve = bytes(off_curve)
hybrid = bytes([0x06 | (point(P256)[-1] & 1)]) + point(P256)[1:]

p, q = NUMS.p, NUMS.q
d = NUMS.d
LAMBDA = (p - 1) * (q - 1) // math.gcd(p - 1, q - 1)
RSA_BODY = seq(integer(N), integer(E))


def probable_prime(n):
    """Miller-Rabin with the first twelve primes as bases."""
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if n < 2 or any(n % b == 0 for b in bases):
        return n in bases
    r, s_ = n - 1, 0
    while r % 2 == 0:
        r, s_ = r // 2, s_ + 1
    for b in bases:
        x = pow(b, r, n)
        if x in (1, n - 1):
            continue
        for _ in range(s_ - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def three_prime_key():
    """A 2048-bit PKCS#1 key of three primes (version 1, otherPrimeInfos), from a fixed seed."""
    rnd = random.Random(7)

    def prime():
        while True:
            c = rnd.getrandbits(683) | (1 << 682) | 1
            if probable_prime(c) and math.gcd(E, c - 1) == 1:
                return c

    while True:
        p1, p2, p3 = prime(), prime(), prime()
        n = p1 * p2 * p3
        if n.bit_length() == 2048:
            break
    lam = 1
    for x in (p1, p2, p3):
        lam = lam * (x - 1) // math.gcd(lam, x - 1)
    dd = pow(E, -1, lam)
    other = seq(seq(integer(p3), integer(dd % (p3 - 1)), integer(pow(p1 * p2, -1, p3))))
    crt = (dd % (p1 - 1), dd % (p2 - 1), pow(p2, -1, p1))
    return seq(integer(1), *[integer(v) for v in (n, E, dd, p1, p2, *crt)], other)
def close_primes_key():
    """A 2048-bit PKCS#1 key whose primes are consecutive (|p - q| far below 2^(1024-100)),
    from a fixed seed: Go's checkPrivateKey refuses it ("|p - q| too small")."""
    rnd = random.Random(11)
    while True:
        a = rnd.getrandbits(1024) | (3 << 1022) | 1
        while not (probable_prime(a) and math.gcd(E, a - 1) == 1):
            a += 2
        b = a + 2
        while not (probable_prime(b) and math.gcd(E, b - 1) == 1):
            b += 2
        if (a * b).bit_length() == 2048:
            break
    a, b = b, a  # p > q, as Go writes keys
    dd = pow(E, -1, (a - 1) * (b - 1) // math.gcd(a - 1, b - 1))
    return seq(integer(0), *[integer(v) for v in (a * b, E, dd, a, b, dd % (a - 1), dd % (b - 1), pow(b, -1, a))])


SMALL_N = (N >> 1024) | 1  # a 1024-bit modulus (Go does not test a public modulus for primes)
ed = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))

cases = [
    # PKIX public keys
    ("P-256 PUBLIC KEY", pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("P-384 PUBLIC KEY", pem(ec_spki("P-384", point(P384)), "PUBLIC KEY")),
    ("P-521 PUBLIC KEY", pem(ec_spki("P-521", point(P521)), "PUBLIC KEY")),
    ("P-224 PUBLIC KEY", pem(ec_spki("P-224", point(P224)), "PUBLIC KEY")),
    ("P-256 point off the curve, then an RSA key",
     pem(ec_spki("P-256", off_curve), "PUBLIC KEY") + RSA_PEM),
    ("P-256 compressed point", pem(ec_spki("P-256", point(P256, True)), "PUBLIC KEY")),
    ("P-256 compressed point, then an RSA key",
     pem(ec_spki("P-256", point(P256, True)), "PUBLIC KEY") + RSA_PEM),
    ("P-256 hybrid point, then an RSA key", pem(ec_spki("P-256", hybrid), "PUBLIC KEY") + RSA_PEM),
    ("P-256 point at infinity, then an RSA key",
     pem(ec_spki("P-256", b"\x00"), "PUBLIC KEY") + RSA_PEM),
    ("P-256 point one byte short, then an RSA key",
     pem(ec_spki("P-256", point(P256)[:-1]), "PUBLIC KEY") + RSA_PEM),
    ("P-256 point under the P-384 OID, then an RSA key",
     pem(ec_spki("P-384", point(P256)), "PUBLIC KEY") + RSA_PEM),
    ("EC key with NULL parameters, then an RSA key",
     pem(ec_spki("P-256", point(P256), params=NULL), "PUBLIC KEY") + RSA_PEM),
    ("EC key with an unknown curve OID, then an RSA key",
     pem(ec_spki("P-256", point(P256), params=oid("1.3.132.0.10")), "PUBLIC KEY") + RSA_PEM),
    ("RSA PUBLIC KEY", RSA_PEM),
    ("RSA public key without NULL parameters, then a P-256 key",
     pem(seq(seq(RSA), bits(seq(integer(N), integer(E)))), "PUBLIC KEY")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA public key with trailing bytes inside its bit string",
     pem(rsa_spki(N, E, extra=b"\x05\x00"), "PUBLIC KEY")),
    ("RSA public key with an extra INTEGER in RSAPublicKey",
     pem(seq(seq(RSA, NULL), bits(seq(integer(N), integer(E), integer(7)))), "PUBLIC KEY")),
    ("SubjectPublicKeyInfo followed by trailing bytes, then a P-256 key",
     pem(RSA_PUB + b"\x00", "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA modulus with a needless leading zero byte, then a P-256 key",
     pem(seq(seq(RSA, NULL), bits(seq(tlv(0x02, b"\x00" + integer(N)[4:]), integer(E)))),
         "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA negative modulus, then a P-256 key",
     pem(rsa_spki(-N, E), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 3", pem(rsa_spki(N, 3), "PUBLIC KEY")),
    ("RSA exponent 1, then a P-256 key",
     pem(rsa_spki(N, 1), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 65536 (even), then a P-256 key",
     pem(rsa_spki(N, 65536), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 2^31-1", pem(rsa_spki(N, 2**31 - 1), "PUBLIC KEY")),
    ("RSA exponent 2^31+1, then a P-256 key",
     pem(rsa_spki(N, 2**31 + 1), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 2^32+1, then a P-256 key",
     pem(rsa_spki(N, 2**32 + 1), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 2^64+1, then a P-256 key",
     pem(rsa_spki(N, 2**64 + 1), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA 1024-bit public key, then a P-256 key",
     pem(rsa_spki(SMALL_N, E), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("EC key with an extra element after the bit string",
     pem(seq(seq(EC, CURVES["P-256"][0]), bits(point(P256)), integer(1)), "PUBLIC KEY")),
    ("EC key with an extra element in the algorithm identifier",
     pem(seq(seq(EC, CURVES["P-256"][0], NULL), bits(point(P256))), "PUBLIC KEY")),
    ("EC key with an empty curve OID, then an RSA key",
     pem(seq(seq(EC, tlv(0x06, b"")), bits(point(P256))), "PUBLIC KEY") + RSA_PEM),
    ("RSA public key in a bit string with 1 unused bit, then a P-256 key",
     pem(seq(seq(RSA, NULL), tlv(0x03, b"\x01" + RSA_BODY[:-1] + bytes([RSA_BODY[-1] & 0xFE]))),
         "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA public key with an extra element in the algorithm identifier",
     pem(seq(seq(RSA, NULL, NULL), bits(RSA_BODY)), "PUBLIC KEY")),
    ("RSA exponent not minimally encoded, then a P-256 key",
     pem(seq(seq(RSA, NULL), bits(seq(integer(N), tlv(0x02, b"\x00\x01\x00\x01")))), "PUBLIC KEY")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 0, then a P-256 key",
     pem(rsa_spki(N, 0), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent -3, then a P-256 key",
     pem(rsa_spki(N, -3), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 2^63-1, then a P-256 key",
     pem(rsa_spki(N, 2**63 - 1), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA exponent 2^63, then a P-256 key",
     pem(rsa_spki(N, 2**63), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA even modulus, then a P-256 key",
     pem(rsa_spki(N + 1, E), "PUBLIC KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA public key followed by a byte that is no element in its bit string",
     pem(seq(seq(RSA, NULL), bits(RSA_BODY + b"\xff")), "PUBLIC KEY")),
    ("RSA public key whose RSAPublicKey is truncated, then a P-256 key",
     pem(seq(seq(RSA, NULL), bits(b"\x30\x82\x01\x0a" + integer(N))), "PUBLIC KEY")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("RSA public key without the RSAPublicKey SEQUENCE, then a P-256 key",
     pem(seq(seq(RSA, NULL), bits(integer(N) + integer(E))), "PUBLIC KEY")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 RSA PUBLIC KEY", pem(seq(integer(N), integer(E)), "RSA PUBLIC KEY")),
    ("Ed25519 PUBLIC KEY",
     ed.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode()),
    # SEC1 EC private keys
    ("P-256 EC PRIVATE KEY", pem(p_sec1(P256, "P-256"), "EC PRIVATE KEY")),
    ("P-384 EC PRIVATE KEY", pem(p_sec1(P384, "P-384"), "EC PRIVATE KEY")),
    ("P-521 EC PRIVATE KEY", pem(p_sec1(P521, "P-521"), "EC PRIVATE KEY")),
    ("P-224 EC PRIVATE KEY", pem(p_sec1(P224, "P-224"), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY whose public key is another key's",
     pem(sec1("P-256", P256_D, pub=bits(point(OTHER))), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY whose public key is off the curve",
     pem(sec1("P-256", P256_D, pub=bits(off_curve)), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY whose public key is compressed",
     pem(sec1("P-256", P256_D, pub=bits(point(P256, True))), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY whose public key is not a BIT STRING, then an RSA key",
     pem(sec1("P-256", P256_D, pub=octets(point(P256))), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY without a public key", pem(sec1("P-256", P256_D), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY without a curve, then an RSA key",
     pem(sec1("P-256", P256_D, pub=bits(point(P256)), curve_oid=False), "EC PRIVATE KEY")
     + RSA_PEM),
    ("EC PRIVATE KEY version 2, then an RSA key",
     pem(sec1("P-256", P256_D, version=2), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with a zero-padded 33-byte scalar",
     pem(sec1("P-256", b"\x00" + P256_D, pub=bits(point(P256))), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with a 31-byte scalar",
     pem(sec1("P-256", SHORT_D[1:], pub=bits(point(SHORT))), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with a 33-byte scalar not zero-padded, then an RSA key",
     pem(sec1("P-256", b"\x01" + P256_D), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with scalar 0, then an RSA key",
     pem(sec1("P-256", bytes(32)), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with scalar n, then an RSA key",
     pem(sec1("P-256", P256_N.to_bytes(32, "big")), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with scalar n+1, then an RSA key",
     pem(sec1("P-256", (P256_N + 1).to_bytes(32, "big")), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY followed by trailing bytes",
     pem(p_sec1(P256, "P-256", trailing=b"\x00\x00"), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with an extra element after the public key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0]),
             tlv(0xA1, bits(point(P256))), integer(5)), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with the public key before the curve, then an RSA key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA1, bits(point(P256))),
             tlv(0xA0, CURVES["P-256"][0])), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY whose [1] holds no valid element, then an RSA key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0]), tlv(0xA1, b"\xff")),
         "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with an empty [1], then an RSA key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0]), tlv(0xA1, b"")),
         "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY whose public key has bad padding bits, then an RSA key",
     pem(sec1("P-256", P256_D, pub=tlv(0x03, b"\x01\x01")), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with bytes after the public key inside [1]",
     pem(sec1("P-256", P256_D, pub=bits(point(P256)) + NULL), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with a primitive [1]",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0]), tlv(0x81, b"\x00")),
         "EC PRIVATE KEY")),
    ("EC PRIVATE KEY whose [0] holds NULL, then an RSA key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, NULL)), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY whose [0] holds the OID and a NULL, then an RSA key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0] + NULL)), "EC PRIVATE KEY")
     + RSA_PEM),
    ("EC PRIVATE KEY with a primitive [0], then an RSA key",
     pem(seq(integer(1), octets(P256_D), tlv(0x80, CURVES["P-256"][0][2:])), "EC PRIVATE KEY")
     + RSA_PEM),
    ("EC PRIVATE KEY with a [2] between the curve and the public key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0]), tlv(0xA2, NULL),
             tlv(0xA1, bits(point(P256)))), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with a [2] before the curve, then an RSA key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA2, NULL), tlv(0xA0, CURVES["P-256"][0])),
         "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with a high-numbered tag before the curve, then an RSA key",
     pem(seq(integer(1), octets(P256_D), b"\xbf\x20\x02\x05\x00", tlv(0xA0, CURVES["P-256"][0])),
         "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with a high-numbered tag after the public key",
     pem(seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0]),
             tlv(0xA1, bits(point(P256))), b"\xbf\x20\x02\x05\x00"), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY whose version is not minimally encoded, then an RSA key",
     pem(seq(tlv(0x02, b"\x00\x01"), octets(P256_D), tlv(0xA0, CURVES["P-256"][0])),
         "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with an empty scalar, then an RSA key",
     pem(sec1("P-256", b""), "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY with scalar 1", pem(sec1("P-256", b"\x01"), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with a 64-byte zero-padded scalar",
     pem(sec1("P-256", bytes(32) + P256_D), "EC PRIVATE KEY")),
    ("EC PRIVATE KEY with a non-minimal long-form length, then an RSA key",
     pem(b"\x30\x81" + seq(integer(1), octets(P256_D), tlv(0xA0, CURVES["P-256"][0]))[1:],
         "EC PRIVATE KEY") + RSA_PEM),
    ("EC PRIVATE KEY whose scalar is a constructed OCTET STRING, then an RSA key",
     pem(seq(integer(1), tlv(0x24, octets(P256_D)), tlv(0xA0, CURVES["P-256"][0])),
         "EC PRIVATE KEY") + RSA_PEM),
    # PKCS#8
    ("PKCS#8 RSA PRIVATE KEY",
     RSA_KEY.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode()),
    ("PKCS#8 RSA key followed by trailing bytes",
     pem(RSA_KEY.private_bytes(s.Encoding.DER, s.PrivateFormat.PKCS8, s.NoEncryption()) + b"\x00",
         "PRIVATE KEY")),
    ("PKCS#8 v2 RSA key with a public key",
     pem(pkcs8(seq(RSA, NULL), pkcs1(N, E, d, p, q), version=1,
               extra=tlv(0xA1, bits(seq(integer(N), integer(E))))), "PRIVATE KEY")),
    ("PKCS#8 RSA key without NULL parameters",
     pem(pkcs8(seq(RSA), pkcs1(N, E, d, p, q)), "PRIVATE KEY")),
    ("PKCS#8 RSA key of version 5",
     pem(pkcs8(seq(RSA, NULL), pkcs1(N, E, d, p, q), version=5), "PRIVATE KEY")),
    ("PKCS#8 RSA key with INTEGER parameters",
     pem(pkcs8(seq(RSA, integer(3)), pkcs1(N, E, d, p, q)), "PRIVATE KEY")),
    ("PKCS#8 P-256 key",
     P256.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode()),
    ("PKCS#8 Ed25519 key",
     ed.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode()),
    # PKCS#1 RSA private keys
    ("PKCS#1 RSA PRIVATE KEY", pem(pkcs1(N, E, d, p, q), "RSA PRIVATE KEY")),
    ("PKCS#1 key with p and q swapped (qInv recomputed)", pem(pkcs1(N, E, d, q, p), "RSA PRIVATE KEY")),
    ("PKCS#1 key whose p is not a factor, then a P-256 key",
     pem(pkcs1(N, E, d, p + 2, q), "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key with a wrong qInv, then a P-256 key",
     pem(seq(integer(0), integer(N), integer(E), integer(d), integer(p), integer(q),
             integer(d % (p - 1)), integer(d % (q - 1)), integer(pow(q, -1, p) + 1)),
         "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key with a wrong d but right CRT values, then a P-256 key",
     pem(seq(integer(0), integer(N), integer(E), integer(d + 2), integer(p), integer(q),
             integer(d % (p - 1)), integer(d % (q - 1)), integer(pow(q, -1, p))),
         "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key without CRT values, then a P-256 key",
     pem(pkcs1(N, E, d, p, q, crt=False), "RSA PRIVATE KEY")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key followed by trailing bytes, then a P-256 key",
     pem(pkcs1(N, E, d, p, q) + b"\x00", "RSA PRIVATE KEY")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key of version 2, then a P-256 key",
     pem(seq(integer(2), *[integer(v) for v in (N, E, d, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key of version 1 (two primes)",
     pem(seq(integer(1), *[integer(v) for v in (N, E, d, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY")),
    ("PKCS#1 key of version -1",
     pem(seq(integer(-1), *[integer(v) for v in (N, E, d, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY")),
    ("PKCS#1 key with dP only, then a P-256 key",
     pem(seq(integer(0), *[integer(v) for v in (N, E, d, p, q, d % (p - 1))]), "RSA PRIVATE KEY")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key of three primes, then a P-256 key",
     pem(three_prime_key(), "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key with an empty list of other primes",
     pem(seq(integer(0), *[integer(v) for v in (N, E, d, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))], seq()),
         "RSA PRIVATE KEY")),
    ("PKCS#1 key with d reduced modulo phi(n)",
     pem(seq(integer(0), *[integer(v) for v in (N, E, pow(E, -1, (p - 1) * (q - 1)), p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY")),
    ("PKCS#1 key with d plus lambda(n)",
     pem(seq(integer(0), *[integer(v) for v in (N, E, d + LAMBDA, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY")),
    ("PKCS#1 key with dP plus p-1, then a P-256 key",
     pem(seq(integer(0), *[integer(v) for v in (N, E, d, p, q, d % (p - 1) + p - 1, d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key with qInv plus p, then a P-256 key",
     pem(seq(integer(0), *[integer(v) for v in (N, E, d, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p) + p)]),
         "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key with close primes, then a P-256 key",
     pem(close_primes_key(), "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key with d plus 2 phi(n) (d above n), then a P-256 key",
     pem(seq(integer(0), *[integer(v) for v in (N, E, d + 2 * (p - 1) * (q - 1), p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("PKCS#1 key with d plus lambda(n) at or above n, then a P-256 key",
     pem(seq(integer(0), *[integer(v) for v in (N, E, d + LAMBDA * ((N - d) // LAMBDA + 1), p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))]),
         "RSA PRIVATE KEY") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    # certificates
    ("RSA CERTIFICATE", pem(cert(RSA_KEY.public_key()), "CERTIFICATE")),
    ("P-256 CERTIFICATE", pem(cert(P256.public_key()), "CERTIFICATE")),
    ("CERTIFICATE whose name Go refuses, then a P-256 key",
     pem(cert(RSA_KEY.public_key(), name_value="@"), "CERTIFICATE")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("CERTIFICATE followed by trailing bytes, then a P-256 key",
     pem(cert(RSA_KEY.public_key()) + b"\x00", "CERTIFICATE")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("CERTIFICATE with a negative serial, then a P-256 key",
     pem(patched(cert(RSA_KEY.public_key()), b"\x02\x01\x5a", b"\x02\x01\xa5"), "CERTIFICATE")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("CERTIFICATE of version 4, then a P-256 key",
     pem(patched(cert(RSA_KEY.public_key()), b"\xa0\x03\x02\x01\x02", b"\xa0\x03\x02\x01\x03"), "CERTIFICATE")
     + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
    ("Ed25519 CERTIFICATE, then a P-256 key",
     pem(cert(ed.public_key()), "CERTIFICATE") + pem(ec_spki("P-256", point(P256)), "PUBLIC KEY")),
]

names = [n for n, _ in cases]
assert len(names) == len(set(names)), "case names must be unique"
with open(OUT, "w") as f:
    json.dump([{"name": n, "pem": p} for n, p in cases], f, indent=1)
    f.write("\n")
print(f"{len(cases)} cases -> {os.path.relpath(OUT)}")
