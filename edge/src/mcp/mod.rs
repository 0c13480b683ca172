//! `solaria mcp`: the edge's MCP server over stdio, built on `rmcp`.
//!
//! Each tool opens the store for its call and runs on Tokio's blocking pool (SQLite
//! and the sync client are synchronous). Every line a tool returns cites its source
//! (`[O#id]`, `[S#session]`, time, machine) so the agent answers with evidence.
//! Failures a caller can fix (bad arguments, unknown ids, no server) are tool
//! errors (`isError: true`) with a clear message; the server never dies of them.
//!
//! The read tools take the arguments the central service's `/mcp` takes
//! (`solaria_shared::mcp`) and answer in the same layout (`solaria_shared::render`),
//! in this machine's local time.

mod knowledge;

use crate::app::App;
use crate::ops::records::{DEFAULT_WINDOW, TimelineRequest};
use crate::ops::search::{DEFAULT_LIMIT, Model, SearchRequest};
use crate::ops::{self, OpError, input};
use crate::present::Reader;
use crate::semantic::ModelSource;
use crate::store::search::SearchQuery;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, InitializeRequestParams, InitializeResult,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router,
};
use solaria_shared::UnixMillis;
use solaria_shared::knowledge::WrittenBy;
use solaria_shared::mcp::{ContextParams, GetObservationsParams, SearchParams, TimelineParams};
use solaria_shared::render::DataBlock;
use std::sync::{Arc, OnceLock};

/// What the server tells the agent at `initialize`.
const INSTRUCTIONS: &str = "SOLARIA Memory: what was done in past coding sessions on this machine \
(prompts, tool uses, session summaries) and what was decided and learnt (decisions with their rationale, \
commits, iterations, curated memories). For history, work in three steps, cheapest first: \
1) memory_search with a few keywords gives a compact index, one line per record with its id; \
2) memory_timeline on an interesting id shows what happened around it in its session; \
3) memory_get_observations fetches the full records you need, by id. \
For \"why is it like this?\", ask memory_why first: decisions and memories with their rationale and the commits \
that implement them. When you choose between alternatives for a reason, record it with memory_log_decision. \
Cite what you use by its tag ([O#id], [S#session], [D#id], [M#id], [C#sha], [I#id], [E#id]), time and machine; \
answer from the records, not by guessing.";

/// The longest a string of `memory_stats` is shown (a path, a server's line).
const STATS_FIELD_CHARS: usize = 500;

/// Runs the MCP server on stdin/stdout until the client closes the connection.
pub fn serve(app: App) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError(e.to_string()))?;
    runtime.block_on(async move {
        let service = Memory::new(app)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServeError(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| ServeError(e.to_string()))?;
        Ok(())
    })
}

/// The MCP server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[error("the MCP server failed: {0}")]
pub struct ServeError(String);

/// The MCP server: the edge's configuration and its tools.
#[derive(Debug, Clone)]
pub struct Memory {
    app: Arc<App>,
    /// The client's name from `initialize` (`claude-code`, `opencode`…): what it
    /// writes is attributed to it.
    client: Arc<OnceLock<String>>,
    tool_router: ToolRouter<Memory>,
}

#[tool_router]
impl Memory {
    /// A server over the memory of `app`.
    pub fn new(app: App) -> Memory {
        Memory {
            app: Arc::new(app),
            client: Arc::new(OnceLock::new()),
            tool_router: Self::tool_router() + Self::knowledge_router(),
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
        description = "The context SOLARIA injects at session start for a project: its standing decisions, \
principles and open questions, its active iteration, its recent sessions (summary or first prompt), and notable \
events (errors with what came next, commits), newest first, each citable by id. Defaults to the current project. \
For anything specific, use memory_search instead."
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
        self.blocking(|app| {
            let report = ops::status::stats(app)?;
            // Its strings come from the store, the configuration and the server
            // (the search capability, a sync's error): each is a field like any other.
            let value = serde_json::to_value(&report).unwrap_or_default();
            let shown = solaria_shared::render::sanitize::json(&value, STATS_FIELD_CHARS);
            let json = serde_json::to_string_pretty(&shown).unwrap_or_default();
            Ok(DataBlock::new().wrap("the memory's counts and state, as JSON", &json))
        })
        .await
    }

    #[tool(
        description = "Sync with the central service now: push this machine's changes and pull the other \
machines' (like `solaria sync`), then report what moved. Fails with a clear message when this machine is not \
logged in or the server cannot be reached. Takes up to 2 minutes."
    )]
    async fn memory_sync_remote(&self) -> Result<CallToolResult, McpError> {
        self.blocking(|app| Ok(ops::sync::sync_now(app, |_| {})?.text()))
            .await
    }

    #[tool(
        description = "Search the central service: the memory of every machine of the account, including \
records this machine has not pulled yet, by words only (`mode` lexical). Same compact index as memory_search \
(citation, time, title, project, machine) and the same filters (project, type, machine, since, until); fetch \
full records after a memory_sync_remote with memory_get_observations. Fails with a clear message when this \
machine is not logged in or the server cannot be reached."
    )]
    async fn memory_search_remote(
        &self,
        Parameters(p): Parameters<SearchParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| remote_search_text(app, p)).await
    }

    #[tool(
        description = "Fill this machine with the account's whole memory from the central service (every \
record of every machine, deletions included), then report what moved. For a new or reinstalled machine. \
Takes up to 2 minutes; run it again to continue a large restore."
    )]
    async fn memory_restore(&self) -> Result<CallToolResult, McpError> {
        self.blocking(|app| Ok(ops::sync::restore(app, |_| {})?.text()))
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

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let _ = self.client.set(request.client_info.name.clone());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }
}

