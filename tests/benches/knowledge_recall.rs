//! Recall of knowledge as a user gets it, on the labelled set `eval/knowledge/`: 41
//! decisions and memories of five projects written with `solaria decide` and
//! `solaria remember`, then 121 prompts asked with `solaria recall --json` in their
//! project, and the 68 of its hold-out (written after the rules were chosen, to
//! check them) — by words alone (no daemon), then with each model the daemon keeps
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

use solaria_tests::knowledge_set::{self, Answer, Memory, NOTHING, Prompt, RELATED};
use std::collections::BTreeMap;

/// Every prompt asked; with `SOLARIA_RECALL_DUMP`, each answer appended to it.
fn recall_all(m: &Memory, prompts: &[Prompt], by_meaning: bool) -> Vec<Answer> {
    prompts
        .iter()
        .map(|p| {
            let a = m.ask(p);
            assert_eq!(
                a.json["by_meaning"].as_bool().unwrap_or(false),
                by_meaning,
                "{}: {}",
                p.id,
                a.json
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
                    "targets": targets, "considered": a.json["considered"]});
                writeln!(f, "{line}").expect("dump");
            }
            a
        })
        .collect()
}

/// One column of the table: per kind, the share (related) or count (nothing).
fn column(prompts: &[Prompt], answers: &[Answer]) -> BTreeMap<String, String> {
    let tally = knowledge_set::tally(prompts, answers);
    let mut out = BTreeMap::new();
    for kind in RELATED.iter().chain(NOTHING) {
        let (counted, of) = tally.get(*kind).copied().unwrap_or_default();
        let mut cell = if of == 0 {
            out.insert(kind.to_string(), "–".into());
            continue;
        } else if NOTHING.contains(kind) {
            format!("{counted} of {of}")
        } else {
            format!("{:.2} ({counted}/{of})", counted as f64 / of.max(1) as f64)
        };
        if *kind == "named_option" {
            let named = prompts
                .iter()
                .zip(answers)
                .filter(|(p, a)| {
                    p.kind == *kind && a.chosen.iter().any(|c| !c["names_option"].is_null())
                })
                .count();
            cell.push_str(&format!(", {named} named"));
        }
        out.insert(kind.to_string(), cell);
    }
    out
}

fn main() {
    let records = knowledge_set::records();
    let sets = [
        ("eval/knowledge", knowledge_set::prompts()),
        ("eval/knowledge/holdout.jsonl", knowledge_set::holdout()),
    ];
    let every: Vec<Prompt> = sets.iter().flat_map(|(_, p)| p.clone()).collect();
    // Per column, every prompt's answer, in the order of `every`.
    let mut columns: Vec<(String, Vec<Answer>)> = Vec::new();

    let words = knowledge_set::memory(&records, None);
    columns.push(("words".into(), recall_all(&words, &every, false)));

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
        let m = knowledge_set::memory(&records, Some(&dir));
        let serve = solaria_tests::daemon::serve_with(
            &m.edge,
            &format!("[search]\nmodel_dir = '{}'", dir.display()),
        );
        let answers = recall_all(&m, &every, true);
        drop(serve);
        columns.push((format!("{name} + words"), answers));
    }

    let mut start = 0;
    for (set, prompts) in &sets {
        let end = start + prompts.len();
        println!(
            "knowledge recall on {set} ({} records, {} prompts)",
            records.len(),
            prompts.len()
        );
        let cells: Vec<(&String, BTreeMap<String, String>)> = columns
            .iter()
            .map(|(name, answers)| (name, column(prompts, &answers[start..end])))
            .collect();
        print!("{:<16}", "kind");
        for (name, _) in &cells {
            print!(" | {name:<32}");
        }
        println!();
        for kind in RELATED.iter().chain(NOTHING) {
            print!("{kind:<16}");
            for (_, cells) in &cells {
                print!(" | {:<32}", cells[*kind]);
            }
            println!();
        }
        println!();
        start = end;
    }
}
