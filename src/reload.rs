//! Files that reload when they change on disk (token and password files, CA bundles).
//!
//! A [`FileReloader`] holds the parsed content of a file behind an atomic pointer: request
//! paths read it without a lock ([`FileReloader::current`]), and a reload swaps in a fully
//! parsed new value at once. A new file that cannot be read or parsed (missing, empty where that
//! is invalid, too large, broken) **keeps the previous content**; the failure is logged (path and
//! reason; parse errors never quote file content) and counted ([`FileReloader::failures`]).
//!
//! Change detection polls, which also works for the symlink swaps Kubernetes uses to update
//! mounted ConfigMaps and Secrets (inotify watches on such paths are easy to lose): every
//! interval the file's size, modification time and inode are compared with the last load,
//! and every [`FULL_CHECK_EVERY`] intervals the content itself is re-read and compared, so a
//! same-size edit within one timestamp tick is still seen. Content that did not change is not
//! parsed again. Kubernetes' `dynamiccertificates` does the same with fsnotify plus a
//! one-minute resync.
//!
//! ```
//! use kube_authn::reload::FileReloader;
//! use kube_authn::ConfigError;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("n.txt");
//! std::fs::write(&path, "1").unwrap();
//! let parse = |b: &[u8]| -> Result<u32, ConfigError> {
//!     std::str::from_utf8(b).ok().and_then(|s| s.trim().parse().ok()).ok_or_else(|| ConfigError::new("not a number"))
//! };
//! let file = FileReloader::load(&path, 1024, parse).unwrap();
//! assert_eq!(**file.current(), 1);
//!
//! std::fs::write(&path, "22").unwrap();
//! file.reload_if_changed();
//! assert_eq!(**file.current(), 22);
//!
//! std::fs::write(&path, "broken").unwrap();
//! assert!(file.reload_if_changed().is_err());
//! assert_eq!(**file.current(), 22); // the last good content stays
//! assert_eq!(file.failures(), 1);
//! ```

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use arc_swap::{ArcSwap, Guard};

use crate::digest::{ContentHasher, Digest};
use crate::error::ConfigError;

/// Every this many polls the content is read and compared even if size, time and inode are
/// unchanged.
///
/// ```
/// use kube_authn::reload::{FULL_CHECK_EVERY, FileReloader, Reloaded};
/// use kube_authn::ConfigError;
/// assert_eq!(FULL_CHECK_EVERY, 60);
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f");
/// std::fs::write(&path, "aa").unwrap();
/// let file = FileReloader::load(&path, 10, |b| Ok::<_, ConfigError>(b.to_vec())).unwrap();
///
/// // A same-size edit that keeps the modification time: the metadata looks unchanged ...
/// let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
/// std::fs::write(&path, "bb").unwrap();
/// std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
/// for _ in 1..FULL_CHECK_EVERY {
///     assert_eq!(file.reload_if_changed().unwrap(), Reloaded::Unchanged);
/// }
/// assert_eq!(**file.current(), b"aa");
/// // ... until the periodic full check reads the content.
/// assert_eq!(file.reload_if_changed().unwrap(), Reloaded::Updated);
/// assert_eq!(**file.current(), b"bb");
/// ```
pub const FULL_CHECK_EVERY: u32 = 60;

/// How a reloader turns the file into a value: from the whole content in memory, or from a
/// stream (so a large file is never held in memory whole; see
/// [`FileReloader::load_streaming`]).
enum Parser<T> {
    Bytes(BytesParser<T>),
    Stream(StreamParser<T>),
}

type BytesParser<T> = Box<dyn Fn(&[u8]) -> Result<T, ConfigError> + Send + Sync>;
type StreamParser<T> = Box<dyn Fn(&mut dyn BufRead, u64) -> Result<T, ConfigError> + Send + Sync>;

/// A check of a parsed value against state outside the file (another file's current content),
/// run after the parse and the check that the file did not change while it was read, right
/// before the value is swapped in (nothing between can fail), under the reloader's lock.
///
/// A version it refuses is not remembered as a version that does not parse is: it is checked
/// again once [`epoch`](Admit::epoch) changed (at the next poll), at each full check, and when
/// the file changes.
pub(crate) trait Admit<T>: Send + Sync {
    /// Lets `value` go live, or refuses it. An `Ok` means `value` is swapped in right after.
    fn admit(&self, value: &T) -> Result<(), ConfigError>;
    /// A counter that changes whenever what [`admit`](Admit::admit) depends on may have
    /// changed (read before `admit`).
    fn epoch(&self) -> u64;
    /// Called after an admitted value was swapped in.
    fn went_live(&self);
}

/// How a reloader words a failed `open` or `read` of its file (at the first load and at every
/// reload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IoText {
    /// Rust's I/O error text: `open <path>: No such file or directory (os error 2)`.
    Rust,
    /// Go's `*fs.PathError`, as `os.ReadFile` returns it: `open <path>: no such file or
    /// directory`, `read <path>: is a directory` (the files whose reloads kube-apiserver
    /// reports with that text: the CA bundles).
    Go,
}

