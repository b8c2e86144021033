//! Authentication errors: what an authenticator returns when a credential is *its own and bad*.
//!
//! An [`Error`] is cheap to clone (caches keep them) and carries an [`ErrorKind`] that a failure
//! handler may use (for example to answer 503 instead of 401 when a backend is down). Its text is
//! Kubernetes' own where Kubernetes defines one (`invalid bearer token`, aggregate `[a, b]`), and
//! never contains the credential: authenticators build messages from static text and from
//! data they have already validated, never from the token or password they were given.
//!
//! [`Error::aggregate`] follows apimachinery's `utilerrors.NewAggregate`: no errors is no error,
//! one error is that error, and several are flattened, de-duplicated by message (first wins),
//! joined with `", "` and wrapped in brackets unless only one distinct message remains.
//!
//! ```
//! use kube_authn::{ConfigError, Error, ErrorKind};
//!
//! // What a union of three failed authenticators reports (nested aggregates are flattened).
//! let inner = Error::aggregate(vec![Error::msg("token has expired"), Error::invalid_bearer_token()]);
//! let all = Error::aggregate(vec![inner.unwrap(), Error::msg("token has expired")]).unwrap();
//! assert_eq!(all.to_string(), "[token has expired, invalid bearer token]");
//! assert_eq!(all.kind(), ErrorKind::Aggregate);
//!
//! // A backend outage is its own kind, so a failure handler can answer 503.
//! let down = Error::from_static(ErrorKind::Unavailable, "webhook unreachable");
//! assert_eq!(down.kind(), ErrorKind::Unavailable);
//!
//! // Startup errors are a separate type.
//! assert_eq!(ConfigError::new("bad flag").to_string(), "bad flag");
//! ```

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

/// What kind of failure an [`Error`] reports.
///
/// ```
/// use kube_authn::{Error, ErrorKind};
///
/// assert_eq!(Error::msg("bad token").kind(), ErrorKind::InvalidCredential);
/// let down = Error::from_static(ErrorKind::Unavailable, "webhook unreachable");
/// assert_eq!(down.kind(), ErrorKind::Unavailable);
/// let both = Error::aggregate(vec![Error::msg("a"), down]).unwrap();
/// assert_eq!(both.kind(), ErrorKind::Aggregate);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A credential was presented and is not valid (wrong token, bad signature, expired).
    InvalidCredential,
    /// A credential was presented but could not be parsed (a malformed `Authorization` header,
    /// bad base64). Kubernetes often treats these as "no credential"; this crate fails closed.
    MalformedCredential,
    /// A backend needed to decide was unavailable (webhook down, keys not yet fetched).
    Unavailable,
    /// The authenticator failed unexpectedly (for example it panicked).
    Internal,
    /// Several authenticators failed; see [`Error::errors`].
    Aggregate,
}

/// An authentication error. See the [module docs](self).
///
/// ```
/// use kube_authn::{Error, ErrorKind};
///
/// let e = Error::aggregate(vec![Error::msg("first"), Error::msg("second"), Error::msg("first")]);
/// assert_eq!(e.unwrap().to_string(), "[first, second]");
///
/// let bad = Error::new(ErrorKind::InvalidCredential, "token has expired");
/// assert_eq!(bad.kind(), ErrorKind::InvalidCredential);
/// ```
#[derive(Clone)]
pub struct Error {
    kind: ErrorKind,
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Owned(Arc<str>),
    Source(Arc<dyn StdError + Send + Sync>),
    Aggregate(Arc<[Error]>),
}

/// Text of the error the bearer and WebSocket authenticators return when no token
/// authenticator accepted the token (Kubernetes' `invalid bearer token`).
///
/// ```
/// use kube_authn::error::INVALID_BEARER_TOKEN;
/// assert_eq!(INVALID_BEARER_TOKEN, "invalid bearer token");
/// assert_eq!(kube_authn::Error::invalid_bearer_token().to_string(), INVALID_BEARER_TOKEN);
/// ```
pub const INVALID_BEARER_TOKEN: &str = "invalid bearer token";

impl Error {
    /// An [`ErrorKind::InvalidCredential`] error with a fixed message.
    ///
    /// ```
    /// assert_eq!(kube_authn::Error::msg("nope").to_string(), "nope");
    /// ```
    pub const fn msg(message: &'static str) -> Self {
        Self {
            kind: ErrorKind::InvalidCredential,
            repr: Repr::Static(message),
        }
    }

