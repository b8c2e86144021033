// Package bench holds testing.B benchmarks of k8s.io/apiserver on the same work as
// kube-authn's criterion benches (benches/*.rs). conformance/bench.sh runs both and writes
// docs/performance.md. Each benchmark states the work it measures; keep the Rust side equal.
//
// Run: go test -run '^$' -bench . -benchmem -cpu 1 ./bench
package bench

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "gopkg.in/go-jose/go-jose.v2"
	"gopkg.in/go-jose/go-jose.v2/jwt"

	apiserver "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"
	"k8s.io/klog/v2"
)

func init() {
	// k8s logs informational lines (e.g. the OIDC root CA notice) that would interleave
	// with benchmark output.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
}

// staticToken is the i-th token: 43 characters, like base64url of 32 random bytes (as in
// benches/static_token.rs).
func staticToken(i int) string { return fmt.Sprintf("%043d", i*7919) }

// staticTokens is a token file of 10,000 rows, like benches/static_token.rs.
func staticTokens() *tokenfile.TokenAuthenticator {
	tokens := map[string]*user.DefaultInfo{}
	for i := 0; i < 10000; i++ {
		tokens[staticToken(i)] = &user.DefaultInfo{
			Name: fmt.Sprintf("user-%d", i), UID: fmt.Sprintf("uid-%d", i), Groups: []string{"group-a", "group-b"},
		}
	}
	return tokenfile.New(tokens)
}

func bearerRequest(token string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "https://kube-authn.test/api/v1/namespaces", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

func mustAuthenticate(b *testing.B, a authenticator.Request, req *http.Request) {
	b.Helper()
	if _, ok, err := a.AuthenticateRequest(req); !ok || err != nil {
		b.Fatalf("not authenticated: ok=%v err=%v", ok, err)
	}
}

// BenchmarkStaticTokenBearer: Authorization: Bearer over a 10,000-row token file, hit.
// The request is built once; bearertoken deletes the header on success, so it is restored
// each iteration (a map assignment, the same cost kube-authn does not pay).
func BenchmarkStaticTokenBearer(b *testing.B) {
	a := bearertoken.New(staticTokens())
	req := bearerRequest(staticToken(5000))
	value := req.Header["Authorization"]
	mustAuthenticate(b, a, req)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req.Header["Authorization"] = value
		if _, ok, _ := a.AuthenticateRequest(req); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkUnion8LastMatches: Authorization: Bearer over a token union of 8 in-memory
// token tables of 100 tokens each; the token is in the 8th (benches/union.rs union8).
func BenchmarkUnion8LastMatches(b *testing.B) {
	var hs []authenticator.Token
	for i := 0; i < 8; i++ {
		table := map[string]*authenticator.Response{}
		for j := 0; j < 100; j++ {
			table[fmt.Sprintf("%02d%030d", i, j)] = &authenticator.Response{User: &user.DefaultInfo{
				Name: fmt.Sprintf("user-%d-%d", i, j), UID: fmt.Sprintf("%d%d", i, j), Groups: []string{"team"}}}
		}
		hs = append(hs, authenticator.TokenFunc(func(ctx context.Context, t string) (*authenticator.Response, bool, error) {
			r, ok := table[t]
			return r, ok, nil
		}))
	}
	a := bearertoken.New(tokenunion.New(hs...))
	req := bearerRequest(fmt.Sprintf("07%030d", 42))
	value := req.Header["Authorization"]
	mustAuthenticate(b, a, req)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req.Header["Authorization"] = value
		if _, ok, _ := a.AuthenticateRequest(req); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkTokenCacheHit: k8s' cached token authenticator (10 s success TTL, as
// kube-apiserver) answering cached 1.2 KB tokens (1000 of them, cycled) with API audiences on
// the context (benches/token_cache.rs "hit_1.2KB/with audiences").
func BenchmarkTokenCacheHit(b *testing.B) {
	resp := &authenticator.Response{User: &user.DefaultInfo{Name: "cached", Groups: []string{"g"}}, Audiences: authenticator.Audiences{"api"}}
	delegate := authenticator.TokenFunc(func(ctx context.Context, token string) (*authenticator.Response, bool, error) {
		return resp, true, nil
	})
	a := cache.New(delegate, true, 10*time.Second, 0)
	ctx := authenticator.WithAudiences(context.Background(), authenticator.Audiences{"api"})
	tokens := make([]string, 1000)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("%04d", i) + strings.Repeat("t", 1196)
		if _, ok, err := a.AuthenticateToken(ctx, tokens[i]); !ok || err != nil {
			b.Fatal("warm-up failed")
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := a.AuthenticateToken(ctx, tokens[i%len(tokens)]); !ok {
			b.Fatal("miss")
		}
	}
}

type pki struct {
	roots  *x509.CertPool
	chain1 []*x509.Certificate // leaf signed by the root
	chain2 []*x509.Certificate // leaf, intermediate (signed by the root)
}

func newCert(b *testing.B, tmpl *x509.Certificate, parent *x509.Certificate, parentKey crypto.Signer) (*x509.Certificate, crypto.Signer) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		b.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		b.Fatal(err)
	}
	return cert, key
}

var serial int64

func template(cn string, org []string, ca bool) *x509.Certificate {
	serial++
	t := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn, Organization: org},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	if ca {
		t.IsCA, t.BasicConstraintsValid = true, true
		t.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	} else {
		t.KeyUsage = x509.KeyUsageDigitalSignature
		t.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	return t
}

// newPKI builds ECDSA P-256 chains: root → leaf, and root → intermediate → leaf.
func newPKI(b *testing.B, leafCN string) pki {
	root, rootKey := newCert(b, template("bench-root", nil, true), nil, nil)
	leaf1, _ := newCert(b, template(leafCN, []string{"system:masters", "dev"}, false), root, rootKey)
	inter, interKey := newCert(b, template("bench-intermediate", nil, true), root, rootKey)
	leaf2, _ := newCert(b, template(leafCN, []string{"system:masters", "dev"}, false), inter, interKey)
	roots := x509.NewCertPool()
	roots.AddCert(root)
	return pki{roots: roots, chain1: []*x509.Certificate{leaf1}, chain2: []*x509.Certificate{leaf2, inter}}
}

func tlsRequest(chain []*x509.Certificate) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "https://kube-authn.test/api", nil)
	req.TLS = &tls.ConnectionState{PeerCertificates: chain}
	return req
}

