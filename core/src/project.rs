//! The project a directory belongs to: its normalised git remote when it has one
//! (so every clone on every machine is the same project), else its path.
//!
//! Reads `.git/config` directly instead of running `git`: a hook must finish in
//! milliseconds and a process spawn costs more than the whole write.

use solaria_shared::Project;
use std::path::{Path, PathBuf};

/// The project of `cwd`.
pub fn detect(cwd: &Path) -> Project {
    match find_repo(cwd) {
        Some((root, url)) => match url.as_deref().and_then(normalize_remote) {
            Some(key) => {
                let name = key.rsplit('/').next().unwrap_or(&key).to_string();
                Project { key, name }
            }
            // A repository without a (network) remote is known by its root.
            None => path_project(&root),
        },
        None => path_project(cwd),
    }
}

fn path_project(dir: &Path) -> Project {
    let key = dir.to_string_lossy().trim_end_matches('/').to_string();
    let key = if key.is_empty() { "/".to_string() } else { key };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| key.clone());
    Project { key, name }
}

/// Walks up from `start` to the repository root and returns it with the URL of
/// `origin` (or the first remote), if any.
fn find_repo(start: &Path) -> Option<(PathBuf, Option<String>)> {
    for dir in start.ancestors() {
        let Some(own) = own_git_dir(dir) else {
            continue;
        };
        let git_dir = if own.linked {
            let target = own.path;
            // A worktree's config lives in the common dir, and so does its
            // repository's identity: every worktree of a repository without a
            // remote is known by the main worktree's root, so one removed later
            // takes nothing away.
            match std::fs::read_to_string(target.join("commondir")) {
                Ok(common) => {
                    let common = target.join(common.trim());
                    let config = std::fs::read_to_string(common.join("config")).ok();
                    let url = config.as_deref().and_then(remote_url);
                    return Some((main_root(&common).unwrap_or(dir.to_path_buf()), url));
                }
                Err(_) => target,
            }
        } else {
            own.path
        };
        let config = std::fs::read_to_string(git_dir.join("config")).ok();
        let url = config.as_deref().and_then(remote_url);
        return Some((dir.to_path_buf(), url));
    }
    None
}

/// A directory's own git directory: `.git` itself, or where a `.git` file points
/// (`linked`: a worktree's or a submodule's, `gitdir: <path>`).
struct OwnGitDir {
    path: PathBuf,
    linked: bool,
}

fn own_git_dir(dir: &Path) -> Option<OwnGitDir> {
    let dot_git = dir.join(".git");
    if dot_git.is_dir() {
        return Some(OwnGitDir {
            path: dot_git,
            linked: false,
        });
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    Some(OwnGitDir {
        path: dir.join(target),
        linked: true,
    })
}

/// The branch checked out where `cwd` is (each worktree has its own), read from
/// its `HEAD`; `None` outside a repository or on a detached `HEAD`.
pub fn branch(cwd: &Path) -> Option<String> {
    let own = cwd.ancestors().find_map(own_git_dir)?;
    let head = std::fs::read_to_string(own.path.join("HEAD")).ok()?;
    let name = head.trim().strip_prefix("ref: refs/heads/")?;
    (!name.is_empty()).then(|| name.to_string())
}

/// The root of the main worktree whose git directory is `common` (its `.git`),
/// normalised (`common` is often written relative, `…/worktrees/x/../..`); `None`
/// for a bare repository's, which has no main worktree.
fn main_root(common: &Path) -> Option<PathBuf> {
    let common = std::fs::canonicalize(common).ok()?;
    if common.file_name()? != ".git" {
        return None;
    }
    common.parent().map(Path::to_path_buf)
}

/// The `url` of `[remote "origin"]`, else of the first remote, in a git config.
fn remote_url(config: &str) -> Option<String> {
    let mut section: Option<String> = None;
    let mut first: Option<String> = None;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line
                .strip_prefix("[remote")
                .and_then(|rest| rest.trim().strip_suffix(']'))
                .map(|name| name.trim().trim_matches('"').to_string());
            continue;
        }
        let Some(remote) = &section else { continue };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != "url" {
            continue;
        }
        let value = value.trim().trim_matches('"').to_string();
        if remote == "origin" {
            return Some(value);
        }
        first.get_or_insert(value);
    }
    first
}

