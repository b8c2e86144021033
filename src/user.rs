//! The authenticated identity ([`UserInfo`]) and Kubernetes' well-known user and group names.
//!
//! `UserInfo` mirrors k8s.io/apiserver's `user.DefaultInfo` (name, uid, groups, extra) but is
//! immutable: it is built once (by an authenticator, or with [`UserInfo::builder`]) and then
//! shared behind an [`Arc`]. Wrappers such as the group adder build a *new* `UserInfo`
//! ([`UserInfo::with_group`]) instead of changing the one they were given, so an identity held
//! in a cache can never be altered by a later request (the bug Kubernetes fixed in 1.25).
//!
//! # Representation
//!
//! Fields are private and read through accessors, so the layout can stay compact: the name and
//! uid share one allocation, group names are reference-counted strings (so `system:authenticated`
//! or a group used by a million token-file rows is stored once), an empty `extra` map costs
//! nothing, and the well-known extra keys ([`CREDENTIAL_ID_KEY`], the service-account pod and
//! node keys) are `'static` strings ([`ExtraKey`]) rather than per-request copies. The users
//! the JWT and certificate authenticators build keep their extra values in the same string as
//! the name and uid, and the [`Extra`] map is built from it the first time
//! [`UserInfo::extra`] is read (a request handler that never reads it never pays for it): a
//! bound service-account token's user is 6 allocations (it was 22 with a built map of
//! copied keys, 17 with static keys). Cloning a `UserInfo` never copies string data. This is what lets a one-million-row token file stay under twice its
//! size in memory. The group adder's `system:authenticated` is
//! a flag that [`UserInfo::groups`] appends, so adding it costs one allocation (the new
//! `UserInfo`) and no copy of the group list, and that new `UserInfo` is kept beside the one it
//! was built from: a stored identity (a token-file row) gets it built on its first request
//! and shared on every later one, for one reference-count increment (an identity built for
//! one request, which nobody else holds, skips the cache). The cache is one pointer, so a
//! `UserInfo` stays in the same allocator size class as without it (the million-row token
//! file loads at 1.79× its size either way); each stored user that has authenticated keeps
//! its twin (one more `UserInfo`, sharing every string) for as long as it is stored.
//!
//! Kubernetes distinguishes a nil from an empty group list in a few Go unit tests; on the wire
//! (`omitempty`) the two are identical, and this crate does not keep the distinction.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use kube_authn::user::{ALL_AUTHENTICATED, CREDENTIAL_ID_KEY, UserInfo};
//!
//! let jane = Arc::new(
//!     UserInfo::builder("jane")
//!         .uid("1001")
//!         .groups(["developers", "oncall"])
//!         .extra(CREDENTIAL_ID_KEY, ["JTI=4f1c"])
//!         .build(),
//! );
//! // Adding a group builds a new identity; the shared one is unchanged.
//! let with_authenticated = jane.with_group(ALL_AUTHENTICATED);
//! assert_eq!(jane.groups().collect::<Vec<_>>(), ["developers", "oncall"]);
//! assert!(with_authenticated.in_group("system:authenticated"));
//! assert_eq!(with_authenticated.extra()[CREDENTIAL_ID_KEY], ["JTI=4f1c"]);
//! assert!(!jane.is_anonymous() && UserInfo::anonymous().is_anonymous());
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use once_cell::race::OnceBox;

