//! `solaria timeline ID`: the events of a record's session around it.

use solaria_edge::app::App;
use solaria_edge::ops::records::{self, DEFAULT_WINDOW, TimelineRequest};
use solaria_edge::present::Reader;
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An observation, session or summary id, or a citation (as printed by search).
    id: String,
    /// Events shown before the anchor.
    #[arg(long, short, default_value_t = DEFAULT_WINDOW)]
    before: usize,
    /// Events shown after the anchor.
    #[arg(long, short, default_value_t = DEFAULT_WINDOW)]
    after: usize,
    /// Only records of this type: tool_use, prompt, note, decision, memory, commit, iteration, event.
    #[arg(long = "type", short = 't')]
    record_type: Option<solaria_shared::RecordType>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let request = TimelineRequest {
            id: self.id,
            before: self.before,
            after: self.after,
            kind: self.record_type,
        };
        let page = records::timeline(app, &request)?;
        let reader = Reader::Person {
            now: UnixMillis::now(),
        };
        super::print(self.json, &page, || page.text(reader))
    }
}
