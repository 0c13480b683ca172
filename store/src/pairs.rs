//! Identifier pairs: the adjacent parts of an identifier, path or dotted name, each
//! pair indexed as one token, so that an identifier query is an AND of rare tokens
//! instead of a phrase of common ones (`src/x/y.rs` is the phrase `src x y rs`, whose
//! words are in most records: FTS5 walks their whole position lists to find the few
//! rows where they stand side by side; docs/BENCHMARKS.md, (b)).
//!
//! `src/quimo/ludalmo.rs` gives `src·quimo quimo·ludalmo ludalmo·rs` (· being
//! [`JOIN`]); any part of it (`ludalmo.rs`, `src/quimo`) has pairs that are a subset,
//! so it is found too. The pairs of a record are written with it
//! (`records::write_observation`) and indexed in its full-text row's `tool` column;
//! records written before pairs existed are indexed by the daemon
//! ([`backfill`]), and until none is left, identifier terms are searched as phrases.

use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashSet;

/// What joins the two parts of a pair: a letter (so the tokenizer keeps the pair one
/// token) that no one types in code or prose (RUNIC LETTER INGWAZ).
const JOIN: char = 'ᛜ';

/// The most pairs kept for one record (a minified bundle in a tool's output must not
/// bloat the index); the first ones, which are in its title and command.
const MAX_PAIRS: usize = 200;

/// The longest part kept: longer runs are data (hashes, base64), not names.
const MAX_PART_CHARS: usize = 40;

/// The parts of a whitespace-free chunk: its runs of letters and digits, lowercased
/// (the tokenizer folds case the same way). `_` separates, as it does for FTS5.
fn parts(chunk: &str) -> Vec<String> {
    chunk
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The pairs of `texts`, space-separated, each once.
pub fn of(texts: &[&str]) -> String {
    let mut seen = HashSet::new();
    let mut out = String::new();
    'texts: for text in texts {
        // A tool call's JSON as it reads (its strings), so no key is joined to its
        // value (`commandᛜcargo`) and the budget goes to the names in it.
        let text = super::text::readable(text);
        for chunk in super::text::breaks_as_spaces(&text).split_whitespace() {
            let parts = parts(chunk);
            for pair in parts.windows(2) {
                if pair.iter().any(|p| p.chars().count() > MAX_PART_CHARS) {
                    continue;
                }
                let token = format!("{}{JOIN}{}", pair[0], pair[1]);
                if seen.insert(token.clone()) {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(&token);
                    if seen.len() == MAX_PAIRS {
                        break 'texts;
                    }
                }
            }
        }
    }
    out
}

/// The FTS5 expression that finds `chunk` (one whitespace-free query word) by its
/// pairs: `None` when it has fewer than two parts (a plain word) or a part too long
/// to have been indexed.
pub fn query(chunk: &str) -> Option<String> {
    let parts = parts(chunk);
    if parts.len() < 2 || parts.iter().any(|p| p.chars().count() > MAX_PART_CHARS) {
        return None;
    }
    let pairs: Vec<String> = parts
        .windows(2)
        .map(|pair| format!("\"{}{JOIN}{}\"", pair[0], pair[1]))
        .collect();
    Some(format!("({})", pairs.join(" AND ")))
}

