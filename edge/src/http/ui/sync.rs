//! The sync page: this machine's sync state and the conflicts to review, as
//! `solaria status` and `solaria conflicts` print them, with "sync now" and
//! "mark seen" (`solaria sync`, `solaria conflicts --ack`).

use super::login::UiSession;
use super::page::{Page, Section, button_form, linked, notice};
use super::{UiError, UiState};
use crate::ops::{self, OpError};
use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

/// `GET /ui/sync`.
pub(super) async fn page(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
) -> Result<Response, UiError> {
    render(&ui, &session, String::new(), StatusCode::OK).await
}

/// The page with `notice` (an outcome) on top.
async fn render(
    ui: &UiState,
    session: &UiSession,
    outcome: String,
    status: StatusCode,
) -> Result<Response, UiError> {
    let (state, conflicts) = ui
        .blocking(|app| {
            Ok((
                ops::status::sync_state(app)?,
                ops::maintenance::conflicts(app, false)?,
            ))
        })
        .await?;
    let frame = ui.frame(session).await;
    let form_token = &frame.form_token;
    let mut body = outcome;
    body.push_str(&format!(
        "<section aria-labelledby=\"state\"><h2 id=\"state\">This machine</h2>\
         <pre class=\"text\">{}</pre>",
        linked(&state.text())
    ));
    if state.logged_in {
        body.push_str(&button_form("/ui/sync", form_token, "Sync now", ""));
    }
    body.push_str(
        "</section><section aria-labelledby=\"conflicts\"><h2 id=\"conflicts\">Conflicts</h2>",
    );
    body.push_str(&format!(
        "<pre class=\"text\">{}</pre>",
        linked(&conflicts.text())
    ));
    if !conflicts.conflicts.is_empty() {
        body.push_str(&button_form(
            "/ui/conflicts/acknowledge",
            form_token,
            "Mark them all seen",
            "",
        ));
    }
    body.push_str("</section>");
    Ok(Page {
        title: "Sync",
        section: Section::Sync,
        frame: Some(&frame),
        body,
    }
    .with_status(status))
}

/// `POST /ui/sync`: pushes and pulls now (one sync at a time, shared with the
/// API's trigger), then shows what it did.
pub(super) async fn sync_now(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
) -> Result<Response, UiError> {
    let Ok(running) = Arc::clone(&ui.syncing).try_lock_owned() else {
        let busy = notice(
            "error",
            "A sync is already running: wait for it, then look again.",
        );
        return render(&ui, &session, busy, StatusCode::CONFLICT).await;
    };
    let log = Arc::clone(&ui.log);
    let outcome = ui
        .blocking(move |app| {
            let _running = running;
            let outcome = ops::sync::sync_now(app, |_| {})?;
            log(&format!("sync (viewer): {}", outcome.report.counts()));
            Ok::<_, OpError>(outcome)
        })
        .await;
    let said = match outcome {
        Ok(outcome) => notice("done", &outcome.text()),
        Err(e) if e.status != StatusCode::INTERNAL_SERVER_ERROR => notice("error", &e.message),
        Err(e) => return Err(e),
    };
    render(&ui, &session, said, StatusCode::OK).await
}

/// `POST /ui/conflicts/acknowledge`: marks every conflict seen.
pub(super) async fn acknowledge(
    State(ui): State<UiState>,
    Extension(session): Extension<UiSession>,
) -> Result<Response, UiError> {
    let n = ui
        .blocking(|app| ops::maintenance::acknowledge_conflicts(app, &[]))
        .await?;
    let said = notice("done", &crate::present::maintenance::acknowledged(n));
    render(&ui, &session, said, StatusCode::OK).await
}
