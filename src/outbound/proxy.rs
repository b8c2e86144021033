//! The proxy an outbound request takes when the connection names none (kubeconfig
//! `proxy-url`) and honours the environment: Go's `http.ProxyFromEnvironment`
//! (`golang.org/x/net/http/httpproxy`), which client-go's transports use, rather than reqwest's
//! own environment rules. The differences that matter: Go never proxies `localhost` or a
//! loopback address (a webhook or sidecar on the same host is reached directly), reads no
//! `ALL_PROXY`, and matches `NO_PROXY` its own way (below).
//!
//! * `HTTPS_PROXY` (else `https_proxy`) for `https` URLs, `HTTP_PROXY` (else `http_proxy`) for
//!   `http` URLs; an empty value counts as unset. A value without a scheme gets `http://`; a
//!   value that does not parse is ignored (no proxy), as in Go.
//! * `NO_PROXY` (else `no_proxy`): comma-separated, case-insensitive entries; `*` matches
//!   everything; an IP address (with an optional `:port`, IPv6 in brackets) or a CIDR matches
//!   IP hosts; a domain `example.com` matches itself and its subdomains, `.example.com` and
//!   `*.example.com` only subdomains, each with an optional `:port`. client-go puts
//!   apimachinery's `NewProxierWithNoProxyCIDR` in front: an entry (not trimmed) that parses as
//!   a CIDR with leading zeros (`010.0.0.0/8`, k8s.io/utils' `ParseCIDRSloppy`) counts too.
//! * Only `localhost` as written in the server URL is never proxied: `https://LOCALHOST/` is
//!   (Go compares the host as written; the url crate lower-cases it, so the connection's server
//!   is given by [`EnvProxy::for_server`]).
//! * A server or proxy host that Go keeps as a name but the url crate reads as an IPv4 address
//!   (`10.1`, `127.1`, `2130706433`, `0x7f.0.0.1`, `010.1.2.3`) refuses the client: Go would
//!   proxy it (not loopback, in no `NO_PROXY` CIDR) and dial it by name
//!   ([`ipv4_read_from_a_name`]).
//! * Go refuses `HTTP_PROXY` under CGI (`REQUEST_METHOD` set); a server is not a CGI program,
//!   so that case is not reproduced.
//!
//! The environment is read once, when the HTTP client is built (Go reads it once per process).

use std::net::IpAddr;

use reqwest::Url;

/// Proxies chosen from the environment (see the module docs). No `Debug`: a proxy URL may
/// hold a password.
#[derive(Clone, Default)]
pub(crate) struct EnvProxy {
    http: Option<Url>,
    https: Option<Url>,
    /// The text `http` and `https` were parsed from (`http://` put in front of a value without
    /// a scheme), for its host as written.
    http_text: String,
    https_text: String,
    no_proxy: NoProxy,
    /// The server's host as written ([`for_server`](Self::for_server)).
    server_host: Option<String>,
}

#[derive(Clone, Debug, Default)]
struct NoProxy {
    all: bool,
    ips: Vec<(IpAddr, Option<String>)>,
    cidrs: Vec<(IpAddr, u8)>,
    /// (".suffix", port, the entry also matches the bare domain)
    domains: Vec<(String, Option<String>, bool)>,
}

