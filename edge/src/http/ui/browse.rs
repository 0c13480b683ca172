//! Browsing pages: the projects (and what is captured while the page is open), a
//! project's sessions, a whole session's timeline, and a record in full with what a
//! person can do to it.

use super::login::UiSession;
use super::page::{self, Page, Section, esc, line_item, linked, url_part};
use super::{UiError, UiState};
use crate::ops::{self, OpError};
use crate::present::Reader;
use crate::present::browse::{HandedPage, SUMMARY_CHARS, handed_line, injection_heading};
use crate::store::browse::FeedPosition;
use crate::store::injected::Injection;
use crate::store::views::AnyRecord;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use solaria_shared::knowledge::{Band, KnowledgeBody};
use solaria_shared::render::{knowledge as rk, timeline as rt};
use solaria_shared::{Knowledge, UnixMillis};
use std::fmt::Write;

pub(super) fn person() -> Reader {
    Reader::Person {
        now: UnixMillis::now(),
    }
}

/// The list an open page adds captured events to (`assets/viewer.js`): after
/// feed position `after`, only `session`'s or `project`'s when given, newest first
/// or last.
pub(super) fn live_list(
    after: FeedPosition,
    session: Option<&str>,
    project: Option<&str>,
    newest_first: bool,
    items: &str,
) -> String {
    let mut attrs = format!(" data-live data-after=\"{after}\"");
    if let Some(s) = session {
        let _ = write!(attrs, " data-session=\"{}\"", esc(s));
    }
    if let Some(p) = project {
        let _ = write!(attrs, " data-project=\"{}\"", esc(p));
    }
    if newest_first {
        attrs.push_str(" data-order=\"newest-first\"");
    }
    format!(
        "<p class=\"live-status\" data-live-status aria-live=\"polite\">Reload the page to see \
         events captured since it opened.</p><ol class=\"lines\"{attrs}>{items}</ol>"
    )
}