func benchX509(b *testing.B, level int) {
	p := newPKI(b, "alice")
	opts := x509request.DefaultVerifyOptions()
	opts.Roots = p.roots
	a := x509request.New(opts, x509request.CommonNameUserConversion)
	chain := p.chain1
	if level == 2 {
		chain = p.chain2
	}
	req := tlsRequest(chain)
	mustAuthenticate(b, a, req)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := a.AuthenticateRequest(req); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkX509OneLevel: client certificate signed directly by the client CA (--client-ca-file).
func BenchmarkX509OneLevel(b *testing.B) { benchX509(b, 1) }

// BenchmarkX509TwoLevel: client certificate signed by an intermediate the client sends.
func BenchmarkX509TwoLevel(b *testing.B) { benchX509(b, 2) }

type staticStrings []string

func (s staticStrings) Value() []string { return s }

// BenchmarkRequestHeader: the front-proxy authenticator: verify the proxy's client
// certificate (1 level, CN in --requestheader-allowed-names), then read X-Remote-User, two
// X-Remote-Group values and one X-Remote-Extra- header.
func BenchmarkRequestHeader(b *testing.B) {
	p := newPKI(b, "front-proxy-client")
	opts := x509request.DefaultVerifyOptions()
	opts.Roots = p.roots
	a := headerrequest.NewDynamicVerifyOptionsSecure(
		func() (x509.VerifyOptions, bool) { return opts, true },
		staticStrings{"front-proxy-client"},
		staticStrings{"X-Remote-User"}, staticStrings{"X-Remote-Uid"},
		staticStrings{"X-Remote-Group"}, staticStrings{"X-Remote-Extra-"})
	req := tlsRequest(p.chain1)
	set := func() {
		req.Header = http.Header{}
		req.Header["X-Remote-User"] = []string{"alice"}
		req.Header["X-Remote-Group"] = []string{"dev", "ops"}
		req.Header["X-Remote-Extra-Scopes"] = []string{"openid"}
	}
	set()
	mustAuthenticate(b, a, req)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// headerrequest deletes the identity headers on success; put them back (untimed cost
		// would need StopTimer, which costs more than the headers).
		set()
		if _, ok, _ := a.AuthenticateRequest(req); !ok {
			b.Fatal("miss")
		}
	}
}

