//! Retrieval quality: recall@5 and MRR of lexical, semantic and hybrid search on
//! the labelled set in `eval/` (coding sessions in English and Spanish; queries
//! that paraphrase, translate or quote their targets), for each model given.
//! Also measures the embedding pass's throughput on that corpus (vectors are
//! cached in `target/eval-cache/` by the text they were made from, so only new or
//! changed texts are embedded again); given two models,
//! ends with ways of using both at once (`two_models`). `SOLARIA_EVAL_INT8=1` sends
//! every vector through int8 first (what vectors on the wire go through).
//!
//!     bash deploy/models/fetch.sh          # the models, once
//!     cargo bench -p solaria-edge --bench retrieval -- \
//!         --model ~/.cache/solaria/models/multilingual-e5-small \
//!         --model ~/.cache/solaria/models/all-minilm-l6-v2
//!
//! `--set eval/holdout` evaluates the second set instead: choices made on `eval/`
//! are checked there, never made there.
//!
//! Each model's set is measured twice: with every record embedded (the tables of
//! every method), and as a user gets it (the corpus embedded by the daemon's own
//! background passes under the default configuration, or with
//! `--embeddings-days N` as under `[retention] embeddings_days = N`); then both
//! figures side by side, kind by kind, with hybrid against its best part.
//!
//! To look at a few queries: `EVAL_ONLY=q265,keyword` keeps the queries of those
//! ids or kinds, and `EVAL_VERBOSE=1` prints each one's three best by words and
//! by the default hybrid.

use solaria_store::rusqlite;
mod as_shipped;
mod support;
mod two_models;

use two_models::ModelRun;

use serde::Deserialize;
use solaria_edge::config::RecallConfig;
use solaria_edge::semantic;
use solaria_edge::store::Store;
use solaria_edge::store::both_ways::{self, BothWays};
use solaria_edge::store::hybrid::{self, Fusion, SearchMode};
use solaria_edge::store::rarity;
use solaria_edge::store::search::{self, SearchQuery};
use solaria_embed::Embedder;
use solaria_shared::embedding::{VectorEncoding, WireEmbedding};
use solaria_shared::{
    Hlc, Observation, ObservationId, ObservationKind, Project, RecordMeta, Session, SessionId,
    UnixMillis,
};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Deserialize)]
struct Record {
    key: String,
    session: String,
    project: String,
    kind: String,
    tool_name: Option<String>,
    title: String,
    input: String,
    response: String,
    minutes_ago: i64,
}

#[derive(Deserialize)]
struct Query {
    id: String,
    text: String,
    lang: String,
    kind: String,
    targets: Vec<String>,
    /// The project the query is asked within (`--project`); `--scoped` sets it to
    /// its first target's.
    #[serde(default)]
    project: Option<String>,
}

/// One way of searching, as a row of the results.
#[derive(Clone, Copy)]
struct Method {
    label: &'static str,
    mode: SearchMode,
    fusion: Fusion,
}

const LEXICAL: Method = Method {
    label: "lexical",
    mode: SearchMode::Lexical,
    fusion: hybrid::DEFAULT_FUSION,
};
const SEMANTIC: Method = Method {
    label: "semantic",
    mode: SearchMode::Semantic,
    fusion: hybrid::DEFAULT_FUSION,
};
const DEFAULT_HYBRID: Method = Method {
    label: "hybrid blend 1.5 (default)",
    mode: SearchMode::Hybrid,
    fusion: hybrid::DEFAULT_FUSION,
};

const METHODS: &[Method] = &[
    LEXICAL,
    SEMANTIC,
    Method {
        label: "hybrid RRF k=60",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Rrf { k: 60.0 },
    },
    Method {
        label: "hybrid blend 0.15",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Blend { lexical: 0.15 },
    },
    Method {
        label: "hybrid blend 0.25",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Blend { lexical: 0.25 },
    },
    Method {
        label: "hybrid blend 0.35",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Blend { lexical: 0.35 },
    },
    Method {
        label: "hybrid blend 0.5",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Blend { lexical: 0.5 },
    },
    Method {
        label: "hybrid blend 0.75",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Blend { lexical: 0.75 },
    },
    Method {
        label: "hybrid blend 1.0",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Blend { lexical: 1.0 },
    },
    DEFAULT_HYBRID,
    Method {
        label: "hybrid blend 3.0",
        mode: SearchMode::Hybrid,
        fusion: Fusion::Blend { lexical: 3.0 },
    },
];

