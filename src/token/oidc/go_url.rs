//! Go's `net/url.Parse`, as far as Kubernetes' issuer URL validation (`validateURL` in
//! `pkg/apis/apiserver/validation`) observes it: whether it fails and with which text, the
//! lower-cased scheme, whether there is userinfo, a non-empty raw query, a non-empty fragment
//! and a host. Nothing else of the URL is kept: the configuration keeps the string as written,
//! as Kubernetes does.
//!
//! Written from Go's documented behaviour and its error texts (`parse "<url>": <reason>`,
//! the URL without its fragment unless the fragment is what failed to parse), as of Go 1.26,
//! the release Kubernetes 1.37 is built with (and whose GODEBUG defaults it sets): a `[` other
//! than the host's first byte is `invalid IP-literal`; a bracketed host must be an IPv6 address
//! (`net/netip.ParseAddr`'s error texts, after `invalid host: `; an IPv4 address is `invalid
//! IP-literal`); and an `http`/`https` host may hold at most one colon (`urlstrictcolons=1`:
//! `https://a:1:2` is `invalid port ":1:2" after host`), while other schemes keep the port after
//! the last colon.

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
        let (user, host) = authority_parts(&url.scheme, authority)?;
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

/// Go's `parseAuthority`: `(has userinfo, has host)`; `scheme` is lower-cased.
fn authority_parts(scheme: &str, authority: &str) -> Result<(bool, bool), String> {
    let at = authority.rfind('@');
    let host = match at {
        Some(i) => &authority[i + 1..],
        None => authority,
    };
    check_host(scheme, host)?;
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
        None => {
            unescape(userinfo, Mode::UserPassword)?;
        }
    }
    Ok((true, !host.is_empty()))
}

/// Go 1.26's `parseHost` (errors only).
fn check_host(scheme: &str, host: &str) -> Result<(), String> {
    let port_err = |p: &str| format!("invalid port {} after host", go_quote(p));
    match host.rfind('[') {
        Some(0) => {}
        Some(_) => return Err("invalid IP-literal".into()),
        None => {
            if let Some(first) = host.find(':') {
                // `urlstrictcolons=1` (Go 1.26's default): for http and https the port starts
                // at the first colon; other schemes keep the historical last colon.
                let i = if scheme == "http" || scheme == "https" {
                    first
                } else {
                    host.rfind(':').unwrap_or(first)
                };
                if !valid_optional_port(&host[i..]) {
                    return Err(port_err(&host[i..]));
                }
            }
            unescape(host, Mode::Host)?;
            return Ok(());
        }
    }
    let close = host.rfind(']').ok_or("missing ']' in host")?;
    let colon_port = &host[close + 1..];
    if !valid_optional_port(colon_port) {
        return Err(port_err(colon_port));
    }
    let hostname = &host[1..close];
    let address = match hostname.find("%25") {
        Some(zone) => {
            let mut a = unescape(&hostname[..zone], Mode::Host)?;
            a.extend(unescape(&hostname[zone..], Mode::Zone)?);
            a
        }
        None => unescape(hostname, Mode::Host)?,
    };
    // Only an IPv6 address may be bracketed (an IPv4-mapped one included).
    match parse_addr(&address) {
        Err(e) => Err(format!("invalid host: {e}")),
        Ok(Addr::V4) => Err("invalid IP-literal".into()),
        Ok(Addr::V6) => Ok(()),
    }
}

/// What [`parse_addr`] found.
#[derive(Debug, PartialEq, Eq)]
enum Addr {
    V4,
    V6,
}

/// netip's `parseAddrError` text: `ParseAddr("<input>"): <msg>`, then ` (at "<rest>")` when
/// the unparsed rest is known and not empty.
fn addr_error(input: &[u8], msg: &str, at: &[u8]) -> String {
    let mut e = format!("ParseAddr({}): {msg}", go_quote_bytes(input));
    if !at.is_empty() {
        e.push_str(&format!(" (at {})", go_quote_bytes(at)));
    }
    e
}

/// Go's `net/netip.ParseAddr` (which family, or its error text); `input` is an unescaped
/// host, so it may be any bytes.
fn parse_addr(input: &[u8]) -> Result<Addr, String> {
    for &b in input {
        match b {
            b'.' => return ipv4_fields(input, input).map(|()| Addr::V4),
            b':' => return parse_ipv6(input).map(|()| Addr::V6),
            b'%' => return Err(addr_error(input, "missing IPv6 address", b"")),
            _ => {}
        }
    }
    Err(addr_error(input, "unable to parse IP", b""))
}

