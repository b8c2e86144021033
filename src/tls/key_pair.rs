//! Go's `tls.X509KeyPair` (`crypto/tls/tls.go`, Go 1.26), which kube-apiserver's serving pair
//! (`dynamiccertificates.NewDynamicServingContentFromFiles`) and client-go's client certificate
//! (`transport.TLSConfigFor`, `tls.LoadX509KeyPair`) go through: the PEM blocks found by the
//! port of Go's `pem.Decode` ([`PemBlocks`]), Go's selection of the blocks, its order of checks
//! and its error texts.
//!
//! 1. The certificate input: every `CERTIFICATE` block, in order (others are skipped, headers
//!    or not); none is `tls: failed to find any PEM data in certificate input` (no block),
//!    `… but did find a private key; PEM inputs may have been switched` (one block, its type
//!    ending in `PRIVATE KEY`) or `… after skipping PEM blocks of the following types: [A B]`.
//! 2. The key input: the first block typed `PRIVATE KEY` or `<anything> PRIVATE KEY` (its
//!    headers, `Proc-Type: 4,ENCRYPTED` included, are not looked at), with the matching texts.
//! 3. The leaf parsed as Go's `x509.ParseCertificate` does (its text on failure).
//! 4. The key's DER tried as PKCS#1, PKCS#8 and SEC1, whatever the block's type says.
//! 5. The key's type against the leaf's, then the key against the leaf's public key.
//!
//! No error carries bytes of the key input: block types of the key input are named (Go names
//! them too), never their content.

use rustls::crypto::aws_lc_rs::sign::any_supported_type;
use rustls::sign::{CertifiedKey, SigningKey};
use rustls::{InconsistentKeys, SignatureAlgorithm};
use rustls_pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs1KeyDer, PrivatePkcs8KeyDer, PrivateSec1KeyDer,
};
use std::sync::Arc;

use crate::error::ConfigError;
use crate::jwt::key::{MAX_RSA_BITS, MIN_RSA_BITS};
use crate::x509::bundle::PemBlocks;

/// Go's `%v` of a `[]string`: `[a b c]`.
fn go_list(types: &[&[u8]]) -> String {
    let names: Vec<String> = types
        .iter()
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .collect();
    format!("[{}]", names.join(" "))
}

/// Step 1: the `CERTIFICATE` blocks of the certificate input, with Go's errors when there is
/// none.
pub(crate) fn certificate_blocks(
    cert_pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let mut chain = Vec::new();
    let mut skipped: Vec<&[u8]> = Vec::new();
    for block in PemBlocks(cert_pem) {
        if block.label == b"CERTIFICATE" {
            chain.push(CertificateDer::from(block.bytes));
        } else {
            skipped.push(block.label);
        }
    }
    if !chain.is_empty() {
        return Ok(chain);
    }
    Err(ConfigError::new(match skipped.as_slice() {
        [] => "tls: failed to find any PEM data in certificate input".to_owned(),
        [one] if one.ends_with(b"PRIVATE KEY") => "tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched".to_owned(),
        types => format!(
            "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping PEM blocks of the following types: {}",
            go_list(types)
        ),
    }))
}

/// The DER of the key input's private-key block (step 2), before it is parsed. `Debug` shows
/// its length only.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct KeyBlock(Vec<u8>);

impl std::fmt::Debug for KeyBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyBlock({} bytes)", self.0.len())
    }
}

/// Step 2: the first block whose type is `PRIVATE KEY` or ends in ` PRIVATE KEY`, with Go's
/// errors when there is none.
pub(crate) fn key_block(key_pem: &[u8]) -> Result<KeyBlock, ConfigError> {
    let mut skipped: Vec<&[u8]> = Vec::new();
    for block in PemBlocks(key_pem) {
        if block.label == b"PRIVATE KEY" || block.label.ends_with(b" PRIVATE KEY") {
            return Ok(KeyBlock(block.bytes));
        }
        skipped.push(block.label);
    }
    Err(ConfigError::new(match skipped.as_slice() {
        [] => "tls: failed to find any PEM data in key input".to_owned(),
        [b"CERTIFICATE"] => {
            "tls: found a certificate rather than a key in the PEM for the private key".to_owned()
        }
        types => format!(
            "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input after skipping PEM blocks of the following types: {}",
            go_list(types)
        ),
    }))
}

