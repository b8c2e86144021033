//! End-to-end tests of `kube-authn serve`'s API handlers against kube-apiserver's answers:
//! how a review's metadata is decoded (Go's typed decoding and `time.Parse` texts), the
//! create handler's owner-reference dedup warning, routing on the percent-decoded path, and
//! the methods each handler answers. The expected texts were printed by kube-apiserver's own
//! code (k8s.io/apiserver and k8s.io/apimachinery v0.37.2, `conformance/go/cmd/strictdecode`,
//! Go 1.26); no Go toolchain is needed to run these tests.
#![cfg(feature = "server")]

mod serve_support;

use serde_json::{Value, json};
use serve_support::*;

const TR: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const TR_BETA: &str = "/apis/authentication.k8s.io/v1beta1/tokenreviews";
const SSR: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

const MODES: [&str; 4] = [
    "",
    "?fieldValidation=Warn",
    "?fieldValidation=Strict",
    "?fieldValidation=Ignore",
];

/// POSTs `body` as JSON to `path` as `admin`: status, `Warning` values, parsed body.
async fn post(
    client: &reqwest::Client,
    server: &Server,
    path: &str,
    body: &str,
) -> (u16, Vec<String>, Value) {
    let resp = client
        .post(server.url(path))
        .bearer_auth(ADMIN_TOKEN)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let code = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| String::from_utf8(v.as_bytes().to_vec()).unwrap())
        .collect();
    (code, warnings, resp.json().await.unwrap_or(Value::Null))
}

