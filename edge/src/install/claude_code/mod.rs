//! Wires SOLARIA into Claude Code: hooks in settings.json, the MCP server and the
//! /memory slash command. Files: `hooks.rs` (the hook entries), `mcp_entry.rs` (the
//! MCP server entry), `slash.rs` (the /memory command file and its arguments),
//! `settings.rs` (reading and writing Claude Code's JSON files).
//!
//! Claude Code reads hooks from `~/.claude/settings.json` (user scope) and from
//! `<project>/.claude/settings.json` (project scope). Their shape is
//!
//! ```json
//! { "hooks": { "<Event>": [ { "matcher": "…", "hooks": [
//!     { "type": "command", "command": "…", "timeout": 10 } ] } ] } }
//! ```
//!
//! `matcher` only means something for tool events (PostToolUse: a tool-name pattern,
//! `*` = every tool) and for SessionStart/SessionEnd (the source or reason); leaving
//! it out matches everything, which is what we want for the other events.
//!
//! Custom slash commands are markdown files in `~/.claude/commands/` or
//! `<project>/.claude/commands/`; `memory.md` there becomes `/memory`. Optional YAML
//! front matter (`description`, `argument-hint`, `allowed-tools`, …) comes first.
//! `$ARGUMENTS` is replaced by the text typed after the command, as a raw textual
//! splice (no shell escaping), and a `!` directly followed by a back-quoted command
//! is run through bash before the prompt reaches Claude, when `allowed-tools`
//! permits that command.
//!
//! Subagents are markdown files in `~/.claude/agents/` or `<project>/.claude/agents/`;
//! SOLARIA adds `librarian.md` there (`librarian.rs`), which answers historical
//! questions from the memory with citations.
//!
//! Everything SOLARIA adds is recognisable, so [`install`] is idempotent and
//! [`uninstall`] removes exactly what we added and nothing else. A settings file we
//! cannot parse is never overwritten; a `memory.md` or `librarian.md` we did not write
//! is never overwritten nor deleted (the install stops for a foreign `memory.md`, and
//! keeps a foreign `librarian.md` and says so).

mod hooks;
mod librarian;
mod mcp_entry;
mod settings;
mod slash;
#[cfg(test)]
mod tests;

pub(crate) use hooks::shell_quote;
pub use hooks::{HOOK_EVENTS, HookEvent, hook_command};
pub use librarian::{LIBRARIAN_FILE_NAME, LIBRARIAN_MARKER, librarian_file};
pub use mcp_entry::MCP_SERVER_NAME;
pub(crate) use settings::json_kind;
pub use slash::{SlashRequest, parse_slash_args, slash_command_file};
pub use solaria_hook::program::HookProgram;

use hooks::{add_hooks, remove_hooks};
use mcp_entry::{add_mcp_server, remove_mcp_server};
use settings::{read_settings, render_settings};
use slash::{CommandFile, command_file_state, managed_file_state};
use solaria_hook::files::{Access, write_atomic};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Seconds Claude Code waits for one of our hook commands before cancelling it.
pub const HOOK_TIMEOUT_SECS: u64 = 10;

/// File name of the slash command inside the commands directory (`/memory`).
pub const COMMAND_FILE_NAME: &str = "memory.md";

/// Text that marks a slash-command file as written by SOLARIA. Only a file that
/// contains it is ever overwritten or deleted.
pub const COMMAND_MARKER: &str = "solaria-managed: claude-code slash command";

/// Where a SOLARIA install goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// `~/.claude/settings.json` and `~/.claude/commands/`: every project of this user.
    User,
    /// `<project>/.claude/settings.json` and `<project>/.claude/commands/`.
    Project,
}

