//! The anchors a new decision or memory gets: the files and symbols it was given
//! (`--file`, `--symbol`, the MCP tools' `files` and `symbols`), the files of the
//! repository its text names (or, when it names none, those its session just
//! edited), the names it writes as code that the code holds, and the commit `HEAD`
//! is at. Files are named from the repository's top; a path outside it is refused.
//! `HEAD` is read from the git dir and a named file is looked for in the working
//! tree; only names written as code take a process (`git grep`).

use super::{OpError, OpResult};
use crate::gitdir;
use solaria_shared::Project;
use solaria_shared::anchors::{Anchors, check_anchor_file, check_anchor_symbol};
use std::path::{Component, Path, PathBuf};

/// Words of a record's text looked at as possible paths, at most.
const WORDS_LOOKED_AT: usize = 400;

/// What a write asks to anchor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requested {
    pub files: Vec<String>,
    pub symbols: Vec<String>,
}

/// The repository of `project` when the current directory is in it.
fn repository_here(project: &Project) -> Option<(gitdir::GitDirs, PathBuf)> {
    let cwd = std::env::current_dir().ok()?;
    super::repository::repository_of_project(&cwd, project).map(|dirs| (dirs, cwd))
}

/// `path` without `.` and with each `..` taken back, as text (the file may not
/// exist: it may be about to be written, or gone).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `given` (relative to `cwd`, or absolute) as a path from the top of `work`.
fn from_top(given: &str, cwd: &Path, work: &Path) -> OpResult<String> {
    let absolute = lexical(&cwd.join(given));
    let inside = absolute
        .strip_prefix(lexical(work))
        .map_err(|_| {
            OpError::BadInput(format!(
                "{given:?} is outside the repository at {}: anchor files of this project only",
                work.display()
            ))
        })?
        .to_string_lossy()
        .into_owned();
    check_anchor_file(&inside).map_err(|e| OpError::BadInput(e.to_string()))
}

/// The paths `text` names that are files of the working tree at `work`.
fn named_files(text: &str, work: &Path) -> Vec<String> {
    let strip: &[char] = &[
        '`', '"', '\'', '(', ')', '[', ']', '<', '>', ',', ';', ':', '.', '!', '?',
    ];
    text.split_whitespace()
        .take(WORDS_LOOKED_AT)
        .map(|w| w.trim_matches(strip))
        .filter(|w| w.contains('/') || w.contains('.'))
        .filter(|w| !w.contains("://"))
        .filter_map(|w| check_anchor_file(w).ok())
        .filter(|w| work.join(w).is_file())
        .collect()
}

/// The most names written as code in a record's text looked for in the code.
const CODE_NAMES_LOOKED_AT: usize = 10;

/// The names `text` writes as code (between backticks, `verify_token` or
/// `verify_token()`) that look like one identifier of three characters or more:
/// candidates for symbols, kept only when the code holds them.
fn code_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for span in text.split('`').skip(1).step_by(2) {
        let name = span.trim().trim_end_matches("()");
        let identifier = name.chars().count() >= 3
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        if identifier && !out.iter().any(|o| o == name) && out.len() < CODE_NAMES_LOOKED_AT {
            out.push(name.to_string());
        }
    }
    out
}

