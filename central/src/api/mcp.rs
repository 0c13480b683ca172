//! `/mcp`: the central MCP server over streamable HTTP, built on `rmcp`.
//!
//! Every request to `/mcp` is authenticated first by [`authenticate`], an axum
//! middleware running the checks of every `/memory` route (the [`Caller`] extractor:
//! bearer JWT signature and expiry, revocation, rate limit); a refusal answers the
//! same JSON error, before rmcp sees the request. The accepted [`Caller`] goes into the
//! request's extensions, which rmcp hands to the tool handlers with the HTTP request
//! parts: each tool call is scoped to the account of the token of its own request.
//!
//! The tools take the arguments an edge's `solaria mcp` takes for the same names
//! (`solaria_shared::mcp`), run the operations of `crate::ops` that the `/memory`
//! query handlers run (same validation, same SQL, same account scoping), and answer
//! through the renderer the edge uses (`solaria_shared::render`, an agent reading UTC):
//! a tool name gives the same layout on both servers, every field sanitized, the
//! records inside one data block, every line citing its source with its time and
//! zone and its machine. An argument this server cannot honour is a tool error
//! naming it. Another account's ids read exactly like unknown ones: "not found".
//!
//! The server is stateless (no MCP sessions): any replica answers any request, like
//! the rest of the API.

use super::error::ApiError;
use super::state::AppState;
use crate::ops::Caller;
use crate::ops::{self, OpError};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, ServerHandler, tool, tool_handler, tool_router};
use solaria_shared::mcp::{
    ContextParams, DECISIONS_DEFAULT_LIMIT, DECISIONS_MAX_LIMIT, DecisionsParams,
    GetObservationsParams, IterationParams, SearchParams, TIMELINE_DEFAULT_WINDOW,
    TIMELINE_MAX_WINDOW, TimelineParams, bounded, not_found,
};
use solaria_shared::render::records::Full;
use solaria_shared::render::{Reader, TimeStyle, hits, knowledge, records};
use solaria_shared::time::{Zone, parse_when};
use solaria_shared::wire::{MachineName, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, WireRecord};
use solaria_shared::{MachineId, RecordType, UnixMillis};
use std::collections::HashMap;
use std::sync::Arc;

/// What the server tells the agent at `initialize`.
const INSTRUCTIONS: &str = "SOLARIA Memory (central): what was done in past coding sessions on every \
machine of your account (prompts, tool uses, session summaries) and what was decided and learnt (decisions \
with their rationale, commits, iterations, memories). Work cheapest first: \
1) memory_search_remote with a few keywords gives a compact index, one line per record with its citation; \
2) memory_timeline on an interesting id shows what happened around it in its session; \
3) memory_get_observations fetches the full records you need, by id. \
memory_get_context gives a project's context (what an agent is given at session start); memory_decisions \
lists what was decided and why, memory_get_iteration a unit of work with its decisions, commits and events. \
Times are UTC. Cite what you use by its tag ([O#id], [S#session], [D#id], [M#id], [C#sha], [I#id], [E#id]), \
time and machine; answer from the records, not by guessing.";

/// How an agent reads this server's answers: every machine named, times in UTC.
fn reader() -> Reader {
    Reader::agent(TimeStyle::Utc)
}