const KINDS: &[&str] = &[
    "exact_identifier",
    "recurring_identifier",
    "keyword",
    "paraphrase",
    "paraphrase_es",
    "cross_language",
    "long_output",
];

/// The baseline row: plain FTS5 over the same store and the same query terms (an OR
/// of them, as `search::query_terms` makes them), `ORDER BY bm25()`, no weights.
fn plain_bm25(store: &Store, text: &str, limit: usize) -> Vec<String> {
    let terms = search::query_terms(text);
    if terms.is_empty() {
        return Vec::new();
    }
    let expr = format!("{{title body tool}} : ({})", terms.join(" OR "));
    let mut stmt = store
        .conn()
        .prepare_cached(
            "SELECT o.id FROM observations_fts f JOIN observations o ON o.rowid = f.rowid
             WHERE observations_fts MATCH ?1 ORDER BY bm25(observations_fts) LIMIT ?2",
        )
        .expect("bm25 query");
    stmt.query_map(rusqlite::params![expr, limit as i64], |r| r.get(0))
        .expect("bm25")
        .collect::<Result<_, _>>()
        .expect("bm25 rows")
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Vec<T> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display())))
        .collect()
}

/// Writes the corpus through the store API; returns observation id → corpus key.
/// A record's input and response as capture stores them: a tool call's as the
/// JSON the agent sends its hooks (Claude Code's shapes, line breaks escaped), a
/// prompt's or note's as plain text.
fn as_captured(r: &Record) -> (String, String) {
    use serde_json::json;
    let (path, rest) = r.input.split_once('\n').unwrap_or((&r.input, ""));
    let (input, response) = match r.tool_name.as_deref() {
        Some("Bash") => (
            json!({"command": r.input}),
            json!({"stdout": r.response, "stderr": "", "interrupted": false, "isImage": false}),
        ),
        Some("Read") => (
            json!({"file_path": r.input}),
            json!({"type": "text", "file": {"filePath": r.input, "content": r.response}}),
        ),
        Some("Edit") => {
            let side = |mark: &str| -> String {
                rest.lines()
                    .filter_map(|l| l.strip_prefix(mark))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            (
                json!({"file_path": path, "old_string": side("- "), "new_string": side("+ ")}),
                json!({"filePath": path, "message": r.response}),
            )
        }
        Some("Write") => (
            json!({"file_path": path, "content": rest}),
            json!({"type": "create", "filePath": path, "message": r.response}),
        ),
        Some("Grep") => {
            let (pattern, dir) = r.input.split_once(" in ").unwrap_or((&r.input, "."));
            (
                json!({"pattern": pattern, "path": dir, "output_mode": "content"}),
                json!({"mode": "content", "content": r.response}),
            )
        }
        _ => return (r.input.clone(), r.response.clone()),
    };
    (input.to_string(), response.to_string())
}

fn load_corpus(path: &Path, records: &[Record]) -> HashMap<String, String> {
    let mut store = Store::open(path, "eval").expect("open store");
    let me = store.machine_id();
    let now = UnixMillis::now().0;
    let mut by_session: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_session.entry(&r.session).or_default().push(r);
    }
    let mut keys = HashMap::new();
    for (name, recs) in by_session {
        store
            .write(|w| {
                let started = recs.iter().map(|r| r.minutes_ago).max().unwrap_or(0);
                let project = Project {
                    key: format!("github.com/eval/{}", recs[0].project),
                    name: recs[0].project.clone(),
                };
                let meta = |w: &mut solaria_edge::store::Writer<'_>| RecordMeta {
                    machine_id: me,
                    updated: w.tick(),
                    deleted: false,
                };
                let session = Session {
                    id: SessionId::new(),
                    meta: meta(w),
                    project: project.clone(),
                    agent: "claude-code".into(),
                    agent_session_id: name.to_string(),
                    cwd: "/work".into(),
                    source: "startup".into(),
                    started_at: UnixMillis(now - started * 60_000),
                    ended_at: None,
                };
                w.insert_session(&session)?;
                for r in &recs {
                    let captured = as_captured(r);
                    let o = Observation {
                        id: ObservationId::new(),
                        meta: meta(w),
                        session_id: session.id,
                        project: project.clone(),
                        kind: match r.kind.as_str() {
                            "tool_use" => ObservationKind::ToolUse,
                            "prompt" => ObservationKind::Prompt,
                            _ => ObservationKind::Note,
                        },
                        tool_name: r.tool_name.clone(),
                        title: r.title.clone(),
                        input: captured.0,
                        response: captured.1,
                        files: Vec::new(),
                        metadata: serde_json::json!({}),
                        tags: Vec::new(),
                        created_at: UnixMillis(now - r.minutes_ago * 60_000),
                    };
                    keys.insert(o.id.to_string(), r.key.clone());
                    w.insert_observation(&o)?;
                }
                Ok(())
            })
            .expect("write session");
    }
    keys
}

