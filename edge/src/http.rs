//! The daemon's local HTTP API (SPEC §4): search, timeline, context, stats, status
//! and a sync trigger as JSON, on 127.0.0.1 only, behind a bearer token kept in
//! `<data dir>/api-token` (0600): another user of the machine must not read this
//! memory. `solaria serve` starts it on a thread of its own; `docs/LOCAL_API.md`
//! documents the endpoints.
//!
//! Each request opens the store and runs on Tokio's blocking pool (SQLite and the
//! sync client are synchronous), like the MCP tools. Failures answer
//! `{"error": message, "code": code}` with a status that says whose fault it was;
//! no input makes the server panic, and the token is never logged.

use crate::cli::App;
use crate::context;
use crate::semantic;
use crate::store::StoreError;
use crate::store::hybrid::SearchMode;
use crate::store::records;
use crate::store::search::{Hit, RecordType, SearchQuery};
use crate::store::sync::{self as store_sync, PUSH_CURSOR_KEY};
use crate::store::views;
use crate::sync::{self, SyncError, SyncOptions, SyncReport};
use crate::timefmt;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use solaria_shared::{MachineId, Project, UnixMillis};
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::ops::RangeInclusive;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The file in the data dir holding the bearer token (mode 0600).
pub const TOKEN_FILE: &str = "api-token";
/// The file in the data dir holding the address the API listens on, written once
/// it listens (mode 0600): `127.0.0.1:37777` and a newline.
pub const ADDR_FILE: &str = "serve.addr";

/// A sync started through the API has the manual sync's 2-minute timeout (SPEC §6).
const SYNC_DEADLINE: Duration = Duration::from_secs(120);
/// The most results a search returns.
const MAX_LIMIT: usize = 100;
/// The most events shown on either side of a timeline's anchor.
const MAX_WINDOW: usize = 50;
/// The longest query text, in characters.
const MAX_QUERY_CHARS: usize = 1_000;
/// No endpoint takes a body; anything larger than this is refused unread.
const MAX_BODY_BYTES: usize = 4 * 1024;
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
         port with `[serve] http_port` in config.toml, or 0 to turn the API off)"
    } else {
        ""
    }
}

/// The token file of a data dir.
pub fn token_path(data_dir: &FsPath) -> PathBuf {
    data_dir.join(TOKEN_FILE)
}

/// The address file of a data dir.
pub fn addr_path(data_dir: &FsPath) -> PathBuf {
    data_dir.join(ADDR_FILE)
}

/// Starts the API on `127.0.0.1:port` on a thread of its own and returns the
/// address it listens on (also written to [`ADDR_FILE`]). The thread serves until
/// the process ends. Fails, without side effects on the daemon, when the token
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
    let state = ApiState {
        app: Arc::new(app),
        token,
        syncing: Arc::new(tokio::sync::Mutex::new(())),
        log: Arc::clone(&log),
    };
    let thread_log = Arc::clone(&log);
    std::thread::Builder::new()
        .name("solaria-api".into())
        .spawn(move || {
            let served = runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                axum::serve(listener, router(state)).await
            });
            if let Err(e) = served {
                thread_log(&format!("local API stopped: {e}"));
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

/// The API's bearer token. Its `Debug` hides it, so it never reaches a log.
#[derive(Clone)]
pub struct ApiToken(Arc<str>);

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiToken(<hidden>)")
    }
}

impl ApiToken {
    /// A new random token: 64 hex digits from two v4 UUIDs (244 random bits from
    /// the operating system's generator).
    fn generate() -> ApiToken {
        let text = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        ApiToken(text.into())
    }

    /// A token read from the file: at least 32 printable ASCII characters (a user
    /// may put their own there), at most 512.
    fn parse(text: &str) -> Option<ApiToken> {
        let ok = (32..=512).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| ApiToken(text.into()))
    }

    /// Whether `presented` is this token, in time that does not depend on where
    /// they differ.
    pub fn matches(&self, presented: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), presented.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
        std::hint::black_box(diff) == 0
    }
}

