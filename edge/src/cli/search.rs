//! `solaria search QUERY`: a compact, ranked index of matching records.

use super::App;
use crate::present::{self, MachineNames, Reader};
use crate::store::hybrid::SearchMode;
use crate::store::search::{Hit, RecordType, SearchQuery};
use crate::timefmt;
use solaria_shared::{MachineId, UnixMillis};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for; any text is a valid query.
    #[arg(required = true, num_args = 1..)]
    query: Vec<String>,
    /// Only this project (key or name).
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
    /// Most results.
    #[arg(long, short = 'n', default_value_t = 20)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Ask the central service (every machine of the account) instead of this machine.
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
        let when = |t: &Option<String>| -> anyhow::Result<Option<UnixMillis>> {
            t.as_deref()
                .map(|t| timefmt::parse_when(t, now).map_err(anyhow::Error::msg))
                .transpose()
        };
        if self.remote {
            if self.mode.is_some_and(|m| m != SearchMode::Lexical) {
                anyhow::bail!(
                    "the central service searches by words only: drop --mode, or search this machine (which holds every machine's records after a sync)"
                );
            }
            return self.run_remote(app, now);
        }
        let store = app.store()?;
        let query = SearchQuery {
            text: self.query.join(" "),
            project: self.project.clone(),
            record_type: self.record_type,
            machine: self.machine.clone(),
            since: when(&self.since)?,
            until: when(&self.until)?,
            limit: self.limit,
            current_project: Some(app.current_project().key),
        };
        let searched = match self.ask_daemon(app, &store, &query)? {
            Some(answer) => crate::semantic::Searched {
                hits: answer.hits,
                mode: answer.mode,
                fell_back: answer.fell_back,
            },
            None => crate::semantic::search(
                &app.config,
                &app.paths,
                &store,
                &query,
                self.mode,
                crate::semantic::ModelSource::Load,
            )?,
        };
        if let Some(why) = &searched.fell_back {
            eprintln!("solaria: {why}");
        }
        let (hits, mode) = (searched.hits, searched.mode);
        if self.json {
            println!("{}", serde_json::to_string_pretty(&hits)?);
            return Ok(());
        }
        if hits.is_empty() {
            println!("No matches for {:?}.", query.text);
            return Ok(());
        }
        let mut machines = MachineNames::new(store.conn(), store.machine_id());
        for hit in &hits {
            let line = present::index_line(hit, Reader::Person { now }, &mut machines);
            println!("{line}");
        }
        let footer = present::results_footer(
            hits.len(),
            mode,
            "`solaria timeline ID`",
            "`solaria show ID…`",
        );
        println!("\n{footer}");
        Ok(())
    }
}

impl Args {
    /// When the search needs the embedding model and `solaria serve` runs, its
    /// answer: the daemon keeps the model loaded, this process would load it for
    /// one query. `None`: search in process.
    fn ask_daemon(
        &self,
        app: &App,
        store: &crate::store::Store,
        query: &SearchQuery,
    ) -> anyhow::Result<Option<crate::http::client::DaemonSearch>> {
        let mode = match self.mode {
            Some(m) => m,
            None => crate::semantic::live_mode(&app.config, &app.paths, store)?,
        };
        if mode == SearchMode::Lexical || self.limit > 100 {
            return Ok(None);
        }
        let mut params: Vec<(&str, String)> =
            vec![("q", query.text.clone()), ("limit", self.limit.to_string())];
        let optional = [
            ("mode", self.mode.map(|m| m.to_string())),
            ("project", query.project.clone()),
            ("type", self.record_type.map(|t| t.as_str().to_string())),
            ("machine", query.machine.clone()),
            ("since", self.since.clone()),
            ("until", self.until.clone()),
            ("current_project", query.current_project.clone()),
        ];
        params.extend(
            optional
                .into_iter()
                .filter_map(|(name, value)| value.map(|v| (name, v))),
        );
        Ok(crate::http::client::search(&app.paths.data_dir, &params))
    }

    fn run_remote(self, app: &App, now: UnixMillis) -> anyhow::Result<()> {
        let creds = app
            .credentials()?
            .ok_or(crate::sync::SyncError::NotLoggedIn)?;
        let client = crate::sync::client::Client::new(&creds.server, creds.ca_cert.as_deref())?;
        let jwt = client.token(&creds)?;
        let mut params: Vec<(&str, String)> = vec![
            ("q", self.query.join(" ")),
            ("limit", self.limit.min(100).to_string()),
            ("current_project", app.current_project().key),
        ];
        let when = |t: &Option<String>| -> anyhow::Result<Option<String>> {
            t.as_deref()
                .map(|t| timefmt::parse_when(t, now).map(|ms| ms.0.to_string()))
                .transpose()
                .map_err(anyhow::Error::msg)
        };
        let optional = [
            ("project", self.project),
            ("machine", self.machine),
            ("from", when(&self.since)?),
            ("to", when(&self.until)?),
            ("type", self.record_type.map(|t| t.as_str().to_string())),
        ];
        for (key, value) in optional {
            if let Some(v) = value {
                params.push((key, v));
            }
        }
        let answer = client.search(&jwt, &params)?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&answer.hits)?);
            return Ok(());
        }
        if answer.hits.is_empty() {
            println!(
                "{}",
                present::no_remote_matches(&creds.server, &answer.query)
            );
        }
        for h in &answer.hits {
            println!("{}", present::remote_line(h, Reader::Person { now }));
        }
        Ok(())
    }
}

/// One line of the compact index as a person reads it, for callers that print
/// hits one by one (`solaria slash`).
pub fn index_line(
    conn: &rusqlite::Connection,
    hit: &Hit,
    me: MachineId,
    now: UnixMillis,
) -> String {
    present::index_line(
        hit,
        Reader::Person { now },
        &mut MachineNames::new(conn, me),
    )
}
