//! What the middleware answers when a request is not authenticated.

use std::sync::LazyLock;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, USER_AGENT, WWW_AUTHENTICATE};
use http::request::Parts;
use http::{HeaderValue, StatusCode, Version};

use crate::api::Status;
use crate::authenticator::Schemes;
use crate::error::{Error, ErrorKind};

/// Why a request was refused.
///
/// ```
/// use kube_authn::middleware::Reason;
/// let r = Reason::NotAuthenticated;
/// assert!(r.error().is_none());
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Reason<'a> {
    /// No authenticator accepted the request and none returned an error (no credential, or a
    /// scheme nobody handles, and anonymous disabled or not allowed for this path).
    NotAuthenticated,
    /// The chain returned an error: a credential was presented and is bad, or a backend failed.
    Error(&'a Error),
    /// The user was authenticated, but for audiences that do not intersect the API audiences.
    AudienceMismatch(&'a Error),
}

impl<'a> Reason<'a> {
    /// The error, if there is one (its text never contains the credential).
    ///
    /// ```
    /// use kube_authn::{middleware::Reason, Error};
    /// let e = Error::msg("invalid bearer token");
    /// assert_eq!(Reason::Error(&e).error().unwrap().to_string(), "invalid bearer token");
    /// ```
    pub fn error(&self) -> Option<&'a Error> {
        match self {
            Reason::NotAuthenticated => None,
            Reason::Error(e) | Reason::AudienceMismatch(e) => Some(e),
        }
    }
}

/// Everything a [`OnFailure`] handler may look at.
///
/// ```
/// use kube_authn::middleware::{Failure, Reason};
/// use kube_authn::authenticator::Schemes;
/// let (parts, _) = http::Request::get("/").body(()).unwrap().into_parts();
/// let f = Failure::new(&parts, Reason::NotAuthenticated, Schemes::BEARER);
/// assert!(f.schemes().bearer());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Failure<'a> {
    request: &'a Parts,
    reason: Reason<'a>,
    schemes: Schemes,
}

impl<'a> Failure<'a> {
    /// A failure for `request` (useful to test your own handler).
    ///
    /// ```
    /// use kube_authn::middleware::{Failure, Reason};
    /// let (parts, _) = http::Request::get("/").body(()).unwrap().into_parts();
    /// let _ = Failure::new(&parts, Reason::NotAuthenticated, Default::default());
    /// ```
    pub fn new(request: &'a Parts, reason: Reason<'a>, schemes: Schemes) -> Self {
        Self {
            request,
            reason,
            schemes,
        }
    }

    /// The request head. Credentials are still in it: never log its headers.
    ///
    /// ```
    /// use kube_authn::middleware::{Failure, Reason};
    /// let (parts, _) = http::Request::get("/x").body(()).unwrap().into_parts();
    /// assert_eq!(Failure::new(&parts, Reason::NotAuthenticated, Default::default()).request().uri.path(), "/x");
    /// ```
    pub fn request(&self) -> &'a Parts {
        self.request
    }

    /// Why the request was refused.
    ///
    /// ```
    /// use kube_authn::middleware::{Failure, Reason};
    /// let (parts, _) = http::Request::get("/").body(()).unwrap().into_parts();
    /// assert!(matches!(Failure::new(&parts, Reason::NotAuthenticated, Default::default()).reason(), Reason::NotAuthenticated));
    /// ```
    pub fn reason(&self) -> Reason<'a> {
        self.reason
    }

    /// The `Authorization` schemes the chain accepts.
    ///
    /// ```
    /// use kube_authn::{authenticator::Schemes, middleware::{Failure, Reason}};
    /// let (parts, _) = http::Request::get("/").body(()).unwrap().into_parts();
    /// assert!(Failure::new(&parts, Reason::NotAuthenticated, Schemes::BASIC).schemes().basic());
    /// ```
    pub fn schemes(&self) -> Schemes {
        self.schemes
    }
}