impl IoText {
    fn error(self, op: &str, path: &Path, e: &std::io::Error) -> ConfigError {
        ConfigError::new(match self {
            IoText::Rust => format!("{op} {}: {e}", path.display()),
            IoText::Go => crate::error::go_path_error(op, path, e),
        })
    }
}

/// Reads at most `max_bytes + 1` bytes and hashes everything read.
struct HashingReader {
    inner: std::io::Take<File>,
    hasher: ContentHasher,
    read: u64,
}

impl Read for HashingReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.write(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

/// Streams the file through `parse` (if given) while hashing it; the hash equals
/// [`content_hash`] of the whole content. Over `max_bytes` is an error.
fn stream<T>(
    path: &Path,
    max_bytes: u64,
    parse: Option<&StreamParser<T>>,
) -> Result<(Option<T>, Digest), ConfigError> {
    // Streamed files (token and password files) keep Rust's texts.
    let io = IoText::Rust;
    let file = File::open(path).map_err(|e| io.error("open", path, &e))?;
    let len_hint = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader = std::io::BufReader::with_capacity(
        64 * 1024,
        HashingReader {
            inner: file.take(max_bytes.saturating_add(1)),
            hasher: ContentHasher::new(),
            read: 0,
        },
    );
    let too_large = || {
        ConfigError::new(format!(
            "{} is larger than the limit of {max_bytes} bytes",
            path.display()
        ))
    };
    if len_hint > max_bytes {
        return Err(too_large());
    }
    let value = match parse {
        // A file that grew past the limit while being read reports that, not the parse error
        // its truncated end caused.
        Some(parse) => match parse(&mut reader, len_hint) {
            Ok(v) => Some(v),
            Err(_) if reader.get_ref().read > max_bytes => return Err(too_large()),
            Err(e) => return Err(e),
        },
        None => None,
    };
    // Hash whatever the parser did not read.
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(|e| io.error("read", path, &e))?;
    let inner = reader.into_inner();
    if inner.read > max_bytes {
        return Err(too_large());
    }
    Ok((value, inner.hasher.finish()))
}

/// What a reload check did.
///
/// ```
/// use kube_authn::reload::{FileReloader, Reloaded};
/// use kube_authn::ConfigError;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f");
/// std::fs::write(&path, "one").unwrap();
/// let file = FileReloader::load(&path, 64, |b| Ok::<_, ConfigError>(b.len())).unwrap();
/// assert_eq!(file.reload_if_changed().unwrap(), Reloaded::Unchanged);
/// std::fs::write(&path, "three").unwrap();
/// assert_eq!(file.reload_if_changed().unwrap(), Reloaded::Updated);
/// assert_eq!(file.reload_now().unwrap(), Reloaded::Unchanged); // same content again
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reloaded {
    /// The file had not changed.
    Unchanged,
    /// New content was parsed and swapped in.
    Updated,
}

/// A file whose parsed content is reloaded when it changes: readers get the current value
/// without a lock, and a new file that fails to load keeps the previous value. Change
/// detection and failure handling are described in the [module docs](self).
///
/// Clones share the same content and counters.
///
/// ```
/// use kube_authn::reload::FileReloader;
/// use kube_authn::ConfigError;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("users");
/// std::fs::write(&path, "alice\nbob\n").unwrap();
/// let users = FileReloader::load(&path, 1024, |b| {
///     let text = std::str::from_utf8(b).map_err(|_| ConfigError::new("not UTF-8"))?;
///     Ok(text.lines().map(str::to_owned).collect::<Vec<_>>())
/// })
/// .unwrap();
/// let reader = users.clone();
///
/// std::fs::write(&path, "carol\n").unwrap();
/// users.reload_if_changed().unwrap();
/// assert_eq!(**reader.current(), ["carol"]);
/// assert_eq!(reader.reloads(), 1);
///
/// std::fs::write(&path, [0xff, 0xfe]).unwrap(); // not UTF-8: refused, old content kept
/// assert!(users.reload_if_changed().is_err());
/// assert_eq!(**reader.current(), ["carol"]);
/// assert_eq!(reader.failures(), 1);
/// ```
pub struct FileReloader<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for FileReloader<T> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

struct Shared<T> {
    path: PathBuf,
    max_bytes: u64,
    parse: Parser<T>,
    admit: Option<Box<dyn Admit<T>>>,
    /// How `open`/`read` errors of the file are worded.
    io: IoText,
    current: ArcSwap<T>,
    state: Mutex<State>,
    failures: AtomicU64,
    reloads: AtomicU64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

struct State {
    stamp: Option<Stamp>,
    content_hash: Digest,
    /// Hash of the last content that failed to parse, so it is not parsed (and logged) again.
    /// (Not of content [`Admit`] refused: that depends on more than the content.)
    failed_hash: Option<Digest>,
    /// The last check's new content was refused by [`Admit`], at this [`Admit::epoch`].
    refused_at: Option<u64>,
    /// The last check that looked at the file found it missing, unreadable or unparsable (a
    /// check that finds the stamp unchanged leaves it as it was).
    failing: bool,
    polls: u32,
}

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let meta = std::fs::metadata(path)?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Ok(Stamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        inode,
    })
}

