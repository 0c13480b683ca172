//! Wires SOLARIA into Gemini CLI (0.61): hooks and the MCP server in
//! `settings.json`, and the `/solaria` command. Files: `settings.rs` (our entries
//! in `settings.json`, edited in place), `command.rs` (the command file).
//!
//! Gemini reads `~/.gemini/settings.json` (user scope) and
//! `<project>/.gemini/settings.json` (project scope; Gemini asks once before it
//! runs a project's hooks), whose `hooks` map each event to groups of commands
//! (`{"matcher": …, "hooks": [{"name", "type": "command", "command", "timeout"
//! (ms)}]}`), and `mcpServers`. Commands are TOML files in `commands/`.
//!
//! Everything SOLARIA adds is recognisable (hook entries named `solaria-<event>`,
//! an MCP entry running `solaria mcp`, a marker in the command file), so
//! [`install`] is idempotent and [`uninstall`] removes exactly what it added; the
//! settings are edited as text and come back byte for byte.

mod command;
mod settings;
#[cfg(test)]
mod tests;

pub use command::{COMMAND_FILE_NAME, COMMAND_MARKER, command_file};
pub use settings::HOOK_TIMEOUT_MS;

use crate::managed::{FileState, ManagedFile, exe_str, remove, write, written_paths};
use crate::{InstallError, Presence};
use solaria_hook::program::HookProgram;
use std::fs;
use std::path::{Path, PathBuf};

/// Where a SOLARIA install goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `~/.gemini/`: every project of this user.
    User,
    /// `<project>/.gemini/`: this project only.
    Project,
}

/// The Gemini files one install touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The `.gemini` directory.
    pub dir: PathBuf,
    /// The data dir the hooks write to, as resolved at install time.
    pub data_dir: Option<PathBuf>,
}

impl Target {
    /// The files of `scope`: under `home/.gemini` or `project_dir/.gemini`.
    pub fn for_scope(scope: Scope, home: &Path, project_dir: &Path) -> Target {
        let base = match scope {
            Scope::User => home,
            Scope::Project => project_dir,
        };
        Target {
            dir: base.join(".gemini"),
            data_dir: None,
        }
    }

    /// `settings.json`, which receives the hooks and the MCP server.
    pub fn settings_path(&self) -> PathBuf {
        self.dir.join("settings.json")
    }

    /// The `/solaria` command file.
    pub fn command_path(&self) -> PathBuf {
        self.dir.join("commands").join(COMMAND_FILE_NAME)
    }
}

/// What [`install`] or [`uninstall`] did, file by file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    pub settings_changed: bool,
    pub command_changed: bool,
}

impl InstallReport {
    /// Whether any file changed.
    pub fn changed(&self) -> bool {
        self.settings_changed || self.command_changed
    }
}

/// Where a Gemini install stands, part by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallState {
    /// Our hooks and MCP server in settings.json.
    pub settings: Presence,
    /// The `/solaria` command file.
    pub command: Presence,
}

fn command_at(path: &Path) -> ManagedFile<'_> {
    ManagedFile {
        path,
        marker: COMMAND_MARKER,
    }
}

/// Adds SOLARIA's hooks and MCP server to `settings.json` (replacing earlier ones)
/// and writes `/solaria`, for `solaria_exe` (an absolute path). Everything is read
/// and checked before the first write.
pub fn install(target: &Target, solaria_exe: &Path) -> Result<InstallReport, InstallError> {
    let exe = exe_str(solaria_exe)?;
    written_paths(&[
        ("Gemini CLI's directory", Some(&target.dir)),
        ("the data directory", target.data_dir.as_deref()),
    ])?;
    let program = HookProgram::choose(exe, target.data_dir.as_deref());
    let settings_path = target.settings_path();
    let new_settings = settings::with_ours(&settings_path, exe, &program)?;
    let command_path = target.command_path();
    let command_text = command_file(exe);
    let command_changed = command_at(&command_path).needs(&command_text)?;
    let settings_changed = new_settings.is_some();
    if let Some(text) = new_settings {
        write(&settings_path, text.as_bytes())?;
    }
    if command_changed {
        write(&command_path, command_text.as_bytes())?;
    }
    Ok(InstallReport {
        settings_changed,
        command_changed,
    })
}

/// Removes our hooks, MCP server and command (whatever executable they name), and
/// the directories that leaves empty; everything else stays, byte for byte.
pub fn uninstall(target: &Target) -> Result<InstallReport, InstallError> {
    let settings_path = target.settings_path();
    let command_path = target.command_path();
    let edit = settings::without(&settings_path)?;
    let command_ours = matches!(command_at(&command_path).state()?, FileState::Ours(_));
    let settings_changed = edit.is_some();
    match edit {
        Some(settings::Edit::Write(text)) => write(&settings_path, text.as_bytes())?,
        Some(settings::Edit::Remove) => remove(&settings_path)?,
        None => {}
    }
    if command_ours {
        remove(&command_path)?;
    }
    for dir in [command_path.parent(), Some(target.dir.as_path())]
        .into_iter()
        .flatten()
    {
        // Only an empty directory goes: `remove_dir` refuses any other.
        let _ = fs::remove_dir(dir);
    }
    Ok(InstallReport {
        settings_changed,
        command_changed: command_ours,
    })
}

/// Compares what is installed with what [`install`] would write for
/// `solaria_exe`. Reads only.
pub fn state(target: &Target, solaria_exe: &Path) -> Result<InstallState, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let program = HookProgram::choose(exe, target.data_dir.as_deref());
    let path = target.settings_path();
    let settings = if settings::with_ours(&path, exe, &program)?.is_none() {
        Presence::Current
    } else if settings::has_ours(&path)? {
        Presence::Stale
    } else {
        Presence::Missing
    };
    Ok(InstallState {
        settings,
        command: command_at(&target.command_path()).presence(&command_file(exe))?,
    })
}
