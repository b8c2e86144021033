//! API discovery for the one group the server serves, so that clients that map kinds to paths
//! through discovery (`kubectl create -f tokenreview.yaml`, client-go's REST mapper) find
//! `TokenReview` and `SelfSubjectReview`. `kubectl auth whoami` needs none of it.
//!
//! The documents are kube-apiserver's legacy discovery (k8s.io/apiserver
//! `pkg/endpoints/discovery`: `root.go`, `group.go`, `version.go`) restricted to what this
//! server answers:
//!
//! * `GET /apis` → `APIGroupList` with `authentication.k8s.io`;
//! * `GET /apis/authentication.k8s.io` (and `…/`) → `APIGroup`;
//! * `GET /apis/authentication.k8s.io/v1` → `APIResourceList`: `selfsubjectreviews` and
//!   `tokenreviews`, cluster-scoped, verb `create` (the installer's order: sorted by name;
//!   also with trailing slashes, as for every version document);
//! * `GET /apis/authentication.k8s.io/v1beta1` → `APIResourceList`: `tokenreviews` (served for
//!   webhooks configured with `--authentication-token-webhook-version=v1beta1`).
//!
//! `/api` (the core group) stays a 404, which client-go's discovery accepts. Always JSON: a
//! client asking for aggregated discovery (`application/json;g=apidiscovery.k8s.io;v=v2;…`,
//! as kubectl does) with `application/json` as its fallback gets the legacy form, which is what
//! client-go does with a server that has no aggregated discovery.

use serde::Serialize;

/// The group this server serves.
const GROUP: &str = "authentication.k8s.io";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupVersion {
    group_version: &'static str,
    version: &'static str,
}

const V1: GroupVersion = GroupVersion {
    group_version: "authentication.k8s.io/v1",
    version: "v1",
};
const V1BETA1: GroupVersion = GroupVersion {
    group_version: "authentication.k8s.io/v1beta1",
    version: "v1beta1",
};

/// metav1 `APIGroup`, members in Go's field order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiGroup {
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_version: Option<&'static str>,
    name: &'static str,
    versions: [GroupVersion; 2],
    preferred_version: GroupVersion,
}

