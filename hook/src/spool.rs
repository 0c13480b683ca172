//! The daemon's spool: hook events it has acknowledged but not yet written to the
//! store, one file each. A file is complete before the hook is answered and removed
//! once its event is in the store, so a daemon killed in between captures the event
//! when it starts again.
//!
//! A spooled event is the agent's payload as it came, before redaction, so the spool
//! lives in memory, never on the disk (where the store keeps only redacted text):
//! under `$XDG_RUNTIME_DIR`, the user session's own tmpfs, or else `/dev/shm`, in a
//! directory only this user can enter. A reboot empties it; so, without a daemon
//! running to capture them, would it lose the events of the last milliseconds.

use crate::files::{Access, write_atomic};
use crate::protocol::Event;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The in-memory directory used when the session names none.
const SHARED_MEMORY: &str = "/dev/shm";

/// A spooled event's file name ends so; a file still being written does not.
const EXTENSION: &str = "event";

/// The file of an event whose hook waits for its answer ends so while the daemon
/// answers and captures it: not pending (the capture thread holds the event), but
/// kept for a daemon killed meanwhile, whose successor's start makes it pending;
/// made pending too when the store refuses it.
const HELD: &str = "held";

/// Made by a daemon that captures what is spooled, holding its process id: a hook
/// writes here only when the daemon it reached on the socket is that process, and
/// asks the daemon otherwise. A marker outlives the daemon that wrote it; a daemon
/// of an older version, started after it, never looks here (its events would wait
/// for the next newer daemon).
const MARKER: &str = "captured-by-the-daemon";

/// Where the spool of `data_dir` lives: `<runtime dir or /dev/shm>/solaria-<uid>/
/// <digest of the data dir>`, the uid being the data dir's owner's. `None` when the
/// data dir cannot be read.
pub fn location(data_dir: &Path, runtime_dir: Option<&Path>) -> Option<PathBuf> {
    let owner = std::fs::metadata(data_dir).ok()?.uid();
    let which = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let digest = Sha256::digest(which.as_os_str().as_encoded_bytes());
    let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let base = runtime_dir.unwrap_or(Path::new(SHARED_MEMORY));
    Some(base.join(format!("solaria-{owner}")).join(name))
}

/// Makes `dir` (0700) if missing and makes sure that it is a directory of `owner`'s
/// that no one else may enter: in a shared directory like `/dev/shm`, another user
/// could have made the name first, or put a link there.
fn owned_private_dir(dir: &Path, owner: u32) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != owner || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a directory only this user can enter",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Held by whoever captures what the spool holds — a daemon for its whole life, a
/// `solaria hook` process while it drains (`Spool::try_drain`) — so that no two
/// processes capture one file.
const DRAINER: &str = "drainer.lock";

/// Makes the spool directory of `data_dir` (and its user's directory) if missing,
/// private to the data dir's owner; its path.
fn make(data_dir: &Path, runtime_dir: Option<&Path>) -> std::io::Result<PathBuf> {
    let unreadable = || {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("cannot read the data dir {}", data_dir.display()),
        )
    };
    let dir = location(data_dir, runtime_dir).ok_or_else(unreadable)?;
    let owner = std::fs::metadata(data_dir)?.uid();
    if let Some(user_dir) = dir.parent() {
        owned_private_dir(user_dir, owner)?;
    }
    owned_private_dir(&dir, owner)?;
    Ok(dir)
}

/// The drainer lock's file in the spool `dir`, opened (made if missing).
fn drainer_file(dir: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(dir.join(DRAINER))
}

/// Where events wait between the hook's answer and the store.
#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
    /// Orders the files of events spooled in the same millisecond.
    next: AtomicU64,
    /// The drainer lock, while this process holds it (released with the file).
    drainer: Option<std::fs::File>,
}

/// One event read back from the spool.
#[derive(Debug, PartialEq, Eq)]
pub struct Spooled {
    pub event: Event,
    /// When it was received (Unix milliseconds): the time its records carry.
    pub at_ms: i64,
    pub payload: Vec<u8>,
}

/// Why a spool file cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("cannot read {0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0} is not a spooled hook event")]
    Malformed(PathBuf),
}

