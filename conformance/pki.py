"""Deterministic certificate material for the x509 and request-header vectors.

Everything here is a pure function of its arguments: private keys are derived from a label
(Ed25519 seeds and P-256 scalars are SHA-256 of the label; RSA primes come from a PRNG seeded
with the label), signatures are deterministic (Ed25519, RFC 6979 ECDSA, PKCS#1 v1.5), and every
date and serial number is fixed. So `gen_vectors.py` writes the same PEM every time and
`run.sh` can check that `vectors/` is what the script writes.

Dates: valid certificates run from 2020-01-01 to 2120-01-01; "expired" ones ended in 2010 and
"not yet valid" ones start in 2100, so the vectors do not age (until 2100).
"""

import datetime
import hashlib
import random
import warnings

warnings.filterwarnings("ignore", message="Attribute.s length")

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

UID_OID = x509.ObjectIdentifier("1.3.6.1.4.1.57683.2")

VALID = (datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
         datetime.datetime(2120, 1, 1, tzinfo=datetime.timezone.utc))
EXPIRED = (datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc),
           datetime.datetime(2010, 1, 1, tzinfo=datetime.timezone.utc))
NOT_YET = (datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc),
           datetime.datetime(2110, 1, 1, tzinfo=datetime.timezone.utc))

_KEYS = {}


def _is_probable_prime(n, rng):
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(40):
        a = rng.randrange(2, n - 2)
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(rng, bits):
    while True:
        c = rng.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
        if c % 65537 != 1 and _is_probable_prime(c, rng):
            return c


def _rsa(label, bits):
    rng = random.Random(hashlib.sha256(label.encode()).digest())
    e = 65537
    while True:
        p, q = _prime(rng, bits // 2), _prime(rng, bits // 2)
        if p != q and (p * q).bit_length() == bits:
            break
    if p < q:
        p, q = q, p
    phi = (p - 1) * (q - 1)
    d = pow(e, -1, phi)
    pub = rsa.RSAPublicNumbers(e, p * q)
    priv = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p), pub)
    return priv.private_key()


def key(label, alg="ed25519"):
    """The private key named `label` (same label, same key)."""
    k = (label, alg)
    if k not in _KEYS:
        seed = hashlib.sha256(label.encode()).digest()
        if alg == "ed25519":
            _KEYS[k] = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        elif alg == "p256":
            n = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
            _KEYS[k] = ec.derive_private_key(int.from_bytes(seed, "big") % (n - 1) + 1, ec.SECP256R1())
        elif alg == "p384":
            n = int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973", 16)
            _KEYS[k] = ec.derive_private_key(int.from_bytes(seed, "big") % (n - 1) + 1, ec.SECP384R1())
        elif alg == "p521":
            n = int("01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFA51868783BF2F966B7FCC0148F709A5D"
                    "03BB5C9B8899C47AEBB6FB71E91386409", 16)
            _KEYS[k] = ec.derive_private_key(int.from_bytes(seed, "big") % (n - 1) + 1, ec.SECP521R1())
        elif alg.startswith("rsa"):
            _KEYS[k] = _rsa(label, int(alg[3:]))
        else:
            raise ValueError(alg)
    return _KEYS[k]


def name(*attrs):
    """A subject from ("CN", "x"), ("O", "y"), ("UID", "z"), ("OU", …), ("C", …) pairs, one
    attribute per RDN, in order. A value may be (text, _ASN1Type) to pick the string type; a
    list of pairs makes one multi-valued RDN."""
    oids = {"CN": NameOID.COMMON_NAME, "O": NameOID.ORGANIZATION_NAME, "UID": UID_OID,
            "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "C": NameOID.COUNTRY_NAME,
            "L": NameOID.LOCALITY_NAME, "EMAIL": NameOID.EMAIL_ADDRESS,
            "SERIAL": NameOID.SERIAL_NUMBER, "X500UID": NameOID.USER_ID}

    def attr(a, v):
        if isinstance(v, tuple):
            return x509.NameAttribute(oids[a], v[0], _type=v[1], _validate=False)
        return x509.NameAttribute(oids[a], v, _validate=False)

    rdns = []
    for item in attrs:
        if isinstance(item, list):
            rdns.append(x509.RelativeDistinguishedName([attr(a, v) for a, v in item]))
        else:
            rdns.append(x509.RelativeDistinguishedName([attr(*item)]))
    return x509.Name(rdns)