/// The size in bits of an RSA private key's modulus: PKCS#1, or PKCS#8 holding an
/// `rsaEncryption` key; `None` for any other key, or one whose DER does not parse.
fn rsa_modulus_bits(der: &[u8]) -> Option<usize> {
    use crate::x509::der::{items, read_tlv};
    const INTEGER: u8 = 0x02;
    const OCTET_STRING: u8 = 0x04;
    const OID: u8 = 0x06;
    const SEQUENCE: u8 = 0x30;
    // 1.2.840.113549.1.1.1
    const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    let sequence = |der| {
        read_tlv(der)
            .filter(|(tlv, _)| tlv.tag == SEQUENCE)
            .map(|(tlv, _)| tlv.content)
    };
    let modulus_of = |pkcs1| {
        // RSAPrivateKey: version, modulus, …
        let mut fields = items(sequence(pkcs1)?);
        fields.next()?.filter(|v| v.tag == INTEGER)?;
        let modulus = fields.next()?.filter(|m| m.tag == INTEGER)?.content;
        Some(crate::jwt::der::bit_len(modulus)).filter(|&bits| bits > 0)
    };
    if let Some(bits) = modulus_of(der) {
        return Some(bits);
    }
    // PrivateKeyInfo: version, AlgorithmIdentifier, OCTET STRING (the PKCS#1 key).
    let mut fields = items(sequence(der)?);
    fields.next()?.filter(|v| v.tag == INTEGER)?;
    let algorithm = fields.next()?.filter(|a| a.tag == SEQUENCE)?;
    let (oid, _) = read_tlv(algorithm.content)?;
    if oid.tag != OID || oid.content != RSA_ENCRYPTION {
        return None;
    }
    modulus_of(fields.next()?.filter(|p| p.tag == OCTET_STRING)?.content)
}

/// Step 4, Go's `parsePrivateKey`: the DER as PKCS#1, then PKCS#8, then SEC1 (the block's type
/// is not looked at), as a key rustls signs with.
fn parse_private_key(
    block: &KeyBlock,
) -> Result<(PrivateKeyDer<'static>, Arc<dyn SigningKey>), ConfigError> {
    let der = &block.0;
    let tries: [PrivateKeyDer<'static>; 3] = [
        PrivatePkcs1KeyDer::from(der.clone()).into(),
        PrivatePkcs8KeyDer::from(der.clone()).into(),
        PrivateSec1KeyDer::from(der.clone()).into(),
    ];
    for key in tries {
        if let Ok(signing) = any_supported_type(&key) {
            return Ok((key, signing));
        }
    }
    // aws-lc-rs' errors name the algorithms tried, never the key; an RSA key it refuses for
    // its size (Go takes 1024 bits and up) says so: the size is no secret.
    Err(match rsa_modulus_bits(der) {
        Some(bits) if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) => ConfigError::new(format!(
            "tls: failed to parse private key: RSA keys must be {MIN_RSA_BITS} to {MAX_RSA_BITS} bits (this key has {bits})"
        )),
        _ => ConfigError::new("tls: failed to parse private key"),
    })
}

/// The signature algorithm of a public key whose algorithm OID is `oid`, as Go's
/// `x509.Certificate.PublicKey` types it (RSA, ECDSA, Ed25519; anything else is untyped).
fn key_algorithm(oid: &[u64]) -> Option<SignatureAlgorithm> {
    match oid {
        [1, 2, 840, 113549, 1, 1, 1] => Some(SignatureAlgorithm::RSA),
        [1, 2, 840, 10045, 2, 1] => Some(SignatureAlgorithm::ECDSA),
        [1, 3, 101, 112] => Some(SignatureAlgorithm::ED25519),
        _ => None,
    }
}