/// Whether a file changed is decided by this hash alone (at a full check, and always when
/// the metadata changed), so it must not collide on demand: someone who can influence both
/// versions of a token file could otherwise make a revocation look like no change, and it would
/// silently not apply. Hence a keyed 128-bit PRF (SipHash-2-4 under the per-process random key,
/// the crate-private `digest` module), not an unkeyed or 64-bit hash.
fn content_hash(bytes: &[u8]) -> Digest {
    let mut h = ContentHasher::new();
    h.write(bytes);
    h.finish()
}

fn read_bounded(path: &Path, max_bytes: u64, io: IoText) -> Result<Vec<u8>, ConfigError> {
    let file = File::open(path).map_err(|e| io.error("open", path, &e))?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io.error("read", path, &e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(ConfigError::new(format!(
            "{} is larger than the limit of {max_bytes} bytes",
            path.display()
        )));
    }
    Ok(bytes)
}

impl<T: Send + Sync + 'static> FileReloader<T> {
    /// Reads and parses `path` (at most `max_bytes`); the first load must succeed.
    ///
    /// ```
    /// use kube_authn::{reload::FileReloader, ConfigError};
    /// let missing = FileReloader::load("/nonexistent/file", 10, |_| Ok::<_, ConfigError>(()));
    /// assert!(missing.is_err());
    /// ```
    pub fn load(
        path: impl Into<PathBuf>,
        max_bytes: u64,
        parse: impl Fn(&[u8]) -> Result<T, ConfigError> + Send + Sync + 'static,
    ) -> Result<Self, ConfigError> {
        Self::load_with(path, max_bytes, parse, None, IoText::Rust)
    }

    /// Like [`load`](Self::load), with every value (the first included) checked by `admit`
    /// (if given) before it goes live, and the file's `open`/`read` errors worded as `io`
    /// says, at this load and at every reload.
    pub(crate) fn load_with(
        path: impl Into<PathBuf>,
        max_bytes: u64,
        parse: impl Fn(&[u8]) -> Result<T, ConfigError> + Send + Sync + 'static,
        admit: Option<Box<dyn Admit<T>>>,
        io: IoText,
    ) -> Result<Self, ConfigError> {
        let path = path.into();
        let before = stamp(&path).ok();
        let bytes = read_bounded(&path, max_bytes, io)?;
        let value = parse(&bytes)?;
        if let Some(admit) = &admit {
            admit.admit(&value)?;
        }
        let hash = content_hash(&bytes);
        drop(bytes);
        let mut loaded = Self::new(
            path,
            max_bytes,
            Parser::Bytes(Box::new(parse)),
            admit,
            value,
            before,
            hash,
        );
        if let Some(shared) = Arc::get_mut(&mut loaded.shared) {
            shared.io = io;
        }
        if let Some(admit) = &loaded.shared.admit {
            admit.went_live();
        }
        Ok(loaded)
    }

    /// Like [`load`](Self::load), but the file is streamed through `parse` (given a buffered
    /// reader and the file's length as a size hint) instead of being read into memory first,
    /// so loading a large file does not hold a copy of it. Change detection is the same (the
    /// content hash is computed while streaming; a changed file is read twice: once to hash,
    /// once to parse).
    ///
    /// ```
    /// use kube_authn::{reload::FileReloader, ConfigError};
    /// use std::io::BufRead;
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "a\nb\n").unwrap();
    /// let lines = FileReloader::load_streaming(&p, 1024, |r: &mut dyn BufRead, _len_hint: u64| {
    ///     Ok::<_, ConfigError>(r.lines().count())
    /// }).unwrap();
    /// assert_eq!(**lines.current(), 2);
    /// ```
    pub fn load_streaming(
        path: impl Into<PathBuf>,
        max_bytes: u64,
        parse: impl Fn(&mut dyn BufRead, u64) -> Result<T, ConfigError> + Send + Sync + 'static,
    ) -> Result<Self, ConfigError> {
        let path = path.into();
        let before = stamp(&path).ok();
        let parse: StreamParser<T> = Box::new(parse);
        let (value, hash) = stream(&path, max_bytes, Some(&parse))?;
        let value = value.ok_or_else(|| ConfigError::new("internal: no value parsed"))?;
        Ok(Self::new(
            path,
            max_bytes,
            Parser::Stream(parse),
            None,
            value,
            before,
            hash,
        ))
    }

    fn new(
        path: PathBuf,
        max_bytes: u64,
        parse: Parser<T>,
        admit: Option<Box<dyn Admit<T>>>,
        value: T,
        stamp: Option<Stamp>,
        content_hash: Digest,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                path,
                max_bytes,
                parse,
                admit,
                io: IoText::Rust,
                current: ArcSwap::from_pointee(value),
                state: Mutex::new(State {
                    stamp,
                    content_hash,
                    failed_hash: None,
                    refused_at: None,
                    failing: false,
                    polls: 0,
                }),
                failures: AtomicU64::new(0),
                reloads: AtomicU64::new(0),
            }),
        }
    }

    /// The current content. Lock-free; hold the guard only briefly.
    ///
    /// ```
    /// # use kube_authn::{reload::FileReloader, ConfigError};
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |b| Ok::<_, ConfigError>(b.len())).unwrap();
    /// assert_eq!(**f.current(), 1);
    /// ```
    pub fn current(&self) -> Guard<Arc<T>> {
        self.shared.current.load()
    }

    /// The current content as an owned pointer.
    ///
    /// ```
    /// # use kube_authn::{reload::FileReloader, ConfigError};
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |b| Ok::<_, ConfigError>(b.len())).unwrap();
    /// let snapshot: std::sync::Arc<usize> = f.current_arc();
    /// ```
    pub fn current_arc(&self) -> Arc<T> {
        self.shared.current.load_full()
    }

    /// The current content, read through a handle that does not keep the reloader alive
    /// (`None` once it is gone): for a check in another reloader's parser, which that
    /// reloader owns (a strong handle there would make a reference cycle).
    pub(crate) fn current_weak(&self) -> impl Fn() -> Option<Arc<T>> + Send + Sync + 'static {
        let weak = Arc::downgrade(&self.shared);
        move || weak.upgrade().map(|shared| shared.current.load_full())
    }

    /// Whether the last check found the file missing, unreadable or unparsable: a failure
    /// that a later check finding nothing new (the stamp unchanged, the failing version again)
    /// keeps, and that one finding the loaded content again (`Unchanged`) or new content ends.
    #[cfg(feature = "remote")]
    pub(crate) fn last_check_failed(&self) -> bool {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .failing
    }

    /// The watched path.
    ///
    /// ```
    /// # use kube_authn::{reload::FileReloader, ConfigError};
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |_| Ok::<_, ConfigError>(())).unwrap();
    /// assert_eq!(f.path(), p);
    /// ```
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// How many reloads failed (the previous content was kept).
    ///
    /// ```
    /// # use kube_authn::{reload::FileReloader, ConfigError};
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |_| Ok::<_, ConfigError>(())).unwrap();
    /// assert_eq!(f.failures(), 0);
    /// ```
    pub fn failures(&self) -> u64 {
        self.shared.failures.load(Ordering::Relaxed)
    }

    /// How many reloads swapped in new content.
    ///
    /// ```
    /// # use kube_authn::{reload::FileReloader, ConfigError};
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |_| Ok::<_, ConfigError>(())).unwrap();
    /// assert_eq!(f.reloads(), 0);
    /// ```
    pub fn reloads(&self) -> u64 {
        self.shared.reloads.load(Ordering::Relaxed)
    }

    /// Checks the file once and reloads it if it changed. On failure the previous content is
    /// kept, the failure is logged and counted, and the error is returned.
    ///
    /// ```
    /// # use kube_authn::{reload::{FileReloader, Reloaded}, ConfigError};
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |b| Ok::<_, ConfigError>(b.len())).unwrap();
    /// assert_eq!(f.reload_if_changed().unwrap(), Reloaded::Unchanged);
    /// ```
    pub fn reload_if_changed(&self) -> Result<Reloaded, ConfigError> {
        self.shared.check(false)
    }

    /// Reads and compares the content now, whatever the file's metadata says.
    ///
    /// ```
    /// # use kube_authn::{reload::{FileReloader, Reloaded}, ConfigError};
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |b| Ok::<_, ConfigError>(b.len())).unwrap();
    /// assert_eq!(f.reload_now().unwrap(), Reloaded::Unchanged);
    /// ```
    pub fn reload_now(&self) -> Result<Reloaded, ConfigError> {
        self.shared.check(true)
    }

    /// Polls the file every `interval` on the Tokio runtime (in a blocking task, since reading
    /// and parsing a large file takes a while); an interval under [`MIN_POLL_INTERVAL`] is taken
    /// as that (a zero interval would stop the task before its first poll). The task stops when
    /// the returned handle or the last clone of this reloader is dropped.
    ///
    /// ```
    /// # use kube_authn::{reload::FileReloader, ConfigError};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
    /// let f = FileReloader::load(&p, 10, |b| Ok::<_, ConfigError>(b.len())).unwrap();
    /// let _task = f.spawn_watch(std::time::Duration::from_secs(1));
    /// # });
    /// ```
    #[must_use = "dropping the WatchTask stops reloading"]
    pub fn spawn_watch(&self, interval: Duration) -> WatchTask {
        // Errors are logged and counted inside `check`.
        WatchTask::poll(interval, Arc::downgrade(&self.shared), |shared| {
            let _ = shared.check(false);
        })
    }
}

