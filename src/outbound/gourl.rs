//! The URL a Kubernetes client sends a webhook request to, worked out as Go's `net/url` and
//! client-go do it (not as the WHATWG parser behind `reqwest::Url` would).
//!
//! Two steps, as in kube-apiserver:
//!
//! 1. `clientcmd` (loading a kubeconfig, `client_config.go`): a `server` that parses as a request
//!    URI (`url.ParseRequestURI`: a `#` is part of the path there) and whose path is longer than
//!    `/` loses its query (and so `https://h/a#b` becomes `https://h/a%23b`).
//! 2. client-go's REST client (`rest.NewRESTClient`, `Request.URL`): the query and the fragment
//!    are dropped, the path is cleaned (`path.Join`: no trailing slash, `//`, `.` or `..`), and
//!    the query is `timeout=<the client's timeout>` (`?timeout=30s` for the webhooks).
//!
//! The shown form (for error texts, `Post "<url>": …`) is Go's `url.String()` with the password
//! written `***` as net/http's `stripPassword` does; a user name without a password (which
//! net/http sends as Basic credentials) is written `***` too, where Go shows it.

use std::time::Duration;

use crate::jwt::{go_quote, go_quote_bytes};

/// The parts of Go's `url.URL` the two steps use.
#[derive(Debug, Default)]
struct GoUrl {
    scheme: String,
    /// A scheme followed by something that does not start with `/` (`https:h`).
    opaque: bool,
    /// Decoded user name and password.
    user: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// As written.
    host: String,
    has_authority: bool,
    /// Decoded.
    path: Vec<u8>,
    /// The path as written, when that differs from Go's default escaping of `path`.
    raw_path: String,
    raw_query: String,
    force_query: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    UserPassword,
    QueryComponent,
}

/// Go's `shouldEscape` for the modes used here.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'~') {
        return false;
    }
    match mode {
        Mode::Path => !matches!(
            c,
            b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'@'
        ),
        Mode::UserPassword => !matches!(c, b'$' | b'&' | b'+' | b',' | b';' | b'='),
        Mode::QueryComponent => true,
    }
}

/// Go's `escape` (upper-case hex; a space is `+` in a query component).
fn escape(s: &[u8], mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s {
        if c == b' ' && mode == Mode::QueryComponent {
            out.push('+');
        } else if should_escape(c, mode) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(char::from(c));
        }
    }
    out
}

/// Go's `unescape` (`%` must be followed by two hex digits; `+` is kept).
fn unescape(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |j: usize| b.get(j).and_then(|c| char::from(*c).to_digit(16));
            match (hex(i + 1), hex(i + 2)) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                _ => {
                    let bad = &b[i..b.len().min(i + 3)];
                    return Err(format!("invalid URL escape {}", go_quote_bytes(bad)));
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Go's `validEncoded` for a path.
fn valid_encoded_path(s: &str) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, Mode::Path)
    })
}

/// Go's `validUserinfo`.
fn valid_userinfo(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '.'
                    | '_'
                    | ':'
                    | '~'
                    | '!'
                    | '$'
                    | '&'
                    | '\''
                    | '('
                    | ')'
                    | '*'
                    | '+'
                    | ','
                    | ';'
                    | '='
                    | '%'
                    | '@'
            )
    })
}

/// Go's `getScheme`.
fn get_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".to_owned()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `url.parse` (the host is kept as written: reqwest's parser judges it).
fn parse(raw: &str, via_request: bool) -> Result<GoUrl, String> {
    if raw.bytes().any(|c| c < 0x20 || c == 0x7f) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_owned());
    }
    let mut url = GoUrl::default();
    let (scheme, mut rest) = get_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        rest = r;
        url.raw_query = q.to_owned();
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = true;
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".to_owned());
        }
        if rest.split('/').next().is_some_and(|s| s.contains(':')) {
            return Err("first path segment in URL cannot contain colon".to_owned());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let (authority, path) = match rest[2..].find('/') {
            Some(i) => (&rest[2..2 + i], &rest[2 + i..]),
            None => (&rest[2..], ""),
        };
        rest = path;
        url.has_authority = true;
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                if !valid_userinfo(userinfo) {
                    return Err("net/url: invalid userinfo".to_owned());
                }
                url.user = Some(match userinfo.split_once(':') {
                    Some((u, p)) => (unescape(u)?, Some(unescape(p)?)),
                    None => (unescape(userinfo)?, None),
                });
                url.host = authority[at + 1..].to_owned();
            }
            None => url.host = authority.to_owned(),
        }
    }
    url.path = unescape(rest)?;
    if escape(&url.path, Mode::Path) != rest {
        url.raw_path = rest.to_owned();
    }
    Ok(url)
}

