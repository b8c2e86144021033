//! The part of kube-apiserver's create handler (`k8s.io/apiserver/pkg/endpoints/handlers/create.go`)
//! that comes between reading a review's body and answering it: the `CreateOptions` query
//! parameters (`dryRun`, `fieldManager`, `fieldValidation`), validated as
//! `ValidateCreateOptions` validates them, and server-side field validation of the JSON body
//! (`fieldValidation=Ignore|Warn|Strict`, `Warn` when unset): unknown and repeated member names
//! found by the strict decoder (sigs.k8s.io/json), with its paths and texts.
//!
//! Reviews store nothing, so `dryRun` and `fieldManager` change nothing once validated.

use std::collections::HashSet;
use std::fmt;

use kube_authn::api::{StatusCause, StatusDetails};
use kube_authn::jwt::{go_is_print, go_quote, go_quote_bytes};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// `fieldValidation`, with kube-apiserver's default (`Warn`) for an absent or empty value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldValidation {
    /// Unknown and repeated fields are dropped silently.
    Ignore,
    /// Each is reported in a `Warning: 299 - "…"` response header.
    Warn,
    /// The request fails: 400 `strict decoding error: …`.
    Strict,
}

/// The validated `CreateOptions` of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateOptions {
    pub field_validation: FieldValidation,
}

/// `apimachinery/pkg/apis/meta/v1/validation.FieldManagerMaxLength`.
const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// One `field.Error` of `ValidateCreateOptions`: its field, its `ErrorBody()` and its cause
/// reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    field: &'static str,
    body: String,
    reason: &'static str,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body)
    }
}

