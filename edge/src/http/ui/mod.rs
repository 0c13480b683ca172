//! The viewer: web pages of the memory served by the daemon beside its JSON API, on
//! the same loopback address (`solaria ui` opens it). Pages are HTML rendered here
//! from the operations' results, with the renderer's text for every record, and a
//! small script that adds events to an open page as they are captured (server-sent
//! events); everything reads without the script.
//!
//! Who sees it: a browser logged in with a one-time code from `solaria ui`, which
//! then holds a session cookie (HttpOnly, SameSite=Strict); without it a page says
//! how to log in and shows nothing. A request that changes something must also come
//! from the viewer's own origin and carry its session's form token.
//!
//! Files: `login.rs` (codes, the session cookie, form tokens), `guard.rs` (the
//! session and origin checks), `page.rs` (escaping, the page frame), `browse.rs`
//! (projects, sessions, records), `find.rs` (search), `knowledge.rs` (decisions,
//! memories, questions, proposals, and confirm / supersede / forget), `sync.rs`
//! (sync state, conflicts, sync now), `live.rs` (the event stream), `assets.rs`
//! (stylesheet, script, icon).

mod assets;
mod browse;
mod find;
mod guard;
mod knowledge;
mod live;
pub mod login;
mod page;
mod review;
mod sync;

use super::{ApiToken, Logger};
use crate::app::App;
use crate::ops::OpError;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use login::{Logins, UiSession, cookie_name};
use page::{Page, Section};
use serde::Deserialize;
use solaria_shared::UnixMillis;
use std::sync::Arc;

/// The largest form the viewer takes (a superseding decision's fields).
pub(super) const MAX_FORM_BYTES: usize = 64 * 1024;

/// What the viewer's handlers share.
#[derive(Clone)]
pub struct UiState {
    /// The daemon's context, writing as the person at the browser.
    app: Arc<App>,
    token: ApiToken,
    logins: Arc<Logins>,
    /// The port the daemon listens on (its cookie is named after it).
    port: u16,
    log: Logger,
    /// Becomes `true` when the daemon is stopping: open event streams end.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Held while a sync started from the viewer or the API runs.
    syncing: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for UiState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiState")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// What the daemon hands the viewer.
pub struct Parts {
    pub app: Arc<App>,
    pub token: ApiToken,
    pub logins: Arc<Logins>,
    pub port: u16,
    pub log: Logger,
    pub stopping: tokio::sync::watch::Receiver<bool>,
    pub syncing: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl UiState {
    pub fn new(parts: Parts) -> UiState {
        let mut app = (*parts.app).clone();
        // Whoever holds the browser's session is the person at this machine.
        app.writer = solaria_shared::knowledge::WrittenBy::Person;
        UiState {
            app: Arc::new(app),
            token: parts.token,
            logins: parts.logins,
            port: parts.port,
            log: parts.log,
            stopping: parts.stopping,
            syncing: parts.syncing,
        }
    }

    /// The frame of a page for `session`: its form token, the proposals waiting and
    /// what there is to review (none said when they cannot be counted: the page
    /// itself still shows).
    async fn frame(&self, session: &UiSession) -> page::Frame {
        let waiting = self
            .blocking(|app| {
                let request = crate::ops::knowledge::ListRequest {
                    kinds: vec![solaria_shared::KnowledgeKind::Memory],
                    band: Some(solaria_shared::knowledge::Band::Inferred),
                    ..Default::default()
                };
                Ok(crate::ops::knowledge::list(app, &request)?.len())
            })
            .await
            .unwrap_or(0);
        let to_review = self
            .blocking(|app| {
                let page =
                    crate::ops::review::review(app, &crate::ops::review::ReviewScope::Every)?;
                Ok(page.items.len() + page.pairs.len())
            })
            .await
            .unwrap_or(0);
        page::Frame {
            form_token: session.form_token(&self.token),
            waiting,
            to_review,
        }
    }

    /// Runs `f` on the blocking pool (the store is SQLite); a failure becomes an
    /// error page, and one on our side is logged.
    async fn blocking<T, F>(&self, f: F) -> Result<T, UiError>
    where
        F: FnOnce(&App) -> Result<T, OpError> + Send + 'static,
        T: Send + 'static,
    {
        let app = Arc::clone(&self.app);
        let result = match tokio::task::spawn_blocking(move || f(&app)).await {
            Ok(result) => result.map_err(UiError::from),
            Err(e) => Err(UiError::internal(format!(
                "the request failed unexpectedly: {e}"
            ))),
        };
        if let Err(e) = &result
            && e.status == StatusCode::INTERNAL_SERVER_ERROR
        {
            (self.log)(&format!("viewer: {}", e.message));
        }
        result
    }
}

/// The viewer's routes, under `/ui`, plus the browser's `/favicon.ico`.
pub fn router(state: UiState) -> Router {
    let private = Router::new()
        .route("/ui/", get(browse::home))
        .route("/ui/project", get(browse::project))
        .route("/ui/session/{id}", get(browse::session))
        .route("/ui/record/{id}", get(browse::record))
        .route("/ui/search", get(find::search))
        .route("/ui/knowledge", get(knowledge::list))
        .route("/ui/confirm/{id}", post(knowledge::confirm))
        .route(
            "/ui/supersede/{id}",
            get(knowledge::supersede_form).post(knowledge::supersede),
        )
        .route(
            "/ui/forget/{id}",
            get(knowledge::forget_form).post(knowledge::forget),
        )
        .route("/ui/review", get(review::page))
        .route("/ui/pair", post(review::settle))
        .route("/ui/sync", get(sync::page).post(sync::sync_now))
        .route("/ui/conflicts/acknowledge", post(sync::acknowledge))
        .route("/ui/live", get(live::stream))
        .route("/ui/logout", post(logout))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            guard::require_session,
        ));
    Router::new()
        .route("/ui", get(|| async { Redirect::to("/ui/") }))
        .route("/ui/login", get(login))
        .route("/ui/favicon.svg", get(assets::favicon))
        .route("/favicon.ico", get(assets::favicon))
        .route("/ui/assets/viewer.css", get(assets::stylesheet))
        .route("/ui/assets/viewer.js", get(assets::script))
        .merge(private)
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .layer(middleware::from_fn(hardened))
        .with_state(state)
}

