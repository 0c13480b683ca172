//! `solaria install claude-code` and `solaria uninstall claude-code`.

use anyhow::Context;
use solaria_edge::claude_code::{self, Scope, Target};
use solaria_edge::config::Env;
use solaria_edge::service::{self, InstallOutcome};

/// The agents SOLARIA can be wired into.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Agent {
    ClaudeCode,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[arg(value_enum)]
    agent: Agent,
    /// `user` (~/.claude, every project) or `project` (./.claude, this project only).
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
    /// Do not register `solaria serve` (sync, retention, vectors, local API) as a
    /// systemd user service; run it yourself or not at all.
    #[arg(long)]
    no_service: bool,
}

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    #[arg(value_enum)]
    agent: Agent,
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
}

fn target(env: &Env, scope: Scope) -> anyhow::Result<Target> {
    let home = env
        .home
        .clone()
        .context("HOME is not set; cannot find ~/.claude")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(Target::for_scope(scope, &home, &cwd))
}

impl InstallArgs {
    pub fn run(self, env: &Env) -> anyhow::Result<()> {
        let Agent::ClaudeCode = self.agent;
        let exe = std::env::current_exe().context("cannot find the solaria executable's path")?;
        let target = target(env, self.scope)?;
        let target_mcp = target.mcp_path.clone();
        let report = claude_code::install(&target, &exe)?;
        if report.changed {
            println!(
                "Installed SOLARIA into Claude Code:\n  hooks:         {}\n  slash command: {} (/memory sync | status | search <query>)\n  MCP server:    {} (solaria mcp)\n\
                 Start a new Claude Code session to use it.",
                report.settings_path.display(),
                report.command_path.display(),
                target_mcp.display()
            );
        } else {
            println!(
                "SOLARIA was already installed in {} (nothing changed).",
                report.settings_path.display()
            );
        }
        if self.no_service {
            return Ok(());
        }
        if self.scope != Scope::User {
            println!(
                "Background service: not installed by a project-scope install (the daemon serves every project: `solaria install claude-code` at user scope registers it)."
            );
            return Ok(());
        }
        let service = service::install(env, &exe)?;
        let path = service.unit_path.display();
        match service.outcome {
            InstallOutcome::Running => println!(
                "Background service: {path} is enabled and running (`solaria serve`: sync, retention, vectors, local API)."
            ),
            InstallOutcome::NotStarted(why) => println!(
                "Background service: wrote {path}, but could not start it ({why}).\n  Start it with `systemctl --user enable --now solaria`, or run `solaria serve` yourself."
            ),
            InstallOutcome::UsersOwn => {
                println!("Background service: {path} is your own unit; left as it is.")
            }
        }
        Ok(())
    }
}

impl UninstallArgs {
    pub fn run(self, env: &Env) -> anyhow::Result<()> {
        let Agent::ClaudeCode = self.agent;
        let report = claude_code::uninstall(&target(env, self.scope)?)?;
        if self.scope == Scope::User
            && let Some(unit) = service::uninstall(env)?
        {
            println!(
                "Stopped the background service and removed {}.",
                unit.display()
            );
        }
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
        Ok(())
    }
}
