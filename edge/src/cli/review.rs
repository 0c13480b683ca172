//! `solaria review`: the decisions and memories whose code changed since they
//! were written or confirmed, each with what to run to confirm, supersede or
//! forget it.

use solaria_edge::app::App;
use solaria_edge::ops::staleness::{ReviewRequest, review};
use solaria_edge::present::Reader;
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project (default: the current directory's).
    #[arg(long, short)]
    project: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let page = review(
            app,
            &ReviewRequest {
                project: self.project,
            },
        )?;
        super::print(self.json, &page, || {
            page.text(Reader::Person {
                now: UnixMillis::now(),
            })
        })
    }
}
