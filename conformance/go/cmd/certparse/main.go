// Command certparse writes tests/vectors/go_parse_certificate.json: certificates that differ
// from a well-formed one in one detail Go's x509.ParseCertificate looks at (structure,
// version, serial, algorithm identifiers, times, names, public keys, each extension it
// parses), with Go's verdict on each ("" when it parses, otherwise its error text).
// kube-authn's x509::go_parse::go_parses_certificate is checked against it (--lib x509).
//
//	cd conformance/go && go run ./cmd/certparse ../../tests/vectors/go_parse_certificate.json
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"time"
)

type testCase struct {
	Name string `json:"name"`
	DER  string `json:"der"`
	Go   string `json:"go"`
}

type file struct {
	Comment string     `json:"comment"`
	Cases   []testCase `json:"cases"`
}

func tlv(tag byte, body ...[]byte) []byte {
	var c []byte
	for _, b := range body {
		c = append(c, b...)
	}
	l := len(c)
	var h []byte
	switch {
	case l < 128:
		h = []byte{tag, byte(l)}
	case l < 256:
		h = []byte{tag, 0x81, byte(l)}
	default:
		h = []byte{tag, 0x82, byte(l >> 8), byte(l)}
	}
	return append(h, c...)
}

type parts struct {
	version, serial, sigalg, issuer, validity, subject, spki, exts, outerAlg, sig []byte
}

