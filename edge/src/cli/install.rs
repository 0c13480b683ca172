//! `solaria install claude-code|opencode|codex|gemini` and `solaria uninstall …` of the same.

use super::model_offer::{self, Wish};
use anyhow::Context;
use solaria_edge::config::Env;
use solaria_edge::install::claude_code::{self, Scope, Target};
use solaria_edge::install::{Presence, codex, gemini, opencode};
use solaria_edge::service::{self, InstallOutcome};
use solaria_hook::spool;
use std::path::Path;

/// The agents SOLARIA can be wired into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    ClaudeCode,
    Opencode,
    Codex,
    Gemini,
}

impl Agent {
    /// Every agent, in the order `doctor` lists them.
    pub const ALL: [Agent; 4] = [
        Agent::ClaudeCode,
        Agent::Opencode,
        Agent::Codex,
        Agent::Gemini,
    ];

    /// The name its sessions are recorded under (and `solaria install` takes).
    pub const fn id(self) -> &'static str {
        use solaria_edge::capture;
        match self {
            Agent::ClaudeCode => capture::AGENT,
            Agent::Opencode => capture::opencode::AGENT,
            Agent::Codex => capture::codex::AGENT,
            Agent::Gemini => capture::gemini::AGENT,
        }
    }

    /// How a person calls it.
    pub fn display(self) -> &'static str {
        solaria_shared::render::known_agent_name(self.id()).unwrap_or(self.id())
    }
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[arg(value_enum)]
    agent: Agent,
    /// `user` (~/.claude, ~/.config/opencode, ~/.codex or ~/.gemini: every project)
    /// or `project` (./.claude, ./.opencode and ./opencode.json, ./.codex or
    /// ./.gemini: this project only).
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
    /// Do not register `solaria serve` (sync, retention, vectors, local API) as a
    /// systemd user service; run it yourself or not at all.
    #[arg(long)]
    no_service: bool,
    /// Download the embedding model for search by meaning (about 120 MB) without
    /// asking. At a terminal, without `--model` or `--no-model`, you are asked once.
    #[arg(long, conflicts_with = "no_model")]
    model: bool,
    /// Never download the model (scripts, offline machines): search stays by words
    /// until `solaria model install`.
    #[arg(long)]
    no_model: bool,
}

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[arg(value_enum)]
    agent: Agent,
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
}

/// Claude Code's files for `scope`: under `~/.claude`, or in the current directory.
pub fn claude_target(env: &Env, scope: Scope) -> anyhow::Result<Target> {
    let home = env
        .home
        .clone()
        .context("HOME is not set; cannot find ~/.claude")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // The hooks hand their events to the daemon of this data dir (`solaria-hook`).
    let (_, paths, _) = solaria_edge::config::load_lenient(env);
    Ok(Target {
        data_dir: Some(paths.data_dir),
        ..Target::for_scope(scope, &home, &cwd)
    })
}

/// OpenCode's files for `scope`: under `$XDG_CONFIG_HOME/opencode` (or
/// `~/.config/opencode`), or in the current directory.
pub fn opencode_target(env: &Env, scope: Scope) -> anyhow::Result<opencode::Target> {
    let home = env
        .home
        .clone()
        .context("HOME is not set; cannot find ~/.config/opencode")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let scope = match scope {
        Scope::User => opencode::Scope::User,
        Scope::Project => opencode::Scope::Project,
    };
    // The plugin hands its events to the daemon of this data dir (`solaria-hook`).
    let (_, paths, _) = solaria_edge::config::load_lenient(env);
    Ok(opencode::Target {
        data_dir: Some(paths.data_dir),
        ..opencode::Target::for_scope(scope, &home, env.xdg_config_home.as_deref(), &cwd)
    })
}

/// Codex's files for `scope`: under `$CODEX_HOME` (else `~/.codex`), or the
/// current directory's `.codex/config.toml`, trusted from the user's.
pub fn codex_target(env: &Env, scope: Scope) -> anyhow::Result<codex::Target> {
    let home = env
        .home
        .clone()
        .context("HOME is not set; cannot find ~/.codex")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // The hooks hand their events to the daemon of this data dir (`solaria-hook`).
    let (_, paths, _) = solaria_edge::config::load_lenient(env);
    let target = match scope {
        Scope::User => codex::Target::for_user(&home, env.codex_home.as_deref()),
        Scope::Project => codex::Target::for_project(&home, env.codex_home.as_deref(), &cwd),
    };
    Ok(codex::Target {
        data_dir: Some(paths.data_dir),
        ..target
    })
}

