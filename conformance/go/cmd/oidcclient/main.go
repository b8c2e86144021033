// Command oidcclient is kube-apiserver's JWT (OIDC) authentication from an
// AuthenticationConfiguration file, built from k8s.io/apiserver v0.37.2 the way kube-apiserver
// builds it for --authentication-config: the file decoded strictly with the apiserver.config.k8s.io
// scheme, each jwt entry given to oidc.New with its certificateAuthority as a static CA and
// --oidc-signing-algs' default (RS256), the authenticators combined fail-on-error. Discovery and
// JWKS are fetched by k8s' own code (go-oidc) from the issuer.
//
// tests/oidc_provider.rs runs it beside kube-authn's OIDC authenticator against a real OpenID
// provider (npm oidc-provider) and compares the answers token by token.
//
// It waits (at most -wait) until every authenticator's health check passes, then reads one
// JSON object per line on stdin, {"name", "token"}, and writes one per line on stdout,
// {"name", "authenticated", "user", "error"}.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"

	"kube-authn.example/conformance/internal/linewise"
)

type request struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

func main() {
	path := flag.String("authentication-config", "", "--authentication-config")
	wait := flag.Duration("wait", 30*time.Second, "how long to wait for the authenticators to initialise")
	flag.Parse()

	data, err := os.ReadFile(*path)
	if err != nil {
		fail(err)
	}
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	obj, err := runtime.Decode(codecs.UniversalDecoder(), data)
	if err != nil {
		fail(err)
	}
	config, ok := obj.(*apiserver.AuthenticationConfiguration)
	if !ok {
		fail(fmt.Errorf("expected AuthenticationConfiguration, got %T", obj))
	}

	ctx := context.Background()
	var tokens []authenticator.Token
	var health []oidc.AuthenticatorTokenWithHealthCheck
	for _, jwt := range config.JWT {
		var ca oidc.CAContentProvider
		if jwt.Issuer.CertificateAuthority != "" {
			ca, err = dynamiccertificates.NewStaticCAContent("oidc-authenticator", []byte(jwt.Issuer.CertificateAuthority))
			if err != nil {
				fail(err)
			}
		}
		a, err := oidc.New(ctx, oidc.Options{
			JWTAuthenticator:     jwt,
			CAContentProvider:    ca,
			SupportedSigningAlgs: []string{"RS256"},
		})
		if err != nil {
			fail(err)
		}
		tokens = append(tokens, a)
		health = append(health, a)
	}
	chain := tokenunion.NewFailOnError(tokens...)

	deadline := time.Now().Add(*wait)
	for _, h := range health {
		for {
			err := h.HealthCheck()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				fail(errors.Join(errors.New("not initialised in time"), err))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	linewise.Serve("oidcclient", func(r *request) linewise.Result {
		resp, ok, err := chain.AuthenticateToken(ctx, r.Token)
		return linewise.NewResult(r.Name, resp, ok, err)
	})
}

func fail(err error) { linewise.Fail("oidcclient", err) }