/// Group of the cluster administrators (`system:masters`).
///
/// ```
/// use kube_authn::user::SYSTEM_PRIVILEGED_GROUP;
/// assert_eq!(SYSTEM_PRIVILEGED_GROUP, "system:masters");
/// ```
pub const SYSTEM_PRIVILEGED_GROUP: &str = "system:masters";
/// Group of the kubelets (`system:nodes`).
///
/// ```
/// use kube_authn::user::NODES_GROUP;
/// assert_eq!(NODES_GROUP, "system:nodes");
/// ```
pub const NODES_GROUP: &str = "system:nodes";
/// Group allowed to read monitoring endpoints (`system:monitoring`).
///
/// ```
/// use kube_authn::user::MONITORING_GROUP;
/// assert_eq!(MONITORING_GROUP, "system:monitoring");
/// ```
pub const MONITORING_GROUP: &str = "system:monitoring";
/// Group every unauthenticated (anonymous) request is in (`system:unauthenticated`).
///
/// ```
/// use kube_authn::user::ALL_UNAUTHENTICATED;
/// assert_eq!(ALL_UNAUTHENTICATED, "system:unauthenticated");
/// assert!(kube_authn::user::UserInfo::anonymous().in_group(ALL_UNAUTHENTICATED));
/// ```
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// Group every authenticated request is in (`system:authenticated`).
///
/// ```
/// use kube_authn::user::ALL_AUTHENTICATED;
/// assert_eq!(ALL_AUTHENTICATED, "system:authenticated");
/// ```
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// The user name given to anonymous requests (`system:anonymous`).
///
/// ```
/// use kube_authn::user::ANONYMOUS;
/// assert_eq!(ANONYMOUS, "system:anonymous");
/// assert_eq!(kube_authn::user::UserInfo::anonymous().name(), ANONYMOUS);
/// ```
pub const ANONYMOUS: &str = "system:anonymous";
/// The API server's own loopback identity (`system:apiserver`).
///
/// ```
/// use kube_authn::user::APISERVER_USER;
/// assert_eq!(APISERVER_USER, "system:apiserver");
/// ```
pub const APISERVER_USER: &str = "system:apiserver";
/// The kube-proxy identity (`system:kube-proxy`).
///
/// ```
/// use kube_authn::user::KUBE_PROXY;
/// assert_eq!(KUBE_PROXY, "system:kube-proxy");
/// ```
pub const KUBE_PROXY: &str = "system:kube-proxy";
/// The controller-manager identity (`system:kube-controller-manager`).
///
/// ```
/// use kube_authn::user::KUBE_CONTROLLER_MANAGER;
/// assert_eq!(KUBE_CONTROLLER_MANAGER, "system:kube-controller-manager");
/// ```
pub const KUBE_CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
/// The scheduler identity (`system:kube-scheduler`).
///
/// ```
/// use kube_authn::user::KUBE_SCHEDULER;
/// assert_eq!(KUBE_SCHEDULER, "system:kube-scheduler");
/// ```
pub const KUBE_SCHEDULER: &str = "system:kube-scheduler";
/// Extra key carrying an identifier of the credential that authenticated the request
/// (`authentication.kubernetes.io/credential-id`), e.g. `X509SHA256=<hex>` or `JTI=<jti>`.
///
/// ```
/// use kube_authn::user::CREDENTIAL_ID_KEY;
/// assert_eq!(CREDENTIAL_ID_KEY, "authentication.kubernetes.io/credential-id");
/// ```
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";
/// Extra key of a service-account token's pod name (`authentication.kubernetes.io/pod-name`).
///
/// ```
/// use kube_authn::user::POD_NAME_KEY;
/// assert_eq!(POD_NAME_KEY, "authentication.kubernetes.io/pod-name");
/// ```
pub const POD_NAME_KEY: &str = "authentication.kubernetes.io/pod-name";
/// Extra key of a service-account token's pod uid (`authentication.kubernetes.io/pod-uid`).
///
/// ```
/// use kube_authn::user::POD_UID_KEY;
/// assert_eq!(POD_UID_KEY, "authentication.kubernetes.io/pod-uid");
/// ```
pub const POD_UID_KEY: &str = "authentication.kubernetes.io/pod-uid";
/// Extra key of a service-account token's node name (`authentication.kubernetes.io/node-name`).
///
/// ```
/// use kube_authn::user::NODE_NAME_KEY;
/// assert_eq!(NODE_NAME_KEY, "authentication.kubernetes.io/node-name");
/// ```
pub const NODE_NAME_KEY: &str = "authentication.kubernetes.io/node-name";
/// Extra key of a service-account token's node uid (`authentication.kubernetes.io/node-uid`).
///
/// ```
/// use kube_authn::user::NODE_UID_KEY;
/// assert_eq!(NODE_UID_KEY, "authentication.kubernetes.io/node-uid");
/// ```
pub const NODE_UID_KEY: &str = "authentication.kubernetes.io/node-uid";
/// Prefix of service-account user names (`system:serviceaccount:`).
///
/// ```
/// use kube_authn::user::SERVICE_ACCOUNT_USERNAME_PREFIX;
/// assert_eq!(SERVICE_ACCOUNT_USERNAME_PREFIX, "system:serviceaccount:");
/// ```
pub const SERVICE_ACCOUNT_USERNAME_PREFIX: &str = "system:serviceaccount:";
/// Group of all service accounts (`system:serviceaccounts`).
///
/// ```
/// use kube_authn::user::ALL_SERVICE_ACCOUNTS_GROUP;
/// assert_eq!(ALL_SERVICE_ACCOUNTS_GROUP, "system:serviceaccounts");
/// ```
pub const ALL_SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";

/// An immutable, cheaply clonable string used for group names and extra values.
///
/// Clones share one allocation, so a group used by many users is stored once.
///
/// ```
/// use kube_authn::user::{SharedStr, UserInfo};
/// let team: SharedStr = "payments".into();
/// let a = UserInfo::builder("a").group(team.clone()).build();
/// let b = UserInfo::builder("b").group(team.clone()).build();
/// assert!(std::sync::Arc::ptr_eq(&a.shared_groups()[0], &b.shared_groups()[0]));
/// assert_eq!(&*team, "payments");
/// ```
pub type SharedStr = Arc<str>;

/// The `extra` map of a user: lower-case keys (by convention namespaced, like
/// `example.org/foo`) to lists of values. Ordered, so serialisation is deterministic.
///
/// Keys are [`ExtraKey`]s: the well-known keys authenticators set on every request
/// ([`CREDENTIAL_ID_KEY`], the service-account pod and node keys) are borrowed `'static`
/// strings, so building an identity does not copy them; keys read from a request or a file
/// are owned. Readers see `str` either way: `extra()["key"]`, `extra().get("key")`, and
/// iteration yields keys that dereference to `str`.
///
/// ```
/// use kube_authn::user::{Extra, ExtraKey};
/// let mut extra = Extra::new();
/// extra.insert(ExtraKey::Borrowed("example.org/static"), vec!["a".to_string()]);
/// extra.insert("example.org/owned".to_string().into(), vec!["b".to_string()]);
/// assert_eq!(extra["example.org/static"], ["a"]);
/// assert_eq!(extra.keys().map(|k| &**k).collect::<Vec<_>>(), ["example.org/owned", "example.org/static"]);
/// ```
pub type Extra = BTreeMap<ExtraKey, Vec<String>>;