/// The Claude Code files one install touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The settings.json that receives the hooks.
    pub settings_path: PathBuf,
    /// The directory that receives `memory.md`.
    pub commands_dir: PathBuf,
    /// The directory that receives the Librarian subagent (`librarian.md`).
    pub agents_dir: PathBuf,
    /// Where Claude Code keeps MCP servers for this scope: `~/.claude.json` (user)
    /// or `<project>/.mcp.json` (project); `solaria mcp` is registered there.
    pub mcp_path: PathBuf,
    /// The data dir the hooks write to, as resolved at install time: when set and
    /// `solaria-hook` sits beside `solaria`, the hooks run it (`solaria_hook`) so
    /// that a running daemon captures their events; otherwise `solaria hook`.
    pub data_dir: Option<PathBuf>,
}

impl Target {
    /// The files of `scope`: under `home/.claude` or `project_dir/.claude`.
    pub fn for_scope(scope: Scope, home: &Path, project_dir: &Path) -> Target {
        let base = match scope {
            Scope::User => home,
            Scope::Project => project_dir,
        };
        let claude = base.join(".claude");
        let mcp_path = match scope {
            Scope::User => home.join(".claude.json"),
            Scope::Project => project_dir.join(".mcp.json"),
        };
        Target {
            data_dir: None,
            settings_path: claude.join("settings.json"),
            commands_dir: claude.join("commands"),
            agents_dir: claude.join("agents"),
            mcp_path,
        }
    }

    /// Path of the `/memory` slash-command file.
    pub fn command_path(&self) -> PathBuf {
        self.commands_dir.join(COMMAND_FILE_NAME)
    }

    /// Path of the Librarian subagent's file.
    pub fn librarian_path(&self) -> PathBuf {
        self.agents_dir.join(LIBRARIAN_FILE_NAME)
    }
}

/// What [`install`] or [`uninstall`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The settings.json looked at.
    pub settings_path: PathBuf,
    /// The slash-command file looked at.
    pub command_path: PathBuf,
    /// Whether any file was written or removed (`settings_changed || command_changed`).
    pub changed: bool,
    /// Whether settings.json was written.
    pub settings_changed: bool,
    /// Whether the slash-command file was written or removed.
    pub command_changed: bool,
    /// What happened to the Librarian subagent's file.
    pub librarian: Librarian,
}

/// What an install or uninstall did with `librarian.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Librarian {
    Written,
    Unchanged,
    Removed,
    /// A `librarian.md` the user wrote is there: left as it is.
    KeptYours,
    /// Nothing of ours was there (uninstall).
    Absent,
}