impl Spool {
    /// The daemon's spool of `data_dir` (see [`location`]), its directories made
    /// if missing, marked as one a daemon captures; files a hook began and did not
    /// finish (a crash mid-write: never acknowledged) are removed.
    ///
    /// The daemon holds the drainer lock from here on, waiting for a `solaria hook`
    /// process that drains the spool now to finish.
    pub fn open(data_dir: &Path, runtime_dir: Option<&Path>) -> std::io::Result<Spool> {
        let dir = make(data_dir, runtime_dir)?;
        let drainer = drainer_file(&dir)?;
        drainer.lock()?;
        for entry in std::fs::read_dir(&dir)?.flatten() {
            let path = entry.path();
            // A temporary file of `write_atomic`'s that was never renamed.
            if path.extension().is_some_and(|x| x == "tmp") {
                let _ = std::fs::remove_file(&path);
            }
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(dir.join(MARKER))?
            .write_all(format!("{}\n", std::process::id()).as_bytes())?;
        let spool = Spool {
            dir,
            next: AtomicU64::new(0),
            drainer: Some(drainer),
        };
        spool.release_held()?;
        Ok(spool)
    }

    /// For a `solaria hook` process (no daemon took its event) that found the store
    /// held by another process past its wait: the spool of `data_dir`, made if
    /// missing, where the event waits for whoever captures next — a daemon when it
    /// starts or runs, or a later hook process that finds the store free.
    pub fn for_process(data_dir: &Path, runtime_dir: Option<&Path>) -> std::io::Result<Spool> {
        Ok(Spool {
            dir: make(data_dir, runtime_dir)?,
            next: AtomicU64::new(0),
            drainer: None,
        })
    }

    /// Takes the drainer lock if nobody holds it (a running daemon always does):
    /// whether this process may now capture the pending files. Held until the
    /// spool is dropped. The answered events a daemon held when it died are made
    /// pending first: with the lock taken, that daemon is gone.
    pub fn try_drain(&mut self) -> bool {
        if self.drainer.is_some() {
            return true;
        }
        let Ok(file) = drainer_file(&self.dir) else {
            return false;
        };
        if file.try_lock().is_err() {
            return false;
        }
        self.drainer = Some(file);
        // One that cannot be renamed now stays held, for the next drainer.
        let _ = self.release_held();
        true
    }

    /// Makes pending, in their places, the answered events a daemon held when it
    /// died; only the drainer lock's holder may (it proves that daemon gone).
    fn release_held(&self) -> std::io::Result<()> {
        for entry in std::fs::read_dir(&self.dir)?.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|x| x == HELD) {
                Spool::release(&path)?;
            }
        }
        Ok(())
    }

    /// For a hook that reached the daemon of process `daemon` on the socket: the
    /// spool of `data_dir` when that daemon made it and captures what is written
    /// there, and it is private to the data dir's owner; `None` otherwise (the hook
    /// then asks the daemon), and whenever the daemon's process is not known.
    pub fn for_hook(
        data_dir: &Path,
        runtime_dir: Option<&Path>,
        daemon: Option<u32>,
    ) -> Option<Spool> {
        let daemon = daemon?;
        let dir = location(data_dir, runtime_dir)?;
        let owner = std::fs::metadata(data_dir).ok()?.uid();
        let private = |d: &Path| {
            std::fs::symlink_metadata(d)
                .is_ok_and(|m| m.is_dir() && m.uid() == owner && m.mode() & 0o077 == 0)
        };
        let marked_by_daemon = || {
            std::fs::read_to_string(dir.join(MARKER))
                .is_ok_and(|pid| pid.trim().parse() == Ok(daemon))
        };
        let usable = dir.parent().is_some_and(private) && private(&dir) && marked_by_daemon();
        usable.then(|| Spool {
            dir,
            next: AtomicU64::new(0),
            drainer: None,
        })
    }

    /// Where its files are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `event` received `at` with its payload; the file's path once it is
    /// whole. Files sort by name in the order they were spooled.
    pub fn put(&self, event: &Event, at_ms: i64, payload: &[u8]) -> std::io::Result<PathBuf> {
        self.write(EXTENSION, event, at_ms, payload)
    }

    /// Writes an event the daemon answers and captures itself, held apart from the
    /// pending ones: removed with [`Spool::done`] once it is in the store, made
    /// pending with [`Spool::release`] if the store refuses it, and by the next
    /// daemon's start if this one dies first.
    pub fn hold(&self, event: &Event, at_ms: i64, payload: &[u8]) -> std::io::Result<PathBuf> {
        self.write(HELD, event, at_ms, payload)
    }

    /// Makes a held event pending, keeping its place in the order; its new path.
    pub fn release(held: &Path) -> std::io::Result<PathBuf> {
        let pending = held.with_extension(EXTENSION);
        std::fs::rename(held, &pending)?;
        Ok(pending)
    }

    fn write(
        &self,
        extension: &str,
        event: &Event,
        at_ms: i64,
        payload: &[u8],
    ) -> std::io::Result<PathBuf> {
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        // Hooks and the daemon spool side by side: nanoseconds order them.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{nanos:020}-{}-{seq:08}", std::process::id());
        let done = self.dir.join(format!("{name}.{extension}"));
        let mut bytes = Vec::with_capacity(payload.len() + 64);
        bytes.extend_from_slice(event.header().as_bytes());
        bytes.extend_from_slice(format!("{at_ms}\n").as_bytes());
        bytes.extend_from_slice(payload);
        // Whole or absent under its name (a file cut short is never read as an
        // event), and the user's alone, like the store.
        write_atomic(&done, &bytes, Access::Private)?;
        Ok(done)
    }

    /// The spooled events' files, oldest first (files still being written are not).
    pub fn pending(&self) -> std::io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|x| x == EXTENSION) {
                files.push(path);
            }
        }
        files.sort();
        Ok(files)
    }

    /// How many events wait in the spool of `data_dir`, held ones included (none
    /// when it has no spool).
    pub fn waiting(data_dir: &Path, runtime_dir: Option<&Path>) -> usize {
        let Some(dir) = location(data_dir, runtime_dir) else {
            return 0;
        };
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .flatten()
                .filter(|e| {
                    e.path()
                        .extension()
                        .is_some_and(|x| x == EXTENSION || x == HELD)
                })
                .count()
        })
    }

    /// The files of the events waiting in the spool of `data_dir`, pending and held
    /// alike, oldest first (none when it has no spool; nothing is made).
    pub fn events(data_dir: &Path, runtime_dir: Option<&Path>) -> Vec<PathBuf> {
        let Some(dir) = location(data_dir, runtime_dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir).map_or(Vec::new(), |entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == EXTENSION || x == HELD))
                .collect()
        });
        files.sort();
        files
    }

    /// Removes the spool of `data_dir`, the events waiting there with it (their
    /// payloads as the agent sent them, before redaction), once nothing captures
    /// from it: `solaria uninstall` of the last agent. How many events it held;
    /// `Ok(None)` when a process still captures from it (a daemon, which holds the
    /// drainer lock for its life, or a hook draining it): the spool is then left to
    /// it, and empties as it captures. Its user's directory goes too when empty.
    pub fn remove(data_dir: &Path, runtime_dir: Option<&Path>) -> std::io::Result<Option<usize>> {
        let Some(dir) = location(data_dir, runtime_dir) else {
            return Ok(Some(0));
        };
        let owner = std::fs::metadata(data_dir)?.uid();
        match std::fs::symlink_metadata(&dir) {
            // Only a directory of the data dir's owner: never a link, never another's.
            Ok(meta) if meta.is_dir() && meta.uid() == owner => {}
            Ok(_) => return Ok(Some(0)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some(0)),
            Err(e) => return Err(e),
        }
        let drainer = drainer_file(&dir)?;
        if drainer.try_lock().is_err() {
            return Ok(None);
        }
        let held = Spool::waiting(data_dir, runtime_dir);
        std::fs::remove_dir_all(&dir)?;
        drop(drainer);
        if let Some(user_dir) = dir.parent() {
            // Another data dir's spool may be in it: then it stays.
            let _ = std::fs::remove_dir(user_dir);
        }
        Ok(Some(held))
    }

    /// The event a spool file holds.
    pub fn read(path: &Path) -> Result<Spooled, SpoolError> {
        let bytes = std::fs::read(path).map_err(|e| SpoolError::Io(path.to_owned(), e))?;
        let malformed = || SpoolError::Malformed(path.to_owned());
        let mut lines = bytes.splitn(3, |b| *b == b'\n');
        let (header, at, payload) = match (lines.next(), lines.next(), lines.next()) {
            (Some(header), Some(at), payload) => (header, at, payload.unwrap_or_default()),
            _ => return Err(malformed()),
        };
        let event = std::str::from_utf8(header)
            .ok()
            .and_then(|h| Event::parse_header(&format!("{h}\n")))
            .ok_or_else(malformed)?;
        let at_ms = std::str::from_utf8(at)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(malformed)?;
        Ok(Spooled {
            event,
            at_ms,
            payload: payload.to_vec(),
        })
    }

    /// Forgets a spooled event: it is in the store (or was refused as a hook
    /// process would refuse it).
    pub fn done(path: &Path) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_back_as_they_went_in_and_in_order() {
        let dir = tempfile::tempdir().expect("dir");
        let run = tempfile::tempdir().expect("runtime dir");
        let spool = Spool::open(dir.path(), Some(run.path())).expect("spool");
        let first = Event::ClaudeCode("post-tool-use".into());
        let second = Event::OpenCode("tool.execute.after".into());
        let a = spool
            .put(&first, 1_700_000_000_000, b"{\"a\":\n1}")
            .expect("put");
        let b = spool.put(&second, 1_700_000_000_000, b"").expect("put");
        assert_eq!(
            spool.pending().expect("pending"),
            vec![a.clone(), b.clone()]
        );
        assert_eq!(Spool::waiting(dir.path(), Some(run.path())), 2);
        assert!(spool.dir().starts_with(run.path()));
        assert_eq!(
            Spool::read(&a).expect("read"),
            Spooled {
                event: first,
                at_ms: 1_700_000_000_000,
                payload: b"{\"a\":\n1}".to_vec()
            }
        );
        assert_eq!(Spool::read(&b).expect("read").payload, b"");
        Spool::done(&a);
        assert_eq!(spool.pending().expect("pending"), vec![b]);
    }

    #[test]
    fn a_held_event_is_not_pending_until_released_or_its_daemon_died() {
        let dir = tempfile::tempdir().expect("dir");
        let run = tempfile::tempdir().expect("runtime dir");
        let spool = Spool::open(dir.path(), Some(run.path())).expect("spool");
        let tool = Event::ClaudeCode("post-tool-use".into());
        let start = Event::ClaudeCode("session-start".into());
        let at = 1_700_000_000_000;
        let first = spool.put(&tool, at, b"1").expect("put");
        let held = spool.hold(&start, at, b"2").expect("hold");
        let last = spool.put(&tool, at, b"3").expect("put");
        assert_eq!(
            spool.pending().expect("pending"),
            vec![first.clone(), last.clone()],
            "the daemon holds it"
        );
        assert_eq!(Spool::waiting(dir.path(), Some(run.path())), 3);
        // The store refused it: pending, in the place it came.
        let released = Spool::release(&held).expect("release");
        assert_eq!(
            spool.pending().expect("pending"),
            vec![first.clone(), released.clone(), last.clone()]
        );
        assert_eq!(Spool::read(&released).expect("read").event, start);
        // Held when its daemon died: the next daemon's start makes it pending.
        let again = spool.hold(&start, at, b"4").expect("hold");
        drop(spool);
        let spool = Spool::open(dir.path(), Some(run.path())).expect("spool");
        let pending = spool.pending().expect("pending");
        assert_eq!(pending.len(), 4);
        assert!(!again.exists());
        assert_eq!(pending[3], again.with_extension(EXTENSION));
        assert_eq!(Spool::read(&pending[3]).expect("read").payload, b"4");
    }

    #[test]
    fn one_process_drains_at_a_time_and_a_daemon_for_its_whole_life() {
        let dir = tempfile::tempdir().expect("dir");
        let run = tempfile::tempdir().expect("runtime dir");
        let process = || Spool::for_process(dir.path(), Some(run.path())).expect("spool");
        let (mut first, mut second) = (process(), process());
        assert_eq!(first.dir(), second.dir());
        assert!(first.try_drain());
        assert!(!second.try_drain(), "another hook process drains");
        drop(first);
        assert!(second.try_drain(), "it is done");
        drop(second);
        let daemon = Spool::open(dir.path(), Some(run.path())).expect("spool");
        let held = daemon
            .hold(&Event::ClaudeCode("session-start".into()), 1, b"{}")
            .expect("hold");
        let mut hook = process();
        assert!(!hook.try_drain(), "the running daemon captures what waits");
        assert!(
            hook.pending().expect("pending").is_empty(),
            "and holds its own"
        );
        drop(daemon);
        assert!(hook.try_drain(), "the daemon is gone");
        assert_eq!(
            hook.pending().expect("pending"),
            vec![held.with_extension(EXTENSION)],
            "what it held is pending now"
        );
    }

    #[test]
    fn a_file_cut_short_is_dropped_and_a_foreign_one_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let run = tempfile::tempdir().expect("runtime dir");
        let spool = Spool::open(dir.path(), Some(run.path())).expect("spool");
        let partial = spool.dir().join(".1-1-00000000.event.0123.tmp");
        std::fs::write(&partial, "solaria-relay 1 claude-code st").expect("write");
        let foreign = spool.dir().join("2-1-00000000.event");
        std::fs::write(&foreign, "GET / HTTP/1.1\n12\n{}").expect("write");
        assert_eq!(spool.pending().expect("pending"), vec![foreign.clone()]);
        // A daemon starting again removes what a crash cut short.
        drop(spool);
        let spool = Spool::open(dir.path(), Some(run.path())).expect("spool");
        assert!(!partial.exists());
        assert_eq!(spool.pending().expect("pending"), vec![foreign.clone()]);
        assert!(matches!(
            Spool::read(&foreign),
            Err(SpoolError::Malformed(_))
        ));
    }

    #[test]
    fn hooks_write_only_where_the_daemon_they_reached_captures() {
        let dir = tempfile::tempdir().expect("dir");
        let run = tempfile::tempdir().expect("runtime dir");
        // This process plays the daemon.
        let daemon = Some(std::process::id());
        let for_hook = |daemon| Spool::for_hook(dir.path(), Some(run.path()), daemon);
        assert!(for_hook(daemon).is_none(), "no daemon made it");
        let daemons = Spool::open(dir.path(), Some(run.path())).expect("spool");
        let hooks = for_hook(daemon).expect("the daemon's");
        assert_eq!(hooks.dir(), daemons.dir());
        // Another process answers on the socket (a daemon of an older version,
        // started after this one died): its marker is not that daemon's.
        assert!(for_hook(Some(std::process::id() + 1)).is_none());
        assert!(for_hook(None).is_none(), "the daemon is not known");
        std::fs::remove_file(daemons.dir().join(MARKER)).expect("rm marker");
        assert!(for_hook(daemon).is_none(), "not marked");
    }

    #[test]
    fn a_spool_directory_anyone_else_may_enter_is_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let run = tempfile::tempdir().expect("runtime dir");
        let at = location(dir.path(), Some(run.path())).expect("location");
        let user_dir = at.parent().expect("parent");
        std::fs::DirBuilder::new()
            .mode(0o755)
            .create(user_dir)
            .expect("a wider directory, made first");
        let err = Spool::open(dir.path(), Some(run.path())).expect_err("refused");
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{err}");
        // And a link in its place.
        std::fs::remove_dir(user_dir).expect("rm");
        let elsewhere = tempfile::tempdir().expect("elsewhere");
        std::os::unix::fs::symlink(elsewhere.path(), user_dir).expect("symlink");
        assert!(Spool::open(dir.path(), Some(run.path())).is_err());
    }

    #[test]
    fn the_spool_is_removed_with_its_events_only_once_nothing_captures_from_it() {
        let dir = tempfile::tempdir().expect("dir");
        let run = tempfile::tempdir().expect("runtime dir");
        let tool = Event::ClaudeCode("post-tool-use".into());
        let daemon = Spool::open(dir.path(), Some(run.path())).expect("spool");
        let pending = daemon.put(&tool, 1, b"{}").expect("put");
        let held = daemon.hold(&tool, 2, b"{}").expect("hold");
        assert_eq!(
            Spool::events(dir.path(), Some(run.path())),
            vec![pending.clone(), held.clone()]
        );
        assert_eq!(
            Spool::remove(dir.path(), Some(run.path())).expect("remove"),
            None,
            "a running daemon captures them"
        );
        assert!(pending.exists() && held.exists());
        let spool_dir = daemon.dir().to_path_buf();
        drop(daemon);
        assert_eq!(
            Spool::remove(dir.path(), Some(run.path())).expect("remove"),
            Some(2)
        );
        assert!(!spool_dir.exists());
        assert!(
            !spool_dir.parent().expect("user dir").exists(),
            "nothing else was in it"
        );
        assert!(Spool::events(dir.path(), Some(run.path())).is_empty());
        assert_eq!(
            Spool::remove(dir.path(), Some(run.path())).expect("nothing left"),
            Some(0)
        );
    }
}
