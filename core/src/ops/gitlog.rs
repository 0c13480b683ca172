//! The `git` processes behind commit import and completion: `git log` (one
//! process for a whole history) and `git show` (one commit), both with
//! `--numstat` and a NUL-separated format, parsed here. Never run from a hook.
//!
//! Every revision follows `--end-of-options` (git 2.24 or later): whatever a
//! record says, git reads it as a revision, never as an option such as
//! `--output=FILE`.

use solaria_shared::UnixMillis;
use std::path::Path;
use std::process::Command;

/// What git says of one commit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GitCommit {
    pub sha: String,
    pub author: String,
    pub committed_at: UnixMillis,
    pub message: String,
    /// Paths changed (renames as a delete and an add), at most [`MAX_FILES`].
    pub files: Vec<String>,
    /// Over every changed file, listed or not.
    pub insertions: u64,
    pub deletions: u64,
}

/// The most paths a commit keeps (a vendored tree would otherwise fill the row).
pub const MAX_FILES: usize = 200;

/// Every field ends with a NUL, and nothing git prints there can hold one (a
/// message cannot), so splitting on NUL is exact: a leading NUL, then sha,
/// author, commit time, message, and the numstat text up to the next commit.
const FORMAT: &str = "--format=%x00%H%x00%an%x00%ct%x00%B%x00";

/// Why git did not answer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run `git` ({0}); is git installed and on PATH?")]
    Spawn(std::io::Error),
    #[error("git {0}")]
    Failed(String),
}

fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        // Plain paths, no pager or colour whatever the user's config says, and no
        // index refresh (a background read must not take the index lock).
        .args(["-c", "core.quotePath=false", "--no-pager"])
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("failed").trim().to_string();
        if first.contains("--end-of-options") {
            return Err(GitError::Failed(format!(
                "{first} (git 2.24 or later is needed; upgrade git)"
            )));
        }
        return Err(GitError::Failed(first));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The history of `HEAD` in `dir`, newest first, at most `max` commits, made
/// since `since` when given. An empty repository has none.
pub fn log(dir: &Path, since: Option<UnixMillis>, max: usize) -> Result<Vec<GitCommit>, GitError> {
    let max = format!("--max-count={max}");
    let since = since.map(|s| format!("--since=@{}", s.0.div_euclid(1000)));
    let mut args = vec!["log", "--numstat", "--no-renames", FORMAT, &max];
    if let Some(s) = &since {
        args.push(s);
    }
    args.extend(["--end-of-options", "HEAD", "--"]);
    match git(dir, &args) {
        Ok(text) => Ok(parse(&text)),
        Err(GitError::Failed(e)) if e.contains("does not have any commits") => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// A commit as the staleness check reads it: who, when, its parents and the
/// files it changed (renames followed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Change {
    pub sha: String,
    pub parents: Vec<String>,
    pub author: String,
    pub committed_at: UnixMillis,
    /// Its message's first line.
    pub subject: String,
    pub files: Vec<FileChange>,
}

/// One path a commit changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// `D` deleted, `R` renamed (to `renamed_to`), anything else changed.
    pub status: char,
    pub renamed_to: Option<String>,
}

/// Fields as [`FORMAT`], with the parents and the subject only.
const CHANGE_FORMAT: &str = "--format=%x00%H%x00%P%x00%an%x00%ct%x00%s%x00";

