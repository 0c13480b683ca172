//! Local search: any text a user types becomes a safe FTS5 query, ranked by bm25
//! times the SPEC §9 weights.
//!
//! Cost is bounded by design: ranking cost grows with the number of matching rows,
//! so each FTS5 query walks the matches newest-first and stops after
//! [`CANDIDATES`] rows; bm25 (computed from whole-index statistics) and the weights
//! then rank that bounded set. A very common word therefore ranks among its most
//! recent matches; add words or `--until` to reach older ones.

use super::StoreError;
use rusqlite::{Connection, ToSql};
use serde::Serialize;
use solaria_shared::UnixMillis;
use solaria_shared::ranking::{self, RankContext};
use std::fmt;
use std::str::FromStr;

/// The most matches one FTS5 query examines.
pub const CANDIDATES: usize = 400;
/// The most terms taken from a query (a 10,000-character paste stays fast).
const MAX_TERMS: usize = 24;
/// The longest single term kept, in characters.
const MAX_TERM_CHARS: usize = 128;
/// Results that matched only some of the words rank below those that matched all.
const PARTIAL_MATCH_FACTOR: f64 = 0.5;

/// What kind of record a search is restricted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordType {
    ToolUse,
    Prompt,
    Note,
    Summary,
}

impl RecordType {
    /// The name on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordType::ToolUse => "tool_use",
            RecordType::Prompt => "prompt",
            RecordType::Note => "note",
            RecordType::Summary => "summary",
        }
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RecordType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tool_use" | "tool" => Ok(RecordType::ToolUse),
            "prompt" => Ok(RecordType::Prompt),
            "note" => Ok(RecordType::Note),
            "summary" => Ok(RecordType::Summary),
            other => Err(format!(
                "unknown type `{other}` (expected tool_use, prompt, note or summary)"
            )),
        }
    }
}

/// A search request.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub text: String,
    /// Only this project (key or name).
    pub project: Option<String>,
    pub record_type: Option<RecordType>,
    /// Only this machine (id).
    pub machine: Option<String>,
    pub since: Option<UnixMillis>,
    pub until: Option<UnixMillis>,
    pub limit: usize,
    /// The project the user is in, for the weights (not a filter).
    pub current_project: Option<String>,
}

/// One result of a search: enough to decide whether to fetch the full record.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub id: String,
    #[serde(rename = "type")]
    pub record_type: RecordType,
    pub title: String,
    pub project: String,
    pub project_name: String,
    pub machine_id: String,
    pub session_id: String,
    pub created_at: i64,
    /// About how many tokens the full record costs to read.
    pub tokens: usize,
    pub score: f64,
}

/// Turns any user text into FTS5 terms: each whitespace-separated chunk that holds
/// a letter or digit becomes one quoted phrase (quotes doubled), so operators,
/// column filters and punctuation are searched as text, never parsed as syntax.
pub fn query_terms(text: &str) -> Vec<String> {
    let chunks: Vec<&str> = text
        .split_whitespace()
        .filter(|c| c.chars().any(char::is_alphanumeric))
        .collect();
    let meaningful: Vec<&str> = chunks.iter().copied().filter(|c| !is_stopword(c)).collect();
    let chosen = if meaningful.is_empty() {
        chunks
    } else {
        meaningful
    };
    let mut terms: Vec<String> = Vec::new();
    for chunk in chosen {
        let chunk: String = chunk.chars().take(MAX_TERM_CHARS).collect();
        let quoted = format!("\"{}\"", chunk.replace('"', "\"\""));
        if !terms.contains(&quoted) {
            terms.push(quoted);
        }
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    terms
}

fn is_stopword(word: &str) -> bool {
    const STOP: &[&str] = &[
        "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "how",
        "i", "in", "is", "it", "of", "on", "or", "our", "that", "the", "this", "to", "was", "we",
        "what", "when", "where", "which", "who", "why", "with", "you", "de", "del", "el", "en",
        "es", "la", "las", "lo", "los", "por", "que", "qué", "se", "un", "una", "y", "con", "para",
        "cómo", "como", "cuando", "dónde", "al",
    ];
    let lower = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    STOP.contains(&lower.as_str())
}

/// Runs a search over observations and summaries.
pub fn search(conn: &Connection, q: &SearchQuery) -> Result<Vec<Hit>, StoreError> {
    let terms = query_terms(&q.text);
    let limit = q.limit.clamp(1, 500);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let now = UnixMillis::now();
    let mut hits = run_match(conn, q, &terms.join(" AND "), now)?;
    if hits.len() < limit && terms.len() > 1 {
        let partial = run_match(conn, q, &terms.join(" OR "), now)?;
        for mut hit in partial {
            if !hits.iter().any(|h| h.id == hit.id) {
                hit.score *= PARTIAL_MATCH_FACTOR;
                hits.push(hit);
            }
        }
    }
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.created_at.cmp(&a.created_at))
    });
    hits.truncate(limit);
    Ok(hits)
}

struct Filters {
    sql: String,
    params: Vec<Box<dyn ToSql>>,
}

