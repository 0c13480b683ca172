//! `solaria mcp`: the edge's MCP server over stdio (SPEC §7), built on `rmcp`.
//!
//! Each tool opens the store for its call and runs on Tokio's blocking pool (SQLite
//! and the sync client are synchronous). Every line a tool returns cites its source
//! (`[O#id]`, `[S#session]`, time, machine) so the agent answers with evidence.
//! Failures a caller can fix (bad arguments, unknown ids, no server) are tool
//! errors (`isError: true`) with a clear message; the server never dies of them.

use crate::cli::App;
use crate::context;
use crate::present::{self, MachineNames, Reader};
use crate::semantic;
use crate::store::hybrid::SearchMode;
use crate::store::records;
use crate::store::search::{RecordType, SearchQuery};
use crate::store::sync as store_sync;
use crate::store::views::{self, AnyRecord};
use crate::store::{Store, StoreError};
use crate::sync::{self, SyncError};
use crate::timefmt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use solaria_shared::{Observation, UnixMillis};
use std::sync::Arc;

/// The most results a search returns.
const MAX_LIMIT: usize = 100;
/// The most events shown on either side of a timeline's anchor.
const MAX_WINDOW: usize = 50;
/// The most records fetched in one `memory_get_observations` call.
const MAX_IDS: usize = 50;

/// What the server tells the agent at `initialize`.
const INSTRUCTIONS: &str = "SOLARIA Memory: what was done in past coding sessions on this machine \
(prompts, tool uses, session summaries). Work in three steps, cheapest first: \
1) memory_search with a few keywords gives a compact index, one line per record with its id; \
2) memory_timeline on an interesting id shows what happened around it in its session; \
3) memory_get_observations fetches the full records you need, by id. \
Cite what you use by its [O#id] / [S#session] tag, time and machine; answer from the records, not by guessing.";

/// Runs the MCP server on stdin/stdout until the client closes the connection.
pub fn serve(app: App) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let service = Memory::new(app)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("cannot start the MCP server: {e}"))?;
        service.waiting().await?;
        Ok(())
    })
}

/// `memory_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchParams {
    /// What to look for: a few keywords. Any text is valid (operators and punctuation are searched as text).
    pub query: String,
    /// Only this project (its key, e.g. `github.com/acme/api`, or its name).
    #[serde(default)]
    pub project: Option<String>,
    /// Only this type: `tool_use`, `prompt`, `note` or `summary`.
    #[serde(default, rename = "type")]
    pub record_type: Option<String>,
    /// Only records written by this machine (its name or id).
    #[serde(default)]
    pub machine: Option<String>,
    /// Only records since: `2026-11-01`, `2026-11-01T10:00`, or a span back from now (`30m`, `12h`, `7d`, `2w`).
    #[serde(default)]
    pub since: Option<String>,
    /// Only records before (same forms as `since`).
    #[serde(default)]
    pub until: Option<String>,
    /// Most results (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
    /// `lexical` (words), `semantic` (meaning: finds paraphrases and other languages) or `hybrid` (both).
    /// Default: hybrid when this machine has the embedding model and vectors, lexical otherwise.
    #[serde(default)]
    pub mode: Option<String>,
}

/// `memory_timeline` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TimelineParams {
    /// An observation, session or summary id, or a citation as printed (`[O#…]`, `[S#…]`).
    pub id: String,
    /// Events shown before the anchor (default 5, at most 50).
    #[serde(default)]
    pub before: Option<usize>,
    /// Events shown after the anchor (default 5, at most 50).
    #[serde(default)]
    pub after: Option<usize>,
}

/// `memory_get_observations` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetObservationsParams {
    /// Record ids or citations from memory_search / memory_timeline (at most 50).
    pub ids: Vec<String>,
}

/// `memory_get_context` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextParams {
    /// The project (key or name); defaults to the project of the server's working directory.
    #[serde(default)]
    pub project: Option<String>,
}

/// `memory_search_remote` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RemoteSearchParams {
    /// What to look for, across every machine of the account (English or Spanish).
    pub query: String,
    /// Only this project (its key or name).
    #[serde(default)]
    pub project: Option<String>,
    /// Only records written by this machine (its name or id).
    #[serde(default)]
    pub machine: Option<String>,
    /// Most results (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// The MCP server: the edge's configuration and its tools.