/// Every field of `metav1.ObjectMeta` is decoded into its Go type, in every `fieldValidation`
/// mode: a value of the wrong JSON type is encoding/json's error, a bad time `time.Parse`'s
/// (which ends the decoding, so it wins over a type error found before it), behind the create
/// handler's `… cannot be handled as a …` prefix; `null` and valid times are accepted. The
/// same holds for the reviews' own fields (spec, status) and for both kinds and versions.
#[tokio::test]
async fn review_metadata_is_decoded_as_kube_apiserver_decodes_it() {
    let server = start_with_tokens();
    let client = server.reqwest();
    const TR_HEAD: &str =
        r#""apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x"}"#;
    const PREFIX: &str = r#"TokenReview in version "v1" cannot be handled as a TokenReview: "#;
    const LAYOUT: &str = r#"as "2006-01-02T15:04:05Z07:00""#;
    // (metadata, Go's error after the prefix, or None: accepted)
    let metadata: Vec<(&str, Option<String>)> = vec![
        (
            r#"{"creationTimestamp":"garbage"}"#,
            Some(format!(
                r#"parsing time "garbage" {LAYOUT}: cannot parse "garbage" as "2006""#
            )),
        ),
        (r#"{"creationTimestamp":null}"#, None),
        (r#"{"creationTimestamp":"2020-01-02T03:04:05Z"}"#, None),
        (
            r#"{"creationTimestamp":"2020-01-02T03:04:05.123456789+05:30"}"#,
            None,
        ),
        (r#"{"creationTimestamp":"2020-01-02T3:04:05,5+24:00"}"#, None),
        (r#"{"creationTimestamp":"0000-01-01T00:00:00Z"}"#, None),
        (r#"{"creationTimestamp":"2024-02-29T00:00:00Z"}"#, None),
        (
            r#"{"creationTimestamp":5}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string".into(),
            ),
        ),
        (
            r#"{"creationTimestamp":{}}"#,
            Some(
                "json: cannot unmarshal object into Go struct field ObjectMeta.metadata.creationTimestamp of type string".into(),
            ),
        ),
        (
            r#"{"deletionTimestamp":"2020-13-45"}"#,
            Some(r#"parsing time "2020-13-45": month out of range"#.into()),
        ),
        (
            r#"{"deletionTimestamp":"2023-02-29T00:00:00Z"}"#,
            Some(r#"parsing time "2023-02-29T00:00:00Z": day out of range"#.into()),
        ),
        (
            r#"{"deletionTimestamp":"2020-02-03T24:00:00Z"}"#,
            Some(r#"parsing time "2020-02-03T24:00:00Z": hour out of range"#.into()),
        ),
        (
            r#"{"deletionTimestamp":"2020-01-02T03:60:00Z"}"#,
            Some(r#"parsing time "2020-01-02T03:60:00Z": minute out of range"#.into()),
        ),
        (
            r#"{"deletionTimestamp":"2020-01-02T03:04:60Z"}"#,
            Some(r#"parsing time "2020-01-02T03:04:60Z": second out of range"#.into()),
        ),
        (
            r#"{"deletionTimestamp":"2020-02-03T04:00:00Zabc"}"#,
            Some(r#"parsing time "2020-02-03T04:00:00Zabc": extra text: "abc""#.into()),
        ),
        (
            r#"{"deletionTimestamp":"2020-02-03T04:00:00+25:00"}"#,
            Some(
                r#"parsing time "2020-02-03T04:00:00+25:00": time zone offset hour out of range"#
                    .into(),
            ),
        ),
        (
            r#"{"deletionTimestamp":"2020-01-01T00:00:00+25:61"}"#,
            Some(
                r#"parsing time "2020-01-01T00:00:00+25:61": time zone offset minute out of range"#
                    .into(),
            ),
        ),
        (
            r#"{"deletionTimestamp":"2020-02-03T04:00:00+2500"}"#,
            Some(format!(
                r#"parsing time "2020-02-03T04:00:00+2500" {LAYOUT}: cannot parse "+2500" as "Z07:00""#
            )),
        ),
        (
            r#"{"deletionTimestamp":"2020-1-02T03:04:05Z"}"#,
            Some(format!(
                r#"parsing time "2020-1-02T03:04:05Z" {LAYOUT}: cannot parse "1-02T03:04:05Z" as "01""#
            )),
        ),
        (
            r#"{"deletionTimestamp":"2020-01-02 03:04:05Z"}"#,
            Some(format!(
                r#"parsing time "2020-01-02 03:04:05Z" {LAYOUT}: cannot parse " 03:04:05Z" as "T""#
            )),
        ),
        (
            r#"{"deletionTimestamp":"2020-01-02T03:04"}"#,
            Some(format!(
                r#"parsing time "2020-01-02T03:04" {LAYOUT}: cannot parse "" as ":""#
            )),
        ),
        (
            r#"{"deletionTimestamp":"2020-\"\u00e9\u0001"}"#,
            Some(format!(
                r#"parsing time "2020-\"\xc3\xa9\x01" {LAYOUT}: cannot parse "\"\xc3\xa9\x01" as "01""#
            )),
        ),
        (
            r#"{"deletionTimestamp":""}"#,
            Some(format!(
                r#"parsing time "" {LAYOUT}: cannot parse "" as "2006""#
            )),
        ),
        (r#"{"deletionTimestamp":null}"#, None),
        (
            r#"{"uid":5}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID".into(),
            ),
        ),
        (
            r#"{"selfLink":true}"#,
            Some(
                "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.selfLink of type string".into(),
            ),
        ),
        (
            r#"{"deletionGracePeriodSeconds":"5"}"#,
            Some(
                "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.deletionGracePeriodSeconds of type int64".into(),
            ),
        ),
        (
            r#"{"deletionGracePeriodSeconds":1.5}"#,
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.deletionGracePeriodSeconds of type int64".into(),
            ),
        ),
        // Valid JSON for Go, out of serde_json's range: Go's type error, not a syntax error.
        (
            r#"{"generation":1E400}"#,
            Some(
                "json: cannot unmarshal number 1E400 into Go struct field ObjectMeta.metadata.generation of type int64".into(),
            ),
        ),
        (
            r#"{"name":1E400}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string".into(),
            ),
        ),
        // A lone surrogate escape is U+FFFD for Go, whose time.Parse then refuses it.
        (
            r#"{"creationTimestamp":"2024-01-01T00:00:05\ud800"}"#,
            Some(format!(
                r#"parsing time "2024-01-01T00:00:05\xef\xbf\xbd" {LAYOUT}: cannot parse "\xef\xbf\xbd" as "Z07:00""#
            )),
        ),
        (
            r#"{"generation":9223372036854775808}"#,
            Some(
                "json: cannot unmarshal number 9223372036854775808 into Go struct field ObjectMeta.metadata.generation of type int64".into(),
            ),
        ),
        (
            r#"{"generation":1e2}"#,
            Some(
                "json: cannot unmarshal number 1e2 into Go struct field ObjectMeta.metadata.generation of type int64".into(),
            ),
        ),
        (
            r#"{"generation":-0,"deletionGracePeriodSeconds":-9223372036854775808}"#,
            None,
        ),
        (
            r#"{"managedFields":[{"time":"bad"}]}"#,
            Some(format!(
                r#"parsing time "bad" {LAYOUT}: cannot parse "bad" as "2006""#
            )),
        ),
        (
            r#"{"managedFields":[{"operation":5}]}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ManagedFieldsEntry.metadata.managedFields.operation of type v1.ManagedFieldsOperationType".into(),
            ),
        ),
        (
            r#"{"managedFields":[5]}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.managedFields of type v1.ManagedFieldsEntry".into(),
            ),
        ),
        (
            r#"{"managedFields":{}}"#,
            Some(
                "json: cannot unmarshal object into Go struct field ObjectMeta.metadata.managedFields of type []v1.ManagedFieldsEntry".into(),
            ),
        ),
        (
            r#"{"managedFields":[{"time":null,"fieldsV1":5}],"deletionTimestamp":"2020-01-01T00:00:00.123456789123Z"}"#,
            None,
        ),
        (
            r#"{"labels":{"a":5}}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string".into(),
            ),
        ),
        (
            r#"{"labels":[]}"#,
            Some(
                "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string".into(),
            ),
        ),
        (
            r#"{"labels":{"a":null},"finalizers":null,"ownerReferences":[null]}"#,
            None,
        ),
        (
            r#"{"finalizers":["a",5]}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string".into(),
            ),
        ),
        (
            r#"{"ownerReferences":[{"controller":"yes"}]}"#,
            Some(
                "json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool".into(),
            ),
        ),
        (
            r#"{"ownerReferences":[{"uid":1}]}"#,
            Some(
                "json: cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.uid of type types.UID".into(),
            ),
        ),
        // The first type error is kept; a time's error ends the decoding and wins.
        (
            r#"{"uid":5,"generation":"x"}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID".into(),
            ),
        ),
        (
            r#"{"uid":5,"creationTimestamp":"bad"}"#,
            Some(format!(
                r#"parsing time "bad" {LAYOUT}: cannot parse "bad" as "2006""#
            )),
        ),
        (
            r#"{"creationTimestamp":"bad","uid":5}"#,
            Some(format!(
                r#"parsing time "bad" {LAYOUT}: cannot parse "bad" as "2006""#
            )),
        ),
        // Before the strict decoder's findings, in every mode.
        (
            r#"{"x":1,"uid":5}"#,
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID".into(),
            ),
        ),
    ];
    let mut cases: Vec<(String, &str, String, Option<String>)> = metadata
        .into_iter()
        .map(|(meta, want)| {
            (
                format!("{{{TR_HEAD},\"metadata\":{meta}}}"),
                TR,
                meta.to_owned(),
                want.map(|w| format!("{PREFIX}{w}")),
            )
        })
        .collect();
    // The metadata field itself, the reviews' own fields, v1beta1 and SelfSubjectReview.
    let more: [(&str, &str, &str); 9] = [
        (
            TR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","metadata":"x"}"#,
            r#"TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field TokenReview.metadata of type v1.ObjectMeta"#,
        ),
        (
            TR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":7}}"#,
            r#"TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal number into Go struct field TokenReviewSpec.spec.token of type string"#,
        ),
        (
            TR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":"x"}"#,
            r#"TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field TokenReview.spec of type v1.TokenReviewSpec"#,
        ),
        (
            TR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x","audiences":[1]},"status":{"authenticated":"x"}}"#,
            r#"TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal number into Go struct field TokenReviewSpec.spec.audiences of type string"#,
        ),
        (
            TR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x"},"status":{"user":{"extra":{"k":[1]}}}}"#,
            r#"TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal number into Go struct field UserInfo.status.user.extra of type string"#,
        ),
        (
            TR_BETA,
            r#"{"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview","spec":{"token":"x"},"status":{"user":{"extra":{"k":"v"}}}}"#,
            r#"TokenReview in version "v1beta1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field UserInfo.status.user.extra of type v1beta1.ExtraValue"#,
        ),
        (
            SSR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"creationTimestamp":"garbage"}}"#,
            r#"SelfSubjectReview in version "v1" cannot be handled as a SelfSubjectReview: parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006""#,
        ),
        (
            SSR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","status":{"userInfo":{"groups":"x"}}}"#,
            r#"SelfSubjectReview in version "v1" cannot be handled as a SelfSubjectReview: json: cannot unmarshal string into Go struct field UserInfo.status.userInfo.groups of type []string"#,
        ),
        (
            SSR,
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","status":5}"#,
            r#"SelfSubjectReview in version "v1" cannot be handled as a SelfSubjectReview: json: cannot unmarshal number into Go struct field SelfSubjectReview.status of type v1.SelfSubjectReviewStatus"#,
        ),
    ];
    for (path, body, want) in more {
        cases.push((
            body.to_owned(),
            path,
            body.to_owned(),
            Some(want.to_owned()),
        ));
    }
    cases.push((
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"uid":"u","creationTimestamp":"2020-01-02T03:04:05Z"}}"#.into(),
        SSR,
        "self-subject review, valid metadata".into(),
        None,
    ));
    for (body, path, name, want) in &cases {
        for mode in MODES {
            let (code, _, answer) = post(&client, &server, &format!("{path}{mode}"), body).await;
            let case = format!("{name} {mode:?}: {answer}");
            match want {
                Some(message) => {
                    assert_eq!(code, 400, "{case}");
                    assert_eq!(answer["message"], message.as_str(), "{case}");
                    assert_eq!(answer["reason"], "BadRequest", "{case}");
                    assert_eq!(answer["details"], Value::Null, "{case}");
                }
                None => {
                    assert_eq!(code, 201, "{case}");
                    // The system fields are wiped, as kube-apiserver's create handler does.
                    for field in ["uid", "creationTimestamp", "deletionTimestamp"] {
                        if path.ends_with("tokenreviews") {
                            assert_eq!(answer["metadata"][field], Value::Null, "{case}");
                        }
                    }
                }
            }
        }
    }
}

