//! The port against Go itself: tests/vectors/go_url.json, written by
//! conformance/go/cmd/urlparse (Go 1.26, k8s.io/apiserver and client-go v0.37.2), records for
//! each string of a fixed corpus what `url.Parse` makes of it, the errors Kubernetes'
//! `validateURL` reports for it as an issuer URL, and where kube-apiserver's webhook client
//! posts when it is a kubeconfig's `server` (or its error). Every row is compared; the first
//! differences are printed by row.
//!
//! Where kube-authn differs on purpose the expectation is derived from Go's record here, each
//! rule with its reason:
//!
//! * a server URL Go's `url.Parse` accepts only with `http://` put in front (`h:8443`) is
//!   refused (client-go would post to plain `http://h:8443`), with kube-authn's text;
//! * error texts never show a password, a query or a fragment (`u:***@`, `?***`, `#***`), nor
//!   the bytes of a bad escape in the user information (`"***"`), and the URL shown for a user
//!   name without a password (which net/http sends as Basic credentials) is written `***@`.
//!
//! A row whose string is not UTF-8 cannot reach the port (configuration is read as UTF-8) and
//! is skipped, and so is the empty `server`, which clientcmd refuses before any URL is read. A
//! row with a `known_difference` (written by the generator's `knownDifferences`) is printed as
//! such instead of failing, and fails once the port matches Go on it, so the entry goes with the
//! fix.

use serde_json::Value;

/// A recorded string (`{"hex": …}` when it is not UTF-8).
fn text(v: &Value) -> Result<String, Vec<u8>> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Object(o) => {
            let h = o["hex"].as_str().unwrap_or_default();
            let bytes: Vec<u8> = (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or_default())
                .collect();
            String::from_utf8(bytes).map_err(|e| e.into_bytes())
        }
        _ => Ok(String::new()),
    }
}

fn field(v: &Value, name: &str) -> Option<String> {
    v.get(name)
        .map(|s| text(s).unwrap_or_else(|b| format!("{b:x?}")))
}

fn rows() -> Vec<Value> {
    let file: Value = serde_json::from_str(include_str!("../../tests/vectors/go_url.json"))
        .expect("tests/vectors/go_url.json");
    file["rows"].as_array().expect("rows").clone()
}

/// `url.Parse` as the issuer validation reads it, and `validateURL`'s errors.
fn issuer_differences(input: &str, row: &Value) -> Vec<String> {
    use super::issuer::parse;
    let mut out = Vec::new();
    let go = &row["parse"];
    let want = match field(go, "err") {
        Some(e) => Err(e),
        None => Ok(super::issuer::GoUrl {
            scheme: field(go, "scheme").unwrap_or_default(),
            user: go["user"].as_bool().unwrap_or(false),
            query: go["query"].as_bool().unwrap_or(false),
            fragment: go["fragment"].as_bool().unwrap_or(false),
            host: go["host"].as_bool().unwrap_or(false),
        }),
    };
    let got = parse(input);
    if got != want {
        out.push(format!("url.Parse({input:?}): Go {want:?}, port {got:?}"));
    }
    // validateURL, from what the port read.
    let k8s: Vec<String> = row["k8s"]
        .as_array()
        .map(|a| a.iter().map(|v| text(v).unwrap_or_default()).collect())
        .unwrap_or_default();
    let ours: Vec<String> = match (input.is_empty(), got) {
        (true, _) => vec!["Required value".into()],
        (false, Err(e)) => vec![e],
        (false, Ok(u)) => [
            (u.scheme != "https", "URL scheme must be https"),
            (u.user, "URL must not contain a username or password"),
            (u.query, "URL must not contain a query"),
            (u.fragment, "URL must not contain a fragment"),
        ]
        .iter()
        .filter(|(bad, _)| *bad)
        .map(|(_, why)| why.to_string())
        .collect(),
    };
    if ours != k8s {
        out.push(format!(
            "validateURL({input:?}): Kubernetes {k8s:?}, port {ours:?}"
        ));
    }
    out
}

