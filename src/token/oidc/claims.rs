//! The ID token's top-level claims, taken from the payload the issuer router already
//! validated (one JSON object, no duplicate names at any depth): one structural walk over the
//! top level ([`RawObject::iter`]) collects names (borrowed unless escaped) and raw value
//! texts, and the mapping reads values in place with the typed readers of
//! [`crate::jwt::json`] (no serde pass over a claim; serde_json only for the rare distributed
//! claims). One allocation (the entry vector) instead of one per claim name and value. Names
//! are unique, so a linear lookup over ~10 entries is exact and fast.

use std::borrow::Cow;

use crate::jwt::json::{RawJson, RawObject};

pub(crate) struct RawClaims<'a>(Vec<(Cow<'a, str>, RawJson<'a>)>);

impl<'a> RawClaims<'a> {
    /// The top-level members of a validated payload ([`crate::jwt::compact::UntrustedJwt::claims`]).
    pub(crate) fn new(claims: RawObject<'a>) -> Self {
        let mut out = Vec::with_capacity(16);
        out.extend(claims.iter());
        RawClaims(out)
    }

    /// The claims in document order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, RawJson<'a>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), *v))
    }

    /// Sets claim `name` to `value`, replacing the claim of that name if there is one:
    /// Kubernetes' `allClaims[r.claim] = value` for a resolved distributed claim, which every
    /// mapping (username, groups, uid, required claims) then reads.
    pub(crate) fn set(&mut self, name: &'a str, value: RawJson<'a>) {
        match self.0.iter_mut().find(|(k, _)| k == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((Cow::Borrowed(name), value)),
        }
    }

    /// The raw value of claim `name`, for the typed readers of [`crate::jwt::json`].
    pub(crate) fn get(&self, name: &str) -> Option<RawJson<'a>> {
        // Length and first byte before the full comparison: claim names are short and many
        // share a length (`iss`, `aud`, `exp`, …), so most candidates fail without a call.
        let first = name.as_bytes().first();
        self.0
            .iter()
            .find(|(k, _)| k.len() == name.len() && k.as_bytes().first() == first && k == name)
            .map(|(_, v)| *v)
    }
}

/// Go's name of a JSON value's type, as in `json: cannot unmarshal <type> into …`.
pub(crate) use crate::jwt::json::json_kind as raw_type;

/// A claim as a Go `string`: `null` is `""`; other types are Go's unmarshal error (the value
/// itself is never echoed). Borrowed unless the string has escapes.
pub(crate) fn raw_str(v: RawJson<'_>) -> Result<Cow<'_, str>, String> {
    if let Some(s) = v.as_str() {
        return Ok(s);
    }
    match raw_type(v) {
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
        let c = RawClaims::new(crate::jwt::json::validate_object(p).unwrap());
        assert!(matches!(c.0[0].0, Cow::Borrowed("a")));
        assert_eq!(c.get("bA").unwrap().text(), r#"[1,"y"]"#);
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
    }
}
