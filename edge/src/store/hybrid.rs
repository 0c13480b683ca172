//! Search by meaning, by words, or both: vector neighbours and lexical candidates
//! fused into one ranking, then weighted like every search (docs/DESIGN.md, Ranking).
//!
//! Fusion works on absolute scores, not ranks. Every candidate gets both signals:
//! its cosine similarity to the query (from its stored vector, for lexical-only
//! candidates too) and its lexical confidence (how much of the query it matches,
//! 0..=1, 0 when it matches no word). Reciprocal rank fusion would instead reward a record for
//! being first in the lexical list even when that list is noise (a paraphrase
//! shares no word with its target, so the "best" lexical match is merely a record
//! with a common word), which measurably drags good vector hits down; see
//! `docs/BENCHMARKS.md` (retrieval quality) for the figures behind the choice.

use super::StoreError;
use super::search::{self, Candidate, Hit, Resolved, SearchQuery, Table};
use super::vectors::{self, Source};
use rusqlite::Connection;
use solaria_shared::ranking;

pub use crate::search_mode::SearchMode;
use std::collections::HashMap;

/// How the two signals of a hybrid search become one relevance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal rank fusion: Σ 1 / (k + rank) over both lists.
    Rrf { k: f64 },
    /// Cosine similarity plus `lexical` × lexical confidence.
    Blend { lexical: f64 },
}

/// The fusion hybrid search uses (chosen on the retrieval evaluation, eval/).
pub const DEFAULT_FUSION: Fusion = Fusion::Blend { lexical: 1.5 };

/// How many vector neighbours are read: more when filters will drop some. (The
/// first pass costs in proportion to these: see `vectors::nearest`.)
const NEIGHBOURS: usize = 50;
const NEIGHBOURS_FILTERED: usize = 150;

/// Runs a search in `mode`. `query_vector` is the query's embedding, needed by the
/// semantic and hybrid modes (without it they find nothing by meaning).
pub fn search(
    conn: &Connection,
    q: &SearchQuery,
    mode: SearchMode,
    query_vector: Option<&[f32]>,
) -> Result<Vec<Hit>, StoreError> {
    search_with(conn, q, mode, query_vector, DEFAULT_FUSION)
}

/// [`search`] with a chosen fusion (the evaluation compares them).
pub fn search_with(
    conn: &Connection,
    q: &SearchQuery,
    mode: SearchMode,
    query_vector: Option<&[f32]>,
    fusion: Fusion,
) -> Result<Vec<Hit>, StoreError> {
    let vector = query_vector.filter(|v| !v.is_empty());
    let (mode, vector) = match (mode, vector) {
        (SearchMode::Lexical, _) | (SearchMode::Hybrid, None) => {
            return search::search(conn, q);
        }
        (SearchMode::Semantic, None) => return Ok(Vec::new()),
        (mode, Some(v)) => (mode, v),
    };
    let Some(gathered) = gather(conn, q, mode)? else {
        return Ok(Vec::new());
    };
    rank(conn, gathered, vector, fusion)
}

/// A semantic or hybrid search whose query vector is still to be made: `embed`
/// runs on a thread of its own while this one gathers everything that needs no
/// vector (the filters, the lexical candidates and their stored vectors). A hybrid
/// search then costs about the query's embedding plus the nearest-neighbour
/// search, instead of adding the lexical work on top.
pub fn search_while_embedding<E>(
    conn: &Connection,
    q: &SearchQuery,
    mode: SearchMode,
    embed: impl FnOnce() -> Result<Vec<f32>, E> + Send,
) -> Result<Vec<Hit>, E>
where
    E: From<StoreError> + Send,
{
    if mode == SearchMode::Lexical {
        return Ok(search::search(conn, q)?);
    }
    std::thread::scope(|scope| {
        let embedding = scope.spawn(embed);
        let gathered = gather(conn, q, mode);
        let vector = embedding
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        match gathered? {
            Some(gathered) if !vector.is_empty() => {
                Ok(rank(conn, gathered, &vector, DEFAULT_FUSION)?)
            }
            _ => Ok(Vec::new()),
        }
    })
}

/// What a semantic or hybrid search knows before the query's vector exists.
struct Gathered {
    resolved: Resolved,
    limit: usize,
    /// Hybrid only: the lexical candidates, and the stored vector of each that has one.
    lexical: Vec<Candidate>,
    lexical_vectors: HashMap<(u8, i64), Vec<f32>>,
}

