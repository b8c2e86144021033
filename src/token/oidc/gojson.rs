//! How Go's `encoding/json` (v1, Go 1.26) decodes the two documents an OIDC issuer serves
//! into go-oidc's structs (`providerJSON`, `jose.JSONWebKeySet`), for the fields kube-authn
//! reads and the ones whose type errors make Go refuse the document:
//!
//! - the body is first checked by a port of Go's scanner (`checkValid`), so every syntax
//!   error is Go's text: `unexpected end of JSON input`, `invalid character 'X' <context>`
//!   (a truncated literal is judged as if a space followed it, as Go's `scanner.eof` does:
//!   `nul` is `invalid character ' ' in literal null (expecting 'l')`), `exceeded max depth`
//!   past 10 000 open arrays/objects;
//! - strings are unquoted as Go's `unquoteBytes` does: a lone or mismatched UTF-16 surrogate
//!   escape and each byte of invalid UTF-8 become U+FFFD;
//! - member names are matched to fields as Go matches them: exactly, else under Go's
//!   `foldName` (ASCII case, and beyond ASCII the smallest rune of the `unicode.SimpleFold`
//!   orbit; the only non-ASCII runes that fold onto ASCII letters are `ſ` U+017F → `S` and
//!   `K` U+212A → `K`, so `ß`, `ı` and `İ` match nothing);
//! - a repeated member (in any case) is applied in document order: the last one wins;
//! - `null` leaves a field as it is (so a `null` `jwks_uri` is an empty one);
//! - a value of the wrong type is Go's `json: cannot unmarshal <kind> into Go struct field
//!   <Struct>.<field> of type <type>` (the first one, in document order); a top-level
//!   value that is not an object is `… into Go value of type <pkg>.<Struct>`, and a
//!   top-level `null` decodes as an empty document.

