// Command urlparse writes tests/vectors/go_url.json: what Go's net/url, as Kubernetes uses it,
// makes of a fixed corpus of URL strings, for kube-authn's port of it (src/go_url.rs, checked
// by go_url::go_vectors, `cargo test --all-features --lib go_url`):
//
//   - "parse": url.Parse, as the issuer validation reads it: its error text, or the lower-cased
//     scheme and whether there is userinfo, a raw query, a fragment and a host;
//   - "k8s": the errors k8s.io/apiserver v0.37.2's ValidateAuthenticationConfiguration reports
//     for a JWT authenticator whose issuer.url is the string (validateURL; the Detail of each
//     jwt[0].issuer.url error, whose Error() is checked here to be the usual
//     `jwt[0].issuer.url: Invalid value: %q: <detail>`, or "Required value");
//   - "rest": the string as a kubeconfig cluster's server, loaded as webhookutil.LoadKubeconfig
//     loads one (clientcmd ClientConfig, Timeout 30s) and posted to by kube-apiserver's webhook
//     token authenticator (webhook.New, client-go's REST client), without and with TLS settings
//     in the kubeconfig (insecure-skip-tls-verify: the REST client's default scheme is then
//     https): the URL net/http is handed ("wire", URL.String()), the one its error shows
//     ("shown", stripPassword; absent when it is "wire"), the request line's target and the Host
//     header net/http writes ("target", "host", or "write": its error), or the error text
//     ("err"; "err_tls" only where the TLS settings change it: clientcmd applies them only to a
//     server that already parses as https://, so the retry's prefix stays http://), and whether
//     client-go got there by putting http:// in front ("fallback").
//
// The corpus: hand-picked edge cases, then mutants of them from a fixed seed (math/rand/v2
// PCG), so every run writes the same file. A string that is not UTF-8 is written as
// {"hex": "..."}.
//
//	cd conformance/go && GOPROXY=off GOFLAGS=-mod=mod GOSUMDB=off go run ./cmd/urlparse ../../tests/vectors/go_url.json
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"kube-authn.example/conformance/internal/rowjson"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

// str is a string written as JSON text, or {"hex": ...} when it is not UTF-8.
type str = rowjson.Str

var marshal = rowjson.Marshal

type parsed struct {
	Err      *str `json:"err,omitempty"`
	Scheme   *str `json:"scheme,omitempty"`
	User     bool `json:"user,omitempty"`
	Query    bool `json:"query,omitempty"`
	Fragment bool `json:"fragment,omitempty"`
	Host     bool `json:"host,omitempty"`
}

type restOut struct {
	Err      *str `json:"err,omitempty"`
	ErrTLS   *str `json:"err_tls,omitempty"`
	Fallback bool `json:"fallback,omitempty"`
	Wire     *str `json:"wire,omitempty"`
	Shown    *str `json:"shown,omitempty"`
	Target   *str `json:"target,omitempty"`
	Host     *str `json:"host,omitempty"`
	Write    *str `json:"write,omitempty"`
}

type row struct {
	In    str     `json:"in"`
	Parse parsed  `json:"parse"`
	K8s   []str   `json:"k8s"`
	Rest  restOut `json:"rest"`
	// Known is why kube-authn still differs from Go on this row (knownDifferences).
	Known string `json:"known_difference,omitempty"`
}

// knownDifferences: rows where kube-authn's port does not yet do what Go does, and why.
// go_url::go_vectors prints them and fails once a row matches Go, so the entry goes with the
// fix.
var knownDifferences = map[string]string{
	"https://!%A4439:p%C3%A9@h": "the user name decodes to bytes that are not UTF-8 (%A4): Go's stripPassword form (rest.shown) holds them and its error text quotes them as \\xa4; kube-authn's shown URL is a Rust String and writes U+FFFD",
}

func sp(s string) *str { v := str(s); return &v }