// staticKeySet verifies with fixed keys, as k8s' own oidc_test.go does (kube-apiserver's
// remote key set does the same jose verification once the JWKS is cached).
type staticKeySet struct{ keys []jose.JSONWebKey }

func (s *staticKeySet) VerifySignature(ctx context.Context, token string) ([]byte, error) {
	jws, err := jose.ParseSigned(token)
	if err != nil {
		return nil, err
	}
	kid := jws.Signatures[0].Header.KeyID
	for _, k := range s.keys {
		if k.KeyID == kid {
			return jws.Verify(k)
		}
	}
	return nil, fmt.Errorf("no key for kid %q", kid)
}

func benchOIDC(b *testing.B, alg jose.SignatureAlgorithm) {
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		b.Fatal(err)
	}
	const issuer = "https://issuer.kube-authn.test"
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: priv, KeyID: "k1"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	claims := map[string]any{
		"iss": issuer, "aud": "kube-authn", "sub": "alice", "email": "alice@example.com",
		"email_verified": true, "groups": []string{"dev", "ops"},
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}
	token, err := jwt.Signed(signer).Claims(claims).CompactSerialize()
	if err != nil {
		b.Fatal(err)
	}
	prefix := "oidc:"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := oidc.New(ctx, oidc.Options{
		JWTAuthenticator: apiserver.JWTAuthenticator{
			Issuer: apiserver.Issuer{URL: issuer, Audiences: []string{"kube-authn"}},
			ClaimMappings: apiserver.ClaimMappings{
				Username: apiserver.PrefixedClaimOrExpression{Claim: "sub", Prefix: &prefix},
				Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: &prefix},
			},
		},
		KeySet:               &staticKeySet{keys: []jose.JSONWebKey{{Key: priv.Public(), KeyID: "k1", Algorithm: string(alg), Use: "sig"}}},
		SupportedSigningAlgs: []string{string(alg)},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, ok, err := a.AuthenticateToken(ctx, token); !ok || err != nil {
		b.Fatalf("oidc warm-up: ok=%v err=%v", ok, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := a.AuthenticateToken(ctx, token); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkOIDCRS256: verify an RS256 (2048-bit) ID token and map sub and groups.
func BenchmarkOIDCRS256(b *testing.B) { benchOIDC(b, jose.RS256) }

// BenchmarkOIDCES256: the same with ES256 (P-256).
func BenchmarkOIDCES256(b *testing.B) { benchOIDC(b, jose.ES256) }

// BenchmarkAuthenticationFilter: the whole WithAuthentication filter (with its metrics) around
// a no-op handler, over kube-apiserver's chain (bearer + WebSocket over an in-memory table of
// 1000 tokens, authenticated group adder, anonymous behind a fail-on-error union), with a valid
// bearer token (benches/middleware.rs "valid_token").
func BenchmarkAuthenticationFilter(b *testing.B) {
	table := map[string]*authenticator.Response{}
	for j := 0; j < 1000; j++ {
		table[fmt.Sprintf("%032d", j)] = &authenticator.Response{User: &user.DefaultInfo{
			Name: fmt.Sprintf("user-%d", j), UID: fmt.Sprintf("%d", j), Groups: []string{"team"}}}
	}
	tokens := authenticator.TokenFunc(func(ctx context.Context, t string) (*authenticator.Response, bool, error) {
		r, ok := table[t]
		return r, ok, nil
	})
	chain := group.NewAuthenticatedGroupAdder(union.New(bearertoken.New(tokens), websocket.NewProtocolAuthenticator(tokens)))
	chain = union.NewFailOnError(chain, anonymous.NewAuthenticator(nil))
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	failed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	h := filters.WithAuthentication(ok, chain, failed, nil, nil)
	w := httptest.NewRecorder()
	req := bearerRequest(fmt.Sprintf("%032d", 421))
	value := req.Header["Authorization"]
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("status %d", w.Code)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The filter removes Authorization after success; restore it (a map assignment).
		req.Header["Authorization"] = value
		h.ServeHTTP(w, req)
	}
}
