//! LoCoMo's evidence recall: each of its ten long conversations written into a
//! store as one project (every dialogue turn a prompt of its session, at the
//! session's date), then every question that names its evidence (categories 1–4;
//! the adversarial fifth asks after what was never said, so its evidence turns do
//! not hold an answer) searched within its conversation by words, by
//! meaning and both. A question's recall@k is the share of its evidence turns among
//! the k first hits, averaged per category and over all; every record weighs the
//! same (no current project), so the figures are relevance alone.
//!
//! A second table sets the same searches beside a published figure by its own
//! method (Lysenstøen 2026, "Training-Free Lexical–Dense Fusion for
//! Conversational-Memory Retrieval", arXiv 2606.04194): every question whose
//! evidence names a session (1,978, the adversarial fifth category included), the
//! conversation's sessions ranked by their best turn among the first
//! [`DEEP`] hits, and Hit@1, Recall@5, MRR and NDCG@5 (binary) over sessions.
//!
//! The data is not ours and is not in this repository: LoCoMo
//! (`snap-research/LoCoMo`, `data/locomo10.json`) is licensed CC BY-NC 4.0.
//!
//! ```sh
//! cargo bench -p solaria-edge --bench locomo -- --data PATH/locomo10.json \
//!     --model ~/.cache/solaria/models/multilingual-e5-small \
//!     --model ~/.cache/solaria/models/all-minilm-l6-v2
//! ```
//!
//! Without `--model`, by words alone.

mod support;

use serde_json::Value;
use solaria_edge::semantic;
use solaria_edge::store::Store;
use solaria_edge::store::hybrid::{self, SearchMode};
use solaria_edge::store::search::SearchQuery;
use solaria_embed::Embedder;
use solaria_shared::{
    Observation, ObservationId, ObservationKind, Project, RecordMeta, Session, SessionId,
    UnixMillis,
};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// LoCoMo's question categories, as its data numbers them.
const CATEGORIES: &[(u64, &str)] = &[
    (1, "multi-hop"),
    (2, "temporal"),
    (3, "open-domain"),
    (4, "single-hop"),
];

const KS: [usize; 2] = [5, 10];

/// Turns read to rank a conversation's sessions by their best turn (a
/// conversation holds 19 to 32 sessions).
const DEEP: usize = 60;

/// A question as the session-level method takes it: the sessions its evidence
/// names (each evidence id read whole as `D<session>:<turn>`, as that method
/// reads them), every category.
struct SessionQuestion {
    project: String,
    text: String,
    category: u64,
    gold: std::collections::BTreeSet<String>,
}

/// A question with the turns that hold its answer.
struct Question {
    project: String,
    text: String,
    category: u64,
    /// `sample:dia_id` of each evidence turn.
    evidence: Vec<String>,
}

fn main() {
    let (data, models) = arguments();
    let text = std::fs::read_to_string(&data)
        .unwrap_or_else(|e| panic!("{}: {e} (pass --data PATH/locomo10.json)", data.display()));
    let samples: Vec<Value> = serde_json::from_str(&text).expect("LoCoMo's JSON");
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("memory.db");
    let (keys, questions, by_session) = load(&path, &samples);
    println!(
        "LoCoMo evidence recall: {} conversations, {} turns, {} questions with evidence \
         (categories 1–4); cells are recall@5 / recall@10.\n",
        samples.len(),
        keys.len(),
        questions.len()
    );
    let mut header = "| method | all".to_string();
    for (_, name) in CATEGORIES {
        header.push_str(&format!(" | {name}"));
    }
    println!("{header} |\n|---|---|---|---|---|---|");
    let mut by_sessions = Vec::new();
    let store = Store::open(&path, "locomo").expect("open");
    table(
        "words",
        &evaluate(&store, &keys, &questions, None, SearchMode::Lexical),
    );
    by_sessions.push((
        "words".to_string(),
        evaluate_sessions(&store, &keys, &by_session, None, SearchMode::Lexical),
    ));
    drop(store);
    for (n, dir) in models.iter().enumerate() {
        let mut model = Embedder::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        model.set_max_tokens(128).expect("max tokens");
        // A store of its own for each model, written the same way.
        let model_path = tmp.path().join(format!("model-{n}.db"));
        let (keys, questions, by_session) = load(&model_path, &samples);
        let mut store = Store::open(&model_path, "locomo").expect("open");
        semantic::prepare_index(&mut store, &model).expect("prepare");
        support::embed_every(&mut store, &model);
        for (label, mode) in [
            ("meaning", SearchMode::Semantic),
            ("hybrid", SearchMode::Hybrid),
        ] {
            let name = format!("{label} ({})", model.info().name);
            table(
                &name,
                &evaluate(&store, &keys, &questions, Some(&model), mode),
            );
            by_sessions.push((
                name,
                evaluate_sessions(&store, &keys, &by_session, Some(&model), mode),
            ));
        }
    }
    println!(
        "\nBy session, the method of arXiv 2606.04194: {} questions whose evidence names a \
         session (every category), sessions ranked by their best turn among the first {DEEP} \
         hits; cells are Hit@1 / Recall@5 / MRR / NDCG@5.\n",
        by_session.len()
    );
    println!("| method | all | multi-hop | temporal | open-domain | single-hop | adversarial |");
    println!("|---|---|---|---|---|---|---|");
    for (name, scores) in &by_sessions {
        session_table(name, scores);
    }
}

