//! Wires SOLARIA into Codex CLI (0.169): its hooks, the trust Codex asks of them,
//! the MCP server, and a `solaria-memory` skill (Codex's way to a `/memory`).
//! Files: `block.rs` (the one marked block SOLARIA keeps in `config.toml`),
//! `trust.rs` (the hash by which Codex trusts a hook), `skill.rs` (the skill file).
//!
//! Codex reads hooks from `hooks.json` and, inline, from `config.toml`
//! (`[[hooks.<Event>]]` groups of `[[hooks.<Event>.hooks]]` commands), and runs
//! only the hooks the user trusted, silently skipping the rest. A trusted hook is
//! one whose `[hooks.state."<file>:<event>:<group>:<handler>"]` table in the
//! user's `config.toml` holds the hash of its definition. Running `solaria install
//! codex` is the user's consent: everything SOLARIA adds (the hooks, their trust,
//! `[mcp_servers.solaria]`) goes into one block at the end of the user's
//! `config.toml` between two marker lines, so capture works from the first session
//! and uninstall takes the block out, giving the user's bytes back.
//!
//! Codex starts MCP servers with a short allow-list of environment variables:
//! the entry forwards the ones `solaria mcp` reads (`env_vars`).

mod block;
mod skill;
#[cfg(test)]
mod tests;
mod trust;

pub use block::{BLOCK_END, BLOCK_START, HOOKS};
pub use skill::{SKILL_MARKER, skill_file};

use crate::install::managed::{FileState, ManagedFile, exe_str, read_text, remove, write};
use crate::install::{InstallError, Presence};
use solaria_hook::program::HookProgram;
use std::fs;
use std::path::{Path, PathBuf};

/// The Codex files one install touches (the user's: Codex keeps hook trust in the
/// user's configuration only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `config.toml`, which receives the block.
    pub config_path: PathBuf,
    /// The skill's `SKILL.md`.
    pub skill_path: PathBuf,
    /// The data dir the hooks write to, as resolved at install time (see
    /// `HookProgram::choose`).
    pub data_dir: Option<PathBuf>,
}

impl Target {
    /// The files under `codex_home` (`$CODEX_HOME`), else under `home/.codex`.
    pub fn for_user(home: &Path, codex_home: Option<&Path>) -> Target {
        let base = codex_home
            .filter(|p| p.is_absolute())
            .map_or_else(|| home.join(".codex"), Path::to_path_buf);
        Target {
            config_path: base.join("config.toml"),
            skill_path: base.join("skills").join(skill::SKILL_DIR).join("SKILL.md"),
            data_dir: None,
        }
    }
}

/// What [`install`] or [`uninstall`] did, file by file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The block in `config.toml` was written or removed.
    pub config_changed: bool,
    /// The skill file was written or removed.
    pub skill_changed: bool,
}

impl InstallReport {
    /// Whether any file changed.
    pub fn changed(&self) -> bool {
        self.config_changed || self.skill_changed
    }
}

/// Where a Codex install stands, part by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallState {
    /// The block (hooks, their trust, the MCP server) in `config.toml`.
    pub config: Presence,
    /// The skill file.
    pub skill: Presence,
}

/// The skill file at `path`.
fn skill_at(path: &Path) -> ManagedFile<'_> {
    ManagedFile {
        path,
        marker: SKILL_MARKER,
    }
}

/// The text of `config.toml` (empty when there is none), and whether it exists.
fn read_config(path: &Path) -> Result<(String, bool), InstallError> {
    Ok(read_text(path, "TOML")?.map_or((String::new(), false), |text| (text, true)))
}

/// The config with our block for `exe`, or `None` when it already holds it.
fn desired_config(target: &Target, exe: &str) -> Result<(String, Option<String>), InstallError> {
    let (text, _) = read_config(&target.config_path)?;
    let program = HookProgram::choose(exe, target.data_dir.as_deref());
    let with_ours = block::with_block(&text, &target.config_path, exe, &program)?;
    let changed = (with_ours != text).then_some(with_ours);
    Ok((text, changed))
}

/// Adds SOLARIA's block to Codex's `config.toml` (replacing an earlier one) and
/// writes the skill, for `solaria_exe` (an absolute path). Everything is read and
/// checked before the first write; nothing is written when all is current.
pub fn install(target: &Target, solaria_exe: &Path) -> Result<InstallReport, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let (_, new_config) = desired_config(target, exe)?;
    let skill_text = skill_file(exe);
    let skill_changed = skill_at(&target.skill_path).needs(&skill_text)?;
    let config_changed = new_config.is_some();
    if let Some(text) = new_config {
        write(&target.config_path, text.as_bytes())?;
    }
    if skill_changed {
        write(&target.skill_path, skill_text.as_bytes())?;
    }
    Ok(InstallReport {
        config_changed,
        skill_changed,
    })
}

/// Takes SOLARIA's block out of `config.toml` (the file goes when nothing else
/// was in it) and removes our skill, leaving every other byte as it was.
pub fn uninstall(target: &Target) -> Result<InstallReport, InstallError> {
    let (text, existed) = read_config(&target.config_path)?;
    let without = block::without_block(&text);
    let skill_ours = matches!(skill_at(&target.skill_path).state()?, FileState::Ours(_));
    let config_changed = existed && without != text;
    if config_changed {
        if without.is_empty() {
            remove(&target.config_path)?;
        } else {
            write(&target.config_path, without.as_bytes())?;
        }
    }
    if skill_ours {
        remove(&target.skill_path)?;
    }
    // The directories the install made, when that leaves them empty (`remove_dir`
    // refuses any other): the skill's, `skills/`, Codex's own.
    let skill_dir = target.skill_path.parent();
    for dir in [
        skill_dir,
        skill_dir.and_then(Path::parent),
        target.config_path.parent(),
    ]
    .into_iter()
    .flatten()
    {
        let _ = fs::remove_dir(dir);
    }
    Ok(InstallReport {
        config_changed,
        skill_changed: skill_ours,
    })
}

/// Compares what is installed with what [`install`] would write for
/// `solaria_exe`. Reads only.
pub fn state(target: &Target, solaria_exe: &Path) -> Result<InstallState, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let (text, changed) = desired_config(target, exe)?;
    let config = if changed.is_none() {
        Presence::Current
    } else if block::without_block(&text) != text {
        Presence::Stale
    } else {
        Presence::Missing
    };
    Ok(InstallState {
        config,
        skill: skill_at(&target.skill_path).presence(&skill_file(exe))?,
    })
}