/// A key of the [`Extra`] map: a `'static` string (no allocation) or an owned one.
///
/// ```
/// use kube_authn::user::{CREDENTIAL_ID_KEY, ExtraKey, UserInfo};
/// let well_known = ExtraKey::Borrowed(CREDENTIAL_ID_KEY); // no copy
/// let read_from_request: ExtraKey = "example.org/team".to_owned().into();
/// let user = UserInfo::builder("jane")
///     .extra(well_known, ["JTI=abc"])
///     .extra(read_from_request, ["payments"])
///     .build();
/// // Lookups take a `&str` whichever kind the key is.
/// assert_eq!(user.extra()["authentication.kubernetes.io/credential-id"], ["JTI=abc"]);
/// assert_eq!(user.extra()["example.org/team"], ["payments"]);
/// ```
pub type ExtraKey = std::borrow::Cow<'static, str>;

static EMPTY_GROUPS: LazyLock<Arc<[SharedStr]>> = LazyLock::new(|| Arc::from(Vec::new()));
static EMPTY_EXTRA: LazyLock<Arc<ExtraStore>> =
    LazyLock::new(|| Arc::new(ExtraStore::Map(Extra::new())));
static AUTHENTICATED_GROUP: LazyLock<SharedStr> = LazyLock::new(|| Arc::from(ALL_AUTHENTICATED));

/// The identity of an authenticated request: name, uid, groups and extra.
///
/// ```
/// use kube_authn::user::UserInfo;
///
/// let user = UserInfo::builder("jane")
///     .uid("42")
///     .group("developers")
///     .extra("example.org/team", ["payments"])
///     .build();
/// assert_eq!(user.name(), "jane");
/// assert_eq!(user.uid(), "42");
/// assert_eq!(user.groups().collect::<Vec<_>>(), ["developers"]);
/// assert_eq!(user.extra()["example.org/team"], ["payments"]);
/// ```
pub struct UserInfo {
    /// `name` followed by `uid`, in one allocation (then, for a user whose extra is kept as
    /// text, the extra values: see [`ExtraStore::Text`]).
    text: Arc<str>,
    name_len: u32,
    /// `system:authenticated` follows `groups` (added by the group adder without copying them).
    authenticated: bool,
    groups: Arc<[SharedStr]>,
    extra: Arc<ExtraStore>,
    /// What the authenticated-group adder makes of this user (`None`: the user as it is),
    /// decided and built the first time the adder sees this user and shared after that: a
    /// static credential (token file, password file, a cached webhook answer) then costs the
    /// adder one reference-count increment per request instead of a scan of the groups and
    /// an allocation. Not part of equality, not copied by `clone`. A `OnceBox` (one pointer)
    /// rather than a `OnceLock` (two words) keeps a `UserInfo` in the same allocator size
    /// class as without the cache, which matters for a million-row token file.
    authenticated_twin: OnceBox<Option<Arc<UserInfo>>>,
}

impl UserInfo {
    /// A user with this name and no uid, groups or extra.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::new("alice");
    /// assert_eq!(u.name(), "alice");
    /// assert!(u.uid().is_empty());
    /// ```
    pub fn new(name: impl AsRef<str>) -> Self {
        Self::from_parts(name.as_ref(), "", EMPTY_GROUPS.clone(), Extra::new())
    }

    /// Starts building a user with this name.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("bob").groups(["a", "b"]).build();
    /// assert_eq!(u.groups().count(), 2);
    /// ```
    pub fn builder(name: impl Into<String>) -> UserInfoBuilder {
        UserInfoBuilder {
            name: name.into(),
            uid: String::new(),
            groups: Vec::new(),
            extra: Extra::new(),
        }
    }

    /// The anonymous user: `system:anonymous` in group `system:unauthenticated`.
    ///
    /// ```
    /// let a = kube_authn::user::UserInfo::anonymous();
    /// assert_eq!(a.name(), "system:anonymous");
    /// assert!(a.is_anonymous());
    /// ```
    pub fn anonymous() -> Arc<Self> {
        static ANON: LazyLock<Arc<UserInfo>> = LazyLock::new(|| {
            Arc::new(UserInfo::from_parts(
                ANONYMOUS,
                "",
                Arc::from(vec![Arc::<str>::from(ALL_UNAUTHENTICATED)]),
                Extra::new(),
            ))
        });
        ANON.clone()
    }

    pub(crate) fn from_parts(
        name: &str,
        uid: &str,
        groups: Arc<[SharedStr]>,
        extra: Extra,
    ) -> Self {
        let mut text = String::with_capacity(name.len() + uid.len());
        text.push_str(name);
        text.push_str(uid);
        Self::from_joined(&text, name.len(), groups, extra)
    }

