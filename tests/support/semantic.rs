//! What the semantic search tests share: the embedding models (where they are, how
//! a test machine is pointed at one) and the counts of records, vectors and queue.
//!
//! `SOLARIA_TEST_MODEL_DIR` (all-MiniLM-L6-v2) and `SOLARIA_TEST_MULTILINGUAL_MODEL_DIR`
//! (multilingual-e5-small) are set by `deploy/test.sh`. Without them a test says so
//! and passes, except in CI, where it fails (`crate::require`).

use crate::edge::Edge;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The model directory named by `var`; `None` when it is unset on a developer's
/// machine (the test is skipped, saying so), a failure in CI ([`crate::require`]).
pub fn model_from(var: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
        return crate::require::skip(
            &format!("{var} is not set"),
            "run `bash deploy/models/fetch.sh` and set it to the model's directory",
        );
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("model.safetensors").is_file(),
        "{var}={} holds no model.safetensors",
        dir.display()
    );
    Some(dir)
}

/// all-MiniLM-L6-v2: English, fast.
pub fn minilm() -> Option<PathBuf> {
    model_from("SOLARIA_TEST_MODEL_DIR")
}

/// multilingual-e5-small: about 100 languages.
pub fn multilingual() -> Option<PathBuf> {
    model_from("SOLARIA_TEST_MULTILINGUAL_MODEL_DIR")
}

/// Two machines of one new account (`acme`), `laptop` and `desktop`, enrolled with
/// `c` and both pointed at the model in `dir`: the cast of the tests where vectors
/// or forgetting travel between machines.
pub async fn laptop_and_desktop(c: &crate::central::Central, dir: &Path) -> (Edge, Edge) {
    let account = c.account("acme").await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    for edge in [&laptop, &desktop] {
        edge.enroll(c, account).await;
        configure_model(edge, dir);
    }
    (laptop, desktop)
}

/// Points `edge` at the model in `dir` (`[search] model_dir` of its config).
pub fn configure_model(edge: &Edge, dir: &Path) {
    let path = edge.data().join("config.toml");
    let mut config = std::fs::read_to_string(&path).expect("config");
    config.push_str(&format!("\n[search]\nmodel_dir = '{}'\n", dir.display()));
    std::fs::write(&path, config).expect("config");
}

/// The files of a model directory that `solaria model install` takes.
pub const MODEL_FILES: &[&str] = &[
    "config.json",
    "tokenizer.json",
    "model.safetensors",
    "1_Pooling/config.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
];

/// Copies the model files of `from` into `to`.
pub fn copy_model(from: &Path, to: &Path) {
    for name in MODEL_FILES {
        let src = from.join(name);
        if src.is_file() {
            let dst = to.join(name);
            std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
            std::fs::copy(&src, &dst).expect("copy a model file");
        }
    }
}

/// Overwrites bytes inside the header of the weights in `dir`: same size, same
/// fingerprint, so only loading the model can tell.
pub fn corrupt_weights(dir: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("model.safetensors"))
        .expect("open the weights");
    f.seek(SeekFrom::Start(64)).expect("seek");
    f.write_all(&[b'#'; 64]).expect("write");
}

/// `solaria search --json --mode MODE QUERY`.
pub fn search(edge: &Edge, mode: &str, query: &str) -> Vec<Value> {
    let out = edge.ok(&["search", "--json", "--mode", mode, query]);
    serde_json::from_str(&out).expect("search --json prints a JSON list")
}

/// `solaria stats --json`.
pub fn stats(edge: &Edge) -> Value {
    serde_json::from_str(&edge.ok(&["stats", "--json"])).expect("stats --json")
}

/// Observations and summaries stored (the records that get a vector).
pub fn records(edge: &Edge) -> i64 {
    let s = stats(edge);
    s["observations"].as_i64().expect("observations") + s["summaries"].as_i64().expect("summaries")
}

/// Rows of `vector_queue` (the records waiting for their vector).
pub fn queued(edge: &Edge) -> i64 {
    edge.db()
        .query_row("SELECT count(*) FROM vector_queue", [], |r| r.get(0))
        .expect("count the queue")
}

/// Rows of a table of the vector index (`observation_vectors`, a vec0 table, or
/// `observation_embeddings`, its float twin), read with sqlite-vec registered.
pub fn vector_rows(edge: &Edge, table: &str) -> i64 {
    solaria_edge::store::vectors::register_extension();
    edge.db()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .expect("count the vectors")
}

/// The `search` check of `solaria doctor --json`: its status and fix.
pub fn doctor_search(edge: &Edge) -> (String, Option<String>) {
    let report: Value = serde_json::from_str(&edge.ok(&["doctor", "--json"])).expect("json");
    let check = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["check"] == "search")
        .cloned()
        .unwrap_or_else(|| panic!("a search check: {report}"));
    (
        check["status"].as_str().expect("status").to_string(),
        check["fix"].as_str().map(str::to_string),
    )
}