/// netip's `parseIPv4Fields` over `s`, a part of `input` (which its errors quote).
fn ipv4_fields(input: &[u8], s: &[u8]) -> Result<(), String> {
    let fail = |msg: &str, at: &[u8]| Err(addr_error(input, msg, at));
    let (mut val, mut digits, mut dots) = (0u32, 0, 0);
    for (i, &c) in s.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                if digits == 1 && val == 0 {
                    return fail("IPv4 field has octet with leading zero", b"");
                }
                val = val * 10 + u32::from(c - b'0');
                digits += 1;
                if val > 255 {
                    return fail("IPv4 field has value >255", b"");
                }
            }
            b'.' => {
                if i == 0 || i == s.len() - 1 || s[i - 1] == b'.' {
                    return fail("IPv4 field must have at least one digit", &s[i..]);
                }
                if dots == 3 {
                    return fail("IPv4 address too long", b"");
                }
                dots += 1;
                val = 0;
                digits = 0;
            }
            _ => return fail("unexpected character", &s[i..]),
        }
    }
    if dots < 3 {
        return fail("IPv4 address too short", b"");
    }
    Ok(())
}

/// netip's `parseIPv6` (an IPv4 tail is checked by [`ipv4_fields`]; the zone, after `%`,
/// must not be empty).
fn parse_ipv6(input: &[u8]) -> Result<(), String> {
    let fail = |msg: &str, at: &[u8]| Err(addr_error(input, msg, at));
    let mut s = input;
    let mut zone_len = None;
    if let Some(i) = s.iter().position(|&b| b == b'%') {
        if i + 1 == s.len() {
            return fail("zone must be a non-empty string", b"");
        }
        zone_len = Some(s.len() - i - 1);
        s = &s[..i];
    }
    let mut filled = 0; // bytes of the 16 written
    let mut ellipsis = false;
    if s.starts_with(b"::") {
        ellipsis = true;
        s = &s[2..];
        if s.is_empty() {
            return Ok(());
        }
    }
    while filled < 16 {
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < s.len() {
            let d = match s[off] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                c @ b'A'..=b'F' => c - b'A' + 10,
                _ => break,
            };
            acc = (acc << 4) + u32::from(d);
            if off > 3 {
                return fail("each group must have 4 or less digits", s);
            }
            if acc > 0xffff {
                return fail("IPv6 field has value >=2^16", s);
            }
            off += 1;
        }
        if off == 0 {
            return fail("each colon-separated field must have at least one digit", s);
        }
        if off < s.len() && s[off] == b'.' {
            if !ellipsis && filled != 12 {
                return fail(
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    s,
                );
            }
            if filled + 4 > 16 {
                return fail(
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    s,
                );
            }
            let end = input.len() - zone_len.map_or(0, |z| z + 1);
            ipv4_fields(input, &input[end - s.len()..end])?;
            filled += 4;
            s = &[];
            break;
        }
        filled += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' {
            return fail("unexpected character, want colon", s);
        } else if s.len() == 1 {
            return fail("colon must be followed by more characters", s);
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis {
                return fail("multiple :: in address", s);
            }
            ellipsis = true;
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return fail("trailing garbage after address", s);
    }
    match (filled < 16, ellipsis) {
        (true, false) => fail("address string too short", b""),
        (false, true) => fail("the :: must expand to at least one field of zeros", b""),
        _ => Ok(()),
    }
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

