//! LoCoMo's evidence recall: each of its ten long conversations written into a
//! store as one project (every dialogue turn a prompt of its session, at the
//! session's date), then every question that names its evidence (categories 1–4;
//! the adversarial fifth has none) searched within its conversation by words, by
//! meaning and both. A question's recall@k is the share of its evidence turns among
//! the k first hits, averaged per category and over all; every record weighs the
//! same (no current project), so the figures are relevance alone.
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
    let (keys, questions) = load(&path, &samples);
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
    let store = Store::open(&path, "locomo").expect("open");
    table(
        "words",
        &evaluate(&store, &keys, &questions, None, SearchMode::Lexical),
    );
    drop(store);
    for (n, dir) in models.iter().enumerate() {
        let mut model = Embedder::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        model.set_max_tokens(128).expect("max tokens");
        // A store of its own for each model, written the same way.
        let model_path = tmp.path().join(format!("model-{n}.db"));
        let (keys, questions) = load(&model_path, &samples);
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
        }
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
fn load(path: &Path, samples: &[Value]) -> (HashMap<String, String>, Vec<Question>) {
    let mut store = Store::open(path, "locomo").expect("open store");
    let me = store.machine_id();
    let mut keys = HashMap::new();
    let mut questions = Vec::new();
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
    (keys, questions)
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
        let vector = model.map(|m| m.embed_query(&q.text).expect("embed"));
        let search = SearchQuery {
            text: q.text.clone(),
            limit: KS[1],
            project: Some(q.project.clone()),
            current_project: Some("locomo/none".into()),
            ..SearchQuery::default()
        };
        let hits = hybrid::search(store.conn(), &search, mode, vector.as_deref()).expect("search");
        let ranked: Vec<&String> = hits.iter().filter_map(|h| keys.get(&h.id)).collect();
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