/// Builds the response for a request that was not authenticated. The body is returned as
/// [`Bytes`]; the middleware wraps it in [`AuthBody`](super::AuthBody).
///
/// ```
/// use bytes::Bytes;
/// use kube_authn::middleware::{Failure, OnFailure};
///
/// /// A plain-text 401.
/// #[derive(Clone)]
/// struct Plain;
/// impl OnFailure for Plain {
///     fn on_failure(&self, _: &Failure<'_>) -> http::Response<Bytes> {
///         let mut r = http::Response::new(Bytes::from_static(b"go away\n"));
///         *r.status_mut() = http::StatusCode::UNAUTHORIZED;
///         r
///     }
/// }
/// ```
pub trait OnFailure: Send + Sync + 'static {
    /// The response for `failure`: called once per refused request, with the request head
    /// and why it was refused.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use kube_authn::authenticator::Schemes;
    /// use kube_authn::middleware::{Failure, OnFailure, Reason};
    ///
    /// /// A plain-text 401 that names the refused path.
    /// struct Plain;
    /// impl OnFailure for Plain {
    ///     fn on_failure(&self, failure: &Failure<'_>) -> http::Response<Bytes> {
    ///         let text = format!("not authenticated for {}\n", failure.request().uri.path());
    ///         let mut r = http::Response::new(Bytes::from(text));
    ///         *r.status_mut() = http::StatusCode::UNAUTHORIZED;
    ///         r
    ///     }
    /// }
    /// let (parts, _) = http::Request::get("/api/v1/pods").body(()).unwrap().into_parts();
    /// let res = Plain.on_failure(&Failure::new(&parts, Reason::NotAuthenticated, Schemes::BEARER));
    /// assert_eq!(res.status(), 401);
    /// assert_eq!(res.body(), "not authenticated for /api/v1/pods\n");
    /// ```
    fn on_failure(&self, failure: &Failure<'_>) -> http::Response<Bytes>;
}

/// kube-apiserver's answer (`Unauthorized`): `401` with a `v1` `Status` body in the type the
/// `Accept` header negotiates, as apimachinery's `ErrorNegotiated` writes it: JSON (the
/// default), compact with a trailing newline, or indented without one when the client asked
/// for `?pretty=true` or looks like a person (`User-Agent` starting with `curl`, `Wget` or
/// `Mozilla/5.0`), as apiserver's `isPrettyPrint` decides, or the accepted `Accept` clause
/// says `pretty=1`; YAML (`application/yaml`); or Kubernetes' protobuf envelope
/// (`application/vnd.kubernetes.protobuf`). An `Accept` header that names no type
/// kube-apiserver writes (`text/plain`) gets the indented JSON (Go's `WriteRawJSON`
/// fallback). `Cache-Control: no-cache, private` as
/// `WithCacheControl` sets it, and `WWW-Authenticate: Basic realm="kubernetes-master"` when
/// the chain accepts Basic (Kubernetes 1.6–1.18, while basic auth existed). There is no
/// `Bearer` challenge, as in every Kubernetes version.
///
/// ```
/// use kube_authn::authenticator::Schemes;
/// use kube_authn::middleware::{Failure, OnFailure, Reason, Unauthorized};
/// let (parts, _) = http::Request::get("/api").body(()).unwrap().into_parts();
/// let r = Unauthorized.on_failure(&Failure::new(&parts, Reason::NotAuthenticated, Schemes::BEARER));
/// assert_eq!(r.status(), 401);
/// assert_eq!(r.body().as_ref(), &br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}
/// "#[..]);
/// let (parts, _) = http::Request::get("/api").header("accept", "application/yaml").body(()).unwrap().into_parts();
/// let r = Unauthorized.on_failure(&Failure::new(&parts, Reason::NotAuthenticated, Schemes::BEARER));
/// assert_eq!(r.headers()["content-type"], "application/yaml");
/// assert!(r.body().starts_with(b"apiVersion: v1\ncode: 401\nkind: Status\n"));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Unauthorized;

static COMPACT_401: LazyLock<Bytes> =
    LazyLock::new(|| status_body(&Status::failure(401, "Unauthorized", "Unauthorized"), false));
static PRETTY_401: LazyLock<Bytes> =
    LazyLock::new(|| status_body(&Status::failure(401, "Unauthorized", "Unauthorized"), true));

