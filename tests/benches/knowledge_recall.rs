//! Recall of knowledge as a user gets it, on the labelled set `eval/knowledge/`: 41
//! decisions and memories of five projects written with `solaria decide` and
//! `solaria remember`, then 121 prompts asked with `solaria recall --json` in their
//! project — by words alone (no daemon), then with each model the daemon keeps
//! loaded (recall by meaning and words). Per kind of prompt: the share of related
//! prompts that recall their record (named option, paraphrase, cross-language,
//! shared words), and the prompts that recall anything at all where nothing should
//! come (unrelated prompts, prompts about another project's record).
//!
//! ```sh
//! cargo build --release -p solaria-edge --bins
//! cargo bench -p solaria-tests --bench knowledge_recall
//! ```
//!
//! Models from `SOLARIA_TEST_MODEL_DIR` (all-MiniLM-L6-v2) and
//! `SOLARIA_TEST_MULTILINGUAL_MODEL_DIR` (multilingual-e5-small), each when set.
//! `SOLARIA_RECALL_DUMP=FILE` appends each answer (every item considered, with its
//! score and how it matched) to `FILE`, one JSON line per prompt and pass, for a
//! study of the scores.

use serde::Deserialize;
use serde_json::Value;
use solaria_tests::edge::Edge;
use solaria_tests::payloads::project;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct Record {
    key: String,
    project: String,
    kind: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    chosen: String,
    #[serde(default)]
    alternatives: Vec<String>,
    #[serde(default)]
    rationale: String,
    #[serde(default, rename = "type")]
    memory_type: String,
    #[serde(default)]
    content: String,
}

#[derive(Deserialize)]
struct Prompt {
    id: String,
    project: String,
    kind: String,
    text: String,
    targets: Vec<String>,
}

/// The kinds whose prompts should recall their targets.
const RELATED: &[&str] = &[
    "named_option",
    "paraphrase",
    "cross_language",
    "shared_words",
];
/// The kinds whose prompts should recall nothing.
const NOTHING: &[&str] = &["unrelated", "other_project"];

fn set_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/knowledge")
}

fn read<T: for<'de> Deserialize<'de>>(name: &str) -> Vec<T> {
    std::fs::read_to_string(set_dir().join(name))
        .expect("the labelled set")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a labelled line"))
        .collect()
}

/// A machine holding the set's knowledge: its project directories, and each
/// record's id by key.
struct Memory {
    edge: Edge,
    projects: BTreeMap<String, PathBuf>,
    ids: BTreeMap<String, String>,
}

fn memory(records: &[Record], model: Option<&Path>) -> Memory {
    let edge = Edge::new("laptop");
    if let Some(dir) = model {
        edge.write_config(&format!("[search]\nmodel_dir = '{}'\n", dir.display()));
    }
    let mut projects = BTreeMap::new();
    let mut ids = BTreeMap::new();
    for r in records {
        let dir = projects
            .entry(r.project.clone())
            .or_insert_with(|| {
                project(
                    edge.root.path(),
                    &r.project,
                    Some(&format!("https://github.com/acme/{}", r.project)),
                )
            })
            .clone();
        let id = if r.kind == "decision" {
            let mut args = vec![
                "decide",
                "--title",
                &r.title,
                "--chosen",
                &r.chosen,
                "--rationale",
                &r.rationale,
            ];
            for a in &r.alternatives {
                args.extend(["-a", a.as_str()]);
            }
            edge.written_id(&dir, &args)
        } else {
            edge.written_id(&dir, &["remember", "-t", &r.memory_type, &r.content])
        };
        ids.insert(r.key.clone(), id);
    }
    if model.is_some() {
        edge.ok(&["embed"]);
    }
    Memory {
        edge,
        projects,
        ids,
    }
}

