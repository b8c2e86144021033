//! Go's HTTP servers refuse a request whose path has an invalid percent-escape (`/apis%zz`,
//! `/healthz%`, `…%2`) while reading it (`url.ParseRequestURI` fails), before any handler,
//! filter or authenticator: so kube-apiserver gives every caller, anonymous or not, with a good
//! token or a bad one, the same answer. [`GoRequestUri`] sits in front of the authentication
//! middleware and answers as Go does:
//!
//! * HTTP/1.x: `net/http`'s `conn.serve` writes `HTTP/1.1 400 Bad Request`, `Content-Type:
//!   text/plain; charset=utf-8`, `Connection: close` and the body `400 Bad Request`, then
//!   closes the connection. Here the same status, headers and body, and hyper closes the
//!   connection after it because of `Connection: close`; hyper adds `date` and
//!   `content-length: 15`, which Go's raw write does not have.
//! * HTTP/2: `http2serverConn.newWriterAndRequest` refuses the `:path`
//!   (`httpcommon.NewServerRequest`, `bad_path`) with a stream error: `RST_STREAM` with
//!   `PROTOCOL_ERROR`, no response, the connection stays open. Here the service fails with
//!   that `h2` error, which hyper sends as the stream's reset.
//!
//!
//! It also answers `OPTIONS *` (HTTP/1.x request target `*`, HTTP/2 `:path` `*`) as Go's
//! `serverHandler` does before calling any handler: `globalOptionsHandler`, a 200 with
//! `Content-Length: 0` and nothing else, whatever the request's credentials (kube-apiserver
//! does not set `DisableGeneralOptionsHandler`; its HTTP/2 server, x/net's, accepts the `*`
//! `:path` and passes `RequestURI` `*` to the same `serverHandler`). Go reads up to 4 KiB of
//! such a request's body and closes the connection after a longer one; here the body is not
//! read, and hyper drains or closes as for any unread body.
//!
//! The common path (no `%` in the path) is one byte search; nothing is allocated.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode, Version};
use http_body_util::{Either, Full};

/// The error of a refused HTTP/2 request, and of the inner service (boxed).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Whether `raw` (a request path, not decoded) has a `%` not followed by two hex digits, which
/// Go's `url.ParseRequestURI` refuses (`invalid URL escape`).
pub fn bad_escape(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut from = 0;
    while let Some(at) = bytes[from..].iter().position(|&b| b == b'%') {
        let at = from + at;
        match bytes.get(at + 1..at + 3) {
            Some([hi, lo]) if hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit() => from = at + 3,
            _ => return true,
        }
    }
    false
}

/// Whether the authority of an absolute-form HTTP/1.x request target (`GET http://h/x`) has an
/// escape `url.ParseRequestURI` refuses: in the user information any invalid escape; in the
/// host also an escape of an ASCII byte other than `%25` (Go's `unescape` in `encodeHost`
/// mode: `http://h%41/x` is refused, `http://h%c3%a9/x` is not); in an IPv6 literal's zone
/// (after `%25`) any invalid escape; and any `%` in the port. (The `http` crate itself refuses
/// every `%` in a host name, so hyper answers 400 to those before this service, `h%c3%a9`
/// included, which Go accepts.)
pub fn bad_authority_escape(authority: &str) -> bool {
    let (userinfo, host) = match authority.rfind('@') {
        Some(at) => (&authority[..at], &authority[at + 1..]),
        None => ("", authority),
    };
    if bad_escape(userinfo) {
        return true;
    }
    let (host, zone) = match host.strip_prefix('[') {
        Some(literal) => {
            let close = literal.find(']').unwrap_or(literal.len());
            if literal[close..].contains('%') {
                return true;
            }
            let inside = &literal[..close];
            match inside.find("%25") {
                Some(z) => (&inside[..z], &inside[z + 3..]),
                None => (inside, ""),
            }
        }
        None => (host, ""),
    };
    let bytes = host.as_bytes();
    let host_bad = bytes.iter().enumerate().any(|(at, &b)| {
        b == b'%'
            && match bytes.get(at + 1..at + 3) {
                Some(hex @ [hi, lo]) if hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit() => {
                    hi.to_ascii_lowercase() < b'8' && hex != b"25"
                }
                _ => true,
            }
    });
    host_bad || bad_escape(zone)
}

