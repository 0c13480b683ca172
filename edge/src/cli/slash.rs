//! `solaria slash ARGS…`: what the `/memory` slash command in Claude Code runs.

use super::{App, search, stats};
use crate::claude_code::{SlashRequest, parse_slash_args};
use crate::store::search::SearchQuery;
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The text typed after `/memory`.
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
    args: Vec<String>,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        match parse_slash_args(&self.args) {
            SlashRequest::Status => stats::Args::default().run(app),
            SlashRequest::Sync => match app.credentials()? {
                None => {
                    println!(
                        "Sync is not configured: this machine's memory stays local. \
                         Connect it to a central service with `solaria login SERVER --token TOKEN`."
                    );
                    Ok(())
                }
                Some(_) => super::sync::Args::default().run(app),
            },
            SlashRequest::Search(q) if q.trim().is_empty() => {
                println!("Usage: /memory search <query>");
                Ok(())
            }
            SlashRequest::Search(q) => {
                let store = app.store()?;
                let query = SearchQuery {
                    text: q,
                    limit: 10,
                    current_project: Some(app.current_project().key),
                    ..SearchQuery::default()
                };
                let hits = crate::store::search::search(store.conn(), &query)?;
                if hits.is_empty() {
                    println!("No matches for {:?}.", query.text);
                }
                let now = UnixMillis::now();
                for hit in &hits {
                    println!(
                        "{}",
                        search::index_line(store.conn(), hit, store.machine_id(), now)
                    );
                }
                Ok(())
            }
            SlashRequest::Unknown(text) => {
                println!(
                    "Unknown /memory command {text:?}. Usage: /memory sync | status | search <query>"
                );
                Ok(())
            }
        }
    }
}
