// Package oracle runs conformance vectors through k8s.io/apiserver's own authenticators.
package oracle

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"

	apiserver "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"

	"k8s.io/apimachinery/pkg/util/wait"
	oidcauth "k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"kube-authn.example/conformance/internal/tokencache"
	"kube-authn.example/conformance/vector"
)

// Name identifies this oracle in observations.
const Name = "k8s.io/apiserver v0.37.2 (service accounts: k8s.io/kubernetes v1.37.2)"

var errUnsupported = errors.New("unsupported")

type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }

type builder struct {
	clock    *clocktesting.FakeClock
	cleanups []func()
	calls    map[string][][]vector.Bytes
	tmpDir   string
	files    int
}

func (b *builder) record(id string, args ...string) {
	row := make([]vector.Bytes, len(args))
	for i, a := range args {
		row[i] = vector.Bytes(a)
	}
	b.calls[id] = append(b.calls[id], row)
}

func (b *builder) declare(id string) {
	if _, ok := b.calls[id]; !ok {
		b.calls[id] = [][]vector.Bytes{}
	}
}

// Respond turns a scripted answer into the Go triple. A fresh user every time, as a real
// authenticator would build.
func Respond(s vector.Scripted) (*authenticator.Response, bool, error) {
	switch {
	case s.Err != "":
		return nil, false, errors.New(s.Err)
	case s.User != nil:
		u := &user.DefaultInfo{Name: s.User.Name, UID: s.User.UID}
		if len(s.User.Groups) > 0 {
			u.Groups = append([]string(nil), s.User.Groups...)
		}
		if len(s.User.Extra) > 0 {
			u.Extra = map[string][]string{}
			for k, v := range s.User.Extra {
				u.Extra[k] = append([]string{}, v...)
			}
		}
		var auds authenticator.Audiences
		if len(s.Audiences) > 0 {
			auds = append(authenticator.Audiences(nil), s.Audiences...)
		}
		return &authenticator.Response{User: u, Audiences: auds}, true, nil
	}
	return nil, false, nil
}

// scriptedFor is the answer to `token` on its `call`-th use (0-based).
func scriptedFor(n *vector.Node, token string, call int) (vector.Scripted, error) {
	if raw, ok := n.Tokens[token]; ok {
		return vector.ParseScriptedAt(raw, call)
	}
	return vector.ParseScripted(n.Outcome)
}

func (b *builder) writeFile(content string) (string, error) {
	b.files++
	path := filepath.Join(b.tmpDir, fmt.Sprintf("file-%d.csv", b.files))
	return path, os.WriteFile(path, []byte(content), 0o600)
}

func (b *builder) token(n *vector.Node) (authenticator.Token, error) {
	switch n.Kind {
	case "scripted":
		b.declare(n.ID)
		// Validate now so a bad vector fails loudly.
		if _, err := vector.ParseScripted(n.Outcome); err != nil {
			return nil, err
		}
		node, id := *n, n.ID
		return authenticator.TokenFunc(func(ctx context.Context, token string) (*authenticator.Response, bool, error) {
			call := 0
			for _, row := range b.calls[id] {
				if len(row) == 1 && string(row[0]) == token {
					call++
				}
			}
			b.record(id, token)
			s, err := scriptedFor(&node, token, call)
			if err != nil {
				return nil, false, err
			}
			return Respond(s)
		}), nil
	case "union":
		var hs []authenticator.Token
		for i := range n.Handlers {
			h, err := b.token(&n.Handlers[i])
			if err != nil {
				return nil, err
			}
			hs = append(hs, h)
		}
		if n.FailOnError {
			return tokenunion.NewFailOnError(hs...), nil
		}
		return tokenunion.New(hs...), nil
	case "authenticated_group_adder":
		// k8s has no token form of this adder; kube-apiserver applies it to the request
		// union. Wrap the token authenticator as a request authenticator's equivalent.
		inner, err := b.token(n.Inner)
		if err != nil {
			return nil, err
		}
		return authenticatedTokenGroupAdder{inner}, nil
	case "group_adder":
		inner, err := b.token(n.Inner)
		if err != nil {
			return nil, err
		}
		return group.NewTokenGroupAdder(inner, n.Groups), nil
	case "audience_agnostic":
		inner, err := b.token(n.Inner)
		if err != nil {
			return nil, err
		}
		return authenticator.WrapAudienceAgnosticToken(authenticator.Audiences(n.Implicit), inner), nil
	case "token_cache":
		inner, err := b.token(n.Inner)
		if err != nil {
			return nil, err
		}
		ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
		return tokencache.NewWithClock(inner, n.CacheErrors, ms(n.SuccessTTLMs), ms(n.FailureTTLMs), b.clock), nil
	case "webhook":
		return b.webhook(n)
	case "oidc":
		return b.oidc(n)
	case "service_account":
		return b.serviceAccount(n)
	case "token_file":
		path, err := b.writeFile(n.CSV)
		if err != nil {
			return nil, err
		}
		tf, err := tokenfile.NewCSV(path)
		if err != nil {
			return nil, configError{err}
		}
		return tf, nil
	}
	return nil, fmt.Errorf("%w: token node %q", errUnsupported, n.Kind)
}

