//! Go's `net/url`, as far as this crate's two users observe it, written from Go's documented
//! behaviour and its error texts as of Go 1.26, the release Kubernetes 1.37 is built with (and
//! whose GODEBUG defaults it sets):
//!
//! * [`issuer`]: Kubernetes' issuer URL validation (`validateURL` in
//!   `pkg/apis/apiserver/validation`) — whether `url.Parse` fails and with which text, the
//!   lower-cased scheme, whether there is userinfo, a non-empty raw query, a non-empty fragment
//!   and a host;
//! * `rest` (feature `remote`): the URL a Kubernetes client sends a webhook request to, worked
//!   out as Go's `net/url` and client-go do it (not as the WHATWG parser behind `reqwest::Url`
//!   would), and the form of it shown in error texts.
//!
//! One `url.Parse` serves both: its error texts are `parse "<url>": <reason>`, the URL without
//! its fragment unless the fragment is what failed to parse. The host is checked as Go 1.26
//! checks it: a `[` other than the host's first byte is `invalid IP-literal`; a bracketed host
//! must be an IPv6 address (`net/netip.ParseAddr`'s error texts, after `invalid host: `; an
//! IPv4 address is `invalid IP-literal`); and an `http`/`https` host may hold at most one colon
//! (`urlstrictcolons=1`: `https://a:1:2` is `invalid port ":1:2" after host`), while other
//! schemes keep the port after the last colon. The host is kept decoded, as Go keeps it, and
//! written back escaped (`https://h%c3%a9` is sent to `https://h%C3%A9`, `https://é` to
//! `https://%C3%A9`).

use crate::jwt::{go_quote, go_quote_bytes};

#[cfg(test)]
mod go_vectors;

/// The parts of Go's `url.URL` that the users read.
#[derive(Debug, Default)]
// Without the `remote` feature only the issuer validation reads a URL, and it reads less.
#[cfg_attr(not(feature = "remote"), allow(dead_code))]
struct Url {
    /// Lower-cased, as Go stores it.
    scheme: String,
    /// A scheme followed by something that does not start with `/` (`https:h`).
    opaque: bool,
    /// Decoded user name and password (`u.User != nil`: an `@` in the authority).
    user: Option<UserPassword>,
    /// Decoded, as Go stores it (`%C3%A9` is `é`, a zone's `%25` is `%`); written back escaped.
    host: Vec<u8>,
    /// `//` after the scheme (or at the start of a URL without one).
    has_authority: bool,
    /// Decoded.
    path: Vec<u8>,
    /// The path as written, when that differs from Go's default escaping of `path`.
    raw_path: String,
    /// After the first `?`, as written.
    raw_query: String,
    /// A `?` with nothing after it.
    force_query: bool,
    /// Decoded.
    fragment: Vec<u8>,
}

/// Why `url.Parse` failed.
#[derive(Debug)]
struct ParseError {
    /// Go's reason (what follows `parse "<url>": `).
    reason: String,
    /// Whether the fragment failed to parse (the text then shows the whole URL).
    in_fragment: bool,
}

impl ParseError {
    /// Go's whole text, `parse "<url>": <reason>`, for `shown`: the URL parsed, or the same URL
    /// written otherwise (its user information masked); it is cut before its first `#` unless
    /// the fragment failed.
    fn text(&self, shown: &str) -> String {
        let shown = match shown.split_once('#') {
            Some((u, _)) if !self.in_fragment => u,
            _ => shown,
        };
        format!("parse {}: {}", go_quote(shown), self.reason)
    }
}

/// Go's `encoding`: the part of a URL being escaped or unescaped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Host,
    Zone,
    UserPassword,
    Path,
    Fragment,
    /// Only the REST target's query writes one.
    #[cfg(feature = "remote")]
    QueryComponent,
}

/// `url.Parse(raw)`: the fragment is split off first.
fn parse(raw: &str) -> Result<Url, ParseError> {
    let (u, frag) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse_no_fragment(u, false).map_err(|reason| ParseError {
        reason,
        in_fragment: false,
    })?;
    url.fragment = unescape(frag, Mode::Fragment).map_err(|reason| ParseError {
        reason,
        in_fragment: true,
    })?;
    Ok(url)
}