/// kube-apiserver's create handler drops an owner reference equal in every field to an
/// earlier one and warns with the UIDs it dropped (`dedupOwnerReferencesAndAddWarning`), in
/// every `fieldValidation` mode, for both reviews, after the strict decoder's warnings, and
/// also on an answer that the review itself refuses (an empty token).
#[tokio::test]
async fn duplicate_owner_references_are_dropped_with_kube_apiservers_warning() {
    let server = start_with_tokens();
    let client = server.reqwest();
    const WARNING: &str = r#"299 - ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: 1, 1, 2""#;
    let a = json!({"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1"});
    let b = json!({"apiVersion": "v1", "kind": "Pod", "name": "b", "uid": "1"});
    let c = json!({"apiVersion": "v1", "kind": "Pod", "name": "c", "uid": "2", "controller": true});
    let c_unset = json!({"apiVersion": "v1", "kind": "Pod", "name": "c", "uid": "2"});
    let refs = json!([a, a, b, c, c_unset, a, c]);
    let kept = json!([a, b, c, c_unset]);
    for mode in MODES {
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "metadata": {"ownerReferences": refs}, "spec": {"token": JANE_TOKEN}});
        let (code, warnings, answer) =
            post(&client, &server, &format!("{TR}{mode}"), &body.to_string()).await;
        assert_eq!(code, 201, "{mode}: {answer}");
        assert_eq!(warnings, [WARNING], "{mode}");
        assert_eq!(answer["metadata"]["ownerReferences"], kept, "{mode}");
        assert_eq!(answer["status"]["user"]["username"], "jane", "{mode}");

        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview",
            "metadata": {"ownerReferences": refs}});
        let (code, warnings, answer) =
            post(&client, &server, &format!("{SSR}{mode}"), &body.to_string()).await;
        assert_eq!(code, 201, "{mode}: {answer}");
        assert_eq!(warnings, [WARNING], "self-subject review {mode}");
    }
    // After the strict decoder's warning; on the 400 of an empty token too.
    let body = json!({"apiVersion": "authentication.k8s.io/v1beta1", "kind": "TokenReview",
        "metadata": {"ownerReferences": [a, a]}, "spec": {"token": ""}, "x": 1});
    let (code, warnings, answer) = post(&client, &server, TR_BETA, &body.to_string()).await;
    assert_eq!(code, 400, "{answer}");
    assert_eq!(
        answer["message"],
        "token is required for TokenReview in authentication"
    );
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"x\"""#,
            r#"299 - ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: 1""#,
        ]
    );
    // Distinct entries: no warning, all echoed.
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "metadata": {"ownerReferences": [a, b, c, c_unset]}, "spec": {"token": JANE_TOKEN}});
    let (code, warnings, answer) = post(&client, &server, TR, &body.to_string()).await;
    assert_eq!(code, 201);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(answer["metadata"]["ownerReferences"], kept);
}

