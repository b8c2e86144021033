//! The API the server answers, behind the authentication middleware:
//!
//! * `POST /apis/authentication.k8s.io/v1/selfsubjectreviews` → 201 SelfSubjectReview
//!   (`kubectl auth whoami`);
//! * `POST /apis/authentication.k8s.io/{v1,v1beta1}/tokenreviews` → 201 TokenReview, with
//!   kube-apiserver's semantics (`pkg/registry/authentication/tokenreview/storage.go`): the
//!   token runs through the full request chain with `spec.audiences` (or the API audiences);
//! * `/healthz`, `/livez`, `/readyz` → `ok`, or each check with `?verbose` (any method;
//!   anonymous callers GET only), and `/healthz/ping`, `/healthz/log`, … → `ok` (authenticated
//!   callers: [`health`]); `/metrics` → Prometheus text (any method), as their Go handlers
//!   answer.
//! * `GET /apis`, `/apis/authentication.k8s.io`, `…/v1`, `…/v1beta1` (with trailing slashes:
//!   go-restful trims them) → legacy discovery ([`crate::discovery`]), for authenticated
//!   callers.
//!
//! Routes match the percent-decoded path, as Go's `req.URL.Path`; a bad escape is Go's 400.
//!
//! Both reviews need an authenticated, non-anonymous caller (kube-apiserver's default RBAC
//! gives anonymous neither), and a TokenReview caller must be in one of
//! `--token-review-groups` (default RBAC grants it to `system:masters` and the
//! `system:auth-delegator` binding only); others get kube-apiserver's 403 text. Another
//! method on a review path is RBAC's 403 for its verb (`list`, `update`, …) to all but
//! members of `system:masters`, who get go-restful's 405. Bad bodies get a `Status` 400,
//! oversized ones a 413, slow ones a 504 (`--request-timeout`, or a shorter `?timeout=`:
//! [`crate::request_deadline`]); past `--max-mutating-requests-inflight` reviews get a 429. The create options (`dryRun`,
//! `fieldManager`, `fieldValidation`) are validated as kube-apiserver validates them, and
//! unknown or repeated body fields are reported as its `fieldValidation` says (see
//! [`crate::create_options`]). Nothing here can panic on input.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use kube_authn::api::{
    OwnerReference, SelfSubjectReview, Status, StatusCause, StatusDetails, TokenReview,
    UserInfo as ApiUserInfo,
};
use kube_authn::chain::Chain;
use kube_authn::jwt::json::go_lone_surrogates;
use kube_authn::middleware::{Authenticated, wants_pretty};
use kube_authn::user::{SYSTEM_PRIVILEGED_GROUP, UserInfo};
use kube_authn::{Audiences, Context, RequestAuthenticator};

use crate::create_options::{self, FieldValidation, StrictErrors};

mod health;
mod kind;
mod legacy_scheme;
mod media;

use kind::{Gvk, Interpreted, Refusal};
use media::{Media, media_type};

/// kube-apiserver's request body limit (3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Server state shared by every request.
pub struct App {
    /// The chain TokenReview tokens are checked with: the server's chain without anonymous
    /// ([`Chain::without_anonymous`]), so that a review never vouches for a token as
    /// `system:anonymous`. (Callers are authenticated by the middleware, with the full chain.)
    pub review_chain: Chain,
    /// `--api-audiences`.
    pub api_audiences: Audiences,
    /// `--token-review-groups`: who may create TokenReviews.
    pub token_review_groups: Vec<String>,
    /// `--request-timeout`: how long a review's body may take to arrive (when the request
    /// carries no [`crate::request_deadline::Deadline`]).
    pub request_timeout: std::time::Duration,
    /// `--max-mutating-requests-inflight` (`None`: no limit): reviews being answered.
    pub inflight: Option<Arc<tokio::sync::Semaphore>>,
    /// Renders `/metrics`.
    pub metrics: Arc<dyn Fn(&mut String) + Send + Sync>,
}