/// `--data PATH` and each `--model DIR`.
fn arguments() -> (PathBuf, Vec<PathBuf>) {
    let mut data = None;
    let mut models = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--data" => data = args.next().map(PathBuf::from),
            "--model" => models.extend(args.next().map(PathBuf::from)),
            _ => {}
        }
    }
    (
        data.expect("--data PATH/locomo10.json (LoCoMo's data file)"),
        models,
    )
}

/// Writes every turn into the store at `path`; each turn's key by record id, and
/// the questions.
fn load(
    path: &Path,
    samples: &[Value],
) -> (HashMap<String, String>, Vec<Question>, Vec<SessionQuestion>) {
    let mut store = Store::open(path, "locomo").expect("open store");
    let me = store.machine_id();
    let mut keys = HashMap::new();
    let mut questions = Vec::new();
    let mut by_session = Vec::new();
    for sample in samples {
        let id = sample["sample_id"].as_str().expect("sample_id").to_string();
        let project = Project {
            key: format!("locomo/{id}"),
            name: id.clone(),
        };
        let conversation = &sample["conversation"];
        let mut sessions: BTreeMap<u32, &Vec<Value>> = BTreeMap::new();
        for (name, turns) in conversation.as_object().expect("conversation") {
            let Some(n) = name.strip_prefix("session_").and_then(|n| n.parse().ok()) else {
                continue;
            };
            if let Some(turns) = turns.as_array() {
                sessions.insert(n, turns);
            }
        }
        // Sessions a day apart in their order (the data's dates are free text): the
        // weights are off anyway, this only keeps the order.
        let start = UnixMillis::now().minus_days(sessions.len() as i64 + 1);
        store
            .write(|w| {
                for (n, turns) in &sessions {
                    let at = UnixMillis(start.0 + i64::from(*n) * 86_400_000);
                    let session = Session {
                        id: SessionId::new(),
                        meta: RecordMeta {
                            machine_id: me,
                            updated: w.tick(),
                            deleted: false,
                        },
                        project: project.clone(),
                        agent: "locomo".into(),
                        agent_session_id: format!("{id}-{n}"),
                        cwd: "/".into(),
                        source: "startup".into(),
                        started_at: at,
                        ended_at: None,
                    };
                    w.insert_session(&session)?;
                    for (i, turn) in turns.iter().enumerate() {
                        let speaker = turn["speaker"].as_str().unwrap_or_default();
                        let mut said = turn["text"].as_str().unwrap_or_default().to_string();
                        if let Some(caption) = turn["blip_caption"].as_str() {
                            said.push_str(&format!(" [shares a photo: {caption}]"));
                        }
                        let o = Observation {
                            id: ObservationId::new(),
                            meta: RecordMeta {
                                machine_id: me,
                                updated: w.tick(),
                                deleted: false,
                            },
                            session_id: session.id,
                            project: project.clone(),
                            kind: ObservationKind::Prompt,
                            tool_name: None,
                            title: said.chars().take(80).collect(),
                            input: format!("{speaker}: {said}"),
                            response: String::new(),
                            files: Vec::new(),
                            metadata: serde_json::json!({}),
                            tags: Vec::new(),
                            created_at: UnixMillis(at.0 + i as i64 * 1000),
                        };
                        let dia = turn["dia_id"].as_str().unwrap_or_default();
                        keys.insert(o.id.to_string(), format!("{id}:{dia}"));
                        w.insert_observation(&o)?;
                    }
                }
                Ok(())
            })
            .expect("write a conversation");
        for qa in sample["qa"].as_array().into_iter().flatten() {
            let category = qa["category"].as_u64().unwrap_or(0);
            let gold: std::collections::BTreeSet<String> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter_map(|e| session_of(e.trim()))
                .map(|n| format!("{id}:{n}"))
                .collect();
            if let (false, Some(text)) = (gold.is_empty(), qa["question"].as_str()) {
                by_session.push(SessionQuestion {
                    project: project.key.clone(),
                    text: text.to_string(),
                    category,
                    gold,
                });
            }
            if !CATEGORIES.iter().any(|(c, _)| *c == category) {
                continue;
            }
            // A few evidence lists join two ids in one string ("D8:6; D9:17").
            let evidence: Vec<String> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .flat_map(|e| e.split([';', ',', ' ']))
                .map(str::trim)
                .filter(|e| e.starts_with('D'))
                .map(|e| format!("{id}:{e}"))
                .collect();
            let Some(text) = qa["question"].as_str() else {
                continue;
            };
            if evidence.is_empty() {
                continue;
            }
            questions.push(Question {
                project: project.key.clone(),
                text: text.to_string(),
                category,
                evidence,
            });
        }
    }
    (keys, questions, by_session)
}

