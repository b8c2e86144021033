// Command legacy is the oracle for the authenticators Kubernetes removed in 1.19: basic auth
// (plugin/pkg/authenticator/request/basicauth) and the password file
// (plugin/pkg/authenticator/password/passwordfile), from k8s.io/apiserver v0.18.19, the last
// release that has them. It answers only cases whose setup contains a basic or password_file
// node (the current oracle answers the rest) and prints observed outcomes as JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/plugin/pkg/authenticator/password/passwordfile"
	"k8s.io/apiserver/plugin/pkg/authenticator/request/basicauth"

	"kube-authn.example/conformance/vector"
)

const name = "k8s.io/apiserver v0.18.19 (basic auth, password file)"

type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }

var errUnsupported = errors.New("unsupported")

type builder struct {
	calls map[string][][]vector.Bytes
	dir   string
	files int
}

func (b *builder) record(id string, args ...string) {
	row := make([]vector.Bytes, len(args))
	for i, a := range args {
		row[i] = vector.Bytes(a)
	}
	b.calls[id] = append(b.calls[id], row)
}

func respond(s vector.Scripted) (*authenticator.Response, bool, error) {
	switch {
	case s.Err != "":
		return nil, false, errors.New(s.Err)
	case s.User != nil:
		u := &user.DefaultInfo{Name: s.User.Name, UID: s.User.UID, Groups: s.User.Groups, Extra: s.User.Extra}
		return &authenticator.Response{User: u, Audiences: s.Audiences}, true, nil
	}
	return nil, false, nil
}

func (b *builder) password(n *vector.Node) (authenticator.Password, error) {
	switch n.Kind {
	case "scripted":
		b.calls[n.ID] = [][]vector.Bytes{}
		s, err := vector.ParseScripted(n.Outcome)
		if err != nil {
			return nil, err
		}
		id := n.ID
		return authenticator.PasswordFunc(func(ctx context.Context, u, p string) (*authenticator.Response, bool, error) {
			b.record(id, u, p)
			return respond(s)
		}), nil
	case "password_file":
		b.files++
		path := filepath.Join(b.dir, fmt.Sprintf("passwords-%d.csv", b.files))
		if err := os.WriteFile(path, []byte(n.CSV), 0o600); err != nil {
			return nil, err
		}
		pf, err := passwordfile.NewCSV(path)
		if err != nil {
			return nil, configError{err}
		}
		return pf, nil
	}
	return nil, fmt.Errorf("%w: password node %q", errUnsupported, n.Kind)
}

func (b *builder) request(n *vector.Node) (authenticator.Request, error) {
	if n.Kind == "basic" {
		p, err := b.password(n.Password)
		if err != nil {
			return nil, err
		}
		return basicauth.New(p), nil
	}
	return nil, fmt.Errorf("%w: request node %q", errUnsupported, n.Kind)
}

func outcome(resp *authenticator.Response, ok bool, err error) *vector.Outcome {
	switch {
	case err != nil:
		msg := err.Error()
		return &vector.Outcome{Result: "error", Error: &msg}
	case ok:
		u := resp.User
		return &vector.Outcome{Result: "authenticated", Audiences: append([]string{}, resp.Audiences...),
			User: &vector.User{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}}
	}
	return &vector.Outcome{Result: "not_mine"}
}

func fail(err error) *vector.Outcome {
	var ce configError
	msg := err.Error()
	switch {
	case errors.As(err, &ce):
		return &vector.Outcome{Result: "config_error", Error: &msg}
	case errors.Is(err, errUnsupported):
		return &vector.Outcome{Result: "unsupported", Note: msg}
	}
	return &vector.Outcome{Result: "harness_error", Error: &msg}
}

func run(b *builder, c *vector.Case) *vector.Outcome {
	ctx := context.Background()
	if c.Input.Audiences != nil {
		ctx = authenticator.WithAudiences(ctx, authenticator.Audiences(*c.Input.Audiences))
	}
	switch {
	case c.Setup.Password != nil:
		p, err := b.password(c.Setup.Password)
		if err != nil {
			return fail(err)
		}
		var u, pw string
		if c.Input.User != nil {
			u = string(*c.Input.User)
		}
		if c.Input.Password != nil {
			pw = string(*c.Input.Password)
		}
		return outcome(p.AuthenticatePassword(ctx, u, pw))
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
			return &vector.Outcome{Result: "bad_request", Note: err.Error()}
		}
		for _, h := range c.Input.Headers {
			req.Header.Add(string(h[0]), string(h[1]))
		}
		return outcome(a.AuthenticateRequest(req))
	}
	return &vector.Outcome{Result: "unsupported"}
}

func main() {
	dir := flag.String("vectors", "../../vectors", "directory of vector files")
	flag.Parse()
	cases, err := vector.Load(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "conformance-legacy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.RemoveAll(tmp)
	obs := vector.Observations{Oracle: name, Results: map[string]*vector.Outcome{}}
	for i := range cases {
		b := &builder{calls: map[string][][]vector.Bytes{}, dir: tmp}
		out := run(b, &cases[i])
		if len(b.calls) > 0 && (out.Result == "authenticated" || out.Result == "not_mine" || out.Result == "error") {
			out.Calls = b.calls
		}
		obs.Results[cases[i].ID()] = out
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(obs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