func parseRow(s string) parsed {
	u, err := url.Parse(s)
	if err != nil {
		return parsed{Err: sp(err.Error())}
	}
	return parsed{Scheme: sp(u.Scheme), User: u.User != nil, Query: len(u.RawQuery) > 0, Fragment: len(u.Fragment) > 0, Host: u.Host != ""}
}

var compiler = authenticationcel.NewDefaultCompiler()

// k8sErrors runs the whole authentication configuration validation and keeps the issuer URL's
// errors (the other fields are valid).
func k8sErrors(s string) []str {
	prefix := ""
	c := &api.AuthenticationConfiguration{JWT: []api.JWTAuthenticator{{
		Issuer: api.Issuer{URL: s, Audiences: []string{"a"}},
		ClaimMappings: api.ClaimMappings{
			Username: api.PrefixedClaimOrExpression{Claim: "sub", Prefix: &prefix},
		},
	}}}
	out := []str{}
	for _, e := range validation.ValidateAuthenticationConfiguration(compiler, c, nil) {
		if e.Field != "jwt[0].issuer.url" {
			panic(fmt.Sprintf("%q: unexpected error %v", s, e))
		}
		full := e.Error()
		switch {
		case full == "jwt[0].issuer.url: Required value":
			out = append(out, "Required value")
		case full == fmt.Sprintf("jwt[0].issuer.url: Invalid value: %q: %s", s, e.Detail):
			out = append(out, str(e.Detail))
		default:
			panic(fmt.Sprintf("%q: unexpected form %q", s, full))
		}
	}
	return out
}

var errCaptured = errors.New("captured")

type captureRT struct{ got *http.Request }

func (c *captureRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.got = r
	return nil, errCaptured
}

var postRE = regexp.MustCompile(`(?s)Post ("(?:[^"\\]|\\.)*"): captured`)

// post loads s as a kubeconfig's server and posts a token review to it.
func post(s string, insecure bool) (got *http.Request, shown string, fallback bool, err error) {
	cfg := clientcmdapi.NewConfig()
	cl := clientcmdapi.NewCluster()
	cl.Server = s
	cl.InsecureSkipTLSVerify = insecure
	cfg.Clusters["c"] = cl
	cfg.AuthInfos["u"] = clientcmdapi.NewAuthInfo()
	ctx := clientcmdapi.NewContext()
	ctx.Cluster, ctx.AuthInfo = "c", "u"
	cfg.Contexts["x"] = ctx
	cfg.CurrentContext = "x"
	rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, "x", &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, "", false, err
	}
	// webhookutil.LoadKubeconfig.
	rc.Timeout = 30 * time.Second
	rc.QPS = -1
	capture := &captureRT{}
	rc.Wrap(func(http.RoundTripper) http.RoundTripper { return capture })
	if u, perr := url.Parse(rc.Host); perr != nil || u.Scheme == "" || u.Host == "" {
		fallback = true
	}
	hook, err := webhook.New(rc, "v1", nil, wait.Backoff{Duration: time.Millisecond, Steps: 1})
	if err != nil {
		return nil, "", fallback, err
	}
	_, _, err = hook.AuthenticateToken(context.Background(), "t")
	if capture.got == nil {
		return nil, "", fallback, fmt.Errorf("not sent: %v", err)
	}
	m := postRE.FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		panic(fmt.Sprintf("%q: error %v", s, err))
	}
	shown, uerr := strconv.Unquote(m[1])
	if uerr != nil {
		panic(uerr)
	}
	return capture.got, shown, fallback, nil
}

