//! `/mcp`: the central MCP server over streamable HTTP, built on `rmcp`.
//!
//! Every request to `/mcp` is authenticated first by [`authenticate`], an axum
//! middleware running the checks of every `/memory` route (the [`Caller`] extractor:
//! bearer JWT signature and expiry, revocation, rate limit); a refusal answers the
//! same JSON error, before rmcp sees the request. The accepted [`Caller`] goes into the
//! request's extensions, which rmcp hands to the tool handlers with the HTTP request
//! parts: each tool call is scoped to the account of the token of its own request.
//!
//! The tools run the operations of `crate::ops` that the `/memory` query handlers run
//! (same validation, same SQL, same account scoping) and render their typed answers
//! as text in which every line cites its source (`[O#id]`, `[S#session]`, time,
//! machine). Another account's
//! ids read exactly like unknown ones: a tool error saying "not found".
//!
//! The server is stateless (no MCP sessions): any replica answers any request, like
//! the rest of the API.

use super::knowledge_text::{decisions_text, iteration_text};
use super::{ApiError, AppState, Caller};
use crate::ops::{self, FoundObservations, OpError};
use crate::timefmt::utc;
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
use schemars::JsonSchema;
use serde::Deserialize;
use solaria_shared::Citation;
use solaria_shared::wire::{SearchResponse, TimelineResponse};
use solaria_shared::{MachineId, Observation};
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

/// The most records fetched in one `memory_get_observations` call.
const MAX_IDS: usize = 50;
/// The most results a search returns.
const MAX_LIMIT: usize = 100;
/// The longest response (or input) shown per record by `memory_get_observations`.
const MAX_FIELD_CHARS: usize = 20_000;

/// What the server tells the agent at `initialize`.
const INSTRUCTIONS: &str = "SOLARIA Memory (central): what was done in past coding sessions on every \
machine of your account (prompts, tool uses, session summaries, decisions, commits). Work cheapest first: \
1) memory_search_remote with a few keywords gives a compact index, one line per record with its citation; \
2) memory_timeline on an interesting id shows its session; \
3) memory_get_observations fetches the full records you need, by id. \
memory_get_context gives a project's recent history; memory_decisions lists what was decided and why, \
memory_get_iteration a unit of work with its decisions, commits and events. \
Cite what you use by its [O#id] / [S#session] / [D#id] tag, time and machine; answer from the records, not by guessing.";

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

/// `memory_search_remote` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchParams {
    /// What to look for: a few keywords, English or Spanish (`"phrases"`, `-not` and `or` work).
    pub query: String,
    /// Only this project (its key, e.g. `github.com/acme/api`, or its name).
    #[serde(default)]
    pub project: Option<String>,
    /// Only records written by this machine (its name or id).
    #[serde(default)]
    pub machine: Option<String>,
    /// Only one type: tool_use, prompt, note, summary, decision, memory, commit,
    /// iteration or event.
    #[serde(default, rename = "type")]
    pub hit_type: Option<String>,
    /// Most results (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `memory_decisions` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DecisionsParams {
    /// Only this project (its key, e.g. `github.com/acme/api`, or its name).
    #[serde(default)]
    pub project: Option<String>,
    /// Superseded and retracted decisions too (default: only active ones).
    #[serde(default)]
    pub all: bool,
    /// Only decisions matching these words (English or Spanish), best match first.
    #[serde(default)]
    pub query: Option<String>,
    /// Most decisions (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `memory_get_iteration` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct IterationParams {
    /// An iteration id or its citation (`[I#…]`). Without it, the active (or latest)
    /// iteration of `project`.
    #[serde(default)]
    pub id: Option<String>,
    /// The project (key or name) whose active or latest iteration to show.
    #[serde(default)]
    pub project: Option<String>,
}

/// `memory_get_context` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextParams {
    /// The project: its key (e.g. `github.com/acme/api`) or its name.
    pub project: String,
}

/// `memory_timeline` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TimelineParams {
    /// A session, observation or summary id, or a citation as printed (`[O#…]`, `[S#…]`).
    pub id: String,
}