/// Normalises a git remote URL to `host/path`: scheme, credentials, port, `.git`
/// and trailing slashes removed, host lower-cased. `git@github.com:a/b.git`,
/// `https://github.com/a/b` and `ssh://git@github.com/a/b.git` all become
/// `github.com/a/b`. Local paths and `file://` URLs return `None`.
pub fn normalize_remote(url: &str) -> Option<String> {
    let url = url.trim();
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return None;
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit('@').next().unwrap_or(authority);
        let host = host.split(':').next().unwrap_or(host);
        (host.to_string(), path.to_string())
    } else if let Some((left, path)) = url.split_once(':') {
        // scp-like syntax: [user@]host:path
        if left.contains('/') || left.is_empty() {
            return None;
        }
        let host = left.rsplit('@').next().unwrap_or(left);
        (host.to_string(), path.to_string())
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).trim_matches('/');
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{}/{}", host.to_lowercase(), path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_forms_normalise_to_one_key() {
        let forms = [
            "git@github.com:acme/api.git",
            "https://github.com/acme/api",
            "https://github.com/acme/api.git/",
            "ssh://git@github.com/acme/api.git",
            "https://user:secret@GitHub.com/acme/api.git",
            "ssh://git@github.com:22/acme/api",
        ];
        for f in forms {
            assert_eq!(
                normalize_remote(f).as_deref(),
                Some("github.com/acme/api"),
                "{f}"
            );
        }
        assert_eq!(normalize_remote("/srv/git/api.git"), None);
        assert_eq!(normalize_remote("file:///srv/git/api.git"), None);
    }

    #[test]
    fn reads_origin_from_the_repository_config() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("api");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::create_dir_all(repo.join("src/auth")).expect("mkdir");
        std::fs::write(
            repo.join(".git/config"),
            "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://github.com/other/api\n[remote \"origin\"]\n\turl = git@github.com:acme/api.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        )
        .expect("write");
        let p = detect(&repo.join("src/auth"));
        assert_eq!(p.key, "github.com/acme/api");
        assert_eq!(p.name, "api");
    }

    #[test]
    fn without_a_remote_the_path_is_the_project() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = detect(dir.path());
        assert_eq!(p.key, dir.path().to_string_lossy());
        let repo = dir.path().join("norepo");
        std::fs::create_dir_all(repo.join(".git/x")).expect("mkdir");
        std::fs::write(repo.join(".git/config"), "[core]\n").expect("write");
        let p = detect(
            &repo
                .join(".git/x")
                .parent()
                .expect("p")
                .parent()
                .expect("p")
                .join("sub"),
        );
        assert_eq!(
            p.name, "norepo",
            "the repository root names a remote-less repo"
        );
    }

    /// `git` with `args` in `dir`, which must succeed.
    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn a_worktree_is_its_repository_s_project_with_or_without_a_remote() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("api");
        std::fs::create_dir_all(&repo).expect("mkdir");
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["commit", "-q", "--allow-empty", "-m", "first"]);
        git(&repo, &["worktree", "add", "-q", "../api-fix", "-b", "fix"]);
        let worktree = dir.path().join("api-fix");
        std::fs::create_dir_all(worktree.join("src")).expect("mkdir");

        let main = detect(&repo);
        assert_eq!(
            detect(&worktree.join("src")),
            main,
            "no remote: the main root"
        );
        assert_eq!(main.name, "api");

        git(
            &repo,
            &["remote", "add", "origin", "git@github.com:acme/api.git"],
        );
        assert_eq!(detect(&worktree).key, "github.com/acme/api");
        assert_eq!(detect(&repo).key, "github.com/acme/api");
    }
}
