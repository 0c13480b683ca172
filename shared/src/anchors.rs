//! The code a decision or a memory speaks of (its anchors: files and symbols,
//! synced with the record) and what has happened to that code since the record
//! was written or last confirmed (its staleness, which each machine works out from
//! its own git). The rules of what an anchor may be live here, once; the wording of
//! "changed since" is `crate::render::knowledge::changed_since`.

use crate::time::UnixMillis;
use serde::{Deserialize, Serialize};

/// The most files one record is anchored to.
pub const MAX_ANCHOR_FILES: usize = 20;
/// The most symbols one record names.
pub const MAX_ANCHOR_SYMBOLS: usize = 20;
/// The longest anchor path or symbol, in characters.
pub const MAX_ANCHOR_CHARS: usize = 400;

/// The code a decision or memory speaks of. Empty for a record that names none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Anchors {
    /// Paths from the repository's top, `/`-separated, as git names them.
    pub files: Vec<String>,
    /// Functions, types or other names in the code, as written.
    pub symbols: Vec<String>,
    /// The commit `HEAD` was at when the record was written or last confirmed
    /// (empty when it was written outside a repository): what came after it is
    /// news, whatever the clocks say.
    pub head: String,
    /// When a person last said the record still holds.
    pub confirmed_at: Option<UnixMillis>,
}

impl Anchors {
    /// Whether it names no code and was never confirmed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.symbols.is_empty()
            && self.confirmed_at.is_none()
            && self.head.is_empty()
    }

    /// Adds `path` unless it is there already or the list is full.
    pub fn add_file(&mut self, path: String) {
        if !self.files.contains(&path) && self.files.len() < MAX_ANCHOR_FILES {
            self.files.push(path);
        }
    }

    /// Adds `symbol` unless it is there already or the list is full.
    pub fn add_symbol(&mut self, symbol: String) {
        if !self.symbols.contains(&symbol) && self.symbols.len() < MAX_ANCHOR_SYMBOLS {
            self.symbols.push(symbol);
        }
    }
}

/// Why an anchor is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadAnchor {
    #[error("an anchored file is named from the repository's top, not {0:?}")]
    NotRelative(String),
    #[error("an anchored file stays inside its repository: {0:?} leaves it")]
    LeavesRepository(String),
    #[error("an anchor is at most {MAX_ANCHOR_CHARS} characters of text on one line: {0:?}")]
    NotText(String),
    #[error("an anchor may not be empty")]
    Empty,
}

fn shown(text: &str) -> String {
    text.chars().take(80).collect()
}

fn plain_text(text: &str) -> Result<(), BadAnchor> {
    if text.chars().count() > MAX_ANCHOR_CHARS || text.chars().any(char::is_control) {
        return Err(BadAnchor::NotText(shown(text)));
    }
    Ok(())
}

/// The one rule for an anchored file: a path relative to the repository's top,
/// `/`-separated, that never leaves it (no `..`, no leading `/`), on one line.
/// `./a/b` and `a//b` are read as `a/b`. Whatever it looks like otherwise (a name
/// starting with `-`), it is only ever handed to git as a literal path.
pub fn check_anchor_file(path: &str) -> Result<String, BadAnchor> {
    plain_text(path)?;
    if path.starts_with('/') || path.starts_with('~') {
        return Err(BadAnchor::NotRelative(shown(path)));
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(BadAnchor::LeavesRepository(shown(path))),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(BadAnchor::Empty);
    }
    Ok(parts.join("/"))
}

/// The one rule for a symbol: a name on one line, trimmed.
pub fn check_anchor_symbol(symbol: &str) -> Result<String, BadAnchor> {
    let s = symbol.trim();
    if s.is_empty() {
        return Err(BadAnchor::Empty);
    }
    plain_text(s)?;
    Ok(s.to_string())
}

/// The most commits a staleness keeps (the count says how many there were).
pub const MAX_COMMITS_KEPT: usize = 5;

/// A commit that changed an anchored file after the record's time.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ChangeCommit {
    pub sha: String,
    /// Its message's first line.
    pub subject: String,
    pub author: String,
    pub at: UnixMillis,
}

/// An anchored file that is no longer at `HEAD`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GoneFile {
    pub path: String,
    /// Where git saw it go, when it was renamed rather than deleted.
    pub renamed_to: Option<String>,
    /// The commit that removed or renamed it, when git's log shows it.
    pub by: Option<String>,
}

/// What changed in a record's code since its time, as one machine's git saw it
/// at `head`. A record with nothing changed has no staleness at all.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Staleness {
    /// The newest commits that changed its files, newest first (at most
    /// [`MAX_COMMITS_KEPT`]).
    pub commits: Vec<ChangeCommit>,
    /// How many commits changed them in all.
    pub commit_count: usize,
    /// The anchored files those commits changed.
    pub files: Vec<String>,
    /// Anchored files no longer at `HEAD`.
    pub gone: Vec<GoneFile>,
    /// Symbols it names that no file at `HEAD` holds any more.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gone_symbols: Vec<String>,
}

impl Staleness {
    /// Whether anything changed at all.
    pub fn is_stale(&self) -> bool {
        self.commit_count > 0 || !self.gone.is_empty() || !self.gone_symbols.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anchored_file_is_a_path_inside_the_repository() {
        assert_eq!(
            check_anchor_file("./src//auth/jwt.rs").as_deref(),
            Ok("src/auth/jwt.rs")
        );
        assert_eq!(
            check_anchor_file("--output=x").as_deref(),
            Ok("--output=x"),
            "a name like an option is a name: git only ever reads it as a literal path"
        );
        assert!(matches!(
            check_anchor_file("/etc/passwd"),
            Err(BadAnchor::NotRelative(_))
        ));
        assert!(matches!(
            check_anchor_file("src/../../secret"),
            Err(BadAnchor::LeavesRepository(_))
        ));
        assert!(matches!(
            check_anchor_file("a\nb"),
            Err(BadAnchor::NotText(_))
        ));
        assert_eq!(check_anchor_file("./"), Err(BadAnchor::Empty));
        assert!(check_anchor_file(&"a".repeat(MAX_ANCHOR_CHARS + 1)).is_err());
    }

    #[test]
    fn anchors_keep_each_file_once_and_a_bounded_number() {
        let mut a = Anchors::default();
        assert!(a.is_empty());
        for i in 0..MAX_ANCHOR_FILES + 5 {
            a.add_file(format!("f{}", i % (MAX_ANCHOR_FILES + 2)));
        }
        a.add_file("f0".into());
        assert_eq!(a.files.len(), MAX_ANCHOR_FILES);
        assert!(!a.is_empty());
        assert_eq!(
            check_anchor_symbol("  verify_token "),
            Ok("verify_token".into())
        );
        assert_eq!(check_anchor_symbol(" "), Err(BadAnchor::Empty));
    }
}
