//! Wires SOLARIA into Codex CLI (0.169): its hooks, the trust Codex asks of them,
//! the MCP server, and a `solaria-memory` skill (Codex's way to a `/memory`).
//! Files: `block.rs` (the marked blocks SOLARIA keeps in `config.toml` files),
//! `trust.rs` (the hash by which Codex trusts a hook), `skill.rs` (the skill file).
//!
//! Codex reads hooks from `hooks.json` and, inline, from `config.toml`
//! (`[[hooks.<Event>]]` groups of `[[hooks.<Event>.hooks]]` commands), the user's
//! (`~/.codex`) and a trusted project's (`<project>/.codex`), and runs only the hooks
//! the user trusted, silently skipping the rest. A trusted hook is one whose
//! `[hooks.state."<file>:<event>:<group>:<handler>"]` table in the user's
//! `config.toml` holds the hash of its definition. Running `solaria install codex`
//! is the user's consent: SOLARIA's hooks and `[mcp_servers.solaria]` go into one
//! block at the end of the target `config.toml` between two marker lines, and their
//! trust beside them (a user install) or in a block of its own in the user's
//! `config.toml` (a project install), so capture works from the first session and
//! uninstall takes the blocks out, giving the user's bytes back. Whether Codex
//! reads a project's configuration at all is the user's decision (trusting the
//! project), which SOLARIA never takes.
//!
//! Codex starts MCP servers with a short allow-list of environment variables:
//! the entry forwards the ones `solaria mcp` reads (`env_vars`).

mod block;
mod skill;
#[cfg(test)]
mod tests;
mod trust;

pub use block::{BLOCK_END, BLOCK_START, HOOKS};

use block::Marks;
pub use skill::{SKILL_MARKER, skill_file};

use crate::managed::{FileState, ManagedFile, exe_str, read_text, remove, write, written_paths};
use crate::{InstallError, Presence};
use solaria_hook::program::HookProgram;
use std::fs;
use std::path::{Path, PathBuf};

/// The Codex files one install touches (the user's: Codex keeps hook trust in the
/// user's configuration only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The `config.toml` that receives the hooks and the MCP server: the user's,
    /// or a project's.
    pub config_path: PathBuf,
    /// The user's `config.toml`, where Codex keeps the hooks' trust (the same file
    /// for a user install).
    pub trust_path: PathBuf,
    /// The skill's `SKILL.md` (a user install's only).
    pub skill_path: Option<PathBuf>,
    /// The project whose configuration receives the hooks (a project install).
    pub project: Option<PathBuf>,
    /// The data dir the hooks write to, as resolved at install time (see
    /// `HookProgram::choose`).
    pub data_dir: Option<PathBuf>,
}

impl Target {
    /// The user's files: under `codex_home` (`$CODEX_HOME`), else `home/.codex`.
    pub fn for_user(home: &Path, codex_home: Option<&Path>) -> Target {
        let base = user_dir(home, codex_home);
        Target {
            config_path: base.join("config.toml"),
            trust_path: base.join("config.toml"),
            skill_path: Some(base.join("skills").join(skill::SKILL_DIR).join("SKILL.md")),
            project: None,
            data_dir: None,
        }
    }

    /// A project's: its `.codex/config.toml`, trusted from the user's.
    pub fn for_project(home: &Path, codex_home: Option<&Path>, project: &Path) -> Target {
        Target {
            config_path: project.join(".codex").join("config.toml"),
            trust_path: user_dir(home, codex_home).join("config.toml"),
            skill_path: None,
            project: Some(project.to_owned()),
            data_dir: None,
        }
    }

    /// The block the trust goes in, when it is not the install's own.
    fn trust_marks(&self) -> Option<Marks> {
        self.project
            .is_some()
            .then(|| Marks::trust_of(&self.config_path))
    }
}

/// Codex's own directory: `$CODEX_HOME`, else `~/.codex`.
fn user_dir(home: &Path, codex_home: Option<&Path>) -> PathBuf {
    codex_home
        .filter(|p| p.is_absolute())
        .map_or_else(|| home.join(".codex"), Path::to_path_buf)
}