/// JSON as kube-apiserver writes it: compact with a trailing newline, or indented without one,
/// with Go's escapes ([`kube_authn::api::to_go_json`]).
fn json_response(
    code: StatusCode,
    value: &impl serde::Serialize,
    pretty: bool,
) -> Response<Full<Bytes>> {
    let body = kube_authn::api::to_go_json(value, pretty).unwrap_or_else(|_| b"{}".to_vec());
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = code;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn status(
    code: StatusCode,
    reason: &str,
    message: impl Into<String>,
    pretty: bool,
) -> Response<Full<Bytes>> {
    json_response(
        code,
        &Status::failure(code.as_u16(), reason, message),
        pretty,
    )
}

/// A `Status` with `details`, for the reasons kube-apiserver sends them with (its error
/// constructors fill them: `{}` when there is no object, group and kind for a resource).
fn status_with_details(
    code: StatusCode,
    reason: &str,
    message: impl Into<String>,
    details: StatusDetails,
    pretty: bool,
) -> Response<Full<Bytes>> {
    json_response(
        code,
        &Status::failure(code.as_u16(), reason, message).with_details(details),
        pretty,
    )
}

/// kube-apiserver's 504 from its timeout filter (`WithTimeoutForNonLongRunningRequests`,
/// k8s.io/apiserver v0.37.2 `server/filters/timeout.go`), which answers once the request's
/// deadline has passed while the create handler still reads the body, byte for byte: its
/// `NewTimeoutError("request did not complete within the allotted timeout", 0)` `Status` without
/// its type (`NewTimeoutError` sets none, and the filter encodes it as it is), with
/// `details: {}`, and the content type Go's server sniffs from the body. (The finisher's
/// `… within requested timeout - context deadline exceeded` comes only after the body was read.)
fn request_timeout() -> Response<Full<Bytes>> {
    let mut timeout = Status::failure(
        504,
        "Timeout",
        "Timeout: request did not complete within the allotted timeout",
    )
    .with_details(StatusDetails::default());
    timeout.kind.clear();
    timeout.api_version.clear();
    let mut response = json_response(StatusCode::GATEWAY_TIMEOUT, &timeout, false);
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// kube-apiserver's create handler: a body of another API version than the endpoint's is a
/// 400 (`apiVersion` left out is the endpoint's own).
fn api_version_mismatch(
    api_version: &str,
    version: &str,
    pretty: bool,
) -> Option<Response<Full<Bytes>>> {
    let expected = format!("authentication.k8s.io/{version}");
    (!api_version.is_empty() && api_version != expected).then(|| {
        status(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            format!(
                "the API version in the data ({api_version}) does not match the expected API version ({expected})"
            ),
            pretty,
        )
    })
}

/// A plain-text answer as Go's `http.Error` writes it (and `handleRootHealth` too):
/// `text/plain; charset=utf-8`, `X-Content-Type-Options: nosniff`.
pub(super) fn plain_nosniff(code: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = code;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The user name as kube-apiserver's 403 text names it: Go's `%q`, then the `&`, `<`, `>`
/// HTML entities its `ForbiddenStatusError` puts over the whole message.
fn forbidden_user(name: &str) -> String {
    html_entities(&kube_authn::jwt::go_quote(name))
}

/// kube-apiserver's `responsewriters.Forbidden`: the 403 `Status`, with the
/// `X-Content-Type-Options: nosniff` its `RespondWithError` sets.
fn forbidden_status(
    message: String,
    details: StatusDetails,
    pretty: bool,
) -> Response<Full<Bytes>> {
    let mut response =
        status_with_details(StatusCode::FORBIDDEN, "Forbidden", message, details, pretty);
    response.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The user a 403 names: the caller (a front-proxy user in `system:unauthenticated` only is
/// named as it is, as RBAC names it), or `system:anonymous` for a request nobody authenticated.
fn caller_or_anonymous(user: Option<Arc<UserInfo>>) -> Arc<UserInfo> {
    user.unwrap_or_else(UserInfo::anonymous)
}

fn forbidden(user: &UserInfo, resource: &str, pretty: bool) -> Response<Full<Bytes>> {
    forbidden_status(
        format!(
            "{resource}.authentication.k8s.io is forbidden: User {} cannot create resource \"{resource}\" in API group \"authentication.k8s.io\" at the cluster scope",
            forbidden_user(user.name())
        ),
        StatusDetails {
            group: "authentication.k8s.io".into(),
            kind: resource.into(),
            ..StatusDetails::default()
        },
        pretty,
    )
}

/// Whether kube-apiserver's `RequestInfoFactory` reads the (decoded) `path` as a resource
/// request: `/api/<version>/<…>` or `/apis/<group>/<version>/<…>` (empty segments from
/// leading and trailing slashes trimmed first, as its `splitPath` does).
pub(crate) fn resource_form(path: &[u8]) -> bool {
    let trimmed = {
        let start = path.iter().position(|&b| b != b'/').unwrap_or(path.len());
        let end = path
            .iter()
            .rposition(|&b| b != b'/')
            .map_or(start, |e| e + 1);
        &path[start..end.max(start)]
    };
    let mut parts = trimmed.split(|&b| b == b'/');
    let need = match parts.next() {
        Some(b"api") => 2,
        Some(b"apis") => 3,
        _ => return false,
    };
    parts.count() >= need
}

/// The answer to a path nothing here serves, as kube-apiserver's default RBAC and handlers
/// give it. A non-resource path: authorization runs before routing, so a caller without
/// rights (anonymous; `system:public-info-viewer` allows only the health checks and
/// `/version`) gets the 403 naming the lower-cased method and Go's `%q` of the path, with the
/// HTML entities `responsewriters.Forbidden` puts over the whole message; an authenticated
/// caller (privileged here, as for `/metrics`) gets the mux's `http.NotFound`: `404 page not
/// found`, plain text, `nosniff`. A resource-form path ([`resource_form`]): the
/// `RequestInfo` kube-apiserver's `WithRequestInfo` filter computes ([`request_info`]); when it
/// cannot (a `proxy` or `watch` prefix with nothing after it) the filter's 500 for every
/// caller (it runs before authentication); otherwise the anonymous caller (default RBAC grants
/// no resource access) gets the resource 403 ([`forbidden_resource`]) and an authenticated
/// caller the JSON `NotFound`. `uri` is the request's (its query and request target).
fn unknown_path(
    user: Option<Arc<UserInfo>>,
    method: &Method,
    path: &[u8],
    uri: &http::Uri,
    pretty: bool,
) -> Response<Full<Bytes>> {
    if resource_form(path) {
        let Some(info) = request_info(method, path, uri.query()) else {
            return request_info_error(uri);
        };
        return match user {
            Some(u) if !u.is_anonymous() => not_found(pretty),
            user => forbidden_resource(&caller_or_anonymous(user), &info, pretty),
        };
    }
    match user {
        Some(u) if !u.is_anonymous() => plain_nosniff(
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"404 page not found\n"),
        ),
        user => forbidden_status(
            format!(
                "forbidden: User {} cannot {} path {}",
                forbidden_user(caller_or_anonymous(user).name()),
                method.as_str().to_ascii_lowercase(),
                html_entities(&kube_authn::jwt::go_quote_bytes(path))
            ),
            StatusDetails::default(),
            pretty,
        ),
    }
}

/// The attributes of a resource request, as kube-apiserver's `RequestInfo` holds them (Go
/// strings: bytes, from the decoded path or the query).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ResourceInfo {
    pub(crate) verb: &'static str,
    group: Vec<u8>,
    namespace: Vec<u8>,
    resource: Vec<u8>,
    pub(crate) subresource: Vec<u8>,
    name: Vec<u8>,
}

/// kube-apiserver's `RequestInfoFactory.NewRequestInfo` (APIPrefixes `api`, `apis`;
/// GrouplessAPIPrefixes `api`) for a path [`resource_form`] accepts; `None` for its error
/// ("unable to determine kind and namespace from url": a `proxy` or `watch` prefix with no
/// part after it).
pub(crate) fn request_info(
    method: &Method,
    path: &[u8],
    query: Option<&str>,
) -> Option<ResourceInfo> {
    let start = path.iter().position(|&b| b != b'/').unwrap_or(path.len());
    let end = path
        .iter()
        .rposition(|&b| b != b'/')
        .map_or(start, |e| e + 1);
    let all: Vec<&[u8]> = path[start..end.max(start)].split(|&b| b == b'/').collect();
    let mut info = ResourceInfo::default();
    let mut parts: &[&[u8]] = match all.first() {
        Some(&b"api") => &all[1..],
        _ => {
            info.group = all.get(1).copied().unwrap_or_default().to_vec();
            all.get(2..).unwrap_or_default()
        }
    };
    // The version.
    parts = parts.get(1..).unwrap_or_default();
    let first = parts.first().copied().unwrap_or_default();
    let via_path = first == b"proxy" || first == b"watch";
    if via_path {
        if parts.len() < 2 {
            return None;
        }
        info.verb = if first == b"proxy" { "proxy" } else { "watch" };
        parts = &parts[1..];
    } else {
        info.verb = match *method {
            Method::POST => "create",
            Method::GET | Method::HEAD => "get",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE => "delete",
            _ => "",
        };
    }
    if parts.first() == Some(&&b"namespaces"[..]) && parts.len() > 1 {
        info.namespace = parts[1].to_vec();
        if parts.len() > 2 && parts[2] != b"status" && parts[2] != b"finalize" {
            parts = &parts[2..];
        }
    }
    if parts.len() >= 3 && info.verb != "proxy" {
        info.subresource = parts[2].to_vec();
    }
    if parts.len() >= 2 {
        info.name = parts[1].to_vec();
    }
    if let Some(resource) = parts.first() {
        info.resource = resource.to_vec();
    }
    if info.name.is_empty() && info.verb == "get" {
        let (watch, name) = list_options(query.unwrap_or(""));
        info.verb = if watch { "watch" } else { "list" };
        if let Some(name) = name {
            info.name = name;
        }
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection";
    }
    Some(info)
}

/// What `NewRequestInfo` reads of the `ListOptions` its parameter codec decodes from the
/// query: `watch`, and the name a `fieldSelector` requires (`metadata.name=<n>` or `==`) when
/// it is a valid path segment name. When decoding fails (a `limit` or `timeoutSeconds` that
/// is no integer, a `fieldSelector` that does not parse) only `watch` is read, as its
/// fallback does. (A `labelSelector` that does not parse fails decoding too; it is not
/// parsed here.)
fn list_options(query: &str) -> (bool, Option<Vec<u8>>) {
    let first = |key: &str| go_query_values(query, key).into_iter().next();
    let watch = first("watch");
    let ints_ok = ["limit", "timeoutSeconds"].iter().all(|key| {
        first(key).is_none_or(|v| std::str::from_utf8(&v).is_ok_and(|v| v.parse::<i64>().is_ok()))
    });
    let selector = match first("fieldSelector") {
        Some(s) => field_selector_name(&s),
        None => Ok(None),
    };
    match selector {
        Ok(name) if ints_ok => {
            // `Convert_Slice_string_To_bool`: `0` and (Unicode-folded) `false` are false.
            let watch = watch.is_some_and(|v| v != b"0" && !go_equal_fold_false(&v));
            let name = name
                .filter(|n| n != b"." && n != b".." && !n.contains(&b'/') && !n.contains(&b'%'));
            (watch, name)
        }
        _ => {
            // The fallback: `strings.ToLower` is `false` or `0`.
            let watch = watch.is_some_and(|v| {
                let lower = String::from_utf8_lossy(&v).to_lowercase();
                lower != "false" && lower != "0"
            });
            (watch, None)
        }
    }
}

/// Go's `strings.EqualFold(v, "false")`: ASCII case, and `ſ` (U+017F) folds to `s`.
fn go_equal_fold_false(v: &[u8]) -> bool {
    let Ok(v) = std::str::from_utf8(v) else {
        return false;
    };
    let mut chars = v.chars();
    let ok = "false".chars().all(|want| match chars.next() {
        Some(c) => c.to_ascii_lowercase() == want || (want == 's' && c == '\u{17f}'),
        None => false,
    });
    ok && chars.next().is_none()
}

/// apimachinery `fields.ParseSelector`, then `RequiresExactMatch("metadata.name")`: the
/// value of the first (sorted) `metadata.name=` or `==` term; `Err` when it does not parse.
fn field_selector_name(selector: &[u8]) -> Result<Option<Vec<u8>>, ()> {
    // splitTerms: `,` not escaped by a `\`.
    let mut terms = Vec::new();
    let (mut start, mut in_slash) = (0, false);
    for (i, &c) in selector.iter().enumerate() {
        if in_slash {
            in_slash = false;
        } else if c == b'\\' {
            in_slash = true;
        } else if c == b',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    if !selector.is_empty() {
        terms.push(&selector[start..]);
    }
    terms.sort();
    let mut found = None;
    for term in terms.into_iter().filter(|t| !t.is_empty()) {
        let (lhs, op, rhs) = (0..term.len())
            .find_map(|i| {
                ["!=", "==", "="].into_iter().find_map(|op| {
                    term[i..]
                        .starts_with(op.as_bytes())
                        .then(|| (&term[..i], op, &term[i + op.len()..]))
                })
            })
            .ok_or(())?;
        let value = field_unescape(rhs)?;
        if op != "!=" && lhs == b"metadata.name" && found.is_none() {
            found = Some(value);
        }
    }
    Ok(found)
}

/// apimachinery `fields.UnescapeValue`: `\\`, `\,`, `\=` escapes; an unescaped `,` or `=`,
/// another escape or a trailing `\` is an error. It reads runes, so (when there is anything
/// to unescape) each byte of invalid UTF-8 becomes U+FFFD.
fn field_unescape(value: &[u8]) -> Result<Vec<u8>, ()> {
    if !value.iter().any(|b| matches!(b, b'\\' | b',' | b'=')) {
        return Ok(value.to_vec());
    }
    let text = kube_authn::api::go_utf8_lossy(value);
    let mut out = String::new();
    let mut in_slash = false;
    for c in text.chars() {
        match (in_slash, c) {
            (true, '\\' | ',' | '=') => {
                out.push(c);
                in_slash = false;
            }
            (true, _) | (false, ',' | '=') => return Err(()),
            (false, '\\') => in_slash = true,
            (false, _) => out.push(c),
        }
    }
    if in_slash {
        return Err(());
    }
    Ok(out.into_bytes())
}

/// Go's `url.ParseQuery(query)[key]`.
fn go_query_values(query: &str, key: &str) -> Vec<Vec<u8>> {
    kube_authn::api::go_query_pairs(query)
        .filter(|(k, _)| k.as_ref() == key.as_bytes())
        .map(|(_, v)| v.into_owned())
        .collect()
}

/// Bytes (a Go string) as Go's `encoding/json` writes them: each byte of invalid UTF-8 is
/// U+FFFD.
fn go_json_string(bytes: &[u8]) -> String {
    kube_authn::api::go_utf8_lossy(bytes)
}

/// `responsewriters.Forbidden` for a resource request: `forbiddenMessage` with the `&<>`
/// entities over it, wrapped by `apierrors.NewForbidden(gr, name, …)` (the group-resource and
/// Go's `%q` of the name before it, not escaped; details group, kind = resource, name).
fn forbidden_resource(user: &UserInfo, info: &ResourceInfo, pretty: bool) -> Response<Full<Bytes>> {
    let quote = kube_authn::jwt::go_quote_bytes;
    let mut resource = info.resource.clone();
    if !info.subresource.is_empty() {
        resource.push(b'/');
        resource.extend_from_slice(&info.subresource);
    }
    let scope = if info.namespace.is_empty() {
        "at the cluster scope".to_owned()
    } else {
        format!("in the namespace {}", quote(&info.namespace))
    };
    let inner = html_entities(&format!(
        "User {} cannot {} resource {} in API group {} {scope}",
        kube_authn::jwt::go_quote(user.name()),
        info.verb,
        quote(&resource),
        quote(&info.group),
    ));
    let mut gr = info.resource.clone();
    if !info.group.is_empty() {
        gr.push(b'.');
        gr.extend_from_slice(&info.group);
    }
    let message = if info.resource.is_empty() && info.group.is_empty() {
        format!("forbidden: {inner}")
    } else if info.name.is_empty() {
        format!("{} is forbidden: {inner}", go_json_string(&gr))
    } else {
        format!(
            "{} {} is forbidden: {inner}",
            go_json_string(&gr),
            quote(&info.name)
        )
    };
    forbidden_status(
        message,
        StatusDetails {
            group: go_json_string(&info.group),
            kind: go_json_string(&info.resource),
            name: go_json_string(&info.name),
            ..StatusDetails::default()
        },
        pretty,
    )
}

/// `WithRequestInfo`'s answer when `NewRequestInfo` fails: `responsewriters.InternalError`, Go's
/// `http.Error` (plain text, `nosniff`) of `Internal Server Error: <%q of the request target>:
/// failed to create RequestInfo: unable to determine kind and namespace from url, <the URL>`
/// with the `&<>` entities. The URL is the request target as received (Go re-escapes a path
/// it would not have written so; that is not done here).
fn request_info_error(uri: &http::Uri) -> Response<Full<Bytes>> {
    let target = match uri.path_and_query() {
        Some(pq) if uri.scheme().is_none() => pq.as_str().to_owned(),
        _ => uri.to_string(),
    };
    let body = html_entities(&format!(
        "Internal Server Error: {}: failed to create RequestInfo: unable to determine kind and namespace from url, {target}",
        kube_authn::jwt::go_quote(&target)
    )) + "\n";
    plain_nosniff(StatusCode::INTERNAL_SERVER_ERROR, Bytes::from(body))
}

/// The `&`, `<`, `>` entities kube-apiserver's `responsewriters.Forbidden` puts over a 403's
/// message.
fn html_entities(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The endpoints that read a request body (and count against the in-flight limit).
const REVIEW_PATHS: [&str; 3] = [
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    "/apis/authentication.k8s.io/v1/tokenreviews",
    "/apis/authentication.k8s.io/v1beta1/tokenreviews",
];

/// kube-apiserver's answer past the in-flight limit (`tooManyRequests`: Go's `http.Error`).
fn too_many_requests() -> Response<Full<Bytes>> {
    let mut response = plain_nosniff(
        StatusCode::TOO_MANY_REQUESTS,
        Bytes::from_static(b"Too many requests, please try again later.\n"),
    );
    response
        .headers_mut()
        .insert("retry-after", HeaderValue::from_static("1"));
    response
}

/// The first bytes of a Kubernetes protobuf envelope (`k8s\0`).
const PROTOBUF_MAGIC: &[u8] = b"k8s\x00";

/// kube-apiserver's 415, which lists every type its codec factory decodes (YAML and protobuf
/// included, although a TokenReview is read as JSON only and a SelfSubjectReview as JSON or a
/// protobuf envelope: docs/compatibility.md).
fn unsupported_media_type(pretty: bool) -> Response<Full<Bytes>> {
    status(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UnsupportedMediaType",
        media::UNSUPPORTED,
        pretty,
    )
}

/// Go's `summarizeData(body, 30)`, which the create handler puts after a decoding error it
/// cannot name a kind for: `<empty>`, the text of a body starting with `{`, or hex, cut at 30
/// bytes (then ` ...`). `body` is the body as received (not [`go_json_text`]'s); the text is
/// the Go string of its first 30 bytes as Go's JSON encoder writes it, each byte that is not
/// part of valid UTF-8 U+FFFD, a multi-byte character cut at 30 bytes included (one per byte).
fn summarize_body(body: &[u8]) -> String {
    const MAX: usize = 30;
    let (head, more) = match body.get(..MAX) {
        Some(head) if body.len() > MAX => (head, " ..."),
        _ => (body, ""),
    };
    match head.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", go_json_string(head)),
        Some(_) => {
            let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// A review's body as received, and whether a 400 may show its start.
#[derive(Clone, Copy)]
struct Received<'a> {
    bytes: &'a [u8],
    /// False for a TokenReview: its body holds the reviewed token, which an error text must
    /// not carry (clients and proxies log them).
    shown: bool,
}

impl Received<'_> {
    /// What the create handler's 400 puts in parentheses: Go's summary ([`summarize_body`]),
    /// or, for a body that is not shown, `<empty>` or `<N bytes, not shown>`.
    fn summary(self) -> String {
        if self.shown || self.bytes.is_empty() {
            summarize_body(self.bytes)
        } else {
            format!("<{} bytes, not shown>", self.bytes.len())
        }
    }
}

/// kube-apiserver's create handler for a body its decoder read no kind from (the 400 of
/// `transformDecodeError`): `the object provided is unrecognized (must be of type <kind>):
/// <decoder error> (<summary>)` ([`Received::summary`]).
fn unrecognized(
    kind: &str,
    error: &str,
    received: Received<'_>,
    pretty: bool,
) -> Response<Full<Bytes>> {
    status(
        StatusCode::BAD_REQUEST,
        "BadRequest",
        format!(
            "the object provided is unrecognized (must be of type {kind}): {error} ({})",
            received.summary()
        ),
        pretty,
    )
}

/// A JSON body with no value at all (empty, or only JSON white space) is, for kube-apiserver's
/// JSON serializer, `encoding/json`'s `unexpected end of JSON input` when it looks for the
/// kind: a 400, never an empty object.
fn json_without_value(
    received: Received<'_>,
    kind: &str,
    pretty: bool,
) -> Option<Response<Full<Bytes>>> {
    received
        .bytes
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .then(|| {
            unrecognized(
                kind,
                "couldn't get version/kind; json parse error: unexpected end of JSON input",
                received,
                pretty,
            )
        })
}

/// A JSON decoding error without any of the input (which may hold a token).
fn decode_error(e: &serde_json::Error) -> String {
    let class = match e.classify() {
        serde_json::error::Category::Io => "read error",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "unexpected field type",
        serde_json::error::Category::Eof => "unexpected end of input",
    };
    format!(
        "couldn't decode the request body: {class} at line {} column {}",
        e.line(),
        e.column()
    )
}

/// Go's `unicode.IsSpace`, which `strings.TrimSpace` trims: the Unicode `White_Space` code
/// points (ASCII `\t \n \v \f \r` and space, U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028,
/// U+2029, U+202F, U+205F, U+3000).
fn is_go_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// The `Authorization` value a TokenReview's token is checked with. kube-apiserver puts
/// `Bearer <token>` into a request and its bearer authenticator trims the value
/// (`strings.TrimSpace`) and takes the token up to the first space: so trailing white space
/// (a token file's newline) is dropped and what follows a space is ignored. A token that is
/// white space only or starts with a space (no token for Go: the request falls through to
/// anonymous) is passed as it is, and the bearer parser refuses it, as it refuses such a
/// header.
fn review_authorization(token: &str) -> String {
    let trimmed = token.trim_end_matches(is_go_space);
    let token = match trimmed.split_once(' ') {
        Some((first, _)) if !first.is_empty() => first,
        _ => trimmed,
    };
    format!("Bearer {token}")
}

/// A request path as Go's `url.URL.Path` holds it: every `%XX` decoded (`%2F` too, as Go
/// does), `+` kept, the decoded bytes exactly (`%FF` is the byte 0xFF, which is not UTF-8);
/// borrowed, without allocating, when there is no `%`. `None` for an invalid escape, which
/// Go's HTTP server refuses before any handler ([`crate::request_uri`] answers it in front of
/// the middleware, so the handlers never see one). (The rule of `kube_authn::chain::anonymous`'s
/// path matching.)
pub(crate) fn go_url_path(raw: &str) -> Option<Cow<'_, [u8]>> {
    if !raw.contains('%') {
        return Some(Cow::Borrowed(raw.as_bytes()));
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hi = char::from(hex[0]).to_digit(16)?;
            let lo = char::from(hex[1]).to_digit(16)?;
            // Two hex digits: at most 0xFF.
            out.push(u8::try_from(hi * 16 + lo).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(Cow::Owned(out))
}

/// go-restful's answer (through kube-apiserver's service error handler) to a path inside an
/// API group version that names nothing served there; also kube-authn's answer to every
/// other resource-form path it does not serve (docs/compatibility.md).
fn not_found(pretty: bool) -> Response<Full<Bytes>> {
    status_with_details(
        StatusCode::NOT_FOUND,
        "NotFound",
        "the server could not find the requested resource",
        StatusDetails::default(),
        pretty,
    )
}

/// The body as Go's `encoding/json` reads its strings, where serde_json would refuse it:
///
/// * each byte that is not part of valid UTF-8 becomes U+FFFD, one per byte, as Go's
///   `unquote` does (`utf8.DecodeRune` gives `RuneError` of size 1); only when the body is
///   not UTF-8, and then error columns after such a byte move by two. Outside a string such a
///   byte is a syntax error in Go, and U+FFFD is one for serde_json too;
/// * each lone UTF-16 surrogate escape (`\ud800` not followed by `\udc00`–`\udfff`, or a
///   trailing `\udc00` alone) becomes `\ufffd`: the same length, so every other position
///   (and error column) is unchanged. Backslashes only occur inside strings in valid JSON;
///   an invalid body stays invalid.
///
/// The same `Bytes` when there is nothing to replace.
fn go_json_text(body: Bytes) -> Bytes {
    let body = if std::str::from_utf8(&body).is_ok() {
        body
    } else {
        Bytes::from(kube_authn::api::go_utf8_lossy(&body))
    };
    go_json_surrogates(body)
}

/// [`go_json_text`]'s surrogate step ([`go_lone_surrogates`]): the same `Bytes` when there
/// is nothing to replace.
fn go_json_surrogates(body: Bytes) -> Bytes {
    match go_lone_surrogates(&body) {
        Cow::Borrowed(_) => body,
        Cow::Owned(replaced) => Bytes::from(replaced),
    }
}

/// A response given before the request is served (boxed: the `Err` side of a `Result`).
type Answer = Box<Response<Full<Bytes>>>;

/// The create handler's `CreateOptions` (a 422 when invalid): the `fieldValidation` mode.
fn create_options(query: Option<&str>, pretty: bool) -> Result<FieldValidation, Answer> {
    let options = create_options::parse(query).map_err(|errs| {
        let (message, details) = create_options::invalid(&errs);
        Box::new(status_with_details(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            message,
            details,
            pretty,
        ))
    })?;
    Ok(options.field_validation)
}

/// The strict decoder's findings in `body` (also under `Ignore`: a repeated struct field is
/// refused in every mode), read as the Go type of the kind and version the body declares
/// (`declared`; `None`: the endpoint's, whose `shape` is given).
fn strict_findings(
    body: &[u8],
    declared: Option<&Gvk>,
    shape: &'static create_options::Shape,
) -> StrictErrors {
    let shape = declared
        .and_then(|gvk| legacy_scheme::declared_shape(&gvk.kind, &gvk.version))
        .unwrap_or(shape);
    create_options::strict_errors(body, shape)
}

/// The typed decoding of a review body. A body declaring the internal version is decoded into
/// the internal type, whose field names are not the JSON API's: nothing of it is kept (the
/// version check refuses it), so it is only read through, and its findings are the strict
/// decoder's ([`strict_findings`]).
fn decode_review<T: serde::de::DeserializeOwned + Default>(
    body: &[u8],
    declared: Option<&Gvk>,
) -> Result<T, serde_json::Error> {
    if declared.is_some_and(|gvk| gvk.version == legacy_scheme::INTERNAL_VERSION) {
        serde_json::from_slice::<serde::de::IgnoredAny>(typed_body(body)).map(|_| T::default())
    } else {
        serde_json::from_slice::<T>(typed_body(body))
    }
}

/// The kind a JSON body declares, resolved as kube-apiserver's create handler resolves it before
/// decoding ([`kind`]): `Ok(Some(gvk))` to decode the body as the endpoint's kind, `Ok(None)`
/// for a body serde_json cannot read (the typed decoding reports it), or the 400. `body` is
/// [`go_json_text`]'s, `received` the body as received (what a 400 summarises).
fn declared_kind(
    body: &[u8],
    received: Received<'_>,
    (kind, version): (&str, &str),
    pretty: bool,
) -> Result<Option<Gvk>, Answer> {
    match kind::interpret(body) {
        Interpreted::Members {
            api_version,
            kind: declared,
            ..
        } => kind::resolve(&api_version, &declared, kind, version)
            .map(Some)
            .map_err(|refusal| Box::new(refused(refusal, kind, received, pretty))),
        Interpreted::TypeError(error) => Err(Box::new(unrecognized(
            kind,
            &format!("couldn't get version/kind; json parse error: {error}"),
            received,
            pretty,
        ))),
        Interpreted::Unreadable => Ok(None),
    }
}

fn refused(
    refusal: Refusal,
    kind: &str,
    received: Received<'_>,
    pretty: bool,
) -> Response<Full<Bytes>> {
    match refusal {
        Refusal::Unrecognized(error) => unrecognized(kind, &error, received, pretty),
        Refusal::BadRequest(message) => {
            status(StatusCode::BAD_REQUEST, "BadRequest", message, pretty)
        }
    }
}

/// The body the typed decoding reads: Go decodes a JSON `null` into the empty object.
fn typed_body(body: &[u8]) -> &[u8] {
    // JSON's white space only: `trim_ascii` would also strip a form feed, which Go refuses.
    let json_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = body
        .iter()
        .position(|b| !json_space(b))
        .unwrap_or(body.len());
    let end = body
        .iter()
        .rposition(|b| !json_space(b))
        .map_or(start, |i| i + 1);
    if &body[start..end] == b"null" {
        b"{}"
    } else {
        body
    }
}

/// After the typed decoding, the version check of kube-apiserver's create handler, on the
/// group and version the serializer read (`declared`), or for a body only the typed decoding
/// read, on the `apiVersion` and `kind` it decoded. `received` is the body as received.
fn declared_version_matches(
    declared: Option<Gvk>,
    (api_version, decoded_kind): (&str, &str),
    (kind, version): (&str, &str),
    received: Received<'_>,
    pretty: bool,
) -> Result<(), Answer> {
    let gvk = match declared {
        Some(gvk) => gvk,
        None => kind::resolve(api_version, decoded_kind, kind, version)
            .map_err(|refusal| Box::new(refused(refusal, kind, received, pretty)))?,
    };
    match api_version_mismatch(&gvk.group_version(), version, pretty) {
        Some(response) => Err(Box::new(response)),
        None => Ok(()),
    }
}

/// After the typed decoding of a body: `Err` is the 400 to answer (Go's decoding error comes
/// first, then `Strict`'s refusal); `Ok` gives the texts `Warn` puts in `Warning` headers.
/// `declared` is what the serializer read (`None`: the endpoint's kind and version, the
/// decoder's defaults).
fn strict_outcome<T>(
    decoded: Result<T, serde_json::Error>,
    validation: FieldValidation,
    found: StrictErrors,
    (declared, endpoint): (Option<&Gvk>, (&str, &str)),
    pretty: bool,
) -> Result<(T, Vec<String>), Answer> {
    let prefix = || match declared {
        Some(gvk) => gvk.cannot_be_handled(endpoint.0),
        None => format!(
            "{} in version {} cannot be handled as a {}: ",
            endpoint.0,
            kube_authn::jwt::go_quote(endpoint.1),
            endpoint.0
        ),
    };
    let bad_request = |message: String| {
        Box::new(status(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            message,
            pretty,
        ))
    };
    match decoded {
        // Go checks the whole body's syntax before it decodes anything. A number out of
        // serde's range (`1E400`) is valid JSON for Go: its typed decoding reports it (the
        // strict walk found that error, below).
        Err(e)
            if !(matches!(e.classify(), serde_json::error::Category::Data)
                || found.decode_error().is_some()
                    && e.to_string().starts_with("number out of range")) =>
        {
            Err(bad_request(decode_error(&e)))
        }
        // Go's decoding error (a value of the wrong type, a bad time), which comes before
        // the strict decoder's findings in every mode.
        _ if found.decode_error().is_some() => Err(bad_request(
            prefix() + found.decode_error().unwrap_or_default(),
        )),
        // serde refuses a repeated struct field in every mode (fail closed, as for JWT
        // payloads); the message is the one kube-apiserver gives under `Strict`.
        Err(e) if found.struct_duplicates && e.to_string().starts_with("duplicate field") => {
            Err(bad_request(if validation == FieldValidation::Strict {
                prefix() + &found.message()
            } else {
                prefix() + &found.duplicates_message()
            }))
        }
        Err(e) => Err(bad_request(decode_error(&e))),
        Ok(_) if validation == FieldValidation::Strict && !found.errors.is_empty() => {
            Err(bad_request(prefix() + &found.message()))
        }
        Ok(value) if validation == FieldValidation::Warn => Ok((value, found.errors)),
        Ok(value) => Ok((value, Vec::new())),
    }
}

/// The create handler's `dedupOwnerReferencesAndAddWarning` (k8s.io/apiserver
/// `handlers/rest.go`): an owner reference equal in every field to an earlier one is dropped,
/// and the warning lists the UIDs of the dropped ones, in order. (Go compares each entry with
/// a repeated UID against those kept, which is quadratic; a set of the entries is not.)
fn dedup_owner_references(refs: &mut Vec<OwnerReference>) -> Option<String> {
    let mut seen: HashSet<OwnerReference> = HashSet::with_capacity(refs.len());
    let mut duplicates: Vec<String> = Vec::new();
    refs.retain(|r| {
        if seen.insert(r.clone()) {
            true
        } else {
            duplicates.push(r.uid.clone());
            false
        }
    });
    (!duplicates.is_empty()).then(|| {
        format!(
            ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}",
            duplicates.join(", ")
        )
    })
}

/// Adds kube-apiserver's `Warning: 299 - "…"` headers for `texts` (its warning recorder:
/// empty and repeated texts are dropped; 4096 characters in all; past that every warning is
/// cut to 256 characters and the rest are dropped). A text that `NewWarningHeader` refuses,
/// one holding a control character (Go's `unicode.IsControl`: U+0000–U+001F, tab included,
/// and U+007F–U+009F), is not sent and not counted, as Go's recorder skips it; a cut one is
/// checked after the cut.
fn with_warnings(mut response: Response<Full<Bytes>>, texts: &[String]) -> Response<Full<Bytes>> {
    const TOTAL: usize = 4 * 1024;
    const ITEM: usize = 256;
    let cut = |t: &str| -> (String, usize) {
        match t.char_indices().nth(ITEM) {
            Some((at, _)) => (t[..at].to_owned(), ITEM),
            None => (t.to_owned(), t.chars().count()),
        }
    };
    let sendable = |t: &str| !t.chars().any(char::is_control);
    let mut recorded: HashSet<&str> = HashSet::new();
    let mut ordered: Vec<&str> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let mut written = 0;
    let mut truncating = false;
    for text in texts {
        if text.is_empty() {
            continue;
        }
        if truncating && written >= TOTAL {
            break;
        }
        if !recorded.insert(text) {
            continue;
        }
        ordered.push(text);
        let (t, n) = if truncating {
            cut(text)
        } else {
            (text.clone(), text.chars().count())
        };
        if !sendable(&t) {
            continue;
        }
        if written + n <= TOTAL || truncating {
            written += n;
            out.push(t);
            continue;
        }
        truncating = true;
        written = 0;
        out.clear();
        for earlier in &ordered {
            let (t, n) = cut(earlier);
            if sendable(&t) {
                written += n;
                out.push(t);
            }
        }
    }
    for text in out {
        let mut value = String::with_capacity(text.len() + 8);
        value.push_str("299 - \"");
        for c in text.chars() {
            if c == '"' || c == '\\' {
                value.push('\\');
            }
            value.push(c);
        }
        value.push('"');
        // Without control characters every byte is one a header value may hold.
        if let Ok(v) = HeaderValue::from_bytes(value.as_bytes()) {
            response.headers_mut().append(http::header::WARNING, v);
        }
    }
    response
}

/// The request's deadline: the one kube-apiserver's request-deadline filter set in front of
/// the middleware (`?timeout=`, at most `--request-timeout`: [`crate::request_deadline`]), or
/// `request_timeout` from now.
fn deadline_of<B>(req: &Request<B>, request_timeout: std::time::Duration) -> tokio::time::Instant {
    req.extensions()
        .get::<crate::request_deadline::Deadline>()
        .map_or_else(|| tokio::time::Instant::now() + request_timeout, |d| d.0)
}

/// Reads a review's body; its errors are written as the create handler's `scope.err` writes
/// them, pretty when the request asks for it.
async fn read_body<B>(
    body: B,
    deadline: tokio::time::Instant,
    pretty: bool,
) -> Result<Bytes, Response<Full<Bytes>>>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    // A client that drips its body (or stops) must not hold the request and its buffer:
    // kube-apiserver's request deadline, and its 504. A body that arrived after it (or as it
    // passed: `?timeout=1ns`) gets the 504 too, which kube-apiserver's timeout filter gives
    // once the deadline has passed.
    let read = tokio::time::timeout_at(deadline, Limited::new(body, MAX_BODY_BYTES).collect());
    let collected = match read.await {
        Ok(_) if tokio::time::Instant::now() >= deadline => return Err(request_timeout()),
        Ok(collected) => collected,
        Err(_) => return Err(request_timeout()),
    };
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(status(
                StatusCode::PAYLOAD_TOO_LARGE,
                "RequestEntityTooLarge",
                format!("Request entity too large: limit is {MAX_BODY_BYTES}"),
                pretty,
            ))
        }
        Err(_) => Err(status(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "couldn't read the request body",
            pretty,
        )),
    }
}

/// RFC 3339 UTC time with second precision, as Go's `metav1.Time` serialises.
pub fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    rfc3339(secs)
}