/// The `/mcp` service: [`authenticate`] in front of rmcp's streamable HTTP server.
pub fn service(state: AppState) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(state.settings.mcp_allowed_hosts.clone())
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(state.settings.max_body_bytes);
    let tools_state = state.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(CentralMemory::new(tools_state.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    axum::Router::new()
        .fallback_service(mcp)
        .layer(axum::middleware::from_fn_with_state(state, authenticate))
}

/// Refuses a request to `/mcp` exactly as a `/memory` route would (401, 403, 429 JSON);
/// otherwise passes it on with its [`Caller`] in the request extensions.
pub async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    match <Caller as axum::extract::FromRequestParts<AppState>>::from_request_parts(
        &mut parts, &state,
    )
    .await
    {
        Ok(caller) => {
            parts.extensions.insert(caller);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(e) => e.into_response(),
    }
}

/// The MCP server of one request: the API's state and the tools.
#[derive(Debug, Clone)]
pub struct CentralMemory {
    state: AppState,
    tool_router: ToolRouter<CentralMemory>,
}

#[tool_router]
impl CentralMemory {
    pub fn new(state: AppState) -> CentralMemory {
        CentralMemory {
            state,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Step 1 of 3. Search the memory of every machine of the account (prompts, tool uses, \
session summaries, decisions, memories, commits, iterations, events; English or Spanish), by words only (`mode` \
lexical). Returns a compact index, one line per record: its citation ([O#id] an observation, [S#session] a \
session summary, [D#id] a decision, [M#id] a memory, [C#sha] a commit, [I#id] an iteration, [E#id] an event), \
time (UTC), type, title, ~tokens to read it in full, project and machine. `type`, `project`, `machine`, `since` \
and `until` narrow it. Then call memory_timeline on an id to see its session, memory_get_observations for full \
records."
    )]
    async fn memory_search_remote(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(p): Parameters<SearchParams>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller(&parts)?;
        Ok(answer(self.search(caller, p).await))
    }

    #[tool(
        description = "The context an agent is given at session start for a project, from every machine of the \
account: its standing decisions, principles and open questions, its active iteration, its recent sessions \
(summary or first prompt), and notable events (errors with what came next, commits), newest first, each cited \
with its time (UTC) and machine. Name the project by its key (e.g. github.com/acme/api) or its name. For \
anything specific, use memory_search_remote instead."
    )]
    async fn memory_get_context(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(p): Parameters<ContextParams>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller(&parts)?;
        Ok(answer(self.context(caller, p).await))
    }

    #[tool(
        description = "Step 2 of 3. What happened around a record: its session (project, directory, machine, \
start and end), the session summary, the events just before and after it (`before`, `after`: 5 each unless \
asked), each cited by [O#id] with time (UTC) and machine, the anchor marked with `>`, and the knowledge recorded \
in the session. Takes an id or citation from memory_search_remote (a decision or memory shows the session it \
was recorded in). Then fetch the full records you need with memory_get_observations."
    )]
    async fn memory_timeline(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(p): Parameters<TimelineParams>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller(&parts)?;
        Ok(answer(self.timeline(caller, p).await))
    }

    #[tool(
        description = "Step 3 of 3. Full records by id or citation (at most 50) from memory_search_remote / \
memory_timeline: observations (tool input and response read line by line, files, metadata), sessions, summaries, \
and knowledge ([D#…], [M#…], [C#sha], [I#…], [E#…]) with the records linked to it both ways; each with its time \
(UTC), machine, project and session. Fetch only the ids you need; unknown ids are reported as not found."
    )]
    async fn memory_get_observations(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(p): Parameters<GetObservationsParams>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller(&parts)?;
        Ok(answer(self.records(caller, p).await))
    }

    #[tool(
        description = "The decisions recorded on every machine of the account, each in full: [D#id], time (UTC), \
machine, project, status, title, context, the option chosen, the alternatives set aside, rationale and \
supersession. Those that stand, newest first, unless `all` is true; `project` keeps one project (key or name); \
`query` keeps those matching some words (English or Spanish), best match first."
    )]
    async fn memory_decisions(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(p): Parameters<DecisionsParams>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller(&parts)?;
        Ok(answer(self.decisions(caller, p).await))
    }

    #[tool(
        description = "An iteration (a unit of work: feature, fix, spike…) with the decisions [D#id], commits \
[C#sha] and events [E#id] recorded in it, oldest first, each with time (UTC) and machine, and the sessions of \
its project meanwhile. Give its `id` (or [I#…] citation), or a `project` (key or name) for that project's \
active iteration, else its latest."
    )]
    async fn memory_get_iteration(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(p): Parameters<IterationParams>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller(&parts)?;
        Ok(answer(self.iteration(caller, p).await))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CentralMemory {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "solaria-central",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}

/// The caller [`authenticate`] let through (always there behind it).
fn caller(parts: &Parts) -> Result<Caller, McpError> {
    parts
        .extensions
        .get::<Caller>()
        .copied()
        .ok_or_else(|| McpError::internal_error("the request was not authenticated", None))
}

/// A tool's text, or its failure as a tool error (`isError: true`).
fn answer(result: Result<String, String>) -> CallToolResult {
    match result {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

/// An operation's failure as a tool error's text (the message a `/memory` route would
/// answer; a failure on our side is logged and not detailed).
fn tool_error(e: OpError) -> String {
    ApiError::from(e).message
}

/// A typed time argument (`since`, `until`), read in UTC, as Unix milliseconds.
fn when(name: &str, value: Option<String>, now: UnixMillis) -> Result<Option<String>, String> {
    value
        .filter(|v| !v.trim().is_empty())
        .map(|v| {
            parse_when(&v, now, Zone::Utc)
                .map(|t| t.0.to_string())
                .map_err(|e| format!("`{name}`: {e}"))
        })
        .transpose()
}

/// Machines by id, as the renderer looks them up.
fn names_of(machines: Vec<MachineName>) -> HashMap<MachineId, MachineName> {
    machines.into_iter().map(|m| (m.id, m)).collect()
}

impl CentralMemory {
    async fn search(&self, caller: Caller, p: SearchParams) -> Result<String, String> {
        let limit = bounded("limit", p.limit, SEARCH_DEFAULT_LIMIT, 1..=SEARCH_MAX_LIMIT)?;
        let now = UnixMillis::now();
        let params = ops::SearchParams {
            q: Some(p.query),
            project: p.project,
            machine: p.machine,
            from: when("since", p.since, now)?,
            to: when("until", p.until, now)?,
            hit_type: p.record_type,
            limit: Some(limit),
            // Without a query vector (an agent with no edge): by words, with a notice.
            mode: p.mode,
            ..ops::SearchParams::default()
        };
        let found = ops::search(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        Ok(hits::remote_page(&found).text(reader()))
    }

    async fn context(&self, caller: Caller, p: ContextParams) -> Result<String, String> {
        let Some(project) = p.project.filter(|p| !p.trim().is_empty()) else {
            return Err(
                "`project` is required on the central service: name the project by its \
                        key (e.g. github.com/acme/api) or its name"
                    .into(),
            );
        };
        let params = ops::ContextParams {
            project,
            ..ops::ContextParams::default()
        };
        let context = ops::context(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        Ok(context.text)
    }

    async fn timeline(&self, caller: Caller, p: TimelineParams) -> Result<String, String> {
        let window = |name, n| bounded(name, n, TIMELINE_DEFAULT_WINDOW, 0..=TIMELINE_MAX_WINDOW);
        let kind = p
            .record_type
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.trim().parse::<RecordType>())
            .transpose()
            .map_err(|e| format!("`type`: {e}"))?;
        let request = ops::AroundRequest {
            id: p.id,
            before: window("before", p.before)?,
            after: window("after", p.after)?,
            kind,
        };
        let t = ops::around(&self.state.storage, caller, &request)
            .await
            .map_err(tool_error)?;
        Ok(t.timeline.text(reader(), &t.names))
    }

    async fn records(&self, caller: Caller, p: GetObservationsParams) -> Result<String, String> {
        let found = ops::records(&self.state.storage, caller, &p.ids)
            .await
            .map_err(tool_error)?;
        let full: Vec<Full<'_>> = found
            .records
            .iter()
            .map(|r| match r {
                WireRecord::Observation(o) => Full::Observation(o),
                WireRecord::Session(s) => Full::Session(
                    s,
                    found
                        .session_points
                        .get(&s.id)
                        .map_or(&[][..], Vec::as_slice),
                ),
                WireRecord::Summary(s) => Full::Summary(s),
                WireRecord::Knowledge(k) => Full::Knowledge(
                    k,
                    found
                        .relations
                        .get(&k.id)
                        .map(|(links, others)| knowledge::relations(k, links, others))
                        .unwrap_or_default(),
                ),
            })
            .collect();
        let mut out = records::page(&full, reader(), &found.names);
        if !found.missing.is_empty() {
            out.push_str(&not_found(&found.missing));
            out.push('\n');
        }
        Ok(out)
    }

    async fn decisions(&self, caller: Caller, p: DecisionsParams) -> Result<String, String> {
        let params = ops::DecisionsParams {
            project: p.project,
            all: p.all.unwrap_or(false),
            q: p.query,
            limit: Some(bounded(
                "limit",
                p.limit,
                DECISIONS_DEFAULT_LIMIT,
                1..=DECISIONS_MAX_LIMIT,
            )?),
        };
        let found = ops::decisions(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        let names = names_of(found.machines);
        Ok(knowledge::decisions_page(
            &found.decisions,
            reader(),
            &names,
        ))
    }

    async fn iteration(&self, caller: Caller, p: IterationParams) -> Result<String, String> {
        let params = ops::IterationParams {
            id: p.id,
            project: p.project,
        };
        let found = ops::iteration(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        let members = found.members();
        let names = names_of(found.machines);
        Ok(knowledge::iteration_page(
            &found.iteration,
            &members,
            &found.sessions,
            reader(),
            &names,
        ))
    }
}
