//! Static token file (`--token-auth-file`; k8s `pkg/authentication/token/tokenfile`).
//!
//! # Format
//!
//! CSV read exactly as Go's `encoding/csv` reads it (see the crate-private `csv` module: no
//! comments, no trimming, strict quotes, CRLF normalised, a BOM is data), one row per token:
//!
//! ```text
//! token,user name,user uid[,"group1,group2"[,ignored...]]
//! ```
//!
//! * a row with fewer than 3 columns makes the whole file invalid:
//!   `token file '<path>' must have at least 3 columns (token, user name, user uid), found <n>`;
//! * an empty token is skipped with the warning
//!   `empty token has been found in token file '<path>', record number '<n>'`;
//! * a repeated token gives `duplicate token has been found in token file '<path>', record number '<n>'`
//!   and **the last row wins**;
//! * a token with a byte outside ASCII loads but can never be sent in an `Authorization` header
//!   (only in a WebSocket token subprotocol, which is base64url), since `Authorization` header
//!   values are ASCII ([`crate::request`] refuses others): it is warned about with
//!   `token in token file '<path>', record number '<n>' has bytes outside ASCII and can never be sent in an Authorization header`;
//!   so is a token with a space (the bearer token ends there), a tab or a control byte (refused
//!   in the header): `… has a space, tab or control byte and can never be sent in an
//!   Authorization header`, and one longer than [`crate::request::MAX_TOKEN_LEN`]: `… is longer
//!   than 65536 bytes, the longest token a request may carry, and can never be sent` (the
//!   warnings never quote the token);
//! * the fourth column is split on `,` into groups, nothing trimmed (`""` is one empty group);
//!   columns after the fourth are ignored;
//! * an empty file is valid and holds no tokens.
//!
//! Records are numbered as Kubernetes numbers them (1-based, counting rows with at least three
//! columns). Warnings are logged (`tracing`) and kept ([`TokenFile::warnings`]).
//!
//! Deliberate differences (see `docs/compatibility.md`): a user name, uid or groups column that is
//! not UTF-8 is an error (Go would accept the bytes), the file is capped at
//! [`DEFAULT_MAX_FILE_BYTES`], a row at 4096 groups and the whole file at 2^24 group-list
//! entries (`token file '<path>', record number '<n>': more than 16777216 group entries in the file`;
//! group lists shared by several rows count once), and the file is reloaded when it changes
//! (kube-apiserver reads it once at start-up); a broken new version, or a deleted file, keeps
//! the previous tokens (an empty file is valid and revokes them all).
//!
//! # Secrets and timing
//!
//! Tokens are not kept: each is replaced at load time by a keyed 128-bit digest (SipHash-2-4
//! under a per-process random key; see the crate-private `digest` module for why and for the
//! alternatives measured), and a lookup digests the presented token and probes a table keyed by
//! digests. No comparison ever touches raw token bytes, so response timing depends only on a
//! keyed PRF output. The file is streamed ([`FileReloader::load_streaming`]) rather than read
//! whole. The CSV reader's line and record buffers, which hold each token until it is
//! digested, are zeroed when they outgrow an allocation and after loading; the 64 KiB read
//! buffer of the reloader is freed, not zeroed, and neither is the caller's input to
//! [`TokenFile::from_csv`].
//!
//! # Cost
//!
//! A lookup is one SipHash of the token, one directory read and a short scan of a sorted
//! table, one `Arc` clone and, for a file, one `arc-swap` load: no allocation, no lock, a
//! ready future. Measured as thread CPU time on this shared 2-core machine
//! (`cargo bench --bench static_token`, 10,000 tokens of 43 characters; `docs/performance.md`,
//! 2026-11-28): 44 ns per hit and 36 ns per miss through [`TokenAuthenticator`], of which
//! ~28 ns is the SipHash-2-4 digest (SHA-256 of the same token alone costs 57 ns); 73 ns
//! through [`crate::request::Bearer`] (header parsing included).
//!
//! The table is a sorted array of (digest, record, user) with a directory indexed by the
//! digest's top bits (about 36 bytes per token at a million tokens, against 50 for a
//! `HashMap`), built with one sort. Users with identical group lists share one list. Loading a
//! one-million-row file (114 MiB of 43-character tokens, e-mail user names, UUID uids, groups
//! from a small set; `cargo bench --bench token_file_load`) takes 0.64 s of CPU with a peak RSS
//! of 205 MiB (1.79× the file); the two allocations per user that [`UserInfo`] needs are most
//! of it.
//!
//! ```
//! use kube_authn::token::file::TokenFile;
//! use kube_authn::authenticator::{Context, TokenAuthenticator};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("tokens.csv");
//! std::fs::write(&path, "31ada4fd-adec-460c-809a-9e56ceb75269,alice,1000,\"admins,dev\"\n").unwrap();
//! let tokens = TokenFile::open(&path).unwrap();
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let ctx = Context::default();
//! let hit = tokens.authenticate_token("31ada4fd-adec-460c-809a-9e56ceb75269", &ctx).await.unwrap().unwrap();
//! assert_eq!(hit.user.name(), "alice");
//! assert_eq!(hit.user.groups().collect::<Vec<_>>(), ["admins", "dev"]);
//! assert!(tokens.authenticate_token("wrong", &ctx).await.unwrap().is_none());
//! # });
//! ```

