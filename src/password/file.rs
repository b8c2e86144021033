//! Static password file (`--basic-auth-file`, removed from Kubernetes in 1.19; the last
//! `plugin/pkg/authenticator/password/passwordfile`).
//!
//! Same CSV reader as the token file (Go `encoding/csv` semantics), one row per user:
//!
//! ```text
//! password,user name,user uid[,"group1,group2"[,ignored...]]
//! ```
//!
//! * fewer than 3 columns makes the file invalid:
//!   `password file '<path>' must have at least 3 columns (password, user name, user uid), found <n>`;
//! * rows are keyed by **user name**; a repeated name gives
//!   `duplicate username '<name>' has been found in password file '<path>', record number '<n>'`
//!   and the last row wins;
//! * empty passwords are **not** skipped (a user with an empty password logs in with an empty
//!   password, as in Kubernetes);
//! * a password that is not valid UTF-8 loads but can never match, since
//!   [`crate::request::Basic`] refuses credentials that are not UTF-8: it is warned about with
//!   `password in password file '<path>', record number '<n>' is not valid UTF-8 and can never be sent in an Authorization header`;
//! * groups as in the token file, with the same limits (4096 per row, 2^24 group-list entries
//!   per file: `password file '<path>', record number '<n>': more than 16777216 group entries in the file`);
//! * a deleted file keeps the previous users on reload; an empty file is valid and removes
//!   them all.
//!
//! # Secrets and timing
//!
//! Neither passwords nor user names are kept raw: the lookup map is keyed by a keyed digest
//! of user name and password together (SipHash-2-4, a per-process random key; see the
//! crate-private `digest` module), so a check is one digest and one probe for a random-looking
//! key. A wrong password for a known user and any password for an unknown user take exactly the
//! same path, a miss on a key that depends on the password too: neither the answer's time nor
//! the memory it touches says whether the user exists (Kubernetes returned early for unknown
//! users, which revealed which user names exist). Only a correct credential is a hit, which
//! the answer reveals anyway. Loading keys a second map by user name, for "last one wins" and
//! the duplicate warnings, and drops it.
//!
//! Wrong password and unknown user are both "not mine" (`Ok(None)`); through
//! [`crate::request::Basic`] that becomes `invalid username/password combination`.
//!
//! ```
//! use kube_authn::password::file::PasswordFile;
//! use kube_authn::authenticator::{Context, PasswordAuthenticator};
//!
//! let passwords = PasswordFile::from_csv(b"s3cret,alice,1000,admins\n", "inline").unwrap();
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let ctx = Context::default();
//! let ok = passwords.authenticate_password("alice", "s3cret", &ctx).await.unwrap().unwrap();
//! assert_eq!(ok.user.uid(), "1000");
//! assert!(passwords.authenticate_password("alice", "guess", &ctx).await.unwrap().is_none());
//! # });
//! ```

use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::authenticator::{AuthFuture, Context, PasswordAuthenticator, Response};
use crate::csv::{self, Users};
use crate::digest::{Digest, DigestMap, Domain, credential_digest, digest, digest_map};
use crate::error::ConfigError;
use crate::reload::{FileReloader, Reloaded, WatchTask};
use crate::user::UserInfo;

/// Largest password file [`PasswordFile::open`] reads: 256 MiB.
///
/// ```
/// assert_eq!(kube_authn::password::file::DEFAULT_MAX_FILE_BYTES, 256 * 1024 * 1024);
/// ```
pub const DEFAULT_MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

struct PasswordTable {
    /// Keyed by the digest of user name and password together.
    map: DigestMap<Arc<UserInfo>>,
    warnings: Vec<String>,
}