/// `url.ParseRequestURI(raw)` (no fragment: a `#` belongs to the path); `Err` is Go's reason.
#[cfg(feature = "remote")]
fn parse_request_uri(raw: &str) -> Result<Url, String> {
    parse_no_fragment(raw, true)
}

/// Go's `url.parse(raw, viaRequest)`: `Err` is Go's reason.
fn parse_no_fragment(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
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
            url.opaque = true; // `https:host`: no authority
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        if rest.split('/').next().is_some_and(|s| s.contains(':')) {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let (authority, path) = match rest[2..].find('/') {
            Some(i) => (&rest[2..2 + i], &rest[2 + i..]),
            None => (&rest[2..], ""),
        };
        let (user, host) = parse_authority(&url.scheme, authority)?;
        url.has_authority = true;
        url.user = user;
        url.host = host;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    if escape(&url.path, Mode::Path) != rest {
        url.raw_path = rest.to_owned();
    }
    Ok(url)
}

/// Go's `getScheme`: a scheme is letters, then letters, digits, `+`, `-`, `.`, up to `:`.
fn get_scheme(raw: &str) -> Result<(&str, &str), String> {
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

/// A decoded user name and, after a `:`, password.
type UserPassword = (Vec<u8>, Option<Vec<u8>>);

/// Go's `parseAuthority` (`scheme` is lower-cased): the user information and the host, both
/// decoded; the host is checked first.
fn parse_authority(
    scheme: &str,
    authority: &str,
) -> Result<(Option<UserPassword>, Vec<u8>), String> {
    let at = authority.rfind('@');
    let host = match at {
        Some(i) => &authority[i + 1..],
        None => authority,
    };
    let host = parse_host(scheme, host)?;
    let Some(i) = at else {
        return Ok((None, host));
    };
    let userinfo = &authority[..i];
    if !valid_userinfo(userinfo) {
        return Err("net/url: invalid userinfo".into());
    }
    let user = match userinfo.split_once(':') {
        Some((name, password)) => (
            unescape(name, Mode::UserPassword)?,
            Some(unescape(password, Mode::UserPassword)?),
        ),
        None => (unescape(userinfo, Mode::UserPassword)?, None),
    };
    Ok((Some(user), host))
}

/// Go's `validUserinfo`.
fn valid_userinfo(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
}

/// Go 1.26's `parseHost`: the host decoded, or why it is refused.
fn parse_host(scheme: &str, host: &str) -> Result<Vec<u8>, String> {
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
            return unescape(host, Mode::Host);
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
        Ok(Addr::V6) => Ok([b"[", &address[..], b"]", colon_port.as_bytes()].concat()),
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
    if let Some(i) = s.iter().position(|&b| b == b'%') {
        if i + 1 == s.len() {
            return fail("zone must be a non-empty string", b"");
        }
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
            let Some(d) = char::from(s[off]).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + d;
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
            ipv4_fields(input, s)?;
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

/// Go's `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    // A host also allows the sub-delims, `:` (a port), `[`, `]` (an IPv6 address), `<`, `>`
    // and `"`.
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::Fragment => false,
            Mode::Host | Mode::Zone => true,
            #[cfg(feature = "remote")]
            Mode::QueryComponent => true,
        },
        b'!' | b'(' | b')' | b'*' => mode != Mode::Fragment,
        _ => true,
    }
}

/// Go's `escape` (upper-case hex; a space is `+` in a query component).
fn escape(s: &[u8], mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s {
        #[cfg(feature = "remote")]
        if c == b' ' && mode == Mode::QueryComponent {
            out.push('+');
            continue;
        }
        if should_escape(c, mode) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(char::from(c));
        }
    }
    out
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
                // Both checked hex digits just above.
                let hex = |c: u8| char::from(c).to_digit(16).unwrap_or(0) as u8;
                let v = (hex(b[i + 1]) << 4) | hex(b[i + 2]);
                let pct25 = &b[i..i + 3] == b"%25";
                // In a host, %-encoding is only for non-ASCII bytes (and `%25` for zones).
                if mode == Mode::Host && hex(b[i + 1]) < 8 && !pct25 {
                    return Err(escape_error(&b[i..i + 3]));
                }
                if mode == Mode::Zone && !pct25 && v != b' ' && should_escape(v, Mode::Host) {
                    return Err(escape_error(&b[i..i + 3]));
                }
                out.push(v);
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
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

/// `invalid URL escape "%zz"`: the up-to-three bytes may end inside a UTF-8 sequence, which
/// Go's `strconv.Quote` shows as `\xNN`.
fn escape_error(bytes: &[u8]) -> String {
    format!("invalid URL escape {}", go_quote_bytes(bytes))
}

/// Go's `validEncoded` for a path.
#[cfg(feature = "remote")]
fn valid_encoded_path(s: &str) -> bool {
    s.bytes()
        .all(|c| b"!$&'()*+,;=:@[]%".contains(&c) || !should_escape(c, Mode::Path))
}

#[cfg(feature = "remote")]
impl Url {
    /// Go's `EscapedPath`.
    fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded_path(&self.raw_path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        escape(&self.path, Mode::Path)
    }

    /// Go's `url.String()` for a URL that is not opaque and has no fragment; `masked` writes the
    /// user information as the error texts do.
    fn string(&self, masked: bool) -> String {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        // Go's `OmitHost`: `scheme:/path` has no authority to write.
        let omit_host = !self.has_authority && self.host.is_empty() && self.user.is_none();
        let authority =
            (!self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some()) && !omit_host;
        if authority && (!self.host.is_empty() || !self.path.is_empty() || self.user.is_some()) {
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
        out.push_str(&escape(&self.host, Mode::Host));
        let path = self.escaped_path();
        if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
            out.push('/');
        }
        // A first segment with a colon would read as a scheme.
        if out.is_empty() && path.split('/').next().is_some_and(|s| s.contains(':')) {
            out.push_str("./");
        }
        out.push_str(&path);
        if self.force_query || !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        out
    }
}

/// `url.Parse` as Go's X.509 parser runs it on a URI subject alternative name, for Go's name
/// constraint check (`parseURIs`), which reads only `u.Host`.
pub(crate) mod san {
    /// `u.Host` (decoded, the port kept, an IPv6 literal in brackets) of `url.Parse(raw)`;
    /// `Err` is Go's whole error text (`parse "…": …`).
    pub(crate) fn host(raw: &str) -> Result<Vec<u8>, String> {
        super::parse(raw).map(|u| u.host).map_err(|e| e.text(raw))
    }
}

/// Kubernetes' issuer URL validation (`validateURL`) reads only whether `url.Parse` fails and
/// with which text, and a few facts of the URL: nothing else of it is kept, the configuration
/// keeps the string as written, as Kubernetes does.
pub(crate) mod issuer {
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

    /// `url.Parse(raw)`: `Err` is Go's whole error text (`parse "…": …`).
    pub(crate) fn parse(raw: &str) -> Result<GoUrl, String> {
        let u = super::parse(raw).map_err(|e| e.text(raw))?;
        Ok(GoUrl {
            scheme: u.scheme,
            user: u.user.is_some(),
            query: !u.raw_query.is_empty(),
            fragment: !u.fragment.is_empty(),
            host: !u.host.is_empty(),
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::jwt::go_quote;

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
                    Err(
                        r#"parse "ht_tp://h": first path segment in URL cannot contain colon"#
                            .into(),
                    ),
                ),
                (
                    "https://h\x7f",
                    Err(
                        r#"parse "https://h\x7f": net/url: invalid control character in URL"#
                            .into(),
                    ),
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
}

/// The URL a Kubernetes client sends a webhook request to, in two steps, as in kube-apiserver:
///
/// 1. `clientcmd` (loading a kubeconfig, `client_config.go`): a `server` that parses as a
///    request URI (`url.ParseRequestURI`: a `#` is part of the path there) and whose path is
///    longer than `/` loses its query (and so `https://h/a#b` becomes `https://h/a%23b`).
/// 2. client-go's REST client (`rest.NewRESTClient`, `Request.URL`): the query and the fragment
///    are dropped, the path is cleaned (`path.Join`: no trailing slash, `//`, `.` or `..`), and
///    the query is `timeout=<the client's timeout>` (`?timeout=30s` for the webhooks).
///
/// Both parse the server with Go's `net/url`, so a host it refuses is refused. The shown form
/// (for error texts, `Post "<url>": …`) is Go's `url.String()` with the password written `***`
/// as net/http's `stripPassword` does; a user name without a password (which net/http sends as
/// Basic credentials) is written `***` too, where Go shows it.
#[cfg(feature = "remote")]
pub(crate) mod rest {
    use std::time::Duration;

    use super::{Mode, Url, escape, parse, parse_request_uri};
    use crate::jwt::go_quote;

    /// Go's `url.Parse` of `prefix` + `raw`, with its `parse "<url>": …` error, which never
    /// shows a secret: the URL in it is [`shown_raw`], and the reason's quoted text is written
    /// `"***"` when it comes from the user information ([`mask_reason`]).
    fn parse_masked(prefix: &str, raw: &str) -> Result<Url, String> {
        parse(&format!("{prefix}{raw}")).map_err(|mut e| {
            e.reason = mask_reason(raw, &e.reason);
            e.text(&format!("{prefix}{}", shown_raw(raw)))
        })
    }

    /// Go's `reason` for `raw`, each of its quoted texts written `"***"` when it may come from
    /// the user information of `raw` (whatever stands before the last `@` of its authority): Go
    /// quotes a bad escape there, and a password with a `/` ends Go's authority early, so that
    /// its port (`u:pass/x@h`: `invalid port ":pass" after host`) or a bad escape after it
    /// (`u:1/%4@h`: `"%4@"`) is the password. A quoted text is read back from Go's `%q` (so
    /// that a `\`, a `"` or a byte that is not printable is compared as it stands in `raw`) and
    /// shown only when it stands in `raw` and every place it stands is outside the user
    /// information; a text found nowhere, or a quote that does not read, is masked (a host's
    /// text that reads the same as a part of the user information is masked too, harmlessly).
    pub(super) fn mask_reason(raw: &str, reason: &str) -> String {
        let start = authority_start(raw);
        let Some(at) = raw[start..].rfind('@').map(|i| start + i) else {
            return reason.to_owned();
        };
        let mut out = String::with_capacity(reason.len());
        let mut rest = reason;
        while let Some(open) = rest.find('"') {
            out.push_str(&rest[..open]);
            let body = &rest[open + 1..];
            let Some((text, len)) = go_unquote(body) else {
                out.push_str("\"***\"");
                return out;
            };
            if text.is_empty() || outside(raw.as_bytes(), start..at, &text) {
                out.push_str(&rest[open..open + len + 2]);
            } else {
                out.push_str("\"***\"");
            }
            rest = &body[len + 1..];
        }
        out.push_str(rest);
        out
    }

    /// Whether `text` stands in `raw`, and only outside `span`.
    fn outside(raw: &[u8], span: std::ops::Range<usize>, text: &[u8]) -> bool {
        let mut found = false;
        for (i, w) in raw.windows(text.len()).enumerate() {
            if w == text {
                if i < span.end && span.start < i + text.len() {
                    return false;
                }
                found = true;
            }
        }
        found
    }

    /// The bytes of the Go-quoted (`%q`) text that `body` starts with (after its opening `"`),
    /// and the length of its quoted form up to the closing `"`; `None` when it does not read.
    fn go_unquote(body: &str) -> Option<(Vec<u8>, usize)> {
        let b = body.as_bytes();
        let hex = |s: &[u8]| {
            std::str::from_utf8(s)
                .ok()
                .and_then(|s| u32::from_str_radix(s, 16).ok())
        };
        let (mut out, mut i) = (Vec::new(), 0);
        loop {
            match *b.get(i)? {
                b'"' => return Some((out, i)),
                b'\\' => {
                    let (byte, n) = match *b.get(i + 1)? {
                        c @ (b'\\' | b'"' | b'\'') => (Some(c), 2),
                        b'a' => (Some(7), 2),
                        b'b' => (Some(8), 2),
                        b'f' => (Some(0xc), 2),
                        b'n' => (Some(b'\n'), 2),
                        b'r' => (Some(b'\r'), 2),
                        b't' => (Some(b'\t'), 2),
                        b'v' => (Some(0xb), 2),
                        b'x' => (Some(u8::try_from(hex(b.get(i + 2..i + 4)?)?).ok()?), 4),
                        b'u' => (None, 6),
                        b'U' => (None, 10),
                        _ => return None,
                    };
                    match byte {
                        Some(c) => out.push(c),
                        None => {
                            let c = char::from_u32(hex(b.get(i + 2..i + n)?)?)?;
                            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                    }
                    i += n;
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
    }

    /// A server URL as written, for a text about it: user information masked
    /// ([`mask_userinfo`]), and a query or fragment, which may carry a key, written `?***` /
    /// `#***` (`outbound::redact_server`).
    pub(super) fn shown_raw(raw: &str) -> String {
        crate::outbound::redact_server(&mask_userinfo(raw))
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

    /// `raw` with the password of its user information written `***`, and a user name without a
    /// password written `***` (for texts that show a URL that did not parse). Whatever stands
    /// before the last `@` counts as user information: a URL that did not parse may have a `/`,
    /// `?` or `#` in its password, and masking too much is harmless here.
    pub(crate) fn mask_userinfo(raw: &str) -> String {
        let start = authority_start(raw);
        let Some(at) = raw[start..].rfind('@').map(|i| start + i) else {
            return raw.to_owned();
        };
        let user = match raw[start..at].split_once(':') {
            Some((name, _)) => format!("{name}:***"),
            None => "***".to_owned(),
        };
        format!("{}{user}{}", &raw[..start], &raw[at..])
    }

    /// The scheme of `raw` as Go's `url.Parse` reads it (lower-cased, empty when there is
    /// none), or `None` when Go cannot parse it: what client-go's `parseProxyURL` checks.
    pub(crate) fn scheme(raw: &str) -> Option<String> {
        parse(raw).ok().map(|u| u.scheme)
    }

    /// Where a URL's authority starts: after `scheme://` when the text begins with a scheme
    /// (a letter, then letters, digits, `+`, `-` or `.`), else at 0 (a `://` later in the text,
    /// `u:pw@host/x://y`, is not the scheme's).
    pub(crate) fn authority_start(raw: &str) -> usize {
        match raw.find("://") {
            Some(i)
                if raw.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
                    && raw[..i]
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) =>
            {
                i + 3
            }
            _ => 0,
        }
    }

    /// client-go `clientcmd`'s cleanup of a kubeconfig `server`: parsed as a request URI (no
    /// fragment: a `#` belongs to the path), a URL with a path longer than `/` loses its query and
    /// is written back as Go writes it; anything else is kept as written.
    pub(crate) fn clientcmd_server(server: &str) -> String {
        match parse_request_uri(server) {
            Ok(mut u) if !u.opaque && u.path.len() > 1 => {
                u.raw_query.clear();
                u.string(false)
            }
            _ => server.to_owned(),
        }
    }

    /// Where a webhook request goes.
    #[derive(Clone, PartialEq, Eq)]
    pub(crate) struct RestTarget {
        /// The URL sent (Go's `Request.URL().String()`, user information included).
        pub(crate) wire: String,
        /// The same for error texts (user information masked).
        pub(crate) shown: String,
    }

    /// The masked URL only: `wire` can hold a password.
    impl std::fmt::Debug for RestTarget {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("RestTarget")
                .field("shown", &self.shown)
                .finish_non_exhaustive()
        }
    }

    /// client-go's REST client URL for a request with no resource to `server` (`rest.Config.Host`)
    /// by a client whose timeout is `timeout` (`?timeout=30s` for kube-apiserver's webhooks; no
    /// query for a zero timeout). A server without a scheme or host is refused: with client-go's
    /// text where client-go refuses it too (Go's `url.Parse` error for `http://<server>`, or
    /// `host must be a URL or a host:port pair` when that has a path), else with ours (client-go
    /// would use plain `http://`).
    pub(crate) fn rest_target(server: &str, timeout: Duration) -> Result<RestTarget, String> {
        let mut url = match parse(server) {
            Ok(u) if !u.scheme.is_empty() && !u.host.is_empty() => u,
            // `DefaultServerURL` tries again with `http://` in front (a kubeconfig's TLS settings
            // only apply to a server that parses as `https://`): its errors are Go's; where it
            // would post to plain `http://<server>`, the server is refused.
            _ => {
                return Err(match parse_masked("http://", server) {
                    Err(e) => e,
                    Ok(u) if !u.path.is_empty() && u.path != b"/" => format!(
                        "host must be a URL or a host:port pair: {}",
                        go_quote(&shown_raw(server))
                    ),
                    Ok(_) => no_host(server),
                });
            }
        };
        // net/http's `NewRequest` drops an empty port (`h:` is `h`; `[::1]:` is `[::1]`).
        if url.host.ends_with(b":") {
            url.host.pop();
        }
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
            go_quote(&shown_raw(server))
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
                // net/http drops an empty port.
                (
                    "https://h:",
                    "https://h/?timeout=30s",
                    "https://h/?timeout=30s",
                ),
                (
                    "https://u:p@[::1]:/a",
                    "https://u:p@[::1]/a?timeout=30s",
                    "https://u:***@[::1]/a?timeout=30s",
                ),
                (
                    "ws://a:1080:",
                    "ws://a:1080/?timeout=30s",
                    "ws://a:1080/?timeout=30s",
                ),
                // The host is decoded, then written as Go escapes it.
                (
                    "https://h%c3%a9",
                    "https://h%C3%A9/?timeout=30s",
                    "https://h%C3%A9/?timeout=30s",
                ),
                (
                    "https://\u{e9}/p",
                    "https://%C3%A9/p?timeout=30s",
                    "https://%C3%A9/p?timeout=30s",
                ),
                (
                    "https://[fe80::1%25en%300]:1",
                    "https://[fe80::1%25en00]:1/?timeout=30s",
                    "https://[fe80::1%25en00]:1/?timeout=30s",
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
                // A query or fragment may carry a key: never shown.
                (
                    "https://h:1/x#%zz",
                    r#"parse "http://https://h:1/x#***": invalid URL escape "%zz""#,
                ),
                (
                    "https://h:1/%zz?key=SECRET",
                    r#"parse "http://https://h:1/%zz?***": invalid URL escape "%zz""#,
                ),
                (
                    "h:1?key=SECRET",
                    r#"server URL "h:1?***" must have a scheme and a host (https://host[:port][/path])"#,
                ),
                // A bad escape in the password: Go quotes its bytes; we do not.
                (
                    "https://u:p%zzSECRET@h:1/",
                    r#"parse "http://https://u:***@h:1/": invalid URL escape "***""#,
                ),
                // A password with a `/` ends Go's authority early: its port is the password.
                (
                    "u:pass/x@h",
                    r#"parse "http://u:***@h": invalid port "***" after host"#,
                ),
                // Go quotes the port with `%q`: a `\\`, a `"`, a byte that is not printable
                // are escaped there, and still masked.
                (
                    r"u:pa\ss/x@h",
                    r#"parse "http://u:***@h": invalid port "***" after host"#,
                ),
                (
                    r#"u:pa"ss/x@h"#,
                    r#"parse "http://u:***@h": invalid port "***" after host"#,
                ),
                (
                    "u:pa\u{ad}ss/x@h",
                    r#"parse "http://u:***@h": invalid port "***" after host"#,
                ),
                (
                    "u:p\u{e9}ss/x@h",
                    r#"parse "http://u:***@h": invalid port "***" after host"#,
                ),
                (
                    "u:p%5Css/x@h",
                    r#"parse "http://u:***@h": invalid port "***" after host"#,
                ),
                (
                    "https://u:p%4@h",
                    r#"parse "http://https://u:***@h": invalid URL escape "***""#,
                ),
                // A numeric password before a `/` is Go's port; the bad escape it reports
                // (`"%4@"`) runs from the password across the `@`.
                (
                    "u:1/%4@h",
                    r#"parse "http://u:***@h": invalid URL escape "***""#,
                ),
                (
                    "u:pa\u{1}ss/x@h",
                    r#"parse "http://u:***@h": net/url: invalid control character in URL"#,
                ),
                // Go's own reason, before it reads the user information.
                (
                    "https://u:p%\u{7f}2@h",
                    r#"parse "http://https://u:***@h": net/url: invalid control character in URL"#,
                ),
                // (Go: `invalid port ":ps:"`; everything before the `@` counts as user
                // information here, and masking too much is harmless.)
                (
                    "https:ps://u:p%2@h",
                    r#"parse "http://https:***@h": invalid port "***" after host"#,
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
                    r#"host must be a URL or a host:port pair: "https:///x""#,
                ),
                // Go 1.26's host checks, here on the `http://` retry (`urlstrictcolons=1`; an
                // IPv4 address in brackets).
                (
                    "127.0.0.1:1:2",
                    r#"parse "http://127.0.0.1:1:2": invalid port ":1:2" after host"#,
                ),
                (
                    "[1.2.3.4]:443",
                    r#"parse "http://[1.2.3.4]:443": invalid IP-literal"#,
                ),
                // The retry, `http://https://a:1:2`, parses with the host `https:` and a path.
                (
                    "https://a:1:2",
                    r#"host must be a URL or a host:port pair: "https://a:1:2""#,
                ),
                (
                    "https://u:pw@a:1:2/?key=SECRET",
                    r#"host must be a URL or a host:port pair: "https://u:***@a:1:2/?***""#,
                ),
                // The retry, `http://https:h`, has a port that is not a number.
                (
                    "https:h",
                    r#"parse "http://https:h": invalid port ":h" after host"#,
                ),
            ];
            for (server, want) in cases {
                let e =
                    rest_target(&clientcmd_server(server), Duration::from_secs(30)).unwrap_err();
                assert_eq!(e, *want, "{server}");
            }
        }

        /// Whatever Go's reason quotes of the user information, however `%q` escapes it, is
        /// written `"***"`; text outside it is Go's.
        #[test]
        fn reasons_never_quote_the_user_information() {
            let cases: &[(&str, &str, &str)] = &[
                (
                    "u:pa\u{1}ss/x@h",
                    r#"invalid port ":pa\x01ss" after host"#,
                    r#"invalid port "***" after host"#,
                ),
                (
                    "u:pa\u{1}ss/x@h",
                    r#"invalid port ":pa\u0001ss" after host"#,
                    r#"invalid port "***" after host"#,
                ),
                (
                    r"u:pa\ss/x@h",
                    r#"invalid port ":pa\\ss" after host"#,
                    r#"invalid port "***" after host"#,
                ),
                (
                    r#"u:p"/x@h"#,
                    r#"invalid port ":p\"" after host"#,
                    r#"invalid port "***" after host"#,
                ),
                (
                    "u:p\u{e9}\u{ad}/x@h",
                    r#"invalid port ":p\u00e9\u00ad" after host"#,
                    r#"invalid port "***" after host"#,
                ),
                (
                    "u:p\u{e9}\u{ad}/x@h",
                    r#"invalid port ":p\xc3\xa9\xc2\xad" after host"#,
                    r#"invalid port "***" after host"#,
                ),
                (
                    "https://u:p%zz@h",
                    r#"invalid URL escape "%zz""#,
                    r#"invalid URL escape "***""#,
                ),
                (
                    "u:1/%4@h",
                    r#"invalid URL escape "%4@""#,
                    r#"invalid URL escape "***""#,
                ),
                // Text found nowhere in the server, or a quote that does not end: masked.
                (
                    "https://u:pw@h",
                    r#"invalid host: ParseAddr("::1"): bad (at "w")"#,
                    r#"invalid host: ParseAddr("***"): bad (at "***")"#,
                ),
                (
                    "https://u:pw@h",
                    r#"invalid port ":pw after host"#,
                    r#"invalid port "***""#,
                ),
                (
                    "https://u:pw@h",
                    r#"invalid port ":p\q" after host"#,
                    r#"invalid port "***""#,
                ),
                // Outside the user information: Go's text.
                (
                    "https://u:pw@h/%zz",
                    r#"invalid URL escape "%zz""#,
                    r#"invalid URL escape "%zz""#,
                ),
                (
                    "https://u:pw@h:1:2",
                    r#"invalid port ":1:2" after host"#,
                    r#"invalid port ":1:2" after host"#,
                ),
                (
                    "https://h/%zz",
                    r#"invalid URL escape "%zz""#,
                    r#"invalid URL escape "%zz""#,
                ),
            ];
            for (raw, reason, want) in cases {
                assert_eq!(mask_reason(raw, reason), *want, "{raw:?} {reason:?}");
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

        /// What client-go's `clientcmd` writes back (Go's `url.String()`).
        #[test]
        fn clientcmd_writes_servers_as_go_does() {
            let cases: &[(&str, &str)] = &[
                ("//h/p?q", "//h/p"),
                ("/p/?q", "/p/"),
                ("https:/p/q?x", "https:/p/q"),
                ("https://h/a#f?x", "https://h/a%23f"),
                ("h:1", "h:1"),
            ];
            for (server, want) in cases {
                assert_eq!(clientcmd_server(server), *want, "{server}");
            }
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
}
