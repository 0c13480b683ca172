//! The arguments of the MCP read tools both servers answer (the edge's `solaria mcp`
//! and the central service's `/mcp`): one definition, so a tool name takes the same
//! arguments on both sides. Each server reads them into its own operation; an
//! argument a server cannot honour yet is refused with a tool error naming it,
//! never ignored. The bounds both servers apply are here too.

use crate::search_mode::SearchMode;
use schemars::JsonSchema;
use serde::Deserialize;

/// Events a timeline shows on either side of its anchor unless asked otherwise.
pub const TIMELINE_DEFAULT_WINDOW: usize = 5;
/// The most events a timeline shows on either side of its anchor.
pub const TIMELINE_MAX_WINDOW: usize = 50;
/// The most records `memory_get_observations` fetches at once.
pub const MAX_IDS: usize = 50;
/// Decisions `memory_decisions` lists unless asked otherwise.
pub const DECISIONS_DEFAULT_LIMIT: usize = 50;
/// The most decisions `memory_decisions` lists.
pub const DECISIONS_MAX_LIMIT: usize = 200;

/// What a server says of ids that name no record (as the caller gave them, each
/// shown quoted and cut at 80 characters), and where ids come from.
pub fn not_found(ids: &[String]) -> String {
    let quoted: Vec<String> = ids
        .iter()
        .map(|id| format!("{:?}", id.chars().take(80).collect::<String>()))
        .collect();
    format!(
        "no record with id {} (ids and citations come from a search or a timeline)",
        quoted.join(", ")
    )
}

/// A whole-number argument within `range`, `default` when absent; the error names
/// the argument and its bounds (both servers, and the edge's other surfaces).
pub fn bounded(
    name: &str,
    value: Option<usize>,
    default: usize,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, String> {
    let n = value.unwrap_or(default);
    if range.contains(&n) {
        return Ok(n);
    }
    Err(format!(
        "`{name}` must be between {} and {}, not {n}",
        range.start(),
        range.end()
    ))
}

/// The `mode` argument of a search tool, read the same way by both servers:
/// `None` when absent or blank.
pub fn search_mode(mode: Option<&str>) -> Result<Option<SearchMode>, String> {
    match mode.map(str::trim).filter(|m| !m.is_empty()) {
        None => Ok(None),
        Some(m) => m
            .to_ascii_lowercase()
            .parse::<SearchMode>()
            .map(Some)
            .map_err(|e| format!("`mode`: {e}")),
    }
}

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
    /// Only records since: `2026-11-01`, `2026-11-01T10:00` (the edge reads them in
    /// its local time, the central service in UTC), an RFC 3339 time, or a span back
    /// from now (`30m`, `12h`, `7d`, `2w`).
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
    /// lexical otherwise. The central service (`memory_search_remote`) searches by
    /// meaning with a query vector an edge sends, or with a model of its own; without
    /// either it answers by words and says so.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_mode_is_read_alike_on_both_servers() {
        assert_eq!(search_mode(None), Ok(None));
        assert_eq!(search_mode(Some("  ")), Ok(None));
        assert_eq!(search_mode(Some(" Hybrid ")), Ok(Some(SearchMode::Hybrid)));
        let e = search_mode(Some("fuzzy")).expect_err("unknown");
        assert!(e.starts_with("`mode`: ") && e.contains("fuzzy"), "{e}");
    }
}