/// What [`install`] or [`uninstall`] did, file by file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The block in the target `config.toml` was written or removed.
    pub config_changed: bool,
    /// The trust block in the user's `config.toml` (a project install's) was
    /// written or removed.
    pub trust_changed: bool,
    /// The skill file was written or removed.
    pub skill_changed: bool,
    /// A project install: whether the user's configuration trusts the project,
    /// without which Codex reads none of its configuration.
    pub project_trusted: Option<bool>,
}

impl InstallReport {
    /// Whether any file changed.
    pub fn changed(&self) -> bool {
        self.config_changed || self.trust_changed || self.skill_changed
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

/// The text of a `config.toml` (empty when there is none), and whether it exists.
fn read_config(path: &Path) -> Result<(String, bool), InstallError> {
    Ok(read_text(path, "TOML")?.map_or((String::new(), false), |text| (text, true)))
}

/// One `config.toml` as it is and as an install or uninstall would leave it.
struct Edit {
    path: PathBuf,
    existed: bool,
    now: String,
    then: String,
}

impl Edit {
    fn changes(&self) -> bool {
        self.now != self.then
    }

    /// Writes what changed: a file left empty by SOLARIA's leaving goes.
    fn apply(&self) -> Result<bool, InstallError> {
        if !self.changes() {
            return Ok(false);
        }
        if self.then.is_empty() {
            if self.existed {
                remove(&self.path)?;
            }
        } else {
            write(&self.path, self.then.as_bytes())?;
        }
        Ok(true)
    }
}

/// The target's `config.toml` and, for a project install, the user's, as
/// [`install`] would leave them for `exe`. Reads only.
fn installed(target: &Target, exe: &str) -> Result<(Edit, Option<Edit>), InstallError> {
    let program = HookProgram::choose(exe, target.data_dir.as_deref());
    let install = Marks::install();
    let (text, existed) = read_config(&target.config_path)?;
    let rest = block::without(&text, &install);
    let Some(trust_marks) = target.trust_marks() else {
        let bodies = block::bodies(
            &target.config_path,
            &rest,
            &target.config_path,
            &rest,
            exe,
            &program,
        )?;
        let body = format!("{}{}", bodies.hooks, bodies.trust);
        let then = block::with(&text, &target.config_path, &install, &body)?;
        let edit = Edit {
            path: target.config_path.clone(),
            existed,
            now: text,
            then,
        };
        return Ok((edit, None));
    };
    let (user_text, user_existed) = read_config(&target.trust_path)?;
    let user_rest = block::without(&user_text, &trust_marks);
    let bodies = block::bodies(
        &target.config_path,
        &rest,
        &target.trust_path,
        &user_rest,
        exe,
        &program,
    )?;
    let then = block::with(&text, &target.config_path, &install, &bodies.hooks)?;
    let user_then = if bodies.trust.is_empty() {
        user_rest
    } else {
        block::with(&user_text, &target.trust_path, &trust_marks, &bodies.trust)?
    };
    Ok((
        Edit {
            path: target.config_path.clone(),
            existed,
            now: text,
            then,
        },
        Some(Edit {
            path: target.trust_path.clone(),
            existed: user_existed,
            now: user_text,
            then: user_then,
        }),
    ))
}

/// The target's `config.toml` and, for a project install, the user's, without
/// what SOLARIA wrote into them. Reads only.
fn uninstalled(target: &Target) -> Result<(Edit, Option<Edit>), InstallError> {
    let (text, existed) = read_config(&target.config_path)?;
    let config = Edit {
        then: block::without(&text, &Marks::install()),
        path: target.config_path.clone(),
        existed,
        now: text,
    };
    let trust = match target.trust_marks() {
        Some(marks) => {
            let (text, existed) = read_config(&target.trust_path)?;
            Some(Edit {
                then: block::without(&text, &marks),
                path: target.trust_path.clone(),
                existed,
                now: text,
            })
        }
        None => None,
    };
    Ok((config, trust))
}

/// Whether the user's configuration trusts `project` (`[projects."<dir>"]
/// trust_level = "trusted"`).
fn project_trusted(target: &Target, project: &Path) -> Result<bool, InstallError> {
    let (text, _) = read_config(&target.trust_path)?;
    let table: toml::Table = toml::from_str(&text).unwrap_or_default();
    Ok(table
        .get("projects")
        .and_then(|p| p.get(project.to_string_lossy().as_ref()))
        .and_then(|p| p.get("trust_level"))
        .and_then(toml::Value::as_str)
        == Some("trusted"))
}

/// Adds SOLARIA's hooks, their trust and its MCP server to Codex's configuration
/// (replacing an earlier install's) and, for the user, writes the skill, for
/// `solaria_exe` (an absolute path). Everything is read and checked before the
/// first write; nothing is written when all is current.
pub fn install(target: &Target, solaria_exe: &Path) -> Result<InstallReport, InstallError> {
    let exe = exe_str(solaria_exe)?;
    written_paths(&[
        ("Codex's configuration file", Some(&target.config_path)),
        ("Codex's user configuration", Some(&target.trust_path)),
        ("Codex's skill file", target.skill_path.as_deref()),
        ("the project directory", target.project.as_deref()),
        ("the data directory", target.data_dir.as_deref()),
    ])?;
    let (config, trust) = installed(target, exe)?;
    let skill = target
        .skill_path
        .as_deref()
        .map(|path| (path, skill_file(exe)));
    let skill_changed = match &skill {
        Some((path, text)) => skill_at(path).needs(text)?,
        None => false,
    };
    let config_changed = config.apply()?;
    let trust_changed = match &trust {
        Some(edit) => edit.apply()?,
        None => false,
    };
    if let (Some((path, text)), true) = (skill, skill_changed) {
        write(path, text.as_bytes())?;
    }
    let project_trusted = match &target.project {
        Some(project) => Some(project_trusted(target, project)?),
        None => None,
    };
    Ok(InstallReport {
        config_changed,
        trust_changed,
        skill_changed,
        project_trusted,
    })
}

/// Takes SOLARIA's blocks out of Codex's configuration (a file goes when nothing
/// else was in it) and removes our skill, leaving every other byte as it was.
pub fn uninstall(target: &Target) -> Result<InstallReport, InstallError> {
    let (config, trust) = uninstalled(target)?;
    let skill_ours = match &target.skill_path {
        Some(path) => matches!(skill_at(path).state()?, FileState::Ours(_)),
        None => false,
    };
    let config_changed = config.apply()?;
    let trust_changed = match &trust {
        Some(edit) => edit.apply()?,
        None => false,
    };
    if let (Some(path), true) = (&target.skill_path, skill_ours) {
        remove(path)?;
    }
    // The directories the install made, when that leaves them empty (`remove_dir`
    // refuses any other): the skill's, `skills/`, the `.codex` that held the file.
    let skill_dir = target.skill_path.as_deref().and_then(Path::parent);
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
        trust_changed,
        skill_changed: skill_ours,
        project_trusted: None,
    })
}

/// Compares what is installed with what [`install`] would write for
/// `solaria_exe`. Reads only.
pub fn state(target: &Target, solaria_exe: &Path) -> Result<InstallState, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let (config, trust) = installed(target, exe)?;
    let current = !config.changes() && trust.as_ref().is_none_or(|t| !t.changes());
    let (without, _) = uninstalled(target)?;
    let config = if current {
        Presence::Current
    } else if without.changes() {
        Presence::Stale
    } else {
        Presence::Missing
    };
    let skill = match &target.skill_path {
        Some(path) => skill_at(path).presence(&skill_file(exe))?,
        // A project install has none: nothing is missing.
        None => config,
    };
    Ok(InstallState { config, skill })
}
