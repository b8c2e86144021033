//! The request body's media type, as kube-apiserver's create handler negotiates it
//! (k8s.io/apiserver `handlers/negotiation`: `NegotiateInputSerializer`): no `Content-Type`
//! (or an empty one) is JSON; anything Go's `mime.ParseMediaType` refuses, or a type no
//! serializer of the scheme's codec factory has, is a 415.

use http::HeaderValue;

use super::is_go_space;

/// The serializers of kube-apiserver's codec factory (`legacyscheme.Codecs`).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Media {
    Json,
    Yaml,
    Protobuf,
    /// A type Go's `mime.ParseMediaType` refuses or no serializer has: 415.
    Other,
}

/// The 415 text, which names every type the codec factory decodes (the same for every
/// endpoint: both reviews are served with `legacyscheme.Codecs`).
pub const UNSUPPORTED: &str = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// The media type of a request with this `Content-Type` (Go reads the first one).
pub fn media_type(content_type: Option<&HeaderValue>) -> Media {
    let Some(value) = content_type.filter(|v| !v.is_empty()) else {
        return Media::Json;
    };
    match parse_media_type(value.as_bytes()).as_deref() {
        Some("application/json") => Media::Json,
        Some("application/yaml") => Media::Yaml,
        Some("application/vnd.kubernetes.protobuf") => Media::Protobuf,
        _ => Media::Other,
    }
}

