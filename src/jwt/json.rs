//! Strict JSON for JOSE headers and JWT claims.
//!
//! * **Duplicate member names are rejected** at every depth (RFC 7515 §5.2 allows "reject or
//!   last wins"; go-jose rejects on the verification path, Go's std JSON keeps the last one on
//!   the issuer-peek path — we use one rule, reject, on both paths so they can never disagree).
//! * Nesting is bounded by serde_json's recursion limit (128); 10 000-deep documents fail fast.
//! * `exp`/`nbf`/`iat` must be JSON numbers ([`NumericDate`]); a string is an error, never
//!   "absent" (the jsonwebtoken CVE-2026-25537 class). `aud` must be a string or an array of
//!   strings ([`Audience`]).
//! * Error messages never contain claim values.
//!
//! ```
//! use kube_authn::jwt::json::scan_object;
//! assert_eq!(scan_object(br#"{"iss":"a","x":{"y":1}}"#).unwrap().as_deref(), Some("a"));
//! assert!(scan_object(br#"{"iss":"a","iss":"b"}"#).is_err());
//! assert!(scan_object(br#"{"a":{"b":1,"b":2}}"#).is_err());
//! assert!(scan_object(br#"{"iss":5}"#).is_err());
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// go-jose's text for a non-numeric `exp`/`nbf`/`iat`.
pub const ERR_NUMERIC_DATE: &str =
    "go-jose/go-jose/jwt: expected number value to unmarshal NumericDate";
/// go-jose's text for an `aud` that is neither a string nor an array of strings.
pub const ERR_AUDIENCE: &str =
    "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience";
/// Our text for a duplicated JSON member name.
pub const ERR_DUPLICATE: &str = "duplicate JSON member name";

/// Checks that `bytes` is one JSON object without duplicate member names (at any depth) and
/// returns its top-level `iss` member. `iss` must be a string when present.
///
/// This is the single pass the issuer router makes over an untrusted payload.
///
/// ```
/// use kube_authn::jwt::json::scan_object;
/// assert_eq!(scan_object(br#"{"sub":"x"}"#).unwrap(), None);
/// assert!(scan_object(b"[1]").is_err());
/// ```
pub fn scan_object(bytes: &[u8]) -> Result<Option<Cow<'_, str>>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let iss = de.deserialize_map(TopVisitor)?;
    de.end()?;
    Ok(iss)
}

/// Checks that `bytes` is valid JSON without duplicate member names at any depth.
///
/// ```
/// assert!(kube_authn::jwt::json::check_no_duplicates(br#"[{"a":1},{"a":2}]"#).is_ok());
/// assert!(kube_authn::jwt::json::check_no_duplicates(br#"[{"a":1,"a":2}]"#).is_err());
/// ```
pub fn check_no_duplicates(bytes: &[u8]) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    NoDup.deserialize(&mut de)?;
    de.end()
}

/// Decodes `bytes` into `T` after [`check_no_duplicates`].
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct C { sub: String }
/// let c: C = kube_authn::jwt::json::from_slice_strict(br#"{"sub":"x"}"#).unwrap();
/// assert_eq!(c.sub, "x");
/// ```
pub fn from_slice_strict<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, serde_json::Error> {
    check_no_duplicates(bytes)?;
    serde_json::from_slice(bytes)
}

/// A JSON member name, borrowed when it has no escapes.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Remembers member names of one object: the first 16 on the stack (no allocation for
/// ordinary JWT objects), hashed beyond that.
struct Seen<'de> {
    small: [Cow<'de, str>; 16],
    len: usize,
    big: Option<HashSet<Cow<'de, str>>>,
}

impl Default for Seen<'_> {
    fn default() -> Self {
        Seen {
            small: std::array::from_fn(|_| Cow::Borrowed("")),
            len: 0,
            big: None,
        }
    }
}

impl<'de> Seen<'de> {
    fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
        if let Some(big) = &mut self.big {
            if !big.insert(key) {
                return Err(E::custom(ERR_DUPLICATE));
            }
            return Ok(());
        }
        if self.small[..self.len].contains(&key) {
            return Err(E::custom(ERR_DUPLICATE));
        }
        if self.len == self.small.len() {
            let mut big: HashSet<Cow<'de, str>> =
                self.small.iter_mut().map(std::mem::take).collect();
            big.insert(key);
            self.big = Some(big);
        } else {
            self.small[self.len] = key;
            self.len += 1;
        }
        Ok(())
    }
}

struct NoDup;

impl<'de> DeserializeSeed<'de> for NoDup {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(NoDupVisitor)
    }
}

struct NoDupVisitor;