/// The session an evidence id `D<session>:<turn>` names, when it is exactly that.
fn session_of(evidence: &str) -> Option<u32> {
    let (session, turn) = evidence.strip_prefix('D')?.split_once(':')?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    (digits(session) && digits(turn))
        .then(|| session.parse().ok())
        .flatten()
}

/// The keys (`sample:dia_id`) of the first `limit` turns a search of `text`
/// within `project` finds, best first; every record weighs the same (no current
/// project).
fn ranked<'k>(
    store: &Store,
    keys: &'k HashMap<String, String>,
    (project, text): (&str, &str),
    limit: usize,
    model: Option<&Embedder>,
    mode: SearchMode,
) -> Vec<&'k String> {
    let vector = model.map(|m| m.embed_query(text).expect("embed"));
    let search = SearchQuery {
        text: text.to_string(),
        limit,
        project: Some(project.to_string()),
        current_project: Some("locomo/none".into()),
        ..SearchQuery::default()
    };
    let hits = hybrid::search(store.conn(), &search, mode, vector.as_deref()).expect("search");
    hits.iter().filter_map(|h| keys.get(&h.id)).collect()
}

/// Recall@k sums and counts per category (0: all).
type Recalls = BTreeMap<u64, ([f64; 2], usize)>;

fn evaluate(
    store: &Store,
    keys: &HashMap<String, String>,
    questions: &[Question],
    model: Option<&Embedder>,
    mode: SearchMode,
) -> Recalls {
    let mut out = Recalls::new();
    for q in questions {
        let ranked = ranked(store, keys, (&q.project, &q.text), KS[1], model, mode);
        let mut recall = [0.0; 2];
        for (slot, k) in KS.iter().enumerate() {
            let found = q
                .evidence
                .iter()
                .filter(|e| ranked.iter().take(*k).any(|r| r == e))
                .count();
            recall[slot] = found as f64 / q.evidence.len() as f64;
        }
        for bucket in [0, q.category] {
            let cell = out.entry(bucket).or_default();
            cell.0[0] += recall[0];
            cell.0[1] += recall[1];
            cell.1 += 1;
        }
    }
    out
}

/// Hit@1, Recall@5, MRR and NDCG@5 sums and counts per category (0: all).
type SessionScores = BTreeMap<u64, ([f64; 4], usize)>;

/// Each question's sessions ranked by their best turn, scored as the session-level
/// method scores them (binary relevance).
fn evaluate_sessions(
    store: &Store,
    keys: &HashMap<String, String>,
    questions: &[SessionQuestion],
    model: Option<&Embedder>,
    mode: SearchMode,
) -> SessionScores {
    let mut out = SessionScores::new();
    for q in questions {
        let mut sessions: Vec<String> = Vec::new();
        for key in ranked(store, keys, (&q.project, &q.text), DEEP, model, mode) {
            let Some((sample, dia)) = key.split_once(':') else {
                continue;
            };
            let Some(n) = session_of(dia) else {
                continue;
            };
            let session = format!("{sample}:{n}");
            if !sessions.contains(&session) {
                sessions.push(session);
            }
        }
        let relevant = |rank: usize| sessions.get(rank).is_some_and(|s| q.gold.contains(s));
        let hit1 = f64::from(u8::from(relevant(0)));
        let recall5 = (0..5).filter(|r| relevant(*r)).count() as f64 / q.gold.len() as f64;
        let mrr = (0..sessions.len())
            .find(|r| relevant(*r))
            .map_or(0.0, |r| 1.0 / (r + 1) as f64);
        let gain = |r: usize| 1.0 / ((r + 2) as f64).log2();
        let dcg: f64 = (0..5).filter(|r| relevant(*r)).map(gain).sum();
        let ideal: f64 = (0..q.gold.len().min(5)).map(gain).sum();
        let scores = [hit1, recall5, mrr, dcg / ideal];
        for bucket in [0, q.category] {
            let cell = out.entry(bucket).or_default();
            for (sum, x) in cell.0.iter_mut().zip(scores) {
                *sum += x;
            }
            cell.1 += 1;
        }
    }
    out
}

fn session_table(name: &str, scores: &SessionScores) {
    let cell = |c: u64| {
        scores.get(&c).map_or("—".to_string(), |(sum, n)| {
            let n = *n as f64;
            format!(
                "{:.3} / {:.3} / {:.3} / {:.3} ({})",
                sum[0] / n,
                sum[1] / n,
                sum[2] / n,
                sum[3] / n,
                n
            )
        })
    };
    let mut row = format!("| {name} | {}", cell(0));
    for c in 1..=5 {
        row.push_str(&format!(" | {}", cell(c)));
    }
    println!("{row} |");
}

fn table(name: &str, recalls: &Recalls) {
    let cell = |c: u64| {
        recalls.get(&c).map_or("—".to_string(), |(sum, n)| {
            let n = *n as f64;
            format!("{:.3} / {:.3} ({})", sum[0] / n, sum[1] / n, n)
        })
    };
    let mut row = format!("| {name} | {}", cell(0));
    for (c, _) in CATEGORIES {
        row.push_str(&format!(" | {}", cell(*c)));
    }
    println!("{row} |");
}
