//! Wires SOLARIA into OpenCode (1.18): a plugin that forwards OpenCode's events to
//! `solaria hook opencode <event>` and injects the context, SOLARIA's MCP server in
//! `opencode.json`, and the `/memory` command. Files: `plugin.rs` (the plugin file,
//! from `solaria.js`), `command.rs` (the `/memory` command file), `config.rs` (the
//! MCP entry in `opencode.json`/`opencode.jsonc`), `crate::jsonc` (editing JSON
//! with comments in place).
//!
//! OpenCode loads every `*.js`/`*.ts` in `plugin/` or `plugins/` of its config
//! directories (`~/.config/opencode/`, honouring `XDG_CONFIG_HOME`, and
//! `<project>/.opencode/`), and every `*.md` in `command/` or `commands/` as a
//! command named after the file. The config is `opencode.json` or `opencode.jsonc`
//! (comments and trailing commas allowed) in the config directory (user scope) or
//! at the project's root (project scope).
//!
//! Everything SOLARIA adds is recognisable (a marker line in the files, the
//! `solaria mcp` command in the MCP entry), so [`install`] is idempotent and
//! [`uninstall`] removes exactly what we added. The config is edited as text: the
//! user's bytes are never re-rendered, and uninstall gives them back byte for byte.

mod command;
mod config;
mod plugin;
#[cfg(test)]
mod tests;

pub use command::{COMMAND_FILE_NAME, command_file};
pub use plugin::{PLUGIN_FILE_NAME, plugin_file};

use crate::managed::{FileState, ManagedFile, exe_str, remove, write, written_paths};
use crate::{InstallError, Presence};
use solaria_hook::program::HookProgram;
use std::fs;
use std::path::{Path, PathBuf};

/// Text that marks the plugin file as written by SOLARIA.
pub const PLUGIN_MARKER: &str = "solaria-managed: opencode plugin";
/// Text that marks the `/memory` command file as written by SOLARIA (the capture
/// recognises its expansion by it, too).
pub use solaria_hook::protocol::OPENCODE_COMMAND_MARKER as COMMAND_MARKER;

/// Where a SOLARIA install goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// `~/.config/opencode/`: every project of this user.
    User,
    /// `<project>/.opencode/` and `<project>/opencode.json`: this project only.
    Project,
}

/// The OpenCode files one install touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The config directory that receives `plugins/` and `commands/`.
    pub config_dir: PathBuf,
    /// `opencode.json` or `opencode.jsonc`, which receives the MCP entry.
    pub config_path: PathBuf,
    /// The data dir the plugin's events go to, as resolved at install time: when
    /// set and `solaria-hook` sits beside `solaria`, the plugin runs it
    /// (`solaria_hook`) so that a running daemon captures them.
    pub data_dir: Option<PathBuf>,
}

impl Target {
    /// The files of `scope`. `xdg_config_home` is `$XDG_CONFIG_HOME` when set.
    pub fn for_scope(
        scope: Scope,
        home: &Path,
        xdg_config_home: Option<&Path>,
        project_dir: &Path,
    ) -> Target {
        let (config_dir, config_base) = match scope {
            Scope::User => {
                let base = xdg_config_home
                    .filter(|p| p.is_absolute())
                    .map_or_else(|| home.join(".config"), Path::to_path_buf)
                    .join("opencode");
                (base.clone(), base)
            }
            Scope::Project => (project_dir.join(".opencode"), project_dir.to_path_buf()),
        };
        // OpenCode reads both; an existing `.jsonc` alone is the user's choice.
        let json = config_base.join("opencode.json");
        let jsonc = config_base.join("opencode.jsonc");
        let config_path = if !json.exists() && jsonc.exists() {
            jsonc
        } else {
            json
        };
        Target {
            config_dir,
            config_path,
            data_dir: None,
        }
    }

    /// The plugin file.
    pub fn plugin_path(&self) -> PathBuf {
        self.config_dir.join("plugins").join(PLUGIN_FILE_NAME)
    }

    /// The `/memory` command file.
    pub fn command_path(&self) -> PathBuf {
        self.config_dir.join("commands").join(COMMAND_FILE_NAME)
    }
}

/// The plugin file at `path`.
fn plugin(path: &Path) -> ManagedFile<'_> {
    ManagedFile {
        path,
        marker: PLUGIN_MARKER,
    }
}