impl EnvProxy {
    /// From the process environment.
    pub(crate) fn from_env() -> Self {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// From `get` (a variable's value by name).
    pub(crate) fn from_vars(get: impl Fn(&str) -> Option<String>) -> Self {
        let any = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|n| get(n).filter(|v| !v.is_empty()))
                .unwrap_or_default()
        };
        let (http, http_text) = parse_proxy(&any(["HTTP_PROXY", "http_proxy"])).unzip();
        let (https, https_text) = parse_proxy(&any(["HTTPS_PROXY", "https_proxy"])).unzip();
        EnvProxy {
            http,
            https,
            http_text: http_text.unwrap_or_default(),
            https_text: https_text.unwrap_or_default(),
            no_proxy: NoProxy::parse(&any(["NO_PROXY", "no_proxy"])),
            server_host: None,
        }
    }

    /// For requests to `server` (the connection's server URL, as written): Go compares the
    /// host as written with `localhost`, where the url crate has lower-cased it, so
    /// `https://LOCALHOST/` is proxied as in Go (a `NO_PROXY` entry still matches it in any
    /// case).
    pub(crate) fn for_server(mut self, server: &str) -> Self {
        self.server_host = written_hostname(server);
        self
    }

    /// Whether any proxy is configured at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy `url` would take when its scheme is one this client cannot speak (anything
    /// but `http` and `https`, for example `socks5`): the variable's name and the proxy's
    /// scheme, so that the client is refused when it is built, naming the variable (reqwest,
    /// built without SOCKS, would fail every request with "unsupported scheme"; Go would use a
    /// SOCKS proxy). A URL that is not proxied (loopback, `NO_PROXY`) is never refused.
    pub(crate) fn unsupported(&self, url: &Url) -> Option<(&'static str, String)> {
        let proxy = self.proxy_for(url)?;
        let var = if url.scheme() == "https" {
            "HTTPS_PROXY"
        } else {
            "HTTP_PROXY"
        };
        (!matches!(proxy.scheme(), "http" | "https")).then(|| (var, proxy.scheme().to_owned()))
    }

    /// The proxy `url` would take when reqwest cannot use it (its URL is no `http::Uri`, see
    /// [`proxy_uri_usable`](super::proxy_uri_usable)): the variable's name and the proxy, so that
    /// the client is refused when it is built instead of connecting directly.
    pub(crate) fn unusable(&self, url: &Url) -> Option<(&'static str, Url)> {
        let proxy = self.proxy_for(url)?;
        let var = if url.scheme() == "https" {
            "HTTPS_PROXY"
        } else {
            "HTTP_PROXY"
        };
        (!super::proxy_uri_usable(&proxy)).then_some((var, proxy))
    }

    /// The proxy `url` would take when Go would dial its host as a name where this client
    /// would dial an address ([`ipv4_read_from_a_name`]): the error, naming the variable and
    /// the proxy (its password masked), so that the client is refused when it is built.
    pub(crate) fn ipv4_read_from_a_name(&self, url: &Url) -> Option<String> {
        self.proxy_for(url)?;
        let (var, text) = if url.scheme() == "https" {
            ("HTTPS_PROXY", &self.https_text)
        } else {
            ("HTTP_PROXY", &self.http_text)
        };
        let (host, ip) = ipv4_read_from_a_name(text)?;
        Some(format!(
            "{var}: proxy {}: {}",
            super::redact_url(text),
            ipv4_read_from_a_name_error(&host, ip)
        ))
    }

    /// The proxy for `url`, or `None` to connect directly.
    pub(crate) fn proxy_for(&self, url: &Url) -> Option<Url> {
        let proxy = match url.scheme() {
            "https" => self.https.as_ref()?,
            "http" => self.http.as_ref()?,
            _ => return None,
        };
        let host = url.host_str()?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        // The server's host as written, when this is it.
        let host = self
            .server_host
            .as_deref()
            .filter(|w| w.eq_ignore_ascii_case(host))
            .unwrap_or(host);
        let port = url.port_or_known_default().map(|p| p.to_string());
        self.use_proxy(host, port.as_deref().unwrap_or(""))
            .then(|| proxy.clone())
    }

    /// Go's `useProxy` for a canonical host (IPv6 without brackets, punycode) and port.
    fn use_proxy(&self, host: &str, port: &str) -> bool {
        if host == "localhost" {
            return false;
        }
        // An IPv4-mapped IPv6 address is its IPv4 address (Go's `To4`, `IP.Equal`).
        let ip = host.parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
        if ip.is_some_and(|ip| ip.is_loopback()) {
            return false;
        }
        let host = host.trim().to_ascii_lowercase();
        let n = &self.no_proxy;
        if n.all {
            return false;
        }
        let port_ok = |want: &Option<String>| want.as_deref().is_none_or(|w| w == port);
        if let Some(ip) = ip {
            if n.ips.iter().any(|(m, p)| *m == ip && port_ok(p))
                || n.cidrs.iter().any(|&(net, bits)| in_cidr(ip, net, bits))
            {
                return false;
            }
            return true;
        }
        !n.domains.iter().any(|(suffix, p, bare)| {
            (host.ends_with(suffix.as_str()) || (*bare && host == suffix[1..])) && port_ok(p)
        })
    }
}