    /// [`from_parts`](Self::from_parts) for a caller that already has the name followed by
    /// the uid in one string (`text[..name_len]` is the name): one allocation for both.
    /// `name_len` must be a character boundary of `text` (a name that is not, or is longer
    /// than 4 GiB, is cut to the nearest boundary below; every input path caps sizes far below
    /// that).
    pub(crate) fn from_joined(
        text: &str,
        name_len: usize,
        groups: Arc<[SharedStr]>,
        extra: Extra,
    ) -> Self {
        let extra = if extra.is_empty() {
            EMPTY_EXTRA.clone()
        } else {
            Arc::new(ExtraStore::Map(extra))
        };
        Self::from_store(text, name_len, groups, extra)
    }

    /// A user whose extra map holds one value under each of a few well-known keys, written
    /// into the same string as the name and uid: `text` is the name (`..name_len`), the uid
    /// (`name_len..uid_end`), then the values; `values` gives each key's value as a range of
    /// `text`. For up to [`TextExtra::MAX`] values, one allocation holds every string and one
    /// more the value ends (a bound service-account token's user: 6 allocations instead of 17);
    /// the [`Extra`] map is built, once, the first time [`extra`](Self::extra) is read (a
    /// request handler that never reads it never pays for it).
    ///
    /// That compact form takes up to [`TextExtra::MAX`] values, each right after the previous
    /// one (the first right after the uid), which is how this crate's authenticators write
    /// them. Anything else (a gap, more values) still gives the same user, with its map built
    /// at once. A range that is not inside `text` after the uid, or not on character
    /// boundaries, is skipped.
    pub(crate) fn from_text(
        text: &str,
        name_len: usize,
        uid_end: usize,
        groups: Arc<[SharedStr]>,
        values: &[(TextKey, std::ops::Range<usize>)],
    ) -> Self {
        let uid_end = clamp_boundary(text, uid_end);
        let name_len = name_len.min(uid_end);
        let mut store = TextExtra {
            uid_end: uid_end as u32,
            len: 0,
            keys: [TextKey::CredentialId; TextExtra::MAX],
            ends: [0; TextExtra::MAX],
            map: OnceBox::new(),
        };
        let mut end = uid_end;
        let mut built: Option<Extra> = None;
        for &(key, ref range) in values {
            if range.start < uid_end || text.get(range.clone()).is_none() {
                continue;
            }
            match &mut built {
                None if range.start == end
                    && usize::from(store.len) < TextExtra::MAX
                    && u32::try_from(range.end).is_ok() =>
                {
                    store.keys[usize::from(store.len)] = key;
                    store.ends[usize::from(store.len)] = range.end as u32;
                    store.len += 1;
                    end = range.end;
                }
                _ => {
                    let map = built.get_or_insert_with(|| store.build(text));
                    let value = text[range.clone()].to_owned();
                    map.entry(ExtraKey::Borrowed(key.as_str()))
                        .or_default()
                        .push(value);
                }
            }
        }
        let (text, extra) = match built {
            Some(map) => (&text[..uid_end], Arc::new(ExtraStore::Map(map))),
            None if store.len == 0 => (&text[..uid_end], EMPTY_EXTRA.clone()),
            None => (&text[..end], Arc::new(ExtraStore::Text(store))),
        };
        Self::from_store(text, name_len, groups, extra)
    }

    /// Whether this user's extra map is kept as text and not built yet (tests of the compact
    /// form).
    #[cfg(test)]
    fn extra_is_pending_text(&self) -> bool {
        matches!(&*self.extra, ExtraStore::Text(t) if t.map.get().is_none())
    }

    fn from_store(
        text: &str,
        name_len: usize,
        groups: Arc<[SharedStr]>,
        extra: Arc<ExtraStore>,
    ) -> Self {
        let name_len = clamp_boundary(text, name_len);
        Self {
            text: Arc::from(text),
            name_len: name_len as u32,
            authenticated: false,
            groups,
            extra,
            authenticated_twin: OnceBox::new(),
        }
    }

    /// The user name (Kubernetes `GetName()`).
    ///
    /// ```
    /// assert_eq!(kube_authn::user::UserInfo::new("x").name(), "x");
    /// ```
    pub fn name(&self) -> &str {
        &self.text[..self.name_len as usize]
    }

    /// The uid, or `""` when the authenticator provides none.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("x").uid("u-1").build();
    /// assert_eq!(u.uid(), "u-1");
    /// ```
    pub fn uid(&self) -> &str {
        let end = match &*self.extra {
            ExtraStore::Text(t) => t.uid_end as usize,
            ExtraStore::Map(_) => self.text.len(),
        };
        &self.text[self.name_len as usize..end]
    }

