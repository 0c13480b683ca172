//! Search by meaning, by words, or both: vector neighbours and lexical candidates
//! fused into one ranking, then weighted like every search (docs/DESIGN.md, Ranking).
//!
//! Fusion works on absolute scores, not ranks. Every candidate gets both signals:
//! its cosine similarity to the query (from its stored vector, for lexical-only
//! candidates too; a record without a vector is not pushed down for it, see
//! `Calibration::blended_matches`) and its lexical confidence (how much of the
//! query it matches, 0..=1, 0 when it matches no word). Reciprocal rank fusion would instead reward a record for
//! being first in the lexical list even when that list is noise (a paraphrase
//! shares no word with its target, so the "best" lexical match is merely a record
//! with a common word), which measurably drags good vector hits down; see
//! `docs/BENCHMARKS.md` (retrieval quality) for the figures behind the choice.

use super::StoreError;
use super::search::{self, Candidate, Hit, Resolved, SearchQuery, Table};
use super::vectors::{self, Source};
use rusqlite::Connection;
use solaria_shared::ranking::{self, Calibration, NEIGHBOURS};

pub use solaria_shared::SearchMode;
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
pub const DEFAULT_FUSION: Fusion = Fusion::Blend {
    lexical: ranking::LEXICAL_BLEND,
};