/// The 401 `Status` as apimachinery's YAML serializer writes it (JSON converted by
/// `sigs.k8s.io/yaml`: keys sorted, a trailing newline).
const YAML_401: &[u8] = b"apiVersion: v1\ncode: 401\nkind: Status\nmessage: Unauthorized\nmetadata: {}\nreason: Unauthorized\nstatus: Failure\n";

/// The 401 `Status` in Kubernetes' protobuf envelope: the magic `k8s\0`, then a
/// `runtime.Unknown` holding the type (`v1`, `Status`) and the `Status` message (empty list
/// metadata strings, `Failure`, `Unauthorized` twice, code 401), with empty content encoding
/// and type. Checked byte for byte against k8s.io/apiserver by the conformance vectors.
const PROTOBUF_401: &[u8] = b"k8s\0\n\x0c\n\x02v1\x12\x06Status\x120\n\x06\n\0\x12\0\x1a\0\x12\x07Failure\x1a\x0cUnauthorized\"\x0cUnauthorized0\x91\x03\x1a\0\"\0";

/// A `Status` as apimachinery writes it: compact with a newline (`json.Encoder`), or pretty
/// with two-space indents and no newline (`json.MarshalIndent(obj, "", "  ")`).
fn status_body(status: &Status, pretty: bool) -> Bytes {
    let result = if pretty {
        serde_json::to_vec_pretty(status)
    } else {
        serde_json::to_vec(status).map(|mut v| {
            v.push(b'\n');
            v
        })
    };
    // Serialising a struct of strings and integers cannot fail.
    Bytes::from(result.unwrap_or_default())
}

fn unhex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Go `url.QueryUnescape`: `+` is a space, `%XX` a byte; `None` on a bad escape.
fn query_unescape(s: &str) -> Option<std::borrow::Cow<'_, [u8]>> {
    if !s.bytes().any(|b| b == b'%' || b == b'+') {
        return Some(std::borrow::Cow::Borrowed(s.as_bytes()));
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = unhex(*b.get(i + 1)?)?;
                let lo = unhex(*b.get(i + 2)?)?;
                out.push(hi << 4 | lo);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Some(std::borrow::Cow::Owned(out))
}

/// Go `strconv.ParseBool`.
fn go_parse_bool(v: &[u8]) -> Option<bool> {
    match v {
        b"1" | b"t" | b"T" | b"true" | b"TRUE" | b"True" => Some(true),
        b"0" | b"f" | b"F" | b"false" | b"FALSE" | b"False" => Some(false),
        _ => None,
    }
}

/// apiserver `isPrettyPrint`: a non-empty `pretty` query value decides (an unparsable one is
/// `false`); otherwise the User-Agent does.
pub(crate) fn is_pretty_print(req: &Parts) -> bool {
    wants_pretty(&req.uri, &req.headers)
}

/// Whether kube-apiserver would pretty-print a response to this request (apiserver
/// `isPrettyPrint`): a non-empty `pretty` query value decides, parsed as a Go bool (an
/// unparsable value means no); otherwise a `curl`, `Wget` or `Mozilla/5.0` User-Agent does.
///
/// ```
/// use kube_authn::middleware::wants_pretty;
/// let uri: http::Uri = "/x?pretty=nonsense".parse().unwrap();
/// let mut headers = http::HeaderMap::new();
/// headers.insert("user-agent", "curl/8.5.0".parse().unwrap());
/// assert!(!wants_pretty(&uri, &headers));
/// assert!(wants_pretty(&"/x".parse().unwrap(), &headers));
/// ```
pub fn wants_pretty(uri: &http::Uri, headers: &http::HeaderMap) -> bool {
    if let Some(query) = uri.query() {
        if query.contains("pretty") {
            // url.ParseQuery: `&`-separated, pairs with `;` rejected, first value wins.
            let value = query
                .split('&')
                .filter(|pair| !pair.is_empty() && !pair.contains(';'))
                .filter_map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    let k = query_unescape(k)?;
                    let v = query_unescape(v)?;
                    (k.as_ref() == b"pretty").then_some(v)
                })
                .next();
            if let Some(v) = value {
                if !v.is_empty() {
                    return go_parse_bool(&v).unwrap_or(false);
                }
            }
        }
    }
    let ua = headers.get(USER_AGENT).map_or(&b""[..], |v| v.as_bytes());
    ua.starts_with(b"curl") || ua.starts_with(b"Wget") || ua.starts_with(b"Mozilla/5.0")
}

