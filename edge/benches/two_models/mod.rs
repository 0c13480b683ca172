//! Both models at once: the retrieval evaluation of ways to fuse a multilingual
//! model's and an English model's hybrid rankings, against each model alone, per
//! kind of query. Each model keeps its own index (its own store here); a fused
//! rule sees each model's scored list, read `DEPTH` deep.

use super::{KINDS, Query, Record, Score, insert_vector};
use solaria_edge::store::Store;
use solaria_edge::store::hybrid::{self, SearchMode};
use solaria_edge::store::search::SearchQuery;
use solaria_edge::store::vectors::{self, IndexModel};
use solaria_embed::Embedder;
use solaria_store::rusqlite;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How deep each model's list is read before fusing.
const DEPTH: usize = 30;

/// One model's evaluation store, kept for the fused evaluation.
pub struct ModelRun {
    pub _dir: tempfile::TempDir,
    pub store: Store,
    pub model: Embedder,
    /// Record id → corpus key.
    pub keys: HashMap<String, String>,
}

/// A record's scores from the two models' hybrid searches (0 where a model did not
/// return it), and the languages involved.
struct Pair {
    first: f64,
    second: f64,
    query_spanish: bool,
    record_spanish: bool,
}

/// A fusion rule: a record's one score from its [`Pair`].
type Rule = fn(&Pair) -> f64;

/// `weight` × first + second when the query reads as English (and, if
/// `record_too`, the record as well), else the first alone, scaled to the same
/// height (1 + `weight`), so that records scored either way compare.
fn gated(p: &Pair, weight: f64, record_too: bool) -> f64 {
    if p.query_spanish || (record_too && p.record_spanish) {
        (1.0 + weight) * p.first
    } else {
        weight * p.first + p.second
    }
}

/// The fusion rules tried, with their labels.
const RULES: &[(&str, Rule)] = &[
    ("fused: max", |p| p.first.max(p.second)),
    ("fused: sum", |p| p.first + p.second),
    ("fused: sum; Spanish query → first alone", |p| {
        gated(p, 1.0, false)
    }),
    (
        "fused: 0.5 × first + second; Spanish query → first alone",
        |p| gated(p, 0.5, false),
    ),
    (
        "**fused: 0.25 × first + second when query and record are English, else first alone**",
        |p| gated(p, 0.25, true),
    ),
    (
        "fused: first + second when query and record are English, else first alone",
        |p| gated(p, 1.0, true),
    ),
    (
        "fused: second when query and record are English, else first alone",
        |p| gated(p, 0.0, true),
    ),
    (
        "fused: 0.5 × first + second when query and record are English, else first alone",
        |p| gated(p, 0.5, true),
    ),
];