func restRow(s string) restOut {
	var out restOut
	req, shown, fallback, err := post(s, false)
	_, _, _, errTLS := post(s, true)
	out.Fallback = fallback
	if err != nil {
		out.Err = sp(err.Error())
		if errTLS != nil && errTLS.Error() != err.Error() {
			out.ErrTLS = sp(errTLS.Error())
		}
		return out
	}
	if errTLS != nil {
		out.ErrTLS = sp(errTLS.Error())
	}
	wire := req.URL.String()
	out.Wire = sp(wire)
	if shown != wire {
		out.Shown = sp(shown)
	}
	// The request line and Host header as net/http writes them.
	var b bytes.Buffer
	if werr := req.Write(&b); werr != nil {
		out.Write = sp(werr.Error())
		return out
	}
	line, _ := bufio.NewReader(bytes.NewReader(b.Bytes())).ReadString('\n')
	f := strings.SplitN(strings.TrimRight(line, "\r\n"), " ", 3)
	out.Target = sp(f[1])
	for _, l := range strings.Split(b.String(), "\r\n")[1:] {
		if h, ok := strings.CutPrefix(l, "Host: "); ok {
			out.Host = sp(h)
			break
		}
	}
	return out
}

// seeds: the hand-picked edge cases.
func seeds() []string {
	s := []string{
		"", "*", "https", "https:", "https:/", "https://", "https:///", "https:///p", "https:h", "https:h/p",
		"https:%zz", "//h", "//h/p", "///p", "/p", "p", "h:1", "h:1/p", "127.0.0.1:8443", "localhost",
		"https://h", "https://h/", "https://h/p", "https://h/p/", "https://h:1", "https://h:1/a//b/../c",
		"HTTPS://H", "HtTpS://h/P", "hTTp://h", "Https://h:443", "ftp://h", "FTP://a:1:2", "foo://a:b:1",
		"git+ssh://h", "a.b-c+d://h", "1https://h", "-https://h", ".a://h", "ht_tp://h", ":https://h",
		"https:://h", "https//h", "https:/h", "https:h:1", "https:?q", "https:#f",
		"https://u@h", "https://u:p@h", "https://u:@h", "https://:p@h", "https://@h", "https://u@@h",
		"https://u@h@i", "https://u:p@h:1/x?q#f", "https://u%40v@h", "https://u:p%40q@h", "https://u%zz@h",
		"https://u:p%zz@h", "https://u:p%2@h", "https://u%@h", "https://%1:2@h", "https://u:p/w@h",
		"https://u:p?w@h", "https://u:p#w@h", "https://u é@h", "https://ué@h", "https://u\"@h",
		"https://u{}@h", "https://u[]@h", "https://u:p:q@h", "https://u%C3%A9:p%C3%A9@h", "https://u:p@h:1:2",
		"https://u:p@[::1]:1", "https://tok@h/a", "https://u+v:p+q@h", "https://u%2Fv:p%2F@h/a",
		"https://h/%zz", "https://h/%4", "https://h/%", "https://h/%%", "https://h/%2", "https://h/%2F",
		"https://h/%2f", "https://h/a%2fb/", "https://h/%e2%8", "https://h/%é", "https://h/%€", "https://h%zz",
		"https://h%41", "https://h%C3%A9", "https://h%c3%a9", "https://h%25", "https://h%", "https://h/%25",
		"https://h?%zz", "https://h?q=%zz", "https://h#%zz", "https://h#%", "https://h/x#%zz", "https://h/%zz#f",
		"https://h/%zz?key=SECRET", "https://h/x#%e9", "https://h/x#a%20b",
		"https://[::1]", "https://[::1]:443", "https://[::1]:", "https://[::1]:x", "https://[::1]x",
		"https://[::1]%41", "https://[::]", "https://[::ffff:1.2.3.4]", "https://[::1.2.3.4]",
		"https://[1:2:3:4:5:6:7:8]", "https://[1:2:3:4:5:6:7:8:9]", "https://[1:2:3:4:5:6:1.2.3.4]",
		"https://[1:2:3:4:5:6:7:1.2.3.4]", "https://[1::2::3]", "https://[12345::]", "https://[:1]",
		"https://[1:]", "https://[::1:]", "https://[::g]", "https://[]", "https://[x]", "https://[1.2.3.4]",
		"https://[1.2.3.4]:443", "https://[::1", "https://[::1/p]", "https://::1", "https://h[", "https://h[]",
		"https://[[::1]]", "https://[::1]]", "https://a]b", "https://[::1%25eth0]", "https://[fe80::1%25eth0]:8443/p",
		"https://[fe80::1%25]", "https://[fe80::1%eth0]", "https://[fe80::1%2]", "https://[fe80::1%25%00]",
		"https://[fe80::1%25en%300]", "https://[::1%25%C3%A9]", "https://[%25]", "https://[%25eth0]",
		"https://[fe80::1%25eth0%25]", "https://[fe80::1%25a%20b]", "https://[fe80::1%25a b]",
		"https://[::1.2.3]", "https://[::1.2.3.4.5]", "https://[::01.2.3.4]", "https://[::256.2.3.4]",
		"https://[1:2:3:4:5:6:7:8::]", "https://[::1]:80:90", "https://[v1.fe80::a]", "https://[FE80::A]",
		"https://h:", "https://h:0", "https://h:443", "https://h:65536", "https://h:99999999999", "https://h:-1",
		"https://h:1x", "https://h:x", "https://h:1:2", "https://h::", "https://h:8080:", "https://:",
		"https://:80", "http://a:1:2", "http://h:", "http://h:x", "ws://a:1:2", "ftp://h:x", "foo://h:1:x",
		"custom://a:b:c", "https://h: 1", "https://h:+1", "https://h:１",
		"https://h/a\tb", "https://h/a b", "https://h/a\nb", "https://h\x00", "https://h\x7f", "https://h /p",
		"https://h\t", "https://u\t@h", "https://h?a b", "https://h?a\tb", "https://h#a b", "https://h#a\x01b",
		" https://h", "https://h ", "https ://h", "https:// h", "\x01https://h",
		"https://h/p?", "https://h/p??", "https://h?", "https://h??", "https://h?#", "https://h#?",
		"https://h#", "https://h##", "https://h/p#f", "https://h/#f", "https://h#f", "https://h?q#f",
		"https://h/p?q?r", "https://h/p#f#g", "https://h?a@b", "https://h#a@b", "https://h/a@b",
		"https://h/?", "https://h/?key=abc&x=1", "https://h/authn?key=abc", "https://h/a?", "?q", "#f",
		"https://h/a/%2e%2e/b", "https://h/./a", "https://h/..", "https://h/../x", "https://h/a/./b/../c/",
		"https://h//a//b//", "https://h/a!$&'()*+,;=:@[]~|b", "https://h/ä", "https://h/a%20b", "https://h/a+b",
		"https://h/p%2Fq", "https://h/%7E", "https://h/%41", "https://h/%3f", "https://h/%23", "https://h/a;b=c",
		"https://é", "https://ä.example/p", "https://h/ü?ö#ß", "https://xn--h-7ga", "https://H.EXAMPLE.",
		"https://h.", "https://h..", "https://-h", "https://h_x", "https://h!$&'()*+,;=", "https://h<>\"",
		"https://h{}", "https://h|x", "https://h\\x", "https://h^", "https://h`", "https://h%2e", "https://h%80",
		"https://1.2.3.4", "https://1.2.3.4:443", "https://256.1.1.1", "https://01.2.3.4", "https://1.2.3",
		"https://0x7f.1", "https://[::1]/\xff", "https://h/\xff", "https://\xff", "https://h?\xff",
		"https://h#\xff", "https://u\xff@h", "https://h/\xc3", "\xffhttps://h", "https://h/%\xff",
		"mailto:a@b", "urn:a:b", "data:text/plain,x", "file:///etc/passwd", "file://h/p", "unix:///run/s.sock",
		"https://h/\u2028", "https://h/\u200b", "https://h\u00a0", "https://h/\U0001F600",
	}
	// Long inputs.
	s = append(s,
		"https://h/"+strings.Repeat("a", 2000),
		"https://"+strings.Repeat("a", 300)+".example",
		"https://h/"+strings.Repeat("%zz", 50),
		"https://h/?"+strings.Repeat("q", 1000),
		"https://"+strings.Repeat("u", 200)+":"+strings.Repeat("p", 200)+"@h",
		"https://[::1"+strings.Repeat(":1", 40)+"]",
		"https://h:"+strings.Repeat("9", 100),
		strings.Repeat("a", 500)+"://h",
		"https://h/"+strings.Repeat("../", 200)+"x",
		"https://h/"+strings.Repeat("é", 300),
	)
	return s
}