/// The `/memory` command file at `path`.
fn command(path: &Path) -> ManagedFile<'_> {
    ManagedFile {
        path,
        marker: COMMAND_MARKER,
    }
}

/// What [`install`] or [`uninstall`] did, file by file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The plugin file was written or removed.
    pub plugin_changed: bool,
    /// The command file was written or removed.
    pub command_changed: bool,
    /// The config file was written or removed.
    pub config_changed: bool,
}

impl InstallReport {
    /// Whether any file changed.
    pub fn changed(&self) -> bool {
        self.plugin_changed || self.command_changed || self.config_changed
    }
}

/// Writes the plugin and the `/memory` command for `solaria_exe` (an absolute
/// path) and registers `solaria mcp` in the config, replacing earlier SOLARIA
/// versions of them. Nothing is written when all three are already current.
pub fn install(target: &Target, solaria_exe: &Path) -> Result<InstallReport, InstallError> {
    let exe = exe_str(solaria_exe)?;
    written_paths(&[
        (
            "OpenCode's configuration directory",
            Some(&target.config_dir),
        ),
        ("OpenCode's configuration file", Some(&target.config_path)),
        ("the data directory", target.data_dir.as_deref()),
    ])?;
    let plugin_path = target.plugin_path();
    let command_path = target.command_path();
    let plugin_text = plugin_file(&HookProgram::choose(exe, target.data_dir.as_deref()));
    let command_text = command_file(exe);
    let plugin_changed = plugin(&plugin_path).needs(&plugin_text)?;
    let command_changed = command(&command_path).needs(&command_text)?;
    let new_config = config::with_mcp(&target.config_path, exe)?;

    if plugin_changed {
        write(&plugin_path, plugin_text.as_bytes())?;
    }
    if command_changed {
        write(&command_path, command_text.as_bytes())?;
    }
    let config_changed = new_config.is_some();
    if let Some(text) = new_config {
        write(&target.config_path, text.as_bytes())?;
    }
    Ok(InstallReport {
        plugin_changed,
        command_changed,
        config_changed,
    })
}

/// Removes our plugin, our command and our MCP entry (whatever executable they
/// name), and the directories that this leaves empty. Everything else stays as
/// it is, byte for byte.
pub fn uninstall(target: &Target) -> Result<InstallReport, InstallError> {
    let plugin_path = target.plugin_path();
    let command_path = target.command_path();
    // Read everything before the first removal: a config we cannot parse stops
    // the uninstall with every file still in place.
    let plugin_ours = matches!(plugin(&plugin_path).state()?, FileState::Ours(_));
    let command_ours = matches!(command(&command_path).state()?, FileState::Ours(_));
    let new_config = config::without_mcp(&target.config_path)?;

    if plugin_ours {
        remove(&plugin_path)?;
    }
    if command_ours {
        remove(&command_path)?;
    }
    let config_changed = new_config.is_some();
    match new_config {
        Some(config::Edit::Write(text)) => write(&target.config_path, text.as_bytes())?,
        Some(config::Edit::Remove) => remove(&target.config_path)?,
        None => {}
    }
    for dir in [
        plugin_path.parent(),
        command_path.parent(),
        Some(target.config_dir.as_path()),
    ]
    .into_iter()
    .flatten()
    {
        // Only an empty directory goes: `remove_dir` refuses any other.
        let _ = fs::remove_dir(dir);
    }
    Ok(InstallReport {
        plugin_changed: plugin_ours,
        command_changed: command_ours,
        config_changed,
    })
}

/// Where an OpenCode install stands, part by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallState {
    /// The plugin file.
    pub plugin: Presence,
    /// The `/memory` command file.
    pub command: Presence,
    /// The MCP entry in the config.
    pub mcp: Presence,
}

/// Compares what is installed in `target` with what `install` would write for
/// `solaria_exe`. Reads only.
pub fn state(target: &Target, solaria_exe: &Path) -> Result<InstallState, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let mcp = if !config::has_our_entry(&target.config_path)? {
        Presence::Missing
    } else if config::with_mcp(&target.config_path, exe)?.is_none() {
        Presence::Current
    } else {
        Presence::Stale
    };
    Ok(InstallState {
        plugin: plugin(&target.plugin_path()).presence(&plugin_file(&HookProgram::choose(
            exe,
            target.data_dir.as_deref(),
        )))?,
        command: command(&target.command_path()).presence(&command_file(exe))?,
        mcp,
    })
}