/// Go's `url.Parse` of `prefix` + `raw` (the fragment split off first), with its
/// `parse "<url>": …` error; the URL in the error has the user information of `raw` masked.
fn parse_with_fragment(prefix: &str, raw: &str) -> Result<GoUrl, String> {
    let whole = format!("{prefix}{raw}");
    let (u, fragment) = whole.split_once('#').unwrap_or((&whole, ""));
    let shown = |with_fragment: bool| {
        let masked = mask_userinfo(raw);
        let masked = if with_fragment {
            masked.as_str()
        } else {
            masked.split_once('#').map_or(masked.as_str(), |(u, _)| u)
        };
        go_quote(&format!("{prefix}{masked}"))
    };
    let url = parse(u, false).map_err(|e| format!("parse {}: {e}", shown(false)))?;
    if !fragment.is_empty() {
        unescape(fragment).map_err(|e| format!("parse {}: {e}", shown(true)))?;
    }
    Ok(url)
}

/// Go's `path.Clean`.
fn clean(p: &[u8]) -> Vec<u8> {
    if p.is_empty() {
        return b".".to_vec();
    }
    let rooted = p[0] == b'/';
    let mut parts: Vec<&[u8]> = Vec::new();
    for seg in p.split(|c| *c == b'/') {
        match seg {
            b"" | b"." => {}
            b".." => {
                if parts.last().is_some_and(|s| *s != b"..") {
                    parts.pop();
                } else if !rooted {
                    parts.push(seg);
                }
            }
            s => parts.push(s),
        }
    }
    let mut out = Vec::with_capacity(p.len());
    if rooted {
        out.push(b'/');
    }
    out.extend_from_slice(&parts.join(&b'/'));
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

impl GoUrl {
    /// Go's `EscapedPath`.
    fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded_path(&self.raw_path)
            && unescape(&self.raw_path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        escape(&self.path, Mode::Path)
    }

    /// Go's `url.String()` for a URL with an authority and no fragment; `masked` writes the
    /// user information as the error texts do.
    fn string(&self, masked: bool) -> String {
        let mut out = format!("{}:", self.scheme);
        if self.has_authority {
            out.push_str("//");
        }
        match (&self.user, masked) {
            (None, _) => {}
            (Some((user, Some(_))), true) => {
                out.push_str(&String::from_utf8_lossy(user));
                out.push_str(":***@");
            }
            (Some((_, None)), true) => out.push_str("***@"),
            (Some((user, password)), false) => {
                out.push_str(&escape(user, Mode::UserPassword));
                if let Some(p) = password {
                    out.push(':');
                    out.push_str(&escape(p, Mode::UserPassword));
                }
                out.push('@');
            }
        }
        out.push_str(&self.host);
        let path = self.escaped_path();
        if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
            out.push('/');
        }
        out.push_str(&path);
        if self.force_query || !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        out
    }
}

/// `raw` with the password of its user information written `***`, and a user name without a
/// password written `***` (for texts that show a URL that did not parse). Whatever stands
/// before the last `@` counts as user information: a URL that did not parse may have a `/`,
/// `?` or `#` in its password, and masking too much is harmless here.
pub(crate) fn mask_userinfo(raw: &str) -> String {
    let start = raw.find("://").map_or(0, |i| i + 3);
    let Some(at) = raw[start..].rfind('@').map(|i| start + i) else {
        return raw.to_owned();
    };
    let user = match raw[start..at].split_once(':') {
        Some((name, _)) => format!("{name}:***"),
        None => "***".to_owned(),
    };
    format!("{}{user}{}", &raw[..start], &raw[at..])
}

