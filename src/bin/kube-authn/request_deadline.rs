//! kube-apiserver's `WithRequestDeadline` filter (k8s.io/apiserver v0.37.2,
//! `pkg/endpoints/filters/request_deadline.go`), which runs before authentication on every
//! path that is not long-running: the `timeout` query parameter (its first value, as Go's
//! `req.URL.Query().Get` reads it; empty is none) is a Go duration. One Go cannot parse is a
//! 400 `Status` for every caller, anonymous or not, with a good credential or a bad one:
//! `invalid timeout specified in the request URL - time: invalid duration "x"`. Otherwise the
//! request's deadline is the request timeout (`--request-timeout`), or the `timeout` when it is
//! positive and shorter; [`RequestDeadline`] puts it in the request's extensions as a
//! [`Deadline`], which the review handlers read their bodies by (kube-apiserver's webhook
//! client sends `?timeout=30s`). Long-running requests (kube-apiserver's
//! `BasicLongRunningRequestCheck`: the verbs `watch` and `proxy`, the subresources `attach`,
//! `exec`, `proxy`, `log`, `portforward`, and `/debug/pprof/`) are passed on as they are.
//!
//! The 400 is JSON (compact, or indented as `?pretty` and a person's `User-Agent` ask), as the
//! handlers' answers are; kube-apiserver negotiates it as it negotiates the 401.

use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{Either, Full};
use kube_authn::api::Status;
use tokio::time::Instant;

use crate::request_uri::{BoxError, GoRequestUriFuture};

/// When a request's body must have arrived (kube-apiserver's request deadline), in the
/// request's extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline(pub Instant);

/// The filter in front of `inner` ([module docs](self)); `maximum` is `--request-timeout`.
#[derive(Clone)]
pub struct RequestDeadline<S> {
    inner: S,
    maximum: Duration,
}

impl<S> RequestDeadline<S> {
    pub fn new(inner: S, maximum: Duration) -> Self {
        RequestDeadline { inner, maximum }
    }
}

/// kube-apiserver's `LongRunningFunc` (`BasicLongRunningRequestCheck` with the verbs `watch`,
/// `proxy` and the subresources `attach`, `exec`, `proxy`, `log`, `portforward`) on the
/// request's `RequestInfo`: for a resource request its verb and subresource, for any other
/// the lower-cased method and the `/debug/pprof/` prefix. A resource path whose `RequestInfo`
/// cannot be made (kube-apiserver's 500 comes first) is passed on too.
fn long_running(method: &Method, raw_path: &str, query: Option<&str>) -> bool {
    // A bad escape never gets here (`request_uri` answers it first).
    let Some(path) = crate::app::go_url_path(raw_path) else {
        return true;
    };
    if crate::app::resource_form(&path) {
        return match crate::app::request_info(method, &path, query) {
            Some(info) => {
                matches!(info.verb, "watch" | "proxy")
                    || [&b"attach"[..], b"exec", b"proxy", b"log", b"portforward"]
                        .contains(&info.subresource.as_slice())
            }
            None => true,
        };
    }
    let verb = method.as_str().to_ascii_lowercase();
    verb == "watch" || verb == "proxy" || path.starts_with(b"/debug/pprof/")
}

/// The request's deadline from its `timeout` query parameter (`parseTimeout`), or the 400's
/// message.
fn deadline(query: Option<&str>, maximum: Duration, now: Instant) -> Result<Deadline, String> {
    let value = kube_authn::api::go_query_pairs(query.unwrap_or(""))
        .find(|(key, _)| key.as_ref() == b"timeout")
        .map(|(_, value)| value)
        .unwrap_or_default();
    let mut timeout = maximum;
    if !value.is_empty() {
        let nanos = kube_authn::config::go_parse_duration(&value)
            .map_err(|e| format!("invalid timeout specified in the request URL - {e}"))?;
        // 0 (or less) is no timeout of the client's: the maximum applies, as it does to a
        // longer one.
        if let Ok(nanos) = u64::try_from(nanos) {
            let asked = Duration::from_nanos(nanos);
            if !asked.is_zero() && asked < maximum {
                timeout = asked;
            }
        }
    }
    Ok(Deadline(now + timeout))
}

/// `apierrors.NewBadRequest(message)` as the filter writes it (`failedErrorHandler`).
fn bad_request(message: String, pretty: bool) -> Response<Full<Bytes>> {
    let status = Status::failure(400, "BadRequest", message);
    let body = kube_authn::api::to_go_json(&status, pretty).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // kube-apiserver's `WithCacheControl` runs before this filter.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    response
}

