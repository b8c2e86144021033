// Command webhookclient is kube-apiserver's webhook token authentication, built from
// k8s.io/apiserver v0.37.2 the way kube-apiserver builds it for
// --authentication-token-webhook-config-file: the kubeconfig loaded by webhookutil.LoadKubeconfig,
// webhook.New with the default retry backoff and the API audiences as implicit audiences, the
// 2-minute token cache, the token union, the bearer-token request authenticator, the request
// union and the authenticated-group adder.
//
// tests/serve_authn.rs points it at `kube-authn serve` to show that the server works as a
// cluster's authentication webhook for the client code kube-apiserver itself runs.
//
// Input (stdin): one JSON object per line, {"name", "token", "audiences"}; each is sent as
// a request with "Authorization: Bearer <token>" whose context carries the audiences (none:
// no audience check, as for a request kube-apiserver authenticates without API audiences).
// Output (stdout): one JSON object per line, {"name", "authenticated", "user", "audiences",
// "error"}.
package main

import (
	"context"
	"flag"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"

	"kube-authn.example/conformance/internal/linewise"
)

type request struct {
	Name      string   `json:"name"`
	Token     string   `json:"token"`
	Audiences []string `json:"audiences"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "--authentication-token-webhook-config-file")
	version := flag.String("version", "v1beta1", "--authentication-token-webhook-version")
	apiAudiences := flag.String("api-audiences", "", "--api-audiences (comma-separated)")
	flag.Parse()

	var implicit authenticator.Audiences
	if *apiAudiences != "" {
		implicit = strings.Split(*apiAudiences, ",")
	}
	config, err := webhookutil.LoadKubeconfig(*kubeconfig, nil)
	if err != nil {
		fail(err)
	}
	// options.DefaultAuthWebhookRetryBackoff().
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	hook, err := webhook.New(config, *version, implicit, backoff)
	if err != nil {
		fail(err)
	}
	// --authentication-token-webhook-cache-ttl (2m) for successes and failures alike.
	token := tokenunion.New(tokencache.New(hook, false, 2*time.Minute, 2*time.Minute))
	chain := group.NewAuthenticatedGroupAdder(union.New(bearertoken.New(token)))

	linewise.Serve("webhookclient", func(r *request) linewise.Result {
		ctx := context.Background()
		if len(r.Audiences) > 0 {
			ctx = authenticator.WithAudiences(ctx, r.Audiences)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://kube-apiserver.invalid/api", nil)
		if err != nil {
			fail(err)
		}
		req.Header.Set("Authorization", "Bearer "+r.Token)
		resp, ok, err := chain.AuthenticateRequest(req)
		return linewise.NewResult(r.Name, resp, ok, err)
	})
}

func fail(err error) { linewise.Fail("webhookclient", err) }