/// client-go `clientcmd`'s cleanup of a kubeconfig `server`: parsed as a request URI (no
/// fragment: a `#` belongs to the path), a URL with a path longer than `/` loses its query and
/// is written back as Go writes it; anything else is kept as written.
pub(crate) fn clientcmd_server(server: &str) -> String {
    match parse(server, true) {
        Ok(mut u) if !u.opaque && u.path.len() > 1 => {
            u.raw_query.clear();
            u.string(false)
        }
        _ => server.to_owned(),
    }
}

/// Where a webhook request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RestTarget {
    /// The URL sent (Go's `Request.URL().String()`, user information included).
    pub(crate) wire: String,
    /// The same for error texts (user information masked).
    pub(crate) shown: String,
}

/// client-go's REST client URL for a request with no resource to `server` (`rest.Config.Host`)
/// by a client whose timeout is `timeout` (`?timeout=30s` for kube-apiserver's webhooks; no
/// query for a zero timeout). A server Go's `url.Parse` refuses is refused with Go's text; one
/// without a scheme or host is refused (client-go would use plain `http://`).
pub(crate) fn rest_target(server: &str, timeout: Duration) -> Result<RestTarget, String> {
    let mut url = match parse_with_fragment("", server) {
        Ok(u) if !u.scheme.is_empty() && !u.host.is_empty() && !u.opaque => u,
        // `DefaultServerURL` tries again with `http://` in front: its error is the one shown.
        Err(_) => {
            return Err(parse_with_fragment("http://", server)
                .err()
                .unwrap_or_else(|| no_host(server)));
        }
        Ok(_) => return Err(no_host(server)),
    };
    // `NewRESTClient`: a trailing slash, no query; `NewRequest`: `path.Join("/", base.Path, "/")`.
    let mut base = std::mem::take(&mut url.path);
    if !base.ends_with(b"/") {
        base.push(b'/');
    }
    base.insert(0, b'/');
    url.path = clean(&base);
    url.force_query = false;
    url.raw_query = if timeout.is_zero() {
        String::new()
    } else {
        format!(
            "timeout={}",
            escape(go_duration(timeout).as_bytes(), Mode::QueryComponent)
        )
    };
    Ok(RestTarget {
        wire: url.string(false),
        shown: url.string(true),
    })
}

fn no_host(server: &str) -> String {
    format!(
        "server URL {} must have a scheme and a host (https://host[:port][/path])",
        go_quote(&mask_userinfo(server))
    )
}