/// Why an install or uninstall stopped. Nothing is written once one of these is found
/// while reading; a write error may leave the settings written but not the command.
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
    /// settings.json is not JSON.
    #[error(
        "{path} is not valid JSON ({source}); fix it or move it aside and run the command \
         again (SOLARIA never overwrites a settings file it cannot parse; nothing was changed)"
    )]
    InvalidJson {
        /// The settings file.
        path: PathBuf,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
    /// settings.json is JSON, but a part we must edit has the wrong type.
    #[error(
        "{path}: {what} must be {expected} but is {found}; fix it by hand and run the \
         command again (nothing was changed)"
    )]
    UnexpectedShape {
        /// The settings file.
        path: PathBuf,
        /// Which part, e.g. `the top level` or `"hooks"`.
        what: String,
        /// What Claude Code expects there.
        expected: &'static str,
        /// What the file holds instead.
        found: &'static str,
    },
    /// A `memory.md` that SOLARIA did not write is in the way.
    #[error(
        "{path} already exists and was not written by SOLARIA; SOLARIA will not overwrite \
         your own /memory command. Rename or remove it and run the command again (nothing \
         was changed)"
    )]
    ForeignCommandFile {
        /// The slash-command file.
        path: PathBuf,
    },
    /// An MCP server named `solaria` that is not ours is already registered.
    #[error(
        "{path} already registers an MCP server named \"solaria\" that does not run this solaria; \
         rename or remove it, then install again (nothing was changed)"
    )]
    ForeignMcpServer {
        /// The MCP configuration file.
        path: PathBuf,
    },
    /// The executable path cannot be put into a hook command or a slash command.
    #[error("cannot use {path} as the solaria executable: {reason}")]
    UnusableExePath {
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

/// Adds SOLARIA's hooks to `target.settings_path` and writes the `/memory` command,
/// replacing any earlier SOLARIA entries (for example ones pointing to an old
/// executable). `solaria_exe` must be an absolute path.
pub fn install(target: &Target, solaria_exe: &Path) -> Result<InstallReport, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let settings_path = &target.settings_path;
    let command_path = target.command_path();

    let (original, existed) = read_settings(settings_path)?;
    let mut settings = original.clone();
    add_hooks(
        &mut settings,
        &HookProgram::choose(exe, target.data_dir.as_deref()),
        settings_path,
    )?;

    let desired_command = slash_command_file(exe);
    let command_changed = match command_file_state(&command_path)? {
        CommandFile::Foreign => {
            return Err(InstallError::ForeignCommandFile { path: command_path });
        }
        CommandFile::Ours(current) => current != desired_command,
        CommandFile::Missing => true,
    };

    let librarian_path = target.librarian_path();
    let desired_librarian = librarian_file();
    let librarian = match managed_file_state(&librarian_path, LIBRARIAN_MARKER)? {
        CommandFile::Foreign => Librarian::KeptYours,
        CommandFile::Ours(current) if current == desired_librarian => Librarian::Unchanged,
        CommandFile::Ours(_) | CommandFile::Missing => Librarian::Written,
    };
    let (mcp_original, _) = read_settings(&target.mcp_path)?;
    let mut mcp = mcp_original.clone();
    add_mcp_server(&mut mcp, exe, &target.mcp_path)?;
    let mcp_changed = mcp != mcp_original;

    let settings_changed = !existed || settings != original;
    if settings_changed {
        write(
            settings_path,
            render_settings(settings, settings_path)?.as_bytes(),
        )?;
    }
    if command_changed {
        write(&command_path, desired_command.as_bytes())?;
    }
    if mcp_changed {
        write(
            &target.mcp_path,
            render_settings(mcp, &target.mcp_path)?.as_bytes(),
        )?;
    }
    if librarian == Librarian::Written {
        write(&librarian_path, desired_librarian.as_bytes())?;
    }
    Ok(InstallReport {
        settings_path: settings_path.clone(),
        command_path,
        changed: settings_changed
            || command_changed
            || mcp_changed
            || librarian == Librarian::Written,
        settings_changed,
        command_changed,
        librarian,
    })
}

/// Removes SOLARIA's hooks from `target.settings_path` (whatever executable they point
/// to) and our `/memory` command file. Everything else is left as it was; when nothing
/// of ours is there, nothing is written.
pub fn uninstall(target: &Target) -> Result<InstallReport, InstallError> {
    let settings_path = &target.settings_path;
    let command_path = target.command_path();

    let (original, existed) = read_settings(settings_path)?;
    let mut settings = original.clone();
    remove_hooks(&mut settings, settings_path)?;
    let command_state = command_file_state(&command_path)?;

    let settings_changed = existed && settings != original;
    if settings_changed {
        write(
            settings_path,
            render_settings(settings, settings_path)?.as_bytes(),
        )?;
    }
    let (mcp_original, mcp_existed) = read_settings(&target.mcp_path)?;
    let mut mcp = mcp_original.clone();
    remove_mcp_server(&mut mcp);
    let mcp_changed = mcp_existed && mcp != mcp_original;
    if mcp_changed {
        write(
            &target.mcp_path,
            render_settings(mcp, &target.mcp_path)?.as_bytes(),
        )?;
    }
    let command_changed = match command_state {
        CommandFile::Ours(_) => {
            match fs::remove_file(&command_path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(InstallError::Write {
                        path: command_path,
                        source,
                    });
                }
            }
            true
        }
        CommandFile::Missing | CommandFile::Foreign => false,
    };
    let librarian_path = target.librarian_path();
    let librarian = match managed_file_state(&librarian_path, LIBRARIAN_MARKER)? {
        CommandFile::Ours(_) => {
            remove(&librarian_path)?;
            Librarian::Removed
        }
        CommandFile::Foreign => Librarian::KeptYours,
        CommandFile::Missing => Librarian::Absent,
    };
    Ok(InstallReport {
        settings_path: settings_path.clone(),
        command_path,
        changed: settings_changed
            || command_changed
            || mcp_changed
            || librarian == Librarian::Removed,
        settings_changed,
        command_changed,
        librarian,
    })
}

