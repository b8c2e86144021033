//! Go's `mime.ParseMediaType` (Go 1.26 `mime/mediatype.go`), which client-go's REST client
//! runs on the `Content-Type` of every answer (`transformResponse`, `isTextResponse`): the
//! lower-cased media type, or Go's error. Only what decides between the two is kept: the
//! parameters are checked (names, values, quoted strings, repeats) and dropped, and RFC 2231
//! continuations are not decoded, as decoding them fails nothing in Go.
//!
//! The header is taken as bytes, as Go's strings hold them: a byte that is not UTF-8 is no
//! token character, and may stand inside a quoted string.

use std::collections::HashMap;

/// `mime: no media type`
const NO_MEDIA_TYPE: &str = "mime: no media type";
/// `mime: expected slash after first token`
const NO_SLASH_AFTER_FIRST_TOKEN: &str = "mime: expected slash after first token";
/// `mime: expected token after slash`
const NO_TOKEN_AFTER_SLASH: &str = "mime: expected token after slash";
/// `mime: unexpected content after media subtype`
const UNEXPECTED_CONTENT_AFTER_MEDIA_SUBTYPE: &str = "mime: unexpected content after media subtype";
/// `mime.ErrInvalidMediaParameter`
const INVALID_MEDIA_PARAMETER: &str = "mime: invalid media parameter";
/// `mime: duplicate parameter name`
const DUPLICATE_PARAMETER_NAME: &str = "mime: duplicate parameter name";

/// Go's `mime.ParseMediaType(v)`: the media type (lower-cased, trimmed) or the text of the
/// error Go returns.
pub(super) fn parse_media_type(v: &[u8]) -> Result<String, &'static str> {
    let base_len = v.iter().position(|&b| b == b';').unwrap_or(v.len());
    let (base, mut rest) = v.split_at(base_len);
    // strings.ToLower maps rune by rune with unicode.ToLower (U+0130 and U+212A are the only
    // runes beyond ASCII it maps into ASCII; a byte that is not UTF-8 becomes U+FFFD, a token
    // character neither way), then strings.TrimSpace trims unicode.IsSpace (White_Space).
    let lowered: String = String::from_utf8_lossy(base)
        .chars()
        .map(|c| match c {
            '\u{130}' => 'i',
            '\u{212a}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    let mediatype = lowered.trim_matches(char::is_whitespace);
    check_media_type_disposition(mediatype.as_bytes())?;

    // Go keeps a name with a `*` (an RFC 2231 part) in a map of its own for each name before
    // the `*`, by its whole name, and the others in `params`: so one map by the whole name
    // finds the same repeats. A repeat is an error only with another value.
    let mut params: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    while !rest.is_empty() {
        rest = trim_start_space(rest);
        if rest.is_empty() {
            break;
        }
        let Some((key, value, after)) = consume_media_param(rest) else {
            // Trailing semicolons are not an error (`strings.TrimSpace(rest) == ";"`).
            if rest.first() == Some(&b';') && trim_start_space(&rest[1..]).is_empty() {
                break;
            }
            return Err(INVALID_MEDIA_PARAMETER);
        };
        if params.get(&key).is_some_and(|seen| *seen != value) {
            return Err(DUPLICATE_PARAMETER_NAME);
        }
        params.insert(key, value);
        rest = after;
    }
    Ok(mediatype.to_owned())
}

/// Go's `checkMediaTypeDisposition`: a token, or a token, `/` and a token.
fn check_media_type_disposition(s: &[u8]) -> Result<(), &'static str> {
    let (typ, rest) = consume_token(s);
    if typ.is_empty() {
        return Err(NO_MEDIA_TYPE);
    }
    if rest.is_empty() {
        return Ok(());
    }
    let Some(rest) = rest.strip_prefix(b"/") else {
        return Err(NO_SLASH_AFTER_FIRST_TOKEN);
    };
    let (subtype, rest) = consume_token(rest);
    if subtype.is_empty() {
        return Err(NO_TOKEN_AFTER_SLASH);
    }
    if !rest.is_empty() {
        return Err(UNEXPECTED_CONTENT_AFTER_MEDIA_SUBTYPE);
    }
    Ok(())
}

/// Go's `isTSpecial` (RFC 1521 and RFC 2045 `tspecials`).
fn is_tspecial(c: u8) -> bool {
    b"()<>@,;:\\\"/[]?=".contains(&c)
}

/// Go's `isTokenChar`: US-ASCII except space, controls and `tspecials`.
fn is_token_char(c: u8) -> bool {
    c.is_ascii_graphic() && !is_tspecial(c)
}