/// The shortest polling interval [`FileReloader::spawn_watch`] uses.
///
/// ```
/// assert_eq!(kube_authn::reload::MIN_POLL_INTERVAL, std::time::Duration::from_millis(1));
/// ```
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(1);

impl<T> Shared<T> {
    /// Whether the file changed while it was read (its stamp before the read is `before`): a
    /// writer rewriting it in place was caught in
    /// the middle, and what was parsed may be a valid-looking prefix (a token list cut short, a
    /// groups column cut to another group). Nothing is swapped in; the next poll sees the new
    /// stamp and reads the file again. (A writer paused in the middle of an in-place write
    /// cannot be told from a finished one: write files atomically, by rename.)
    fn torn(&self, before: Option<Stamp>) -> bool {
        // Only the stamp: a read shorter than the stat size proves nothing on files whose size
        // is not their content's (procfs-like or some FUSE mounts), which would never reload.
        let after = stamp(&self.path).ok();
        let torn = before.is_none() || after != before;
        if torn {
            tracing::info!(path = %self.path.display(), "file changed while it was read; reading it again at the next check");
        }
        torn
    }

    /// Swaps in a parsed `value` that [`Admit`] (if any) lets through. A refusal is not a
    /// failure of the content alone: `failed_hash` is cleared and `refused_at` set.
    fn go_live(
        &self,
        value: T,
        failed_hash: &mut Option<Digest>,
        refused_at: &mut Option<u64>,
    ) -> Result<(), ConfigError> {
        if let Some(admit) = &self.admit {
            let epoch = admit.epoch();
            if let Err(e) = admit.admit(&value) {
                *failed_hash = None;
                *refused_at = Some(epoch);
                return Err(e);
            }
        }
        self.current.store(Arc::new(value));
        if let Some(admit) = &self.admit {
            admit.went_live();
        }
        Ok(())
    }