fn install_codex(env: &Env, scope: Scope, exe: &Path) -> anyhow::Result<()> {
    let target = codex_target(env, scope)?;
    let report = codex::install(&target, exe)?;
    if !report.changed() {
        println!(
            "SOLARIA was already installed in Codex CLI ({}; nothing changed).",
            target.config_path.display()
        );
    } else if let Some(skill) = &target.skill_path {
        println!(
            "Installed SOLARIA into Codex CLI:\n  hooks, their trust and the MCP server: {} (one marked block at its end)\n  skill: {} ($solaria-memory status | sync | search <query>)\n\
             Start a new Codex session to use it.",
            target.config_path.display(),
            skill.display()
        );
    } else {
        println!(
            "Installed SOLARIA into Codex CLI for this project:\n  hooks and the MCP server: {} (one marked block at its end)\n  their trust: {} (a marked block of its own)",
            target.config_path.display(),
            target.trust_path.display()
        );
    }
    if report.project_trusted == Some(false) {
        println!(
            "Codex reads a project's own configuration only once you trust the project: answer its question when a session starts here, or run `codex exec --trust` once in this directory. Until then SOLARIA's hooks here do not run."
        );
    }
    Ok(())
}

fn uninstall_codex(env: &Env, scope: Scope) -> anyhow::Result<()> {
    let target = codex_target(env, scope)?;
    if codex::uninstall(&target)?.changed() {
        let also = match &target.skill_path {
            Some(_) => "its skill".to_owned(),
            None => format!("the trust of its hooks in {}", target.trust_path.display()),
        };
        println!(
            "Removed SOLARIA's block from {} and {also}; everything else was kept. \
             Your memory stays in the data dir (see `solaria stats`).",
            target.config_path.display()
        );
    } else {
        println!(
            "SOLARIA was not installed in Codex CLI ({}); nothing changed.",
            target.config_path.display()
        );
    }
    Ok(())
}

/// Gemini CLI's files for `scope`: under `~/.gemini`, or in the current directory.
pub fn gemini_target(env: &Env, scope: Scope) -> anyhow::Result<gemini::Target> {
    let home = env
        .home
        .clone()
        .context("HOME is not set; cannot find ~/.gemini")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let scope = match scope {
        Scope::User => gemini::Scope::User,
        Scope::Project => gemini::Scope::Project,
    };
    // The hooks hand their events to the daemon of this data dir (`solaria-hook`).
    let (_, paths, _) = solaria_edge::config::load_lenient(env);
    Ok(gemini::Target {
        data_dir: Some(paths.data_dir),
        ..gemini::Target::for_scope(scope, &home, &cwd)
    })
}

fn install_gemini(env: &Env, scope: Scope, exe: &Path) -> anyhow::Result<()> {
    let target = gemini_target(env, scope)?;
    if gemini::install(&target, exe)?.changed() {
        println!(
            "Installed SOLARIA into Gemini CLI:\n  hooks and MCP server: {}\n  command: {} (/solaria status | sync | search <query>)\n\
             Start a new Gemini session to use it.",
            target.settings_path().display(),
            target.command_path().display()
        );
    } else {
        println!(
            "SOLARIA was already installed in Gemini CLI ({}; nothing changed).",
            target.settings_path().display()
        );
    }
    Ok(())
}

fn uninstall_gemini(env: &Env, scope: Scope) -> anyhow::Result<()> {
    let target = gemini_target(env, scope)?;
    if gemini::uninstall(&target)?.changed() {
        println!(
            "Removed SOLARIA's hooks and MCP server from {} and the /solaria command; everything else was kept. \
             Your memory stays in the data dir (see `solaria stats`).",
            target.settings_path().display()
        );
    } else {
        println!(
            "SOLARIA was not installed in Gemini CLI ({}); nothing changed.",
            target.dir.display()
        );
    }
    Ok(())
}

fn install_opencode(env: &Env, scope: Scope, exe: &Path) -> anyhow::Result<()> {
    let target = opencode_target(env, scope)?;
    let report = opencode::install(&target, exe)?;
    if report.changed() {
        println!(
            "Installed SOLARIA into OpenCode:\n  plugin:     {}\n  command:    {} (/memory sync | status | search <query>)\n  MCP server: {} (solaria mcp)\n\
             Start a new OpenCode session to use it.",
            target.plugin_path().display(),
            target.command_path().display(),
            target.config_path.display()
        );
    } else {
        println!(
            "SOLARIA was already installed in OpenCode ({}; nothing changed).",
            target.plugin_path().display()
        );
    }
    Ok(())
}