/// Go's `consumeToken`: the token at the start of `v` (maybe empty) and what follows.
fn consume_token(v: &[u8]) -> (&[u8], &[u8]) {
    let end = v.iter().position(|&c| !is_token_char(c)).unwrap_or(v.len());
    v.split_at(end)
}

/// Go's `consumeValue`: a token or a quoted string (unescaped), and what follows; `None`
/// where Go consumes nothing (no token, a quoted string without its end quote or with a
/// line break).
fn consume_value(v: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    if v.first() != Some(&b'"') {
        let (token, rest) = consume_token(v);
        return (!token.is_empty()).then(|| (token.to_vec(), rest));
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < v.len() {
        match v[i] {
            b'"' => return Some((out, &v[i + 1..])),
            // Only a backslash before a tspecial escapes it (MSIE's unescaped paths).
            b'\\' if i + 1 < v.len() && is_tspecial(v[i + 1]) => {
                out.push(v[i + 1]);
                i += 1;
            }
            b'\r' | b'\n' => return None,
            c => out.push(c),
        }
        i += 1;
    }
    None
}

/// Go's `consumeMediaParam`: `; name = value` (white space allowed around each part), the
/// name lower-cased; `None` where Go returns no name.
fn consume_media_param(v: &[u8]) -> Option<(Vec<u8>, Vec<u8>, &[u8])> {
    let rest = trim_start_space(v).strip_prefix(b";")?;
    let (param, rest) = consume_token(trim_start_space(rest));
    if param.is_empty() {
        return None;
    }
    let rest = trim_start_space(rest).strip_prefix(b"=")?;
    let (value, rest) = consume_value(trim_start_space(rest))?;
    Some((param.to_ascii_lowercase(), value, rest))
}

/// `strings.TrimLeftFunc(v, unicode.IsSpace)` on bytes: white space runes (UTF-8) are
/// removed from the start; a byte that is not UTF-8 stops it.
fn trim_start_space(mut v: &[u8]) -> &[u8] {
    while let Some(c) = first_char(v).filter(|c| c.is_whitespace()) {
        v = &v[c.len_utf8()..];
    }
    v
}

/// The rune `v` starts with, if its first bytes are UTF-8.
fn first_char(v: &[u8]) -> Option<char> {
    let head = &v[..v.len().min(4)];
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    valid.chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's outcome was printed by Go 1.26.8's `mime.ParseMediaType` (the media type,
    /// or the error's text).
    #[test]
    fn media_types_parse_as_go_parses_them() {
        let cases: &[(&[u8], Result<&str, &str>)] = &[
            (b"text/plain", Ok("text/plain")),
            (b"Text/Plain", Ok("text/plain")),
            (b"TEXT/plain", Ok("text/plain")),
            (b" text/plain ", Ok("text/plain")),
            (b"text/plain ; charset=utf-8", Ok("text/plain")),
            (b"application/json", Ok("application/json")),
            (b"Application/JSON", Ok("application/json")),
            (b"application/json; charset=utf-8", Ok("application/json")),
            (
                b"application/json; charset",
                Err("mime: invalid media parameter"),
            ),
            (b"application/json;", Ok("application/json")),
            (b"application/json; ;", Err("mime: invalid media parameter")),
            (b"application/json;;", Err("mime: invalid media parameter")),
            (b"@@@", Err("mime: no media type")),
            (b"", Err("mime: no media type")),
            (b" ", Err("mime: no media type")),
            (b"text", Ok("text")),
            (b"text/", Err("mime: expected token after slash")),
            (b"/plain", Err("mime: no media type")),
            (
                b"text/plain/x",
                Err("mime: unexpected content after media subtype"),
            ),
            (
                b"text/plain x",
                Err("mime: unexpected content after media subtype"),
            ),
            (
                b"text /plain",
                Err("mime: expected slash after first token"),
            ),
            (b"text/ plain", Err("mime: expected token after slash")),
            (b"text/plain; a=1; a=1", Ok("text/plain")),
            (
                b"text/plain; a=1; a=2",
                Err("mime: duplicate parameter name"),
            ),
            (
                b"text/plain; A=1; a=2",
                Err("mime: duplicate parameter name"),
            ),
            (b"text/plain; a=\"1\"; a=1", Ok("text/plain")),
            (
                b"text/plain; a*=1; a*=2",
                Err("mime: duplicate parameter name"),
            ),
            (b"text/plain; a=1; a*=2", Ok("text/plain")),
            (
                b"text/plain; a*0=x; a*0=y",
                Err("mime: duplicate parameter name"),
            ),
            (b"text/plain; a*0*=x; a*0*=x", Ok("text/plain")),
            (b"text/plain; a*=utf-8''%zz", Ok("text/plain")),
            (b"text/plain; a*=bogus", Ok("text/plain")),
            (b"text/plain; a*0=x; a*2=y", Ok("text/plain")),
            (
                b"text/plain; a=\"unterminated",
                Err("mime: invalid media parameter"),
            ),
            (b"text/plain; a=\"x\\\"y\"", Ok("text/plain")),
            (b"text/plain; a=\"\"", Ok("text/plain")),
            (b"text/plain; a=", Err("mime: invalid media parameter")),
            (b"text/plain; =x", Err("mime: invalid media parameter")),
            (b"text/plain; a=1 b=2", Err("mime: invalid media parameter")),
            (b"text/plain; a = 1", Ok("text/plain")),
            (b"text/plain;a=1;", Ok("text/plain")),
            (b"text/plain;a=1; ;", Err("mime: invalid media parameter")),
            (
                b"text/plain; a=\"line\x0abreak\"",
                Err("mime: invalid media parameter"),
            ),
            (
                b"text/plain; a=\"x\x0dy\"",
                Err("mime: invalid media parameter"),
            ),
            (
                b"text/plain; a=\"\\\"",
                Err("mime: invalid media parameter"),
            ),
            (b"text/plain; a=\"\\a\"", Ok("text/plain")),
            (
                b"text/plain; a=\xc3\xa9",
                Err("mime: invalid media parameter"),
            ),
            (b"text/plain; a=\"\xc3\xa9\"", Ok("text/plain")),
            (
                b"text/plain; a=\"\x80\"; a=\"\x81\"",
                Err("mime: duplicate parameter name"),
            ),
            (b"text/plain; a=\"\x80\"; a=\"\x80\"", Ok("text/plain")),
            (
                b"text/plain\x80",
                Err("mime: unexpected content after media subtype"),
            ),
            (b"\x80", Err("mime: no media type")),
            (b"text/\xe2\x84\xaa", Ok("text/k")),
            (b"\xc4\xb0mage/png", Ok("image/png")),
            (b"\xc2\xa0text/plain\xc2\xa0", Ok("text/plain")),
            (b"\xc2\x85text/plain", Ok("text/plain")),
            (b"\xe2\x80\xa8text/plain;\xe2\x80\xa8a=1", Ok("text/plain")),
            (b"text/plain;\xc2\xa0a=1", Ok("text/plain")),
            (b"text/plain;\xc2\xa0", Ok("text/plain")),
            (b"text/plain; \x09", Ok("text/plain")),
            (b"text/plain ;", Ok("text/plain")),
            (b"text/plain\x09;a=1", Ok("text/plain")),
            (
                b"text/pla(in",
                Err("mime: unexpected content after media subtype"),
            ),
            (
                b"te,xt/plain",
                Err("mime: expected slash after first token"),
            ),
            (
                b"text/plain,text/html",
                Err("mime: unexpected content after media subtype"),
            ),
            (b"*/*", Ok("*/*")),
            (b"text/*", Ok("text/*")),
            (b";", Err("mime: no media type")),
            (b";a=1", Err("mime: no media type")),
            (b"text/plain;a=1;b", Err("mime: invalid media parameter")),
            (b"text/plain; a='x'", Ok("text/plain")),
            (
                b"text/plain; a=\"x\"y",
                Err("mime: invalid media parameter"),
            ),
            (b"text/plain; a=\"x\" ; b=2", Ok("text/plain")),
            (
                b"text/plain; a=1; a=2; ;;",
                Err("mime: duplicate parameter name"),
            ),
            (
                b"text/plain; ;; a=1; a=2",
                Err("mime: invalid media parameter"),
            ),
            (b"text/plain;\x80", Err("mime: invalid media parameter")),
            (
                b"text/plain; a=1;\x80",
                Err("mime: invalid media parameter"),
            ),
            (
                b"text/plain;\xc2\xa0;",
                Err("mime: invalid media parameter"),
            ),
            (b"text/plain; a=\"x\"\xc2\xa0", Ok("text/plain")),
            (b"tExt/\xe2\x84\xaaey; X=1; x=1", Ok("text/key")),
            (b"text/plain;;a=1", Err("mime: invalid media parameter")),
            (b"text/plain; a=1;b=2;c=\"3\";", Ok("text/plain")),
            (
                b"text/plain; charset=\"utf-8\"; charset=utf-8",
                Ok("text/plain"),
            ),
        ];
        for (v, want) in cases {
            let got = parse_media_type(v);
            assert_eq!(
                got.as_deref().map_err(|e| *e),
                *want,
                "{:?}",
                String::from_utf8_lossy(v)
            );
        }
    }
}