class Cert:
    """A certificate and the key that signed nothing yet (its own)."""

    def __init__(self, cert, private_key):
        self.cert = cert
        self.key = private_key

    @property
    def pem(self):
        return self.cert.public_bytes(serialization.Encoding.PEM).decode()

    @property
    def der(self):
        return self.cert.public_bytes(serialization.Encoding.DER)

    def identifier(self):
        """k8s certificateIdentifier: SN=<decimal>, SKID=<AB:CD>, AKID=<AB:CD>."""
        def ext(cls, attr):
            try:
                v = getattr(self.cert.extensions.get_extension_for_class(cls).value, attr)
            except x509.ExtensionNotFound:
                return ""
            return ":".join(f"{b:02X}" for b in (v or b""))
        return (f"SN={self.cert.serial_number}, SKID={ext(x509.SubjectKeyIdentifier, 'digest')}, "
                f"AKID={ext(x509.AuthorityKeyIdentifier, 'key_identifier')}")

    def credential_id(self):
        return "X509SHA256=" + hashlib.sha256(self.der).hexdigest()


def issue(subject, serial, key_label, issuer=None, alg="ed25519", ca=False, path_len=None,
          eku=("client",), validity=VALID, key_usage=None, skid=True, version_ok=True,
          basic_constraints=True, extensions=()):
    """Issues a certificate for `subject` (an x509.Name) with the key `key_label`, signed by
    `issuer` (a Cert; None = self-signed). `eku`: None for no extension, else a tuple of
    "client", "server", "any". `key_usage`: "ca", "leaf", "certsign-only", "signature-only"
    or "none" (default: by `ca`). `basic_constraints=False` leaves that extension out;
    `extensions`: more (extension value, critical) pairs, added last."""
    priv = key(key_label, alg)
    pub = priv.public_key()
    signer = issuer.key if issuer else priv
    issuer_name = issuer.cert.subject if issuer else subject
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name)
         .public_key(pub).serial_number(serial)
         .not_valid_before(validity[0]).not_valid_after(validity[1]))
    if basic_constraints:
        b = b.add_extension(x509.BasicConstraints(ca=ca, path_length=path_len if ca else None), critical=True)
    if key_usage is None:
        key_usage = "ca" if ca else "leaf"
    if key_usage == "ca":
        ku = dict(digital_signature=True, key_cert_sign=True, crl_sign=True)
    elif key_usage == "leaf":
        ku = dict(digital_signature=True, key_encipherment=not isinstance(pub, (ed25519.Ed25519PublicKey, ec.EllipticCurvePublicKey)))
    elif key_usage == "certsign-only":
        ku = dict(key_cert_sign=True)
    elif key_usage == "signature-only":
        ku = dict(digital_signature=True)
    else:
        ku = None
    if ku is not None:
        full = dict(digital_signature=False, content_commitment=False, key_encipherment=False,
                    data_encipherment=False, key_agreement=False, key_cert_sign=False,
                    crl_sign=False, encipher_only=False, decipher_only=False)
        full.update(ku)
        b = b.add_extension(x509.KeyUsage(**full), critical=True)
    if eku is not None:
        oids = {"client": ExtendedKeyUsageOID.CLIENT_AUTH, "server": ExtendedKeyUsageOID.SERVER_AUTH,
                "any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
                "code": ExtendedKeyUsageOID.CODE_SIGNING}
        b = b.add_extension(x509.ExtendedKeyUsage([oids[e] for e in eku]), critical=False)
    if skid:
        b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(pub), critical=False)
    if issuer is not None:
        b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key()),
                            critical=False)
    for value, critical in extensions:
        b = b.add_extension(value, critical=critical)
    if isinstance(signer, ed25519.Ed25519PrivateKey):
        cert = b.sign(signer, None)
    elif isinstance(signer, ec.EllipticCurvePrivateKey):
        cert = b.sign(signer, hashes.SHA256(), ecdsa_deterministic=True)
    else:
        cert = b.sign(signer, hashes.SHA256())
    return Cert(cert, priv)


def ca(cn, key_label=None, alg="ed25519", path_len=None, validity=VALID, issuer=None, serial=1, eku=None,
       key_usage=None, basic_constraints=True, extensions=()):
    """A CA (self-signed unless `issuer` is given)."""
    return issue(name(("CN", cn)), serial, key_label or cn, issuer=issuer, alg=alg, ca=True,
                 path_len=path_len, eku=eku, validity=validity, key_usage=key_usage,
                 basic_constraints=basic_constraints, extensions=extensions)
