//! The viewer's checks before any page: a session cookie for everything but the
//! login, the favicon and the stylesheet and script; and for a request that
//! changes something, an `Origin` that is the viewer's own, no cross-site fetch,
//! and the session's form token in the form (CSRF). A foreign `Host` was refused
//! before, for the whole server.

use super::UiState;
use super::login::{UiSession, cookie_in, cookie_name};
use super::page::{Page, Section};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use solaria_shared::UnixMillis;

/// Runs the request if it carries a live session cookie (the session is handed to
/// the handler as an extension); else answers 401 with how to log in, showing
/// nothing of the memory.
pub async fn require_session(
    State(ui): State<UiState>,
    mut request: Request,
    next: Next,
) -> Response {
    let session = request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|h| cookie_in(h, &cookie_name(ui.port)))
        .and_then(|value| UiSession::from_cookie(&ui.token, value, UnixMillis::now()));
    let Some(session) = session else {
        return not_logged_in();
    };
    let changes = request.method() != Method::GET && request.method() != Method::HEAD;
    if changes {
        if !same_origin(&request) {
            return refused(
                "This change was not sent by the viewer's own page (its Origin is another \
                 site's or missing), so nothing was changed.",
            );
        }
        // The form is read here, whole and bounded, for its token; the handler reads
        // its fields from the same bytes.
        let (parts, body) = request.into_parts();
        let Ok(form) = axum::body::to_bytes(body, super::MAX_FORM_BYTES).await else {
            return refused("This form is larger than the viewer takes, so nothing was changed.");
        };
        if !form_token(&form).is_some_and(|t| session.accepts_form(&ui.token, t)) {
            return refused(
                "This form did not carry this session's token (it was not sent from a page \
                 the viewer served to you), so nothing was changed.",
            );
        }
        request = Request::from_parts(parts, Body::from(form));
    }
    request.extensions_mut().insert(session);
    next.run(request).await
}

/// The `form_token` field of a URL-encoded form (the token is hex: never encoded).
fn form_token(form: &[u8]) -> Option<&str> {
    std::str::from_utf8(form)
        .ok()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("form_token="))
}

/// The page a browser without a session gets.
pub fn not_logged_in() -> Response {
    Page {
        title: "Log in to see the memory",
        section: Section::None,
        frame: None,
        body: "<p>This page shows what SOLARIA holds, so it opens only with a login code. \
               Run <code>solaria ui</code> in a terminal of this machine: it prints (and \
               opens) a link that logs this browser in.</p>"
            .into(),
    }
    .with_status(StatusCode::UNAUTHORIZED)
}

/// Whether a request that changes something came from the viewer's own pages: its
/// `Origin` names this very host and port (browsers send it with every POST), and
/// the browser did not mark it cross-site.
fn same_origin(request: &Request) -> bool {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    let fetch_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("same-origin");
    let own = match (host, origin) {
        (Some(host), Some(origin)) => origin == format!("http://{host}"),
        _ => false,
    };
    own && matches!(fetch_site, "same-origin" | "none")
}

/// A 403 page saying why nothing was done.
pub fn refused(why: &str) -> Response {
    Page {
        title: "Refused",
        section: Section::None,
        frame: None,
        body: super::page::notice("error", why),
    }
    .with_status(StatusCode::FORBIDDEN)
    .into_response()
}