/// Go's answer to an HTTP/1.x request line it cannot parse (`net/http` `conn.serve`).
fn bad_request() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"400 Bad Request")));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Whether the request is `OPTIONS *`: Go's `req.RequestURI == "*" && req.Method ==
/// "OPTIONS"`. The request target `*` is the one `Uri` whose path and query are `*` (an
/// absolute-form target's path starts with `/`; HTTP/2 adds the scheme and authority).
fn global_options<B>(req: &Request<B>) -> bool {
    req.method() == Method::OPTIONS
        && req
            .uri()
            .path_and_query()
            .is_some_and(|target| target.as_str() == "*")
}

/// Go's `globalOptionsHandler`: 200, `Content-Length: 0`, no body.
fn global_options_answer() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    response
        .headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
    response
}

/// The service answering a bad request URI as Go's server does, in front of `inner`
/// ([module docs](self)).
#[derive(Clone)]
pub struct GoRequestUri<S> {
    inner: S,
}

impl<S> GoRequestUri<S> {
    pub fn new(inner: S) -> Self {
        GoRequestUri { inner }
    }
}

impl<S, B, RB> tower::Service<Request<B>> for GoRequestUri<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>>,
    S::Error: Into<BoxError>,
{
    type Response = Response<Either<RB, Full<Bytes>>>;
    type Error = BoxError;
    type Future = GoRequestUriFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if global_options(&req) {
            return GoRequestUriFuture::Refused {
                answer: Some(Ok(global_options_answer())),
            };
        }
        // Go parses an HTTP/2 request's `:path` only; an HTTP/1.x request target may be in
        // absolute form, whose authority `url.ParseRequestURI` checks too.
        let bad = bad_escape(req.uri().path())
            || (req.version() != Version::HTTP_2
                && req
                    .uri()
                    .authority()
                    .is_some_and(|a| bad_authority_escape(a.as_str())));
        if !bad {
            return GoRequestUriFuture::Inner {
                inner: self.inner.call(req),
            };
        }
        let answer = if req.version() == Version::HTTP_2 {
            Err(h2::Error::from(h2::Reason::PROTOCOL_ERROR))
        } else {
            Ok(bad_request())
        };
        GoRequestUriFuture::Refused {
            answer: Some(answer),
        }
    }
}

