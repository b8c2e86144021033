// Command keyfiles records what kube-apiserver makes of each `--service-account-key-file`
// case in tests/vectors/sa_key_files.json (written by tests/tools/sa_key_files.py): client-go's
// keyutil.ParsePublicKeysPEM (what PublicKeysFromFile runs on the file), then
// serviceaccount.StaticPublicKeysGetter, whose key ids are the ones a token's `kid` is matched
// against. It adds to each case
//
//	"go": {"keys": [{"type": "RSA-2048" | "P-256" | …, "kid": "…"}, …]}   or   {"error": "…"}
//
// and rewrites the file. tests/service_account.rs
// (key_file_blocks_are_read_as_client_go_reads_them) compares kube-authn with it.
//
//	cd conformance/go && go run ./cmd/keyfiles ../../tests/vectors/sa_key_files.json
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"os"
	"runtime"

	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

type key struct {
	Type string `json:"type"`
	Kid  string `json:"kid"`
}

type outcome struct {
	Keys  []key  `json:"keys,omitempty"`
	Error string `json:"error,omitempty"`
}

type testCase struct {
	Name string   `json:"name"`
	PEM  string   `json:"pem"`
	Go   *outcome `json:"go,omitempty"`
}

type file struct {
	Comment string     `json:"comment"`
	Cases   []testCase `json:"cases"`
}

func keyType(k any) string {
	switch k := k.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA-%d", k.N.BitLen())
	case *ecdsa.PublicKey:
		return k.Curve.Params().Name
	default:
		return fmt.Sprintf("%T", k)
	}
}

func run(pem string) *outcome {
	keys, err := keyutil.ParsePublicKeysPEM([]byte(pem))
	if err != nil {
		return &outcome{Error: err.Error()}
	}
	getter, err := serviceaccount.StaticPublicKeysGetter(keys)
	if err != nil {
		return &outcome{Error: err.Error()}
	}
	out := &outcome{}
	for _, k := range getter.GetPublicKeys(context.Background(), "") {
		out.Keys = append(out.Keys, key{Type: keyType(k.PublicKey), Kid: k.KeyID})
	}
	return out
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: keyfiles tests/vectors/sa_key_files.json")
		os.Exit(2)
	}
	path := os.Args[1]
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		// The generator writes a bare list of cases.
		if err := json.Unmarshal(data, &f.Cases); err != nil {
			panic(err)
		}
	}
	f.Comment = fmt.Sprintf("written by tests/tools/sa_key_files.py; \"go\" recorded by "+
		"conformance/go/cmd/keyfiles (k8s.io/client-go v0.37.2 keyutil.ParsePublicKeysPEM, "+
		"k8s.io/kubernetes v1.37.2 serviceaccount.StaticPublicKeysGetter, %s)", runtime.Version())
	for i := range f.Cases {
		f.Cases[i].Go = run(f.Cases[i].PEM)
	}
	out, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		panic(err)
	}
	fmt.Printf("%d cases\n", len(f.Cases))
}
