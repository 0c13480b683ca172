//! What every agent's installer shares: the one error type, the files SOLARIA
//! owns outright (a marker line makes them ours: only those are ever overwritten
//! or deleted), the check of the executable path written into an agent's
//! configuration, and how a part of an install stands ([`Presence`]). Each agent's
//! module keeps only the editing of its own configuration.

use solaria_hook::files::{Access, write_atomic};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Why an install or uninstall stopped. Every file is read and checked before the
/// first one is written, so one of these found while reading leaves everything as
/// it was.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file exists but cannot be read.
    #[error("cannot read {path}: {source}; check its permissions and run the command again")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// An agent's configuration cannot be parsed.
    #[error(
        "{path} is not valid {format} ({reason}); fix it or move it aside and run the \
         command again (SOLARIA never overwrites a file it cannot parse; nothing was changed)"
    )]
    InvalidConfig {
        /// The configuration file.
        path: PathBuf,
        /// What it should hold: `JSON`, `JSON/JSONC`, `TOML`.
        format: &'static str,
        /// The parse error, with its place when the parser gives one.
        reason: String,
    },
    /// The configuration parses, but a part we must edit has the wrong type.
    #[error(
        "{path}: {what} must be {expected} but is {found}; fix it by hand and run the \
         command again (nothing was changed)"
    )]
    UnexpectedShape {
        /// The configuration file.
        path: PathBuf,
        /// Which part, e.g. `the top level` or `"hooks"`.
        what: String,
        /// What the agent expects there.
        expected: &'static str,
        /// What the file holds instead.
        found: &'static str,
    },
    /// A file SOLARIA would write is there, written by someone else.
    #[error(
        "{path} already exists and was not written by SOLARIA; SOLARIA will not overwrite \
         it. Rename or remove it and run the command again (nothing was changed)"
    )]
    ForeignFile {
        /// The file.
        path: PathBuf,
    },
    /// An MCP server named `solaria` that is not ours is already configured.
    #[error(
        "{path} already configures an MCP server named \"solaria\" that does not run this \
         solaria; rename or remove it, then install again (nothing was changed)"
    )]
    ForeignMcpServer {
        /// The configuration file.
        path: PathBuf,
    },
    /// A path cannot be written into an agent's configuration (nothing was
    /// written).
    #[error("cannot use {path:?} as {what}: {reason}; nothing was changed")]
    UnusablePath {
        /// What the path is for (`the solaria executable`, `the project directory`).
        what: &'static str,
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Writing or removing a file failed.
    #[error("cannot write {path}: {source}; check the directory's permissions and free space")]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// How one part of an install stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// Not there (or someone else's file in its place).
    Missing,
    /// Ours, but not what this solaria would write (an older version, another path).
    Stale,
    /// Ours and current.
    Current,
}

impl Presence {
    /// How an edit of a configuration stands: current when adding ours changes
    /// nothing (`with_ours` is `None` when ours cannot be added); stale when only
    /// removing ours would change something; missing otherwise.
    pub fn of_edit<T: PartialEq>(original: &T, with_ours: Option<&T>, without_ours: &T) -> Self {
        if with_ours == Some(original) {
            Presence::Current
        } else if without_ours != original {
            Presence::Stale
        } else {
            Presence::Missing
        }
    }
}

/// What a file SOLARIA owns outright holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// Not there.
    Missing,
    /// Ours (it has our marker), with its text.
    Ours(String),
    /// Someone else's.
    Foreign,
}

/// A file SOLARIA writes whole (a command, a plugin, a subagent): ours when it
/// holds `marker`, which the text we write always does.
#[derive(Debug, Clone, Copy)]
pub struct ManagedFile<'a> {
    pub path: &'a Path,
    pub marker: &'a str,
}

