#!/usr/bin/env python3
"""Mints compact JWS tokens with jwcrypto (an independent JOSE implementation).

Reads JSON requests, one per line, on stdin; writes one token per line on stdout:
  {"key": "<PEM private key path>", "header": {...} | "header_raw": "<exact JSON>",
   "claims": {...} | "payload_raw": "<exact JSON>"}
"header_raw" requests are RS256-signed directly with pyca/cryptography (jwcrypto refuses
malformed headers). The protected header is serialised exactly as given (Kubernetes mints {"alg":..,"kid":..}).
"kid": "k8s" in the header is replaced by Kubernetes' key id of the key
(base64url(sha256(PKIX DER of the public key))); "kid": "thumbprint" by the RFC 7638 thumbprint.
"""
import base64, hashlib, json, sys
from cryptography.hazmat.primitives import serialization as s
from jwcrypto import jwk, jws

def k8s_kid(pem):
    key = s.load_pem_private_key(pem, None)
    der = key.public_key().public_bytes(s.Encoding.DER, s.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    req = json.loads(line)
    pem = open(req["key"], "rb").read()
    key = jwk.JWK.from_pem(pem)
    if "header_raw" in req:
        header = req["header_raw"]
    else:
        h = dict(req["header"])
        if h.get("kid") == "k8s":
            h["kid"] = k8s_kid(pem)
        elif h.get("kid") == "thumbprint":
            h["kid"] = key.thumbprint()
        header = json.dumps(h, separators=(",", ":"))
    payload = req["payload_raw"] if "payload_raw" in req else json.dumps(req["claims"], separators=(",", ":"))
    if "header_raw" in req:
        # Raw headers (duplicate names, unknown crit) are refused by jwcrypto: sign RS256 with
        # pyca/cryptography directly over the exact bytes.
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()
        signing_input = b(header.encode()) + "." + b(payload.encode())
        pk = s.load_pem_private_key(pem, None)
        sig = pk.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        print(signing_input + "." + b(sig), flush=True)
        continue
    t = jws.JWS(payload.encode())
    t.add_signature(key, None, protected=header)
    print(t.serialize(compact=True), flush=True)
