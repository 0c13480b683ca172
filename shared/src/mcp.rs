//! The arguments of the MCP read tools both servers answer (the edge's `solaria mcp`
//! and the central service's `/mcp`): one definition, so a tool name takes the same
//! arguments on both sides. Each server reads them into its own operation.

use schemars::JsonSchema;
use serde::Deserialize;

/// `memory_search` (the edge) and `memory_search_remote` (both) arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct SearchParams {
    /// What to look for: a few keywords, English or Spanish. Any text is valid
    /// (operators and punctuation are searched as text).
    pub query: String,
    /// Only this project: its name, its key (`github.com/acme/api`), its
    /// `owner/repo`, or (on the edge) a path inside it.
    #[serde(default)]
    pub project: Option<String>,
    /// Only this type: `tool_use`, `prompt`, `note`, `summary`, `decision`,
    /// `memory`, `commit`, `iteration` or `event`.
    #[serde(default, rename = "type")]
    pub record_type: Option<String>,
    /// Only records written by this machine (its name or id).
    #[serde(default)]
    pub machine: Option<String>,
    /// Only records since: `2026-11-01`, `2026-11-01T10:00`, an RFC 3339 time, or a
    /// span back from now (`30m`, `12h`, `7d`, `2w`).
    #[serde(default)]
    pub since: Option<String>,
    /// Only records before (same forms as `since`).
    #[serde(default)]
    pub until: Option<String>,
    /// Most results (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
    /// `lexical` (words), `semantic` (meaning: paraphrases and other languages) or
    /// `hybrid` (both). Default: hybrid where the model and vectors are at hand,
    /// lexical otherwise.
    #[serde(default)]
    pub mode: Option<String>,
}

/// `memory_timeline` arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct TimelineParams {
    /// An observation, session or summary id, or a citation as printed (`[O#…]`,
    /// `[S#…]`; a decision or memory shows the session it was recorded in).
    pub id: String,
    /// Events shown before the anchor (default 5, at most 50).
    #[serde(default)]
    pub before: Option<usize>,
    /// Events shown after the anchor (default 5, at most 50).
    #[serde(default)]
    pub after: Option<usize>,
    /// Only records of this type: `tool_use`, `prompt`, `note`, or knowledge
    /// recorded in the session: `decision`, `memory`, `commit`, `iteration`, `event`.
    #[serde(default, rename = "type")]
    pub record_type: Option<String>,
}

/// `memory_get_observations` arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct GetObservationsParams {
    /// Record ids or citations from a search or a timeline (at most 50): `[O#…]`,
    /// `[S#…]`, `[D#…]`, `[M#…]`, `[C#sha]`, `[I#…]`, `[E#…]`.
    pub ids: Vec<String>,
}

/// `memory_get_context` arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct ContextParams {
    /// The project (name, key, `owner/repo`, or on the edge a path inside it); the
    /// edge defaults to its working directory's, the central service needs one.
    #[serde(default)]
    pub project: Option<String>,
}

/// `memory_decisions` arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct DecisionsParams {
    /// Only this project (its name or key).
    #[serde(default)]
    pub project: Option<String>,
    /// Superseded and retracted decisions too (default: only those that stand).
    #[serde(default)]
    pub all: Option<bool>,
    /// Only decisions matching these words (English or Spanish), best match first.
    #[serde(default)]
    pub query: Option<String>,
    /// Most decisions (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `memory_get_iteration` arguments.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct IterationParams {
    /// An iteration id or its citation (`[I#…]`). Without it, the active (or
    /// latest) iteration of `project`.
    #[serde(default)]
    pub id: Option<String>,
    /// The project (key or name) whose active or latest iteration to show.
    #[serde(default)]
    pub project: Option<String>,
}