/// The Go type of one struct field.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "remote"), allow(dead_code))] // discovery only
pub(crate) enum GoType {
    /// `string`
    String,
    /// `[]string`
    Strings,
    /// A slice of a type with its own decoder (named as Go prints it, e.g.
    /// `[]jose.JSONWebKey`): only "is it an array" is checked here.
    Slice(&'static str),
}

/// One field: its JSON name (the struct tag) and Go type.
pub(crate) type Field = (&'static str, GoType);

/// Go's `maxNestingDepth`.
const MAX_DEPTH: usize = 10_000;

/// Go's `isSpace`.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The innermost open container (Go's `parseObjectKey`, `parseObjectValue`,
/// `parseArrayValue`).
#[derive(Clone, Copy)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// The scanner's state (Go's `step` function).
#[derive(Clone, Copy)]
enum Step {
    BeginValueOrEmpty,
    BeginValue,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    /// `\u` and this many hex digits read.
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    /// Inside `true`/`false`/`null`, the next byte expected at this index.
    Literal(&'static [u8], usize),
}

/// A port of Go's `encoding/json` scanner, for `checkValid`.
struct Scanner {
    step: Step,
    parse: Vec<Parse>,
    end_top: bool,
}

type Scan = Result<(), String>;

/// Go's `scanner.error` text.
fn invalid(c: u8, context: &str) -> Scan {
    Err(format!("invalid character {} {context}", quote_char(c)))
}

impl Scanner {
    fn push(&mut self, c: u8, p: Parse) -> Scan {
        self.parse.push(p);
        if self.parse.len() <= MAX_DEPTH {
            Ok(())
        } else {
            invalid(c, "exceeded max depth")
        }
    }

    fn pop(&mut self) {
        self.parse.pop();
        if self.parse.is_empty() {
            self.step = Step::EndTop;
            self.end_top = true;
        } else {
            self.step = Step::EndValue;
        }
    }

    fn begin_value(&mut self, c: u8) -> Scan {
        if is_space(c) {
            return Ok(());
        }
        self.step = match c {
            b'{' => {
                self.step = Step::BeginStringOrEmpty;
                return self.push(c, Parse::ObjectKey);
            }
            b'[' => {
                self.step = Step::BeginValueOrEmpty;
                return self.push(c, Parse::ArrayValue);
            }
            b'"' => Step::InString,
            b'-' => Step::Neg,
            b'0' => Step::Zero,
            b't' => Step::Literal(b"true", 1),
            b'f' => Step::Literal(b"false", 1),
            b'n' => Step::Literal(b"null", 1),
            b'1'..=b'9' => Step::One,
            _ => return invalid(c, "looking for beginning of value"),
        };
        Ok(())
    }

    fn begin_string(&mut self, c: u8) -> Scan {
        if is_space(c) {
            return Ok(());
        }
        if c == b'"' {
            self.step = Step::InString;
            return Ok(());
        }
        invalid(c, "looking for beginning of object key string")
    }

    fn end_value(&mut self, c: u8) -> Scan {
        let Some(top) = self.parse.last_mut() else {
            self.step = Step::EndTop;
            self.end_top = true;
            return Self::end_top(c);
        };
        if is_space(c) {
            self.step = Step::EndValue;
            return Ok(());
        }
        match *top {
            Parse::ObjectKey if c == b':' => {
                *top = Parse::ObjectValue;
                self.step = Step::BeginValue;
                Ok(())
            }
            Parse::ObjectKey => invalid(c, "after object key"),
            Parse::ObjectValue if c == b',' => {
                *top = Parse::ObjectKey;
                self.step = Step::BeginString;
                Ok(())
            }
            Parse::ObjectValue if c == b'}' => {
                self.pop();
                Ok(())
            }
            Parse::ObjectValue => invalid(c, "after object key:value pair"),
            Parse::ArrayValue if c == b',' => {
                self.step = Step::BeginValue;
                Ok(())
            }
            Parse::ArrayValue if c == b']' => {
                self.pop();
                Ok(())
            }
            Parse::ArrayValue => invalid(c, "after array element"),
        }
    }

    fn end_top(c: u8) -> Scan {
        if is_space(c) {
            Ok(())
        } else {
            invalid(c, "after top-level value")
        }
    }

    fn step(&mut self, c: u8) -> Scan {
        let digit = c.is_ascii_digit();
        match self.step {
            Step::BeginValueOrEmpty if is_space(c) => Ok(()),
            Step::BeginValueOrEmpty if c == b']' => self.end_value(c),
            Step::BeginValueOrEmpty | Step::BeginValue => self.begin_value(c),
            Step::BeginStringOrEmpty if is_space(c) => Ok(()),
            Step::BeginStringOrEmpty if c == b'}' => {
                if let Some(top) = self.parse.last_mut() {
                    *top = Parse::ObjectValue;
                }
                self.end_value(c)
            }
            Step::BeginStringOrEmpty | Step::BeginString => self.begin_string(c),
            Step::EndValue => self.end_value(c),
            Step::EndTop => Self::end_top(c),
            Step::InString => {
                match c {
                    b'"' => self.step = Step::EndValue,
                    b'\\' => self.step = Step::InStringEsc,
                    0..0x20 => return invalid(c, "in string literal"),
                    _ => {}
                }
                Ok(())
            }
            Step::InStringEsc => {
                self.step = match c {
                    b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => Step::InString,
                    b'u' => Step::InStringEscU(0),
                    _ => return invalid(c, "in string escape code"),
                };
                Ok(())
            }
            Step::InStringEscU(n) => {
                if !c.is_ascii_hexdigit() {
                    return invalid(c, r"in \u hexadecimal character escape");
                }
                self.step = if n == 3 {
                    Step::InString
                } else {
                    Step::InStringEscU(n + 1)
                };
                Ok(())
            }
            Step::Neg => {
                self.step = match c {
                    b'0' => Step::Zero,
                    b'1'..=b'9' => Step::One,
                    _ => return invalid(c, "in numeric literal"),
                };
                Ok(())
            }
            Step::One if digit => Ok(()),
            Step::One | Step::Zero => match c {
                b'.' => {
                    self.step = Step::Dot;
                    Ok(())
                }
                b'e' | b'E' => {
                    self.step = Step::E;
                    Ok(())
                }
                _ => self.end_value(c),
            },
            Step::Dot if digit => {
                self.step = Step::Dot0;
                Ok(())
            }
            Step::Dot => invalid(c, "after decimal point in numeric literal"),
            Step::Dot0 if digit => Ok(()),
            Step::Dot0 if matches!(c, b'e' | b'E') => {
                self.step = Step::E;
                Ok(())
            }
            Step::Dot0 | Step::E0 if !digit => self.end_value(c),
            Step::Dot0 | Step::E0 => Ok(()),
            Step::E if matches!(c, b'+' | b'-') => {
                self.step = Step::ESign;
                Ok(())
            }
            Step::E | Step::ESign if digit => {
                self.step = Step::E0;
                Ok(())
            }
            Step::E | Step::ESign => invalid(c, "in exponent of numeric literal"),
            Step::Literal(word, i) => {
                if c != word[i] {
                    let word_str = std::str::from_utf8(word).unwrap_or_default();
                    return invalid(
                        c,
                        &format!("in literal {word_str} (expecting {})", quote_char(word[i])),
                    );
                }
                self.step = if i + 1 == word.len() {
                    Step::EndValue
                } else {
                    Step::Literal(word, i + 1)
                };
                Ok(())
            }
        }
    }
}

/// Go's `checkValid`: `Ok` or the `SyntaxError` text.
fn check_valid(data: &[u8]) -> Scan {
    let mut s = Scanner {
        step: Step::BeginValue,
        parse: Vec::new(),
        end_top: false,
    };
    for &c in data {
        s.step(c)?;
    }
    // Go's `scanner.eof`: the end of input is judged as one more space.
    if s.end_top {
        return Ok(());
    }
    s.step(b' ')?;
    if s.end_top {
        Ok(())
    } else {
        Err("unexpected end of JSON input".into())
    }
}

/// Index of the first non-space byte of `b` from `i` (valid JSON: there is one, or the end).
fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    i
}

/// The end of the string literal starting at `b[i] == '"'` (one past its closing quote).
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the value starting at `b[i]` (a document [`check_valid`] accepted); no
/// recursion, whatever the depth.
fn value_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'"' => i = string_end(b, i),
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                // Never below zero in a document `check_valid` accepted.
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => {
                // A number or literal (or space, a comma or colon inside a container).
                while i < b.len() && !matches!(b[i], b'"' | b'{' | b'[' | b'}' | b']' | b',') {
                    if depth == 0 && is_space(b[i]) {
                        break;
                    }
                    i += 1;
                }
                if depth == 0 {
                    return i;
                }
                if i < b.len() && b[i] == b',' {
                    i += 1;
                }
                continue;
            }
        }
        if depth == 0 {
            return i;
        }
    }
    i
}

