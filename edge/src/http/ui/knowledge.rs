//! Knowledge pages: decisions, memories, open questions and the proposals waiting
//! for a person, each in full; and what a person does with them, through the same
//! operations as the CLI: confirm (`solaria confirm`), supersede (`solaria
//! supersede`) and forget (`solaria forget`).

use super::browse::{actions, person};
use super::login::UiSession;
use super::page::{self, Page, Section, esc, hidden_token, linked, url_part};
use super::{UiError, UiState};
use crate::ops::knowledge::{
    self as ops, DecisionRequest, Expiry, ListRequest, MemoryRequest, Replacement, Scope,
};
use crate::ops::{self as all_ops, OpError};
use crate::store::retention::ForgetTarget;
use crate::store::views::AnyRecord;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use serde::Deserialize;
use solaria_shared::knowledge::{Band, KnowledgeBody, MemoryType};
use solaria_shared::{Knowledge, KnowledgeKind};
use std::fmt::Write;

/// The lists, as the CLI's commands name them.
#[derive(Debug, Clone, Copy)]
enum Listing {
    Decisions,
    Memories,
    Questions,
    Proposals,
}

impl Listing {
    fn parse(what: &str) -> Option<Listing> {
        Some(match what {
            "decisions" => Listing::Decisions,
            "memories" => Listing::Memories,
            "questions" => Listing::Questions,
            "proposals" => Listing::Proposals,
            _ => return None,
        })
    }