    /// An error of `kind` with a fixed message.
    ///
    /// ```
    /// use kube_authn::{Error, ErrorKind};
    /// let e = Error::from_static(ErrorKind::Unavailable, "backend down");
    /// assert_eq!(e.kind(), ErrorKind::Unavailable);
    /// ```
    pub const fn from_static(kind: ErrorKind, message: &'static str) -> Self {
        Self {
            kind,
            repr: Repr::Static(message),
        }
    }

    /// An error of `kind` with a message. The message must not contain the credential.
    ///
    /// ```
    /// use kube_authn::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::InvalidCredential, format!("user {} disabled", "bob"));
    /// assert_eq!(e.to_string(), "user bob disabled");
    /// ```
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            repr: Repr::Owned(Arc::from(message.into())),
        }
    }

    /// An error of `kind` wrapping another error (shown by `Display`, kept as `source()`).
    ///
    /// ```
    /// use kube_authn::{Error, ErrorKind};
    /// let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out");
    /// let e = Error::from_source(ErrorKind::Unavailable, io);
    /// assert_eq!(e.to_string(), "timed out");
    /// assert!(std::error::Error::source(&e).is_some());
    /// ```
    pub fn from_source(kind: ErrorKind, source: impl StdError + Send + Sync + 'static) -> Self {
        Self {
            kind,
            repr: Repr::Source(Arc::new(source)),
        }
    }

    /// Kubernetes' `invalid bearer token`.
    ///
    /// ```
    /// assert_eq!(kube_authn::Error::invalid_bearer_token().to_string(), "invalid bearer token");
    /// ```
    pub const fn invalid_bearer_token() -> Self {
        Self::msg(INVALID_BEARER_TOKEN)
    }

    /// Combines errors as apimachinery's `NewAggregate` does: `None` for none, the error itself
    /// for one, otherwise an [`ErrorKind::Aggregate`].
    ///
    /// ```
    /// use kube_authn::Error;
    /// assert!(Error::aggregate(vec![]).is_none());
    /// let one = Error::aggregate(vec![Error::msg("a")]).unwrap();
    /// assert_eq!(one.to_string(), "a");
    /// let same = Error::aggregate(vec![Error::msg("x"), Error::msg("x")]).unwrap();
    /// assert_eq!(same.to_string(), "x");
    /// ```
    pub fn aggregate(mut errors: Vec<Error>) -> Option<Self> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(Self {
                kind: ErrorKind::Aggregate,
                repr: Repr::Aggregate(Arc::from(errors)),
            }),
        }
    }

    /// The kind of this error.
    ///
    /// ```
    /// assert_eq!(kube_authn::Error::msg("x").kind(), kube_authn::ErrorKind::InvalidCredential);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The errors inside an aggregate (empty for any other error).
    ///
    /// ```
    /// use kube_authn::Error;
    /// let e = Error::aggregate(vec![Error::msg("a"), Error::msg("b")]).unwrap();
    /// assert_eq!(e.errors().len(), 2);
    /// ```
    pub fn errors(&self) -> &[Error] {
        match &self.repr {
            Repr::Aggregate(list) => list,
            _ => &[],
        }
    }

    /// Whether this error, or any error inside it, is of `kind`.
    ///
    /// ```
    /// use kube_authn::{Error, ErrorKind};
    /// let e = Error::aggregate(vec![
    ///     Error::msg("a"),
    ///     Error::from_static(ErrorKind::Unavailable, "down"),
    /// ]).unwrap();
    /// assert!(e.contains_kind(ErrorKind::Unavailable));
    /// ```
    pub fn contains_kind(&self, kind: ErrorKind) -> bool {
        self.kind == kind || self.errors().iter().any(|e| e.contains_kind(kind))
    }

    fn visit_leaves<'a>(&'a self, f: &mut impl FnMut(&'a Error)) {
        match &self.repr {
            Repr::Aggregate(list) => list.iter().for_each(|e| e.visit_leaves(f)),
            _ => f(self),
        }
    }

    fn fmt_leaf(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Static(s) => f.write_str(s),
            Repr::Owned(s) => f.write_str(s),
            Repr::Source(e) => fmt::Display::fmt(e, f),
            Repr::Aggregate(_) => fmt::Display::fmt(self, f),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Repr::Aggregate(list) = &self.repr else {
            return self.fmt_leaf(f);
        };
        if list.len() == 1 {
            return fmt::Display::fmt(&list[0], f);
        }
        let mut seen: Vec<String> = Vec::new();
        self.visit_leaves(&mut |leaf| {
            let text = leaf.to_string();
            if !seen.contains(&text) {
                seen.push(text);
            }
        });
        match seen.as_slice() {
            [only] => f.write_str(only),
            many => write!(f, "[{}]", many.join(", ")),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("message", &self.to_string())
            .finish()
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.repr {
            Repr::Source(e) => Some(&**e as &(dyn StdError + 'static)),
            _ => None,
        }
    }
}

/// A problem found while building an authenticator from configuration (a bad file, a bad flag).
/// Unlike [`Error`], this is a startup failure, and its message names the file and line.
///
/// ```
/// let e = kube_authn::ConfigError::new("--token-auth-file: no such file");
/// assert!(e.to_string().contains("--token-auth-file"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    message: String,
}

impl ConfigError {
    /// A configuration error with this message.
    ///
    /// ```
    /// assert_eq!(kube_authn::ConfigError::new("bad").to_string(), "bad");
    /// ```
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// The category of a JSON decoding error, for error texts about remote answers: only the
/// category, since serde's message may quote pieces of the body (a token, a secret's data).
#[cfg(feature = "remote")]
pub(crate) fn json_category(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Io => "I/O error",
        serde_json::error::Category::Syntax => "invalid JSON",
        serde_json::error::Category::Data => "unexpected JSON shape",
        serde_json::error::Category::Eof => "truncated JSON",
    }
}

/// A failed file operation as Go's `*fs.PathError` shows it: `<op> <path>: <errno text>`, the
/// errno text being the C library's, lower-cased as Go's `syscall.Errno` strings are
/// (`open /x: no such file or directory`); an error without an errno shows its own text.
pub(crate) fn go_path_error(op: &str, path: &std::path::Path, e: &std::io::Error) -> String {
    let text = match e.raw_os_error() {
        Some(code) => {
            let full = std::io::Error::from_raw_os_error(code).to_string();
            let text = full.split(" (os error").next().unwrap_or_default();
            let mut chars = text.chars();
            chars
                .next()
                .map(|first| first.to_lowercase().chain(chars).collect())
                .unwrap_or_default()
        }
        None => e.to_string(),
    };
    format!("{op} {}: {text}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_path_error_texts() {
        let path = std::path::Path::new("/etc/x");
        let cases = [
            (
                std::io::Error::from_raw_os_error(libc::ENOENT),
                "open /etc/x: no such file or directory",
            ),
            (
                std::io::Error::from_raw_os_error(libc::EACCES),
                "open /etc/x: permission denied",
            ),
            (
                std::io::Error::from_raw_os_error(libc::EISDIR),
                "open /etc/x: is a directory",
            ),
            (
                std::io::Error::other("Not an errno"),
                "open /etc/x: Not an errno",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(go_path_error("open", path, &e), want);
        }
    }

    fn agg(errors: Vec<Error>) -> String {
        Error::aggregate(errors)
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn aggregate_text_follows_apimachinery() {
        let nested = Error::aggregate(vec![Error::msg("b"), Error::msg("a")]).unwrap();
        let cases: Vec<(&str, Vec<Error>, &str)> = vec![
            ("empty", vec![], ""),
            ("one", vec![Error::msg("first")], "first"),
            (
                "two",
                vec![Error::msg("first"), Error::msg("second")],
                "[first, second]",
            ),
            (
                "duplicates collapse, first wins order",
                vec![Error::msg("x"), Error::msg("y"), Error::msg("x")],
                "[x, y]",
            ),
            (
                "identical collapse to unbracketed",
                vec![
                    Error::msg("invalid bearer token"),
                    Error::msg("invalid bearer token"),
                ],
                "invalid bearer token",
            ),
            (
                "nested aggregates flatten",
                vec![Error::msg("a"), nested.clone()],
                "[a, b]",
            ),
            (
                "single nested aggregate keeps its own text",
                vec![nested],
                "[b, a]",
            ),
        ];
        for (name, errors, want) in cases {
            assert_eq!(agg(errors), want, "case {name}");
        }
    }

    #[test]
    fn kind_of_aggregate_and_contains() {
        let e = Error::aggregate(vec![
            Error::msg("a"),
            Error::from_static(ErrorKind::Unavailable, "down"),
        ])
        .unwrap();
        assert_eq!(e.kind(), ErrorKind::Aggregate);
        assert!(e.contains_kind(ErrorKind::Unavailable));
        assert!(!e.contains_kind(ErrorKind::Internal));
    }
}
