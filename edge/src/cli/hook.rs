//! `solaria hook <event>` (Claude Code's hooks), `solaria hook opencode <event>`
//! (the OpenCode plugin), `solaria hook codex <event>` (Codex CLI's hooks) and
//! `solaria hook gemini <event>` (Gemini CLI's).

use clap::builder::{PossibleValuesParser, TypedValueParser};
use solaria_edge::capture;
use solaria_edge::config::Env;
use solaria_hook::protocol::HookEvent;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    /// The Claude Code hook event; the payload is read from stdin.
    #[arg(required = true, value_parser = hook_event())]
    event: Option<HookEvent>,
    #[command(subcommand)]
    agent: Option<AgentHook>,
}

/// Hooks of agents other than Claude Code.
#[derive(Debug, clap::Subcommand)]
enum AgentHook {
    /// An OpenCode event forwarded by SOLARIA's OpenCode plugin, named as OpenCode
    /// names it (`session.created`, `chat.message`, `tool.execute.after`, …, or
    /// `context`); the payload is read from stdin. An event it does not handle is
    /// logged and dropped (exit 0).
    Opencode {
        /// OpenCode's event name.
        #[arg(default_value = "")]
        event: String,
    },
    /// A Codex CLI hook, by the same names as Claude Code's (`session-start`,
    /// `user-prompt-submit`, `post-tool-use`, `stop`, `session-end`); the payload is
    /// read from stdin. An event it does not handle is logged and dropped (exit 0).
    Codex {
        /// The hook event.
        #[arg(default_value = "")]
        event: String,
    },
    /// A Gemini CLI hook (`session-start`, `before-agent`, `after-tool`,
    /// `after-agent`, `session-end`); the payload is read from stdin. An event it
    /// does not handle is logged and dropped (exit 0).
    Gemini {
        /// The hook event.
        #[arg(default_value = "")]
        event: String,
    },
}

/// Claude Code's events by their `solaria hook` names (`HookEvent::arg`), which the
/// installers write and `solaria-hook` relays.
fn hook_event() -> impl TypedValueParser<Value = HookEvent> {
    PossibleValuesParser::new(HookEvent::ALL.map(HookEvent::arg)).try_map(|name| {
        HookEvent::from_arg(&name).ok_or_else(|| format!("unknown hook event {name:?}"))
    })
}

impl Args {
    pub fn run(self, env: &Env) {
        match (self.agent, self.event) {
            (Some(AgentHook::Opencode { event }), _) => capture::opencode::run(&event, env),
            (Some(AgentHook::Codex { event }), _) => capture::codex::run(&event, env),
            (Some(AgentHook::Gemini { event }), _) => capture::gemini::run(&event, env),
            (None, Some(event)) => capture::run(event, env),
            // clap requires one of the two; nothing to capture otherwise.
            (None, None) => {}
        }
    }
}
