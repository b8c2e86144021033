#!/usr/bin/env python3
"""Writes test keys (an independent implementation: pyca/cryptography) into DIR.

rsa.pem (PKCS#1 RSA PRIVATE KEY, 2048), rsa_pub.pem (PKIX), rsa_cert.pem (self-signed X.509),
rsa_pkcs8.pem, rsa2.pem (another RSA key), ec256.pem / ec384.pem / ec521.pem (SEC1 EC PRIVATE KEY),
ec256_pub.pem, ec256_pkcs8.pem (PKCS#8: Kubernetes skips it), ed25519.pem (PKCS#8), ed25519_pub.pem,
rsa1024.pem, rsa_pub_pkcs1.pem (BEGIN RSA PUBLIC KEY, PKCS#1: Kubernetes skips it); public JWKs
rsa.jwk, rsa2.jwk, ec256.jwk, ec521.jwk and rsa's private JWK rsa_private.jwk.
"""
import datetime, json, os, sys
from cryptography import x509
from cryptography.x509.oid import NameOID
from cryptography.hazmat.primitives import hashes, serialization as s
from cryptography.hazmat.primitives.asymmetric import rsa, ec, ed25519

d = sys.argv[1]
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
priv = lambda k, fmt: k.private_bytes(s.Encoding.PEM, fmt, s.NoEncryption())
pub = lambda k, fmt=s.PublicFormat.SubjectPublicKeyInfo: k.public_key().public_bytes(s.Encoding.PEM, fmt)

r = rsa.generate_private_key(65537, 2048)
w("rsa.pem", priv(r, s.PrivateFormat.TraditionalOpenSSL))
w("rsa_pkcs8.pem", priv(r, s.PrivateFormat.PKCS8))
w("rsa_pub.pem", pub(r))
w("rsa_pub_pkcs1.pem", pub(r, s.PublicFormat.PKCS1))
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sa-signer")])
now = datetime.datetime.now(datetime.timezone.utc)
cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(r.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1)).sign(r, hashes.SHA256()))
w("rsa_cert.pem", cert.public_bytes(s.Encoding.PEM))
w("rsa2.pem", priv(rsa.generate_private_key(65537, 2048), s.PrivateFormat.TraditionalOpenSSL))
w("rsa1024.pem", priv(rsa.generate_private_key(65537, 1024), s.PrivateFormat.TraditionalOpenSSL))
for bits, curve in ((256, ec.SECP256R1()), (384, ec.SECP384R1()), (521, ec.SECP521R1())):
    k = ec.generate_private_key(curve)
    w(f"ec{bits}.pem", priv(k, s.PrivateFormat.TraditionalOpenSSL))
    w(f"ec{bits}_pub.pem", pub(k))
    w(f"ec{bits}_pkcs8.pem", priv(k, s.PrivateFormat.PKCS8))
e = ed25519.Ed25519PrivateKey.generate()
w("ed25519.pem", priv(e, s.PrivateFormat.PKCS8))
w("ed25519_pub.pem", pub(e))

# Public JWKs (kid = RFC 7638 thumbprint) for the OIDC tests.
from jwcrypto import jwk as _jwk
for n in ("rsa", "rsa2", "ec256", "ec521"):
    k = _jwk.JWK.from_pem(open(os.path.join(d, n + ".pem"), "rb").read())
    pubk = _jwk.JWK.from_json(k.export_public())
    doc = json.loads(pubk.export_public())
    doc["kid"] = k.thumbprint()
    w(n + ".jwk", json.dumps(doc).encode())
# rsa's private JWK (d, p, q, dp, dq, qi), same kid: an issuer publishing it by mistake.
k = _jwk.JWK.from_pem(open(os.path.join(d, "rsa.pem"), "rb").read())
doc = json.loads(k.export_private())
doc["kid"] = k.thumbprint()
w("rsa_private.jwk", json.dumps(doc).encode())