// webhook runs k8s' webhook token authenticator against a local TokenReview server that
// answers the node's scripted responses and records [spec.token, spec.audiences joined by ","]
// of every request as calls of "webhook".
func (b *builder) webhook(n *vector.Node) (authenticator.Token, error) {
	if len(n.Responses) == 0 {
		return nil, errors.New("webhook without responses")
	}
	b.declare("webhook")
	var mu sync.Mutex
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			Spec struct {
				Token     string   `json:"token"`
				Audiences []string `json:"audiences"`
			} `json:"spec"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &review)
		mu.Lock()
		b.record("webhook", review.Spec.Token, strings.Join(review.Spec.Audiences, ","))
		resp := n.Responses[min(served, len(n.Responses)-1)]
		served++
		mu.Unlock()
		if resp.ContentType != "" {
			w.Header().Set("Content-Type", resp.ContentType)
		}
		w.WriteHeader(resp.Status)
		_, _ = w.Write([]byte(resp.Body))
	}))
	b.cleanups = append(b.cleanups, srv.Close)
	steps := n.RetrySteps
	if steps == 0 {
		steps = 1
	}
	backoff := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: steps}
	version := n.Version
	if version == "" {
		version = "v1beta1"
	}
	a, err := webhook.New(&rest.Config{Host: srv.URL, Timeout: 10 * time.Second}, version,
		authenticator.Audiences(n.ImplicitAudiences), backoff)
	if err != nil {
		return nil, configError{err}
	}
	return a, nil
}

// oidc runs k8s' OIDC authenticator (oidc.New with a claim-based JWTAuthenticator, as
// kube-apiserver builds from the --oidc-* flags or an AuthenticationConfiguration) whose keys
// come from go-oidc's RemoteKeySet reading the vector's JWKS from a local server.
func (b *builder) oidc(n *vector.Node) (authenticator.Token, error) {
	jwks := n.JWKS
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, jwks)
	}))
	b.cleanups = append(b.cleanups, srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	b.cleanups = append(b.cleanups, cancel)
	jwt := apiserver.JWTAuthenticator{
		Issuer: apiserver.Issuer{URL: n.Issuer, Audiences: n.Audiences},
		ClaimMappings: apiserver.ClaimMappings{
			Username: apiserver.PrefixedClaimOrExpression{Claim: n.UsernameClaim, Prefix: n.UsernamePrefix},
		},
	}
	if len(n.Audiences) > 1 {
		jwt.Issuer.AudienceMatchPolicy = apiserver.AudienceMatchPolicyMatchAny
	}
	if n.GroupsClaim != "" {
		jwt.ClaimMappings.Groups = apiserver.PrefixedClaimOrExpression{Claim: n.GroupsClaim, Prefix: n.GroupsPrefix}
	}
	if n.UIDClaim != "" {
		jwt.ClaimMappings.UID = apiserver.ClaimOrExpression{Claim: n.UIDClaim}
	}
	for _, rc := range n.RequiredClaims {
		jwt.ClaimValidationRules = append(jwt.ClaimValidationRules, apiserver.ClaimValidationRule{Claim: rc[0], RequiredValue: rc[1]})
	}
	a, err := oidcauth.New(ctx, oidcauth.Options{
		JWTAuthenticator:     jwt,
		KeySet:               gooidc.NewRemoteKeySet(ctx, srv.URL),
		SupportedSigningAlgs: n.SigningAlgs,
	})
	if err != nil {
		return nil, configError{err}
	}
	return a, nil
}

// authenticatedTokenGroupAdder applies k8s' AuthenticatedGroupAdder to a token
// authenticator through a request carrying the token's context.
type authenticatedTokenGroupAdder struct{ inner authenticator.Token }

func (a authenticatedTokenGroupAdder) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://kube-authn.test/", nil)
	adder := group.NewAuthenticatedGroupAdder(authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		return a.inner.AuthenticateToken(r.Context(), token)
	}))
	return adder.AuthenticateRequest(req)
}

// request builds a request authenticator; nil with no error means "authentication disabled".
func (b *builder) request(n *vector.Node) (authenticator.Request, error) {
	switch n.Kind {
	case "scripted":
		b.declare(n.ID)
		s, err := vector.ParseScripted(n.Outcome)
		if err != nil {
			return nil, err
		}
		id := n.ID
		return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
			b.record(id, req.URL.Path)
			return Respond(s)
		}), nil
	case "union":
		var hs []authenticator.Request
		for i := range n.Handlers {
			h, err := b.request(&n.Handlers[i])
			if err != nil {
				return nil, err
			}
			hs = append(hs, h)
		}
		if n.FailOnError {
			return union.NewFailOnError(hs...), nil
		}
		return union.New(hs...), nil
	case "authenticated_group_adder":
		inner, err := b.request(n.Inner)
		if err != nil {
			return nil, err
		}
		return group.NewAuthenticatedGroupAdder(inner), nil
	case "group_adder":
		inner, err := b.request(n.Inner)
		if err != nil {
			return nil, err
		}
		return group.NewGroupAdder(inner, n.Groups), nil
	case "audience_agnostic":
		inner, err := b.request(n.Inner)
		if err != nil {
			return nil, err
		}
		return authenticator.WrapAudienceAgnosticRequest(authenticator.Audiences(n.Implicit), inner), nil
	case "anonymous":
		return anonymous.NewAuthenticator(conditions(n.Paths)), nil
	case "bearer":
		t, err := b.token(n.Token)
		if err != nil {
			return nil, err
		}
		return bearertoken.New(t), nil
	case "websocket":
		t, err := b.token(n.Token)
		if err != nil {
			return nil, err
		}
		return websocket.NewProtocolAuthenticator(t), nil
	case "chain":
		return b.chain(n)
	case "x509":
		// kube-apiserver --client-ca-file: DefaultVerifyOptions (clientAuth) with the bundle
		// as roots, CommonNameUserConversion.
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM([]byte(n.CA)) {
			return nil, configError{errors.New("no certificates in the CA bundle")}
		}
		opts := x509request.DefaultVerifyOptions()
		opts.Roots = roots
		return x509request.New(opts, x509request.CommonNameUserConversion), nil
	case "request_header":
		// kube-apiserver --requestheader-*: the proxy certificate verified against the
		// request-header CA (clientAuth) with an allowed CN, then the identity headers.
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM([]byte(n.CA)) {
			return nil, configError{errors.New("no certificates in the request-header CA bundle")}
		}
		opts := x509request.DefaultVerifyOptions()
		opts.Roots = roots
		return headerrequest.NewDynamicVerifyOptionsSecure(x509request.StaticVerifierFn(opts),
			headerrequest.StaticStringSlice(n.AllowedNames), headerrequest.StaticStringSlice(n.UsernameHeaders),
			headerrequest.StaticStringSlice(n.UIDHeaders), headerrequest.StaticStringSlice(n.GroupHeaders),
			headerrequest.StaticStringSlice(n.ExtraHeadersPrefix)), nil
	}
	return nil, fmt.Errorf("%w: request node %q", errUnsupported, n.Kind)
}

// peerState is the TLS state of a connection whose client presented `chain` (PEM, leaf first).
func peerState(chain []string) (*tls.ConnectionState, error) {
	state := &tls.ConnectionState{HandshakeComplete: true}
	for i, p := range chain {
		block, _ := pem.Decode([]byte(p))
		if block == nil {
			return nil, fmt.Errorf("peer_chain[%d]: not PEM", i)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("peer_chain[%d]: %w", i, err)
		}
		state.PeerCertificates = append(state.PeerCertificates, cert)
	}
	return state, nil
}

func conditions(paths []string) []apiserver.AnonymousAuthCondition {
	var conds []apiserver.AnonymousAuthCondition
	for _, p := range paths {
		conds = append(conds, apiserver.AnonymousAuthCondition{Path: p})
	}
	return conds
}

// chain follows kubernetes pkg/kubeapiserver/authenticator/config.go Config.New (without
// the token success cache, which the vectors do not exercise) with the chain's own token
// authenticators only: the library's ChainBuilder, as k8s.io/apiserver assembles a chain.
// kube-apiserver also appends its JWT authenticator's token function whenever
// AuthenticationConfig is set, which ToAuthenticationConfig always does, so there the bearer
// and WebSocket authenticators are always present; `kube-authn serve` adds the same (an empty
// token union), which the Rust tests check.
func (b *builder) chain(n *vector.Node) (authenticator.Request, error) {
	var authenticators []authenticator.Request
	for i := range n.Request {
		r, err := b.request(&n.Request[i])
		if err != nil {
			return nil, err
		}
		authenticators = append(authenticators, r)
	}
	tokenNodes, err := n.ChainTokens()
	if err != nil {
		return nil, err
	}
	var tokens []authenticator.Token
	for i := range tokenNodes {
		t, err := b.token(&tokenNodes[i])
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, t)
	}
	if len(tokens) > 0 {
		tokenAuth := tokenunion.New(tokens...)
		authenticators = append(authenticators, bearertoken.New(tokenAuth), websocket.NewProtocolAuthenticator(tokenAuth))
	}
	if len(authenticators) == 0 {
		if n.Anonymous != nil {
			return anonymous.NewAuthenticator(conditions(n.Anonymous.Paths)), nil
		}
		return nil, nil
	}
	a := union.New(authenticators...)
	a = group.NewAuthenticatedGroupAdder(a)
	if n.Anonymous != nil {
		a = union.NewFailOnError(a, anonymous.NewAuthenticator(conditions(n.Anonymous.Paths)))
	}
	return a, nil
}

func outcome(resp *authenticator.Response, ok bool, err error) *vector.Outcome {
	switch {
	case err != nil:
		msg := err.Error()
		return &vector.Outcome{Result: "error", Error: &msg}
	case ok:
		u := resp.User
		out := &vector.Outcome{Result: "authenticated", User: &vector.User{
			Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra(),
		}}
		out.Audiences = append([]string{}, resp.Audiences...)
		return out
	}
	return &vector.Outcome{Result: "not_mine"}
}

// Run runs one case and returns the observed outcome ("unsupported" when this oracle cannot
// build the setup).
func Run(c *vector.Case, tmpDir string) *vector.Outcome {
	b := &builder{calls: map[string][][]vector.Bytes{}, tmpDir: tmpDir,
		clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	out := run(b, c)
	for _, f := range b.cleanups {
		f()
	}
	if len(b.calls) > 0 && (out.Result == "authenticated" || out.Result == "not_mine" || out.Result == "error" || out.Result == "sequence") {
		out.Calls = b.calls
	}
	return out
}

func fail(err error) *vector.Outcome {
	var ce configError
	if errors.As(err, &ce) {
		msg := ce.Error()
		return &vector.Outcome{Result: "config_error", Error: &msg}
	}
	if errors.Is(err, errUnsupported) {
		return &vector.Outcome{Result: "unsupported", Note: err.Error()}
	}
	msg := err.Error()
	return &vector.Outcome{Result: "harness_error", Error: &msg}
}

func run(b *builder, c *vector.Case) *vector.Outcome {
	ctx := context.Background()
	if c.Input.Audiences != nil {
		ctx = authenticator.WithAudiences(ctx, authenticator.Audiences(*c.Input.Audiences))
	}
	switch {
	case c.Setup.Filter != nil:
		return b.filter(ctx, c)
	case c.Setup.Request != nil:
		a, err := b.request(c.Setup.Request)
		if err != nil {
			return fail(err)
		}
		path := c.Input.Path
		if path == "" {
			path = "/"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://kube-authn.test"+path, nil)
		if err != nil {
			// net/http's server answers 400 before any handler for such a request target.
			return &vector.Outcome{Result: "bad_request", Note: err.Error()}
		}
		for _, h := range c.Input.Headers {
			req.Header.Add(string(h[0]), string(h[1]))
		}
		if c.Input.PeerChain != nil {
			state, err := peerState(*c.Input.PeerChain)
			if err != nil {
				msg := err.Error()
				return &vector.Outcome{Result: "harness_error", Error: &msg}
			}
			req.TLS = state
		}
		if a == nil {
			return &vector.Outcome{Result: "disabled"}
		}
		return outcome(a.AuthenticateRequest(req))
	case c.Setup.CacheKey != nil:
		secret := []byte(c.Setup.CacheKey.Secret)
		pool := &sync.Pool{New: func() interface{} { return hmac.New(sha256.New, secret) }}
		var auds []string
		if c.Input.Audiences != nil {
			auds = *c.Input.Audiences
		}
		var token string
		if c.Input.Token != nil {
			token = string(*c.Input.Token)
		}
		return &vector.Outcome{Result: "key", Key: hex.EncodeToString([]byte(tokencache.KeyFunc(pool, auds, token)))}
	case c.Setup.Token != nil && c.Input.Steps != nil:
		t, err := b.token(c.Setup.Token)
		if err != nil {
			return fail(err)
		}
		seq := &vector.Outcome{Result: "sequence"}
		for _, st := range c.Input.Steps {
			b.clock.Step(time.Duration(st.AdvanceMs) * time.Millisecond)
			sctx := context.Background()
			if st.Audiences != nil {
				sctx = authenticator.WithAudiences(sctx, authenticator.Audiences(*st.Audiences))
			}
			seq.Outcomes = append(seq.Outcomes, outcome(t.AuthenticateToken(sctx, string(st.Token))))
		}
		return seq
	case c.Setup.Token != nil:
		t, err := b.token(c.Setup.Token)
		if err != nil {
			return fail(err)
		}
		var token string
		if c.Input.Token != nil {
			token = string(*c.Input.Token)
		}
		return outcome(t.AuthenticateToken(ctx, token))
	case c.Setup.Password != nil:
		return &vector.Outcome{Result: "unsupported", Note: "password authenticators were removed in k8s.io/apiserver v0.19"}
	}
	msg := "case has no setup"
	return &vector.Outcome{Result: "harness_error", Error: &msg}
}

// codecs serialise the 401 Status the way kube-apiserver does (Status is registered as an
// unversioned type; no need for client-go's scheme of every API group).
var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// filter runs the request through filters.WithAuthentication (with Unauthorized as the
// failure handler and WithRequestInfo outside it, as in DefaultBuildHandlerChain).
func (b *builder) filter(ctx context.Context, c *vector.Case) *vector.Outcome {
	auth, err := b.request(c.Setup.Filter.Chain)
	if err != nil {
		return fail(err)
	}
	var seen *vector.Outcome
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := &vector.Outcome{Result: "handler", Headers: map[string][]string{}}
		if u, ok := request.UserFrom(r.Context()); ok {
			out.User = &vector.User{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}
		}
		for k, v := range r.Header {
			out.Headers[strings.ToLower(k)] = v
		}
		seen = out
		w.WriteHeader(http.StatusOK)
	})
	var h http.Handler = inner
	if auth != nil {
		h = filters.WithAuthentication(inner, auth, filters.Unauthorized(codecs),
			authenticator.Audiences(c.Setup.Filter.APIAudiences), nil)
	}
	h = filters.WithRequestInfo(h, &request.RequestInfoFactory{
		APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api"),
	})
	path := c.Input.Path
	if path == "" {
		path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://kube-authn.test"+path, nil)
	if err != nil {
		return &vector.Outcome{Result: "bad_request", Note: err.Error()}
	}
	for _, hv := range c.Input.Headers {
		req.Header.Add(string(hv[0]), string(hv[1]))
	}
	if c.Input.PeerChain != nil {
		state, err := peerState(*c.Input.PeerChain)
		if err != nil {
			msg := err.Error()
			return &vector.Outcome{Result: "harness_error", Error: &msg}
		}
		req.TLS = state
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if seen != nil {
		return seen
	}
	body := vector.Bytes(rec.Body.String())
	return &vector.Outcome{Result: "rejected", Status: rec.Code, ContentType: rec.Header().Get("Content-Type"), Body: &body}
}

// SortedIDs is a helper for deterministic output.
func SortedIDs(m map[string]*vector.Outcome) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
