//! The kind a review body declares, read and resolved as kube-apiserver's create handler does
//! before it decodes the body (k8s.io/apimachinery `runtime/serializer/json`: the meta factory's
//! `Interpret`, `gvkWithDefaults`, `UseOrCreateObject` on the scheme, the versioning codec's
//! conversion into the endpoint's internal type; k8s.io/apiserver `handlers/create.go`'s
//! `transformDecodeError`).

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::legacy_scheme::{INTERNAL_VERSION, go_type};

/// The group both reviews belong to.
const GROUP: &str = "authentication.k8s.io";

/// kube-apiserver's scheme, as its `NotRegisteredErr` names it (`runtime.NewScheme`'s call
/// site in `pkg/api/legacyscheme/scheme.go`).
const SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// What the meta factory's `Interpret` reads of a JSON body: `encoding/json` into a struct with
/// `apiVersion` and `kind` strings.
#[derive(Debug, PartialEq, Eq)]
pub enum Interpreted {
    /// A JSON object (or `null`, `is_null`), with its `apiVersion` and `kind` (empty when
    /// absent): member names matched as `encoding/json` matches them (case-insensitively,
    /// with Unicode simple folding: `\u212aind` is `kind`), the last one winning, `null`
    /// leaving the value as it was.
    Members {
        api_version: String,
        kind: String,
        is_null: bool,
    },
    /// `encoding/json`'s error for a body that is not an object or a member that is not a
    /// string (the first, in document order): `json: cannot unmarshal number into Go struct
    /// field .kind of type string`.
    TypeError(String),
    /// Not JSON serde_json reads (a syntax error, a string that is not UTF-8): left to the
    /// typed decoding, which reports it. Values are read raw or skipped (`RawValue`,
    /// `IgnoredAny`: serde_json keeps no depth limit there but needs no recursion either,
    /// memory stays within the 3 MiB body), and numbers are not parsed: `1e400`, beyond f64's
    /// range, is a number as for Go.
    Unreadable,
}

/// Reads `body` as [`Interpreted`], keeping only the two strings: every other value is
/// skipped without being built. A body nested deeper than Go's scanner allows is its error
/// ([`exceeded_max_depth`]), which `encoding/json` finds before anything is decoded.
pub fn interpret(body: &[u8]) -> Interpreted {
    if let Some(error) = exceeded_max_depth(body) {
        return Interpreted::TypeError(error);
    }
    match serde_json::from_slice::<TopLevel>(body) {
        Ok(TopLevel(Ok((api_version, kind, is_null)))) => Interpreted::Members {
            api_version,
            kind,
            is_null,
        },
        Ok(TopLevel(Err(text))) => Interpreted::TypeError(text),
        Err(_) => Interpreted::Unreadable,
    }
}

/// `encoding/json`'s scanner limit (`maxNestingDepth`): a value may be nested in at most this
/// many arrays and objects.
const MAX_NESTING_DEPTH: usize = 10_000;

/// `encoding/json`'s error for a body whose nesting passes [`MAX_NESTING_DEPTH`]: `invalid
/// character '[' exceeded max depth` (or `'{'`), which its `checkValid` finds before decoding
/// unless a syntax error comes first. One pass over the bytes (brackets inside strings do not
/// count), without recursion; only for a body that passes the limit is the part before the
/// bracket that passes it checked (serde_json skips values without recursion or a depth
/// limit), so that a syntax error before it is left to the typed decoding, as Go reports it
/// first.
fn exceeded_max_depth(body: &[u8]) -> Option<String> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut at = None;
    for (i, &b) in body.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    at = Some(i);
                    break;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let at = at?;
    // The bytes up to and with the bracket: valid JSON so far (only their end is missing) when
    // Go's scanner would push that bracket.
    match serde_json::from_slice::<IgnoredAny>(&body[..=at]) {
        Err(e) if e.classify() == serde_json::error::Category::Eof => Some(format!(
            "invalid character '{}' exceeded max depth",
            char::from(body[at])
        )),
        _ => None,
    }
}

