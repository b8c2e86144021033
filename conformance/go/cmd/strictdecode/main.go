// Command strictdecode is the body decoding of kube-apiserver's create handler
// (k8s.io/apiserver/pkg/endpoints/handlers/create.go) for the two reviews kube-authn serves:
// the strict JSON serializer kube-apiserver uses for fieldValidation=Warn and Strict
// (k8s.io/apimachinery v0.37.2, sigs.k8s.io/json), decoding into authentication.k8s.io
// TokenReview (v1, v1beta1) or SelfSubjectReview (v1).
//
// tests/server.rs sends the same bodies to kube-authn serve and compares its 400 (Strict)
// and its Warning headers (Warn) with what this program reports.
//
// It reads one JSON object per line on stdin, {"name", "kind", "version", "body"}, and
// writes one per line on stdout, {"name", "strict", "error", "warnings"}: the strict decoding
// errors (each one's text), the decoding error's whole text (empty when the body decodes
// cleanly), the 400's message under Strict (the create handler passes the decoding error
// through transformDecodeError, which names the kind and version the serializer read), and
// the Warning header values kube-apiserver sends
// under Warn: the create handler's addStrictDecodingWarnings through the apiserver's own
// warning recorder filter (its dedup and size limits).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	authv1 "k8s.io/api/authentication/v1"
	authv1beta1 "k8s.io/api/authentication/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/warning"
)

type request struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Body    string `json:"body"`
}

type result struct {
	Name   string   `json:"name"`
	Strict []string `json:"strict"`
	Error  string   `json:"error"`
	// Message is the 400's message under fieldValidation=Strict.
	Message string `json:"message"`
	// Warnings are the Warning header values under fieldValidation=Warn.
	Warnings []string `json:"warnings"`
}

func main() {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{authv1.AddToScheme, authv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			fail(err)
		}
	}
	// What CodecFactory builds as the JSON StrictSerializer.
	strict := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true})

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			fail(err)
		}
		var into runtime.Object
		switch r.Kind + "/" + r.Version {
		case "TokenReview/v1":
			into = &authv1.TokenReview{}
		case "TokenReview/v1beta1":
			into = &authv1beta1.TokenReview{}
		case "SelfSubjectReview/v1":
			into = &authv1.SelfSubjectReview{}
		default:
			fail(fmt.Errorf("unknown kind %s/%s", r.Kind, r.Version))
		}
		gvk := schema.GroupVersionKind{Group: "authentication.k8s.io", Version: r.Version, Kind: r.Kind}
		res := result{Name: r.Name, Strict: []string{}}
		if _, actual, err := strict.Decode([]byte(r.Body), &gvk, into); err != nil {
			res.Error = err.Error()
			res.Message = transformDecodeError(err, actual, r.Kind)
			if se, ok := runtime.AsStrictDecodingError(err); ok {
				for _, e := range se.Errors() {
					res.Strict = append(res.Strict, e.Error())
				}
			}
		}
		res.Warnings = warnings(res.Strict)
		if err := out.Encode(res); err != nil {
			fail(err)
		}
	}
	if err := in.Err(); err != nil {
		fail(err)
	}
}

// transformDecodeError is what create.go's function of that name makes of a decoding error
// when the serializer read a kind (it is unexported, so its format is restated here; the kind
// and version come from the serializer itself): "<kind> in version \"<version>\" cannot be
// handled as a <the endpoint's kind>: <error>".
func transformDecodeError(err error, actual *schema.GroupVersionKind, kind string) string {
	if actual == nil || len(actual.Kind) == 0 {
		return err.Error()
	}
	return fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", actual.Kind, actual.Version, kind, err)
}

// warnings runs kube-apiserver's warning recorder filter around a handler that adds each
// strict error as the create handler does, and returns the Warning headers it wrote.
func warnings(strictErrs []string) []string {
	handler := filters.WithWarningRecorder(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, e := range strictErrs {
			warning.AddWarning(req.Context(), "", e)
		}
		w.WriteHeader(http.StatusCreated)
	}))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", nil))
	return append([]string{}, rec.Result().Header.Values("Warning")...)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "strictdecode:", err)
	os.Exit(2)
}
