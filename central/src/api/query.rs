//! Cross-device queries (SPEC §5): `GET /memory/search`, `GET /memory/context/{project}`,
//! `GET /memory/timeline/{session}` and `GET /memory/restore`. Every query is scoped to
//! the caller's account; another account's ids read exactly like unknown ones (404).
//!
//! Times (`from`, `to`) are RFC 3339 (`2026-11-01T10:00:00Z`; write `+` as `%2B`), a
//! UTC date (`2026-11-01`) or Unix milliseconds; `from` is inclusive, `to` exclusive.
//! A project is named by its key (URL-encoded in a path: `github.com%2Facme%2Fapi`)
//! or its name; a machine by its id or its name.

use super::error::ApiError;
use super::{AppState, Caller};
use crate::storage::{RecentObservation, RecentSummary, SearchRequest};
use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use solaria_shared::RecordType;
use solaria_shared::context::{assemble, estimate_tokens};
use solaria_shared::wire::{
    CONTEXT_DEFAULT_BUDGET, CONTEXT_MAX_BUDGET, ContextResponse, RESTORE_DEFAULT_LIMIT,
    RESTORE_MAX_LIMIT, RestorePage, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SearchResponse,
    TimelineResponse,
};
use solaria_shared::{MachineId, ObservationId, Project, SessionId, UnixMillis};
use std::collections::HashMap;
use uuid::Uuid;

/// The longest query searched, in characters (longer ones are cut at a word).
const MAX_QUERY_CHARS: usize = 1000;
/// The most words of a query searched.
const MAX_QUERY_WORDS: usize = 32;
/// The most tags a search may weigh.
const MAX_TAGS: usize = 20;
/// The longest summary line of a context, in characters.
const MAX_SUMMARY_LINE: usize = 400;

fn params<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query
        .map(|Query(t)| t)
        .map_err(|e| ApiError::bad_request(format!("invalid query parameters: {}", e.body_text())))
}

fn path(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    path.map(|Path(p)| p)
        .map_err(|e| ApiError::bad_request(format!("invalid path: {}", e.body_text())))
}

/// A parameter that is present and not blank.
fn given(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Parses a time parameter (see the module doc) into Unix milliseconds.
fn parse_time(name: &str, value: &str) -> Result<i64, ApiError> {
    let t = value.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Ok(ms);
    }
    // An unencoded `+` of an offset arrives as a space.
    for candidate in [t.to_string(), t.replace(' ', "+")] {
        if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(&candidate) {
            return Ok(dt.timestamp_millis());
        }
    }
    if let Some(ms) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| dt.and_utc().timestamp_millis())
    {
        return Ok(ms);
    }
    let shown: String = t.chars().take(60).collect();
    Err(ApiError::bad_request(format!(
        "`{name}` must be an RFC 3339 time (2026-11-01T10:00:00Z), a UTC date (2026-11-01) or Unix milliseconds; got `{shown}`"
    )))
}

/// The query text as searched: control characters blanked, at most
/// [`MAX_QUERY_WORDS`] words and [`MAX_QUERY_CHARS`] characters; and whether it was cut.
fn bound_query(q: &str) -> (String, bool) {
    let cleaned: String = q
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut out = String::new();
    let (mut words, mut chars) = (0, 0);
    let mut truncated = false;
    for word in cleaned.split_whitespace() {
        let len = word.chars().count();
        if words == MAX_QUERY_WORDS || chars + len + 1 > MAX_QUERY_CHARS {
            truncated = true;
            break;
        }
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        out.push_str(word);
        chars += len;
        words += 1;
    }
    if out.is_empty() && truncated {
        // One giant word: keep its head.
        out = cleaned.trim().chars().take(MAX_QUERY_CHARS).collect();
    }
    (out, truncated)
}

