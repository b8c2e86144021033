//! The part of Go `crypto/x509`'s name constraint check (`checkChainConstraints`, Go 1.26) that
//! webpki does not make: once any CA above a certificate (the root included) has a
//! nameConstraints extension, of whatever name type, Go parses every subject alternative name
//! of that certificate before matching any, and refuses the chain when one does not parse:
//!
//! * a URI without a host, or whose host is an IP address (`parseURIs`);
//! * an rfc822Name that is not an RFC 2821 mailbox (`parseMailboxes`);
//! * a dNSName `domainNameValid` refuses (`chainConstraints.check`).
//!
//! webpki reads only the names of a type the CA constrains, so it accepted these chains. The
//! matching itself stays webpki's (the remaining differences are in `docs/compatibility.md`).

use super::der::{items, read_tlv};
use super::go_parse::domain_name_valid;
use crate::jwt::go_quote_bytes;

/// What the check reads of one certificate of a candidate chain.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChainNames<'a> {
    /// `hasNameConstraints`: a nameConstraints extension, of any content.
    pub(crate) name_constraints: bool,
    /// The subjectAltName extension's value (`hasSANExtension`).
    pub(crate) san: Option<&'a [u8]>,
}

/// Why Go's `checkChainConstraints` refuses `chain` (leaf first, root last) before matching
/// any name: the detail of its `x509: a root or intermediate certificate is not authorized to
/// sign for this name: <detail>`. `None`: every name parsed (webpki matches them).
pub(crate) fn unparsable_name(chain: &[ChainNames<'_>]) -> Option<String> {
    for (i, cert) in chain.iter().enumerate() {
        let Some(san) = cert.san else { continue };
        if !chain[i + 1..].iter().any(|c| c.name_constraints) {
            continue;
        }
        if let Some(why) = san_error(san) {
            return Some(why);
        }
    }
    None
}

/// Go's order: every URI (`parseURIs`), every rfc822Name (`parseMailboxes`), then the dNSNames
/// and the URIs' hosts (`check`; a mailbox's domain has already been checked as a name).
fn san_error(san: &[u8]) -> Option<String> {
    let (seq, _) = read_tlv(san)?;
    let names: Vec<(u8, &[u8])> = items(seq.content)
        .map_while(|n| n.map(|n| (n.tag ^ 0x80, n.content)))
        .collect();
    let of = |tag: u8| names.iter().filter(move |n| n.0 == tag).map(|n| n.1);
    let mut uri_domains = Vec::new();
    for uri in of(6) {
        match uri_domain(uri) {
            Ok(domain) => uri_domains.push((uri, domain)),
            Err(why) => return Some(why),
        }
    }
    if let Some(email) = of(1).find(|e| !rfc2821_mailbox(e)) {
        return Some(format!("cannot parse rfc822Name {}", go_quote_bytes(email)));
    }
    if let Some(dns) = of(2).find(|d| !domain_name_valid(d, false)) {
        return Some(format!(
            "x509: cannot parse dnsName {}",
            go_quote_bytes(dns)
        ));
    }
    if let Some((uri, _)) = uri_domains
        .iter()
        .find(|(_, domain)| !domain_name_valid(domain, false))
    {
        return Some(format!(
            "x509: internal error: URI SAN {} failed to parse",
            go_quote_bytes(&shown_uri(uri))
        ));
    }
    None
}

/// Go's `uri.String()` for the texts: the URI as written, its scheme lower-cased (what
/// `url.Parse` changes of a URI Go's parser accepted, escapes' case and a path Go re-escapes
/// aside).
fn shown_uri(uri: &[u8]) -> Vec<u8> {
    let mut out = uri.to_vec();
    if let Some(colon) = uri.iter().position(|&b| b == b':')
        && uri[..colon]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
    {
        out[..colon].make_ascii_lowercase();
    }
    out
}

/// `parseURIs` for one URI: its host (the domain matched against constraints), or Go's reason.
fn uri_domain(uri: &[u8]) -> Result<Vec<u8>, String> {
    let raw = String::from_utf8_lossy(uri);
    // Go's parser has refused a URI `url.Parse` refuses (`x509: cannot parse URI`); should one
    // reach this, refuse it with that text.
    let host = crate::go_url::san::host(&raw)
        .map_err(|e| format!("x509: cannot parse URI {}: {e}", go_quote_bytes(uri)))?;
    let shown = || go_quote_bytes(&shown_uri(uri));
    if host.is_empty() {
        return Err(format!(
            "URI with empty host ({}) cannot be matched against constraints",
            shown()
        ));
    }
    let mut domain = host.to_ascii_lowercase();
    if domain.contains(&b':') && !domain.ends_with(b"]") {
        domain = split_host_port(&host)
            .map_err(|e| format!("cannot parse URI host {}: {e}", go_quote_bytes(&host)))?;
    }
    if parses_as_addr(&domain) || domain.starts_with(b"[") && domain.ends_with(b"]") {
        return Err(format!(
            "URI with IP ({}) cannot be matched against constraints",
            shown()
        ));
    }
    Ok(domain)
}

/// `net.SplitHostPort`'s host, or its error text (`address <a>: <why>`).
fn split_host_port(hostport: &[u8]) -> Result<Vec<u8>, String> {
    let fail = |why: &str| {
        Err(format!(
            "address {}: {why}",
            String::from_utf8_lossy(hostport)
        ))
    };
    let Some(i) = hostport.iter().rposition(|&b| b == b':') else {
        return fail("missing port in address");
    };
    let (host, j, k) = if hostport[0] == b'[' {
        let Some(end) = hostport.iter().position(|&b| b == b']') else {
            return fail("missing ']' in address");
        };
        if end + 1 == hostport.len() {
            return fail("missing port in address");
        }
        if end + 1 != i {
            return fail(if hostport[end + 1] == b':' {
                "too many colons in address"
            } else {
                "missing port in address"
            });
        }
        (&hostport[1..end], 1, end + 1)
    } else {
        let host = &hostport[..i];
        if host.contains(&b':') {
            return fail("too many colons in address");
        }
        (host, 0, 0)
    };
    if hostport[j..].contains(&b'[') {
        return fail("unexpected '[' in address");
    }
    if hostport[k..].contains(&b']') {
        return fail("unexpected ']' in address");
    }
    Ok(host.to_vec())
}

/// Whether `netip.ParseAddr` accepts `s`: an IPv4 address (no leading zeros), or an IPv6 one
/// with an optional non-empty zone.
fn parses_as_addr(s: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(s) else {
        return false;
    };
    if s.parse::<std::net::Ipv4Addr>().is_ok() {
        return true;
    }
    let addr = match s.split_once('%') {
        Some((a, zone)) if a.contains(':') && !zone.is_empty() => a,
        Some(_) => return false,
        None => s,
    };
    addr.parse::<std::net::Ipv6Addr>().is_ok()
}

/// Go's `parseRFC2821Mailbox` succeeding: a local part (a quoted string, or dot-separated atoms
/// where a backslash escapes any byte), `@`, and a domain of non-empty labels of bytes 33–126
/// (`domainToReverseLabels`; an empty domain passes).
fn rfc2821_mailbox(mut s: &[u8]) -> bool {
    if s.is_empty() {
        return false;
    }
    if s[0] == b'"' {
        s = &s[1..];
        loop {
            let Some((&c, rest)) = s.split_first() else {
                return false;
            };
            s = rest;
            match c {
                b'"' => break,
                b'\\' => match s.split_first() {
                    Some((1..=9 | 11 | 12 | 14..=127, rest)) => s = rest,
                    _ => return false,
                },
                1..=8 | 11 | 12 | 14..=31 | 32 | 33 | 35..=91 | 93..=126 | 127 => {}
                _ => return false,
            }
        }
    } else {
        let mut local = Vec::new();
        while let Some(&c) = s.first() {
            if c == b'\\' {
                let Some(&escaped) = s.get(1) else {
                    return false;
                };
                local.push(escaped);
                s = &s[2..];
            } else if c.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~.".contains(&c) {
                local.push(c);
                s = &s[1..];
            } else {
                break;
            }
        }
        if local.is_empty()
            || local[0] == b'.'
            || local.last() == Some(&b'.')
            || local.windows(2).any(|w| w == b"..")
        {
            return false;
        }
    }
    let Some(domain) = s.strip_prefix(b"@") else {
        return false;
    };
    domain.is_empty()
        || domain
            .split(|&b| b == b'.')
            .all(|l| !l.is_empty() && l.iter().all(|b| (33..=126).contains(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mailboxes_parse_as_go_parses_them() {
        for ok in [
            "alice@example.com",
            "a.b@example.com",
            "\"a b\"@example.com",
            "\"\"@example.com",
            "a\\@b@example.com",
            "alice@",
            "!#$%&'*+-/=?^_`{|}~@x",
        ] {
            assert!(rfc2821_mailbox(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "",
            "alice",
            "@example.com",
            ".a@example.com",
            "a.@example.com",
            "a..b@example.com",
            "a b@example.com",
            "\"a@example.com",
            "\"a\nb\"@example.com",
            "alice@example..com",
            "alice@example.com.",
            "alice@.example.com",
            "alice@exa mple.com",
            "a\\",
        ] {
            assert!(!rfc2821_mailbox(bad.as_bytes()), "{bad:?}");
        }
    }

    #[test]
    fn uri_hosts_are_split_and_refused_as_go_does() {
        let d = |u: &str| uri_domain(u.as_bytes());
        assert_eq!(d("https://A.example.com/x").unwrap(), b"a.example.com");
        assert_eq!(d("https://a.example.com:8443/x").unwrap(), b"a.example.com");
        assert_eq!(
            d("urn:example:alice").unwrap_err(),
            "URI with empty host (\"urn:example:alice\") cannot be matched against constraints"
        );
        assert_eq!(
            d("HTTPS:///alice").unwrap_err(),
            "URI with empty host (\"https:///alice\") cannot be matched against constraints"
        );
        for ip in [
            "https://10.0.0.1/alice",
            "https://10.0.0.1:443/alice",
            "https://[::1]/alice",
            "https://[::1]:443/alice",
            "spiffe://[fe80::1%25eth0]/a",
        ] {
            assert_eq!(
                d(ip).unwrap_err(),
                format!("URI with IP (\"{ip}\") cannot be matched against constraints")
            );
        }
        // A leading zero: not an address for netip, a name here.
        assert_eq!(d("https://010.0.0.1/").unwrap(), b"010.0.0.1");
        assert_eq!(
            d("spiffe://a:1:2/x").unwrap_err(),
            "cannot parse URI host \"a:1:2\": address a:1:2: too many colons in address"
        );
    }

    #[test]
    fn only_names_below_a_constrained_ca_are_parsed() {
        // SEQUENCE { [6] "urn:x" }
        let san: &[u8] = &[0x30, 0x07, 0x86, 0x05, b'u', b'r', b'n', b':', b'x'];
        let plain = ChainNames::default();
        let constrained = ChainNames {
            name_constraints: true,
            san: None,
        };
        let leaf = ChainNames {
            name_constraints: false,
            san: Some(san),
        };
        assert_eq!(unparsable_name(&[leaf, plain, plain]), None);
        // A constrained leaf constrains nothing (nothing is below it).
        let constrained_leaf = ChainNames {
            name_constraints: true,
            san: Some(san),
        };
        assert_eq!(unparsable_name(&[constrained_leaf, plain]), None);
        let want = "URI with empty host (\"urn:x\") cannot be matched against constraints";
        assert_eq!(unparsable_name(&[leaf, plain, constrained]).unwrap(), want);
        assert_eq!(unparsable_name(&[plain, leaf, constrained]).unwrap(), want);
    }
}