/// Go's `time.Duration.String()` (`30s`, `1m0s`, `1.5s`, `500ms`, `1µs`); durations past Go's
/// range (about 292 years) are written as its largest.
pub(crate) fn go_duration(d: Duration) -> String {
    let u = u64::try_from(d.as_nanos())
        .unwrap_or(u64::MAX)
        .min(i64::MAX as u64);
    /// `v / 10^prec` with the fraction's trailing zeros (and a bare point) left out.
    fn frac(v: u64, prec: u32) -> String {
        let p = 10u64.pow(prec);
        let (int, rem) = (v / p, v % p);
        if rem == 0 {
            return int.to_string();
        }
        let digits = format!("{rem:0width$}", width = prec as usize);
        format!("{int}.{}", digits.trim_end_matches('0'))
    }
    const SECOND: u64 = 1_000_000_000;
    match u {
        0 => "0s".to_owned(),
        u if u < 1_000 => format!("{u}ns"),
        u if u < 1_000_000 => format!("{}µs", frac(u, 3)),
        u if u < SECOND => format!("{}ms", frac(u, 6)),
        u => {
            let secs = u / SECOND;
            let seconds = frac((secs % 60) * SECOND + u % SECOND, 9);
            let (minutes, hours) = ((secs / 60) % 60, secs / 3600);
            match (hours, secs / 60) {
                (0, 0) => format!("{seconds}s"),
                (0, _) => format!("{minutes}m{seconds}s"),
                _ => format!("{hours}h{minutes}m{seconds}s"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row's "Go" column was printed by kube-apiserver's webhook authenticator
    /// (`webhookutil.LoadKubeconfig` + `webhook.New`, k8s.io/apiserver v0.37.2) posting to a
    /// local server (the request line) or to a closed port (the `Post "<url>"` of its error).
    #[test]
    fn request_urls_as_kube_apiserver_sends_them() {
        // (kubeconfig server, URL sent, URL shown in errors)
        let cases: &[(&str, &str, &str)] = &[
            (
                "https://h:1",
                "https://h:1/?timeout=30s",
                "https://h:1/?timeout=30s",
            ),
            (
                "https://h:1/",
                "https://h:1/?timeout=30s",
                "https://h:1/?timeout=30s",
            ),
            (
                "https://h:1/authn/",
                "https://h:1/authn?timeout=30s",
                "https://h:1/authn?timeout=30s",
            ),
            (
                "https://h:1/authn?key=abc&x=1",
                "https://h:1/authn?timeout=30s",
                "https://h:1/authn?timeout=30s",
            ),
            (
                "https://h:1/a//b/../c",
                "https://h:1/a/c?timeout=30s",
                "https://h:1/a/c?timeout=30s",
            ),
            (
                "https://h:1/authn#frag",
                "https://h:1/authn%23frag?timeout=30s",
                "https://h:1/authn%23frag?timeout=30s",
            ),
            (
                "https://h:1/#frag",
                "https://h:1/%23frag?timeout=30s",
                "https://h:1/%23frag?timeout=30s",
            ),
            (
                "https://h:1#frag",
                "https://h:1/?timeout=30s",
                "https://h:1/?timeout=30s",
            ),
            (
                "https://h:1?q#frag",
                "https://h:1/?timeout=30s",
                "https://h:1/?timeout=30s",
            ),
            (
                "https://h:1/p%2Fq",
                "https://h:1/p%2Fq?timeout=30s",
                "https://h:1/p%2Fq?timeout=30s",
            ),
            (
                "https://h:1/a%2fb/",
                "https://h:1/a/b?timeout=30s",
                "https://h:1/a/b?timeout=30s",
            ),
            (
                "https://h:1/a/%2e%2e/b",
                "https://h:1/b?timeout=30s",
                "https://h:1/b?timeout=30s",
            ),
            (
                "https://h:1/a b",
                "https://h:1/a%20b?timeout=30s",
                "https://h:1/a%20b?timeout=30s",
            ),
            (
                "https://h:1/a%20b",
                "https://h:1/a%20b?timeout=30s",
                "https://h:1/a%20b?timeout=30s",
            ),
            (
                "https://h:1/ä",
                "https://h:1/%C3%A4?timeout=30s",
                "https://h:1/%C3%A4?timeout=30s",
            ),
            (
                "https://h:1/a!$&'()*+,;=:@[]~|b",
                "https://h:1/a%21$&%27%28%29%2A+,;=:@%5B%5D~%7Cb?timeout=30s",
                "https://h:1/a%21$&%27%28%29%2A+,;=:@%5B%5D~%7Cb?timeout=30s",
            ),
            (
                "https://h:1/x?",
                "https://h:1/x?timeout=30s",
                "https://h:1/x?timeout=30s",
            ),
            (
                "https://h:1/x/.",
                "https://h:1/x?timeout=30s",
                "https://h:1/x?timeout=30s",
            ),
            (
                "https://h:1/..",
                "https://h:1/?timeout=30s",
                "https://h:1/?timeout=30s",
            ),
            (
                "https://u:pw@h:1/a?key=abc",
                "https://u:pw@h:1/a?timeout=30s",
                "https://u:***@h:1/a?timeout=30s",
            ),
            (
                "https://u:pw@h:1/?key=abc",
                "https://u:pw@h:1/?timeout=30s",
                "https://u:***@h:1/?timeout=30s",
            ),
            // Go shows `tok@`: net/http sends it as Basic credentials, so it is masked here.
            (
                "https://tok@h:1/a",
                "https://tok@h:1/a?timeout=30s",
                "https://***@h:1/a?timeout=30s",
            ),
            (
                "HTTPS://h:1/X",
                "https://h:1/X?timeout=30s",
                "https://h:1/X?timeout=30s",
            ),
        ];
        for (server, wire, shown) in cases {
            let got = rest_target(&clientcmd_server(server), Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("{server}: {e}"));
            assert_eq!(got.wire, *wire, "{server}");
            assert_eq!(got.shown, *shown, "{server}");
        }
    }

    #[test]
    fn servers_go_cannot_parse_are_refused_with_its_text() {
        let cases: &[(&str, &str)] = &[
            // kube-apiserver: `parse "http://https://127.0.0.1:1/%zz": invalid URL escape "%zz"`.
            (
                "https://h:1/%zz",
                r#"parse "http://https://h:1/%zz": invalid URL escape "%zz""#,
            ),
            (
                "https://h:1/%4",
                r#"parse "http://https://h:1/%4": invalid URL escape "%4""#,
            ),
            (
                "https://u:pw-SECRET@h:1/%zz",
                r#"parse "http://https://u:***@h:1/%zz": invalid URL escape "%zz""#,
            ),
            (
                "https://u:p/w-SECRET@h:1/%zz",
                r#"parse "http://https://u:***@h:1/%zz": invalid URL escape "%zz""#,
            ),
            (
                "https://h:1/x#%zz",
                r#"parse "http://https://h:1/x#%zz": invalid URL escape "%zz""#,
            ),
            (
                "https://h:1/a\tb",
                r#"parse "http://https://h:1/a\tb": net/url: invalid control character in URL"#,
            ),
            (
                "h:1",
                r#"server URL "h:1" must have a scheme and a host (https://host[:port][/path])"#,
            ),
            (
                "https:///x",
                r#"server URL "https:///x" must have a scheme and a host (https://host[:port][/path])"#,
            ),
        ];
        for (server, want) in cases {
            let e = rest_target(&clientcmd_server(server), Duration::from_secs(30)).unwrap_err();
            assert_eq!(e, *want, "{server}");
        }
    }

    #[test]
    fn durations_are_written_as_go_writes_them() {
        let ns = Duration::from_nanos;
        let cases: &[(Duration, &str)] = &[
            (Duration::ZERO, "0s"),
            (ns(1), "1ns"),
            (ns(1_500), "1.5µs"),
            (ns(1_000_000), "1ms"),
            (Duration::from_millis(500), "500ms"),
            (ns(1_000_000_001), "1.000000001s"),
            (Duration::from_millis(1_500), "1.5s"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(3600), "1h0m0s"),
            (Duration::from_millis(3_723_500), "1h2m3.5s"),
            (Duration::MAX, "2562047h47m16.854775807s"),
        ];
        for (d, want) in cases {
            assert_eq!(go_duration(*d), *want, "{d:?}");
        }
        // The query escapes the micro sign, as url.Values.Encode does.
        let t = rest_target("https://h", ns(1_500)).unwrap();
        assert_eq!(t.wire, "https://h/?timeout=1.5%C2%B5s");
        assert_eq!(
            rest_target("https://h/x/", Duration::ZERO).unwrap().wire,
            "https://h/x"
        );
    }

    #[test]
    fn clean_is_go_path_clean() {
        let cases: &[(&str, &str)] = &[
            ("", "."),
            ("/", "/"),
            ("//a//b/", "/a/b"),
            ("/a/./b/../../..", "/"),
            ("a/../..", ".."),
            ("/../x", "/x"),
        ];
        for (p, want) in cases {
            assert_eq!(clean(p.as_bytes()), want.as_bytes(), "{p}");
        }
    }
}