const BASIC_CHALLENGE: HeaderValue = HeaderValue::from_static("Basic realm=\"kubernetes-master\"");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
const YAML: HeaderValue = HeaderValue::from_static("application/yaml");
const PROTOBUF: HeaderValue = HeaderValue::from_static("application/vnd.kubernetes.protobuf");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache, private");

fn status_response(
    status: StatusCode,
    content_type: HeaderValue,
    body: Bytes,
) -> http::Response<Bytes> {
    let mut r = http::Response::new(body);
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, content_type);
    r.headers_mut().insert(CACHE_CONTROL, NO_CACHE);
    r
}

/// The media types kube-apiserver's codecs can write a `Status` in (`SupportedMediaTypes`).
const STATUS_MEDIA_TYPES: [(&str, &str); 3] = [
    ("application", "json"),
    ("application", "yaml"),
    ("application", "vnd.kubernetes.protobuf"),
];

/// The type a negotiated `Status` is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatusType {
    /// JSON; `pretty` when the accepted clause says `pretty=1`.
    Json {
        pretty: bool,
    },
    Yaml,
    Protobuf,
}

/// apimachinery's `NegotiateMediaTypeOptions` for a `Status` answer: the type of the first
/// clause of the `Accept` header that matches a type the server writes (no header, or an
/// empty one, means JSON), with that clause's `pretty=1` for JSON; `None` when none matches,
/// in which case `WriteObjectNegotiated` falls back to `WriteRawJSON` (indented JSON).
/// Clauses are read as goautoneg's `ParseAccept` reads them (spaces trimmed, `*` alone is
/// `*/*`, malformed ranges and parameters skipped, `q` parsed as a float32 or 0) and ordered
/// by its comparator with Go's insertion sort (what `sort.Sort` does for up to 12 clauses);
/// types are compared case-sensitively; a clause asking for a conversion (`as`, `g`, `v`) or a
/// stream other than JSON's `watch` is not accepted. No allocation for up to 12 clauses.
fn negotiate_status(headers: &http::HeaderMap) -> Option<StatusType> {
    const PLAIN: Option<StatusType> = Some(StatusType::Json { pretty: false });
    let value = match headers.get(http::header::ACCEPT) {
        None => return PLAIN,
        Some(v) if v.is_empty() => return PLAIN,
        Some(v) => v,
    };
    // What clients send most: no parsing.
    if matches!(
        value.as_bytes(),
        b"application/json" | b"*/*" | b"application/json, */*"
    ) {
        return PLAIN;
    }
    let accept: std::borrow::Cow<'_, str> = match value.to_str() {
        Ok(s) => s.into(),
        Err(_) => String::from_utf8_lossy(value.as_bytes())
            .into_owned()
            .into(),
    };
    const INLINE: usize = 12;
    let mut inline = [AcceptClause::NONE; INLINE];
    let mut spilled: Vec<AcceptClause<'_>> = Vec::new();
    let mut len = 0;
    for part in accept.split(',') {
        let Some(clause) = AcceptClause::parse(part) else {
            continue;
        };
        if len < INLINE {
            inline[len] = clause;
        } else {
            if spilled.is_empty() {
                spilled.extend_from_slice(&inline);
            }
            spilled.push(clause);
        }
        len += 1;
    }
    let clauses: &mut [AcceptClause<'_>] = if len > INLINE {
        &mut spilled
    } else {
        &mut inline[..len]
    };
    // Go's `insertionSort` with goautoneg's `Less` (not a strict weak order, so the algorithm
    // matters: this is the one Go runs for up to 12 clauses).
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && clauses[j].less(&clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    for clause in clauses.iter() {
        for (typ, sub) in STATUS_MEDIA_TYPES {
            let matches = (clause.typ == typ && (clause.sub == sub || clause.sub == "*"))
                || (clause.typ == "*" && clause.sub == "*");
            if matches {
                if let Some(pretty) = clause.acceptable(sub) {
                    return Some(match sub {
                        "json" => StatusType::Json { pretty },
                        "yaml" => StatusType::Yaml,
                        _ => StatusType::Protobuf,
                    });
                }
            }
        }
    }
    None
}

