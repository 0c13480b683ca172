//! `solaria hook <event>`.

use solaria_edge::capture::{self, payload::HookEvent};
use solaria_edge::config::Env;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook event; the payload is read from stdin.
    #[arg(value_enum)]
    event: HookEvent,
}

impl Args {
    pub fn run(self, env: &Env) {
        capture::run(self.event, env);
    }
}