/// The anchors of a record of `project` written now with `texts`: what was
/// asked, checked, then what the texts name (files of the working tree, and names
/// written as code that the code at `HEAD` holds: one `git grep`, never on a
/// hook's path), and where `HEAD` is. Away from the project's repository, asked
/// files are taken as named from its top.
pub fn for_new_record(project: &Project, asked: &Requested, texts: &[&str]) -> OpResult<Anchors> {
    let mut anchors = Anchors::default();
    let here = repository_here(project);
    for f in &asked.files {
        let path = match &here {
            Some((dirs, cwd)) => from_top(f, cwd, &dirs.work)?,
            None => check_anchor_file(f).map_err(|e| OpError::BadInput(e.to_string()))?,
        };
        anchors.add_file(path);
    }
    for s in &asked.symbols {
        anchors.add_symbol(check_anchor_symbol(s).map_err(|e| OpError::BadInput(e.to_string()))?);
    }
    if let Some((dirs, _)) = &here {
        let mut names: Vec<String> = Vec::new();
        for text in texts {
            for f in named_files(text, &dirs.work) {
                anchors.add_file(f);
            }
            for n in code_names(text) {
                if !anchors.symbols.contains(&n) && !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        anchors.head = dirs.head_sha().unwrap_or_default();
        if !names.is_empty()
            && !anchors.head.is_empty()
            && let Ok(found) = super::gitlog::symbol_files(&dirs.work, &names)
        {
            for n in names.into_iter().filter(|n| found.contains_key(n)) {
                anchors.add_symbol(n);
            }
        }
    }
    Ok(anchors)
}

/// How far back a session's edits count as "around" a record written in it.
pub const SESSION_EDITS_WINDOW_MS: i64 = 30 * 60 * 1000;
/// The most files a record borrows from its session's edits.
pub const MOST_SESSION_FILES: usize = 5;

/// A record that names no file of its own borrows the files its session edited
/// just before it was written (`edited`, newest first, as the agent named them):
/// those still in the working tree of `project`'s repository, at most
/// [`MOST_SESSION_FILES`]. A record that names its files knows them better than
/// the session's other edits do.
pub fn add_session_edits(project: &Project, anchors: &mut Anchors, edited: &[String]) {
    if !anchors.files.is_empty() {
        return;
    }
    let Some((dirs, _)) = repository_here(project) else {
        return;
    };
    let work = lexical(&dirs.work);
    let mut added = 0;
    for path in edited {
        if added >= MOST_SESSION_FILES {
            break;
        }
        let p = Path::new(path);
        let inside = if p.is_absolute() {
            lexical(p).strip_prefix(&work).ok().map(Path::to_path_buf)
        } else {
            Some(lexical(p))
        };
        let Some(inside) = inside.and_then(|i| check_anchor_file(&i.to_string_lossy()).ok()) else {
            continue;
        };
        if dirs.work.join(&inside).is_file() && !anchors.files.contains(&inside) {
            anchors.add_file(inside);
            added += 1;
        }
    }
}

/// `anchors` re-anchored where the project's repository is now: `HEAD` and the
/// time of confirming. Away from the repository only the time moves (the
/// commit's time then decides what is news). A symbol no file at `HEAD` holds is
/// dropped: the person said the record holds without it.
pub fn confirmed(
    project: &Project,
    mut anchors: Anchors,
    now: solaria_shared::UnixMillis,
) -> Anchors {
    anchors.confirmed_at = Some(now);
    let here = repository_here(project);
    anchors.head = here
        .as_ref()
        .and_then(|(dirs, _)| dirs.head_sha())
        .unwrap_or_default();
    if let Some((dirs, _)) = &here
        && !anchors.head.is_empty()
        && let Ok(found) = super::gitlog::symbol_files(&dirs.work, &anchors.symbols)
    {
        anchors.symbols.retain(|s| found.contains_key(s));
    }
    anchors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_written_as_code_are_single_identifiers() {
        assert_eq!(
            code_names("call `verify_token()` then `Session`, not `a`, `x.rs`, `a b` or `--x`"),
            vec!["verify_token", "Session"]
        );
        assert!(code_names("no code here").is_empty());
        assert!(code_names("an `unclosed span").is_empty());
    }

    #[test]
    fn a_file_is_named_from_the_top_and_never_outside() {
        let work = Path::new("/repo");
        let cwd = Path::new("/repo/src");
        assert_eq!(
            from_top("auth/jwt.rs", cwd, work).ok().as_deref(),
            Some("src/auth/jwt.rs")
        );
        assert_eq!(
            from_top("../README.md", cwd, work).ok().as_deref(),
            Some("README.md")
        );
        assert_eq!(
            from_top("/repo/a.rs", cwd, work).ok().as_deref(),
            Some("a.rs")
        );
        assert_eq!(
            from_top("--output=x", cwd, work).ok().as_deref(),
            Some("src/--output=x"),
            "a name like an option is a file name"
        );
        let outside = from_top("../../etc/passwd", cwd, work).expect_err("outside");
        assert!(
            outside.to_string().contains("outside the repository"),
            "{outside}"
        );
        assert!(from_top("/etc/passwd", cwd, work).is_err());
    }

    #[test]
    fn the_text_anchors_the_files_it_names_that_exist() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("src/auth")).expect("dirs");
        std::fs::write(dir.path().join("src/auth/jwt.rs"), "fn verify() {}\n").expect("file");
        let named = named_files(
            "Tokens are checked in `src/auth/jwt.rs`. See https://example.com/a.rs and src/none.rs, e.g. this.",
            dir.path(),
        );
        assert_eq!(named, vec!["src/auth/jwt.rs"]);
    }
}
