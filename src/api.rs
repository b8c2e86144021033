//! Kubernetes API objects on the wire: `TokenReview` and `SelfSubjectReview`
//! (`authentication.k8s.io/v1`, and `v1beta1` for TokenReview), and `Status` (`v1`).
//!
//! Field names and `omitempty` behaviour follow the Go types in `k8s.io/api/authentication`,
//! so what this crate sends and answers is byte-for-byte what kube-apiserver clients expect.
//! The token in a [`TokenReviewSpec`] is a secret: its `Debug` output is redacted.
//!
//! ```
//! use kube_authn::api::TokenReview;
//!
//! let review: TokenReview = serde_json::from_str(
//!     r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"s3cr3t","audiences":["api"]}}"#,
//! ).unwrap();
//! assert_eq!(review.spec.audiences, ["api"]);
//! assert!(!format!("{review:?}").contains("s3cr3t"));
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::user::UserInfo as Identity;

/// API group of the review objects.
///
/// ```
/// use kube_authn::api::{AUTHENTICATION_GROUP, TokenReview};
/// assert_eq!(AUTHENTICATION_GROUP, "authentication.k8s.io");
/// let review = TokenReview::request("v1", "t", vec![]);
/// assert_eq!(review.api_version, "authentication.k8s.io/v1");
/// ```
pub const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";

/// The kinds apimachinery's `metav1.AddToGroupVersion` adds to every version of a group (Go
/// types `v1.<Kind>`): what a scheme that registers the review groups also knows in them.
///
/// ```
/// use kube_authn::api::METAV1_KINDS;
/// assert!(METAV1_KINDS.contains(&"CreateOptions"));
/// assert!(!METAV1_KINDS.contains(&"TokenReview"));
/// ```
pub const METAV1_KINDS: [&str; 7] = [
    "WatchEvent",
    "ListOptions",
    "GetOptions",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
];

/// The kinds `metav1.AddToGroupVersion` registers as unversioned (`AddUnversionedTypes`):
/// client-go's `Scheme.New` finds them under any group and version.
///
/// ```
/// use kube_authn::api::UNVERSIONED_KINDS;
/// assert_eq!(UNVERSIONED_KINDS[0], "Status");
/// ```
pub const UNVERSIONED_KINDS: [&str; 5] = [
    "Status",
    "APIVersions",
    "APIGroupList",
    "APIGroup",
    "APIResourceList",
];

fn is_false(b: &bool) -> bool {
    !*b
}

/// `null` decodes as the zero value, as Go's encoding/json does for a non-pointer field
/// (`#[serde(default)]` alone covers only a missing field). Go webhooks whose types lack
/// `omitempty` send `"groups":null`, `"extra":null`.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// [`null_as_default`] for a struct: `null` is the zero value and an object is `T`; anything
/// else is an error, as encoding/json makes it. serde's derived struct decoding also takes an
/// array, matched to the fields in order, so without this `{"spec":["tok"]}` would be a
/// review of `tok` (Go: `json: cannot unmarshal array into Go struct field …`).
pub(crate) fn null_or_object<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    struct Shape<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de> + Default> serde::de::Visitor<'de> for Shape<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object or null")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(Shape(std::marker::PhantomData))
}

/// A list item decoded by [`null_or_object`].
pub(crate) struct ObjectItem<T>(pub(crate) T);

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for ObjectItem<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        null_or_object(d).map(ObjectItem)
    }
}

/// [`null_as_default`] for the extra map, each of its value lists (`{"k":null}`) and each
/// item of them ([`string_list`]: `{"k":[null]}` is `{"k":[""]}`).
fn extra_map<'de, D>(d: D) -> Result<BTreeMap<String, Vec<String>>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Values(#[serde(deserialize_with = "string_list")] Vec<String>);
    let map: Option<BTreeMap<String, Values>> = Option::deserialize(d)?;
    Ok(map
        .unwrap_or_default()
        .into_iter()
        .map(|(k, Values(v))| (k, v))
        .collect())
}

/// [`null_as_default`] for each value of a string map (`{"a":null}` decodes as `{"a":""}`, as
/// Go's encoding/json does for a `map[string]string`).
fn string_map<'de, D>(d: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Value(#[serde(deserialize_with = "null_as_default")] String);
    let map: Option<BTreeMap<String, Value>> = Option::deserialize(d)?;
    Ok(map
        .unwrap_or_default()
        .into_iter()
        .map(|(k, Value(v))| (k, v))
        .collect())
}