    /// The groups, in order. Duplicates are kept, as in Kubernetes.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("x").group("g").build();
    /// assert_eq!(u.groups().next(), Some("g"));
    /// assert_eq!(u.groups().len(), 1);
    /// ```
    pub fn groups(&self) -> Groups<'_> {
        Groups {
            listed: self.groups.iter(),
            authenticated: self.authenticated,
        }
    }

    /// The stored group list, shared by every user built from an identical list (a token file
    /// stores each distinct list once). This is storage, not the identity: it leaves out the
    /// `system:authenticated` that the group adder appends; [`groups`](Self::groups) has it.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("x").group("g").build();
    /// assert_eq!(&*u.shared_groups()[0], "g");
    /// ```
    pub fn shared_groups(&self) -> &Arc<[SharedStr]> {
        &self.groups
    }

    /// Whether the user is in `group`.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("x").group("g").build();
    /// assert!(u.in_group("g"));
    /// assert!(!u.in_group("h"));
    /// ```
    pub fn in_group(&self, group: &str) -> bool {
        self.groups().any(|g| g == group)
    }

    /// The extra map.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("x").extra("k", ["v"]).build();
    /// assert_eq!(u.extra().get("k").map(Vec::len), Some(1));
    /// ```
    pub fn extra(&self) -> &Extra {
        match &*self.extra {
            ExtraStore::Map(map) => map,
            ExtraStore::Text(t) => t.map.get_or_init(|| Box::new(t.build(&self.text))),
        }
    }

    /// Whether this is the anonymous user or a member of `system:unauthenticated`
    /// (the test Kubernetes uses for its HTTP/2 `Connection: close` mitigation).
    ///
    /// ```
    /// assert!(kube_authn::user::UserInfo::anonymous().is_anonymous());
    /// assert!(!kube_authn::user::UserInfo::new("a").is_anonymous());
    /// ```
    pub fn is_anonymous(&self) -> bool {
        self.name() == ANONYMOUS || self.in_group(ALL_UNAUTHENTICATED)
    }

    /// A new user equal to this one with `group` appended. `self` is not changed; name, uid and
    /// extra are shared, not copied.
    ///
    /// ```
    /// use kube_authn::user::UserInfo;
    /// let u = UserInfo::builder("x").group("a").build();
    /// let v = u.with_group("b");
    /// assert_eq!(u.groups().collect::<Vec<_>>(), ["a"]);
    /// assert_eq!(v.groups().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn with_group(&self, group: impl Into<SharedStr>) -> Self {
        self.with_groups_appended(std::iter::once(group.into()))
    }

    /// Like [`with_group`](Self::with_group) for several groups.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::new("x").with_groups_appended(["a".into(), "b".into()]);
    /// assert_eq!(u.groups().count(), 2);
    /// ```
    pub fn with_groups_appended(&self, groups: impl IntoIterator<Item = SharedStr>) -> Self {
        let authenticated = self.authenticated.then(|| AUTHENTICATED_GROUP.clone());
        let groups: Arc<[SharedStr]> = self
            .groups
            .iter()
            .cloned()
            .chain(authenticated)
            .chain(groups)
            .collect();
        Self {
            text: self.text.clone(),
            name_len: self.name_len,
            authenticated: false,
            groups,
            extra: self.extra.clone(),
            authenticated_twin: OnceBox::new(),
        }
    }

    /// A new user with `system:authenticated` appended (what the authenticated-group adder
    /// builds): one allocation, the group list shared with `self`.
    pub(crate) fn with_authenticated_group(&self) -> Self {
        if self.authenticated {
            return self.with_group(AUTHENTICATED_GROUP.clone());
        }
        Self {
            text: self.text.clone(),
            name_len: self.name_len,
            authenticated: true,
            groups: self.groups.clone(),
            extra: self.extra.clone(),
            authenticated_twin: OnceBox::new(),
        }
    }

    /// Kubernetes' `AuthenticatedGroupAdder` rule, decided once per user and shared: `None`
    /// for `system:anonymous` and for a user already in `system:authenticated` or
    /// `system:unauthenticated` (left as it is), otherwise the user with `system:authenticated`
    /// appended. The adder calls this on every request, and a user from a static file is the
    /// same `Arc` each time.
    pub(crate) fn authenticated_twin(self: &Arc<Self>) -> Option<Arc<Self>> {
        // Nobody else holds this user (built for this request: a JWT, a certificate): the
        // cache would die with it, so build the answer without caching (no `Box`).
        if Arc::strong_count(self) == 1 {
            return (!self.adder_exempt()).then(|| Arc::new(self.with_authenticated_group()));
        }
        // Two threads may both build it the first time; one result is kept and both return it.
        self.authenticated_twin
            .get_or_init(|| {
                let exempt = self.adder_exempt();
                Box::new((!exempt).then(|| Arc::new(self.with_authenticated_group())))
            })
            .clone()
    }

    /// Left as it is by the group adder: `system:anonymous`, or already in
    /// `system:authenticated` or `system:unauthenticated`.
    fn adder_exempt(&self) -> bool {
        self.name() == ANONYMOUS
            || self
                .groups()
                .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
    }
}

impl Clone for UserInfo {
    fn clone(&self) -> Self {
        Self {
            text: self.text.clone(),
            name_len: self.name_len,
            authenticated: self.authenticated,
            groups: self.groups.clone(),
            extra: self.extra.clone(),
            authenticated_twin: OnceBox::new(),
        }
    }
}

impl PartialEq for UserInfo {
    /// Equal name, uid, groups (in order) and extra, however they are stored.
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
            && self.uid() == other.uid()
            && self.groups().eq(other.groups())
            && self.extra() == other.extra()
    }
}

impl Eq for UserInfo {}