func (p parts) der() []byte {
	tbs := tlv(0x30, p.version, p.serial, p.sigalg, p.issuer, p.validity, p.subject, p.spki, p.exts)
	return tlv(0x30, tbs, p.outerAlg, p.sig)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: certparse tests/vectors/go_parse_certificate.json")
		os.Exit(2)
	}
	// A fixed P-256 key (scalar 7...7) and a fixed signature: the signature is not checked.
	d := new(big.Int).SetBytes([]byte{0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07})
	x, y := elliptic.P256().ScalarBaseMult(d.Bytes())
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		panic(err)
	}
	_ = pkix.Name{}
	_ = time.Time{}
	ecdsaSHA256 := tlv(0x30, tlv(0x06, []byte{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02}))
	name := tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, []byte{0x55, 4, 3}), tlv(0x13, []byte("x")))))
	validity := tlv(0x30, tlv(0x17, []byte("700101000000Z")), tlv(0x17, []byte("330518033320Z")))
	ext := func(oid []byte, crit bool, val []byte) []byte {
		if crit {
			return tlv(0x30, tlv(0x06, oid), []byte{1, 1, 0xff}, tlv(0x04, val))
		}
		return tlv(0x30, tlv(0x06, oid), tlv(0x04, val))
	}
	exts := func(e ...[]byte) []byte { return tlv(0xa3, tlv(0x30, e...)) }
	ku := []byte{0x55, 0x1d, 0x0f}
	bc := []byte{0x55, 0x1d, 0x13}
	san := []byte{0x55, 0x1d, 0x11}
	nc := []byte{0x55, 0x1d, 0x1e}
	p := parts{
		version:  tlv(0xa0, []byte{2, 1, 2}),
		serial:   []byte{2, 1, 5},
		sigalg:   ecdsaSHA256,
		issuer:   name,
		validity: validity,
		subject:  name,
		spki:     spki,
		exts:     exts(ext(ku, true, []byte{3, 2, 7, 0x80}), ext(bc, true, tlv(0x30))),
		outerAlg: ecdsaSHA256,
		sig:      tlv(0x03, []byte{0, 0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01}),
	}
	var cases []testCase
	add := func(name string, der []byte) {
		cases = append(cases, testCase{Name: name, DER: hex.EncodeToString(der)})
	}
	with := func(f func(q *parts)) []byte {
		q := p
		f(&q)
		return q.der()
	}
	withExts := func(e ...[]byte) []byte { return with(func(q *parts) { q.exts = exts(e...) }) }
	withValidity := func(nb []byte) []byte {
		return with(func(q *parts) { q.validity = tlv(0x30, nb, tlv(0x17, []byte("330518033320Z"))) })
	}
	withSAN := func(names ...[]byte) []byte { return withExts(ext(san, false, tlv(0x30, names...))) }
	withNC := func(crit bool, body []byte) []byte { return withExts(ext(nc, crit, body)) }
	subtree := func(tag byte, v []byte) []byte { return tlv(0x30, tlv(tag, v)) }

	add("well-formed", p.der())
	add("trailing data", append(p.der(), 0))
	add("non-minimal length", append([]byte{0x30, 0x81, byte(len(p.der()) - 2)}, p.der()[2:]...))
	add("negative serial", with(func(q *parts) { q.serial = []byte{2, 1, 0xff} }))
	add("zero serial", with(func(q *parts) { q.serial = []byte{2, 1, 0} }))
	add("non-minimal serial", with(func(q *parts) { q.serial = []byte{2, 2, 0, 5} }))
	add("version 4", with(func(q *parts) { q.version = tlv(0xa0, []byte{2, 1, 3}) }))
	add("version -1", with(func(q *parts) { q.version = tlv(0xa0, []byte{2, 1, 0xff}) }))
	add("version with trailing bytes", with(func(q *parts) { q.version = tlv(0xa0, []byte{2, 1, 2, 5, 0}) }))
	add("v1 with extensions", with(func(q *parts) { q.version = nil }))
	add("v1 with unique IDs and trailing TBS", with(func(q *parts) { q.version = nil; q.exts = []byte{0x81, 1, 0, 5, 0} }))
	add("issuerUniqueID and subjectUniqueID", with(func(q *parts) { q.exts = append([]byte{0x81, 1, 0, 0x82, 1, 0}, p.exts...) }))
	add("trailing TBS bytes", with(func(q *parts) { q.exts = append(append([]byte{}, p.exts...), 5, 0) }))
	add("outer algorithm differs", with(func(q *parts) {
		q.outerAlg = tlv(0x30, tlv(0x06, []byte{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03}))
	}))
	add("unknown signature algorithm", with(func(q *parts) { q.sigalg = tlv(0x30, tlv(0x06, []byte{0x2a, 0x03})); q.outerAlg = q.sigalg }))
	add("malformed signature algorithm OID", with(func(q *parts) { q.sigalg = tlv(0x30, tlv(0x06, []byte{0x2a, 0x80, 0x01})); q.outerAlg = q.sigalg }))
	add("signature not a BIT STRING", with(func(q *parts) { q.sig = tlv(0x04, []byte{0}) }))
	add("signature BIT STRING padding 8", with(func(q *parts) { q.sig = tlv(0x03, []byte{8, 0}) }))
	add("UTCTime with +0000", withValidity(tlv(0x17, []byte("700101000000+0000"))))
	add("UTCTime with +0100", withValidity(tlv(0x17, []byte("700101000000+0100"))))
	add("UTCTime without seconds", withValidity(tlv(0x17, []byte("7001010000Z"))))
	add("UTCTime February 30", withValidity(tlv(0x17, []byte("700230000000Z"))))
	add("UTCTime second 60", withValidity(tlv(0x17, []byte("700101000060Z"))))
	add("UTCTime without zone", withValidity(tlv(0x17, []byte("700101000000"))))
	add("GeneralizedTime with fraction", withValidity(tlv(0x18, []byte("19700101000000.5Z"))))
	add("GeneralizedTime before 2050", withValidity(tlv(0x18, []byte("20000101000000Z"))))
	add("validity not a time", withValidity(tlv(0x02, []byte{1})))
	add("issuer PrintableString with star", with(func(q *parts) {
		q.issuer = tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, []byte{0x55, 4, 3}), tlv(0x13, []byte("a*b")))))
	}))
	add("issuer PrintableString with @", with(func(q *parts) {
		q.issuer = tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, []byte{0x55, 4, 3}), tlv(0x13, []byte("a@b")))))
	}))
	add("subject invalid UTF-8", with(func(q *parts) {
		q.subject = tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, []byte{0x55, 4, 3}), tlv(0x0c, []byte("a\xffb")))))
	}))
	add("subject OCTET STRING value", with(func(q *parts) {
		q.subject = tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, []byte{0x55, 4, 3}), tlv(0x04, []byte("ab")))))
	}))
	add("subject attribute with trailing element", with(func(q *parts) {
		q.subject = tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, []byte{0x55, 4, 3}), tlv(0x13, []byte("a")), []byte{5, 0})))
	}))
	add("empty names", with(func(q *parts) { q.issuer = tlv(0x30); q.subject = tlv(0x30) }))
	add("EC point off the curve", with(func(q *parts) {
		s := append([]byte{}, spki...)
		s[len(s)-1] ^= 1
		q.spki = s
	}))
	add("EC compressed point", with(func(q *parts) {
		q.spki = tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01}), tlv(0x06, []byte{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07})),
			tlv(0x03, append([]byte{0, 2}, x.FillBytes(make([]byte, 32))...)))
	}))
	add("EC unknown curve", with(func(q *parts) {
		q.spki = tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01}), tlv(0x06, []byte{0x2a, 0x03})),
			tlv(0x03, []byte{0, 4, 1, 2}))
	}))
	add("RSA key without NULL parameters", with(func(q *parts) {
		q.spki = tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01})),
			tlv(0x03, append([]byte{0}, tlv(0x30, tlv(0x02, []byte{0x00, 0xc1}), tlv(0x02, []byte{3}))...)))
	}))
	add("RSA key with negative exponent", with(func(q *parts) {
		q.spki = tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01}), []byte{5, 0}),
			tlv(0x03, append([]byte{0}, tlv(0x30, tlv(0x02, []byte{0x00, 0xc1}), tlv(0x02, []byte{0xfd}))...)))
	}))
	add("Ed25519 key of 31 bytes", with(func(q *parts) {
		q.spki = tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2b, 0x65, 0x70})), tlv(0x03, append([]byte{0}, make([]byte, 31)...)))
	}))
	add("unknown key algorithm", with(func(q *parts) {
		q.spki = tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x03})), tlv(0x03, []byte{0, 1}))
	}))
	add("duplicate extension", withExts(ext(ku, true, []byte{3, 2, 7, 0x80}), ext(ku, true, []byte{3, 2, 7, 0x80})))
	add("empty extension list", with(func(q *parts) { q.exts = tlv(0xa3, tlv(0x30)) }))
	add("extension critical FALSE", withExts(tlv(0x30, tlv(0x06, ku), []byte{1, 1, 0}, tlv(0x04, []byte{3, 2, 7, 0x80}))))
	add("extension critical 01", withExts(tlv(0x30, tlv(0x06, ku), []byte{1, 1, 1}, tlv(0x04, []byte{3, 2, 7, 0x80}))))
	add("extension value not an OCTET STRING", withExts(tlv(0x30, tlv(0x06, ku), tlv(0x03, []byte{0}))))
	add("unknown critical extension", withExts(ext([]byte{0x2a, 0x03}, true, []byte{5, 0})))
	add("keyUsage not a BIT STRING", withExts(ext(ku, true, []byte{4, 0})))
	add("keyUsage with trailing bytes", withExts(ext(ku, true, []byte{3, 2, 7, 0x80, 5, 0})))
	add("basicConstraints negative pathLen", withExts(ext(bc, true, tlv(0x30, []byte{1, 1, 0xff}, []byte{2, 1, 0xff}))))
	add("basicConstraints pathLen 2^63", withExts(ext(bc, true, tlv(0x30, []byte{1, 1, 0xff}, []byte{2, 9, 0, 0x80, 0, 0, 0, 0, 0, 0, 0}))))
	add("basicConstraints cA 01", withExts(ext(bc, true, tlv(0x30, []byte{1, 1, 1}))))
	add("basicConstraints not a SEQUENCE", withExts(ext(bc, true, []byte{5, 0})))
	add("SAN IP of length 5", withSAN(tlv(0x87, []byte{1, 2, 3, 4, 5})))
	add("SAN IP of length 16", withSAN(tlv(0x87, make([]byte, 16))))
	add("SAN dNSName not ASCII", withSAN(tlv(0x82, []byte("a\xffb"))))
	add("SAN rfc822Name not ASCII", withSAN(tlv(0x81, []byte("a\xc3\xa9@b"))))
	add("SAN URI not ASCII", withSAN(tlv(0x86, []byte("https://\xc3\xa9"))))
	add("SAN URI with a control character", withSAN(tlv(0x86, []byte("https://a/\x01"))))
	add("SAN URI host with trailing dot", withSAN(tlv(0x86, []byte("https://a.example./x"))))
	add("SAN URI host with empty label", withSAN(tlv(0x86, []byte("spiffe://a..b/x"))))
	add("SAN URI spiffe", withSAN(tlv(0x86, []byte("spiffe://cluster.local/ns/a/sa/b"))))
	add("SAN URI with port", withSAN(tlv(0x86, []byte("https://a.example:8443/x"))))
	add("SAN empty", withSAN())
	add("SAN element with bad length", withExts(ext(san, false, []byte{0x30, 0x02, 0x82, 0x05})))
	add("SAN directoryName", withSAN(tlv(0xa4, name)))
	add("SKID malformed", withExts(ext([]byte{0x55, 0x1d, 0x0e}, false, []byte{4, 1})))
	add("SKID critical", withExts(ext([]byte{0x55, 0x1d, 0x0e}, true, tlv(0x04, []byte{1}))))
	add("AKID critical", withExts(ext([]byte{0x55, 0x1d, 0x23}, true, tlv(0x30, tlv(0x80, []byte{1})))))
	add("AKID not a SEQUENCE", withExts(ext([]byte{0x55, 0x1d, 0x23}, false, tlv(0x04, []byte{1}))))
	add("EKU empty", withExts(ext([]byte{0x55, 0x1d, 0x25}, false, tlv(0x30))))
	add("EKU with a malformed OID", withExts(ext([]byte{0x55, 0x1d, 0x25}, false, tlv(0x30, tlv(0x06, []byte{0x2b, 0x80, 0x01})))))
	add("EKU with an INTEGER", withExts(ext([]byte{0x55, 0x1d, 0x25}, false, tlv(0x30, []byte{2, 1, 1}))))
	add("nameConstraints empty", withNC(true, tlv(0x30)))
	add("nameConstraints empty permitted", withNC(true, tlv(0x30, tlv(0xa0))))
	add("nameConstraints dNSName", withNC(true, tlv(0x30, tlv(0xa0, subtree(0x82, []byte(".example.com"))))))
	add("nameConstraints dNSName with trailing dot", withNC(true, tlv(0x30, tlv(0xa0, subtree(0x82, []byte("example.com."))))))
	add("nameConstraints dNSName not ASCII", withNC(true, tlv(0x30, tlv(0xa0, subtree(0x82, []byte("\xc3\xa9.com"))))))
	add("nameConstraints IP of length 9", withNC(true, tlv(0x30, tlv(0xa1, subtree(0x87, make([]byte, 9))))))
	add("nameConstraints IP with a bad mask", withNC(true, tlv(0x30, tlv(0xa1, subtree(0x87, []byte{10, 0, 0, 0, 255, 0, 255, 0})))))
	add("nameConstraints rfc822Name domain with empty label", withNC(true, tlv(0x30, tlv(0xa0, subtree(0x81, []byte("a..b"))))))
	add("nameConstraints URI that is an IP", withNC(true, tlv(0x30, tlv(0xa0, subtree(0x86, []byte("10.0.0.1"))))))
	add("nameConstraints trailing element", withNC(true, tlv(0x30, tlv(0xa0, subtree(0x82, []byte("a"))), []byte{5, 0})))
	add("certificatePolicies empty", withExts(ext([]byte{0x55, 0x1d, 0x20}, false, tlv(0x30))))
	add("certificatePolicies duplicate", withExts(ext([]byte{0x55, 0x1d, 0x20}, false, tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x03})), tlv(0x30, tlv(0x06, []byte{0x2a, 0x03}))))))
	add("certificatePolicies bad OID", withExts(ext([]byte{0x55, 0x1d, 0x20}, false, tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x83}))))))
	add("CRL distribution point not a SEQUENCE", withExts(ext([]byte{0x55, 0x1d, 0x1f}, false, tlv(0x30, []byte{5, 0}))))
	add("CRL distribution point with URI", withExts(ext([]byte{0x55, 0x1d, 0x1f}, false, tlv(0x30, tlv(0x30, tlv(0xa0, tlv(0xa0, tlv(0x86, []byte("http://x")))))))))
	add("CRL distribution point fullName primitive", withExts(ext([]byte{0x55, 0x1d, 0x1f}, false, tlv(0x30, tlv(0x30, tlv(0xa0, tlv(0x80, []byte("x"))))))))
	add("AIA critical", withExts(ext([]byte{0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x01, 0x01}, true, tlv(0x30))))
	add("AIA entry without method", withExts(ext([]byte{0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x01, 0x01}, false, tlv(0x30, tlv(0x30, tlv(0x86, []byte("x")))))))
	add("policyConstraints of 9 bytes", withExts(ext([]byte{0x55, 0x1d, 0x24}, false, tlv(0x30, tlv(0x80, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0})))))
	add("policyMappings with one OID", withExts(ext([]byte{0x55, 0x1d, 0x21}, false, tlv(0x30, tlv(0x30, tlv(0x06, []byte{0x2a, 0x03}))))))
	add("inhibitAnyPolicy not an INTEGER", withExts(ext([]byte{0x55, 0x1d, 0x36}, false, []byte{5, 0})))
	add("inhibitAnyPolicy non-minimal", withExts(ext([]byte{0x55, 0x1d, 0x36}, false, []byte{2, 2, 0, 1})))

	for i := range cases {
		der, _ := hex.DecodeString(cases[i].DER)
		if _, err := x509.ParseCertificate(der); err != nil {
			cases[i].Go = err.Error()
		}
	}
	out := file{
		Comment: fmt.Sprintf("written by conformance/go/cmd/certparse: x509.ParseCertificate's verdict (\"\" = parses), %s", runtime.Version()),
		Cases:   cases,
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(os.Args[1], append(b, '\n'), 0o644); err != nil {
		panic(err)
	}
	fmt.Println(len(cases), "cases")
}