/// [`null_as_default`] for a string list and each of its items (`[null]` is `[""]`).
fn string_list<'de, D>(d: D) -> Result<Vec<String>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Item(#[serde(deserialize_with = "null_as_default")] String);
    let list: Option<Vec<Item>> = Option::deserialize(d)?;
    Ok(list
        .unwrap_or_default()
        .into_iter()
        .map(|Item(v)| v)
        .collect())
}

/// [`null_as_default`] for a list of structs and [`null_or_object`] for each of its items
/// (`[null]` is one zero value, as Go decodes `null` into a struct element).
fn default_items<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    let list: Option<Vec<ObjectItem<T>>> = Option::deserialize(d)?;
    Ok(list.unwrap_or_default().into_iter().map(|i| i.0).collect())
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// An `int64` as Go's encoding/json reads it (`strconv.ParseInt`), `null` as 0: serde_json
/// reads the integer `-0` as a float, which Go takes as 0.
pub(crate) fn go_int64<'de, D>(d: D) -> Result<i64, D::Error>
where
    D: Deserializer<'de>,
{
    struct Int;
    impl serde::de::Visitor<'_> for Int {
        type Value = i64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom("integer out of range"))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<i64, E> {
            if v == 0.0 && v.is_sign_negative() {
                Ok(0)
            } else {
                Err(E::invalid_type(serde::de::Unexpected::Float(v), &self))
            }
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<i64, E> {
            Ok(0)
        }
    }
    d.deserialize_any(Int)
}

/// [`go_int64`] for a narrower Go integer (`int32`): a value outside its range is an error, as
/// in Go.
#[cfg(feature = "remote")]
pub(crate) fn go_int<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64>,
{
    T::try_from(go_int64(d)?).map_err(|_| serde::de::Error::custom("integer out of range"))
}

/// A Go `*int64`: `null` is none, anything else is read by [`go_int64`].
#[cfg(feature = "remote")]
pub(crate) fn go_opt_int64<'de, D>(d: D) -> Result<Option<i64>, D::Error>
where
    D: Deserializer<'de>,
{
    struct Opt;
    impl<'de> serde::de::Visitor<'de> for Opt {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer or null")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Option<i64>, D2::Error> {
            go_int64(d).map(Some)
        }
    }
    d.deserialize_option(Opt)
}

/// Object metadata: the fields of Go's `metav1.ObjectMeta` that a review's create keeps
/// (kube-apiserver's create handler wipes `uid`, `selfLink`, `creationTimestamp` and the
/// deletion fields, and its field manager rewrites `managedFields`; those are not kept here).
/// Field order and `omitempty` are Go's.
///
/// ```
/// let m = kube_authn::api::ObjectMeta::default();
/// assert_eq!(serde_json::to_string(&m).unwrap(), "{}");
/// let m: kube_authn::api::ObjectMeta =
///     serde_json::from_str(r#"{"labels":{"b":"1","a":null},"finalizers":[null]}"#).unwrap();
/// assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"labels":{"a":"","b":"1"},"finalizers":[""]}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `metadata.name` (not used by reviews; accepted and echoed).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// `metadata.generateName` (echoed; no name is generated for a review).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub generate_name: String,
    /// `metadata.namespace`: reviews are cluster-scoped, so `kube-authn serve` clears one sent
    /// in a body, as kube-apiserver does.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub namespace: String,
    /// `metadata.resourceVersion` (echoed).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub resource_version: String,
    /// `metadata.generation` (echoed).
    #[serde(
        default,
        deserialize_with = "go_int64",
        skip_serializing_if = "is_zero"
    )]
    pub generation: i64,
    /// `metadata.creationTimestamp` (RFC 3339), left out when unset, as apimachinery's
    /// `omitempty,omitzero` tag does (older releases wrote `null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<String>,
    /// `metadata.labels` (echoed).
    #[serde(
        default,
        deserialize_with = "string_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations` (echoed).
    #[serde(
        default,
        deserialize_with = "string_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
    /// `metadata.ownerReferences` (echoed; kube-authn serve drops repeated entries with
    /// kube-apiserver's warning).
    #[serde(
        default,
        deserialize_with = "default_items",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub owner_references: Vec<OwnerReference>,
    /// `metadata.finalizers` (echoed).
    #[serde(
        default,
        deserialize_with = "string_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub finalizers: Vec<String>,
}

