//! `solaria hook <event>` (Claude Code's hooks) and `solaria hook opencode <event>`
//! (the OpenCode plugin).

use solaria_edge::capture::{self, payload::HookEvent};
use solaria_edge::config::Env;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    /// The Claude Code hook event; the payload is read from stdin.
    #[arg(value_enum, required = true)]
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
}

impl Args {
    pub fn run(self, env: &Env) {
        match (self.agent, self.event) {
            (Some(AgentHook::Opencode { event }), _) => capture::opencode::run(&event, env),
            (None, Some(event)) => capture::run(event, env),
            // clap requires one of the two; nothing to capture otherwise.
            (None, None) => {}
        }
    }
}
