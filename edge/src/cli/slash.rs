//! `solaria slash ARGS…`: what the `/memory` slash command in Claude Code runs.

use solaria_edge::app::App;
use solaria_edge::install::claude_code::{SlashRequest, parse_slash_args};
use solaria_edge::ops::search::{self, Model, SearchRequest};
use solaria_edge::present::Reader;
use solaria_edge::store::search::SearchQuery;
use solaria_shared::SearchMode;
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
            SlashRequest::Status => super::stats::Args::default().run(app),
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
                // Words only: a slash command must answer at once, without a model.
                let request = SearchRequest {
                    query: SearchQuery {
                        text: q,
                        limit: 10,
                        current_project: Some(app.current_project().key),
                        ..SearchQuery::default()
                    },
                    mode: Some(SearchMode::Lexical),
                };
                let found = search::search(app, &request, Model::Kept)?;
                println!(
                    "{}",
                    found.text(Reader::Person {
                        now: UnixMillis::now()
                    })
                );
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