fn uninstall_opencode(env: &Env, scope: Scope) -> anyhow::Result<()> {
    let target = opencode_target(env, scope)?;
    if opencode::uninstall(&target)?.changed() {
        println!(
            "Removed SOLARIA's OpenCode plugin {}, the /memory command and its MCP entry in {}; \
             everything else was kept. Your memory stays in the data dir (see `solaria stats`).",
            target.plugin_path().display(),
            target.config_path.display()
        );
    } else {
        println!(
            "SOLARIA was not installed in OpenCode ({}); nothing changed.",
            target.config_dir.display()
        );
    }
    Ok(())
}

impl InstallArgs {
    pub fn run(self, env: &Env) -> anyhow::Result<()> {
        let exe = std::env::current_exe().context("cannot find the solaria executable's path")?;
        // A service manager named wrong is said before anything is written.
        if !self.no_service && self.scope == Scope::User {
            service::Manager::of(env)?;
        }
        match self.agent {
            Agent::ClaudeCode => install_claude_code(env, self.scope, &exe)?,
            Agent::Opencode => install_opencode(env, self.scope, &exe)?,
            Agent::Codex => install_codex(env, self.scope, &exe)?,
            Agent::Gemini => install_gemini(env, self.scope, &exe)?,
        }
        model_offer::offer(
            env,
            match (self.model, self.no_model) {
                (true, _) => Wish::Download,
                (_, true) => Wish::Never,
                _ => Wish::Ask,
            },
        );
        if self.no_service {
            return Ok(());
        }
        if self.scope != Scope::User {
            println!(
                "Background service: not installed by a project-scope install (the daemon serves every project: a user-scope install registers it)."
            );
            return Ok(());
        }
        let service = service::install(env, &exe)?;
        let path = service.path.display();
        let by_hand = service.manager.start_by_hand();
        match service.outcome {
            InstallOutcome::Running => println!(
                "Background service: {path} is enabled and running (`solaria serve`: sync, retention, vectors, local API)."
            ),
            InstallOutcome::NotStarted(why) => println!(
                "Background service: wrote {path}, but could not start it ({why}).\n  Start it with {by_hand}."
            ),
            InstallOutcome::UsersOwn => println!(
                "Background service: {path} is your own {}; left as it is.",
                service.manager.file_word()
            ),
            InstallOutcome::NoManager => println!(
                "Background service: no service manager here (SOLARIA_SERVICE_MANAGER=none, or a system without systemd or launchd). Hooks capture without it; for sync, retention, vectors and the local API, {by_hand}."
            ),
        }
        Ok(())
    }
}

/// The SOLARIA plugin's id when Claude Code would load it for a session in the
/// current directory (`claude_code::plugin::enabled`).
pub fn claude_plugin_enabled(env: &Env) -> Option<String> {
    let home = env.home.as_deref()?;
    let cwd = std::env::current_dir().ok()?;
    claude_code::plugin::enabled(home, &cwd)
}

fn install_claude_code(env: &Env, scope: Scope, exe: &Path) -> anyhow::Result<()> {
    if let Some(plugin) = claude_plugin_enabled(env) {
        // Both would capture every event: the plugin stays, ours go.
        let target = claude_target(env, scope)?;
        let removed = claude_code::uninstall(&target)?.changed;
        let what = if removed {
            format!(
                "removed the hooks, MCP server and /memory it had written into {} and beside it",
                target.settings_path.display()
            )
        } else {
            "wrote nothing into settings.json".to_owned()
        };
        println!(
            "SOLARIA's Claude Code plugin ({plugin}) is enabled and registers the hooks, the MCP server and /memory, \
             so this install {what}: only one of the two may capture. To wire SOLARIA through settings.json instead, \
             run `claude plugin uninstall {plugin}`, then this command again."
        );
        return Ok(());
    }
    {
        let target = claude_target(env, scope)?;
        let target_mcp = target.mcp_path.clone();
        let report = claude_code::install(&target, exe)?;
        let librarian = target.librarian_path();
        if report.changed {
            println!(
                "Installed SOLARIA into Claude Code:\n  hooks:         {}\n  slash command: {} (/memory sync | status | search <query>)\n  MCP server:    {} (solaria mcp)\n  subagent:      {} (the Librarian: history questions, answered with citations)\n\
                 Start a new Claude Code session to use it.",
                report.settings_path.display(),
                report.command_path.display(),
                target_mcp.display(),
                librarian.display()
            );
        } else {
            println!(
                "SOLARIA was already installed in {} (nothing changed).",
                report.settings_path.display()
            );
        }
        if report.librarian == claude_code::Librarian::KeptYours {
            println!(
                "{} is your own file: kept as it is (SOLARIA's Librarian subagent was not installed).",
                librarian.display()
            );
        }
    }
    Ok(())
}

