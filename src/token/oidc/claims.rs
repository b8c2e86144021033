//! The ID token's top-level claims, decoded once without building a `serde_json::Value` tree:
//! names are borrowed from the payload (unless escaped) and values kept as raw JSON text that
//! is decoded only for the claims the mapping actually reads. One allocation (the entry
//! vector) instead of one per claim name and value. Duplicate names never reach here (the
//! router's pre-check rejects them), so a linear lookup over ~10 entries is exact and fast.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::jwt::json::Key;

pub(crate) struct RawClaims<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> RawClaims<'a> {
    pub(crate) fn parse(payload: &'a [u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(payload)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }
}

impl<'de> Deserialize<'de> for RawClaims<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawClaims<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(16);
                while let Some(Key(k)) = m.next_key()? {
                    let v: &'de RawValue = m.next_value()?;
                    out.push((k, v));
                }
                Ok(RawClaims(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Go's name of a JSON value's type, as in `json: cannot unmarshal <type> into …`.
pub(crate) fn raw_type(v: &RawValue) -> &'static str {
    match v.get().as_bytes().first() {
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        Some(b't' | b'f') => "bool",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// A claim as a Go `string`: `null` is `""`; other types are Go's unmarshal error (the value
/// itself is never echoed). Borrowed unless the string has escapes.
pub(crate) fn raw_str(v: &RawValue) -> Result<Cow<'_, str>, String> {
    match raw_type(v) {
        "string" => match serde_json::from_str::<&str>(v.get()) {
            Ok(s) => Ok(Cow::Borrowed(s)),
            Err(_) => serde_json::from_str::<String>(v.get())
                .map(Cow::Owned)
                .map_err(|_| "json: cannot unmarshal string into Go value of type string".into()),
        },
        "null" => Ok(Cow::Borrowed("")),
        other => Err(format!(
            "json: cannot unmarshal {other} into Go value of type string"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_claims_borrow_and_decode() {
        let p =
            br#"{"a":"x","b\u0041":[1,"y"],"n":null,"t":true,"o":{"k":1},"s":"q\"r","num":-1.5}"#;
        let c = RawClaims::parse(p).unwrap();
        assert!(matches!(c.0[0].0, Cow::Borrowed("a")));
        assert_eq!(c.get("bA").unwrap().get(), r#"[1,"y"]"#);
        let table: &[(&str, Result<&str, &str>)] = &[
            ("a", Ok("x")),
            ("n", Ok("")),
            ("s", Ok("q\"r")),
            (
                "t",
                Err("json: cannot unmarshal bool into Go value of type string"),
            ),
            (
                "o",
                Err("json: cannot unmarshal object into Go value of type string"),
            ),
            (
                "bA",
                Err("json: cannot unmarshal array into Go value of type string"),
            ),
            (
                "num",
                Err("json: cannot unmarshal number into Go value of type string"),
            ),
        ];
        for (name, want) in table {
            let got = raw_str(c.get(name).unwrap());
            match (want, got) {
                (Ok(w), Ok(g)) => assert_eq!(*w, g, "{name}"),
                (Err(w), Err(g)) => assert_eq!(*w, g, "{name}"),
                (w, g) => panic!("{name}: {w:?} vs {g:?}"),
            }
        }
        assert!(c.get("missing").is_none());
        assert!(RawClaims::parse(b"[1]").is_err());
    }
}
