//! `solaria context`: what SessionStart would inject for a project.

use super::App;
use crate::context;
use solaria_shared::{Project, UnixMillis};

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
            Some(p) => store
                .conn()
                .query_row(
                    "SELECT project_key, project_name FROM sessions
                     WHERE project_key = ?1 OR project_name = ?1 ORDER BY started_at DESC LIMIT 1",
                    [&p],
                    |r| {
                        Ok(Project {
                            key: r.get(0)?,
                            name: r.get(1)?,
                        })
                    },
                )
                .map_err(|_| {
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
