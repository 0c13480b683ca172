//! Search across the account's machines: the query bounded, the filters parsed, the
//! hits weighted by the storage layer.
//!
//! Times (`from`, `to`) are Unix milliseconds or what the shared rule of typed times
//! reads, in UTC (`solaria_shared::time::parse_when`: RFC 3339
//! `2026-11-01T10:00:00Z`, a date `2026-11-01`, `2026-11-01T10:00`, a span back from
//! now `7d`); `from` is inclusive, `to` exclusive. A project
//! is named by its key or its name; a machine by its id or its name.

use super::{Caller, OpError, given};
use crate::storage::{SearchRequest, Storage};
use serde::Deserialize;
use solaria_shared::time::{Zone, parse_when};
use solaria_shared::wire::{MAX_QUERY_DIMENSIONS, QueryVector};
use solaria_shared::wire::{SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SearchResponse};
use solaria_shared::{RecordType, SearchMode, UnixMillis};

/// The longest query searched, in characters (longer ones are cut at a word).
const MAX_QUERY_CHARS: usize = 1000;
/// The most words of a query searched.
const MAX_QUERY_WORDS: usize = 32;
/// The most tags a search may weigh.
const MAX_TAGS: usize = 20;

/// A search as asked: the query string of `GET /memory/search`, the JSON body of
/// `POST /memory/search` (which alone can carry a query vector), or the arguments
/// of the `memory_search_remote` tool.
#[derive(Debug, Default, Deserialize)]
pub struct SearchParams {
    pub q: Option<String>,
    pub project: Option<String>,
    pub current_project: Option<String>,
    pub machine: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    #[serde(rename = "type")]
    pub hit_type: Option<String>,
    /// Comma-separated.
    pub tags: Option<String>,
    /// Clamped to `1..=SEARCH_MAX_LIMIT`.
    pub limit: Option<usize>,
    /// `lexical` (default), `semantic` or `hybrid`.
    pub mode: Option<String>,
    /// The query's embedding, for `semantic` and `hybrid`.
    pub vector: Option<QueryVector>,
}

/// Searches the caller's account; the hits are weighted, best first.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn search(
    storage: &Storage,
    caller: Caller,
    p: SearchParams,
) -> Result<SearchResponse, OpError> {
    let (text, truncated) = bound_query(&p.q.unwrap_or_default());
    if text.is_empty() {
        return Err(OpError::Invalid(
            "`q` is required: the words to search for, e.g. /memory/search?q=database+migration"
                .into(),
        ));
    }
    let from = given(p.from).map(|t| parse_time("from", &t)).transpose()?;
    let to = given(p.to).map(|t| parse_time("to", &t)).transpose()?;
    if let (Some(f), Some(t)) = (from, to)
        && f >= t
    {
        return Err(OpError::Invalid("`from` must be earlier than `to`".into()));
    }
    // Every record type, knowledge kinds included (links are not search results).
    let hit_type = given(p.hit_type)
        .map(|t| t.parse::<RecordType>())
        .transpose()
        .map_err(|e| OpError::Invalid(format!("`type`: {e}")))?;
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
    let mode = solaria_shared::mcp::search_mode(p.mode.as_deref())
        .map_err(OpError::Invalid)?
        .unwrap_or(SearchMode::Lexical);
    if let Some(v) = &p.vector
        && (v.values.is_empty()
            || v.values.len() > MAX_QUERY_DIMENSIONS
            || v.values.iter().any(|x| !x.is_finite()))
    {
        return Err(OpError::Invalid(format!(
            "`vector`: 1 to {MAX_QUERY_DIMENSIONS} finite values, made by the model it names"
        )));
    }
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
        mode,
        vector: p.vector,
    };
    let found = storage.search(caller.viewer(), &req).await?;
    Ok(SearchResponse {
        query: req.text,
        truncated,
        matched: found.matched,
        mode: found.mode,
        notice: found.notice,
        hits: found.hits,
    })
}

/// Parses a time parameter (see the module doc) into Unix milliseconds: Unix
/// milliseconds as they are, else the shared rule of typed times
/// (`solaria_shared::time::parse_when`, read in UTC) that the edge reads in its
/// local time: RFC 3339, a date, a date and time, a span back from now.
fn parse_time(name: &str, value: &str) -> Result<i64, OpError> {
    let t = value.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Ok(ms);
    }
    let now = UnixMillis::now();
    // An unencoded `+` of an offset arrives as a space.
    let with_plus = t.replace(' ', "+");
    if chrono::DateTime::parse_from_rfc3339(&with_plus).is_ok() {
        return parse_when(&with_plus, now, Zone::Utc)
            .map(|t| t.0)
            .map_err(OpError::Invalid);
    }
    parse_when(t, now, Zone::Utc).map(|t| t.0).map_err(|e| {
        OpError::Invalid(format!(
            "`{name}`: {e}; also an RFC 3339 time (2026-11-01T10:00:00Z) or Unix milliseconds, in UTC"
        ))
    })
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
        assert_eq!(
            parse_time("from", "2023-11-14T22:13").ok(),
            Some(1_699_999_980_000),
            "a date and time without an offset is UTC"
        );
        let now = UnixMillis::now().0;
        let week = parse_time("from", "7d").expect("a span back from now");
        assert!(
            (now - 7 * 86_400_000 - 60_000..=now).contains(&week),
            "{week}"
        );
        let err = parse_time("to", "yesterday").expect_err("not a time");
        assert!(
            err.to_string().contains("`to`") && err.to_string().contains("RFC 3339"),
            "{err}"
        );
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
}