#[derive(Default, Clone, Copy)]
struct Score {
    n: usize,
    recall5: f64,
    mrr: f64,
}

impl Score {
    fn add(&mut self, ranked: &[String], targets: &[String]) {
        self.n += 1;
        let found = targets
            .iter()
            .filter(|t| ranked.iter().take(5).any(|r| r == *t))
            .count();
        self.recall5 += found as f64 / targets.len() as f64;
        if let Some(pos) = ranked.iter().take(10).position(|r| targets.contains(r)) {
            self.mrr += 1.0 / (pos as f64 + 1.0);
        }
    }
    fn cell(&self) -> String {
        if self.n == 0 {
            return "—".into();
        }
        format!(
            "{:.3} / {:.3}",
            self.recall5 / self.n as f64,
            self.mrr / self.n as f64
        )
    }
}

/// The rows measured as a user gets SOLARIA: the three modes as they ship.
const AS_SHIPPED: &[Method] = &[LEXICAL, SEMANTIC, DEFAULT_HYBRID];

/// The command line of the evaluation.
struct Arguments {
    /// `--model DIR` (repeatable; else `SOLARIA_EVAL_MODELS`, a path list).
    models: Vec<PathBuf>,
    /// `--max-tokens N` (default 128, as the daemon).
    max_tokens: usize,
    /// `--unweighted`: relevance alone, without the ranking weights.
    unweighted: bool,
    /// `--lexical`: no model, the lexical rows and the bm25 baseline only, in seconds.
    lexical_only: bool,
    /// `--scoped`: each query asked within its first target's project.
    scoped: bool,
    /// `--embeddings-days N`: the user's `[retention] embeddings_days` (unset by
    /// default: every record kept gets its vector).
    embeddings_days: Option<i64>,
    /// `--set DIR`: the labelled set's directory (its `corpus.jsonl` and
    /// `queries.jsonl`), relative to the repository; `eval` unless given
    /// (`eval/holdout` is the set kept for checking choices made on `eval`).
    set: PathBuf,
}

fn arguments() -> Arguments {
    let mut parsed = Arguments {
        models: Vec::new(),
        max_tokens: 128,
        unweighted: false,
        lexical_only: false,
        scoped: false,
        embeddings_days: None,
        set: PathBuf::from("eval"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--model" => parsed.models.extend(args.next().map(PathBuf::from)),
            "--max-tokens" => {
                parsed.max_tokens = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--max-tokens N")
            }
            "--unweighted" => parsed.unweighted = true,
            "--lexical" => parsed.lexical_only = true,
            "--scoped" => parsed.scoped = true,
            "--embeddings-days" => {
                parsed.embeddings_days = Some(
                    args.next()
                        .and_then(|n| n.parse().ok())
                        .expect("--embeddings-days N"),
                )
            }
            "--set" => parsed.set = args.next().map(PathBuf::from).expect("--set DIR"),
            _ => {}
        }
    }
    if parsed.models.is_empty()
        && let Some(list) = std::env::var_os("SOLARIA_EVAL_MODELS")
    {
        parsed.models = std::env::split_paths(&list).collect();
    }
    parsed
}