/// Whether every observation has its pairs: until then identifier terms are
/// searched as phrases, which find the records written before pairs existed too.
pub fn complete(conn: &Connection) -> Result<bool, StoreError> {
    let missing: Option<i64> = conn
        .prepare_cached("SELECT rowid FROM observations WHERE pairs IS NULL LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(missing.is_none())
}

/// Gives up to `batch` observations written before pairs existed their pairs (which
/// re-indexes each of them); returns how many. One write transaction.
pub fn backfill(store: &mut super::Store, batch: usize) -> Result<usize, StoreError> {
    let rows: Vec<(i64, String, String, String, String)> = {
        let mut stmt = store.conn().prepare_cached(
            "SELECT rowid, title, input, response, files FROM observations
             WHERE pairs IS NULL LIMIT ?1",
        )?;
        let rows = stmt.query_map([batch as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
        rows.collect::<Result<_, _>>()?
    };
    if rows.is_empty() {
        return Ok(0);
    }
    store.write(|w| {
        let mut update = w
            .tx()
            .prepare_cached("UPDATE observations SET pairs = ?2 WHERE rowid = ?1")?;
        for (rowid, title, input, response, files) in &rows {
            update.execute(params![rowid, of(&[title, input, response, files])])?;
        }
        Ok(rows.len())
    })
}

/// One bounded step of merging the observations' full-text index: re-indexing every
/// record leaves it in many small segments that each query must visit (the search
/// bench's common words took up to twice as long until merged). Returns whether there
/// was anything left to merge. One short write transaction.
pub fn merge_step(store: &mut super::Store) -> Result<bool, StoreError> {
    store.write(|w| {
        let before = w.tx().total_changes();
        w.tx().execute(
            "INSERT INTO observations_fts (observations_fts, rank) VALUES ('merge', ?1)",
            // Negative: merge even levels with fewer segments than FTS5's own
            // `usermerge` threshold, so that the merged result is one segment.
            [-MERGE_PAGES],
        )?;
        // FTS5 counts two or more changes when a merge did work.
        Ok(w.tx().total_changes() - before >= 2)
    })
}

/// Leaf pages one [`merge_step`] writes at most (about 4 KB each).
const MERGE_PAGES: i64 = 200;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_calls_json_gives_the_pairs_of_its_strings_not_of_its_keys() {
        let input = r#"{"command":"cargo test -p billing_core","description":"Run it"}"#;
        let response = r#"{"stdout":"running 1 test\nsrc/quimo/ludalmo.rs:3 failed","stderr":""}"#;
        let pairs = of(&[input, response]);
        for want in ["billingᛜcore", "srcᛜquimo", "ludalmoᛜrs", "rsᛜ3"] {
            assert!(pairs.split(' ').any(|p| p == want), "{want} in {pairs}");
        }
        for unwanted in ["commandᛜcargo", "stdoutᛜrunning", "nsrcᛜquimo", "testᛜnsrc"] {
            assert!(
                !pairs.split(' ').any(|p| p == unwanted),
                "{unwanted} in {pairs}"
            );
        }
    }
    #[test]
    fn an_identifier_gives_its_adjacent_parts_and_prose_gives_nothing() {
        assert_eq!(
            of(&["Read src/Quimo/ludalmo.rs", "plain words here"]),
            "srcᛜquimo quimoᛜludalmo ludalmoᛜrs"
        );
        assert_eq!(of(&["make_token make_token"]), "makeᛜtoken");
        assert_eq!(of(&["std::io::Error at line 4"]), "stdᛜio ioᛜerror");
    }

    #[test]
    fn a_part_of_an_identifier_asks_for_a_subset_of_its_pairs() {
        assert_eq!(query("ludalmo.rs").as_deref(), Some("(\"ludalmoᛜrs\")"));
        assert_eq!(
            query("src/quimo/ludalmo.rs").as_deref(),
            Some("(\"srcᛜquimo\" AND \"quimoᛜludalmo\" AND \"ludalmoᛜrs\")")
        );
        assert_eq!(query("cargo"), None);
        assert_eq!(query("E0502"), None);
        assert_eq!(query("--"), None);
    }

    #[test]
    fn data_is_not_taken_for_names() {
        let hash = "a".repeat(64);
        assert_eq!(of(&[&format!("sha256:{hash}")]), "");
        assert_eq!(query(&format!("sha256:{hash}")), None);
        let many: Vec<String> = (0..500).map(|i| format!("m{i}.f{i}")).collect();
        assert_eq!(of(&[&many.join(" ")]).split(' ').count(), MAX_PAIRS);
    }
}