/// Steps 3 to 5 on the blocks found: the pair rustls presents, and the parsed key.
pub(crate) fn certified_key(
    chain: Vec<CertificateDer<'static>>,
    block: &KeyBlock,
) -> Result<(CertifiedKey, PrivateKeyDer<'static>), ConfigError> {
    let leaf = chain
        .first()
        .ok_or_else(|| ConfigError::new("tls: failed to find any PEM data in certificate input"))?;
    // The leaf is read with the port of Go's parser, which also types its key.
    let leaf_key = crate::x509::go_parse::go_parse_certificate(leaf).map_err(ConfigError::new)?;
    let (key, signing) = parse_private_key(block)?;
    match key_algorithm(&leaf_key) {
        None => return Err(ConfigError::new("tls: unknown public key algorithm")),
        Some(algorithm) if algorithm != signing.algorithm() => {
            return Err(ConfigError::new(
                "tls: private key type does not match public key type",
            ));
        }
        Some(_) => {}
    }
    let certified = CertifiedKey::new(chain, signing);
    match certified.keys_match() {
        Ok(()) => Ok((certified, key)),
        Err(rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => Err(
            ConfigError::new("tls: private key does not match public key"),
        ),
        Err(rustls::Error::InconsistentKeys(_)) => Err(ConfigError::new(
            "tls: cannot tell whether the private key matches the public key",
        )),
        Err(e) => Err(ConfigError::new(format!(
            "tls: failed to parse certificate: {e}"
        ))),
    }
}

/// Go's `tls.X509KeyPair(cert_pem, key_pem)`: the chain and key, checked, or Go's error.
pub(crate) fn x509_key_pair(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<(CertifiedKey, PrivateKeyDer<'static>), ConfigError> {
    let chain = certificate_blocks(cert_pem)?;
    let block = key_block(key_pem)?;
    certified_key(chain, &block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn pem(label: &str, der: &[u8]) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    }

    fn body(pem: &str) -> String {
        pem.lines().filter(|l| !l.starts_with("-----")).collect()
    }

    /// A self-signed certificate for `key`, PEM.
    fn cert(key: &rcgen::KeyPair) -> String {
        rcgen::CertificateParams::new(vec!["a".to_owned()])
            .unwrap()
            .self_signed(key)
            .unwrap()
            .pem()
    }

    /// The certificate's PEM with its last base64 digit before the padding given non-zero
    /// trailing bits (Go's decoder takes them), or `None` without padding.
    fn trailing_bits(pem: &str) -> Option<String> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bytes = pem.as_bytes().to_vec();
        let at = bytes.iter().position(|&b| b == b'=')? - 1;
        let digit = ALPHABET.iter().position(|&b| b == bytes[at]).unwrap();
        bytes[at] = ALPHABET[digit ^ 1];
        Some(String::from_utf8(bytes).unwrap())
    }

    /// Go 1.26's `tls.X509KeyPair` on each input (its answers recorded by a Go program over
    /// the same shapes of input): the same verdict and error text.
    #[test]
    fn x509_key_pair_is_gos() {
        let ka = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let kb = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let kr = rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).unwrap();
        let (cert_a, cert_r) = (cert(&ka), cert(&kr));
        let (key_a, key_b) = (ka.serialize_pem(), kb.serialize_pem());
        let p8a = ka.serialize_der();
        // SEC1 is inside the PKCS#8: PrivateKeyInfo's last OCTET STRING.
        let sec1a = {
            use crate::x509::der::{items, read_tlv};
            let (info, _) = read_tlv(&p8a).unwrap();
            items(info.content)
                .last()
                .unwrap()
                .unwrap()
                .content
                .to_vec()
        };
        let key_a_sec1 = pem("EC PRIVATE KEY", &sec1a);
        let key_r = {
            use crate::x509::der::{items, read_tlv};
            let der = kr.serialize_der();
            let (info, _) = read_tlv(&der).unwrap();
            pem(
                "RSA PRIVATE KEY",
                items(info.content).last().unwrap().unwrap().content,
            )
        };
        let ec_params =
            "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n";
        let junk = pem("FOO", b"junk");
        let encrypted = |b64: &str| {
            format!(
                "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n{b64}\n-----END EC PRIVATE KEY-----\n"
            )
        };
        let mut trailing = None;
        while trailing.is_none() {
            // A DER length that is not a multiple of 3 leaves padding (and trailing bits).
            trailing = trailing_bits(&cert(&ka));
        }
        let indented_end = cert_a.replacen("-----END", "  -----END", 1);
        let switched = "tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched";
        let skipped = |what: &str, types: &str| match what {
            "cert" => format!(
                "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping PEM blocks of the following types: {types}"
            ),
            _ => format!(
                "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input after skipping PEM blocks of the following types: {types}"
            ),
        };
        let no_cert_pem = "tls: failed to find any PEM data in certificate input";
        let no_key_pem = "tls: failed to find any PEM data in key input";
        let bad_key = "tls: failed to parse private key";
        let cases: Vec<(&str, String, String, Result<usize, String>)> = vec![
            ("ok", cert_a.clone(), key_a.clone(), Ok(1)),
            ("ok sec1", cert_a.clone(), key_a_sec1.clone(), Ok(1)),
            (
                "swapped",
                key_a.clone(),
                cert_a.clone(),
                Err(switched.into()),
            ),
            (
                "cert no pem",
                "hello".into(),
                key_a.clone(),
                Err(no_cert_pem.into()),
            ),
            (
                "cert only keys",
                format!("{ec_params}{key_a_sec1}"),
                key_a.clone(),
                Err(skipped("cert", "[EC PARAMETERS EC PRIVATE KEY]")),
            ),
            (
                "cert junk before",
                format!("{junk}{cert_a}"),
                key_a.clone(),
                Ok(1),
            ),
            (
                "cert key then cert",
                format!("{key_a}{cert_a}"),
                key_a.clone(),
                Ok(1),
            ),
            (
                "cert chain of two",
                format!("{cert_a}{junk}{cert_r}"),
                key_a.clone(),
                Ok(2),
            ),
            (
                "key ec params before",
                cert_a.clone(),
                format!("{ec_params}{key_a_sec1}"),
                Ok(1),
            ),
            (
                "key only cert",
                cert_a.clone(),
                cert_a.clone(),
                Err(
                    "tls: found a certificate rather than a key in the PEM for the private key"
                        .into(),
                ),
            ),
            (
                "key no pem",
                cert_a.clone(),
                "hello".into(),
                Err(no_key_pem.into()),
            ),
            (
                "key public and cert",
                cert_a.clone(),
                format!("{}{cert_a}", pem("PUBLIC KEY", &[1])),
                Err(skipped("key", "[PUBLIC KEY CERTIFICATE]")),
            ),
            (
                "key encrypted header real body",
                cert_a.clone(),
                encrypted(&body(&key_a_sec1)),
                Ok(1),
            ),
            (
                "key encrypted junk body",
                cert_a.clone(),
                encrypted("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="),
                Err(bad_key.into()),
            ),
            (
                "key ENCRYPTED PRIVATE KEY",
                cert_a.clone(),
                pem("ENCRYPTED PRIVATE KEY", b"xx"),
                Err(bad_key.into()),
            ),
            (
                "key PRIVATE KEYS label",
                cert_a.clone(),
                pem("PRIVATE KEYS", &p8a),
                Err(skipped("key", "[PRIVATE KEYS]")),
            ),
            (
                "key FOOPRIVATE KEY label",
                cert_a.clone(),
                pem("FOOPRIVATE KEY", &p8a),
                Err(skipped("key", "[FOOPRIVATE KEY]")),
            ),
            (
                "key rsa label pkcs8 body",
                cert_a.clone(),
                pem("RSA PRIVATE KEY", &p8a),
                Ok(1),
            ),
            (
                "key combined file",
                cert_a.clone(),
                format!("{cert_a}{key_a}"),
                Ok(1),
            ),
            (
                "cert trailing bits",
                trailing.unwrap(),
                key_a.clone(),
                Ok(1),
            ),
            (
                "cert indented END",
                indented_end,
                key_a.clone(),
                Err(no_cert_pem.into()),
            ),
            (
                "mismatch",
                cert_a.clone(),
                key_b.clone(),
                Err("tls: private key does not match public key".into()),
            ),
            (
                "type mismatch rsa key ec cert",
                cert_a.clone(),
                key_r.clone(),
                Err("tls: private key type does not match public key type".into()),
            ),
            (
                "type mismatch ec key rsa cert",
                cert_r.clone(),
                key_a.clone(),
                Err("tls: private key type does not match public key type".into()),
            ),
            ("rsa ok", cert_r.clone(), key_r.clone(), Ok(1)),
            (
                "bad leaf",
                pem("CERTIFICATE", &[0x30, 0x03, 0x02, 0x01, 0x01]),
                key_a.clone(),
                Err("x509: malformed tbs certificate".into()),
            ),
            (
                "bad leaf bad key",
                pem("CERTIFICATE", &[1, 2]),
                pem("PRIVATE KEY", &[1, 2]),
                Err("x509: malformed certificate".into()),
            ),
            (
                "bad key",
                cert_a.clone(),
                pem("PRIVATE KEY", &[1, 2]),
                Err(bad_key.into()),
            ),
            (
                "cert no pem key no pem",
                "x".into(),
                "y".into(),
                Err(no_cert_pem.into()),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        let mut wrong = Vec::new();
        for (name, cert_pem, key_pem, want) in cases {
            // (reader, its verdict, with the chain's length when it tells it): the function, and
            // the readers that go through it (the serving pair, a kubeconfig's client pair)
            let mut readers: Vec<(&str, Result<Option<usize>, String>)> = vec![(
                "X509KeyPair",
                x509_key_pair(cert_pem.as_bytes(), key_pem.as_bytes())
                    .map(|(c, _)| Some(c.cert.len()))
                    .map_err(|e| e.to_string()),
            )];
            #[cfg(feature = "tls")]
            {
                let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
                std::fs::write(&cert, &cert_pem).unwrap();
                std::fs::write(&key, &key_pem).unwrap();
                let got = super::super::serving_cert::ServingCertReloader::load(&cert, &key)
                    .map(|s| Some(s.current().cert.len()))
                    .map_err(|e| e.to_string());
                readers.push(("serving", got));
            }
            #[cfg(feature = "remote")]
            {
                use crate::outbound::{ConnectionInfo, Pem};
                let info = ConnectionInfo::new("https://x").with_client_cert(
                    Pem::Data(cert_pem.clone().into_bytes()),
                    Pem::Data(key_pem.clone().into_bytes()),
                );
                readers.push((
                    "client",
                    info.tls_config().map(|_| None).map_err(|e| e.to_string()),
                ));
            }
            let _ = &dir;
            for (reader, got) in readers {
                let same = match (&got, &want) {
                    (Ok(None), Ok(_)) => true,
                    (Ok(Some(n)), Ok(m)) => n == m,
                    (Err(e), Err(w)) => e == w,
                    _ => false,
                };
                if !same {
                    wrong.push(format!("{name} ({reader}): got {got:?}, Go {want:?}"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// `KeyBlock`'s `Debug` is its length.
    #[test]
    fn key_block_debug_is_its_length() {
        let key = rcgen::KeyPair::generate().unwrap().serialize_pem();
        let block = key_block(key.as_bytes()).unwrap();
        assert_eq!(
            format!("{block:?}"),
            format!("KeyBlock({} bytes)", block.0.len())
        );
    }
}