fn filters(q: &SearchQuery, table: &str) -> Filters {
    let mut sql = String::new();
    let mut params: Vec<Box<dyn ToSql>> = Vec::new();
    // ?1 is the MATCH expression; filter parameters follow from ?2.
    let mut bind = |value: Box<dyn ToSql>| {
        params.push(value);
        params.len() + 1
    };
    if let Some(project) = &q.project {
        // A project is named by its key or its human name.
        let n = bind(Box::new(project.clone()));
        sql.push_str(&format!(
            " AND ({table}.project_key = ?{n} OR {table}.project_name = ?{n})"
        ));
    }
    if let Some(machine) = &q.machine {
        let n = bind(Box::new(machine.clone()));
        sql.push_str(&format!(" AND {table}.machine_id = ?{n}"));
    }
    if let Some(since) = q.since {
        let n = bind(Box::new(since.0));
        sql.push_str(&format!(" AND {table}.created_at >= ?{n}"));
    }
    if let Some(until) = q.until {
        let n = bind(Box::new(until.0));
        sql.push_str(&format!(" AND {table}.created_at < ?{n}"));
    }
    if let Some(t) = q
        .record_type
        .filter(|t| *t != RecordType::Summary && table == "o")
    {
        let n = bind(Box::new(t.as_str().to_string()));
        sql.push_str(&format!(" AND {table}.kind = ?{n}"));
    }
    Filters { sql, params }
}

fn run_match(
    conn: &Connection,
    q: &SearchQuery,
    expr: &str,
    now: UnixMillis,
) -> Result<Vec<Hit>, StoreError> {
    let mut hits = Vec::new();
    let want_obs = q.record_type != Some(RecordType::Summary);
    let want_sum = matches!(q.record_type, None | Some(RecordType::Summary));
    if want_obs {
        let f = filters(q, "o");
        let sql = format!(
            "SELECT o.id, o.kind, o.title, o.project_key, o.project_name, o.machine_id,
                    o.session_id, o.created_at, o.tags,
                    length(o.title) + length(o.input) + length(o.response),
                    bm25(observations_fts, 4.0, 1.0, 2.0)
             FROM observations_fts JOIN observations o ON o.rowid = observations_fts.rowid
             WHERE observations_fts MATCH ?1 AND o.deleted = 0 {}
             ORDER BY observations_fts.rowid DESC LIMIT {CANDIDATES}",
            f.sql
        );
        collect(conn, &sql, expr, &f, q, now, &mut hits, |kind| {
            kind.parse().unwrap_or(RecordType::Note)
        })?;
    }
    if want_sum {
        let f = filters(q, "s");
        let sql = format!(
            "SELECT s.id, 'summary', substr(s.text, 1, 160), s.project_key, s.project_name,
                    s.machine_id, s.session_id, s.created_at, s.tags,
                    length(s.text) + length(s.key_points),
                    bm25(summaries_fts, 2.0, 1.0, 1.0)
             FROM summaries_fts JOIN summaries s ON s.rowid = summaries_fts.rowid
             WHERE summaries_fts MATCH ?1 AND s.deleted = 0 {}
             ORDER BY summaries_fts.rowid DESC LIMIT {CANDIDATES}",
            f.sql
        );
        collect(conn, &sql, expr, &f, q, now, &mut hits, |_| {
            RecordType::Summary
        })?;
    }
    Ok(hits)
}

#[allow(clippy::too_many_arguments)]
fn collect(
    conn: &Connection,
    sql: &str,
    expr: &str,
    f: &Filters,
    q: &SearchQuery,
    now: UnixMillis,
    hits: &mut Vec<Hit>,
    record_type: impl Fn(&str) -> RecordType,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut params: Vec<&dyn ToSql> = vec![&expr];
    params.extend(f.params.iter().map(|p| p.as_ref()));
    let mut rows = stmt.query(params.as_slice())?;
    let ctx_tags: Vec<String> = Vec::new();
    let ctx = RankContext {
        project: q.current_project.as_deref(),
        tags: &ctx_tags,
        now,
    };
    while let Some(row) = rows.next()? {
        let kind: String = row.get(1)?;
        let project: String = row.get(3)?;
        let created_at: i64 = row.get(7)?;
        let tags: Vec<String> = serde_json::from_str(&row.get::<_, String>(8)?).unwrap_or_default();
        let size: i64 = row.get(9)?;
        let bm25: f64 = row.get(10)?;
        let weight = ranking::weight(&ctx, &project, &tags, UnixMillis(created_at));
        hits.push(Hit {
            id: row.get(0)?,
            record_type: record_type(&kind),
            title: row.get(2)?,
            project_name: row.get(4)?,
            project,
            machine_id: row.get(5)?,
            session_id: row.get(6)?,
            created_at,
            tokens: (size.max(0) as usize).div_ceil(4),
            score: ranking::score(-bm25, weight),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_quote_everything_and_drop_pure_punctuation() {
        assert_eq!(
            query_terms("renew_jwt AND \"x"),
            vec!["\"renew_jwt\"", "\"\"\"x\""]
        );
        assert!(query_terms("*** ( ) 🚀 ---").is_empty());
        assert_eq!(query_terms("NEAR(a b)"), vec!["\"NEAR(a\"", "\"b)\""]);
        assert_eq!(query_terms("title:foo"), vec!["\"title:foo\""]);
    }

    #[test]
    fn stopwords_go_unless_nothing_else_is_left() {
        assert_eq!(
            query_terms("how did we refresh the token"),
            vec!["\"refresh\"", "\"token\""]
        );
        assert_eq!(query_terms("the"), vec!["\"the\""]);
    }

    #[test]
    fn huge_queries_are_capped() {
        let text = "word ".repeat(2_000) + &"x".repeat(10_000);
        let terms = query_terms(&text);
        assert!(terms.len() <= MAX_TERMS);
        assert!(
            terms
                .iter()
                .all(|t| t.chars().count() <= MAX_TERM_CHARS + 2)
        );
    }
}