    fn check(&self, force: bool) -> Result<Reloaded, ConfigError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.polls = state.polls.wrapping_add(1);
        let now = stamp(&self.path).ok();
        let full = force || state.polls.is_multiple_of(FULL_CHECK_EVERY);
        // A version `admit` refused is checked again once what it checks against changed.
        let retry = match (&self.admit, state.refused_at) {
            (Some(admit), Some(epoch)) => admit.epoch() != epoch,
            _ => false,
        };
        // Unchanged stamp, or still missing (`None` twice: the failure was reported when the
        // file went away, and is again at each full check, not at every poll: a token file
        // checked per request must not log per request).
        if !full && !retry && now == state.stamp {
            return Ok(Reloaded::Unchanged);
        }
        let mut failed_hash = None;
        let mut refused_at = None;
        let result = match &self.parse {
            Parser::Bytes(parse) => {
                read_bounded(&self.path, self.max_bytes, self.io).and_then(|bytes| {
                    let hash = content_hash(&bytes);
                    if hash == state.content_hash || Some(hash) == state.failed_hash {
                        return Ok((Reloaded::Unchanged, hash));
                    }
                    failed_hash = Some(hash);
                    let value = parse(&bytes)?;
                    if self.torn(now) {
                        return Ok((Reloaded::Unchanged, state.content_hash));
                    }
                    self.go_live(value, &mut failed_hash, &mut refused_at)?;
                    Ok((Reloaded::Updated, hash))
                })
            }
            Parser::Stream(parse) => {
                stream::<T>(&self.path, self.max_bytes, None).and_then(|(_, hash)| {
                    if hash == state.content_hash || Some(hash) == state.failed_hash {
                        return Ok((Reloaded::Unchanged, hash));
                    }
                    failed_hash = Some(hash);
                    // The file may change between the two reads: keep the hash of what was
                    // actually parsed.
                    // (If parsing fails, the first hash is remembered as the failed version.)
                    let (value, parsed_hash) = stream(&self.path, self.max_bytes, Some(parse))?;
                    failed_hash = Some(parsed_hash);
                    let value =
                        value.ok_or_else(|| ConfigError::new("internal: no value parsed"))?;
                    if self.torn(now) {
                        return Ok((Reloaded::Unchanged, state.content_hash));
                    }
                    self.go_live(value, &mut failed_hash, &mut refused_at)?;
                    Ok((Reloaded::Updated, parsed_hash))
                })
            }
        };
        state.stamp = now;
        match result {
            Ok((outcome, hash)) => {
                // Read: the loaded content (or new content) is good; the failing version again
                // is still failing. (Torn reads report the loaded content's hash.)
                state.failing = outcome == Reloaded::Unchanged && hash != state.content_hash;
                // The loaded content, or new content, or a torn read (read again at the next
                // poll), or the version that does not parse (never refused).
                state.refused_at = None;
                if outcome == Reloaded::Updated {
                    state.content_hash = hash;
                    state.failed_hash = None;
                    self.reloads.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(path = %self.path.display(), "reloaded file");
                }
                Ok(outcome)
            }
            // A half-written file that does not parse is no failure either: the next check
            // reads the finished one.
            Err(_) if now.is_some() && self.torn(now) => Ok(Reloaded::Unchanged),
            Err(e) => {
                state.failing = true;
                // Remember the failing version so it is not parsed (and logged) on every poll;
                // a later change is picked up again.
                state.failed_hash = failed_hash;
                state.refused_at = refused_at;
                self.failures.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(path = %self.path.display(), error = %e, "reload failed; keeping the previous content");
                Err(e)
            }
        }
    }
}