/// The commits of `HEAD` in `dir` made since `since` (committer time), newest
/// first, parents before children never, at most `max`: with the files each
/// changed and renames followed. Merges are left out (their changes are their
/// parents'). An empty repository has none.
pub fn changes_since(dir: &Path, since: UnixMillis, max: usize) -> Result<Vec<Change>, GitError> {
    let max = format!("--max-count={max}");
    let since = format!("--since=@{}", since.0.div_euclid(1000));
    let args = [
        "log",
        "--topo-order",
        "--no-merges",
        "--name-status",
        "-M",
        CHANGE_FORMAT,
        &max,
        &since,
        "--end-of-options",
        "HEAD",
        "--",
    ];
    let text = match git(dir, &args) {
        Ok(text) => text,
        Err(GitError::Failed(e)) if e.contains("does not have any commits") => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let mut fields = text.split('\0').skip(1);
    let mut out = Vec::new();
    while let (Some(sha), Some(parents), Some(author), Some(time), Some(subject)) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) {
        let status = fields.next().unwrap_or("");
        let mut c = Change {
            sha: sha.trim().to_ascii_lowercase(),
            parents: parents
                .split_whitespace()
                .map(str::to_ascii_lowercase)
                .collect(),
            author: author.to_string(),
            committed_at: UnixMillis(time.trim().parse::<i64>().unwrap_or(0) * 1000),
            subject: subject.trim().to_string(),
            files: Vec::new(),
        };
        for line in status.lines() {
            let mut parts = line.split('\t');
            let (Some(code), Some(path)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Some(first) = code.chars().next() else {
                continue;
            };
            let renamed_to = if first == 'R' {
                parts.next().map(unquote)
            } else {
                None
            };
            if c.files.len() < MAX_FILES {
                c.files.push(FileChange {
                    path: unquote(path),
                    status: first,
                    renamed_to,
                });
            }
        }
        out.push(c);
    }
    Ok(out)
}

/// Every file at `HEAD` in `dir` (none in an empty repository).
pub fn files_at_head(dir: &Path) -> Result<std::collections::HashSet<String>, GitError> {
    // No `--` after the revision: after `--end-of-options`, ls-tree would take it
    // for a path and list nothing.
    match git(
        dir,
        &[
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--end-of-options",
            "HEAD",
        ],
    ) {
        Ok(text) => Ok(text
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()),
        Err(GitError::Failed(e)) if e.contains("Not a valid object name") => Ok(Default::default()),
        Err(e) => Err(e),
    }
}

/// The files at `HEAD` in `dir` that hold each of `symbols` as a whole word
/// (`git grep -w -F`, text files only), by symbol; a symbol found nowhere has no
/// entry. Each symbol is handed to git after `-e`, so one that looks like an
/// option is still only a pattern. An empty repository holds none.
pub fn symbol_files(
    dir: &Path,
    symbols: &[String],
) -> Result<std::collections::HashMap<String, Vec<String>>, GitError> {
    let mut found: std::collections::HashMap<String, Vec<String>> = Default::default();
    if symbols.is_empty() {
        return Ok(found);
    }
    let mut args = vec!["grep", "-I", "-o", "-w", "-F", "-z"];
    for s in symbols {
        args.push("-e");
        args.push(s);
    }
    args.extend(["HEAD", "--"]);
    let text = match git(dir, &args) {
        Ok(text) => text,
        // `git grep` fails without a line of output when nothing matched.
        Err(GitError::Failed(e)) if e == "failed" => return Ok(found),
        Err(GitError::Failed(e))
            if e.contains("bad revision") || e.contains("unable to resolve") =>
        {
            return Ok(found);
        }
        Err(e) => return Err(e),
    };
    // Each match is `HEAD:path`, a NUL, the matched text, a newline.
    let mut rest = text.as_str();
    while let Some(nul) = rest.find('\0') {
        let path = rest[..nul].strip_prefix("HEAD:").unwrap_or(&rest[..nul]);
        let after = &rest[nul + 1..];
        let end = after.find('\n').unwrap_or(after.len());
        let symbol = &after[..end];
        let files = found.entry(symbol.to_string()).or_default();
        if !files.iter().any(|f| f == path) {
            files.push(path.to_string());
        }
        rest = after.get(end + 1..).unwrap_or("");
    }
    Ok(found)
}

/// One commit of the repository at `dir` (a full or abbreviated sha; callers
/// check what they pass, and git reads it as a revision whatever it is).
pub fn show(dir: &Path, sha: &str) -> Result<GitCommit, GitError> {
    let spec = format!("{sha}^{{commit}}");
    let text = git(
        dir,
        &[
            "show",
            "--numstat",
            "--no-renames",
            FORMAT,
            "--end-of-options",
            &spec,
            "--",
        ],
    )?;
    parse(&text)
        .into_iter()
        .next()
        .ok_or_else(|| GitError::Failed(format!("show {sha}: no commit in the output")))
}

/// Reads the output of [`FORMAT`] with `--numstat`.
fn parse(text: &str) -> Vec<GitCommit> {
    let mut fields = text.split('\0').skip(1);
    let mut out = Vec::new();
    while let (Some(sha), Some(author), Some(time), Some(message)) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    {
        let numstat = fields.next().unwrap_or("");
        let mut c = GitCommit {
            sha: sha.trim().to_ascii_lowercase(),
            author: author.to_string(),
            committed_at: UnixMillis(time.trim().parse::<i64>().unwrap_or(0) * 1000),
            message: message.trim_end().to_string(),
            ..GitCommit::default()
        };
        for line in numstat.lines() {
            let mut parts = line.splitn(3, '\t');
            let (Some(ins), Some(del), Some(path)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            // Binary files count as changed, with no lines: `-\t-\tpath`.
            c.insertions += ins.parse::<u64>().unwrap_or(0);
            c.deletions += del.parse::<u64>().unwrap_or(0);
            if c.files.len() < MAX_FILES {
                c.files.push(unquote(path));
            }
        }
        out.push(c);
    }
    out
}

/// A path as git prints it: quoted, with C escapes, when it holds a tab, a
/// newline, a quote or a backslash.
fn unquote(path: &str) -> String {
    let Some(inner) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return path.to_string();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_output_splits_into_commits_with_their_numstat() {
        let text = "\0aaaa\0Ada\x001700000000\0Two\n\nDecision: D#0123456789ab\n\0\n\n3\t1\tsrc/a.rs\n-\t-\tlogo.png\n0\t2\t\"we\\\"ird.txt\"\n\0bbbb\0Bob\x001600000000\0\0\n";
        let commits = parse(text);
        assert_eq!(commits.len(), 2);
        assert_eq!(commits[0].sha, "aaaa");
        assert_eq!(commits[0].author, "Ada");
        assert_eq!(commits[0].committed_at, UnixMillis(1_700_000_000_000));
        assert_eq!(commits[0].message, "Two\n\nDecision: D#0123456789ab");
        assert_eq!(
            commits[0].files,
            vec!["src/a.rs", "logo.png", "we\"ird.txt"]
        );
        assert_eq!((commits[0].insertions, commits[0].deletions), (3, 3));
        assert_eq!(
            commits[1].message, "",
            "an empty message is not a separator"
        );
        assert!(commits[1].files.is_empty());
    }

    /// A repository in a temporary directory with one commit, and git free of
    /// the user's and the system's configuration.
    fn repository() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("LC_ALL", "C")
                .output()
                .expect("run git");
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        run(&["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").expect("file");
        run(&["add", "a.txt"]);
        run(&[
            "-c",
            "user.name=Ada",
            "-c",
            "user.email=ada@example.com",
            "commit",
            "-q",
            "-m",
            "One",
        ]);
        let head = run(&["rev-parse", "HEAD"]);
        (dir, head)
    }

    #[test]
    fn a_revision_that_starts_with_a_dash_is_read_as_a_revision_not_an_option() {
        let (dir, head) = repository();
        let target = dir.path().join("written-by-git");
        let hostile = format!("--output={}", target.display());
        let e = show(dir.path(), &hostile).expect_err("no such revision");
        assert!(
            e.to_string().contains("bad revision") || e.to_string().contains("unknown revision"),
            "git names it as a revision: {e}"
        );
        let written: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("written-by-git"))
            .collect();
        assert!(written.is_empty(), "git wrote {written:?}");
        assert!(show(dir.path(), "-p").is_err(), "not an option either");

        // What callers rely on still works: a full or abbreviated sha, the history.
        assert_eq!(show(dir.path(), &head).expect("shown").sha, head);
        let shown = show(dir.path(), &head[..7]).expect("abbreviated");
        assert_eq!((shown.sha.as_str(), shown.insertions), (head.as_str(), 1));
        let history = log(dir.path(), None, 10).expect("log");
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].message, "One");
    }
}