/// The page for a path under `/ui` that is none of the viewer's.
pub fn no_page() -> Response {
    Page {
        title: "No such page",
        section: Section::None,
        frame: None,
        body: "<p><a href=\"/ui/\">The viewer's first page</a> lists the projects.</p>".into(),
    }
    .with_status(StatusCode::NOT_FOUND)
}

async fn hardened(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    page::harden(&mut response);
    response
}

#[derive(Debug, Deserialize)]
struct LoginParams {
    code: Option<String>,
}

/// `GET /ui/login?code=…`: trades a waiting code for a session cookie and goes to
/// the first page (so the code leaves the address bar); a used, late or wrong code
/// logs nobody in.
async fn login(State(ui): State<UiState>, Query(params): Query<LoginParams>) -> Response {
    let code = params.code.unwrap_or_default();
    if !ui.logins.redeem(&ui.token, &code) {
        let mut refused = guard::not_logged_in();
        *refused.status_mut() = StatusCode::FORBIDDEN;
        return refused;
    }
    let now = UnixMillis::now();
    let session = UiSession::start(now);
    let cookie = format!(
        "{}={}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={}",
        cookie_name(ui.port),
        session.cookie_value(&ui.token),
        session.seconds_left(now)
    );
    let mut response = Redirect::to("/ui/").into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `POST /ui/logout`: forgets the cookie in this browser.
async fn logout(State(ui): State<UiState>) -> Response {
    let cookie = format!(
        "{}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0",
        cookie_name(ui.port)
    );
    let mut response = Page {
        title: "Logged out",
        section: Section::None,
        frame: None,
        body: "<p>This browser no longer sees the memory. <code>solaria ui</code> logs it \
               in again.</p>"
            .into(),
    }
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// An error page: the operation's message, with a status saying whose fault.
#[derive(Debug)]
struct UiError {
    status: StatusCode,
    message: String,
}

impl UiError {
    fn internal(message: String) -> UiError {
        UiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message,
        }
    }
}

impl From<OpError> for UiError {
    fn from(e: OpError) -> UiError {
        let status = match &e {
            OpError::BadInput(_) => StatusCode::BAD_REQUEST,
            OpError::NotFound(_) | OpError::UnknownProject { .. } => StatusCode::NOT_FOUND,
            OpError::NotLoggedIn(_) => StatusCode::CONFLICT,
            OpError::Remote { .. } => StatusCode::BAD_GATEWAY,
            OpError::Model(_) | OpError::NoModel(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        UiError {
            status,
            message: e.to_string(),
        }
    }
}

impl IntoResponse for UiError {
    fn into_response(self) -> Response {
        let title = if self.status.is_server_error() {
            "Something went wrong"
        } else {
            "Cannot show that"
        };
        Page {
            title,
            section: Section::None,
            frame: None,
            body: format!(
                "{}<p><a href=\"/ui/\">Back to the projects</a></p>",
                page::notice("error", &self.message)
            ),
        }
        .with_status(self.status)
    }
}