/// `memory_get_observations` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetObservationsParams {
    /// Observation ids or `[O#…]` citations from memory_search_remote / memory_timeline (at most 50).
    pub ids: Vec<String>,
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
session summaries, decisions, memories, commits, iterations, events; English or Spanish). Returns a compact \
index, one line per record: its citation ([O#id] an observation, [S#session] a session summary, [D#id] a \
decision, [M#id] a memory, [C#sha] a commit, [I#id] an iteration, [E#id] an event), time (UTC), machine, \
type, title, project and ~tokens to read it in full. `type` keeps one type. Then call memory_timeline on an \
observation's id to see its session, memory_get_observations for full records, memory_decisions for \
decisions in full."
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
        description = "A project's recent history across every machine of the account: its latest session \
summaries and observations, newest first, each cited by [S#session] or [O#id] with time (UTC) and machine. \
Name the project by its key (e.g. github.com/acme/api) or its name. For anything specific, use \
memory_search_remote instead."
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
        description = "Step 2 of 3. A session in order: its project, directory, machine, start and end, its \
summary, and every observation oldest first, each cited by [O#id] with time (UTC) and machine. Takes a \
session, observation or summary id (or citation) from memory_search_remote; the record asked for is \
marked with `>`. Then fetch the full records you need with memory_get_observations."
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
        description = "Step 3 of 3. Full observations by id ([O#…] citations or ids from memory_search_remote \
/ memory_timeline, at most 50): tool input and response, files, tags, metadata, time, machine, project and \
session. Fetch only the ids you need; unknown ids are reported as not found."
    )]
    async fn memory_get_observations(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(p): Parameters<GetObservationsParams>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller(&parts)?;
        Ok(answer(self.observations(caller, p).await))
    }

    #[tool(
        description = "The decisions recorded on every machine of the account, newest first: each cited \
[D#id] with its time (UTC), machine, status, title and project, then what it answered (context), what was \
chosen, why (rationale) and the alternatives set aside. Only active decisions unless `all` is true; \
`project` keeps one project (key or name); `query` keeps those matching some words (English or Spanish)."
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
        description = "An iteration (a unit of work: feature, fix, spike…) with the decisions [D#id], \
commits [C#sha] and events [E#id] recorded in it, each with time (UTC) and machine. Give its `id` (or \
[I#…] citation), or a `project` (key or name) for that project's active iteration, else its latest."
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

/// At most `max` characters of `text`, marked when cut.
fn bounded(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push_str("… [cut]");
    cut
}

/// The id in an id or a citation (`[O#…]`, `O#…`, `[S#…]`).
fn parse_id(raw: &str) -> Result<Uuid, String> {
    let cited = solaria_shared::Citation::parse_lenient(raw).ok().flatten();
    let t = cited.as_ref().map_or(raw, |c| c.id.as_str());
    Uuid::parse_str(t.trim()).map_err(|_| {
        let shown: String = raw.chars().take(80).collect();
        format!("`{shown}` is not a record id: expected a UUID or a citation such as [O#0192f3e4-5b6c-7d8e-9f00-112233445566]")
    })
}

impl CentralMemory {
    async fn search(&self, caller: Caller, p: SearchParams) -> Result<String, String> {
        let limit = p.limit.unwrap_or(20);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(format!(
                "`limit` must be between 1 and {MAX_LIMIT}, not {limit}"
            ));
        }
        let params = ops::SearchParams {
            q: Some(p.query),
            project: p.project,
            machine: p.machine,
            hit_type: p.hit_type,
            limit: Some(limit),
            ..ops::SearchParams::default()
        };
        let found = ops::search(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        Ok(search_text(&found))
    }

    async fn decisions(&self, caller: Caller, p: DecisionsParams) -> Result<String, String> {
        let params = ops::DecisionsParams {
            project: p.project,
            all: p.all,
            q: p.query,
            limit: p.limit,
        };
        let found = ops::decisions(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        Ok(decisions_text(&found))
    }

    async fn iteration(&self, caller: Caller, p: IterationParams) -> Result<String, String> {
        let params = ops::IterationParams {
            id: p.id,
            project: p.project,
        };
        let found = ops::iteration(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        Ok(iteration_text(&found))
    }

    async fn context(&self, caller: Caller, p: ContextParams) -> Result<String, String> {
        let params = ops::ContextParams {
            project: p.project,
            ..ops::ContextParams::default()
        };
        let context = ops::context(&self.state.storage, caller, params)
            .await
            .map_err(tool_error)?;
        Ok(context.text)
    }

    async fn timeline(&self, caller: Caller, p: TimelineParams) -> Result<String, String> {
        let id = parse_id(&p.id)?;
        let timeline = ops::timeline(&self.state.storage, caller, id)
            .await
            .map_err(|e| match e {
                OpError::NotFound(_) => format!("record {id} not found"),
                other => tool_error(other),
            })?;
        Ok(timeline_text(&timeline, id))
    }

    async fn observations(
        &self,
        caller: Caller,
        p: GetObservationsParams,
    ) -> Result<String, String> {
        if p.ids.is_empty() || p.ids.len() > MAX_IDS {
            return Err(format!(
                "`ids` must hold between 1 and {MAX_IDS} ids, not {}",
                p.ids.len()
            ));
        }
        let ids = p
            .ids
            .iter()
            .map(|raw| parse_id(raw))
            .collect::<Result<Vec<Uuid>, String>>()?;
        let found = ops::observations(&self.state.storage, caller, &ids)
            .await
            .map_err(tool_error)?;
        observations_text(&found)
    }
}

/// The observations found, then the ids not found; an error when none was found.
fn observations_text(f: &FoundObservations) -> Result<String, String> {
    let missing = || {
        f.missing
            .iter()
            .map(Uuid::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if f.found.is_empty() {
        return Err(format!("not found: {}", missing()));
    }
    let mut out = String::new();
    for o in &f.found {
        out.push_str(&observation_text(o, &f.names));
        out.push('\n');
    }
    if !f.missing.is_empty() {
        out.push_str(&format!("Not found: {}\n", missing()));
    }
    Ok(out)
}

fn machine_name(names: &HashMap<MachineId, String>, m: MachineId) -> &str {
    names.get(&m).map_or("unknown machine", String::as_str)
}

fn search_text(found: &SearchResponse) -> String {
    let mut out = format!(
        "{} result(s) for \"{}\" across the account's machines{}{}:\n",
        found.hits.len(),
        found.query,
        match found.matched {
            solaria_shared::wire::MatchMode::All => "",
            solaria_shared::wire::MatchMode::Any =>
                " (no record held every word: records with any of them)",
        },
        if found.truncated {
            " (the query was cut to its first words)"
        } else {
            ""
        }
    );
    if found.hits.is_empty() {
        out.push_str("Nothing found. Try other or fewer words, or no project/machine filter.\n");
    }
    for h in &found.hits {
        out.push_str(&format!(
            "{} {} ({}) {} {} — project {} (~{} tokens)\n",
            h.cite,
            utc(h.created_at),
            h.machine_name,
            h.hit_type.as_str(),
            h.title,
            h.project_name,
            h.tokens
        ));
    }
    out
}

fn timeline_text(t: &TimelineResponse, anchor: Uuid) -> String {
    let names: HashMap<MachineId, String> =
        t.machines.iter().map(|m| (m.id, m.name.clone())).collect();
    let s = &t.session;
    let mut out = format!(
        "{} session on {} ({}), machine {}, directory {}, agent {}, started {}{}\n",
        Citation::session(s.id),
        s.project.name,
        s.project.key,
        machine_name(&names, s.meta.machine_id),
        s.cwd,
        s.agent,
        utc(s.started_at),
        s.ended_at
            .map(|e| format!(", ended {}", utc(e)))
            .unwrap_or_default()
    );
    if let Some(summary) = &t.summary {
        let mark = if *summary.id.as_uuid() == anchor {
            ">"
        } else {
            " "
        };
        out.push_str(&format!(
            "{mark}{} summary {} ({}): {}\n",
            Citation::session(summary.session_id),
            utc(summary.created_at),
            machine_name(&names, summary.meta.machine_id),
            summary
                .text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    out.push_str(&format!(
        "{} observation(s), oldest first:\n",
        t.observations.len()
    ));
    for o in &t.observations {
        let mark = if *o.id.as_uuid() == anchor { ">" } else { " " };
        out.push_str(&format!(
            "{mark}{} {} ({}) {} {}\n",
            Citation::observation(o.id),
            utc(o.created_at),
            machine_name(&names, o.meta.machine_id),
            o.kind.as_str(),
            o.title
        ));
    }
    out
}

fn observation_text(o: &Observation, names: &HashMap<MachineId, String>) -> String {
    let mut out = format!(
        "{} {} ({}) {}{} — project {} ({}), session {}\nTitle: {}\n",
        Citation::observation(o.id),
        utc(o.created_at),
        machine_name(names, o.meta.machine_id),
        o.kind.as_str(),
        o.tool_name
            .as_deref()
            .map(|t| format!(" {t}"))
            .unwrap_or_default(),
        o.project.name,
        o.project.key,
        Citation::session(o.session_id),
        o.title
    );
    if !o.input.is_empty() {
        out.push_str(&format!("Input: {}\n", bounded(&o.input, MAX_FIELD_CHARS)));
    }
    if !o.response.is_empty() {
        out.push_str(&format!(
            "Response: {}\n",
            bounded(&o.response, MAX_FIELD_CHARS)
        ));
    }
    if !o.files.is_empty() {
        out.push_str(&format!("Files: {}\n", o.files.join(", ")));
    }
    if !o.tags.is_empty() {
        out.push_str(&format!("Tags: {}\n", o.tags.join(", ")));
    }
    if !o.metadata.is_null() {
        out.push_str(&format!("Metadata: {}\n", o.metadata));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_bare_or_cited() {
        let id = Uuid::now_v7();
        for raw in [
            id.to_string(),
            format!("[O#{id}]"),
            format!("O#{id}"),
            format!(" [S#{id}] "),
        ] {
            assert_eq!(parse_id(&raw), Ok(id), "{raw}");
        }
        assert!(parse_id("[O#nope]").is_err());
    }
}