#[test]
fn issuer_urls_parse_as_go_parses_them() {
    let rows = rows();
    assert!(rows.len() > 3000, "{} rows", rows.len());
    let (mut failures, mut skipped, mut known) = (Vec::new(), 0, 0);
    for (i, row) in rows.iter().enumerate() {
        let Ok(input) = text(&row["in"]) else {
            skipped += 1;
            continue;
        };
        let diffs = issuer_differences(&input, row);
        if let Some(why) = row["known_difference"]
            .as_str()
            .filter(|_| !diffs.is_empty())
        {
            eprintln!("row {i}: KNOWN DIFFERENCE ({why}): {}", diffs.join("; "));
            known += 1;
            continue;
        }
        for d in diffs {
            failures.push(format!("row {i}: {d}"));
        }
    }
    eprintln!(
        "{} rows, {skipped} not UTF-8, {known} known differences",
        rows.len()
    );
    assert_no_differences(failures);
}

/// Fails with the differences found (the first `GO_URL_SHOW`, default 40, of them shown).
fn assert_no_differences(mut failures: Vec<String>) {
    let n = failures.len();
    failures.truncate(
        std::env::var("GO_URL_SHOW")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(40),
    );
    assert!(n == 0, "{n} differences:\n{}", failures.join("\n"));
}

#[cfg(feature = "remote")]
mod rest {
    use std::time::Duration;

    use super::super::rest::{
        authority_start, clientcmd_server, mask_reason, rest_target, shown_raw,
    };
    use super::{Value, field, issuer_differences, rows, text};
    use crate::jwt::go_quote;

    /// Go's URL of an error text, shown as kube-authn shows it.
    fn masked_error(go: &str, prefix: &str, server: &str) -> String {
        let shown = format!("{prefix}{}", shown_raw(server));
        let cut = |s: &str| s.split_once('#').map_or(s, |(u, _)| u).to_owned();
        let host_pair = format!(
            "host must be a URL or a host:port pair: {}",
            go_quote(server)
        );
        if go == host_pair {
            return format!(
                "host must be a URL or a host:port pair: {}",
                go_quote(&shown_raw(server))
            );
        }
        let full = format!("parse {}: ", go_quote(&format!("{prefix}{server}")));
        let short = format!("parse {}: ", go_quote(&cut(&format!("{prefix}{server}"))));
        let (shown, reason) = if let Some(r) = go.strip_prefix(&full) {
            (shown, r)
        } else if let Some(r) = go.strip_prefix(&short) {
            (cut(&shown), r)
        } else {
            return go.to_owned();
        };
        // Text from the user information is not shown.
        let reason = mask_reason(server, reason);
        format!("parse {}: {reason}", go_quote(&shown))
    }

    /// Go's `stripPassword` form, with a user name without a password written `***`.
    fn masked_shown(go: &str) -> String {
        let start = authority_start(go);
        let end = go[start..].find('/').map_or(go.len(), |i| start + i);
        match go[start..end].rfind('@') {
            Some(at) if !go[start..start + at].contains(':') => {
                format!("{}***{}", &go[..start], &go[start + at..])
            }
            _ => go.to_owned(),
        }
    }

    fn no_host(server: &str) -> String {
        format!(
            "server URL {} must have a scheme and a host (https://host[:port][/path])",
            go_quote(&shown_raw(server))
        )
    }

    fn rest_differences(input: &str, row: &Value) -> Option<String> {
        let go = &row["rest"];
        let server = clientcmd_server(input);
        let fallback = go["fallback"].as_bool().unwrap_or(false);
        let want = match (field(go, "err"), field(go, "wire")) {
            // Go refuses: its text, masked.
            (Some(e), _) => Err(masked_error(&e, "http://", &server)),
            // Go posts to `http://<server>`: refused.
            (None, Some(_)) if fallback => Err(no_host(&server)),
            (None, Some(wire)) => {
                let shown = field(go, "shown").unwrap_or_else(|| wire.clone());
                Ok((wire, masked_shown(&shown)))
            }
            (None, None) => return Some(format!("{input:?}: no record")),
        };
        let got = rest_target(&server, Duration::from_secs(30)).map(|t| (t.wire, t.shown));
        (got != want).then(|| format!("rest {input:?}: Go {want:?}, port {got:?}"))
    }

    /// The password of `server` as this test reads it, apart from the port, and `server`
    /// without it: what stands between the first `:` after the `://` (or the start) and the
    /// last `@` after it; only in Go's authority (before a `/`, `?` or `#`) for a URL that
    /// parsed.
    fn password(server: &str, parsed: bool) -> Option<(&str, String)> {
        let start = server.find("://").map_or(0, |i| i + 3);
        let end = match parsed {
            true => server[start..]
                .find(['/', '?', '#'])
                .map_or(server.len(), |i| start + i),
            false => server.len(),
        };
        let at = start + server[start..end].rfind('@')?;
        let colon = start + server[start..at].find(':')? + 1;
        // `https:/x`: a scheme and a path (`http://https:/x` on the retry: an empty port).
        if start == 0 && server[colon..].starts_with('/') {
            return None;
        }
        let rest = format!("{}{}", &server[..colon], &server[at..]);
        Some((&server[colon..at], rest))
    }