/// The group, version and kind the serializer read from a body, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl Gvk {
    /// Go's `GroupVersion.String()`: `v1` for the core group, `group/version` otherwise.
    pub fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `transformDecodeError`'s prefix: `Pod in version "v1" cannot be handled as a
    /// TokenReview: `.
    pub fn cannot_be_handled(&self, endpoint_kind: &str) -> String {
        format!(
            "{} in version {} cannot be handled as a {endpoint_kind}: ",
            self.kind,
            kube_authn::jwt::go_quote(&self.version)
        )
    }
}

/// Why the create handler refuses a body before decoding it.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The serializer read no kind: the decoder's error, for `the object provided is
    /// unrecognized (must be of type <kind>): <error> (<summary>)`.
    Unrecognized(String),
    /// The whole 400 message.
    BadRequest(String),
}

/// What the create handler makes of a body declaring `api_version` and `kind` on the endpoint
/// for `endpoint_kind` in `authentication.k8s.io/<endpoint_version>`: `Ok` with what the
/// serializer read when the body is decoded as the endpoint's kind (its version is checked
/// after decoding: `the API version in the data (…) does not match …`), or the refusal:
///
/// * a group/version Go's `ParseGroupVersion` refuses (`a/b/c`): unrecognized;
/// * a group without a version (`foo/`): `Object 'apiVersion' is missing` (Go appends the whole
///   body, which can hold a token: left out here, docs/compatibility.md);
/// * a kind the scheme has no type for there: `no kind "Pod" is registered for version
///   "authentication.k8s.io/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"`;
/// * another registered kind: `converting (v1.Pod) to (authentication.TokenReview): unknown
///   conversion` (Go decodes the body into that type first, so a body that does not fit it gets
///   that type's decoding error there; not reproduced, docs/compatibility.md).
pub fn resolve(
    api_version: &str,
    kind: &str,
    endpoint_kind: &str,
    endpoint_version: &str,
) -> Result<Gvk, Refusal> {
    let (group, version) = parse_group_version(api_version).map_err(Refusal::Unrecognized)?;
    // gvkWithDefaults, with the endpoint's kind; then with the internal type's, which changes
    // nothing the first did not.
    let mut gvk = Gvk {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
    };
    if gvk.kind.is_empty() {
        gvk.kind = endpoint_kind.to_owned();
    }
    if gvk.version.is_empty() && (gvk.group.is_empty() || gvk.group == GROUP) {
        gvk.group = GROUP.to_owned();
        gvk.version = endpoint_version.to_owned();
    }
    let refuse =
        |gvk: &Gvk, error: &str| Refusal::BadRequest(gvk.cannot_be_handled(endpoint_kind) + error);
    if gvk.version.is_empty() {
        return Err(refuse(&gvk, "Object 'apiVersion' is missing"));
    }
    let ours = gvk.group == GROUP && gvk.kind == endpoint_kind;
    match go_type(&gvk.group, &gvk.version, &gvk.kind) {
        Some(_) if ours => Ok(gvk),
        Some(go) => Err(refuse(
            &gvk,
            &format!("converting ({go}) to (authentication.{endpoint_kind}): unknown conversion"),
        )),
        None => {
            let error = if gvk.version == INTERNAL_VERSION {
                format!(
                    "no kind {} is registered for the internal version of group {} in scheme {}",
                    kube_authn::jwt::go_quote(&gvk.kind),
                    kube_authn::jwt::go_quote(&gvk.group),
                    kube_authn::jwt::go_quote(SCHEME)
                )
            } else {
                format!(
                    "no kind {} is registered for version {} in scheme {}",
                    kube_authn::jwt::go_quote(&gvk.kind),
                    kube_authn::jwt::go_quote(&gvk.group_version()),
                    kube_authn::jwt::go_quote(SCHEME)
                )
            };
            Err(refuse(&gvk, &error))
        }
    }
}