#[derive(Debug, Deserialize)]
pub struct SearchParams {
    q: Option<String>,
    project: Option<String>,
    current_project: Option<String>,
    machine: Option<String>,
    from: Option<String>,
    to: Option<String>,
    #[serde(rename = "type")]
    hit_type: Option<String>,
    tags: Option<String>,
    limit: Option<usize>,
}

/// `GET /memory/search?q=&project=&current_project=&machine=&from=&to=&type=&tags=&limit=`
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn search(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<SearchParams>, QueryRejection>,
) -> Result<Json<SearchResponse>, ApiError> {
    let p = params(query)?;
    let (text, truncated) = bound_query(&p.q.unwrap_or_default());
    if text.is_empty() {
        return Err(ApiError::bad_request(
            "`q` is required: the words to search for, e.g. /memory/search?q=database+migration",
        ));
    }
    let from = given(p.from).map(|t| parse_time("from", &t)).transpose()?;
    let to = given(p.to).map(|t| parse_time("to", &t)).transpose()?;
    if let (Some(f), Some(t)) = (from, to)
        && f >= t
    {
        return Err(ApiError::bad_request("`from` must be earlier than `to`"));
    }
    let hit_type = match given(p.hit_type) {
        None => None,
        Some(t) if t == "summary" => Some(RecordType::Summary),
        Some(t) => Some(RecordType::from(
            t.parse::<solaria_shared::ObservationKind>().map_err(|_| {
                ApiError::bad_request("`type` must be one of tool_use, prompt, note, summary")
            })?,
        )),
    };
    let tags: Vec<String> = given(p.tags)
        .map(|t| {
            t.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .take(MAX_TAGS)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let req = SearchRequest {
        text,
        project: given(p.project),
        current_project: given(p.current_project),
        machine: given(p.machine),
        from,
        to,
        hit_type,
        tags,
        limit: p
            .limit
            .unwrap_or(SEARCH_DEFAULT_LIMIT)
            .clamp(1, SEARCH_MAX_LIMIT),
        now: UnixMillis::now(),
    };
    let (matched, hits) = state.storage.search(caller.account, &req).await?;
    Ok(Json(SearchResponse {
        query: req.text,
        truncated,
        matched,
        hits,
    }))
}

#[derive(Debug, Deserialize)]
pub struct ContextParams {
    budget: Option<usize>,
    /// The agent session the context is for (logged with the injection).
    session: Option<String>,
}

/// `GET /memory/context/{project}?budget=&session=`
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn context(
    State(state): State<AppState>,
    caller: Caller,
    project: Result<Path<String>, PathRejection>,
    query: Result<Query<ContextParams>, QueryRejection>,
) -> Result<Json<ContextResponse>, ApiError> {
    let project = path(project)?;
    let p = params(query)?;
    let budget = p
        .budget
        .unwrap_or(CONTEXT_DEFAULT_BUDGET)
        .clamp(1, CONTEXT_MAX_BUDGET);
    let projects = state
        .storage
        .resolve_project(caller.account, project.trim())
        .await?;
    if projects.is_empty() {
        let shown: String = project.chars().take(200).collect();
        return Err(ApiError::not_found(format!(
            "project `{shown}` not found: name it by its key (URL-encoded, e.g. github.com%2Facme%2Fapi) or its name"
        )));
    }
    let keys: Vec<String> = projects.iter().map(|p| p.key.clone()).collect();
    // About one line per 15 tokens at most: read no more rows than could fit.
    let rows = (budget / 15 + 1).min(1000) as i64;
    let summaries = state
        .storage
        .recent_summaries(caller.account, &keys, rows)
        .await?;
    let observations = state
        .storage
        .recent_observations(caller.account, &keys, rows)
        .await?;
    let mut machines: Vec<MachineId> = summaries.iter().map(|s| s.machine_id).collect();
    machines.extend(observations.iter().map(|o| o.machine_id));
    let names = state
        .storage
        .machine_names(caller.account, &machines)
        .await?;
    let built = build_context(&projects, budget, &summaries, &observations, &names);
    let sources: Vec<Uuid> = built.observations.iter().map(|o| *o.as_uuid()).collect();
    let target: Option<String> = given(p.session).map(|s| s.chars().take(200).collect());
    state
        .storage
        .log_context_injection(caller.account, caller.machine, target.as_deref(), &sources)
        .await?;
    Ok(Json(ContextResponse {
        project: projects[0].clone(),
        tokens: estimate_tokens(&built.text),
        budget: built.budget,
        text: built.text,
        sessions: built.sessions,
        observations: built.observations,
    }))
}

/// A UTC time for a context line.
fn utc(t: UnixMillis) -> String {
    chrono::DateTime::from_timestamp_millis(t.0)
        .map(|d| d.format("%Y-%m-%d %H:%MZ").to_string())
        .unwrap_or_else(|| t.0.to_string())
}

/// A text on one line, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max).collect();
    cut.push('…');
    cut
}

#[derive(Debug)]
struct BuiltContext {
    text: String,
    budget: usize,
    sessions: Vec<SessionId>,
    observations: Vec<ObservationId>,
}

/// The context text: a header, then the summaries and observations that fit the
/// budget (the shared rule of `solaria_shared::context`), newest first, each line
/// citing its id, UTC time and machine.
fn build_context(
    projects: &[Project],
    budget: usize,
    summaries: &[RecentSummary],
    observations: &[RecentObservation],
    names: &HashMap<MachineId, String>,
) -> BuiltContext {
    let name = |m: &MachineId| {
        names
            .get(m)
            .map_or("unknown machine", String::as_str)
            .to_string()
    };
    let keys: Vec<&str> = projects.iter().map(|p| p.key.as_str()).collect();
    let mut header = format!(
        "# SOLARIA memory: project {} ({})\n\
         Earlier work on this project from every machine of the account, newest first (times in UTC). \
         Cite ids as evidence; the memory_timeline tool (or GET /memory/timeline/ID) shows what \
         happened around one.\n",
        projects.first().map_or("", |p| p.name.as_str()),
        keys.join(", ")
    );
    if summaries.is_empty() && observations.is_empty() {
        header.push_str("\nNothing recorded for this project yet.\n");
    }
    let summary_lines: Vec<String> = summaries
        .iter()
        .map(|s| {
            format!(
                "[S#{}] {} ({}) {}\n",
                s.session_id,
                utc(s.created_at),
                name(&s.machine_id),
                one_line(&s.text, MAX_SUMMARY_LINE)
            )
        })
        .collect();
    let observation_lines: Vec<String> = observations
        .iter()
        .map(|o| {
            let flag = if o.error { " [error]" } else { "" };
            format!(
                "[O#{}] {} ({}) {}{flag}\n",
                o.id,
                utc(o.created_at),
                name(&o.machine_id),
                one_line(&o.title, MAX_SUMMARY_LINE)
            )
        })
        .collect();
    let built = assemble(header, &summary_lines, &observation_lines, budget);
    BuiltContext {
        text: built.text,
        budget: built.budget,
        sessions: summaries[..built.summaries]
            .iter()
            .map(|s| s.session_id)
            .collect(),
        observations: observations[..built.observations]
            .iter()
            .map(|o| ObservationId::from_uuid(o.id))
            .collect(),
    }
}

/// `GET /memory/timeline/{session}`: the session (or the session of the observation or
/// summary with that id), its observations oldest first, and its summary.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn timeline(
    State(state): State<AppState>,
    caller: Caller,
    session: Result<Path<String>, PathRejection>,
) -> Result<Json<TimelineResponse>, ApiError> {
    let raw = path(session)?;
    let id = Uuid::parse_str(raw.trim()).map_err(|_| {
        let shown: String = raw.chars().take(80).collect();
        ApiError::bad_request(format!(
            "`{shown}` is not a session id: expected a UUID such as 0192f3e4-5b6c-7d8e-9f00-112233445566"
        ))
    })?;
    let timeline = state
        .storage
        .timeline(caller.account, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("session {id} not found")))?;
    Ok(Json(TimelineResponse {
        session: timeline.session,
        observations: timeline.observations,
        summary: timeline.summary,
        machines: timeline.machines,
    }))
}