// The pieces a mutation inserts.
var pieces = []string{
	":", "/", "//", "@", "?", "#", "[", "]", "%", "%2", "%25", "%zz", "%41", "%2F", "%C3%A9", "%e9",
	"é", "€", " ", "\t", "\x7f", "\x00", ".", "..", "-", "_", "~", "!", "$", "&", "'", "(", ")", "*",
	"+", ",", ";", "=", "<", ">", "\"", "{", "}", "|", "\\", "^", "`", "0", "1", "9", "443", "a", "Z",
	"::", "::1", "[::1]", "fe80::1%25eth0", "1.2.3.4", "https://", "HTTPS:", "u:p@", "http", "\xff",
}

func mutate(r *rand.Rand, all []string, s string) string {
	for n := 1 + r.IntN(3); n > 0; n-- {
		i := 0
		if len(s) > 0 {
			i = r.IntN(len(s) + 1)
		}
		switch op := r.IntN(6); op {
		case 0, 1: // insert a piece
			s = s[:i] + pieces[r.IntN(len(pieces))] + s[i:]
		case 2: // delete up to 4 bytes
			j := min(len(s), i+1+r.IntN(4))
			s = s[:i] + s[j:]
		case 3: // replace a byte with a piece
			if i < len(s) {
				s = s[:i] + pieces[r.IntN(len(pieces))] + s[i+1:]
			}
		case 4: // splice with another seed
			o := all[r.IntN(len(all))]
			j := 0
			if len(o) > 0 {
				j = r.IntN(len(o) + 1)
			}
			s = s[:i] + o[j:]
		case 5: // swap the case of a byte
			if i < len(s) {
				c := s[i]
				switch {
				case c >= 'a' && c <= 'z':
					c -= 32
				case c >= 'A' && c <= 'Z':
					c += 32
				}
				s = s[:i] + string(c) + s[i+1:]
			}
		}
	}
	return s
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: urlparse tests/vectors/go_url.json")
		os.Exit(2)
	}
	// The webhook authenticator logs each failed post.
	fs := flag.NewFlagSet("klog", flag.PanicOnError)
	klog.InitFlags(fs)
	_ = fs.Parse([]string{"-logtostderr=false", "-alsologtostderr=false", "-stderrthreshold=FATAL", "-legacy_stderr_threshold_behavior=false"})
	klog.SetOutput(io.Discard)
	corpus := seeds()
	seen := map[string]bool{}
	for _, s := range corpus {
		seen[s] = true
	}
	short := []string{}
	for _, s := range corpus {
		if len(s) <= 80 {
			short = append(short, s)
		}
	}
	r := rand.New(rand.NewPCG(20260101, 37))
	for added := 0; added < 3000; {
		m := mutate(r, short, short[r.IntN(len(short))])
		if seen[m] || len(m) > 200 {
			continue
		}
		seen[m] = true
		corpus = append(corpus, m)
		added++
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"comment\": %q,\n\"rows\": [\n", fmt.Sprintf(
		"written by conformance/go/cmd/urlparse (%s, k8s.io/apiserver and client-go v0.37.2): url.Parse, validateURL and the webhook client's URL for each string", runtime.Version()))
	for i, s := range corpus {
		row := row{In: str(s), Parse: parseRow(s), K8s: k8sErrors(s), Rest: restRow(s), Known: knownDifferences[s]}
		j, err := marshal(row)
		if err != nil {
			panic(err)
		}
		b.Write(j)
		if i+1 < len(corpus) {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]}\n")
	if err := os.WriteFile(os.Args[1], b.Bytes(), 0o644); err != nil {
		panic(err)
	}
	fmt.Println(len(corpus), "rows")
}