fn group(typed: bool) -> ApiGroup {
    ApiGroup {
        kind: typed.then_some("APIGroup"),
        api_version: typed.then_some("v1"),
        name: GROUP,
        versions: [V1, V1BETA1],
        preferred_version: V1,
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiGroupList {
    kind: &'static str,
    api_version: &'static str,
    groups: [ApiGroup; 1],
}

/// metav1 `APIResource`, members in Go's field order (the empty optional ones omitted, as Go
/// omits them).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiResource {
    name: &'static str,
    singular_name: &'static str,
    namespaced: bool,
    kind: &'static str,
    verbs: [&'static str; 1],
}

const SELF_SUBJECT_REVIEWS: ApiResource = ApiResource {
    name: "selfsubjectreviews",
    singular_name: "selfsubjectreview",
    namespaced: false,
    kind: "SelfSubjectReview",
    verbs: ["create"],
};
const TOKEN_REVIEWS: ApiResource = ApiResource {
    name: "tokenreviews",
    singular_name: "tokenreview",
    namespaced: false,
    kind: "TokenReview",
    verbs: ["create"],
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiResourceList {
    kind: &'static str,
    api_version: &'static str,
    group_version: &'static str,
    resources: Vec<ApiResource>,
}

/// One of the discovery documents (serialized as the document itself).
#[derive(Serialize)]
#[serde(untagged)]
pub enum Document {
    Groups(ApiGroupList),
    Group(ApiGroup),
    Resources(ApiResourceList),
}

/// The version documents' paths: go-restful routes, which match a path with its trailing
/// slashes trimmed (`CurlyRouter`, `TrimRightSlashEnabled`), so the caller trims them first.
pub const VERSION_PATHS: [&str; 2] = [
    "/apis/authentication.k8s.io/v1",
    "/apis/authentication.k8s.io/v1beta1",
];

/// The document served at `path`, if it is one of those above. `/apis/` is `/apis`, and
/// `/apis/authentication.k8s.io/` the group, as kube-aggregator's mux serves both paths of
/// each (`Handle(groupPath, …)`, `UnlistedHandle(groupPath+"/", …)`), exactly: one more slash
/// is no document. A version path is looked up with its trailing slashes trimmed
/// ([`VERSION_PATHS`]).
pub fn document(path: &str) -> Option<Document> {
    Some(match path {
        "/apis" | "/apis/" => Document::Groups(ApiGroupList {
            kind: "APIGroupList",
            api_version: "v1",
            groups: [group(false)],
        }),
        "/apis/authentication.k8s.io" | "/apis/authentication.k8s.io/" => {
            Document::Group(group(true))
        }
        "/apis/authentication.k8s.io/v1" => Document::Resources(ApiResourceList {
            kind: "APIResourceList",
            api_version: "v1",
            group_version: V1.group_version,
            resources: vec![SELF_SUBJECT_REVIEWS, TOKEN_REVIEWS],
        }),
        "/apis/authentication.k8s.io/v1beta1" => Document::Resources(ApiResourceList {
            kind: "APIResourceList",
            api_version: "v1",
            group_version: V1BETA1.group_version,
            resources: vec![TOKEN_REVIEWS],
        }),
        _ => return None,
    })
}

/// Whether a caller allowed to read discovery gets the document for `method`: any method on
/// `/apis` and on the group (kube-aggregator's `apisHandler` and `apiGroupHandler` ignore the
/// method), GET on the versions (go-restful's routes; others 405).
pub fn serves(path: &str, method: &http::Method) -> bool {
    method == http::Method::GET
        || matches!(
            path,
            "/apis" | "/apis/" | "/apis/authentication.k8s.io" | "/apis/authentication.k8s.io/"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documents byte for byte. The expected texts are what kube-apiserver v1.37 writes for
    /// the same group, versions and resources (its `serverAddressByClientCIDRs` left out:
    /// docs/compatibility.md).
    #[test]
    fn documents_are_kube_apiservers() {
        let cases = [
            (
                "/apis",
                r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"authentication.k8s.io","versions":[{"groupVersion":"authentication.k8s.io/v1","version":"v1"},{"groupVersion":"authentication.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"authentication.k8s.io/v1","version":"v1"}}]}"#,
            ),
            (
                "/apis/authentication.k8s.io",
                r#"{"kind":"APIGroup","apiVersion":"v1","name":"authentication.k8s.io","versions":[{"groupVersion":"authentication.k8s.io/v1","version":"v1"},{"groupVersion":"authentication.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"authentication.k8s.io/v1","version":"v1"}}"#,
            ),
            (
                "/apis/authentication.k8s.io/v1",
                r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"authentication.k8s.io/v1","resources":[{"name":"selfsubjectreviews","singularName":"selfsubjectreview","namespaced":false,"kind":"SelfSubjectReview","verbs":["create"]},{"name":"tokenreviews","singularName":"tokenreview","namespaced":false,"kind":"TokenReview","verbs":["create"]}]}"#,
            ),
            (
                "/apis/authentication.k8s.io/v1beta1",
                r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"authentication.k8s.io/v1beta1","resources":[{"name":"tokenreviews","singularName":"tokenreview","namespaced":false,"kind":"TokenReview","verbs":["create"]}]}"#,
            ),
        ];
        for (path, want) in cases {
            let doc = document(path).unwrap();
            let got = kube_authn::api::to_go_json(&doc, false).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                format!("{want}\n"),
                "{path}"
            );
            let pretty = kube_authn::api::to_go_json(&doc, true).unwrap();
            let reparsed: serde_json::Value = serde_json::from_slice(&pretty).unwrap();
            assert_eq!(
                reparsed,
                serde_json::from_str::<serde_json::Value>(want).unwrap()
            );
        }
        for (path, same_as) in [("/apis/", 0), ("/apis/authentication.k8s.io/", 1)] {
            let slash = kube_authn::api::to_go_json(&document(path).unwrap(), false).unwrap();
            assert_eq!(
                String::from_utf8(slash).unwrap(),
                format!("{}\n", cases[same_as].1),
                "{path}"
            );
        }
        for path in [
            "/api",
            "/apis//",
            "/apis/authentication.k8s.io//",
            "/apis/authentication.k8s.io/v2",
            "/apis/x",
        ] {
            assert!(document(path).is_none(), "{path}");
        }
        use http::Method;
        for (path, method, want) in [
            ("/apis", Method::GET, true),
            ("/apis", Method::POST, true),
            ("/apis/", Method::DELETE, true),
            ("/apis/authentication.k8s.io", Method::GET, true),
            ("/apis/authentication.k8s.io", Method::POST, true),
            ("/apis/authentication.k8s.io/", Method::PUT, true),
            ("/apis/authentication.k8s.io/v1", Method::POST, false),
            ("/apis/authentication.k8s.io/v1", Method::HEAD, false),
        ] {
            assert_eq!(serves(path, &method), want, "{method} {path}");
        }
    }
}
