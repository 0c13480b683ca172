//! The daemon's spool: hook events it has acknowledged but not yet written to the
//! store, one file each in `<data dir>/hooks.spool/`. A file is complete before the
//! hook is answered and removed once its event is in the store, so a daemon killed
//! in between captures the event when it starts again.

use super::Event;
use solaria_shared::UnixMillis;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The spool's directory name in the data dir.
pub const SPOOL_DIR: &str = "hooks.spool";

/// A spooled event's file name ends so; a file still being written does not.
const EXTENSION: &str = "event";

/// Where events wait between the hook's answer and the store.
#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
    /// Orders the files of events spooled in the same millisecond.
    next: AtomicU64,
}

/// One event read back from the spool.
#[derive(Debug, PartialEq, Eq)]
pub struct Spooled {
    pub event: Event,
    /// When the daemon received it: the time its records carry.
    pub at: UnixMillis,
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
    /// The spool of `data_dir`, its directory made (private) if missing.
    pub fn open(data_dir: &Path) -> std::io::Result<Spool> {
        let dir = data_dir.join(SPOOL_DIR);
        crate::fsutil::private_dir(&dir)?;
        Ok(Spool {
            dir,
            next: AtomicU64::new(0),
        })
    }

    /// Writes `event` received `at` with its payload; the file's path once it is
    /// whole. Files sort by name in the order they were spooled.
    pub fn put(&self, event: &Event, at: UnixMillis, payload: &[u8]) -> std::io::Result<PathBuf> {
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        let name = format!("{:013}-{}-{seq:08}", at.0.max(0), std::process::id());
        let partial = self.dir.join(format!("{name}.partial"));
        let done = self.dir.join(format!("{name}.{EXTENSION}"));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            // The payload is the agent's raw text: the user's alone, like the store.
            .mode(0o600)
            .open(&partial)?;
        let written = file
            .write_all(event.header().as_bytes())
            .and_then(|()| file.write_all(format!("{}\n", at.0).as_bytes()))
            .and_then(|()| file.write_all(payload));
        drop(file);
        // Renamed only once whole: a file cut short by a crash is never read as an event.
        if let Err(e) = written.and_then(|()| std::fs::rename(&partial, &done)) {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
        Ok(done)
    }

    /// The spooled events' files, oldest first. Files of events cut short while
    /// being spooled (never acknowledged, so the hook ran them itself) are removed.
    pub fn pending(&self) -> std::io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            match path.extension().and_then(|e| e.to_str()) {
                Some(EXTENSION) => files.push(path),
                _ => {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        files.sort();
        Ok(files)
    }

    /// How many events wait in the spool of `data_dir` (none when it has no spool).
    pub fn waiting(data_dir: &Path) -> usize {
        std::fs::read_dir(data_dir.join(SPOOL_DIR)).map_or(0, |entries| {
            entries
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == EXTENSION))
                .count()
        })
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
        let at = std::str::from_utf8(at)
            .ok()
            .and_then(|t| t.parse().ok())
            .map(UnixMillis)
            .ok_or_else(malformed)?;
        Ok(Spooled {
            event,
            at,
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
        let spool = Spool::open(dir.path()).expect("spool");
        let first = Event::ClaudeCode("post-tool-use".into());
        let second = Event::OpenCode("tool.execute.after".into());
        let a = spool
            .put(&first, UnixMillis(1_700_000_000_000), b"{\"a\":\n1}")
            .expect("put");
        let b = spool
            .put(&second, UnixMillis(1_700_000_000_000), b"")
            .expect("put");
        assert_eq!(
            spool.pending().expect("pending"),
            vec![a.clone(), b.clone()]
        );
        assert_eq!(Spool::waiting(dir.path()), 2);
        assert_eq!(
            Spool::read(&a).expect("read"),
            Spooled {
                event: first,
                at: UnixMillis(1_700_000_000_000),
                payload: b"{\"a\":\n1}".to_vec()
            }
        );
        assert_eq!(Spool::read(&b).expect("read").payload, b"");
        Spool::done(&a);
        assert_eq!(spool.pending().expect("pending"), vec![b]);
    }

    #[test]
    fn a_file_cut_short_is_dropped_and_a_foreign_one_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let spool = Spool::open(dir.path()).expect("spool");
        let partial = dir.path().join(SPOOL_DIR).join("1-1-00000000.partial");
        std::fs::write(&partial, "solaria-relay 1 claude-code st").expect("write");
        let foreign = dir.path().join(SPOOL_DIR).join("2-1-00000000.event");
        std::fs::write(&foreign, "GET / HTTP/1.1\n12\n{}").expect("write");
        assert_eq!(spool.pending().expect("pending"), vec![foreign.clone()]);
        assert!(!partial.exists());
        assert!(matches!(
            Spool::read(&foreign),
            Err(SpoolError::Malformed(_))
        ));
    }
}