/// Go's `mime.ParseMediaType`: the lower-cased media type, or `None` where Go returns an
/// error (the parameters are checked, their values dropped). Go's strings are bytes: what is
/// not UTF-8 is no token character and no space, and parameter values are compared byte by
/// byte.
fn parse_media_type(v: &[u8]) -> Option<String> {
    let base = v.split(|&b| b == b';').next().unwrap_or_default();
    // strings.ToLower: unicode.ToLower, rune by rune (U+0130 and U+212A are the only runes
    // beyond ASCII that it maps into ASCII; a byte that is not UTF-8 becomes U+FFFD, no token
    // character either), then strings.TrimSpace.
    let lowered: String = String::from_utf8_lossy(base)
        .chars()
        .map(|c| match c {
            '\u{130}' => 'i',
            '\u{212a}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    let mediatype = lowered.trim_matches(is_go_space);
    check_media_type(mediatype)?;
    let mut params: std::collections::HashMap<Vec<u8>, Vec<u8>> = Default::default();
    let mut rest = &v[base.len()..];
    while !rest.is_empty() {
        rest = trim_space_start(rest);
        if rest.is_empty() {
            break;
        }
        let Some((key, value, after)) = consume_media_param(rest) else {
            // Trailing semicolons are not an error.
            if trim_space_end(trim_space_start(rest)) == b";" {
                break;
            }
            return None;
        };
        // A name with a `*` goes to an RFC 2231 continuation map (whose decoding fails
        // nothing), by its whole name, so one map does; a repeated name is an error only with
        // another value.
        match params.get(&key) {
            Some(seen) if *seen != value => return None,
            _ => {}
        }
        params.insert(key, value);
        rest = after;
    }
    Some(mediatype.to_owned())
}

/// The length of the Go space (`unicode.IsSpace`) `v` starts with, if it starts with one.
fn space_at_start(v: &[u8]) -> Option<usize> {
    let valid = v.utf8_chunks().next()?.valid();
    let c = valid.chars().next()?;
    is_go_space(c).then(|| c.len_utf8())
}

/// `strings.TrimLeftFunc(v, unicode.IsSpace)` on bytes.
fn trim_space_start(mut v: &[u8]) -> &[u8] {
    while let Some(n) = space_at_start(v) {
        v = &v[n..];
    }
    v
}

/// `strings.TrimRightFunc(v, unicode.IsSpace)` on bytes.
fn trim_space_end(mut v: &[u8]) -> &[u8] {
    loop {
        // A space is at most 3 bytes of UTF-8 (U+3000).
        let Some(n) = (1..=3.min(v.len())).find(|&n| {
            std::str::from_utf8(&v[v.len() - n..])
                .is_ok_and(|s| s.chars().count() == 1 && s.chars().all(is_go_space))
        }) else {
            return v;
        };
        v = &v[..v.len() - n];
    }
}

/// Go's `checkMediaTypeDisposition`: a token, or a token, `/` and a token.
fn check_media_type(s: &str) -> Option<()> {
    let (typ, rest) = consume_token(s.as_bytes());
    if typ.is_empty() {
        return None;
    }
    if rest.is_empty() {
        return Some(());
    }
    let (subtype, rest) = consume_token(rest.strip_prefix(b"/")?);
    (!subtype.is_empty() && rest.is_empty()).then_some(())
}

/// RFC 1521 token characters (Go's `isTokenChar`).
fn is_token_char(c: u8) -> bool {
    c.is_ascii_graphic() && !is_tspecial(c)
}

/// Go's `isTSpecial`.
fn is_tspecial(c: u8) -> bool {
    b"()<>@,;:\\\"/[]?=".contains(&c)
}

fn consume_token(v: &[u8]) -> (&[u8], &[u8]) {
    let end = v.iter().position(|&c| !is_token_char(c)).unwrap_or(v.len());
    v.split_at(end)
}

/// Go's `consumeValue`: a token or a quoted string (`None` where Go gives no value).
fn consume_value(v: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    if !v.starts_with(b"\"") {
        let (token, rest) = consume_token(v);
        return (!token.is_empty()).then(|| (token.to_vec(), rest));
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < v.len() {
        match v[i] {
            b'"' => return Some((out, &v[i + 1..])),
            b'\\' if i + 1 < v.len() && is_tspecial(v[i + 1]) => {
                out.push(v[i + 1]);
                i += 2;
                continue;
            }
            b'\r' | b'\n' => return None,
            b => out.push(b),
        }
        i += 1;
    }
    None
}

/// Go's `consumeMediaParam`: `; name = value`, the name lower-cased.
fn consume_media_param(v: &[u8]) -> Option<(Vec<u8>, Vec<u8>, &[u8])> {
    let rest = trim_space_start(v).strip_prefix(b";")?;
    let (param, rest) = consume_token(trim_space_start(rest));
    if param.is_empty() {
        return None;
    }
    let rest = trim_space_start(rest).strip_prefix(b"=")?;
    let (value, rest) = consume_value(trim_space_start(rest))?;
    Some((param.to_ascii_lowercase(), value, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go 1.26's `mime.ParseMediaType` through kube-apiserver's negotiation (each row checked
    /// with `NegotiateInputSerializerForMediaType` on `legacyscheme.Codecs`).
    #[test]
    fn media_types_are_negotiated_as_kube_apiserver_does() {
        let json = [
            "application/json",
            "APPLICATION/JSON",
            "application/json ; charset=utf-8",
            "application/json;charset=\"utf-8\"",
            "application/json; charset=utf-8;",
            "application/json;",
            "application/json;stream=watch",
            "application/json; x*=utf-8''a",
            "application/json; x*0=a; x*1=b",
            "application/json; a=1; a=1",
            "application/json; x=1; x*=2",
            "application/json; a=\"\u{ff}\"",
            "application/json; a=\"x\\\"y\"",
            "application/json; a=\"\"",
            "application/json\u{a0}",
            "appl\u{130}cation/json",
        ];
        let other = [
            ";x",
            ";",
            "application/json\u{ff}",
            "application/json; charset=\u{ff}",
            "application/json; charset",
            "application/json; charset=",
            "application/json; a=1; a=2",
            "application/json; charset=utf-8;;",
            "application/json;;",
            "application/json; =x",
            "application/json; a=1 b=2",
            "application/json; a=\"x",
            "application/json/x",
            "application",
            "application/",
            "*/*",
            "application/*",
            "text/plain",
            "application/cbor",
            "application/apply-patch+yaml",
            "application/json-patch+json",
            "applicatıon/json",
            "application/json; x*=1; x*=2",
            "application/json; X=1; x=2",
        ];
        for v in json {
            assert_eq!(
                media_type(Some(&HeaderValue::from_bytes(v.as_bytes()).unwrap())),
                Media::Json,
                "{v:?}"
            );
        }
        for v in other {
            assert_eq!(
                media_type(Some(&HeaderValue::from_bytes(v.as_bytes()).unwrap())),
                Media::Other,
                "{v:?}"
            );
        }
        // Bytes that are not UTF-8: Go's strings hold them; outside quotes they are no token.
        for (v, want) in [
            (&b"application/json\xff"[..], Media::Other),
            (b"application/json; a=\xff", Media::Other),
            (b"application/json; a=\"\xff\"", Media::Json),
            (b"application/json; a=\"\xff\"; a=\"\xff\"", Media::Json),
            // Two values that are not UTF-8 differ as bytes: Go's `duplicate parameter name`.
            (b"application/json; a=\"\xff\"; a=\"\xfe\"", Media::Other),
            (
                b"application/json; a=\"\xff\"; A=\"\xef\xbf\xbd\"",
                Media::Other,
            ),
            (b"application/json\xc2\xa0; a=1\xc2\xa0", Media::Json),
            (b"application/json;\xc2\x85a=1", Media::Json),
            (b"application/json; a=1;\xc2\xa0", Media::Json),
            (b"application/json; a=1 ;\xe3\x80\x80", Media::Json),
            (b"application/json; a=1;\xff", Media::Other),
        ] {
            assert_eq!(
                media_type(Some(&HeaderValue::from_bytes(v).unwrap())),
                want,
                "{v:?}"
            );
        }
        assert_eq!(media_type(None), Media::Json);
        assert_eq!(media_type(Some(&HeaderValue::from_static(""))), Media::Json);
        assert_eq!(
            media_type(Some(&HeaderValue::from_static("application/yaml"))),
            Media::Yaml
        );
        assert_eq!(
            media_type(Some(&HeaderValue::from_static(
                "application/vnd.kubernetes.protobuf; x=y"
            ))),
            Media::Protobuf
        );
        assert_eq!(
            media_type(Some(
                &HeaderValue::from_bytes("application/vnd.\u{212a}ubernetes.protobuf".as_bytes())
                    .unwrap()
            )),
            Media::Protobuf
        );
    }
}
