// Package vector reads the shared conformance vectors (conformance/vectors/*.json) and
// compares observed outcomes with their expectations. It has no Kubernetes dependency, so
// oracles built against different k8s.io/apiserver releases can all use it.
package vector

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Bytes is a JSON string, or {"hex": "..."} for bytes that are not UTF-8.
type Bytes string

func (b *Bytes) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '{' {
		var h struct {
			Hex string `json:"hex"`
		}
		if err := json.Unmarshal(data, &h); err != nil {
			return err
		}
		raw, err := hex.DecodeString(h.Hex)
		if err != nil {
			return err
		}
		*b = Bytes(raw)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*b = Bytes(s)
	return nil
}

// MarshalJSON writes valid UTF-8 as a string and anything else as {"hex": ...}.
func (b Bytes) MarshalJSON() ([]byte, error) {
	if isUTF8(string(b)) {
		return json.Marshal(string(b))
	}
	return json.Marshal(map[string]string{"hex": hex.EncodeToString([]byte(b))})
}

func isUTF8(s string) bool { return utf8.ValidString(s) }

// User is an expected or observed identity.
type User struct {
	Name   string              `json:"name"`
	UID    string              `json:"uid"`
	Groups []string            `json:"groups"`
	Extra  map[string][]string `json:"extra"`
}

// Outcome is what happened: authenticated, not_mine, error, config_error, disabled,
// bad_request (and, only in observations, unsupported).
type Outcome struct {
	Result        string               `json:"result"`
	User          *User                `json:"user,omitempty"`
	Audiences     []string             `json:"audiences,omitempty"`
	Error         *string              `json:"error,omitempty"`
	ErrorContains *string              `json:"error_contains,omitempty"`
	Calls         map[string][][]Bytes `json:"calls,omitempty"`
	Note          string               `json:"note,omitempty"`
	// Filter outcomes: "handler" (user may be null when authentication is disabled; headers
	// the handler saw, lower-case names) or "rejected" (status, content type, body).
	Headers     map[string][]string `json:"headers,omitempty"`
	Status      int                 `json:"status,omitempty"`
	ContentType string              `json:"content_type,omitempty"`
	Body        *Bytes              `json:"body,omitempty"`
	// "key" (cache_key setups): the key in hex. "sequence" (steps): one outcome per step.
	Key      string     `json:"key,omitempty"`
	Outcomes []*Outcome `json:"outcomes,omitempty"`
}

// Object is an API object a service-account validator looks up: namespace (empty for nodes),
// name, uid and, when it is being deleted, its deletion timestamp (unix seconds). A secret may
// carry its data.token and the kubernetes.io/legacy-token-invalid-since label; a service
// account the names of its secrets.
type Object struct {
	Namespace         string   `json:"namespace"`
	Name              string   `json:"name"`
	UID               string   `json:"uid"`
	DeletionTimestamp *int64   `json:"deletion_timestamp"`
	Token             *string  `json:"token"`
	InvalidSince      *string  `json:"invalid_since"`
	Secrets           []string `json:"secrets"`
}