/// The host of `url` as written, and the address the url crate makes of it, when Go's
/// `url.Parse` keeps the host as a name but the url crate (WHATWG rules) reads it as an IPv4
/// address: a shorthand (`10.1`, `127.1`), one number (`2130706433`), hexadecimal or octal parts
/// (`0x7f.0.0.1`, `010.1.2.3`), a trailing dot (`10.0.0.1.`), full-width digits. Go dials such a
/// host as a name (its resolver, not an address), verifies the server certificate for that
/// name, and its proxy rules take it as a name (proxied, not loopback, in no `NO_PROXY` CIDR);
/// none of that can be done with the address the url crate hands over, so the host is refused
/// ([`ipv4_read_from_a_name_error`]). A dotted quad without leading zeros is an address to
/// both (Go's `net.ParseIP` and Rust's `Ipv4Addr` parse it alike).
pub(crate) fn ipv4_read_from_a_name(url: &str) -> Option<(String, std::net::Ipv4Addr)> {
    let ip: std::net::Ipv4Addr = Url::parse(url).ok()?.host_str()?.parse().ok()?;
    let written = written_hostname(url)?;
    written
        .parse::<std::net::Ipv4Addr>()
        .is_err()
        .then_some((written, ip))
}

/// Why a host found by [`ipv4_read_from_a_name`] is refused.
pub(crate) fn ipv4_read_from_a_name_error(written: &str, ip: std::net::Ipv4Addr) -> String {
    format!(
        "host {} is a host name to Go but the IPv4 address {ip} to this client; write the address as four decimal numbers without leading zeros",
        crate::jwt::go_quote(written)
    )
}

/// Go's `url.Hostname()` of `server` as written (no port, no brackets), for the one thing
/// that compares it as written: `localhost`. Go refuses `%` escapes of ASCII bytes in a host,
/// so none is decoded here.
fn written_hostname(server: &str) -> Option<String> {
    let start = crate::go_url::rest::authority_start(server);
    if start == 0 {
        return None;
    }
    let authority = &server[start..];
    let authority = &authority[..authority.find(['/', '?', '#']).unwrap_or(authority.len())];
    let mut host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    // Go's `splitHostPort`: a port is the digits after the last colon.
    if let Some((h, port)) = host.rsplit_once(':')
        && port.bytes().all(|b| b.is_ascii_digit())
    {
        host = h;
    }
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Some(host.to_owned())
}

/// Go's `parseProxy`: the URL, or `http://` + the value when that is what parses; with the
/// text parsed.
fn parse_proxy(value: &str) -> Option<(Url, String)> {
    if value.is_empty() {
        return None;
    }
    match Url::parse(value) {
        Ok(u) if u.has_host() && !u.scheme().is_empty() => Some((u, value.to_owned())),
        _ => {
            let text = format!("http://{value}");
            Url::parse(&text).ok().map(|u| (u, text))
        }
    }
}

impl NoProxy {
    fn parse(value: &str) -> Self {
        let mut n = NoProxy::default();
        for entry in value.split(',') {
            // apimachinery's NewProxierWithNoProxyCIDR, which client-go puts in front of the
            // environment's rules, reads the untrimmed entry as a CIDR, leading zeros
            // allowed. Such an entry means nothing else to Go's rules (a domain with a `/`).
            if let Some(cidr) = sloppy_cidr(entry.as_bytes()) {
                n.cidrs.push(cidr);
                continue;
            }
            let p = entry.trim().to_ascii_lowercase();
            if p.is_empty() {
                continue;
            }
            if p == "*" {
                return NoProxy {
                    all: true,
                    ..NoProxy::default()
                };
            }
            if let Some((net, bits)) = parse_cidr(&p) {
                n.cidrs.push((net, bits));
                continue;
            }
            // An empty port (`example.com:`) matches any port, as no port does.
            let (host, port) = match split_host_port(&p) {
                Some(("", _)) => continue,
                Some((h, port)) => (
                    h.to_owned(),
                    Some(port.to_owned()).filter(|p| !p.is_empty()),
                ),
                None => (p.clone(), None),
            };
            if let Ok(ip) = host.parse::<IpAddr>() {
                n.ips.push((ip.to_canonical(), port));
                continue;
            }
            if host.is_empty() {
                continue;
            }
            let host = host
                .strip_prefix('*')
                .filter(|h| h.starts_with('.'))
                .unwrap_or(&host);
            let (suffix, bare) = match host.strip_prefix('.') {
                Some(_) => (host.to_owned(), false),
                None => (format!(".{host}"), true),
            };
            n.domains.push((idna_suffix(&suffix), port, bare));
        }
        n
    }
}