/// The members of the object `obj` (valid JSON, starting with `{`): decoded names and raw
/// values, in document order.
fn members(obj: &[u8]) -> Vec<(String, &[u8])> {
    let mut out = Vec::new();
    let mut i = skip_space(obj, 1);
    while i < obj.len() && obj[i] == b'"' {
        let end = string_end(obj, i);
        let name = unquote(&obj[i..end]);
        let start = skip_space(obj, skip_space(obj, end) + 1);
        let stop = value_end(obj, start);
        out.push((name, &obj[start..stop]));
        i = skip_space(obj, stop);
        if obj.get(i) == Some(&b',') {
            i = skip_space(obj, i + 1);
        }
    }
    out
}

/// The elements of `raw` if it is an array (of a document [`decode_struct`] accepted), else
/// none, one at a time: a caller that stops early (the JWKS' key cap) never walks the rest.
pub(crate) fn elements(raw: Option<&[u8]>) -> impl Iterator<Item = &[u8]> {
    let arr = raw.filter(|r| r.first() == Some(&b'[')).unwrap_or(b"[]");
    let mut i = skip_space(arr, 1);
    std::iter::from_fn(move || {
        if i >= arr.len() || arr[i] == b']' {
            return None;
        }
        let start = i;
        let stop = value_end(arr, start);
        i = skip_space(arr, stop);
        if arr.get(i) == Some(&b',') {
            i = skip_space(arr, i + 1);
        }
        Some(&arr[start..stop])
    })
}

