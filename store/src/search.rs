//! Local search: any text a user types becomes a safe FTS5 query, ranked by text
//! relevance times the ranking weights (docs/DESIGN.md), at a cost bounded whatever the words.
//!
//! Why not `ORDER BY bm25()`: FTS5 computes bm25's document frequencies by walking
//! each phrase's whole doclist, so a common word (`error`, `src`, `cargo`) costs
//! time in proportion to every row that holds it. Instead, for each term and for
//! all terms together, we read only the newest [`CANDIDATES`] matching rowids (a
//! cheap walk of the index in rowid order, filters included as `scope` tokens).
//! Those lists give each candidate the set of terms it matches and estimate each
//! term's document frequency (how far back its newest matches reach). A term with
//! fewer matches than the bound is read whole, so its old records are candidates
//! too; and for those records one more query (`phrases`) says which of the cut
//! terms they also hold, unless a term is in more than `CHECKED_MAX_DF` records
//! (that check reads a term's matches back to the oldest record, so the cap keeps
//! it bounded). An identifier repeated in hundreds of newer records thus still
//! counts for the old record a rarer query word finds. Relevance is then BM25
//! without term frequency: the sum of the matched terms' IDF among the records the
//! search is asked over (its filters' scope, as the matches are counted), doubled
//! for terms in the title (`held.rs`), scaled by the share of query terms matched
//! and a mild length normalisation. Only the best few candidates are read from the
//! table for the weights. A very common word thus ranks among its most recent
//! matches; add words or `--until` to reach older ones. In observations, a term of
//! two or more parts (a path, a `snake_case` or dotted name) is matched by its
//! identifier pairs (`pairs.rs`), an AND of rare tokens, once every observation has
//! them; before that (a store upgraded in place), as the phrase of its parts.

use super::StoreError;
use super::held::{InTitles, held_share, held_weight};
use super::scope;
use rusqlite::{Connection, OptionalExtension, ToSql, params_from_iter};
use serde::{Deserialize, Serialize};
use solaria_shared::UnixMillis;
use solaria_shared::ranking::{self, RankContext};
use std::collections::{HashMap, HashSet};

/// The most matches read per term (and for all terms together).
pub const CANDIDATES: usize = 200;
/// The most records a term cut at [`CANDIDATES`] may hold (estimated) and still be
/// checked against the records of a query's rarer terms: the check reads the term's
/// matches back to the oldest of those records, so this bounds its cost whatever the
/// store's size. Identifiers and error codes are below it; words like `error` or
/// `src` in a large store are above it and keep only their newest matches.
const CHECKED_MAX_DF: f64 = 10_000.0;
/// The most terms taken from a query (a 10,000-character paste stays fast).
const MAX_TERMS: usize = 12;
/// The longest single term kept, in characters.
const MAX_TERM_CHARS: usize = 128;
/// Length normalisation strength (0: none; BM25 uses 0.75 with term frequency).
const LENGTH_B: f64 = 0.25;

/// What kind of record a search is restricted to (one type for both sides).
pub use solaria_shared::RecordType;

/// A search request.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub text: String,
    /// Only this project: key, name or `owner/repo` (`records::matching_projects`).
    pub project: Option<String>,
    pub record_type: Option<RecordType>,
    /// Only records last written by this machine (its id or its name).
    pub machine: Option<String>,
    pub since: Option<UnixMillis>,
    pub until: Option<UnixMillis>,
    pub limit: usize,
    /// The project the user is in, for the weights (not a filter).
    pub current_project: Option<String>,
}

/// One result of a search: enough to decide whether to fetch the full record.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    let meaningful: Vec<&str> = chunks
        .iter()
        .copied()
        .filter(|c| !solaria_shared::words::is_stopword(c))
        .collect();
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

/// Runs a lexical search over observations and summaries.
pub fn search(conn: &Connection, q: &SearchQuery) -> Result<Vec<Hit>, StoreError> {
    let limit = q.limit.clamp(1, 500);
    let Some(resolved) = Resolved::new(conn, q)? else {
        return Ok(Vec::new());
    };
    let mut hits: Vec<Hit> = lexical_candidates(conn, &resolved, limit)?
        .into_iter()
        .map(|c| c.hit)
        .collect();
    sort_hits(&mut hits);
    hits.truncate(limit);
    Ok(hits)
}

/// Best score first; the newer record first on a tie.
pub fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.created_at.cmp(&a.created_at))
    });
}

/// A query whose filters are resolved: project names to keys, machine names to ids.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub query: SearchQuery,
    pub projects: Option<Vec<String>>,
    pub now: UnixMillis,
}

impl Resolved {
    /// `None` when a filter names nothing that exists (so nothing can match).
    pub fn new(conn: &Connection, q: &SearchQuery) -> Result<Option<Resolved>, StoreError> {
        Resolved::within(conn, q, None)
    }