pin_project_lite::pin_project! {
    /// The inner service's future, or Go's own answer (a refusal, or `OPTIONS *`'s 200).
    #[project = Projected]
    pub enum GoRequestUriFuture<F> {
        Inner { #[pin] inner: F },
        Refused { answer: Option<Result<Response<Full<Bytes>>, h2::Error>> },
    }
}

impl<F, RB, E> Future for GoRequestUriFuture<F>
where
    F: Future<Output = Result<Response<RB>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<Response<Either<RB, Full<Bytes>>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            Projected::Inner { inner } => inner
                .poll(cx)
                .map_ok(|response| response.map(Either::Left))
                .map_err(Into::into),
            Projected::Refused { answer } => Poll::Ready(match answer.take() {
                Some(Ok(response)) => Ok(response.map(Either::Right)),
                Some(Err(reset)) => Err(reset.into()),
                // Polled again after it finished: a stream error is what Go would give.
                None => Err(h2::Error::from(h2::Reason::PROTOCOL_ERROR).into()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::{ServiceExt, service_fn};

    #[test]
    fn bad_escape_is_url_parse_request_uris() {
        for (raw, bad) in [
            ("/apis", false),
            ("/ap%69s", false),
            ("/a%2Fb%2f", false),
            ("/%FF%fe", false),
            ("/apis%zz", true),
            ("/healthz%", true),
            ("/x%2", true),
            ("/x%2g", true),
            ("/%%41", true),
            ("/x%g2%41", true),
        ] {
            assert_eq!(bad_escape(raw), bad, "{raw}");
        }
    }

    /// Go's `url.ParseRequestURI` on `http://<authority>/x` (Go 1.26): an error for each `true`.
    #[test]
    fn bad_authority_escape_is_url_parse_request_uris() {
        for (authority, bad) in [
            ("h", false),
            ("h:80", false),
            ("h%zz", true),
            ("h%41", true),
            ("h%25", false),
            ("h%c3%a9", false),
            ("h%2", true),
            ("h%", true),
            ("u%zz@h", true),
            ("u%41@h", false),
            ("u%4@h", true),
            ("h:80%", true),
            ("[::1%25eth0]", false),
            ("[::1%zz]", true),
            ("[::1%eth0]", true),
            ("[::1]:80", false),
        ] {
            assert_eq!(bad_authority_escape(authority), bad, "{authority}");
        }
    }

    #[tokio::test]
    async fn refuses_before_the_inner_service() {
        let inner = service_fn(|_: Request<()>| async {
            Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from_static(
                b"inner",
            ))))
        });
        let svc = GoRequestUri::new(inner);
        let h1 = Request::get("/apis%zz").body(()).unwrap();
        let response = svc.clone().oneshot(h1).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(response.headers()["connection"], "close");
        assert!(matches!(response.body(), Either::Right(_)));
        let h2 = Request::get("/apis%zz")
            .version(Version::HTTP_2)
            .body(())
            .unwrap();
        let err = svc.clone().oneshot(h2).await.unwrap_err();
        let reason = err.downcast_ref::<h2::Error>().and_then(h2::Error::reason);
        assert_eq!(reason, Some(h2::Reason::PROTOCOL_ERROR));
        for (target, status) in [
            ("http://u%zz@h/x", StatusCode::BAD_REQUEST),
            ("http://[::1%zz]/x", StatusCode::BAD_REQUEST),
            ("http://u%41@h/x", StatusCode::OK),
            ("http://[::1%25eth0]/x", StatusCode::OK),
        ] {
            let absolute = Request::get(target).body(()).unwrap();
            let response = svc.clone().oneshot(absolute).await.unwrap();
            assert_eq!(response.status(), status, "{target}");
        }
        for (version, method, target, options) in [
            (Version::HTTP_11, Method::OPTIONS, "*", true),
            (Version::HTTP_10, Method::OPTIONS, "*", true),
            (Version::HTTP_2, Method::OPTIONS, "https://h/*", false),
            (Version::HTTP_11, Method::OPTIONS, "/", false),
            (Version::HTTP_11, Method::OPTIONS, "/*", false),
            (Version::HTTP_11, Method::GET, "*", false),
        ] {
            let req = Request::builder()
                .method(method.clone())
                .version(version)
                .uri(target)
                .body(())
                .unwrap();
            let response = svc.clone().oneshot(req).await.unwrap();
            let case = format!("{version:?} {method} {target}");
            assert_eq!(
                matches!(response.body(), Either::Right(_)),
                options,
                "{case}"
            );
            if options {
                assert_eq!(response.status(), StatusCode::OK, "{case}");
                assert_eq!(response.headers().len(), 1, "{case}");
                assert_eq!(response.headers()["content-length"], "0", "{case}");
            }
        }
        // HTTP/2's `:path` `*` with its scheme and authority.
        let mut parts = http::uri::Parts::default();
        parts.scheme = Some(http::uri::Scheme::HTTPS);
        parts.authority = Some("h".parse().unwrap());
        parts.path_and_query = Some("*".parse().unwrap());
        let h2 = Request::builder()
            .method(Method::OPTIONS)
            .version(Version::HTTP_2)
            .uri(http::Uri::from_parts(parts).unwrap())
            .body(())
            .unwrap();
        let response = svc.clone().oneshot(h2).await.unwrap();
        assert!(matches!(response.body(), Either::Right(_)));
        let ok = Request::get("/ap%69s").body(()).unwrap();
        let response = svc.oneshot(ok).await.unwrap();
        assert!(matches!(response.body(), Either::Left(_)));
    }
}
