package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiserver/plugin/pkg/authenticator/password/passwordfile"
	"k8s.io/apiserver/plugin/pkg/authenticator/request/basicauth"
)

// BenchmarkBasicAuthPasswordFile: Authorization: Basic over a 10,000-row password file
// (k8s.io/apiserver v0.18.19, the last release with basic auth), hit. Same work as
// benches/basic_auth.rs.
func BenchmarkBasicAuthPasswordFile(b *testing.B) {
	var csv strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&csv, "password-%04d-0123456789,user-%d,uid-%d,\"group-a,group-b\"\n", i, i, i)
	}
	path := filepath.Join(b.TempDir(), "passwords.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	pf, err := passwordfile.NewCSV(path)
	if err != nil {
		b.Fatal(err)
	}
	a := basicauth.New(pf)
	req := httptest.NewRequest(http.MethodGet, "https://kube-authn.test/api", nil)
	req.SetBasicAuth("user-5000", "password-5000-0123456789")
	if _, ok, err := a.AuthenticateRequest(req); !ok || err != nil {
		b.Fatalf("not authenticated: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := a.AuthenticateRequest(req); !ok {
			b.Fatal("miss")
		}
	}
}