/// `metav1.OwnerReference`, as Go writes it: the four names always, the two flags when set.
///
/// ```
/// let r: kube_authn::api::OwnerReference = serde_json::from_str(r#"{"uid":"1","controller":null}"#).unwrap();
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"apiVersion":"","kind":"","name":"","uid":"1"}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// The owner's API version.
    #[serde(default, deserialize_with = "null_as_default")]
    pub api_version: String,
    /// The owner's kind.
    #[serde(default, deserialize_with = "null_as_default")]
    pub kind: String,
    /// The owner's name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// The owner's uid.
    #[serde(default, deserialize_with = "null_as_default")]
    pub uid: String,
    /// Whether the owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Whether the owner cannot be deleted before this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// `authentication.k8s.io` `UserInfo` as serialised in reviews.
///
/// ```
/// use kube_authn::{api::UserInfo, user};
/// let u = UserInfo::from(&user::UserInfo::builder("jane").group("g").build());
/// assert_eq!(serde_json::to_string(&u).unwrap(), r#"{"username":"jane","groups":["g"]}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// User name.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub username: String,
    /// User uid.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub uid: String,
    /// Groups (`[null]` is `[""]`, as Go decodes it).
    #[serde(
        default,
        deserialize_with = "string_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub groups: Vec<String>,
    /// Extra attributes.
    #[serde(
        default,
        deserialize_with = "extra_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&Identity> for UserInfo {
    fn from(user: &Identity) -> Self {
        Self {
            username: user.name().to_owned(),
            uid: user.uid().to_owned(),
            groups: user.groups().map(str::to_owned).collect(),
            extra: user
                .extra()
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }
}

impl UserInfo {
    /// Converts to this crate's identity type.
    ///
    /// ```
    /// let api = kube_authn::api::UserInfo { username: "u".into(), ..Default::default() };
    /// assert_eq!(api.to_identity().name(), "u");
    /// ```
    pub fn to_identity(&self) -> Identity {
        let mut b = Identity::builder(self.username.clone())
            .uid(self.uid.clone())
            .groups(self.groups.iter().map(String::as_str));
        for (k, v) in &self.extra {
            b = b.extra(k.clone(), v.iter().cloned());
        }
        b.build()
    }
}

/// `TokenReview`: asks whether a token is valid and whose it is.
///
/// ```
/// use kube_authn::api::{TokenReview, TokenReviewSpec};
/// let r = TokenReview::request("v1", "t0ken", vec!["api".into()]);
/// assert_eq!(r.api_version, "authentication.k8s.io/v1");
/// assert_eq!(r.spec.token, "t0ken");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenReview {
    /// `TokenReview`. Written before `apiVersion`, and left out when empty, as Go's
    /// `metav1.TypeMeta` does.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// `authentication.k8s.io/v1` or `authentication.k8s.io/v1beta1`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// Metadata.
    #[serde(default, deserialize_with = "null_or_object")]
    pub metadata: ObjectMeta,
    /// The token and audiences to check.
    #[serde(default, deserialize_with = "null_or_object")]
    pub spec: TokenReviewSpec,
    /// The answer.
    #[serde(default, deserialize_with = "null_or_object")]
    pub status: TokenReviewStatus,
}

impl TokenReview {
    /// A review request for `token` in API version `version` (`v1` or `v1beta1`).
    ///
    /// ```
    /// let r = kube_authn::api::TokenReview::request("v1beta1", "t", vec![]);
    /// assert_eq!(r.kind, "TokenReview");
    /// ```
    pub fn request(version: &str, token: impl Into<String>, audiences: Vec<String>) -> Self {
        Self {
            kind: "TokenReview".into(),
            api_version: format!("{AUTHENTICATION_GROUP}/{version}"),
            metadata: ObjectMeta::default(),
            spec: TokenReviewSpec {
                token: token.into(),
                audiences,
            },
            status: TokenReviewStatus::default(),
        }
    }
}

impl fmt::Debug for TokenReview {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenReview")
            .field("api_version", &self.api_version)
            .field("metadata", &self.metadata)
            .field("spec", &self.spec)
            .field("status", &self.status)
            .finish()
    }
}

/// `TokenReview.spec`. `Debug` redacts the token.
///
/// ```
/// let s = kube_authn::api::TokenReviewSpec { token: "secret".into(), audiences: vec![] };
/// assert!(!format!("{s:?}").contains("secret"));
/// ```
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenReviewSpec {
    /// The opaque token.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub token: String,
    /// Audiences the token must be valid for (`[null]` is `[""]`, as Go decodes it).
    #[serde(
        default,
        deserialize_with = "string_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub audiences: Vec<String>,
}

impl fmt::Debug for TokenReviewSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenReviewSpec")
            .field(
                "token",
                &format_args!("<redacted {} bytes>", self.token.len()),
            )
            .field("audiences", &self.audiences)
            .finish()
    }
}

