// Package linewise is the line protocol of the Go programs tests run beside kube-authn
// (cmd/webhookclient, cmd/oidcclient): one JSON request per line on stdin, one JSON result
// per line on stdout, each result the authenticator's answer for one token.
package linewise

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// User is an authenticated user as the tests compare it.
type User struct {
	Name   string              `json:"username"`
	UID    string              `json:"uid"`
	Groups []string            `json:"groups"`
	Extra  map[string][]string `json:"extra"`
}

// Result is one answer: the request's name, and the user, audiences or error.
type Result struct {
	Name          string   `json:"name"`
	Authenticated bool     `json:"authenticated"`
	User          *User    `json:"user"`
	Audiences     []string `json:"audiences,omitempty"`
	Error         string   `json:"error"`
}

// NewResult turns an authenticator's answer into a Result. No groups is [] (a nil and an
// empty list are the same user on the wire).
func NewResult(name string, resp *authenticator.Response, ok bool, err error) Result {
	res := Result{Name: name, Authenticated: ok}
	if err != nil {
		res.Error = err.Error()
	}
	if ok {
		u := resp.User
		groups := append([]string{}, u.GetGroups()...)
		res.User = &User{Name: u.GetName(), UID: u.GetUID(), Groups: groups, Extra: u.GetExtra()}
		res.Audiences = resp.Audiences
	}
	return res
}

// Serve decodes each stdin line into a new *R and writes handle's result as one line; it exits
// the program (status 2, the error on stderr, prefixed with prog) on a line that does not
// decode or an I/O error.
func Serve[R any](prog string, handle func(*R) Result) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		r := new(R)
		if err := json.Unmarshal(in.Bytes(), r); err != nil {
			Fail(prog, err)
		}
		if err := out.Encode(handle(r)); err != nil {
			Fail(prog, err)
		}
	}
	if err := in.Err(); err != nil {
		Fail(prog, err)
	}
}

// Fail prints err, prefixed with prog, and exits with status 2.
func Fail(prog string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
	os.Exit(2)
}