/// What each prompt recalled: the chosen items' citations, and whether one of them
/// was chosen for naming an option.
fn recall_all(m: &Memory, prompts: &[Prompt], by_meaning: bool) -> Vec<(Vec<String>, bool)> {
    prompts
        .iter()
        .map(|p| {
            let v: Value = m
                .edge
                .json(&m.projects[&p.project], &["recall", "--json", &p.text]);
            assert_eq!(
                v["by_meaning"].as_bool().unwrap_or(false),
                by_meaning,
                "{}: {v}",
                p.id
            );
            if let Ok(dump) = std::env::var("SOLARIA_RECALL_DUMP") {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(dump)
                    .expect("dump file");
                let targets: Vec<&String> = p.targets.iter().map(|t| &m.ids[t]).collect();
                let line = serde_json::json!({"id": p.id, "kind": p.kind, "by_meaning": by_meaning,
                    "targets": targets, "considered": v["considered"]});
                writeln!(f, "{line}").expect("dump");
            }
            let chosen: Vec<&Value> = v["considered"]
                .as_array()
                .map(|c| c.iter().filter(|c| c["chosen"] == true).collect())
                .unwrap_or_default();
            (
                chosen
                    .iter()
                    .filter_map(|c| c["cite"].as_str().map(str::to_string))
                    .collect(),
                chosen.iter().any(|c| !c["names_option"].is_null()),
            )
        })
        .collect()
}

/// One column of the table: per kind, the share (related) or count (nothing).
fn column(
    m: &Memory,
    prompts: &[Prompt],
    recalled: &[(Vec<String>, bool)],
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for kind in RELATED.iter().chain(NOTHING) {
        let of_kind: Vec<(&Prompt, &(Vec<String>, bool))> = prompts
            .iter()
            .zip(recalled)
            .filter(|(p, _)| p.kind == *kind)
            .collect();
        let cell = if NOTHING.contains(kind) {
            let told = of_kind
                .iter()
                .filter(|(_, (cites, _))| !cites.is_empty())
                .count();
            format!("{told} of {}", of_kind.len())
        } else {
            let hit = of_kind
                .iter()
                .filter(|(p, (cites, _))| {
                    p.targets
                        .iter()
                        .any(|t| cites.iter().any(|c| c.contains(&m.ids[t])))
                })
                .count();
            let mut cell = format!(
                "{:.2} ({hit}/{})",
                hit as f64 / of_kind.len().max(1) as f64,
                of_kind.len()
            );
            if *kind == "named_option" {
                let named = of_kind.iter().filter(|(_, (_, named))| *named).count();
                cell.push_str(&format!(", {named} named"));
            }
            cell
        };
        out.insert(kind.to_string(), cell);
    }
    out
}

fn main() {
    let records: Vec<Record> = read("knowledge.jsonl");
    let prompts: Vec<Prompt> = read("prompts.jsonl");
    let mut columns: Vec<(String, BTreeMap<String, String>)> = Vec::new();

    let words = memory(&records, None);
    let recalled = recall_all(&words, &prompts, false);
    columns.push(("words".into(), column(&words, &prompts, &recalled)));

    for (name, dir) in [
        ("all-MiniLM-L6-v2", solaria_tests::semantic::minilm()),
        (
            "multilingual-e5-small",
            solaria_tests::semantic::multilingual(),
        ),
    ] {
        let Some(dir) = dir else {
            eprintln!("{name}: no model directory set, left out");
            continue;
        };
        let m = memory(&records, Some(&dir));
        let serve = solaria_tests::daemon::serve_with(
            &m.edge,
            &format!("[search]\nmodel_dir = '{}'", dir.display()),
        );
        let recalled = recall_all(&m, &prompts, true);
        drop(serve);
        columns.push((format!("{name} + words"), column(&m, &prompts, &recalled)));
    }

    println!(
        "knowledge recall on eval/knowledge ({} records, {} prompts)",
        records.len(),
        prompts.len()
    );
    print!("{:<16}", "kind");
    for (name, _) in &columns {
        print!(" | {name:<32}");
    }
    println!();
    for kind in RELATED.iter().chain(NOTHING) {
        print!("{kind:<16}");
        for (_, cells) in &columns {
            print!(" | {:<32}", cells[*kind]);
        }
        println!();
    }
}