/// The token of `data_dir`: read from [`TOKEN_FILE`], or created there (mode 0600
/// from the start) on first use. A file others can read or write, or that holds
/// no valid token, is replaced by a new token (and said so in `log`).
pub fn load_or_create_token(data_dir: &FsPath, log: &dyn Fn(&str)) -> io::Result<ApiToken> {
    std::fs::create_dir_all(data_dir)?;
    let path = token_path(data_dir);
    // Two daemons starting at once: the second to link finds the first's file.
    for _ in 0..3 {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let token = ApiToken::generate();
                let tmp = write_private_tmp(data_dir, TOKEN_FILE, &format!("{}\n", token.0))?;
                // A hard link creates the name only if it is free, atomically.
                let linked = std::fs::hard_link(&tmp, &path);
                let _ = std::fs::remove_file(&tmp);
                match linked {
                    Ok(()) => {
                        log(&format!(
                            "created the local API token in {}",
                            path.display()
                        ));
                        return Ok(token);
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let problem = if !meta.is_file() {
            "is not a regular file"
        } else if meta.permissions().mode() & 0o077 != 0 {
            "could be read or changed by other users"
        } else {
            match ApiToken::parse(std::fs::read_to_string(&path)?.trim()) {
                Some(token) => return Ok(token),
                None => "held no valid token",
            }
        };
        let token = ApiToken::generate();
        let tmp = write_private_tmp(data_dir, TOKEN_FILE, &format!("{}\n", token.0))?;
        if let Err(e) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        log(&format!(
            "{} {problem}: replaced with a new token (clients need the new one)",
            path.display()
        ));
        return Ok(token);
    }
    Err(io::Error::other(
        "the token file kept appearing and disappearing; is another `solaria serve` starting?",
    ))
}

/// Writes `contents` to `dir/name` atomically, mode 0600 from the start.
fn write_private(dir: &FsPath, name: &str, contents: &str) -> io::Result<()> {
    let tmp = write_private_tmp(dir, name, contents)?;
    std::fs::rename(&tmp, dir.join(name)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// A new temporary file beside `dir/name` holding `contents`, created 0600 (never
/// readable by others, not even for an instant).
fn write_private_tmp(dir: &FsPath, name: &str, contents: &str) -> io::Result<PathBuf> {
    let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let written = file
        .write_all(contents.as_bytes())
        .and_then(|()| file.sync_all());
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// What every handler shares.
#[derive(Clone)]
struct ApiState {
    app: Arc<App>,
    token: ApiToken,
    /// Held while a sync started through the API runs: one at a time.
    syncing: Arc<tokio::sync::Mutex<()>>,
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
    async fn blocking<T, F>(&self, f: F) -> Result<Json<T>, ApiError>
    where
        F: FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
        T: Send + 'static,
    {
        let app = Arc::clone(&self.app);
        let result = match tokio::task::spawn_blocking(move || f(&app)).await {
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

fn router(state: ApiState) -> Router {
    let private = Router::new()
        .route("/api/search", get(search))
        .route("/api/timeline/{id}", get(timeline))
        .route("/api/context", get(context_of))
        .route("/api/stats", get(stats))
        .route("/api/status", get(status))
        .route("/api/sync", post(sync_now))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .route("/api/health", get(health))
        .merge(private)
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// An error answer: `{"error": message, "code": code}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(json!({ "error": self.message, "code": self.code }));
        let mut response = (self.status, body).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"solaria\""),
            );
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::NotFound(id) => ApiError::not_found(format!(
                "no record with id {id:?} (ids come from /api/search or a timeline)"
            )),
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        ApiError::internal(format!("{e:#}"))
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> ApiError {
        ApiError::bad_request(format!("{} (see docs/LOCAL_API.md)", e.body_text()))
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

/// At most 60 characters of what a client sent, for an error message.
fn clip(text: &str) -> String {
    text.chars().take(60).collect()
}

/// A parameter as given: absent and empty are the same.
fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// A whole-number parameter within `range`, `default` when absent.
fn bounded(
    name: &str,
    value: Option<String>,
    default: usize,
    range: RangeInclusive<usize>,
) -> Result<usize, ApiError> {
    let Some(text) = given(value) else {
        return Ok(default);
    };
    match text.trim().parse::<usize>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(ApiError::bad_request(format!(
            "`{name}` must be a whole number from {} to {}, not {:?}",
            range.start(),
            range.end(),
            clip(&text)
        ))),
    }
}

async fn require_token(State(s): State<ApiState>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().ok().and_then(bearer));
    let problem = match presented {
        Some(Some(token)) if s.token.matches(token) => return next.run(request).await,
        None => "no bearer token",
        Some(None) => "the Authorization header is not `Bearer TOKEN`",
        Some(Some(_)) => "wrong bearer token",
    };
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        format!(
            "{problem}: send `Authorization: Bearer TOKEN`, TOKEN being the content of the \
             `{TOKEN_FILE}` file in SOLARIA's data dir (see docs/LOCAL_API.md)"
        ),
    )
    .into_response()
}

/// The token of an `Authorization: Bearer TOKEN` header value.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found(format!(
        "no endpoint {method} {} (see docs/LOCAL_API.md)",
        clip(uri.path())
    ))
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{method} is not allowed on {} (see docs/LOCAL_API.md)",
            clip(uri.path())
        ),
    )
}