// Node is one authenticator in a setup tree (see conformance/README.md).
type Node struct {
	Kind        string                     `json:"kind"`
	ID          string                     `json:"id"`
	Outcome     json.RawMessage            `json:"outcome"`
	Tokens      map[string]json.RawMessage `json:"tokens"`
	Handlers    []Node                     `json:"handlers"`
	FailOnError bool                       `json:"fail_on_error"`
	Inner       *Node                      `json:"inner"`
	Token       *Node                      `json:"token"`
	Password    *Node                      `json:"password"`
	Groups      []string                   `json:"groups"`
	Paths       []string                   `json:"paths"`
	Implicit    []string                   `json:"implicit"`
	CSV         string                     `json:"csv"`
	CA          string                     `json:"ca"`
	// request_header: --requestheader-* flags.
	AllowedNames       []string `json:"allowed_names"`
	UsernameHeaders    []string `json:"username_headers"`
	UIDHeaders         []string `json:"uid_headers"`
	GroupHeaders       []string `json:"group_headers"`
	ExtraHeadersPrefix []string `json:"extra_headers_prefix"`
	// token_cache: cache.New(inner, cache_errors, success TTL, failure TTL) on a fake clock.
	CacheErrors bool `json:"cache_errors"`
	// webhook: TokenReview version, --api-audiences, retry attempts, scripted HTTP responses
	// (one per request, the last repeating).
	Version           string            `json:"version"`
	ImplicitAudiences []string          `json:"implicit_audiences"`
	RetrySteps        int               `json:"retry_steps"`
	Responses         []WebhookResponse `json:"responses"`
	// oidc: issuer, audiences, JWKS, claim mappings, required claims, signing algorithms.
	Issuer         string      `json:"issuer"`
	Audiences      []string    `json:"audiences"`
	JWKS           string      `json:"jwks"`
	UsernameClaim  string      `json:"username_claim"`
	UsernamePrefix *string     `json:"username_prefix"`
	GroupsClaim    string      `json:"groups_claim"`
	GroupsPrefix   *string     `json:"groups_prefix"`
	UIDClaim       string      `json:"uid_claim"`
	RequiredClaims [][2]string `json:"required_claims"`
	SigningAlgs    []string    `json:"signing_algs"`
	// service_account: --service-account-key-file (PEM), --service-account-issuer, the
	// authenticator kind ("legacy" or "bound"), the validator's clock (unix seconds) and the
	// objects the bound validator looks up.
	Mode    string   `json:"mode"`
	Keys    string   `json:"keys"`
	Issuers []string `json:"issuers"`
	Now     int64    `json:"now"`
	Lookup  *struct {
		ServiceAccounts []Object `json:"service_accounts"`
		Secrets         []Object `json:"secrets"`
		Pods            []Object `json:"pods"`
		Nodes           []Object `json:"nodes"`
	} `json:"lookup"`
	SuccessTTLMs int64  `json:"success_ttl_ms"`
	FailureTTLMs int64  `json:"failure_ttl_ms"`
	Request      []Node `json:"request"`
	Anonymous    *struct {
		Paths []string `json:"paths"`
	} `json:"anonymous"`
	raw json.RawMessage
}

// ChainTokens returns a chain node's token authenticators (the "tokens" key holds a list
// for chains and a map for scripted handlers).
func (n *Node) ChainTokens() ([]Node, error) {
	var wrapper struct {
		Tokens []Node `json:"tokens"`
	}
	if err := json.Unmarshal(n.raw, &wrapper); err != nil {
		return nil, err
	}
	return wrapper.Tokens, nil
}

func (n *Node) UnmarshalJSON(data []byte) error {
	type plain Node
	var p plain
	// "tokens" is a list in chain nodes and a map in scripted nodes.
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	tokens := probe["tokens"]
	delete(probe, "tokens")
	rest, _ := json.Marshal(probe)
	if err := json.Unmarshal(rest, &p); err != nil {
		return err
	}
	*n = Node(p)
	n.raw = append([]byte(nil), data...)
	if len(tokens) > 0 && tokens[0] == '{' {
		if err := json.Unmarshal(tokens, &n.Tokens); err != nil {
			return err
		}
	}
	return nil
}

// Scripted is what a scripted handler answers.
type Scripted struct {
	NotMine   bool
	User      *User
	Audiences []string
	Err       string
}

