//! `solaria search QUERY`: a compact, ranked index of matching records.

use solaria_edge::app::App;
use solaria_edge::ops::search::{self, Model, SearchRequest};
use solaria_edge::ops::{input, remote};
use solaria_edge::present::Reader;
use solaria_edge::semantic::ModelSource;
use solaria_edge::store::search::SearchQuery;
use solaria_shared::SearchMode;
use solaria_shared::{RecordType, UnixMillis};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for; any text is a valid query.
    #[arg(required = true, num_args = 1..)]
    query: Vec<String>,
    /// Only this project: its name, key (github.com/acme/api), owner/repo, or a path inside it.
    #[arg(long, short)]
    project: Option<String>,
    /// Only this type: tool_use, prompt, note or summary.
    #[arg(long = "type", short = 't')]
    record_type: Option<RecordType>,
    /// Only records written by this machine (its name or id).
    #[arg(long)]
    machine: Option<String>,
    /// Only records since (2026-11-01, 2026-11-01T10:00, or 7d, 12h…).
    #[arg(long)]
    since: Option<String>,
    /// Only records before.
    #[arg(long)]
    until: Option<String>,
    /// Most results (at most 100).
    #[arg(long, short = 'n', default_value_t = search::DEFAULT_LIMIT)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Ask the central service (every machine of the account, the whole history)
    /// instead of this machine; by meaning, this machine embeds the query.
    #[arg(long)]
    remote: bool,
    /// lexical (words), semantic (meaning) or hybrid (both). Default: hybrid once
    /// the model is installed and vectors exist, lexical otherwise.
    #[arg(long)]
    mode: Option<SearchMode>,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let now = UnixMillis::now();
        let query = SearchQuery {
            text: self.query.join(" "),
            project: self.project,
            record_type: self.record_type,
            machine: self.machine,
            since: input::when("since", self.since, now)?,
            until: input::when("until", self.until, now)?,
            limit: self.limit,
            current_project: Some(app.current_project().key),
        };
        let reader = Reader::Person { now };
        if self.remote {
            let found = remote::search(app, &query, self.mode, ModelSource::Load)?;
            for note in &found.notes {
                eprintln!("solaria: {note}");
            }
            return super::print(self.json, &found.hits, || found.text(reader));
        }
        let request = SearchRequest {
            query,
            mode: self.mode,
        };
        let found = search::search(app, &request, Model::DaemonOrLoad)?;
        for why in [&found.fell_back, &found.note].into_iter().flatten() {
            eprintln!("solaria: {why}");
        }
        super::print(self.json, &found.hits, || found.text(reader))
    }
}
