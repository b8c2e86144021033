//! Which request headers carry identity and are removed after authentication.

use http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL};
use http::{HeaderMap, HeaderName};

use crate::authenticator::Description;
use crate::request::remove_token_protocol;

/// The names kube-apiserver always clears (`ClearAuthenticationHeaders` with the standard
/// front-proxy names), whatever authenticator succeeded.
const STANDARD_NAMES: [&str; 3] = ["x-remote-user", "x-remote-uid", "x-remote-group"];
/// The standard extra-header prefix.
const STANDARD_PREFIX: &str = "x-remote-extra-";

/// Header names and prefixes to strip, normalised to lower case with `-` for `_`.
#[derive(Clone, Debug)]
pub(crate) struct HeaderRules {
    names: Vec<Box<[u8]>>,
    prefixes: Vec<Box<[u8]>>,
    /// First bytes of every name and prefix (a bit per byte value): most headers on a request
    /// (`accept`, `user-agent`, …) are rejected by this one test.
    first: [u64; 4],
}

fn normalise(name: &str) -> Box<[u8]> {
    name.bytes()
        .map(|b| match b {
            b'_' => b'-',
            b => b.to_ascii_lowercase(),
        })
        .collect()
}

/// `name` (already lower case, as every `HeaderName` is) equals `target` with `_` read as `-`.
fn eq_norm(name: &[u8], target: &[u8]) -> bool {
    name.len() == target.len()
        && name
            .iter()
            .zip(target)
            .all(|(&a, &b)| a == b || (a == b'_' && b == b'-'))
}

impl HeaderRules {
    pub(crate) fn new(description: &Description) -> Self {
        let mut rules = Self {
            names: Vec::new(),
            prefixes: Vec::new(),
            first: [0; 4],
        };
        for name in STANDARD_NAMES.iter().copied().chain(
            description
                .identity_headers()
                .iter()
                .map(HeaderName::as_str),
        ) {
            let n = normalise(name);
            if !rules.names.contains(&n) {
                rules.names.push(n);
            }
        }
        for prefix in std::iter::once(STANDARD_PREFIX).chain(
            description
                .identity_header_prefixes()
                .iter()
                .map(String::as_str),
        ) {
            let p = normalise(prefix);
            if !p.is_empty() && !rules.prefixes.contains(&p) {
                rules.prefixes.push(p);
            }
        }
        for rule in rules.names.iter().chain(rules.prefixes.iter()) {
            if let Some(&b) = rule.first() {
                rules.first[usize::from(b / 64)] |= 1 << (b % 64);
                if b == b'-' {
                    rules.first[usize::from(b'_' / 64)] |= 1 << (b'_' % 64);
                }
            }
        }
        rules
    }

    pub(crate) fn matches(&self, name: &HeaderName) -> bool {
        let name = name.as_str().as_bytes();
        let Some(&b) = name.first() else {
            return false;
        };
        if self.first[usize::from(b / 64)] & (1 << (b % 64)) == 0 {
            return false;
        }
        self.names.iter().any(|n| eq_norm(name, n))
            || self
                .prefixes
                .iter()
                .any(|p| name.len() >= p.len() && eq_norm(&name[..p.len()], p))
    }