    /// Its title, section, the CLI command that lists the same, the kinds and band.
    fn spec(
        self,
    ) -> (
        &'static str,
        Section,
        &'static str,
        KnowledgeKind,
        Option<Band>,
    ) {
        match self {
            Listing::Decisions => (
                "Decisions",
                Section::Decisions,
                "solaria decisions",
                KnowledgeKind::Decision,
                None,
            ),
            Listing::Memories => (
                "Memories",
                Section::Memories,
                "solaria memories",
                KnowledgeKind::Memory,
                None,
            ),
            Listing::Questions => (
                "Open questions",
                Section::Questions,
                "solaria questions",
                KnowledgeKind::Memory,
                Some(Band::OpenQuestion),
            ),
            Listing::Proposals => (
                "To confirm",
                Section::Proposals,
                "solaria memories --unconfirmed",
                KnowledgeKind::Memory,
                Some(Band::Inferred),
            ),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ListParams {
    what: Option<String>,
    project: Option<String>,
    /// A memory type (memories only).
    #[serde(rename = "type")]
    memory_type: Option<String>,
    all: Option<String>,
}

/// The most records a list shows.
const LIST_LIMIT: usize = 200;

/// `GET /ui/knowledge?what=decisions|memories|questions|proposals[&project=…][&all=1]`.
pub(super) async fn list(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Query(params): Query<ListParams>,
) -> Result<Response, UiError> {
    let what = params.what.as_deref().unwrap_or("decisions");
    let listing = Listing::parse(what).ok_or_else(|| {
        UiError::from(OpError::BadInput(format!(
            "no list named {:?}: decisions, memories, questions or proposals",
            all_ops::input::clip(what)
        )))
    })?;
    let (title, section, command, kind, band) = listing.spec();
    let all = params.all.is_some_and(|a| !a.is_empty());
    let memory_type: Option<MemoryType> = match listing {
        Listing::Memories => all_ops::input::parsed("type", params.memory_type.clone())?,
        _ => None,
    };
    let request = ListRequest {
        project: all_ops::input::given(params.project.clone()),
        kinds: vec![kind],
        all,
        band,
        memory_type,
        query: None,
        limit: LIST_LIMIT,
    };
    let page = ui
        .blocking(move |app| ops::listing_related(app, &request, title))
        .await?;
    let frame = ui.frame(&session).await;
    let form_token = &frame.form_token;
    let project = params.project.unwrap_or_default();
    let types = match listing {
        Listing::Memories => {
            let options: String = std::iter::once(("", "any"))
                .chain(MemoryType::ALL.iter().map(|t| (t.as_str(), t.as_str())))
                .map(|(value, label)| {
                    let chosen = memory_type.map_or("", |t| t.as_str()) == value;
                    format!(
                        "<option value=\"{value}\"{}>{label}</option>",
                        if chosen { " selected" } else { "" }
                    )
                })
                .collect();
            format!(
                "<p><label for=\"type\">Type</label> <select id=\"type\" name=\"type\">{options}</select></p>"
            )
        }
        _ => String::new(),
    };
    let shown_command = match memory_type {
        Some(t) => format!("{command} --type {t}"),
        None => command.to_string(),
    };
    let mut body = format!(
        "<form class=\"filters\" method=\"get\" action=\"/ui/knowledge\">\
         <input type=\"hidden\" name=\"what\" value=\"{}\">\
         <p><label for=\"project\">Project</label> <input id=\"project\" name=\"project\" value=\"{}\"></p>\
         {types}<p><label><input type=\"checkbox\" name=\"all\" value=\"1\"{}> superseded, retracted and expired too</label></p>\
         <p><button type=\"submit\">Show</button></p></form>\
         <p class=\"meta\">The same list as <code>{}</code>.</p>",
        esc(what),
        esc(&project),
        if all { " checked" } else { "" },
        esc(&shown_command),
    );
    if page.records.is_empty() {
        let _ = write!(
            body,
            "<p>No {} in the memory.</p>",
            esc(&title.to_lowercase())
        );
    }
    body.push_str("<ul class=\"records\">");
    for (k, text) in page.records.iter().zip(page.each_full(person())) {
        let _ = write!(
            body,
            "<li><pre class=\"text\">{}</pre>{}</li>",
            linked(&text),
            actions(k, form_token)
        );
    }
    body.push_str("</ul>");
    Ok(Page {
        title,
        section,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

/// `POST /ui/confirm/{id}`: confirms a proposal (`solaria confirm ID`), then shows
/// the confirmed version.
pub(super) async fn confirm(
    State(ui): State<UiState>,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let written = ui.blocking(move |app| ops::confirm(app, &id, None)).await?;
    Ok(shown(&written.record, "confirmed"))
}

/// The record page of `k`, saying what was just `done`.
fn shown(k: &Knowledge, done: &str) -> Response {
    Redirect::to(&format!(
        "/ui/record/{}?done={done}",
        url_part(&k.id.to_string())
    ))
    .into_response()
}

/// The knowledge record `id`, or why there is none.
async fn knowledge(ui: &UiState, id: String) -> Result<Knowledge, UiError> {
    let page = ui
        .blocking(move |app| all_ops::records::get(app, std::slice::from_ref(&id)))
        .await?;
    match page.records.into_iter().next() {
        Some(AnyRecord::Knowledge(k)) => Ok(k),
        _ => Err(UiError::from(OpError::BadInput(
            "only a decision or a memory can be superseded here".into(),
        ))),
    }
}

/// `GET /ui/supersede/{id}`: the form for a new version, filled with this one.
pub(super) async fn supersede_form(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let k = knowledge(&ui, id).await?;
    let fields = match &k.body {
        KnowledgeBody::Memory(m) => {
            let types: String = MemoryType::ALL
                .iter()
                .map(|t| {
                    format!(
                        "<option value=\"{0}\"{1}>{0}</option>",
                        t.as_str(),
                        if *t == m.memory_type { " selected" } else { "" }
                    )
                })
                .collect();
            format!(
                "<p><label for=\"content\">Content</label><textarea id=\"content\" name=\"content\" \
                 rows=\"5\" required>{}</textarea></p>\
                 <p><label for=\"memory_type\">Type</label> <select id=\"memory_type\" \
                 name=\"memory_type\">{types}</select></p>",
                esc(crate::ops::distill::without_proposal_mark(&m.content))
            )
        }
        KnowledgeBody::Decision(d) => {
            let input = |name: &str, label: &str, value: &str, required: bool| {
                format!(
                    "<p><label for=\"{name}\">{label}</label><input id=\"{name}\" name=\"{name}\" \
                     value=\"{}\"{}></p>",
                    esc(value),
                    if required { " required" } else { "" }
                )
            };
            format!(
                "{}{}{}<p><label for=\"alternatives\">Alternatives not taken (one per line)</label>\
                 <textarea id=\"alternatives\" name=\"alternatives\" rows=\"3\">{}</textarea></p>\
                 <p><label for=\"rationale\">Rationale</label><textarea id=\"rationale\" \
                 name=\"rationale\" rows=\"4\">{}</textarea></p>",
                input("title", "Title", &d.title, true),
                input("context", "Context", &d.context, false),
                input("chosen", "Chosen", &d.chosen, true),
                esc(&d.alternatives.join("\n")),
                esc(&d.rationale),
            )
        }
        _ => {
            return Err(UiError::from(OpError::BadInput(format!(
                "{} is a {}: only a decision or a memory is superseded",
                k.citation(),
                k.kind()
            ))));
        }
    };
    let frame = ui.frame(&session).await;
    let form_token = &frame.form_token;
    let body = format!(
        "<pre class=\"text\">{}</pre><form class=\"edit\" method=\"post\" action=\"/ui/supersede/{}\">\
         {}{fields}<p><button type=\"submit\">Supersede</button> \
         <a href=\"{}\">Cancel</a></p></form>\
         <p class=\"meta\">As <code>solaria supersede</code>: the new version stands and points to \
         this one, which stays readable.</p>",
        linked(&crate::present::knowledge::line(
            &k,
            person(),
            &crate::present::MachineLabels::default()
        )),
        esc(&url_part(&k.id.to_string())),
        hidden_token(form_token),
        esc(&page::record_href(&k.id.to_string())),
    );
    Ok(Page {
        title: "Supersede",
        section: Section::None,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

/// A superseding version's fields (its form token was checked by the guard).
#[derive(Debug, Deserialize)]
pub(super) struct SupersedeForm {
    content: Option<String>,
    memory_type: Option<String>,
    title: Option<String>,
    context: Option<String>,
    chosen: Option<String>,
    alternatives: Option<String>,
    rationale: Option<String>,
}

/// `POST /ui/supersede/{id}`: writes the new version (`solaria supersede`).
pub(super) async fn supersede(
    State(ui): State<UiState>,
    Path(id): Path<String>,
    Form(form): Form<SupersedeForm>,
) -> Result<Response, UiError> {
    let replacement = match form.content {
        Some(content) => Replacement::Memory(MemoryRequest {
            scope: Scope::default(),
            memory_type: all_ops::input::parsed("memory_type", form.memory_type)?
                .unwrap_or_default(),
            content,
            // A person wrote it: stated.
            confidence: None,
            tags: Vec::new(),
            expiry: Expiry::ByType,
            anchors: Default::default(),
        }),
        None => Replacement::Decision(DecisionRequest {
            scope: Scope::default(),
            title: form.title.unwrap_or_default(),
            context: form.context.unwrap_or_default(),
            chosen: form.chosen.unwrap_or_default(),
            alternatives: form
                .alternatives
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect(),
            rationale: form.rationale.unwrap_or_default(),
            ..DecisionRequest::default()
        }),
    };
    let written = ui
        .blocking(move |app| ops::supersede(app, &id, &replacement))
        .await?;
    Ok(shown(&written.record, "superseded"))
}

/// `GET /ui/forget/{id}`: what forgetting does, and the button that does it.
pub(super) async fn forget_form(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let shown_id = id.clone();
    let page = ui
        .blocking(move |app| all_ops::records::get(app, std::slice::from_ref(&id)))
        .await?;
    let frame = ui.frame(&session).await;
    let form_token = &frame.form_token;
    let body = format!(
        "<pre class=\"text\">{}</pre><p>Forgetting erases this record's content here and, at \
         the next sync, on your other machines and the central service (as <code>solaria \
         forget</code>). It cannot be undone.</p>{}<p><a href=\"{}\">Cancel</a></p>",
        linked(&page.text(person())),
        page::button_form(
            &format!("/ui/forget/{}", url_part(&shown_id)),
            form_token,
            "Forget it",
            ""
        ),
        esc(&page::record_href(&shown_id)),
    );
    Ok(Page {
        title: "Forget",
        section: Section::None,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

/// `POST /ui/forget/{id}`: forgets the record (`solaria forget ID`).
pub(super) async fn forget(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let forgotten = ui
        .blocking(move |app| {
            crate::ops::forget::forget(app, &ForgetTarget::Record(id), |session| {
                crate::capture::forget_spooled(
                    &app.paths,
                    app.runtime_dir.as_deref(),
                    &session.agent,
                    &session.agent_session_id,
                )
            })
        })
        .await?;
    let frame = ui.frame(&session).await;
    Ok(Page {
        title: "Forgotten",
        section: Section::None,
        frame: Some(&frame),
        body: format!(
            "{}<p><a href=\"/ui/\">Back to the projects</a></p>",
            page::notice("done", &forgotten.text())
        ),
    }
    .into_response())
}
