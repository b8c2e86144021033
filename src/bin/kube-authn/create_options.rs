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
/// Go's `URL.Query()` reads it, [`kube_authn::api::go_query_pairs`]: a value's bytes are kept
/// even when they are not UTF-8, as Go's strings keep them).
/// `dryRun` takes every value, `fieldManager` and `fieldValidation` the first.
pub fn parse(query: Option<&str>) -> Result<CreateOptions, Vec<FieldError>> {
    let mut dry_run: Vec<Vec<u8>> = Vec::new();
    let mut field_manager: Option<Vec<u8>> = None;
    let mut field_validation: Option<Vec<u8>> = None;
    for (k, v) in kube_authn::api::go_query_pairs(query.unwrap_or("")) {
        match k.as_ref() {
            b"dryRun" => dry_run.push(v.into_owned()),
            b"fieldManager" => {
                field_manager.get_or_insert(v.into_owned());
            }
            b"fieldValidation" => {
                field_validation.get_or_insert(v.into_owned());
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
    // Each error quotes the whole value, so Go's answer grows with the square of its length
    // (gigabytes for a 21 000-character value, the longest a URI can carry): past the length
    // limit, "Too long" alone is the answer (fail closed: a 422 either way).
    let mut at = 0;
    let chunks = (manager.len() <= FIELD_MANAGER_MAX_LENGTH).then(|| manager.utf8_chunks());
    for chunk in chunks.into_iter().flatten() {
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
    // ValidateDryRun: every value must be `All`; the value, a `[]string`, is printed as
    // `json.Marshal` writes it (apimachinery's field/errors.go).
    if dry_run.iter().any(|v| v != b"All") {
        errs.push(FieldError {
            field: "dryRun",
            body: format!(
                "Unsupported value: {}: supported values: \"All\"",
                go_json_string_list(&dry_run)
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

/// Go's `json.Marshal` of a `[]string` whose strings are bytes: compact, with Go's escapes
/// ([`kube_authn::api::go_json_escapes`]), and each byte that is not part of valid UTF-8
/// written as the escape `\ufffd` (one per byte, as Go's encoder writes it; a valid U+FFFD
/// stays as it is).
fn go_json_string_list(values: &[Vec<u8>]) -> String {
    let mut out = String::from("[");
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for chunk in value.utf8_chunks() {
            let quoted = kube_authn::api::go_json_escapes(
                serde_json::to_vec(chunk.valid()).unwrap_or_default(),
            );
            // serde_json writes valid UTF-8 between the quotes.
            if let Some(inner) = quoted.get(1..quoted.len().saturating_sub(1)) {
                out.push_str(&String::from_utf8_lossy(inner));
            }
            for _ in chunk.invalid() {
                out.push_str("\\ufffd");
            }
        }
        out.push('"');
    }
    out.push(']');
    out
}

/// The fields a decoded object has, as the strict decoder sees them, with the Go types the
/// typed decoding (sigs.k8s.io/json, encoding/json's rules) fills: a value of the wrong JSON
/// type is Go's `json: cannot unmarshal …` error, a time Go's `time.Parse` error.
pub enum Shape {
    /// Anything: `apiVersion` and `kind` (read before, [`crate::app`]'s kind check) and
    /// `fieldsV1` (a `metav1.FieldsV1` keeps any JSON).
    Any,
    /// A Go string type, as `reflect` names it (`string`, `types.UID`).
    Str(&'static str),
    /// `bool` (or `*bool`).
    Bool,
    /// `int64` (or `*int64`).
    Int64,
    /// `metav1.Time` or `*metav1.Time`: `null`, or a string `time.Parse(time.RFC3339, …)` reads.
    Time,
    /// A struct: its Go type (`v1.ObjectMeta`) and JSON field names.
    Struct(&'static str, &'static [(&'static str, &'static Shape)]),
    /// A map: its Go type; any key, each value of the shape.
    Map(&'static str, &'static Shape),
    /// A slice: its Go type, each item of the shape.
    List(&'static str, &'static Shape),
}

const STRING: Shape = Shape::Str("string");
const STRINGS: Shape = Shape::List("[]string", &STRING);
const STRING_MAP: Shape = Shape::Map("map[string]string", &STRING);

const OWNER_REFERENCE: Shape = Shape::Struct(
    "v1.OwnerReference",
    &[
        ("apiVersion", &STRING),
        ("kind", &STRING),
        ("name", &STRING),
        ("uid", &Shape::Str("types.UID")),
        ("controller", &Shape::Bool),
        ("blockOwnerDeletion", &Shape::Bool),
    ],
);

const MANAGED_FIELDS_ENTRY: Shape = Shape::Struct(
    "v1.ManagedFieldsEntry",
    &[
        ("manager", &STRING),
        ("operation", &Shape::Str("v1.ManagedFieldsOperationType")),
        ("apiVersion", &STRING),
        ("time", &Shape::Time),
        ("fieldsType", &STRING),
        ("fieldsV1", &Shape::Any),
        ("subresource", &STRING),
    ],
);

/// `metav1.ObjectMeta`.
const OBJECT_META: Shape = Shape::Struct(
    "v1.ObjectMeta",
    &[
        ("name", &STRING),
        ("generateName", &STRING),
        ("namespace", &STRING),
        ("selfLink", &STRING),
        ("uid", &Shape::Str("types.UID")),
        ("resourceVersion", &STRING),
        ("generation", &Shape::Int64),
        ("creationTimestamp", &Shape::Time),
        ("deletionTimestamp", &Shape::Time),
        ("deletionGracePeriodSeconds", &Shape::Int64),
        ("labels", &STRING_MAP),
        ("annotations", &STRING_MAP),
        (
            "ownerReferences",
            &Shape::List("[]v1.OwnerReference", &OWNER_REFERENCE),
        ),
        ("finalizers", &STRINGS),
        (
            "managedFields",
            &Shape::List("[]v1.ManagedFieldsEntry", &MANAGED_FIELDS_ENTRY),
        ),
    ],
);

/// A TokenReview of one version (`v1`, `v1beta1`: the same fields, the package in the Go type
/// names).
macro_rules! token_review {
    ($v:literal) => {
        Shape::Struct(
            concat!($v, ".TokenReview"),
            &[
                ("kind", &Shape::Any),
                ("apiVersion", &Shape::Any),
                ("metadata", &OBJECT_META),
                (
                    "spec",
                    &Shape::Struct(
                        concat!($v, ".TokenReviewSpec"),
                        &[("token", &STRING), ("audiences", &STRINGS)],
                    ),
                ),
                (
                    "status",
                    &Shape::Struct(
                        concat!($v, ".TokenReviewStatus"),
                        &[
                            ("authenticated", &Shape::Bool),
                            ("user", &user_info!($v)),
                            ("audiences", &STRINGS),
                            ("error", &STRING),
                        ],
                    ),
                ),
            ],
        )
    };
}

/// `authentication.k8s.io` `UserInfo` of one version.
macro_rules! user_info {
    ($v:literal) => {
        Shape::Struct(
            concat!($v, ".UserInfo"),
            &[
                ("username", &STRING),
                ("uid", &STRING),
                ("groups", &STRINGS),
                (
                    "extra",
                    &Shape::Map(
                        concat!("map[string]", $v, ".ExtraValue"),
                        &Shape::List(concat!($v, ".ExtraValue"), &STRING),
                    ),
                ),
            ],
        )
    };
}

/// `TokenReview` (v1).
pub const TOKEN_REVIEW: Shape = token_review!("v1");

/// `TokenReview` (v1beta1).
pub const TOKEN_REVIEW_V1BETA1: Shape = token_review!("v1beta1");

/// `SelfSubjectReview` (v1).
pub const SELF_SUBJECT_REVIEW: Shape = Shape::Struct(
    "v1.SelfSubjectReview",
    &[
        ("kind", &Shape::Any),
        ("apiVersion", &Shape::Any),
        ("metadata", &OBJECT_META),
        (
            "status",
            &Shape::Struct(
                "v1.SelfSubjectReviewStatus",
                &[("userInfo", &user_info!("v1"))],
            ),
        ),
    ],
);

/// sigs.k8s.io/json keeps at most this many strict errors.
const MAX_STRICT_ERRORS: usize = 100;

/// What the strict decoder finds in `body` read as `shape`: `unknown field "PATH"` and
/// `duplicate field "PATH"` texts in document order, each once, at most 100.
/// `struct_duplicates` is true when a repeated name is a struct field (not a map key): the
/// typed decoding refuses those whatever `fieldValidation` says (docs/compatibility.md).
/// The typed decoding's own error, Go's text, is `decode_error`.
/// A body that is not JSON gives what was found before the syntax error; the typed decoding
/// reports the error itself.
pub fn strict_errors(body: &[u8], shape: &'static Shape) -> StrictErrors {
    let mut found = StrictErrors::default();
    let mut path = String::new();
    let mut go_field = String::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let _ = Walk {
        shape,
        path: &mut path,
        go_struct: "",
        go_field: &mut go_field,
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
    /// The first value of the wrong JSON type (encoding/json keeps the first and goes on).
    type_error: Option<String>,
    /// An error that ends Go's decoding at once (a time's `UnmarshalJSON`): it wins over a
    /// type error found before it.
    fatal: Option<String>,
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

    /// The error of the typed decoding (Go's text, without the create handler's prefix), if
    /// the body decodes into the Go type with one.
    pub fn decode_error(&self) -> Option<&str> {
        self.fatal.as_deref().or(self.type_error.as_deref())
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
    /// The strict decoder's path (`metadata.ownerReferences[1].x`, map keys included).
    path: &'p mut String,
    /// encoding/json's error context: the name of the struct whose field is being decoded,
    /// and the field names from the top (no indexes, no map keys).
    go_struct: &'static str,
    go_field: &'p mut String,
    found: &'p mut StrictErrors,
}

impl Walk<'_> {
    /// encoding/json's `UnmarshalTypeError` text: `what` (`number`, `string`, …, or `number
    /// 1.5` for an integer field) into the Go type `go_type`.
    fn type_error(&self, what: &str, go_type: &str) -> String {
        if self.go_struct.is_empty() && self.go_field.is_empty() {
            format!("json: cannot unmarshal {what} into Go value of type {go_type}")
        } else {
            format!(
                "json: cannot unmarshal {what} into Go struct field {}.{} of type {go_type}",
                self.go_struct, self.go_field
            )
        }
    }

    fn save(&mut self, what: &str, go_type: &str) {
        if self.found.type_error.is_none() && self.found.fatal.is_none() {
            self.found.type_error = Some(self.type_error(what, go_type));
        }
    }

    /// A scalar or a time, read whole: its JSON type decides.
    fn leaf(mut self, raw: &str) {
        if self.found.fatal.is_some() {
            return;
        }
        let what = match raw.as_bytes().first() {
            Some(b'n') => return,
            Some(b'"') => "string",
            Some(b't' | b'f') => "bool",
            Some(b'{') => "object",
            Some(b'[') => "array",
            _ => "number",
        };
        match self.shape {
            Shape::Str(_) if what == "string" => {}
            Shape::Str(go_type) => self.save(what, go_type),
            Shape::Bool if what == "bool" => {}
            Shape::Bool => self.save(what, "bool"),
            // strconv.ParseInt(literal, 10, 64), as encoding/json reads an integer.
            Shape::Int64 if what == "number" && raw.parse::<i64>().is_err() => {
                self.save(&format!("number {raw}"), "int64");
            }
            Shape::Int64 if what == "number" => {}
            Shape::Int64 => self.save(what, "int64"),
            // metav1.Time.UnmarshalJSON: json.Unmarshal into a string (its error gets the
            // field's context), then time.Parse; either error ends the decoding.
            Shape::Time if what == "string" => {
                let value: String = serde_json::from_str(raw).unwrap_or_default();
                if let Err(e) = go_parse_rfc3339(value.as_bytes()) {
                    self.found.fatal = Some(e);
                }
            }
            Shape::Time => self.found.fatal = Some(self.type_error(what, "string")),
            _ => {}
        }
    }

    fn go_type(&self) -> &'static str {
        match self.shape {
            Shape::Struct(t, _) | Shape::Map(t, _) | Shape::List(t, _) => t,
            _ => "",
        }
    }

    /// A struct's name as `reflect.Type.Name` gives it (`ObjectMeta`).
    fn struct_name(&self) -> &'static str {
        let t = self.go_type();
        t.rsplit_once('.').map_or(t, |(_, name)| name)
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.shape {
            Shape::Any => d.deserialize_ignored_any(IgnoredAny).map(|_| ()),
            Shape::Str(_) | Shape::Bool | Shape::Int64 | Shape::Time => {
                let raw = <Box<serde_json::value::RawValue> as serde::Deserialize>::deserialize(d)?;
                self.leaf(raw.get());
                Ok(())
            }
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(mut self, _: bool) -> Result<(), E> {
        let t = self.go_type();
        self.save("bool", t);
        Ok(())
    }
    fn visit_i64<E>(mut self, _: i64) -> Result<(), E> {
        let t = self.go_type();
        self.save("number", t);
        Ok(())
    }
    fn visit_u64<E>(mut self, _: u64) -> Result<(), E> {
        let t = self.go_type();
        self.save("number", t);
        Ok(())
    }
    fn visit_f64<E>(mut self, _: f64) -> Result<(), E> {
        let t = self.go_type();
        self.save("number", t);
        Ok(())
    }
    fn visit_str<E>(mut self, _: &str) -> Result<(), E> {
        let t = self.go_type();
        self.save("string", t);
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let item = match self.shape {
            Shape::List(_, item) => *item,
            _ => {
                let t = self.go_type();
                self.save("array", t);
                &Shape::Any
            }
        };
        let mut i = 0usize;
        loop {
            let len = self.path.len();
            self.path.push_str(&format!("[{i}]"));
            let next = seq.next_element_seed(Walk {
                shape: item,
                path: self.path,
                go_struct: self.go_struct,
                go_field: self.go_field,
                found: self.found,
            });
            self.path.truncate(len);
            if next?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        if matches!(self.shape, Shape::List(..)) {
            let t = self.go_type();
            self.save("object", t);
        }
        // Inside a struct, encoding/json names the struct and adds each field to the path.
        let in_struct = matches!(self.shape, Shape::Struct(..));
        let go_struct = if in_struct {
            self.struct_name()
        } else {
            self.go_struct
        };
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let value_shape: &'static Shape = match self.shape {
                Shape::Struct(_, fields) => match fields.iter().find(|(name, _)| *name == key) {
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
                Shape::Map(_, value) => {
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
            let go_len = self.go_field.len();
            if in_struct {
                if !self.go_field.is_empty() {
                    self.go_field.push('.');
                }
                self.go_field.push_str(&key);
            }
            let r = map.next_value_seed(Walk {
                shape: value_shape,
                path: self.path,
                go_struct,
                go_field: self.go_field,
                found: self.found,
            });
            self.path.truncate(len);
            self.go_field.truncate(go_len);
            r?;
        }
        Ok(())
    }
}

/// Go's `time.Parse(time.RFC3339, value)` (Go 1.26 `time/format.go`): `Ok` when Go reads a
/// time, else its `ParseError` text (`parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot
/// parse "x" as "2006"`, `parsing time "…": month out of range`, …). Only the layout's
/// elements are implemented: year, `-`, month, `-`, day, `T`, hour, `:`, minute, `:`, second
/// (with a fraction the layout does not name, `.` or `,`), `Z` or `±hh:mm`.
pub fn go_parse_rfc3339(value: &[u8]) -> Result<(), String> {
    const LAYOUT: &[u8] = b"2006-01-02T15:04:05Z07:00";
    let cannot = |elem: &[u8], layout_elem: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            go_time_quote(value),
            go_time_quote(LAYOUT),
            go_time_quote(elem),
            go_time_quote(layout_elem.as_bytes())
        )
    };
    let message = |m: &str| format!("parsing time {}{m}", go_time_quote(value));
    let out_of_range = |what: &str| message(&format!(": {what} out of range"));
    let digit = |s: &[u8], i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    // getnum: one or two digits (two when `fixed`).
    let getnum = |s: &[u8], fixed: bool| -> Option<(u32, usize)> {
        if !digit(s, 0) {
            return None;
        }
        if !digit(s, 1) {
            return (!fixed).then(|| (u32::from(s[0] - b'0'), 1));
        }
        Some((u32::from(s[0] - b'0') * 10 + u32::from(s[1] - b'0'), 2))
    };
    let skip = |s: &[u8], c: u8| -> Result<usize, String> {
        if s.first() == Some(&c) {
            Ok(1)
        } else {
            Err(cannot(s, std::str::from_utf8(&[c]).unwrap_or("")))
        }
    };
    let mut rest = value;
    // 2006
    if rest.len() < 4 || !digit(rest, 0) || !rest[..4].iter().all(u8::is_ascii_digit) {
        return Err(cannot(rest, "2006"));
    }
    let year: u32 = rest[..4]
        .iter()
        .fold(0, |n, d| n * 10 + u32::from(d - b'0'));
    rest = &rest[4..];
    rest = &rest[skip(rest, b'-')?..];
    // 01
    let Some((month, n)) = getnum(rest, true) else {
        return Err(cannot(rest, "01"));
    };
    if !(1..=12).contains(&month) {
        return Err(out_of_range("month"));
    }
    rest = &rest[n..];
    rest = &rest[skip(rest, b'-')?..];
    // 02 (checked against the month at the end)
    let Some((day, n)) = getnum(rest, true) else {
        return Err(cannot(rest, "02"));
    };
    rest = &rest[n..];
    rest = &rest[skip(rest, b'T')?..];
    // 15
    let Some((hour, n)) = getnum(rest, false) else {
        return Err(cannot(rest, "15"));
    };
    if hour >= 24 {
        return Err(out_of_range("hour"));
    }
    rest = &rest[n..];
    rest = &rest[skip(rest, b':')?..];
    // 04
    let Some((minute, n)) = getnum(rest, true) else {
        return Err(cannot(rest, "04"));
    };
    if minute >= 60 {
        return Err(out_of_range("minute"));
    }
    rest = &rest[n..];
    rest = &rest[skip(rest, b':')?..];
    // 05, and a fraction the layout does not have
    let Some((second, n)) = getnum(rest, true) else {
        return Err(cannot(rest, "05"));
    };
    if second >= 60 {
        return Err(out_of_range("second"));
    }
    rest = &rest[n..];
    if rest.len() >= 2 && matches!(rest[0], b'.' | b',') && digit(rest, 1) {
        let n = 2 + rest[2..].iter().take_while(|b| b.is_ascii_digit()).count();
        rest = &rest[n..];
    }
    // Z07:00
    if rest.first() == Some(&b'Z') {
        rest = &rest[1..];
    } else {
        if rest.len() < 6 || rest[3] != b':' {
            return Err(cannot(rest, "Z07:00"));
        }
        let hh = getnum(&rest[1..3], true);
        let mm = hh.and_then(|_| getnum(&rest[4..6], true));
        let (hr, mi) = (hh.map_or(0, |h| h.0), mm.map_or(0, |m| m.0));
        // Go sets the range error for the hour, then for the minute (the later wins), and
        // reports it before a bad digit or sign.
        if mi > 60 {
            return Err(out_of_range("time zone offset minute"));
        }
        if hr > 24 {
            return Err(out_of_range("time zone offset hour"));
        }
        if mm.is_none() || !matches!(rest[0], b'+' | b'-') {
            return Err(cannot(rest, "Z07:00"));
        }
        rest = &rest[6..];
    }
    if !rest.is_empty() {
        return Err(message(&format!(": extra text: {}", go_time_quote(rest))));
    }
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day < 1 || day > days {
        return Err(out_of_range("day"));
    }
    Ok(())
}

/// The `time` package's `quote`: `"` and `\` escaped, and every byte of a character below
/// space or outside ASCII (or not UTF-8) written as `\xNN`.
fn go_time_quote(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &b in s {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..0x80 => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
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
                    r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All""#,
                ),
            ),
            (
                "every dryRun value is printed",
                Some("dryRun=All&dryRun=&dryRun=a%22b"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["All","","a\"b"]: supported values: "All""#,
                ),
            ),
            (
                "dryRun values are JSON with Go's HTML escapes",
                Some("dryRun=a%22b&dryRun=%3C&dryRun=%E2%80%A8%26%3E%5C%01"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["a\"b","\u003c","\u2028\u0026\u003e\\\u0001"]: supported values: "All""#,
                ),
            ),
            (
                "an empty dryRun value",
                Some("dryRun="),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: [""]: supported values: "All""#,
                ),
            ),
            (
                "each byte that is not UTF-8 is the escape \\ufffd, a valid U+FFFD is kept",
                Some("dryRun=%E2%82&dryRun=%EF%BF%BD%FF"),
                Err(
                    "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"\\ufffd\\ufffd\",\"\u{fffd}\\ufffd\"]: supported values: \"All\"",
                ),
            ),
            (
                "bytes that are not UTF-8: \\ufffd in JSON, kept and quoted by %q",
                Some("dryRun=%FF&fieldValidation=a%C3"),
                Err(
                    r#"CreateOptions.meta.k8s.io "" is invalid: [dryRun: Unsupported value: ["\ufffd"]: supported values: "All", fieldValidation: Unsupported value: "a\xc3": supported values: "", "Ignore", "Strict", "Warn"]"#,
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
                    r#"CreateOptions.meta.k8s.io "" is invalid: [fieldManager: Invalid value: "a\x00b": invalid character U+0000 (at position 1), dryRun: Unsupported value: ["y"]: supported values: "All", fieldValidation: Unsupported value: "x": supported values: "", "Ignore", "Strict", "Warn"]"#,
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
        // Unprintable characters: one error each (quoting the value) up to the limit; past
        // it, "Too long" alone, so the answer stays small however long the value is.
        for (n, errors) in [(128, 128), (129, 1), (21_000, 1)] {
            let query = format!("fieldManager={}", "%01".repeat(n));
            let errs = parse(Some(&query)).unwrap_err();
            assert_eq!(errs.len(), errors, "{n} characters");
            assert!(invalid(&errs).0.len() < 128 * 1100, "{n} characters");
        }
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

    /// Go 1.26's `time.Parse(time.RFC3339, …)` outcomes, printed by Go for each input.
    #[test]
    fn go_parse_rfc3339_is_time_parse() {
        const L: &str = r#"as "2006-01-02T15:04:05Z07:00""#;
        let cannot = |v: &str, elem: &str, layout: &str| {
            format!(r#"parsing time "{v}" {L}: cannot parse "{elem}" as "{layout}""#)
        };
        let cases: Vec<(&[u8], Result<(), String>)> = vec![
            (b"2020-01-02T03:04:05Z", Ok(())),
            (b"2020-01-02T03:04:05.123456789+05:30", Ok(())),
            (b"2020-01-02T3:04:05,5+24:00", Ok(())),
            (b"0000-01-01T00:00:00Z", Ok(())),
            (b"2024-02-29T00:00:00Z", Ok(())),
            (b"2000-02-29T00:00:00Z", Ok(())),
            (b"2020-01-01T00:00:00.123456789123Z", Ok(())),
            (b"garbage", Err(cannot("garbage", "garbage", "2006"))),
            (b"", Err(cannot("", "", "2006"))),
            (
                b"20a0-01-02T03:04:05Z",
                Err(cannot("20a0-01-02T03:04:05Z", "20a0-01-02T03:04:05Z", "2006")),
            ),
            (
                b"2020-1-02T03:04:05Z",
                Err(cannot("2020-1-02T03:04:05Z", "1-02T03:04:05Z", "01")),
            ),
            (
                b"2020-01-02 03:04:05Z",
                Err(cannot("2020-01-02 03:04:05Z", " 03:04:05Z", "T")),
            ),
            (b"2020-01-02T03:04", Err(cannot("2020-01-02T03:04", "", ":"))),
            (
                b"2020-01-02T03:04:05z",
                Err(cannot("2020-01-02T03:04:05z", "z", "Z07:00")),
            ),
            (
                b"2020-01-02T03:04:05.Z",
                Err(cannot("2020-01-02T03:04:05.Z", ".Z", "Z07:00")),
            ),
            (
                b"2020-01-02T03:04:05+01",
                Err(cannot("2020-01-02T03:04:05+01", "+01", "Z07:00")),
            ),
            (
                b"2020-01-02T03:04:05*01:00",
                Err(cannot("2020-01-02T03:04:05*01:00", "*01:00", "Z07:00")),
            ),
            (
                b"2020-01-01T00:00:00+0a:00",
                Err(cannot("2020-01-01T00:00:00+0a:00", "+0a:00", "Z07:00")),
            ),
            (
                b"2020-02-03T04:00:00+2500",
                Err(cannot("2020-02-03T04:00:00+2500", "+2500", "Z07:00")),
            ),
            (
                b"2020-13-45",
                Err(r#"parsing time "2020-13-45": month out of range"#.into()),
            ),
            (
                b"2023-00-01T00:00:00Z",
                Err(r#"parsing time "2023-00-01T00:00:00Z": month out of range"#.into()),
            ),
            (
                b"2023-02-29T00:00:00Z",
                Err(r#"parsing time "2023-02-29T00:00:00Z": day out of range"#.into()),
            ),
            (
                b"2023-01-00T00:00:00Z",
                Err(r#"parsing time "2023-01-00T00:00:00Z": day out of range"#.into()),
            ),
            (
                b"2020-02-03T24:00:00Z",
                Err(r#"parsing time "2020-02-03T24:00:00Z": hour out of range"#.into()),
            ),
            (
                b"2020-01-02T03:60:00Z",
                Err(r#"parsing time "2020-01-02T03:60:00Z": minute out of range"#.into()),
            ),
            (
                b"2020-01-02T03:04:60Z",
                Err(r#"parsing time "2020-01-02T03:04:60Z": second out of range"#.into()),
            ),
            (
                b"2020-01-02T03:04:05+01:61",
                Err(r#"parsing time "2020-01-02T03:04:05+01:61": time zone offset minute out of range"#.into()),
            ),
            (
                b"2020-01-01T00:00:00*25:00",
                Err(r#"parsing time "2020-01-01T00:00:00*25:00": time zone offset hour out of range"#.into()),
            ),
            (
                b"2020-01-01T00:00:00+25:61",
                Err(r#"parsing time "2020-01-01T00:00:00+25:61": time zone offset minute out of range"#.into()),
            ),
            (
                b"2020-02-03T04:00:00Zabc",
                Err(r#"parsing time "2020-02-03T04:00:00Zabc": extra text: "abc""#.into()),
            ),
            (
                "2023-01-01T00:00:00Z\u{e9}\u{fffd}".as_bytes(),
                Err(r#"parsing time "2023-01-01T00:00:00Z\xc3\xa9\xef\xbf\xbd": extra text: "\xc3\xa9\xef\xbf\xbd""#.into()),
            ),
            (
                "2020-\"\u{e9}\u{1}".as_bytes(),
                Err(cannot(r#"2020-\"\xc3\xa9\x01"#, r#"\"\xc3\xa9\x01"#, "01")),
            ),
            (b"\\x", Err(cannot(r"\\x", r"\\x", "2006"))),
        ];
        for (value, want) in cases {
            assert_eq!(
                go_parse_rfc3339(value),
                want,
                "{}",
                String::from_utf8_lossy(value)
            );
        }
    }

    /// The typed decoding's error, as sigs.k8s.io/json words it (texts printed by Go).
    #[test]
    fn decode_errors_are_encoding_jsons() {
        let cases: &[(&str, Option<&str>)] = &[
            (r#"{"metadata":{"uid":"u","generation":3}}"#, None),
            (
                r#"{"metadata":{"uid":5}}"#,
                Some(
                    "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID",
                ),
            ),
            (
                r#"{"metadata":{"uid":5,"creationTimestamp":5}}"#,
                Some(
                    "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string",
                ),
            ),
            (
                r#"{"status":{"user":{"extra":{"k":"v"}}}}"#,
                Some(
                    "json: cannot unmarshal string into Go struct field UserInfo.status.user.extra of type v1.ExtraValue",
                ),
            ),
            (
                r#"{"status":{"authenticated":"x"}}"#,
                Some(
                    "json: cannot unmarshal string into Go struct field TokenReviewStatus.status.authenticated of type bool",
                ),
            ),
            (r#"{"status":{"authenticated":null}}"#, None),
            (r#"{"unknown":{"uid":5}}"#, None),
        ];
        for (body, want) in cases {
            let found = strict_errors(body.as_bytes(), &TOKEN_REVIEW);
            assert_eq!(found.decode_error(), *want, "{body}");
        }
        let beta = strict_errors(
            br#"{"status":{"user":{"extra":{"k":"v"}}}}"#,
            &TOKEN_REVIEW_V1BETA1,
        );
        assert_eq!(
            beta.decode_error(),
            Some(
                "json: cannot unmarshal string into Go struct field UserInfo.status.user.extra of type v1beta1.ExtraValue"
            )
        );
    }
}