/// Go's `unescape`: the unescaped bytes, or its error (`+` is not a space in these modes).
fn unescape(s: &str, mode: Mode) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
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
                out.push(v);
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && host_must_escape(c) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&(c as char).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
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

    /// Go 1.26's host checks (`urlstrictcolons=1`, IP-literals through `netip.ParseAddr`):
    /// every expected text is what `url.Parse` printed under Go 1.26.8 with `go 1.26.0` in
    /// go.mod (Kubernetes 1.37's GODEBUG defaults).
    #[test]
    fn go_1_26_host_checks() {
        let cases: &[(&str, Option<&str>)] = &[
            ("https://a:1:2", Some(r#"invalid port ":1:2" after host"#)),
            (
                "https://h:8080:",
                Some(r#"invalid port ":8080:" after host"#),
            ),
            ("HTTPS://a:1:2", Some(r#"invalid port ":1:2" after host"#)),
            ("http://a:1:2", Some(r#"invalid port ":1:2" after host"#)),
            ("https://u@a:1:2", Some(r#"invalid port ":1:2" after host"#)),
            ("https://a::", Some(r#"invalid port "::" after host"#)),
            ("ftp://a:1:2", None),
            ("foo://a:b:1", None),
            ("https://a:1:2@h", None),
            ("https://:", None),
            ("https://:80", None),
            ("https://a]b", None),
            ("https://h[", Some("invalid IP-literal")),
            ("https://h[]", Some("invalid IP-literal")),
            ("https://[[::1]]", Some("invalid IP-literal")),
            ("https://[1.2.3.4]", Some("invalid IP-literal")),
            ("https://[::1]", None),
            ("https://[::1]:80", None),
            ("https://[::1]:", None),
            ("https://[::]", None),
            ("https://[::ffff:1.2.3.4]", None),
            ("https://[::1.2.3.4]", None),
            ("https://[1:2:3:4:5:6:1.2.3.4]", None),
            ("https://[0:0:0:0:0:0:0:0]", None),
            ("https://[1:2:3:4:5:6:7::]", None),
            ("https://[fe80::1%25en0]", None),
            ("https://[fe80::1%25en%300]", None),
            ("https://[::1%25en0]:8080/p", None),
            (
                "https://[fe80::1%25]",
                Some(r#"invalid host: ParseAddr("fe80::1%"): zone must be a non-empty string"#),
            ),
            ("https://[fe80::1%en0]", Some(r#"invalid URL escape "%en""#)),
            ("https://[fe80::1%2]", Some(r#"invalid URL escape "%2""#)),
            (
                "https://[::1%25%C3%A9]",
                Some(r#"invalid URL escape "%C3""#),
            ),
            ("https://[::1]%41", Some(r#"invalid port "%41" after host"#)),
            (
                "https://[]",
                Some(r#"invalid host: ParseAddr(""): unable to parse IP"#),
            ),
            (
                "https://[x]",
                Some(r#"invalid host: ParseAddr("x"): unable to parse IP"#),
            ),
            (
                "https://[abc]",
                Some(r#"invalid host: ParseAddr("abc"): unable to parse IP"#),
            ),
            (
                "https://[%25]",
                Some(r#"invalid host: ParseAddr("%"): missing IPv6 address"#),
            ),
            (
                "https://[%C3%A9]",
                Some(r#"invalid host: ParseAddr("é"): unable to parse IP"#),
            ),
            (
                "https://[::1:]",
                Some(
                    r#"invalid host: ParseAddr("::1:"): colon must be followed by more characters (at ":")"#,
                ),
            ),
            (
                "https://[1:]",
                Some(
                    r#"invalid host: ParseAddr("1:"): colon must be followed by more characters (at ":")"#,
                ),
            ),
            (
                "https://[1:2:3:4:5:6:7:8:9]",
                Some(
                    r#"invalid host: ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#,
                ),
            ),
            (
                "https://[12345::]",
                Some(
                    r#"invalid host: ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")"#,
                ),
            ),
            (
                "https://[00000::]",
                Some(
                    r#"invalid host: ParseAddr("00000::"): each group must have 4 or less digits (at "00000::")"#,
                ),
            ),
            (
                "https://[1::2::3]",
                Some(r#"invalid host: ParseAddr("1::2::3"): multiple :: in address (at ":3")"#),
            ),
            (
                "https://[::1.2.3]",
                Some(r#"invalid host: ParseAddr("::1.2.3"): IPv4 address too short"#),
            ),
            (
                "https://[::1.2.3.4.5]",
                Some(r#"invalid host: ParseAddr("::1.2.3.4.5"): IPv4 address too long"#),
            ),
            (
                "https://[::01.2.3.4]",
                Some(
                    r#"invalid host: ParseAddr("::01.2.3.4"): IPv4 field has octet with leading zero"#,
                ),
            ),
            (
                "https://[::256.2.3.4]",
                Some(r#"invalid host: ParseAddr("::256.2.3.4"): IPv4 field has value >255"#),
            ),
            (
                "https://[1:2:3:4:5:6:7:1.2.3.4]",
                Some(
                    r#"invalid host: ParseAddr("1:2:3:4:5:6:7:1.2.3.4"): embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")"#,
                ),
            ),
            (
                "https://[1:2:3:4:5:6:7:8::]",
                Some(
                    r#"invalid host: ParseAddr("1:2:3:4:5:6:7:8::"): the :: must expand to at least one field of zeros"#,
                ),
            ),
            (
                "https://[:1]",
                Some(
                    r#"invalid host: ParseAddr(":1"): each colon-separated field must have at least one digit (at ":1")"#,
                ),
            ),
            (
                "https://[::g]",
                Some(
                    r#"invalid host: ParseAddr("::g"): each colon-separated field must have at least one digit (at "g")"#,
                ),
            ),
            (
                "https://[::1]]",
                Some(
                    r#"invalid host: ParseAddr("::1]"): unexpected character, want colon (at "]")"#,
                ),
            ),
            (
                "https://[1.2.3]",
                Some(r#"invalid host: ParseAddr("1.2.3"): IPv4 address too short"#),
            ),
            (
                "https://[1.2.3.4%25z]",
                Some(r#"invalid host: ParseAddr("1.2.3.4%z"): unexpected character (at "%z")"#),
            ),
            (
                "https://[1..2.3.4]",
                Some(
                    r#"invalid host: ParseAddr("1..2.3.4"): IPv4 field must have at least one digit (at ".2.3.4")"#,
                ),
            ),
            (
                "https://[::1.2..3]",
                Some(
                    r#"invalid host: ParseAddr("::1.2..3"): IPv4 field must have at least one digit (at ".3")"#,
                ),
            ),
            (
                "https://[::.1.2.3]",
                Some(
                    r#"invalid host: ParseAddr("::.1.2.3"): each colon-separated field must have at least one digit (at ".1.2.3")"#,
                ),
            ),
            (
                "https://[::1.2.3.]",
                Some(
                    r#"invalid host: ParseAddr("::1.2.3."): IPv4 field must have at least one digit (at ".")"#,
                ),
            ),
        ];
        for &(raw, want) in cases {
            let want = want.map(|why| format!("parse {}: {why}", go_quote(raw)));
            assert_eq!(parse(raw).err(), want, "{raw:?}");
        }
    }
}