/// Go's `unquoteBytes` of a string literal the scanner accepted: escapes decoded, a UTF-16
/// surrogate escape that is not half of a valid pair and each byte of invalid UTF-8 become
/// U+FFFD.
fn unquote(lit: &[u8]) -> String {
    let s = &lit[1..lit.len().saturating_sub(1).max(1)];
    let u4 = |i: usize| -> Option<u32> {
        let h = s.get(i..i + 6)?;
        if h[0] != b'\\' || h[1] != b'u' {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&h[2..]).ok()?, 16).ok()
    };
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'\\' {
            let e = s.get(i + 1).copied().unwrap_or(b'\\');
            let simple = match e {
                b'b' => Some('\u{8}'),
                b'f' => Some('\u{c}'),
                b'n' => Some('\n'),
                b'r' => Some('\r'),
                b't' => Some('\t'),
                b'u' => None,
                other => Some(char::from(other)),
            };
            if let Some(ch) = simple {
                out.push(ch);
                i += 2;
                continue;
            }
            let r = u4(i).unwrap_or(0xFFFD);
            i += 6;
            if (0xD800..0xE000).contains(&r) {
                if let Some(r2) = u4(i).filter(|r2| (0xDC00..0xE000).contains(r2))
                    && (0xD800..0xDC00).contains(&r)
                {
                    let cp = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                    out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                    i += 6;
                    continue;
                }
                out.push('\u{FFFD}');
                continue;
            }
            out.push(char::from_u32(r).unwrap_or('\u{FFFD}'));
            continue;
        }
        // A run without escapes: valid UTF-8 as is, each invalid byte one U+FFFD (Go's
        // `utf8.DecodeRune` refuses one byte at a time; the bytes after the first of an
        // invalid chunk are continuation bytes, which never start a rune).
        let end = s[i..]
            .iter()
            .position(|&b| b == b'\\')
            .map_or(s.len(), |p| i + p);
        for chunk in s[i..end].utf8_chunks() {
            out.push_str(chunk.valid());
            out.extend(std::iter::repeat_n('\u{FFFD}', chunk.invalid().len()));
        }
        i = end;
    }
    out
}

/// Go's name for the kind of a JSON value (`raw`, valid JSON) in an `UnmarshalTypeError`.
fn kind(raw: &[u8]) -> &'static str {
    match raw.first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "bool",
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        _ => "number",
    }
}

/// A field's raw value as the Go string it decodes to (`""` if absent or not a string).
#[cfg_attr(not(feature = "remote"), allow(dead_code))] // discovery only
pub(crate) fn string(raw: Option<&[u8]>) -> String {
    match raw {
        Some(r) if r.first() == Some(&b'"') => unquote(r),
        _ => String::new(),
    }
}

/// Go's `foldName` for matching against ASCII field names: ASCII upper case; beyond ASCII,
/// Go folds a rune to the smallest of its `unicode.SimpleFold` orbit, which is an ASCII
/// letter only for U+017F (`ſ`, orbit `S s ſ`) and U+212A (Kelvin sign, orbit `K k K`)
/// (checked over every rune with Go 1.26.8). Every other non-ASCII rune folds to a non-ASCII
/// one, which no ASCII field name contains, so it is kept as it is.
fn fold(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '\u{17f}' => 'S',
            '\u{212a}' => 'K',
            c => c.to_ascii_uppercase(),
        })
        .collect()
}