use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::authenticator::{AuthFuture, Context, Response, TokenAuthenticator};
use crate::csv::{self, Users};
use crate::digest::{DigestTable, Domain, Entry, digest};
use crate::error::ConfigError;
use crate::reload::{FileReloader, Reloaded, WatchTask};
use crate::request::MAX_TOKEN_LEN;
use crate::user::UserInfo;

/// Largest token file [`TokenFile::open`] reads: 256 MiB (about two million typical rows).
/// Larger files are refused with an error naming the limit; use
/// [`TokenFile::open_with_limit`] to change it.
///
/// ```
/// assert_eq!(kube_authn::token::file::DEFAULT_MAX_FILE_BYTES, 256 * 1024 * 1024);
/// ```
pub const DEFAULT_MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The parsed content: digests of tokens to shared users.
struct TokenTable {
    map: DigestTable<Arc<UserInfo>>,
    warnings: Vec<String>,
}

#[derive(Clone)]
enum Source {
    Memory {
        name: Arc<str>,
        table: Arc<TokenTable>,
    },
    File(FileReloader<TokenTable>),
}

/// A token authenticator backed by a static token file or an in-memory token list.
/// See the [module docs](self).
///
/// ```
/// use kube_authn::token::file::TokenFile;
/// let t = TokenFile::from_csv(b"tok,alice,1\n", "inline").unwrap();
/// assert_eq!(t.len(), 1);
/// // Debug output never shows tokens.
/// assert!(!format!("{t:?}").contains("tok,"));
/// ```
#[derive(Clone)]
pub struct TokenFile {
    source: Source,
}

/// Why a record is warned about, in the order warnings for one record are given.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Note {
    Empty,
    Duplicate,
    NotAscii,
    NotVisible,
    TooLong,
}

