//! Search on the central service: the memory of every machine of the account,
//! including what this machine has not pulled yet (`solaria search --remote`,
//! `memory_search_remote`). The central service ranks by words only.

use super::{OpError, OpResult, input};
use crate::app::App;
use crate::present::search::RemoteResult;
use crate::store::search::SearchQuery;
use crate::sync::SyncError;
use crate::sync::client::Client;

/// Runs `query` on the central service this machine is logged in to.
pub fn search(app: &App, query: &SearchQuery) -> OpResult<RemoteResult> {
    let creds = app
        .credentials()?
        .ok_or(OpError::NotLoggedIn(SyncError::NotLoggedIn))?;
    if query.text.trim().is_empty() {
        return Err(OpError::BadInput(
            "the query is empty: give a few keywords".into(),
        ));
    }
    let limit = input::bounded(
        "limit",
        Some(query.limit),
        super::search::DEFAULT_LIMIT,
        1..=super::search::MAX_LIMIT,
    )?;
    let failed = |e: SyncError| OpError::remote("search", &creds.server, e);
    let client =
        Client::new(&creds.server, creds.ca_cert.as_deref()).map_err(|e| failed(e.into()))?;
    let jwt = client.token(&creds).map_err(|e| failed(e.into()))?;
    let mut params: Vec<(&str, String)> =
        vec![("q", query.text.clone()), ("limit", limit.to_string())];
    let optional = [
        ("project", query.project.clone()),
        ("machine", query.machine.clone()),
        ("from", query.since.map(|t| t.0.to_string())),
        ("to", query.until.map(|t| t.0.to_string())),
        ("type", query.record_type.map(|t| t.as_str().to_string())),
        ("current_project", query.current_project.clone()),
    ];
    params.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
    let answer = client.search(&jwt, &params).map_err(|e| failed(e.into()))?;
    Ok(RemoteResult {
        server: creds.server,
        query: answer.query,
        hits: answer.hits,
    })
}
