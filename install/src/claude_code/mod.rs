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
//! [`uninstall`] removes exactly what we added and nothing else (a settings file left
//! empty by it is removed: an install created it). A settings file we
//! cannot parse is never overwritten; a `memory.md` or `librarian.md` we did not write
//! is never overwritten nor deleted (the install stops for a foreign `memory.md`, and
//! keeps a foreign `librarian.md` and says so).

mod hooks;
mod librarian;
mod mcp_entry;
pub mod plugin;
mod settings;
mod slash;
#[cfg(test)]
mod tests;

pub use hooks::{HOOK_EVENTS, HookEvent, hook_command};
pub use librarian::{LIBRARIAN_FILE_NAME, LIBRARIAN_MARKER, librarian_file};
pub use mcp_entry::MCP_SERVER_NAME;
pub(crate) use settings::json_kind;
pub use slash::{SlashRequest, parse_slash_args, slash_command_file};
pub use solaria_hook::program::HookProgram;

use crate::managed::{FileState, ManagedFile, exe_str, remove, write, written_paths};
use crate::{InstallError, Presence};
use hooks::{add_hooks, remove_hooks};
use mcp_entry::{add_mcp_server, remove_mcp_server};
use settings::{read_settings, render_settings};
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

/// The `/memory` command file at `path`.
fn command(path: &Path) -> ManagedFile<'_> {
    ManagedFile {
        path,
        marker: COMMAND_MARKER,
    }
}

/// The Librarian's file at `path`.
fn librarian(path: &Path) -> ManagedFile<'_> {
    ManagedFile {
        path,
        marker: LIBRARIAN_MARKER,
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

/// Adds SOLARIA's hooks to `target.settings_path` and writes the `/memory` command,
/// replacing any earlier SOLARIA entries (for example ones pointing to an old
/// executable). `solaria_exe` must be an absolute path.
pub fn install(target: &Target, solaria_exe: &Path) -> Result<InstallReport, InstallError> {
    let exe = exe_str(solaria_exe)?;
    written_paths(&[
        ("Claude Code's settings file", Some(&target.settings_path)),
        (
            "Claude Code's commands directory",
            Some(&target.commands_dir),
        ),
        ("Claude Code's agents directory", Some(&target.agents_dir)),
        ("Claude Code's MCP configuration", Some(&target.mcp_path)),
        ("the data directory", target.data_dir.as_deref()),
    ])?;
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
    let command_changed = command(&command_path).needs(&desired_command)?;

    let librarian_path = target.librarian_path();
    let desired_librarian = librarian_file();
    let librarian = match librarian(&librarian_path).state()? {
        FileState::Foreign => Librarian::KeptYours,
        FileState::Ours(current) if current == desired_librarian => Librarian::Unchanged,
        FileState::Ours(_) | FileState::Missing => Librarian::Written,
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
    let command_ours = matches!(command(&command_path).state()?, FileState::Ours(_));

    let settings_changed = existed && settings != original;
    if settings_changed {
        write_or_remove(settings_path, settings)?;
    }
    let (mcp_original, mcp_existed) = read_settings(&target.mcp_path)?;
    let mut mcp = mcp_original.clone();
    remove_mcp_server(&mut mcp);
    let mcp_changed = mcp_existed && mcp != mcp_original;
    if mcp_changed {
        write_or_remove(&target.mcp_path, mcp)?;
    }
    if command_ours {
        remove(&command_path)?;
    }
    let command_changed = command_ours;
    let librarian_path = target.librarian_path();
    let librarian = match librarian(&librarian_path).state()? {
        FileState::Ours(_) => {
            remove(&librarian_path)?;
            Librarian::Removed
        }
        FileState::Foreign => Librarian::KeptYours,
        FileState::Missing => Librarian::Absent,
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

/// Writes `settings` back to `path` once ours are out of them, or removes the file
/// when nothing is left in it: an install that created it leaves none behind, as the
/// other agents' uninstalls do.
fn write_or_remove(
    path: &Path,
    settings: serde_json::Map<String, serde_json::Value>,
) -> Result<(), InstallError> {
    if settings.is_empty() {
        return remove(path);
    }
    write(path, render_settings(settings, path)?.as_bytes())
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
    let hooks = Presence::of_edit(&settings, added.ok().map(|()| &with_ours), &without_ours);

    let (mcp_config, _) = read_settings(&target.mcp_path)?;
    let mut with_ours = mcp_config.clone();
    let added = add_mcp_server(&mut with_ours, exe, &target.mcp_path);
    let mut without_ours = mcp_config.clone();
    remove_mcp_server(&mut without_ours);
    let mcp = Presence::of_edit(&mcp_config, added.ok().map(|()| &with_ours), &without_ours);
    let command = command(&target.command_path()).presence(&slash_command_file(exe))?;
    Ok(InstallState {
        hooks,
        command,
        mcp,
    })
}
