//! End-to-end tests of `kube-authn serve` against kube-apiserver's answers for the health
//! endpoints (k8s.io/apiserver v0.37.2 `pkg/server/healthz`: `?verbose`, `?exclude=`, each
//! check's own handler), the version discovery documents with trailing slashes (go-restful
//! trims them; kube-aggregator serves the group at `/apis/<group>/` too) and `OPTIONS *` (Go's
//! `globalOptionsHandler`, before any filter). The expected bytes were printed by a Go 1.26
//! program serving those handlers; no Go toolchain is needed to run these tests.
#![cfg(feature = "server")]

mod serve_support;

use serve_support::*;

/// curl over HTTP/1.1 to `path` with the `extra` arguments and the `credential` header, if
/// any: body, status, response headers.
fn get(
    server: &Server,
    extra: &[&str],
    credential: Option<&str>,
    path: &str,
) -> (String, u16, String) {
    let mut args: Vec<&str> = vec!["--http1.1"];
    args.extend_from_slice(extra);
    if let Some(credential) = credential {
        args.extend(["-H", credential]);
    }
    let url = server.url(path);
    args.push(&url);
    server.curl(&args)
}

/// The values of the response header `name` in a curl `-D` dump.
fn header_values(headers: &str, name: &str) -> Vec<String> {
    headers
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
        .collect()
}