    /// [`Resolved::new`], kept to the project whose key is `project_key` when one is
    /// given: that key exactly, never resolved as a name (recall stays in the
    /// prompt's project, whatever other projects are called). Like `--project`, it
    /// narrows the full-text match and the vector search themselves, so the
    /// project's best records are the candidates however many better ones other
    /// projects hold.
    pub fn within(
        conn: &Connection,
        q: &SearchQuery,
        project_key: Option<&str>,
    ) -> Result<Option<Resolved>, StoreError> {
        let mut projects = match &q.project {
            Some(p) => {
                let keys = project_keys(conn, p)?;
                if keys.is_empty() {
                    return Ok(None);
                }
                Some(keys)
            }
            None => None,
        };
        if let Some(key) = project_key {
            match &mut projects {
                Some(keys) => {
                    keys.retain(|k| k == key);
                    if keys.is_empty() {
                        return Ok(None);
                    }
                }
                None => projects = Some(vec![key.to_string()]),
            }
        }
        let machine = match &q.machine {
            Some(m) => match machine_id(conn, m)? {
                Some(id) => Some(id),
                None => return Ok(None),
            },
            None => None,
        };
        Ok(Some(Resolved {
            query: SearchQuery {
                machine,
                ..q.clone()
            },
            projects,
            now: UnixMillis::now(),
        }))
    }
}

/// A lexical candidate: its hit (scored relevance × weight) and the parts of that
/// score, for fusion with vector similarity.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub hit: Hit,
    pub table: Table,
    pub rowid: i64,
    /// How much of the query the record matches, 0..=1 in absolute terms: its text
    /// score over the score of a record matching every term in its title.
    pub confidence: f64,
    /// Which of the query's terms the record holds (bit i = term i), and which of
    /// those in its title: what its share of the query is weighed from
    /// (`rarity::Rarity::share`).
    pub held: u32,
    pub held_in_title: u32,
    /// The ranking weight (docs/DESIGN.md).
    pub weight: f64,
}

/// The best lexical candidates of both tables (at most about `3 × limit` each).
pub(crate) fn lexical_candidates(
    conn: &Connection,
    r: &Resolved,
    limit: usize,
) -> Result<Vec<Candidate>, StoreError> {
    let terms = query_terms(&r.query.text);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for table in Table::ALL {
        if !table.wanted(r.query.record_type) {
            continue;
        }
        let scope = table.scope_expr(&r.query, r.projects.as_deref());
        out.extend(search_table(
            conn,
            table,
            &terms,
            scope.as_deref(),
            &r.query,
            limit,
            r.now,
        )?);
    }
    Ok(out)
}

/// The project keys a `--project` value names (`records::matching_projects`).
fn project_keys(conn: &Connection, project: &str) -> Result<Vec<String>, StoreError> {
    Ok(super::records::matching_projects(conn, project)?
        .into_iter()
        .map(|p| p.key)
        .collect())
}

/// The rowids of `table`'s records of the projects `keys`, read from the table's
/// project index alone (erased rows included: they have no vector, and every
/// candidate is read again with its filters).
pub(crate) fn rows_of_projects(
    conn: &Connection,
    table: Table,
    keys: &[String],
) -> Result<HashSet<i64>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid FROM {} WHERE project_key = ?1",
        table.base()
    ))?;
    let mut rows = HashSet::new();
    for key in keys {
        for row in stmt.query_map([key], |r| r.get(0))? {
            rows.insert(row?);
        }
    }
    Ok(rows)
}

/// The machine a `--machine` value names (an id, or a machine's name).
fn machine_id(conn: &Connection, machine: &str) -> Result<Option<String>, StoreError> {
    if let Ok(id) = machine.parse::<solaria_shared::MachineId>() {
        return Ok(Some(id.to_string()));
    }
    Ok(conn
        .prepare_cached("SELECT id FROM machines WHERE name = ?1")?
        .query_row([machine], |r| r.get(0))
        .optional()?)
}

/// The searched tables (links are not indexed: they are found from their ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Table {
    Observations,
    Summaries,
    Knowledge,
}

impl Table {
    pub(crate) const ALL: [Table; 3] = [Table::Observations, Table::Summaries, Table::Knowledge];

    pub(crate) fn wanted(self, t: Option<RecordType>) -> bool {
        let Some(t) = t else {
            return true;
        };
        match self {
            Table::Observations => t.observation_kind().is_some(),
            Table::Summaries => t == RecordType::Summary,
            Table::Knowledge => t.knowledge_kind().is_some(),
        }
    }

    fn fts(self) -> &'static str {
        match self {
            Table::Observations => "observations_fts",
            Table::Summaries => "summaries_fts",
            Table::Knowledge => "knowledge_fts",
        }
    }

    pub(crate) fn base(self) -> &'static str {
        match self {
            Table::Observations => "observations",
            Table::Summaries => "summaries",
            Table::Knowledge => "knowledge",
        }
    }

    /// The columns user text is matched against (never `scope`).
    pub(super) fn text_columns(self) -> &'static str {
        match self {
            Table::Observations => "{title body tool}",
            Table::Summaries => "{text key_points tags}",
            Table::Knowledge => "{title text}",
        }
    }

    /// The filter part of the MATCH expression, if any.
    fn scope_expr(self, q: &SearchQuery, projects: Option<&[String]>) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(keys) = projects {
            let tokens: Vec<String> = keys.iter().map(|k| scope::project(k)).collect();
            parts.push(format!("scope : ({})", tokens.join(" OR ")));
        }
        if let Some(machine) = &q.machine {
            let token = machine
                .parse()
                .map(scope::machine)
                .unwrap_or_else(|_| "zzmunknown".to_string());
            parts.push(format!("scope : {token}"));
        }
        if self == Table::Observations
            && let Some(kind) = q.record_type.and_then(RecordType::observation_kind)
        {
            parts.push(format!("scope : {}", scope::kind(kind)));
        }
        if self == Table::Knowledge
            && let Some(kind) = q.record_type.and_then(RecordType::knowledge_kind)
        {
            parts.push(format!("scope : {}", scope::kind_named(kind.as_str())));
        }
        (!parts.is_empty()).then(|| parts.join(" AND "))
    }
}