/// One clause of an `Accept` header, as goautoneg's `ParseAccept` reads it.
#[derive(Clone, Copy)]
struct AcceptClause<'a> {
    typ: &'a str,
    sub: &'a str,
    q: f32,
    /// The parameters' text (after the first `;`), read when the clause is considered.
    params: &'a str,
}

impl<'a> AcceptClause<'a> {
    const NONE: AcceptClause<'static> = AcceptClause {
        typ: "",
        sub: "",
        q: 0.0,
        params: "",
    };

    fn parse(part: &'a str) -> Option<Self> {
        // Go's `nextSplitElement`: the text before the first separator and the rest ("" when
        // there is none, or nothing after it).
        fn next(s: &str, sep: char) -> (&str, &str) {
            s.split_once(sep).unwrap_or((s, ""))
        }
        let part = part.trim_matches(' ');
        let (range, params) = next(part, ';');
        let (typ, rest) = next(range, '/');
        let typ = typ.trim_matches(' ');
        let sub = if rest.is_empty() {
            // `*` alone (or `*/`) is `*/*`; `text` or `text/` is skipped.
            if typ != "*" {
                return None;
            }
            "*"
        } else {
            let (sub, more) = next(rest, '/');
            if !more.is_empty() {
                return None;
            }
            sub.trim_matches(' ')
        };
        let mut q = 1.0;
        for (k, v) in Self::pairs(params) {
            if k == "q" {
                q = v.parse::<f32>().unwrap_or(0.0);
            }
        }
        Some(AcceptClause {
            typ,
            sub,
            q,
            params,
        })
    }

    /// The `key=value` parameters goautoneg keeps (a segment without `=`, or with two, is
    /// skipped); keys trimmed of spaces, `q`'s value not (Go parses it untrimmed).
    fn pairs(params: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
        params
            .split(';')
            .filter(|s| !s.is_empty())
            .filter_map(|seg| {
                let (k, v) = seg.split_once('=')?;
                if v.contains('=') {
                    return None;
                }
                let k = k.trim_matches(' ');
                Some((k, if k == "q" { v } else { v.trim_matches(' ') }))
            })
    }

    /// goautoneg's `Less`.
    fn less(&self, other: &Self) -> bool {
        self.q > other.q
            || (self.typ != "*" && other.typ == "*")
            || (self.sub != "*" && other.sub == "*")
    }

    /// apimachinery's `acceptMediaTypeOptions` with the default endpoint restrictions:
    /// `Some(pretty)` if this clause can be served as `sub`, `None` if it asks for a conversion
    /// or a stream the endpoint does not allow. Repeated parameters: the last one counts (Go
    /// keeps them in a map).
    fn acceptable(&self, sub: &str) -> Option<bool> {
        let mut pretty = false;
        for (k, v) in Self::pairs(self.params) {
            match k {
                "as" | "g" | "v" => return None,
                // Only `watch`, and only for types with a stream serializer (JSON, protobuf).
                "stream" if !v.is_empty() && (v != "watch" || sub == "yaml") => return None,
                // No server version is allowed by the default endpoint restrictions.
                "sv" if !v.is_empty() => return None,
                "pretty" => pretty = v == "1",
                _ => {}
            }
        }
        Some(pretty)
    }
}

impl OnFailure for Unauthorized {
    fn on_failure(&self, failure: &Failure<'_>) -> http::Response<Bytes> {
        let (content_type, body) = match negotiate_status(&failure.request().headers) {
            Some(StatusType::Yaml) => (YAML, Bytes::from_static(YAML_401)),
            Some(StatusType::Protobuf) => (PROTOBUF, Bytes::from_static(PROTOBUF_401)),
            Some(StatusType::Json { pretty }) if pretty || is_pretty_print(failure.request()) => {
                (JSON, PRETTY_401.clone())
            }
            Some(StatusType::Json { .. }) => (JSON, COMPACT_401.clone()),
            // No acceptable type: Go writes the Status with `WriteRawJSON` (indented).
            None => (JSON, PRETTY_401.clone()),
        };
        let mut r = status_response(StatusCode::UNAUTHORIZED, content_type, body);
        if failure.schemes().basic() {
            r.headers_mut().insert(WWW_AUTHENTICATE, BASIC_CHALLENGE);
        }
        r
    }
}