/// Prints recall@5 / MRR per kind: each model's hybrid and semantic search alone,
/// the fused rules, and one index holding both vectors side by side.
pub fn table(runs: &[ModelRun], queries: &[Query], records: &[Record], unweighted: bool) {
    let [first, second, ..] = runs else { return };
    let spanish_records: HashSet<&str> = records
        .iter()
        .filter(|r| looks_spanish(&format!("{} {}", r.title, r.input)))
        .map(|r| r.key.as_str())
        .collect();
    let (_joined_dir, joined) = joined_store(first, second);
    let mut labels: Vec<String> = Vec::new();
    for mode in ["hybrid", "semantic"] {
        for run in [first, second] {
            labels.push(format!("{mode}, {} alone", run.model.info().name));
        }
    }
    labels.extend(RULES.iter().map(|(label, _)| label.to_string()));
    labels.push("one index of both vectors (0.5 : 1; Spanish query → first half)".into());
    let mut scores: Vec<BTreeMap<String, Score>> = vec![BTreeMap::new(); labels.len()];
    for q in queries {
        let search = SearchQuery {
            text: q.text.clone(),
            limit: DEPTH,
            current_project: unweighted.then(|| "eval/none".to_string()),
            ..SearchQuery::default()
        };
        let query_vectors =
            [first, second].map(|run| run.model.embed_query(&q.text).expect("embed"));
        let mut rankings: Vec<Vec<String>> = Vec::new();
        let mut hybrid_lists = Vec::new();
        for mode in [SearchMode::Hybrid, SearchMode::Semantic] {
            for (run, vector) in [first, second].iter().zip(&query_vectors) {
                let list = scored(&run.store, &run.keys, &search, mode, vector);
                rankings.push(list.iter().map(|(k, _)| k.clone()).collect());
                if mode == SearchMode::Hybrid {
                    hybrid_lists.push(list);
                }
            }
        }
        let query_spanish = looks_spanish(&q.text);
        for (_, rule) in RULES {
            rankings.push(fuse(&hybrid_lists, |key, first, second| {
                rule(&Pair {
                    first,
                    second,
                    query_spanish,
                    record_spanish: spanish_records.contains(key),
                })
            }));
        }
        let (a, b) = if query_spanish {
            (1.0, 0.0)
        } else {
            (0.5, 1.0)
        };
        let joined_query = join(&query_vectors[0], a, &query_vectors[1], b);
        rankings.push(
            scored(
                &joined,
                &first.keys,
                &search,
                SearchMode::Hybrid,
                &joined_query,
            )
            .into_iter()
            .map(|(k, _)| k)
            .collect(),
        );
        for (row, ranked) in scores.iter_mut().zip(&rankings) {
            for bucket in [q.kind.clone(), "all".into(), format!("lang:{}", q.lang)] {
                row.entry(bucket)
                    .or_default()
                    .add(&ranked[..ranked.len().min(10)], &q.targets);
            }
        }
    }
    print_table(first, second, &labels, &scores, spanish_records.len());
}