/// The groups of a [`UserInfo`], in order (see [`UserInfo::groups`]).
///
/// ```
/// let u = kube_authn::user::UserInfo::builder("x").groups(["a", "b"]).build();
/// let groups: kube_authn::user::Groups<'_> = u.groups();
/// assert_eq!(groups.rev().collect::<Vec<_>>(), ["b", "a"]);
/// ```
#[derive(Clone, Debug)]
pub struct Groups<'a> {
    listed: std::slice::Iter<'a, SharedStr>,
    authenticated: bool,
}

impl<'a> Iterator for Groups<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self.listed.next() {
            Some(g) => Some(g),
            None if self.authenticated => {
                self.authenticated = false;
                Some(ALL_AUTHENTICATED)
            }
            None => None,
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.listed.len() + usize::from(self.authenticated);
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Groups<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.authenticated {
            self.authenticated = false;
            return Some(ALL_AUTHENTICATED);
        }
        self.listed.next_back().map(|g| &**g)
    }
}

impl ExactSizeIterator for Groups<'_> {}

impl std::iter::FusedIterator for Groups<'_> {}

impl fmt::Debug for UserInfo {
    /// Identity data is not secret; credentials are never stored in a `UserInfo`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserInfo")
            .field("name", &self.name())
            .field("uid", &self.uid())
            .field("groups", &self.groups().collect::<Vec<_>>())
            .field("extra", self.extra())
            .finish()
    }
}

/// Builder for [`UserInfo`] (see [`UserInfo::builder`]).
///
/// ```
/// let u = kube_authn::user::UserInfo::builder("n").uid("u").group("g").build();
/// assert_eq!((u.name(), u.uid()), ("n", "u"));
/// ```
#[derive(Debug, Clone)]
pub struct UserInfoBuilder {
    name: String,
    uid: String,
    groups: Vec<SharedStr>,
    extra: Extra,
}

impl UserInfoBuilder {
    /// Sets the uid.
    ///
    /// ```
    /// assert_eq!(kube_authn::user::UserInfo::builder("n").uid("7").build().uid(), "7");
    /// ```
    pub fn uid(mut self, uid: impl Into<String>) -> Self {
        self.uid = uid.into();
        self
    }

    /// Appends one group.
    ///
    /// ```
    /// assert!(kube_authn::user::UserInfo::builder("n").group("g").build().in_group("g"));
    /// ```
    pub fn group(mut self, group: impl Into<SharedStr>) -> Self {
        self.groups.push(group.into());
        self
    }

    /// Appends groups.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("n").groups(["a", "b"]).build();
    /// assert_eq!(u.groups().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn groups<I, G>(mut self, groups: I) -> Self
    where
        I: IntoIterator<Item = G>,
        G: Into<SharedStr>,
    {
        self.groups.extend(groups.into_iter().map(Into::into));
        self
    }

    /// Appends values under an extra key (the key is kept as given; Kubernetes expects
    /// lower-case keys).
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("n").extra("k", ["a"]).extra("k", ["b"]).build();
    /// assert_eq!(u.extra()["k"], ["a", "b"]);
    /// ```
    pub fn extra<I, V>(mut self, key: impl Into<ExtraKey>, values: I) -> Self
    where
        I: IntoIterator<Item = V>,
        V: Into<String>,
    {
        self.extra
            .entry(key.into())
            .or_default()
            .extend(values.into_iter().map(Into::into));
        self
    }

    /// Builds the user.
    ///
    /// ```
    /// let u = kube_authn::user::UserInfo::builder("n").build();
    /// assert_eq!(u.name(), "n");
    /// ```
    pub fn build(self) -> UserInfo {
        let groups = if self.groups.is_empty() {
            EMPTY_GROUPS.clone()
        } else {
            Arc::from(self.groups)
        };
        UserInfo::from_parts(&self.name, &self.uid, groups, self.extra)
    }
}

/// Builds the shared group list for a user from already shared names (used by the file
/// loaders, which intern group names, and by the JWT authenticators).
pub(crate) fn shared_groups(groups: Vec<SharedStr>) -> Arc<[SharedStr]> {
    if groups.is_empty() {
        EMPTY_GROUPS.clone()
    } else {
        Arc::from(groups)
    }
}

/// The largest index `<= at` that is a character boundary of `text` and fits in a `u32`.
fn clamp_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len()).min(u32::MAX as usize);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// What [`UserInfo::extra`] reads.
enum ExtraStore {
    /// A built map (a builder's, a file's, a webhook's, a front proxy's).
    Map(Extra),
    /// Values kept in the user's text (see [`UserInfo::from_text`]).
    Text(TextExtra),
}

/// The keys a text-backed extra can hold (see [`UserInfo::from_text`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum TextKey {
    /// [`CREDENTIAL_ID_KEY`].
    CredentialId,
    /// [`POD_NAME_KEY`].
    PodName,
    /// [`POD_UID_KEY`].
    PodUid,
    /// [`NODE_NAME_KEY`].
    NodeName,
    /// [`NODE_UID_KEY`].
    NodeUid,
}