    /// Removes `Authorization`, every identity header and the WebSocket bearer-token
    /// subprotocol. One pass over the header names decides what is there (standard names
    /// compare as enum tags, no hashing); a lookup or an allocation happens only for what is
    /// present.
    pub(crate) fn strip(&self, headers: &mut HeaderMap) {
        let (mut authorization, mut websocket, mut identity) = (false, false, false);
        for k in headers.keys() {
            if *k == AUTHORIZATION {
                authorization = true;
            } else if *k == SEC_WEBSOCKET_PROTOCOL {
                websocket = true;
            } else if self.matches(k) {
                identity = true;
            }
        }
        if authorization {
            headers.remove(AUTHORIZATION);
        }
        if websocket {
            remove_token_protocol(headers);
        }
        if identity {
            let doomed: Vec<HeaderName> = headers
                .keys()
                .filter(|k| self.matches(k))
                .cloned()
                .collect();
            for name in doomed {
                headers.remove(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(names: &[&str], prefixes: &[&str]) -> HeaderRules {
        let mut d = Description::default();
        for n in names {
            d.add_identity_header(HeaderName::from_bytes(n.as_bytes()).unwrap());
        }
        for p in prefixes {
            d.add_identity_header_prefix(p);
        }
        HeaderRules::new(&d)
    }

    fn remaining(rules: &HeaderRules, headers: &[(&str, &str)]) -> Vec<String> {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        rules.strip(&mut map);
        let mut left: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("{}: {}", k, v.to_str().unwrap()))
            .collect();
        left.sort();
        left
    }

    /// k8s `TestAuthenticateRequestClearHeaders` (§8.3), adapted: the configured names come
    /// from the chain's description, the standard ones are always cleared.
    #[test]
    fn clear_headers_vectors() {
        type Case<'a> = (
            &'a str,
            &'a [&'a str],
            &'a [&'a str],
            &'a [(&'a str, &'a str)],
            &'a [&'a str],
        );
        let cases: &[Case<'_>] = &[
            (
                "user",
                &["X-Remote-User"],
                &[],
                &[("X-Remote-User", "Bob")],
                &[],
            ),
            (
                "three name headers",
                &["X-First-User", "X-Second-User", "X-Third-User"],
                &[],
                &[
                    ("X-First-User", "Bob"),
                    ("X-Second-User", "Alice"),
                    ("X-Third-User", "Eve"),
                ],
                &[],
            ),
            (
                "case-insensitive configured name",
                &["x-REMOTE-user"],
                &[],
                &[("X-Remote-User", "Bob")],
                &[],
            ),
            // Names outside the standard set are cleared only because they are configured.
            (
                "configured non-standard name",
                &["X-Proxy-User"],
                &[],
                &[("X-Proxy-User", "Bob")],
                &[],
            ),
            (
                "case-insensitive configured non-standard name",
                &["x-PROXY-user"],
                &[],
                &[("X-Proxy-User", "Bob")],
                &[],
            ),
            (
                "groups",
                &["X-Remote-Group-1", "X-Remote-Group-2"],
                &[],
                &[
                    ("X-Remote-User", "Bob"),
                    ("X-Remote-Group-1", "one-a"),
                    ("X-Remote-Group-2", "two-a"),
                ],
                &[],
            ),
            (
                "uid headers",
                &["X-Remote-Uid-1", "X-Remote-Uid-2"],
                &[],
                &[
                    ("X-Remote-Uid-1", "one"),
                    ("X-Remote-Uid-2", "two"),
                    ("X-Remote-Uid-2", "three"),
                ],
                &[],
            ),
            (
                "extra prefixes, case-insensitive, plus unrelated headers",
                &["X-Remote-User"],
                &["X-Remote-Extra-1-", "x-remote-extra-2-"],
                &[
                    ("X-Remote-User", "Bob"),
                    ("X-Remote-Extra-1-Key1", "alfa"),
                    ("X-Remote-Extra-2-Key1", "bravo"),
                    ("X-Remote-Extra-1-Key2", "charlie"),
                    ("X-Group-Remote", "snorlax"),
                    ("X-Group-Bear", "panda"),
                    ("X-Uid-Remote", "mew"),
                ],
                &[
                    "x-group-bear: panda",
                    "x-group-remote: snorlax",
                    "x-uid-remote: mew",
                ],
            ),
            (
                "custom names keep standard-looking group-N headers",
                &["foo", "footoo", "bar"],
                &["baz"],
                &[
                    ("X-Remote-User", "Bob"),
                    ("X-Remote-Uid", "uid"),
                    ("X-Remote-Group-1", "one"),
                    ("X-Remote-Group-2", "two"),
                    ("X-Remote-Extra-Foo", "x"),
                    ("Foo", "a"),
                    ("Footoo", "b"),
                    ("Bar", "c"),
                    ("Baz-Qux", "d"),
                ],
                &["x-remote-group-1: one", "x-remote-group-2: two"],
            ),
            (
                "standard names always cleared",
                &[],
                &[],
                &[
                    ("X-Remote-User", "Bob"),
                    ("X-Remote-Uid", "1"),
                    ("X-Remote-Group", "g"),
                    ("X-Remote-Extra-Scopes", "s"),
                    ("X-Remote-Extra-Acme.com%2Fproject", "p"),
                    ("Authorization", "Bearer secret"),
                    ("Accept", "application/json"),
                ],
                &["accept: application/json"],
            ),
            (
                "underscore spellings",
                &["x-first-user"],
                &["x-prefix-"],
                &[
                    ("x_remote_user", "Bob"),
                    ("x_remote-uid", "1"),
                    ("X_Remote_Group", "g"),
                    ("x_remote_extra_scopes", "s"),
                    ("x_first_user", "Eve"),
                    ("x_prefix_a", "z"),
                    ("x_other", "kept"),
                ],
                &["x_other: kept"],
            ),
            (
                "lookalikes kept",
                &[],
                &[],
                &[
                    ("X-Remote-Users", "a"),
                    ("X-Remote-Group-1", "b"),
                    ("X-Remote-Extra", "c"),
                    ("XX-Remote-User", "d"),
                ],
                &[
                    "x-remote-extra: c",
                    "x-remote-group-1: b",
                    "x-remote-users: a",
                    "xx-remote-user: d",
                ],
            ),
        ];
        for (name, names, prefixes, headers, want) in cases {
            let got = remaining(&rules(names, prefixes), headers);
            assert_eq!(got, *want, "case {name}");
        }
    }
}