#[derive(Debug, Deserialize)]
pub struct RestoreParams {
    #[serde(default)]
    since: i64,
    limit: Option<usize>,
}

/// `GET /memory/restore?since=&limit=`: the account's live records, page by page.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn restore(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<RestoreParams>, QueryRejection>,
) -> Result<Json<RestorePage>, ApiError> {
    let p = params(query)?;
    if p.since < 0 {
        return Err(ApiError::bad_request(
            "`since` is the `next` of a previous page (0 to start)",
        ));
    }
    let limit = p
        .limit
        .unwrap_or(RESTORE_DEFAULT_LIMIT)
        .clamp(1, RESTORE_MAX_LIMIT);
    Ok(Json(
        state
            .storage
            .restore(caller.account, p.since, limit)
            .await?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_in_every_documented_form() {
        assert_eq!(
            parse_time("from", "1700000000000").ok(),
            Some(1_700_000_000_000)
        );
        assert_eq!(
            parse_time("from", "2023-11-14T22:13:20Z").ok(),
            Some(1_700_000_000_000)
        );
        assert_eq!(
            parse_time("from", "2023-11-15T00:13:20 02:00").ok(),
            Some(1_700_000_000_000)
        );
        assert_eq!(parse_time("from", "1970-01-02").ok(), Some(86_400_000));
        let err = parse_time("to", "yesterday").expect_err("not a time");
        assert!(err.message.contains("RFC 3339"), "{}", err.message);
    }

    #[test]
    fn queries_are_bounded_at_a_word() {
        let (q, cut) = bound_query("  database\u{0}migration  ");
        assert_eq!((q.as_str(), cut), ("database migration", false));
        let long = "word ".repeat(2000);
        let (q, cut) = bound_query(&long);
        assert!(cut);
        assert_eq!(q.split(' ').count(), MAX_QUERY_WORDS);
        let giant = "x".repeat(10_000);
        let (q, cut) = bound_query(&giant);
        assert!(cut);
        assert_eq!(q.chars().count(), MAX_QUERY_CHARS);
    }

    #[test]
    fn context_never_exceeds_its_budget() {
        let m = MachineId::new();
        let names = HashMap::from([(m, "laptop".to_string())]);
        let summaries: Vec<RecentSummary> = (0..50)
            .map(|i| RecentSummary {
                session_id: SessionId::new(),
                machine_id: m,
                created_at: UnixMillis(1_700_000_000_000 - i),
                text: format!("Session {i}: fixed the refresh flow\nand more"),
            })
            .collect();
        let observations: Vec<RecentObservation> = (0..200)
            .map(|i| RecentObservation {
                id: Uuid::now_v7(),
                machine_id: m,
                created_at: UnixMillis(1_700_000_000_000 - i),
                title: format!("Bash: cargo test {i}"),
                error: i == 0,
            })
            .collect();
        let project = [Project {
            key: "github.com/acme/api".into(),
            name: "api".into(),
        }];
        for budget in [1, 100, 500, 2000] {
            let built = build_context(&project, budget, &summaries, &observations, &names);
            assert!(
                estimate_tokens(&built.text) <= built.budget,
                "{budget}: {}",
                built.text
            );
            assert_eq!(built.budget, budget.max(built.budget));
        }
        let built = build_context(&project, 2000, &summaries, &observations, &names);
        assert!(!built.sessions.is_empty() && !built.observations.is_empty());
        assert!(built.text.contains(&format!(
            "[S#{}] 2023-11-14 22:13Z (laptop) Session 0: fixed the refresh flow and more",
            summaries[0].session_id
        )));
        assert!(built.text.contains(&format!("[O#{}]", observations[0].id)));
        assert!(built.text.contains("[error]"));
    }
}