    /// `p` with its `%XX` escapes decoded (a bad escape kept as written).
    fn decoded(p: &str) -> String {
        let b = p.as_bytes();
        let (mut out, mut i) = (Vec::new(), 0);
        while i < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            match (
                b[i],
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (b'%', Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                (c, _, _) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Texts of a row's error that are not the server's.
    const WORDING: &str = "parse \"http://: invalid URL escape invalid port after host \
        net/url: invalid control character in URL host must be a URL or a host:port pair \
        server URL must have a scheme and a host (https://host[:port][/path]) ?timeout=30s ***";

    /// A part (3 bytes or more) of the password of `server` that `text` shows, as written,
    /// decoded or quoted as Go's `%q` quotes either, and that stands nowhere else in `server`
    /// or in the wording of the error; independent of the port's masking.
    pub(super) fn shown_password(server: &str, parsed: bool, text: &str) -> Option<String> {
        let (p, rest) = password(server, parsed)?;
        let quoted = |s: &str| {
            let q = go_quote(s);
            q[1..q.len() - 1].to_owned()
        };
        let elsewhere = [
            rest.clone(),
            quoted(&rest),
            decoded(&rest),
            quoted(&decoded(&rest)),
            format!("http://{rest}"),
            WORDING.to_owned(),
        ];
        let d = decoded(p);
        for form in [p.to_owned(), quoted(p), d.clone(), quoted(&d)] {
            let b = form.as_bytes();
            for i in 0..b.len() {
                for j in i + 3..=b.len() {
                    let part = &b[i..j];
                    let has = |t: &str| t.as_bytes().windows(part.len()).any(|w| w == part);
                    if has(text) && !elsewhere.iter().any(|e| has(e)) {
                        return Some(String::from_utf8_lossy(part).into_owned());
                    }
                }
            }
        }
        None
    }

    /// No row's error text or shown URL has a part of its password, checked without the
    /// port's own masking (`masked_error` above derives Go's text with it).
    #[test]
    fn webhook_texts_never_show_a_password() {
        let (mut failures, mut checked) = (Vec::new(), 0);
        for (i, row) in rows().iter().enumerate() {
            let Ok(input) = text(&row["in"]) else {
                continue;
            };
            let server = clientcmd_server(&input);
            let (parsed, shown) = match rest_target(&server, Duration::from_secs(30)) {
                Ok(t) => (true, t.shown),
                Err(e) => (false, e),
            };
            if password(&input, parsed).is_none() && password(&server, parsed).is_none() {
                continue;
            }
            checked += 1;
            for s in [&input, &server] {
                if let Some(part) = shown_password(s, parsed, &shown) {
                    failures.push(format!("row {i}: {input:?} shows {part:?}: {shown}"));
                    break;
                }
            }
        }
        eprintln!("{checked} rows with a password");
        assert!(checked > 100, "{checked} rows with a password");
        let n = failures.len();
        failures.truncate(40);
        assert!(n == 0, "{n} rows show a password:\n{}", failures.join("\n"));
    }

    #[test]
    fn webhook_urls_are_go_clients() {
        let rows = rows();
        let (mut failures, mut skipped, mut known) = (Vec::new(), 0, 0);
        for (i, row) in rows.iter().enumerate() {
            let Ok(input) = text(&row["in"]) else {
                skipped += 1;
                continue;
            };
            if input.is_empty() {
                skipped += 1;
                continue;
            }
            let diff = rest_differences(&input, row);
            match (row["known_difference"].as_str(), diff) {
                (Some(why), Some(d)) => {
                    eprintln!("row {i}: KNOWN DIFFERENCE ({why}): {d}");
                    known += 1;
                }
                (Some(_), None) if issuer_differences(&input, row).is_empty() => failures.push(
                    format!("row {i}: {input:?} matches Go now: remove its known_difference"),
                ),
                (_, d) => failures.extend(d.map(|d| format!("row {i}: {d}"))),
            }
        }
        eprintln!(
            "{} rows, {skipped} skipped, {known} known differences",
            rows.len()
        );
        super::assert_no_differences(failures);
    }
}