/// The 422 kube-apiserver answers for invalid options: message and details as
/// `errors.NewInvalid(meta.k8s.io/CreateOptions, "", errs)` builds them.
pub fn invalid(errs: &[FieldError]) -> (String, StatusDetails) {
    let list = match errs {
        [one] => one.to_string(),
        many => format!(
            "[{}]",
            many.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let details = StatusDetails {
        group: "meta.k8s.io".into(),
        kind: "CreateOptions".into(),
        causes: errs
            .iter()
            .map(|e| StatusCause {
                reason: e.reason.into(),
                message: e.body.clone(),
                field: e.field.into(),
            })
            .collect(),
        ..StatusDetails::default()
    };
    (
        format!("CreateOptions.meta.k8s.io \"\" is invalid: {list}"),
        details,
    )
}

/// Parses and validates the create options in `query` (the request URI's query string, as
/// Go's `url.ParseQuery` reads it: `&`-separated, pairs with `;` or a bad escape dropped; a
/// value's bytes are kept even when they are not UTF-8, as Go's strings keep them).
/// `dryRun` takes every value, `fieldManager` and `fieldValidation` the first.
pub fn parse(query: Option<&str>) -> Result<CreateOptions, Vec<FieldError>> {
    let mut dry_run: Vec<Vec<u8>> = Vec::new();
    let mut field_manager: Option<Vec<u8>> = None;
    let mut field_validation: Option<Vec<u8>> = None;
    for pair in query.unwrap_or("").split('&') {
        if pair.is_empty() || pair.contains(';') {
            continue;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (Some(k), Some(v)) = (query_unescape(k), query_unescape(v)) else {
            continue;
        };
        match k.as_slice() {
            b"dryRun" => dry_run.push(v),
            b"fieldManager" => {
                field_manager.get_or_insert(v);
            }
            b"fieldValidation" => {
                field_validation.get_or_insert(v);
            }
            _ => {}
        }
    }
    let mut errs = Vec::new();
    // ValidateFieldManager: its length, then each character that is not printable.
    let manager = field_manager.unwrap_or_default();
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(FieldError {
            field: "fieldManager",
            body: format!("Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"),
            reason: "FieldValueTooLong",
        });
    }
    // Go ranges over the string's runes: a byte that is not UTF-8 is U+FFFD, which is
    // printable, so only valid characters can be refused; `i` is a byte offset, as in Go.
    let mut at = 0;
    for chunk in manager.utf8_chunks() {
        for (i, c) in chunk.valid().char_indices() {
            if !go_is_print(c) {
                errs.push(FieldError {
                    field: "fieldManager",
                    body: format!(
                        "Invalid value: {}: invalid character U+{:04X} (at position {})",
                        go_quote_bytes(&manager),
                        c as u32,
                        at + i
                    ),
                    reason: "FieldValueInvalid",
                });
            }
        }
        at += chunk.valid().len() + chunk.invalid().len();
    }
    // ValidateDryRun: every value must be `All`; the value is printed as Go's `%#v` of a
    // `[]string`.
    if dry_run.iter().any(|v| v != b"All") {
        errs.push(FieldError {
            field: "dryRun",
            body: format!(
                "Unsupported value: []string{{{}}}: supported values: \"All\"",
                dry_run
                    .iter()
                    .map(|v| go_quote_bytes(v))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            reason: "FieldValueNotSupported",
        });
    }
    let field_validation = match field_validation.as_deref().unwrap_or(b"") {
        b"" | b"Warn" => FieldValidation::Warn,
        b"Ignore" => FieldValidation::Ignore,
        b"Strict" => FieldValidation::Strict,
        other => {
            errs.push(FieldError {
                field: "fieldValidation",
                body: format!(
                    "Unsupported value: {}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                    go_quote_bytes(other)
                ),
                reason: "FieldValueNotSupported",
            });
            FieldValidation::Warn
        }
    };
    if errs.is_empty() {
        Ok(CreateOptions { field_validation })
    } else {
        Err(errs)
    }
}

/// Go's `url.QueryUnescape`: `+` is a space, `%XX` a byte; a bad escape gives `None` (Go drops
/// such a pair). The bytes need not be UTF-8.
fn query_unescape(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = b.get(i + 1..i + 3)?;
                let hi = (hex[0] as char).to_digit(16)?;
                let lo = (hex[1] as char).to_digit(16)?;
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Some(out)
}

/// The fields a decoded object has, as the strict decoder sees them.
pub enum Shape {
    /// Anything: a scalar, or a type with its own `UnmarshalJSON` (time, `fieldsV1`).
    Any,
    /// A struct: its JSON field names.
    Struct(&'static [(&'static str, &'static Shape)]),
    /// A map: any key, each value of the shape.
    Map(&'static Shape),
    /// A slice, each item of the shape.
    List(&'static Shape),
}

const STRINGS: Shape = Shape::Map(&Shape::Any);

const OWNER_REFERENCE: Shape = Shape::Struct(&[
    ("apiVersion", &Shape::Any),
    ("kind", &Shape::Any),
    ("name", &Shape::Any),
    ("uid", &Shape::Any),
    ("controller", &Shape::Any),
    ("blockOwnerDeletion", &Shape::Any),
]);

const MANAGED_FIELDS_ENTRY: Shape = Shape::Struct(&[
    ("manager", &Shape::Any),
    ("operation", &Shape::Any),
    ("apiVersion", &Shape::Any),
    ("time", &Shape::Any),
    ("fieldsType", &Shape::Any),
    ("fieldsV1", &Shape::Any),
    ("subresource", &Shape::Any),
]);

/// `metav1.ObjectMeta`.
const OBJECT_META: Shape = Shape::Struct(&[
    ("name", &Shape::Any),
    ("generateName", &Shape::Any),
    ("namespace", &Shape::Any),
    ("selfLink", &Shape::Any),
    ("uid", &Shape::Any),
    ("resourceVersion", &Shape::Any),
    ("generation", &Shape::Any),
    ("creationTimestamp", &Shape::Any),
    ("deletionTimestamp", &Shape::Any),
    ("deletionGracePeriodSeconds", &Shape::Any),
    ("labels", &STRINGS),
    ("annotations", &STRINGS),
    ("ownerReferences", &Shape::List(&OWNER_REFERENCE)),
    ("finalizers", &Shape::Any),
    ("managedFields", &Shape::List(&MANAGED_FIELDS_ENTRY)),
]);

/// `authentication.k8s.io` `UserInfo` (v1 and v1beta1).
const USER_INFO: Shape = Shape::Struct(&[
    ("username", &Shape::Any),
    ("uid", &Shape::Any),
    ("groups", &Shape::Any),
    ("extra", &Shape::Map(&Shape::Any)),
]);

/// `TokenReview` (v1 and v1beta1 have the same fields).
pub const TOKEN_REVIEW: Shape = Shape::Struct(&[
    ("kind", &Shape::Any),
    ("apiVersion", &Shape::Any),
    ("metadata", &OBJECT_META),
    (
        "spec",
        &Shape::Struct(&[("token", &Shape::Any), ("audiences", &Shape::Any)]),
    ),
    (
        "status",
        &Shape::Struct(&[
            ("authenticated", &Shape::Any),
            ("user", &USER_INFO),
            ("audiences", &Shape::Any),
            ("error", &Shape::Any),
        ]),
    ),
]);

/// `SelfSubjectReview` (v1).
pub const SELF_SUBJECT_REVIEW: Shape = Shape::Struct(&[
    ("kind", &Shape::Any),
    ("apiVersion", &Shape::Any),
    ("metadata", &OBJECT_META),
    ("status", &Shape::Struct(&[("userInfo", &USER_INFO)])),
]);

/// sigs.k8s.io/json keeps at most this many strict errors.
const MAX_STRICT_ERRORS: usize = 100;

/// What the strict decoder finds in `body` read as `shape`: `unknown field "PATH"` and
/// `duplicate field "PATH"` texts in document order, each once, at most 100.
/// `struct_duplicates` is true when a repeated name is a struct field (not a map key): the
/// typed decoding refuses those whatever `fieldValidation` says (docs/compatibility.md).
/// A body that is not JSON gives what was found before the syntax error; the typed decoding
/// reports the error itself.
pub fn strict_errors(body: &[u8], shape: &'static Shape) -> StrictErrors {
    let mut found = StrictErrors::default();
    let mut path = String::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let _ = Walk {
        shape,
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut de);
    found
}

/// The result of [`strict_errors`].
#[derive(Debug, Default)]
pub struct StrictErrors {
    pub errors: Vec<String>,
    seen: HashSet<String>,
    pub struct_duplicates: bool,
}

impl StrictErrors {
    fn push(&mut self, kind: &str, path: &str, name: &str) {
        if self.errors.len() >= MAX_STRICT_ERRORS {
            return;
        }
        let full = if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        };
        let text = format!("{kind} {}", go_quote(&full));
        if self.seen.insert(text.clone()) {
            self.errors.push(text);
        }
    }

    /// The 400 message kube-apiserver gives for `fieldValidation=Strict`.
    pub fn message(&self) -> String {
        format!("strict decoding error: {}", self.errors.join(", "))
    }

    /// The same message naming only the repeated fields: the refusal of a repeated struct
    /// field under `Warn` or `Ignore`, where kube-apiserver would take the last value.
    pub fn duplicates_message(&self) -> String {
        let dups: Vec<&str> = self
            .errors
            .iter()
            .filter(|e| e.starts_with("duplicate field"))
            .map(String::as_str)
            .collect();
        format!("strict decoding error: {}", dups.join(", "))
    }
}

struct Walk<'p> {
    shape: &'static Shape,
    path: &'p mut String,
    found: &'p mut StrictErrors,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.shape {
            Shape::Any => d.deserialize_ignored_any(IgnoredAny).map(|_| ()),
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
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
        let item = match self.shape {
            Shape::List(item) => *item,
            _ => &Shape::Any,
        };
        let mut i = 0usize;
        loop {
            let len = self.path.len();
            self.path.push_str(&format!("[{i}]"));
            let next = seq.next_element_seed(Walk {
                shape: item,
                path: self.path,
                found: self.found,
            });
            self.path.truncate(len);
            if next?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let value_shape: &'static Shape = match self.shape {
                Shape::Struct(fields) => match fields.iter().find(|(name, _)| *name == key) {
                    Some((_, shape)) => {
                        if !seen.insert(key.clone()) {
                            self.found.push("duplicate field", self.path, &key);
                            self.found.struct_duplicates = true;
                        }
                        shape
                    }
                    None => {
                        self.found.push("unknown field", self.path, &key);
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                },
                Shape::Map(value) => {
                    if !seen.insert(key.clone()) {
                        self.found.push("duplicate field", self.path, &key);
                    }
                    value
                }
                _ => &Shape::Any,
            };
            let len = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(&key);
            let r = map.next_value_seed(Walk {
                shape: value_shape,
                path: self.path,
                found: self.found,
            });
            self.path.truncate(len);
            r?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_options_are_validated_as_kube_apiserver_does() {
        // (name, query, Ok(fieldValidation) or Err(the 422 message))
        let cases: &[(&str, Option<&str>, Result<FieldValidation, &str>)] = &[
            ("no query", None, Ok(FieldValidation::Warn)),
            (
                "empty fieldValidation",
                Some("fieldValidation="),
                Ok(FieldValidation::Warn),
            ),
            (
                "Strict",
                Some("fieldValidation=Strict"),
                Ok(FieldValidation::Strict),
            ),
            (
                "Ignore",
                Some("fieldValidation=Ignore"),
                Ok(FieldValidation::Ignore),
            ),
            (
                "first value wins",
                Some("fieldValidation=Ignore&fieldValidation=Nope"),
                Ok(FieldValidation::Ignore),
            ),
            (
                "dryRun=All",
                Some("dryRun=All&pretty=true"),
                Ok(FieldValidation::Warn),
            ),
            (
                "a field manager",
                Some("fieldManager=kubectl-create"),
                Ok(FieldValidation::Warn),
            ),
            (
                "a pair with ; is dropped",
                Some("dryRun=Bogus;x=1"),
                Ok(FieldValidation::Warn),
            ),
            (
                "a bad escape is dropped",
                Some("dryRun=%zz"),
                Ok(FieldValidation::Warn),
            ),
            (
                "lower-case strict",
                Some("fieldValidation=strict"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn""#,
                ),
            ),
            (
                "dryRun=Bogus",
                Some("dryRun=Bogus"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported values: "All""#,
                ),
            ),
            (
                "every dryRun value is printed",
                Some("dryRun=All&dryRun=&dryRun=a%22b"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "", "a\"b"}: supported values: "All""#,
                ),
            ),
            (
                "bytes that are not UTF-8 are kept and quoted as Go quotes them",
                Some("dryRun=%FF&fieldValidation=a%C3"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: [dryRun: Unsupported value: []string{"\xff"}: supported values: "All", fieldValidation: Unsupported value: "a\xc3": supported values: "", "Ignore", "Strict", "Warn"]"#,
                ),
            ),
            (
                "a field manager that is not UTF-8 is printable (U+FFFD) in Go",
                Some("fieldManager=m%FF%FEx"),
                Ok(FieldValidation::Warn),
            ),
            (
                "a field manager's positions are byte offsets past bytes that are not UTF-8",
                Some("fieldManager=%FF%E2%80%8B"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "\xff\u200b": invalid character U+200B (at position 1)"#,
                ),
            ),
            (
                "several errors, in Go's order",
                Some("fieldValidation=x&dryRun=y&fieldManager=a%00b"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: [fieldManager: Invalid value: "a\x00b": invalid character U+0000 (at position 1), dryRun: Unsupported value: []string{"y"}: supported values: "All", fieldValidation: Unsupported value: "x": supported values: "", "Ignore", "Strict", "Warn"]"#,
                ),
            ),
        ];
        for (name, query, want) in cases {
            let got = parse(*query)
                .map(|o| o.field_validation)
                .map_err(|e| invalid(&e).0);
            assert_eq!(
                got.as_ref().copied().map_err(String::as_str),
                *want,
                "{name}"
            );
        }
        let long = format!("fieldManager={}", "m".repeat(129));
        let (message, details) = invalid(&parse(Some(&long)).unwrap_err());
        assert_eq!(
            message,
            r#"CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes"#
        );
        assert_eq!(
            serde_json::to_value(&details).unwrap(),
            serde_json::json!({"group": "meta.k8s.io", "kind": "CreateOptions", "causes": [
                {"reason": "FieldValueTooLong", "message": "Too long: may not be more than 128 bytes", "field": "fieldManager"}
            ]})
        );
        assert!(parse(Some(&format!("fieldManager={}", "m".repeat(128)))).is_ok());
    }

    #[test]
    fn strict_errors_name_paths_as_the_strict_decoder_does() {
        // (name, body, errors, a repeated struct field)
        let cases: &[(&str, &str, &[&str], bool)] = &[
            (
                "known fields only",
                r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","metadata":{"name":"x","labels":{"a":"b"}},"spec":{"token":"t","audiences":["a"]}}"#,
                &[],
                false,
            ),
            (
                "top level",
                r#"{"spec":{"token":"t"},"sepc":{}}"#,
                &[r#"unknown field "sepc""#],
                false,
            ),
            (
                "nested, value not walked",
                r#"{"spec":{"token":"t","tokn":{"x":1}}}"#,
                &[r#"unknown field "spec.tokn""#],
                false,
            ),
            (
                "case matters",
                r#"{"Spec":{}}"#,
                &[r#"unknown field "Spec""#],
                false,
            ),
            (
                "struct field repeated",
                r#"{"spec":{"token":"a","token":"b"}}"#,
                &[r#"duplicate field "spec.token""#],
                true,
            ),
            (
                "map key repeated",
                r#"{"metadata":{"labels":{"a":"1","a":"2"}}}"#,
                &[r#"duplicate field "metadata.labels.a""#],
                false,
            ),
            (
                "list items",
                r#"{"metadata":{"ownerReferences":[{"name":"a"},{"nme":"b"}]}}"#,
                &[r#"unknown field "metadata.ownerReferences[1].nme""#],
                false,
            ),
            (
                "extra values are free",
                r#"{"status":{"user":{"extra":{"k":["v"],"k":["w"]},"usr":1}}}"#,
                &[
                    r#"duplicate field "status.user.extra.k""#,
                    r#"unknown field "status.user.usr""#,
                ],
                false,
            ),
            (
                "each error once, document order",
                r#"{"b":1,"a":1,"b":2}"#,
                &[r#"unknown field "b""#, r#"unknown field "a""#],
                false,
            ),
            (
                "null struct",
                r#"{"spec":null,"metadata":null}"#,
                &[],
                false,
            ),
            ("not an object", r#"[1,2]"#, &[], false),
            (
                "escaped name",
                r#"{"\u00e9\"x":1}"#,
                &[r#"unknown field "é\"x""#],
                false,
            ),
        ];
        for (name, body, want, dup) in cases {
            let got = strict_errors(body.as_bytes(), &TOKEN_REVIEW);
            assert_eq!(got.errors, *want, "{name}");
            assert_eq!(got.struct_duplicates, *dup, "{name}");
        }
        let ssr = strict_errors(
            br#"{"status":{"userInfo":{"username":"x","name":"y"}},"spec":{}}"#,
            &SELF_SUBJECT_REVIEW,
        );
        assert_eq!(
            ssr.message(),
            r#"strict decoding error: unknown field "status.userInfo.name", unknown field "spec""#
        );
        let many: String = (0..150).map(|i| format!("\"f{i}\":1,")).collect();
        let capped = strict_errors(
            format!("{{{many}\"kind\":\"TokenReview\"}}").as_bytes(),
            &TOKEN_REVIEW,
        );
        assert_eq!(capped.errors.len(), 100);
        assert_eq!(capped.errors[99], r#"unknown field "f99""#);
    }
}
