//! Go's `net/url.Parse`, as far as Kubernetes' issuer URL validation (`validateURL` in
//! `pkg/apis/apiserver/validation`) observes it: whether it fails and with which text, the
//! lower-cased scheme, whether there is userinfo, a non-empty raw query, a non-empty fragment
//! and a host. Nothing else of the URL is kept: the configuration keeps the string as written,
//! as Kubernetes does.
//!
//! Written from Go's documented behaviour and its error texts (`parse "<url>": <reason>`,
//! the URL without its fragment unless the fragment is what failed to parse). The IP-literal
//! check of the newest Go releases (a bracketed host must be an IPv6 address) is not
//! modelled: `[` … `]` hosts are checked for their port and escapes only, as Go did for years.

use crate::jwt::{go_quote, go_quote_bytes};

/// What `validateURL` reads of a parsed URL.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GoUrl {
    /// Lower-cased, as Go stores it.
    pub scheme: String,
    /// `u.User != nil`: an `@` in the authority.
    pub user: bool,
    /// `len(u.RawQuery) > 0`.
    pub query: bool,
    /// `len(u.Fragment) > 0`.
    pub fragment: bool,
    /// `u.Host != ""`.
    pub host: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Host,
    Zone,
    UserPassword,
    Path,
    Fragment,
}

/// `url.Parse(raw)`: `Err` is Go's whole error text (`parse "…": …`).
pub(crate) fn parse(raw: &str) -> Result<GoUrl, String> {
    let (u, frag) = match raw.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (raw, None),
    };
    let mut url = parse_no_fragment(u).map_err(|why| format!("parse {}: {why}", go_quote(u)))?;
    if let Some(f) = frag.filter(|f| !f.is_empty()) {
        unescape(f, Mode::Fragment).map_err(|why| format!("parse {}: {why}", go_quote(raw)))?;
        url.fragment = true;
    }
    Ok(url)
}

fn parse_no_fragment(raw: &str) -> Result<GoUrl, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = GoUrl::default();
    if raw == "*" {
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1] // ForceQuery: an empty query
    } else {
        match rest.split_once('?') {
            Some((r, q)) => {
                url.query = !q.is_empty();
                r
            }
            None => rest,
        }
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            return Ok(url); // opaque (`https:host`): no authority
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    let mut path = rest;
    if (!url.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, p) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        let (user, host) = authority_parts(authority)?;
        url.user = user;
        url.host = host;
        path = p;
    }
    unescape(path, Mode::Path)?;
    Ok(url)
}

/// Go's `getScheme`: a scheme is letters, then letters, digits, `+`, `-`, `.`, up to `:`.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, b) in raw.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: `(has userinfo, has host)`.
fn authority_parts(authority: &str) -> Result<(bool, bool), String> {
    let at = authority.rfind('@');
    let host = match at {
        Some(i) => &authority[i + 1..],
        None => authority,
    };
    check_host(host)?;
    let Some(i) = at else {
        return Ok((false, !host.is_empty()));
    };
    let userinfo = &authority[..i];
    let valid = userinfo
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c));
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    match userinfo.split_once(':') {
        Some((name, password)) => {
            unescape(name, Mode::UserPassword)?;
            unescape(password, Mode::UserPassword)?;
        }
        None => unescape(userinfo, Mode::UserPassword)?,
    }
    Ok((true, !host.is_empty()))
}

/// Go's `parseHost` (errors only).
fn check_host(host: &str) -> Result<(), String> {
    let port_err = |p: &str| format!("invalid port {} after host", go_quote(p));
    if host.starts_with('[') {
        let i = host.rfind(']').ok_or("missing ']' in host")?;
        let colon_port = &host[i + 1..];
        if !valid_optional_port(colon_port) {
            return Err(port_err(colon_port));
        }
        if let Some(zone) = host[..i].find("%25") {
            unescape(&host[..zone], Mode::Host)?;
            unescape(&host[zone..i], Mode::Zone)?;
            return unescape(&host[i..], Mode::Host);
        }
    } else if let Some(i) = host.rfind(':') {
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port) {
            return Err(port_err(colon_port));
        }
    }
    unescape(host, Mode::Host)
}

fn valid_optional_port(p: &str) -> bool {
    p.is_empty()
        || p.strip_prefix(':')
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `shouldEscape(c, encodeHost)` (the same for `encodeZone`).
fn host_must_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c))
}