/// Parses password-file CSV from `src`; `capacity` is a guess of the number of rows (at most
/// [`csv::MAX_ROWS_HINT`] is preallocated); `limits` is [`csv::LIMITS`]
/// outside tests.
fn parse<R: BufRead>(
    src: R,
    capacity: usize,
    path: &str,
    limits: csv::Limits,
) -> Result<PasswordTable, ConfigError> {
    let mut warnings = csv::Warnings::default();
    // By user name while loading: the last row of a user wins, with Kubernetes' warning.
    let mut by_user: DigestMap<(Digest, Arc<UserInfo>)> =
        digest_map(capacity.min(csv::MAX_ROWS_HINT));
    let mut users = Users::new("password", path, limits);
    let mut reader = csv::Reader::new(src);
    let mut record_num = 0usize;
    while let Some(record) = reader.read_record().map_err(|e| csv::read_error(e, path))? {
        if record.len() < 3 {
            return Err(ConfigError::new(format!(
                "password file '{path}' must have at least 3 columns (password, user name, user uid), found {}",
                record.len()
            )));
        }
        record_num += 1;
        let name = csv::text(record.get(1), "user name", "password", path, record_num)?;
        let uid = csv::text(record.get(2), "user uid", "password", path, record_num)?;
        let groups = if record.len() >= 4 {
            Some(csv::groups(record.get(3), "password", path, record_num)?)
        } else {
            None
        };
        let password = record.get(0);
        // Basic credentials are decoded as UTF-8 (crate::request::Basic refuses others), so
        // such a password loads but can never be presented.
        let unsendable = std::str::from_utf8(password).is_err();
        let entry = (
            credential_digest(name.as_bytes(), password),
            Arc::new(users.user(name, uid, groups, record_num)?),
        );
        if by_user
            .insert(digest(Domain::User, name.as_bytes()), entry)
            .is_some()
        {
            warnings.push(|| format!(
                "duplicate username '{name}' has been found in password file '{path}', record number '{record_num}'"
            ));
        }
        if unsendable {
            warnings.push(|| format!(
                "password in password file '{path}', record number '{record_num}' is not valid UTF-8 and can never be sent in an Authorization header"
            ));
        }
    }
    let mut map: DigestMap<Arc<UserInfo>> = by_user.into_values().collect();
    map.shrink_to_fit();
    Ok(PasswordTable {
        map,
        warnings: warnings.finish("password", path),
    })
}

#[derive(Clone)]
enum Source {
    Memory {
        name: Arc<str>,
        table: Arc<PasswordTable>,
    },
    File(FileReloader<PasswordTable>),
}

/// A password authenticator backed by a static password file. See the [module docs](self).
///
/// ```
/// use kube_authn::password::file::PasswordFile;
/// let p = PasswordFile::from_csv(b"hunter2,alice,1\n", "inline").unwrap();
/// assert_eq!(p.len(), 1);
/// assert!(!format!("{p:?}").contains("hunter2"));
/// ```
#[derive(Clone)]
pub struct PasswordFile {
    source: Source,
}

