//! `solaria context`: what SessionStart would inject for a project.

use super::App;
use crate::context;
use crate::store::records;
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project (key or name); defaults to the current directory's.
    #[arg(long, short)]
    project: Option<String>,
    /// Print the hook's JSON output instead of the text.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let store = app.store()?;
        let project = match self.project {
            None => app.current_project(),
            Some(p) => records::resolve_project(store.conn(), &p)?.ok_or_else(|| {
                anyhow::anyhow!("no project named {p:?} in the memory (see `solaria stats`)")
            })?,
        };
        match context::build(&store, &project, &app.config.context, UnixMillis::now())? {
            Some(text) if self.json => print!("{}", context::hook_output(&text)),
            Some(text) => print!("{text}"),
            None => println!(
                "No memory yet for project {} ({}).",
                project.name, project.key
            ),
        }
        Ok(())
    }
}