/// The checks of Go's `unescape` (its output is not needed).
fn unescape(s: &str, mode: Mode) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    return Err(escape_error(&b[i..(i + 3).min(b.len())]));
                }
                let v = (hex(b[i + 1]) << 4) | hex(b[i + 2]);
                let pct25 = &b[i..i + 3] == b"%25";
                // In a host, %-encoding is only for non-ASCII bytes (and `%25` for zones).
                if mode == Mode::Host && hex(b[i + 1]) < 8 && !pct25 {
                    return Err(escape_error(&b[i..i + 3]));
                }
                if mode == Mode::Zone && !pct25 && v != b' ' && host_must_escape(v) {
                    return Err(escape_error(&b[i..i + 3]));
                }
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && host_must_escape(c) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&(c as char).to_string())
                    ));
                }
                i += 1;
            }
        }
    }
    Ok(())
}

fn hex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// `invalid URL escape "%zz"`: the up-to-three bytes may end inside a UTF-8 sequence, which
/// Go's `strconv.Quote` shows as `\xNN`.
fn escape_error(bytes: &[u8]) -> String {
    format!("invalid URL escape {}", go_quote_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_url_parse_vectors() {
        let ok = |scheme: &str, user, query, fragment, host| {
            Ok(GoUrl {
                scheme: scheme.into(),
                user,
                query,
                fragment,
                host,
            })
        };
        let cases: Vec<(&str, Result<GoUrl, String>)> = vec![
            ("https://h/p", ok("https", false, false, false, true)),
            ("HTTPS://h", ok("https", false, false, false, true)),
            ("https://u@h?q#f", ok("https", true, true, true, true)),
            ("https://@h", ok("https", true, false, false, true)),
            ("https://h?", ok("https", false, false, false, true)),
            ("https://h??", ok("https", false, true, false, true)),
            ("https://h#", ok("https", false, false, false, true)),
            ("https://h?a@b", ok("https", false, true, false, true)),
            ("https:opaque", ok("https", false, false, false, false)),
            ("https:///p", ok("https", false, false, false, false)),
            ("https://", ok("https", false, false, false, false)),
            ("//h/p", ok("", false, false, false, true)),
            ("*", ok("", false, false, false, false)),
            (
                "https://[fe80::1%25en0]:1",
                ok("https", false, false, false, true),
            ),
            ("https://h:", ok("https", false, false, false, true)),
            ("https://h\u{e9}", ok("https", false, false, false, true)),
            ("https://h%C3%A9", ok("https", false, false, false, true)),
            (
                "https://h:1x",
                Err(r#"parse "https://h:1x": invalid port ":1x" after host"#.into()),
            ),
            (
                "https://u:p:x@h:-1",
                Err(r#"parse "https://u:p:x@h:-1": invalid port ":-1" after host"#.into()),
            ),
            (
                "https://[fe80::1%25%00]",
                Err(r#"parse "https://[fe80::1%25%00]": invalid URL escape "%00""#.into()),
            ),
            (
                "https://h/%e2%8",
                Err(r#"parse "https://h/%e2%8": invalid URL escape "%8""#.into()),
            ),
            (
                "https://h/%\u{e9}",
                Err(r#"parse "https://h/%é": invalid URL escape "%é""#.into()),
            ),
            (
                "https://h/%\u{20ac}",
                Err(r#"parse "https://h/%€": invalid URL escape "%\xe2\x82""#.into()),
            ),
            (
                "https://u%zz@h",
                Err(r#"parse "https://u%zz@h": invalid URL escape "%zz""#.into()),
            ),
            (
                "https://%1:2@h",
                Err(r#"parse "https://%1:2@h": invalid URL escape "%1""#.into()),
            ),
            (
                "https://u\u{e9}@h",
                Err(r#"parse "https://ué@h": net/url: invalid userinfo"#.into()),
            ),
            (
                "https://h{}",
                Err(r#"parse "https://h{}": invalid character "{" in host name"#.into()),
            ),
            (
                "ht_tp://h",
                Err(r#"parse "ht_tp://h": first path segment in URL cannot contain colon"#.into()),
            ),
            (
                "https://h\x7f",
                Err(r#"parse "https://h\x7f": net/url: invalid control character in URL"#.into()),
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(parse(raw), want, "{raw:?}");
        }
    }
}