/// Vectors cached by the text they were made from (`text_key`), so that a record
/// whose embedded text is unchanged reuses its vector, and a new record or a
/// change to what is embedded (`store::gist`) is embedded again.
type VectorCache = BTreeMap<String, Vec<u8>>;

/// A cache key for an embedded text: FNV-1a of its bytes and its length.
fn text_key(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}-{}", text.len())
}

/// The embedding texts of the queued records, by row.
fn queued_texts(store: &Store) -> Vec<(i64, String)> {
    solaria_edge::store::vectors::next_work(store.conn(), 1_000_000, UnixMillis(0))
        .expect("queue")
        .into_iter()
        .filter_map(|w| w.text.map(|t| (w.row, t)))
        .collect()
}

/// Stores the cached vectors of the queued records whose text the cache holds, and
/// takes them off the queue: the embedding pass then makes only the others.
/// Returns how many came from the cache.
fn restore_vectors(store: &mut Store, texts: &[(i64, String)], cache: &VectorCache) -> usize {
    let centre = solaria_edge::store::vectors::centre(store.conn())
        .expect("centre")
        .unwrap_or_default();
    // A second connection (sqlite-vec is registered for every connection).
    let mut conn = rusqlite::Connection::open(store.path()).expect("open");
    let tx = conn.transaction().expect("tx");
    let mut restored = 0;
    for (row, text) in texts {
        let Some(blob) = cache.get(&text_key(text)) else {
            continue;
        };
        insert_vector(&tx, *row, &coarse(blob, &centre), blob);
        tx.execute(
            "DELETE FROM vector_queue WHERE source = 0 AND row = ?1",
            [row],
        )
        .expect("queue");
        restored += 1;
    }
    tx.commit().expect("commit");
    restored
}

/// Adds every record's vector to the cache, under its text's key.
fn save_vectors(store: &Store, texts: &[(i64, String)], cache: &mut VectorCache, path: &Path) {
    use solaria_edge::store::vectors::{Source, index_model, stored_vector};
    let Some(model) = index_model(store.conn()).expect("model") else {
        return;
    };
    for (row, text) in texts {
        if let Some(v) =
            stored_vector(store.conn(), Source::Observations, *row, model.dimension).expect("read")
        {
            let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            cache.insert(text_key(text), bytes);
        }
    }
    let _ = std::fs::create_dir_all(path.parent().expect("parent"));
    std::fs::write(path, serde_json::to_vec(cache).expect("json")).expect("write cache");
}

/// Replaces every stored vector by what it is after a trip over the wire as int8
/// (`VectorEncoding::I8`): what quantising vectors costs in retrieval quality.
fn through_int8(store: &Store) -> usize {
    let centre = solaria_edge::store::vectors::centre(store.conn())
        .expect("centre")
        .unwrap_or_default();
    let rows: Vec<(i64, Vec<u8>)> = store
        .conn()
        .prepare("SELECT row, embedding FROM observation_embeddings")
        .expect("read")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .filter_map(Result::ok)
        .collect();
    let mut conn = rusqlite::Connection::open(store.path()).expect("open");
    let tx = conn.transaction().expect("tx");
    for (row, blob) in &rows {
        let v: Vec<f32> = blob
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // The wire's own encoding and decoding (`shared/src/embedding.rs`).
        let back = WireEmbedding::encode_as(
            uuid::Uuid::nil(),
            Hlc::from_i64(0),
            "eval",
            &v,
            VectorEncoding::I8,
        )
        .decode()
        .expect("an int8 vector decodes");
        let bytes: Vec<u8> = back.iter().flat_map(|x| x.to_le_bytes()).collect();
        tx.execute(
            "UPDATE observation_embeddings SET embedding = ?2 WHERE row = ?1",
            rusqlite::params![row, bytes],
        )
        .expect("update");
        tx.execute("DELETE FROM observation_vectors WHERE rowid = ?1", [row])
            .expect("delete");
        tx.execute(
            "INSERT INTO observation_vectors (rowid, coarse) VALUES (?1, vec_quantize_binary(?2))",
            rusqlite::params![
                row,
                solaria_edge::store::vectors::coarse_blob(&back, &centre)
            ],
        )
        .expect("insert");
    }
    tx.commit().expect("commit");
    rows.len()
}

