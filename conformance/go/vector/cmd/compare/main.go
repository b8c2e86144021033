// Command compare checks oracle observations against the vectors' Kubernetes expectations.
//
//	compare -vectors ../../vectors observed-v0.37.json observed-v0.18.json
//
// Every case must be observed by exactly one oracle (an oracle answers "unsupported" for
// setups it cannot build). It prints per-authenticator counts and exits 1 on any difference.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

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
	type obs struct {
		oracle string
		out    *vector.Outcome
	}
	observed := map[string][]obs{}
	for _, path := range flag.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		var o vector.Observations
		if err := json.Unmarshal(data, &o); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(2)
		}
		for id, out := range o.Results {
			if out.Result == "unsupported" {
				continue
			}
			observed[id] = append(observed[id], obs{o.Oracle, out})
		}
	}
	type count struct{ total, shared, differs, reference, knownBug, failed int }
	counts := map[string]*count{}
	oracleCounts := map[string]int{}
	failures := 0
	for i := range cases {
		c := &cases[i]
		n := counts[c.Label()]
		if n == nil {
			n = &count{}
			counts[c.Label()] = n
		}
		n.total++
		if c.KnownBug != "" {
			n.knownBug++
		}
		if c.K8s != nil {
			n.differs++
		} else {
			n.shared++
		}
		got := observed[c.ID()]
		var problem string
		switch {
		case c.Oracle == "reference" && len(got) == 0:
			n.reference++
			continue
		case c.Oracle == "reference":
			problem = "marked reference-only but an oracle observed it; drop the mark"
		case len(got) == 0:
			problem = "no oracle observed this case"
		case len(got) == 1:
			oracleCounts[got[0].oracle]++
			problem = vector.Diff(c.K8sExpectation(), got[0].out)
		default:
			problem = fmt.Sprintf("observed by %d oracles", len(got))
		}
		if problem != "" {
			n.failed++
			failures++
			fmt.Printf("FAIL %s: %s\n", c.ID(), problem)
		}
	}
	labels := make([]string, 0, len(counts))
	for l := range counts {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	fmt.Printf("\n%-16s %6s %8s %16s %15s %10s %7s\n", "authenticator", "cases", "shared", "documented diff", "reference only", "known bug", "failed")
	total := count{}
	for _, l := range labels {
		n := counts[l]
		fmt.Printf("%-16s %6d %8d %16d %15d %10d %7d\n", l, n.total, n.shared, n.differs, n.reference, n.knownBug, n.failed)
		total.total += n.total
		total.shared += n.shared
		total.differs += n.differs
		total.reference += n.reference
		total.knownBug += n.knownBug
		total.failed += n.failed
	}
	fmt.Printf("%-16s %6d %8d %16d %15d %10d %7d\n", "total", total.total, total.shared, total.differs, total.reference, total.knownBug, total.failed)
	oracles := make([]string, 0, len(oracleCounts))
	for o := range oracleCounts {
		oracles = append(oracles, o)
	}
	sort.Strings(oracles)
	for _, o := range oracles {
		fmt.Printf("checked by %s: %d\n", o, oracleCounts[o])
	}
	if failures > 0 {
		fmt.Printf("\n%d of %d cases differ from k8s.io/apiserver\n", failures, len(cases))
		os.Exit(1)
	}
	fmt.Printf("\nall %d cases checked against Kubernetes' Go code match; %d have no Go code to run and carry expectations from the reference notes\n", len(cases)-total.reference, total.reference)
}