impl ManagedFile<'_> {
    /// Reads the file: missing, ours or someone else's.
    pub fn state(&self) -> Result<FileState, InstallError> {
        match fs::read(self.path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                Ok(if text.contains(self.marker) {
                    FileState::Ours(text.into_owned())
                } else {
                    FileState::Foreign
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(FileState::Missing),
            Err(source) => Err(InstallError::Read {
                path: self.path.to_owned(),
                source,
            }),
        }
    }

    /// Whether `desired` differs from what is there; someone else's file in the
    /// way is an error (an install never overwrites it).
    pub fn needs(&self, desired: &str) -> Result<bool, InstallError> {
        match self.state()? {
            FileState::Foreign => Err(InstallError::ForeignFile {
                path: self.path.to_owned(),
            }),
            FileState::Ours(current) => Ok(current != desired),
            FileState::Missing => Ok(true),
        }
    }

    /// How the file stands against `desired`.
    pub fn presence(&self, desired: &str) -> Result<Presence, InstallError> {
        Ok(match self.state()? {
            FileState::Ours(text) if text == desired => Presence::Current,
            FileState::Ours(_) => Presence::Stale,
            FileState::Missing | FileState::Foreign => Presence::Missing,
        })
    }

    /// Removes the file if it is ours; whether it was.
    pub fn remove_if_ours(&self) -> Result<bool, InstallError> {
        match self.state()? {
            FileState::Ours(_) => remove(self.path).map(|()| true),
            FileState::Missing | FileState::Foreign => Ok(false),
        }
    }
}

/// The executable path as text fit for an agent's configuration: absolute (agents
/// run hooks from the project directory) and a [`written_path`]. Quotes and spaces
/// are fine: each place quotes the path its own way.
pub fn exe_str(exe: &Path) -> Result<&str, InstallError> {
    let s = written_path("the solaria executable", exe)?;
    if !exe.is_absolute() {
        return Err(InstallError::UnusablePath {
            what: "the solaria executable",
            path: exe.to_owned(),
            reason: "the path is not absolute (agents run hooks from the project directory)",
        });
    }
    Ok(s)
}

/// **The one rule** for every path an install writes into an agent's
/// configuration (the executable, the data directory, and the files and project
/// it names in a command line, a marker comment or a trust key): UTF-8, with no
/// control character and no back-quote, which no quoting carries safely through
/// every place a path is written (a line of TOML or its comment, a shell word, a
/// command inside markdown). A newline in a project's name would otherwise end
/// a comment and write a table of its own into the user's configuration.
pub fn written_path<'a>(what: &'static str, path: &'a Path) -> Result<&'a str, InstallError> {
    let unusable = |reason| InstallError::UnusablePath {
        what,
        path: path.to_owned(),
        reason,
    };
    let s = path
        .to_str()
        .ok_or_else(|| unusable("the path is not valid UTF-8"))?;
    if s.chars().any(char::is_control) {
        return Err(unusable(
            "the path holds a control character (a newline, a tab, a NUL…)",
        ));
    }
    if s.contains('`') {
        return Err(unusable("the path holds a back-quote"));
    }
    Ok(s)
}

/// Checks each of an install's `paths` (what each is for, and the path when
/// there is one) by [`written_path`], before anything is read or written.
pub fn written_paths(paths: &[(&'static str, Option<&Path>)]) -> Result<(), InstallError> {
    for (what, path) in paths {
        if let Some(path) = path {
            written_path(what, path)?;
        }
    }
    Ok(())
}

/// The text of an agent's configuration file, `None` when there is none; a file
/// that is not UTF-8 is not valid `format` (`JSON`, `TOML`…).
pub fn read_text(path: &Path, format: &'static str) -> Result<Option<String>, InstallError> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| InstallError::InvalidConfig {
                path: path.to_owned(),
                format,
                reason: "not UTF-8 text".into(),
            }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Writes one file (keeping its mode; a new one is 0600), creating its directory.
pub fn write(path: &Path, contents: &[u8]) -> Result<(), InstallError> {
    let err = |source| InstallError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(err)?;
    }
    write_atomic(path, contents, Access::Keep).map_err(err)
}

/// Removes a file; one already gone is fine.
pub fn remove(path: &Path) -> Result<(), InstallError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(InstallError::Write {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The SOLARIA programs (`solaria`, `solaria-hook`) that `file` names by absolute
/// path and that no longer exist: hooks written by an install whose binary was
/// moved or removed since, which capture nothing. For `solaria doctor`.
///
/// The files are four agents' configs (JSON, TOML, a JavaScript plugin), so paths
/// are found in the text: a word between separators, or a whole quoted string (a
/// path with a space in it is always quoted, by the installer and by hand).
pub fn missing_programs(file: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string(file) else {
        return Vec::new();
    };
    let words = text.split(|c: char| c.is_whitespace() || "\"'`,;=[](){}".contains(c));
    let quoted = text.split(['"', '\'', '`', '\\']);
    let mut missing: Vec<PathBuf> = words
        .chain(quoted)
        .filter(|word| word.starts_with('/'))
        .map(Path::new)
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| matches!(n, "solaria" | "solaria-hook"))
        })
        .filter(|path| !path.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_programs_that_are_gone_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let here = dir.path().join("solaria-hook");
        fs::write(&here, "").expect("write");
        let file = dir.path().join("settings.json");
        let text = format!(
            r#"{{"command": "{} --data-dir /d stop", "x": "/gone/bin/solaria-hook --data-dir /d stop",
                "y": "'/gone/bin/solaria' hook stop", "z": "/gone/bin/prettier", "w": "/gone/solaria-hooks",
                "v": "'/gone/my tools/solaria-hook' stop", "u": ["/gone/my tools/solaria", "mcp"]}}"#,
            here.display()
        );
        fs::write(&file, text).expect("write");
        assert_eq!(
            missing_programs(&file),
            [
                PathBuf::from("/gone/bin/solaria"),
                PathBuf::from("/gone/bin/solaria-hook"),
                PathBuf::from("/gone/my tools/solaria"),
                PathBuf::from("/gone/my tools/solaria-hook"),
            ]
        );
        assert!(missing_programs(&dir.path().join("none.json")).is_empty());
    }
}