/// The three endpoints and each check's handler, with the bytes and headers Go writes:
/// `handleRootHealth` (`text/plain; charset=utf-8`, `nosniff`; `ok`, or with `verbose` one
/// line per check, the excluded ones and the names that match no check, sorted and Go-quoted),
/// `adaptCheckToHandler` (`ok`, sniffed `text/plain; charset=utf-8`, no `nosniff`, any method,
/// any query), the mux's 404 for a check that is not registered or a path with one more slash.
/// Who may see what is unchanged: anonymous callers GET the endpoints only (the checks'
/// handlers are RBAC's 403 for them, `system:public-info-viewer` granting the three paths).
#[test]
fn health_endpoints_answer_as_kube_apiservers_healthz_handlers() {
    let server = start_with_tokens();
    let admin = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let jane = format!("Authorization: Bearer {JANE_TOKEN}");
    // Indented: kube-apiserver pretty-prints for curl's User-Agent.
    let forbidden = |path: &str| {
        format!(
            "{{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {{}},\n  \"status\": \"Failure\",\n  \"message\": \"forbidden: User \\\"system:anonymous\\\" cannot get path \\\"{path}\\\"\",\n  \"reason\": \"Forbidden\",\n  \"details\": {{}},\n  \"code\": 403\n}}"
        )
    };
    const ROOT: (&str, bool) = ("text/plain; charset=utf-8", true);
    const CHECK: (&str, bool) = ("text/plain; charset=utf-8", false);
    const NOT_FOUND: (&str, bool) = ("text/plain; charset=utf-8", true);
    const STATUS: (&str, bool) = ("application/json", true);
    // (name, curl arguments, credential, path, status, body, (Content-Type, nosniff))
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        Option<&'a str>,
        &'a str,
        u16,
        String,
        (&'a str, bool),
    );
    let cases: Vec<Case<'_>> = vec![
        ("plain", &[], None, "/healthz", 200, "ok".into(), ROOT),
        (
            "verbose",
            &[],
            None,
            "/healthz?verbose",
            200,
            "[+]ping ok\n[+]log ok\nhealthz check passed\n".into(),
            ROOT,
        ),
        (
            "verbose with any value",
            &[],
            Some(&jane),
            "/livez?verbose=false",
            200,
            "[+]ping ok\n[+]log ok\nlivez check passed\n".into(),
            ROOT,
        ),
        (
            "excluded check",
            &[],
            None,
            "/readyz?verbose&exclude=log",
            200,
            "[+]ping ok\n[+]log excluded: ok\nreadyz check passed\n".into(),
            ROOT,
        ),
        (
            "unknown exclusions, sorted, distinct, quoted",
            &[],
            Some(&admin),
            "/healthz?verbose&exclude=nope&exclude=log&exclude=a%22b&exclude=nope&exclude=%ff",
            200,
            "[+]ping ok\n[+]log excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"a\\\"b\",\"nope\",\"\\xff\"\nhealthz check passed\n".into(),
            ROOT,
        ),
        (
            "exclusion without verbose",
            &[],
            None,
            "/healthz?exclude=ping&exclude=zz",
            200,
            "ok".into(),
            ROOT,
        ),
        (
            "verbose in a pair with a semicolon is dropped",
            &[],
            None,
            "/healthz?verbose;x",
            200,
            "ok".into(),
            ROOT,
        ),
        (
            "verbose, another method",
            &["-X", "POST"],
            Some(&jane),
            "/readyz?verbose",
            200,
            "[+]ping ok\n[+]log ok\nreadyz check passed\n".into(),
            ROOT,
        ),
        (
            "check handler",
            &[],
            Some(&admin),
            "/healthz/ping",
            200,
            "ok".into(),
            CHECK,
        ),
        (
            "check handler, verbose ignored",
            &[],
            Some(&jane),
            "/livez/log?verbose",
            200,
            "ok".into(),
            CHECK,
        ),
        (
            "check handler, any method",
            &["-X", "DELETE"],
            Some(&jane),
            "/readyz/ping",
            200,
            "ok".into(),
            CHECK,
        ),
        (
            "check handler, decoded path",
            &[],
            Some(&admin),
            "/healthz%2Flog",
            200,
            "ok".into(),
            CHECK,
        ),
        (
            "check handler, anonymous",
            &[],
            None,
            "/healthz/ping",
            403,
            forbidden("/healthz/ping"),
            STATUS,
        ),
        (
            "unknown check",
            &[],
            Some(&admin),
            "/healthz/nope",
            404,
            "404 page not found\n".into(),
            NOT_FOUND,
        ),
        (
            "check path with a trailing slash",
            &[],
            Some(&admin),
            "/livez/ping/",
            404,
            "404 page not found\n".into(),
            NOT_FOUND,
        ),
        (
            "endpoint with a trailing slash",
            &[],
            Some(&jane),
            "/healthz/",
            404,
            "404 page not found\n".into(),
            NOT_FOUND,
        ),
    ];
    for (name, extra, credential, path, want_code, want_body, (content_type, nosniff)) in cases {
        let (body, code, headers) = get(&server, extra, credential, path);
        let case = format!("{name}: {path}: {body}\n{headers}");
        assert_eq!(code, want_code, "{case}");
        assert_eq!(body, want_body, "{case}");
        assert_eq!(
            header_values(&headers, "content-type"),
            [content_type],
            "{case}"
        );
        assert_eq!(
            header_values(&headers, "x-content-type-options"),
            if nosniff { vec!["nosniff"] } else { vec![] },
            "{case}"
        );
        assert_eq!(
            header_values(&headers, "cache-control"),
            ["no-cache, private"],
            "{case}"
        );
    }
}