/// Routes match the percent-decoded path, as Go's mux and go-restful match `req.URL.Path`
/// (`%2F` decoded too); a 403 names the decoded path; an invalid escape is Go's HTTP server's
/// plain 400.
#[tokio::test]
async fn paths_are_percent_decoded_as_go_routes_them() {
    let server = start_with_tokens();
    let auth = format!("Authorization: Bearer {ADMIN_TOKEN}");
    for (path, want) in [
        ("/ap%69s/authentication.k8s.io/v1", "APIResourceList"),
        ("/apis/authentication.k8s.io%2Fv1", "APIResourceList"),
        ("/apis%2Fauthentication.k8s.io", "APIGroup"),
        ("/%61pis", "APIGroupList"),
    ] {
        let (body, code, _) = server.curl(&["-H", &auth, &server.url(path)]);
        assert_eq!(code, 200, "{path}: {body}");
        let doc: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["kind"], want, "{path}");
    }
    let (body, code, _) = server.curl(&["-H", &auth, &server.url("/heal%74hz")]);
    assert_eq!((code, body.as_str()), (200, "ok"));
    for path in [
        "/apis/authentication.k8s.io/v1/token%72eviews",
        "/apis/authentication.k8s.io%2Fv1%2Ftokenreviews",
    ] {
        let (body, code, _) = server.curl(&[
            "--http1.1",
            "-H",
            &auth,
            "-H",
            "Content-Type: application/json",
            "--data",
            &format!(
                r#"{{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{{"token":"{JANE_TOKEN}"}}}}"#
            ),
            &server.url(path),
        ]);
        assert_eq!(code, 201, "{path}: {body}");
        let review: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(review["status"]["user"]["username"], "jane", "{path}");
    }
    // Anonymous: RBAC's 403 names the decoded path.
    let (body, code, _) = server.curl(&[&server.url("/ap%69s")]);
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        status["message"],
        r#"forbidden: User "system:anonymous" cannot get path "/apis""#
    );
    // A decoded path that is not UTF-8 (`%FF`) matches no route: an unknown non-resource
    // path, the mux's plain-text 404 for a caller with rights, the RBAC 403 quoting the
    // bytes as Go's `%q` does for an anonymous one.
    let url = server.url("/apis%FF%3C");
    let (body, code, _) = server.curl(&["--http1.1", "-H", &auth, &url]);
    assert_eq!((code, body.as_str()), (404, "404 page not found\n"));
    let (body, code, _) = server.curl(&["--http1.1", &url]);
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        status["message"],
        r#"forbidden: User "system:anonymous" cannot get path "/apis\xff&lt;""#
    );
    // A bad escape: Go's server refuses the request URI before any handler or authenticator,
    // so every caller (good token, bad token, anonymous) gets the same answer. HTTP/1.1:
    // `400 Bad Request` as text, `Connection: close`, and the connection is closed (curl does
    // not reuse it for the second URL); HTTP/2: the stream is reset with PROTOCOL_ERROR.
    let bad = "Authorization: Bearer not-a-known-token".to_owned();
    for path in [
        "/apis%zz",
        "/healthz%",
        "/apis/authentication.k8s.io/v1/tokenreviews%2",
    ] {
        for credential in [Some(&auth), Some(&bad), None] {
            let case = format!("{path} as {credential:?}");
            let mut args = vec!["--http1.1"];
            if let Some(credential) = credential {
                args.extend(["-H", credential.as_str()]);
            }
            let url = server.url(path);
            args.push(&url);
            let (body, code, headers) = server.curl(&args);
            assert_eq!((code, body.as_str()), (400, "400 Bad Request"), "{case}");
            let headers = headers.to_ascii_lowercase();
            assert!(
                headers.contains("content-type: text/plain; charset=utf-8"),
                "{case}: {headers}"
            );
            assert!(headers.contains("connection: close"), "{case}: {headers}");
            assert!(!headers.contains("cache-control"), "{case}: {headers}");
            assert!(!headers.contains("www-authenticate"), "{case}: {headers}");
            let curl = |version: &str| {
                let mut cmd = std::process::Command::new("curl");
                cmd.args(["-sv", "--max-time", "60", version, "--cacert"])
                    .arg(server.ca());
                if let Some(credential) = credential {
                    cmd.args(["-H", credential]);
                }
                let out = cmd
                    .args([&url, &server.url("/healthz")])
                    .output()
                    .expect("curl is installed");
                String::from_utf8_lossy(&out.stderr).into_owned()
            };
            let h1 = curl("--http1.1");
            assert_eq!(h1.matches("Connected to").count(), 2, "{case}: {h1}");
            let h2 = curl("--http2");
            assert!(h2.contains("ALPN: server accepted h2"), "{case}: {h2}");
            assert!(h2.contains("PROTOCOL_ERROR"), "{case}: {h2}");
            assert!(!h2.contains("< HTTP/2 400"), "{case}: {h2}");
        }
    }
}

/// A lone UTF-16 surrogate escape in a review's strings is U+FFFD for Go's decoder (serde_json
/// refuses it): a TokenReview whose token has one is reviewed, and a member name with one is
/// an unknown field named with U+FFFD (`conformance/go/cmd/strictdecode`).
#[tokio::test]
async fn lone_surrogates_are_decoded_as_go_decodes_them() {
    let server = start_with_tokens();
    let client = server.reqwest();
    let (code, _, review) = post(
        &client,
        &server,
        TR,
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"ab\ud800c"}}"#,
    )
    .await;
    assert_eq!(code, 201, "{review}");
    assert_eq!(review["kind"], "TokenReview", "{review}");
    assert_eq!(review["status"]["authenticated"], Value::Null, "{review}");
    let (code, _, status) = post(
        &client,
        &server,
        &format!("{TR}?fieldValidation=Strict"),
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x"},"zz\udc00":1E400}"#,
    )
    .await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "TokenReview in version \"v1\" cannot be handled as a TokenReview: strict decoding error: unknown field \"zz\u{fffd}\""
    );
}

