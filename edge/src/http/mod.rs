//! The daemon's local HTTP API: search, timeline, context, stats, status
//! and a sync trigger as JSON, and the viewer's pages (`ui/`), on 127.0.0.1 only, behind a bearer token kept in
//! `<data dir>/api-token` (0600): another user of the machine must not read this
//! memory. `solaria serve` starts it on a thread of its own; `docs/LOCAL_API.md`
//! documents the endpoints.
//!
//! Each request opens the store and runs on Tokio's blocking pool (SQLite and the
//! sync client are synchronous), like the MCP tools. Failures answer
//! `{"error": message, "code": code}` with a status that says whose fault it was;
//! no input makes the server panic, and the token is never logged.
//!
//! Files: this one starts the server and routes; `host.rs` refuses a `Host` other
//! than its loopback names (DNS rebinding), before anything else; `token.rs` keeps
//! the bearer token and checks it; `memory.rs` answers search, timeline and
//! context; `status.rs` health, stats, status, the sync trigger and the viewer's
//! login codes; `ui/` the viewer (its own login and checks); `error.rs` the
//! error answers; `private_file.rs` writes the 0600 files. Each endpoint parses its parameters
//! into an operation's request (`crate::ops`) and answers its result as JSON.

mod error;
mod host;
mod memory;
mod private_file;
mod status;
mod token;
pub mod ui;

pub use token::{ApiToken, TOKEN_FILE, load_or_create_token, token_path};

use crate::app::App;
use axum::Json;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware;
use axum::routing::{get, post};
use error::ApiError;
use private_file::write_private;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file in the data dir holding the address the API listens on, written once
/// it listens (mode 0600).
pub use crate::config::SERVE_ADDR_FILE as ADDR_FILE;

/// The largest body an endpoint reads; anything larger is refused unread. The
/// largest legitimate ones: a prompt of 20,000 characters for `/api/recall` (up to
/// four bytes each, more where JSON escapes them), a query vector and its
/// sentences for `/api/closest`.
const MAX_BODY_BYTES: usize = 128 * 1024;
/// Requests running at once on the blocking pool (the store is one SQLite file).
const MAX_BLOCKING: usize = 8;

/// Where the daemon's messages go (`logs/serve.log`).
pub type Logger = Arc<dyn Fn(&str) + Send + Sync>;

/// Why the API could not start. The daemon logs it and goes on with its other work.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot read or create the API token {}: {source}", path.display())]
    Token { path: PathBuf, source: io::Error },
    #[error("cannot listen on 127.0.0.1:{port}: {source}{}", bind_hint(.source))]
    Bind { port: u16, source: io::Error },
    #[error("cannot start the local API: {0}")]
    Runtime(io::Error),
}

fn bind_hint(e: &io::Error) -> &'static str {
    if e.kind() == io::ErrorKind::AddrInUse {
        " (the port is busy: another `solaria serve`, or another program; set another \
         port with `[serve] http_port` in config.toml, \"any\" for any free one, or 0 to \
         turn the API off)"
    } else {
        ""
    }
}

/// The address file of a data dir.
pub fn addr_path(data_dir: &Path) -> PathBuf {
    data_dir.join(ADDR_FILE)
}