/// `GET /api/health`: whether the API answers. No token needed, nothing private.
async fn health() -> Json<Value> {
    Json(json!({
        "status": "ok",
        "service": "solaria",
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// `GET /api/search` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchParams {
    q: Option<String>,
    mode: Option<String>,
    project: Option<String>,
    #[serde(rename = "type")]
    record_type: Option<String>,
    machine: Option<String>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<String>,
}

/// `GET /api/search`'s answer.
#[derive(Debug, Serialize)]
struct SearchAnswer {
    query: String,
    mode: SearchMode,
    hits: Vec<ApiHit>,
}

/// One hit: the store's, with its citation and its machine's name.
#[derive(Debug, Serialize)]
struct ApiHit {
    /// `[O#id]` for an observation, `[S#session]` for a session summary.
    cite: String,
    #[serde(flatten)]
    hit: Hit,
    machine_name: String,
}

async fn search(
    State(s): State<ApiState>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Result<Json<SearchAnswer>, ApiError> {
    let Query(p) = params?;
    s.blocking(move |app| search_json(app, p)).await
}

fn search_json(app: &App, p: SearchParams) -> Result<SearchAnswer, ApiError> {
    let text = given(p.q).ok_or_else(|| {
        ApiError::bad_request("`q` is required: the words to look for (/api/search?q=flaky+test)")
    })?;
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "`q` is too long: at most {MAX_QUERY_CHARS} characters"
        )));
    }
    let now = UnixMillis::now();
    let when = |name: &str, value: Option<String>| -> Result<Option<UnixMillis>, ApiError> {
        given(value)
            .map(|t| {
                timefmt::parse_when(&t, now)
                    .map_err(|e| ApiError::bad_request(format!("`{name}`: {e}")))
            })
            .transpose()
    };
    let record_type = given(p.record_type)
        .map(|t| t.parse::<RecordType>())
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("`type`: {}", clip(&e))))?;
    let mode = given(p.mode)
        .map(|m| m.parse::<SearchMode>())
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("`mode`: {}", clip(&e))))?;
    let query = SearchQuery {
        text,
        project: given(p.project),
        record_type,
        machine: given(p.machine),
        since: when("since", p.since)?,
        until: when("until", p.until)?,
        limit: bounded("limit", p.limit, 20, 1..=MAX_LIMIT)?,
        // The daemon has no current project: no project is favoured.
        current_project: None,
    };
    let store = app.store()?;
    let mode = match mode {
        Some(m) => m,
        None => semantic::live_mode(&app.config, &app.paths, &store)?,
    };
    let model = if mode == SearchMode::Lexical {
        None
    } else {
        let model = semantic::cached_model(&app.config, &app.paths)
            .map_err(|e| ApiError::internal(format!("cannot load the embedding model: {e}")))?;
        Some(model.ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "no_model",
                format!(
                    "{mode} search needs the embedding model, which is not installed in {}: \
                     run `solaria model install`, or search with mode=lexical",
                    semantic::model_dir(&app.config, &app.paths).display()
                ),
            )
        })?)
    };
    let (hits, mode) = semantic::search(
        &app.config,
        &app.paths,
        &store,
        &query,
        Some(mode),
        model.as_deref(),
    )?;
    let mut names: HashMap<String, String> = HashMap::new();
    let hits = hits
        .into_iter()
        .map(|hit| {
            let machine_name = names
                .entry(hit.machine_id.clone())
                .or_insert_with(|| match hit.machine_id.parse::<MachineId>() {
                    Ok(m) => records::machine_name(store.conn(), m),
                    Err(_) => hit.machine_id.clone(),
                })
                .clone();
            let cite = match hit.record_type {
                RecordType::Summary => format!("[S#{}]", hit.session_id),
                _ => format!("[O#{}]", hit.id),
            };
            ApiHit {
                cite,
                hit,
                machine_name,
            }
        })
        .collect();
    Ok(SearchAnswer {
        query: query.text,
        mode,
        hits,
    })
}

/// `GET /api/timeline/{id}` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowParams {
    before: Option<String>,
    after: Option<String>,
}

async fn timeline(
    State(s): State<ApiState>,
    id: Result<Path<String>, PathRejection>,
    params: Result<Query<WindowParams>, QueryRejection>,
) -> Result<Json<views::Timeline>, ApiError> {
    let Path(id) = id?;
    let Query(p) = params?;
    s.blocking(move |app| {
        let before = bounded("before", p.before, 5, 0..=MAX_WINDOW)?;
        let after = bounded("after", p.after, 5, 0..=MAX_WINDOW)?;
        let store = app.store()?;
        Ok(views::timeline(store.conn(), &id, before, after)?)
    })
    .await
}