impl PasswordFile {
    /// Loads a password file (at most [`DEFAULT_MAX_FILE_BYTES`]); reloads keep the previous
    /// content when the new file is broken.
    ///
    /// ```
    /// assert!(kube_authn::password::file::PasswordFile::open("/nonexistent").is_err());
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::open_with_limit(path, DEFAULT_MAX_FILE_BYTES)
    }

    /// Like [`open`](Self::open) with a different size limit in bytes.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("p.csv");
    /// std::fs::write(&p, "pw,user,uid\n").unwrap();
    /// assert!(kube_authn::password::file::PasswordFile::open_with_limit(&p, 3).is_err());
    /// ```
    pub fn open_with_limit(path: impl AsRef<Path>, max_bytes: u64) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let reloader = FileReloader::load_streaming(path, max_bytes, move |src, len| {
            parse(src, csv::rows_guess(len, 64), &name, csv::LIMITS)
        })?;
        Ok(Self {
            source: Source::File(reloader),
        })
    }

    /// Parses password-file CSV from memory; `name` stands for the path in messages.
    ///
    /// ```
    /// use kube_authn::password::file::PasswordFile;
    /// let err = PasswordFile::from_csv(b"pw,user\n", "inline").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "password file 'inline' must have at least 3 columns (password, user name, user uid), found 2"
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

    fn with_table<R>(&self, f: impl FnOnce(&PasswordTable) -> R) -> R {
        match &self.source {
            Source::Memory { table, .. } => f(table),
            Source::File(reloader) => f(&reloader.current()),
        }
    }

    /// How many users are loaded.
    ///
    /// ```
    /// assert_eq!(kube_authn::password::file::PasswordFile::from_csv(b"", "x").unwrap().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.with_table(|t| t.map.len())
    }

    /// Whether no users are loaded.
    ///
    /// ```
    /// assert!(kube_authn::password::file::PasswordFile::from_csv(b"", "x").unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Warnings from the current content's load (at most 100 kept; all are logged).
    ///
    /// ```
    /// let p = kube_authn::password::file::PasswordFile::from_csv(b"a,bob,1\nb,bob,2\n", "f").unwrap();
    /// assert_eq!(p.warnings(), ["duplicate username 'bob' has been found in password file 'f', record number '2'"]);
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        self.with_table(|t| t.warnings.clone())
    }

    /// The file, if this was loaded from one.
    ///
    /// ```
    /// use kube_authn::password::file::PasswordFile;
    /// assert!(PasswordFile::from_csv(b"", "x").unwrap().path().is_none());
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("passwords.csv");
    /// std::fs::write(&path, "pw,alice,1\n").unwrap();
    /// assert_eq!(PasswordFile::open(&path).unwrap().path(), Some(path.as_path()));
    /// ```
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            Source::Memory { .. } => None,
            Source::File(r) => Some(r.path()),
        }
    }

    /// How many reloads failed (the previous users were kept).
    ///
    /// ```
    /// use kube_authn::password::file::PasswordFile;
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("passwords.csv");
    /// std::fs::write(&path, "pw,alice,1\n").unwrap();
    /// let p = PasswordFile::open(&path).unwrap();
    /// assert_eq!(p.reload_failures(), 0);
    /// std::fs::write(&path, "pw,alice\n").unwrap(); // two columns: refused
    /// assert!(p.reload_now().is_err());
    /// assert_eq!(p.reload_failures(), 1);
    /// assert!(p.check("alice", "pw").is_some()); // the previous users are kept
    /// ```
    pub fn reload_failures(&self) -> u64 {
        match &self.source {
            Source::Memory { .. } => 0,
            Source::File(r) => r.failures(),
        }
    }

    /// Re-reads the file now (if it changed); a broken new file keeps the previous content
    /// and returns the error the first time it is seen. In-memory sources never change.
    ///
    /// ```
    /// use kube_authn::password::file::PasswordFile;
    /// use kube_authn::reload::Reloaded;
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("passwords.csv");
    /// std::fs::write(&path, "pw,alice,1\n").unwrap();
    /// let p = PasswordFile::open(&path).unwrap();
    /// assert_eq!(p.reload_now().unwrap(), Reloaded::Unchanged);
    /// std::fs::write(&path, "pw2,alice,1\nx,bob,2\n").unwrap();
    /// assert_eq!(p.reload_now().unwrap(), Reloaded::Updated);
    /// assert_eq!(p.len(), 2);
    /// assert!(p.check("alice", "pw").is_none() && p.check("alice", "pw2").is_some());
    /// let memory = PasswordFile::from_csv(b"", "x").unwrap();
    /// assert_eq!(memory.reload_now().unwrap(), Reloaded::Unchanged);
    /// ```
    pub fn reload_now(&self) -> Result<Reloaded, ConfigError> {
        match &self.source {
            Source::Memory { .. } => Ok(Reloaded::Unchanged),
            Source::File(r) => r.reload_now(),
        }
    }

    /// Polls the file every `interval` (inside a Tokio runtime); `None` for in-memory sources.
    /// Polling stops when the returned task is dropped.
    ///
    /// ```
    /// use kube_authn::password::file::PasswordFile;
    /// use std::time::Duration;
    /// let p = PasswordFile::from_csv(b"", "x").unwrap();
    /// assert!(p.watch(Duration::from_secs(1)).is_none());
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("passwords.csv");
    /// std::fs::write(&path, "pw,alice,1\n").unwrap();
    /// let p = PasswordFile::open(&path).unwrap();
    /// let _task = p.watch(Duration::from_millis(5)).unwrap();
    /// let tmp = dir.path().join("passwords.tmp");
    /// std::fs::write(&tmp, "new,alice,1\n").unwrap();
    /// std::fs::rename(&tmp, &path).unwrap();
    /// tokio::time::timeout(Duration::from_secs(10), async {
    ///     while p.check("alice", "new").is_none() {
    ///         tokio::time::sleep(Duration::from_millis(5)).await;
    ///     }
    /// })
    /// .await
    /// .expect("the watch task reloads the file");
    /// assert!(p.check("alice", "pw").is_none());
    /// # });
    /// ```
    #[must_use = "dropping the WatchTask stops reloading"]
    pub fn watch(&self, interval: Duration) -> Option<WatchTask> {
        match &self.source {
            Source::Memory { .. } => None,
            Source::File(r) => Some(r.spawn_watch(interval)),
        }
    }

    /// Checks a user name and password (what [`PasswordAuthenticator::authenticate_password`]
    /// does, without the future). A wrong password and an unknown user take the same path.
    ///
    /// ```
    /// let p = kube_authn::password::file::PasswordFile::from_csv(b",empty,1\n", "x").unwrap();
    /// assert!(p.check("empty", "").is_some()); // empty passwords are not skipped
    /// assert!(p.check("empty", "x").is_none());
    /// ```
    pub fn check(&self, user: &str, password: &str) -> Option<Arc<UserInfo>> {
        let key = credential_digest(user.as_bytes(), password.as_bytes());
        self.with_table(|t| t.map.get(&key).cloned())
    }
}