/// Starts the API on `127.0.0.1:port` (port 0: one the system picks) on a thread
/// of its own and returns the address it listens on (also written to [`ADDR_FILE`]).
/// The thread serves until the process is asked to stop (SIGTERM or SIGINT): it
/// then removes the address file and ends the process. Fails, without side effects on the daemon, when the token
/// file cannot be made or the port is taken.
pub fn start(app: App, port: u16, log: Logger) -> Result<SocketAddr, StartError> {
    let data_dir = app.paths.data_dir.clone();
    let token = load_or_create_token(&data_dir, &*log).map_err(|source| StartError::Token {
        path: token_path(&data_dir),
        source,
    })?;
    // A stale address must never send a client to whatever holds that port now.
    let _ = std::fs::remove_file(addr_path(&data_dir));
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .map_err(|source| StartError::Bind { port, source })?;
    listener
        .set_nonblocking(true)
        .map_err(StartError::Runtime)?;
    let addr = listener.local_addr().map_err(StartError::Runtime)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING)
        .build()
        .map_err(StartError::Runtime)?;
    let app = Arc::new(app);
    let syncing = Arc::new(tokio::sync::Mutex::new(()));
    let logins = Arc::new(ui::login::Logins::default());
    // Set when the process is asked to stop: the viewer's open event streams end,
    // so the graceful shutdown does not wait on them.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let viewer = ui::UiState::new(ui::Parts {
        app: Arc::clone(&app),
        token: token.clone(),
        logins: Arc::clone(&logins),
        port: addr.port(),
        log: Arc::clone(&log),
        stopping,
        syncing: Arc::clone(&syncing),
    });
    let state = ApiState {
        app,
        token,
        syncing,
        logins,
        log: Arc::clone(&log),
    };
    let thread_log = Arc::clone(&log);
    let addr_file = addr_path(&data_dir);
    std::thread::Builder::new()
        .name("solaria-api".into())
        .spawn(move || {
            let served = runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                axum::serve(listener, router(state, viewer))
                    .with_graceful_shutdown(async move {
                        stop_signal().await;
                        let _ = stop.send(true);
                    })
                    .await
            });
            // Stopped (SIGTERM, SIGINT) or failed: the address must not outlive us.
            let _ = std::fs::remove_file(&addr_file);
            match served {
                Ok(()) => {
                    thread_log("stopping: signal received");
                    std::process::exit(0);
                }
                Err(e) => thread_log(&format!("local API stopped: {e}")),
            }
        })
        .map_err(StartError::Runtime)?;
    if let Err(e) = write_private(&data_dir, ADDR_FILE, &format!("{addr}\n")) {
        log(&format!(
            "cannot write {}: {e}",
            addr_path(&data_dir).display()
        ));
    }
    Ok(addr)
}

/// Resolves when the process is asked to stop (SIGTERM from systemd or `kill`,
/// SIGINT from a terminal). If the handlers cannot be installed it never
/// resolves, and the signal keeps its default effect.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// What every handler shares.
#[derive(Clone)]
struct ApiState {
    app: Arc<App>,
    token: ApiToken,
    /// Held while a sync started through the API or the viewer runs: one at a time.
    syncing: Arc<tokio::sync::Mutex<()>>,
    /// The viewer's login codes waiting to be used (`POST /api/ui/login` makes one).
    logins: Arc<ui::login::Logins>,
    log: Logger,
}

impl fmt::Debug for ApiState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiState")
            .field("data_dir", &self.app.paths.data_dir)
            .finish_non_exhaustive()
    }
}

impl ApiState {
    /// Runs `f` on the blocking pool; a failure on our side is logged.
    async fn blocking<T, F, E>(&self, f: F) -> Result<Json<T>, ApiError>
    where
        F: FnOnce(&App) -> Result<T, E> + Send + 'static,
        E: Into<ApiError> + Send + 'static,
        T: Send + 'static,
    {
        let app = Arc::clone(&self.app);
        let result = match tokio::task::spawn_blocking(move || f(&app).map_err(Into::into)).await {
            Ok(result) => result,
            Err(e) => Err(ApiError::internal(format!(
                "the request failed unexpectedly: {e}"
            ))),
        };
        if let Err(e) = &result
            && e.status == StatusCode::INTERNAL_SERVER_ERROR
        {
            (self.log)(&format!("local API: {}", e.message));
        }
        result.map(Json)
    }
}

fn router(state: ApiState, viewer: ui::UiState) -> Router {
    let private = Router::new()
        .route("/api/ui/login", post(status::viewer_login))
        .route("/api/search", get(memory::search))
        .route("/api/recall", post(memory::recall))
        .route("/api/embed", post(memory::embed))
        .route("/api/closest", post(memory::closest))
        .route("/api/timeline/{id}", get(memory::timeline))
        .route("/api/context", get(memory::context_of_project))
        .route("/api/stats", get(status::stats))
        .route("/api/status", get(status::status))
        .route("/api/sync", post(status::sync_now))
        .route_layer(middleware::from_fn_with_state(
            state.token.clone(),
            token::require_token,
        ));
    let api = Router::new()
        .route("/api/health", get(status::health))
        .merge(private)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state);
    api.merge(ui::router(viewer))
        .fallback(error::no_route)
        .method_not_allowed_fallback(error::wrong_method)
        // Outermost: a foreign Host is refused before any route, token or body.
        .layer(middleware::from_fn(host::require_loopback_host))
}
