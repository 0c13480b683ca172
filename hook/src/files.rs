//! Files only their user may read: a file written atomically (a temporary file
//! beside it, fsync, rename) with its final permissions from the first byte, and a
//! directory only its user can enter. The one helper behind the spool's events, the
//! installers' edits of the agents' files, the credentials and the local API's
//! token and address files: a reader never sees half a file, and no other user can
//! read the content for an instant (the temporary file is never more open than the
//! file it becomes). Every writer prepares its directory through [`private_dir`],
//! so whichever runs first (a hook that only logs, the store, the daemon), the
//! result is the same.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Who may read the file written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// This user only (0600), whatever the file had before: secrets.
    Private,
    /// What the file had before (a user's own settings keep their mode); a new
    /// file is 0600 (it may hold an API key: ~/.claude.json does).
    Keep,
}

/// Writes `contents` to `path` atomically. Creates the parent directories; writes
/// through a symlink (to its target) instead of replacing it.
pub fn write_atomic(path: &Path, contents: &[u8], access: Access) -> io::Result<()> {
    write_atomic_with(path, access, |out| out.write_all(contents))
}

/// Writes to `path` atomically what `fill` writes, as [`write_atomic`] does, so a
/// long document is streamed to disk rather than held in memory. When `fill` fails,
/// the file is left as it was and `fill`'s error is returned.
pub fn write_atomic_with<T, E: From<io::Error>>(
    path: &Path,
    access: Access,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, E>,
) -> Result<T, E> {
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path)?,
        _ => path.to_owned(),
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let mode = match access {
        Access::Private => 0o600,
        Access::Keep => fs::metadata(&target)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o600),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A name of its own per write: two writers never share a temporary file.
    let tmp = dir.join(format!(".{name}.{}.tmp", unique_suffix()));
    let result = (|| {
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        let mut out = io::BufWriter::new(file);
        let value = fill(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        // The umask may have taken bits away at creation: give the mode exactly.
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &target)?;
        sync_dir(&dir);
        Ok(value)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a rename durable (best effort).
fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// A suffix no other write uses at once: this process, a counter, and the time
/// (a process id is reused only after its process ended).
fn unique_suffix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The mode of a private directory.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Makes `dir` a directory only this user can enter: created 0700 when missing (with
/// any missing parent, also 0700, never readable by others even for an instant), or
/// narrowed to drop every group and other permission when it exists wider. Never
/// widens a directory.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR_MODE)
        .create(dir)?;
    let mode = fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn a_new_file_is_private_and_an_existing_one_keeps_its_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fresh = dir.path().join("sub/new.json");
        write_atomic(&fresh, b"{}", Access::Keep).expect("writes");
        assert_eq!(mode(&fresh), 0o600);

        let shared = dir.path().join("settings.json");
        fs::write(&shared, "old").expect("write");
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o644)).expect("chmod");
        write_atomic(&shared, b"new", Access::Keep).expect("writes");
        assert_eq!(mode(&shared), 0o644);
        assert_eq!(fs::read_to_string(&shared).expect("read"), "new");

        write_atomic(&shared, b"secret", Access::Private).expect("writes");
        assert_eq!(mode(&shared), 0o600);
    }

    #[test]
    fn no_temporary_file_is_left_and_symlinks_are_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.json");
        fs::write(&real, "a").expect("write");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        write_atomic(&link, b"b", Access::Keep).expect("writes");
        assert!(
            fs::symlink_metadata(&link)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).expect("read"), "b");
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_streamed_write_that_fails_halfway_leaves_the_old_file_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("export.json");
        fs::write(&file, "the previous export").expect("write");
        let failed: Result<(), io::Error> = write_atomic_with(&file, Access::Private, |out| {
            out.write_all(&[b'x'; 100_000])?;
            Err(io::Error::other("the store went away"))
        });
        assert_eq!(
            failed.expect_err("fails").to_string(),
            "the store went away"
        );
        assert_eq!(
            fs::read_to_string(&file).expect("read"),
            "the previous export"
        );
        assert_eq!(
            fs::read_dir(dir.path()).expect("list").count(),
            1,
            "no temporary file is left"
        );

        let written: Result<usize, io::Error> = write_atomic_with(&file, Access::Private, |out| {
            for _ in 0..1000 {
                out.write_all(b"a line\n")?;
            }
            Ok(1000)
        });
        assert_eq!(written.expect("writes"), 1000);
        assert_eq!(
            fs::read_to_string(&file).expect("read").lines().count(),
            1000
        );
        assert_eq!(mode(&file), 0o600);
    }

    #[test]
    fn missing_directories_and_parents_are_created_private() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("data").join("logs");
        private_dir(&dir).expect("created");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("data")), 0o700);
    }

    #[test]
    fn a_wider_directory_is_narrowed_and_a_narrower_one_left_alone() {
        let root = tempfile::tempdir().expect("tempdir");
        let wide = root.path().join("wide");
        std::fs::create_dir(&wide).expect("mkdir");
        std::fs::set_permissions(&wide, std::fs::Permissions::from_mode(0o775)).expect("chmod");
        private_dir(&wide).expect("narrowed");
        assert_eq!(mode(&wide), 0o700);
        let narrow = root.path().join("narrow");
        std::fs::create_dir(&narrow).expect("mkdir");
        std::fs::set_permissions(&narrow, std::fs::Permissions::from_mode(0o500)).expect("chmod");
        private_dir(&narrow).expect("kept");
        assert_eq!(mode(&narrow), 0o500);
    }

    #[test]
    fn a_file_in_the_way_is_an_error() {
        let root = tempfile::tempdir().expect("tempdir");
        let file = root.path().join("file");
        std::fs::write(&file, "x").expect("file");
        assert!(private_dir(&file).is_err());
    }
}