/// `GET /ui/`: every project, and the events captured while the page is open.
pub(super) async fn home(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
) -> Result<Response, UiError> {
    let (position, projects) = ui
        .blocking(|app| {
            Ok((
                ops::browse::feed_position(app)?,
                ops::browse::projects(app)?,
            ))
        })
        .await?;
    let reader = person();
    let mut body = String::from("<section>");
    if projects.projects.is_empty() {
        body.push_str(
            "<p>The memory is empty. Install SOLARIA into your agent (<code>solaria install \
             claude-code</code>, <code>opencode</code>, <code>codex</code> or <code>gemini</code>) \
             and work: each session appears here.</p>",
        );
    } else {
        body.push_str("<ul class=\"lines\">");
        for p in &projects.projects {
            let _ = write!(
                body,
                "<li><a href=\"/ui/project?key={}\">{}</a></li>",
                esc(&url_part(&p.counts.project.key)),
                esc(&p.line(reader))
            );
        }
        body.push_str("</ul>");
    }
    body.push_str(
        "</section><section aria-labelledby=\"live\"><h2 id=\"live\">Captured while this page \
         is open</h2>",
    );
    body.push_str(&live_list(position, None, None, true, ""));
    body.push_str("</section>");
    let frame = ui.frame(&session).await;
    Ok(Page {
        title: "Projects",
        section: Section::Projects,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

#[derive(Debug, Deserialize)]
pub(super) struct ProjectParams {
    key: Option<String>,
}

/// `GET /ui/project?key=…`: a project's sessions, newest first, and its events as
/// they are captured.
pub(super) async fn project(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Query(params): Query<ProjectParams>,
) -> Result<Response, UiError> {
    let key = params.key.unwrap_or_default();
    let (position, sessions) = ui
        .blocking(move |app| {
            Ok((
                ops::browse::feed_position(app)?,
                ops::browse::sessions(app, &key)?,
            ))
        })
        .await?;
    let reader = person();
    let key = &sessions.project.key;
    let q = url_part(key);
    let mut body = format!(
        "<p class=\"meta\">{}</p><p class=\"actions\"><a href=\"/ui/knowledge?what=decisions&amp;project={q}\">Its decisions</a> \
         · <a href=\"/ui/knowledge?what=memories&amp;project={q}\">Its memories</a> \
         · <a href=\"/ui/knowledge?what=proposals&amp;project={q}\">To confirm</a></p>\
         <form class=\"search\" method=\"get\" action=\"/ui/search\" role=\"search\">\
         <input type=\"hidden\" name=\"project\" value=\"{}\">\
         <label for=\"q\">Search this project</label> <input id=\"q\" name=\"q\" type=\"search\" required> \
         <button type=\"submit\">Search</button></form>",
        esc(key),
        esc(key),
    );
    body.push_str("<section aria-labelledby=\"sessions\"><h2 id=\"sessions\">Sessions</h2>");
    let lines = sessions.lines(reader);
    if lines.is_empty() {
        body.push_str("<p>No session of this project captured anything yet.</p>");
    } else {
        body.push_str("<ul class=\"lines\">");
        for (id, line) in lines {
            let _ = write!(
                body,
                "<li><a href=\"/ui/session/{}\">{}</a></li>",
                esc(&url_part(&id.to_string())),
                esc(&line)
            );
        }
        body.push_str("</ul>");
    }
    body.push_str(
        "</section><section aria-labelledby=\"live\"><h2 id=\"live\">Captured while this page \
         is open</h2>",
    );
    body.push_str(&live_list(position, None, Some(key), true, ""));
    body.push_str("</section>");
    let title = sessions.project.name.clone();
    let frame = ui.frame(&session).await;
    Ok(Page {
        title: &title,
        section: Section::Projects,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

/// `GET /ui/session/{id}`: a whole session: its summary, every event (failures
/// marked), what was recorded in it, and its new events as they are captured.
#[derive(Debug, Deserialize)]
pub(super) struct SessionParams {
    /// The first event shown (paging a long session).
    from: Option<usize>,
}

pub(super) async fn session(
    State(ui): State<UiState>,
    Extension(login): Extension<UiSession>,
    Path(id): Path<String>,
    Query(params): Query<SessionParams>,
) -> Result<Response, UiError> {
    let from = params.from.unwrap_or(0);
    // The feed's position first: an event stored meanwhile is then both on the
    // page and in the feed (the script skips it), never in neither.
    let (position, page, handed) = ui
        .blocking(move |app| {
            let position = ops::browse::feed_position(app)?;
            let page = ops::browse::session(app, &id, from)?;
            let handed = ops::browse::handed_to(app, page.timeline.session.id, person())?;
            Ok((position, page, handed))
        })
        .await?;
    let reader = person();
    let r = reader.render(&page.machines);
    let t = &page.timeline;
    let s = &t.session;
    let mut body = format!(
        "<p class=\"meta\">{}</p><p class=\"actions\"><a href=\"/ui/project?key={}\">{}</a></p>",
        linked(&rt::session_heading(s, r, &page.machines)),
        esc(&url_part(&s.project.key)),
        esc(&format!("All sessions of {}", s.project.name)),
    );
    // The summary, or its place for when the session ends (the script fills it).
    let _ = write!(
        body,
        "<section aria-labelledby=\"summary\" data-summary{}><h2 id=\"summary\">Summary</h2>\
         <p>{}</p></section>",
        if t.summary.is_none() { " hidden" } else { "" },
        t.summary
            .as_ref()
            .map(|summary| linked(&solaria_shared::render::field(&summary.text, SUMMARY_CHARS)))
            .unwrap_or_default()
    );
    body.push_str("<section aria-labelledby=\"events\"><h2 id=\"events\">Events</h2>");
    let items: String = t
        .entries
        .iter()
        .map(|o| {
            line_item(
                &o.id.to_string(),
                &rt::event_line(o, r, &page.machines),
                o.failed(),
            )
        })
        .collect();
    let session_id = s.id.to_string();
    let page_of = |first: usize| format!("/ui/session/{}?from={first}", url_part(&session_id));
    if t.hidden_before > 0 {
        let _ = write!(
            body,
            "<p class=\"actions\"><a href=\"{}\">{} earlier event(s)</a></p>",
            esc(&page_of(
                t.hidden_before
                    .saturating_sub(ops::browse::MAX_SESSION_EVENTS)
            )),
            t.hidden_before
        );
    }
    if t.hidden_after > 0 {
        // Not the last page: new events belong after the ones not shown.
        let _ = write!(body, "<ol class=\"lines\">{items}</ol>");
        let _ = write!(
            body,
            "<p class=\"actions\"><a href=\"{}\">{} later event(s)</a></p>",
            esc(&page_of(t.hidden_before + t.entries.len())),
            t.hidden_after
        );
    } else {
        body.push_str(&live_list(position, Some(&session_id), None, false, &items));
    }
    body.push_str("</section>");
    if !t.knowledge.is_empty() {
        body.push_str(
            "<section aria-labelledby=\"recorded\"><h2 id=\"recorded\">Recorded in this \
             session</h2><ul class=\"lines\">",
        );
        for k in &t.knowledge {
            let _ = write!(body, "<li>{}</li>", linked(&rk::line(k, r, &page.machines)));
        }
        body.push_str("</ul></section>");
    }
    body.push_str(&handed_section(&handed, reader));
    let title = format!("Session of {}", s.project.name);
    let frame = ui.frame(&login).await;
    Ok(Page {
        title: &title,
        section: Section::Projects,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

/// What the session's agent was handed: its context and each prompt's recall, with
/// the records in them as they read now.
fn handed_section(handed: &HandedPage, reader: Reader) -> String {
    let mut out = String::from(
        "<section aria-labelledby=\"handed\"><h2 id=\"handed\">What the agent was handed</h2>",
    );
    if handed.injections.is_empty() {
        out.push_str(
            "<p>SOLARIA handed this session nothing: no context at its start and no recall \
             into its prompts (or it was captured elsewhere, or before SOLARIA kept track).</p>",
        );
    } else {
        out.push_str("<ol class=\"handed\">");
        for (injection, records) in &handed.injections {
            let _ = write!(
                out,
                "<li><p>{}</p><ul class=\"lines\">",
                linked(&injection_heading(injection, reader))
            );
            for record in records {
                let _ = write!(out, "<li>{}</li>", linked(&record.text()));
            }
            out.push_str("</ul></li>");
        }
        out.push_str("</ol>");
    }
    out.push_str("</section>");
    out
}

/// Where the record was handed to agents (provenance), newest first.
fn handings_section(handings: &[Injection], reader: Reader) -> String {
    let mut out = String::from(
        "<section aria-labelledby=\"handings\"><h2 id=\"handings\">Handed to agents</h2>",
    );
    if handings.is_empty() {
        out.push_str("<p>No agent session was handed this record (in the last 90 days).</p>");
    } else {
        out.push_str("<ul class=\"lines\">");
        for i in handings {
            let _ = write!(out, "<li>{}</li>", linked(&handed_line(i, reader)));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
    out
}

#[derive(Debug, Deserialize)]
pub(super) struct RecordParams {
    done: Option<String>,
}

/// What a person's action did, said on the record it leads to.
fn done_notice(done: &str) -> Option<&'static str> {
    Some(match done {
        "confirmed" => {
            "Confirmed: this version stands at full confidence, and the proposal it replaces \
             is kept as superseded."
        }
        "superseded" => "Superseded: this new version stands; the old one stays readable.",
        _ => return None,
    })
}

/// `GET /ui/record/{id}`: one record in full, with its session and, for a
/// decision or memory that stands, what a person can do with it.
pub(super) async fn record(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Path(id): Path<String>,
    Query(params): Query<RecordParams>,
) -> Result<Response, UiError> {
    let (page, handings) = ui
        .blocking(move |app| {
            let page = ops::records::get(app, std::slice::from_ref(&id))?;
            let handings = match page.records.first() {
                Some(record) => ops::browse::handings(app, &record.citation())?,
                None => Vec::new(),
            };
            Ok((page, handings))
        })
        .await?;
    let frame = ui.frame(&session).await;
    let form_token = &frame.form_token;
    let mut body = params
        .done
        .as_deref()
        .and_then(done_notice)
        .map(|text| page::notice("done", text))
        .unwrap_or_default();
    let _ = write!(
        body,
        "<pre class=\"text\">{}</pre>",
        linked(&page.text(person()))
    );
    let Some(record) = page.records.first() else {
        return Err(UiError::from(OpError::NotFound(page.missing.clone())));
    };
    let (link, title) = match record {
        AnyRecord::Observation(_) => ("Its session's timeline", "Event"),
        AnyRecord::Session(_) => ("The whole session", "Session"),
        AnyRecord::Summary(_) => ("The whole session", "Summary"),
        AnyRecord::Knowledge(k) => {
            body.push_str(&actions(k, form_token));
            let title = match k.kind() {
                solaria_shared::KnowledgeKind::Decision => "Decision",
                solaria_shared::KnowledgeKind::Memory => "Memory",
                solaria_shared::KnowledgeKind::Commit => "Commit",
                solaria_shared::KnowledgeKind::Iteration => "Iteration",
                _ => "Record",
            };
            ("The session it was recorded in", title)
        }
    };
    if let Some(session) = record.session_id() {
        let _ = write!(
            body,
            "<p class=\"actions\"><a href=\"/ui/session/{}\">{link}</a></p>",
            esc(&url_part(&session.to_string()))
        );
    }
    body.push_str(&handings_section(&handings, person()));
    Ok(Page {
        title,
        section: Section::None,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

/// Whether a memory is a proposal waiting for a person: inferred, or written by
/// an agent or the summarizer and not yet confirmed.
pub(super) fn awaits_confirmation(k: &Knowledge) -> bool {
    matches!(&k.body, KnowledgeBody::Memory(m) if m.confidence.band() == Band::Inferred)
}

/// The buttons for a decision or memory that stands: confirm (a proposal),
/// supersede, forget — the CLI's `confirm`, `supersede` and `forget`.
pub(super) fn actions(k: &Knowledge, form_token: &str) -> String {
    if !k.stands(UnixMillis::now()) {
        return String::new();
    }
    let id = k.id.to_string();
    let mut out = String::from("<div class=\"actions\">");
    if awaits_confirmation(k) {
        out.push_str(&page::button_form(
            &format!("/ui/confirm/{}", url_part(&id)),
            form_token,
            "Confirm",
            "",
        ));
    }
    if matches!(
        k.body,
        KnowledgeBody::Memory(_) | KnowledgeBody::Decision(_)
    ) {
        let _ = write!(
            out,
            "<a class=\"button\" href=\"/ui/supersede/{}\">Supersede</a>",
            esc(&url_part(&id))
        );
    }
    let _ = write!(
        out,
        "<a class=\"button\" href=\"/ui/forget/{}\">Forget</a></div>",
        esc(&url_part(&id))
    );
    out
}