impl TextKey {
    /// The key's text.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TextKey::CredentialId => CREDENTIAL_ID_KEY,
            TextKey::PodName => POD_NAME_KEY,
            TextKey::PodUid => POD_UID_KEY,
            TextKey::NodeName => NODE_NAME_KEY,
            TextKey::NodeUid => NODE_UID_KEY,
        }
    }
}

/// Single values under [`TextKey`]s, kept in the user's text one after the other
/// from the end of the uid, and the map built from them on first read. 48 bytes, so a user
/// with a built map (whose [`ExtraStore`] is this size too) pays little for it.
struct TextExtra {
    /// Where the uid ends in the user's text (the first value starts there).
    uid_end: u32,
    len: u8,
    /// Each value's key.
    keys: [TextKey; TextExtra::MAX],
    /// Where each value ends in the user's text (the next one starts there).
    ends: [u32; TextExtra::MAX],
    map: OnceBox<Extra>,
}

impl TextExtra {
    /// The most values a text-backed extra holds (a bound service-account token has five:
    /// pod name and uid, node name and uid, credential id).
    const MAX: usize = 6;

    fn build(&self, text: &str) -> Extra {
        let mut map = Extra::new();
        let mut start = self.uid_end as usize;
        for i in 0..usize::from(self.len) {
            let end = self.ends[i] as usize;
            let key = self.keys[i].as_str();
            let value = text.get(start..end).unwrap_or_default().to_owned();
            map.entry(ExtraKey::Borrowed(key)).or_default().push(value);
            start = end;
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authenticated_flag_reads_as_a_listed_group() {
        let base = UserInfo::builder("jane")
            .uid("1")
            .groups(["a", "b"])
            .build();
        let flagged = base.with_authenticated_group();
        let listed = base.with_group(ALL_AUTHENTICATED);
        let want = ["a", "b", ALL_AUTHENTICATED];
        let cases: [(&str, &UserInfo); 2] = [("flag", &flagged), ("listed", &listed)];
        for (name, u) in cases {
            assert_eq!(u.groups().collect::<Vec<_>>(), want, "{name}");
            assert_eq!(u.groups().len(), 3, "{name}");
            assert_eq!(u.groups().next_back(), Some(ALL_AUTHENTICATED), "{name}");
            assert!(u.in_group(ALL_AUTHENTICATED), "{name}");
            assert!(format!("{u:?}").contains(ALL_AUTHENTICATED), "{name}");
        }
        assert_eq!(flagged, listed);
        assert_ne!(flagged, base);
        // The flag shares the stored list; nothing was copied or changed.
        assert!(Arc::ptr_eq(flagged.shared_groups(), base.shared_groups()));
        assert_eq!(base.groups().collect::<Vec<_>>(), ["a", "b"]);
        // Appending after the flag keeps Kubernetes' order.
        assert_eq!(
            flagged.with_group("c").groups().collect::<Vec<_>>(),
            ["a", "b", ALL_AUTHENTICATED, "c"]
        );
        assert_eq!(
            flagged
                .with_authenticated_group()
                .groups()
                .filter(|g| *g == ALL_AUTHENTICATED)
                .count(),
            2
        );
    }

    /// A user whose extra values live in its text reads exactly like the same user built with
    /// the builder: name, uid, groups, extra (built on first read, then the same map on every
    /// read), equality both ways, `Debug`, clones, appended groups and the group adder's twin.
    /// Values the compact form cannot hold (another key, a gap, too many) give the same user
    /// with its map built at once.
    #[test]
    fn text_backed_extra_reads_like_a_built_map() {
        use TextKey::{CredentialId as C, NodeName as NN, PodName as PN, PodUid as PU};
        const KC: &str = CREDENTIAL_ID_KEY;
        const KPN: &str = POD_NAME_KEY;
        const KPU: &str = POD_UID_KEY;
        const KNN: &str = NODE_NAME_KEY;
        type Case = (
            &'static str,
            &'static str,
            usize,
            usize,
            &'static [(TextKey, std::ops::Range<usize>)],
            &'static [(&'static str, &'static str)],
            bool,
        );
        // (case, text, name_len, uid_end, value ranges, expected extra, kept as text)
        let cases: [Case; 12] = [
            ("no values", "nameuid", 4, 7, &[], &[], false),
            (
                "one value",
                "nameuidJTI=1",
                4,
                7,
                &[(C, 7..12)],
                &[(KC, "JTI=1")],
                true,
            ),
            (
                "values out of key order",
                "n-u-aabbb",
                2,
                4,
                &[(PU, 4..6), (NN, 6..9)],
                &[(KNN, "bbb"), (KPU, "aa")],
                true,
            ),
            ("empty uid", "nv", 1, 1, &[(C, 1..2)], &[(KC, "v")], true),
            ("empty value", "nu", 1, 2, &[(C, 2..2)], &[(KC, "")], true),
            (
                "a gap: built at once",
                "nuaxb",
                1,
                2,
                &[(C, 2..3), (PN, 4..5)],
                &[(KC, "a"), (KPN, "b")],
                false,
            ),
            (
                "a repeated key",
                "nuab",
                1,
                2,
                &[(PN, 2..3), (PN, 3..4)],
                &[(KPN, "a")],
                true,
            ),
            (
                "more than the compact form holds",
                "nu1234567",
                1,
                2,
                &[
                    (C, 2..3),
                    (C, 3..4),
                    (C, 4..5),
                    (C, 5..6),
                    (C, 6..7),
                    (C, 7..8),
                    (C, 8..9),
                ],
                &[
                    (KC, "1"),
                    (KC, "2"),
                    (KC, "3"),
                    (KC, "4"),
                    (KC, "5"),
                    (KC, "6"),
                    (KC, "7"),
                ],
                false,
            ),
            (
                "range inside the uid is skipped",
                "nuv",
                1,
                2,
                &[(C, 1..3)],
                &[],
                false,
            ),
            (
                "range past the end is skipped",
                "nuv",
                1,
                2,
                &[(C, 2..9)],
                &[],
                false,
            ),
            (
                "range off a character boundary is skipped",
                "nué",
                1,
                2,
                &[(C, 2..3), (PN, 2..4)],
                &[(KPN, "é")],
                true,
            ),
            (
                "trailing text is dropped",
                "nuvxyz",
                1,
                2,
                &[(C, 2..3)],
                &[(KC, "v")],
                true,
            ),
        ];
        for (case, text, name_len, uid_end, values, want, as_text) in cases {
            let groups: Arc<[SharedStr]> = Arc::from(vec![SharedStr::from("g")]);
            let u = UserInfo::from_text(text, name_len, uid_end, groups, values);
            assert_eq!(u.extra_is_pending_text(), as_text, "{case}: kept as text");
            let mut b = UserInfo::builder(&text[..name_len])
                .uid(&text[name_len..uid_end])
                .group("g");
            for (k, v) in want {
                b = b.extra(*k, [*v]);
            }
            // "a repeated key": two values under one key.
            if case == "a repeated key" {
                b = b.extra(KPN, ["b"]);
            }
            let built = b.build();
            assert_eq!(u.name(), &text[..name_len], "{case}: name");
            assert_eq!(u.uid(), &text[name_len..uid_end], "{case}: uid");
            assert_eq!(u.groups().collect::<Vec<_>>(), ["g"], "{case}: groups");
            assert_eq!(u.extra(), built.extra(), "{case}: extra");
            assert!(!u.extra_is_pending_text(), "{case}: built once read");
            assert!(std::ptr::eq(u.extra(), u.extra()), "{case}: built once");
            assert_eq!(u, built, "{case}: equal to the builder's");
            assert_eq!(built, u, "{case}: symmetric");
            assert_eq!(format!("{u:?}"), format!("{built:?}"), "{case}: Debug");
            // Derived users, from a fresh (still pending) one.
            let fresh = UserInfo::from_text(text, name_len, uid_end, Arc::from(vec![]), values);
            let derived = [
                ("clone", fresh.clone()),
                ("with_group", fresh.with_group("h")),
                ("twin", fresh.with_authenticated_group()),
            ];
            for (how, d) in derived {
                assert_eq!(d.name(), u.name(), "{case}: {how} name");
                assert_eq!(d.uid(), u.uid(), "{case}: {how} uid");
                assert_eq!(d.extra(), built.extra(), "{case}: {how} extra");
            }
        }
    }

    /// What a built map costs beside the compact form: the store is one small allocation
    /// either way (a front proxy builds one per request; a token cache keeps one per entry).
    #[test]
    fn extra_store_stays_small() {
        // 48 bytes on 64-bit targets, fewer on 32-bit ones (a smaller pointer).
        assert!(std::mem::size_of::<TextExtra>() <= 48);
        assert!(std::mem::size_of::<ExtraStore>() <= 56);
    }

    #[test]
    fn name_and_uid_split_correctly() {
        let cases = [
            ("", ""),
            ("a", ""),
            ("", "b"),
            ("name", "uid"),
            ("ünï", "çødé"),
        ];
        for (name, uid) in cases {
            let u = UserInfo::builder(name).uid(uid).build();
            assert_eq!(u.name(), name, "name of {name:?}/{uid:?}");
            assert_eq!(u.uid(), uid, "uid of {name:?}/{uid:?}");
        }
    }

    #[test]
    fn with_group_does_not_mutate_original() {
        let original = Arc::new(UserInfo::builder("u").group("original").build());
        let before = format!("{original:?}");
        let added = original.with_authenticated_group();
        assert_eq!(format!("{original:?}"), before);
        assert_eq!(
            added.groups().collect::<Vec<_>>(),
            ["original", "system:authenticated"]
        );
        assert_eq!(added.name(), "u");
    }

    #[test]
    fn anonymous_identity_matches_kubernetes() {
        let a = UserInfo::anonymous();
        assert_eq!(a.name(), "system:anonymous");
        assert_eq!(a.uid(), "");
        assert_eq!(a.groups().collect::<Vec<_>>(), ["system:unauthenticated"]);
        assert!(a.extra().is_empty());
    }

    #[test]
    fn is_anonymous_checks_name_or_group() {
        assert!(UserInfo::new("system:anonymous").is_anonymous());
        assert!(
            UserInfo::builder("")
                .group("system:unauthenticated")
                .build()
                .is_anonymous()
        );
        assert!(
            !UserInfo::builder("x")
                .group("system:authenticated")
                .build()
                .is_anonymous()
        );
    }
}
