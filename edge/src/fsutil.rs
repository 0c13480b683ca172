//! The directories the edge writes in (the data dir, its `logs/`) are this user's
//! alone. Every writer prepares its directory through [`private_dir`], so whichever
//! runs first (a hook that only logs, the store, the daemon), the result is the same.

use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

/// The mode of a private directory.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Makes `dir` a directory only this user can enter: created 0700 when missing (with
/// any missing parent, also 0700, never readable by others even for an instant), or
/// narrowed to drop every group and other permission when it exists wider. Never
/// widens a directory.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR_MODE)
        .create(dir)?;
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .expect("exists")
            .permissions()
            .mode()
            & 0o777
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