/// The newest matching rowids of `expr` (optionally within a time range).
pub(super) fn newest_matches(
    conn: &Connection,
    table: Table,
    expr: &str,
    q: &SearchQuery,
) -> Result<Vec<i64>, StoreError> {
    let fts = table.fts();
    let (sql, params): (String, Vec<Box<dyn ToSql>>) = if q.since.is_none() && q.until.is_none() {
        (
            format!(
                "SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 ORDER BY rowid DESC LIMIT {CANDIDATES}"
            ),
            vec![Box::new(expr.to_string())],
        )
    } else {
        let since = q.since.map_or(i64::MIN, |t| t.0);
        let until = q.until.map_or(i64::MAX, |t| t.0);
        (
            format!(
                "SELECT f.rowid FROM {fts} f JOIN {base} b ON b.rowid = f.rowid
                 WHERE f.{fts} MATCH ?1 AND b.created_at >= ?2 AND b.created_at < ?3
                 ORDER BY f.rowid DESC LIMIT {CANDIDATES}",
                base = table.base()
            ),
            vec![Box::new(expr.to_string()), Box::new(since), Box::new(until)],
        )
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The newest `n` rows matching `expr`, each with the bitmask of the expression's
/// phrases it holds (`phrases::NAME`).
fn phrases_held(
    conn: &Connection,
    table: Table,
    expr: &str,
    q: &SearchQuery,
    n: usize,
) -> Result<Vec<(i64, i64)>, StoreError> {
    let fts = table.fts();
    let held = super::phrases::NAME;
    let (sql, params): (String, Vec<Box<dyn ToSql>>) = if q.since.is_none() && q.until.is_none() {
        (
            format!(
                "SELECT rowid, {held}({fts}) FROM {fts} WHERE {fts} MATCH ?1
                 ORDER BY rowid DESC LIMIT {n}"
            ),
            vec![Box::new(expr.to_string())],
        )
    } else {
        let since = q.since.map_or(i64::MIN, |t| t.0);
        let until = q.until.map_or(i64::MAX, |t| t.0);
        (
            format!(
                "SELECT f.rowid, {held}(f.{fts}) FROM {fts} f JOIN {base} b ON b.rowid = f.rowid
                 WHERE f.{fts} MATCH ?1 AND b.created_at >= ?2 AND b.created_at < ?3
                 ORDER BY f.rowid DESC LIMIT {n}",
                base = table.base()
            ),
            vec![Box::new(expr.to_string()), Box::new(since), Box::new(until)],
        )
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many records hold a term, from its newest matches: exact when they are all
/// there is, else estimated from how far back (in rowids) they reach.
pub(super) fn doc_freq(matches: &[i64], rows: f64, max_rowid: i64) -> f64 {
    match matches.last() {
        Some(&oldest) if matches.len() == CANDIDATES => {
            let span = (max_rowid - oldest + 1).max(1) as f64;
            (CANDIDATES as f64 * rows / span).min(rows)
        }
        _ => matches.len() as f64,
    }
}

/// Inverse document frequency of a term from its newest matches ([`doc_freq`])
/// among the `collection` records a search is asked over.
fn idf(matches: &[i64], rows: f64, max_rowid: i64, collection: f64) -> f64 {
    bm25_idf(
        doc_freq(matches, rows, max_rowid).min(collection),
        collection,
    )
}

/// bm25's inverse document frequency of a term that `df` of `rows` records hold.
pub(super) fn bm25_idf(df: f64, rows: f64) -> f64 {
    (1.0 + (rows - df + 0.5) / (df + 0.5)).ln()
}

/// The first and last rowid of `table` (`None` when it is empty). Two queries:
/// SQLite answers a lone min() or max() from the b-tree's edge, but scans the
/// whole table for both in one statement.
pub(super) fn rowid_range(
    conn: &Connection,
    table: Table,
) -> Result<Option<(i64, i64)>, StoreError> {
    let edge = |agg: &str| -> Result<Option<i64>, StoreError> {
        Ok(conn
            .prepare_cached(&format!("SELECT {agg}(rowid) FROM {}", table.base()))?
            .query_row([], |r| r.get(0))?)
    };
    Ok(edge("min")?.zip(edge("max")?))
}

/// What each term is matched as in `table`: itself (a quoted phrase), or an
/// identifier's pairs once every observation has them (`pairs.rs`), and how many
/// phrases that is.
pub(super) fn term_exprs(
    conn: &Connection,
    table: Table,
    terms: &[String],
) -> Result<Vec<(String, usize)>, StoreError> {
    let by_pairs = table == Table::Observations && super::pairs::complete(conn)?;
    Ok(terms
        .iter()
        .map(|term| {
            let pairs = by_pairs
                .then(|| super::pairs::query(&unquoted(term)))
                .flatten();
            match pairs {
                Some(expr) => {
                    let phrases = expr.matches(" AND ").count() + 1;
                    (expr, phrases)
                }
                None => (term.clone(), 1),
            }
        })
        .collect())
}

#[allow(clippy::too_many_arguments)]
fn search_table(
    conn: &Connection,
    table: Table,
    terms: &[String],
    scope: Option<&str>,
    q: &SearchQuery,
    limit: usize,
    now: UnixMillis,
) -> Result<Vec<Candidate>, StoreError> {
    let Some((min_rowid, max_rowid)) = rowid_range(conn, table)? else {
        return Ok(Vec::new());
    };
    let rows = (max_rowid - min_rowid + 1) as f64;
    let with_scope = |text: String| match scope {
        Some(s) => format!("({s}) AND {} : ({text})", table.text_columns()),
        None => format!("{} : ({text})", table.text_columns()),
    };

    // The records the search is asked over: its scope's (the filters' tokens),
    // else the table's. A term's rarity is counted among them, as its matches are:
    // a word most records of a project hold says little in a search of that
    // project, however rare it is in the others.
    let collection = match scope {
        Some(s) => doc_freq(&newest_matches(conn, table, s, q)?, rows, max_rowid).max(1.0),
        None => rows,
    };
    let exprs = term_exprs(conn, table, terms)?;

    // Which candidate matches which terms (bit i = term i).
    let mut matched: HashMap<i64, u32> = HashMap::new();
    let mut idfs = Vec::with_capacity(terms.len());
    // Terms whose every match was read (`rare`), and those cut at the bound that
    // are checked for the rare terms' records (`truncated`).
    let (mut rare, mut truncated) = (Vec::new(), Vec::new());
    let mut rare_matches = 0;
    for (i, (expr, _)) in exprs.iter().enumerate() {
        let list = newest_matches(conn, table, &with_scope(expr.clone()), q)?;
        idfs.push(idf(&list, rows, max_rowid, collection));
        if list.len() == CANDIDATES {
            // Checked below only if reading its matches back stays cheap.
            if doc_freq(&list, rows, max_rowid) <= CHECKED_MAX_DF {
                truncated.push(i);
            }
        } else if !list.is_empty() {
            rare.push(i);
            rare_matches += list.len();
        }
        for rowid in list {
            *matched.entry(rowid).or_default() |= 1 << i;
        }
    }
    // A record found through a rare term may also hold a more common one (an
    // identifier repeated in hundreds of newer records) whose newest matches did
    // not reach back to it. One query over the rare terms' records that hold such
    // a term (at most `rare_matches` rows, so the answer is whole) says which ones
    // each holds: every record holding a rare term then has its exact set of terms
    // but for words in more than `CHECKED_MAX_DF` records, and an expensive rare
    // phrase is evaluated once.
    if !rare.is_empty() && !truncated.is_empty() {
        let any = |list: &[usize]| {
            list.iter()
                .map(|&i| exprs[i].0.as_str())
                .collect::<Vec<_>>()
                .join(" OR ")
        };
        // The common terms' phrases first, in order (a term by its pairs is several
        // phrases, all of which it needs); the scope's tokens last.
        let text = format!(
            "{} : (({}) AND ({}))",
            table.text_columns(),
            any(&truncated),
            any(&rare)
        );
        let expr = match scope {
            Some(s) => format!("{text} AND ({s})"),
            None => text,
        };
        // Each checked term's phrases: bits `first..first + count` of the mask (at
        // most 63 phrases are reported; a term past them is not credited).
        let mut first = 0;
        let spans: Vec<(usize, u64)> = truncated
            .iter()
            .map(|&j| {
                let count = exprs[j].1;
                let mask = if first + count <= 63 {
                    ((1u64 << count) - 1) << first
                } else {
                    0
                };
                first += count;
                (j, mask)
            })
            .collect();
        for (rowid, held) in phrases_held(conn, table, &expr, q, rare_matches)? {
            let bits = matched.entry(rowid).or_default();
            for &(j, mask) in &spans {
                if mask != 0 && (held as u64) & mask == mask {
                    *bits |= 1 << j;
                }
            }
        }
    }
    if terms.len() > 1 {
        let all = (1u32 << terms.len()) - 1;
        let every: Vec<&str> = exprs.iter().map(|(expr, _)| expr.as_str()).collect();
        for rowid in newest_matches(conn, table, &with_scope(every.join(" AND ")), q)? {
            matched.insert(rowid, all);
        }
    }

    // Rank by text relevance first; read only the best few rows.
    let relevance = |bits: u32| -> (f64, f64) {
        let sum: f64 = (0..terms.len())
            .filter(|i| bits & (1 << i) != 0)
            .map(|i| idfs[i])
            .sum();
        let coverage = bits.count_ones() as f64 / terms.len() as f64;
        (sum, coverage)
    };
    let mut ranked: Vec<(i64, u32, f64)> = matched
        .into_iter()
        .map(|(rowid, bits)| {
            let (sum, coverage) = relevance(bits);
            (rowid, bits, sum * coverage)
        })
        .collect();
    ranked.sort_by(|a, b| b.2.total_cmp(&a.2).then(b.0.cmp(&a.0)));
    ranked.truncate((limit * 3).max(60));

    let mut rows_read = Vec::with_capacity(ranked.len());
    for (rowid, bits, _) in &ranked {
        if let Some(row) = read_row(conn, table, *rowid)? {
            rows_read.push((*rowid, row, *bits));
        }
    }
    let avg_size = (rows_read
        .iter()
        .map(|(_, r, _)| r.size.max(1) as f64)
        .sum::<f64>()
        / rows_read.len().max(1) as f64)
        .max(1.0);
    let quoted: Vec<String> = terms.iter().map(|t| unquoted(t)).collect();
    let mut in_titles = InTitles::of(&quoted);
    Ok(rows_read
        .into_iter()
        .map(|(rowid, row, bits)| {
            let held_in_title = in_titles.held(&row.title) & bits;
            let coverage = bits.count_ones() as f64 / terms.len() as f64;
            let norm = 1.0 / (1.0 - LENGTH_B + LENGTH_B * row.size.max(1) as f64 / avg_size);
            let relevance = held_weight(&idfs, bits, held_in_title) * coverage * norm;
            let confidence = held_share(&idfs, bits, held_in_title) * coverage;
            let weight = row.weight(q.current_project.as_deref(), now);
            Candidate {
                hit: row.into_hit(table, ranking::score(relevance, weight)),
                table,
                rowid,
                confidence,
                held: bits,
                held_in_title,
                weight,
            }
        })
        .collect())
}

/// A term of [`query_terms`] as the user typed it (quotes undone).
fn unquoted(term: &str) -> String {
    term.trim_matches('"').replace("\"\"", "\"")
}

/// Reads one candidate row for ranking and display (`None` if it is gone).
pub(crate) fn read_row(
    conn: &Connection,
    table: Table,
    rowid: i64,
) -> Result<Option<Row>, StoreError> {
    let sql = match table {
        Table::Observations => {
            "SELECT id, kind, title, project_key, project_name, machine_id, session_id,
                    created_at, tags, length(title) + length(input) + length(response),
                    NULL, tool_name
             FROM observations WHERE rowid = ?1 AND deleted = 0"
        }
        Table::Summaries => {
            "SELECT id, 'summary', substr(text, 1, 160), project_key, project_name, machine_id,
                    session_id, created_at, tags, length(text) + length(key_points), NULL, NULL
             FROM summaries WHERE rowid = ?1 AND deleted = 0"
        }
        Table::Knowledge => {
            "SELECT id, kind, title, project_key, project_name, machine_id,
                    coalesce(session_id, ''), created_at,
                    coalesce(json_extract(body, '$.tags'), '[]'), length(title) + length(text),
                    status, NULL
             FROM knowledge WHERE rowid = ?1 AND deleted = 0
               -- An expired memory leaves search (Knowledge::expired); it stays readable.
               AND coalesce(json_extract(body, '$.expires_at'), 9223372036854775807)
                   > CAST(unixepoch('subsec') * 1000 AS INTEGER)"
        }
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row([rowid], |r| {
            Ok(Row {
                id: r.get(0)?,
                kind: r.get(1)?,
                title: r.get(2)?,
                project: r.get(3)?,
                project_name: r.get(4)?,
                machine_id: r.get(5)?,
                session_id: r.get(6)?,
                created_at: r.get(7)?,
                tags: r.get(8)?,
                size: r.get(9)?,
                standing: match table {
                    Table::Knowledge => Some(Standing { status: r.get(10)? }),
                    _ => None,
                },
                tool_name: r.get(11)?,
            })
        })
        .optional()?)
}

/// The columns of a candidate read for ranking and display.
#[derive(Debug)]
pub(crate) struct Row {
    id: String,
    kind: String,
    title: String,
    project: String,
    project_name: String,
    machine_id: String,
    session_id: String,
    created_at: i64,
    tags: String,
    size: i64,
    /// Knowledge only: whether it still stands.
    standing: Option<Standing>,
    /// Events only: the tool that made it.
    tool_name: Option<String>,
}

/// What decides whether a knowledge row stands (`knowledge::status_stands`).
#[derive(Debug)]
struct Standing {
    status: String,
}

impl Row {
    /// Whether the row passes a query's filters (vector candidates are not found
    /// through the FTS `scope` tokens, so they are checked here).
    pub(crate) fn passes(&self, r: &Resolved) -> bool {
        let q = &r.query;
        r.projects
            .as_ref()
            .is_none_or(|keys| keys.contains(&self.project))
            && q.machine.as_ref().is_none_or(|m| *m == self.machine_id)
            && q.record_type.is_none_or(|t| t.as_str() == self.kind)
            && q.since.is_none_or(|t| self.created_at >= t.0)
            && q.until.is_none_or(|t| self.created_at < t.0)
    }

    /// The ranking weight (docs/DESIGN.md) of this record for a user in `current_project`.
    pub(crate) fn weight(&self, current_project: Option<&str>, now: UnixMillis) -> f64 {
        let tags: Vec<String> = serde_json::from_str(&self.tags).unwrap_or_default();
        let ctx_tags: Vec<String> = Vec::new();
        let ctx = RankContext {
            project: current_project,
            tags: &ctx_tags,
            now,
        };
        if let Some(standing) = &self.standing {
            // Expired memories never get here (`read_row` leaves them out).
            let stands = solaria_shared::knowledge::status_stands(&standing.status);
            return ranking::knowledge_weight(&ctx, &self.project, stands);
        }
        ranking::weight(&ctx, &self.project, &tags, UnixMillis(self.created_at))
            * ranking::event_prior(self.tool_name.as_deref())
    }

    /// The search hit of this row, with its final score.
    pub(crate) fn into_hit(self, table: Table, score: f64) -> Hit {
        Hit {
            record_type: match table {
                Table::Summaries => RecordType::Summary,
                Table::Observations | Table::Knowledge => {
                    self.kind.parse().unwrap_or(RecordType::Note)
                }
            },
            id: self.id,
            title: self.title,
            project: self.project,
            project_name: self.project_name,
            machine_id: self.machine_id,
            session_id: self.session_id,
            created_at: self.created_at,
            tokens: solaria_shared::context::tokens_for_chars(self.size.max(0) as usize),
            score,
        }
    }
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

    /// A store holding `texts` as notes, oldest first, one day apart; and their ids.
    fn store_of(texts: &[String]) -> (tempfile::TempDir, crate::Store, Vec<String>) {
        let titled: Vec<(&str, &str)> = texts.iter().map(|t| ("note", t.as_str())).collect();
        store_titled(&titled)
    }

    /// [`store_of`] with each note's title.
    fn store_titled(notes: &[(&str, &str)]) -> (tempfile::TempDir, crate::Store, Vec<String>) {
        let placed: Vec<(&str, &str, &str)> = notes.iter().map(|&(t, b)| ("p", t, b)).collect();
        store_placed(&placed)
    }

    /// [`store_titled`] with each note's project.
    fn store_placed(
        notes: &[(&str, &str, &str)],
    ) -> (tempfile::TempDir, crate::Store, Vec<String>) {
        use solaria_shared::{Observation, ObservationId, ObservationKind, RecordMeta};
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = crate::Store::open(&dir.path().join("m.db"), "m").expect("opens");
        let now = UnixMillis::now();
        let days = notes.len() as i64;
        let ids = store
            .write(|w| {
                let session = crate::fixtures::session(w, now.minus_days(days + 1))?;
                let meta = session.meta;
                let mut ids = Vec::new();
                for (i, (key, title, text)) in notes.iter().enumerate() {
                    let updated = w.tick();
                    let id = ObservationId::new();
                    w.insert_observation(&Observation {
                        id,
                        meta: RecordMeta { updated, ..meta },
                        session_id: session.id,
                        project: solaria_shared::Project {
                            key: key.to_string(),
                            name: key.to_string(),
                        },
                        kind: ObservationKind::Note,
                        tool_name: None,
                        title: title.to_string(),
                        input: text.to_string(),
                        response: String::new(),
                        files: Vec::new(),
                        metadata: serde_json::json!({}),
                        tags: Vec::new(),
                        created_at: now.minus_days(days - i as i64),
                    })?;
                    ids.push(id.to_string());
                }
                Ok(ids)
            })
            .expect("records");
        (dir, store, ids)
    }

    /// The ids of the first five hits for `text`, best first.
    fn found(store: &crate::Store, text: &str) -> Vec<String> {
        let q = SearchQuery {
            text: text.into(),
            limit: 5,
            ..SearchQuery::default()
        };
        let hits = search(store.conn(), &q).expect("search");
        hits.into_iter().map(|h| h.id).collect()
    }

    #[test]
    fn a_title_holds_a_word_in_any_form_and_an_option_as_written() {
        let (_dir, store, ids) = store_titled(&[
            ("Rotate refresh tokens", "on every renewal"),
            ("Edit charts/crm/values.yaml", "replicas: 3"),
            ("Caducidad de las sesiones", "una hora"),
            (
                "note",
                "the token, the charts and the caducidad are in the text alone",
            ),
            (
                "git commit: cover profile editing",
                "docker compose --profile test up",
            ),
        ]);
        let q = SearchQuery {
            text: "token charts, caducan --profile".into(),
            ..SearchQuery::default()
        };
        let resolved = Resolved::new(store.conn(), &q)
            .expect("resolves")
            .expect("exists");
        let candidates = lexical_candidates(store.conn(), &resolved, 10).expect("search");
        let in_title = |id: &str| {
            let c = candidates.iter().find(|c| c.hit.id == id).expect("found");
            (c.held, c.held_in_title)
        };
        assert_eq!(in_title(&ids[0]), (0b0001, 0b0001), "tokens: token");
        assert_eq!(in_title(&ids[1]), (0b0010, 0b0010), "charts/crm: charts,");
        assert_eq!(in_title(&ids[2]), (0b0100, 0b0100), "caducidad: caducan");
        assert_eq!(in_title(&ids[3]), (0b0111, 0), "in the text alone");
        assert_eq!(in_title(&ids[4]), (0b1000, 0), "an option is not its word");
    }

    #[test]
    fn a_word_most_of_a_project_holds_says_little_in_a_search_of_that_project() {
        // Project `infra`: twenty notes on its charts, one of them on secrets too;
        // project `web`, ten times larger, never speaks of charts.
        let mut notes = vec![("infra", "note", "charts and secrets manager")];
        notes.extend((0..20).map(|_| ("infra", "note", "charts/crm/values.yaml edited")));
        notes.extend((0..200).map(|_| ("web", "note", "a button restyled")));
        let (_dir, store, ids) = store_placed(&notes);
        let confidence = |project: Option<&str>, id: &str| {
            let q = SearchQuery {
                text: "charts secrets".into(),
                project: project.map(str::to_string),
                ..SearchQuery::default()
            };
            let resolved = Resolved::new(store.conn(), &q)
                .expect("resolves")
                .expect("exists");
            lexical_candidates(store.conn(), &resolved, 50)
                .expect("search")
                .into_iter()
                .find(|c| c.hit.id == id)
                .map(|c| c.confidence)
                .expect("a candidate")
        };
        // Within `infra`, "charts" is every note's word: holding it alone is
        // holding almost nothing of the query; the note holding both holds it all.
        assert!(confidence(Some("infra"), &ids[1]) < 0.01);
        assert!(confidence(Some("infra"), &ids[0]) > 0.45);
        // Over the whole memory, the charts are one project's rare word.
        assert!(confidence(None, &ids[1]) > 0.05);
    }

    #[test]
    fn an_old_record_keeps_an_identifier_repeated_in_many_newer_ones() {
        // The answer, then more newer records holding its error code than one term's
        // list reads, then a few holding its detail word alone.
        let mut texts = vec!["error[E0506] in tiered_rebate: copy the amount out".to_string()];
        for i in 0..(CANDIDATES + 40) {
            texts.push(format!(
                "build {i} failed with error[E0506] in another crate"
            ));
        }
        for i in 0..5 {
            texts.push(format!("tiered pricing idea {i}"));
        }
        let (_dir, store, ids) = store_of(&texts);
        // `workaround` is in no record: the answer does not hold every term. The
        // same with a time range (another form of the queries).
        let query = SearchQuery {
            text: "E0506 tiered workaround".into(),
            limit: 5,
            ..SearchQuery::default()
        };
        let ranged = SearchQuery {
            since: Some(UnixMillis::now().minus_days(1_000)),
            until: Some(UnixMillis::now()),
            ..query.clone()
        };
        for q in [query, ranged] {
            let hits = search(store.conn(), &q).expect("search");
            assert_eq!(hits.first().map(|h| &h.id), Some(&ids[0]), "{hits:#?}");
        }
    }

    #[test]
    fn identifiers_and_their_parts_are_found_by_their_pairs_and_before_them_as_phrases() {
        let texts: Vec<String> = [
            "edited src/quimo/ludalmo.rs to retry",
            "renamed make_token in auth.rs",
            "src quimo ludalmo rs make token: the same words, no identifier",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        let (_dir, mut store, ids) = store_of(&texts);
        let first = |store: &crate::Store, text: &str| found(store, text).into_iter().next();
        let expect = |store: &crate::Store| {
            assert!(crate::pairs::complete(store.conn()).expect("complete"));
            // By its pairs, an identifier is not the same words side by side in prose.
            assert_eq!(found(store, "src/quimo/ludalmo.rs"), [ids[0].clone()]);
            for (query, want) in [
                ("src/quimo/ludalmo.rs", &ids[0]),
                ("ludalmo.rs", &ids[0]),
                ("src/quimo", &ids[0]),
                ("make_token", &ids[1]),
                ("make_token auth.rs", &ids[1]),
            ] {
                assert_eq!(first(store, query).as_ref(), Some(want), "{query}");
            }
        };
        expect(&store);

        // A record written before pairs existed (as a store upgraded in place has):
        // until the daemon indexes it, identifiers are searched as phrases, and it
        // is found all the same.
        store
            .conn()
            .execute("UPDATE observations SET pairs = NULL", [])
            .expect("as before pairs");
        assert!(!crate::pairs::complete(store.conn()).expect("complete"));
        let as_phrase = found(&store, "src/quimo/ludalmo.rs");
        assert!(
            as_phrase.contains(&ids[0]) && as_phrase.contains(&ids[2]),
            "a phrase matches the words side by side too: {as_phrase:?}"
        );
        while crate::pairs::backfill(&mut store, 2).expect("backfill") > 0 {}
        expect(&store);
        // Merging the re-indexed segments changes no answer, and ends.
        let mut steps = 0;
        while crate::pairs::merge_step(&mut store).expect("merge") {
            steps += 1;
            assert!(steps < 100, "merging never ends");
        }
        expect(&store);
    }

    /// Re-indexes every observation as versions 1–10 did (input and response as
    /// stored, JSON and all), each given `pairs`: a store before the upgrade.
    fn index_as_version_10(store: &crate::Store, pairs: &str) {
        store
            .conn()
            .execute_batch(
                "DROP TRIGGER observations_fts_update;
                 CREATE TRIGGER observations_fts_update AFTER UPDATE ON observations BEGIN
                     DELETE FROM observations_fts WHERE rowid = old.rowid;
                     INSERT INTO observations_fts (rowid, title, body, tool, scope)
                     SELECT new.rowid, new.title, new.input || ' ' || new.response,
                            coalesce(new.tool_name, '') || ' ' || new.files || ' '
                                || coalesce(new.pairs, ''), new.scope
                     WHERE new.deleted = 0;
                 END;",
            )
            .expect("version 10's trigger");
        store
            .conn()
            .execute("UPDATE observations SET pairs = ?1", [pairs])
            .expect("re-indexed as version 10 did");
    }

    #[test]
    fn words_starting_a_line_of_a_tool_output_are_found_also_in_an_upgraded_store() {
        // As capture stores a tool's response: the agent's JSON, line breaks escaped.
        let output = serde_json::json!({
            "stdout": "running 3 tests\nquimoflux failed in src/zenta/borro.rs\n\tvelunt: 3",
            "stderr": "",
        })
        .to_string();
        assert!(output.contains("\\nquimoflux"), "{output}");
        let (_dir, mut store, ids) = store_of(&[output, "an unrelated note".into()]);
        for query in ["quimoflux", "velunt", "src/zenta/borro.rs", "borro.rs"] {
            assert_eq!(found(&store, query), [ids[0].clone()], "{query}");
        }

        // A store indexed by version 10's triggers read `\n` as text: the word after
        // it was indexed as `nquimoflux`, and its pairs began with `nquimoflux`.
        index_as_version_10(&store, "nquimofluxᛜfailed");
        assert!(found(&store, "quimoflux").is_empty());
        // Version 11 re-indexes such rows through the pairs pass of the daemon.
        store
            .conn()
            .execute_batch(include_str!("../migrations/0011_json_line_breaks.sql"))
            .expect("migration 11");
        assert!(!crate::pairs::complete(store.conn()).expect("complete"));
        while crate::pairs::backfill(&mut store, 10).expect("backfill") > 0 {}
        for query in ["quimoflux", "velunt", "src/zenta/borro.rs"] {
            assert_eq!(found(&store, query), [ids[0].clone()], "{query}");
        }
        let pairs: String = store
            .conn()
            .query_row(
                "SELECT pairs FROM observations WHERE id = ?1",
                [&ids[0]],
                |r| r.get(0),
            )
            .expect("pairs");
        assert!(!pairs.contains("nquimoflux"), "{pairs}");
    }

    #[test]
    fn a_tool_call_is_found_by_what_it_says_not_by_its_field_names_also_in_an_upgraded_store() {
        // As capture stores a Bash call and a Write: the agent's JSON.
        let bash = serde_json::json!({
            "command": "cargo build --release",
            "description": "Build the optimised binary",
        })
        .to_string();
        let write = serde_json::json!({
            "file_path": "/srv/app/notes.md",
            "content": "Rollout plan\nstep one: drain the queue",
        })
        .to_string();
        let note = "the description of the content pipeline".to_string();
        let (_dir, mut store, ids) = store_of(&[bash, write, note]);
        let by_what_it_says = |store: &crate::Store| {
            assert_eq!(found(store, "optimised binary"), [ids[0].clone()]);
            assert_eq!(found(store, "drain queue"), [ids[1].clone()]);
            assert_eq!(found(store, "rollout"), [ids[1].clone()]);
        };
        by_what_it_says(&store);
        for field in ["description", "content"] {
            assert_eq!(found(&store, field), [ids[2].clone()], "{field}");
        }
        assert!(found(&store, "command").is_empty());

        // A store indexed by version 11's trigger held the field names.
        // (Version 11's trigger read the JSON as version 10's did, escapes aside.)
        index_as_version_10(&store, "");
        assert_eq!(found(&store, "command"), [ids[0].clone()]);
        // Version 12 re-indexes the rows of JSON through the pairs pass of the daemon;
        // the note keeps its pairs and its row.
        store
            .conn()
            .execute_batch(
                "DROP VIEW observations_searched;
                 DROP TRIGGER observations_fts_insert;",
            )
            .expect("back to version 11");
        store
            .conn()
            .execute_batch(include_str!("../migrations/0012_json_strings_only.sql"))
            .expect("migration 12");
        assert_eq!(crate::pairs::backfill(&mut store, 10).expect("backfill"), 2);
        assert!(found(&store, "command").is_empty());
        assert_eq!(found(&store, "description"), [ids[2].clone()]);
        by_what_it_says(&store);
    }

    #[test]
    fn an_identifier_of_many_parts_repeated_in_many_records_is_checked_without_overflow() {
        // 64 one-letter parts (127 characters, under the term cap): 63 pair phrases.
        let ident: Vec<String> = (0..64)
            .map(|i| ((b'a' + (i % 26) as u8) as char).to_string())
            .collect();
        let ident = ident.join(".");
        let mut texts = vec![format!("{ident} zzrareword")];
        for _ in 0..(CANDIDATES + 5) {
            texts.push(format!("again {ident}"));
        }
        let (_dir, store, ids) = store_of(&texts);
        let q = SearchQuery {
            text: format!("{ident} zzrareword"),
            limit: 5,
            ..SearchQuery::default()
        };
        let hits = search(store.conn(), &q).expect("search");
        assert_eq!(hits.first().map(|h| &h.id), Some(&ids[0]), "{hits:#?}");
    }

    #[test]
    fn the_phrases_function_names_the_phrases_a_row_holds() {
        let texts: Vec<String> = ["alpha beta", "beta gamma_delta", "alpha"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        let (_dir, store, _) = store_of(&texts);
        let held: Vec<(i64, i64)> = store
            .conn()
            .prepare_cached(&format!(
                "SELECT rowid, {}(observations_fts) FROM observations_fts
                 WHERE observations_fts MATCH ?1 ORDER BY rowid",
                crate::phrases::NAME
            ))
            .expect("prepare")
            .query_map(["\"alpha\" OR \"beta\" OR \"gamma_delta\""], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(held, vec![(1, 0b011), (2, 0b110), (3, 0b001)]);
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