/// Go's `schema.ParseGroupVersion`: `""` and `"/"` are empty, no `/` is a bare version, one
/// `/` splits, more is an error.
fn parse_group_version(gv: &str) -> Result<(&str, &str), String> {
    if gv.is_empty() || gv == "/" {
        return Ok(("", ""));
    }
    match gv.split_once('/') {
        None => Ok(("", gv)),
        Some((group, version)) if !version.contains('/') => Ok((group, version)),
        Some(_) => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// `encoding/json`'s name matching for a struct field whose JSON name is the ASCII `name`:
/// `bytes.EqualFold`, where besides ASCII case only U+212A (Kelvin sign) folds to `k` and U+017F
/// (long s) to `s`.
fn go_fold_eq(key: &str, name: &str) -> bool {
    let mut chars = key.chars();
    for n in name.bytes() {
        let Some(c) = chars.next() else {
            return false;
        };
        let same = match c {
            '\u{212a}' => n.eq_ignore_ascii_case(&b'k'),
            '\u{17f}' => n.eq_ignore_ascii_case(&b's'),
            c => c.is_ascii() && (c as u8).eq_ignore_ascii_case(&n),
        };
        if !same {
            return false;
        }
    }
    chars.next().is_none()
}

/// `Ok((apiVersion, kind, is_null))` or `encoding/json`'s type error.
struct TopLevel(Result<(String, String, bool), String>);

impl<'de> Deserialize<'de> for TopLevel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Read raw first: a number is then only checked for its syntax, not parsed (`1e400`
        // is out of f64's range, but valid JSON for Go, which reports its type).
        let raw = <&'de RawValue>::deserialize(deserializer)?;
        match json_type(raw) {
            "object" => serde_json::Deserializer::from_str(raw.get())
                .deserialize_map(TopVisitor)
                .map_err(de::Error::custom),
            "null" => Ok(TopLevel(Ok((String::new(), String::new(), true)))),
            what => Ok(not_an_object(what)),
        }
    }
}

/// What `encoding/json` calls the JSON value `raw` (its first byte tells).
fn json_type(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "bool",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// `json: cannot unmarshal <what> into Go value of type struct {…}`: the meta factory's struct.
fn not_an_object(what: &str) -> TopLevel {
    TopLevel(Err(format!(
        "json: cannot unmarshal {what} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
    )))
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = TopLevel;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
        let (mut api_version, mut kind) = (String::new(), String::new());
        let mut error: Option<String> = None;
        while let Some(member) = map.next_key::<Member>()? {
            let (slot, name) = match member {
                Member::ApiVersion => (&mut api_version, "apiVersion"),
                Member::Kind => (&mut kind, "kind"),
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            match map.next_value::<Text>()? {
                Text::Str(s) => *slot = s,
                Text::Null => {}
                Text::Other(what) => {
                    error.get_or_insert_with(|| {
                        format!("json: cannot unmarshal {what} into Go struct field .{name} of type string")
                    });
                }
            }
        }
        Ok(TopLevel(match error {
            Some(e) => Err(e),
            None => Ok((api_version, kind, false)),
        }))
    }
}

/// A member name, as `encoding/json` matches it to the meta factory's two fields.
enum Member {
    ApiVersion,
    Kind,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Member;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Member, E> {
                Ok(if go_fold_eq(key, "apiVersion") {
                    Member::ApiVersion
                } else if go_fold_eq(key, "kind") {
                    Member::Kind
                } else {
                    Member::Other
                })
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// The value of `apiVersion` or `kind`: a string, `null`, or what `encoding/json` calls the
/// value it cannot put in a string (the value skipped).
enum Text {
    Str(String),
    Null,
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Raw, as [`TopLevel`]: a number is not parsed, nor is a skipped value nested.
        let raw = <&'de RawValue>::deserialize(deserializer)?;
        match json_type(raw) {
            "string" => serde_json::from_str(raw.get())
                .map(Text::Str)
                .map_err(de::Error::custom),
            "null" => Ok(Text::Null),
            what => Ok(Text::Other(what)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(api_version: &str, kind: &str) -> Interpreted {
        Interpreted::Members {
            api_version: api_version.into(),
            kind: kind.into(),
            is_null: false,
        }
    }

    /// `encoding/json`'s nesting limit, as kube-apiserver's meta factory reports it (its
    /// answers, recorded from its handlers): 10 000 arrays and objects around a value in all,
    /// the top-level one included, are read; one more is the scanner's error, naming the
    /// bracket; brackets in strings do not count; a syntax error before the limit is Go's
    /// first error (left to the typed decoding here).
    #[test]
    fn nesting_beyond_10000_is_gos_max_depth_error() {
        let nested = |open: &str, close: &str, n: usize| open.repeat(n) + &close.repeat(n);
        let body = |n: usize| format!(r#"{{"spec":{{"token":"t"}},"x":{}}}"#, nested("[", "]", n));
        assert_eq!(interpret(body(9_999).as_bytes()), members("", ""));
        let depth_error =
            |c: char| Interpreted::TypeError(format!("invalid character '{c}' exceeded max depth"));
        assert_eq!(interpret(body(10_000).as_bytes()), depth_error('['));
        assert_eq!(interpret(body(20_000).as_bytes()), depth_error('['));
        let objects = format!(
            r#"{{"kind":"TokenReview","x":{}1{}}}"#,
            r#"{"a":"#.repeat(10_000),
            "}".repeat(10_000)
        );
        assert_eq!(interpret(objects.as_bytes()), depth_error('{'));
        assert_eq!(
            interpret(nested("[", "]", 10_000).as_bytes()),
            Interpreted::TypeError("json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }".into())
        );
        assert_eq!(
            interpret(nested("[", "]", 10_001).as_bytes()),
            depth_error('[')
        );
        // Unterminated: the depth is still passed first.
        assert_eq!(interpret("[".repeat(10_001).as_bytes()), depth_error('['));
        // In strings, escaped quotes included, brackets are text.
        let text = format!(r#"{{"x":"\"{}","kind":"K"}}"#, "[".repeat(20_000));
        assert_eq!(interpret(text.as_bytes()), members("", "K"));
        // A syntax error before the limit comes first.
        let broken = format!(
            r#"{{"spec":{{"token":"t",}},"x":{}}}"#,
            nested("[", "]", 10_001)
        );
        assert_eq!(interpret(broken.as_bytes()), Interpreted::Unreadable);
        let misplaced = format!(r#"{{"x":{}1[]}}"#, "[".repeat(9_999));
        assert_eq!(interpret(misplaced.as_bytes()), Interpreted::Unreadable);
    }

    /// What Go's `encoding/json` reads into the meta factory's struct (checked with Go 1.26).
    #[test]
    fn interpret_reads_what_encoding_json_reads() {
        let struct_error = |what: &str| {
            Interpreted::TypeError(format!(
                "json: cannot unmarshal {what} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
            ))
        };
        let field_error = |what: &str, field: &str| {
            Interpreted::TypeError(format!(
                "json: cannot unmarshal {what} into Go struct field .{field} of type string"
            ))
        };
        let deep = "[".repeat(200);
        let deep_kind = format!(r#"{{"kind":{}{}}}"#, "[".repeat(200), "]".repeat(200));
        let cases: Vec<(&str, Interpreted)> = vec![
            (r#"{"apiVersion":"v1","kind":"Pod"}"#, members("v1", "Pod")),
            ("{}", members("", "")),
            (
                r#"{"kind":"Pod","kind":"TokenReview"}"#,
                members("", "TokenReview"),
            ),
            (r#"{"kind":"Pod","kind":null}"#, members("", "Pod")),
            (
                r#"{"KIND":"Pod","Kind":"TokenReview"}"#,
                members("", "TokenReview"),
            ),
            (r#"{"\u212aind":"Pod"}"#, members("", "Pod")),
            (
                r#"{"APIVERSION":"v1","apiver\u017fion":"v2"}"#,
                members("v2", ""),
            ),
            (
                r#"{"kind ":"Pod","kinds":"Pod","apiVersion_":"v1"}"#,
                members("", ""),
            ),
            (r#"{"k\u0131nd":"Pod","\u0130kind":"Pod"}"#, members("", "")),
            (
                r#"{"kind":"Pod","x":[1,{"kind":"Other"}],"y":{"kind":"Other"}}"#,
                members("", "Pod"),
            ),
            (r#"{"kind":"a\u0000b\n"}"#, members("", "a\0b\n")),
            (
                "null",
                Interpreted::Members {
                    api_version: String::new(),
                    kind: String::new(),
                    is_null: true,
                },
            ),
            ("[0,0]", struct_error("array")),
            (r#""str""#, struct_error("string")),
            ("7", struct_error("number")),
            ("true", struct_error("bool")),
            (r#"{"KIND":7}"#, field_error("number", "kind")),
            (
                r#"{"kind":"Pod","x":1,"apiVersion":true}"#,
                field_error("bool", "apiVersion"),
            ),
            (
                r#"{"kind":[1],"apiVersion":{}}"#,
                field_error("array", "kind"),
            ),
            (
                r#"{"apiVersion":{"a":1},"kind":[1]}"#,
                field_error("object", "apiVersion"),
            ),
            // Numbers beyond f64's range are numbers; values nested deeper than serde_json's
            // recursion limit are read through.
            (
                r#"{"kind":1e400,"apiVersion":"authentication.k8s.io/v1"}"#,
                field_error("number", "kind"),
            ),
            (
                r#"{"apiVersion":-1e400}"#,
                field_error("number", "apiVersion"),
            ),
            ("1e400", struct_error("number")),
            (r#"{"x":-1E400,"kind":"Pod"}"#, members("", "Pod")),
            (&deep_kind, field_error("array", "kind")),
            // Syntax errors (Go reports them first, before any type error) and what serde_json
            // does not read are the typed decoding's.
            (r#"{"kind":7,}"#, Interpreted::Unreadable),
            (r#"{"kind":"Pod"} x"#, Interpreted::Unreadable),
            ("", Interpreted::Unreadable),
            (&deep, Interpreted::Unreadable),
        ];
        for (body, want) in cases {
            assert_eq!(interpret(body.as_bytes()), want, "{body}");
        }
    }

    /// Large bodies are read without building their values; the answer is the same.
    #[test]
    fn interpret_skips_large_values() {
        let mut body = String::from(r#"{"kind":"Pod","x":["#);
        body.push_str(&"0,".repeat(1_500_000));
        body.push_str(r#"0],"apiVersion":"v1"}"#);
        assert_eq!(interpret(body.as_bytes()), members("v1", "Pod"));
        let array = format!("[{}0]", "0,".repeat(1_500_000));
        assert!(matches!(
            interpret(array.as_bytes()),
            Interpreted::TypeError(t) if t.starts_with("json: cannot unmarshal array into Go value")
        ));
    }

    /// Go's answers, from kube-apiserver 1.37.2's scheme and create handler's decoder (the
    /// scheme's name as kube-apiserver's build prints it).
    #[test]
    fn resolve_gives_kube_apiservers_answers() {
        let not_registered = |prefix: &str, kind: &str, gv: &str| {
            Err(Refusal::BadRequest(format!(
                "{prefix}: no kind \"{kind}\" is registered for version \"{gv}\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
            )))
        };
        let conversion = |prefix: &str, go: &str, to: &str| {
            Err(Refusal::BadRequest(format!(
                "{prefix}: converting ({go}) to (authentication.{to}): unknown conversion"
            )))
        };
        let ok = |group: &str, version: &str, kind: &str| {
            Ok(Gvk {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
            })
        };
        let tr =
            |v: &str| format!("TokenReview in version \"{v}\" cannot be handled as a TokenReview");
        let cases = [
            ("", "", "TokenReview", "v1", ok(GROUP, "v1", "TokenReview")),
            ("/", "", "TokenReview", "v1", ok(GROUP, "v1", "TokenReview")),
            ("authentication.k8s.io/", "", "TokenReview", "v1beta1", ok(GROUP, "v1beta1", "TokenReview")),
            ("authentication.k8s.io/v1beta1", "", "TokenReview", "v1", ok(GROUP, "v1beta1", "TokenReview")),
            ("authentication.k8s.io/__internal", "", "TokenReview", "v1", ok(GROUP, "__internal", "TokenReview")),
            ("authentication.k8s.io/v1alpha1", "", "SelfSubjectReview", "v1", ok(GROUP, "v1alpha1", "SelfSubjectReview")),
            (
                "",
                "Pod",
                "TokenReview",
                "v1",
                not_registered("Pod in version \"v1\" cannot be handled as a TokenReview", "Pod", "authentication.k8s.io/v1"),
            ),
            (
                "",
                "Pod",
                "TokenReview",
                "v1beta1",
                not_registered("Pod in version \"v1beta1\" cannot be handled as a TokenReview", "Pod", "authentication.k8s.io/v1beta1"),
            ),
            ("v1", "", "TokenReview", "v1", not_registered(&tr("v1"), "TokenReview", "v1")),
            ("/v1", "TokenReview", "TokenReview", "v1", not_registered(&tr("v1"), "TokenReview", "v1")),
            ("foo/v9", "", "TokenReview", "v1", not_registered(&tr("v9"), "TokenReview", "foo/v9")),
            (
                "authentication.k8s.io",
                "TokenReview",
                "TokenReview",
                "v1",
                not_registered(&tr("authentication.k8s.io"), "TokenReview", "authentication.k8s.io"),
            ),
            (
                "authentication.k8s.io/v1alpha1",
                "",
                "TokenReview",
                "v1",
                not_registered(&tr("v1alpha1"), "TokenReview", "authentication.k8s.io/v1alpha1"),
            ),
            (
                "v1",
                "Pod",
                "TokenReview",
                "v1",
                conversion("Pod in version \"v1\" cannot be handled as a TokenReview", "v1.Pod", "TokenReview"),
            ),
            (
                "apps/v1",
                "Deployment",
                "SelfSubjectReview",
                "v1",
                conversion("Deployment in version \"v1\" cannot be handled as a SelfSubjectReview", "v1.Deployment", "SelfSubjectReview"),
            ),
            (
                "authentication.k8s.io/v1",
                "SelfSubjectReview",
                "TokenReview",
                "v1",
                conversion("SelfSubjectReview in version \"v1\" cannot be handled as a TokenReview", "v1.SelfSubjectReview", "TokenReview"),
            ),
            (
                "authentication.k8s.io/__internal",
                "TokenReview",
                "SelfSubjectReview",
                "v1",
                conversion("TokenReview in version \"__internal\" cannot be handled as a SelfSubjectReview", "authentication.TokenReview", "SelfSubjectReview"),
            ),
            (
                "foo/v9",
                "Status",
                "TokenReview",
                "v1",
                conversion("Status in version \"v9\" cannot be handled as a TokenReview", "v1.Status", "TokenReview"),
            ),
            (
                "__internal",
                "Pod",
                "TokenReview",
                "v1",
                conversion("Pod in version \"__internal\" cannot be handled as a TokenReview", "core.Pod", "TokenReview"),
            ),
            (
                "foo/__internal",
                "Pod",
                "TokenReview",
                "v1",
                Err(Refusal::BadRequest(
                    "Pod in version \"__internal\" cannot be handled as a TokenReview: no kind \"Pod\" is registered for the internal version of group \"foo\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"".into(),
                )),
            ),
            (
                "",
                "Pod\u{2028}<&>\"\u{e9}\0",
                "TokenReview",
                "v1",
                Err(Refusal::BadRequest(
                    "Pod\u{2028}<&>\"\u{e9}\0 in version \"v1\" cannot be handled as a TokenReview: no kind \"Pod\\u2028<&>\\\"\u{e9}\\x00\" is registered for version \"authentication.k8s.io/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"".into(),
                )),
            ),
            (
                "a/b/c",
                "TokenReview",
                "TokenReview",
                "v1",
                Err(Refusal::Unrecognized("unexpected GroupVersion string: a/b/c".into())),
            ),
            (
                "foo/",
                "Pod",
                "TokenReview",
                "v1",
                Err(Refusal::BadRequest(
                    "Pod in version \"\" cannot be handled as a TokenReview: Object 'apiVersion' is missing".into(),
                )),
            ),
        ];
        for (api_version, kind, endpoint_kind, endpoint_version, want) in cases {
            assert_eq!(
                resolve(api_version, kind, endpoint_kind, endpoint_version),
                want,
                "{api_version:?} {kind:?} on {endpoint_kind} {endpoint_version}"
            );
        }
    }
}