impl<T> std::fmt::Debug for FileReloader<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReloader")
            .field("path", &self.shared.path)
            .field("reloads", &self.shared.reloads.load(Ordering::Relaxed))
            .field("failures", &self.shared.failures.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// The polling task of [`FileReloader::spawn_watch`]; stops it when dropped (a check already
/// running on the blocking pool still finishes, and may still swap in what it read).
///
/// ```
/// use std::time::Duration;
/// use kube_authn::reload::FileReloader;
/// use kube_authn::ConfigError;
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f");
/// std::fs::write(&path, "1").unwrap();
/// let file = FileReloader::load(&path, 64, |b| Ok::<_, ConfigError>(b.len())).unwrap();
/// let task = file.spawn_watch(Duration::from_millis(5));
///
/// std::fs::write(&path, "22").unwrap();
/// tokio::time::timeout(Duration::from_secs(10), async {
///     while **file.current() != 2 {
///         tokio::time::sleep(Duration::from_millis(5)).await;
///     }
/// })
/// .await
/// .expect("the watch task reloads the file");
///
/// drop(task); // no more polling (a check already running on the blocking pool finishes)
/// tokio::time::sleep(Duration::from_millis(200)).await;
/// let tmp = dir.path().join("f.tmp");
/// std::fs::write(&tmp, "333").unwrap();
/// std::fs::rename(&tmp, &path).unwrap(); // atomically: a reader never sees it half-written
/// tokio::time::sleep(Duration::from_millis(50)).await;
/// assert_eq!(**file.current(), 2);
/// # });
/// ```
///
/// A task dropped as soon as it is started is refused under `#![deny(unused_must_use)]` (a
/// warning otherwise):
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// # use kube_authn::{reload::FileReloader, ConfigError};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// # let dir = tempfile::tempdir().unwrap(); let p = dir.path().join("f"); std::fs::write(&p, "x").unwrap();
/// let f = FileReloader::load(&p, 10, |b| Ok::<_, ConfigError>(b.len())).unwrap();
/// f.spawn_watch(std::time::Duration::from_secs(1)); // would stop at once
/// # });
/// ```
#[derive(Debug)]
#[must_use = "dropping the WatchTask stops reloading"]
pub struct WatchTask(tokio::task::JoinHandle<()>);

impl WatchTask {
    /// Spawns `task` on the Tokio runtime as a watch task of another reloading type (one that
    /// polls several files, such as the serving certificate and key together).
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    pub(crate) fn spawn(task: impl std::future::Future<Output = ()> + Send + 'static) -> Self {
        Self(tokio::spawn(task))
    }

    /// Every `interval` (at least [`MIN_POLL_INTERVAL`]; the first check one interval from
    /// now, missed ticks delayed), runs `check` on Tokio's blocking pool with what `weak`
    /// points to, one check at a time, until it is gone.
    pub(crate) fn poll<S: Send + Sync + 'static>(
        interval: Duration,
        weak: Weak<S>,
        check: impl Fn(Arc<S>) + Clone + Send + 'static,
    ) -> Self {
        Self::spawn(async move {
            let mut ticker = tokio::time::interval(interval.max(MIN_POLL_INTERVAL));
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                let Some(shared) = weak.upgrade() else { break };
                let check = check.clone();
                let _ = tokio::task::spawn_blocking(move || check(shared)).await;
            }
        })
    }
}

