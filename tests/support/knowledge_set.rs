//! The labelled knowledge-recall set `eval/knowledge/` on a real machine: its
//! decisions and memories written with `solaria decide` and `solaria remember`, its
//! prompts asked with `solaria recall --json` in their projects, and what each
//! prompt recalled tallied per kind. The `knowledge_recall` benchmark reports it;
//! a behaviour test holds recall to it.

use crate::edge::Edge;
use crate::payloads::project;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A decision or a memory of the set.
#[derive(Debug, Deserialize)]
pub struct Record {
    pub key: String,
    pub project: String,
    pub kind: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub chosen: String,
    #[serde(default)]
    pub alternatives: Vec<String>,
    #[serde(default)]
    pub rationale: String,
    #[serde(default, rename = "type")]
    pub memory_type: String,
    #[serde(default)]
    pub content: String,
}

/// A prompt of the set, typed in `project`.
#[derive(Debug, Clone, Deserialize)]
pub struct Prompt {
    pub id: String,
    pub project: String,
    pub kind: String,
    pub text: String,
    /// The keys of the records it should recall (none for the kinds in [`NOTHING`]).
    pub targets: Vec<String>,
}

/// The kinds whose prompts should recall their targets.
pub const RELATED: &[&str] = &[
    "named_option",
    "paraphrase",
    "cross_language",
    "shared_words",
];
/// The kinds whose prompts should recall nothing.
pub const NOTHING: &[&str] = &["unrelated", "other_project"];

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

/// The set's records.
pub fn records() -> Vec<Record> {
    read("knowledge.jsonl")
}

/// The set's prompts: what recall's rules were chosen on.
pub fn prompts() -> Vec<Prompt> {
    read("prompts.jsonl")
}

/// Prompts about the same records written after those rules, to check them on
/// prompts they were not chosen on (`holdout.jsonl`).
pub fn holdout() -> Vec<Prompt> {
    read("holdout.jsonl")
}

/// A machine holding the set's knowledge: its project directories, and each
/// record's id by key.
pub struct Memory {
    pub edge: Edge,
    pub projects: BTreeMap<String, PathBuf>,
    pub ids: BTreeMap<String, String>,
}

/// Writes `records` on a new machine; with `model`, configured for it and every
/// record embedded.
pub fn memory(records: &[Record], model: Option<&Path>) -> Memory {
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

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("projects", &self.projects)
            .field("ids", &self.ids)
            .finish_non_exhaustive()
    }
}

/// What one prompt recalled.
#[derive(Debug)]
pub struct Answer {
    /// `solaria recall --json`'s answer.
    pub json: Value,
    /// The items added to the prompt.
    pub chosen: Vec<Value>,
    /// Whether one of its targets is among them.
    pub found_target: bool,
}

impl Memory {
    /// `prompt` asked in its project with `solaria recall --json`.
    pub fn ask(&self, prompt: &Prompt) -> Answer {
        let json = self.edge.json(
            &self.projects[&prompt.project],
            &["recall", "--json", &prompt.text],
        );
        let chosen: Vec<Value> = json["considered"]
            .as_array()
            .map(|c| c.iter().filter(|c| c["chosen"] == true).cloned().collect())
            .unwrap_or_default();
        let found_target = prompt.targets.iter().any(|t| {
            chosen.iter().any(|c| {
                c["cite"]
                    .as_str()
                    .is_some_and(|cite| cite.contains(&self.ids[t]))
            })
        });
        Answer {
            json,
            chosen,
            found_target,
        }
    }
}

/// Per kind: for related kinds, how many prompts recalled a target, of how many;
/// for the kinds in [`NOTHING`], how many recalled anything, of how many.
pub fn tally(prompts: &[Prompt], answers: &[Answer]) -> BTreeMap<String, (usize, usize)> {
    let mut out: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (p, a) in prompts.iter().zip(answers) {
        let cell = out.entry(p.kind.clone()).or_default();
        cell.1 += 1;
        let counted = if NOTHING.contains(&p.kind.as_str()) {
            !a.chosen.is_empty()
        } else {
            a.found_target
        };
        cell.0 += usize::from(counted);
    }
    out
}