/// Parses token-file CSV from `src`; `capacity` is a guess of the number of rows (at most
/// [`csv::MAX_ROWS_HINT`] is preallocated); `limits` is [`csv::LIMITS`]
/// outside tests.
fn parse<R: BufRead>(
    src: R,
    capacity: usize,
    path: &str,
    limits: csv::Limits,
) -> Result<TokenTable, ConfigError> {
    let mut entries = Vec::with_capacity(capacity.min(csv::MAX_ROWS_HINT));
    let mut notes: Vec<(u32, Note)> = Vec::new();
    let mut users = Users::new("token", path, limits);
    let mut reader = csv::Reader::new(src);
    let mut record_num = 0usize;
    while let Some(record) = reader.read_record().map_err(|e| csv::read_error(e, path))? {
        if record.len() < 3 {
            return Err(ConfigError::new(format!(
                "token file '{path}' must have at least 3 columns (token, user name, user uid), found {}",
                record.len()
            )));
        }
        record_num += 1;
        let number = u32::try_from(record_num).unwrap_or(u32::MAX);
        let token = record.get(0);
        if token.is_empty() {
            users.count_record(record_num)?;
            notes.push((number, Note::Empty));
            continue;
        }
        // A token the bearer header cannot carry loads, but can never be presented in an
        // `Authorization` header (a WebSocket token subprotocol, base64url, can still carry it):
        // `Authorization` values are ASCII (crate::request refuses others), the token ends at
        // a space, a tab in it is refused, and `HeaderValue` refuses other control bytes; no
        // request carries a token longer than `MAX_TOKEN_LEN`.
        if !token.iter().all(|b| (b'!'..=b'~').contains(b)) {
            if !token.is_ascii() {
                notes.push((number, Note::NotAscii));
            }
            if token.iter().any(|&b| b <= b' ' || b == 0x7f) {
                notes.push((number, Note::NotVisible));
            }
        }
        if token.len() > MAX_TOKEN_LEN {
            notes.push((number, Note::TooLong));
        }
        let name = csv::text(record.get(1), "user name", "token", path, record_num)?;
        let uid = csv::text(record.get(2), "user uid", "token", path, record_num)?;
        let groups = if record.len() >= 4 {
            Some(csv::groups(record.get(3), "token", path, record_num)?)
        } else {
            None
        };
        entries.push(Entry {
            digest: digest(Domain::Token, token),
            record: number,
            value: Arc::new(users.user(name, uid, groups, record_num)?),
        });
    }
    drop(reader);
    let (map, repeats) = DigestTable::build(entries);
    // Warnings in file order, as Kubernetes logs them while reading.
    notes.extend(repeats.into_iter().map(|n| (n, Note::Duplicate)));
    notes.sort_unstable();
    let mut warnings = csv::Warnings::default();
    for (n, note) in notes {
        warnings.push(|| match note {
            Note::Empty => {
                format!("empty token has been found in token file '{path}', record number '{n}'")
            }
            Note::Duplicate => format!(
                "duplicate token has been found in token file '{path}', record number '{n}'"
            ),
            Note::NotAscii => format!(
                "token in token file '{path}', record number '{n}' has bytes outside ASCII and can never be sent in an Authorization header"
            ),
            Note::NotVisible => format!(
                "token in token file '{path}', record number '{n}' has a space, tab or control byte and can never be sent in an Authorization header"
            ),
            Note::TooLong => format!(
                "token in token file '{path}', record number '{n}' is longer than {MAX_TOKEN_LEN} bytes, the longest token a request may carry, and can never be sent"
            ),
        });
    }
    Ok(TokenTable {
        map,
        warnings: warnings.finish("token", path),
    })
}