impl Drop for WatchTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(b: &[u8]) -> Result<String, ConfigError> {
        let s = std::str::from_utf8(b).map_err(|_| ConfigError::new("not utf-8"))?;
        if s.contains("bad") {
            return Err(ConfigError::new("bad content"));
        }
        Ok(s.to_owned())
    }

    /// A writer rewriting the file in place while it is read: what was read is not swapped in
    /// (it may be a valid-looking prefix); the next check reads the finished file. Both parser
    /// kinds; the "writer" is the parser itself, rewriting the file in the middle of a reload.
    #[test]
    fn a_file_rewritten_while_it_is_read_is_not_swapped_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let writer = |path: PathBuf| {
            move |content: &str| {
                if content == "two-partial" {
                    // The rest of the write lands while the reload is still parsing.
                    std::fs::write(&path, "two-partial-and-the-rest").unwrap();
                }
            }
        };
        let write_bytes = writer(path.clone());
        let bytes = FileReloader::load(&path, 64, move |b: &[u8]| {
            let s = parse(b)?;
            write_bytes(&s);
            Ok(s)
        })
        .unwrap();
        let write_stream = writer(path.clone());
        let streamed = FileReloader::load_streaming(&path, 64, move |r: &mut dyn BufRead, _| {
            let mut s = String::new();
            r.read_to_string(&mut s)
                .map_err(|e| ConfigError::new(e.to_string()))?;
            write_stream(&s);
            Ok(s)
        })
        .unwrap();
        for (name, f) in [("bytes", &bytes), ("streaming", &streamed)] {
            std::fs::write(&path, "two-partial").unwrap();
            assert_eq!(f.reload_now().unwrap(), Reloaded::Unchanged, "{name}");
            assert_eq!(
                **f.current(),
                "one",
                "{name}: the torn read is not swapped in"
            );
            assert_eq!(f.reload_now().unwrap(), Reloaded::Updated, "{name}");
            assert_eq!(**f.current(), "two-partial-and-the-rest", "{name}");
            std::fs::write(&path, "one").unwrap();
            f.reload_now().unwrap();
        }
        assert_eq!(bytes.failures() + streamed.failures(), 0);
        // A half-written version that does not even parse is no failure either.
        let write_bad = writer(path.clone());
        let strict = FileReloader::load(&path, 64, move |b: &[u8]| {
            let s = parse(b)?;
            write_bad(&s);
            if s == "two-partial" {
                return Err(ConfigError::new("cut in the middle"));
            }
            Ok(s)
        })
        .unwrap();
        std::fs::write(&path, "two-partial").unwrap();
        assert_eq!(strict.reload_now().unwrap(), Reloaded::Unchanged);
        assert_eq!(strict.failures(), 0);
        assert_eq!(strict.reload_now().unwrap(), Reloaded::Updated);
        assert_eq!(**strict.current(), "two-partial-and-the-rest");
    }

    /// A version [`Admit`] refused is checked again once its epoch changed (not at every
    /// poll before that), and loads once it is let through.
    #[test]
    fn a_refused_version_is_checked_again_when_the_epoch_changes() {
        use std::sync::atomic::AtomicBool;
        struct Gate {
            open: Arc<AtomicBool>,
            epoch: Arc<AtomicU64>,
            checks: Arc<AtomicU64>,
        }
        impl Admit<String> for Gate {
            fn admit(&self, value: &String) -> Result<(), ConfigError> {
                self.checks.fetch_add(1, Ordering::Relaxed);
                if value == "two" && !self.open.load(Ordering::Relaxed) {
                    return Err(ConfigError::new("refused"));
                }
                Ok(())
            }
            fn epoch(&self) -> u64 {
                self.epoch.load(Ordering::Relaxed)
            }
            fn went_live(&self) {}
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let (open, epoch, checks) = Default::default();
        let gate = Gate {
            open: Arc::clone(&open),
            epoch: Arc::clone(&epoch),
            checks: Arc::clone(&checks),
        };
        let f =
            FileReloader::load_with(&path, 16, parse, Some(Box::new(gate)), IoText::Rust).unwrap();
        std::fs::write(&path, "two").unwrap();
        assert!(f.reload_if_changed().is_err());
        for _ in 0..5 {
            assert_eq!(f.reload_if_changed().unwrap(), Reloaded::Unchanged);
        }
        assert_eq!(checks.load(Ordering::Relaxed), 2, "checked at every poll");
        open.store(true, Ordering::Relaxed);
        epoch.fetch_add(1, Ordering::Relaxed);
        assert_eq!(f.reload_if_changed().unwrap(), Reloaded::Updated);
        assert_eq!(**f.current(), "two");
        assert_eq!(f.failures(), 1);
    }

    /// Two versions of a file hash differently, the streamed hash is the hash of the whole
    /// content, and the hash is the keyed content digest (see `digest`'s tests for the key).
    #[test]
    fn content_hash_tells_versions_apart_and_streaming_agrees() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let versions: [&[u8]; 4] = [
            b"",
            b"tok,alice,1\n",
            b"tok,alice,1\nrevoked,bob,2\n",
            &[7; 70_000],
        ];
        let mut seen = Vec::new();
        for content in versions {
            let hash = content_hash(content);
            assert!(!seen.contains(&hash), "two versions share a hash");
            seen.push(hash);
            let mut h = ContentHasher::new();
            h.write(content);
            assert_eq!(hash, h.finish());
            std::fs::write(&path, content).unwrap();
            let (_, streamed) = stream::<()>(&path, 1 << 20, None).unwrap();
            assert_eq!(streamed, hash);
        }
    }

    /// `u64::MAX` ("no limit") reads the whole file (`max_bytes + 1` overflowed: a panic in
    /// debug builds, an empty read in release builds).
    #[test]
    fn a_limit_of_u64_max_reads_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let f = FileReloader::load(&path, u64::MAX, parse).unwrap();
        assert_eq!(**f.current(), "one");
        let s = FileReloader::load_streaming(&path, u64::MAX, |r: &mut dyn BufRead, _| {
            let mut s = String::new();
            r.read_to_string(&mut s)
                .map_err(|e| ConfigError::new(e.to_string()))?;
            Ok(s)
        })
        .unwrap();
        assert_eq!(**s.current(), "one");
    }

    #[test]
    fn reload_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let f = FileReloader::load(&path, 16, parse).unwrap();
        type Step<'a> = (&'a str, Option<&'a [u8]>, Result<Reloaded, ()>, &'a str);
        let steps: Vec<Step<'_>> = vec![
            ("unchanged", None, Ok(Reloaded::Unchanged), "one"),
            ("edited", Some(b"two"), Ok(Reloaded::Updated), "two"),
            (
                "same content rewritten",
                Some(b"two"),
                Ok(Reloaded::Unchanged),
                "two",
            ),
            ("broken keeps old", Some(b"bad"), Err(()), "two"),
            (
                "broken again, not re-parsed",
                None,
                Ok(Reloaded::Unchanged),
                "two",
            ),
            ("too large keeps old", Some(&[b'x'; 17]), Err(()), "two"),
            ("fixed", Some(b"three"), Ok(Reloaded::Updated), "three"),
        ];
        for (name, write, want, content) in steps {
            if let Some(bytes) = write {
                std::fs::write(&path, bytes).unwrap();
            }
            let got = f.reload_now().map_err(|_| ());
            assert_eq!(got, want, "step {name}");
            assert_eq!(**f.current(), content, "step {name}");
        }
        assert_eq!(f.failures(), 2);
        assert_eq!(f.reloads(), 2);
    }

    #[test]
    fn watching_with_a_zero_interval_still_reloads() {
        // tokio's `interval` panics on zero inside the task, which then polls nothing while its
        // handle looks healthy; the interval is clamped to MIN_POLL_INTERVAL instead.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let f = FileReloader::load(&path, 16, parse).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let _task = f.spawn_watch(Duration::ZERO);
            std::fs::write(&path, "two").unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while **f.current() != "two" {
                assert!(std::time::Instant::now() < deadline, "never reloaded");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
    }

    #[test]
    fn deleted_file_keeps_old_content_and_atomic_rename_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let f = FileReloader::load(&path, 16, parse).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(f.reload_if_changed().is_err());
        assert_eq!(**f.current(), "one");
        assert_eq!(f.failures(), 1);
        // Still missing: reported again at each full check only, not at every poll (a token
        // file is checked per request).
        let polls = FULL_CHECK_EVERY as usize * 2;
        let errors = (0..polls)
            .filter(|_| f.reload_if_changed().is_err())
            .count();
        assert!(
            (1..=2).contains(&errors),
            "{errors} errors in {polls} polls"
        );
        assert_eq!(f.failures(), 1 + errors as u64);
        assert_eq!(**f.current(), "one");
        let tmp = dir.path().join("f.tmp");
        std::fs::write(&tmp, "two").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert_eq!(f.reload_if_changed().unwrap(), Reloaded::Updated);
        assert_eq!(**f.current(), "two");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watch_task_picks_up_changes_and_stops_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let f = FileReloader::load(&path, 16, parse).unwrap();
        let task = f.spawn_watch(Duration::from_millis(20));
        std::fs::write(&path, "a longer value").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while **f.current() != "a longer value" {
            assert!(std::time::Instant::now() < deadline, "change not picked up");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(task);
        // A check already running on the blocking pool still finishes: let it.
        tokio::time::sleep(Duration::from_millis(100)).await;
        // A different size, so any poll that still ran would see the change.
        std::fs::write(&path, "two").unwrap();
        tokio::time::sleep(Duration::from_millis(20 * 10)).await;
        assert_eq!(**f.current(), "a longer value", "polled after the drop");
        assert_eq!(f.reloads(), 1);
    }

    #[test]
    fn periodic_full_check_sees_a_same_size_edit_with_the_old_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let f = FileReloader::load(&path, 16, parse).unwrap();
        let old_mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        // Same size, same inode, and the old modification time restored: only the content
        // differs, so only the periodic full re-read can see it.
        std::fs::write(&path, "two").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_times(std::fs::FileTimes::new().set_modified(old_mtime))
            .unwrap();
        for poll in 1..FULL_CHECK_EVERY {
            assert_eq!(
                f.reload_if_changed().unwrap(),
                Reloaded::Unchanged,
                "poll {poll}: the stamp did not change"
            );
            assert_eq!(**f.current(), "one", "poll {poll}");
        }
        assert_eq!(f.reload_if_changed().unwrap(), Reloaded::Updated);
        assert_eq!(**f.current(), "two");
    }

    #[test]
    fn streaming_reload_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let parse_stream = |r: &mut dyn BufRead, _hint: u64| {
            let mut bytes = Vec::new();
            r.read_to_end(&mut bytes)
                .map_err(|e| ConfigError::new(e.to_string()))?;
            parse(&bytes)
        };
        let f = FileReloader::load_streaming(&path, 16, parse_stream).unwrap();
        type Step<'a> = (&'a str, Option<&'a [u8]>, Result<Reloaded, ()>, &'a str);
        let steps: Vec<Step<'_>> = vec![
            ("unchanged", None, Ok(Reloaded::Unchanged), "one"),
            ("edited", Some(b"two"), Ok(Reloaded::Updated), "two"),
            ("same content", Some(b"two"), Ok(Reloaded::Unchanged), "two"),
            ("broken keeps old", Some(b"bad"), Err(()), "two"),
            ("broken again", None, Ok(Reloaded::Unchanged), "two"),
            ("too large keeps old", Some(&[b'x'; 17]), Err(()), "two"),
            ("fixed", Some(b"three"), Ok(Reloaded::Updated), "three"),
        ];
        for (name, write, want, content) in steps {
            if let Some(bytes) = write {
                std::fs::write(&path, bytes).unwrap();
            }
            assert_eq!(f.reload_now().map_err(|_| ()), want, "step {name}");
            assert_eq!(**f.current(), content, "step {name}");
        }
        assert!(FileReloader::load_streaming(&path, 2, parse_stream).is_err());
    }
}