/// A domain suffix (`.example.com`) in its ASCII (punycode) form, as request hosts are.
fn idna_suffix(suffix: &str) -> String {
    if suffix.is_ascii() {
        return suffix.to_owned();
    }
    Url::parse(&format!("http://x{suffix}"))
        .ok()
        .and_then(|u| u.host_str().map(|h| h[1..].to_owned()))
        .unwrap_or_else(|| suffix.to_owned())
}

/// Go's `net.SplitHostPort` for a `NO_PROXY` entry: `host:port` or `[v6]:port` (brackets
/// removed); `None` when the entry has no port.
fn split_host_port(p: &str) -> Option<(&str, &str)> {
    if let Some(rest) = p.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after.strip_prefix(':')?;
        return Some((host, port));
    }
    let (host, port) = p.rsplit_once(':')?;
    // More than one colon without brackets (a bare IPv6 address): no port.
    if host.contains(':') {
        return None;
    }
    Some((host, port))
}

/// Go's `net.ParseCIDR`: `ip/bits`.
fn parse_cidr(p: &str) -> Option<(IpAddr, u8)> {
    let (ip, bits) = p.split_once('/')?;
    let ip: IpAddr = ip.parse().ok()?;
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max && !p.contains('+')).then(|| network(ip, bits))
}

/// A network as Go's `IPNet.Contains` sees it: an IPv4-mapped IPv6 network of 96 bits or more
/// (`::ffff:10.0.0.0/104`) is the IPv4 network (`10.0.0.0/8`), which IPv4 hosts (and
/// IPv4-mapped ones, made IPv4) are in.
fn network(ip: IpAddr, bits: u8) -> (IpAddr, u8) {
    match ip {
        IpAddr::V6(v6) if bits >= 96 => match v6.to_ipv4_mapped() {
            Some(v4) => (IpAddr::V4(v4), bits - 96),
            None => (ip, bits),
        },
        _ => (ip, bits),
    }
}

