//! A git repository read from its files, without running `git`: where its git
//! directory is and what full sha an abbreviated one names. The commit-capture
//! hook needs both and has a budget of milliseconds, which one `git` process
//! would spend on its own (see docs/DESIGN.md, Commits).

use std::path::{Path, PathBuf};

/// The directories of a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDirs {
    /// The working tree's top (the directory holding `.git`).
    pub work: PathBuf,
    /// This checkout's git dir (its `HEAD`): `.git`, or a worktree's dir.
    pub git: PathBuf,
    /// Where objects and refs live: the same as `git` except in a worktree.
    pub common: PathBuf,
}

/// The repository `start` is in (walking up), if any.
pub fn locate(start: &Path) -> Option<GitDirs> {
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let git = if dot_git.is_dir() {
            dot_git
        } else if dot_git.is_file() {
            // A worktree or submodule: `.git` is a file `gitdir: <path>`.
            let text = std::fs::read_to_string(&dot_git).ok()?;
            dir.join(text.trim().strip_prefix("gitdir:")?.trim())
        } else {
            continue;
        };
        let common = match std::fs::read_to_string(git.join("commondir")) {
            Ok(c) => git.join(c.trim()),
            Err(_) => git.clone(),
        };
        return Some(GitDirs {
            work: dir.to_path_buf(),
            git,
            common,
        });
    }
    None
}

/// Whether `text` could be a sha as people and git print it: 7 to 64 hex digits.
pub fn is_sha(text: &str) -> bool {
    (7..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A full sha in either case (git writes refs and object names in lowercase; the
/// rule a stored sha keeps is the shared one, on the lowercased text).
fn is_full(sha: &str) -> bool {
    solaria_shared::knowledge::is_full_sha(&sha.to_ascii_lowercase())
}

impl GitDirs {
    /// The full sha that `abbrev` abbreviates, found from `HEAD` (the commit just
    /// made is nearly always there) or among the loose objects (a commit is written
    /// loose; only a later `gc` packs it). `None` when neither knows it, or when
    /// two loose objects share the prefix.
    pub fn full_sha(&self, abbrev: &str) -> Option<String> {
        let abbrev = abbrev.to_ascii_lowercase();
        if !is_sha(&abbrev) {
            return None;
        }
        if let Some(head) = self.head_sha()
            && head.starts_with(&abbrev)
        {
            return Some(head);
        }
        let (fan, rest) = abbrev.split_at(2);
        let mut found = None;
        for entry in std::fs::read_dir(self.common.join("objects").join(fan)).ok()? {
            let name = entry.ok()?.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(rest) && is_full(&format!("{fan}{name}")) {
                if found.is_some() {
                    return None;
                }
                found = Some(format!("{fan}{name}"));
            }
        }
        found
    }

    /// The sha `HEAD` points at: detached, or through its branch's loose ref or
    /// `packed-refs`.
    pub fn head_sha(&self) -> Option<String> {
        let head = std::fs::read_to_string(self.git.join("HEAD")).ok()?;
        let head = head.trim();
        let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
            return is_full(head).then(|| head.to_ascii_lowercase());
        };
        if let Ok(text) = std::fs::read_to_string(self.common.join(name)) {
            let sha = text.trim();
            return is_full(sha).then(|| sha.to_ascii_lowercase());
        }
        let packed = std::fs::read_to_string(self.common.join("packed-refs")).ok()?;
        packed.lines().find_map(|line| {
            let (sha, refname) = line.split_once(' ')?;
            (refname.trim() == name && is_full(sha)).then(|| sha.to_ascii_lowercase())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, GitDirs) {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = dir.path().join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).expect("refs");
        std::fs::create_dir_all(git.join("objects/ab")).expect("objects");
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        let dirs = locate(&dir.path().join("src/deep")).expect("found from below");
        (dir, dirs)
    }

    #[test]
    fn an_abbreviated_sha_resolves_from_head_or_loose_objects() {
        let (_dir, dirs) = repo();
        let head = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(dirs.common.join("refs/heads/main"), format!("{head}\n")).expect("ref");
        assert_eq!(dirs.full_sha("0123456").as_deref(), Some(head));
        let loose = "ab11111111111111111111111111111111111111";
        std::fs::write(dirs.common.join("objects/ab").join(&loose[2..]), "").expect("object");
        assert_eq!(dirs.full_sha("ab11111").as_deref(), Some(loose));
        assert_eq!(dirs.full_sha("ab22222"), None, "unknown prefix");
        std::fs::write(
            dirs.common
                .join("objects/ab")
                .join("11111111111111111111111111111111111112"),
            "",
        )
        .expect("object");
        assert_eq!(dirs.full_sha("ab11111"), None, "ambiguous prefix");
        assert_eq!(dirs.full_sha("xyz"), None, "not a sha");
    }

    #[test]
    fn a_packed_branch_and_a_detached_head_are_read() {
        let (_dir, dirs) = repo();
        let sha = "fedcba9876543210fedcba9876543210fedcba98";
        std::fs::write(
            dirs.common.join("packed-refs"),
            format!("# pack-refs with: peeled\n{sha} refs/heads/main\n"),
        )
        .expect("packed");
        assert_eq!(dirs.head_sha().as_deref(), Some(sha));
        std::fs::write(dirs.git.join("HEAD"), format!("{sha}\n")).expect("detached");
        assert_eq!(dirs.head_sha().as_deref(), Some(sha));
    }
}
