//! End-to-end tests of `kube-authn serve`'s review texts against kube-apiserver's answers for
//! bodies that declare another version than the endpoint's: Go decodes a body into the type
//! of the version it declares (`v1beta1.TokenReviewSpec`, the internal
//! `authentication.TokenReview` whose fields have no JSON names), so type errors, unknown
//! fields and warnings name that type, before the version check refuses it. The expected
//! texts were printed by kube-apiserver 1.37.2's own create handler
//! (`handlers.CreateResource` with `legacyscheme.Codecs`, the TokenReview and
//! SelfSubjectReview storage, the warning recorder; Go 1.26); no Go toolchain is needed to run
//! these tests.
#![cfg(feature = "server")]

mod serve_support;

use serde_json::Value;
use serve_support::*;

const ADMIN_TOKEN: &str = "f3a9c1d2e4b5a6978877665544332211";

const TR: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const TR_BETA: &str = "/apis/authentication.k8s.io/v1beta1/tokenreviews";
const SSR: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// The server with a token file: `admin` in system:masters.
fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.csv"),
        format!("{ADMIN_TOKEN},admin,1,\"system:masters\"\n"),
    )
    .unwrap();
    let args = vec![format!(
        "--token-auth-file={}",
        dir.path().join("tokens.csv").display()
    )];
    Server::spawn(dir, &args)
}

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
    let server = start();
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