/// The first-pass key of a stored vector blob (see `vectors::coarse_blob`).
fn coarse(blob: &[u8], centre: &[f32]) -> Vec<u8> {
    let v: Vec<f32> = blob
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    solaria_edge::store::vectors::coarse_blob(&v, centre)
}

/// Stores one observation's vector (its first-pass key and its floats), by row.
fn insert_vector(tx: &rusqlite::Transaction<'_>, row: i64, coarse_key: &[u8], floats: &[u8]) {
    tx.execute(
        "INSERT INTO observation_vectors (rowid, coarse) VALUES (?1, vec_quantize_binary(?2))",
        rusqlite::params![row, coarse_key],
    )
    .expect("insert vector");
    tx.execute(
        "INSERT INTO observation_embeddings (row, embedding) VALUES (?1, ?2)",
        rusqlite::params![row, floats],
    )
    .expect("insert vector");
}

fn main() {
    let Arguments {
        models,
        max_tokens,
        unweighted,
        lexical_only,
        scoped,
        embeddings_days,
        set,
    } = arguments();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(&set);
    let records: Vec<Record> = read_jsonl(&root.join("corpus.jsonl"));
    let mut queries: Vec<Query> = read_jsonl(&root.join("queries.jsonl"));
    if let Ok(only) = std::env::var("EVAL_ONLY") {
        queries.retain(|q| only.split(',').any(|o| o == q.id || o == q.kind));
    }
    if scoped {
        // As a developer asks inside a project: each query within its first
        // target's project, the filter applied to words and meaning alike.
        let project_of: HashMap<&str, &str> = records
            .iter()
            .map(|r| (r.key.as_str(), r.project.as_str()))
            .collect();
        for q in &mut queries {
            q.project = q
                .targets
                .first()
                .and_then(|t| project_of.get(t.as_str()))
                .map(|p| p.to_string());
        }
        println!("Each query is asked within its target's project (--scoped; plain bm25 is not).");
    }
    if models.is_empty() && !lexical_only {
        eprintln!(
            "give one or more models: -- --model DIR (see deploy/models/fetch.sh), or --lexical"
        );
        std::process::exit(2);
    }
    println!(
        "Retrieval evaluation of {}: {} records, {} queries; cells are recall@5 / MRR@10{}.",
        set.display(),
        records.len(),
        queries.len(),
        if unweighted {
            ", relevance alone (no recency weights)"
        } else {
            ""
        }
    );
    if lexical_only {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("memory.db");
        let keys = load_corpus(&path, &records);
        let store = Store::open(&path, "eval").expect("open");
        println!("\n### Lexical only (no model)\n");
        let mut times = evaluate(&store, &queries, &keys, None, METHODS, unweighted).times;
        let s = support::summarize(&mut times);
        println!(
            "\n(lexical and bm25 of one query: p50 {} ms, p95 {} ms)",
            support::ms(s.p50),
            support::ms(s.p95)
        );
        recall_by_words_calibration(&store, &queries, &keys);
        return;
    }
    let mut runs: Vec<ModelRun> = Vec::new();
    for dir in models {
        let t = Instant::now();
        let mut model = Embedder::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        model.set_max_tokens(max_tokens).expect("max tokens");
        let load_time = t.elapsed();
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("memory.db");
        let keys = load_corpus(&path, &records);
        let mut store = Store::open(&path, "eval").expect("open");
        let cache_path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/eval-cache")
            .join(format!(
                "{}-{}-by-text.json",
                model
                    .info()
                    .fingerprint
                    .replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
                model.info().max_tokens
            ));
        let mut cache: VectorCache = std::fs::read(&cache_path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        semantic::prepare_index(&mut store, &model).expect("prepare");
        let texts = queued_texts(&store);
        let cached = restore_vectors(&mut store, &texts, &cache);
        let t = Instant::now();
        let report = support::embed_every(&mut store, &model);
        let pass = t.elapsed();
        println!(
            "\n### {} ({}d), loaded in {:.0} ms\n",
            model.info().name,
            model.info().dimension,
            load_time.as_secs_f64() * 1000.0,
        );
        if report.embedded > 0 {
            println!(
                "Embedding pass: {} records in {:.1} s = {:.1} records/s (batches of 32, {} tokens at most); {} more from {}.\n",
                report.embedded,
                pass.as_secs_f64(),
                report.embedded as f64 / pass.as_secs_f64(),
                model.info().max_tokens,
                cached,
                cache_path.display()
            );
            save_vectors(&store, &texts, &mut cache, &cache_path);
        } else {
            println!(
                "(all {cached} vectors from {}: delete it to measure the embedding pass again)\n",
                cache_path.display()
            );
        }

        if std::env::var_os("SOLARIA_EVAL_INT8").is_some() {
            let changed = through_int8(&store);
            println!("(every vector sent through int8 and back: {changed} vectors)\n");
        }
        let every = evaluate(&store, &queries, &keys, Some(&model), METHODS, unweighted);
        recall_calibration(&store, &model, &queries, &keys);
        let mut per_query_ms = every.times.clone();
        let s = support::summarize(&mut per_query_ms);
        println!(
            "\n(all {} methods of one query, embedding included: p50 {} ms, p95 {} ms)",
            METHODS.len(),
            support::ms(s.p50),
            support::ms(s.p95)
        );
        let shipped =
            as_shipped::as_a_user_gets_it(&records, &queries, &model, embeddings_days, unweighted);
        as_shipped::side_by_side(&shipped, &every);
        runs.push(ModelRun {
            _dir: tmp,
            store,
            model,
            keys,
        });
    }
    if runs.len() >= 2 {
        two_models::table(&runs, &queries, &records, unweighted);
    }
}

/// One evaluation's recall@5 / MRR@10 by method label, then kind, language or
/// "all"; and each query's time for all its methods.
struct Evaluation {
    rows: Vec<(&'static str, BTreeMap<String, Score>)>,
    times: Vec<Duration>,
}

/// Runs every query with each of `methods` (lexical ones only without a model),
/// plus the plain bm25 baseline, and prints recall@5 / MRR@10 per kind and language.
fn evaluate(
    store: &Store,
    queries: &[Query],
    keys: &HashMap<String, String>,
    model: Option<&Embedder>,
    methods: &[Method],
    unweighted: bool,
) -> Evaluation {
    let methods: Vec<&Method> = methods
        .iter()
        .filter(|m| model.is_some() || m.mode == SearchMode::Lexical)
        .collect();
    // scores[row][kind or "all" or "lang:xx"]; the last row is plain bm25.
    let mut scores: Vec<BTreeMap<String, Score>> = vec![BTreeMap::new(); methods.len() + 1];
    let mut per_query_ms = Vec::new();
    for q in queries {
        let t = Instant::now();
        let vector = model.map(|m| m.embed_query(&q.text).expect("embed query"));
        let search = SearchQuery {
            text: q.text.clone(),
            limit: 10,
            // With `--unweighted`, a current project no record belongs to: every
            // record then weighs the same (the ranking rule's "other project"), which
            // measures relevance alone.
            current_project: unweighted.then(|| "eval/none".to_string()),
            project: q.project.clone(),
            ..SearchQuery::default()
        };
        let mut rankings = Vec::with_capacity(methods.len() + 1);
        for method in &methods {
            let hits = hybrid::search_with(
                store.conn(),
                &search,
                method.mode,
                vector.as_deref(),
                method.fusion,
            )
            .expect("search");
            rankings.push(
                hits.iter()
                    .filter_map(|h| keys.get(&h.id).cloned())
                    .collect::<Vec<_>>(),
            );
        }
        rankings.push(
            plain_bm25(store, &q.text, 10)
                .iter()
                .filter_map(|id| keys.get(id).cloned())
                .collect(),
        );
        if std::env::var_os("EVAL_VERBOSE").is_some() {
            let top = |r: &[String]| r[..r.len().min(3)].to_vec();
            eprintln!(
                "{} [{}] {:?} → words {:?}, hybrid {:?} (targets {:?})",
                q.id,
                q.kind,
                q.text,
                top(&rankings[0]),
                top(&rankings[methods
                    .iter()
                    .position(|m| m.label.contains("default"))
                    .unwrap_or(0)]),
                q.targets
            );
        }
        for (row, ranked) in rankings.iter().enumerate() {
            for bucket in [
                q.kind.clone(),
                "all".to_string(),
                format!("lang:{}", q.lang),
            ] {
                scores[row]
                    .entry(bucket)
                    .or_default()
                    .add(ranked, &q.targets);
            }
        }
        per_query_ms.push(t.elapsed());
    }
    let mut columns: Vec<String> = KINDS.iter().map(|k| k.to_string()).collect();
    columns.push("lang:en".into());
    columns.push("lang:es".into());
    columns.push("all".into());
    print!("| method |");
    for c in &columns {
        print!(" {c} ({}) |", scores[0].get(c).map_or(0, |s| s.n));
    }
    println!();
    println!("|---|{}", "---|".repeat(columns.len()));
    let labels = methods
        .iter()
        .map(|m| m.label)
        .chain(["plain FTS5 bm25 (baseline)"]);
    for (row, label) in labels.enumerate() {
        print!("| {label} |");
        for c in &columns {
            print!(
                " {} |",
                scores[row].get(c).copied().unwrap_or_default().cell()
            );
        }
        println!();
    }
    Evaluation {
        rows: methods
            .iter()
            .map(|m| m.label)
            .chain(["plain FTS5 bm25 (baseline)"])
            .zip(scores)
            .collect(),
        times: per_query_ms,
    }
}

/// Prompts about nothing in the corpus: what recall by meaning must leave alone.
const UNRELATED_PROMPTS: &[&str] = &[
    "write a limerick about a cat who loves the rain",
    "what is the capital of Australia",
    "thanks, that is all for today",
    "summarise the plot of Hamlet in three sentences",
    "translate good morning into Japanese",
    "how many minutes are in a week",
    "recommend a good science fiction novel",
    "what should I cook for dinner tonight with rice and beans",
    "explain the rules of chess castling",
    "tell me a fun fact about octopuses",
    "how do I improve my running pace",
    "convert 30 degrees celsius to fahrenheit",
    "who painted the Mona Lisa",
    "suggest a name for my new puppy",
    "qué tiempo hace hoy en Madrid",
    "escribe un poema corto sobre el mar",
];

/// How recall's thresholds split the labelled queries from unrelated prompts, for
/// meaning (`[recall] min_similarity`, on `vectors::centred_cosine`) and for words
/// (`[recall] min_score`, on the share score; no model involved, so the same table
/// follows each model's). For each threshold: the share of queries whose target is
/// among the five best and reaches it (overall and for two kinds), how many
/// unrelated prompts would be told something, and of the items that reach it among
/// the queries' five best, the share that are targets.
fn recall_calibration(
    store: &Store,
    model: &Embedder,
    queries: &[Query],
    keys: &HashMap<String, String>,
) {
    let embed = |text: &str| model.embed_query(text).expect("embed");
    threshold_table(
        &format!(
            "Recall by meaning ({}): threshold on the centred similarity",
            model.info().name
        ),
        "min similarity",
        &[0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7],
        ["paraphrase", "cross"],
        queries,
        keys,
        |text| {
            best_five(store, text, Some(&embed(text)), |c| {
                c.meaning.unwrap_or(0.0)
            })
        },
    );
    recall_by_words_calibration(store, queries, keys);
    let recall = RecallConfig::default();
    threshold_table(
        &format!(
            "Recall by words and meaning ({}): threshold on the one score \
             (`RecallConfig::score`, min_similarity {:.2})",
            model.info().name,
            recall.min_similarity
        ),
        "min score",
        &[0.3, 0.35, 0.4, 0.45, 0.5],
        ["paraphrase", "cross"],
        queries,
        keys,
        |text| {
            best_five(store, text, Some(&embed(text)), |c| {
                recall.score(c.words, c.meaning)
            })
        },
    );
}

/// The words' half of [`recall_calibration`] (`[recall] min_score`); no model.
fn recall_by_words_calibration(store: &Store, queries: &[Query], keys: &HashMap<String, String>) {
    threshold_table(
        "Recall by words: threshold on the share score",
        "min score",
        &[0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6],
        ["exact", "keyword"],
        queries,
        keys,
        |text| best_five(store, text, None, |c| c.words),
    );
}

/// A text's recall candidates (by meaning too with `vector`), each measured both
/// ways: the five best of `score`.
fn best_five(
    store: &Store,
    text: &str,
    vector: Option<&[f32]>,
    score: impl Fn(&BothWays) -> f64,
) -> Vec<(solaria_edge::store::search::Hit, f64)> {
    let weights = rarity::Rarity::of(store.conn(), text).expect("rarity");
    let mut scored: Vec<_> =
        both_ways::candidates(store.conn(), &five(text), None, &weights, vector)
            .expect("candidates")
            .into_iter()
            .map(|c| {
                let s = score(&c);
                (c.hit, s)
            })
            .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(5);
    scored
}

/// A search for `text`'s five best, with no current project.
fn five(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_string(),
        limit: 5,
        ..SearchQuery::default()
    }
}

/// Prints one calibration table (see [`recall_calibration`]); `best` answers a text
/// with its hits and their scores.
fn threshold_table(
    title: &str,
    column: &str,
    thresholds: &[f64],
    kinds: [&str; 2],
    queries: &[Query],
    keys: &HashMap<String, String>,
    best: impl Fn(&str) -> Vec<(solaria_edge::store::search::Hit, f64)>,
) {
    let labelled: Vec<(Vec<(bool, f64)>, &str)> = queries
        .iter()
        .map(|q| {
            let hits = best(&q.text)
                .into_iter()
                .map(|(h, score)| {
                    let target = keys.get(&h.id).is_some_and(|k| q.targets.contains(k));
                    (target, score)
                })
                .collect();
            (hits, q.kind.as_str())
        })
        .collect();
    let mut unrelated: Vec<f64> = UNRELATED_PROMPTS
        .iter()
        .map(|p| best(p).iter().map(|(_, s)| *s).fold(0.0, f64::max))
        .collect();
    println!(
        "\n{title}; unrelated prompts: {}\n",
        UNRELATED_PROMPTS.len()
    );
    println!(
        "| {column} | queries recalled (target in 5 best, ≥ t) | {} | {} | unrelated prompts told something | targets among items ≥ t |",
        kinds[0], kinds[1]
    );
    println!("|---|---|---|---|---|---|");
    for &t in thresholds {
        let recalled = |kind: Option<&str>| {
            let chosen: Vec<_> = labelled
                .iter()
                .filter(|(_, k)| kind.is_none_or(|want| k.contains(want)))
                .collect();
            let hit = chosen
                .iter()
                .filter(|(hits, _)| hits.iter().any(|(target, s)| *target && *s >= t))
                .count();
            hit as f64 / chosen.len().max(1) as f64
        };
        let over: Vec<bool> = labelled
            .iter()
            .flat_map(|(hits, _)| hits.iter().filter(|(_, s)| *s >= t).map(|(tg, _)| *tg))
            .collect();
        let precision = over.iter().filter(|t| **t).count() as f64 / over.len().max(1) as f64;
        let told = unrelated.iter().filter(|s| **s >= t).count();
        println!(
            "| {t:.2} | {:.2} | {:.2} | {:.2} | {told} of {} | {precision:.2} |",
            recalled(None),
            recalled(Some(kinds[0])),
            recalled(Some(kinds[1])),
            unrelated.len()
        );
    }
    unrelated.sort_by(f64::total_cmp);
    println!(
        "\nUnrelated prompts' best score: median {:.2}, highest {:.2}.",
        unrelated[unrelated.len() / 2],
        unrelated.last().copied().unwrap_or(0.0)
    );
}
