//! Files only this user may read (the token, the address file): written
//! atomically, mode 0600 from the first byte.

use solaria_hook::files::{Access, write_atomic};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Writes `contents` to `dir/name` atomically, mode 0600 from the start.
pub(super) fn write_private(dir: &Path, name: &str, contents: &str) -> io::Result<()> {
    write_atomic(&dir.join(name), contents.as_bytes(), Access::Private)
}

/// A new temporary file beside `dir/name` holding `contents`, created 0600 (never
/// readable by others, not even for an instant), for a caller that links it into
/// place only if the name is free (the token's first creation).
pub(super) fn write_private_tmp(dir: &Path, name: &str, contents: &str) -> io::Result<PathBuf> {
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let written = file
        .write_all(contents.as_bytes())
        .and_then(|()| file.sync_all());
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