fn print_table(
    first: &ModelRun,
    second: &ModelRun,
    labels: &[String],
    scores: &[BTreeMap<String, Score>],
    spanish_records: usize,
) {
    println!(
        "\n### Both models at once: first {}, second {} ({DEPTH} deep; {spanish_records} records read as Spanish)\n",
        first.model.info().name,
        second.model.info().name
    );
    let mut columns: Vec<String> = KINDS.iter().map(|k| k.to_string()).collect();
    columns.extend(["lang:en".into(), "lang:es".into(), "all".into()]);
    print!("| method |");
    for c in &columns {
        let n = scores[0].get(c).map_or(0, |s| s.n);
        print!(" {c} ({n}) |");
    }
    println!("\n|---|{}", "---|".repeat(columns.len()));
    for (label, row) in labels.iter().zip(scores) {
        print!("| {label} |");
        for c in &columns {
            print!(" {} |", row.get(c).copied().unwrap_or_default().cell());
        }
        println!();
    }
    // The bar: no kind more than 0.02 below its best single component
    // (the four "alone" rows).
    println!();
    for (label, row) in labels.iter().zip(scores).skip(4) {
        let worst = KINDS
            .iter()
            .map(|kind| {
                let recall = |r: &BTreeMap<String, Score>| {
                    r.get(*kind).map_or(0.0, |s| s.recall5 / s.n.max(1) as f64)
                };
                let best = scores[..4].iter().map(recall).fold(0.0, f64::max);
                (recall(row) - best, *kind)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((0.0, ""));
        println!(
            "- {label}: worst kind against its best component: {:+.3} ({})",
            worst.0, worst.1
        );
    }
}

/// A search's hits as (corpus key, score), best first; `keys` names the store's
/// records by corpus key.
fn scored(
    store: &Store,
    keys: &HashMap<String, String>,
    search: &SearchQuery,
    mode: SearchMode,
    vector: &[f32],
) -> Vec<(String, f64)> {
    hybrid::search_with(
        store.conn(),
        search,
        mode,
        Some(vector),
        hybrid::DEFAULT_FUSION,
    )
    .expect("search")
    .iter()
    .filter_map(|h| keys.get(&h.id).map(|k| (k.clone(), h.score)))
    .collect()
}

/// One ranking of every record in either list, by `score(key, first, second)`.
fn fuse(lists: &[Vec<(String, f64)>], score: impl Fn(&str, f64, f64) -> f64) -> Vec<String> {
    let lookup: Vec<HashMap<&str, f64>> = lists
        .iter()
        .map(|l| l.iter().map(|(k, s)| (k.as_str(), *s)).collect())
        .collect();
    let keys: HashSet<&str> = lookup.iter().flat_map(|m| m.keys().copied()).collect();
    let mut ranked: Vec<(&str, f64)> = keys
        .into_iter()
        .map(|k| {
            let first = lookup[0].get(k).copied().unwrap_or(0.0);
            let second = lookup[1].get(k).copied().unwrap_or(0.0);
            (k, score(k, first, second))
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    ranked.into_iter().map(|(k, _)| k.to_string()).collect()
}

/// Whether a text reads as Spanish: an accented letter, `¿`/`¡`, or two Spanish
/// function words.
fn looks_spanish(text: &str) -> bool {
    const WORDS: &[&str] = &[
        "el", "la", "los", "las", "de", "del", "que", "qué", "en", "por", "para", "con", "una",
        "un", "cómo", "como", "dónde", "cuál", "cuándo", "se", "al", "es", "está", "no", "lo", "y",
        "pero", "cuando", "sobre", "hay",
    ];
    if text.chars().any(|c| "áéíóúñ¿¡ÁÉÍÓÚÑ".contains(c)) {
        return true;
    }
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| WORDS.contains(&w.to_lowercase().as_str()))
        .count()
        >= 2
}

/// Two unit vectors side by side, weighted `a` and `b`, scaled so that a record
/// whose halves equal the query's scores 1 (records are joined with 1/√2 each).
fn join(first: &[f32], a: f32, second: &[f32], b: f32) -> Vec<f32> {
    let scale = std::f32::consts::SQRT_2 / (a + b);
    first
        .iter()
        .map(|x| x * a * scale)
        .chain(second.iter().map(|x| x * b * scale))
        .collect()
}

/// A copy of `first`'s store whose vectors are both models' side by side (each
/// half over √2, so each vector stays of unit length): the single-index way of
/// having two models, measured against keeping two indexes.
fn joined_store(first: &ModelRun, second: &ModelRun) -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("memory.db");
    // The same records under the same ids as the first store.
    std::fs::copy(first.store.path(), &path).expect("copy store");
    let mut store = Store::open(&path, "eval").expect("open");
    let [a, b] = [first, second].map(stored_by_key);
    let centres = [first, second].map(|r| {
        vectors::centre(r.store.conn())
            .expect("centre")
            .unwrap_or_default()
    });
    let half = std::f32::consts::FRAC_1_SQRT_2;
    let centre: Vec<f32> = centres[0]
        .iter()
        .chain(&centres[1])
        .map(|x| x * half)
        .collect();
    let model = IndexModel {
        fingerprint: "both models side by side".into(),
        dimension: centre.len(),
    };
    vectors::prepare(&mut store, &model, &centre).expect("prepare");
    let mut conn = rusqlite::Connection::open(&path).expect("open");
    let tx = conn.transaction().expect("tx");
    for (id, key) in &first.keys {
        let (Some(x), Some(y)) = (a.get(key), b.get(key)) else {
            continue;
        };
        let v: Vec<f32> = x.iter().chain(y).map(|e| e * half).collect();
        let blob: Vec<u8> = v.iter().flat_map(|e| e.to_le_bytes()).collect();
        let row: i64 = tx
            .query_row("SELECT rowid FROM observations WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .expect("the record");
        insert_vector(&tx, row, &vectors::coarse_blob(&v, &centre), &blob);
    }
    tx.execute("DELETE FROM vector_queue", []).expect("queue");
    tx.commit().expect("commit");
    (tmp, store)
}

/// A run's observation vectors by corpus key.
fn stored_by_key(run: &ModelRun) -> HashMap<String, Vec<f32>> {
    run.store
        .conn()
        .prepare(
            "SELECT o.id, v.embedding FROM observation_embeddings v
             JOIN observations o ON o.rowid = v.row",
        )
        .expect("read")
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .expect("query")
        .filter_map(Result::ok)
        .filter_map(|(id, blob)| {
            let v: Vec<f32> = blob
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            run.keys.get(&id).map(|k| (k.clone(), v))
        })
        .collect()
}