/// The methods each handler answers, as in kube-apiserver: the health checks and `/metrics`
/// answer every method (k8s.io/apiserver's healthz handler, promhttp), the group document
/// too (kube-aggregator's `apiGroupHandler`), the version documents GET only (go-restful,
/// 405). Anonymous callers may GET the health checks only (`system:public-info-viewer`); any
/// other method is RBAC's 403 naming the method, the request's verb.
#[tokio::test]
async fn methods_are_answered_as_kube_apiserver_answers_them() {
    let server = start_with_tokens();
    let auth = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let jane = format!("Authorization: Bearer {JANE_TOKEN}");
    let forbidden = |verb: &str, path: &str| {
        format!(r#"forbidden: User \"system:anonymous\" cannot {verb} path \"{path}\""#)
    };
    // (curl method arguments, credential, path, status, body start)
    type Case<'a> = (&'a [&'a str], Option<&'a str>, &'a str, u16, String);
    let cases: Vec<Case<'_>> = vec![
        (&["-X", "POST"], Some(&auth), "/healthz", 200, "ok".into()),
        (&["-X", "DELETE"], Some(&jane), "/livez", 200, "ok".into()),
        (&["-X", "PUT"], Some(&auth), "/readyz", 200, "ok".into()),
        (&[], None, "/healthz", 200, "ok".into()),
        (&["-I"], Some(&jane), "/readyz", 200, String::new()),
        (
            &["-X", "POST"],
            None,
            "/healthz",
            403,
            forbidden("post", "/healthz"),
        ),
        (&["-I"], None, "/livez", 403, String::new()),
        (&["-I"], Some(&auth), "/metrics", 200, String::new()),
        (
            &["-X", "POST"],
            Some(&jane),
            "/metrics",
            200,
            "# HELP".into(),
        ),
        (
            &["-X", "POST"],
            None,
            "/metrics",
            403,
            forbidden("post", "/metrics"),
        ),
        (
            &["-X", "POST"],
            Some(&auth),
            "/apis/authentication.k8s.io",
            200,
            r#""kind": "APIGroup""#.into(),
        ),
        (
            &["-X", "DELETE"],
            Some(&jane),
            "/apis/authentication.k8s.io",
            200,
            r#""kind": "APIGroup""#.into(),
        ),
        (
            &["-X", "POST"],
            Some(&auth),
            "/apis/authentication.k8s.io/v1",
            405,
            r#""kind": "Status""#.into(),
        ),
        (
            &["-X", "POST"],
            None,
            "/apis/authentication.k8s.io",
            403,
            forbidden("post", "/apis/authentication.k8s.io"),
        ),
    ];
    for (method, credential, path, want_code, want_body) in cases {
        let mut args: Vec<&str> = vec!["--http1.1"];
        args.extend_from_slice(method);
        if let Some(credential) = credential {
            args.extend(["-H", credential]);
        }
        let url = server.url(path);
        args.push(&url);
        let (body, code, _) = server.curl(&args);
        let case = format!("{method:?} {path} as {credential:?}: {body}");
        assert_eq!(code, want_code, "{case}");
        if method != ["-I"] {
            assert!(body.contains(&want_body), "{case}");
        }
    }
}

/// Another method than POST on a review path is authorized first, as kube-apiserver does it
/// (its filters run before go-restful routes): RBAC's resource 403 with the verb the
/// `RequestInfo` gives the method (`list` for GET and HEAD, `update`, `deletecollection`,
/// `patch`), for anonymous callers on both resources and for callers without a grant (default
/// RBAC grants only `create` on them outside `system:masters`); only a member of
/// `system:masters` gets go-restful's 405. (Answers recorded from kube-apiserver's handlers,
/// k8s.io/apiserver v0.37.2.)
#[tokio::test]
async fn other_methods_on_review_paths_are_authorized_first() {
    let server = start_with_tokens();
    let client = server.reqwest();
    let forbidden = |user: &str, verb: &str, resource: &str| {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": format!(
                "{resource}.authentication.k8s.io is forbidden: User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"authentication.k8s.io\" at the cluster scope"
            ),
            "reason": "Forbidden",
            "details": {"group": "authentication.k8s.io", "kind": resource},
            "code": 403
        })
    };
    let anonymous = "system:anonymous";
    let cases = [
        ("GET", None, TR, "list", "tokenreviews"),
        ("GET", None, SSR, "list", "selfsubjectreviews"),
        ("DELETE", None, TR, "deletecollection", "tokenreviews"),
        ("PUT", None, SSR, "update", "selfsubjectreviews"),
        ("PATCH", None, TR_BETA, "patch", "tokenreviews"),
        ("PUT", Some(JANE_TOKEN), TR, "update", "tokenreviews"),
        ("GET", Some(JANE_TOKEN), SSR, "list", "selfsubjectreviews"),
        (
            "DELETE",
            Some(JANE_TOKEN),
            SSR,
            "deletecollection",
            "selfsubjectreviews",
        ),
    ];
    for (method, token, path, verb, resource) in cases {
        let mut req = client.request(method.parse().unwrap(), server.url(path));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let resp = req.send().await.unwrap();
        let case = format!("{method} {path} as {token:?}");
        assert_eq!(resp.status(), 403, "{case}");
        assert_eq!(
            resp.headers()["x-content-type-options"],
            "nosniff",
            "{case}"
        );
        let user = if token.is_some() { "jane" } else { anonymous };
        let got: Value = resp.json().await.unwrap();
        assert_eq!(got, forbidden(user, verb, resource), "{case}");
    }
    // A `watch` query makes a GET a `watch`.
    let resp = client
        .get(server.url(&format!("{TR}?watch=1")))
        .send()
        .await
        .unwrap();
    let got: Value = resp.json().await.unwrap();
    assert_eq!(got, forbidden(anonymous, "watch", "tokenreviews"));
    // `system:masters` is allowed every verb: go-restful's 405.
    for (method, path) in [("GET", TR), ("PUT", SSR), ("DELETE", TR_BETA)] {
        let resp = client
            .request(method.parse().unwrap(), server.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 405, "{method} {path}");
        let got: Value = resp.json().await.unwrap();
        assert_eq!(got["reason"], "MethodNotAllowed", "{method} {path}");
    }
}