impl TokenFile {
    /// Loads a token file (at most [`DEFAULT_MAX_FILE_BYTES`]). Any error in the file is an
    /// error here; later reloads ([`reload_now`](Self::reload_now), [`watch`](Self::watch))
    /// keep the previous tokens when the new file is broken.
    ///
    /// ```
    /// let err = kube_authn::token::file::TokenFile::open("/nonexistent/tokens.csv").unwrap_err();
    /// assert!(err.to_string().contains("/nonexistent/tokens.csv"));
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::open_with_limit(path, DEFAULT_MAX_FILE_BYTES)
    }

    /// Like [`open`](Self::open) with a different size limit in bytes.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("t.csv");
    /// std::fs::write(&p, "token,user,uid\n").unwrap();
    /// let err = kube_authn::token::file::TokenFile::open_with_limit(&p, 4).unwrap_err();
    /// assert!(err.to_string().contains("larger than the limit of 4 bytes"));
    /// ```
    pub fn open_with_limit(path: impl AsRef<Path>, max_bytes: u64) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let reloader = FileReloader::load_streaming(path, max_bytes, move |src, len| {
            // A typical row is 60–150 bytes; the guess only avoids early regrowth.
            parse(src, csv::rows_guess(len, 96), &name, csv::LIMITS)
        })?;
        Ok(Self {
            source: Source::File(reloader),
        })
    }

    /// Parses token-file CSV from memory; `name` stands for the path in messages.
    ///
    /// ```
    /// use kube_authn::token::file::TokenFile;
    /// let err = TokenFile::from_csv(b"token4\n", "inline").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "token file 'inline' must have at least 3 columns (token, user name, user uid), found 1"
    /// );
    /// ```
    pub fn from_csv(bytes: &[u8], name: &str) -> Result<Self, ConfigError> {
        let table = parse(bytes, csv::record_hint(bytes), name, csv::LIMITS)?;
        Ok(Self {
            source: Source::Memory {
                name: name.into(),
                table: Arc::new(table),
            },
        })
    }

    /// Builds the authenticator from in-memory tokens (k8s `tokenfile.New`, used for the
    /// loopback token). Empty tokens are skipped with a warning (a deliberate difference: no
    /// request can carry one); for repeated tokens the last wins.
    ///
    /// ```
    /// use kube_authn::token::file::TokenFile;
    /// use kube_authn::user::UserInfo;
    /// let t = TokenFile::from_tokens([("loopback-token", UserInfo::new("system:apiserver"))]);
    /// assert_eq!(t.len(), 1);
    /// ```
    pub fn from_tokens<I, T, U>(tokens: I) -> Self
    where
        I: IntoIterator<Item = (T, U)>,
        T: AsRef<str>,
        U: Into<Arc<UserInfo>>,
    {
        let mut entries = Vec::new();
        let mut warnings = csv::Warnings::default();
        for (i, (token, user)) in tokens.into_iter().enumerate() {
            let token = token.as_ref();
            if token.is_empty() {
                warnings.push(|| "empty token given to the in-memory token authenticator".into());
                continue;
            }
            entries.push(Entry {
                digest: digest(Domain::Token, token.as_bytes()),
                record: u32::try_from(i + 1).unwrap_or(u32::MAX),
                value: user.into(),
            });
        }
        let (map, _) = DigestTable::build(entries);
        Self {
            source: Source::Memory {
                name: "<memory>".into(),
                table: Arc::new(TokenTable {
                    map,
                    warnings: warnings.finish("token", "<memory>"),
                }),
            },
        }
    }

    fn with_table<R>(&self, f: impl FnOnce(&TokenTable) -> R) -> R {
        match &self.source {
            Source::Memory { table, .. } => f(table),
            Source::File(reloader) => f(&reloader.current()),
        }
    }

    /// How many tokens are loaded.
    ///
    /// ```
    /// let t = kube_authn::token::file::TokenFile::from_csv(b"", "empty").unwrap();
    /// assert!(t.is_empty());
    /// ```
    pub fn len(&self) -> usize {
        self.with_table(|t| t.map.len())
    }

    /// Whether no tokens are loaded.
    ///
    /// ```
    /// assert!(kube_authn::token::file::TokenFile::from_csv(b"\n", "x").unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Warnings from the current content's load (at most 100 are kept; all are logged).
    ///
    /// ```
    /// let t = kube_authn::token::file::TokenFile::from_csv(b",user5,uid5\n", "f").unwrap();
    /// assert_eq!(t.warnings(), ["empty token has been found in token file 'f', record number '1'"]);
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        self.with_table(|t| t.warnings.clone())
    }

    /// The file, if this was loaded from one.
    ///
    /// ```
    /// assert!(kube_authn::token::file::TokenFile::from_csv(b"", "x").unwrap().path().is_none());
    /// ```
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            Source::Memory { .. } => None,
            Source::File(r) => Some(r.path()),
        }
    }

    /// Re-reads the file now (if it changed); a broken new file keeps the previous tokens and
    /// returns the error the first time it is seen (the same broken content again is
    /// `Ok(Reloaded::Unchanged)`: it is not parsed and logged on every check). In-memory
    /// sources never change.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("t.csv");
    /// std::fs::write(&p, "a,alice,1\n").unwrap();
    /// let t = kube_authn::token::file::TokenFile::open(&p).unwrap();
    /// std::fs::write(&p, "a,alice,1\nb,bob,2\n").unwrap();
    /// t.reload_now().unwrap();
    /// assert_eq!(t.len(), 2);
    /// ```
    pub fn reload_now(&self) -> Result<Reloaded, ConfigError> {
        match &self.source {
            Source::Memory { .. } => Ok(Reloaded::Unchanged),
            Source::File(r) => r.reload_now(),
        }
    }

    /// Polls the file every `interval` and reloads it when it changes (see
    /// [`FileReloader::spawn_watch`]); must be called inside a Tokio runtime. Returns `None`
    /// for in-memory sources. Polling stops when the returned task is dropped.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("t.csv");
    /// std::fs::write(&p, "a,alice,1\n").unwrap();
    /// let t = kube_authn::token::file::TokenFile::open(&p).unwrap();
    /// let _task = t.watch(std::time::Duration::from_secs(10)).unwrap();
    /// # });
    /// ```
    ///
    /// Dropping the result at once is refused under `#![deny(unused_must_use)]`:
    ///
    /// ```compile_fail
    /// #![deny(unused_must_use)]
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("t.csv");
    /// # std::fs::write(&p, "a,alice,1\n").unwrap();
    /// let t = kube_authn::token::file::TokenFile::open(&p).unwrap();
    /// t.watch(std::time::Duration::from_secs(10)); // would stop at once
    /// # });
    /// ```
    #[must_use = "dropping the WatchTask stops reloading"]
    pub fn watch(&self, interval: Duration) -> Option<WatchTask> {
        match &self.source {
            Source::Memory { .. } => None,
            Source::File(r) => Some(r.spawn_watch(interval)),
        }
    }

    /// How many reloads failed (the previous tokens were kept).
    ///
    /// ```
    /// assert_eq!(kube_authn::token::file::TokenFile::from_csv(b"", "x").unwrap().reload_failures(), 0);
    /// ```
    pub fn reload_failures(&self) -> u64 {
        match &self.source {
            Source::Memory { .. } => 0,
            Source::File(r) => r.failures(),
        }
    }

    /// Looks a token up (what [`TokenAuthenticator::authenticate_token`] does, without the
    /// future).
    ///
    /// ```
    /// let t = kube_authn::token::file::TokenFile::from_csv(b"tok,alice,1\n", "x").unwrap();
    /// assert_eq!(t.lookup("tok").unwrap().name(), "alice");
    /// assert!(t.lookup("tok2").is_none());
    /// ```
    pub fn lookup(&self, token: &str) -> Option<Arc<UserInfo>> {
        let d = digest(Domain::Token, token.as_bytes());
        self.with_table(|t| t.map.get(&d).cloned())
    }
}