impl<'de> Visitor<'de> for NoDupVisitor {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoDup)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = Seen::default();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            seen.insert(k)?;
            map.next_value_seed(NoDup)?;
        }
        Ok(())
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = Seen::default();
        let mut iss = None;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let is_iss = k == "iss";
            seen.insert(k)?;
            if is_iss {
                iss = map.next_value::<Option<Key<'de>>>()?.map(|k| k.0);
            } else {
                map.next_value_seed(NoDup)?;
            }
        }
        Ok(iss)
    }
}

/// A JWT NumericDate: seconds since the epoch. Accepts any JSON number (fractions truncated,
/// as go-jose does); rejects strings, booleans, arrays, objects and numbers outside `i64`.
/// Use it as `Option<NumericDate>`: absent or `null` is `None` (as Go decodes `null` into a
/// nil pointer), any other wrong type is an error.
///
/// ```
/// use kube_authn::jwt::json::NumericDate;
/// #[derive(serde::Deserialize)]
/// struct C { exp: Option<NumericDate> }
/// let c: C = serde_json::from_str(r#"{"exp": 1700000000.9}"#).unwrap();
/// assert_eq!(c.exp, Some(NumericDate(1700000000)));
/// assert!(serde_json::from_str::<C>(r#"{"exp": "1700000000"}"#).is_err());
/// assert!(serde_json::from_str::<C>(r#"{"exp": null}"#).unwrap().exp.is_none());
/// assert!(serde_json::from_str::<C>(r#"{}"#).unwrap().exp.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NumericDate(pub i64);

impl<'de> Deserialize<'de> for NumericDate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'v> Visitor<'v> for V {
            type Value = NumericDate;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<NumericDate, E> {
                Ok(NumericDate(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<NumericDate, E> {
                i64::try_from(v)
                    .map(NumericDate)
                    .map_err(|_| E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<NumericDate, E> {
                // i64::MAX as f64 rounds up to 2^63, which is out of range: use `<`.
                if v.is_finite() && v >= i64::MIN as f64 && v < i64::MAX as f64 {
                    Ok(NumericDate(v.trunc() as i64))
                } else {
                    Err(E::custom(ERR_NUMERIC_DATE))
                }
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_unit<E: de::Error>(self) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_none<E: de::Error>(self) -> Result<NumericDate, E> {
                Err(E::custom(ERR_NUMERIC_DATE))
            }
            fn visit_seq<A: SeqAccess<'v>>(self, _: A) -> Result<NumericDate, A::Error> {
                Err(de::Error::custom(ERR_NUMERIC_DATE))
            }
            fn visit_map<A: MapAccess<'v>>(self, _: A) -> Result<NumericDate, A::Error> {
                Err(de::Error::custom(ERR_NUMERIC_DATE))
            }
        }
        d.deserialize_any(V)
    }
}

/// The `aud` claim: a string (one audience) or an array of strings. `[]` is an empty list.
///
/// ```
/// use kube_authn::jwt::json::Audience;
/// let a: Audience = serde_json::from_str(r#""api""#).unwrap();
/// assert_eq!(a.0, ["api"]);
/// let b: Audience = serde_json::from_str(r#"["a","b"]"#).unwrap();
/// assert_eq!(b.0.len(), 2);
/// assert!(serde_json::from_str::<Audience>("5").is_err());
/// assert!(serde_json::from_str::<Audience>("[1]").is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Audience<'a>(pub Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Audience<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Audience<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of strings")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Audience(vec![Cow::Borrowed(v)]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Audience(vec![Cow::Owned(v.to_owned())]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<StrOnly<'de>>()? {
                    out.push(item.0);
                }
                Ok(Audience(out))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(ERR_AUDIENCE))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON string (borrowed when possible); any other type is an [`ERR_AUDIENCE`] error.
struct StrOnly<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for StrOnly<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrOnly<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(StrOnly(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(StrOnly(Cow::Owned(v.to_owned())))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(E::custom(ERR_AUDIENCE))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(ERR_AUDIENCE))
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(ERR_AUDIENCE))
            }
        }
        d.deserialize_any(V)
    }
}

/// Maps a claims-decoding error to a fixed message that never contains a claim value:
/// go-jose's own texts where they apply, a generic one otherwise.
///
/// ```
/// use kube_authn::jwt::json::{claims_error_message, NumericDate, ERR_NUMERIC_DATE};
/// let e = serde_json::from_str::<NumericDate>(r#""secret-ish""#).unwrap_err();
/// assert_eq!(claims_error_message(&e), ERR_NUMERIC_DATE);
/// ```
pub fn claims_error_message(e: &serde_json::Error) -> &'static str {
    let text = e.to_string();
    for known in [ERR_NUMERIC_DATE, ERR_AUDIENCE, ERR_DUPLICATE] {
        if text.starts_with(known) {
            return known;
        }
    }
    if text.starts_with("recursion limit exceeded") {
        return "json: claims nested too deeply";
    }
    if e.is_data() {
        "json: cannot unmarshal claims: a claim has the wrong type"
    } else {
        "json: cannot unmarshal claims: malformed JSON"
    }
}
