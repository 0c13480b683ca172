//! `solaria forget`: tombstones for a record, a session or a project.

use solaria_edge::app::App;
use solaria_edge::capture::forget_spooled;
use solaria_edge::ops::forget::forget;
use solaria_edge::store::retention::ForgetTarget;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["id", "session", "project"])))]
pub struct Args {
    /// One record id (observation, summary, or a session with all it holds).
    id: Option<String>,
    /// A session id: the session and everything in it.
    #[arg(long)]
    session: Option<String>,
    /// A project (key or name): every record of it.
    #[arg(long)]
    project: Option<String>,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let target = match (self.id, self.session, self.project) {
            (Some(id), _, _) => ForgetTarget::Record(id),
            (_, Some(s), _) => ForgetTarget::Session(s),
            (_, _, Some(p)) => ForgetTarget::Project(p),
            _ => anyhow::bail!("say what to forget: an ID, --session ID or --project NAME"),
        };
        let forgotten = forget(app, &target, |session| {
            forget_spooled(
                &app.paths,
                app.runtime_dir.as_deref(),
                &session.agent,
                &session.agent_session_id,
            )
        })?;
        print!("{}", forgotten.text());
        Ok(())
    }
}
