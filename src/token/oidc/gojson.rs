//! How Go's `encoding/json` (v1, Go 1.26) decodes the two documents an OIDC issuer serves
//! into go-oidc's structs (`providerJSON`, `jose.JSONWebKeySet`), for the fields kube-authn
//! reads and the ones whose type errors make Go refuse the document:
//!
//! - member names are matched to fields as Go matches them: exactly, else case-insensitively
//!   (Go's folding: ASCII case, and `ToUpper(ToLower(r))` beyond ASCII, so `ſ` is `s`);
//! - a repeated member (in any case) is applied in document order: the last one wins;
//! - `null` leaves a field as it is (so a `null` `jwks_uri` is an empty one);
//! - a value of the wrong type is Go's `json: cannot unmarshal <kind> into Go struct field
//!   <Struct>.<field> of type <type>` (the first one, in document order); a top-level
//!   value that is not an object is `… into Go value of type <pkg>.<Struct>`, and a
//!   top-level `null` decodes as an empty document.
//!
//! Syntax errors: an empty or truncated body is Go's `unexpected end of JSON input`; a body
//! whose first character cannot start a JSON value (an HTML page) is Go's `invalid character
//! 'X' looking for beginning of value`; any other syntax error is described by serde_json
//! (`<what> at line L column C`), not by Go's scanner.

use serde::Deserialize;
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The Go type of one struct field.
#[derive(Debug, Clone, Copy)]
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

/// A top-level JSON value with its object members in document order.
enum Top {
    Object(Vec<(String, Box<RawValue>)>),
    Null,
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Top, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Box<RawValue>>()? {
                    members.push((k, v));
                }
                Ok(Top::Object(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Top, A::Error> {
                while s.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Top::Other("array"))
            }
            fn visit_unit<E>(self) -> Result<Top, E> {
                Ok(Top::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
                Ok(Top::Other("bool"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
                Ok(Top::Other("number"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
                Ok(Top::Other("number"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
                Ok(Top::Other("number"))
            }
            fn visit_str<E>(self, _: &str) -> Result<Top, E> {
                Ok(Top::Other("string"))
            }
        }
        d.deserialize_any(V)
    }
}

/// Go's name for the kind of a JSON value (`raw`, valid JSON) in an `UnmarshalTypeError`.
fn kind(raw: &str) -> &'static str {
    match raw.trim_start().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "bool",
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        _ => "number",
    }
}

/// A field's raw value as a string (`""` if absent or not a string).
pub(crate) fn string(raw: &Option<Box<RawValue>>) -> String {
    raw.as_deref()
        .and_then(|r| serde_json::from_str::<String>(r.get()).ok())
        .unwrap_or_default()
}

/// Go's `foldName`: ASCII upper case, `ToUpper(ToLower(r))` beyond ASCII.
fn fold(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.extend(c.to_lowercase().flat_map(char::to_uppercase));
        }
    }
    out
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

/// The inner text of a syntax error (see the module docs).
fn syntax_text(body: &[u8], e: &serde_json::Error) -> String {
    if e.is_eof() {
        return "unexpected end of JSON input".into();
    }
    let first = body
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    match first {
        Some(c) if !b"{[\"-0123456789tfn".contains(&c) => {
            format!(
                "invalid character {} looking for beginning of value",
                quote_char(c)
            )
        }
        _ => e.to_string(),
    }
}

/// Decodes `body` into a Go struct `pkg.name` with `fields`, as `json.Unmarshal` does: each
/// field's final raw value (`None`: absent or only `null`), or Go's error text (the inner
/// `<err>` that go-oidc's `unmarshalResp` wraps).
pub(crate) fn decode_struct(
    body: &[u8],
    pkg: &str,
    name: &str,
    fields: &[Field],
) -> Result<Vec<Option<Box<RawValue>>>, String> {
    let top: Top = serde_json::from_slice(body).map_err(|e| syntax_text(body, &e))?;
    let members = match top {
        Top::Object(m) => m,
        Top::Null => Vec::new(),
        Top::Other(k) => {
            return Err(format!(
                "json: cannot unmarshal {k} into Go value of type {pkg}.{name}"
            ));
        }
    };
    let folded: Vec<String> = fields.iter().map(|(n, _)| fold(n)).collect();
    let mut out: Vec<Option<Box<RawValue>>> = vec![None; fields.len()];
    let mut first_err: Option<String> = None;
    let mut type_err = |field: &str, raw: &str, ty: &str| {
        first_err.get_or_insert_with(|| {
            format!(
                "json: cannot unmarshal {} into Go struct field {name}.{field} of type {ty}",
                kind(raw)
            )
        });
    };
    for (key, value) in members {
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
        let raw = value.get();
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
                let items: Vec<&RawValue> = serde_json::from_str(raw).unwrap_or_default();
                for item in items {
                    if !matches!(kind(item.get()), "null" | "string") {
                        type_err(field, item.get(), "string");
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
            out[i] = Some(value);
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// go-oidc's `unmarshalResp` frame around a decode error `err`, by the response's
/// `Content-Type` (Go's `mime.ParseMediaType` media type, compared with `application/json`).
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

    fn dec(body: &str) -> Result<Vec<Option<Box<RawValue>>>, String> {
        decode_struct(body.as_bytes(), "oidc", "providerJSON", PROVIDER)
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
        let s = |v: &Option<Box<RawValue>>| v.is_some().then(|| string(v));
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
        let d = |b: &str| decode_struct(b.as_bytes(), "jose", "JSONWebKeySet", f);
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