/// Removes a file of ours; one already gone is fine.
fn remove(path: &Path) -> Result<(), InstallError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(InstallError::Write {
            path: path.to_owned(),
            source,
        }),
    }
}

/// How one part of an install stands (Claude Code's here, OpenCode's in
/// `crate::install::opencode`).
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

/// Where a Claude Code install stands, part by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallState {
    /// Our hooks in settings.json.
    pub hooks: Presence,
    /// The `/memory` command file.
    pub command: Presence,
    /// The MCP server entry.
    pub mcp: Presence,
}

/// Compares what is installed in `target` with what [`install`] would write for
/// `solaria_exe`. Reads only.
pub fn state(target: &Target, solaria_exe: &Path) -> Result<InstallState, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let (settings, _) = read_settings(&target.settings_path)?;
    let mut with_ours = settings.clone();
    let added = add_hooks(
        &mut with_ours,
        &HookProgram::choose(exe, target.data_dir.as_deref()),
        &target.settings_path,
    );
    let mut without_ours = settings.clone();
    remove_hooks(&mut without_ours, &target.settings_path)?;
    let hooks = presence(&settings, added.ok().map(|()| &with_ours), &without_ours);

    let (mcp_config, _) = read_settings(&target.mcp_path)?;
    let mut with_ours = mcp_config.clone();
    let added = add_mcp_server(&mut with_ours, exe, &target.mcp_path);
    let mut without_ours = mcp_config.clone();
    remove_mcp_server(&mut without_ours);
    let mcp = presence(&mcp_config, added.ok().map(|()| &with_ours), &without_ours);
    let command = match command_file_state(&target.command_path())? {
        CommandFile::Ours(text) if text == slash_command_file(exe) => Presence::Current,
        CommandFile::Ours(_) => Presence::Stale,
        CommandFile::Missing | CommandFile::Foreign => Presence::Missing,
    };
    Ok(InstallState {
        hooks,
        command,
        mcp,
    })
}

/// Current when adding ours changes nothing; stale when only removing ours would
/// change something; missing otherwise.
fn presence<T: PartialEq>(original: &T, with_ours: Option<&T>, without_ours: &T) -> Presence {
    if with_ours == Some(original) {
        Presence::Current
    } else if without_ours != original {
        Presence::Stale
    } else {
        Presence::Missing
    }
}

fn exe_str(exe: &Path) -> Result<&str, InstallError> {
    let unusable = |reason| InstallError::UnusableExePath {
        path: exe.to_owned(),
        reason,
    };
    let s = exe
        .to_str()
        .ok_or_else(|| unusable("the path is not valid UTF-8"))?;
    if !exe.is_absolute() {
        return Err(unusable(
            "the path is not absolute (Claude Code runs hooks from the project directory)",
        ));
    }
    if s.contains(['\n', '\r', '`', '\0']) {
        return Err(unusable(
            "the path contains a newline, a NUL or a back-quote",
        ));
    }
    Ok(s)
}

/// Writes one of Claude Code's files (keeping its mode; a new one is 0600).
fn write(path: &Path, contents: &[u8]) -> Result<(), InstallError> {
    write_atomic(path, contents, Access::Keep).map_err(|source| InstallError::Write {
        path: path.to_owned(),
        source,
    })
}
