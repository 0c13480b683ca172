//! `solaria review`: the decisions and memories whose code changed since they
//! were written or confirmed, and the new ones close in subject to a standing
//! one, each with what to run about it.

use solaria_edge::app::App;
use solaria_edge::ops::review::{ReviewScope, review};
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
        let scope = match self.project {
            Some(name) => ReviewScope::Named(name),
            None => ReviewScope::Current,
        };
        let page = review(app, &scope)?;
        super::print(self.json, &page, || {
            page.text(Reader::Person {
                now: UnixMillis::now(),
            })
        })
    }
}