/// An opt-in `503 Service Unavailable` when the failure involves a backend that could not be
/// asked ([`ErrorKind::Unavailable`] anywhere in the error, for example a TokenReview webhook
/// that is down), so clients retry instead of discarding a credential that may be fine.
/// Every other failure goes to `F` (by default [`Unauthorized`]). kube-apiserver answers 401 in
/// all cases; this is a deliberate, opt-in difference.
///
/// The body is a `Status` with reason `ServiceUnavailable` and a fixed message (the error text
/// is logged, not sent), plus `Retry-After: 1`.
///
/// ```
/// use kube_authn::{authenticator::Schemes, Error, ErrorKind};
/// use kube_authn::middleware::{Failure, OnFailure, Reason, UnavailableAs503};
/// let (parts, _) = http::Request::get("/").body(()).unwrap().into_parts();
/// let down = Error::from_static(ErrorKind::Unavailable, "webhook down");
/// let r = UnavailableAs503::new().on_failure(&Failure::new(&parts, Reason::Error(&down), Schemes::BEARER));
/// assert_eq!(r.status(), 503);
/// let bad = Error::msg("invalid bearer token");
/// let r = UnavailableAs503::new().on_failure(&Failure::new(&parts, Reason::Error(&bad), Schemes::BEARER));
/// assert_eq!(r.status(), 401);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct UnavailableAs503<F = Unauthorized>(pub F);

impl UnavailableAs503<Unauthorized> {
    /// 503 for unavailable backends, Kubernetes' 401 otherwise.
    ///
    /// ```
    /// let _ = kube_authn::middleware::UnavailableAs503::new();
    /// ```
    pub fn new() -> Self {
        Self(Unauthorized)
    }
}

static COMPACT_503: LazyLock<Bytes> = LazyLock::new(|| {
    status_body(
        &Status::failure(
            503,
            "ServiceUnavailable",
            "the authentication backend is unavailable",
        ),
        false,
    )
});
static PRETTY_503: LazyLock<Bytes> = LazyLock::new(|| {
    status_body(
        &Status::failure(
            503,
            "ServiceUnavailable",
            "the authentication backend is unavailable",
        ),
        true,
    )
});

impl<F: OnFailure> OnFailure for UnavailableAs503<F> {
    fn on_failure(&self, failure: &Failure<'_>) -> http::Response<Bytes> {
        match failure.reason() {
            Reason::Error(e) if e.contains_kind(ErrorKind::Unavailable) => {
                let body = if is_pretty_print(failure.request()) {
                    PRETTY_503.clone()
                } else {
                    COMPACT_503.clone()
                };
                let mut r = status_response(StatusCode::SERVICE_UNAVAILABLE, JSON, body);
                r.headers_mut()
                    .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
                r
            }
            _ => self.0.on_failure(failure),
        }
    }
}

/// The gRPC answer for tonic (or any gRPC server): a trailers-only response with
/// `grpc-status: 16` (`UNAUTHENTICATED`) and `grpc-message: Unauthorized`, HTTP status 200 as
/// gRPC requires. With `unavailable_as_14`, failures caused by an unavailable backend are
/// `grpc-status: 14` (`UNAVAILABLE`) instead, which gRPC clients retry.
///
/// ```
/// use kube_authn::authenticator::Schemes;
/// use kube_authn::middleware::{Failure, GrpcUnauthenticated, OnFailure, Reason};
/// let (parts, _) = http::Request::post("/pkg.Svc/Method").body(()).unwrap().into_parts();
/// let r = GrpcUnauthenticated::default().on_failure(&Failure::new(&parts, Reason::NotAuthenticated, Schemes::BEARER));
/// assert_eq!(r.status(), 200);
/// assert_eq!(r.headers()["grpc-status"], "16");
/// assert_eq!(r.headers()["content-type"], "application/grpc");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct GrpcUnauthenticated {
    /// Answer `UNAVAILABLE` (14) when the error says a backend was unavailable.
    pub unavailable_as_14: bool,
}