impl TokenAuthenticator for TokenFile {
    fn authenticate_token<'a>(&'a self, token: &'a str, _ctx: &'a Context) -> AuthFuture<'a> {
        AuthFuture::ready(Ok(self.lookup(token).map(Response::new)))
    }

    fn always_ready(&self) -> bool {
        true
    }
}

impl fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TokenFile");
        match &self.source {
            Source::Memory { name, .. } => d.field("source", name),
            Source::File(r) => d.field("source", r),
        };
        d.field("tokens", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token no `Authorization` header can carry loads (as in Kubernetes) and is warned about, once per
    /// reason, without the token in the text: a byte outside ASCII, a space, tab or control
    /// byte (the `Authorization` header refuses the first, cuts the token at a space and
    /// refuses a tab; `HeaderValue` refuses the other control bytes), a token longer than
    /// [`crate::request::MAX_TOKEN_LEN`]. Every byte from `!` to `~` is fine.
    #[test]
    fn tokens_no_request_can_carry_are_warned_about() {
        let at =
            |n: usize, why: &str| format!("token in token file 'f', record number '{n}' {why}");
        const NOT_ASCII: &str =
            "has bytes outside ASCII and can never be sent in an Authorization header";
        const NOT_VISIBLE: &str =
            "has a space, tab or control byte and can never be sent in an Authorization header";
        const TOO_LONG: &str = "is longer than 65536 bytes, the longest token a request may carry, and can never be sent";
        let visible: String = (b'!'..=b'~')
            .filter(|&b| b != b',' && b != b'"')
            .map(char::from)
            .collect();
        let longest = "s".repeat(crate::request::MAX_TOKEN_LEN);
        let too_long = "s".repeat(crate::request::MAX_TOKEN_LEN + 1);
        let cases: Vec<(&str, Vec<u8>, Vec<String>)> = vec![
            ("visible ASCII", format!("{visible},u,1\n").into(), vec![]),
            (
                "the longest token",
                format!("{longest},u,1\n").into(),
                vec![],
            ),
            (
                "a space",
                b"s3cr3t tok,u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "a trailing space",
                b"s3cr3t ,u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "a tab",
                b"s3cr3t\ttok,u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "a NUL",
                b"s3cr3t\x00tok,u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "a control byte",
                b"s3cr3t\x01tok,u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "DEL",
                b"s3cr3t\x7ftok,u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "a quoted newline",
                b"\"s3cr3t\ntok\",u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "a carriage return",
                b"\"s3cr3t\rtok\",u,1\n".to_vec(),
                vec![at(1, NOT_VISIBLE)],
            ),
            (
                "outside ASCII",
                "s3cr3t\u{f6}tok,u,1\n".into(),
                vec![at(1, NOT_ASCII)],
            ),
            (
                "outside ASCII and a space",
                "s3cr3t \u{f6}tok,u,1\n".into(),
                vec![at(1, NOT_ASCII), at(1, NOT_VISIBLE)],
            ),
            (
                "too long",
                format!("{too_long},u,1\n").into(),
                vec![at(1, TOO_LONG)],
            ),
            (
                "too long, with a tab",
                format!("{too_long}\t,u,1\n").into(),
                vec![at(1, NOT_VISIBLE), at(1, TOO_LONG)],
            ),
            (
                "in file order with the other warnings",
                b",u,0\ns3cr3t tok,u,1\ns3cr3t tok,u,2\nok,u,3\n".to_vec(),
                vec![
                    "empty token has been found in token file 'f', record number '1'".into(),
                    at(2, NOT_VISIBLE),
                    "duplicate token has been found in token file 'f', record number '3'".into(),
                    at(3, NOT_VISIBLE),
                ],
            ),
        ];
        for (name, content, want) in cases {
            let file = TokenFile::from_csv(&content, "f").unwrap();
            let warnings = file.warnings();
            assert_eq!(warnings, want, "case {name}");
            assert!(!file.is_empty(), "case {name}: the token still loads");
            for warning in &warnings {
                assert!(!warning.contains("s3cr3t"), "case {name}: {warning}");
                assert!(!warning.contains("sss"), "case {name}: {warning}");
            }
        }
    }

    /// The file-wide record cap (lowered here): every row counts, one with an empty token
    /// (skipped) too; past the cap the file is refused, naming the record.
    #[test]
    fn token_file_record_cap() {
        let limits = csv::Limits {
            group_entries: usize::MAX,
            records: 3,
        };
        let cases: [(&str, &str, Result<usize, &str>); 4] = [
            ("at the cap", "a,u,1\nb,u,2\nc,u,3\n", Ok(3)),
            (
                "one past the cap",
                "a,u,1\nb,u,2\nc,u,3\nd,u,4\n",
                Err("token file 'f', record number '4': more than 3 records in the file"),
            ),
            (
                "rows with an empty token count too",
                "a,u,1\n,u,2\nb,u,3\n,u,4\n",
                Err("token file 'f', record number '4': more than 3 records in the file"),
            ),
            (
                "duplicates count",
                "a,u,1\na,u,2\na,u,3\na,u,4\n",
                Err("token file 'f', record number '4': more than 3 records in the file"),
            ),
        ];
        for (name, content, want) in cases {
            let got = parse(content.as_bytes(), 0, "f", limits)
                .map(|t| t.map.len())
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "case {name}");
        }
        assert_eq!(csv::MAX_RECORDS, 1 << 22);
    }

    /// The file-wide group budget (lowered here so the file stays small): rows of distinct
    /// comma-heavy group columns, each past the interned lists a list of its own, are refused
    /// once their entries pass the budget; a realistic file, whose rows share a few lists,
    /// loads whatever its length.
    #[test]
    fn token_file_group_budget() {
        const BUDGET: usize = 4096 * 20;
        // `t{i},u,1,",,,…(4095 commas),{i}"`: 4096 entries per row, every list distinct.
        let heavy = |rows: usize| -> String {
            let commas = ",".repeat(4095);
            (0..rows)
                .map(|i| format!("t{i},u,1,\"{commas}{i}\"\n"))
                .collect()
        };
        let realistic: String = (0..20_000)
            .map(|i| {
                let groups = ["system:authenticated,dev", "ops", "dev,qa,ops", "a,b,c,d"][i % 4];
                format!("token-{i:05},user{i}@example.com,{i},\"{groups}\"\n")
            })
            .collect();
        let cases: [(&str, String, Result<usize, String>); 4] = [
            ("heavy rows within the budget", heavy(20), Ok(20)),
            (
                "heavy rows past the budget",
                heavy(21),
                Err(format!(
                    "token file 'f', record number '21': more than {BUDGET} group entries in the file"
                )),
            ),
            ("realistic rows", realistic, Ok(20_000)),
            ("empty", String::new(), Ok(0)),
        ];
        for (name, content, want) in cases {
            let got = parse(
                content.as_bytes(),
                0,
                "f",
                csv::Limits {
                    group_entries: BUDGET,
                    records: usize::MAX,
                },
            )
            .map(|t| t.map.len())
            .map_err(|e| e.to_string());
            assert_eq!(got, want, "case {name}");
        }
        // The real budget and its text.
        assert_eq!(csv::MAX_GROUP_ENTRIES, 1 << 24);
        assert_eq!(
            parse(
                &b"t,u,1,\"a,b\"\n"[..],
                0,
                "f",
                csv::Limits {
                    group_entries: 1,
                    records: usize::MAX
                }
            )
            .err()
            .map(|e| e.to_string()),
            Some(
                "token file 'f', record number '1': more than 1 group entries in the file"
                    .to_owned()
            )
        );
    }
}