#[derive(Debug, Clone)]
pub struct Memory {
    app: Arc<App>,
    tool_router: ToolRouter<Memory>,
}

#[tool_router]
impl Memory {
    /// A server over the memory of `app`.
    pub fn new(app: App) -> Memory {
        Memory {
            app: Arc::new(app),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Step 1 of 3. Search this machine's memory of past coding sessions (prompts, tool uses, \
session summaries). Returns a compact index, one line per record: its citation ([O#id] for an observation, \
[S#session] for a session summary), time, type, title, ~tokens to read it in full, project and machine. \
Then call memory_timeline on an id to see what happened around it, and memory_get_observations for full records."
    )]
    async fn memory_search(
        &self,
        Parameters(p): Parameters<SearchParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| search_text(app, p)).await
    }

    #[tool(
        description = "Step 2 of 3. What happened around a record: its session (project, directory, machine, \
start and end), the session summary, and the events just before and after it, each cited by [O#id] with time \
and machine; the anchor is marked with `>`. Takes an id or citation from memory_search. Then fetch the full \
records you need with memory_get_observations."
    )]
    async fn memory_timeline(
        &self,
        Parameters(p): Parameters<TimelineParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| timeline_text(app, p)).await
    }

    #[tool(
        description = "Step 3 of 3. Full records by id (observations, sessions or summaries, ids or citations \
from memory_search / memory_timeline): tool input and response, files, metadata, time, machine, project and \
session. Fetch only the ids you need; unknown ids are reported as such."
    )]
    async fn memory_get_observations(
        &self,
        Parameters(p): Parameters<GetObservationsParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| observations_text(app, p)).await
    }

    #[tool(
        description = "The context SOLARIA injects at session start for a project: its recent session summaries \
and observations, newest first, each citable by id. Defaults to the current project. For anything specific, \
use memory_search instead."
    )]
    async fn memory_get_context(
        &self,
        Parameters(p): Parameters<ContextParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| context_text(app, p)).await
    }

    #[tool(
        description = "Counts and facts about the local memory (sessions, observations by kind, summaries, \
projects, machines, time span), the data directory, the sync state (logged in? server, changes not yet pushed, \
last sync) and the search modes available."
    )]
    async fn memory_stats(&self) -> Result<CallToolResult, McpError> {
        self.blocking(stats_text).await
    }

    #[tool(
        description = "Sync with the central service now: push this machine's changes and pull the other \
machines' (like `solaria sync`), then report what moved. Fails with a clear message when this machine is not \
logged in or the server cannot be reached. Takes up to 2 minutes."
    )]
    async fn memory_sync_remote(&self) -> Result<CallToolResult, McpError> {
        self.blocking(sync_text).await
    }

    #[tool(
        description = "Search the central service: the memory of every machine of the account, including \
records this machine has not pulled yet. Same compact index as memory_search (citation, time, title, project, \
machine); fetch full records after a memory_sync_remote with memory_get_observations. Fails with a clear \
message when this machine is not logged in or the server cannot be reached."
    )]
    async fn memory_search_remote(
        &self,
        Parameters(p): Parameters<RemoteSearchParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| remote_search_text(app, p)).await
    }

    #[tool(
        description = "Fill this machine with the account's whole memory from the central service (every \
record of every machine, deletions included), then report what moved. For a new or reinstalled machine. \
Takes up to 2 minutes; run it again to continue a large restore."
    )]
    async fn memory_restore(&self) -> Result<CallToolResult, McpError> {
        self.blocking(|app| {
            app.credentials()?.ok_or(SyncError::NotLoggedIn)?;
            let mut store = app.store()?;
            store.write(|w| w.set_state(crate::store::sync::PULL_CURSOR_KEY, "0"))?;
            drop(store);
            sync_text(app)
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Memory {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("solaria", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

impl Memory {
    /// Runs `f` on the blocking pool; its error (or panic) becomes a tool error.
    async fn blocking<F>(&self, f: F) -> Result<CallToolResult, McpError>
    where
        F: FnOnce(&App) -> anyhow::Result<String> + Send + 'static,
    {
        let app = Arc::clone(&self.app);
        let result = tokio::task::spawn_blocking(move || f(&app)).await;
        Ok(match result {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok(Err(e)) => CallToolResult::error(vec![ContentBlock::text(format!("{e:#}"))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool failed unexpectedly: {e}"
            ))]),
        })
    }
}

fn search_text(app: &App, p: SearchParams) -> anyhow::Result<String> {
    let now = UnixMillis::now();
    let when = |name: &str, t: &Option<String>| -> anyhow::Result<Option<UnixMillis>> {
        t.as_deref()
            .map(|t| timefmt::parse_when(t, now).map_err(|e| anyhow::anyhow!("`{name}`: {e}")))
            .transpose()
    };
    let record_type = p
        .record_type
        .as_deref()
        .map(str::parse::<RecordType>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("`type`: {e}"))?;
    let limit = p.limit.unwrap_or(20);
    if limit == 0 || limit > MAX_LIMIT {
        anyhow::bail!("`limit` must be between 1 and {MAX_LIMIT}, not {limit}");
    }
    let query = SearchQuery {
        text: p.query,
        project: p.project,
        record_type,
        machine: p.machine,
        since: when("since", &p.since)?,
        until: when("until", &p.until)?,
        limit,
        current_project: Some(app.current_project().key),
    };
    let mode = p
        .mode
        .as_deref()
        .map(str::parse::<SearchMode>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("`mode`: {e}"))?;
    let store = app.store()?;
    let searched = semantic::search(
        &app.config,
        &app.paths,
        &store,
        &query,
        mode,
        semantic::ModelSource::Cached,
    )?;
    let (hits, mode) = (searched.hits, searched.mode);
    let note = searched
        .fell_back
        .map(|why| format!("\nNote: {why}"))
        .unwrap_or_default();
    if hits.is_empty() {
        return Ok(format!(
            "No matches for {:?} ({mode} search). Try other or fewer keywords, or drop a filter.{note}",
            query.text
        ));
    }
    let mut machines = MachineNames::new(store.conn(), store.machine_id());
    let mut out = String::new();
    for hit in &hits {
        out.push_str(&present::index_line(hit, Reader::Agent, &mut machines));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&present::results_footer(
        hits.len(),
        mode,
        "memory_timeline ID",
        "memory_get_observations [ID…]",
    ));
    out.push_str(&note);
    Ok(out)
}

fn timeline_text(app: &App, p: TimelineParams) -> anyhow::Result<String> {
    let before = p.before.unwrap_or(5);
    let after = p.after.unwrap_or(5);
    if before > MAX_WINDOW || after > MAX_WINDOW {
        anyhow::bail!("`before` and `after` must be at most {MAX_WINDOW}");
    }
    let store = app.store()?;
    let t = match views::timeline(store.conn(), &p.id, before, after) {
        Err(StoreError::NotFound(id)) => anyhow::bail!(not_found(&id)),
        other => other?,
    };
    let mut machines = MachineNames::new(store.conn(), store.machine_id());
    let s = &t.session;
    let mut out = format!(
        "[S#{}] {} session in {} ({}) on @{}, started {}{}\n",
        s.id,
        s.agent,
        s.project.name,
        s.cwd,
        machines.name(s.meta.machine_id),
        timefmt::full(s.started_at),
        s.ended_at
            .map(|e| format!(", ended {}", timefmt::full(e)))
            .unwrap_or_default()
    );
    if let Some(summary) = &t.summary {
        out.push_str(&format!("  summary: {}\n", summary.text));
    }
    if t.hidden_before > 0 {
        out.push_str(&format!("  … {} earlier event(s)\n", t.hidden_before));
    }
    for o in &t.entries {
        let here = if t.anchor.as_deref() == Some(&o.id.to_string()) {
            ">"
        } else {
            " "
        };
        let err = if o.metadata.get("error").and_then(|v| v.as_bool()) == Some(true) {
            "  [error]"
        } else {
            ""
        };
        out.push_str(&format!(
            "{here} [O#{}] {} {:<8} {}{err} @{}\n",
            o.id,
            timefmt::full(o.created_at),
            o.kind.as_str(),
            o.title,
            machines.name(o.meta.machine_id),
        ));
    }
    if t.hidden_after > 0 {
        out.push_str(&format!("  … {} later event(s)\n", t.hidden_after));
    }
    Ok(out)
}

fn not_found(id: &str) -> String {
    format!("no record with id {id:?} (ids come from memory_search or memory_timeline)")
}

fn observations_text(app: &App, p: GetObservationsParams) -> anyhow::Result<String> {
    if p.ids.is_empty() {
        anyhow::bail!("`ids` is empty: give the ids (or citations) of the records to fetch");
    }
    if p.ids.len() > MAX_IDS {
        anyhow::bail!("{} ids asked for, at most {MAX_IDS} per call", p.ids.len());
    }
    let store = app.store()?;
    let mut machines = MachineNames::new(store.conn(), store.machine_id());
    let mut out = String::new();
    let mut missing = Vec::new();
    for id in &p.ids {
        match views::resolve(store.conn(), id) {
            Ok(r) => {
                render_record(&store, &r, &mut machines, &mut out);
                out.push('\n');
            }
            Err(StoreError::NotFound(_)) => missing.push(id.as_str()),
            Err(e) => return Err(e.into()),
        }
    }
    for id in &missing {
        out.push_str(&not_found(id));
        out.push('\n');
    }
    if missing.len() == p.ids.len() {
        anyhow::bail!(out.trim_end().to_string());
    }
    Ok(out)
}

fn render_record(store: &Store, r: &AnyRecord, machines: &mut MachineNames<'_>, out: &mut String) {
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    match r {
        AnyRecord::Observation(o) => render_observation(o, machines, &mut line),
        AnyRecord::Session(s) => {
            line(format!("[S#{}] {} session ({})", s.id, s.agent, s.source));
            line(format!(
                "  project: {} ({})   cwd: {}   machine: @{}",
                s.project.name,
                s.project.key,
                s.cwd,
                machines.name(s.meta.machine_id)
            ));
            line(format!(
                "  started: {}   ended: {}",
                timefmt::full(s.started_at),
                s.ended_at.map(timefmt::full).unwrap_or_else(|| "-".into())
            ));
            if let Ok(Some(summary)) = records::summary_of_session(store.conn(), s.id) {
                for point in &summary.key_points {
                    line(format!("  - {point}"));
                }
            }
        }
        AnyRecord::Summary(s) => {
            line(format!(
                "[S#{}] summary of {} observations, written {} on @{}",
                s.session_id,
                s.observation_count,
                timefmt::full(s.created_at),
                machines.name(s.meta.machine_id)
            ));
            line(format!("  summary id: {}", s.id));
            for point in &s.key_points {
                line(format!("  - {point}"));
            }
        }
    }
}

fn render_observation(
    o: &Observation,
    machines: &mut MachineNames<'_>,
    line: &mut impl FnMut(String),
) {
    line(format!("[O#{}] {} {}", o.id, o.kind, o.title));
    line(format!(
        "  when: {}   machine: @{}   project: {} ({})",
        timefmt::full(o.created_at),
        machines.name(o.meta.machine_id),
        o.project.name,
        o.project.key
    ));
    line(format!("  session: [S#{}]", o.session_id));
    if o.meta.deleted {
        line("  (forgotten: content erased)".into());
        return;
    }
    if let Some(tool) = &o.tool_name {
        line(format!("  tool: {tool}"));
    }
    if !o.files.is_empty() {
        line(format!("  files: {}", o.files.join(", ")));
    }
    if !o.tags.is_empty() {
        line(format!("  tags: {}", o.tags.join(", ")));
    }
    line(format!("  metadata: {}", o.metadata));
    line(format!("--- input\n{}", pretty(&o.input)));
    if !o.response.is_empty() {
        line(format!("--- response\n{}", pretty(&o.response)));
    }
}

/// Pretty-prints JSON text; other text is shown as it is.
fn pretty(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| match v {
            serde_json::Value::String(s) => Some(s),
            other => serde_json::to_string_pretty(&other).ok(),
        })
        .unwrap_or_else(|| text.to_string())
}

fn context_text(app: &App, p: ContextParams) -> anyhow::Result<String> {
    let store = app.store()?;
    let project = match p.project {
        None => app.current_project(),
        Some(name) => records::resolve_project(store.conn(), &name)?.ok_or_else(|| {
            anyhow::anyhow!("no project named {name:?} in the memory (see memory_stats)")
        })?,
    };
    Ok(
        match context::build(&store, &project, &app.config.context, UnixMillis::now())? {
            Some(text) => text,
            None => format!(
                "No memory yet for project {} ({}).",
                project.name, project.key
            ),
        },
    )
}

fn stats_text(app: &App) -> anyhow::Result<String> {
    let store = app.store()?;
    let conn = store.conn();
    let me = store.machine_id();
    let stats = views::stats(conn, me)?;
    let creds = app.credentials()?;
    let search = semantic::status(&app.config, &app.paths, &store)?;
    let mut v = present::stats_json(&stats, &app.paths.data_dir, me, &search)?;
    v["machine_name"] = app.config.machine_name().into();
    v["sync"] = serde_json::json!({
        "logged_in": creds.is_some(),
        "server": creds.map(|c| c.server).or_else(|| app.config.sync.server.clone()),
        "pending_push": stats.pending_push,
        "last_sync_at": store_sync::state(conn, "last_sync_at")?
            .and_then(|t| t.parse().ok())
            .map(|t| timefmt::full(UnixMillis(t))),
        "last_sync_status": store_sync::state(conn, "last_sync_status")?,
        "last_sync_detail": store_sync::state(conn, "last_sync_detail")?,
    });
    Ok(serde_json::to_string_pretty(&v)?)
}

fn sync_text(app: &App) -> anyhow::Result<String> {
    let creds = app.credentials()?.ok_or(SyncError::NotLoggedIn)?;
    let mut store = app.store()?;
    let local_only = app.config.sync.local_only_projects.clone();
    let report = sync::run_manual(&mut store, &creds, local_only, |_| {})?
        .map_err(|e| anyhow::anyhow!("sync with {} failed: {e}", creds.server))?;
    let mut out = format!(
        "Synced with {}: pushed {}, pulled {}, conflicts {}, in {:.1} s.",
        creds.server,
        report.pushed,
        report.pulled,
        report.conflicts,
        report.duration_ms as f64 / 1000.0
    );
    if report.conflicts > 0 {
        out.push_str(
            "\nSome local changes lost to newer versions from other machines: see `solaria conflicts`.",
        );
    }
    for r in &report.rejected {
        out.push_str(&format!("\nrefused by the server: {r}"));
    }
    Ok(out)
}

fn remote_search_text(app: &App, p: RemoteSearchParams) -> anyhow::Result<String> {
    let creds = app.credentials()?.ok_or(SyncError::NotLoggedIn)?;
    if p.query.trim().is_empty() {
        anyhow::bail!("`query` is empty: give a few keywords");
    }
    let limit = p.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        anyhow::bail!("`limit` must be between 1 and 100");
    }
    let client = crate::sync::client::Client::new(&creds.server, creds.ca_cert.as_deref())?;
    let jwt = client.token(&creds)?;
    let mut params: Vec<(&str, String)> = vec![("q", p.query), ("limit", limit.to_string())];
    if let Some(project) = p.project {
        params.push(("project", project));
    }
    if let Some(machine) = p.machine {
        params.push(("machine", machine));
    }
    let answer = client
        .search(&jwt, &params)
        .map_err(|e| anyhow::anyhow!("search on {} failed: {e}", creds.server))?;
    if answer.hits.is_empty() {
        return Ok(present::no_remote_matches(&creds.server, &answer.query));
    }
    let lines: Vec<String> = answer
        .hits
        .iter()
        .map(|h| present::remote_line(h, Reader::Agent))
        .collect();
    Ok(format!(
        "{}\n\n{} result(s) from {} (every machine of the account).",
        lines.join("\n"),
        lines.len(),
        creds.server
    ))
}