/// Go's `quoteChar` (encoding/json/scanner.go) for a byte the scanner refused.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".into(),
        b'"' => "'\"'".into(),
        0x07 => r"'\a'".into(),
        0x08 => r"'\b'".into(),
        0x0c => r"'\f'".into(),
        b'\n' => r"'\n'".into(),
        b'\r' => r"'\r'".into(),
        b'\t' => r"'\t'".into(),
        0x0b => r"'\v'".into(),
        b'\\' => r"'\\'".into(),
        0x20..=0x7e => format!("'{}'", c as char),
        0x00..=0x1f | 0x7f => format!(r"'\x{c:02x}'"),
        // `string(c)` of a byte ≥ 0x80 is the rune U+00XX; strconv.Quote escapes the ones
        // that are not printable (C1 controls, NBSP, soft hyphen).
        0x80..=0xa0 | 0xad => format!(r"'\u{c:04x}'"),
        _ => format!("'{}'", char::from(c)),
    }
}

/// Decodes `body` into a Go struct `pkg.name` with `fields`, as `json.Unmarshal` does: each
/// field's final raw value (`None`: absent or only `null`), or Go's error text (the inner
/// `<err>` that go-oidc's `unmarshalResp` wraps).
pub(crate) fn decode_struct<'a>(
    body: &'a [u8],
    pkg: &str,
    name: &str,
    fields: &[Field],
) -> Result<Vec<Option<&'a [u8]>>, String> {
    check_valid(body)?;
    let start = skip_space(body, 0);
    let top = &body[start..value_end(body, start)];
    let members = match kind(top) {
        "object" => members(top),
        "null" => Vec::new(),
        k => {
            return Err(format!(
                "json: cannot unmarshal {k} into Go value of type {pkg}.{name}"
            ));
        }
    };
    let folded: Vec<String> = fields.iter().map(|(n, _)| fold(n)).collect();
    let mut out: Vec<Option<&[u8]>> = vec![None; fields.len()];
    let mut first_err: Option<String> = None;
    let mut type_err = |field: &str, raw: &[u8], ty: &str| {
        first_err.get_or_insert_with(|| {
            format!(
                "json: cannot unmarshal {} into Go struct field {name}.{field} of type {ty}",
                kind(raw)
            )
        });
    };
    for (key, raw) in members {
        let i = match fields.iter().position(|(n, _)| *n == key) {
            Some(i) => i,
            None => {
                let k = fold(&key);
                match folded.iter().position(|f| *f == k) {
                    Some(i) => i,
                    None => continue,
                }
            }
        };
        let (field, ty) = fields[i];
        let k = kind(raw);
        if k == "null" {
            continue;
        }
        let ok = match ty {
            GoType::String => {
                k == "string" || {
                    type_err(field, raw, "string");
                    false
                }
            }
            GoType::Strings if k == "array" => {
                for item in elements(Some(raw)) {
                    if !matches!(kind(item), "null" | "string") {
                        type_err(field, item, "string");
                    }
                }
                true
            }
            GoType::Strings => {
                type_err(field, raw, "[]string");
                false
            }
            GoType::Slice(go) => {
                k == "array" || {
                    type_err(field, raw, go);
                    false
                }
            }
        };
        if ok {
            out[i] = Some(raw);
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// go-oidc's `unmarshalResp` frame around a decode error `err`, by the response's
/// `Content-Type` (Go's `mime.ParseMediaType` media type, compared with `application/json`).
#[cfg(feature = "remote")]
pub(crate) fn unmarshal_resp(content_type: Option<&str>, err: &str) -> String {
    let ct = content_type.unwrap_or("");
    let json = ct
        .split(';')
        .next()
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if json {
        format!("got Content-Type = application/json, but could not unmarshal as JSON: {err}")
    } else {
        format!(
            "expected Content-Type = application/json, got {}: {err}",
            crate::jwt::go_quote(ct)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROVIDER: &[Field] = &[("issuer", GoType::String), ("jwks_uri", GoType::String)];

    fn dec(body: &str) -> Result<Vec<Option<&[u8]>>, String> {
        decode_struct(body.as_bytes(), "oidc", "providerJSON", PROVIDER)
    }

    /// `(issuer, jwks_uri)` as Go decodes `body` into go-oidc's `providerJSON`.
    fn fields(body: &[u8]) -> Result<(String, String), String> {
        let got = decode_struct(body, "oidc", "providerJSON", PROVIDER)?;
        Ok((string(got[0]), string(got[1])))
    }

    /// Texts printed by Go 1.26.8's `json.Unmarshal` into go-oidc's `providerJSON`.
    #[test]
    fn go_texts() {
        let cases = [
            ("", "unexpected end of JSON input"),
            (r#"{"issuer":"#, "unexpected end of JSON input"),
            (
                "<html>",
                "invalid character '<' looking for beginning of value",
            ),
            (
                "  'x'",
                r"invalid character '\'' looking for beginning of value",
            ),
            (
                "\u{1}",
                r"invalid character '\x01' looking for beginning of value",
            ),
            (
                "[1]",
                "json: cannot unmarshal array into Go value of type oidc.providerJSON",
            ),
            (
                r#""s""#,
                "json: cannot unmarshal string into Go value of type oidc.providerJSON",
            ),
            (
                r#"{"jwks_uri":5,"issuer":true}"#,
                "json: cannot unmarshal number into Go struct field providerJSON.jwks_uri of type string",
            ),
            (
                r#"{"ISSUER":[]}"#,
                "json: cannot unmarshal array into Go struct field providerJSON.issuer of type string",
            ),
        ];
        for (body, want) in cases {
            assert_eq!(dec(body).unwrap_err(), want, "{body:?}");
        }
    }

    #[test]
    fn names_fold_null_is_a_no_op_last_wins() {
        let s = |v: &Option<&[u8]>| v.is_some().then(|| string(*v));
        let got = dec(r#"{"JWKS_URI":"a","jwks_uri":"b","Issuer":"i","issuer":null}"#).unwrap();
        assert_eq!(
            (s(&got[0]), s(&got[1])),
            (Some("i".into()), Some("b".into()))
        );
        let got = dec(r#"{"jwks_uri":"a","Jwks_Uri":"c"}"#).unwrap();
        assert_eq!(s(&got[1]), Some("c".into()));
        // Go folds U+017F (long s) to S.
        let got = dec(r#"{"jwkſ_uri":"x"}"#).unwrap();
        assert_eq!(s(&got[1]), Some("x".into()));
        let got = dec(r#"{"jwks_uri":null}"#).unwrap();
        assert!(got[1].is_none());
        assert!(dec("null").unwrap().iter().all(Option::is_none));
    }

    #[test]
    fn strings_and_slices() {
        let f: &[Field] = &[
            ("algs", GoType::Strings),
            ("keys", GoType::Slice("[]jose.JSONWebKey")),
        ];
        let d = |b: &'static str| decode_struct(b.as_bytes(), "jose", "JSONWebKeySet", f);
        assert_eq!(
            d(r#"{"keys":5}"#).unwrap_err(),
            "json: cannot unmarshal number into Go struct field JSONWebKeySet.keys of type []jose.JSONWebKey"
        );
        assert_eq!(
            d(r#"{"algs":["a",null,1]}"#).unwrap_err(),
            "json: cannot unmarshal number into Go struct field JSONWebKeySet.algs of type string"
        );
        assert_eq!(
            d(r#"{"algs":"a"}"#).unwrap_err(),
            "json: cannot unmarshal string into Go struct field JSONWebKeySet.algs of type []string"
        );
        assert!(d(r#"{"keys":null,"algs":null}"#).is_ok());
    }

    /// Go's `foldName` (Go 1.26.8): only `ſ` (U+017F) and the Kelvin sign (U+212A) fold onto
    /// ASCII letters; `ß`, dotless `ı` and dotted `İ` match no field (full Unicode case
    /// mapping, `ToUpper(ToLower(r))`, would turn `ß` into `SS` and `ı` into `I`). Expected
    /// values printed by `json.Unmarshal` into a `providerJSON`.
    #[test]
    fn names_fold_as_go() {
        let cases: &[(&str, (&str, &str))] = &[
            (r#"{"ıssuer":"x"}"#, ("", "")),
            (r#"{"ißuer":"x"}"#, ("", "")),
            (r#"{"İssuer":"x"}"#, ("", "")),
            (r#"{"iſſuer":"x"}"#, ("x", "")),
            ("{\"jw\u{212a}s_uri\":\"x\"}", ("", "x")),
            (r#"{"jwks_urı":"x"}"#, ("", "")),
            (r#"{"JWKS_URİ":"x"}"#, ("", "")),
            (r#"{"ISSUER":"x","jwks_uri":"j"}"#, ("x", "j")),
        ];
        for (body, (iss, jwks)) in cases {
            assert_eq!(
                fields(body.as_bytes()).unwrap(),
                (iss.to_string(), jwks.to_string()),
                "{body}"
            );
        }
    }

    /// Go's `unquoteBytes`: a surrogate escape that is not half of a valid pair, and each
    /// byte of invalid UTF-8, is U+FFFD (values printed by Go 1.26.8).
    #[test]
    fn strings_unquote_as_go() {
        let cases: &[(&[u8], &str)] = &[
            (br#"{"issuer":"\ud800"}"#, "\u{fffd}"),
            (br#"{"issuer":"a\udc00b"}"#, "a\u{fffd}b"),
            (br#"{"issuer":"\ud800\u0041"}"#, "\u{fffd}A"),
            (br#"{"issuer":"\ud83d\ude00"}"#, "\u{1f600}"),
            (br#"{"issuer":"\ud800\ud800\udc00"}"#, "\u{fffd}\u{10000}"),
            (b"{\"issuer\":\"a\xffb\xc3\"}", "a\u{fffd}b\u{fffd}"),
            (b"{\"issuer\":\"\xed\xa0\x80\"}", "\u{fffd}\u{fffd}\u{fffd}"),
            (b"{\"issuer\":\"\xe2\x82\"}", "\u{fffd}\u{fffd}"),
            (br#"{"issuer":"\/\b\f\n\r\t\"\\"}"#, "/\u{8}\u{c}\n\r\t\"\\"),
            ("{\"issuer\":\"é\\u00e9\"}".as_bytes(), "éé"),
        ];
        for (body, want) in cases {
            assert_eq!(
                fields(body).unwrap().0,
                *want,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // A name with invalid UTF-8 decodes with U+FFFD too, and so matches nothing.
        assert_eq!(
            fields(b"{\"iss\xffuer\":\"x\"}").unwrap(),
            (String::new(), String::new())
        );
    }

    /// Syntax errors are Go's scanner texts; at the end of the input Go's `scanner.eof`
    /// steps one space, so a truncated literal or number reports `' '` (texts printed by
    /// Go 1.26.8's `json.Unmarshal`).
    #[test]
    fn syntax_errors_as_go() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"nul",
                "invalid character ' ' in literal null (expecting 'l')",
            ),
            (
                b"tru",
                "invalid character ' ' in literal true (expecting 'e')",
            ),
            (
                b"fals",
                "invalid character ' ' in literal false (expecting 'e')",
            ),
            (b"-", "invalid character ' ' in numeric literal"),
            (
                b"1.",
                "invalid character ' ' after decimal point in numeric literal",
            ),
            (
                b"1e",
                "invalid character ' ' in exponent of numeric literal",
            ),
            (
                b"1e+",
                "invalid character ' ' in exponent of numeric literal",
            ),
            (br#""abc"#, "unexpected end of JSON input"),
            (b"{", "unexpected end of JSON input"),
            (br#"{"a""#, "unexpected end of JSON input"),
            (br#"{"a":"#, "unexpected end of JSON input"),
            (b"[1,", "unexpected end of JSON input"),
            (b" ", "unexpected end of JSON input"),
            (br#"{"a":1"#, "unexpected end of JSON input"),
            (
                br#""\u12"#,
                r"invalid character ' ' in \u hexadecimal character escape",
            ),
            (br#""\"#, "invalid character ' ' in string escape code"),
            (b"01", "invalid character '1' after top-level value"),
            (
                br#"{"a":1}x"#,
                "invalid character 'x' after top-level value",
            ),
            (br#"{"a" 1}"#, "invalid character '1' after object key"),
            (
                b"{,}",
                "invalid character ',' looking for beginning of object key string",
            ),
            (
                b"[1,]",
                "invalid character ']' looking for beginning of value",
            ),
            (
                br#"{"a":1,}"#,
                "invalid character '}' looking for beginning of object key string",
            ),
            (b"\"a\x01\"", r"invalid character '\x01' in string literal"),
            (b"1 2", "invalid character '2' after top-level value"),
            (br#"{"a":-x}"#, "invalid character 'x' in numeric literal"),
            (
                br#"{"a":tx}"#,
                "invalid character 'x' in literal true (expecting 'r')",
            ),
            (
                br#"{"a":"\x"}"#,
                "invalid character 'x' in string escape code",
            ),
            (
                b"{1:2}",
                "invalid character '1' looking for beginning of object key string",
            ),
            (
                b"nulx",
                "invalid character 'x' in literal null (expecting 'l')",
            ),
            (b"[1}", "invalid character '}' after array element"),
            (
                b"\xef\xbb\xbf{}",
                "invalid character '\u{ef}' looking for beginning of value",
            ),
            (
                br#"{"a":{"b":1,"c":2]}"#,
                "invalid character ']' after object key:value pair",
            ),
        ];
        for (body, want) in cases {
            assert_eq!(
                fields(body).unwrap_err(),
                *want,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // Go's `maxNestingDepth`: 10 000 open containers are fine, one more is refused.
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(
            fields(deep(10_000).as_bytes()).unwrap_err(),
            "json: cannot unmarshal array into Go value of type oidc.providerJSON"
        );
        assert_eq!(
            fields(deep(10_001).as_bytes()).unwrap_err(),
            "invalid character '[' exceeded max depth"
        );
    }

    /// Values are delimited correctly whatever they hold (nesting, strings with brackets
    /// and escaped quotes, spaces, numbers at the end of an object).
    #[test]
    fn members_and_elements_are_delimited() {
        let body = br#" { "x" : { "a" : [ 1 , "]}\"" , { } ] , "b":-1.5e3 } , "issuer" : "i" , "n" : 12 ,"jwks_uri":"j" } "#;
        assert_eq!(fields(body).unwrap(), ("i".into(), "j".into()));
        let arr = br#"[ 1 , "a]" , {"k":[2,3]} , [ ] , null , -0.5 ]"#;
        let got: Vec<&str> = elements(Some(arr))
            .map(|e| std::str::from_utf8(e).unwrap())
            .collect();
        assert_eq!(
            got,
            ["1", r#""a]""#, r#"{"k":[2,3]}"#, "[ ]", "null", "-0.5"]
        );
        assert_eq!(elements(Some(b"[]")).count(), 0);
        assert_eq!(elements(Some(b"{}")).count(), 0);
        assert_eq!(elements(None).count(), 0);
        // An iterator: a caller can stop after the first elements of a long array.
        let long = format!("[1,2,{}]", vec!["0"; 100_000].join(","));
        let first: Vec<&[u8]> = elements(Some(long.as_bytes())).take(2).collect();
        assert_eq!(first, [&b"1"[..], &b"2"[..]]);
    }

    #[cfg(feature = "remote")]
    #[test]
    fn unmarshal_resp_frames() {
        assert_eq!(
            unmarshal_resp(Some("application/json; charset=utf-8"), "E"),
            "got Content-Type = application/json, but could not unmarshal as JSON: E"
        );
        assert_eq!(
            unmarshal_resp(Some("text/html"), "E"),
            r#"expected Content-Type = application/json, got "text/html": E"#
        );
        assert_eq!(
            unmarshal_resp(None, "E"),
            r#"expected Content-Type = application/json, got "": E"#
        );
    }
}