/// `TokenReview.status`.
///
/// ```
/// let s = kube_authn::api::TokenReviewStatus::default();
/// assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"user":{}}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenReviewStatus {
    /// Whether the token was authenticated.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub authenticated: bool,
    /// The user (always serialised, as Go does for a struct field).
    #[serde(default, deserialize_with = "null_or_object")]
    pub user: UserInfo,
    /// Audiences the token is valid for (`[null]` is `[""]`, as Go decodes it).
    #[serde(
        default,
        deserialize_with = "string_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub audiences: Vec<String>,
    /// Why the token was not authenticated.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub error: String,
}

/// `SelfSubjectReview` (`authentication.k8s.io/v1`): who the caller is (`kubectl auth whoami`).
///
/// ```
/// use kube_authn::{api::SelfSubjectReview, user::UserInfo};
/// let r = SelfSubjectReview::for_user(&UserInfo::new("jane"), "2026-11-22T08:00:00Z");
/// assert_eq!(r.status.user_info.username, "jane");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelfSubjectReview {
    /// `SelfSubjectReview`. Written before `apiVersion`, and left out when empty, as Go's
    /// `metav1.TypeMeta` does.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// `authentication.k8s.io/v1`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// Metadata.
    #[serde(default, deserialize_with = "null_or_object")]
    pub metadata: ObjectMeta,
    /// The caller's identity.
    #[serde(default, deserialize_with = "null_or_object")]
    pub status: SelfSubjectReviewStatus,
}

impl SelfSubjectReview {
    /// The review kube-apiserver answers for `user`, created at `timestamp` (RFC 3339).
    ///
    /// ```
    /// let r = kube_authn::api::SelfSubjectReview::for_user(&kube_authn::user::UserInfo::new("u"), "2026-01-01T00:00:00Z");
    /// assert_eq!(r.kind, "SelfSubjectReview");
    /// ```
    pub fn for_user(user: &Identity, timestamp: &str) -> Self {
        Self {
            kind: "SelfSubjectReview".into(),
            api_version: format!("{AUTHENTICATION_GROUP}/v1"),
            metadata: ObjectMeta {
                creation_timestamp: Some(timestamp.to_owned()),
                ..ObjectMeta::default()
            },
            status: SelfSubjectReviewStatus {
                user_info: UserInfo::from(user),
            },
        }
    }
}

/// `SelfSubjectReview.status`.
///
/// ```
/// let s = kube_authn::api::SelfSubjectReviewStatus::default();
/// assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"userInfo":{}}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelfSubjectReviewStatus {
    /// The caller's identity.
    #[serde(default, deserialize_with = "null_or_object")]
    pub user_info: UserInfo,
}

/// `v1` `Status`, the body of every API error (401, 400, …).
///
/// ```
/// let s = kube_authn::api::Status::failure(401, "Unauthorized", "Unauthorized");
/// assert_eq!(
///     serde_json::to_string(&s).unwrap(),
///     r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// `Status` (empty only in kube-apiserver's 504 from its timeout filter, which leaves out
    /// the type; empty is not written).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `v1` (see `kind`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// Always empty when we write it; absent in what some servers write.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// `Failure` or `Success`.
    #[serde(default)]
    pub status: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Machine-readable reason (`Unauthorized`, `BadRequest`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// What the failure is about; kube-apiserver sends it (possibly empty, `{}`) with some
    /// reasons (`Forbidden`, `NotFound`, `MethodNotAllowed`, `Timeout`) and not with others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// HTTP status code.
    #[serde(default)]
    pub code: u16,
}

/// `metav1.StatusDetails`, the part this crate uses: empty fields are left out, as in Go.
///
/// ```
/// use kube_authn::api::StatusDetails;
/// let d = StatusDetails { group: "authentication.k8s.io".into(), kind: "tokenreviews".into(), ..Default::default() };
/// assert_eq!(serde_json::to_string(&d).unwrap(), r#"{"group":"authentication.k8s.io","kind":"tokenreviews"}"#);
/// assert_eq!(serde_json::to_string(&StatusDetails::default()).unwrap(), "{}");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// The name of the object concerned.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its API group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Its kind (for authorization failures, the resource: `tokenreviews`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The causes (`NewInternalError` gives one: the error's message).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
}

/// `metav1.StatusCause`: empty fields are left out, as in Go.
///
/// ```
/// use kube_authn::api::StatusCause;
/// let c = StatusCause { message: "error validating audiences".into(), ..Default::default() };
/// assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"message":"error validating audiences"}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    /// A machine-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The field concerned.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