/// The version documents are go-restful routes, which match with trailing slashes trimmed:
/// `…/v1/` is `…/v1` (GET 200, another method 405), and an anonymous caller's 403 names the
/// path as requested. The group document is kube-aggregator's `apiGroupHandler`, registered at
/// `/apis/<group>` and `/apis/<group>/` exactly (any method), so one more slash is a 404.
#[test]
fn discovery_paths_with_trailing_slashes_are_kube_apiservers() {
    let server = start_with_tokens();
    let admin = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let jane = format!("Authorization: Bearer {JANE_TOKEN}");
    let document = |path: &str| {
        let (body, code, _) = server.curl(&["-H", &admin, &server.url(path)]);
        assert_eq!(code, 200, "{path}: {body}");
        body
    };
    let v1 = document("/apis/authentication.k8s.io/v1");
    let v1beta1 = document("/apis/authentication.k8s.io/v1beta1");
    let group = document("/apis/authentication.k8s.io");
    // (curl arguments, credential, path, status, body: the document, or a part of the Status)
    type Case<'a> = (&'a [&'a str], Option<&'a str>, &'a str, u16, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (
            &[],
            Some(&admin),
            "/apis/authentication.k8s.io/v1/",
            200,
            &v1,
        ),
        (
            &[],
            Some(&jane),
            "/apis/authentication.k8s.io/v1//",
            200,
            &v1,
        ),
        (
            &[],
            Some(&jane),
            "/apis/authentication.k8s.io/v1beta1/",
            200,
            &v1beta1,
        ),
        (
            &[],
            Some(&admin),
            "/apis/authentication.k8s.io/v1%2F",
            200,
            &v1,
        ),
        (
            &[],
            Some(&jane),
            "/apis/authentication.k8s.io/",
            200,
            &group,
        ),
        (
            &["-X", "POST"],
            Some(&admin),
            "/apis/authentication.k8s.io/",
            200,
            &group,
        ),
        (
            &["-X", "POST"],
            Some(&admin),
            "/apis/authentication.k8s.io/v1/",
            405,
            r#""reason": "MethodNotAllowed""#,
        ),
        (
            &[],
            None,
            "/apis/authentication.k8s.io/v1/",
            403,
            r#"cannot get path \"/apis/authentication.k8s.io/v1/\""#,
        ),
        (
            &[],
            None,
            "/apis/authentication.k8s.io/",
            403,
            r#"cannot get path \"/apis/authentication.k8s.io/\""#,
        ),
        (
            &[],
            Some(&admin),
            "/apis/authentication.k8s.io//",
            404,
            "404 page not found\n",
        ),
    ];
    for (extra, credential, path, want_code, want_body) in cases {
        let (body, code, _) = get(&server, extra, credential, path);
        let case = format!("{extra:?} {path} as {credential:?}: {body}");
        assert_eq!(code, want_code, "{case}");
        if want_code == 200 {
            assert_eq!(body, want_body, "{case}");
        } else {
            assert!(body.contains(want_body), "{case}");
        }
    }
}

/// `OPTIONS *` is answered by Go's `globalOptionsHandler` before any filter, over HTTP/1.1
/// and HTTP/2, whatever the credential (none, refused, good): 200, `Content-Length: 0`, no
/// body, no `Content-Type` and no `Cache-Control` (no filter ran). `OPTIONS /` is an ordinary
/// request, authenticated first.
#[test]
fn options_asterisk_is_gos_global_options_handler() {
    let server = start_with_tokens();
    let admin = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let refused = "Authorization: Bearer not-a-token";
    // (protocol, request target, credential, status)
    let cases: [(&str, &str, Option<&str>, u16); 8] = [
        ("--http1.1", "*", None, 200),
        ("--http1.1", "*", Some(refused), 200),
        ("--http1.1", "*", Some(&admin), 200),
        ("--http2", "*", None, 200),
        ("--http2", "*", Some(refused), 200),
        ("--http2", "*", Some(&admin), 200),
        ("--http1.1", "/", Some(refused), 401),
        ("--http2", "/", Some(refused), 401),
    ];
    for (protocol, target, credential, want_code) in cases {
        let mut args = vec![protocol, "-X", "OPTIONS", "--request-target", target];
        if let Some(credential) = credential {
            args.extend(["-H", credential]);
        }
        let url = server.url("/");
        args.push(&url);
        let (body, code, headers) = server.curl(&args);
        let case = format!("{protocol} OPTIONS {target} as {credential:?}: {body}\n{headers}");
        assert_eq!(code, want_code, "{case}");
        if want_code == 200 {
            assert_eq!(body, "", "{case}");
            assert_eq!(header_values(&headers, "content-length"), ["0"], "{case}");
            for absent in ["content-type", "cache-control", "x-content-type-options"] {
                assert!(
                    header_values(&headers, absent).is_empty(),
                    "{absent}: {case}"
                );
            }
        }
    }
}