/// `None` when a filter names nothing that exists (nothing can match).
fn gather(
    conn: &Connection,
    q: &SearchQuery,
    mode: SearchMode,
) -> Result<Option<Gathered>, StoreError> {
    let limit = q.limit.clamp(1, 500);
    let Some(resolved) = Resolved::new(conn, q)? else {
        return Ok(None);
    };
    let lexical = if mode == SearchMode::Hybrid {
        search::lexical_candidates(conn, &resolved, limit)?
    } else {
        Vec::new()
    };
    let mut lexical_vectors = HashMap::new();
    for c in &lexical {
        let Some(source) = source_of(c.table) else {
            continue;
        };
        if let Some(v) = vectors::stored_vector(conn, source, c.rowid)? {
            lexical_vectors.insert(key(c), v);
        }
    }
    Ok(Some(Gathered {
        resolved,
        limit,
        lexical,
        lexical_vectors,
    }))
}

/// The ranking, once the query's vector is known.
fn rank(
    conn: &Connection,
    gathered: Gathered,
    vector: &[f32],
    fusion: Fusion,
) -> Result<Vec<Hit>, StoreError> {
    let limit = gathered.limit;
    let mut semantic = neighbours(conn, &gathered.resolved, vector, limit)?;
    let calibration = Calibration::of(&semantic);
    for n in &mut semantic {
        n.candidate.hit.score =
            ranking::score(calibration.relevance(n.similarity), n.candidate.weight);
    }
    let mut hits = fuse(
        gathered.lexical,
        &gathered.lexical_vectors,
        semantic,
        vector,
        fusion,
        calibration,
    );
    search::sort_hits(&mut hits);
    hits.truncate(limit);
    Ok(hits)
}