impl Status {
    /// A failure `Status`.
    ///
    /// ```
    /// let s = kube_authn::api::Status::failure(400, "BadRequest", "bad");
    /// assert_eq!(s.code, 400);
    /// ```
    pub fn failure(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            kind: "Status".into(),
            api_version: "v1".into(),
            metadata: BTreeMap::new(),
            status: "Failure".into(),
            message: message.into(),
            reason: reason.into(),
            details: None,
            code,
        }
    }

    /// The same status with `details`.
    ///
    /// ```
    /// use kube_authn::api::{Status, StatusDetails};
    /// let s = Status::failure(404, "NotFound", "the server could not find the requested resource")
    ///     .with_details(StatusDetails::default());
    /// assert!(serde_json::to_string(&s).unwrap().ends_with(r#""reason":"NotFound","details":{},"code":404}"#));
    /// ```
    pub fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(details);
        self
    }
}

/// `bytes` read as Go reads them into a string for its JSON encoder and decoders: valid UTF-8
/// as it is, and each byte that is not part of valid UTF-8 one U+FFFD (Go decodes an invalid
/// sequence one byte at a time; Rust's `String::from_utf8_lossy` replaces a cut-short sequence
/// once).
///
/// ```
/// use kube_authn::api::go_utf8_lossy;
/// assert_eq!(go_utf8_lossy(b"caf\xc3\xa9"), "caf\u{e9}");
/// assert_eq!(go_utf8_lossy(b"x\xff"), "x\u{fffd}");
/// // A cut-short sequence is one replacement per byte, as in Go.
/// assert_eq!(go_utf8_lossy(b"\xe2\x82y"), "\u{fffd}\u{fffd}y");
/// assert_eq!(String::from_utf8_lossy(b"\xe2\x82y"), "\u{fffd}y");
/// ```
pub fn go_utf8_lossy(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(std::iter::repeat_n('\u{FFFD}', chunk.invalid().len()));
    }
    out
}

/// Go's `encoding/base64` decoding, not `Strict`: `url` takes the URL alphabet (`-`, `_`)
/// instead of the standard one (`+`, `/`), `padded` requires `=` padding (`StdEncoding`,
/// `URLEncoding`) where none is allowed (`RawStdEncoding`, `RawURLEncoding`); a `\r` or `\n`
/// is skipped wherever it stands (no other white space), unused trailing bits are ignored.
/// The error is the offset Go's `CorruptInputError` names (`illegal base64 data at input byte
/// N`), as Go's `decodeQuantum` finds it.
pub(crate) fn go_base64(src: &[u8], url: bool, padded: bool) -> Result<Vec<u8>, usize> {
    let (s62, s63) = if url { (b'-', b'_') } else { (b'+', b'/') };
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        _ if c == s62 => Some(62),
        _ if c == s63 => Some(63),
        _ => None,
    };
    let newline = |c: u8| c == b'\n' || c == b'\r';
    let mut out = Vec::with_capacity(src.len() / 4 * 3 + 2);
    let mut si = 0;
    // One quantum (four symbols) per round.
    while si < src.len() {
        let mut buf = [0u8; 4];
        let (mut j, mut len, mut trailing) = (0, 4, None);
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                if j == 1 || padded {
                    return Err(si - j);
                }
                len = j;
                break;
            }
            let c = src[si];
            si += 1;
            if let Some(v) = sextet(c) {
                buf[j] = v;
                j += 1;
                continue;
            }
            if newline(c) {
                continue;
            }
            if !padded || c != b'=' || j < 2 {
                return Err(si - 1);
            }
            if j == 2 {
                // A second `=` must follow (newlines aside).
                while si < src.len() && newline(src[si]) {
                    si += 1;
                }
                if si == src.len() {
                    return Err(src.len());
                }
                if src[si] != b'=' {
                    return Err(si - 1);
                }
                si += 1;
            }
            while si < src.len() && newline(src[si]) {
                si += 1;
            }
            if si < src.len() {
                trailing = Some(si);
            }
            len = j;
            break;
        }
        let v = buf.iter().fold(0u32, |acc, s| (acc << 6) | u32::from(*s));
        out.extend_from_slice(&v.to_be_bytes()[1..len]);
        if let Some(at) = trailing {
            return Err(at);
        }
    }
    Ok(out)
}

/// The most query parameters Go's `url.ParseQuery` reads (Go 1.26's `urlmaxqueryparams`
/// default): a query with more `&`-separated parts is refused whole, and `URL.Query()`, which
/// kube-apiserver reads `pretty`, `timeout`, `dryRun` and the list options with, is then empty.
///
/// ```
/// use kube_authn::api::{GO_MAX_QUERY_PARAMS, go_query_pairs};
/// let at_limit = format!("a=1{}", "&".repeat(GO_MAX_QUERY_PARAMS - 1));
/// assert_eq!(go_query_pairs(&at_limit).count(), 1);
/// let over = format!("a=1{}", "&".repeat(GO_MAX_QUERY_PARAMS));
/// assert_eq!(go_query_pairs(&over).count(), 0);
/// ```
pub const GO_MAX_QUERY_PARAMS: usize = 10_000;