impl<S, B, RB> tower::Service<Request<B>> for RequestDeadline<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>>,
    S::Error: Into<BoxError>,
{
    type Response = Response<Either<RB, Full<Bytes>>>;
    type Error = BoxError;
    // The same future as `request_uri`'s: the inner service's, or the filter's answer.
    type Future = GoRequestUriFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let now = Instant::now();
        let uri = req.uri();
        // Most requests have no `timeout` parameter (a key written with escapes, `%74imeout`,
        // counts): their deadline is the maximum, without decoding the path or the query. A
        // long-running request given it too is harmless: nothing there reads it.
        let may_ask = uri
            .query()
            .is_some_and(|q| q.contains("timeout") || q.contains('%'));
        if !may_ask {
            req.extensions_mut().insert(Deadline(now + self.maximum));
        } else if !long_running(req.method(), uri.path(), uri.query()) {
            match deadline(uri.query(), self.maximum, now) {
                Ok(deadline) => {
                    req.extensions_mut().insert(deadline);
                }
                Err(message) => {
                    let pretty = kube_authn::middleware::wants_pretty(req.uri(), req.headers());
                    return GoRequestUriFuture::Refused {
                        answer: Some(Ok(bad_request(message, pretty))),
                    };
                }
            }
        }
        GoRequestUriFuture::Inner {
            inner: self.inner.call(req),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parseTimeout` and the deadline `WithRequestDeadline` sets: Go's duration errors
    /// (kube-apiserver's answers, recorded from its filter), the first value, `0` and
    /// negative durations as no timeout, the shorter of the two.
    #[test]
    fn deadline_is_request_deadlines() {
        let now = Instant::now();
        let max = Duration::from_secs(60);
        let cases: &[(Option<&str>, Result<Duration, &str>)] = &[
            (None, Ok(max)),
            (Some(""), Ok(max)),
            (Some("timeout="), Ok(max)),
            (Some("timeout=30s"), Ok(Duration::from_secs(30))),
            (Some("timeout=1ns"), Ok(Duration::from_nanos(1))),
            (Some("timeout=0s"), Ok(max)),
            (Some("timeout=-1s"), Ok(max)),
            (Some("timeout=1.5h"), Ok(max)),
            (Some("timeout=60s"), Ok(max)),
            (Some("Timeout=x"), Ok(max)),
            (Some("timeout=x;y=1"), Ok(max)),
            (Some("timeout=1ns&timeout=x"), Ok(Duration::from_nanos(1))),
            (
                Some("timeout=x&timeout=1s"),
                Err(r#"invalid timeout specified in the request URL - time: invalid duration "x""#),
            ),
            (
                Some("timeout=%FF"),
                Err(
                    r#"invalid timeout specified in the request URL - time: invalid duration "\xff""#,
                ),
            ),
            (
                Some("timeout=%22%3C"),
                Err(
                    r#"invalid timeout specified in the request URL - time: invalid duration "\"<""#,
                ),
            ),
            (
                Some("timeout=1"),
                Err(
                    r#"invalid timeout specified in the request URL - time: missing unit in duration "1""#,
                ),
            ),
            (
                Some("timeout=1e3s"),
                Err(
                    r#"invalid timeout specified in the request URL - time: unknown unit "e" in duration "1e3s""#,
                ),
            ),
            (
                Some("timeout=+1s"),
                Err(
                    r#"invalid timeout specified in the request URL - time: invalid duration " 1s""#,
                ),
            ),
            (
                Some("timeout=9999999999h"),
                Err(
                    r#"invalid timeout specified in the request URL - time: invalid duration "9999999999h""#,
                ),
            ),
        ];
        for (query, want) in cases {
            let got = deadline(*query, max, now).map(|Deadline(at)| at - now);
            assert_eq!(
                got.as_ref().map_err(String::as_str),
                want.as_ref().map_err(|e| *e),
                "{query:?}"
            );
        }
        // Beyond Go's 10 000 query parameters `URL.Query()` is empty: no timeout of the
        // client's, a bad one included.
        for (amps, want) in [(9_999, Duration::from_secs(1)), (10_000, max)] {
            for value in ["1s", "x"] {
                let query = format!("timeout={value}{}", "&".repeat(amps));
                let got = deadline(Some(&query), max, now).map(|Deadline(at)| at - now);
                let want = if value == "x" && amps < 10_000 {
                    Err(
                        r#"invalid timeout specified in the request URL - time: invalid duration "x""#,
                    )
                } else {
                    Ok(want)
                };
                assert_eq!(
                    got.as_ref().map_err(String::as_str),
                    want.as_ref().map_err(|e| *e),
                    "{value} {amps}"
                );
            }
        }
    }

    #[test]
    fn long_running_is_basic_long_running_request_check() {
        let cases: &[(Method, &str, Option<&str>, bool)] = &[
            (
                Method::POST,
                "/apis/authentication.k8s.io/v1/tokenreviews",
                None,
                false,
            ),
            (
                Method::GET,
                "/apis/authentication.k8s.io/v1/tokenreviews",
                None,
                false,
            ),
            (
                Method::GET,
                "/apis/authentication.k8s.io/v1/tokenreviews",
                Some("watch=1"),
                true,
            ),
            (Method::GET, "/api/v1/watch/pods", None, true),
            (Method::GET, "/api/v1/namespaces/n/pods/p/log", None, true),
            (Method::POST, "/api/v1/namespaces/n/pods/p/exec", None, true),
            (
                Method::GET,
                "/api/v1/namespaces/n/pods/p/status",
                None,
                false,
            ),
            (Method::GET, "/api/v1/proxy/nodes/n", None, true),
            (Method::GET, "/healthz", None, false),
            (Method::GET, "/debug/pprof/heap", None, true),
            (
                Method::from_bytes(b"WATCH").unwrap(),
                "/healthz",
                None,
                true,
            ),
            // RequestInfo fails: kube-apiserver's 500 comes before the filter.
            (Method::GET, "/api/v1/watch", None, true),
        ];
        for (method, path, query, want) in cases {
            assert_eq!(
                long_running(method, path, *query),
                *want,
                "{method} {path} {query:?}"
            );
        }
    }
}