/// `GET /api/context` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextParams {
    project: Option<String>,
}

/// `GET /api/context`'s answer.
#[derive(Debug, Serialize)]
struct ContextAnswer {
    project: Project,
    /// What SessionStart would inject; `None` when there is nothing to say.
    context: Option<String>,
    /// About how many tokens `context` costs.
    tokens: usize,
}

async fn context_of(
    State(s): State<ApiState>,
    params: Result<Query<ContextParams>, QueryRejection>,
) -> Result<Json<ContextAnswer>, ApiError> {
    let Query(p) = params?;
    s.blocking(move |app| {
        let name = given(p.project).ok_or_else(|| {
            ApiError::bad_request(
                "`project` is required: a project key or name (/api/context?project=api)",
            )
        })?;
        let store = app.store()?;
        let project = records::resolve_project(store.conn(), &name)?.ok_or_else(|| {
            ApiError::not_found(format!(
                "no project named {:?} in the memory (see /api/stats)",
                clip(&name)
            ))
        })?;
        let text = context::build(&store, &project, &app.config.context, UnixMillis::now())?;
        Ok(ContextAnswer {
            tokens: text.as_deref().map_or(0, context::estimate_tokens),
            project,
            context: text,
        })
    })
    .await
}

/// `GET /api/stats`: counts, the search status and the sync state (what
/// `solaria stats --json` and the MCP `memory_stats` tool report).
async fn stats(State(s): State<ApiState>) -> Result<Json<Value>, ApiError> {
    s.blocking(|app| {
        let store = app.store()?;
        let conn = store.conn();
        let me = store.machine_id();
        let stats = views::stats(conn, me)?;
        let creds = app.credentials()?;
        let store_bytes = ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("{}{s}", store.path().display())).ok())
            .map(|m| m.len())
            .sum::<u64>();
        let mut v = serde_json::to_value(&stats).map_err(anyhow::Error::from)?;
        v["data_dir"] = app.paths.data_dir.display().to_string().into();
        v["store_bytes"] = store_bytes.into();
        v["machine_id"] = me.to_string().into();
        v["machine_name"] = app.config.machine_name().into();
        v["search"] = serde_json::to_value(semantic::status(&app.config, &app.paths, &store)?)
            .map_err(anyhow::Error::from)?;
        v["sync"] = json!({
            "logged_in": creds.is_some(),
            "server": creds.map(|c| c.server).or_else(|| app.config.sync.server.clone()),
            "pending_push": stats.pending_push,
            "last_sync_at": store_sync::state(conn, "last_sync_at")?
                .and_then(|t| t.parse::<i64>().ok()),
            "last_sync_status": store_sync::state(conn, "last_sync_status")?,
            "last_sync_detail": store_sync::state(conn, "last_sync_detail")?,
        });
        Ok(v)
    })
    .await
}

/// `GET /api/status`: the sync state, as `solaria status --json` reports it.
async fn status(State(s): State<ApiState>) -> Result<Json<Value>, ApiError> {
    s.blocking(|app| {
        let store = app.store()?;
        let creds = app.credentials()?;
        let conn = store.conn();
        let pending = store_sync::pending_count(
            conn,
            store.machine_id(),
            store_sync::cursor(conn, PUSH_CURSOR_KEY)?,
        )?;
        let conflicts = store_sync::conflicts(conn, false)?.len();
        // The same reading as `solaria status` (edge/src/cli/status.rs): a sync
        // marked started after the last recorded outcome did not finish.
        let last_at: Option<i64> =
            store_sync::state(conn, "last_sync_at")?.and_then(|v| v.parse().ok());
        let started_at: Option<i64> =
            store_sync::state(conn, "last_sync_started_at")?.and_then(|v| v.parse().ok());
        let interrupted = started_at.is_some_and(|s| last_at.is_none_or(|l| s > l));
        let (last_at, last_status, detail) = if interrupted {
            (
                started_at,
                Some("interrupted".to_string()),
                Some(
                    "started but did not finish (killed or crashed); POST /api/sync to resume"
                        .to_string(),
                ),
            )
        } else {
            (
                last_at,
                store_sync::state(conn, "last_sync_status")?,
                store_sync::state(conn, "last_sync_detail")?,
            )
        };
        Ok(json!({
            "server": creds.map(|c| c.server),
            "machine_id": store.machine_id().to_string(),
            "machine_name": app.config.machine_name(),
            "last_sync_at": last_at,
            "last_sync_status": last_status,
            "last_sync_detail": detail,
            "pending": pending,
            "conflicts": conflicts,
        }))
    })
    .await
}