/// The `key=value` pairs of a raw query as Go's `url.ParseQuery` reads them, in order:
/// `&`-separated, empty parts skipped, a part holding `;` or a bad `%` escape dropped, keys and
/// values unescaped as `url.QueryUnescape` does (`+` is a space; the bytes need not be UTF-8).
/// A query of more than [`GO_MAX_QUERY_PARAMS`] parts yields nothing, as Go's `URL.Query()`
/// does (it ignores the error), so an attacker's huge query costs one count of its `&`s.
///
/// ```
/// use kube_authn::api::go_query_pairs;
/// let pairs: Vec<_> = go_query_pairs("a=1&b=x+y%21&bad=%zz&c;d=2&&e").collect();
/// assert_eq!(pairs.len(), 3);
/// assert_eq!((&*pairs[1].0, &*pairs[1].1), (&b"b"[..], &b"x y!"[..]));
/// assert_eq!((&*pairs[2].0, &*pairs[2].1), (&b"e"[..], &b""[..]));
/// // Over Go's limit: no parameter at all.
/// let huge = format!("pretty=true{}", "&".repeat(10_000));
/// assert_eq!(go_query_pairs(&huge).count(), 0);
/// ```
pub fn go_query_pairs(
    query: &str,
) -> impl Iterator<Item = (std::borrow::Cow<'_, [u8]>, std::borrow::Cow<'_, [u8]>)> + '_ {
    let within = query.bytes().filter(|&b| b == b'&').count() < GO_MAX_QUERY_PARAMS;
    query
        .split('&')
        .take_while(move |_| within)
        .filter(|pair| !pair.is_empty() && !pair.contains(';'))
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((go_query_unescape(k)?, go_query_unescape(v)?))
        })
}

/// Go's `url.QueryUnescape`: `+` is a space, `%XX` a byte; `None` on a bad escape.
fn go_query_unescape(s: &str) -> Option<std::borrow::Cow<'_, [u8]>> {
    if !s.bytes().any(|b| b == b'%' || b == b'+') {
        return Some(std::borrow::Cow::Borrowed(s.as_bytes()));
    }
    let unhex = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = unhex(*b.get(i + 1)?)?;
                let lo = unhex(*b.get(i + 2)?)?;
                out.push(hi << 4 | lo);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Some(std::borrow::Cow::Owned(out))
}

/// `value` as kube-apiserver's JSON serializer writes it: compact with a trailing newline (Go's
/// `json.Encoder`), or indented by two spaces without one (`json.MarshalIndent(v, "", "  ")`,
/// used for `?pretty` and for clients that do not ask for JSON), with Go's string escapes
/// ([`go_json_escapes`]).
///
/// ```
/// use kube_authn::api::{Status, to_go_json};
/// let status = Status::failure(400, "BadRequest", "a <b> & c");
/// let compact = to_go_json(&status, false).unwrap();
/// assert!(compact.ends_with(b"\"message\":\"a \\u003cb\\u003e \\u0026 c\",\"reason\":\"BadRequest\",\"code\":400}\n"));
/// let pretty = to_go_json(&status, true).unwrap();
/// assert!(pretty.starts_with(b"{\n  \"kind\": \"Status\",") && pretty.ends_with(b"}"));
/// ```
pub fn to_go_json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> serde_json::Result<Vec<u8>> {
    let json = if pretty {
        serde_json::to_vec_pretty(value)?
    } else {
        let mut v = serde_json::to_vec(value)?;
        v.push(b'\n');
        v
    };
    Ok(go_json_escapes(json))
}