/// The records nearest `vector` in meaning that pass `q`'s filters, best first,
/// each with its similarity measured from the model's centre
/// ([`vectors::centred_cosine`]: about 0 for unrelated texts with every model).
/// What recall weighs against its threshold; searches rank with [`search`].
pub fn by_meaning(
    conn: &Connection,
    q: &SearchQuery,
    vector: &[f32],
) -> Result<Vec<(Hit, f64)>, StoreError> {
    let limit = q.limit.clamp(1, 500);
    let Some(resolved) = Resolved::new(conn, q)? else {
        return Ok(Vec::new());
    };
    let centre = vectors::centre(conn)?.unwrap_or_default();
    let mut out = Vec::new();
    for n in neighbours(conn, &resolved, vector, limit)? {
        let Some(source) = source_of(n.candidate.table) else {
            continue;
        };
        let Some(stored) = vectors::stored_vector(conn, source, n.candidate.rowid)? else {
            continue;
        };
        out.push((
            n.candidate.hit,
            vectors::centred_cosine(&stored, vector, &centre),
        ));
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out.truncate(limit);
    Ok(out)
}

/// A candidate's identity across the tables.
fn key(c: &Candidate) -> (u8, i64) {
    (c.table as u8, c.rowid)
}

/// Turns a cosine similarity into a relevance in 0..=1 that means the same for
/// every model: how far the record stands above the crowd of its query's
/// neighbours (the 50th nearest). Models differ wildly in scale (unrelated texts score about 0.1
/// with all-MiniLM-L6-v2 but 0.75 with multilingual-e5), and a raw cosine times
/// the ranking weights (docs/DESIGN.md) would let recency drown meaning with the latter.
#[derive(Debug, Clone, Copy)]
struct Calibration {
    /// The similarity of an unremarkable neighbour (the 50th nearest).
    floor: f64,
}

impl Calibration {
    /// Fewer neighbours than this say nothing reliable about the crowd.
    const MIN_SAMPLE: usize = 20;

    fn of(neighbours: &[Neighbour]) -> Calibration {
        let mut sims: Vec<f64> = neighbours.iter().map(|n| n.similarity).collect();
        if sims.len() < Self::MIN_SAMPLE {
            return Calibration { floor: 0.0 };
        }
        sims.sort_by(|a, b| b.total_cmp(a));
        let floor = sims[sims.len().min(NEIGHBOURS) - 1].clamp(0.0, 0.99);
        Calibration { floor }
    }

    fn relevance(self, similarity: f64) -> f64 {
        ((similarity - self.floor) / (1.0 - self.floor)).clamp(0.0, 1.0)
    }
}

/// A candidate found by meaning: its row's hit, weight and similarity.
struct Neighbour {
    candidate: Candidate,
    similarity: f64,
}

/// The vectors of a table's records.
fn source_of(table: Table) -> Option<Source> {
    match table {
        Table::Observations => Some(Source::Observations),
        Table::Summaries => Some(Source::Summaries),
        Table::Knowledge => Some(Source::Knowledge),
    }
}

/// The nearest records of every wanted table that pass the query's filters.
fn neighbours(
    conn: &Connection,
    r: &Resolved,
    vector: &[f32],
    limit: usize,
) -> Result<Vec<Neighbour>, StoreError> {
    let q = &r.query;
    let filtered = r.projects.is_some()
        || q.machine.is_some()
        || q.record_type.is_some()
        || q.since.is_some()
        || q.until.is_some();
    let k = if filtered {
        NEIGHBOURS_FILTERED
    } else {
        NEIGHBOURS.max(limit * 3)
    };
    let mut out = Vec::new();
    for table in Table::ALL {
        let Some(source) = source_of(table).filter(|_| table.wanted(q.record_type)) else {
            continue;
        };
        for (rowid, similarity) in vectors::nearest(conn, source, vector, k)? {
            let Some(row) = search::read_row(conn, table, rowid)? else {
                continue;
            };
            if !row.passes(r) {
                continue;
            }
            let weight = row.weight(q.current_project.as_deref(), r.now);
            out.push(Neighbour {
                candidate: Candidate {
                    // Scored once the calibration of the whole list is known.
                    hit: row.into_hit(table, 0.0),
                    table,
                    rowid,
                    confidence: 0.0,
                    share: 0.0,
                    weight,
                },
                similarity,
            });
        }
    }
    Ok(out)
}

/// Merges both candidate lists into scored hits.
fn fuse(
    lexical: Vec<Candidate>,
    lexical_vectors: &HashMap<(u8, i64), Vec<f32>>,
    semantic: Vec<Neighbour>,
    vector: &[f32],
    fusion: Fusion,
    calibration: Calibration,
) -> Vec<Hit> {
    struct Both {
        candidate: Candidate,
        similarity: f64,
        lexical_rank: Option<usize>,
        semantic_rank: Option<usize>,
    }
    let mut by_key: HashMap<(u8, i64), Both> = HashMap::new();

    let mut semantic = semantic;
    semantic.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    for (rank, n) in semantic.into_iter().enumerate() {
        by_key.insert(
            key(&n.candidate),
            Both {
                similarity: n.similarity,
                candidate: n.candidate,
                lexical_rank: None,
                semantic_rank: Some(rank),
            },
        );
    }
    let mut lexical = lexical;
    // The lexical order is relevance before the weights: score / weight.
    lexical.sort_by(|a, b| {
        (b.hit.score / b.weight.max(f64::MIN_POSITIVE))
            .total_cmp(&(a.hit.score / a.weight.max(f64::MIN_POSITIVE)))
    });
    for (rank, c) in lexical.into_iter().enumerate() {
        match by_key.get_mut(&key(&c)) {
            Some(both) => {
                both.candidate.confidence = c.confidence;
                both.lexical_rank = Some(rank);
            }
            None => {
                let similarity = lexical_vectors
                    .get(&key(&c))
                    .map_or(0.0, |v| vectors::dot(v, vector));
                by_key.insert(
                    key(&c),
                    Both {
                        candidate: c,
                        similarity,
                        lexical_rank: Some(rank),
                        semantic_rank: None,
                    },
                );
            }
        }
    }
    by_key
        .into_values()
        .map(|b| {
            let relevance = match fusion {
                Fusion::Rrf { k } => {
                    let term = |r: Option<usize>| r.map_or(0.0, |r| 1.0 / (k + r as f64 + 1.0));
                    term(b.lexical_rank) + term(b.semantic_rank)
                }
                Fusion::Blend { lexical } => {
                    calibration.relevance(b.similarity) + lexical * b.candidate.confidence
                }
            };
            let mut hit = b.candidate.hit;
            hit.score = ranking::score(relevance, b.candidate.weight);
            hit
        })
        .collect()
}
