//! `/healthz`, `/livez` and `/readyz` as k8s.io/apiserver's `healthz` package serves them
//! (`InstallPathHandler`: `handleRootHealth` on the endpoint, `adaptCheckToHandler` on
//! `<endpoint>/<check>` for each check).
//!
//! The checks are the two a generic apiserver registers on all three endpoints
//! (`healthz.PingHealthz`, `healthz.LogHealthz`: `server.NewConfig`'s default checks), in that
//! order. Both always pass here: `ping` by definition, `log` because nothing in kube-authn can
//! block logging the way a stuck `klog.Flush` blocks Go's. kube-apiserver's other checks (`etcd`,
//! `etcd-readiness`, `informer-sync`, `poststarthook/…`, `kms-providers`) watch things
//! kube-authn does not have, and readyz's `shutdown` is left out: the server stops accepting
//! connections as soon as its shutdown starts (it has no `--shutdown-delay-duration`), so no
//! request could ever see that check fail (docs/compatibility.md).

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response};
use http_body_util::Full;

/// The health endpoints and the name each one's texts use (`healthz check passed`).
const ENDPOINTS: [(&str, &str); 3] = [
    ("/healthz", "healthz"),
    ("/livez", "livez"),
    ("/readyz", "readyz"),
];

/// The checks of every endpoint, in the order Go runs and lists them.
const CHECKS: [&str; 2] = ["ping", "log"];

/// The name (`healthz`, `livez`, `readyz`) of the endpoint at `path`, if it is one.
pub(super) fn endpoint(path: &str) -> Option<&'static str> {
    ENDPOINTS
        .iter()
        .find(|(endpoint, _)| *endpoint == path)
        .map(|&(_, name)| name)
}

/// Whether `path` is one check's own handler (`/healthz/ping`, `/readyz/log`, …): the
/// mux matches it exactly (`/healthz/ping/` and `/healthz/nope` are unknown paths).
pub(super) fn is_check(path: &str) -> bool {
    ENDPOINTS.iter().any(|(endpoint, _)| {
        path.strip_prefix(endpoint)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|check| CHECKS.contains(&check))
    })
}

/// `handleRootHealth` for the endpoint `name`, every check passing: `ok`, or with a `verbose`
/// parameter (any value) one line per check, the `exclude`d ones (each value a check name) as
/// `[+]<check> excluded: ok`, the names excluded that match no check in a `warn:` line (sorted,
/// Go-quoted), then `<name> check passed`. The query is read as Go's `URL.Query()` reads it.
pub(super) fn root(name: &str, query: Option<&str>) -> Response<Full<Bytes>> {
    let query = query.unwrap_or("");
    let mut verbose = false;
    // Go's `sets.String`: distinct values, listed sorted by bytes.
    let mut excluded = std::collections::BTreeSet::new();
    for (key, value) in kube_authn::api::go_query_pairs(query) {
        match key.as_ref() {
            b"verbose" => verbose = true,
            b"exclude" => {
                excluded.insert(value.into_owned());
            }
            _ => {}
        }
    }
    let body = if verbose {
        let mut out = String::new();
        for check in CHECKS {
            if excluded.remove(check.as_bytes()) {
                out.push_str(&format!("[+]{check} excluded: ok\n"));
            } else {
                out.push_str(&format!("[+]{check} ok\n"));
            }
        }
        if !excluded.is_empty() {
            let quoted: Vec<String> = excluded
                .iter()
                .map(|name| kube_authn::jwt::go_quote_bytes(name))
                .collect();
            out.push_str(&format!(
                "warn: some health checks cannot be excluded: no matches for {}\n",
                quoted.join(",")
            ));
        }
        out.push_str(&format!("{name} check passed\n"));
        Bytes::from(out)
    } else {
        Bytes::from_static(b"ok")
    };
    super::plain_nosniff(http::StatusCode::OK, body)
}

/// `adaptCheckToHandler` for a passing check, whatever the method or query: `ok`, whose
/// `Content-Type` Go's server sniffs (`text/plain; charset=utf-8`); no `nosniff`.
pub(super) fn check() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"ok")));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(response: Response<Full<Bytes>>) -> String {
        let bytes = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    /// The bodies k8s.io/apiserver v0.37.2's `handleRootHealth` writes with the ping and log
    /// checks (printed by a Go program serving `healthz.InstallPathHandler` on each endpoint).
    #[tokio::test]
    async fn root_bodies_are_handle_root_healths() {
        for (name, query, want) in [
            ("healthz", None, "ok"),
            ("healthz", Some("exclude=ping"), "ok"),
            ("healthz", Some("verbose;x"), "ok"),
            (
                "healthz",
                Some("verbose"),
                "[+]ping ok\n[+]log ok\nhealthz check passed\n",
            ),
            (
                "livez",
                Some("verbose=false"),
                "[+]ping ok\n[+]log ok\nlivez check passed\n",
            ),
            (
                "readyz",
                Some("verbose&exclude=log"),
                "[+]ping ok\n[+]log excluded: ok\nreadyz check passed\n",
            ),
            (
                "healthz",
                Some("exclude=ping&exclude=ping&verbose"),
                "[+]ping excluded: ok\n[+]log ok\nhealthz check passed\n",
            ),
            (
                "healthz",
                Some("verbose&exclude=ping;"),
                "[+]ping ok\n[+]log ok\nhealthz check passed\n",
            ),
            (
                "healthz",
                Some("verbose&exclude=nope&exclude=log&exclude=a%22b&exclude=nope&exclude=%ff"),
                "[+]ping ok\n[+]log excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"a\\\"b\",\"nope\",\"\\xff\"\nhealthz check passed\n",
            ),
        ] {
            assert_eq!(body(root(name, query)).await, want, "{name}?{query:?}");
        }
    }

    #[test]
    fn check_paths_are_the_muxs() {
        for (path, want) in [
            ("/healthz/ping", true),
            ("/livez/log", true),
            ("/readyz/ping", true),
            ("/readyz/shutdown", false),
            ("/healthz/ping/", false),
            ("/healthz/", false),
            ("/healthz", false),
            ("/healthzping", false),
            ("/metrics/ping", false),
        ] {
            assert_eq!(is_check(path), want, "{path}");
        }
    }
}
