//! `solaria recall PROMPT`: what a prompt would bring back from the memory, with
//! the scores, and what would be added to it.

use solaria_edge::app::App;
use solaria_edge::ops::recall;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The prompt, as the agent would receive it.
    #[arg(required = true, num_args = 1..)]
    prompt: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let found = recall::explain(app, &self.prompt.join(" "))?;
        super::print(self.json, &found, || found.text())
    }
}
