//! `solaria context`: what SessionStart would inject for a project.

use solaria_edge::app::App;
use solaria_edge::context;
use solaria_edge::ops::context::context_of;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project (name, key, owner/repo, or a path inside it); defaults to the current directory's.
    #[arg(long, short)]
    project: Option<String>,
    /// Print the hook's JSON output instead of the text.
    #[arg(long)]
    json: bool,
    /// After the context, say what was chosen and why the rest was left out.
    #[arg(long)]
    explain: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let found = context_of(app, self.project.as_deref())?;
        match &found.context {
            Some(text) if self.json => print!("{}", context::hook_output("SessionStart", text)),
            _ => print!("{}", found.text()),
        }
        if self.explain {
            println!("\n---\nWhy this context:");
            for line in &found.explanation {
                println!("- {line}");
            }
        }
        Ok(())
    }
}