/// `POST /api/sync`'s answer: the server and what moved.
#[derive(Debug, Serialize)]
struct SyncAnswer {
    server: String,
    #[serde(flatten)]
    report: SyncReport,
}

/// `POST /api/sync`: push and pull now, like `solaria sync`.
async fn sync_now(State(s): State<ApiState>) -> Result<Json<SyncAnswer>, ApiError> {
    let Ok(running) = Arc::clone(&s.syncing).try_lock_owned() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "sync_running",
            "a sync started through this API is still running: wait for its answer",
        ));
    };
    let log = Arc::clone(&s.log);
    s.blocking(move |app| {
        let _running = running;
        sync_json(app, &*log)
    })
    .await
}

fn sync_json(app: &App, log: &dyn Fn(&str)) -> Result<SyncAnswer, ApiError> {
    let creds = app.credentials()?.ok_or_else(|| {
        ApiError::new(
            StatusCode::CONFLICT,
            "not_logged_in",
            SyncError::NotLoggedIn.to_string(),
        )
    })?;
    let mut store = app.store()?;
    // Marked first, as `solaria sync` does: a sync killed before it records its
    // outcome shows as interrupted in the status.
    let started = UnixMillis::now().0.to_string();
    store.write(|w| w.set_state("last_sync_started_at", &started))?;
    let options = SyncOptions {
        deadline: SYNC_DEADLINE,
        kind: "manual",
        local_only: app.config.sync.local_only_projects.clone(),
    };
    let outcome = sync::run(&mut store, &creds, &options, |_| {});
    sync::record_outcome(&mut store, &outcome)?;
    let report = outcome.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "sync_failed",
            format!("sync with {} failed: {e}", creds.server),
        )
    })?;
    log(&format!(
        "sync (local API): pushed {}, pulled {}, conflicts {}",
        report.pushed, report.pulled, report.conflicts
    ));
    Ok(SyncAnswer {
        server: creds.server,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_compared_whole() {
        let token = ApiToken::generate();
        let text = token.0.to_string();
        assert_eq!(text.len(), 64);
        assert!(token.matches(&text));
        assert!(!token.matches(&text[..63]));
        assert!(!token.matches(&format!("{text}0")));
        assert!(!token.matches(""));
        let mut other = text.into_bytes();
        other[0] = if other[0] == b'a' { b'b' } else { b'a' };
        assert!(!token.matches(&String::from_utf8(other).expect("ascii")));
        assert_eq!(format!("{token:?}"), "ApiToken(<hidden>)");
    }

    #[test]
    fn only_a_bearer_header_carries_a_token() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer"), None);
        assert_eq!(bearer("Bearer "), None);
    }

    #[test]
    fn the_token_file_is_created_private_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create_token(dir.path(), &|_| {}).expect("created");
        let path = token_path(dir.path());
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = load_or_create_token(dir.path(), &|_| {}).expect("read");
        assert!(again.matches(&first.0));
        let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn a_token_file_others_can_read_or_a_broken_one_is_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = token_path(dir.path());
        let first = load_or_create_token(dir.path(), &|_| {}).expect("created");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let said = std::sync::Mutex::new(Vec::new());
        let log = |m: &str| said.lock().expect("lock").push(m.to_string());
        let second = load_or_create_token(dir.path(), &log).expect("replaced");
        assert!(
            !second.matches(&first.0),
            "a token others could read is retired"
        );
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);

        std::fs::write(&path, "short\n").expect("write");
        let third = load_or_create_token(dir.path(), &log).expect("replaced");
        assert!(!third.matches("short"));
        let said = said.lock().expect("lock");
        assert!(said.iter().any(|m| m.contains("other users")), "{said:?}");
        assert!(
            said.iter().any(|m| m.contains("no valid token")),
            "{said:?}"
        );
        assert!(
            said.iter()
                .all(|m| !m.contains(&*second.0) && !m.contains(&*third.0)),
            "a token is never logged"
        );
    }

    #[test]
    fn numbers_out_of_bounds_are_refused() {
        assert_eq!(bounded("limit", None, 20, 1..=100).expect("default"), 20);
        assert_eq!(
            bounded("limit", Some("100".into()), 20, 1..=100).expect("max"),
            100
        );
        for bad in ["0", "101", "-1", "ten", "1e3"] {
            let e = bounded("limit", Some(bad.into()), 20, 1..=100).expect_err(bad);
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
            assert!(e.message.contains("`limit`"), "{}", e.message);
        }
    }
}