/// go-restful matches a route on the path with its trailing slashes trimmed (its
/// `CurlyRouter` with `TrimRightSlashEnabled`): a review path with one or more trailing
/// slashes (`%2F` too, once decoded) is the review, for every method; an empty segment inside
/// the path is not a route (kube-apiserver's answers, recorded from its handlers).
#[tokio::test]
async fn review_paths_match_with_trailing_slashes() {
    let server = start_with_tokens();
    let client = server.reqwest();
    let review = format!(r#"{{"spec":{{"token":"{JANE_TOKEN}"}}}}"#);
    for path in [
        format!("{TR}/"),
        format!("{TR}//"),
        format!("{TR}%2F"),
        format!("{TR}/?fieldValidation=Strict"),
        format!("{TR_BETA}/"),
    ] {
        let (code, _, got) = post(&client, &server, &path, &review).await;
        assert_eq!(code, 201, "{path}: {got}");
        assert_eq!(got["status"]["user"]["username"], "jane", "{path}");
    }
    let (code, _, got) = post(&client, &server, &format!("{SSR}/"), "{}").await;
    assert_eq!(code, 201, "{got}");
    assert_eq!(got["status"]["userInfo"]["username"], "admin", "{got}");
    // The create options are the review's.
    let (code, _, got) = post(&client, &server, &format!("{TR}/?dryRun=x"), &review).await;
    assert_eq!(code, 422, "{got}");
    // Another method: go-restful's 405 for system:masters.
    let resp = client
        .get(server.url(&format!("{TR}/")))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    // Not a trailing slash: no route.
    let path = "/apis/authentication.k8s.io/v1//tokenreviews";
    let (code, _, got) = post(&client, &server, path, &review).await;
    assert_eq!(code, 404, "{got}");
    assert_eq!(got["reason"], "NotFound", "{got}");
}

/// A JSON `null` where Go reads the zero value is that value in both reviews: an item of
/// `spec.audiences` (`[null]` is `[""]`, so a token of no audience is not authenticated, as in
/// kube-apiserver), of `status.audiences`, `groups` and an `extra` list, and the
/// SelfSubjectReview's `kind`, `apiVersion`, `metadata`, `status` and `userInfo`, in every
/// `fieldValidation` mode (answers recorded from kube-apiserver's handlers).
#[tokio::test]
async fn null_is_gos_zero_value_in_reviews() {
    let server = start_with_tokens();
    let client = server.reqwest();
    for mode in MODES {
        let (code, _, review) = post(
            &client,
            &server,
            &format!("{TR}{mode}"),
            &format!(r#"{{"spec":{{"token":"{JANE_TOKEN}","audiences":[null,"a"]}}}}"#),
        )
        .await;
        assert_eq!(code, 201, "{mode}: {review}");
        assert_eq!(review["spec"]["audiences"], json!(["", "a"]), "{mode}");
        assert_eq!(review["status"]["error"], "invalid bearer token", "{mode}");
        let (code, _, review) = post(
            &client,
            &server,
            &format!("{TR}{mode}"),
            &format!(
                r#"{{"spec":{{"token":"{JANE_TOKEN}"}},"status":{{"audiences":[null],"user":{{"groups":[null],"extra":{{"a":[null]}}}}}}}}"#
            ),
        )
        .await;
        assert_eq!(code, 201, "{mode}: {review}");
        assert_eq!(review["status"]["user"]["username"], "jane", "{mode}");
        for body in [
            r#"{"metadata":null}"#,
            r#"{"kind":null}"#,
            r#"{"apiVersion":null}"#,
            r#"{"status":null}"#,
            r#"{"status":{"userInfo":null}}"#,
            r#"{"status":{"userInfo":{"username":null,"groups":[null],"extra":{"a":[null]}}}}"#,
        ] {
            let (code, _, review) = post(&client, &server, &format!("{SSR}{mode}"), body).await;
            assert_eq!(code, 201, "{mode} {body}: {review}");
            assert_eq!(review["status"]["userInfo"]["username"], "admin", "{body}");
        }
    }
}

/// A 400 for a body whose kind cannot be read summarises the body as received, as Go's
/// `summarizeData` does: its first 30 bytes (not those of the body with each byte that is not
/// UTF-8 already made U+FFFD), each such byte, and each byte of a character the cut splits,
/// one U+FFFD (kube-apiserver's answers, recorded from its handlers).
#[tokio::test]
async fn a_400_summarises_the_body_as_received() {
    let server = start_with_tokens();
    let client = server.reqwest();
    let prefix = "the object provided is unrecognized (must be of type SelfSubjectReview): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string";
    let mut invalid = br#"{"kind":5,"x":""#.to_vec();
    invalid.extend_from_slice(b"\xff\xfe\xfd\xfc");
    invalid.extend_from_slice(&[b'a'; 20]);
    invalid.extend_from_slice(b"\"}");
    let cases = [
        (
            format!(r#"{{"kind":5,"x":"{}€€€€"}}"#, "a".repeat(13)).into_bytes(),
            format!(
                r#"{prefix} ({{"kind":5,"x":"{}{} ...)"#,
                "a".repeat(13),
                "\u{fffd}".repeat(2)
            ),
        ),
        (
            invalid,
            format!(
                r#"{prefix} ({{"kind":5,"x":"{}{} ...)"#,
                "\u{fffd}".repeat(4),
                "a".repeat(11)
            ),
        ),
        (
            br#"{"kind":5,"x":"\ud800aaaaaaaaaaaaaaaaaaaa"}"#.to_vec(),
            format!(r#"{prefix} ({{"kind":5,"x":"\ud800aaaaaaaaa ...)"#),
        ),
    ];
    for (body, want) in cases {
        let resp = client
            .post(server.url(SSR))
            .bearer_auth(ADMIN_TOKEN)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{body:?}");
        let status: Value = resp.json().await.unwrap();
        assert_eq!(status["message"], want, "{body:?}");
    }
}

/// A TokenReview body holds the token under review, so a 400 on that endpoint does not show
/// the start of the body as kube-apiserver's `summarizeData` does (about 12 bytes of the token
/// for the body below, or its hex): the text is Go's with `<N bytes, not shown>` in place of
/// the summary (`<empty>` stays). A SelfSubjectReview body holds nothing secret: its 400 keeps
/// Go's summary.
#[tokio::test]
async fn a_token_review_400_does_not_show_the_body() {
    let server = start_with_tokens();
    let client = server.reqwest();
    let secret = br#"{"spec":{"token":"SECRETSECRETSECRET"},"kind":5}"#;
    let prefix = |kind: &str| {
        format!(
            "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: "
        )
    };
    let kind_error = "json: cannot unmarshal number into Go struct field .kind of type string";
    let array_error = "json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }";
    let hex = br#"["SECRETSECRETSECRETSECRETSECRET"]"#;
    let cases: [(&str, &[u8], String); 6] = [
        (
            TR,
            secret,
            format!(
                "{}{kind_error} (<48 bytes, not shown>)",
                prefix("TokenReview")
            ),
        ),
        (
            TR_BETA,
            secret,
            format!(
                "{}{kind_error} (<48 bytes, not shown>)",
                prefix("TokenReview")
            ),
        ),
        (
            TR,
            hex,
            format!(
                "{}{array_error} (<34 bytes, not shown>)",
                prefix("TokenReview")
            ),
        ),
        (
            TR,
            b"",
            format!(
                "{}unexpected end of JSON input (<empty>)",
                prefix("TokenReview")
            ),
        ),
        (
            SSR,
            secret,
            format!(
                r#"{}{kind_error} ({{"spec":{{"token":"SECRETSECRET ...)"#,
                prefix("SelfSubjectReview")
            ),
        ),
        (
            SSR,
            hex,
            format!(
                "{}{array_error} ({} ...)",
                prefix("SelfSubjectReview"),
                hex[..30]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ),
        ),
    ];
    for (path, body, want) in cases {
        let resp = client
            .post(server.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{path}");
        let status: Value = resp.json().await.unwrap();
        assert_eq!(status["message"], want, "{path}");
        if path != SSR {
            assert!(!status.to_string().contains("SECRET"), "{status}");
            assert!(!status.to_string().contains("534543524554"), "{status}");
        }
    }
}

/// kube-apiserver's request-deadline filter runs before authentication on every path that is
/// not long-running: a `timeout` query parameter Go cannot parse is its 400 for every caller
/// (anonymous, a bad credential, a good one), with `time.ParseDuration`'s text; a `watch` is
/// long-running, so its `timeout` is not read (answers recorded from kube-apiserver's filter).
#[tokio::test]
async fn a_bad_timeout_is_refused_before_authentication() {
    let server = start_with_tokens();
    let client = server.reqwest();
    let bad = |value: &str| {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": format!("invalid timeout specified in the request URL - time: {value}"),
            "reason": "BadRequest",
            "code": 400
        })
    };
    let cases = [
        (
            "GET",
            "/healthz?timeout=x",
            None,
            bad(r#"invalid duration "x""#),
        ),
        (
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews?timeout=x",
            Some("not-a-known-token"),
            bad(r#"invalid duration "x""#),
        ),
        (
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews?timeout=%22%3C",
            Some(ADMIN_TOKEN),
            bad(r#"invalid duration "\"<""#),
        ),
        (
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews?dryRun=x&timeout=1",
            None,
            bad(r#"missing unit in duration "1""#),
        ),
        (
            "GET",
            "/nope?timeout=%FF",
            Some(JANE_TOKEN),
            bad(r#"invalid duration "\xff""#),
        ),
    ];
    for (method, path, token, want) in cases {
        let mut req = client
            .request(method.parse().unwrap(), server.url(path))
            .header("content-type", "application/json")
            .body("{}");
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let resp = req.send().await.unwrap();
        let case = format!("{method} {path} as {token:?}");
        assert_eq!(resp.status(), 400, "{case}");
        assert_eq!(
            resp.headers()["cache-control"],
            "no-cache, private",
            "{case}"
        );
        assert_eq!(resp.headers()["content-type"], "application/json", "{case}");
        let got: Value = resp.json().await.unwrap();
        assert_eq!(got, want, "{case}");
    }
    // A watch is long-running: the filter does not read its timeout.
    let resp = client
        .get(server.url(&format!("{TR}?watch=1&timeout=x")))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    // Only the first value counts, and a pair with `;` is no pair (Go's `url.ParseQuery`).
    for query in ["timeout=1m&timeout=x", "timeout=x;y=1"] {
        let (code, _, review) = post(
            &client,
            &server,
            &format!("{TR}?{query}"),
            &format!(r#"{{"spec":{{"token":"{JANE_TOKEN}"}}}}"#),
        )
        .await;
        assert_eq!(code, 201, "{query}: {review}");
    }
}

/// Go's JSON scanner stops at 10 000 levels of nesting (`maxNestingDepth`): a review body
/// nested that deep is read, one level more is the meta factory's 400, in every
/// `fieldValidation` mode (kube-apiserver's answers, recorded from its handlers).
#[tokio::test]
async fn json_nested_beyond_10000_levels_is_gos_400() {
    let server = start_with_tokens();
    let client = server.reqwest();
    // `levels` arrays and objects in all, the review object included.
    let review = |levels: usize| {
        format!(
            r#"{{"spec":{{"token":"{JANE_TOKEN}"}},"x":{}{}}}"#,
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    let (code, _, got) = post(&client, &server, TR, &review(10_000)).await;
    assert_eq!(code, 201, "{got}");
    assert_eq!(got["status"]["user"]["username"], "jane");
    let depth =
        "couldn't get version/kind; json parse error: invalid character '[' exceeded max depth";
    for mode in MODES {
        let (code, _, got) = post(&client, &server, &format!("{TR}{mode}"), &review(10_001)).await;
        assert_eq!(code, 400, "{mode}: {got}");
        assert_eq!(
            got["message"],
            format!(
                "the object provided is unrecognized (must be of type TokenReview): {depth} (<20058 bytes, not shown>)"
            ),
            "{mode}"
        );
    }
    let ssr = |levels: usize| {
        format!(
            r#"{{"x":{}1{}}}"#,
            r#"{"a":"#.repeat(levels - 1),
            "}".repeat(levels - 1)
        )
    };
    let (code, _, got) = post(&client, &server, SSR, &ssr(10_000)).await;
    assert_eq!(code, 201, "{got}");
    let (code, _, got) = post(&client, &server, SSR, &ssr(10_001)).await;
    assert_eq!(code, 400, "{got}");
    assert_eq!(
        got["message"],
        r#"the object provided is unrecognized (must be of type SelfSubjectReview): couldn't get version/kind; json parse error: invalid character '{' exceeded max depth ({"x":{"a":{"a":{"a":{"a":{"a": ...)"#
    );
}

// Bodies that declare another version than the endpoint's: Go decodes a body into the type
// of the version it declares (`v1beta1.TokenReviewSpec`, the internal
// `authentication.TokenReview` whose fields have no JSON names), so type errors, unknown
// fields and warnings name that type, before the version check refuses it. The expected
// texts were printed by kube-apiserver 1.37.2's own create handler (`handlers.CreateResource`
// with `legacyscheme.Codecs`, the TokenReview and SelfSubjectReview storage, the warning
// recorder; Go 1.26).

/// One request and kube-apiserver's answer: the 400's message (`None`: a 201) and the
/// `Warning` texts.
struct Case {
    path: &'static str,
    body: &'static str,
    message: Option<&'static str>,
    warnings: &'static [&'static str],
}

const MISMATCH_V1: &str = "the API version in the data (authentication.k8s.io/__internal) does not match the expected API version (authentication.k8s.io/v1)";

/// A body is decoded as the type its `apiVersion` declares (a versioned type, or the internal
/// one, with Go field names matched case-sensitively and `metav1.ObjectMeta`'s promoted), in
/// every `fieldValidation` mode the case names.
#[tokio::test]
async fn bodies_are_decoded_as_the_version_they_declare() {
    let server = start_with_tokens();
    let client = server.reqwest();
    let cases = [
        Case {
            path: TR,
            body: r#"{"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview","spec":"x"}"#,
            message: Some(
                r#"TokenReview in version "v1beta1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field TokenReview.spec of type v1beta1.TokenReviewSpec"#,
            ),
            warnings: &[],
        },
        Case {
            path: TR,
            body: r#"{"apiVersion":"authentication.k8s.io/v1beta1","kind":"TokenReview","status":{"user":{"extra":"x"}}}"#,
            message: Some(
                r#"TokenReview in version "v1beta1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field UserInfo.status.user.extra of type map[string]v1beta1.ExtraValue"#,
            ),
            warnings: &[],
        },
        Case {
            path: TR_BETA,
            body: r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":"x"}"#,
            message: Some(
                r#"TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field TokenReview.spec of type v1.TokenReviewSpec"#,
            ),
            warnings: &[],
        },
        Case {
            path: TR_BETA,
            body: r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"user":{"extra":{"a":"b"}}}}"#,
            message: Some(
                r#"TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field UserInfo.status.user.extra of type v1.ExtraValue"#,
            ),
            warnings: &[],
        },
        Case {
            path: SSR,
            body: r#"{"apiVersion":"authentication.k8s.io/v1beta1","kind":"SelfSubjectReview","status":"x"}"#,
            message: Some(
                r#"SelfSubjectReview in version "v1beta1" cannot be handled as a SelfSubjectReview: json: cannot unmarshal string into Go struct field SelfSubjectReview.status of type v1beta1.SelfSubjectReviewStatus"#,
            ),
            warnings: &[],
        },
        Case {
            path: SSR,
            body: r#"{"apiVersion":"authentication.k8s.io/v1alpha1","kind":"SelfSubjectReview","status":"x"}"#,
            message: Some(
                r#"SelfSubjectReview in version "v1alpha1" cannot be handled as a SelfSubjectReview: json: cannot unmarshal string into Go struct field SelfSubjectReview.status of type v1alpha1.SelfSubjectReviewStatus"#,
            ),
            warnings: &[],
        },
        Case {
            path: SSR,
            body: r#"{"apiVersion":"authentication.k8s.io/v1alpha1","kind":"SelfSubjectReview","status":{"userInfo":{"extra":"x"}}}"#,
            message: Some(
                r#"SelfSubjectReview in version "v1alpha1" cannot be handled as a SelfSubjectReview: json: cannot unmarshal string into Go struct field UserInfo.status.userInfo.extra of type map[string]v1.ExtraValue"#,
            ),
            warnings: &[],
        },
        Case {
            path: "/apis/authentication.k8s.io/v1/selfsubjectreviews?fieldValidation=Strict",
            body: r#"{"apiVersion":"authentication.k8s.io/v1alpha1","kind":"SelfSubjectReview","status":{"x":1}}"#,
            message: Some(
                r#"SelfSubjectReview in version "v1alpha1" cannot be handled as a SelfSubjectReview: strict decoding error: unknown field "status.x""#,
            ),
            warnings: &[],
        },
        Case {
            path: "/apis/authentication.k8s.io/v1/selfsubjectreviews?fieldValidation=Strict",
            body: r#"{"apiVersion":"authentication.k8s.io/v1beta1","kind":"SelfSubjectReview","status":{"userInfo":{"x":1}}}"#,
            message: Some(
                r#"SelfSubjectReview in version "v1beta1" cannot be handled as a SelfSubjectReview: strict decoding error: unknown field "status.userInfo.x""#,
            ),
            warnings: &[],
        },
        // The internal types.
        Case {
            path: "/apis/authentication.k8s.io/v1/tokenreviews?fieldValidation=Strict",
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","spec":{"token":"good"}}"#,
            message: Some(
                r#"TokenReview in version "__internal" cannot be handled as a TokenReview: strict decoding error: unknown field "spec""#,
            ),
            warnings: &[],
        },
        Case {
            path: TR,
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","metadata":{},"spec":{"token":"good"}}"#,
            message: Some(MISMATCH_V1),
            warnings: &[r#"unknown field \"metadata\""#, r#"unknown field \"spec\""#],
        },
        Case {
            path: TR,
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","Spec":"x"}"#,
            message: Some(
                r#"TokenReview in version "__internal" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field TokenReview.Spec of type authentication.TokenReviewSpec"#,
            ),
            warnings: &[],
        },
        Case {
            path: "/apis/authentication.k8s.io/v1/tokenreviews?fieldValidation=Strict",
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","name":"a","Spec":{"Token":"x","token":1},"Status":{"User":{"Extra":{"a":["b"]}}}}"#,
            message: Some(
                r#"TokenReview in version "__internal" cannot be handled as a TokenReview: strict decoding error: unknown field "Spec.token""#,
            ),
            warnings: &[],
        },
        Case {
            path: "/apis/authentication.k8s.io/v1/tokenreviews?fieldValidation=Strict",
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","name":"a","Spec":{"Token":"x"}}"#,
            message: Some(MISMATCH_V1),
            warnings: &[],
        },
        Case {
            path: "/apis/authentication.k8s.io/v1/tokenreviews?fieldValidation=Strict",
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","ownerReferences":[{"x":1}],"Status":{"User":{"username":"a"},"Error":"e"}}"#,
            message: Some(
                r#"TokenReview in version "__internal" cannot be handled as a TokenReview: strict decoding error: unknown field "ownerReferences[0].x", unknown field "Status.User.username""#,
            ),
            warnings: &[],
        },
        Case {
            path: TR_BETA,
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","Status":{"User":{"Extra":{"a":"b"}}}}"#,
            message: Some(
                r#"TokenReview in version "__internal" cannot be handled as a TokenReview: json: cannot unmarshal string into Go struct field UserInfo.Status.User.Extra of type authentication.ExtraValue"#,
            ),
            warnings: &[],
        },
        Case {
            path: TR,
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","x":1,"x":2}"#,
            message: Some(MISMATCH_V1),
            warnings: &[r#"unknown field \"x\""#],
        },
        Case {
            path: "/apis/authentication.k8s.io/v1/tokenreviews?fieldValidation=Ignore",
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"TokenReview","x":1e400}"#,
            message: Some(MISMATCH_V1),
            warnings: &[],
        },
        Case {
            path: "/apis/authentication.k8s.io/v1/selfsubjectreviews?fieldValidation=Strict",
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"SelfSubjectReview","status":{}}"#,
            message: Some(
                r#"SelfSubjectReview in version "__internal" cannot be handled as a SelfSubjectReview: strict decoding error: unknown field "status""#,
            ),
            warnings: &[],
        },
        Case {
            path: SSR,
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"SelfSubjectReview","Status":{"UserInfo":{"Groups":"g"}}}"#,
            message: Some(
                r#"SelfSubjectReview in version "__internal" cannot be handled as a SelfSubjectReview: json: cannot unmarshal string into Go struct field UserInfo.Status.UserInfo.Groups of type []string"#,
            ),
            warnings: &[],
        },
        Case {
            path: SSR,
            body: r#"{"apiVersion":"authentication.k8s.io/__internal","kind":"SelfSubjectReview","metadata":{},"Status":{"UserInfo":{"groups":[]},"userInfo":1},"Status":{}}"#,
            message: Some(MISMATCH_V1),
            warnings: &[
                r#"unknown field \"metadata\""#,
                r#"unknown field \"Status.UserInfo.groups\""#,
                r#"unknown field \"Status.userInfo\""#,
                r#"duplicate field \"Status\""#,
            ],
        },
        // A kind beyond f64's range is a number, of the wrong type.
        Case {
            path: SSR,
            body: r#"{"kind":1e400,"apiVersion":"authentication.k8s.io/v1"}"#,
            message: Some(
                r#"the object provided is unrecognized (must be of type SelfSubjectReview): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"kind":1e400,"apiVersion":"au ...)"#,
            ),
            warnings: &[],
        },
        // A warning with a control character (a tab in a duplicate owner reference's UID) is
        // not sent.
        Case {
            path: SSR,
            body: r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"a\tb"},{"apiVersion":"v1","kind":"Pod","name":"p","uid":"a\tb"}]},"x":1}"#,
            message: None,
            warnings: &[r#"unknown field \"x\""#],
        },
    ];
    for case in cases {
        let (code, warnings, answer) = post(&client, &server, case.path, case.body).await;
        match case.message {
            Some(message) => {
                assert_eq!(code, 400, "{}: {answer}", case.body);
                assert_eq!(answer["message"], message, "{}", case.body);
            }
            None => assert_eq!(code, 201, "{}: {answer}", case.body),
        }
        let want: Vec<String> = case
            .warnings
            .iter()
            .map(|w| format!("299 - \"{w}\""))
            .collect();
        assert_eq!(warnings, want, "{}", case.body);
    }
}