// ParseScripted reads a scripted outcome: "not_mine", {"user":…,"audiences":…} or {"error":…}.
func ParseScripted(raw json.RawMessage) (Scripted, error) {
	if len(raw) == 0 {
		return Scripted{NotMine: true}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "not_mine" {
			return Scripted{NotMine: true}, nil
		}
		return Scripted{}, fmt.Errorf("unknown scripted outcome %q", s)
	}
	var o struct {
		User      *User    `json:"user"`
		Audiences []string `json:"audiences"`
		Error     *string  `json:"error"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return Scripted{}, err
	}
	switch {
	case o.Error != nil:
		return Scripted{Err: *o.Error}, nil
	case o.User != nil:
		return Scripted{User: o.User, Audiences: o.Audiences}, nil
	}
	return Scripted{}, fmt.Errorf("scripted outcome has neither user nor error: %s", raw)
}

// IsSequence reports whether a scripted answer is a list (one answer per call, the last
// repeating).
func IsSequence(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '[' }

// ParseScriptedAt reads answer number `call` (0-based) of a scripted answer or answer list.
func ParseScriptedAt(raw json.RawMessage, call int) (Scripted, error) {
	if !IsSequence(raw) {
		return ParseScripted(raw)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return Scripted{}, err
	}
	if len(list) == 0 {
		return Scripted{}, fmt.Errorf("empty scripted answer list")
	}
	if call >= len(list) {
		call = len(list) - 1
	}
	return ParseScripted(list[call])
}

// Setup says which kind of authenticator the case builds.
type Setup struct {
	Filter   *Filter `json:"filter"`
	Request  *Node   `json:"request"`
	Token    *Node   `json:"token"`
	Password *Node   `json:"password"`
	// CacheKey: the token cache's key function with a fixed HMAC secret.
	CacheKey *struct {
		Secret string `json:"secret"`
	} `json:"cache_key"`
}

// Filter is the authentication filter around a chain.
type Filter struct {
	Chain        *Node    `json:"chain"`
	APIAudiences []string `json:"api_audiences"`
}

// Input is the request (or token, or user and password).
type Input struct {
	Path      string     `json:"path"`
	Headers   [][2]Bytes `json:"headers"`
	Audiences *[]string  `json:"audiences"`
	Token     *Bytes     `json:"token"`
	User      *Bytes     `json:"user"`
	Password  *Bytes     `json:"password"`
	// PeerChain is the client certificate chain (PEM, leaf first) of a request over TLS;
	// absent = not TLS, [] = TLS without a client certificate.
	PeerChain *[]string `json:"peer_chain"`
	// Steps: several token calls on one authenticator; the clock advances before each.
	Steps []Step `json:"steps"`
}

// WebhookResponse is one scripted HTTP answer of a webhook backend.
type WebhookResponse struct {
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
}

// Step is one call of a multi-step token case.
type Step struct {
	AdvanceMs int64     `json:"advance_ms"`
	Token     Bytes     `json:"token"`
	Audiences *[]string `json:"audiences"`
}

// Case is one vector.
type Case struct {
	Suite         string   `json:"-"`
	Name          string   `json:"name"`
	Authenticator string   `json:"authenticator"`
	Setup         Setup    `json:"setup"`
	Input         Input    `json:"input"`
	Expect        *Outcome `json:"expect"`
	K8s           *Outcome `json:"k8s"`
	KubeAuthn     *Outcome `json:"kube_authn"`
	Reason        string   `json:"reason"`
	// Oracle is "reference" when no Go code can run the case (the authenticator lived only in
	// k8s.io/kubernetes, or was removed before Go modules): the Kubernetes expectation comes
	// from the reference notes named in Reference, and no oracle is required to observe it.
	Oracle    string `json:"oracle"`
	Reference string `json:"reference"`
	// KnownBug: kube-authn does not meet this (Kubernetes) expectation yet; the Go side is
	// checked as usual, tests/conformance.rs reports it instead of failing.
	KnownBug string `json:"known_bug"`
}

// ID is "suite/name", the key of observations.
func (c *Case) ID() string { return c.Suite + "/" + c.Name }

// Label is the authenticator the case counts for.
func (c *Case) Label() string {
	if c.Authenticator != "" {
		return c.Authenticator
	}
	return c.Suite
}

// K8sExpectation is what Kubernetes should do.
func (c *Case) K8sExpectation() *Outcome {
	if c.K8s != nil {
		return c.K8s
	}
	return c.Expect
}

type file struct {
	Suite string `json:"suite"`
	Cases []Case `json:"cases"`
}

// Load reads every *.json in dir, in name order.
func Load(dir string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var all []Case
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var f file
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for i := range f.Cases {
			c := &f.Cases[i]
			c.Suite = f.Suite
			if (c.Expect == nil) == (c.K8s == nil) || (c.K8s == nil) != (c.KubeAuthn == nil) {
				return nil, fmt.Errorf("%s: case %q needs either expect, or k8s + kube_authn + reason", p, c.Name)
			}
			if c.Oracle != "" && (c.Oracle != "reference" || c.Reference == "") {
				return nil, fmt.Errorf("%s: case %q: oracle must be \"reference\" with a reference", p, c.Name)
			}
			if c.K8s != nil && c.Reason == "" {
				return nil, fmt.Errorf("%s: case %q has two expectations but no reason", p, c.Name)
			}
		}
		all = append(all, f.Cases...)
	}
	return all, nil
}

// Observations is what an oracle writes: outcome per case id.
type Observations struct {
	Oracle  string              `json:"oracle"`
	Results map[string]*Outcome `json:"results"`
}

func normGroups(g []string) []string {
	if g == nil {
		return []string{}
	}
	return g
}

func normExtra(e map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range e {
		if v == nil {
			v = []string{}
		}
		out[k] = v
	}
	return out
}

// Diff returns "" when observed satisfies want, or a description of the difference.
func Diff(want, got *Outcome) string {
	if got == nil {
		return "no observation"
	}
	if want.Result != got.Result {
		return fmt.Sprintf("result: want %s, got %s%s", want.Result, got.Result, detail(got))
	}
	switch want.Result {
	case "authenticated":
		w, g := *want.User, *got.User
		w.Groups, g.Groups = normGroups(w.Groups), normGroups(g.Groups)
		w.Extra, g.Extra = normExtra(w.Extra), normExtra(g.Extra)
		wj, _ := json.Marshal(w)
		gj, _ := json.Marshal(g)
		if !bytes.Equal(wj, gj) {
			return fmt.Sprintf("user: want %s, got %s", wj, gj)
		}
		wa, _ := json.Marshal(normGroups(want.Audiences))
		ga, _ := json.Marshal(normGroups(got.Audiences))
		if !bytes.Equal(wa, ga) {
			return fmt.Sprintf("audiences: want %s, got %s", wa, ga)
		}
	case "handler":
		if (want.User == nil) != (got.User == nil) {
			return fmt.Sprintf("user: want %v, got %v", want.User, got.User)
		}
		if want.User != nil {
			w, g := *want.User, *got.User
			w.Groups, g.Groups = normGroups(w.Groups), normGroups(g.Groups)
			w.Extra, g.Extra = normExtra(w.Extra), normExtra(g.Extra)
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(g)
			if !bytes.Equal(wj, gj) {
				return fmt.Sprintf("user: want %s, got %s", wj, gj)
			}
		}
		for name, wv := range want.Headers {
			wj, _ := json.Marshal(normGroups(wv))
			gj, _ := json.Marshal(normGroups(got.Headers[name]))
			if !bytes.Equal(wj, gj) {
				return fmt.Sprintf("header %s seen by the handler: want %s, got %s", name, wj, gj)
			}
		}
	case "rejected":
		if want.Status != got.Status || want.ContentType != got.ContentType {
			return fmt.Sprintf("response: want %d %q, got %d %q", want.Status, want.ContentType, got.Status, got.ContentType)
		}
		if want.Body != nil && (got.Body == nil || *want.Body != *got.Body) {
			return fmt.Sprintf("body: want %q, got %q", string(*want.Body), string(derefBytes(got.Body)))
		}
	case "key":
		if want.Key != got.Key {
			return fmt.Sprintf("key: want %s, got %s", want.Key, got.Key)
		}
	case "sequence":
		if len(want.Outcomes) != len(got.Outcomes) {
			return fmt.Sprintf("steps: want %d outcomes, got %d", len(want.Outcomes), len(got.Outcomes))
		}
		for i := range want.Outcomes {
			if d := Diff(want.Outcomes[i], got.Outcomes[i]); d != "" {
				return fmt.Sprintf("step %d: %s", i, d)
			}
		}
	case "error", "config_error":
		if want.Error != nil && (got.Error == nil || *got.Error != *want.Error) {
			return fmt.Sprintf("error: want %q, got %q", *want.Error, deref(got.Error))
		}
		if want.ErrorContains != nil && (got.Error == nil || !strings.Contains(*got.Error, *want.ErrorContains)) {
			return fmt.Sprintf("error: want text containing %q, got %q", *want.ErrorContains, deref(got.Error))
		}
	}
	for id, wantCalls := range want.Calls {
		wj, _ := json.Marshal(wantCalls)
		gotCalls := got.Calls[id]
		if gotCalls == nil {
			gotCalls = [][]Bytes{}
		}
		gj, _ := json.Marshal(gotCalls)
		if !bytes.Equal(wj, gj) {
			return fmt.Sprintf("calls of %s: want %s, got %s", id, wj, gj)
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func detail(o *Outcome) string {
	switch {
	case o.Error != nil:
		return fmt.Sprintf(" (%q)", *o.Error)
	case o.User != nil:
		return fmt.Sprintf(" (user %q)", o.User.Name)
	case o.Note != "":
		return fmt.Sprintf(" (%s)", o.Note)
	}
	return ""
}

func derefBytes(b *Bytes) Bytes {
	if b == nil {
		return ""
	}
	return *b
}
