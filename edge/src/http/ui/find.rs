//! The search page: the CLI's `solaria search` as a form (words, meaning or both,
//! and its filters), answered with the same index, each citation a link.

use super::browse::person;
use super::login::UiSession;
use super::page::{Page, Section, esc, linked, marked, notice};
use super::{UiError, UiState};
use crate::ops::search::{self, Model, SearchFields};
use axum::Extension;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use solaria_shared::{RecordType, SearchMode, UnixMillis};
use std::fmt::Write;

/// `GET /ui/search?q=…`: the form, and the results when `q` is given.
pub(super) async fn search(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Query(fields): Query<SearchFields>,
) -> Result<Response, UiError> {
    let mut body = form(&fields);
    if fields.q.as_deref().is_some_and(|q| !q.trim().is_empty()) {
        let asked = fields.clone();
        let answer = ui
            .blocking(move |app| {
                let request = asked.request(UnixMillis::now())?;
                search::search(app, &request, Model::Kept)
            })
            .await;
        match answer {
            Ok(result) => {
                if let Some(why) = &result.fell_back {
                    body.push_str(&notice("note", why));
                }
                if let Some(note) = &result.note {
                    body.push_str(&notice("note", note));
                }
                let _ = write!(
                    body,
                    "<section aria-labelledby=\"results\"><h2 id=\"results\">Results</h2>\
                     <pre class=\"text\">{}</pre></section>",
                    marked(&linked(&result.text(person())))
                );
            }
            Err(e) if e.status.is_client_error() => body.push_str(&notice("error", &e.message)),
            Err(e) => return Err(e),
        }
    }
    let frame = ui.frame(&session).await;
    Ok(Page {
        title: "Search",
        section: Section::Search,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

/// The search form, filled with what was asked.
fn form(f: &SearchFields) -> String {
    let value = |v: &Option<String>| esc(v.as_deref().unwrap_or_default());
    let option = |value: &str, label: &str, chosen: &Option<String>| {
        let selected = if chosen.as_deref().unwrap_or_default() == value {
            " selected"
        } else {
            ""
        };
        format!(
            "<option value=\"{}\"{selected}>{}</option>",
            esc(value),
            esc(label)
        )
    };
    let mut modes = option("", "as configured", &f.mode);
    for mode in [
        SearchMode::Lexical,
        SearchMode::Semantic,
        SearchMode::Hybrid,
    ] {
        let name = mode.to_string();
        modes.push_str(&option(&name, &name, &f.mode));
    }
    let mut types = option("", "any", &f.record_type);
    for t in RecordType::ALL {
        types.push_str(&option(t.as_str(), t.as_str(), &f.record_type));
    }
    format!(
        "<form class=\"search\" method=\"get\" action=\"/ui/search\" role=\"search\">\
         <p><label for=\"q\">Words or a question</label> \
         <input id=\"q\" name=\"q\" type=\"search\" value=\"{q}\" required></p>\
         <div class=\"filters\">\
         <p><label for=\"mode\">Mode</label> <select id=\"mode\" name=\"mode\">{modes}</select></p>\
         <p><label for=\"type\">Type</label> <select id=\"type\" name=\"type\">{types}</select></p>\
         <p><label for=\"project\">Project</label> <input id=\"project\" name=\"project\" value=\"{project}\"></p>\
         <p><label for=\"machine\">Machine</label> <input id=\"machine\" name=\"machine\" value=\"{machine}\"></p>\
         <p><label for=\"since\">Since</label> <input id=\"since\" name=\"since\" placeholder=\"7d, 2026-11-01\" value=\"{since}\"></p>\
         <p><label for=\"until\">Until</label> <input id=\"until\" name=\"until\" value=\"{until}\"></p>\
         <p><label for=\"limit\">At most</label> <input id=\"limit\" name=\"limit\" inputmode=\"numeric\" size=\"4\" value=\"{limit}\"></p>\
         </div><p><button type=\"submit\">Search</button></p></form>",
        q = value(&f.q),
        project = value(&f.project),
        machine = value(&f.machine),
        since = value(&f.since),
        until = value(&f.until),
        limit = value(&f.limit),
    )
}