impl OnFailure for GrpcUnauthenticated {
    fn on_failure(&self, failure: &Failure<'_>) -> http::Response<Bytes> {
        let unavailable = self.unavailable_as_14
            && matches!(failure.reason(), Reason::Error(e) if e.contains_kind(ErrorKind::Unavailable));
        let (code, message) = if unavailable {
            ("14", "authentication backend unavailable")
        } else {
            ("16", "Unauthorized")
        };
        let mut r = http::Response::new(Bytes::new());
        let h = r.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
        h.insert("grpc-status", HeaderValue::from_static(code));
        h.insert("grpc-message", HeaderValue::from_static(message));
        r
    }
}

/// Whether Kubernetes' HTTP/2 mitigation applies: the request is HTTP/2.
pub(crate) fn is_http2(req: &Parts) -> bool {
    req.version == Version::HTTP_2
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMPACT: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";
    const PRETTY: &str = "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"Unauthorized\",\n  \"reason\": \"Unauthorized\",\n  \"code\": 401\n}";

    #[test]
    fn bodies_are_exact() {
        assert_eq!(COMPACT.len(), 129);
        assert_eq!(COMPACT_401.as_ref(), COMPACT.as_bytes());
        assert_eq!(PRETTY_401.as_ref(), PRETTY.as_bytes());
    }

    #[test]
    fn pretty_print_table() {
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("/api", None, false),
            ("/api?pretty=true", None, true),
            ("/api?pretty=1", None, true),
            ("/api?pretty=True", None, true),
            ("/api?pretty=false", Some("curl/8.5.0"), false),
            ("/api?pretty=0", Some("Mozilla/5.0 (X11)"), false),
            ("/api?pretty=yes", Some("curl/8.5.0"), false),
            ("/api?pretty=yes", None, false),
            ("/api?pretty=", Some("curl/8.5.0"), true),
            ("/api?pretty", Some("curl/8.5.0"), true),
            ("/api?pretty", None, false),
            ("/api", Some("curl/8.5.0"), true),
            ("/api", Some("Wget/1.21"), true),
            ("/api", Some("Mozilla/5.0 (Macintosh)"), true),
            ("/api", Some("Mozilla/4.0"), false),
            ("/api", Some("kubectl/v1.31.0"), false),
            ("/api", Some("CURL/8"), false),
            ("/api?a=1&pretty=true&pretty=false", None, true),
            ("/api?pretty=false&pretty=true", None, false),
            // Go looks for "pretty" in the raw query first.
            ("/api?%70retty=%74rue", None, false),
            ("/api?x=pretty&%70retty=%74rue", None, true),
            ("/api?pretty=tr%ue", Some("curl"), true),
            ("/api?pretty=true;x=1", None, false),
            ("/api?prettyx=true", None, false),
            ("/api?x=pretty", None, false),
        ];
        for (uri, ua, want) in cases {
            let mut b = http::Request::get(*uri);
            if let Some(ua) = ua {
                b = b.header(USER_AGENT, *ua);
            }
            let (parts, _) = b.body(()).unwrap().into_parts();
            assert_eq!(is_pretty_print(&parts), *want, "{uri} {ua:?}");
        }
    }

    #[test]
    fn www_authenticate_only_with_basic() {
        let (parts, _) = http::Request::get("/").body(()).unwrap().into_parts();
        for (schemes, want) in [
            (Schemes::NONE, None),
            (Schemes::BEARER, None),
            (
                Schemes::BASIC | Schemes::BEARER,
                Some("Basic realm=\"kubernetes-master\""),
            ),
        ] {
            let r =
                Unauthorized.on_failure(&Failure::new(&parts, Reason::NotAuthenticated, schemes));
            assert_eq!(
                r.headers()
                    .get(WWW_AUTHENTICATE)
                    .map(|v| v.to_str().unwrap()),
                want
            );
            assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
            assert_eq!(r.headers()[CACHE_CONTROL], "no-cache, private");
        }
    }
}