/// How many vector neighbours are read: more when filters will drop some. (The
/// first pass costs in proportion to these: see `vectors::nearest`.)
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
    if let Some(model) = vectors::index_model(conn)? {
        for c in &lexical {
            let Some(source) = source_of(c.table) else {
                continue;
            };
            if let Some(v) = vectors::stored_vector(conn, source, c.rowid, model.dimension)? {
                lexical_vectors.insert(key(c), v);
            }
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
    let calibration = Calibration::of(semantic.iter().map(|n| n.similarity));
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

/// A candidate's identity across the tables.
pub(super) fn key(c: &Candidate) -> (u8, i64) {
    (c.table as u8, c.rowid)
}

/// A candidate found by meaning: its row's hit, weight and similarity.
pub(super) struct Neighbour {
    pub(super) candidate: Candidate,
    pub(super) similarity: f64,
}

/// The vectors of a table's records.
pub(super) fn source_of(table: Table) -> Option<Source> {
    match table {
        Table::Observations => Some(Source::Observations),
        Table::Summaries => Some(Source::Summaries),
        Table::Knowledge => Some(Source::Knowledge),
    }
}

/// The nearest records of every wanted table that pass the query's filters.
pub(super) fn neighbours(
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
        // Projects narrow the neighbours before they are counted: a project's
        // nearest records are found however many nearer ones other projects hold.
        let among = match &r.projects {
            Some(keys) => Some(search::rows_of_projects(conn, table, keys)?),
            None => None,
        };
        for (rowid, similarity) in vectors::nearest(conn, source, vector, k, among.as_ref())? {
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
                    held: 0,
                    held_in_title: 0,
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
        /// `None`: the record has no vector.
        similarity: Option<f64>,
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
                similarity: Some(n.similarity),
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
                    .map(|v| vectors::dot(v, vector));
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
    let (words, meaning_only): (Vec<Both>, Vec<Both>) =
        by_key.into_values().partition(|b| b.lexical_rank.is_some());
    let relevances: Vec<f64> = match fusion {
        Fusion::Rrf { k } => {
            let term = |r: Option<usize>| r.map_or(0.0, |r| 1.0 / (k + r as f64 + 1.0));
            words
                .iter()
                .chain(&meaning_only)
                .map(|b| term(b.lexical_rank) + term(b.semantic_rank))
                .collect()
        }
        Fusion::Blend { lexical } => {
            let matches: Vec<(f64, Option<f64>)> = words
                .iter()
                .map(|b| (b.candidate.confidence, b.similarity))
                .collect();
            let mut relevances = calibration.blended_matches(&matches, lexical);
            relevances.extend(meaning_only.iter().map(|b| {
                calibration.blended(b.similarity.unwrap_or(0.0), b.candidate.confidence, lexical)
            }));
            relevances
        }
    };
    words
        .into_iter()
        .chain(meaning_only)
        .zip(relevances)
        .map(|(b, relevance)| {
            let mut hit = b.candidate.hit;
            hit.score = ranking::score(relevance, b.candidate.weight);
            hit
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::IndexModel;
    use crate::{Store, both_ways, rarity};
    use solaria_shared::{
        Observation, ObservationId, ObservationKind, Project, RecordMeta, UnixMillis,
    };

    /// A store (of a model of 8 dimensions) holding these notes, each `(project,
    /// text)`, written a day ago in that order; their ids.
    fn store_of(notes: &[(&str, String)]) -> (tempfile::TempDir, Store, Vec<String>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("opens");
        let now = UnixMillis::now();
        let ids = store
            .write(|w| {
                let session = crate::fixtures::session(w, now.minus_days(2))?;
                let mut ids = Vec::new();
                for (project, text) in notes {
                    let updated = w.tick();
                    let id = ObservationId::new();
                    w.insert_observation(&Observation {
                        id,
                        meta: RecordMeta {
                            updated,
                            ..session.meta
                        },
                        session_id: session.id,
                        project: Project {
                            key: project.to_string(),
                            name: project.to_string(),
                        },
                        kind: ObservationKind::Note,
                        tool_name: None,
                        title: "note".into(),
                        input: text.clone(),
                        response: String::new(),
                        files: Vec::new(),
                        metadata: serde_json::json!({}),
                        tags: Vec::new(),
                        created_at: now.minus_days(1),
                    })?;
                    ids.push(id.to_string());
                }
                Ok(ids)
            })
            .expect("records");
        let model = IndexModel {
            fingerprint: "t".into(),
            dimension: 8,
        };
        vectors::prepare(&mut store, &model, &[0.0; 8]).expect("prepare");
        (dir, store, ids)
    }

    /// A unit vector near `[1, 0, …]`: the further the more `second` grows.
    fn unit(second: f32) -> Vec<f32> {
        let norm = (1.0 + second * second).sqrt();
        let mut v = vec![0.0; 8];
        v[0] = 1.0 / norm;
        v[1] = second / norm;
        v
    }

    /// Stores the vector `vector_of` gives each queued record's text; a record it
    /// gives none stays without one, as if not embedded yet.
    fn embed(store: &mut Store, vector_of: impl Fn(&str) -> Option<Vec<f32>>) {
        let work = vectors::next_work(store.conn(), 10_000, UnixMillis(i64::MIN)).expect("work");
        let (work, made): (Vec<_>, Vec<_>) = work
            .into_iter()
            .filter_map(|w| {
                let v = vector_of(w.text.as_deref()?)?;
                Some((w, v))
            })
            .unzip();
        vectors::complete(store, &work, &made).expect("complete");
    }

    /// The oldest note, of project `b`, then `crowd` newer notes of project `p`
    /// that hold the same words and are nearer the query `[1, 0, …]` in meaning;
    /// the id of `b`'s note.
    fn store_with_a_crowd(crowd: usize) -> (tempfile::TempDir, Store, String) {
        let mut notes = vec![("b", "the upload retries are flaky".to_string())];
        notes.extend((0..crowd).map(|i| ("p", format!("the upload retries are flaky, crowd {i}"))));
        let (dir, mut store, ids) = store_of(&notes);
        embed(&mut store, |t| {
            Some(unit(if t.contains("crowd") { 0.1 } else { 1.0 }))
        });
        (dir, store, ids[0].clone())
    }

    #[test]
    fn a_word_match_not_yet_embedded_keeps_its_place_in_a_hybrid_search() {
        // The one record holding every word of the query has no vector yet; thirty
        // hold one of its words and mean the query exactly; thirty are unrelated.
        let mut notes = vec![(
            "p",
            "invoice exporter crashes on an empty ledger".to_string(),
        )];
        notes.extend((0..30).map(|i| ("p", format!("the exporter screen, layout {i}"))));
        notes.extend((0..30).map(|i| ("p", format!("gardening tips, part {i}"))));
        let (_dir, mut store, ids) = store_of(&notes);
        embed(&mut store, |t| {
            if t.contains("invoice") {
                None
            } else if t.contains("exporter") {
                Some(unit(0.0))
            } else {
                Some(unit(3.0))
            }
        });
        let q = SearchQuery {
            text: "invoice exporter crashes".into(),
            limit: 10,
            ..SearchQuery::default()
        };
        let words = search(store.conn(), &q, SearchMode::Lexical, None).expect("search");
        assert_eq!(words.first().map(|h| &h.id), Some(&ids[0]), "{words:#?}");
        let hybrid =
            search(store.conn(), &q, SearchMode::Hybrid, Some(&unit(0.0))).expect("search");
        assert_eq!(
            hybrid.first().map(|h| &h.id),
            Some(&ids[0]),
            "first by words and without a vector, first in hybrid too: {hybrid:#?}"
        );
        assert_eq!(hybrid.len(), 10, "the meaning matches follow it");
    }

    fn query() -> SearchQuery {
        SearchQuery {
            text: "upload retries flaky".into(),
            limit: 10,
            current_project: Some("b".into()),
            ..SearchQuery::default()
        }
    }

    /// `text`'s candidates for recall in `project_key` (with `vector`, by meaning
    /// too): their ids and projects.
    fn recall_candidates(
        store: &Store,
        project_key: Option<&str>,
        vector: Option<&[f32]>,
    ) -> Vec<(String, String)> {
        let weights = rarity::Rarity::of(store.conn(), &query().text).expect("rarity");
        both_ways::candidates(store.conn(), &query(), project_key, &weights, vector)
            .expect("candidates")
            .into_iter()
            .map(|c| (c.hit.id, c.hit.project))
            .collect()
    }

    #[test]
    fn each_recall_candidate_is_measured_both_ways_whichever_way_found_it() {
        // One note holds the prompt's words and means something else; one means the
        // prompt and holds none of its words; one is neither, and not embedded.
        let (_dir, mut store, ids) = store_of(&[
            (
                "p",
                "upload retries flaky, said the weather report".to_string(),
            ),
            (
                "p",
                "transfers that fail now and then get sent again".to_string(),
            ),
            ("p", "gardening tips".to_string()),
        ]);
        embed(&mut store, |t| {
            if t.contains("gardening") {
                None
            } else if t.contains("weather") {
                Some(unit(4.0))
            } else {
                Some(unit(0.0))
            }
        });
        let weights = rarity::Rarity::of(store.conn(), &query().text).expect("rarity");
        let found = both_ways::candidates(store.conn(), &query(), None, &weights, Some(&unit(0.0)))
            .expect("candidates");
        let of = |id: &str| found.iter().find(|c| c.hit.id == id).expect("a candidate");
        let words = of(&ids[0]);
        assert!(
            words.words >= 0.5,
            "every word, none in its title: {words:?}"
        );
        let far = words
            .meaning
            .expect("its similarity, though found by words");
        let meaning = of(&ids[1]);
        assert_eq!(
            meaning.words, 0.0,
            "found by meaning, it holds no word: {meaning:?}"
        );
        assert!(
            meaning.meaning.expect("its similarity") > far,
            "the one that means the prompt is nearer: {found:#?}"
        );
        // Without the prompt's vector: by words alone, no similarity.
        let by_words = both_ways::candidates(store.conn(), &query(), None, &weights, None)
            .expect("candidates");
        assert_eq!(
            by_words
                .iter()
                .map(|c| (c.hit.id.as_str(), c.meaning))
                .collect::<Vec<_>>(),
            [(ids[0].as_str(), None)]
        );
    }

    #[test]
    fn a_project_key_keeps_the_words_to_that_project_before_the_newest_are_cut() {
        // More newer matches of another project than one term's list reads.
        let (_dir, store, id) = store_with_a_crowd(search::CANDIDATES + 50);
        let within = recall_candidates(&store, Some("b"), None);
        assert_eq!(
            within,
            [(id, "b".to_string())],
            "only the project's record, found under the crowd"
        );
        let anywhere = recall_candidates(&store, None, None);
        assert!(
            anywhere.iter().all(|(_, p)| p == "p"),
            "without the key the crowd fills the candidates: {anywhere:#?}"
        );
        assert!(recall_candidates(&store, Some("elsewhere"), None).is_empty());
    }

    #[test]
    fn a_project_key_keeps_the_neighbours_to_that_project_before_they_are_counted() {
        // More nearer records of another project than the neighbours read; the
        // query's words are not its own, so only meaning finds anything.
        let (_dir, store, id) = store_with_a_crowd(NEIGHBOURS_FILTERED + 50);
        let mut vector = vec![0.0; 8];
        vector[0] = 1.0;
        let q = SearchQuery {
            text: "nothing here".into(),
            ..query()
        };
        let weights = rarity::Rarity::of(store.conn(), &q.text).expect("rarity");
        let near = |key| {
            both_ways::candidates(store.conn(), &q, key, &weights, Some(&vector))
                .expect("candidates")
                .into_iter()
                .map(|c| (c.hit.id, c.hit.project, c.meaning.is_some()))
                .collect::<Vec<_>>()
        };
        assert_eq!(near(Some("b")), [(id.clone(), "b".to_string(), true)]);
        let anywhere = near(None);
        assert!(anywhere.iter().all(|(_, p, _)| p == "p"), "{anywhere:#?}");
        // `--project` (a name resolved to keys) narrows the same way.
        let named = SearchQuery {
            project: Some("b".into()),
            ..query()
        };
        let hits =
            search(store.conn(), &named, SearchMode::Semantic, Some(&vector)).expect("search");
        assert_eq!(hits.iter().map(|h| &h.id).collect::<Vec<_>>(), [&id]);
    }
}