impl UninstallArgs {
    pub fn run(self, env: &Env) -> anyhow::Result<()> {
        match self.agent {
            Agent::ClaudeCode => uninstall_claude_code(env, self.scope)?,
            Agent::Opencode => uninstall_opencode(env, self.scope)?,
            Agent::Codex => uninstall_codex(env, self.scope)?,
            Agent::Gemini => uninstall_gemini(env, self.scope)?,
        }
        // The service serves every agent: it goes with the last user-scope install,
        // and so does the hooks' spool, which no hook writes to after that and no
        // daemon captures from. While another agent is installed its hooks spool
        // there and the daemon captures from it: removing it would drop their events.
        // SOLARIA's Claude Code plugin captures through the same daemon.
        let still_captured =
            other_agent_installed(env, self.agent) || claude_plugin_enabled(env).is_some();
        if self.scope == Scope::User && !still_captured {
            if let Some(unit) = service::uninstall(env)? {
                println!(
                    "Stopped the background service and removed {}.",
                    unit.display()
                );
            }
            remove_spool(env);
        }
        Ok(())
    }
}

/// Removes the hooks' spool of the data dir (events never captured, as the agents
/// sent them, before redaction); left to a `solaria serve` that still runs, which
/// captures and removes them. Says what became of it; a failure does not fail the
/// uninstall.
fn remove_spool(env: &Env) {
    let (_, paths, _) = solaria_edge::config::load_lenient(env);
    let runtime_dir = env.xdg_runtime_dir.as_deref();
    let Some(dir) = spool::location(&paths.data_dir, runtime_dir) else {
        return;
    };
    match spool::Spool::remove(&paths.data_dir, runtime_dir) {
        Ok(Some(0)) => {}
        Ok(Some(n)) => println!(
            "Removed the hooks' spool {}: {n} event(s) that were never captured.",
            dir.display()
        ),
        Ok(None) => println!(
            "The hooks' spool {} is left to the `solaria serve` still running, which captures what waits there; stop it and run this again to remove it.",
            dir.display()
        ),
        Err(e) => eprintln!(
            "Could not remove the hooks' spool {}: {e}. It is in memory and goes at the next reboot, or remove it yourself.",
            dir.display()
        ),
    }
}

/// Whether an agent other than `agent` still has a user-scope install (any part
/// of it, for any solaria); when that cannot be told, it is assumed so.
fn other_agent_installed(env: &Env, agent: Agent) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return true;
    };
    Agent::ALL
        .into_iter()
        .filter(|other| *other != agent)
        .any(|other| {
            user_install_parts(env, other, &exe)
                .map_or(true, |parts| parts.iter().any(|p| *p != Presence::Missing))
        })
}

/// How each part of `agent`'s user-scope install stands, for `exe`.
pub fn user_install_parts(env: &Env, agent: Agent, exe: &Path) -> anyhow::Result<Vec<Presence>> {
    Ok(match agent {
        Agent::ClaudeCode => {
            let s = claude_code::state(&claude_target(env, Scope::User)?, exe)?;
            vec![s.hooks, s.command, s.mcp]
        }
        Agent::Opencode => {
            let s = opencode::state(&opencode_target(env, Scope::User)?, exe)?;
            vec![s.plugin, s.command, s.mcp]
        }
        Agent::Codex => {
            let s = codex::state(&codex_target(env, Scope::User)?, exe)?;
            vec![s.config, s.skill]
        }
        Agent::Gemini => {
            let s = gemini::state(&gemini_target(env, Scope::User)?, exe)?;
            vec![s.settings, s.command]
        }
    })
}

fn uninstall_claude_code(env: &Env, scope: Scope) -> anyhow::Result<()> {
    let report = claude_code::uninstall(&claude_target(env, scope)?)?;
    if report.changed {
        println!(
            "Removed SOLARIA's hooks from {} and the /memory command {}; everything else was kept. \
             Your memory stays in the data dir (see `solaria stats`).",
            report.settings_path.display(),
            report.command_path.display()
        );
    } else {
        println!(
            "SOLARIA was not installed in {}; nothing changed.",
            report.settings_path.display()
        );
    }
    if let Some(plugin) = claude_plugin_enabled(env) {
        println!(
            "SOLARIA's Claude Code plugin ({plugin}) is still enabled and captures; `claude plugin uninstall {plugin}` removes it."
        );
    }
    Ok(())
}