/// serde_json's output with the escapes Go's `encoding/json` adds: `<`, `>` and `&` (its HTML
/// escaping, on in `json.Marshal`, `MarshalIndent` and kube-apiserver's encoder) and U+2028,
/// U+2029 (always) become `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`. Everything else
/// serde_json already writes as Go does (`\"`, `\\`, `\b \f \n \r \t`, other control
/// characters as lower-case `\u00XX`). Those characters only occur inside JSON strings, so
/// every occurrence is replaced; JSON without them is returned as it is.
///
/// ```
/// use kube_authn::api::go_json_escapes;
/// let json = serde_json::to_vec(&["a<b&c>", "\u{2028}", "é\u{1}"]).unwrap();
/// let go = String::from_utf8(go_json_escapes(json)).unwrap();
/// assert_eq!(go, r#"["a\u003cb\u0026c\u003e","\u2028","é\u0001"]"#);
/// ```
pub fn go_json_escapes(json: Vec<u8>) -> Vec<u8> {
    let special = |w: &[u8]| match w {
        [b'<', ..] => Some(&b"\\u003c"[..]),
        [b'>', ..] => Some(&b"\\u003e"[..]),
        [b'&', ..] => Some(&b"\\u0026"[..]),
        [0xe2, 0x80, 0xa8, ..] => Some(&b"\\u2028"[..]),
        [0xe2, 0x80, 0xa9, ..] => Some(&b"\\u2029"[..]),
        _ => None,
    };
    if !json.iter().any(|&b| matches!(b, b'<' | b'>' | b'&' | 0xe2)) {
        return json;
    }
    let mut out = Vec::with_capacity(json.len() + 16);
    let mut i = 0;
    while i < json.len() {
        match special(&json[i..]) {
            Some(escape) => {
                out.extend_from_slice(escape);
                i += if json[i] == 0xe2 { 3 } else { 1 };
            }
            None => {
                out.push(json[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `json.Marshal` of strings (outputs recorded from Go 1.26): serde_json's quoting
    /// plus [`go_json_escapes`] is the same byte for byte.
    #[test]
    fn strings_are_quoted_as_go_marshals_them() {
        let cases: [(&str, &str); 2] = [
            (
                "\x00\u{8}\u{c}\n\r\t\x1f\x7f\"\\/",
                "\"\\u0000\\b\\f\\n\\r\\t\\u001f\x7f\\\"\\\\/\"",
            ),
            (
                "a<b>&c\u{2028}\u{2029}\u{2027}é",
                "\"a\\u003cb\\u003e\\u0026c\\u2028\\u2029\u{2027}é\"",
            ),
        ];
        for (s, want) in cases {
            let got = go_json_escapes(serde_json::to_vec(s).unwrap());
            assert_eq!(String::from_utf8(got).unwrap(), want, "{s:?}");
        }
    }

    #[test]
    fn go_json_escapes_vectors() {
        let cases: [(&str, &str); 5] = [
            (r#"{"a":"plain é € ✓"}"#, r#"{"a":"plain é € ✓"}"#),
            (
                r#"{"a<":"<b> & c"}"#,
                r#"{"a\u003c":"\u003cb\u003e \u0026 c"}"#,
            ),
            ("[\"\u{2028}\u{2029}\"]", r#"["\u2028\u2029"]"#),
            ("\"\u{2027}\u{202a}\"", "\"\u{2027}\u{202a}\""),
            ("", ""),
        ];
        for (json, want) in cases {
            assert_eq!(
                String::from_utf8(go_json_escapes(json.as_bytes().to_vec())).unwrap(),
                want,
                "{json}"
            );
        }
    }

    #[test]
    fn token_review_status_serialises_like_go() {
        let cases: Vec<(&str, TokenReviewStatus, &str)> = vec![
            ("empty", TokenReviewStatus::default(), r#"{"user":{}}"#),
            (
                "authenticated",
                TokenReviewStatus {
                    authenticated: true,
                    user: UserInfo::from(
                        &Identity::builder("jane")
                            .uid("1")
                            .group("g")
                            .extra("k", ["v"])
                            .build(),
                    ),
                    audiences: vec!["api".into()],
                    error: String::new(),
                },
                r#"{"authenticated":true,"user":{"username":"jane","uid":"1","groups":["g"],"extra":{"k":["v"]}},"audiences":["api"]}"#,
            ),
            (
                "error",
                TokenReviewStatus {
                    error: "invalid bearer token".into(),
                    ..Default::default()
                },
                r#"{"user":{},"error":"invalid bearer token"}"#,
            ),
        ];
        for (name, status, want) in cases {
            assert_eq!(serde_json::to_string(&status).unwrap(), want, "{name}");
            let back: TokenReviewStatus = serde_json::from_str(want).unwrap();
            assert_eq!(back, status, "{name} round trip");
        }
    }

    /// Go's `metav1.TypeMeta`: `kind` first, both left out when empty.
    #[test]
    fn type_meta_is_written_as_go_writes_it() {
        let cases = [
            (
                serde_json::to_string(&TokenReview::request("v1", "t", vec![])),
                r#"{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","metadata":{},"spec":{"token":"t"},"status":{"user":{}}}"#,
            ),
            (
                serde_json::to_string(&TokenReview::default()),
                r#"{"metadata":{},"spec":{},"status":{"user":{}}}"#,
            ),
            (
                serde_json::to_string(&SelfSubjectReview::for_user(
                    &Identity::new("u"),
                    "2026-01-01T00:00:00Z",
                )),
                r#"{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"},"status":{"userInfo":{"username":"u"}}}"#,
            ),
            (
                serde_json::to_string(&SelfSubjectReview::default()),
                r#"{"metadata":{},"status":{"userInfo":{}}}"#,
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got.unwrap(), want);
        }
    }

    /// A JSON `null` where Go's encoding/json reads the zero value (a string in a list, a
    /// struct, a string field) decodes as that zero value, as kube-apiserver decodes a review
    /// and client-go a webhook's answer; a value of another type is still refused.
    #[test]
    fn null_decodes_as_go_zero_value() {
        let review: TokenReview = serde_json::from_str(
            r#"{"spec":{"token":"t","audiences":[null,"a"]},"status":{"audiences":[null],"user":{"groups":[null,"g"],"extra":{"a":[null],"b":null}}}}"#,
        )
        .unwrap();
        assert_eq!(review.spec.audiences, ["", "a"]);
        assert_eq!(review.status.audiences, [""]);
        assert_eq!(review.status.user.groups, ["", "g"]);
        assert_eq!(review.status.user.extra["a"], [""]);
        assert!(review.status.user.extra["b"].is_empty());
        for body in [
            r#"{"kind":null,"apiVersion":null,"metadata":null,"status":null}"#,
            r#"{"status":{"userInfo":null}}"#,
            r#"{"status":{"userInfo":{"username":null,"uid":null,"groups":null,"extra":null}}}"#,
        ] {
            let review: SelfSubjectReview = serde_json::from_str(body).unwrap();
            assert_eq!(review, SelfSubjectReview::default(), "{body}");
        }
        let review: SelfSubjectReview = serde_json::from_str(
            r#"{"status":{"userInfo":{"groups":[null],"extra":{"a":[null]}}}}"#,
        )
        .unwrap();
        assert_eq!(review.status.user_info.groups, [""]);
        assert_eq!(review.status.user_info.extra["a"], [""]);
        for body in [
            r#"{"spec":{"audiences":[1]}}"#,
            r#"{"status":{"user":{"groups":[[]]}}}"#,
            r#"{"status":{"user":{"extra":{"a":[false]}}}}"#,
        ] {
            assert!(serde_json::from_str::<TokenReview>(body).is_err(), "{body}");
        }
    }

    /// A struct is an object or `null`: serde's derived decoding would also take an array,
    /// field by field in order (`{"status":[true,{"username":"admin"}]}` authenticating
    /// `admin`), which encoding/json refuses.
    #[test]
    fn structs_are_objects_not_arrays() {
        let token_reviews = [
            ("spec as an array", r#"{"spec":["tok"]}"#),
            (
                "status as an array",
                r#"{"status":[true,{"username":"admin"}]}"#,
            ),
            (
                "user as an array",
                r#"{"status":{"authenticated":true,"user":["admin"]}}"#,
            ),
            ("metadata as an array", r#"{"metadata":["x"]}"#),
            (
                "owner reference as an array",
                r#"{"metadata":{"ownerReferences":[["v1","Pod","p","u"]]}}"#,
            ),
            ("status as a string", r#"{"status":"x"}"#),
        ];
        for (name, body) in token_reviews {
            assert!(serde_json::from_str::<TokenReview>(body).is_err(), "{name}");
        }
        for (name, body) in [
            ("status as an array", r#"{"status":[{"username":"a"}]}"#),
            ("userInfo as an array", r#"{"status":{"userInfo":["a"]}}"#),
        ] {
            assert!(
                serde_json::from_str::<SelfSubjectReview>(body).is_err(),
                "{name}"
            );
        }
        // Objects and `null` as before.
        let review: TokenReview = serde_json::from_str(
            r#"{"spec":{"token":"t"},"status":{"authenticated":true,"user":{"username":"a"}},"metadata":{"ownerReferences":[null,{"name":"o"}]}}"#,
        )
        .unwrap();
        assert_eq!(
            (
                review.spec.token.as_str(),
                review.status.user.username.as_str()
            ),
            ("t", "a")
        );
        assert_eq!(review.metadata.owner_references.len(), 2);
        assert_eq!(review.metadata.owner_references[1].name, "o");
    }

    #[test]
    fn identity_round_trip() {
        let id = Identity::builder("a")
            .uid("u")
            .groups(["x", "y"])
            .extra("k", ["1", "2"])
            .build();
        assert_eq!(UserInfo::from(&id).to_identity(), id);
    }
}
