//! `solaria show ID…`: full records.

use solaria_edge::app::App;
use solaria_edge::ops::records;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Record ids or citations as printed ([O#…], [S#…], [D#…], [M#…], [C#sha], [I#…], [E#…]), short ids too.
    #[arg(required = true, num_args = 1..)]
    ids: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let page = records::get(app, &self.ids)?;
        super::print(self.json, &page.machines.authored(&page.records), || {
            page.text(solaria_edge::present::Reader::Person {
                now: solaria_shared::UnixMillis::now(),
            })
        })?;
        if !page.missing.is_empty() {
            anyhow::bail!(solaria_edge::ops::OpError::NotFound(page.missing));
        }
        Ok(())
    }
}