/// Go's `dtoi`: the decimal number at the start of `s` and the digits read; `None` for no
/// digits or a number of 0xFFFFFF or more.
fn dtoi(s: &[u8]) -> Option<(u32, usize)> {
    let mut n = 0u32;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        n = n * 10 + u32::from(s[i] - b'0');
        if n >= 0xFF_FFFF {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Go's `xtoi`: [`dtoi`] in hexadecimal.
fn xtoi(s: &[u8]) -> Option<(u32, usize)> {
    let mut n = 0u32;
    let mut i = 0;
    while let Some(d) = s.get(i).and_then(|c| char::from(*c).to_digit(16)) {
        n = n * 16 + d;
        if n >= 0xFF_FFFF {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// k8s.io/utils' forked `parseIPv4` (Go's before 1.17): leading zeros allowed, read as
/// decimal.
fn sloppy_ipv4(mut s: &[u8]) -> Option<[u8; 4]> {
    let mut p = [0u8; 4];
    for (i, byte) in p.iter_mut().enumerate() {
        if i > 0 {
            s = s.strip_prefix(b".")?;
        }
        let (n, c) = dtoi(s)?;
        *byte = u8::try_from(n).ok()?;
        s = &s[c..];
    }
    s.is_empty().then_some(p)
}

/// k8s.io/utils' forked `parseIPv6`: groups of any number of hex digits up to 0xffff, an
/// embedded IPv4 address read by [`sloppy_ipv4`].
fn sloppy_ipv6(mut s: &[u8]) -> Option<[u8; 16]> {
    let mut ip = [0u8; 16];
    let mut ellipsis = None;
    if let Some(rest) = s.strip_prefix(b"::") {
        ellipsis = Some(0);
        s = rest;
        if s.is_empty() {
            return Some(ip);
        }
    }
    let mut i = 0;
    while i < 16 {
        let (n, c) = xtoi(s)?;
        if n > 0xFFFF {
            return None;
        }
        if s.get(c) == Some(&b'.') {
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return None;
            }
            ip[i..i + 4].copy_from_slice(&sloppy_ipv4(s)?);
            s = &[];
            i += 4;
            break;
        }
        ip[i..i + 2].copy_from_slice(&(n as u16).to_be_bytes());
        i += 2;
        s = &s[c..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return None;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return None;
    }
    if i < 16 {
        let e = ellipsis?;
        let n = 16 - i;
        ip.copy_within(e..i, e + n);
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return None;
    }
    Some(ip)
}

/// k8s.io/utils' `ParseCIDRSloppy` (its fork of Go's `ParseCIDR` before 1.17), as
/// [`network`].
fn sloppy_cidr(s: &[u8]) -> Option<(IpAddr, u8)> {
    let slash = s.iter().position(|&c| c == b'/')?;
    let (addr, mask) = (&s[..slash], &s[slash + 1..]);
    let (ip, max) = match sloppy_ipv4(addr) {
        Some(v4) => (IpAddr::from(v4), 32),
        None => (IpAddr::from(sloppy_ipv6(addr)?), 128),
    };
    let (bits, read) = dtoi(mask)?;
    if read != mask.len() || bits > max {
        return None;
    }
    Some(network(ip, bits as u8))
}

fn in_cidr(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let mask = |len: u32| {
        if bits == 0 {
            0u128
        } else {
            u128::MAX << (len - u32::from(bits))
        }
    };
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let m = mask(32) as u32;
            u32::from(a) & m == u32::from(b) & m
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let m = mask(128);
            u128::from(a) & m == u128::from(b) & m
        }
        // Go's `IPNet.Contains`: the host (IPv4-mapped already made IPv4) and the network
        // must be of one family.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> EnvProxy {
        EnvProxy::from_vars(|n| {
            vars.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    /// The proxy for a request to `url`, the connection's server (its host as written).
    fn proxy(e: &EnvProxy, url: &str) -> String {
        e.clone()
            .for_server(url)
            .proxy_for(&Url::parse(url).unwrap())
            .map_or("<nil>".into(), |u| {
                u.as_str().trim_end_matches('/').to_owned()
            })
    }

    /// Hosts Go's `url.Parse` keeps as names and the url crate reads as IPv4 addresses
    /// (`webhookutil.LoadKubeconfig` keeps `https://10.1/`, `https://2130706433/` and
    /// `https://0x7f.1/` as the host; `NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)`
    /// proxies `https://10.1/`, `https://127.1/` and `https://10.0.0.1./` past a `NO_PROXY` of
    /// `10.0.0.0/8,127.0.0.0/8`): found, with the address the url crate makes of them; dotted
    /// quads, names and IPv6 addresses are not.
    #[test]
    fn ipv4_read_from_a_name_finds_what_go_keeps_as_a_name() {
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            ("https://10.1/", Some(("10.1", "10.0.0.1"))),
            ("https://u:p@127.1:8443/x", Some(("127.1", "127.0.0.1"))),
            ("https://2130706433/", Some(("2130706433", "127.0.0.1"))),
            ("https://0x7f.0.0.1/", Some(("0x7f.0.0.1", "127.0.0.1"))),
            ("https://0x7f.1/", Some(("0x7f.1", "127.0.0.1"))),
            ("https://010.1.2.3/", Some(("010.1.2.3", "8.1.2.3"))),
            ("https://10.0.0.1./", Some(("10.0.0.1.", "10.0.0.1"))),
            ("https://10.0.0.01/", Some(("10.0.0.01", "10.0.0.1"))),
            (
                "https://\u{ff11}\u{ff10}.0.0.1/",
                Some(("\u{ff11}\u{ff10}.0.0.1", "10.0.0.1")),
            ),
            ("http://10.1:3128", Some(("10.1", "10.0.0.1"))),
            ("https://10.0.0.1/", None),
            ("https://0.0.0.0:1/", None),
            ("https://[::1]/", None),
            ("https://[::ffff:10.0.0.1]/", None),
            ("https://example.com/", None),
            ("https://10.1.example/", None),
            ("https://1.2.3.4.5/", None),
            ("not a url", None),
        ];
        for (url, want) in cases {
            let got = ipv4_read_from_a_name(url);
            let got = got.as_ref().map(|(h, ip)| (h.as_str(), ip.to_string()));
            let want = want.map(|(h, ip)| (h, ip.to_owned()));
            assert_eq!(got, want, "{url}");
        }
    }

    /// An environment proxy whose host Go dials as a name is an error for the URLs it would
    /// carry (its password masked), and nothing for the URLs that go direct.
    #[test]
    fn environment_proxies_go_dials_as_names_are_found() {
        let e = env(&[
            ("HTTPS_PROXY", "http://u:px-SECRET@10.1:3128"),
            ("HTTP_PROXY", "127.1:3128"),
            ("NO_PROXY", "direct.example"),
        ]);
        let found = |url: &str| e.ipv4_read_from_a_name(&Url::parse(url).unwrap());
        assert_eq!(
            found("https://webhook.example/").as_deref(),
            Some(
                "HTTPS_PROXY: proxy http://u:***@10.1:3128: host \"10.1\" is a host name to Go but the IPv4 address 10.0.0.1 to this client; write the address as four decimal numbers without leading zeros"
            )
        );
        assert_eq!(
            found("http://webhook.example/").as_deref(),
            Some(
                "HTTP_PROXY: proxy http://127.1:3128: host \"127.1\" is a host name to Go but the IPv4 address 127.0.0.1 to this client; write the address as four decimal numbers without leading zeros"
            )
        );
        assert_eq!(found("https://direct.example/"), None);
        assert_eq!(found("https://127.0.0.1/"), None);
        let dotted = env(&[("HTTPS_PROXY", "http://10.0.0.1:3128")]);
        assert_eq!(
            dotted.ipv4_read_from_a_name(&Url::parse("https://webhook.example/").unwrap()),
            None
        );
    }

    /// golang.org/x/net/http/httpproxy `proxyForURLTests` (the CGI case left out, see the
    /// module docs), default request `http://example.com`.
    #[test]
    fn proxy_for_url_go_vectors() {
        type Case = (
            &'static [(&'static str, &'static str)],
            &'static str,
            &'static str,
        );
        let cases: &[Case] = &[
            (
                &[("HTTP_PROXY", "127.0.0.1:8080")],
                "",
                "http://127.0.0.1:8080",
            ),
            (
                &[("HTTP_PROXY", "cache.corp.example.com:1234")],
                "",
                "http://cache.corp.example.com:1234",
            ),
            (
                &[("HTTP_PROXY", "cache.corp.example.com")],
                "",
                "http://cache.corp.example.com",
            ),
            (&[("HTTP_PROXY", "localhost")], "", "http://localhost"),
            (
                &[("HTTP_PROXY", "https://cache.corp.example.com")],
                "",
                "https://cache.corp.example.com",
            ),
            (
                &[("HTTP_PROXY", "http://127.0.0.1:8080")],
                "",
                "http://127.0.0.1:8080",
            ),
            (
                &[("HTTP_PROXY", "https://127.0.0.1:8080")],
                "",
                "https://127.0.0.1:8080",
            ),
            (
                &[("HTTP_PROXY", "socks5://127.0.0.1")],
                "",
                "socks5://127.0.0.1",
            ),
            (&[("HTTP_PROXY", "foo://host")], "", "foo://host"),
            (
                &[
                    ("HTTP_PROXY", "http.proxy.tld"),
                    ("HTTPS_PROXY", "secure.proxy.tld"),
                ],
                "http://insecure.tld/",
                "http://http.proxy.tld",
            ),
            (
                &[
                    ("HTTP_PROXY", "http.proxy.tld"),
                    ("HTTPS_PROXY", "secure.proxy.tld"),
                ],
                "https://secure.tld/",
                "http://secure.proxy.tld",
            ),
            (
                &[
                    ("HTTP_PROXY", "http.proxy.tld"),
                    ("HTTPS_PROXY", "https://secure.proxy.tld"),
                ],
                "https://secure.tld/",
                "https://secure.proxy.tld",
            ),
            (
                &[("HTTP_PROXY", "http.proxy.tld")],
                "https://secure.tld/",
                "<nil>",
            ),
            (
                &[("HTTP_PROXY", "http.proxy.tld")],
                "ftp://insecure.tld/",
                "<nil>",
            ),
            (&[], "", "<nil>"),
            (
                &[("NO_PROXY", "example.com"), ("HTTP_PROXY", "proxy")],
                "http://example.com/",
                "<nil>",
            ),
            (
                &[("NO_PROXY", ".example.com"), ("HTTP_PROXY", "proxy")],
                "http://example.com/",
                "http://proxy",
            ),
            (
                &[("NO_PROXY", "ample.com"), ("HTTP_PROXY", "proxy")],
                "http://example.com/",
                "http://proxy",
            ),
            (
                &[("NO_PROXY", "example.com"), ("HTTP_PROXY", "proxy")],
                "http://foo.example.com/",
                "<nil>",
            ),
            (
                &[("NO_PROXY", ".foo.com"), ("HTTP_PROXY", "proxy")],
                "http://example.com/",
                "http://proxy",
            ),
            (
                &[("NO_PROXY", ".示例.com"), ("HTTP_PROXY", "proxy")],
                "http://www.示例.com",
                "<nil>",
            ),
            (
                &[("NO_PROXY", "xn--fsq092h.com"), ("HTTP_PROXY", "proxy")],
                "http://www.示例.com",
                "<nil>",
            ),
            (
                &[("NO_PROXY", "示例.com"), ("HTTP_PROXY", "proxy")],
                "http://www.xn--fsq092h.com",
                "<nil>",
            ),
            // Upper case first, lower case when it is unset or empty (Go's getEnvAny).
            (
                &[("HTTPS_PROXY", ""), ("https_proxy", "lower")],
                "https://x/",
                "http://lower",
            ),
            (
                &[("HTTPS_PROXY", "upper"), ("https_proxy", "lower")],
                "https://x/",
                "http://upper",
            ),
            // No ALL_PROXY in Go.
            (&[("ALL_PROXY", "all")], "https://x/", "<nil>"),
        ];
        let socks = env(&[("HTTPS_PROXY", "socks5://s")]);
        let url = |u: &str| Url::parse(u).unwrap();
        let https = Some(("HTTPS_PROXY", "socks5".to_owned()));
        assert_eq!(socks.unsupported(&url("https://x/")), https);
        assert_eq!(socks.unsupported(&url("http://x/")), None);
        assert_eq!(socks.unsupported(&url("https://127.0.0.1/")), None);
        let fine = env(&[("HTTPS_PROXY", "https://s")]);
        assert_eq!(fine.unsupported(&url("https://x/")), None);
        for (vars, req, want) in cases {
            let req = if req.is_empty() {
                "http://example.com"
            } else {
                req
            };
            assert_eq!(proxy(&env(vars), req), *want, "{vars:?} {req}");
        }
    }

    /// golang.org/x/net/http/httpproxy `UseProxyTests` with its `NO_PROXY`: `true` = the
    /// request goes through the proxy.
    #[test]
    fn use_proxy_go_vectors() {
        let no_proxy = "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, 10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, 2002:db8:a::45/64";
        let e = env(&[("HTTP_PROXY", "proxy"), ("NO_PROXY", no_proxy)]);
        let cases: &[(&str, bool)] = &[
            ("localhost", false),
            // Only `localhost` as written is never proxied (the url crate lower-cases the
            // host; Go compares it as written).
            ("LOCALHOST", true),
            ("LocalHost", true),
            ("127.0.0.1", false),
            ("127.0.0.2", false),
            ("[::1]", false),
            ("[::2]", true),
            ("192.168.1.1", false),
            ("192.168.1.2", true),
            ("192.168.1.3", false),
            ("192.168.1.4", true),
            ("10.0.0.2", false),
            ("[2001:db8::52:0:1]", false),
            ("[2001:db8::52:0:2]", true),
            ("[2001:db8::52:0:3]", false),
            ("[2002:db8:a::123]", false),
            ("[fe80::424b:c8be:1643:a1b6]", true),
            ("barbaz.net", true),
            ("www.barbaz.net", false),
            ("foobar.com", false),
            ("www.foobar.com", false),
            ("foofoobar.com", true),
            ("baz.com", true),
            ("localhost.net", true),
            ("local.localhost", true),
            ("barbarbaz.net", true),
            ("wildcard.io", true),
            ("nested.wildcard.io", false),
            ("awildcard.io", true),
        ];
        for (host, want) in cases {
            let url = format!("http://{host}:80/");
            assert_eq!(proxy(&e, &url) != "<nil>", *want, "{host}");
        }
        // IPv4-mapped IPv6 hosts are their IPv4 address; an empty port matches any.
        let mapped = env(&[
            ("HTTP_PROXY", "proxy"),
            ("NO_PROXY", "1.2.3.4,example.com:"),
        ]);
        for (url, want) in [
            ("http://[::ffff:127.0.0.1]/", "<nil>"),
            ("http://[::ffff:1.2.3.4]/", "<nil>"),
            ("http://[::ffff:1.2.3.5]/", "http://proxy"),
            ("http://example.com:8080/", "<nil>"),
        ] {
            assert_eq!(proxy(&mapped, url), want, "{url}");
        }
        // A CIDR matches hosts of its own family only.
        let v4net = env(&[("HTTP_PROXY", "proxy"), ("NO_PROXY", "10.0.0.0/8")]);
        assert_eq!(proxy(&v4net, "http://[::ffff:10.1.2.3]/"), "<nil>");
        assert_eq!(proxy(&v4net, "http://[2001:db8::1]/"), "http://proxy");
        // A domain entry never matches an IP host: Go's `useProxy` runs the domain matchers
        // for IP hosts too, but `domainMatch.match` returns false for them (x/net v0.57.0,
        // checked with Go), so `0.0.1` (suffix `.0.0.1`) does not bypass 10.0.0.1.
        let domain_for_ip = env(&[("HTTP_PROXY", "proxy"), ("NO_PROXY", "0.0.1")]);
        for (url, want) in [
            ("http://10.0.0.1/", "http://proxy"),
            ("http://[::ffff:10.0.0.1]/", "http://proxy"),
        ] {
            assert_eq!(proxy(&domain_for_ip, url), want, "{url}");
        }
        // A `localhost` entry matches it in any case, as a domain.
        let local = env(&[("HTTP_PROXY", "proxy"), ("NO_PROXY", "localhost")]);
        assert_eq!(proxy(&local, "http://LOCALHOST/"), "<nil>");
        assert_eq!(proxy(&local, "http://sub.LocalHost/"), "<nil>");
        // client-go wraps the environment's rules in apimachinery's NewProxierWithNoProxyCIDR:
        // a NO_PROXY entry (split on commas, not trimmed) that parses as a CIDR the old,
        // sloppy way (leading zeros) bypasses the proxy for the IP hosts in it. An IPv4-mapped
        // IPv6 network of 96 bits or more is the IPv4 network (Go's `IPNet.Contains`). Each
        // row checked with Go: utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment).
        let via = "http://proxy:3128";
        for (no_proxy, url, want) in [
            ("010.0.0.0/8", "https://10.1.2.3/", "<nil>"),
            ("010.0.0.0/8", "https://[::ffff:10.1.2.3]/", "<nil>"),
            ("010.0.0.0/8", "https://[2001:db8::1]/", via),
            ("0010.0.0.0/8", "https://10.1.2.3/", "<nil>"),
            ("00000000000010.0.0.0/8", "https://10.1.2.3/", "<nil>"),
            ("010.1.2.3/32", "https://10.1.2.3/", "<nil>"),
            ("10.0.0.0/08", "https://10.1.2.3/", "<nil>"),
            (" 010.0.0.0/8", "https://10.1.2.3/", via),
            ("x,010.0.0.0/8 ", "https://10.1.2.3/", via),
            ("::ffff:10.0.0.0/104", "https://10.1.2.3/", "<nil>"),
            (" ::ffff:10.0.0.0/104", "https://10.1.2.3/", "<nil>"),
            ("::FFFF:10.0.0.0/104", "https://10.1.2.3/", "<nil>"),
            ("::ffff:010.0.0.0/104", "https://10.1.2.3/", "<nil>"),
            ("::ffff:10.0.0.0/104", "https://[2001:db8::1]/", via),
            ("::ffff:0.0.0.0/96", "https://10.1.2.3/", "<nil>"),
            ("::ffff:0:0/88", "https://10.1.2.3/", via),
            ("2001:00DB8::/32", "https://[2001:db8::1]/", "<nil>"),
            ("2001:0000000db8::/32", "https://[2001:db8::1]/", "<nil>"),
            ("2001:00DB8::/32", "https://10.1.2.3/", via),
            ("::/0", "https://10.1.2.3/", via),
            ("::/0", "https://[2001:db8::1]/", "<nil>"),
            ("256.0.0.0/8", "https://10.1.2.3/", via),
            ("10.0.0.0/+8", "https://10.1.2.3/", via),
            ("10.0.0.0/33", "https://10.1.2.3/", via),
            ("::ffff:10.0.0.0/129", "https://10.1.2.3/", via),
            ("1.2.3.4.5/8", "https://10.1.2.3/", via),
            ("10.0.0.0/", "https://10.1.2.3/", via),
        ] {
            let e = env(&[("HTTPS_PROXY", via), ("NO_PROXY", no_proxy)]);
            assert_eq!(proxy(&e, url), want, "NO_PROXY={no_proxy:?} {url}");
        }
        // `*` alone: nothing is proxied.
        let all = env(&[("HTTP_PROXY", "proxy"), ("NO_PROXY", "*")]);
        assert_eq!(proxy(&all, "http://example.com"), "<nil>");
        // Without NO_PROXY everything but loopback is proxied.
        let none = env(&[("HTTP_PROXY", "proxy")]);
        for (host, _) in cases {
            let want = !matches!(*host, "localhost" | "127.0.0.1" | "127.0.0.2" | "[::1]");
            assert_eq!(
                proxy(&none, &format!("http://{host}/")) != "<nil>",
                want,
                "{host}"
            );
        }
    }
}
