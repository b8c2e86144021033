// Command oracle runs every conformance vector through k8s.io/apiserver and prints the
// observed outcomes as JSON (see conformance/README.md).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"kube-authn.example/conformance/internal/oracle"
	"kube-authn.example/conformance/vector"
)

func main() {
	dir := flag.String("vectors", "../vectors", "directory of vector files")
	flag.Parse()
	cases, err := vector.Load(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "conformance-oracle-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.RemoveAll(tmp)
	obs := vector.Observations{Oracle: oracle.Name, Results: map[string]*vector.Outcome{}}
	for i := range cases {
		obs.Results[cases[i].ID()] = oracle.Run(&cases[i], tmp)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(obs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
