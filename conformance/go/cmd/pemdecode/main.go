// Command pemdecode writes tests/vectors/go_pem.json: the blocks Go's encoding/pem Decode
// finds when called in a loop until it returns no block, as client-go's cert.ParseCertsPEM and
// keyutil.ParsePublicKeysPEM and crypto/x509's CertPool.AppendCertsFromPEM call it (for the
// CA files, --service-account-key-file and the outbound CA bundles), for kube-authn's port of
// it (src/x509/bundle.rs pem_decode, checked by the test pem_blocks_match_go_vectors,
// `cargo test --all-features --lib bundle`).
//
// Each row: the input, and each block's type, whether it has headers and its bytes (hex).
// The corpus: hand-picked edge cases (two real certificates among them), then mutants of them
// from a fixed seed (math/rand/v2 PCG), so every run writes the same file. A string that is not
// UTF-8 is written as {"hex": "..."}.
//
//	cd conformance/go && GOPROXY=off GOFLAGS=-mod=mod GOSUMDB=off go run ./cmd/pemdecode ../../src/x509/testdata ../../tests/vectors/go_pem.json
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"kube-authn.example/conformance/internal/rowjson"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// str is a string written as JSON text, or {"hex": ...} when it is not UTF-8.
type str = rowjson.Str

var marshal = rowjson.Marshal

type block struct {
	Type    str    `json:"type"`
	Headers bool   `json:"headers"`
	Bytes   string `json:"bytes"`
}

type row struct {
	In     str     `json:"in"`
	Blocks []block `json:"blocks"`
}

// decodeAll is the loop of cert.ParseCertsPEM (for len(data) > 0 { Decode; nil → stop }).
func decodeAll(data []byte) []block {
	out := []block{}
	for len(data) > 0 {
		var p *pem.Block
		p, data = pem.Decode(data)
		if p == nil {
			break
		}
		out = append(out, block{str(p.Type), len(p.Headers) != 0, hex.EncodeToString(p.Bytes)})
	}
	return out
}

func blk(typ, body string) string {
	return "-----BEGIN " + typ + "-----\n" + body + "\n-----END " + typ + "-----\n"
}

func handPicked(ca, client string) []string {
	c := func(body string) string { return blk("CERTIFICATE", body) }
	cases := []string{
		"", "junk", "\n", c("QUJD"), "junk\n" + c("QUJDREVG"),
		// headers
		"-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nA: b\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nA: b\n\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\n:\n\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nA: b\nC: d\r\n\r\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\nA: b\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nA: b\n-----END CERTIFICATE-----:\n",
		"-----BEGIN CERTIFICATE-----\nA: b\n-----END CERTIFICATE-----:",
		"-----BEGIN CERTIFICATE-----\nA: b\n-----END CERTIFICATE-----:\n" + c("QUJD"),
		"-----BEGIN X-----\nA: b\n-----END X-----:\n" + blk("Y", "QUJD"),
		"-----BEGIN CERTIFICATE-----\nA: b\n-----END CERTIFICATE-----\n" + c("QUJD"),
		// empty bodies and types
		"-----BEGIN X-----\n-----END X-----\n", "-----BEGIN X-----\n-----END X-----",
		"-----BEGIN X-----\r\n-----END X-----\r\n", "-----BEGIN X-----\n\n-----END X-----\n",
		"-----BEGIN X----------END X-----\n", "-----BEGIN -----\nQUJD\n-----END -----\n",
		"-----BEGIN -----\nQUJD\n-----END -----BEGIN X-----\nQUJD\n-----END X-----\n",
		"-----BEGIN -----\n!!!!\n-----END -----BEGIN X-----\nQUJD\n-----END X-----\n",
		// END line
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END KEY-----\n" + blk("X", "QQ=="),
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----x\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE----- \t\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE----- x\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE------\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----",
		"-----BEGIN CERTIFICATE-----\nQUJD\n  -----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\r\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\r\r\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\f\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n-----END  CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nQUJD-----END CERTIFICATE-----\n",
		// BEGIN line
		"x-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n",
		" -----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN  CERTIFICATE-----  \nQUJD\n-----END  CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE----- \t\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----x\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\f\nQUJD\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE-----\nQUJD\n", "-----BEGIN CERTIFICATE-----\nMIIB\n" + c("QUJD"),
		"-----BEGIN CERTIFICATE-----\n" + c("QUJD"), c("QUJD") + "-----BEGIN CERTIFICATE-----\nQUJD\n",
		"-----BEGIN X-----\nQUJD\n-----BEGIN Y-----\nQUJD\n-----END X-----\n",
		// line endings and white space in the body
		"-----BEGIN CERTIFICATE-----\r\nQUJD\r\n-----END CERTIFICATE-----\r\n",
		"-----BEGIN CERTIFICATE-----\rQUJD\r-----END CERTIFICATE-----\r",
		c("QU JD"), c("QU\tJD"), c("QU\fJD"), c("QU\vJD"), c("QU\rJD"), c("QU\r\nJD"), c(" QUJD "),
		c("QU\x00JD"), c("QUJD\n\n"), c("\n\nQUJD"), c(" Q U\tJ\rD "),
		// base64 padding and trailing bits
		c("QQ=="), c("QQ="), c("QQ"), c("QR=="), c("QUI="), c("QUJ="), c("QUJ"), c("QUI"), c("QUJD===="),
		c("QQ==QQ=="), c("Q==="), c("="), c("===="), c("QQ=\n="), c("QQ= ="), c("QUJD="), c("QUJDQ"),
		c("QUJD-_"), c("QUJD+/=="), c("Q"),
		// several blocks, failures in between
		c("QUJD") + c("!!!!") + c("REVG"), c("!!!!") + c("QUJD"), "junk\n" + c("QUJD") + "junk\n" + blk("PUBLIC KEY", "REVG"),
		// the real certificates and the reviewed cases
		ca, client, ca + client,
		strings.Replace(client, "ktA=", "ktB=", 1),
		"-----BEGIN CERTIFICATE-----\nMIIB\n" + ca,
		strings.Replace(ca, "\n", "\n\f", 3),
		strings.Replace(ca, "-----END", "  -----END", 1),
		strings.ReplaceAll(ca, "\n", "\r\n"),
		strings.TrimRight(ca, "\n"),
		strings.Replace(ca, "\n", "\n ", 4),
	}
	return cases
}