impl Memory {
    /// The context of a tool call: whatever it writes is the agent's (by the
    /// client's name), never a person's, and it writes only into its session's
    /// project (`ops::knowledge`).
    fn agent_app(&self) -> App {
        let mut app = (*self.app).clone();
        app.writer = WrittenBy::Agent(self.client.get().cloned().unwrap_or_default());
        app
    }

    /// Runs `f` on the blocking pool; its error (or panic) becomes a tool error.
    async fn blocking<F>(&self, f: F) -> Result<CallToolResult, McpError>
    where
        F: FnOnce(&App) -> Result<String, OpError> + Send + 'static,
    {
        let app = self.agent_app();
        let result = tokio::task::spawn_blocking(move || f(&app)).await;
        Ok(match result {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok(Err(e)) => CallToolResult::error(vec![ContentBlock::text(error_text(&e))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool failed unexpectedly: {e}"
            ))]),
        })
    }
}

/// A tool error as the agent reads it: what went wrong and where to look next.
fn error_text(e: &OpError) -> String {
    match e {
        OpError::NotFound(ids) => solaria_shared::mcp::not_found(ids),
        OpError::UnknownProject { .. } => format!("{e} (see memory_stats)"),
        other => other.to_string(),
    }
}

fn search_text(app: &App, p: SearchParams) -> Result<String, OpError> {
    let now = UnixMillis::now();
    let request = SearchRequest {
        query: SearchQuery {
            text: p.query,
            project: input::given(p.project),
            record_type: input::parsed("type", p.record_type)?,
            machine: input::given(p.machine),
            since: input::when("since", p.since, now)?,
            until: input::when("until", p.until, now)?,
            limit: p.limit.unwrap_or(DEFAULT_LIMIT),
            current_project: Some(app.current_project().key),
        },
        mode: input::parsed("mode", p.mode)?,
    };
    Ok(ops::search::search(app, &request, Model::Kept)?.text(Reader::Agent))
}

fn timeline_text(app: &App, p: TimelineParams) -> Result<String, OpError> {
    let request = TimelineRequest {
        id: p.id,
        before: p.before.unwrap_or(DEFAULT_WINDOW),
        after: p.after.unwrap_or(DEFAULT_WINDOW),
        kind: input::parsed("type", p.record_type)?,
    };
    Ok(ops::records::timeline(app, &request)?.text(Reader::Agent))
}

fn observations_text(app: &App, p: GetObservationsParams) -> Result<String, OpError> {
    let page = ops::records::get(app, &p.ids)?;
    let mut out = page.text(Reader::Agent);
    if !page.missing.is_empty() {
        out.push_str(&solaria_shared::mcp::not_found(&page.missing));
        out.push('\n');
    }
    Ok(out)
}

fn context_text(app: &App, p: ContextParams) -> Result<String, OpError> {
    Ok(ops::context::context_of(app, input::given(p.project).as_deref())?.text())
}

fn remote_search_text(app: &App, p: SearchParams) -> Result<String, OpError> {
    let mode = solaria_shared::mcp::search_mode(p.mode.as_deref()).map_err(OpError::BadInput)?;
    let now = UnixMillis::now();
    let query = SearchQuery {
        text: p.query,
        project: input::given(p.project),
        record_type: input::parsed("type", p.record_type)?,
        machine: input::given(p.machine),
        since: input::when("since", p.since, now)?,
        until: input::when("until", p.until, now)?,
        limit: p.limit.unwrap_or(DEFAULT_LIMIT),
        current_project: Some(app.current_project().key),
    };
    Ok(ops::remote::search(app, &query, mode, ModelSource::Cached)?.text(Reader::Agent))
}