/// RFC 3339 for seconds since the epoch (proleptic Gregorian, UTC).
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

impl App {
    /// Answers one request that already went through the authentication middleware. Every
    /// answer says `Cache-Control: no-cache, private` unless it set its own, as
    /// kube-apiserver's `WithCacheControl` filter does.
    pub async fn handle<B>(self: Arc<Self>, req: Request<B>) -> Response<Full<Bytes>>
    where
        B: http_body::Body<Data = Bytes>,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let mut response = self.answer(req).await;
        response
            .headers_mut()
            .entry(http::header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-cache, private"));
        response
    }

    async fn answer<B>(self: Arc<Self>, req: Request<B>) -> Response<Full<Bytes>>
    where
        B: http_body::Body<Data = Bytes>,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let pretty = wants_pretty(req.uri(), req.headers());
        let user = Authenticated::from_request(&req).map(|a| a.user.clone());
        // Go's server routes on `req.URL.Path`, the path percent-decoded (`%2F` included). A
        // bad escape never gets here (`request_uri` answers it, as Go's server does); a
        // decoded path that is not UTF-8 equals no route, so it is the 404 every unknown
        // path gets, which does not quote the path.
        let decoded = go_url_path(req.uri().path());
        let method = req.method().clone();
        let uri = req.uri().clone();
        let path = match decoded.as_deref().map(std::str::from_utf8) {
            Some(Ok(path)) => path,
            _ => {
                return unknown_path(
                    user,
                    &method,
                    decoded.as_deref().unwrap_or(b""),
                    req.uri(),
                    pretty,
                );
            }
        };
        // go-restful's router (`CurlyRouter`, `TrimRightSlashEnabled`) matches a route on the
        // path with its trailing slashes trimmed: `…/tokenreviews/` and `…/tokenreviews//` are
        // the route (an empty segment inside the path, `…/v1//tokenreviews`, is not).
        // The version discovery documents are go-restful routes too (`…/v1/` is `…/v1`).
        // A 403 names the path as requested.
        let requested = path;
        let path = match path.trim_end_matches('/') {
            trimmed
                if REVIEW_PATHS.contains(&trimmed)
                    || crate::discovery::VERSION_PATHS.contains(&trimmed) =>
            {
                trimmed
            }
            _ => path,
        };
        // kube-apiserver's max-in-flight filter: reviews are creates (mutating) and take a
        // slot while there is one; when none is left, members of system:masters are still
        // served (without a slot) and everyone else gets the 429. The permit is held until the
        // answer is built.
        let counted = method == Method::POST && REVIEW_PATHS.contains(&path);
        let _permit = match &self.inflight {
            Some(slots) if counted => match slots.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_)
                    if user
                        .as_deref()
                        .is_some_and(|u| u.groups().any(|g| g == SYSTEM_PRIVILEGED_GROUP)) =>
                {
                    None
                }
                Err(_) => return too_many_requests(),
            },
            _ => None,
        };
        // A non-resource request's RBAC verb is its method, lower-cased: anonymous callers
        // (`system:public-info-viewer`) may `get` the health checks and nothing else here.
        let privileged = user.as_deref().is_some_and(|u| !u.is_anonymous());
        let forbidden_path = |user: Option<Arc<UserInfo>>, method: &Method, path: &str| {
            forbidden_status(
                format!(
                    "forbidden: User {} cannot {} path {}",
                    forbidden_user(caller_or_anonymous(user).name()),
                    method.as_str().to_ascii_lowercase(),
                    html_entities(&kube_authn::jwt::go_quote(path))
                ),
                StatusDetails::default(),
                pretty,
            )
        };
        let health_endpoint = health::endpoint(path);
        match (path, method) {
            // k8s.io/apiserver's healthz handlers, which answer every method.
            (path, method) if health_endpoint.is_some() => match health_endpoint {
                Some(name) if method == Method::GET || privileged => {
                    health::root(name, uri.query())
                }
                _ => forbidden_path(user, &method, path),
            },
            // Each check's own handler (`/healthz/ping`): RBAC grants anonymous callers
            // (`system:public-info-viewer`) the endpoints only, so theirs is the 403 of an
            // unknown path.
            (path, _) if privileged && health::is_check(path) => health::check(),
            // promhttp's handler answers every method.
            ("/metrics", method) => match user {
                Some(u) if !u.is_anonymous() => {
                    let mut out = String::new();
                    (self.metrics)(&mut out);
                    let mut response = Response::new(Full::new(Bytes::from(out)));
                    response.headers_mut().insert(
                        CONTENT_TYPE,
                        // What promhttp sends for the text format (expfmt v0.70).
                        HeaderValue::from_static(
                            "text/plain; version=0.0.4; charset=utf-8; escaping=underscores",
                        ),
                    );
                    response
                }
                _ => forbidden_path(user, &method, "/metrics"),
            },
            ("/apis/authentication.k8s.io/v1/selfsubjectreviews", Method::POST) => {
                self.self_subject_review(req, user, pretty).await
            }
            ("/apis/authentication.k8s.io/v1/tokenreviews", Method::POST) => {
                self.token_review(req, user, "v1", pretty).await
            }
            ("/apis/authentication.k8s.io/v1beta1/tokenreviews", Method::POST) => {
                self.token_review(req, user, "v1beta1", pretty).await
            }
            (
                "/apis/authentication.k8s.io/v1/selfsubjectreviews"
                | "/apis/authentication.k8s.io/v1/tokenreviews"
                | "/apis/authentication.k8s.io/v1beta1/tokenreviews",
                method,
            ) => {
                // kube-apiserver authorizes before go-restful routes: the request's verb
                // (`list`, `update`, `deletecollection`, …) is granted by default RBAC to
                // `system:masters` only (`system:basic-user` and `system:auth-delegator` grant
                // `create` alone), so everyone else gets the resource 403, and only a member
                // of `system:masters` reaches go-restful's 405.
                let privileged = user.as_deref().is_some_and(|u| {
                    !u.is_anonymous() && u.groups().any(|g| g == SYSTEM_PRIVILEGED_GROUP)
                });
                if privileged {
                    status_with_details(
                        StatusCode::METHOD_NOT_ALLOWED,
                        "MethodNotAllowed",
                        "the server does not allow this method on the requested resource",
                        StatusDetails::default(),
                        pretty,
                    )
                } else {
                    match request_info(&method, path.as_bytes(), uri.query()) {
                        Some(info) => forbidden_resource(&caller_or_anonymous(user), &info, pretty),
                        None => request_info_error(&uri),
                    }
                }
            }
            (path, method) if crate::discovery::document(path).is_some() => match user {
                // kube-apiserver's default RBAC (`system:discovery`) grants discovery to
                // `system:authenticated` only; a non-resource request's verb is its method.
                Some(u) if !u.is_anonymous() => match crate::discovery::document(path) {
                    Some(doc) if crate::discovery::serves(path, &method) => {
                        json_response(StatusCode::OK, &doc, pretty)
                    }
                    _ => status_with_details(
                        StatusCode::METHOD_NOT_ALLOWED,
                        "MethodNotAllowed",
                        "the server does not allow this method on the requested resource",
                        StatusDetails::default(),
                        pretty,
                    ),
                },
                _ => forbidden_path(user, &method, requested),
            },
            (path, method) => unknown_path(user, &method, path.as_bytes(), &uri, pretty),
        }
    }

    async fn self_subject_review<B>(
        &self,
        req: Request<B>,
        user: Option<Arc<UserInfo>>,
        pretty: bool,
    ) -> Response<Full<Bytes>>
    where
        B: http_body::Body<Data = Bytes>,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        // Fail closed on anonymous callers (kube-apiserver's default RBAC gives the
        // unauthenticated group nothing here); the 403 names the caller as RBAC does.
        let user = match user {
            Some(u) if !u.is_anonymous() => u,
            other => return forbidden(&caller_or_anonymous(other), "selfsubjectreviews", pretty),
        };
        // kube-apiserver also decodes YAML here; kube-authn does not (docs/compatibility.md).
        let media = media_type(req.headers().get(CONTENT_TYPE));
        if !matches!(media, Media::Json | Media::Protobuf) {
            return unsupported_media_type(pretty);
        }
        let query = req.uri().query().map(str::to_owned);
        // `raw` is the body as received, which the 400s summarise as Go does.
        let deadline = deadline_of(&req, self.request_timeout);
        let (raw, body) = match read_body(req.into_body(), deadline, pretty).await {
            Ok(body) => (body.clone(), go_json_text(body)),
            Err(response) => return response,
        };
        let received = Received {
            bytes: &raw,
            shown: true,
        };
        let validation = match create_options(query.as_deref(), pretty) {
            Ok(validation) => validation,
            Err(response) => return *response,
        };
        if media == Media::Json
            && let Some(response) = json_without_value(received, "SelfSubjectReview", pretty)
        {
            return response;
        }
        let mut warnings = Vec::new();
        match media {
            // The request object carries nothing that changes the answer, so a protobuf
            // envelope (what kubectl sends) is checked as kube-apiserver's protobuf serializer
            // checks it before decoding, with its error texts, but not decoded.
            Media::Protobuf if body.is_empty() => {
                return unrecognized("SelfSubjectReview", "empty data", received, pretty);
            }
            Media::Protobuf if !body.starts_with(PROTOBUF_MAGIC) => {
                return unrecognized(
                    "SelfSubjectReview",
                    "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
                    received,
                    pretty,
                );
            }
            Media::Protobuf if body.len() == PROTOBUF_MAGIC.len() => {
                return unrecognized("SelfSubjectReview", "empty body", received, pretty);
            }
            Media::Protobuf => {}
            Media::Json => {
                const ENDPOINT: (&str, &str) = ("SelfSubjectReview", "v1");
                let declared = match declared_kind(&body, received, ENDPOINT, pretty) {
                    Ok(declared) => declared,
                    Err(response) => return *response,
                };
                let found = strict_findings(
                    &body,
                    declared.as_ref(),
                    &create_options::SELF_SUBJECT_REVIEW,
                );
                match strict_outcome(
                    decode_review::<SelfSubjectReview>(&body, declared.as_ref()),
                    validation,
                    found,
                    (declared.as_ref(), ENDPOINT),
                    pretty,
                ) {
                    Ok((mut review, found)) => {
                        if let Err(response) = declared_version_matches(
                            declared,
                            (&review.api_version, &review.kind),
                            ENDPOINT,
                            received,
                            pretty,
                        ) {
                            return with_warnings(*response, &found);
                        }
                        warnings = found;
                        warnings.extend(dedup_owner_references(
                            &mut review.metadata.owner_references,
                        ));
                    }
                    Err(response) => return *response,
                }
            }
            Media::Yaml | Media::Other => return unsupported_media_type(pretty),
        }
        let review = SelfSubjectReview::for_user(&user, &rfc3339_now());
        with_warnings(
            json_response(StatusCode::CREATED, &review, pretty),
            &warnings,
        )
    }

    async fn token_review<B>(
        &self,
        req: Request<B>,
        user: Option<Arc<UserInfo>>,
        version: &str,
        pretty: bool,
    ) -> Response<Full<Bytes>>
    where
        B: http_body::Body<Data = Bytes>,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let caller = match user {
            Some(u) if !u.is_anonymous() => u,
            other => return forbidden(&caller_or_anonymous(other), "tokenreviews", pretty),
        };
        // kube-apiserver's RBAC grants `create` on tokenreviews to system:masters and the
        // system:auth-delegator binding only: reviewing other people's tokens is not for every
        // authenticated user.
        if !caller
            .groups()
            .any(|g| self.token_review_groups.iter().any(|allowed| allowed == g))
        {
            return forbidden(&caller, "tokenreviews", pretty);
        }
        // The token must be read from the body, so only JSON is accepted here (kube-apiserver's
        // webhook client and the official clients send TokenReview as JSON).
        if media_type(req.headers().get(CONTENT_TYPE)) != Media::Json {
            return unsupported_media_type(pretty);
        }
        let query = req.uri().query().map(str::to_owned);
        let deadline = deadline_of(&req, self.request_timeout);
        let (raw, body) = match read_body(req.into_body(), deadline, pretty).await {
            Ok(body) => (body.clone(), go_json_text(body)),
            Err(response) => return response,
        };
        // The body holds the token under review: a 400 does not show its start, as Go's
        // `summarizeData` would (docs/compatibility.md).
        let received = Received {
            bytes: &raw,
            shown: false,
        };
        let shape = if version == "v1beta1" {
            &create_options::TOKEN_REVIEW_V1BETA1
        } else {
            &create_options::TOKEN_REVIEW
        };
        let validation = match create_options(query.as_deref(), pretty) {
            Ok(validation) => validation,
            Err(response) => return *response,
        };
        if let Some(response) = json_without_value(received, "TokenReview", pretty) {
            return response;
        }
        let endpoint = ("TokenReview", version);
        let declared = match declared_kind(&body, received, endpoint, pretty) {
            Ok(declared) => declared,
            Err(response) => return *response,
        };
        let found = strict_findings(&body, declared.as_ref(), shape);
        let (mut review, mut warnings) = match strict_outcome(
            decode_review::<TokenReview>(&body, declared.as_ref()),
            validation,
            found,
            (declared.as_ref(), endpoint),
            pretty,
        ) {
            Ok(decoded) => decoded,
            Err(response) => return *response,
        };
        // kube-apiserver's warning recorder writes the headers as soon as the decoder reports,
        // so they come with whatever answer follows.
        if let Err(response) = declared_version_matches(
            declared,
            (&review.api_version, &review.kind),
            endpoint,
            received,
            pretty,
        ) {
            return with_warnings(*response, &warnings);
        }
        warnings.extend(dedup_owner_references(
            &mut review.metadata.owner_references,
        ));
        with_warnings(self.review_token(review, version, pretty).await, &warnings)
    }

    /// The TokenReview REST storage's `Create`, for a decoded review of this endpoint's kind
    /// and version.
    async fn review_token(
        &self,
        mut review: TokenReview,
        version: &str,
        pretty: bool,
    ) -> Response<Full<Bytes>> {
        // A TokenReview is cluster-scoped: kube-apiserver's create handler clears a namespace
        // sent in the body (`rest.EnsureObjectNamespaceMatchesRequestNamespace`) and goes on;
        // it wipes the system fields (`rest.WipeObjectMetaSystemFields`: the creation
        // timestamp; uid, selfLink and the deletion fields are not kept at all) and echoes the
        // rest of the metadata.
        review.metadata.namespace.clear();
        review.metadata.creation_timestamp = None;
        if review.spec.token.is_empty() {
            return status(
                StatusCode::BAD_REQUEST,
                "BadRequest",
                "token is required for TokenReview in authentication",
                pretty,
            );
        }
        let header = review_authorization(&review.spec.token);
        let audiences = if review.spec.audiences.is_empty() {
            self.api_audiences.clone()
        } else {
            Audiences::new(&review.spec.audiences)
        };
        let outcome = match HeaderValue::from_str(&header) {
            Ok(value) => {
                let (mut parts, ()) = Request::new(()).into_parts();
                parts.headers.insert(http::header::AUTHORIZATION, value);
                let ctx = if audiences.is_empty() {
                    Context::default()
                } else {
                    Context::with_audiences(audiences.clone())
                };
                self.review_chain.authenticate_request(&parts, &ctx).await
            }
            Err(_) => Err(kube_authn::Error::from_static(
                kube_authn::ErrorKind::MalformedCredential,
                "token contains bytes that cannot be sent in an HTTP header",
            )),
        };
        review.api_version = format!("authentication.k8s.io/{version}");
        review.kind = "TokenReview".into();
        review.status = Default::default();
        match outcome {
            Ok(Some(response)) => {
                if !audiences.is_empty() && !audiences.intersects(&response.audiences) {
                    tracing::error!(want = ?audiences, got = ?response.audiences, "error validating audience");
                    // apierrors.NewInternalError(errors.New("error validating audiences")).
                    return status_with_details(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "InternalError",
                        "Internal error occurred: error validating audiences",
                        StatusDetails {
                            causes: vec![StatusCause {
                                message: "error validating audiences".into(),
                                ..StatusCause::default()
                            }],
                            ..StatusDetails::default()
                        },
                        pretty,
                    );
                }
                review.status.authenticated = true;
                review.status.user = ApiUserInfo::from(&*response.user);
                review.status.audiences = response.audiences.iter().map(str::to_owned).collect();
            }
            Ok(None) => {}
            Err(e) => review.status.error = e.to_string(),
        }
        json_response(StatusCode::CREATED, &review, pretty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube-apiserver's warning recorder (k8s.io/apiserver 0.37.2 `WithWarningRecorder`, Go's
    /// answers printed with `warning.AddWarning`): a text with a control character (tab, DEL,
    /// U+0085 too) is not sent and not counted, unless a cut removes it; empty and repeated
    /// texts are dropped.
    #[test]
    fn warnings_are_recorded_as_kube_apiserver_records_them() {
        let long_b = format!("{}\u{1}{}", "b".repeat(279), "b".repeat(20));
        let cases: Vec<(Vec<String>, Vec<String>)> = vec![
            (vec!["a\u{1}".into()], vec![]),
            (
                vec![
                    "a\tb".into(),
                    "x\u{85}".into(),
                    "y\u{a0}".into(),
                    "z\u{7f}".into(),
                    "ok".into(),
                    "ok".into(),
                    String::new(),
                ],
                vec!["y\u{a0}".into(), "ok".into()],
            ),
            (
                vec!["a".repeat(4000), long_b, "c".repeat(200)],
                vec!["a".repeat(256), "b".repeat(256), "c".repeat(200)],
            ),
            (vec!["q\"\\".into()], vec![r#"q\"\\"#.into()]),
        ];
        for (texts, want) in cases {
            let response = with_warnings(Response::new(Full::new(Bytes::new())), &texts);
            let got: Vec<String> = response
                .headers()
                .get_all(http::header::WARNING)
                .iter()
                .map(|v| String::from_utf8(v.as_bytes().to_vec()).unwrap())
                .collect();
            let want: Vec<String> = want.iter().map(|t| format!("299 - \"{t}\"")).collect();
            assert_eq!(got, want, "{texts:?}");
        }
    }

    /// Only JSON's white space surrounds a `null` body (a form feed is a syntax error in Go).
    #[test]
    fn typed_body_trims_json_white_space_only() {
        for (body, want) in [
            (&b"null"[..], &b"{}"[..]),
            (b" \t\r\nnull\n", b"{}"),
            (b"\x0cnull", b"\x0cnull"),
            (b"null\x0c", b"null\x0c"),
            (b"nul", b"nul"),
            (b"", b""),
        ] {
            assert_eq!(typed_body(body), want, "{body:?}");
        }
    }

    /// Go's `unicode.IsSpace` (what `strings.TrimSpace` trims), listed by running Go 1.26 over
    /// every rune: Unicode's `White_Space`, which `char::is_whitespace` also follows.
    #[test]
    fn go_space_is_gos_list() {
        let mut go: Vec<u32> = vec![0x9, 0xa, 0xb, 0xc, 0xd, 0x20, 0x85, 0xa0, 0x1680];
        go.extend(0x2000..=0x200a);
        go.extend([0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);
        let ours: Vec<u32> = (0..=0x10_ffff)
            .filter_map(char::from_u32)
            .filter(|&c| is_go_space(c))
            .map(u32::from)
            .collect();
        assert_eq!(ours, go);
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            assert_eq!(is_go_space(c), c.is_whitespace(), "{c:?}");
        }
    }

    #[test]
    fn review_authorization_is_what_gos_bearer_authenticator_reads() {
        let cases = [
            ("tok", "Bearer tok"),
            ("tok\n", "Bearer tok"),
            ("tok \t\u{b}\u{c}\r\n\u{85}\u{a0}\u{3000}", "Bearer tok"),
            ("tok rest\u{1}", "Bearer tok"),
            ("tok\u{200b}", "Bearer tok\u{200b}"),
            ("tok\u{0}", "Bearer tok\u{0}"),
            ("tok\tx y", "Bearer tok\tx"),
            // No token for Go (anonymous): left for the bearer parser to refuse.
            ("\n", "Bearer "),
            (" tok", "Bearer  tok"),
        ];
        for (token, want) in cases {
            assert_eq!(review_authorization(token), want, "{token:?}");
        }
    }

    #[test]
    fn summarize_body_is_gos_summarize_data() {
        let long_json = format!("{{{}", "a".repeat(40));
        // The cut at 30 bytes falls inside `€`: one U+FFFD per byte of it, as Go's JSON encoder
        // writes the string (kube-apiserver's answers).
        let cut_char = format!(r#"{{"kind":5,"x":"{}€€€€"}}"#, "a".repeat(13));
        let mut invalid = br#"{"kind":5,"x":""#.to_vec();
        invalid.extend_from_slice(b"\xff\xfe\xfd\xfc");
        invalid.extend_from_slice(&[b'a'; 20]);
        let cases: [(&[u8], String); 8] = [
            (b"", "<empty>".into()),
            (b" \t\r\n", "20090d0a".into()),
            (b"{\"a\":1}", "{\"a\":1}".into()),
            (long_json.as_bytes(), format!("{{{} ...", "a".repeat(29))),
            (&[0xff; 31], format!("{} ...", "ff".repeat(30))),
            (
                cut_char.as_bytes(),
                format!(
                    r#"{{"kind":5,"x":"{}{} ..."#,
                    "a".repeat(13),
                    "\u{fffd}".repeat(2)
                ),
            ),
            (
                &invalid,
                format!(
                    r#"{{"kind":5,"x":"{}{} ..."#,
                    "\u{fffd}".repeat(4),
                    "a".repeat(11)
                ),
            ),
            (br#"{"x":"\ud800"}"#, r#"{"x":"\ud800"}"#.into()),
        ];
        for (body, want) in cases {
            assert_eq!(summarize_body(body), want, "{body:?}");
        }
    }

    #[test]
    fn rfc3339_vectors() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_795_334_400, "2026-11-22T08:00:00Z"),
            (4_102_444_799, "2099-12-31T23:59:59Z"),
        ];
        for (secs, want) in cases {
            assert_eq!(rfc3339(secs), want, "{secs}");
        }
    }

    /// An authenticator that answers for audiences the review did not ask for is
    /// kube-apiserver's `NewInternalError("error validating audiences")`, byte for byte. (No
    /// authenticator `serve` assembles does that: it is a guard, reached here with a custom
    /// chain.)
    #[tokio::test]
    async fn token_review_audience_mismatch_is_kubernetes_internal_error() {
        use kube_authn::authenticator::{Response as AuthResponse, SyncTokenFn};
        use kube_authn::chain::ChainBuilder;
        use kube_authn::middleware::Authenticated;
        let chain = ChainBuilder::new()
            .token(SyncTokenFn::new(|_: &str, _: &Context| {
                Ok(Some(
                    AuthResponse::new(Arc::new(UserInfo::new("x")))
                        .with_audiences(Audiences::from(["other"])),
                ))
            }))
            .build();
        let app = Arc::new(App {
            review_chain: chain,
            api_audiences: Audiences::default(),
            token_review_groups: vec!["system:masters".into()],
            request_timeout: std::time::Duration::from_secs(5),
            inflight: None,
            metrics: Arc::new(|_: &mut String| {}),
        });
        let mut req = Request::post("/apis/authentication.k8s.io/v1/tokenreviews")
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from_static(
                br#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"t","audiences":["api"]}}"#,
            )))
            .unwrap();
        req.extensions_mut().insert(Authenticated::new(
            Arc::new(UserInfo::builder("admin").group("system:masters").build()),
            Audiences::default(),
        ));
        let res = app.handle(req).await;
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = http_body_util::BodyExt::collect(res.into_body())
            .await
            .unwrap()
            .to_bytes();
        assert_eq!(
            std::str::from_utf8(&body).unwrap(),
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Internal error occurred: error validating audiences\",\"reason\":\"InternalError\",\"details\":{\"causes\":[{\"message\":\"error validating audiences\"}]},\"code\":500}\n"
        );
    }

    /// kube-apiserver's `RequestInfoFactory.NewRequestInfo` on each path: resource request or
    /// not.
    #[test]
    fn resource_form_is_request_infos() {
        for (path, resource) in [
            ("/nope", false),
            ("/", false),
            ("/api", false),
            ("/api/v1", false),
            ("/api/v1/pods", true),
            // Go trims the outer slashes only: `api`, ``, `v1` are three parts.
            ("//api//v1/", true),
            ("/api/v1/", false),
            ("/apis", false),
            ("/apis/authentication.k8s.io", false),
            ("/apis/authentication.k8s.io/v1", false),
            ("/apis/authentication.k8s.io/v1/", false),
            ("/apis/authentication.k8s.io/v1/nope", true),
            ("/apis/g/v/namespaces/ns/x", true),
            ("/apisx/g/v/r", false),
            ("/healthz/x/y/z", false),
        ] {
            assert_eq!(resource_form(path.as_bytes()), resource, "{path}");
        }
    }

    /// Who gets what for a path nothing serves.
    #[tokio::test]
    async fn unknown_paths_answer_as_kube_apiserver_does() {
        let admin = Some(Arc::new(UserInfo::new("admin")));
        // (name, caller, method, decoded path, status, a part of the body)
        type Case<'a> = (
            &'a str,
            Option<Arc<UserInfo>>,
            Method,
            &'a [u8],
            u16,
            &'a str,
        );
        let cases: [Case<'_>; 7] = [
            (
                "admin, non-resource",
                admin.clone(),
                Method::GET,
                b"/nope",
                404,
                "404 page not found\n",
            ),
            (
                "anonymous, non-resource, entities",
                None,
                Method::DELETE,
                b"/a<b>&c",
                403,
                r#""message":"forbidden: User \"system:anonymous\" cannot delete path \"/a\u0026lt;b\u0026gt;\u0026amp;c\"""#,
            ),
            (
                "anonymous user, bytes",
                Some(UserInfo::anonymous()),
                Method::GET,
                b"/x\xff",
                403,
                r#"cannot get path \"/x\\xff\"""#,
            ),
            (
                "admin, resource form",
                admin.clone(),
                Method::GET,
                b"/api/v1/pods",
                404,
                r#""reason":"NotFound""#,
            ),
            (
                "anonymous, resource form",
                None,
                Method::GET,
                b"/api/v1/pods",
                403,
                r#""message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope""#,
            ),
            (
                "anonymous user, resource form",
                Some(UserInfo::anonymous()),
                Method::GET,
                b"/api/v1/pods",
                403,
                r#""reason":"Forbidden""#,
            ),
            (
                "admin, RequestInfo error",
                admin.clone(),
                Method::GET,
                b"/api/v1/watch",
                500,
                "failed to create RequestInfo",
            ),
        ];
        for (name, user, method, path, code, body) in cases {
            let uri: http::Uri = "/".parse().unwrap();
            let response = unknown_path(user, &method, path, &uri, false);
            assert_eq!(response.status().as_u16(), code, "{name}");
            let bytes = http_body_util::BodyExt::collect(response.into_body())
                .await
                .unwrap()
                .to_bytes();
            let text = std::str::from_utf8(&bytes).unwrap();
            assert!(text.contains(body), "{name}: {text}");
        }
    }

    /// The anonymous caller's answer on a resource-form path nothing serves, against the
    /// output of a Go program (/tmp/fix-rbac) running k8s.io/apiserver v0.37.2's
    /// `RequestInfoFactory` (through `filters.WithRequestInfo`) and
    /// `responsewriters.ForbiddenStatusError` on each request: the 403's message and details,
    /// or the filter's 500 body.
    #[tokio::test]
    async fn unknown_resource_form_paths_answer_as_request_info_and_rbac_do() {
        // (method, request target, Go's status (200: the handler ran), body)
        let cases: [(&str, &str, u16, &str); 32] = [
            (
                "GET",
                "/api/v1/pods",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/namespaces/ns/pods/p",
                200,
                r#"{"details":{"name":"p","kind":"pods"},"message":"pods \"p\" is forbidden: User \"system:anonymous\" cannot get resource \"pods\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "GET",
                "/apis/apps/v1/deployments",
                200,
                r#"{"details":{"group":"apps","kind":"deployments"},"message":"deployments.apps is forbidden: User \"system:anonymous\" cannot list resource \"deployments\" in API group \"apps\" at the cluster scope"}"#,
            ),
            (
                "POST",
                "/apis/apps/v1/namespaces/ns/deployments",
                200,
                r#"{"details":{"group":"apps","kind":"deployments"},"message":"deployments.apps is forbidden: User \"system:anonymous\" cannot create resource \"deployments\" in API group \"apps\" in the namespace \"ns\""}"#,
            ),
            (
                "PUT",
                "/apis/apps/v1/namespaces/ns/deployments/d/scale",
                200,
                r#"{"details":{"name":"d","group":"apps","kind":"deployments"},"message":"deployments.apps \"d\" is forbidden: User \"system:anonymous\" cannot update resource \"deployments/scale\" in API group \"apps\" in the namespace \"ns\""}"#,
            ),
            (
                "PATCH",
                "/api/v1/namespaces/ns/status",
                200,
                r#"{"details":{"name":"ns","kind":"namespaces"},"message":"namespaces \"ns\" is forbidden: User \"system:anonymous\" cannot patch resource \"namespaces/status\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "PUT",
                "/api/v1/namespaces/ns/finalize",
                200,
                r#"{"details":{"name":"ns","kind":"namespaces"},"message":"namespaces \"ns\" is forbidden: User \"system:anonymous\" cannot update resource \"namespaces/finalize\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "GET",
                "/api/v1/namespaces",
                200,
                r#"{"details":{"kind":"namespaces"},"message":"namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/namespaces/ns",
                200,
                r#"{"details":{"name":"ns","kind":"namespaces"},"message":"namespaces \"ns\" is forbidden: User \"system:anonymous\" cannot get resource \"namespaces\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "GET",
                "/api/v1/pods?watch=true",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot watch resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods?watch=false",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods?watch=1",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot watch resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods?watch=0",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods?watch=",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot watch resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp",
                200,
                r#"{"details":{"name":"p","kind":"pods"},"message":"pods \"p\" is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "GET",
                "/api/v1/pods?fieldSelector=metadata.name%3D..&watch=1",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot watch resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods?fieldSelector=a%3D%3Db,metadata.name%3D%3Dx%5C%2Cy",
                200,
                r#"{"details":{"name":"x,y","kind":"pods"},"message":"pods \"x,y\" is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods?fieldSelector=metadata.name%3Dp&limit=x&watch=yes",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot watch resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods?fieldSelector=metadata.name!%3Dp",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "DELETE",
                "/api/v1/namespaces/ns/pods",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot deletecollection resource \"pods\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "DELETE",
                "/api/v1/namespaces/ns/pods/p",
                200,
                r#"{"details":{"name":"p","kind":"pods"},"message":"pods \"p\" is forbidden: User \"system:anonymous\" cannot delete resource \"pods\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "OPTIONS",
                "/apis/g.io/v1/things",
                200,
                r#"{"details":{"group":"g.io","kind":"things"},"message":"things.g.io is forbidden: User \"system:anonymous\" cannot  resource \"things\" in API group \"g.io\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/proxy/nodes/n/x/y",
                200,
                r#"{"details":{"name":"n","kind":"nodes"},"message":"nodes \"n\" is forbidden: User \"system:anonymous\" cannot proxy resource \"nodes\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/watch/namespaces/ns/pods/p",
                200,
                r#"{"details":{"name":"p","kind":"pods"},"message":"pods \"p\" is forbidden: User \"system:anonymous\" cannot watch resource \"pods\" in API group \"\" in the namespace \"ns\""}"#,
            ),
            (
                "GET",
                "/api/v1/watch",
                500,
                r#"Internal Server Error: "/api/v1/watch": failed to create RequestInfo: unable to determine kind and namespace from url, /api/v1/watch
"#,
            ),
            (
                "GET",
                "/apis/g/v1/proxy/?a=%3Cb%3E&c",
                500,
                r#"Internal Server Error: "/apis/g/v1/proxy/?a=%3Cb%3E&amp;c": failed to create RequestInfo: unable to determine kind and namespace from url, /apis/g/v1/proxy/?a=%3Cb%3E&amp;c
"#,
            ),
            (
                "GET",
                "/api/v1/pods/",
                200,
                r#"{"details":{"kind":"pods"},"message":"pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "//api//v1/",
                200,
                r#"{"details":{"kind":"v1"},"message":"v1 is forbidden: User \"system:anonymous\" cannot list resource \"v1\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1//x",
                200,
                r#"{"details":{"name":"x"},"message":"forbidden: User \"system:anonymous\" cannot get resource \"\" in API group \"\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/namespaces/a%3Cb%3E/pods/%26n%3C%3E",
                200,
                r#"{"details":{"name":"\u0026n\u003c\u003e","kind":"pods"},"message":"pods \"\u0026n\u003c\u003e\" is forbidden: User \"system:anonymous\" cannot get resource \"pods\" in API group \"\" in the namespace \"a\u0026lt;b\u0026gt;\""}"#,
            ),
            (
                "HEAD",
                "/apis/authentication.k8s.io/v1/nope",
                200,
                r#"{"details":{"group":"authentication.k8s.io","kind":"nope"},"message":"nope.authentication.k8s.io is forbidden: User \"system:anonymous\" cannot list resource \"nope\" in API group \"authentication.k8s.io\" at the cluster scope"}"#,
            ),
            (
                "GET",
                "/api/v1/pods/%FF",
                200,
                r#"{"details":{"name":"\ufffd","kind":"pods"},"message":"pods \"\\xff\" is forbidden: User \"system:anonymous\" cannot get resource \"pods\" in API group \"\" at the cluster scope"}"#,
            ),
        ];
        for (method, target, code, want) in cases {
            let uri: http::Uri = target.parse().unwrap();
            let path = go_url_path(uri.path()).unwrap();
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let response = unknown_path(None, &method, &path, &uri, false);
            let status = response.status().as_u16();
            let content_type = response.headers()[CONTENT_TYPE].clone();
            let nosniff = response.headers()["x-content-type-options"].clone();
            assert_eq!(nosniff, "nosniff", "{target}");
            let bytes = http_body_util::BodyExt::collect(response.into_body())
                .await
                .unwrap()
                .to_bytes();
            if code == 500 {
                assert_eq!(status, 500, "{target}");
                assert_eq!(content_type, "text/plain; charset=utf-8", "{target}");
                assert_eq!(std::str::from_utf8(&bytes).unwrap(), want, "{target}");
                continue;
            }
            assert_eq!(status, 403, "{target}");
            let got: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let want: serde_json::Value = serde_json::from_str(want).unwrap();
            assert_eq!(got["reason"], "Forbidden", "{target}");
            assert_eq!(got["message"], want["message"], "{target}");
            assert_eq!(got["details"], want["details"], "{target}");
        }
        // An authenticated caller: the JSON NotFound.
        let uri: http::Uri = "/api/v1/pods?watch=1".parse().unwrap();
        let admin = Some(Arc::new(UserInfo::new("admin")));
        let response = unknown_path(admin, &Method::GET, b"/api/v1/pods", &uri, false);
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn go_url_path_decodes_as_go_does() {
        let cases: [(&str, Option<&[u8]>); 9] = [
            ("/apis", Some(b"/apis")),
            ("/ap%69s", Some(b"/apis")),
            (
                "/apis%2Fauthentication.k8s.io",
                Some(b"/apis/authentication.k8s.io"),
            ),
            ("/a+b%20c", Some(b"/a+b c")),
            // The bytes, as Go's `url.URL.Path` holds them: not U+FFFD.
            ("/%FF%e4%BB%8A", Some(b"/\xff\xe4\xbb\x8a")),
            ("/%zz", None),
            ("/%", None),
            ("/%2", None),
            ("/%2g", None),
        ];
        for (raw, want) in cases {
            assert_eq!(go_url_path(raw).as_deref(), want, "{raw}");
        }
        // No `%`: the request's own path, not a copy.
        assert!(matches!(
            go_url_path("/apis/x+y"),
            Some(Cow::Borrowed(b"/apis/x+y"))
        ));
    }

    #[test]
    fn go_json_surrogates_are_encoding_jsons() {
        for (body, want) in [
            (r#""a\ud800b""#, r#""a\ufffdb""#),
            (r#""\udc00""#, r#""\ufffd""#),
            (r#""\ud800\u0041""#, r#""\ufffd\u0041""#),
            (r#""\ud800\ud800\udc00""#, r#""\ufffd\ud800\udc00""#),
            (r#""\ud83d\ude00""#, r#""\ud83d\ude00""#),
            (r#""\\ud800""#, r#""\\ud800""#),
            (r#""\ud80""#, r#""\ud80""#),
            (r#""x\"#, r#""x\"#),
        ] {
            let got = go_json_surrogates(Bytes::from_static(body.as_bytes()));
            assert_eq!(std::str::from_utf8(&got).unwrap(), want, "{body}");
        }
        // Nothing to replace: the same buffer.
        let body = Bytes::from_static(br#"{"a":"\u00e9"}"#);
        assert_eq!(go_json_surrogates(body.clone()).as_ptr(), body.as_ptr());
        assert_eq!(go_json_text(body.clone()).as_ptr(), body.as_ptr());
    }

    /// Go's `encoding/json` (1.26) on `{"a":"<bytes>"}`: each byte outside valid UTF-8 is one
    /// U+FFFD, a truncated four-byte sequence three.
    #[test]
    fn invalid_utf8_is_read_as_go_reads_it() {
        let fffd = "\u{fffd}";
        for (bytes, want) in [
            (&b"a\xffb"[..], format!("a{fffd}b")),
            (b"\xf0\x9f\x98", fffd.repeat(3)),
            (b"\xc3", fffd.to_owned()),
            (b"\xc3\xa9\xed\xa0\x80", format!("\u{e9}{}", fffd.repeat(3))),
            (b"\xe9t\xe9", format!("{fffd}t{fffd}")),
        ] {
            let mut body = br#"{"a":""#.to_vec();
            body.extend_from_slice(bytes);
            body.extend_from_slice(br#"\ud800"}"#);
            let got = go_json_text(Bytes::from(body));
            let value: serde_json::Value = serde_json::from_slice(&got).unwrap();
            assert_eq!(value["a"], format!("{want}{fffd}"), "{bytes:?}");
        }
    }

    #[test]
    fn dedup_owner_references_is_the_create_handlers() {
        let r = |name: &str, uid: &str, controller: Option<bool>| OwnerReference {
            name: name.into(),
            uid: uid.into(),
            controller,
            ..OwnerReference::default()
        };
        let mut refs = vec![
            r("a", "1", None),
            r("a", "1", None),
            r("b", "1", None),
            r("c", "2", Some(false)),
            r("c", "2", None),
            r("a", "1", None),
            r("c", "2", Some(false)),
        ];
        let warning = dedup_owner_references(&mut refs);
        assert_eq!(
            refs,
            [
                r("a", "1", None),
                r("b", "1", None),
                r("c", "2", Some(false)),
                r("c", "2", None)
            ]
        );
        assert_eq!(
            warning.as_deref(),
            Some(
                ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: 1, 1, 2"
            )
        );
        assert_eq!(dedup_owner_references(&mut refs), None);
    }
}
