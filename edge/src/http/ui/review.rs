//! The "To review" page: standing decisions and memories whose code changed since
//! they were written or confirmed, and pairs of a new record and a standing one
//! close to it in subject — the same lists as `solaria review` — each with what a
//! person does about it, through the same operations as the CLI.

use super::browse::person;
use super::login::UiSession;
use super::page::{self, Page, Section, esc, linked, url_part};
use super::{UiError, UiState};
use crate::ops::OpError;
use crate::ops::knowledge as kops;
use crate::ops::review::{ReviewScope, review};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use serde::Deserialize;
use solaria_shared::knowledge::LinkKind;
use std::fmt::Write;

#[derive(Debug, Deserialize)]
pub(super) struct ReviewParams {
    project: Option<String>,
    done: Option<String>,
}

/// `GET /ui/review[?project=…]`: what waits for a person, in one project or all.
pub(super) async fn page(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
    Query(params): Query<ReviewParams>,
) -> Result<Response, UiError> {
    let project = crate::ops::input::given(params.project.clone());
    let scope = match project.clone() {
        Some(name) => ReviewScope::Named(name),
        None => ReviewScope::Every,
    };
    let review = ui.blocking(move |app| review(app, &scope)).await?;
    let frame = ui.frame(&session).await;
    let token = &frame.form_token;
    let mut body = format!(
        "<form class=\"filters\" method=\"get\" action=\"/ui/review\">\
         <p><label for=\"project\">Project</label> <input id=\"project\" name=\"project\" value=\"{}\"></p>\
         <p><button type=\"submit\">Show</button></p></form>\
         <p class=\"meta\">The same lists as <code>solaria review</code>, as the daemon last \
         checked each repository.</p>",
        esc(project.as_deref().unwrap_or_default())
    );
    if let Some(done) = params.done.as_deref().and_then(done_notice) {
        body.push_str(&page::notice("ok", done));
    }
    if review.is_empty() {
        body.push_str(&format!(
            "<pre class=\"text\">{}</pre>",
            esc(&review.text(person()))
        ));
    }
    if !review.items.is_empty() {
        let _ = write!(
            body,
            "<h2 id=\"changed\">Code changed since ({})</h2><ul class=\"records\">",
            review.items.len()
        );
        for (item, text) in review.items.iter().zip(review.each_changed(person())) {
            let id = item.record.id.to_string();
            let _ = write!(
                body,
                "<li><pre class=\"text\">{}</pre><div class=\"actions\">{}\
                 <a class=\"button\" href=\"/ui/supersede/{id_url}\">Supersede</a>\
                 <a class=\"button\" href=\"/ui/forget/{id_url}\">Forget</a></div></li>",
                linked(&text),
                page::button_form(
                    &format!("/ui/confirm/{}", url_part(&id)),
                    token,
                    "Still holds",
                    ""
                ),
                id_url = esc(&url_part(&id)),
            );
        }
        body.push_str("</ul>");
    }
    if !review.pairs.is_empty() {
        let _ = write!(
            body,
            "<h2 id=\"pairs\">Close pairs ({})</h2><ul class=\"records\">",
            review.pairs.len()
        );
        for (pair, text) in review.pairs.iter().zip(review.each_pair(person())) {
            let fields = format!(
                "<input type=\"hidden\" name=\"record\" value=\"{}\">\
                 <input type=\"hidden\" name=\"standing\" value=\"{}\">",
                esc(&pair.record.id.to_string()),
                esc(&pair.standing.id.to_string())
            );
            let button = |choice: &str, label: &str| {
                page::button_form(
                    "/ui/pair",
                    token,
                    label,
                    &format!("{fields}<input type=\"hidden\" name=\"choice\" value=\"{choice}\">"),
                )
            };
            let _ = write!(
                body,
                "<li><pre class=\"text\">{}</pre><div class=\"actions\">{}{}{}</div></li>",
                linked(&text),
                button("supersede", "New one replaces the old"),
                button("keep", "Keep both"),
                button("related", "Link as related"),
            );
        }
        body.push_str("</ul>");
    }
    Ok(Page {
        title: "To review",
        section: Section::Review,
        frame: Some(&frame),
        body,
    }
    .into_response())
}

fn done_notice(done: &str) -> Option<&'static str> {
    Some(match done {
        "superseded" => "The older record is marked superseded by the newer one.",
        "kept" => "Both records stand; the pair is settled.",
        "related" => "The two records are linked as related; the pair is settled.",
        _ => return None,
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct PairForm {
    record: String,
    standing: String,
    choice: String,
}

/// `POST /ui/pair`: a person settles a pair (`solaria supersede OLD --by NEW`,
/// `solaria keep-both`, `solaria link NEW related OLD`).
pub(super) async fn settle(
    State(ui): State<UiState>,
    Form(form): Form<PairForm>,
) -> Result<Response, UiError> {
    let PairForm {
        record,
        standing,
        choice,
    } = form;
    let done = ui
        .blocking(move |app| {
            Ok(match choice.as_str() {
                "supersede" => {
                    kops::supersede_by(app, &standing, &record)?;
                    "superseded"
                }
                "keep" => {
                    crate::ops::close_pairs::keep_both(app, &record, &standing)?;
                    "kept"
                }
                "related" => {
                    kops::link(app, &record, LinkKind::Related, &standing, "")?;
                    "related"
                }
                other => {
                    return Err(OpError::BadInput(format!(
                        "no choice named {:?}: supersede, keep or related",
                        crate::ops::input::clip(other)
                    )));
                }
            })
        })
        .await?;
    Ok(Redirect::to(&format!("/ui/review?done={done}")).into_response())
}