var tokens = []string{
	"\n", "\r\n", "\r", " ", "\t", "\f", "\v", "\x00", "-", "-----", "=", "==", ":", "A", "x", "+", "/",
	"-----BEGIN ", "-----END ", "CERTIFICATE", "-----BEGIN X-----\n", "\n-----END X-----\n",
	"-----END CERTIFICATE-----", "\n-----BEGIN CERTIFICATE-----\n", "Proc-Type: 4,ENCRYPTED\n",
	"\xff",
}

func mutate(r *rand.Rand, s string) string {
	b := []byte(s)
	for n := 1 + r.IntN(2); n > 0; n-- {
		pos := 0
		if len(b) > 0 {
			pos = r.IntN(len(b) + 1)
		}
		switch op := r.IntN(10); {
		case op <= 3: // insert a token
			t := tokens[r.IntN(len(tokens))]
			b = append(b[:pos:pos], append([]byte(t), b[pos:]...)...)
		case op <= 5 && pos < len(b): // delete a few bytes
			end := min(len(b), pos+1+r.IntN(4))
			b = append(b[:pos:pos], b[end:]...)
		case op <= 7 && pos < len(b): // replace a byte
			b[pos] = "\n\r \t=:-AQx/+\f"[r.IntN(13)]
		case op == 8: // truncate
			b = b[:pos]
		default: // duplicate a span
			end := min(len(b), pos+r.IntN(40))
			b = append(b[:end:end], append(append([]byte{}, b[pos:end]...), b[end:]...)...)
		}
	}
	return string(b)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pemdecode <src/x509/testdata> <out.json>")
		os.Exit(2)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(os.Args[1], name))
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	ca, client := read("doc-ca.pem"), read("doc-client.pem")
	seeds := handPicked(ca, client)
	inputs := append([]string{}, seeds...)
	r := rand.New(rand.NewPCG(1, 2))
	// Short seeds, those Go finds a block in twice (mutants of them keep more blocks).
	short := []string{}
	for _, s := range seeds {
		if len(s) < 200 {
			short = append(short, s)
			if len(decodeAll([]byte(s))) > 0 {
				short = append(short, s)
			}
		}
	}
	for range 2500 {
		s := short[r.IntN(len(short))]
		if r.IntN(4) == 0 {
			s += short[r.IntN(len(short))]
		}
		inputs = append(inputs, mutate(r, s))
	}
	for range 40 {
		inputs = append(inputs, mutate(r, []string{ca, client}[r.IntN(2)]))
	}
	seen := map[string]bool{}
	var out bytes.Buffer
	fmt.Fprintf(&out, "{\"comment\": \"written by conformance/go/cmd/pemdecode (%s): the blocks of encoding/pem Decode called in a loop, as cert.ParseCertsPEM calls it\",\n\"rows\": [\n", runtime.Version())
	first := true
	for _, in := range inputs {
		if seen[in] {
			continue
		}
		seen[in] = true
		line, err := marshal(row{str(in), decodeAll([]byte(in))})
		if err != nil {
			panic(err)
		}
		if !first {
			out.WriteString(",\n")
		}
		first = false
		out.Write(line)
	}
	out.WriteString("\n]}\n")
	if err := os.WriteFile(os.Args[2], out.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