impl PasswordAuthenticator for PasswordFile {
    fn authenticate_password<'a>(
        &'a self,
        user: &'a str,
        password: &'a str,
        _ctx: &'a Context,
    ) -> AuthFuture<'a> {
        AuthFuture::ready(Ok(self.check(user, password).map(Response::new)))
    }

    fn always_ready(&self) -> bool {
        true
    }
}

impl fmt::Debug for PasswordFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("PasswordFile");
        match &self.source {
            Source::Memory { name, .. } => d.field("source", name),
            Source::File(r) => d.field("source", r),
        };
        d.field("users", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file-wide group budget (lowered here so the file stays small) refuses rows of
    /// distinct comma-heavy group columns past it, with the password file's text; a realistic
    /// file, whose rows share a few lists, loads.
    #[test]
    fn password_file_group_budget() {
        const BUDGET: usize = 4096 * 20;
        let heavy = |rows: usize| -> String {
            let commas = ",".repeat(4095);
            (0..rows)
                .map(|i| format!("pw,u{i},1,\"{commas}{i}\"\n"))
                .collect()
        };
        let realistic: String = (0..20_000)
            .map(|i| format!("pw{i},user{i},{i},\"{}\"\n", ["dev,qa", "ops"][i % 2]))
            .collect();
        let cases: [(&str, String, Result<usize, String>); 3] = [
            ("heavy rows within the budget", heavy(20), Ok(20)),
            (
                "heavy rows past the budget",
                heavy(21),
                Err(format!(
                    "password file 'p', record number '21': more than {BUDGET} group entries in the file"
                )),
            ),
            ("realistic rows", realistic, Ok(20_000)),
        ];
        for (name, content, want) in cases {
            let got = parse(
                content.as_bytes(),
                0,
                "p",
                csv::Limits {
                    group_entries: BUDGET,
                    records: usize::MAX,
                },
            )
            .map(|t| t.map.len())
            .map_err(|e| e.to_string());
            assert_eq!(got, want, "case {name}");
        }
    }

    /// The file-wide record cap (lowered here), with the password file's text.
    #[test]
    fn password_file_record_cap() {
        let limits = csv::Limits {
            group_entries: usize::MAX,
            records: 2,
        };
        let got = |content: &str| {
            parse(content.as_bytes(), 0, "p", limits)
                .map(|t| t.map.len())
                .map_err(|e| e.to_string())
        };
        assert_eq!(got("a,u,1\nb,v,2\n"), Ok(2));
        assert_eq!(
            got("a,u,1\nb,v,2\nc,w,3\n"),
            Err("password file 'p', record number '3': more than 2 records in the file".to_owned())
        );
    }

    /// The lookup key depends on user name and password together: a wrong password for a
    /// known user is the same miss as an unknown user (no path that only known users take), and
    /// the name's length is part of the key (`("ab", "c")` is not `("a", "bc")`).
    #[test]
    fn the_lookup_key_is_user_and_password_together() {
        let p = PasswordFile::from_csv(b"c,ab,1\npw,alice,2\n", "f").unwrap();
        for (user, password, ok) in [
            ("alice", "pw", true),
            ("alice", "no", false),
            ("mallory", "pw", false),
            ("ab", "c", true),
            ("a", "bc", false),
            ("abc", "", false),
        ] {
            assert_eq!(p.check(user, password).is_some(), ok, "{user}/{password}");
        }
        let key = |u: &str, pw: &str| credential_digest(u.as_bytes(), pw.as_bytes());
        p.with_table(|t| {
            assert_eq!(t.map.len(), 2);
            // Nothing keyed by the user name alone remains to be found.
            assert!(!t.map.contains_key(&digest(Domain::User, b"alice")));
            assert!(t.map.contains_key(&key("alice", "pw")));
            assert!(!t.map.contains_key(&key("alice", "no")));
        });
    }
}
